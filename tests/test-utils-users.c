/* test-utils-users.c: real users of a group sharing a pool (root only: CI
 * is root; without root the test fails), and commands run as them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <glib/gstdio.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

TestUsers *
test_users_new (const char *prefix)
{
  TestUsers *users = g_new0 (TestUsers, 1);
  struct group *gr;

  if (getuid () != 0)
    g_error ("this test creates users and a group: run it as root (CI does)");
  /* The whole pid: test programs of two build trees run side by side.
   * A run that aborted leaves its names behind, and pids come round
   * again, so a taken name is passed over, never reused. */
  for (guint n = 0; users->group == NULL; n++)
    {
      g_autofree char *tail = n == 0 ? g_strdup ("") : g_strdup_printf ("x%u", n);
      g_autofree char *group = g_strdup_printf ("%sg%d%s", prefix, (int) getpid (), tail);

      for (int i = 0; i < 2; i++)
        {
          g_free (users->users[i]);
          users->users[i] = g_strdup_printf ("%su%d%s%c", prefix, (int) getpid (), tail, 'a' + i);
        }
      if (getgrnam (group) == NULL && getpwnam (users->users[0]) == NULL && getpwnam (users->users[1]) == NULL)
        users->group = g_steal_pointer (&group);
    }
  test_run_or_fail ((const char *[]) { "groupadd", users->group, NULL });
  for (int i = 0; i < 2; i++)
    {
      test_run_or_fail ((const char *[]) { "useradd", "-M", "-N", "-g", users->group, "-s", "/bin/sh",
                                           users->users[i], NULL });
    }
  gr = getgrnam (users->group);
  if (gr == NULL)
    g_error ("group %s was not created", users->group);
  users->gid = gr->gr_gid;
  return users;
}

void
test_users_free (TestUsers *users)
{
  if (users == NULL)
    return;
  for (int i = 0; i < 2; i++)
    {
      test_run_or_fail ((const char *[]) { "userdel", users->users[i], NULL });
      g_free (users->users[i]);
    }
  test_run_or_fail ((const char *[]) { "groupdel", users->group, NULL });
  g_free (users->group);
  g_free (users);
}

/* Two real users of a new group, and a site's shared folder for them in
 * a new temporary folder (made 0755): group-writable, setgid, the
 * group's; beside it a configuration file @config_text (@DIR@ standing
 * for the shared folder) that every user may read. */
TestGroupPool *
test_group_pool_new (const char *prefix, const char *config_text)
{
  TestGroupPool *gp = g_new0 (TestGroupPool, 1);
  g_autofree char *text = NULL;

  gp->users = test_users_new (prefix);
  gp->tmp = test_make_tmpdir ();
  gp->pool = g_build_filename (gp->tmp, "pools", NULL);
  g_assert_cmpint (chmod (gp->tmp, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (gp->pool, 0755), ==, 0);
  g_assert_cmpint (chown (gp->pool, 0, gp->users->gid), ==, 0);
  g_assert_cmpint (chmod (gp->pool, 02775), ==, 0);
  text = test_substitute (config_text, "@DIR@", gp->pool);
  gp->config = g_build_filename (gp->tmp, "tessera.conf", NULL);
  test_write_file (gp->config, text);
  g_assert_cmpint (chmod (gp->config, 0644), ==, 0);
  return gp;
}

void
test_group_pool_free (TestGroupPool *gp)
{
  if (gp == NULL)
    return;
  test_users_free (gp->users);
  test_remove_tree (gp->tmp);
  g_free (gp->tmp);
  g_free (gp->pool);
  g_free (gp->config);
  g_free (gp);
}

/* The uid of @user; a missing user is an error of the test's set-up. */
guint
test_uid_of (const char *user)
{
  struct passwd *pw = getpwnam (user);

  if (pw == NULL)
    g_error ("no user %s", user);
  return (guint) pw->pw_uid;
}

/* A folder @user owns (0700), for its state and its own files. */
char *
test_user_folder (const char *parent, const char *user)
{
  char *folder = g_build_filename (parent, user, NULL);

  if (!g_file_test (folder, G_FILE_TEST_IS_DIR))
    {
      struct passwd *pw = getpwnam (user);

      g_assert_nonnull (pw);
      g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
      g_assert_cmpint (chown (folder, pw->pw_uid, pw->pw_gid), ==, 0);
    }
  return folder;
}

/* Appends to @argv: `runuser -u USER -- timeout -s KILL T sh -c 'umask
 * 022; exec "$@"' sh`, so that what follows runs as @user with the umask
 * of most accounts and is killed past @timeout_s (status 137). */
void
test_argv_as_user (GPtrArray *argv, const char *user, double timeout_s)
{
  const char *prefix[] = { "runuser", "-u", user, "--", "timeout", "-s", "KILL", NULL, "sh", "-c",
                           "umask 022; exec \"$@\"", "sh" };

  for (guint i = 0; i < G_N_ELEMENTS (prefix); i++)
    g_ptr_array_add (argv, prefix[i] ? g_strdup (prefix[i]) : g_strdup_printf ("%.0f", timeout_s));
}

/* Appends the command `tessera --config CONFIG` as @user (see
 * test_argv_as_user()), with its state (and home) in @state. */
void
test_argv_tessera_as (GPtrArray *argv, const char *user, const char *state, const char *config, double timeout_s)
{
  test_argv_as_user (argv, user, timeout_s);
  test_argv_tessera (argv, state, config);
}

/* Appends `tessera --config CONFIG` of the group pool @gp as @user (NULL:
 * root, not wrapped), its state (and home) @states[0] or [1] as @user is
 * the group's first or second user (@states NULL: GP/USER, see
 * test_user_folder()), root's GP/root-state (made if need be). With @own_cache, a user's cache (its lock file index) is its own,
 * STATE/cache, as at home. @env: NAME=VALUE set for the command (NULL:
 * none). A user's command is killed past @timeout_s (see
 * test_argv_as_user()). */
void
test_group_pool_argv_tessera (GPtrArray *argv, TestGroupPool *gp, char * const *states, const char *user,
                              gboolean own_cache, const char * const *env, double timeout_s)
{
  g_autofree char *root_state = NULL;
  g_autofree char *user_state = NULL;
  const char *state;

  if (user == NULL)
    {
      root_state = g_build_filename (gp->tmp, "root-state", NULL);
      g_assert_cmpint (g_mkdir_with_parents (root_state, 0700), ==, 0);
      state = root_state;
    }
  else
    {
      test_argv_as_user (argv, user, timeout_s);
      if (states == NULL)
        state = user_state = test_user_folder (gp->tmp, user);
      else
        state = g_str_equal (user, gp->users->users[0]) ? states[0] : states[1];
      if (own_cache)
        {
          g_ptr_array_add (argv, g_strdup ("env"));
          g_ptr_array_add (argv, g_strdup_printf ("XDG_CACHE_HOME=%s/cache", state));
        }
    }
  if (env != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("env"));
      test_argv_append (argv, env);
    }
  test_argv_tessera (argv, state, gp->config);
}
