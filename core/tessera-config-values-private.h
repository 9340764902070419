/* tessera-config-values-private.h: a resource made from text settings,
 * for the registry; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

TesseraDynamicResource *
         _tessera_config_values_new_resource  (GType                type,
                                               const char          *type_name,
                                               const char          *name,
                                               const char * const  *keys,
                                               const char * const  *values,
                                               GError             **error);

G_END_DECLS
