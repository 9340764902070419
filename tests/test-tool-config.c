/* test-tool-config.c: the command's configuration: its errors (exit 78
 * and one message naming file, group and key), informations.json (and a
 * resource's mode= never given to a file of ours linked there), the
 * built-in default, settings read from the environment, and `tessera
 * plugins`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"

/* ---------------------------------------------------------------------- */
/* Configuration errors: exit 78 and one message naming file, group, key */

typedef struct
{
  const char *name;
  const char *content;
  const char *group;
  const char *key;
} BadConfig;

static const BadConfig bad_configs[] = {
  { "unknown-type", "[resource r]\ntype=no-such-type\n", "[resource r]", "type" },
  { "wrong-key", "[resource r]\ntype=countertoken\ntotl=3\n", "[resource r]", "totl" },
  { "wrong-value-type", "[resource r]\ntype=countertoken\ntotal=three\n", "[resource r]", "total" },
  { "value-out-of-range", "[resource r]\ntype=countertoken\ntotal=-5\n", "[resource r]", "total" },
  { "duplicate-resource", "[resource r]\ntype=countertoken\ntotal=1\n[resource r]\ntype=mutex\n", "[resource r]", NULL },
  { "duplicate-key", "[resource r]\ntype=countertoken\ntotal=1\ntotal=2\n", "[resource r]", "total" },
  { "missing-type", "[resource r]\npath=/tmp/x\n", "[resource r]", "type" },
  { "unknown-group", "[pool r]\ntype=countertoken\n", "[pool r]", NULL },
  { "hostile-name", "[resource r/../x]\ntype=countertoken\n", "[resource r/../x]", NULL },
  { "relative-path", "[resource r]\ntype=countertoken\npath=relative\n", "[resource r]", "path" },
  { "lock-folder-key", "[resource r]\ntype=countertoken\nlock-folder=relative\n", "[resource r]", "lock-folder" },
  { "not-a-keyfile", "not a keyfile at all\n", NULL, NULL },
  { "total-minus-one", "[resource r]\ntype=countertoken\npath=/tmp/tessera-never/r\ntotal=-1\n", "[resource r]", "total" },
  { "same-folder", "[resource r]\ntype=countertoken\npath=/tmp/tessera-never/r\ntotal=1\n"
    "[resource s]\ntype=mutex\npath=/tmp/tessera-never/x/../r/\n", "[resource s]", "path" },
  { "gpu-devices-not-a-list", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=x\n", "[resource g]",
    "devices" },
  { "gpu-device-given-twice", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=0;0\n", "[resource g]",
    "devices" },
  { "gpu-no-device", "[resource g]\ntype=gpu\npath=/tmp/tessera-never/g\ndevices=;\n", "[resource g]", "devices" },
};

/* Configuration errors: exit 78 and one line naming file, group and key. */
static void
test_config_error (Fixture *f, gconstpointer data)
{
  const BadConfig *bad = data;
  g_autofree char *out = NULL;
  int status;

  test_write_file (f->config, bad->content);
  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 78);
  g_assert_true (g_str_has_prefix (out, "tessera: "));
  g_assert_nonnull (strstr (out, f->config));
  if (bad->group != NULL)
    g_assert_nonnull (strstr (out, bad->group));
  if (bad->key != NULL)
    g_assert_nonnull (strstr (out, bad->key));
  g_assert_cmpint (strchr (out, '\n') - out, ==, (int) strlen (out) - 1);
}

static void
test_plugins_command (Fixture *f, gconstpointer data)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "plugins", NULL);

  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "Plugin folders:"));
  g_assert_nonnull (strstr (out, "countertoken — Counter tokens"));
  g_assert_nonnull (strstr (out, "mutex — Mutexes"));
  g_assert_nonnull (strstr (out, "experimaestro.tokens:CounterTokenLock"));
  g_assert_nonnull (strstr (out, "(not loaded)"));
}

/* No configuration file anywhere: cpu and gpu from the built-in default. */
static void
test_default_configuration (Fixture *f, gconstpointer data)
{
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  g_autofree char *cfg = g_build_filename (f->tmp, "no-config", NULL);
  g_autoptr(GSubprocessLauncher) launcher = test_launcher_without_config (G_SUBPROCESS_FLAGS_STDOUT_PIPE, state, cfg);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *cpu_path = g_build_filename (state, "tessera", "cpu", NULL);
  JsonArray *resources;
  JsonObject *cpu, *gpu;

  process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "status", "--json", NULL);
  g_assert_no_error (error);
  root = test_output_json (process, 0);
  resources = json_object_get_array_member (json_node_get_object (root), "resources");
  g_assert_cmpuint (json_array_get_length (resources), ==, 2);
  cpu = json_array_get_object_element (resources, 0);
  gpu = json_array_get_object_element (resources, 1);
  g_assert_cmpstr (json_object_get_string_member (cpu, "name"), ==, "cpu");
  g_assert_cmpstr (json_object_get_string_member (cpu, "type"), ==, "countertoken");
  g_assert_cmpint (json_object_get_int_member (cpu, "capacity"), ==, g_get_num_processors ());
  /* Per host: under the state folder, in a folder of this host's own. */
  g_assert_true (g_str_has_prefix (json_object_get_string_member (cpu, "path"), state));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (cpu, "path"), "/cpu"));
  g_assert_cmpstr (json_object_get_string_member (cpu, "path"), !=, cpu_path);
  g_assert_cmpstr (json_object_get_string_member (gpu, "name"), ==, "gpu");
  g_assert_cmpstr (json_object_get_string_member (gpu, "type"), ==, "gpu");
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* Two resources on one folder reached through two paths (a symbolic
 * link): one pool counted twice, a configuration error. */
static void
test_config_same_folder_link (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *link = g_build_filename (f->tmp, "link", NULL);
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=1\n"
                                              "[resource s]\ntype=countertoken\npath=%s\ntotal=1\n", real, link);
  g_autofree char *out = NULL;
  int status;

  g_assert_cmpint (g_mkdir (real, 0755), ==, 0);
  g_assert_cmpint (symlink (real, link), ==, 0);
  test_write_file (f->config, content);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (out);
  g_assert_nonnull (strstr (out, f->config));
  g_assert_nonnull (strstr (out, "[resource s] path"));
  g_assert_nonnull (strstr (out, "[resource r]"));
}

/* No total and no informations.json yet: nothing says how big the pool
 * is (78); joining an existing pool without a total is fine. */
static void
test_config_missing_total (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n", f->tmp);
  g_autofree char *refused = NULL, *joined = NULL;
  g_autoptr(JsonNode) root = NULL;
  int status;

  test_write_file (f->config, content);
  refused = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (refused);
  g_assert_nonnull (strstr (refused, f->config));
  g_assert_nonnull (strstr (refused, "[resource r] total"));

  /* Set up by someone else, with 3: the configuration joins it. */
  g_free (content);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=3\n", f->tmp);
  test_write_file (f->config, content);
  /* (status only looks: a run sets the pool up) */
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (content);
  content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n", f->tmp);
  test_write_file (f->config, content);
  joined = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (joined, ==, "r (countertoken): 3 of 3 free\n  no holder\n");
}

/* informations.json wins once it exists; status says so in one line
 * when the configuration says otherwise, once per resource; a run does
 * not (it would be in every job's log). */
static void
test_config_differs_notice (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL, *ran = NULL;
  int status;

  g_free (run_capture (f, &status, "set", "r", "total=2", NULL));
  g_assert_cmpint (status, ==, 0);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "r (countertoken): 2 of 2 free\n"));
  g_assert_nonnull (strstr (out, "tessera: r: informations.json says total=2, the configuration total=1; "
                                 "informations.json wins"));
  g_assert_null (strstr (strstr (out, "informations.json wins") + 1, "informations.json wins"));
  ran = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (ran, ==, "");
}

/* A broken informations.json is not a pool of 0: say which file, why,
 * and how to fix it (78). */
static void
test_broken_informations (Fixture *f, gconstpointer data)
{
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  const char *broken[] = { "{\"total\": ", "{\"total\": \"eight\"}", "[1, 2]",
                           /* what the type refuses: never a pool of 0 that waits for ever */
                           "{\"total\": \"3\"}", "{\"totl\": 3}", "{}", "{\"total\": 2147483648}",
                           /* not strict JSON, which json-glib would read */
                           "{'total': 3}", "/* c */ {\"total\": 3}", "{\"total\": 3} /* c */", "{\"total\": 03}" };
  g_autoptr(GPtrArray) texts = not_strict_lock_files ();
  int status;

  /* And the nesting that crashed every reader. */
  g_ptr_array_set_size (texts, 2);
  for (guint i = 0; i < G_N_ELEMENTS (broken); i++)
    g_ptr_array_add (texts, g_strdup (broken[i]));
  g_free (run_capture (f, &status, "status", NULL));
  g_assert_cmpint (status, ==, 0);
  for (guint i = 0; i < texts->len; i++)
    {
      g_autofree char *out = NULL, *ran = NULL;

      test_write_file (informations, g_ptr_array_index (texts, i));
      out = run_capture (f, &status, "status", NULL);
      g_assert_cmpint (status, ==, 78);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, informations));
      g_assert_nonnull (strstr (out, "tessera set r total="));
      ran = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
      g_assert_cmpint (status, ==, 78);
      g_assert_cmpstr (ran, ==, out);
      assert_json_lists_unreadable (f, 78);
    }
  /* The fix it names works. */
  g_free (run_capture (f, &status, "set", "r", "total=1", NULL));
  g_assert_cmpint (status, ==, 0);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* A value out of its setting's range says the range, not a C type name
 * ("gint64 expected"); a total's is said from 0 (-1 means "not given"). */
static void
test_config_range_said (Fixture *f, gconstpointer data)
{
  const char *cases[][2] = {
    { "total=-5", "must be an integer from 0 to 2147483647" },
    { "total=three", "must be an integer from 0 to 2147483647" },
    { "total=1\npatience=-1", "expected: a number, 0 or more" },
    { "total=1\nmin-age=soon", "expected: a number, 0 or more" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\n%s\n", f->tmp,
                                                  cases[i][0]);
      g_autofree char *out = NULL;
      int status;

      test_write_file (f->config, content);
      out = run_capture (f, &status, "status", NULL);
      g_assert_cmpint (status, ==, 78);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, cases[i][1]));
      g_assert_null (strstr (out, "gint64"));
      g_assert_null (strstr (out, "gdouble"));
    }
}

/* A pool folder that is a file is no broken informations.json: status
 * and run say what is wrong with the folder (74), and do not send the
 * user to `tessera set`, which cannot fix it. */
static void
test_pool_folder_is_a_file (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->tmp, "r", NULL);
  const char *commands[] = { "status", "run" };
  int status;

  test_write_file (pool, "not a folder\n");
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *out = g_str_equal (commands[i], "run")
                             ? run_capture (f, &status, "run", "--need", "r", "--", "true", NULL)
                             : run_capture (f, &status, "status", NULL);

      g_assert_cmpint (status, ==, 74);
      assert_one_message (out);
      g_assert_nonnull (strstr (out, pool));
      g_assert_null (strstr (out, "tessera set"));
      g_assert_null (strstr (out, "broken"));
    }
}

/* TESSERA_POLL_INTERVAL is checked once and kept above a sane floor: a
 * tiny value does not spin, a wrong one is said once. The CPU time of a
 * two-second wait is the shell's `times` for its children. */
static void
test_poll_interval_setting (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autofree char *state = g_build_filename (f->tmp, "state", NULL);
  const char *values[] = { "1e-9", "nope" };

  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *script =
        g_strdup_printf ("XDG_STATE_HOME='%s' TESSERA_POLL_INTERVAL='%s' '%s' --config '%s' run --timeout 2 "
                         "--need r -- true 2>&1; echo status=$?; times",
                         state, values[i], g_getenv ("TESSERA_TOOL"), f->config);
      g_autoptr(GSubprocess) sh = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;
      guint n, warnings = 0;
      double user_min, user_s, sys_min, sys_s;

      sh = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "sh", "-c", script, NULL);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (sh, NULL, NULL, &out, NULL, &error);
      g_assert_no_error (error);
      g_test_message ("%s", out);
      lines = g_strsplit (g_strstrip (out), "\n", -1);
      n = g_strv_length (lines);
      g_assert_cmpuint (n, >=, 3);
      g_assert_cmpstr (lines[n - 3], ==, "status=75");
      /* The children's line: "XmY.YYYs XmZ.ZZZs". */
      g_assert_cmpint (sscanf (lines[n - 1], "%lfm%lfs %lfm%lfs", &user_min, &user_s, &sys_min, &sys_s), ==, 4);
      g_assert_cmpfloat (user_min * 60 + user_s + sys_min * 60 + sys_s, <, 0.5);
      for (guint j = 0; j < n; j++)
        if (strstr (lines[j], "TESSERA_POLL_INTERVAL") != NULL)
          warnings++;
      g_assert_cmpuint (warnings, ==, 1);
    }
  test_let_go (holder);
}

/* ---------------------------------------------------------------------- */
/* All at once */

/* informations.json's "tessera_protocol", or -1 when it has none. */
static gint64
pool_protocol_of (Fixture *f, const char *name)
{
  g_autofree char *path = g_build_filename (f->tmp, name, "informations.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *object;

  g_assert_true (json_parser_load_from_file (parser, path, NULL));
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member_with_default (object, "total", -1), >=, 0);
  return json_object_get_int_member_with_default (object, "tessera_protocol", -1);
}

static gint64
pool_protocol (Fixture *f)
{
  return pool_protocol_of (f, "r");
}

/* A pool records the lowest protocol that may use it: Tessera writes it
 * when it creates informations.json, never lowers it, and a Tessera older
 * than the pool refuses it (78) instead of judging holders by older
 * rules; `status` says so and goes on with the other resources. A pool
 * that experimaestro set up has no such member and is used as it is. */
static void
test_pool_protocol (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->tmp, "r", NULL);
  g_autofree char *informations = g_build_filename (folder, "informations.json", NULL);
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                             "[resource s]\ntype=countertoken\npath=%s/s\ntotal=1\n"
                                             "[resource l]\ntype=countertoken\npath=%s/l\ntotal=1\nhost-lease=30\n",
                                             f->tmp, f->tmp, f->tmp);
  g_autofree char *lease_folder = g_build_filename (f->tmp, "l", NULL);
  g_autofree char *lease_informations = g_build_filename (lease_folder, "informations.json", NULL);
  g_autofree char *newer = NULL;
  g_autofree char *out = NULL;
  gint64 ours;
  int status;

  test_write_file (f->config, config);
  /* experimaestro's pool: used as it is, not rewritten by a mere run. */
  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  test_write_file (informations, "{\"total\": 1}");
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol (f), ==, -1);
  /* Once Tessera writes the file, it carries the member. */
  g_free (run_capture (f, &status, "set", "r", "total=1", NULL));
  g_assert_cmpint (status, ==, 0);
  ours = pool_protocol (f);
  g_assert_cmpint (ours, >=, 1);

  /* A new pool gets it too; `set` cannot lower it. */
  test_remove_tree (folder);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol (f), ==, ours);
  g_free (run_capture (f, &status, "set", "r", "tessera_protocol=0", NULL));
  g_assert_cmpint (pool_protocol (f), ==, ours);

  /* 1.0, as Python's json may write a number, is protocol 1. */
  test_write_file (informations, "{\"total\": 1, \"tessera_protocol\": 1.0}");
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);

  /* A lease pool asks for a newer protocol than a plain one: a Tessera
   * that renews no heartbeat must refuse it. An older lease pool is
   * marked once this Tessera uses it. */
  g_free (run_capture (f, &status, "run", "--need", "l", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol_of (f, "l"), >, ours);
  test_write_file (lease_informations, "{\"total\": 1, \"tessera_protocol\": 2}");
  g_free (run_capture (f, &status, "run", "--need", "l", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (pool_protocol_of (f, "l"), >, ours);
  g_free (run_capture (f, &status, "status", "l", NULL));
  g_assert_cmpint (status, ==, 0);

  /* A pool for a newer Tessera is refused, in one clear line. */
  newer = g_strdup_printf ("{\"total\": 1, \"tessera_protocol\": %" G_GINT64_FORMAT "}", ours + 1000);
  test_write_file (informations, newer);
  out = run_capture (f, &status, "run", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 78);
  assert_one_message (out);
  g_assert_nonnull (strstr (out, "protocol"));
  g_assert_nonnull (strstr (out, folder));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 78);
  g_assert_nonnull (strstr (out, "protocol"));
  g_assert_nonnull (strstr (out, "s (countertoken): 1 of 1 free"));   /* the others are shown */
  /* Still untouched. */
  g_assert_cmpint (pool_protocol (f), ==, ours + 1000);
}

/* A resource's mode= is given to what Tessera owns of its pool, never
 * to a file of ours that only has the name of a part: one hard-linked
 * there as informations.json keeps its mode. */
static void
test_sharing_spares_a_linked_file (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->tmp, "r", NULL);
  g_autofree char *informations = g_build_filename (folder, "informations.json", NULL);
  g_autofree char *mine = g_build_filename (f->tmp, "mine.json", NULL);
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nmode=0750\n",
                                             f->tmp);
  GStatBuf st;
  int status;

  test_write_file (f->config, config);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);
  test_write_file (mine, "{\"total\": 1}");
  g_assert_cmpint (g_chmod (mine, 0600), ==, 0);
  g_assert_cmpint (link (mine, informations), ==, 0);
  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_stat (mine, &st), ==, 0);
  g_assert_cmpuint (st.st_mode & 07777, ==, 0600);
  /* What is Tessera's own is given it. */
  g_assert_cmpint (g_stat (folder, &st), ==, 0);
  g_assert_cmpuint (st.st_mode & 07777, ==, 0750);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  for (guint i = 0; i < G_N_ELEMENTS (bad_configs); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tool/config/error/%s", bad_configs[i].name);
      g_test_add (path, Fixture, &bad_configs[i], fixture_set_up, test_config_error, fixture_tear_down);
    }
  ADD ("/tool/config/same-folder-through-a-link", test_config_same_folder_link);
  ADD ("/tool/config/missing-total-for-a-new-pool", test_config_missing_total);
  ADD ("/tool/config/informations-json-wins-with-a-notice", test_config_differs_notice);
  ADD ("/tool/config/broken-informations-json", test_broken_informations);
  ADD ("/tool/config/pool-folder-is-a-file", test_pool_folder_is_a_file);
  ADD ("/tool/config/range-said", test_config_range_said);
  ADD ("/tool/config/poll-interval-checked-once", test_poll_interval_setting);
  ADD ("/tool/plugins/lists-without-loading", test_plugins_command);
  ADD ("/tool/config/built-in-default", test_default_configuration);
  ADD ("/tool/config/pool-protocol", test_pool_protocol);
  ADD ("/tool/config/sharing-spares-a-linked-file", test_sharing_spares_a_linked_file);
  return g_test_run ();
}
