/* test-bad-input.c: every kind of bad input gives a GError or a warning
 * and a defined outcome — never a crash, never an over-allocation
 * (acceptance 7).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  char *folder;
  char *jobs;
  char *info;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
  f->info = g_build_filename (f->folder, "informations.json", NULL);
  g_mkdir_with_parents (f->jobs, 0777);
  test_expect_warnings ();
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
  g_free (f->jobs);
  g_free (f->info);
}

/* A lock file that does not read, with a warning; @grantable units can
 * then be had of 2. */
static void
check_bad_lock_file (Fixture *f, const char *content, int expected)
{
  g_autofree char *path = g_build_filename (f->jobs, "bad@1.json", NULL);
  g_autoptr(TestCounter) counter = NULL;
  guint before = test_warning_count ();

  test_write_file (path, content);
  counter = test_counter_open (f->folder, 2, -1);
  g_assert_cmpuint (test_warning_count (), >, before);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, expected);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Text that is not JSON (a peer writing in place caught half-way, or a
 * hostile one) may hold anything: everything, until it reads or goes. */
static void
check_not_json (Fixture *f, const char *content)
{
  check_bad_lock_file (f, content, 0);
}

static void
test_truncated (Fixture *f, gconstpointer data)
{
  check_not_json (f, "{\"job_uri\": \"/tmp/x\", \"informa");
}

static void
test_not_json (Fixture *f, gconstpointer data)
{
  check_not_json (f, "this is not JSON\n\x01\x02");
}

static void
test_empty (Fixture *f, gconstpointer data)
{
  check_not_json (f, "");
}

static char *
deep_json (gsize depth)
{
  GString *text = g_string_new (NULL);

  for (gsize i = 0; i < depth; i++)
    g_string_append_c (text, '[');
  return g_string_free (text, FALSE);
}

/* JSON nested 200 000 deep (json-glib recurses once per level) is refused
 * before parsing, as a lock file and as informations.json: a warning, no
 * crash; the lock file holds everything. So is nesting that follows a
 * comment or a single-quoted string, which json-glib reads too. */
static void
test_deep_json (Fixture *f, gconstpointer data)
{
  const char *openers[] = { "", "/*\"*/", "['\"',", "{'\"': " };

  for (guint i = 0; i < G_N_ELEMENTS (openers); i++)
    {
      g_autofree char *brackets = deep_json (200000);
      g_autofree char *deep = g_strconcat (openers[i], brackets, NULL);
      g_autoptr(TestCounter) counter = NULL;
      g_autoptr(GError) error = NULL;
      guint before;

      g_test_message ("%s then 200000 [", openers[i]);
      check_not_json (f, deep);
      test_remove_tree (f->folder);
      g_mkdir_with_parents (f->jobs, 0777);

      counter = test_counter_open (f->folder, 2, -1);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
      before = test_warning_count ();
      test_write_file (f->info, deep);
      tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
      g_assert_no_error (error);
      g_assert_cmpuint (test_warning_count (), >, before);
      /* The last good capacity stays. */
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
      test_drop_resource (&counter);
      test_remove_tree (f->folder);
      g_mkdir_with_parents (f->jobs, 0777);
    }
}

/* A lock file json-glib would read, but that is not strict JSON (a
 * comment, single quotes): not read, so it holds everything, whatever
 * amount it seems to name. */
static void
test_not_strict_json (Fixture *f, gconstpointer data)
{
  const char *cases[] = {
    "{\"job_uri\": \"/x\", /* mine */ \"information\": {\"count\": 1}}",
    "{'job_uri': '/x', 'information': {'count': 1}}",
    "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}} /* ok */",
    "{\"job_uri\": \"/x\", \"information\": {\"count\": 01}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %u: %s", i, cases[i]);
      check_not_json (f, cases[i]);
      test_remove_tree (f->jobs);
      g_mkdir_with_parents (f->jobs, 0777);
    }
}

/* Opens of @name in @folder reported by @fd (IN_OPEN) so far. */
static guint
count_opens (int fd, const char *name)
{
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  guint opens = 0;
  ssize_t n;

  while ((n = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + n;)
      {
        struct inotify_event *ev = (struct inotify_event *) p;
        if ((ev->mask & IN_OPEN) && ev->len > 0 && g_str_equal (ev->name, name))
          opens++;
        p += sizeof (struct inotify_event) + ev->len;
      }
  return opens;
}

/* JSON that is not a lock file is read once per change: not retried
 * under ipc.lock (a hundred of them cost every status six seconds) nor
 * read again to be judged. (A change within its clock tick is read again
 * once the tick is over: this one is older.) */
static void
test_not_a_lock_file_read_once (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->jobs, "list@1.json", NULL);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GError) error = NULL;
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  struct stat st;

  g_assert_cmpint (fd, >=, 0);
  test_write_file (path, "[1]");
  /* Past the tick: 2 s where times are in whole seconds, 50 ms else. */
  g_assert_cmpint (stat (path, &st), ==, 0);
  g_usleep (st.st_mtim.tv_nsec == 0 ? 2100 * 1000 : 200 * 1000);
  /* Closes too: inotify merges identical events that follow each other. */
  g_assert_cmpint (inotify_add_watch (fd, f->jobs, IN_OPEN | IN_CLOSE_NOWRITE), >=, 0);
  counter = test_counter_open (f->folder, 2, -1);
  g_assert_cmpuint (count_opens (fd, "list@1.json"), ==, 1);
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_opens (fd, "list@1.json"), ==, 0);
  close (fd);
}

/* The process spec of this test process, as Tessera writes it: a holder
 * whose liveness is sure (pid and start time). */
static char *
live_spec (void)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) spec = tessera_process_to_json (self);

  return json_to_string (spec, FALSE);
}

/* A count json-glib reads but that is no count (a number it cannot
 * represent, or one Tessera cannot: too large, negative, not whole, not
 * a number) in the lock file of a live holder: it holds the whole
 * resource, and no sweep removes it, however old. */
static void
test_count_unreadable (Fixture *f, gconstpointer data)
{
  const char *counts[] = { "1e308", "1e400", "1e20", "-1e400", "99999999999999999999", "18446744073709551615",
                           "9223372036854775808", "-1", "1.5", "\"3\"", "[1]" };
  g_autofree char *spec = live_spec ();
  g_autofree char *path = g_build_filename (f->jobs, "bad@1.json", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (counts); i++)
    {
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/job\", \"information\": {\"count\": %s}, "
                                               "\"process\": %s}", f->tmp, counts[i], spec);
      g_autoptr(TestCounter) counter = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("count %s", counts[i]);
      test_write_file (path, text);
      test_set_file_age (path, 3600);
      counter = test_counter_open (f->folder, 2, -1);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);
      tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0);
      tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
      g_assert_no_error (error);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_clear_pointer (&counter, g_object_unref);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
}

/* A lock file whose whole "process" member is a number JSON cannot carry
 * (1e400): the salvage makes it null, which must not pass for no process
 * at all (a holder then judged by its job lock alone, here free): who
 * holds is not known, so it counts, and no sweep removes it, however old. */
static void
test_process_unreadable (Fixture *f, gconstpointer data)
{
  const char *processes[] = { "1e400", "-1e400" };
  g_autofree char *path = g_build_filename (f->jobs, "bad@1.json", NULL);
  g_autofree char *job_lock = g_build_filename (f->tmp, "job.lock", NULL);

  /* Its job lock there and free: a holder with no process would be gone. */
  test_write_file (job_lock, "");

  for (guint i = 0; i < G_N_ELEMENTS (processes); i++)
    {
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
                                               "\"process\": %s}", f->tmp, processes[i]);
      g_autoptr(TestCounter) counter = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("process %s", processes[i]);
      test_write_file (path, text);
      test_set_file_age (path, 3600);
      counter = test_counter_open (f->folder, 2, -1);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), <, 2);
      tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0);
      tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
      g_assert_no_error (error);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), <, 2);
      g_clear_pointer (&counter, g_object_unref);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
}

/* Makes a FIFO, a socket, a device or a folder at @path. */
static void
make_not_a_file (const char *kind, const char *path)
{
  if (g_str_equal (kind, "fifo"))
    g_assert_cmpint (mkfifo (path, 0644), ==, 0);
  else if (g_str_equal (kind, "folder"))
    g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
  else if (g_str_equal (kind, "device"))
    /* /dev/null's numbers (root only: the test fails without it). */
    g_assert_cmpint (mknod (path, S_IFCHR | 0644, makedev (1, 3)), ==, 0);
  else
    {
      struct sockaddr_un address = { .sun_family = AF_UNIX };
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpuint (strlen (path), <, sizeof address.sun_path);
      strcpy (address.sun_path, path);
      g_assert_cmpint (bind (fd, (struct sockaddr *) &address, sizeof address), ==, 0);
      close (fd);
    }
}

/* A FIFO, a socket, a device or a folder named like a lock file cannot be
 * read: it holds the whole resource until it is gone (and nothing blocks
 * on it). */
static void
test_not_a_file (Fixture *f, gconstpointer data)
{
  const char *kinds[] = { "fifo", "socket", "device", "folder" };

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *name = g_strdup_printf ("%s@1.json", kinds[i]);
      g_autofree char *path = g_build_filename (f->jobs, name, NULL);
      g_autoptr(TestCounter) counter = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", kinds[i]);
      make_not_a_file (kinds[i], path);
      counter = test_counter_open (f->folder, 2, -1);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);
      tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0);
      tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
      g_assert_no_error (error);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      /* Gone, it holds nothing: the next look sees it. */
      if (g_str_equal (kinds[i], "folder"))
        g_assert_cmpint (g_rmdir (path), ==, 0);
      else
        g_assert_cmpint (g_unlink (path), ==, 0);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
    }
}

static void
test_wrong_types (Fixture *f, gconstpointer data)
{
  const char *cases[] = {
    "[1, 2, 3]",
    "{\"job_uri\": 42, \"information\": {\"count\": 1}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %u: %s", i, cases[i]);
      /* JSON of another shape names no holder: it counts for nothing. */
      check_bad_lock_file (f, cases[i], 2);
      test_remove_tree (f->jobs);
      g_mkdir_with_parents (f->jobs, 0777);
    }
}

/* A file that names a job counts whatever else in it cannot be
 * understood: its declared amount when readable, else everything. */
static void
test_names_a_job (Fixture *f, gconstpointer data)
{
  struct { const char *content; int grantable; } cases[] = {
    { "{\"job_uri\": \"/x\", \"information\": \"three\"}", 0 },
    { "{\"job_uri\": \"/x\", \"information\": {\"count\": -4}}", 0 },
    { "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}, \"process\": {\"pid\": \"nope\"}}", 1 },
    { "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}, \"process\": {\"type\": \"slurm\", \"pid\": 3}}", 1 },
    { "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}, \"process\": 17}", 1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_build_filename (f->jobs, "bad@1.json", NULL);
      g_autoptr(TestCounter) counter = NULL;

      g_test_message ("case %u: %s", i, cases[i].content);
      test_write_file (path, cases[i].content);
      counter = test_counter_open (f->folder, 2, -1);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, cases[i].grantable);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      test_remove_tree (f->jobs);
      g_mkdir_with_parents (f->jobs, 0777);
    }
}

/* A file without job_uri is invalid, counts nothing, and is no warning. */
static void
test_no_job_uri (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->jobs, "anon@1.json", NULL);
  g_autoptr(TestCounter) counter = NULL;

  test_write_file (path, "{\"information\": {\"count\": 1}}");
  counter = test_counter_open (f->folder, 1, -1);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 1);
}

static void
test_informations_missing (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, -1);
  g_autoptr(JsonNode) two = json_from_string ("{\"total\": 2}", NULL);
  g_autoptr(GError) error = NULL;

  /* Unknown capacity: nothing is granted, nothing crashes. */
  g_assert_cmpint (test_counter_get_total (counter), ==, 0);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);
  g_assert_true (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), two, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
}

static void
test_informations_garbage (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(JsonNode) bad = json_from_string ("{\"total\": \"many\"}", NULL);
  g_autoptr(GError) error = NULL;
  guint before = test_warning_count ();

  test_write_file (f->info, "garbage{");
  counter = test_counter_open (f->folder, 5, -1);   /* the file exists: the 5 is not written */
  g_assert_cmpuint (test_warning_count (), >, before);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 0);

  test_write_file (f->info, "{\"total\": 2}");
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);

  /* Garbage or a wrong type later: the last good capacity stays. */
  before = test_warning_count ();
  test_write_file (f->info, "{\"total\": 2");
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
  test_write_file (f->info, "{\"total\": [3]}");
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
  g_assert_cmpuint (test_warning_count (), >=, before + 2);

  /* Writing a wrong shape through the API is refused before the disk. */
  g_assert_false (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), bad, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION);
}

/* jobs/ replaced by a symbolic link to a folder of the victim's: nothing
 * there is ever deleted (here a lock file whose holder is dead, which in
 * the real jobs/ would go), and acquiring fails with a clear error rather
 * than counting through the link. */
static void
test_symlink_jobs_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *victim = g_build_filename (f->tmp, "victim", NULL);
  g_autofree char *precious = g_build_filename (victim, "dead@1.json", NULL);
  g_autofree char *real = g_build_filename (f->folder, "jobs-real", NULL);
  g_autofree char *json = NULL;
  g_autoptr(GSubprocess) gone = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;

  /* A pid that surely ended: a child we reaped. */
  gone = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "true", NULL);
  g_assert_no_error (error);
  json = g_strdup_printf ("{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
                          "\"process\": {\"type\": \"local\", \"pid\": %s}}",
                          victim, g_subprocess_get_identifier (gone));
  g_subprocess_wait (gone, NULL, &error);
  g_assert_no_error (error);
  test_write_file (precious, json);
  counter = test_counter_open (f->folder, 2, -1);
  g_assert_cmpint (g_rename (f->jobs, real), ==, 0);
  g_assert_cmpint (symlink (victim, f->jobs), ==, 0);

  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), NULL);
  job = test_job_new (f->tmp, "probe", "a");
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_true (g_file_test (precious, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (test_count_entries (victim), ==, 1);
  g_assert_null (lock);
  g_assert_nonnull (error);
  g_assert_false (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT));
}

static void
test_symlink_lock_file (Fixture *f, gconstpointer data)
{
  g_autofree char *outside = g_build_filename (f->tmp, "outside.json", NULL);
  g_autofree char *link = g_build_filename (f->jobs, "evil@1.json", NULL);
  g_autofree char *mine = g_build_filename (f->jobs, "probe@mine.json", NULL);
  g_autofree char *outside_after = NULL;
  const char *outside_content = "{\"job_uri\": \"/x\", \"information\": {\"count\": 1}}";
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  guint before = test_warning_count ();

  test_write_file (outside, outside_content);
  g_assert_cmpint (symlink (outside, link), ==, 0);
  counter = test_counter_open (f->folder, 1, -1);
  g_assert_cmpuint (test_warning_count (), >, before);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 1);   /* the link is not a holder */

  /* Our own lock file's name is a symlink: it is replaced, not written through. */
  g_assert_cmpint (symlink (outside, mine), ==, 0);
  job = test_job_new (f->tmp, "probe", "mine");
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (g_file_test (mine, G_FILE_TEST_IS_SYMLINK));
  g_assert_true (g_file_get_contents (outside, &outside_after, NULL, NULL));
  g_assert_cmpstr (outside_after, ==, outside_content);
}

static void
test_symlink_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *outside = g_build_filename (f->tmp, "elsewhere", NULL);
  g_autofree char *ipc = g_build_filename (f->folder, "ipc.lock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = NULL;

  g_assert_cmpint (symlink (outside, ipc), ==, 0);
  counter = test_counter_new (f->folder, 1, &error);
  g_assert_null (counter);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS);
  g_assert_false (g_file_test (outside, G_FILE_TEST_EXISTS));
}

static void
test_hostile_names (Fixture *f, gconstpointer data)
{
  const char *bad[] = { "../evil", "a/b", "..", "x..y", "", "tab\there" };
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, 2, -1);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraJob) job = tessera_job_new (bad[i], "id", "/tmp/job/x", &error);
      g_assert_null (job);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
      g_clear_error (&error);
      job = tessera_job_new ("task", bad[i], "/tmp/job/x", &error);
      g_assert_null (job);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
    }
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TesseraJob) job = tessera_job_new ("task", "id", "relative/path", &error);
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  }

  /* A job built behind tessera_job_new's back is still refused. */
  {
    g_autofree char *uri = g_build_filename (f->tmp, "job", "x", NULL);
    g_autoptr(TesseraJob) job = g_object_new (TESSERA_TYPE_JOB, "task-id", "../../escape",
                                              "identifier", "1", "job-uri", uri, NULL);
    g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
    g_autoptr(GError) error = NULL;
    g_autofree char *escaped = g_build_filename (f->tmp, "escape@1.json", NULL);

    g_assert_null (tessera_dynamic_dependency_lock (dep, 0, NULL, &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
    g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
  }
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 2);
}

/* A job whose lock file name a folder cannot hold (with its temporary,
 * TASK@ID.json.XXXXXX, at most 255 bytes) or that another job's names
 * would also make (`a@b` + `c`, `a` + `b@c`) is refused when it is made,
 * not at its first acquire. */
static void
test_names_a_folder_cannot_hold (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, 2, -1);
  g_autofree char *uri = g_build_filename (f->tmp, "job", "x", NULL);
  g_autofree char *long_task = g_strnfill (200, 't');
  g_autofree char *long_id = g_strnfill (60, 'i');
  g_autofree char *fit_task = g_strnfill (100, 't');
  g_autofree char *fit_id = g_strnfill (255 - 7 - 5 - 1 - 100, 'i');
  g_autofree char *over_id = g_strconcat (fit_id, "i", NULL);
  g_autofree char *long_base = g_strnfill (250, 'j');
  g_autofree char *long_uri = g_build_filename (f->tmp, "job", long_base, NULL);
  g_autofree char *fit_name = g_strdup_printf ("%s@%s.json", fit_task, fit_id);
  g_autofree char *fit_path = g_build_filename (f->jobs, fit_name, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;

  g_assert_null (tessera_job_new (long_task, long_id, uri, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  g_clear_error (&error);
  g_assert_null (tessera_job_new (fit_task, over_id, uri, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  g_clear_error (&error);
  g_assert_null (tessera_job_new ("task", "id", long_uri, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  g_clear_error (&error);
  g_assert_null (tessera_job_new ("a@b", "c", uri, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  g_clear_error (&error);
  job = tessera_job_new ("a", "b@c", uri, &error);
  g_assert_no_error (error);
  g_clear_object (&job);
  /* Built behind tessera_job_new's back, it is refused at the acquire. */
  {
    g_autoptr(TesseraJob) other = g_object_new (TESSERA_TYPE_JOB, "task-id", "a@b", "identifier", "c",
                                                "job-uri", uri, NULL);
    g_autoptr(TesseraDynamicDependency) other_dep = test_counter_dependency_new (counter, other, 1);

    g_assert_null (tessera_dynamic_dependency_lock (other_dep, 0, NULL, &error));
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
    g_clear_error (&error);
  }
  /* <job_uri>.lock is made in place: 255 bytes fit. */
  {
    g_autofree char *stem = g_strnfill (255 - 5, 'j');
    g_autofree char *lock_uri = g_build_filename (f->tmp, "job", stem, NULL);
    g_autoptr(TesseraJob) fits = tessera_job_new ("task", "id", lock_uri, &error);

    g_assert_null (fits);   /* its .pid and temporary would not */
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
    g_clear_error (&error);
  }
  {
    g_autofree char *stem = g_strnfill (255 - 7 - 4, 'j');
    g_autofree char *lock_uri = g_build_filename (f->tmp, "job", stem, NULL);
    g_autoptr(TesseraJob) fits = tessera_job_new ("task", "id", lock_uri, &error);

    g_assert_no_error (error);
    g_assert_nonnull (fits);
  }

  /* The longest names accepted make a lock file. */
  job = tessera_job_new (fit_task, fit_id, uri, &error);
  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lock);
  g_assert_true (g_file_test (fit_path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 5), ==, 1);
}

static void
test_broken_locks_json (Fixture *f, gconstpointer data)
{
  const char *cases[] = {
    "{not json",
    "{\"dynamic_locks\": 3}",
    "{\"dynamic_locks\": [{\"module\": \"tessera\", \"class\": \"DynamicDependencyLock\", \"lock_file_path\": 5}]}",
  };
  g_autofree char *path = g_build_filename (f->tmp, "locks.json", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraJobDependencyLocks) locks = NULL;

      test_write_file (path, cases[i]);
      locks = tessera_job_dependency_locks_load (path, &error);
      g_assert_null (locks);
      g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
    }
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *missing = g_build_filename (f->tmp, "nope.json", NULL);
    g_assert_null (tessera_job_dependency_locks_load (missing, &error));
    g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  }
  {
    /* A hostile module name is refused as a name, never used as a path. */
    g_autoptr(GError) error = NULL;
    g_assert_cmpuint (tessera_dynamic_dependency_lock_lookup_class ("/usr/lib/evil", "X", &error), ==, G_TYPE_INVALID);
    g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME);
  }
}

static void
lock_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GError **error = data;
  TesseraDynamicDependencyLock *lock =
    tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, error);

  g_assert_null (lock);
  g_assert_nonnull (*error);
}

/* A resource opened read-only refuses to acquire or write with a GError
 * ("opened read-only"), blocking and asynchronously (the callback runs):
 * not a critical and NULL without an error, nor a callback never called. */
static void
test_read_only_refuses (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) writer = test_counter_open (f->folder, 2, -1);   /* sets the pool up */
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraCounterResource) resource =
    g_initable_new (TESSERA_TYPE_COUNTER_RESOURCE, NULL, &error, "name", "token", "lock-folder", f->folder,
                    "read-only", TRUE, NULL);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "reader", "1");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(JsonNode) informations = tessera_json_parse ("{\"total\": 3}", -1, NULL);
  TesseraDynamicDependencyLock *lock;
  GError *async_error = NULL;

  g_assert_no_error (error);
  lock = tessera_dynamic_resource_take (TESSERA_DYNAMIC_RESOURCE (resource), "1", 0, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "read-only"));
  g_clear_error (&error);

  dep = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (resource), job, "1", &error);
  g_assert_no_error (error);
  tessera_dynamic_dependency_lock_async (dep, 5, NULL, lock_done, &async_error);
  while (async_error == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (async_error, TESSERA_ERROR, TESSERA_ERROR_FAILED);
  g_clear_error (&async_error);

  g_assert_false (tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource),
                                                                        informations, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED);
  g_assert_cmpint (test_counter_get_total (writer), ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/bad-input/read-only-refuses-with-an-error", test_read_only_refuses);
  ADD ("/bad-input/deep-json", test_deep_json);
  ADD ("/bad-input/not-a-lock-file-read-once", test_not_a_lock_file_read_once);
  ADD ("/bad-input/lock-file/truncated", test_truncated);
  ADD ("/bad-input/lock-file/not-json", test_not_json);
  ADD ("/bad-input/lock-file/empty", test_empty);
  ADD ("/bad-input/lock-file/not-strict-json", test_not_strict_json);
  ADD ("/bad-input/lock-file/wrong-types", test_wrong_types);
  ADD ("/bad-input/lock-file/names-a-job-counts", test_names_a_job);
  ADD ("/bad-input/lock-file/no-job-uri", test_no_job_uri);
  ADD ("/bad-input/lock-file/count-unreadable-holds-all", test_count_unreadable);
  ADD ("/bad-input/lock-file/process-unreadable-holds", test_process_unreadable);
  ADD ("/bad-input/lock-file/not-a-file-holds-all", test_not_a_file);
  ADD ("/bad-input/informations/missing", test_informations_missing);
  ADD ("/bad-input/informations/garbage", test_informations_garbage);
  ADD ("/bad-input/symlink/lock-file", test_symlink_lock_file);
  ADD ("/bad-input/symlink/ipc-lock", test_symlink_ipc_lock);
  ADD ("/bad-input/symlink/jobs-folder", test_symlink_jobs_folder);
  ADD ("/bad-input/hostile-names", test_hostile_names);
  ADD ("/bad-input/names-a-folder-cannot-hold", test_names_a_folder_cannot_hold);
  ADD ("/bad-input/locks-json", test_broken_locks_json);
  return g_test_run ();
}
