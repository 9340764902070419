/* tessera-config-values-private.h: keyfile values as property values, for
 * the registry (a resource made from text settings) and the `tessera`
 * command's configuration; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

gboolean _tessera_config_value_from_keyfile   (GKeyFile            *keyfile,
                                               const char          *group,
                                               const char          *key,
                                               GParamSpec          *pspec,
                                               GValue              *value,
                                               GError             **error);
gboolean _tessera_config_value_from_string    (GParamSpec          *pspec,
                                               const char          *text,
                                               GValue              *value,
                                               GError             **error);
TesseraDynamicResource *
         _tessera_config_values_new_resource  (GType                type,
                                               const char          *type_name,
                                               const char          *name,
                                               const char * const  *keys,
                                               const char * const  *values,
                                               GError             **error);

G_END_DECLS
