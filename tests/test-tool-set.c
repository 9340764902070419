/* test-tool-set.c: `tessera set`: a pool's settings refused or written,
 * and a waiting run woken by them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

/* `tessera set r total=2` lets a waiting run through: no poll can, as the
 * first poll would come after 1000 s. */
static void
test_set_wakes_waiter (Fixture *f, gconstpointer data)
{
  const char *no_poll[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) waiter = NULL;
  g_autofree char *early = NULL;
  g_autofree char *through = NULL;
  g_autofree char *out = NULL;
  int status;

  waiter = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "run", "--need", "r", "--", "echo", "through", NULL);
  early = test_read_line (waiter, 1.0);
  g_assert_null (early);
  out = run_capture (f, &status, "set", "r", "total=2", NULL);
  g_assert_cmpint (status, ==, 0);
  through = test_read_line (waiter, 30);
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  test_let_go (holder);
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* `tessera set` refuses a setting the type does not have: a typo, or a
 * total for a mutex, changes nothing and says so. */
static void
test_set_refuses_unknown (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n"
                                              "[resource m]\ntype=mutex\npath=%s/m\n", f->tmp, f->tmp);
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  g_autofree char *typo = NULL, *mutex = NULL, *good = NULL, *text = NULL;
  int status;

  test_write_file (f->config, content);
  typo = run_capture (f, &status, "set", "r", "totl=16", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (typo);
  g_assert_nonnull (strstr (typo, "totl"));
  g_assert_nonnull (strstr (typo, "total"));
  g_assert_true (g_file_get_contents (informations, &text, NULL, NULL));
  g_assert_null (strstr (text, "totl"));

  mutex = run_capture (f, &status, "set", "m", "total=3", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (mutex);
  g_assert_nonnull (strstr (mutex, "m (mutex)"));

  good = run_capture (f, &status, "set", "r", "total=16", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (good, ==, "r: {\"total\":16,\"tessera_protocol\":2}\n");
}

/* `tessera set g devices=…` reads the configuration file's syntax
 * (INDEX[:MEMORY_MIB[:UUID]];…), as the type reads its devices= setting,
 * as well as JSON; what the type cannot read changes nothing. */
static void
test_set_devices_as_configured (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s/g\ndevices=0\n", f->tmp);
  g_autofree char *informations = g_build_filename (f->tmp, "g", "informations.json", NULL);
  g_autofree char *three = NULL, *uuid = NULL, *json = NULL, *bad = NULL, *shown = NULL;
  g_autofree char *before = NULL, *after = NULL;
  int status;

  test_write_file (f->config, content);
  g_free (run_capture (f, &status, "run", "--need", "g", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);

  three = run_capture (f, &status, "set", "g", "devices=0;1;2", NULL);
  g_test_message ("%s", three);
  g_assert_cmpint (status, ==, 0);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 3 of 3 free\n"));

  uuid = run_capture (f, &status, "set", "g", "devices=0:16384:GPU-aaaa;1", NULL);
  g_test_message ("%s", uuid);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (uuid, "\"uuid\":\"GPU-aaaa\""));
  g_assert_nonnull (strstr (uuid, "\"memory\":16384"));
  g_free (shown);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 2 of 2 free\n"));

  json = run_capture (f, &status, "set", "g", "devices=[{\"index\": 4}]", NULL);
  g_test_message ("%s", json);
  g_assert_cmpint (status, ==, 0);
  g_free (shown);
  shown = run_capture (f, &status, "status", "g", NULL);
  g_assert_true (g_str_has_prefix (shown, "g (gpu): 1 of 1 free\n"));

  g_assert_true (g_file_get_contents (informations, &before, NULL, NULL));
  bad = run_capture (f, &status, "set", "g", "devices=0;x", NULL);
  g_assert_cmpint (status, ==, 64);
  assert_one_message (bad);
  g_assert_nonnull (strstr (bad, "INDEX[:MEMORY_MIB[:UUID]]"));
  g_assert_true (g_file_get_contents (informations, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);
}

/* ---------------------------------------------------------------------- */
/* All at once */

/* `tessera set` refuses what the pool could not then be read with (a
 * total past the range a request has), in one line (64), and leaves
 * informations.json as it was. */
static void
test_set_refuses_out_of_range (Fixture *f, gconstpointer data)
{
  g_autofree char *informations = g_build_filename (f->tmp, "r", "informations.json", NULL);
  const char *values[] = { "total=2147483648", "total=9223372036854775807", "total=-3", "total=1.5" };
  g_autofree char *before = NULL;
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_true (g_file_get_contents (informations, &before, NULL, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    {
      g_autofree char *after = NULL;

      g_clear_pointer (&out, g_free);
      out = run_capture (f, &status, "set", "r", values[i], NULL);
      g_assert_cmpint (status, ==, 64);
      assert_one_message (out);
      g_assert_true (g_file_get_contents (informations, &after, NULL, NULL));
      g_assert_cmpstr (after, ==, before);
      /* Past the range, its end is named. */
      if (i < 2)
        g_assert_nonnull (strstr (out, "2147483647"));
    }
  /* The largest is taken. */
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "set", "r", "total=2147483647", NULL);
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "2147483647 of 2147483647 free"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/set/wakes-waiting-run", test_set_wakes_waiter);
  ADD ("/tool/set/refuses-unknown-settings", test_set_refuses_unknown);
  ADD ("/tool/set/refuses-out-of-range", test_set_refuses_out_of_range);
  ADD ("/tool/set/devices-as-configured", test_set_devices_as_configured);
  return g_test_run ();
}
