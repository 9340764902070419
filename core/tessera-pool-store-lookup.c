/* tessera-pool-store-lookup.c: a store from a module, found by its name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The core knows a store by its name and its table
 * (tessera-pool-store-private.h) only. A plugin's manifest lists the
 * stores its module provides (`Stores=etcd`); the module is loaded the
 * first time a configuration names one of them (a user of folders never
 * loads it), and its entry point registers the class here. The name comes
 * from data: it only ever selects among manifests. */
#include "tessera-plugin-info-private.h"
#include "tessera-plugin-module-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"

static GMutex stores_mutex;
static GHashTable *stores;   /* name → const TesseraPoolStoreClass *, for the process's life */

void
_tessera_pool_store_register (const TesseraPoolStoreClass *klass)
{
  g_return_if_fail (klass != NULL && klass->name != NULL && klass->create != NULL);

  g_mutex_lock (&stores_mutex);
  if (stores == NULL)
    stores = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_replace (stores, (gpointer) klass->name, (gpointer) klass);
  g_mutex_unlock (&stores_mutex);
}

static const TesseraPoolStoreClass *
registered (const char *name)
{
  const TesseraPoolStoreClass *klass;

  g_mutex_lock (&stores_mutex);
  klass = stores != NULL ? g_hash_table_lookup (stores, name) : NULL;
  g_mutex_unlock (&stores_mutex);
  return klass;
}

/* The first plugin of the search path whose manifest lists store @name. */
static TesseraPluginInfo *
find_plugin (const char *name)
{
  g_autoptr(GPtrArray) plugins = tessera_registry_list_plugins (tessera_registry_get_default ());

  for (guint i = 0; i < plugins->len; i++)
    if (g_strv_contains (tessera_plugin_info_get_stores (g_ptr_array_index (plugins, i)), name))
      return g_object_ref (g_ptr_array_index (plugins, i));
  return NULL;
}

const TesseraPoolStoreClass *
_tessera_pool_store_lookup (const char *name, GError **error)
{
  g_autoptr(TesseraPluginInfo) info = NULL;
  const TesseraPoolStoreClass *klass;
  g_autoptr(GError) local = NULL;

  if (!tessera_check_plugin_name (name, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a store name"), name != NULL ? name : "");
      return NULL;
    }
  klass = registered (name);
  if (klass != NULL)
    return klass;
  info = find_plugin (name);
  if (info == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                   _("No plugin provides store “%s”"), name);
      return NULL;
    }
  if (!_tessera_plugin_module_ensure_loaded (tessera_plugin_info_get_module (info),
                                             tessera_plugin_info_get_module_path (info),
                                             tessera_plugin_info_get_manifest_path (info), error))
    return NULL;
  klass = registered (name);
  if (klass == NULL)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_PLUGIN_NOT_FOUND,
                 _("Plugin %s does not register store “%s”"), tessera_plugin_info_get_manifest_path (info), name);
  return klass;
}
