/* test-install.c: `meson install` puts the modules and manifests where the
 * installed library finds them without TESSERA_PLUGIN_PATH (plugins
 * acceptance 6).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <string.h>

#include "test-utils.h"

static void
test_installed_plugins_found (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  const char *libdir_option = g_getenv ("TESSERA_LIBDIR");
  g_autofree char *meson = g_find_program_in_path ("meson");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *libdir = NULL;
  g_autofree char *plugindir = NULL;
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "tessera-plugin-helper", NULL);
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *modules[] = { "countertoken", "gpu", "mutex" };

  g_assert_nonnull (build_root);
  if (meson == NULL)
    {
      g_test_skip ("meson is not in PATH");
      return;
    }
  libdir = g_build_filename (tmp, prefix,
                             g_path_is_absolute (libdir_option) ? libdir_option + strlen (prefix) : libdir_option,
                             NULL);
  plugindir = g_build_filename (libdir, "tessera-1", "plugins", NULL);

  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                              meson, "install", "-C", build_root, "--no-rebuild", "--quiet",
                              "--destdir", tmp, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (process, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&process);

  for (guint i = 0; i < G_N_ELEMENTS (modules); i++)
    {
      g_autofree char *manifest = g_strdup_printf ("%s/%s.plugin", plugindir, modules[i]);
      g_autofree char *module = g_strdup_printf ("%s/lib%s.so", plugindir, modules[i]);
      g_assert_true (g_file_test (manifest, G_FILE_TEST_IS_REGULAR));
      g_assert_true (g_file_test (module, G_FILE_TEST_IS_REGULAR));
    }

  /* The installed library, with no TESSERA_PLUGIN_PATH, finds them. */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_PLUGIN_PATH");
  g_subprocess_launcher_setenv (launcher, "LD_LIBRARY_PATH", libdir, TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, helper, "plugins", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (modules); i++)
    {
      g_autofree char *found = g_strdup_printf ("PLUGIN %s %s/%s.plugin\n", modules[i], plugindir, modules[i]);
      g_autofree char *loaded = g_strdup_printf ("LOADED %s\n", modules[i]);
      g_assert_nonnull (strstr (out, found));
      g_assert_nonnull (strstr (out, loaded));
    }
  g_assert_null (strstr (out, "ERROR"));
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/install/plugins-found-without-plugin-path", test_installed_plugins_found);
  return g_test_run ();
}
