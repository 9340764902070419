/* test-tool-acquire-all.c: tessera_dynamic_dependency_locks_acquire_all(),
 * which `tessera run` uses to take every --need at once or none.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <unistd.h>

#include "test-counter.h"
#include "test-utils.h"

typedef struct
{
  char *tmp;
  TestCounter *cpu;     /* total 2 */
  TestCounter *db;      /* total 1 */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *cpu = NULL, *db = NULL;

  f->tmp = test_make_tmpdir ();
  cpu = g_build_filename (f->tmp, "cpu", NULL);
  db = g_build_filename (f->tmp, "db", NULL);
  f->cpu = test_counter_new (cpu, 2, &error);
  g_assert_no_error (error);
  f->db = test_counter_new (db, 1, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->cpu);
  g_clear_object (&f->db);
  g_clear_pointer (&f->tmp, test_tmpdir_free);
}

/* Holds @count of @counter for a job of its own. */
static TesseraDynamicDependencyLock *
hold (Fixture *f, TestCounter *counter, gint64 count, const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "holder", id);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, count);
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

  g_assert_no_error (error);
  return lock;
}

/* Tries to take @count of @counter, again and again (the waiter may be
 * within a try), for up to @seconds. */
static gboolean
take_within (Fixture *f, TestCounter *counter, gint64 count, double seconds)
{
  return test_poll_until (test_counter_probe_can_take, &(TestCounterProbe) { counter, f->tmp, count, 0 }, seconds);
}

typedef struct
{
  TesseraDynamicDependencyLocks *locks;
  TesseraDynamicDependency *deps[2];
  double timeout;
  GCancellable *cancellable;
  GError *error;
  gboolean ok;
} Attempt;

static gpointer
attempt_thread (gpointer data)
{
  Attempt *a = data;

  a->ok = tessera_dynamic_dependency_locks_acquire_all (a->locks, a->deps, 2, a->timeout, a->cancellable, &a->error);
  return NULL;
}

/* As `tessera run` on a terminal waits: in slices of a second, so it can
 * say what it waits for, until @a's timeout. */
static gpointer
attempt_in_slices_thread (gpointer data)
{
  Attempt *a = data;
  gint64 deadline = g_get_monotonic_time () + (gint64) (a->timeout * G_USEC_PER_SEC);

  do
    {
      g_clear_error (&a->error);
      a->ok = tessera_dynamic_dependency_locks_acquire_all (a->locks, a->deps, 2, 1.0, a->cancellable, &a->error);
    }
  while (!a->ok && g_error_matches (a->error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT) &&
         g_get_monotonic_time () < deadline);
  return NULL;
}

static void
attempt_init (Attempt *a, Fixture *f, TesseraJob *job, double timeout)
{
  a->locks = tessera_dynamic_dependency_locks_new ();
  a->deps[0] = test_counter_dependency_new (f->cpu, job, 2);
  a->deps[1] = test_counter_dependency_new (f->db, job, 1);
  a->timeout = timeout;
  a->cancellable = g_cancellable_new ();
  a->error = NULL;
  a->ok = FALSE;
}

static void
attempt_clear (Attempt *a)
{
  g_assert_true (tessera_lock_release (TESSERA_LOCK (a->locks), NULL));
  g_clear_object (&a->locks);
  g_clear_object (&a->deps[0]);
  g_clear_object (&a->deps[1]);
  g_clear_object (&a->cancellable);
  g_clear_error (&a->error);
}

/* db is held: the attempt times out holding nothing, and says db was the
 * one not free; cpu stays free for others all along. */
static void
test_timeout_holds_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) db = hold (f, f->db, 1, "db");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "both", "1");
  Attempt a;

  attempt_init (&a, f, job, 0.3);
  attempt_thread (&a);
  g_assert_false (a.ok);
  g_assert_error (a.error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_true (tessera_dynamic_dependency_locks_get_waiting_for (a.locks) == a.deps[1]);
  g_assert_cmpuint (tessera_locks_get_locks (TESSERA_LOCKS (a.locks))->len, ==, 0);
  g_assert_true (test_counter_can_take (f->cpu, f->tmp, 2, "probe-1"));
  attempt_clear (&a);
}

/* While one waits for db, cpu can be taken by others; once db is free,
 * the waiter takes both, in the order it asked for them. */
static void
test_waits_then_takes_both (Fixture *f, gconstpointer data)
{
  TesseraDynamicDependencyLock *db = hold (f, f->db, 1, "db");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "both", "2");
  GThread *thread;
  GPtrArray *held;
  Attempt a;

  attempt_init (&a, f, job, -1);
  thread = g_thread_new ("attempt", attempt_thread, &a);
  /* The waiter holds cpu only within a try; while it waits for db, it
   * holds nothing, so a probe gets all of cpu. */
  g_assert_true (take_within (f, f->cpu, 2, 60));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (db), NULL));
  g_object_unref (db);
  g_thread_join (thread);
  g_assert_no_error (a.error);
  g_assert_true (a.ok);
  g_assert_null (tessera_dynamic_dependency_locks_get_waiting_for (a.locks));
  held = tessera_locks_get_locks (TESSERA_LOCKS (a.locks));
  g_assert_cmpuint (held->len, ==, 2);
  g_assert_true (tessera_dynamic_dependency_lock_get_dependency (g_ptr_array_index (held, 0)) == a.deps[0]);
  g_assert_true (tessera_dynamic_dependency_lock_get_dependency (g_ptr_array_index (held, 1)) == a.deps[1]);
  g_assert_false (test_counter_can_take (f->cpu, f->tmp, 1, "probe-5"));
  g_assert_false (test_counter_can_take (f->db, f->tmp, 1, "probe-6"));
  attempt_clear (&a);
  g_assert_true (test_counter_can_take (f->cpu, f->tmp, 2, "probe-7"));
}

/* A peer stuck in the critical section of the pool tried second (it
 * keeps that pool's ipc.lock): the waiter does not sit on the first pool
 * meanwhile (it soon gives it back and waits for that lock holding
 * nothing), also when it waits in slices of a second (@data), and once
 * the peer lets go it takes both. */
static void
test_stuck_ipc_lock_holds_nothing (Fixture *f, gconstpointer data)
{
  g_autofree char *cpu = g_build_filename (f->tmp, "cpu", NULL);
  g_autofree char *db = g_build_filename (f->tmp, "db", NULL);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "both", "stuck");
  g_autoptr(Helper) peer = NULL;
  g_autofree char *ipc = NULL;
  g_autoptr(TestPausePoint) pause = NULL;
  TestCounter *first;
  gint64 first_count;
  GStatBuf cpu_st, db_st;
  GThread *thread;
  Attempt a;

  /* A pause point holds a process once: each variant in a process of its own. */
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 300 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  /* The order of the tries: folders by (device, inode). */
  g_assert_cmpint (g_stat (cpu, &cpu_st), ==, 0);
  g_assert_cmpint (g_stat (db, &db_st), ==, 0);
  first = cpu_st.st_ino < db_st.st_ino ? f->cpu : f->db;
  first_count = first == f->cpu ? 2 : 1;
  ipc = g_build_filename (first == f->cpu ? db : cpu, "ipc.lock", NULL);
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);

  /* Held at its first try behind the peer, when it holds the first pool. */
  pause = test_pause_point_new (f->tmp, "ipc-lock-busy");
  test_pause_point_arm_here (pause);
  attempt_init (&a, f, job, 120);
  thread = g_thread_new ("attempt", data != NULL ? attempt_in_slices_thread : attempt_thread, &a);
  test_pause_point_wait (pause, 60);
  g_assert_false (test_counter_can_take (first, f->tmp, 1, "probe-stuck-held"));
  test_pause_point_release (pause);
  /* Before, it held the first pool until the peer let go (or its timeout). */
  g_assert_true (take_within (f, first, first_count, 30));
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  g_thread_join (thread);
  test_pause_points_disarm_here ();   /* not while the attempt may read it */
  g_assert_no_error (a.error);
  g_assert_true (a.ok);
  g_assert_cmpuint (tessera_locks_get_locks (TESSERA_LOCKS (a.locks))->len, ==, 2);
  g_assert_false (test_counter_can_take (f->cpu, f->tmp, 1, "probe-stuck-cpu"));
  g_assert_false (test_counter_can_take (f->db, f->tmp, 1, "probe-stuck-db"));
  attempt_clear (&a);
}

/* Cancelling ends the wait at once, holding nothing. */
static void
test_cancel (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) db = hold (f, f->db, 1, "db");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "both", "3");
  GThread *thread;
  Attempt a;

  attempt_init (&a, f, job, -1);
  thread = g_thread_new ("attempt", attempt_thread, &a);
  g_cancellable_cancel (a.cancellable);
  g_thread_join (thread);
  g_assert_false (a.ok);
  g_assert_error (a.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (tessera_locks_get_locks (TESSERA_LOCKS (a.locks))->len, ==, 0);
  g_assert_true (test_counter_can_take (f->cpu, f->tmp, 2, "probe-8"));
  attempt_clear (&a);
}

/* One folder through two paths is one pool: refused, nothing taken. */
static void
test_same_folder_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "cpu", NULL);
  g_autofree char *link = g_build_filename (f->tmp, "cpu-link", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) again = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "twice", "4");
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  TesseraDynamicDependency *deps[2];

  g_assert_cmpint (symlink (real, link), ==, 0);
  again = test_counter_new (link, 2, &error);
  g_assert_no_error (error);
  deps[0] = test_counter_dependency_new (f->cpu, job, 1);
  deps[1] = test_counter_dependency_new (again, job, 1);
  g_assert_false (tessera_dynamic_dependency_locks_acquire_all (locks, deps, 2, 0, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD);
  g_assert_true (test_counter_can_take (f->cpu, f->tmp, 2, "probe-9"));
  g_object_unref (deps[0]);
  g_object_unref (deps[1]);
}

/* What acquire_all took, releasing the container gives back at once
 * (and says what it could not): the object may live on. */
static void
test_release_gives_all_back (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "both", "1");
  Attempt a;

  attempt_init (&a, f, job, 0);
  g_assert_true (tessera_dynamic_dependency_locks_acquire_all (a.locks, a.deps, 2, 0, NULL, &a.error));
  g_assert_no_error (a.error);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (a.locks)), ==, 1);
  g_assert_false (test_counter_can_take (f->db, f->tmp, 1, "during"));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (a.locks), NULL));
  /* Given back while the container still exists. */
  g_assert_true (test_counter_can_take (f->db, f->tmp, 1, "after"));
  g_assert_true (test_counter_can_take (f->cpu, f->tmp, 2, "after-cpu"));
  attempt_clear (&a);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/acquire-all/timeout-holds-nothing", test_timeout_holds_nothing);
  ADD ("/acquire-all/waits-then-takes-both", test_waits_then_takes_both);
  ADD ("/acquire-all/cancel-ends-the-wait", test_cancel);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    {
      ADD ("/acquire-all/stuck-ipc-lock-holds-nothing", test_stuck_ipc_lock_holds_nothing);
      g_test_add ("/acquire-all/stuck-ipc-lock-holds-nothing-in-slices", Fixture, "slices", fixture_set_up,
                  test_stuck_ipc_lock_holds_nothing, fixture_tear_down);
    }
  ADD ("/acquire-all/one-folder-twice-refused", test_same_folder_refused);
  ADD ("/acquire-all/release-gives-all-back", test_release_gives_all_back);
  return g_test_run ();
}
