/* tessera-lock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-lock-private.h"
#include "tessera-private.h"

/**
 * TesseraLock:
 *
 * The seed's `Lock`: acquiring counts levels, so a lock taken twice is
 * really taken once and really released when the level drops back to zero.
 * A detached lock is never released by this object: the holding has been
 * handed on (for instance to a job process that releases it through its
 * [class@Tessera.JobDependencyLock]).
 *
 * A lock still held when the object is finalized is released then.
 *
 * One lock object may be taken and let go from several threads: its level
 * and the real taking and letting go are serialised (a thread taking it
 * while another really takes or lets it go waits for that to end); its
 * level and whether it is detached may be asked at any time, without
 * waiting.
 */
typedef struct
{
  /* Guards the level and the real taking and letting go, so that two
   * threads may use one lock; recursive, as a subclass's do_acquire or
   * do_release may ask for the level. */
  GRecMutex mutex;
  /* Written under the mutex, read without it (atomically): a question of
   * another thread never waits for a taking blocked on a busy folder. */
  gint level;
  gint detached;
} TesseraLockPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TesseraLock, tessera_lock, G_TYPE_OBJECT)

static void
tessera_lock_dispose (GObject *object)
{
  TesseraLock *self = TESSERA_LOCK (object);
  TesseraLockPrivate *priv = tessera_lock_get_instance_private (self);

  g_rec_mutex_lock (&priv->mutex);
  if (priv->level > 0)
    {
      g_autoptr(GError) error = NULL;

      /* Nobody is left to be told: say why the holding stays. */
      g_atomic_int_set (&priv->level, 1);
      if (!tessera_lock_release (self, &error))
        g_warning (_("Cannot release a lock: %s"), error->message);
    }
  g_rec_mutex_unlock (&priv->mutex);
  G_OBJECT_CLASS (tessera_lock_parent_class)->dispose (object);
}

static void
tessera_lock_finalize (GObject *object)
{
  TesseraLockPrivate *priv = tessera_lock_get_instance_private (TESSERA_LOCK (object));

  g_rec_mutex_clear (&priv->mutex);
  G_OBJECT_CLASS (tessera_lock_parent_class)->finalize (object);
}

static gboolean
tessera_lock_real_do_acquire (TesseraLock *self, GError **error)
{
  return TRUE;
}

static gboolean
tessera_lock_real_do_release (TesseraLock *self, GError **error)
{
  return TRUE;
}

static void
tessera_lock_class_init (TesseraLockClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = tessera_lock_dispose;
  G_OBJECT_CLASS (klass)->finalize = tessera_lock_finalize;
  klass->do_acquire = tessera_lock_real_do_acquire;
  klass->do_release = tessera_lock_real_do_release;
}

static void
tessera_lock_init (TesseraLock *self)
{
  TesseraLockPrivate *priv = tessera_lock_get_instance_private (self);

  g_rec_mutex_init (&priv->mutex);
}

/**
 * tessera_lock_acquire:
 * @self: a lock
 * @error: return location for a #GError
 *
 * Takes the lock, or adds a level when it is already held.
 *
 * Returns: %TRUE when held, %FALSE with @error set otherwise (for a
 *   dynamic dependency lock, %TESSERA_ERROR_UNAVAILABLE when the resource
 *   is full)
 */
gboolean
tessera_lock_acquire (TesseraLock  *self,
                      GError      **error)
{
  TesseraLockPrivate *priv;

  g_return_val_if_fail (TESSERA_IS_LOCK (self), FALSE);
  priv = tessera_lock_get_instance_private (self);

  g_rec_mutex_lock (&priv->mutex);
  if (priv->level == 0 && !TESSERA_LOCK_GET_CLASS (self)->do_acquire (self, error))
    {
      g_rec_mutex_unlock (&priv->mutex);
      return FALSE;
    }
  g_atomic_int_inc (&priv->level);
  g_rec_mutex_unlock (&priv->mutex);
  return TRUE;
}

/**
 * tessera_lock_release:
 * @self: a lock
 * @error: return location for a #GError
 *
 * Drops one level; the lock is really released when no level is left and
 * it is not detached. Releasing a lock that is not held does nothing.
 *
 * When the real release fails (for a dynamic dependency lock: ipc.lock
 * cannot be taken, or the lock file cannot be deleted), this object holds
 * the lock no more all the same, and @error says what stays behind: a
 * lock file that still counts until its holder is judged dead.
 *
 * Returns: %TRUE when released (or only a level dropped); %FALSE with
 *   @error set when the real release failed
 */
gboolean
tessera_lock_release (TesseraLock  *self,
                      GError      **error)
{
  TesseraLockPrivate *priv;
  gboolean ok = TRUE;

  g_return_val_if_fail (TESSERA_IS_LOCK (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  priv = tessera_lock_get_instance_private (self);

  g_rec_mutex_lock (&priv->mutex);
  if (priv->level > 0 && g_atomic_int_dec_and_test (&priv->level) && !g_atomic_int_get (&priv->detached))
    ok = TESSERA_LOCK_GET_CLASS (self)->do_release (self, error);
  g_rec_mutex_unlock (&priv->mutex);
  return ok;
}

/* Marks @self held (level 1), unless it is held already, for what it
 * holds already: a container filled with held members by acquire_all,
 * whose own do_acquire never ran. Releasing it then releases them. */
void
_tessera_lock_set_held (TesseraLock *self)
{
  TesseraLockPrivate *priv = tessera_lock_get_instance_private (self);

  g_rec_mutex_lock (&priv->mutex);
  if (priv->level == 0)
    g_atomic_int_set (&priv->level, 1);
  g_rec_mutex_unlock (&priv->mutex);
}

/**
 * tessera_lock_detach:
 * @self: a lock
 *
 * Hands the holding on: from now on this object never releases it.
 */
void
tessera_lock_detach (TesseraLock *self)
{
  TesseraLockPrivate *priv;

  g_return_if_fail (TESSERA_IS_LOCK (self));
  priv = tessera_lock_get_instance_private (self);
  g_atomic_int_set (&priv->detached, TRUE);
}

/**
 * tessera_lock_is_detached:
 * @self: a lock
 *
 * Whether the lock was detached: releasing it no longer lets the
 * resource go.
 *
 * Returns: whether [method@Tessera.Lock.detach] was called
 */
gboolean
tessera_lock_is_detached (TesseraLock *self)
{
  TesseraLockPrivate *priv;

  g_return_val_if_fail (TESSERA_IS_LOCK (self), FALSE);
  priv = tessera_lock_get_instance_private (self);
  return g_atomic_int_get (&priv->detached);
}

/**
 * tessera_lock_get_level:
 * @self: a lock
 *
 * The lock's re-entrance level.
 *
 * Returns: how many times the lock was acquired and not yet released
 */
guint
tessera_lock_get_level (TesseraLock *self)
{
  TesseraLockPrivate *priv;

  g_return_val_if_fail (TESSERA_IS_LOCK (self), 0);
  priv = tessera_lock_get_instance_private (self);
  return (guint) g_atomic_int_get (&priv->level);
}
