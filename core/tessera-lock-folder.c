/* tessera-lock-folder.c: a pool's lock folder on disk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-folder-path-private.h"
#include "tessera-host-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-temporary-name-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef NFS_SUPER_MAGIC
#define NFS_SUPER_MAGIC 0x6969
#endif

struct _TesseraLockFolder
{
  char *path;
  char *jobs_path;
  char *ipc_path;
  char *info_path;
  /* The pool's folder, opened once (a link in the configured path is
   * followed there only where no other user could have put it, never
   * below it); -1 until it exists. */
  int fd;
  /* Our own folder for the temporary files of lock files (see
   * writer_tmp_fd()): TMP_UNTRIED until the first write, -1 when it
   * cannot be used. */
  int tmp_fd;
};

#define TMP_UNTRIED (-2)

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

TesseraLockFolder *
_tessera_lock_folder_new (const char *path)
{
  TesseraLockFolder *folder = g_new0 (TesseraLockFolder, 1);

  folder->path = g_strdup (path);
  folder->jobs_path = g_build_filename (path, _TESSERA_POOL_JOBS, NULL);
  folder->ipc_path = g_build_filename (path, _TESSERA_POOL_IPC_LOCK, NULL);
  folder->info_path = g_build_filename (path, _TESSERA_POOL_INFORMATIONS, NULL);
  folder->fd = -1;
  folder->tmp_fd = TMP_UNTRIED;
  return folder;
}

void
_tessera_lock_folder_free (TesseraLockFolder *folder)
{
  if (folder == NULL)
    return;
  g_free (folder->path);
  g_free (folder->jobs_path);
  g_free (folder->ipc_path);
  g_free (folder->info_path);
  if (folder->fd >= 0)
    close (folder->fd);
  if (folder->tmp_fd >= 0)
    close (folder->tmp_fd);
  g_free (folder);
}

const char *
_tessera_lock_folder_get_path (TesseraLockFolder *folder)
{
  return folder->path;
}

const char *
_tessera_lock_folder_get_jobs_path (TesseraLockFolder *folder)
{
  return folder->jobs_path;
}

const char *
_tessera_lock_folder_get_informations_path (TesseraLockFolder *folder)
{
  return folder->info_path;
}

char *
_tessera_lock_folder_dup_job_path (TesseraLockFolder *folder,
                                   const char        *name)
{
  return g_build_filename (folder->jobs_path, name, NULL);
}

/* Everything below it goes through this descriptor and *at() calls that
 * follow no link. With @create, the folder and its missing parents are
 * made on the way. */
static int
open_folder (TesseraLockFolder *folder, gboolean create, GError **error)
{
  int fd = g_atomic_int_get (&folder->fd);

  if (fd >= 0)
    return fd;
  /* The monitors may ask from their own thread: one opening wins. */
  fd = _tessera_open_folder_path (folder->path, create, error);
  if (fd >= 0 && !g_atomic_int_compare_and_exchange (&folder->fd, -1, fd))
    {
      close (fd);
      fd = g_atomic_int_get (&folder->fd);
    }
  return fd;
}

static int
folder_fd (TesseraLockFolder *folder)
{
  return open_folder (folder, FALSE, NULL);
}

int
_tessera_lock_folder_get_fd (TesseraLockFolder *folder)
{
  return folder_fd (folder);
}

/* jobs/, made in the pool's folder (or there already), with a group
 * folder's group and bits. */
static gboolean
make_jobs (TesseraLockFolder *folder, GError **error)
{
  int dir_fd = folder_fd (folder);
  int jobs_fd;
  struct stat st;

  /* A member makes no jobs/ in a group's pool (she would own it). */
  if (dir_fd >= 0 && fstatat (dir_fd, _TESSERA_POOL_JOBS, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
      !_tessera_may_make_folder_in (dir_fd, folder->path, _TESSERA_POOL_JOBS, error))
    return FALSE;
  if (dir_fd < 0 || (mkdirat (dir_fd, _TESSERA_POOL_JOBS, 0777) < 0 && errno != EEXIST))
    {
      _tessera_set_io_error (error, errno, _("Cannot create %s: %s"), folder->jobs_path);
      return FALSE;
    }
  jobs_fd = openat (dir_fd, _TESSERA_POOL_JOBS, DIR_FLAGS);
  if (jobs_fd >= 0)
    {
      _tessera_share_like_parent (jobs_fd, folder->jobs_path);
      close (jobs_fd);
    }
  return TRUE;
}

/* Whether @st, the pool's folder @fd or an entry of it (@path, for
 * messages), may be believed: in a group's pool, only root's and the
 * pool's owner's are. */
static gboolean
believed (int fd, const struct stat *st, const char *path, GError **error)
{
  int parent;
  gboolean ok;

  /* Root's is believed in any pool (see _tessera_owner_believed_in()):
   * no need to look at the folder that holds it, at every grant. */
  if (st->st_uid == 0)
    return TRUE;
  /* The folder that holds the pool's folder, as it is now. */
  parent = openat (fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0)
    return TRUE;
  ok = _tessera_owner_believed_in (parent, st, path, error);
  close (parent);
  return ok;
}

/* The pool's folder, opened as @fd: a member's in a group's pool is
 * believed by nobody (she would own the resource). */
static gboolean
folder_believed (TesseraLockFolder *folder, int fd, GError **error)
{
  struct stat st;

  return fstat (fd, &st) < 0 || believed (fd, &st, folder->path, error);
}

gboolean
_tessera_lock_folder_create (TesseraLockFolder  *folder,
                             GError            **error)
{
  int fd = open_folder (folder, TRUE, error);

  if (fd < 0 || !folder_believed (folder, fd, error))
    return FALSE;
  /* In a group's shared folder, the pool is the group's (see
   * _tessera_share_like_parent: only what we own, only when needed). */
  _tessera_share_like_parent (fd, folder->path);
  return make_jobs (folder, error);
}

gboolean
_tessera_lock_folder_open (TesseraLockFolder  *folder,
                           GError            **error)
{
  g_autoptr(GError) local = NULL;

  int fd = open_folder (folder, FALSE, &local);

  if (fd >= 0)
    return folder_believed (folder, fd, error);
  if (errno != EPERM)
    return TRUE;
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

gboolean
_tessera_lock_folder_is_local (TesseraLockFolder *folder)
{
  return _tessera_fs_is_local (folder->path);
}

/* ipc.lock: flock + OFD write lock, re-opened when a peer unlinked it
 * (at the end of this file). */
static int ipc_lock_acquire_at        (int dir_fd, const char *name, const char *path, GError **error);
static int ipc_lock_acquire_shared_at (int dir_fd, const char *name, const char *path);
static void ipc_lock_release          (int fd);

int
_tessera_lock_folder_lock (TesseraLockFolder  *folder,
                           gboolean            shared,
                           GError            **error)
{
  int dir_fd = folder_fd (folder);

  if (dir_fd < 0)
    {
      if (!shared)
        _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), folder->ipc_path);
      return -1;
    }
  if (shared)
    return ipc_lock_acquire_shared_at (dir_fd, _TESSERA_POOL_IPC_LOCK, folder->ipc_path);
  return ipc_lock_acquire_at (dir_fd, _TESSERA_POOL_IPC_LOCK, folder->ipc_path, error);
}

void
_tessera_lock_folder_unlock (int fd)
{
  ipc_lock_release (fd);
}

/* ---------------------------------------------------------------------- */
/* jobs/ */

gboolean
_tessera_lock_folder_stat_jobs (TesseraLockFolder *folder,
                                struct stat       *st)
{
  int dir_fd = folder_fd (folder);

  return dir_fd >= 0 && fstatat (dir_fd, _TESSERA_POOL_JOBS, st, AT_SYMLINK_NOFOLLOW) == 0;
}

void
_tessera_lock_folder_make_jobs (TesseraLockFolder *folder)
{
  g_autoptr(GError) error = NULL;

  if (!make_jobs (folder, &error))
    g_warning ("%s", error->message);
}

gboolean
_tessera_lock_folder_stat_job (TesseraLockFolder *folder,
                               const char        *name,
                               struct stat       *st)
{
  int dir_fd = _tessera_lock_folder_open_jobs (folder);
  gboolean found = dir_fd >= 0 && fstatat (dir_fd, name, st, AT_SYMLINK_NOFOLLOW) == 0;

  if (dir_fd >= 0)
    close (dir_fd);
  return found;
}

/* Never through a link, should jobs/ have been swapped for one. */
int
_tessera_lock_folder_open_jobs (TesseraLockFolder *folder)
{
  int dir_fd = folder_fd (folder);

  return dir_fd < 0 ? -1 : openat (dir_fd, _TESSERA_POOL_JOBS, DIR_FLAGS);
}

static gboolean
is_lock_file_name (const char *name)
{
  return g_str_has_suffix (name, TESSERA_LOCK_FILE_SUFFIX) && strcmp (name, TESSERA_LOCK_FILE_SUFFIX) != 0;
}

/* A writer killed between its temporary file and the rename leaves the
 * temporary behind; nothing else would ever remove it. A live writer's
 * lasts microseconds, so one older than min-age is a dead writer's. */
static void
remove_stale_temporary (TesseraLockFolder *folder, const char *name, double min_age, gboolean read_only)
{
  g_autofree char *path = g_build_filename (folder->jobs_path, name, NULL);
  int dir_fd = read_only ? -1 : _tessera_lock_folder_open_jobs (folder);
  struct stat st;

  if (dir_fd >= 0 && fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode) &&
      (double) (g_get_real_time () * 1000 - _tessera_stat_mtime_ns (&st)) / 1e9 > min_age)
    {
      g_info (_("Removing %s, left by a writer that did not finish"), path);
      unlinkat (dir_fd, name, 0);
    }
  if (dir_fd >= 0)
    close (dir_fd);
}

gboolean
_tessera_lock_folder_foreach_job (TesseraLockFolder  *folder,
                                  double              min_age,
                                  gboolean            read_only,
                                  TesseraJobNameFunc  func,
                                  gpointer            user_data)
{
  int dir_fd = _tessera_lock_folder_open_jobs (folder);
  DIR *dir = dir_fd >= 0 ? fdopendir (dir_fd) : NULL;
  struct dirent *d;
  int saved;

  if (dir == NULL)
    {
      saved = errno;
      if (dir_fd >= 0)
        close (dir_fd);
      errno = saved;
      return FALSE;
    }
  /* Names as they come, not copied into a list first: a fresh process
   * with 10 000 holders copied them all, a page fault for each 4 KiB. */
  for (errno = 0; (d = readdir (dir)) != NULL; errno = 0)
    {
      if (is_lock_file_name (d->d_name))
        func (d->d_name, dir_fd, user_data);
      else if (_tessera_is_temporary_name (d->d_name))
        remove_stale_temporary (folder, d->d_name, min_age, read_only);
    }
  saved = errno;
  closedir (dir);
  errno = saved;
  return saved == 0;
}

gboolean
_tessera_lock_folder_remove_job (TesseraLockFolder  *folder,
                                 const char         *name,
                                 ino_t               ino,
                                 GError            **error)
{
  /* Only delete the very file that was judged, not one recreated since,
   * and only in the real jobs/: through a descriptor opened without
   * following a link, so a folder swapped for a link meanwhile is never
   * reached. */
  int dir_fd = _tessera_lock_folder_open_jobs (folder);
  gboolean found = FALSE;
  struct stat st;

  if (dir_fd >= 0 && fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_ino == ino && S_ISREG (st.st_mode))
    {
      found = TRUE;
      if (unlinkat (dir_fd, name, 0) < 0 && errno != ENOENT)
        {
          int saved = errno;
          g_autofree char *path = g_build_filename (folder->jobs_path, name, NULL);
          _tessera_set_io_error (error, saved, _("Cannot delete lock file %s: %s"), path);
        }
    }
  if (dir_fd >= 0)
    close (dir_fd);
  return found;
}

gboolean
_tessera_lock_folder_force_remove_job (TesseraLockFolder  *folder,
                                       const char         *name,
                                       ino_t               ino,
                                       GError            **error)
{
  int dir_fd = _tessera_lock_folder_open_jobs (folder);
  int lock_folder_fd = folder_fd (folder);
  uid_t uid = geteuid ();
  struct stat st, lock_folder_st;
  gboolean found = FALSE;

  if (dir_fd >= 0 && fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == ino &&
      !S_ISLNK (st.st_mode))
    {
      g_autofree char *path = g_build_filename (folder->jobs_path, name, NULL);

      found = TRUE;
      /* What the sticky bit would say, whatever the folder's mode. */
      if (uid != 0 && st.st_uid != uid && (lock_folder_fd < 0 || fstat (lock_folder_fd, &lock_folder_st) < 0 || lock_folder_st.st_uid != uid))
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED,
                     _("%s is not yours: only its owner, root or the owner of %s may remove it"), path, folder->path);
      else if (unlinkat (dir_fd, name, S_ISDIR (st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
        _tessera_set_io_error (error, errno, _("Cannot delete lock file %s: %s"), path);
    }
  if (dir_fd >= 0)
    close (dir_fd);
  return found;
}

static void
sweep_tmp (int tmp_fd)
{
  int fd = openat (tmp_fd, ".", DIR_FLAGS);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *d;
  struct stat st;

  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((d = readdir (dir)) != NULL)
    if (_tessera_is_lock_file_temporary_name (d->d_name) && fstatat (tmp_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG (st.st_mode) && g_get_real_time () * 1000 - _tessera_stat_mtime_ns (&st) > _TESSERA_WRITER_TMP_STALE_S * G_GINT64_CONSTANT (1000000000))
      unlinkat (tmp_fd, d->d_name, 0);
  closedir (dir);
}

/* F/.tessera-tmp-UID, made if needed: a lock file's temporary file is
 * written there, then renamed into jobs/, so every process watching jobs/
 * hears of the rename alone, not also of the temporary's creation and
 * closing (each of which woke all of them). It is used only if it is a
 * folder of ours that nobody else may write in (no one can swap our
 * temporary file for theirs); otherwise the temporary goes beside the
 * lock file, as before. */
static int
open_writer_tmp (TesseraLockFolder *folder, gboolean create)
{
  g_autofree char *name = g_strdup_printf (_TESSERA_POOL_WRITER_TMP "%u", (unsigned) geteuid ());
  int dir_fd = folder_fd (folder);
  struct stat st;
  int fd;

  if (dir_fd < 0 || (create && mkdirat (dir_fd, name, 0700) < 0 && errno != EEXIST))
    return -1;
  fd = openat (dir_fd, name, DIR_FLAGS);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 077) != 0)
    {
      close (fd);
      return -1;
    }
  sweep_tmp (fd);
  return fd;
}

static int
writer_tmp_fd (TesseraLockFolder *folder)
{
  int fd = g_atomic_int_get (&folder->tmp_fd);

  if (fd != TMP_UNTRIED)
    return fd;
  fd = open_writer_tmp (folder, TRUE);
  if (!g_atomic_int_compare_and_exchange (&folder->tmp_fd, TMP_UNTRIED, fd))
    {
      if (fd >= 0)
        close (fd);
      fd = g_atomic_int_get (&folder->tmp_fd);
    }
  return fd;
}

void
_tessera_lock_folder_sweep_writer_tmp (TesseraLockFolder *folder)
{
  int fd = open_writer_tmp (folder, FALSE);

  if (fd >= 0)
    close (fd);
}

gboolean
_tessera_lock_folder_save_job (TesseraLockFolder       *folder,
                               const char              *name,
                               TesseraDynamicLockFile  *lock_file,
                               struct stat             *st,
                               GError                 **error)
{
  int dir_fd = _tessera_lock_folder_open_jobs (folder);
  gboolean ok, tmp_unusable = FALSE;
  int tmp_fd;

  if (dir_fd < 0)
    {
      g_autofree char *path = g_build_filename (folder->jobs_path, name, NULL);
      _tessera_set_io_error (error, errno, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  tmp_fd = writer_tmp_fd (folder);
  ok = _tessera_dynamic_lock_file_save_at (lock_file, tmp_fd, dir_fd, name, &tmp_unusable, st, error);
  /* Our folder and jobs/ on two file systems (a mount between them): the
   * next writes go beside the lock file at once. */
  if (tmp_unusable && g_atomic_int_compare_and_exchange (&folder->tmp_fd, tmp_fd, -1))
    close (tmp_fd);
  close (dir_fd);
  return ok;
}

gboolean
_tessera_lock_folder_remove_own_job (TesseraLockFolder  *folder,
                                     const char         *name,
                                     GError            **error)
{
  int dir_fd;
  struct stat st;
  int saved = 0;

  _tessera_pause_point ("lock-file-delete");
  dir_fd = _tessera_lock_folder_open_jobs (folder);
  if (dir_fd < 0)
    saved = errno;
  else if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    saved = errno;
  else if (S_ISREG (st.st_mode) && unlinkat (dir_fd, name, 0) < 0)
    saved = errno;
  if (dir_fd >= 0)
    close (dir_fd);
  if (saved != 0 && saved != ENOENT)
    {
      g_autofree char *path = g_build_filename (folder->jobs_path, name, NULL);
      _tessera_set_io_error (error, saved, _("Cannot delete lock file %s: %s"), path);
      return FALSE;
    }
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* informations.json */

gboolean
_tessera_lock_folder_stat_informations (TesseraLockFolder *folder,
                                        struct stat       *st)
{
  int dir_fd = folder_fd (folder);

  return dir_fd >= 0 && fstatat (dir_fd, _TESSERA_POOL_INFORMATIONS, st, AT_SYMLINK_NOFOLLOW) == 0;
}

gboolean
_tessera_lock_folder_has_informations (TesseraLockFolder *folder)
{
  struct stat st;

  return _tessera_lock_folder_stat_informations (folder, &st);
}

gboolean
_tessera_lock_folder_read_informations (TesseraLockFolder  *folder,
                                        char              **data,
                                        gsize              *length,
                                        struct stat        *st,
                                        GError            **error)
{
  int dir_fd = folder_fd (folder);
  struct stat local_st;

  if (dir_fd < 0)
    {
      if (errno == ENOENT)
        g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT, _("%s does not exist"), folder->info_path);
      else
        _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), folder->info_path);
      return FALSE;
    }
  /* A member's (in a group's pool) is not believed: it was read all the
   * same, and is not used. */
  if (st == NULL)
    st = &local_st;
  if (!_tessera_read_file_at (dir_fd, _TESSERA_POOL_INFORMATIONS, folder->info_path, data, length, st, error))
    return FALSE;
  if (!believed (dir_fd, st, folder->info_path, error))
    {
      g_clear_pointer (data, g_free);
      return FALSE;
    }
  return TRUE;
}

gboolean
_tessera_lock_folder_informations_believed (TesseraLockFolder  *folder,
                                            GError            **error)
{
  int dir_fd = folder_fd (folder);
  struct stat st;

  return dir_fd < 0 || fstatat (dir_fd, _TESSERA_POOL_INFORMATIONS, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
         believed (dir_fd, &st, folder->info_path, error);
}

gboolean
_tessera_lock_folder_may_make_informations (TesseraLockFolder  *folder,
                                            GError            **error)
{
  int dir_fd = folder_fd (folder);

  return dir_fd < 0 || _tessera_may_make_folder_in (dir_fd, folder->path, _TESSERA_POOL_INFORMATIONS, error);
}

/* Durable: the capacity must outlive a crash of the machine. */
gboolean
_tessera_lock_folder_write_informations (TesseraLockFolder  *folder,
                                         const char         *text,
                                         GError            **error)
{
  int dir_fd = folder_fd (folder);

  if (dir_fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot write %s: %s"), folder->info_path);
      return FALSE;
    }
  return _tessera_write_file_atomic_at (dir_fd, _TESSERA_POOL_INFORMATIONS, folder->info_path, text, -1, TRUE, error);
}

/* ---------------------------------------------------------------------- */
/* fence.UID: the pool's fencing counter */

/* Each user UID keeps two files beside ipc.lock:
 *
 * - `fence.UID`: a ceiling, "N\n", written durably (fsync, rename, fsync
 *   of the folder) before any token above the last ceiling is handed
 *   out: every token UID's processes ever gave is at most their ceiling,
 *   whatever a crash of the machine undid;
 * - `fence.UID.now`: the last token they gave, "N BOOT_ID\n", rewritten
 *   at every grant without a sync (through the writer's own temporary
 *   folder, so only its rename reaches the pool folder). In the boot that
 *   wrote it (the page cache every process of this kernel shares) it is
 *   exact; read in another boot or on another host, or lost or cut by a
 *   crash, it is not trusted and the ceiling stands for it.
 *
 * The next token is one more than the largest of these, so a crash never
 * makes a token go back: it only skips up to FENCE_RESERVE numbers. Only
 * one grant in FENCE_RESERVE on a host pays for a sync (and each one
 * that follows another host's or boot's).
 *
 * A member of a group's pool may write what she likes in her own parts,
 * and plant files under names not hers. So a part counts only when it is
 * a regular file, read whole, holding a number; anything else (junk, a
 * FIFO, a folder, a link, a file too long) is left out and blocks no
 * grant. A part is its user's when its file is owned by the uid its name
 * gives; one that is not (planted by another member, root's fence.0
 * included, or any part on NFS with root_squash or all_squash or where
 * user names do not map: owned by nobody) still counts, alone (it never
 * stands for the ceiling or last token beside it), as far as any part:
 * it is no one's own. When a member has
 * planted files under our names, which the sticky folder does not let us
 * replace, our parts go under the first of fence.UID, fence.UID.1, …,
 * fence.UID.15 whose ceiling and last token are each absent or a regular
 * file of ours (root replaces any file); every one of these names is
 * read as UID's. Only when all are taken does a grant fail, naming them.
 *
 * No part counts above fence_bound() and its slack: FENCE_RATE numbers a
 * second since FENCE_EPOCH_S (about one a microsecond, so it rises
 * between any two grants): a member who writes 2^63 - 2 in hers raises
 * the tokens to the bound, not to the largest value, where every grant
 * would fail; the bound gets there in 278 000 years. Honest parts
 * stay far below it (a grant adds at most FENCE_RESERVE, so they would
 * need 256 grants a second, each after another host's, since 2020), but
 * for those that took the bound: one more than it then, at most the bound
 * a microsecond later. Every part counts up to FENCE_OWN_SLACK above it,
 * whoever reads it and whoever owns it (where parts are squashed to
 * nobody, every part is owned so): a clock set back by up to an hour keeps our
 * tokens rising, a host whose clock is behind by up to an hour still
 * gives tokens above those of a host whose clock is ahead (once a member
 * raised the tokens to the bound, every grant takes the bound of its own
 * clock), and a part of ours raised near the largest value (before this
 * bound) mends. A part above the bound is warned of once a process. */
#define FENCE_PREFIX "fence."
#define FENCE_NOW_SUFFIX ".now"
#define FENCE_RESERVE 4096
/* A number (at most 19 digits), a boot id, a newline. */
#define FENCE_MAX_BYTES 128
/* 2^20 a second since 2020-01-01 UTC, by a clock read as no earlier than
 * 2026-01-01 UTC (a host whose clock was reset lowers no honest part). */
#define FENCE_RATE G_GINT64_CONSTANT (1048576)
#define FENCE_EPOCH_S G_GINT64_CONSTANT (1577836800)
#define FENCE_CLOCK_FLOOR_S G_GINT64_CONSTANT (1767225600)
/* 2^32: more than an hour of the bound. */
#define FENCE_OWN_SLACK (G_GINT64_CONSTANT (1) << 32)
/* How many names a user's parts may take: fence.UID, fence.UID.1, … */
#define FENCE_NAMES 16

/* "fence." and a uid's digits, then "." and the digits of a name number
 * from 1 to FENCE_NAMES - 1 (*@number; 0 without), then ".now" when
 * *@now: user *@uid's parts by their name (the pool's cleaning, too,
 * reads them so: _tessera_is_fence_name()). */
static gboolean
is_fence_name (const char *name, guint32 *uid, guint *number, gboolean *now)
{
  const char *digits;
  guint64 value = 0;
  gsize n = 0;

  if (!g_str_has_prefix (name, FENCE_PREFIX))
    return FALSE;
  digits = name + strlen (FENCE_PREFIX);
  while (n <= 10 && g_ascii_isdigit (digits[n]))
    value = value * 10 + (guint64) (digits[n++] - '0');
  if (n == 0 || n > 10 || value > G_MAXUINT32)
    return FALSE;
  *uid = (guint32) value;
  *number = 0;
  digits += n;
  if (digits[0] == '.' && digits[1] >= '1' && digits[1] <= '9')
    {
      for (digits++; g_ascii_isdigit (*digits) && *number < FENCE_NAMES; digits++)
        *number = *number * 10 + (guint) (*digits - '0');
      if (*number >= FENCE_NAMES)
        return FALSE;
    }
  *now = g_str_equal (digits, FENCE_NOW_SUFFIX);
  return *digits == '\0' || *now;
}

gboolean
_tessera_is_fence_name (const char *name,
                        guint32    *uid)
{
  guint number;
  gboolean now;

  return is_fence_name (name, uid, &number, &now);
}

/* User uid's parts under name number @number: "fence.UID" or
 * "fence.UID.NUMBER". */
static char *
fence_name (guint number)
{
  if (number == 0)
    return g_strdup_printf (FENCE_PREFIX "%u", (unsigned) geteuid ());
  return g_strdup_printf (FENCE_PREFIX "%u.%u", (unsigned) geteuid (), number);
}

/* The bound a part counts up to now, with FENCE_OWN_SLACK (see above); at
 * most G_MAXINT64 - 2 * FENCE_OWN_SLACK, so that a part, the next token
 * and its ceiling fit. */
static gint64
fence_bound (void)
{
  gint64 us = MAX (g_get_real_time (), FENCE_CLOCK_FLOOR_S * G_USEC_PER_SEC) - FENCE_EPOCH_S * G_USEC_PER_SEC;
  gint64 limit = G_MAXINT64 - 2 * FENCE_OWN_SLACK;

  if (us / G_USEC_PER_SEC >= limit / FENCE_RATE)
    return limit;
  return us / G_USEC_PER_SEC * FENCE_RATE + us % G_USEC_PER_SEC * FENCE_RATE / G_USEC_PER_SEC;
}

/* Decimal digits (at most G_MAXINT64) from *@p up to a space or @end. */
static gboolean
parse_fence_number (const char **p, const char *end, gint64 *value)
{
  guint64 number = 0;
  gsize digits = 0;

  for (; *p < end && g_ascii_isdigit (**p); (*p)++)
    {
      if (++digits > 19)
        return FALSE;
      number = number * 10 + (guint64) (**p - '0');
    }
  if (digits == 0 || number > G_MAXINT64)
    return FALSE;
  *value = (gint64) number;
  return TRUE;
}

/* "N\n" (a ceiling), or "N BOOT_ID\n" with @with_boot (the last token);
 * *@this_boot: its boot id is ours. */
static gboolean
parse_fence (const char *text, gsize length, gboolean with_boot, gint64 *value, gboolean *this_boot)
{
  const char *p = text, *end = text + length;
  const char *boot = _tessera_boot_id ();

  if (p < end && end[-1] == '\n')
    end--;
  if (!parse_fence_number (&p, end, value))
    return FALSE;
  if (!with_boot)
    return p == end;
  if (p == end || *p++ != ' ')
    return FALSE;
  *this_boot = *boot != '\0' && (gsize) (end - p) == strlen (boot) && memcmp (p, boot, strlen (boot)) == 0;
  return TRUE;
}

/* @number, read in the part @name, as it counts: at most @cap. A part
 * above @bound (and the ceiling a grant that took the bound wrote beside
 * it) is told of once in the process: this host's clock is behind the
 * writer's (an hour at most is made up for), or a member planted it. */
static gint64
fence_count (TesseraLockFolder *folder, const char *name, gint64 number, gint64 cap, gint64 bound)
{
  static gint warned;

  if (number > bound + FENCE_RESERVE && g_atomic_int_compare_and_exchange (&warned, 0, 1))
    {
      g_autofree char *path = g_build_filename (folder->path, name, NULL);

      g_warning (_("The fencing counter's part %s is above what this host's clock allows: this host's clock is "
                   "behind the one that wrote it, or a member of the pool planted it"), path);
    }
  return MIN (number, cap);
}

typedef struct
{
  gint64 ceiling;      /* -1: none read */
  gint64 now;          /* -1: none that may be trusted */
} FenceParts;

/* The largest token any user may have given (0: none yet), the number of
 * the name our parts go under (*@own_name, the first of fence.UID,
 * fence.UID.1, … whose ceiling and last token are each absent or a
 * regular file of ours: a member may have planted files under our names
 * before we wrote them, which the sticky folder does not let us
 * replace), and our ceiling there (0: none), each part counted up to
 * fence_bound() and its slack. FALSE with @error when the folder cannot
 * be read, or when every name of ours is taken (said in one line, with
 * the owner of fence.UID's planted part). */
static gboolean
read_fence (TesseraLockFolder *folder, int dir_fd, gint64 *last, guint *own_name, gint64 *own_ceiling,
            GError **error)
{
  g_autoptr(GHashTable) users = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *taken_name = NULL;
  gint64 own_ceilings[FENCE_NAMES];
  gboolean taken[FENCE_NAMES] = { FALSE };
  guint taken_number = FENCE_NAMES;
  uid_t taken_owner = 0;
  uid_t euid = geteuid ();
  gint64 bound = fence_bound ();
  gint64 cap = bound + FENCE_OWN_SLACK;
  int fd = openat (dir_fd, ".", DIR_FLAGS);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  GHashTableIter iter;
  gpointer key, value;
  struct dirent *d;
  gboolean ok = TRUE;
  int saved;

  *last = *own_ceiling = 0;
  *own_name = 0;
  for (guint i = 0; i < FENCE_NAMES; i++)
    own_ceilings[i] = 0;
  if (dir == NULL)
    {
      saved = errno;
      if (fd >= 0)
        close (fd);
      _tessera_set_io_error (error, saved, _("Cannot read the folder %s: %s"), folder->path);
      return FALSE;
    }
  while (ok)
    {
      g_autofree char *text = NULL;
      g_autofree char *user = NULL;
      FenceParts *parts;
      gboolean now, owned, this_boot = FALSE;
      gsize length = 0;
      gint64 number;
      guint32 uid;
      guint name_number;
      struct stat st = { 0 };

      errno = 0;
      d = readdir (dir);
      if (d == NULL)
        {
          if (errno != 0)
            {
              _tessera_set_io_error (error, errno, _("Cannot read the folder %s: %s"), folder->path);
              ok = FALSE;
            }
          break;
        }
      if (!is_fence_name (d->d_name, &uid, &name_number, &now))
        continue;
      /* Read as every part is (its owner from the same fstat); one of
       * ours that cannot be read (a link, say) looked at, never opened. */
      text = _tessera_read_bounded_at (dir_fd, d->d_name, FENCE_MAX_BYTES, &length, &st);
      if (text == NULL &&
          (errno == ENOENT || (uid == euid && fstatat (dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)))
        continue;
      /* A name of ours we could not replace (root replaces any file). */
      if (uid == euid && !(S_ISREG (st.st_mode) && (st.st_uid == euid || euid == 0)))
        {
          taken[name_number] = TRUE;
          if (name_number < taken_number)
            {
              g_free (taken_name);
              taken_name = g_strdup (d->d_name);
              taken_number = name_number;
              taken_owner = st.st_uid;
            }
        }
      if (text == NULL)
        continue;
      /* Every part counts up to the same slack for every reader (a host
       * whose clock is ahead gives tokens above our bound, and later ones
       * must still be above them). One whose file is not the user's its
       * name gives (planted, root's included, or any part on NFS with
       * root_squash or all_squash, or where user names do not map: owned
       * by nobody) counts too, or tokens would lose their order across
       * users and hosts there, but alone: it is no one's own, and never
       * stands for the ceiling or the last token beside it. */
      owned = st.st_uid == uid;
      if (!owned)
        {
          if (parse_fence (text, length, now, &number, &this_boot) && (!now || this_boot))
            *last = MAX (*last, fence_count (folder, d->d_name, number, cap, bound));
          continue;
        }
      user = now ? g_strndup (d->d_name, strlen (d->d_name) - strlen (FENCE_NOW_SUFFIX)) : g_strdup (d->d_name);
      parts = g_hash_table_lookup (users, user);
      if (parts == NULL)
        {
          parts = g_new (FenceParts, 1);
          parts->ceiling = parts->now = -1;
          g_hash_table_insert (users, g_strdup (user), parts);
        }
      /* The last token is a hint the ceiling stands for: one that cannot
       * be read or was cut by a crash is only not used. */
      if (now)
        {
          if (parse_fence (text, length, TRUE, &number, &this_boot) && this_boot)
            parts->now = fence_count (folder, d->d_name, number, cap, bound);
        }
      else if (parse_fence (text, length, FALSE, &number, NULL))
        {
          parts->ceiling = fence_count (folder, d->d_name, number, cap, bound);
          if (uid == euid)
            own_ceilings[name_number] = parts->ceiling;
        }
    }
  closedir (dir);
  if (!ok)
    return FALSE;
  g_hash_table_iter_init (&iter, users);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const FenceParts *parts = value;
      /* Exact in this boot; else every token given is at most the
       * ceiling (the first grant of a boot goes past it). */
      gint64 given = parts->now >= 0 ? parts->now : parts->ceiling;

      *last = MAX (*last, given);
    }
  while (*own_name < FENCE_NAMES && taken[*own_name])
    (*own_name)++;
  if (*own_name == FENCE_NAMES)
    {
      g_autofree char *owner = _tessera_dup_user_name (taken_owner);
      g_autofree char *path = g_build_filename (folder->path, taken_name, NULL);

      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   _("Cannot give a fencing token: %s, which is yours by its name, is %s's: root or the "
                     "pool's owner may remove it (tessera clean)"), path, owner);
      return FALSE;
    }
  *own_ceiling = own_ceilings[*own_name];
  return TRUE;
}

/* Called under ipc.lock, before the grant's lock file is written: a
 * crash after it leaves the counter raised, never back. */
gboolean
_tessera_lock_folder_next_fence (TesseraLockFolder  *folder,
                                 gint64             *token,
                                 GError            **error)
{
  int dir_fd = folder_fd (folder);
  g_autofree char *name = NULL;
  g_autofree char *now_name = NULL;
  g_autofree char *path = NULL;
  g_autofree char *now_path = NULL;
  g_autofree char *text = NULL;
  gboolean tmp_unusable = FALSE;
  gint64 last, own_ceiling, next;
  guint own_name;
  int tmp_fd;

  if (dir_fd < 0)
    {
      int saved = errno;
      g_autofree char *shown = fence_name (0);

      path = g_build_filename (folder->path, shown, NULL);
      _tessera_set_io_error (error, saved, _("Cannot write %s: %s"), path);
      return FALSE;
    }
  /* Every part is at most fence_bound() + FENCE_OWN_SLACK: next and its
   * ceiling fit. */
  if (!read_fence (folder, dir_fd, &last, &own_name, &own_ceiling, error))
    return FALSE;
  name = fence_name (own_name);
  now_name = g_strconcat (name, FENCE_NOW_SUFFIX, NULL);
  path = g_build_filename (folder->path, name, NULL);
  now_path = g_build_filename (folder->path, now_name, NULL);
  next = last + 1;
  if (next > own_ceiling)
    {
      /* Durable before the token is given: a crash of the machine after
       * this never lets a token at or below the new ceiling be given
       * again. */
      g_autofree char *ceiling = g_strdup_printf ("%" G_GINT64_FORMAT "\n",
                                                  next > G_MAXINT64 - FENCE_RESERVE ? G_MAXINT64
                                                                                    : next + FENCE_RESERVE - 1);

      if (!_tessera_write_file_atomic_at (dir_fd, name, path, ceiling, -1, TRUE, error))
        return FALSE;
    }
  text = g_strdup_printf ("%" G_GINT64_FORMAT " %s\n", next, _tessera_boot_id ());
  tmp_fd = writer_tmp_fd (folder);
  if (!_tessera_write_file_atomic_via (tmp_fd, dir_fd, now_name, now_path, text, &tmp_unusable, error))
    return FALSE;
  if (tmp_unusable && g_atomic_int_compare_and_exchange (&folder->tmp_fd, tmp_fd, -1))
    close (tmp_fd);
  *token = next;
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* File times */

/* A directory's mtime moves once per clock tick of its file system (one
 * second on ext2 or some NFS servers, a jiffy elsewhere): whole-second
 * times tell a coarse file system. */
gint64
_tessera_lock_folder_mtime_tick_us (gint64 mtime_ns)
{
  return mtime_ns % G_GINT64_CONSTANT (1000000000) == 0 ? 2 * G_USEC_PER_SEC : 50 * 1000;
}

gboolean
_tessera_stat_tick_before (const struct stat *st,
                           gint64             looked_us)
{
  gint64 mtime_ns = _tessera_stat_mtime_ns (st);
  gint64 ctime_ns = _tessera_stat_ctime_ns (st);
  gint64 tick_us = MAX (_tessera_lock_folder_mtime_tick_us (mtime_ns), _tessera_lock_folder_mtime_tick_us (ctime_ns));

  return MAX (mtime_ns, ctime_ns) / 1000 + tick_us < looked_us;
}

/* ---------------------------------------------------------------------- */
/* Files of the folder: the
 * kind of file system, ipc.lock */

/* File systems where every change to a folder is made by this kernel, so
 * inotify reports all of them. Anything else (NFS, CIFS, Lustre, GPFS,
 * CephFS, FUSE, …) may be changed by another host behind inotify's back. */
gboolean
_tessera_fs_is_local (const char *path)
{
  static const unsigned long local_types[] = {
    0xEF53,       /* ext2, ext3, ext4 */
    0x58465342,   /* xfs */
    0x9123683E,   /* btrfs */
    0x01021994,   /* tmpfs */
    0x858458F6,   /* ramfs */
    0xF2F52010,   /* f2fs */
    0x2FC12FC1,   /* zfs */
    0x3153464A,   /* jfs */
    0x52654973,   /* reiserfs */
    0xCA451A4E,   /* bcachefs */
    0x794C7630,   /* overlayfs: its upper layer is this kernel's */
  };
  struct statfs sfs;

  if (statfs (path, &sfs) < 0)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (local_types); i++)
    if ((unsigned long) sfs.f_type == local_types[i])
      return TRUE;
  return FALSE;
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
 * would only slow every acquire down. */
static gboolean
is_nfs (int fd)
{
  struct statfs sfs;
  return fstatfs (fd, &sfs) == 0 && sfs.f_type == NFS_SUPER_MAGIC;
}

/* Once we hold the flock, no Tessera peer can hold the fcntl lock (they
 * take it after the flock): only a seed-era peer using lockf alone can, and
 * only for the length of its own read-modify-write. Wait for it with short
 * polls rather than F_OFD_SETLKW, so that every long blocking wait stays in
 * flock(), which every tool understands (valgrind serialises all threads on
 * an F_OFD_SETLKW it does not know to be blocking). */
static int
ofd_lock_after_flock (int fd)
{
  gulong delay_us = 500;

  for (;;)
    {
      if (_tessera_ofd_lock (fd, F_WRLCK, FALSE) == 0)
        return 0;
      if (errno != EAGAIN && errno != EACCES)
        return -1;
      g_usleep (delay_us);
      delay_us = MIN (delay_us * 2, 20000);
    }
}

static int
flock_retry (int fd, int op)
{
  for (;;)
    {
      int r = flock (fd, op);
      if (r == 0 || errno != EINTR)
        return r;
    }
}

static GPrivate ipc_try_only;

void
_tessera_ipc_lock_set_try_only (gboolean try_only)
{
  g_private_set (&ipc_try_only, GINT_TO_POINTER (try_only));
}

static int
fail_would_block (int fd, const char *path, GError **error)
{
  close (fd);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, _("%s is locked by another process"), path);
  return -1;
}

static int
ipc_lock_acquire_at (int          dir_fd,
                     const char  *name,
                     const char  *path,
                     GError     **error)
{
  gboolean try_only = GPOINTER_TO_INT (g_private_get (&ipc_try_only));

  for (;;)
    {
      struct stat fst, pst;
      gboolean nfs;
      /* 0666 & ~umask, like the Python peers; made usable by the pool's
       * group when we are the one creating it. */
      int fd = openat (dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

      if (fd < 0 && errno == ENOENT)
        {
          fd = openat (dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
          if (fd >= 0)
            _tessera_share_like_parent_writable (fd, path);
          else if (errno == EEXIST)
            continue;
        }

      if (fd < 0)
        {
          _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), path);
          return -1;
        }
      if (fstat (fd, &fst) < 0 || !S_ISREG (fst.st_mode))
        {
          close (fd);
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE, _("%s is not a regular file"), path);
          return -1;
        }
      /* On NFS flock is emulated with a whole-file fcntl lock: taking both
       * would deadlock on ourselves, so take only the fcntl one there. */
      nfs = is_nfs (fd);
      if (try_only)
        {
          if (!nfs && flock_retry (fd, LOCK_EX | LOCK_NB) < 0)
            {
              if (errno == EWOULDBLOCK)
                return fail_would_block (fd, path, error);
              _tessera_set_io_error (error, errno, _("Cannot lock %s: %s"), path);
              close (fd);
              return -1;
            }
          if (_tessera_ofd_lock (fd, F_WRLCK, FALSE) < 0)
            {
              if (errno == EAGAIN || errno == EACCES)
                return fail_would_block (fd, path, error);
              _tessera_set_io_error (error, errno, _("Cannot lock %s: %s"), path);
              close (fd);
              return -1;
            }
        }
      else if (!nfs && flock_retry (fd, LOCK_EX) < 0)
        {
          int saved = errno;
          close (fd);
          _tessera_set_io_error (error, saved, _("Cannot lock %s: %s"), path);
          return -1;
        }
      else if ((nfs ? _tessera_ofd_lock (fd, F_WRLCK, TRUE) : ofd_lock_after_flock (fd)) < 0)
        {
          int saved = errno;
          close (fd);
          _tessera_set_io_error (error, saved, _("Cannot lock %s: %s"), path);
          return -1;
        }
      /* filelock-based peers unlink ipc.lock when they release: a lock on
       * an unlinked inode excludes nobody, so start again on the new one. */
      if (fstat (fd, &fst) == 0 && fst.st_nlink > 0 &&
          fstatat (dir_fd, name, &pst, AT_SYMLINK_NOFOLLOW) == 0 && pst.st_ino == fst.st_ino && pst.st_dev == fst.st_dev)
        return fd;
      ipc_lock_release (fd);
    }
}

/* For a reader that changes nothing (status): a shared hold on ipc.lock
 * when it can be opened, so no writer is half-way; -1 when it cannot (a
 * read-only mount, a pool of another group, none made yet): the caller
 * then reads without it, and the view may be moving. */
static int
ipc_lock_acquire_shared_at (int dir_fd, const char *name, const char *path)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) ||
      (!is_nfs (fd) && flock_retry (fd, LOCK_SH) < 0) || _tessera_ofd_lock (fd, F_RDLCK, TRUE) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static void
ipc_lock_release (int fd)
{
  if (fd < 0)
    return;
  _tessera_ofd_lock (fd, F_UNLCK, FALSE);
  flock_retry (fd, LOCK_UN);
  close (fd);
}
