/* example-slots.c: the smallest useful resource plugin — copy it to start
 * your own.
 *
 * A "slots" resource lets at most N jobs run at once, N being the `slots`
 * setting of its keyfile group:
 *
 *   [resource builders]
 *   type=slots
 *   path=/var/lib/tessera/builders
 *   slots=2
 *
 * A plugin is a shared module (libslots.so) plus a manifest (slots.plugin)
 * in a folder of the plugin path. Tessera reads the manifest without
 * loading anything; the first time someone asks for type "slots" it loads
 * the module and calls tessera_slots_register_types().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gmodule.h>
#include <tessera/tessera.h>

/* A tracked resource: Tessera keeps the lock folder (ipc.lock, one lock
 * file per holder in jobs/, crash and orphan handling); we only count. */
#define EXAMPLE_TYPE_SLOTS (example_slots_get_type ())
G_DECLARE_FINAL_TYPE (ExampleSlots, example_slots, EXAMPLE, SLOTS, TesseraTrackedDynamicResource)

struct _ExampleSlots
{
  TesseraTrackedDynamicResource parent_instance;
  int slots;   /* from the keyfile */
  int used;    /* valid lock files seen */
};

/* Plugin types are registered with the module, not statically. */
G_DEFINE_DYNAMIC_TYPE (ExampleSlots, example_slots, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

enum { PROP_0, PROP_SLOTS };

/* Keyfile keys become GObject properties: `slots=2` sets this one. */
static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SLOTS)
    EXAMPLE_SLOTS (object)->slots = g_value_get_int (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_SLOTS)
    g_value_set_int (value, EXAMPLE_SLOTS (object)->slots);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* Accounting: every valid lock file in jobs/ is one slot taken. Tessera
 * calls these as files come and go (also other processes' files). */
static void
account (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  EXAMPLE_SLOTS (resource)->used++;
}

static void
unaccount (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  EXAMPLE_SLOTS (resource)->used--;
}

/* Called under ipc.lock, with the state fresh from disk. FALSE always says
 * why: TESSERA_ERROR_UNAVAILABLE means "wait", another error "never". */
static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  ExampleSlots *self = EXAMPLE_SLOTS (resource);

  if (self->slots < 1)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_REQUEST_TOO_LARGE, "no slots configured");
      return FALSE;
    }
  if (self->used < self->slots)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, "all %d slots are taken", self->slots);
  return FALSE;
}

/* `--need builders` asks for one slot; the core's plain dependency will do. */
static TesseraDynamicDependency *
create_dependency (TesseraDynamicResource *resource, TesseraJob *job, const char *request, GError **error)
{
  if (request != NULL && g_strcmp0 (request, "1") != 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   "a slot is asked for without a count");
      return NULL;
    }
  return g_object_new (TESSERA_TYPE_DYNAMIC_DEPENDENCY, "resource", resource, "target", job, NULL);
}

static void
example_slots_class_init (ExampleSlotsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->set_property = set_property;
  object_class->get_property = get_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->create_dependency = create_dependency;
  tracked->account_lock_file = account;
  tracked->unaccount_lock_file = unaccount;
  tracked->is_available = is_available;

  g_object_class_install_property (object_class, PROP_SLOTS,
    g_param_spec_int ("slots", NULL, NULL, 0, 1000, 1,
                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

/* G_DEFINE_DYNAMIC_TYPE wants this; there is nothing to free. */
static void
example_slots_class_finalize (ExampleSlotsClass *klass)
{
}

static void
example_slots_init (ExampleSlots *self)
{
}

/* The entry point: tessera_<Module>_register_types. Register the types
 * with the module, then tell Tessera which type name they serve. */
G_MODULE_EXPORT void tessera_slots_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_slots_register_types (GTypeModule *module)
{
  example_slots_register_type (module);
  tessera_registry_register_resource_type ("slots", EXAMPLE_TYPE_SLOTS);
}
