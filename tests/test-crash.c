/* test-crash.c: a holder killed with SIGKILL gives its capacity back at
 * once, without waiting for polling (acceptance 5).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <signal.h>

static const char * const no_poll_env[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };

typedef TestPoolFixture Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  test_pool_fixture_set_up (f, data);
  test_counter_make (f->folder, 1);
}

static void
check_waiter_gets_through (Helper *waiter)
{
  g_autofree char *line = helper_read_line (waiter, 90);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

static void
test_sigkill_holder (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "victim", "1", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *victim_file = g_build_filename (f->folder, "jobs", "helper@victim.json", NULL);

  helper_expect_line (holder, "ACQUIRED", 60);
  g_assert_true (g_file_test (victim_file, G_FILE_TEST_EXISTS));
  waiter = helper_spawn (no_poll_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);
  helper_kill (holder, SIGKILL);
  g_assert_cmpint (helper_wait (holder), ==, 128 + SIGKILL);
  check_waiter_gets_through (waiter);
  /* The waiter removed the dead holder's file. */
  g_assert_false (g_file_test (victim_file, G_FILE_TEST_EXISTS));
}

/* A seed-era lock file has no "process": its holder is named by
 * <job_uri>.pid, and its death must be seen just as fast. */
static void
test_sigkill_seed_era_holder (Fixture *f, gconstpointer data)
{
  g_autofree char *job_uri = g_build_filename (f->tmp, "xp", "jobs", "seed.task", "h1", "task", NULL);
  g_autofree char *pid_path = g_strconcat (job_uri, ".pid", NULL);
  g_autofree char *lock_file = g_build_filename (f->folder, "jobs", "seed.task@h1.json", NULL);
  g_autofree char *job_lock = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *job_dir = g_path_get_dirname (job_uri);
  g_autofree char *content = NULL;
  g_autofree char *pid_content = NULL;
  g_autoptr(Helper) victim = NULL;
  g_autoptr(Helper) waiter = NULL;

  /* Like experimaestro's job process, the victim holds its job lock while
   * it runs. */
  g_mkdir_with_parents (job_dir, 0777);
  victim = helper_spawn (NULL, "lockf", job_lock, NULL);
  helper_expect_line (victim, "LOCKED", 60);
  pid_content = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) helper_get_pid (victim));
  test_write_file (pid_path, pid_content);
  content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}}", job_uri);
  test_write_file (lock_file, content);

  waiter = helper_spawn (no_poll_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);
  helper_kill (victim, SIGKILL);
  helper_wait (victim);
  check_waiter_gets_through (waiter);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
}

typedef struct
{
  TesseraDynamicDependency *dependency;
  TesseraDynamicDependencyLock *lock;
} Try;

/* Tries once, never waiting: FALSE if the unit is not free. */
static gboolean
taken (gpointer data)
{
  Try *try = data;
  g_autoptr(GError) error = NULL;

  try->lock = tessera_dynamic_dependency_lock (try->dependency, 0, NULL, &error);
  if (try->lock == NULL)
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  return try->lock != NULL;
}

/* A process that only tries (a scheduler's try-locks, never a wait) still
 * learns of a holder's death: after a few refreshes it watches, and the
 * exit of a holder it watches through a pidfd (not judged again by its
 * refreshes) reaches it through the poller's thread. */
static void
test_sigkill_seen_without_wait (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "trier");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(Helper) holder = NULL;
  Try try = { NULL, NULL };

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  try.dependency = dep;
  holder = helper_spawn (NULL, "hold", f->folder, "-1", "victim", "1", NULL);
  helper_expect_line (holder, "ACQUIRED", 60);
  for (guint i = 0; i < 20; i++)
    {
      g_assert_null (tessera_dynamic_dependency_lock (dep, 0, NULL, &error));
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
      g_clear_error (&error);
    }
  helper_kill (holder, SIGKILL);
  g_assert_cmpint (helper_wait (holder), ==, 128 + SIGKILL);
  /* Tries again, never waiting, until one gets it. */
  test_wait_until (taken, &try, 60, "the killed holder's unit was never free");
  lock = try.lock;
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, test_pool_fixture_tear_down)
  ADD ("/crash/sigkill-holder/waiter-woken-by-event", test_sigkill_holder);
  ADD ("/crash/sigkill-seed-era-holder/waiter-woken-by-event", test_sigkill_seed_era_holder);
  ADD ("/crash/sigkill-holder/seen-by-a-process-that-only-tries", test_sigkill_seen_without_wait);
  return g_test_run ();
}
