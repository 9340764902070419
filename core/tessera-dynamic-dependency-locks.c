/* tessera-dynamic-dependency-locks.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-dependency-private.h"
#include "tessera-dynamic-resource-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-lock-private.h"
#include "tessera-private.h"
#include "tessera-wait-queue-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>

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
  TesseraDynamicDependency *waiting_for;   /* what the last acquire_all could not take */
  char *waiting_reason;                    /* why, when it is larger than its resource */
  GError *refusal;                         /* its type's refusal of it, if it gave one */
};

G_DEFINE_FINAL_TYPE (TesseraDynamicDependencyLocks, tessera_dynamic_dependency_locks, TESSERA_TYPE_LOCKS)

static void
tessera_dynamic_dependency_locks_dispose (GObject *object)
{
  g_clear_object (&TESSERA_DYNAMIC_DEPENDENCY_LOCKS (object)->waiting_for);
  g_clear_pointer (&TESSERA_DYNAMIC_DEPENDENCY_LOCKS (object)->waiting_reason, g_free);
  g_clear_error (&TESSERA_DYNAMIC_DEPENDENCY_LOCKS (object)->refusal);
  G_OBJECT_CLASS (tessera_dynamic_dependency_locks_parent_class)->dispose (object);
}

static void
tessera_dynamic_dependency_locks_class_init (TesseraDynamicDependencyLocksClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = tessera_dynamic_dependency_locks_dispose;
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
/* {"dynamic_locks": [...]}, as locks.json holds it. */
static char *
locks_text (TesseraDynamicDependencyLocks *self)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();

  json_object_set_member (object, "dynamic_locks", tessera_dynamic_dependency_locks_to_json (self));
  json_node_take_object (root, object);
  return json_to_string (root, TRUE);
}

gboolean
tessera_dynamic_dependency_locks_save (TesseraDynamicDependencyLocks  *self,
                                       const char                     *path,
                                       GError                        **error)
{
  g_autofree char *text = NULL;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  text = locks_text (self);
  return _tessera_write_file_atomic (path, text, -1, FALSE, error);
}

/**
 * tessera_dynamic_dependency_locks_save_for_job:
 * @self: a set of locks
 * @job: the job they are held for
 * @error: return location for a #GError
 *
 * Writes `locks.json` in @job's folder as
 * [method@Tessera.DynamicDependencyLocks.save] does, through the folder's
 * descriptor when @job was made with [ctor@Tessera.Job.new_at]
 * ([method@Tessera.Job.write_file]).
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_dynamic_dependency_locks_save_for_job (TesseraDynamicDependencyLocks  *self,
                                               TesseraJob                     *job,
                                               GError                        **error)
{
  g_autofree char *text = NULL;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  g_return_val_if_fail (TESSERA_IS_JOB (job), FALSE);
  text = locks_text (self);
  return tessera_job_write_file (job, TESSERA_JOB_LOCKS_FILE, text, error);
}

/* ---------------------------------------------------------------------- */
/* All at once */

typedef struct
{
  guint index;                        /* in the caller's array */
  TesseraDynamicDependency *dependency;
  gboolean in_folder;                 /* a folder pool: ordered by (dev, ino) */
  dev_t dev;
  ino_t ino;
  const char *name;
  TesseraDynamicDependencyLock *lock; /* held in this attempt */
} Pool;

/* Folders first, by (st_dev, st_ino): one folder reached through two paths
 * sorts as one; then other stores (etcd…) by resource name. */
static int
compare_pools (gconstpointer a, gconstpointer b)
{
  const Pool *x = a, *y = b;

  if (x->in_folder != y->in_folder)
    return x->in_folder ? -1 : 1;
  if (x->in_folder)
    {
      if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
      if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
      return 0;
    }
  return g_strcmp0 (x->name, y->name);
}

/* How long a pool's ipc.lock is waited for while other pools are held:
 * a peer's critical section takes microseconds; one kept longer is
 * waited for holding nothing. */
#define HELD_IPC_WAIT_US (200 * 1000)

static gboolean
held_any (GArray *pools)
{
  for (guint i = 0; i < pools->len; i++)
    if (g_array_index (pools, Pool, i).lock != NULL)
      return TRUE;
  return FALSE;
}

static void
release_held (GArray *pools)
{
  for (guint i = pools->len; i-- > 0;)
    {
      Pool *pool = &g_array_index (pools, Pool, i);
      if (pool->lock != NULL)
        {
          g_autoptr(GError) error = NULL;

          /* Given back while waiting for the others: what stays behind
           * counts until this process is judged dead. */
          if (!tessera_lock_release (TESSERA_LOCK (pool->lock), &error))
            g_warning ("%s", error->message);
          g_clear_object (&pool->lock);
        }
    }
}

static void
set_waiting_reason (TesseraDynamicDependencyLocks *self, const char *reason)
{
  g_free (self->waiting_reason);
  self->waiting_reason = g_strdup (reason);
}

/* @refusal: the type's (an error that means wait), or NULL when the
 * wait is for something else (a peer keeping ipc.lock). */
static void
set_refusal (TesseraDynamicDependencyLocks *self, const GError *refusal)
{
  g_clear_error (&self->refusal);
  if (refusal != NULL)
    self->refusal = g_error_copy (refusal);
}

static void
set_waiting_for (TesseraDynamicDependencyLocks *self, TesseraDynamicDependency *dependency)
{
  g_set_object (&self->waiting_for, dependency);
  if (dependency == NULL)
    {
      set_waiting_reason (self, NULL);
      set_refusal (self, NULL);
    }
}

/**
 * tessera_dynamic_dependency_locks_acquire_all:
 * @self: the job's dynamic dependency locks
 * @dependencies: (array length=n_dependencies): what the job needs
 * @n_dependencies: the length of @dependencies
 * @timeout: seconds to wait at most; 0 tries once, a negative value waits
 *   for ever
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Takes every dependency or none, as a batch scheduler allocates a job:
 * while one is not free, nothing is held, so others may take what this
 * job would otherwise sit on (no hold-and-wait), and two jobs never
 * deadlock. Pools cannot be taken in one atomic step, so each attempt
 * tries them in a fixed order — folders by the (st_dev, st_ino) of their
 * folder, then other stores by name — and gives back what it took as soon
 * as one is not free; it then waits for that one to change (a change
 * elsewhere cannot make the set available while it is full) and tries
 * them all again. Two dependencies on one folder, whatever the paths,
 * fail with %TESSERA_ERROR_ALREADY_HELD: a job holds a pool once.
 *
 * On success the locks are appended to @self in the order of
 * @dependencies. On failure nothing is held, and
 * [method@Tessera.DynamicDependencyLocks.get_waiting_for] tells which
 * dependency was not free (or failed).
 *
 * Blocks the calling thread; needs no main loop there. As for
 * [method@Tessera.DynamicDependency.lock], a peer keeping a folder's
 * ipc.lock does not make the wait outlast its @timeout (by more than a
 * second) nor deaf to @cancellable; the waiting reason then names it.
 * Nor does it make this wait sit on the pools taken before that one: after
 * a fifth of a second they are given back, and that pool is waited for
 * alone (a timeout then holds nothing).
 *
 * Returns: %TRUE when every dependency is held; %FALSE with
 *   %TESSERA_ERROR_TIMEOUT (also when @timeout is 0 and one is not free),
 *   `G_IO_ERROR_CANCELLED`, or the error that made acquiring fail
 */
gboolean
tessera_dynamic_dependency_locks_acquire_all (TesseraDynamicDependencyLocks  *self,
                                              TesseraDynamicDependency      **dependencies,
                                              guint                           n_dependencies,
                                              double                          timeout,
                                              GCancellable                   *cancellable,
                                              GError                        **error)
{
  g_autoptr(GArray) pools = NULL;
  g_autoptr(GPtrArray) waiting = NULL;
  gint64 deadline;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), FALSE);
  g_return_val_if_fail (dependencies != NULL || n_dependencies == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  set_waiting_for (self, NULL);
  deadline = timeout < 0 || isinf (timeout) ? -1
             : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  pools = g_array_sized_new (FALSE, TRUE, sizeof (Pool), n_dependencies);
  for (guint i = 0; i < n_dependencies; i++)
    {
      TesseraDynamicResource *resource;
      Pool pool = { 0 };

      g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (dependencies[i]), FALSE);
      resource = tessera_dynamic_dependency_get_resource (dependencies[i]);
      pool.index = i;
      pool.dependency = dependencies[i];
      pool.name = tessera_dynamic_resource_get_name (resource);
      if (_tessera_dynamic_resource_in_a_folder (resource))
        {
          const char *folder = tessera_tracked_dynamic_resource_get_lock_folder (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource));
          GStatBuf st;

          if (folder == NULL || g_stat (folder, &st) < 0)
            {
              int saved = errno;

              set_waiting_for (self, dependencies[i]);
              _tessera_set_io_error (error, saved, _("Cannot read %s: %s"), folder ? folder : "?");
              return FALSE;
            }
          pool.in_folder = TRUE;
          pool.dev = st.st_dev;
          pool.ino = st.st_ino;
        }
      g_array_append_val (pools, pool);
    }
  g_array_sort (pools, compare_pools);
  for (guint i = 1; i < pools->len; i++)
    {
      Pool *a = &g_array_index (pools, Pool, i - 1), *b = &g_array_index (pools, Pool, i);

      if (a->in_folder && b->in_folder && a->dev == b->dev && a->ino == b->ino)
        {
          set_waiting_for (self, b->dependency);
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                       _("“%s” and “%s” are one pool (the same folder): a job holds it once"),
                       a->name ? a->name : "?", b->name ? b->name : "?");
          return FALSE;
        }
    }

  /* Past their patience, waiting dependencies reserve (one try does not). */
  if (timeout != 0)
    waiting = _tessera_wait_begin_all (dependencies, n_dependencies);

  for (;;)
    {
      Pool *blocker = NULL;
      guint64 generation = 0;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      for (guint i = 0; i < pools->len && blocker == NULL; i++)
        {
          Pool *pool = &g_array_index (pools, Pool, i);
          TesseraDynamicResource *resource = tessera_dynamic_dependency_get_resource (pool->dependency);
          g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
          g_autoptr(GError) local = NULL;
          guint64 before = tessera_dynamic_resource_get_generation (resource);
          gboolean holding = held_any (pools);

          if (pool->lock != NULL)
            continue;   /* taken alone behind a stuck peer, below */
          /* Holding others, a peer keeping this pool's ipc.lock is waited
           * for briefly. */
          lock = tessera_dynamic_dependency_create_lock (pool->dependency, &local);
          if (lock != NULL &&
              _tessera_dynamic_dependency_lock_acquire_until (lock, resource, deadline,
                                                              holding ? HELD_IPC_WAIT_US : -1, cancellable, &local))
            {
              pool->lock = g_steal_pointer (&lock);
              continue;
            }
          if (holding && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              /* No hold-and-wait behind it either: what is held goes back,
               * this pool is waited for alone (past the deadline too, for
               * the grace of its ipc.lock, so a timeout holds nothing),
               * then the others are tried again from the first. */
              release_held (pools);
              set_waiting_for (self, pool->dependency);
              set_waiting_reason (self, local->message);
              set_refusal (self, NULL);
              g_clear_error (&local);
              g_clear_object (&lock);
              lock = tessera_dynamic_dependency_create_lock (pool->dependency, &local);
              if (lock != NULL &&
                  _tessera_dynamic_dependency_lock_acquire_until (lock, resource, deadline, -1, cancellable, &local))
                {
                  pool->lock = g_steal_pointer (&lock);
                  i = G_MAXUINT;   /* the loop's i++ makes it 0 */
                  continue;
                }
            }
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              /* A peer kept ipc.lock past the deadline: say so. */
              release_held (pools);
              set_waiting_for (self, pool->dependency);
              set_waiting_reason (self, local->message);
              set_refusal (self, NULL);
              _tessera_set_ipc_lock_timeout (error, resource, local);
              return FALSE;
            }
          if (!_tessera_error_means_wait (local))
            {
              release_held (pools);
              set_waiting_for (self, pool->dependency);
              set_refusal (self, NULL);
              g_propagate_error (error, g_steal_pointer (&local));
              return FALSE;
            }
          blocker = pool;
          generation = before;
          set_waiting_reason (self, _tessera_wait_reason (local));
          set_refusal (self, local);
        }
      if (blocker == NULL)
        {
          /* All held: hand them over in the caller's order. */
          g_autofree TesseraDynamicDependencyLock **ordered = g_new0 (TesseraDynamicDependencyLock *, pools->len);

          for (guint i = 0; i < pools->len; i++)
            {
              Pool *pool = &g_array_index (pools, Pool, i);
              ordered[pool->index] = g_steal_pointer (&pool->lock);
            }
          for (guint i = 0; i < pools->len; i++)
            {
              tessera_locks_append (TESSERA_LOCKS (self), TESSERA_LOCK (ordered[i]));
              g_object_unref (ordered[i]);
            }
          /* Held as a whole: releasing the container releases them all. */
          _tessera_lock_set_held (TESSERA_LOCK (self));
          set_waiting_for (self, NULL);
          return TRUE;
        }
      release_held (pools);
      set_waiting_for (self, blocker->dependency);
      if (deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          _tessera_set_wait_timeout (error, tessera_dynamic_dependency_get_resource (blocker->dependency),
                                     self->waiting_reason);
          return FALSE;
        }
      {
        g_autoptr(GError) local = NULL;
        gint64 wake = _tessera_wait_wake_time (blocker->dependency, deadline);

        if (!_tessera_dynamic_resource_wait_until (tessera_dynamic_dependency_get_resource (blocker->dependency),
                                                   generation, wake, cancellable, &local) &&
            !(wake != deadline && g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT)))
          {
            if (g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
              _tessera_set_wait_timeout (error, tessera_dynamic_dependency_get_resource (blocker->dependency),
                                         self->waiting_reason);
            else
              g_propagate_error (error, g_steal_pointer (&local));
            return FALSE;
          }
      }
    }
}

/**
 * tessera_dynamic_dependency_locks_get_waiting_for:
 * @self: the job's dynamic dependency locks
 *
 * After [method@Tessera.DynamicDependencyLocks.acquire_all] failed: the
 * dependency that was not free (with %TESSERA_ERROR_TIMEOUT) or whose
 * acquiring failed.
 *
 * Returns: (transfer none) (nullable): that dependency, or %NULL after a
 *   success or before any attempt
 */
TesseraDynamicDependency *
tessera_dynamic_dependency_locks_get_waiting_for (TesseraDynamicDependencyLocks *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), NULL);
  return self->waiting_for;
}

/**
 * tessera_dynamic_dependency_locks_get_waiting_reason:
 * @self: the job's dynamic dependency locks
 *
 * After [method@Tessera.DynamicDependencyLocks.acquire_all] timed out
 * waiting for a dependency larger than its resource's current capacity
 * (%TESSERA_ERROR_OVER_CAPACITY from the resource type): the type's own
 * words on why it waits. Such a request keeps waiting, since the capacity
 * may grow; a command says this once. After a timeout behind a peer that
 * kept the folder's ipc.lock: words naming that lock.
 *
 * Returns: (transfer none) (nullable): the reason, or %NULL when the
 *   dependency waits only because the resource is busy
 */
const char *
tessera_dynamic_dependency_locks_get_waiting_reason (TesseraDynamicDependencyLocks *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), NULL);
  return self->waiting_reason;
}

/**
 * tessera_dynamic_dependency_locks_get_refusal:
 * @self: the job's dynamic dependency locks
 *
 * After [method@Tessera.DynamicDependencyLocks.acquire_all] timed out
 * (or, with a timeout of 0, found a dependency not free): how the
 * resource type refused the dependency it waited for
 * ([method@Tessera.DynamicDependencyLocks.get_waiting_for]) at the last
 * attempt, as its [vfunc@Tessera.TrackedDynamicResource.is_available]
 * said it. The code tells why it waited: %TESSERA_ERROR_UNAVAILABLE when
 * the resource is full for this request (the message is the type's
 * reason: a per-user cap, the devices held…),
 * %TESSERA_ERROR_OVER_CAPACITY when the request is larger than the
 * resource's current capacity (the message names that capacity). A
 * command shows the message, and may give up at once on a request over
 * the capacity rather than wait for the capacity to grow.
 *
 * Returns: (transfer none) (nullable): the refusal, or %NULL after a
 *   success, before any attempt, when the acquisition failed for another
 *   reason, or when the last attempt was kept out by a peer holding the
 *   folder's ipc.lock (see
 *   [method@Tessera.DynamicDependencyLocks.get_waiting_reason])
 */
const GError *
tessera_dynamic_dependency_locks_get_refusal (TesseraDynamicDependencyLocks *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCKS (self), NULL);
  return self->refusal;
}
