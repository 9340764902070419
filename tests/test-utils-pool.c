/* test-utils-pool.c: a pool as the library keeps it: lock files planted,
 * locks.json handed over, resources dropped, the fixture of one pool's
 * folder, what status says of it, its queue's entries and the library's
 * warnings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <unistd.h>

/* A valid lock file in @folder's jobs/ naming this (live) test process,
 * holding @count; returns its path. @whole_spec: its process is this
 * process's whole spec, naming this host (on a lock-less FUSE mount, one
 * that names no host may come from another, and the pool is refused);
 * otherwise a bare local pid, as the races tests want. */
char *
test_plant_live_holder (const char *folder, int count, gboolean whole_spec)
{
  g_autofree char *job_uri = g_build_filename (folder, "planted-job", NULL);
  char *path = g_build_filename (folder, "jobs", "planted@1.json", NULL);
  g_autofree char *spec_text = NULL;
  g_autofree char *json = NULL;

  if (whole_spec)
    {
      g_autoptr(TesseraProcess) self = tessera_process_new_self ();
      g_autoptr(JsonNode) spec = tessera_process_to_json (self);

      spec_text = json_to_string (spec, FALSE);
    }
  else
    spec_text = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) getpid ());
  json = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": %d}, "
                          "\"process\": %s}", job_uri, count, spec_text);
  test_write_file (path, json);
  return path;
}

/* Writes @jobs/<name>@id.json for a job whose URI is @tmp/xp/<name>/task,
 * with the given information and process (either may be NULL); returns
 * its path. @job_folder: what of the job's folder is there (a judge can
 * open a job lock that is). */
char *
test_write_lock_file (const char *tmp, const char *jobs, const char *name, const char *information,
                      const char *process, TestJobFolder job_folder)
{
  g_autofree char *job_dir = g_build_filename (tmp, "xp", name, NULL);
  g_autofree char *job_uri = g_build_filename (job_dir, "task", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, "task.lock", NULL);
  g_autofree char *file_name = g_strconcat (name, "@id.json", NULL);
  char *path = g_build_filename (jobs, file_name, NULL);
  g_autoptr(GString) content = g_string_new (NULL);

  if (job_folder != TEST_JOB_FOLDER_NONE)
    g_mkdir_with_parents (job_dir, 0777);
  /* One a helper locks stays. */
  if (job_folder == TEST_JOB_FOLDER_WITH_LOCK && !g_file_test (job_lock, G_FILE_TEST_EXISTS))
    test_write_file (job_lock, "");
  g_string_append_printf (content, "{\"job_uri\": \"%s\"", job_uri);
  if (information != NULL)
    g_string_append_printf (content, ", \"information\": %s", information);
  if (process != NULL)
    g_string_append_printf (content, ", \"process\": %s", process);
  g_string_append (content, "}");
  test_write_file (path, content->str);
  return path;
}

/* Writes @lock_file for a holder of @count units on a third host
 * (third-node, pid 5, a boot of its own) whose job, @job_dir/@task, has
 * its job lock here and free: the verdict on a holder finds it dead,
 * though its pid says nothing here. */
void
test_write_third_host_holder (const char *lock_file, const char *job_dir, const char *task, int count)
{
  g_autofree char *job_lock_name = g_strconcat (task, ".lock", NULL);
  g_autofree char *job_lock = g_build_filename (job_dir, job_lock_name, NULL);
  g_autofree char *text = NULL;

  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  test_write_file (job_lock, "");
  text = g_strdup_printf ("{\"job_uri\": \"%s/%s\", \"information\": {\"count\": %d}, "
                          "\"process\": {\"type\": \"local\", \"pid\": 5, \"start_time\": 1, "
                          "\"host\": \"third-node\", \"boot_id\": \"00000000-dead-beef-0000-000000000001\"}}",
                          job_dir, task, count);
  test_write_file (lock_file, text);
}

static guint warnings_seen;

static void
count_tessera_warning (const char *log_domain, GLogLevelFlags level, const char *message, gpointer data)
{
  if (level & G_LOG_LEVEL_WARNING)
    g_atomic_int_inc (&warnings_seen);
  if (g_test_verbose ())
    g_test_message ("expected warning: %s", message);
}

/* Bad-input tests expect Tessera to warn instead of failing: count the
 * warnings rather than aborting on them (warnings of other domains stay
 * fatal). */
void
test_expect_warnings (void)
{
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_fatal_mask ("Tessera", G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_handler ("Tessera", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, count_tessera_warning, NULL);
}

guint
test_warning_count (void)
{
  return g_atomic_int_get (&warnings_seen);
}

/* The scheduler's side of locks.json: @lock in a set of its own, the job
 * @job started by this process, the set saved to @locks_path. Returns
 * the set (which holds @lock). */
TesseraDynamicDependencyLocks *
test_locks_json_save (TesseraDynamicDependencyLock *lock, TesseraJob *job, const char *locks_path)
{
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(GError) error = NULL;

  tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (lock));
  g_assert_true (tessera_dynamic_dependency_locks_job_started (locks, job, self, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_dynamic_dependency_locks_save (locks, locks_path, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&locks);
}

/* The hand-over: the scheduler detaches @lock, and the job process
 * loads locks.json at @locks_path (one lock) and takes its holding. */
TesseraJobDependencyLocks *
test_locks_json_take_over (TesseraDynamicDependencyLock *lock, const char *locks_path)
{
  g_autoptr(TesseraJobDependencyLocks) job_locks = NULL;
  g_autoptr(GError) error = NULL;

  tessera_lock_detach (TESSERA_LOCK (lock));
  job_locks = tessera_job_dependency_locks_load (locks_path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tessera_job_dependency_locks_get_locks (job_locks)->len, ==, 1);
  g_assert_true (tessera_job_dependency_locks_acquire (job_locks, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&job_locks);
}

static gboolean
finalized (gpointer weak)
{
  g_autoptr(GObject) alive = g_weak_ref_get (weak);

  return alive == NULL;
}

/* Drops the caller's reference to a resource and waits (up to 60 s) until
 * it is finalized: the poller's thread may hold it a moment longer
 * (draining its inotify events), and it must not see the test remove its
 * folder (it would warn that informations.json disappeared). */
void
test_drop_resource (gpointer resource_location)
{
  GObject **resource = resource_location;
  GWeakRef weak;

  g_weak_ref_init (&weak, *resource);
  g_clear_object (resource);
  test_wait_until (finalized, &weak, 60, "a dropped resource was not finalized");
  g_weak_ref_clear (&weak);
}

/* The folder @tmp made, nothing of the pool's. */
void
test_pool_fixture_set_up (TestPoolFixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
}

/* And the pool's jobs/ made by hand, with an informations.json of one
 * unit. */
void
test_pool_fixture_set_up_one_unit (TestPoolFixture *f, gconstpointer data)
{
  g_autofree char *info = NULL;

  test_pool_fixture_set_up (f, data);
  info = g_build_filename (f->folder, "informations.json", NULL);
  g_mkdir_with_parents (f->jobs, 0777);
  test_write_file (info, "{\"total\": 1}");
}

void
test_pool_fixture_tear_down (TestPoolFixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
  g_free (f->jobs);
}

char *
test_parse_openmetrics (const char *metrics)
{
  static const char parse[] =
    "import sys\n"
    "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
    "for family in text_string_to_metric_families(sys.stdin.read()):\n"
    "    for s in family.samples:\n"
    "        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()))\n"
    "        print('%s %s %s {%s} %g' % (family.type, family.name, s.name, labels, s.value))\n";

  return test_python_output (metrics, parse, NULL);
}

JsonObject *
test_status_first_resource (JsonNode *root)
{
  JsonArray *resources;

  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  resources = json_object_get_array_member (json_node_get_object (root), "resources");
  g_assert_nonnull (resources);
  g_assert_cmpuint (json_array_get_length (resources), >, 0);
  return json_array_get_object_element (resources, 0);
}

JsonObject *
test_status_only_resource (JsonNode *root)
{
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (root), "resources")),
                    ==, 1);
  return test_status_first_resource (root);
}

/* The queue entries (the JSON files in @queue) that read as objects. */
GPtrArray *
test_queue_read (const char *queue)
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

JsonNode *
test_queue_find_reservation (const char *queue)
{
  g_autoptr(GPtrArray) entries = test_queue_read (queue);

  for (guint i = 0; i < entries->len; i++)
    {
      JsonNode *entry = g_ptr_array_index (entries, i);

      if (json_object_get_boolean_member_with_default (json_node_get_object (entry), "reserve", FALSE))
        return json_node_copy (entry);
    }
  return NULL;
}

typedef struct
{
  const char *folder;
  const char *prefix;
  const char *suffix;
  const char * const *others;
  JsonNode *reservation;
  char *entry;
} QueueWait;

static gboolean
queue_has_reservation (gpointer data)
{
  QueueWait *wait = data;

  wait->reservation = test_queue_find_reservation (wait->folder);
  return wait->reservation != NULL;
}

JsonNode *
test_queue_wait_reservation (const char *queue, double timeout_s)
{
  QueueWait wait = { .folder = queue };

  test_wait_until (queue_has_reservation, &wait, timeout_s, "no reserving entry in %s", queue);
  return wait.reservation;
}

static gboolean
has_entry (gpointer data)
{
  QueueWait *wait = data;
  g_autoptr(GDir) dir = g_dir_open (wait->folder, 0, NULL);
  const char *name;

  while (dir != NULL && wait->entry == NULL && (name = g_dir_read_name (dir)) != NULL)
    if ((wait->prefix == NULL || g_str_has_prefix (name, wait->prefix)) && g_str_has_suffix (name, wait->suffix) &&
        (wait->others == NULL || !g_strv_contains (wait->others, name)))
      wait->entry = g_strdup (name);
  return wait->entry != NULL;
}

char *
test_wait_entry (const char *folder, const char *prefix, const char *suffix, const char * const *others,
                 double timeout_s)
{
  QueueWait wait = { .folder = folder, .prefix = prefix, .suffix = suffix, .others = others };

  test_wait_until (has_entry, &wait, timeout_s, "no entry %s…%s in %s", prefix ? prefix : "", suffix, folder);
  return wait.entry;
}
