/* tessera-pool-part-sharing.c: a part of a folder pool given the mode
 * and group of a pool shared with a group, or those of a resource's
 * `mode=` and `group=`, only when it is this user's to give
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"

#include <errno.h>
#include <sys/stat.h>
#include <tessera/tessera.h>
#include <unistd.h>

/* Whether a part of a pool is ours to give a group or a mode: this
 * user's folder, or this user's regular file with no other link (a file
 * of ours linked there keeps its mode). Root's part (when this user is
 * not root), another user's, or anything else is left as it is. */
static gboolean
is_ours_to_share (int fd, struct stat *st)
{
  return fstat (fd, st) == 0 && st->st_uid == geteuid () &&
         (S_ISDIR (st->st_mode) || (S_ISREG (st->st_mode) && st->st_nlink == 1));
}

/**
 * tessera_pool_part_share_with_group:
 * @fd: a part of a pool (a folder or a file), opened without following
 *   a link
 * @gid: the group the pool is shared with
 * @writable_file: for a file: whether every member writes it (ipc.lock)
 * @sticky: for a folder: whether it is made sticky (only an entry's
 *   owner, root or the folder's owner then renames or removes it)
 *
 * Gives @fd, when it is this user's, to the group @gid as a pool shared
 * from the start (`tessera init --group`) has it, whatever the umask: a
 * folder group-writable and setgid; a file group-readable, and
 * group-writable only when @writable_file: no member rewrites another's.
 * What the library makes in a group's pool is given the same mode. Root's
 * part (when this user is not root), another user's, a file with other
 * links, or what is neither a folder nor a regular file is left as it is.
 *
 * Returns: 0, or the `errno` of the change that failed (the group is
 *   given first: the mode is not changed when it could not be)
 */
int
tessera_pool_part_share_with_group (int      fd,
                                    guint32  gid,
                                    gboolean writable_file,
                                    gboolean sticky)
{
  struct stat st;
  mode_t mode;

  g_return_val_if_fail (fd >= 0, EBADF);
  if (!is_ours_to_share (fd, &st))
    return 0;
  mode = _tessera_group_share_mode (&st, TRUE, writable_file, sticky);
  if ((st.st_gid != (gid_t) gid && fchown (fd, (uid_t) -1, (gid_t) gid) < 0) ||
      (mode != (st.st_mode & 07777) && fchmod (fd, mode) < 0))
    return errno;
  return 0;
}

/**
 * tessera_pool_part_give_settings:
 * @fd: a part of a resource's pool (its folder, a folder or a file in
 *   it), opened without following a link
 * @mode: the mode of the resource's `mode=` setting (a folder is given
 *   it, a file its read and write bits), or -1 to leave the mode
 * @gid: the group of its `group=` setting, or -1 to leave the group
 *
 * Gives @fd, when it is this user's, the mode and group a resource's
 * settings say, instead of what it took from the folder it is in. What
 * is left as it is is what [func@Tessera.pool_part_share_with_group]
 * leaves: root's part (when this user is not root), another user's, a
 * file with other links, or what is neither a folder nor a regular file.
 *
 * Returns: 0, or the `errno` of the change of group that failed (the
 *   mode is given all the same)
 */
int
tessera_pool_part_give_settings (int    fd,
                                 int    mode,
                                 gint64 gid)
{
  struct stat st;
  int saved = 0;

  g_return_val_if_fail (fd >= 0, EBADF);
  if (!is_ours_to_share (fd, &st))
    return 0;
  if (gid >= 0 && st.st_gid != (gid_t) gid && fchown (fd, (uid_t) -1, (gid_t) gid) < 0)
    saved = errno;
  /* Only a group not given is worth its caller's message: the parts
   * stay usable by their owner whatever their mode. */
  if (mode >= 0)
    (void) fchmod (fd, (mode_t) (S_ISDIR (st.st_mode) ? mode : mode & 0666));
  return saved;
}
