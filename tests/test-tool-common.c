/* test-tool-common.c: the fixture of the tests of the `tessera` command
 * and the helpers more than one of them uses: running the command, reading
 * its lines, holding r, finding its lock file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *content = NULL;

  f->tmp = test_make_tmpdir ();
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  f->log = g_build_filename (f->tmp, "log", NULL);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", f->tmp);
  test_write_file (f->config, content);
}

void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->config);
  g_free (f->log);
}

/* Runs `tessera --config CONFIG ARGS…` with its state in the fixture. */
GSubprocess *
tessera_spawnv (Fixture *f, const char * const *env, GSubprocessFlags flags, const char *first, va_list ap)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  GSubprocess *process;

  g_ptr_array_add (argv, (gpointer) g_getenv ("TESSERA_TOOL"));
  g_ptr_array_add (argv, (gpointer) "--config");
  g_ptr_array_add (argv, f->config);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  for (guint i = 0; env != NULL && env[i] != NULL; i += 2)
    g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  return process;
}

GSubprocess *
tessera_spawn (Fixture *f, const char * const *env, GSubprocessFlags flags, const char *first, ...)
{
  GSubprocess *process;
  va_list ap;

  va_start (ap, first);
  process = tessera_spawnv (f, env, flags, first, ap);
  va_end (ap);
  return process;
}

char *
read_error_line (GSubprocess *process, double timeout)
{
  return test_read_stream_line (g_subprocess_get_stderr_pipe (process), timeout);
}

/* Runs `tessera ARGS…` to the end; returns its output, stderr included. */
char *
run_capture (Fixture *f, int *status, const char *first, ...)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  va_list ap;

  va_start (ap, first);
  process = tessera_spawnv (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, first, ap);
  va_end (ap);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  *status = test_exit_code (process);
  return out;
}

/* `tessera run --need NEED` (with @env, NULL: none) holding until told
 * (its stdin closed, see test_let_go()): returns once its command runs
 * (said "ready"). */
GSubprocess *
hold_need (Fixture *f, const char * const *env, const char *need)
{
  GSubprocess *holder = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                                       "run", "--need", need, "--", "sh", "-c", "echo ready; read x || true", NULL);

  test_wait_ready (holder, 60);
  return holder;
}

/* `tessera run --need r` holding until told (see hold_need()). */
GSubprocess *
hold_r (Fixture *f)
{
  return hold_need (f, NULL, "r");
}

/* ---------------------------------------------------------------------- */
/* Crashes and wrong exits */

void
assert_one_message (const char *out)
{
  g_test_message ("%s", out);
  g_assert_true (g_str_has_prefix (out, "tessera: "));
  g_assert_cmpint (strchr (out, '\n') - out, ==, (int) strlen (out) - 1);
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* Texts json-glib reads beyond strict JSON, in a file of r's (freed with
 * g_ptr_array_unref): nesting 200 000 deep after a comment or a
 * single-quoted string (each crashed every reader: the depth guard took
 * it for a string), and a lock file with a comment or in single quotes. */
GPtrArray *
not_strict_lock_files (void)
{
  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *brackets = g_strnfill (200000, '[');

  g_ptr_array_add (texts, g_strconcat ("/*\"*/", brackets, NULL));
  g_ptr_array_add (texts, g_strconcat ("['\"',", brackets, NULL));
  g_ptr_array_add (texts, g_strdup ("{\"job_uri\": \"/x\", /* c */ \"information\": {\"count\": 1}}"));
  g_ptr_array_add (texts, g_strdup ("{'job_uri': '/x', 'information': {'count': 1}}"));
  return texts;
}

/* `status --json` exits @expected and still lists the resource r, its
 * capacity and free units unknown (-1) and why in "error". */
void
assert_json_lists_unreadable (Fixture *f, int expected)
{
  g_autoptr(GSubprocess) process = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                  G_SUBPROCESS_FLAGS_STDERR_SILENCE, "status", "--json", NULL);
  g_autoptr(JsonNode) root = test_output_json (process, expected);
  JsonObject *r = test_status_only_resource (root);

  g_assert_cmpstr (json_object_get_string_member (r, "name"), ==, "r");
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, -1);
  g_assert_nonnull (json_object_get_string_member_with_default (r, "error", NULL));
}

/* ---------------------------------------------------------------------- */
/* All at once */

/* Runs `tessera ARGS…` with @env to the end; its output, stderr
 * included. */
char *
run_capture_env (Fixture *f, const char * const *env, int *status, const char *first, ...)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  va_list ap;

  va_start (ap, first);
  process = tessera_spawnv (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, first, ap);
  va_end (ap);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  *status = test_exit_code (process);
  g_test_message ("%s", out);
  return out;
}

/* The only lock file in jobs/ (the run's), or NULL. */
char *
find_lock_file (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GPtrArray) paths = test_list_json_files (jobs);

  return paths->len > 0 ? g_strdup (g_ptr_array_index (paths, 0)) : NULL;
}
