/* tessera-counter-lock-file.c: the lock file of a counted resource
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <tessera/tessera.h>

/**
 * TesseraCounterLockFile:
 *
 * The lock file of a [class@Tessera.CounterResource]: its "information"
 * is an object whose "count" member says how many units the holder has
 * (`{"count": 2}`, experimaestro's `TokenLockFile`). A missing
 * "information" or "count" holds nothing.
 *
 * Other members of "information" are kept and written back unchanged, so a
 * subclass of the counter can store more (a user, a project) and read it
 * with [method@Tessera.DynamicLockFile.get_information] — often without a
 * lock-file class of its own.
 */
typedef struct
{
  gint64 count;
} TesseraCounterLockFilePrivate;

G_DEFINE_TYPE_WITH_PRIVATE (TesseraCounterLockFile, tessera_counter_lock_file, TESSERA_TYPE_DYNAMIC_LOCK_FILE)

static gboolean
tessera_counter_lock_file_from_information (TesseraDynamicLockFile *lock_file, JsonNode *info, GError **error)
{
  TesseraCounterLockFilePrivate *priv =
    tessera_counter_lock_file_get_instance_private (TESSERA_COUNTER_LOCK_FILE (lock_file));
  JsonNode *count;

  priv->count = 0;
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
  priv->count = json_node_get_int (count);
  return TRUE;
}

static gint64
tessera_counter_lock_file_get_amount (TesseraDynamicLockFile *lock_file)
{
  return tessera_counter_lock_file_get_count (TESSERA_COUNTER_LOCK_FILE (lock_file));
}

static void
tessera_counter_lock_file_class_init (TesseraCounterLockFileClass *klass)
{
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->from_information = tessera_counter_lock_file_from_information;
  TESSERA_DYNAMIC_LOCK_FILE_CLASS (klass)->get_amount = tessera_counter_lock_file_get_amount;
}

static void
tessera_counter_lock_file_init (TesseraCounterLockFile *self)
{
}

/**
 * tessera_counter_lock_file_get_count:
 * @self: a counter's lock file
 *
 * How many units the holder of this lock file has: the "count" member of
 * its "information". Any thread.
 *
 * Returns: the count, 0 when the file gives none
 */
gint64
tessera_counter_lock_file_get_count (TesseraCounterLockFile *self)
{
  TesseraCounterLockFilePrivate *priv;

  g_return_val_if_fail (TESSERA_IS_COUNTER_LOCK_FILE (self), 0);
  priv = tessera_counter_lock_file_get_instance_private (self);
  return priv->count;
}
