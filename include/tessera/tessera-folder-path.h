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

/**
 * TESSERA_FOLDER_PATH_TEMPORARY_STALE_S:
 *
 * Seconds after which a temporary file of Tessera's atomic writer (see
 * [func@Tessera.folder_path_is_temporary_name]) that was not renamed
 * into place is left over from a writer killed half-way: none is busy
 * with one that long.
 */
#define TESSERA_FOLDER_PATH_TEMPORARY_STALE_S 60

TESSERA_AVAILABLE_IN_ALL
int tessera_folder_path_open (const char  *path,
                              GError     **error);

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_folder_path_may_make_folder (int          dir_fd,
                                              const char  *dir_path,
                                              const char  *name,
                                              GError     **error);

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_folder_path_is_temporary_name (const char *name,
                                                gboolean    lock_files_only);

G_END_DECLS
