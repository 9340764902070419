/* tessera-locks.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <tessera/tessera.h>

/**
 * TesseraLocks:
 *
 * The seed's `Locks`: a lock made of other locks, taken in the order they
 * were appended. When one of them fails, those already taken are released
 * again (in reverse order), so a failed acquire holds nothing.
 */
typedef struct
{
  GPtrArray *locks;
} TesseraLocksPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TesseraLocks, tessera_locks, TESSERA_TYPE_LOCK)

static gboolean
tessera_locks_do_acquire (TesseraLock *lock, GError **error)
{
  TesseraLocksPrivate *priv = tessera_locks_get_instance_private (TESSERA_LOCKS (lock));

  for (guint i = 0; i < priv->locks->len; i++)
    if (!tessera_lock_acquire (g_ptr_array_index (priv->locks, i), error))
      {
        while (i-- > 0)
          tessera_lock_release (g_ptr_array_index (priv->locks, i), NULL);
        return FALSE;
      }
  return TRUE;
}

/* Every member is released; the first failure is reported. */
static gboolean
tessera_locks_do_release (TesseraLock *lock, GError **error)
{
  TesseraLocksPrivate *priv = tessera_locks_get_instance_private (TESSERA_LOCKS (lock));
  g_autoptr(GError) first = NULL;

  for (guint i = 0; i < priv->locks->len; i++)
    {
      g_autoptr(GError) local = NULL;

      if (!tessera_lock_release (g_ptr_array_index (priv->locks, i), &local) && first == NULL)
        first = g_steal_pointer (&local);
    }
  if (first == NULL)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&first));
  return FALSE;
}

static void
tessera_locks_dispose (GObject *object)
{
  TesseraLocksPrivate *priv = tessera_locks_get_instance_private (TESSERA_LOCKS (object));

  /* Release through the parent first, while the members still exist. */
  G_OBJECT_CLASS (tessera_locks_parent_class)->dispose (object);
  g_ptr_array_set_size (priv->locks, 0);
}

static void
tessera_locks_finalize (GObject *object)
{
  TesseraLocksPrivate *priv = tessera_locks_get_instance_private (TESSERA_LOCKS (object));

  g_ptr_array_unref (priv->locks);
  G_OBJECT_CLASS (tessera_locks_parent_class)->finalize (object);
}

static void
tessera_locks_class_init (TesseraLocksClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraLockClass *lock_class = TESSERA_LOCK_CLASS (klass);

  object_class->dispose = tessera_locks_dispose;
  object_class->finalize = tessera_locks_finalize;
  lock_class->do_acquire = tessera_locks_do_acquire;
  lock_class->do_release = tessera_locks_do_release;
}

static void
tessera_locks_init (TesseraLocks *self)
{
  TesseraLocksPrivate *priv = tessera_locks_get_instance_private (self);

  priv->locks = g_ptr_array_new_with_free_func (g_object_unref);
}

/**
 * tessera_locks_new:
 *
 * Makes an empty set of locks, acquired and released together.
 *
 * Returns: (transfer full): a new, empty set of locks
 */
TesseraLocks *
tessera_locks_new (void)
{
  return g_object_new (TESSERA_TYPE_LOCKS, NULL);
}

/**
 * tessera_locks_append:
 * @self: a set of locks
 * @lock: a lock to take after those already in @self
 *
 * Adds @lock to the set. A set is filled (and cleared) by one thread at a
 * time, not while another takes or lets it go.
 */
void
tessera_locks_append (TesseraLocks *self,
                      TesseraLock  *lock)
{
  TesseraLocksPrivate *priv;

  g_return_if_fail (TESSERA_IS_LOCKS (self));
  g_return_if_fail (TESSERA_IS_LOCK (lock));
  priv = tessera_locks_get_instance_private (self);
  g_ptr_array_add (priv->locks, g_object_ref (lock));
}

/**
 * tessera_locks_clear:
 * @self: a set of locks
 *
 * Forgets every lock of the set without releasing any.
 */
void
tessera_locks_clear (TesseraLocks *self)
{
  TesseraLocksPrivate *priv;

  g_return_if_fail (TESSERA_IS_LOCKS (self));
  priv = tessera_locks_get_instance_private (self);
  g_ptr_array_set_size (priv->locks, 0);
}

/**
 * tessera_locks_get_locks:
 * @self: a set of locks
 *
 * The locks of the set, in the order they were appended.
 *
 * Returns: (transfer none) (element-type TesseraLock): the locks of the set
 */
GPtrArray *
tessera_locks_get_locks (TesseraLocks *self)
{
  TesseraLocksPrivate *priv;

  g_return_val_if_fail (TESSERA_IS_LOCKS (self), NULL);
  priv = tessera_locks_get_instance_private (self);
  return priv->locks;
}
