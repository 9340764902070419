/* tessera-registry-private.h: the registry's (module, class) table, for the
 * dependency lock (which calls the registry, never the other way round),
 * the process types' instances, for the process, and the default search
 * path
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* (@module, @class_name) from locks.json stands for @type; the first pair
 * registered for a type is the one it writes. Names already checked. */
void     _tessera_registry_register_lock_class (GType        type,
                                                const char  *module,
                                                const char  *class_name);
/* The pair @type writes, as two strings that live as long as the process;
 * %FALSE when @type was never registered. */
gboolean _tessera_registry_lock_class_name     (GType        type,
                                                const char **module,
                                                const char **class_name);
/* The one instance of the process type @type_name, made at its first use
 * (by the default registry, which loads its plugin) and kept; NULL when no
 * plugin provides it. */
TesseraProcessType *_tessera_registry_process_type_for (const char *type_name);
/* The default registry's search path: TESSERA_PLUGIN_PATH, the folder
 * beside the loaded library, the configured one; each folder by its real
 * path, once (tessera-registry-path.c). */
char   **_tessera_registry_default_search_path (void);

G_END_DECLS
