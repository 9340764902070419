/* tessera-mutex-dependency.c: "job J needs the mutex, shared or exclusive"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-mutex.h"

struct _TesseraMutexDependency
{
  TesseraDynamicDependency parent_instance;
  gboolean shared;
  char *intent;   /* the side entry of its intent, while it waits, if any */
  gboolean queued;  /* its last attempt reserved in the folder's queue */
};

enum { PROP_0, PROP_SHARED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraMutexDependency, tessera_mutex_dependency, TESSERA_TYPE_DYNAMIC_DEPENDENCY)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SHARED)
    g_value_set_boolean (value, TESSERA_MUTEX_DEPENDENCY (object)->shared);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SHARED)
    TESSERA_MUTEX_DEPENDENCY (object)->shared = g_value_get_boolean (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static TesseraDynamicDependencyLock *
create_lock (TesseraDynamicDependency *self, GError **error)
{
  return g_object_new (TESSERA_TYPE_MUTEX_LOCK, "dependency", self,
                       "shared", TESSERA_MUTEX_DEPENDENCY (self)->shared, NULL);
}

static void
tessera_mutex_dependency_dispose (GObject *object)
{
  /* A request that gave up must not keep shared requests out. */
  tessera_mutex_dependency_drop_intent (TESSERA_MUTEX_DEPENDENCY (object));
  G_OBJECT_CLASS (tessera_mutex_dependency_parent_class)->dispose (object);
}

static void
tessera_mutex_dependency_class_init (TesseraMutexDependencyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  object_class->dispose = tessera_mutex_dependency_dispose;
  TESSERA_DYNAMIC_DEPENDENCY_CLASS (klass)->create_lock = create_lock;

  /* Whether the job shares the mutex with other shared holders. */
  props[PROP_SHARED] = g_param_spec_boolean ("shared", NULL, NULL, FALSE,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_mutex_dependency_class_finalize (TesseraMutexDependencyClass *klass)
{
}

static void
tessera_mutex_dependency_init (TesseraMutexDependency *self)
{
}

gboolean
tessera_mutex_dependency_is_shared (TesseraMutexDependency *self)
{
  return self->shared;
}

void
tessera_mutex_dependency_set_intent (TesseraMutexDependency *self, const char *intent)
{
  if (g_strcmp0 (self->intent, intent) != 0)
    {
      g_free (self->intent);
      self->intent = g_strdup (intent);
    }
}

void
tessera_mutex_dependency_drop_intent (TesseraMutexDependency *self)
{
  TesseraDynamicResource *resource;
  g_autoptr(GError) error = NULL;

  if (self->intent == NULL)
    return;
  resource = tessera_dynamic_dependency_get_resource (TESSERA_DYNAMIC_DEPENDENCY (self));
  /* During a decision, gone once its grant counts (see
   * tessera_tracked_dynamic_resource_delete_side_entry()). */
  if (resource != NULL &&
      !tessera_tracked_dynamic_resource_delete_side_entry (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource),
                                                          TESSERA_MUTEX_INTENTS, self->intent, &error))
    g_debug ("Cannot delete the intent %s: %s", self->intent, error->message);
  g_clear_pointer (&self->intent, g_free);
}

/* Past its patience, a request reserves its mode in the folder's queue at
 * each attempt; the queue then orders it among the other reserving
 * waiters, and a shared one no longer yields to intents (see
 * tessera-mutex.c). Said by one attempt, read by the next decision only,
 * so that a wait that ended does not carry it over. */
void
tessera_mutex_dependency_set_queued (TesseraMutexDependency *self)
{
  self->queued = TRUE;
}

gboolean
tessera_mutex_dependency_take_queued (TesseraMutexDependency *self)
{
  gboolean queued = self->queued;

  self->queued = FALSE;
  return queued;
}

void
_tessera_mutex_dependency_register (GTypeModule *module)
{
  tessera_mutex_dependency_register_type (module);
}
