/* tessera-job-dependency-lock.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_JOB_DEPENDENCY_LOCK (tessera_job_dependency_lock_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraJobDependencyLock, tessera_job_dependency_lock, TESSERA, JOB_DEPENDENCY_LOCK, GObject)

/**
 * TesseraJobDependencyLockClass:
 * @acquire: called when the job process enters its locks; the default
 *   verifies that the lock file exists
 * @release: called when the job process leaves; the default deletes the
 *   lock file
 * @dup_environment: the environment variables (`KEY=VALUE`) the job needs
 *   for this lock; %NULL for none
 *
 * The class of [class@Tessera.JobDependencyLock], the job-process side of a
 * lock that the scheduler already holds.
 */
/**
 * TesseraJobDependencyLockClass::acquire:
 * @self: the job-side lock
 * @error: return location for a #GError
 *
 * Called when the job process enters its locks (see
 * [class@Tessera.JobDependencyLocks]); the default verifies that the lock
 * file the scheduler wrote still exists. Runs in the job process, on the
 * thread that enters the locks, with no lock held.
 *
 * Returns: %TRUE when the job may run; %FALSE with @error set otherwise
 */

/**
 * TesseraJobDependencyLockClass::release:
 * @self: the job-side lock
 *
 * Called when the job process leaves its locks, in reverse order; the
 * default deletes the lock file. Runs in the job process, on the thread
 * that leaves the locks, with no lock held.
 */

/**
 * TesseraJobDependencyLockClass::dup_environment:
 * @self: the job-side lock
 *
 * The environment variables the job needs for this lock, such as
 * `CUDA_VISIBLE_DEVICES`. Runs in the job process, with no lock held.
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): `KEY=VALUE`
 *   strings, or %NULL for none
 */

struct _TesseraJobDependencyLockClass
{
  GObjectClass parent_class;

  gboolean (*acquire) (TesseraJobDependencyLock *self,
                       GError                  **error);
  void     (*release) (TesseraJobDependencyLock *self);
  char   **(*dup_environment) (TesseraJobDependencyLock *self);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraJobDependencyLock *tessera_job_dependency_lock_new                (JsonObject *data);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_job_dependency_lock_acquire            (TesseraJobDependencyLock *self,
                                                            GError                  **error);
TESSERA_AVAILABLE_IN_ALL
void        tessera_job_dependency_lock_release            (TesseraJobDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_job_dependency_lock_verify_lock_file   (TesseraJobDependencyLock *self,
                                                            GError                  **error);
TESSERA_AVAILABLE_IN_ALL
const char *tessera_job_dependency_lock_get_lock_file_path (TesseraJobDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
char      **tessera_job_dependency_lock_dup_environment    (TesseraJobDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
JsonObject *tessera_job_dependency_lock_get_data           (TesseraJobDependencyLock *self);

G_END_DECLS
