/* tessera-slurm-process-type.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_SLURM_PROCESS_TYPE (tessera_slurm_process_type_get_type ())
G_DECLARE_FINAL_TYPE (TesseraSlurmProcessType, tessera_slurm_process_type,
                      TESSERA, SLURM_PROCESS_TYPE, TesseraProcessType)

void _tessera_slurm_process_type_register (GTypeModule *module);

G_END_DECLS
