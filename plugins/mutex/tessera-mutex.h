/* tessera-mutex.h: the mutex plugin's classes (private to the plugin).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_MUTEX (tessera_mutex_get_type ())
G_DECLARE_FINAL_TYPE (TesseraMutex, tessera_mutex, TESSERA, MUTEX, TesseraTrackedDynamicResource)

#define TESSERA_TYPE_MUTEX_LOCK_FILE (tessera_mutex_lock_file_get_type ())
G_DECLARE_FINAL_TYPE (TesseraMutexLockFile, tessera_mutex_lock_file, TESSERA, MUTEX_LOCK_FILE, TesseraDynamicLockFile)

#define TESSERA_TYPE_MUTEX_DEPENDENCY (tessera_mutex_dependency_get_type ())
G_DECLARE_FINAL_TYPE (TesseraMutexDependency, tessera_mutex_dependency, TESSERA, MUTEX_DEPENDENCY, TesseraDynamicDependency)

#define TESSERA_TYPE_MUTEX_LOCK (tessera_mutex_lock_get_type ())
G_DECLARE_FINAL_TYPE (TesseraMutexLock, tessera_mutex_lock, TESSERA, MUTEX_LOCK, TesseraDynamicDependencyLock)

void _tessera_mutex_register (GTypeModule *module);
void _tessera_mutex_lock_file_register (GTypeModule *module);
void _tessera_mutex_dependency_register (GTypeModule *module);
void _tessera_mutex_lock_register (GTypeModule *module);

gboolean tessera_mutex_lock_file_is_shared (TesseraMutexLockFile *self);
gboolean tessera_mutex_dependency_is_shared (TesseraMutexDependency *self);
/* The intent an exclusive request leaves while it waits: a file's path,
 * or (@in_store) the name of its resource's store's entry. */
void     tessera_mutex_dependency_set_intent (TesseraMutexDependency *self, const char *intent,
                                              gboolean in_store);
void     tessera_mutex_dependency_drop_intent (TesseraMutexDependency *self);
void     tessera_mutex_dependency_set_queued (TesseraMutexDependency *self);
gboolean tessera_mutex_dependency_take_queued (TesseraMutexDependency *self);
/* The kind of the mutex's intents: its side folder F/intents/ on a
 * folder pool, its side entries intents/NAME on a store that keeps them
 * (etcd). The plugin spells it only here. */
#define TESSERA_MUTEX_INTENTS "intents"

/* F/intents/, where exclusive waiters leave their intents on a folder
 * pool: the resource reads and sweeps them, a dependency drops its own.
 * Core opens it (never through a link) and makes it with the pool's
 * sharing: -1 when it is missing, not a real folder, or the pool has no
 * folder. */
static inline int
_tessera_mutex_open_intents (const char *lock_folder, gboolean create)
{
  return tessera_pool_part_open_side_folder (lock_folder, TESSERA_MUTEX_INTENTS, create);
}

G_END_DECLS
