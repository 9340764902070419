/* test-utils-pause.c: the library's pause points, armed, waited for and
 * let go
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <glib/gstdio.h>

TestPausePoint *
test_pause_point_new (const char *dir, const char *name)
{
  TestPausePoint *point = g_new0 (TestPausePoint, 1);

  point->name = g_strdup (name);
  point->dir = g_strdup (dir);
  point->reached = g_strdup_printf ("%s/%s.reached", dir, name);
  point->go = g_strdup_printf ("%s/%s.go", dir, name);
  point->env[0] = "TESSERA_PAUSE_AT";
  point->env[1] = point->name;
  point->env[2] = "TESSERA_PAUSE_DIR";
  point->env[3] = point->dir;
  point->env[4] = NULL;
  g_assert_cmpint (g_mkdir_with_parents (dir, 0777), ==, 0);
  g_unlink (point->reached);
  return point;
}

void
test_pause_point_free (TestPausePoint *point)
{
  g_free (point->name);
  g_free (point->dir);
  g_free (point->reached);
  g_free (point->go);
  g_free (point);
}

void
test_pause_point_set_launcher (TestPausePoint *point, GSubprocessLauncher *launcher)
{
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_AT", point->name, TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_DIR", point->dir, TRUE);
}

void
test_pause_point_argv_env (TestPausePoint *point, GPtrArray *argv)
{
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_AT=%s", point->name));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_DIR=%s", point->dir));
}

void
test_pause_point_arm_here (TestPausePoint *point)
{
  g_setenv ("TESSERA_PAUSE_AT", point->name, TRUE);
  g_setenv ("TESSERA_PAUSE_DIR", point->dir, TRUE);
}

void
test_pause_points_disarm_here (void)
{
  g_unsetenv ("TESSERA_PAUSE_AT");
  g_unsetenv ("TESSERA_PAUSE_DIR");
}

gboolean
test_pause_point_is_reached (TestPausePoint *point)
{
  return g_file_test (point->reached, G_FILE_TEST_EXISTS);
}

void
test_pause_point_wait (TestPausePoint *point, double timeout_s)
{
  test_wait_for_file (point->reached, timeout_s);
}

void
test_pause_point_release (TestPausePoint *point)
{
  test_write_file (point->go, "");
}
