/* tessera-plugins.c: `tessera plugins`: the resource types, process
 * types and stores that can be loaded, and from where.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-options.h"

/* The names joined by ", ", or %NULL when there are none. */
static char *
join_names (const char * const *names)
{
  return names != NULL && names[0] != NULL ? g_strjoinv (", ", (char **) names) : NULL;
}

int
cmd_plugins (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (NULL, _("List the plugin folders, manifests, resource types and lock classes."), NULL);
  TesseraRegistry *registry = tessera_registry_get_default ();
  g_autoptr(GPtrArray) plugins = NULL;
  const char * const *path;
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  path = tessera_registry_get_search_path (registry);
  g_print ("%s\n", _("Plugin folders:"));
  for (guint i = 0; path[i] != NULL; i++)
    g_print ("  %s\n", path[i]);
  plugins = tessera_registry_list_plugins (registry);
  for (guint i = 0; i < plugins->len; i++)
    {
      TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
      g_autofree char *types = join_names (tessera_plugin_info_get_resource_types (info));
      g_autofree char *classes = join_names (tessera_plugin_info_get_classes (info));
      g_autofree char *process_types = join_names (tessera_plugin_info_get_process_types (info));
      g_autofree char *stores = join_names (tessera_plugin_info_get_stores (info));

      g_print ("\n%s — %s\n", tessera_plugin_info_get_module (info), tessera_plugin_info_get_name (info));
      g_print (_("  manifest: %s\n"), tessera_plugin_info_get_manifest_path (info));
      g_print (_("  module:   %s (%s)\n"), tessera_plugin_info_get_module_path (info),
               tessera_plugin_info_is_loaded (info) ? _("loaded")
               : !g_file_test (tessera_plugin_info_get_module_path (info), G_FILE_TEST_IS_REGULAR)
               ? _("module missing") : _("not loaded"));
      /* Only what the plugin provides: a plugin of process types or of
       * stores has no resource type nor class. */
      if (types != NULL)
        g_print (_("  types:    %s\n"), types);
      if (classes != NULL)
        g_print (_("  classes:  %s\n"), classes);
      if (process_types != NULL)
        g_print (_("  process types: %s\n"), process_types);
      if (stores != NULL)
        g_print (_("  stores:   %s\n"), stores);
    }
  return 0;
}
