/* test-format.c: the on-disk format, both directions (acceptance 1)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <glib/gstdio.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef TestPoolFixture Fixture;

static void
copy_fixture (const char *name, const char *dest)
{
  g_autofree char *src = g_test_build_filename (G_TEST_DIST, "fixtures", name, NULL);
  g_autofree char *contents = NULL;
  gsize len;

  g_assert_true (g_file_get_contents (src, &contents, &len, NULL));
  test_write_file (dest, contents);
}

/* Lock files exactly as the Python code writes them are read and counted. */
static void
test_seed_files_accounted (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *a = g_build_filename (jobs, "my.task@5f1e2d.json", NULL);
  g_autofree char *b = g_build_filename (jobs, "other.task@77aa01.json", NULL);
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(TesseraJob) job1 = NULL, job2 = NULL;
  g_autoptr(TesseraDynamicDependency) dep1 = NULL, dep2 = NULL;

  copy_fixture ("seed-lock-file.json", a);
  copy_fixture ("seed-lock-file-process.json", b);
  copy_fixture ("seed-informations.json", info);

  counter = test_counter_new (f->folder, -1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_counter_get_total (counter), ==, 5);
  g_assert_cmpint (test_counter_get_used (counter), ==, 3);

  files = tessera_tracked_dynamic_resource_list_lock_files (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter));
  g_assert_cmpuint (files->len, ==, 2);
  for (guint i = 0; i < files->len; i++)
    {
      TesseraDynamicLockFile *lf = g_ptr_array_index (files, i);
      if (g_str_has_suffix (tessera_dynamic_lock_file_get_path (lf), "my.task@5f1e2d.json"))
        {
          g_assert_cmpstr (tessera_dynamic_lock_file_get_job_uri (lf), ==, "/nonexistent/xpm/jobs/my.task/5f1e2d/task");
          g_assert_null (tessera_dynamic_lock_file_get_process (lf));
          g_assert_cmpint (test_counter_lock_file_get_count (TEST_COUNTER_LOCK_FILE (lf)), ==, 2);
        }
      else
        {
          g_assert_nonnull (tessera_dynamic_lock_file_get_process (lf));
          g_assert_cmpint (tessera_process_get_pid (tessera_dynamic_lock_file_get_process (lf)), ==, 1);
          g_assert_cmpint (test_counter_lock_file_get_count (TEST_COUNTER_LOCK_FILE (lf)), ==, 1);
        }
    }

  /* 2 of 5 are left: a request for 2 passes, one more for 1 does not. */
  job1 = test_job_new (f->tmp, "t1", "x");
  dep1 = test_counter_dependency_new (counter, job1, 2);
  {
    g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep1, 0, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (lock);
    job2 = test_job_new (f->tmp, "t2", "y");
    dep2 = test_counter_dependency_new (counter, job2, 1);
    g_assert_null (tessera_dynamic_dependency_lock (dep2, 0, NULL, &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
    g_clear_error (&error);
  }
  /* The seed's files are still there: nothing of theirs was touched. */
  g_assert_true (g_file_test (a, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (b, G_FILE_TEST_IS_REGULAR));
}

static gboolean
python_available (void)
{
  g_autofree char *python = g_find_program_in_path (test_python ());
  return python != NULL;
}

/* Reads a lock file the way the seed's DynamicLockFile and TokenLockFile do. */
static const char python_reader[] =
  "import json, sys\n"
  "with open(sys.argv[1], 'rt') as fp:\n"
  "    data = json.load(fp)\n"
  "job_uri = data.get('job_uri')\n"
  "info = data.get('information')\n"
  "assert isinstance(info, dict), info\n"
  "count = info.get('count', 0)\n"
  "proc = data.get('process')\n"
  "print(job_uri, count, proc['type'], proc['pid'])\n"
  "with open(sys.argv[2], 'r') as f:\n"
  "    print(json.load(f).get('total', 0))\n";

/* What Tessera writes has the structure the Python code expects. */
static void
test_written_files_parse_as_seed (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 4, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "my.task", "abc");
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *path = g_build_filename (f->folder, "jobs", "my.task@abc.json", NULL);
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object, *information, *process;
  GDir *dir;
  const char *name;
  guint n = 0;

  g_assert_no_error (error);
  g_assert_true (tessera_job_set_process (job, self, NULL));
  dep = test_counter_dependency_new (counter, job, 2);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);

  root = test_parse_json_file (path);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  object = json_node_get_object (root);
  g_assert_cmpstr (json_object_get_string_member (object, "job_uri"), ==, tessera_job_get_job_uri (job));
  information = json_object_get_object_member (object, "information");
  g_assert_cmpint (json_object_get_int_member (information, "count"), ==, 2);
  process = json_object_get_object_member (object, "process");
  g_assert_cmpstr (json_object_get_string_member (process, "type"), ==, "local");
  g_assert_cmpint (json_object_get_int_member (process, "pid"), ==, getpid ());

  /* The job side of experimaestro's layout: <job_uri>.pid names the holder. */
  {
    g_autofree char *pid_path = tessera_job_dup_pid_path (job);
    g_autoptr(JsonNode) pid = test_parse_json_file (pid_path);
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (pid), "pid"), ==, getpid ());
  }

  /* Only the lock file in jobs/: no temporary file left behind. */
  dir = g_dir_open (jobs, 0, NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_assert_cmpstr (name, ==, "my.task@abc.json");
      n++;
    }
  g_dir_close (dir);
  g_assert_cmpuint (n, ==, 1);

  if (python_available ())
    {
      g_autofree char *expected = g_strdup_printf ("%s 2 local %d\n4\n", tessera_job_get_job_uri (job), getpid ());
      g_autofree char *out = test_python_output (NULL, python_reader, path, info, NULL);

      g_assert_cmpstr (out, ==, expected);
    }
  else
    g_test_message ("python3 not found: the Python reader part was not run");

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Recording the process rewrites the lock file through a new file and a
 * rename, never in place: a writer killed half-way must not leave a
 * truncated lock file (the stress run once found an empty one). */
static void
test_rewrite_is_atomic (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 4, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "late.task", "abc");
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *path = g_build_filename (f->folder, "jobs", "late.task@abc.json", NULL);
  g_autoptr(JsonNode) root = NULL;
  struct stat before, after;

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_lstat (path, &before), ==, 0);

  g_assert_true (tessera_dynamic_dependency_lock_job_started (lock, job, self, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_lstat (path, &after), ==, 0);
  g_assert_cmpuint (before.st_ino, !=, after.st_ino);
  root = test_parse_json_file (path);
  g_assert_true (json_object_has_member (json_node_get_object (root), "process"));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
}

/* A lock whose job_before_start() counts its calls, and fails when told
 * to: what tessera_dynamic_dependency_locks_job_before_start() calls on
 * each of its locks, in order, until the first failure. */
typedef struct
{
  TesseraDynamicDependencyLock parent_instance;
  guint calls;
  gboolean fails;
} TestHookLock;

typedef struct
{
  TesseraDynamicDependencyLockClass parent_class;
} TestHookLockClass;

GType test_hook_lock_get_type (void);
G_DEFINE_TYPE (TestHookLock, test_hook_lock, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK)

static gboolean
test_hook_lock_before_start (TesseraDynamicDependencyLock *lock, TesseraJob *job, GError **error)
{
  TestHookLock *self = (TestHookLock *) lock;

  self->calls++;
  if (self->fails)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "refused before start");
      return FALSE;
    }
  return TRUE;
}

static void
test_hook_lock_class_init (TestHookLockClass *klass)
{
  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (klass)->job_before_start = test_hook_lock_before_start;
}

static void
test_hook_lock_init (TestHookLock *self)
{
}

/* The public calls that the command and the plugins do not make: the
 * ipc.lock's path, the hook before a job starts over a set of locks, and
 * deleting a lock file. */
static void
test_public_lock_calls (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 2, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "pub", "1");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
  g_autofree char *ipc = NULL;
  g_autofree char *expected_ipc = g_build_filename (f->folder, "ipc.lock", NULL);
  g_autofree char *path = g_build_filename (f->folder, "jobs", "pub@1.json", NULL);
  TestHookLock *hooks[3];

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);

  ipc = tessera_dynamic_dependency_lock_dup_ipc_lock_path (lock);
  g_assert_cmpstr (ipc, ==, expected_ipc);
  g_assert_true (g_file_test (ipc, G_FILE_TEST_IS_REGULAR));

  /* Each lock's hook in order; the first failure stops the walk. */
  for (guint i = 0; i < G_N_ELEMENTS (hooks); i++)
    {
      hooks[i] = g_object_new (test_hook_lock_get_type (), "dependency", dep, NULL);
      tessera_locks_append (TESSERA_LOCKS (locks), TESSERA_LOCK (hooks[i]));
    }
  g_assert_true (tessera_dynamic_dependency_locks_job_before_start (locks, job, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (hooks); i++)
    g_assert_cmpuint (hooks[i]->calls, ==, 1);
  hooks[1]->fails = TRUE;
  g_assert_false (tessera_dynamic_dependency_locks_job_before_start (locks, job, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_assert_cmpuint (hooks[0]->calls, ==, 2);
  g_assert_cmpuint (hooks[1]->calls, ==, 2);
  g_assert_cmpuint (hooks[2]->calls, ==, 1);
  g_clear_error (&error);
  for (guint i = 0; i < G_N_ELEMENTS (hooks); i++)
    g_object_unref (hooks[i]);

  /* Deleting the lock file: gone, and gone again is no error. */
  lock_file = tessera_dynamic_lock_file_load (TESSERA_TYPE_DYNAMIC_LOCK_FILE, path, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_dynamic_lock_file_delete (lock_file, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (tessera_dynamic_lock_file_delete (lock_file, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
}

static void
test_names (void)
{
  GString *long_id = g_string_new (NULL);
  g_autofree char *name = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *with_dot = NULL;

  for (int i = 0; i < 300; i++)
    g_string_append (long_id, "é");
  name = tessera_lock_file_name ("t", long_id->str);
  /* "t@" + 254 × "é", cut at 256 characters like Python's str[:256] */
  g_assert_cmpint (g_utf8_strlen (name, -1), ==, 256 + 5);
  g_assert_true (g_str_has_prefix (name, "t@é"));
  g_assert_true (g_str_has_suffix (name, "é.json"));
  g_string_free (long_id, TRUE);

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TesseraJob) job = tessera_job_new ("a", "b", "/x/y/task.name", &error);
    g_assert_no_error (error);
    with_dot = tessera_job_dup_lock_path (job);
    /* Path("/x/y/task.name").with_suffix(".lock") */
    g_assert_cmpstr (with_dot, ==, "/x/y/task.lock");
  }
  expected = tessera_lock_file_name ("my.task", "abc");
  g_assert_cmpstr (expected, ==, "my.task@abc.json");
}

static void
test_locks_json_round_trip (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 2, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "rt", "1");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraDynamicDependencyLocks) locks = NULL;
  g_autoptr(TesseraJobDependencyLocks) job_locks = NULL;
  g_autofree char *locks_path = g_build_filename (f->tmp, "locks.json", NULL);
  g_autofree char *lock_file = g_build_filename (f->folder, "jobs", "rt@1.json", NULL);
  g_autoptr(JsonNode) root = NULL;
  JsonObject *entry;

  g_assert_no_error (error);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  locks = test_locks_json_save (lock, job, locks_path);

  root = test_parse_json_file (locks_path);
  entry = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "dynamic_locks"), 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "module"), ==, "tessera");
  g_assert_cmpstr (json_object_get_string_member (entry, "class"), ==, "DynamicDependencyLock");
  g_assert_cmpstr (json_object_get_string_member (entry, "lock_file_path"), ==, lock_file);

  /* The scheduler hands the holding to the job process. */
  job_locks = test_locks_json_take_over (lock, locks_path);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));   /* detached: still held */
  tessera_job_dependency_locks_release (job_locks);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* Acquiring again now fails: the lock file is gone. */
  g_assert_false (tessera_job_dependency_locks_acquire (job_locks, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING);
  g_clear_error (&error);

  /* Capacity is back. */
  g_assert_true (tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error));
  g_assert_cmpint (test_counter_get_used (counter), ==, 0);
}

static void
test_locks_json_unknown_class (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->tmp, "locks.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJobDependencyLocks) locks = NULL;
  const char * const *skipped;

  test_expect_warnings ();
  test_write_file (path,
    "{\"dynamic_locks\": [{\"module\": \"no.such.module\", \"class\": \"Nope\"},"
    " {\"class\": \"MissingModule\"}, 42,"
    " {\"module\": \"tessera\", \"class\": \"DynamicDependencyLock\"}]}");
  locks = tessera_job_dependency_locks_load (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tessera_job_dependency_locks_get_locks (locks)->len, ==, 1);
  skipped = tessera_job_dependency_locks_get_skipped (locks);
  g_assert_cmpuint (g_strv_length ((char **) skipped), ==, 3);
  g_assert_cmpstr (skipped[0], ==, "no.such.module:Nope");
}

/* Lock files are read by a plain-JSON reader of Tessera's own, json-glib
 * reading what it does not take: whatever the text, the result is
 * json-glib's (the same tree, the same value types, the same errors). */
static void
test_plain_json_as_json_glib (void)
{
  static const char *const texts[] = {
    "{\"job_uri\": \"/j/x\", \"information\": {\"count\": 3}, \"process\": {\"type\": \"local\", \"pid\": 12}}",
    "{\"job_uri\":\"/j/x\",\"information\":{\"count\":1},\"process\":{\"type\":\"local\",\"pid\":4026531836,"
    "\"boot_id\":\"f71e8b49-6c6e\",\"uid\":0}}",
    " \t\r\n{ } \n", "[]", "[ ]", "{}", "[1, [2, [3, {}]], {\"a\": [true, false, null]}]",
    "0", "-0", "-12", "123456789012345678", "-123456789012345678", "1234567890123456789",
    "9223372036854775807", "-9223372036854775808", "1.0", "1e3", "-1.5E-2",
    "-", "- 1", "+1", "\"\"", "\"a b\"", "\"esc\\\"aped\"", "\"\\u00e9\"", "\"caf\xc3\xa9\"",
    "\"\xff\"", "\"unterminated", "{\"a\": 1, \"a\": 2}", "{\"a\": 1,}", "[1,]", "[1 2]", "{\"a\" 1}",
    "{a: 1}", "tru", "true", "false", "null", "nul", "truex", "1x", "[1]x", "{\"a\": 1}}",
    "", " ", "[", "{", "}", "]", ",", "\"a\":1", "[[[[[[[[[[]]]]]]]]]]", "{\"n\": -0}",
    "{\"count\": 1}\n", "{\"information\": {\"count\": 2.0}}", "{\"a\":\"\\/\"}",
    "\"\\ud83d\\ude00\"", "[1e5, 1E+5, -0.5e-3, 0.0]", "\"\\b\\f\\n\\r\\t\\\\\"",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new_immutable ();
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) reference_error = NULL;
      g_autoptr(JsonNode) node = tessera_json_parse (texts[i], -1, &error);
      gboolean reference = json_parser_load_from_data (parser, texts[i], -1, &reference_error) &&
                           json_parser_get_root (parser) != NULL;
      /* Escaped: TAP takes one valid UTF-8 line per message. */
      g_autofree char *shown = g_strescape (texts[i], NULL);

      g_test_message ("%s", shown);
      if (!reference)
        {
          g_assert_null (node);
          g_assert_nonnull (error);
          continue;
        }
      if (node == NULL)
        {
          /* Refused beyond json-glib: only a string that is not UTF-8. */
          g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
          continue;
        }
      g_assert_no_error (error);
      g_assert_true (json_node_is_immutable (node));
      {
        g_autofree char *got = json_to_string (node, FALSE);
        g_autofree char *want = json_to_string (json_parser_get_root (parser), FALSE);
        g_assert_cmpstr (got, ==, want);
        g_assert_true (json_node_equal (node, json_parser_get_root (parser)));
      }
    }

  /* Deeper than TESSERA_JSON_MAX_DEPTH: refused either way. */
  {
    g_autoptr(GString) deep = g_string_new (NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(JsonNode) node = NULL;

    for (int i = 0; i <= TESSERA_JSON_MAX_DEPTH; i++)
      g_string_append_c (deep, '[');
    for (int i = 0; i <= TESSERA_JSON_MAX_DEPTH; i++)
      g_string_append_c (deep, ']');
    node = tessera_json_parse (deep->str, deep->len, &error);
    g_assert_null (node);
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
  }
}

/* What json-glib 1.6 reads beyond RFC 8259 (comments, single quotes,
 * numbers and escapes JSON does not have) or reads as something else than
 * the text says (an integer that wraps, a string cut at "\u0000") never
 * reaches it: refused, as a lock folder's file that cannot be read. Inside
 * a comment or a single-quoted string, nesting is nesting all the same. */
static void
test_json_strict_only (void)
{
  static const char *const texts[] = {
    "/* c */ {}", "{} /* c */", "[1, /* c */ 2]", "{\"a\": \"b\" /* c */}", "[1, //\n 2]", "{\"a\"://\n 1}", "[1]//",
    "{'a': 1}", "['\"', 1]", "{\"a\": 'b'}", "'a'",
    "{\"job_uri\": \"/j/x\", /* who */ \"information\": {\"count\": 1}}",
    "{'job_uri': '/j/x', 'information': {'count': 1}}",
    "\"tab\tin\"", "\"new\nline\"", "\"\\x41\"", "\"\\U0041\"", "\"\\q\"",
    "\"a\\u0000b\"", "\"\\ud800x\"", "\"\\udc00x\"",
    "01", "00", "-01", "1.", ".5", "-.5", "[-1.e3]", "0x10",
    "99999999999999999999", "-9223372036854775809", "9223372036854775808",
    "\xef\xbb\xbf{}",
  };
  /* What crashed every reader (a stack overflow in json-glib): the depth
   * guard saw no nesting inside what it took for a string. */
  static const char *const openers[] = { "/*\"*/", "['\"',", "{'\"': " };

  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new_immutable ();
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = tessera_json_parse (texts[i], -1, &error);
      g_autofree char *shown = g_strescape (texts[i], NULL);

      g_test_message ("%s", shown);
      /* json-glib takes each one (else the case would prove nothing)… */
      g_assert_true (json_parser_load_from_data (parser, texts[i], -1, NULL));
      /* …Tessera none. */
      g_assert_null (node);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (openers); i++)
    {
      g_autoptr(GString) text = g_string_new (openers[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) node = NULL;

      for (int j = 0; j < 200000; j++)
        g_string_append_c (text, '[');
      g_test_message ("%s then 200000 [", openers[i]);
      node = tessera_json_parse (text->str, text->len, &error);
      g_assert_null (node);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
    }
}

/* The temporary file of a lock file is written in the writer's own
 * folder (F/.tessera-tmp-UID) and renamed into jobs/: jobs/ hears of the
 * rename alone. Every process watching jobs/ woke for the temporary's
 * creation and its closing too, three wake-ups of every watcher per
 * acquisition instead of one. */
static void
test_lock_file_temporary_outside_jobs (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 4, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "my.task", "abc");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *own = g_strdup_printf ("%s/.tessera-tmp-%u", f->folder, (unsigned) geteuid ());
  char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  guint moved_in = 0, other = 0;
  struct stat st;
  ssize_t n;
  int fd;

  g_assert_no_error (error);
  fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, jobs, IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO), >=, 0);
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);

  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
        struct inotify_event *ev = (struct inotify_event *) p;

        p += sizeof *ev + ev->len;
        g_test_message ("jobs/: %s 0x%x", ev->len > 0 ? ev->name : "", ev->mask);
        if ((ev->mask & IN_MOVED_TO) && ev->len > 0 && g_str_equal (ev->name, "my.task@abc.json"))
          moved_in++;
        else
          other++;
      }
  g_assert_true (n < 0 && errno == EAGAIN);
  close (fd);
  g_assert_cmpuint (moved_in, ==, 1);
  g_assert_cmpuint (other, ==, 0);
  /* The writer's folder: its own, for it alone, and left empty. */
  g_assert_cmpint (lstat (own, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
  g_assert_cmpuint (st.st_mode & 077, ==, 0);
  g_assert_cmpuint (test_count_entries (own), ==, 0);
}

/* A temporary file left in the writer's folder by a writer killed before
 * its rename goes at the next writer's first write, once it is a minute
 * old; a fresh one (a writer under way) stays. With @data, it goes at an
 * update (what `tessera clean` does), which writes nothing. */
static void
test_stale_writer_temporary_removed (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 4, &error);
  g_autofree char *own = g_strdup_printf ("%s/.tessera-tmp-%u", f->folder, (unsigned) geteuid ());
  g_autofree char *stale = g_build_filename (own, "x@dead.json.Ab12Cd", NULL);
  g_autofree char *fresh = g_build_filename (own, "x@busy.json.Ef34Gh", NULL);
  g_autoptr(Helper) holder = NULL;
  struct timespec times[2] = { { 0, UTIME_OMIT }, { 0, 0 } };

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (own, 0700), ==, 0);
  test_write_file (stale, "{\"job_uri\": \"x\"}");
  test_write_file (fresh, "{\"job_uri\": \"y\"}");
  times[1].tv_sec = time (NULL) - 120;
  g_assert_cmpint (utimensat (AT_FDCWD, stale, times, AT_SYMLINK_NOFOLLOW), ==, 0);

  if (data != NULL)
    {
      g_assert_true (tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error));
      g_assert_no_error (error);
      g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
      g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));
      return;
    }
  holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  helper_expect_line (holder, "ACQUIRED", 60);
  g_assert_false (g_file_test (stale, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (fresh, G_FILE_TEST_EXISTS));
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* Counts the events of inotify instance @fd read so far. */
static guint
count_events (int fd)
{
  char buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  guint n_events = 0;
  ssize_t n;

  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n; n_events++)
      p += sizeof (struct inotify_event) + ((struct inotify_event *) p)->len;
  return n_events;
}

/* The writer's folder on another file system than jobs/ (a mount between
 * them): the rename cannot cross it, so the first write goes beside the
 * lock file after all, and the next ones go there at once instead of
 * trying the folder again each time. Root mounts a tmpfs there. */
static void
test_writer_temporaries_other_mount (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, 4, &error);
  g_autofree char *own = g_strdup_printf ("%s/.tessera-tmp-%u", f->folder, (unsigned) geteuid ());
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autoptr(GPtrArray) locks = g_ptr_array_new_with_free_func (g_object_unref);
  guint created;
  int fd;

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir (own, 0700), ==, 0);
  if (mount ("tmpfs", own, "tmpfs", 0, "mode=0700,size=1m") != 0)
    g_error ("cannot mount a tmpfs on %s (the test runs as root): %s", own, g_strerror (errno));
  fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, own, IN_CREATE), >=, 0);
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *id = g_strdup_printf ("j%d", i);
      g_autoptr(TesseraJob) job = test_job_new (f->tmp, "t", id);
      g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
      TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (locks, lock);
    }
  created = count_events (fd);
  close (fd);
  g_ptr_array_set_size (locks, 0);
  g_clear_object (&counter);
  g_assert_cmpint (umount2 (own, MNT_DETACH), ==, 0);
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);
  g_assert_cmpuint (created, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, test_pool_fixture_set_up, fn, test_pool_fixture_tear_down)
  ADD ("/format/seed-files/accounted", test_seed_files_accounted);
  ADD ("/format/written-files/parse-as-seed", test_written_files_parse_as_seed);
  g_test_add_func ("/format/names", test_names);
  g_test_add_func ("/format/json/plain-read-as-json-glib", test_plain_json_as_json_glib);
  g_test_add_func ("/format/json/strict-only", test_json_strict_only);
  ADD ("/format/rewrite-is-atomic", test_rewrite_is_atomic);
  ADD ("/format/lock-file-temporary-outside-jobs", test_lock_file_temporary_outside_jobs);
  ADD ("/format/stale-writer-temporary-removed", test_stale_writer_temporary_removed);
  g_test_add ("/format/stale-writer-temporary-removed/by-update", Fixture, GINT_TO_POINTER (1), test_pool_fixture_set_up,
              test_stale_writer_temporary_removed, test_pool_fixture_tear_down);
  ADD ("/format/writer-temporaries-on-another-mount", test_writer_temporaries_other_mount);
  ADD ("/format/locks-json/round-trip", test_locks_json_round_trip);
  ADD ("/format/locks-json/unknown-class-skipped", test_locks_json_unknown_class);
  ADD ("/format/public-lock-calls", test_public_lock_calls);
  return g_test_run ();
}
