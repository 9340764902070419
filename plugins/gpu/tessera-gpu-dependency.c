/* tessera-gpu-dependency.c: "job J needs N devices of at least M MiB each"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-gpu.h"

struct _TesseraGpuDependency
{
  TesseraDynamicDependency parent_instance;
  int count;
  guint64 min_memory;
  GArray *assigned;   /* the devices granted, once acquired */
  GArray *choice;     /* the devices the last decision picked, to grant or reserve */
};

enum { PROP_0, PROP_COUNT, PROP_MIN_MEMORY, PROP_ASSIGNED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraGpuDependency, tessera_gpu_dependency, TESSERA_TYPE_DYNAMIC_DEPENDENCY)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraGpuDependency *self = TESSERA_GPU_DEPENDENCY (object);

  switch (prop_id)
    {
    case PROP_COUNT: g_value_set_int (value, self->count); break;
    case PROP_MIN_MEMORY: g_value_set_uint64 (value, self->min_memory); break;
    case PROP_ASSIGNED: g_value_set_boxed (value, self->assigned); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraGpuDependency *self = TESSERA_GPU_DEPENDENCY (object);

  switch (prop_id)
    {
    case PROP_COUNT: self->count = g_value_get_int (value); break;
    case PROP_MIN_MEMORY: self->min_memory = g_value_get_uint64 (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static TesseraDynamicDependencyLock *
create_lock (TesseraDynamicDependency *self, GError **error)
{
  return g_object_new (TESSERA_TYPE_GPU_LOCK, "dependency", self, NULL);
}

static void
finalize (GObject *object)
{
  g_clear_pointer (&TESSERA_GPU_DEPENDENCY (object)->assigned, g_array_unref);
  g_clear_pointer (&TESSERA_GPU_DEPENDENCY (object)->choice, g_array_unref);
  G_OBJECT_CLASS (tessera_gpu_dependency_parent_class)->finalize (object);
}

static void
tessera_gpu_dependency_class_init (TesseraGpuDependencyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  object_class->finalize = finalize;
  TESSERA_DYNAMIC_DEPENDENCY_CLASS (klass)->create_lock = create_lock;

  /* How many devices. */
  props[PROP_COUNT] = g_param_spec_int ("count", NULL, NULL, 1, 1024, 1,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* The least memory each device must have, in MiB (0: any). */
  props[PROP_MIN_MEMORY] = g_param_spec_uint64 ("min-memory", NULL, NULL, 0, G_MAXUINT64, 0,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* The devices granted (a GArray of TesseraGpuDevice), or NULL: what
   * the lock reads back for its locks.json entry and the job's
   * environment, without knowing this class. Set by the resource under
   * its locks, so not notified. */
  props[PROP_ASSIGNED] = g_param_spec_boxed ("assigned", NULL, NULL, G_TYPE_ARRAY,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_gpu_dependency_class_finalize (TesseraGpuDependencyClass *klass)
{
}

static void
tessera_gpu_dependency_init (TesseraGpuDependency *self)
{
  self->count = 1;
}

int
tessera_gpu_dependency_get_count (TesseraGpuDependency *self)
{
  return self->count;
}

guint64
tessera_gpu_dependency_get_min_memory (TesseraGpuDependency *self)
{
  return self->min_memory;
}

GArray *
tessera_gpu_dependency_get_assigned (TesseraGpuDependency *self)
{
  return self->assigned;
}

void
tessera_gpu_dependency_set_assigned (TesseraGpuDependency *self, GArray *devices)
{
  g_clear_pointer (&self->assigned, g_array_unref);
  self->assigned = devices ? g_array_ref (devices) : NULL;
}

/* The resource's decision keeps its pick here (it counted the queue's
 * reservations, which are no longer counted when the lock file or the
 * queue entry is written); takes ownership of @devices (nullable). */
void
tessera_gpu_dependency_set_choice (TesseraGpuDependency *self, GArray *devices)
{
  g_clear_pointer (&self->choice, g_array_unref);
  self->choice = devices;
}

/* (transfer full) (nullable): the pick kept by the last decision, once. */
GArray *
tessera_gpu_dependency_take_choice (TesseraGpuDependency *self)
{
  return g_steal_pointer (&self->choice);
}

void
_tessera_gpu_dependency_register (GTypeModule *module)
{
  tessera_gpu_dependency_register_type (module);
}
