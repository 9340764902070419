/* test-mutex-intents.c: the mutex's intents in a lock folder, the files
 * intents/NAME.json that every Tessera reads and writes alike (an older
 * process and a newer one share a pool), reached by the plugin as side
 * entries of its pool (core/tessera-side-folder.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-utils.h"

typedef struct
{
  char *tmp;
  char *folder;
  char *intents;
  TesseraDynamicResource *mutex;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  const char *keys[] = { "lock-folder", NULL };
  const char *values[] = { NULL, NULL };
  g_autoptr(GError) error = NULL;

  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "m", NULL);
  f->intents = g_build_filename (f->folder, "intents", NULL);
  values[0] = f->folder;
  f->mutex = tessera_registry_create_resource (tessera_registry_get_default (), "mutex", "m", keys, values, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->mutex);
  test_remove_tree (f->tmp);
  g_free (f->intents);
  g_free (f->folder);
  g_free (f->tmp);
}

/* A request of job TASK@1 of this process for the mutex, @mode. */
static TesseraDynamicDependency *
request (Fixture *f, const char *task, const char *mode)
{
  g_autofree char *job_uri = g_build_filename (f->tmp, "jobs", task, "job", NULL);
  g_autofree char *job_dir = g_path_get_dirname (job_uri);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependency *dependency;

  g_assert_cmpint (g_mkdir_with_parents (job_dir, 0755), ==, 0);
  job = tessera_job_new (task, "1", job_uri, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_job_set_process (job, self, &error));
  dependency = tessera_dynamic_resource_create_dependency (f->mutex, job, mode, &error);
  g_assert_no_error (error);
  return dependency;
}

/* Tries once: the lock, or NULL when the mutex is not to be had now. */
static TesseraDynamicDependencyLock *
try_lock (TesseraDynamicDependency *dependency)
{
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);

  if (lock == NULL)
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  else
    g_assert_no_error (error);
  return lock;
}

static void
release (TesseraDynamicDependencyLock *lock)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), &error));
  g_assert_no_error (error);
}

/* An intent's JSON as the mutex writes it, for this process. */
static char *
intent_text (const char *job_uri, gint64 until)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "job_uri", job_uri);
  json_object_set_member (object, "process", tessera_process_to_json (self));
  json_object_set_int_member (object, "until", until);
  json_node_take_object (node, object);
  return json_to_string (node, FALSE);
}

/* An exclusive request that waits leaves intents/TASK@1.json, a regular
 * file of 0644 less the umask holding its job, its process and until
 * when it counts (about 300 s on): it keeps a shared request out, and
 * goes when the request is given up. */
static void
test_written (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependency) reader = request (f, "reader", "shared");
  g_autoptr(TesseraDynamicDependency) writer = request (f, "writer", "exclusive");
  g_autoptr(TesseraDynamicDependency) late = request (f, "late", "shared");
  g_autoptr(TesseraDynamicDependencyLock) held = NULL;
  g_autoptr(TesseraDynamicDependencyLock) shared = NULL;
  g_autofree char *path = g_build_filename (f->intents, "writer@1.json", NULL);
  g_autofree char *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  mode_t mask = umask (022);
  JsonObject *object;
  struct stat st;

  umask (mask);
  held = try_lock (reader);
  g_assert_nonnull (held);
  g_assert_null (try_lock (writer));

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0644 & ~mask);
  /* Its writer's temporary file is gone. */
  g_assert_cmpuint (test_count_entries (f->intents), ==, 1);
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (object, "job_uri"), "/jobs/writer/job"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (object, "process"), "pid"), ==,
                   getpid ());
  g_assert_cmpint (json_object_get_int_member (object, "until"), >=, now + 290);
  g_assert_cmpint (json_object_get_int_member (object, "until"), <=, now + 301);

  /* It keeps a new shared request out... */
  g_assert_null (try_lock (late));
  /* ...until the exclusive request is given up. */
  g_clear_object (&writer);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  shared = try_lock (late);
  g_assert_nonnull (shared);
  release (shared);
  release (held);
}

/* Intents as another Tessera wrote them, older or newer: a live one
 * keeps shared requests out; past its "until", or unreadable, it goes
 * at the next shared request, with a writer's temporary file left there
 * for more than five minutes; nothing else in intents/ is touched. */
static void
test_planted (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependency) reader = request (f, "reader", "shared");
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  g_autofree char *live = g_build_filename (f->intents, "other@1.json", NULL);
  g_autofree char *garbage = g_build_filename (f->intents, "garbage@1.json", NULL);
  g_autofree char *large = g_build_filename (f->intents, "large@1.json", NULL);
  g_autofree char *old_tmp = g_build_filename (f->intents, "gone@1.json.Ab12Cd", NULL);
  g_autofree char *new_tmp = g_build_filename (f->intents, "writing@1.json.Xy34Zw", NULL);
  g_autofree char *notes = g_build_filename (f->intents, "notes.txt", NULL);
  g_autofree char *link = g_build_filename (f->intents, "link@1.json", NULL);
  g_autofree char *text = intent_text ("/elsewhere/other/job", now + 300);
  g_autofree char *expired = intent_text ("/elsewhere/other/job", now - 1);
  g_autofree char *big = g_strnfill (5000, ' ');

  test_write_file (live, text);
  lock = try_lock (reader);
  g_assert_null (lock);
  g_assert_true (g_file_test (live, G_FILE_TEST_EXISTS));

  test_write_file (live, expired);
  test_write_file (garbage, "{\"until\": ");
  test_write_file (large, big);
  test_write_file (old_tmp, text);
  test_set_file_age (old_tmp, 600);
  test_write_file (new_tmp, text);
  test_write_file (notes, text);
  g_assert_cmpint (symlink (notes, link), ==, 0);
  lock = try_lock (reader);
  g_assert_nonnull (lock);
  g_assert_false (g_file_test (live, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (garbage, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (large, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (old_tmp, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (new_tmp, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (notes, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
  release (lock);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/mutex/intents/written", Fixture, NULL, fixture_set_up, test_written, fixture_tear_down);
  g_test_add ("/mutex/intents/planted", Fixture, NULL, fixture_set_up, test_planted, fixture_tear_down);
  return g_test_run ();
}
