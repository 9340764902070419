/* test-settings.c: what a program that embeds the library gets of its
 * configuration's rules: a setting's text read as its property's value
 * (tessera_settings_value_from_string(), _from_keyfile()), and a
 * configured folder opened without a link another user could have put
 * (tessera_folder_path_open()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-utils.h"

static void
test_value_from_string (void)
{
  g_autoptr(GParamSpec) count = g_param_spec_ref_sink (g_param_spec_int64 ("count", NULL, NULL, 0, 10, 0,
                                                                           G_PARAM_READWRITE));
  g_autoptr(GParamSpec) names = g_param_spec_ref_sink (g_param_spec_boxed ("names", NULL, NULL, G_TYPE_STRV,
                                                                           G_PARAM_READWRITE));
  g_autoptr(GError) error = NULL;
  GValue value = G_VALUE_INIT;
  const char * const *strv;

  g_assert_true (tessera_settings_value_from_string (count, "7", &value, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_value_get_int64 (&value), ==, 7);
  g_value_unset (&value);

  /* Out of the property's range, or not a number: said, and left unset. */
  g_assert_false (tessera_settings_value_from_string (count, "11", &value, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_assert_nonnull (strstr (error->message, "an integer from 0 to 10"));
  g_assert_false (G_IS_VALUE (&value));
  g_clear_error (&error);
  g_assert_false (tessera_settings_value_from_string (count, "seven", &value, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_assert_false (G_IS_VALUE (&value));
  g_clear_error (&error);

  /* A list: blanks around items and empty items go. */
  g_assert_true (tessera_settings_value_from_string (names, " a ; b;;", &value, &error));
  g_assert_no_error (error);
  strv = g_value_get_boxed (&value);
  g_assert_cmpuint (g_strv_length ((char **) strv), ==, 2);
  g_assert_cmpstr (strv[0], ==, "a");
  g_assert_cmpstr (strv[1], ==, "b");
  g_value_unset (&value);
}

static void
test_value_from_keyfile (void)
{
  g_autoptr(GParamSpec) count = g_param_spec_ref_sink (g_param_spec_uint64 ("count", NULL, NULL, 0, G_MAXUINT64, 0,
                                                                            G_PARAM_READWRITE));
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  GValue value = G_VALUE_INIT;

  g_assert_true (g_key_file_load_from_data (keyfile, "[resource r]\ncount=18446744073709551615\nminus=-1\n", -1,
                                            G_KEY_FILE_NONE, NULL));
  g_assert_true (tessera_settings_value_from_keyfile (keyfile, "resource r", "count", count, &value, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_value_get_uint64 (&value), ==, G_MAXUINT64);
  g_value_unset (&value);
  /* GKeyFile reads "-1" as the largest unsigned value: refused. */
  g_assert_false (tessera_settings_value_from_keyfile (keyfile, "resource r", "minus", count, &value, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_assert_nonnull (strstr (error->message, "“-1”"));
  g_assert_false (G_IS_VALUE (&value));
}

static void
test_folder_path_open (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *target = g_build_filename (tmp, "target", NULL);
  g_autofree char *shared = g_build_filename (tmp, "shared", NULL);
  g_autofree char *link = g_build_filename (shared, "pool", NULL);
  g_autofree char *missing = g_build_filename (tmp, "missing", NULL);
  g_autoptr(GError) error = NULL;
  struct stat st, target_st;
  int fd;

  g_assert_cmpint (g_mkdir (target, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (shared, 0755), ==, 0);
  g_assert_cmpint (symlink (target, link), ==, 0);
  g_assert_cmpint (stat (target, &target_st), ==, 0);

  /* A link in a folder only we may write: followed. */
  fd = tessera_folder_path_open (link, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpuint (st.st_ino, ==, target_st.st_ino);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, FD_CLOEXEC);
  close (fd);

  /* The same link in a folder anyone may write, not sticky: anyone may
   * have put it there, so it is refused, naming it. */
  g_assert_cmpint (chmod (shared, 0777), ==, 0);
  errno = 0;
  g_assert_cmpint (tessera_folder_path_open (link, &error), ==, -1);
  g_assert_cmpint (errno, ==, EPERM);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
  g_assert_nonnull (strstr (error->message, link));
  g_clear_error (&error);

  /* Nothing is made. */
  g_assert_cmpint (tessera_folder_path_open (missing, &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));

  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/settings/value-from-string", test_value_from_string);
  g_test_add_func ("/settings/value-from-keyfile", test_value_from_keyfile);
  g_test_add_func ("/settings/folder-path-open", test_folder_path_open);
  return g_test_run ();
}
