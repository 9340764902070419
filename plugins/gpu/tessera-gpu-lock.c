/* tessera-gpu-lock.c: the scheduler-side lock of some GPUs (its locks.json
 * entry lists the devices) and its job-process side, both of which give
 * the job CUDA_VISIBLE_DEVICES.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-gpu.h"

struct _TesseraGpuLock
{
  TesseraDynamicDependencyLock parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraGpuLock, tessera_gpu_lock, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK)

struct _TesseraGpuJobLock
{
  TesseraJobDependencyLock parent_instance;
  GArray *devices;
};

G_DEFINE_DYNAMIC_TYPE (TesseraGpuJobLock, tessera_gpu_job_lock, TESSERA_TYPE_JOB_DEPENDENCY_LOCK)

/* (transfer full) (nullable): the devices granted to the lock's
 * dependency, read through its "assigned" property so that the lock,
 * which the dependency makes, does not call the dependency's class. */
static GArray *
dup_assigned (TesseraDynamicDependencyLock *lock)
{
  GArray *devices = NULL;

  g_object_get (tessera_dynamic_dependency_lock_get_dependency (lock), "assigned", &devices, NULL);
  return devices;
}

static void
gpu_lock_to_json (TesseraDynamicDependencyLock *lock, JsonObject *object)
{
  TesseraDynamicDependency *dependency = tessera_dynamic_dependency_lock_get_dependency (lock);
  TesseraDynamicResource *gpu = tessera_dynamic_dependency_get_resource (dependency);
  /* Where the pool lives: its folder, or its key in another store. */
  g_autofree char *location = tessera_tracked_dynamic_resource_dup_location (TESSERA_TRACKED_DYNAMIC_RESOURCE (gpu));
  g_autoptr(GArray) none = tessera_gpu_devices_new ();
  g_autoptr(GArray) devices = dup_assigned (lock);

  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (tessera_gpu_lock_parent_class)->to_json (lock, object);
  json_object_set_string_member (object, "gpu_path", location);
  json_object_set_string_member (object, "name", tessera_dynamic_resource_get_name (gpu));
  json_object_set_member (object, "devices", tessera_gpu_devices_to_json (devices ? devices : none, FALSE));
}

static char **
gpu_lock_dup_environment (TesseraDynamicDependencyLock *lock)
{
  g_autoptr(GArray) devices = dup_assigned (lock);
  return devices ? tessera_gpu_devices_environment (devices) : NULL;
}

static TesseraJobDependencyLock *
gpu_lock_job_lock_from_json (TesseraDynamicDependencyLockClass *klass, JsonObject *data, GError **error)
{
  JsonNode *path = json_object_get_member (data, "lock_file_path");
  GArray *devices;
  TesseraGpuJobLock *lock;

  /* Absent on a pool in another store (etcd), whose holder is a key. */
  if (path != NULL && (!JSON_NODE_HOLDS_VALUE (path) || json_node_get_value_type (path) != G_TYPE_STRING))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a GPU lock needs a string “lock_file_path”"));
      return NULL;
    }
  devices = tessera_gpu_devices_from_json (json_object_get_member (data, "devices"), FALSE, error);
  if (devices == NULL)
    {
      if (error != NULL && *error != NULL)
        (*error)->code = TESSERA_ERROR_INVALID_LOCK_FILE;
      return NULL;
    }
  lock = g_object_new (TESSERA_TYPE_GPU_JOB_LOCK, "data", data,
                       "lock-file-path", path != NULL ? json_node_get_string (path) : NULL, NULL);
  lock->devices = devices;
  return TESSERA_JOB_DEPENDENCY_LOCK (lock);
}

static void
tessera_gpu_lock_class_init (TesseraGpuLockClass *klass)
{
  TesseraDynamicDependencyLockClass *lock_class = TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (klass);

  lock_class->to_json = gpu_lock_to_json;
  lock_class->dup_environment = gpu_lock_dup_environment;
  lock_class->job_lock_from_json = gpu_lock_job_lock_from_json;
}

static void
tessera_gpu_lock_class_finalize (TesseraGpuLockClass *klass)
{
}

static void
tessera_gpu_lock_init (TesseraGpuLock *self)
{
}

static char **
job_lock_dup_environment (TesseraJobDependencyLock *lock)
{
  return tessera_gpu_devices_environment (TESSERA_GPU_JOB_LOCK (lock)->devices);
}

static void
job_lock_finalize (GObject *object)
{
  g_clear_pointer (&TESSERA_GPU_JOB_LOCK (object)->devices, g_array_unref);
  G_OBJECT_CLASS (tessera_gpu_job_lock_parent_class)->finalize (object);
}

static void
tessera_gpu_job_lock_class_init (TesseraGpuJobLockClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = job_lock_finalize;
  TESSERA_JOB_DEPENDENCY_LOCK_CLASS (klass)->dup_environment = job_lock_dup_environment;
}

static void
tessera_gpu_job_lock_class_finalize (TesseraGpuJobLockClass *klass)
{
}

static void
tessera_gpu_job_lock_init (TesseraGpuJobLock *self)
{
}

void
_tessera_gpu_lock_register (GTypeModule *module)
{
  tessera_gpu_lock_register_type (module);
}

void
_tessera_gpu_job_lock_register (GTypeModule *module)
{
  tessera_gpu_job_lock_register_type (module);
}
