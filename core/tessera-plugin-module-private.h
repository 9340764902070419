/* tessera-plugin-module-private.h: the GTypeModule that loads a plugin
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* Loads @module_name from @module_path (a manifest's, named in messages by
 * @manifest_path) the first time, and never unloads it. */
gboolean _tessera_plugin_module_ensure_loaded (const char  *module_name,
                                               const char  *module_path,
                                               const char  *manifest_path,
                                               GError     **error);
gboolean _tessera_plugin_module_is_loaded     (const char  *module_name);

G_END_DECLS
