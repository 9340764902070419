/* tessera-lock.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_LOCK (tessera_lock_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraLock, tessera_lock, TESSERA, LOCK, GObject)

/**
 * TesseraLockClass:
 * @do_acquire: really takes the lock; called when the level goes from 0 to 1
 * @do_release: really lets the lock go; called when the level drops back to 0
 *   on a lock that is not detached
 *
 * The class of [class@Tessera.Lock]: subclasses implement the seed's
 * `_acquire` and `_release`.
 */
/**
 * TesseraLockClass::do_acquire:
 * @self: the lock
 * @error: return location for a #GError
 *
 * Really takes the lock: called by [method@Tessera.Lock.acquire] when the
 * level goes from 0 to 1, on the thread that calls it, with no Tessera
 * lock held (it may block, for instance on ipc.lock).
 *
 * Returns: %TRUE when the lock is taken; %FALSE with @error set otherwise
 */

/**
 * TesseraLockClass::do_release:
 * @self: the lock
 * @error: return location for a #GError
 *
 * Really lets the lock go: called by [method@Tessera.Lock.release] when
 * the level drops back to 0 on a lock that is not detached, on the thread
 * that calls it, with no Tessera lock held. The lock counts as released
 * by its object whatever this returns.
 *
 * Returns: %TRUE when released; %FALSE with @error set when something
 *   stays behind
 */

struct _TesseraLockClass
{
  GObjectClass parent_class;

  gboolean (*do_acquire) (TesseraLock *self,
                          GError     **error);
  gboolean (*do_release) (TesseraLock *self,
                          GError     **error);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_lock_acquire     (TesseraLock *self,
                                   GError     **error);
TESSERA_AVAILABLE_IN_ALL
gboolean tessera_lock_release     (TesseraLock *self,
                                   GError     **error);
TESSERA_AVAILABLE_IN_ALL
void     tessera_lock_detach      (TesseraLock *self);
TESSERA_AVAILABLE_IN_ALL
gboolean tessera_lock_is_detached (TesseraLock *self);
TESSERA_AVAILABLE_IN_ALL
guint    tessera_lock_get_level   (TesseraLock *self);

G_END_DECLS
