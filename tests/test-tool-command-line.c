/* test-tool-command-line.c: the command's habits: global options, help,
 * version and the man page; its warnings and messages (French, ASCII
 * quotes), and running out of descriptors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <sys/stat.h>
#include <locale.h>
#include <string.h>
#include <unistd.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

/* ---------------------------------------------------------------------- */
/* Configuration errors: exit 78 and one message naming file, group, key */

/* Messages of the command and of the library, in French. */
static void
test_french (Fixture *f, gconstpointer data)
{
  const char *french[] = { "LC_ALL", "fr_FR.UTF-8", "LANGUAGE", "fr", NULL };
  g_autoptr(GSubprocess) no_command = NULL;
  g_autoptr(GSubprocess) bad_request = NULL;
  g_autofree char *err1 = NULL;
  g_autofree char *err2 = NULL;
  g_autoptr(GSubprocess) usage = NULL;
  g_autofree char *out3 = NULL;
  char *previous = setlocale (LC_ALL, NULL);
  g_autofree char *saved = g_strdup (previous);
  gboolean have_french = setlocale (LC_ALL, "fr_FR.UTF-8") != NULL;

  setlocale (LC_ALL, saved);
  if (!have_french)
    {
      g_test_skip ("the fr_FR.UTF-8 locale is not installed (scripts/bootstrap.sh installs it)");
      return;
    }
  no_command = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r", NULL);
  g_subprocess_communicate_utf8 (no_command, NULL, NULL, NULL, &err1, NULL);
  g_assert_cmpint (test_exit_code (no_command), ==, 64);
  /* One form, "tessera : " as every other French line of the command. */
  g_assert_cmpstr (err1, ==, "tessera : aucune commande à lancer (placez-la après « -- »)\n");

  /* From the countertoken plugin, through the library's domain. */
  bad_request = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--need", "r=many", "--", "true", NULL);
  g_subprocess_communicate_utf8 (bad_request, NULL, NULL, NULL, &err2, NULL);
  g_assert_cmpint (test_exit_code (bad_request), ==, 64);
  g_assert_nonnull (strstr (err2, "« many » n’est pas un nombre de jetons"));
  g_assert_true (g_str_has_prefix (err2, "tessera : "));

  /* The usage: GLib's word for it ("Utilisation :", as in `run --help`),
   * its placeholders translated. */
  usage = tessera_spawn (f, french, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "help", NULL);
  g_subprocess_communicate_utf8 (usage, NULL, NULL, &out3, NULL, NULL);
  g_assert_cmpint (test_exit_code (usage), ==, 0);
  g_test_message ("%s", out3);
  g_assert_true (g_str_has_prefix (out3, "Utilisation :\n  tessera [--config FICHIER] COMMANDE [OPTION…]\n"));
}

/* ---------------------------------------------------------------------- */
/* Output and habits */

/* Runs `tessera ARGS…` as typed (no --config added); output and stderr. */
static char *
run_plain (Fixture *f, int *status, const char * const *argv)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *nowhere = g_build_filename (f->tmp, "no-config", NULL);
  g_autoptr(GSubprocessLauncher) launcher =
    test_launcher_without_config (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE, state, nowhere);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_ptr_array_add (args, (gpointer) g_getenv ("TESSERA_TOOL"));
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, (gpointer) argv[i]);
  g_ptr_array_add (args, NULL);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  *status = test_exit_code (process);
  g_test_message ("%s", out);
  return out;
}

/* Global options after the subcommand; `tessera help [CMD]`; usage lines
 * that name the subcommand. */
static void
test_command_line_habits (Fixture *f, gconstpointer data)
{
  const char *run_config[] = { "run", "--config", f->config, "--need", "r", "--", "true", NULL };
  const char *status_config[] = { "status", "--json", "--config", f->config, NULL };
  const char *help[] = { "help", NULL };
  const char *help_run[] = { "help", "run", NULL };
  const char *run_help[] = { "run", "--help", NULL };
  const char *help_nothing[] = { "help", "nothing", NULL };
  g_autofree char *out1 = NULL, *out2 = NULL, *out3 = NULL, *out4 = NULL, *out5 = NULL, *out6 = NULL;
  int status;

  out1 = run_plain (f, &status, run_config);
  g_assert_cmpint (status, ==, 0);
  out2 = run_plain (f, &status, status_config);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out2, "\"name\" : \"r\""));

  out3 = run_plain (f, &status, help);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out3, "tessera [--config FILE] COMMAND [OPTION…]"));
  g_assert_nonnull (strstr (out3, "  help "));

  out4 = run_plain (f, &status, help_run);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out4, "tessera run [OPTION…]"));
  g_assert_nonnull (strstr (out4, "--need"));
  g_assert_nonnull (strstr (out4, "--config"));

  out5 = run_plain (f, &status, run_help);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out5, ==, out4);

  out6 = run_plain (f, &status, help_nothing);
  g_assert_cmpint (status, ==, 64);
  g_assert_true (g_str_has_prefix (out6, "tessera: unknown command “nothing”\n"));
}

/* A bad option, before the command or after it, says the same in one
 * line, then where to look (no whole usage), and exits 64. */
static void
test_one_voice_for_bad_options (Fixture *f, gconstpointer data)
{
  g_autofree char *in_run = NULL, *global = NULL, *command = NULL;
  int status;

  in_run = run_capture (f, &status, "run", "--bogus", "--need", "r", "--", "true", NULL);
  g_test_message ("%s", in_run);
  g_assert_cmpint (status, ==, 64);
  global = run_capture (f, &status, "--bogus", "status", NULL);
  g_test_message ("%s", global);
  g_assert_cmpint (status, ==, 64);
  command = run_capture (f, &status, "nothing", NULL);
  g_test_message ("%s", command);
  g_assert_cmpint (status, ==, 64);

  g_assert_cmpstr (in_run, ==, "tessera: Unknown option --bogus\nTry “tessera run --help”.\n");
  g_assert_cmpstr (global, ==, "tessera: Unknown option --bogus\nTry “tessera --help”.\n");
  g_assert_cmpstr (command, ==, "tessera: unknown command “nothing”\nTry “tessera --help”.\n");
}

/* Without a UTF-8 locale (cron, `su -`), quotes are ASCII ones, never
 * the '?' a conversion to ASCII leaves. */
static void
test_ascii_quotes_without_utf8 (Fixture *f, gconstpointer data)
{
  const char *c_locale[] = { "LC_ALL", "C", "LANG", "C", "LANGUAGE", "", NULL };
  g_autofree char *out = NULL, *help = NULL;
  int status;

  out = run_capture_env (f, c_locale, &status, "status", "nothing", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_cmpstr (out, ==, "tessera: no resource named \"nothing\" (see \"tessera status\")\n");

  help = run_capture_env (f, c_locale, &status, "help", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strchr (help, '?'));
  g_assert_nonnull (strstr (help, "\"tessera COMMAND --help\" tells more"));
  g_assert_nonnull (strstr (help, "COMMAND [OPTION...]"));
}

/* `tessera --version`: the version, the pool protocol it follows and
 * the library's build (two builds of one version differ); `--help`
 * lists it. */
static void
test_version (Fixture *f, gconstpointer data)
{
  g_autofree char *pattern = NULL;
  g_autoptr(GRegex) regex = NULL;
  g_autofree char *out = NULL, *help = NULL;
  int status;

  out = run_capture (f, &status, "--version", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  pattern = g_strdup_printf ("^tessera %s \\(pool protocol [0-9]+, build [^ ()]+\\)\n$",
                             g_getenv ("TESSERA_VERSION"));
  regex = g_regex_new (pattern, 0, 0, NULL);
  g_assert_true (g_regex_match (regex, out, 0, NULL));
  g_assert_nonnull (strstr (out, tessera_get_build_id ()));
  g_assert_cmpstr (tessera_get_build_id (), !=, "");

  help = run_capture (f, &status, "--help", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (help, "--version"));
}

/* The man page has examples, says --version, and describes run as a list
 * of items, not one long paragraph. */
static void
test_man_page (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_test_build_filename (G_TEST_DIST, "..", "data", "tessera.1", NULL);
  g_autofree char *text = NULL;
  g_autofree char *run = NULL;
  const char *start, *end;
  guint items = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\n.SH EXAMPLES\n"));
  g_assert_nonnull (strstr (text, "\n.B tessera \\-\\-version\n"));           /* SYNOPSIS */
  g_assert_nonnull (strstr (text, "\n.TP\n.B \\-\\-version\n"));              /* OPTIONS */
  /* g_error(), not g_assert_nonnull(), which cppcheck cannot know aborts */
  if ((start = strstr (text, "\n.SH DESCRIPTION\n")) == NULL ||
      (start = strstr (start, "\n.TP\n.B run\n")) == NULL ||
      (end = strstr (start + 1, "\n.TP\n.B status")) == NULL)
    g_error ("tessera.1 has no DESCRIPTION with run then status");
  run = g_strndup (start, end - start);
  for (const char *p = run; (p = strstr (p, "\n.IP ")) != NULL; p++)
    items++;
  g_assert_cmpuint (items, >=, 5);
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* The library's warnings reach a user of the command as the command's own
 * short lines, once each: not GLib's "(tessera status:PID): Tessera-WARNING". */
static void
test_warnings_are_short (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = g_build_filename (f->tmp, "r", "jobs", "bad@1.json", NULL);
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint about_bad = 0;
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  test_write_file (bad, "{not json");
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_test_message ("%s", out);
  g_assert_null (strstr (out, "WARNING"));
  g_assert_null (strstr (out, "(tessera"));
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "bad@1.json") != NULL)
      {
        g_assert_true (g_str_has_prefix (lines[i], "tessera: "));
        about_bad++;
      }
  g_assert_cmpuint (about_bad, ==, 1);
}

/* `tessera ARGS…` to its end, its descriptors limited by prlimit(1) to
 * @limit ("SOFT:HARD"; "SOFT:" keeps the hard limit) unless NULL: its
 * exit status; its error output in @err. */
static int
run_limited (Fixture *f, const char *limit, const char * const *args, char **err)
{
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);

  if (limit != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("prlimit"));
      g_ptr_array_add (argv, g_strdup_printf ("--nofile=%s", limit));
      g_ptr_array_add (argv, g_strdup ("--"));
    }
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  g_ptr_array_add (argv, g_strdup ("--config"));
  g_ptr_array_add (argv, g_strdup (f->config));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, NULL, err, &error);
  g_assert_no_error (error);
  return test_exit_code (process);
}

/* Out of descriptors, whatever the limit (the hard one too, so that it
 * cannot be raised), a command does its work or exits 71 (EX_OSERR) with
 * one line that says why: never GLib's abort (133, "Creating pipes for
 * GWakeup") nor a usage error (64), nor a trail of half-failed steps. */
static void
test_out_of_descriptors (Fixture *f, gconstpointer data)
{
  static const char * const limits[] = {
    "4:4", "5:5", "6:6", "7:7", "8:8", "10:10", "12:12", "13:13", "14:14", "15:15", "16:16", "17:17",
    "18:18", "20:20", "24:24", "32:32", "48:48", "64:64", "6:", "14:", "15:",
  };
  static const char * const status_args[] = { "status", NULL };
  static const char * const no_wait_args[] = { "run", "--no-wait", "--need", "r=1", "--", "true", NULL };
  static const char * const timeout_args[] = { "run", "--timeout", "0.2", "--need", "r=1", "--", "true", NULL };
  /* With the only unit held: status shows it, a run gives up (75). */
  static const struct { const char * const *args; int status; } commands[] = {
    { status_args, 0 }, { no_wait_args, 75 }, { timeout_args, 75 },
  };
  g_autoptr(GSubprocess) holder = hold_r (f);

  for (guint l = 0; l < G_N_ELEMENTS (limits); l++)
    for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
      {
        g_autofree char *err = NULL;
        g_autofree char *shown = NULL;
        int status = run_limited (f, limits[l], commands[c].args, &err);

        shown = g_strjoinv (" ", (char **) commands[c].args);
        g_test_message ("nofile %s, %s: exit %d\n%s", limits[l], shown, status, err);
        if (status == 71)
          {
            assert_one_message (err);
            g_assert_nonnull (strstr (err, "descriptors"));
          }
        else
          {
            g_assert_cmpint (status, ==, commands[c].status);
            g_assert_null (strstr (err, "Too many open files"));
          }
      }
  test_let_go (holder);
}

/* `tessera --config CONFIG status` under a limit of @limit descriptors
 * ("SOFT:HARD"), with /proc hidden (an empty tmpfs over it, in a mount
 * namespace of its own): its exit status; its error output in @err. */
static int
run_limited_without_proc (Fixture *f, const char *limit, char **err)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *script = g_strdup_printf ("mount -t tmpfs tmpfs /proc || exit 99; "
                                             "exec prlimit --nofile=%s -- '%s' --config '%s' status",
                                             limit, g_getenv ("TESSERA_TOOL"), f->config);
  g_autoptr(GSubprocessLauncher) launcher =
    g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  process = g_subprocess_launcher_spawn (launcher, &error, "unshare", "--mount", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, NULL, err, &error);
  g_assert_no_error (error);
  return test_exit_code (process);
}

/* The start-up check counts the free descriptors (/proc/self/fd) rather
 * than open them all: with 0, 1 and 2 open, a limit of 67 leaves the 64
 * it needs and passes, one of 66 leaves 63 and fails, saying so as when
 * it opened them one by one, which it still does without /proc. A count
 * that finds one more free than there are (the eventfd it made, closed
 * since, taken for one of the 64, say) passes 66 and fails here. */
static void
test_descriptors_counted (Fixture *f, gconstpointer data)
{
  static const char * const status_args[] = { "status", NULL };
  const char *too_few = "tessera: too few file descriptors: only 63 more can be opened under this process's limit "
                        "of 66 (ulimit -n, at most ulimit -Hn), Tessera needs 64\n";
  g_autofree char *enough = NULL;
  g_autofree char *short_of = NULL;
  int status;

  status = run_limited (f, "67:67", status_args, &enough);
  g_test_message ("nofile 67: exit %d\n%s", status, enough);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (enough, "descriptors"));
  status = run_limited (f, "66:66", status_args, &short_of);
  g_test_message ("nofile 66: exit %d\n%s", status, short_of);
  g_assert_cmpint (status, ==, 71);
  g_assert_cmpstr (short_of, ==, too_few);

  if (getuid () != 0 || test_under_sanitizer ())
    {
      g_test_message ("without /proc: not checked, %s",
                      getuid () != 0 ? "hiding /proc needs root" : "a sanitizer build cannot start without it");
      return;
    }
  g_clear_pointer (&short_of, g_free);
  status = run_limited_without_proc (f, "66:66", &short_of);
  g_test_message ("without /proc, nofile 66: exit %d\n%s", status, short_of);
  g_assert_cmpint (status, ==, 71);
  g_assert_cmpstr (short_of, ==, too_few);
}

/* Out of descriptors while it takes many lease pools (issue 38, review
 * finding 6): whatever the limit that passes the start check, a run does
 * its work or exits 71, never GLib's abort (133, 134) when
 * a host lease's renewer cannot make its main context's eventfd. Each
 * lease pool taken costs descriptors, so some limit runs out while the
 * run takes them, at a different pool for each limit. */
static void
test_out_of_descriptors_lease_pools (Fixture *f, gconstpointer data)
{
  g_autoptr(GString) config = g_string_new (NULL);
  g_autoptr(GPtrArray) no_wait_args = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) wait_args = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *commands[] = { no_wait_args, wait_args };
  g_autofree char *made = NULL;
  int status;

  g_ptr_array_add (no_wait_args, g_strdup ("run"));
  g_ptr_array_add (no_wait_args, g_strdup ("--no-wait"));
  g_ptr_array_add (wait_args, g_strdup ("run"));
  g_ptr_array_add (wait_args, g_strdup ("--timeout"));
  g_ptr_array_add (wait_args, g_strdup ("30"));
  for (int i = 0; i < 40; i++)
    {
      g_string_append_printf (config, "[resource l%d]\ntype=countertoken\npath=%s/l%d\ntotal=2\nhost-lease=5\n\n",
                              i, f->tmp, i);
      for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
        {
          g_ptr_array_add (commands[c], g_strdup ("--need"));
          g_ptr_array_add (commands[c], g_strdup_printf ("l%d=1", i));
        }
    }
  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    {
      g_ptr_array_add (commands[c], g_strdup ("--"));
      g_ptr_array_add (commands[c], g_strdup ("true"));
      g_ptr_array_add (commands[c], NULL);
    }
  test_write_file (f->config, config->str);
  /* Makes the pools, without a limit. */
  status = run_limited (f, NULL, (const char * const *) no_wait_args->pdata, &made);
  g_assert_cmpint (status, ==, 0);

  for (guint limit = 64; limit <= 112; limit++)
    for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
      {
        g_autofree char *nofile = g_strdup_printf ("%u:%u", limit, limit);
        g_autofree char *err = NULL;

        status = run_limited (f, nofile, (const char * const *) commands[c]->pdata, &err);
        g_test_message ("nofile %s, %s: exit %d\n%s", nofile, c == 0 ? "--no-wait" : "--timeout 30", status, err);
        g_assert_cmpint (status, !=, 133);
        g_assert_cmpint (status, !=, 134);
        if (status != 0)
          g_assert_cmpint (status, ==, 71);
      }
}

/* A hundred lock files that cannot be read (cut short, FIFOs) make one
 * line of each command that looks at them, not a hundred. */
static void
test_hundred_unreadable_one_line (Fixture *f, gconstpointer data)
{
  static const char * const status_args[] = { "status", NULL };
  static const char * const no_wait_args[] = { "run", "--no-wait", "--need", "r=1", "--", "true", NULL };
  static const char * const clean_args[] = { "clean", NULL };
  static const char * const * const commands[] = { status_args, no_wait_args, clean_args };
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* makes the pool */
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 50; i++)
    {
      g_autofree char *cut = g_strdup_printf ("%s/cut@%d.json", jobs, i);
      g_autofree char *fifo = g_strdup_printf ("%s/fifo@%d.json", jobs, i);
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/job%d\", \"information\": {\"count\": 1}, \"proc",
                                               f->tmp, i);

      test_write_file (cut, text);
      g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
    }
  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    {
      g_autofree char *err = NULL;
      g_auto(GStrv) lines = NULL;
      guint about_jobs = 0;

      status = run_limited (f, NULL, commands[c], &err);
      g_test_message ("%s: exit %d\n%s", commands[c][0], status, err);
      g_assert_true (status == 0 || (commands[c] == no_wait_args && status == 75));
      lines = g_strsplit (err, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (strstr (lines[i], jobs) != NULL)
          {
            about_jobs++;
            g_assert_nonnull (strstr (lines[i], "100 "));
          }
      g_assert_cmpuint (about_jobs, ==, 1);
      /* And at most the command's own line besides. */
      g_assert_cmpuint (g_strv_length (lines), <=, 3);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/command-line/habits", test_command_line_habits);
  ADD ("/tool/warnings-are-the-command-s-own", test_warnings_are_short);
  ADD ("/tool/warnings/hundred-unreadable-files-one-line", test_hundred_unreadable_one_line);
  ADD ("/tool/out-of-descriptors/one-line-and-71", test_out_of_descriptors);
  ADD ("/tool/out-of-descriptors/free-ones-counted", test_descriptors_counted);
  ADD ("/tool/out-of-descriptors/lease-pools-never-abort", test_out_of_descriptors_lease_pools);
  ADD ("/tool/translation/french", test_french);
  ADD ("/tool/command-line/one-voice-for-bad-options", test_one_voice_for_bad_options);
  ADD ("/tool/translation/ascii-quotes-without-utf8", test_ascii_quotes_without_utf8);
  ADD ("/tool/command-line/version", test_version);
  ADD ("/tool/man-page/examples-version-run-items", test_man_page);
  return g_test_run ();
}
