/* tessera-locks.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-lock.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_LOCKS (tessera_locks_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraLocks, tessera_locks, TESSERA, LOCKS, TesseraLock)

/**
 * TesseraLocksClass:
 *
 * The class of [class@Tessera.Locks].
 */
struct _TesseraLocksClass
{
  TesseraLockClass parent_class;

  /*< private >*/
  gpointer padding[4];
};

TESSERA_AVAILABLE_IN_ALL
TesseraLocks *tessera_locks_new       (void);
TESSERA_AVAILABLE_IN_ALL
void          tessera_locks_append    (TesseraLocks *self,
                                       TesseraLock  *lock);
TESSERA_AVAILABLE_IN_ALL
void          tessera_locks_clear     (TesseraLocks *self);
TESSERA_AVAILABLE_IN_ALL
GPtrArray    *tessera_locks_get_locks (TesseraLocks *self);

G_END_DECLS
