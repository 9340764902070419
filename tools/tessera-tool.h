/* tessera-tool.h: what the files of the `tessera` command share (its
 * exit statuses, options and messages, the description of a resource,
 * each command's entry point; run's child has tessera-child.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <tessera/tessera.h>

#include "tessera-config.h"

G_BEGIN_DECLS

/* sysexits.h */
#define EXIT_USAGE 64
#define EXIT_NOHOST 68
#define EXIT_UNAVAILABLE 69
#define EXIT_OSERR 71
#define EXIT_IOERR 74
#define EXIT_TEMPFAIL 75
#define EXIT_NOPERM 77
#define EXIT_CONFIG 78

/* A folder of the pool, opened where it is (never through a link). */
#define FOLDER_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
/* An int descriptor closed when it goes out of scope. */
#define AUTO_FD __attribute__ ((cleanup (close_if_open)))

extern char *opt_config;
extern gboolean lock_note_started;
extern gboolean quiet_notices;

/* tessera-output.c: what the command says, and how it ends */
int              fail                        (int status, const char *format, ...) G_GNUC_PRINTF (2, 3);
int              try_help                    (const char *command);
void             print_out                   (const char *text);
void             print_err                   (const char *text);
void             release_or_say              (TesseraLock *lock);
GLogWriterOutput log_writer                  (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                                              gpointer data);
guint            hold_log                    (void);
void             drop_log_since              (guint mark);
void             drop_log_said_by            (const char *message);
void             release_log                 (gboolean show);
void             release_log_unless_deferred (void);
void             defer_log                   (void);
void             end_deferred_log            (void);

/* tessera-options.c: options, the configuration, opening resources, who administers */
TesseraConfig   *load_config                 (int *status);
gboolean         is_io_error                 (const GError *error);
int              oserr_or                    (const GError *error, int status);
TesseraTrackedDynamicResource *open_resource_why  (TesseraConfig *config, const char *name, gboolean check,
                                                   int *status, char **why);
TesseraTrackedDynamicResource *open_resource_full (TesseraConfig *config, const char *name, gboolean check,
                                                   int *status);
TesseraTrackedDynamicResource *open_resource      (TesseraConfig *config, const char *name, int *status);
GOptionContext  *new_context                 (const char *parameters, const char *summary,
                                              const GOptionEntry *entries);
gboolean         parse                       (GOptionContext *context, int *argc, char ***argv, int *status);
gboolean         parse_seconds               (const char *option, const char *text, gboolean infinite,
                                              double *seconds, int *status);
GPtrArray       *selected_names              (TesseraConfig *config, int argc, char **argv, int *status);
void             close_if_open               (int *fd);
TesseraConfig   *load_config_to_look         (int argc, char **argv, GPtrArray **names, int *status);
void             begin_resources_json        (JsonBuilder *builder);
char            *with_denied_cause           (const char *message, const GError *error, const char *folder);
gboolean         may_administer              (TesseraConfig *config, const char *folder);
const char      *pool_owned_by               (const char *folder);
gboolean         is_others_entry             (const char *folder, const char *job,
                                              TesseraDynamicLockFile *holder);

/* tessera-describe.c: a resource and its holders, described */
char            *escape_name                 (const char *name, gboolean for_terminal);
char            *holder_name                 (TesseraDynamicLockFile *lock_file);
const char      *user_name                   (GHashTable *users, uid_t uid);
JsonNode        *describe                    (TesseraConfig *config, const char *name,
                                              TesseraTrackedDynamicResource *resource, gboolean fresh,
                                              GError **unusable_out);
JsonNode        *describe_unreadable         (TesseraConfig *config, const char *name, const char *why);
void             format_description          (JsonNode *node, GString *out);
void             print_description           (JsonNode *node);

/* tessera-openmetrics.c: status in the OpenMetrics text format */
void             format_openmetrics          (GPtrArray *descriptions, GString *out);


/* @sum + @amount of a resource's units, both at least 0, stopping at
 * G_MAXINT64: counts come from files a co-user may write, and may be
 * anything up to that. */
static inline gint64
add_units (gint64 sum, gint64 amount)
{
  return amount > G_MAXINT64 - sum ? G_MAXINT64 : sum + amount;
}

/* The commands, one file each */
int              cmd_run                     (int argc, char **argv);
int              cmd_status                  (int argc, char **argv);
int              cmd_watch                   (int argc, char **argv);
int              cmd_set                     (int argc, char **argv);
int              cmd_clean                   (int argc, char **argv);
int              cmd_init                    (int argc, char **argv);
int              cmd_plugins                 (int argc, char **argv);
int              cmd_hosts                   (int argc, char **argv);
int              cmd_config                  (int argc, char **argv);

/* tessera-hosts.c: the hosts a pool knows, for a mistyped clean --host */
GHashTable      *dup_known_hosts             (TesseraConfig *config, GPtrArray *names);
char            *join_host_names             (GHashTable *hosts);

G_END_DECLS
