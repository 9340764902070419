/* test-etcd-client.c: the etcd client (tessera-etcd-client.c) against a
 * real etcd of one member: puts, conditional puts, ranges, leases,
 * watches, and endpoints that do not answer or are not etcd's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

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

int
main (int argc, char **argv)
{
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/client/put-and-range", NULL, test_put_and_range);
  etcd_test_add ("/etcd/client/put-if-unchanged", NULL, test_put_if_unchanged);
  etcd_test_add ("/etcd/client/put-if-created", NULL, test_put_if_created);
  etcd_test_add ("/etcd/client/lease", NULL, test_lease);
  etcd_test_add ("/etcd/client/watch", NULL, test_watch);
  etcd_test_add ("/etcd/client/watch-cancelled", NULL, test_watch_cancelled);
  etcd_test_add ("/etcd/client/watch-burst", NULL, test_watch_burst);
  etcd_test_add ("/etcd/client/nobody-answers", NULL, test_nobody_answers);
  etcd_test_add ("/etcd/client/bad-endpoints", NULL, test_bad_endpoints);
  etcd_test_add ("/etcd/client/large-values", NULL, test_large_values);
  etcd_test_add ("/etcd/client/lost-reply", NULL, test_lost_reply);
  return etcd_test_run ();
}
