/* tessera-mutex-lock.c: the scheduler-side lock of a mutex; its locks.json
 * entry says which mutex and in which mode. The job side is the core's
 * plain job lock (verify, then delete, the lock file).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-mutex.h"

struct _TesseraMutexLock
{
  TesseraDynamicDependencyLock parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraMutexLock, tessera_mutex_lock, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK)

static void
to_json (TesseraDynamicDependencyLock *lock, JsonObject *object)
{
  TesseraDynamicDependency *dependency = tessera_dynamic_dependency_lock_get_dependency (lock);
  TesseraDynamicResource *mutex = tessera_dynamic_dependency_get_resource (dependency);
  /* Where the pool lives: its folder, or its key in another store. */
  g_autofree char *location = tessera_tracked_dynamic_resource_dup_location (TESSERA_TRACKED_DYNAMIC_RESOURCE (mutex));

  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (tessera_mutex_lock_parent_class)->to_json (lock, object);
  json_object_set_string_member (object, "mutex_path", location);
  json_object_set_string_member (object, "name", tessera_dynamic_resource_get_name (mutex));
  json_object_set_string_member (object, "mode",
    tessera_mutex_dependency_is_shared (TESSERA_MUTEX_DEPENDENCY (dependency)) ? "shared" : "exclusive");
}

static void
tessera_mutex_lock_class_init (TesseraMutexLockClass *klass)
{
  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (klass)->to_json = to_json;
}

static void
tessera_mutex_lock_class_finalize (TesseraMutexLockClass *klass)
{
}

static void
tessera_mutex_lock_init (TesseraMutexLock *self)
{
}

void
_tessera_mutex_lock_register (GTypeModule *module)
{
  tessera_mutex_lock_register_type (module);
}
