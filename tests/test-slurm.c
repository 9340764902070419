/* test-slurm.c: experimaestro's Slurm holders, judged by the slurm process
 * type against a real single-node Slurm (munged, slurmctld and slurmd
 * started by tests/slurm-fixture.sh in a temporary folder, stopped after).
 * CI runs as root with Slurm installed by scripts/bootstrap.sh: a test
 * that cannot start it fails, it does not skip.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <glib/gstdio.h>
#include <string.h>

typedef TestPoolFixture Fixture;

/* One Slurm for the whole program, so that the environment (SLURM_CONF)
 * is set before any thread starts. */
static char *slurm_dir;

static char *
fixture_script (void)
{
  return g_test_build_filename (G_TEST_DIST, "slurm-fixture.sh", NULL);
}

static void
slurm_fixture (const char *action)
{
  g_autofree char *script = fixture_script ();
  const char *argv[] = { "bash", script, action, slurm_dir, NULL };

  test_run_or_fail (argv);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  test_pool_fixture_set_up_one_unit (f, data);
  test_expect_warnings ();
}

/* Submits with sbatch @argv; returns the job id. */
static char *
submit (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("sbatch failed: %s", err);
  return g_strstrip (g_steal_pointer (&out));
}

/* A job that runs until cancelled; returns its id. */
static char *
submit_job (void)
{
  const char *argv[] = { "sbatch", "--parsable", "--output=/dev/null", "--wrap", "sleep 600", NULL };

  return submit (argv);
}

/* What squeue says of a job (@argv), and whether it holds @text. */
typedef struct
{
  const char * const *argv;
  const char *text;
  char *said;
} Squeue;

static gboolean
squeue_says (gpointer data)
{
  Squeue *q = data;

  g_clear_pointer (&q->said, g_free);
  return g_spawn_sync (NULL, (char **) q->argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, &q->said, NULL, NULL, NULL) &&
         strstr (q->said, q->text) != NULL;
}

/* Waits (bounded) until Slurm says the job runs. */
static void
wait_until_running (const char *id)
{
  const char *argv[] = { "squeue", "--noheader", "--format=%T", "--jobs", id, NULL };
  Squeue q = { argv, "RUNNING", NULL };

  if (!test_poll_until (squeue_says, &q, 120))
    g_error ("job %s never ran (squeue says “%s”)", id, q.said != NULL ? q.said : "");
  g_free (q.said);
}

/* Writes experimaestro's lock file for a Slurm job: jobs/slurm@<name>.json. */
static char *
write_slurm_lock_file (Fixture *f, const char *name, const char *job_id_json)
{
  g_autofree char *job_dir = g_build_filename (f->tmp, "xp", name, NULL);
  g_autofree char *file_name = g_strconcat ("slurm@", name, ".json", NULL);
  g_autofree char *content = NULL;
  char *path = g_build_filename (f->jobs, file_name, NULL);

  g_mkdir_with_parents (job_dir, 0777);
  content = g_strdup_printf ("{\"job_uri\": \"%s/task\", \"information\": {\"count\": 1},"
                             " \"process\": {\"type\": \"slurm\", \"pid\": %s,"
                             " \"options\": {\"partition\": \"debug\"}}}",
                             job_dir, job_id_json);
  test_write_file (path, content);
  return path;
}

/* Tries to take the one token for a new job, waiting at most @timeout. */
static TesseraDynamicDependencyLock *
take (Fixture *f, TestCounter *counter, double timeout, GError **error)
{
  static int round = 0;
  g_autofree char *id = g_strdup_printf ("%d", ++round);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "probe", id);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);

  return tessera_dynamic_dependency_lock (dep, timeout, NULL, error);
}

static void
assert_busy (Fixture *f, TestCounter *counter)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = take (f, counter, 0, &error);

  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
}

static void
assert_free (Fixture *f, TestCounter *counter, double timeout)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = take (f, counter, timeout, &error);

  g_assert_no_error (error);
  g_assert_nonnull (lock);
}

/* A running Slurm job holds; once cancelled, its capacity comes back to a
 * waiter, however the job id is written. */
static void
test_running_job_counts_then_ended_job_frees (Fixture *f, gconstpointer data)
{
  const gboolean as_number = GPOINTER_TO_INT (data);
  g_autofree char *id = submit_job ();
  g_autofree char *id_json = as_number ? g_strdup (id) : g_strdup_printf ("\"%s\"", id);
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;
  const char *cancel[] = { "scancel", id, NULL };
  gint64 start;

  wait_until_running (id);
  path = write_slurm_lock_file (f, "running", id_json);
  counter = test_counter_open (f->folder, -1, -1);
  assert_busy (f, counter);
  assert_busy (f, counter);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  start = g_get_monotonic_time ();
  test_run_or_fail (cancel);
  assert_free (f, counter, 120);
  g_test_message ("capacity back %.1f s after scancel", (g_get_monotonic_time () - start) / 1e6);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* A job the controller does not know (it left Slurm's memory) is over. */
static void
test_forgotten_job_is_dead (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_slurm_lock_file (f, "forgotten", "\"987654\"");
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, -1);

  assert_free (f, counter, 0);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* When Slurm does not answer, nothing is sure: the holder counts. */
static void
test_controller_down_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  slurm_fixture ("controller-stop");
  /* An id no other test asks about: verdicts are cached per id. */
  path = write_slurm_lock_file (f, "unanswered", "\"987655\"");
  counter = test_counter_open (f->folder, -1, -1);
  assert_busy (f, counter);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  slurm_fixture ("controller-start");
}

/* Job ids come from files anyone may write: only `^[0-9]+(_[0-9]+)?$` is
 * ever passed to Slurm, as one argument; anything else counts. */
static void
test_hostile_job_id_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *marker = g_build_filename (f->tmp, "ran", NULL);
  g_autofree char *shell = g_strdup_printf ("\"1; touch %s\"", marker);
  const char *ids[] = { shell, "\"--help\"", "\"-j1\"", "\"12_\"", "\"\"", "-3", "1.5", "[1]", "null" };

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *path = write_slurm_lock_file (f, "hostile", ids[i]);
      g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, -1);

      g_test_message ("job id %s", ids[i]);
      assert_busy (f, counter);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
}

/* With PrivateData=jobs (as many sites set it), a user who does not own a
 * job is told "Invalid job id" for it while it runs: that is no death.
 * The fixture's Slurm hides jobs so; root submits, nobody judges. */
static void
test_private_job_of_another_user_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *id = submit_job ();
  g_autofree char *id_json = g_strdup_printf ("\"%s\"", id);
  g_autofree char *path = NULL;
  g_autofree char *config = g_build_filename (f->tmp, "tessera.conf", NULL);
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *text = g_strdup_printf ("[resource token]\ntype=countertoken\npath=%s\n", f->folder);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  const char *cancel[] = { "scancel", id, NULL };
  const char *open_up[] = { "chmod", "-R", "a+rwX", f->tmp, NULL };
  int status;

  wait_until_running (id);
  path = write_slurm_lock_file (f, "private", id_json);
  test_write_file (config, text);
  g_mkdir_with_parents (state, 0777);
  test_run_or_fail (open_up);
  test_argv_as_user (argv, "nobody", 120);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("SLURM_CONF=%s", g_getenv ("SLURM_CONF")));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
  test_argv_tessera (argv, state, config);
  g_ptr_array_add (argv, g_strdup ("run"));
  g_ptr_array_add (argv, g_strdup ("--no-wait"));
  g_ptr_array_add (argv, g_strdup ("--need"));
  g_ptr_array_add (argv, g_strdup ("token"));
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup ("true"));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("nobody's run: %d, %.*s", status, (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 75);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  test_run_or_fail (cancel);
}

/* A bare array id names every task: it holds while any task runs, though
 * squeue lists an ended task first. */
static void
test_array_with_an_ended_task_counts (Fixture *f, gconstpointer data)
{
  const char *argv[] = { "sbatch", "--parsable", "--output=/dev/null", "--array=0-2", "--wrap",
                         "if [ \"$SLURM_ARRAY_TASK_ID\" = 0 ]; then exit 0; fi; sleep 600", NULL };
  g_autofree char *out = submit (argv);
  g_autofree char *id_json = NULL;
  g_autofree char *task = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  task = g_strdup_printf ("%s_1", out);
  wait_until_running (task);
  /* Task 0 has ended when squeue shows it so. */
  {
    const char *probe[] = { "squeue", "--noheader", "--states=all", "--format=%i %T", "--jobs", out, NULL };
    Squeue q = { probe, "_0 COMPLETED", NULL };

    test_wait_until (squeue_says, &q, 120, "task 0 of %s never completed", out);
    g_free (q.said);
  }
  id_json = g_strdup_printf ("\"%s\"", out);
  path = write_slurm_lock_file (f, "array-ended", id_json);
  counter = test_counter_open (f->folder, -1, -1);
  assert_busy (f, counter);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  {
    const char *cancel[] = { "scancel", out, NULL };
    test_run_or_fail (cancel);
  }
}

/* An array task's id (JOB_TASK) is understood. */
static void
test_array_task_counts (Fixture *f, gconstpointer data)
{
  const char *argv[] = { "sbatch", "--parsable", "--output=/dev/null", "--array=3", "--wrap", "sleep 600", NULL };
  g_autofree char *out = submit (argv);
  g_autofree char *id_json = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  id_json = g_strdup_printf ("\"%s_3\"", out);
  path = write_slurm_lock_file (f, "array", id_json);
  counter = test_counter_open (f->folder, -1, -1);
  assert_busy (f, counter);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  {
    const char *cancel[] = { "scancel", out, NULL };
    test_run_or_fail (cancel);
  }
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  /* A controller that is down costs one timeout per check: keep it short
   * (set before any thread starts). */
  g_setenv ("TESSERA_SLURM_TIMEOUT", "5", TRUE);
  slurm_dir = test_make_tmpdir ();
  {
    g_autofree char *conf = g_build_filename (slurm_dir, "slurm.conf", NULL);
    g_setenv ("SLURM_CONF", conf, TRUE);
  }
  slurm_fixture ("start");

#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_set_up, fn, test_pool_fixture_tear_down)
  ADD ("/slurm/running-job-counts-then-ended-job-frees/string-id", GINT_TO_POINTER (FALSE),
       test_running_job_counts_then_ended_job_frees);
  ADD ("/slurm/running-job-counts-then-ended-job-frees/number-id", GINT_TO_POINTER (TRUE),
       test_running_job_counts_then_ended_job_frees);
  ADD ("/slurm/forgotten-job-is-dead", NULL, test_forgotten_job_is_dead);
  ADD ("/slurm/array-task-counts", NULL, test_array_task_counts);
  ADD ("/slurm/array-with-an-ended-task-counts", NULL, test_array_with_an_ended_task_counts);
  ADD ("/slurm/private-job-of-another-user-counts", NULL, test_private_job_of_another_user_counts);
  ADD ("/slurm/hostile-job-id-counts", NULL, test_hostile_job_id_counts);
  ADD ("/slurm/controller-down-counts", NULL, test_controller_down_counts);
#undef ADD

  status = g_test_run ();
  slurm_fixture ("stop");
  test_remove_tree (slurm_dir);
  g_free (slurm_dir);
  return status;
}
