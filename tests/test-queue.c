/* test-queue.c: waiters queue in the folder; past their patience they
 * reserve what they need, before that they idle nothing, and a dead one
 * blocks no one. Real processes (tessera-helper for the test counter,
 * tessera-plugin-helper for the gpu and mutex plugins) on real folders.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <utime.h>
#include <glib/gstdio.h>

/* Four fake devices, each with a UUID. */
#define DEVICES "devices=0:1024:GPU-aaaa;1:1024:GPU-bbbb;2:1024:GPU-cccc;3:1024:GPU-dddd"

typedef struct
{
  char *tmp;
  char *folder;
  char *queue;
  char *jobs;
  const char *type;      /* a plugin's resource type; NULL: the test counter */
  const char *setting;   /* the plugin's KEY=VALUE, or NULL */
  const char *small;     /* a request the pool holds several of */
  const char *large;     /* a request for the whole pool */
} Fixture;

static void
set_paths (Fixture *f, const char *name)
{
  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, name, NULL);
  f->queue = g_build_filename (f->folder, "queue", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
}

/* A counter of 4 tokens. */
static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;

  set_paths (f, "token");
  f->small = "1";
  f->large = "4";
  counter = test_counter_new (f->folder, 4, &error);
  g_assert_no_error (error);
}

/* A pool of the plugin type @data: 4 GPUs, or a mutex. */
static void
plugin_fixture_set_up (Fixture *f, gconstpointer data)
{
  f->type = data;
  set_paths (f, f->type);
  if (g_str_equal (f->type, "gpu"))
    f->setting = DEVICES, f->small = "1", f->large = "4";
  else
    f->small = "shared", f->large = "exclusive";
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
  g_free (f->queue);
  g_free (f->jobs);
}

/* Starts a peer process running @command ("try", "hold" or "request",
 * see the helpers) for @request; @timeout only for "request", @async
 * only for the counter's. */
static Helper *
spawn_peer (Fixture *f, const char * const *env, const char *command, const char *id, const char *request,
            const char *timeout, gboolean async)
{
  if (f->type == NULL)
    return helper_spawn (env, command, f->folder, "-1", id, request, timeout, async ? "async" : NULL, NULL);
  if (timeout != NULL)
    return plugin_helper_spawn (env, command, f->type, f->folder, id, request, timeout, f->setting, NULL);
  return plugin_helper_spawn (env, command, f->type, f->folder, id, request, f->setting, NULL);
}

/* Waits (up to @timeout_s) until the queue holds a reserving entry. */
static void
wait_for_reservation (Fixture *f, double timeout_s)
{
  g_autoptr(JsonNode) entry = test_queue_wait_reservation (f->queue, timeout_s);
}

/* Starts a helper that tries @request once and holds what it got:
 * returns its answer ("ACQUIRED" or "UNAVAILABLE") in @line. */
static Helper *
try_once (Fixture *f, const char *id, const char *request, char **line)
{
  Helper *helper = spawn_peer (f, NULL, "try", id, request, NULL, FALSE);

  helper_expect_line (helper, "READY", 60);
  helper_write_line (helper, "go");
  *line = helper_read_line (helper, 60);
  return helper;
}

/* The same for the fixture's small request. */
static Helper *
take_one (Fixture *f, const char *id, char **line)
{
  return try_once (f, id, f->small, line);
}

static void
release_one (Helper *helper)
{
  helper_close_stdin (helper);
  g_assert_cmpint (helper_wait (helper), ==, 0);
  helper_free (helper);
}

/* Starts a helper that waits for @request with the patience @patience
 * (seconds) and returns once it waits. */
static Helper *
start_waiter (Fixture *f, const char *id, const char *request, const char *patience, gboolean async)
{
  const char * const env[] = { "TESSERA_PATIENCE", patience, NULL };
  Helper *helper = spawn_peer (f, env, "request", id, request, "100", async);

  helper_expect_line (helper, "WAITING", 60);
  return helper;
}

/* Checks that @waiter was served within its patience (1 s) plus a
 * generous margin for a loaded machine, then lets it go. */
static void
assert_served_soon (Helper *waiter, const char *request)
{
  g_autofree char *line = helper_read_line (waiter, 90);
  long ms;

  g_test_message ("request %s: %s", request, line);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED ms="));
  ms = strtol (line + strlen ("ACQUIRED ms="), NULL, 10);
  g_assert_cmpint (ms, <, 16 * 1000);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* Small requests that overlap, starting with @held's: each takes its
 * share before the previous one lets go, so the pool is never free as a
 * whole. Goes on until one is refused (a reservation), for 20 s at most. */
static void
relay_until_refused (Fixture *f, Helper *held)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (guint i = 1;; i++)
    {
      g_autofree char *id = g_strdup_printf ("small%u", i);
      g_autofree char *answer = NULL;
      Helper *next;

      if (g_get_monotonic_time () > deadline)
        g_error ("requests for %s of %s were still served 20 s after a request for %s with a "
                 "1 s patience began to wait (%u of them)", f->small, f->type ? f->type : "a counter",
                 f->large, i);
      next = take_one (f, id, &answer);
      if (g_strcmp0 (answer, "UNAVAILABLE") == 0)
        {
          release_one (next);
          break;
        }
      g_assert_cmpstr (answer, ==, "ACQUIRED");
      release_one (held);
      held = next;
    }
  release_one (held);
}

/* A request for the whole pool (4 tokens of 4, 4 GPUs of 4, the mutex
 * exclusively) among a stream of small requests from other processes
 * that overlap: without reservations it starves; with them it is served
 * about a patience after it arrived. (The exclusive mutex request was
 * served before reservations too, through the mutex's intents.) */
static void
test_large_request_served (Fixture *f, gconstpointer data)
{
  gboolean async = g_strcmp0 (data, "async") == 0;
  g_autoptr(Helper) big = NULL;
  g_autofree char *line = NULL;
  Helper *held;

  held = take_one (f, "small0", &line);
  g_assert_cmpstr (line, ==, "ACQUIRED");
  big = start_waiter (f, "big", f->large, "1", async);
  relay_until_refused (f, held);
  assert_served_soon (big, f->large);
}

/* `tessera run` takes a job's resources all at once: waiting, it
 * reserves too, and is served among a stream of small requests. */
static void
test_tool_run_served (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_build_filename (f->tmp, "tessera.conf", NULL);
  g_autofree char *content = g_strdup_printf ("[resource tok]\ntype=countertoken\npath=%s\n", f->folder);
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  g_autofree char *ran = NULL;
  Helper *held;

  test_write_file (config, content);
  held = take_one (f, "small0", &line);
  g_assert_cmpstr (line, ==, "ACQUIRED");
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PATIENCE", "1", TRUE);
  run = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", config,
                                     "run", "--need", "tok=4", "--", "echo", "RAN", NULL);
  g_assert_no_error (error);
  relay_until_refused (f, held);

  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (run));
  ran = g_data_input_stream_read_line_utf8 (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ran, ==, "RAN");
  g_subprocess_wait_check (run, NULL, &error);
  g_assert_no_error (error);
}

/* A waiter within its patience does not keep free tokens from small
 * requests (before the fix too: this guards against a queue that idles
 * capacity); once served, it leaves no entry behind. */
static void
test_patient_waiter_idles_nothing (Fixture *f, gconstpointer data)
{
  static const char * const patience_env[] = { "TESSERA_PATIENCE", "60", NULL };
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "2", NULL);
  g_autoptr(Helper) big = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree char *line = NULL;
  Helper *small[2];

  helper_expect_line (holder, "ACQUIRED", 60);
  big = helper_spawn (patience_env, "request", f->folder, "-1", "big", "4", "100",
                      data != NULL ? "async" : NULL, NULL);
  helper_expect_line (big, "WAITING", 60);

  /* The two tokens left go to later, smaller requests. */
  for (guint i = 0; i < G_N_ELEMENTS (small); i++)
    {
      g_autofree char *id = g_strdup_printf ("small%u", i);

      small[i] = take_one (f, id, &line);
      g_assert_cmpstr (line, ==, "ACQUIRED");
      g_clear_pointer (&line, g_free);
    }
  g_assert_true (helper_is_running (big));
  entries = test_queue_read (f->queue);
  g_assert_cmpuint (entries->len, ==, 0);
  g_clear_pointer (&entries, g_ptr_array_unref);

  for (guint i = 0; i < G_N_ELEMENTS (small); i++)
    release_one (small[i]);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (big, "ACQUIRED", 90);
  entries = test_queue_read (f->queue);
  g_assert_cmpuint (entries->len, ==, 0);
  helper_close_stdin (big);
  helper_expect_line (big, "RELEASED", 60);
  g_assert_cmpint (helper_wait (big), ==, 0);
}

/* A GPU waiter's reservation names the devices it keeps, by UUID. */
static void
assert_reserves_devices_by_uuid (Fixture *f)
{
  g_autoptr(JsonNode) entry = test_queue_find_reservation (f->queue);
  JsonObject *information;
  JsonArray *devices;

  g_assert_nonnull (entry);
  information = json_object_get_object_member (json_node_get_object (entry), "information");
  g_assert_nonnull (information);
  devices = json_object_get_array_member (information, "devices");
  g_assert_nonnull (devices);
  g_assert_cmpuint (json_array_get_length (devices), ==, 4);
  for (guint i = 0; i < 4; i++)
    g_assert_true (g_str_has_prefix (json_object_get_string_member (json_array_get_object_element (devices, i),
                                                                    "uuid"), "GPU-"));
}

/* A reserving waiter keeps later small requests out; SIGKILLed, it keeps
 * no one out. */
static void
test_killed_reserving_waiter (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = spawn_peer (f, NULL, "hold", "holder", "2", NULL, FALSE);
  g_autoptr(Helper) big = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree char *answer = NULL;
  Helper *first, *second;

  helper_expect_line (holder, "ACQUIRED", 60);
  big = start_waiter (f, "big", f->large, "0.5", g_strcmp0 (data, "async") == 0);
  wait_for_reservation (f, 60);
  if (g_strcmp0 (f->type, "gpu") == 0)
    assert_reserves_devices_by_uuid (f);

  /* 2 held and 4 reserved: nothing is left for a later arrival. */
  first = take_one (f, "first", &answer);
  g_assert_cmpstr (answer, ==, "UNAVAILABLE");
  release_one (first);
  g_clear_pointer (&answer, g_free);

  helper_kill (big, SIGKILL);
  helper_wait (big);

  second = take_one (f, "second", &answer);
  g_assert_cmpstr (answer, ==, "ACQUIRED");
  /* The dead waiter's entry went with the decision that ignored it. */
  entries = test_queue_read (f->queue);
  g_assert_cmpuint (entries->len, ==, 0);
  release_one (second);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A wait in this process, in a thread or through lock_async. */
typedef struct
{
  TesseraDynamicDependency *dep;
  TesseraDynamicDependencyLock *lock;
  GError *error;
  gint done;
  double timeout;
  double cpu;       /* seconds the waiting thread used */
} InProcessWait;

/* CPU seconds the calling thread has used. */
static double
thread_cpu_seconds (void)
{
  struct rusage usage;

  getrusage (RUSAGE_THREAD, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static gpointer
wait_in_thread (gpointer data)
{
  InProcessWait *wait = data;

  double cpu_before = thread_cpu_seconds ();

  wait->lock = tessera_dynamic_dependency_lock (wait->dep, wait->timeout, NULL, &wait->error);
  wait->cpu = thread_cpu_seconds () - cpu_before;
  g_atomic_int_set (&wait->done, TRUE);
  return NULL;
}

static void
on_in_process_locked (GObject *source, GAsyncResult *result, gpointer data)
{
  InProcessWait *wait = data;

  wait->lock = tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &wait->error);
  g_atomic_int_set (&wait->done, TRUE);
}

/* Whether @queue holds a reserving entry yet: an async wait goes on
 * in the main context meanwhile. */
typedef struct
{
  const char *queue;
  gboolean async;
} ReservationWait;

static gboolean
reserved_in_process (gpointer data)
{
  const ReservationWait *wait = data;
  g_autoptr(JsonNode) entry = NULL;

  if (wait->async)
    g_main_context_iteration (NULL, FALSE);
  entry = test_queue_find_reservation (wait->queue);
  return entry != NULL;
}

/* One case of a waiter in this process: @held is granted, @waiting waits
 * and reserves past its patience, @refused then finds nothing left. */
typedef struct
{
  const char *type;      /* a plugin's resource type; NULL: the test counter */
  const char *devices;   /* the gpu's setting, or NULL */
  const char *held;
  const char *waiting;
  const char *refused;
  gboolean async;
} InProcessCase;

static const InProcessCase counter_case = { NULL, NULL, "2", "4", "1", FALSE };
static const InProcessCase counter_async_case = { NULL, NULL, "2", "4", "1", TRUE };
static const InProcessCase gpu_case = { "gpu", "0:1024:GPU-aaaa;1:1024:GPU-bbbb;2;3", "2", "4", "1", FALSE };
static const InProcessCase exclusive_case = { "mutex", NULL, "shared", "exclusive", "shared", FALSE };
static const InProcessCase shared_case = { "mutex", NULL, "exclusive", "shared", "exclusive", FALSE };

/* The case's pool: the fixture's counter, or a plugin's in its own folder. */
static TesseraDynamicResource *
open_pool (Fixture *f, const InProcessCase *c, char **queue)
{
  g_autofree char *folder = c->type != NULL ? g_build_filename (f->tmp, c->type, NULL) : g_strdup (f->folder);
  const char *keys[] = { "lock-folder", c->devices != NULL ? "devices" : NULL, NULL };
  const char *values[] = { folder, c->devices, NULL };
  g_autoptr(GError) error = NULL;
  TesseraDynamicResource *resource;

  if (c->type == NULL)
    resource = TESSERA_DYNAMIC_RESOURCE (test_counter_new (folder, -1, &error));
  else
    resource = tessera_registry_create_resource (tessera_registry_get_default (), c->type, "r", keys, values,
                                                 &error);
  g_assert_no_error (error);
  *queue = g_build_filename (folder, "queue", NULL);
  return resource;
}

static TesseraDynamicDependency *
in_process_dependency (TesseraDynamicResource *resource, Fixture *f, const char *id, const char *request)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", id);
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependency *dep;

  if (TEST_IS_COUNTER (resource))
    return test_counter_dependency_new (TEST_COUNTER (resource), job, g_ascii_strtoll (request, NULL, 10));
  dep = tessera_dynamic_resource_create_dependency (resource, job, request, &error);
  g_assert_no_error (error);
  return dep;
}

/* The same in one process (so that valgrind sees the queue's code and
 * the plugins' reservations): the "patience" property, a waiting thread
 * or an async wait that reserves, a try that finds nothing left, and no
 * entry left behind. */
static void
test_in_process (Fixture *f, gconstpointer data)
{
  const InProcessCase *c = data;
  g_autofree char *queue = NULL;
  g_autoptr(TesseraDynamicResource) resource = open_pool (f, c, &queue);
  g_autoptr(TesseraDynamicDependency) dep_a = in_process_dependency (resource, f, "a", c->held);
  g_autoptr(TesseraDynamicDependency) dep_big = in_process_dependency (resource, f, "big", c->waiting);
  g_autoptr(TesseraDynamicDependency) dep_c = in_process_dependency (resource, f, "c", c->refused);
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(TesseraDynamicDependencyLock) refused = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GError) error = NULL;
  InProcessWait wait = { NULL, NULL, NULL, FALSE, 0, 0 };
  GThread *thread = NULL;
  double patience = 0;

  g_object_get (resource, "patience", &patience, NULL);
  g_assert_cmpfloat (patience, ==, 60);
  g_object_set (resource, "patience", 0.3, NULL);
  held = tessera_dynamic_dependency_lock (dep_a, 0, NULL, &error);
  g_assert_no_error (error);

  wait.dep = dep_big;
  wait.timeout = 60;
  if (c->async)
    tessera_dynamic_dependency_lock_async (dep_big, 60, NULL, on_in_process_locked, &wait);
  else
    thread = g_thread_new ("waiter", wait_in_thread, &wait);
  test_wait_until (reserved_in_process, &(ReservationWait) { queue, c->async }, 60,
                   "no reserving entry in %s", queue);

  /* Held and reserved: a try finds nothing left. */
  refused = tessera_dynamic_dependency_lock (dep_c, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (refused);
  g_clear_error (&error);

  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));
  if (c->async)
    {
      while (!g_atomic_int_get (&wait.done))
        g_main_context_iteration (NULL, TRUE);
      /* Sources of the finished task may still hold it (and the resource). */
      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  else
    g_thread_join (thread);
  g_assert_no_error (wait.error);
  g_assert_nonnull (wait.lock);
  entries = test_queue_read (queue);
  g_assert_cmpuint (entries->len, ==, 0);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (wait.lock), NULL));
  g_clear_object (&wait.lock);
  g_clear_object (&held);
  g_clear_object (&dep_a);
  g_clear_object (&dep_big);
  g_clear_object (&dep_c);
  test_drop_resource (&resource);
}

/* A request larger than the whole capacity waits for the total to grow:
 * past its patience it reserves nothing (the others go on) and does not
 * spin on a patience deadline already over. */
static void
test_too_large_reserves_nothing (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(TesseraJob) job_big = test_job_new (f->tmp, "local", "big");
  g_autoptr(TesseraJob) job_c = test_job_new (f->tmp, "local", "c");
  g_autoptr(TesseraDynamicDependency) dep_big = NULL;
  g_autoptr(TesseraDynamicDependency) dep_c = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  InProcessWait wait = { NULL, NULL, NULL, FALSE, 0, 0 };
  GThread *thread;

  g_assert_no_error (error);
  g_object_set (counter, "patience", 0.1, NULL);
  dep_big = test_counter_dependency_new (counter, job_big, 5);
  dep_c = test_counter_dependency_new (counter, job_c, 4);
  wait.dep = dep_big;
  wait.timeout = 1.5;
  thread = g_thread_new ("waiter", wait_in_thread, &wait);
  /* The whole wait long, nothing is reserved. */
  while (!g_atomic_int_get (&wait.done))
    {
      g_autoptr(GPtrArray) entries = test_queue_read (f->queue);
      g_assert_cmpuint (entries->len, ==, 0);
      g_usleep (10 * 1000);
    }
  g_thread_join (thread);
  g_assert_error (wait.error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (wait.lock);
  g_clear_error (&wait.error);
  /* Sleeping, not spinning: well under the 1.4 s past the patience. */
  g_assert_cmpfloat (wait.cpu, <, 0.5);
  lock = tessera_dynamic_dependency_lock (dep_c, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_clear_object (&lock);
  g_clear_object (&dep_big);
  g_clear_object (&dep_c);
  test_drop_resource (&counter);
}

/* A reservation written by a waiter on another host whose clock runs an
 * hour behind (or by a file server's clock): its mtime says nothing of
 * its age here. It counts until this host has seen it unchanged for
 * min-age, and a large request behind it waits. */
static void
test_remote_reservation_old_mtime (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "big");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *entry = g_build_filename (f->queue, "remote@1.json", NULL);
  g_autofree char *job_uri = g_build_filename (f->tmp, "elsewhere", "remote", NULL);
  g_autofree char *text = g_strdup_printf (
    "{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"ticket\": 1, \"reserve\": true,"
    " \"process\": {\"type\": \"local\", \"pid\": 4242, \"host\": \"elsewhere.invalid\","
    " \"machine_id\": \"0123456789abcdef0123456789abcdef\", \"host_id\": \"fedcba9876543210fedcba9876543210\"}}",
    job_uri);
  struct utimbuf hour_ago;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (f->queue, 0777), ==, 0);
  g_assert_true (g_file_set_contents (entry, text, -1, NULL));
  hour_ago.actime = hour_ago.modtime = time (NULL) - 3600;
  g_assert_cmpint (g_utime (entry, &hour_ago), ==, 0);

  /* Min-age 30 s: the reservation of 1 counts, so 4 of 4 are not free. */
  dep = test_counter_dependency_new (counter, job, 4);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
  g_clear_error (&error);
  g_assert_true (g_file_test (entry, G_FILE_TEST_IS_REGULAR));

  /* Once this host has seen it unchanged for min-age, it is gone. */
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0.2);
  g_usleep (300 * 1000);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (g_file_test (entry, G_FILE_TEST_EXISTS));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_clear_object (&lock);
  g_clear_object (&dep);
  test_drop_resource (&counter);
}

/* Waits (up to 60 s) until some job other than @previous holds the
 * resource, and returns its identifier. */
static char *
wait_for_new_holder (Fixture *f, const char *previous)
{
  g_autofree char *previous_name = g_strdup_printf ("helper@%s.json", previous);
  g_autofree char *name = test_wait_entry (f->jobs, "helper@", ".json",
                                           (const char *[]) { previous_name, NULL }, 60);

  return g_strndup (name + strlen ("helper@"), strlen (name) - strlen ("helper@") - strlen (".json"));
}

/* A shared request among a stream of exclusive requests that always have
 * a successor waiting when one lets go: the waiting exclusive requests'
 * intents kept it out for ever; past its patience it reserves a share, and
 * is served when the exclusive holder of that moment lets go. */
static void
test_shared_among_exclusive_served (Fixture *f, gconstpointer data)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  g_autofree char *holder_id = g_strdup ("exclusive0");
  Helper *holder, *reader, *next = NULL;

  holder = spawn_peer (f, NULL, "hold", holder_id, "exclusive", NULL, FALSE);
  helper_expect_line (holder, "ACQUIRED", 60);
  reader = start_waiter (f, "reader", "shared", "1", FALSE);

  for (guint i = 1;; i++)
    {
      g_autofree char *id = g_strdup_printf ("exclusive%u", i);
      g_autofree char *taker = NULL;

      if (g_get_monotonic_time () > deadline)
        g_error ("a shared request with a 1 s patience was not served in 20 s of exclusive "
                 "requests (%u of them)", i);
      /* The next one waits before this one lets go. */
      next = spawn_peer (f, NULL, "request", id, "exclusive", "100", FALSE);
      helper_expect_line (next, "WAITING", 60);
      helper_close_stdin (holder);
      helper_expect_line (holder, "RELEASED", 60);
      g_assert_cmpint (helper_wait (holder), ==, 0);
      helper_free (holder);
      taker = wait_for_new_holder (f, holder_id);
      if (g_str_equal (taker, "reader"))
        break;
      g_assert_cmpstr (taker, ==, id);
      helper_expect_line (next, "ACQUIRED", 60);
      holder = next;
      g_free (holder_id);
      holder_id = g_steal_pointer (&id);
    }
  assert_served_soon (reader, "shared");
  helper_free (reader);
  /* The exclusive request left waiting gets the mutex now. */
  helper_expect_line (next, "ACQUIRED", 60);
  helper_close_stdin (next);
  helper_expect_line (next, "RELEASED", 60);
  g_assert_cmpint (helper_wait (next), ==, 0);
  helper_free (next);
}

/* The devices named by the lock file of job @id, as "2" or "0,3". */
static char *
held_devices (Fixture *f, const char *id)
{
  g_autofree char *name = g_strdup_printf ("helper@%s.json", id);
  g_autofree char *path = g_build_filename (f->jobs, name, NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  JsonArray *devices;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  devices = json_object_get_array_member (
    json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "information"), "devices");
  for (guint i = 0; i < json_array_get_length (devices); i++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "",
                            json_object_get_int_member (json_array_get_object_element (devices, i), "index"));
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* A later request granted while a waiter reserves takes a device the
 * waiter did not reserve, though a reserved one is lower and free: on 2
 * large devices (0, 1) and 2 small ones, 1 held, a waiter for 2 large
 * ones reserves 0 (free) and 1; the next 1-device request gets 2, not 0;
 * once 1 comes free, the waiter has both. */
static void
test_later_request_takes_unreserved_device (Fixture *f, gconstpointer data)
{
  Helper *holders[2];
  g_autoptr(Helper) large = NULL;
  g_autofree char *devices = NULL;
  g_autofree char *answer = NULL;
  Helper *small;

  f->setting = "devices=0:16384:GPU-aaaa;1:16384:GPU-bbbb;2:1024:GPU-cccc;3:1024:GPU-dddd";
  for (guint i = 0; i < G_N_ELEMENTS (holders); i++)
    {
      g_autofree char *id = g_strdup_printf ("holder%u", i);

      holders[i] = spawn_peer (f, NULL, "hold", id, "1", NULL, FALSE);
      helper_expect_line (holders[i], "ACQUIRED", 60);
    }
  devices = held_devices (f, "holder1");
  g_assert_cmpstr (devices, ==, "1");
  g_clear_pointer (&devices, g_free);
  release_one (holders[0]);
  large = start_waiter (f, "large", "2:16G", "1", FALSE);
  wait_for_reservation (f, 60);

  small = try_once (f, "small", "1", &answer);
  g_assert_cmpstr (answer, ==, "ACQUIRED");
  devices = held_devices (f, "small");
  g_assert_cmpstr (devices, ==, "2");
  g_clear_pointer (&devices, g_free);
  release_one (holders[1]);
  helper_expect_line (large, "ACQUIRED", 60);
  devices = held_devices (f, "large");
  g_assert_cmpstr (devices, ==, "0,1");
  helper_close_stdin (large);
  helper_expect_line (large, "RELEASED", 60);
  g_assert_cmpint (helper_wait (large), ==, 0);
  release_one (small);
}

/* The pool's folder moved away (renamed, another made at its path)
 * while a resource has it open: its waiter's entry still goes to the
 * queue/ of the folder it opened, made there the first time through the
 * descriptor it keeps (jobs/ is reached so too); nothing is made in the
 * folder that is at the path now. */
static void
test_queue_made_in_opened_folder (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "big");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *moved = g_strconcat (f->folder, ".moved", NULL);
  g_autofree char *moved_queue = g_build_filename (moved, "queue", NULL);

  g_assert_no_error (error);
  g_assert_false (g_file_test (f->queue, G_FILE_TEST_EXISTS));
  /* More than the whole pool: it waits, within its patience. */
  dep = test_counter_dependency_new (counter, job, 5);
  g_assert_cmpint (g_rename (f->folder, moved), ==, 0);
  g_assert_cmpint (g_mkdir (f->folder, 0700), ==, 0);
  lock = tessera_dynamic_dependency_lock (dep, 0.3, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
  g_assert_true (g_file_test (moved_queue, G_FILE_TEST_IS_DIR));
  g_assert_false (g_file_test (f->queue, G_FILE_TEST_EXISTS));
  g_clear_object (&dep);
  test_drop_resource (&counter);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down)
  ADD ("/queue/large-request-served-within-patience", NULL, test_large_request_served);
  ADD ("/queue/large-request-served-within-patience/async", "async", test_large_request_served);
  ADD ("/queue/patient-waiter-idles-nothing", NULL, test_patient_waiter_idles_nothing);
  ADD ("/queue/patient-waiter-idles-nothing/async", "async", test_patient_waiter_idles_nothing);
  ADD ("/queue/killed-reserving-waiter-blocks-no-one", NULL, test_killed_reserving_waiter);
  ADD ("/queue/killed-reserving-waiter-blocks-no-one/async", "async", test_killed_reserving_waiter);
  ADD ("/queue/tool-run-served-within-patience", NULL, test_tool_run_served);
  ADD ("/queue/in-process/reserve-then-serve", &counter_case, test_in_process);
  ADD ("/queue/in-process/reserve-then-serve/async", &counter_async_case, test_in_process);
  ADD ("/queue/in-process/too-large-reserves-nothing", NULL, test_too_large_reserves_nothing);
  ADD ("/queue/remote-reservation-aged-by-this-host", NULL, test_remote_reservation_old_mtime);
  ADD ("/queue/in-process/gpu-reserves-devices", &gpu_case, test_in_process);
  ADD ("/queue/in-process/mutex-exclusive-reserves-the-mutex", &exclusive_case, test_in_process);
  ADD ("/queue/in-process/mutex-shared-reserves-a-share", &shared_case, test_in_process);
#define ADD_PLUGIN(path, type, fn) g_test_add (path, Fixture, type, plugin_fixture_set_up, fn, fixture_tear_down)
  ADD_PLUGIN ("/queue/gpu/large-request-served-within-patience", "gpu", test_large_request_served);
  ADD_PLUGIN ("/queue/gpu/killed-reserving-waiter-blocks-no-one", "gpu", test_killed_reserving_waiter);
  ADD_PLUGIN ("/queue/gpu/later-request-takes-unreserved-device", "gpu", test_later_request_takes_unreserved_device);
  ADD_PLUGIN ("/queue/mutex/exclusive-among-shared-served-within-patience", "mutex", test_large_request_served);
  ADD_PLUGIN ("/queue/mutex/shared-among-exclusive-served-within-patience", "mutex",
              test_shared_among_exclusive_served);
  ADD ("/queue/made-in-the-opened-folder", NULL, test_queue_made_in_opened_folder);
  return g_test_run ();
}
