/* tessera-dynamic-resource-private.h: waiting on a resource: polling,
 * wakers, watches, where its pool lives and how it is granted
 * (core/tessera-dynamic-resource.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Waiting */
/* The longest polling interval while somebody waits (set once, at init). */
void _tessera_dynamic_resource_set_poll_interval_max (TesseraDynamicResource *self,
                                                      double                  seconds);
/* Whether waits poll at all (a store whose notification misses nothing
 * turns it off; set once, at init). */
void _tessera_dynamic_resource_set_polling (TesseraDynamicResource *self,
                                            gboolean                polling);
/* Fallback polling while somebody waits: each begin is matched by an end. */
void _tessera_dynamic_resource_begin_polling (TesseraDynamicResource *self);
void _tessera_dynamic_resource_end_polling   (TesseraDynamicResource *self);
/* tessera_dynamic_resource_wait() up to a monotonic @deadline (-1: for
 * ever), for the retry loops that keep one deadline across attempts. */
gboolean _tessera_dynamic_resource_wait_until (TesseraDynamicResource *self,
                                               guint64                 generation,
                                               gint64                  deadline,
                                               GCancellable           *cancellable,
                                               GError                **error);
gpointer _tessera_dynamic_resource_add_waker    (TesseraDynamicResource *self,
                                                GMainContext           *context,
                                                GSourceFunc             func,
                                                gpointer                data,
                                                GDestroyNotify          destroy);
void     _tessera_dynamic_resource_remove_waker (TesseraDynamicResource *self,
                                                gpointer                handle);
/* Watching (the poller's thread, the resource type's watches) starts at
 * the first wait, not when the resource is made: a process that only takes
 * what is free and leaves pays for none of it. @func (set once, at init)
 * starts the resource type's watches, once, with no lock held; it ends
 * with tessera_dynamic_resource_notify_changed(), since what changed
 * before its watches began is known only to a full read. */
typedef void (*TesseraWatchStartFunc) (TesseraDynamicResource *self,
                                       gpointer                data);
/* @wait_begin (nullable) runs at the start of every wait, once it is
 * counted by _tessera_dynamic_resource_has_waiters(), with no lock held. */
void _tessera_dynamic_resource_set_watch_start  (TesseraDynamicResource *self,
                                                 TesseraWatchStartFunc   func,
                                                 TesseraWatchStartFunc   wait_begin,
                                                 gpointer                data);
/* Whether a wait is under way on @self: lock-free, for any lock held. */
gboolean _tessera_dynamic_resource_has_waiters  (TesseraDynamicResource *self);
/* Starts the poller's thread only (a resource type whose watches began
 * on their own, under its locks). */
void _tessera_dynamic_resource_start_thread     (TesseraDynamicResource *self);
/* Where polling is the primary path (no inotify): the longest interval. */
#define TESSERA_POLL_INTERVAL_MAX_UNWATCHED 2.0
/* The context of the resource's own poller, where its watches run. */
GMainContext *_tessera_dynamic_resource_get_context (TesseraDynamicResource *self);

/* Where its pool lives */
/* The lock folder of a pool in the folder store (copied), set once by a
 * tracked resource at its init; %NULL (the default): its pool is
 * elsewhere (another store), or it has none. */
void     _tessera_dynamic_resource_set_pool_folder  (TesseraDynamicResource *self,
                                                     const char             *folder);
/* Whether @self's pool lives in its folder (the folder store), the only
 * place where holders are files and there is an ipc.lock. */
gboolean _tessera_dynamic_resource_in_a_folder       (TesseraDynamicResource *self);
/* (nullable): that lock folder, or %NULL. */
const char *_tessera_dynamic_resource_get_pool_folder (TesseraDynamicResource *self);

/* Granting */
/* How a dependency's lock is granted, told its job's process and
 * released on a resource whose pool keeps its holders: set once by a
 * tracked resource at its init, and called by the dependency lock's
 * defaults, which so reach the tracked resource without naming it (it
 * calls the dependency, which makes the lock: naming it would make a
 * cycle the layers suite refuses). A table, not virtual functions of
 * the resource's class: TesseraDynamicResourceClass is public API, and
 * these are the tracked resource's own protocol, which no type
 * overrides (its types override do_acquire and do_release, which it
 * calls). */
typedef struct
{
  /* Does not wait. @token: (out): the grant's fencing token (0: the
   * store gives none). FALSE with TESSERA_ERROR_UNAVAILABLE when full. */
  gboolean (*acquire)        (TesseraDynamicResource    *self,
                              TesseraDynamicDependency  *dependency,
                              gint64                    *token,
                              GError                   **error);
  /* A holding already gone is no error. */
  gboolean (*release)        (TesseraDynamicResource    *self,
                              TesseraDynamicDependency  *dependency,
                              GError                   **error);
  /* Names @process as the holder, so that its end frees the holding. */
  gboolean (*record_process) (TesseraDynamicResource    *self,
                              TesseraDynamicDependency  *dependency,
                              TesseraProcess            *process,
                              GError                   **error);
} TesseraGrantFuncs;
/* @funcs (static) is kept, not copied. */
void _tessera_dynamic_resource_set_grant (TesseraDynamicResource  *self,
                                          const TesseraGrantFuncs *funcs);
/* (nullable): what was set, or %NULL (the default): a resource whose
 * dependency lock class grants it itself. */
const TesseraGrantFuncs *_tessera_dynamic_resource_get_grant (TesseraDynamicResource *self);

G_END_DECLS
