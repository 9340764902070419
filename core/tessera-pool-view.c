/* tessera-pool-view.c: one process's view of a pool, kept current
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The view owns the thread lock and the store the pool lives in, and
 * takes the locks of every decision in one order (the store's exclusion
 * between processes, then the thread lock); calls go one way (see
 * docs/design.md):
 *
 *   pool view -> folder store -> lock file cache, folder monitor,
 *                                holder monitor, resource informations
 *
 * The store calls the resource type's class (its accounting and
 * informations.json) and the view's thread lock, which the store's
 * poller-thread sources take through a TesseraPoolStoreHost; letting go
 * of the thread lock logs the resource's audited reclaims. */
#include "tessera-dynamic-resource-private.h"
#include "tessera-pool-view-private.h"
#include "tessera-private.h"
#include "tessera-tracked-dynamic-resource-private.h"

struct _TesseraPoolView
{
  TesseraDynamicResource *owner;   /* not referenced: it owns the view */

  GMutex lock;                     /* the seed's thread lock */
  gboolean refresh_changed;        /* a refresh changed it: wake this process's waiters */
  gboolean opened;

  TesseraPoolStore *store;
};

static void
host_lock_thread (gpointer view)
{
  _tessera_pool_view_lock_thread (view);
}

static void
host_unlock_thread (gpointer view)
{
  _tessera_pool_view_unlock_thread (view);
}

static void
host_notify (gpointer view)
{
  tessera_dynamic_resource_notify_changed (((TesseraPoolView *) view)->owner);
}

static const TesseraPoolStoreHost view_host = { host_lock_thread, host_unlock_thread, host_notify };

TesseraPoolView *
_tessera_pool_view_new (TesseraDynamicResource *owner)
{
  TesseraPoolView *view = g_new0 (TesseraPoolView, 1);

  view->owner = owner;
  g_mutex_init (&view->lock);
  view->store = _tessera_pool_store_folder_new (owner, &view_host, view);
  return view;
}

void
_tessera_pool_view_free (TesseraPoolView *view)
{
  view->store->klass->free (view->store);
  g_mutex_clear (&view->lock);
  g_free (view);
}

void
_tessera_pool_view_stop (TesseraPoolView *view)
{
  g_mutex_lock (&view->lock);
  view->store->klass->stop (view->store);
  g_mutex_unlock (&view->lock);
}

/* ---------------------------------------------------------------------- */
/* The two locks */

void
_tessera_pool_view_lock_thread (TesseraPoolView *view)
{
  g_object_freeze_notify (G_OBJECT (view->owner));
  g_mutex_lock (&view->lock);
}

void
_tessera_pool_view_unlock_thread (TesseraPoolView *view)
{
  g_mutex_unlock (&view->lock);
  g_object_thaw_notify (G_OBJECT (view->owner));
  /* What waited for the locks to go: the audit lines of the reclaims
   * made under them. */
  _tessera_tracked_dynamic_resource_log_reclaims (TESSERA_TRACKED_DYNAMIC_RESOURCE (view->owner));
}

/* The store's exclusion then the thread lock, in that order, always: a
 * peer that keeps ipc.lock must not keep the poller's thread (which needs
 * only the thread lock) from serving this process's other resources. */
int
_tessera_pool_view_lock (TesseraPoolView *view, GError **error)
{
  int fd = view->store->klass->begin (view->store, error);

  if (fd >= 0)
    _tessera_pool_view_lock_thread (view);
  return fd;
}

void
_tessera_pool_view_unlock (TesseraPoolView *view, int fd)
{
  gboolean changed = view->refresh_changed;

  view->refresh_changed = FALSE;
  view->store->klass->end (view->store, fd);
  _tessera_pool_view_unlock_thread (view);
  if (changed)
    tessera_dynamic_resource_notify_changed (view->owner);
}

void
_tessera_pool_view_mark_changed (TesseraPoolView *view)
{
  view->refresh_changed = TRUE;
}

void
_tessera_pool_view_force_scan (TesseraPoolView *view)
{
  view->store->klass->force_scan (view->store);
}

/* ---------------------------------------------------------------------- */
/* Opening and refreshing */

/* The store the settings name, in place of the folder store the view was
 * made with (not opened yet: nothing was touched). */
static gboolean
choose_store (TesseraPoolView *view, const TesseraPoolStoreSettings *settings, GError **error)
{
  const TesseraPoolStoreClass *klass = view->store->klass;
  TesseraPoolStore *store;

  if (_tessera_pool_store_settings_elsewhere (settings))
    klass = _tessera_pool_store_lookup (settings->store, error);
  if (klass == NULL || !_tessera_pool_store_settings_check (settings, klass, error))
    return FALSE;
  if (klass == view->store->klass)
    return TRUE;
  store = klass->create (view->owner, &view_host, view, settings, error);
  if (store == NULL)
    return FALSE;
  store->lock_file_type = view->store->lock_file_type;
  store->read_only = view->store->read_only;
  store->min_age = view->store->min_age;
  store->host_lease = view->store->host_lease;
  store->name = view->store->name;
  view->store->klass->free (view->store);
  view->store = store;
  return TRUE;
}

gboolean
_tessera_pool_view_open (TesseraPoolView *view,
                         const char      *path,
                         GType            lock_file_type,
                         gboolean         read_only,
                         double           min_age,
                         double           host_lease,
                         const TesseraPoolStoreSettings *settings,
                         GError         **error)
{
  gboolean usable;
  int fd;

  g_return_val_if_fail (!view->opened, FALSE);
  if (!g_type_is_a (lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) || G_TYPE_IS_ABSTRACT (lock_file_type))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s is not a concrete lock file type"), g_type_name (lock_file_type));
      return FALSE;
    }
  view->opened = TRUE;
  /* The store's from now on, whichever it is. */
  view->store->lock_file_type = lock_file_type;
  view->store->read_only = read_only;
  view->store->min_age = min_age;
  view->store->host_lease = host_lease;
  /* The resource's name, else its folder. */
  view->store->name = tessera_dynamic_resource_get_name (view->owner);
  if (view->store->name == NULL)
    view->store->name = path;
  if (!choose_store (view, settings, error) || !view->store->klass->open (view->store, path, error))
    return FALSE;
  /* Polling would only read the pool again for nothing; a first interval
   * set on purpose still polls, and so does a read-only view (`tessera
   * watch`), which the store does not watch. */
  if (view->store->klass->wakes_waiters && !read_only && g_getenv ("TESSERA_POLL_INTERVAL") == NULL)
    _tessera_dynamic_resource_set_polling (view->owner, FALSE);
  fd = _tessera_pool_view_lock (view, error);
  if (fd < 0)
    return FALSE;
  usable = view->store->klass->load (view->store, error);
  _tessera_pool_view_unlock (view, fd);
  return usable;
}

gboolean
_tessera_pool_view_is_open (TesseraPoolView *view)
{
  return view->opened;
}

void
_tessera_pool_view_refresh (TesseraPoolView *view,
                            gboolean         full)
{
  /* What this refresh found (a holder gone, a peer's release whose events
   * it consumed) other threads of this process have not seen. */
  if (view->store->klass->refresh (view->store, full))
    view->refresh_changed = TRUE;
}

/* Applies, then writes the informations: a shape the resource type
 * rejects never reaches the store. Wakes this process's waiters. */
gboolean
_tessera_pool_view_write_informations (TesseraPoolView *view,
                                       JsonNode        *informations,
                                       GError         **error)
{
  gboolean ok;
  int fd;

  fd = _tessera_pool_view_lock (view, error);
  if (fd < 0)
    return FALSE;
  ok = view->store->klass->write_informations (view->store, informations, error);
  _tessera_pool_view_refresh (view, FALSE);
  if (ok)
    view->refresh_changed = TRUE;
  _tessera_pool_view_unlock (view, fd);
  return ok;
}

TesseraPoolStore *
_tessera_pool_view_get_store (TesseraPoolView *view)
{
  return view->store;
}
