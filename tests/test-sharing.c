/* test-sharing.c: a pool shared by two users of one group, as a site sets
 * it up: a setgid, group-writable folder, each user with umask 022. Real
 * users and a group are created for the test (CI is root; without root the
 * test fails, it does not skip) and removed after.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  TestUsers *users;
  char *config;
  char *pool;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *content = NULL;

  f->users = test_users_new ("ts");
  f->tmp = test_make_tmpdir ();
  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  /* The site's shared folder: group-writable, setgid, the group's. */
  f->pool = g_build_filename (f->tmp, "pools", NULL);
  g_assert_cmpint (g_mkdir (f->pool, 0755), ==, 0);
  g_assert_cmpint (chown (f->pool, 0, f->users->gid), ==, 0);
  g_assert_cmpint (chmod (f->pool, 02775), ==, 0);
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\n", f->pool);
  test_write_file (f->config, content);
  g_assert_cmpint (chmod (f->config, 0644), ==, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->users, test_users_free);
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->config);
  g_free (f->pool);
}

/* Runs `tessera ARGS…` as @user with umask 022; returns its exit status
 * and its output in @out. */
static int
tessera_as (Fixture *f, const char *user, char **out, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *state = test_user_folder (f->tmp, user);
  g_autoptr(GBytes) bytes = NULL;
  va_list ap;
  int status;

  test_argv_tessera_as (argv, user, state, f->config, 120);
  va_start (ap, first);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
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

  g_assert_cmpint (tessera_as (f, f->users->users[0], &out_a, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("first user: %s", out_a);
  g_assert_cmpint (tessera_as (f, f->users->users[1], &out_b, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_test_message ("second user: %s", out_b);
  g_assert_cmpint (tessera_as (f, f->users->users[1], &out_status, "status", NULL), ==, 0);
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
