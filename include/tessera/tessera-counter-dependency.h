/* tessera-counter-dependency.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <tessera/tessera-version.h>
#include <tessera/tessera-dynamic-dependency.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_COUNTER_DEPENDENCY (tessera_counter_dependency_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraCounterDependency, tessera_counter_dependency, TESSERA, COUNTER_DEPENDENCY, TesseraDynamicDependency)

/**
 * TesseraCounterDependencyClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.CounterDependency]. A subclass usually
 * overrides only [vfunc@Tessera.DynamicDependency.create_lock], to give
 * its own lock class.
 */
struct _TesseraCounterDependencyClass
{
  TesseraDynamicDependencyClass parent_class;

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
gint64 tessera_counter_dependency_get_count (TesseraCounterDependency *self);

G_END_DECLS
