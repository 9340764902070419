/* tessera-lock-file-salvage.c: what is left of a lock file that does not load
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-file-warnings-private.h"
#include "tessera-json-private.h"
#include "tessera-lock-file-salvage-private.h"
#include "tessera-private.h"

/* Whether a file that did not load is what a writer in place (a Python
 * peer) leaves while it writes or when it dies half-way: empty, white
 * space alone, or strict JSON cut short (the scan ran off its end before
 * the top-level value closed). Complete text the strict scan refuses is
 * not. */
static gboolean
is_truncated (const char *data, gsize length)
{
  g_autoptr(JsonParser) parser = NULL;

  if (length == 0 || _tessera_json_is_cut_short (data, length))
    return TRUE;
  parser = json_parser_new_immutable ();
  return _tessera_json_load (parser, data, length, NULL) && json_parser_get_root (parser) == NULL;
}

/* Whether a file that did not load is complete text the strict scan
 * refuses (not JSON, too deep, not UTF-8, a lone surrogate): no writer leaves that half-way, and its writer may
 * hold anything. */
static gboolean
is_refused (const char *data, gsize length)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  gboolean nulled;

  /* JSON that names no job never counted, also with a number not to trust. */
  return !is_truncated (data, length) &&
         !_tessera_json_load_nulling_numbers (parser, data, length, &nulled, NULL);
}

/* Numbers written as 1.0 (Python's json may) become integers; FALSE when
 * some number is not a whole one, or the information is nested deeper than
 * any type's needs (then it is not read at all). */
static gboolean
integral_numbers (JsonNode *node, guint depth)
{
  gboolean whole = TRUE;

  if (depth > 32)
    return FALSE;
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(GList) members = json_object_get_values (json_node_get_object (node));
      for (GList *l = members; l != NULL; l = l->next)
        whole &= integral_numbers (l->data, depth + 1);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (array); i++)
        whole &= integral_numbers (json_array_get_element (array, i), depth + 1);
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      double value = json_node_get_double (node);
      /* The range first: a double past it has no gint64 to compare with. */
      if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0) || value != (double) (gint64) value)
        return FALSE;
      json_node_set_int (node, (gint64) value);
    }
  return whole;
}

/* A lock file of @lock_file_type (at @path, read as @data) that did not
 * load but names a job still holds (fail closed): read again with whole
 * floats made integers and an unreadable "process" dropped
 * (@holder_unknown then set); if its "information" still cannot be read,
 * or the file holds a number JSON cannot carry (1e400, or an integer
 * beyond 64 bits: what the holder has, and who it is, are not known),
 * without it (and its "process"), and @whole set: it holds everything.
 * NULL when it names no job (it never counted). */
static TesseraDynamicLockFile *
salvage (GType lock_file_type, const char *path, const char *data, gsize length,
         gboolean *whole, gboolean *holder_unknown)
{
  g_autofree char *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();   /* edited below */
  JsonNode *root;
  TesseraDynamicLockFile *lock_file;
  JsonObject *object;
  JsonNode *member;
  gboolean nulled = FALSE;

  if (!_tessera_json_load_nulling_numbers (parser, data, length, &nulled, NULL) ||
      json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  root = json_parser_get_root (parser);
  object = json_node_get_object (root);
  member = json_object_get_member (object, "job_uri");
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      json_node_get_value_type (member) != G_TYPE_STRING || *json_node_get_string (member) == '\0')
    return NULL;   /* names no job: it never counted */

  /* A number of the file read wrong or made null may be the holder's pid
   * or start time, or the whole member (1e400, made null here, is no
   * "process": null): then it is not known who holds. */
  member = json_object_get_member (object, "process");
  if (member != NULL && (nulled || (!JSON_NODE_HOLDS_NULL (member) && !JSON_NODE_HOLDS_OBJECT (member))))
    {
      json_object_remove_member (object, "process");
      *holder_unknown = TRUE;
    }
  member = json_object_get_member (object, "information");
  if (member != NULL && !nulled && integral_numbers (member, 0))
    {
      text = json_to_string (root, FALSE);
      lock_file = tessera_dynamic_lock_file_new_from_data (lock_file_type, path, text, -1, NULL);
      if (lock_file != NULL)
        return lock_file;
      g_clear_pointer (&text, g_free);
    }
  json_object_remove_member (object, "information");
  text = json_to_string (root, FALSE);
  lock_file = tessera_dynamic_lock_file_new_from_data (lock_file_type, path, text, -1, NULL);
  if (lock_file != NULL)
    *whole = TRUE;
  return lock_file;
}

TesseraDynamicLockFile *
_tessera_lock_file_salvage_failed (GType         lock_file_type,
                                   const char   *path,
                                   const char   *owner_name,
                                   const char   *data,
                                   gsize         length,
                                   const GError *error,
                                   gboolean     *whole,
                                   gboolean     *holder_unknown,
                                   gboolean     *truncated,
                                   char        **refused)
{
  TesseraDynamicLockFile *lock_file =
    data != NULL ? salvage (lock_file_type, path, data, length, whole, holder_unknown) : NULL;

  if (lock_file != NULL)
    {
      _tessera_file_warning (_("Lock file %s of %s names a job but cannot be read in full (%s): it counts, %s"),
                             path, owner_name, error->message,
                             *whole ? _("as holding everything") : _("for its declared amount"));
      if (*whole)
        {
          g_autofree char *problem = g_strdup_printf (_("it cannot be read in full (%s): it holds everything"),
                                                      error->message);
          _tessera_dynamic_lock_file_set_problem (lock_file, problem);
        }
    }
  else
    {
      *truncated = data != NULL && is_truncated (data, length);
      /* Whoever wrote text that is not JSON may hold anything: until it
       * reads or, cut short, it ages away; complete, until it is removed. */
      if (*truncated)
        _tessera_file_warning (_("Lock file %s of %s cannot be read (%s): it counts as holding everything"),
                               path, owner_name, error->message);
      else if (data != NULL && is_refused (data, length))
        {
          _tessera_file_warning (_("Lock file %s of %s cannot be read (%s): it counts as holding everything until "
                                   "“tessera clean --force” removes it"),
                                 path, owner_name, error->message);
          *refused = g_strdup (_("its text is complete but not strict JSON (or not UTF-8): it holds everything "
                                 "until “tessera clean --force” removes it"));
        }
      else
        _tessera_file_warning (_("Ignoring lock file of %s: %s"), owner_name, error->message);
    }
  return lock_file;
}
