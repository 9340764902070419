/* tessera-config-parse.c: a configuration file read: `[resource NAME]`
 * groups with `type=` and keys that are the type's GObject properties
 * (`path` standing for `lock-folder`), and `[tessera] requires=`.
 *
 * Every key is checked against its type when the file is read, so a wrong
 * key is reported at once, with the file, the group and the key; but a
 * file whose `[tessera] requires=` is above TESSERA_CONFIG_LEVEL is written
 * for a newer Tessera, and what this one does not know in it is ignored
 * with a warning (one per key), so that hosts running two versions can
 * share it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <inttypes.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tessera-config-entry.h"

/* GKeyFile merges a group written twice: find that in the text itself. */
static gboolean
check_duplicates (const char *file, const char *text, GError **error)
{
  g_autoptr(GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) keys = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *group = NULL;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);
      char *eq;

      if (*line == '#' || *line == '\0')
        continue;
      if (*line == '[' && line[strlen (line) - 1] == ']')
        {
          g_free (group);
          group = g_strndup (line + 1, strlen (line) - 2);
          if (!g_hash_table_add (groups, g_strdup (group)))
            {
              config_error (error, file, group, NULL, _("this group appears twice (duplicate resource)"));
              return FALSE;
            }
          g_hash_table_remove_all (keys);
          continue;
        }
      eq = strchr (line, '=');
      if (eq != NULL && group != NULL)
        {
          g_autofree char *key = g_strstrip (g_strndup (line, eq - line));
          if (!g_hash_table_add (keys, g_strdup (key)))
            {
              config_error (error, file, group, key, _("this key appears twice"));
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* What a file for a newer Tessera has that this one does not know:
 * ignored, with one warning. */
static void
ignore_newer (GPtrArray *warnings, const char *file, const char *group, const char *key, int requires)
{
  g_autofree char *where = key != NULL ? g_strdup_printf ("%s: [%s] %s", file, group, key)
                                       : g_strdup_printf ("%s: [%s]", file, group);

  g_ptr_array_add (warnings,
                   g_strdup_printf (_("%s: unknown to this Tessera (configuration level %d, the file requires %d): "
                                      "ignored"), where, TESSERA_CONFIG_LEVEL, requires));
}

/* The stores this Tessera knows, "folder, etcd": the folder store, and
 * those the plugins' manifests list. NULL when @store is one of them. */
static char *
dup_stores_unless_known (const char *store)
{
  g_autoptr(GPtrArray) plugins = tessera_registry_list_plugins (tessera_registry_get_default ());
  g_autoptr(GString) known = g_string_new ("folder");

  if (g_str_equal (store, "folder"))
    return NULL;
  for (guint i = 0; i < plugins->len; i++)
    {
      const char * const *stores = tessera_plugin_info_get_stores (g_ptr_array_index (plugins, i));

      for (guint j = 0; stores != NULL && stores[j] != NULL; j++)
        {
          if (g_str_equal (stores[j], store))
            return NULL;
          g_string_append_printf (known, ", %s", stores[j]);
        }
    }
  return g_string_free (g_steal_pointer (&known), FALSE);
}

/* What a file for a newer Tessera names that this one does not know,
 * a type or a store: the whole resource is left out, with one warning. */
static void
leave_out_newer (GPtrArray *warnings, const char *file, const char *group, const char *key, int requires)
{
  g_ptr_array_add (warnings,
                   g_strdup_printf (_("%s: [%s] %s: unknown to this Tessera (configuration level %d, the file "
                                      "requires %d): the resource is left out"), file, group, key,
                                    TESSERA_CONFIG_LEVEL, requires));
}

/* Checks a group's keys against its type, and keeps them for opening.
 * @requires: the file's `[tessera] requires=`; above this Tessera's
 * level, a key the type does not have is added to @warnings, not an
 * error, and a type or a store this Tessera does not know leaves the
 * resource out: %NULL without @error set. */
static Entry *
check_group (const char *file, GKeyFile *keyfile, const char *group, int requires, GPtrArray *warnings,
             GError **error)
{
  g_autoptr(GError) local = NULL;
  g_auto(GStrv) keys = NULL;
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) values = g_strv_builder_new ();
  g_autofree char *type = NULL;
  g_autofree char *path = NULL;
  const char *name = group + strlen ("resource ");
  GObjectClass *klass = NULL;
  GType gtype;
  Entry *entry;
  int mode = -1;
  gint64 gid = -1;

  if (!tessera_check_plugin_name (name, NULL))
    {
      config_error (error, file, group, NULL, _("a resource name is made of letters, digits, “_”, “.” and “-”"));
      return NULL;
    }
  type = g_key_file_get_string (keyfile, group, "type", NULL);
  if (type == NULL)
    {
      config_error (error, file, group, "type", _("missing: every resource needs a type"));
      return NULL;
    }
  gtype = tessera_registry_lookup_resource_type (tessera_registry_get_default (), type, &local);
  if (gtype == G_TYPE_INVALID && requires > TESSERA_CONFIG_LEVEL)
    {
      leave_out_newer (warnings, file, group, "type", requires);
      return NULL;
    }
  if (gtype == G_TYPE_INVALID)
    {
      config_error (error, file, group, "type", local->message);
      return NULL;
    }
  klass = g_type_class_ref (gtype);
  keys = g_key_file_get_keys (keyfile, group, NULL, NULL);
  for (guint i = 0; keys[i] != NULL; i++)
    {
      const char *key = keys[i];
      const char *property = g_str_equal (key, "path") ? "lock-folder" : key;
      g_autofree char *value = NULL;
      GParamSpec *pspec;
      GValue checked = G_VALUE_INIT;

      if (g_str_equal (key, "type"))
        continue;
      if (g_str_equal (key, "mode") || g_str_equal (key, "group"))
        {
          const char *wanted = check_sharing_key (keyfile, group, key, &mode, &gid);

          if (wanted != NULL)
            {
              config_error (error, file, group, key, wanted);
              g_type_class_unref (klass);
              return NULL;
            }
          continue;
        }
      /* The folder is "path", checked below: "lock-folder" would slip a
       * relative one past that check. */
      if (g_str_equal (key, "lock-folder"))
        {
          config_error (error, file, group, key, _("the folder of a resource is set with “path”"));
          g_type_class_unref (klass);
          return NULL;
        }
      pspec = g_object_class_find_property (klass, property);
      if ((pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE) || g_str_equal (property, "name")) &&
          requires > TESSERA_CONFIG_LEVEL)
        {
          ignore_newer (warnings, file, group, key, requires);
          continue;
        }
      if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE) || g_str_equal (property, "name"))
        {
          g_autofree char *message = g_strdup_printf (_("type “%s” has no such setting"), type);
          config_error (error, file, group, key, message);
          g_type_class_unref (klass);
          return NULL;
        }
      /* NULL for a value that is not UTF-8: refused, not read as "".
       * GLib's message quotes the value: not a secret's. */
      value = g_key_file_get_string (keyfile, group, key, &local);
      if (value == NULL)
        {
          config_error (error, file, group, key,
                        g_str_equal (key, "password") || g_str_equal (key, "endpoints")
                        ? _("its value (***, not shown) is not UTF-8") : local->message);
          g_type_class_unref (klass);
          return NULL;
        }
      /* -1 is how a setting such as a counter token's total says "not
       * given": written, it would set up a pool of nothing. So its range
       * is said from 0. */
      if (!tessera_settings_value_from_keyfile (keyfile, group, key, pspec, &checked, &local) ||
          (is_setup_setting (pspec) && g_value_get_int64 (&checked) < 0))
        {
          g_autofree char *range = is_setup_setting (pspec)
                                   ? g_strdup_printf (_("must be an integer from 0 to %" PRId64),
                                                      G_PARAM_SPEC_INT64 (pspec)->maximum)
                                   : NULL;

          if (G_IS_VALUE (&checked))
            g_value_unset (&checked);
          config_error (error, file, group, key, range != NULL ? range : local->message);
          g_type_class_unref (klass);
          return NULL;
        }
      g_value_unset (&checked);
      if (g_str_equal (key, "store"))
        {
          g_autofree char *known = dup_stores_unless_known (value);

          if (known != NULL && requires > TESSERA_CONFIG_LEVEL)
            {
              leave_out_newer (warnings, file, group, key, requires);
              g_type_class_unref (klass);
              return NULL;
            }
          if (known != NULL)
            {
              /* Translators: a store= value, then the stores known: "folder, etcd" */
              g_autofree char *message = g_strdup_printf (_("no store “%s” in this Tessera (it knows %s)"), value,
                                                          known);

              config_error (error, file, group, key, message);
              g_type_class_unref (klass);
              return NULL;
            }
        }
      if (g_str_equal (key, "path"))
        {
          g_free (path);
          path = g_steal_pointer (&value);
        }
      else
        {
          g_strv_builder_add (names, property);
          g_strv_builder_add (values, value);
        }
    }
  g_type_class_unref (klass);
  if (path == NULL)
    {
      g_autofree char *state = tessera_config_dup_state_dir ();
      path = g_build_filename (state, name, NULL);
    }
  else if (!g_path_is_absolute (path))
    {
      config_error (error, file, group, "path", _("must be an absolute path"));
      return NULL;
    }
  g_strv_builder_add (names, "lock-folder");
  g_strv_builder_add (values, path);

  entry = g_new0 (Entry, 1);
  entry->name = g_strdup (name);
  entry->type = g_steal_pointer (&type);
  entry->keys = g_strv_builder_end (names);
  entry->values = g_strv_builder_end (values);
  entry->mode = mode;
  entry->gid = gid;
  entry->sharing_set = mode >= 0 || gid >= 0;
  return entry;
}

/* One folder is one pool: two resources on it, whatever the paths (a
 * "..", a trailing "/", a symbolic link), would count it twice. */
static gboolean
check_folders (TesseraConfig *self, const char *file, GError **error)
{
  for (guint j = 1; j < self->entries->len; j++)
    {
      Entry *later = g_ptr_array_index (self->entries, j);
      g_autofree char *later_path = g_canonicalize_filename (entry_get (later, "lock-folder"), NULL);
      GStatBuf later_st;
      gboolean later_exists = g_stat (later_path, &later_st) == 0;

      for (guint i = 0; i < j; i++)
        {
          Entry *earlier = g_ptr_array_index (self->entries, i);
          g_autofree char *earlier_path = g_canonicalize_filename (entry_get (earlier, "lock-folder"), NULL);
          GStatBuf earlier_st;

          if (g_str_equal (earlier_path, later_path) ||
              (later_exists && g_stat (earlier_path, &earlier_st) == 0 &&
               earlier_st.st_dev == later_st.st_dev && earlier_st.st_ino == later_st.st_ino))
            {
              g_autofree char *group = g_strdup_printf ("resource %s", later->name);
              g_autofree char *message = g_strdup_printf (_("the same folder as [resource %s]: one pool, counted once"),
                                                          earlier->name);
              config_error (error, file, group, "path", message);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* The `[tessera]` group: `requires=N`, the configuration level the file
 * is written for (1 to 2^31-1). Sets @requires (0 without it). Its other
 * keys are errors, unless the file requires a newer level. */
static gboolean
check_tessera_group (const char *file, GKeyFile *keyfile, int *requires, GPtrArray *warnings, GError **error)
{
  g_auto(GStrv) keys = NULL;
  g_autofree char *value = NULL;
  guint64 number;

  *requires = 0;
  if (!g_key_file_has_group (keyfile, "tessera"))
    return TRUE;
  value = g_key_file_get_string (keyfile, "tessera", "requires", NULL);
  if (value != NULL && !g_ascii_string_to_unsigned (value, 10, 1, G_MAXINT, &number, NULL))
    {
      config_error (error, file, "tessera", "requires", _("the configuration level the file needs, an integer from 1"));
      return FALSE;
    }
  if (value != NULL)
    *requires = (int) number;
  keys = g_key_file_get_keys (keyfile, "tessera", NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      if (g_str_equal (keys[i], "requires"))
        continue;
      if (*requires > TESSERA_CONFIG_LEVEL)
        ignore_newer (warnings, file, "tessera", keys[i], *requires);
      else
        {
          config_error (error, file, "tessera", keys[i], _("unknown key: [tessera] has only “requires”"));
          return FALSE;
        }
    }
  return TRUE;
}

/* @file names the configuration in messages; @text is its content. */
TesseraConfig *
tessera_config_load_from_data (const char *file, const char *text, gsize length, GError **error)
{
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(TesseraConfig) self = config_new (file);
  g_autoptr(GError) local = NULL;
  g_auto(GStrv) groups = NULL;
  int requires = 0;

  /* The duplicate check reads the text as a C string: a NUL byte would
   * hide what follows it from that check, not from GKeyFile. */
  if (memchr (text, '\0', length) != NULL)
    {
      config_error (error, file, NULL, NULL, _("the file contains a NUL byte"));
      return NULL;
    }
  if (!g_key_file_load_from_data (keyfile, text, length, G_KEY_FILE_NONE, &local))
    {
      config_error (error, file, NULL, NULL, local->message);
      return NULL;
    }
  if (!check_duplicates (file, text, error))
    return NULL;
  if (!check_tessera_group (file, keyfile, &requires, self->warnings, error))
    return NULL;
  groups = g_key_file_get_groups (keyfile, NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      Entry *entry;

      if (g_str_equal (groups[i], "tessera"))
        continue;
      if (!g_str_has_prefix (groups[i], "resource ") && requires > TESSERA_CONFIG_LEVEL)
        {
          ignore_newer (self->warnings, file, groups[i], NULL, requires);
          continue;
        }
      if (!g_str_has_prefix (groups[i], "resource "))
        {
          config_error (error, file, groups[i], NULL, _("unknown group: resources are [resource NAME]"));
          return NULL;
        }
      entry = check_group (file, keyfile, groups[i], requires, self->warnings, &local);
      if (entry == NULL && local == NULL)
        continue;   /* a resource of a newer Tessera, left out */
      if (entry == NULL)
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      g_ptr_array_add (self->entries, entry);
    }
  if (!check_folders (self, file, error))
    return NULL;
  return g_steal_pointer (&self);
}
