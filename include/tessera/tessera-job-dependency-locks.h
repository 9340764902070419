/* tessera-job-dependency-locks.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-job-dependency-lock.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_JOB_DEPENDENCY_LOCKS (tessera_job_dependency_locks_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraJobDependencyLocks, tessera_job_dependency_locks, TESSERA, JOB_DEPENDENCY_LOCKS, GObject)

/**
 * TesseraJobDependencyLocksClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.JobDependencyLocks], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraJobDependencyLocks *tessera_job_dependency_locks_new           (void);
TESSERA_AVAILABLE_IN_ALL
TesseraJobDependencyLocks *tessera_job_dependency_locks_new_from_json (JsonNode                  *node,
                                                                       GError                   **error);
TESSERA_AVAILABLE_IN_ALL
TesseraJobDependencyLocks *tessera_job_dependency_locks_load          (const char                *path,
                                                                       GError                   **error);
TESSERA_AVAILABLE_IN_ALL
void                tessera_job_dependency_locks_append      (TesseraJobDependencyLocks *self,
                                                              TesseraJobDependencyLock  *lock);
TESSERA_AVAILABLE_IN_ALL
GPtrArray          *tessera_job_dependency_locks_get_locks   (TesseraJobDependencyLocks *self);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_job_dependency_locks_get_skipped (TesseraJobDependencyLocks *self);
TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_job_dependency_locks_acquire     (TesseraJobDependencyLocks *self,
                                                              GError                   **error);
TESSERA_AVAILABLE_IN_ALL
void                tessera_job_dependency_locks_release     (TesseraJobDependencyLocks *self);

G_END_DECLS
