/* test-queue-plugins.c: the waiters' queue for the gpu and mutex plugins.
 * Past their patience, GPU waiters reserve devices and mutex waiters
 * reserve the mutex (exclusive) or a share of it (shared); a dead
 * reserving waiter blocks no one. Real processes (tessera-plugin-helper)
 * on real folders.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Four fake devices, each with a UUID. */
#define DEVICES "devices=0:1024:GPU-aaaa;1:1024:GPU-bbbb;2:1024:GPU-cccc;3:1024:GPU-dddd"

static const char * const short_patience[] = { "TESSERA_PATIENCE", "1", NULL };

typedef struct
{
  char *tmp;
  char *folder;
  char *queue;
  char *jobs;
  const char *type;
  const char *setting;   /* the type's KEY=VALUE, or NULL */
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->type = data;
  f->setting = g_str_equal (f->type, "gpu") ? DEVICES : NULL;
  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, f->type, NULL);
  f->queue = g_build_filename (f->folder, "queue", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->folder);
  g_free (f->queue);
  g_free (f->jobs);
}

/* The reserving entries of F/queue, as parsed objects. */
static GPtrArray *
read_reservations (Fixture *f)
{
  GPtrArray *entries = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  g_autoptr(GDir) dir = g_dir_open (f->queue, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->queue, name, NULL);
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonNode *root;

      if (!g_str_has_suffix (name, ".json") || !json_parser_load_from_file (parser, path, NULL))
        continue;
      root = json_parser_get_root (parser);
      if (JSON_NODE_HOLDS_OBJECT (root) &&
          json_object_get_boolean_member_with_default (json_node_get_object (root), "reserve", FALSE))
        g_ptr_array_add (entries, json_node_copy (root));
    }
  return entries;
}

/* Waits (up to @timeout_s) until the queue holds a reserving entry, and
 * returns it. */
static JsonNode *
wait_for_reservation (Fixture *f, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);

  for (;;)
    {
      g_autoptr(GPtrArray) entries = read_reservations (f);

      if (entries->len > 0)
        return json_node_copy (g_ptr_array_index (entries, 0));
      if (g_get_monotonic_time () > deadline)
        g_error ("no reserving %s waiter in %s within %.0f s", f->type, f->queue, timeout_s);
      g_usleep (10 * 1000);
    }
}

/* Waits (up to 60 s) until some job other than @previous holds the
 * resource, and returns its identifier. */
static char *
wait_for_new_holder (Fixture *f, const char *previous)
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  g_autofree char *previous_name = g_strdup_printf ("helper@%s.json", previous);

  for (;;)
    {
      g_autoptr(GDir) dir = g_dir_open (f->jobs, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_prefix (name, "helper@") && g_str_has_suffix (name, ".json") &&
            strcmp (name, previous_name) != 0)
          return g_strndup (name + strlen ("helper@"), strlen (name) - strlen ("helper@") - strlen (".json"));
      if (g_get_monotonic_time () > deadline)
        g_error ("no one took %s within 60 s of %s's release", f->folder, previous);
      g_usleep (10 * 1000);
    }
}

/* Starts a helper that tries @request once and holds what it got:
 * returns its answer ("ACQUIRED" or "UNAVAILABLE") in @line. */
static Helper *
try_once (Fixture *f, const char *id, const char *request, char **line)
{
  Helper *helper = plugin_helper_spawn (NULL, "try", f->type, f->folder, id, request, f->setting, NULL);

  helper_expect_line (helper, "READY", 60);
  helper_write_line (helper, "go");
  *line = helper_read_line (helper, 60);
  return helper;
}

static void
release (Helper *helper)
{
  helper_close_stdin (helper);
  g_assert_cmpint (helper_wait (helper), ==, 0);
  helper_free (helper);
}

/* Starts a helper that waits for @request with a 1 s patience; returns
 * once it waits. */
static Helper *
start_patient_request (Fixture *f, const char *id, const char *request)
{
  Helper *helper = plugin_helper_spawn (short_patience, "request", f->type, f->folder, id, request, "120",
                                        f->setting, NULL);

  helper_expect_line (helper, "WAITING", 60);
  return helper;
}

/* Checks that @waiter was served within its patience (1 s) plus a
 * generous margin for a loaded machine, then lets it go. */
static void
assert_served_soon (Helper *waiter, const char *what)
{
  g_autofree char *line = helper_read_line (waiter, 90);
  long ms;

  g_test_message ("%s: %s", what, line);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED ms="));
  ms = strtol (line + strlen ("ACQUIRED ms="), NULL, 10);
  g_assert_cmpint (ms, <, 16 * 1000);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* Tries of @small that overlap, starting with @held's: each takes its
 * share before the previous one lets go, so the resource is never free
 * as a whole. Goes on until one is refused (a reservation), for 20 s at
 * most. */
static void
relay_until_refused (Fixture *f, Helper *held, const char *small)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  for (guint i = 1;; i++)
    {
      g_autofree char *id = g_strdup_printf ("small%u", i);
      g_autofree char *answer = NULL;
      Helper *next;

      if (g_get_monotonic_time () > deadline)
        g_error ("%s requests for %s were still served 20 s after a larger request with a 1 s "
                 "patience began to wait (%u of them)", small, f->type, i);
      next = try_once (f, id, small, &answer);
      if (g_strcmp0 (answer, "UNAVAILABLE") == 0)
        {
          release (next);
          break;
        }
      g_assert_cmpstr (answer, ==, "ACQUIRED");
      release (held);
      held = next;
    }
  release (held);
}

/* A request for the 4 devices of 4 among a stream of 1-device requests
 * from other processes that overlap: without reservations it starves;
 * with them it is served about a patience after it began to wait. Works
 * for the mutex too: an exclusive request among overlapping shared ones
 * (served before reservations too, through the mutex's intents). */
static void
test_large_request_served (Fixture *f, gconstpointer data)
{
  const char *small = g_str_equal (f->type, "gpu") ? "1" : "shared";
  const char *large = g_str_equal (f->type, "gpu") ? "4" : "exclusive";
  g_autofree char *line = NULL;
  Helper *held, *large_waiter;

  held = try_once (f, "small0", small, &line);
  g_assert_cmpstr (line, ==, "ACQUIRED");
  large_waiter = start_patient_request (f, "large", large);
  relay_until_refused (f, held, small);
  assert_served_soon (large_waiter, large);
  helper_free (large_waiter);
}

/* A shared request among a stream of exclusive requests that always have
 * a successor waiting when one lets go: the waiting exclusive requests'
 * intents kept it out for ever; past its patience it reserves a share, and
 * is served when the exclusive holder of that moment lets go. */
static void
test_shared_among_exclusive_served (Fixture *f, gconstpointer data)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  g_autofree char *line = NULL;
  g_autofree char *holder_id = g_strdup ("exclusive0");
  Helper *holder, *reader, *next = NULL;

  holder = plugin_helper_spawn (NULL, "hold", f->type, f->folder, holder_id, "exclusive", NULL);
  line = helper_read_line (holder, 60);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  reader = start_patient_request (f, "reader", "shared");

  for (guint i = 1;; i++)
    {
      g_autofree char *id = g_strdup_printf ("exclusive%u", i);
      g_autofree char *taker = NULL;

      if (g_get_monotonic_time () > deadline)
        g_error ("a shared request with a 1 s patience was not served in 20 s of exclusive "
                 "requests (%u of them)", i);
      /* The next one waits before this one lets go. */
      next = plugin_helper_spawn (NULL, "request", f->type, f->folder, id, "exclusive", "120", NULL);
      helper_expect_line (next, "WAITING", 60);
      helper_close_stdin (holder);
      helper_expect_line (holder, "RELEASED", 60);
      g_assert_cmpint (helper_wait (holder), ==, 0);
      helper_free (holder);
      taker = wait_for_new_holder (f, holder_id);
      if (g_str_equal (taker, "reader"))
        break;
      g_assert_cmpstr (taker, ==, id);
      helper_expect_line (next, "ACQUIRED", 60);
      holder = next;
      g_free (holder_id);
      holder_id = g_steal_pointer (&id);
    }
  assert_served_soon (reader, "shared");
  helper_free (reader);
  /* The exclusive request left waiting gets the mutex now. */
  helper_expect_line (next, "ACQUIRED", 60);
  helper_close_stdin (next);
  helper_expect_line (next, "RELEASED", 60);
  g_assert_cmpint (helper_wait (next), ==, 0);
  helper_free (next);
}

/* A GPU waiter past its patience reserves named devices (by UUID) and
 * keeps later requests out; SIGKILLed, it keeps no one out. */
static void
test_killed_reserving_waiter (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = plugin_helper_spawn (NULL, "hold", f->type, f->folder, "holder", "2", f->setting,
                                                  NULL);
  g_autoptr(Helper) large = NULL;
  g_autoptr(JsonNode) entry = NULL;
  g_autoptr(GPtrArray) left = NULL;
  g_autofree char *line = NULL;
  g_autofree char *answer = NULL;
  Helper *first, *second;
  JsonObject *information;
  JsonArray *devices;

  line = helper_read_line (holder, 60);
  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  large = start_patient_request (f, "large", "4");
  entry = wait_for_reservation (f, 60);

  /* It names the devices it keeps, by UUID. */
  information = json_object_get_object_member (json_node_get_object (entry), "information");
  g_assert_nonnull (information);
  devices = json_object_get_array_member (information, "devices");
  g_assert_nonnull (devices);
  g_assert_cmpuint (json_array_get_length (devices), ==, 4);
  for (guint i = 0; i < 4; i++)
    g_assert_true (g_str_has_prefix (json_object_get_string_member (json_array_get_object_element (devices, i),
                                                                    "uuid"), "GPU-"));

  /* 2 held and 4 reserved: nothing is left for a later arrival. */
  first = try_once (f, "first", "1", &answer);
  g_assert_cmpstr (answer, ==, "UNAVAILABLE");
  release (first);
  g_clear_pointer (&answer, g_free);

  helper_kill (large, SIGKILL);
  helper_wait (large);

  second = try_once (f, "second", "1", &answer);
  g_assert_cmpstr (answer, ==, "ACQUIRED");
  /* The dead waiter's entry went with the decision that ignored it. */
  left = read_reservations (f);
  g_assert_cmpuint (left->len, ==, 0);
  release (second);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* The devices named by the lock file of job @id, as "2" or "0,3". */
static char *
held_devices (Fixture *f, const char *id)
{
  g_autofree char *name = g_strdup_printf ("helper@%s.json", id);
  g_autofree char *path = g_build_filename (f->jobs, name, NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  JsonArray *devices;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  devices = json_object_get_array_member (
    json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "information"), "devices");
  for (guint i = 0; i < json_array_get_length (devices); i++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "",
                            json_object_get_int_member (json_array_get_object_element (devices, i), "index"));
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static Helper *
hold_one (Fixture *f, const char *id)
{
  Helper *holder = plugin_helper_spawn (NULL, "hold", f->type, f->folder, id, "1", f->setting, NULL);
  g_autofree char *line = helper_read_line (holder, 60);

  g_assert_true (g_str_has_prefix (line, "ACQUIRED"));
  return holder;
}

/* A later request granted while a waiter reserves takes a device the
 * waiter did not reserve, though a reserved one is lower and free: on 2
 * large devices (0, 1) and 2 small ones, 1 held, a waiter for 2 large
 * ones reserves 0 (free) and 1; the next 1-device request gets 2, not 0;
 * once 1 comes free, the waiter has both. */
static void
test_later_request_takes_unreserved_device (Fixture *f, gconstpointer data)
{
  Helper *holders[2];
  g_autoptr(Helper) large = NULL;
  g_autoptr(JsonNode) entry = NULL;
  g_autofree char *devices = NULL;
  g_autofree char *answer = NULL;
  Helper *small;

  f->setting = "devices=0:16384:GPU-aaaa;1:16384:GPU-bbbb;2:1024:GPU-cccc;3:1024:GPU-dddd";
  for (guint i = 0; i < G_N_ELEMENTS (holders); i++)
    {
      g_autofree char *id = g_strdup_printf ("holder%u", i);

      holders[i] = hold_one (f, id);
    }
  devices = held_devices (f, "holder1");
  g_assert_cmpstr (devices, ==, "1");
  g_clear_pointer (&devices, g_free);
  release (holders[0]);
  large = start_patient_request (f, "large", "2:16G");
  entry = wait_for_reservation (f, 60);

  small = try_once (f, "small", "1", &answer);
  g_assert_cmpstr (answer, ==, "ACQUIRED");
  devices = held_devices (f, "small");
  g_assert_cmpstr (devices, ==, "2");
  g_clear_pointer (&devices, g_free);
  release (holders[1]);
  helper_expect_line (large, "ACQUIRED", 60);
  devices = held_devices (f, "large");
  g_assert_cmpstr (devices, ==, "0,1");
  helper_close_stdin (large);
  helper_expect_line (large, "RELEASED", 60);
  g_assert_cmpint (helper_wait (large), ==, 0);
  release (small);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, type, fn) g_test_add (path, Fixture, type, fixture_set_up, fn, fixture_tear_down)
  ADD ("/queue/gpu/large-request-served-within-patience", "gpu", test_large_request_served);
  ADD ("/queue/gpu/killed-reserving-waiter-blocks-no-one", "gpu", test_killed_reserving_waiter);
  ADD ("/queue/gpu/later-request-takes-unreserved-device", "gpu", test_later_request_takes_unreserved_device);
  ADD ("/queue/mutex/exclusive-among-shared-served-within-patience", "mutex", test_large_request_served);
  ADD ("/queue/mutex/shared-among-exclusive-served-within-patience", "mutex", test_shared_among_exclusive_served);
  return g_test_run ();
}
