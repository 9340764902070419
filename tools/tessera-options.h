/* tessera-options.h: what every command reads first (see
 * tessera-options.c): its options, the configuration, the resources it
 * names, opened with the errors said; and who may administer a pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

#include "tessera-config.h"

G_BEGIN_DECLS

extern char *opt_config;
extern gboolean lock_note_started;
extern gboolean quiet_notices;

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
TesseraConfig   *load_config_to_look         (int argc, char **argv, GPtrArray **names, int *status);
void             begin_resources_json        (JsonBuilder *builder);
char            *with_denied_cause           (const char *message, const GError *error, const char *folder);
gboolean         may_administer              (TesseraConfig *config, const char *folder);
const char      *pool_owned_by               (const char *folder);
gboolean         is_others_entry             (const char *folder, const char *job,
                                              TesseraDynamicLockFile *holder);

G_END_DECLS
