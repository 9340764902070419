/* test-plugins.c: the registry and the countertoken, gpu and mutex
 * plugins (issue "Plugins", acceptance 1-5).
 *
 * TESSERA_PLUGIN_PATH names the build tree's plugin folders (set by
 * meson); the third-party example is copied to a temporary folder.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-utils.h"

#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Registry */

static void
test_list_without_loading (void)
{
  if (g_test_subprocess ())
    {
      TesseraRegistry *registry = tessera_registry_get_default ();
      g_autoptr(GPtrArray) plugins = tessera_registry_list_plugins (registry);
      g_autoptr(GError) error = NULL;
      gboolean seen[3] = { FALSE, FALSE, FALSE };
      const char *names[3] = { "countertoken", "gpu", "mutex" };

      for (guint i = 0; i < plugins->len; i++)
        {
          TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
          for (guint j = 0; j < 3; j++)
            if (g_strcmp0 (tessera_plugin_info_get_module (info), names[j]) == 0)
              {
                seen[j] = TRUE;
                g_assert_true (g_strv_contains (tessera_plugin_info_get_resource_types (info), names[j]));
              }
          g_assert_false (tessera_plugin_info_is_loaded (info));
        }
      g_assert_true (seen[0] && seen[1] && seen[2]);

      /* A lookup loads exactly the module it needs. */
      g_assert_true (g_type_is_a (tessera_registry_lookup_resource_type (registry, "mutex", &error),
                                  TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE));
      g_assert_no_error (error);
      g_assert_true (tessera_registry_is_module_loaded (registry, "mutex"));
      g_assert_false (tessera_registry_is_module_loaded (registry, "countertoken"));
      g_assert_false (tessera_registry_is_module_loaded (registry, "gpu"));

      /* A (module, class) pair from locks.json loads its provider. */
      g_assert_true (g_type_is_a (tessera_registry_lookup_lock_class (registry, "experimaestro.tokens",
                                                                      "CounterTokenLock", &error),
                                  TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK));
      g_assert_no_error (error);
      g_assert_true (tessera_registry_is_module_loaded (registry, "countertoken"));
      g_assert_false (tessera_registry_is_module_loaded (registry, "gpu"));

      /* Asking again does not load anything twice. */
      g_assert_true (tessera_registry_lookup_resource_type (registry, "countertoken", &error) != G_TYPE_INVALID);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_hostile_names (void)
{
  const char *bad[] = { "../countertoken", "/usr/lib/libc", "a/b", "..", ".hidden", "sp ace", "x;y", "" };
  TesseraRegistry *registry = tessera_registry_get_default ();

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_cmpuint (tessera_registry_lookup_resource_type (registry, bad[i], &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
      g_clear_error (&error);
      g_assert_cmpuint (tessera_registry_lookup_lock_class (registry, bad[i], "CounterTokenLock", &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
      g_clear_error (&error);
      g_assert_cmpuint (tessera_registry_lookup_lock_class (registry, "tessera.countertoken", bad[i], &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
    }
  {
    g_autoptr(GError) error = NULL;
    g_assert_cmpuint (tessera_registry_lookup_resource_type (registry, "no-such-type", &error), ==, G_TYPE_INVALID);
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
  }
}

/* Settings given as text are read as a keyfile's values of the property's
 * type, within its range; a string comes through as given. */
static void
test_settings_from_text (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, " odd\\name;x", NULL);
  const char *bad_totals[] = { "three", "4 cpus", "", "-5", "2147483648", "99999999999999999999", "0x10" };
  const char *keys[] = { "lock-folder", "total", "read-only", NULL };
  TesseraRegistry *registry = tessera_registry_get_default ();

  {
    const char *values[] = { folder, "4", "true", NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(TesseraDynamicResource) resource =
      tessera_registry_create_resource (registry, "countertoken", "r", keys, values, &error);
    gint64 total = 0;
    gboolean read_only = FALSE;

    g_assert_no_error (error);
    g_object_get (resource, "total", &total, "read-only", &read_only, NULL);
    g_assert_cmpint (total, ==, 4);
    g_assert_true (read_only);
    g_assert_cmpstr (tessera_tracked_dynamic_resource_get_lock_folder (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource)),
                     ==, folder);
  }
  for (guint i = 0; i < G_N_ELEMENTS (bad_totals); i++)
    {
      const char *values[] = { folder, bad_totals[i], "true", NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicResource) resource =
        tessera_registry_create_resource (registry, "countertoken", "r", keys, values, &error);

      g_test_message ("total=%s", bad_totals[i]);
      g_assert_null (resource);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
      g_assert_nonnull (strstr (error->message, "total"));
    }
  {
    const char *values[] = { folder, "4", "maybe", NULL };
    const char *unknown_keys[] = { "lock-folder", "totl", NULL };
    const char *unknown_values[] = { folder, "4", NULL };
    g_autoptr(GError) error = NULL;

    g_assert_null (tessera_registry_create_resource (registry, "countertoken", "r", keys, values, &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
    g_clear_error (&error);
    g_assert_null (tessera_registry_create_resource (registry, "countertoken", "r", unknown_keys, unknown_values,
                                                     &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  }
  {
    /* A setting given twice, under one spelling or two, is a configuration
     * error naming it, not a GObject critical. */
    const char *twice_keys[] = { "lock-folder", "total", "total", NULL };
    const char *twice_values[] = { folder, "4", "5", NULL };
    const char *spelled_keys[] = { "lock-folder", "lock_folder", NULL };
    const char *spelled_values[] = { folder, folder, NULL };
    g_autoptr(GError) error = NULL;

    g_assert_null (tessera_registry_create_resource (registry, "countertoken", "r", twice_keys, twice_values,
                                                     &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
    g_assert_nonnull (strstr (error->message, "total"));
    g_clear_error (&error);
    g_assert_null (tessera_registry_create_resource (registry, "countertoken", "r", spelled_keys, spelled_values,
                                                     &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
    g_assert_nonnull (strstr (error->message, "lock"));
  }
}

/* A manifest whose Module is a path is ignored, not followed. */
static void
test_hostile_manifest (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *manifest = g_build_filename (tmp, "evil.plugin", NULL);
  const char *path[] = { tmp, NULL };
  g_autoptr(TesseraRegistry) registry = tessera_registry_new (path);
  g_autoptr(GPtrArray) plugins = NULL;
  g_autoptr(GError) error = NULL;

  test_expect_warnings ();
  test_write_file (manifest, "[Plugin]\nModule=../../tmp/evil\nResourceTypes=evil\n");
  plugins = tessera_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 0);
  g_assert_cmpuint (tessera_registry_lookup_resource_type (registry, "evil", &error), ==, G_TYPE_INVALID);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
  test_remove_tree (tmp);
}

/* An info made without a manifest (g_object_new, as a binding may) has
 * no name: NULL, not a critical. */
static void
test_name_without_manifest (void)
{
  g_autoptr(TesseraPluginInfo) info = g_object_new (TESSERA_TYPE_PLUGIN_INFO, NULL);

  g_assert_null (tessera_plugin_info_get_name (info));
}

/* A manifest's Name, localised as the user's languages say, else its
 * Module: read when asked for, as it was with the rest of the manifest. */
static void
test_names_for_people (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *alpha = g_build_filename (tmp, "alpha.plugin", NULL);
  g_autofree char *beta = g_build_filename (tmp, "beta.plugin", NULL);
  g_autofree char *language = g_strdup (g_getenv ("LANGUAGE"));
  const char *path[] = { tmp, NULL };
  g_autoptr(TesseraRegistry) registry = tessera_registry_new (path);
  g_autoptr(GPtrArray) plugins = NULL;

  test_write_file (alpha, "[Plugin]\nModule=alpha\nName=Alpha tokens\nName[fr]=Jetons alpha\nResourceTypes=alpha\n");
  test_write_file (beta, "[Plugin]\nModule=beta\nResourceTypes=beta\n");
  g_setenv ("LANGUAGE", "fr", TRUE);
  plugins = tessera_registry_list_plugins (registry);
  g_assert_cmpuint (plugins->len, ==, 2);
  for (guint i = 0; i < plugins->len; i++)
    {
      TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
      const char *expected = g_str_equal (tessera_plugin_info_get_module (info), "alpha") ? "Jetons alpha" : "beta";

      g_assert_cmpstr (tessera_plugin_info_get_name (info), ==, expected);
      /* The same string each time it is asked. */
      g_assert_true (tessera_plugin_info_get_name (info) == tessera_plugin_info_get_name (info));
    }
  if (language != NULL)
    g_setenv ("LANGUAGE", language, TRUE);
  else
    g_unsetenv ("LANGUAGE");
  test_remove_tree (tmp);
}

static void
test_broken_module (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *manifest = g_build_filename (tmp, "broken.plugin", NULL);
  g_autofree char *library = g_build_filename (tmp, "libbroken.so", NULL);
  const char *path[] = { tmp, NULL };
  g_autoptr(TesseraRegistry) registry = tessera_registry_new (path);
  g_autoptr(GError) error = NULL;

  test_write_file (manifest, "[Plugin]\nModule=broken\nResourceTypes=broken\n");
  test_write_file (library, "this is not an ELF file");
  g_assert_cmpuint (tessera_registry_lookup_resource_type (registry, "broken", &error), ==, G_TYPE_INVALID);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, manifest));
  g_assert_nonnull (strstr (error->message, "libbroken.so"));
  test_remove_tree (tmp);
}

/* A real shared module without the entry point its manifest implies. */
static void
test_module_without_entry_point (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *manifest = g_build_filename (tmp, "nosymbol.plugin", NULL);
  g_autofree char *library = g_build_filename (tmp, "libnosymbol.so", NULL);
  g_autofree char *source = g_test_build_filename (G_TEST_BUILT, "example-plugin", "libslots.so", NULL);
  g_autofree char *contents = NULL;
  gsize length;
  const char *path[] = { tmp, NULL };
  g_autoptr(TesseraRegistry) registry = tessera_registry_new (path);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (source, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (library, contents, length, NULL));
  test_write_file (manifest, "[Plugin]\nModule=nosymbol\nResourceTypes=nosymbol\n");
  g_assert_cmpuint (tessera_registry_lookup_resource_type (registry, "nosymbol", &error), ==, G_TYPE_INVALID);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "tessera_nosymbol_register_types"));
  test_remove_tree (tmp);
}

/* ---------------------------------------------------------------------- */
/* Multi-process pattern, per type */

static void
run_cyclers (const char *type, const char *folder, const char *log, const char * const *requests,
             guint n, const char *cycles, const char *hold_ms, const char *setting)
{
  Helper *helpers[16];

  g_assert_cmpuint (n, <=, G_N_ELEMENTS (helpers));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *id = g_strdup_printf ("p%u", i);
      helpers[i] = plugin_helper_spawn (NULL, "cycle", type, folder, id, cycles, hold_ms, log,
                                        requests[i], setting, NULL);
    }
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpint (helper_wait (helpers[i]), ==, 0);
      helper_free (helpers[i]);
    }
}

static TesseraTrackedDynamicResource *
open_resource (const char *type, const char *folder)
{
  const char *keys[] = { "lock-folder", NULL };
  const char *values[] = { folder, NULL };
  g_autoptr(GError) error = NULL;
  TesseraDynamicResource *resource =
    tessera_registry_create_resource (tessera_registry_get_default (), type, "r", keys, values, &error);

  g_assert_no_error (error);
  return TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
}

static void
assert_all_back (const char *type, const char *folder)
{
  g_autoptr(TesseraTrackedDynamicResource) resource = open_resource (type, folder);
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (tessera_tracked_dynamic_resource_update (resource, &error));
  files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  g_assert_cmpuint (files->len, ==, 0);
}

static void
test_countertoken_processes (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *log = g_build_filename (tmp, "log", NULL);
  const char *requests[] = { "1", "1", "2", "1", "2", "1" };
  g_autoptr(GArray) events = NULL;
  int used = 0, max_used = 0, acquisitions = 0;

  run_cyclers ("countertoken", folder, log, requests, G_N_ELEMENTS (requests), "30", "6", "total=3");
  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    {
      LogEvent *ev = &g_array_index (events, LogEvent, i);
      int count = atoi (ev->request);
      used += ev->acquire ? count : -count;
      acquisitions += ev->acquire;
      max_used = MAX (max_used, used);
    }
  g_test_message ("countertoken: %d acquisitions, at most %d of 3 tokens", acquisitions, max_used);
  g_assert_cmpint (acquisitions, ==, 6 * 30);
  g_assert_cmpint (max_used, <=, 3);
  g_assert_cmpint (used, ==, 0);
  assert_all_back ("countertoken", folder);
  test_remove_tree (tmp);
}

static void
test_mutex_processes (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "mutex", NULL);
  g_autofree char *log = g_build_filename (tmp, "log", NULL);
  const char *requests[] = { "shared", "shared", "exclusive", "shared", "exclusive", "shared" };
  g_autoptr(GArray) events = NULL;
  int shared = 0, exclusive = 0, max_shared = 0, acquisitions = 0;

  run_cyclers ("mutex", folder, log, requests, G_N_ELEMENTS (requests), "20", "6", "min-age=30");
  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    {
      LogEvent *ev = &g_array_index (events, LogEvent, i);
      int *counter = g_str_equal (ev->request, "shared") ? &shared : &exclusive;
      *counter += ev->acquire ? 1 : -1;
      acquisitions += ev->acquire;
      max_shared = MAX (max_shared, shared);
      g_assert_cmpint (exclusive, <=, 1);
      g_assert_true (exclusive == 0 || shared == 0);
    }
  g_test_message ("mutex: %d acquisitions, at most %d shared holders together", acquisitions, max_shared);
  g_assert_cmpint (acquisitions, ==, 6 * 20);
  g_assert_cmpint (shared + exclusive, ==, 0);
  assert_all_back ("mutex", folder);
  test_remove_tree (tmp);
}

/* Shared holders that always overlap would starve an exclusive request
 * without the intent mechanism: it would get through only once readers
 * start to end, some 20 s later. It must get through while all of them
 * go on. */
static void
test_mutex_exclusive_not_starved (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "mutex", NULL);
  g_autofree char *log = g_build_filename (tmp, "log", NULL);
  Helper *readers[3];
  g_autoptr(Helper) writer = NULL;
  g_autoptr(GArray) events = NULL;
  guint running = 0;
  int shared = 0;

  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    {
      g_autofree char *id = g_strdup_printf ("reader%u", i);
      readers[i] = plugin_helper_spawn (NULL, "cycle", "mutex", folder, id, "60", "400", log, "shared", NULL);
      g_usleep (130 * 1000);   /* staggered: some reader always holds */
    }
  writer = plugin_helper_spawn (NULL, "hold", "mutex", folder, "writer", "exclusive", NULL);
  helper_expect_line (writer, "ACQUIRED", 120);
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    running += helper_is_running (readers[i]);
  g_test_message ("readers still running when the writer got the mutex: %u", running);
  g_assert_cmpuint (running, ==, G_N_ELEMENTS (readers));
  helper_close_stdin (writer);
  helper_expect_line (writer, "RELEASED", 60);
  g_assert_cmpint (helper_wait (writer), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    {
      g_assert_cmpint (helper_wait (readers[i]), ==, 0);
      helper_free (readers[i]);
    }
  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    shared += g_array_index (events, LogEvent, i).acquire ? 1 : -1;
  g_assert_cmpint (shared, ==, 0);
  g_assert_cmpuint (events->len, ==, 2 * 3 * 60);
  test_remove_tree (tmp);
}

/* A shared waiter within its patience, whose waiting entry (queue/NAME.waiting,
 * for status) is written, does not pass a waiting exclusive request's
 * intent (ff7f76d): A holds the mutex shared, B waits for it exclusive
 * (its intent written), and C, asking shared with a patience far longer
 * than its wait, must not get it, neither in a wait woken while its entry
 * is there nor in a try after it; once A lets go, B gets it before C. */
typedef struct
{
  TesseraDynamicDependency *dependency;
  double timeout;
  TesseraDynamicDependencyLock *lock;
  GError *error;
  gint done;
} LockCall;

/* C's waiting entry, seen or not before its call returned. */
typedef struct
{
  const char *waiting;
  LockCall *call;
  gboolean seen;
} WaitingCall;

static gboolean
waiting_or_done (gpointer data)
{
  WaitingCall *watch = data;

  watch->seen = g_file_test (watch->waiting, G_FILE_TEST_EXISTS);
  return watch->seen || g_atomic_int_get (&watch->call->done);
}

static gpointer
lock_in_thread (gpointer data)
{
  LockCall *call = data;

  call->lock = tessera_dynamic_dependency_lock (call->dependency, call->timeout, NULL, &call->error);
  g_atomic_int_set (&call->done, TRUE);
  return NULL;
}

static void
test_mutex_waiting_entry_keeps_intent (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "mutex", NULL);
  g_autofree char *intents = g_build_filename (folder, "intents", NULL);
  g_autofree char *job_uri = g_build_filename (tmp, "jobs", "c", "helper", NULL);
  const char *keys[] = { "lock-folder", "patience", NULL };
  const char *values[] = { folder, "3600", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicResource) mutex = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(Helper) a = NULL;
  g_autoptr(Helper) b = NULL;
  g_autofree char *lock_name = NULL;
  g_autofree char *waiting = NULL;
  g_autofree char *line = NULL;
  LockCall call = { NULL, 10, NULL, NULL, FALSE };
  WaitingCall watch;
  gboolean seen = FALSE;
  GThread *thread;

  a = plugin_helper_spawn (NULL, "hold", "mutex", folder, "a", "shared", NULL);
  helper_expect_line (a, "ACQUIRED", 60);
  b = plugin_helper_spawn (NULL, "request", "mutex", folder, "b", "exclusive", "120", NULL);
  helper_expect_line (b, "WAITING", 60);
  /* Its intent (a slow machine may also show its writer's temporary
   * file, or an earlier intent of B's not yet removed). */
  g_assert_cmpuint (test_count_entries (intents), >=, 1);

  mutex = tessera_registry_create_resource (tessera_registry_get_default (), "mutex", "m", keys, values, &error);
  g_assert_no_error (error);
  job = tessera_job_new ("helper", "c", job_uri, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_job_set_process (job, self, &error));
  dep = tessera_dynamic_resource_create_dependency (mutex, job, "shared", &error);
  g_assert_no_error (error);
  lock_name = tessera_job_dup_lock_file_name (job);
  g_assert_true (g_str_has_suffix (lock_name, ".json"));
  lock_name[strlen (lock_name) - strlen (".json")] = '\0';
  waiting = g_strdup_printf ("%s/queue/%s.waiting", folder, lock_name);

  /* C waits, within its patience: its waiting entry is written at its
   * first attempt; woken then, it tries again, and times out (had it got
   * the mutex, its entry may be gone before it was seen). */
  call.dependency = dep;
  watch = (WaitingCall) { waiting, &call, FALSE };
  thread = g_thread_new ("c-waits", lock_in_thread, &call);
  test_wait_until (waiting_or_done, &watch, 60, "%s did not appear", waiting);
  seen = watch.seen;
  if (seen)
    tessera_dynamic_resource_notify_changed (mutex);
  g_thread_join (thread);
  if (call.lock != NULL)
    g_test_message ("the shared waiter got the mutex past the exclusive request's intent in its wait");
  g_assert_null (call.lock);
  g_assert_true (seen);
  g_assert_error (call.error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&call.error);
  g_assert_false (g_file_test (waiting, G_FILE_TEST_EXISTS));
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  if (lock != NULL)
    g_test_message ("the shared waiter's next try got the mutex past the exclusive request's intent");
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);

  /* A lets go: B, not C, is next. */
  helper_close_stdin (a);
  helper_expect_line (a, "RELEASED", 60);
  g_assert_cmpint (helper_wait (a), ==, 0);
  line = helper_read_line (b, 60);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  helper_close_stdin (b);
  helper_expect_line (b, "RELEASED", 60);
  g_assert_cmpint (helper_wait (b), ==, 0);
  lock = tessera_dynamic_dependency_lock (dep, 60, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), &error));
  g_assert_no_error (error);

  g_clear_object (&lock);
  g_clear_object (&dep);
  g_clear_object (&mutex);
  test_remove_tree (tmp);
}

static void
test_gpu_processes (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "gpus", NULL);
  g_autofree char *log = g_build_filename (tmp, "log", NULL);
  const char *requests[] = { "1", "2", "1:16G", "1", "2:16384", "1" };
  g_autoptr(GArray) events = NULL;
  GHashTable *holder_of = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  int acquisitions = 0;

  run_cyclers ("gpu", folder, log, requests, G_N_ELEMENTS (requests), "25", "6",
               "devices=0:16384:GPU-aaaa;1:16384:GPU-bbbb;2:8192;3:8192");
  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    {
      LogEvent *ev = &g_array_index (events, LogEvent, i);
      g_auto(GStrv) devices = g_strsplit (ev->gpus, ",", -1);
      guint wanted = (guint) atoi (ev->request);

      g_assert_cmpuint (g_strv_length (devices), ==, wanted);
      if (strchr (ev->request, ':') != NULL)
        for (guint d = 0; devices[d] != NULL; d++)   /* only the 16 GiB ones */
          g_assert_true (g_str_equal (devices[d], "0") || g_str_equal (devices[d], "1"));
      for (guint d = 0; devices[d] != NULL; d++)
        {
          if (ev->acquire)
            {
              /* Never the same device to two holders. */
              if (g_hash_table_contains (holder_of, devices[d]))
                g_error ("device %s given to %s while %s holds it", devices[d], ev->id,
                         (char *) g_hash_table_lookup (holder_of, devices[d]));
              g_hash_table_insert (holder_of, g_strdup (devices[d]), g_strdup (ev->id));
            }
          else
            g_assert_true (g_hash_table_remove (holder_of, devices[d]));
        }
      acquisitions += ev->acquire;
    }
  g_test_message ("gpu: %d acquisitions", acquisitions);
  g_assert_cmpint (acquisitions, ==, 6 * 25);
  g_assert_cmpuint (g_hash_table_size (holder_of), ==, 0);
  g_hash_table_unref (holder_of);
  assert_all_back ("gpu", folder);
  test_remove_tree (tmp);
}

static void
test_gpu_environment (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "gpus", NULL);
  g_autofree char *env_uuids = NULL;
  g_autofree char *env_indices = NULL;
  g_autoptr(Helper) a = NULL;
  g_autoptr(Helper) b = NULL;

  a = plugin_helper_spawn (NULL, "hold", "gpu", folder, "a", "2", "devices=0:100:GPU-aaaa;1:100:GPU-bbbb;2;3", NULL);
  env_uuids = helper_read_line (a, 60);
  g_assert_cmpstr (env_uuids, ==, "ACQUIRED CUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb CUDA_DEVICE_ORDER=PCI_BUS_ID TESSERA_GPUS=0,1");
  b = plugin_helper_spawn (NULL, "hold", "gpu", folder, "b", "2", NULL);
  env_indices = helper_read_line (b, 60);
  g_assert_cmpstr (env_indices, ==, "ACQUIRED CUDA_VISIBLE_DEVICES=2,3 CUDA_DEVICE_ORDER=PCI_BUS_ID TESSERA_GPUS=2,3");
  helper_close_stdin (a);
  helper_close_stdin (b);
  g_assert_cmpint (helper_wait (a), ==, 0);
  g_assert_cmpint (helper_wait (b), ==, 0);
  test_remove_tree (tmp);
}

/* The job process's side of a gpu lock, rebuilt from its locks.json
 * entry, gives the job the same environment as the scheduler's side. */
static void
test_gpu_job_side_environment (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "gpus", NULL);
  g_autofree char *job_uri = g_build_filename (tmp, "jobs", "g", "1", "g", NULL);
  const char *keys[] = { "lock-folder", "devices", NULL };
  const char *values[] = { folder, "0:100:GPU-aaaa;1:100:GPU-bbbb;2:100:GPU-cccc", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicResource) gpus =
    tessera_registry_create_resource (tessera_registry_get_default (), "gpu", "gpus", keys, values, &error);
  g_autoptr(TesseraJob) job = tessera_job_new ("g", "1", job_uri, &error);
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(JsonObject) entry = NULL;
  g_autoptr(TesseraJobDependencyLock) job_lock = NULL;
  g_auto(GStrv) env = NULL;
  g_auto(GStrv) job_env = NULL;

  g_assert_no_error (error);
  dep = tessera_dynamic_resource_create_dependency (gpus, job, "2", &error);
  g_assert_no_error (error);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  env = tessera_dynamic_dependency_lock_dup_environment (lock);
  g_assert_cmpstr (g_environ_getenv (env, "CUDA_VISIBLE_DEVICES"), ==, "GPU-aaaa,GPU-bbbb");
  g_assert_cmpstr (g_environ_getenv (env, "TESSERA_GPUS"), ==, "0,1");

  entry = tessera_dynamic_dependency_lock_to_json (lock);
  g_assert_cmpstr (json_object_get_string_member (entry, "module"), ==, "tessera.gpu");
  job_lock = tessera_dynamic_dependency_lock_job_lock_from_json (entry, &error);
  g_assert_no_error (error);
  job_env = tessera_job_dependency_lock_dup_environment (job_lock);
  g_assert_cmpstrv (job_env, env);

  tessera_lock_detach (TESSERA_LOCK (lock));
  g_assert_true (tessera_job_dependency_lock_acquire (job_lock, &error));
  g_assert_no_error (error);
  tessera_job_dependency_lock_release (job_lock);
  g_assert_false (g_file_test (tessera_job_dependency_lock_get_lock_file_path (job_lock), G_FILE_TEST_EXISTS));

  g_clear_object (&lock);
  g_clear_object (&dep);
  g_clear_object (&gpus);
  test_remove_tree (tmp);
}

/* A request larger than the resource's current capacity keeps waiting,
 * as experimaestro's does: capacity may grow (tessera set, another device),
 * and then it is granted. */
static void
check_waits_for_capacity (const char *type, const char *request, const char *setting,
                          const char *grown_informations)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "r", NULL);
  g_autofree char *info = g_build_filename (folder, "informations.json", NULL);
  g_autoptr(Helper) h = plugin_helper_spawn (NULL, "hold", type, folder, "big", request, setting, NULL);
  g_autofree char *line = NULL;

  /* The folder exists once the helper opened the resource. */
  test_wait_for_file (info, 60);
  test_write_file (info, grown_informations);
  line = helper_read_line (h, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  helper_close_stdin (h);
  helper_expect_line (h, "RELEASED", 60);
  g_assert_cmpint (helper_wait (h), ==, 0);
  test_remove_tree (tmp);
}

static void
test_request_larger_than_capacity_waits (void)
{
  check_waits_for_capacity ("countertoken", "4", "total=3", "{\"total\": 4}");
  check_waits_for_capacity ("gpu", "3", "devices=0;1",
                            "{\"devices\": [{\"index\": 0}, {\"index\": 1}, {\"index\": 2}]}");
}

/* ---------------------------------------------------------------------- */
/* locks.json */

static void
test_locks_json_round_trip (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *locks_path = g_build_filename (tmp, "locks.json", NULL);
  g_autofree char *job_uri = g_build_filename (tmp, "jobs", "t", "1", "t", NULL);
  g_autoptr(TesseraTrackedDynamicResource) token = open_resource ("countertoken", folder);
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLocks) locks = NULL;
  g_autoptr(TesseraJobDependencyLocks) job_locks = NULL;
  g_autoptr(JsonObject) entry = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) total = json_from_string ("{\"total\": 2}", NULL);
  const char *lock_file;

  g_assert_true (tessera_tracked_dynamic_resource_write_informations (token, total, &error));
  job = tessera_job_new ("t", "1", job_uri, &error);
  g_assert_no_error (error);
  dep = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "2", &error);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  locks = test_locks_json_save (lock, job, locks_path);

  /* The entry carries what the seed's CounterTokenLock.to_json carries. */
  entry = tessera_dynamic_dependency_lock_to_json (lock);
  g_assert_cmpstr (json_object_get_string_member (entry, "module"), ==, "tessera.countertoken");
  g_assert_cmpstr (json_object_get_string_member (entry, "class"), ==, "CounterTokenLock");
  g_assert_cmpstr (json_object_get_string_member (entry, "token_path"), ==, folder);
  g_assert_cmpint (json_object_get_int_member (entry, "count"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "r");
  lock_file = json_object_get_string_member (entry, "lock_file_path");
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_IS_REGULAR));

  job_locks = test_locks_json_take_over (lock, locks_path);
  tessera_job_dependency_locks_release (job_locks);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The set holds the lock, which holds the resource: drop them all before
   * the folder goes, or the poller warns that informations.json vanished. */
  g_clear_object (&locks);
  g_clear_object (&job_locks);
  g_clear_object (&lock);
  g_clear_object (&dep);
  g_clear_object (&token);
  test_remove_tree (tmp);
}

/* locks.json as experimaestro writes it (json.dump of CounterTokenLock.to_json). */
static void
test_locks_json_from_experimaestro (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *fixture = g_test_build_filename (G_TEST_DIST, "fixtures", "experimaestro-locks.json", NULL);
  g_autofree char *template = NULL;
  g_autofree char *text = NULL;
  g_autofree char *locks_path = g_build_filename (tmp, "locks.json", NULL);
  g_autofree char *lock_file = g_build_filename (tmp, "token", "jobs", "my.task@5f1e2d.json", NULL);
  g_autoptr(GString) s = NULL;
  g_autoptr(TesseraJobDependencyLocks) job_locks = NULL;
  g_autoptr(GError) error = NULL;
  TesseraJobDependencyLock *lock;

  g_assert_true (g_file_get_contents (fixture, &template, NULL, NULL));
  s = g_string_new (template);
  g_string_replace (s, "/XPM", tmp, 0);
  test_write_file (locks_path, s->str);
  test_write_file (lock_file, "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}}");

  job_locks = tessera_job_dependency_locks_load (locks_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tessera_job_dependency_locks_get_locks (job_locks)->len, ==, 1);
  g_assert_null (tessera_job_dependency_locks_get_skipped (job_locks)[0]);
  lock = g_ptr_array_index (tessera_job_dependency_locks_get_locks (job_locks), 0);
  g_assert_cmpstr (tessera_job_dependency_lock_get_lock_file_path (lock), ==, lock_file);
  g_assert_true (tessera_job_dependency_locks_acquire (job_locks, &error));
  g_assert_no_error (error);
  tessera_job_dependency_locks_release (job_locks);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  test_remove_tree (tmp);
}

/* ---------------------------------------------------------------------- */
/* A third-party plugin, dropped into a folder of TESSERA_PLUGIN_PATH */

static void
copy_file (const char *from, const char *to)
{
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (from, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (to, contents, length, NULL));
}

static void
test_third_party_plugin (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *plugins = g_build_filename (tmp, "plugins", NULL);
  g_autofree char *folder = g_build_filename (tmp, "builders", NULL);
  g_autofree char *so = g_test_build_filename (G_TEST_BUILT, "example-plugin", "libslots.so", NULL);
  g_autofree char *manifest = g_test_build_filename (G_TEST_BUILT, "example-plugin", "slots.plugin", NULL);
  g_autofree char *so_copy = g_build_filename (plugins, "libslots.so", NULL);
  g_autofree char *manifest_copy = g_build_filename (plugins, "slots.plugin", NULL);
  const char *env[] = { "TESSERA_PLUGIN_PATH", plugins, NULL };
  g_autoptr(Helper) first = NULL;
  g_autoptr(Helper) second = NULL;
  g_autofree char *line = NULL;

  g_mkdir_with_parents (plugins, 0777);
  copy_file (so, so_copy);
  copy_file (manifest, manifest_copy);
  first = plugin_helper_spawn (env, "hold", "slots", folder, "a", "1", "slots=1", NULL);
  helper_expect_line (first, "ACQUIRED", 60);
  second = plugin_helper_spawn (env, "hold", "slots", folder, "b", "1", "slots=1", NULL);
  /* One slot: the second waits until the first lets go. */
  line = helper_read_line (second, 0.5);
  g_assert_null (line);
  helper_close_stdin (first);
  helper_expect_line (second, "ACQUIRED", 60);
  helper_close_stdin (second);
  g_assert_cmpint (helper_wait (first), ==, 0);
  g_assert_cmpint (helper_wait (second), ==, 0);
  test_remove_tree (tmp);
}

/* `tessera plugins` says when a manifest's module is not there, rather
 * than the ordinary "not loaded" of a module it has not needed yet. */
static void
test_tool_module_missing (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *manifest = g_test_build_filename (G_TEST_BUILT, "example-plugin", "slots.plugin", NULL);
  g_autofree char *manifest_copy = g_build_filename (tmp, "slots.plugin", NULL);
  g_autofree char *out = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *line;
  g_autofree char *path = g_strdup_printf ("%s:%s", tmp, g_getenv ("TESSERA_PLUGIN_PATH"));

  copy_file (manifest, manifest_copy);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PLUGIN_PATH", path, TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "plugins", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_true (g_subprocess_get_if_exited (process));
  line = strstr (out, "libslots.so");
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "libslots.so (module missing)"));
  /* The installed plugins are still listed, not loaded. */
  g_assert_nonnull (strstr (out, "libcountertoken.so (not loaded)"));
  test_remove_tree (tmp);
}

/* Occurrences of @needle in @haystack. */
static guint
count_occurrences (const char *haystack, const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* `tessera plugins` lists what each plugin provides, process types and
 * stores included, and no empty line for what it does not; a folder
 * reached by several paths (a "..", a link, the library's own
 * <libdir>/../ path) is listed, and searched, once, by its real path. */
static void
test_tool_lists_every_kind (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *real = g_build_filename (tmp, "plugins", NULL);
  g_autofree char *dotted = g_build_filename (tmp, "plugins", "..", "plugins", NULL);
  g_autofree char *link = g_build_filename (tmp, "link", NULL);
  g_autofree char *manifest = g_test_build_filename (G_TEST_BUILT, "example-plugin", "slots.plugin", NULL);
  g_autofree char *manifest_copy = g_build_filename (real, "slots.plugin", NULL);
  g_autofree char *folder_line = g_strdup_printf ("  %s\n", real);
  g_autofree char *path = g_strdup_printf ("%s:%s:%s:%s", real, dotted, link, g_getenv ("TESSERA_PLUGIN_PATH"));
  g_autofree char *out = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *slurm;
  const char *folders_end;

  g_assert_cmpint (g_mkdir_with_parents (real, 0755), ==, 0);
  g_assert_cmpint (symlink (real, link), ==, 0);
  copy_file (manifest, manifest_copy);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PLUGIN_PATH", path, TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C.UTF-8", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "plugins", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);

  folders_end = strstr (out, "\n\n");
  g_assert_nonnull (folders_end);
  g_assert_cmpuint (count_occurrences (out, folder_line), ==, 1);
  g_assert_null (g_strstr_len (out, folders_end - out, "/../"));
  g_assert_null (g_strstr_len (out, folders_end - out, link));

  if ((slurm = strstr (out, "slurmjobs — Slurm jobs\n")) == NULL)
    g_error ("tessera plugins does not list slurmjobs: %s", out);
  g_assert_nonnull (strstr (slurm, "  process types: slurm\n"));
  if (strstr (out, "etcd — ") != NULL)
    g_assert_nonnull (strstr (strstr (out, "etcd — "), "  stores:   etcd\n"));
  g_assert_nonnull (strstr (out, "  types:    countertoken\n"));
  g_assert_null (strstr (out, "  types:    \n"));
  g_assert_null (strstr (out, "  classes:  \n"));
  test_remove_tree (tmp);
}

/* `tessera --config @config run --no-wait --need r=1 -- true` with
 * @plugin_path searched first and EXAMPLE_BATCH_DIR=@batch_dir: its exit
 * status. */
static int
run_with_batch (const char *config, const char *plugin_path, const char *batch_dir)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  g_subprocess_launcher_setenv (launcher, "TESSERA_PLUGIN_PATH", plugin_path, TRUE);
  g_subprocess_launcher_setenv (launcher, "EXAMPLE_BATCH_DIR", batch_dir, TRUE);
  run = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", config,
                                     "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (run, NULL, NULL, NULL, &err, &error);
  g_assert_no_error (error);
  g_test_message ("%s", err);
  return test_exit_code (run);
}

/* The guide's process-type sample (tests/example-plugin/batch), built out
 * of plugins/ as a third party would and loaded from its folder: a holder
 * whose spec is {"type": "batch", "pid": "42"} counts while the sample's
 * scheduler (a folder of <id>.running files) runs job 42, and is judged
 * dead once it does not. `tessera run` cannot make such a holder: the
 * test writes its lock file as the batch system's launcher would. */
static void
test_process_type_sample (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *plugins = g_build_filename (tmp, "plugins", NULL);
  g_autofree char *folder = g_build_filename (tmp, "r", NULL);
  g_autofree char *batch = g_build_filename (tmp, "batch", NULL);
  g_autofree char *running = g_build_filename (batch, "42.running", NULL);
  g_autofree char *job_dir = g_build_filename (tmp, "xp", "job", NULL);
  g_autofree char *lock_file = g_build_filename (folder, "jobs", "batch@job.json", NULL);
  g_autofree char *config = g_build_filename (tmp, "tessera.conf", NULL);
  g_autofree char *config_text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=1\n", folder);
  g_autofree char *so = g_test_build_filename (G_TEST_BUILT, "example-plugin", "libbatch.so", NULL);
  g_autofree char *manifest = g_test_build_filename (G_TEST_BUILT, "example-plugin", "batch.plugin", NULL);
  g_autofree char *so_copy = g_build_filename (plugins, "libbatch.so", NULL);
  g_autofree char *manifest_copy = g_build_filename (plugins, "batch.plugin", NULL);
  g_autofree char *plugin_path = g_strdup_printf ("%s:%s", plugins, g_getenv ("TESSERA_PLUGIN_PATH"));
  g_autofree char *json = NULL;

  g_assert_cmpint (g_mkdir_with_parents (plugins, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (batch, 0755), ==, 0);
  copy_file (so, so_copy);
  copy_file (manifest, manifest_copy);
  test_write_file (config, config_text);
  test_write_file (running, "");
  json = g_strdup_printf ("{\"job_uri\": \"%s/task\", \"information\": {\"count\": 1},"
                          " \"process\": {\"type\": \"batch\", \"pid\": \"42\"}}", job_dir);
  test_write_file (lock_file, json);

  /* Job 42 runs: its holder takes the only token. */
  g_assert_cmpint (run_with_batch (config, plugin_path, batch), ==, 75);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  /* It ended: its holder is dead, the token free. */
  g_assert_cmpint (g_unlink (running), ==, 0);
  g_assert_cmpint (run_with_batch (config, plugin_path, batch), ==, 0);
  test_remove_tree (tmp);
}

/* Lock files claiming absurd counts add up without wrapping round to a
 * free pool: one claiming G_MAXINT64 and one claiming 1 leave nothing. */
static void
test_counts_saturate (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "r", NULL);
  g_autofree char *config = g_build_filename (tmp, "tessera.conf", NULL);
  g_autofree char *config_text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=3\n", folder);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;
  const char *counts[] = { "9223372036854775807", "1" };

  test_write_file (config, config_text);
  for (guint i = 0; i < G_N_ELEMENTS (counts); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/jobs/huge@%u.json", folder, i);
      g_autofree char *json = g_strdup_printf ("{\"job_uri\": \"%s/job%u\", \"information\": {\"count\": %s}, "
                                               "\"process\": {\"type\": \"local\", \"pid\": %d}}",
                                               tmp, i, counts[i], (int) getpid ());
      test_write_file (path, json);
    }
  run = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error, g_getenv ("TESSERA_TOOL"),
                          "--config", config, "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_subprocess_wait (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (run), ==, 75);
  test_remove_tree (tmp);
}

/* GPU holdings follow the device's UUID, not its index: after
 * informations.json lists the devices in another order, the device a
 * holder has is still taken. */
static void
test_gpu_held_by_uuid (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "g", NULL);
  g_autofree char *info = g_build_filename (folder, "informations.json", NULL);
  g_autoptr(Helper) first = NULL;
  g_autoptr(Helper) second = NULL;
  g_autofree char *line = NULL;

  first = plugin_helper_spawn (NULL, "hold", "gpu", folder, "first", "1",
                               "devices=0:1024:GPU-aaaa;1:1024:GPU-bbbb", NULL);
  line = helper_read_line (first, 60);
  g_assert_nonnull (strstr (line, "GPU-aaaa"));
  g_clear_pointer (&line, g_free);
  test_write_file (info, "{\"devices\": [{\"index\": 0, \"uuid\": \"GPU-bbbb\", \"memory\": 1024}, "
                         "{\"index\": 1, \"uuid\": \"GPU-aaaa\", \"memory\": 1024}]}");
  second = plugin_helper_spawn (NULL, "hold", "gpu", folder, "second", "1", NULL);
  line = helper_read_line (second, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  g_assert_null (strstr (line, "GPU-aaaa"));
  g_assert_nonnull (strstr (line, "GPU-bbbb"));
  helper_close_stdin (first);
  helper_close_stdin (second);
  g_assert_cmpint (helper_wait (first), ==, 0);
  g_assert_cmpint (helper_wait (second), ==, 0);
  test_remove_tree (tmp);
}

/* `tessera --config CONFIG ARGS…` run to its end, its state in @tmp;
 * its output in @out and its error output in @err (freed by the caller).
 * Returns its exit status. */
static int
run_tessera (const char *tmp, const char *config, char **out, char **err, const char *first, ...)
{
  g_autofree char *state = g_build_filename (tmp, "state", NULL);
  va_list ap;
  int status;

  va_start (ap, first);
  status = test_run_tessera_va (state, config, NULL, out, err, first, ap);
  va_end (ap);
  return status;
}

/* How many of gpu pool g's devices `tessera status --json` says are free;
 * @capacity: how many it has. */
static gint64
gpu_free (const char *tmp, const char *config, gint64 *capacity)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *g;

  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", "--json", NULL), ==, 0);
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  g = test_status_first_resource (root);
  *capacity = json_object_get_int_member (g, "capacity");
  return json_object_get_int_member (g, "free");
}

/* The devices (TESSERA_GPUS) `tessera run --no-wait --need g=1` is given,
 * or NULL when it is refused (exit 75). */
static char *
gpu_given (const char *tmp, const char *config)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = run_tessera (tmp, config, &out, &err, "run", "--no-wait", "--need", "g=1", "--",
                            "sh", "-c", "echo \"$TESSERA_GPUS\"", NULL);

  if (status == 75)
    return NULL;
  g_assert_cmpint (status, ==, 0);
  return g_strdup (g_strstrip (out));
}

/* A configuration of gpu pool g in @folder with @devices. */
static char *
gpu_config (const char *tmp, const char *folder, const char *devices)
{
  char *config = g_build_filename (tmp, "tessera.conf", NULL);
  g_autofree char *text = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s\ndevices=%s\n", folder, devices);

  test_write_file (config, text);
  return config;
}

/* A lock file @name in gpu pool @folder of this very process (alive, its
 * start time given: judged through /proc) whose "devices" are @devices. */
static void
write_live_gpu_holding (const char *tmp, const char *folder, const char *name, const char *devices)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autofree char *path = g_strdup_printf ("%s/jobs/%s.json", folder, name);
  g_autofree char *text =
    g_strdup_printf ("{\"job_uri\": \"%s/%s\", \"information\": {\"devices\": %s}, "
                     "\"process\": {\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}}",
                     tmp, name, devices, (int) getpid (), tessera_process_get_start_time (self));

  test_write_file (path, text);
}

/* status --json gives a GPU holder's "amount" as its number of devices,
 * the type-neutral number a script sums per user, and the pool's "held"
 * in the same unit (issue 42, point 5). */
static void
test_gpu_status_amount (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "g", NULL);
  g_autofree char *config = gpu_config (tmp, folder, "0:1024:GPU-aaaa;1:1024:GPU-bbbb;2:1024:GPU-cccc");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *g, *h;

  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", NULL), ==, 0);   /* makes the pool */
  write_live_gpu_holding (tmp, folder, "two@1",
                          "[{\"index\": 0, \"uuid\": \"GPU-aaaa\"}, {\"index\": 2, \"uuid\": \"GPU-cccc\"}]");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", "--json", NULL), ==, 0);
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  g = test_status_first_resource (root);
  g_assert_cmpint (json_object_get_int_member (g, "free"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (g, "held"), ==, 2);
  h = json_array_get_object_element (json_object_get_array_member (g, "holders"), 0);
  g_assert_cmpint (json_object_get_int_member (h, "amount"), ==, 2);
  test_remove_tree (tmp);
}

/* A live holder's device named by a UUID that no device of the list has
 * (the device was replaced, or the list was written by hand) still holds
 * its index: device 0 is not given again. */
static void
test_gpu_unknown_uuid_holds_index (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "g", NULL);
  g_autofree char *config = gpu_config (tmp, folder, "0:1024:GPU-aaaa;1:1024:GPU-bbbb");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *given = NULL;
  gint64 capacity;

  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", NULL), ==, 0);   /* makes the pool */
  write_live_gpu_holding (tmp, folder, "held@1", "[{\"index\": 0, \"uuid\": \"GPU-zzzz\"}]");
  g_assert_cmpint (gpu_free (tmp, config, &capacity), ==, 1);
  g_assert_cmpint (capacity, ==, 2);
  given = gpu_given (tmp, config);
  g_assert_cmpstr (given, ==, "1");
  test_remove_tree (tmp);
}

/* After `tessera set` lists the devices without UUIDs, a holder of
 * GPU-aaaa (index 0 when it took it) still holds device 0. (`tessera set
 * g devices=0;1` is refused: the member is a list.) */
static void
test_gpu_list_without_uuids (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "g", NULL);
  g_autofree char *config = gpu_config (tmp, folder, "0:1024:GPU-aaaa;1:1024:GPU-bbbb");
  g_autoptr(Helper) holder = NULL;
  g_autofree char *line = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *given = NULL;
  gint64 capacity;

  holder = plugin_helper_spawn (NULL, "hold", "gpu", folder, "holder", "1",
                                "devices=0:1024:GPU-aaaa;1:1024:GPU-bbbb", NULL);
  line = helper_read_line (holder, 60);
  g_assert_nonnull (line);
  g_assert_nonnull (strstr (line, "CUDA_VISIBLE_DEVICES=GPU-aaaa "));
  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "set", "g", "devices=[{\"index\": 0}, {\"index\": 1}]",
                                NULL), ==, 0);
  g_assert_cmpint (gpu_free (tmp, config, &capacity), ==, 1);
  g_assert_cmpint (capacity, ==, 2);
  given = gpu_given (tmp, config);
  g_assert_cmpstr (given, ==, "1");
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  test_remove_tree (tmp);
}

/* A live holder's lock file whose device index cannot be read as a sane
 * integer (too large for a double, or for JSON to carry back, negative,
 * not whole, past any device, not a number) holds every device, `tessera
 * status` says why, and `tessera clean --min-age 0` leaves it while its
 * process lives. */
static void
test_gpu_unreadable_index (void)
{
  const char *indices[] = { "1e400", "-1e400", "1e308", "1e17", "1.5e300", "-1", "1.5", "99999999999999999999",
                            "2000", "\"0\"", "null", "true" };
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "g", NULL);
  g_autofree char *config = gpu_config (tmp, folder, "0:1024:GPU-aaaa;1:1024:GPU-bbbb");
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", NULL), ==, 0);   /* makes the pool */
  for (guint i = 0; i < G_N_ELEMENTS (indices); i++)
    {
      g_autofree char *name = g_strdup_printf ("bad@%u", i);
      g_autofree char *devices = g_strdup_printf ("[{\"index\": %s, \"uuid\": \"GPU-aaaa\"}]", indices[i]);
      g_autofree char *path = g_strdup_printf ("%s/jobs/%s.json", folder, name);
      g_autofree char *given = NULL;
      gint64 capacity;

      g_test_message ("index %s", indices[i]);
      write_live_gpu_holding (tmp, folder, name, devices);
      g_assert_cmpint (gpu_free (tmp, config, &capacity), ==, 0);
      g_assert_cmpint (capacity, ==, 2);
      given = gpu_given (tmp, config);
      g_assert_null (given);
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
      g_assert_cmpint (run_tessera (tmp, config, &out, &err, "status", NULL), ==, 0);
      g_assert_nonnull (strstr (out, name));
      g_assert_nonnull (strstr (err, path));
      g_assert_nonnull (strstr (err, "holding everything"));
      g_clear_pointer (&out, g_free);
      g_clear_pointer (&err, g_free);
      g_assert_cmpint (run_tessera (tmp, config, &out, &err, "clean", "--min-age", "0", NULL), ==, 0);
      g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  test_remove_tree (tmp);
}

/* A FIFO planted in a mutex's intents/ is never opened for reading (that
 * would block for ever, under ipc.lock): a shared request still gets
 * the free mutex at once. */
static void
test_mutex_fifo_intent (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "m", NULL);
  g_autofree char *intents = g_build_filename (folder, "intents", NULL);
  g_autofree char *fifo = g_build_filename (intents, "planted@1.json", NULL);
  g_autofree char *config = g_build_filename (tmp, "tessera.conf", NULL);
  g_autofree char *config_text = g_strdup_printf ("[resource db]\ntype=mutex\npath=%s\n", folder);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;

  test_write_file (config, config_text);
  g_assert_cmpint (g_mkdir_with_parents (intents, 0755), ==, 0);
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  run = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error, g_getenv ("TESSERA_TOOL"),
                          "--config", config, "run", "--no-wait", "--need", "db=shared", "--", "true", NULL);
  g_assert_no_error (error);
  g_subprocess_wait (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (run), ==, 0);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/plugins/registry/list-without-loading", test_list_without_loading);
  g_test_add_func ("/plugins/registry/hostile-names", test_hostile_names);
  g_test_add_func ("/plugins/registry/hostile-manifest", test_hostile_manifest);
  g_test_add_func ("/plugins/registry/settings-from-text", test_settings_from_text);
  g_test_add_func ("/plugins/registry/names-for-people", test_names_for_people);
  g_test_add_func ("/plugins/registry/name-without-manifest", test_name_without_manifest);
  g_test_add_func ("/plugins/registry/broken-module", test_broken_module);
  g_test_add_func ("/plugins/registry/module-without-entry-point", test_module_without_entry_point);
  g_test_add_func ("/plugins/countertoken/processes", test_countertoken_processes);
  g_test_add_func ("/plugins/mutex/processes", test_mutex_processes);
  g_test_add_func ("/plugins/mutex/exclusive-not-starved", test_mutex_exclusive_not_starved);
  g_test_add_func ("/plugins/mutex/waiting-entry-keeps-intent", test_mutex_waiting_entry_keeps_intent);
  g_test_add_func ("/plugins/gpu/processes", test_gpu_processes);
  g_test_add_func ("/plugins/gpu/environment", test_gpu_environment);
  g_test_add_func ("/plugins/gpu/job-side-environment", test_gpu_job_side_environment);
  g_test_add_func ("/plugins/request-larger-than-capacity-waits", test_request_larger_than_capacity_waits);
  g_test_add_func ("/plugins/counts-saturate", test_counts_saturate);
  g_test_add_func ("/plugins/gpu-held-by-uuid", test_gpu_held_by_uuid);
  g_test_add_func ("/plugins/gpu/unknown-uuid-holds-its-index", test_gpu_unknown_uuid_holds_index);
  g_test_add_func ("/plugins/gpu/status-amount-is-devices", test_gpu_status_amount);
  g_test_add_func ("/plugins/gpu/list-without-uuids", test_gpu_list_without_uuids);
  g_test_add_func ("/plugins/gpu/unreadable-index", test_gpu_unreadable_index);
  g_test_add_func ("/plugins/mutex/fifo-intent-does-not-hang", test_mutex_fifo_intent);
  g_test_add_func ("/plugins/locks-json/round-trip", test_locks_json_round_trip);
  g_test_add_func ("/plugins/locks-json/from-experimaestro", test_locks_json_from_experimaestro);
  g_test_add_func ("/plugins/third-party", test_third_party_plugin);
  g_test_add_func ("/plugins/tool/module-missing", test_tool_module_missing);
  g_test_add_func ("/plugins/tool/lists-every-kind", test_tool_lists_every_kind);
  g_test_add_func ("/plugins/process-type-sample", test_process_type_sample);
  return g_test_run ();
}
