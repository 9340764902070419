/* tessera-gpu-lock-file.c: information = {"devices": [{"index": 0, "uuid": "…"}, …]};
 * a waiting entry's request, {"count": N}, for its amount
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-gpu.h"

struct _TesseraGpuLockFile
{
  TesseraDynamicLockFile parent_instance;
  GArray *devices;
};

G_DEFINE_DYNAMIC_TYPE (TesseraGpuLockFile, tessera_gpu_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
from_information (TesseraDynamicLockFile *lock_file, JsonNode *info, GError **error)
{
  TesseraGpuLockFile *self = TESSERA_GPU_LOCK_FILE (lock_file);
  GArray *devices;

  g_clear_pointer (&self->devices, g_array_unref);
  if (info == NULL)
    {
      self->devices = tessera_gpu_devices_new ();
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (info))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a GPU lock file's “information” must be an object"));
      return FALSE;
    }
  devices = tessera_gpu_devices_from_json (json_object_get_member (json_node_get_object (info), "devices"),
                                           FALSE, error);
  if (devices == NULL)
    return FALSE;
  self->devices = devices;
  return TRUE;
}

static JsonNode *
to_information (TesseraDynamicLockFile *lock_file)
{
  TesseraGpuLockFile *self = TESSERA_GPU_LOCK_FILE (lock_file);
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_member (object, "devices", tessera_gpu_devices_to_json (self->devices, FALSE));
  json_node_take_object (node, object);
  return node;
}

/* The number of devices it holds (or asks for). A request waiting within
 * its patience names no device yet: its entry in queue/ shows what the
 * resource's describe_request() said, {"count": N} without "devices",
 * and asks for N devices all the same (the queue view and its sums in
 * status --json and OpenMetrics count it so). Reads the information as
 * kept (sealed, any thread), since that is shown after
 * from_information(). */
static gint64
get_amount (TesseraDynamicLockFile *lock_file)
{
  TesseraGpuLockFile *self = TESSERA_GPU_LOCK_FILE (lock_file);
  JsonNode *information = tessera_dynamic_lock_file_get_information (lock_file);

  if (information != NULL && JSON_NODE_HOLDS_OBJECT (information))
    {
      JsonObject *object = json_node_get_object (information);
      JsonNode *count = json_object_get_member (object, "count");

      if (!json_object_has_member (object, "devices") && count != NULL && JSON_NODE_HOLDS_VALUE (count) &&
          json_node_get_value_type (count) == G_TYPE_INT64 && json_node_get_int (count) >= 0)
        return json_node_get_int (count);
    }
  return self->devices != NULL ? (gint64) self->devices->len : 0;
}

static void
finalize (GObject *object)
{
  g_clear_pointer (&TESSERA_GPU_LOCK_FILE (object)->devices, g_array_unref);
  G_OBJECT_CLASS (tessera_gpu_lock_file_parent_class)->finalize (object);
}

static void
tessera_gpu_lock_file_class_init (TesseraGpuLockFileClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = finalize;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = from_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->to_information = to_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->get_amount = get_amount;
}

static void
tessera_gpu_lock_file_class_finalize (TesseraGpuLockFileClass *klass)
{
}

static void
tessera_gpu_lock_file_init (TesseraGpuLockFile *self)
{
  self->devices = tessera_gpu_devices_new ();
}

GArray *
tessera_gpu_lock_file_get_devices (TesseraGpuLockFile *self)
{
  return self->devices;
}

void
_tessera_gpu_lock_file_register (GTypeModule *module)
{
  tessera_gpu_lock_file_register_type (module);
}
