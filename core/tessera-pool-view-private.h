/* tessera-pool-view-private.h: one process's view of a pool, kept current, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-folder-monitor-private.h"
#include "tessera-lock-file-cache-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-resource-informations-private.h"

G_BEGIN_DECLS

/* What a tracked resource sees of its folder: the lock file cache and
 * what keeps it current (the folder monitor, the holder monitor,
 * informations.json), behind the two locks every decision takes: ipc.lock
 * (between processes) and the thread lock (between this process's
 * threads). Made with the resource, opened at its init. */
typedef struct _TesseraPoolView TesseraPoolView;

/* What the view calls in its resource (the resource type's accounting and
 * its handling of informations.json); the resource is the owner given at
 * _tessera_pool_view_new(). */
typedef struct
{
  TesseraLockFileCacheCalls cache;
  TesseraInformationsApply  apply_informations;
  /* (transfer full) (nullable): what a new pool's informations.json says. */
  JsonNode *(*initial_informations) (gpointer owner);
  /* Forget every holding, before the first full read. */
  void      (*reset)                (gpointer owner);
} TesseraPoolViewCalls;

/* No ipc.lock held, but go on (read-only: none could be opened). */
#define TESSERA_POOL_VIEW_NO_IPC_LOCK G_MAXINT

/* @owner: not referenced; the view lives no longer than it. */
TesseraPoolView *_tessera_pool_view_new   (TesseraDynamicResource     *owner,
                                           const TesseraPoolViewCalls *calls);
void      _tessera_pool_view_free         (TesseraPoolView *view);
/* Sets up the folder (unless @read_only) and informations.json, starts
 * watching it, reads every holder, and refuses a pool of a newer
 * protocol. */
gboolean  _tessera_pool_view_open         (TesseraPoolView *view,
                                           const char      *path,
                                           GType            lock_file_type,
                                           gboolean         read_only,
                                           double           min_age,
                                           double           host_lease,
                                           GError         **error);
gboolean  _tessera_pool_view_is_open      (TesseraPoolView *view);
/* Stops the sources in the poller's thread (dispose). */
void      _tessera_pool_view_stop         (TesseraPoolView *view);

/* The thread lock alone: what the poller's thread takes. Property
 * notifications raised under it are held back until it is released. */
void      _tessera_pool_view_lock_thread   (TesseraPoolView *view);
void      _tessera_pool_view_unlock_thread (TesseraPoolView *view);
/* ipc.lock then the thread lock, always in that order; the descriptor to
 * give back, TESSERA_POOL_VIEW_NO_IPC_LOCK, or -1 with @error. Unlocking
 * wakes this process's waiters when a refresh under the locks changed
 * something. */
int       _tessera_pool_view_lock          (TesseraPoolView *view,
                                            GError         **error);
void      _tessera_pool_view_unlock        (TesseraPoolView *view,
                                            int              fd);
/* The seed's `_update`, incremental; every lock file when @full. Both
 * locks held. */
void      _tessera_pool_view_refresh       (TesseraPoolView *view,
                                            double           min_age,
                                            gboolean         full);
/* Marks the view for a full re-read by the next refresh. Thread lock held. */
void      _tessera_pool_view_force_scan    (TesseraPoolView *view);
/* Something changed under the locks: wake this process's waiters on unlock. */
void      _tessera_pool_view_mark_changed  (TesseraPoolView *view);

/* Replaces informations.json under both locks, once the resource type
 * accepted it; this process's waiters are woken. */
gboolean  _tessera_pool_view_write_informations (TesseraPoolView *view,
                                                 JsonNode        *informations,
                                                 double           min_age,
                                                 GError         **error);

TesseraLockFolder           *_tessera_pool_view_get_folder       (TesseraPoolView *view);
TesseraLockFileCache        *_tessera_pool_view_get_cache        (TesseraPoolView *view);
TesseraFolderMonitor        *_tessera_pool_view_get_monitor      (TesseraPoolView *view);
TesseraHolderMonitor        *_tessera_pool_view_get_holders      (TesseraPoolView *view);
TesseraResourceInformations *_tessera_pool_view_get_informations (TesseraPoolView *view);
/* The host lease in use once open (the pool's recorded one wins), else
 * @configured. */
double                       _tessera_pool_view_lease            (TesseraPoolView *view,
                                                                  double           configured);
/* On a lease pool, renews this host's heartbeat before a lock file is
 * written (see _tessera_host_lease_renew_first()). */
gboolean                     _tessera_pool_view_renew_lease      (TesseraPoolView  *view,
                                                                  GError          **error);

G_END_DECLS
