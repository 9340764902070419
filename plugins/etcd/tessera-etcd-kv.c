/* tessera-etcd-kv.c: the etcd client's key-value calls: range reads (paged,
 * at one revision), and puts in transactions that hold only when the pool
 * is as the caller saw it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>
#include <tessera/tessera.h>

/* One page of a range read: at most @limit keys from @key, at @revision
 * (0: the latest). */
static JsonNode *
range_page (TesseraEtcdClient *self, const char *key, gsize key_length, const char *range_end,
            gint64 revision, gint64 limit, gboolean *too_large, GCancellable *cancellable, GError **error)
{
  JsonObject *object;
  g_autoptr(JsonNode) request = _tessera_etcd_new_request_node (&object);
  gboolean doubt = FALSE;

  _tessera_etcd_set_bytes (object, "key", key, key_length);
  if (range_end != NULL)
    _tessera_etcd_set_key (object, "range_end", range_end);
  _tessera_etcd_set_int (object, "limit", limit);
  if (revision > 0)
    _tessera_etcd_set_int (object, "revision", revision);
  return _tessera_etcd_call_full (self, "kv/range", request, &doubt, too_large, cancellable, error);
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
        at = _tessera_etcd_header_revision (answer);
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

          if (!JSON_NODE_HOLDS_OBJECT (item) || (kv = _tessera_etcd_kv_from_json (json_node_get_object (item), error)) == NULL)
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

  _tessera_etcd_set_key (put, "key", key);
  _tessera_etcd_set_bytes (put, "value", data, length);
  if (lease != 0)
    _tessera_etcd_set_int (put, "lease", lease);
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
  g_autoptr(JsonNode) request = _tessera_etcd_object_node (put_operation (key, value, lease));
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  reply = _tessera_etcd_call (self, "kv/put", request, cancellable, error);
  if (reply == NULL)
    return FALSE;
  if (revision != NULL)
    *revision = _tessera_etcd_header_revision (json_node_get_object (reply));
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
  g_autoptr(JsonNode) request = _tessera_etcd_new_request_node (&object);
  g_autoptr(JsonNode) reply = NULL;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), FALSE);

  _tessera_etcd_set_key (object, "key", key);
  if (range_end != NULL)
    _tessera_etcd_set_key (object, "range_end", range_end);
  reply = _tessera_etcd_call (self, "kv/deleterange", request, cancellable, error);
  if (reply == NULL)
    return FALSE;
  if (deleted != NULL)
    *deleted = _tessera_etcd_member_int (json_node_get_object (reply), "deleted");
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
  g_autoptr(JsonNode) request = _tessera_etcd_new_request_node (&object);
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

  reply = _tessera_etcd_call_full (self, "kv/txn", request, &doubt, &too_large, cancellable, error);
  if (reply == NULL)
    return FALSE;
  *succeeded = json_object_get_boolean_member_with_default (json_node_get_object (reply), "succeeded", FALSE);
  if (revision != NULL)
    *revision = _tessera_etcd_header_revision (json_node_get_object (reply));
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
  _tessera_etcd_set_key (compare, "key", prefix);
  _tessera_etcd_set_key (compare, "range_end", end);
  json_object_set_string_member (compare, "target", "MOD");
  json_object_set_string_member (compare, "result", "LESS");
  _tessera_etcd_set_int (compare, "mod_revision", since_revision + 1);
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
  _tessera_etcd_set_key (compare, "key", key);
  json_object_set_string_member (compare, "target", "CREATE");
  json_object_set_string_member (compare, "result", "EQUAL");
  _tessera_etcd_set_int (compare, "create_revision", create_revision);
  return put_if (self, compare, key, value, lease, succeeded, NULL, cancellable, error);
}

