/* tessera-tracked-resource-store.c: what a tracked resource tells of the
 * store its pool lives in: where it is, whether it could be read, and the
 * leases of its holders and of this host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-tracked-dynamic-resource-private.h"

#define VIEW(o) _tessera_tracked_dynamic_resource_get_view (o)
#define STORE(o) _tessera_pool_view_get_store (VIEW (o))
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
  return _tessera_pool_view_is_open (VIEW (self)) ? _tessera_pool_store_dup_location (STORE (self)) : NULL;
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
  left = _tessera_pool_store_get_holder_lease_left (STORE (self), name);
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
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  return VIEW (self) != NULL ? _tessera_pool_store_get_unrenewed (STORE (self)) : 0;
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
  readable = _tessera_pool_store_check_readable (STORE (self), error);
  unlock_thread (self);
  return readable;
}
