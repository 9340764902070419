/* tessera-registry.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <gmodule.h>
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
 */
struct _TesseraPluginInfo
{
  GObject parent_instance;

  char *module;
  char *name;
  char *manifest_path;
  char *module_path;
  GStrv resource_types;
  GStrv classes;
};

G_DEFINE_FINAL_TYPE (TesseraPluginInfo, tessera_plugin_info, G_TYPE_OBJECT)

/**
 * TesseraRegistry:
 *
 * Finds resource types and lock classes in plugins. Manifests are read
 * from each folder of the search path (`TESSERA_PLUGIN_PATH`, colon
 * separated, then the installed plugin folder) without loading anything;
 * a module is loaded only when one of its resource types or (module,
 * class) pairs is first asked for, and is never unloaded.
 *
 * Names that come from data (a keyfile's `type=`, locks.json's "module"
 * and "class") only ever select among manifests: they are checked against
 * `[A-Za-z0-9_.-]` and never become a path.
 */
struct _TesseraRegistry
{
  GObject parent_instance;

  GStrv search_path;
  GRecMutex mutex;
  GPtrArray *plugins;   /* TesseraPluginInfo, read on first use */
};

G_DEFINE_FINAL_TYPE (TesseraRegistry, tessera_registry, G_TYPE_OBJECT)

/* ---------------------------------------------------------------------- */
/* Modules: one GTypeModule per module name, kept for the process's life,
 * since GTypes registered by a module outlive any unloading. */

#define TESSERA_TYPE_PLUGIN_MODULE (tessera_plugin_module_get_type ())
G_DECLARE_FINAL_TYPE (TesseraPluginModule, tessera_plugin_module, TESSERA, PLUGIN_MODULE, GTypeModule)

struct _TesseraPluginModule
{
  GTypeModule parent_instance;

  char *module_name;
  char *path;
  char *error;
  GModule *library;
  gboolean in_use;
};

G_DEFINE_FINAL_TYPE (TesseraPluginModule, tessera_plugin_module, G_TYPE_TYPE_MODULE)

static GRecMutex modules_mutex;
static GHashTable *modules;          /* module name → TesseraPluginModule */
static GHashTable *resource_types;   /* resource type name → GType */

static char *
entry_point_name (const char *module_name)
{
  char *symbol = g_strdup_printf ("tessera_%s_register_types", module_name);

  for (char *p = symbol; *p; p++)
    if (*p == '-' || *p == '.')
      *p = '_';
  return symbol;
}

static gboolean
tessera_plugin_module_load (GTypeModule *type_module)
{
  TesseraPluginModule *self = TESSERA_PLUGIN_MODULE (type_module);
  g_autofree char *symbol = entry_point_name (self->module_name);
  void (*register_types) (GTypeModule *) = NULL;
  gpointer address = NULL;

  g_clear_pointer (&self->error, g_free);
  if (self->library == NULL)
    {
      self->library = g_module_open (self->path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
      if (self->library == NULL)
        {
          self->error = g_strdup (g_module_error ());
          return FALSE;
        }
    }
  if (!g_module_symbol (self->library, symbol, &address) || address == NULL)
    {
      self->error = g_strdup_printf (_("it has no entry point %s: %s"), symbol, g_module_error ());
      g_module_close (self->library);
      self->library = NULL;
      return FALSE;
    }
  /* Types outlive modules: never let the library go. */
  g_module_make_resident (self->library);
  memcpy (&register_types, &address, sizeof register_types);
  register_types (type_module);
  return TRUE;
}

static void
tessera_plugin_module_unload (GTypeModule *type_module)
{
  /* Never unloaded: see load(). */
}

static void
tessera_plugin_module_class_init (TesseraPluginModuleClass *klass)
{
  G_TYPE_MODULE_CLASS (klass)->load = tessera_plugin_module_load;
  G_TYPE_MODULE_CLASS (klass)->unload = tessera_plugin_module_unload;
}

static void
tessera_plugin_module_init (TesseraPluginModule *self)
{
}

/**
 * tessera_registry_register_resource_type:
 * @type_name: the name a keyfile's `type=` uses
 * @type: a subtype of #TesseraDynamicResource
 *
 * Called by a plugin's entry point for each resource type it provides.
 */
void
tessera_registry_register_resource_type (const char *type_name,
                                         GType       type)
{
  g_return_if_fail (tessera_check_plugin_name (type_name, NULL));
  g_return_if_fail (g_type_is_a (type, TESSERA_TYPE_DYNAMIC_RESOURCE));

  g_rec_mutex_lock (&modules_mutex);
  if (resource_types == NULL)
    resource_types = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (resource_types, g_strdup (type_name), GSIZE_TO_POINTER (type));
  g_rec_mutex_unlock (&modules_mutex);
}

static GType
registered_resource_type (const char *type_name)
{
  GType type = G_TYPE_INVALID;

  g_rec_mutex_lock (&modules_mutex);
  if (resource_types != NULL)
    type = GPOINTER_TO_SIZE (g_hash_table_lookup (resource_types, type_name));
  g_rec_mutex_unlock (&modules_mutex);
  return type;
}

static gboolean
module_is_loaded (const char *module_name)
{
  TesseraPluginModule *module;
  gboolean loaded;

  g_rec_mutex_lock (&modules_mutex);
  module = modules ? g_hash_table_lookup (modules, module_name) : NULL;
  loaded = module != NULL && module->in_use;
  g_rec_mutex_unlock (&modules_mutex);
  return loaded;
}

static gboolean
ensure_loaded (TesseraPluginInfo *info, GError **error)
{
  TesseraPluginModule *module;
  gboolean ok = TRUE;

  g_rec_mutex_lock (&modules_mutex);
  if (modules == NULL)
    modules = g_hash_table_new (g_str_hash, g_str_equal);
  module = g_hash_table_lookup (modules, info->module);
  if (module == NULL)
    {
      module = g_object_new (TESSERA_TYPE_PLUGIN_MODULE, NULL);
      module->module_name = g_strdup (info->module);
      module->path = g_strdup (info->module_path);
      g_type_module_set_name (G_TYPE_MODULE (module), info->module);
      g_hash_table_insert (modules, module->module_name, module);
    }
  if (!module->in_use)
    {
      if (g_type_module_use (G_TYPE_MODULE (module)))
        module->in_use = TRUE;
      else
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                       _("Cannot load plugin module %s (from %s): %s"),
                       module->path, info->manifest_path, module->error ? module->error : "?");
          ok = FALSE;
        }
    }
  g_rec_mutex_unlock (&modules_mutex);
  return ok;
}

/* ---------------------------------------------------------------------- */
/* Plugin info */

static void
tessera_plugin_info_finalize (GObject *object)
{
  TesseraPluginInfo *self = TESSERA_PLUGIN_INFO (object);

  g_free (self->module);
  g_free (self->name);
  g_free (self->manifest_path);
  g_free (self->module_path);
  g_strfreev (self->resource_types);
  g_strfreev (self->classes);
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
 * Returns: the manifest's human-readable `Name`
 */
const char *
tessera_plugin_info_get_name (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), NULL);
  return self->name;
}

/**
 * tessera_plugin_info_get_manifest_path:
 * @self: a plugin
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
 * tessera_plugin_info_is_loaded:
 * @self: a plugin
 *
 * Returns: whether the plugin's module is loaded in this process
 */
gboolean
tessera_plugin_info_is_loaded (TesseraPluginInfo *self)
{
  g_return_val_if_fail (TESSERA_IS_PLUGIN_INFO (self), FALSE);
  return module_is_loaded (self->module);
}

/* ---------------------------------------------------------------------- */
/* Registry */

/**
 * tessera_check_plugin_name:
 * @name: a module, class or resource type name from data
 * @error: return location for a #GError
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

static void
tessera_registry_finalize (GObject *object)
{
  TesseraRegistry *self = TESSERA_REGISTRY (object);

  g_strfreev (self->search_path);
  g_clear_pointer (&self->plugins, g_ptr_array_unref);
  g_rec_mutex_clear (&self->mutex);
  G_OBJECT_CLASS (tessera_registry_parent_class)->finalize (object);
}

static void
tessera_registry_class_init (TesseraRegistryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_registry_finalize;
}

static void
tessera_registry_init (TesseraRegistry *self)
{
  g_rec_mutex_init (&self->mutex);
}

/**
 * tessera_registry_new:
 * @search_path: (array zero-terminated=1): folders to read manifests from,
 *   in order
 *
 * A registry with its own search path; most programs use
 * [func@Tessera.Registry.get_default].
 *
 * Returns: (transfer full): a new registry
 */
TesseraRegistry *
tessera_registry_new (const char * const *search_path)
{
  TesseraRegistry *self = g_object_new (TESSERA_TYPE_REGISTRY, NULL);

  self->search_path = g_strdupv ((char **) search_path);
  return self;
}

/**
 * tessera_registry_get_default:
 *
 * The registry of `TESSERA_PLUGIN_PATH` (read once) followed by the
 * installed plugin folder.
 *
 * Returns: (transfer none): the default registry
 */
TesseraRegistry *
tessera_registry_get_default (void)
{
  static gsize once = 0;
  static TesseraRegistry *registry;

  if (g_once_init_enter (&once))
    {
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
      const char *env = g_getenv ("TESSERA_PLUGIN_PATH");
      g_auto(GStrv) path = NULL;

      if (env != NULL)
        {
          g_auto(GStrv) parts = g_strsplit (env, ":", -1);
          for (guint i = 0; parts[i] != NULL; i++)
            if (*parts[i] != '\0')
              g_strv_builder_add (builder, parts[i]);
        }
      g_strv_builder_add (builder, TESSERA_PLUGINDIR);
      path = g_strv_builder_end (builder);
      registry = tessera_registry_new ((const char * const *) path);
      g_once_init_leave (&once, 1);
    }
  return registry;
}

/**
 * tessera_registry_get_search_path:
 * @self: a registry
 *
 * Returns: (transfer none) (array zero-terminated=1): the folders searched
 *   for manifests, in order
 */
const char * const *
tessera_registry_get_search_path (TesseraRegistry *self)
{
  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), NULL);
  return (const char * const *) self->search_path;
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

static TesseraPluginInfo *
read_manifest (const char *dir, const char *file_name)
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
  info->name = g_key_file_get_locale_string (keyfile, "Plugin", "Name", NULL, NULL);
  if (info->name == NULL)
    info->name = g_strdup (info->module);
  info->manifest_path = g_steal_pointer (&path);
  /* The module lives next to its manifest: only its name comes from data. */
  info->module_path = g_build_filename (dir, library, NULL);
  info->resource_types = checked_list (keyfile, "ResourceTypes", FALSE, info->manifest_path);
  info->classes = checked_list (keyfile, "Classes", TRUE, info->manifest_path);
  return info;
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

/* Reads the manifests once. Called with self->mutex held. */
static void
ensure_scanned (TesseraRegistry *self)
{
  g_autoptr(GHashTable) seen = NULL;

  if (self->plugins != NULL)
    return;
  self->plugins = g_ptr_array_new_with_free_func (g_object_unref);
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; self->search_path != NULL && self->search_path[i] != NULL; i++)
    {
      const char *dir_path = self->search_path[i];
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      GDir *dir = g_dir_open (dir_path, 0, NULL);
      const char *name;

      if (dir == NULL)
        continue;
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".plugin"))
          g_ptr_array_add (names, g_strdup (name));
      g_dir_close (dir);
      g_ptr_array_sort (names, compare_strings);
      for (guint j = 0; j < names->len; j++)
        {
          TesseraPluginInfo *info = read_manifest (dir_path, g_ptr_array_index (names, j));
          if (info == NULL)
            continue;
          /* Earlier folders of the search path win. */
          if (g_hash_table_contains (seen, info->module))
            {
              g_debug ("Plugin %s of %s hidden by an earlier one", info->module, info->manifest_path);
              g_object_unref (info);
              continue;
            }
          g_ptr_array_add (self->plugins, info);
          g_hash_table_add (seen, info->module);
        }
    }
}

/**
 * tessera_registry_list_plugins:
 * @self: a registry
 *
 * Lists the plugins the manifests describe, loading none of them.
 *
 * Returns: (transfer container) (element-type TesseraPluginInfo): the plugins
 */
GPtrArray *
tessera_registry_list_plugins (TesseraRegistry *self)
{
  GPtrArray *result;

  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), NULL);
  g_rec_mutex_lock (&self->mutex);
  ensure_scanned (self);
  result = g_ptr_array_copy (self->plugins, (GCopyFunc) (void (*)(void)) g_object_ref, NULL);
  g_ptr_array_set_free_func (result, g_object_unref);
  g_rec_mutex_unlock (&self->mutex);
  return result;
}

static TesseraPluginInfo *
find_plugin (TesseraRegistry *self, const char *wanted, gboolean pair)
{
  ensure_scanned (self);
  for (guint i = 0; i < self->plugins->len; i++)
    {
      TesseraPluginInfo *info = g_ptr_array_index (self->plugins, i);
      if (g_strv_contains ((const char * const *) (pair ? info->classes : info->resource_types), wanted))
        return info;
    }
  return NULL;
}

static char *
search_path_string (TesseraRegistry *self)
{
  return self->search_path ? g_strjoinv (":", self->search_path) : g_strdup ("");
}

/**
 * tessera_registry_lookup_resource_type:
 * @self: a registry
 * @type_name: a resource type name, as in a keyfile's `type=`
 * @error: return location for a #GError
 *
 * Finds the plugin whose manifest lists @type_name, loads its module if
 * needed and returns the type it registered.
 *
 * Returns: the type, or %G_TYPE_INVALID with %TESSERA_ERROR_INVALID_NAME
 *   or %TESSERA_ERROR_PLUGIN_NOT_FOUND
 */
GType
tessera_registry_lookup_resource_type (TesseraRegistry  *self,
                                       const char       *type_name,
                                       GError          **error)
{
  TesseraPluginInfo *info;
  GType type;

  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), G_TYPE_INVALID);
  if (!tessera_check_plugin_name (type_name, error))
    return G_TYPE_INVALID;

  g_rec_mutex_lock (&self->mutex);
  info = find_plugin (self, type_name, FALSE);
  if (info == NULL)
    {
      g_autofree char *where = search_path_string (self);
      g_rec_mutex_unlock (&self->mutex);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                   _("No plugin provides resource type “%s” (searched %s)"), type_name, where);
      return G_TYPE_INVALID;
    }
  g_object_ref (info);
  g_rec_mutex_unlock (&self->mutex);

  if (!ensure_loaded (info, error))
    {
      g_object_unref (info);
      return G_TYPE_INVALID;
    }
  type = registered_resource_type (type_name);
  if (type == G_TYPE_INVALID)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                 _("Plugin %s does not register resource type “%s”"), info->manifest_path, type_name);
  g_object_unref (info);
  return type;
}

/**
 * tessera_registry_lookup_lock_class:
 * @self: a registry
 * @module: a "module" name from locks.json
 * @class_name: a "class" name from locks.json
 * @error: return location for a #GError
 *
 * Finds the plugin whose manifest lists `module:class`, loads it if needed
 * and returns the lock class it registered.
 *
 * Returns: the type, or %G_TYPE_INVALID with @error set
 */
GType
tessera_registry_lookup_lock_class (TesseraRegistry  *self,
                                    const char       *module,
                                    const char       *class_name,
                                    GError          **error)
{
  g_autofree char *pair = NULL;
  TesseraPluginInfo *info;
  GType type;

  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), G_TYPE_INVALID);
  if (!tessera_check_plugin_name (module, error) || !tessera_check_plugin_name (class_name, error))
    return G_TYPE_INVALID;

  type = _tessera_lock_class_table_lookup (module, class_name);
  if (type != G_TYPE_INVALID)
    return type;

  pair = g_strdup_printf ("%s:%s", module, class_name);
  g_rec_mutex_lock (&self->mutex);
  info = find_plugin (self, pair, TRUE);
  if (info != NULL)
    g_object_ref (info);
  g_rec_mutex_unlock (&self->mutex);
  if (info == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_CLASS_NOT_FOUND,
                   _("No plugin provides lock class %s"), pair);
      return G_TYPE_INVALID;
    }
  if (!ensure_loaded (info, error))
    {
      g_object_unref (info);
      return G_TYPE_INVALID;
    }
  type = _tessera_lock_class_table_lookup (module, class_name);
  if (type == G_TYPE_INVALID)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_CLASS_NOT_FOUND,
                 _("Plugin %s does not register lock class %s"), info->manifest_path, pair);
  g_object_unref (info);
  return type;
}

/**
 * tessera_registry_is_module_loaded:
 * @self: a registry
 * @module: a module name
 *
 * Returns: whether that plugin module is loaded in this process
 */
gboolean
tessera_registry_is_module_loaded (TesseraRegistry *self,
                                   const char      *module)
{
  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), FALSE);
  return module_is_loaded (module);
}
