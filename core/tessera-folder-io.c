/* tessera-folder-io.c: reads and atomic writes in a pool's folders,
 * through directory descriptors, never through a link; what is made
 * there shared like its folder; a file's times and owner's name, folders
 * made with their parents, OFD locks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-folder-path-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

int
_tessera_create_temporary_at (int dir_fd, const char *name, char **tmp)
{
  static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  for (int attempt = 0; attempt < 100; attempt++)
    {
      char suffix[7];
      int fd;

      for (int i = 0; i < 6; i++)
        suffix[i] = letters[g_random_int_range (0, (gint32) sizeof letters - 1)];
      suffix[6] = '\0';
      g_free (*tmp);
      *tmp = g_strconcat (name, ".", suffix, NULL);
      /* 0644 & ~umask: readable by the other users of a shared folder. */
      fd = openat (dir_fd, *tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd >= 0 || errno != EEXIST)
        return fd;
    }
  errno = EEXIST;
  return -1;
}

/* Writes @name in @dir_fd through a temporary file made in @tmp_fd (our
 * own folder, whose files no watcher of jobs/ hears about), or beside
 * @name when there is none or it cannot be used. */
static gboolean
write_file_atomic (int          tmp_fd,
                   int          dir_fd,
                   const char  *name,
                   const char  *path,
                   const char  *data,
                   gssize       length,
                   gboolean     durable,
                   gboolean    *tmp_unusable,
                   GError     **error)
{
  g_autofree char *tmp = NULL;
  const char *left_data = data;
  gsize left = length < 0 ? strlen (data) : (gsize) length;
  int fd, saved;

  fd = tmp_fd >= 0 ? _tessera_create_temporary_at (tmp_fd, name, &tmp) : -1;
  if (fd < 0)
    {
      /* Our folder gone or unusable: beside the file, as a peer would. */
      tmp_fd = dir_fd;
      fd = _tessera_create_temporary_at (dir_fd, name, &tmp);
    }
  if (fd < 0)
    {
      saved = errno;
      _tessera_set_io_error (error, saved, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  /* In a group's pool, the group's whatever the umask: its other users
   * read informations.json and the lock files. Its folder is looked at
   * through @dir_fd: no path walked from / at every write. */
  _tessera_share_like_parent_at (dir_fd, fd, path);
  while (left > 0)
    {
      gssize n = write (fd, left_data, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        goto fail;
      left_data += n;
      left -= (gsize) n;
    }
  if (durable && fsync (fd) < 0)
    goto fail;
  if (close (fd) < 0)
    {
      fd = -1;
      goto fail;
    }
  fd = -1;
  /* The race tests hold a writer between its temporary file and the
   * rename: a host's heartbeat renewal, or any other write. */
  _tessera_pause_point (g_str_has_suffix (name, _TESSERA_POOL_HOST_LEASE) ? "heartbeat-renaming" : "atomic-write-renaming");
  if (renameat (tmp_fd, tmp, dir_fd, name) < 0)
    {
      /* Our folder on another file system than @dir_fd (a mount between
       * them): write beside the file instead. */
      if (errno == EXDEV && tmp_fd != dir_fd)
        {
          unlinkat (tmp_fd, tmp, 0);
          if (tmp_unusable != NULL)
            *tmp_unusable = TRUE;
          return write_file_atomic (-1, dir_fd, name, path, data, length, durable, NULL, error);
        }
      goto fail;
    }
  if (durable)
    fsync (dir_fd);
  return TRUE;

fail:
  saved = errno ? errno : EIO;
  if (fd >= 0)
    close (fd);
  unlinkat (tmp_fd, tmp, 0);
  _tessera_set_io_error (error, saved, _("Cannot write %s: %s"), path);
  return FALSE;
}

gboolean
_tessera_write_file_atomic_at (int          dir_fd,
                               const char  *name,
                               const char  *path,
                               const char  *data,
                               gssize       length,
                               gboolean     durable,
                               GError     **error)
{
  return write_file_atomic (-1, dir_fd, name, path, data, length, durable, NULL, error);
}

gboolean
_tessera_write_file_atomic_via (int          tmp_fd,
                                int          dir_fd,
                                const char  *name,
                                const char  *path,
                                const char  *data,
                                gboolean    *tmp_unusable,
                                GError     **error)
{
  return write_file_atomic (tmp_fd, dir_fd, name, path, data, -1, FALSE, tmp_unusable, error);
}

/* Atomic always: the data goes to "path." plus a random suffix, then a
 * rename, so the temporary name never ends in ".json" (peers globbing jobs/
 * never see a half-written holder, and a writer killed half-way leaves no
 * empty lock file) and rename() replaces a symlink instead of following it.
 * (GLib's g_file_set_contents_full() writes in place unless asked for
 * CONSISTENT, which also fsyncs every overwrite.)
 *
 * Durable (fsync) only for what must outlive a crash of the machine:
 * informations.json. A lock file, a .pid or a locks.json names processes
 * that a reboot kills anyway (and the boot id tells), so syncing them
 * would only slow every acquire down.
 *
 * By path, for the job's own files (.pid, locks.json): their folder is
 * opened as given, links included. */
gboolean
_tessera_write_file_atomic (const char  *path,
                            const char  *data,
                            gssize       length,
                            gboolean     durable,
                            GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *name = g_path_get_basename (path);
  int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  if (dir_fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  ok = _tessera_write_file_atomic_at (dir_fd, name, path, data, length, durable, error);
  close (dir_fd);
  return ok;
}

/* @dir, a pool's subfolder (jobs/, queue/): its parent, the pool's
 * folder, is opened as configured (a link followed only where no other
 * user could have put it), the subfolder itself never through a link. */
int
_tessera_open_pool_subfolder (const char *dir)
{
  g_autofree char *parent = g_path_get_dirname (dir);
  g_autofree char *base = g_path_get_basename (dir);
  int parent_fd = _tessera_open_folder_path (parent, FALSE, NULL);
  int fd, saved;

  if (parent_fd < 0)
    return -1;
  fd = openat (parent_fd, base, DIR_FLAGS);
  saved = errno;
  close (parent_fd);
  errno = saved;
  return fd;
}

/* The folder of @path, a file in a pool's subfolder (jobs/NAME.json,
 * queue/NAME.json). */
static int
open_pool_file_folder (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);

  return _tessera_open_pool_subfolder (dir);
}

gboolean
_tessera_write_pool_file_atomic (const char  *path,
                                 const char  *data,
                                 GError     **error)
{
  g_autofree char *name = g_path_get_basename (path);
  int dir_fd = open_pool_file_folder (path);
  gboolean ok;

  if (dir_fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  ok = _tessera_write_file_atomic_at (dir_fd, name, path, data, -1, FALSE, error);
  close (dir_fd);
  return ok;
}

int
_tessera_unlink_pool_file (const char *path)
{
  g_autofree char *name = g_path_get_basename (path);
  int dir_fd = open_pool_file_folder (path);
  struct stat st;
  int result = 0;

  if (dir_fd < 0)
    return errno;
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    result = errno;
  else if (!S_ISREG (st.st_mode))
    result = EPERM;
  else if (unlinkat (dir_fd, name, 0) < 0)
    result = errno;
  close (dir_fd);
  return result;
}

gboolean
_tessera_read_file_at (int          dir_fd,
                       const char  *name,
                       const char  *path,
                       char       **data,
                       gsize       *length,
                       struct stat *st,
                       GError     **error)
{
  int fd;
  struct stat local_st;
  GString *buf;
  char chunk[8192];

  fd = openat (dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      int saved = errno;
      if (saved == ENOENT)
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                     _("%s does not exist"), path);
      else if (saved == ELOOP)
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                     _("%s is a symbolic link; refusing to follow it"), path);
      else
        _tessera_set_io_error (error, saved, _("Cannot open %s: %s"), path);
      return FALSE;
    }
  if (fstat (fd, &local_st) < 0 || !S_ISREG (local_st.st_mode))
    {
      close (fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("%s is not a regular file"), path);
      return FALSE;
    }
  buf = g_string_sized_new (local_st.st_size + 1);
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved = errno;
          close (fd);
          g_string_free (buf, TRUE);
          _tessera_set_io_error (error, saved, _("Cannot read %s: %s"), path);
          return FALSE;
        }
      if (n == 0)
        break;
      g_string_append_len (buf, chunk, n);
      /* Lock files are tiny; refuse to slurp something huge and hostile. */
      if (buf->len > 16 * 1024 * 1024)
        {
          close (fd);
          g_string_free (buf, TRUE);
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                       _("%s is too large"), path);
          return FALSE;
        }
    }
  close (fd);
  if (st != NULL)
    *st = local_st;
  if (length != NULL)
    *length = buf->len;
  *data = g_string_free (buf, FALSE);
  return TRUE;
}

gboolean
_tessera_read_file_nofollow (const char  *path,
                             char       **data,
                             gsize       *length,
                             struct stat *st,
                             GError     **error)
{
  return _tessera_read_file_at (AT_FDCWD, path, path, data, length, st, error);
}

char *
_tessera_read_bounded_at (int          dir_fd,
                          const char  *name,
                          gsize        max,
                          gsize       *length,
                          struct stat *st)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat local_st;
  gsize got = 0;
  char *buffer;
  int saved;

  if (fd < 0)
    return NULL;
  if (fstat (fd, &local_st) < 0)
    {
      saved = errno;
      close (fd);
      errno = saved;
      return NULL;
    }
  if (st != NULL)
    *st = local_st;
  if (!S_ISREG (local_st.st_mode) || (guint64) local_st.st_size > max)
    {
      close (fd);
      errno = S_ISREG (local_st.st_mode) ? EFBIG : EINVAL;
      return NULL;
    }
  /* One byte more than allowed: a file that grew past @max shows it. */
  buffer = g_malloc (max + 2);
  while (got < max + 1)
    {
      gssize n = read (fd, buffer + got, max + 1 - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          saved = errno;
          close (fd);
          g_free (buffer);
          errno = saved;
          return NULL;
        }
      if (n == 0)
        break;
      got += (gsize) n;
    }
  close (fd);
  if (got > max)
    {
      g_free (buffer);
      errno = EFBIG;
      return NULL;
    }
  buffer[got] = '\0';
  if (length != NULL)
    *length = got;
  return buffer;
}

gint64
_tessera_stat_mtime_ns (const struct stat *st)
{
  return (gint64) st->st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_mtim.tv_nsec;
}

gint64
_tessera_stat_ctime_ns (const struct stat *st)
{
  return (gint64) st->st_ctim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_ctim.tv_nsec;
}

/* The name of the user @uid, else her number (for messages and logs;
 * thread-safe, unlike getpwuid()). */
char *
_tessera_dup_user_name (uid_t uid)
{
  struct passwd pw, *found = NULL;
  char buffer[4096];

  if (getpwuid_r (uid, &pw, buffer, sizeof buffer, &found) == 0 && found != NULL)
    return g_strdup (found->pw_name);
  return g_strdup_printf ("%u", (unsigned) uid);
}

/* Python's PurePath.with_suffix(): experimaestro derives "<job>.lock" and
 * "<job>.pid" this way, so "a/b.c" gives "a/b.lock", not "a/b.c.lock". */
char *
_tessera_path_with_suffix (const char *path,
                           const char *suffix)
{
  const char *base = strrchr (path, '/');
  const char *dot;
  gsize stem_len;

  base = base ? base + 1 : path;
  dot = strrchr (base, '.');
  if (dot != NULL && dot != base && dot[1] != '\0')
    stem_len = dot - path;
  else
    stem_len = strlen (path);
  return g_strdup_printf ("%.*s%s", (int) stem_len, path, suffix);
}

mode_t
_tessera_group_share_mode (const struct stat *st,
                           gboolean           group_writes,
                           gboolean           writable_file,
                           gboolean           sticky)
{
  gboolean dir = S_ISDIR (st->st_mode);
  mode_t add = S_IRGRP | (group_writes && (dir || writable_file) ? S_IWGRP : 0) |
               (dir ? S_IXGRP | S_ISGID | (sticky ? S_ISVTX : 0) : 0);
  /* Only its owner writes a file another member may read. */
  mode_t drop = dir || writable_file ? 0 : S_IWGRP | S_IWOTH;

  return ((st->st_mode & 07777) | add) & ~drop;
}

/* A pool shared by the users of a group lives in a group-writable (and
 * usually setgid and sticky) folder: what Tessera creates there must be
 * usable by the others whatever the creator's umask, and no member may
 * rewrite another's. So what we just created in a group-writable folder
 * takes that folder's group; a folder takes its group bits, setgid, and
 * its sticky bit when the parent has one (nobody but an entry's owner,
 * root or the folder's owner renames or deletes it); a file is readable
 * by the group and writable by its owner only (a lock file, whose count
 * another member must not change), unless @writable (ipc.lock, which
 * every user opens for writing). In a setgid folder the group may only
 * read (a job folder of `tessera run` for a shared pool, whose job lock
 * the pool's other users probe), what we create is readable by the
 * group. Nothing happens elsewhere, nor to a file we do not own. @fd may
 * be -1: @path is then opened (never followed). @sticky: whether a
 * folder inherits the sticky bit. @parent_fd: the folder that holds it,
 * or -1: @path's parent is then looked at by its path. */
static void
share_like_parent (int         parent_fd,
                   int         fd,
                   const char *path,
                   gboolean    writable_file,
                   gboolean    sticky)
{
  g_autofree char *parent = g_path_get_dirname (path);
  const mode_t readable = S_ISGID | S_IRGRP | S_IXGRP;
  struct stat pst, st;
  gboolean writable;
  int own_fd = -1;

  if ((parent_fd >= 0 ? fstat (parent_fd, &pst) : stat (parent, &pst)) < 0)
    return;
  writable = _tessera_folder_sharing_of (&pst) != TESSERA_FOLDER_SHARING_NONE;
  if (!writable && (pst.st_mode & readable) != readable)
    return;
  if (fd < 0)
    fd = own_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return;
  if (fstat (fd, &st) == 0 && st.st_uid == geteuid () && (S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)))
    {
      mode_t mode = _tessera_group_share_mode (&st, writable, writable_file,
                                               sticky && (pst.st_mode & S_ISVTX) != 0);

      /* Not a member of that group: the folder's setgid bit did it already,
       * or nothing can. */
      if (st.st_gid != pst.st_gid && fchown (fd, (uid_t) -1, pst.st_gid) < 0)
        g_debug ("Cannot give %s the group of %s: %s", path, parent, g_strerror (errno));
      if (mode != (st.st_mode & 07777) && fchmod (fd, mode) < 0)
        g_debug ("Cannot open %s to the group of %s: %s", path, parent, g_strerror (errno));
    }
  if (own_fd >= 0)
    close (own_fd);
}

void
_tessera_share_like_parent (int         fd,
                            const char *path)
{
  share_like_parent (-1, fd, path, FALSE, TRUE);
}

void
_tessera_share_like_parent_at (int         parent_fd,
                               int         fd,
                               const char *path)
{
  share_like_parent (parent_fd, fd, path, FALSE, TRUE);
}

/* The same for a file every user of the pool opens for writing
 * (ipc.lock): writable by the group too. */
void
_tessera_share_like_parent_writable (int         fd,
                                     const char *path)
{
  share_like_parent (-1, fd, path, TRUE, TRUE);
}

gboolean
_tessera_mkdir_with_parents (const char  *path,
                             GError     **error)
{
  if (g_mkdir_with_parents (path, 0777) < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot create the folder %s: %s"), path);
      return FALSE;
    }
  return TRUE;
}

/* An OFD lock on the whole file, retried on EINTR: @wait blocks. */
int
_tessera_ofd_lock (int fd, short type, gboolean wait)
{
  struct flock fl = { 0 };

  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  for (;;)
    {
      int r = fcntl (fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
      if (r == 0 || errno != EINTR)
        return r;
    }
}
