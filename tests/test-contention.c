/* test-contention.c: 8 real processes × 50 acquire/release cycles on a
 * resource of capacity 3 (acceptance 3).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <stdlib.h>

#define PROCESSES 8
#define CYCLES 50
#define CAPACITY 3

static void
test_contention (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *log = g_build_filename (tmp, "holders.log", NULL);
  g_autofree char *cycles = g_strdup_printf ("%d", CYCLES);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (folder, CAPACITY, &error);
  g_autoptr(GArray) events = NULL;
  g_autoptr(GHashTable) per_process = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) files = NULL;
  Helper *helpers[PROCESSES];
  int holders = 0, max_holders = 0, acquisitions = 0;

  g_assert_no_error (error);
  for (int i = 0; i < PROCESSES; i++)
    {
      g_autofree char *id = g_strdup_printf ("p%d", i);
      helpers[i] = helper_spawn (NULL, "cycle", folder, "-1", id, cycles, log, NULL);
    }
  for (int i = 0; i < PROCESSES; i++)
    {
      g_assert_cmpint (helper_wait (helpers[i]), ==, 0);
      helper_free (helpers[i]);
    }

  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    {
      LogEvent *ev = &g_array_index (events, LogEvent, i);

      holders += ev->acquire ? 1 : -1;
      max_holders = MAX (max_holders, holders);
      if (ev->acquire)
        {
          acquisitions++;
          g_hash_table_replace (per_process, g_strdup (ev->id),
            GINT_TO_POINTER (GPOINTER_TO_INT (g_hash_table_lookup (per_process, ev->id)) + 1));
        }
    }
  g_test_message ("%d acquisitions, at most %d holders at once", acquisitions, max_holders);

  g_assert_cmpint (acquisitions, ==, PROCESSES * CYCLES);
  g_assert_cmpuint (g_hash_table_size (per_process), ==, PROCESSES);
  g_assert_cmpint (holders, ==, 0);
  g_assert_cmpint (max_holders, <=, CAPACITY);
  g_assert_cmpint (max_holders, >=, 1);

  /* All capacity is back: nothing held, no file left. */
  g_assert_true (tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_counter_get_used (counter), ==, 0);
  files = tessera_tracked_dynamic_resource_list_lock_files (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter));
  g_assert_cmpuint (files->len, ==, 0);

  g_clear_object (&counter);
  test_remove_tree (tmp);
}

/* Fencing tokens (issue 40, point 3): four processes take the one unit
 * of a pool in turn, many times; each grant's token is larger than every
 * earlier grant's, whichever process had it. */
static void
test_fencing_tokens (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "token", NULL);
  g_autofree char *log = g_build_filename (tmp, "holders.log", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (folder, 1, &error);
  g_autoptr(GArray) events = NULL;
  Helper *helpers[4];
  gint64 last = 0;
  guint grants = 0;

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (helpers); i++)
    {
      g_autofree char *id = g_strdup_printf ("p%u", i);
      helpers[i] = helper_spawn (NULL, "cycle", folder, "-1", id, "20", log, NULL);
    }
  for (guint i = 0; i < G_N_ELEMENTS (helpers); i++)
    {
      g_assert_cmpint (helper_wait (helpers[i]), ==, 0);
      helper_free (helpers[i]);
    }

  /* One unit: grants follow each other, in the order of their lines. */
  events = test_read_holder_log (log);
  for (guint i = 0; i < events->len; i++)
    {
      LogEvent *ev = &g_array_index (events, LogEvent, i);

      if (!ev->acquire)
        continue;
      if (ev->token <= last)
        g_error ("grant %u (%s) has the token %" G_GINT64_FORMAT ", not above the last one's %" G_GINT64_FORMAT,
                 grants, ev->id, ev->token, last);
      last = ev->token;
      grants++;
    }
  g_test_message ("%u grants, the last token %" G_GINT64_FORMAT, grants, last);
  g_assert_cmpuint (grants, ==, G_N_ELEMENTS (helpers) * 20);

  g_clear_object (&counter);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/contention/8-processes-capacity-3/never-over-allocated", test_contention);
  g_test_add_func ("/contention/fencing-tokens/4-processes-strictly-increase", test_fencing_tokens);
  return g_test_run ();
}
