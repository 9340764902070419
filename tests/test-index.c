/* test-index.c: the lock file index a fresh process starts from (issue 16,
 * item 2): missing, stale, corrupt, hostile, and changed behind its back
 * by Tessera and by an experimaestro peer. Every check runs fresh
 * `tessera` processes (a read-only `status --json`, then `run --no-wait`
 * at the limit and one past it) and asserts that what they count is the
 * truth the test keeps.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY 1000
#define HOLDERS 60
#define EXIT_TEMPFAIL 75
/* How long an index may take to take in a new file: the file's times must
 * be older than its file system's clock tick (two seconds on ext2). */
#define COVER_TIMEOUT_S 120

typedef struct
{
  char *tmp;
  char *pool;
  char *jobs;
  char *state;
  char *cache;
  char *index_dir;      /* cache/tessera/lock-file-index */
  char *config;
  char *peer_job_uri;   /* the job of every holder the Python peer writes */
  int peer_job_lock;    /* its job lock, held by this process: they run */
  GHashTable *truth;    /* lock file name → its count */
} Fixture;

/* The experimaestro side (its locking.py): under ipc.lock (flock, then
 * lockf), writes lock files in place ("wt": same inode, truncated, then
 * written) and deletes them. Operations "add:NAME:N", "rewrite:NAME:N"
 * (same size), "rewrite-keep-mtime:NAME:N" (same size, mtime put back as
 * it was), "remove:NAME". */
static const char python_peer_script[] =
  "import fcntl, json, os, sys\n"
  "folder, pid, job_uri = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
  "jobs = os.path.join(folder, 'jobs')\n"
  "with open(os.path.join(folder, 'ipc.lock'), 'a+') as ipc:\n"
  "    fcntl.flock(ipc, fcntl.LOCK_EX)\n"
  "    fcntl.lockf(ipc, fcntl.LOCK_EX)\n"
  "    for op in sys.argv[4:]:\n"
  "        kind, name, *rest = op.split(':')\n"
  "        path = os.path.join(jobs, name)\n"
  "        if kind == 'remove':\n"
  "            os.unlink(path)\n"
  "            continue\n"
  "        before = os.stat(path) if kind != 'add' else None\n"
  "        with open(path, 'wt') as fp:\n"
  "            json.dump({'job_uri': job_uri, 'information': {'count': int(rest[0])},\n"
  "                       'process': {'type': 'local', 'pid': pid}}, fp)\n"
  "        if before is not None:\n"
  "            after = os.stat(path)\n"
  "            assert after.st_ino == before.st_ino and after.st_size == before.st_size, op\n"
  "            if kind == 'rewrite-keep-mtime':\n"
  "                os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))\n"
  "    fcntl.lockf(ipc, fcntl.LOCK_UN)\n"
  "    fcntl.flock(ipc, fcntl.LOCK_UN)\n";

static guint64
self_start_time (void)
{
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;
  const char *end;

  g_assert_true (g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL));
  end = strrchr (stat, ')');
  if (end == NULL)   /* not g_assert_nonnull: cppcheck follows g_error */
    g_error ("/proc/self/stat has no ')'");
  fields = g_strsplit (end + 2, " ", -1);
  /* Field 22 of the line; the split starts at field 3. */
  g_assert_cmpuint (g_strv_length (fields), >, 19);
  return g_ascii_strtoull (fields[19], NULL, 10);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *info = NULL;
  g_autofree char *config = NULL;
  g_autofree char *peer_dir = NULL;
  g_autofree char *lock_path = NULL;

  f->tmp = test_make_tmpdir ();
  f->pool = g_build_filename (f->tmp, "pool", NULL);
  f->jobs = g_build_filename (f->pool, "jobs", NULL);
  f->state = g_build_filename (f->tmp, "state", NULL);
  f->cache = g_build_filename (f->tmp, "cache", NULL);
  f->index_dir = g_build_filename (f->cache, "tessera", "lock-file-index", NULL);
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  g_assert_cmpint (g_mkdir_with_parents (f->jobs, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (f->state, 0700), ==, 0);
  info = g_build_filename (f->pool, "informations.json", NULL);
  test_write_file (info, "{\"total\": " G_STRINGIFY (CAPACITY) "}");
  config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=%d\n", f->pool, CAPACITY);
  test_write_file (f->config, config);

  peer_dir = g_build_filename (f->tmp, "peer-jobs", NULL);
  g_assert_cmpint (g_mkdir_with_parents (peer_dir, 0755), ==, 0);
  f->peer_job_uri = g_build_filename (peer_dir, "job", NULL);
  lock_path = g_strconcat (f->peer_job_uri, ".lock", NULL);
  f->peer_job_lock = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  g_assert_cmpint (f->peer_job_lock, >=, 0);
  g_assert_cmpint (flock (f->peer_job_lock, LOCK_EX), ==, 0);
  f->truth = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  close (f->peer_job_lock);
  test_remove_tree (f->tmp);
  g_hash_table_unref (f->truth);
  g_free (f->tmp);
  g_free (f->pool);
  g_free (f->jobs);
  g_free (f->state);
  g_free (f->cache);
  g_free (f->index_dir);
  g_free (f->config);
  g_free (f->peer_job_uri);
}

/* ---------------------------------------------------------------------- */
/* The pool, as Tessera and the Python peer change it */

/* Written like Tessera (temporary file + rename: a new inode), held by
 * this process (pid and start time: alive). */
static void
write_holder (Fixture *f, const char *name, guint count)
{
  static guint64 start_time;
  g_autofree char *path = g_build_filename (f->jobs, name, NULL);
  g_autofree char *job_uri = g_build_filename (f->tmp, "jobs", name, NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  if (start_time == 0)
    start_time = self_start_time ();
  text = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": %u}, "
                          "\"process\": {\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}}",
                          job_uri, count, (int) getpid (), start_time);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  g_hash_table_insert (f->truth, g_strdup (name), GUINT_TO_POINTER (count));
}

static void
remove_holder (Fixture *f, const char *name)
{
  g_autofree char *path = g_build_filename (f->jobs, name, NULL);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_hash_table_remove (f->truth, name);
}

/* Runs the Python peer's operations (NULL-terminated) in one process. */
static void
python_peer (Fixture *f, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  const char *op;
  va_list ap;
  int status;

  g_ptr_array_add (argv, g_strdup (test_python ()));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (python_peer_script));
  g_ptr_array_add (argv, g_strdup (f->pool));
  g_ptr_array_add (argv, g_strdup_printf ("%d", (int) getpid ()));
  g_ptr_array_add (argv, g_strdup (f->peer_job_uri));
  va_start (ap, f);
  while ((op = va_arg (ap, const char *)) != NULL)
    {
      g_auto(GStrv) parts = g_strsplit (op, ":", 3);
      g_ptr_array_add (argv, g_strdup (op));
      if (strcmp (parts[0], "remove") == 0)
        g_hash_table_remove (f->truth, parts[1]);
      else
        g_hash_table_insert (f->truth, g_strdup (parts[1]),
                             GUINT_TO_POINTER ((guint) g_ascii_strtoull (parts[2], NULL, 10)));
    }
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  if (status != 0)
    g_test_message ("python peer: %.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 0);
}

static guint
truth (Fixture *f)
{
  GHashTableIter iter;
  gpointer value;
  guint used = 0;

  g_hash_table_iter_init (&iter, f->truth);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    used += GPOINTER_TO_UINT (value);
  return used;
}

/* ---------------------------------------------------------------------- */
/* Fresh processes */

/* `tessera` with the test's configuration, state and cache; returns its
 * exit status, its error output in @err (debug messages included). */
static int
run_tessera (Fixture *f, char **out_text, char **err_text, const char *first, ...)
{
  g_autofree char *cache = g_strdup_printf ("XDG_CACHE_HOME=%s", f->cache);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  va_list ap;
  int status;

  va_start (ap, first);
  status = test_run_tessera_va (f->state, f->config, (const char *[]) { cache, "G_MESSAGES_DEBUG=Tessera", NULL },
                                &out, &err, first, ap);
  va_end (ap);
  {
    /* GLib prints debug messages on the standard output: they go with the
     * error output here, the rest is the command's. */
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
    GString *own = g_string_new (NULL);
    GString *messages = g_string_new (err);

    for (guint i = 0; lines[i] != NULL; i++)
      g_string_append_printf (g_str_has_prefix (lines[i], "(tessera") ? messages : own, "%s\n", lines[i]);
    if (out_text != NULL)
      *out_text = g_string_free (own, FALSE);
    else
      g_string_free (own, TRUE);
    if (err_text != NULL)
      *err_text = g_string_free (messages, FALSE);
    else
      g_string_free (messages, TRUE);
  }
  return status;
}

/* How many lock files a fresh process took from the index (-1: it had
 * none), from its debug message. */
static int
index_hits (const char *err_text)
{
  const char *line = strstr (err_text, "Lock file index ");
  const char *colon;

  if (line == NULL)
    return -1;
  colon = strstr (line, ": ");
  if (colon == NULL)
    g_error ("no ': ' in %s", line);
  return (int) g_ascii_strtoll (colon + 2, NULL, 10);
}

/* How many holder objects a fresh process built from jobs/ (-1: it does
 * not say), from its debug message. */
static int
holders_built (const char *err_text)
{
  const char *figure = strstr (err_text, "holders built: ");

  return figure != NULL ? (int) g_ascii_strtoll (figure + strlen ("holders built: "), NULL, 10) : -1;
}

/* What a fresh read-only `status` counts as used; @hits: what it took
 * from the index. */
static guint
status_used (Fixture *f, int *hits)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *resource;
  gint64 capacity, free_;

  if (run_tessera (f, &out, &err, "status", "--json", NULL) != 0)
    g_error ("status failed: %s", err);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  resource = test_status_first_resource (json_parser_get_root (parser));
  capacity = json_object_get_int_member (resource, "capacity");
  free_ = json_object_get_int_member (resource, "free");
  g_assert_cmpint (capacity, ==, CAPACITY);
  if (hits != NULL)
    *hits = index_hits (err);
  return (guint) (capacity - free_);
}

static int
run_no_wait (Fixture *f, guint request)
{
  g_autofree char *need = g_strdup_printf ("r=%u", request);
  g_autofree char *err = NULL;
  int status = run_tessera (f, NULL, &err, "run", "--no-wait", "--need", need, "--", "true", NULL);

  if (status != 0 && status != EXIT_TEMPFAIL)
    g_error ("run --need %s: exit %d: %s", need, status, err);
  return status;
}

/* A fresh `run --no-wait --need r=@request` granted at once; returns how
 * many holder objects it built from jobs/. */
static int
run_granted_built (Fixture *f, guint request)
{
  g_autofree char *need = g_strdup_printf ("r=%u", request);
  g_autofree char *err = NULL;
  int status = run_tessera (f, NULL, &err, "run", "--no-wait", "--need", need, "--", "true", NULL);

  if (status != 0)
    g_error ("run --need %s: exit %d: %s", need, status, err);
  return holders_built (err);
}

/* Fresh processes count the truth: a read-only status, then an acquire
 * of all that is free (granted) and of one more (refused). */
static void
assert_counts_truth (Fixture *f)
{
  guint used = truth (f);

  g_assert_cmpuint (status_used (f, NULL), ==, used);
  g_assert_cmpint (run_no_wait (f, CAPACITY - used), ==, 0);
  g_assert_cmpint (run_no_wait (f, CAPACITY - used + 1), ==, EXIT_TEMPFAIL);
}

/* Fresh `run`s until a fresh status takes every lock file from the index
 * (a file enters it once its times are older than a clock tick of its
 * file system): a wait for a condition, bounded generously. */
typedef struct
{
  Fixture *f;
  int hits;
} Coverage;

static gboolean
index_covers_all (gpointer data)
{
  Coverage *c = data;

  g_assert_cmpint (run_no_wait (c->f, 1), ==, 0);
  g_assert_cmpuint (status_used (c->f, &c->hits), ==, truth (c->f));
  return c->hits == (int) g_hash_table_size (c->f->truth);
}

static void
wait_index_covers_all (Fixture *f)
{
  Coverage c = { f, -1 };

  if (!test_poll_until (index_covers_all, &c, COVER_TIMEOUT_S))
    g_error ("after %d s the index holds %d of %u lock files", COVER_TIMEOUT_S, c.hits,
             g_hash_table_size (f->truth));
}

static char *
index_path (Fixture *f)
{
  g_autoptr(GDir) dir = g_dir_open (f->index_dir, 0, NULL);
  const char *name;
  char *found = NULL;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (name[0] == '.')
        continue;   /* a writer's temporary */
      g_assert_null (found);
      found = g_build_filename (f->index_dir, name, NULL);
    }
  g_assert_nonnull (found);
  return found;
}

/* A regular file of ours, 0600, in a folder of ours, 0700. */
static void
assert_index_sound (Fixture *f)
{
  g_autofree char *path = index_path (f);
  struct stat st;

  g_assert_cmpint (lstat (f->index_dir, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
  g_assert_cmpuint (st.st_mode & 07777, ==, 0700);
  g_assert_cmpint (lstat (path, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
  g_assert_cmpuint (st.st_mode & 07777, ==, 0600);
}

static void
add_holders (Fixture *f, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("holder@%u.json", i);
      write_holder (f, name, 1);
    }
}

/* ---------------------------------------------------------------------- */
/* The index's own format, to forge one (see tessera-lock-file-index.c):
 * the same hash over all but its last 8 bytes, which hold it. */

static guint64
index_hash (const guint8 *data, gsize length)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  gsize i = 0;

  for (; i + 8 <= length; i += 8)
    {
      guint64 word;
      memcpy (&word, data + i, 8);
      h = (h ^ word) * G_GUINT64_CONSTANT (0x100000001b3);
      h ^= h >> 29;
    }
  for (; i < length; i++)
    h = (h ^ data[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  return h;
}

/* The index with every recorded "count": 1 made "count": 0 (in each text
 * and in its accounting summary), hash and all:
 * what a co-user would plant to take capacity that is not free. Returns
 * how many records it changed. */
static guint
forge_index (Fixture *f, const char *dest)
{
  g_autofree char *path = index_path (f);
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  guint changed = 0;
  guint64 sum;
  gsize length;

  g_file_get_contents (path, &data, &length, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (length, >, 8);
  /* memmem: the index holds NULs. */
  for (char *p = data; (p = memmem (p, data + length - 8 - p, "\"count\": 1", 10)) != NULL; p++)
    {
      p[9] = '0';
      changed++;
    }
  /* And the accounting recorded with each text (its "information" as
   * json-glib writes it), which a fresh run counts without parsing. */
  for (char *p = data; (p = memmem (p, data + length - 8 - p, "{\"count\":1}", 11)) != NULL; p++)
    p[9] = '0';
  sum = index_hash ((const guint8 *) data, length - 8);
  memcpy (data + length - 8, &sum, 8);
  g_file_set_contents_full (dest, data, length, G_FILE_SET_CONTENTS_NONE, 0600, &error);
  g_assert_no_error (error);
  return changed;
}

/* The names the index records, in its order (see the format in
 * tessera-lock-file-index.c: magic line, device, inode, pool path, then
 * records up to a zero name length). */
static GPtrArray *
index_names (Fixture *f)
{
  g_autofree char *path = index_path (f);
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *p, *end;
  guint32 n;
  gsize length;

  g_file_get_contents (path, &data, &length, &error);
  g_assert_no_error (error);
  p = memchr (data, '\n', length);
  if (p == NULL)
    g_error ("no magic line in %s", path);
  end = data + length - 8;
  p += 1 + 16;
  memcpy (&n, p, 4);
  p += 4 + n;
  for (;;)
    {
      guint32 text;

      g_assert_cmpint (end - p, >=, 4);
      memcpy (&n, p, 4);
      p += 4;
      if (n == 0)
        break;
      g_ptr_array_add (names, g_strdup (p));
      p += n + 4 * 8;
      memcpy (&text, p, 4);
      p += 4 + text;
      memcpy (&n, p, 4);
      p += 4 + n;
    }
  return names;
}

/* jobs/'s lock file names, in its readdir order. */
static GPtrArray *
jobs_names (Fixture *f)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  DIR *dir = opendir (f->jobs);
  struct dirent *d;

  g_assert_nonnull (dir);
  while ((d = readdir (dir)) != NULL)
    if (g_str_has_suffix (d->d_name, ".json"))
      g_ptr_array_add (names, g_strdup (d->d_name));
  closedir (dir);
  return names;
}

/* ---------------------------------------------------------------------- */
/* Tests */

/* No index: fresh processes read jobs/; status (read-only) makes none,
 * run does, private; the next fresh processes take every file from it. */
static void
test_missing (Fixture *f, gconstpointer data)
{
  int hits;

  add_holders (f, HOLDERS);
  g_assert_cmpuint (status_used (f, &hits), ==, truth (f));
  g_assert_false (g_file_test (f->index_dir, G_FILE_TEST_EXISTS));
  assert_counts_truth (f);
  wait_index_covers_all (f);
  assert_index_sound (f);

  /* Removed between two fresh processes: written again. */
  {
    g_autofree char *path = index_path (f);
    g_assert_cmpint (g_unlink (path), ==, 0);
  }
  assert_counts_truth (f);
  wait_index_covers_all (f);
}

/* The index keeps jobs/'s readdir order, in which the next fresh process
 * looks its names up (each decoded where the last one ended): also when
 * the process that rewrote it met some names in that order before one
 * that had changed, and the rest through its table. */
static void
test_order_kept (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) before = NULL;
  g_autoptr(GPtrArray) recorded = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  const char *middle;

  add_holders (f, HOLDERS);
  wait_index_covers_all (f);
  before = index_names (f);
  g_assert_cmpuint (before->len, ==, HOLDERS);
  /* One in the middle of the file's order changed (a new inode). */
  middle = g_ptr_array_index (before, HOLDERS / 2);
  write_holder (f, middle, 3);
  assert_counts_truth (f);
  wait_index_covers_all (f);
  recorded = index_names (f);
  listed = jobs_names (f);
  g_assert_cmpuint (recorded->len, ==, listed->len);
  for (guint i = 0; i < listed->len; i++)
    g_assert_cmpstr (g_ptr_array_index (recorded, i), ==, g_ptr_array_index (listed, i));
}

/* A waiting run keeps what it took from the index, and reads it again
 * when its wait ends (its table, the index it writes). The file shortened
 * in place meanwhile (a backup restored over it, `cp`, another host's
 * prune on a shared home) must not end it: it is granted and runs its
 * command once the capacity it waits for is let go. */
static void
test_shortened_while_waiting (Fixture *f, gconstpointer data)
{
  g_autofree char *cache = g_strdup_printf ("XDG_CACHE_HOME=%s", f->cache);
  g_autofree char *queue = g_build_filename (f->pool, "queue", NULL);
  g_autofree char *path = NULL;
  g_autofree char *waiting = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *need = g_strdup_printf ("r=%d", CAPACITY - HOLDERS + 1);

  add_holders (f, HOLDERS);
  wait_index_covers_all (f);
  path = index_path (f);
  /* One more than is free: it waits, every holder taken from the index. */
  test_argv_tessera_env (argv, f->state, f->config, (const char *[]) { cache, NULL });
  test_argv_end (argv, (const char *[]) { "run", "--need", need, "--", "true", NULL });
  run = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  waiting = test_wait_entry (queue, NULL, ".waiting", NULL, COVER_TIMEOUT_S);
  g_assert_cmpint (truncate (path, 0), ==, 0);
  remove_holder (f, "holder@0.json");
  g_subprocess_wait (run, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (run));
  g_assert_cmpint (g_subprocess_get_exit_status (run), ==, 0);
  assert_counts_truth (f);
}

/* Tessera peers change jobs/ (atomic writes: new inodes) between two
 * fresh processes: added, removed, replaced with the same size. */
static void
test_stale (Fixture *f, gconstpointer data)
{
  add_holders (f, HOLDERS);
  wait_index_covers_all (f);

  write_holder (f, "holder@1.json", 7);   /* same size, new inode */
  write_holder (f, "holder@2.json", 0);
  remove_holder (f, "holder@3.json");
  remove_holder (f, "holder@4.json");
  write_holder (f, "late@1.json", 5);
  assert_counts_truth (f);

  /* And all of them gone. */
  for (guint i = 0; i < HOLDERS; i++)
    {
      g_autofree char *name = g_strdup_printf ("holder@%u.json", i);
      if (g_hash_table_contains (f->truth, name))
        remove_holder (f, name);
    }
  assert_counts_truth (f);
}

/* The experimaestro peer adds, removes and rewrites lock files in place
 * (same inode, same size; once with its mtime put back) between two
 * fresh processes, and rewrites again at once, within the same second. */
static void
test_python_peer (Fixture *f, gconstpointer data)
{
  add_holders (f, HOLDERS);
  python_peer (f, "add:peer@1.json:1", "add:peer@2.json:1", "add:peer@3.json:1", "add:peer@4.json:1", NULL);
  wait_index_covers_all (f);

  python_peer (f, "add:peer@5.json:2", "remove:peer@1.json", "remove:holder@0.json",
               "rewrite:peer@2.json:3", "rewrite-keep-mtime:peer@3.json:4", NULL);
  assert_counts_truth (f);
  /* At once: the same files rewritten again, same size, likely within
   * their times' clock tick (certainly on one-second file systems). */
  python_peer (f, "rewrite:peer@2.json:5", "rewrite:peer@3.json:6", "rewrite:peer@5.json:1", NULL);
  assert_counts_truth (f);
  python_peer (f, "rewrite-keep-mtime:peer@2.json:8", "rewrite:peer@4.json:9", NULL);
  assert_counts_truth (f);

  /* Once all is old enough to be in the index again, in place once more. */
  wait_index_covers_all (f);
  python_peer (f, "rewrite-keep-mtime:peer@4.json:2", "remove:peer@5.json", NULL);
  assert_counts_truth (f);
}

/* A fresh run that is granted builds no holder object for a lock file the
 * index covers: it counts them from the index's accounting. Only what
 * changed behind its back (the Python peer rewrites in place, adds) is
 * read and built; a refusal (every holder judged) and status (every
 * holder shown) still count the truth. */
static void
test_lazy_holders (Fixture *f, gconstpointer data)
{
  add_holders (f, HOLDERS);
  python_peer (f, "add:peer@1.json:1", "add:peer@2.json:2", NULL);
  wait_index_covers_all (f);
  g_assert_cmpint (run_granted_built (f, 1), ==, 0);
  g_assert_cmpint (run_granted_built (f, CAPACITY - truth (f)), ==, 0);

  python_peer (f, "rewrite:peer@1.json:3", "add:peer@3.json:4", NULL);
  /* Read from jobs/ (at most: one may have been covered at once). */
  g_assert_cmpint (run_granted_built (f, 1), <=, 2);
  assert_counts_truth (f);
  wait_index_covers_all (f);
  g_assert_cmpint (run_granted_built (f, CAPACITY - truth (f)), ==, 0);
  g_assert_cmpint (run_no_wait (f, CAPACITY - truth (f) + 1), ==, EXIT_TEMPFAIL);
}

static gboolean
index_covers_mutex (gpointer data)
{
  Coverage *c = data;
  g_autofree char *err = NULL;

  g_assert_cmpint (run_tessera (c->f, NULL, &err, "run", "--no-wait", "--need", "m=1", "--", "true", NULL), ==,
                   EXIT_TEMPFAIL);
  c->hits = index_hits (err);
  return c->hits == HOLDERS;
}

/* Another type counts through its stand-ins too: a fresh run that takes
 * a mutex's shared holders (alive) from the index refuses an exclusive
 * request, as one that reads them does. */
static void
test_lazy_mutex (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->tmp, "mutex", NULL);
  g_autofree char *jobs = g_build_filename (pool, "jobs", NULL);
  g_autofree char *config = g_strdup_printf ("[resource m]\ntype=mutex\npath=%s\n", pool);
  guint64 start_time = self_start_time ();
  Coverage c = { f, -1 };

  g_assert_cmpint (g_mkdir_with_parents (jobs, 0755), ==, 0);
  test_write_file (f->config, config);
  for (guint i = 0; i < HOLDERS; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/shared@%u.json", jobs, i);
      g_autofree char *text =
        g_strdup_printf ("{\"job_uri\": \"%s/jobs/shared%u\", \"information\": {\"mode\": \"shared\"}, "
                         "\"process\": {\"type\": \"local\", \"pid\": %d, \"start_time\": %" G_GUINT64_FORMAT "}}",
                         f->tmp, i, (int) getpid (), start_time);
      test_write_file (path, text);
    }
  /* Until a fresh run takes every holder from the index: refused each time. */
  if (!test_poll_until (index_covers_mutex, &c, COVER_TIMEOUT_S))
    g_error ("after %d s the index holds %d of %u lock files", COVER_TIMEOUT_S, c.hits, HOLDERS);
}

/* A damaged index (truncated, empty, garbage, a byte changed, huge) is
 * ignored, never trusted, and written anew. */
static void
test_corrupt (Fixture *f, gconstpointer data)
{
  static const char *const kinds[] = { "truncated", "empty", "garbage", "flipped", "huge" };

  add_holders (f, HOLDERS);
  for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      g_autoptr(GError) error = NULL;
      gsize length;
      int hits;

      g_test_message ("index %s", kinds[k]);
      wait_index_covers_all (f);
      path = index_path (f);
      g_file_get_contents (path, &contents, &length, &error);
      g_assert_no_error (error);
      if (strcmp (kinds[k], "truncated") == 0)
        g_assert_cmpint (truncate (path, length / 2), ==, 0);
      else if (strcmp (kinds[k], "empty") == 0)
        g_assert_cmpint (truncate (path, 0), ==, 0);
      else if (strcmp (kinds[k], "garbage") == 0)
        {
          for (gsize i = 0; i < length; i++)
            contents[i] = (char) g_random_int ();
          g_file_set_contents (path, contents, length, &error);
          g_assert_no_error (error);
        }
      else if (strcmp (kinds[k], "flipped") == 0)
        {
          /* One holder's count made 0 without fixing the hash. */
          char *count = memmem (contents, length, "\"count\": 1", 10);
          if (count == NULL)
            g_error ("no count of 1 in %s", path);
          count[9] = '0';
          g_file_set_contents (path, contents, length, &error);
          g_assert_no_error (error);
        }
      else
        g_assert_cmpint (truncate (path, (goffset) 1 << 30), ==, 0);   /* sparse */

      g_assert_cmpuint (status_used (f, &hits), ==, truth (f));
      g_assert_cmpint (hits, ==, 0);
      assert_counts_truth (f);
      assert_index_sound (f);
    }
  wait_index_covers_all (f);
}

/* The forgery the hostile cases plant is believed when it is our own
 * private index (which is why nobody else may write one): without this,
 * the cases below could not fail. */
static void
test_forgery_believed_when_ours (Fixture *f, gconstpointer data)
{
  g_autofree char *path = NULL;
  guint forged;
  int hits;

  add_holders (f, HOLDERS);
  wait_index_covers_all (f);
  path = index_path (f);
  forged = forge_index (f, path);
  g_assert_cmpuint (forged, ==, HOLDERS);
  g_assert_cmpuint (status_used (f, &hits), ==, truth (f) - forged);
  g_assert_cmpint (hits, ==, HOLDERS);
}

/* An index an older Tessera wrote (format 2, before the strict JSON scan)
 * may summarise texts this one refuses (a lone surrogate, a comment): it
 * is not believed, even with our own forged counts in it, and this
 * version keeps an index of its own. */
static void
test_old_version_not_trusted (Fixture *f, gconstpointer data)
{
  g_autofree char *path = NULL, *old = NULL, *text = NULL;
  g_autoptr(GError) error = NULL;
  const char *magic = "TESSERA-LOCK-FILE-INDEX ";
  char *version_end;
  guint64 sum;
  gsize length;
  int hits;

  add_holders (f, HOLDERS);
  wait_index_covers_all (f);
  path = index_path (f);
  g_assert_cmpuint (forge_index (f, path), ==, HOLDERS);
  /* Made version 2's, in its content and in its name. */
  g_file_get_contents (path, &text, &length, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (text, magic));
  if ((version_end = strchr (text + strlen (magic), '\n')) == NULL)
    g_error ("the index has no line after its magic");
  g_assert_cmpint (version_end - (text + strlen (magic)), ==, 1);   /* one digit, as 2 */
  text[strlen (magic)] = '2';
  sum = index_hash ((const guint8 *) text, length - 8);
  memcpy (text + length - 8, &sum, 8);
  /* Its name ends in -v and the version, one digit. */
  old = g_strdup (path);
  g_assert_true (strrchr (old, 'v')[-1] == '-' && strlen (strrchr (old, 'v')) == 2);
  strrchr (old, 'v')[1] = '2';
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_file_set_contents_full (old, text, length, G_FILE_SET_CONTENTS_NONE, 0600, &error);
  g_assert_no_error (error);

  g_assert_cmpuint (status_used (f, &hits), ==, truth (f));
  g_assert_cmpint (hits, ==, 0);
}

typedef enum {
  HOSTILE_OTHER_OWNER,
  HOSTILE_SYMLINK,
  HOSTILE_FIFO,
  HOSTILE_FOLDER_OPEN,         /* lock-file-index/ readable and writable by others */
  HOSTILE_FOLDER_OTHER_OWNER,
  HOSTILE_FOLDER_SYMLINK,
} Hostile;

/* Something not ours, or not a file, in the index's place: ignored
 * (what counts is the truth), nothing blocks, and run puts a sound
 * index back where it may. */
static void
test_hostile (Fixture *f, gconstpointer data)
{
  Hostile kind = GPOINTER_TO_INT (data);
  g_autofree char *path = NULL;
  g_autofree char *forged = g_build_filename (f->tmp, "forged", NULL);
  g_autofree char *elsewhere = g_build_filename (f->tmp, "elsewhere", NULL);
  g_autofree char *forged_before = NULL;
  g_autofree char *forged_after = NULL;
  int hits;

  add_holders (f, HOLDERS);
  python_peer (f, "add:peer@1.json:1", NULL);
  wait_index_covers_all (f);
  path = index_path (f);
  g_assert_cmpuint (forge_index (f, forged), ==, HOLDERS + 1);
  g_assert_true (g_file_get_contents (forged, &forged_before, NULL, NULL));

  switch (kind)
    {
    case HOSTILE_OTHER_OWNER:
      g_assert_cmpint (rename (forged, path), ==, 0);
      g_assert_cmpint (chown (path, 65534, 65534), ==, 0);
      break;
    case HOSTILE_SYMLINK:
      g_assert_cmpint (g_unlink (path), ==, 0);
      g_assert_cmpint (symlink (forged, path), ==, 0);
      break;
    case HOSTILE_FIFO:
      g_assert_cmpint (g_unlink (path), ==, 0);
      g_assert_cmpint (mkfifo (path, 0600), ==, 0);
      break;
    case HOSTILE_FOLDER_OPEN:
      g_assert_cmpint (rename (forged, path), ==, 0);
      g_assert_cmpint (chmod (f->index_dir, 0777), ==, 0);
      break;
    case HOSTILE_FOLDER_OTHER_OWNER:
      g_assert_cmpint (rename (forged, path), ==, 0);
      g_assert_cmpint (chown (f->index_dir, 65534, 65534), ==, 0);
      break;
    case HOSTILE_FOLDER_SYMLINK:
      {
        /* The folder swapped for a link to a folder holding the forgery. */
        g_autofree char *base = g_path_get_basename (path);
        g_autofree char *planted = g_build_filename (elsewhere, base, NULL);
        g_assert_cmpint (g_mkdir (elsewhere, 0700), ==, 0);
        g_assert_cmpint (rename (forged, planted), ==, 0);
        g_assert_cmpint (g_unlink (path), ==, 0);
        g_assert_cmpint (g_rmdir (f->index_dir), ==, 0);
        g_assert_cmpint (symlink (elsewhere, f->index_dir), ==, 0);
      }
      break;
    default:
      g_assert_not_reached ();
    }

  g_assert_cmpuint (status_used (f, &hits), ==, truth (f));
  g_assert_cmpint (hits, <=, 0);
  assert_counts_truth (f);

  switch (kind)
    {
    case HOSTILE_OTHER_OWNER:
    case HOSTILE_SYMLINK:
    case HOSTILE_FIFO:
      /* Replaced (never followed: the link's target is as planted). */
      assert_index_sound (f);
      if (kind == HOSTILE_SYMLINK)
        {
          g_assert_true (g_file_get_contents (forged, &forged_after, NULL, NULL));
          g_assert_cmpstr (forged_after, ==, forged_before);
        }
      wait_index_covers_all (f);
      break;
    case HOSTILE_FOLDER_OPEN:
    case HOSTILE_FOLDER_OTHER_OWNER:
    case HOSTILE_FOLDER_SYMLINK:
      /* Not ours alone: never used, never written into. */
      for (guint i = 0; i < 3; i++)
        {
          g_assert_cmpuint (status_used (f, &hits), ==, truth (f));
          g_assert_cmpint (hits, <=, 0);
          assert_counts_truth (f);
        }
      break;
    default:
      g_assert_not_reached ();
    }
}

/* Indexes of removed pools (and a killed writer's temporaries) do not
 * pile up: a file of the folder unwritten for over a week goes when an
 * index is written; a younger one, and a link, stay. */
static void
test_prune (Fixture *f, gconstpointer data)
{
  g_autofree char *old = g_build_filename (f->index_dir, "fe00-1-0123456789abcdef", NULL);
  g_autofree char *old_temporary = g_build_filename (f->index_dir, ".fe00-1-0123456789abcdef.0badcafe", NULL);
  g_autofree char *young = g_build_filename (f->index_dir, "fe00-2-0123456789abcdef", NULL);
  g_autofree char *target = g_build_filename (f->tmp, "target", NULL);
  g_autofree char *link = g_build_filename (f->index_dir, "fe00-3-0123456789abcdef", NULL);

  g_assert_cmpint (g_mkdir_with_parents (f->index_dir, 0700), ==, 0);
  g_assert_cmpint (chmod (f->index_dir, 0700), ==, 0);
  test_write_file (old, "old");
  test_write_file (old_temporary, "old");
  test_write_file (young, "young");
  test_write_file (target, "target");
  test_set_file_age (old, 8 * 24 * 3600);
  test_set_file_age (old_temporary, 8 * 24 * 3600);
  test_set_file_age (young, 6 * 24 * 3600);
  test_set_file_age (target, 8 * 24 * 3600);
  g_assert_cmpint (symlink (target, link), ==, 0);

  add_holders (f, 3);
  assert_counts_truth (f);
  wait_index_covers_all (f);
  g_assert_false (g_file_test (old, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (old_temporary, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (young, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
  g_assert_true (g_file_test (target, G_FILE_TEST_IS_REGULAR));
}

/* A fresh status shows every holder's verdict (a dead one as dead) and
 * acts on none: it counts the dead holder and leaves its file. A fresh
 * run judges holders only when their share is needed, and then frees the
 * dead one's share. */
static void
test_status_verdicts (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *dead_path = g_build_filename (f->jobs, "dead@1.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *script = g_strdup_printf ("cat '%s'/sh@*.json; echo", f->jobs);
  JsonArray *holders;
  guint seen_dead = 0, seen_alive = 0;
  GPid dead_pid;

  add_holders (f, 3);
  /* A spec as Tessera writes it (with this host's ids: a pid check can
   * then say "dead"), from a holder of its own. */
  if (run_tessera (f, &out, &err, "run", "--need", "r=1", "--", "sh", "-c", script, NULL) != 0)
    g_error ("run failed: %s", err);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  {
    JsonObject *lock = json_node_get_object (json_parser_get_root (parser));
    JsonObject *process = json_object_get_object_member (lock, "process");
    g_autoptr(JsonGenerator) generator = json_generator_new ();
    g_autofree char *text = NULL;
    g_autofree char *job_uri = g_build_filename (f->tmp, "jobs", "dead", NULL);

    g_assert_true (json_object_has_member (process, "host_id"));
    /* A child of ours, reaped: its pid is gone. */
    dead_pid = fork ();
    g_assert_cmpint (dead_pid, >=, 0);
    if (dead_pid == 0)
      _exit (0);
    g_assert_cmpint (waitpid (dead_pid, NULL, 0), ==, dead_pid);
    json_object_set_int_member (process, "pid", dead_pid);
    json_object_set_string_member (lock, "job_uri", job_uri);
    json_object_set_object_member (lock, "information", json_object_new ());
    json_object_set_int_member (json_object_get_object_member (lock, "information"), "count", 2);
    json_generator_set_root (generator, json_parser_get_root (parser));
    text = json_generator_to_data (generator, NULL);
    g_file_set_contents (dead_path, text, -1, &error);
    g_assert_no_error (error);
    g_hash_table_insert (f->truth, g_strdup ("dead@1.json"), GUINT_TO_POINTER (2));
  }

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  if (run_tessera (f, &out, &err, "status", "--json", NULL) != 0)
    g_error ("status failed: %s", err);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  holders = json_object_get_array_member (
    test_status_first_resource (json_parser_get_root (parser)),
    "holders");
  g_assert_cmpuint (json_array_get_length (holders), ==, 4);
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);
      const char *job = json_object_get_string_member (h, "job");
      const char *state = json_object_get_string_member (h, "state");

      if (strcmp (job, "dead@1") == 0)
        {
          g_assert_cmpstr (state, ==, "dead");
          seen_dead++;
        }
      else
        {
          g_assert_cmpstr (state, ==, "alive");
          seen_alive++;
        }
    }
  g_assert_cmpuint (seen_dead, ==, 1);
  g_assert_cmpuint (seen_alive, ==, 3);
  /* Counted, and left as it is. */
  g_assert_cmpuint (status_used (f, NULL), ==, truth (f));
  g_assert_true (g_file_test (dead_path, G_FILE_TEST_IS_REGULAR));

  /* What is free, and the dead holder's share: granted, its file gone. */
  g_assert_cmpint (run_no_wait (f, CAPACITY - truth (f) + 2), ==, 0);
  g_assert_false (g_file_test (dead_path, G_FILE_TEST_EXISTS));
  g_hash_table_remove (f->truth, "dead@1.json");
  assert_counts_truth (f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (geteuid () != 0)
    g_error ("test-index needs root (as CI has): it plants files of another owner");
#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down)
  ADD ("/index/missing/made-by-run-not-status", NULL, test_missing);
  ADD ("/index/missing/old-indexes-pruned", NULL, test_prune);
  ADD ("/index/stale/tessera-peer-changes", NULL, test_stale);
  ADD ("/index/stale/python-peer-in-place", NULL, test_python_peer);
  ADD ("/index/order/readdir-order-kept", NULL, test_order_kept);
  ADD ("/index/shortened/while-a-run-waits", NULL, test_shortened_while_waiting);
  ADD ("/index/lazy/run-builds-no-holder-of-the-index", NULL, test_lazy_holders);
  ADD ("/index/lazy/mutex-counted-from-the-index", NULL, test_lazy_mutex);
  ADD ("/index/status/verdicts-shown-none-acted-on", NULL, test_status_verdicts);
  ADD ("/index/corrupt/ignored-and-rebuilt", NULL, test_corrupt);
  ADD ("/index/old-version/not-trusted", NULL, test_old_version_not_trusted);
  ADD ("/index/hostile/forgery-believed-when-ours", NULL, test_forgery_believed_when_ours);
  ADD ("/index/hostile/other-owner", GINT_TO_POINTER (HOSTILE_OTHER_OWNER), test_hostile);
  ADD ("/index/hostile/symlink", GINT_TO_POINTER (HOSTILE_SYMLINK), test_hostile);
  ADD ("/index/hostile/fifo", GINT_TO_POINTER (HOSTILE_FIFO), test_hostile);
  ADD ("/index/hostile/folder-open-to-others", GINT_TO_POINTER (HOSTILE_FOLDER_OPEN), test_hostile);
  ADD ("/index/hostile/folder-of-another-owner", GINT_TO_POINTER (HOSTILE_FOLDER_OTHER_OWNER), test_hostile);
  ADD ("/index/hostile/folder-symlink", GINT_TO_POINTER (HOSTILE_FOLDER_SYMLINK), test_hostile);
  return g_test_run ();
}
