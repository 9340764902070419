/* tessera-dynamic-dependency.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <math.h>

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
 * needs no main loop in the calling thread.
 *
 * Returns: (transfer full): the acquired lock, or %NULL with
 *   %TESSERA_ERROR_TIMEOUT (also when @timeout is 0 and the resource is
 *   full), `G_IO_ERROR_CANCELLED`, or the error that made acquiring fail
 */
TesseraDynamicDependencyLock *
tessera_dynamic_dependency_lock (TesseraDynamicDependency  *self,
                                 double                     timeout,
                                 GCancellable              *cancellable,
                                 GError                   **error)
{
  TesseraDynamicResource *resource;
  gint64 deadline;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self), NULL);
  resource = PRIV (self)->resource;
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (resource), NULL);

  deadline = timeout < 0 || isinf (timeout) ? -1
             : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  for (;;)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
      g_autoptr(GError) local = NULL;
      guint64 generation = tessera_dynamic_resource_get_generation (resource);

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      lock = tessera_dynamic_dependency_create_lock (self, error);
      if (lock == NULL)
        return NULL;
      if (tessera_lock_acquire (TESSERA_LOCK (lock), &local))
        return g_steal_pointer (&lock);
      if (!g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT,
                       _("Timed out waiting for resource “%s”"),
                       tessera_dynamic_resource_get_name (resource)
                       ? tessera_dynamic_resource_get_name (resource) : "?");
          return NULL;
        }
      if (!tessera_dynamic_resource_wait (resource, generation, deadline, cancellable, error))
        return NULL;
    }
}

static void
lock_in_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  GError *error = NULL;
  TesseraDynamicDependencyLock *lock =
    tessera_dynamic_dependency_lock (source_object, *(double *) task_data, cancellable, &error);

  if (lock != NULL)
    g_task_return_pointer (task, lock, g_object_unref);
  else
    g_task_return_error (task, error);
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
 * [method@Tessera.DynamicDependency.lock_finish].
 */
void
tessera_dynamic_dependency_lock_async (TesseraDynamicDependency *self,
                                       double                    timeout,
                                       GCancellable             *cancellable,
                                       GAsyncReadyCallback       callback,
                                       gpointer                  user_data)
{
  g_autoptr(GTask) task = NULL;
  double *data;

  g_return_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_name (task, "tessera_dynamic_dependency_lock_async");
  data = g_new (double, 1);
  *data = timeout;
  g_task_set_task_data (task, data, g_free);
  g_task_run_in_thread (task, lock_in_thread);
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
