/* tessera-mutex-lock-file.c: information = {"mode": "exclusive" | "shared"}
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-mutex.h"

struct _TesseraMutexLockFile
{
  TesseraDynamicLockFile parent_instance;
  gboolean shared;
};

G_DEFINE_DYNAMIC_TYPE (TesseraMutexLockFile, tessera_mutex_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
from_information (TesseraDynamicLockFile *lock_file, JsonNode *info, GError **error)
{
  TesseraMutexLockFile *self = TESSERA_MUTEX_LOCK_FILE (lock_file);
  JsonNode *mode;

  /* Anything not plainly "shared" counts as exclusive: the safe reading. */
  self->shared = FALSE;
  if (info == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (info))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a mutex's “information” must be an object"));
      return FALSE;
    }
  mode = json_object_get_member (json_node_get_object (info), "mode");
  self->shared = mode != NULL && JSON_NODE_HOLDS_VALUE (mode) && json_node_get_value_type (mode) == G_TYPE_STRING &&
                 g_strcmp0 (json_node_get_string (mode), "shared") == 0;
  return TRUE;
}

static JsonNode *
to_information (TesseraDynamicLockFile *lock_file)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "mode", TESSERA_MUTEX_LOCK_FILE (lock_file)->shared ? "shared" : "exclusive");
  json_node_take_object (node, object);
  return node;
}

static void
tessera_mutex_lock_file_class_init (TesseraMutexLockFileClass *klass)
{
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = from_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->to_information = to_information;
}

static void
tessera_mutex_lock_file_class_finalize (TesseraMutexLockFileClass *klass)
{
}

static void
tessera_mutex_lock_file_init (TesseraMutexLockFile *self)
{
}

gboolean
tessera_mutex_lock_file_is_shared (TesseraMutexLockFile *self)
{
  return self->shared;
}

void
_tessera_mutex_lock_file_register (GTypeModule *module)
{
  tessera_mutex_lock_file_register_type (module);
}
