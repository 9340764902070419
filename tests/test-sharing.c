/* test-sharing.c: a pool shared by two users of one group, as a site sets
 * it up: a setgid, group-writable folder, each user with umask 022. Real
 * users and a group are created for the test (CI is root; without root the
 * test fails, it does not skip) and removed after.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <glib/gstdio.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  TestGroupPool *gp;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->gp = test_group_pool_new ("ts", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n");
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->gp, test_group_pool_free);
}

/* Runs `tessera ARGS…` as @user with umask 022; returns its exit status
 * and its output in @out. */
static int
tessera_as (Fixture *f, const char *user, char **out, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) bytes = NULL;
  va_list ap;
  int status;

  test_group_pool_argv_tessera (argv, f->gp, NULL, user, FALSE, NULL, 120);
  va_start (ap, first);
  test_argv_end_va (argv, first, ap);
  va_end (ap);
  status = test_run_capture (argv, &bytes, NULL);
  *out = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  return status;
}

/* The first user sets the pool up; the second runs in it and reads it. */
static void
test_two_users_share_a_pool (Fixture *f, gconstpointer data)
{
  g_autofree char *out_a = NULL;
  g_autofree char *out_b = NULL;
  g_autofree char *out_status = NULL;

  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out_a, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("first user: %s", out_a);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out_b, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("second user: %s", out_b);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out_status, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (out_status, "2 of 2 free"));
}

/* A user whose umask is 077 (common on clusters) sets the pool up; the
 * other still reads and uses it: what is created in a group pool is the
 * group's whatever the umask, informations.json and lock files included. */
static void
test_strict_umask (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *state = test_user_folder (f->gp->tmp, f->gp->users->users[0]);
  g_autofree char *out = NULL;
  g_autofree char *status_out = NULL;
  g_autofree char *informations = g_build_filename (f->gp->pool, "r", "informations.json", NULL);
  GStatBuf st;

  test_argv_as_user (argv, f->gp->users->users[0], 120);
  test_argv_append (argv, (const char *[]) { "sh", "-c", "umask 077; exec \"$@\"", "sh", NULL });
  test_argv_tessera (argv, state, f->gp->config);
  test_argv_end (argv, (const char *[]) { "run", "--need", "r", "--", "true", NULL });
  g_assert_cmpint (test_run_capture (argv, &bytes, NULL), ==, 0);

  /* What the first user wrote is the group's whatever its umask. */
  g_assert_cmpint (g_stat (informations, &st), ==, 0);
  g_assert_true (st.st_mode & S_IRGRP);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &status_out, "status", NULL), ==, 0);
  g_test_message ("second user's status: %s", status_out);
  g_assert_nonnull (strstr (status_out, "2 of 2 free"));
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
}

/* `tessera init PATH ARGS…`, run by root (a site's administrator) with
 * @umask; returns its exit status. */
static int
init_as_root (Fixture *f, const char *umask_text, const char *path, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autofree char *script = g_strdup_printf ("umask %s; exec \"$@\"", umask_text);
  va_list ap;
  int status;

  test_argv_append (argv, (const char *[]) { "sh", "-c", script, "sh", NULL });
  test_group_pool_argv_tessera (argv, f->gp, NULL, NULL, FALSE, NULL, 120);
  g_ptr_array_add (argv, g_strdup ("init"));
  va_start (ap, path);
  test_argv_end_va (argv, path, ap);
  va_end (ap);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("init: %.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  return status;
}

/* `tessera ARGS…` run by root; returns its exit status. */
static int
root_tessera (Fixture *f, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  va_list ap;
  int status;

  test_group_pool_argv_tessera (argv, f->gp, NULL, NULL, FALSE, NULL, 120);
  va_start (ap, first);
  test_argv_end_va (argv, first, ap);
  va_end (ap);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("root: %s -> %d: %.*s", first, status, (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  return status;
}

/* @path (never followed) has group @gid and at least the bits @bits. */
static void
assert_shared (const char *folder, const char *name, guint gid, guint bits)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  GStatBuf st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  if (st.st_gid != gid || (st.st_mode & bits) != bits)
    g_error ("%s: group %u, mode %o; wanted group %u and the bits %o", path, (guint) st.st_gid,
             (guint) st.st_mode & 07777, gid, bits);
}

/* @path (never followed) is writable by its owner only. */
static void
assert_not_writable_by_group (const char *folder, const char *name)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  GStatBuf st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    g_error ("%s: mode %o; wanted no write bit for the group or others", path, (guint) st.st_mode & 07777);
}

/* The configuration @format (@DIR@: a site folder not made yet) in use;
 * returns that folder. */
static char *
use_site (Fixture *f, const char *format)
{
  char *site = g_build_filename (f->gp->tmp, "site", NULL);
  g_autofree char *content = test_substitute (format, "@DIR@", site);

  test_write_file (f->gp->config, content);
  return site;
}

/* A site prepares a pool with `tessera init` (as root, umask 077): the
 * folder and each configured resource in it are the group's, and two
 * users with umask 022 share it at once. */
static void
test_init_then_share (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *site = use_site (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n\n"
                                       "[resource m]\ntype=mutex\npath=@DIR@/m\n");
  g_autofree char *r = g_build_filename (site, "r", NULL);

  g_assert_cmpint (init_as_root (f, "077", site, "--group", f->gp->users->group, NULL), ==, 0);
  assert_shared (site, "", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "jobs", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "ipc.lock", f->gp->users->gid, S_IRGRP | S_IWGRP);
  assert_shared (r, "informations.json", f->gp->users->gid, S_IRGRP);
  assert_shared (site, "m/jobs", f->gp->users->gid, S_ISGID | S_IRWXG);

  for (int i = 0; i < 2; i++)
    {
      g_clear_pointer (&out, g_free);
      g_assert_cmpint (tessera_as (f, f->gp->users->users[i], &out, "run", "--need", "r", "--need", "m", "--", "true", NULL),
                       ==, 0);
      g_test_message ("user %d: %s", i, out);
    }
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "r (countertoken): 2 of 2 free"));
  g_assert_nonnull (strstr (out, "m (mutex): 1 of 1 free"));
}

/* A pool set up for one user (root, umask 022) and shared afterwards with
 * `init --group`: what it already holds becomes the group's too (its
 * folders, jobs/, ipc.lock, informations.json), so a member uses it at
 * once rather than failing on a root-only ipc.lock. */
static void
test_init_group_afterwards (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *site = use_site (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n");
  g_autofree char *r = g_build_filename (site, "r", NULL);

  g_assert_cmpint (init_as_root (f, "022", site, NULL), ==, 0);
  g_assert_cmpint (init_as_root (f, "022", site, "--group", f->gp->users->group, NULL), ==, 0);
  assert_shared (site, "", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "jobs", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (r, "ipc.lock", f->gp->users->gid, S_IRGRP | S_IWGRP);
  assert_shared (r, "informations.json", f->gp->users->gid, S_IRGRP);
  assert_not_writable_by_group (r, "informations.json");
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  /* Its capacity is root's, the pool's owner: a member is refused (77). */
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "set", "r", "total=3", NULL), ==, 77);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "2 of 2 free"));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (root_tessera (f, "set", "r", "total=3", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "3 of 3 free"));
}

/* mode= and group= of a resource win over what it would take from the
 * pool's folder. */
static void
test_init_mode_and_group_settings (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *format = g_strdup_printf ("[resource p]\ntype=countertoken\npath=@DIR@/p\ntotal=1\n"
                                             "mode=2770\ngroup=%s\n", f->gp->users->group);
  g_autofree char *site = use_site (f, format);
  g_autofree char *p = g_build_filename (site, "p", NULL);
  GStatBuf st;

  /* The pool's folder is root's group's; the resource says otherwise. */
  g_assert_cmpint (init_as_root (f, "022", site, "--group", "root", NULL), ==, 0);
  g_assert_cmpint (g_lstat (p, &st), ==, 0);
  g_assert_cmpuint (st.st_gid, ==, f->gp->users->gid);
  g_assert_cmpuint (st.st_mode & 07777, ==, 02770);
  assert_shared (p, "jobs", f->gp->users->gid, 02770);
  assert_shared (p, "ipc.lock", f->gp->users->gid, 0660);
  assert_shared (p, "informations.json", f->gp->users->gid, 0660);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "p", "--", "true", NULL), ==, 0);
}

/* A member of the group (umask 022) prepares the pool in a folder of its
 * own; the other member uses it at once. */
static void
test_init_by_a_member (Fixture *f, gconstpointer data)
{
  g_autofree char *own = test_user_folder (f->gp->tmp, f->gp->users->users[0]);
  g_autofree char *site = g_build_filename (own, "pool", NULL);
  g_autofree char *format = test_substitute ("[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n",
                                             "@DIR@", site);
  g_autofree char *out = NULL;
  g_autofree char *status_out = NULL;

  g_assert_cmpint (chmod (own, 0755), ==, 0);
  test_write_file (f->gp->config, format);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "init", site, "--group", f->gp->users->group, NULL), ==, 0);
  g_test_message ("init: %s", out);
  assert_shared (site, "", f->gp->users->gid, S_ISGID | S_IRWXG);
  assert_shared (site, "r/jobs", f->gp->users->gid, S_ISGID | S_IRWXG);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &status_out, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (status_out, "2 of 2 free"));
}

/* What init cannot do it refuses before it changes anything. */
static void
test_init_refusals (Fixture *f, gconstpointer data)
{
  g_autofree char *site = use_site (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n");

  g_assert_cmpint (init_as_root (f, "022", site, "--group", "no-such-group-here", NULL), ==, 64);
  g_assert_false (g_file_test (site, G_FILE_TEST_EXISTS));
  g_assert_cmpint (init_as_root (f, "022", site, "--type", "no-such-type", NULL), ==, 64);
  g_assert_false (g_file_test (site, G_FILE_TEST_EXISTS));
  /* A type that has no resource configured there. */
  g_assert_cmpint (init_as_root (f, "022", site, "--type", "mutex", NULL), ==, 78);
  g_assert_cmpint (init_as_root (f, "022", site, "--type", "countertoken", NULL), ==, 0);
}

/* A member of the group plants the pool's name as a link to a folder of
 * root's: init must not hand that folder to the group. */
static void
test_init_refuses_a_link (Fixture *f, gconstpointer data)
{
  g_autofree char *site = use_site (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=2\n");
  g_autofree char *victim = g_build_filename (f->gp->tmp, "victim", NULL);
  g_autofree char *inside = g_build_filename (victim, "r", NULL);
  struct stat before, after;

  g_assert_cmpint (g_mkdir (victim, 0700), ==, 0);
  g_assert_cmpint (symlink (victim, site), ==, 0);
  g_assert_cmpint (stat (victim, &before), ==, 0);
  g_assert_cmpint (init_as_root (f, "022", site, "--group", f->gp->users->group, NULL), !=, 0);
  g_assert_cmpint (init_as_root (f, "022", site, NULL), !=, 0);
  g_assert_cmpint (stat (victim, &after), ==, 0);
  g_assert_cmpint (after.st_mode, ==, before.st_mode);
  g_assert_cmpint (after.st_gid, ==, before.st_gid);
  g_assert_false (g_file_test (inside, G_FILE_TEST_EXISTS));
}

/* In a pool already shared, a member of the group swaps a folder on the
 * way to a resource's for a link to a folder of root's: `init --group`
 * run again by root must hand nothing found through it to the group (its
 * walk goes folder by folder, never through a link). */
static void
test_init_group_afterwards_refuses_a_planted_link (Fixture *f, gconstpointer data)
{
  g_autofree char *site = use_site (f, "[resource r]\ntype=countertoken\npath=@DIR@/sub/r\ntotal=2\n");
  g_autofree char *sub = g_build_filename (site, "sub", NULL);
  g_autofree char *victim = g_build_filename (f->gp->tmp, "victim", NULL);
  g_autofree char *inside = g_build_filename (victim, "r", NULL);
  g_autofree char *hosts = g_build_filename (inside, "hosts", NULL);
  g_autofree char *lock = g_build_filename (inside, "ipc.lock", NULL);
  const char *files[] = { victim, inside, hosts, lock };
  struct stat before[G_N_ELEMENTS (files)];

  g_assert_cmpint (init_as_root (f, "022", site, "--group", f->gp->users->group, NULL), ==, 0);
  test_remove_tree (sub);
  g_assert_cmpint (g_mkdir (victim, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (inside, 0755), ==, 0);
  test_write_file (hosts, "127.0.0.1 localhost\n");
  test_write_file (lock, "");
  g_assert_cmpint (chmod (hosts, 0644) | chmod (lock, 0644), ==, 0);
  g_assert_cmpint (symlink (victim, sub), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    g_assert_cmpint (lstat (files[i], &before[i]), ==, 0);

  init_as_root (f, "022", site, "--group", f->gp->users->group, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      struct stat after;

      g_assert_cmpint (lstat (files[i], &after), ==, 0);
      if (after.st_gid != before[i].st_gid || after.st_mode != before[i].st_mode)
        g_error ("%s: group %u, mode %o; it was group %u, mode %o", files[i], (guint) after.st_gid,
                 (guint) after.st_mode & 07777, (guint) before[i].st_gid, (guint) before[i].st_mode & 07777);
    }
}

/* Waits (up to 60 s) until @folder holds a lock file. */
static void
wait_for_a_lock_file (const char *folder)
{
  g_free (test_wait_entry (folder, NULL, ".json", NULL, 60));
}

/* The first user's `tessera run` holds the whole pool from a container (its
 * own pid namespace, so the second user cannot judge it by its pid), with
 * the state folder of a home (0700). The container is killed: the second
 * user must see its job lock free and reclaim the holding, so the job lock
 * of a shared pool's holder is where the pool's group can read it. */
static void
test_container_holder_of_another_user_reclaimed (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  g_autofree char *out = NULL;
  int status;

  test_argv_append (argv, (const char *[]) { "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", NULL });
  test_group_pool_argv_tessera (argv, f->gp, NULL, f->gp->users->users[0], FALSE, NULL, 600);
  test_argv_end (argv, (const char *[]) { "run", "--need", "r=2", "--", "sleep", "600", NULL });
  holder = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
  g_assert_no_error (error);
  wait_for_a_lock_file (jobs);

  /* The whole container at once, as a node or a runtime ends it. */
  g_subprocess_send_signal (holder, SIGKILL);
  g_subprocess_wait (holder, NULL, NULL);

  status = tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "r=1", "--timeout", "30", "--", "true", NULL);
  g_test_message ("second user: %s", out);
  g_assert_cmpint (status, ==, 0);
}

/* A co-user plants runs/ as a link to a folder of theirs: the first
 * user's run goes on (its job folder in its state folder) and creates
 * nothing through the link. */
static void
test_planted_runs_link (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->gp->pool, "r", NULL);
  g_autofree char *runs = g_build_filename (pool, "runs", NULL);
  g_autofree char *trap = g_build_filename (f->gp->tmp, "trap", NULL);
  g_autofree char *out = NULL;
  struct passwd *pw = getpwnam (f->gp->users->users[1]);
  g_autoptr(GDir) dir = NULL;

  g_assert_cmpint (tessera_as (f, f->gp->users->users[1], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_assert_cmpint (g_mkdir (trap, 0777), ==, 0);
  g_assert_cmpint (chown (trap, pw->pw_uid, pw->pw_gid), ==, 0);
  test_remove_tree (runs);
  g_assert_cmpint (symlink (trap, runs), ==, 0);
  g_assert_cmpint (lchown (runs, pw->pw_uid, pw->pw_gid), ==, 0);

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  dir = g_dir_open (trap, 0, NULL);
  g_assert_nonnull (dir);
  g_assert_null (g_dir_read_name (dir));
}

/* A user's ids, kept (getpwnam()'s answer lasts until the next call). */
typedef struct
{
  uid_t uid;
  gid_t gid;
} Ids;

static Ids
ids_of (const char *user)
{
  struct passwd *pw = getpwnam (user);

  if (pw == NULL)
    g_error ("No user %s", user);
  return (Ids) { pw->pw_uid, pw->pw_gid };
}

/* Makes @path a folder of @ids' with @mode. */
static void
make_folder_of (const char *path, Ids ids, int mode)
{
  g_assert_cmpint (g_mkdir_with_parents (path, mode), ==, 0);
  g_assert_cmpint (chown (path, ids.uid, ids.gid), ==, 0);
  g_assert_cmpint (chmod (path, mode), ==, 0);
}

/* Writes @content to @path, a file of @ids'. */
static void
make_file_of (const char *path, Ids ids, const char *content)
{
  test_write_file (path, content);
  g_assert_cmpint (chown (path, ids.uid, ids.gid), ==, 0);
}

/* A member of the group swaps runs/ for a link to a folder of the first
 * user's whose child is named after that user's uid (as /run/user is):
 * the first user's `tessera clean` must remove nothing there. */
static void
test_clean_runs_swapped_for_a_link (Fixture *f, gconstpointer data)
{
  Ids victim_ids = ids_of (f->gp->users->users[0]);
  Ids ids = ids_of (f->gp->users->users[1]);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) victim_ids.uid);
  g_autofree char *runs = g_build_filename (f->gp->pool, "r", "runs", NULL);
  g_autofree char *victim = g_build_filename (f->gp->tmp, "victim", NULL);
  g_autofree char *uid_folder = g_build_filename (victim, uid, NULL);
  g_autofree char *app = g_build_filename (uid_folder, "app", NULL);
  g_autofree char *pid_file = g_build_filename (app, "daemon.pid", NULL);
  g_autofree char *lock_file = g_build_filename (app, "daemon.lock", NULL);
  g_autofree char *out = NULL;

  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  make_folder_of (victim, victim_ids, 0700);
  make_folder_of (uid_folder, victim_ids, 0700);
  make_folder_of (app, victim_ids, 0700);
  make_file_of (pid_file, victim_ids, "{\"type\": \"local\", \"pid\": 1}");
  make_file_of (lock_file, victim_ids, "");

  test_remove_tree (runs);
  g_assert_cmpint (symlink (victim, runs), ==, 0);
  g_assert_cmpint (lchown (runs, ids.uid, ids.gid), ==, 0);

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "clean", NULL), ==, 0);
  g_test_message ("clean: %s", out);
  g_assert_true (g_file_test (pid_file, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_IS_REGULAR));
}

/* A member of the group puts a folder of its own in place of runs/UID,
 * with job folders that a careless clean would empty, a FIFO for a
 * locks.json (reading it would hang) and a huge one: the first user's
 * `tessera clean` touches none of it, and ends. */
static void
test_clean_hostile_job_folders (Fixture *f, gconstpointer data)
{
  Ids ids = ids_of (f->gp->users->users[1]);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) ids_of (f->gp->users->users[0]).uid);
  g_autofree char *own = g_build_filename (f->gp->pool, "r", "runs", uid, NULL);
  g_autofree char *j1 = g_build_filename (own, "j1", NULL);
  g_autofree char *j2 = g_build_filename (own, "j2", NULL);
  g_autofree char *j3 = g_build_filename (own, "j3", NULL);
  g_autofree char *planted = g_build_filename (j1, "x.pid", NULL);
  g_autofree char *fifo = g_build_filename (j2, "locks.json", NULL);
  g_autofree char *huge = g_build_filename (j3, "locks.json", NULL);
  g_autofree char *out = NULL;

  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  test_remove_tree (own);
  make_folder_of (own, ids, 0777);
  make_folder_of (j1, ids, 0777);
  make_file_of (planted, ids, "{\"type\": \"local\", \"pid\": 1}");
  make_folder_of (j2, ids, 0777);
  g_assert_cmpint (mkfifo (fifo, 0666), ==, 0);
  g_assert_cmpint (chown (fifo, ids.uid, ids.gid), ==, 0);
  make_folder_of (j3, ids, 0777);
  make_file_of (huge, ids, "");
  g_assert_cmpint (truncate (huge, (off_t) 1 << 30), ==, 0);

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "clean", NULL), ==, 0);
  g_test_message ("clean: %s", out);
  g_assert_true (g_file_test (planted, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (fifo, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (huge, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test (j1, G_FILE_TEST_IS_DIR));
}

/* The first user's own job folders in runs/UID still go once done. */
static void
test_clean_own_job_folders (Fixture *f, gconstpointer data)
{
  Ids ids = ids_of (f->gp->users->users[0]);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) ids.uid);
  g_autofree char *job = g_build_filename (f->gp->pool, "r", "runs", uid, "left-behind", NULL);
  g_autofree char *pid_file = g_build_filename (job, "task.pid", NULL);
  g_autofree char *lock_file = g_build_filename (job, "task.lock", NULL);
  g_autofree char *locks = g_build_filename (job, "locks.json", NULL);
  g_autofree char *out = NULL;

  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "run", "--need", "r", "--", "true", NULL), ==, 0);
  make_folder_of (job, ids, 0750);
  make_file_of (pid_file, ids, "{\"type\": \"local\", \"pid\": 1}");
  make_file_of (lock_file, ids, "");
  make_file_of (locks, ids, "{\"dynamic_locks\": []}");
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_as (f, f->gp->users->users[0], &out, "clean", NULL), ==, 0);
  g_test_message ("clean: %s", out);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/sharing/two-users-share-a-setgid-pool", Fixture, NULL,
              fixture_set_up, test_two_users_share_a_pool, fixture_tear_down);
  g_test_add ("/sharing/strict-umask", Fixture, NULL,
              fixture_set_up, test_strict_umask, fixture_tear_down);
  g_test_add ("/sharing/init/then-two-users-share", Fixture, NULL,
              fixture_set_up, test_init_then_share, fixture_tear_down);
  g_test_add ("/sharing/init/group-afterwards", Fixture, NULL,
              fixture_set_up, test_init_group_afterwards, fixture_tear_down);
  g_test_add ("/sharing/init/group-afterwards-refuses-a-planted-link", Fixture, NULL,
              fixture_set_up, test_init_group_afterwards_refuses_a_planted_link, fixture_tear_down);
  g_test_add ("/sharing/init/by-a-member", Fixture, NULL,
              fixture_set_up, test_init_by_a_member, fixture_tear_down);
  g_test_add ("/sharing/init/refusals", Fixture, NULL,
              fixture_set_up, test_init_refusals, fixture_tear_down);
  g_test_add ("/sharing/init/refuses-a-link", Fixture, NULL,
              fixture_set_up, test_init_refuses_a_link, fixture_tear_down);
  g_test_add ("/sharing/init/mode-and-group-settings", Fixture, NULL,
              fixture_set_up, test_init_mode_and_group_settings, fixture_tear_down);
  g_test_add ("/sharing/container-holder-of-another-user-reclaimed", Fixture, NULL,
              fixture_set_up, test_container_holder_of_another_user_reclaimed, fixture_tear_down);
  g_test_add ("/sharing/planted-runs-link-not-followed", Fixture, NULL,
              fixture_set_up, test_planted_runs_link, fixture_tear_down);
  g_test_add ("/sharing/clean/runs-swapped-for-a-link", Fixture, NULL,
              fixture_set_up, test_clean_runs_swapped_for_a_link, fixture_tear_down);
  g_test_add ("/sharing/clean/hostile-job-folders", Fixture, NULL,
              fixture_set_up, test_clean_hostile_job_folders, fixture_tear_down);
  g_test_add ("/sharing/clean/own-job-folders", Fixture, NULL,
              fixture_set_up, test_clean_own_job_folders, fixture_tear_down);
  return g_test_run ();
}
