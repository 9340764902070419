/* test-embed.c: the short path for applications that embed Tessera — the
 * README's example, a private job that Tessera cleans, a one-call acquire
 * (issue "Writing a plugin and embedding the library", item 6).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "test-utils.h"

int readme_api (const char *folder);

static char *
private_jobs_folder (void)
{
  return g_build_filename (g_get_user_state_dir (), "tessera", "jobs", NULL);
}

/* The README's example compiles, runs, and leaves nothing behind but the
 * pool. */
static void
test_readme_api (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *informations = g_build_filename (folder, "informations.json", NULL);
  g_autofree char *text = NULL;
  g_autofree char *private_jobs = private_jobs_folder ();

  g_assert_cmpint (readme_api (folder), ==, 0);
  g_assert_true (g_file_get_contents (informations, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "{\"total\":8,\"tessera_protocol\":2}");
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 0);
  test_remove_tree (tmp);
}

/* While held: a lock file naming this process, a private job folder with
 * the job lock and .pid experimaestro's peers look for; a second request
 * that does not fit times out. Dropped: all of it gone. */
static void
test_acquire_and_clean (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "licences", NULL);
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *private_jobs = private_jobs_folder ();
  g_autoptr(TesseraCounterResource) counter = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLock) second = NULL;
  g_autoptr(GError) error = NULL;
  TesseraJob *job;
  g_autofree char *pid_path = NULL;
  g_autofree char *lock_path = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_assert_cmpuint (test_count_entries (private_jobs), ==, 0);
  counter = tessera_counter_resource_new ("licences", folder, 2, &error);
  g_assert_no_error (error);
  lock = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "2", 10, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tessera_counter_resource_get_used (counter), ==, 2);

  job = tessera_dynamic_dependency_get_target (tessera_dynamic_dependency_lock_get_dependency (lock));
  g_assert_true (g_str_has_prefix (tessera_job_get_job_uri (job), private_jobs));
  g_assert_true (tessera_job_is_held (job));
  pid_path = tessera_job_dup_pid_path (job);
  lock_path = tessera_job_dup_lock_path (job);
  g_assert_true (g_file_test (pid_path, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (lock_path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 1);

  lock_file = tessera_dynamic_dependency_lock_dup_lock_file_path (lock);
  g_assert_true (g_file_get_contents (lock_file, &text, NULL, NULL));
  root = json_from_string (text, &error);
  g_assert_no_error (error);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (json_node_get_object (root),
                                                                              "process"), "pid"),
                   ==, getpid ());
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (json_node_get_object (root),
                                                                              "information"), "count"),
                   ==, 2);

  second = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), NULL, 0, NULL, &error);
  g_assert_null (second);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  /* The failed attempt's private job is gone already. */
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 1);

  g_clear_object (&lock);
  g_assert_false (g_file_test (pid_path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (lock_path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 0);
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);

  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* A request over the total waits for the total to grow (as
 * experimaestro's does) and, at the deadline, says so; a malformed one
 * fails at once. Neither leaves a private job behind. */
static void
test_acquire_too_large (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *private_jobs = private_jobs_folder ();
  g_autoptr(TesseraCounterResource) counter = tessera_counter_resource_new ("cpu", folder, 2, NULL);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;

  lock = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "3", 0.2, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  lock = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "three", 60, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 0);
  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* One name for the folder everywhere: "path", as in the key file, works
 * as a property of every tracked resource. */
static void
test_path_property (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *info = g_build_filename (folder, "informations.json", NULL);
  g_autoptr(TesseraCounterResource) resource = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;

  resource = g_initable_new (TESSERA_TYPE_COUNTER_RESOURCE, NULL, &error,
                             "name", "cpu", "path", folder, "total", (gint64) 2, NULL);
  g_assert_no_error (error);
  g_object_get (resource, "path", &path, NULL);
  g_assert_cmpstr (path, ==, folder);
  g_assert_cmpstr (tessera_tracked_dynamic_resource_get_lock_folder (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource)),
                   ==, folder);
  g_assert_true (g_file_test (info, G_FILE_TEST_EXISTS));
  g_clear_object (&resource);
  test_remove_tree (tmp);
}

static void
on_total_notified (GObject *object, GParamSpec *pspec, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

/* notify::total tells of a change of the total in force: informations.json
 * read again with the same total (a peer rewrote it, `tessera set` with
 * the same value) is no change. */
static void
test_total_notified_on_change_only (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autoptr(TesseraCounterResource) counter = tessera_counter_resource_new ("cpu", folder, 2, NULL);
  g_autoptr(TesseraCounterResource) other = tessera_counter_resource_new ("cpu", folder, -1, NULL);
  TesseraTrackedDynamicResource *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE (counter);
  g_autoptr(JsonNode) two = json_from_string ("{\"total\": 2}", NULL);
  g_autoptr(JsonNode) three = json_from_string ("{\"total\": 3}", NULL);
  g_autoptr(GError) error = NULL;
  gint notified = 0;

  g_assert_nonnull (counter);
  g_assert_nonnull (other);
  g_signal_connect (counter, "notify::total", G_CALLBACK (on_total_notified), &notified);
  g_assert_true (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (other),
                                                                       two, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_tracked_dynamic_resource_update (tracked, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&notified), ==, 0);

  g_assert_true (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (other),
                                                                       three, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_tracked_dynamic_resource_update (tracked, &error));
  g_assert_no_error (error);
  /* Told once, by this update or by the poller's thread. */
  test_poll_until (test_flag_is_set, &notified, 60);
  g_assert_cmpint (tessera_counter_resource_get_total (counter), ==, 3);
  g_assert_true (tessera_tracked_dynamic_resource_update (tracked, &error));
  g_assert_cmpint (g_atomic_int_get (&notified), ==, 1);
  g_signal_handlers_disconnect_by_data (counter, &notified);
  g_clear_object (&other);
  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* ---- take_async: the one-call acquire from a main loop ---- */

typedef struct
{
  TesseraDynamicDependencyLock *lock;
  GError *error;
  gboolean done;
} TakeResult;

static void
on_taken (GObject *source, GAsyncResult *result, gpointer data)
{
  TakeResult *taken = data;

  taken->lock = tessera_dynamic_resource_take_finish (TESSERA_DYNAMIC_RESOURCE (source), result,
                                                      &taken->error);
  taken->done = TRUE;
}

static gboolean
on_give_up (gpointer data)
{
  g_error ("take_async did not answer within 60 s");
  return G_SOURCE_REMOVE;
}

/* Runs the default main context until @taken is done. */
static void
wait_taken (TakeResult *taken)
{
  guint guard = g_timeout_add_seconds (60, on_give_up, NULL);

  while (!taken->done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (guard);
}

static gboolean
cancel_soon (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

/* take_async() takes for this process from a main loop, with a private
 * job cleaned afterwards; it answers in the main loop, never before it
 * returns, with the errors take() gives (busy, malformed, cancelled). */
static void
test_take_async (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *private_jobs = private_jobs_folder ();
  g_autoptr(TesseraCounterResource) counter = tessera_counter_resource_new ("cpu", folder, 2, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  TakeResult first = { 0 }, busy = { 0 }, malformed = { 0 }, cancelled = { 0 };
  TesseraJob *job;

  g_assert_nonnull (counter);
  tessera_dynamic_resource_take_async (TESSERA_DYNAMIC_RESOURCE (counter), "2", 10, NULL, on_taken, &first);
  g_assert_false (first.done);
  wait_taken (&first);
  g_assert_no_error (first.error);
  g_assert_nonnull (first.lock);
  g_assert_cmpint (tessera_counter_resource_get_used (counter), ==, 2);
  job = tessera_dynamic_dependency_get_target (tessera_dynamic_dependency_lock_get_dependency (first.lock));
  g_assert_true (g_str_has_prefix (tessera_job_get_job_uri (job), private_jobs));
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 1);

  tessera_dynamic_resource_take_async (TESSERA_DYNAMIC_RESOURCE (counter), NULL, 0, NULL, on_taken, &busy);
  wait_taken (&busy);
  g_assert_null (busy.lock);
  g_assert_error (busy.error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);

  tessera_dynamic_resource_take_async (TESSERA_DYNAMIC_RESOURCE (counter), "three", 60, NULL, on_taken, &malformed);
  g_assert_false (malformed.done);
  wait_taken (&malformed);
  g_assert_null (malformed.lock);
  g_assert_error (malformed.error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);

  tessera_dynamic_resource_take_async (TESSERA_DYNAMIC_RESOURCE (counter), "1", -1, cancellable, on_taken, &cancelled);
  g_idle_add (cancel_soon, cancellable);
  wait_taken (&cancelled);
  g_assert_null (cancelled.lock);
  g_assert_error (cancelled.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* The failed attempts' private jobs are gone already. */
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 1);

  g_assert_true (tessera_lock_release (TESSERA_LOCK (first.lock), NULL));
  g_clear_object (&first.lock);
  g_assert_cmpuint (test_count_entries (private_jobs), ==, 0);
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);
  g_clear_error (&busy.error);
  g_clear_error (&malformed.error);
  g_clear_error (&cancelled.error);
  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* A job holds a resource once: a second dependency of the same job on the
 * same resource fails at once, and its message says so. */
static void
test_job_holds_once (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autoptr(TesseraCounterResource) counter = tessera_counter_resource_new ("cpu", folder, 4, NULL);
  g_autoptr(TesseraJob) job = tessera_job_new_private ("twice", NULL);
  g_autoptr(TesseraDynamicDependency) one = NULL;
  g_autoptr(TesseraDynamicDependency) two = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLock) again = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (counter);
  g_assert_nonnull (job);
  one = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (counter), job, "1", &error);
  g_assert_no_error (error);
  two = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (counter), job, "1", &error);
  g_assert_no_error (error);
  lock = tessera_dynamic_dependency_lock (one, 10, NULL, &error);
  g_assert_no_error (error);
  again = tessera_dynamic_dependency_lock (two, 10, NULL, &error);
  g_assert_null (again);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD);
  g_test_message ("%s", error->message);
  g_assert_true (g_str_has_prefix (error->message, "Job "));
  g_assert_nonnull (strstr (error->message, " already holds cpu"));
  g_assert_nonnull (strstr (error->message, "a job holds a resource once"));
  g_assert_cmpint (tessera_counter_resource_get_used (counter), ==, 1);
  g_clear_object (&lock);
  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* examples/tessera-embed.c (take_async from a main loop) runs, says what
 * it took, and leaves only the pool. */
static void
test_embed_example (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *example = g_test_build_filename (G_TEST_BUILT, "..", "examples", "tessera-embed", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  int status;

  g_assert_true (g_file_test (example, G_FILE_TEST_IS_EXECUTABLE));
  g_ptr_array_add (argv, example);
  g_ptr_array_add (argv, folder);
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, &err);
  g_test_message ("%.*s", (int) g_bytes_get_size (err), (const char *) g_bytes_get_data (err, NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (g_strstr_len (g_bytes_get_data (out, NULL), (gssize) g_bytes_get_size (out), "took 2 of cpu"));
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);
  test_remove_tree (tmp);
}

/* ---- a lock whose real taking and letting go are counted ---- */

#define COUNTED_TYPE_LOCK (counted_lock_get_type ())
G_DECLARE_FINAL_TYPE (CountedLock, counted_lock, COUNTED, LOCK, TesseraLock)

struct _CountedLock
{
  TesseraLock parent_instance;
  int held;       /* really taken now: 0 or 1 */
  int takings;
};

G_DEFINE_FINAL_TYPE (CountedLock, counted_lock, TESSERA_TYPE_LOCK)

static gboolean
counted_do_acquire (TesseraLock *lock, GError **error)
{
  CountedLock *self = COUNTED_LOCK (lock);

  /* Taken twice without a release in between: the level lost a count. */
  g_assert_cmpint (g_atomic_int_add (&self->held, 1), ==, 0);
  g_atomic_int_inc (&self->takings);
  return TRUE;
}

static gboolean
counted_do_release (TesseraLock *lock, GError **error)
{
  CountedLock *self = COUNTED_LOCK (lock);

  g_assert_cmpint (g_atomic_int_add (&self->held, -1), ==, 1);
  return TRUE;
}

static void
counted_lock_class_init (CountedLockClass *klass)
{
  TESSERA_LOCK_CLASS (klass)->do_acquire = counted_do_acquire;
  TESSERA_LOCK_CLASS (klass)->do_release = counted_do_release;
}

static void
counted_lock_init (CountedLock *self)
{
}

#define LEVEL_ROUNDS 200000

static int level_threads_ready;

static gpointer
take_and_let_go (gpointer data)
{
  /* Both threads start together. */
  g_atomic_int_inc (&level_threads_ready);
  while (g_atomic_int_get (&level_threads_ready) < 2)
    g_thread_yield ();
  for (int i = 0; i < LEVEL_ROUNDS; i++)
    {
      g_assert_true (tessera_lock_acquire (data, NULL));
      g_assert_true (tessera_lock_release (data, NULL));
    }
  return NULL;
}

/* A lock object may be taken and let go from two threads at once (the
 * overview says objects may be used from any thread): its level counts
 * every taking, it is really taken only from level 0 and really let go
 * only back at 0, never twice. */
static void
test_lock_levels_from_threads (void)
{
  g_autoptr(CountedLock) lock = g_object_new (COUNTED_TYPE_LOCK, NULL);
  GThread *threads[2];

  level_threads_ready = 0;
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("levels", take_and_let_go, lock);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (lock)), ==, 0);
  g_assert_cmpint (g_atomic_int_get (&lock->held), ==, 0);
  g_assert_cmpint (g_atomic_int_get (&lock->takings), >=, 1);

  /* Held by the test, the threads only add and drop levels. */
  g_assert_true (tessera_lock_acquire (TESSERA_LOCK (lock), NULL));
  lock->takings = 0;
  level_threads_ready = 0;
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("levels", take_and_let_go, lock);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (lock)), ==, 1);
  g_assert_cmpint (lock->takings, ==, 0);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_assert_cmpint (lock->held, ==, 0);
}

/* The fencing token of @lock's grant, as its "fencing-token" property
 * says (0: none). */
static gint64
fencing_token (TesseraDynamicDependencyLock *lock)
{
  gint64 token = 0;

  g_object_get (lock, "fencing-token", &token, NULL);
  return token;
}

/* Every grant of a folder pool gets a fencing token larger than every
 * earlier grant's, held together or one after the other, whichever
 * object of the pool grants it (the counter is the pool's, kept beside
 * ipc.lock, not the process's); a lock that is let go has none (issue
 * 40, point 3). */
static void
test_fencing_token (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "licences", NULL);
  g_autoptr(TesseraCounterResource) counter = NULL;
  g_autoptr(TesseraCounterResource) other = NULL;
  g_autoptr(TesseraDynamicDependencyLock) first = NULL;
  g_autoptr(TesseraDynamicDependencyLock) second = NULL;
  g_autoptr(TesseraDynamicDependencyLock) third = NULL;
  g_autoptr(TesseraDynamicDependencyLock) fourth = NULL;
  g_autoptr(GError) error = NULL;
  gint64 tokens[4];

  counter = tessera_counter_resource_new ("licences", folder, 2, &error);
  g_assert_no_error (error);
  other = tessera_counter_resource_new ("licences", folder, 2, &error);
  g_assert_no_error (error);
  first = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "1", 10, NULL, &error);
  g_assert_no_error (error);
  second = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "1", 10, NULL, &error);
  g_assert_no_error (error);
  tokens[0] = fencing_token (first);
  tokens[1] = fencing_token (second);
  g_assert_cmpint (tessera_dynamic_dependency_lock_get_fencing_token (first), ==, tokens[0]);
  g_assert_cmpint (tessera_dynamic_dependency_lock_get_fencing_token (second), ==, tokens[1]);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (first), &error));
  g_assert_no_error (error);
  g_assert_cmpint (fencing_token (first), ==, 0);
  third = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (other), "1", 10, NULL, &error);
  g_assert_no_error (error);
  tokens[2] = fencing_token (third);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (second), &error));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (third), &error));
  g_assert_no_error (error);
  fourth = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (counter), "2", 10, NULL, &error);
  g_assert_no_error (error);
  tokens[3] = fencing_token (fourth);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (fourth), &error));
  g_assert_no_error (error);
  g_test_message ("tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                  tokens[0], tokens[1], tokens[2], tokens[3]);
  g_assert_cmpint (tokens[0], >, 0);
  for (guint i = 1; i < G_N_ELEMENTS (tokens); i++)
    g_assert_cmpint (tokens[i], >, tokens[i - 1]);

  g_clear_object (&counter);
  g_clear_object (&other);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_autofree char *state = NULL;
  int status;

  /* Private jobs go under $XDG_STATE_HOME: a folder of our own, set before
   * GLib reads it. (G_TEST_OPTION_ISOLATE_DIRS would do, but GLib 2.74
   * leaks its strings, which valgrind and LeakSanitizer report.) */
  g_test_init (&argc, &argv, NULL);
  /* Each test removes its folder at its end. The resources' own writes
   * raise inotify events that Tessera's poller thread handles holding a
   * reference: the test's unref may not be the last, and that handler may
   * find the folder half removed and warn (seen under load, in
   * /embed/readme-api and /embed/path-property). The API is what these
   * tests check, not the warnings. */
  test_expect_warnings ();
  state = test_make_tmpdir ();
  g_setenv ("XDG_STATE_HOME", state, TRUE);
  g_test_add_func ("/embed/readme-api", test_readme_api);
  g_test_add_func ("/embed/acquire-and-clean", test_acquire_and_clean);
  g_test_add_func ("/embed/acquire-too-large", test_acquire_too_large);
  g_test_add_func ("/embed/take-async", test_take_async);
  g_test_add_func ("/embed/job-holds-once", test_job_holds_once);
  g_test_add_func ("/embed/example", test_embed_example);
  g_test_add_func ("/embed/path-property", test_path_property);
  g_test_add_func ("/embed/lock-levels-from-threads", test_lock_levels_from_threads);
  g_test_add_func ("/embed/total-notified-on-change-only", test_total_notified_on_change_only);
  g_test_add_func ("/embed/fencing-token", test_fencing_token);
  status = g_test_run ();
  test_remove_tree (state);
  return status;
}
