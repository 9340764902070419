/* tessera-folder-io-private.h: file helpers of core/tessera-folder-io.c:
 * atomic writes and bounded reads that follow no link, a stat's times, a
 * user's name, sharing like the parent folder, OFD locks, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sys/stat.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* Atomic writes and reads of every file of a pool, used by the other
 * units too. The *_at ones work in @dir_fd and follow no link; @path is
 * for messages. */
gboolean _tessera_write_file_atomic_at (int         dir_fd,
                                        const char *name,
                                        const char *path,
                                        const char *data,
                                        gssize      length,
                                        gboolean    durable,
                                        GError    **error);
/* The same, through a temporary file made in @tmp_fd (beside @name when
 * -1, or when @tmp_fd cannot be used), renamed into @dir_fd;
 * @tmp_unusable set when @tmp_fd is on another file system. */
gboolean _tessera_write_file_atomic_via (int         tmp_fd,
                                         int         dir_fd,
                                         const char *name,
                                         const char *path,
                                         const char *data,
                                         gboolean   *tmp_unusable,
                                         GError    **error);
gboolean _tessera_read_file_at        (int          dir_fd,
                                       const char  *name,
                                       const char  *path,
                                       char       **data,
                                       gsize       *length,
                                       struct stat *st,
                                       GError     **error);
/* A pool's subfolder @dir (jobs/, queue/): its parent opened as
 * configured (see _tessera_open_folder_path()), the subfolder never
 * through a link; -1 with errno set when it cannot be. */
int      _tessera_open_pool_subfolder (const char *dir);
/* An atomic write of @path, a file in such a subfolder, in its folder. */
gboolean _tessera_write_pool_file_atomic (const char  *path,
                                          const char  *data,
                                          GError     **error);
/* Removes such a file of this process's own, if it is a regular file,
 * never through a link: 0, or an errno (ENOENT: already gone). */
int      _tessera_unlink_pool_file    (const char  *path);
/* By path: the file's folder opened as given (the job's own files). */
gboolean _tessera_write_file_atomic   (const char  *path,
                                       const char  *data,
                                       gssize       length,
                                       gboolean     durable,
                                       GError     **error);
gboolean _tessera_read_file_nofollow  (const char  *path,
                                       char       **data,
                                       gsize       *length,
                                       struct stat *st,
                                       GError     **error);
/* Reads @name in @dir_fd (a path from AT_FDCWD): never through a link,
 * opened O_NONBLOCK, a regular file of at most @max bytes. Returns its
 * bytes, NUL-terminated (their number in @length), or NULL with errno set
 * (the open's; EINVAL: no regular file; EFBIG: more than @max). @st
 * (optional): what the opened file is, whenever it could be opened
 * (untouched else). */
char    *_tessera_read_bounded_at     (int          dir_fd,
                                       const char  *name,
                                       gsize        max,
                                       gsize       *length,
                                       struct stat *st);

/* A path with a suffix, a user's name, folders made with their
 * parents, a stat's times */
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
/* The same, the folder that holds it being @parent_fd (looked at through
 * it, not by @path's parent, which another folder may be by now). */
void _tessera_share_like_parent_at (int parent_fd, int fd, const char *path);

G_END_DECLS
