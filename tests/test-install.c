/* test-install.c: `meson install` puts the modules and manifests where the
 * installed library finds them without TESSERA_PLUGIN_PATH (plugins
 * acceptance 6).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <string.h>

#include "test-utils.h"

#include <tessera/tessera.h>

#if !TESSERA_CHECK_VERSION (0, 1, 0)
#error "TESSERA_CHECK_VERSION (0, 1, 0) must hold from the first release on"
#endif

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

/* The example builds against the installed library with nothing but
 * `pkg-config --cflags --libs tessera-1`, and runs. */
static void
test_example_builds_with_pkg_config (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  const char *libdir_option = g_getenv ("TESSERA_LIBDIR");
  g_autofree char *meson = g_find_program_in_path ("meson");
  g_autofree char *cc = g_find_program_in_path ("cc");
  g_autofree char *pkg_config = g_find_program_in_path ("pkg-config");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *dest_prefix = g_build_filename (tmp, prefix, NULL);
  g_autofree char *libdir = NULL;
  g_autofree char *pc_dir = g_build_filename (tmp, "pc", NULL);
  g_autofree char *pc_in = NULL;
  g_autofree char *pc_text = NULL;
  g_autofree char *pc_out = g_build_filename (pc_dir, "tessera-1.pc", NULL);
  g_autofree char *flags = NULL;
  g_autofree char *example = g_test_build_filename (G_TEST_DIST, "..", "examples", "tessera-demo.c", NULL);
  g_autofree char *program = g_build_filename (tmp, "tessera-demo", NULL);
  g_autofree char *command = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) pc = NULL;

  if (meson == NULL || cc == NULL || pkg_config == NULL)
    {
      g_test_skip ("meson, cc or pkg-config is not in PATH");
      return;
    }
  if (g_getenv ("ASAN_OPTIONS") != NULL || g_getenv ("TSAN_OPTIONS") != NULL)
    {
      g_test_skip ("a sanitizer build's library needs the sanitizer runtime in the program too");
      return;
    }
  libdir = g_build_filename (tmp, prefix,
                             g_path_is_absolute (libdir_option) ? libdir_option + strlen (prefix) : libdir_option,
                             NULL);
  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                              meson, "install", "-C", build_root, "--no-rebuild", "--quiet",
                              "--destdir", tmp, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (process, NULL, &error));
  g_clear_object (&process);

  /* The installed .pc names the real prefix; point it at the DESTDIR copy
   * (only Tessera's own prefix moves: its dependencies stay the system's). */
  pc_in = g_build_filename (libdir, "pkgconfig", "tessera-1.pc", NULL);
  g_assert_true (g_file_get_contents (pc_in, &pc_text, NULL, NULL));
  pc = g_string_new (pc_text);
  {
    g_autofree char *from = g_strdup_printf ("prefix=%s\n", prefix);
    g_autofree char *to = g_strdup_printf ("prefix=%s\n", dest_prefix);
    g_assert_cmpuint (g_string_replace (pc, from, to, 1), ==, 1);
  }
  g_mkdir_with_parents (pc_dir, 0777);
  g_assert_true (g_file_set_contents (pc_out, pc->str, -1, NULL));

  {
    g_autoptr(GSubprocessLauncher) pkg = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
    g_autoptr(GSubprocess) query = NULL;
    g_subprocess_launcher_setenv (pkg, "PKG_CONFIG_PATH", pc_dir, TRUE);
    query = g_subprocess_launcher_spawn (pkg, &error, pkg_config, "--cflags", "--libs", "tessera-1", NULL);
    g_assert_no_error (error);
    g_subprocess_communicate_utf8 (query, NULL, NULL, &flags, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (g_subprocess_get_exit_status (query), ==, 0);
  }
  g_strstrip (flags);
  g_assert_nonnull (strstr (flags, dest_prefix));
  {
    g_auto(GStrv) parsed = NULL;
    g_autoptr(GPtrArray) argv = g_ptr_array_new ();
    g_autoptr(GSubprocess) compile = NULL;

    g_assert_true (g_shell_parse_argv (flags, NULL, &parsed, &error));
    g_ptr_array_add (argv, cc);
    g_ptr_array_add (argv, (gpointer) "-o");
    g_ptr_array_add (argv, program);
    g_ptr_array_add (argv, example);
    for (guint i = 0; parsed[i] != NULL; i++)
      g_ptr_array_add (argv, parsed[i]);
    g_ptr_array_add (argv, NULL);
    command = g_strjoinv (" ", (char **) argv->pdata);
    g_test_message ("%s", command);
    compile = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_NONE, &error);
    g_assert_no_error (error);
    g_assert_true (g_subprocess_wait_check (compile, NULL, &error));
    g_assert_no_error (error);
  }

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_PLUGIN_PATH");
  g_subprocess_launcher_setenv (launcher, "LD_LIBRARY_PATH", libdir, TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, program, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s", out);
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  g_assert_nonnull (strstr (out, "the pool has recovered"));
  test_remove_tree (tmp);
}

/* The installed `tessera` finds its library without LD_LIBRARY_PATH, even
 * under a prefix the dynamic linker does not search (here: a DESTDIR). */
static void
test_tool_runs_without_library_path (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  const char *bindir_option = g_getenv ("TESSERA_BINDIR");
  g_autofree char *meson = g_find_program_in_path ("meson");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *tool = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (build_root);
  g_assert_nonnull (bindir_option);
  if (meson == NULL)
    {
      g_test_skip ("meson is not in PATH");
      return;
    }
  tool = g_build_filename (tmp, prefix,
                           g_path_is_absolute (bindir_option) ? bindir_option + strlen (prefix) : bindir_option,
                           "tessera", NULL);
  process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                              meson, "install", "-C", build_root, "--no-rebuild", "--quiet",
                              "--destdir", tmp, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (process, NULL, &error));
  g_clear_object (&process);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_unsetenv (launcher, "LD_LIBRARY_PATH");
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, tool, "--version", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  g_assert_true (g_str_has_prefix (out, "tessera "));
  test_remove_tree (tmp);
}

/* The version macros say the project's version, and compare as a
 * program expects. */
static void
test_version_macros (void)
{
  g_autofree char *version = g_strdup_printf ("%d.%d.%d", TESSERA_MAJOR_VERSION,
                                              TESSERA_MINOR_VERSION, TESSERA_MICRO_VERSION);

  g_assert_cmpstr (version, ==, g_getenv ("TESSERA_VERSION"));
  g_assert_true (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, TESSERA_MINOR_VERSION, TESSERA_MICRO_VERSION));
  g_assert_true (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, TESSERA_MINOR_VERSION, 0));
  g_assert_true (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, 0, 0));
  g_assert_false (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, TESSERA_MINOR_VERSION, TESSERA_MICRO_VERSION + 1));
  g_assert_false (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, TESSERA_MINOR_VERSION + 1, 0));
  g_assert_false (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION + 1, 0, 0));
  if (TESSERA_MINOR_VERSION > 0)
    g_assert_true (TESSERA_CHECK_VERSION (TESSERA_MAJOR_VERSION, TESSERA_MINOR_VERSION - 1, 99));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/install/plugins-found-without-plugin-path", test_installed_plugins_found);
  g_test_add_func ("/install/example-builds-with-pkg-config", test_example_builds_with_pkg_config);
  g_test_add_func ("/install/tool-runs-without-library-path", test_tool_runs_without_library_path);
  g_test_add_func ("/install/version-macros", test_version_macros);
  return g_test_run ();
}
