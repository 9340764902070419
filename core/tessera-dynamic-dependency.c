/* tessera-dynamic-dependency.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-dependency-private.h"
#include "tessera-dynamic-resource-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-wait-queue-private.h"

#include <math.h>
#include <poll.h>

/**
 * TesseraDynamicDependency:
 *
 * The seed's `DynamicDependency`: "job J needs this of resource R".
 * [method@Tessera.DynamicDependency.lock] tries to acquire, and while the
 * resource is full, sleeps until its state changes (an event or a fallback
 * poll) and tries again, until the timeout.
 *
 * Subclasses carry what is asked for (a count, a number of devices…) and
 * may return their own lock class from `create_lock`.
 */
typedef struct
{
  TesseraDynamicResource *resource;
  TesseraJob *target;
} TesseraDynamicDependencyPrivate;

enum {
  PROP_0,
  PROP_RESOURCE,
  PROP_TARGET,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraDynamicDependency, tessera_dynamic_dependency, G_TYPE_OBJECT)

#define PRIV(o) ((TesseraDynamicDependencyPrivate *) tessera_dynamic_dependency_get_instance_private (o))

static void
tessera_dynamic_dependency_finalize (GObject *object)
{
  TesseraDynamicDependencyPrivate *priv = PRIV (TESSERA_DYNAMIC_DEPENDENCY (object));

  g_clear_object (&priv->resource);
  g_clear_object (&priv->target);
  G_OBJECT_CLASS (tessera_dynamic_dependency_parent_class)->finalize (object);
}

static void
tessera_dynamic_dependency_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraDynamicDependencyPrivate *priv = PRIV (TESSERA_DYNAMIC_DEPENDENCY (object));

  switch (prop_id)
    {
    case PROP_RESOURCE: g_value_set_object (value, priv->resource); break;
    case PROP_TARGET: g_value_set_object (value, priv->target); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_dependency_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraDynamicDependencyPrivate *priv = PRIV (TESSERA_DYNAMIC_DEPENDENCY (object));

  switch (prop_id)
    {
    case PROP_RESOURCE: g_set_object (&priv->resource, g_value_get_object (value)); break;
    case PROP_TARGET: g_set_object (&priv->target, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static TesseraDynamicDependencyLock *
tessera_dynamic_dependency_real_create_lock (TesseraDynamicDependency *self, GError **error)
{
  return g_object_new (TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK, "dependency", self, NULL);
}

static void
tessera_dynamic_dependency_class_init (TesseraDynamicDependencyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tessera_dynamic_dependency_finalize;
  object_class->get_property = tessera_dynamic_dependency_get_property;
  object_class->set_property = tessera_dynamic_dependency_set_property;
  klass->create_lock = tessera_dynamic_dependency_real_create_lock;

  /**
   * TesseraDynamicDependency:resource:
   *
   * The resource depended on (the seed's `origin`).
   */
  props[PROP_RESOURCE] = g_param_spec_object ("resource", NULL, NULL, TESSERA_TYPE_DYNAMIC_RESOURCE,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraDynamicDependency:target:
   *
   * The job that needs the resource.
   */
  props[PROP_TARGET] = g_param_spec_object ("target", NULL, NULL, TESSERA_TYPE_JOB,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_dynamic_dependency_init (TesseraDynamicDependency *self)
{
}

/**
 * tessera_dynamic_dependency_get_resource:
 * @self: a dependency
 *
 * The resource this dependency asks for.
 *
 * Returns: (transfer none): the resource depended on
 */
TesseraDynamicResource *
tessera_dynamic_dependency_get_resource (TesseraDynamicDependency *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self), NULL);
  return PRIV (self)->resource;
}

/**
 * tessera_dynamic_dependency_get_target:
 * @self: a dependency
 *
 * The job that will hold the resource.
 *
 * Returns: (transfer none): the job that needs the resource
 */
TesseraJob *
tessera_dynamic_dependency_get_target (TesseraDynamicDependency *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self), NULL);
  return PRIV (self)->target;
}

/**
 * tessera_dynamic_dependency_create_lock:
 * @self: a dependency
 * @error: return location for a #GError
 *
 * Makes a lock for this dependency through
 * [vfunc@Tessera.DynamicDependency.create_lock]; acquire it with
 * [method@Tessera.Lock.acquire].
 *
 * Returns: (transfer full): a new lock for this dependency, not acquired
 */
TesseraDynamicDependencyLock *
tessera_dynamic_dependency_create_lock (TesseraDynamicDependency  *self,
                                        GError                   **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self), NULL);
  return TESSERA_DYNAMIC_DEPENDENCY_GET_CLASS (self)->create_lock (self, error);
}

/**
 * tessera_dynamic_dependency_lock:
 * @self: a dependency
 * @timeout: seconds to wait at most; 0 tries once, a negative value waits
 *   for ever
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Acquires the resource for the dependency's job, waiting while it is
 * full. The wait is woken by events (a release, a holder's death, a
 * capacity change, in any process) and, as a fallback, by polling. It
 * needs no main loop in the calling thread. With a @cancellable or a
 * @timeout, ipc.lock is only tried (a peer holding it delays the next try
 * by at most a millisecond, by up to 50 ms after a second of refusals or
 * on a network file system), so cancelling ends the wait even while a
 * stuck peer keeps the folder locked, and so does the timeout (a wait of
 * less than a second gives a peer that second to leave its critical
 * section).
 *
 * On a [class@Tessera.TrackedDynamicResource] whose type says what a
 * waiter needs, a call that has waited longer than the resource's
 * [property@Tessera.TrackedDynamicResource:patience] reserves what it
 * needs (an entry in the folder's queue until it returns), and later
 * requests take only what is left.
 *
 * Returns: (transfer full): the acquired lock, or %NULL with
 *   %TESSERA_ERROR_TIMEOUT (also when @timeout is 0 and the resource is
 *   full), `G_IO_ERROR_CANCELLED`, or the error that made acquiring fail
 */
/* Whether @resource's pool lives in a lock folder on a file system this
 * kernel alone changes (_tessera_fs_is_local()), where a try of ipc.lock
 * costs no round trip. */
static gboolean
in_a_local_folder (TesseraDynamicResource *resource)
{
  const char *folder = _tessera_dynamic_resource_get_pool_folder (resource);

  return folder != NULL && _tessera_fs_is_local (folder);
}

/* The pause after @delay_us while ipc.lock keeps refusing, every try
 * since @busy_since (monotonic µs) refused: twice as long, up to 1 ms for
 * the first second where it is @quick (on a local file system, where a
 * try is a few system calls; on a network file system each is round
 * trips to the server, which waiters must not hammer), then up to 50 ms.
 * In a busy pool the lock is held for microseconds at a time and free
 * again at once: a waiter pausing longer than its peers would lose its
 * turn to those that try sooner (and to each release's own next acquire),
 * as a blocked flock() never does. A second of refusals is most likely a
 * peer stopped or stuck in its critical section: tried less often from
 * then on. */
static gulong
next_busy_delay_us (gulong delay_us, gint64 busy_since, gboolean quick)
{
  gulong cap = quick && g_get_monotonic_time () - busy_since < G_USEC_PER_SEC ? 1000 : 50000;

  return MIN (delay_us * 2, cap);
}

/* While a peer holds ipc.lock: sleep @us, waking at once when
 * @cancellable is cancelled (FALSE with @error); @pollfd is its pollfd,
 * or %NULL. ppoll(), as g_poll() counts in whole milliseconds. */
static gboolean
sleep_a_little (gulong us, GPollFD *pollfd, GCancellable *cancellable, GError **error)
{
  if (pollfd != NULL)
    {
      struct pollfd pfd = { .fd = pollfd->fd, .events = POLLIN };
      struct timespec ts = { .tv_sec = (time_t) (us / G_USEC_PER_SEC),
                             .tv_nsec = (long) (us % G_USEC_PER_SEC) * 1000 };

      ppoll (&pfd, 1, &ts, NULL);
    }
  else
    g_usleep (us);
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* How long a wait for ipc.lock may go on past a deadline: a peer's
 * critical section is short, so one try (a timeout of 0) does not fail
 * for a peer that is merely in it; a stuck peer fails it then. */
#define IPC_LOCK_GRACE_US G_USEC_PER_SEC

/* When a wait for ipc.lock with @deadline gives up (-1: never). */
static gint64
ipc_lock_give_up_time (gint64 deadline)
{
  return deadline < 0 ? -1 : MAX (deadline, g_get_monotonic_time () + IPC_LOCK_GRACE_US);
}

void
_tessera_set_ipc_lock_timeout (GError **error, TesseraDynamicResource *resource, const GError *busy)
{
  const char *name = tessera_dynamic_resource_get_name (resource);

  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT, _("Timed out waiting for resource “%s”: %s"),
               name != NULL ? name : "?", busy->message);
}

void
_tessera_set_wait_timeout (GError **error, TesseraDynamicResource *resource, const char *reason)
{
  const char *name = tessera_dynamic_resource_get_name (resource);

  if (reason != NULL)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT, _("Timed out waiting for resource “%s”: %s"),
                 name != NULL ? name : "?", reason);
  else
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT, _("Timed out waiting for resource “%s”"),
                 name != NULL ? name : "?");
}

gboolean
_tessera_dynamic_dependency_lock_acquire_until (TesseraDynamicDependencyLock  *lock,
                                                TesseraDynamicResource        *resource,
                                                gint64                         deadline,
                                                gint64                         brief_us,
                                                GCancellable                  *cancellable,
                                                GError                       **error)
{
  gint64 tried = g_get_monotonic_time ();
  gint64 busy_since = tried;
  gint64 give_up = brief_us >= 0 ? tried + brief_us : ipc_lock_give_up_time (deadline);
  int quick = -1;          /* see next_busy_delay_us(), at the first refusal */
  gulong delay_us = 0;
  GPollFD pollfd;
  gboolean have_pollfd = FALSE, ok = FALSE;

  /* Nothing can end this wait: block in flock(), served in turn. */
  if (cancellable == NULL && deadline < 0 && brief_us < 0)
    return tessera_lock_acquire (TESSERA_LOCK (lock), error);
  for (;;)
    {
      g_autoptr(GError) local = NULL;
      gint64 now = g_get_monotonic_time ();

      /* Tries far apart (the process was stopped, or starved): the peer
       * may have let go in between, so its grace and the pauses start
       * again. */
      if (now - tried > IPC_LOCK_GRACE_US / 2)
        {
          if (brief_us < 0 && give_up >= 0)
            give_up = MAX (give_up, now + IPC_LOCK_GRACE_US);
          busy_since = now;
          delay_us = 0;
        }
      tried = now;
      _tessera_ipc_lock_set_try_only (TRUE);
      ok = tessera_lock_acquire (TESSERA_LOCK (lock), &local);
      _tessera_ipc_lock_set_try_only (FALSE);
      if (ok)
        break;
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          break;
        }
      _tessera_pause_point ("ipc-lock-busy");
      if (give_up >= 0 && g_get_monotonic_time () >= give_up)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          break;
        }
      if (quick < 0)
        {
          quick = in_a_local_folder (resource);
          have_pollfd = g_cancellable_make_pollfd (cancellable, &pollfd);
        }
      delay_us = delay_us == 0 ? (quick ? 250 : 1000) : next_busy_delay_us (delay_us, busy_since, quick);
      if (!sleep_a_little (delay_us, have_pollfd ? &pollfd : NULL, cancellable, error))
        break;
    }
  if (have_pollfd)
    g_cancellable_release_fd (cancellable);
  return ok;
}

static TesseraDynamicDependencyLock *
lock_until (TesseraDynamicDependency  *self,
            gint64                     deadline,
            GCancellable              *cancellable,
            GError                   **error)
{
  TesseraDynamicResource *resource = PRIV (self)->resource;
  g_autofree char *reason = NULL;   /* why the last attempt waited */

  for (;;)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
      g_autoptr(GError) local = NULL;
      guint64 generation = tessera_dynamic_resource_get_generation (resource);
      gint64 wake;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      lock = tessera_dynamic_dependency_create_lock (self, error);
      if (lock == NULL)
        return NULL;
      if (_tessera_dynamic_dependency_lock_acquire_until (lock, resource, deadline, -1, cancellable, &local))
        return g_steal_pointer (&lock);
      if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          _tessera_set_ipc_lock_timeout (error, resource, local);
          return NULL;
        }
      if (!_tessera_error_means_wait (local))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      g_free (reason);
      reason = g_strdup (_tessera_wait_reason (local));
      if (deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          _tessera_set_wait_timeout (error, resource, reason);
          return NULL;
        }
      g_clear_error (&local);
      /* Wake at the end of the patience too, to start reserving. */
      wake = _tessera_wait_wake_time (self, deadline);
      if (!_tessera_dynamic_resource_wait_until (resource, generation, wake, cancellable, &local))
        {
          if (wake != deadline && g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
            continue;
          if (g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
            _tessera_set_wait_timeout (error, resource, reason);
          else
            g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
}

TesseraDynamicDependencyLock *
tessera_dynamic_dependency_lock (TesseraDynamicDependency  *self,
                                 double                     timeout,
                                 GCancellable              *cancellable,
                                 GError                   **error)
{
  TesseraDynamicDependencyLock *lock;
  gint64 deadline;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self), NULL);
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (PRIV (self)->resource), NULL);

  deadline = timeout < 0 || isinf (timeout) ? -1
             : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  /* One try (timeout 0) does not queue. */
  if (timeout != 0)
    _tessera_wait_begin (self);
  lock = lock_until (self, deadline, cancellable, error);
  _tessera_wait_end (self);
  return lock;
}

/* The asynchronous lock waits through sources in the caller's context:
 * an attempt only tries ipc.lock (a peer holding it means another try 1
 * to 50 ms later, see next_busy_delay_us()), and a full resource wakes
 * the task through a waker, the poller, the deadline or the cancellable.
 * No thread waits. */
typedef struct
{
  gint64 deadline;        /* monotonic µs, or -1 */
  gint64 ipc_give_up;     /* when a peer keeping ipc.lock since the first refused
                           * try in a row ends the wait, or -1 (none refused) */
  guint64 generation;     /* the resource's, before the last attempt */
  gpointer waker;
  gboolean polling;       /* registered with the poller */
  GSource *next;          /* the next attempt, when one is scheduled */
  GSource *timeout;
  GCancellable *cancellable;
  gulong cancel_handler;  /* see on_cancel_signal() */
  gboolean stopped;
  GSource *patience;      /* wakes the task when its patience is over */
  gulong busy_delay_ms;   /* back-off while ipc.lock is busy */
  gint64 busy_since;      /* the first of those refusals in a row, or 0 */
  int ipc_quick;          /* in a local folder (next_busy_delay_us()), or
                           * -1 before a refusal */
} AsyncLock;

static void attempt (GTask *task);

static void
drop_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

static void
async_lock_stop (GTask *task)
{
  AsyncLock *state = g_task_get_task_data (task);
  TesseraDynamicResource *resource = PRIV (g_task_get_source_object (task))->resource;

  if (state->waker != NULL)
    _tessera_dynamic_resource_remove_waker (resource, g_steal_pointer (&state->waker));
  if (state->polling)
    {
      _tessera_dynamic_resource_end_polling (resource);
      state->polling = FALSE;
    }
  drop_source (&state->next);
  drop_source (&state->timeout);
  /* Waits for a cancel running in another thread to end: its handler
   * does not run after this. */
  state->stopped = TRUE;
  if (state->cancel_handler != 0)
    g_cancellable_disconnect (state->cancellable, state->cancel_handler);
  state->cancel_handler = 0;
  drop_source (&state->patience);
  _tessera_wait_end (g_task_get_source_object (task));
}

static void
async_lock_free (gpointer data)
{
  AsyncLock *state = data;

  g_clear_object (&state->cancellable);
  g_free (state);
}

static void
return_error (GTask *task, GError *error)
{
  async_lock_stop (task);
  g_task_return_error (task, error);
}

static gboolean
on_next_attempt (gpointer data)
{
  GTask *task = data;
  AsyncLock *state = g_task_get_task_data (task);

  g_clear_pointer (&state->next, g_source_unref);
  attempt (task);
  return G_SOURCE_REMOVE;
}

static void
schedule_attempt (GTask *task, guint delay_ms)
{
  AsyncLock *state = g_task_get_task_data (task);

  if (state->next != NULL)
    return;
  state->next = delay_ms > 0 ? g_timeout_source_new (delay_ms) : g_idle_source_new ();
  g_source_set_name (state->next, "tessera-lock-attempt");
  g_source_set_callback (state->next, on_next_attempt, g_object_ref (task), g_object_unref);
  g_source_attach (state->next, g_task_get_context (task));
}

static gboolean
on_resource_changed (gpointer data)
{
  schedule_attempt (data, 0);
  return G_SOURCE_REMOVE;
}

static gboolean
on_patience_over (gpointer data)
{
  GTask *task = data;
  AsyncLock *state = g_task_get_task_data (task);

  g_clear_pointer (&state->patience, g_source_unref);
  schedule_attempt (task, 0);
  return G_SOURCE_REMOVE;
}

static gboolean
on_deadline (gpointer data)
{
  GTask *task = data;
  AsyncLock *state = g_task_get_task_data (task);

  g_clear_pointer (&state->timeout, g_source_unref);
  /* One last try, as the blocking lock makes one at its deadline. */
  state->deadline = 0;
  attempt (task);
  return G_SOURCE_REMOVE;
}

static gboolean
on_cancelled (gpointer data)
{
  GTask *task = data;
  AsyncLock *state = g_task_get_task_data (task);
  GError *error = NULL;

  /* Told after the wait ended otherwise. */
  if (!state->stopped && g_cancellable_set_error_if_cancelled (g_task_get_cancellable (task), &error))
    return_error (task, error);
  return G_SOURCE_REMOVE;
}

/* The cancellable's handler, in the thread that cancels: wakes the task
 * in its context. Not a GCancellableSource: GLib 2.74 leaks one freed
 * while another thread still cancels (it keeps it for the cancel's
 * handler to drop, which may have run already). */
static void
on_cancel_signal (GCancellable *cancellable, gpointer data)
{
  GTask *task = data;
  GSource *source = g_idle_source_new ();

  g_source_set_name (source, "tessera-lock-cancelled");
  g_source_set_callback (source, on_cancelled, g_object_ref (task), g_object_unref);
  g_source_attach (source, g_task_get_context (task));
  g_source_unref (source);
}

static void
attempt (GTask *task)
{
  TesseraDynamicDependency *self = g_task_get_source_object (task);
  TesseraDynamicResource *resource = PRIV (self)->resource;
  AsyncLock *state = g_task_get_task_data (task);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  GError *error = NULL;
  gboolean acquired;

  if (g_task_return_error_if_cancelled (task))
    {
      async_lock_stop (task);
      return;
    }
  state->generation = tessera_dynamic_resource_get_generation (resource);
  lock = tessera_dynamic_dependency_create_lock (self, &error);
  if (lock == NULL)
    {
      return_error (task, error);
      return;
    }
  _tessera_ipc_lock_set_try_only (TRUE);
  acquired = tessera_lock_acquire (TESSERA_LOCK (lock), &error);
  _tessera_ipc_lock_set_try_only (FALSE);
  if (acquired)
    {
      async_lock_stop (task);
      g_task_return_pointer (task, g_steal_pointer (&lock), g_object_unref);
      return;
    }
  /* Given up as the blocking wait does: a second of grace from the
   * first try refused, whatever the deadline. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) && state->ipc_give_up < 0)
    state->ipc_give_up = ipc_lock_give_up_time (state->deadline == 0 ? g_get_monotonic_time ()
                                                : state->deadline);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    state->ipc_give_up = -1;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) && state->ipc_give_up >= 0 &&
      g_get_monotonic_time () >= state->ipc_give_up)
    {
      GError *timeout = NULL;

      _tessera_set_ipc_lock_timeout (&timeout, resource, error);
      g_clear_error (&error);
      return_error (task, timeout);
      return;
    }
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      /* A peer's critical section: try again shortly. */
      g_clear_error (&error);
      if (state->busy_since == 0)
        state->busy_since = g_get_monotonic_time ();
      if (state->ipc_quick < 0)
        state->ipc_quick = in_a_local_folder (resource);
      schedule_attempt (task, state->busy_delay_ms);
      state->busy_delay_ms = next_busy_delay_us (state->busy_delay_ms * 1000, state->busy_since,
                                                 state->ipc_quick) / 1000;
      return;
    }
  state->busy_delay_ms = 1;
  state->busy_since = 0;
  if (!_tessera_error_means_wait (error))
    {
      return_error (task, error);
      return;
    }
  if (state->deadline == 0 || (state->deadline > 0 && g_get_monotonic_time () >= state->deadline))
    {
      GError *timeout = NULL;

      _tessera_set_wait_timeout (&timeout, resource, _tessera_wait_reason (error));
      g_clear_error (&error);
      return_error (task, timeout);
      return;
    }
  g_clear_error (&error);
  if (state->waker == NULL)
    {
      state->waker = _tessera_dynamic_resource_add_waker (resource, g_task_get_context (task),
                                                          on_resource_changed, g_object_ref (task),
                                                          g_object_unref);
      _tessera_dynamic_resource_begin_polling (resource);
      state->polling = TRUE;
    }
  /* Try again when the patience is over, to start reserving. */
  if (state->patience == NULL && _tessera_wait_get_patience_deadline (self) >= 0)
    {
      gint64 left_ms = (_tessera_wait_get_patience_deadline (self) - g_get_monotonic_time () + 999) / 1000;

      state->patience = g_timeout_source_new ((guint) CLAMP (left_ms, 0, G_MAXUINT));
      g_source_set_name (state->patience, "tessera-lock-patience");
      g_source_set_callback (state->patience, on_patience_over, g_object_ref (task), g_object_unref);
      g_source_attach (state->patience, g_task_get_context (task));
    }
  /* A change between the attempt and the waker going in place. */
  if (tessera_dynamic_resource_get_generation (resource) != state->generation)
    schedule_attempt (task, 0);
}

/**
 * tessera_dynamic_dependency_lock_async:
 * @self: a dependency
 * @timeout: as for [method@Tessera.DynamicDependency.lock]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called in the thread-default main context of
 *   the caller once the lock is held or acquiring failed
 * @user_data: data for @callback
 *
 * Acquires without blocking the caller; finish with
 * [method@Tessera.DynamicDependency.lock_finish]. The wait runs in the
 * caller's thread-default main context, through its sources: no thread is
 * kept busy while the resource is full, and ipc.lock is only tried (a
 * peer holding it delays the next try by a millisecond, by up to 50 ms
 * after a second of refusals or on a network file system), so a peer
 * that keeps it ends the wait at @timeout (given a second from the first
 * try it refused) or at a cancel, as for the blocking lock. As with
 * g_cancellable_disconnect(), which ending the wait calls, a handler of
 * @cancellable's #GCancellable::cancelled signal must not run the
 * caller's context until the wait has ended.
 */
void
tessera_dynamic_dependency_lock_async (TesseraDynamicDependency *self,
                                       double                    timeout,
                                       GCancellable             *cancellable,
                                       GAsyncReadyCallback       callback,
                                       gpointer                  user_data)
{
  g_autoptr(GTask) task = NULL;
  AsyncLock *state;

  g_return_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_name (task, "tessera_dynamic_dependency_lock_async");
  g_task_set_return_on_cancel (task, FALSE);
  state = g_new0 (AsyncLock, 1);
  state->busy_delay_ms = 1;
  state->ipc_quick = -1;
  state->deadline = timeout < 0 || isinf (timeout) || isnan (timeout) ? -1
                    : timeout == 0 ? 0
                    : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  state->ipc_give_up = -1;
  g_task_set_task_data (task, state, async_lock_free);
  if (state->deadline != 0)
    _tessera_wait_begin (self);
  if (state->deadline > 0)
    {
      state->timeout = g_timeout_source_new ((guint) MIN (timeout * 1000, (double) G_MAXUINT));
      g_source_set_callback (state->timeout, on_deadline, g_object_ref (task), g_object_unref);
      g_source_attach (state->timeout, g_task_get_context (task));
    }
  if (cancellable != NULL)
    {
      state->cancellable = g_object_ref (cancellable);
      state->cancel_handler = g_cancellable_connect (cancellable, G_CALLBACK (on_cancel_signal),
                                                     g_object_ref (task), g_object_unref);
    }
  schedule_attempt (task, 0);
}

/**
 * tessera_dynamic_dependency_lock_finish:
 * @self: a dependency
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@Tessera.DynamicDependency.lock_async].
 *
 * Returns: (transfer full): the acquired lock, or %NULL with @error set
 */
TesseraDynamicDependencyLock *
tessera_dynamic_dependency_lock_finish (TesseraDynamicDependency  *self,
                                        GAsyncResult              *result,
                                        GError                   **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
