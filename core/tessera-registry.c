/* tessera-registry.c: finds resource types and lock classes in plugins:
 * the search path and its manifests, lookups, the type tables (resource
 * and process type name → GType, (module, class) → lock class) and the
 * one instance of each process type
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-config-values-private.h"
#include "tessera-plugin-info-private.h"
#include "tessera-plugin-module-private.h"
#include "tessera-private.h"
#include "tessera-registry-private.h"

#include <string.h>

/**
 * TesseraRegistry:
 *
 * Finds resource types and lock classes in plugins. Manifests are read
 * from each folder of the search path (`TESSERA_PLUGIN_PATH`, colon
 * separated, then the installed plugin folder), folder by folder until a
 * lookup finds what it wants, without loading anything;
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
  GPtrArray *plugins;   /* TesseraPluginInfo, read folder by folder as needed */
  guint next_folder;    /* the search path's first folder not read yet */
  GHashTable *seen;     /* module names of plugins, owned by them */
};

G_DEFINE_FINAL_TYPE (TesseraRegistry, tessera_registry, G_TYPE_OBJECT)

/* ---------------------------------------------------------------------- */
/* The type tables, filled by the plugins' entry points (and the core's own
 * lock class) and kept for the process's life, like the types. */

static GMutex tables_mutex;
static GHashTable *resource_types;   /* resource type name → GType */
static GHashTable *process_types;    /* process type name → GType */
static GHashTable *class_by_name;    /* "module\x1fclass" → GType */
static GHashTable *name_by_class;    /* GType → "module\0class" */

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

  g_mutex_lock (&tables_mutex);
  if (resource_types == NULL)
    resource_types = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (resource_types, g_strdup (type_name), GSIZE_TO_POINTER (type));
  g_mutex_unlock (&tables_mutex);
}

/**
 * tessera_registry_register_process_type:
 * @type_name: the "type" of the process specs it judges
 * @type: a subtype of #TesseraProcessType
 *
 * Called by a plugin's entry point for each process type it provides.
 */
void
tessera_registry_register_process_type (const char *type_name,
                                        GType       type)
{
  g_return_if_fail (tessera_check_plugin_name (type_name, NULL));
  g_return_if_fail (g_type_is_a (type, TESSERA_TYPE_PROCESS_TYPE));

  g_mutex_lock (&tables_mutex);
  if (process_types == NULL)
    process_types = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_replace (process_types, g_strdup (type_name), GSIZE_TO_POINTER (type));
  g_mutex_unlock (&tables_mutex);
}

/* The GType under @key in one of the tables (which may not exist yet). */
static GType
table_lookup (GHashTable **table,
              const char  *key)
{
  GType type = G_TYPE_INVALID;

  g_mutex_lock (&tables_mutex);
  if (*table != NULL)
    type = GPOINTER_TO_SIZE (g_hash_table_lookup (*table, key));
  g_mutex_unlock (&tables_mutex);
  return type;
}

void
_tessera_registry_register_lock_class (GType       type,
                                       const char *module,
                                       const char *class_name)
{
  g_mutex_lock (&tables_mutex);
  if (class_by_name == NULL)
    {
      class_by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      name_by_class = g_hash_table_new_full (NULL, NULL, NULL, g_free);
    }
  g_hash_table_insert (class_by_name, g_strdup_printf ("%s%c%s", module, 0x1f, class_name),
                       GSIZE_TO_POINTER (type));
  if (!g_hash_table_contains (name_by_class, GSIZE_TO_POINTER (type)))
    {
      gsize lm = strlen (module), lc = strlen (class_name);
      char *both = g_malloc (lm + lc + 2);
      memcpy (both, module, lm + 1);
      memcpy (both + lm + 1, class_name, lc + 1);
      g_hash_table_insert (name_by_class, GSIZE_TO_POINTER (type), both);
    }
  g_mutex_unlock (&tables_mutex);
}

gboolean
_tessera_registry_lock_class_name (GType        type,
                                   const char **module,
                                   const char **class_name)
{
  const char *name;

  g_mutex_lock (&tables_mutex);
  name = name_by_class ? g_hash_table_lookup (name_by_class, GSIZE_TO_POINTER (type)) : NULL;
  g_mutex_unlock (&tables_mutex);
  if (name == NULL)
    return FALSE;
  /* Never removed nor replaced: the strings stay valid. */
  *module = name;
  *class_name = name + strlen (name) + 1;
  return TRUE;
}

static GType
registered_lock_class (const char *module,
                       const char *class_name)
{
  g_autofree char *key = g_strdup_printf ("%s%c%s", module, 0x1f, class_name);

  return table_lookup (&class_by_name, key);
}

/* ---------------------------------------------------------------------- */
/* Registry */

static void
tessera_registry_finalize (GObject *object)
{
  TesseraRegistry *self = TESSERA_REGISTRY (object);

  g_strfreev (self->search_path);
  g_clear_pointer (&self->seen, g_hash_table_unref);
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
  self->plugins = g_ptr_array_new_with_free_func (g_object_unref);
  self->seen = g_hash_table_new (g_str_hash, g_str_equal);
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
 * The registry of `TESSERA_PLUGIN_PATH` (read once), then the plugin folder
 * beside the loaded library (`<libdir>/tessera-1/plugins`, which is where
 * `meson install` puts them, even when the tree was moved), then the
 * configured plugin folder; each folder by its real path, once.
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
      g_auto(GStrv) path = _tessera_registry_default_search_path ();

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

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char **) a, *(const char **) b);
}

/* Reads the manifests of the next folder of the search path: FALSE when
 * every folder was read. A lookup reads folders only until one provides
 * what it wants (a run reads one manifest, not all); the order, and the
 * rule that earlier folders win, are those of reading them all. Called
 * with self->mutex held. */
static gboolean
scan_next_folder (TesseraRegistry *self)
{
  g_autoptr(GPtrArray) names = NULL;
  const char *dir_path;
  const char *name;
  GDir *dir;

  if (self->search_path == NULL || self->search_path[self->next_folder] == NULL)
    return FALSE;
  dir_path = self->search_path[self->next_folder++];
  dir = g_dir_open (dir_path, 0, NULL);
  if (dir == NULL)
    return TRUE;
  names = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".plugin"))
      g_ptr_array_add (names, g_strdup (name));
  g_dir_close (dir);
  g_ptr_array_sort (names, compare_strings);
  for (guint j = 0; j < names->len; j++)
    {
      TesseraPluginInfo *info = _tessera_plugin_info_new_from_file (dir_path, g_ptr_array_index (names, j));
      const char *module;

      if (info == NULL)
        continue;
      /* Earlier folders of the search path win. */
      module = tessera_plugin_info_get_module (info);
      if (g_hash_table_contains (self->seen, module))
        {
          g_debug ("Plugin %s of %s hidden by an earlier one", module,
                   tessera_plugin_info_get_manifest_path (info));
          g_object_unref (info);
          continue;
        }
      g_ptr_array_add (self->plugins, info);
      g_hash_table_add (self->seen, (gpointer) module);
    }
  return TRUE;
}

/* A GCopyFunc of its exact type: g_object_ref called through a pointer
 * cast to GCopyFunc is a call through another function type, undefined
 * (clang's -fsanitize=function reports it). */
static gpointer
ref_plugin_info (gconstpointer info, gpointer user_data)
{
  return g_object_ref ((gpointer) info);
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
  while (scan_next_folder (self))   /* every folder */
    ;
  result = g_ptr_array_copy (self->plugins, ref_plugin_info, NULL);
  g_ptr_array_set_free_func (result, g_object_unref);
  g_rec_mutex_unlock (&self->mutex);
  return result;
}

typedef enum { PROVIDES_RESOURCE_TYPE, PROVIDES_CLASS, PROVIDES_PROCESS_TYPE } Provides;

static const char * const *
provided (TesseraPluginInfo *info, Provides what)
{
  switch (what)
    {
    case PROVIDES_CLASS: return tessera_plugin_info_get_classes (info);
    case PROVIDES_PROCESS_TYPE: return tessera_plugin_info_get_process_types (info);
    case PROVIDES_RESOURCE_TYPE:
    default: return tessera_plugin_info_get_resource_types (info);
    }
}

/* The first plugin, in search path order, that provides @wanted: folders
 * are read until one does. */
static TesseraPluginInfo *
find_plugin (TesseraRegistry *self, const char *wanted, Provides what)
{
  guint i = 0;

  do
    for (; i < self->plugins->len; i++)
      {
        TesseraPluginInfo *info = g_ptr_array_index (self->plugins, i);
        if (g_strv_contains (provided (info, what), wanted))
          return info;
      }
  while (scan_next_folder (self));
  return NULL;
}

static gboolean
ensure_loaded (TesseraPluginInfo *info, GError **error)
{
  return _tessera_plugin_module_ensure_loaded (tessera_plugin_info_get_module (info),
                                               tessera_plugin_info_get_module_path (info),
                                               tessera_plugin_info_get_manifest_path (info), error);
}

static char *
search_path_string (TesseraRegistry *self)
{
  return self->search_path ? g_strjoinv (":", self->search_path) : g_strdup ("");
}

/* Resource and process types: the plugin whose manifest names it, loaded,
 * then the type its entry point registered. */
static GType
lookup_named_type (TesseraRegistry *self, const char *type_name, Provides what, GError **error)
{
  gboolean process = what == PROVIDES_PROCESS_TYPE;
  TesseraPluginInfo *info;
  GType type;

  if (!tessera_check_plugin_name (type_name, error))
    return G_TYPE_INVALID;

  g_rec_mutex_lock (&self->mutex);
  info = find_plugin (self, type_name, what);
  if (info == NULL)
    {
      g_autofree char *where = search_path_string (self);
      g_rec_mutex_unlock (&self->mutex);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                   process ? _("No plugin provides process type “%s” (searched %s)")
                           : _("No plugin provides resource type “%s” (searched %s)"), type_name, where);
      return G_TYPE_INVALID;
    }
  g_object_ref (info);
  g_rec_mutex_unlock (&self->mutex);

  if (!ensure_loaded (info, error))
    {
      g_object_unref (info);
      return G_TYPE_INVALID;
    }
  type = table_lookup (process ? &process_types : &resource_types, type_name);
  if (type == G_TYPE_INVALID)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                 process ? _("Plugin %s does not register process type “%s”")
                         : _("Plugin %s does not register resource type “%s”"),
                 tessera_plugin_info_get_manifest_path (info), type_name);
  g_object_unref (info);
  return type;
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
  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), G_TYPE_INVALID);
  return lookup_named_type (self, type_name, PROVIDES_RESOURCE_TYPE, error);
}

/**
 * tessera_registry_lookup_process_type:
 * @self: a registry
 * @type_name: a process spec's "type", such as experimaestro's "slurm"
 * @error: return location for a #GError
 *
 * Finds the plugin whose manifest lists @type_name in `ProcessTypes`,
 * loads its module if needed and returns the [class@Tessera.ProcessType]
 * subclass it registered.
 *
 * Returns: the type, or %G_TYPE_INVALID with %TESSERA_ERROR_INVALID_NAME
 *   or %TESSERA_ERROR_PLUGIN_NOT_FOUND
 */
GType
tessera_registry_lookup_process_type (TesseraRegistry  *self,
                                      const char       *type_name,
                                      GError          **error)
{
  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), G_TYPE_INVALID);
  return lookup_named_type (self, type_name, PROVIDES_PROCESS_TYPE, error);
}

/* One instance per process type name, made by the default registry on
 * first use and kept (the plugin is never unloaded either). Unknown names
 * are remembered too, so a pool full of specs of an unknown type costs one
 * lookup. The registry keeps it, as it keeps the types: the process that
 * asks for its judge, and the process type's class, need not know how
 * plugins are found. */
static GMutex instances_mutex;
static GHashTable *instances;   /* name → TesseraProcessType, or NULL */

TesseraProcessType *
_tessera_registry_process_type_for (const char *type_name)
{
  TesseraProcessType *instance = NULL;
  gpointer found;

  g_mutex_lock (&instances_mutex);
  if (instances == NULL)
    instances = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);   // kept for the process's life
  if (!g_hash_table_lookup_extended (instances, type_name, NULL, &found))
    {
      g_autoptr(GError) error = NULL;
      GType type = tessera_registry_lookup_process_type (tessera_registry_get_default (),
                                                         type_name, &error);

      if (type != G_TYPE_INVALID)
        found = g_object_new (type, NULL);
      else
        {
          g_debug ("No process type “%s”: %s", type_name, error->message);
          found = NULL;
        }
      g_hash_table_insert (instances, g_strdup (type_name), found);
    }
  instance = found;
  g_mutex_unlock (&instances_mutex);
  return instance;
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

  type = registered_lock_class (module, class_name);
  if (type != G_TYPE_INVALID)
    return type;

  pair = g_strdup_printf ("%s:%s", module, class_name);
  g_rec_mutex_lock (&self->mutex);
  info = find_plugin (self, pair, PROVIDES_CLASS);
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
  type = registered_lock_class (module, class_name);
  if (type == G_TYPE_INVALID)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_CLASS_NOT_FOUND,
                 _("Plugin %s does not register lock class %s"), tessera_plugin_info_get_manifest_path (info), pair);
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
  return _tessera_plugin_module_is_loaded (module);
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
 * GObject property of the type, and its value is read as a keyfile value
 * of the property's type (GKeyFile's integer, 64-bit integer, double,
 * boolean, string and string list syntax; an enum by nick or name), within
 * the property's range. A key the type does not have, a value that does
 * not fit, or a property given twice (under one spelling or two:
 * `lock_folder` is `lock-folder`), is %TESSERA_ERROR_INVALID_CONFIGURATION.
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
  guint n = keys ? g_strv_length ((char **) keys) : 0;
  GType type;

  g_return_val_if_fail (TESSERA_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (n == (values ? g_strv_length ((char **) values) : 0), NULL);

  type = tessera_registry_lookup_resource_type (self, type_name, error);
  if (type == G_TYPE_INVALID)
    return NULL;
  return _tessera_config_values_new_resource (type, type_name, name, keys, values, error);
}
