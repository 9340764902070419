/* tsan-glib.c: tells ThreadSanitizer what GLib's locks order.
 *
 * Debian's GLib is not built with -fsanitize=thread, and its GMutex, GCond
 * and GAsyncQueue are raw futexes that TSan cannot see, so every access
 * they protect would be reported as a race. Linked into the executables of
 * a -Db_sanitize=thread build only (see tests/meson.build), these wrappers
 * take the place of GLib's functions for every library that calls them
 * through the PLT (ours, GObject, GIO), call the real ones, and annotate the
 * happens-before edge each lock creates. What they cannot reach (GLib's own
 * internal locking) is listed, with reasons, in tests/tsan.supp.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib.h>
#include <glib-object.h>

#include <dlfcn.h>
#include <string.h>
#include <sanitizer/tsan_interface.h>

/* dlsym() gives an object pointer; ISO C has no cast to a function
 * pointer, hence the copy. */
#define REAL(name, ret, args)                                             \
  static ret (*real) args;                                                \
  if (G_UNLIKELY (real == NULL))                                          \
    {                                                                     \
      void *symbol = dlsym (RTLD_NEXT, name);                             \
      memcpy (&real, &symbol, sizeof real);                               \
    }

/* Each function is declared by glib.h; these are their definitions. */

void
g_mutex_lock (GMutex *mutex)
{
  REAL ("g_mutex_lock", void, (GMutex *));
  real (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_mutex_trylock (GMutex *mutex)
{
  gboolean locked;
  REAL ("g_mutex_trylock", gboolean, (GMutex *));
  locked = real (mutex);
  if (locked)
    __tsan_acquire (mutex);
  return locked;
}

void
g_mutex_unlock (GMutex *mutex)
{
  REAL ("g_mutex_unlock", void, (GMutex *));
  __tsan_release (mutex);
  real (mutex);
}

void
g_rec_mutex_lock (GRecMutex *mutex)
{
  REAL ("g_rec_mutex_lock", void, (GRecMutex *));
  real (mutex);
  __tsan_acquire (mutex);
}

gboolean
g_rec_mutex_trylock (GRecMutex *mutex)
{
  gboolean locked;
  REAL ("g_rec_mutex_trylock", gboolean, (GRecMutex *));
  locked = real (mutex);
  if (locked)
    __tsan_acquire (mutex);
  return locked;
}

void
g_rec_mutex_unlock (GRecMutex *mutex)
{
  REAL ("g_rec_mutex_unlock", void, (GRecMutex *));
  __tsan_release (mutex);
  real (mutex);
}

void
g_rw_lock_writer_lock (GRWLock *lock)
{
  REAL ("g_rw_lock_writer_lock", void, (GRWLock *));
  real (lock);
  __tsan_acquire (lock);
}

void
g_rw_lock_writer_unlock (GRWLock *lock)
{
  REAL ("g_rw_lock_writer_unlock", void, (GRWLock *));
  __tsan_release (lock);
  real (lock);
}

void
g_rw_lock_reader_lock (GRWLock *lock)
{
  REAL ("g_rw_lock_reader_lock", void, (GRWLock *));
  real (lock);
  __tsan_acquire (lock);
}

void
g_rw_lock_reader_unlock (GRWLock *lock)
{
  REAL ("g_rw_lock_reader_unlock", void, (GRWLock *));
  __tsan_release (lock);
  real (lock);
}

void
g_cond_wait (GCond *cond, GMutex *mutex)
{
  REAL ("g_cond_wait", void, (GCond *, GMutex *));
  __tsan_release (mutex);
  real (cond, mutex);
  __tsan_acquire (mutex);
}

gboolean
g_cond_wait_until (GCond *cond, GMutex *mutex, gint64 end_time)
{
  gboolean signalled;
  REAL ("g_cond_wait_until", gboolean, (GCond *, GMutex *, gint64));
  __tsan_release (mutex);
  signalled = real (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}

gboolean
(g_once_init_enter) (volatile void *location)
{
  gboolean enter;
  REAL ("g_once_init_enter", gboolean, (volatile void *));
  enter = real (location);
  if (!enter)
    __tsan_acquire ((void *) location);
  return enter;
}

void
(g_once_init_leave) (volatile void *location, gsize result)
{
  REAL ("g_once_init_leave", void, (volatile void *, gsize));
  __tsan_release ((void *) location);
  real (location, result);
}

void
g_async_queue_push (GAsyncQueue *queue, gpointer data)
{
  REAL ("g_async_queue_push", void, (GAsyncQueue *, gpointer));
  __tsan_release (queue);
  real (queue, data);
}

gpointer
g_async_queue_pop (GAsyncQueue *queue)
{
  gpointer data;
  REAL ("g_async_queue_pop", gpointer, (GAsyncQueue *));
  data = real (queue);
  __tsan_acquire (queue);
  return data;
}

gpointer
g_async_queue_try_pop (GAsyncQueue *queue)
{
  gpointer data;
  REAL ("g_async_queue_try_pop", gpointer, (GAsyncQueue *));
  data = real (queue);
  if (data != NULL)
    __tsan_acquire (queue);
  return data;
}

gpointer
g_async_queue_timeout_pop (GAsyncQueue *queue, guint64 timeout)
{
  gpointer data;
  REAL ("g_async_queue_timeout_pop", gpointer, (GAsyncQueue *, guint64));
  data = real (queue, timeout);
  if (data != NULL)
    __tsan_acquire (queue);
  return data;
}

/* GObject's reference count is an atomic TSan cannot see either. The last
 * unref finalizes the object, in whichever thread drops it last (a GSource
 * callback on Tessera's poller thread may hold the last reference for a
 * moment after the application dropped its own): every unref releases,
 * and then acquires what the other threads released, so that finalize
 * happens after every use. */
static void (*real_object_unref) (gpointer);

/* Found before main(): unlike the locks above, unrefs come from several
 * threads from the start, and a lazy lookup would itself race. */
__attribute__((constructor)) static void
find_object_unref (void)
{
  void *symbol = dlsym (RTLD_NEXT, "g_object_unref");

  memcpy (&real_object_unref, &symbol, sizeof real_object_unref);
}

void
g_object_unref (gpointer object)
{
  __tsan_release (object);
  __tsan_acquire (object);
  real_object_unref (object);
}
