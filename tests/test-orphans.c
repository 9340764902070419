/* test-orphans.c: orphans removed and kept, pid reuse, capacity changed
 * at run time (acceptance 6).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

typedef TestPoolFixture Fixture;

/* Waits until one more unit can be had: the orphan in the way goes only
 * once this host has seen it for @min_age seconds (counted from @since,
 * taken before the resource first looked), and within a minute. */
static void
assert_reclaimed_after (Fixture *f, TestCounter *counter, gint64 since, double min_age)
{
  test_wait_until (test_counter_probe_can_take, &(TestCounterProbe) { counter, f->tmp, 1, 0 }, 60,
                   "the orphan was never reclaimed");
  g_assert_cmpint (g_get_monotonic_time () - since, >=, (gint64) (min_age * G_USEC_PER_SEC));
}

/* Its job folder is there, its job lock free: only the process is
 * missing. */
static void
test_old_orphan_removed (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "nopid", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_WITH_LOCK);
  g_autoptr(TestCounter) counter = NULL;
  gint64 since = g_get_monotonic_time ();

  test_expect_warnings ();
  test_set_file_age (path, 100);   /* its time says nothing: we see it now */
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 1);
  assert_reclaimed_after (f, counter, since, 1);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Its job folder cannot be seen from here (a container's own, another
 * host's): its job lock proves nothing, however old the file; it counts
 * until `tessera clean --force` frees it. */
static void
test_old_orphan_without_job_dir_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "gone", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_NONE);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  counter = test_counter_open (f->folder, -1, 0);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_true (tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error));
  g_assert_no_error (error);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "2"));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_young_orphan_kept (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "young", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_WITH_LOCK);
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);

  g_assert_cmpint (test_counter_get_used (counter), ==, 1);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_min_age_settable (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "young", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_WITH_LOCK);
  g_autoptr(TestCounter) counter = NULL;
  gint64 since = g_get_monotonic_time ();

  test_expect_warnings ();
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 1);
  assert_reclaimed_after (f, counter, since, 1);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Decisions in another thread of the process, which judge holders with
 * the store's min-age under the thread lock. */
static gpointer
update_many (gpointer data)
{
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (tessera_tracked_dynamic_resource_update (data, &error));
      g_assert_no_error (error);
    }
  return NULL;
}

/* min-age set while another thread's decisions read it: the setter takes
 * the lock they read it under (a race ThreadSanitizer reports otherwise). */
static void
test_min_age_set_while_deciding (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);
  TesseraTrackedDynamicResource *resource = TESSERA_TRACKED_DYNAMIC_RESOURCE (counter);
  GThread *thread = g_thread_new ("decides", update_many, resource);

  for (guint i = 0; i < 200; i++)
    tessera_tracked_dynamic_resource_set_min_age (resource, 30 + i % 2);
  g_thread_join (thread);
  g_assert_cmpfloat (tessera_tracked_dynamic_resource_get_min_age (resource), ==, 31);
}

/* min-age set from another thread, over and over, until told to stop. */
typedef struct
{
  TesseraTrackedDynamicResource *resource;
  gint stop;
} MinAgeSetter;

static gpointer
set_min_age_until_stopped (gpointer data)
{
  MinAgeSetter *setter = data;

  for (guint i = 0; !g_atomic_int_get (&setter->stop); i++)
    tessera_tracked_dynamic_resource_set_min_age (setter->resource, 30 + i % 2);
  tessera_tracked_dynamic_resource_set_min_age (setter->resource, 1);
  return NULL;
}

/* min-age set while the resource opens (made, then initialized, as a
 * GInitable may be): the open gives its min-age to the store under the
 * lock the setter writes it under, so no value set meanwhile is lost (a
 * race ThreadSanitizer reports otherwise); the last one set judges. */
static void
test_min_age_set_while_opening (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "young", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_WITH_LOCK);
  g_autoptr(TestCounter) counter = g_object_new (TEST_TYPE_COUNTER, "lock-folder", f->folder, "total",
                                                 (gint64) -1, NULL);
  MinAgeSetter setter = { TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0 };
  g_autoptr(GError) error = NULL;
  gint64 since = g_get_monotonic_time ();
  GThread *thread;

  test_expect_warnings ();
  thread = g_thread_new ("sets min-age", set_min_age_until_stopped, &setter);
  g_assert_true (g_initable_init (G_INITABLE (counter), NULL, &error));
  g_assert_no_error (error);
  g_atomic_int_set (&setter.stop, 1);
  g_thread_join (thread);
  g_assert_cmpfloat (tessera_tracked_dynamic_resource_get_min_age (setter.resource), ==, 1);
  assert_reclaimed_after (f, counter, since, 1);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* A file without process whose job lock is held by a live process (a job
 * still starting), in either kind (data: "lockf" or "flock"), is not an
 * orphan however long it has been seen. */
static void
test_held_job_lock_kept (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "starting", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_WITH_LOCK);
  g_autofree char *job_lock = g_build_filename (f->tmp, "xp", "starting", "task.lock", NULL);
  g_autoptr(Helper) starter = helper_spawn (NULL, data, job_lock, NULL);
  g_autoptr(TestCounter) counter = NULL;

  helper_expect_line (starter, "LOCKED", 60);
  counter = test_counter_open (f->folder, -1, 0);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  helper_close_stdin (starter);
  g_assert_cmpint (helper_wait (starter), ==, 0);
  test_expect_warnings ();
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "2"));
}

/* Killed between acquiring and recording its process: the holder left a
 * file with no process; it is reclaimed once older than min_age. */
static void
test_killed_before_recording_process (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "early", "1", "--no-process", NULL);
  g_autofree char *path = g_build_filename (f->jobs, "helper@early.json", NULL);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  helper_expect_line (holder, "ACQUIRED", 60);
  counter = test_counter_open (f->folder, -1, 1);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));   /* alive: its job lock is held */
  helper_kill (holder, SIGKILL);
  helper_wait (holder);
  job = test_job_new (f->tmp, "after", "1");
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 60, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_pid_reuse (Fixture *f, gconstpointer data)
{
  guint64 start = 0;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autofree char *wrong = NULL;
  g_autofree char *right = NULL;
  g_autofree char *reused_path = NULL;
  g_autofree char *live_path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  test_expect_warnings ();
  start = tessera_process_get_start_time (self);
  g_assert_cmpuint (start, >, 0);
  /* Our own pid, but another start time: the recorded process is gone. */
  wrong = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}",
                           getpid (), start + 12345);
  reused_path = test_write_lock_file (f->tmp, f->jobs, "reused", "{\"count\": 1}", wrong,
                                      TEST_JOB_FOLDER_WITH_LOCK);
  counter = test_counter_open (f->folder, -1, 30);
  /* Judged when its share is needed: the only unit here. */
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "0"));
  g_assert_false (g_file_test (reused_path, G_FILE_TEST_EXISTS));
  g_assert_cmpint (test_counter_get_used (counter), ==, 0);

  /* The same pid with the right start time holds. */
  right = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}",
                           getpid (), start);
  live_path = test_write_lock_file (f->tmp, f->jobs, "live", "{\"count\": 1}", right,
                                    TEST_JOB_FOLDER_WITH_LOCK);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_true (g_file_test (live_path, G_FILE_TEST_EXISTS));
}

static void
test_other_boot_and_host (Fixture *f, gconstpointer data)
{
  g_autofree char *other_boot = NULL;
  g_autofree char *boot_path = NULL;
  g_autofree char *host_path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  test_expect_warnings ();
  other_boot = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d, \"boot_id\": \"00000000-dead-beef-0000-000000000000\"}", getpid ());
  boot_path = test_write_lock_file (f->tmp, f->jobs, "rebooted", "{\"count\": 1}", other_boot,
                                    TEST_JOB_FOLDER_WITH_LOCK);
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "0"));   /* needs its unit: judged */
  g_assert_false (g_file_test (boot_path, G_FILE_TEST_EXISTS));

  /* A holder on another host is never judged by a local pid check: its
   * job lock tells. */
  {
    g_autofree char *lock_path = g_build_filename (f->tmp, "xp", "remote", "task.lock", NULL);
    g_autofree char *job_dir = g_path_get_dirname (lock_path);
    g_autoptr(Helper) remote = NULL;

    g_mkdir_with_parents (job_dir, 0777);
    remote = helper_spawn (NULL, "lockf", lock_path, NULL);
    helper_expect_line (remote, "LOCKED", 60);
    host_path = test_write_lock_file (f->tmp, f->jobs, "remote", "{\"count\": 1}",
      "{\"type\": \"local\", \"pid\": 2147483000, \"host\": \"elsewhere.invalid\"}",
      TEST_JOB_FOLDER_WITH_LOCK);
    g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
    g_assert_true (g_file_test (host_path, G_FILE_TEST_EXISTS));
    helper_close_stdin (remote);
    g_assert_cmpint (helper_wait (remote), ==, 0);
  }
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "2"));
  g_assert_false (g_file_test (host_path, G_FILE_TEST_EXISTS));
}

typedef struct
{
  TesseraDynamicDependency *dep;
  TesseraDynamicDependencyLock *lock;
  GError *error;
} Waiter;

static gpointer
waiter_thread (gpointer data)
{
  Waiter *w = data;
  w->lock = tessera_dynamic_dependency_lock (w->dep, 60, NULL, &w->error);
  return NULL;
}

static void
test_capacity_raised (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);
  g_autoptr(TesseraJob) job_a = test_job_new (f->tmp, "cap", "a");
  g_autoptr(TesseraJob) job_b = test_job_new (f->tmp, "cap", "b");
  g_autoptr(TesseraDynamicDependency) dep_a = test_counter_dependency_new (counter, job_a, 1);
  g_autoptr(TesseraDynamicDependency) dep_b = test_counter_dependency_new (counter, job_b, 1);
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autoptr(GError) error = NULL;
  Waiter w = { dep_b, NULL, NULL };
  GThread *thread;

  held = tessera_dynamic_dependency_lock (dep_a, 0, NULL, &error);
  g_assert_no_error (error);
  thread = g_thread_new ("waiter", waiter_thread, &w);
  g_usleep (300 * 1000);
  test_write_in_place (info, "{\"total\": 2}");
  g_thread_join (thread);
  g_assert_no_error (w.error);
  g_assert_nonnull (w.lock);
  g_assert_cmpint (test_counter_get_total (counter), ==, 2);
  g_object_unref (w.lock);
}

static void
test_capacity_lowered (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "cap", "a");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) three = json_from_string ("{\"total\": 3}", NULL);
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);

  g_assert_true (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), three, &error));
  g_assert_no_error (error);
  held = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "1"));
  /* Another process lowers the capacity to what is already held. */
  test_write_in_place (info, "{\"total\": 1}");
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "2"));
  g_assert_cmpint (test_counter_get_total (counter), ==, 1);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "3"));
}

/* The temporary file of a writer killed before its rename goes once older
 * than min-age; a young one (a writer at work) stays. */
static void
test_stale_temporary_removed (Fixture *f, gconstpointer data)
{
  g_autofree char *stale = g_build_filename (f->jobs, "dead.task@1.json.Ab12Cd", NULL);
  g_autofree char *young = g_build_filename (f->jobs, "live.task@2.json.Xy34Zw", NULL);
  g_autoptr(TestCounter) counter = NULL;

  test_write_file (stale, "{\"job_uri\": \"/x\", \"inf");
  test_write_file (young, "");
  test_set_file_age (stale, 100);
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (young, G_FILE_TEST_EXISTS));
}

/* The unknown reason of a holder (why its last verdict could not tell)
 * follows every verdict in a long-lived view: a seed-era holder (no
 * "process") whose job lock is not a regular file is unknown, with its
 * reason; once its .pid names this live process, it is judged alive and
 * the reason is gone, not left from the verdict before. */
static void
test_unknown_reason_follows_verdict (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "seed", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_NONE);
  g_autofree char *job_lock = g_build_filename (f->tmp, "xp", "seed", "task.lock", NULL);
  g_autofree char *pid_file = g_build_filename (f->tmp, "xp", "seed", "task.pid", NULL);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) spec = tessera_process_to_json (self);
  g_autofree char *spec_text = json_to_string (spec, FALSE);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autofree char *before = NULL, *after = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  g_assert_cmpint (g_mkdir_with_parents (job_lock, 0755), ==, 0);   /* not a regular file */
  counter = test_counter_open (f->folder, -1, 0);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  files = tessera_tracked_dynamic_resource_list_lock_files (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter));
  g_assert_cmpuint (files->len, ==, 1);
  before = tessera_dynamic_lock_file_dup_unknown_reason (g_ptr_array_index (files, 0));
  g_test_message ("before: %s", before);
  g_assert_nonnull (before);

  test_write_file (pid_file, spec_text);
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
  g_assert_no_error (error);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "2"));   /* it lives: it holds */
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  after = tessera_dynamic_lock_file_dup_unknown_reason (g_ptr_array_index (files, 0));
  g_test_message ("after: %s", after);
  g_assert_null (after);
}

typedef struct
{
  TestCounter *counter;
  const char *empty;
  const char *cut;
} Damaged;

/* Whether both are gone; if not, the resource looks again. */
static gboolean
damaged_removed (gpointer data)
{
  const Damaged *d = data;

  if (!g_file_test (d->empty, G_FILE_TEST_EXISTS) && !g_file_test (d->cut, G_FILE_TEST_EXISTS))
    return TRUE;
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (d->counter), NULL);
  return FALSE;
}

/* What a Python peer killed while writing in place leaves: an empty or
 * cut-short file holds everything while it is there (its writer may be
 * writing still), and goes once older than min-age; JSON of another shape
 * stays (it may be a format this version does not know) and holds nothing. */
static void
test_truncated_removed (Fixture *f, gconstpointer data)
{
  g_autofree char *empty = g_build_filename (f->jobs, "peer@dead.json", NULL);
  g_autofree char *cut = g_build_filename (f->jobs, "peer@cut.json", NULL);
  g_autofree char *young = g_build_filename (f->jobs, "peer@writing.json", NULL);
  g_autofree char *other = g_build_filename (f->jobs, "peer@other.json", NULL);
  g_autoptr(TestCounter) counter = NULL;
  gint64 since = g_get_monotonic_time ();

  test_expect_warnings ();
  test_write_file (empty, "");
  test_write_file (cut, "{\"job_uri\": \"/x\", \"informa");
  test_write_file (other, "[1, 2]");
  test_set_file_age (empty, 100);
  test_set_file_age (cut, 100);
  test_set_file_age (other, 100);
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "1"));
  g_assert_true (g_file_test (empty, G_FILE_TEST_EXISTS));   /* just seen */
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 1);
  test_wait_until (damaged_removed, &(Damaged) { counter, empty, cut }, 60, "%s or %s stayed", empty, cut);
  g_assert_cmpint (g_get_monotonic_time () - since, >=, G_USEC_PER_SEC);
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "1"));
  test_write_file (young, "");
  g_assert_false (test_counter_can_take (counter, f->tmp, 1, "2"));
  g_assert_true (g_file_test (young, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (other, G_FILE_TEST_EXISTS));
}

/* A lock file naming our own pid with another start time: a dead holder
 * whose verdict needs no waiting. Returns its path. */
static char *
write_dead_holder (Fixture *f, const char *name)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autofree char *spec = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}",
                                           getpid (), tessera_process_get_start_time (self) + 12345);

  return test_write_lock_file (f->tmp, f->jobs, name, "{\"count\": 1}", spec, TEST_JOB_FOLDER_WITH_LOCK);
}

/* Holders are judged only when their share is needed: until then each
 * counts, as any holder that cannot be judged does (never over-allocating).
 * A dead one's file goes at the first acquire that needs its share. */
static void
test_judged_when_needed (Fixture *f, gconstpointer data)
{
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autofree char *dead = NULL;
  g_autofree char *later = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "lazy", "a");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  test_write_file (info, "{\"total\": 3}");
  dead = write_dead_holder (f, "dead");
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_true (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_cmpint (test_counter_get_used (counter), ==, 1);
  dep = test_counter_dependency_new (counter, job, 2);
  held = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);   /* the free units */
  g_assert_no_error (error);
  g_assert_true (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_cmpint (test_counter_get_used (counter), ==, 3);
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "1"));   /* the dead holder's unit */
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  /* Once the pool was found full, a newcomer is judged as it is read (its
   * death then wakes waiters), even when its share is not needed. */
  later = write_dead_holder (f, "later");
  g_assert_true (test_counter_can_take (counter, f->tmp, 1, "2"));
  g_assert_false (g_file_test (later, G_FILE_TEST_EXISTS));
}

/* update (what `tessera clean` calls) judges every holder. */
static void
test_judged_on_update (Fixture *f, gconstpointer data)
{
  g_autofree char *dead = write_dead_holder (f, "dead");
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_true (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_true (tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_cmpint (test_counter_get_used (counter), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, test_pool_fixture_set_up_one_unit, fn, test_pool_fixture_tear_down)
  ADD ("/orphans/old-without-job-dir/counts", test_old_orphan_without_job_dir_counts);
  ADD ("/orphans/old-without-process/removed", test_old_orphan_removed);
  ADD ("/orphans/young/kept", test_young_orphan_kept);
  ADD ("/orphans/min-age/settable", test_min_age_settable);
  ADD ("/orphans/min-age/set-while-another-thread-decides", test_min_age_set_while_deciding);
  ADD ("/orphans/min-age/set-while-opening", test_min_age_set_while_opening);
  g_test_add ("/orphans/job-lock-held/lockf/kept", Fixture, "lockf",
              test_pool_fixture_set_up_one_unit, test_held_job_lock_kept, test_pool_fixture_tear_down);
  g_test_add ("/orphans/job-lock-held/flock/kept", Fixture, "flock",
              test_pool_fixture_set_up_one_unit, test_held_job_lock_kept, test_pool_fixture_tear_down);
  ADD ("/orphans/killed-before-recording-process/reclaimed", test_killed_before_recording_process);
  ADD ("/orphans/stale-temporary/removed", test_stale_temporary_removed);
  ADD ("/orphans/truncated-by-dead-writer/removed", test_truncated_removed);
  ADD ("/pid-reuse/other-start-time-is-dead", test_pid_reuse);
  ADD ("/orphans/dead-holder/judged-when-its-share-is-needed", test_judged_when_needed);
  ADD ("/orphans/dead-holder/judged-on-update", test_judged_on_update);
  ADD ("/pid-reuse/other-boot-dead-other-host-kept", test_other_boot_and_host);
  ADD ("/capacity/raised-at-run-time-wakes-waiter", test_capacity_raised);
  ADD ("/capacity/lowered-at-run-time", test_capacity_lowered);
  ADD ("/unknown-reason/follows-every-verdict", test_unknown_reason_follows_verdict);
  return g_test_run ();
}
