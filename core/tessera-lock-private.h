/* tessera-lock-private.h: what core asks of a lock (core/tessera-lock.c),
 * never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* A lock that holds what it holds without its do_acquire (tessera-lock.c). */
void        _tessera_lock_set_held      (TesseraLock    *self);

G_END_DECLS
