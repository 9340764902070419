/* tessera-wait-queue-private.h: the waiters' queue of a pool
 * (core/tessera-wait-queue.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The waiters' queue of a lock folder (tessera-wait-queue.c). The wait
 * loops mark a dependency as waiting for the length of a lock() call; the
 * tracked resource's acquire reads the queue, counts the reservations
 * before the acquirer's around is_available, and, past the patience, enters
 * the queue (or leaves it). */
typedef struct _TesseraWaitQueueView TesseraWaitQueueView;
void     _tessera_wait_begin                  (TesseraDynamicDependency      *dependency);
void     _tessera_wait_end                    (TesseraDynamicDependency      *dependency);
/* When a waiter that does not reserve yet must try again to start
 * reserving (monotonic µs), or -1. */
gint64   _tessera_wait_get_patience_deadline  (TesseraDynamicDependency      *dependency);
gint64   _tessera_wait_wake_time              (TesseraDynamicDependency      *dependency,
                                               gint64                         deadline);
/* Begins a wait on each; freeing the array ends them. */
GPtrArray *_tessera_wait_begin_all            (TesseraDynamicDependency     **dependencies,
                                               guint                          n_dependencies);
/* @resource: the resource deciding, with @klass, its type's class,
 * which the view calls to count the reservations (account_lock_file…,
 * is_available) and to say what its waiter asks for; both outlive the
 * view. @store: the pool's, which keeps the queue (a folder's queue/,
 * etcd keys) and the resource's min-age that judges its entries; a
 * reservation of a host whose lease expired is dropped, like its
 * holdings. */
struct _TesseraPoolStore;
TesseraWaitQueueView *_tessera_wait_queue_read (TesseraTrackedDynamicResource      *resource,
                                               TesseraTrackedDynamicResourceClass *klass,
                                               double                              patience,
                                               struct _TesseraPoolStore           *store,
                                               TesseraDynamicDependency           *dependency,
                                               const char                         *own_name,
                                               const char                         *job_uri);
/* @name: the resource's, for messages. */
gboolean _tessera_wait_queue_decide          (TesseraWaitQueueView           *view,
                                               TesseraDynamicDependency       *dependency,
                                               const char                     *name,
                                               GError                        **error);
void     _tessera_wait_queue_after_attempt    (TesseraWaitQueueView          *view,
                                               TesseraDynamicDependency      *dependency,
                                               gboolean                       acquired,
                                               gboolean                       full);
void     _tessera_wait_queue_view_free        (TesseraWaitQueueView          *view);
gboolean _tessera_wait_queue_never_served     (TesseraDynamicLockFile        *entry,
                                               gint64                         capacity);
/* (transfer container): the live reserving waiters of @store's queue,
 * shaped like lock files ("information": what each asks for; its time:
 * when it began to wait), the longest waiting first. Both locks held. */
GPtrArray *_tessera_wait_queue_list          (struct _TesseraPoolStore      *store);
/* (transfer container): the live waiters within their patience of the
 * folder pool at @folder (`queue/NAME.waiting`), for people, the longest
 * waiting first, as lock files of @store's type; those found gone
 * removed unless @read_only. Both locks held. */
GPtrArray *_tessera_wait_queue_folder_list_waiting (const char               *folder,
                                                    struct _TesseraPoolStore *store,
                                                    gboolean                  read_only);
/* (transfer container): the live waiters within their patience of
 * @store, whose waiting entries are side entries (its class's
 * waiting_in_side_entries: `waiting/NAME` on etcd), for people,
 * the longest waiting first, as lock files of @store's type. Thread lock
 * held, after a refresh. */
GPtrArray *_tessera_wait_queue_store_list_waiting (struct _TesseraPoolStore *store);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraWaitQueueView, _tessera_wait_queue_view_free)

G_END_DECLS
