/* tessera-dynamic-dependency-locks.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

/**
 * TesseraDynamicDependencyLocks:
 *
 * The seed's `DynamicDependencyLocks`: the dynamic locks of one job, with
 * the lifecycle hooks applied to all of them and `locks.json` written from
 * them.
 */
struct _TesseraDynamicDependencyLocks
{
  TesseraLocks parent_instance;
};

G_DEFINE_FINAL_TYPE (TesseraDynamicDependencyLocks, tessera_dynamic_dependency_locks, TESSERA_TYPE_LOCKS)

static void
tessera_dynamic_dependency_locks_class_init (TesseraDynamicDependencyLocksClass *klass)
{
}

static void
tessera_dynamic_dependency_locks_init (TesseraDynamicDependencyLocks *self)
{
}

/**
 * tessera_dynamic_dependency_locks_new:
 *
 * Makes an empty set of dynamic dependency locks, for a scheduler
 * to acquire together and write to `locks.json`.
 *
 * Returns: (transfer full): an empty set of dynamic dependency locks;
 *   append [class@Tessera.DynamicDependencyLock]s with
 *   [method@Tessera.Locks.append]
 */
TesseraDynamicDependencyLocks *
tessera_dynamic_dependency_locks_new (void)
{
  return g_object_new (TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCKS, NULL);
}

typedef gboolean (*HookFunc) (TesseraDynamicDependencyLock *lock, TesseraJob *job,
                              TesseraProcess *process, GError **error);

static gboolean
before_start (TesseraDynamicDependencyLock *lock, TesseraJob *job, TesseraProcess *process, GError **error)
{
  return tessera_dynamic_dependency_lock_job_before_start (lock, job, error);
}

static gboolean
finished (TesseraDynamicDependencyLock *lock, TesseraJob *job, TesseraProcess *process, GError **error)
{
  return tessera_dynamic_dependency_lock_job_finished (lock, job, error);
}

static gboolean
for_each (TesseraDynamicDependencyLocks *self, HookFunc hook, TesseraJob *job,
          TesseraProcess *process, GError **error)
{
  GPtrArray *locks = tessera_locks_get_locks (TESSERA_LOCKS (self));

  for (guint i = 0; i < locks->len; i++)
    {
      TesseraLock *lock = g_ptr_array_index (locks, i);
      if (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (lock) &&
          !hook (TESSERA_DYNAMIC_DEPENDENCY_LOCK (lock), job, process, error))
        return FALSE;
    }
  return TRUE;
}

/**
 * tessera_dynamic_dependency_locks_job_before_start:
 * @self: a set of locks
 * @job: the job about to start
 * @error: return location for a #GError
 *
 * Calls [method@Tessera.DynamicDependencyLock.job_before_start] on each lock.
 *
 * Returns: %FALSE with @error set at the first failure
 */
gboolean
tessera_dynamic_dependency_locks_job_before_start (TesseraDynamicDependencyLocks  *self,
                                                   TesseraJob                     *job,
                                                   GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  return for_each (self, before_start, job, NULL, error);
}

/**
 * tessera_dynamic_dependency_locks_job_started:
 * @self: a set of locks
 * @job: the job that started
 * @process: the process running it
 * @error: return location for a #GError
 *
 * Calls [method@Tessera.DynamicDependencyLock.job_started] on each lock.
 *
 * Returns: %FALSE with @error set at the first failure
 */
gboolean
tessera_dynamic_dependency_locks_job_started (TesseraDynamicDependencyLocks  *self,
                                              TesseraJob                     *job,
                                              TesseraProcess                 *process,
                                              GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  return for_each (self, tessera_dynamic_dependency_lock_job_started, job, process, error);
}

/**
 * tessera_dynamic_dependency_locks_job_finished:
 * @self: a set of locks
 * @job: the job that ended
 * @error: return location for a #GError
 *
 * Calls [method@Tessera.DynamicDependencyLock.job_finished] on each lock.
 *
 * Returns: %FALSE with @error set at the first failure
 */
gboolean
tessera_dynamic_dependency_locks_job_finished (TesseraDynamicDependencyLocks  *self,
                                               TesseraJob                     *job,
                                               GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  return for_each (self, finished, job, NULL, error);
}

/**
 * tessera_dynamic_dependency_locks_to_json:
 * @self: a set of locks
 *
 * The `dynamic_locks` array of `locks.json`: each lock's entry, as
 * [vfunc@Tessera.DynamicDependencyLock.to_json] writes it.
 *
 * Returns: (transfer full): a JSON array with the entry of each lock
 */
JsonNode *
tessera_dynamic_dependency_locks_to_json (TesseraDynamicDependencyLocks *self)
{
  GPtrArray *locks;
  JsonArray *array;
  JsonNode *node;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), NULL);
  locks = tessera_locks_get_locks (TESSERA_LOCKS (self));
  array = json_array_new ();
  for (guint i = 0; i < locks->len; i++)
    {
      TesseraLock *lock = g_ptr_array_index (locks, i);
      if (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (lock))
        json_array_add_object_element (array,
          tessera_dynamic_dependency_lock_to_json (TESSERA_DYNAMIC_DEPENDENCY_LOCK (lock)));
    }
  node = json_node_new (JSON_NODE_ARRAY);
  json_node_take_array (node, array);
  return node;
}

/**
 * tessera_dynamic_dependency_locks_save:
 * @self: a set of locks
 * @path: where to write, usually `locks.json` in the job directory
 * @error: return location for a #GError
 *
 * Writes `{"dynamic_locks": [...]}` atomically, for the job process to
 * read with [func@Tessera.JobDependencyLocks.load].
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_dynamic_dependency_locks_save (TesseraDynamicDependencyLocks  *self,
                                       const char                     *path,
                                       GError                        **error)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;
  JsonObject *object;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  object = json_object_new ();
  json_object_set_member (object, "dynamic_locks", tessera_dynamic_dependency_locks_to_json (self));
  json_node_take_object (root, object);
  text = json_to_string (root, TRUE);
  return _tessera_write_file_atomic (path, text, -1, FALSE, error);
}
