/* test-queue.c: waiters queue in the folder; past their patience they
 * reserve what they need, before that they idle nothing, and a dead one
 * blocks no one. Real processes (tessera-helper) on a real folder.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

typedef struct
{
  char *tmp;
  char *folder;
  char *queue;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;

  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->queue = g_build_filename (f->folder, "queue", NULL);
  counter = test_counter_new (f->folder, 4, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->folder);
  g_free (f->queue);
}

/* The queue entries (the JSON files in @queue) as parsed objects. */
static GPtrArray *
read_queue_at (const char *queue)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (queue, name, NULL);
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (!g_str_has_suffix (name, ".json") || !json_parser_load_from_file (parser, path, NULL))
        continue;
      if (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        g_ptr_array_add (entries, json_node_copy (json_parser_get_root (parser)));
    }
  return entries;
}

/* The entries of the fixture's counter, F/queue. */
static GPtrArray *
read_queue (Fixture *f)
{
  return read_queue_at (f->queue);
}

/* Waits (up to @timeout_s) until the queue holds a reserving entry. */
static void
wait_for_reservation (Fixture *f, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);

  for (;;)
    {
      g_autoptr(GPtrArray) entries = read_queue (f);

      for (guint i = 0; i < entries->len; i++)
        {
          JsonObject *object = json_node_get_object (g_ptr_array_index (entries, i));
          if (json_object_get_boolean_member_with_default (object, "reserve", FALSE))
            return;
        }
      if (g_get_monotonic_time () > deadline)
        g_error ("no reserving queue entry in %s within %.0f s", f->queue, timeout_s);
      g_usleep (10 * 1000);
    }
}

/* Starts a helper that takes 1 token at once and holds it: returns its
 * answer ("ACQUIRED" or "UNAVAILABLE") in @line. */
static Helper *
take_one (Fixture *f, const char *id, char **line)
{
  Helper *helper = helper_spawn (NULL, "try", f->folder, "-1", id, "1", NULL);

  helper_expect_line (helper, "READY", 60);
  helper_write_line (helper, "go");
  *line = helper_read_line (helper, 60);
  return helper;
}

static void
release_one (Helper *helper)
{
  helper_close_stdin (helper);
  g_assert_cmpint (helper_wait (helper), ==, 0);
  helper_free (helper);
}

/* 1-token requests that overlap, starting with @held's: each takes its
 * token before the previous one lets go, so 4 are never free at once.
 * Goes on until one is refused (a reservation), for 20 s at most. */
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
        g_error ("1-token requests were still served 20 s after a 4-token request with a "
                 "1 s patience began to wait (%u of them)", i);
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

/* A request for 4 tokens of 4 among a stream of 1-token requests that
 * overlap (each small holder takes its token before the previous one lets
 * go, so 4 are never free at once): without reservations it starves; with
 * them it is served about a patience after it arrived. */
static void
test_large_request_served (Fixture *f, gconstpointer data)
{
  static const char * const patience_env[] = { "TESSERA_PATIENCE", "1", NULL };
  g_autoptr(Helper) big = NULL;
  g_autofree char *line = NULL;
  Helper *held;
  long ms;

  held = take_one (f, "small0", &line);
  g_assert_cmpstr (line, ==, "ACQUIRED");
  big = helper_spawn (patience_env, "request", f->folder, "-1", "big", "4", "60",
                      data != NULL ? "async" : NULL, NULL);
  helper_expect_line (big, "WAITING", 60);
  relay_until_refused (f, held);

  g_clear_pointer (&line, g_free);
  line = helper_read_line (big, 90);
  g_test_message ("4-token request: %s", line);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED ms="));
  ms = strtol (line + strlen ("ACQUIRED ms="), NULL, 10);
  /* Patience 1 s, plus a generous margin for a loaded machine. */
  g_assert_cmpint (ms, <, 16 * 1000);
  helper_close_stdin (big);
  helper_expect_line (big, "RELEASED", 60);
  g_assert_cmpint (helper_wait (big), ==, 0);
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
  entries = read_queue (f);
  g_assert_cmpuint (entries->len, ==, 0);
  g_clear_pointer (&entries, g_ptr_array_unref);

  for (guint i = 0; i < G_N_ELEMENTS (small); i++)
    release_one (small[i]);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (big, "ACQUIRED", 90);
  entries = read_queue (f);
  g_assert_cmpuint (entries->len, ==, 0);
  helper_close_stdin (big);
  helper_expect_line (big, "RELEASED", 60);
  g_assert_cmpint (helper_wait (big), ==, 0);
}

/* A reserving waiter keeps later small requests out; SIGKILLed, it keeps
 * no one out. */
static void
test_killed_reserving_waiter (Fixture *f, gconstpointer data)
{
  static const char * const patience_env[] = { "TESSERA_PATIENCE", "0.5", NULL };
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "2", NULL);
  g_autoptr(Helper) big = NULL;
  g_autoptr(Helper) first = NULL;
  g_autoptr(Helper) second = NULL;
  g_autoptr(GPtrArray) entries = NULL;

  helper_expect_line (holder, "ACQUIRED", 60);
  big = helper_spawn (patience_env, "request", f->folder, "-1", "big", "4", "100",
                      data != NULL ? "async" : NULL, NULL);
  helper_expect_line (big, "WAITING", 60);
  wait_for_reservation (f, 60);

  /* 2 held and 4 reserved: nothing is left for a later arrival. */
  first = helper_spawn (NULL, "try", f->folder, "-1", "first", "1", NULL);
  helper_expect_line (first, "READY", 60);
  helper_write_line (first, "go");
  helper_expect_line (first, "UNAVAILABLE", 60);
  helper_close_stdin (first);
  g_assert_cmpint (helper_wait (first), ==, 0);

  helper_kill (big, SIGKILL);
  helper_wait (big);

  second = helper_spawn (NULL, "try", f->folder, "-1", "second", "1", NULL);
  helper_expect_line (second, "READY", 60);
  helper_write_line (second, "go");
  helper_expect_line (second, "ACQUIRED", 60);
  /* The dead waiter's entry went with the decision that ignored it. */
  entries = read_queue (f);
  g_assert_cmpuint (entries->len, ==, 0);
  helper_close_stdin (second);
  g_assert_cmpint (helper_wait (second), ==, 0);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* The same in one process (so that valgrind sees the queue's code): the
 * "patience" property, a waiting thread or an async wait that reserves,
 * a try that finds nothing left, and no entry left behind. */
typedef struct
{
  TesseraDynamicDependency *dep;
  TesseraDynamicDependencyLock *lock;
  GError *error;
  gint done;
  double timeout;
  double cpu;       /* seconds the waiting thread used */
} InProcessWait;

/* Drops the test's resource and waits until it is gone: the poller's
 * thread may hold it a moment longer (draining its inotify events), and
 * it must not see the fixture remove the folder. */
static void
drop_resource (gpointer resource_location)
{
  GObject **counter = resource_location;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  GWeakRef weak;
  GObject *alive;

  g_weak_ref_init (&weak, *counter);
  g_clear_object (counter);
  while ((alive = g_weak_ref_get (&weak)) != NULL)
    {
      g_object_unref (alive);
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
  g_weak_ref_clear (&weak);
}

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

static gboolean
has_reserving_entry_at (const char *queue)
{
  g_autoptr(GPtrArray) entries = read_queue_at (queue);

  for (guint i = 0; i < entries->len; i++)
    if (json_object_get_boolean_member_with_default (json_node_get_object (g_ptr_array_index (entries, i)),
                                                     "reserve", FALSE))
      return TRUE;
  return FALSE;
}

static gboolean
has_reserving_entry (Fixture *f)
{
  return has_reserving_entry_at (f->queue);
}

static void
test_in_process (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(TesseraJob) job_a = test_job_new (f->tmp, "local", "a");
  g_autoptr(TesseraJob) job_big = test_job_new (f->tmp, "local", "big");
  g_autoptr(TesseraJob) job_c = test_job_new (f->tmp, "local", "c");
  g_autoptr(TesseraDynamicDependency) dep_a = NULL;
  g_autoptr(TesseraDynamicDependency) dep_big = NULL;
  g_autoptr(TesseraDynamicDependency) dep_c = NULL;
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(TesseraDynamicDependencyLock) refused = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  InProcessWait wait = { NULL, NULL, NULL, FALSE, 0, 0 };
  GThread *thread = NULL;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  double patience = 0;

  g_assert_no_error (error);
  g_object_get (counter, "patience", &patience, NULL);
  g_assert_cmpfloat (patience, ==, 60);
  g_object_set (counter, "patience", 0.3, NULL);
  dep_a = test_counter_dependency_new (counter, job_a, 2);
  dep_big = test_counter_dependency_new (counter, job_big, 4);
  dep_c = test_counter_dependency_new (counter, job_c, 1);
  held = tessera_dynamic_dependency_lock (dep_a, 0, NULL, &error);
  g_assert_no_error (error);

  wait.dep = dep_big;
  wait.timeout = 60;
  if (data != NULL)
    tessera_dynamic_dependency_lock_async (dep_big, 60, NULL, on_in_process_locked, &wait);
  else
    thread = g_thread_new ("waiter", wait_in_thread, &wait);
  while (!has_reserving_entry (f))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (data != NULL)
        g_main_context_iteration (NULL, TRUE);
      else
        g_usleep (10 * 1000);
    }

  /* 2 held, 4 reserved: a try for 1 finds nothing left. */
  refused = tessera_dynamic_dependency_lock (dep_c, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (refused);
  g_clear_error (&error);

  tessera_lock_release (TESSERA_LOCK (held));
  if (data != NULL)
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
  entries = read_queue (f);
  g_assert_cmpuint (entries->len, ==, 0);
  tessera_lock_release (TESSERA_LOCK (wait.lock));
  g_clear_object (&wait.lock);
  g_clear_object (&held);
  g_clear_object (&dep_a);
  g_clear_object (&dep_big);
  g_clear_object (&dep_c);
  drop_resource (&counter);
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
      g_autoptr(GPtrArray) entries = read_queue (f);
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
  tessera_lock_release (TESSERA_LOCK (lock));
  g_clear_object (&lock);
  g_clear_object (&dep_big);
  g_clear_object (&dep_c);
  drop_resource (&counter);
}

/* A plugin's waiter in this process (so that valgrind sees the plugin's
 * reservations): @held is granted, @waiting waits and reserves past its
 * patience, @refused finds nothing left; once @held is released, the
 * waiter is served and leaves no entry. */
typedef struct
{
  const char *type;
  const char *devices;   /* the gpu's setting, or NULL */
  const char *held;
  const char *waiting;
  const char *refused;
} PluginCase;

static const PluginCase gpu_case = { "gpu", "0:1024:GPU-aaaa;1:1024:GPU-bbbb;2;3", "2", "4", "1" };
static const PluginCase exclusive_case = { "mutex", NULL, "shared", "exclusive", "shared" };
static const PluginCase shared_case = { "mutex", NULL, "exclusive", "shared", "exclusive" };

static TesseraDynamicDependency *
plugin_dependency (TesseraDynamicResource *resource, Fixture *f, const char *id, const char *request)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", id);
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependency *dep = tessera_dynamic_resource_create_dependency (resource, job, request, &error);

  g_assert_no_error (error);
  return dep;
}

static void
test_in_process_plugin (Fixture *f, gconstpointer data)
{
  const PluginCase *c = data;
  g_autofree char *folder = g_build_filename (f->tmp, c->type, NULL);
  g_autofree char *queue = g_build_filename (folder, "queue", NULL);
  const char *keys[] = { "lock-folder", c->devices != NULL ? "devices" : NULL, NULL };
  const char *values[] = { folder, c->devices, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicResource) resource =
    tessera_registry_create_resource (tessera_registry_get_default (), c->type, "r", keys, values, &error);
  g_autoptr(TesseraDynamicDependency) dep_held = NULL;
  g_autoptr(TesseraDynamicDependency) dep_waiting = NULL;
  g_autoptr(TesseraDynamicDependency) dep_refused = NULL;
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(TesseraDynamicDependencyLock) refused = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  InProcessWait wait = { NULL, NULL, NULL, FALSE, 60, 0 };
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  GThread *thread;

  g_assert_no_error (error);
  g_object_set (resource, "patience", 0.3, NULL);
  dep_held = plugin_dependency (resource, f, "held", c->held);
  dep_waiting = plugin_dependency (resource, f, "waiting", c->waiting);
  dep_refused = plugin_dependency (resource, f, "refused", c->refused);
  held = tessera_dynamic_dependency_lock (dep_held, 0, NULL, &error);
  g_assert_no_error (error);

  wait.dep = dep_waiting;
  thread = g_thread_new ("waiter", wait_in_thread, &wait);
  while (!has_reserving_entry_at (queue))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (10 * 1000);
    }
  refused = tessera_dynamic_dependency_lock (dep_refused, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (refused);
  g_clear_error (&error);

  tessera_lock_release (TESSERA_LOCK (held));
  g_thread_join (thread);
  g_assert_no_error (wait.error);
  g_assert_nonnull (wait.lock);
  entries = read_queue_at (queue);
  g_assert_cmpuint (entries->len, ==, 0);
  tessera_lock_release (TESSERA_LOCK (wait.lock));
  g_clear_object (&wait.lock);
  g_clear_object (&held);
  g_clear_object (&dep_held);
  g_clear_object (&dep_waiting);
  g_clear_object (&dep_refused);
  drop_resource (&resource);
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
  ADD ("/queue/in-process/reserve-then-serve", NULL, test_in_process);
  ADD ("/queue/in-process/reserve-then-serve/async", "async", test_in_process);
  ADD ("/queue/in-process/too-large-reserves-nothing", NULL, test_too_large_reserves_nothing);
  ADD ("/queue/in-process/gpu-reserves-devices", &gpu_case, test_in_process_plugin);
  ADD ("/queue/in-process/mutex-exclusive-reserves-the-mutex", &exclusive_case, test_in_process_plugin);
  ADD ("/queue/in-process/mutex-shared-reserves-a-share", &shared_case, test_in_process_plugin);
  return g_test_run ();
}
