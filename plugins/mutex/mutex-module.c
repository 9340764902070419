/* mutex-module.c: the entry point the registry calls on loading.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gmodule.h>

#include "tessera-mutex.h"

G_MODULE_EXPORT void tessera_mutex_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_mutex_register_types (GTypeModule *module)
{
  _tessera_mutex_lock_file_register (module);
  _tessera_mutex_dependency_register (module);
  _tessera_mutex_lock_register (module);
  _tessera_mutex_register (module);

  tessera_registry_register_resource_type ("mutex", TESSERA_TYPE_MUTEX);
  tessera_dynamic_dependency_lock_register_class (TESSERA_TYPE_MUTEX_LOCK, "tessera.mutex", "MutexLock");
}
