/* test-public-api.c: public functions that nothing else in the tree calls
 * (not the command, the plugins, the other tests, the Python tests nor
 * the examples; the library itself, for a few), each held to what its
 * documentation says (issue 39: a public function that nothing calls
 * gets its test)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a lock that counts how often it is really taken and let go ---- */

#define COUNTING_TYPE_LOCK (counting_lock_get_type ())
G_DECLARE_FINAL_TYPE (CountingLock, counting_lock, COUNTING, LOCK, TesseraLock)

struct _CountingLock
{
  TesseraLock parent_instance;
  guint acquired;   /* calls of do_acquire */
  guint released;   /* calls of do_release */
};

G_DEFINE_FINAL_TYPE (CountingLock, counting_lock, TESSERA_TYPE_LOCK)

static gboolean
counting_lock_do_acquire (TesseraLock *lock, GError **error)
{
  COUNTING_LOCK (lock)->acquired++;
  return TRUE;
}

static gboolean
counting_lock_do_release (TesseraLock *lock, GError **error)
{
  COUNTING_LOCK (lock)->released++;
  return TRUE;
}

static void
counting_lock_class_init (CountingLockClass *klass)
{
  TESSERA_LOCK_CLASS (klass)->do_acquire = counting_lock_do_acquire;
  TESSERA_LOCK_CLASS (klass)->do_release = counting_lock_do_release;
}

static void
counting_lock_init (CountingLock *self)
{
}

/* ---- TesseraJob ---- */

/* tessera_job_get_task_id() and tessera_job_get_identifier(): the two
 * names the job was made with (copies: the caller's strings may change
 * after), the ones its properties give and its lock file is named after. */
static void
test_job_names (void)
{
  char task_id[] = "my.task";
  char identifier[] = "5f1e2d";
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autofree char *property_task_id = NULL;
  g_autofree char *property_identifier = NULL;
  g_autofree char *lock_name = NULL;

  if ((job = tessera_job_new (task_id, identifier, "/nonexistent/xpm/jobs/my.task/5f1e2d/my.task", &error)) == NULL)
    g_error ("tessera_job_new: %s", error->message);
  task_id[0] = 'X';
  identifier[0] = 'X';
  g_assert_cmpstr (tessera_job_get_task_id (job), ==, "my.task");
  g_assert_cmpstr (tessera_job_get_identifier (job), ==, "5f1e2d");
  g_object_get (job, "task-id", &property_task_id, "identifier", &property_identifier, NULL);
  g_assert_cmpstr (property_task_id, ==, tessera_job_get_task_id (job));
  g_assert_cmpstr (property_identifier, ==, tessera_job_get_identifier (job));
  lock_name = tessera_job_dup_lock_file_name (job);
  g_assert_cmpstr (lock_name, ==, "my.task@5f1e2d.json");
}

/* Whether @name is what a job name may be and the program-name fallback
 * makes: not empty, at most 64 of [A-Za-z0-9_-]. */
static gboolean
is_plain_name (const char *name)
{
  if (name == NULL || *name == '\0' || strlen (name) > 64)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return TRUE;
}

/* The names of a private job (tessera_job_new_private()): its task id is
 * the name given, else one made of the program's name; its identifier
 * is `<host>-<pid>-<8 hex digits>`, the name of its folder in
 * `$XDG_STATE_HOME/tessera/jobs/`. */
static void
test_job_names_of_private_job (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) named = NULL;
  g_autoptr(TesseraJob) unnamed = NULL;
  g_autofree char *pid_part = g_strdup_printf ("-%d-", (int) getpid ());
  g_autofree char *job_dir = NULL;
  g_autofree char *job_uri = NULL;
  const char *identifier;
  const char *tail;

  if ((named = tessera_job_new_private ("worker", &error)) == NULL)
    g_error ("tessera_job_new_private: %s", error->message);
  g_assert_cmpstr (tessera_job_get_task_id (named), ==, "worker");
  identifier = tessera_job_get_identifier (named);
  g_assert_true (is_plain_name (identifier));
  /* <host>-<pid>-<random>: the host name may hold '-' itself. */
  if ((tail = g_strrstr (identifier, pid_part)) == NULL)
    g_error ("identifier %s does not hold the pid %d", identifier, (int) getpid ());
  tail += strlen (pid_part);
  g_assert_cmpuint (strlen (tail), ==, 8);
  for (const char *p = tail; *p != '\0'; p++)
    g_assert_true (g_ascii_isxdigit (*p));
  job_dir = g_build_filename (g_get_user_state_dir (), "tessera", "jobs", identifier, NULL);
  job_uri = g_build_filename (job_dir, "worker", NULL);
  g_assert_cmpstr (tessera_job_get_job_uri (named), ==, job_uri);

  if ((unnamed = tessera_job_new_private (NULL, &error)) == NULL)
    g_error ("tessera_job_new_private (NULL): %s", error->message);
  g_assert_true (is_plain_name (tessera_job_get_task_id (unnamed)));
  /* Each private job is a job of its own. */
  g_assert_cmpstr (tessera_job_get_identifier (unnamed), !=, identifier);
}

/* ---- TesseraJobDependencyLocks ---- */

static TesseraJobDependencyLock *
job_lock_for (const char *lock_file_path)
{
  g_autoptr(JsonObject) data = json_object_new ();
  TesseraJobDependencyLock *lock;

  json_object_set_string_member (data, "lock_file_path", lock_file_path);
  if ((lock = tessera_job_dependency_lock_new (data)) == NULL)
    g_error ("tessera_job_dependency_lock_new (%s) made no lock", lock_file_path);
  return lock;
}

/* tessera_job_dependency_locks_append(): the lock goes after the others,
 * in what get_locks() lists and in the order acquire() takes them; the
 * set keeps its own reference. */
static void
test_job_dependency_locks_append (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path_a = g_build_filename (tmp, "a@1.json", NULL);
  g_autofree char *path_b = g_build_filename (tmp, "b@2.json", NULL);
  g_autofree char *path_c = g_build_filename (tmp, "c@3.json", NULL);
  g_autofree char *path_d = g_build_filename (tmp, "d@4.json", NULL);
  g_autoptr(TesseraJobDependencyLocks) locks = tessera_job_dependency_locks_new ();
  g_autoptr(TesseraJobDependencyLocks) failing = tessera_job_dependency_locks_new ();
  g_autoptr(TesseraJobDependencyLock) b = NULL;
  g_autoptr(TesseraJobDependencyLock) c = NULL;
  g_autoptr(TesseraJobDependencyLock) d = NULL;
  g_autoptr(GError) error = NULL;
  TesseraJobDependencyLock *a = NULL;
  gpointer a_alive;
  GPtrArray *list;
  const char * const *skipped;

  test_write_file (path_a, "{}");
  test_write_file (path_b, "{}");
  test_write_file (path_c, "{}");
  if ((list = tessera_job_dependency_locks_get_locks (locks)) == NULL)
    g_error ("a new set of job locks has no list");
  g_assert_cmpuint (list->len, ==, 0);

  a = job_lock_for (path_a);
  b = job_lock_for (path_b);
  tessera_job_dependency_locks_append (locks, a);
  tessera_job_dependency_locks_append (locks, b);
  g_assert_cmpuint (list->len, ==, 2);
  g_assert_true (g_ptr_array_index (list, 0) == a);
  g_assert_true (g_ptr_array_index (list, 1) == b);
  /* Appended, not skipped. */
  if ((skipped = tessera_job_dependency_locks_get_skipped (locks)) == NULL)
    g_error ("no list of skipped entries");
  g_assert_null (skipped[0]);

  /* The set keeps @a alive once the caller drops it. */
  a_alive = a;
  g_object_add_weak_pointer (G_OBJECT (a), &a_alive);
  g_clear_object (&a);
  g_assert_nonnull (a_alive);

  /* Taken (their lock files are there) and let go (the default release
   * deletes each lock file). */
  if (!tessera_job_dependency_locks_acquire (locks, &error))
    g_error ("acquire: %s", error->message);
  tessera_job_dependency_locks_release (locks);
  g_assert_false (g_file_test (path_a, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (path_b, G_FILE_TEST_EXISTS));
  g_clear_object (&locks);
  g_assert_null (a_alive);

  /* After the others: c is taken before d, whose lock file is missing;
   * acquire fails at d and lets c go again (deleting c's lock file). Had
   * d gone first, c would never have been taken. */
  c = job_lock_for (path_c);
  d = job_lock_for (path_d);
  tessera_job_dependency_locks_append (failing, c);
  tessera_job_dependency_locks_append (failing, d);
  g_assert_false (tessera_job_dependency_locks_acquire (failing, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING);
  g_assert_false (g_file_test (path_c, G_FILE_TEST_EXISTS));

  test_remove_tree (tmp);
}

/* tessera_job_dependency_lock_verify_lock_file(): TRUE while the
 * scheduler's lock file is there, LOCK_FILE_MISSING once it is gone (a
 * peer judged the holder dead), and TRUE for a lock that names none. */
static void
test_job_dependency_lock_verify_lock_file (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path = g_build_filename (tmp, "a@1.json", NULL);
  g_autoptr(TesseraJobDependencyLock) lock = job_lock_for (path);
  g_autoptr(JsonObject) no_path = json_object_new ();
  g_autoptr(TesseraJobDependencyLock) unnamed = tessera_job_dependency_lock_new (no_path);
  g_autoptr(GError) error = NULL;

  test_write_file (path, "{}");
  g_assert_true (tessera_job_dependency_lock_verify_lock_file (lock, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_false (tessera_job_dependency_lock_verify_lock_file (lock, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING);
  g_clear_error (&error);
  /* A folder in its place is no lock file either. */
  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
  g_assert_false (tessera_job_dependency_lock_verify_lock_file (lock, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING);
  g_clear_error (&error);

  g_assert_nonnull (unnamed);
  g_assert_true (tessera_job_dependency_lock_verify_lock_file (unnamed, &error));
  g_assert_no_error (error);
  test_remove_tree (tmp);
}

/* @count of @counter, taken for the job my.task@@ID (of @tmp). */
static TesseraDynamicDependencyLock *
take_counter (TestCounter *counter, const char *tmp, const char *id, gint64 count)
{
  g_autoptr(TesseraJob) job = test_job_new (tmp, "my.task", id);
  g_autoptr(TesseraDynamicDependency) dependency = test_counter_dependency_new (counter, job, count);
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);

  if (lock == NULL)
    g_error ("taking %" G_GINT64_FORMAT " of the counter: %s", count, error->message);
  return lock;
}

/* tessera_job_dependency_lock_get_data(): the locks.json entry the job
 * lock was built from, the job process's lock as loaded as much as one
 * made from an entry; the lock keeps it (transfer none) and it is never
 * NULL for a lock built from an entry. */
static void
test_job_dependency_lock_get_data (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *locks_path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLocks) saved = NULL;
  g_autoptr(TesseraJobDependencyLocks) loaded = NULL;
  g_autoptr(JsonNode) file = NULL;
  g_autoptr(JsonObject) entry = json_object_new ();
  g_autoptr(TesseraJobDependencyLock) made = NULL;
  JsonArray *entries;
  JsonObject *data;

  if ((counter = test_counter_new (folder, 2, &error)) == NULL)
    g_error ("opening the counter: %s", error->message);
  job = test_job_new (tmp, "my.task", "5f1e2d");
  lock = take_counter (counter, tmp, "5f1e2d", 1);
  locks_path = g_build_filename (tmp, "locks.json", NULL);
  saved = test_locks_json_save (lock, job, locks_path);

  /* The job process's lock, loaded from locks.json: its entry there. */
  if ((loaded = tessera_job_dependency_locks_load (locks_path, &error)) == NULL)
    g_error ("loading %s: %s", locks_path, error->message);
  g_assert_cmpuint (tessera_job_dependency_locks_get_locks (loaded)->len, ==, 1);
  if ((file = tessera_json_read_file (locks_path, &error)) == NULL)
    g_error ("reading %s: %s", locks_path, error->message);
  entries = json_object_get_array_member (json_node_get_object (file), "dynamic_locks");
  data = tessera_job_dependency_lock_get_data (g_ptr_array_index (tessera_job_dependency_locks_get_locks (loaded), 0));
  if (data == NULL)
    g_error ("a loaded job lock has no data");
  g_assert_true (json_object_equal (data, json_array_get_object_element (entries, 0)));
  /* Kept by the lock: the same object each time. */
  g_assert_true (tessera_job_dependency_lock_get_data (
                   g_ptr_array_index (tessera_job_dependency_locks_get_locks (loaded), 0)) == data);

  /* One made from an entry: that entry. */
  json_object_set_string_member (entry, "lock_file_path", "/nonexistent/a@1.json");
  json_object_set_string_member (entry, "note", "kept");
  made = tessera_job_dependency_lock_new (entry);
  if ((data = tessera_job_dependency_lock_get_data (made)) == NULL)
    g_error ("a job lock made from an entry has no data");
  g_assert_true (json_object_equal (data, entry));
  g_assert_cmpstr (json_object_get_string_member (data, "note"), ==, "kept");

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_clear_object (&saved);
  g_clear_object (&lock);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

/* ---- tessera_json_read_file() ---- */

static void
expect_refused (const char *path, GQuark domain, int code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = tessera_json_read_file (path, &error);

  g_assert_null (root);
  g_assert_error (error, domain, code);
}

/* Text of @depth nested arrays. */
static char *
nested_arrays (guint depth)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < depth; i++)
    g_string_append_c (text, '[');
  for (guint i = 0; i < depth; i++)
    g_string_append_c (text, ']');
  return g_string_free (text, FALSE);
}

/* Reads a JSON file as Tessera reads its own in a shared folder: a
 * regular file only, never through a link, nor a FIFO (without
 * blocking), bounded in size and nesting, strict JSON; a missing file is
 * G_FILE_ERROR_NOENT. */
static void
test_json_read_file (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *plain = g_build_filename (tmp, "plain.json", NULL);
  g_autofree char *link = g_build_filename (tmp, "link.json", NULL);
  g_autofree char *fifo = g_build_filename (tmp, "fifo.json", NULL);
  g_autofree char *missing = g_build_filename (tmp, "missing.json", NULL);
  g_autofree char *huge = g_build_filename (tmp, "huge.json", NULL);
  g_autofree char *deep = g_build_filename (tmp, "deep.json", NULL);
  g_autofree char *too_deep = g_build_filename (tmp, "too-deep.json", NULL);
  g_autofree char *loose = g_build_filename (tmp, "loose.json", NULL);
  g_autofree char *empty = g_build_filename (tmp, "empty.json", NULL);
  g_autofree char *deep_text = nested_arrays (TESSERA_JSON_MAX_DEPTH);
  g_autofree char *too_deep_text = nested_arrays (TESSERA_JSON_MAX_DEPTH + 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonNode) deep_root = NULL;
  JsonArray *array;
  int fd;

  test_write_file (plain, "{\"total\": 3, \"names\": [\"a\", \"b\"]}");
  if ((root = tessera_json_read_file (plain, &error)) == NULL)
    g_error ("reading %s: %s", plain, error->message);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (root), "total"), ==, 3);
  if ((array = json_object_get_array_member (json_node_get_object (root), "names")) == NULL)
    g_error ("no \"names\" array in what was read");
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  g_assert_cmpstr (json_array_get_string_element (array, 1), ==, "b");

  expect_refused (missing, G_FILE_ERROR, G_FILE_ERROR_NOENT);

  /* A link to a good file is not followed. */
  if (symlink (plain, link) < 0)
    g_error ("symlink: %s", g_strerror (errno));
  expect_refused (link, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  /* A FIFO nobody writes to: refused at once (a blocking open would hang
   * the test). */
  if (mkfifo (fifo, 0600) < 0)
    g_error ("mkfifo: %s", g_strerror (errno));
  expect_refused (fifo, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  /* A folder is not a regular file either. */
  expect_refused (tmp, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  /* 17 MiB (sparse: no disk), past the bound. */
  if ((fd = g_open (huge, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
    g_error ("open %s: %s", huge, g_strerror (errno));
  if (ftruncate (fd, 17 * 1024 * 1024) < 0)
    g_error ("ftruncate: %s", g_strerror (errno));
  close (fd);
  expect_refused (huge, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  /* Nesting: TESSERA_JSON_MAX_DEPTH levels read, one more refused. */
  test_write_file (deep, deep_text);
  if ((deep_root = tessera_json_read_file (deep, &error)) == NULL)
    g_error ("reading %d levels: %s", TESSERA_JSON_MAX_DEPTH, error->message);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (deep_root));
  test_write_file (too_deep, too_deep_text);
  expect_refused (too_deep, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  /* What json-glib alone would read but is not strict JSON, and a file
   * with no JSON at all. */
  test_write_file (loose, "{'total': 3} // a comment");
  expect_refused (loose, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
  test_write_file (empty, "");
  expect_refused (empty, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);

  test_remove_tree (tmp);
}

/* ---- TesseraLocks ---- */

/* tessera_locks_new(): an empty set, a lock itself (not held, not
 * detached), which taking and letting go hold nothing. */
static void
test_locks_new (void)
{
  g_autoptr(TesseraLocks) set = tessera_locks_new ();
  g_autoptr(GError) error = NULL;
  GPtrArray *members;

  g_assert_true (TESSERA_IS_LOCK (set));
  if ((members = tessera_locks_get_locks (set)) == NULL)
    g_error ("a new set has no list of locks");
  g_assert_cmpuint (members->len, ==, 0);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (set)), ==, 0);
  g_assert_false (tessera_lock_is_detached (TESSERA_LOCK (set)));

  if (!tessera_lock_acquire (TESSERA_LOCK (set), &error))
    g_error ("acquiring an empty set: %s", error->message);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (set)), ==, 1);
  if (!tessera_lock_release (TESSERA_LOCK (set), &error))
    g_error ("releasing an empty set: %s", error->message);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (set)), ==, 0);
}

/* tessera_locks_clear(): the set forgets its locks (and its references
 * to them) without releasing any; letting the set go then leaves them
 * held. */
static void
test_locks_clear (void)
{
  g_autoptr(TesseraLocks) set = tessera_locks_new ();
  g_autoptr(GError) error = NULL;
  CountingLock *a = g_object_new (COUNTING_TYPE_LOCK, NULL);
  CountingLock *b = g_object_new (COUNTING_TYPE_LOCK, NULL);
  gpointer a_alive = a;
  gpointer b_alive = b;
  GPtrArray *members;

  tessera_locks_append (set, TESSERA_LOCK (a));
  tessera_locks_append (set, TESSERA_LOCK (b));
  if (!tessera_lock_acquire (TESSERA_LOCK (set), &error))
    g_error ("acquiring the set: %s", error->message);
  g_assert_cmpuint (a->acquired, ==, 1);
  g_assert_cmpuint (b->acquired, ==, 1);

  tessera_locks_clear (set);
  if ((members = tessera_locks_get_locks (set)) == NULL)
    g_error ("a cleared set has no list of locks");
  g_assert_cmpuint (members->len, ==, 0);
  g_assert_cmpuint (a->released, ==, 0);
  g_assert_cmpuint (b->released, ==, 0);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (a)), ==, 1);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (b)), ==, 1);

  /* The set lets go of nothing it forgot. */
  if (!tessera_lock_release (TESSERA_LOCK (set), &error))
    g_error ("releasing the set: %s", error->message);
  g_clear_object (&set);
  g_assert_cmpuint (a->released, ==, 0);
  g_assert_cmpuint (b->released, ==, 0);

  /* The caller's references are the last: the locks go with them. */
  g_object_add_weak_pointer (G_OBJECT (a), &a_alive);
  g_object_add_weak_pointer (G_OBJECT (b), &b_alive);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (a), NULL));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (b), NULL));
  g_assert_cmpuint (a->released, ==, 1);
  g_assert_cmpuint (b->released, ==, 1);
  g_object_unref (a);
  g_object_unref (b);
  g_assert_null (a_alive);
  g_assert_null (b_alive);
}

/* ---- TesseraProcess ---- */

static TesseraProcess *
process_from_text (const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  TesseraProcess *process;

  if ((node = tessera_json_parse (text, -1, &error)) == NULL)
    g_error ("parsing %s: %s", text, error->message);
  if ((process = tessera_process_new_from_json (node, &error)) == NULL)
    g_error ("reading the spec %s: %s", text, error->message);
  return process;
}

/* tessera_process_get_boot_id(): this boot's id for a process of this
 * machine; for a spec read, its "boot_id" when it has one (NULL, not
 * known, when absent, empty or not a string); kept through the spec
 * Tessera writes. */
static void
test_process_boot_id (void)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraProcess) recorded = process_from_text (
    "{\"type\": \"local\", \"pid\": 1, \"boot_id\": \"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\"}");
  g_autoptr(TesseraProcess) seed = process_from_text ("{\"type\": \"local\", \"pid\": 1}");
  g_autoptr(TesseraProcess) empty = process_from_text ("{\"type\": \"local\", \"pid\": 1, \"boot_id\": \"\"}");
  g_autoptr(TesseraProcess) number = process_from_text ("{\"type\": \"local\", \"pid\": 1, \"boot_id\": 42}");
  g_autoptr(TesseraProcess) written = NULL;
  g_autoptr(JsonNode) spec = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *boot_id = NULL;

  if (g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL) &&
      *g_strstrip (boot_id) != '\0')
    g_assert_cmpstr (tessera_process_get_boot_id (self), ==, boot_id);
  else
    g_assert_null (tessera_process_get_boot_id (self));

  g_assert_cmpstr (tessera_process_get_boot_id (recorded), ==, "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0");
  g_assert_null (tessera_process_get_boot_id (seed));
  g_assert_null (tessera_process_get_boot_id (empty));
  g_assert_null (tessera_process_get_boot_id (number));

  if ((spec = tessera_process_to_json (self)) == NULL)
    g_error ("no spec written for this process");
  if ((written = tessera_process_new_from_json (spec, &error)) == NULL)
    g_error ("reading back this process's spec: %s", error->message);
  g_assert_cmpstr (tessera_process_get_boot_id (written), ==, tessera_process_get_boot_id (self));
}

/* tessera_process_equal(): the same pid names the same process unless
 * what both know of it (start time, boot, host, pid namespace, type)
 * differs; what only one of them knows does not tell them apart. */
static void
test_process_equal (void)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraProcess) self_again = tessera_process_new_self ();
  g_autoptr(TesseraProcess) bare = process_from_text ("{\"type\": \"local\", \"pid\": 7}");
  g_autoptr(TesseraProcess) other_pid = process_from_text ("{\"type\": \"local\", \"pid\": 8}");
  g_autoptr(TesseraProcess) started = process_from_text ("{\"type\": \"local\", \"pid\": 7, \"start_time\": 100}");
  g_autoptr(TesseraProcess) started_later = process_from_text (
    "{\"type\": \"local\", \"pid\": 7, \"start_time\": 101}");
  g_autoptr(TesseraProcess) boot_a = process_from_text (
    "{\"type\": \"local\", \"pid\": 7, \"boot_id\": \"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\"}");
  g_autoptr(TesseraProcess) boot_b = process_from_text (
    "{\"type\": \"local\", \"pid\": 7, \"boot_id\": \"1b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\"}");
  g_autoptr(TesseraProcess) host_a = process_from_text ("{\"type\": \"local\", \"pid\": 7, \"host\": \"a\"}");
  g_autoptr(TesseraProcess) host_b = process_from_text ("{\"type\": \"local\", \"pid\": 7, \"host\": \"b\"}");
  g_autoptr(TesseraProcess) ns_a = process_from_text ("{\"type\": \"local\", \"pid\": 7, \"pid_ns\": 4026531836}");
  g_autoptr(TesseraProcess) ns_b = process_from_text ("{\"type\": \"local\", \"pid\": 7, \"pid_ns\": 4026531837}");

  g_assert_true (tessera_process_equal (self, self));
  g_assert_true (tessera_process_equal (self, self_again));
  g_assert_false (tessera_process_equal (self, other_pid));
  g_assert_false (tessera_process_equal (bare, other_pid));
  /* Known to one only: no difference. */
  g_assert_true (tessera_process_equal (bare, started));
  g_assert_true (tessera_process_equal (started, bare));
  g_assert_true (tessera_process_equal (bare, boot_a));
  g_assert_true (tessera_process_equal (bare, host_a));
  g_assert_true (tessera_process_equal (bare, ns_a));
  /* Known to both, and different: another process with the same pid. */
  g_assert_false (tessera_process_equal (started, started_later));
  g_assert_false (tessera_process_equal (boot_a, boot_b));
  g_assert_false (tessera_process_equal (host_a, host_b));
  g_assert_false (tessera_process_equal (ns_a, ns_b));
}

/* ---- TesseraDynamicLockFile ---- */

/* A counter lock file of job @job holding one, whose process is @spec
 * (JSON text; NULL: none). */
static TesseraDynamicLockFile *
counter_lock_file (const char *tmp, const char *job, const char *spec)
{
  g_autofree char *path = g_strdup_printf ("%s/jobs/%s.json", tmp, job);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/work/%s\", \"information\": {\"count\": 1}%s%s}",
                                           tmp, job, spec != NULL ? ", \"process\": " : "", spec ? spec : "");
  g_autoptr(GError) error = NULL;
  TesseraDynamicLockFile *lock_file =
    tessera_dynamic_lock_file_new_from_data (TESSERA_TYPE_COUNTER_LOCK_FILE, path, text, -1, &error);

  g_assert_no_error (error);
  return lock_file;
}

/* tessera_dynamic_lock_file_judge_holders(): the verdict on each holder,
 * as tessera_dynamic_lock_file_judge_holder() gives it one by one, in
 * order; many holders of one process are all judged by its pid. */
static void
test_lock_file_judge_holders (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) node = tessera_process_to_json (self);
  g_autofree char *alive = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}",
                                            (int) getpid (), tessera_process_get_start_time (self));
  g_autofree char *dead = NULL;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GArray) states = NULL;
  g_autoptr(GArray) processes = NULL;
  const TesseraHolderState expected[] = {
    TESSERA_HOLDER_STATE_ALIVE, TESSERA_HOLDER_STATE_DEAD, TESSERA_HOLDER_STATE_ALIVE,
    TESSERA_HOLDER_STATE_UNKNOWN, TESSERA_HOLDER_STATE_ALIVE,
  };
  const TesseraProcessState expected_processes[] = {
    TESSERA_PROCESS_ALIVE, TESSERA_PROCESS_DEAD, TESSERA_PROCESS_ALIVE, TESSERA_PROCESS_UNKNOWN,
    TESSERA_PROCESS_ALIVE,
  };

  /* This very process with its host's ids, but another start time: a
   * process that ended, its pid since taken by us. */
  json_object_set_int_member (json_node_get_object (node), "start_time",
                              (gint64) tessera_process_get_start_time (self) + 1);
  dead = json_to_string (node, FALSE);
  g_ptr_array_add (files, counter_lock_file (tmp, "a@1", alive));
  g_ptr_array_add (files, counter_lock_file (tmp, "b@2", dead));
  g_ptr_array_add (files, counter_lock_file (tmp, "c@3", alive));
  g_ptr_array_add (files, counter_lock_file (tmp, "d@4", NULL));
  g_ptr_array_add (files, counter_lock_file (tmp, "e@5", alive));

  states = tessera_dynamic_lock_file_judge_holders (files, &processes);
  g_assert_cmpuint (states->len, ==, files->len);
  g_assert_cmpuint (processes->len, ==, files->len);
  for (guint i = 0; i < files->len; i++)
    {
      TesseraProcessState one_process;
      TesseraHolderState one = tessera_dynamic_lock_file_judge_holder (g_ptr_array_index (files, i), &one_process,
                                                                        NULL);

      g_assert_cmpint (g_array_index (states, TesseraHolderState, i), ==, expected[i]);
      g_assert_cmpint (g_array_index (processes, TesseraProcessState, i), ==, expected_processes[i]);
      g_assert_cmpint (one, ==, expected[i]);
      g_assert_cmpint (one_process, ==, expected_processes[i]);
    }
  g_clear_pointer (&states, g_array_unref);
  states = tessera_dynamic_lock_file_judge_holders (files, NULL);
  g_assert_cmpint (g_array_index (states, TesseraHolderState, 1), ==, TESSERA_HOLDER_STATE_DEAD);
  test_remove_tree (tmp);
}

/* tessera_dynamic_lock_file_get_file_uid(): the owner of the file it was
 * read from; -1 for one made from data, which has no file. */
static void
test_lock_file_file_uid (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path = g_build_filename (tmp, "x@1.json", NULL);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/work/x\", \"information\": {\"count\": 1}}", tmp);
  g_autoptr(TesseraDynamicLockFile) from_data = counter_lock_file (tmp, "x@1", NULL);
  g_autoptr(TesseraDynamicLockFile) loaded = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (tessera_dynamic_lock_file_get_file_uid (from_data), ==, -1);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  loaded = tessera_dynamic_lock_file_load (TESSERA_TYPE_COUNTER_LOCK_FILE, path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tessera_dynamic_lock_file_get_file_uid (loaded), ==, (gint64) getuid ());
  test_remove_tree (tmp);
}

/* ---- TesseraTrackedDynamicResource ---- */

/* tessera_tracked_dynamic_resource_dup_lock_file_path(): where the
 * dependency's job's lock file is, `jobs/{task_id}@{identifier}.json` in
 * the pool's folder (there while the job holds, gone after), or NULL for
 * a job whose names are not acceptable. */
static void
test_tracked_resource_lock_file_path (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *expected = g_build_filename (folder, "jobs", "my.task@5f1e2d.json", NULL);
  g_autofree char *path = NULL;
  g_autofree char *bad_path = NULL;
  g_autofree char *bad_uri = g_build_filename (tmp, "jobs", "a@b", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraJob) bad_job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  g_autoptr(TesseraDynamicDependency) bad_dependency = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;

  if ((counter = test_counter_new (folder, 2, &error)) == NULL)
    g_error ("opening the counter: %s", error->message);
  job = test_job_new (tmp, "my.task", "5f1e2d");
  dependency = test_counter_dependency_new (counter, job, 1);

  if ((path = tessera_tracked_dynamic_resource_dup_lock_file_path (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter),
                                                                   dependency)) == NULL)
    g_error ("no lock file path for an acceptable job");
  g_assert_cmpstr (path, ==, expected);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  if ((lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error)) == NULL)
    g_error ("taking the counter: %s", error->message);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
    g_error ("releasing: %s", error->message);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  /* A job made through its properties skips tessera_job_new()'s checks:
   * an '@' in its task id would name another job's lock file. */
  bad_job = g_object_new (TESSERA_TYPE_JOB, "task-id", "a@b", "identifier", "c", "job-uri", bad_uri, NULL);
  bad_dependency = test_counter_dependency_new (counter, bad_job, 1);
  bad_path = tessera_tracked_dynamic_resource_dup_lock_file_path (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter),
                                                                  bad_dependency);
  g_assert_null (bad_path);

  g_clear_object (&lock);
  g_clear_object (&dependency);
  g_clear_object (&bad_dependency);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

/* tessera_dynamic_dependency_lock_dup_lock_folder(): by default the
 * folder of the dependency's resource's pool (a copy), the one its
 * ipc.lock and lock file paths are in; none for a lock without a
 * dependency. */
static void
test_dependency_lock_dup_lock_folder (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *lock_folder = NULL;
  g_autofree char *again = NULL;
  g_autofree char *ipc_lock = NULL;
  g_autofree char *expected_ipc_lock = g_build_filename (folder, "ipc.lock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLock) alone = NULL;

  if ((counter = test_counter_new (folder, 2, &error)) == NULL)
    g_error ("opening the counter: %s", error->message);
  job = test_job_new (tmp, "my.task", "5f1e2d");
  dependency = test_counter_dependency_new (counter, job, 1);
  if ((lock = tessera_dynamic_dependency_create_lock (dependency, &error)) == NULL)
    g_error ("making the lock: %s", error->message);

  lock_folder = tessera_dynamic_dependency_lock_dup_lock_folder (lock);
  g_assert_cmpstr (lock_folder, ==, folder);
  g_assert_cmpstr (lock_folder, ==,
                   tessera_tracked_dynamic_resource_get_lock_folder (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter)));
  again = tessera_dynamic_dependency_lock_dup_lock_folder (lock);
  g_assert_true (again != lock_folder);
  g_assert_cmpstr (again, ==, lock_folder);
  ipc_lock = tessera_dynamic_dependency_lock_dup_ipc_lock_path (lock);
  g_assert_cmpstr (ipc_lock, ==, expected_ipc_lock);

  alone = g_object_new (TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK, NULL);
  g_assert_null (tessera_dynamic_dependency_lock_dup_lock_folder (alone));

  g_clear_object (&lock);
  g_clear_object (&dependency);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

/* tessera_tracked_dynamic_resource_keeps_side_entries(): TRUE once the
 * pool of a resource with a lock folder is open (the folder store keeps
 * them as files there), FALSE before. */
static void
test_tracked_resource_keeps_side_entries (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TestCounter) unopened = NULL;

  if ((counter = test_counter_new (folder, 2, &error)) == NULL)
    g_error ("opening the counter: %s", error->message);
  g_assert_true (tessera_tracked_dynamic_resource_keeps_side_entries (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter)));

  /* Made, not initialized: its pool is not open. */
  unopened = g_object_new (TEST_TYPE_COUNTER, "lock-folder", folder, "name", "token", "total", (gint64) 2, NULL);
  g_assert_false (tessera_tracked_dynamic_resource_keeps_side_entries (TESSERA_TRACKED_DYNAMIC_RESOURCE (unopened)));

  g_clear_object (&unopened);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

/* ---- TesseraDynamicDependencyLocks ---- */

/* tessera_dynamic_dependency_locks_to_json(): the "dynamic_locks" array
 * of locks.json, each dynamic lock's entry as its to_json writes it, in
 * the set's order; a lock of another kind in the set has none. */
static void
test_dynamic_dependency_locks_to_json (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *saved_path = g_build_filename (tmp, "locks.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(TesseraDynamicDependencyLocks) empty = tessera_dynamic_dependency_locks_new ();
  g_autoptr(CountingLock) other = g_object_new (COUNTING_TYPE_LOCK, NULL);
  g_autoptr(TesseraDynamicDependencyLock) first = NULL;
  g_autoptr(TesseraDynamicDependencyLock) second = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) none = NULL;
  g_autoptr(JsonNode) saved = NULL;
  JsonArray *array;

  if ((counter = test_counter_new (folder, 3, &error)) == NULL)
    g_error ("opening the counter: %s", error->message);
  first = take_counter (counter, tmp, "job0", 1);
  second = take_counter (counter, tmp, "job1", 2);
  tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (first));
  tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (other));
  tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (second));

  node = tessera_dynamic_dependency_locks_to_json (locks);
  g_assert_nonnull (node);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (node));
  array = json_node_get_array (node);
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(JsonObject) expected = tessera_dynamic_dependency_lock_to_json (i == 0 ? first : second);

      g_assert_true (json_object_equal (json_array_get_object_element (array, i), expected));
    }
  /* What locks.json holds. */
  if (!tessera_dynamic_dependency_locks_save (locks, saved_path, &error))
    g_error ("saving: %s", error->message);
  if ((saved = tessera_json_read_file (saved_path, &error)) == NULL)
    g_error ("reading %s: %s", saved_path, error->message);
  g_assert_true (json_node_equal (json_object_get_member (json_node_get_object (saved), "dynamic_locks"), node));

  none = tessera_dynamic_dependency_locks_to_json (empty);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (none));
  g_assert_cmpuint (json_array_get_length (json_node_get_array (none)), ==, 0);

  g_assert_true (tessera_lock_release (TESSERA_LOCK (first), NULL));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (second), NULL));
  g_clear_object (&locks);
  g_clear_object (&first);
  g_clear_object (&second);
  test_drop_resource (&counter);
  test_remove_tree (tmp);
}

/* ---- tessera_job_write_file() ---- */

static char *
contents_of (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("reading %s: %s", path, error->message);
  return text;
}

/* tessera_job_write_file(): <job dir>/NAME written whole (a new file, or
 * one replaced), never through a link in its place, nothing else left
 * beside it; through the folder's descriptor for a job made with
 * tessera_job_new_at(): a folder renamed since keeps receiving the files,
 * not what is at its path now. */
static void
test_job_write_file (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *dir = g_build_filename (tmp, "xp", NULL);
  g_autofree char *uri = g_build_filename (dir, "task", NULL);
  g_autofree char *file = g_build_filename (dir, "notes.txt", NULL);
  g_autofree char *link = g_build_filename (dir, "link.txt", NULL);
  g_autofree char *target = g_build_filename (tmp, "target.txt", NULL);
  g_autofree char *moved = g_build_filename (tmp, "moved", NULL);
  g_autofree char *moved_file = g_build_filename (moved, "at.txt", NULL);
  g_autofree char *path_file = g_build_filename (dir, "at.txt", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraJob) job_at = NULL;
  struct stat st;
  int fd;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  if ((job = tessera_job_new ("task", "1", uri, &error)) == NULL)
    g_error ("tessera_job_new: %s", error->message);

  if (!tessera_job_write_file (job, "notes.txt", "first\n", &error))
    g_error ("writing: %s", error->message);
  text = contents_of (file);
  g_assert_cmpstr (text, ==, "first\n");
  g_clear_pointer (&text, g_free);
  if (!tessera_job_write_file (job, "notes.txt", "second, longer\n", &error))
    g_error ("writing again: %s", error->message);
  text = contents_of (file);
  g_assert_cmpstr (text, ==, "second, longer\n");
  g_clear_pointer (&text, g_free);

  /* A link in the file's place is replaced, its target untouched. */
  test_write_file (target, "theirs\n");
  g_assert_cmpint (symlink (target, link), ==, 0);
  if (!tessera_job_write_file (job, "link.txt", "ours\n", &error))
    g_error ("writing over a link: %s", error->message);
  g_assert_cmpint (lstat (link, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  text = contents_of (link);
  g_assert_cmpstr (text, ==, "ours\n");
  g_clear_pointer (&text, g_free);
  text = contents_of (target);
  g_assert_cmpstr (text, ==, "theirs\n");
  g_clear_pointer (&text, g_free);
  /* No temporary file left beside them. */
  g_assert_cmpuint (test_count_entries (dir), ==, 2);

  /* Through the descriptor: the folder moved away, another at its path. */
  if ((fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    g_error ("open %s: %s", dir, g_strerror (errno));
  job_at = tessera_job_new_at ("task", "1", uri, fd, &error);
  close (fd);
  if (job_at == NULL)
    g_error ("tessera_job_new_at: %s", error->message);
  g_assert_cmpint (rename (dir, moved), ==, 0);
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  if (!tessera_job_write_file (job_at, "at.txt", "where\n", &error))
    g_error ("writing through the descriptor: %s", error->message);
  text = contents_of (moved_file);
  g_assert_cmpstr (text, ==, "where\n");
  g_assert_false (g_file_test (path_file, G_FILE_TEST_EXISTS));

  test_remove_tree (tmp);
}

/* ---- TesseraRegistry ---- */

/* tessera_registry_lookup_process_type(): the TesseraProcessType
 * subclass of the plugin whose manifest lists the name in ProcessTypes,
 * its module loaded then (not before); INVALID_NAME for a name that
 * could be a path, PLUGIN_NOT_FOUND for a name no plugin lists as a
 * process type (a resource type's included). In a child: loading is
 * for the process's life. */
static void
test_registry_lookup_process_type (void)
{
  if (g_test_subprocess ())
    {
      TesseraRegistry *registry = tessera_registry_get_default ();
      g_autoptr(GError) error = NULL;
      GType type;

      /* slurm.plugin's module is slurmjobs. */
      g_assert_false (tessera_registry_is_module_loaded (registry, "slurmjobs"));
      type = tessera_registry_lookup_process_type (registry, "slurm", &error);
      g_assert_no_error (error);
      g_assert_true (g_type_is_a (type, TESSERA_TYPE_PROCESS_TYPE));
      g_assert_true (tessera_registry_is_module_loaded (registry, "slurmjobs"));
      g_assert_true (tessera_registry_lookup_process_type (registry, "slurm", NULL) == type);

      g_assert_cmpuint (tessera_registry_lookup_process_type (registry, "../slurm", &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
      g_clear_error (&error);
      g_assert_cmpuint (tessera_registry_lookup_process_type (registry, "no-such-type", &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
      g_clear_error (&error);
      g_assert_cmpuint (tessera_registry_lookup_process_type (registry, "countertoken", &error), ==, G_TYPE_INVALID);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND);
      g_assert_false (tessera_registry_is_module_loaded (registry, "countertoken"));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* ---- tessera_folder_path_open_below ---- */

/* Records each folder on the way in @user_data (a GPtrArray); stops
 * after the first when the array says so (its first element "stop"). */
static gboolean
record_step (int folder_fd, const char *path, gpointer user_data)
{
  GPtrArray *seen = user_data;
  struct stat st;

  g_assert_cmpint (fstat (folder_fd, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_ptr_array_add (seen, g_strdup (path));
  return !(seen->len > 1 && g_str_equal (g_ptr_array_index (seen, 0), "stop"));
}

/* The walk down from a folder goes folder by folder, gives each to its
 * step, and never follows a link, not even one of ours in our own
 * folder (which tessera_folder_path_open() would follow). */
static void
test_folder_path_open_below (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *a = g_build_filename (tmp, "a", NULL);
  g_autofree char *b = g_build_filename (a, "b", NULL);
  g_autofree char *link = g_build_filename (tmp, "l", NULL);
  g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  struct stat st, got;
  int tmp_fd, fd;

  g_assert_cmpint (g_mkdir (a, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (b, 0700), ==, 0);
  g_assert_cmpint (symlink (a, link), ==, 0);
  tmp_fd = tessera_folder_path_open (tmp, &error);
  g_assert_no_error (error);

  fd = tessera_folder_path_open_below (tmp_fd, tmp, "a/b", record_step, seen, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fstat (fd, &got), ==, 0);
  g_assert_cmpint (stat (b, &st), ==, 0);
  g_assert_cmpuint (got.st_ino, ==, st.st_ino);
  g_assert_cmpuint (seen->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (seen, 0), ==, a);
  g_assert_cmpstr (g_ptr_array_index (seen, 1), ==, b);
  close (fd);

  /* Its own folder: no step. */
  g_ptr_array_set_size (seen, 0);
  fd = tessera_folder_path_open_below (tmp_fd, tmp, "", record_step, seen, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fstat (fd, &got), ==, 0);
  g_assert_cmpint (stat (tmp, &st), ==, 0);
  g_assert_cmpuint (got.st_ino, ==, st.st_ino);
  g_assert_cmpuint (seen->len, ==, 0);
  close (fd);

  /* A link on the way: refused, named. */
  fd = tessera_folder_path_open_below (tmp_fd, tmp, "l/b", NULL, NULL, &error);
  g_assert_cmpint (fd, ==, -1);
  g_assert_cmpint (errno, ==, ENOTDIR);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_assert_nonnull (strstr (error->message, link));
  g_clear_error (&error);

  /* Missing: said, with its folder's name. */
  fd = tessera_folder_path_open_below (tmp_fd, tmp, "a/none", NULL, NULL, &error);
  g_assert_cmpint (fd, ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Never up, refused before any step (a step may change a folder). */
  g_ptr_array_set_size (seen, 0);
  fd = tessera_folder_path_open_below (tmp_fd, tmp, "a/../a", record_step, seen, &error);
  g_assert_cmpint (fd, ==, -1);
  g_assert_cmpint (errno, ==, EINVAL);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (seen->len, ==, 0);
  g_clear_error (&error);

  /* A step that stops the walk: cancelled, where it stopped. */
  g_ptr_array_set_size (seen, 0);
  g_ptr_array_add (seen, g_strdup ("stop"));
  fd = tessera_folder_path_open_below (tmp_fd, tmp, "a/b", record_step, seen, &error);
  g_assert_cmpint (fd, ==, -1);
  g_assert_cmpint (errno, ==, ECANCELED);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (seen->len, ==, 2);
  g_clear_error (&error);

  close (tmp_fd);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/public-api/folder-path/open-below", test_folder_path_open_below);
  g_test_add_func ("/public-api/job/names", test_job_names);
  g_test_add_func ("/public-api/job/names-of-private-job", test_job_names_of_private_job);
  g_test_add_func ("/public-api/job-dependency-locks/append", test_job_dependency_locks_append);
  g_test_add_func ("/public-api/json/read-file", test_json_read_file);
  g_test_add_func ("/public-api/locks/new", test_locks_new);
  g_test_add_func ("/public-api/locks/clear", test_locks_clear);
  g_test_add_func ("/public-api/process/boot-id", test_process_boot_id);
  g_test_add_func ("/public-api/lock-file/judge-holders", test_lock_file_judge_holders);
  g_test_add_func ("/public-api/lock-file/file-uid", test_lock_file_file_uid);
  g_test_add_func ("/public-api/tracked-resource/lock-file-path", test_tracked_resource_lock_file_path);
  g_test_add_func ("/public-api/tracked-resource/keeps-side-entries", test_tracked_resource_keeps_side_entries);
  g_test_add_func ("/public-api/dependency-lock/dup-lock-folder", test_dependency_lock_dup_lock_folder);
  g_test_add_func ("/public-api/job-dependency-lock/verify-lock-file", test_job_dependency_lock_verify_lock_file);
  g_test_add_func ("/public-api/process/equal", test_process_equal);
  g_test_add_func ("/public-api/job/write-file", test_job_write_file);
  g_test_add_func ("/public-api/job-dependency-lock/get-data", test_job_dependency_lock_get_data);
  g_test_add_func ("/public-api/dynamic-dependency-locks/to-json", test_dynamic_dependency_locks_to_json);
  g_test_add_func ("/public-api/registry/lookup-process-type", test_registry_lookup_process_type);
  return g_test_run ();
}
