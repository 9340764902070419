/* tessera-process-type.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-process.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_PROCESS_TYPE (tessera_process_type_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraProcessType, tessera_process_type, TESSERA, PROCESS_TYPE, GObject)

/**
 * TesseraProcessTypeClass:
 * @parent_class: the parent class
 * @check: judges a process spec of this type; see
 *   [method@Tessera.ProcessType.check]
 *
 * The virtual methods of a process type.
 */
struct _TesseraProcessTypeClass
{
  GObjectClass parent_class;

  TesseraProcessState (*check) (TesseraProcessType *self,
                                TesseraProcess     *process);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraProcessState tessera_process_type_check (TesseraProcessType *self,
                                                TesseraProcess     *process);

G_END_DECLS
