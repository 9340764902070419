/* test-utils.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"
#include "tessera-proc.h"

#include <tessera/tessera.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <gio/gunixinputstream.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

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

char *
test_make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("tessera-test-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

void
test_remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            test_remove_tree (child);
          else
            g_unlink (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

void
test_write_file (const char *path, const char *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (path);

  g_mkdir_with_parents (dir, 0777);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* A valid lock file in @folder's jobs/ naming this (live) test process,
 * holding @count; returns its path. @whole_spec: its process is this
 * process's whole spec, naming this host (on a lock-less FUSE mount, one
 * that names no host may come from another, and the pool is refused);
 * otherwise a bare local pid, as the races tests want. */
char *
test_plant_live_holder (const char *folder, int count, gboolean whole_spec)
{
  g_autofree char *job_uri = g_build_filename (folder, "planted-job", NULL);
  char *path = g_build_filename (folder, "jobs", "planted@1.json", NULL);
  g_autofree char *spec_text = NULL;
  g_autofree char *json = NULL;

  if (whole_spec)
    {
      g_autoptr(TesseraProcess) self = tessera_process_new_self ();
      g_autoptr(JsonNode) spec = tessera_process_to_json (self);

      spec_text = json_to_string (spec, FALSE);
    }
  else
    spec_text = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) getpid ());
  json = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": %d}, "
                          "\"process\": %s}", job_uri, count, spec_text);
  test_write_file (path, json);
  return path;
}

/* Writes @jobs/<name>@id.json for a job whose URI is @tmp/xp/<name>/task,
 * with the given information and process (either may be NULL); returns
 * its path. @job_folder: what of the job's folder is there (a judge can
 * open a job lock that is). */
char *
test_write_lock_file (const char *tmp, const char *jobs, const char *name, const char *information,
                      const char *process, TestJobFolder job_folder)
{
  g_autofree char *job_dir = g_build_filename (tmp, "xp", name, NULL);
  g_autofree char *job_uri = g_build_filename (job_dir, "task", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, "task.lock", NULL);
  g_autofree char *file_name = g_strconcat (name, "@id.json", NULL);
  char *path = g_build_filename (jobs, file_name, NULL);
  g_autoptr(GString) content = g_string_new (NULL);

  if (job_folder != TEST_JOB_FOLDER_NONE)
    g_mkdir_with_parents (job_dir, 0777);
  /* One a helper locks stays. */
  if (job_folder == TEST_JOB_FOLDER_WITH_LOCK && !g_file_test (job_lock, G_FILE_TEST_EXISTS))
    test_write_file (job_lock, "");
  g_string_append_printf (content, "{\"job_uri\": \"%s\"", job_uri);
  if (information != NULL)
    g_string_append_printf (content, ", \"information\": %s", information);
  if (process != NULL)
    g_string_append_printf (content, ", \"process\": %s", process);
  g_string_append (content, "}");
  test_write_file (path, content->str);
  return path;
}

/* Writes @lock_file for a holder of @count units on a third host
 * (third-node, pid 5, a boot of its own) whose job, @job_dir/@task, has
 * its job lock here and free: the verdict on a holder finds it dead,
 * though its pid says nothing here. */
void
test_write_third_host_holder (const char *lock_file, const char *job_dir, const char *task, int count)
{
  g_autofree char *job_lock_name = g_strconcat (task, ".lock", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, job_lock_name, NULL);
  g_autofree char *text = NULL;

  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  test_write_file (job_lock, "");
  text = g_strdup_printf ("{\"job_uri\": \"%s/%s\", \"information\": {\"count\": %d}, "
                          "\"process\": {\"type\": \"local\", \"pid\": 5, \"start_time\": 1, "
                          "\"host\": \"third-node\", \"boot_id\": \"00000000-dead-beef-0000-000000000001\"}}",
                          job_dir, task, count);
  test_write_file (lock_file, text);
}

void
test_set_file_age (const char *path, double seconds_ago)
{
  struct timeval tv[2];
  gint64 when = g_get_real_time () - (gint64) (seconds_ago * G_USEC_PER_SEC);

  tv[0].tv_sec = tv[1].tv_sec = when / G_USEC_PER_SEC;
  tv[0].tv_usec = tv[1].tv_usec = when % G_USEC_PER_SEC;
  g_assert_cmpint (utimes (path, tv), ==, 0);
}

/* Writes @text over @path in place, as Python's json.dump does and as
 * a co-user can in a file of hers: the same file (no link followed),
 * truncated, then written and closed. */
void
test_write_in_place (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
  g_assert_cmpint (close (fd), ==, 0);
}

/* Rewrites @path in place (the same inode) with @text, then puts its
 * times back: only its text and ctime change. */
void
test_rewrite_keeping_stat (const char *path, const char *text)
{
  struct stat before, after;
  struct timespec times[2];

  g_assert_cmpint (stat (path, &before), ==, 0);
  test_write_in_place (path, text);
  /* Both times: bindfs drops a change of the mtime alone. */
  times[0] = before.st_atim;
  times[1] = before.st_mtim;
  g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
  g_assert_cmpint (stat (path, &after), ==, 0);
  g_assert_cmpint (after.st_ino, ==, before.st_ino);
  g_assert_cmpint (after.st_size, ==, before.st_size);
  g_assert_cmpint (after.st_mtim.tv_sec, ==, before.st_mtim.tv_sec);
  g_assert_cmpint (after.st_mtim.tv_nsec, ==, before.st_mtim.tv_nsec);
}

static guint warnings_seen;

static void
count_tessera_warning (const char *log_domain, GLogLevelFlags level, const char *message, gpointer data)
{
  if (level & G_LOG_LEVEL_WARNING)
    g_atomic_int_inc (&warnings_seen);
  if (g_test_verbose ())
    g_test_message ("expected warning: %s", message);
}

/* Bad-input tests expect Tessera to warn instead of failing: count the
 * warnings rather than aborting on them (warnings of other domains stay
 * fatal). */
void
test_expect_warnings (void)
{
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_fatal_mask ("Tessera", G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_handler ("Tessera", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, count_tessera_warning, NULL);
}

guint
test_warning_count (void)
{
  return g_atomic_int_get (&warnings_seen);
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

/* Entries of a folder (0 when it cannot be read): open descriptors in
 * /proc/self/fd, threads in /proc/self/task, files left somewhere. */
guint
test_count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* The scheduler's side of locks.json: @lock in a set of its own, the job
 * @job started by this process, the set saved to @locks_path. Returns
 * the set (which holds @lock). */
TesseraDynamicDependencyLocks *
test_locks_json_save (TesseraDynamicDependencyLock *lock, TesseraJob *job, const char *locks_path)
{
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(GError) error = NULL;

  tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (lock));
  g_assert_true (tessera_dynamic_dependency_locks_job_started (locks, job, self, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_dynamic_dependency_locks_save (locks, locks_path, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&locks);
}

/* The hand-over: the scheduler detaches @lock, and the job process
 * loads locks.json at @locks_path (one lock) and takes its holding. */
TesseraJobDependencyLocks *
test_locks_json_take_over (TesseraDynamicDependencyLock *lock, const char *locks_path)
{
  g_autoptr(TesseraJobDependencyLocks) job_locks = NULL;
  g_autoptr(GError) error = NULL;

  tessera_lock_detach (TESSERA_LOCK (lock));
  job_locks = tessera_job_dependency_locks_load (locks_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tessera_job_dependency_locks_get_locks (job_locks)->len, ==, 1);
  g_assert_true (tessera_job_dependency_locks_acquire (job_locks, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&job_locks);
}

/* The paths of the NAME.json files in @folder (a pool's lock files in
 * its jobs/, a queue's entries), in the folder's order; none when it
 * cannot be read. */
GPtrArray *
test_list_json_files (const char *folder)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      g_ptr_array_add (paths, g_build_filename (folder, name, NULL));
  return paths;
}

/* The path of the one NAME.json file in @folder (a pool's jobs/ with one
 * holder): the test fails when there is none or more than one. */
char *
test_only_json_file (const char *folder)
{
  g_autoptr(GPtrArray) paths = test_list_json_files (folder);

  if (paths->len != 1)
    g_error ("%s holds %u .json files, not one", folder, paths->len);
  return g_strdup (g_ptr_array_index (paths, 0));
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

/* Mounts this test process makes from now on are its own: they are not
 * seen by the rest of the machine and go with the process, also when a
 * test fails before its own umount (a loop mount left behind holds its
 * image and device for good). The children inherit the namespace, so
 * they see the mounts. unshare() moves only the calling thread, so this
 * is called first in main(), before any thread (GLib's worker, a
 * resource's) exists. Returns FALSE, saying why, without the privilege
 * (CAP_SYS_ADMIN: root, as in CI, but not root in a default container). */
gboolean
test_try_private_mounts (void)
{
  g_autofree char *status = NULL;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) && strstr (status, "\nThreads:\t1\n") == NULL)
    g_error ("test_private_mounts() must come before any thread is started");
  if (unshare (CLONE_NEWNS) != 0)
    {
      g_printerr ("# unshare(CLONE_NEWNS): %s: the tests that mount will fail\n", g_strerror (errno));
      return FALSE;
    }
  /* A type string, though the kernel ignores it here: valgrind checks it. */
  if (mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
    g_error ("making / private: %s", g_strerror (errno));
  return TRUE;
}

/* The same for a test program whose every test mounts: fails without the
 * privilege. */
void
test_private_mounts (void)
{
  if (!test_try_private_mounts ())
    g_error ("these tests mount: run them as root, as CI does");
}

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

static gboolean
mounted (gpointer needle)
{
  g_autofree char *mounts = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/mountinfo", &mounts, NULL, NULL));
  return strstr (mounts, needle) != NULL;
}

/* Until @path is a mount point in /proc/self/mountinfo (a minute at most). */
static void
wait_for_mount (const char *path)
{
  g_autofree char *needle = g_strdup_printf (" %s ", path);

  test_wait_until (mounted, needle, 60, "%s is not mounted", path);
}

/* A FUSE view (bindfs) of @real at @view, both made if needed, with the
 * FUSE daemon in the foreground and ended with this process, so that a
 * failing test leaves nothing behind (with test_private_mounts(), not
 * even the mount). Returns the daemon, for test_unmount_fuse_view(). */
GSubprocess *
test_mount_fuse_view (const char *real, const char *view)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  GSubprocess *bindfs;

  g_mkdir_with_parents (real, 0777);
  g_mkdir_with_parents (view, 0777);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  bindfs = g_subprocess_launcher_spawn (launcher, &error, "bindfs", "-f", "--no-allow-other", real, view, NULL);
  g_assert_no_error (error);
  wait_for_mount (view);
  return bindfs;
}

/* Unmounts @view; its daemon @bindfs then ends, and is freed. */
void
test_unmount_fuse_view (const char *view, GSubprocess *bindfs)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (umount2 (view, 0), ==, 0);
  g_assert_true (g_subprocess_wait (bindfs, NULL, &error));
  g_assert_no_error (error);
  g_object_unref (bindfs);
}

/* Waits (up to @timeout_s, generous) until @path exists. */
/* The sleep between two looks starts short, for what comes at once, and
 * grows to 50 ms, so that a long wait does not load the machine. */
gboolean
test_poll_until (TestCondition done, gpointer data, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  gulong pause_us = 2000;

  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        return done (data);
      g_usleep (pause_us);
      pause_us = MIN (pause_us * 2, 50 * 1000);
    }
  return TRUE;
}

void
test_wait_until (TestCondition done, gpointer data, double timeout_s, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list ap;

  if (test_poll_until (done, data, timeout_s))
    return;
  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_error ("%s (waited %.0f s)", what, timeout_s);
}

gboolean
test_flag_is_set (gpointer flag)
{
  return g_atomic_int_get ((gint *) flag) != 0;
}

gboolean
test_subprocess_has_ended (gpointer process)
{
  return g_subprocess_get_identifier (process) == NULL;
}

gboolean
test_pid_has_ended (gpointer pid)
{
  return tessera_proc_has_ended (GPOINTER_TO_INT (pid));
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

void
test_wait_for_file (const char *path, double timeout_s)
{
  test_wait_until (file_exists, (gpointer) path, timeout_s, "%s did not appear", path);
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

/* ---------------------------------------------------------------------- */
/* Real users sharing a pool (CI is root; without root the test fails). */

TestUsers *
test_users_new (const char *prefix)
{
  TestUsers *users = g_new0 (TestUsers, 1);
  struct group *gr;

  if (getuid () != 0)
    g_error ("this test creates users and a group: run it as root (CI does)");
  /* The whole pid: test programs of two build trees run side by side.
   * A run that aborted leaves its names behind, and pids come round
   * again, so a taken name is passed over, never reused. */
  for (guint n = 0; users->group == NULL; n++)
    {
      g_autofree char *tail = n == 0 ? g_strdup ("") : g_strdup_printf ("x%u", n);
      g_autofree char *group = g_strdup_printf ("%sg%d%s", prefix, (int) getpid (), tail);

      for (int i = 0; i < 2; i++)
        {
          g_free (users->users[i]);
          users->users[i] = g_strdup_printf ("%su%d%s%c", prefix, (int) getpid (), tail, 'a' + i);
        }
      if (getgrnam (group) == NULL && getpwnam (users->users[0]) == NULL && getpwnam (users->users[1]) == NULL)
        users->group = g_steal_pointer (&group);
    }
  test_run_or_fail ((const char *[]) { "groupadd", users->group, NULL });
  for (int i = 0; i < 2; i++)
    {
      test_run_or_fail ((const char *[]) { "useradd", "-M", "-N", "-g", users->group, "-s", "/bin/sh",
                                           users->users[i], NULL });
    }
  gr = getgrnam (users->group);
  if (gr == NULL)
    g_error ("group %s was not created", users->group);
  users->gid = gr->gr_gid;
  return users;
}

void
test_users_free (TestUsers *users)
{
  if (users == NULL)
    return;
  for (int i = 0; i < 2; i++)
    {
      test_run_or_fail ((const char *[]) { "userdel", users->users[i], NULL });
      g_free (users->users[i]);
    }
  test_run_or_fail ((const char *[]) { "groupdel", users->group, NULL });
  g_free (users->group);
  g_free (users);
}

/* @text with every @token replaced by @value. */
char *
test_substitute (const char *text, const char *token, const char *value)
{
  g_auto(GStrv) parts = g_strsplit (text, token, -1);

  return g_strjoinv (value, parts);
}

/* Two real users of a new group, and a site's shared folder for them in
 * a new temporary folder (made 0755): group-writable, setgid, the
 * group's; beside it a configuration file @config_text (@DIR@ standing
 * for the shared folder) that every user may read. */
TestGroupPool *
test_group_pool_new (const char *prefix, const char *config_text)
{
  TestGroupPool *gp = g_new0 (TestGroupPool, 1);
  g_autofree char *text = NULL;

  gp->users = test_users_new (prefix);
  gp->tmp = test_make_tmpdir ();
  gp->pool = g_build_filename (gp->tmp, "pools", NULL);
  g_assert_cmpint (chmod (gp->tmp, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (gp->pool, 0755), ==, 0);
  g_assert_cmpint (chown (gp->pool, 0, gp->users->gid), ==, 0);
  g_assert_cmpint (chmod (gp->pool, 02775), ==, 0);
  text = test_substitute (config_text, "@DIR@", gp->pool);
  gp->config = g_build_filename (gp->tmp, "tessera.conf", NULL);
  test_write_file (gp->config, text);
  g_assert_cmpint (chmod (gp->config, 0644), ==, 0);
  return gp;
}

void
test_group_pool_free (TestGroupPool *gp)
{
  if (gp == NULL)
    return;
  test_users_free (gp->users);
  test_remove_tree (gp->tmp);
  g_free (gp->tmp);
  g_free (gp->pool);
  g_free (gp->config);
  g_free (gp);
}

/* The uid of @user; a missing user is an error of the test's set-up. */
guint
test_uid_of (const char *user)
{
  struct passwd *pw = getpwnam (user);

  if (pw == NULL)
    g_error ("no user %s", user);
  return (guint) pw->pw_uid;
}

/* A folder @user owns (0700), for its state and its own files. */
char *
test_user_folder (const char *parent, const char *user)
{
  char *folder = g_build_filename (parent, user, NULL);

  if (!g_file_test (folder, G_FILE_TEST_IS_DIR))
    {
      struct passwd *pw = getpwnam (user);

      g_assert_nonnull (pw);
      g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
      g_assert_cmpint (chown (folder, pw->pw_uid, pw->pw_gid), ==, 0);
    }
  return folder;
}

/* Appends to @argv: `runuser -u USER -- timeout -s KILL T sh -c 'umask
 * 022; exec "$@"' sh`, so that what follows runs as @user with the umask
 * of most accounts and is killed past @timeout_s (status 137). */
void
test_argv_as_user (GPtrArray *argv, const char *user, double timeout_s)
{
  const char *prefix[] = { "runuser", "-u", user, "--", "timeout", "-s", "KILL", NULL, "sh", "-c",
                           "umask 022; exec \"$@\"", "sh" };

  for (guint i = 0; i < G_N_ELEMENTS (prefix); i++)
    g_ptr_array_add (argv, prefix[i] ? g_strdup (prefix[i]) : g_strdup_printf ("%.0f", timeout_s));
}

/* A launcher for a `tessera` that finds no configuration anywhere: its
 * XDG configuration folders are @no_config (a folder that is not there)
 * and TESSERA_CONFIG is unset; its state goes to @state. */
GSubprocessLauncher *
test_launcher_without_config (GSubprocessFlags flags, const char *state, const char *no_config)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", no_config, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_DIRS", no_config, TRUE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_CONFIG");
  return launcher;
}

/* Appends the command `tessera --config CONFIG` as @user (see
 * test_argv_as_user()), with its state (and home) in @state. */
void
test_argv_tessera_as (GPtrArray *argv, const char *user, const char *state, const char *config, double timeout_s)
{
  test_argv_as_user (argv, user, timeout_s);
  test_argv_tessera (argv, state, config);
}

/* Appends the command `tessera --config CONFIG` with its state (and home)
 * in @state. */
void
test_argv_tessera (GPtrArray *argv, const char *state, const char *config)
{
  test_argv_tessera_env (argv, state, config, NULL);
}

/* As test_argv_tessera(), @config NULL: no --config and TESSERA_CONFIG
 * unset (the command finds its configuration itself); @env: NAME=VALUE
 * set after the state's (NULL: none). */
void
test_argv_tessera_env (GPtrArray *argv, const char *state, const char *config, const char * const *env)
{
  g_ptr_array_add (argv, g_strdup ("env"));
  if (config == NULL)
    test_argv_append (argv, (const char *[]) { "-u", "TESSERA_CONFIG", NULL });
  g_ptr_array_add (argv, g_strdup_printf ("XDG_STATE_HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
  if (env != NULL)
    test_argv_append (argv, env);
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  if (config != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--config"));
      g_ptr_array_add (argv, g_strdup (config));
    }
}

/* Runs `tessera ARGS…` (@first, then the arguments after it up to a
 * NULL) to its end as test_argv_tessera_env() starts it; its exit status,
 * its output and error output in @out and @err as
 * test_run_capture_text() gives them. */
int
test_run_tessera_va (const char *state, const char *config, const char * const *env, char **out, char **err,
                     const char *first, va_list ap)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera_env (argv, state, config, env);
  test_argv_end_va (argv, first, ap);
  return test_run_capture_text (argv, out, err);
}

int
test_run_tessera (const char *state, const char *config, const char * const *env, char **out, char **err,
                  const char *first, ...)
{
  va_list ap;
  int status;

  va_start (ap, first);
  status = test_run_tessera_va (state, config, env, out, err, first, ap);
  va_end (ap);
  return status;
}

/* Appends `tessera --config CONFIG` of the group pool @gp as @user (NULL:
 * root, not wrapped), its state (and home) @states[0] or [1] as @user is
 * the group's first or second user, root's GP/root-state (made if need
 * be). With @own_cache, a user's cache (its lock file index) is its own,
 * STATE/cache, as at home. @env: NAME=VALUE set for the command (NULL:
 * none). A user's command is killed past @timeout_s (see
 * test_argv_as_user()). */
void
test_group_pool_argv_tessera (GPtrArray *argv, TestGroupPool *gp, char * const *states, const char *user,
                              gboolean own_cache, const char * const *env, double timeout_s)
{
  g_autofree char *root_state = NULL;
  const char *state;

  if (user == NULL)
    {
      root_state = g_build_filename (gp->tmp, "root-state", NULL);
      g_assert_cmpint (g_mkdir_with_parents (root_state, 0700), ==, 0);
      state = root_state;
    }
  else
    {
      test_argv_as_user (argv, user, timeout_s);
      state = g_str_equal (user, gp->users->users[0]) ? states[0] : states[1];
      if (own_cache)
        {
          g_ptr_array_add (argv, g_strdup ("env"));
          g_ptr_array_add (argv, g_strdup_printf ("XDG_CACHE_HOME=%s/cache", state));
        }
    }
  if (env != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("env"));
      test_argv_append (argv, env);
    }
  test_argv_tessera (argv, state, gp->config);
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

static gboolean
finalized (gpointer weak)
{
  g_autoptr(GObject) alive = g_weak_ref_get (weak);

  return alive == NULL;
}

/* Drops the caller's reference to a resource and waits (up to 60 s) until
 * it is finalized: the poller's thread may hold it a moment longer
 * (draining its inotify events), and it must not see the test remove its
 * folder (it would warn that informations.json disappeared). */
void
test_drop_resource (gpointer resource_location)
{
  GObject **resource = resource_location;
  GWeakRef weak;

  g_weak_ref_init (&weak, *resource);
  g_clear_object (resource);
  test_wait_until (finalized, &weak, 60, "a dropped resource was not finalized");
  g_weak_ref_clear (&weak);
}

/* Appends to @argv the start of a command run on the simulated host
 * @host, made in @parent/HOST: its own UTS, pid and mount namespaces, its
 * machine id, boot id (both derived from @host) and /var/tmp (everyone's,
 * as a real one is) bind-mounted, /proc its own, and our host name (the
 * machines all called alike). The shell commands @setup (each ending in
 * "; ", or "") run there first, then what follows in @argv. Namespaces
 * on one kernel share locks, as NFSv4 or Lustre `flock` hosts do through
 * the file server. */
void
test_argv_simulated_host (GPtrArray *argv, const char *parent, const char *host, const char *setup)
{
  g_autofree char *root = g_build_filename (parent, host, NULL);
  g_autofree char *machine_id = g_build_filename (root, "machine-id", NULL);
  g_autofree char *boot_id = g_build_filename (root, "boot_id", NULL);
  g_autofree char *var_tmp = g_build_filename (root, "var-tmp", NULL);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_MD5, host, -1);
  g_autofree char *boot = g_strdup_printf ("%.8s-0000-4000-8000-%.12s\n", digest, digest + 8);
  g_autofree char *line = g_strconcat (digest, "\n", NULL);
  const char *unshare[] = { "unshare", "--uts", "--pid", "--mount", "--fork", "--propagation", "private",
                            "sh", "-c" };

  g_assert_cmpint (g_mkdir_with_parents (var_tmp, 0777), ==, 0);
  g_assert_cmpint (chmod (var_tmp, 01777), ==, 0);
  test_write_file (machine_id, line);
  test_write_file (boot_id, boot);
  for (guint i = 0; i < G_N_ELEMENTS (unshare); i++)
    g_ptr_array_add (argv, g_strdup (unshare[i]));
  g_ptr_array_add (argv, g_strdup_printf ("set -e; hostname '%s'; mount -t proc proc /proc; "
                                          "mount --bind '%s' /etc/machine-id; "
                                          "mount --bind '%s' /proc/sys/kernel/random/boot_id; "
                                          "mount --bind '%s' /var/tmp; %sexec \"$@\"",
                                          g_get_host_name (), machine_id, boot_id, var_tmp, setup));
  g_ptr_array_add (argv, g_strdup ("sh"));
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
 * must be 0. */
char *
test_output_of (GSubprocess *process)
{
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  return out;
}

/* The JSON document in the file @path, which must read. */
JsonNode *
test_parse_json_file (const char *path)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
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

/* The folder @tmp made, nothing of the pool's. */
void
test_pool_fixture_set_up (TestPoolFixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
}

/* And the pool's jobs/ made by hand, with an informations.json of one
 * unit. */
void
test_pool_fixture_set_up_one_unit (TestPoolFixture *f, gconstpointer data)
{
  g_autofree char *info = NULL;

  test_pool_fixture_set_up (f, data);
  info = g_build_filename (f->folder, "informations.json", NULL);
  g_mkdir_with_parents (f->jobs, 0777);
  test_write_file (info, "{\"total\": 1}");
}

void
test_pool_fixture_tear_down (TestPoolFixture *f, gconstpointer data)
{
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->folder);
  g_free (f->jobs);
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

/* The `tessera` that @argv starts (not ended yet) as `tessera run --need
 * @need -- sh -c 'echo held; exec cat'`, once it says "held" (within
 * @timeout_s): it holds until its input is closed. */
Helper *
test_hold_argv (GPtrArray *argv, const char *need, double timeout_s)
{
  Helper *holder;

  test_argv_end (argv, (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo held; exec cat", NULL });
  holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (holder, "held", timeout_s);
  return holder;
}

char *
test_parse_openmetrics (const char *metrics)
{
  static const char parse[] =
    "import sys\n"
    "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
    "for family in text_string_to_metric_families(sys.stdin.read()):\n"
    "    for s in family.samples:\n"
    "        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
    "        print('%s %s %s {%s} %g' % (family.type, family.name, s.name, labels, s.value))\n";

  return test_python_output (metrics, parse, NULL);
}

JsonObject *
test_status_first_resource (JsonNode *root)
{
  JsonArray *resources;

  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  resources = json_object_get_array_member (json_node_get_object (root), "resources");
  g_assert_nonnull (resources);
  g_assert_cmpuint (json_array_get_length (resources), >, 0);
  return json_array_get_object_element (resources, 0);
}

JsonObject *
test_status_only_resource (JsonNode *root)
{
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (root), "resources")),
                    ==, 1);
  return test_status_first_resource (root);
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

JsonNode *
test_queue_find_reservation (const char *queue)
{
  g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (queue, name, NULL);
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonNode *root;

      if (!g_str_has_suffix (name, ".json") || !json_parser_load_from_file (parser, path, NULL))
        continue;
      root = json_parser_get_root (parser);
      if (JSON_NODE_HOLDS_OBJECT (root) &&
          json_object_get_boolean_member_with_default (json_node_get_object (root), "reserve", FALSE))
        return json_node_copy (root);
    }
  return NULL;
}

typedef struct
{
  const char *folder;
  const char *prefix;
  const char *suffix;
  const char * const *others;
  JsonNode *reservation;
  char *entry;
} QueueWait;

static gboolean
queue_has_reservation (gpointer data)
{
  QueueWait *wait = data;

  wait->reservation = test_queue_find_reservation (wait->folder);
  return wait->reservation != NULL;
}

JsonNode *
test_queue_wait_reservation (const char *queue, double timeout_s)
{
  QueueWait wait = { .folder = queue };

  test_wait_until (queue_has_reservation, &wait, timeout_s, "no reserving entry in %s", queue);
  return wait.reservation;
}

static gboolean
has_entry (gpointer data)
{
  QueueWait *wait = data;
  g_autoptr(GDir) dir = g_dir_open (wait->folder, 0, NULL);
  const char *name;

  while (dir != NULL && wait->entry == NULL && (name = g_dir_read_name (dir)) != NULL)
    if ((wait->prefix == NULL || g_str_has_prefix (name, wait->prefix)) && g_str_has_suffix (name, wait->suffix) &&
        (wait->others == NULL || !g_strv_contains (wait->others, name)))
      wait->entry = g_strdup (name);
  return wait->entry != NULL;
}

char *
test_wait_entry (const char *folder, const char *prefix, const char *suffix, const char * const *others,
                 double timeout_s)
{
  QueueWait wait = { .folder = folder, .prefix = prefix, .suffix = suffix, .others = others };

  test_wait_until (has_entry, &wait, timeout_s, "no entry %s…%s in %s", prefix ? prefix : "", suffix, folder);
  return wait.entry;
}

TestPausePoint *
test_pause_point_new (const char *dir, const char *name)
{
  TestPausePoint *point = g_new0 (TestPausePoint, 1);

  point->name = g_strdup (name);
  point->dir = g_strdup (dir);
  point->reached = g_strdup_printf ("%s/%s.reached", dir, name);
  point->go = g_strdup_printf ("%s/%s.go", dir, name);
  point->env[0] = "TESSERA_PAUSE_AT";
  point->env[1] = point->name;
  point->env[2] = "TESSERA_PAUSE_DIR";
  point->env[3] = point->dir;
  point->env[4] = NULL;
  g_assert_cmpint (g_mkdir_with_parents (dir, 0777), ==, 0);
  g_unlink (point->reached);
  return point;
}

void
test_pause_point_free (TestPausePoint *point)
{
  g_free (point->name);
  g_free (point->dir);
  g_free (point->reached);
  g_free (point->go);
  g_free (point);
}

void
test_pause_point_set_launcher (TestPausePoint *point, GSubprocessLauncher *launcher)
{
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_AT", point->name, TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_DIR", point->dir, TRUE);
}

void
test_pause_point_argv_env (TestPausePoint *point, GPtrArray *argv)
{
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_AT=%s", point->name));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_DIR=%s", point->dir));
}

void
test_pause_point_arm_here (TestPausePoint *point)
{
  g_setenv ("TESSERA_PAUSE_AT", point->name, TRUE);
  g_setenv ("TESSERA_PAUSE_DIR", point->dir, TRUE);
}

void
test_pause_points_disarm_here (void)
{
  g_unsetenv ("TESSERA_PAUSE_AT");
  g_unsetenv ("TESSERA_PAUSE_DIR");
}

gboolean
test_pause_point_is_reached (TestPausePoint *point)
{
  return g_file_test (point->reached, G_FILE_TEST_EXISTS);
}

void
test_pause_point_wait (TestPausePoint *point, double timeout_s)
{
  test_wait_for_file (point->reached, timeout_s);
}

void
test_pause_point_release (TestPausePoint *point)
{
  test_write_file (point->go, "");
}
