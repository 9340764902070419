/* tessera-etcd-client.c: a small client of etcd's JSON gateway (v3 API)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <libsoup/soup.h>
#include <string.h>
#include <tessera/tessera.h>

/* TesseraEtcdClient:
 *
 * Speaks to etcd (3.4 or later) through the JSON gateway that every etcd
 * member serves beside gRPC (`/v3/kv/range`, `/v3/kv/txn`,
 * `/v3/lease/grant`, `/v3/lease/keepalive`, `/v3/watch`), with libsoup:
 * no gRPC stack. Keys and values travel base64-encoded, 64-bit numbers as
 * strings.
 *
 * Endpoints are tried in turn: a member that does not answer, or answers
 * that it has no leader (an election is under way), sends the request to
 * the next one, and a whole round that fails is tried again after a short
 * pause, for up to the retry time (30 s by default), so that a leader
 * change or a lost member is ridden out rather than reported. When no
 * member could even be connected to (nothing listens, no connection
 * established within the request's deadline, a TLS member spoken to in
 * plain http) for UNREACHED_TIME_S, the cluster is taken
 * for unreachable at once (%TESSERA_ERROR_STORE_UNREACHABLE, naming each
 * endpoint and why): an election answers, it does not refuse
 * connections.
 *
 * One request waits at most REQUEST_TIMEOUT_S on one member (the store's
 * `request-timeout` setting changes it): a member
 * that misses that deadline (stopped, overloaded) is tried last for
 * MISSED_SKIP_S, so a hung member costs one deadline per process rather
 * than one per request, and a pool keeps working while it hangs.
 *
 * Replies come from the network, so they are read with the same limits as
 * a lock folder's files: at most MAX_MESSAGE bytes and
 * %TESSERA_JSON_MAX_DEPTH levels each. A watch is a stream that never
 * ends; it is split into its messages here (each a JSON object), each
 * parsed on its own.
 *
 * Unary calls use the sync API from whichever thread calls (libsoup 3.2
 * allows sending from any thread); a watch reads its stream on a thread
 * of its own and hands its messages over through a queue.
 */


G_DEFINE_FINAL_TYPE (TesseraEtcdClient, tessera_etcd_client, G_TYPE_OBJECT)

G_DEFINE_QUARK (tessera-etcd-error-quark, tessera_etcd_error)

void
tessera_etcd_kv_free (TesseraEtcdKv *kv)
{
  if (kv == NULL)
    return;
  g_free (kv->key);
  g_clear_pointer (&kv->value, g_bytes_unref);
  g_free (kv);
}

void
tessera_etcd_event_free (TesseraEtcdEvent *event)
{
  if (event == NULL)
    return;
  tessera_etcd_kv_free (event->kv);
  g_free (event);
}

static void
tessera_etcd_client_finalize (GObject *object)
{
  TesseraEtcdClient *self = TESSERA_ETCD_CLIENT (object);

  g_strfreev (self->endpoints);
  g_free (self->cluster);
  g_free (self->tls_checked);
  g_clear_object (&self->session);
  g_clear_object (&self->streams);
  g_clear_object (&self->client_certificate);
  g_free (self->user);
  g_free (self->password);
  g_free (self->token);
  g_mutex_clear (&self->mutex);
  G_OBJECT_CLASS (tessera_etcd_client_parent_class)->finalize (object);
}

static void
tessera_etcd_client_class_init (TesseraEtcdClientClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_etcd_client_finalize;
}

static void
tessera_etcd_client_init (TesseraEtcdClient *self)
{
  g_mutex_init (&self->mutex);
  self->retry_time = DEFAULT_RETRY_TIME_S;
  self->request_timeout = REQUEST_TIMEOUT_S;
}

/* ---------------------------------------------------------------------- */
/* Small helpers */

/* etcd writes 64-bit numbers as strings, and leaves out zeros. */
gint64
_tessera_etcd_member_int (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return 0;
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    return g_ascii_strtoll (json_node_get_string (node), NULL, 10);
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return json_node_get_int (node);
  return 0;
}

const char *
_tessera_etcd_member_string (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

JsonObject *
_tessera_etcd_member_object (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* Keys and values travel base64-encoded. */
void
_tessera_etcd_set_bytes (JsonObject *object, const char *member, const void *data, gsize length)
{
  g_autofree char *text = g_base64_encode (data, length);

  json_object_set_string_member (object, member, text);
}

void
_tessera_etcd_set_key (JsonObject *object, const char *member, const char *key)
{
  _tessera_etcd_set_bytes (object, member, key, strlen (key));
}

void
_tessera_etcd_set_int (JsonObject *object, const char *member, gint64 value)
{
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, value);

  json_object_set_string_member (object, member, text);
}

/* The smallest key greater than every key that starts with @prefix: its
 * last byte that is not 0xff, plus one, and nothing after it. */
char *
tessera_etcd_prefix_end (const char *prefix)
{
  gsize length = strlen (prefix);
  char *end = g_strndup (prefix, length);

  while (length > 0)
    {
      if ((guchar) end[length - 1] < 0xff)
        {
          end[length - 1]++;
          end[length] = '\0';
          return end;
        }
      length--;
    }
  g_free (end);
  return NULL;
}

TesseraEtcdKv *
_tessera_etcd_kv_from_json (JsonObject *object, GError **error)
{
  const char *key = _tessera_etcd_member_string (object, "key");
  const char *value = _tessera_etcd_member_string (object, "value");
  g_autoptr(TesseraEtcdKv) kv = g_new0 (TesseraEtcdKv, 1);
  gsize length = 0;
  guchar *data;

  if (key == NULL)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd sent a key-value with no key"));
      return NULL;
    }
  data = g_base64_decode (key, &length);
  if (memchr (data, '\0', length) != NULL)
    {
      g_free (data);
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd sent a key with a NUL byte"));
      return NULL;
    }
  kv->key = g_realloc (data, length + 1);
  kv->key[length] = '\0';
  if (value != NULL)
    {
      /* cppcheck sees no free of data: the GBytes takes it. */
      // cppcheck-suppress memleak
      data = g_base64_decode (value, &length);
      kv->value = g_bytes_new_take (data, length);
    }
  else
    kv->value = g_bytes_new (NULL, 0);
  kv->create_revision = _tessera_etcd_member_int (object, "create_revision");
  kv->mod_revision = _tessera_etcd_member_int (object, "mod_revision");
  kv->version = _tessera_etcd_member_int (object, "version");
  kv->lease = _tessera_etcd_member_int (object, "lease");
  return g_steal_pointer (&kv);
}

/* ---------------------------------------------------------------------- */
/* Construction */

TesseraEtcdClient *
tessera_etcd_client_new (const char * const *endpoints,
                         GError            **error)
{
  g_autoptr(TesseraEtcdClient) self = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; endpoints != NULL && endpoints[i] != NULL; i++)
    {
      g_autofree char *endpoint = g_strstrip (g_strdup (endpoints[i]));
      g_autoptr(GUri) uri = NULL;

      if (*endpoint == '\0')
        continue;
      uri = g_uri_parse (endpoint, G_URI_FLAGS_NONE, NULL);
      if (uri == NULL || (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 &&
                          g_strcmp0 (g_uri_get_scheme (uri), "https") != 0) ||
          g_uri_get_host (uri) == NULL ||
          (*g_uri_get_path (uri) != '\0' && g_strcmp0 (g_uri_get_path (uri), "/") != 0))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("“%s” is not an etcd endpoint (http://HOST:PORT or https://HOST:PORT)"), endpoint);
          return NULL;
        }
      while (g_str_has_suffix (endpoint, "/"))
        endpoint[strlen (endpoint) - 1] = '\0';
      g_strv_builder_add (builder, endpoint);
    }
  self = g_object_new (TESSERA_TYPE_ETCD_CLIENT, NULL);
  self->endpoints = g_strv_builder_end (builder);
  if (self->endpoints[0] == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("No etcd endpoint given"));
      return NULL;
    }
  self->cluster = g_strjoinv (",", self->endpoints);
  self->tls_checked = g_new0 (gboolean, g_strv_length (self->endpoints));
  self->session = soup_session_new_with_options ("timeout", REQUEST_TIMEOUT_S, "idle-timeout", 60, NULL);
  /* A member that stops (frozen, cut off) keeps its streams open and says
   * nothing: a watch silent for this long is opened again elsewhere. */
  self->streams = soup_session_new_with_options ("timeout", WATCH_IDLE_S, NULL);
  return g_steal_pointer (&self);
}

void
tessera_etcd_client_set_auth (TesseraEtcdClient *self,
                              const char        *user,
                              const char        *password)
{
  g_return_if_fail (TESSERA_IS_ETCD_CLIENT (self));

  g_mutex_lock (&self->mutex);
  g_free (self->user);
  g_free (self->password);
  g_clear_pointer (&self->token, g_free);
  self->user = g_strdup (user);
  self->password = g_strdup (password);
  g_mutex_unlock (&self->mutex);
}

/* Called before any request, from the thread that made the client. */
gboolean
tessera_etcd_client_set_tls (TesseraEtcdClient *self,
                             const char        *ca_file,
                             const char        *cert_file,
                             const char        *key_file,
                             GError           **error)
{
  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  if (ca_file != NULL)
    {
      g_autoptr(GTlsDatabase) database = g_tls_file_database_new (ca_file, error);

      if (database == NULL)
        return FALSE;
      g_object_set (self->session, "tls-database", database, NULL);
      g_object_set (self->streams, "tls-database", database, NULL);
    }
  if (cert_file != NULL)
    {
      g_clear_object (&self->client_certificate);
      self->client_certificate = g_tls_certificate_new_from_files (cert_file,
                                                                   key_file != NULL ? key_file : cert_file,
                                                                   error);
      if (self->client_certificate == NULL)
        return FALSE;
    }
  return TRUE;
}

void
tessera_etcd_client_set_retry_time (TesseraEtcdClient *self,
                                    double             seconds)
{
  g_return_if_fail (TESSERA_IS_ETCD_CLIENT (self));
  self->retry_time = seconds;
}

/* How long one request to one member may take (2 s by default): the
 * store's setting, or a caller's deadline (a lease's keep-alive). Called before any
 * request, from the thread that made the client. */
void
tessera_etcd_client_set_request_timeout (TesseraEtcdClient *self,
                                         guint              seconds)
{
  g_return_if_fail (TESSERA_IS_ETCD_CLIENT (self));
  g_return_if_fail (seconds > 0);
  self->request_timeout = seconds;
  g_object_set (self->session, "timeout", seconds, NULL);
}

/* Makes the first request go to the member of this cluster that
 * answered last in this process (another client's: a store's lease
 * keeper starts where the store got its answers), else to one chosen at
 * random among those that did not miss a deadline lately on this host,
 * rather than the first: processes started together spread over the
 * members, and a member that hangs is not the first one every process
 * waits on. */
void
tessera_etcd_client_start_anywhere (TesseraEtcdClient *self)
{
  guint n, m = 0;
  int last;
  g_autofree guint *fine = NULL;

  g_return_if_fail (TESSERA_IS_ETCD_CLIENT (self));

  n = g_strv_length (self->endpoints);
  last = _tessera_etcd_members_last_answered (self->cluster);
  fine = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    if (!_tessera_etcd_members_is_missed (self->endpoints[i]))
      fine[m++] = i;
  g_mutex_lock (&self->mutex);
  if (last >= 0 && (guint) last < n)
    self->current = (guint) last;
  else if (m > 0)
    self->current = fine[g_random_int_range (0, (gint32) m)];
  else
    self->current = (guint) g_random_int_range (0, (gint32) n);
  g_mutex_unlock (&self->mutex);
}

guint
tessera_etcd_client_get_request_timeout (TesseraEtcdClient *self)
{
  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), 0);
  return self->request_timeout;
}

guint
tessera_etcd_client_get_n_endpoints (TesseraEtcdClient *self)
{
  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), 0);
  return g_strv_length (self->endpoints);
}

/* ---------------------------------------------------------------------- */
/* Calls */

SoupMessage *
_tessera_etcd_new_request (TesseraEtcdClient *self, const char *endpoint, const char *method,
             const char *body, const char *token)
{
  g_autofree char *url = g_strconcat (endpoint, "/v3/", method, NULL);
  SoupMessage *message = soup_message_new ("POST", url);
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

  soup_message_set_request_body_from_bytes (message, "application/json", bytes);
  if (token != NULL)
    soup_message_headers_replace (soup_message_get_request_headers (message), "Authorization", token);
  if (self->client_certificate != NULL)
    soup_message_set_tls_client_certificate (message, self->client_certificate);
  return message;
}

/* The reply of @endpoint, sent with HTTP @status, as a JSON object; what
 * is not one is no etcd's (a web server, a proxy), said so. */
static JsonNode *
parse_reply (GBytes *bytes, const char *endpoint, guint status, GError **error)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (bytes, &length);
  g_autoptr(GError) local = NULL;
  JsonNode *root;

  if (length > MAX_MESSAGE)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                   _("etcd sent a reply larger than %d bytes"), MAX_MESSAGE);
      return NULL;
    }
  root = tessera_json_parse (data != NULL ? data : "", (gssize) length, &local);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                   _("%s is not etcd: it answered HTTP %u with a reply that is not a JSON object (%s)"),
                   endpoint, status, local != NULL ? local->message : _("wrong type"));
      g_clear_pointer (&root, json_node_unref);
      return NULL;
    }
  return root;
}

/* Sleeps @seconds unless @cancellable fires first. */
gboolean
_tessera_etcd_pause_for (double seconds, GCancellable *cancellable, GError **error)
{
  gint64 until = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);

  while (g_get_monotonic_time () < until)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      g_usleep (MIN (20000, MAX (0, until - g_get_monotonic_time ())));
    }
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* UNUSABLE: this member and we do not trust each other (TLS), or what
 * answers there is not etcd: another member may do, but time will not
 * mend it. */
typedef enum { ANSWERED, TRY_ANOTHER, FAILED, REAUTHENTICATE, UNUSABLE } Outcome;

/* Reads a reply body, refusing one larger than MAX_MESSAGE before it is
 * all in memory. */
static GBytes *
read_bounded (GInputStream *stream, GCancellable *cancellable, gboolean *too_large, GError **error)
{
  g_autoptr(GByteArray) body = g_byte_array_new ();
  guint8 chunk[65536];

  while (TRUE)
    {
      gssize n = g_input_stream_read (stream, chunk, sizeof chunk, cancellable, error);

      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      if (body->len + (gsize) n > MAX_MESSAGE)
        {
          *too_large = TRUE;
          g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                       _("etcd sent a reply larger than %d bytes"), MAX_MESSAGE);
          return NULL;
        }
      g_byte_array_append (body, chunk, (guint) n);
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&body));
}

/* Whether a request that failed this way may still have been applied. */
static gboolean
maybe_applied (const GError *error)
{
  if (error == NULL)
    return TRUE;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE) ||
      g_error_matches (error, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND))
    return FALSE;
  /* etcd refused before proposing: nothing was applied. */
  if (error->domain == TESSERA_ETCD_ERROR && strstr (error->message, "no leader") != NULL)
    return FALSE;
  return TRUE;
}

/* A TLS failure with @endpoint, said as what to check in the settings:
 * %TRUE when @error was one (it is replaced). */
static gboolean
explain_tls_error (const char *endpoint, GError **error)
{
  g_autoptr(GError) tls = NULL;

  if (*error == NULL || (*error)->domain != G_TLS_ERROR)
    return FALSE;
  tls = g_steal_pointer (error);
  if (g_error_matches (tls, G_TLS_ERROR, G_TLS_ERROR_BAD_CERTIFICATE))
    g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNTRUSTED,
                 _("etcd at %s: its TLS certificate is not trusted (is “ca” the CA that signed it?): %s"),
                 endpoint, tls->message);
  else
    g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNTRUSTED,
                 _("etcd at %s refused the TLS connection (does it want a client certificate, "
                   "“cert” and “key”, signed by its CA?): %s"), endpoint, tls->message);
  return TRUE;
}

/* Whether https member @i, asked without a client certificate, does not
 * refuse the handshake for want of one: FALSE with
 * %G_TLS_ERROR_CERTIFICATE_REQUIRED when it does. libsoup 3.2 takes that
 * error of its own handshake for a cue to ask the message for a
 * certificate and send it again on the failed connection, which it
 * warns "code should not be reached" about; so a client without a
 * certificate shakes hands with each https member here first, once it
 * did not refuse, and never lets libsoup meet that refusal. Anything
 * else that goes wrong here (nothing listens, a certificate we do not
 * trust, no answer) is left for the request to meet and say. */
static gboolean
accepts_no_certificate (TesseraEtcdClient *self, guint i, GCancellable *cancellable, GError **error)
{
  g_autoptr(GSocketClient) sockets = NULL;
  g_autoptr(GSocketConnectable) address = NULL;
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GTlsDatabase) database = NULL;
  g_autoptr(GError) local = NULL;
  gboolean checked, asked = FALSE;

  if (self->client_certificate != NULL || !g_str_has_prefix (self->endpoints[i], "https://"))
    return TRUE;
  g_mutex_lock (&self->mutex);
  checked = self->tls_checked[i];
  g_mutex_unlock (&self->mutex);
  if (checked)
    return TRUE;

  address = g_network_address_parse_uri (self->endpoints[i], 443, NULL);
  sockets = g_socket_client_new ();
  g_socket_client_set_timeout (sockets, self->request_timeout);
  if (address != NULL)
    connection = g_socket_client_connect (sockets, address, cancellable, NULL);
  if (connection != NULL)
    tls = g_tls_client_connection_new (G_IO_STREAM (connection), address, NULL);
  if (tls != NULL)
    {
      g_object_get (self->session, "tls-database", &database, NULL);
      if (database != NULL)
        g_tls_connection_set_database (G_TLS_CONNECTION (tls), database);
      if (g_tls_connection_handshake (G_TLS_CONNECTION (tls), cancellable, &local))
        {
          GList *cas = g_tls_client_connection_get_accepted_cas (G_TLS_CLIENT_CONNECTION (tls));
          char byte;

          /* In TLS 1.3 our handshake ends before the member has judged
           * the certificate it asked for: its refusal comes next, while
           * a member content without one says nothing until asked. */
          asked = cas != NULL;
          g_list_free_full (cas, (GDestroyNotify) g_byte_array_unref);
          if (asked)
            {
              g_socket_set_timeout (g_socket_connection_get_socket (connection), self->request_timeout);
              if (g_input_stream_read (g_io_stream_get_input_stream (tls), &byte, 1, cancellable, &local) == 0)
                g_set_error (&local, G_TLS_ERROR, G_TLS_ERROR_CERTIFICATE_REQUIRED,
                             _("it asked for a client certificate and closed the connection"));
            }
        }
      if (local != NULL && (g_error_matches (local, G_TLS_ERROR, G_TLS_ERROR_CERTIFICATE_REQUIRED) ||
                            (asked && local->domain == G_TLS_ERROR)))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      g_io_stream_close (tls, NULL, NULL);
    }
  g_mutex_lock (&self->mutex);
  self->tls_checked[i] = TRUE;
  g_mutex_unlock (&self->mutex);
  return TRUE;
}

/* Whether a request's connection to its member was begun and whether it
 * was established (libsoup's "network-event"; a connection reused from
 * an earlier request reports neither). */
typedef struct
{
  gboolean connecting;
  gboolean connected;
} Connection;

static void
on_network_event (SoupMessage *message, GSocketClientEvent event, GIOStream *stream, gpointer data)
{
  Connection *connection = data;

  if (event == G_SOCKET_CLIENT_CONNECTING)
    connection->connecting = TRUE;
  else if (event == G_SOCKET_CLIENT_CONNECTED)
    connection->connected = TRUE;
}

/* One request to one endpoint. A connection begun and never established
 * within the deadline fails with %G_IO_ERROR_HOST_UNREACHABLE: the member
 * cannot be connected to (one in an election still takes connections),
 * not a member that took the request and did not answer in time. */
static Outcome
call_once (TesseraEtcdClient *self, const char *endpoint, const char *method, const char *body,
           const char *token, JsonNode **reply, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  g_autoptr(SoupMessage) message = _tessera_etcd_new_request (self, endpoint, method, body, token);
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  guint status;
  gint64 code;
  const char *text;

  Connection connection = { FALSE, FALSE };

  g_debug ("etcd: %s to %s", method, endpoint);
  g_signal_connect (message, "network-event", G_CALLBACK (on_network_event), &connection);
  stream = soup_session_send (self->session, message, cancellable, error);
  g_signal_handlers_disconnect_by_data (message, &connection);
  if (stream == NULL && connection.connecting && !connection.connected &&
      g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    {
      g_clear_error (error);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE,
                   _("no connection within %u s"), self->request_timeout);
    }
  if (stream != NULL)
    bytes = read_bounded (stream, cancellable, too_large, error);
  if (bytes == NULL && explain_tls_error (endpoint, error))
    return UNUSABLE;
  if (bytes == NULL)
    return g_cancellable_is_cancelled (cancellable) || *too_large ? FAILED : TRY_ANOTHER;
  status = soup_message_get_status (message);
  root = parse_reply (bytes, endpoint, status, error);
  /* Not etcd's JSON gateway (a web server, a proxy): a gateway's 5xx
   * page may be a member behind it that is down, so another try;
   * anything else is no etcd at all. */
  if (root == NULL)
    return status >= 500 ? TRY_ANOTHER : UNUSABLE;
  object = json_node_get_object (root);
  if (status == SOUP_STATUS_OK)
    {
      *reply = g_steal_pointer (&root);
      return ANSWERED;
    }
  code = _tessera_etcd_member_int (object, "code");
  text = _tessera_etcd_member_string (object, "message");
  if (text == NULL)
    text = _tessera_etcd_member_string (object, "error");
  if (text == NULL)
    text = soup_message_get_reason_phrase (message);
  if (code == GRPC_UNAVAILABLE || status == SOUP_STATUS_SERVICE_UNAVAILABLE)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNAVAILABLE,
                   _("etcd at %s is unavailable: %s"), endpoint, text);
      return TRY_ANOTHER;
    }
  if (code == GRPC_UNAUTHENTICATED && token != NULL)
    return REAUTHENTICATE;
  g_set_error (error, TESSERA_ETCD_ERROR,
               code == GRPC_NOT_FOUND && strstr (text, "lease") != NULL
               ? TESSERA_ETCD_ERROR_LEASE_NOT_FOUND : TESSERA_ETCD_ERROR_REFUSED,
               _("etcd at %s refused %s: %s"), endpoint, method, text);
  return FAILED;
}

char *
_tessera_etcd_dup_token (TesseraEtcdClient *self, GCancellable *cancellable, GError **error)
{
  g_autofree char *user = NULL;
  g_autofree char *password = NULL;
  g_autoptr(JsonNode) request = NULL;
  g_autoptr(JsonNode) reply = NULL;
  JsonObject *object;
  char *token;

  g_mutex_lock (&self->mutex);
  token = g_strdup (self->token);
  user = g_strdup (self->user);
  password = g_strdup (self->password);
  g_mutex_unlock (&self->mutex);
  if (token != NULL || user == NULL)
    return token;

  request = _tessera_etcd_new_request_node (&object);
  json_object_set_string_member (object, "name", user);
  json_object_set_string_member (object, "password", password != NULL ? password : "");
  reply = _tessera_etcd_call (self, "auth/authenticate", request, cancellable, error);
  if (reply == NULL)
    return NULL;
  token = g_strdup (_tessera_etcd_member_string (json_node_get_object (reply), "token"));
  if (token == NULL)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                   _("etcd gave no token for user %s"), user);
      return NULL;
    }
  g_mutex_lock (&self->mutex);
  g_free (self->token);
  self->token = g_strdup (token);
  g_mutex_unlock (&self->mutex);
  return token;
}

/* Whether the member that failed a request with @error took the
 * connection: it answered (an error of its own), or was too slow. */
static gboolean
member_reached (const GError *error)
{
  /* A page that is not etcd's (a gateway's error) is not etcd's answer. */
  if (g_error_matches (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY))
    return FALSE;
  return error == NULL || error->domain == TESSERA_ETCD_ERROR ||
         g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
}

/* The error of a call that no member answered: each endpoint, and why
 * its last attempt failed, on one line. */
static void
set_unreachable (GError **error, const char * const *endpoints, char **why)
{
  g_autoptr(GString) tried = g_string_new (NULL);

  for (guint i = 0; endpoints[i] != NULL; i++)
    g_string_append_printf (tried, "%s%s (%s)", i > 0 ? "; " : "", endpoints[i],
                            why[i] != NULL ? why[i] : _("not tried"));
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_STORE_UNREACHABLE,
               _("Cannot reach etcd: no endpoint answered: %s"), tried->str);
}

/* Sends @request to `/v3/METHOD`, riding out members that do not answer
 * and elections, for up to the retry time (UNREACHED_TIME_S when no
 * member could be connected to). @doubt tells whether an attempt before
 * the one that answered may have been applied (its reply was lost): the
 * answer then says nothing of what that attempt did. */
JsonNode *
_tessera_etcd_call_full (TesseraEtcdClient *self, const char *method, JsonNode *request,
           gboolean *doubt, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  g_autofree char *body = json_to_string (request, FALSE);
  gboolean authenticating = g_str_equal (method, "auth/authenticate");
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = start + (gint64) (self->retry_time * G_USEC_PER_SEC);
  g_autoptr(GError) last = NULL;
  guint n = g_strv_length (self->endpoints);
  /* Per endpoint, why its last attempt failed; NULL where none did, so
   * not a GStrv (whose free stops at the first NULL). */
  g_autoptr(GPtrArray) why = g_ptr_array_new_full (n, g_free);
  gboolean reached = FALSE;
  gboolean reauthenticated = FALSE;
  double pause = 0.05;

  g_ptr_array_set_size (why, (gint) n);
  while (TRUE)
    {
      g_autofree guint *order = g_new (guint, n);
      g_autofree gboolean *missed = g_new (gboolean, n);
      guint first, unusable = 0, m = 0;

      /* From the one that answered last, those that missed a deadline
       * lately (in any process of this host) last. */
      for (guint k = 0; k < n; k++)
        missed[k] = _tessera_etcd_members_is_missed (self->endpoints[k]);
      g_mutex_lock (&self->mutex);
      first = self->current;
      for (guint late = 0; late < 2; late++)
        for (guint k = 0; k < n; k++)
          if (missed[(first + k) % n] == (late == 1))
            order[m++] = (first + k) % n;
      g_mutex_unlock (&self->mutex);
      for (guint k = 0; k < n; k++)
        {
          guint i = order[k];
          g_autofree char *token = NULL;
          JsonNode *reply = NULL;
          Outcome outcome;

          if (!authenticating)
            {
              g_clear_error (&last);
              token = _tessera_etcd_dup_token (self, cancellable, &last);
              if (token == NULL && last != NULL)
                {
                  g_propagate_error (error, g_steal_pointer (&last));
                  return NULL;
                }
            }
          g_clear_error (&last);
          if (!accepts_no_certificate (self, i, cancellable, &last))
            {
              explain_tls_error (self->endpoints[i], &last);
              outcome = UNUSABLE;
            }
          else
            outcome = call_once (self, self->endpoints[i], method, body, token, &reply, too_large,
                                 cancellable, &last);
          if (outcome == ANSWERED)
            {
              g_mutex_lock (&self->mutex);
              self->current = i;
              g_mutex_unlock (&self->mutex);
              _tessera_etcd_members_note_answered (self->cluster, i, self->endpoints[i]);
              return reply;
            }
          if (outcome == REAUTHENTICATE && !reauthenticated)
            {
              /* Tokens expire: one new one, then the same endpoint again. */
              g_mutex_lock (&self->mutex);
              g_clear_pointer (&self->token, g_free);
              g_mutex_unlock (&self->mutex);
              reauthenticated = TRUE;
              k--;
              continue;
            }
          if (outcome == UNUSABLE)
            {
              g_free (why->pdata[i]);
              why->pdata[i] = g_strdup (last->message);
              unusable++;
              continue;
            }
          if (outcome == TRY_ANOTHER && maybe_applied (last))
            *doubt = TRUE;
          /* A member that took a deadline, or that cannot be connected
           * to, goes last for a while: each try would cost the same. */
          if (outcome == TRY_ANOTHER && (g_error_matches (last, G_IO_ERROR, G_IO_ERROR_TIMED_OUT) ||
                                         g_error_matches (last, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE)))
            _tessera_etcd_members_note_missed (self->endpoints[i]);
          if (outcome == TRY_ANOTHER)
            {
              reached = reached || member_reached (last);
              g_free (why->pdata[i]);
              if (g_error_matches (last, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
                why->pdata[i] = g_strdup_printf (_("no answer within %u s"), self->request_timeout);
              else
                why->pdata[i] = g_strdup (last != NULL ? last->message : "?");
            }
          if (outcome != TRY_ANOTHER)
            {
              if (last == NULL)
                g_set_error (&last, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_REFUSED,
                             _("etcd at %s refused the credentials"), self->endpoints[i]);
              g_propagate_error (error, g_steal_pointer (&last));
              return NULL;
            }
        }
      /* No member trusts us or is trusted, or none is etcd: a setting to
       * fix, not a wait; a store that cannot be used, said as each
       * member's reason (each names its endpoint). */
      if (unusable == n)
        {
          g_autoptr(GString) reasons = g_string_new (NULL);

          for (guint i = 0; i < n; i++)
            g_string_append_printf (reasons, "%s%s", i > 0 ? "; " : "", (const char *) why->pdata[i]);
          g_set_error_literal (error, TESSERA_ERROR, TESSERA_ERROR_STORE_UNREACHABLE, reasons->str);
          return NULL;
        }
      if (g_get_monotonic_time () >= deadline ||
          (!reached && g_get_monotonic_time () - start >= (gint64) (UNREACHED_TIME_S * G_USEC_PER_SEC)))
        break;
      if (!_tessera_etcd_pause_for (pause, cancellable, error))
        return NULL;
      pause = MIN (pause * 2, 1.0);
    }
  set_unreachable (error, (const char * const *) self->endpoints, (char **) why->pdata);
  return NULL;
}

JsonNode *
_tessera_etcd_call (TesseraEtcdClient *self, const char *method, JsonNode *request,
      GCancellable *cancellable, GError **error)
{
  gboolean doubt = FALSE, too_large = FALSE;

  return _tessera_etcd_call_full (self, method, request, &doubt, &too_large, cancellable, error);
}

JsonNode *
_tessera_etcd_object_node (JsonObject *object)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

JsonNode *
_tessera_etcd_new_request_node (JsonObject **object)
{
  *object = json_object_new ();
  return _tessera_etcd_object_node (*object);
}

gint64
_tessera_etcd_header_revision (JsonObject *reply)
{
  return _tessera_etcd_member_int (_tessera_etcd_member_object (reply, "header"), "revision");
}

