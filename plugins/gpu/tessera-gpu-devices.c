/* tessera-gpu-devices.c: device lists — parsing the `devices` setting,
 * detection, JSON, and the environment a job needs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <gmodule.h>
#include <string.h>

#include "tessera-gpu.h"

static void
device_clear (TesseraGpuDevice *device)
{
  g_clear_pointer (&device->uuid, g_free);
}

GArray *
tessera_gpu_devices_new (void)
{
  GArray *devices = g_array_new (FALSE, TRUE, sizeof (TesseraGpuDevice));
  g_array_set_clear_func (devices, (GDestroyNotify) device_clear);
  return devices;
}

static gboolean
has_index (GArray *devices, int index)
{
  for (guint i = 0; i < devices->len; i++)
    if (g_array_index (devices, TesseraGpuDevice, i).index == index)
      return TRUE;
  return FALSE;
}

/* "0;1;2" or "0:16384:GPU-uuid;1:8192": INDEX[:MEMORY_MIB[:UUID]] */
GArray *
tessera_gpu_devices_parse_spec (const char *spec, GError **error)
{
  g_autoptr(GArray) devices = tessera_gpu_devices_new ();
  g_auto(GStrv) entries = g_strsplit (spec, ";", -1);

  for (guint i = 0; entries[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (g_strstrip (entries[i]), ":", 3);
      TesseraGpuDevice device = { 0 };
      guint64 index, memory = 0;

      if (*entries[i] == '\0')
        continue;
      if (!g_ascii_string_to_unsigned (fields[0], 10, 0, 1024, &index, NULL) ||
          (fields[1] != NULL && *fields[1] != '\0' &&
           !g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXUINT32, &memory, NULL)))
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("“%s” is not a valid value for “devices”: “%s” is not INDEX[:MEMORY_MIB[:UUID]]"),
                       spec, entries[i]);
          return NULL;
        }
      if (has_index (devices, (int) index))
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("“%s” is not a valid value for “devices”: device %d is given twice"), spec, (int) index);
          return NULL;
        }
      device.index = (int) index;
      device.memory_mib = memory;
      device.uuid = fields[1] && fields[2] && *fields[2] ? g_strdup (fields[2]) : NULL;
      g_array_append_val (devices, device);
    }
  return g_steal_pointer (&devices);
}

/* NVML, when the machine has it: loaded at run time, never linked. */
typedef int (*NvmlInit) (void);
typedef int (*NvmlCount) (unsigned int *);
typedef int (*NvmlHandle) (unsigned int, void **);
typedef int (*NvmlUuid) (void *, char *, unsigned int);
typedef struct { unsigned long long total, free, used; } NvmlMemory;
typedef int (*NvmlMemoryInfo) (void *, NvmlMemory *);

static gboolean
lookup (GModule *module, const char *name, gpointer out)
{
  gpointer address = NULL;

  if (!g_module_symbol (module, name, &address) || address == NULL)
    return FALSE;
  memcpy (out, &address, sizeof address);
  return TRUE;
}

static GArray *
detect_nvml (void)
{
  GModule *nvml = g_module_open ("libnvidia-ml.so.1", G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  NvmlInit init = NULL, shutdown = NULL;
  NvmlCount count = NULL;
  NvmlHandle handle = NULL;
  NvmlUuid uuid = NULL;
  NvmlMemoryInfo memory = NULL;
  GArray *devices = NULL;
  unsigned int n = 0;

  if (nvml == NULL)
    return NULL;
  if (lookup (nvml, "nvmlInit_v2", &init) && lookup (nvml, "nvmlShutdown", &shutdown) &&
      lookup (nvml, "nvmlDeviceGetCount_v2", &count) && lookup (nvml, "nvmlDeviceGetHandleByIndex_v2", &handle) &&
      lookup (nvml, "nvmlDeviceGetUUID", &uuid) && lookup (nvml, "nvmlDeviceGetMemoryInfo", &memory) &&
      init () == 0)
    {
      devices = tessera_gpu_devices_new ();
      if (count (&n) == 0)
        for (unsigned int i = 0; i < n; i++)
          {
            TesseraGpuDevice device = { (int) i, NULL, 0 };
            void *h = NULL;
            char buf[96] = "";
            NvmlMemory mem = { 0, 0, 0 };

            if (handle (i, &h) != 0)
              continue;
            if (uuid (h, buf, sizeof buf) == 0 && buf[0] != '\0')
              device.uuid = g_strdup (buf);
            if (memory (h, &mem) == 0)
              device.memory_mib = mem.total / (1024 * 1024);
            g_array_append_val (devices, device);
            /* device.uuid now belongs to the array (its clear function frees it). */
            // cppcheck-suppress memleak
          }
      shutdown ();
    }
  g_module_close (nvml);
  return devices;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

/* The driver's /proc entries, one folder per GPU named by its PCI bus
 * location: sorted, they give CUDA's PCI_BUS_ID order. */
static GArray *
detect_proc (void)
{
  const char *root = "/proc/driver/nvidia/gpus";
  g_autoptr(GPtrArray) buses = g_ptr_array_new_with_free_func (g_free);
  GDir *dir = g_dir_open (root, 0, NULL);
  const char *name;
  GArray *devices;

  if (dir == NULL)
    return NULL;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (buses, g_strdup (name));
  g_dir_close (dir);
  g_ptr_array_sort (buses, compare_strings);
  devices = tessera_gpu_devices_new ();
  for (guint i = 0; i < buses->len; i++)
    {
      g_autofree char *path = g_build_filename (root, g_ptr_array_index (buses, i), "information", NULL);
      g_autofree char *text = NULL;
      g_auto(GStrv) lines = NULL;
      TesseraGpuDevice device = { (int) i, NULL, 0 };

      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      lines = g_strsplit (text, "\n", -1);
      for (guint j = 0; lines[j] != NULL; j++)
        if (g_str_has_prefix (lines[j], "GPU UUID:"))
          device.uuid = g_strstrip (g_strdup (lines[j] + strlen ("GPU UUID:")));
      g_array_append_val (devices, device);
    }
  return devices;
}

GArray *
tessera_gpu_devices_detect (void)
{
  GArray *devices = detect_nvml ();

  if (devices == NULL)
    devices = detect_proc ();
  return devices ? devices : tessera_gpu_devices_new ();
}

GArray *
tessera_gpu_devices_from_json (JsonNode *node, gboolean need_memory, GError **error)
{
  g_autoptr(GArray) devices = tessera_gpu_devices_new ();
  JsonArray *array;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    goto bad;
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      JsonObject *object;
      JsonNode *index, *uuid, *memory;
      TesseraGpuDevice device = { 0 };

      if (!JSON_NODE_HOLDS_OBJECT (element))
        goto bad;
      object = json_node_get_object (element);
      index = json_object_get_member (object, "index");
      uuid = json_object_get_member (object, "uuid");
      memory = json_object_get_member (object, "memory");
      if (index == NULL || !JSON_NODE_HOLDS_VALUE (index) || json_node_get_value_type (index) != G_TYPE_INT64 ||
          json_node_get_int (index) < 0 || json_node_get_int (index) > 1024 ||
          has_index (devices, (int) json_node_get_int (index)))
        goto bad;
      if (uuid != NULL && !JSON_NODE_HOLDS_NULL (uuid) &&
          (!JSON_NODE_HOLDS_VALUE (uuid) || json_node_get_value_type (uuid) != G_TYPE_STRING))
        goto bad;
      if (memory != NULL && !JSON_NODE_HOLDS_NULL (memory) &&
          (!JSON_NODE_HOLDS_VALUE (memory) || json_node_get_value_type (memory) != G_TYPE_INT64 ||
           json_node_get_int (memory) < 0))
        goto bad;
      device.index = (int) json_node_get_int (index);
      device.uuid = uuid && JSON_NODE_HOLDS_VALUE (uuid) ? g_strdup (json_node_get_string (uuid)) : NULL;
      device.memory_mib = need_memory && memory && JSON_NODE_HOLDS_VALUE (memory) ? (guint64) json_node_get_int (memory) : 0;
      g_array_append_val (devices, device);
    }
  return g_steal_pointer (&devices);
bad:
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
               _("“devices” must be a list of {\"index\": N, \"uuid\": \"…\", \"memory\": MiB}, each index once"));
  return NULL;
}

JsonNode *
tessera_gpu_devices_to_json (GArray *devices, gboolean with_memory)
{
  JsonArray *array = json_array_new ();
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  for (guint i = 0; i < devices->len; i++)
    {
      TesseraGpuDevice *device = &g_array_index (devices, TesseraGpuDevice, i);
      JsonObject *object = json_object_new ();

      json_object_set_int_member (object, "index", device->index);
      if (device->uuid != NULL)
        json_object_set_string_member (object, "uuid", device->uuid);
      if (with_memory && device->memory_mib > 0)
        json_object_set_int_member (object, "memory", (gint64) device->memory_mib);
      json_array_add_object_element (array, object);
    }
  json_node_take_array (node, array);
  return node;
}

/* UUIDs when every device has one (a wrong index hides the devices after
 * it), indices otherwise; PCI_BUS_ID so indices match the driver's. */
char **
tessera_gpu_devices_environment (GArray *devices)
{
  g_autoptr(GString) visible = g_string_new (NULL);
  g_autoptr(GString) indices = g_string_new (NULL);
  gboolean all_uuids = devices->len > 0;
  char **env;

  for (guint i = 0; i < devices->len; i++)
    all_uuids &= g_array_index (devices, TesseraGpuDevice, i).uuid != NULL;
  for (guint i = 0; i < devices->len; i++)
    {
      TesseraGpuDevice *device = &g_array_index (devices, TesseraGpuDevice, i);
      const char *sep = i > 0 ? "," : "";
      g_string_append_printf (indices, "%s%d", sep, device->index);
      if (all_uuids)
        g_string_append_printf (visible, "%s%s", sep, device->uuid);
      else
        g_string_append_printf (visible, "%s%d", sep, device->index);
    }
  env = g_new0 (char *, 4);
  env[0] = g_strconcat ("CUDA_VISIBLE_DEVICES=", visible->str, NULL);
  env[1] = g_strdup ("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  env[2] = g_strconcat ("TESSERA_GPUS=", indices->str, NULL);
  return env;
}
