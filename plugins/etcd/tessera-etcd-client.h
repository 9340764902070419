/* tessera-etcd-client.h: a small client of etcd's JSON gateway (v3 API)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One key as etcd returns it. */
typedef struct
{
  char *key;
  GBytes *value;
  gint64 create_revision;
  gint64 mod_revision;
  gint64 version;
  gint64 lease;
} TesseraEtcdKv;

void tessera_etcd_kv_free (TesseraEtcdKv *kv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraEtcdKv, tessera_etcd_kv_free)

typedef enum
{
  TESSERA_ETCD_EVENT_PUT,
  TESSERA_ETCD_EVENT_DELETE,
} TesseraEtcdEventType;

typedef struct
{
  TesseraEtcdEventType type;
  TesseraEtcdKv *kv;
} TesseraEtcdEvent;

void tessera_etcd_event_free (TesseraEtcdEvent *event);

#define TESSERA_ETCD_ERROR (tessera_etcd_error_quark ())
GQuark tessera_etcd_error_quark (void);

typedef enum
{
  TESSERA_ETCD_ERROR_UNAVAILABLE,    /* a member said it cannot serve (no leader); a call that no
                                      * member answered is TESSERA_ERROR_STORE_UNREACHABLE */
  TESSERA_ETCD_ERROR_REFUSED,        /* etcd answered with an error */
  TESSERA_ETCD_ERROR_BAD_REPLY,      /* a reply that is not what the API says */
  TESSERA_ETCD_ERROR_COMPACTED,      /* a watch asked for a revision etcd has compacted */
  TESSERA_ETCD_ERROR_LEASE_NOT_FOUND,
  TESSERA_ETCD_ERROR_UNTRUSTED,      /* TLS: a member's certificate, or ours, is not accepted */
} TesseraEtcdError;

#define TESSERA_TYPE_ETCD_CLIENT (tessera_etcd_client_get_type ())
G_DECLARE_FINAL_TYPE (TesseraEtcdClient, tessera_etcd_client, TESSERA, ETCD_CLIENT, GObject)

TesseraEtcdClient *tessera_etcd_client_new        (const char * const *endpoints,
                                                   GError            **error);
void               tessera_etcd_client_set_auth   (TesseraEtcdClient  *self,
                                                   const char         *user,
                                                   const char         *password);
gboolean           tessera_etcd_client_set_tls    (TesseraEtcdClient  *self,
                                                   const char         *ca_file,
                                                   const char         *cert_file,
                                                   const char         *key_file,
                                                   GError            **error);
void               tessera_etcd_client_set_retry_time (TesseraEtcdClient *self,
                                                       double             seconds);
void               tessera_etcd_client_set_request_timeout (TesseraEtcdClient *self,
                                                            guint              seconds);
guint              tessera_etcd_client_get_request_timeout (TesseraEtcdClient *self);
void               tessera_etcd_client_start_anywhere (TesseraEtcdClient *self);
guint              tessera_etcd_client_get_n_endpoints (TesseraEtcdClient *self);

char              *tessera_etcd_prefix_end        (const char         *prefix);

gboolean           tessera_etcd_client_range      (TesseraEtcdClient  *self,
                                                   const char         *key,
                                                   const char         *range_end,
                                                   gint64             *revision,
                                                   GPtrArray         **kvs,
                                                   GCancellable       *cancellable,
                                                   GError            **error);
gboolean           tessera_etcd_client_put        (TesseraEtcdClient  *self,
                                                   const char         *key,
                                                   GBytes             *value,
                                                   gint64              lease,
                                                   gint64             *revision,
                                                   GCancellable       *cancellable,
                                                   GError            **error);
gboolean           tessera_etcd_client_delete     (TesseraEtcdClient  *self,
                                                   const char         *key,
                                                   const char         *range_end,
                                                   gint64             *deleted,
                                                   GCancellable       *cancellable,
                                                   GError            **error);
gboolean           tessera_etcd_client_put_if_unchanged (TesseraEtcdClient *self,
                                                         const char        *prefix,
                                                         gint64             since_revision,
                                                         const char        *key,
                                                         GBytes            *value,
                                                         gint64             lease,
                                                         gboolean          *succeeded,
                                                         gint64            *revision,
                                                         GCancellable      *cancellable,
                                                         GError           **error);

gboolean           tessera_etcd_client_put_if_created (TesseraEtcdClient *self,
                                                       const char        *key,
                                                       gint64             create_revision,
                                                       GBytes            *value,
                                                       gint64             lease,
                                                       gboolean          *succeeded,
                                                       GCancellable      *cancellable,
                                                       GError           **error);

gint64             tessera_etcd_client_lease_grant     (TesseraEtcdClient *self,
                                                        gint64             ttl,
                                                        GCancellable      *cancellable,
                                                        GError           **error);
gboolean           tessera_etcd_client_lease_keepalive (TesseraEtcdClient *self,
                                                        gint64             lease,
                                                        gint64            *ttl,
                                                        GCancellable      *cancellable,
                                                        GError           **error);
gboolean           tessera_etcd_client_lease_time_to_live (TesseraEtcdClient *self,
                                                           gint64             lease,
                                                           gint64            *ttl,
                                                           GCancellable      *cancellable,
                                                           GError           **error);
gboolean           tessera_etcd_client_lease_revoke    (TesseraEtcdClient *self,
                                                        gint64             lease,
                                                        GCancellable      *cancellable,
                                                        GError           **error);

typedef struct _TesseraEtcdWatch TesseraEtcdWatch;

TesseraEtcdWatch  *tessera_etcd_client_watch      (TesseraEtcdClient  *self,
                                                   const char         *key,
                                                   const char         *range_end,
                                                   gint64              start_revision,
                                                   GError            **error);
GPtrArray         *tessera_etcd_watch_next        (TesseraEtcdWatch   *watch,
                                                   double              timeout,
                                                   gint64             *revision,
                                                   GCancellable       *cancellable,
                                                   GError            **error);
void               tessera_etcd_watch_free        (TesseraEtcdWatch   *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraEtcdWatch, tessera_etcd_watch_free)

G_END_DECLS
