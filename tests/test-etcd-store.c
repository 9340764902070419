/* test-etcd-store.c: the etcd store (tessera-etcd-store.c) through the
 * public API, from child processes: taking and giving back, waiting and
 * its queue, a holder killed, the store's settings.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

/* A holder killed with SIGKILL: its capacity comes back to the waiter
 * once its lease expires, a bounded time after the kill (printed). */
static void
test_store_holder_killed (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = store_spawn (f, NULL, "A", "2", NULL);
  g_autoptr(Helper) waiter = NULL;
  gint64 killed;
  double after;

  expect_acquired (holder, 60);
  waiter = store_spawn (f, no_polling_env, "B", "2", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  killed = g_get_monotonic_time ();
  helper_kill (holder, SIGKILL);
  helper_wait (holder);
  expect_acquired (waiter, 120);
  after = (g_get_monotonic_time () - killed) / 1e6;
  g_test_message ("capacity back %.2f s after SIGKILL of its holder (lease TTL %d s)", after, STORE_TTL);
  /* Not at once: the lease takes it back. Its last renewal came at most
   * a renewal interval (2.8 s of 10 s) before the kill, earlier if the
   * holder was starved then: room for that. */
  g_assert_cmpfloat (after, >=, STORE_TTL / 3.0);
  g_assert_cmpfloat (after, <, STORE_TTL + 10);
  release_store_child (waiter);
}

/* Five processes, four takes each: decisions made on the same revision
 * conflict, and the loser decides again (never an error). */
static void
test_store_contention (Fixture *f, gconstpointer data)
{
  contend_and_audit (f, 5, 4, FALSE);
}

/* A store child of "host" @id: its own local folder as `path`, as on
 * hosts that share no file system. */
static Helper *
queue_spawn (Fixture *f, const char *mode, const char * const *env, const char *id, const char *count)
{
  g_autofree char *path = g_strdup_printf ("path=%s/host-%s/pool", f->dir, id);
  const char *settings[] = { path, NULL };

  return store_spawn_mode (f, mode, env, id, count, settings);
}

/* Whether the pool has a queue entry, on a lease, for job task@ID (@id). */
static gboolean
has_queue_entry (Fixture *f, const char *id)
{
  g_autofree char *key = g_strdup_printf ("/store/tokens/queue/task@%s", id);
  g_autoptr(GPtrArray) entries = pool_keys (f, "queue/");

  for (guint i = 0; i < entries->len; i++)
    {
      TesseraEtcdKv *kv = g_ptr_array_index (entries, i);

      if (g_str_equal (kv->key, key))
        {
          g_assert_cmpint (kv->lease, !=, 0);
          return TRUE;
        }
    }
  return FALSE;
}

static void
let_go (Helper *helper)
{
  release_store_child (helper);
  helper_free (helper);
}

/* A request for the whole pool (2 tokens of 2) among a stream of single
 * tokens taken by other processes that overlap (the pool is never free
 * as a whole), each on its own "host" (its own local folder): once its
 * patience is over, the large request enters the pool's queue in etcd
 * (a key on its lease), every later request counts it as held and is
 * refused, and the large one is served when the last single token goes;
 * its entry is gone after. Without a queue in etcd it would starve. */
static void
test_store_queue (Fixture *f, gconstpointer data)
{
  const char * const patient[] = { "TESSERA_PATIENCE", "1", NULL };
  g_autoptr(Helper) big = NULL;
  g_autoptr(GPtrArray) left = NULL;
  g_autofree char *refused = NULL;
  Helper *held = queue_spawn (f, "store-try", NULL, "small0", "1");
  Helper *last;
  guint i;

  expect_acquired (held, 60);
  big = queue_spawn (f, "store", patient, "big", "2");
  helper_expect_line (big, "WAITING", 60);
  /* Relay single tokens until the large request's entry is in etcd (a
   * process's start outlasts no patience for long: the bound only ends a
   * test that would starve). A single token refused on the way was
   * refused for that entry, made since the last look. */
  for (i = 1; !has_queue_entry (f, "big"); i++)
    {
      g_autofree char *id = g_strdup_printf ("small%u", i);
      g_autofree char *answer = NULL;
      Helper *next;

      if (i > 500)
        g_error ("a request for 2 tokens waited behind %u single ones and never entered the queue", i);
      next = queue_spawn (f, "store-try", NULL, id, "1");
      answer = helper_read_line (next, 60);
      if (g_strcmp0 (answer, "UNAVAILABLE") == 0)
        {
          g_assert_true (has_queue_entry (f, "big"));
          g_assert_cmpint (helper_wait (next), ==, 0);
          helper_free (next);
          break;
        }
      if (answer == NULL || !g_str_has_prefix (answer, "ACQUIRED ms="))
        g_error ("expected ACQUIRED from the store child, got “%s”", answer != NULL ? answer : "(nothing)");
      let_go (held);
      held = next;
    }
  g_test_message ("the large request entered the queue after %u single requests", i - 1);
  /* Its entry counts for everyone, on any host: a single token is refused. */
  last = queue_spawn (f, "store-try", NULL, "after", "1");
  refused = helper_read_line (last, 60);
  g_assert_cmpstr (refused, ==, "UNAVAILABLE");
  g_assert_cmpint (helper_wait (last), ==, 0);
  helper_free (last);

  let_go (held);
  expect_acquired (big, 120);
  g_assert_false (has_queue_entry (f, "big"));
  let_go (g_steal_pointer (&big));
  left = pool_keys (f, "");
  for (guint j = 0; j < left->len; j++)
    g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (left, j))->key, ==, "/store/tokens/informations");
}

/* A reservation under the pool's queue that no process's lease carries
 * (Tessera puts every entry on its waiter's lease: this one is a
 * co-user's, or left by hand) reserves nothing, else it would keep the
 * pool from everyone for ever; one on a live lease counts. */
static void
test_store_queue_leaseless (Fixture *f, gconstpointer data)
{
  const char *entry = "{\"job_uri\": \"/nowhere/x\", \"information\": {\"count\": 2}, "
                      "\"process\": {\"type\": \"local\", \"pid\": 1}, \"ticket\": 1, \"reserve\": true}";
  g_autoptr(GError) error = NULL;
  g_autofree char *refused = NULL;
  Helper *taker;
  gint64 lease;

  put (f, "/store/tokens/queue/x@1", entry, 0);
  taker = store_spawn_mode (f, "store-try", NULL, "A", "1", NULL);
  expect_acquired (taker, 60);
  let_go (taker);

  lease = tessera_etcd_client_lease_grant (f->client, 60, NULL, &error);
  g_assert_no_error (error);
  put (f, "/store/tokens/queue/x@1", entry, lease);
  taker = store_spawn_mode (f, "store-try", NULL, "B", "1", NULL);
  refused = helper_read_line (taker, 60);
  g_assert_cmpstr (refused, ==, "UNAVAILABLE");
  g_assert_cmpint (helper_wait (taker), ==, 0);
  helper_free (taker);
}

/* The reads (ranges) etcd's first member has served so far. */
static gint64
ranges_served (Fixture *f)
{
  return metric (f, "etcd_mvcc_range_total");
}

/* Waiting on an etcd pool polls nothing by default (its watch wakes the
 * waiters): while a waiter waits 5 s, polling left at its default, etcd
 * serves no read (a poll is one: a folder's waiter would poll about eight
 * times meanwhile), and the waiter gets its token at the release. */
static void
test_store_no_polling (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = store_spawn (f, NULL, "A", "2", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *quiet = NULL;
  gint64 before, after;

  expect_acquired (holder, 60);
  waiter = store_spawn (f, NULL, "B", "1", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  before = ranges_served (f);
  quiet = helper_read_line (waiter, 5);
  g_assert_null (quiet);
  after = ranges_served (f);
  g_test_message ("reads of the pool while a waiter waited 5 s: %" G_GINT64_FORMAT, after - before);
  g_assert_cmpint (after - before, ==, 0);
  hand_over_and_end (holder, waiter);
}

/* A pool on etcd configured without `path`: nothing local is the pool's.
 * Processes take, wait (woken by the watch) and give back through the
 * API; `tessera run` and `tessera status` work from a configuration
 * without it and make no folder for the pool (the one a folder pool
 * would get by default). */
static void
test_store_no_path (Fixture *f, gconstpointer data)
{
  const char *no_path[] = { "-path", NULL };
  g_autofree char *config = tool_config (f);
  g_autofree char *default_folder = g_build_filename (f->dir, "state", "tessera", "tokens", NULL);
  g_autoptr(Helper) holder = store_spawn (f, NULL, "A", "2", no_path);
  g_autoptr(Helper) waiter = NULL;

  expect_acquired (holder, 60);
  waiter = store_spawn (f, no_polling_env, "B", "1", no_path);
  helper_expect_line (waiter, "WAITING", 60);
  hand_over_and_end (holder, waiter);

  tool_hand_over (f, config);
  g_assert_false (g_file_test (default_folder, G_FILE_TEST_EXISTS));
}

/* Bad store settings: one line each, naming what is wrong. */
static void
test_store_settings (Fixture *f, gconstpointer data)
{
  const struct { const char *setting; const char *said; } cases[] = {
    { "lease=1", "lease" },
    { "lease=soon", "lease" },
    { "endpoints=ftp://127.0.0.1:1", "endpoints" },
    { "endpoints=", "endpoints" },
    { "prefix=relative/", "prefix" },
    { "store=nosuch", "nosuch" },
    { "store=../etcd", "store name" },
    { "store=folder", "endpoints" },
    { "ca=/nonexistent/ca.pem", "ca" },
    { "key=/nonexistent/key.pem", "cert" },
    { "request-timeout=soon", "request-timeout" },
    { "request-timeout=-1", "request-timeout" },
    { "request-timeout=0.5", "request-timeout" },
    { "request-timeout=31", "request-timeout" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *settings[] = { cases[i].setting, NULL };
      g_autoptr(Helper) child = store_spawn (f, NULL, "A", "0", settings);
      g_autofree char *line = helper_read_line (child, 60);

      g_test_message ("%s: %s", cases[i].setting, line != NULL ? line : "(nothing)");
      g_assert_nonnull (line);
      g_assert_true (g_str_has_prefix (line, "ERROR "));
      g_assert_nonnull (strstr (line, cases[i].said));
      g_assert_cmpint (helper_wait (child), ==, 2);
    }
  {
    g_autoptr(Helper) child = store_spawn (f, NULL, "A", "0", NULL);
    helper_expect_line (child, "OPENED", 60);
    g_assert_cmpint (helper_wait (child), ==, 0);
  }
}

int
main (int argc, char **argv)
{
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/store/acquire-release", NULL, test_store_acquire_release);
  etcd_test_add ("/etcd/store/holder-killed", NULL, test_store_holder_killed);
  etcd_test_add ("/etcd/store/settings", NULL, test_store_settings);
  etcd_test_add ("/etcd/store/contention", NULL, test_store_contention);
  etcd_test_add ("/etcd/store/queue", NULL, test_store_queue);
  etcd_test_add ("/etcd/store/queue-leaseless", NULL, test_store_queue_leaseless);
  etcd_test_add ("/etcd/store/no-polling", NULL, test_store_no_polling);
  etcd_test_add ("/etcd/store/no-path", NULL, test_store_no_path);
  return etcd_test_run ();
}
