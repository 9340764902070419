/* tessera-settings.h: a resource's settings written as text, as a
 * `[resource NAME]` group of a key file writes them
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

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_settings_value_from_keyfile (GKeyFile     *keyfile,
                                              const char   *group,
                                              const char   *key,
                                              GParamSpec   *pspec,
                                              GValue       *value,
                                              GError      **error);
TESSERA_AVAILABLE_IN_ALL
gboolean tessera_settings_value_from_string  (GParamSpec   *pspec,
                                              const char   *text,
                                              GValue       *value,
                                              GError      **error);

G_END_DECLS
