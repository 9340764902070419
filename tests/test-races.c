/* test-races.c: races between looking at a folder and deciding, made
 * deterministic with named pause points (-Dpause_points=true): a helper
 * is held between two steps while the test changes the folder.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  char *folder;
  char *pause_dir;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_assert_cmpint (g_mkdir (f->pause_dir, 0755), ==, 0);
  f->folder = g_build_filename (f->tmp, "token", NULL);
  test_counter_make (f->folder, 1);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
  g_free (f->pause_dir);
}

/* Holds the helper at pause point @pause once it is told to go on. */
static Helper *
spawn_paused_try (Fixture *f, TestPausePoint *pause)
{
  Helper *helper = helper_spawn (pause->env, "try", f->folder, "-1", "late", "1", NULL);

  helper_expect_line (helper, "READY", 60);
  helper_write_line (helper, "go");
  test_pause_point_wait (pause, 60);
  return helper;
}

/* jobs/ replaced by a folder that already holds the whole total while the
 * acquirer waited for ipc.lock: inotify reports it in the very drain the
 * acquirer does under the lock, and the decision must follow that rescan
 * rather than the cache from before. */
static void
test_folder_replaced_during_wait (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *old = g_build_filename (f->folder, "jobs-old", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (f->pause_dir, "acquire-locked");
  g_autoptr(Helper) late = spawn_paused_try (f, pause);
  g_autofree char *line = NULL;

  g_assert_cmpint (g_rename (jobs, old), ==, 0);
  g_assert_cmpint (g_mkdir (jobs, 0755), ==, 0);
  g_free (test_plant_live_holder (f->folder, 1, FALSE));
  test_pause_point_release (pause);

  line = helper_read_line (late, 60);
  g_assert_cmpstr (line, ==, "UNAVAILABLE");
  helper_close_stdin (late);
  g_assert_cmpint (helper_wait (late), ==, 0);
}

/* A clean-up seen by one thread wakes the others: a holder's lock file
 * vanishes unseen (no inotify, no poll for 1000 s); the next acquire of
 * this process notices it, takes one unit, and the waiter of the same
 * process must be told there is another. */
static void
test_cleanup_wakes_waiters (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *planted = g_build_filename (jobs, "planted@1.json", NULL);
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (f->pause_dir, "wait-registered");
  const char *env[] = { pause->env[0], pause->env[1], pause->env[2], pause->env[3],
                        "TESSERA_NO_INOTIFY", "1", "TESSERA_POLL_INTERVAL", "1000", NULL };
  g_autoptr(Helper) helper = NULL;
  g_autofree char *a = NULL;
  g_autofree char *w = NULL;

  test_write_file (info, "{\"total\": 2}");
  g_free (test_plant_live_holder (f->folder, 2, FALSE));
  helper = helper_spawn (env, "wake", f->folder, NULL);
  helper_expect_line (helper, "WAITING", 60);
  g_assert_cmpint (g_unlink (planted), ==, 0);
  helper_write_line (helper, "go");
  a = helper_read_line (helper, 60);
  g_assert_cmpstr (a, ==, "A ACQUIRED");
  w = helper_read_line (helper, 60);
  g_assert_cmpstr (w, ==, "W ACQUIRED");
  g_assert_cmpint (helper_wait (helper), ==, 0);
}

/* Many live holders must not use up this process's descriptors: with 64
 * allowed and 100 holders, a process watching each through a pidfd could
 * no longer open ipc.lock. The rest are watched through /proc. */
static void
test_many_holders_few_descriptors (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autofree char *helper_path = g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL);
  g_autoptr(GPtrArray) sleepers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GSubprocess) late = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  test_write_file (info, "{\"total\": 1000}");
  for (int i = 0; i < 100; i++)
    {
      /* Silent: a failed test must not keep the runner waiting for their output. */
      GSubprocess *sleeper = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                               &error, "sleep", "120", NULL);
      g_autofree char *path = g_strdup_printf ("%s/holder@%d.json", jobs, i);
      g_autofree char *json = NULL;

      g_assert_no_error (error);
      g_ptr_array_add (sleepers, sleeper);
      json = g_strdup_printf ("{\"job_uri\": \"%s/job%d\", \"information\": {\"count\": 1}, "
                              "\"process\": {\"type\": \"local\", \"pid\": %s}}",
                              f->tmp, i, g_subprocess_get_identifier (sleeper));
      test_write_file (path, json);
    }
  late = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                           "prlimit", "--nofile=64", "--", helper_path, "try", f->folder, "-1", "late", "1", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (late, "go\n", NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "READY\nACQUIRED\n");
  for (guint i = 0; i < sleepers->len; i++)
    g_subprocess_force_exit (g_ptr_array_index (sleepers, i));
}

/* Runs out of descriptors after @spare more have been opened. */
static GArray *
use_descriptors_but (int spare)
{
  GArray *fds = g_array_new (FALSE, FALSE, sizeof (int));
  int fd;

  while ((fd = open ("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
    g_array_append_val (fds, fd);
  for (int i = 0; i < spare && fds->len > 0; i++)
    {
      close (g_array_index (fds, int, fds->len - 1));
      g_array_set_size (fds, fds->len - 1);
    }
  return fds;
}

static void
give_back_descriptors (GArray *fds)
{
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_array_unref (fds);
}

/* An acquisition of @dep with only @spare descriptors left (under a
 * limit of at most 256) is refused, whichever step ran out (its warnings,
 * of what it could not open, are expected); the next one, descriptors
 * back, still finds the only unit held. */
static void
check_short_of_descriptors (TesseraDynamicDependency *dep, int spare)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  struct rlimit saved, low;
  GLogLevelFlags fatal;
  GArray *fds;

  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &saved), ==, 0);
  low = saved;
  low.rlim_cur = MIN (saved.rlim_cur, 256);
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &low), ==, 0);
  fatal = g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  fds = use_descriptors_but (spare);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  give_back_descriptors (fds);
  g_log_set_always_fatal (fatal);
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &saved), ==, 0);
  g_test_message ("%d spare: %s", spare, error != NULL ? error->message : "acquired");
  g_assert_null (lock);
  g_clear_error (&error);

  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
}

/* A lock file of job holder@ID holding @count units (one digit), naming
 * this very process with its start time: alive for sure. */
static char *
live_holder_json_counting (Fixture *f, int id, int count)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) process = tessera_process_to_json (self);
  g_autofree char *process_text = json_to_string (process, FALSE);

  return g_strdup_printf ("{\"job_uri\": \"%s/holder%d\", \"information\": {\"count\": %d}, \"process\": %s}",
                          f->tmp, id, count, process_text);
}

static char *
live_holder_json (Fixture *f, int id)
{
  return live_holder_json_counting (f, id, 1);
}

/* A look at jobs/ that fails (no descriptor left, for a moment) proves
 * nothing: the holder it could not see still counts once descriptors are
 * back, whichever step of the acquisition ran out of them. */
static void
test_failed_look_keeps_holders (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "late", "x");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *other = g_build_filename (jobs, "notes.txt", NULL);
  g_autofree char *holder = g_build_filename (jobs, "holder@1.json", NULL);
  g_autofree char *json = live_holder_json (f, 1);

  g_assert_no_error (error);
  test_write_file (holder, json);
  dep = test_counter_dependency_new (counter, job, 1);
  g_assert_null (tessera_dynamic_dependency_lock (dep, 0, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  for (int spare = 0; spare < 12; spare++)
    {
      /* jobs/ changed: read whole by a decision, which finds it full, and
       * by the next, once the change's clock tick is over: that second
       * read, if it fails, would be the one to vouch for the folder. */
      test_write_file (other, "not a holder");
      g_assert_cmpint (g_unlink (other), ==, 0);
      g_assert_null (tessera_dynamic_dependency_lock (dep, 0, NULL, &error));
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
      g_clear_error (&error);
      g_usleep (100 * 1000);   /* past the tick (50 ms where times are in nanoseconds, 2 s where in seconds) */
      check_short_of_descriptors (dep, spare);
    }
}

/* A lock file that cannot be opened (no descriptor left, though jobs/
 * itself could be) counts, as holding everything, and is read again
 * once it can be: its holder is never lost. */
static void
test_unopenable_lock_file_counts (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "late", "x");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  for (int spare = 0; spare < 12; spare++)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
      g_autofree char *path = g_strdup_printf ("%s/holder@%d.json", jobs, spare);
      g_autofree char *json = live_holder_json (f, spare);

      /* Free: taken and given back, so the cache is current. */
      lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
      g_assert_no_error (error);
      g_clear_object (&lock);
      /* This process's own holder (alive), new to the cache. */
      test_write_file (path, json);
      g_usleep (100 * 1000);   /* past jobs/'s clock tick (not required for correctness) */
      check_short_of_descriptors (dep, spare);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
}

/* A lock file read within its mtime's clock tick may be re-made in that
 * tick with the same inode, mtime and size (one-second times: a holder
 * that gives back and takes again): its stat proves nothing until it was
 * read after the tick (git's racy rule). Here its mtime is ahead of our
 * clock (a file server's clock ahead), so the tick is surely not over
 * when it is read; the rewrite that keeps its stat then holds the whole
 * total, and a decision must see it. */
static void
test_lock_file_remade_within_its_tick (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "late", "x");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *path = g_build_filename (jobs, "holder@1.json", NULL);
  g_autofree char *other = g_build_filename (jobs, "notes.txt", NULL);
  g_autofree char *holds_none = live_holder_json_counting (f, 1, 0);
  g_autofree char *holds_all = live_holder_json_counting (f, 1, 1);
  struct timespec ahead[2] = { { 0, UTIME_OMIT }, { time (NULL) + 30, 0 } };

  g_assert_no_error (error);

  /* A live holder of nothing: the unit is free. */
  test_write_file (path, holds_none);
  g_assert_cmpint (utimensat (AT_FDCWD, path, ahead, 0), ==, 0);
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lock);
  g_clear_object (&lock);
  /* Taken and given back again more than a tick (2 s at most) later, the
   * same text read again: a file stamped ahead of our clock is still
   * within its tick, whatever our monotonic clock says. */
  g_usleep (2100 * 1000);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lock);
  g_clear_object (&lock);

  /* The same holder now holds it, its stat unchanged; jobs/ changed too,
   * so that a look without inotify is due. */
  test_rewrite_keeping_stat (path, holds_all);
  test_write_file (other, "not a holder");
  g_assert_cmpint (g_unlink (other), ==, 0);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
}

/* The pidfds open in this process on this very process (what other
 * tests' child processes leave open closes in its own time). */
static guint
count_own_pidfds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  g_autofree char *own = g_strdup_printf ("\nPid:\t%d\n", (int) getpid ());
  const char *name;
  guint n = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *info = g_build_filename ("/proc/self/fdinfo", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);
      g_autofree char *text = NULL;

      if (target != NULL && g_str_equal (target, "anon_inode:[pidfd]") &&
          g_file_get_contents (info, &text, NULL, NULL) && strstr (text, own) != NULL)
        n++;
    }
  return n;
}

/* What this process holds needs no watch of this process: it is alive
 * while it looks (a pidfd on itself only woke the poller's thread on
 * every acquire). */
static void
test_own_holdings_watch_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(GPtrArray) locks = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(JsonNode) total = json_from_string ("{\"total\": 5}", NULL);
  guint before = count_own_pidfds ();

  g_assert_no_error (error);
  g_assert_true (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter),
                                                                      total, &error));
  g_assert_no_error (error);
  for (int i = 0; i < 5; i++)
    {
      g_autofree char *id = g_strdup_printf ("own%d", i);
      g_autoptr(TesseraJob) job = test_job_new (f->tmp, "own", id);
      g_autoptr(TesseraProcess) self = tessera_process_new_self ();
      g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
      TesseraDynamicDependencyLock *lock = NULL;

      /* Lock files naming this process, as an embedding program's do. */
      g_assert_true (tessera_job_set_process (job, self, &error));
      lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
      g_assert_no_error (error);
      g_ptr_array_add (locks, lock);
    }
  g_assert_cmpuint (count_own_pidfds (), ==, before);
  for (guint i = 0; i < locks->len; i++)
    g_assert_true (tessera_lock_release (g_ptr_array_index (locks, i), NULL));
}

static gpointer
first_wait (gpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (data, 0.2, NULL, &error);

  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  return NULL;
}

/* jobs/ replaced between the two inotify watches a process puts on it
 * (the instance told of creations, the one that wakes): both must end on
 * the new folder, or a lock file made there by link(), which only the
 * first hears of, goes unseen and its unit is granted again. Held in
 * this process, on a thread, at the pause point between the two. */
static void
test_jobs_replaced_between_watches (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "late", "x");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *fresh = g_build_filename (f->folder, "jobs.new", NULL);
  g_autofree char *old = g_build_filename (f->folder, "jobs.old", NULL);
  g_autofree char *first = g_build_filename (jobs, "holder@1.json", NULL);
  g_autofree char *first_fresh = g_build_filename (fresh, "holder@1.json", NULL);
  g_autofree char *outside = g_build_filename (f->tmp, "holder2.json", NULL);
  g_autofree char *second = g_build_filename (jobs, "holder@2.json", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (f->pause_dir, "watch-jobs-between");
  g_autofree char *first_text = live_holder_json (f, 1);
  g_autofree char *second_text = live_holder_json (f, 2);
  GThread *thread;

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  test_write_file (first, first_text);
  test_pause_point_arm_here (pause);
  /* A first wait starts watching; it stops between the two watches. */
  thread = g_thread_new ("first-wait", first_wait, dep);
  test_pause_point_wait (pause, 60);
  g_assert_cmpint (g_mkdir (fresh, 0755), ==, 0);
  test_write_file (first_fresh, first_text);
  g_assert_cmpint (g_rename (jobs, old), ==, 0);
  g_assert_cmpint (g_rename (fresh, jobs), ==, 0);
  test_pause_point_release (pause);
  g_thread_join (thread);
  test_pause_points_disarm_here ();

  /* The new folder is read: its holder keeps the only unit. */
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  /* A second holder appears by link(), then the first leaves. */
  test_write_file (outside, second_text);
  g_assert_cmpint (link (outside, second), ==, 0);
  g_assert_cmpint (g_unlink (first), ==, 0);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/races/folder-replaced-during-wait", Fixture, NULL,
              fixture_set_up, test_folder_replaced_during_wait, fixture_tear_down);
  g_test_add ("/races/cleanup-wakes-waiters", Fixture, NULL,
              fixture_set_up, test_cleanup_wakes_waiters, fixture_tear_down);
  g_test_add ("/races/many-holders-few-descriptors", Fixture, NULL,
              fixture_set_up, test_many_holders_few_descriptors, fixture_tear_down);
  g_test_add ("/races/own-holdings-watch-nothing", Fixture, NULL,
              fixture_set_up, test_own_holdings_watch_nothing, fixture_tear_down);
  g_test_add ("/races/failed-look-keeps-holders", Fixture, NULL,
              fixture_set_up, test_failed_look_keeps_holders, fixture_tear_down);
  g_test_add ("/races/unopenable-lock-file-counts", Fixture, NULL,
              fixture_set_up, test_unopenable_lock_file_counts, fixture_tear_down);
  g_test_add ("/races/lock-file-remade-within-its-tick", Fixture, NULL,
              fixture_set_up, test_lock_file_remade_within_its_tick, fixture_tear_down);
  /* A window between two inotify watches: without inotify (the suite's
   * -no-inotify and -ext2 runs) there is none to hold open. */
  if (g_strcmp0 (g_getenv ("TESSERA_NO_INOTIFY"), "1") != 0)
    g_test_add ("/races/jobs-replaced-between-watches", Fixture, NULL,
                fixture_set_up, test_jobs_replaced_between_watches, fixture_tear_down);
  return g_test_run ();
}
