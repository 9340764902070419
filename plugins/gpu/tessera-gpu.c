/* tessera-gpu.c: a resource that hands out specific devices.
 *
 * informations.json lists the devices:
 *   {"devices": [{"index": 0, "uuid": "GPU-…", "memory": 16384}, …]}
 * and is written from the `devices` setting when the folder has none:
 * "auto" detects them (NVML when the machine has it, else the driver's
 * /proc entries, else none), or INDEX[:MEMORY_MIB[:UUID]];… lists them.
 * Each lock file names the devices its holder has; a request takes the
 * lowest free devices that have enough memory. A waiter past its patience
 * reserves named devices in the folder's queue (free ones first, then the
 * lowest held ones), counted like holdings. A holding follows its UUID
 * when both it and the list know it, its index otherwise: a UUID that no
 * device of the list has (the list names none, or not that one) holds
 * its index.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tessera-gpu.h"

struct _TesseraGpu
{
  TesseraTrackedDynamicResource parent_instance;

  char *devices_setting;
  GArray *devices;        /* from informations.json */
  GHashTable *held;       /* holding_key() → Holding: what the lock files name */
  GHashTable *taken;      /* indices of the devices of the list held (see taken_devices()) */
  gboolean taken_stale;   /* held or the list changed since taken was made */
};

/* One device as lock files name it: its index, and its UUID when they
 * give one; @holders: how many name it (more than one only in broken
 * folders). */
typedef struct
{
  int index;
  char *uuid;
  int holders;
} Holding;

static void
holding_free (Holding *holding)
{
  g_free (holding->uuid);
  g_free (holding);
}

enum { PROP_0, PROP_DEVICES, PROP_HELD, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraGpu, tessera_gpu, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraGpu *self = TESSERA_GPU (object);

  switch (prop_id)
    {
    case PROP_DEVICES: g_value_set_string (value, self->devices_setting); break;
    case PROP_HELD: g_value_set_int (value, (int) g_hash_table_size (self->held)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraGpu *self = TESSERA_GPU (object);

  if (prop_id == PROP_DEVICES)
    {
      g_free (self->devices_setting);
      self->devices_setting = g_value_dup_string (value);
    }
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
reset_state (TesseraTrackedDynamicResource *resource)
{
  g_hash_table_remove_all (TESSERA_GPU (resource)->held);
  TESSERA_GPU (resource)->taken_stale = TRUE;
}

/* Both the index and the UUID: which of them a holding follows depends on
 * the list, which may change while it holds. */
static char *
holding_key (const TesseraGpuDevice *device)
{
  return device->uuid != NULL ? g_strdup_printf ("%d:%s", device->index, device->uuid)
                              : g_strdup_printf ("%d", device->index);
}

static void
change_held (TesseraGpu *self, TesseraDynamicLockFile *lock_file, int delta)
{
  GArray *devices = tessera_gpu_lock_file_get_devices (TESSERA_GPU_LOCK_FILE (lock_file));

  for (guint i = 0; i < devices->len; i++)
    {
      TesseraGpuDevice *device = &g_array_index (devices, TesseraGpuDevice, i);
      g_autofree char *key = holding_key (device);
      Holding *holding = g_hash_table_lookup (self->held, key);

      if (holding == NULL && delta > 0)
        {
          holding = g_new0 (Holding, 1);
          holding->index = device->index;
          holding->uuid = g_strdup (device->uuid);
          g_hash_table_insert (self->held, g_strdup (key), holding);
        }
      if (holding == NULL)
        continue;
      holding->holders += delta;
      if (holding->holders <= 0)
        g_hash_table_remove (self->held, key);
    }
  self->taken_stale = TRUE;
}

/* The indices of the devices of the list that are held: a holding with a
 * UUID that the list knows holds the devices of that UUID (indices change
 * when the driver or informations.json lists the devices in another
 * order); any other holds the device of its index. Made again only after
 * a change. */
static GHashTable *
taken_devices (TesseraGpu *self)
{
  g_autoptr(GHashTable) listed = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) held_uuids = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  Holding *holding;

  if (!self->taken_stale)
    return self->taken;
  for (guint i = 0; i < self->devices->len; i++)
    if (g_array_index (self->devices, TesseraGpuDevice, i).uuid != NULL)
      g_hash_table_add (listed, g_array_index (self->devices, TesseraGpuDevice, i).uuid);
  g_hash_table_remove_all (self->taken);
  g_hash_table_iter_init (&iter, self->held);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &holding))
    if (holding->uuid != NULL && g_hash_table_contains (listed, holding->uuid))
      g_hash_table_add (held_uuids, holding->uuid);
    else
      g_hash_table_add (self->taken, GINT_TO_POINTER (holding->index));
  for (guint i = 0; i < self->devices->len; i++)
    {
      TesseraGpuDevice *device = &g_array_index (self->devices, TesseraGpuDevice, i);

      if (device->uuid != NULL && g_hash_table_contains (held_uuids, device->uuid))
        g_hash_table_add (self->taken, GINT_TO_POINTER (device->index));
    }
  self->taken_stale = FALSE;
  return self->taken;
}

static gboolean
is_held (TesseraGpu *self, const TesseraGpuDevice *device)
{
  return g_hash_table_contains (taken_devices (self), GINT_TO_POINTER (device->index));
}

static void
account_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  change_held (TESSERA_GPU (resource), lock_file, +1);
}

static void
unaccount_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  change_held (TESSERA_GPU (resource), lock_file, -1);
}

static gboolean
fits (TesseraGpuDevice *device, guint64 min_memory)
{
  /* Memory that is not known cannot be promised. */
  return min_memory == 0 || device->memory_mib >= min_memory;
}

static void
append_copy (GArray *devices, const TesseraGpuDevice *device)
{
  TesseraGpuDevice copy = { device->index, g_strdup (device->uuid), device->memory_mib };

  g_array_append_val (devices, copy);
}

/* The lowest free devices that fit, or NULL when there are not enough.
 * With @reserve, devices held now complete the choice: what a waiter past
 * its patience keeps for itself (free ones first, so that no one else
 * takes them, then the lowest held ones, to be kept as they come free). */
static GArray *
pick (TesseraGpu *self, TesseraGpuDependency *dependency, gboolean reserve, guint *n_fitting)
{
  g_autoptr(GArray) chosen = tessera_gpu_devices_new ();
  int wanted = tessera_gpu_dependency_get_count (dependency);
  guint64 min_memory = tessera_gpu_dependency_get_min_memory (dependency);

  *n_fitting = 0;
  for (guint i = 0; i < self->devices->len; i++)
    {
      TesseraGpuDevice *device = &g_array_index (self->devices, TesseraGpuDevice, i);

      if (!fits (device, min_memory))
        continue;
      (*n_fitting)++;
      if ((int) chosen->len < wanted && !is_held (self, device))
        append_copy (chosen, device);
    }
  for (guint i = 0; reserve && i < self->devices->len && (int) chosen->len < wanted; i++)
    {
      TesseraGpuDevice *device = &g_array_index (self->devices, TesseraGpuDevice, i);

      if (fits (device, min_memory) && is_held (self, device))
        append_copy (chosen, device);
    }
  return (int) chosen->len == wanted ? g_steal_pointer (&chosen) : NULL;
}

static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  TesseraGpu *self = TESSERA_GPU (resource);
  TesseraGpuDependency *dep = TESSERA_GPU_DEPENDENCY (dependency);
  GArray *chosen;
  guint n_fitting;

  chosen = pick (self, dep, FALSE, &n_fitting);
  if ((int) n_fitting < tessera_gpu_dependency_get_count (dep))
    {
      /* Devices may be added (informations.json): wait, saying why. */
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY,
                   _("%s has %u device(s) with at least %llu MiB, fewer than the %d asked for"),
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)), n_fitting,
                   (unsigned long long) tessera_gpu_dependency_get_min_memory (dep),
                   tessera_gpu_dependency_get_count (dep));
      return FALSE;
    }
  /* Decided with the queue's reservations counted as held: the lock file
   * (or the queue entry) names these devices, not those free once the
   * reservations are no longer counted. */
  tessera_gpu_dependency_set_choice (dep, chosen != NULL ? chosen : pick (self, dep, TRUE, &n_fitting));
  if (chosen != NULL)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, _("%s has fewer than %d device(s) free"),
               tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)),
               tessera_gpu_dependency_get_count (dep));
  return FALSE;
}

static JsonNode *
devices_information (GArray *devices)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_member (object, "devices", tessera_gpu_devices_to_json (devices, FALSE));
  json_node_take_object (node, object);
  return node;
}

/* The devices the decision on @dependency picked, or picked now. */
static GArray *
take_choice (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, gboolean reserve)
{
  GArray *chosen = tessera_gpu_dependency_take_choice (TESSERA_GPU_DEPENDENCY (dependency));
  guint n_fitting;

  return chosen != NULL ? chosen : pick (TESSERA_GPU (resource), TESSERA_GPU_DEPENDENCY (dependency), reserve,
                                         &n_fitting);
}

/* Called right after is_available granted @dependency, under the same
 * locks: the devices it picked are the request's. */
static gboolean
do_acquire (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  g_autoptr(GArray) chosen = take_choice (resource, dependency, FALSE);

  g_return_val_if_fail (chosen != NULL, FALSE);
  tessera_gpu_dependency_set_assigned (TESSERA_GPU_DEPENDENCY (dependency), chosen);
  return TRUE;
}

static JsonNode *
get_lock_file_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  GArray *assigned = tessera_gpu_dependency_get_assigned (TESSERA_GPU_DEPENDENCY (dependency));

  g_return_val_if_fail (assigned != NULL, NULL);
  return devices_information (assigned);
}

/* What a request asks for, for people: how many devices (and the least
 * memory of each, when it says), before any is chosen: nothing is
 * picked or kept here (get_wait_information does). */
static JsonNode *
describe_request (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  TesseraGpuDependency *request = TESSERA_GPU_DEPENDENCY (dependency);
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  guint64 min_memory = tessera_gpu_dependency_get_min_memory (request);

  json_object_set_int_member (object, "count", tessera_gpu_dependency_get_count (request));
  if (min_memory > 0 && min_memory <= G_MAXINT64)
    json_object_set_int_member (object, "min_memory", (gint64) min_memory);
  json_node_take_object (node, object);
  return node;
}

/* A waiter past its patience reserves named devices (by UUID when they
 * have one, as holdings are counted): those its last decision picked. */
static JsonNode *
get_wait_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  g_autoptr(GArray) chosen = take_choice (resource, dependency, TRUE);

  return chosen != NULL ? devices_information (chosen) : NULL;
}

static void
do_release (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  tessera_gpu_dependency_set_assigned (TESSERA_GPU_DEPENDENCY (dependency), NULL);
}

static gboolean
handle_information_change (TesseraTrackedDynamicResource *resource, JsonNode *informations, GError **error)
{
  TesseraGpu *self = TESSERA_GPU (resource);
  GArray *devices;

  if (!JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                   _("a GPU resource's informations.json must be an object"));
      return FALSE;
    }
  devices = tessera_gpu_devices_from_json (json_object_get_member (json_node_get_object (informations), "devices"),
                                           TRUE, error);
  if (devices == NULL)
    return FALSE;
  g_array_unref (self->devices);
  self->devices = devices;
  self->taken_stale = TRUE;
  return TRUE;
}

static JsonNode *
initialize_informations (TesseraTrackedDynamicResource *resource)
{
  TesseraGpu *self = TESSERA_GPU (resource);
  g_autoptr(GArray) devices = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *object;
  JsonNode *node;

  if (self->devices_setting == NULL || g_strcmp0 (self->devices_setting, "auto") == 0)
    devices = tessera_gpu_devices_detect ();
  else
    devices = tessera_gpu_devices_parse_spec (self->devices_setting, &error);
  if (devices == NULL)
    {
      g_warning ("%s", error->message);
      return NULL;
    }
  object = json_object_new ();
  node = json_node_new (JSON_NODE_OBJECT);
  json_object_set_member (object, "devices", tessera_gpu_devices_to_json (devices, TRUE));
  json_node_take_object (node, object);
  return node;
}

static void
get_usage (TesseraTrackedDynamicResource *resource, gint64 *capacity, gint64 *free_units)
{
  TesseraGpu *self = TESSERA_GPU (resource);
  gint64 free_devices = 0;

  for (guint i = 0; i < self->devices->len; i++)
    free_devices += !is_held (self, &g_array_index (self->devices, TesseraGpuDevice, i));
  *capacity = self->devices->len;
  *free_units = free_devices;
}

/* request: N or N:MEMORY, MEMORY in MiB or with a G or M suffix ("2:16G") */
static TesseraDynamicDependency *
create_dependency (TesseraDynamicResource *resource, TesseraJob *job, const char *request, GError **error)
{
  g_auto(GStrv) parts = g_strsplit (request ? request : "1", ":", 2);
  guint64 count = 0, memory = 0, unit = 1;
  g_autofree char *number = NULL;

  if (parts[1] != NULL)
    {
      gsize len = strlen (parts[1]);
      number = g_strdup (parts[1]);
      if (len > 0 && g_ascii_toupper (number[len - 1]) == 'G')
        unit = 1024, number[len - 1] = '\0';
      else if (len > 0 && g_ascii_toupper (number[len - 1]) == 'M')
        number[len - 1] = '\0';
    }
  if (!g_ascii_string_to_unsigned (parts[0], 10, 1, 1024, &count, NULL) ||
      (number != NULL && !g_ascii_string_to_unsigned (number, 10, 0, G_MAXUINT32, &memory, NULL)))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a GPU request: use COUNT or COUNT:MEMORY (as in 2:16G)"), request);
      return NULL;
    }
  return g_object_new (TESSERA_TYPE_GPU_DEPENDENCY, "resource", resource, "target", job,
                       "count", (int) count, "min-memory", memory * unit, NULL);
}

static void
finalize (GObject *object)
{
  TesseraGpu *self = TESSERA_GPU (object);

  g_free (self->devices_setting);
  g_array_unref (self->devices);
  g_hash_table_unref (self->held);
  g_hash_table_unref (self->taken);
  G_OBJECT_CLASS (tessera_gpu_parent_class)->finalize (object);
}

/* A devices= the type cannot read is the configuration's error, said
 * when the resource is made: not a pool without a device that waits for
 * ever. */
static gboolean
check_settings (TesseraTrackedDynamicResource *resource, GError **error)
{
  TesseraGpu *self = TESSERA_GPU (resource);
  g_autoptr(GArray) devices = NULL;

  if (self->devices_setting == NULL || g_strcmp0 (self->devices_setting, "auto") == 0)
    return TRUE;
  devices = tessera_gpu_devices_parse_spec (self->devices_setting, error);
  if (devices != NULL && devices->len == 0)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                 _("“%s” is not a valid value for “devices”: it names no device (“auto” finds them)"),
                 self->devices_setting);
  return devices != NULL && devices->len > 0;
}

static void
tessera_gpu_class_init (TesseraGpuClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  object_class->finalize = finalize;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->create_dependency = create_dependency;
  tracked->reset_state = reset_state;
  tracked->account_lock_file = account_lock_file;
  tracked->unaccount_lock_file = unaccount_lock_file;
  tracked->is_available = is_available;
  tracked->do_acquire = do_acquire;
  tracked->do_release = do_release;
  tracked->get_lock_file_information = get_lock_file_information;
  tracked->get_wait_information = get_wait_information;
  tracked->describe_request = describe_request;
  tracked->handle_information_change = handle_information_change;
  tracked->initialize_informations = initialize_informations;
  tracked->get_usage = get_usage;
  tracked->check_settings = check_settings;
  tracked->lock_file_type = TESSERA_TYPE_GPU_LOCK_FILE;

  /* "auto", or INDEX[:MEMORY_MIB[:UUID]] entries separated by ";";
   * written to a new informations.json. */
  props[PROP_DEVICES] = g_param_spec_string ("devices", NULL, NULL, "auto",
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* Devices held, as last seen. */
  props[PROP_HELD] = g_param_spec_int ("held", NULL, NULL, 0, G_MAXINT, 0,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_gpu_class_finalize (TesseraGpuClass *klass)
{
}

static void
tessera_gpu_init (TesseraGpu *self)
{
  self->devices = tessera_gpu_devices_new ();
  self->held = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) holding_free);
  self->taken = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->taken_stale = TRUE;
}

void
_tessera_gpu_register (GTypeModule *module)
{
  tessera_gpu_register_type (module);
}
