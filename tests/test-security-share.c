/* test-security-share.c: what a member of a group may do to another
 * member's share of a pool (issue 38, defect 4), and what root and the
 * pool's administrators may do: who makes the pool's parts, whose holders
 * count, whose job folders are cleaned.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

/* The intents/ folder the first user's waiting request makes is the
 * group's, as jobs/ is: the second user's requests judge and remove
 * stale intents there. */
static void
test_intents_folder_shared (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autofree char *intents = g_build_filename (f->gp->pool, "m", "intents", NULL);
  GStatBuf st;

  make_pool (f);
  holder = hold_as_second (f, "m=shared");
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--timeout", "0.5", "--need", "m", "--", "true", NULL),
                   ==, 75);
  g_assert_cmpint (g_lstat (intents, &st), ==, 0);
  g_assert_cmpuint (st.st_gid, ==, f->gp->users->gid);
  g_assert_cmpuint (st.st_mode & (S_ISGID | S_IRWXG), ==, S_ISGID | S_IRWXG);
  release_held (holder);
}

/* The first user's folder for its temporary files moved aside and the
 * second user's own, writable by all, in its place: the first user's
 * writes never go there (the second user could swap a temporary file for
 * its own before the rename), they go beside the lock files. */
static void
test_writer_temporaries_of_another (Fixture *f, gconstpointer data)
{
  make_pool (f);
  plant (f, "for d in r m; do cd \"$1/$d\"; for t in .tessera-tmp-*; do [ -d \"$t\" ]; mv \"$t\" \"$t.old\"; "
            "mkdir -m 777 \"$t\"; done; done");
  first_user_round (f);
  for (const char *const *d = (const char *[]) { "r", "m", NULL }; *d != NULL; d++)
    {
      g_autoptr(GDir) dir = NULL;
      g_autofree char *folder = g_build_filename (f->gp->pool, *d, NULL);
      const char *name;
      guint planted = 0;

      dir = g_dir_open (folder, 0, NULL);
      g_assert_nonnull (dir);
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_prefix (name, ".tessera-tmp-") && !g_str_has_suffix (name, ".old"))
          {
            g_autofree char *path = g_build_filename (folder, name, NULL);

            planted++;
            g_assert_cmpuint (test_count_entries (path), ==, 0);
          }
      g_assert_cmpuint (planted, ==, 1);
    }
}

/* The second user holds the mutex m, then puts in place of m/jobs/ a
 * folder of their own that others may write in but not list, with their
 * lock file in it: the first user cannot see who holds m, so must not
 * take it (a folder that cannot be read is no empty pool), and says why
 * in one line (and what else there is to say, in its own). */
static void
test_jobs_unlistable (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  int status;

  make_pool (f);
  holder = hold_as_second (f, "m");
  plant (f, "cd \"$1/m\"; mkdir jobs.new; mv jobs/*.json jobs.new/; mv jobs jobs.old; mv jobs.new jobs; "
            "chmod 0733 jobs");
  /* And something else to say about r. */
  plant (f, "ln -s \"$2/a.json\" \"$1/r/jobs/evil.json\"");
  status = tessera_in (f, NULL, &out, &err, "run", "--no-wait", "--need", "r", "--need", "m", "--", "true", NULL);
  text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
  g_assert_cmpint (status, !=, 0);
  /* One line per cause: r's link, m's folder (the warning of the look
   * that failed is the error). */
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[2], ==, "");
  g_assert_nonnull (strstr (text, "symbolic link"));
  g_assert_nonnull (strstr (text, "m/jobs"));
  assert_clear (err, "run");
  /* status cannot show m's holders: it says so, rather than show none. */
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  g_free (text);
  tessera_in (f, NULL, &out, &err, "status", "m", NULL);
  text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
  g_assert_nonnull (strstr (text, "Cannot read"));
  assert_clear (err, "status");
  release_held (holder);
}

/* `tessera clean --force r JOB` as the second user: its status, its
 * output in @out. */
static int
force_as_second (Fixture *f, const char *job, GBytes **out)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  int status;

  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S);
  for (const char * const *a = (const char *[]) { "clean", "--force", "r", job, NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, out, NULL);
  g_test_message ("second user: clean --force r %s -> %d: %.*s", job, status, (int) g_bytes_get_size (*out),
                  (const char *) g_bytes_get_data (*out, NULL));
  assert_clear (*out, "clean --force");
  return status;
}

/* `tessera clean --force` removes an entry of jobs/ (a FIFO too: it
 * holds everything) only for its owner, root or the pool's owner: the
 * second user, who owns neither the pool (the group's folder is the
 * first user's here, and her first run made r/ in it) nor the first
 * user's FIFO, is refused in one line (77) and removes nothing; it
 * removes its own FIFO, and the pool's owner removes the second user's
 * lock file. */
static void
test_force_by_owner (Fixture *f, gconstpointer data)
{
  g_autofree char *mine = g_build_filename (f->gp->pool, "r", "jobs", "mine@1.json", NULL);
  g_autofree char *theirs = g_build_filename (f->gp->pool, "r", "jobs", "theirs@1.json", NULL);
  g_autofree char *other = g_build_filename (f->gp->pool, "r", "jobs", "other@1.json", NULL);
  g_autoptr(GBytes) out = NULL;

  test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], f->gp->pool, NULL });
  make_pool (f);
  sh_as (f, f->gp->users->users[0], "mkfifo \"$1/r/jobs/mine@1.json\"");
  plant (f, "mkfifo \"$1/r/jobs/theirs@1.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}}' \"$3\" > \"$1/r/jobs/other@1.json\"");

  g_assert_cmpint (force_as_second (f, "mine@1", &out), ==, 77);
  g_assert_nonnull (g_strstr_len (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "owner"));
  g_assert_true (g_file_test (mine, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (force_as_second (f, "theirs@1", &out), ==, 0);
  g_assert_false (g_file_test (theirs, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "clean", "--force", "r", "mine@1", "other@1", NULL), ==, 0);
  /* The pool's owner also changes its capacity. */
  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "set", "r", "total=9", NULL), ==, 0);
  g_assert_false (g_file_test (mine, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (other, G_FILE_TEST_EXISTS));
  assert_victim_untouched (f);
}

/* In a pool made by `tessera init --group`, the second member can
 * neither rewrite the first member's lock file (in place), nor replace it
 * (by rename), nor move or delete it: lock files are writable by their
 * owner only and jobs/ is sticky. The first member's holding still
 * counts: the whole pool is taken. */
static void
test_member_cannot_touch_another_share (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *script = NULL;
  int status;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  g_assert_true (g_file_get_contents (lock_file, &before, NULL, NULL));
  script = g_strdup_printf ("f='%s'; "
                            "if printf '{\"job_uri\": \"x\", \"information\": {\"count\": 0}}' > \"$f\"; then "
                            "  echo \"rewrote $f in place\"; exit 1; fi; "
                            "printf '{\"job_uri\": \"x\", \"information\": {\"count\": 0}}' > \"$3/forged.json\"; "
                            "if mv -f -T \"$3/forged.json\" \"$f\"; then echo \"replaced $f by a rename\"; exit 1; fi; "
                            "if mv -T \"$f\" \"$f.away\"; then echo \"moved $f away\"; exit 1; fi; "
                            "if rm -f \"$f\"; then echo \"deleted $f\"; exit 1; fi",
                            lock_file);
  plant (f, script);
  g_assert_true (g_file_get_contents (lock_file, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);

  /* The first member's holding counts for the second. */
  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S);
  test_argv_end (argv, (const char *[]) { "run", "--no-wait", "--need", "r", "--", "true", NULL });
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("second member's run -> %d: %.*s", status, (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 75);
  release_held (holder);
}

/* Changing a pool's capacity, forcing another user's holder out and
 * retiring a host are for root and the pool's owner (here root, which
 * made it with `tessera init --group`): a member is refused in one line
 * with status 77 (EX_NOPERM) and changes nothing; root succeeds. */
static void
test_member_is_no_administrator (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *base = NULL;
  g_autofree char *job = NULL;
  g_autofree char *out = NULL;
  const char *member = f->gp->users->users[1];

  init_group_pool (f);
  holder = hold_as_first (f, "r=1");
  lock_file = only_lock_file (f);
  base = g_path_get_basename (lock_file);
  job = g_strndup (base, strlen (base) - strlen (".json"));

  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "set", "r", "total=100", NULL), ==, 77);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "clean", "--force", "r", job, NULL), ==, 77);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "clean", "--host", "retired.example", "--yes", NULL), ==, 77);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "7 of 8 free"));

  /* Root, the pool's owner, may. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "set", "r", "total=9", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "retired.example", "--yes", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--force", "r", job, NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "9 of 9 free"));
  /* Its lock file forced out, the holder may say so and fail. */
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* Each of @resource's parts in the pool (informations.json only @with
 * one: a mutex has none): owned by root (who ran init), the group's and
 * setgid; the folders sticky, hosts/ too (no member removes another's
 * mark of a host there: issue 38, F3). */
static void
assert_owned_by_root (Fixture *f, const char *resource, gboolean with_informations)
{
  static const struct { const char *name; gboolean folder, sticky; } parts[] = {
    { "", TRUE, TRUE }, { "jobs", TRUE, TRUE }, { "runs", TRUE, TRUE }, { "queue", TRUE, TRUE },
    { "hosts", TRUE, TRUE }, { "informations.json", FALSE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *path = g_build_filename (f->gp->pool, resource, parts[i].name, NULL);
      struct stat st;

      if (!parts[i].folder && !with_informations)
        continue;
      if (lstat (path, &st) < 0)
        g_error ("init did not make %s: %s", path, g_strerror (errno));
      g_test_message ("%s: uid %u, mode %o", path, (guint) st.st_uid, (guint) st.st_mode);
      g_assert_cmpuint (st.st_uid, ==, 0);
      g_assert_cmpuint (st.st_gid, ==, f->gp->users->gid);
      g_assert_true (parts[i].folder ? S_ISDIR (st.st_mode) : S_ISREG (st.st_mode));
      if (parts[i].folder)
        {
          g_assert_cmpuint (st.st_mode & (S_ISGID | S_IRWXG), ==, S_ISGID | S_IRWXG);
          g_assert_cmpuint (st.st_mode & S_ISVTX, ==, parts[i].sticky ? S_ISVTX : 0);
        }
    }
}

/* `tessera init --group` leaves no part of a resource for a member to
 * make (and own): each resource's folder, jobs/, runs/, queue/, hosts/,
 * informations.json and a mutex's intents/ are root's, as a member who owned runs/ could
 * rename another's entries there. */
static void
test_init_owns_every_part (Fixture *f, gconstpointer data)
{
  g_autofree char *intents = g_build_filename (f->gp->pool, "m", "intents", NULL);
  struct stat st;

  init_group_pool (f);
  assert_owned_by_root (f, "r", TRUE);
  assert_owned_by_root (f, "m", FALSE);
  /* The mutex's own part, which its type makes (prepare_pool). */
  if (lstat (intents, &st) < 0)
    g_error ("init did not make %s: %s", intents, g_strerror (errno));
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpuint (st.st_mode & (S_ISGID | S_ISVTX | S_IRWXG), ==, S_ISGID | S_ISVTX | S_IRWXG);
}

/* A member's folder where a resource of the pool goes (made before
 * root's init) is refused by init in one line naming it and its owner,
 * with status 77, never skipped: the member would own the resource. */
static void
test_init_refuses_a_members_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *folder = g_build_filename (f->gp->pool, "r", NULL);
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", folder, f->gp->users->users[1]);

  plant (f, "mkdir \"$1/r\"");
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "init", f->gp->pool, "--group", f->gp->users->group, NULL), ==, 77);
  g_assert_nonnull (strstr (out, named));
  g_assert_true (strchr (out, '\n') == out + strlen (out) - 1);
}

/* That @out (a command's output, NULL when it said nothing) says @what. */
static void
assert_said (const char *out, const char *what)
{
  if (out == NULL || strstr (out, what) == NULL)
    g_error ("expected “%s” in the output, which was: %s", what, out != NULL ? out : "(nothing)");
}

/* That @out is one line. */
static void
assert_one_line (const char *out)
{
  if (out == NULL || strchr (out, '\n') != out + strlen (out) - 1)
    g_error ("expected one line, not: %s", out != NULL ? out : "(nothing)");
}

/* A resource added to the configuration after init, whose folder a
 * member made by her own mkdir (hers, as init would refuse it): in the
 * group's pool nobody's process believes it, hers neither: each run is
 * refused in one line naming the folder and its owner (74) and makes
 * nothing in it, and status says why (issue 38, point 4). */
static void
test_member_made_resource (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "new", "jobs", NULL);
  g_autofree char *folder = g_build_filename (f->gp->pool, "new", NULL);
  const char *member = f->gp->users->users[1];
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", folder, member);
  const char *users[] = { member, f->gp->users->users[0], NULL };

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\n\n"
                 "[resource new]\ntype=countertoken\npath=@DIR@/new\ntotal=2\n");
  /* Her own mkdir (a run makes none there: member-run-makes-no-resource). */
  g_assert_cmpint (g_mkdir (folder, 02775), ==, 0);
  test_run_or_fail ((const char *[]) { "chown", member, folder, NULL });
  for (guint i = 0; users[i] != NULL; i++)
    {
      g_clear_pointer (&out, g_free);
      g_assert_cmpint (tessera_by (f, users[i], &out, FALSE, "run", "--no-wait", "--need", "new", "--", "true", NULL),
                       ==, 74);
      assert_one_line (out);
      assert_said (out, named);
    }
  g_assert_false (g_file_test (jobs, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "new", NULL);
  assert_said (out, named);
}

/* informations.json, the pool's capacity, is its owner's: when root
 * removed it (as the message about a broken one advises), a member's run
 * makes none (she would own the capacity) and says to run init (74); one
 * she planted is believed by nobody, her own runs neither: each is
 * refused in one line naming it and its owner (74), and status says why
 * (issue 38, point 4). Root's init makes it again, root's. */
static void
test_member_informations_not_believed (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *informations = g_build_filename (f->gp->pool, "r", "informations.json", NULL);
  const char *member = f->gp->users->users[1];
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", informations, member);
  const char *users[] = { member, f->gp->users->users[0], NULL };
  struct stat st;

  init_group_pool (f);
  g_assert_cmpint (g_unlink (informations), ==, 0);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r=1", "--", "true", NULL), ==, 74);
  assert_one_line (out);
  assert_said (out, "tessera init");
  g_assert_false (g_file_test (informations, G_FILE_TEST_EXISTS));

  plant (f, "printf '{\"total\": 1000}\\n' > \"$1/r/informations.json\"");
  for (guint i = 0; users[i] != NULL; i++)
    {
      g_clear_pointer (&out, g_free);
      g_assert_cmpint (tessera_by (f, users[i], &out, FALSE, "run", "--no-wait", "--need", "r=100", "--", "true",
                                   NULL), ==, 74);
      assert_one_line (out);
      assert_said (out, named);
    }
  g_clear_pointer (&out, g_free);
  tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "r", NULL);
  assert_said (out, named);

  /* Root removes it; init makes it again, root's, and the pool serves. */
  g_assert_cmpint (g_unlink (informations), ==, 0);
  init_group_pool (f);
  g_assert_cmpint (g_stat (informations, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--no-wait", "--need", "r=8", "--", "true", NULL),
                   ==, 0);
}

/* hosts/ and queue/ are made by init (root's, sticky: see
 * init-owns-every-part); when they are gone, a member's process makes
 * neither (she would own it, and could remove the other users' marks or
 * entries there): without hosts/ her run cannot leave this host's mark
 * and stops with the line that says to run init (74); without queue/ a
 * waiter past its patience cannot reserve, says so with that line, and
 * waits on as before (75 at its timeout) (issue 38, point 4). */
static void
test_member_makes_no_hosts_or_queue (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *out = NULL;
  g_autofree char *hosts = g_build_filename (f->gp->pool, "r", "hosts", NULL);
  g_autofree char *queue = g_build_filename (f->gp->pool, "r", "queue", NULL);
  g_autofree char *rm_hosts = NULL;
  const char *member = f->gp->users->users[1];

  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\npatience=0\n");
  init_group_pool (f);
  rm_hosts = g_strdup_printf ("rm -rf '%s' '%s'", hosts, queue);
  test_run_or_fail ((const char *[]) { "sh", "-c", rm_hosts, NULL });
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r=1", "--", "true", NULL), ==, 74);
  assert_one_line (out);
  assert_said (out, "tessera init");
  assert_said (out, hosts);
  g_assert_false (g_file_test (hosts, G_FILE_TEST_EXISTS));

  /* hosts/ made again; queue/ still missing. */
  init_group_pool (f);
  g_assert_cmpint (g_rmdir (queue), ==, 0);
  holder = hold_as_first (f, "r=8");
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--timeout", "2", "--need", "r=1", "--", "true", NULL),
                   ==, 75);
  assert_said (out, "tessera init");
  g_assert_false (g_file_test (queue, G_FILE_TEST_EXISTS));
  release_held (holder);
}

/* In a group's pool only its owner (or root) makes a resource's folder:
 * a member's run on a resource added after init is refused in one line
 * that says to run init, and makes nothing (were the folder and its
 * jobs/ hers, she could remove the other members' lock files there). */
static void
test_member_run_makes_no_resource (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *folder = g_build_filename (f->gp->pool, "new", NULL);
  const char *member = f->gp->users->users[1];
  struct stat st;

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\n\n"
                 "[resource new]\ntype=countertoken\npath=@DIR@/new\ntotal=2\n");
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "new", "--", "true", NULL), ==, 74);
  g_assert_nonnull (strstr (out, "tessera init"));
  g_assert_false (g_file_test (folder, G_FILE_TEST_EXISTS));

  /* Once init made it, the member's run goes. */
  init_group_pool (f);
  g_assert_cmpint (g_stat (folder, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "new", "--", "true", NULL), ==, 0);
}

/* In a pool an older init made without runs/ (or with it removed), a
 * member's run makes none (she would own it, and could move another's job
 * folder in it): the run goes, its job folder in her state folder. */
static void
test_member_run_makes_no_runs (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *runs = g_build_filename (f->gp->pool, "r", "runs", NULL);
  const char *member = f->gp->users->users[1];

  init_group_pool (f);
  g_assert_cmpint (g_rmdir (runs), ==, 0);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_assert_false (g_file_test (runs, G_FILE_TEST_EXISTS));
}

/* Root's `tessera clean` removes the ended job folders of every user in a
 * pool's runs/ (a member's clean removes only her own): a folder whose
 * job lock nobody holds and whose lock files are gone. */
static void
test_root_cleans_ended_job_folders (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  g_autofree char *out = NULL;
  g_autofree char *own = NULL;
  g_autofree char *job = NULL;

  init_group_pool (f);
  job = plant_job_folder (f, member, "ended-1", "ended", "123\n",
                          "{\"dynamic_locks\": [{\"lock_file_path\": \"/nonexistent/ended@1.json\"}]}");
  own = g_path_get_dirname (job);

  /* Hers: another member's clean leaves it. */
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "clean", NULL), ==, 0);
  g_assert_true (g_file_test (job, G_FILE_TEST_IS_DIR));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "removed the job folder"));
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (own, G_FILE_TEST_IS_DIR));
}

/* A flock on an ended job's job lock keeps nothing (issue 38; "Who may
 * judge a holder"): `tessera run` holds its job lock with an fcntl lock,
 * never a flock, and anyone who may read the file can flock it, so a
 * flock there proves nothing of the job, as the verdict on a holder
 * already reads it. Another member who flocks a member's ended job lock
 * does not keep root's clean from removing her job folder. */
static void
test_root_cleans_job_folder_flocked_by_another (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) locker = NULL;
  g_autofree char *out = NULL;
  g_autofree char *job = NULL;
  g_autofree char *lock = NULL;

  init_group_pool (f);
  job = plant_job_folder (f, member, "ended-1", "ended", JOB_PID, "{\"dynamic_locks\": []}");
  lock = g_build_filename (job, "ended.lock", NULL);

  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S * 4);
  test_argv_end (argv, (const char *[]) { test_python (), "-c", "import fcntl, sys\n"
                                                  "f = open(sys.argv[1], 'r')\n"
                                                  "fcntl.flock(f, fcntl.LOCK_EX)\n"
                                                  "print('held', flush=True)\n"
                                                  "sys.stdin.read()\n", lock, NULL });
  locker = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (locker, "held", BOUND_S);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  helper_close_stdin (locker);
  g_assert_cmpint (helper_wait (locker), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
}

/* The parent of process @pid. */
static GPid
parent_pid (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  if ((line = strstr (status, "\nPPid:")) == NULL)
    g_error ("%s has no PPid line", path);
  return (GPid) atoi (line + strlen ("\nPPid:"));
}

/* A member's holder killed with SIGKILL leaves its lock file, which
 * another member may not delete (jobs/ is sticky): it is judged dead and
 * does not count, and the other member's run says nothing of the file it
 * could not delete. That member's clean lists it with its owner and
 * leaves it; root's clean removes it. */
static void
test_dead_holder_of_another_member (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *base = NULL;
  g_autofree char *out = NULL;
  const char *first = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  GPid command, wrapper;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  base = g_path_get_basename (lock_file);
  /* The holder is killed, the run's wrapper first (its command, which
   * the lock file names, would otherwise give its share back). */
  command = lock_file_pid (lock_file);
  wrapper = parent_pid (command);
  g_assert_cmpint (kill (wrapper, SIGKILL), ==, 0);
  g_assert_true (kill (command, SIGKILL) == 0 || errno == ESRCH);
  g_assert_cmpint (helper_wait (holder), !=, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The dead holder does not count, and its file is its owner's. */
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--no-wait", "--need", "r=8", "--", "true", NULL), ==, 0);
  g_assert_true (out == NULL || strstr (out, base) == NULL);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The member's clean names it and its owner, and leaves it. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", "--min-age", "0", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, base));
  g_assert_nonnull (strstr (out, first));
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* Root's removes it. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--min-age", "0", "r", NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "8 of 8 free"));
}

/* The job lock of the holder whose lock file is @lock_file: its job_uri
 * with its last suffix replaced by ".lock" (the seed's rule). */
static char *
lock_file_job_lock (const char *lock_file)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *base = NULL;
  const char *job_uri, *dot;

  g_assert_true (json_parser_load_from_file (parser, lock_file, NULL));
  job_uri = json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "job_uri");
  if (job_uri == NULL)
    g_error ("%s names no job", lock_file);
  base = g_path_get_basename (job_uri);
  dot = strrchr (base, '.');
  if (dot == NULL || dot == base)
    return g_strconcat (job_uri, ".lock", NULL);
  return g_strdup_printf ("%.*s.lock", (int) (strlen (job_uri) - strlen (dot)), job_uri);
}

/* A member who may only read another's job lock locks it (data: a
 * classic or an OFD fcntl read lock, a shared or an exclusive flock: what
 * a descriptor opened for reading can take) after that holder died. A
 * judge to whom the job lock is the only witness (here in a pid namespace
 * of its own, as in a container) must not take that lock for the
 * holder's: the holder, whose job lock holds no write lock, is gone and
 * its share is taken (issue 38, "Who may judge a holder"). */
static void
test_dead_holder_job_lock_read_locked (Fixture *f, gconstpointer data)
{
  const char *own_pid_namespace[] = { "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", NULL };
  const char *kind = data;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) reader = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *job_lock = NULL;
  GPid command, wrapper;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  job_lock = lock_file_job_lock (lock_file);
  g_assert_true (g_file_test (job_lock, G_FILE_TEST_IS_REGULAR));
  command = lock_file_pid (lock_file);
  wrapper = parent_pid (command);
  g_assert_cmpint (kill (wrapper, SIGKILL), ==, 0);
  g_assert_true (kill (command, SIGKILL) == 0 || errno == ESRCH);
  g_assert_cmpint (helper_wait (holder), !=, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The second member, who may read the job lock, locks it. */
  test_argv_as_user (argv, f->gp->users->users[1], BOUND_S * 4);
  g_ptr_array_add (argv, g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL));
  g_ptr_array_add (argv, g_strdup ("read-lock"));
  g_ptr_array_add (argv, g_strdup (job_lock));
  g_ptr_array_add (argv, g_strdup (kind));
  g_ptr_array_add (argv, NULL);
  reader = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (reader, "LOCKED", BOUND_S);

  /* In a pid namespace of its own, the holder's pid says nothing: its job
   * lock is the judge, and the reader's lock is not the holder's. */
  g_assert_cmpint (tessera_in (f, own_pid_namespace, &out, NULL, "run", "--no-wait", "--need", "r=8", "--", "true",
                               NULL), ==, 0);
  g_assert_true (helper_is_running (reader));
  helper_close_stdin (reader);
  g_assert_cmpint (helper_wait (reader), ==, 0);
}

/* A user outside the pool's group: `tessera run` (which must write in the
 * pool) and, once the pool is the group's only (2770), `tessera status`
 * fail naming the cause on each line, that the user is not in the group,
 * not only a folder or file it cannot open (issue 42, point 8). */
static void
test_outsider_told_not_in_group (Fixture *f, gconstpointer data)
{
  g_autofree char *outsider = g_strdup_printf ("txo%d", (int) getpid ());
  g_autofree char *state = NULL;
  g_autofree char *cause = NULL;
  g_autofree char *said = NULL;
  const char *commands[][6] = {
    { "run", "--need", "r=1", "--", "true", NULL },
    { "status", NULL },
  };

  test_run_or_fail ((const char *[]) { "useradd", "-M", "-N", "-s", "/bin/sh", outsider, NULL });
  state = test_user_folder (f->gp->tmp, outsider);
  cause = g_strdup_printf ("not in group %s", f->gp->users->group);
  init_group_pool (f);
  for (guint round = 0; round < 2; round++)
    {
      /* init's pool, others may look (2775); then the group's only. */
      if (round == 1)
        g_assert_cmpint (chmod (f->gp->pool, 02770), ==, 0);
      for (guint c = 0; c < (round == 0 ? 1 : G_N_ELEMENTS (commands)); c++)
        {
          g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
          g_autoptr(GBytes) bytes = NULL;
          int status;

          test_argv_tessera_as (argv, outsider, state, f->gp->config, BOUND_S);
          for (guint a = 0; commands[c][a] != NULL; a++)
            g_ptr_array_add (argv, g_strdup (commands[c][a]));
          g_ptr_array_add (argv, NULL);
          status = test_run_capture (argv, &bytes, NULL);
          g_free (said);
          said = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
          g_test_message ("outsider: %s (pool %s) -> %d: %s", commands[c][0], round == 0 ? "2775" : "2770", status,
                          said);
          g_assert_cmpint (status, !=, 0);
          /* One line per resource it could not use, each with the cause. */
          {
            g_auto(GStrv) lines = g_strsplit (said, "\n", -1);

            g_assert_nonnull (lines[0]);
            g_assert_cmpstr (lines[0], !=, "");
            for (guint l = 0; lines[l] != NULL && lines[l + 1] != NULL; l++)
              g_assert_nonnull (strstr (lines[l], cause));
          }
        }
    }
  test_run_or_fail ((const char *[]) { "userdel", outsider, NULL });
}

/* Root's clean looks at no path a member's locks.json names outside the
 * pool's own folders (issue 38, point 4): a job folder of hers whose
 * locks.json names a file in a folder only root may read goes as one
 * naming a file that does not exist does, so her folder's fate tells
 * her nothing of root's files. */
static void
test_root_clean_looks_only_in_the_pool (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  struct passwd *pw = getpwnam (member);
  g_autofree char *secret_dir = g_build_filename (f->gp->tmp, "root-only", NULL);
  g_autofree char *secret = g_build_filename (secret_dir, "secret@1.json", NULL);
  g_autofree char *own = NULL;
  g_autofree char *job = NULL;
  g_autofree char *file = NULL;
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;

  if (pw == NULL)
    g_error ("no user %s", member);
  g_assert_cmpint (g_mkdir_with_parents (secret_dir, 0700), ==, 0);
  test_write_file (secret, "{}");
  init_group_pool (f);
  own = g_strdup_printf ("%s/r/runs/%u", f->gp->pool, (guint) pw->pw_uid);
  job = g_build_filename (own, "probe-1", NULL);
  g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
  file = g_build_filename (job, "probe.lock", NULL);
  test_write_file (file, "");
  g_free (file);
  file = g_build_filename (job, "locks.json", NULL);
  text = g_strdup_printf ("{\"dynamic_locks\": [{\"lock_file_path\": \"%s\"}]}", secret);
  test_write_file (file, text);
  test_run_or_fail ((const char *[]) { "chown", "-R", member, own, NULL });

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (secret, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  security_test_add ("/security/share/intents-folder", NULL, test_intents_folder_shared);
  security_test_add ("/security/share/writer-temporaries-of-another-user", NULL, test_writer_temporaries_of_another);
  security_test_add ("/security/share/jobs-unlistable", NULL, test_jobs_unlistable);
  security_test_add ("/security/share/force-by-owner", NULL, test_force_by_owner);
  security_test_add ("/security/share/member-cannot-touch-another-share", NULL, test_member_cannot_touch_another_share);
  security_test_add ("/security/share/member-is-no-administrator", NULL, test_member_is_no_administrator);
  security_test_add ("/security/share/dead-holder-of-another-member", NULL, test_dead_holder_of_another_member);
  for (guint i = 0; i < 4; i++)
    {
      static const char *kinds[] = { "fcntl", "ofd", "flock-sh", "flock-ex" };
      g_autofree char *path = g_strconcat ("/security/share/dead-holder-job-lock-read-locked/", kinds[i], NULL);

      security_test_add (path, kinds[i], test_dead_holder_job_lock_read_locked);
    }
  security_test_add ("/security/share/init-owns-every-part", NULL, test_init_owns_every_part);
  security_test_add ("/security/share/init-refuses-a-members-folder", NULL, test_init_refuses_a_members_folder);
  security_test_add ("/security/share/member-made-resource-is-not-believed", NULL, test_member_made_resource);
  security_test_add ("/security/share/member-informations-not-believed", NULL, test_member_informations_not_believed);
  security_test_add ("/security/share/member-makes-no-hosts-or-queue", NULL, test_member_makes_no_hosts_or_queue);
  security_test_add ("/security/share/member-run-makes-no-resource", NULL, test_member_run_makes_no_resource);
  security_test_add ("/security/share/root-cleans-ended-job-folders", NULL, test_root_cleans_ended_job_folders);
  security_test_add ("/security/share/root-cleans-job-folder-flocked-by-another", NULL, test_root_cleans_job_folder_flocked_by_another);
  security_test_add ("/security/share/member-run-makes-no-runs", NULL, test_member_run_makes_no_runs);
  security_test_add ("/security/share/outsider-told-not-in-group", NULL, test_outsider_told_not_in_group);
  security_test_add ("/security/share/root-clean-looks-only-in-the-pool", NULL, test_root_clean_looks_only_in_the_pool);
  return g_test_run ();
}
