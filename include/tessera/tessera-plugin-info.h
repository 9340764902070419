/* tessera-plugin-info.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_PLUGIN_INFO (tessera_plugin_info_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraPluginInfo, tessera_plugin_info, TESSERA, PLUGIN_INFO, GObject)

/**
 * TesseraPluginInfoClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.PluginInfo], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
const char         *tessera_plugin_info_get_module         (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_plugin_info_get_name           (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_plugin_info_get_manifest_path  (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_plugin_info_get_module_path    (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_plugin_info_get_resource_types (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_plugin_info_get_classes        (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_plugin_info_get_process_types  (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_plugin_info_get_stores         (TesseraPluginInfo *self);
TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_plugin_info_is_loaded          (TesseraPluginInfo *self);

TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_check_plugin_name              (const char        *name,
                                                            GError           **error);

G_END_DECLS
