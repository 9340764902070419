/* test-ipc.c: ipc.lock excludes peers that use flock only (filelock) and
 * peers that use fcntl/lockf only (fasteners) — acceptance 2.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <glib/gstdio.h>

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

  tessera_lock_release (TESSERA_LOCK (lock));
  g_object_unref (lock);
  g_clear_object (&dep);
  g_clear_object (&job);
  g_clear_object (&counter);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ipc/flock-peer-blocks-acquire", test_flock_peer);
  g_test_add_func ("/ipc/lockf-peer-blocks-acquire", test_lockf_peer);
  g_test_add_func ("/ipc/unlinked-ipc-lock-is-reopened", test_unlinked_lock);
  return g_test_run ();
}
