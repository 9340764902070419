/* test-tool-common.h: what the tests of the `tessera` command share: a
 * fixture (a folder with a configuration of one counter r, one unit) and
 * ways to run the command there and read what it says; each is described
 * where it is defined.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct
{
  char *tmp;
  char *config;
  char *log;
} Fixture;

void fixture_set_up (Fixture *f, gconstpointer data);
void fixture_tear_down (Fixture *f, gconstpointer data);
GSubprocess *tessera_spawnv (Fixture *f, const char * const *env, GSubprocessFlags flags, const char *first, va_list ap);
GSubprocess *tessera_spawn (Fixture *f, const char * const *env, GSubprocessFlags flags, const char *first, ...);
char *read_error_line (GSubprocess *process, double timeout);
char *run_capture (Fixture *f, int *status, const char *first, ...);
GSubprocess *hold_need (Fixture *f, const char * const *env, const char *need);
GSubprocess *hold_r (Fixture *f);
void assert_one_message (const char *out);
GPtrArray *not_strict_lock_files (void);
void assert_json_lists_unreadable (Fixture *f, int expected);
char *run_capture_env (Fixture *f, const char * const *env, int *status, const char *first, ...);
char *find_lock_file (Fixture *f);

G_END_DECLS
