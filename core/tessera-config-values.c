/* tessera-config-values.c: a configuration value, as GKeyFile reads it,
 * turned into the value of a GObject property (public: the `tessera`
 * command checks a configuration file key by key with it, and `tessera
 * set` a value), and a resource made from such settings (private: the
 * registry's tessera_registry_create_resource()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-config-values-private.h"
#include "tessera-private.h"

#include <gio/gio.h>
#include <inttypes.h>
#include <string.h>

/* Reads @key with the GKeyFile getter of the property's type. %FALSE when
 * the text does not fit that type; *@supported is %FALSE when the type
 * cannot be configured at all. */
static gboolean
read_typed (GKeyFile    *keyfile,
            const char  *group,
            const char  *key,
            GParamSpec  *pspec,
            GValue      *value,
            gboolean    *supported)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_autoptr(GError) local = NULL;

  *supported = TRUE;
  if (type == G_TYPE_STRING)
    {
      char *text = g_key_file_get_string (keyfile, group, key, &local);
      if (text != NULL)
        g_value_take_string (value, text);
    }
  else if (type == G_TYPE_BOOLEAN)
    g_value_set_boolean (value, g_key_file_get_boolean (keyfile, group, key, &local));
  else if (type == G_TYPE_INT || type == G_TYPE_INT64 || type == G_TYPE_LONG || type == G_TYPE_UINT)
    {
      gint64 v = g_key_file_get_int64 (keyfile, group, key, &local);

      /* The getter saturates on overflow: the unsigned reading of the same
       * text tells a real extreme from a saturated one. */
      if (local == NULL && (v == G_MAXINT64 || v == G_MININT64) &&
          (gint64) g_key_file_get_uint64 (keyfile, group, key, NULL) != v)
        return FALSE;
      if (local != NULL)
        return FALSE;
      if (type == G_TYPE_INT64)
        g_value_set_int64 (value, v);
      else if (type == G_TYPE_LONG)
        g_value_set_long (value, (glong) v);
      else if (type == G_TYPE_INT)
        {
          g_value_set_int (value, (int) CLAMP (v, G_MININT, G_MAXINT));
          return v >= G_MININT && v <= G_MAXINT;
        }
      else
        {
          g_value_set_uint (value, (guint) CLAMP (v, 0, G_MAXUINT));
          return v >= 0 && v <= G_MAXUINT;
        }
    }
  else if (type == G_TYPE_UINT64 || type == G_TYPE_ULONG)
    {
      guint64 v = g_key_file_get_uint64 (keyfile, group, key, &local);

      /* The getter reads "-1" as the largest value: a negative is refused. */
      if (local == NULL && g_key_file_get_int64 (keyfile, group, key, NULL) < 0)
        return FALSE;
      if (type == G_TYPE_UINT64)
        g_value_set_uint64 (value, v);
      else
        g_value_set_ulong (value, (gulong) v);
    }
  else if (type == G_TYPE_DOUBLE)
    g_value_set_double (value, g_key_file_get_double (keyfile, group, key, &local));
  else if (type == G_TYPE_FLOAT)
    g_value_set_float (value, (float) g_key_file_get_double (keyfile, group, key, &local));
  else if (type == G_TYPE_STRV)
    {
      g_auto(GStrv) parts = g_key_file_get_string_list (keyfile, group, key, NULL, &local);
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

      /* "a; b;" is two items: blanks around items and empty items go. */
      for (guint i = 0; parts != NULL && parts[i] != NULL; i++)
        if (*g_strstrip (parts[i]) != '\0')
          g_strv_builder_add (builder, parts[i]);
      g_value_take_boxed (value, g_strv_builder_end (builder));
    }
  else if (G_TYPE_IS_ENUM (type))
    {
      g_autofree char *text = g_key_file_get_string (keyfile, group, key, &local);
      GEnumClass *klass;
      GEnumValue *v;

      if (text == NULL)
        return FALSE;
      klass = g_type_class_ref (type);
      v = g_enum_get_value_by_nick (klass, text);
      if (v == NULL)
        v = g_enum_get_value_by_name (klass, text);
      if (v != NULL)
        g_value_set_enum (value, v->value);
      g_type_class_unref (klass);
      return v != NULL;
    }
  else
    *supported = FALSE;
  return *supported && local == NULL;
}

/* "an integer from MIN to MAX", or "…MIN or more" when @unbounded. */
static char *
integer_range (gint64 minimum, gint64 maximum, gboolean unbounded)
{
  return unbounded ? g_strdup_printf (_("an integer, %" PRId64 " or more"), minimum)
                   : g_strdup_printf (_("an integer from %" PRId64 " to %" PRId64), minimum, maximum);
}

/* What a value of @pspec must be, for a message: its range for a number
 * (an upper end of the type's own maximum is left unsaid), else its
 * type's name. */
static char *
expected_text (GParamSpec *pspec)
{
  if (G_IS_PARAM_SPEC_INT64 (pspec))
    {
      GParamSpecInt64 *p = G_PARAM_SPEC_INT64 (pspec);
      return integer_range (p->minimum, p->maximum, p->maximum == G_MAXINT64);
    }
  if (G_IS_PARAM_SPEC_INT (pspec))
    {
      GParamSpecInt *p = G_PARAM_SPEC_INT (pspec);
      return integer_range (p->minimum, p->maximum, p->maximum == G_MAXINT);
    }
  if (G_IS_PARAM_SPEC_UINT (pspec))
    {
      GParamSpecUInt *p = G_PARAM_SPEC_UINT (pspec);
      return integer_range (p->minimum, p->maximum, p->maximum == G_MAXUINT);
    }
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    {
      GParamSpecDouble *p = G_PARAM_SPEC_DOUBLE (pspec);
      return p->maximum >= G_MAXDOUBLE ? g_strdup_printf (_("a number, %g or more"), p->minimum)
                                       : g_strdup_printf (_("a number from %g to %g"), p->minimum, p->maximum);
    }
  if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    return g_strdup (_("true or false"));
  return g_strdup (g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
}

/* Names @shown in messages, or the key's text when it is %NULL. */
static gboolean
convert (GKeyFile    *keyfile,
         const char  *group,
         const char  *key,
         GParamSpec  *pspec,
         const char  *shown,
         GValue      *value,
         GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  gboolean supported;
  gboolean ok;

  g_value_init (value, type);
  ok = read_typed (keyfile, group, key, pspec, value, &supported);
  if (!supported)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("Setting “%s” has a type (%s) that cannot be configured"),
                   g_param_spec_get_name (pspec), g_type_name (type));
      g_value_unset (value);
      return FALSE;
    }
  /* Within the property's own range, too. */
  if (!ok || g_param_value_validate (pspec, value))
    {
      g_autofree char *text = shown ? NULL : g_key_file_get_value (keyfile, group, key, NULL);
      g_autofree char *expected = expected_text (pspec);

      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a valid value for “%s” (expected: %s)"),
                   shown ? shown : text ? text : "", g_param_spec_get_name (pspec), expected);
      g_value_unset (value);
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_settings_value_from_keyfile:
 * @keyfile: a key file
 * @group: a group of @keyfile
 * @key: a key of @group
 * @pspec: the property the key sets
 * @value: (out caller-allocates): an unset value, initialized to
 *   @pspec's type and set when this succeeds
 * @error: return location for a #GError
 *
 * Reads @key of @group as a value of @pspec's property, the way a
 * `[resource NAME]` group of Tessera's configuration and
 * [method@Tessera.Registry.create_resource] read a setting: GKeyFile's
 * syntax for each type (integers in decimal, doubles in C syntax,
 * booleans as true/false or 1/0, string lists separated by `;`), enums by
 * nick or name, and within the property's own range.
 *
 * Returns: whether @value was set; else
 *   %TESSERA_ERROR_INVALID_CONFIGURATION saying what the value must be,
 *   and @value is left unset
 */
gboolean
tessera_settings_value_from_keyfile (GKeyFile    *keyfile,
                                     const char  *group,
                                     const char  *key,
                                     GParamSpec  *pspec,
                                     GValue      *value,
                                     GError     **error)
{
  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec) && keyfile != NULL, FALSE);
  return convert (keyfile, group, key, pspec, NULL, value, error);
}

/**
 * tessera_settings_value_from_string:
 * @pspec: the property the setting sets
 * @text: the setting's value, as a key file's string holds it (unescaped)
 * @value: (out caller-allocates): an unset value, initialized to
 *   @pspec's type and set when this succeeds
 * @error: return location for a #GError
 *
 * Reads @text as a value of @pspec's property, as
 * [func@Tessera.settings_value_from_keyfile] reads a key file's key.
 *
 * Returns: whether @value was set; else
 *   %TESSERA_ERROR_INVALID_CONFIGURATION saying what the value must be,
 *   and @value is left unset
 */
gboolean
tessera_settings_value_from_string (GParamSpec  *pspec,
                                    const char  *text,
                                    GValue      *value,
                                    GError     **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();

  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec) && text != NULL, FALSE);
  g_key_file_set_string (keyfile, "setting", "value", text);
  return convert (keyfile, "setting", "value", pspec, text, value, error);
}

/*
 * A resource of @type (named @type_name in messages) called @name, each of
 * @keys a writable property of it (not "name") set from the text in
 * @values, then initialized when it is a GInitable.
 */
TesseraDynamicResource *
_tessera_config_values_new_resource (GType                type,
                                     const char          *type_name,
                                     const char          *name,
                                     const char * const  *keys,
                                     const char * const  *values,
                                     GError             **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) gvalues = g_array_new (FALSE, TRUE, sizeof (GValue));
  GObjectClass *klass;
  GObject *object = NULL;
  guint n = keys ? g_strv_length ((char **) keys) : 0;

  g_array_set_clear_func (gvalues, (GDestroyNotify) g_value_unset);
  klass = g_type_class_ref (type);
  g_ptr_array_add (names, (gpointer) "name");
  g_array_set_size (gvalues, 1);
  g_value_init (&g_array_index (gvalues, GValue, 0), G_TYPE_STRING);
  g_value_set_string (&g_array_index (gvalues, GValue, 0), name);
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, keys[i]);
      GValue value = G_VALUE_INIT;

      if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE) || strcmp (keys[i], "name") == 0)
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("Resource type “%s” has no setting “%s”"), type_name, keys[i]);
          goto out;
        }
      /* Two spellings (total, lock_folder / lock-folder) reach one property. */
      if (g_ptr_array_find (names, pspec->name, NULL))
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("Setting “%s” of resource “%s” is given twice"), keys[i], name);
          goto out;
        }
      if (!tessera_settings_value_from_string (pspec, values[i], &value, error))
        goto out;
      g_ptr_array_add (names, (gpointer) pspec->name);
      g_array_append_val (gvalues, value);
    }
  object = g_object_new_with_properties (type, names->len, (const char **) names->pdata,
                                         (const GValue *) gvalues->data);
  if (G_IS_INITABLE (object) && !g_initable_init (G_INITABLE (object), NULL, error))
    g_clear_object (&object);
out:
  g_type_class_unref (klass);
  return object ? TESSERA_DYNAMIC_RESOURCE (object) : NULL;
}
