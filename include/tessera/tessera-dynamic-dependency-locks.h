/* tessera-dynamic-dependency-locks.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-locks.h>
#include <tessera/tessera-dynamic-dependency-lock.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCKS (tessera_dynamic_dependency_locks_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraDynamicDependencyLocks, tessera_dynamic_dependency_locks, TESSERA, DYNAMIC_DEPENDENCY_LOCKS, TesseraLocks)

/**
 * TesseraDynamicDependencyLocksClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.DynamicDependencyLocks], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLocks *tessera_dynamic_dependency_locks_new (void);
TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_job_before_start (TesseraDynamicDependencyLocks *self,
                                                             TesseraJob                    *job,
                                                             GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_job_started      (TesseraDynamicDependencyLocks *self,
                                                             TesseraJob                    *job,
                                                             TesseraProcess                *process,
                                                             GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_job_finished     (TesseraDynamicDependencyLocks *self,
                                                             TesseraJob                    *job,
                                                             GError                       **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode *tessera_dynamic_dependency_locks_to_json          (TesseraDynamicDependencyLocks *self);
TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_save             (TesseraDynamicDependencyLocks *self,
                                                             const char                    *path,
                                                             GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_save_for_job     (TesseraDynamicDependencyLocks *self,
                                                             TesseraJob                    *job,
                                                             GError                       **error);

TESSERA_AVAILABLE_IN_ALL
gboolean  tessera_dynamic_dependency_locks_acquire_all      (TesseraDynamicDependencyLocks  *self,
                                                             TesseraDynamicDependency      **dependencies,
                                                             guint                           n_dependencies,
                                                             double                          timeout,
                                                             GCancellable                   *cancellable,
                                                             GError                        **error);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependency *tessera_dynamic_dependency_locks_get_waiting_for (TesseraDynamicDependencyLocks *self);
TESSERA_AVAILABLE_IN_ALL
const char               *tessera_dynamic_dependency_locks_get_waiting_reason (TesseraDynamicDependencyLocks *self);
TESSERA_AVAILABLE_IN_ALL
const GError             *tessera_dynamic_dependency_locks_get_refusal        (TesseraDynamicDependencyLocks *self);

G_END_DECLS
