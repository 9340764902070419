/* tessera-registry-path.c: where the default registry looks for plugin
 * manifests, each folder once, by its real path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <tessera/tessera.h>
#include "tessera-registry-private.h"

#include <dlfcn.h>
#include <stdlib.h>

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

/* Adds @folder to @builder by its real path (a ".." or a link resolved, as
 * the library's own <libdir>/../ path from its rpath is), once: a folder
 * reached by several paths is listed and searched once. A folder that
 * cannot be resolved (not there yet) has its ".." and "." taken away as
 * written. */
static void
add_plugin_folder (GStrvBuilder *builder,
                   GHashTable   *added,
                   const char   *folder)
{
  g_autofree char *resolved = realpath (folder, NULL);
  char *path = resolved != NULL ? g_steal_pointer (&resolved) : g_canonicalize_filename (folder, NULL);

  if (g_hash_table_add (added, path))
    g_strv_builder_add (builder, path);
}

char **
_tessera_registry_default_search_path (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) added = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  const char *env = g_getenv ("TESSERA_PLUGIN_PATH");
  g_autofree char *relocated = NULL;

  if (env != NULL)
    {
      g_auto(GStrv) parts = g_strsplit (env, ":", -1);
      for (guint i = 0; parts[i] != NULL; i++)
        if (*parts[i] != '\0')
          add_plugin_folder (builder, added, parts[i]);
    }
  relocated = relocated_plugindir ();
  if (relocated != NULL)
    add_plugin_folder (builder, added, relocated);
  add_plugin_folder (builder, added, TESSERA_PLUGINDIR);
  return g_strv_builder_end (builder);
}
