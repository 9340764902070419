/* test-sharing.c: a pool shared by two users of one group, as a site sets
 * it up: a setgid, group-writable folder, each user with umask 022. Real
 * users and a group are created for the test (CI is root; without root the
 * test fails, it does not skip) and removed after.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <glib/gstdio.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  char *group;
  char *users[2];
  char *config;
  char *pool;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *content = NULL;
  struct group *gr;

  if (getuid () != 0)
    g_error ("test-sharing creates users and a group: run it as root (CI does)");
  f->tmp = test_make_tmpdir ();
  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  f->group = g_strdup_printf ("tsg%d", (int) getpid () % 100000);
  test_run_or_fail ((const char *[]) { "groupadd", f->group, NULL });
  for (int i = 0; i < 2; i++)
    {
      f->users[i] = g_strdup_printf ("tsu%d%c", (int) getpid () % 100000, 'a' + i);
      test_run_or_fail ((const char *[]) { "useradd", "-M", "-N", "-g", f->group, "-s", "/bin/sh", f->users[i], NULL });
    }
  gr = getgrnam (f->group);
  g_assert_nonnull (gr);
  /* The site's shared folder: group-writable, setgid, the group's. */
  f->pool = g_build_filename (f->tmp, "pools", NULL);
  g_assert_cmpint (g_mkdir (f->pool, 0755), ==, 0);
  g_assert_cmpint (chown (f->pool, 0, gr->gr_gid), ==, 0);
  g_assert_cmpint (chmod (f->pool, 02775), ==, 0);
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\n", f->pool);
  test_write_file (f->config, content);
  g_assert_cmpint (chmod (f->config, 0644), ==, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  for (int i = 0; i < 2; i++)
    {
      test_run_or_fail ((const char *[]) { "userdel", f->users[i], NULL });
      g_free (f->users[i]);
    }
  test_run_or_fail ((const char *[]) { "groupdel", f->group, NULL });
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->group);
  g_free (f->config);
  g_free (f->pool);
}

/* Runs `tessera ARGS…` as @user with umask 022; returns its exit status
 * and its output in @out. */
static int
tessera_as (Fixture *f, const char *user, char **out, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_build_filename (f->tmp, user, NULL);
  va_list ap;

  if (!g_file_test (state, G_FILE_TEST_IS_DIR))
    {
      struct passwd *pw = getpwnam (user);
      g_assert_nonnull (pw);
      g_assert_cmpint (g_mkdir (state, 0700), ==, 0);
      g_assert_cmpint (chown (state, pw->pw_uid, pw->pw_gid), ==, 0);
    }
  g_ptr_array_add (argv, g_strdup ("runuser"));
  g_ptr_array_add (argv, g_strdup ("-u"));
  g_ptr_array_add (argv, g_strdup (user));
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup ("umask 022; exec \"$@\""));
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("XDG_STATE_HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  g_ptr_array_add (argv, g_strdup ("--config"));
  g_ptr_array_add (argv, g_strdup (f->config));
  va_start (ap, first);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);

  process = g_subprocess_newv ((const char * const *) argv->pdata,
                               G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, NULL, &error);
  g_assert_no_error (error);
  return g_subprocess_get_if_exited (process) ? g_subprocess_get_exit_status (process) : 128;
}

/* The first user sets the pool up; the second runs in it and reads it. */
static void
test_two_users_share_a_pool (Fixture *f, gconstpointer data)
{
  g_autofree char *out_a = NULL;
  g_autofree char *out_b = NULL;
  g_autofree char *out_status = NULL;

  g_assert_cmpint (tessera_as (f, f->users[0], &out_a, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("first user: %s", out_a);
  g_assert_cmpint (tessera_as (f, f->users[1], &out_b, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("second user: %s", out_b);
  g_assert_cmpint (tessera_as (f, f->users[1], &out_status, "status", NULL), ==, 0);
  g_assert_nonnull (strstr (out_status, "2 of 2 free"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/sharing/two-users-share-a-setgid-pool", Fixture, NULL,
              fixture_set_up, test_two_users_share_a_pool, fixture_tear_down);
  return g_test_run ();
}
