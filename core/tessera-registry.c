/* tessera-registry.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <dlfcn.h>
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
  return module_is_loaded (self->module);
}

/* ---------------------------------------------------------------------- */
/* Registry */

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

/* The plugin folder beside the library actually loaded
 * (<libdir>/tessera-1/plugins), so that an installed tree that was moved,
 * or installed with DESTDIR, still finds its own plugins. */
static char *
relocated_plugindir (void)
{
  static const char anchor = 0;
  Dl_info info;
  g_autofree char *libdir = NULL;

  if (dladdr (&anchor, &info) == 0 || info.dli_fname == NULL || !g_path_is_absolute (info.dli_fname))
    return NULL;
  libdir = g_path_get_dirname (info.dli_fname);
  return g_build_filename (libdir, "tessera-1", "plugins", NULL);
}

/**
 * tessera_registry_get_default:
 *
 * The registry of `TESSERA_PLUGIN_PATH` (read once), then the plugin folder
 * beside the loaded library (`<libdir>/tessera-1/plugins`, which is where
 * `meson install` puts them, even when the tree was moved), then the
 * configured plugin folder.
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
      g_autofree char *relocated = NULL;

      if (env != NULL)
        {
          g_auto(GStrv) parts = g_strsplit (env, ":", -1);
          for (guint i = 0; parts[i] != NULL; i++)
            if (*parts[i] != '\0')
              g_strv_builder_add (builder, parts[i]);
        }
      relocated = relocated_plugindir ();
      if (relocated != NULL && g_strcmp0 (relocated, TESSERA_PLUGINDIR) != 0)
        g_strv_builder_add (builder, relocated);
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
 * Where the registry looks for plugin manifests:
 * `TESSERA_PLUGIN_PATH`, then the installed plugin folder.
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
 * Whether a plugin module was loaded.
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

/**
 * tessera_value_from_string:
 * @pspec: the property to set
 * @text: its value as written in a keyfile
 * @value: (out caller-allocates): initialized here to the property's type
 * @error: return location for a #GError
 *
 * Converts configuration text to a property value: integers and doubles
 * in C syntax within the property's range, booleans as true/false,
 * yes/no or 1/0, string lists separated by `;`, enums by nick or name.
 *
 * Returns: %FALSE with %TESSERA_ERROR_INVALID_CONFIGURATION when @text does
 *   not fit the property (@value is then unset)
 */
gboolean
tessera_value_from_string (GParamSpec  *pspec,
                           const char  *text,
                           GValue      *value,
                           GError     **error)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  gboolean ok = TRUE;

  g_return_val_if_fail (G_IS_PARAM_SPEC (pspec) && text != NULL, FALSE);
  g_value_init (value, type);
  if (type == G_TYPE_STRING)
    g_value_set_string (value, text);
  else if (type == G_TYPE_BOOLEAN)
    {
      if (g_ascii_strcasecmp (text, "true") == 0 || g_ascii_strcasecmp (text, "yes") == 0 || strcmp (text, "1") == 0)
        g_value_set_boolean (value, TRUE);
      else if (g_ascii_strcasecmp (text, "false") == 0 || g_ascii_strcasecmp (text, "no") == 0 || strcmp (text, "0") == 0)
        g_value_set_boolean (value, FALSE);
      else
        ok = FALSE;
    }
  else if (type == G_TYPE_INT || type == G_TYPE_INT64 || type == G_TYPE_LONG)
    {
      gint64 v;
      ok = g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &v, NULL);
      if (ok && type == G_TYPE_INT64)
        g_value_set_int64 (value, v);
      else if (ok && type == G_TYPE_LONG)
        g_value_set_long (value, (glong) v);
      else if (ok)
        {
          ok = v >= G_MININT && v <= G_MAXINT;
          g_value_set_int (value, (int) CLAMP (v, G_MININT, G_MAXINT));
        }
    }
  else if (type == G_TYPE_UINT || type == G_TYPE_UINT64 || type == G_TYPE_ULONG)
    {
      guint64 v;
      ok = g_ascii_string_to_unsigned (text, 10, 0, G_MAXUINT64, &v, NULL);
      if (ok && type == G_TYPE_UINT64)
        g_value_set_uint64 (value, v);
      else if (ok && type == G_TYPE_ULONG)
        g_value_set_ulong (value, (gulong) v);
      else if (ok)
        {
          ok = v <= G_MAXUINT;
          g_value_set_uint (value, (guint) MIN (v, G_MAXUINT));
        }
    }
  else if (type == G_TYPE_DOUBLE || type == G_TYPE_FLOAT)
    {
      char *end = NULL;
      double v = g_ascii_strtod (text, &end);
      ok = end != text && *end == '\0';
      if (type == G_TYPE_DOUBLE)
        g_value_set_double (value, v);
      else
        g_value_set_float (value, (float) v);
    }
  else if (type == G_TYPE_STRV)
    {
      g_auto(GStrv) parts = g_strsplit (text, ";", -1);
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
      for (guint i = 0; parts[i] != NULL; i++)
        if (*g_strstrip (parts[i]) != '\0')
          g_strv_builder_add (builder, parts[i]);
      g_value_take_boxed (value, g_strv_builder_end (builder));
    }
  else if (G_TYPE_IS_ENUM (type))
    {
      GEnumClass *klass = g_type_class_ref (type);
      GEnumValue *v = g_enum_get_value_by_nick (klass, text);
      if (v == NULL)
        v = g_enum_get_value_by_name (klass, text);
      ok = v != NULL;
      if (ok)
        g_value_set_enum (value, v->value);
      g_type_class_unref (klass);
    }
  else
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("Setting “%s” has a type (%s) that cannot be configured"),
                   g_param_spec_get_name (pspec), g_type_name (type));
      g_value_unset (value);
      return FALSE;
    }

  /* Within the property's own range, too. */
  if (ok && g_param_value_validate (pspec, value))
    ok = FALSE;
  if (!ok)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a valid value for “%s” (%s expected)"),
                   text, g_param_spec_get_name (pspec), g_type_name (type));
      g_value_unset (value);
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_registry_create_resource:
 * @self: a registry
 * @type_name: a resource type name
 * @name: the resource's name
 * @keys: (array zero-terminated=1): property names of the type
 * @values: (array zero-terminated=1): their values as text, one per key
 * @error: return location for a #GError
 *
 * Creates and initializes a resource of a plugin type from text settings,
 * the way a keyfile's `[resource NAME]` group does: each key names a
 * GObject property of the type, converted with
 * [func@Tessera.value_from_string]. A key the type does not have is
 * %TESSERA_ERROR_INVALID_CONFIGURATION.
 *
 * Returns: (transfer full): the resource, or %NULL with @error set
 */
TesseraDynamicResource *
tessera_registry_create_resource (TesseraRegistry     *self,
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
  GType type;
  guint n = keys ? g_strv_length ((char **) keys) : 0;

  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (n == (values ? g_strv_length ((char **) values) : 0), NULL);

  type = tessera_registry_lookup_resource_type (self, type_name, error);
  if (type == G_TYPE_INVALID)
    return NULL;
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
      if (!tessera_value_from_string (pspec, values[i], &value, error))
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
