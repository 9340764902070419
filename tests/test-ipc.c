/* test-ipc.c: ipc.lock excludes peers that use flock only (filelock) and
 * peers that use fcntl/lockf only (fasteners) — acceptance 2.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <glib/gstdio.h>
#include <string.h>

typedef struct
{
  TesseraDynamicDependency *dep;
  GAsyncQueue *results;
} Attempt;

static gpointer
acquire_thread (gpointer data)
{
  Attempt *attempt = data;
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (attempt->dep, 0, NULL, &error);

  g_assert_no_error (error);
  g_async_queue_push (attempt->results, lock);
  return NULL;
}

static void
check_peer_blocks (const char *kind, gboolean unlink_like_filelock)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *ipc = g_build_filename (folder, "ipc.lock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (tmp, "ipc", "1");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  g_autoptr(Helper) peer = NULL;
  g_autoptr(GAsyncQueue) results = g_async_queue_new ();
  Attempt attempt = { dep, results };
  TesseraDynamicDependencyLock *lock;
  GThread *thread;

  g_assert_no_error (error);
  peer = helper_spawn (NULL, kind, ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);

  thread = g_thread_new ("acquire", acquire_thread, &attempt);
  /* Blocked on ipc.lock: nothing comes while the peer holds it. */
  g_assert_null (g_async_queue_timeout_pop (results, 500 * 1000));

  if (unlink_like_filelock)
    g_assert_cmpint (g_unlink (ipc), ==, 0);
  helper_close_stdin (peer);
  lock = g_async_queue_timeout_pop (results, 60 * G_USEC_PER_SEC);
  g_assert_nonnull (lock);
  g_thread_join (thread);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  if (unlink_like_filelock)
    /* The lock taken on the unlinked inode was dropped and ipc.lock made anew. */
    g_assert_true (g_file_test (ipc, G_FILE_TEST_IS_REGULAR));

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_object_unref (lock);
  g_clear_object (&dep);
  g_clear_object (&job);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

static void
test_flock_peer (void)
{
  check_peer_blocks ("flock", FALSE);
}

static void
test_lockf_peer (void)
{
  check_peer_blocks ("lockf", FALSE);
}

static void
test_unlinked_lock (void)
{
  check_peer_blocks ("flock", TRUE);
}

/* A release that cannot happen says so, and what stays behind: here
 * ipc.lock was replaced by a folder after the acquire. The lock object
 * holds nothing more; the lock file still counts. */
static void
test_release_reports_failure (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *ipc = g_build_filename (folder, "ipc.lock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (tmp, "release", "1");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *lock_file = NULL;

  g_assert_no_error (error);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  lock_file = tessera_dynamic_dependency_lock_dup_lock_file_path (lock);
  g_assert_cmpint (g_unlink (ipc), ==, 0);
  g_assert_cmpint (g_mkdir (ipc, 0755), ==, 0);

  g_assert_false (tessera_lock_release (TESSERA_LOCK (lock), &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "ipc.lock"));
  g_clear_error (&error);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (lock)), ==, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_IS_REGULAR));
  /* Released once: a second release has nothing to do. */
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), &error));
  g_assert_no_error (error);

  g_assert_cmpint (g_rmdir (ipc), ==, 0);
  g_clear_object (&lock);
  g_clear_object (&dep);
  g_clear_object (&job);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

typedef struct
{
  TesseraJob *job;
  gint go;
  gint failures;
} HoldRace;

static gpointer
hold_in_thread (gpointer data)
{
  HoldRace *race = data;
  g_autoptr(GError) error = NULL;

  while (!g_atomic_int_get (&race->go))
    g_thread_yield ();
  if (!tessera_job_hold (race->job, &error))
    g_atomic_int_inc (&race->failures);
  return NULL;
}

/* Parallel acquires for one job (lock_async per dependency) hold it once:
 * no spurious ALREADY_HELD, no descriptor lost. */
static void
test_parallel_hold (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  guint fds_before = test_count_entries ("/proc/self/fd");

  for (int round = 0; round < 50; round++)
    {
      g_autofree char *id = g_strdup_printf ("%d", round);
      g_autoptr(TesseraJob) job = test_job_new (tmp, "race", id);
      HoldRace race = { job, 0, 0 };
      GThread *threads[4];

      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        threads[i] = g_thread_new ("hold", hold_in_thread, &race);
      g_atomic_int_set (&race.go, 1);
      for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
        g_thread_join (threads[i]);
      g_assert_cmpint (race.failures, ==, 0);
      g_assert_true (tessera_job_is_held (job));
      tessera_job_unhold (job);
    }
  /* No descriptor left behind (GLib's own may close meanwhile). */
  g_assert_cmpuint (test_count_entries ("/proc/self/fd"), <=, fds_before);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ipc/flock-peer-blocks-acquire", test_flock_peer);
  g_test_add_func ("/ipc/lockf-peer-blocks-acquire", test_lockf_peer);
  g_test_add_func ("/ipc/unlinked-ipc-lock-is-reopened", test_unlinked_lock);
  g_test_add_func ("/ipc/parallel-hold-of-one-job", test_parallel_hold);
  g_test_add_func ("/ipc/release-reports-failure", test_release_reports_failure);
  return g_test_run ();
}
