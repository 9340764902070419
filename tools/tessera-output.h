/* tessera-output.h: what the command says and how it ends (see
 * tessera-output.c): exit statuses, a failure's one line, text in the
 * locale's character set, and the library's messages held back while
 * they may be superseded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>
#include <tessera/tessera.h>

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

int              fail                        (int status, const char *format, ...) G_GNUC_PRINTF (2, 3);
int              try_help                    (const char *command);
void             print_out                   (const char *text);
void             print_err                   (const char *text);
void             print_json                  (JsonBuilder *builder);
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

G_END_DECLS
