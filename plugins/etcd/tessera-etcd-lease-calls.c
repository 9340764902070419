/* tessera-etcd-lease-calls.c: the etcd client's lease calls: grant, keep alive
 * (one message of the streaming call), time to live, revoke.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>
#include <tessera/tessera.h>

/* The lease calls: one number in, a JSON object out. */
static JsonNode *
call_with_int (TesseraEtcdClient *self, const char *method, const char *member, gint64 value,
               GCancellable *cancellable, GError **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = _tessera_etcd_new_request_node (&object);

  _tessera_etcd_set_int (object, member, value);
  return _tessera_etcd_call (self, method, request, cancellable, error);
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
  id = _tessera_etcd_member_int (json_node_get_object (reply), "ID");
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
  result = _tessera_etcd_member_object (json_node_get_object (reply), "result");
  left = _tessera_etcd_member_int (result != NULL ? result : json_node_get_object (reply), "TTL");
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
  *ttl = _tessera_etcd_member_int (json_node_get_object (reply), "TTL");
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

