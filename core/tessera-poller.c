/* tessera-poller.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"
#include "tessera-poller-private.h"

/* TesseraPoller: the private thread every resource of a process shares,
 * like experimaestro's single event-loop thread. Its GMainContext runs the
 * file watches and process-exit watches of tracked resources, and the
 * timers of their fallback polling. It knows nothing of resources: each
 * resource keeps its own back-off and arms a timer here for its next
 * poll.
 *
 * The thread starts only when something needs its sources dispatched (a
 * wait begins, or a resource starts watching its folder): a process that
 * takes what is free and leaves, such as `tessera run`, never pays for it.
 * Until then, sources attached to the context just wait.
 *
 * The thread stops when the last reference to the poller is dropped. */
struct _TesseraPoller
{
  guint ref_count;        /* under default_mutex */
  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;        /* NULL until started, under default_mutex */
};

/* A timer's callback, handed to the poller's thread with its source. */
typedef struct
{
  GSourceFunc func;
  GDestroyNotify destroy;
  gpointer data;          /* stored last, atomically: see timer_dispatch */
} Timer;

static GMutex default_mutex;
static TesseraPoller *default_poller;   /* weak: cleared by the last unref */

static gpointer
poller_thread (gpointer data)
{
  GMainLoop *loop = data;
  GMainContext *context = g_main_loop_get_context (loop);

  g_main_context_push_thread_default (context);
  g_main_loop_run (loop);
  g_main_context_pop_thread_default (context);
  g_main_loop_unref (loop);
  return NULL;
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

/* Returns the poller of this process (transfer full), made if no poller
 * lives yet; its thread waits for _tessera_poller_start(). */
TesseraPoller *
_tessera_poller_get_default (void)
{
  TesseraPoller *poller;

  g_mutex_lock (&default_mutex);
  if (default_poller == NULL)
    {
      default_poller = g_new0 (TesseraPoller, 1);
      default_poller->context = g_main_context_new ();
      default_poller->loop = g_main_loop_new (default_poller->context, FALSE);
    }
  /* Every reference is taken and dropped under this mutex, so a poller
   * whose last reference is going can never be handed out again. */
  default_poller->ref_count++;
  poller = default_poller;
  g_mutex_unlock (&default_mutex);
  return poller;
}

void
_tessera_poller_start (TesseraPoller *self)
{
  g_mutex_lock (&default_mutex);
  if (self->thread == NULL)
    self->thread = g_thread_new ("tessera-poller", poller_thread, g_main_loop_ref (self->loop));
  g_mutex_unlock (&default_mutex);
}

void
_tessera_poller_unref (TesseraPoller *self)
{
  gboolean last;

  g_mutex_lock (&default_mutex);
  last = --self->ref_count == 0;
  if (last && default_poller == self)
    default_poller = NULL;
  g_mutex_unlock (&default_mutex);
  if (!last)
    return;

  /* Never started: no thread to stop (the last reference is gone, so
   * nobody starts it any more). */
  if (self->thread != NULL)
    {
      g_main_context_invoke (self->context, quit_loop, self->loop);
      /* The last reference may go in the poller's own thread (a callback
       * dropping a resource): it cannot join itself, so it just exits. */
      if (g_thread_self () == self->thread)
        g_thread_unref (self->thread);
      else
        g_thread_join (self->thread);
    }
  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_free (self);
}

/* The main context run by the poller's thread (transfer none): sources
 * attached to it run there. */
GMainContext *
_tessera_poller_get_context (TesseraPoller *self)
{
  return self->context;
}

static gboolean
timer_dispatch (gpointer data)
{
  Timer *timer = data;
  /* Published with an atomic store before the source was attached: the
   * source reached this thread through GMainContext's own locking, which
   * ThreadSanitizer cannot see, so make the hand-over explicit. */
  gpointer user_data = g_atomic_pointer_get (&timer->data);

  return timer->func (user_data);
}

static void
timer_free (gpointer data)
{
  Timer *timer = data;

  if (timer->destroy != NULL)
    timer->destroy (g_atomic_pointer_get (&timer->data));
  g_free (timer);
}

/* Calls @func (@data) in the poller's thread after @delay_s seconds, and
 * again every @delay_s seconds while it returns G_SOURCE_CONTINUE, like
 * g_timeout_add_full(); @destroy frees @data once the timer is done or the
 * returned source (transfer full) is destroyed. */
GSource *
_tessera_poller_add_timer (TesseraPoller  *self,
                           double          delay_s,
                           GSourceFunc     func,
                           gpointer        data,
                           GDestroyNotify  destroy)
{
  GSource *source = g_timeout_source_new ((guint) CLAMP (delay_s * 1000, 0, G_MAXUINT));
  Timer *timer = g_new0 (Timer, 1);

  timer->func = func;
  timer->destroy = destroy;
  /* Last: everything above, and @data's contents, happen before the
   * dispatch that reads it. */
  g_atomic_pointer_set (&timer->data, data);
  g_source_set_name (source, "tessera-poll");
  g_source_set_callback (source, timer_dispatch, timer, timer_free);
  g_source_attach (source, self->context);
  /* cppcheck sees no free of timer: the source owns it (timer_free is
   * its destroy notify). */
  // cppcheck-suppress memleak
  return source;
}
