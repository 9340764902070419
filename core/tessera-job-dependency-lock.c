/* tessera-job-dependency-lock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <tessera/tessera.h>

/**
 * TesseraJobDependencyLock:
 *
 * The seed's `JobDependencyLock`: the job process's side of a lock the
 * scheduler already holds. Built from the lock's entry in `locks.json`;
 * acquiring verifies that the lock file exists, releasing deletes it.
 */
typedef struct
{
  JsonObject *data;
  char *lock_file_path;
} TesseraJobDependencyLockPrivate;

enum {
  PROP_0,
  PROP_DATA,
  PROP_LOCK_FILE_PATH,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraJobDependencyLock, tessera_job_dependency_lock, G_TYPE_OBJECT)

#define PRIV(o) ((TesseraJobDependencyLockPrivate *) tessera_job_dependency_lock_get_instance_private (o))

static void
tessera_job_dependency_lock_finalize (GObject *object)
{
  TesseraJobDependencyLockPrivate *priv = PRIV (TESSERA_JOB_DEPENDENCY_LOCK (object));

  g_clear_pointer (&priv->data, json_object_unref);
  g_free (priv->lock_file_path);
  G_OBJECT_CLASS (tessera_job_dependency_lock_parent_class)->finalize (object);
}

static void
tessera_job_dependency_lock_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraJobDependencyLockPrivate *priv = PRIV (TESSERA_JOB_DEPENDENCY_LOCK (object));

  switch (prop_id)
    {
    case PROP_DATA: g_value_set_boxed (value, priv->data); break;
    case PROP_LOCK_FILE_PATH: g_value_set_string (value, priv->lock_file_path); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_job_dependency_lock_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraJobDependencyLockPrivate *priv = PRIV (TESSERA_JOB_DEPENDENCY_LOCK (object));

  switch (prop_id)
    {
    case PROP_DATA:
      g_clear_pointer (&priv->data, json_object_unref);
      priv->data = g_value_dup_boxed (value);
      break;
    case PROP_LOCK_FILE_PATH:
      g_free (priv->lock_file_path);
      priv->lock_file_path = g_value_dup_string (value);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
real_acquire (TesseraJobDependencyLock *self, GError **error)
{
  return tessera_job_dependency_lock_verify_lock_file (self, error);
}

static void
real_release (TesseraJobDependencyLock *self)
{
  const char *path = PRIV (self)->lock_file_path;
  /* A regular file only, never through a link planted in place of jobs/. */
  int saved = path != NULL ? _tessera_unlink_pool_file (path) : 0;

  if (saved != 0 && saved != ENOENT && saved != EPERM)
    g_warning (_("Cannot delete lock file %s: %s"), path, g_strerror (saved));
}

static char **
real_dup_environment (TesseraJobDependencyLock *self)
{
  return NULL;
}

static void
tessera_job_dependency_lock_class_init (TesseraJobDependencyLockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tessera_job_dependency_lock_finalize;
  object_class->get_property = tessera_job_dependency_lock_get_property;
  object_class->set_property = tessera_job_dependency_lock_set_property;
  klass->acquire = real_acquire;
  klass->release = real_release;
  klass->dup_environment = real_dup_environment;

  /**
   * TesseraJobDependencyLock:data:
   *
   * The lock's entry in `locks.json`.
   */
  props[PROP_DATA] = g_param_spec_boxed ("data", NULL, NULL, JSON_TYPE_OBJECT,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraJobDependencyLock:lock-file-path:
   *
   * The lock file to verify and delete; %NULL for none.
   */
  props[PROP_LOCK_FILE_PATH] = g_param_spec_string ("lock-file-path", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_job_dependency_lock_init (TesseraJobDependencyLock *self)
{
}

/**
 * tessera_job_dependency_lock_new:
 * @data: a lock's entry in `locks.json`
 *
 * A plain job lock whose lock file is the entry's "lock_file_path" (a
 * string, or absent for none).
 *
 * Returns: (transfer full): a new job lock
 */
TesseraJobDependencyLock *
tessera_job_dependency_lock_new (JsonObject *data)
{
  JsonNode *path;

  g_return_val_if_fail (data != NULL, NULL);
  path = json_object_get_member (data, "lock_file_path");
  return g_object_new (TESSERA_TYPE_JOB_DEPENDENCY_LOCK,
                       "data", data,
                       "lock-file-path",
                       (path && JSON_NODE_HOLDS_VALUE (path) &&
                        json_node_get_value_type (path) == G_TYPE_STRING)
                       ? json_node_get_string (path) : NULL,
                       NULL);
}

/**
 * tessera_job_dependency_lock_verify_lock_file:
 * @self: a job lock
 * @error: return location for a #GError
 *
 * Checks that the scheduler's lock file is still there (a peer
 * removes the lock file of a holder it judged dead).
 *
 * Returns: %TRUE when there is no lock file to check or it exists,
 *   %FALSE with %TESSERA_ERROR_LOCK_FILE_MISSING otherwise
 */
gboolean
tessera_job_dependency_lock_verify_lock_file (TesseraJobDependencyLock  *self,
                                              GError                   **error)
{
  const char *path;

  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self), FALSE);
  path = PRIV (self)->lock_file_path;
  if (path != NULL && !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING,
                   _("Lock file missing: %s"), path);
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_job_dependency_lock_acquire:
 * @self: a job lock
 * @error: return location for a #GError
 *
 * Called when the job process enters its locks.
 *
 * Returns: %FALSE with @error set when the lock is not really held
 */
gboolean
tessera_job_dependency_lock_acquire (TesseraJobDependencyLock  *self,
                                     GError                   **error)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self), FALSE);
  return TESSERA_JOB_DEPENDENCY_LOCK_GET_CLASS (self)->acquire (self, error);
}

/**
 * tessera_job_dependency_lock_release:
 * @self: a job lock
 *
 * Called when the job process is done: deletes the lock file.
 */
void
tessera_job_dependency_lock_release (TesseraJobDependencyLock *self)
{
  g_return_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self));
  TESSERA_JOB_DEPENDENCY_LOCK_GET_CLASS (self)->release (self);
}

/**
 * tessera_job_dependency_lock_get_lock_file_path:
 * @self: a job lock
 *
 * The lock file the scheduler wrote for this job.
 *
 * Returns: (nullable): the lock file this job lock stands for
 */
const char *
tessera_job_dependency_lock_get_lock_file_path (TesseraJobDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self), NULL);
  return PRIV (self)->lock_file_path;
}

/**
 * tessera_job_dependency_lock_dup_environment:
 * @self: a job lock
 *
 * The environment the job needs for this lock, from
 * [vfunc@Tessera.JobDependencyLock.dup_environment].
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): the
 *   `KEY=VALUE` environment entries the job needs for this lock
 */
char **
tessera_job_dependency_lock_dup_environment (TesseraJobDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self), NULL);
  return TESSERA_JOB_DEPENDENCY_LOCK_GET_CLASS (self)->dup_environment (self);
}

/**
 * tessera_job_dependency_lock_get_data:
 * @self: a job lock
 *
 * The `locks.json` entry this job lock was built from.
 *
 * Returns: (transfer none) (nullable): the lock's entry in `locks.json`
 */
JsonObject *
tessera_job_dependency_lock_get_data (TesseraJobDependencyLock *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (self), NULL);
  return PRIV (self)->data;
}
