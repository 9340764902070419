/* tessera-job-dependency-locks.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-json-private.h"
#include "tessera-private.h"

#include <tessera/tessera.h>

/**
 * TesseraJobDependencyLocks:
 *
 * The seed's `JobDependencyLocks`: every lock a job process was handed in
 * `locks.json`. Entries whose class is unknown are skipped with a warning,
 * as the seed does, and listed by
 * [method@Tessera.JobDependencyLocks.get_skipped]. Locks are acquired in
 * order and released in reverse order.
 */
struct _TesseraJobDependencyLocks
{
  GObject parent_instance;

  GPtrArray *locks;
  GPtrArray *skipped;   /* NULL-terminated */
  guint acquired;
};

G_DEFINE_FINAL_TYPE (TesseraJobDependencyLocks, tessera_job_dependency_locks, G_TYPE_OBJECT)

static void
tessera_job_dependency_locks_finalize (GObject *object)
{
  TesseraJobDependencyLocks *self = TESSERA_JOB_DEPENDENCY_LOCKS (object);

  g_ptr_array_unref (self->locks);
  g_ptr_array_unref (self->skipped);
  G_OBJECT_CLASS (tessera_job_dependency_locks_parent_class)->finalize (object);
}

static void
tessera_job_dependency_locks_class_init (TesseraJobDependencyLocksClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_job_dependency_locks_finalize;
}

static void
tessera_job_dependency_locks_init (TesseraJobDependencyLocks *self)
{
  self->locks = g_ptr_array_new_with_free_func (g_object_unref);
  self->skipped = g_ptr_array_new_null_terminated (0, g_free, TRUE);
}

/**
 * tessera_job_dependency_locks_new:
 *
 * Makes an empty set of job locks.
 *
 * Returns: (transfer full): an empty set of job locks
 */
TesseraJobDependencyLocks *
tessera_job_dependency_locks_new (void)
{
  return g_object_new (TESSERA_TYPE_JOB_DEPENDENCY_LOCKS, NULL);
}

/* A string member for a message, "?" when absent or of another type. */
static const char *
string_member (JsonObject *object, const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return "?";
  return json_node_get_string (node);
}

/**
 * tessera_job_dependency_locks_new_from_json:
 * @node: the content of `locks.json` (`{"dynamic_locks": [...]}`) or the
 *   bare list
 * @error: return location for a #GError
 *
 * Builds each entry's job lock through the lock class its "module" and
 * "class" name. Entries that are not objects, miss "module" or "class", or
 * name an unknown class are skipped with a warning; an entry whose class
 * rejects its data is an error.
 *
 * Returns: (transfer full): the job locks, or %NULL with
 *   %TESSERA_ERROR_INVALID_LOCK_FILE
 */
TesseraJobDependencyLocks *
tessera_job_dependency_locks_new_from_json (JsonNode  *node,
                                            GError   **error)
{
  g_autoptr(TesseraJobDependencyLocks) self = NULL;
  JsonArray *array = NULL;

  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonNode *list = json_object_get_member (json_node_get_object (node), "dynamic_locks");
      if (list != NULL && JSON_NODE_HOLDS_ARRAY (list))
        array = json_node_get_array (list);
    }
  else if (node != NULL && JSON_NODE_HOLDS_ARRAY (node))
    array = json_node_get_array (node);
  if (array == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("locks.json must hold a “dynamic_locks” list"));
      return NULL;
    }

  self = tessera_job_dependency_locks_new ();
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);
      g_autoptr(GError) local = NULL;
      TesseraJobDependencyLock *lock;

      if (!JSON_NODE_HOLDS_OBJECT (element))
        {
          g_warning (_("Skipping lock entry %u of locks.json: not an object"), i);
          g_ptr_array_add (self->skipped, g_strdup_printf ("#%u", i));
          continue;
        }
      lock = tessera_dynamic_dependency_lock_job_lock_from_json (json_node_get_object (element), &local);
      if (lock != NULL)
        {
          g_ptr_array_add (self->locks, lock);
          continue;
        }
      if (g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_CLASS_NOT_FOUND) ||
          g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME) ||
          g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND))
        {
          JsonObject *object = json_node_get_object (element);
          g_warning (_("Skipping lock entry %u of locks.json: %s"), i, local->message);
          g_ptr_array_add (self->skipped, g_strdup_printf ("%s:%s", string_member (object, "module"),
                                                           string_member (object, "class")));
          continue;
        }
      g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                  _("Lock entry %u of locks.json: "), i);
      return NULL;
    }
  return g_steal_pointer (&self);
}

/**
 * tessera_job_dependency_locks_load:
 * @path: a `locks.json` file
 * @error: return location for a #GError
 *
 * Reads `locks.json` and calls [ctor@Tessera.JobDependencyLocks.new_from_json].
 *
 * Returns: (transfer full): the job locks, or %NULL with @error set
 */
TesseraJobDependencyLocks *
tessera_job_dependency_locks_load (const char  *path,
                                   GError     **error)
{
  g_autofree char *data = NULL;
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) local = NULL;
  gsize length;

  if (!_tessera_read_file_nofollow (path, &data, &length, NULL, error))
    return NULL;
  if (!_tessera_json_load (parser, data, length, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("%s is not valid JSON: %s"), path, local->message);
      return NULL;
    }
  return tessera_job_dependency_locks_new_from_json (json_parser_get_root (parser), error);
}

/**
 * tessera_job_dependency_locks_append:
 * @self: a set of job locks
 * @lock: a job lock
 *
 * Adds @lock after the others.
 */
void
tessera_job_dependency_locks_append (TesseraJobDependencyLocks *self,
                                     TesseraJobDependencyLock  *lock)
{
  g_return_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCKS (self));
  g_return_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCK (lock));
  g_ptr_array_add (self->locks, g_object_ref (lock));
}

/**
 * tessera_job_dependency_locks_get_locks:
 * @self: a set of job locks
 *
 * The job locks built from `locks.json`, in file order.
 *
 * Returns: (transfer none) (element-type TesseraJobDependencyLock): the locks
 */
GPtrArray *
tessera_job_dependency_locks_get_locks (TesseraJobDependencyLocks *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCKS (self), NULL);
  return self->locks;
}

/**
 * tessera_job_dependency_locks_get_skipped:
 * @self: a set of job locks
 *
 * The entries of `locks.json` that no plugin of this process
 * understands.
 *
 * Returns: (transfer none) (array zero-terminated=1): "module:class" of
 *   each entry of `locks.json` that was skipped
 */
const char * const *
tessera_job_dependency_locks_get_skipped (TesseraJobDependencyLocks *self)
{
  static const char * const none[] = { NULL };

  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCKS (self), NULL);
  /* An empty null-terminated GPtrArray may have no storage at all. */
  return self->skipped->pdata ? (const char * const *) self->skipped->pdata : none;
}

/**
 * tessera_job_dependency_locks_acquire:
 * @self: a set of job locks
 * @error: return location for a #GError
 *
 * Acquires every lock in order; when one fails, those already acquired
 * are released again.
 *
 * Returns: %TRUE when all are held
 */
gboolean
tessera_job_dependency_locks_acquire (TesseraJobDependencyLocks  *self,
                                      GError                    **error)
{
  g_return_val_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCKS (self), FALSE);

  for (self->acquired = 0; self->acquired < self->locks->len; self->acquired++)
    if (!tessera_job_dependency_lock_acquire (g_ptr_array_index (self->locks, self->acquired), error))
      {
        tessera_job_dependency_locks_release (self);
        return FALSE;
      }
  return TRUE;
}

/**
 * tessera_job_dependency_locks_release:
 * @self: a set of job locks
 *
 * Releases the acquired locks in reverse order.
 */
void
tessera_job_dependency_locks_release (TesseraJobDependencyLocks *self)
{
  g_return_if_fail (TESSERA_IS_JOB_DEPENDENCY_LOCKS (self));

  while (self->acquired > 0)
    tessera_job_dependency_lock_release (g_ptr_array_index (self->locks, --self->acquired));
}
