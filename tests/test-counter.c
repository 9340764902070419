/* test-counter.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"

/* ---- lock file ---- */

struct _TestCounterLockFile
{
  TesseraDynamicLockFile parent_instance;
  gint64 count;
};

G_DEFINE_FINAL_TYPE (TestCounterLockFile, test_counter_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
lock_file_from_information (TesseraDynamicLockFile *lf, JsonNode *info, GError **error)
{
  TestCounterLockFile *self = TEST_COUNTER_LOCK_FILE (lf);
  JsonNode *count;

  if (info == NULL)
    {
      self->count = 0;
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (info))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE, "information must be an object");
      return FALSE;
    }
  count = json_object_get_member (json_node_get_object (info), "count");
  if (count == NULL)
    self->count = 0;
  else if (JSON_NODE_HOLDS_VALUE (count) && json_node_get_value_type (count) == G_TYPE_INT64 &&
           json_node_get_int (count) >= 0)
    self->count = json_node_get_int (count);
  else
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE, "count must be a non-negative integer");
      return FALSE;
    }
  return TRUE;
}

static JsonNode *
lock_file_to_information (TesseraDynamicLockFile *lf)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (object, "count", TEST_COUNTER_LOCK_FILE (lf)->count);
  json_node_take_object (node, object);
  return node;
}

static void
test_counter_lock_file_class_init (TestCounterLockFileClass *klass)
{
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = lock_file_from_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->to_information = lock_file_to_information;
}

static void
test_counter_lock_file_init (TestCounterLockFile *self)
{
}

gint64
test_counter_lock_file_get_count (TestCounterLockFile *self)
{
  return self->count;
}

/* ---- dependency ---- */

struct _TestCounterDependency
{
  TesseraDynamicDependency parent_instance;
  gint64 count;
};

G_DEFINE_FINAL_TYPE (TestCounterDependency, test_counter_dependency, TESSERA_TYPE_DYNAMIC_DEPENDENCY)

static void
test_counter_dependency_class_init (TestCounterDependencyClass *klass)
{
}

static void
test_counter_dependency_init (TestCounterDependency *self)
{
}

TesseraDynamicDependency *
test_counter_dependency_new (TestCounter *counter, TesseraJob *job, gint64 count)
{
  TestCounterDependency *self = g_object_new (TEST_TYPE_COUNTER_DEPENDENCY,
                                              "resource", counter, "target", job, NULL);
  self->count = count;
  return TESSERA_DYNAMIC_DEPENDENCY (self);
}

/* ---- resource ---- */

struct _TestCounter
{
  TesseraTrackedDynamicResource parent_instance;
  gint64 initial_total;
  gint64 total;
  gint64 used;
  guint polls;      /* atomic */
};

enum { PROP_0, PROP_TOTAL };

G_DEFINE_FINAL_TYPE (TestCounter, test_counter, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

static void
counter_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_TOTAL)
    TEST_COUNTER (object)->initial_total = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
counter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_TOTAL)
    g_value_set_int64 (value, TEST_COUNTER (object)->total);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
counter_reset_state (TesseraTrackedDynamicResource *res)
{
  TEST_COUNTER (res)->used = 0;
}

static void
counter_account (TesseraTrackedDynamicResource *res, TesseraDynamicLockFile *lf)
{
  TEST_COUNTER (res)->used += TEST_COUNTER_LOCK_FILE (lf)->count;
}

static void
counter_unaccount (TesseraTrackedDynamicResource *res, TesseraDynamicLockFile *lf)
{
  TEST_COUNTER (res)->used -= TEST_COUNTER_LOCK_FILE (lf)->count;
}

static gboolean
counter_is_available (TesseraTrackedDynamicResource *res, TesseraDynamicDependency *dep, GError **error)
{
  TestCounter *self = TEST_COUNTER (res);

  /* As the countertoken plugin: more than the whole total waits, saying why. */
  if (TEST_COUNTER_DEPENDENCY (dep)->count > self->total)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY, "more than the total");
      return FALSE;
    }
  if (self->used + TEST_COUNTER_DEPENDENCY (dep)->count <= self->total)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, "full");
  return FALSE;
}

static JsonNode *
counter_information (TesseraTrackedDynamicResource *res, TesseraDynamicDependency *dep)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (object, "count", TEST_COUNTER_DEPENDENCY (dep)->count);
  json_node_take_object (node, object);
  return node;
}

static gboolean
counter_handle_information_change (TesseraTrackedDynamicResource *res, JsonNode *info, GError **error)
{
  JsonNode *total;

  if (!JSON_NODE_HOLDS_OBJECT (info) ||
      (total = json_object_get_member (json_node_get_object (info), "total")) == NULL ||
      !JSON_NODE_HOLDS_VALUE (total) || json_node_get_value_type (total) != G_TYPE_INT64 ||
      json_node_get_int (total) < 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                   "expected {\"total\": non-negative integer}");
      return FALSE;
    }
  /* Read from the test's thread by test_counter_get_total(). */
  __atomic_store_n (&TEST_COUNTER (res)->total, json_node_get_int (total), __ATOMIC_RELAXED);
  /* As a plugin would: tell whoever watches the capacity. */
  g_object_notify (G_OBJECT (res), "total");
  return TRUE;
}

static JsonNode *
counter_initialize_informations (TesseraTrackedDynamicResource *res)
{
  TestCounter *self = TEST_COUNTER (res);
  JsonObject *object;
  JsonNode *node;

  if (self->initial_total < 0)
    return NULL;
  object = json_object_new ();
  node = json_node_new (JSON_NODE_OBJECT);
  json_object_set_int_member (object, "total", self->initial_total);
  json_node_take_object (node, object);
  return node;
}

/* The fallback poll is the only caller of refresh_state: counting its
 * calls tells a wake-up by an event from one by polling. */
static void
counter_refresh_state (TesseraDynamicResource *res)
{
  g_atomic_int_inc (&TEST_COUNTER (res)->polls);
  TESSERA_DYNAMIC_RESOURCE_CLASS (test_counter_parent_class)->refresh_state (res);
}

static void
test_counter_class_init (TestCounterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->set_property = counter_set_property;
  object_class->get_property = counter_get_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->refresh_state = counter_refresh_state;
  tracked->reset_state = counter_reset_state;
  tracked->account_lock_file = counter_account;
  tracked->unaccount_lock_file = counter_unaccount;
  tracked->is_available = counter_is_available;
  tracked->get_lock_file_information = counter_information;
  tracked->get_wait_information = counter_information;
  tracked->handle_information_change = counter_handle_information_change;
  tracked->initialize_informations = counter_initialize_informations;
  tracked->lock_file_type = TEST_TYPE_COUNTER_LOCK_FILE;
  g_object_class_install_property (object_class, PROP_TOTAL,
    g_param_spec_int64 ("total", NULL, NULL, -1, G_MAXINT64, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

static void
test_counter_init (TestCounter *self)
{
  self->initial_total = -1;
}

TestCounter *
test_counter_new (const char *folder, gint64 total, GError **error)
{
  g_autofree char *name = g_path_get_basename (folder);

  return g_initable_new (TEST_TYPE_COUNTER, NULL, error,
                         "lock-folder", folder,
                         "name", name,
                         "total", total,
                         NULL);
}

/* The counter of @folder (of @total units; -1: as the folder says), or the
 * test fails; @min_age: its tracked resource's min-age, < 0 leaves the
 * resource's own. */
TestCounter *
test_counter_open (const char *folder, gint64 total, double min_age)
{
  g_autoptr(GError) error = NULL;
  TestCounter *counter = test_counter_new (folder, total, &error);

  g_assert_no_error (error);
  if (min_age >= 0)
    tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), min_age);
  return counter;
}

/* Makes @folder a counter's of @total units, through the library. */
void
test_counter_make (const char *folder, gint64 total)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (folder, total, &error);

  g_assert_no_error (error);
}

gint64
test_counter_get_total (TestCounter *self)
{
  return __atomic_load_n (&self->total, __ATOMIC_RELAXED);
}

gint64
test_counter_get_used (TestCounter *self)
{
  return self->used;
}

guint
test_counter_get_polls (TestCounter *self)
{
  return (guint) g_atomic_int_get (&self->polls);
}

TesseraJob *
test_job_new (const char *base, const char *task_id, const char *identifier)
{
  g_autofree char *uri = g_build_filename (base, "jobs", task_id, identifier, task_id, NULL);
  g_autoptr(GError) error = NULL;
  TesseraJob *job = tessera_job_new (task_id, identifier, uri, &error);

  g_assert_no_error (error);
  return job;
}

int
test_counter_grantable (TestCounter *counter, const char *base, int at_most)
{
  g_autoptr(GPtrArray) locks = g_ptr_array_new_with_free_func (g_object_unref);
  static int round = 0;

  round++;
  for (int i = 0; i < at_most; i++)
    {
      g_autofree char *id = g_strdup_printf ("%d-%d", round, i);
      g_autoptr(TesseraJob) job = test_job_new (base, "probe", id);
      g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
      g_autoptr(GError) error = NULL;
      TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

      if (lock == NULL)
        {
          g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
          break;
        }
      g_ptr_array_add (locks, lock);
    }
  return (int) locks->len;
}

gboolean
test_counter_can_take (TestCounter *counter, const char *base, gint64 count, const char *id)
{
  g_autoptr(TesseraJob) job = test_job_new (base, "probe", id);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, count);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

  if (lock == NULL)
    {
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
      return FALSE;
    }
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  return TRUE;
}

gboolean
test_counter_probe_can_take (gpointer probe)
{
  TestCounterProbe *p = probe;
  g_autofree char *id = g_strdup_printf ("probe-within-%u", p->tries++);

  return test_counter_can_take (p->counter, p->base, p->count, id);
}
