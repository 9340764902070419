/* tessera-registry.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-dynamic-resource.h>
#include <tessera/tessera-plugin-info.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_REGISTRY (tessera_registry_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraRegistry, tessera_registry, TESSERA, REGISTRY, GObject)

/**
 * TesseraRegistryClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.Registry], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraRegistry *tessera_registry_get_default            (void);
TESSERA_AVAILABLE_IN_ALL
TesseraRegistry *tessera_registry_new                    (const char * const *search_path);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_registry_get_search_path     (TesseraRegistry *self);
TESSERA_AVAILABLE_IN_ALL
GPtrArray       *tessera_registry_list_plugins           (TesseraRegistry *self);
TESSERA_AVAILABLE_IN_ALL
GType            tessera_registry_lookup_resource_type   (TesseraRegistry *self,
                                                          const char      *type_name,
                                                          GError         **error);
TESSERA_AVAILABLE_IN_ALL
GType            tessera_registry_lookup_lock_class      (TesseraRegistry *self,
                                                          const char      *module,
                                                          const char      *class_name,
                                                          GError         **error);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicResource *tessera_registry_create_resource (TesseraRegistry    *self,
                                                          const char         *type_name,
                                                          const char         *name,
                                                          const char * const *keys,
                                                          const char * const *values,
                                                          GError            **error);
TESSERA_AVAILABLE_IN_ALL
gboolean         tessera_registry_is_module_loaded       (TesseraRegistry *self,
                                                          const char      *module);

TESSERA_AVAILABLE_IN_ALL
void             tessera_registry_register_resource_type (const char      *type_name,
                                                          GType            type);
TESSERA_AVAILABLE_IN_ALL
GType            tessera_registry_lookup_process_type    (TesseraRegistry *self,
                                                          const char      *type_name,
                                                          GError         **error);
TESSERA_AVAILABLE_IN_ALL
void             tessera_registry_register_process_type  (const char      *type_name,
                                                          GType            type);

G_END_DECLS
