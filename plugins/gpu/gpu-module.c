/* gpu-module.c: the entry point the registry calls on loading.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gmodule.h>

#include "tessera-gpu.h"

G_MODULE_EXPORT void tessera_gpu_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_gpu_register_types (GTypeModule *module)
{
  _tessera_gpu_lock_file_register (module);
  _tessera_gpu_dependency_register (module);
  _tessera_gpu_job_lock_register (module);
  _tessera_gpu_lock_register (module);
  _tessera_gpu_register (module);

  tessera_registry_register_resource_type ("gpu", TESSERA_TYPE_GPU);
  tessera_dynamic_dependency_lock_register_class (TESSERA_TYPE_GPU_LOCK, "tessera.gpu", "GpuLock");
}
