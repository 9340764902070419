/* tessera-dynamic-dependency-lock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-resource-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"
#include "tessera-registry-private.h"

#include <string.h>

/**
 * TesseraDynamicDependencyLock:
 *
 * The seed's `DynamicDependencyLock`: the scheduler-side lock of one
 * dependency, with the lifecycle hooks `job_before_start`, `job_started`
 * and `job_finished`, and `to_json`, which tells the job process (through
 * `locks.json`) which class rebuilds its side of the lock: the entry's
 * "module" and "class" are looked up among the classes registered with
 * [func@Tessera.DynamicDependencyLock.register_class].
 *
 * On a [class@Tessera.TrackedDynamicResource] the defaults do everything a
 * plain lock needs: acquire and release through the resource, record the
 * job's process when it starts, and write "lock_file_path".
 */
/* The defaults reach the tracked resource through the functions it
 * installs on its base (_tessera_dynamic_resource_get_grant()): the
 * tracked resource calls the dependency, which makes this lock, so this
 * lock calling it back would close a cycle. */
typedef struct
{
  TesseraDynamicDependency *dependency;
  gint64 fencing_token;       /* token_lock; 0: not held, or none given */
} TesseraDynamicDependencyLockPrivate;

/* Set by the thread that acquires or releases, read by any. */
G_LOCK_DEFINE_STATIC (token_lock);

enum {
  PROP_0,
  PROP_DEPENDENCY,
  PROP_FENCING_TOKEN,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraDynamicDependencyLock, tessera_dynamic_dependency_lock, TESSERA_TYPE_LOCK)

#define PRIV(o) ((TesseraDynamicDependencyLockPrivate *) tessera_dynamic_dependency_lock_get_instance_private (o))

static TesseraDynamicResource *
resource_of (TesseraDynamicDependencyLock *self)
{
  TesseraDynamicDependency *dependency = PRIV (self)->dependency;

  return dependency ? tessera_dynamic_dependency_get_resource (dependency) : NULL;
}

/* (nullable): how @resource is granted, when it keeps its holders in a
 * pool (a tracked resource); NULL: the lock's class does it. */
static const TesseraGrantFuncs *
grant_of (TesseraDynamicResource *resource)
{
  return resource != NULL ? _tessera_dynamic_resource_get_grant (resource) : NULL;
}

static void
set_fencing_token (TesseraDynamicDependencyLock *self, gint64 token)
{
  G_LOCK (token_lock);
  PRIV (self)->fencing_token = token;
  G_UNLOCK (token_lock);
}

static gboolean
real_do_acquire (TesseraLock *lock, GError **error)
{
  TesseraDynamicDependencyLock *self = TESSERA_DYNAMIC_DEPENDENCY_LOCK (lock);
  TesseraDynamicResource *resource = resource_of (self);
  const TesseraGrantFuncs *grant = grant_of (resource);
  gint64 token = 0;

  /* A lock on a resource that is not tracked must implement do_acquire. */
  g_return_val_if_fail (grant != NULL, FALSE);
  if (!grant->acquire (resource, PRIV (self)->dependency, &token, error))
    return FALSE;
  set_fencing_token (self, token);
  return TRUE;
}

static gboolean
real_do_release (TesseraLock *lock, GError **error)
{
  TesseraDynamicDependencyLock *self = TESSERA_DYNAMIC_DEPENDENCY_LOCK (lock);
  TesseraDynamicResource *resource = resource_of (self);
  const TesseraGrantFuncs *grant = grant_of (resource);
  g_autoptr(GError) local = NULL;

  set_fencing_token (self, 0);
  if (grant == NULL || grant->release (resource, PRIV (self)->dependency, &local))
    return TRUE;
  g_set_error (error, local->domain, local->code, _("Cannot release %s: %s"),
               tessera_dynamic_resource_get_name (resource), local->message);
  return FALSE;
}

/* None for a pool in another store (etcd): its `path`, if set, holds
 * nothing of it, so no lock file or ipc.lock is to be looked for there;
 * none either for a resource that is not tracked (it has no pool). */
static char *
real_dup_lock_folder (TesseraDynamicDependencyLock *self)
{
  TesseraDynamicResource *resource = resource_of (self);

  return resource != NULL ? g_strdup (_tessera_dynamic_resource_get_pool_folder (resource)) : NULL;
}

static gboolean
real_job_hook (TesseraDynamicDependencyLock *self, TesseraJob *job, GError **error)
{
  return TRUE;
}

static gboolean
real_job_started (TesseraDynamicDependencyLock *self, TesseraJob *job,
                  TesseraProcess *process, GError **error)
{
  TesseraDynamicResource *resource = resource_of (self);
  const TesseraGrantFuncs *grant = grant_of (resource);

  if (grant == NULL)
    return TRUE;
  return grant->record_process (resource, PRIV (self)->dependency, process, error);
}

static void
real_to_json (TesseraDynamicDependencyLock *self, JsonObject *object)
{
  const char *module, *class_name;
  g_autofree char *lock_file_path = NULL;

  if (_tessera_registry_lock_class_name (G_OBJECT_TYPE (self), &module, &class_name))
    {
      json_object_set_string_member (object, "module", module);
      json_object_set_string_member (object, "class", class_name);
    }
  else
    {
      /* Not registered: name the GType, so the job side says what is missing. */
      json_object_set_string_member (object, "module", "tessera");
      json_object_set_string_member (object, "class", G_OBJECT_TYPE_NAME (self));
    }
  lock_file_path = tessera_dynamic_dependency_lock_dup_lock_file_path (self);
  if (lock_file_path != NULL)
    json_object_set_string_member (object, "lock_file_path", lock_file_path);
}

static TesseraJobDependencyLock *
real_job_lock_from_json (TesseraDynamicDependencyLockClass *klass, JsonObject *data, GError **error)
{
  JsonNode *path = json_object_get_member (data, "lock_file_path");

  if (path != NULL && !JSON_NODE_HOLDS_NULL (path) &&
      (!JSON_NODE_HOLDS_VALUE (path) || json_node_get_value_type (path) != G_TYPE_STRING))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("“lock_file_path” must be a string"));
      return NULL;
    }
  return tessera_job_dependency_lock_new (data);
}

static char **
real_dup_environment (TesseraDynamicDependencyLock *self)
{
  return NULL;
}

static void
tessera_dynamic_dependency_lock_finalize (GObject *object)
{
  g_clear_object (&PRIV (TESSERA_DYNAMIC_DEPENDENCY_LOCK (object))->dependency);
  G_OBJECT_CLASS (tessera_dynamic_dependency_lock_parent_class)->finalize (object);
}

static void
tessera_dynamic_dependency_lock_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_DEPENDENCY:
      g_value_set_object (value, PRIV (TESSERA_DYNAMIC_DEPENDENCY_LOCK (object))->dependency);
      break;
    case PROP_FENCING_TOKEN:
      g_value_set_int64 (value, tessera_dynamic_dependency_lock_get_fencing_token (TESSERA_DYNAMIC_DEPENDENCY_LOCK (object)));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_dependency_lock_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_DEPENDENCY:
      g_set_object (&PRIV (TESSERA_DYNAMIC_DEPENDENCY_LOCK (object))->dependency, g_value_get_object (value));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_dependency_lock_class_init (TesseraDynamicDependencyLockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraLockClass *lock_class = TESSERA_LOCK_CLASS (klass);

  object_class->finalize = tessera_dynamic_dependency_lock_finalize;
  object_class->get_property = tessera_dynamic_dependency_lock_get_property;
  object_class->set_property = tessera_dynamic_dependency_lock_set_property;
  lock_class->do_acquire = real_do_acquire;
  lock_class->do_release = real_do_release;
  klass->dup_lock_folder = real_dup_lock_folder;
  klass->job_before_start = real_job_hook;
  klass->job_started = real_job_started;
  klass->job_finished = real_job_hook;
  klass->to_json = real_to_json;
  klass->job_lock_from_json = real_job_lock_from_json;
  klass->dup_environment = real_dup_environment;

  /**
   * TesseraDynamicDependencyLock:dependency:
   *
   * The dependency this lock grants.
   */
  props[PROP_DEPENDENCY] = g_param_spec_object ("dependency", NULL, NULL, TESSERA_TYPE_DYNAMIC_DEPENDENCY,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraDynamicDependencyLock:fencing-token:
   *
   * The fencing token of the grant this lock holds: see
   * [method@Tessera.DynamicDependencyLock.get_fencing_token]. Read-only,
   * and not notified.
   */
  props[PROP_FENCING_TOKEN] = g_param_spec_int64 ("fencing-token", NULL, NULL, 0, G_MAXINT64, 0,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  tessera_dynamic_dependency_lock_register_class (TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK,
                                                  "tessera", "DynamicDependencyLock");
}

static void
tessera_dynamic_dependency_lock_init (TesseraDynamicDependencyLock *self)
{
}

/**
 * tessera_dynamic_dependency_lock_get_dependency:
 * @self: a lock
 *
 * The dependency this lock grants.
 *
 * Returns: (transfer none): the dependency this lock grants
 */
TesseraDynamicDependency *
tessera_dynamic_dependency_lock_get_dependency (TesseraDynamicDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), NULL);
  return PRIV (self)->dependency;
}

/**
 * tessera_dynamic_dependency_lock_get_fencing_token:
 * @self: a lock
 *
 * The fencing token of the grant this lock holds: a number larger than
 * the token of every earlier grant of the same resource, whichever
 * process or host made it. Give it with every write to storage that the
 * holding protects, and have the storage refuse a write whose token is
 * lower than the highest it has seen: a holder that froze or lost its
 * holding (a host lease or an etcd lease that expired, a lock file
 * removed by `tessera clean --force`) and wakes up after another was
 * granted the resource then cannot overwrite that one's work.
 *
 * In a folder pool the token comes from a counter kept in the pool
 * folder beside `ipc.lock` (`fence.UID`), raised under `ipc.lock` at
 * every grant and kept so that a crash, even of the machine, never makes
 * it go back (it may skip numbers); it guards against crashed and frozen
 * holders, not against a member of the pool who rewrites the counter
 * lower, and experimaestro's grants take no token. On etcd it is the
 * holder key's create revision.
 *
 * Returns: the token, or 0 when the lock is not held (or was granted by
 *   a resource of another kind, which gives none)
 */
gint64
tessera_dynamic_dependency_lock_get_fencing_token (TesseraDynamicDependencyLock *self)
{
  gint64 token;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), 0);
  G_LOCK (token_lock);
  token = PRIV (self)->fencing_token;
  G_UNLOCK (token_lock);
  return token;
}

/**
 * tessera_dynamic_dependency_lock_dup_lock_folder:
 * @self: a lock
 *
 * The resource's lock folder, from
 * [vfunc@Tessera.DynamicDependencyLock.dup_lock_folder].
 *
 * Returns: (transfer full) (nullable): the resource's lock folder
 */
char *
tessera_dynamic_dependency_lock_dup_lock_folder (TesseraDynamicDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), NULL);
  return TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->dup_lock_folder (self);
}

/**
 * tessera_dynamic_dependency_lock_dup_ipc_lock_path:
 * @self: a lock
 *
 * Where the resource's `ipc.lock` is.
 *
 * Returns: (transfer full) (nullable): `ipc.lock` in the lock folder
 */
char *
tessera_dynamic_dependency_lock_dup_ipc_lock_path (TesseraDynamicDependencyLock *self)
{
  g_autofree char *folder = tessera_dynamic_dependency_lock_dup_lock_folder (self);
  return folder ? g_build_filename (folder, _TESSERA_POOL_IPC_LOCK, NULL) : NULL;
}

/**
 * tessera_dynamic_dependency_lock_dup_lock_file_path:
 * @self: a lock
 *
 * Where this lock's lock file is, or will be, written.
 *
 * Returns: (transfer full) (nullable): `jobs/{task_id}@{identifier}.json`
 *   in the lock folder, for the dependency's job
 */
char *
tessera_dynamic_dependency_lock_dup_lock_file_path (TesseraDynamicDependencyLock *self)
{
  g_autofree char *folder = tessera_dynamic_dependency_lock_dup_lock_folder (self);
  g_autofree char *name = NULL;
  TesseraJob *job;

  if (folder == NULL || PRIV (self)->dependency == NULL)
    return NULL;
  job = tessera_dynamic_dependency_get_target (PRIV (self)->dependency);
  if (job == NULL)
    return NULL;
  name = tessera_job_dup_lock_file_name (job);
  return g_build_filename (folder, _TESSERA_POOL_JOBS, name, NULL);
}

/**
 * tessera_dynamic_dependency_lock_job_before_start:
 * @self: a lock
 * @job: the job about to start
 * @error: return location for a #GError
 *
 * Called after the job directory exists and before the job process is
 * spawned.
 *
 * Returns: %FALSE with @error set to stop the start
 */
gboolean
tessera_dynamic_dependency_lock_job_before_start (TesseraDynamicDependencyLock  *self,
                                                  TesseraJob                    *job,
                                                  GError                       **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), FALSE);
  return TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->job_before_start (self, job, error);
}

/**
 * tessera_dynamic_dependency_lock_job_started:
 * @self: a lock
 * @job: the job that started
 * @process: the process running it
 * @error: return location for a #GError
 *
 * Called once the job process runs; by default records @process in the
 * lock file so that the holding is reclaimed when it dies.
 *
 * Returns: %FALSE with @error set on failure
 */
gboolean
tessera_dynamic_dependency_lock_job_started (TesseraDynamicDependencyLock  *self,
                                             TesseraJob                    *job,
                                             TesseraProcess                *process,
                                             GError                       **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), FALSE);
  return TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->job_started (self, job, process, error);
}

/**
 * tessera_dynamic_dependency_lock_job_finished:
 * @self: a lock
 * @job: the job that ended
 * @error: return location for a #GError
 *
 * Called when the job ended, before the lock is released.
 *
 * Returns: %FALSE with @error set on failure
 */
gboolean
tessera_dynamic_dependency_lock_job_finished (TesseraDynamicDependencyLock  *self,
                                              TesseraJob                    *job,
                                              GError                       **error)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), FALSE);
  return TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->job_finished (self, job, error);
}

/**
 * tessera_dynamic_dependency_lock_dup_environment:
 * @self: a lock
 *
 * The environment a job holding this lock needs, from
 * [vfunc@Tessera.DynamicDependencyLock.dup_environment].
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): the
 *   `KEY=VALUE` environment entries a job holding this lock needs
 */
char **
tessera_dynamic_dependency_lock_dup_environment (TesseraDynamicDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), NULL);
  return TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->dup_environment (self);
}

/**
 * tessera_dynamic_dependency_lock_to_json:
 * @self: a lock
 *
 * The entry of this lock in `locks.json`.
 *
 * Returns: (transfer full): an object with "module", "class" and what the
 *   lock's class adds
 */
JsonObject *
tessera_dynamic_dependency_lock_to_json (TesseraDynamicDependencyLock *self)
{
  JsonObject *object;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY_LOCK (self), NULL);
  object = json_object_new ();
  TESSERA_DYNAMIC_DEPENDENCY_LOCK_GET_CLASS (self)->to_json (self, object);
  return object;
}

/**
 * tessera_dynamic_dependency_lock_register_class:
 * @type: a subtype of #TesseraDynamicDependencyLock
 * @module: the "module" name written in `locks.json`
 * @class_name: the "class" name written in `locks.json`
 *
 * Makes @type the class that (@module, @class_name) from `locks.json`
 * stands for. The first pair registered for a type is the one its
 * `to_json` writes; later pairs are aliases (for instance experimaestro's
 * own module name).
 */
void
tessera_dynamic_dependency_lock_register_class (GType       type,
                                                const char *module,
                                                const char *class_name)
{
  g_return_if_fail (g_type_is_a (type, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK));
  g_return_if_fail (tessera_check_plugin_name (module, NULL) && tessera_check_plugin_name (class_name, NULL));

  _tessera_registry_register_lock_class (type, module, class_name);
}

/**
 * tessera_dynamic_dependency_lock_lookup_class:
 * @module: a "module" name from `locks.json`
 * @class_name: a "class" name from `locks.json`
 * @error: return location for a #GError
 *
 * Finds the lock class registered for a (module, class) pair, asking the
 * default [class@Tessera.Registry] to load the plugin that provides it
 * when no loaded code does. Names are only ever looked up, never turned
 * into paths: names outside `[A-Za-z0-9_.-]` are
 * %TESSERA_ERROR_INVALID_NAME.
 *
 * Returns: the type, or %G_TYPE_INVALID with %TESSERA_ERROR_CLASS_NOT_FOUND
 *   or another error
 */
GType
tessera_dynamic_dependency_lock_lookup_class (const char  *module,
                                              const char  *class_name,
                                              GError     **error)
{
  /* The core's own class registers itself in its class_init. */
  g_type_class_unref (g_type_class_ref (TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK));
  return tessera_registry_lookup_lock_class (tessera_registry_get_default (), module, class_name, error);
}

static const char *
string_member (JsonObject *data, const char *member)
{
  JsonNode *node = json_object_get_member (data, member);

  if (node && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    return json_node_get_string (node);
  return NULL;
}

/**
 * tessera_dynamic_dependency_lock_job_lock_from_json:
 * @data: an entry of `locks.json`
 * @error: return location for a #GError
 *
 * Builds the job-process side of a lock from its `locks.json` entry,
 * through the class its "module" and "class" name.
 *
 * Returns: (transfer full): the job lock, or %NULL with @error set
 */
TesseraJobDependencyLock *
tessera_dynamic_dependency_lock_job_lock_from_json (JsonObject  *data,
                                                    GError     **error)
{
  const char *module, *class_name;
  TesseraDynamicDependencyLockClass *klass;
  TesseraJobDependencyLock *lock;
  GType type;

  g_return_val_if_fail (data != NULL, NULL);
  module = string_member (data, "module");
  class_name = string_member (data, "class");
  if (module == NULL || class_name == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_CLASS_NOT_FOUND,
                   _("Lock data misses “module” or “class”"));
      return NULL;
    }
  type = tessera_dynamic_dependency_lock_lookup_class (module, class_name, error);
  if (type == G_TYPE_INVALID)
    return NULL;
  klass = g_type_class_ref (type);
  lock = klass->job_lock_from_json (klass, data, error);
  g_type_class_unref (klass);
  return lock;
}
