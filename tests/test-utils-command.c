/* test-utils-command.c: the `tessera` command as the tests run it: its
 * state, configuration and environment, run to its end or holding
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <stdarg.h>

/* A launcher for a `tessera` that finds no configuration anywhere: its
 * XDG configuration folders are @no_config (a folder that is not there)
 * and TESSERA_CONFIG is unset; its state goes to @state. */
GSubprocessLauncher *
test_launcher_without_config (GSubprocessFlags flags, const char *state, const char *no_config)
{
  GSubprocessLauncher *launcher = g_subprocess_launcher_new (flags);

  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", no_config, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_DIRS", no_config, TRUE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_CONFIG");
  return launcher;
}

/* Appends the command `tessera --config CONFIG` with its state (and home)
 * in @state. */
void
test_argv_tessera (GPtrArray *argv, const char *state, const char *config)
{
  test_argv_tessera_env (argv, state, config, NULL);
}

/* As test_argv_tessera(), @config NULL: no --config and TESSERA_CONFIG
 * unset (the command finds its configuration itself); @env: NAME=VALUE
 * set after the state's (NULL: none). */
void
test_argv_tessera_env (GPtrArray *argv, const char *state, const char *config, const char * const *env)
{
  g_ptr_array_add (argv, g_strdup ("env"));
  if (config == NULL)
    test_argv_append (argv, (const char *[]) { "-u", "TESSERA_CONFIG", NULL });
  g_ptr_array_add (argv, g_strdup_printf ("XDG_STATE_HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("HOME=%s", state));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
  if (env != NULL)
    test_argv_append (argv, env);
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  if (config != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--config"));
      g_ptr_array_add (argv, g_strdup (config));
    }
}

/* Runs `tessera ARGS…` (@first, then the arguments after it up to a
 * NULL) to its end as test_argv_tessera_env() starts it; its exit status,
 * its output and error output in @out and @err as
 * test_run_capture_text() gives them. */
int
test_run_tessera_va (const char *state, const char *config, const char * const *env, char **out, char **err,
                     const char *first, va_list ap)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera_env (argv, state, config, env);
  test_argv_end_va (argv, first, ap);
  return test_run_capture_text (argv, out, err);
}

/* The `tessera` that @argv starts (not ended yet) as `tessera run --need
 * @need -- sh -c 'echo held; exec cat'`, once it says "held" (within
 * @timeout_s): it holds until its input is closed. */
Helper *
test_hold_argv (GPtrArray *argv, const char *need, double timeout_s)
{
  Helper *holder;

  test_argv_end (argv, (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo held; exec cat", NULL });
  holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (holder, "held", timeout_s);
  return holder;
}

gboolean
test_under_sanitizer (void)
{
  return g_getenv ("ASAN_OPTIONS") != NULL || g_getenv ("TSAN_OPTIONS") != NULL;
}
