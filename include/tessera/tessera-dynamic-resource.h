/* tessera-dynamic-resource.h
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

G_BEGIN_DECLS

typedef struct _TesseraDynamicDependency TesseraDynamicDependency;

#define TESSERA_TYPE_DYNAMIC_RESOURCE (tessera_dynamic_resource_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraDynamicResource, tessera_dynamic_resource, TESSERA, DYNAMIC_RESOURCE, GObject)

/**
 * TesseraDynamicResourceClass:
 * @refresh_state: re-reads the state of the resource; called by Tessera's
 *   private poller thread as a fallback when events may have been missed.
 *   Runs in the poller's thread.
 * @create_dependency: returns a dependency of @job on the resource, as
 *   @request describes it (what `--need NAME=REQUEST` asks for: a count for
 *   a counter token, "2:8192" for two GPUs of 8 GiB, "shared" for a
 *   mutex…); %NULL asks for the type's default (one unit)
 *
 * The class of [class@Tessera.DynamicResource].
 */
/**
 * TesseraDynamicResourceClass::refresh_state:
 * @self: the resource
 *
 * Re-reads the state of the resource, or marks it for re-reading:
 * called by Tessera's private poller thread as a fallback when events
 * may have been missed, while somebody waits (see
 * [class@Tessera.DynamicResource]). Runs in the poller's thread, which
 * every resource of the process shares: it must not block (never take
 * ipc.lock here) and must end with
 * [method@Tessera.DynamicResource.notify_changed] when waiters should try
 * again.
 */

/**
 * TesseraDynamicResourceClass::create_dependency:
 * @self: the resource
 * @job: the job that will hold the resource
 * @request: (nullable): what `--need NAME=REQUEST` asks for: a count for a
 *   counter token, "2:8192" for two GPUs of 8 GiB, "shared" for a mutex…;
 *   %NULL asks for the type's default (one unit)
 * @error: return location for a #GError
 *
 * Turns a request into a [class@Tessera.DynamicDependency] of @job on the
 * resource. Called on the application's thread, with no lock held; it
 * only parses and checks @request (a request that can never fit is better
 * refused here, with %TESSERA_ERROR_REQUEST_TOO_LARGE).
 *
 * Returns: (transfer full) (nullable): the dependency, or %NULL with
 *   @error set when @request is malformed
 */

struct _TesseraDynamicResourceClass
{
  GObjectClass parent_class;

  void (*refresh_state) (TesseraDynamicResource *self);
  TesseraDynamicDependency *(*create_dependency) (TesseraDynamicResource *self,
                                                  TesseraJob             *job,
                                                  const char             *request,
                                                  GError                **error);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
const char *tessera_dynamic_resource_get_name       (TesseraDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
guint64     tessera_dynamic_resource_get_generation (TesseraDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
void        tessera_dynamic_resource_notify_changed (TesseraDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
void        tessera_dynamic_resource_refresh_state  (TesseraDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicDependency *tessera_dynamic_resource_create_dependency (TesseraDynamicResource *self,
                                                                     TesseraJob             *job,
                                                                     const char             *request,
                                                                     GError                **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_dynamic_resource_wait           (TesseraDynamicResource *self,
                                                     guint64                 generation,
                                                     double                  timeout,
                                                     GCancellable           *cancellable,
                                                     GError                **error);

G_END_DECLS
