/* test-tool.c: the `tessera` command with real processes, files and
 * signals (issue "The tessera command", acceptance 1-4).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test-utils.h"
#include <tessera/tessera.h>

typedef struct
{
  char *tmp;
  char *config;
  char *log;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *content = NULL;

  f->tmp = test_make_tmpdir ();
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  f->log = g_build_filename (f->tmp, "log", NULL);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", f->tmp);
  test_write_file (f->config, content);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->config);
  g_free (f->log);
}

/* Runs `tessera --config CONFIG ARGS…` with its state in the fixture. */
static GSubprocess *
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

static GSubprocess *
tessera_spawn (Fixture *f, const char * const *env, GSubprocessFlags flags, const char *first, ...)
{
  GSubprocess *process;
  va_list ap;

  va_start (ap, first);
  process = tessera_spawnv (f, env, flags, first, ap);
  va_end (ap);
  return process;
}

static char *
read_stream_line (GInputStream *out, double timeout)
{
  GString *line = g_string_new (NULL);
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
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

static char *
read_line (GSubprocess *process, double timeout)
{
  return read_stream_line (g_subprocess_get_stdout_pipe (process), timeout);
}

static char *
read_error_line (GSubprocess *process, double timeout)
{
  return read_stream_line (g_subprocess_get_stderr_pipe (process), timeout);
}

/* Runs `tessera ARGS…` to the end; returns its output, stderr included. */
static char *
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

/* ---------------------------------------------------------------------- */

static void
test_runs_serialize (Fixture *f, gconstpointer data)
{
  g_autofree char *script = g_strdup_printf ("echo A $(date +%%s%%N) >> %s; sleep 0.4; echo R $(date +%%s%%N) >> %s",
                                             f->log, f->log);
  g_autoptr(GSubprocess) a = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_NONE, "run", "--need", "r", "--", "sh", "-c", script, NULL);
  g_autoptr(GSubprocess) b = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_NONE, "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_cmpint (test_exit_code (a), ==, 0);
  g_assert_cmpint (test_exit_code (b), ==, 0);
  g_assert_true (g_file_get_contents (f->log, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  /* A, R, A, R: never two at once. */
  g_assert_cmpuint (g_strv_length (lines), ==, 5);
  g_assert_true (lines[0][0] == 'A' && lines[1][0] == 'R' && lines[2][0] == 'A' && lines[3][0] == 'R');
  g_assert_cmpint (g_ascii_strtoll (lines[1] + 2, NULL, 10), <=, g_ascii_strtoll (lines[2] + 2, NULL, 10));
}

/* What a run of `--need r=1 --need s=1` gives its command in
 * TESSERA_FENCING_TOKEN ("unset" when nothing). */
static char *
fencing_token_variable (Fixture *f)
{
  int status;
  char *out = run_capture (f, &status, "run", "--need", "r=1", "--need", "s=1", "--", "sh", "-c",
                           "printf '%s\\n' \"${TESSERA_FENCING_TOKEN-unset}\"", NULL);

  g_assert_cmpint (status, ==, 0);
  return g_strstrip (out);
}

/* A run gives its command the fencing token of each resource it holds
 * (issue 40, point 3), "NAME:TOKEN" in the order of --need, separated by
 * commas; the next run's tokens are larger. */
static void
test_fencing_token_variable (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                              "[resource s]\ntype=countertoken\npath=%s/s\ntotal=2\n",
                                              f->tmp, f->tmp);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  gint64 r1, s1, r2, s2;

  test_write_file (f->config, content);
  first = fencing_token_variable (f);
  second = fencing_token_variable (f);
  g_test_message ("TESSERA_FENCING_TOKEN=%s, then %s", first, second);
  if (sscanf (first, "r:%" G_GINT64_FORMAT ",s:%" G_GINT64_FORMAT, &r1, &s1) != 2 ||
      sscanf (second, "r:%" G_GINT64_FORMAT ",s:%" G_GINT64_FORMAT, &r2, &s2) != 2)
    g_error ("the command was given TESSERA_FENCING_TOKEN “%s”, then “%s”, not r:TOKEN,s:TOKEN", first, second);
  g_assert_cmpint (r1, >, 0);
  g_assert_cmpint (s1, >, 0);
  g_assert_cmpint (r2, >, r1);
  g_assert_cmpint (s2, >, s1);
}

static void
test_exit_status (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) seven = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_NONE, "run", "--need", "r", "--", "sh", "-c", "exit 7", NULL);
  g_autoptr(GSubprocess) killed = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_NONE, "run", "--need", "r", "--", "sh", "-c", "kill -9 $$", NULL);
  g_autoptr(GSubprocess) missing = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run", "--need", "r", "--", "/nonexistent/command", NULL);

  g_assert_cmpint (test_exit_code (seven), ==, 7);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  g_assert_cmpint (test_exit_code (missing), ==, 127);
}

static void
test_sigterm_reaches_child (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "sh", "-c",
                   "trap 'echo got-term; exit 3' TERM; echo ready; i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done", NULL);
  g_autofree char *ready = read_line (run, 60);
  g_autofree char *got = NULL;

  g_assert_cmpstr (ready, ==, "ready");
  g_subprocess_send_signal (run, SIGTERM);
  got = read_line (run, 60);
  g_assert_cmpstr (got, ==, "got-term");
  g_assert_cmpint (test_exit_code (run), ==, 3);
}

/* TESSERA_JOB_FOLDERS: the job folder goes there (the command sees its
 * job in it), and a relative path is refused in one line. */
static void
test_job_folders_setting (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->tmp, "job-folders", NULL);
  const char *env[] = { "TESSERA_JOB_FOLDERS", folder, NULL };
  const char *relative[] = { "TESSERA_JOB_FOLDERS", "job-folders", NULL };
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "sh", "-c",
                   "ls \"$TESSERA_JOB_FOLDERS\" | wc -l", NULL);
  g_autoptr(GSubprocess) bad = NULL;
  g_autofree char *count = read_line (run, 60);
  g_autofree char *message = NULL;

  g_assert_cmpstr (count, ==, "1");
  g_assert_cmpint (test_exit_code (run), ==, 0);
  bad = tessera_spawn (f, relative, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r", "--", "true", NULL);
  message = read_error_line (bad, 60);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "TESSERA_JOB_FOLDERS"));
  g_assert_cmpint (test_exit_code (bad), !=, 0);
}

/* SIGKILL of the wrapper: the holding stays while the child lives, then
 * a waiting run proceeds. */
static void
test_wrapper_killed (Fixture *f, gconstpointer data)
{
  const char *no_poll[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };
  g_autoptr(GSubprocess) first =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo ready; read x; echo child-done", NULL);
  g_autoptr(GSubprocess) second = NULL;
  g_autofree char *ready = read_line (first, 60);
  g_autofree char *early = NULL;
  g_autofree char *late = NULL;

  g_assert_cmpstr (ready, ==, "ready");
  g_subprocess_force_exit (first);
  g_assert_cmpint (test_exit_code (first), ==, 128 + SIGKILL);

  second = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "echo", "second", NULL);
  /* The orphaned child still holds r. */
  early = read_line (second, 1.0);
  g_assert_null (early);
  /* It ends when its stdin closes; the waiting run is woken by its exit. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (first), NULL, NULL);
  late = read_line (second, 60);
  g_assert_cmpstr (late, ==, "second");
  g_assert_cmpint (test_exit_code (second), ==, 0);
}


/* `tessera run --need r` holding until told: returns once its command
 * runs (said "ready"). */
static GSubprocess *
hold_r (Fixture *f)
{
  GSubprocess *holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                                       "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_autofree char *ready = read_line (holder, 60);

  g_assert_cmpstr (ready, ==, "ready");
  return holder;
}

/* Tells a holder to end (its stdin closes), and waits for it. */
static void
let_go (GSubprocess *holder)
{
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
}
static void
test_no_wait_and_timeout (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) no_wait = NULL;
  g_autoptr(GSubprocess) timeout = NULL;
  gint64 start;

  no_wait = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run", "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (test_exit_code (no_wait), ==, 75);
  start = g_get_monotonic_time ();
  timeout = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run", "--timeout", "0.5", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (test_exit_code (timeout), ==, 75);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 500 * 1000);
  let_go (holder);
}

/* The command of a waiting run sits behind its gate: when something kills
 * it there, the run stops waiting and ends as its command did, taking
 * nothing (before, it waited on, took the share for a dead command and
 * only then noticed). */
static void
test_command_killed_while_waiting (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *waited = NULL;
  g_autofree char *children_path = NULL;
  g_autofree char *children = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  GPid command;

  /* Without the fix it would give up only at its timeout (exit 75). */
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--timeout", "60", "--need", "r", "--", "true", NULL);
  waited = read_error_line (waiter, 60);
  g_assert_nonnull (waited);
  g_assert_nonnull (strstr (waited, "waiting for r"));
  children_path = g_strdup_printf ("/proc/%s/task/%s/children", g_subprocess_get_identifier (waiter),
                                   g_subprocess_get_identifier (waiter));
  g_assert_true (g_file_get_contents (children_path, &children, NULL, NULL));
  command = (GPid) g_ascii_strtoll (children, NULL, 10);
  g_assert_cmpint (command, >, 0);
  g_assert_cmpint (kill (command, SIGKILL), ==, 0);
  g_assert_cmpint (test_exit_code (waiter), ==, 128 + SIGKILL);
  /* The holder still holds: the waiter never got the share. */
  g_assert_cmpuint (test_count_entries (jobs), ==, 1);
  let_go (holder);
}

/* At its end a run removes its job files through the folder it made,
 * never by path: a job folder swapped for a link while the command ran
 * (by whoever could) costs the link's target nothing. */
static void
test_job_files_removed_through_folder (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo \"$TESSERA_LOCKS\"; read x || true", NULL);
  g_autofree char *locks = read_line (run, 60);
  g_autofree char *job_dir = NULL;
  g_autofree char *moved = NULL;
  g_autofree char *decoy = g_build_filename (f->tmp, "decoy", NULL);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (locks == NULL)
    g_error ("the run printed no TESSERA_LOCKS");
  job_dir = g_path_get_dirname (locks);
  moved = g_strconcat (job_dir, ".moved", NULL);
  g_assert_cmpint (g_mkdir (decoy, 0700), ==, 0);
  dir = g_dir_open (job_dir, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *copy = g_build_filename (decoy, name, NULL);

      test_write_file (copy, "not yours to remove");
      g_ptr_array_add (names, g_strdup (name));
    }
  g_assert_cmpuint (names->len, >=, 2);   /* locks.json and the job lock */
  g_assert_cmpint (g_rename (job_dir, moved), ==, 0);
  g_assert_cmpint (symlink (decoy, job_dir), ==, 0);

  g_output_stream_close (g_subprocess_get_stdin_pipe (run), NULL, NULL);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *copy = g_build_filename (decoy, g_ptr_array_index (names, i), NULL);
      g_autofree char *own = g_build_filename (moved, g_ptr_array_index (names, i), NULL);

      g_test_message ("%s", (const char *) g_ptr_array_index (names, i));
      g_assert_true (g_file_test (copy, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (own, G_FILE_TEST_EXISTS));
    }
}

/* What `tessera run` starts in itself, as its command sees it: the names
 * of its threads, then its descriptors (an inotify instance shows as
 * "anon_inode:inotify"). */
#define SHOW_PARENT "cat /proc/$PPID/task/*/comm; ls -l /proc/$PPID/fd"

/* Whether @process has a thread named @name within @timeout seconds. */
static gboolean
has_thread_within (GSubprocess *process, const char *name, double timeout)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  g_autofree char *tasks = g_strdup_printf ("/proc/%s/task", g_subprocess_get_identifier (process));

  do
    {
      g_autoptr(GDir) dir = g_dir_open (tasks, 0, NULL);
      const char *tid;

      while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (tasks, tid, "comm", NULL);
          g_autofree char *comm = NULL;

          if (g_file_get_contents (path, &comm, NULL, NULL) && g_str_equal (g_strchomp (comm), name))
            return TRUE;
        }
      g_usleep (10 * 1000);
    }
  while (g_get_monotonic_time () < deadline);
  return FALSE;
}

/* A run that takes what is free starts no watch: no poller thread, no
 * inotify instance (whose closing costs a kernel grace period at exit).
 * One that has to wait starts both, so that an event wakes it. */
static void
test_no_watch_without_wait (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *out = NULL;
  g_autofree char *waited = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  out = run_capture (f, &status, "run", "--need", "r", "--", "sh", "-c", SHOW_PARENT, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "tessera-signals"));
  g_assert_null (strstr (out, "tessera-poller"));
  g_assert_null (strstr (out, "inotify"));

  holder = hold_r (f);
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "r", "--", "sh", "-c", SHOW_PARENT, NULL);
  /* Its first line says it waits; once it waits for an event (its
   * poller thread is there: before, the release could come first, and
   * it then got through with no wait at all), let the holder go. */
  waited = read_error_line (waiter, 60);
  g_assert_nonnull (waited);
  g_assert_nonnull (strstr (waited, "waiting for r"));
  g_assert_true (has_thread_within (waiter, "tessera-poller", 60));
  let_go (holder);
  g_clear_pointer (&out, g_free);
  g_subprocess_communicate_utf8 (waiter, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  g_assert_nonnull (strstr (out, "tessera-poller"));
  g_assert_nonnull (strstr (out, "inotify"));
}

/* The lock file names the command from its first version: the command's
 * process exists (behind its gate) before the lock file is written, so
 * the run writes it once, not once for itself and again for the command
 * (a second ipc.lock cycle per run). Counted with inotify: every version
 * is renamed into place. */
static void
test_lock_file_written_once (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *script = g_strdup_printf ("echo $$; cat %s/*.json", jobs);
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  guint versions = 0;
  ssize_t n;
  int status, fd;

  /* A first run makes the pool. */
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, jobs, IN_MOVED_TO | IN_CLOSE_WRITE), >=, 0);
  out = run_capture (f, &status, "run", "--need", "r", "--", "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
        struct inotify_event *ev = (struct inotify_event *) p;

        if (ev->len > 0 && g_str_has_suffix (ev->name, ".json") &&
            ((ev->mask & IN_MOVED_TO) || (ev->mask & IN_CLOSE_WRITE)))
          versions++;
        p += sizeof (struct inotify_event) + ev->len;
      }
  close (fd);
  g_assert_cmpuint (versions, ==, 1);
  /* And that version names the command. */
  lines = g_strsplit (out, "\n", 2);
  g_assert_nonnull (lines[0]);
  g_assert_nonnull (lines[1]);
  node = json_from_string (lines[1], &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (json_node_get_object (node), "process"),
                                               "pid"), ==, g_ascii_strtoll (lines[0], NULL, 10));
}

/* A run reads the plugin manifests only up to the one that provides its
 * resource type: one broken manifest later in the search path is not even
 * read (so not reported), while `tessera plugins`, which lists them all,
 * still reports it. */
static void
test_manifests_read_as_needed (Fixture *f, gconstpointer data)
{
  g_autofree char *later = g_build_filename (f->tmp, "later-plugins", NULL);
  g_autofree char *broken = g_build_filename (later, "broken.plugin", NULL);
  g_autofree char *path = g_strconcat (g_getenv ("TESSERA_PLUGIN_PATH"), ":", later, NULL);
  const char * const env[] = { "TESSERA_PLUGIN_PATH", path, NULL };
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) plugins = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  g_assert_cmpint (g_mkdir_with_parents (later, 0755), ==, 0);
  test_write_file (broken, "this is not a key file\n");
  run = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE,
                       "run", "--need", "r", "--", "true", NULL);
  g_subprocess_communicate_utf8 (run, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  g_assert_cmpstr (out, ==, "");
  g_clear_pointer (&out, g_free);
  plugins = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, "plugins", NULL);
  g_subprocess_communicate_utf8 (plugins, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (plugins), ==, 0);
  g_assert_nonnull (strstr (out, "broken.plugin"));
}

static JsonObject *
status_of_r (Fixture *f, JsonNode **root)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "status", "--json", NULL);
  JsonArray *resources;

  g_assert_cmpint (status, ==, 0);
  *root = json_from_string (out, NULL);
  g_assert_nonnull (*root);
  resources = json_object_get_array_member (json_node_get_object (*root), "resources");
  g_assert_cmpuint (json_array_get_length (resources), ==, 1);
  return json_array_get_object_element (resources, 0);
}

static void
test_status_json (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--name", "trainer", "--", "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *pid = read_line (holder, 60);
  g_autofree char *path = g_build_filename (f->tmp, "r", NULL);
  g_autoptr(JsonNode) during = NULL;
  g_autoptr(JsonNode) after = NULL;
  JsonObject *r, *h;
  JsonArray *holders;

  g_assert_nonnull (pid);
  r = status_of_r (f, &during);
  g_assert_cmpstr (json_object_get_string_member (r, "name"), ==, "r");
  g_assert_cmpstr (json_object_get_string_member (r, "type"), ==, "countertoken");
  g_assert_cmpstr (json_object_get_string_member (r, "path"), ==, path);
  g_assert_cmpint (json_object_get_int_member (r, "capacity"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  holders = json_object_get_array_member (r, "holders");
  g_assert_cmpuint (json_array_get_length (holders), ==, 1);
  h = json_array_get_object_element (holders, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (h, "job"), "trainer@"));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (h, "job_uri"), "/trainer"));
  /* The child, not the wrapper, is the holder. */
  g_assert_cmpint (json_object_get_int_member (h, "pid"), ==, atoi (pid));
  g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, g_get_host_name ());
  g_assert_cmpstr (json_object_get_string_member (h, "state"), ==, "alive");
  /* Whose job it is: the uid the process ran as, and its name. */
  g_assert_cmpint (json_object_get_int_member (h, "uid"), ==, getuid ());
  g_assert_cmpstr (json_object_get_string_member (h, "user"), ==, g_get_user_name ());
  g_assert_true (g_str_has_suffix (json_object_get_string_member (h, "since"), "Z"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (h, "information"), "count"), ==, 1);

  let_go (holder);
  r = status_of_r (f, &after);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 0);
}

/* Whose a holding is, in status: the lock file's owner, not the uid its
 * process spec claims (anyone who may write in jobs/ can claim another's
 * uid in a file of hers; none can own a file as another). */
static void
test_status_user_is_file_owner (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--name", "claimer", "--", "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *pid = read_line (holder, 60);
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_autofree char *claimed = NULL;
  g_autoptr(JsonNode) status = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  JsonObject *h;

  g_assert_nonnull (pid);
  if ((dir = g_dir_open (jobs, 0, NULL)) == NULL)
    g_error ("no %s", jobs);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      path = g_build_filename (jobs, name, NULL);
  if (path == NULL || !g_file_get_contents (path, &text, NULL, NULL))
    g_error ("no lock file in %s", jobs);
  /* Another uid of as many digits: the file keeps its size and times. */
  {
    g_autofree char *mine = g_strdup_printf ("\"uid\":%u", (guint) getuid ());
    g_autofree char *other = g_strdup_printf ("\"uid\":%u", getuid () == 0 ? 7 : (guint) getuid () ^ 1);

    if (strstr (text, mine) == NULL)
      g_error ("%s does not record the uid: %s", path, text);
    claimed = test_substitute (text, mine, other);
  }
  test_rewrite_keeping_stat (path, claimed);

  h = json_array_get_object_element (json_object_get_array_member (status_of_r (f, &status), "holders"), 0);
  g_assert_cmpint (json_object_get_int_member (h, "uid"), ==, getuid ());
  g_assert_cmpstr (json_object_get_string_member (h, "user"), ==, g_get_user_name ());
  let_go (holder);
}

/* Writes r's configuration again with a capacity of @total. */
static void
set_total (Fixture *f, int total)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=%d\n", f->tmp, total);

  test_write_file (f->config, content);
}

/* `tessera run --need r=@count --name @name` holding until told (its
 * command's pid in *@pid when asked). */
static GSubprocess *
hold_r_named (Fixture *f, const char *name, const char *count, GPid *pid)
{
  g_autofree char *need = g_strdup_printf ("r=%s", count);
  GSubprocess *holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                                       "run", "--need", need, "--name", name, "--",
                                       "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *line = read_line (holder, 60);

  g_assert_nonnull (line);
  if (pid != NULL)
    *pid = (GPid) g_ascii_strtoll (line, NULL, 10);
  return holder;
}

/* How many reserving entries (NAME.json) @queue has: a waiter within
 * its patience has a NAME.waiting there. */
static guint
count_reserving (const char *queue)
{
  g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
  const char *name;
  guint n = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      n++;
  return n;
}

/* A run of r=@count named @name whose patience is over at once: past its
 * first attempt it has a reserving entry in r's queue. Returns once it
 * has. */
static GSubprocess *
queue_for_r (Fixture *f, const char *name, const char *count)
{
  const char *env[] = { "TESSERA_PATIENCE", "0.05", NULL };
  g_autofree char *need = g_strdup_printf ("r=%s", count);
  g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
  GSubprocess *waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                       "run", "--need", need, "--name", name, "--", "true", NULL);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (count_reserving (queue) == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("%s never entered %s within 60 s", name, queue);
      g_usleep (10 * 1000);
    }
  return waiter;
}

/* Waits until process @pid is gone or a zombie (dead, for a judge). */
static void
wait_until_dead (GPid pid)
{
  g_autofree char *stat_path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  for (;;)
    {
      g_autofree char *text = NULL;
      const char *paren;

      if (!g_file_get_contents (stat_path, &text, NULL, NULL) ||
          ((paren = strrchr (text, ')')) != NULL && paren[1] == ' ' && paren[2] == 'Z'))
        return;
      if (g_get_monotonic_time () > deadline)
        g_error ("process %d still ran 60 s after SIGKILL", (int) pid);
      g_usleep (10 * 1000);
    }
}

/* The queue view, as squeue's: a waiter past its patience is listed with
 * its user, its job, what it wants and since when, in status and in its
 * JSON; each holder has a type-neutral "amount" (a counter's count), and
 * the resource what is held beside what is free (issue 42, point 4). */
static void
test_status_queue (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) since = NULL;
  g_autofree char *text = NULL;
  JsonObject *r, *h, *w;
  JsonArray *waiters;
  int status;

  set_total (f, 2);
  holder = hold_r_named (f, "big", "2", NULL);
  waiter = queue_for_r (f, "small", "1");

  r = status_of_r (f, &root);
  g_assert_cmpint (json_object_get_int_member (r, "capacity"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 2);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 0);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpint (json_object_get_int_member_with_default (h, "amount", -1), ==, 2);
  g_assert_true (json_object_has_member (r, "waiters"));
  waiters = json_object_get_array_member (r, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), "small@"));
  g_assert_cmpstr (json_object_get_string_member (w, "user"), ==, g_get_user_name ());
  g_assert_cmpint (json_object_get_int_member (w, "uid"), ==, getuid ());
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "reserved");
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (w, "since"), NULL);
  g_assert_nonnull (since);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 1);

  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "\n  waiting: small@"));
  g_assert_nonnull (strstr (text, g_get_user_name ()));
  g_assert_nonnull (strstr (text, "{\"count\":1}"));

  let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* The one waiter in r's queue view that a run named @name is: its JSON
 * object in status --json, shown as waiting in status's text and counted
 * in the OpenMetrics text (issue 42, point 4: every waiting run, not
 * only those past their patience). */
static void
assert_shown_waiting (Fixture *f, const char *name)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) since = NULL;
  g_autofree char *text = NULL;
  g_autofree char *metrics = NULL;
  g_autofree char *line = g_strdup_printf ("\n  waiting: %s@", name);
  g_autofree char *job = g_strdup_printf ("%s@", name);
  g_autofree char *user_waiting = g_strdup_printf ("tessera_user_waiting{resource=\"r\",user=\"%s\"} 1\n",
                                                   g_get_user_name ());
  JsonObject *r, *w;
  JsonArray *waiters;
  int status;

  r = status_of_r (f, &root);
  waiters = json_object_get_array_member (r, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), job));
  g_assert_cmpstr (json_object_get_string_member (w, "user"), ==, g_get_user_name ());
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (w, "since"), NULL);
  g_assert_nonnull (since);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 1);

  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, line));
  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (metrics, "\ntessera_waiters{resource=\"r\"} 1\n"));
  g_assert_nonnull (strstr (metrics, user_waiting));
}

/* Nobody waits in r's queue view, by status --json and status. */
static void
assert_none_waiting (Fixture *f)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  JsonObject *r;
  int status;

  r = status_of_r (f, &root);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "waiters")), ==, 0);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 0);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (text, "\n  waiting: "));
}

/* A run that waits within its patience (an hour here), reserving
 * nothing yet, is in the queue view all the same, as "waiting": an
 * administrator sees who waits; killed, it is no longer shown (its entry
 * judged like a holder's), and a waiter granted leaves nothing behind
 * (issue 42, point 4). */
static void
test_status_patient_waiter (Fixture *f, gconstpointer data)
{
  const char *env[] = { "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) killed = NULL;
  g_autoptr(GSubprocess) granted = NULL;
  g_autofree char *line = NULL;
  g_autofree char *second_line = NULL;

  holder = hold_r_named (f, "big", "1", NULL);
  killed = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "r=1", "--name", "patient", "--", "true", NULL);
  /* Said once its first attempt failed. */
  line = read_error_line (killed, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for r"));
  assert_shown_waiting (f, "patient");

  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  assert_none_waiting (f);

  granted = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                           "run", "--need", "r=1", "--name", "later", "--", "true", NULL);
  second_line = read_error_line (granted, 60);
  g_assert_nonnull (second_line);
  g_assert_true (g_str_has_prefix (second_line, "tessera: waiting for r"));
  assert_shown_waiting (f, "later");
  let_go (holder);
  g_assert_cmpint (test_exit_code (granted), ==, 0);
  assert_none_waiting (f);
  g_assert_cmpuint (test_count_entries (queue), ==, 0);
}

/* The one waiter of status --json's only resource: its "wants". */
static JsonNode *
waiter_wants (Fixture *f, JsonNode **root)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "status", "--json", NULL);
  JsonObject *resource;
  JsonArray *waiters;
  JsonObject *w;

  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  *root = json_from_string (out, NULL);
  g_assert_nonnull (*root);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (*root),
                                                                          "resources"), 0);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  return json_object_get_member (w, "wants");
}

/* A mutex's or a GPU's waiter within its patience shows what it asks
 * for (issue 42, point 4): a mutex's its mode, a GPU's how many devices,
 * said by the type without preparing a reservation (its "wants" was
 * null: the wait information of those types has side effects). */
static void
test_status_patient_waiter_wants (Fixture *f, gconstpointer data)
{
  const char *env[] = { "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *mutex = g_strdup_printf ("[resource m]\ntype=mutex\npath=%s/m\n", f->tmp);
  g_autofree char *gpu = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s/g\ndevices=0;1\n", f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) gpu_holder = NULL;
  g_autoptr(GSubprocess) gpu_waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonNode) gpu_root = NULL;
  g_autofree char *ready = NULL, *line = NULL, *gpu_ready = NULL, *gpu_line = NULL;
  JsonNode *wants;

  test_write_file (f->config, mutex);
  holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "m", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready = read_line (holder, 60);
  g_assert_cmpstr (ready, ==, "ready");
  waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "m=shared", "--name", "reader", "--", "true", NULL);
  line = read_error_line (waiter, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for m"));
  wants = waiter_wants (f, &root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (wants));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (wants), "mode"), ==, "shared");
  let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);

  test_write_file (f->config, gpu);
  gpu_holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                              "run", "--need", "g=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  gpu_ready = read_line (gpu_holder, 60);
  g_assert_cmpstr (gpu_ready, ==, "ready");
  gpu_waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                              "run", "--need", "g=2", "--name", "trainer", "--", "true", NULL);
  gpu_line = read_error_line (gpu_waiter, 60);
  g_assert_nonnull (gpu_line);
  g_assert_true (g_str_has_prefix (gpu_line, "tessera: waiting for g"));
  wants = waiter_wants (f, &gpu_root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (wants));
  g_assert_cmpint (json_object_get_int_member_with_default (json_node_get_object (wants), "count", -1), ==, 2);
  let_go (gpu_holder);
  g_assert_cmpint (test_exit_code (gpu_waiter), ==, 0);
}

/* A waiter within its patience of a type that reserves nothing (no
 * get_wait_information: the example "slots" plugin) is shown all the
 * same: it reserves nothing, but it waits (issue 42, point 4). */
static void
test_status_patient_waiter_no_reservation (Fixture *f, gconstpointer data)
{
  g_autofree char *built = g_test_build_filename (G_TEST_BUILT, "example-plugin", NULL);
  g_autofree char *path = g_strconcat (built, ":", g_getenv ("TESSERA_PLUGIN_PATH"), NULL);
  const char *env[] = { "TESSERA_PLUGIN_PATH", path, NULL };
  const char *waiter_env[] = { "TESSERA_PLUGIN_PATH", path, "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *content = g_strdup_printf ("[resource s]\ntype=slots\npath=%s/s\nslots=1\n", f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *ready = NULL, *line = NULL, *out = NULL;
  JsonObject *resource, *w;
  JsonArray *waiters;
  int status;

  test_write_file (f->config, content);
  holder = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "s", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready = read_line (holder, 60);
  g_assert_cmpstr (ready, ==, "ready");
  waiter = tessera_spawn (f, waiter_env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "s", "--name", "builder", "--", "true", NULL);
  line = read_error_line (waiter, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for s"));

  {
    g_autoptr(GSubprocess) show = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "status", "--json", NULL);
    g_autoptr(GError) error = NULL;

    g_subprocess_communicate_utf8 (show, NULL, NULL, &out, NULL, &error);
    g_assert_no_error (error);
    status = test_exit_code (show);
  }
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"),
                                            0);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), "builder@"));
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* A holder whose process is dead while its lock file stays is no free
 * capacity in status: its share is "reclaimable" (the next run takes it
 * back), apart from what is free and from what live holders hold (issue
 * 42, point 4). */
static void
test_status_reclaimable (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) alive = NULL;
  g_autoptr(GSubprocess) killed = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  JsonObject *r;
  JsonArray *holders;
  GPid command = 0;
  gboolean seen_dead = FALSE;
  int status;

  set_total (f, 3);
  alive = hold_r_named (f, "alive", "1", NULL);
  killed = hold_r_named (f, "killed", "2", &command);
  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  g_assert_cmpint (kill (command, SIGKILL), ==, 0);
  wait_until_dead (command);
  g_assert_cmpuint (test_count_entries (jobs), ==, 2);

  r = status_of_r (f, &root);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 1);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 2);
  holders = json_object_get_array_member (r, "holders");
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);

      if (g_str_equal (json_object_get_string_member (h, "state"), "dead"))
        {
          g_assert_true (g_str_has_prefix (json_object_get_string_member (h, "job"), "killed@"));
          g_assert_cmpint (json_object_get_int_member (h, "amount"), ==, 2);
          seen_dead = TRUE;
        }
    }
  g_assert_true (seen_dead);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "r (countertoken): 0 of 3 free, 1 held, 2 reclaimable\n"));
  let_go (alive);
}

/* A holder whose pid says nothing here (a third host's) and whose job
 * lock, seen here, is free is dead by the verdict on a holder: status
 * shows it "dead" and its share reclaimable, as a run would take it
 * back, not "remote" and held (issue 38). */
static void
test_status_verdict_dead (Fixture *f, gconstpointer data)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "far@1.json", NULL);
  g_autofree char *job_dir = g_build_filename (f->tmp, "far-job", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, "task.lock", NULL);
  g_autofree char *text = NULL;
  JsonObject *r, *h;
  int status;

  set_total (f, 3);
  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  test_write_file (job_lock, "");
  text = g_strdup_printf ("{\"job_uri\": \"%s/task\", \"information\": {\"count\": 2}, "
                          "\"process\": {\"type\": \"local\", \"pid\": 5, \"start_time\": 1, "
                          "\"host\": \"third-node\", \"boot_id\": \"00000000-dead-beef-0000-000000000001\"}}",
                          job_dir);
  test_write_file (lock_file, text);

  r = status_of_r (f, &root);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 1);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "state"), ==, "dead");
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 2);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));   /* status removes nothing */
}

/* `status --format=openmetrics`, read by Prometheus's own parser
 * (python3-prometheus-client): capacity, free, held, reclaimable and
 * waiting per resource, held and waiting per user; `--format=json` is
 * --json and a format it does not know is a usage error (issue 42,
 * point 5). */
static void
test_status_openmetrics (Fixture *f, gconstpointer data)
{
  static const char parse[] =
    "import sys\n"
    "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
    "for family in text_string_to_metric_families(sys.stdin.read()):\n"
    "    for s in family.samples:\n"
    "        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
    "        print('%s %s %s {%s} %g' % (family.type, family.name, s.name, labels, s.value))\n";
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) parser = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) json = NULL;
  g_autofree char *metrics = NULL;
  g_autofree char *parsed = NULL;
  g_autofree char *as_json = NULL;
  g_autofree char *bad = NULL;
  g_autofree char *user_held = NULL;
  g_autofree char *user_waiting = NULL;
  int status;

  set_total (f, 3);
  holder = hold_r_named (f, "big", "2", NULL);
  waiter = queue_for_r (f, "large", "2");

  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_suffix (metrics, "# EOF\n"));
  g_assert_nonnull (strstr (metrics, "# TYPE tessera_capacity gauge\n"));
  g_assert_nonnull (strstr (metrics, "# HELP tessera_capacity "));
  parser = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                             test_python (), "-c", parse, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (parser, metrics, NULL, &parsed, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (parser), ==, 0);
  g_test_message ("%s", parsed);
  g_assert_nonnull (strstr (parsed, "gauge tessera_capacity tessera_capacity {resource=r} 3\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_free tessera_free {resource=r} 1\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_held tessera_held {resource=r} 2\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_reclaimable tessera_reclaimable {resource=r} 0\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_waiting tessera_waiting {resource=r} 2\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_waiters tessera_waiters {resource=r} 1\n"));
  user_held = g_strdup_printf ("gauge tessera_user_held tessera_user_held {resource=r,user=%s} 2\n", g_get_user_name ());
  g_assert_nonnull (strstr (parsed, user_held));
  user_waiting = g_strdup_printf ("gauge tessera_user_waiting tessera_user_waiting {resource=r,user=%s} 2\n",
                                  g_get_user_name ());
  g_assert_nonnull (strstr (parsed, user_waiting));

  /* An entry asking for more than there is in all (a member may plant
   * one), of the waiter's live process: never served, so out of
   * tessera_waiting, and out of the user's sum too. */
  {
    g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
    g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
    g_autofree char *entry = NULL;
    g_autofree char *text = NULL;
    g_autofree char *planted_text = NULL;
    g_autofree char *planted = g_build_filename (queue, "planted@1.json", NULL);
    g_autofree char *again = NULL;
    const char *name;

    while (dir != NULL && entry == NULL && (name = g_dir_read_name (dir)) != NULL)
      if (g_str_has_suffix (name, ".json"))
        entry = g_build_filename (queue, name, NULL);
    g_assert_nonnull (entry);
    g_assert_true (g_file_get_contents (entry, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "\"count\":2"));
    planted_text = test_substitute (text, "\"count\":2", "\"count\":100");
    test_write_file (planted, planted_text);
    again = run_capture (f, &status, "status", "--format=openmetrics", NULL);
    g_test_message ("%s", again);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (again, "\ntessera_waiting{resource=\"r\"} 2\n"));
    g_free (user_waiting);
    user_waiting = g_strdup_printf ("\ntessera_user_waiting{resource=\"r\",user=\"%s\"} 2\n", g_get_user_name ());
    g_assert_nonnull (strstr (again, user_waiting));
    g_assert_cmpint (g_unlink (planted), ==, 0);
  }

  as_json = run_capture (f, &status, "status", "--format=json", NULL);
  g_assert_cmpint (status, ==, 0);
  json = json_from_string (as_json, NULL);
  g_assert_nonnull (json);
  g_assert_true (json_object_has_member (json_node_get_object (json), "resources"));
  bad = run_capture (f, &status, "status", "--format=yaml", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_nonnull (strstr (bad, "yaml"));

  let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* Holders whose lock files (a co-user may write them) say a count of
 * 2^63-1 each: the per-user sum of OpenMetrics and the resource's held
 * units stop at the largest count (saturate) instead of wrapping round
 * to a negative number. */
static void
test_status_openmetrics_saturates (Fixture *f, gconstpointer data)
{
  g_autofree char *user_held = g_strdup_printf ("\ntessera_user_held{resource=\"r\",user=\"%s\"} %" G_GINT64_FORMAT
                                                "\n", g_get_user_name (), G_MAXINT64);
  g_autofree char *held = g_strdup_printf ("\ntessera_held{resource=\"r\"} %" G_GINT64_FORMAT "\n", G_MAXINT64);
  g_autofree char *metrics = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/r/jobs/huge%d@1.json", f->tmp, i);
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/huge%d\", \"information\": {\"count\": %"
                                               G_GINT64_FORMAT "}}", f->tmp, i, G_MAXINT64);

      test_write_file (path, text);
    }
  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_test_message ("%s", metrics);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (metrics, user_held));
  g_assert_nonnull (strstr (metrics, held));
}

/* Reads one line of `watch --json` and parses it: r's object. */
static JsonObject *
watched_r (GSubprocess *watch, JsonNode **root)
{
  g_autofree char *line = read_line (watch, 60);
  JsonArray *resources;

  g_assert_nonnull (line);
  g_assert_null (strchr (line, '\n'));
  *root = json_from_string (line, NULL);
  g_assert_nonnull (*root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*root));
  g_assert_nonnull (json_object_get_string_member (json_node_get_object (*root), "time"));
  resources = json_object_get_array_member (json_node_get_object (*root), "resources");
  g_assert_cmpuint (json_array_get_length (resources), ==, 1);
  return json_array_get_object_element (resources, 0);
}

/* `tessera watch --json`: one JSON document per line, one line per
 * change, as status --json's (issue 42, point 5). */
static void
test_watch_json (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) watch =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "watch", "--json", NULL);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(JsonNode) first = NULL;
  g_autoptr(JsonNode) second = NULL;
  g_autoptr(JsonNode) third = NULL;
  JsonObject *r;

  r = watched_r (watch, &first);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 0);
  holder = hold_r (f);
  r = watched_r (watch, &second);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (json_object_get_array_member (r, "holders"), 0),
                                               "amount"), ==, 1);
  let_go (holder);
  r = watched_r (watch, &third);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_subprocess_force_exit (watch);
  g_assert_cmpint (test_exit_code (watch), ==, 128 + SIGKILL);
}

/* `tessera set r total=2` lets a waiting run through: no poll can, as the
 * first poll would come after 1000 s. */
static void
test_set_wakes_waiter (Fixture *f, gconstpointer data)
{
  const char *no_poll[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *early = NULL;
  g_autofree char *through = NULL;
  g_autofree char *out = NULL;
  int status;

  waiter = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "echo", "through", NULL);
  early = read_line (waiter, 1.0);
  g_assert_null (early);
  out = run_capture (f, &status, "set", "r", "total=2", NULL);
  g_assert_cmpint (status, ==, 0);
  through = read_line (waiter, 30);
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  let_go (holder);
}

/* ---------------------------------------------------------------------- */
/* Configuration errors: exit 78 and one message naming file, group, key */

typedef struct
{
  const char *name;
  const char *content;
  const char *group;
  const char *key;
} BadConfig;

static const BadConfig bad_configs[] = {
  { "unknown-type", "[resource r]\ntype=no-such-type\n", "[resource r]", "type" },
  { "wrong-key", "[resource r]\ntype=countertoken\ntotl=3\n", "[resource r]", "totl" },
  { "wrong-value-type", "[resource r]\ntype=countertoken\ntotal=three\n", "[resource r]", "total" },
  { "value-out-of-range", "[resource r]\ntype=countertoken\ntotal=-5\n", "[resource r]", "total" },
  { "duplicate-resource", "[resource r]\ntype=countertoken\ntotal=1\n[resource r]\ntype=mutex\n", "[resource r]", NULL },
  { "duplicate-key", "[resource r]\ntype=countertoken\ntotal=1\ntotal=2\n", "[resource r]", "total" },
  { "missing-type", "[resource r]\npath=/tmp/x\n", "[resource r]", "type" },
  { "unknown-group", "[pool r]\ntype=countertoken\n", "[pool r]", NULL },
  { "hostile-name", "[resource r/../x]\ntype=countertoken\n", "[resource r/../x]", NULL },
  { "relative-path", "[resource r]\ntype=countertoken\npath=relative\n", "[resource r]", "path" },
  { "lock-folder-key", "[resource r]\ntype=countertoken\nlock-folder=relative\n", "[resource r]", "lock-folder" },
  { "not-a-keyfile", "not a keyfile at all\n", NULL, NULL },
  { "total-minus-one", "[resource r]\ntype=countertoken\npath=/tmp/tessera-never/r\ntotal=-1\n", "[resource r]", "total" },
  { "same-folder", "[resource r]\ntype=countertoken\npath=/tmp/tessera-never/r\ntotal=1\n"
    "[resource s]\ntype=mutex\npath=/tmp/tessera-never/x/../r/\n", "[resource s]", "path" },
  { "gpu-devices-not-a-list", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=x\n", "[resource g]",
    "devices" },
  { "gpu-device-given-twice", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=0;0\n", "[resource g]",
    "devices" },
  { "gpu-no-device", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=;\n", "[resource g]", "devices" },
};

/* Configuration errors: exit 78 and one line naming file, group and key. */
static void
test_config_error (Fixture *f, gconstpointer data)
{
  const BadConfig *bad = data;
  g_autofree char *out = NULL;
  int status;

  test_write_file (f->config, bad->content);
  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 78);
  g_assert_true (g_str_has_prefix (out, "tessera: "));
  g_assert_nonnull (strstr (out, f->config));
  if (bad->group != NULL)
    g_assert_nonnull (strstr (out, bad->group));
  if (bad->key != NULL)
    g_assert_nonnull (strstr (out, bad->key));
  g_assert_cmpint (strchr (out, '\n') - out, ==, (int) strlen (out) - 1);
}

/* A holder whose process is gone (its job lock free), removed by `tessera
 * clean`, which says so. */
static void
test_clean (Fixture *f, gconstpointer data)
{
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "gone@1.json", NULL);
  g_autofree char *job_dir = g_build_filename (f->tmp, "gone-job", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, "gone.lock", NULL);
  g_autofree char *first = NULL;
  g_autofree char *again = NULL;
  int status;

  g_autofree char *content = NULL;
  g_autofree char *pid = NULL;

  /* The pid of a process that has ended: a shell that printed its own. */
  g_assert_true (g_spawn_command_line_sync ("sh -c 'echo $$'", &pid, NULL, NULL, NULL));
  g_strstrip (pid);
  g_assert_cmpint (atoi (pid), >, 0);
  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  test_write_file (job_lock, "");
  content = g_strdup_printf ("{\"job_uri\": \"%s/gone\", \"information\": {\"count\": 1}, "
                             "\"process\": {\"type\": \"local\", \"pid\": %s, \"start_time\": 1}}", job_dir, pid);
  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  test_write_file (lock_file, content);
  first = run_capture (f, &status, "clean", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (first, "r: removed gone@1"));
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  again = run_capture (f, &status, "clean", NULL);
  g_assert_cmpstr (again, ==, "nothing to remove\n");
}

/* Makes @path (relative to the pool r) a temporary file two minutes old. */
static void
plant_old_temporary (Fixture *f, const char *path)
{
  g_autofree char *full = g_build_filename (f->tmp, "r", path, NULL);
  struct timespec times[2] = { { 0, UTIME_OMIT }, { time (NULL) - 120, 0 } };

  test_write_file (full, "{\"job_uri\": \"x\"}");
  g_assert_cmpint (utimensat (AT_FDCWD, full, times, AT_SYMLINK_NOFOLLOW), ==, 0);
}

/* Whether `clean` said it removed the temporary @path of the pool r, and
 * it is gone. */
static void
assert_temporary_removed (Fixture *f, const char *out, const char *path)
{
  g_autofree char *full = g_build_filename (f->tmp, "r", path, NULL);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *said = g_strdup_printf ("r: removed %s, a temporary file left in %s/\n", base, dir);

  g_assert_false (g_file_test (full, G_FILE_TEST_EXISTS));
  g_assert_nonnull (strstr (out, said));
}

/* Temporary files left by writers killed before their rename, in jobs/
 * and in the writer's own folder, are removed by `tessera clean` too, and
 * it says so; a fresh one (a writer under way) stays and is not named.
 * With a --min-age above the pool's, what opening the pool swept is
 * named too. */
static void
test_clean_temporaries (Fixture *f, gconstpointer data)
{
  g_autofree char *own = g_strdup_printf (".tessera-tmp-%u", (unsigned) geteuid ());
  g_autofree char *own_stale = g_build_filename (own, "x@dead.json.Ij56Kl", NULL);
  g_autofree char *own_fresh = g_build_filename (own, "x@busy.json.Mn78Op", NULL);
  const char *fresh[] = { "jobs/busy@1.json.Ef34Gh", own_fresh };
  g_autofree char *out = NULL;
  g_autofree char *again = NULL;
  g_autofree char *later = NULL;
  int status;

  /* The pool and the writer's folder, made by a run. */
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  plant_old_temporary (f, "jobs/dead@1.json.Ab12Cd");
  plant_old_temporary (f, own_stale);
  for (guint i = 0; i < G_N_ELEMENTS (fresh); i++)
    {
      g_autofree char *young = g_build_filename (f->tmp, "r", fresh[i], NULL);
      test_write_file (young, "{\"job_uri\": \"y\"}");
    }

  out = run_capture (f, &status, "clean", NULL);
  g_assert_cmpint (status, ==, 0);
  assert_temporary_removed (f, out, "jobs/dead@1.json.Ab12Cd");
  assert_temporary_removed (f, out, own_stale);
  for (guint i = 0; i < G_N_ELEMENTS (fresh); i++)
    {
      g_autofree char *young = g_build_filename (f->tmp, "r", fresh[i], NULL);
      g_autofree char *young_base = g_path_get_basename (fresh[i]);

      g_assert_true (g_file_test (young, G_FILE_TEST_EXISTS));
      g_assert_null (strstr (out, young_base));
    }
  g_assert_null (strstr (out, "nothing to remove"));
  again = run_capture (f, &status, "clean", NULL);
  g_assert_cmpstr (again, ==, "nothing to remove\n");

  plant_old_temporary (f, "jobs/later@1.json.Qr90St");
  later = run_capture (f, &status, "clean", "--min-age", "300", NULL);
  g_assert_cmpint (status, ==, 0);
  assert_temporary_removed (f, later, "jobs/later@1.json.Qr90St");
}

/* `tessera watch` shows the resources again when one changes. */
static void
test_watch (Fixture *f, gconstpointer data)
{
  /* A zone far from UTC: a local time would show. */
  const char *no_poll[] = { "TESSERA_POLL_INTERVAL", "1000", "TZ", "ZZZ-5:30", NULL };
  g_autoptr(GSubprocess) watch = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "watch", NULL);
  gboolean saw_three = FALSE;
  int status;

  g_autofree char *stamp = read_line (watch, 60);
  g_autoptr(GRegex) utc = g_regex_new ("^— [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z —$", 0, 0, NULL);

  /* The header's time is UTC, in ISO 8601, as a holder's "since". */
  g_assert_nonnull (stamp);
  g_test_message ("%s", stamp);
  g_assert_true (g_regex_match (utc, stamp, 0, NULL));
  for (int i = 0; i < 2; i++)
    g_free (read_line (watch, 60));   /* the rest of the first view: resource, no holder */
  g_free (run_capture (f, &status, "set", "r", "total=3", NULL));
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 12 && !saw_three; i++)
    {
      g_autofree char *line = read_line (watch, 4);
      saw_three = line != NULL && strstr (line, "of 3 free") != NULL;
    }
  g_subprocess_force_exit (watch);
  g_assert_true (saw_three);
}

static void
test_plugins_command (Fixture *f, gconstpointer data)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "plugins", NULL);

  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Plugin folders:"));
  g_assert_nonnull (strstr (out, "countertoken — Counter tokens"));
  g_assert_nonnull (strstr (out, "mutex — Mutexes"));
  g_assert_nonnull (strstr (out, "experimaestro.tokens:CounterTokenLock"));
  g_assert_nonnull (strstr (out, "(not loaded)"));
}

/* No configuration file anywhere: cpu and gpu from the built-in default. */
static void
test_default_configuration (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *cfg = g_build_filename (f->tmp, "no-config", NULL);
  g_autofree char *cpu_path = g_build_filename (state, "tessera", "cpu", NULL);
  JsonArray *resources;
  JsonObject *cpu, *gpu;

  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", cfg, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_DIRS", cfg, TRUE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_CONFIG");
  process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "status", "--json", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  root = json_from_string (out, NULL);
  resources = json_object_get_array_member (json_node_get_object (root), "resources");
  g_assert_cmpuint (json_array_get_length (resources), ==, 2);
  cpu = json_array_get_object_element (resources, 0);
  gpu = json_array_get_object_element (resources, 1);
  g_assert_cmpstr (json_object_get_string_member (cpu, "name"), ==, "cpu");
  g_assert_cmpstr (json_object_get_string_member (cpu, "type"), ==, "countertoken");
  g_assert_cmpint (json_object_get_int_member (cpu, "capacity"), ==, g_get_num_processors ());
  /* Per host: under the state folder, in a folder of this host's own. */
  g_assert_true (g_str_has_prefix (json_object_get_string_member (cpu, "path"), state));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (cpu, "path"), "/cpu"));
  g_assert_cmpstr (json_object_get_string_member (cpu, "path"), !=, cpu_path);
  g_assert_cmpstr (json_object_get_string_member (gpu, "name"), ==, "gpu");
  g_assert_cmpstr (json_object_get_string_member (gpu, "type"), ==, "gpu");
}

/* Messages of the command and of the library, in French. */
static void
test_french (Fixture *f, gconstpointer data)
{
  const char *french[] = { "LC_ALL", "fr_FR.UTF-8", "LANGUAGE", "fr", NULL };
  g_autoptr(GSubprocess) no_command = NULL;
  g_autoptr(GSubprocess) bad_request = NULL;
  g_autofree char *err1 = NULL;
  g_autofree char *err2 = NULL;
  g_autoptr(GSubprocess) usage = NULL;
  g_autofree char *out3 = NULL;
  char *previous = setlocale (LC_ALL, NULL);
  g_autofree char *saved = g_strdup (previous);
  gboolean have_french = setlocale (LC_ALL, "fr_FR.UTF-8") != NULL;

  setlocale (LC_ALL, saved);
  if (!have_french)
    {
      g_test_skip ("the fr_FR.UTF-8 locale is not installed (scripts/bootstrap.sh installs it)");
      return;
    }
  no_command = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r", NULL);
  g_subprocess_communicate_utf8 (no_command, NULL, NULL, NULL, &err1, NULL);
  g_assert_cmpint (test_exit_code (no_command), ==, 64);
  /* One form, "tessera : " as every other French line of the command. */
  g_assert_cmpstr (err1, ==, "tessera : aucune commande à lancer (placez-la après « -- »)\n");

  /* From the countertoken plugin, through the library's domain. */
  bad_request = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r=many", "--", "true", NULL);
  g_subprocess_communicate_utf8 (bad_request, NULL, NULL, NULL, &err2, NULL);
  g_assert_cmpint (test_exit_code (bad_request), ==, 64);
  g_assert_nonnull (strstr (err2, "« many » n’est pas un nombre de jetons"));
  g_assert_true (g_str_has_prefix (err2, "tessera : "));

  /* The usage: GLib's word for it ("Utilisation :", as in `run --help`),
   * its placeholders translated. */
  usage = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "help", NULL);
  g_subprocess_communicate_utf8 (usage, NULL, NULL, &out3, NULL, NULL);
  g_assert_cmpint (test_exit_code (usage), ==, 0);
  g_test_message ("%s", out3);
  g_assert_true (g_str_has_prefix (out3, "Utilisation :\n  tessera [--config FICHIER] COMMANDE [OPTION…]\n"));
}

/* ---------------------------------------------------------------------- */
/* Crashes and wrong exits */

static void
assert_one_message (const char *out)
{
  g_test_message ("%s", out);
  g_assert_true (g_str_has_prefix (out, "tessera: "));
  g_assert_cmpint (strchr (out, '\n') - out, ==, (int) strlen (out) - 1);
}

/* `--need ''` and `--need =2` name no resource: a usage error, no crash. */
static void
test_empty_need (Fixture *f, gconstpointer data)
{
  const char *needs[] = { "", "=2" };

  for (guint i = 0; i < G_N_ELEMENTS (needs); i++)
    {
      int status;
      g_autofree char *out = run_capture (f, &status, "run", "--need", "r", "--need", needs[i], "--", "true", NULL);

      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
    }
}

/* A negative or not-a-number timeout is a usage error, not "for ever";
 * so is what strtod() alone would read (hexadecimal, blanks before). */
static void
test_bad_timeout (Fixture *f, gconstpointer data)
{
  const char *timeouts[] = { "-5", "nan", "-inf", "-0.5", "0x10", " 5", "0X1p3" };

  for (guint i = 0; i < G_N_ELEMENTS (timeouts); i++)
    {
      int status;
      g_autofree char *out = run_capture (f, &status, "run", "--timeout", timeouts[i], "--need", "r", "--", "true", NULL);

      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, timeouts[i]));
    }
}

/* --min-age takes what --timeout takes: a number of seconds, 0 or more. */
static void
test_bad_min_age (Fixture *f, gconstpointer data)
{
  const char *ages[] = { "-1", "nan", "-inf", "inf", "soon", "0x10", " 5" };

  for (guint i = 0; i < G_N_ELEMENTS (ages); i++)
    {
      int status;
      g_autofree char *out = run_capture (f, &status, "clean", "--min-age", ages[i], NULL);

      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, ages[i]));
    }
}

/* A command that cannot be started: 127 when it is not found, 126 when it
 * cannot be executed (as env(1) and nohup(1)), in tessera's own words. */
static void
test_command_not_run (Fixture *f, gconstpointer data)
{
  g_autofree char *script = g_build_filename (f->tmp, "not-executable", NULL);
  g_autofree char *missing = NULL;
  g_autofree char *in_path = NULL;
  g_autofree char *denied = NULL;
  int status;

  missing = run_capture (f, &status, "run", "--need", "r", "--", "/nonexistent/command", NULL);
  g_assert_cmpint (status, ==, 127);
  assert_one_message (missing);
  g_assert_nonnull (strstr (missing, "/nonexistent/command"));
  g_assert_nonnull (strstr (missing, "No such file or directory"));
  g_assert_null (strstr (missing, "gate"));

  in_path = run_capture (f, &status, "run", "--need", "r", "--", "no-such-command-for-tessera", NULL);
  g_assert_cmpint (status, ==, 127);
  assert_one_message (in_path);
  g_assert_cmpstr (in_path, ==, "tessera: no-such-command-for-tessera: command not found\n");

  test_write_file (script, "#!/bin/sh\necho should not run\n");
  g_assert_cmpint (g_chmod (script, 0644), ==, 0);
  denied = run_capture (f, &status, "run", "--need", "r", "--", script, NULL);
  g_assert_cmpint (status, ==, 126);
  assert_one_message (denied);
  g_assert_nonnull (strstr (denied, script));
  g_assert_nonnull (strstr (denied, "Permission denied"));

  /* Nothing is left held. */
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* A full file system while taking the resource is an I/O error: 74, as
 * for `tessera set`. The pool is on a 64 KiB tmpfs in a mount namespace. */
static void
test_enospc (Fixture *f, gconstpointer data)
{
  g_autofree char *mnt = g_build_filename (f->tmp, "small", NULL);
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", mnt);
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = NULL;
  const char *tool = g_getenv ("TESSERA_TOOL");

  g_assert_cmpint (g_mkdir (mnt, 0755), ==, 0);
  test_write_file (f->config, content);
  script = g_strdup_printf ("set -e; mount -t tmpfs -o size=64k tmpfs '%s'; '%s' --config '%s' set r total=1 >/dev/null; "
                            "dd if=/dev/zero of='%s/fill' bs=4k 2>/dev/null || true; "
                            "'%s' --config '%s' run --need r -- echo ran || echo status=$?",
                            mnt, tool, f->config, mnt, tool, f->config);
  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                              "unshare", "--mount", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_cmpstr (out, ==, "status=74\n");
  g_assert_nonnull (strstr (err, "No space left on device"));
}

/* ---------------------------------------------------------------------- */
/* Signals and descriptors, as flock(1) and nohup(1) */

static void
ignore_sighup (gpointer data)
{
  signal (SIGHUP, SIG_IGN);
}

/* `tessera run --need r -- COMMAND…` as under nohup (SIGHUP ignored from
 * the start), with pipes to its stdin and stdout; returns once the
 * command has printed "ready". */
static GSubprocess *
spawn_run_under_nohup (Fixture *f, const char * const *command)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE);
  g_autoptr(GStrvBuilder) argv = g_strv_builder_new ();
  g_auto(GStrv) args = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  GSubprocess *run;

  g_strv_builder_add_many (argv, g_getenv ("TESSERA_TOOL"), "--config", f->config, "run", "--need", "r", "--",
                           NULL);
  g_strv_builder_addv (argv, (const char **) command);
  args = g_strv_builder_end (argv);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_set_child_setup (launcher, ignore_sighup, NULL, NULL);
  run = g_subprocess_launcher_spawnv (launcher, (const char * const *) args, &error);
  g_assert_no_error (error);
  ready = read_line (run, 60);
  g_assert_cmpstr (ready, ==, "ready");
  return run;
}

static int
compare_numbers (gconstpointer a, gconstpointer b)
{
  return atoi (*(const char * const *) a) - atoi (*(const char * const *) b);
}

/* `exec 5<file; tessera run … -- sh -c 'cat <&5'` works, and the command
 * gets no descriptor of tessera's own but the job lock it is told of. */
static void
test_inherited_fd (Fixture *f, gconstpointer data)
{
  g_autofree char *file = g_build_filename (f->tmp, "passed", NULL);
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GPtrArray) fds = g_ptr_array_new_with_free_func (g_free);
  int fd;

  test_write_file (file, "through fd 5\n");
  fd = g_open (file, O_RDONLY, 0);
  g_assert_cmpint (fd, >=, 0);
  g_subprocess_launcher_take_fd (launcher, fd, 5);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                         "run", "--need", "r", "--", "sh", "-c",
                                         "cat <&5; echo \"$TESSERA_JOB_LOCK_FD\"; exec ls /proc/self/fd", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 3);
  g_assert_cmpstr (lines[0], ==, "through fd 5");
  g_assert_cmpint (atoi (lines[1]), >, 5);
  /* ls's own descriptor for the folder is the lowest free one: 3. */
  for (guint i = 2; lines[i] != NULL && *lines[i] != '\0'; i++)
    g_ptr_array_add (fds, g_strdup (lines[i]));
  g_ptr_array_sort (fds, compare_numbers);
  expected = g_strdup_printf ("0 1 2 3 5 %s", lines[1]);
  g_ptr_array_add (fds, NULL);
  {
    g_autofree char *got = g_strjoinv (" ", (char **) fds->pdata);
    g_assert_cmpstr (got, ==, expected);
  }
}

/* Under nohup, SIGHUP to the wrapper neither stops it nor reaches the
 * command: a signal ignored at start stays ignored. */
static void
test_ignored_signal_stays_ignored (Fixture *f, gconstpointer data)
{
  static const char * const command[] = {
    "sh", "-c", "echo ready; read x; kill -HUP $$; echo survived", NULL
  };
  g_autoptr(GSubprocess) run = spawn_run_under_nohup (f, command);
  g_autofree char *after = NULL;

  g_subprocess_send_signal (run, SIGHUP);
  /* The command ends only when told; had the SIGHUP reached it, it would
   * be gone, and its own `kill -HUP $$` shows SIGHUP is ignored there too. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (run), NULL, NULL);
  after = read_line (run, 60);
  g_assert_cmpstr (after, ==, "survived");
  g_assert_cmpint (test_exit_code (run), ==, 0);
}

/* Under nohup, a command that handles SIGHUP itself (a daemon's "reload")
 * gets none from the wrapper: tessera does not catch what it was told to
 * ignore, so it forwards nothing. */
static void
test_ignored_signal_not_forwarded (Fixture *f, gconstpointer data)
{
  static const char * const command[] = {
    "perl", "-e",
    "$| = 1; $SIG{HUP} = sub { print \"got-hup\\n\" }; print \"ready\\n\"; while (<STDIN>) {} print \"done\\n\";",
    NULL
  };
  g_autoptr(GSubprocess) run = spawn_run_under_nohup (f, command);
  g_autofree char *after = NULL;

  g_subprocess_send_signal (run, SIGHUP);
  /* The wrapper forwards in order: a forwarded SIGHUP would reach the
   * command before this SIGTERM, which ends it. */
  g_subprocess_send_signal (run, SIGTERM);
  after = read_line (run, 60);
  g_assert_cmpstr (after, ==, NULL);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGTERM);
}

/* The terminal is a pseudo-terminal whose session the wrapper leads. */
static void
become_terminal_session (gpointer data)
{
  const char *slave = data;
  int fd;

  setsid ();
  fd = open (slave, O_RDWR);
  if (fd >= 0)
    ioctl (fd, TIOCSCTTY, 0);
  /* stdin stays /dev/null: only the controlling terminal is shared. */
}

/* One Ctrl-C, one SIGINT: with stdin not a terminal, the command still
 * shares the wrapper's controlling terminal and foreground process group,
 * so the terminal's SIGINT reaches it; the wrapper does not add another.
 * perl counts each delivery (a shell's trap merges them). */
static void
test_one_ctrl_c_one_sigint (Fixture *f, gconstpointer data)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *count = NULL;
  char *slave;
  int master = posix_openpt (O_RDWR | O_NOCTTY);

  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  slave = ptsname (master);
  g_assert_nonnull (slave);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_set_child_setup (launcher, become_terminal_session, g_strdup (slave), g_free);
  run = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                     "run", "--need", "r", "--", "perl", "-e",
                                     "$| = 1; $n = 0; $SIG{INT} = sub { $n++; print \"int\\n\" }; "
                                     "$SIG{TERM} = sub { print \"count $n\\n\"; exit 0 }; "
                                     "print \"ready\\n\"; sleep 1 while 1;", NULL);
  g_assert_no_error (error);
  ready = read_line (run, 60);
  g_assert_cmpstr (ready, ==, "ready");
  g_assert_cmpint (write (master, "\003", 1), ==, 1);   /* Ctrl-C */
  first = read_line (run, 60);
  g_assert_cmpstr (first, ==, "int");
  /* A forwarded copy would follow within this second. */
  second = read_line (run, 1.0);
  g_assert_cmpstr (second, ==, NULL);
  g_subprocess_send_signal (run, SIGTERM);
  count = read_line (run, 60);
  g_assert_cmpstr (count, ==, "count 1");
  g_assert_cmpint (test_exit_code (run), ==, 0);
  close (master);
}

/* With stderr not a terminal (a CI log), one line says when the wait
 * starts, what is awaited and who holds it; Ctrl-C then ends the wait at
 * once, not at the next poll. */
static void
test_waiting_line_and_ctrl_c (Fixture *f, gconstpointer data)
{
  g_autofree char *tsan_options = NULL;
  const char *env[] = { "TESSERA_POLL_INTERVAL", "1000", "TSAN_OPTIONS", NULL, NULL };
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--name", "holder", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_autofree char *ready = read_line (holder, 60);
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *line = NULL;
  g_autofree char *more = NULL;
  gint64 start;
  int status;

  g_assert_cmpstr (ready, ==, "ready");
  /* ThreadSanitizer sleeps before a process exits (to catch races at
   * exit; a tenth of a second in the tsan setup): not what is measured. */
  tsan_options = g_strdup_printf ("%s:atexit_sleep_ms=0", g_getenv ("TSAN_OPTIONS") ? g_getenv ("TSAN_OPTIONS") : "");
  env[3] = tsan_options;
  waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r", "--", "true", NULL);
  line = read_error_line (waiter, 60);
  g_assert_nonnull (line);
  /* What is awaited, the type's reason, then who holds it. */
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for r (Token r has fewer than 1 free), held by holder@"));
  g_assert_null (strchr (line, '\r'));
  g_assert_null (strchr (line, '\033'));

  start = g_get_monotonic_time ();
  g_subprocess_send_signal (waiter, SIGINT);
  status = test_exit_code (waiter);
  g_test_message ("ended %.3f s after SIGINT", (g_get_monotonic_time () - start) / 1e6);
  g_assert_cmpint (status, ==, 128 + SIGINT);
  /* Without the cancel, the wait would go on to its next report (a
   * minute: stderr is not a terminal) or poll (1000 s here): ten seconds
   * tell the two apart on a loaded machine, under sanitizers too. */
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
  more = read_error_line (waiter, 1.0);
  g_assert_null (more);

  let_go (holder);
  /* The interrupted waiter left nothing held. */
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* Whether @process ends within @timeout seconds (GLib reaps it). */
static gboolean
ends_within (GSubprocess *process, double timeout)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (g_subprocess_get_identifier (process) != NULL && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  return g_subprocess_get_identifier (process) == NULL;
}

/* A peer that keeps the pool's ipc.lock, taken with the helper's @how
 * ("flock" or "lockf") once the pool exists. */
static Helper *
stuck_peer_new (Fixture *f, const char *ipc, const char *how)
{
  Helper *peer;
  int status;

  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  peer = helper_spawn (NULL, how, ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  return peer;
}

/* `run --no-wait` behind it, its command to make @mark: whether it ended
 * within 30 s (once the peer is let go, the rest is checked). */
static GSubprocess *
no_wait_behind (Fixture *f, const char *mark, gboolean *ended)
{
  GSubprocess *no_wait = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--no-wait", "--need", "r",
                                        "--", "touch", mark, NULL);

  *ended = ends_within (no_wait, 30);
  return no_wait;
}

/* It ended while the peer kept the lock: 75, naming the lock, its
 * command never run. */
static void
check_no_wait_answered (GSubprocess *no_wait, gboolean ended, const char *ipc, const char *mark)
{
  g_autofree char *said = NULL;

  g_assert_true (ended);
  g_assert_cmpint (test_exit_code (no_wait), ==, 75);
  said = read_error_line (no_wait, 10);
  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, ipc));
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
}

/* A peer stuck in its critical section keeps ipc.lock: `--no-wait` still
 * answers (75, saying why), Ctrl-C still ends a waiting run, which then
 * never runs its command, and `status` says what it waits for (and who
 * keeps it). Before, all waited for the peer without a word. */
static void
test_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autoptr(Helper) peer = stuck_peer_new (f, ipc, "flock");
  g_autofree char *holder = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_autoptr(GSubprocess) no_wait = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) status_command = NULL;
  g_autofree char *status_said = NULL;
  gboolean no_wait_ended, waiter_ended;

  no_wait = no_wait_behind (f, mark, &no_wait_ended);
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run", "--need", "r",
                          "--", "touch", mark, NULL);
  g_usleep (300 * 1000);   /* let it reach ipc.lock (not needed for correctness) */
  g_subprocess_send_signal (waiter, SIGINT);
  waiter_ended = ends_within (waiter, 30);
  status_command = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                                  "status", NULL);
  status_said = read_error_line (status_command, 30);
  /* Let the peer go in any case, so a failing run still ends. */
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);

  check_no_wait_answered (no_wait, no_wait_ended, ipc, mark);
  g_assert_true (waiter_ended);
  g_assert_cmpint (test_exit_code (waiter), ==, 128 + SIGINT);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_assert_nonnull (status_said);
  g_assert_nonnull (strstr (status_said, ipc));
  g_assert_nonnull (strstr (status_said, holder));
  g_assert_cmpint (test_exit_code (status_command), ==, 0);
}

/* The pool on btrfs, whose stat() names another device than /proc/locks
 * does (a subvolume's own, and not the file system's): the note of a
 * command behind a stuck peer still names the peer's pid. Root mounts a
 * btrfs image (CI is root). */
static void
test_behind_stuck_ipc_lock_btrfs (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->tmp, "r", NULL);
  g_autofree char *image = g_build_filename (f->tmp, "btrfs.img", NULL);
  g_autofree char *ipc = g_build_filename (pool, "ipc.lock", NULL);
  g_autoptr(Helper) peer = NULL;
  g_autoptr(GSubprocess) status_command = NULL;
  g_autofree char *holder = NULL;
  g_autofree char *said = NULL;
  struct stat st;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  test_run_or_fail ((const char *[]) { "truncate", "-s", "128M", image, NULL });
  test_run_or_fail ((const char *[]) { "mkfs.btrfs", "-q", image, NULL });
  test_run_or_fail ((const char *[]) { "mount", "-o", "loop", image, pool, NULL });
  peer = stuck_peer_new (f, ipc, "flock");
  holder = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_assert_cmpint (stat (ipc, &st), ==, 0);
  g_test_message ("ipc.lock: device %u:%u by stat()", major (st.st_dev), minor (st.st_dev));

  status_command = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                                  "status", NULL);
  said = read_error_line (status_command, 30);
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  g_assert_cmpint (test_exit_code (status_command), ==, 0);
  test_run_or_fail ((const char *[]) { "umount", pool, NULL });

  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, ipc));
  g_assert_nonnull (strstr (said, holder));
}

/* The same behind a seed-era peer that locks ipc.lock with lockf() only
 * (Tessera, holding the flock, then polls for the fcntl lock, asleep
 * rather than in a lock): `--no-wait` still answers, naming the lock. */
static void
test_behind_stuck_lockf_peer (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autoptr(Helper) peer = stuck_peer_new (f, ipc, "lockf");
  g_autoptr(GSubprocess) no_wait = NULL;
  gboolean ended;

  no_wait = no_wait_behind (f, mark, &ended);
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  check_no_wait_answered (no_wait, ended, ipc, mark);
}

/* @run waits behind @peer, which keeps @ipc, where a signal should end
 * it: it says so, and Ctrl-C ends it (128 + SIGINT, naming the lock);
 * what it held is then taken back by the next run. The peer is let go. */
static void
interrupt_behind_peer (Fixture *f, GSubprocess *run, Helper *peer, const char *ipc)
{
  g_autofree char *kept_by = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_autofree char *note = read_error_line (run, 60);
  g_autofree char *last = NULL;
  gboolean ended;
  int status;

  g_subprocess_send_signal (run, SIGINT);
  ended = ends_within (run, 30);
  /* Let the peer go in any case, so a failing run still ends. */
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);

  g_assert_nonnull (note);
  g_assert_nonnull (strstr (note, ipc));
  g_assert_nonnull (strstr (note, kept_by));
  g_assert_true (ended);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGINT);
  last = read_error_line (run, 10);
  g_assert_nonnull (last);
  g_assert_nonnull (strstr (last, ipc));
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* A peer stuck in its critical section when the command ends: the run,
 * left to release behind it, says so once it has waited a while, and
 * Ctrl-C ends it there (its command is gone, so what it still holds is a
 * dead holder's, which the next run takes back). Before, it waited for
 * the peer without a word and no signal ended it. */
static void
test_release_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE |
                   G_SUBPROCESS_FLAGS_STDERR_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_autofree char *ready = read_line (holder, 60);
  g_autoptr(Helper) peer = NULL;

  g_assert_cmpstr (ready, ==, "ready");
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  interrupt_behind_peer (f, holder, peer, ipc);
}

/* The same while a `--no-wait` run names its command in its lock files
 * (after it acquired, before the command's gate opens): held at pause
 * point "record-process" until the peer keeps ipc.lock. The run says so,
 * Ctrl-C ends it and the command never runs. Before, the run was deaf
 * there (the command, at its gate, took the signal). */
static void
test_naming_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autofree char *reached = g_build_filename (pause_dir, "record-process.reached", NULL);
  g_autofree char *go = g_build_filename (pause_dir, "record-process.go", NULL);
  const char *env[] = { "TESSERA_PAUSE_AT", "record-process", "TESSERA_PAUSE_DIR", pause_dir, NULL };
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(Helper) peer = NULL;
  int status;

  g_assert_cmpint (g_mkdir (pause_dir, 0700), ==, 0);
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  run = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--no-wait", "--need", "r",
                       "--", "touch", mark, NULL);
  test_wait_for_file (reached, 60);
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  g_assert_true (g_file_set_contents (go, "", 0, NULL));
  interrupt_behind_peer (f, run, peer, ipc);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
}

/* A live experimaestro-style holder (this process's pid, no start time,
 * so judged by its job lock) of @folder/task: its job lock @job_lock held
 * (an OFD lock of this process, whose descriptor is returned) and its
 * lock file @lock_file recording @folder's device and inode. */
static int
hold_in_recorded_folder (const char *folder, const char *job_lock, const char *lock_file)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  g_autofree char *text = NULL;
  struct stat st;
  int fd;

  fd = open (job_lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_OFD_SETLK, &fl), ==, 0);
  g_assert_cmpint (stat (folder, &st), ==, 0);
  text = g_strdup_printf ("{\"job_uri\": \"%s/task\", \"information\": {\"count\": 1}, \"process\": "
                          "{\"type\": \"local\", \"pid\": %d, \"job_folder\": {\"dev\": %" G_GUINT64_FORMAT
                          ", \"ino\": %" G_GUINT64_FORMAT "}}}", folder, (int) getpid (), (guint64) st.st_dev,
                          (guint64) st.st_ino);
  test_write_file (lock_file, text);
  return fd;
}

/* Whoever can write the job folders' root may swap a link for a live
 * holder's recorded job folder while a judge looks at it: the folder must
 * be looked at once, its job lock probed in the very folder whose device
 * and inode the spec recorded. Here the folder is a link to an empty one
 * when the judge starts (no job lock there) and is put back (the recorded
 * one, its job lock held) at pause point "job-folder-check": `clean
 * --min-age 0` must keep the holder (an experimaestro spec: a pid with no
 * start time, judged by its job lock). */
static void
test_job_folder_swapped_while_judged (Fixture *f, gconstpointer data)
{
  g_autofree char *root = g_build_filename (f->tmp, "xp", NULL);
  g_autofree char *folder = g_build_filename (root, "job", NULL);
  g_autofree char *aside = g_build_filename (root, "job.real", NULL);
  g_autofree char *empty = g_build_filename (root, "empty", NULL);
  g_autofree char *job_lock = g_build_filename (folder, "task.lock", NULL);
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "xp@1.json", NULL);
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autofree char *reached = g_build_filename (pause_dir, "job-folder-check.reached", NULL);
  g_autofree char *go = g_build_filename (pause_dir, "job-folder-check.go", NULL);
  const char *env[] = { "TESSERA_PAUSE_AT", "job-folder-check", "TESSERA_PAUSE_DIR", pause_dir, NULL };
  g_autoptr(GSubprocess) clean = NULL;
  int status, fd;

  g_assert_cmpint (g_mkdir (pause_dir, 0700), ==, 0);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (empty, 0755), ==, 0);
  fd = hold_in_recorded_folder (folder, job_lock, lock_file);

  /* The swap: a link to the empty folder while the judge starts... */
  g_assert_cmpint (rename (folder, aside), ==, 0);
  g_assert_cmpint (symlink (empty, folder), ==, 0);
  clean = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_SILENCE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                         "clean", "--min-age", "0", NULL);
  test_wait_for_file (reached, 60);
  /* ...and the recorded folder back in its place at the pause. */
  g_assert_cmpint (g_unlink (folder), ==, 0);
  g_assert_cmpint (rename (aside, folder), ==, 0);
  g_assert_true (g_file_set_contents (go, "", 0, NULL));
  g_assert_cmpint (test_exit_code (clean), ==, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  close (fd);
}

/* Whoever can rename in the job folders' root (a group-writable
 * TESSERA_JOB_FOLDERS, or a member who owns runs/) may move a live
 * holder's job folder away and put a folder of its own, with a free job
 * lock, in its place: that is not the folder the holder's spec recorded
 * (device and inode), so its free job lock proves nothing and the holder
 * counts; `clean --min-age 0` keeps it. */
static void
test_job_folder_replaced (Fixture *f, gconstpointer data)
{
  g_autofree char *root = g_build_filename (f->tmp, "xp", NULL);
  g_autofree char *folder = g_build_filename (root, "job", NULL);
  g_autofree char *aside = g_build_filename (root, "job.real", NULL);
  g_autofree char *job_lock = g_build_filename (folder, "task.lock", NULL);
  g_autofree char *planted = NULL;
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "xp@1.json", NULL);
  g_autofree char *out = NULL;
  int status, fd;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  fd = hold_in_recorded_folder (folder, job_lock, lock_file);

  /* The swap: the real folder moved away, a folder with a free job lock
   * in its place. */
  g_assert_cmpint (rename (folder, aside), ==, 0);
  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  planted = g_build_filename (folder, "task.lock", NULL);
  test_write_file (planted, "");
  out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
  g_test_message ("clean: %d: %s", status, out);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", "r", NULL);
  g_test_message ("status: %d: %s", status, out);
  g_assert_nonnull (strstr (out, "0 of 1 free"));
  close (fd);
}

/* Whether some process holds the job lock @path, as a judge elsewhere
 * probes it (an fcntl or a flock lock). */
static gboolean
job_lock_is_held (const char *path)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  gboolean held;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_OFD_GETLK, &fl), ==, 0);
  held = fl.l_type != F_UNLCK || flock (fd, LOCK_SH | LOCK_NB) < 0;
  close (fd);
  return held;
}

/* A run's job lock is held from the moment it can be seen (issue 38,
 * review finding 5): held at pause point "job-lock-created", where its
 * job lock has just appeared in its job folder, the run is judged from
 * another process, which finds the lock held, and `tessera clean
 * --min-age 0` keeps its job folder; the run then goes on and its
 * command runs. Both ways a run holds its job: forking its command first
 * (it may wait) and, under ipc.lock, as it acquires (--no-wait). Fails
 * before: the job lock is created free and locked after, so clean
 * removed the job folder under the run (and a judge found it free). */
static void
test_job_lock_held_when_seen (Fixture *f, gconstpointer data)
{
  const char *wait_args[] = { "--timeout", "60" };
  const char *no_wait_args[] = { "--no-wait", NULL };
  const char **modes[] = { wait_args, no_wait_args };
  g_autofree char *runs = g_strdup_printf ("%s/r/runs/%u", f->tmp, (unsigned) getuid ());
  int status;

  /* Makes the pool and its runs folder. */
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autofree char *pause_dir = g_strdup_printf ("%s/pause-%u", f->tmp, m);
      g_autofree char *reached = g_build_filename (pause_dir, "job-lock-created.reached", NULL);
      g_autofree char *go = g_build_filename (pause_dir, "job-lock-created.go", NULL);
      g_autofree char *mark = g_strdup_printf ("%s/ran-%u", f->tmp, m);
      const char *env[] = { "TESSERA_PAUSE_AT", "job-lock-created", "TESSERA_PAUSE_DIR", pause_dir, NULL };
      g_autoptr(GSubprocess) run = NULL;
      g_autoptr(GDir) dir = NULL;
      g_autofree char *job_dir = NULL;
      g_autofree char *job_lock = NULL;
      g_autofree char *out = NULL;
      const char *name;

      g_assert_cmpint (g_mkdir (pause_dir, 0700), ==, 0);
      /* Its output silenced: a run left at its pause point by a failed
       * test must not keep the test's output open (meson waits for it). */
      if (modes[m][1] != NULL)
        run = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run",
                             modes[m][0], modes[m][1], "--need", "r", "--", "touch", mark, NULL);
      else
        run = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run",
                             modes[m][0], "--need", "r", "--", "touch", mark, NULL);
      test_wait_for_file (reached, 60);

      /* The run's job folder, the only one: each run removes its own. */
      dir = g_dir_open (runs, 0, NULL);
      g_assert_nonnull (dir);
      name = g_dir_read_name (dir);
      g_assert_nonnull (name);
      job_dir = g_build_filename (runs, name, NULL);
      g_assert_null (g_dir_read_name (dir));
      job_lock = g_build_filename (job_dir, "touch.lock", NULL);
      g_assert_true (g_file_test (job_lock, G_FILE_TEST_EXISTS));

      /* A run that does not wait holds its job under ipc.lock, which
       * clean waits for: only the run that may wait is cleaned here. */
      if (modes[m][1] != NULL)
        {
          out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
          g_test_message ("clean: %d: %s", status, out);
          g_assert_cmpint (status, ==, 0);
          g_assert_true (g_file_test (job_dir, G_FILE_TEST_IS_DIR));
        }
      g_assert_true (job_lock_is_held (job_lock));

      g_assert_true (g_file_set_contents (go, "", 0, NULL));
      g_assert_true (g_subprocess_wait (run, NULL, NULL));
      g_assert_cmpint (test_exit_code (run), ==, 0);
      g_assert_true (g_file_test (mark, G_FILE_TEST_EXISTS));
    }
}

/* ---------------------------------------------------------------------- */
/* Output and habits */

/* Runs `tessera ARGS…` as typed (no --config added); output and stderr. */
static char *
run_plain (Fixture *f, int *status, const char * const *argv)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *nowhere = g_build_filename (f->tmp, "no-config", NULL);
  char *out = NULL;

  g_ptr_array_add (args, (gpointer) g_getenv ("TESSERA_TOOL"));
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, (gpointer) argv[i]);
  g_ptr_array_add (args, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", nowhere, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_DIRS", nowhere, TRUE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_CONFIG");
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  *status = test_exit_code (process);
  g_test_message ("%s", out);
  return out;
}

/* Global options after the subcommand; `tessera help [CMD]`; usage lines
 * that name the subcommand. */
static void
test_command_line_habits (Fixture *f, gconstpointer data)
{
  const char *run_config[] = { "run", "--config", f->config, "--need", "r", "--", "true", NULL };
  const char *status_config[] = { "status", "--json", "--config", f->config, NULL };
  const char *help[] = { "help", NULL };
  const char *help_run[] = { "help", "run", NULL };
  const char *run_help[] = { "run", "--help", NULL };
  const char *help_nothing[] = { "help", "nothing", NULL };
  g_autofree char *out1 = NULL, *out2 = NULL, *out3 = NULL, *out4 = NULL, *out5 = NULL, *out6 = NULL;
  int status;

  out1 = run_plain (f, &status, run_config);
  g_assert_cmpint (status, ==, 0);
  out2 = run_plain (f, &status, status_config);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out2, "\"name\" : \"r\""));

  out3 = run_plain (f, &status, help);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out3, "tessera [--config FILE] COMMAND [OPTION…]"));
  g_assert_nonnull (strstr (out3, "  help "));

  out4 = run_plain (f, &status, help_run);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out4, "tessera run [OPTION…]"));
  g_assert_nonnull (strstr (out4, "--need"));
  g_assert_nonnull (strstr (out4, "--config"));

  out5 = run_plain (f, &status, run_help);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out5, ==, out4);

  out6 = run_plain (f, &status, help_nothing);
  g_assert_cmpint (status, ==, 64);
  g_assert_true (g_str_has_prefix (out6, "tessera: unknown command “nothing”\n"));
}

static char *run_capture_env (Fixture *f, const char * const *env, int *status, const char *first, ...);

/* A bad option, before the command or after it, says the same in one
 * line, then where to look (no whole usage), and exits 64. */
static void
test_one_voice_for_bad_options (Fixture *f, gconstpointer data)
{
  g_autofree char *in_run = NULL, *global = NULL, *command = NULL;
  int status;

  in_run = run_capture (f, &status, "run", "--bogus", "--need", "r", "--", "true", NULL);
  g_test_message ("%s", in_run);
  g_assert_cmpint (status, ==, 64);
  global = run_capture (f, &status, "--bogus", "status", NULL);
  g_test_message ("%s", global);
  g_assert_cmpint (status, ==, 64);
  command = run_capture (f, &status, "nothing", NULL);
  g_test_message ("%s", command);
  g_assert_cmpint (status, ==, 64);

  g_assert_cmpstr (in_run, ==, "tessera: Unknown option --bogus\nTry “tessera run --help”.\n");
  g_assert_cmpstr (global, ==, "tessera: Unknown option --bogus\nTry “tessera --help”.\n");
  g_assert_cmpstr (command, ==, "tessera: unknown command “nothing”\nTry “tessera --help”.\n");
}

/* Without a UTF-8 locale (cron, `su -`), quotes are ASCII ones, never
 * the '?' a conversion to ASCII leaves. */
static void
test_ascii_quotes_without_utf8 (Fixture *f, gconstpointer data)
{
  const char *c_locale[] = { "LC_ALL", "C", "LANG", "C", "LANGUAGE", "", NULL };
  g_autofree char *out = NULL, *help = NULL;
  int status;

  out = run_capture_env (f, c_locale, &status, "status", "nothing", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_cmpstr (out, ==, "tessera: no resource named \"nothing\" (see \"tessera status\")\n");

  help = run_capture_env (f, c_locale, &status, "help", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strchr (help, '?'));
  g_assert_nonnull (strstr (help, "\"tessera COMMAND --help\" tells more"));
  g_assert_nonnull (strstr (help, "COMMAND [OPTION...]"));
}

/* `tessera --version`: the version, the pool protocol it follows and
 * the build (two builds of one version differ); `--help` lists it. */
static void
test_version (Fixture *f, gconstpointer data)
{
  g_autofree char *pattern = NULL;
  g_autoptr(GRegex) regex = NULL;
  g_autofree char *out = NULL, *help = NULL;
  int status;

  out = run_capture (f, &status, "--version", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  pattern = g_strdup_printf ("^tessera %s \\(pool protocol [0-9]+, build [^ ()]+\\)\n$",
                             g_getenv ("TESSERA_VERSION"));
  regex = g_regex_new (pattern, 0, 0, NULL);
  g_assert_true (g_regex_match (regex, out, 0, NULL));

  help = run_capture (f, &status, "--help", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (help, "--version"));
}

/* The man page has examples, says --version, and describes run as a list
 * of items, not one long paragraph. */
static void
test_man_page (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "tessera.1", NULL);
  g_autofree char *text = NULL;
  g_autofree char *run = NULL;
  const char *start, *end;
  guint items = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\n.SH EXAMPLES\n"));
  g_assert_nonnull (strstr (text, "\n.B tessera \\-\\-version\n"));           /* SYNOPSIS */
  g_assert_nonnull (strstr (text, "\n.TP\n.B \\-\\-version\n"));              /* OPTIONS */
  /* g_error(), not g_assert_nonnull(), which cppcheck cannot know aborts */
  if ((start = strstr (text, "\n.SH DESCRIPTION\n")) == NULL ||
      (start = strstr (start, "\n.TP\n.B run\n")) == NULL ||
      (end = strstr (start + 1, "\n.TP\n.B status")) == NULL)
    g_error ("tessera.1 has no DESCRIPTION with run then status");
  run = g_strndup (start, end - start);
  for (const char *p = run; (p = strstr (p, "\n.IP ")) != NULL; p++)
    items++;
  g_assert_cmpuint (items, >=, 5);
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* `tessera set` refuses a setting the type does not have: a typo, or a
 * total for a mutex, changes nothing and says so. */
static void
test_set_refuses_unknown (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                              "[resource m]\ntype=mutex\npath=%s/m\n", f->tmp, f->tmp);
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  g_autofree char *typo = NULL, *mutex = NULL, *good = NULL, *text = NULL;
  int status;

  test_write_file (f->config, content);
  typo = run_capture (f, &status, "set", "r", "totl=16", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (typo);
  g_assert_nonnull (strstr (typo, "totl"));
  g_assert_nonnull (strstr (typo, "total"));
  g_assert_true (g_file_get_contents (informations, &text, NULL, NULL));
  g_assert_null (strstr (text, "totl"));

  mutex = run_capture (f, &status, "set", "m", "total=3", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (mutex);
  g_assert_nonnull (strstr (mutex, "m (mutex)"));

  good = run_capture (f, &status, "set", "r", "total=16", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (good, ==, "r: {\"total\":16,\"tessera_protocol\":2}\n");
}

/* `tessera set g devices=…` reads the configuration file's syntax
 * (INDEX[:MEMORY_MIB[:UUID]];…), as the type reads its devices= setting,
 * as well as JSON; what the type cannot read changes nothing. */
static void
test_set_devices_as_configured (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s/g\ndevices=0\n", f->tmp);
  g_autofree char *informations = g_build_filename (f->tmp, "g", "informations.json", NULL);
  g_autofree char *three = NULL, *uuid = NULL, *json = NULL, *bad = NULL, *shown = NULL;
  g_autofree char *before = NULL, *after = NULL;
  int status;

  test_write_file (f->config, content);
  g_free (run_capture (f, &status, "run", "--need", "g", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);

  three = run_capture (f, &status, "set", "g", "devices=0;1;2", NULL);
  g_test_message ("%s", three);
  g_assert_cmpint (status, ==, 0);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 3 of 3 free\n"));

  uuid = run_capture (f, &status, "set", "g", "devices=0:16384:GPU-aaaa;1", NULL);
  g_test_message ("%s", uuid);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (uuid, "\"uuid\":\"GPU-aaaa\""));
  g_assert_nonnull (strstr (uuid, "\"memory\":16384"));
  g_free (shown);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 2 of 2 free\n"));

  json = run_capture (f, &status, "set", "g", "devices=[{\"index\": 4}]", NULL);
  g_test_message ("%s", json);
  g_assert_cmpint (status, ==, 0);
  g_free (shown);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 1 of 1 free\n"));

  g_assert_true (g_file_get_contents (informations, &before, NULL, NULL));
  bad = run_capture (f, &status, "set", "g", "devices=0;x", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (bad);
  g_assert_nonnull (strstr (bad, "INDEX[:MEMORY_MIB[:UUID]]"));
  g_assert_true (g_file_get_contents (informations, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);
}

/* A mutex held shared says by how many, not "0 of 1 free"; held
 * exclusively, it is 0 of 1 free. */
static void
test_status_mutex_shared (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource m]\ntype=mutex\npath=%s/m\n", f->tmp);
  g_autoptr(GSubprocess) first = NULL, second = NULL, exclusive = NULL;
  g_autofree char *ready1 = NULL, *ready2 = NULL, *ready3 = NULL;
  g_autofree char *one = NULL, *two = NULL, *held = NULL, *json = NULL;
  int status;

  test_write_file (f->config, content);
  first = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                         "run", "--need", "m=shared", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready1 = read_line (first, 60);
  g_assert_cmpstr (ready1, ==, "ready");
  one = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", one);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (one, "m (mutex): shared by 1\n"));

  second = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "m=shared", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready2 = read_line (second, 60);
  g_assert_cmpstr (ready2, ==, "ready");
  two = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", two);
  g_assert_true (g_str_has_prefix (two, "m (mutex): shared by 2\n"));
  json = run_capture (f, &status, "status", "--json", NULL);
  g_assert_nonnull (strstr (json, "\"usage\" : \"shared by 2\""));
  let_go (first);
  let_go (second);

  exclusive = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                             "run", "--need", "m", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready3 = read_line (exclusive, 60);
  g_assert_cmpstr (ready3, ==, "ready");
  held = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", held);
  g_assert_true (g_str_has_prefix (held, "m (mutex): 0 of 1 free\n"));
  let_go (exclusive);
}

/* Two resources on one folder reached through two paths (a symbolic
 * link): one pool counted twice, a configuration error. */
static void
test_config_same_folder_link (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *link = g_build_filename (f->tmp, "link", NULL);
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=1\n"
                                              "[resource s]\ntype=countertoken\npath=%s\ntotal=1\n", real, link);
  g_autofree char *out = NULL;
  int status;

  g_assert_cmpint (g_mkdir (real, 0755), ==, 0);
  g_assert_cmpint (symlink (real, link), ==, 0);
  test_write_file (f->config, content);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (out);
  g_assert_nonnull (strstr (out, f->config));
  g_assert_nonnull (strstr (out, "[resource s] path"));
  g_assert_nonnull (strstr (out, "[resource r]"));
}

/* No total and no informations.json yet: nothing says how big the pool
 * is (78); joining an existing pool without a total is fine. */
static void
test_config_missing_total (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n", f->tmp);
  g_autofree char *refused = NULL, *joined = NULL;
  g_autoptr(JsonNode) root = NULL;
  int status;

  test_write_file (f->config, content);
  refused = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (refused);
  g_assert_nonnull (strstr (refused, f->config));
  g_assert_nonnull (strstr (refused, "[resource r] total"));

  /* Set up by someone else, with 3: the configuration joins it. */
  g_free (content);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=3\n", f->tmp);
  test_write_file (f->config, content);
  /* (status only looks: a run sets the pool up) */
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (content);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n", f->tmp);
  test_write_file (f->config, content);
  joined = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (joined, ==, "r (countertoken): 3 of 3 free\n  no holder\n");
}

/* informations.json wins once it exists; status says so in one line
 * when the configuration says otherwise, once per resource; a run does
 * not (it would be in every job's log). */
static void
test_config_differs_notice (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL, *ran = NULL;
  int status;

  g_free (run_capture (f, &status, "set", "r", "total=2", NULL));
  g_assert_cmpint (status, ==, 0);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "r (countertoken): 2 of 2 free\n"));
  g_assert_nonnull (strstr (out, "tessera: r: informations.json says total=2, the configuration total=1; "
                                 "informations.json wins"));
  g_assert_null (strstr (strstr (out, "informations.json wins") + 1, "informations.json wins"));
  ran = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (ran, ==, "");
}

/* Texts json-glib reads beyond strict JSON, in a file of r's (freed with
 * g_ptr_array_unref): nesting 200 000 deep after a comment or a
 * single-quoted string (each crashed every reader: the depth guard took
 * it for a string), and a lock file with a comment or in single quotes. */
static GPtrArray *
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
static void
assert_json_lists_unreadable (Fixture *f, int expected)
{
  g_autoptr(GSubprocess) process = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                  G_SUBPROCESS_FLAGS_STDERR_SILENCE, "status", "--json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  JsonArray *resources;
  JsonObject *r;

  g_subprocess_communicate_utf8 (process, NULL, NULL, &json, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, expected);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  resources = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "resources");
  g_assert_cmpuint (json_array_get_length (resources), ==, 1);
  r = json_array_get_object_element (resources, 0);
  g_assert_cmpstr (json_object_get_string_member (r, "name"), ==, "r");
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, -1);
  g_assert_nonnull (json_object_get_string_member_with_default (r, "error", NULL));
}

/* A broken informations.json is not a pool of 0: say which file, why,
 * and how to fix it (78). */
static void
test_broken_informations (Fixture *f, gconstpointer data)
{
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  const char *broken[] = { "{\"total\": ", "{\"total\": \"eight\"}", "[1, 2]",
                           /* what the type refuses: never a pool of 0 that waits for ever */
                           "{\"total\": \"3\"}", "{\"totl\": 3}", "{}", "{\"total\": 2147483648}",
                           /* not strict JSON, which json-glib would read */
                           "{'total': 3}", "/* c */ {\"total\": 3}", "{\"total\": 3} /* c */", "{\"total\": 03}" };
  g_autoptr(GPtrArray) texts = not_strict_lock_files ();
  int status;

  /* And the nesting that crashed every reader. */
  g_ptr_array_set_size (texts, 2);
  for (guint i = 0; i < G_N_ELEMENTS (broken); i++)
    g_ptr_array_add (texts, g_strdup (broken[i]));
  g_free (run_capture (f, &status, "status", NULL));
  g_assert_cmpint (status, ==, 0);
  for (guint i = 0; i < texts->len; i++)
    {
      g_autofree char *out = NULL, *ran = NULL;

      test_write_file (informations, g_ptr_array_index (texts, i));
      out = run_capture (f, &status, "status", NULL);
      g_assert_cmpint (status, ==, 78);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, informations));
      g_assert_nonnull (strstr (out, "tessera set r total="));
      ran = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
      g_assert_cmpint (status, ==, 78);
      g_assert_cmpstr (ran, ==, out);
      assert_json_lists_unreadable (f, 78);
    }
  /* The fix it names works. */
  g_free (run_capture (f, &status, "set", "r", "total=1", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* A value out of its setting's range says the range, not a C type name
 * ("gint64 expected"); a total's is said from 0 (-1 means "not given"). */
static void
test_config_range_said (Fixture *f, gconstpointer data)
{
  const char *cases[][2] = {
    { "total=-5", "must be an integer from 0 to 2147483647" },
    { "total=three", "must be an integer from 0 to 2147483647" },
    { "total=1\npatience=-1", "expected: a number, 0 or more" },
    { "total=1\nmin-age=soon", "expected: a number, 0 or more" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n%s\n", f->tmp,
                                                  cases[i][0]);
      g_autofree char *out = NULL;
      int status;

      test_write_file (f->config, content);
      out = run_capture (f, &status, "status", NULL);
      g_assert_cmpint (status, ==, 78);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, cases[i][1]));
      g_assert_null (strstr (out, "gint64"));
      g_assert_null (strstr (out, "gdouble"));
    }
}

/* A holder counted from a lock file that cannot be read in full has no
 * known time: "since ?" (JSON null), never 1970. */
static void
test_status_unknown_since (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = g_build_filename (f->tmp, "r", "jobs", "neg@1.json", NULL);
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  test_write_file (bad, "{\"job_uri\": \"/x/neg\", \"information\": {\"count\": -1}, "
                        "\"process\": {\"type\": \"local\", \"pid\": 1, \"start_time\": 1}}");
  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "since ?"));
  g_assert_null (strstr (out, "1970"));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", "--json", NULL);
  g_assert_nonnull (strstr (out, "\"since\" : null"));
}

/* A pool folder that is a file is no broken informations.json: status
 * and run say what is wrong with the folder (74), and do not send the
 * user to `tessera set`, which cannot fix it. */
static void
test_pool_folder_is_a_file (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->tmp, "r", NULL);
  const char *commands[] = { "status", "run" };
  int status;

  test_write_file (pool, "not a folder\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *out = g_str_equal (commands[i], "run")
                             ? run_capture (f, &status, "run", "--need", "r", "--", "true", NULL)
                             : run_capture (f, &status, "status", NULL);

      g_assert_cmpint (status, ==, 74);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, pool));
      g_assert_null (strstr (out, "tessera set"));
      g_assert_null (strstr (out, "broken"));
    }
}

/* The library's warnings reach a user of the command as the command's own
 * short lines, once each: not GLib's "(tessera status:PID): Tessera-WARNING". */
static void
test_warnings_are_short (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = g_build_filename (f->tmp, "r", "jobs", "bad@1.json", NULL);
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint about_bad = 0;
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  test_write_file (bad, "{not json");
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_test_message ("%s", out);
  g_assert_null (strstr (out, "WARNING"));
  g_assert_null (strstr (out, "(tessera"));
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "bad@1.json") != NULL)
      {
        g_assert_true (g_str_has_prefix (lines[i], "tessera: "));
        about_bad++;
      }
  g_assert_cmpuint (about_bad, ==, 1);
}

/* `tessera ARGS…` to its end, its descriptors limited by prlimit(1) to
 * @limit ("SOFT:HARD"; "SOFT:" keeps the hard limit) unless NULL: its
 * exit status; its error output in @err. */
static int
run_limited (Fixture *f, const char *limit, const char * const *args, char **err)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);

  if (limit != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("prlimit"));
      g_ptr_array_add (argv, g_strdup_printf ("--nofile=%s", limit));
      g_ptr_array_add (argv, g_strdup ("--"));
    }
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  g_ptr_array_add (argv, g_strdup ("--config"));
  g_ptr_array_add (argv, g_strdup (f->config));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, NULL, err, &error);
  g_assert_no_error (error);
  return test_exit_code (process);
}

/* Out of descriptors, whatever the limit (the hard one too, so that it
 * cannot be raised), a command does its work or exits 71 (EX_OSERR) with
 * one line that says why: never GLib's abort (133, "Creating pipes for
 * GWakeup") nor a usage error (64), nor a trail of half-failed steps. */
static void
test_out_of_descriptors (Fixture *f, gconstpointer data)
{
  static const char * const limits[] = {
    "4:4", "5:5", "6:6", "7:7", "8:8", "10:10", "12:12", "13:13", "14:14", "15:15", "16:16", "17:17",
    "18:18", "20:20", "24:24", "32:32", "48:48", "64:64", "6:", "14:", "15:",
  };
  static const char * const status_args[] = { "status", NULL };
  static const char * const no_wait_args[] = { "run", "--no-wait", "--need", "r=1", "--", "true", NULL };
  static const char * const timeout_args[] = { "run", "--timeout", "0.2", "--need", "r=1", "--", "true", NULL };
  /* With the only unit held: status shows it, a run gives up (75). */
  static const struct { const char * const *args; int status; } commands[] = {
    { status_args, 0 }, { no_wait_args, 75 }, { timeout_args, 75 },
  };
  g_autoptr(GSubprocess) holder = hold_r (f);

  for (guint l = 0; l < G_N_ELEMENTS (limits); l++)
    for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
      {
        g_autofree char *err = NULL;
        g_autofree char *shown = NULL;
        int status = run_limited (f, limits[l], commands[c].args, &err);

        shown = g_strjoinv (" ", (char **) commands[c].args);
        g_test_message ("nofile %s, %s: exit %d\n%s", limits[l], shown, status, err);
        if (status == 71)
          {
            assert_one_message (err);
            g_assert_nonnull (strstr (err, "descriptors"));
          }
        else
          {
            g_assert_cmpint (status, ==, commands[c].status);
            g_assert_null (strstr (err, "Too many open files"));
          }
      }
  let_go (holder);
}

/* Out of descriptors while it takes many lease pools (issue 38, review
 * finding 6): whatever the limit that passes the start check, a run does
 * its work or exits 71, never GLib's abort (133, 134) when
 * a host lease's renewer cannot make its main context's eventfd. Each
 * lease pool taken costs descriptors, so some limit runs out while the
 * run takes them, at a different pool for each limit. */
static void
test_out_of_descriptors_lease_pools (Fixture *f, gconstpointer data)
{
  g_autoptr(GString) config = g_string_new (NULL);
  g_autoptr(GPtrArray) no_wait_args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) wait_args = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *commands[] = { no_wait_args, wait_args };
  g_autofree char *made = NULL;
  int status;

  g_ptr_array_add (no_wait_args, g_strdup ("run"));
  g_ptr_array_add (no_wait_args, g_strdup ("--no-wait"));
  g_ptr_array_add (wait_args, g_strdup ("run"));
  g_ptr_array_add (wait_args, g_strdup ("--timeout"));
  g_ptr_array_add (wait_args, g_strdup ("30"));
  for (int i = 0; i < 40; i++)
    {
      g_string_append_printf (config, "[resource l%d]\ntype=countertoken\npath=%s/l%d\ntotal=2\nhost-lease=5\n\n",
                              i, f->tmp, i);
      for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
        {
          g_ptr_array_add (commands[c], g_strdup ("--need"));
          g_ptr_array_add (commands[c], g_strdup_printf ("l%d=1", i));
        }
    }
  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    {
      g_ptr_array_add (commands[c], g_strdup ("--"));
      g_ptr_array_add (commands[c], g_strdup ("true"));
      g_ptr_array_add (commands[c], NULL);
    }
  test_write_file (f->config, config->str);
  /* Makes the pools, without a limit. */
  status = run_limited (f, NULL, (const char * const *) no_wait_args->pdata, &made);
  g_assert_cmpint (status, ==, 0);

  for (guint limit = 64; limit <= 112; limit++)
    for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
      {
        g_autofree char *nofile = g_strdup_printf ("%u:%u", limit, limit);
        g_autofree char *err = NULL;

        status = run_limited (f, nofile, (const char * const *) commands[c]->pdata, &err);
        g_test_message ("nofile %s, %s: exit %d\n%s", nofile, c == 0 ? "--no-wait" : "--timeout 30", status, err);
        g_assert_cmpint (status, !=, 133);
        g_assert_cmpint (status, !=, 134);
        if (status != 0)
          g_assert_cmpint (status, ==, 71);
      }
}

/* A hundred lock files that cannot be read (cut short, FIFOs) make one
 * line of each command that looks at them, not a hundred. */
static void
test_hundred_unreadable_one_line (Fixture *f, gconstpointer data)
{
  static const char * const status_args[] = { "status", NULL };
  static const char * const no_wait_args[] = { "run", "--no-wait", "--need", "r=1", "--", "true", NULL };
  static const char * const clean_args[] = { "clean", NULL };
  static const char * const * const commands[] = { status_args, no_wait_args, clean_args };
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* makes the pool */
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 50; i++)
    {
      g_autofree char *cut = g_strdup_printf ("%s/cut@%d.json", jobs, i);
      g_autofree char *fifo = g_strdup_printf ("%s/fifo@%d.json", jobs, i);
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/job%d\", \"information\": {\"count\": 1}, \"proc",
                                               f->tmp, i);

      test_write_file (cut, text);
      g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
    }
  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    {
      g_autofree char *err = NULL;
      g_auto(GStrv) lines = NULL;
      guint about_jobs = 0;

      status = run_limited (f, NULL, commands[c], &err);
      g_test_message ("%s: exit %d\n%s", commands[c][0], status, err);
      g_assert_true (status == 0 || (commands[c] == no_wait_args && status == 75));
      lines = g_strsplit (err, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (strstr (lines[i], jobs) != NULL)
          {
            about_jobs++;
            g_assert_nonnull (strstr (lines[i], "100 "));
          }
      g_assert_cmpuint (about_jobs, ==, 1);
      /* And at most the command's own line besides. */
      g_assert_cmpuint (g_strv_length (lines), <=, 3);
    }
}

/* Such a lock file cannot be read: `status`, `run` and `clean` neither
 * crash nor count it for the 1 it seems to hold: it holds everything. */
static void
test_not_strict_json_lock_file (Fixture *f, gconstpointer data)
{
  g_autofree char *evil = g_build_filename (f->tmp, "r", "jobs", "evil@1.json", NULL);
  g_autoptr(GPtrArray) texts = not_strict_lock_files ();
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  g_free (run_capture (f, &status, "set", "r", "total=2", NULL));
  g_assert_cmpint (status, ==, 0);
  for (guint i = 0; i < texts->len; i++)
    {
      g_autofree char *shown = g_strndup (g_ptr_array_index (texts, i), 64);
      g_autofree char *out = NULL, *ran = NULL, *cleaned = NULL;

      g_test_message ("%s", shown);
      test_write_file (evil, g_ptr_array_index (texts, i));
      out = run_capture (f, &status, "status", NULL);
      g_test_message ("%s", out);
      g_assert_cmpint (status, ==, 0);
      g_assert_nonnull (strstr (out, "r (countertoken): 0 of 2 free"));
      ran = run_capture (f, &status, "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
      g_assert_cmpint (status, ==, 75);
      cleaned = run_capture (f, &status, "clean", NULL);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_test (evil, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (evil), ==, 0);
    }
}

/* A run that meets such a file when it lets go still removes its own lock
 * file (it crashed, and left its lock file behind). */
static void
test_release_meets_not_strict_json (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *evil = g_build_filename (jobs, "evil@1.json", NULL);
  g_autoptr(GPtrArray) texts = not_strict_lock_files ();

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GSubprocess) holder = hold_r (f);

      g_test_message ("%.16s", (const char *) g_ptr_array_index (texts, i));
      g_assert_cmpuint (test_count_entries (jobs), ==, 1);
      test_write_file (evil, g_ptr_array_index (texts, i));
      let_go (holder);
      g_assert_cmpuint (test_count_entries (jobs), ==, 1);
      g_assert_true (g_file_test (evil, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (evil), ==, 0);
    }
}

/* `tessera watch` is quiet while nothing changes (a holder that lives on,
 * polls that find nothing new), and shows a change. */
static void
test_watch_quiet_when_idle (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) watch = NULL;
  g_autofree char *idle = NULL;
  gboolean saw_three = FALSE;
  int status;

  watch = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "watch", NULL);
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *line = read_line (watch, 60);   /* first view: stamp, resource, the holder */
      g_assert_nonnull (line);
    }
  /* Nothing changes: nothing more is printed. */
  idle = read_line (watch, 2.0);
  g_assert_null (idle);
  g_free (run_capture (f, &status, "set", "r", "total=3", NULL));
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 3 && !saw_three; i++)
    {
      g_autofree char *line = read_line (watch, 30);
      saw_three = line != NULL && strstr (line, "of 3 free") != NULL;
    }
  g_subprocess_force_exit (watch);
  g_assert_true (saw_three);
  let_go (holder);
}

/* The job folders of `tessera run` in the pool r's runs/UID. */
static guint
count_job_folders (Fixture *f)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "runs", uid, NULL);
  GDir *dir = g_dir_open (jobs, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  if (dir != NULL)
    g_dir_close (dir);
  return n;
}

/* A run killed between making its job lock under a temporary name and
 * linking it into place leaves NAME.lock.XXXXXX alone in its job folder:
 * nobody holds it, so `tessera clean` removes the folder (it said
 * "nothing to remove" for ever). */
static void
test_clean_job_lock_temporary (Fixture *f, gconstpointer data)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autofree char *folder = g_build_filename (f->tmp, "r", "runs", uid, "vm-1-0badcafe", NULL);
  g_autofree char *temporary = g_build_filename (folder, "echo.lock.1c6fe5", NULL);
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  test_write_file (temporary, "");
  out = run_capture (f, &status, "clean", NULL);
  g_test_message ("clean: %d: %s", status, out);
  g_assert_cmpint (status, ==, 0);
  g_assert_false (g_file_test (folder, G_FILE_TEST_EXISTS));
}

/* A wrapper killed with SIGKILL leaves its job folder in the pool's
 * runs/UID; once its command has ended too, `tessera clean` removes it,
 * and leaves alone the folder of a job that still runs. */
static void
test_clean_job_folders (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\n", f->tmp);
  g_autoptr(GSubprocess) killed = NULL;
  g_autoptr(GSubprocess) running = NULL;
  g_autofree char *ready1 = NULL, *ready2 = NULL, *out = NULL, *again = NULL;
  int status;

  test_write_file (f->config, content);
  killed = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  running = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                           "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready1 = read_line (killed, 60);
  ready2 = read_line (running, 60);
  g_assert_cmpstr (ready1, ==, "ready");
  g_assert_cmpstr (ready2, ==, "ready");
  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  g_assert_cmpuint (count_job_folders (f), ==, 2);

  /* The orphaned command still runs: its folder (its locks.json) stays. */
  g_free (run_capture (f, &status, "clean", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (count_job_folders (f), ==, 2);

  /* It ends (its stdin closes with the wrapper's pipe): the folder goes. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (killed), NULL, NULL);
  g_free (read_line (killed, 60));   /* end of file: the command has closed its stdout */
  for (int i = 0; i < 600; i++)
    {
      g_autofree char *pending = NULL;

      g_free (out);
      out = run_capture (f, &status, "clean", NULL);
      g_assert_cmpint (status, ==, 0);
      if (count_job_folders (f) == 1)
        break;
      /* A command that has not exited yet: ask again. */
      pending = read_line (running, 0.1);
      g_assert_null (pending);
    }
  g_assert_cmpuint (count_job_folders (f), ==, 1);
  g_assert_nonnull (strstr (out, "removed the job folder"));
  again = run_capture (f, &status, "clean", NULL);
  g_assert_cmpstr (again, ==, "nothing to remove\n");

  g_output_stream_close (g_subprocess_get_stdin_pipe (running), NULL, NULL);
  g_assert_cmpint (test_exit_code (running), ==, 0);
  g_assert_cmpuint (count_job_folders (f), ==, 0);
}

/* TESSERA_POLL_INTERVAL is checked once and kept above a sane floor: a
 * tiny value does not spin, a wrong one is said once. The CPU time of a
 * two-second wait is the shell's `times` for its children. */
static void
test_poll_interval_setting (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  const char *values[] = { "1e-9", "nope" };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *script =
        g_strdup_printf ("XDG_STATE_HOME='%s' TESSERA_POLL_INTERVAL='%s' '%s' --config '%s' run --timeout 2 "
                         "--need r -- true 2>&1; echo status=$?; times",
                         state, values[i], g_getenv ("TESSERA_TOOL"), f->config);
      g_autoptr(GSubprocess) sh = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;
      guint n, warnings = 0;
      double user_min, user_s, sys_min, sys_s;

      sh = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "sh", "-c", script, NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (sh, NULL, NULL, &out, NULL, &error);
      g_assert_no_error (error);
      g_test_message ("%s", out);
      lines = g_strsplit (g_strstrip (out), "\n", -1);
      n = g_strv_length (lines);
      g_assert_cmpuint (n, >=, 3);
      g_assert_cmpstr (lines[n - 3], ==, "status=75");
      /* The children's line: "XmY.YYYs XmZ.ZZZs". */
      g_assert_cmpint (sscanf (lines[n - 1], "%lfm%lfs %lfm%lfs", &user_min, &user_s, &sys_min, &sys_s), ==, 4);
      g_assert_cmpfloat (user_min * 60 + user_s + sys_min * 60 + sys_s, <, 0.5);
      for (guint j = 0; j < n; j++)
        if (strstr (lines[j], "TESSERA_POLL_INTERVAL") != NULL)
          warnings++;
      g_assert_cmpuint (warnings, ==, 1);
    }
  let_go (holder);
}

/* ---------------------------------------------------------------------- */
/* All at once */

/* `run --need cpu=2 --need db` waiting for db holds no cpu meanwhile: a
 * `--no-wait --need cpu=1` gets one; once db is free, the waiter takes
 * both. */
static void
test_all_at_once (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource cpu]\ntype=countertoken\npath=%s/cpu\ntotal=2\n"
                                              "[resource db]\ntype=mutex\npath=%s/db\n", f->tmp, f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *ready = NULL, *waiting = NULL, *through = NULL, *meanwhile = NULL;
  int status;

  test_write_file (f->config, content);
  holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "db", "--", "sh", "-c", "echo ready; read x || true", NULL);
  ready = read_line (holder, 60);
  g_assert_cmpstr (ready, ==, "ready");
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "cpu=2", "--need", "db", "--", "echo", "through", NULL);
  waiting = read_error_line (waiter, 60);
  g_assert_nonnull (waiting);
  g_assert_true (g_str_has_prefix (waiting, "tessera: waiting for db"));

  /* Each of the waiter's attempts takes cpu, finds db held and gives cpu
   * back: a --no-wait that comes in that instant is refused (on a loaded
   * machine under ASan it happened). What must hold is that cpu is not
   * kept while db is waited for: one of a few tries gets it. */
  for (int i = 0; i < 20; i++)
    {
      g_free (meanwhile);
      meanwhile = run_capture (f, &status, "run", "--no-wait", "--need", "cpu=1", "--", "true", NULL);
      if (status == 0)
        break;
      g_test_message ("try %d: %d: %s", i, status, meanwhile);
    }
  g_assert_cmpint (status, ==, 0);

  let_go (holder);
  through = read_line (waiter, 60);
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* A request larger than the current total waits when asked to (the
 * total may grow), and says why in its waiting line and in its time-out,
 * nowhere else. */
static void
test_larger_than_total_says_why (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint said = 0;
  int status;

  out = run_capture (f, &status, "run", "--wait-for-capacity", "--timeout", "1.5", "--need", "r=2", "--", "true",
                     NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 75);
  lines = g_strsplit (out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[0], ==, "tessera: waiting for the total of r to grow (Token r has 1 in all, fewer than the 2 "
                                 "asked for)");
  g_assert_cmpstr (lines[1], ==, "tessera: timed out waiting for r: Token r has 1 in all, fewer than the 2 asked for");
  for (const char *p = out; (p = strstr (p, "fewer than the 2 asked for")) != NULL; p++)
    said++;
  g_assert_cmpuint (said, ==, 2);
}

/* Runs `tessera ARGS…` with @env to the end; its output, stderr
 * included. */
static char *
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

/* A folder of TESSERA_PLUGIN_PATH with the guide's licences plugin (a
 * per-user cap), first in a path that goes on with the build's. */
static char *
licences_plugin_path (Fixture *f)
{
  g_autofree char *plugins = g_build_filename (f->tmp, "plugins", NULL);
  const char *files[][2] = { { "liblicences.so", NULL }, { "licences.plugin", NULL } };
  g_autofree char *so = g_test_build_filename (G_TEST_BUILT, "example-plugin", "liblicences.so", NULL);
  g_autofree char *manifest = g_test_build_filename (G_TEST_DIST, "example-plugin", "licences", "licences.plugin",
                                                     NULL);

  files[0][1] = so;
  files[1][1] = manifest;
  g_assert_cmpint (g_mkdir_with_parents (plugins, 0755), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr(GFile) from = g_file_new_for_path (files[i][1]);
      g_autofree char *to_path = g_build_filename (plugins, files[i][0], NULL);
      g_autoptr(GFile) to = g_file_new_for_path (to_path);
      g_autoptr(GError) error = NULL;

      g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, &error);
      g_assert_no_error (error);
    }
  return g_strconcat (plugins, ":", g_getenv ("TESSERA_PLUGIN_PATH"), NULL);
}

/* A type's own refusal reaches the user: at the licences plugin's cap
 * per user, two of four free, `--no-wait` says the plugin's reason (and
 * not that it waits), a timed-out run says it in its waiting line and
 * when it gives up. Before, "seats is not available" and "timed out
 * waiting for seats" alone, while `status` said 2 of 4 free. */
static void
test_says_the_type_s_reason (Fixture *f, gconstpointer data)
{
  g_autofree char *path = licences_plugin_path (f);
  const char *env[] = { "TESSERA_PLUGIN_PATH", path, NULL };
  g_autofree char *content = g_strdup_printf ("[resource seats]\ntype=licences\npath=%s/seats\ntotal=4\nper-user=2\n",
                                              f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autofree char *ready = NULL, *no_wait = NULL, *timed_out = NULL, *free_now = NULL;
  g_auto(GStrv) lines = NULL;
  int status;

  test_write_file (f->config, content);
  holder = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "seats=2", "--name", "holder", "--", "sh", "-c", "echo ready; read x || true",
                          NULL);
  ready = read_line (holder, 60);
  g_assert_cmpstr (ready, ==, "ready");
  free_now = run_capture_env (f, env, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (free_now, "2 of 4 free"));

  no_wait = run_capture_env (f, env, &status, "run", "--no-wait", "--need", "seats=1", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_assert_cmpstr (no_wait, ==, "tessera: seats is not available: this user holds their licences\n");

  timed_out = run_capture_env (f, env, &status, "run", "--timeout", "1", "--need", "seats=1", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  lines = g_strsplit (timed_out, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_true (g_str_has_prefix (lines[0], "tessera: waiting for seats (this user holds their licences), "
                                             "held by holder@"));
  g_assert_cmpstr (lines[1], ==, "tessera: timed out waiting for seats: this user holds their licences");
  let_go (holder);
}

/* Nobody holds a resource smaller than the request: a run that waits for
 * it to grow says why in its first line and in the minute's report, and
 * never "held by ?" (the report of a log comes a minute after the first
 * line, so this test waits a minute). */
static void
test_nobody_holds_no_question_mark (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *first = NULL, *later = NULL;

  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--wait-for-capacity", "--need", "r=2",
                          "--", "true", NULL);
  first = read_error_line (waiter, 60);
  g_test_message ("%s", first);
  later = read_error_line (waiter, 180);
  g_test_message ("%s", later);
  g_subprocess_send_signal (waiter, SIGINT);
  g_assert_cmpint (test_exit_code (waiter), ==, 128 + SIGINT);
  g_assert_cmpstr (first, ==, "tessera: waiting for the total of r to grow (Token r has 1 in all, fewer than the 2 "
                              "asked for)");
  g_assert_nonnull (later);
  g_assert_true (g_str_has_prefix (later, "tessera: still waiting for the total of r to grow after 1 min (Token r has "
                                          "1 in all, fewer than the 2 asked for)"));
  g_assert_null (strstr (later, "held by"));
}

/* Whether @process ends within @timeout seconds (GLib reaps it); ended
 * otherwise, so that a failing test goes on. */
static gboolean
ends_within_or_killed (GSubprocess *process, double timeout)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (g_subprocess_get_identifier (process) != NULL && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  if (g_subprocess_get_identifier (process) == NULL)
    return TRUE;
  g_subprocess_force_exit (process);
  g_subprocess_wait (process, NULL, NULL);
  return FALSE;
}

/* A request above what the resource has now fails at once, exit 69,
 * naming the total, as Slurm refuses a job larger than the cluster; with
 * --no-wait too, without a word of waiting. --wait-for-capacity waits
 * instead, until `tessera set` raises the total. Before, the run waited
 * for ever ("gpu has 0 device(s) … waiting for more"). */
static void
test_above_total_fails_at_once (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                              "[resource g]\ntype=gpu\npath=%s/g\ndevices=0\n", f->tmp, f->tmp);
  const char *requests[][2] = { { "r=2", "Token r has 1 in all, fewer than the 2 asked for" },
                                { "g=2", "g has 1 device(s) with at least 0 MiB, fewer than the 2 asked for" } };
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *early = NULL, *through = NULL, *set = NULL;
  int status;

  test_write_file (f->config, content);
  for (guint i = 0; i < G_N_ELEMENTS (requests); i++)
    {
      const char *no_wait[] = { "", "--no-wait" };

      for (guint j = 0; j < G_N_ELEMENTS (no_wait); j++)
        {
          g_autoptr(GSubprocess) run = NULL;
          g_autoptr(GError) error = NULL;
          g_autofree char *out = NULL;
          gboolean ended;

          if (*no_wait[j] == '\0')
            run = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, "run",
                                 "--need", requests[i][0], "--", "true", NULL);
          else
            run = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, "run",
                                 no_wait[j], "--need", requests[i][0], "--", "true", NULL);
          ended = ends_within_or_killed (run, 60);
          g_subprocess_communicate_utf8 (run, NULL, NULL, &out, NULL, &error);
          g_assert_no_error (error);
          g_test_message ("%s %s: %s", requests[i][0], no_wait[j], out);
          g_assert_true (ended);
          g_assert_cmpint (test_exit_code (run), ==, 69);
          assert_one_message (out);
          g_assert_nonnull (strstr (out, requests[i][1]));
          g_assert_nonnull (strstr (out, "--wait-for-capacity"));
          g_assert_null (strstr (out, "waiting"));
        }
    }

  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--wait-for-capacity", "--need", "r=2",
                          "--", "echo", "through", NULL);
  early = read_line (waiter, 1.0);
  g_assert_null (early);
  set = run_capture (f, &status, "set", "r", "total=2", NULL);
  g_assert_cmpint (status, ==, 0);
  through = read_line (waiter, 60);
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* `run`'s short options mean what flock(1)'s do: -n does not wait, -w
 * SECONDS is the timeout, -E N the status on a conflict (75 without);
 * `-n NAME=…` (the old --need) is a usage error that names --need; -c is
 * still --config. */
static void
test_flock_short_options (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  const char *old_need[][6] = { { "-n", "r=1", "--", "true", NULL }, { "-n", "r", "--", "true", NULL },
                                { "--need", "r", "-n", "r=1", "--", "true" } };
  const char *bad_codes[] = { "256", "-1", "three", "" };
  g_autofree char *out = NULL;
  gint64 start;
  int status;

  out = run_capture (f, &status, "run", "-n", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_assert_cmpstr (out, ==, "tessera: r is not available: Token r has fewer than 1 free\n");
  g_clear_pointer (&out, g_free);
  start = g_get_monotonic_time ();
  out = run_capture (f, &status, "run", "-w", "0.5", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 500 * 1000);
  g_assert_nonnull (strstr (out, "tessera: timed out waiting for r: Token r has fewer than 1 free\n"));
  g_clear_pointer (&out, g_free);

  out = run_capture (f, &status, "run", "-E", "3", "-n", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 3);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "--conflict-exit-code", "3", "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 3);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "-E", "3", "-w", "0.5", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 3);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "-c", f->config, "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_clear_pointer (&out, g_free);

  for (guint i = 0; i < G_N_ELEMENTS (old_need); i++)
    {
      out = run_capture (f, &status, "run", old_need[i][0], old_need[i][1], old_need[i][2], old_need[i][3],
                         old_need[i][4], old_need[i][5], NULL);
      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, "--need"));
      g_clear_pointer (&out, g_free);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad_codes); i++)
    {
      out = run_capture (f, &status, "run", "-E", bad_codes[i], "--no-wait", "--need", "r", "--", "true", NULL);
      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_clear_pointer (&out, g_free);
    }
  let_go (holder);
}

/* Names from the folder reach the output escaped: a lock file named with
 * a terminal escape and a byte that is not UTF-8 neither clears the
 * screen of whoever runs status nor makes status --json invalid. (In the
 * file, the escape is written as JSON writes it: a raw one in a string is
 * not JSON.) */
static void
test_hostile_names_escaped (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *path = g_strdup_printf ("%s/evil\033[2J\377@1.json", jobs);
  g_autofree char *json = g_strdup_printf ("{\"job_uri\": \"%s/evil\\u001b[2J\", \"information\": {\"count\": 1}, "
                                           "\"process\": {\"type\": \"local\", \"pid\": %d}}",
                                           f->tmp, (int) getpid ());
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *r, *h;
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* makes the folder */
  test_write_file (path, json);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strchr (text, '\033'));
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_nonnull (strstr (text, "evil\\x1B[2J\\xFF@1"));

  out = run_capture (f, &status, "status", "--json", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  r = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "job"), ==, "evil\033[2J\\xFF@1");
}

/* The only lock file in jobs/ (the run's), or NULL. */
static char *
find_lock_file (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      return g_build_filename (jobs, name, NULL);
  return NULL;
}

/* A run whose lock file disappears (clean --force, a peer's mistaken
 * verdict), or, when @rewrite, is rewritten in place by someone else
 * (root, or a member of a group pool where lock files were writable by
 * the group, setting its count to 0), says so at once; with
 * --on-lost=end it also ends the command. */
static void
check_lost_lock_file (Fixture *f, gboolean end, gboolean rewrite)
{
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                   "run", "--need", "r", end ? "--on-lost=end" : "--on-lost=warn",
                   "--", "sh", "-c", "echo ready; sleep 60", NULL);
  g_autofree char *ready = read_line (run, 60);
  g_autofree char *path = find_lock_file (f);
  g_autofree char *said = NULL;

  g_assert_cmpstr (ready, ==, "ready");
  g_assert_nonnull (path);
  if (rewrite)
    {
      /* In place: same inode, other content. */
      const char *text = "{\"job_uri\": \"/nowhere/job\", \"information\": {\"count\": 0}}";
      int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);

      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
      g_assert_cmpint (close (fd), ==, 0);
    }
  else
    g_assert_cmpint (g_unlink (path), ==, 0);
  said = read_error_line (run, 30);
  g_assert_nonnull (said);
  g_test_message ("run: %s", said);
  g_assert_nonnull (strstr (said, rewrite ? "was rewritten" : "is gone"));
  if (end)
    g_assert_cmpint (test_exit_code (run), ==, 128 + SIGTERM);
  else
    {
      g_assert_true (g_subprocess_get_identifier (run) != NULL);   /* still running */
      g_subprocess_send_signal (run, SIGTERM);
      test_exit_code (run);
    }
}

/* Whether some process holds an fcntl (OFD or classic) write lock on the
 * job lock the run's lock file names. */
static gboolean
job_lock_held (const char *lock_file)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *lock_path = NULL;
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int fd;

  g_assert_true (json_parser_load_from_file (parser, lock_file, NULL));
  lock_path = g_strconcat (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)),
                                                          "job_uri"), ".lock", NULL);
  fd = open (lock_path, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_OFD_GETLK, &fl), ==, 0);
  close (fd);
  return fl.l_type != F_UNLCK;
}

/* The command gets the locked job lock (as flock(1) passes its lock), so
 * the lock lives exactly as long as the holding: a judge on another host
 * or in another pid namespace, which cannot see our pids, sees the job
 * lock held while the command runs, even after its wrapper was killed. */
static void
test_command_keeps_the_job_lock (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo ready; read x", NULL);
  g_autofree char *ready = read_line (run, 60);
  g_autofree char *path = find_lock_file (f);
  gint64 deadline;

  g_assert_cmpstr (ready, ==, "ready");
  g_assert_nonnull (path);
  g_assert_true (job_lock_held (path));
  g_subprocess_force_exit (run);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGKILL);
  /* The wrapper is gone; its command still runs and still holds. */
  g_assert_true (job_lock_held (path));
  /* The command ends when its stdin closes: then nobody holds. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (run), NULL, NULL);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (job_lock_held (path))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (G_USEC_PER_SEC / 20);
    }
}

static void
test_lost_lock_file_warns (Fixture *f, gconstpointer data)
{
  check_lost_lock_file (f, FALSE, FALSE);
}

static void
test_lost_lock_file_ends (Fixture *f, gconstpointer data)
{
  check_lost_lock_file (f, TRUE, FALSE);
}

static void
test_rewritten_lock_file_warns (Fixture *f, gconstpointer data)
{
  check_lost_lock_file (f, FALSE, TRUE);
}

static void
test_rewritten_lock_file_ends (Fixture *f, gconstpointer data)
{
  check_lost_lock_file (f, TRUE, TRUE);
}

/* informations.json's "tessera_protocol", or -1 when it has none. */
static gint64
pool_protocol_of (Fixture *f, const char *name)
{
  g_autofree char *path = g_build_filename (f->tmp, name, "informations.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *object;

  g_assert_true (json_parser_load_from_file (parser, path, NULL));
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member_with_default (object, "total", -1), >=, 0);
  return json_object_get_int_member_with_default (object, "tessera_protocol", -1);
}

static gint64
pool_protocol (Fixture *f)
{
  return pool_protocol_of (f, "r");
}

/* A pool records the lowest protocol that may use it: Tessera writes it
 * when it creates informations.json, never lowers it, and a Tessera older
 * than the pool refuses it (78) instead of judging holders by older
 * rules; `status` says so and goes on with the other resources. A pool
 * that experimaestro set up has no such member and is used as it is. */
static void
test_pool_protocol (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->tmp, "r", NULL);
  g_autofree char *informations = g_build_filename (folder, "informations.json", NULL);
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                             "[resource s]\ntype=countertoken\npath=%s/s\ntotal=1\n"
                                             "[resource l]\ntype=countertoken\npath=%s/l\ntotal=1\nhost-lease=30\n",
                                             f->tmp, f->tmp, f->tmp);
  g_autofree char *lease_folder = g_build_filename (f->tmp, "l", NULL);
  g_autofree char *lease_informations = g_build_filename (lease_folder, "informations.json", NULL);
  g_autofree char *newer = NULL;
  g_autofree char *out = NULL;
  gint64 ours;
  int status;

  test_write_file (f->config, config);
  /* experimaestro's pool: used as it is, not rewritten by a mere run. */
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  test_write_file (informations, "{\"total\": 1}");
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol (f), ==, -1);
  /* Once Tessera writes the file, it carries the member. */
  g_free (run_capture (f, &status, "set", "r", "total=1", NULL));
  g_assert_cmpint (status, ==, 0);
  ours = pool_protocol (f);
  g_assert_cmpint (ours, >=, 1);

  /* A new pool gets it too; `set` cannot lower it. */
  test_remove_tree (folder);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol (f), ==, ours);
  g_free (run_capture (f, &status, "set", "r", "tessera_protocol=0", NULL));
  g_assert_cmpint (pool_protocol (f), ==, ours);

  /* 1.0, as Python's json may write a number, is protocol 1. */
  test_write_file (informations, "{\"total\": 1, \"tessera_protocol\": 1.0}");
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);

  /* A lease pool asks for a newer protocol than a plain one: a Tessera
   * that renews no heartbeat must refuse it. An older lease pool is
   * marked once this Tessera uses it. */
  g_free (run_capture (f, &status, "run", "--need", "l", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol_of (f, "l"), >, ours);
  test_write_file (lease_informations, "{\"total\": 1, \"tessera_protocol\": 2}");
  g_free (run_capture (f, &status, "run", "--need", "l", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol_of (f, "l"), >, ours);
  g_free (run_capture (f, &status, "status", "l", NULL));
  g_assert_cmpint (status, ==, 0);

  /* A pool for a newer Tessera is refused, in one clear line. */
  newer = g_strdup_printf ("{\"total\": 1, \"tessera_protocol\": %" G_GINT64_FORMAT "}", ours + 1000);
  test_write_file (informations, newer);
  out = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (out);
  g_assert_nonnull (strstr (out, "protocol"));
  g_assert_nonnull (strstr (out, folder));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 78);
  g_assert_nonnull (strstr (out, "protocol"));
  g_assert_nonnull (strstr (out, "s (countertoken): 1 of 1 free"));   /* the others are shown */
  /* Still untouched. */
  g_assert_cmpint (pool_protocol (f), ==, ours + 1000);
}

/* `tessera clean --force NAME JOB…` removes the named holders' lock files
 * whatever their liveness, saying so: a live run's (which notices), one
 * nobody here can judge; a name that is not a holder of NAME, or not a
 * lock file name at all, is refused with a clear message and removes
 * nothing. */
static void
test_clean_force (Fixture *f, gconstpointer data)
{
  g_autofree char *stuck = g_build_filename (f->tmp, "r", "jobs", "stuck@1.json", NULL);
  g_autofree char *outside = g_build_filename (f->tmp, "outside.json", NULL);
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo ready; sleep 60", NULL);
  g_autofree char *ready = read_line (run, 60);
  g_autofree char *path = find_lock_file (f);
  g_autofree char *base = NULL;
  g_autofree char *job = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *said = NULL;
  const char *bad[] = { "nosuch@1", "../outside", "jobs/stuck@1", "..", "", "stuck@1.json" };
  int status;

  g_assert_cmpstr (ready, ==, "ready");
  g_assert_nonnull (path);
  base = g_path_get_basename (path);
  job = g_strndup (base, strlen (base) - strlen (".json"));
  test_write_file (outside, "{\"job_uri\": \"/x/outside\", \"information\": {\"count\": 1}}");

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "clean", "--force", "r", bad[i], NULL);
      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_test (outside, G_FILE_TEST_EXISTS));
    }
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", NULL);
  g_assert_cmpint (status, ==, 64);   /* which holders? */

  /* A live holder: gone at once, and its run says so. */
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", job, NULL);
  g_assert_cmpint (status, ==, 0);
  expected = g_strdup_printf ("r: removed %s (forced)\n", job);
  g_assert_cmpstr (out, ==, expected);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  said = read_error_line (run, 30);
  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, "is gone"));

  /* A holder on a host nobody here can judge: plain clean keeps it. */
  test_write_file (stuck, "{\"job_uri\": \"/x/stuck\", \"information\": {\"count\": 1}, "
                          "\"process\": {\"type\": \"ssh\", \"pid\": 17, \"host\": \"far\"}}");
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "r", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (stuck, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", "stuck@1", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "r: removed stuck@1 (forced)\n");
  g_assert_false (g_file_test (stuck, G_FILE_TEST_EXISTS));

  g_subprocess_send_signal (run, SIGTERM);
  test_exit_code (run);
}

/* `tessera set` refuses what the pool could not then be read with (a
 * total past the range a request has), in one line (64), and leaves
 * informations.json as it was. */
static void
test_set_refuses_out_of_range (Fixture *f, gconstpointer data)
{
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  const char *values[] = { "total=2147483648", "total=9223372036854775807", "total=-3", "total=1.5" };
  g_autofree char *before = NULL;
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_true (g_file_get_contents (informations, &before, NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *after = NULL;

      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "set", "r", values[i], NULL);
      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_true (g_file_get_contents (informations, &after, NULL, NULL));
      g_assert_cmpstr (after, ==, before);
      /* Past the range, its end is named. */
      if (i < 2)
        g_assert_nonnull (strstr (out, "2147483647"));
    }
  /* The largest is taken. */
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "set", "r", "total=2147483647", NULL);
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "2147483647 of 2147483647 free"));
}

/* A link where a lock file would be is no holder: `clean --force` says
 * it has no such holder (64) rather than claiming a removal it did not
 * make. (A FIFO there holds everything: see the next test.) */
static void
test_clean_force_not_a_holder (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *link = g_build_filename (jobs, "link@1.json", NULL);
  g_autofree char *target = g_build_filename (f->tmp, "target.json", NULL);
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  test_write_file (target, "{\"job_uri\": \"/x/t\", \"information\": {\"count\": 1}}");
  g_assert_cmpint (symlink (target, link), ==, 0);
  out = run_capture (f, &status, "clean", "--force", "r", "link@1", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 64);
  g_assert_null (strstr (out, "removed"));
  g_assert_nonnull (strstr (out, "has no holder “link@1”"));
  g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
  g_assert_true (g_file_test (target, G_FILE_TEST_IS_REGULAR));
}

/* `tessera status --json` of r (its output alone: warnings go to the
 * error output), parsed. */
static JsonNode *
status_json_of (Fixture *f)
{
  g_autoptr(GSubprocess) process =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "status", "--json", NULL);
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  root = json_from_string (out, &error);
  g_assert_no_error (error);
  return root;
}

/* What cannot be read holds the whole resource, and says why: a FIFO
 * named like a lock file, and the lock file of a live holder whose count
 * json-glib reads but cannot represent. `status` shows both with their
 * reason (text and JSON), a run is refused, `clean --min-age 0` keeps
 * them; `clean --force` removes them without reading them. */
static void
test_unreadable_holders (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *fifo = g_build_filename (jobs, "fifo@1.json", NULL);
  g_autofree char *big = g_build_filename (jobs, "big@1.json", NULL);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) spec = tessera_process_to_json (self);
  g_autofree char *spec_text = json_to_string (spec, FALSE);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/big\", \"information\": {\"count\": 1e308}, "
                                           "\"process\": %s}", f->tmp, spec_text);
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  JsonObject *r;
  JsonArray *holders;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  test_write_file (big, text);

  root = status_json_of (f);
  r = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  holders = json_object_get_array_member (r, "holders");
  g_assert_cmpuint (json_array_get_length (holders), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);
      const char *job = json_object_get_string_member (h, "job");

      g_test_message ("%s: %s", job, json_object_get_string_member_with_default (h, "reason", "(none)"));
      g_assert_true (g_str_equal (job, "fifo@1") || g_str_equal (job, "big@1"));
      g_assert_nonnull (json_object_get_string_member_with_default (h, "reason", NULL));
      /* Never judged dead (its numbers are not trusted: unknown). */
      g_assert_cmpstr (json_object_get_string_member (h, "state"), !=, "dead");
    }

  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "r (countertoken): 0 of 1 free"));
  g_assert_nonnull (strstr (out, "  fifo@1  "));
  g_assert_nonnull (strstr (out, "  big@1  "));
  /* Each with its reason on the line below. */
  {
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
    guint reasons = 0;

    for (guint i = 1; lines[i] != NULL; i++)
      if (g_str_has_prefix (lines[i], "    (") &&
          (g_str_has_prefix (lines[i - 1], "  fifo@1  ") || g_str_has_prefix (lines[i - 1], "  big@1  ")))
        reasons++;
    g_assert_cmpuint (reasons, ==, 2);
  }

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (fifo, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (big, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", "fifo@1", "big@1", NULL);
  g_assert_cmpint (status, ==, 0);
  /* After the warnings of its opening. */
  g_test_message ("%s", out);
  g_assert_true (g_str_has_suffix (out, "\nr: removed fifo@1 (forced)\nr: removed big@1 (forced)\n"));
  g_assert_false (g_file_test (fifo, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (big, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_nonnull (strstr (out, "r (countertoken): 1 of 1 free"));
}

/* A live holder's lock file, complete, that its user rewrote with text the
 * strict scan refuses for what it says (a lone surrogate, as Python's
 * json.dump writes a path's byte that is not UTF-8; a raw byte that is not
 * UTF-8): it is not cut short, so it never ages away as a half-written
 * one would. It holds the whole resource (status says why, a run is
 * refused), `clean --min-age 0` keeps it, `clean --force` removes it. */
static void
test_refused_text_holds_until_forced (Fixture *f, gconstpointer data)
{
  const char *bad[] = { "x\\udcffy", "x\377y" };
  const char *what[] = { "a lone surrogate", "a byte that is not UTF-8" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GSubprocess) holder = hold_r (f);
      g_autofree char *path = find_lock_file (f);
      g_autofree char *name = NULL, *job = NULL, *text = NULL, *rewritten = NULL;
      g_autofree char *out = NULL, *expected = NULL;
      g_autoptr(GError) error = NULL;
      int status;

      g_test_message ("a string holding %s", what[i]);
      g_assert_nonnull (path);
      name = g_path_get_basename (path);
      job = g_strndup (name, strlen (name) - strlen (".json"));
      g_assert_true (g_file_get_contents (path, &text, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (text[0] == '{');
      rewritten = g_strdup_printf ("{\"note\": \"%s\", %s", bad[i], text + 1);
      test_write_file (path, rewritten);

      out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
      g_test_message ("%s", out);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "status", NULL);
      g_test_message ("%s", out);
      g_assert_cmpint (status, ==, 0);
      g_assert_nonnull (strstr (out, "r (countertoken): 0 of 1 free"));
      {
        g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
        g_autofree char *prefix = g_strdup_printf ("  %s  ", job);
        gboolean reason = FALSE;

        for (guint l = 1; lines[l] != NULL; l++)
          reason |= g_str_has_prefix (lines[l], "    (") && g_str_has_prefix (lines[l - 1], prefix);
        g_assert_true (reason);
      }
      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL);
      g_assert_cmpint (status, ==, 75);
      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "clean", "--force", "r", job, NULL);
      g_test_message ("%s", out);
      g_assert_cmpint (status, ==, 0);
      expected = g_strdup_printf ("r: removed %s (forced)\n", job);
      g_assert_true (g_str_has_suffix (out, expected));
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
      /* Its run was told its lock file is gone: it ends when told. */
      g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
      test_exit_code (holder);
    }
}

/* A live holder's lock file that others may write (group-writable, as
 * an experimaestro peer under umask 002 leaves it) cut short: a co-user
 * may have cut it, so it does not age away as a writer's half-written
 * file would. It holds the whole resource through `clean --min-age 0`
 * until `clean --force`. */
static void
test_writable_cut_short_holds (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autofree char *path = find_lock_file (f);
  g_autofree char *name = NULL, *job = NULL, *text = NULL, *cut = NULL, *out = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  g_assert_nonnull (path);
  name = g_path_get_basename (path);
  job = g_strndup (name, strlen (name) - strlen (".json"));
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  cut = g_strndup (text, strlen (text) / 2);
  test_write_file (path, cut);
  g_assert_cmpint (chmod (path, 0664), ==, 0);

  out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", job, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  test_exit_code (holder);
}

/* A jobs/ that is a link or a file cannot be read, so holders may hold
 * what looks free: `status` says so rather than "2 of 2 free" (as `run`
 * refuses to decide there), exits non-zero, and its JSON still lists the
 * resource, its free units unknown (-1) and why in "error". */
static void
test_status_unreadable_jobs (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *moved = g_build_filename (f->tmp, "r", "jobs.real", NULL);
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_rename (jobs, moved), ==, 0);
  g_assert_cmpint (symlink (moved, jobs), ==, 0);
  for (int round = 0; round < 2; round++)
    {
      g_autofree char *out = run_capture (f, &status, "status", NULL);

      g_test_message ("%s", out);
      g_assert_cmpint (status, !=, 0);
      g_assert_null (strstr (out, "free"));
      g_assert_nonnull (strstr (out, "r (countertoken): cannot be read: "));
      assert_json_lists_unreadable (f, status);
      /* The same for a file in its place. */
      g_assert_cmpint (g_unlink (jobs), ==, 0);
      test_write_file (jobs, "not a folder\n");
    }
}

/* A lock file of host @host whose job lock the test holds, as a lock
 * manager keeps a vanished NFSv3 client's locks: it counts for ever. */
static char *
write_remote_holding (Fixture *f, const char *job, const char *host, int *lock_fd)
{
  g_autofree char *job_uri = g_build_filename (f->tmp, "xp", job, NULL);
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *file_name = g_strconcat (job, ".json", NULL);
  g_autofree char *content = NULL;
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  char *path = g_build_filename (f->tmp, "r", "jobs", file_name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (job_uri, 0755), ==, 0);
  *lock_fd = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  g_assert_cmpint (*lock_fd, >=, 0);
  g_assert_cmpint (fcntl (*lock_fd, F_OFD_SETLK, &fl), ==, 0);
  content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, "
                             "\"process\": {\"type\": \"local\", \"pid\": 4242, \"start_time\": 17, \"host\": \"%s\", "
                             "\"boot_id\": \"00000000-dead-beef-0000-000000000000\", "
                             "\"machine_id\": \"0123456789abcdef0123456789abcdef\", "
                             "\"host_id\": \"fedcba9876543210fedcba9876543210\"}}", job_uri, host);
  test_write_file (path, content);
  return path;
}

/* `tessera clean --host HOST --yes` removes the holdings of a retired
 * host (whose lingering locks would keep them for ever), and only its;
 * without --yes it shows what it would remove and removes nothing (64);
 * our own host's holders are judged by their pid, never removed so. */
static void
test_clean_host (Fixture *f, gconstpointer data)
{
  int fds[3];
  g_autofree char *old1 = NULL, *old2 = NULL, *other = NULL;
  g_autofree char *dead = g_build_filename (f->tmp, "r", "jobs", "dead@1.json", NULL);
  g_autofree char *dead_job_dir = g_build_filename (f->tmp, "third-node-job", NULL);
  g_autofree char *dead_job_lock = g_build_filename (dead_job_dir, "never-locked.lock", NULL);
  g_autofree char *dead_text = NULL;
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  old1 = write_remote_holding (f, "old@1", "retired-node", &fds[0]);
  old2 = write_remote_holding (f, "old@2", "retired-node", &fds[1]);
  other = write_remote_holding (f, "other@1", "other-node", &fds[2]);

  out = run_capture (f, &status, "clean", "r", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (old1, G_FILE_TEST_EXISTS) && g_file_test (old2, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--host", "retired-node", "r", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_nonnull (strstr (out, "r: would remove old@1 (host retired-node)\n"));
  g_assert_nonnull (strstr (out, "r: would remove old@2 (host retired-node)\n"));
  g_assert_null (strstr (out, "other@1"));
  g_assert_nonnull (strstr (out, "--yes"));
  g_assert_true (g_file_test (old1, G_FILE_TEST_EXISTS) && g_file_test (old2, G_FILE_TEST_EXISTS));
  /* Without --yes nothing goes, a dead holder of a third host neither
   * (its job lock, seen here, free); with it, that one goes too, and is
   * named. */
  g_assert_cmpint (g_mkdir_with_parents (dead_job_dir, 0755), ==, 0);
  test_write_file (dead_job_lock, "");
  dead_text = g_strdup_printf ("{\"job_uri\": \"%s/never-locked\", \"information\": {\"count\": 1}, "
                               "\"process\": {\"type\": \"local\", \"pid\": 5, \"start_time\": 1, "
                               "\"host\": \"third-node\", \"boot_id\": \"00000000-dead-beef-0000-000000000001\"}}",
                               dead_job_dir);
  test_write_file (dead, dead_text);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--host", "retired-node", "r", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_true (g_file_test (dead, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--host", g_get_host_name (), "--yes", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (out);
  g_assert_nonnull (strstr (out, g_get_host_name ()));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--host", "retired-node", "--yes", "r", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "r: removed old@1 (host retired-node)\n"));
  g_assert_nonnull (strstr (out, "r: removed old@2 (host retired-node)\n"));
  g_assert_nonnull (strstr (out, "r: removed dead@1\n"));
  g_assert_false (g_file_test (old1, G_FILE_TEST_EXISTS) || g_file_test (old2, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (other, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--host", "retired-node", "--yes", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "nothing to remove\n");
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    close (fds[i]);
}

int
main (int argc, char **argv)
{
  /* Before any thread: the btrfs test's mount is this process's own.
   * Without the privilege that test fails at its mount; the others run. */
  test_try_private_mounts ();
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/run/two-runs-serialize", test_runs_serialize);
  ADD ("/tool/run/exit-status-passes-through", test_exit_status);
  ADD ("/tool/run/fencing-token-variable", test_fencing_token_variable);
  ADD ("/tool/run/sigterm-reaches-child", test_sigterm_reaches_child);
  ADD ("/tool/run/wrapper-killed-child-keeps-holding", test_wrapper_killed);
  ADD ("/tool/run/no-wait-and-timeout-exit-75", test_no_wait_and_timeout);
  ADD ("/tool/run/no-watch-without-a-wait", test_no_watch_without_wait);
  ADD ("/tool/run/reads-manifests-as-needed", test_manifests_read_as_needed);
  ADD ("/tool/run/lock-file-written-once", test_lock_file_written_once);
  ADD ("/tool/run/command-killed-while-waiting", test_command_killed_while_waiting);
  ADD ("/tool/run/job-files-removed-through-folder", test_job_files_removed_through_folder);
  ADD ("/tool/run/lost-lock-file-warns", test_lost_lock_file_warns);
  ADD ("/tool/run/command-keeps-the-job-lock", test_command_keeps_the_job_lock);
  ADD ("/tool/run/lost-lock-file-ends-the-command", test_lost_lock_file_ends);
  ADD ("/tool/run/rewritten-lock-file-warns", test_rewritten_lock_file_warns);
  ADD ("/tool/run/rewritten-lock-file-ends-the-command", test_rewritten_lock_file_ends);
  ADD ("/tool/status/hostile-names-escaped", test_hostile_names_escaped);
  ADD ("/tool/run/larger-than-total-says-why", test_larger_than_total_says_why);
  ADD ("/tool/run/says-the-type-s-reason", test_says_the_type_s_reason);
  ADD ("/tool/run/nobody-holds-no-question-mark", test_nobody_holds_no_question_mark);
  ADD ("/tool/run/above-total-fails-at-once-69", test_above_total_fails_at_once);
  ADD ("/tool/run/flock-short-options", test_flock_short_options);
  ADD ("/tool/run/empty-need-is-usage-error", test_empty_need);
  ADD ("/tool/run/bad-timeout-is-usage-error", test_bad_timeout);
  ADD ("/tool/run/command-not-run-127-126", test_command_not_run);
  ADD ("/tool/run/no-space-exits-74", test_enospc);
  ADD ("/tool/run/inherited-fd-reaches-command", test_inherited_fd);
  ADD ("/tool/run/ignored-signal-stays-ignored", test_ignored_signal_stays_ignored);
  ADD ("/tool/run/ignored-signal-not-forwarded", test_ignored_signal_not_forwarded);
  ADD ("/tool/run/one-ctrl-c-one-sigint", test_one_ctrl_c_one_sigint);
  ADD ("/tool/run/waiting-line-and-ctrl-c", test_waiting_line_and_ctrl_c);
  ADD ("/tool/run/behind-stuck-ipc-lock", test_behind_stuck_ipc_lock);
  ADD ("/tool/status/behind-stuck-ipc-lock-on-btrfs", test_behind_stuck_ipc_lock_btrfs);
  ADD ("/tool/run/behind-stuck-lockf-peer", test_behind_stuck_lockf_peer);
  ADD ("/tool/run/release-behind-stuck-ipc-lock", test_release_behind_stuck_ipc_lock);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    {
      ADD ("/tool/run/naming-behind-stuck-ipc-lock", test_naming_behind_stuck_ipc_lock);
      ADD ("/tool/clean/job-folder-swapped-while-judged", test_job_folder_swapped_while_judged);
      ADD ("/tool/clean/job-folder-replaced", test_job_folder_replaced);
      ADD ("/tool/run/job-lock-held-when-seen", test_job_lock_held_when_seen);
    }
  ADD ("/tool/run/all-at-once", test_all_at_once);
  ADD ("/tool/clean/job-lock-temporary", test_clean_job_lock_temporary);
  ADD ("/tool/status/json", test_status_json);
  ADD ("/tool/status/user-is-file-owner", test_status_user_is_file_owner);
  ADD ("/tool/status/queue", test_status_queue);
  ADD ("/tool/status/queue-within-patience", test_status_patient_waiter);
  ADD ("/tool/status/queue-within-patience-wants", test_status_patient_waiter_wants);
  ADD ("/tool/status/queue-within-patience-no-reservation", test_status_patient_waiter_no_reservation);
  ADD ("/tool/status/dead-holder-reclaimable", test_status_reclaimable);
  ADD ("/tool/status/verdict-dead", test_status_verdict_dead);
  ADD ("/tool/status/openmetrics", test_status_openmetrics);
  ADD ("/tool/status/openmetrics-saturates", test_status_openmetrics_saturates);
  ADD ("/tool/watch/json-lines", test_watch_json);
  ADD ("/tool/status/unreadable-jobs-folder", test_status_unreadable_jobs);
  ADD ("/tool/status/unknown-since", test_status_unknown_since);
  ADD ("/tool/set/wakes-waiting-run", test_set_wakes_waiter);
  for (guint i = 0; i < G_N_ELEMENTS (bad_configs); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tool/config/error/%s", bad_configs[i].name);
      g_test_add (path, Fixture, &bad_configs[i], fixture_set_up, test_config_error, fixture_tear_down);
    }
  ADD ("/tool/set/refuses-unknown-settings", test_set_refuses_unknown);
  ADD ("/tool/config/same-folder-through-a-link", test_config_same_folder_link);
  ADD ("/tool/config/missing-total-for-a-new-pool", test_config_missing_total);
  ADD ("/tool/config/informations-json-wins-with-a-notice", test_config_differs_notice);
  ADD ("/tool/config/broken-informations-json", test_broken_informations);
  ADD ("/tool/config/pool-folder-is-a-file", test_pool_folder_is_a_file);
  ADD ("/tool/config/range-said", test_config_range_said);
  ADD ("/tool/config/poll-interval-checked-once", test_poll_interval_setting);
  ADD ("/tool/clean/removes-dead-holder", test_clean);
  ADD ("/tool/clean/removes-job-folders-of-ended-jobs", test_clean_job_folders);
  ADD ("/tool/clean/removes-temporaries-of-killed-writers", test_clean_temporaries);
  ADD ("/tool/clean/force-removes-named-holders", test_clean_force);
  ADD ("/tool/clean/host-removes-a-retired-host-s-holdings", test_clean_host);
  ADD ("/tool/clean/force-names-no-link", test_clean_force_not_a_holder);
  ADD ("/tool/status/unreadable-holders-hold-all", test_unreadable_holders);
  ADD ("/tool/clean/refused-text-holds-until-forced", test_refused_text_holds_until_forced);
  ADD ("/tool/clean/writable-cut-short-holds", test_writable_cut_short_holds);
  ADD ("/tool/clean/bad-min-age-is-usage-error", test_bad_min_age);
  ADD ("/tool/set/refuses-out-of-range", test_set_refuses_out_of_range);
  ADD ("/tool/watch/updates-on-change", test_watch);
  ADD ("/tool/watch/quiet-when-idle", test_watch_quiet_when_idle);
  ADD ("/tool/plugins/lists-without-loading", test_plugins_command);
  ADD ("/tool/command-line/habits", test_command_line_habits);
  ADD ("/tool/warnings-are-the-command-s-own", test_warnings_are_short);
  ADD ("/tool/warnings/hundred-unreadable-files-one-line", test_hundred_unreadable_one_line);
  ADD ("/tool/out-of-descriptors/one-line-and-71", test_out_of_descriptors);
  ADD ("/tool/out-of-descriptors/lease-pools-never-abort", test_out_of_descriptors_lease_pools);
  ADD ("/tool/status/not-strict-json-lock-file-holds-everything", test_not_strict_json_lock_file);
  ADD ("/tool/run/release-meets-not-strict-json", test_release_meets_not_strict_json);
  ADD ("/tool/config/built-in-default", test_default_configuration);
  ADD ("/tool/config/pool-protocol", test_pool_protocol);
  ADD ("/tool/run/job-folders-setting", test_job_folders_setting);
  ADD ("/tool/translation/french", test_french);
  ADD ("/tool/command-line/one-voice-for-bad-options", test_one_voice_for_bad_options);
  ADD ("/tool/translation/ascii-quotes-without-utf8", test_ascii_quotes_without_utf8);
  ADD ("/tool/command-line/version", test_version);
  ADD ("/tool/man-page/examples-version-run-items", test_man_page);
  ADD ("/tool/set/devices-as-configured", test_set_devices_as_configured);
  ADD ("/tool/status/mutex-shared-by", test_status_mutex_shared);
  return g_test_run ();
}
