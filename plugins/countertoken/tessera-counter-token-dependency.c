/* tessera-counter-token-dependency.c: "job J needs COUNT tokens"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-counter-token.h"

struct _TesseraCounterTokenDependency
{
  TesseraDynamicDependency parent_instance;
  gint64 count;
};

enum { PROP_0, PROP_COUNT, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraCounterTokenDependency, tessera_counter_token_dependency, TESSERA_TYPE_DYNAMIC_DEPENDENCY)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_COUNT)
    g_value_set_int64 (value, TESSERA_COUNTER_TOKEN_DEPENDENCY (object)->count);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_COUNT)
    TESSERA_COUNTER_TOKEN_DEPENDENCY (object)->count = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static TesseraDynamicDependencyLock *
create_lock (TesseraDynamicDependency *self, GError **error)
{
  return g_object_new (TESSERA_TYPE_COUNTER_TOKEN_LOCK, "dependency", self, NULL);
}

static void
tessera_counter_token_dependency_class_init (TesseraCounterTokenDependencyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  TESSERA_DYNAMIC_DEPENDENCY_CLASS (klass)->create_lock = create_lock;

  /* How many tokens the job needs. */
  props[PROP_COUNT] = g_param_spec_int64 ("count", NULL, NULL, 1, G_MAXINT32, 1,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_counter_token_dependency_class_finalize (TesseraCounterTokenDependencyClass *klass)
{
}

static void
tessera_counter_token_dependency_init (TesseraCounterTokenDependency *self)
{
  self->count = 1;
}

gint64
tessera_counter_token_dependency_get_count (TesseraCounterTokenDependency *self)
{
  return self->count;
}

void
_tessera_counter_token_dependency_register (GTypeModule *module)
{
  tessera_counter_token_dependency_register_type (module);
}
