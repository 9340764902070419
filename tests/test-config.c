/* test-config.c: `tessera config show` and `tessera config check`, and a
 * configuration file written for a newer Tessera (`[tessera] requires=`),
 * with the real command (issue 42, point 7).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include <string.h>

#include "test-utils.h"

typedef struct
{
  char *tmp;
  char *config_home;   /* $XDG_CONFIG_HOME */
  char *config_dirs;   /* $XDG_CONFIG_DIRS: two folders */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->config_home = g_build_filename (f->tmp, "home-config", NULL);
  f->config_dirs = g_strdup_printf ("%s/system-1:%s/system-2", f->tmp, f->tmp);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->config_home);
  g_free (f->config_dirs);
}

/* Runs `tessera ARGS…` to its end, with the fixture's configuration
 * folders, state and home; its output and error output apart. */
static int
run_tessera (Fixture *f, char **out, char **err, const char *first, ...)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *config_home = g_strdup_printf ("XDG_CONFIG_HOME=%s", f->config_home);
  g_autofree char *config_dirs = g_strdup_printf ("XDG_CONFIG_DIRS=%s", f->config_dirs);
  g_autofree char *home = g_strdup_printf ("HOME=%s", f->tmp);
  va_list ap;
  int status;

  va_start (ap, first);
  status = test_run_tessera_va (state, NULL, (const char *[]) { config_home, config_dirs, home, NULL }, out, err,
                                first, ap);
  va_end (ap);
  return status;
}

/* The line of @text that starts with @prefix, its position; fails when
 * there is none. */
static const char *
line_starting (const char *text, const char *prefix)
{
  g_autofree char *with_newline = g_strconcat ("\n", prefix, NULL);
  const char *found = g_str_has_prefix (text, prefix) ? text : strstr (text, with_newline);

  if (found == NULL)
    g_error ("no line starting with “%s” in:\n%s", prefix, text);
  return found;
}

static guint
count (const char *text, const char *needle)
{
  guint n = 0;

  for (const char *p = text; (p = strstr (p, needle)) != NULL; p += strlen (needle))
    n++;
  return n;
}

/* show lists every file looked for, in order, which was read, and each
 * resource the one read defines with its type, store, path and settings;
 * with no file, the built-in configuration. */
static void
test_show (Fixture *f, gconstpointer data)
{
  g_autofree char *user = g_build_filename (f->config_home, "tessera", "tessera.conf", NULL);
  g_autofree char *system_1 = g_build_filename (f->tmp, "system-1", "tessera", "tessera.conf", NULL);
  g_autofree char *system_2 = g_build_filename (f->tmp, "system-2", "tessera", "tessera.conf", NULL);
  g_autofree char *explicit = g_build_filename (f->tmp, "explicit.conf", NULL);
  g_autofree char *user_text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=3\n"
                                                "[resource m]\ntype=mutex\npath=%s/m\n", f->tmp, f->tmp);
  g_autofree char *out = NULL, *err = NULL;
  const char *at_user, *at_1, *at_2, *r, *m;

  test_write_file (user, user_text);
  test_write_file (system_1, "[resource other]\ntype=mutex\n");
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "show", NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  {
    g_autofree char *read = g_strdup_printf ("  %s: read\n", user);
    g_autofree char *not_read = g_strdup_printf ("  %s: not read", system_1);
    g_autofree char *absent = g_strdup_printf ("  %s: not there\n", system_2);

    at_user = strstr (out, read);
    at_1 = strstr (out, not_read);
    at_2 = strstr (out, absent);
  }
  g_assert_nonnull (at_user);
  g_assert_nonnull (at_1);
  g_assert_nonnull (at_2);
  g_assert_true (at_user < at_1 && at_1 < at_2);
  r = line_starting (out, "[resource r]");
  m = line_starting (out, "[resource m]");
  g_assert_true (at_2 < r && r < m);
  g_assert_null (strstr (out, "[resource other]"));
  {
    g_autofree char *r_part = g_strndup (r, m - r);
    g_autofree char *from = g_strdup_printf ("\n# from %s\n", user);
    g_autofree char *path = g_strdup_printf ("\npath=%s/r\n", f->tmp);

    g_assert_nonnull (strstr (r_part, from));
    g_assert_nonnull (strstr (r_part, "\ntype=countertoken\n"));
    g_assert_nonnull (strstr (r_part, "\nstore=folder\n"));
    g_assert_nonnull (strstr (r_part, path));
    g_assert_nonnull (strstr (r_part, "\ntotal=3\n"));
  }
  g_assert_nonnull (strstr (m, "\ntype=mutex\n"));

  /* --config comes first, and the others are not read. */
  test_write_file (explicit, "[resource e]\ntype=mutex\npath=/tmp/tessera-never/e\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_tessera (f, &out, &err, "--config", explicit, "config", "show", NULL), ==, 0);
  {
    g_autofree char *read = g_strdup_printf ("looked for:\n  %s: read\n", explicit);
    g_autofree char *not_read = g_strdup_printf ("  %s: not read", user);

    g_assert_nonnull (strstr (out, read));
    g_assert_nonnull (strstr (out, not_read));
  }
  line_starting (out, "[resource e]");
  g_assert_null (strstr (out, "[resource r]"));

  /* No file anywhere: the built-in configuration, said so. */
  g_assert_cmpint (g_remove (user), ==, 0);
  g_assert_cmpint (g_remove (system_1), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "show", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "none found: the built-in configuration"));
  g_assert_nonnull (strstr (line_starting (out, "[resource cpu]"), "\n# from the built-in configuration\n"));
}

/* check says "ok" (0) for a good file, and for a bad one the very line
 * (78) a command given it says. */
static void
test_check (Fixture *f, gconstpointer data)
{
  g_autofree char *good = g_build_filename (f->tmp, "good.conf", NULL);
  g_autofree char *bad = g_build_filename (f->tmp, "bad.conf", NULL);
  g_autofree char *good_text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=3\n", f->tmp);
  g_autofree char *bad_text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotl=3\n", f->tmp);
  g_autofree char *out = NULL, *err = NULL, *status_out = NULL, *status_err = NULL;

  test_write_file (good, good_text);
  test_write_file (bad, bad_text);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", good, NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ok\n");
  g_assert_cmpstr (err, ==, "");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", bad, NULL), ==, 78);
  g_assert_cmpstr (out, ==, "");
  g_assert_true (g_str_has_prefix (err, "tessera: "));
  g_assert_nonnull (strstr (err, bad));
  g_assert_nonnull (strstr (err, "[resource r] totl"));
  g_assert_cmpuint (count (err, "\n"), ==, 1);
  g_assert_cmpint (run_tessera (f, &status_out, &status_err, "--config", bad, "status", NULL), ==, 78);
  g_assert_cmpstr (err, ==, status_err);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A file that is not there is no configuration either. */
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", "/tmp/tessera-never/none.conf", NULL), ==, 78);
  g_assert_nonnull (strstr (err, "/tmp/tessera-never/none.conf"));
}

/* A store this Tessera does not know is a configuration error like the
 * others: check says it in one line (78) that names the value and the
 * stores it knows, and a command given the file says the same. */
static void
test_check_unknown_store (Fixture *f, gconstpointer data)
{
  g_autofree char *file = g_build_filename (f->tmp, "store.conf", NULL);
  g_autofree char *text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=3\nstore=nosuch\n",
                                           f->tmp);
  g_autofree char *out = NULL, *err = NULL, *status_out = NULL, *status_err = NULL;

  test_write_file (file, text);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", file, NULL), ==, 78);
  g_assert_cmpstr (out, ==, "");
  g_assert_true (g_str_has_prefix (err, "tessera: "));
  g_assert_nonnull (strstr (err, file));
  g_assert_nonnull (strstr (err, "[resource r] store"));
  g_assert_nonnull (strstr (err, "nosuch"));
  g_assert_nonnull (strstr (err, "folder"));
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_cmpuint (count (err, "\n"), ==, 1);
  g_assert_cmpint (run_tessera (f, &status_out, &status_err, "--config", file, "status", NULL), ==, 78);
  g_assert_cmpstr (err, ==, status_err);
}

/* Secrets are never printed: config show gives a password and the
 * password inside an endpoint's URL as "***", and check's error about a
 * password that is not UTF-8 does not repeat it. */
static void
test_secrets_not_shown (Fixture *f, gconstpointer data)
{
  g_autofree char *file = g_build_filename (f->tmp, "secret.conf", NULL);
  g_autofree char *text = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\nstore=etcd\n"
                                           "endpoints=https://alice:hunter2@127.0.0.1:2379,http://127.0.0.2:2379\n"
                                           "user=alice\npassword=sesame\n", f->tmp);
  g_autofree char *bad = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\nstore=etcd\n"
                                          "endpoints=http://127.0.0.1:2379\nuser=alice\npassword=zq\xff" "xjv\n",
                                          f->tmp);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GSubprocess) check = NULL;
  g_autoptr(GBytes) check_err = NULL;
  g_autoptr(GError) error = NULL;
  gconstpointer bytes;
  gsize size;

  test_write_file (file, text);
  g_assert_cmpint (run_tessera (f, &out, &err, "--config", file, "config", "show", NULL), ==, 0);
  g_assert_null (strstr (out, "hunter2"));
  g_assert_null (strstr (out, "sesame"));
  g_assert_nonnull (strstr (out, "\nendpoints=https://alice:***@127.0.0.1:2379,http://127.0.0.2:2379\n"));
  g_assert_nonnull (strstr (out, "\npassword=***\n"));
  g_assert_nonnull (strstr (out, "\nuser=alice\n"));

  /* The error output as bytes: a password that is not UTF-8 must not
   * reach it at all. */
  test_write_file (file, bad);
  check = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                            g_getenv ("TESSERA_TOOL"), "config", "check", file, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate (check, NULL, NULL, NULL, &check_err, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (check), ==, 78);
  bytes = g_bytes_get_data (check_err, &size);
  g_test_message ("%.*s", (int) size, (const char *) bytes);
  g_assert_true (g_utf8_validate (bytes, (gssize) size, NULL));
  g_assert_null (g_strstr_len (bytes, (gssize) size, "xjv"));
  g_assert_nonnull (g_strstr_len (bytes, (gssize) size, "[resource r] password"));
  g_assert_nonnull (g_strstr_len (bytes, (gssize) size, "***"));
}

/* A file that requires a newer configuration level than this Tessera's:
 * what this one does not know in it is said once per key and ignored,
 * and the rest works; the same keys without `requires` (or with this
 * level) are errors (78). */
static void
test_requires_newer (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_build_filename (f->tmp, "newer.conf", NULL);
  g_autofree char *body = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\nweight=3\n"
                                           "[resource s]\ntype=mutex\npath=%s/s\nfairness=strict\n",
                                           f->tmp, f->tmp);
  g_autofree char *newer = g_strconcat ("[tessera]\nrequires=2\nmirror=yes\n", body, NULL);
  g_autofree char *same = g_strconcat ("[tessera]\nrequires=1\n", body, NULL);
  g_autofree char *out = NULL, *err = NULL;
  const char *keys[] = { "[resource r] weight", "[resource s] fairness", "[tessera] mirror" };

  test_write_file (config, newer);
  g_assert_cmpint (run_tessera (f, &out, &err, "--config", config, "run", "--need", "r=2", "--need", "s",
                                "--", "sh", "-c", "echo ran", NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ran\n");
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    g_assert_cmpuint (count (err, keys[i]), ==, 1);
  g_assert_cmpuint (count (err, "\n"), ==, G_N_ELEMENTS (keys));
  g_assert_cmpuint (count (err, "configuration level 1, the file requires 2"), ==, G_N_ELEMENTS (keys));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* check: the same warnings, and ok. */
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ok\n");
  g_assert_cmpuint (count (err, "\n"), ==, G_N_ELEMENTS (keys));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* What it does know is still checked. */
  {
    g_autofree char *wrong = test_substitute (newer, "total=2", "total=two");

    test_write_file (config, wrong);
    g_assert_cmpint (run_tessera (f, &out, &err, "--config", config, "status", NULL), ==, 78);
    g_assert_nonnull (strstr (err, "[resource r] total"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }

  /* Without requires, or requiring this level: a typo, 78. */
  test_write_file (config, body);
  g_assert_cmpint (run_tessera (f, &out, &err, "--config", config, "run", "--need", "r=1", "--", "true", NULL), ==,
                   78);
  g_assert_nonnull (strstr (err, "[resource r] weight"));
  g_assert_cmpuint (count (err, "\n"), ==, 1);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  test_write_file (config, same);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 78);
  g_assert_nonnull (strstr (err, "[resource r] weight"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* requires is a level, nothing else. */
  test_write_file (config, "[tessera]\nrequires=two\n");
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 78);
  g_assert_nonnull (strstr (err, "[tessera] requires"));
}

/* In a file for a newer Tessera, a resource of a type or a store this one
 * does not know is a resource of that newer Tessera: said once and left
 * out, and the rest works; without `requires` each is an error (78). */
static void
test_requires_newer_type (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_build_filename (f->tmp, "newer.conf", NULL);
  g_autofree char *body = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\n"
                                           "[resource q]\ntype=quantum\npath=%s/q\nqubits=4\n"
                                           "[resource e]\ntype=countertoken\npath=%s/e\nstore=newstore\n",
                                           f->tmp, f->tmp, f->tmp);
  g_autofree char *newer = g_strconcat ("[tessera]\nrequires=2\n", body, NULL);
  g_autofree char *mutex = test_substitute (body, "type=quantum", "type=mutex");
  g_autofree char *known_type = test_substitute (mutex, "qubits=4\n", "");
  g_autofree char *out = NULL, *err = NULL;

  test_write_file (config, newer);
  g_assert_cmpint (run_tessera (f, &out, &err, "--config", config, "run", "--need", "r=2", "--",
                                "sh", "-c", "echo ran", NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ran\n");
  g_assert_cmpuint (count (err, "[resource q] type"), ==, 1);
  g_assert_cmpuint (count (err, "[resource e] store"), ==, 1);
  g_assert_null (strstr (err, "qubits"));
  g_assert_cmpuint (count (err, "\n"), ==, 2);
  g_assert_cmpuint (count (err, "configuration level 1, the file requires 2"), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 0);
  g_assert_cmpstr (out, ==, "ok\n");
  g_assert_cmpuint (count (err, "\n"), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* Without requires: the unknown type, then the unknown store, 78. */
  test_write_file (config, body);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 78);
  g_assert_nonnull (strstr (err, "[resource q] type"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  test_write_file (config, known_type);
  g_assert_cmpint (run_tessera (f, &out, &err, "config", "check", config, NULL), ==, 78);
  g_assert_nonnull (strstr (err, "[resource e] store"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/config/show", Fixture, NULL, fixture_set_up, test_show, fixture_tear_down);
  g_test_add ("/config/check", Fixture, NULL, fixture_set_up, test_check, fixture_tear_down);
  g_test_add ("/config/check/unknown-store", Fixture, NULL, fixture_set_up, test_check_unknown_store,
              fixture_tear_down);
  g_test_add ("/config/secrets-not-shown", Fixture, NULL, fixture_set_up, test_secrets_not_shown, fixture_tear_down);
  g_test_add ("/config/requires-newer", Fixture, NULL, fixture_set_up, test_requires_newer, fixture_tear_down);
  g_test_add ("/config/requires-newer/type-and-store", Fixture, NULL, fixture_set_up, test_requires_newer_type,
              fixture_tear_down);
  return g_test_run ();
}
