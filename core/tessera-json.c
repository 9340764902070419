/* tessera-json.c: bounded JSON parsing
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-json-private.h"
#include "tessera-private.h"

#include <math.h>
#include <string.h>
#include <tessera/tessera.h>

/* What reaches json-glib is strict RFC 8259 JSON, checked in one pass
 * that also bounds its nesting. json-glib 1.6 reads more than JSON (C and
 * C++ comments, single-quoted strings, 01, 0x10, .5, escapes such as \x41,
 * raw control characters in strings) and recurses once per level: a depth
 * guard that knew only JSON's strings took the quote in a comment or in a
 * single-quoted string for the start of a string, and let a comment
 * holding '"' then 200 000 '[' through to overflow the stack of every
 * reader. This check walks JSON's grammar with a stack of its own, so that
 * nothing else is parsed. It also refuses what json-glib would read as
 * something else than the text says: an integer beyond 64 bits (it wraps),
 * "\u0000" (the string ends there), a lone surrogate, text that is not
 * UTF-8. White space alone passes: json-glib makes no root of it, and each
 * caller says what that means. */
typedef enum
{
  STRICT_OK,
  STRICT_NOT_JSON,
  STRICT_TOO_DEEP,
  STRICT_UNREPRESENTABLE,
} StrictResult;

typedef struct
{
  const guchar *p;
  const guchar *end;
  gboolean *wrapped;   /* NULL: an integer beyond 64 bits is refused; else set */
  gboolean ran_off;    /* stopped in a token that the end of the text cut */
} Scan;

static inline gboolean
is_space (guchar c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void
skip_space (Scan *s)
{
  while (s->p < s->end && is_space (*s->p))
    s->p++;
}

static gboolean
is_digit (guchar c)
{
  return c >= '0' && c <= '9';
}

/* Whether the bytes left are the start of @token (the text ends in it). */
static gboolean
ends_in (Scan *s, const char *token)
{
  gsize left = s->end - s->p;

  if (left >= strlen (token) || memcmp (s->p, token, left) != 0)
    return FALSE;
  s->ran_off = TRUE;
  return TRUE;
}

/* Four hex digits of a \u escape, at s->p. */
static gboolean
scan_hex4 (Scan *s, guint *unit)
{
  *unit = 0;
  if (s->end - s->p < 4)
    {
      gboolean hex = TRUE;

      for (const guchar *q = s->p; q < s->end; q++)
        hex &= g_ascii_isxdigit (*q);
      s->ran_off = hex;
      return FALSE;
    }
  for (int i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (s->p[i]);
      if (digit < 0)
        return FALSE;
      *unit = *unit * 16 + (guint) digit;
    }
  s->p += 4;
  return TRUE;
}

/* A string, s->p at its opening quote. */
static StrictResult
scan_string (Scan *s)
{
  const guchar *run = ++s->p;   /* the bytes between escapes, UTF-8 */

  for (;;)
    {
      guchar c;

      if (s->p >= s->end)
        {
          /* Cut short, unless what it holds is not UTF-8 already. */
          const char *valid_end;

          if (!g_utf8_validate_len ((const char *) run, s->p - run, &valid_end) &&
              g_utf8_get_char_validated (valid_end, (const char *) s->p - valid_end) != (gunichar) -2)
            return STRICT_UNREPRESENTABLE;
          return STRICT_NOT_JSON;
        }
      c = *s->p;
      if (c == '"' || c == '\\')
        {
          if (!g_utf8_validate_len ((const char *) run, s->p - run, NULL))
            return STRICT_UNREPRESENTABLE;
          s->p++;
          if (c == '"')
            return STRICT_OK;
          if (s->p >= s->end)
            return STRICT_NOT_JSON;
          c = *s->p++;
          if (c == 'u')
            {
              guint unit, low;

              if (!scan_hex4 (s, &unit))
                return STRICT_NOT_JSON;
              if (unit == 0 || (unit >= 0xdc00 && unit <= 0xdfff))
                return STRICT_UNREPRESENTABLE;
              if (unit >= 0xd800 && unit <= 0xdbff)
                {
                  /* A high surrogate: only with its low one. */
                  if (s->end - s->p < 2 || s->p[0] != '\\' || s->p[1] != 'u')
                    return ends_in (s, "\\u") ? STRICT_NOT_JSON : STRICT_UNREPRESENTABLE;
                  s->p += 2;
                  if (!scan_hex4 (s, &low))
                    return STRICT_NOT_JSON;
                  if (low < 0xdc00 || low > 0xdfff)
                    return STRICT_UNREPRESENTABLE;
                }
            }
          else if (strchr ("\"\\/bfnrt", c) == NULL || c == '\0')
            return STRICT_NOT_JSON;
          run = s->p;
        }
      else if (c < 0x20)
        return STRICT_NOT_JSON;
      else
        s->p++;
    }
}

/* A number, s->p at its first byte ('-' or a digit). An integer (no
 * fraction, no exponent) must fit in 64 bits, as json-glib reads it. */
static StrictResult
scan_number (Scan *s)
{
  static const char max[] = "9223372036854775807";
  gboolean negative = FALSE;
  const guchar *digits;
  gsize n;

  if (*s->p == '-')
    {
      negative = TRUE;
      s->p++;
    }
  digits = s->p;
  if (s->p >= s->end || !is_digit (*s->p))
    return STRICT_NOT_JSON;
  if (*s->p == '0')
    s->p++;
  else
    while (s->p < s->end && is_digit (*s->p))
      s->p++;
  n = s->p - digits;
  if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
    {
      /* A double: its value is checked once read (numbers_finite). */
      if (*s->p == '.')
        {
          s->p++;
          if (s->p >= s->end || !is_digit (*s->p))
            return STRICT_NOT_JSON;
          while (s->p < s->end && is_digit (*s->p))
            s->p++;
        }
      if (s->p < s->end && (*s->p == 'e' || *s->p == 'E'))
        {
          s->p++;
          if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
          if (s->p >= s->end || !is_digit (*s->p))
            return STRICT_NOT_JSON;
          while (s->p < s->end && is_digit (*s->p))
            s->p++;
        }
      return STRICT_OK;
    }
  /* G_MININT64's digits are G_MAXINT64's, the last one more. */
  if (n > sizeof max - 1 ||
      (n == sizeof max - 1 &&
       (memcmp (digits, max, n - 1) > 0 ||
        (memcmp (digits, max, n - 1) == 0 && digits[n - 1] > (guchar) (max[n - 1] + (negative ? 1 : 0))))))
    {
      if (s->wrapped == NULL)
        return STRICT_UNREPRESENTABLE;
      *s->wrapped = TRUE;
    }
  return STRICT_OK;
}

static gboolean
scan_word (Scan *s, const char *word)
{
  gsize n = strlen (word);

  if ((gsize) (s->end - s->p) < n || memcmp (s->p, word, n) != 0)
    return FALSE;
  s->p += n;
  return TRUE;
}

/* An object's member name and its colon, s->p at the name (spaces
 * skipped before). */
static StrictResult
scan_name (Scan *s)
{
  StrictResult result;

  if (s->p >= s->end || *s->p != '"')
    return STRICT_NOT_JSON;
  if ((result = scan_string (s)) != STRICT_OK)
    return result;
  skip_space (s);
  if (s->p >= s->end || *s->p != ':')
    return STRICT_NOT_JSON;
  s->p++;
  return STRICT_OK;
}

/* The whole text, one value with white space around it (or white space
 * alone); @where: the byte at which it stopped being strict JSON.
 * @wrapped: NULL to refuse an integer beyond 64 bits, else set when the
 * text holds one (which json-glib reads wrapped). */
static StrictResult
scan_strict (const char *data, gsize length, gsize *where, gboolean *wrapped, gboolean *ran_off)
{
  /* The closer of each level open: ']' or '}'. */
  char closers[TESSERA_JSON_MAX_DEPTH];
  int depth = 0;
  Scan s = { (const guchar *) data, (const guchar *) data + length, wrapped, FALSE };
  StrictResult result = STRICT_OK;

  if (ran_off != NULL)
    *ran_off = FALSE;
  skip_space (&s);
  if (s.p == s.end)
    return STRICT_OK;
  for (;;)
    {
      /* A value. */
      skip_space (&s);
      if (s.p >= s.end)
        result = STRICT_NOT_JSON;
      else if (*s.p == '[' || *s.p == '{')
        {
          gboolean object = *s.p == '{';

          if (depth == TESSERA_JSON_MAX_DEPTH)
            {
              result = STRICT_TOO_DEEP;
              break;
            }
          closers[depth++] = object ? '}' : ']';
          s.p++;
          skip_space (&s);
          if (s.p < s.end && *s.p == closers[depth - 1])
            {
              s.p++;
              depth--;
            }
          else
            {
              if (object && (result = scan_name (&s)) != STRICT_OK)
                break;
              continue;   /* to its first value */
            }
        }
      else if (*s.p == '"')
        result = scan_string (&s);
      else if (*s.p == '-' || is_digit (*s.p))
        result = scan_number (&s);
      else if (!scan_word (&s, "true") && !scan_word (&s, "false") && !scan_word (&s, "null"))
        {
          /* Cut short in one of them? */
          (void) (ends_in (&s, "true") || ends_in (&s, "false") || ends_in (&s, "null"));
          result = STRICT_NOT_JSON;
        }
      if (result != STRICT_OK)
        break;

      /* After a value: the end of its arrays and objects, then either the
       * next value of one of them or the end of the text. */
      for (;;)
        {
          skip_space (&s);
          if (depth == 0)
            {
              if (s.p != s.end)
                result = STRICT_NOT_JSON;
              *where = s.p - (const guchar *) data;
              return result;   /* the top-level value closed: not cut short */
            }
          if (s.p >= s.end)
            result = STRICT_NOT_JSON;
          else if (*s.p == closers[depth - 1])
            {
              s.p++;
              depth--;
              continue;
            }
          else if (*s.p == ',')
            {
              s.p++;
              if (closers[depth - 1] == '}')
                {
                  skip_space (&s);
                  result = scan_name (&s);
                }
            }
          else
            result = STRICT_NOT_JSON;
          break;
        }
      if (result != STRICT_OK)
        break;
    }
  *where = s.p - (const guchar *) data;
  if (ran_off != NULL)
    *ran_off = result == STRICT_NOT_JSON && (s.p == s.end || s.ran_off);
  return result;
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
 * strings that are not UTF-8, which it writes back as they are (the
 * strict check refuses them now; this one stays behind it). With
 * @nulled, a number that cannot be written back is made null instead
 * (and @nulled set). */
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

/* json_parser_load_from_data() into @parser, of strict JSON only. */
static gboolean
json_load (JsonParser  *parser,
           const char  *data,
           gssize       length,
           gboolean    *nulled,
           GError     **error)
{
  gsize where = 0;
  gboolean wrapped = FALSE;

  switch (scan_strict (data, length < 0 ? strlen (data) : (gsize) length, &where, nulled != NULL ? &wrapped : NULL, NULL))
    {
    case STRICT_OK:
      break;
    case STRICT_TOO_DEEP:
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("JSON nested more than %d levels deep"), TESSERA_JSON_MAX_DEPTH);
      return FALSE;
    case STRICT_UNREPRESENTABLE:
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("JSON holds a number too large to read, or a string that is not UTF-8"));
      return FALSE;
    case STRICT_NOT_JSON:
    default:
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("not strict JSON (RFC 8259) at byte %lu"), (unsigned long) where);
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
  if (wrapped)
    *nulled = TRUE;
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

gboolean
_tessera_json_is_cut_short (const char *data,
                            gsize       length)
{
  gsize where = 0;
  gboolean wrapped = FALSE, ran_off = FALSE;

  scan_strict (data, length, &where, &wrapped, &ran_off);
  return ran_off;
}

/**
 * tessera_json_parse:
 * @data: (array length=length) (element-type guint8): the text
 * @length: its length in bytes, or -1 when it ends with a NUL
 * @error: return location for a #GError
 *
 * Parses JSON read from a shared folder, where a hostile co-user may have
 * written it: only strict RFC 8259 JSON reaches json-glib (which also
 * reads comments and single-quoted strings), and nesting deeper than
 * %TESSERA_JSON_MAX_DEPTH is refused before json-glib sees the text (it
 * would recurse once per level), and so is an empty document, an integer
 * beyond 64 bits and a string that is not UTF-8 or holds "\u0000".
 * Plugins reading their own files should use it too.
 *
 * Returns: (transfer full): the root node, or %NULL with @error set
 *   (%JSON_PARSER_ERROR, or %TESSERA_ERROR_INVALID_LOCK_FILE for text
 *   that is not strict JSON, nesting too deep or no content)
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
