/* tessera-etcd-client-private.h: what the etcd client's files share (its
 * instance, its limits, the transport and the JSON helpers); never
 * installed, never included outside plugins/etcd/.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <libsoup/soup.h>

#include "tessera-etcd-client.h"

G_BEGIN_DECLS

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

  char *cluster;          /* the endpoints joined by "," (tessera-etcd-members.c) */

  GMutex mutex;           /* current, tls_checked, token */
  guint current;          /* the endpoint that answered last */
  gboolean *tls_checked;  /* per endpoint: its handshake without a certificate was tried */
  char *user;
  char *password;
  char *token;
};


/* What this host learnt of the members (tessera-etcd-members.c): those
 * that missed a deadline lately, shared by the process's clients and by
 * the host's processes, and where a new client starts. */
gboolean         _tessera_etcd_members_is_missed      (const char *endpoint);
void             _tessera_etcd_members_note_missed    (const char *endpoint);
void             _tessera_etcd_members_note_answered  (const char *cluster, guint i, const char *endpoint);
int              _tessera_etcd_members_last_answered  (const char *cluster);

/* Small helpers: JSON members as the gateway writes them. */
gint64           _tessera_etcd_member_int         (JsonObject *object, const char *name);
const char      *_tessera_etcd_member_string      (JsonObject *object, const char *name);
JsonObject      *_tessera_etcd_member_object      (JsonObject *object, const char *name);
void             _tessera_etcd_set_bytes          (JsonObject *object, const char *member, const void *data,
                                                   gsize length);
void             _tessera_etcd_set_key            (JsonObject *object, const char *member, const char *key);
void             _tessera_etcd_set_int            (JsonObject *object, const char *member, gint64 value);
TesseraEtcdKv   *_tessera_etcd_kv_from_json       (JsonObject *object, GError **error);
JsonNode        *_tessera_etcd_object_node        (JsonObject *object);
JsonNode        *_tessera_etcd_new_request_node   (JsonObject **object);
gint64           _tessera_etcd_header_revision    (JsonObject *reply);

/* The transport (tessera-etcd-client.c): one request, riding out members
 * that do not answer. */
SoupMessage     *_tessera_etcd_new_request        (TesseraEtcdClient *self, const char *endpoint, const char *method,
                                                   const char *body, const char *token);
gboolean         _tessera_etcd_pause_for          (double seconds, GCancellable *cancellable, GError **error);
char            *_tessera_etcd_dup_token          (TesseraEtcdClient *self, GCancellable *cancellable,
                                                   GError **error);
JsonNode        *_tessera_etcd_call_full          (TesseraEtcdClient *self, const char *method, JsonNode *request,
                                                   gboolean *doubt, gboolean *too_large, GCancellable *cancellable,
                                                   GError **error);
JsonNode        *_tessera_etcd_call               (TesseraEtcdClient *self, const char *method, JsonNode *request,
                                                   GCancellable *cancellable, GError **error);

G_END_DECLS
