/* tessera-pool-view.c: one process's view of a pool, kept current
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The view owns the units below the tracked resource and wires them
 * together; calls go one way (see docs/design.md):
 *
 *   pool view -> lock file cache -> holder monitor, folder monitor -> lock folder
 *   pool view -> resource informations -> lock folder
 *   pool view -> watch box (the poller-thread sources' way back)
 *
 * Upward only through TesseraPoolViewCalls (the resource type's
 * accounting and informations.json) and the poller-thread sources
 * (inotify, pidfd), which reach the view's resource through a
 * TesseraWatchBox (on_inotify_ready, on_holder_exited here). */
#include "tessera-holder-monitor-private.h"
#include "tessera-pool-view-private.h"
#include "tessera-watch-box-private.h"

struct _TesseraPoolView
{
  TesseraDynamicResource *owner;   /* not referenced: it owns the view */
  const TesseraPoolViewCalls *calls;

  GMutex lock;                     /* the seed's thread lock */
  gboolean refresh_changed;        /* a refresh changed it: wake this process's waiters */
  gboolean read_only;

  TesseraLockFolder *folder;       /* NULL until opened */
  TesseraLockFileCache *cache;
  TesseraFolderMonitor *monitor;
  TesseraHolderMonitor *holders;
  TesseraResourceInformations *informations;
  TesseraWatchBox *box;            /* how the poller's sources reach the owner */

  /* Watching (inotify, and the poller's thread for it and the pidfd
   * watches) starts late: see start_watching_locked(). Thread lock. */
  gboolean can_watch;              /* inotify will do (a local file system) */
  gboolean watching;
  guint refreshes;                 /* made unwatched */
};

/* When watching starts. Its cost is paid once: a thread, and an inotify
 * instance whose closing waits for an RCU grace period of the kernel
 * (about 10 ms at exit on a busy machine, more than the rest of a
 * `tessera run`). Until then the folder's modification time tells what
 * changed, and each refresh reads the names of jobs/ again: cheap for a
 * small folder, what a one-shot process wants. So watching starts at the
 * first wait (events wake waiters), after a few refreshes (a process that
 * stays: its later refreshes read only what changed, and holders' exits
 * reach it), or at once for a folder whose size says it holds a thousand
 * or so lock files (reading every name again would cost more). */
#define REFRESHES_UNWATCHED 8
#define LARGE_JOBS_FOLDER_BYTES (32 * 1024)

TesseraPoolView *
_tessera_pool_view_new (TesseraDynamicResource     *owner,
                        const TesseraPoolViewCalls *calls)
{
  TesseraPoolView *view = g_new0 (TesseraPoolView, 1);

  view->owner = owner;
  view->calls = calls;
  g_mutex_init (&view->lock);
  view->box = _tessera_watch_box_new (owner, view);
  return view;
}

void
_tessera_pool_view_free (TesseraPoolView *view)
{
  g_clear_pointer (&view->cache, _tessera_lock_file_cache_free);
  g_clear_pointer (&view->holders, _tessera_holder_monitor_free);
  g_clear_pointer (&view->informations, _tessera_resource_informations_free);
  g_clear_pointer (&view->monitor, _tessera_folder_monitor_free);
  _tessera_watch_box_unref (view->box);
  g_clear_pointer (&view->folder, _tessera_lock_folder_free);
  g_mutex_clear (&view->lock);
  g_free (view);
}

void
_tessera_pool_view_stop (TesseraPoolView *view)
{
  g_mutex_lock (&view->lock);
  if (view->monitor != NULL)
    _tessera_folder_monitor_stop (view->monitor);
  if (view->holders != NULL)
    _tessera_holder_monitor_stop (view->holders);
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
}

/* ipc.lock then the thread lock, in that order, always: a peer that keeps
 * ipc.lock must not keep the poller's thread (which needs only the thread
 * lock) from serving this process's other resources. */
int
_tessera_pool_view_lock (TesseraPoolView *view, GError **error)
{
  int fd;

  if (view->read_only)
    {
      fd = _tessera_lock_folder_lock (view->folder, TRUE, NULL);
      if (fd < 0)
        fd = TESSERA_POOL_VIEW_NO_IPC_LOCK;
    }
  else
    fd = _tessera_lock_folder_lock (view->folder, FALSE, error);
  if (fd >= 0)
    _tessera_pool_view_lock_thread (view);
  return fd;
}

void
_tessera_pool_view_unlock (TesseraPoolView *view, int fd)
{
  gboolean changed = view->refresh_changed;

  view->refresh_changed = FALSE;
  if (fd != TESSERA_POOL_VIEW_NO_IPC_LOCK)
    _tessera_lock_folder_unlock (fd);
  _tessera_pool_view_unlock_thread (view);
  if (changed)
    tessera_dynamic_resource_notify_changed (view->owner);
}

void
_tessera_pool_view_mark_changed (TesseraPoolView *view)
{
  view->refresh_changed = TRUE;
}

/* ---------------------------------------------------------------------- */
/* Change detection, in the poller's thread */

/* Always the poller the resource holds: the default one may be another by
 * now (the last one gone, a new one made), and a context borrowed from a
 * temporary reference could be freed before the source is attached. */
static GMainContext *
poller_context (TesseraPoolView *view)
{
  return _tessera_dynamic_resource_get_context (view->owner);
}

/* The owner's view, with a reference on the owner (so on the view) while
 * a source uses it, or NULL once the owner is gone. */
static TesseraPoolView *
dup_view (gpointer box, TesseraDynamicResource **owner)
{
  *owner = _tessera_watch_box_dup_object (box);
  return *owner != NULL ? _tessera_watch_box_get_data (box) : NULL;
}

/* Applies informations.json when it changed. Thread lock held; ipc.lock
 * too when @under_ipc_lock (only then is a missing file reported). */
static gboolean
check_informations_locked (TesseraPoolView *view, gboolean under_ipc_lock)
{
  gboolean changed = _tessera_resource_informations_check (view->informations, view->calls->cache.name (view->owner),
                                                           view->calls->apply_informations, view->owner,
                                                           under_ipc_lock);
  double lease = _tessera_resource_informations_get_host_lease (view->informations,
                                                                view->calls->cache.name (view->owner));
  TesseraHostLease *host_lease = _tessera_holder_monitor_get_lease (view->holders);

  /* The pool's recorded lease wins over our configuration's. */
  if (lease > 0 && lease != _tessera_host_lease_get_time (host_lease))
    {
      _tessera_host_lease_set_time (host_lease, lease);
      _tessera_resource_informations_set_required (view->informations, TESSERA_POOL_PROTOCOL_LEASE);
      if (!view->read_only)
        _tessera_dynamic_resource_start_thread (view->owner);
    }
  return changed;
}

/* Reads what the folder monitor has heard; informations.json is applied
 * at once. Thread lock held. */
static gboolean
drain_locked (TesseraPoolView *view, gboolean under_ipc_lock)
{
  gboolean informations_changed = FALSE;
  gboolean relevant = _tessera_folder_monitor_drain (view->monitor, &informations_changed);

  if (informations_changed)
    relevant |= check_informations_locked (view, under_ipc_lock);
  return relevant;
}

static gboolean
on_inotify_ready (gint fd, GIOCondition condition, gpointer data)
{
  g_autoptr(TesseraDynamicResource) owner = NULL;
  TesseraPoolView *view = dup_view (data, &owner);
  gboolean relevant;

  if (view == NULL)
    return G_SOURCE_REMOVE;
  _tessera_pool_view_lock_thread (view);
  relevant = drain_locked (view, FALSE);
  _tessera_pool_view_unlock_thread (view);
  if (relevant)
    tessera_dynamic_resource_notify_changed (owner);
  return G_SOURCE_CONTINUE;
}

/* A watched holder exited. */
static void
on_holder_exited (gpointer data, GPid pid, guint64 serial)
{
  g_autoptr(TesseraDynamicResource) owner = NULL;
  TesseraPoolView *view = dup_view (data, &owner);

  if (view == NULL)
    return;
  _tessera_pool_view_lock_thread (view);
  _tessera_lock_file_cache_holder_exited (view->cache, pid, serial);
  _tessera_pool_view_unlock_thread (view);
  tessera_dynamic_resource_notify_changed (owner);
}

/* Starts watching, once; the caller starts the poller's thread. Thread
 * lock held. TRUE when inotify started: what changed before it began is
 * known only to a full read, which the next refresh makes. */
static gboolean
start_watching_locked (TesseraPoolView *view)
{
  if (view->watching)
    return FALSE;
  view->watching = TRUE;
  if (!view->can_watch)
    return FALSE;
  _tessera_folder_monitor_start (view->monitor, poller_context (view), on_inotify_ready,
                                 _tessera_watch_box_ref (view->box), _tessera_watch_box_unref);
  _tessera_folder_monitor_force_scan (view->monitor);
  return TRUE;
}

/* The owner's first wait (the poller's thread is started): watch, and
 * let the waiter try again with a full read. No lock held. */
static void
on_first_wait (TesseraDynamicResource *owner, gpointer data)
{
  TesseraPoolView *view = data;
  gboolean started;

  _tessera_pool_view_lock_thread (view);
  started = start_watching_locked (view);
  _tessera_pool_view_unlock_thread (view);
  if (started)
    tessera_dynamic_resource_notify_changed (owner);
}

void
_tessera_pool_view_force_scan (TesseraPoolView *view)
{
  if (view->monitor != NULL)   /* NULL: not opened */
    _tessera_folder_monitor_force_scan (view->monitor);
}

/* ---------------------------------------------------------------------- */
/* Opening and refreshing */

gboolean
_tessera_pool_view_open (TesseraPoolView *view,
                         const char      *path,
                         GType            lock_file_type,
                         gboolean         read_only,
                         double           min_age,
                         double           host_lease,
                         GError         **error)
{
  gboolean usable;
  struct stat jobs_st;
  int fd;

  g_return_val_if_fail (view->folder == NULL, FALSE);
  if (host_lease > 0 && host_lease < TESSERA_HOST_LEASE_MIN)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A host lease of %g s is too short: 0 (no lease) or from %g to %g s"),
                   host_lease, TESSERA_HOST_LEASE_MIN, TESSERA_HOST_LEASE_MAX);
      return FALSE;
    }
  if (!g_type_is_a (lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) || G_TYPE_IS_ABSTRACT (lock_file_type))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s is not a concrete lock file type"), g_type_name (lock_file_type));
      return FALSE;
    }

  view->read_only = read_only;
  view->folder = _tessera_lock_folder_new (path);
  view->informations = _tessera_resource_informations_new (view->folder);
  view->monitor = _tessera_folder_monitor_new (view->folder);
  view->holders = _tessera_holder_monitor_new (view->folder, poller_context (view), on_holder_exited,
                                               _tessera_watch_box_ref (view->box), _tessera_watch_box_ref,
                                               _tessera_watch_box_unref);
  _tessera_host_lease_set_time (_tessera_holder_monitor_get_lease (view->holders), host_lease);
  _tessera_resource_informations_set_host_lease (view->informations, host_lease);
  if (host_lease > 0)
    _tessera_resource_informations_set_required (view->informations, TESSERA_POOL_PROTOCOL_LEASE);
  /* The lease is renewed by a timer of the poller's thread, which
   * otherwise starts only at a first wait. */
  if (host_lease > 0 && !read_only)
    _tessera_dynamic_resource_start_thread (view->owner);
  view->cache = _tessera_lock_file_cache_new (view->folder, view->monitor, view->holders, lock_file_type,
                                              read_only, &view->calls->cache, view->owner);
  /* A read-only view of a pool nobody set up yet is an empty pool. */
  if (!read_only && !_tessera_lock_folder_create (view->folder, error))
    return FALSE;

  view->can_watch = _tessera_folder_monitor_can_watch (view->monitor);
  _tessera_dynamic_resource_set_watch_start (view->owner, on_first_wait, view);
  if (!view->can_watch)
    {
      /* Polling is the primary path to wake waiters, with a short
       * interval, never below a first interval set on purpose
       * (TESSERA_POLL_INTERVAL). */
      _tessera_dynamic_resource_set_poll_interval_max (view->owner,
        MAX (MIN (TESSERA_POLL_INTERVAL_MAX_UNWATCHED, _tessera_poll_interval_max ()),
             _tessera_poll_interval_initial ()));
    }

  fd = _tessera_pool_view_lock (view, error);
  if (fd < 0)
    return FALSE;
  if (!_tessera_lock_folder_has_informations (view->folder))
    {
      g_autoptr(JsonNode) initial = view->calls->initial_informations (view->owner);
      /* Only looking: what the first writer would set up, kept in memory. */
      if (initial != NULL && read_only)
        view->calls->apply_informations (view->owner, initial, NULL);
      else if (initial != NULL && !_tessera_resource_informations_write (view->informations, initial, error))
        {
          _tessera_pool_view_unlock (view, fd);
          return FALSE;
        }
    }
  view->calls->reset (view->owner);
  if (view->can_watch && _tessera_lock_folder_stat_jobs (view->folder, &jobs_st) &&
      jobs_st.st_size >= LARGE_JOBS_FOLDER_BYTES)
    {
      start_watching_locked (view);
      _tessera_dynamic_resource_start_thread (view->owner);
    }
  _tessera_pool_view_refresh (view, min_age, TRUE);
  /* A pool for a newer protocol: its holders follow rules we do not know.
   * Asked under the locks: the poller thread updates what it reads. */
  usable = _tessera_resource_informations_usable (view->informations, error);
  /* A lease pool an older Tessera made: from now on such a Tessera,
   * which renews no heartbeat, leaves it alone. */
  if (usable && !read_only)
    usable = _tessera_resource_informations_require (view->informations, error);
  _tessera_pool_view_unlock (view, fd);
  return usable;
}

gboolean
_tessera_pool_view_is_open (TesseraPoolView *view)
{
  return view->folder != NULL;
}

void
_tessera_pool_view_refresh (TesseraPoolView *view,
                            double           min_age,
                            gboolean         full)
{
  guint64 serial_before = _tessera_lock_file_cache_get_serial (view->cache);
  gboolean informations_changed;

  if (!view->watching && ++view->refreshes > REFRESHES_UNWATCHED)
    {
      start_watching_locked (view);
      _tessera_dynamic_resource_start_thread (view->owner);
    }
  if (full)
    _tessera_folder_monitor_force_scan (view->monitor);
  drain_locked (view, TRUE);
  informations_changed = check_informations_locked (view, TRUE);
  if (!_tessera_lock_file_cache_refresh (view->cache, min_age))
    return;

  /* What this refresh found (a holder gone, a peer's release whose events
   * it consumed) other threads of this process have not seen. */
  if (informations_changed || _tessera_lock_file_cache_get_serial (view->cache) != serial_before)
    view->refresh_changed = TRUE;
}

/* Applies, then writes informations.json: a shape the resource type
 * rejects never reaches the disk. Wakes this process's waiters. */
gboolean
_tessera_pool_view_write_informations (TesseraPoolView *view,
                                       JsonNode        *informations,
                                       double           min_age,
                                       GError         **error)
{
  gboolean ok;
  int fd;

  fd = _tessera_pool_view_lock (view, error);
  if (fd < 0)
    return FALSE;
  ok = view->calls->apply_informations (view->owner, informations, error) &&
       _tessera_resource_informations_write (view->informations, informations, error);
  _tessera_resource_informations_forget (view->informations);
  _tessera_pool_view_refresh (view, min_age, FALSE);
  if (ok)
    view->refresh_changed = TRUE;
  _tessera_pool_view_unlock (view, fd);
  return ok;
}

TesseraLockFolder *
_tessera_pool_view_get_folder (TesseraPoolView *view)
{
  return view->folder;
}

TesseraLockFileCache *
_tessera_pool_view_get_cache (TesseraPoolView *view)
{
  return view->cache;
}

TesseraFolderMonitor *
_tessera_pool_view_get_monitor (TesseraPoolView *view)
{
  return view->monitor;
}

TesseraHolderMonitor *
_tessera_pool_view_get_holders (TesseraPoolView *view)
{
  return view->holders;
}

double
_tessera_pool_view_lease (TesseraPoolView *view,
                          double           configured)
{
  return view->holders != NULL ? _tessera_host_lease_get_time (_tessera_holder_monitor_get_lease (view->holders))
                               : configured;
}

gboolean
_tessera_pool_view_renew_lease (TesseraPoolView  *view,
                                GError          **error)
{
  return _tessera_host_lease_renew_first (_tessera_holder_monitor_get_lease (view->holders), error);
}

TesseraResourceInformations *
_tessera_pool_view_get_informations (TesseraPoolView *view)
{
  return view->informations;
}
