/* slurm-module.c: the entry point the registry calls on loading.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gmodule.h>

#include "tessera-slurm-process-type.h"

G_MODULE_EXPORT void tessera_slurmjobs_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_slurmjobs_register_types (GTypeModule *module)
{
  _tessera_slurm_process_type_register (module);
  tessera_registry_register_process_type ("slurm", TESSERA_TYPE_SLURM_PROCESS_TYPE);
}
