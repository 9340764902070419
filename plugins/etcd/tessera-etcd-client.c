/* tessera-etcd-client.c: a small client of etcd's JSON gateway (v3 API)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client.h"

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
 * member could even be connected to (nothing listens, a TLS member
 * spoken to in plain http) for UNREACHED_TIME_S, the cluster is taken
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

#define MAX_MESSAGE (16 * 1024 * 1024)
#define REQUEST_TIMEOUT_S 2
#define MISSED_SKIP_S 10
#define DEFAULT_RETRY_TIME_S 30.0
#define UNREACHED_TIME_S 3.0
#define WATCH_IDLE_S 20

/* gRPC status codes that the gateway puts in "code". */
#define GRPC_NOT_FOUND 5
#define GRPC_UNAVAILABLE 14
#define GRPC_UNAUTHENTICATED 16

struct _TesseraEtcdClient
{
  GObject parent_instance;

  GStrv endpoints;        /* "http://host:port", no trailing slash */
  SoupSession *session;   /* unary calls, with an I/O timeout */
  SoupSession *streams;   /* watches: a stream may be idle for ever */
  GTlsCertificate *client_certificate;
  double retry_time;
  guint request_timeout;  /* seconds, the session's */

  GMutex mutex;           /* current, missed_until, tls_checked, token */
  guint current;          /* the endpoint that answered last */
  gint64 *missed_until;   /* per endpoint: tried last until then (monotonic) */
  gboolean *tls_checked;  /* per endpoint: its handshake without a certificate was tried */
  char *user;
  char *password;
  char *token;
};

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
  g_free (self->missed_until);
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
static gint64
member_int (JsonObject *object, const char *name)
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

static const char *
member_string (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonObject *
member_object (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* Keys and values travel base64-encoded. */
static void
set_bytes (JsonObject *object, const char *member, const void *data, gsize length)
{
  g_autofree char *text = g_base64_encode (data, length);

  json_object_set_string_member (object, member, text);
}

static void
set_key (JsonObject *object, const char *member, const char *key)
{
  set_bytes (object, member, key, strlen (key));
}

static void
set_int (JsonObject *object, const char *member, gint64 value)
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

static TesseraEtcdKv *
kv_from_json (JsonObject *object, GError **error)
{
  const char *key = member_string (object, "key");
  const char *value = member_string (object, "value");
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
  kv->create_revision = member_int (object, "create_revision");
  kv->mod_revision = member_int (object, "mod_revision");
  kv->version = member_int (object, "version");
  kv->lease = member_int (object, "lease");
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
  self->missed_until = g_new0 (gint64, g_strv_length (self->endpoints));
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

/* Makes the first request go to an endpoint chosen at random rather than
 * the first: processes started together spread over the members, and a
 * member that hangs is not the first one every process waits on. */
void
tessera_etcd_client_start_anywhere (TesseraEtcdClient *self)
{
  g_return_if_fail (TESSERA_IS_ETCD_CLIENT (self));

  g_mutex_lock (&self->mutex);
  self->current = (guint) g_random_int_range (0, (gint32) g_strv_length (self->endpoints));
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

static SoupMessage *
new_request (TesseraEtcdClient *self, const char *endpoint, const char *method,
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

static JsonNode *
parse_reply (GBytes *bytes, GError **error)
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
                   _("etcd sent a reply that is not a JSON object: %s"),
                   local != NULL ? local->message : _("wrong type"));
      g_clear_pointer (&root, json_node_unref);
      return NULL;
    }
  return root;
}

/* Sleeps @seconds unless @cancellable fires first. */
static gboolean
pause_for (double seconds, GCancellable *cancellable, GError **error)
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

/* UNTRUSTED: this member and we do not trust each other (TLS): another
 * member may, but time will not mend it. */
typedef enum { ANSWERED, TRY_ANOTHER, FAILED, REAUTHENTICATE, UNTRUSTED } Outcome;

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

/* One request to one endpoint. */
static Outcome
call_once (TesseraEtcdClient *self, const char *endpoint, const char *method, const char *body,
           const char *token, JsonNode **reply, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  g_autoptr(SoupMessage) message = new_request (self, endpoint, method, body, token);
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;
  guint status;
  gint64 code;
  const char *text;

  stream = soup_session_send (self->session, message, cancellable, error);
  if (stream != NULL)
    bytes = read_bounded (stream, cancellable, too_large, error);
  if (bytes == NULL && explain_tls_error (endpoint, error))
    return UNTRUSTED;
  if (bytes == NULL)
    return g_cancellable_is_cancelled (cancellable) || *too_large ? FAILED : TRY_ANOTHER;
  status = soup_message_get_status (message);
  root = parse_reply (bytes, error);
  if (root == NULL)
    return status >= 500 ? TRY_ANOTHER : FAILED;
  object = json_node_get_object (root);
  if (status == SOUP_STATUS_OK)
    {
      *reply = g_steal_pointer (&root);
      return ANSWERED;
    }
  code = member_int (object, "code");
  text = member_string (object, "message");
  if (text == NULL)
    text = member_string (object, "error");
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

static JsonNode *call_full (TesseraEtcdClient *self, const char *method, JsonNode *request,
                            gboolean *doubt, gboolean *too_large, GCancellable *cancellable, GError **error);
static JsonNode *call (TesseraEtcdClient *self, const char *method, JsonNode *request,
                       GCancellable *cancellable, GError **error);
static JsonNode *new_request_node (JsonObject **object);

static char *
dup_token (TesseraEtcdClient *self, GCancellable *cancellable, GError **error)
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

  request = new_request_node (&object);
  json_object_set_string_member (object, "name", user);
  json_object_set_string_member (object, "password", password != NULL ? password : "");
  reply = call (self, "auth/authenticate", request, cancellable, error);
  if (reply == NULL)
    return NULL;
  token = g_strdup (member_string (json_node_get_object (reply), "token"));
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
static JsonNode *
call_full (TesseraEtcdClient *self, const char *method, JsonNode *request,
           gboolean *doubt, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  g_autofree char *body = json_to_string (request, FALSE);
  gboolean authenticating = g_str_equal (method, "auth/authenticate");
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = start + (gint64) (self->retry_time * G_USEC_PER_SEC);
  g_autoptr(GError) last = NULL;
  g_autoptr(GError) distrust = NULL;
  guint n = g_strv_length (self->endpoints);
  g_auto(GStrv) why = g_new0 (char *, n + 1);
  gboolean reached = FALSE;
  gboolean reauthenticated = FALSE;
  double pause = 0.05;

  while (TRUE)
    {
      g_autofree guint *order = g_new (guint, n);
      guint first, untrusted = 0, m = 0;
      gint64 now = g_get_monotonic_time ();

      /* From the one that answered last, those that missed a deadline
       * lately last. */
      g_mutex_lock (&self->mutex);
      first = self->current;
      for (guint late = 0; late < 2; late++)
        for (guint k = 0; k < n; k++)
          if ((self->missed_until[(first + k) % n] > now) == (late == 1))
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
              token = dup_token (self, cancellable, &last);
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
              outcome = UNTRUSTED;
            }
          else
            outcome = call_once (self, self->endpoints[i], method, body, token, &reply, too_large,
                                 cancellable, &last);
          if (outcome == ANSWERED)
            {
              g_mutex_lock (&self->mutex);
              self->current = i;
              g_mutex_unlock (&self->mutex);
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
          if (outcome == UNTRUSTED)
            {
              g_clear_error (&distrust);
              distrust = g_steal_pointer (&last);
              g_free (why[i]);
              why[i] = g_strdup (distrust->message);
              untrusted++;
              continue;
            }
          if (outcome == TRY_ANOTHER && maybe_applied (last))
            *doubt = TRUE;
          if (outcome == TRY_ANOTHER && g_error_matches (last, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            {
              g_mutex_lock (&self->mutex);
              self->missed_until[i] = g_get_monotonic_time () + MISSED_SKIP_S * G_USEC_PER_SEC;
              g_mutex_unlock (&self->mutex);
            }
          if (outcome == TRY_ANOTHER)
            {
              reached = reached || member_reached (last);
              g_free (why[i]);
              if (g_error_matches (last, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
                why[i] = g_strdup_printf (_("no answer within %u s"), self->request_timeout);
              else
                why[i] = g_strdup (last != NULL ? last->message : "?");
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
      /* No member trusts us or is trusted: a setting to fix, not a wait. */
      if (untrusted == n)
        {
          g_propagate_error (error, g_steal_pointer (&distrust));
          return NULL;
        }
      if (g_get_monotonic_time () >= deadline ||
          (!reached && g_get_monotonic_time () - start >= (gint64) (UNREACHED_TIME_S * G_USEC_PER_SEC)))
        break;
      if (!pause_for (pause, cancellable, error))
        return NULL;
      pause = MIN (pause * 2, 1.0);
    }
  set_unreachable (error, (const char * const *) self->endpoints, why);
  return NULL;
}

static JsonNode *
call (TesseraEtcdClient *self, const char *method, JsonNode *request,
      GCancellable *cancellable, GError **error)
{
  gboolean doubt = FALSE, too_large = FALSE;

  return call_full (self, method, request, &doubt, &too_large, cancellable, error);
}

static JsonNode *
object_node (JsonObject *object)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

static JsonNode *
new_request_node (JsonObject **object)
{
  *object = json_object_new ();
  return object_node (*object);
}

static gint64
header_revision (JsonObject *reply)
{
  return member_int (member_object (reply, "header"), "revision");
}

/* One page of a range read: at most @limit keys from @key, at @revision
 * (0: the latest). */
static JsonNode *
range_page (TesseraEtcdClient *self, const char *key, gsize key_length, const char *range_end,
            gint64 revision, gint64 limit, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = new_request_node (&object);
  gboolean doubt = FALSE;

  set_bytes (object, "key", key, key_length);
  if (range_end != NULL)
    set_key (object, "range_end", range_end);
  set_int (object, "limit", limit);
  if (revision > 0)
    set_int (object, "revision", revision);
  return call_full (self, "kv/range", request, &doubt, too_large, cancellable, error);
}

#define RANGE_PAGE 512

/* Reads every key from @key to @range_end (just @key without one) at one
 * revision, in pages: a page too large to read (large values) is read
 * again in smaller ones, so that a few large values under a prefix do not
 * make the whole of it unreadable. */
gboolean
tessera_etcd_client_range (TesseraEtcdClient  *self,
                           const char         *key,
                           const char         *range_end,
                           gint64             *revision,
                           GPtrArray         **kvs,
                           GCancellable       *cancellable,
                           GError            **error)
{
  g_autoptr(GPtrArray) result = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_kv_free);
  g_autofree char *next = g_strdup (key);
  gsize next_length = strlen (key);
  gint64 at = 0;
  gint64 limit = RANGE_PAGE;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  while (TRUE)
    {
      g_autoptr(GError) local = NULL;
      gboolean too_large = FALSE;
      g_autoptr(JsonNode) reply = range_page (self, next, next_length, range_end, at, limit, &too_large,
                                              cancellable, &local);
      JsonObject *answer;
      JsonNode *list;
      guint n;

      if (reply == NULL)
        {
          if (too_large && limit > 1)
            {
              limit /= 2;
              continue;
            }
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      answer = json_node_get_object (reply);
      if (at == 0)
        at = header_revision (answer);
      list = json_object_get_member (answer, "kvs");
      if (list != NULL && !JSON_NODE_HOLDS_ARRAY (list))
        {
          g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd sent “kvs” that is not a list"));
          return FALSE;
        }
      n = list != NULL ? json_array_get_length (json_node_get_array (list)) : 0;
      for (guint i = 0; i < n; i++)
        {
          JsonNode *item = json_array_get_element (json_node_get_array (list), i);
          TesseraEtcdKv *kv;

          if (!JSON_NODE_HOLDS_OBJECT (item) || (kv = kv_from_json (json_node_get_object (item), error)) == NULL)
            {
              if (error != NULL && *error == NULL)
                g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                             _("etcd sent a key-value that is not an object"));
              return FALSE;
            }
          g_ptr_array_add (result, kv);
        }
      if (range_end == NULL || !json_object_get_boolean_member_with_default (answer, "more", FALSE) || n == 0)
        break;
      /* The next page starts just after the last key: that key and a NUL. */
      {
        const char *last = ((TesseraEtcdKv *) g_ptr_array_index (result, result->len - 1))->key;

        next_length = strlen (last) + 1;
        g_free (next);
        next = g_malloc0 (next_length + 1);
        memcpy (next, last, next_length - 1);
      }
      limit = MIN (limit * 2, RANGE_PAGE);
    }
  if (revision != NULL)
    *revision = at;
  if (kvs != NULL)
    *kvs = g_steal_pointer (&result);
  return TRUE;
}

static JsonObject *
put_operation (const char *key, GBytes *value, gint64 lease)
{
  JsonObject *put = json_object_new ();
  gsize length = 0;
  const void *data = value != NULL ? g_bytes_get_data (value, &length) : "";

  set_key (put, "key", key);
  set_bytes (put, "value", data, length);
  if (lease != 0)
    set_int (put, "lease", lease);
  return put;
}

gboolean
tessera_etcd_client_put (TesseraEtcdClient  *self,
                         const char         *key,
                         GBytes             *value,
                         gint64              lease,
                         gint64             *revision,
                         GCancellable       *cancellable,
                         GError            **error)
{
  g_autoptr(JsonNode) request = object_node (put_operation (key, value, lease));
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  reply = call (self, "kv/put", request, cancellable, error);
  if (reply == NULL)
    return FALSE;
  if (revision != NULL)
    *revision = header_revision (json_node_get_object (reply));
  return TRUE;
}

gboolean
tessera_etcd_client_delete (TesseraEtcdClient  *self,
                            const char         *key,
                            const char         *range_end,
                            gint64             *deleted,
                            GCancellable       *cancellable,
                            GError            **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = new_request_node (&object);
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  set_key (object, "key", key);
  if (range_end != NULL)
    set_key (object, "range_end", range_end);
  reply = call (self, "kv/deleterange", request, cancellable, error);
  if (reply == NULL)
    return FALSE;
  if (deleted != NULL)
    *deleted = member_int (json_node_get_object (reply), "deleted");
  return TRUE;
}

/* Puts @key if @compare holds, in one transaction. */
static gboolean
put_if (TesseraEtcdClient *self,
        JsonObject        *compare,
        const char        *key,
        GBytes            *value,
        gint64             lease,
        gboolean          *succeeded,
        gint64            *revision,
        GCancellable      *cancellable,
        GError           **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = new_request_node (&object);
  g_autoptr(JsonNode) reply = NULL;
  JsonArray *compares = json_array_new ();
  JsonObject *operation = json_object_new ();
  JsonArray *success = json_array_new ();
  gboolean doubt = FALSE, too_large = FALSE;

  json_array_add_object_element (compares, compare);
  json_object_set_array_member (object, "compare", compares);
  json_object_set_object_member (operation, "request_put", put_operation (key, value, lease));
  json_array_add_object_element (success, operation);
  json_object_set_array_member (object, "success", success);

  reply = call_full (self, "kv/txn", request, &doubt, &too_large, cancellable, error);
  if (reply == NULL)
    return FALSE;
  *succeeded = json_object_get_boolean_member_with_default (json_node_get_object (reply), "succeeded", FALSE);
  if (revision != NULL)
    *revision = header_revision (json_node_get_object (reply));
  if (!*succeeded && doubt)
    {
      /* An earlier attempt whose reply was lost may have put the key, and
       * this one failed because of it: the key, with our value on our
       * lease, says so. */
      g_autoptr(GPtrArray) found = NULL;

      if (!tessera_etcd_client_range (self, key, NULL, NULL, &found, cancellable, error))
        return FALSE;
      if (found->len == 1 && ((TesseraEtcdKv *) g_ptr_array_index (found, 0))->lease == lease &&
          value != NULL && g_bytes_equal (((TesseraEtcdKv *) g_ptr_array_index (found, 0))->value, value))
        {
          *succeeded = TRUE;
          if (revision != NULL)
            *revision = ((TesseraEtcdKv *) g_ptr_array_index (found, 0))->mod_revision;
        }
    }
  return TRUE;
}

/* Puts @key only if no key under @prefix was created or changed after
 * @since_revision: the decision made on the view read at that revision
 * still holds. (A key deleted since only frees capacity, so it may pass.) */
gboolean
tessera_etcd_client_put_if_unchanged (TesseraEtcdClient *self,
                                      const char        *prefix,
                                      gint64             since_revision,
                                      const char        *key,
                                      GBytes            *value,
                                      gint64             lease,
                                      gboolean          *succeeded,
                                      gint64            *revision,
                                      GCancellable      *cancellable,
                                      GError           **error)
{
  g_autofree char *end = tessera_etcd_prefix_end (prefix);
  JsonObject *compare;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);
  g_return_val_if_fail (end != NULL, FALSE);

  /* Every key of the range has mod_revision < since + 1. */
  compare = json_object_new ();
  set_key (compare, "key", prefix);
  set_key (compare, "range_end", end);
  json_object_set_string_member (compare, "target", "MOD");
  json_object_set_string_member (compare, "result", "LESS");
  set_int (compare, "mod_revision", since_revision + 1);
  return put_if (self, compare, key, value, lease, succeeded, revision, cancellable, error);
}

/* Replaces @key only if it is still the key created at @create_revision:
 * one deleted since (a release, a forced removal) is not made again, and
 * *@succeeded is %FALSE. */
gboolean
tessera_etcd_client_put_if_created (TesseraEtcdClient *self,
                                    const char        *key,
                                    gint64             create_revision,
                                    GBytes            *value,
                                    gint64             lease,
                                    gboolean          *succeeded,
                                    GCancellable      *cancellable,
                                    GError           **error)
{
  JsonObject *compare;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);
  g_return_val_if_fail (create_revision > 0, FALSE);

  /* A key that is gone compares as created at revision 0. */
  compare = json_object_new ();
  set_key (compare, "key", key);
  json_object_set_string_member (compare, "target", "CREATE");
  json_object_set_string_member (compare, "result", "EQUAL");
  set_int (compare, "create_revision", create_revision);
  return put_if (self, compare, key, value, lease, succeeded, NULL, cancellable, error);
}

/* The lease calls: one number in, a JSON object out. */
static JsonNode *
call_with_int (TesseraEtcdClient *self, const char *method, const char *member, gint64 value,
               GCancellable *cancellable, GError **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = new_request_node (&object);

  set_int (object, member, value);
  return call (self, method, request, cancellable, error);
}

gint64
tessera_etcd_client_lease_grant (TesseraEtcdClient *self,
                                 gint64             ttl,
                                 GCancellable      *cancellable,
                                 GError           **error)
{
  g_autoptr(JsonNode) reply = NULL;
  gint64 id;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), 0);

  reply = call_with_int (self, "lease/grant", "TTL", ttl, cancellable, error);
  if (reply == NULL)
    return 0;
  id = member_int (json_node_get_object (reply), "ID");
  if (id == 0)
    g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd granted a lease with no id"));
  return id;
}

/* One keep-alive: the gateway answers the streaming call with one message
 * per request, {"result": {"ID": …, "TTL": …}}; a TTL of 0 (or none) means
 * the lease is gone. */
gboolean
tessera_etcd_client_lease_keepalive (TesseraEtcdClient *self,
                                     gint64             lease,
                                     gint64            *ttl,
                                     GCancellable      *cancellable,
                                     GError           **error)
{
  g_autoptr(JsonNode) reply = NULL;
  JsonObject *result;
  gint64 left;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  reply = call_with_int (self, "lease/keepalive", "ID", lease, cancellable, error);
  if (reply == NULL)
    return FALSE;
  result = member_object (json_node_get_object (reply), "result");
  left = member_int (result != NULL ? result : json_node_get_object (reply), "TTL");
  if (left <= 0)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_LEASE_NOT_FOUND,
                   _("The etcd lease %" PRId64 " has expired"), lease);
      return FALSE;
    }
  if (ttl != NULL)
    *ttl = left;
  return TRUE;
}

/* The seconds lease @lease has left, in *@ttl: -1 when it is gone. */
gboolean
tessera_etcd_client_lease_time_to_live (TesseraEtcdClient *self,
                                        gint64             lease,
                                        gint64            *ttl,
                                        GCancellable      *cancellable,
                                        GError           **error)
{
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  reply = call_with_int (self, "lease/timetolive", "ID", lease, cancellable, error);
  if (reply == NULL)
    return FALSE;
  /* etcd says -1 for a lease it does not know, and leaves out a 0. */
  *ttl = member_int (json_node_get_object (reply), "TTL");
  return TRUE;
}

gboolean
tessera_etcd_client_lease_revoke (TesseraEtcdClient *self,
                                  gint64             lease,
                                  GCancellable      *cancellable,
                                  GError           **error)
{
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  reply = call_with_int (self, "lease/revoke", "ID", lease, cancellable, error);
  return reply != NULL;
}

/* ---------------------------------------------------------------------- */
/* Watches */

/* What the reading thread hands over: a message, or why it stopped. */
typedef struct
{
  JsonNode *message;
  GError *error;
} Item;

static void
item_free (Item *item)
{
  g_clear_pointer (&item->message, json_node_unref);
  g_clear_error (&item->error);
  g_free (item);
}

struct _TesseraEtcdWatch
{
  TesseraEtcdClient *client;
  char *key;
  char *range_end;
  GCancellable *cancellable;   /* stops the thread */
  GAsyncQueue *queue;          /* Item */
  GThread *thread;
  gint64 next_revision;        /* where a new stream starts; the thread's */
  gint64 revision;             /* the last one handed out; the reader's */
  GPtrArray *pending;          /* events of a change still in fragments */
};

/* Splits a stream of JSON objects ({…}{…} or one per line) into its
 * messages: tracks braces outside strings. The buffer is compacted once
 * per feed, never per byte or per message (a chunk of many messages, or
 * of much whitespace, costs its length, not its square). */
typedef struct
{
  GByteArray *buffer;
  int depth;
  gboolean in_string;
  gboolean escaped;
  gsize start;     /* where the message being read begins */
  gsize scanned;
} Splitter;

/* Feeds @data; calls @emit for each complete message. FALSE when a
 * message is too large. */
static gboolean
splitter_feed (Splitter *splitter, const char *data, gsize length,
               void (*emit) (const char *message, gsize length, gpointer user_data), gpointer user_data)
{
  g_byte_array_append (splitter->buffer, (const guint8 *) data, length);
  while (splitter->scanned < splitter->buffer->len)
    {
      char c = (char) splitter->buffer->data[splitter->scanned++];

      if (splitter->in_string)
        {
          if (splitter->escaped)
            splitter->escaped = FALSE;
          else if (c == '\\')
            splitter->escaped = TRUE;
          else if (c == '"')
            splitter->in_string = FALSE;
          continue;
        }
      if (splitter->depth == 0 && c != '{')
        {
          /* Whitespace between messages: dropped. */
          splitter->start = splitter->scanned;
          continue;
        }
      if (c == '"')
        splitter->in_string = TRUE;
      else if (c == '{' || c == '[')
        splitter->depth++;
      else if ((c == '}' || c == ']') && --splitter->depth == 0)
        {
          emit ((const char *) splitter->buffer->data + splitter->start, splitter->scanned - splitter->start,
                user_data);
          splitter->start = splitter->scanned;
        }
    }
  g_byte_array_remove_range (splitter->buffer, 0, splitter->start);
  splitter->scanned -= splitter->start;
  splitter->start = 0;
  return splitter->buffer->len <= MAX_MESSAGE;
}

static void
push_error (TesseraEtcdWatch *watch, GError *error)
{
  Item *item = g_new0 (Item, 1);

  item->error = error;
  g_async_queue_push (watch->queue, item);
  /* cppcheck sees no free of item: the queue owns it. */
  // cppcheck-suppress memleak
}

typedef struct
{
  TesseraEtcdWatch *watch;
  gboolean got_any;
} Reading;

static void
emit_message (const char *data, gsize length, gpointer user_data)
{
  Reading *reading = user_data;
  TesseraEtcdWatch *watch = reading->watch;
  g_autoptr(GError) error = NULL;
  JsonNode *root = tessera_json_parse (data, (gssize) length, &error);
  JsonObject *result;
  Item *item;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_debug ("etcd watch: dropping a message that is not a JSON object: %s",
               error != NULL ? error->message : "wrong type");
      g_clear_pointer (&root, json_node_unref);
      return;
    }
  reading->got_any = TRUE;
  /* Where the stream would start again: after the last revision seen
   * (for a watch "from now", after the revision it was created at). */
  result = member_object (json_node_get_object (root), "result");
  if (result != NULL && watch->next_revision == 0 && member_int (member_object (result, "header"), "revision") > 0)
    watch->next_revision = member_int (member_object (result, "header"), "revision") + 1;
  if (result != NULL && member_int (member_object (result, "header"), "revision") > 0 &&
      json_object_has_member (result, "events") &&
      !json_object_get_boolean_member_with_default (result, "fragment", FALSE))
    {
      gint64 newest = 0;
      JsonNode *events = json_object_get_member (result, "events");

      for (guint i = 0; JSON_NODE_HOLDS_ARRAY (events) && i < json_array_get_length (json_node_get_array (events)); i++)
        {
          JsonNode *event = json_array_get_element (json_node_get_array (events), i);
          if (JSON_NODE_HOLDS_OBJECT (event))
            newest = MAX (newest, member_int (member_object (json_node_get_object (event), "kv"), "mod_revision"));
        }
      if (newest > 0)
        watch->next_revision = newest + 1;
    }
  item = g_new0 (Item, 1);
  item->message = root;
  g_async_queue_push (watch->queue, item);
  /* cppcheck sees no free of item: the queue owns it (item_free is its
   * destroy notify, and the reader frees what it pops). */
  // cppcheck-suppress memleak
}

/* Reads one stream to its end. Returns FALSE when the watch must stop. */
static gboolean
read_stream (TesseraEtcdWatch *watch, const char *endpoint, gboolean *got_any, GError **error)
{
  TesseraEtcdClient *client = watch->client;
  JsonObject *object;
  JsonObject *create = json_object_new ();
  g_autoptr(JsonNode) request = new_request_node (&object);
  g_autofree char *body = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SoupMessage) message = NULL;
  g_autoptr(GInputStream) stream = NULL;
  Splitter splitter = { g_byte_array_new (), 0, FALSE, FALSE, 0, 0 };
  Reading reading = { watch, FALSE };
  char chunk[65536];
  gboolean ok = TRUE;

  set_key (create, "key", watch->key);
  if (watch->range_end != NULL)
    set_key (create, "range_end", watch->range_end);
  set_int (create, "start_revision", watch->next_revision);
  /* Large changes come in pieces (each under etcd's request limit). */
  json_object_set_boolean_member (create, "fragment", TRUE);
  json_object_set_object_member (object, "create_request", create);
  body = json_to_string (request, FALSE);
  token = dup_token (client, watch->cancellable, error);
  if (token == NULL && error != NULL && *error != NULL)
    {
      g_byte_array_unref (splitter.buffer);
      return FALSE;
    }
  message = new_request (client, endpoint, "watch", body, token);
  /* A member that has lost its leader ends the watch instead of keeping
   * it open on a view that no longer moves. */
  soup_message_headers_replace (soup_message_get_request_headers (message), "Grpc-Metadata-hasleader", "true");
  stream = soup_session_send (client->streams, message, watch->cancellable, error);
  if (stream == NULL)
    {
      g_byte_array_unref (splitter.buffer);
      return TRUE;   /* another endpoint, or this one again later */
    }
  if (soup_message_get_status (message) != SOUP_STATUS_OK)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNAVAILABLE,
                   _("etcd at %s did not open the watch (HTTP %u)"), endpoint, soup_message_get_status (message));
      g_byte_array_unref (splitter.buffer);
      return TRUE;
    }
  while (TRUE)
    {
      gssize n = g_input_stream_read (stream, chunk, sizeof chunk, watch->cancellable, error);

      if (n <= 0)
        break;   /* end of stream, or an error: start again */
      if (!splitter_feed (&splitter, chunk, (gsize) n, emit_message, &reading))
        {
          g_clear_error (error);
          g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                       _("etcd sent a watch message larger than %d bytes"), MAX_MESSAGE);
          ok = FALSE;
          break;
        }
    }
  g_input_stream_close (stream, NULL, NULL);
  g_byte_array_unref (splitter.buffer);
  *got_any = reading.got_any;
  return ok;
}

static gpointer
watch_thread (gpointer data)
{
  TesseraEtcdWatch *watch = data;
  TesseraEtcdClient *client = watch->client;
  guint n = g_strv_length (client->endpoints);
  guint i;
  gint64 give_up = 0;
  double pause = 0.05;

  g_mutex_lock (&client->mutex);
  i = client->current;
  g_mutex_unlock (&client->mutex);
  while (!g_cancellable_is_cancelled (watch->cancellable))
    {
      g_autoptr(GError) error = NULL;
      gboolean got_any = FALSE;

      if (!read_stream (watch, client->endpoints[i % n], &got_any, &error))
        {
          push_error (watch, g_steal_pointer (&error));
          return NULL;
        }
      if (g_cancellable_is_cancelled (watch->cancellable))
        break;
      /* The stream ended (a member stopped, a leader changed): the next
       * member, from the next revision, until the retry time is spent
       * without an answer. */
      if (got_any)
        {
          give_up = 0;
          pause = 0.05;
        }
      if (give_up == 0)
        give_up = g_get_monotonic_time () + (gint64) (client->retry_time * G_USEC_PER_SEC);
      else if (g_get_monotonic_time () > give_up)
        {
          push_error (watch, g_error_new (TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNAVAILABLE,
                                          _("No etcd endpoint keeps the watch open: %s"),
                                          error != NULL ? error->message : "?"));
          return NULL;
        }
      i++;
      if (i % n == 0 && !pause_for (pause, watch->cancellable, NULL))
        break;
      if (i % n == 0)
        pause = MIN (pause * 2, 1.0);
    }
  return NULL;
}

TesseraEtcdWatch *
tessera_etcd_client_watch (TesseraEtcdClient  *self,
                           const char         *key,
                           const char         *range_end,
                           gint64              start_revision,
                           GError            **error)
{
  TesseraEtcdWatch *watch;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), NULL);
  /* Always from a known revision: a watch "from now" that is reopened
   * would lose what came in between. */
  g_return_val_if_fail (start_revision > 0, NULL);

  watch = g_new0 (TesseraEtcdWatch, 1);
  watch->client = g_object_ref (self);
  watch->key = g_strdup (key);
  watch->range_end = g_strdup (range_end);
  watch->cancellable = g_cancellable_new ();
  watch->queue = g_async_queue_new_full ((GDestroyNotify) item_free);
  watch->next_revision = start_revision;
  watch->revision = start_revision > 0 ? start_revision - 1 : 0;
  watch->thread = g_thread_try_new ("tessera-etcd-watch", watch_thread, watch, error);
  if (watch->thread == NULL)
    {
      tessera_etcd_watch_free (watch);
      return NULL;
    }
  return watch;
}

static GPtrArray *
events_of (JsonObject *result, GError **error)
{
  g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
  JsonNode *list = json_object_get_member (result, "events");

  for (guint i = 0; list != NULL && JSON_NODE_HOLDS_ARRAY (list) &&
                    i < json_array_get_length (json_node_get_array (list)); i++)
    {
      JsonNode *node = json_array_get_element (json_node_get_array (list), i);
      JsonObject *kv_object;
      TesseraEtcdEvent *event;
      TesseraEtcdKv *kv;

      if (!JSON_NODE_HOLDS_OBJECT (node) ||
          (kv_object = member_object (json_node_get_object (node), "kv")) == NULL ||
          (kv = kv_from_json (kv_object, error)) == NULL)
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd sent a watch event with no key"));
          return NULL;
        }
      event = g_new0 (TesseraEtcdEvent, 1);
      /* PUT is the default value, so the gateway leaves it out. */
      event->type = g_strcmp0 (member_string (json_node_get_object (node), "type"), "DELETE") == 0
                    ? TESSERA_ETCD_EVENT_DELETE : TESSERA_ETCD_EVENT_PUT;
      event->kv = kv;
      g_ptr_array_add (events, event);
    }
  return g_steal_pointer (&events);
}

/* The caller's cancellable was cancelled: a wake-up (an item with
 * neither message nor error) ends its wait on the queue at once, so
 * closing a store does not wait for the next look. */
static void
wake_watch_reader (GCancellable *cancellable, gpointer queue)
{
  g_async_queue_push (queue, g_new0 (Item, 1));
}

static GPtrArray *watch_next (TesseraEtcdWatch *watch, double timeout, gint64 *revision,
                              GCancellable *cancellable, GError **error);

/* Waits up to @timeout seconds (negative: for ever) for changes. Returns
 * the events of one message (empty when the time ran out), with
 * @revision the revision they bring the view to; NULL with @error when
 * the watch cannot go on (compacted: read again and watch anew). */
GPtrArray *
tessera_etcd_watch_next (TesseraEtcdWatch  *watch,
                         double             timeout,
                         gint64            *revision,
                         GCancellable      *cancellable,
                         GError           **error)
{
  gulong wake = cancellable != NULL ? g_cancellable_connect (cancellable, G_CALLBACK (wake_watch_reader),
                                                             watch->queue, NULL) : 0;
  GPtrArray *events = watch_next (watch, timeout, revision, cancellable, error);

  if (wake != 0)
    g_cancellable_disconnect (cancellable, wake);
  return events;
}

static GPtrArray *
watch_next (TesseraEtcdWatch  *watch,
            double             timeout,
            gint64            *revision,
            GCancellable      *cancellable,
            GError           **error)
{
  gint64 deadline = timeout < 0 ? G_MAXINT64 : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (TRUE)
    {
      Item *item;
      gint64 now = g_get_monotonic_time ();

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (now >= deadline)
        {
          if (revision != NULL)
            *revision = watch->revision;
          return g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
        }
      /* A cancel wakes this at once; the second is a guard only. */
      item = g_async_queue_timeout_pop (watch->queue, MIN (deadline - now, G_USEC_PER_SEC));
      if (item == NULL)
        continue;
      if (item->message == NULL && item->error == NULL)
        {
          item_free (item);   /* a wake-up: look at the cancellable again */
          continue;
        }
      if (item->error != NULL)
        {
          /* The thread has stopped: the error stays for the next call. */
          g_propagate_error (error, g_error_copy (item->error));
          g_async_queue_push_front (watch->queue, item);
          return NULL;
        }
      {
        JsonObject *root = json_node_get_object (item->message);
        JsonObject *result = member_object (root, "result");
        GPtrArray *events;

        if (result == NULL)
          {
            JsonObject *failure = member_object (root, "error");
            const char *text = member_string (failure, "message");

            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_REFUSED,
                         _("etcd ended the watch: %s"), text != NULL ? text : "?");
            item_free (item);
            return NULL;
          }
        if (member_int (result, "compact_revision") > 0)
          {
            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_COMPACTED,
                         _("etcd compacted the revisions this watch needs (up to %" PRId64 ")"),
                         member_int (result, "compact_revision"));
            item_free (item);
            return NULL;
          }
        if (json_object_get_boolean_member_with_default (result, "canceled", FALSE))
          {
            /* Cancelled for another reason (its member lost the leader):
             * the reading thread opens it again elsewhere. */
            item_free (item);
            continue;
          }
        if (!json_object_has_member (result, "events"))
          {
            /* "created", or a progress notice. */
            item_free (item);
            continue;
          }
        events = events_of (result, error);
        if (events == NULL)
          {
            item_free (item);
            return NULL;
          }
        /* A large change comes in fragments: handed out whole. */
        if (watch->pending == NULL)
          watch->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
        while (events->len > 0)
          g_ptr_array_add (watch->pending, g_ptr_array_steal_index (events, 0));
        g_ptr_array_unref (events);
        if (json_object_get_boolean_member_with_default (result, "fragment", FALSE))
          {
            item_free (item);
            continue;
          }
        events = g_steal_pointer (&watch->pending);
        for (guint i = 0; i < events->len; i++)
          watch->revision = MAX (watch->revision,
                                 ((TesseraEtcdEvent *) g_ptr_array_index (events, i))->kv->mod_revision);
        if (revision != NULL)
          *revision = watch->revision;
        item_free (item);
        return events;
      }
    }
}

void
tessera_etcd_watch_free (TesseraEtcdWatch *watch)
{
  if (watch == NULL)
    return;
  g_cancellable_cancel (watch->cancellable);
  if (watch->thread != NULL)
    g_thread_join (watch->thread);
  g_async_queue_unref (watch->queue);
  g_clear_pointer (&watch->pending, g_ptr_array_unref);
  g_object_unref (watch->cancellable);
  g_object_unref (watch->client);
  g_free (watch->key);
  g_free (watch->range_end);
  g_free (watch);
}
