/* test-tool-clean.c: `tessera clean`: dead holders, job folders of ended
 * jobs, temporaries of killed writers, --force and --host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

/* ---------------------------------------------------------------------- */
/* Configuration errors: exit 78 and one message naming file, group, key */

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
  GPid pid = test_dead_pid ();

  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  test_write_file (job_lock, "");
  content = g_strdup_printf ("{\"job_uri\": \"%s/gone\", \"information\": {\"count\": 1}, "
                             "\"process\": {\"type\": \"local\", \"pid\": %d, \"start_time\": 1}}", job_dir, (int) pid);
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

/* ---------------------------------------------------------------------- */
/* Crashes and wrong exits */

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

/* ---------------------------------------------------------------------- */
/* Signals and descriptors, as flock(1) and nohup(1) */

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
  g_autoptr(TestPausePoint) pause = test_pause_point_new (pause_dir, "job-folder-check");
  g_autoptr(GSubprocess) clean = NULL;
  int status, fd;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (empty, 0755), ==, 0);
  fd = hold_in_recorded_folder (folder, job_lock, lock_file);

  /* The swap: a link to the empty folder while the judge starts... */
  g_assert_cmpint (rename (folder, aside), ==, 0);
  g_assert_cmpint (symlink (empty, folder), ==, 0);
  clean = tessera_spawn (f, pause->env, G_SUBPROCESS_FLAGS_STDERR_SILENCE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                         "clean", "--min-age", "0", NULL);
  test_pause_point_wait (pause, 60);
  /* ...and the recorded folder back in its place at the pause. */
  g_assert_cmpint (g_unlink (folder), ==, 0);
  g_assert_cmpint (rename (aside, folder), ==, 0);
  test_pause_point_release (pause);
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

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

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
  g_autofree char *out = NULL, *again = NULL;
  int status;

  test_write_file (f->config, content);
  killed = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                          "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  running = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                           "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  test_wait_ready (killed, 60);
  test_wait_ready (running, 60);
  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  g_assert_cmpuint (count_job_folders (f), ==, 2);

  /* The orphaned command still runs: its folder (its locks.json) stays. */
  g_free (run_capture (f, &status, "clean", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (count_job_folders (f), ==, 2);

  /* It ends (its stdin closes with the wrapper's pipe): the folder goes. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (killed), NULL, NULL);
  g_free (test_read_line (killed, 60));   /* end of file: the command has closed its stdout */
  for (int i = 0; i < 600; i++)
    {
      g_autofree char *pending = NULL;

      g_free (out);
      out = run_capture (f, &status, "clean", NULL);
      g_assert_cmpint (status, ==, 0);
      if (count_job_folders (f) == 1)
        break;
      /* A command that has not exited yet: ask again. */
      pending = test_read_line (running, 0.1);
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

/* ---------------------------------------------------------------------- */
/* All at once */

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
  g_autofree char *ready = test_read_line (run, 60);
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
  test_write_third_host_holder (dead, dead_job_dir, "never-locked", 1);
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
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    {
      ADD ("/tool/clean/job-folder-swapped-while-judged", test_job_folder_swapped_while_judged);
      ADD ("/tool/clean/job-folder-replaced", test_job_folder_replaced);
    }
  ADD ("/tool/clean/job-lock-temporary", test_clean_job_lock_temporary);
  ADD ("/tool/clean/removes-dead-holder", test_clean);
  ADD ("/tool/clean/removes-job-folders-of-ended-jobs", test_clean_job_folders);
  ADD ("/tool/clean/removes-temporaries-of-killed-writers", test_clean_temporaries);
  ADD ("/tool/clean/force-removes-named-holders", test_clean_force);
  ADD ("/tool/clean/host-removes-a-retired-host-s-holdings", test_clean_host);
  ADD ("/tool/clean/force-names-no-link", test_clean_force_not_a_holder);
  ADD ("/tool/clean/refused-text-holds-until-forced", test_refused_text_holds_until_forced);
  ADD ("/tool/clean/writable-cut-short-holds", test_writable_cut_short_holds);
  ADD ("/tool/clean/bad-min-age-is-usage-error", test_bad_min_age);
  return g_test_run ();
}
