/* tessera-plugin-info-private.h: reading a plugin manifest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The manifest @file_name of folder @dir, read without loading anything;
 * %NULL (with a warning) when it cannot be used. */
TesseraPluginInfo *_tessera_plugin_info_new_from_file (const char *dir,
                                                       const char *file_name);

G_END_DECLS
