/* tessera-acquire.h: the short path for applications that embed Tessera:
 * a one-call acquire (its private job: tessera-job.h)
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
#include <tessera/tessera-dynamic-dependency-lock.h>

G_BEGIN_DECLS

TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLock *tessera_dynamic_resource_take (TesseraDynamicResource  *self,
                                                                const char              *request,
                                                                double                   timeout,
                                                                GCancellable            *cancellable,
                                                                GError                 **error);
TESSERA_AVAILABLE_IN_ALL
void                          tessera_dynamic_resource_take_async  (TesseraDynamicResource  *self,
                                                                    const char              *request,
                                                                    double                   timeout,
                                                                    GCancellable            *cancellable,
                                                                    GAsyncReadyCallback      callback,
                                                                    gpointer                 user_data);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependencyLock *tessera_dynamic_resource_take_finish (TesseraDynamicResource  *self,
                                                                    GAsyncResult            *result,
                                                                    GError                 **error);

G_END_DECLS
