/* tessera-folder-path-private.h: a configured folder opened component by
 * component, following a link only where no other user could have put
 * it; for the library and the `tessera` command; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <tessera/tessera-folder-path.h>

G_BEGIN_DECLS

/* The most links followed on the way to one folder (the kernel's own
 * bound, MAXSYMLINKS). */
#define _TESSERA_FOLDER_PATH_MAX_LINKS 40

/* Opens the folder @path (a configured pool or resource folder, absolute
 * or from the current folder) one component at a time, with
 * openat(O_DIRECTORY | O_NOFOLLOW). A component that is a symbolic link
 * is followed (its target resolved the same way, at most
 * _TESSERA_FOLDER_PATH_MAX_LINKS links in all) only if no other user may
 * have put it there (OpenSSH's StrictModes idea): its folder is ours or
 * root's and neither group- nor other-writable, or it is sticky and the
 * link is ours, root's or the folder owner's (the kernel's
 * protected_symlinks rule). With @create, a missing component is made
 * (mode 0777 & ~umask) on the way, but not in a group's pool that is
 * another user's (see _tessera_may_make_folder_in()).
 *
 * Returns the folder's descriptor, or -1 with errno set and @error set
 * (G_IO_ERROR; a link refused: G_IO_ERROR_PERMISSION_DENIED and errno
 * EPERM, with a one-line message naming the link). */
int _tessera_open_folder_path (const char  *path,
                               gboolean     create,
                               GError     **error);

/* How the folder of stat @st is shared with its group (the rule of
 * tessera_folder_path_get_sharing(), for a unit that has the stat). */
TesseraFolderSharing _tessera_folder_sharing_of (const struct stat *st);

/* Whether this user may make the folder @name in the folder @dir_fd
 * (@dir_path, for the message): not in a group's pool that `tessera init
 * --group` prepared (setgid, sticky, writable by its group and not by
 * everyone) and that is neither ours nor are we root. There only the
 * pool's owner makes a resource's folders: a member who made one would
 * own it, and could remove the other members' entries in it. FALSE, with
 * @error (G_IO_ERROR_PERMISSION_DENIED) saying to run init, when not. */
gboolean _tessera_may_make_folder_in (int          dir_fd,
                                      const char  *dir_path,
                                      const char  *name,
                                      GError     **error);

/* Whether an entry of a resource's pool (@st, of @path: the resource's
 * folder, its informations.json) may be believed, @pool_fd being the
 * folder that holds the resource's folder: always, but in a group's pool
 * (see _tessera_may_make_folder_in()), where only root's and the pool
 * folder's owner's are: a member's would let her set the capacity, or own
 * the resource. FALSE, with @error (G_IO_ERROR_PERMISSION_DENIED) naming
 * @path and its owner, when not. */
gboolean _tessera_owner_believed_in (int                pool_fd,
                                     const struct stat *st,
                                     const char        *path,
                                     GError           **error);

G_END_DECLS
