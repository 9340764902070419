/* tessera-dynamic-resource.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-resource-private.h"
#include "tessera-environment-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-poller-private.h"
#include "tessera-private.h"

#include <math.h>

/**
 * TesseraDynamicResource:
 *
 * The seed's `DynamicResource`: something a dependency waits on. Its state
 * has a generation number that grows whenever it may have changed (a
 * release, a holder's death, a capacity change, a fallback poll); a waiter
 * remembers the generation before trying and sleeps in
 * [method@Tessera.DynamicResource.wait] until it moves.
 *
 * While somebody waits, the resource is also polled as a fallback, so that
 * a missed event (a network file system, an overflowing inotify queue)
 * costs time but never a hang: Tessera's private thread calls
 * [vfunc@Tessera.DynamicResource.refresh_state] at growing intervals
 * (0.1 s, times 1.5 with ±10 % jitter, up to `TESSERA_POLL_INTERVAL_MAX`
 * seconds, 30 by default, or 2 s for a folder watched without inotify,
 * where polling is the primary path; `TESSERA_POLL_INTERVAL` sets the
 * first interval). The interval is kept across the wake-ups of one wait
 * and starts again only once nobody has waited on the resource for a
 * while.
 */
typedef struct
{
  char *name;
  GMutex mutex;
  GCond cond;
  guint64 generation;
  GList *wakers;              /* Waker*, under mutex */

  /* The fallback polling's back-off, under mutex */
  TesseraPoller *poller;
  gint poll_waiters;          /* waits under way; atomic, changed under mutex */
  double poll_interval;       /* reached so far; 0: start again */
  double poll_interval_max;   /* 0: the default */
  gboolean no_polling;        /* its store wakes every waiter */
  GSource *poll_timer;        /* the next poll, or the back-off's expiry */
  gboolean poll_timer_idle;   /* it is the expiry: nobody waited at the last poll */

  /* Watching starts at the first wait (see start_watching()) */
  gint watching;              /* atomic */
  TesseraWatchStartFunc watch_start;
  TesseraWatchStartFunc wait_begin;
  gpointer watch_start_data;

  /* The lock folder its pool lives in, when that is the folder store's
   * (set once, at a tracked resource's init); NULL: none. */
  char *pool_folder;
  /* How a dependency's lock is granted (set once, at a tracked
   * resource's init); NULL: by the lock's own class. */
  const TesseraGrantFuncs *grant;
} TesseraDynamicResourcePrivate;

/* How long a resource nobody waits on keeps its polling interval. */
#define POLL_IDLE_EXPIRY_S 5.0

static void drop_poll_timer (TesseraDynamicResourcePrivate *priv);

/* An asynchronous waiter: @func runs in @context after each change. */
typedef struct
{
  GMainContext *context;
  GSourceFunc func;
  gpointer data;
  GDestroyNotify destroy;
  gint removed;
} Waker;

static void
waker_clear (Waker *waker)
{
  if (waker->destroy != NULL && waker->data != NULL)
    waker->destroy (waker->data);
  g_main_context_unref (waker->context);
}

static void
waker_unref (gpointer waker)
{
  g_atomic_rc_box_release_full (waker, (GDestroyNotify) waker_clear);
}

static gboolean
waker_dispatch (gpointer data)
{
  Waker *waker = data;

  if (!g_atomic_int_get (&waker->removed))
    waker->func (waker->data);
  return G_SOURCE_REMOVE;
}

enum {
  PROP_0,
  PROP_NAME,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (TesseraDynamicResource, tessera_dynamic_resource, G_TYPE_OBJECT)

static void
tessera_dynamic_resource_finalize (GObject *object)
{
  TesseraDynamicResource *self = TESSERA_DYNAMIC_RESOURCE (object);
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_free (priv->name);
  g_free (priv->pool_folder);
  g_list_free_full (priv->wakers, waker_unref);
  drop_poll_timer (priv);
  g_clear_pointer (&priv->poller, _tessera_poller_unref);
  g_mutex_clear (&priv->mutex);
  g_cond_clear (&priv->cond);
  G_OBJECT_CLASS (tessera_dynamic_resource_parent_class)->finalize (object);
}

static void
tessera_dynamic_resource_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraDynamicResourcePrivate *priv =
    tessera_dynamic_resource_get_instance_private (TESSERA_DYNAMIC_RESOURCE (object));

  switch (prop_id)
    {
    case PROP_NAME: g_value_set_string (value, priv->name); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_resource_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraDynamicResourcePrivate *priv =
    tessera_dynamic_resource_get_instance_private (TESSERA_DYNAMIC_RESOURCE (object));

  switch (prop_id)
    {
    case PROP_NAME: g_free (priv->name); priv->name = g_value_dup_string (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_resource_real_refresh_state (TesseraDynamicResource *self)
{
  tessera_dynamic_resource_notify_changed (self);
}

static TesseraDynamicDependency *
tessera_dynamic_resource_real_create_dependency (TesseraDynamicResource *self, TesseraJob *job,
                                                 const char *request, GError **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
               _("Resources of type %s cannot be asked for by name"), G_OBJECT_TYPE_NAME (self));
  return NULL;
}

static void
tessera_dynamic_resource_class_init (TesseraDynamicResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tessera_dynamic_resource_finalize;
  object_class->get_property = tessera_dynamic_resource_get_property;
  object_class->set_property = tessera_dynamic_resource_set_property;
  klass->refresh_state = tessera_dynamic_resource_real_refresh_state;
  klass->create_dependency = tessera_dynamic_resource_real_create_dependency;

  /**
   * TesseraDynamicResource:name:
   *
   * A human-readable name, used in messages.
   */
  props[PROP_NAME] = g_param_spec_string ("name", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_dynamic_resource_init (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  g_cond_init (&priv->cond);
  priv->poller = _tessera_poller_get_default ();
}

/**
 * tessera_dynamic_resource_get_name:
 * @self: a resource
 *
 * The name of the resource, as in `[resource NAME]` of a key file.
 *
 * Returns: (nullable): the resource's name
 */
const char *
tessera_dynamic_resource_get_name (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), NULL);
  priv = tessera_dynamic_resource_get_instance_private (self);
  return priv->name;
}

/**
 * tessera_dynamic_resource_get_generation:
 * @self: a resource
 *
 * Read it before trying to acquire, then pass it to
 * [method@Tessera.DynamicResource.wait]: a change that happens in between
 * is not lost.
 *
 * Returns: the current generation of the resource's state
 */
guint64
tessera_dynamic_resource_get_generation (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv;
  guint64 generation;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), 0);
  priv = tessera_dynamic_resource_get_instance_private (self);
  g_mutex_lock (&priv->mutex);
  generation = priv->generation;
  g_mutex_unlock (&priv->mutex);
  return generation;
}

/**
 * tessera_dynamic_resource_notify_changed:
 * @self: a resource
 *
 * Says the resource's state may have changed: the generation grows and
 * every waiter wakes up to try again. Safe from any thread.
 */
void
tessera_dynamic_resource_notify_changed (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv;

  g_return_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self));
  priv = tessera_dynamic_resource_get_instance_private (self);
  g_mutex_lock (&priv->mutex);
  priv->generation++;
  g_cond_broadcast (&priv->cond);
  for (GList *l = priv->wakers; l != NULL; l = l->next)
    {
      Waker *waker = l->data;
      g_main_context_invoke_full (waker->context, G_PRIORITY_DEFAULT, waker_dispatch,
                                  g_atomic_rc_box_acquire (waker), waker_unref);
    }
  g_mutex_unlock (&priv->mutex);
}

/* Calls @func in @context after each change of @self, until the returned
 * handle goes to _tessera_dynamic_resource_remove_waker(). */
gpointer
_tessera_dynamic_resource_add_waker (TesseraDynamicResource *self,
                                     GMainContext           *context,
                                     GSourceFunc             func,
                                     gpointer                data,
                                     GDestroyNotify          destroy)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);
  Waker *waker = g_atomic_rc_box_new0 (Waker);

  waker->context = g_main_context_ref (context);
  waker->func = func;
  waker->data = data;
  waker->destroy = destroy;
  g_mutex_lock (&priv->mutex);
  priv->wakers = g_list_prepend (priv->wakers, waker);
  g_mutex_unlock (&priv->mutex);
  return waker;
}

/* After this, @func is not called again, even from a wake-up already on
 * its way (call it in the waker's context). */
void
_tessera_dynamic_resource_remove_waker (TesseraDynamicResource *self,
                                        gpointer                handle)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);
  Waker *waker = handle;

  g_atomic_int_set (&waker->removed, 1);
  g_mutex_lock (&priv->mutex);
  priv->wakers = g_list_remove (priv->wakers, waker);
  g_mutex_unlock (&priv->mutex);
  /* Wake-ups already on their way keep the box, not the data: let the
   * data go now, so it does not outlive the wait (it may hold the
   * resource). */
  if (waker->destroy != NULL)
    g_clear_pointer (&waker->data, waker->destroy);
  waker_unref (waker);
}

/**
 * tessera_dynamic_resource_refresh_state:
 * @self: a resource
 *
 * Asks the resource to look at its state again, in case an event was
 * missed (the seed's `refresh_state`), and wakes its waiters.
 */
void
tessera_dynamic_resource_refresh_state (TesseraDynamicResource *self)
{
  g_return_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self));
  TESSERA_DYNAMIC_RESOURCE_GET_CLASS (self)->refresh_state (self);
}

/**
 * tessera_dynamic_resource_create_dependency:
 * @self: a resource
 * @job: the job that needs it
 * @request: (nullable): what is asked for, in the resource type's words
 *   (see [vfunc@Tessera.DynamicResource.create_dependency]); %NULL for one
 *   unit
 * @error: return location for a #GError
 *
 * Makes the dependency that `--need NAME=REQUEST` stands for. A request
 * the type does not understand is %TESSERA_ERROR_INVALID_CONFIGURATION.
 *
 * Returns: (transfer full): a new dependency, or %NULL with @error set
 */
TesseraDynamicDependency *
tessera_dynamic_resource_create_dependency (TesseraDynamicResource  *self,
                                            TesseraJob              *job,
                                            const char              *request,
                                            GError                 **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), NULL);
  /* Not TESSERA_IS_JOB: the "target" property of the dependency the type
   * makes, of the job's type, checks its class (GObject complains of
   * another), and the resource's class, which the job reaches through its
   * process and the registry, need not name the job's. */
  g_return_val_if_fail (G_IS_OBJECT (job), NULL);
  return TESSERA_DYNAMIC_RESOURCE_GET_CLASS (self)->create_dependency (self, job, request, error);
}

GMainContext *
_tessera_dynamic_resource_get_context (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);
  return _tessera_poller_get_context (priv->poller);
}

void
_tessera_dynamic_resource_set_poll_interval_max (TesseraDynamicResource *self,
                                                 double                  seconds)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  priv->poll_interval_max = seconds;
  g_mutex_unlock (&priv->mutex);
}

void
_tessera_dynamic_resource_set_polling (TesseraDynamicResource *self,
                                       gboolean                polling)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  priv->no_polling = !polling;
  g_mutex_unlock (&priv->mutex);
}

void
_tessera_dynamic_resource_set_pool_folder (TesseraDynamicResource *self,
                                           const char             *folder)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_free (priv->pool_folder);
  priv->pool_folder = g_strdup (folder);
}

/* Only there are its holders files of a path, and is there an ipc.lock. */
gboolean
_tessera_dynamic_resource_in_a_folder (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  return priv->pool_folder != NULL;
}

const char *
_tessera_dynamic_resource_get_pool_folder (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  return priv->pool_folder;
}

void
_tessera_dynamic_resource_set_grant (TesseraDynamicResource  *self,
                                     const TesseraGrantFuncs *funcs)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  priv->grant = funcs;
}

const TesseraGrantFuncs *
_tessera_dynamic_resource_get_grant (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  return priv->grant;
}

static gboolean poll_tick (gpointer data);

/* Called with the mutex held. */
static double
poll_interval_max (TesseraDynamicResourcePrivate *priv)
{
  return priv->poll_interval_max > 0 ? priv->poll_interval_max : _tessera_poll_interval_max ();
}

static void
weak_ref_free (gpointer ref)
{
  g_weak_ref_clear (ref);
  g_free (ref);
}

/* Called with the mutex held (or from finalize). */
static void
drop_poll_timer (TesseraDynamicResourcePrivate *priv)
{
  if (priv->poll_timer != NULL)
    {
      g_source_destroy (priv->poll_timer);
      g_clear_pointer (&priv->poll_timer, g_source_unref);
    }
}

/* Called with the mutex held: arms the next poll, with jitter so that
 * waiters of many processes do not poll in step, or (@idle), once nobody
 * waits, the expiry of the interval reached. The timer sees the resource
 * through a weak reference: it never keeps it alive. */
static void
schedule_poll (TesseraDynamicResource *self, TesseraDynamicResourcePrivate *priv, gboolean idle)
{
  double delay_s = !idle ? priv->poll_interval * g_random_double_range (0.9, 1.1) : POLL_IDLE_EXPIRY_S;
  GWeakRef *ref = g_new (GWeakRef, 1);

  g_weak_ref_init (ref, self);
  drop_poll_timer (priv);
  priv->poll_timer_idle = idle;
  priv->poll_timer = _tessera_poller_add_timer (priv->poller, delay_s, poll_tick, ref, weak_ref_free);
}

/* Runs in the poller's thread. */
static gboolean
poll_tick (gpointer data)
{
  g_autoptr(TesseraDynamicResource) self = g_weak_ref_get (data);
  TesseraDynamicResourcePrivate *priv;
  gboolean poll = FALSE;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  priv = tessera_dynamic_resource_get_instance_private (self);
  g_mutex_lock (&priv->mutex);
  /* Rescheduled meanwhile: this tick has been replaced. */
  if (priv->poll_timer == g_main_current_source ())
    {
      if (g_atomic_int_get (&priv->poll_waiters) > 0)
        {
          poll = TRUE;
          priv->poll_interval = MIN (priv->poll_interval * 1.5, poll_interval_max (priv));
          schedule_poll (self, priv, FALSE);
        }
      else if (!priv->poll_timer_idle)
        /* Nobody waits now: the interval is kept a while for the next
         * wait (one that begins meanwhile finds this timer and polls). */
        schedule_poll (self, priv, TRUE);
      else
        {
          /* Idle long enough: the next wait starts again at the first
           * interval. */
          priv->poll_interval = 0;
          drop_poll_timer (priv);
        }
    }
  g_mutex_unlock (&priv->mutex);

  if (poll)
    tessera_dynamic_resource_refresh_state (self);
  return G_SOURCE_REMOVE;
}

void
_tessera_dynamic_resource_set_watch_start (TesseraDynamicResource *self,
                                           TesseraWatchStartFunc   func,
                                           TesseraWatchStartFunc   wait_begin,
                                           gpointer                data)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  priv->watch_start = func;
  priv->wait_begin = wait_begin;
  priv->watch_start_data = data;
}

gboolean
_tessera_dynamic_resource_has_waiters (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  return g_atomic_int_get (&priv->poll_waiters) > 0;
}

void
_tessera_dynamic_resource_start_thread (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  _tessera_poller_start (priv->poller);
}

/* Starts watching, once (the first wait does it): the poller's thread,
 * then the resource type's watches; no lock held. */
static void
start_watching (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  if (g_atomic_int_get (&priv->watching) || !g_atomic_int_compare_and_exchange (&priv->watching, 0, 1))
    return;
  _tessera_poller_start (priv->poller);
  if (priv->watch_start != NULL)
    priv->watch_start (self, priv->watch_start_data);
}

/* Polls @self as a fallback while somebody waits on it. Each call is
 * matched by _tessera_dynamic_resource_end_polling(). The first one
 * starts watching. */
void
_tessera_dynamic_resource_begin_polling (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  start_watching (self);
  g_mutex_lock (&priv->mutex);
  if (priv->poll_interval == 0)
    priv->poll_interval = _tessera_poll_interval_initial ();
  priv->poll_interval = MIN (priv->poll_interval, poll_interval_max (priv));
  /* The first waiter (again) starts the polls at the interval reached so
   * far: a waiter woken by a poll that waits again keeps its back-off.
   * A poll still due from the last wait is kept: waits that begin and end
   * many times a second (a busy pool) then never touch the poller's
   * thread, which each new timer would wake. */
  if (g_atomic_int_add (&priv->poll_waiters, 1) == 0 && (priv->poll_timer == NULL || priv->poll_timer_idle) &&
      !priv->no_polling)
    schedule_poll (self, priv, FALSE);
  g_mutex_unlock (&priv->mutex);
  /* Counted first: the store then polls its events again, or a wake-up
   * that has just found nobody waiting sees this wait. */
  if (priv->wait_begin != NULL)
    priv->wait_begin (self, priv->watch_start_data);
}

/* Stops polling @self once nobody waits on it any more. */
void
_tessera_dynamic_resource_end_polling (TesseraDynamicResource *self)
{
  TesseraDynamicResourcePrivate *priv = tessera_dynamic_resource_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  /* The poll due stays armed: if nobody waits when it comes, it arms the
   * expiry of the interval instead (poll_tick). */
  if (g_atomic_int_get (&priv->poll_waiters) > 0)
    g_atomic_int_add (&priv->poll_waiters, -1);
  g_mutex_unlock (&priv->mutex);
}

static void
wake_on_cancel (GCancellable *cancellable, gpointer data)
{
  TesseraDynamicResourcePrivate *priv = data;

  g_mutex_lock (&priv->mutex);
  g_cond_broadcast (&priv->cond);
  g_mutex_unlock (&priv->mutex);
}

/**
 * tessera_dynamic_resource_wait:
 * @self: a resource
 * @generation: the generation read before the last attempt
 * @timeout: seconds to wait at most, as every timeout of the API; a
 *   negative value (or infinity) waits for ever
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Blocks until the resource's generation differs from @generation. While
 * it waits, Tessera's private thread polls the resource as a fallback
 * (see [class@Tessera.DynamicResource]). Works without any main loop in
 * the calling thread.
 *
 * Returns: %TRUE when the state changed, %FALSE with
 *   %TESSERA_ERROR_TIMEOUT when @timeout is over or `G_IO_ERROR_CANCELLED`
 */
gboolean
tessera_dynamic_resource_wait (TesseraDynamicResource  *self,
                               guint64                  generation,
                               double                   timeout,
                               GCancellable            *cancellable,
                               GError                 **error)
{
  gint64 deadline = timeout < 0 || isinf (timeout) || isnan (timeout)
                    ? -1 : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  return _tessera_dynamic_resource_wait_until (self, generation, deadline, cancellable, error);
}

gboolean
_tessera_dynamic_resource_wait_until (TesseraDynamicResource  *self,
                                      guint64                  generation,
                                      gint64                   deadline,
                                      GCancellable            *cancellable,
                                      GError                 **error)
{
  TesseraDynamicResourcePrivate *priv;
  gulong handler = 0;
  gboolean changed, cancelled = FALSE;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), FALSE);
  priv = tessera_dynamic_resource_get_instance_private (self);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  _tessera_dynamic_resource_begin_polling (self);
  if (cancellable != NULL)
    handler = g_cancellable_connect (cancellable, G_CALLBACK (wake_on_cancel), priv, NULL);
  _tessera_pause_point ("wait-registered");

  g_mutex_lock (&priv->mutex);
  while (priv->generation == generation)
    {
      if (cancellable != NULL && g_cancellable_is_cancelled (cancellable))
        {
          cancelled = TRUE;
          break;
        }
      if (deadline < 0)
        g_cond_wait (&priv->cond, &priv->mutex);
      else if (!g_cond_wait_until (&priv->cond, &priv->mutex, deadline) &&
               g_get_monotonic_time () >= deadline)
        break;
    }
  changed = priv->generation != generation;
  g_mutex_unlock (&priv->mutex);

  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, handler);
  _tessera_dynamic_resource_end_polling (self);

  if (changed)
    return TRUE;
  if (cancelled)
    return !g_cancellable_set_error_if_cancelled (cancellable, error);
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT,
               _("Timed out waiting for resource “%s”"),
               priv->name ? priv->name : "?");
  return FALSE;
}
