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
  gboolean shared;
};

enum { PROP_0, PROP_SHARED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraMutexLock, tessera_mutex_lock, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SHARED)
    g_value_set_boolean (value, TESSERA_MUTEX_LOCK (object)->shared);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SHARED)
    TESSERA_MUTEX_LOCK (object)->shared = g_value_get_boolean (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

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
  json_object_set_string_member (object, "mode", TESSERA_MUTEX_LOCK (lock)->shared ? "shared" : "exclusive");
}

static void
tessera_mutex_lock_class_init (TesseraMutexLockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (klass)->to_json = to_json;

  /* The mode of the dependency that makes the lock, given at its
   * making (it never changes), so that the lock does not read its
   * dependency's class back. */
  props[PROP_SHARED] = g_param_spec_boolean ("shared", NULL, NULL, FALSE,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
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
