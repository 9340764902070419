/* tessera-plugin-info.c: the plugin manifest (`*.plugin`), read without
 * loading the plugin's code (libpeas's `PeasPluginInfo`)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-plugin-info-private.h"
#include "tessera-plugin-module-private.h"
#include "tessera-private.h"

#include <string.h>

/**
 * TesseraPluginInfo:
 *
 * What a plugin manifest (`*.plugin`) says, read without loading the
 * module:
 *
 * ```
 * [Plugin]
 * Module=countertoken
 * Name=Counter tokens
 * ResourceTypes=countertoken
 * Classes=tessera.countertoken:CounterTokenLock;experimaestro.tokens:CounterTokenLock
 * ```
 *
 * The module file is `lib<Module>.so` next to the manifest; its entry point
 * is `tessera_<Module>_register_types (GTypeModule *)` (with `-` and `.`
 * turned into `_`), which registers its types with
 * [func@Tessera.Registry.register_resource_type] and
 * [func@Tessera.DynamicDependencyLock.register_class].
 *
 * A module may also provide stores, where pools live (`Stores=etcd`):
 * that part of the interface is private to the project for now.
 */
struct _TesseraPluginInfo
{
  GObject parent_instance;

  char *module;
  /* Localised when first asked (only `tessera plugins` shows it): looking
   * up the user's languages, which has GLib read locale.alias, was half
   * of reading a manifest on every command's way to its type. */
  char *name;
  GKeyFile *keyfile;      /* the manifest as read, for the name */
  char *manifest_path;
  char *module_path;
  GStrv resource_types;
  GStrv classes;
  GStrv process_types;
  GStrv stores;
};

G_DEFINE_FINAL_TYPE (TesseraPluginInfo, tessera_plugin_info, G_TYPE_OBJECT)

static void
tessera_plugin_info_finalize (GObject *object)
{
  TesseraPluginInfo *self = TESSERA_PLUGIN_INFO (object);

  g_free (self->module);
  g_free (self->name);
  g_clear_pointer (&self->keyfile, g_key_file_unref);
  g_free (self->manifest_path);
  g_free (self->module_path);
  g_strfreev (self->resource_types);
  g_strfreev (self->classes);
  g_strfreev (self->process_types);
  g_strfreev (self->stores);
  G_OBJECT_CLASS (tessera_plugin_info_parent_class)->finalize (object);
}

static void
tessera_plugin_info_class_init (TesseraPluginInfoClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_plugin_info_finalize;
}

static void
tessera_plugin_info_init (TesseraPluginInfo *self)
{
}

/**
 * tessera_plugin_info_get_module:
 * @self: a plugin
 *
 * The plugin's module name.
 *
 * Returns: the manifest's `Module`
 */
const char *
tessera_plugin_info_get_module (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return self->module;
}

/**
 * tessera_plugin_info_get_name:
 * @self: a plugin
 *
 * The plugin's name for people.
 *
 * Returns: the manifest's human-readable `Name`
 */
const char *
tessera_plugin_info_get_name (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  /* Made without a manifest (g_object_new): no name to read. */
  if (self->keyfile == NULL)
    return self->module;
  if (g_once_init_enter (&self->name))
    {
      char *name = g_key_file_get_locale_string (self->keyfile, "Plugin", "Name", NULL, NULL);

      g_once_init_leave (&self->name, name != NULL ? name : g_strdup (self->module));
    }
  return self->name;
}

/**
 * tessera_plugin_info_get_manifest_path:
 * @self: a plugin
 *
 * Where the plugin's manifest was found.
 *
 * Returns: the manifest file
 */
const char *
tessera_plugin_info_get_manifest_path (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return self->manifest_path;
}

/**
 * tessera_plugin_info_get_module_path:
 * @self: a plugin
 *
 * Where the plugin's shared module is: `lib<Module>.so` next to the
 * manifest.
 *
 * Returns: the shared module loaded for this plugin
 */
const char *
tessera_plugin_info_get_module_path (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return self->module_path;
}

/**
 * tessera_plugin_info_get_resource_types:
 * @self: a plugin
 *
 * The manifest's `ResourceTypes`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the resource type
 *   names the plugin provides
 */
const char * const *
tessera_plugin_info_get_resource_types (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->resource_types;
}

/**
 * tessera_plugin_info_get_classes:
 * @self: a plugin
 *
 * The manifest's `Classes`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the `module:class`
 *   pairs of locks.json the plugin understands
 */
const char * const *
tessera_plugin_info_get_classes (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->classes;
}

/**
 * tessera_plugin_info_get_process_types:
 * @self: a plugin
 *
 * The manifest's `ProcessTypes`.
 *
 * Returns: (transfer none) (array zero-terminated=1): the process spec
 *   types the plugin judges
 */
const char * const *
tessera_plugin_info_get_process_types (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->process_types;
}

/**
 * tessera_plugin_info_is_loaded:
 * @self: a plugin
 *
 * Whether the plugin's module was loaded.
 *
 * Returns: whether the plugin's module is loaded in this process
 */
gboolean
tessera_plugin_info_is_loaded (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), FALSE);
  return _tessera_plugin_module_is_loaded (self->module);
}

/**
 * tessera_check_plugin_name:
 * @name: a module, class or resource type name from data
 * @error: return location for a #GError
 *
 * Checks a name that came from data (a key file's `type=`, a
 * `locks.json` entry) before it is looked up in the manifests.
 *
 * Returns: %TRUE when @name is made of `[A-Za-z0-9_.-]` only, is not
 *   empty, has no `..` and does not start with a dot; else %FALSE with
 *   %TESSERA_ERROR_INVALID_NAME
 */
gboolean
tessera_check_plugin_name (const char  *name,
                           GError     **error)
{
  if (name == NULL || *name == '\0' || *name == '.' || strlen (name) > 200 || strstr (name, "..") != NULL)
    goto bad;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '.' && *p != '-')
      goto bad;
  return TRUE;
bad:
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
               _("“%s” is not an acceptable plugin, type or class name"), name ? name : "");
  return FALSE;
}

static GStrv
checked_list (GKeyFile *keyfile, const char *key, gboolean pairs, const char *path)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) values = g_key_file_get_string_list (keyfile, "Plugin", key, NULL, NULL);

  for (guint i = 0; values != NULL && values[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) parts = pairs ? g_strsplit (values[i], ":", 2) : NULL;
      gboolean ok = pairs
        ? (g_strv_length (parts) == 2 && tessera_check_plugin_name (parts[0], &error) &&
           tessera_check_plugin_name (parts[1], &error))
        : tessera_check_plugin_name (values[i], &error);

      if (ok)
        g_strv_builder_add (builder, values[i]);
      else
        g_warning (_("%s: ignoring %s entry “%s”"), path, key, values[i]);
    }
  return g_strv_builder_end (builder);
}

TesseraPluginInfo *
_tessera_plugin_info_new_from_file (const char *dir,
                                   const char *file_name)
{
  g_autofree char *path = g_build_filename (dir, file_name, NULL);
  g_autoptr(GKeyFile) keyfile = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *module = NULL;
  g_autofree char *library = NULL;
  TesseraPluginInfo *info;

  if (!g_key_file_load_from_file (keyfile, path, G_KEY_FILE_NONE, &error))
    {
      g_warning (_("Ignoring plugin manifest %s: %s"), path, error->message);
      return NULL;
    }
  module = g_key_file_get_string (keyfile, "Plugin", "Module", &error);
  if (module == NULL || !tessera_check_plugin_name (module, &error))
    {
      g_warning (_("Ignoring plugin manifest %s: %s"), path, error->message);
      return NULL;
    }
  library = g_strconcat ("lib", module, ".so", NULL);
  info = g_object_new (TESSERA_TYPE_PLUGIN_INFO, NULL);
  info->module = g_steal_pointer (&module);
  info->manifest_path = g_steal_pointer (&path);
  /* The module lives next to its manifest: only its name comes from data. */
  info->module_path = g_build_filename (dir, library, NULL);
  info->resource_types = checked_list (keyfile, "ResourceTypes", FALSE, info->manifest_path);
  info->classes = checked_list (keyfile, "Classes", TRUE, info->manifest_path);
  info->process_types = checked_list (keyfile, "ProcessTypes", FALSE, info->manifest_path);
  info->stores = checked_list (keyfile, "Stores", FALSE, info->manifest_path);
  info->keyfile = g_steal_pointer (&keyfile);
  return info;
}

/**
 * tessera_plugin_info_get_stores:
 * @self: a plugin
 *
 * The manifest's `Stores`: the names of the stores, where pools live,
 * that the module provides (`etcd`). Only the names are public: the store
 * interface is private to the project for now.
 *
 * Returns: (transfer none) (array zero-terminated=1): the stores the
 *   plugin provides
 */
const char * const *
tessera_plugin_info_get_stores (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return (const char * const *) self->stores;
}
