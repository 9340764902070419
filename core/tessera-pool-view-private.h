/* tessera-pool-view-private.h: one process's view of a pool, kept current, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-pool-store-private.h"

G_BEGIN_DECLS

/* What a tracked resource sees of its pool: the store the pool lives in
 * (tessera-pool-store-private.h; the folder store for now) behind the two
 * locks every decision takes: the store's exclusion between processes
 * (ipc.lock for a folder) and the thread lock (between this process's
 * threads). Made with the resource, opened at its init. */
typedef struct _TesseraPoolView TesseraPoolView;

/* No ipc.lock held, but go on (read-only: none could be opened). */
#define TESSERA_POOL_VIEW_NO_IPC_LOCK TESSERA_POOL_STORE_NO_LOCK

/* @owner: a tracked resource, not referenced; the view lives no longer
 * than it. */
TesseraPoolView *_tessera_pool_view_new   (TesseraDynamicResource     *owner);
void      _tessera_pool_view_free         (TesseraPoolView *view);
/* Sets up the pool (unless @read_only) in the store @settings name (the
 * folder @path by default) and its informations, starts watching it,
 * reads every holder, and refuses a pool of a newer protocol.
 * @lock_file_type, @read_only, @min_age and @host_lease are the store's
 * from then on (TesseraPoolStore), with the resource's name (else @path)
 * for messages: no call is given them again. */
gboolean  _tessera_pool_view_open         (TesseraPoolView *view,
                                           const char      *path,
                                           GType            lock_file_type,
                                           gboolean         read_only,
                                           double           min_age,
                                           double           host_lease,
                                           const TesseraPoolStoreSettings *settings,
                                           GError         **error);
gboolean  _tessera_pool_view_is_open      (TesseraPoolView *view);
/* Stops the sources in the poller's thread (dispose). */
void      _tessera_pool_view_stop         (TesseraPoolView *view);

/* The thread lock alone: what the poller's thread takes. Property
 * notifications raised under it are held back until it is released. */
void      _tessera_pool_view_lock_thread   (TesseraPoolView *view);
void      _tessera_pool_view_unlock_thread (TesseraPoolView *view);
/* The store's exclusion (ipc.lock) then the thread lock, always in that
 * order; the token to give back, TESSERA_POOL_VIEW_NO_IPC_LOCK, or -1
 * with @error. Unlocking wakes this process's waiters when a refresh
 * under the locks changed something. */
int       _tessera_pool_view_lock          (TesseraPoolView *view,
                                            GError         **error);
void      _tessera_pool_view_unlock        (TesseraPoolView *view,
                                            int              fd);
/* The seed's `_update`, incremental; every holder when @full. Both
 * locks held. */
void      _tessera_pool_view_refresh       (TesseraPoolView *view,
                                            gboolean         full);
/* Marks the view for a full re-read by the next refresh. Thread lock held. */
void      _tessera_pool_view_force_scan    (TesseraPoolView *view);
/* Something changed under the locks: wake this process's waiters on unlock. */
void      _tessera_pool_view_mark_changed  (TesseraPoolView *view);

/* Replaces the informations under both locks, once the resource type
 * accepted them; this process's waiters are woken. */
gboolean  _tessera_pool_view_write_informations (TesseraPoolView *view,
                                                 JsonNode        *informations,
                                                 GError         **error);

/* The store: its holders and informations (tessera-pool-store-private.h
 * says under which lock each is called). Made with the view. */
TesseraPoolStore *_tessera_pool_view_get_store (TesseraPoolView *view);

G_END_DECLS
