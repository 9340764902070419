/* tessera-folder-io-private.h: file helpers of core/tessera-folder-io.c: a
 * stat's times, a user's name, sharing like the parent folder, OFD locks,
 * never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* File helpers (atomic writes and reads that follow no link: see
 * tessera-lock-folder-private.h) */
char    *_tessera_path_with_suffix    (const char  *path,
                                       const char  *suffix);
char    *_tessera_dup_user_name       (uid_t        uid);
gboolean _tessera_mkdir_with_parents  (const char  *path,
                                       GError     **error);
gint64   _tessera_stat_mtime_ns       (const struct stat *st);
gint64   _tessera_stat_ctime_ns       (const struct stat *st);

/* A name beside @name in @dir_fd that no one has: @name, a dot and six
 * random characters (in *@tmp, replaced), created read-write with O_EXCL,
 * never through a link, 0644 less the umask. The descriptor, or -1 with
 * errno. */
int      _tessera_create_temporary_at (int          dir_fd,
                                       const char  *name,
                                       char       **tmp);

/* An OFD lock on the whole file (F_RDLCK, F_WRLCK, F_UNLCK), retried on
 * EINTR; @wait: block until it is granted. */
int      _tessera_ofd_lock            (int          fd,
                                       short        type,
                                       gboolean     wait);

/* The mode the file or folder of stat @st has in a group's pool: a
 * folder group-readable and setgid, group-writable when @group_writes,
 * sticky when @sticky; a file group-readable, group-writable only when
 * both @group_writes and @writable_file (ipc.lock), else writable by its
 * owner only (no member rewrites another's). The one rule every part a
 * group's pool has is given by (share_like_parent, `tessera init
 * --group`, tessera_pool_part_share_with_group()). */
mode_t _tessera_group_share_mode (const struct stat *st,
                                  gboolean           group_writes,
                                  gboolean           writable_file,
                                  gboolean           sticky);

/* What we made in a group's folder shared like it (tessera-folder-io.c). */
void _tessera_share_like_parent (int fd, const char *path);
void _tessera_share_like_parent_writable (int fd, const char *path);

G_END_DECLS
