/* tessera-gpu.h: the gpu plugin's classes and device lists (private to
 * the plugin).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* One device: its index in PCI bus order, its UUID and memory when known. */
typedef struct
{
  int index;
  char *uuid;          /* NULL when unknown */
  guint64 memory_mib;  /* 0 when unknown */
} TesseraGpuDevice;

GArray   *tessera_gpu_devices_new        (void);
GArray   *tessera_gpu_devices_parse_spec (const char *spec, GError **error);
GArray   *tessera_gpu_devices_detect     (void);
GArray   *tessera_gpu_devices_from_json  (JsonNode *node, gboolean need_memory, GError **error);
JsonNode *tessera_gpu_devices_to_json    (GArray *devices, gboolean with_memory);
char    **tessera_gpu_devices_environment (GArray *devices);

#define TESSERA_TYPE_GPU (tessera_gpu_get_type ())
G_DECLARE_FINAL_TYPE (TesseraGpu, tessera_gpu, TESSERA, GPU, TesseraTrackedDynamicResource)

#define TESSERA_TYPE_GPU_LOCK_FILE (tessera_gpu_lock_file_get_type ())
G_DECLARE_FINAL_TYPE (TesseraGpuLockFile, tessera_gpu_lock_file, TESSERA, GPU_LOCK_FILE, TesseraDynamicLockFile)

#define TESSERA_TYPE_GPU_DEPENDENCY (tessera_gpu_dependency_get_type ())
G_DECLARE_FINAL_TYPE (TesseraGpuDependency, tessera_gpu_dependency, TESSERA, GPU_DEPENDENCY, TesseraDynamicDependency)

#define TESSERA_TYPE_GPU_LOCK (tessera_gpu_lock_get_type ())
G_DECLARE_FINAL_TYPE (TesseraGpuLock, tessera_gpu_lock, TESSERA, GPU_LOCK, TesseraDynamicDependencyLock)

#define TESSERA_TYPE_GPU_JOB_LOCK (tessera_gpu_job_lock_get_type ())
G_DECLARE_FINAL_TYPE (TesseraGpuJobLock, tessera_gpu_job_lock, TESSERA, GPU_JOB_LOCK, TesseraJobDependencyLock)

void _tessera_gpu_register (GTypeModule *module);
void _tessera_gpu_lock_file_register (GTypeModule *module);
void _tessera_gpu_dependency_register (GTypeModule *module);
void _tessera_gpu_lock_register (GTypeModule *module);
void _tessera_gpu_job_lock_register (GTypeModule *module);

GArray  *tessera_gpu_lock_file_get_devices   (TesseraGpuLockFile *self);
int      tessera_gpu_dependency_get_count      (TesseraGpuDependency *self);
guint64  tessera_gpu_dependency_get_min_memory (TesseraGpuDependency *self);
GArray  *tessera_gpu_dependency_get_assigned   (TesseraGpuDependency *self);
void     tessera_gpu_dependency_set_assigned   (TesseraGpuDependency *self, GArray *devices);
void     tessera_gpu_dependency_set_choice     (TesseraGpuDependency *self, GArray *devices);
GArray  *tessera_gpu_dependency_take_choice    (TesseraGpuDependency *self);

G_END_DECLS
