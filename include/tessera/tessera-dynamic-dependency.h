/* tessera-dynamic-dependency.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <gio/gio.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-job.h>
#include <tessera/tessera-dynamic-resource.h>

G_BEGIN_DECLS

typedef struct _TesseraDynamicDependencyLock TesseraDynamicDependencyLock;

#define TESSERA_TYPE_DYNAMIC_DEPENDENCY (tessera_dynamic_dependency_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraDynamicDependency, tessera_dynamic_dependency, TESSERA, DYNAMIC_DEPENDENCY, GObject)

/**
 * TesseraDynamicDependencyClass:
 * @create_lock: returns a new, not yet acquired lock for this dependency;
 *   the default makes a plain [class@Tessera.DynamicDependencyLock]
 *
 * The class of [class@Tessera.DynamicDependency].
 */
/**
 * TesseraDynamicDependencyClass::create_lock:
 * @self: the dependency
 * @error: return location for a #GError
 *
 * Makes a new, not yet acquired lock for this dependency; the default
 * makes a plain [class@Tessera.DynamicDependencyLock]. A type overrides it
 * to give its own lock class (one that adds members to `locks.json` or
 * environment variables for the job). Called on the thread that locks the
 * dependency, with no lock held.
 *
 * Returns: (transfer full): the lock, or %NULL with @error set
 */

struct _TesseraDynamicDependencyClass
{
  GObjectClass parent_class;

  TesseraDynamicDependencyLock *(*create_lock) (TesseraDynamicDependency *self,
                                                GError                  **error);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraDynamicResource       *tessera_dynamic_dependency_get_resource (TesseraDynamicDependency *self);
TESSERA_AVAILABLE_IN_ALL
TesseraJob                   *tessera_dynamic_dependency_get_target   (TesseraDynamicDependency *self);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLock *tessera_dynamic_dependency_create_lock  (TesseraDynamicDependency *self,
                                                                       GError                  **error);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLock *tessera_dynamic_dependency_lock         (TesseraDynamicDependency *self,
                                                                       double                    timeout,
                                                                       GCancellable             *cancellable,
                                                                       GError                  **error);
TESSERA_AVAILABLE_IN_ALL
void                          tessera_dynamic_dependency_lock_async   (TesseraDynamicDependency *self,
                                                                       double                    timeout,
                                                                       GCancellable             *cancellable,
                                                                       GAsyncReadyCallback       callback,
                                                                       gpointer                  user_data);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLock *tessera_dynamic_dependency_lock_finish  (TesseraDynamicDependency *self,
                                                                       GAsyncResult             *result,
                                                                       GError                  **error);

G_END_DECLS
