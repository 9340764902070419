/* tessera-folder-path.h: a configured folder opened without following a
 * link that another user could have put on the way
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

TESSERA_AVAILABLE_IN_ALL
int tessera_folder_path_open (const char  *path,
                              GError     **error);

G_END_DECLS
