/* test-etcd-connection.c: reaching etcd: a store that cannot be used
 * (nothing listening, a connect that hangs, a server that is not etcd),
 * the per-request deadline, authentication and TLS.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

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

int
main (int argc, char **argv)
{
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/store/unreachable", NULL, test_store_unreachable);
  etcd_test_add ("/etcd/store/connect-hangs", NULL, test_store_connect_hangs);
  etcd_test_add ("/etcd/store/request-timeout", NULL, test_store_request_timeout);
  etcd_test_add ("/etcd/store/auth", NULL, test_store_auth);
  etcd_test_add ("/etcd/store/tls", "tls", test_store_tls);
  etcd_test_add ("/etcd/store/tls-refused", "tls", test_store_tls_refused);
  etcd_test_add ("/etcd/store/not-etcd", NULL, test_store_not_etcd);
  return etcd_test_run ();
}
