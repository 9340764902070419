/* tessera-tracked-resource-store.c: what a tracked resource tells of the
 * store its pool lives in: where it is, whether it could be read, and the
 * leases of its holders and of this host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"
#include "tessera-tracked-dynamic-resource-private.h"

#include <string.h>

#define VIEW(o) _tessera_tracked_dynamic_resource_get_view (o)
#define STORE(o) _tessera_pool_view_get_store (VIEW (o))
#define STORE_CLASS(o) (STORE (o)->klass)
/* The holders the store has read, and what they are called on. */
#define HOLDERS(o) (STORE (o)->klass->holders)
#define TABLE(o) (STORE (o)->holder_table)
#define lock_thread(o) _tessera_pool_view_lock_thread (VIEW (o))
#define unlock_thread(o) _tessera_pool_view_unlock_thread (VIEW (o))

/**
 * tessera_tracked_dynamic_resource_dup_location:
 * @self: a tracked resource
 *
 * Where the pool lives, for people: its lock folder
 * ([property@Tessera.TrackedDynamicResource:path]) on a folder, its key
 * on etcd (`PREFIX/NAME/`: the local path holds nothing of it).
 * Callable from any thread.
 *
 * Returns: (transfer full) (nullable): the pool's location, or %NULL when
 *   @self could not be opened
 */
char *
tessera_tracked_dynamic_resource_dup_location (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return _tessera_pool_view_is_open (VIEW (self)) ? STORE_CLASS (self)->dup_location (STORE (self)) : NULL;
}

/**
 * tessera_tracked_dynamic_resource_get_holder_lease_left:
 * @self: a tracked resource
 * @lock_file: one of its holders, from
 *   [method@Tessera.TrackedDynamicResource.list_lock_files]
 *
 * On a store whose holders live on leases (etcd), the seconds the lease
 * of @lock_file's holder has left before the store drops it, unless its
 * process renews it: asked of the store now (it may wait for it).
 *
 * Returns: seconds, or -1 when the holder has no lease of its own (a
 *   folder pool), is gone, or the store cannot say
 */
double
tessera_tracked_dynamic_resource_get_holder_lease_left (TesseraTrackedDynamicResource *self,
                                                        TesseraDynamicLockFile        *lock_file)
{
  g_autofree char *name = NULL;
  double left;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), -1);
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (lock_file), -1);
  if (!_tessera_pool_view_is_open (VIEW (self)) || tessera_dynamic_lock_file_get_path (lock_file) == NULL)
    return -1;
  name = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
  lock_thread (self);
  left = STORE_CLASS (self)->get_holder_lease_left (STORE (self), name);
  unlock_thread (self);
  return left;
}

/**
 * tessera_tracked_dynamic_resource_get_lease_unrenewed:
 * @self: a tracked resource
 *
 * On a lease pool ([property@Tessera.TrackedDynamicResource:host-lease]),
 * how long this process has held something in @self without renewing its
 * host's heartbeat. Once that nears the lease, other hosts may take this
 * host's holdings for dead: whoever uses them should stop first (as
 * `tessera run` ends its command). Callable from any thread.
 *
 * Returns: seconds since the last renewal while holding; 0 when @self is
 *   no lease pool or this process holds nothing in it
 */
double
tessera_tracked_dynamic_resource_get_lease_unrenewed (TesseraTrackedDynamicResource *self)
{
  TesseraPoolStore *store;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  store = VIEW (self) != NULL ? STORE (self) : NULL;
  return store != NULL && store->proof != NULL ? store->klass->liveness->get_unrenewed (store->proof) : 0;
}

/**
 * tessera_tracked_dynamic_resource_check_readable:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Whether every holder of the pool could be read when it was last seen,
 * for a tool that only looks (`tessera status`): %FALSE with the error an
 * acquire would fail with when not — its `jobs/` is not a folder (a
 * planted link), or could not be listed — since holders may then hold
 * what looks free. It looks only: it writes nothing to the pool. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 *
 * Returns: %TRUE when every holder could be read; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_check_readable (TesseraTrackedDynamicResource  *self,
                                                 GError                        **error)
{
  gboolean readable;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  lock_thread (self);
  /* Without a check of its own, the store's usable check writes nothing. */
  readable = HOLDERS (self)->check_readable != NULL ? HOLDERS (self)->check_readable (TABLE (self), error)
                                                    : HOLDERS (self)->check_usable (TABLE (self), error);
  unlock_thread (self);
  return readable;
}

/* A side entry's kind: a short lower-case word that is none of the
 * pool's own (jobs/, queue/); its name: one name (a holder's, without
 * ".json"). */
static gboolean
check_side_entry (const char *kind, const char *name, GError **error)
{
  gboolean good_kind = kind != NULL && *kind != '\0' && strlen (kind) <= 32 && !g_str_equal (kind, _TESSERA_POOL_JOBS) &&
                       !g_str_equal (kind, _TESSERA_POOL_QUEUE);
  gboolean good_name = name == NULL || (*name != '\0' && strchr (name, '/') == NULL && !g_str_equal (name, ".") &&
                                        !g_str_equal (name, "..") && strlen (name) <= 256 &&
                                        g_utf8_validate (name, -1, NULL));

  for (const char *p = kind; good_kind && *p != '\0'; p++)
    good_kind = g_ascii_islower (*p) || g_ascii_isdigit (*p) || *p == '_' || *p == '-';
  if (good_kind && good_name)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME, _("“%s/%s” is not a side entry's name"),
               kind != NULL ? kind : "", name != NULL ? name : "");
  return FALSE;
}

/**
 * tessera_tracked_dynamic_resource_keeps_side_entries:
 * @self: a tracked resource
 *
 * Whether the store @self's pool lives in keeps side entries: small JSON
 * texts a resource type keeps in the pool beside its holders, which every
 * process of the pool sees, on every host, and which live no longer than
 * the process that wrote them (the mutex's intents). The etcd store keeps
 * them under the pool's key, on the process's lease; the folder store
 * keeps none, and a type keeps such files in its lock folder
 * ([method@Tessera.TrackedDynamicResource.get_lock_folder]), as the mutex
 * keeps `intents/`. Callable from any thread.
 *
 * Returns: %TRUE when [method@Tessera.TrackedDynamicResource.list_side_entries]
 *   and its kin may be used
 */
gboolean
tessera_tracked_dynamic_resource_keeps_side_entries (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  return VIEW (self) != NULL && _tessera_pool_view_is_open (VIEW (self)) &&
         STORE_CLASS (self)->side_list != NULL;
}

/**
 * tessera_tracked_dynamic_resource_list_side_entries:
 * @self: a tracked resource whose store keeps side entries
 *   ([method@Tessera.TrackedDynamicResource.keeps_side_entries])
 * @kind: the entries' kind (a short lower-case word, the type's own:
 *   "intents")
 *
 * The side entries of @kind as the pool was last read, read at the same
 * time as its holders: what another process wrote, as it wrote it (read
 * it as a hostile co-user's text). Call it from the type's virtual
 * functions, the thread lock held
 * ([vfunc@Tessera.TrackedDynamicResource.is_available]); it does not
 * block.
 *
 * Returns: (transfer full) (element-type utf8 utf8): each entry's name
 *   and text; empty when there are none, or when the store keeps none
 */
GHashTable *
tessera_tracked_dynamic_resource_list_side_entries (TesseraTrackedDynamicResource *self,
                                                    const char                    *kind)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self) || !check_side_entry (kind, NULL, NULL))
    return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return STORE_CLASS (self)->side_list (STORE (self), kind);
}

/**
 * tessera_tracked_dynamic_resource_put_side_entry:
 * @self: a tracked resource whose store keeps side entries
 * @kind: the entry's kind
 * @name: its name (one name: a holder's, `task@identifier`)
 * @text: its text, JSON
 * @error: return location for a #GError
 *
 * Writes side entry @name of @kind, at once: every process of the pool
 * sees it from its next decision, and a decision of another process made
 * on the pool as it was before is made again. It lives no longer than
 * this process (on etcd, it is on the process's lease). Write it only
 * when it changes: every write wakes every waiter of the pool. Call it
 * from the type's virtual functions, the thread lock held; it waits for
 * the store.
 *
 * Returns: %TRUE when written; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_put_side_entry (TesseraTrackedDynamicResource  *self,
                                                 const char                     *kind,
                                                 const char                     *name,
                                                 const char                     *text,
                                                 GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  if (!check_side_entry (kind, name, error))
    return FALSE;
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("The pool of %s keeps no side entries"),
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)));
      return FALSE;
    }
  return STORE_CLASS (self)->side_put (STORE (self), kind, name, text, error);
}

/**
 * tessera_tracked_dynamic_resource_delete_side_entry:
 * @self: a tracked resource whose store keeps side entries
 * @kind: the entry's kind
 * @name: its name
 * @error: return location for a #GError
 *
 * Deletes side entry @name of @kind; one already gone is no error. From
 * the type's virtual functions during a decision (the thread lock held),
 * it is done once the decision's grant is written, after it, so that
 * what the entry keeps out stays out until the new holder counts (the
 * mutex's intent, dropped by its
 * [vfunc@Tessera.TrackedDynamicResource.do_acquire]), and not at all
 * when no grant is written; from elsewhere (a request given up: no lock
 * held), at once. Callable from any thread.
 *
 * Returns: %TRUE when deleted, or to be; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_delete_side_entry (TesseraTrackedDynamicResource  *self,
                                                    const char                     *kind,
                                                    const char                     *name,
                                                    GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  if (!check_side_entry (kind, name, error))
    return FALSE;
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self))
    return TRUE;
  return STORE_CLASS (self)->side_delete (STORE (self), kind, name, error);
}
