/* tessera-token-lock-file.c: the seed's TokenLockFile
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-counter-token.h"

/* information = {"count": N}; null (a file being created) counts 0. */
struct _TesseraTokenLockFile
{
  TesseraDynamicLockFile parent_instance;
  gint64 count;
};

G_DEFINE_DYNAMIC_TYPE (TesseraTokenLockFile, tessera_token_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
tessera_token_lock_file_from_information (TesseraDynamicLockFile *lock_file, JsonNode *info, GError **error)
{
  TesseraTokenLockFile *self = TESSERA_TOKEN_LOCK_FILE (lock_file);
  JsonNode *count;

  self->count = 0;
  if (info == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (info))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a token's “information” must be an object"));
      return FALSE;
    }
  count = json_object_get_member (json_node_get_object (info), "count");
  if (count == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (count) || json_node_get_value_type (count) != G_TYPE_INT64 ||
      json_node_get_int (count) < 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a token's “count” must be a non-negative integer"));
      return FALSE;
    }
  self->count = json_node_get_int (count);
  return TRUE;
}

static JsonNode *
tessera_token_lock_file_to_information (TesseraDynamicLockFile *lock_file)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (object, "count", TESSERA_TOKEN_LOCK_FILE (lock_file)->count);
  json_node_take_object (node, object);
  return node;
}

static void
tessera_token_lock_file_class_init (TesseraTokenLockFileClass *klass)
{
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = tessera_token_lock_file_from_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->to_information = tessera_token_lock_file_to_information;
}

static void
tessera_token_lock_file_class_finalize (TesseraTokenLockFileClass *klass)
{
}

static void
tessera_token_lock_file_init (TesseraTokenLockFile *self)
{
}

gint64
tessera_token_lock_file_get_count (TesseraTokenLockFile *self)
{
  return self->count;
}

void
_tessera_token_lock_file_register (GTypeModule *module)
{
  tessera_token_lock_file_register_type (module);
}
