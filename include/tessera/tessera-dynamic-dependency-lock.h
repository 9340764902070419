/* tessera-dynamic-dependency-lock.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-lock.h>
#include <tessera/tessera-job.h>
#include <tessera/tessera-process.h>
#include <tessera/tessera-dynamic-dependency.h>
#include <tessera/tessera-job-dependency-lock.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK (tessera_dynamic_dependency_lock_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraDynamicDependencyLock, tessera_dynamic_dependency_lock, TESSERA, DYNAMIC_DEPENDENCY_LOCK, TesseraLock)

/**
 * TesseraDynamicDependencyLockClass:
 * @dup_lock_folder: returns the resource's lock folder; the default asks the
 *   dependency's resource when it is a [class@Tessera.TrackedDynamicResource]
 * @job_before_start: called after the job directory exists, before the job
 *   process is spawned
 * @job_started: called once the job process runs; the default records
 *   @process in the lock file
 * @job_finished: called when the job ended, before the lock is released
 * @to_json: adds this lock's members to @object; implementations chain up
 *   first (the base adds "module" and "class")
 * @job_lock_from_json: a class method that builds the job-process side of a
 *   lock from what @to_json wrote; the default makes a plain
 *   [class@Tessera.JobDependencyLock] from "lock_file_path"
 * @dup_environment: the environment variables (`KEY=VALUE`) a job holding
 *   this lock needs, such as `CUDA_VISIBLE_DEVICES`; %NULL for none
 *
 * The class of [class@Tessera.DynamicDependencyLock]. The default
 * `do_acquire` and `do_release` of a dynamic dependency lock run the
 * acquire and release protocol of the dependency's
 * [class@Tessera.TrackedDynamicResource] (its virtual functions); a lock on
 * a resource of another kind implements them itself.
 */
/**
 * TesseraDynamicDependencyLockClass::dup_lock_folder:
 * @self: the lock
 *
 * The resource's lock folder; the default asks the dependency's resource
 * when it is a [class@Tessera.TrackedDynamicResource]. Any thread, no lock
 * held.
 *
 * Returns: (transfer full) (nullable): the folder, or %NULL when the
 *   resource has none
 */

/**
 * TesseraDynamicDependencyLockClass::job_before_start:
 * @self: the lock, already acquired
 * @job: the job
 * @error: return location for a #GError
 *
 * Called by the launcher after the job directory exists and before the
 * job process is spawned; the default does nothing. Runs on the
 * launcher's thread with no lock held.
 *
 * Returns: %FALSE with @error set to cancel the launch
 */

/**
 * TesseraDynamicDependencyLockClass::job_started:
 * @self: the lock, already acquired
 * @job: the job
 * @process: the job's process, now running
 * @error: return location for a #GError
 *
 * Called by the launcher once the job process runs; the default records
 * @process in the dependency's lock file (of a
 * [class@Tessera.TrackedDynamicResource]), so peers judge
 * the holder by that process. Runs on the launcher's thread with no lock
 * held; an override chains up.
 *
 * Returns: %FALSE with @error set when the process could not be recorded
 */

/**
 * TesseraDynamicDependencyLockClass::job_finished:
 * @self: the lock
 * @job: the job
 * @error: return location for a #GError
 *
 * Called by the launcher when the job ended, before the lock is released;
 * the default does nothing. Runs on the launcher's thread with no lock
 * held.
 *
 * Returns: %FALSE with @error set on failure (the lock is released anyway)
 */

/**
 * TesseraDynamicDependencyLockClass::to_json:
 * @self: the lock
 * @object: the `locks.json` entry being written
 *
 * Adds this lock's members to its `locks.json` entry, for the job process
 * to rebuild it with the class's `job_lock_from_json` (see
 * [func@Tessera.DynamicDependencyLock.job_lock_from_json]).
 * Implementations chain up first: the base adds "module", "class" and
 * "lock_file_path". Runs on the launcher's thread with no lock held.
 */

/**
 * TesseraDynamicDependencyLockClass::job_lock_from_json:
 * @klass: the lock class named by the entry's "module" and "class"
 * @data: the `locks.json` entry, as
 *   [vfunc@Tessera.DynamicDependencyLock.to_json] wrote it (or
 *   experimaestro did)
 * @error: return location for a #GError
 *
 * A class method: builds the job-process side of a lock from its
 * `locks.json` entry; the default makes a plain
 * [class@Tessera.JobDependencyLock] from "lock_file_path". Runs in the job
 * process with no lock held; @data comes from a file, so check every
 * member.
 *
 * Returns: (transfer full): the job-side lock, or %NULL with @error set
 *   when @data has the wrong shape
 */

/**
 * TesseraDynamicDependencyLockClass::dup_environment:
 * @self: the lock, already acquired
 *
 * The environment variables a job holding this lock needs, such as
 * `CUDA_VISIBLE_DEVICES`; the launcher sets them for the job. Any thread,
 * no lock held.
 *
 * Returns: (transfer full) (nullable) (array zero-terminated=1): `KEY=VALUE`
 *   strings, or %NULL for none
 */

struct _TesseraDynamicDependencyLockClass
{
  TesseraLockClass parent_class;

  char     *(*dup_lock_folder)  (TesseraDynamicDependencyLock *self);
  gboolean  (*job_before_start) (TesseraDynamicDependencyLock *self,
                                 TesseraJob                   *job,
                                 GError                      **error);
  gboolean  (*job_started)      (TesseraDynamicDependencyLock *self,
                                 TesseraJob                   *job,
                                 TesseraProcess               *process,
                                 GError                      **error);
  gboolean  (*job_finished)     (TesseraDynamicDependencyLock *self,
                                 TesseraJob                   *job,
                                 GError                      **error);
  void      (*to_json)          (TesseraDynamicDependencyLock *self,
                                 JsonObject                   *object);
  TesseraJobDependencyLock *(*job_lock_from_json) (TesseraDynamicDependencyLockClass *klass,
                                                   JsonObject                        *data,
                                                   GError                           **error);
  char    **(*dup_environment)  (TesseraDynamicDependencyLock *self);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependency *tessera_dynamic_dependency_lock_get_dependency    (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
gint64      tessera_dynamic_dependency_lock_get_fencing_token (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_dynamic_dependency_lock_dup_lock_folder   (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_dynamic_dependency_lock_dup_ipc_lock_path (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_dynamic_dependency_lock_dup_lock_file_path (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_dynamic_dependency_lock_job_before_start  (TesseraDynamicDependencyLock *self,
                                                               TesseraJob                   *job,
                                                               GError                      **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_dynamic_dependency_lock_job_started       (TesseraDynamicDependencyLock *self,
                                                               TesseraJob                   *job,
                                                               TesseraProcess               *process,
                                                               GError                      **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_dynamic_dependency_lock_job_finished      (TesseraDynamicDependencyLock *self,
                                                               TesseraJob                   *job,
                                                               GError                      **error);
TESSERA_AVAILABLE_IN_ALL
char      **tessera_dynamic_dependency_lock_dup_environment   (TesseraDynamicDependencyLock *self);
TESSERA_AVAILABLE_IN_ALL
JsonObject *tessera_dynamic_dependency_lock_to_json           (TesseraDynamicDependencyLock *self);

TESSERA_AVAILABLE_IN_ALL
void        tessera_dynamic_dependency_lock_register_class    (GType                         type,
                                                               const char                   *module,
                                                               const char                   *class_name);
TESSERA_AVAILABLE_IN_ALL
GType       tessera_dynamic_dependency_lock_lookup_class      (const char                   *module,
                                                               const char                   *class_name,
                                                               GError                      **error);
TESSERA_AVAILABLE_IN_ALL
TesseraJobDependencyLock *tessera_dynamic_dependency_lock_job_lock_from_json (JsonObject   *data,
                                                                              GError      **error);

G_END_DECLS
