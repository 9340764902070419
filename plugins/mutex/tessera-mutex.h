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
/* The intent an exclusive request leaves while it waits: the name of its
 * resource's side entry. */
void     tessera_mutex_dependency_set_intent (TesseraMutexDependency *self, const char *intent);
void     tessera_mutex_dependency_drop_intent (TesseraMutexDependency *self);
void     tessera_mutex_dependency_set_queued (TesseraMutexDependency *self);
gboolean tessera_mutex_dependency_take_queued (TesseraMutexDependency *self);
/* The kind of the mutex's intents, side entries of its pool (in a lock
 * folder, its side folder F/intents/; on etcd, keys intents/NAME). The
 * plugin spells it only here. */
#define TESSERA_MUTEX_INTENTS "intents"

G_END_DECLS
