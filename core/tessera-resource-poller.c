/* tessera-resource-poller.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

/**
 * TesseraResourcePoller:
 *
 * The private thread every resource of a process shares, like
 * experimaestro's single event-loop thread. Its [struct@GLib.MainContext]
 * runs the file watches and process-exit watches of tracked resources, and
 * the fallback polling: while a resource has waiters, the poller refreshes
 * it at growing intervals (0.1 s, times 1.5 with ±10 % jitter, up to
 * `TESSERA_POLL_INTERVAL_MAX` seconds, 30 by default, or 2 s for a folder
 * watched without inotify, where polling is the primary path;
 * `TESSERA_POLL_INTERVAL` sets the first interval), so that a missed event
 * (a network file system, an overflowing inotify queue) costs time but
 * never a hang. The interval is kept across the wake-ups of one wait and
 * starts again only once nobody has waited on the resource for a while.
 *
 * The thread stops when the last reference to the poller is dropped.
 */
struct _TesseraResourcePoller
{
  GObject parent_instance;

  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;

  GMutex mutex;
  GHashTable *entries;    /* TesseraDynamicResource* → PollEntry* */
  guint64 poll_count;
};

typedef struct
{
  TesseraResourcePoller *poller;   /* not a reference: entries die first */
  gpointer key;
  GWeakRef resource;
  guint waiters;
  double interval;
  double interval_max;
  GSource *timer;     /* the next tick, or the expiry of an idle entry */
} PollEntry;

/* How long an entry nobody waits on keeps its interval. */
#define IDLE_EXPIRY_S 5.0

G_DEFINE_FINAL_TYPE (TesseraResourcePoller, tessera_resource_poller, G_TYPE_OBJECT)

static GMutex default_mutex;
static TesseraResourcePoller *default_poller;   /* weak: cleared in dispose */

/* Entries are shared by the table and by their timer source, so that a
 * tick already dispatching never reads a freed entry. */
static void
poll_entry_clear (PollEntry *entry)
{
  g_weak_ref_clear (&entry->resource);
}

static PollEntry *
poll_entry_ref (PollEntry *entry)
{
  return g_atomic_rc_box_acquire (entry);
}

static void
poll_entry_unref (gpointer entry)
{
  g_atomic_rc_box_release_full (entry, (GDestroyNotify) poll_entry_clear);
}

/* The table's destroy notify; called with the poller's mutex held. */
static void
poll_entry_drop (PollEntry *entry)
{
  if (entry->timer != NULL)
    {
      g_source_destroy (entry->timer);
      g_clear_pointer (&entry->timer, g_source_unref);
    }
  poll_entry_unref (entry);
}

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

static void
tessera_resource_poller_dispose (GObject *object)
{
  TesseraResourcePoller *self = TESSERA_RESOURCE_POLLER (object);

  g_mutex_lock (&default_mutex);
  if (default_poller == self)
    default_poller = NULL;
  g_mutex_unlock (&default_mutex);
  G_OBJECT_CLASS (tessera_resource_poller_parent_class)->dispose (object);
}

static void
tessera_resource_poller_finalize (GObject *object)
{
  TesseraResourcePoller *self = TESSERA_RESOURCE_POLLER (object);

  g_mutex_lock (&self->mutex);
  g_hash_table_remove_all (self->entries);
  g_mutex_unlock (&self->mutex);

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
  g_hash_table_unref (self->entries);
  g_mutex_clear (&self->mutex);
  G_OBJECT_CLASS (tessera_resource_poller_parent_class)->finalize (object);
}

static void
tessera_resource_poller_class_init (TesseraResourcePollerClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = tessera_resource_poller_dispose;
  G_OBJECT_CLASS (klass)->finalize = tessera_resource_poller_finalize;
}

static void
tessera_resource_poller_init (TesseraResourcePoller *self)
{
  g_mutex_init (&self->mutex);
  self->entries = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) poll_entry_drop);
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  self->thread = g_thread_new ("tessera-poller", poller_thread, g_main_loop_ref (self->loop));
}

/**
 * tessera_resource_poller_get_default:
 *
 * Returns the poller of this process, starting its thread if no poller
 * lives yet.
 *
 * Returns: (transfer full): the poller
 */
TesseraResourcePoller *
tessera_resource_poller_get_default (void)
{
  TesseraResourcePoller *poller;

  g_mutex_lock (&default_mutex);
  /* g_object_ref on an object whose last unref is under way would revive a
   * dying poller: dispose clears default_poller under this same mutex. */
  if (default_poller == NULL)
    default_poller = g_object_new (TESSERA_TYPE_RESOURCE_POLLER, NULL);
  else
    g_object_ref (default_poller);
  poller = default_poller;
  g_mutex_unlock (&default_mutex);
  return poller;
}

/**
 * tessera_resource_poller_get_context:
 * @self: the poller
 *
 * Gets the main context run by the poller's thread; sources
 * attached to it run there.
 *
 * Returns: (transfer none): the main context run by the poller's thread;
 *   sources attached to it run there
 */
GMainContext *
tessera_resource_poller_get_context (TesseraResourcePoller *self)
{
  g_return_val_if_fail (TESSERA_IS_RESOURCE_POLLER (self), NULL);
  return self->context;
}

static gboolean poll_tick (gpointer data);

/* Called with self->mutex held. @delay_s is the interval (with jitter, so
 * waiters of many processes do not poll in step) or the idle expiry. */
static void
schedule_tick (TesseraResourcePoller *self, PollEntry *entry)
{
  double delay_s = entry->waiters > 0 ? entry->interval * g_random_double_range (0.9, 1.1)
                                      : IDLE_EXPIRY_S;

  if (entry->timer != NULL)
    {
      g_source_destroy (entry->timer);
      g_source_unref (entry->timer);
    }
  entry->timer = g_timeout_source_new ((guint) (delay_s * 1000));
  g_source_set_name (entry->timer, "tessera-poll");
  g_source_set_callback (entry->timer, poll_tick, poll_entry_ref (entry), poll_entry_unref);
  g_source_attach (entry->timer, self->context);
}

static gboolean
poll_tick (gpointer data)
{
  PollEntry *entry = data;
  /* Published with an atomic store before the entry was shared: the
   * source reached this thread through GMainContext's own locking, which
   * ThreadSanitizer cannot see, so make the hand-over explicit. */
  TesseraResourcePoller *self = g_atomic_pointer_get (&entry->poller);
  TesseraDynamicResource *resource = NULL;
  GSource *current = g_main_current_source ();

  g_mutex_lock (&self->mutex);
  /* The entry may have been replaced or rescheduled meanwhile. */
  if (g_hash_table_lookup (self->entries, entry->key) != entry || entry->timer != current)
    {
      g_mutex_unlock (&self->mutex);
      return G_SOURCE_REMOVE;
    }
  if (entry->waiters == 0)
    {
      /* Idle long enough: the next wait starts again at the first interval. */
      g_hash_table_remove (self->entries, entry->key);
      g_mutex_unlock (&self->mutex);
      return G_SOURCE_REMOVE;
    }
  resource = g_weak_ref_get (&entry->resource);
  self->poll_count++;
  entry->interval = MIN (entry->interval * 1.5, entry->interval_max);
  schedule_tick (self, entry);
  g_mutex_unlock (&self->mutex);

  if (resource != NULL)
    {
      _tessera_dynamic_resource_poll_tick (resource);
      g_object_unref (resource);
    }
  return G_SOURCE_REMOVE;
}

/**
 * tessera_resource_poller_register:
 * @self: the poller
 * @resource: a resource somebody waits on
 *
 * Starts (or keeps) polling @resource while somebody waits on it. Each call
 * must be matched by [method@Tessera.ResourcePoller.unregister].
 */
void
tessera_resource_poller_register (TesseraResourcePoller  *self,
                                  TesseraDynamicResource *resource)
{
  _tessera_resource_poller_register_full (self, resource, _tessera_poll_interval_max ());
}

/* Like tessera_resource_poller_register(), with the longest interval for
 * this resource (shorter where polling is the primary path). */
void
_tessera_resource_poller_register_full (TesseraResourcePoller  *self,
                                        TesseraDynamicResource *resource,
                                        double                  interval_max)
{
  PollEntry *entry;
  g_autoptr(TesseraDynamicResource) known = NULL;

  g_return_if_fail (TESSERA_IS_RESOURCE_POLLER (self));
  g_return_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (resource));

  g_mutex_lock (&self->mutex);
  entry = g_hash_table_lookup (self->entries, resource);
  /* An idle entry left by a resource since freed, whose address was reused. */
  if (entry != NULL && (known = g_weak_ref_get (&entry->resource)) != resource)
    {
      g_hash_table_remove (self->entries, resource);
      entry = NULL;
    }
  if (entry == NULL)
    {
      entry = g_atomic_rc_box_new0 (PollEntry);
      entry->key = resource;
      g_weak_ref_init (&entry->resource, resource);
      entry->interval = MIN (_tessera_poll_interval_initial (), interval_max);
      /* Last: everything above happens before the tick that reads it. */
      g_atomic_pointer_set (&entry->poller, self);
      g_hash_table_insert (self->entries, resource, entry);
    }
  entry->interval_max = interval_max;
  entry->interval = MIN (entry->interval, interval_max);
  /* The first waiter (again) starts the ticks at the interval reached so
   * far: a waiter woken by a tick that waits again keeps its back-off. */
  if (entry->waiters++ == 0)
    schedule_tick (self, entry);
  g_mutex_unlock (&self->mutex);
}

/**
 * tessera_resource_poller_unregister:
 * @self: the poller
 * @resource: a resource passed to [method@Tessera.ResourcePoller.register]
 *
 * Stops polling @resource once nobody waits on it any more.
 */
void
tessera_resource_poller_unregister (TesseraResourcePoller  *self,
                                    TesseraDynamicResource *resource)
{
  PollEntry *entry;

  g_return_if_fail (TESSERA_IS_RESOURCE_POLLER (self));

  g_mutex_lock (&self->mutex);
  entry = g_hash_table_lookup (self->entries, resource);
  /* Idle: no more ticks, but the interval is kept a while for the next
   * wait (schedule_tick arms the expiry). */
  if (entry != NULL && entry->waiters > 0 && --entry->waiters == 0)
    schedule_tick (self, entry);
  g_mutex_unlock (&self->mutex);
}

/**
 * tessera_resource_poller_notify:
 * @self: the poller
 * @resource: a resource whose state may have changed
 *
 * Wakes everybody waiting on @resource, as the seed's `notify` does.
 */
void
tessera_resource_poller_notify (TesseraResourcePoller  *self,
                                TesseraDynamicResource *resource)
{
  g_return_if_fail (TESSERA_IS_RESOURCE_POLLER (self));
  tessera_dynamic_resource_notify_changed (resource);
}

/**
 * tessera_resource_poller_get_poll_count:
 * @self: the poller
 *
 * How many fallback polls ran so far; tests use it to tell a wake-up by an
 * event from one by polling.
 *
 * Returns: the number of polls
 */
guint64
tessera_resource_poller_get_poll_count (TesseraResourcePoller *self)
{
  guint64 count;

  g_return_val_if_fail (TESSERA_IS_RESOURCE_POLLER (self), 0);
  g_mutex_lock (&self->mutex);
  count = self->poll_count;
  g_mutex_unlock (&self->mutex);
  return count;
}
