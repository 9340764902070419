/* test-etcd.c: the etcd client against a real etcd (Debian's etcd-server,
 * installed by scripts/bootstrap.sh), one member or three, started by
 * tests/etcd-fixture.sh on free loopback ports in a temporary folder and
 * stopped after. A test that cannot start etcd fails; it never skips.
 *
 * The etcd store (a module: plugins/etcd/etcd.plugin) is used through
 * the public API by child processes (this program again, STORE_ENV set),
 * never in the test process: the module has its own copy of the client,
 * whose GType the test process registers already.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-etcd-client.h"
#include "tessera-etcd-lease.h"
#include "tessera-etcd-pool.h"
#include "test-counter.h"
#include "test-utils.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct
{
  char *dir;
  TesseraEtcdClient *client;
} Fixture;

static void
fixture_run_full (Fixture *f, const char *action, const char *arg, const char *mode)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "etcd-fixture.sh", NULL);
  const char *argv[] = { "bash", script, action, f->dir, arg, mode, NULL };

  test_run_or_fail (argv);
}

static void
fixture_run (Fixture *f, const char *action, const char *arg)
{
  fixture_run_full (f, action, arg, NULL);
}

/* The fixture's file @name (a certificate of a "tls" cluster). */
static char *
fixture_file (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

static char **
endpoints (Fixture *f)
{
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strsplit (g_strstrip (text), ",", -1);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  /* "1" or "3" members, or "tls": one member speaking https only to
   * clients with a certificate. */
  gboolean tls = g_strcmp0 (data, "tls") == 0;
  const char *members = data != NULL && !tls ? data : "1";
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) list = NULL;

  f->dir = test_make_tmpdir ();
  fixture_run_full (f, "start", members, tls ? "tls" : NULL);
  list = endpoints (f);
  f->client = tessera_etcd_client_new ((const char * const *) list, &error);
  g_assert_no_error (error);
  if (tls)
    {
      g_autofree char *ca = fixture_file (f, "ca.pem");
      g_autofree char *cert = fixture_file (f, "client.pem");
      g_autofree char *key = fixture_file (f, "client-key.pem");

      g_assert_true (tessera_etcd_client_set_tls (f->client, ca, cert, key, &error));
      g_assert_no_error (error);
    }
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->client);
  fixture_run (f, "stop", NULL);
  test_remove_tree (f->dir);
  g_free (f->dir);
}

static GBytes *
text_bytes (const char *text)
{
  return g_bytes_new (text, strlen (text));
}

static void
put (Fixture *f, const char *key, const char *value, gint64 lease)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = text_bytes (value);

  gboolean ok = tessera_etcd_client_put (f->client, key, bytes, lease, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (ok);
}

static GPtrArray *
range_prefix (Fixture *f, const char *prefix, gint64 *revision)
{
  g_autofree char *end = tessera_etcd_prefix_end (prefix);
  g_autoptr(GError) error = NULL;
  GPtrArray *kvs = NULL;

  g_assert_true (tessera_etcd_client_range (f->client, prefix, end, revision, &kvs, NULL, &error));
  g_assert_no_error (error);
  return kvs;
}

static void
assert_value (TesseraEtcdKv *kv, const char *key, const char *value)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (kv->value, &length);

  g_assert_cmpstr (kv->key, ==, key);
  g_assert_cmpmem (data, length, value, strlen (value));
}

/* Keys under a prefix, and nothing else, with their revisions. */
static void
test_put_and_range (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) kvs = NULL;
  gint64 revision = 0;

  put (f, "/tessera/gpu/jobs/a@1", "{\"count\": 1}", 0);
  put (f, "/tessera/gpu/jobs/b@2", "{\"count\": 2}", 0);
  put (f, "/tessera/gpuX/jobs/c@3", "{}", 0);
  put (f, "/tessera/gpu/informations", "{\"devices\": []}", 0);
  kvs = range_prefix (f, "/tessera/gpu/jobs/", &revision);
  g_assert_cmpuint (kvs->len, ==, 2);
  assert_value (g_ptr_array_index (kvs, 0), "/tessera/gpu/jobs/a@1", "{\"count\": 1}");
  assert_value (g_ptr_array_index (kvs, 1), "/tessera/gpu/jobs/b@2", "{\"count\": 2}");
  g_assert_cmpint (revision, >=, ((TesseraEtcdKv *) g_ptr_array_index (kvs, 1))->mod_revision);
  g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (kvs, 0))->create_revision, >, 0);
}

/* A put conditioned on the key being the one created at a revision:
 * it replaces that key, and does not make again a key deleted since
 * (a holder removed while its process was being written in). */
static void
test_put_if_created (Fixture *f, gconstpointer data)
{
  g_autoptr(GBytes) updated = text_bytes ("{\"process\": 1}");
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) gone = NULL;
  g_autoptr(GError) error = NULL;
  gint64 created;
  gboolean ok = FALSE;

  put (f, "/c/jobs/me@1", "{}", 0);
  first = range_prefix (f, "/c/jobs/me@1", NULL);
  g_assert_cmpuint (first->len, ==, 1);
  created = ((TesseraEtcdKv *) g_ptr_array_index (first, 0))->create_revision;
  g_assert_true (tessera_etcd_client_put_if_created (f->client, "/c/jobs/me@1", created, updated, 0, &ok,
                                                     NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ok);
  {
    g_autoptr(GPtrArray) now = range_prefix (f, "/c/jobs/me@1", NULL);
    assert_value (g_ptr_array_index (now, 0), "/c/jobs/me@1", "{\"process\": 1}");
  }

  g_assert_true (tessera_etcd_client_delete (f->client, "/c/jobs/me@1", NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (tessera_etcd_client_put_if_created (f->client, "/c/jobs/me@1", created, updated, 0, &ok,
                                                     NULL, &error));
  g_assert_no_error (error);
  g_assert_false (ok);
  gone = range_prefix (f, "/c/", NULL);
  g_assert_cmpuint (gone->len, ==, 0);
}

/* A put conditioned on "nothing under the pool changed since the view I
 * decided on" fails when a peer wrote in between, and passes on a fresh
 * view: the transaction is the lock. */
static void
test_put_if_unchanged (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;
  g_autoptr(GBytes) mine = text_bytes ("{\"count\": 1}");
  g_autoptr(GError) error = NULL;
  gint64 seen = 0, fresh = 0;
  gboolean ok = TRUE;

  put (f, "/p/jobs/peer@0", "{}", 0);
  first = range_prefix (f, "/p/", &seen);
  put (f, "/p/jobs/peer@1", "{}", 0);   /* a peer, after our read */
  g_assert_true (tessera_etcd_client_put_if_unchanged (f->client, "/p/", seen, "/p/jobs/me@1", mine, 0,
                                                        &ok, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (ok);

  second = range_prefix (f, "/p/", &fresh);
  g_assert_true (tessera_etcd_client_put_if_unchanged (f->client, "/p/", fresh, "/p/jobs/me@1", mine, 0,
                                                        &ok, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ok);
  {
    g_autoptr(GPtrArray) third = range_prefix (f, "/p/", NULL);
    g_assert_cmpuint (second->len + 1, ==, third->len);
  }
}

/* A key attached to a lease that is not kept alive goes when the lease
 * expires; one that is kept alive stays. */
static void
test_lease (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  gint64 dying = tessera_etcd_client_lease_grant (f->client, 2, NULL, &error);
  /* Renewed every quarter second: 6 s leaves room for a loaded machine. */
  gint64 kept = tessera_etcd_client_lease_grant (f->client, 6, NULL, &error);
  gint64 start = g_get_monotonic_time ();
  gint64 ttl = 0;

  g_assert_no_error (error);
  g_assert_cmpint (dying, !=, 0);
  g_assert_cmpint (kept, !=, 0);
  put (f, "/l/jobs/dying@1", "{}", dying);
  put (f, "/l/jobs/kept@1", "{}", kept);
  while (TRUE)
    {
      g_autoptr(GPtrArray) kvs = range_prefix (f, "/l/jobs/dying", NULL);

      if (kvs->len == 0)
        break;
      g_assert_cmpint (g_get_monotonic_time () - start, <, 60 * G_USEC_PER_SEC);
      g_assert_true (tessera_etcd_client_lease_keepalive (f->client, kept, &ttl, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (ttl, >, 0);
      g_usleep (G_USEC_PER_SEC / 4);
    }
  g_test_message ("a key on a 2 s lease went %.1f s after its last renewal",
                  (g_get_monotonic_time () - start) / 1e6);
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/l/jobs/kept", NULL);
    g_assert_cmpuint (kvs->len, ==, 1);
  }
  g_assert_false (tessera_etcd_client_lease_keepalive (f->client, dying, NULL, NULL, &error));
  g_assert_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_LEASE_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (tessera_etcd_client_lease_revoke (f->client, kept, NULL, &error));
  g_assert_no_error (error);
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/l/jobs/kept", NULL);
    g_assert_cmpuint (kvs->len, ==, 0);
  }
}

/* Collects events until @count have come (bounded). */
static GPtrArray *
collect_events (TesseraEtcdWatch *watch, guint count)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (all->len < count)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) events = tessera_etcd_watch_next (watch, 1.0, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (events);
      while (events->len > 0)
        g_ptr_array_add (all, g_ptr_array_steal_index (events, 0));
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
    }
  return all;
}

static gpointer
cancel_soon (gpointer cancellable)
{
  g_usleep (200 * 1000);
  g_cancellable_cancel (cancellable);
  return NULL;
}

/* A wait for changes with no end ends when its cancellable is cancelled
 * from another thread, and at once when it already is; the watch goes on
 * serving the changes after (a cancel leaves nothing in its way). */
static void
test_watch_cancelled (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/wc/");
  gint64 revision = 0;

  g_ptr_array_unref (range_prefix (f, "/wc/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/wc/", end, revision + 1, &error);
  g_assert_no_error (error);
  for (guint round = 0; round < 3; round++)
    {
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(GThread) canceller = NULL;
      g_autoptr(GPtrArray) events = NULL;

      if (round == 2)
        g_cancellable_cancel (cancellable);
      else
        canceller = g_thread_new ("canceller", cancel_soon, cancellable);
      events = tessera_etcd_watch_next (watch, -1, NULL, cancellable, &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_assert_null (events);
      g_clear_error (&error);
      if (canceller != NULL)
        g_thread_join (g_steal_pointer (&canceller));
    }
  put (f, "/wc/after", "1", 0);
  {
    g_autoptr(GPtrArray) events = collect_events (watch, 1);
    g_assert_cmpuint (events->len, ==, 1);
    assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 0))->kv, "/wc/after", "1");
  }
}

/* A watch from a revision sees every change after it, in order, puts and
 * deletes; a large value arrives whole across the stream's chunks. */
static void
test_watch (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/w/");
  /* Past one read of the stream; within etcd's request limit (1.5 MiB). */
  g_autofree char *large = g_strnfill (1024 * 1024, 'x');
  gint64 revision = 0;
  TesseraEtcdEvent *event;

  put (f, "/w/before", "0", 0);
  g_ptr_array_unref (range_prefix (f, "/w/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/w/", end, revision + 1, &error);
  g_assert_no_error (error);
  put (f, "/w/a", "1", 0);
  put (f, "/w/b", large, 0);
  g_assert_true (tessera_etcd_client_delete (f->client, "/w/a", NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  put (f, "/elsewhere", "9", 0);
  events = collect_events (watch, 3);
  g_assert_cmpuint (events->len, ==, 3);
  event = g_ptr_array_index (events, 0);
  g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_PUT);
  assert_value (event->kv, "/w/a", "1");
  event = g_ptr_array_index (events, 1);
  g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_PUT);
  assert_value (event->kv, "/w/b", large);
  event = g_ptr_array_index (events, 2);
  g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_DELETE);
  g_assert_cmpstr (event->kv->key, ==, "/w/a");
  /* Nothing more: the time runs out with no event. */
  {
    g_autoptr(GPtrArray) none = tessera_etcd_watch_next (watch, 0.5, NULL, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (none->len, ==, 0);
  }
}

/* Many changes at once: the stream brings several messages per read
 * (each its own JSON object); each is handed out once, in order. */
static void
test_watch_burst (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/burst/");
  gint64 revision = 0;

  g_ptr_array_unref (range_prefix (f, "/burst/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/burst/", end, revision + 1, &error);
  g_assert_no_error (error);
  for (int i = 0; i < 200; i++)
    {
      g_autofree char *key = g_strdup_printf ("/burst/%03d", i);
      g_autofree char *value = g_strdup_printf ("%d", i);
      put (f, key, value, 0);
    }
  events = collect_events (watch, 200);
  g_assert_cmpuint (events->len, ==, 200);
  for (guint i = 0; i < events->len; i++)
    {
      TesseraEtcdEvent *event = g_ptr_array_index (events, i);
      g_autofree char *key = g_strdup_printf ("/burst/%03u", i);
      g_autofree char *value = g_strdup_printf ("%u", i);

      g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_PUT);
      assert_value (event->kv, key, value);
    }
}

/* The member number (1…N) of the leader. */
static char *
leader_of (Fixture *f)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "etcd-fixture.sh", NULL);
  const char *argv[] = { "bash", script, "leader", f->dir, NULL };
  g_autoptr(GError) error = NULL;
  char *leader = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &leader, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_strstrip (leader);
}

/* The fixture's client again, with member @first's endpoint first: the
 * member its calls and watches go to while it answers. */
static void
prefer_member (Fixture *f, const char *first)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) ordered = NULL;
  g_autoptr(GError) error = NULL;
  guint k = (guint) atoi (first) - 1;

  g_assert_cmpuint (k, <, g_strv_length (list));
  g_strv_builder_add (builder, list[k]);
  for (guint i = 0; list[i] != NULL; i++)
    if (i != k)
      g_strv_builder_add (builder, list[i]);
  ordered = g_strv_builder_end (builder);
  g_clear_object (&f->client);
  f->client = tessera_etcd_client_new ((const char * const *) ordered, &error);
  g_assert_no_error (error);
}

/* Three members: the leader, which the watch and the calls go to, is
 * killed; calls and the watch go on through the other members after the
 * election. */
static void
test_leader_killed (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *leader = leader_of (f);
  g_autofree char *end = tessera_etcd_prefix_end ("/k/");
  gint64 revision = 0;
  gint64 start;

  prefer_member (f, leader);
  put (f, "/k/a", "1", 0);
  g_ptr_array_unref (range_prefix (f, "/k/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/k/", end, revision + 1, &error);
  g_assert_no_error (error);
  put (f, "/k/b", "2", 0);
  events = collect_events (watch, 1);
  g_clear_pointer (&events, g_ptr_array_unref);
  fixture_run (f, "kill", leader);

  start = g_get_monotonic_time ();
  put (f, "/k/c", "3", 0);
  g_test_message ("first write %.1f s after the leader (member %s) was killed",
                  (g_get_monotonic_time () - start) / 1e6, leader);
  events = collect_events (watch, 1);
  assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 0))->kv, "/k/c", "3");
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/k/", NULL);
    g_assert_cmpuint (kvs->len, ==, 3);
  }
}

/* Three members: the member the watch reads from is frozen (SIGSTOP): it
 * keeps the stream open and says nothing. The watch goes on through
 * another member once its member misses a request deadline (the stream
 * silent for one, its status is asked for). */
static void
test_frozen_member (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/z/");
  gint64 revision = 0;
  gint64 start;

  prefer_member (f, "1");
  put (f, "/z/a", "1", 0);
  g_ptr_array_unref (range_prefix (f, "/z/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/z/", end, revision + 1, &error);
  g_assert_no_error (error);
  put (f, "/z/b", "2", 0);
  events = collect_events (watch, 1);
  g_clear_pointer (&events, g_ptr_array_unref);

  fixture_run (f, "freeze", "1");
  start = g_get_monotonic_time ();
  put (f, "/z/c", "3", 0);
  events = collect_events (watch, 1);
  g_test_message ("the watch saw a change %.1f s after its member froze",
                  (g_get_monotonic_time () - start) / 1e6);
  assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 0))->kv, "/z/c", "3");
  fixture_run (f, "thaw", "1");
}

/* Large values under a prefix (each near etcd's limit, together well past
 * one reply's) leave it readable and watchable. */
static void
test_large_values (Fixture *f, gconstpointer data)
{
  g_autofree char *large = g_strnfill (1300 * 1024, 'v');
  g_autofree char *end = tessera_etcd_prefix_end ("/big/");
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) kvs = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  gint64 revision = 0;

  put (f, "/big/0", "small", 0);
  g_ptr_array_unref (range_prefix (f, "/big/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/big/", end, revision + 1, &error);
  g_assert_no_error (error);
  for (int i = 1; i <= 14; i++)
    {
      g_autofree char *key = g_strdup_printf ("/big/%02d", i);
      put (f, key, large, 0);
    }
  kvs = range_prefix (f, "/big/", NULL);
  g_assert_cmpuint (kvs->len, ==, 15);
  assert_value (g_ptr_array_index (kvs, 14), "/big/14", large);
  events = collect_events (watch, 14);
  assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 13))->kv, "/big/14", large);
}

/* The reply to a conditional put is lost after etcd applied it: the
 * client, sending it again, must not report a failure while the key it
 * wrote sits on its lease. */
static void
test_lost_reply (Fixture *f, gconstpointer data)
{
  g_autofree char *proxy = g_test_build_filename (G_TEST_DIST, "etcd-drop-proxy.py", NULL);
  g_auto(GStrv) list = endpoints (f);
  g_autofree char *upstream = g_strdup (strrchr (list[0], ':') + 1);
  g_autoptr(GSocket) probe = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, 0, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autofree char *port = NULL;
  g_autofree char *url = NULL;
  g_autofree char *ready = NULL;
  g_autoptr(GSubprocess) relay = NULL;
  g_autoptr(TesseraEtcdClient) client = NULL;
  g_autoptr(GBytes) mine = text_bytes ("{\"count\": 1}");
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  gint64 seen = 0, lease;
  gboolean ok = FALSE;

  g_assert_true (g_socket_bind (probe, any, TRUE, NULL));
  bound = g_socket_get_local_address (probe, NULL);
  port = g_strdup_printf ("%u", g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  g_socket_close (probe, NULL);
  relay = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, test_python (), proxy, upstream, port, NULL);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (relay));
  ready = g_data_input_stream_read_line (lines, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ready, ==, "ready");

  url = g_strdup_printf ("http://127.0.0.1:%s", port);
  client = tessera_etcd_client_new ((const char *[]) { url, NULL }, &error);
  g_assert_no_error (error);
  lease = tessera_etcd_client_lease_grant (client, 60, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_etcd_client_range (client, "/r/", "/r0", &seen, NULL, NULL, &error));
  g_assert_true (tessera_etcd_client_put_if_unchanged (client, "/r/", seen, "/r/jobs/me@1", mine, lease,
                                                        &ok, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ok);
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/r/", NULL);
    g_assert_cmpuint (kvs->len, ==, 1);
  }
  g_subprocess_force_exit (relay);
  g_subprocess_wait (relay, NULL, NULL);
}

/* No member answers: a clear error once the retry time is spent. */
static void
test_nobody_answers (Fixture *f, gconstpointer data)
{
  const char *dead[] = { "http://127.0.0.1:9", NULL };
  g_autoptr(TesseraEtcdClient) client = NULL;
  g_autoptr(GError) error = NULL;

  client = tessera_etcd_client_new (dead, &error);
  g_assert_no_error (error);
  tessera_etcd_client_set_retry_time (client, 1.0);
  g_assert_false (tessera_etcd_client_range (client, "/x", NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_STORE_UNREACHABLE);
}

/* Endpoints that are not http(s)://HOST:PORT are refused. */
static void
test_bad_endpoints (Fixture *f, gconstpointer data)
{
  const char *cases[][2] = {
    { "file:///etc/passwd", NULL }, { "127.0.0.1:2379", NULL }, { "http://h:1/v3/kv", NULL }, { "", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraEtcdClient) client = tessera_etcd_client_new (cases[i], &error);

      g_assert_null (client);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    }
}


/* ---------------------------------------------------------------------- */
/* The process's lease (tessera-etcd-lease.c) */

static TesseraEtcdClient *
client_for (const char * const *list)
{
  g_autoptr(GError) error = NULL;
  TesseraEtcdClient *client = tessera_etcd_client_new (list, &error);

  g_assert_no_error (error);
  return client;
}

/* No event under @prefix's watch for @seconds: the keys stayed. */
static void
assert_quiet (TesseraEtcdWatch *watch, double seconds)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (g_get_monotonic_time () < until)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) events =
        tessera_etcd_watch_next (watch, (double) (until - g_get_monotonic_time ()) / G_USEC_PER_SEC,
                                 NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (events->len, ==, 0);
    }
}

/* A key on a lease that its keeper renews outlives three TTLs; freeing
 * the lease revokes it, and the key goes at once. */
static void
test_lease_kept_alive (Fixture *f, gconstpointer data)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(TesseraEtcdClient) keeper = client_for ((const char * const *) list);
  g_autofree char *end = tessera_etcd_prefix_end ("/ka/");
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  TesseraEtcdLease *lease;
  TesseraEtcdEvent *event;
  gint64 revision = 0, start;

  lease = tessera_etcd_lease_new (f->client, keeper, 6, &error);   /* room for a loaded machine */
  g_assert_no_error (error);
  g_assert_nonnull (lease);
  put (f, "/ka/jobs/me@1", "{}", tessera_etcd_lease_get_id (lease));
  g_ptr_array_unref (range_prefix (f, "/ka/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/ka/", end, revision + 1, &error);
  g_assert_no_error (error);

  assert_quiet (watch, 3 * tessera_etcd_lease_get_ttl (lease));
  g_assert_cmpfloat (tessera_etcd_lease_get_unrenewed (lease), <, tessera_etcd_lease_get_ttl (lease));
  g_assert_false (tessera_etcd_lease_is_lost (lease));

  start = g_get_monotonic_time ();
  tessera_etcd_lease_free (lease);
  events = collect_events (watch, 1);
  event = g_ptr_array_index (events, 0);
  g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_DELETE);
  g_assert_cmpstr (event->kv->key, ==, "/ka/jobs/me@1");
  g_test_message ("revoked: the key went %.2f s after the lease was freed",
                  (g_get_monotonic_time () - start) / 1e6);
}

/* The first endpoint accepts connections and never answers (a hung
 * member): each keep-alive still reaches the other member well within
 * the TTL, because one request to one member has a short deadline (a
 * client's default, 10 s, is past this 8 s TTL, long enough for a loaded
 * machine). */
static void
test_lease_hung_member (Fixture *f, gconstpointer data)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GSocket) hole = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, 0, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autofree char *hole_url = NULL;
  g_autoptr(TesseraEtcdClient) keeper = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/hung/");
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(TesseraEtcdLease) lease = NULL;
  g_autoptr(GError) error = NULL;
  gint64 revision = 0;

  g_assert_true (g_socket_bind (hole, any, TRUE, &error));
  g_assert_true (g_socket_listen (hole, &error));
  g_assert_no_error (error);
  bound = g_socket_get_local_address (hole, NULL);
  hole_url = g_strdup_printf ("http://127.0.0.1:%u", g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  keeper = client_for ((const char *[]) { hole_url, list[0], NULL });

  lease = tessera_etcd_lease_new (f->client, keeper, 8, &error);
  g_assert_no_error (error);
  put (f, "/hung/jobs/me@1", "{}", tessera_etcd_lease_get_id (lease));
  g_ptr_array_unref (range_prefix (f, "/hung/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/hung/", end, revision + 1, &error);
  g_assert_no_error (error);
  assert_quiet (watch, 3 * tessera_etcd_lease_get_ttl (lease));
  g_test_message ("kept alive through a hung member; unrenewed for %.2f s of a %d s TTL",
                  tessera_etcd_lease_get_unrenewed (lease), (int) tessera_etcd_lease_get_ttl (lease));
  g_assert_false (tessera_etcd_lease_is_lost (lease));
}

#define HOLD_ENV "TESSERA_TEST_ETCD_HOLD"
#define HOLD_TTL 6   /* room for a loaded machine (see STORE_TTL) */

/* The holder process (this program again, with HOLD_ENV set to the
 * endpoints): takes a lease, puts its key on it, says "ready" and waits
 * to be killed. */
static int
hold_until_killed (const char *endpoint_list, const char *key)
{
  g_auto(GStrv) list = g_strsplit (endpoint_list, ",", -1);
  g_autoptr(TesseraEtcdClient) client = client_for ((const char * const *) list);
  g_autoptr(TesseraEtcdClient) keeper = client_for ((const char * const *) list);
  g_autoptr(GBytes) value = text_bytes ("{\"count\": 1}");
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdLease) lease = tessera_etcd_lease_new (client, keeper, HOLD_TTL, &error);

  if (lease == NULL ||
      !tessera_etcd_client_put (client, key, value, tessera_etcd_lease_get_id (lease), NULL, NULL, &error))
    {
      fprintf (stderr, "holder: %s\n", error->message);
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  while (TRUE)
    pause ();
}

/* A holder process is killed with SIGKILL (it revokes nothing): its key
 * goes once its lease expires, a bounded time after the kill (printed). */
static void
test_lease_holder_killed (Fixture *f, gconstpointer data)
{
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *end = tessera_etcd_prefix_end ("/killed/");
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  TesseraEtcdEvent *event;
  gint64 revision = 0, killed;
  double after;

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  g_subprocess_launcher_setenv (launcher, HOLD_ENV, g_strstrip (list), TRUE);
  holder = g_subprocess_launcher_spawn (launcher, &error, self, "/killed/jobs/holder@1", NULL);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  ready = g_data_input_stream_read_line (lines, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (ready, ==, "ready");
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/killed/", &revision);
    g_assert_cmpuint (kvs->len, ==, 1);
  }
  watch = tessera_etcd_client_watch (f->client, "/killed/", end, revision + 1, &error);
  g_assert_no_error (error);

  killed = g_get_monotonic_time ();
  g_subprocess_send_signal (holder, SIGKILL);
  g_assert_true (g_subprocess_wait (holder, NULL, &error));
  events = collect_events (watch, 1);
  after = (g_get_monotonic_time () - killed) / 1e6;
  event = g_ptr_array_index (events, 0);
  g_assert_cmpint (event->type, ==, TESSERA_ETCD_EVENT_DELETE);
  g_assert_cmpstr (event->kv->key, ==, "/killed/jobs/holder@1");
  g_test_message ("capacity back %.2f s after SIGKILL of its holder (lease TTL %d s)", after, HOLD_TTL);
  /* Its last renewal came at most a third of the TTL before the kill;
   * etcd checks expiry twice a second. Generous for a loaded machine. */
  g_assert_cmpfloat (after, <, HOLD_TTL + 10);
}

/* ---------------------------------------------------------------------- */
/* A pool's keys (tessera-etcd-pool.c) */

#define CONTEND_ENV "TESSERA_TEST_ETCD_CONTEND"
#define CONTEND_PREFIX "/contend/"
#define CONTEND_POOL "tokens"

static TesseraDynamicLockFile *
lock_file_for (const char *key, const char *job_uri)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}}", job_uri);
  TesseraDynamicLockFile *lock_file =
    tessera_dynamic_lock_file_new_from_data (TESSERA_TYPE_DYNAMIC_LOCK_FILE, key, text, -1, &error);

  g_assert_no_error (error);
  return lock_file;
}

/* The capacity the pool's informations give, or -1. */
static gint64
total_of (TesseraEtcdPoolState *state)
{
  if (state->informations == NULL || !JSON_NODE_HOLDS_OBJECT (state->informations))
    return -1;
  return json_object_get_int_member_with_default (json_node_get_object (state->informations), "total", -1);
}

/* Replays @events (puts and deletes of holder keys, in revision order):
 * at no revision are more than @total holders live, and none is left at
 * the end. Returns the most live at once. */
static guint
audit_holders (GPtrArray *events, guint total)
{
  g_autoptr(GHashTable) live = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint most = 0;

  for (guint i = 0; i < events->len; i++)
    {
      TesseraEtcdEvent *event = g_ptr_array_index (events, i);

      if (event->type == TESSERA_ETCD_EVENT_PUT)
        g_hash_table_add (live, g_strdup (event->kv->key));
      else
        g_assert_true (g_hash_table_remove (live, event->kv->key));
      g_assert_cmpuint (g_hash_table_size (live), <=, total);
      most = MAX (most, g_hash_table_size (live));
    }
  g_assert_cmpuint (g_hash_table_size (live), ==, 0);
  return most;
}

/* A contender process (this program again, CONTEND_ENV set to the
 * endpoints): @rounds times, takes one token of the pool the etcd way
 * (read at a revision, judge, put only if nothing changed since, else
 * read again; wait on a watch when full), holds it a moment, lets it go.
 * Prints how many of its writes were refused. */
static int
contend (const char *endpoint_list, const char *id, int rounds)
{
  g_auto(GStrv) list = g_strsplit (endpoint_list, ",", -1);
  g_autoptr(TesseraEtcdClient) client = client_for ((const char * const *) list);
  g_autoptr(TesseraEtcdClient) keeper = client_for ((const char * const *) list);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdLease) lease = tessera_etcd_lease_new (client, keeper, 10, &error);
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autofree char *name = g_strdup_printf ("contend@%s", id);
  g_autofree char *job_uri = g_strdup_printf ("/jobs/%s", id);
  guint refused = 0;

  if (lease == NULL)
    goto fail;
  pool = tessera_etcd_pool_new (client, CONTEND_PREFIX, CONTEND_POOL, TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  if (pool == NULL)
    goto fail;
  for (int round = 0; round < rounds; round++)
    {
      gboolean held = FALSE;

      while (!held)
        {
          g_autoptr(TesseraEtcdPoolState) state = tessera_etcd_pool_read (pool, NULL, &error);
          gboolean changed;

          if (state == NULL)
            goto fail;
          if ((gint64) state->holders->len < total_of (state))
            {
              g_autofree char *key = tessera_etcd_pool_dup_holder_key (pool, name);
              g_autoptr(TesseraDynamicLockFile) mine = lock_file_for (key, job_uri);

              if (!tessera_etcd_pool_put_holder (pool, state->revision, name, mine,
                                                 tessera_etcd_lease_get_id (lease), &held, NULL, NULL, &error))
                goto fail;
              refused += !held;
            }
          else if (!tessera_etcd_pool_wait (pool, state->revision, 30, &changed, NULL, &error))
            goto fail;
        }
      g_usleep (G_USEC_PER_SEC / 50);   /* the work done with the token */
      if (!tessera_etcd_pool_delete_holder (pool, name, NULL, &error))
        goto fail;
    }
  printf ("%u\n", refused);
  return 0;
fail:
  fprintf (stderr, "contender %s: %s\n", id, error->message);
  return 1;
}

/* Five processes take the two tokens of a pool four times each, at once.
 * An auditor replays every change under the pool from the revision
 * before they started: at no revision are more than two holder keys
 * live, and all are gone at the end. */
static void
test_pool_contention (Fixture *f, gconstpointer data)
{
  const guint contenders = 5, rounds = 4;
  const gint64 total = 2;
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *end = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GPtrArray) children = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(JsonNode) informations = json_from_string ("{\"total\": 2}", NULL);
  g_autoptr(GError) error = NULL;
  guint most = 0, refused = 0;
  gint64 revision = 0;

  pool = tessera_etcd_pool_new (f->client, CONTEND_PREFIX, CONTEND_POOL, TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_etcd_pool_put_informations (pool, informations, NULL, &error));
  g_assert_no_error (error);
  end = tessera_etcd_prefix_end (tessera_etcd_pool_get_key (pool));
  g_ptr_array_unref (range_prefix (f, tessera_etcd_pool_get_key (pool), &revision));
  watch = tessera_etcd_client_watch (f->client, tessera_etcd_pool_get_key (pool), end, revision + 1, &error);
  g_assert_no_error (error);

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  g_subprocess_launcher_setenv (launcher, CONTEND_ENV, g_strstrip (list), TRUE);
  for (guint i = 0; i < contenders; i++)
    {
      g_autofree char *id = g_strdup_printf ("%u", i);
      g_autofree char *n = g_strdup_printf ("%u", rounds);
      GSubprocess *child = g_subprocess_launcher_spawn (launcher, &error, self, "contend", id, n, NULL);

      g_assert_no_error (error);
      g_ptr_array_add (children, child);
    }
  for (guint i = 0; i < children->len; i++)
    {
      g_autofree char *out = NULL;

      g_assert_true (g_subprocess_communicate_utf8 (g_ptr_array_index (children, i), NULL, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (g_ptr_array_index (children, i)));
      g_assert_cmpint (g_subprocess_get_exit_status (g_ptr_array_index (children, i)), ==, 0);
      refused += (guint) atoi (out);
    }

  /* Every take and every release, in revision order. */
  events = collect_events (watch, 2 * contenders * rounds);
  most = audit_holders (events, (guint) total);
  g_test_message ("%u takes by %u processes of a %d-token pool: at most %u held at once, "
                  "%u conditional writes refused (decided again)",
                  contenders * rounds, contenders, (int) total, most, refused);
}

/* Values under a pool that a hostile co-user wrote: not JSON, too deep,
 * large garbage, keys that are not the pool's shapes. Each unreadable
 * holder is kept (it holds everything) with why; the rest is ignored. */
static void
test_pool_hostile (Fixture *f, gconstpointer data)
{
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autofree char *garbage = g_strnfill (1300 * 1024, '{');
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autoptr(TesseraEtcdPoolState) state = NULL;
  g_autoptr(GError) error = NULL;

  for (int i = 0; i < 10000; i++)
    g_string_append_c (deep, '[');
  put (f, "/h/gpu/informations", "{\"total\": ", 0);
  put (f, "/h/gpu/jobs/a@1", "not json", 0);
  put (f, "/h/gpu/jobs/b@1", deep->str, 0);
  put (f, "/h/gpu/jobs/c@1", garbage, 0);
  put (f, "/h/gpu/jobs/d@1", "{\"job_uri\": \"/jobs/d\", \"information\": {\"count\": 1}}", 0);
  put (f, "/h/gpu/jobs/e/f", "{}", 0);
  put (f, "/h/gpu/elsewhere", "{}", 0);
  put (f, "/h/gpux/jobs/g@1", "{}", 0);

  g_assert_null (tessera_etcd_pool_new (f->client, "h/", "gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_clear_error (&error);
  g_assert_null (tessera_etcd_pool_new (f->client, "/h/", "../gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_clear_error (&error);

  pool = tessera_etcd_pool_new (f->client, "/h", "gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (tessera_etcd_pool_get_key (pool), ==, "/h/gpu/");
  state = tessera_etcd_pool_read (pool, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (state->informations);
  g_assert_error (state->informations_error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION);
  g_assert_cmpuint (state->holders->len, ==, 4);
  for (guint i = 0; i < 3; i++)
    {
      TesseraEtcdHolder *holder = g_ptr_array_index (state->holders, i);

      g_assert_null (holder->lock_file);
      g_assert_error (holder->error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
    }
  {
    TesseraEtcdHolder *holder = g_ptr_array_index (state->holders, 3);

    g_assert_cmpstr (holder->name, ==, "d@1");
    g_assert_nonnull (holder->lock_file);
    g_assert_true (tessera_dynamic_lock_file_is_valid (holder->lock_file));
  }
}

/* ---------------------------------------------------------------------- */
/* The etcd store (tessera-etcd-store.c), through the public API */

#define STORE_ENV "TESSERA_TEST_ETCD_STORE"
/* The lease of the store's test processes. A holder whose renewals do
 * not get through for a whole lease loses its holdings (as it must):
 * under ten CI jobs' load on two cores a 3 s lease lapsed (a waiter
 * started next found the tokens free), so the tests, which are not
 * about expiry but where they measure it, leave more room. */
#define STORE_TTL 10

static void
say (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
say (const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  vprintf (format, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
}

static int
store_cycle (TesseraDynamicResource *resource, const char *base, const char *id, int rounds)
{
  for (int round = 0; round < rounds; round++)
    {
      g_autofree char *identifier = g_strdup_printf ("%s-%d", id, round);
      g_autoptr(TesseraJob) job = test_job_new (base, "task", identifier);
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicDependency) dependency =
        tessera_dynamic_resource_create_dependency (resource, job, "1", &error);
      g_autoptr(TesseraDynamicDependencyLock) lock =
        dependency != NULL ? tessera_dynamic_dependency_lock (dependency, 120, NULL, &error) : NULL;

      if (lock == NULL)
        {
          say ("ERROR %s", error->message);
          return 1;
        }
      g_usleep (G_USEC_PER_SEC / 50);   /* the work done with the token */
      if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
        {
          say ("ERROR %s", error->message);
          return 1;
        }
    }
  say ("DONE");
  return 0;
}

/* A store child: test-etcd store BASE ID COUNT [KEY=VALUE…], STORE_ENV
 * set to the endpoints. Opens the countertoken pool "tokens" (total 2,
 * prefix /store/, a STORE_TTL lease, on etcd; KEY=VALUE settings added
 * or replacing these, -KEY leaving KEY out) the way a key file does;
 * COUNT 0: prints "OPENED"
 * and ends. Else tries once to take COUNT units as job task@ID; if that
 * fails, prints "WAITING" and waits up to 120 s; prints "ACQUIRED ms=N
 * token=T" (N: milliseconds waited, T: the grant's fencing token), holds
 * until stdin closes, releases and
 * prints "RELEASED". A failure prints "ERROR <message>".
 *
 * test-etcd store-try BASE ID COUNT [KEY=VALUE…]: the same, but tries
 * only once: prints "UNAVAILABLE" and ends when it cannot take them.
 *
 * test-etcd store-mutex BASE ID MODE [KEY=VALUE…]: the same on the mutex
 * "lock" (no total), MODE "shared" or "exclusive".
 *
 * test-etcd store-cycle BASE ID ROUNDS: ROUNDS times, takes one token as
 * job task@ID-ROUND (waiting up to 120 s), holds it a moment, releases
 * it; prints "DONE" or "ERROR <message>". */
static int
store_child (const char *endpoint_list, int argc, char **argv)
{
  g_autoptr(GStrvBuilder) keys = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) values = g_strv_builder_new ();
  g_autofree char *folder = g_build_filename (argv[2], "pool", NULL);
  g_autofree char *lease = g_strdup_printf ("%d", STORE_TTL);
  gboolean mutex = g_str_equal (argv[1], "store-mutex");
  const char *defaults[] = { "path", folder, "store", "etcd", "endpoints", endpoint_list,
                             "prefix", "/store/", "lease", lease, mutex ? NULL : "total", "2", NULL };
  g_auto(GStrv) key_list = NULL;
  g_auto(GStrv) value_list = NULL;
  g_autoptr(TesseraDynamicResource) resource = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  gboolean only_open = g_str_equal (argv[1], "store") && g_str_equal (argv[4], "0");
  gint64 start;
  char buffer[64];

  for (guint i = 0; defaults[i] != NULL; i += 2)
    {
      gboolean replaced = FALSE;

      for (int j = 5; j < argc; j++)
        replaced |= (g_str_has_prefix (argv[j], defaults[i]) && argv[j][strlen (defaults[i])] == '=') ||
                    (argv[j][0] == '-' && g_str_equal (argv[j] + 1, defaults[i]));
      if (!replaced)
        {
          g_strv_builder_add (keys, defaults[i]);
          g_strv_builder_add (values, defaults[i + 1]);
        }
    }
  for (int j = 5; j < argc && !g_str_equal (argv[1], "store-cycle"); j++)
    {
      g_auto(GStrv) pair = NULL;

      if (argv[j][0] == '-')
        continue;
      pair = g_strsplit (argv[j], "=", 2);

      g_strv_builder_add (keys, pair[0]);
      g_strv_builder_add (values, pair[1] != NULL ? pair[1] : "");
    }
  key_list = g_strv_builder_end (keys);
  value_list = g_strv_builder_end (values);
  resource = tessera_registry_create_resource (tessera_registry_get_default (), mutex ? "mutex" : "countertoken",
                                               mutex ? "lock" : "tokens",
                                               (const char * const *) key_list,
                                               (const char * const *) value_list, &error);
  if (resource == NULL)
    {
      say ("ERROR %s", error->message);
      return 2;
    }
  if (only_open)
    {
      say ("OPENED");
      return 0;
    }
  if (g_str_equal (argv[1], "store-cycle"))
    return store_cycle (resource, argv[2], argv[3], atoi (argv[4]));
  job = test_job_new (argv[2], "task", argv[3]);
  dependency = tessera_dynamic_resource_create_dependency (resource, job, argv[4], &error);
  if (dependency == NULL)
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  start = g_get_monotonic_time ();
  lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);
  if (lock == NULL && g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT) &&
      g_str_equal (argv[1], "store-try"))
    {
      say ("UNAVAILABLE");
      return 0;
    }
  if (lock == NULL && g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
    {
      g_clear_error (&error);
      say ("WAITING");
      lock = tessera_dynamic_dependency_lock (dependency, 120, NULL, &error);
    }
  if (lock == NULL)
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  {
    gint64 token = 0;

    g_object_get (lock, "fencing-token", &token, NULL);
    say ("ACQUIRED ms=%d token=%" G_GINT64_FORMAT, (int) ((g_get_monotonic_time () - start) / 1000), token);
  }
  while (read (0, buffer, sizeof buffer) > 0)
    ;
  if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  say ("RELEASED");
  return 0;
}

/* A store child for @f, its environment extended by @env (NAME, VALUE
 * pairs), arguments after COUNT in @settings (NULL-terminated); run on
 * the simulated @host (see test_argv_simulated_host(), made in the
 * fixture's folder), or here if @host is NULL. */
static Helper *
store_spawn_on (Fixture *f, const char *host, const char *mode, const char * const *env, const char *id,
                const char *count, const char * const *settings)
{
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) full_env = g_ptr_array_new ();

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  g_strstrip (list);
  g_ptr_array_add (full_env, (gpointer) STORE_ENV);
  g_ptr_array_add (full_env, list);
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    g_ptr_array_add (full_env, (gpointer) env[i]);
  g_ptr_array_add (full_env, NULL);
  if (host != NULL)
    test_argv_simulated_host (argv, f->dir, host, "");
  g_ptr_array_add (argv, g_file_read_link ("/proc/self/exe", NULL));
  g_ptr_array_add (argv, g_strdup (mode));
  g_ptr_array_add (argv, g_build_filename (f->dir, "jobs", NULL));
  g_ptr_array_add (argv, g_strdup (id));
  g_ptr_array_add (argv, g_strdup (count));
  for (guint i = 0; settings != NULL && settings[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (settings[i]));
  g_ptr_array_add (argv, NULL);
  return helper_spawn_argv ((const char * const *) full_env->pdata, (const char * const *) argv->pdata);
}

static Helper *
store_spawn_mode (Fixture *f, const char *mode, const char * const *env, const char *id, const char *count,
                  const char * const *settings)
{
  return store_spawn_on (f, NULL, mode, env, id, count, settings);
}

static Helper *
store_spawn (Fixture *f, const char * const *env, const char *id, const char *count, const char * const *settings)
{
  return store_spawn_mode (f, "store", env, id, count, settings);
}

/* The milliseconds an "ACQUIRED ms=N" line says. */
static int
expect_acquired (Helper *helper, double timeout)
{
  g_autofree char *line = helper_read_line (helper, timeout);

  if (line == NULL || !g_str_has_prefix (line, "ACQUIRED ms="))
    g_error ("expected ACQUIRED from the store child, got “%s”", line != NULL ? line : "(nothing)");
  return atoi (line + strlen ("ACQUIRED ms="));
}

/* The pool's keys as etcd has them now. */
static GPtrArray *
pool_keys (Fixture *f, const char *what)
{
  g_autofree char *prefix = g_strconcat ("/store/tokens/", what, NULL);

  return range_prefix (f, prefix, NULL);
}

/* Waiting is never woken by polling here: its first interval is longer
 * than the test. */
static const char * const no_polling_env[] = {
  "TESSERA_POLL_INTERVAL", "600", "TESSERA_POLL_INTERVAL_MAX", "600", NULL
};

/* Two processes share a 2-token pool on etcd: the first takes both (its
 * key on its lease, the informations set up by the first user), the
 * second waits and gets its token through the watch when the first
 * releases (polling is off), and every key is gone at the end. */
static void
test_store_acquire_release (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) first = store_spawn (f, NULL, "A", "2", NULL);
  g_autoptr(Helper) second = NULL;
  g_autoptr(GPtrArray) jobs = NULL;
  g_autoptr(GPtrArray) informations = NULL;
  gint64 released;
  int waited;

  expect_acquired (first, 60);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/tokens/jobs/task@A");
  g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->lease, !=, 0);
  informations = pool_keys (f, "informations");
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/store/tokens/informations", "{\"total\":2}");

  second = store_spawn (f, no_polling_env, "B", "1", NULL);
  helper_expect_line (second, "WAITING", 60);
  released = g_get_monotonic_time ();
  helper_close_stdin (first);
  helper_expect_line (first, "RELEASED", 60);
  waited = expect_acquired (second, 120);
  g_test_message ("the waiter got its token %.3f s after the holder was told to release (no polling)",
                  (g_get_monotonic_time () - released) / 1e6);
  g_assert_cmpint (waited, <, 120 * 1000);
  g_assert_cmpint (helper_wait (first), ==, 0);
  g_ptr_array_unref (jobs);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/tokens/jobs/task@B");

  helper_close_stdin (second);
  helper_expect_line (second, "RELEASED", 60);
  g_assert_cmpint (helper_wait (second), ==, 0);
  g_ptr_array_unref (jobs);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 0);
}

/* Fencing tokens on etcd (issue 40, point 3): processes take tokens of
 * the pool in turn, two of them at times together, A on one simulated
 * host and B on another (test_argv_simulated_host()); each grant's token
 * is the creation revision of its holder key, so larger than every
 * earlier grant's, whichever host took it. */
static void
test_store_fencing_tokens (Fixture *f, gconstpointer data)
{
  gint64 last = 0;

  for (int round = 0; round < 3; round++)
    {
      g_autofree char *id_a = g_strdup_printf ("A%d", round);
      g_autofree char *id_b = g_strdup_printf ("B%d", round);
      g_autoptr(Helper) a = store_spawn_on (f, "host-A", "store", NULL, id_a, "1", NULL);
      g_autoptr(Helper) b = NULL;
      g_autoptr(GPtrArray) jobs = NULL;
      g_autofree char *line_a = helper_read_line (a, 60);
      g_autofree char *line_b = NULL;
      gint64 token_a, token_b;

      g_assert_nonnull (line_a);
      b = store_spawn_on (f, "host-B", "store", NULL, id_b, "1", NULL);
      line_b = helper_read_line (b, 60);
      g_assert_nonnull (line_b);
      g_test_message ("%s: %s; %s: %s", id_a, line_a, id_b, line_b);
      g_assert_nonnull (strstr (line_a, " token="));
      g_assert_nonnull (strstr (line_b, " token="));
      token_a = g_ascii_strtoll (strstr (line_a, " token=") + strlen (" token="), NULL, 10);
      token_b = g_ascii_strtoll (strstr (line_b, " token=") + strlen (" token="), NULL, 10);
      g_assert_cmpint (token_a, >, last);
      g_assert_cmpint (token_b, >, token_a);
      last = token_b;

      /* Each is its holder key's creation revision. */
      jobs = pool_keys (f, "jobs/");
      g_assert_cmpuint (jobs->len, ==, 2);
      for (guint i = 0; i < jobs->len; i++)
        {
          TesseraEtcdKv *kv = g_ptr_array_index (jobs, i);

          g_assert_cmpint (kv->create_revision, ==, g_str_has_suffix (kv->key, id_a) ? token_a : token_b);
        }
      helper_close_stdin (a);
      helper_expect_line (a, "RELEASED", 60);
      g_assert_cmpint (helper_wait (a), ==, 0);
      helper_close_stdin (b);
      helper_expect_line (b, "RELEASED", 60);
      g_assert_cmpint (helper_wait (b), ==, 0);
    }
}

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
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* @contenders processes take the two tokens of an etcd pool @rounds
 * times each, at once, through the public API; with @kill_leader, the
 * cluster's leader is killed once they are under way. An auditor
 * replays every change under the pool's jobs from the revision before
 * they started: at no revision are more than two holders live, and none
 * is left at the end. */
static void
contend_and_audit (Fixture *f, guint contenders, guint rounds, gboolean kill_leader)
{
  const guint total = 2;
  g_autoptr(GPtrArray) children = g_ptr_array_new_with_free_func ((GDestroyNotify) helper_free);
  g_autofree char *end = tessera_etcd_prefix_end ("/store/tokens/jobs/");
  g_autofree char *leader = kill_leader ? leader_of (f) : NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  guint most = 0;
  gint64 revision = 0;

  if (leader != NULL)
    {
      /* The auditor reads from another member. */
      g_autofree char *other = g_strdup_printf ("%d", atoi (leader) % 3 + 1);
      prefer_member (f, other);
    }
  put (f, "/store/tokens/informations", "{\"total\": 2}", 0);
  g_ptr_array_unref (range_prefix (f, "/store/tokens/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/store/tokens/jobs/", end, revision + 1, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < contenders; i++)
    {
      g_autofree char *id = g_strdup_printf ("%u", i);
      g_autofree char *n = g_strdup_printf ("%u", rounds);

      g_ptr_array_add (children, store_spawn_mode (f, "store-cycle", NULL, id, n, NULL));
    }
  events = collect_events (watch, leader != NULL ? 4 : 0);
  if (leader != NULL)
    {
      fixture_run (f, "kill", leader);
      g_test_message ("leader (member %s) killed after %u changes", leader, events->len);
    }
  for (guint i = 0; i < children->len; i++)
    {
      g_autofree char *line = helper_read_line (g_ptr_array_index (children, i), 300);

      g_assert_cmpstr (line, ==, "DONE");
      g_assert_cmpint (helper_wait (g_ptr_array_index (children, i)), ==, 0);
    }

  {
    g_autoptr(GPtrArray) rest = collect_events (watch, 2 * contenders * rounds - events->len);

    while (rest->len > 0)
      g_ptr_array_add (events, g_ptr_array_steal_index (rest, 0));
  }
  most = audit_holders (events, total);
  g_test_message ("%u takes by %u processes of a %u-token etcd pool: at most %u held at once",
                  contenders * rounds, contenders, total, most);
}

/* Five processes, four takes each: decisions made on the same revision
 * conflict, and the loser decides again (never an error). */
static void
test_store_contention (Fixture *f, gconstpointer data)
{
  contend_and_audit (f, 5, 4, FALSE);
}

/* Three members, the leader SIGKILLed while five processes take and give
 * back tokens: they go on after the election, and nothing is ever
 * over-allocated. */
static void
test_store_leader_killed (Fixture *f, gconstpointer data)
{
  contend_and_audit (f, 5, 6, TRUE);
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
  helper_close_stdin (helper);
  helper_expect_line (helper, "RELEASED", 60);
  g_assert_cmpint (helper_wait (helper), ==, 0);
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

/* The mutex's intent keys under /store/lock/intents/ now, each checked
 * to be on a lease. */
static guint
count_intents (Fixture *f)
{
  g_autoptr(GPtrArray) intents = range_prefix (f, "/store/lock/intents/", NULL);

  for (guint i = 0; i < intents->len; i++)
    g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (intents, i))->lease, !=, 0);
  return intents->len;
}

/* The machine id the process of the pool's only intent says it ran on. */
static char *
intent_machine_id (Fixture *f)
{
  g_autoptr(GPtrArray) intents = range_prefix (f, "/store/lock/intents/", NULL);
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;
  const char *data;
  JsonObject *process;

  g_assert_cmpuint (intents->len, ==, 1);
  data = g_bytes_get_data (((TesseraEtcdKv *) g_ptr_array_index (intents, 0))->value, &length);
  text = g_strndup (data, length);
  root = json_from_string (text, NULL);
  g_assert_nonnull (root);
  process = json_object_get_object_member (json_node_get_object (root), "process");
  g_assert_nonnull (process);
  return g_strdup (json_object_get_string_member_with_default (process, "machine_id", ""));
}

/* The mutex's writer preference across hosts on etcd (issue 40, point
 * 4): three processes, each on a simulated host of its own (its own
 * namespaces, machine id, boot id and /var/tmp, as test-hosts.c makes
 * them) with its own local folder as `path`: no file system in common
 * but the job folders. A holds the mutex shared; B asks for it
 * exclusive and waits, its intent a key of the pool on its lease; C's
 * shared request, which A's share alone would let in, waits for B. A
 * releases: B gets it (C, had it been let in, would hold it shared and B
 * would wait for ever); B releases: C gets it. No intent is left. */
static void
test_store_mutex_intents (Fixture *f, gconstpointer data)
{
  g_autofree char *path_a = g_strdup_printf ("path=%s/host-A/pool", f->dir);
  g_autofree char *path_b = g_strdup_printf ("path=%s/host-B/pool", f->dir);
  g_autofree char *path_c = g_strdup_printf ("path=%s/host-C/pool", f->dir);
  const char *settings_a[] = { path_a, NULL };
  const char *settings_b[] = { path_b, NULL };
  const char *settings_c[] = { path_c, NULL };
  g_autoptr(Helper) a = store_spawn_on (f, "host-A", "store-mutex", NULL, "A", "shared", settings_a);
  g_autoptr(Helper) b = NULL;
  g_autoptr(Helper) c = NULL;
  g_autoptr(GPtrArray) jobs = NULL;
  g_autofree char *line = NULL;
  g_autofree char *machine_b = NULL;
  g_autofree char *intent_host = NULL;

  expect_acquired (a, 60);
  b = store_spawn_on (f, "host-B", "store-mutex", no_polling_env, "B", "exclusive", settings_b);
  helper_expect_line (b, "WAITING", 60);
  c = store_spawn_on (f, "host-C", "store-mutex", no_polling_env, "C", "shared", settings_c);
  line = helper_read_line (c, 60);
  g_assert_cmpstr (line, ==, "WAITING");
  g_assert_cmpuint (count_intents (f), ==, 1);
  /* Written on host B, whose machine id is its own. */
  machine_b = g_compute_checksum_for_string (G_CHECKSUM_MD5, "host-B", -1);
  intent_host = intent_machine_id (f);
  g_assert_cmpstr (intent_host, ==, machine_b);

  helper_close_stdin (a);
  helper_expect_line (a, "RELEASED", 60);
  g_assert_cmpint (helper_wait (a), ==, 0);
  expect_acquired (b, 120);
  jobs = range_prefix (f, "/store/lock/jobs/", NULL);
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/lock/jobs/task@B");
  g_assert_cmpuint (count_intents (f), ==, 0);

  helper_close_stdin (b);
  helper_expect_line (b, "RELEASED", 60);
  g_assert_cmpint (helper_wait (b), ==, 0);
  expect_acquired (c, 120);
  helper_close_stdin (c);
  helper_expect_line (c, "RELEASED", 60);
  g_assert_cmpint (helper_wait (c), ==, 0);
  g_assert_cmpuint (count_intents (f), ==, 0);
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

/* Counter @name of etcd's member @k (0…N-1), from its metrics. */
static gint64
member_metric (Fixture *f, guint k, const char *name)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autofree char *text = NULL;
  g_autofree char *prefix = NULL;
  const char *line;

  g_ptr_array_add (argv, g_strdup (test_python ()));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup ("import sys, urllib.request\n"
                                   "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=60).read().decode())"));
  g_ptr_array_add (argv, g_strconcat (list[k], "/metrics", NULL));
  g_ptr_array_add (argv, NULL);
  g_assert_cmpint (test_run_capture (argv, &out, NULL), ==, 0);
  text = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  prefix = g_strdup_printf ("\n%s ", name);
  line = strstr (text, prefix);
  if (line == NULL)
    g_error ("etcd metrics without %s", name);
  return g_ascii_strtoll (line + strlen (prefix), NULL, 10);
}

/* Counter @name of etcd's first member. */
static gint64
metric (Fixture *f, const char *name)
{
  return member_metric (f, 0, name);
}

/* The reads (ranges) etcd's first member has served so far. */
static gint64
ranges_served (Fixture *f)
{
  return metric (f, "etcd_mvcc_range_total");
}

/* The holder lets go; the waiter gets its share, then lets go too. */
static void
hand_over_and_end (Helper *holder, Helper *waiter)
{
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  expect_acquired (waiter, 60);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
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

/* `tessera` with @config, its state in @f's folder, then @args; @env
 * (NAME=VALUE strings) set for it, criticals fatal. */
static GPtrArray *
tool_argv (Fixture *f, const char *config, const char * const *env, const char * const *args)
{
  g_autofree char *state = g_build_filename (f->dir, "state", NULL);
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera (argv, state, config);
  /* A critical ends it: its exit status tells. */
  g_ptr_array_insert (argv, 1, g_strdup ("G_DEBUG=fatal-criticals,gc-friendly"));
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    g_ptr_array_insert (argv, 1, g_strdup (env[i]));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  return argv;
}

/* `tessera status --json` on the pool: its free units and holders. */
static void
tool_status_full (Fixture *f, const char *config, gint64 *capacity, gint64 *free_units, guint *holders)
{
  const char *args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *resource;
  int status;

  status = test_run_capture (argv, &out, &err);
  g_assert_cmpint (status, ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  g_assert_cmpstr (json_object_get_string_member (resource, "name"), ==, "tokens");
  *capacity = json_object_get_int_member (resource, "capacity");
  *free_units = json_object_get_int_member (resource, "free");
  *holders = json_array_get_length (json_object_get_array_member (resource, "holders"));
}

static void
tool_status (Fixture *f, const char *config, gint64 *free_units, guint *holders)
{
  gint64 capacity;

  tool_status_full (f, config, &capacity, free_units, holders);
  g_assert_cmpint (capacity, ==, 2);
}

/* `tessera` with @config and @args, to its end: its exit status. */
static int
tool_run (Fixture *f, const char *config, const char * const *args)
{
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, args);
  g_autoptr(GBytes) out = NULL;

  return test_run_capture (argv, &out, NULL);
}

/* The lease of the tool's pools: `tessera run` ends its command when its
 * lease has gone unrenewed for the lease less a margin (7 s here), and
 * renews every third of it (4 s): room for a loaded machine. */
#define TOOL_LEASE 12

/* A configuration of the countertoken pool "tokens" (2 tokens) on @f's
 * etcd, under /tool/, with a lease of @lease seconds: its path. */
static char *
tool_config_lease (Fixture *f, int lease)
{
  g_autofree char *endpoints_path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *list = NULL;
  g_autofree char *text = NULL;
  char *config = g_build_filename (f->dir, "tessera.conf", NULL);

  g_assert_true (g_file_get_contents (endpoints_path, &list, NULL, NULL));
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nlease=%d\ntotal=2\n", g_strstrip (list), lease);
  test_write_file (config, text);
  return config;
}

static char *
tool_config (Fixture *f)
{
  return tool_config_lease (f, TOOL_LEASE);
}

/* A `tessera run` that waits for a token of @config's pool then prints
 * SECOND; what it says on its error output (that it waits) comes as its
 * output, and polling is off. */
static Helper *
tool_waiter (Fixture *f, const char *config)
{
  const char *wait_args[] = { "run", "--need", "tokens=1", "--", "echo", "SECOND", NULL };
  const char *no_polling[] = { "TESSERA_POLL_INTERVAL=600", "TESSERA_POLL_INTERVAL_MAX=600", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, no_polling, wait_args);
  Helper *waiter;

  g_ptr_array_insert (argv, 0, g_strdup ("sh"));
  g_ptr_array_insert (argv, 1, g_strdup ("-c"));
  g_ptr_array_insert (argv, 2, g_strdup ("exec \"$@\" 2>&1"));
  g_ptr_array_insert (argv, 3, g_strdup ("sh"));
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (waiter, "tessera: waiting for tokens", 60);
  return waiter;
}

/* A `tessera run` that holds both tokens of @config's pool while its
 * command runs (until its input closes), once it runs. */
static Helper *
tool_holder (Fixture *f, const char *config)
{
  const char *hold_args[] = { "run", "--need", "tokens=2", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, hold_args);
  Helper *holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);

  helper_expect_line (holder, "RUNNING", 60);
  return holder;
}

/* `tessera run` holds both tokens (status: none free, one holder), a
 * second run waits and runs its command once the first ends. */
static void
tool_hand_over (Fixture *f, const char *config)
{
  g_autoptr(Helper) first = tool_holder (f, config);
  g_autoptr(Helper) second = NULL;
  gint64 free_units;
  guint holders;

  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 0);
  g_assert_cmpuint (holders, ==, 1);
  second = tool_waiter (f, config);
  helper_close_stdin (first);
  g_assert_cmpint (helper_wait (first), ==, 0);
  helper_expect_line (second, "SECOND", 60);
  g_assert_cmpint (helper_wait (second), ==, 0);
}

/* The command on an etcd pool, from real processes: `tessera run --need`
 * holds both tokens while its command runs, `tessera status` shows it, a
 * second `tessera run` waits (woken by the watch: polling is off) and
 * runs its command once the first ends, and the pool is free after. */
static void
test_store_tool (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  gint64 free_units;
  guint holders;

  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
  tool_hand_over (f, config);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
}

/* The command of a `tessera run` on an etcd pool reads its locks as a
 * job's process does (TESSERA_LOCKS): they name no local lock file (the
 * holder is a key, kept on the run's lease), so entering them does not
 * look for one in a folder that holds nothing of the pool. */
static void
test_store_job_side_locks (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL);
  const char *run_args[] = { "run", "--need", "tokens=1", "--", helper, "job-locks", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, run_args);
  g_autoptr(Helper) run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  g_autofree char *line = helper_read_line (run, 60);

  g_test_message ("the command said: %s", line ? line : "(nothing)");
  g_assert_cmpstr (line, ==, "JOB-LOCKS 1");
  g_assert_cmpint (helper_wait (run), ==, 0);
}

/* `tessera status` on an etcd pool: the pool's key as its "path" (the
 * local folder holds nothing of it) and "store": "etcd"; each holder
 * named as its key names it (what `tessera clean` takes), with the
 * seconds its lease has left ("lease_ttl"), which the text output says
 * too. */
static void
test_store_status (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  const char *json_args[] = { "status", "--json", NULL };
  const char *text_args[] = { "status", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GPtrArray) text_argv = tool_argv (f, config, NULL, text_args);
  g_autoptr(GPtrArray) keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *expected = NULL;
  const char *key;
  JsonObject *resource, *h;
  double ttl;

  g_assert_cmpuint (keys->len, ==, 1);
  key = ((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key;
  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  g_assert_cmpstr (json_object_get_string_member (resource, "path"), ==, "/tool/tokens/");
  g_assert_cmpstr (json_object_get_string_member_with_default (resource, "store", NULL), ==, "etcd");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (resource, "holders")), ==, 1);
  h = json_array_get_object_element (json_object_get_array_member (resource, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "job"), ==, key + strlen ("/tool/tokens/jobs/"));
  g_assert_true (json_object_has_member (h, "lease_ttl"));
  ttl = json_object_get_double_member (h, "lease_ttl");
  g_test_message ("holder %s: lease %.1f s left of %d s", key, ttl, TOOL_LEASE);
  g_assert_cmpfloat (ttl, >, 0);
  g_assert_cmpfloat (ttl, <=, TOOL_LEASE);

  g_assert_cmpint (test_run_capture (text_argv, &text, NULL), ==, 0);
  shown = g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
  g_test_message ("%s", shown);
  expected = g_strdup_printf ("  %s  ", key + strlen ("/tool/tokens/jobs/"));
  g_assert_nonnull (strstr (shown, expected));
  g_assert_nonnull (strstr (shown, "    lease: "));
  g_assert_nonnull (strstr (shown, " s left\n"));

  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A waiter within its patience on an etcd pool is shown (issue 42, point
 * 4), as on a folder: `tessera status --json` lists it, "waiting", with
 * what it asks for, from a side entry on its lease (`waiting/NAME`);
 * once served, its entry is gone. */
static void
test_store_waiting (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  const char *json_args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) left = NULL;
  JsonObject *resource, *w;
  JsonArray *waiters;

  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  g_test_message ("%.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (resource, "waiting"), ==, 1);
  g_assert_false (json_object_get_null_member (w, "since"));

  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (waiter, "SECOND", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  left = range_prefix (f, "/tool/tokens/waiting/", NULL);
  g_assert_cmpuint (left->len, ==, 0);
}

/* A `tessera run` frozen with SIGSTOP past its lease: etcd deletes its
 * holder key, a waiting run gets the tokens, and once resumed the frozen
 * run ends its command at once (fencing, exit 76). The overlap (both
 * commands running) lasts from the hand-over to that end: printed; every
 * lease has it, as long as the freeze. */
static void
test_store_frozen_holder (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  gint64 frozen, handed, resumed;

  frozen = g_get_monotonic_time ();
  g_assert_cmpint (kill (helper_get_pid (holder), SIGSTOP), ==, 0);
  helper_expect_line (waiter, "SECOND", TOOL_LEASE + 60);
  handed = g_get_monotonic_time ();
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  resumed = g_get_monotonic_time ();
  g_assert_cmpint (kill (helper_get_pid (holder), SIGCONT), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 76);
  g_test_message ("frozen holder: tokens handed over %.2f s after SIGSTOP (lease %d s); "
                  "its command ended %.2f s after SIGCONT; overlap %.2f s",
                  (handed - frozen) / 1e6, TOOL_LEASE, (g_get_monotonic_time () - resumed) / 1e6,
                  (g_get_monotonic_time () - handed) / 1e6);
  g_assert_cmpfloat ((handed - frozen) / 1e6, >=, TOOL_LEASE * 2.0 / 3 - 0.5);
  g_assert_cmpfloat ((g_get_monotonic_time () - resumed) / 1e6, <, 30);
}

#define SHORT_LEASE 3

/* A `tessera run` on a 3 s lease keeps its tokens while it runs: its
 * lease is renewed often enough (at least every half second, its
 * renewals counted by etcd) that the fence, which ends the command once
 * the lease has gone unrenewed for 1.5 s, keeps a second for a slow
 * renewal; over three leases a waiter gets nothing, and the command
 * ends by itself (not fenced, exit 76). */
static void
test_store_short_lease (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config_lease (f, SHORT_LEASE);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  g_autofree char *quiet = NULL;
  gint64 before, after;

  before = metric (f, "etcd_debugging_lease_renewed_total");
  quiet = helper_read_line (waiter, 3 * SHORT_LEASE);
  after = metric (f, "etcd_debugging_lease_renewed_total");
  g_test_message ("a %d s lease renewed %" G_GINT64_FORMAT " times in %d s", SHORT_LEASE, after - before,
                  3 * SHORT_LEASE);
  g_assert_null (quiet);
  g_assert_cmpint (after - before, >=, 2 * 3 * SHORT_LEASE);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (waiter, "SECOND", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* Values a hostile co-user wrote under an etcd pool's jobs (not JSON,
 * too deep, large garbage) hold everything, as on a folder, and
 * `tessera clean --force` removes them; `tessera set` changes the
 * capacity every user sees. */
static void
test_store_hostile (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autofree char *garbage = g_strnfill (1300 * 1024, '{');
  const char *clean[] = { "clean", "--force", "tokens", "a@1", "b@1", "c@1", NULL };
  const char *set[] = { "set", "tokens", "total=3", NULL };
  g_autoptr(GPtrArray) informations = NULL;
  gint64 capacity, free_units;
  guint holders;

  for (int i = 0; i < 10000; i++)
    g_string_append_c (deep, '[');
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */
  put (f, "/tool/tokens/jobs/a@1", "not json", 0);
  put (f, "/tool/tokens/jobs/b@1", deep->str, 0);
  put (f, "/tool/tokens/jobs/c@1", garbage, 0);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 0);

  g_assert_cmpint (tool_run (f, config, clean), ==, 0);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);

  g_assert_cmpint (tool_run (f, config, set), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 3);
  g_assert_cmpint (free_units, ==, 3);
  informations = range_prefix (f, "/tool/tokens/informations", NULL);
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/tool/tokens/informations", "{\"total\":3}");
}

/* Reads @helper's lines until one contains @text (bounded). */
static void
expect_line_containing (Helper *helper, const char *text, double timeout)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (TRUE)
    {
      double left = (double) (deadline - g_get_monotonic_time ()) / G_USEC_PER_SEC;
      g_autofree char *line = left > 0 ? helper_read_line (helper, left) : NULL;

      if (line == NULL)
        g_error ("expected a line with “%s”, got nothing more", text);
      if (strstr (line, text) != NULL)
        return;
    }
}

/* `tessera watch` on an etcd pool, a real process: it shows the pool,
 * again when a `tessera run` takes both tokens, and again when it gives
 * them back. */
static void
test_store_watch (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  const char *watch_args[] = { "watch", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, watch_args);
  g_autoptr(Helper) watch = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  g_autoptr(Helper) holder = NULL;

  expect_line_containing (watch, "tokens (countertoken): 2 of 2 free", 60);
  holder = tool_holder (f, config);
  expect_line_containing (watch, "tokens (countertoken): 0 of 2 free", 60);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  expect_line_containing (watch, "tokens (countertoken): 2 of 2 free", 60);
  helper_kill (watch, SIGTERM);
  helper_wait (watch);
}

/* `tessera set` and `tessera clean` on an etcd pool while a `tessera run`
 * holds a token: set changes the capacity every process sees (the
 * holder keeps its token), clean without --force removes nothing from a
 * holder whose lease lives, and with --force removes it by name. */
static void
test_store_set_clean (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  const char *one_args[] = { "run", "--need", "tokens=1", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) one_argv = tool_argv (f, config, NULL, one_args);
  g_autoptr(Helper) holder = helper_spawn_argv (NULL, (const char * const *) one_argv->pdata);
  const char *set[] = { "set", "tokens", "total=5", NULL };
  const char *clean[] = { "clean", NULL };
  g_autoptr(GPtrArray) keys = NULL;
  g_autofree char *job = NULL;
  gint64 capacity, free_units;
  guint holders;

  helper_expect_line (holder, "RUNNING", 60);
  g_assert_cmpint (tool_run (f, config, set), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 5);
  g_assert_cmpint (free_units, ==, 4);
  g_assert_cmpuint (holders, ==, 1);

  g_assert_cmpint (tool_run (f, config, clean), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpuint (holders, ==, 1);

  keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_assert_cmpuint (keys->len, ==, 1);
  job = g_strdup (((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key + strlen ("/tool/tokens/jobs/"));
  {
    const char *force[] = { "clean", "--force", "tokens", job, NULL };

    g_assert_cmpint (tool_run (f, config, force), ==, 0);
  }
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 5);
  g_assert_cmpuint (holders, ==, 0);
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* `tessera @args` as @user with @config, its state in a folder of hers
 * under @parent: its exit status. */
static int
tool_run_as (const char *parent, const char *user, const char *config, const char * const *args)
{
  g_autofree char *state = test_user_folder (parent, user);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  int status;

  test_argv_tessera_as (argv, user, state, config, 120);
  /* Her runtime folder, not this test's (root's): GIO's settings and the
   * etcd members' memory go there. */
  for (guint i = 0; i < argv->len; i++)
    if (g_str_equal (g_ptr_array_index (argv, i), "env"))
      {
        g_ptr_array_insert (argv, (gint) i + 1, g_strdup_printf ("XDG_RUNTIME_DIR=%s", state));
        break;
      }
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, &err);
  g_test_message ("%s's tessera %s: %d, %.*s%.*s", user, args[0], status, (int) g_bytes_get_size (err),
                  (const char *) g_bytes_get_data (err, NULL), (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  return status;
}

/* Administering an etcd pool (issue 42, point 1): a pool elsewhere has no
 * folder whose owner decides, so its configuration's owner does. With a
 * site's configuration (root's), a user's `set`, `clean --force` of
 * root's holder and `clean --host --yes` are refused with 77 and change
 * nothing; with a configuration of her own, her `set` works. Fails
 * before: every user who could reach the cluster administered it (a
 * user in no group set the capacity, forced another's holder out). */
static void
test_store_administrators (Fixture *f, gconstpointer data)
{
  g_autoptr(TestUsers) users = test_users_new ("etad");
  g_autofree char *site_config = tool_config (f);
  g_autofree char *shared = g_build_filename (f->dir, "shared", NULL);
  g_autofree char *config = g_build_filename (shared, "site.conf", NULL);
  g_autofree char *own_config = NULL;
  g_autofree char *text = NULL;
  const char *one_args[] = { "run", "--need", "tokens=1", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) one_argv = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GPtrArray) keys = NULL;
  g_autofree char *job = NULL;
  struct passwd *pw;
  uid_t uid;
  gid_t gid;
  gint64 capacity, free_units;
  guint holders;

  if ((pw = getpwnam (users->users[0])) == NULL)
    g_error ("no user %s", users->users[0]);
  uid = pw->pw_uid;   /* getpwnam()'s record is overwritten by the next */
  gid = pw->pw_gid;
  /* The site's configuration, root's, readable by all; f->dir too. */
  g_assert_cmpint (chmod (f->dir, 0755), ==, 0);
  g_assert_cmpint (mkdir (shared, 0755), ==, 0);
  g_assert_true (g_file_get_contents (site_config, &text, NULL, NULL));
  test_write_file (config, text);
  g_assert_cmpint (chmod (config, 0644), ==, 0);
  one_argv = tool_argv (f, config, NULL, one_args);
  holder = helper_spawn_argv (NULL, (const char * const *) one_argv->pdata);
  helper_expect_line (holder, "RUNNING", 60);
  keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_assert_cmpuint (keys->len, ==, 1);
  job = g_strdup (((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key + strlen ("/tool/tokens/jobs/"));

  g_assert_cmpint (tool_run_as (shared, users->users[0], config, (const char *[]) { "set", "tokens", "total=1", NULL }),
                   ==, 77);
  g_assert_cmpint (tool_run_as (shared, users->users[1], config,
                                (const char *[]) { "clean", "--force", "tokens", job, NULL }), ==, 77);
  g_assert_cmpint (tool_run_as (shared, users->users[1], config,
                                (const char *[]) { "clean", "--host", "node9", "--yes", NULL }), ==, 77);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 2);
  g_assert_cmpuint (holders, ==, 1);

  /* Her own configuration of the same pool: hers to administer (the
   * cluster's credentials are what binds her). */
  own_config = g_build_filename (shared, "own.conf", NULL);
  test_write_file (own_config, text);
  g_assert_cmpint (chown (own_config, uid, gid), ==, 0);
  g_assert_cmpint (tool_run_as (shared, users->users[0], own_config,
                                (const char *[]) { "set", "tokens", "total=3", NULL }), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 3);
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* `tessera init PATH` with an etcd pool whose path lies in PATH: it sets
 * the pool up in etcd (its informations), says where (the pool's key,
 * not a folder) and makes no folder for it. */
static void
test_store_init (Fixture *f, gconstpointer data)
{
  g_autofree char *endpoints_path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *pool = g_build_filename (f->dir, "pool", NULL);
  g_autofree char *folder = g_build_filename (pool, "tokens", NULL);
  g_autofree char *config = g_build_filename (f->dir, "init.conf", NULL);
  g_autofree char *list = NULL;
  g_autofree char *text = NULL;
  g_autofree char *said = NULL;
  const char *args[] = { "init", pool, NULL };
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GPtrArray) informations = NULL;

  g_assert_true (g_file_get_contents (endpoints_path, &list, NULL, NULL));
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\npath=%s\ntotal=4\n", g_strstrip (list), folder);
  test_write_file (config, text);
  argv = tool_argv (f, config, NULL, args);
  g_assert_cmpint (test_run_capture (argv, &out, NULL), ==, 0);
  said = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  g_test_message ("%s", said);
  g_assert_nonnull (strstr (said, "/tool/tokens/"));
  g_assert_null (strstr (said, folder));
  informations = range_prefix (f, "/tool/tokens/informations", NULL);
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/tool/tokens/informations", "{\"total\":4}");
  g_assert_false (g_file_test (folder, G_FILE_TEST_EXISTS));
}

/* `tessera status` on an etcd pool says since when a holder holds (the
 * time its key was written), not the epoch. */
static void
test_store_since (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(GDateTime) before = g_date_time_new_now_utc ();
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(GDateTime) after = g_date_time_new_now_utc ();
  const char *json_args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDateTime) since = NULL;
  JsonObject *resource, *h;

  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "resources"), 0);
  h = json_array_get_object_element (json_object_get_array_member (resource, "holders"), 0);
  g_test_message ("holder since %s", json_object_get_string_member (h, "since"));
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (h, "since"), NULL);
  g_assert_nonnull (since);
  /* Whole seconds: the same second as the run's start, or after. */
  g_assert_cmpint (g_date_time_to_unix (since), >=, g_date_time_to_unix (before));
  g_assert_cmpint (g_date_time_to_unix (since), <=, g_date_time_to_unix (after));
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* etcdctl @args on @f's cluster, to its end; it must succeed. */
static void
etcdctl (Fixture *f, const char * const *args)
{
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *option = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  option = g_strdup_printf ("--endpoints=%s", g_strstrip (list));
  g_ptr_array_add (argv, (gpointer) "env");
  g_ptr_array_add (argv, (gpointer) "ETCDCTL_API=3");
  g_ptr_array_add (argv, (gpointer) "etcdctl");
  g_ptr_array_add (argv, option);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  test_run_or_fail ((const char * const *) argv->pdata);
}

/* A store child with @settings takes both tokens (its key on its
 * lease) and keeps them past two leases (renewed: a waiter, woken by
 * the watch alone, hears nothing meanwhile); once it gives them back,
 * the waiter gets its token. */
static void
hold_past_leases (Fixture *f, const char * const *env, const char * const *settings)
{
  g_autoptr(GPtrArray) waiter_env = g_ptr_array_new ();
  g_autoptr(Helper) holder = store_spawn (f, env, "A", "2", settings);
  g_autoptr(Helper) waiter = NULL;
  g_autoptr(GPtrArray) jobs = NULL;
  g_autofree char *quiet = NULL;

  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    g_ptr_array_add (waiter_env, (gpointer) env[i]);
  for (guint i = 0; no_polling_env[i] != NULL; i++)
    g_ptr_array_add (waiter_env, (gpointer) no_polling_env[i]);
  g_ptr_array_add (waiter_env, NULL);
  expect_acquired (holder, 60);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->lease, !=, 0);
  waiter = store_spawn (f, (const char * const *) waiter_env->pdata, "B", "1", settings);
  helper_expect_line (waiter, "WAITING", 60);
  quiet = helper_read_line (waiter, 2 * STORE_TTL);
  g_assert_null (quiet);
  hand_over_and_end (holder, waiter);
}

/* A cluster with authentication on: the store's processes with the
 * right user and password take, keep (the holder's lease renewed past
 * two TTLs: the waiter hears nothing) and give back; a wrong password
 * or no user is one line of error. */
static void
test_store_auth (Fixture *f, gconstpointer data)
{
  const char *add[] = { "user", "add", "root:secret", NULL };
  const char *enable[] = { "auth", "enable", NULL };
  const char *right[] = { "user=root", "password=secret", NULL };
  const char *wrong[] = { "user=root", "password=wrong", NULL };

  etcdctl (f, add);
  etcdctl (f, enable);
  tessera_etcd_client_set_auth (f->client, "root", "secret");

  hold_past_leases (f, NULL, right);

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(Helper) refused = store_spawn (f, NULL, "C", "1", i == 0 ? wrong : NULL);
      g_autofree char *line = helper_read_line (refused, 60);

      g_test_message ("%s: %s", i == 0 ? "wrong password" : "no user", line != NULL ? line : "(nothing)");
      g_assert_nonnull (line);
      g_assert_true (g_str_has_prefix (line, "ERROR "));
      g_assert_cmpint (helper_wait (refused), !=, 0);
    }
}

/* A cluster that speaks https only to clients with a certificate of its
 * CA: the store's processes given `ca`, `cert` and `key` take, keep (the
 * holder's lease renewed over TLS past two TTLs: the waiter, woken by
 * a watch over TLS, hears nothing meanwhile) and give back. A CA that
 * did not sign the members' certificate, or no client certificate, is
 * one line of error that says so, at once (no retrying a member that
 * will never be trusted), never a crash or a hang. */
static void
test_store_tls (Fixture *f, gconstpointer data)
{
  g_autofree char *ca = g_strconcat ("ca=", f->dir, "/ca.pem", NULL);
  g_autofree char *other_ca = g_strconcat ("ca=", f->dir, "/other-ca.pem", NULL);
  g_autofree char *cert = g_strconcat ("cert=", f->dir, "/client.pem", NULL);
  g_autofree char *key = g_strconcat ("key=", f->dir, "/client-key.pem", NULL);
  const char *right[] = { ca, cert, key, NULL };
  const struct { const char *what; const char *settings[4]; const char *said; } wrong[] = {
    { "a CA that signed nothing of the cluster's", { other_ca, cert, key, NULL }, "certificate" },
    { "no client certificate", { ca, NULL }, "certificate" },
  };
  /* Under AddressSanitizer, LeakSanitizer's tracer sometimes crashes at
   * the exit of a process that spoke TLS (a thread of the TLS backend
   * ending meanwhile): the children's leaks go unchecked here, the
   * test's own are. */
  const char *asan = g_getenv ("ASAN_OPTIONS");
  g_autofree char *no_leak_check = asan != NULL ? g_strconcat (asan, ":detect_leaks=0", NULL) : NULL;
  const char *env[] = { no_leak_check != NULL ? "ASAN_OPTIONS" : NULL, no_leak_check, NULL };

  hold_past_leases (f, env, right);

  for (guint i = 0; i < G_N_ELEMENTS (wrong); i++)
    {
      gint64 start = g_get_monotonic_time ();
      g_autoptr(Helper) refused = store_spawn (f, env, "C", "1", wrong[i].settings);
      g_autofree char *line = helper_read_line (refused, 60);
      g_autofree char *more = NULL;
      double took;

      took = (g_get_monotonic_time () - start) / 1e6;
      g_test_message ("%s: %s (%.2f s)", wrong[i].what, line != NULL ? line : "(nothing)", took);
      g_assert_nonnull (line);
      g_assert_true (g_str_has_prefix (line, "ERROR "));
      g_assert_nonnull (strstr (line, wrong[i].said));
      more = helper_read_line (refused, 60);
      g_assert_null (more);
      g_assert_cmpint (helper_wait (refused), !=, 0);
      /* Not the 30 s a member that does not answer is waited for. */
      g_assert_cmpfloat (took, <, 20);
    }
}

/* `tessera run` and `tessera status` against a member that does not
 * accept us or that we do not trust: given no client certificate (only
 * `ca`) where it asks for one, or a `ca` that did not sign its
 * certificate. Each fails in one line that names the endpoint and what
 * to check, with the exit status of a store that cannot be used (68,
 * not 74, a file system's error), and with no warning or critical of
 * GLib or libsoup on its error output (libsoup said "code should not be
 * reached" there). */
static void
test_store_tls_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_build_filename (f->dir, "no-cert.conf", NULL);
  g_auto(GStrv) list = endpoints (f);
  const char *run[] = { "run", "--no-wait", "--need", "tokens=1", "--", "true", NULL };
  const char *status[] = { "status", NULL };
  const char * const *commands[] = { run, status };
  const struct { const char *what; const char *ca; gboolean cert; } cases[] = {
    { "no client certificate", "ca.pem", FALSE },
    { "a CA that signed nothing of the cluster's", "other-ca.pem", TRUE },
  };
  /* As in test_store_tls: no LeakSanitizer in a process that spoke TLS. */
  const char *asan = g_getenv ("ASAN_OPTIONS");
  g_autofree char *no_leak_check = asan != NULL ? g_strconcat ("ASAN_OPTIONS=", asan, ":detect_leaks=0", NULL) : NULL;
  const char *env[] = { no_leak_check, NULL };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *tls = g_strdup_printf ("ca=%s/%s\n%s%s%s%s%s", f->dir, cases[c].ca,
                                              cases[c].cert ? "cert=" : "", cases[c].cert ? f->dir : "",
                                              cases[c].cert ? "/client.pem\nkey=" : "",
                                              cases[c].cert ? f->dir : "",
                                              cases[c].cert ? "/client-key.pem\n" : "");
      g_autofree char *text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                                               "prefix=/tool/\n%stotal=2\n", list[0], tls);

      test_write_file (config, text);
      for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
        {
          g_autoptr(GPtrArray) argv = tool_argv (f, config, env, commands[i]);
          g_autoptr(GBytes) out = NULL;
          g_autoptr(GBytes) err = NULL;
          g_autofree char *said = NULL;
          int code = test_run_capture (argv, &out, &err);

          said = g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err));
          g_test_message ("%s: tessera %s: exit %d: %s", cases[c].what, commands[i][0], code, said);
          g_assert_cmpint (code, ==, 68);
          g_assert_true (g_str_has_prefix (said, "tessera: "));
          g_assert_nonnull (strstr (said, list[0]));
          g_assert_nonnull (strstr (said, "certificate"));
          g_assert_null (strstr (said, "WARNING"));
          g_assert_null (strstr (said, "CRITICAL"));
          g_assert_null (strstr (said, "should not be reached"));
          /* One line: its end is the only one. */
          g_assert_cmpstr (strchr (said, '\n'), ==, "\n");
        }
    }
}

/* `tessera run --no-wait` and `tessera status` on a pool whose only
 * member is @endpoint, which cannot be used: each fails within 15 s
 * with the exit status of a store that cannot be used or reached (68)
 * and one line that names the endpoint. */
static void
assert_store_unusable (Fixture *f, const char *endpoint)
{
  g_autofree char *config = g_build_filename (f->dir, "unusable.conf", NULL);
  g_autofree char *text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                                           "prefix=/tool/\ntotal=2\n", endpoint);
  const char *run[] = { "run", "--no-wait", "--need", "tokens=1", "--", "true", NULL };
  const char *status[] = { "status", NULL };
  const char * const *commands[] = { run, status };

  test_write_file (config, text);
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, commands[i]);
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GBytes) err = NULL;
      g_autofree char *said = NULL;
      gint64 start = g_get_monotonic_time ();
      int code = test_run_capture (argv, &out, &err);
      double took = (g_get_monotonic_time () - start) / 1e6;

      said = g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err));
      g_test_message ("tessera %s: exit %d after %.2f s: %s", commands[i][0], code, took, said);
      g_assert_cmpint (code, ==, 68);
      g_assert_cmpfloat (took, <, 15);
      g_assert_nonnull (strstr (said, endpoint));
      /* One line: its end is the only one. */
      g_assert_cmpstr (strchr (said, '\n'), ==, "\n");
    }
}

/* A server that is not etcd: it answers every request with an HTML
 * page (404), as a web server or a proxy at a wrong port does. Served
 * on a thread of its own until stopped. */
typedef struct
{
  GSocket *listener;
  GCancellable *cancellable;
  GThread *thread;
  guint port;
} NotEtcd;

static gpointer
not_etcd_serve (gpointer data)
{
  NotEtcd *server = data;
  static const char page[] = "<html><body><h1>Not Found</h1></body></html>";

  while (!g_cancellable_is_cancelled (server->cancellable))
    {
      g_autoptr(GSocket) peer = g_socket_accept (server->listener, server->cancellable, NULL);
      g_autoptr(GString) request = g_string_new (NULL);
      g_autofree char *reply = NULL;
      char buffer[4096];
      const char *end = NULL;
      gssize n;

      if (peer == NULL)
        continue;
      g_socket_set_timeout (peer, 10);
      /* The request's head and, by its length, its body. */
      while ((n = g_socket_receive (peer, buffer, sizeof buffer, NULL, NULL)) > 0)
        {
          const char *length;

          g_string_append_len (request, buffer, n);
          if ((end = strstr (request->str, "\r\n\r\n")) == NULL)
            continue;
          length = g_strstr_len (request->str, end - request->str, "ntent-Length: ");
          if (length == NULL || request->len - (gsize) (end + 4 - request->str) >=
                                (gsize) g_ascii_strtoull (length + strlen ("ntent-Length: "), NULL, 10))
            break;
        }
      reply = g_strdup_printf ("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: %zu\r\n"
                               "Connection: close\r\n\r\n%s", strlen (page), page);
      g_socket_send (peer, reply, strlen (reply), NULL, NULL);
      g_socket_close (peer, NULL);
    }
  return NULL;
}

static NotEtcd *
not_etcd_start (void)
{
  NotEtcd *server = g_new0 (NotEtcd, 1);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  if ((server->listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                        NULL)) == NULL)
    g_error ("No socket");
  g_assert_true (g_socket_bind (server->listener, any, TRUE, NULL));
  g_assert_true (g_socket_listen (server->listener, NULL));
  if ((bound = g_socket_get_local_address (server->listener, NULL)) == NULL)
    g_error ("No address");
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  server->cancellable = g_cancellable_new ();
  server->thread = g_thread_new ("not-etcd", not_etcd_serve, server);
  return server;
}

static void
not_etcd_stop (NotEtcd *server)
{
  g_cancellable_cancel (server->cancellable);
  g_thread_join (server->thread);
  g_socket_close (server->listener, NULL);
  g_object_unref (server->listener);
  g_object_unref (server->cancellable);
  g_free (server);
}

/* An endpoint where a server that is not etcd answers (an HTML page):
 * `tessera run --no-wait` and `tessera status` fail within a few
 * seconds with the exit status of a store that cannot be used (68, not
 * 74) and one line that names the endpoint and why ("etcd sent a reply
 * that is not a JSON object" named no endpoint). */
static void
test_store_not_etcd (Fixture *f, gconstpointer data)
{
  NotEtcd *server = not_etcd_start ();
  g_autofree char *endpoint = g_strdup_printf ("http://127.0.0.1:%u", server->port);

  assert_store_unusable (f, endpoint);
  not_etcd_stop (server);
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

/* Three members, the one first in `endpoints` a follower frozen
 * (SIGSTOP) for up to 30 s: `tessera run` after `tessera run` starts its
 * command and gives its token back while it is still frozen (each
 * request waits on it a short deadline, then it is skipped), and
 * `tessera status` then shows the pool free. */
static void
test_hung_first_member (Fixture *f, gconstpointer data)
{
  g_autofree char *leader = leader_of (f);
  g_autofree char *follower = g_strdup (g_str_equal (leader, "1") ? "2" : "1");
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GString) ordered = g_string_new (list[atoi (follower) - 1]);
  g_autofree char *config = g_build_filename (f->dir, "hung.conf", NULL);
  g_autofree char *text = NULL;
  const char *run[] = { "run", "--need", "tokens=1", "--", "true", NULL };
  gint64 frozen;
  gint64 free_units;
  guint holders, runs = 0;
  double took;

  for (guint i = 0; list[i] != NULL; i++)
    if (i != (guint) atoi (follower) - 1)
      g_string_append_printf (ordered, ",%s", list[i]);
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nlease=%d\ntotal=2\n", ordered->str, TOOL_LEASE);
  test_write_file (config, text);
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */

  fixture_run (f, "freeze", follower);
  frozen = g_get_monotonic_time ();
  while (runs < 3 && g_get_monotonic_time () - frozen < 25 * G_USEC_PER_SEC)
    {
      g_assert_cmpint (tool_run (f, config, run), ==, 0);
      runs++;
    }
  tool_status (f, config, &free_units, &holders);
  took = (g_get_monotonic_time () - frozen) / 1e6;
  g_test_message ("member %s (first in endpoints, the leader being %s) frozen: %u runs and a status in %.2f s",
                  follower, leader, runs, took);
  g_assert_cmpuint (runs, ==, 3);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
  g_assert_cmpfloat (took, <, 30);
  fixture_run (f, "thaw", follower);
}

/* Until when (real time, µs) the host's memory of members that missed a
 * deadline, RUNTIME/tessera/etcd-members (lines "UNTIL_US ENDPOINT"),
 * has @endpoint tried last; 0 when it does not name it. */
static gint64
remembered_until (const char *runtime, const char *endpoint)
{
  g_autofree char *path = g_build_filename (runtime, "tessera", "etcd-members", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gint64 until = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *end = NULL;
      gint64 value = g_ascii_strtoll (lines[i], &end, 10);

      if (end != NULL && *end == ' ' && g_str_equal (end + 1, endpoint))
        until = MAX (until, value);
    }
  return until;
}

/* One `tessera run` of @config with debug messages on; whether any of
 * them says that it sent a request to @endpoint. */
static gboolean
run_asked (Fixture *f, const char *config, const char *runtime, const char *endpoint)
{
  const char *run[] = { "run", "--need", "tokens=1", "--", "true", NULL };
  g_autofree char *runtime_env = g_strconcat ("XDG_RUNTIME_DIR=", runtime, NULL);
  const char *env[] = { runtime_env, "G_MESSAGES_DEBUG=Tessera-etcd", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, env, run);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *said = NULL;
  g_autofree char *sent = g_strdup_printf (" to %s\n", endpoint);
  g_autofree char *any = g_strdup (" to http");

  g_assert_cmpint (test_run_capture (argv, &out, &err), ==, 0);
  said = g_strdup_printf ("%.*s%.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL),
                          (int) g_bytes_get_size (err), (const char *) g_bytes_get_data (err, NULL));
  /* The log says every request (else the check below proves nothing). */
  g_assert_nonnull (strstr (said, any));
  return strstr (said, sent) != NULL;
}

/* Three members, the one first in `endpoints` a follower frozen
 * (SIGSTOP): once one `tessera run` has waited a deadline on it, the
 * host remembers it (RUNTIME/tessera/etcd-members), and a fresh `tessera
 * run` started while that memory lasts sends it no request at all,
 * neither from its store nor from its lease's keeper: each request's
 * member is in the debug log, which never names the frozen one. A run
 * started when little of the memory is left may ask it again (and
 * renews the memory when it misses its deadline): it is not checked. */
static void
test_hung_member_remembered (Fixture *f, gconstpointer data)
{
  g_autofree char *leader = leader_of (f);
  g_autofree char *follower = g_strdup (g_str_equal (leader, "1") ? "2" : "1");
  g_auto(GStrv) list = endpoints (f);
  const char *frozen = list[atoi (follower) - 1];
  g_autoptr(GString) ordered = g_string_new (frozen);
  g_autofree char *config = g_build_filename (f->dir, "remembered.conf", NULL);
  g_autofree char *runtime = g_build_filename (f->dir, "runtime", NULL);
  g_autofree char *text = NULL;
  gint64 free_units;
  guint holders, runs = 0, checked = 0;

  for (guint i = 0; list[i] != NULL; i++)
    if (i != (guint) atoi (follower) - 1)
      g_string_append_printf (ordered, ",%s", list[i]);
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nrequest-timeout=1\ntotal=2\n", ordered->str);
  test_write_file (config, text);
  g_assert_cmpint (g_mkdir_with_parents (runtime, 0700), ==, 0);
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */

  fixture_run (f, "freeze", follower);
  while (checked < 4 && runs < 40)
    {
      /* Seconds of the memory left as this run starts. */
      double left = (remembered_until (runtime, frozen) - g_get_real_time ()) / 1e6;
      gboolean asked = run_asked (f, config, runtime, frozen);

      runs++;
      g_test_message ("run %u: %.1f s of the memory left, %s %s", runs, left,
                      asked ? "asked" : "did not ask", frozen);
      if (left < 6)
        continue;
      g_assert_false (asked);
      checked++;
    }
  fixture_run (f, "thaw", follower);
  g_assert_cmpuint (checked, ==, 4);
}

/* A free loopback port, where nothing listens (bound, then let go). */
static guint
dead_port (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_nonnull (socket);
  g_assert_true (g_socket_bind (socket, any, FALSE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  g_assert_nonnull (bound);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

/* An etcd that cannot be reached (an endpoint where nothing listens):
 * `tessera run --no-wait` and `tessera status` fail within a few
 * seconds (not the 30 s of retries kept for elections) with the exit
 * status of a store that cannot be reached (68) and one line naming the
 * endpoint and why. */
static void
test_store_unreachable (Fixture *f, gconstpointer data)
{
  g_autofree char *endpoint = g_strdup_printf ("http://127.0.0.1:%u", dead_port ());

  assert_store_unusable (f, endpoint);
}

/* A loopback port where a connection is never established: a listener
 * that never accepts, whose backlog of one (listen(0)) is filled by
 * connections of ours, so that the kernel drops every further SYN and a
 * connect() waits as on a host that does not answer. @fillers keeps
 * the listener and its connections; free it to let the port go. */
static guint
hanging_port (GPtrArray **fillers)
{
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GSocketClient) probe = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *where = NULL;
  GSocket *listener;
  guint port;

  *fillers = g_ptr_array_new_with_free_func (g_object_unref);
  if ((listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL)) == NULL)
    g_error ("No socket");
  g_ptr_array_add (*fillers, listener);
  g_assert_true (g_socket_bind (listener, any, TRUE, NULL));
  g_socket_set_listen_backlog (listener, 0);
  g_assert_true (g_socket_listen (listener, NULL));
  if ((bound = g_socket_get_local_address (listener, NULL)) == NULL)
    g_error ("No address");
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  for (guint i = 0; i < 4; i++)
    {
      GSocket *filler = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);

      if (filler == NULL)
        g_error ("No socket");
      g_socket_set_blocking (filler, FALSE);
      g_socket_connect (filler, bound, NULL, NULL);   /* completes, or waits: either fills */
      g_ptr_array_add (*fillers, filler);
    }
  /* What the test is about: a connect there does not complete. */
  g_socket_client_set_timeout (probe, 1);
  where = g_strdup_printf ("127.0.0.1:%u", port);
  connection = g_socket_client_connect_to_host (probe, where, 0, NULL, &error);
  g_assert_null (connection);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
  return port;
}

/* A cluster whose TCP connection is never established (a host that
 * drops our SYNs, a listener whose backlog is full): `tessera run
 * --no-wait` and `tessera status` fail within a few seconds (not the
 * 30 s of retries kept for a member that answers but has no leader)
 * with the exit status of a store that cannot be reached (68) and one
 * line naming the endpoint. A member in an election still accepts
 * connections: one never established within the request's deadline is
 * one that cannot be connected to. */
static void
test_store_connect_hangs (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) fillers = NULL;
  g_autofree char *endpoint = g_strdup_printf ("http://127.0.0.1:%u", hanging_port (&fillers));

  assert_store_unusable (f, endpoint);
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

/* The per-request deadline is a setting: with `request-timeout=3`, a
 * member that hangs (frozen, the cluster's only one) is given up on
 * after 3 s a request, and `tessera status`, which no member answered
 * in the retry time, says so (68, one line naming the deadline); a bad
 * value is a configuration error (78) in one line naming the setting. */
static void
test_store_request_timeout (Fixture *f, gconstpointer data)
{
  g_auto(GStrv) list = endpoints (f);
  g_autofree char *config = g_build_filename (f->dir, "timeout.conf", NULL);
  const char *status[] = { "status", NULL };
  const struct { const char *value; int code; const char *said; } cases[] = {
    { "0.5", 78, "request-timeout" },
    { "3", 68, "no answer within 3 s" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                                               "prefix=/tool/\nrequest-timeout=%s\ntotal=2\n",
                                               list[0], cases[i].value);
      g_autoptr(GPtrArray) argv = NULL;
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GBytes) err = NULL;
      g_autofree char *said = NULL;
      int code;

      test_write_file (config, text);
      if (cases[i].code == 68)
        {
          gint64 free_units;
          guint holders;

          tool_status (f, config, &free_units, &holders);   /* answered while it runs */
          fixture_run (f, "freeze", "1");
        }
      argv = tool_argv (f, config, NULL, status);
      code = test_run_capture (argv, &out, &err);
      said = g_strndup (g_bytes_get_data (err, NULL), g_bytes_get_size (err));
      g_test_message ("request-timeout=%s: exit %d: %s", cases[i].value, code, said);
      if (cases[i].code == 68)
        fixture_run (f, "thaw", "1");
      g_assert_cmpint (code, ==, cases[i].code);
      g_assert_nonnull (strstr (said, cases[i].said));
      g_assert_cmpstr (strchr (said, '\n'), ==, "\n");
    }
}

/* The watches each member serves now, in @counts (3 members); their sum. */
static gint64
watchers (Fixture *f, gint64 counts[3])
{
  gint64 sum = 0;

  for (guint k = 0; k < 3; k++)
    sum += counts[k] = member_metric (f, k, "etcd_debugging_mvcc_watcher_total");
  return sum;
}

/* Waits until the members serve @sum watches in all (bounded). */
static void
expect_watchers (Fixture *f, gint64 sum, gint64 counts[3])
{
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (watchers (f, counts) != sum)
    if (g_get_monotonic_time () > deadline)
      g_error ("etcd's members do not serve %" G_GINT64_FORMAT " watches in all", sum);
}

/* Three members; a waiter whose watch reads from the leader waits for
 * the pool a process on a follower holds; the leader stops answering
 * (SIGSTOP: to the others, a leader whose host died without closing its
 * connections) and the other two elect another. The holder lets go
 * through its member, and the waiter, whose request deadline is 1 s
 * (request-timeout=1), is served within a few of them after the
 * election: its watch, silent on the stopped member, is opened again on
 * another once that member misses a deadline, not after the 20 s that a
 * silent stream was given (issue 40, point 5: after a leader change two
 * waiters waited 7.5 s). The waiter kept is one whose watch went to the
 * leader (each process starts with a member chosen at random): etcd's
 * metrics say which member serves each watch. */
static void
test_store_waiter_leader_stopped (Fixture *f, gconstpointer data)
{
  const double bound = 12;   /* s: the election and a few deadlines of 1 s, loaded */
  g_autofree char *leader = leader_of (f);
  guint l = (guint) atoi (leader) - 1;
  g_autofree char *follower = g_strdup_printf ("%u", (l + 1) % 3 + 1);
  g_auto(GStrv) list = endpoints (f);
  g_autofree char *only_follower = g_strdup_printf ("endpoints=%s", list[atoi (follower) - 1]);
  const char *holder_settings[] = { only_follower, NULL };
  const char *waiter_settings[] = { "request-timeout=1", NULL };
  g_autoptr(Helper) holder = store_spawn (f, no_polling_env, "A", "2", holder_settings);
  g_autoptr(Helper) waiter = NULL;
  gint64 counts[3];
  gint64 base;
  gint64 stopped;
  double waited;

  expect_acquired (holder, 60);
  base = watchers (f, counts);
  for (guint attempt = 0; waiter == NULL; attempt++)
    {
      g_autofree char *id = g_strdup_printf ("W%u", attempt);
      gint64 on_leader = counts[l];
      Helper *candidate;

      g_assert_cmpuint (attempt, <, 40);   /* (2/3)^40: never */
      candidate = store_spawn (f, no_polling_env, id, "1", waiter_settings);
      helper_expect_line (candidate, "WAITING", 60);
      expect_watchers (f, base + 1, counts);
      if (counts[l] == on_leader + 1)
        {
          waiter = candidate;
          break;
        }
      helper_kill (candidate, SIGKILL);
      helper_wait (candidate);
      helper_free (candidate);
      expect_watchers (f, base, counts);
    }

  fixture_run (f, "freeze", leader);
  stopped = g_get_monotonic_time ();
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  expect_acquired (waiter, 120);
  waited = (g_get_monotonic_time () - stopped) / 1e6;
  g_test_message ("the waiter whose watch read from the leader (member %s) got its token %.2f s after "
                  "the leader stopped", leader, waited);
  g_assert_cmpfloat (waited, <, bound);
  fixture_run (f, "thaw", leader);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

int
main (int argc, char **argv)
{
  g_autofree char *runtime = NULL;
  int status;

  if (g_getenv (CONTEND_ENV) != NULL && argc == 4 && g_str_equal (argv[1], "contend"))
    return contend (g_getenv (CONTEND_ENV), argv[2], atoi (argv[3]));
  if (g_getenv (STORE_ENV) != NULL && argc >= 5 &&
      (g_str_equal (argv[1], "store") || g_str_equal (argv[1], "store-try") ||
       g_str_equal (argv[1], "store-cycle") || g_str_equal (argv[1], "store-mutex")))
    return store_child (g_getenv (STORE_ENV), argc, argv);
  if (g_getenv (HOLD_ENV) != NULL && argc == 2)
    return hold_until_killed (g_getenv (HOLD_ENV), argv[1]);
  /* What the clients learn of hung members (RUNTIME/tessera/etcd-members)
   * stays in a folder of this run's, not in the user's. */
  runtime = test_make_tmpdir ();
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down)
  ADD ("/etcd/client/put-and-range", NULL, test_put_and_range);
  ADD ("/etcd/client/put-if-unchanged", NULL, test_put_if_unchanged);
  ADD ("/etcd/client/put-if-created", NULL, test_put_if_created);
  ADD ("/etcd/client/lease", NULL, test_lease);
  ADD ("/etcd/client/watch", NULL, test_watch);
  ADD ("/etcd/client/watch-cancelled", NULL, test_watch_cancelled);
  ADD ("/etcd/client/watch-burst", NULL, test_watch_burst);
  ADD ("/etcd/client/nobody-answers", NULL, test_nobody_answers);
  ADD ("/etcd/client/bad-endpoints", NULL, test_bad_endpoints);
  ADD ("/etcd/client/large-values", NULL, test_large_values);
  ADD ("/etcd/client/lost-reply", NULL, test_lost_reply);
  ADD ("/etcd/lease/kept-alive", NULL, test_lease_kept_alive);
  ADD ("/etcd/lease/hung-member", NULL, test_lease_hung_member);
  ADD ("/etcd/lease/holder-killed", NULL, test_lease_holder_killed);
  ADD ("/etcd/pool/contention", NULL, test_pool_contention);
  ADD ("/etcd/pool/hostile", NULL, test_pool_hostile);
  ADD ("/etcd/store/acquire-release", NULL, test_store_acquire_release);
  ADD ("/etcd/store/holder-killed", NULL, test_store_holder_killed);
  ADD ("/etcd/store/settings", NULL, test_store_settings);
  ADD ("/etcd/store/unreachable", NULL, test_store_unreachable);
  ADD ("/etcd/store/connect-hangs", NULL, test_store_connect_hangs);
  ADD ("/etcd/store/request-timeout", NULL, test_store_request_timeout);
  ADD ("/etcd/store/contention", NULL, test_store_contention);
  ADD ("/etcd/store/queue", NULL, test_store_queue);
  ADD ("/etcd/store/queue-leaseless", NULL, test_store_queue_leaseless);
  ADD ("/etcd/store/no-polling", NULL, test_store_no_polling);
  ADD ("/etcd/store/tool", NULL, test_store_tool);
  ADD ("/etcd/store/status", NULL, test_store_status);
  ADD ("/etcd/store/waiting", NULL, test_store_waiting);
  ADD ("/etcd/store/frozen-holder", NULL, test_store_frozen_holder);
  ADD ("/etcd/store/hostile", NULL, test_store_hostile);
  ADD ("/etcd/store/auth", NULL, test_store_auth);
  ADD ("/etcd/store/tls", "tls", test_store_tls);
  ADD ("/etcd/store/tls-refused", "tls", test_store_tls_refused);
  ADD ("/etcd/store/not-etcd", NULL, test_store_not_etcd);
  ADD ("/etcd/store/no-path", NULL, test_store_no_path);
  ADD ("/etcd/store/job-side-locks", NULL, test_store_job_side_locks);
  ADD ("/etcd/store/watch", NULL, test_store_watch);
  ADD ("/etcd/store/set-clean", NULL, test_store_set_clean);
  ADD ("/etcd/store/administrators", NULL, test_store_administrators);
  ADD ("/etcd/store/init", NULL, test_store_init);
  ADD ("/etcd/store/since", NULL, test_store_since);
  ADD ("/etcd/store/short-lease", NULL, test_store_short_lease);
  ADD ("/etcd/cluster/leader-killed", "3", test_leader_killed);
  ADD ("/etcd/cluster/store-acquire-release", "3", test_store_acquire_release);
  ADD ("/etcd/cluster/store-leader-killed", "3", test_store_leader_killed);
  ADD ("/etcd/cluster/waiter-leader-stopped", "3", test_store_waiter_leader_stopped);
  ADD ("/etcd/cluster/fencing-tokens", "3", test_store_fencing_tokens);
  ADD ("/etcd/cluster/mutex-intents", "3", test_store_mutex_intents);
  ADD ("/etcd/cluster/frozen-member", "3", test_frozen_member);
  ADD ("/etcd/cluster/hung-first-member", "3", test_hung_first_member);
  ADD ("/etcd/cluster/hung-member-remembered", "3", test_hung_member_remembered);
#undef ADD

  status = g_test_run ();
  test_remove_tree (runtime);
  return status;
}
