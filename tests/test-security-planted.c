/* test-security-planted.c: a pool shared by a group, where the second user
 * is hostile. As that user, each case plants something in the pool (links,
 * FIFOs, deep or huge JSON, hostile names), swaps a folder for a link
 * while the first user's command works, or hides processes (/proc with
 * hidepid=2); then the first user runs `tessera run`, `status` (text and
 * --json), `clean` and `watch`, and each must: touch no file outside the
 * pool (a folder of the first user's, checked byte for byte), end within a
 * bound, not crash, say what it has to say in clear lines, and stay small.
 * The configured path: no link followed in a folder others may write.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

static char *
status_text (Fixture *f, const char * const *wrap)
{
  g_autoptr(GBytes) out = NULL;

  tessera_in (f, wrap, &out, NULL, "status", "r", NULL);
  return g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
}

typedef struct
{
  const char *path;
  const char *script;          /* as the second user: see sh_as() */
  gboolean nothing_readable;   /* no resource can be read after it */
} Planting;

static const Planting plantings[] = {
  { "link/jobs",
    "cd \"$1/r\"; mv jobs jobs.old; ln -s \"$2\" jobs" },
  { "link/intents",
    "ln -s \"$2\" \"$1/m/intents\"" },
  { "link/lock-file",
    "for n in a b c; do ln -s \"$2/$n.json\" \"$1/r/jobs/$n.json\"; ln -s \"$2/$n.json\" \"$1/m/jobs/$n.json\"; done" },
  { "link/temporary",
    "mkdir -p \"$1/m/intents\"; "
    "for d in r/jobs m/jobs m/intents; do "
    "  ln -s \"$2/a.json\" \"$1/$d/x.json.Ab12Cd\"; ln -s \"$2/d.json.Ab12Cd\" \"$1/$d/d.json.Ab12Cd\"; "
    "  ln -s \"$2\" \"$1/$d/dir.json.Ab12Cd\"; "
    "  touch -h -d '2 hours ago' \"$1/$d/x.json.Ab12Cd\" \"$1/$d/d.json.Ab12Cd\" \"$1/$d/dir.json.Ab12Cd\"; "
    "done" },
  /* The first user's folder for its temporary files moved aside, a link
   * to the victim's folder in its place. */
  { "link/writer-temporaries",
    "for d in r m; do cd \"$1/$d\"; for t in .tessera-tmp-*; do [ -d \"$t\" ]; mv \"$t\" \"$t.old\"; "
    "ln -s \"$2\" \"$t\"; done; done" },
  { "link/ipc-lock",
    "for d in r m; do rm -f \"$1/$d/ipc.lock\"; ln -s \"$2/b.json\" \"$1/$d/ipc.lock\"; done" },
  { "fifo/jobs",
    "mkfifo \"$1/r/jobs/fifo.json\" \"$1/m/jobs/fifo.json\"" },
  { "fifo/intents",
    "mkdir -p \"$1/m/intents\"; mkfifo \"$1/m/intents/fifo.json\" \"$1/m/intents/fifo.json.Ab12Cd\"" },
  { "json/deep",
    "head -c 100000 /dev/zero | tr '\\0' '[' > \"$3/deep\"; mkdir -p \"$1/m/intents\"; "
    "for p in r/jobs/deep.json m/jobs/deep.json m/intents/deep.json r/informations.json m/informations.json; do "
    "  rm -f \"$1/$p\"; cp \"$3/deep\" \"$1/$p\"; "
    "done",
    TRUE },
  { "json/huge",
    "{ printf '{\"job_uri\": \"'; head -c 17000000 /dev/zero | tr '\\0' a; printf '\", \"total\": 8}'; } > \"$3/huge\"; "
    "mkdir -p \"$1/m/intents\"; "
    "for p in r/jobs/huge.json m/jobs/huge.json m/intents/huge.json r/informations.json m/informations.json; do "
    "  rm -f \"$1/$p\"; cp \"$3/huge\" \"$1/$p\"; "
    "done",
    TRUE },
};

static void
test_planted (Fixture *f, gconstpointer data)
{
  const Planting *planting = data;

  make_pool (f);
  plant (f, planting->script);
  f->nothing_readable = planting->nothing_readable;
  first_user_round (f);
}

/* An exclusive request that has to wait writes an intent: never through
 * a planted intents/ (looked at while it waits: giving up removes it). */
static void
test_link_intents_waiting (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *line = NULL;

  make_pool (f);
  plant (f, "ln -s \"$2\" \"$1/m/intents\"");
  holder = hold_as_second (f, "m=shared");
  waiter = spawn_as_first (f, NULL, (const char *[]) { "run", "--need", "m", "--", "true", NULL });
  /* Other lines (about the link) may come first. */
  do
    {
      g_free (line);
      line = helper_read_line (waiter, BOUND_S);
      g_test_message ("waiter: %s", line);
      g_assert_nonnull (line);
    }
  while (!g_str_has_prefix (line, "tessera: waiting for m"));
  assert_victim_untouched (f);
  release_held (holder);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  assert_victim_untouched (f);
}

static void
test_link_informations (Fixture *f, gconstpointer data)
{
  make_pool (f);
  plant (f, "rm -f \"$1/m/informations.json\"; ln -s \"$2/a.json\" \"$1/m/informations.json\"");
  first_user_round (f);
  /* And both: nothing left to show. */
  plant (f, "rm -f \"$1/r/informations.json\"; ln -s \"$2/b.json\" \"$1/r/informations.json\"");
  f->nothing_readable = TRUE;
  first_user_round (f);
}

/* A lock file names a job whose `.lock` and `.pid` are FIFOs: without a
 * "process" (seed-era: the .pid is read), and with one (the job lock is
 * probed). */
static void
test_fifo_job_lock_and_pid (Fixture *f, gconstpointer data)
{
  g_autofree char *job_lock = g_build_filename (f->evil, "job.lock", NULL);

  make_pool (f);
  plant (f, "mkfifo \"$3/job.lock\" \"$3/job.pid\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}}' \"$3\" > \"$1/r/jobs/seed.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
            "\"process\": {\"type\": \"local\", \"pid\": 1, \"host\": \"elsewhere\"}}' \"$3\" > \"$1/r/jobs/other.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"mode\": \"shared\"}}' \"$3\" > \"$1/m/jobs/seed.json\"; "
            "touch -d '2 hours ago' \"$1/r/jobs/seed.json\" \"$1/r/jobs/other.json\" \"$1/m/jobs/seed.json\"");
  first_user_round (f);
  /* Nothing the lock files name was written or removed. */
  g_assert_true (g_file_test (job_lock, G_FILE_TEST_EXISTS));
}

static void
test_hostile_names (Fixture *f, gconstpointer data)
{
  g_autofree char *text = NULL;

  make_pool (f);
  plant (f, "for n in \"$(printf 'bad\\377\\376name')\" \"$(printf 'esc\\033[2J\\033]0;title\\007name')\" "
            "          \"$(printf 'line\\nbreak')\"; do "
            "  printf '{\"job_uri\": \"%s/%s\", \"information\": {\"count\": 1}}' \"$3\" \"$n\" > \"$1/r/jobs/$n.json\"; "
            "done");
  first_user_round (f);
  /* They are shown, escaped. */
  text = status_text (f, NULL);
  g_assert_nonnull (strstr (text, "bad\\xFF\\xFEname"));
  g_assert_nonnull (strstr (text, "esc\\x1B[2J"));
}

#if TESSERA_PAUSE_POINTS
/* The first user's `tessera run --need r -- true`, held at pause point
 * @point; there, jobs/ of r becomes a link to the first user's victim
 * folder. Nothing of the victim's is created, read as a lock file or
 * deleted. To pause at the removal of its own lock file, the run gives
 * back the pool it took first (pools are taken in the order of their
 * folders' inodes) because the second user holds the other one (all or
 * none), and the victim's folder has a file of that very name. */
static void
test_jobs_swapped (Fixture *f, gconstpointer data)
{
  const char *point = data;
  g_autofree char *pause_dir = g_build_filename (f->gp->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) run = NULL;
  g_autoptr(Helper) holder = NULL;
  gboolean own_delete = g_str_equal (point, "lock-file-delete");
  const char *first = "r", *second = "m";
  int status;

  make_pool (f);
  if (own_delete)
    {
      g_autofree char *r = g_build_filename (f->gp->pool, "r", NULL);
      g_autofree char *m = g_build_filename (f->gp->pool, "m", NULL);
      struct stat rst, mst;

      g_assert_cmpint (stat (r, &rst), ==, 0);
      g_assert_cmpint (stat (m, &mst), ==, 0);
      if (mst.st_ino < rst.st_ino)
        {
          first = "m";
          second = "r";
        }
      holder = hold_as_second (f, g_str_equal (second, "r") ? "r=8" : "m");
      g_free (jobs);
      jobs = g_build_filename (f->gp->pool, first, "jobs", NULL);
    }
  pause = test_pause_point_new (pause_dir, point);
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S);
  test_pause_point_argv_env (pause, argv);
  test_argv_tessera (argv, f->state[0], f->gp->config);
  for (const char *const *a = own_delete ? (const char *[]) { "run", "--no-wait", "--need", first, "--need", second, "--", "true", NULL }
                                         : (const char *[]) { "run", "--need", "r", "--", "true", NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  test_pause_point_wait (pause, BOUND_S);

  if (own_delete)
    {
      /* Our lock file's name, also in the victim's folder. */
      g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
      const char *name;
      guint found = 0;

      g_assert_nonnull (dir);
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".json"))
          {
            g_autofree char *path = g_build_filename (f->victim, name, NULL);

            test_write_file (path, "{\"the victim's\": true}\n");
            test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], path, NULL });
            found++;
          }
      g_assert_cmpuint (found, ==, 1);
      g_hash_table_unref (f->victim_before);
      f->victim_before = snapshot (f->victim);
    }
  {
    g_autofree char *script = g_strdup_printf ("cd \"$1/%s\"; mv jobs jobs.old; ln -s \"$2\" jobs", first);
    plant (f, script);
  }
  test_pause_point_release (pause);
  status = helper_wait (run);
  g_test_message ("run -> %d", status);
  g_assert_cmpint (status, <, 124);
  assert_victim_untouched (f);
  if (holder != NULL)
    release_held (holder);
}

/* The same, with the resource folder r itself swapped for a link to a
 * folder of the first user's that has a jobs/ of its own (another pool
 * of theirs): the lock file goes to the folder r was when it was opened. */
static void
test_folder_swapped (Fixture *f, gconstpointer data)
{
  g_autofree char *pause_dir = g_build_filename (f->gp->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = NULL;
  g_autofree char *other = g_build_filename (f->state[0], "other-pool", NULL);
  g_autofree char *other_jobs = g_build_filename (other, "jobs", NULL);
  g_autofree char *mine = g_build_filename (other_jobs, "mine.json", NULL);
  g_autofree char *old_jobs = g_build_filename (f->gp->pool, "r.old", "jobs", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) run = NULL;
  int status;

  make_pool (f);
  pause = test_pause_point_new (pause_dir, "lock-file-create");
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (other_jobs, 0755), ==, 0);
  test_write_file (mine, "{\"mine\": true}\n");
  test_run_or_fail ((const char *[]) { "chown", "-R", f->gp->users->users[0], other, NULL });
  /* That folder is the one checked byte for byte. */
  g_free (f->victim);
  f->victim = g_strdup (other_jobs);
  g_hash_table_unref (f->victim_before);
  f->victim_before = snapshot (f->victim);

  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S);
  test_pause_point_argv_env (pause, argv);
  test_argv_tessera (argv, f->state[0], f->gp->config);
  test_argv_end (argv, (const char *[]) { "run", "--need", "r", "--", "true", NULL });
  run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  test_pause_point_wait (pause, BOUND_S);
  /* $2 is now other-pool/jobs. */
  plant (f, "mv \"$1/r\" \"$1/r.old\"; ln -s \"$(dirname \"$2\")\" \"$1/r\"");
  test_pause_point_release (pause);
  status = helper_wait (run);
  g_test_message ("run -> %d", status);
  g_assert_cmpint (status, <, 124);
  assert_victim_untouched (f);
  /* It went where r was, and was let go there. */
  g_assert_cmpuint (test_count_entries (old_jobs), ==, 0);
}
#endif

/* Into @files: path below the root → contents of every file below
 * @folder, "/" for a folder, "-> TARGET" for a link (never followed). */
static void
tree_snapshot_into (GHashTable *files, const char *folder, const char *below)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);
      char *key = below != NULL ? g_build_filename (below, name, NULL) : g_strdup (name);
      char *contents = NULL;
      GStatBuf st;

      g_assert_cmpint (g_lstat (path, &st), ==, 0);
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (path, NULL);
          contents = g_strconcat ("-> ", target, NULL);
        }
      else if (S_ISDIR (st.st_mode))
        {
          contents = g_strdup ("/");
          tree_snapshot_into (files, path, key);
        }
      else
        g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_hash_table_insert (files, key, contents);
    }
}

static GHashTable *
tree_snapshot (const char *folder)
{
  GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  tree_snapshot_into (files, folder, NULL);
  return files;
}

static void
assert_tree_unchanged (const char *folder, GHashTable *before)
{
  g_autoptr(GHashTable) after = tree_snapshot (folder);
  GHashTableIter iter;
  gpointer name, contents;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &name, &contents))
    {
      const char *now = g_hash_table_lookup (after, name);

      if (now == NULL)
        g_error ("%s/%s was deleted", folder, (const char *) name);
      if (!g_str_equal (now, contents))
        g_error ("%s/%s was changed: %s, then %s", folder, (const char *) name, (const char *) contents, now);
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    if (!g_hash_table_contains (before, name))
      g_error ("%s/%s appeared", folder, (const char *) name);
}

/* Another pool of the first user's, in its own folder: capacity 8, and
 * the old lock file of a holder long gone (what `clean --min-age 0`
 * removes from a pool it cleans). */
static char *
make_own_pool (Fixture *f)
{
  char *pool = g_build_filename (f->state[0], "own-pool", NULL);
  g_autofree char *jobs = g_build_filename (pool, "jobs", NULL);
  g_autofree char *informations = g_build_filename (pool, "informations.json", NULL);
  g_autofree char *dead = g_build_filename (jobs, "gone@1.json", NULL);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/gone/job\", \"information\": {\"count\": 1}}\n",
                                           f->state[0]);

  g_assert_cmpint (g_mkdir_with_parents (jobs, 0755), ==, 0);
  test_write_file (informations, "{\"total\": 8}\n");
  test_write_file (dead, text);
  test_set_file_age (dead, 7200);
  test_run_or_fail ((const char *[]) { "chown", "-R", f->gp->users->users[0], pool, NULL });
  return pool;
}

/* The issue's case: in the group's folder (group-writable, not sticky)
 * the second user renames the first user's resource folder n1 away and
 * puts a link to another pool of the first user's in its place. Every
 * command of the first user's refuses n1 in one line (exit 74) and
 * touches nothing in that pool. */
static void
test_link_resource_folder (Fixture *f, gconstpointer data)
{
  static const char *commands[][7] = {
    { "clean", "--min-age", "0", "n1", NULL },
    { "set", "n1", "total=5", NULL },
    { "run", "--no-wait", "--need", "n1=1", "--", "true", NULL },
    { "status", NULL },
  };
  g_autofree char *own = make_own_pool (f);
  g_autofree char *link = g_build_filename (f->gp->pool, "n1", NULL);
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GBytes) out = NULL;

  use_config (f, "[resource n1]\ntype=countertoken\npath=@DIR@/n1\ntotal=2\n");
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--need", "n1", "--", "true", NULL), ==, 0);
  before = tree_snapshot (own);
  g_free (f->victim);
  f->victim = g_strdup (own);   /* $2 */
  plant (f, "mv \"$1/n1\" \"$1/n1.old\"; ln -s \"$2\" \"$1/n1\"");

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      const char **c = commands[i];
      g_autoptr(GBytes) err = NULL;
      g_autofree char *text = NULL;
      int status;

      g_clear_pointer (&out, g_bytes_unref);
      status = tessera_in (f, NULL, &out, &err, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL);
      text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
      g_test_message ("%s: %d: %s", c[0], status, text);
      assert_tree_unchanged (own, before);
      g_assert_cmpint (status, ==, 74);
      /* One line, naming the link. */
      g_assert_true (g_str_has_prefix (text, "tessera: "));
      g_assert_nonnull (strstr (text, link));
      g_assert_nonnull (strchr (text, '\n'));
      g_assert_cmpstr (strchr (text, '\n'), ==, "\n");
    }
  assert_tree_unchanged (own, before);
  g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
}

/* Links that nobody else can have put there are followed: in a folder
 * only its owner (the first user, or root) may write, and in a sticky
 * folder when the link is the first user's (or root's, or the folder's
 * owner's); one of the second user's in a sticky folder is refused. */
static void
test_link_followed_where_safe (Fixture *f, gconstpointer data)
{
  static const struct { const char *path; int status; } cases[] = {
    { "@OWN@/pools/n1", 0 },                   /* the first user's folder */
    { "@TMP@/sticky/mine/n1", 0 },             /* the first user's link in a sticky folder */
    { "@TMP@/sticky/root/n1", 0 },             /* root's */
    { "@TMP@/sticky/theirs/n1", 74 },          /* the second user's */
  };
  g_autofree char *sticky = g_build_filename (f->gp->tmp, "sticky", NULL);
  g_autofree char *n1_info = g_build_filename (f->gp->pool, "n1", "informations.json", NULL);
  g_autofree char *root_link = g_build_filename (sticky, "root", NULL);

  g_assert_cmpint (g_mkdir (sticky, 0755), ==, 0);
  g_assert_cmpint (chmod (sticky, 01777), ==, 0);
  g_assert_cmpint (symlink (f->gp->pool, root_link), ==, 0);
  /* The first user owns the group's pool folder, so that her `set` is
   * the pool owner's (a member who only made n1 in it is not). */
  test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], f->gp->pool, NULL });
  sh_as (f, f->gp->users->users[0], "ln -s \"$1\" \"$(dirname \"$1\")/sticky/mine\"; ln -s \"$1\" \"$2/../pools\"");
  plant (f, "ln -s \"$1\" \"$(dirname \"$1\")/sticky/theirs\"");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *config = g_strdup_printf ("[resource n1]\ntype=countertoken\npath=%s\ntotal=2\n", cases[i].path);
      g_autofree char *set = g_strdup_printf ("total=%u", 3 + i);
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GBytes) err = NULL;

      g_test_message ("%s", cases[i].path);
      use_config (f, config);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--no-wait", "--need", "n1", "--", "true", NULL),
                       ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, &err, "set", "n1", set, NULL), ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "status", NULL), ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "clean", "n1", NULL), ==, cases[i].status);
      if (cases[i].status == 0)
        {
          g_autoptr(JsonParser) parser = json_parser_new ();
          g_autoptr(GError) error = NULL;

          json_parser_load_from_file (parser, n1_info, &error);
          g_assert_no_error (error);
          g_assert_cmpint (json_object_get_int_member (json_node_get_object (json_parser_get_root (parser)), "total"),
                           ==, 3 + i);
        }
    }
}

static void
test_hidepid (Fixture *f, gconstpointer data)
{
  const char *hidden[] = { "unshare", "--mount", "sh", "-c",
                           "mount -t proc -o hidepid=2 proc /proc && exec \"$@\"", "sh", NULL };
  g_autoptr(Helper) holder = NULL;
  g_autofree char *text = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  guint before;

  make_pool (f);
  holder = hold_as_second (f, "r=3");
  before = test_count_entries (jobs);

  /* The mount namespace really hides the holder. */
  {
    g_autoptr(GPtrArray) ps = g_ptr_array_new_with_free_func (g_free);
    g_autoptr(GBytes) out = NULL;

    for (guint i = 0; hidden[i] != NULL; i++)
      g_ptr_array_add (ps, g_strdup (hidden[i]));
    test_argv_as_user (ps, f->gp->users->users[0], BOUND_S);
    g_ptr_array_add (ps, g_strdup ("sh"));
    g_ptr_array_add (ps, g_strdup ("-c"));
    g_ptr_array_add (ps, g_strdup ("ls /proc | grep -c '^[0-9]'"));
    g_ptr_array_add (ps, NULL);
    g_assert_cmpint (test_run_capture (ps, &out, NULL), ==, 0);
    g_test_message ("processes seen by the first user: %.*s", (int) g_bytes_get_size (out),
                    (const char *) g_bytes_get_data (out, NULL));
    g_assert_cmpint (g_ascii_strtoll (g_bytes_get_data (out, NULL), NULL, 10), <, 10);
  }
  first_user_round_in (f, hidden);
  text = status_text (f, hidden);
  g_assert_nonnull (strstr (text, "5 of 8 free"));
  g_assert_null (strstr (text, "dead"));
  g_assert_cmpuint (test_count_entries (jobs), ==, before);
  release_held (holder);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (plantings); i++)
    {
      g_autofree char *path = g_strconcat ("/security/", plantings[i].path, NULL);

      security_test_add (path, &plantings[i], test_planted);
    }
  security_test_add ("/security/link/intents-waiting", NULL, test_link_intents_waiting);
  security_test_add ("/security/link/informations", NULL, test_link_informations);
  security_test_add ("/security/fifo/job-lock-and-pid", NULL, test_fifo_job_lock_and_pid);
  security_test_add ("/security/names/hostile", NULL, test_hostile_names);
  security_test_add ("/security/proc/hidepid", NULL, test_hidepid);
  security_test_add ("/security/link/resource-folder", NULL, test_link_resource_folder);
  security_test_add ("/security/link/followed-where-safe", NULL, test_link_followed_where_safe);
#if TESSERA_PAUSE_POINTS
  security_test_add ("/security/race/jobs-swapped-before-create", "lock-file-create", test_jobs_swapped);
  security_test_add ("/security/race/jobs-swapped-before-own-delete", "lock-file-delete", test_jobs_swapped);
  security_test_add ("/security/race/folder-swapped-before-create", NULL, test_folder_swapped);
#endif
  return g_test_run ();
}
