/* tessera-counter-token-lock.c: the seed's CounterTokenLock
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-counter-token.h"

/* Acquiring, releasing and recording the process are the core's defaults
 * for a tracked resource; what is the token's own is its locks.json entry. */
struct _TesseraCounterTokenLock
{
  TesseraDynamicDependencyLock parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraCounterTokenLock, tessera_counter_token_lock, TESSERA_TYPE_DYNAMIC_DEPENDENCY_LOCK)

static void
tessera_counter_token_lock_to_json (TesseraDynamicDependencyLock *lock, JsonObject *object)
{
  TesseraDynamicDependency *dependency = tessera_dynamic_dependency_lock_get_dependency (lock);
  TesseraDynamicResource *token = tessera_dynamic_dependency_get_resource (dependency);

  /* Where the pool lives: its folder, or its key in another store. */
  g_autofree char *location = tessera_tracked_dynamic_resource_dup_location (TESSERA_TRACKED_DYNAMIC_RESOURCE (token));

  TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (tessera_counter_token_lock_parent_class)->to_json (lock, object);
  json_object_set_string_member (object, "token_path", location);
  json_object_set_int_member (object, "count",
    tessera_counter_dependency_get_count (TESSERA_COUNTER_DEPENDENCY (dependency)));
  json_object_set_string_member (object, "name", tessera_dynamic_resource_get_name (token));
}

static gboolean
string_member (JsonObject *data, const char *member, const char **value, GError **error)
{
  JsonNode *node = json_object_get_member (data, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a counter token lock needs a string “%s”"), member);
      return FALSE;
    }
  *value = json_node_get_string (node);
  return TRUE;
}

/* The seed's CounterTokenJobLock(data): every member is required. */
static TesseraJobDependencyLock *
tessera_counter_token_lock_job_lock_from_json (TesseraDynamicDependencyLockClass *klass,
                                               JsonObject *data, GError **error)
{
  const char *token_path, *name, *lock_file_path;
  JsonNode *count = json_object_get_member (data, "count");

  /* A pool in another store (etcd) has no lock file to name: its holder
   * is a key, kept and given back by the run's process. */
  if (!string_member (data, "token_path", &token_path, error) ||
      !string_member (data, "name", &name, error) ||
      (json_object_has_member (data, "lock_file_path") &&
       !string_member (data, "lock_file_path", &lock_file_path, error)))
    return NULL;
  if (!json_object_has_member (data, "lock_file_path"))
    lock_file_path = NULL;
  if (count == NULL || !JSON_NODE_HOLDS_VALUE (count) || json_node_get_value_type (count) != G_TYPE_INT64)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("a counter token lock needs an integer “count”"));
      return NULL;
    }
  return g_object_new (TESSERA_TYPE_COUNTER_TOKEN_JOB_LOCK,
                       "data", data, "lock-file-path", lock_file_path, NULL);
}

static void
tessera_counter_token_lock_class_init (TesseraCounterTokenLockClass *klass)
{
  TesseraDynamicDependencyLockClass *lock_class = TESSERA_DYNAMIC_DEPENDENCY_LOCK_CLASS (klass);

  lock_class->to_json = tessera_counter_token_lock_to_json;
  lock_class->job_lock_from_json = tessera_counter_token_lock_job_lock_from_json;
}

static void
tessera_counter_token_lock_class_finalize (TesseraCounterTokenLockClass *klass)
{
}

static void
tessera_counter_token_lock_init (TesseraCounterTokenLock *self)
{
}

void
_tessera_counter_token_lock_register (GTypeModule *module)
{
  tessera_counter_token_lock_register_type (module);
}
