/* tessera-acquire.c: the short path `tessera run` takes, for applications
 * that embed the library: a one-call acquire of a resource, through a
 * private job for this process (tessera_job_new_private(), in
 * tessera-job.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <tessera/tessera.h>

/**
 * tessera_dynamic_resource_take:
 * @self: a resource
 * @request: (nullable): what to take, as `--need NAME=REQUEST` says it: a
 *   count for a counter, "2:8192" for GPUs, "shared" for a mutex; %NULL
 *   for one unit
 * @timeout: seconds to wait while the resource is busy: 0 fails at once,
 *   a negative value waits for ever
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Takes @request of @self for this process, in one call: the short path
 * `tessera run` takes. It makes a private job for the process
 * ([ctor@Tessera.Job.new_private]), the dependency
 * ([method@Tessera.DynamicResource.create_dependency]) and waits for the
 * lock ([method@Tessera.DynamicDependency.lock]). Release it with
 * [method@Tessera.Lock.release] or by dropping the last reference; the
 * job's files go with it.
 *
 * Blocks the calling thread (no main loop needed); any thread.
 *
 * A request larger than the resource's whole capacity waits, as the
 * capacity may grow; its timeout's message then says so.
 *
 * Each call makes a job of its own. A job holds a resource once: to hold
 * more of one resource, ask for it in one request ("2", not "1" twice).
 *
 * Returns: (transfer full): the acquired lock, or %NULL with @error set
 *   (%TESSERA_ERROR_TIMEOUT, %TESSERA_ERROR_INVALID_CONFIGURATION for a
 *   malformed @request, %TESSERA_ERROR_REQUEST_TOO_LARGE from a plugin's
 *   type, …)
 */
TesseraDynamicDependencyLock *
tessera_dynamic_resource_take (TesseraDynamicResource  *self,
                                  const char              *request,
                                  double                   timeout,
                                  GCancellable            *cancellable,
                                  GError                 **error)
{
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), NULL);

  job = tessera_job_new_private (NULL, error);
  if (job == NULL)
    return NULL;
  dependency = tessera_dynamic_resource_create_dependency (self, job, request, error);
  if (dependency == NULL)
    return NULL;
  return tessera_dynamic_dependency_lock (dependency, timeout, cancellable, error);
}

static void
on_take_locked (GObject      *source,
                GAsyncResult *result,
                gpointer      data)
{
  g_autoptr(GTask) task = data;
  GError *error = NULL;
  TesseraDynamicDependencyLock *lock;

  lock = tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &error);
  if (lock == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, lock, g_object_unref);
}

/**
 * tessera_dynamic_resource_take_async:
 * @self: a resource
 * @request: (nullable): what to take, as for
 *   [method@Tessera.DynamicResource.take]; %NULL for one unit
 * @timeout: seconds to wait while the resource is busy: 0 fails at once,
 *   a negative value waits for ever
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the lock is taken or the take failed
 * @user_data: data for @callback
 *
 * Takes @request of @self for this process without blocking: what
 * [method@Tessera.DynamicResource.take] does, for an application with a
 * main loop. It makes a private job for the request
 * ([ctor@Tessera.Job.new_private]) and its dependency, and waits with
 * [method@Tessera.DynamicDependency.lock_async]; @callback runs in the
 * thread-default main context of the caller, never before this function
 * returns. Call [method@Tessera.DynamicResource.take_finish] there.
 *
 * Each call makes a job of its own, cleaned with its lock. A job holds a
 * resource once: a second dependency of one job on the same resource
 * fails with %TESSERA_ERROR_ALREADY_HELD, so ask for more in one request.
 */
void
tessera_dynamic_resource_take_async (TesseraDynamicResource *self,
                                     const char             *request,
                                     double                  timeout,
                                     GCancellable           *cancellable,
                                     GAsyncReadyCallback     callback,
                                     gpointer                user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  GError *error = NULL;

  g_return_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_name (task, "tessera_dynamic_resource_take_async");
  /* What the dependency's wait returns is the answer: a lock taken just
   * as @cancellable fires is given to the caller, not lost. */
  g_task_set_check_cancellable (task, FALSE);
  job = tessera_job_new_private (NULL, &error);
  if (job != NULL)
    dependency = tessera_dynamic_resource_create_dependency (self, job, request, &error);
  if (dependency == NULL)
    {
      /* GTask calls back from the main context, after this returns. */
      g_task_return_error (task, error);
      return;
    }
  tessera_dynamic_dependency_lock_async (dependency, timeout, cancellable, on_take_locked,
                                         g_steal_pointer (&task));
}

/**
 * tessera_dynamic_resource_take_finish:
 * @self: a resource
 * @result: the result passed to the callback
 * @error: return location for a #GError
 *
 * Finishes [method@Tessera.DynamicResource.take_async].
 *
 * Returns: (transfer full): the acquired lock, or %NULL with @error set
 *   (%TESSERA_ERROR_TIMEOUT, %TESSERA_ERROR_INVALID_CONFIGURATION for a
 *   malformed request, %G_IO_ERROR_CANCELLED, …)
 */
TesseraDynamicDependencyLock *
tessera_dynamic_resource_take_finish (TesseraDynamicResource  *self,
                                      GAsyncResult            *result,
                                      GError                 **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
