/* tessera-counter-lock-file.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-version.h>
#include <tessera/tessera-dynamic-lock-file.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_COUNTER_LOCK_FILE (tessera_counter_lock_file_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraCounterLockFile, tessera_counter_lock_file, TESSERA, COUNTER_LOCK_FILE, TesseraDynamicLockFile)

/**
 * TesseraCounterLockFileClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.CounterLockFile]. A subclass that reads more
 * of "information" overrides
 * [vfunc@Tessera.DynamicLockFile.from_information] and chains up first.
 */
struct _TesseraCounterLockFileClass
{
  TesseraDynamicLockFileClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
gint64 tessera_counter_lock_file_get_count (TesseraCounterLockFile *self);

G_END_DECLS
