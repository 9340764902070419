/* test-tool-run.c: `tessera run` with real processes and files: what it
 * takes and waits for, its options and exit statuses, and what it writes
 * in the pool and its job folder (issue "The tessera command",
 * acceptance 1-4).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

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
  g_autofree char *count = test_read_line (run, 60);
  g_autofree char *message = NULL;

  g_assert_cmpstr (count, ==, "1");
  g_assert_cmpint (test_exit_code (run), ==, 0);
  bad = tessera_spawn (f, relative, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r", "--", "true", NULL);
  message = read_error_line (bad, 60);
  g_assert_nonnull (message);
  g_assert_nonnull (strstr (message, "TESSERA_JOB_FOLDERS"));
  g_assert_cmpint (test_exit_code (bad), !=, 0);
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
  test_let_go (holder);
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
  g_autofree char *locks = test_read_line (run, 60);
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

typedef struct
{
  const char *tasks;   /* /proc/PID/task */
  const char *name;
} ThreadSought;

static gboolean
has_thread (gpointer data)
{
  const ThreadSought *sought = data;
  g_autoptr(GDir) dir = g_dir_open (sought->tasks, 0, NULL);
  const char *tid;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (sought->tasks, tid, "comm", NULL);
      g_autofree char *comm = NULL;

      if (g_file_get_contents (path, &comm, NULL, NULL) && g_str_equal (g_strchomp (comm), sought->name))
        return TRUE;
    }
  return FALSE;
}

/* Whether @process has a thread named @name within @timeout seconds. */
static gboolean
has_thread_within (GSubprocess *process, const char *name, double timeout)
{
  g_autofree char *tasks = g_strdup_printf ("/proc/%s/task", g_subprocess_get_identifier (process));

  return test_poll_until (has_thread, &(ThreadSought) { tasks, name }, timeout);
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
  test_let_go (holder);
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

/* ---------------------------------------------------------------------- */
/* Crashes and wrong exits */

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
      g_autoptr(TestPausePoint) pause = test_pause_point_new (pause_dir, "job-lock-created");
      g_autofree char *mark = g_strdup_printf ("%s/ran-%u", f->tmp, m);
      g_autoptr(GSubprocess) run = NULL;
      g_autoptr(GDir) dir = NULL;
      g_autofree char *job_dir = NULL;
      g_autofree char *job_lock = NULL;
      g_autofree char *out = NULL;
      const char *name;

      /* Its output silenced: a run left at its pause point by a failed
       * test must not keep the test's output open (meson waits for it). */
      if (modes[m][1] != NULL)
        run = tessera_spawn (f, pause->env, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                             "run", modes[m][0], modes[m][1], "--need", "r", "--", "touch", mark, NULL);
      else
        run = tessera_spawn (f, pause->env, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                             "run", modes[m][0], "--need", "r", "--", "touch", mark, NULL);
      test_pause_point_wait (pause, 60);

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

      test_pause_point_release (pause);
      g_assert_true (g_subprocess_wait (run, NULL, NULL));
      g_assert_cmpint (test_exit_code (run), ==, 0);
      g_assert_true (g_file_test (mark, G_FILE_TEST_EXISTS));
    }
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

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
      test_let_go (holder);
      g_assert_cmpuint (test_count_entries (jobs), ==, 1);
      g_assert_true (g_file_test (evil, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (evil), ==, 0);
    }
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
  holder = hold_need (f, NULL, "db");
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

  test_let_go (holder);
  through = test_read_line (waiter, 60);
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
  test_wait_ready (holder, 60);
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
  test_let_go (holder);
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
  if (test_poll_until (test_subprocess_has_ended, process, timeout))
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
  early = test_read_line (waiter, 1.0);
  g_assert_null (early);
  set = run_capture (f, &status, "set", "r", "total=2", NULL);
  g_assert_cmpint (status, ==, 0);
  through = test_read_line (waiter, 60);
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
  test_let_go (holder);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/run/two-runs-serialize", test_runs_serialize);
  ADD ("/tool/run/exit-status-passes-through", test_exit_status);
  ADD ("/tool/run/fencing-token-variable", test_fencing_token_variable);
  ADD ("/tool/run/no-wait-and-timeout-exit-75", test_no_wait_and_timeout);
  ADD ("/tool/run/no-watch-without-a-wait", test_no_watch_without_wait);
  ADD ("/tool/run/reads-manifests-as-needed", test_manifests_read_as_needed);
  ADD ("/tool/run/lock-file-written-once", test_lock_file_written_once);
  ADD ("/tool/run/job-files-removed-through-folder", test_job_files_removed_through_folder);
  ADD ("/tool/run/larger-than-total-says-why", test_larger_than_total_says_why);
  ADD ("/tool/run/says-the-type-s-reason", test_says_the_type_s_reason);
  ADD ("/tool/run/nobody-holds-no-question-mark", test_nobody_holds_no_question_mark);
  ADD ("/tool/run/above-total-fails-at-once-69", test_above_total_fails_at_once);
  ADD ("/tool/run/flock-short-options", test_flock_short_options);
  ADD ("/tool/run/empty-need-is-usage-error", test_empty_need);
  ADD ("/tool/run/bad-timeout-is-usage-error", test_bad_timeout);
  ADD ("/tool/run/command-not-run-127-126", test_command_not_run);
  ADD ("/tool/run/no-space-exits-74", test_enospc);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    ADD ("/tool/run/job-lock-held-when-seen", test_job_lock_held_when_seen);
  ADD ("/tool/run/all-at-once", test_all_at_once);
  ADD ("/tool/run/release-meets-not-strict-json", test_release_meets_not_strict_json);
  ADD ("/tool/run/job-folders-setting", test_job_folders_setting);
  return g_test_run ();
}
