/* test-utils-process.c: other processes: the helper programs and any
 * command as a helper (its lines read and written), commands run to their
 * end, their exit status, their children, the helpers' log and the Python
 * peers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"
#include "tessera-proc.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct _Helper
{
  GSubprocess *process;
  int out_fd;
  GString *pending;
};

/* The Python the peers (experimaestro's side) run on: the system's, as
 * the build found it (TESSERA_TEST_PYTHON), not a version manager's
 * shim that costs up to seconds per start on a busy machine. */
const char *
test_python (void)
{
  const char *python = g_getenv ("TESSERA_TEST_PYTHON");

  return python != NULL && *python != '\0' ? python : "python3";
}

/* Any program as a helper: its output read line by line, its input
 * written to. @env: NAME, VALUE pairs. */
Helper *
helper_spawn_argv (const char * const *env, const char * const *argv)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GError) error = NULL;
  Helper *helper;

  for (guint i = 0; env != NULL && env[i] != NULL; i += 2)
    g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);

  helper = g_new0 (Helper, 1);
  helper->process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  helper->out_fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (g_subprocess_get_stdout_pipe (helper->process)));
  helper->pending = g_string_new (NULL);
  return helper;
}

static Helper *
helper_spawnv (const char *program, const char * const *env, const char *first_arg, va_list ap)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  const char *arg;

  g_ptr_array_add (argv, g_test_build_filename (G_TEST_BUILT, program, NULL));
  for (arg = first_arg; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  g_ptr_array_add (argv, NULL);
  return helper_spawn_argv (env, (const char * const *) argv->pdata);
}

Helper *
helper_spawn (const char * const *env, const char *first_arg, ...)
{
  Helper *helper;
  va_list ap;

  va_start (ap, first_arg);
  helper = helper_spawnv ("tessera-helper", env, first_arg, ap);
  va_end (ap);
  return helper;
}

Helper *
plugin_helper_spawn (const char * const *env, const char *first_arg, ...)
{
  Helper *helper;
  va_list ap;

  va_start (ap, first_arg);
  helper = helper_spawnv ("tessera-plugin-helper", env, first_arg, ap);
  va_end (ap);
  return helper;
}

static void
log_event_clear (LogEvent *event)
{
  g_free (event->id);
  g_free (event->request);
  g_free (event->gpus);
}

static int
compare_events (gconstpointer a, gconstpointer b)
{
  const LogEvent *x = a, *y = b;

  if (x->time != y->time)
    return x->time < y->time ? -1 : 1;
  /* At the same microsecond, a release first: log lines stand inside the
   * real holding, so that is the honest order. */
  return (int) x->acquire - (int) y->acquire;
}

GArray *
test_read_holder_log (const char *path)
{
  GArray *events = g_array_new (FALSE, TRUE, sizeof (LogEvent));
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  g_array_set_clear_func (events, (GDestroyNotify) log_event_clear);
  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 6);
      LogEvent ev = { 0 };
      guint n = g_strv_length (f);

      if (n == 0 || *lines[i] == '\0')
        continue;
      g_assert_cmpuint (n, >=, 3);
      ev.acquire = f[0][0] == 'A';
      ev.time = g_ascii_strtoll (f[1], NULL, 10);
      ev.id = g_strdup (f[2]);
      ev.request = g_strdup (n > 3 ? f[3] : "1");
      ev.gpus = g_strdup (n > 4 ? f[4] : "-");
      ev.token = n > 5 ? g_ascii_strtoll (f[5], NULL, 10) : 0;
      g_array_append_val (events, ev);
      /* The strings now belong to the array (its clear function frees them). */
      // cppcheck-suppress memleak
    }
  g_array_sort (events, compare_events);
  return events;
}

/* Returns NULL on timeout or end of output. */
char *
helper_read_line (Helper *helper, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);

  for (;;)
    {
      const char *nl = strchr (helper->pending->str, '\n');
      struct pollfd pfd = { helper->out_fd, POLLIN, 0 };
      gint64 left;
      char buf[256];
      ssize_t n;

      if (nl != NULL)
        {
          char *line = g_strndup (helper->pending->str, nl - helper->pending->str);
          g_string_erase (helper->pending, 0, nl - helper->pending->str + 1);
          return line;
        }
      left = (deadline - g_get_monotonic_time ()) / 1000;
      if (left <= 0)
        return NULL;
      if (poll (&pfd, 1, (int) MIN (left, G_MAXINT)) <= 0)
        continue;
      n = read (helper->out_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return NULL;
      g_string_append_len (helper->pending, buf, n);
    }
}

void
helper_expect_line (Helper *helper, const char *prefix, double timeout_s)
{
  g_autofree char *line = helper_read_line (helper, timeout_s);

  if (line == NULL || !g_str_has_prefix (line, prefix))
    g_error ("expected a line starting with “%s” from the helper, got “%s”", prefix, line ? line : "(nothing)");
}

void
helper_write_line (Helper *helper, const char *line)
{
  GOutputStream *in = g_subprocess_get_stdin_pipe (helper->process);
  g_autofree char *text = g_strconcat (line, "\n", NULL);
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (in, text, strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (in, NULL, &error);
  g_assert_no_error (error);
}

/* Runs a system command (mount, useradd…) or fails the test with its
 * error output. */
void
test_run_or_fail (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", argv[0], err);
}

void
helper_close_stdin (Helper *helper)
{
  GOutputStream *in = g_subprocess_get_stdin_pipe (helper->process);
  g_output_stream_close (in, NULL, NULL);
}

void
helper_kill (Helper *helper, int signum)
{
  g_subprocess_send_signal (helper->process, signum);
}

GPid
helper_get_pid (Helper *helper)
{
  const char *id = g_subprocess_get_identifier (helper->process);
  return id ? (GPid) atoi (id) : 0;
}

gboolean
helper_is_running (Helper *helper)
{
  /* The identifier goes once the child has been reaped. */
  return g_subprocess_get_identifier (helper->process) != NULL;
}

/* The first child of @pid (of its main thread first, then of its
 * others'), as the command's fence finds them; 0 when it has none. */
GPid
test_first_child (GPid pid)
{
  g_autoptr(GArray) children = tessera_proc_dup_children (pid);

  return children->len > 0 ? g_array_index (children, GPid, 0) : 0;
}

/* Waits for @process: its exit status, or 128 + the signal that ended
 * it, as a shell says. */
int
test_exit_code (GSubprocess *process)
{
  g_autoptr(GError) error = NULL;

  g_subprocess_wait (process, NULL, &error);
  g_assert_no_error (error);
  if (g_subprocess_get_if_signaled (process))
    return 128 + g_subprocess_get_term_sig (process);
  return g_subprocess_get_exit_status (process);
}

int
helper_wait (Helper *helper)
{
  return test_exit_code (helper->process);
}

void
helper_free (Helper *helper)
{
  if (helper == NULL)
    return;
  if (g_subprocess_get_identifier (helper->process) != NULL)
    {
      g_subprocess_force_exit (helper->process);
      g_subprocess_wait (helper->process, NULL, NULL);
    }
  g_object_unref (helper->process);
  g_string_free (helper->pending, TRUE);
  g_free (helper);
}

/* Runs @argv (NULL-terminated array) to its end; its output and error
 * output as bytes (any bytes: names may be hostile). Returns the exit
 * status, or 128 + the signal that ended it. */
int
test_run_capture (GPtrArray *argv, GBytes **out, GBytes **err)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;

  process = g_subprocess_newv ((const char * const *) argv->pdata,
                               G_SUBPROCESS_FLAGS_STDIN_INHERIT | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                               (err != NULL ? G_SUBPROCESS_FLAGS_STDERR_PIPE : G_SUBPROCESS_FLAGS_STDERR_MERGE),
                               &error);
  g_assert_no_error (error);
  g_subprocess_communicate (process, NULL, NULL, out, err, &error);
  g_assert_no_error (error);
  return test_exit_code (process);
}

/* As test_run_capture, its output in @out and its error output in @err
 * as text (empty, never NULL, when there is none), both logged. */
int
test_run_capture_text (GPtrArray *argv, char **out, char **err)
{
  g_autoptr(GBytes) out_bytes = NULL;
  g_autoptr(GBytes) err_bytes = NULL;
  int status = test_run_capture (argv, &out_bytes, &err_bytes);

  *out = g_strndup (g_bytes_get_size (out_bytes) > 0 ? g_bytes_get_data (out_bytes, NULL) : "",
                    g_bytes_get_size (out_bytes));
  *err = g_strndup (g_bytes_get_size (err_bytes) > 0 ? g_bytes_get_data (err_bytes, NULL) : "",
                    g_bytes_get_size (err_bytes));
  g_test_message ("exit %d; out: %s; err: %s", status, *out, *err);
  return status;
}

/* One line of @out without its newline, NULL at its end or after
 * @timeout_s seconds; reads byte by byte, so nothing after the line is
 * taken from the stream. */
char *
test_read_stream_line (GInputStream *out, double timeout_s)
{
  GString *line = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  char c;

  while (g_get_monotonic_time () < deadline)
    {
      GError *error = NULL;
      gssize n;

      if (!g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (out)))
        {
          g_usleep (10 * 1000);
          continue;
        }
      n = g_input_stream_read (out, &c, 1, NULL, &error);
      g_clear_error (&error);
      if (n <= 0)
        break;
      if (c == '\n')
        return g_string_free (line, FALSE);
      g_string_append_c (line, c);
    }
  g_string_free (line, TRUE);
  return NULL;
}

/* One line of @process's stdout, as test_read_stream_line reads it: a
 * read bounded in time, so a holder that hangs fails the test rather than
 * leaving it to meson's timeout. */
char *
test_read_line (GSubprocess *process, double timeout_s)
{
  return test_read_stream_line (g_subprocess_get_stdout_pipe (process), timeout_s);
}

/* Waits until @process says "ready" on its stdout (@timeout_s at most):
 * what a holder's command says once `tessera run` has started it. */
void
test_wait_ready (GSubprocess *process, double timeout_s)
{
  g_autofree char *ready = test_read_stream_line (g_subprocess_get_stdout_pipe (process), timeout_s);

  g_assert_cmpstr (ready, ==, "ready");
}

/* Tells a holder to end (its stdin closes: its command's `read` returns),
 * and waits until it has, successfully. */
void
test_let_go (GSubprocess *holder)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
}

/* What @process wrote on its stdout (a pipe), to its end; its exit status
 * must be @expected. */
char *
test_output_of (GSubprocess *process, int expected)
{
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, expected);
  return out;
}

/* As test_output_of(), its exit status @expected, and the output parsed
 * as JSON. */
JsonNode *
test_output_json (GSubprocess *process, int expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = test_output_of (process, expected);
  JsonNode *root = json_from_string (out, &error);

  g_assert_no_error (error);
  g_assert_nonnull (root);
  return root;
}

/* Runs `python3 -c @script ARG…` (the arguments NULL-terminated) with
 * @input on its standard input (NULL: none); it must exit 0. Its
 * output. */
char *
test_python_output (const char *input, const char *script, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) python = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  const char *arg;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) test_python ());
  g_ptr_array_add (argv, (gpointer) "-c");
  g_ptr_array_add (argv, (gpointer) script);
  va_start (ap, script);
  while ((arg = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  python = g_subprocess_newv ((const char * const *) argv->pdata,
                              G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (python, input, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (python), ==, 0);
  return out;
}

/* Appends copies of @args (NULL-terminated) to @argv. */
void
test_argv_append (GPtrArray *argv, const char * const *args)
{
  for (const char * const *a = args; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
}

/* Appends copies of @args (NULL-terminated) to @argv, then its NULL. */
void
test_argv_end (GPtrArray *argv, const char * const *args)
{
  test_argv_append (argv, args);
  g_ptr_array_add (argv, NULL);
}

/* Appends copies of @first and the arguments after it (up to a NULL)
 * to @argv, then its NULL. */
void
test_argv_end_va (GPtrArray *argv, const char *first, va_list ap)
{
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  g_ptr_array_add (argv, NULL);
}

/* A shell that printed its own pid, then ended. */
GPid
test_dead_pid (void)
{
  g_autofree char *out = NULL;

  g_assert_true (g_spawn_command_line_sync ("sh -c 'echo $$'", &out, NULL, NULL, NULL));
  g_assert_cmpint (atoi (out), >, 0);
  return atoi (out);
}
