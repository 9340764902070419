/* tessera-plugin-module.c: the GTypeModule that loads a plugin's code
 *
 * One final GTypeModule per module name, kept for the process's life,
 * since GTypes registered by a module outlive any unloading. `load` opens
 * the module with local linkage, calls its entry point
 * `tessera_<module>_register_types (GTypeModule *)` and makes it resident;
 * `unload` does nothing (libpeas's `PeasObjectModule`, GIO's `GIOModule`).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-plugin-module-private.h"
#include "tessera-private.h"

#include <gmodule.h>
#include <string.h>
#include <tessera/tessera.h>

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

gboolean
_tessera_plugin_module_is_loaded (const char *module_name)
{
  TesseraPluginModule *module;
  gboolean loaded;

  g_rec_mutex_lock (&modules_mutex);
  module = modules ? g_hash_table_lookup (modules, module_name) : NULL;
  loaded = module != NULL && module->in_use;
  g_rec_mutex_unlock (&modules_mutex);
  return loaded;
}

gboolean
_tessera_plugin_module_ensure_loaded (const char  *module_name,
                                      const char  *module_path,
                                      const char  *manifest_path,
                                      GError     **error)
{
  TesseraPluginModule *module;
  gboolean ok = TRUE;

  g_rec_mutex_lock (&modules_mutex);
  if (modules == NULL)
    modules = g_hash_table_new (g_str_hash, g_str_equal);
  module = g_hash_table_lookup (modules, module_name);
  if (module == NULL)
    {
      module = g_object_new (TESSERA_TYPE_PLUGIN_MODULE, NULL);
      module->module_name = g_strdup (module_name);
      module->path = g_strdup (module_path);
      g_type_module_set_name (G_TYPE_MODULE (module), module_name);
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
                       module->path, manifest_path, module->error ? module->error : "?");
          ok = FALSE;
        }
    }
  g_rec_mutex_unlock (&modules_mutex);
  return ok;
}
