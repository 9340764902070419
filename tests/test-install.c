/* test-install.c: `meson install` puts the modules and manifests where the
 * installed library finds them without TESSERA_PLUGIN_PATH (plugins
 * acceptance 6).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <stdarg.h>
#include <string.h>

#include "test-utils.h"

#include <tessera/tessera.h>

#if !TESSERA_CHECK_VERSION (0, 1, 0)
#error "TESSERA_CHECK_VERSION (0, 1, 0) must hold from the first release on"
#endif

static void
run_checked (const char *const *env, const char *const *argv)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *command = g_strjoinv (" ", (char **) argv);

  for (guint i = 0; env != NULL && env[i] != NULL; i += 2)
    g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);
  process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s\n%s", command, out);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
}

/* `meson install --destdir @dest` of the build under test. */
static void
install_into (const char *dest)
{
  g_autofree char *meson = g_find_program_in_path ("meson");
  const char *argv[] = {
    meson, "install", "-C", g_getenv ("TESSERA_BUILD_ROOT"), "--no-rebuild", "--quiet", "--destdir", dest, NULL
  };

  run_checked (NULL, argv);
}

/* Where an install folder option (absolute under the prefix, or relative
 * to it) lands under the DESTDIR @dest. */
static char *
under_dest (const char *dest, const char *option)
{
  const char *prefix = g_getenv ("TESSERA_PREFIX");

  return g_build_filename (dest, prefix, g_path_is_absolute (option) ? option + strlen (prefix) : option, NULL);
}

static void
test_installed_plugins_found (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
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
  libdir = under_dest (tmp, libdir_option);
  plugindir = g_build_filename (libdir, "tessera-1", "plugins", NULL);

  install_into (tmp);

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
  if (test_under_sanitizer ())
    {
      g_test_skip ("a sanitizer build's library needs the sanitizer runtime in the program too");
      return;
    }
  libdir = under_dest (tmp, libdir_option);
  install_into (tmp);

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
  {
    g_autofree char *bindir = under_dest (tmp, bindir_option);

    tool = g_build_filename (bindir, "tessera", NULL);
  }
  install_into (tmp);

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

/* ---------------------------------------------------------------------- */
/* The guide's plugin, built out of tree from its installed copy */

static GSubprocess *
tessera_run (const char *tool, const char *config, const char *plugindir, GSubprocessFlags flags,
             const char *first, ...)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  GSubprocess *process;
  va_list ap;

  g_ptr_array_add (argv, (gpointer) tool);
  g_ptr_array_add (argv, (gpointer) "--config");
  g_ptr_array_add (argv, (gpointer) config);
  va_start (ap, first);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_unsetenv (launcher, "LD_LIBRARY_PATH");
  g_subprocess_launcher_setenv (launcher, "TESSERA_PLUGIN_PATH", plugindir, TRUE);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  return process;
}

static int
exit_status (GSubprocess *process)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (g_subprocess_wait (process, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  return g_subprocess_get_exit_status (process);
}

typedef struct
{
  const char *jobs;
  JsonObject *recorded;
} RecordedLockFile;

static gboolean
lock_file_recorded (gpointer data)
{
  RecordedLockFile *sought = data;
  g_autoptr(GDir) dir = g_dir_open (sought->jobs, 0, NULL);
  const char *name = dir ? g_dir_read_name (dir) : NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) root = NULL;

  if (name == NULL || !g_str_has_suffix (name, ".json"))
    return FALSE;
  path = g_build_filename (sought->jobs, name, NULL);
  if (g_file_get_contents (path, &text, NULL, NULL) &&
      (root = json_from_string (text, NULL)) != NULL && JSON_NODE_HOLDS_OBJECT (root) &&
      json_object_has_member (json_node_get_object (root), "process"))
    sought->recorded = json_object_ref (json_node_get_object (root));
  return sought->recorded != NULL;
}

/* The one lock file in @jobs, once the launcher has recorded its process
 * (polling a file another process writes). */
static JsonObject *
wait_for_recorded_lock_file (const char *jobs)
{
  RecordedLockFile sought = { jobs, NULL };

  test_wait_until (lock_file_recorded, &sought, 60, "no lock file with its process in %s", jobs);
  return sought.recorded;
}

/* docs/writing-a-plugin.md: the licences plugin, copied from where Tessera
 * installs its documentation, is built with meson against the installed
 * library found by pkg-config, installed into
 * `pkg-config --variable=plugindir tessera-1`, and run by the installed
 * `tessera run`: one user holds at most `per-user` licences. */
static void
test_licences_plugin_out_of_tree (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  const char *libdir_option = g_getenv ("TESSERA_LIBDIR");
  const char *bindir_option = g_getenv ("TESSERA_BINDIR");
  const char *datadir_option = g_getenv ("TESSERA_DATADIR");
  g_autofree char *meson = g_find_program_in_path ("meson");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *dest_prefix = g_build_filename (tmp, prefix, NULL);
  g_autofree char *libdir = NULL;
  g_autofree char *tool = NULL;
  g_autofree char *source = NULL;
  g_autofree char *plugindir = NULL;
  g_autofree char *pc_dir = g_build_filename (tmp, "pc", NULL);
  g_autofree char *pc_in = NULL;
  g_autofree char *pc_text = NULL;
  g_autofree char *pc_out = g_build_filename (pc_dir, "tessera-1.pc", NULL);
  g_autofree char *build = g_build_filename (tmp, "licences-build", NULL);
  g_autofree char *pool = g_build_filename (tmp, "matlab", NULL);
  g_autofree char *jobs = g_build_filename (pool, "jobs", NULL);
  g_autofree char *config = g_build_filename (tmp, "tessera.conf", NULL);
  g_autofree char *config_text = NULL;
  g_autofree char *module = NULL;
  g_autofree char *ready = NULL;
  g_autoptr(GString) pc = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autoptr(GDataInputStream) holder_out = NULL;
  g_autoptr(JsonObject) lock_file = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *information;

  g_assert_nonnull (build_root);
  if (meson == NULL)
    {
      g_test_skip ("meson is not in PATH");
      return;
    }
  libdir = under_dest (tmp, libdir_option);
  {
    g_autofree char *bindir = under_dest (tmp, bindir_option);
    g_autofree char *datadir = under_dest (tmp, datadir_option);
    tool = g_build_filename (bindir, "tessera", NULL);
    source = g_build_filename (datadir, "doc", "tessera-1", "examples", "licences", NULL);
  }
  plugindir = g_build_filename (libdir, "tessera-1", "plugins", NULL);
  module = g_build_filename (plugindir, "liblicences.so", NULL);

  install_into (tmp);
  g_assert_true (g_file_test (source, G_FILE_TEST_IS_DIR));

  /* The .pc names the real prefix; point it at the DESTDIR copy. */
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

  /* As the guide says: meson setup, meson install. */
  {
    const char *env[] = { "PKG_CONFIG_PATH", pc_dir, NULL };
    const char *setup[] = { meson, "setup", build, source, NULL };
    const char *install[] = { meson, "install", "-C", build, NULL };
    run_checked (env, setup);
    run_checked (env, install);
  }
  g_assert_true (g_file_test (module, G_FILE_TEST_IS_REGULAR));

  config_text = g_strdup_printf ("[resource matlab]\ntype=licences\npath=%s\ntotal=4\nper-user=2\n", pool);
  g_assert_true (g_file_set_contents (config, config_text, -1, NULL));

  /* This user takes 2 of the 4 licences... */
  holder = tessera_run (tool, config, plugindir, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                        "run", "--need", "matlab=2", "--", "sh", "-c", "echo ready; read x || true", NULL);
  holder_out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  ready = g_data_input_stream_read_line_utf8 (holder_out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ready, ==, "ready");

  /* ...and its lock file, rewritten when the process was recorded, still
   * says how many and whose. */
  lock_file = wait_for_recorded_lock_file (jobs);
  information = json_object_get_object_member (lock_file, "information");
  g_assert_nonnull (information);
  g_assert_cmpint (json_object_get_int_member (information, "count"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (information, "user"), ==, g_get_user_name ());

  /* Two are free, but not for this user. */
  other = tessera_run (tool, config, plugindir, G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                       "run", "--no-wait", "--need", "matlab=1", "--", "true", NULL);
  g_assert_cmpint (exit_status (other), ==, 75);
  g_clear_object (&other);
  /* More than the cap can never be granted. */
  other = tessera_run (tool, config, plugindir, G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                       "run", "--no-wait", "--need", "matlab=3", "--", "true", NULL);
  g_assert_cmpint (exit_status (other), ==, 69);
  g_clear_object (&other);

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (exit_status (holder), ==, 0);
  other = tessera_run (tool, config, plugindir, G_SUBPROCESS_FLAGS_NONE,
                       "run", "--no-wait", "--need", "matlab=2", "--", "true", NULL);
  g_assert_cmpint (exit_status (other), ==, 0);
  test_remove_tree (tmp);
}

/* Python under a private prefix, with exactly the lines the README's
 * "Other languages" gives (GI_TYPELIB_PATH and LD_LIBRARY_PATH, which
 * "Failed to load shared library 'libtessera-1.so.0' referenced by the
 * typelib" asked for), runs examples/tessera-embed.py. */
static void
test_python_under_prefix (void)
{
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *dest_prefix = g_build_filename (tmp, prefix, NULL);
  g_autofree char *libdir = under_dest (tmp, g_getenv ("TESSERA_LIBDIR"));
  g_autofree char *typelib = g_build_filename (libdir, "girepository-1.0", "Tessera-1.0.typelib", NULL);
  g_autofree char *readme_path = g_test_build_filename (G_TEST_DIST, "..", "README.md", NULL);
  g_autofree char *example = g_test_build_filename (G_TEST_DIST, "..", "examples", "tessera-embed.py", NULL);
  g_autofree char *folder = g_build_filename (tmp, "cpu", NULL);
  g_autofree char *readme = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  guint documented = 0;

  if (test_under_sanitizer ())
    {
      g_test_skip ("a sanitizer build's library needs the sanitizer runtime in Python too");
      return;
    }
  install_into (tmp);
  if (!g_file_test (typelib, G_FILE_TEST_IS_REGULAR))
    {
      g_test_skip ("built without introspection");
      return;
    }

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_unsetenv (launcher, "GI_TYPELIB_PATH");
  g_subprocess_launcher_unsetenv (launcher, "LD_LIBRARY_PATH");
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_PLUGIN_PATH");
  g_assert_true (g_file_get_contents (readme_path, &readme, NULL, NULL));
  lines = g_strsplit (readme, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *line = g_strstrip (lines[i]);
      g_autofree char *value = NULL;
      g_autofree char *name = NULL;
      const char *equals;

      if (!g_str_has_prefix (line, "export GI_TYPELIB_PATH=") && !g_str_has_prefix (line, "export LD_LIBRARY_PATH="))
        continue;
      equals = strchr (line, '=');
      name = g_strndup (line + strlen ("export "), (gsize) (equals - line) - strlen ("export "));
      /* $PREFIX/lib/x86_64-linux-gnu is Debian's libdir, as the README says. */
      value = test_substitute (equals + 1, "$PREFIX/lib/x86_64-linux-gnu", libdir);
      {
        g_autofree char *rest = test_substitute (value, "$PREFIX", dest_prefix);
        g_test_message ("%s=%s", name, rest);
        g_subprocess_launcher_setenv (launcher, name, rest, TRUE);
      }
      documented++;
    }
  g_assert_cmpuint (documented, ==, 2);
  process = g_subprocess_launcher_spawn (launcher, &error, test_python (), example, folder, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_subprocess_get_if_exited (process));
  g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 0);
  g_assert_nonnull (strstr (out, "took 2 of cpu"));
  test_remove_tree (tmp);
}

/* ---------------------------------------------------------------------- */
/* The README's "Install as a site", followed */

/* The README's "Install as a site" section. */
static char *
site_section (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "README.md", NULL);
  g_autofree char *readme = NULL;
  const char *start, *end;

  g_assert_true (g_file_get_contents (path, &readme, NULL, NULL));
  /* g_error(), not g_assert_nonnull(), which cppcheck cannot know aborts */
  if ((start = strstr (readme, "\n## Install as a site\n")) == NULL || (end = strstr (start + 1, "\n## ")) == NULL)
    g_error ("README.md has no “Install as a site” section");
  return g_strndup (start, end - start);
}

/* The line of @text that holds @needle, whole. */
static char *
line_with (const char *text, const char *needle)
{
  const char *at = strstr (text, needle);
  const char *start, *end;

  if (at == NULL)
    g_error ("no line with “%s” in:\n%s", needle, text);
  for (start = at; start > text && start[-1] != '\n'; start--)
    ;
  end = strchr (at, '\n');
  return g_strndup (start, end != NULL ? (gsize) (end - start) : strlen (start));
}

/* `sh -c SCRIPT` with @env (NAME, VALUE pairs; a NULL VALUE unsets),
 * its output (stderr too) in @out; its exit status. */
static int
sh_with (const char * const *env, const char *script, char **out)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; env[i] != NULL; i += 2)
    if (env[i + 1] != NULL)
      g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);
    else
      g_subprocess_launcher_unsetenv (launcher, env[i]);
  process = g_subprocess_launcher_spawn (launcher, &error, "/bin/sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, out, NULL, &error);
  g_assert_no_error (error);
  g_test_message ("%s\n%s", script, *out);
  g_assert_true (g_subprocess_get_if_exited (process));
  return g_subprocess_get_exit_status (process);
}

/* The host id in the lock file a `tessera run` holding r shows. */
static char *
host_id_of_run (const char * const *env, const char *tool, const char *config, const char *pool)
{
  g_autofree char *script = g_strdup_printf ("'%s' --config '%s' run --need r -- sh -c 'cat \"$1\"/r/jobs/*.json' sh '%s'",
                                             tool, config, pool);
  g_autofree char *out = NULL;
  const char *at, *end;

  g_assert_cmpint (sh_with (env, script, &out), ==, 0);
  if ((at = strstr (out, "\"host_id\":\"")) == NULL || (end = strchr (at + strlen ("\"host_id\":\""), '"')) == NULL)
    g_error ("no host id in %s", out);
  at += strlen ("\"host_id\":\"");
  return g_strndup (at, end - at);
}

/* As the README's "Install as a site" says, under a DESTDIR standing for
 * its /opt/tessera: installed, the command is found on PATH and its page
 * with MANPATH, the sample configuration put where the system's goes is
 * the one `tessera config show` reads (and `config check` finds it
 * good), the installed command and the build's share this host's
 * identity, and `ninja uninstall` leaves none of the installed files. */
static void
test_install_as_a_site (void)
{
  const char *build_root = g_getenv ("TESSERA_BUILD_ROOT");
  const char *prefix = g_getenv ("TESSERA_PREFIX");
  g_autofree char *ninja = g_find_program_in_path ("ninja");
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *dest_prefix = g_build_filename (tmp, prefix, NULL);
  g_autofree char *bindir = under_dest (tmp, g_getenv ("TESSERA_BINDIR"));
  g_autofree char *tool = g_build_filename (bindir, "tessera", NULL);
  g_autofree char *section = site_section ();
  g_autofree char *export_line = line_with (section, "export PATH=");
  g_autofree char *copy_line = line_with (section, "tessera.conf.sample ");
  g_autofree char *log_path = g_build_filename (build_root, "meson-logs", "install-log.txt", NULL);
  g_autofree char *log = NULL;
  g_autofree char *path_value = NULL;
  g_autofree char *manpath_value = NULL;
  g_autofree char *sample = NULL;
  g_autofree char *xdg = g_build_filename (tmp, "etc", "xdg", NULL);
  g_autofree char *system_config = g_build_filename (xdg, "tessera", "tessera.conf", NULL);
  g_autofree char *user_config = g_build_filename (tmp, "user-config", NULL);
  g_autofree char *out = NULL;
  g_autofree char *read = NULL;
  g_auto(GStrv) words = NULL;
  g_auto(GStrv) installed = NULL;
  guint n_installed = 0;

  g_assert_nonnull (build_root);
  g_assert_nonnull (ninja);
  install_into (tmp);
  g_assert_true (g_file_get_contents (log_path, &log, NULL, NULL));
  installed = g_strsplit (log, "\n", -1);

  /* export PATH=/opt/tessera/bin:$PATH MANPATH=/opt/tessera/share/man:$MANPATH */
  words = g_strsplit_set (export_line, " \t", -1);
  for (guint i = 0; words[i] != NULL && *words[i] != '#'; i++)
    {
      g_autofree char *mapped = test_substitute (words[i], "/opt/tessera", dest_prefix);
      g_autofree char *value = NULL;

      if (g_str_has_prefix (mapped, "PATH="))
        {
          value = test_substitute (mapped + strlen ("PATH="), "$PATH", g_getenv ("PATH"));
          path_value = g_steal_pointer (&value);
        }
      else if (g_str_has_prefix (mapped, "MANPATH="))
        {
          const char *manpath = g_getenv ("MANPATH");

          value = test_substitute (mapped + strlen ("MANPATH="), "$MANPATH", manpath != NULL ? manpath : "");
          manpath_value = g_steal_pointer (&value);
        }
    }
  g_assert_nonnull (path_value);
  g_assert_nonnull (manpath_value);
  /* sudo cp /opt/tessera/share/doc/tessera-1/tessera.conf.sample /etc/xdg/tessera/tessera.conf */
  {
    g_auto(GStrv) cp = g_strsplit (copy_line, " ", -1);

    for (guint i = 0; cp[i] != NULL && sample == NULL; i++)
      if (g_str_has_suffix (cp[i], "tessera.conf.sample"))
        sample = test_substitute (cp[i], "/opt/tessera", dest_prefix);
    g_assert_nonnull (strstr (copy_line, " /etc/xdg/tessera/tessera.conf"));
  }
  g_assert_nonnull (sample);
  g_assert_true (g_file_test (sample, G_FILE_TEST_IS_REGULAR));

  /* sudo's secure_path does not hold the prefix's bin/: under sudo, the
   * README and docs/install.md run the installed command by its path. */
  {
    g_autofree char *init_line = line_with (section, " init ");
    g_auto(GStrv) init_words = g_strsplit (init_line, " ", -1);
    g_autofree char *command = NULL;
    g_autofree char *install_md_path = g_test_build_filename (G_TEST_DIST, "..", "docs", "install.md", NULL);
    g_autofree char *install_md = NULL;

    g_assert_cmpstr (init_words[0], ==, "sudo");
    command = test_substitute (init_words[1], "/opt/tessera", dest_prefix);
    g_assert_cmpstr (command, ==, tool);
    g_assert_null (strstr (section, "sudo tessera "));
    g_assert_true (g_file_get_contents (install_md_path, &install_md, NULL, NULL));
    g_assert_null (strstr (install_md, "sudo tessera "));
  }

  {
    const char *env[] = { "PATH", path_value, "MANPATH", manpath_value, "LD_LIBRARY_PATH", NULL,
                          "TESSERA_PLUGIN_PATH", NULL, "TESSERA_CONFIG", NULL, "XDG_CONFIG_DIRS", xdg,
                          "XDG_CONFIG_HOME", user_config, "HOME", tmp, "LC_ALL", "C", NULL };
    g_autofree char *man = g_find_program_in_path ("man");
    g_autofree char *page = NULL;

    /* The installed command, found on PATH. */
    g_assert_cmpint (sh_with (env, "command -v tessera", &out), ==, 0);
    g_strstrip (out);
    g_assert_cmpstr (out, ==, tool);
    g_clear_pointer (&out, g_free);
    g_assert_cmpint (sh_with (env, "tessera --version", &out), ==, 0);
    g_assert_true (g_str_has_prefix (out, "tessera "));
    g_clear_pointer (&out, g_free);

    /* Its page, with MANPATH (where man is installed), or at least there. */
    page = g_build_filename (dest_prefix, "share", "man", "man1", "tessera.1", NULL);
    g_assert_true (g_file_test (page, G_FILE_TEST_IS_REGULAR));
    if (man != NULL)
      {
        g_assert_cmpint (sh_with (env, "man -w tessera", &out), ==, 0);
        g_strstrip (out);
        g_assert_cmpstr (out, ==, page);
        g_clear_pointer (&out, g_free);
      }

    /* The sample, put where the system's configuration goes. */
    {
      g_autofree char *text = NULL;

      g_assert_true (g_file_get_contents (sample, &text, NULL, NULL));
      test_write_file (system_config, text);
    }
    {
      g_autofree char *check = g_strdup_printf ("tessera config check '%s'", system_config);

      g_assert_cmpint (sh_with (env, check, &out), ==, 0);
      g_assert_cmpstr (out, ==, "ok\n");
      g_clear_pointer (&out, g_free);
    }
    g_assert_cmpint (sh_with (env, "tessera config show", &out), ==, 0);
    read = g_strdup_printf ("  %s: read\n", system_config);
    g_assert_nonnull (strstr (out, read));
    g_assert_nonnull (strstr (out, "\n[resource cpu]\n"));
    g_assert_nonnull (strstr (out, "\n[resource gpu]\n"));
    g_assert_nonnull (strstr (out, "\n[resource db]\n"));
    g_clear_pointer (&out, g_free);

    /* The installed command and the build's: one host identity. */
    {
      g_autofree char *config = g_build_filename (tmp, "pool.conf", NULL);
      g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
      g_autofree char *text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", pool);
      g_autofree char *installed_id = NULL;
      g_autofree char *built_id = NULL;
      g_autofree char *built_plugins = g_build_filename (build_root, "plugins", "countertoken", NULL);
      const char *built_env[] = { "HOME", tmp, "LC_ALL", "C", "TESSERA_PLUGIN_PATH", built_plugins, NULL };

      test_write_file (config, text);
      installed_id = host_id_of_run (env, tool, config, pool);
      built_id = host_id_of_run (built_env, g_getenv ("TESSERA_TOOL"), config, pool);
      g_assert_cmpstr (installed_id, ==, built_id);
    }
  }

  /* Uninstalled: none of the installed files is left. */
  {
    const char *argv[] = { ninja, "-C", build_root, "uninstall", NULL };

    run_checked (NULL, argv);
  }
  for (guint i = 0; installed[i] != NULL; i++)
    {
      const char *file = installed[i];

      if (*file == '\0' || *file == '#')
        continue;
      g_assert_true (g_str_has_prefix (file, tmp));
      if (g_file_test (file, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        g_error ("%s is left after ninja uninstall", file);
      n_installed++;
    }
  g_assert_cmpuint (n_installed, >, 0);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/install/plugins-found-without-plugin-path", test_installed_plugins_found);
  g_test_add_func ("/install/example-builds-with-pkg-config", test_example_builds_with_pkg_config);
  g_test_add_func ("/install/tool-runs-without-library-path", test_tool_runs_without_library_path);
  g_test_add_func ("/install/version-macros", test_version_macros);
  g_test_add_func ("/install/licences-plugin-out-of-tree", test_licences_plugin_out_of_tree);
  g_test_add_func ("/install/python-under-prefix", test_python_under_prefix);
  g_test_add_func ("/install/as-a-site", test_install_as_a_site);
  return g_test_run ();
}
