/* tessera-pool-store-folder.c: the folder store, a pool in a lock folder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The built-in store (tessera-pool-store-private.h): experimaestro's lock
 * folder. It owns the units below its owner (the tracked resource) and
 * wires them together; its holders are the lock file cache's own
 * functions, its informations informations.json's, its liveness the
 * host lease's and its waiters' queue the wait queue's (`queue/`,
 * tessera-wait-queue.c). Calls go one way (see docs/design.md):
 *
 *   folder store -> lock file cache -> holder monitor, folder monitor -> lock folder
 *   folder store -> resource informations -> lock folder
 *   folder store -> watch box (the poller-thread sources' way back)
 *
 * Upward only through the store's owner, its type's class and its
 * TesseraPoolStoreOwner, set at open (the cache and informations.json
 * call them directly: the accounting, the informations' apply, the
 * audit of reclaims; this file the resource's thread lock), and the
 * poller-thread sources (inotify, pidfd), which reach the resource
 * through a TesseraWatchBox (on_inotify_ready, on_holder_exited here). */
#include "tessera-dynamic-resource-private.h"
#include "tessera-environment-private.h"
#include "tessera-file-warnings-private.h"
#include "tessera-holder-monitor-private.h"
#include "tessera-lock-file-cache-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"
#include "tessera-resource-informations-private.h"
#include "tessera-side-folder-private.h"
#include "tessera-watch-box-private.h"

typedef struct
{
  TesseraPoolStore parent;

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
  gboolean loaded;                 /* the first look at the pool was made */
  guint refreshes;                 /* made unwatched */

  gint64 token;                    /* the fencing token of the last holder put (ipc.lock) */
} TesseraPoolStoreFolder;

#define FOLDER_STORE(s) ((TesseraPoolStoreFolder *) (s))
/* The resource served, as a dynamic resource (its waiting and poller),
 * and its type's virtual functions. */
#define OWNER_BASE(s) TESSERA_DYNAMIC_RESOURCE ((s)->parent.owner)
#define OWNER_CLASS(s) ((s)->parent.owner_class)

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

static void
folder_store_free (TesseraPoolStore *store)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);

  g_clear_pointer (&self->cache, _tessera_lock_file_cache_free);
  g_clear_pointer (&self->holders, _tessera_holder_monitor_free);
  g_clear_pointer (&self->informations, _tessera_resource_informations_free);
  g_clear_pointer (&self->monitor, _tessera_folder_monitor_free);
  _tessera_watch_box_unref (self->box);
  g_clear_pointer (&self->folder, _tessera_lock_folder_free);
  g_free (self);
}

static void
folder_store_stop (TesseraPoolStore *store)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);

  if (self->monitor != NULL)
    _tessera_folder_monitor_stop (self->monitor);
  if (self->holders != NULL)
    _tessera_holder_monitor_stop (self->holders);
}

/* ---------------------------------------------------------------------- */
/* ipc.lock */

static int
folder_store_begin (TesseraPoolStore *store, GError **error)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);
  int fd;

  if (!self->parent.read_only)
    return _tessera_lock_folder_lock (self->folder, FALSE, error);
  fd = _tessera_lock_folder_lock (self->folder, TRUE, NULL);
  return fd >= 0 ? fd : TESSERA_POOL_STORE_NO_LOCK;
}

/* Not the lock folder's unlock itself: @begin's answer for a read-only
 * view that could take no lock (TESSERA_POOL_STORE_NO_LOCK) is the
 * store's, and unlocks nothing. */
static void
folder_store_end (TesseraPoolStore *store, int fd)
{
  if (fd != TESSERA_POOL_STORE_NO_LOCK)
    _tessera_lock_folder_unlock (fd);
}

/* ---------------------------------------------------------------------- */
/* Change detection, in the poller's thread */

/* Always the poller the resource holds: the default one may be another by
 * now (the last one gone, a new one made), and a context borrowed from a
 * temporary reference could be freed before the source is attached. */
static GMainContext *
poller_context (TesseraPoolStoreFolder *self)
{
  return _tessera_dynamic_resource_get_context (OWNER_BASE (self));
}

/* The owner's store, with a reference on the owner (so on the store)
 * while a source uses it, or NULL once the owner is gone. */
static TesseraPoolStoreFolder *
dup_store (gpointer box, TesseraDynamicResource **owner)
{
  *owner = _tessera_watch_box_dup_object (box);
  return *owner != NULL ? _tessera_watch_box_get_data (box) : NULL;
}

/* Applies informations.json when it changed. Thread lock held; ipc.lock
 * too when @under_ipc_lock (only then is a missing file reported). */
static gboolean
check_informations_locked (TesseraPoolStoreFolder *self, gboolean under_ipc_lock)
{
  gboolean changed = _tessera_resource_informations_check (self->informations, &self->parent, under_ipc_lock);
  double lease = _tessera_resource_informations_get_host_lease (self->informations, self->parent.name);
  TesseraHostLease *host_lease = _tessera_holder_monitor_get_lease (self->holders);

  /* The pool's recorded lease wins over our configuration's. */
  if (lease > 0 && lease != _tessera_host_lease_get_time (host_lease))
    {
      _tessera_host_lease_set_time (host_lease, lease);
      _tessera_resource_informations_set_required (self->informations, TESSERA_POOL_PROTOCOL_LEASE);
      if (!self->parent.read_only)
        _tessera_dynamic_resource_start_thread (OWNER_BASE (self));
    }
  return changed;
}

/* Reads what the folder monitor has heard; informations.json is applied
 * at once. Thread lock held. */
static gboolean
drain_locked (TesseraPoolStoreFolder *self, gboolean under_ipc_lock)
{
  gboolean informations_changed = FALSE;
  gboolean relevant = _tessera_folder_monitor_drain (self->monitor, &informations_changed);

  if (informations_changed)
    relevant |= check_informations_locked (self, under_ipc_lock);
  return relevant;
}

static gboolean
on_inotify_ready (gint fd, GIOCondition condition, gpointer data)
{
  g_autoptr(TesseraDynamicResource) owner = NULL;
  TesseraPoolStoreFolder *self = dup_store (data, &owner);
  gboolean relevant;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  self->parent.owner_calls->lock_thread (self->parent.owner);
  relevant = drain_locked (self, FALSE);
  /* Nobody here to wake: later events are read by a drain every few
   * seconds, until a wait begins (on_wait_begin); decisions read them. */
  if (!_tessera_dynamic_resource_has_waiters (owner))
    _tessera_folder_monitor_set_polled (self->monitor, FALSE);
  self->parent.owner_calls->unlock_thread (self->parent.owner);
  if (relevant)
    tessera_dynamic_resource_notify_changed (owner);
  return G_SOURCE_CONTINUE;
}

/* A watched holder exited. */
static void
on_holder_exited (gpointer data, GPid pid, guint64 serial)
{
  g_autoptr(TesseraDynamicResource) owner = NULL;
  TesseraPoolStoreFolder *self = dup_store (data, &owner);

  if (self == NULL)
    return;
  self->parent.owner_calls->lock_thread (self->parent.owner);
  _tessera_lock_file_cache_holder_exited (self->cache, pid, serial);
  self->parent.owner_calls->unlock_thread (self->parent.owner);
  tessera_dynamic_resource_notify_changed (owner);
}

/* Starts watching, once; the caller starts the poller's thread. Thread
 * lock held. TRUE when inotify started: what changed before it began is
 * known only to a full read, which the next refresh makes. */
static gboolean
start_watching_locked (TesseraPoolStoreFolder *self)
{
  if (self->watching)
    return FALSE;
  self->watching = TRUE;
  if (!self->can_watch)
    return FALSE;
  _tessera_folder_monitor_start (self->monitor, poller_context (self), on_inotify_ready,
                                 _tessera_watch_box_ref (self->box), _tessera_watch_box_ref,
                                 _tessera_watch_box_unref);
  _tessera_folder_monitor_force_scan (self->monitor);
  return TRUE;
}

/* The owner's first wait (the poller's thread is started): watch, and
 * let the waiter try again with a full read. No lock held. */
static void
on_first_wait (TesseraDynamicResource *owner, gpointer data)
{
  TesseraPoolStoreFolder *self = data;
  gboolean started;

  self->parent.owner_calls->lock_thread (self->parent.owner);
  started = start_watching_locked (self);
  self->parent.owner_calls->unlock_thread (self->parent.owner);
  if (started)
    tessera_dynamic_resource_notify_changed (owner);
}

/* Every wait: the events (queued since a wake-up found nobody waiting)
 * wake waiters again. No lock held. */
static void
on_wait_begin (TesseraDynamicResource *owner, gpointer data)
{
  TesseraPoolStoreFolder *self = data;

  self->parent.owner_calls->lock_thread (self->parent.owner);
  if (self->watching)
    _tessera_folder_monitor_set_polled (self->monitor, TRUE);
  self->parent.owner_calls->unlock_thread (self->parent.owner);
}

/* Not the folder monitor's force_scan itself: the resource may ask
 * before its open made the monitor (an open that failed). */
static void
folder_store_force_scan (TesseraPoolStore *store)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);

  if (self->monitor != NULL)   /* NULL: not opened */
    _tessera_folder_monitor_force_scan (self->monitor);
}

/* ---------------------------------------------------------------------- */
/* Opening and refreshing */

static gboolean
folder_store_refresh (TesseraPoolStore *store,
                      gboolean          full)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);
  guint64 serial_before = _tessera_lock_file_cache_get_serial (self->cache);
  gboolean informations_changed, refreshed, began;

  if (!self->watching && ++self->refreshes > REFRESHES_UNWATCHED)
    {
      start_watching_locked (self);
      _tessera_dynamic_resource_start_thread (OWNER_BASE (self));
    }
  if (full)
    _tessera_folder_monitor_force_scan (self->monitor);
  /* An update (`tessera clean`), not the first look: what a killed writer
   * of ours left goes too, as stale temporaries in jobs/ do. */
  if (full && self->loaded && !self->parent.read_only)
    _tessera_lock_folder_sweep_writer_tmp (self->folder);
  drain_locked (self, TRUE);
  informations_changed = check_informations_locked (self, TRUE);
  /* What it says of single lock files, it says once. */
  began = _tessera_file_warnings_begin ();
  refreshed = _tessera_lock_file_cache_refresh (self->cache);
  _tessera_file_warnings_end (began, tessera_dynamic_resource_get_name (OWNER_BASE (self)));
  if (!refreshed)
    return FALSE;

  /* What this refresh found (a holder gone, a peer's release whose events
   * it consumed) other threads of this process have not seen. */
  return informations_changed || _tessera_lock_file_cache_get_serial (self->cache) != serial_before;
}

static gboolean
folder_store_open (TesseraPoolStore *store,
                   const char       *path,
                   GError          **error)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);
  gboolean read_only = store->read_only;
  double host_lease = store->host_lease;

  if (host_lease > 0 && host_lease < TESSERA_HOST_LEASE_MIN)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A host lease of %g s is too short: 0 (no lease) or from %g to %g s"),
                   host_lease, TESSERA_HOST_LEASE_MIN, TESSERA_HOST_LEASE_MAX);
      return FALSE;
    }

  self->folder = _tessera_lock_folder_new (path);
  store->lock_folder = self->folder;
  self->informations = _tessera_resource_informations_new (self->folder);
  store->informations_table = self->informations;
  self->monitor = _tessera_folder_monitor_new (self->folder);
  self->holders = _tessera_holder_monitor_new (self->folder, poller_context (self), on_holder_exited,
                                               _tessera_watch_box_ref (self->box), _tessera_watch_box_ref,
                                               _tessera_watch_box_unref);
  _tessera_host_lease_set_time (_tessera_holder_monitor_get_lease (self->holders), host_lease);
  store->proof = _tessera_holder_monitor_get_lease (self->holders);
  _tessera_resource_informations_set_host_lease (self->informations, host_lease);
  if (host_lease > 0)
    _tessera_resource_informations_set_required (self->informations, TESSERA_POOL_PROTOCOL_LEASE);
  /* The lease is renewed by a timer of the poller's thread, which
   * otherwise starts only at a first wait. */
  if (host_lease > 0 && !read_only)
    _tessera_dynamic_resource_start_thread (OWNER_BASE (self));
  self->cache = _tessera_lock_file_cache_new (self->folder, self->monitor, self->holders, store);
  store->holder_table = self->cache;
  /* A read-only view of a pool nobody set up yet is an empty pool; one
   * reached through a link that another user may have put there is none. */
  if (!read_only && !_tessera_lock_folder_create (self->folder, error))
    return FALSE;
  if (read_only && !_tessera_lock_folder_open (self->folder, error))
    return FALSE;

  self->can_watch = _tessera_folder_monitor_can_watch (self->monitor);
  _tessera_dynamic_resource_set_watch_start (OWNER_BASE (self), on_first_wait, on_wait_begin, self);
  if (!self->can_watch)
    {
      /* Polling is the primary path to wake waiters, with a short
       * interval, never below a first interval set on purpose
       * (TESSERA_POLL_INTERVAL). */
      _tessera_dynamic_resource_set_poll_interval_max (OWNER_BASE (self),
        MAX (MIN (TESSERA_POLL_INTERVAL_MAX_UNWATCHED, _tessera_poll_interval_max ()),
             _tessera_poll_interval_initial ()));
    }
  return TRUE;
}

/* The part of opening made under both locks: informations.json, the
 * first full read and the protocol. */
static gboolean
folder_store_load (TesseraPoolStore *store, GError **error)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);
  struct stat jobs_st;

  /* The capacity is the pool's owner's: a member's is believed by nobody,
   * and she makes none (she would own it). */
  if (!_tessera_lock_folder_informations_believed (self->folder, error))
    return FALSE;
  if (!_tessera_lock_folder_has_informations (self->folder))
    {
      g_autoptr(JsonNode) initial = OWNER_CLASS (self)->initialize_informations (self->parent.owner);
      /* Only looking: what the first writer would set up, kept in memory. */
      if (initial != NULL && self->parent.read_only)
        OWNER_CLASS (self)->handle_information_change (self->parent.owner, initial, NULL);
      else if (initial != NULL && (!_tessera_lock_folder_may_make_informations (self->folder, error) ||
                                   !_tessera_resource_informations_write (self->informations, initial, error)))
        return FALSE;
    }
  OWNER_CLASS (self)->reset_state (self->parent.owner);
  if (self->can_watch && _tessera_lock_folder_stat_jobs (self->folder, &jobs_st) &&
      jobs_st.st_size >= LARGE_JOBS_FOLDER_BYTES)
    {
      start_watching_locked (self);
      _tessera_dynamic_resource_start_thread (OWNER_BASE (self));
    }
  folder_store_refresh (&self->parent, TRUE);
  self->loaded = TRUE;
  /* A pool for a newer protocol: its holders follow rules we do not know.
   * Asked under the locks: the poller thread updates what it reads. */
  if (!_tessera_resource_informations_usable (self->informations, error))
    return FALSE;
  /* A lease pool an older Tessera made: from now on such a Tessera,
   * which renews no heartbeat, leaves it alone. */
  return self->parent.read_only || _tessera_resource_informations_require (self->informations, error);
}

/* ---------------------------------------------------------------------- */
/* Holders: what decides; the rest is the lock file cache's own */

static gboolean
folder_store_judge_all (TesseraPoolStore *store)
{
  gboolean began = _tessera_file_warnings_begin ();
  gboolean changed = _tessera_lock_file_cache_judge_all (FOLDER_STORE (store)->cache);

  _tessera_file_warnings_end (began, tessera_dynamic_resource_get_name (OWNER_BASE (FOLDER_STORE (store))));
  return changed;
}

static gboolean
folder_store_put_holder (TesseraPoolStore *store,
                         const char       *name,
                         TesseraJob       *job,
                         JsonNode         *information,
                         GError          **error)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);

  /* The counter first: a crash between the two leaves it raised, and
   * the token this grant gets is never handed out again. */
  self->token = 0;
  return _tessera_lock_folder_next_fence (self->folder, &self->token, error) &&
         _tessera_lock_file_cache_create (self->cache, name, job, information, error);
}

/* Raised under ipc.lock by put_holder, which the commit does not change:
 * the store's own state (the lock folder hands it out once, at
 * next_fence), so no unit below has a function to give here. */
static gint64
folder_store_get_token (TesseraPoolStore *store)
{
  return FOLDER_STORE (store)->token;
}

static gboolean
folder_store_set_holder_process (TesseraPoolStore *store,
                                 const char       *name,
                                 TesseraProcess   *process,
                                 GError          **error)
{
  TesseraPoolStoreFolder *self = FOLDER_STORE (store);

  if (_tessera_lock_file_cache_get_lock_file (self->cache, name) == NULL ||
      _tessera_lock_file_cache_jobs_refused (self->cache))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING,
                   _("Lock file %s of %s is missing"), name, store->name);
      return FALSE;
    }
  return _tessera_lock_file_cache_set_process (self->cache, name, process, error);
}

/* The holders as read: the lock file cache, the store's holder_table
 * from open on. Each member of the interface takes its table as a
 * gpointer (another store's is another type), and a function called
 * through a pointer of another type is undefined in C: so each is
 * filled with one of these, of the member's exact type, which gives the
 * table to the cache's own function as the cache it is (the cache's
 * callers keep their type checks). */

static gboolean
holders_check_usable (gpointer cache, GError **error)
{
  return _tessera_lock_file_cache_check_usable (cache, error);
}

static gboolean
holders_check_readable (gpointer cache, GError **error)
{
  return _tessera_lock_file_cache_check_readable (cache, error);
}

static TesseraDynamicLockFile *
holders_get (gpointer cache, const char *name)
{
  return _tessera_lock_file_cache_get_lock_file (cache, name);
}

static guint
holders_get_whole (gpointer cache)
{
  return _tessera_lock_file_cache_get_whole_holders (cache);
}

static GPtrArray *
holders_list (gpointer cache)
{
  return _tessera_lock_file_cache_list (cache);
}

static void
holders_forget (gpointer cache, const char *name)
{
  _tessera_lock_file_cache_forget (cache, name);
}

static gboolean
holders_delete_own (gpointer cache, const char *name, GError **error)
{
  return _tessera_lock_file_cache_delete_own (cache, name, error);
}

static gboolean
holders_check_name (gpointer cache, const char *job, GError **error)
{
  return _tessera_lock_file_cache_check_holder_name (cache, job, error);
}

static gboolean
holders_remove (gpointer cache, const char *job, GError **error)
{
  return _tessera_lock_file_cache_remove_holder (cache, job, error);
}

static const TesseraPoolStoreHolders folder_store_holders = {
  .check_usable = holders_check_usable,
  .check_readable = holders_check_readable,
  .get = holders_get,
  .get_whole = holders_get_whole,
  .list = holders_list,
  .forget = holders_forget,
  .delete_own = holders_delete_own,
  .check_name = holders_check_name,
  .remove = holders_remove,
};

/* NULL when open failed before the folder was known: a check that the
 * store is open, before the lock folder's job path. */
static char *
folder_store_dup_holder_location (TesseraPoolStore *store, const char *name)
{
  TesseraLockFolder *folder = FOLDER_STORE (store)->folder;

  return folder != NULL ? _tessera_lock_folder_dup_job_path (folder, name) : NULL;
}

/* ---------------------------------------------------------------------- */
/* This process's liveness proof: the host lease (when the pool has one),
 * the store's proof from open on, given to the host lease's own
 * functions as the lease it is (as the holders' above). */

static void
liveness_hold (gpointer lease)
{
  _tessera_host_lease_hold (lease);
}

static void
liveness_unhold (gpointer lease)
{
  _tessera_host_lease_unhold (lease);
}

static double
liveness_get_unrenewed (gpointer lease)
{
  return _tessera_host_lease_unrenewed_for (lease);
}

static double
liveness_get_lease (gpointer lease)
{
  return _tessera_host_lease_get_time (lease);
}

static gboolean
liveness_renew (gpointer lease, GError **error)
{
  return _tessera_host_lease_renew_first (lease, error);
}

static gboolean
liveness_host_expired (gpointer lease, const char *host_id)
{
  return _tessera_host_lease_expired (lease, host_id);
}

static const TesseraPoolStoreLiveness folder_store_liveness = {
  .hold = liveness_hold,
  .unhold = liveness_unhold,
  .get_unrenewed = liveness_get_unrenewed,
  .get_lease = liveness_get_lease,
  .renew = liveness_renew,
  .host_expired = liveness_host_expired,
};

/* ---------------------------------------------------------------------- */
/* informations.json */

/* informations.json, the store's informations_table from open on,
 * given to its own functions as what it is (as the holders' above). */

static JsonNode *
informations_read (gpointer info, GError **error)
{
  return _tessera_resource_informations_read (info, error);
}

static gboolean
informations_write (gpointer info, JsonNode *informations, GError **error)
{
  return _tessera_resource_informations_write (info, informations, error);
}

static void
informations_forget (gpointer info)
{
  _tessera_resource_informations_forget (info);
}

static const TesseraPoolStoreInformations folder_store_informations = {
  .read = informations_read,
  .write = informations_write,
  .forget = informations_forget,
};

/* The lock folder's path, or NULL before open made the folder (an open
 * that failed). */
static const char *
folder_path (TesseraPoolStoreFolder *self)
{
  return self->folder != NULL ? _tessera_lock_folder_get_path (self->folder) : NULL;
}

/* What it adds to the lock folder's path: NULL before open made the
 * folder, and a copy, as the member gives. */
static char *
folder_store_dup_location (TesseraPoolStore *store)
{
  return g_strdup (folder_path (FOLDER_STORE (store)));
}

/* ---------------------------------------------------------------------- */
/* Side entries: files KIND/NAME.json of the lock folder
 * (tessera-side-folder.c), which is given the folder and whether the
 * store only looks, not the store. */

static GHashTable *
folder_store_side_list (TesseraPoolStore *store, const char *kind)
{
  return _tessera_side_folder_list (folder_path (FOLDER_STORE (store)), kind, store->read_only);
}

static gboolean
folder_store_side_put (TesseraPoolStore *store, const char *kind, const char *name, const char *text,
                       GError **error)
{
  return _tessera_side_folder_put (folder_path (FOLDER_STORE (store)), kind, name, text, error);
}

static gboolean
folder_store_side_delete (TesseraPoolStore *store, const char *kind, const char *name, GError **error)
{
  return _tessera_side_folder_delete (folder_path (FOLDER_STORE (store)), kind, name, error);
}

static const TesseraPoolStoreClass folder_store_class = {
  .name = "folder",
  .wakes_waiters = FALSE,   /* inotify drops events; other hosts' are unseen */
  .waiting_in_side_entries = FALSE,   /* `queue/NAME.waiting`, as Tessera always kept them */
  .settings = NULL,   /* its folder is the resource's path */
  .create = _tessera_pool_store_folder_new,
  .open = folder_store_open,
  .load = folder_store_load,
  .stop = folder_store_stop,
  .free = folder_store_free,
  .begin = folder_store_begin,
  .end = folder_store_end,
  .refresh = folder_store_refresh,
  .commit = NULL,   /* every write is made under ipc.lock: each is one decision */
  .force_scan = folder_store_force_scan,
  .holders = &folder_store_holders,
  .judge_all = folder_store_judge_all,
  .put_holder = folder_store_put_holder,
  .set_holder_process = folder_store_set_holder_process,
  .dup_holder_location = folder_store_dup_holder_location,
  .liveness = &folder_store_liveness,
  .informations = &folder_store_informations,
  .queue = &_tessera_wait_queue_folder,   /* `queue/` (tessera-wait-queue.c) */
  .dup_location = folder_store_dup_location,
  .get_holder_lease_left = NULL,   /* a host lease is the host's, not a holder's */
  .get_token = folder_store_get_token,
  .side_list = folder_store_side_list,
  .side_put = folder_store_side_put,
  .side_delete = folder_store_side_delete,
};

/* Its settings are the resource's path, given at open: none to check. */
TesseraPoolStore *
_tessera_pool_store_folder_new (TesseraTrackedDynamicResource  *owner,
                                const TesseraPoolStoreOwner    *owner_calls,
                                const TesseraPoolStoreSettings *settings,
                                GError                        **error)
{
  TesseraPoolStoreFolder *self = g_new0 (TesseraPoolStoreFolder, 1);

  self->parent.klass = &folder_store_class;
  self->box = _tessera_watch_box_new (TESSERA_DYNAMIC_RESOURCE (owner), self);
  return &self->parent;
}
