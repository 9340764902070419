/* tessera-json.c: bounded JSON parsing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <math.h>
#include <string.h>

/* json-glib recurses once per level of nesting: a file of a hundred
 * thousand '[' overflows the stack of whoever reads it. Count the depth
 * first, outside strings, in one pass. */
static gboolean
depth_fits (const char *data, gsize length)
{
  gboolean in_string = FALSE;
  int depth = 0;

  for (gsize i = 0; i < length; i++)
    {
      char c = data[i];

      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if (c == '[' || c == '{')
        {
          if (++depth > TESSERA_JSON_MAX_DEPTH)
            return FALSE;
        }
      else if (c == ']' || c == '}')
        depth--;
    }
  return TRUE;
}

/* json-glib reads a number too large for a double as infinity and writes
 * it back as `inf`; it writes a large round one (1e20) as `1e+20.0`:
 * neither is JSON. A file holding such a number is refused as it is read,
 * so that nothing Tessera writes or prints from it is broken. (Depth is
 * bounded already.) */
static gboolean
double_writable (double value)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];

  if (!isfinite (value))
    return FALSE;
  /* json-glib prints "%.17g" and adds ".0" when there is no point. */
  g_ascii_formatd (text, sizeof text, "%.17g", value);
  return strchr (text, '.') != NULL || strchr (text, 'e') == NULL;
}

/* And json-glib takes escapes JSON does not have ("\333", octal) into
 * strings that are not UTF-8, which it writes back as they are. With
 * @nulled, such a number is made null instead (and @nulled set). */
static gboolean
numbers_finite (JsonNode *node, gboolean *nulled)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_VALUE:
      if (json_node_get_value_type (node) == G_TYPE_STRING)
        return g_utf8_validate (json_node_get_string (node), -1, NULL);
      if (json_node_get_value_type (node) != G_TYPE_DOUBLE || double_writable (json_node_get_double (node)))
        return TRUE;
      if (nulled == NULL)
        return FALSE;
      json_node_init_null (node);
      *nulled = TRUE;
      return TRUE;
    case JSON_NODE_ARRAY:
      for (guint i = 0; i < json_array_get_length (json_node_get_array (node)); i++)
        if (!numbers_finite (json_array_get_element (json_node_get_array (node), i), nulled))
          return FALSE;
      return TRUE;
    case JSON_NODE_OBJECT:
      {
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;

        json_object_iter_init (&iter, json_node_get_object (node));
        while (json_object_iter_next (&iter, &name, &member))
          if (!g_utf8_validate (name, -1, NULL) || !numbers_finite (member, nulled))
            return FALSE;
        return TRUE;
      }
    case JSON_NODE_NULL:
    default:
      return TRUE;
    }
}

/* json_parser_load_from_data() into @parser, after the same check. */
static gboolean
json_load (JsonParser  *parser,
           const char  *data,
           gssize       length,
           gboolean    *nulled,
           GError     **error)
{
  if (!depth_fits (data, length < 0 ? strlen (data) : (gsize) length))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("JSON nested more than %d levels deep"), TESSERA_JSON_MAX_DEPTH);
      return FALSE;
    }
  if (!json_parser_load_from_data (parser, data, length, error))
    return FALSE;
  if (json_parser_get_root (parser) != NULL && !numbers_finite (json_parser_get_root (parser), nulled))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("JSON holds a number too large to read, or a string that is not UTF-8"));
      return FALSE;
    }
  return TRUE;
}

gboolean
_tessera_json_load (JsonParser  *parser,
                    const char  *data,
                    gssize       length,
                    GError     **error)
{
  return json_load (parser, data, length, NULL, error);
}

gboolean
_tessera_json_load_nulling_numbers (JsonParser  *parser,
                                    const char  *data,
                                    gssize       length,
                                    gboolean    *nulled,
                                    GError     **error)
{
  *nulled = FALSE;
  return json_load (parser, data, length, nulled, error);
}

/**
 * tessera_json_parse:
 * @data: (array length=length) (element-type guint8): the text
 * @length: its length in bytes, or -1 when it ends with a NUL
 * @error: return location for a #GError
 *
 * Parses JSON read from a shared folder, where a hostile co-user may have
 * written it: nesting deeper than %TESSERA_JSON_MAX_DEPTH is refused
 * before json-glib sees the text (it would recurse once per level), and so
 * is an empty document. Plugins reading their own files should use it too.
 *
 * Returns: (transfer full): the root node, or %NULL with @error set
 *   (%JSON_PARSER_ERROR, or %TESSERA_ERROR_INVALID_LOCK_FILE for nesting
 *   too deep or no content)
 */
JsonNode *
tessera_json_parse (const char  *data,
                    gssize       length,
                    GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();

  g_return_val_if_fail (data != NULL || length == 0, NULL);
  if (!_tessera_json_load (parser, data, length, error))
    return NULL;
  if (json_parser_get_root (parser) == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE, _("no JSON content"));
      return NULL;
    }
  return json_node_ref (json_parser_get_root (parser));
}

/**
 * tessera_json_read_file:
 * @path: a file in a shared folder
 * @error: return location for a #GError
 *
 * Reads and parses a JSON file of a folder a co-user may write, as Tessera
 * reads its own: a symbolic link is not followed, only a regular file is
 * read (a FIFO or device is refused without blocking), its size is bounded
 * and so is its nesting ([func@Tessera.json_parse]).
 *
 * Returns: (transfer full): the root node, or %NULL with @error set
 *   (`G_FILE_ERROR_NOENT` when it does not exist)
 */
JsonNode *
tessera_json_read_file (const char  *path,
                        GError     **error)
{
  g_autofree char *data = NULL;
  gsize length;

  g_return_val_if_fail (path != NULL, NULL);
  if (!_tessera_read_file_nofollow (path, &data, &length, NULL, error))
    return NULL;
  return tessera_json_parse (data, (gssize) length, error);
}
