/* tessera-counter-resource.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-version.h>
#include <tessera/tessera-tracked-dynamic-resource.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_COUNTER_RESOURCE (tessera_counter_resource_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraCounterResource, tessera_counter_resource, TESSERA, COUNTER_RESOURCE, TesseraTrackedDynamicResource)

/**
 * TesseraCounterResourceClass:
 * @parent_class: the parent class
 * @dependency_type: the [class@Tessera.CounterDependency] subtype that
 *   [vfunc@Tessera.DynamicResource.create_dependency] makes; 0 (the
 *   default) for [class@Tessera.CounterDependency] itself
 *
 * The class of [class@Tessera.CounterResource]. A subclass may set
 * @dependency_type and, in the parent class,
 * `lock_file_type` (a [class@Tessera.CounterLockFile] subtype), and
 * override the virtual functions of
 * #TesseraTrackedDynamicResourceClass, chaining up.
 */
struct _TesseraCounterResourceClass
{
  TesseraTrackedDynamicResourceClass parent_class;

  GType dependency_type;

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraCounterResource *tessera_counter_resource_new (const char  *name,
                                                      const char  *path,
                                                      gint64       total,
                                                      GError     **error);
TESSERA_AVAILABLE_IN_ALL
gint64 tessera_counter_resource_get_total (TesseraCounterResource *self);
TESSERA_AVAILABLE_IN_ALL
gint64 tessera_counter_resource_get_used  (TesseraCounterResource *self);

G_END_DECLS
