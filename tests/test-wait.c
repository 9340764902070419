/* test-wait.c: waiting on a full resource — woken by events, timeout,
 * cancel, async (acceptance 4).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

/* Polling only every 1000 s: a waiter that gets through did so by an event. */
static const char * const no_poll_env[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };

typedef struct
{
  char *tmp;
  char *folder;
  TestCounter *counter;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->counter = test_counter_new (f->folder, 1, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->counter);
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->folder);
}

static void
test_woken_by_release (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *line = NULL;

  helper_expect_line (holder, "ACQUIRED", 60);
  waiter = helper_spawn (no_poll_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);   /* let it sleep in the wait (not required for correctness) */
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  line = helper_read_line (waiter, 90);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

static TesseraDynamicDependencyLock *
hold_in_process (Fixture *f, const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", id);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

  g_assert_no_error (error);
  return lock;
}

static void
test_timeout (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_null (tessera_dynamic_dependency_lock (dep, 0.3, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 300 * 1000);
}

typedef struct
{
  TesseraDynamicDependency *dep;
  GCancellable *cancellable;
  GError *error;
  TesseraDynamicDependencyLock *lock;
} Waiter;

static gpointer
wait_forever (gpointer data)
{
  Waiter *w = data;
  w->lock = tessera_dynamic_dependency_lock (w->dep, -1, w->cancellable, &w->error);
  return NULL;
}

static void
test_cancel (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Waiter w = { dep, cancellable, NULL, NULL };
  GThread *thread = g_thread_new ("waiter", wait_forever, &w);

  g_usleep (300 * 1000);
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);
  g_assert_null (w.lock);
  g_assert_error (w.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&w.error);
}

typedef struct
{
  GMainLoop *loop;
  TesseraDynamicDependencyLock *held;
  TesseraDynamicDependencyLock *got;
  GError *error;
  gboolean released;
} AsyncState;

static gboolean
release_held (gpointer data)
{
  AsyncState *s = data;
  tessera_lock_release (TESSERA_LOCK (s->held));
  s->released = TRUE;
  return G_SOURCE_REMOVE;
}

static void
on_locked (GObject *source, GAsyncResult *result, gpointer data)
{
  AsyncState *s = data;
  s->got = tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &s->error);
  g_main_loop_quit (s->loop);
}

static void
test_async (Fixture *f, gconstpointer data)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  AsyncState s = { loop, held, NULL, NULL, FALSE };

  tessera_dynamic_dependency_lock_async (dep, 60, NULL, on_locked, &s);
  g_timeout_add (200, release_held, &s);
  g_main_loop_run (loop);
  g_assert_no_error (s.error);
  g_assert_true (s.released);
  g_assert_nonnull (s.got);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (s.got)), ==, 1);
  g_object_unref (s.got);
}

static void
test_reentrant_levels (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autofree char *path = g_build_filename (f->folder, "jobs", "local@a.json", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (tessera_lock_acquire (TESSERA_LOCK (held), &error));
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (held)), ==, 2);
  tessera_lock_release (TESSERA_LOCK (held));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  tessera_lock_release (TESSERA_LOCK (held));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  tessera_lock_release (TESSERA_LOCK (held));   /* not held: nothing happens */
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (held)), ==, 0);
}

typedef struct
{
  TestCounter *counter;
  gint done;
} UpdateRun;

static void
on_total_read_usage (GObject *object, GParamSpec *pspec, gpointer data)
{
  gint64 capacity = -1;

  /* A handler's natural reaction: look at the new state. */
  tessera_tracked_dynamic_resource_get_usage (TESSERA_TRACKED_DYNAMIC_RESOURCE (object), &capacity, NULL);
  g_assert_cmpint (capacity, ==, 3);
  g_atomic_int_inc ((gint *) data);
}

static gpointer
run_update (gpointer data)
{
  UpdateRun *run = data;
  g_autoptr(GError) error = NULL;

  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (run->counter), &error);
  g_assert_no_error (error);
  g_atomic_int_set (&run->done, 1);
  return NULL;
}

/* A notify::total handler that reads the usage must not deadlock: the
 * resource emits only once it has let go of its own lock. */
static void
test_notify_outside_lock (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) three = json_from_string ("{\"total\": 3}", NULL);
  UpdateRun run = { f->counter, 0 };
  gint notified = 0;
  GThread *thread;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  g_signal_connect (f->counter, "notify::total", G_CALLBACK (on_total_read_usage), &notified);
  other = test_counter_new (f->folder, -1, &error);
  g_assert_no_error (error);
  tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (other), three, &error);
  g_assert_no_error (error);

  thread = g_thread_new ("update", run_update, &run);
  while (!g_atomic_int_get (&run.done))
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("update did not return: a notify handler deadlocked on the resource's lock");
      g_usleep (10000);
    }
  g_thread_join (thread);
  g_assert_cmpint (g_atomic_int_get (&notified), >=, 1);
  g_signal_handlers_disconnect_by_data (f->counter, &notified);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/wait/woken-by-release-in-another-process", test_woken_by_release);
  ADD ("/wait/timeout", test_timeout);
  ADD ("/wait/notify-outside-lock", test_notify_outside_lock);
  ADD ("/wait/cancel", test_cancel);
  ADD ("/wait/async", test_async);
  ADD ("/wait/reentrant-levels", test_reentrant_levels);
  return g_test_run ();
}
