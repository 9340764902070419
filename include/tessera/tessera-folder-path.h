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

/**
 * TesseraFolderSharing:
 * @TESSERA_FOLDER_SHARING_NONE: its group may not write in it: a private
 *   folder
 * @TESSERA_FOLDER_SHARING_EVERYONE: its group may write in it, and so
 *   may everyone (as in `/tmp`)
 * @TESSERA_FOLDER_SHARING_GROUP: its group may write in it, and no one
 *   else: a group's folder
 * @TESSERA_FOLDER_SHARING_GROUP_PREPARED: a group's folder as `tessera
 *   init --group` prepares it: setgid and sticky too
 *
 * How a folder of a pool (a pool's folder, a resource's) is shared with
 * other users, from the least to the most particular
 * ([func@Tessera.folder_path_get_sharing]): what Tessera makes in a
 * group-writable folder is given to its group; in a group's folder
 * (%TESSERA_FOLDER_SHARING_GROUP or more) its owner administers the
 * pool; in one that `tessera init --group` prepared, a member makes no
 * folder and only root's and the owner's files are believed.
 */
typedef enum {
  TESSERA_FOLDER_SHARING_NONE,
  TESSERA_FOLDER_SHARING_EVERYONE,
  TESSERA_FOLDER_SHARING_GROUP,
  TESSERA_FOLDER_SHARING_GROUP_PREPARED,
} TesseraFolderSharing;

/**
 * TesseraFolderPathStepFunc:
 * @folder_fd: a folder on the way, open for reading (not to close)
 * @path: its path
 * @user_data: the data given with the function
 *
 * What [func@Tessera.folder_path_open_below] does to each folder on its
 * way down.
 *
 * Returns: %TRUE to go on, %FALSE to stop the walk there
 */
typedef gboolean (*TesseraFolderPathStepFunc) (int         folder_fd,
                                               const char *path,
                                               gpointer    user_data);

TESSERA_AVAILABLE_IN_ALL
int tessera_folder_path_open (const char  *path,
                              GError     **error);

TESSERA_AVAILABLE_IN_ALL
int tessera_folder_path_open_below (int                        folder_fd,
                                    const char                *folder_path,
                                    const char                *below,
                                    TesseraFolderPathStepFunc  step,
                                    gpointer                   user_data,
                                    GError                   **error);

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_folder_path_may_make_folder (int          dir_fd,
                                              const char  *dir_path,
                                              const char  *name,
                                              GError     **error);

TESSERA_AVAILABLE_IN_ALL
TesseraFolderSharing tessera_folder_path_get_sharing (int folder_fd);

TESSERA_AVAILABLE_IN_ALL
gint64 tessera_folder_path_get_pool_owner (const char *folder);

TESSERA_AVAILABLE_IN_ALL
gboolean tessera_folder_path_is_temporary_name (const char *name,
                                                gboolean    lock_files_only);

G_END_DECLS
