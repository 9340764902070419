/* test-tool-child.c: the command a `tessera run` starts: the signals
 * it gets and those it does not, the descriptors it inherits, and what
 * becomes of it when its wrapper, its lock file or its job lock is lost.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

static void
test_sigterm_reaches_child (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) run =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "sh", "-c",
                   "trap 'echo got-term; exit 3' TERM; echo ready; i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done", NULL);
  g_autofree char *got = NULL;

  test_wait_ready (run, 60);
  g_subprocess_send_signal (run, SIGTERM);
  got = test_read_line (run, 60);
  g_assert_cmpstr (got, ==, "got-term");
  g_assert_cmpint (test_exit_code (run), ==, 3);
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
  g_autofree char *early = NULL;
  g_autofree char *late = NULL;

  test_wait_ready (first, 60);
  g_subprocess_force_exit (first);
  g_assert_cmpint (test_exit_code (first), ==, 128 + SIGKILL);

  second = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "echo", "second", NULL);
  /* The orphaned child still holds r. */
  early = test_read_line (second, 1.0);
  g_assert_null (early);
  /* It ends when its stdin closes; the waiting run is woken by its exit. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (first), NULL, NULL);
  late = test_read_line (second, 60);
  g_assert_cmpstr (late, ==, "second");
  g_assert_cmpint (test_exit_code (second), ==, 0);
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
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  GPid command;

  /* Without the fix it would give up only at its timeout (exit 75). */
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--timeout", "60", "--need", "r", "--", "true", NULL);
  waited = read_error_line (waiter, 60);
  g_assert_nonnull (waited);
  g_assert_nonnull (strstr (waited, "waiting for r"));
  command = test_first_child (atoi (g_subprocess_get_identifier (waiter)));
  g_assert_cmpint (command, >, 0);
  g_assert_cmpint (kill (command, SIGKILL), ==, 0);
  g_assert_cmpint (test_exit_code (waiter), ==, 128 + SIGKILL);
  /* The holder still holds: the waiter never got the share. */
  g_assert_cmpuint (test_count_entries (jobs), ==, 1);
  test_let_go (holder);
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
  GSubprocess *run;

  g_strv_builder_add_many (argv, g_getenv ("TESSERA_TOOL"), "--config", f->config, "run", "--need", "r", "--",
                           NULL);
  g_strv_builder_addv (argv, (const char **) command);
  args = g_strv_builder_end (argv);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_set_child_setup (launcher, ignore_sighup, NULL, NULL);
  run = g_subprocess_launcher_spawnv (launcher, (const char * const *) args, &error);
  g_assert_no_error (error);
  test_wait_ready (run, 60);
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
  after = test_read_line (run, 60);
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
  after = test_read_line (run, 60);
  g_assert_cmpstr (after, ==, NULL);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGTERM);
}

/* What a test command starts with: SIGHUP, SIGPIPE (which the wrapper
 * ignores itself), SIGUSR1 and SIGUSR2 ignored when @data, else at their
 * default. Not SIGSEGV: a sanitizer build of the wrapper takes it over
 * before main(), so what it was at start is gone before Tessera looks. */
static void
set_start_signals (gpointer data)
{
  const int signals[] = { SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2 };

  for (guint i = 0; i < G_N_ELEMENTS (signals); i++)
    signal (signals[i], data != NULL ? SIG_IGN : SIG_DFL);
}

/* The SigIgn mask of `cat /proc/self/status` started as set_start_signals()
 * says (@ignored), through `tessera run --need @need` unless @need is NULL;
 * @hide_proc: the run sees no /proc (an empty tmpfs over it, in a mount
 * namespace of its own), which the command mounts again to be read. */
static guint64
command_ignored_signals (Fixture *f, gboolean ignored, const char *need, gboolean hide_proc)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GStrvBuilder) argv = g_strv_builder_new ();
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) args = NULL;
  const char *line;

  if (hide_proc)
    g_strv_builder_add_many (argv, "unshare", "--mount", "sh", "-c", "mount -t tmpfs tmpfs /proc && exec \"$@\"",
                             "sh", NULL);
  if (need != NULL)
    g_strv_builder_add_many (argv, g_getenv ("TESSERA_TOOL"), "--config", f->config, "run", "--need", need, "--",
                             NULL);
  if (hide_proc)
    g_strv_builder_add_many (argv, "sh", "-c", "mount -t proc proc /proc && exec cat /proc/self/status", NULL);
  else
    g_strv_builder_add_many (argv, "cat", "/proc/self/status", NULL);
  args = g_strv_builder_end (argv);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_set_child_setup (launcher, set_start_signals, ignored ? f : NULL, NULL);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) args, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  line = strstr (out, "\nSigIgn:");
  g_assert_nonnull (line);
  g_test_message ("%s, %s%s: %.24s", ignored ? "ignored" : "default", need ? need : "directly",
                  hide_proc ? " without /proc" : "", line + 1);
  return g_ascii_strtoull (line + strlen ("\nSigIgn:"), NULL, 16);
}

/* The command starts with the very signals ignored that the wrapper
 * started with, no more (SIGPIPE, which the wrapper ignores, is at its
 * default again), no fewer; on a lease pool too, whose command a watcher
 * forks; and without /proc, where the wrapper asks sigaction() for each
 * signal (not under a sanitizer, which needs /proc to start at all). */
static void
test_start_signals_reach_command (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n\n"
                                              "[resource leased]\ntype=countertoken\npath=%s/leased\ntotal=1\n"
                                              "host-lease=30\n", f->tmp, f->tmp);
  const char *needs[] = { "r", "leased" };
  const guint64 hup = G_GUINT64_CONSTANT (1) << (SIGHUP - 1), pipe = G_GUINT64_CONSTANT (1) << (SIGPIPE - 1);

  test_write_file (f->config, content);
  for (int ignored = 0; ignored < 2; ignored++)
    {
      guint64 direct = command_ignored_signals (f, ignored, NULL, FALSE);

      g_assert_cmpuint (direct & (hup | pipe), ==, ignored ? hup | pipe : 0);
      for (guint n = 0; n < G_N_ELEMENTS (needs); n++)
        g_assert_cmphex (command_ignored_signals (f, ignored, needs[n], FALSE), ==, direct);
      if (getuid () == 0 && !test_under_sanitizer ())
        g_assert_cmphex (command_ignored_signals (f, ignored, "r", TRUE), ==, direct);
    }
  if (getuid () != 0)
    g_test_message ("without /proc: not checked, hiding /proc needs root");
  else if (test_under_sanitizer ())
    g_test_message ("without /proc: not checked, a sanitizer build cannot start without it");
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
  test_wait_ready (run, 60);
  g_assert_cmpint (write (master, "\003", 1), ==, 1);   /* Ctrl-C */
  first = test_read_line (run, 60);
  g_assert_cmpstr (first, ==, "int");
  /* A forwarded copy would follow within this second. */
  second = test_read_line (run, 1.0);
  g_assert_cmpstr (second, ==, NULL);
  g_subprocess_send_signal (run, SIGTERM);
  count = test_read_line (run, 60);
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
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *line = NULL;
  g_autofree char *more = NULL;
  gint64 start;
  int status;

  test_wait_ready (holder, 60);
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

  test_let_go (holder);
  /* The interrupted waiter left nothing held. */
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* ---------------------------------------------------------------------- */
/* All at once */

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
  g_autofree char *ready = test_read_line (run, 60);
  g_autofree char *path = find_lock_file (f);
  g_autofree char *said = NULL;

  g_assert_cmpstr (ready, ==, "ready");
  g_assert_nonnull (path);
  if (rewrite)
    {
      /* In place: same inode, other content. */
      test_write_in_place (path, "{\"job_uri\": \"/nowhere/job\", \"information\": {\"count\": 0}}");
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

static gboolean
job_lock_free (gpointer lock_file)
{
  return !job_lock_held (lock_file);
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
  g_autofree char *ready = test_read_line (run, 60);
  g_autofree char *path = find_lock_file (f);

  g_assert_cmpstr (ready, ==, "ready");
  g_assert_nonnull (path);
  g_assert_true (job_lock_held (path));
  g_subprocess_force_exit (run);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGKILL);
  /* The wrapper is gone; its command still runs and still holds. */
  g_assert_true (job_lock_held (path));
  /* The command ends when its stdin closes: then nobody holds. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (run), NULL, NULL);
  test_wait_until (job_lock_free, path, 60, "%s is still held", path);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/run/sigterm-reaches-child", test_sigterm_reaches_child);
  ADD ("/tool/run/wrapper-killed-child-keeps-holding", test_wrapper_killed);
  ADD ("/tool/run/command-killed-while-waiting", test_command_killed_while_waiting);
  ADD ("/tool/run/lost-lock-file-warns", test_lost_lock_file_warns);
  ADD ("/tool/run/command-keeps-the-job-lock", test_command_keeps_the_job_lock);
  ADD ("/tool/run/lost-lock-file-ends-the-command", test_lost_lock_file_ends);
  ADD ("/tool/run/rewritten-lock-file-warns", test_rewritten_lock_file_warns);
  ADD ("/tool/run/rewritten-lock-file-ends-the-command", test_rewritten_lock_file_ends);
  ADD ("/tool/run/inherited-fd-reaches-command", test_inherited_fd);
  ADD ("/tool/run/ignored-signal-stays-ignored", test_ignored_signal_stays_ignored);
  ADD ("/tool/run/ignored-signal-not-forwarded", test_ignored_signal_not_forwarded);
  ADD ("/tool/run/start-signals-reach-command", test_start_signals_reach_command);
  ADD ("/tool/run/one-ctrl-c-one-sigint", test_one_ctrl_c_one_sigint);
  ADD ("/tool/run/waiting-line-and-ctrl-c", test_waiting_line_and_ctrl_c);
  return g_test_run ();
}
