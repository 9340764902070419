/* tessera-counter-dependency.c: "job J needs COUNT units of a counter"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <tessera/tessera.h>

/**
 * TesseraCounterDependency:
 *
 * A dependency on a [class@Tessera.CounterResource] for
 * [property@Tessera.CounterDependency:count] units. The counter's
 * [vfunc@Tessera.DynamicResource.create_dependency] makes one from a
 * request such as `--need cpu=4`.
 */
typedef struct
{
  gint64 count;
} TesseraCounterDependencyPrivate;

enum { PROP_0, PROP_COUNT, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraCounterDependency, tessera_counter_dependency, TESSERA_TYPE_DYNAMIC_DEPENDENCY)

#define PRIV(o) ((TesseraCounterDependencyPrivate *) tessera_counter_dependency_get_instance_private (o))

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_COUNT)
    g_value_set_int64 (value, PRIV (TESSERA_COUNTER_DEPENDENCY (object))->count);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_COUNT)
    PRIV (TESSERA_COUNTER_DEPENDENCY (object))->count = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
tessera_counter_dependency_class_init (TesseraCounterDependencyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;

  /**
   * TesseraCounterDependency:count:
   *
   * How many units the job needs.
   */
  props[PROP_COUNT] = g_param_spec_int64 ("count", NULL, NULL, 1, G_MAXINT32, 1,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_counter_dependency_init (TesseraCounterDependency *self)
{
  PRIV (self)->count = 1;
}

/**
 * tessera_counter_dependency_get_count:
 * @self: a counter dependency
 *
 * How many units the job needs: the
 * [property@Tessera.CounterDependency:count] property. Any thread.
 *
 * Returns: the count, at least 1
 */
gint64
tessera_counter_dependency_get_count (TesseraCounterDependency *self)
{
  g_return_val_if_fail (TESSERA_IS_COUNTER_DEPENDENCY (self), 0);
  return PRIV (self)->count;
}
