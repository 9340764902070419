/* test-lock-file.c: TesseraDynamicLockFile keeps the "information" it was
 * read or created with, so a plugin whose lock file class only reads it
 * (no `to_information`) does not lose its count when the file is
 * rewritten (issue "Writing a plugin", item 1).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <unistd.h>

/* ---- a plugin's lock file class that overrides from_information only ---- */

#define READER_TYPE_LOCK_FILE (reader_lock_file_get_type ())
G_DECLARE_FINAL_TYPE (ReaderLockFile, reader_lock_file, READER, LOCK_FILE, TesseraDynamicLockFile)

struct _ReaderLockFile
{
  TesseraDynamicLockFile parent_instance;
  gint64 count;
};

G_DEFINE_FINAL_TYPE (ReaderLockFile, reader_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
reader_from_information (TesseraDynamicLockFile *lock_file, JsonNode *information, GError **error)
{
  ReaderLockFile *self = READER_LOCK_FILE (lock_file);

  self->count = 0;
  if (information != NULL && JSON_NODE_HOLDS_OBJECT (information))
    self->count = json_object_get_int_member_with_default (json_node_get_object (information), "count", 0);
  return TRUE;
}

static void
reader_lock_file_class_init (ReaderLockFileClass *klass)
{
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = reader_from_information;
}

static void
reader_lock_file_init (ReaderLockFile *self)
{
}

/* ---- a resource counting with it: total 4, the dependency asks for 2 ---- */

#define READER_TYPE_RESOURCE (reader_resource_get_type ())
G_DECLARE_FINAL_TYPE (ReaderResource, reader_resource, READER, RESOURCE, TesseraTrackedDynamicResource)

struct _ReaderResource
{
  TesseraTrackedDynamicResource parent_instance;
  gint64 used;
};

G_DEFINE_FINAL_TYPE (ReaderResource, reader_resource, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

static void
reader_reset_state (TesseraTrackedDynamicResource *resource)
{
  READER_RESOURCE (resource)->used = 0;
}

static void
reader_account (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  READER_RESOURCE (resource)->used += READER_LOCK_FILE (lock_file)->count;
}

static void
reader_unaccount (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  READER_RESOURCE (resource)->used -= READER_LOCK_FILE (lock_file)->count;
}

static gboolean
reader_is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  if (READER_RESOURCE (resource)->used + 2 <= 4)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, "full");
  return FALSE;
}

static JsonNode *
reader_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "count");
  json_builder_add_int_value (builder, 2);
  json_builder_set_member_name (builder, "user");
  json_builder_add_string_value (builder, "alice");
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static void
reader_get_usage (TesseraTrackedDynamicResource *resource, gint64 *capacity, gint64 *free_units)
{
  *capacity = 4;
  *free_units = 4 - READER_RESOURCE (resource)->used;
}

static void
reader_resource_class_init (ReaderResourceClass *klass)
{
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  tracked->reset_state = reader_reset_state;
  tracked->account_lock_file = reader_account;
  tracked->unaccount_lock_file = reader_unaccount;
  tracked->is_available = reader_is_available;
  tracked->get_lock_file_information = reader_information;
  tracked->get_usage = reader_get_usage;
  tracked->lock_file_type = READER_TYPE_LOCK_FILE;
}

static void
reader_resource_init (ReaderResource *self)
{
}

/* The base class alone writes back what it was created with, and what it
 * read, whatever is recorded in between. */
static void
test_base_keeps_information (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path = g_build_filename (tmp, "t@1.json", NULL);
  g_autoptr(JsonNode) information = json_from_string ("{\"count\": 3, \"devices\": [\"GPU-1\"]}", NULL);
  g_autoptr(TesseraDynamicLockFile) created = NULL;
  g_autoptr(TesseraDynamicLockFile) loaded = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  created = tessera_dynamic_lock_file_create (TESSERA_TYPE_DYNAMIC_LOCK_FILE, path, "/jobs/t/1/t",
                                              information, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (json_node_equal (tessera_dynamic_lock_file_get_information (created), information));

  loaded = tessera_dynamic_lock_file_load (TESSERA_TYPE_DYNAMIC_LOCK_FILE, path, &error);
  g_assert_no_error (error);
  g_assert_true (json_node_equal (tessera_dynamic_lock_file_get_information (loaded), information));
  tessera_dynamic_lock_file_set_process (loaded, self);
  g_assert_true (tessera_dynamic_lock_file_save (loaded, &error));
  g_assert_no_error (error);

  root = test_parse_json_file (path);
  g_assert_true (json_node_equal (json_object_get_member (json_node_get_object (root), "information"),
                                  information));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (json_node_get_object (root),
                                                                              "process"), "pid"),
                   ==, getpid ());
  test_remove_tree (tmp);
}

/* A file without "information" is written back with `null`, as the seed
 * does. */
static void
test_base_without_information (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path = g_build_filename (tmp, "t@1.json", NULL);
  g_autoptr(TesseraDynamicLockFile) loaded = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  test_write_file (path, "{\"job_uri\": \"/jobs/t/1/t\"}");
  loaded = tessera_dynamic_lock_file_load (TESSERA_TYPE_DYNAMIC_LOCK_FILE, path, &error);
  g_assert_no_error (error);
  g_assert_null (tessera_dynamic_lock_file_get_information (loaded));
  g_assert_true (tessera_dynamic_lock_file_save (loaded, &error));
  root = test_parse_json_file (path);
  g_assert_true (JSON_NODE_HOLDS_NULL (json_object_get_member (json_node_get_object (root), "information")));
  test_remove_tree (tmp);
}

/* The reported bug: the launcher records the process (the lock file is
 * rewritten); the count must still be there for every reader. */
static void
test_subclass_without_to_information_keeps_count (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "licences", NULL);
  g_autofree char *path = g_build_filename (folder, "jobs", "t@1.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ReaderResource) resource = NULL;
  g_autoptr(TesseraJob) job = test_job_new (tmp, "t", "1");
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicLockFile) reread = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *information;
  gint64 capacity = -1, free_units = -1;

  resource = g_initable_new (READER_TYPE_RESOURCE, NULL, &error,
                             "lock-folder", folder, "name", "licences", NULL);
  g_assert_no_error (error);
  dependency = g_object_new (TESSERA_TYPE_DYNAMIC_DEPENDENCY, "resource", resource, "target", job, NULL);
  lock = tessera_dynamic_dependency_lock (dependency, 60.0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_dynamic_dependency_lock_job_started (lock, job, self, &error));
  g_assert_no_error (error);

  /* On disk: the information as the resource wrote it, and the process. */
  root = test_parse_json_file (path);
  information = json_object_get_object_member (json_node_get_object (root), "information");
  g_assert_nonnull (information);
  g_assert_cmpint (json_object_get_int_member (information, "count"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (information, "user"), ==, "alice");
  g_assert_true (json_object_has_member (json_node_get_object (root), "process"));

  /* What another reader sees: two of four taken. */
  reread = tessera_dynamic_lock_file_load (READER_TYPE_LOCK_FILE, path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (READER_LOCK_FILE (reread)->count, ==, 2);
  tessera_tracked_dynamic_resource_get_usage (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource), &capacity, &free_units);
  g_assert_cmpint (capacity, ==, 4);
  g_assert_cmpint (free_units, ==, 2);

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_object (&resource);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/lock-file/information/base-keeps-it", test_base_keeps_information);
  g_test_add_func ("/lock-file/information/base-without", test_base_without_information);
  g_test_add_func ("/lock-file/information/subclass-without-to-information",
                   test_subclass_without_to_information_keeps_count);
  return g_test_run ();
}
