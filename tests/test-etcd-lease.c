/* test-etcd-lease.c: the process's lease (tessera-etcd-lease.c): kept
 * alive, through a hung member, and gone with a holder killed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

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

int
main (int argc, char **argv)
{
  if (g_getenv (HOLD_ENV) != NULL && argc == 2)
    return hold_until_killed (g_getenv (HOLD_ENV), argv[1]);
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/lease/kept-alive", NULL, test_lease_kept_alive);
  etcd_test_add ("/etcd/lease/hung-member", NULL, test_lease_hung_member);
  etcd_test_add ("/etcd/lease/holder-killed", NULL, test_lease_holder_killed);
  return etcd_test_run ();
}
