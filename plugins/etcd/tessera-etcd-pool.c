/* tessera-etcd-pool.c: a pool's keys in etcd, read and changed at revisions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-pool.h"

#include <glib/gi18n-lib.h>
#include <string.h>

/* TesseraEtcdPool:
 *
 * The data side of the etcd store: what a folder's lock-folder unit is to
 * the folder store. A decision reads the whole pool at one revision
 * (tessera_etcd_pool_read()), lets the resource type judge, then writes
 * the holder's key only if nothing under the pool changed since that
 * revision (tessera_etcd_pool_put_holder(), one transaction: it takes the
 * place of ipc.lock); a refused write means "decide again". Waiting is a
 * watch on the pool from the revision read (tessera_etcd_pool_wait()).
 *
 * Values come from anyone who can write under the prefix, so they are
 * read like a folder's files: a lock file parsed with the depth limit,
 * one that cannot be read counting as holding everything, keys that are
 * not the pool's own shapes ignored.
 *
 * The waiters' queue (core/tessera-wait-queue.c) lives beside the
 * holders: `queue/TASK@ID`, on the waiter's lease, its place in the queue
 * being its create revision (the etcd semaphore recipe), read with the
 * holders at the same revision. An acquire's transaction covers it too:
 * a waiter that enters the queue makes the decisions read before refused. */

struct _TesseraEtcdPool
{
  TesseraEtcdClient *client;
  GType lock_file_type;
  char *key;             /* PREFIX/NAME/ */
  char *jobs_key;        /* PREFIX/NAME/jobs/ */
  char *queue_key;       /* PREFIX/NAME/queue/ */
  char *informations_key;
};

void
tessera_etcd_pool_state_free (TesseraEtcdPoolState *state)
{
  if (state == NULL)
    return;
  g_ptr_array_unref (state->holders);
  g_clear_pointer (&state->queue, g_ptr_array_unref);
  g_clear_pointer (&state->side, g_ptr_array_unref);
  g_clear_pointer (&state->informations, json_node_unref);
  g_clear_error (&state->informations_error);
  g_free (state);
}

static void
holder_free (TesseraEtcdHolder *holder)
{
  g_free (holder->name);
  tessera_etcd_kv_free (holder->kv);
  g_clear_object (&holder->lock_file);
  g_clear_error (&holder->error);
  g_free (holder);
}

/* A resource's name: a plugin-style name, as a folder pool's. */
static gboolean
is_pool_name (const char *name)
{
  if (name == NULL || *name == '\0' || *name == '.' || strlen (name) > 200 || strstr (name, "..") != NULL)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '.' && *p != '-')
      return FALSE;
  return TRUE;
}

/* A holder's name: one name, as a folder's jobs/ takes it (without
 * ".json"). */
gboolean
tessera_etcd_pool_check_holder_name (const char *name, GError **error)
{
  if (name == NULL || *name == '\0' || strchr (name, '/') != NULL || g_str_equal (name, ".") ||
      g_str_equal (name, "..") || strlen (name) > 256 || !g_utf8_validate (name, -1, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("“%s” is not a holder's name (task@identifier, as “tessera status” shows it)"),
                   name != NULL ? name : "");
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_etcd_pool_new:
 * @client: the cluster
 * @prefix: where pools live, starting with "/" (a "/" is added at its end
 *   when missing)
 * @name: the pool's (the resource's) name
 * @lock_file_type: the resource type's lock file type
 *
 * Returns: (transfer full) (nullable): the pool, or %NULL with
 *   %TESSERA_ERROR_INVALID_CONFIGURATION
 */
TesseraEtcdPool *
tessera_etcd_pool_new (TesseraEtcdClient  *client,
                       const char         *prefix,
                       const char         *name,
                       GType               lock_file_type,
                       GError            **error)
{
  TesseraEtcdPool *pool;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (client), NULL);
  g_return_val_if_fail (g_type_is_a (lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) &&
                        !G_TYPE_IS_ABSTRACT (lock_file_type), NULL);
  if (prefix == NULL || prefix[0] != '/' || !g_utf8_validate (prefix, -1, NULL) || strstr (prefix, "/../") != NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not an etcd prefix (a key starting with “/”)"), prefix != NULL ? prefix : "");
      return NULL;
    }
  if (!is_pool_name (name))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a resource name for an etcd pool"), name != NULL ? name : "");
      return NULL;
    }
  pool = g_new0 (TesseraEtcdPool, 1);
  pool->client = g_object_ref (client);
  pool->lock_file_type = lock_file_type;
  pool->key = g_strconcat (prefix, g_str_has_suffix (prefix, "/") ? "" : "/", name, "/", NULL);
  pool->jobs_key = g_strconcat (pool->key, "jobs/", NULL);
  pool->queue_key = g_strconcat (pool->key, "queue/", NULL);
  pool->informations_key = g_strconcat (pool->key, "informations", NULL);
  return pool;
}

void
tessera_etcd_pool_free (TesseraEtcdPool *pool)
{
  if (pool == NULL)
    return;
  g_object_unref (pool->client);
  g_free (pool->key);
  g_free (pool->jobs_key);
  g_free (pool->queue_key);
  g_free (pool->informations_key);
  g_free (pool);
}

const char *
tessera_etcd_pool_get_key (TesseraEtcdPool *pool)
{
  return pool->key;
}

char *
tessera_etcd_pool_dup_holder_key (TesseraEtcdPool *pool, const char *name)
{
  return g_strconcat (pool->jobs_key, name, NULL);
}

static gint
by_create_revision (gconstpointer a, gconstpointer b)
{
  const TesseraEtcdHolder *x = *(TesseraEtcdHolder * const *) a;
  const TesseraEtcdHolder *y = *(TesseraEtcdHolder * const *) b;

  return (x->kv->create_revision > y->kv->create_revision) - (x->kv->create_revision < y->kv->create_revision);
}

static void
read_informations (TesseraEtcdPoolState *state, TesseraEtcdKv *kv)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (kv->value, &length);
  g_autoptr(GError) local = NULL;

  state->informations = tessera_json_parse (data != NULL ? data : "", (gssize) length, &local);
  if (state->informations == NULL)
    g_set_error (&state->informations_error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                 _("%s is not valid JSON: %s"), kv->key, local->message);
}

/* A holder's "since" as nanoseconds since the epoch; 0 when it has none
 * that makes sense (a co-user's value, a year past 9999). */
static gint64
since_of (JsonObject *object)
{
  JsonNode *node = json_object_get_member (object, TESSERA_ETCD_POOL_SINCE);
  double seconds;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      (json_node_get_value_type (node) != G_TYPE_DOUBLE && json_node_get_value_type (node) != G_TYPE_INT64))
    return 0;
  seconds = json_node_get_double (node);
  return seconds > 0 && seconds < 253402300800.0 ? (gint64) (seconds * 1e9) : 0;
}

/* A holder key: the lock file it holds, or none when it cannot be read
 * (it then counts as holding everything, as on a folder), with why: the
 * store says so once per change of the key, not at every read. */
static TesseraEtcdHolder *
read_holder (TesseraEtcdPool *pool, const char *folder_key, TesseraEtcdKv *kv)
{
  TesseraEtcdHolder *holder = g_new0 (TesseraEtcdHolder, 1);
  gsize length = 0;
  const char *data = g_bytes_get_data (kv->value, &length);

  holder->name = g_strdup (kv->key + strlen (folder_key));
  holder->lock_file = tessera_dynamic_lock_file_new_from_data (pool->lock_file_type, kv->key,
                                                               data != NULL ? data : "", (gssize) length,
                                                               &holder->error);
  holder->kv = kv;
  /* Read already, so it is a JSON object within the limits. */
  if (holder->lock_file != NULL)
    {
      g_autoptr(JsonNode) root = tessera_json_parse (data, (gssize) length, NULL);

      if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
        holder->since_ns = since_of (json_node_get_object (root));
    }
  return holder;
}

/* A queue key: its entry as a lock file (one that cannot be read never
 * counts, as on a folder), and whether it reserves. */
static TesseraEtcdHolder *
read_queue_entry (TesseraEtcdPool *pool, TesseraEtcdKv *kv)
{
  TesseraEtcdHolder *entry = read_holder (pool, pool->queue_key, kv);
  gsize length = 0;
  const char *data = g_bytes_get_data (kv->value, &length);
  g_autoptr(JsonNode) root = NULL;

  if (entry->lock_file != NULL)
    root = tessera_json_parse (data != NULL ? data : "", (gssize) length, NULL);
  if (root != NULL && JSON_NODE_HOLDS_OBJECT (root))
    entry->reserve = json_object_get_boolean_member_with_default (json_node_get_object (root), "reserve", FALSE);
  return entry;
}

/* A side entry's key below the pool's: `KIND/NAME`, KIND a short
 * lower-case word that is not one of the pool's own, NAME one name. */
static gboolean
is_side_key (const char *rest)
{
  const char *slash = strchr (rest, '/');

  if (slash == NULL || slash == rest || slash - rest > 32 ||
      (slash - rest == 4 && (strncmp (rest, "jobs", 4) == 0)) ||
      (slash - rest == 5 && strncmp (rest, "queue", 5) == 0))
    return FALSE;
  for (const char *p = rest; p < slash; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '_' && *p != '-')
      return FALSE;
  return tessera_etcd_pool_check_holder_name (slash + 1, NULL);
}

/**
 * tessera_etcd_pool_read:
 *
 * Reads every key of the pool at one revision.
 *
 * Returns: (transfer full) (nullable): the pool's state, or %NULL with
 *   @error when etcd cannot be read
 */
TesseraEtcdPoolState *
tessera_etcd_pool_read (TesseraEtcdPool  *pool,
                        GCancellable     *cancellable,
                        GError          **error)
{
  g_autofree char *end = tessera_etcd_prefix_end (pool->key);
  g_autoptr(GPtrArray) kvs = NULL;
  g_autoptr(TesseraEtcdPoolState) state = g_new0 (TesseraEtcdPoolState, 1);

  state->holders = g_ptr_array_new_with_free_func ((GDestroyNotify) holder_free);
  state->queue = g_ptr_array_new_with_free_func ((GDestroyNotify) holder_free);
  state->side = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_kv_free);
  if (!tessera_etcd_client_range (pool->client, pool->key, end, &state->revision, &kvs, cancellable, error))
    return NULL;
  for (guint i = 0; i < kvs->len; i++)
    {
      TesseraEtcdKv *kv = g_ptr_array_index (kvs, i);

      if (g_str_equal (kv->key, pool->informations_key))
        read_informations (state, kv);
      else if (g_str_has_prefix (kv->key, pool->jobs_key) &&
               tessera_etcd_pool_check_holder_name (kv->key + strlen (pool->jobs_key), NULL))
        g_ptr_array_add (state->holders, read_holder (pool, pool->jobs_key,
                                                      g_steal_pointer (&g_ptr_array_index (kvs, i))));
      else if (g_str_has_prefix (kv->key, pool->queue_key) &&
               tessera_etcd_pool_check_holder_name (kv->key + strlen (pool->queue_key), NULL))
        g_ptr_array_add (state->queue, read_queue_entry (pool, g_steal_pointer (&g_ptr_array_index (kvs, i))));
      else if (is_side_key (kv->key + strlen (pool->key)))
        g_ptr_array_add (state->side, g_steal_pointer (&g_ptr_array_index (kvs, i)));
      else
        g_debug ("Ignoring %s: not a key of pool %s", kv->key, pool->key);
    }
  g_ptr_array_sort (state->holders, by_create_revision);
  g_ptr_array_sort (state->queue, by_create_revision);
  return g_steal_pointer (&state);
}

/* A holder key's value: the lock file's JSON, as on a folder, and since
 * when it holds (its mtime, when known). */
static GBytes *
holder_value (TesseraDynamicLockFile *lock_file)
{
  g_autoptr(JsonNode) json = tessera_dynamic_lock_file_to_json (lock_file);
  gint64 since_ns = tessera_dynamic_lock_file_get_mtime (lock_file);
  char *text;

  if (since_ns > 0 && JSON_NODE_HOLDS_OBJECT (json))
    json_object_set_double_member (json_node_get_object (json), TESSERA_ETCD_POOL_SINCE,
                                   (double) (since_ns / 1000000) / 1000);
  text = json_to_string (json, FALSE);
  return g_bytes_new_take (text, strlen (text));
}

/**
 * tessera_etcd_pool_put_holder:
 * @since_revision: the revision the decision was made on
 * @succeeded: (out): whether it was written; %FALSE when anything under
 *   the pool changed since @since_revision (decide again)
 * @revision: (out) (optional): when written, the revision of the write:
 *   the holder key's create revision
 *
 * Writes the holder @name on @lease, in one transaction conditioned on
 * the pool being as read.
 *
 * Returns: %FALSE with @error when etcd could not be asked
 */
gboolean
tessera_etcd_pool_put_holder (TesseraEtcdPool        *pool,
                              gint64                  since_revision,
                              const char             *name,
                              TesseraDynamicLockFile *lock_file,
                              gint64                  lease,
                              gboolean               *succeeded,
                              gint64                 *revision,
                              GCancellable           *cancellable,
                              GError                **error)
{
  g_autofree char *key = NULL;
  g_autoptr(GBytes) value = NULL;

  if (!tessera_etcd_pool_check_holder_name (name, error))
    return FALSE;
  key = tessera_etcd_pool_dup_holder_key (pool, name);
  value = holder_value (lock_file);
  return tessera_etcd_client_put_if_unchanged (pool->client, pool->key, since_revision, key, value, lease,
                                               succeeded, revision, cancellable, error);
}

/**
 * tessera_etcd_pool_update_holder:
 * @create_revision: when the holder's key was created, as read
 * @succeeded: (out): whether it was written; %FALSE when the key is gone
 *   (or was made again) since
 *
 * Replaces the holder @name on @lease, only if it is still the key read.
 *
 * Returns: %FALSE with @error when etcd could not be asked
 */
gboolean
tessera_etcd_pool_update_holder (TesseraEtcdPool        *pool,
                                 const char             *name,
                                 gint64                  create_revision,
                                 TesseraDynamicLockFile *lock_file,
                                 gint64                  lease,
                                 gboolean               *succeeded,
                                 GCancellable           *cancellable,
                                 GError                **error)
{
  g_autofree char *key = NULL;
  g_autoptr(GBytes) value = NULL;

  if (!tessera_etcd_pool_check_holder_name (name, error))
    return FALSE;
  key = tessera_etcd_pool_dup_holder_key (pool, name);
  value = holder_value (lock_file);
  return tessera_etcd_client_put_if_created (pool->client, key, create_revision, value, lease, succeeded,
                                             cancellable, error);
}

gboolean
tessera_etcd_pool_delete_holder (TesseraEtcdPool  *pool,
                                 const char       *name,
                                 GCancellable     *cancellable,
                                 GError          **error)
{
  g_autofree char *key = NULL;

  if (!tessera_etcd_pool_check_holder_name (name, error))
    return FALSE;
  key = tessera_etcd_pool_dup_holder_key (pool, name);
  return tessera_etcd_client_delete (pool->client, key, NULL, NULL, cancellable, error);
}

char *
tessera_etcd_pool_dup_queue_key (TesseraEtcdPool *pool, const char *name)
{
  return g_strconcat (pool->queue_key, name, NULL);
}

/**
 * tessera_etcd_pool_put_queue_entry:
 * @name: the waiter's (TASK@ID)
 * @text: its entry's JSON
 * @revision: (out): the revision of the write: the entry's place when
 *   it is new
 *
 * Writes the queue entry @name on @lease.
 *
 * Returns: %FALSE with @error when etcd could not be asked
 */
gboolean
tessera_etcd_pool_put_queue_entry (TesseraEtcdPool  *pool,
                                   const char       *name,
                                   const char       *text,
                                   gint64            lease,
                                   gint64           *revision,
                                   GCancellable     *cancellable,
                                   GError          **error)
{
  g_autofree char *key = NULL;
  g_autoptr(GBytes) value = NULL;

  if (!tessera_etcd_pool_check_holder_name (name, error))
    return FALSE;
  key = tessera_etcd_pool_dup_queue_key (pool, name);
  value = g_bytes_new (text, strlen (text));
  return tessera_etcd_client_put (pool->client, key, value, lease, revision, cancellable, error);
}

/* Deletes the queue entry at @key, only one of the pool's queue. */
gboolean
tessera_etcd_pool_delete_queue_entry (TesseraEtcdPool  *pool,
                                      const char       *key,
                                      GCancellable     *cancellable,
                                      GError          **error)
{
  if (!g_str_has_prefix (key, pool->queue_key) ||
      !tessera_etcd_pool_check_holder_name (key + strlen (pool->queue_key), NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME, _("“%s” is not a queue entry of %s"), key,
                   pool->key);
      return FALSE;
    }
  return tessera_etcd_client_delete (pool->client, key, NULL, NULL, cancellable, error);
}

char *
tessera_etcd_pool_dup_side_key (TesseraEtcdPool *pool, const char *kind, const char *name)
{
  return g_strconcat (pool->key, kind, "/", name, NULL);
}

/**
 * tessera_etcd_pool_put_side_entry:
 * @kind: the entry's kind (the mutex's "intents")
 * @name: its name (TASK@ID)
 * @text: its JSON
 *
 * Writes the side entry @name of @kind on @lease, at once.
 *
 * Returns: %FALSE with @error when etcd could not be asked
 */
gboolean
tessera_etcd_pool_put_side_entry (TesseraEtcdPool  *pool,
                                  const char       *kind,
                                  const char       *name,
                                  const char       *text,
                                  gint64            lease,
                                  GCancellable     *cancellable,
                                  GError          **error)
{
  g_autofree char *key = tessera_etcd_pool_dup_side_key (pool, kind, name);
  g_autoptr(GBytes) value = NULL;

  if (!is_side_key (key + strlen (pool->key)))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME, _("“%s” is not a side entry of %s"), key,
                   pool->key);
      return FALSE;
    }
  value = g_bytes_new (text, strlen (text));
  return tessera_etcd_client_put (pool->client, key, value, lease, NULL, cancellable, error);
}

/* Deletes the side entry at @key, only one of the pool's. */
gboolean
tessera_etcd_pool_delete_side_key (TesseraEtcdPool  *pool,
                                   const char       *key,
                                   GCancellable     *cancellable,
                                   GError          **error)
{
  if (!g_str_has_prefix (key, pool->key) || !is_side_key (key + strlen (pool->key)))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME, _("“%s” is not a side entry of %s"), key,
                   pool->key);
      return FALSE;
    }
  return tessera_etcd_client_delete (pool->client, key, NULL, NULL, cancellable, error);
}

gboolean
tessera_etcd_pool_put_informations (TesseraEtcdPool  *pool,
                                    JsonNode         *informations,
                                    GCancellable     *cancellable,
                                    GError          **error)
{
  g_autofree char *text = json_to_string (informations, FALSE);
  g_autoptr(GBytes) value = g_bytes_new (text, strlen (text));

  return tessera_etcd_client_put (pool->client, pool->informations_key, value, 0, NULL, cancellable, error);
}

/**
 * tessera_etcd_pool_wait:
 * @revision: the revision last read
 * @timeout: seconds, negative for ever
 * @changed: (out): whether anything under the pool changed after @revision
 *
 * Waits for a change under the pool after @revision (one that came
 * between the read and this call counts at once).
 *
 * Returns: %FALSE with @error when the watch could not go on
 */
gboolean
tessera_etcd_pool_wait (TesseraEtcdPool  *pool,
                        gint64            revision,
                        double            timeout,
                        gboolean         *changed,
                        GCancellable     *cancellable,
                        GError          **error)
{
  g_autofree char *end = tessera_etcd_prefix_end (pool->key);
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;

  *changed = FALSE;
  watch = tessera_etcd_client_watch (pool->client, pool->key, end, revision + 1, error);
  if (watch == NULL)
    return FALSE;
  events = tessera_etcd_watch_next (watch, timeout, NULL, cancellable, error);
  if (events == NULL)
    return FALSE;
  *changed = events->len > 0;
  return TRUE;
}
