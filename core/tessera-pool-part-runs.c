/* tessera-pool-part-runs.c: this user's runs/UID in a folder pool, and a
 * run's own job folder made there (else in a folder of the user's), so
 * that no co-user of a group's pool can swap either
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-job-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tessera/tessera.h>
#include <unistd.h>

/* @name in @dir_fd, a folder, if it is ours (never through a link):
 * -1 with errno else (EPERM: another user's). */
static int
open_own_folder_at (int dir_fd, const char *name)
{
  struct stat st;
  int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

  if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_uid != geteuid ()))
    {
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

/**
 * tessera_pool_part_open_runs:
 * @lock_folder: a folder pool's lock folder
 * @path: (out) (optional) (transfer full): where the folder opened is
 *
 * Opens this user's folder for job folders in the lock folder
 * @lock_folder, making it when missing: `runs/UID` in it, ours, reached
 * from [func@Tessera.folder_path_open] without following a link.
 * `tessera run` keeps its job folders there, so that every judge of the
 * pool (in a container with its own state folder, on another host) can
 * probe the job lock of a holder it cannot judge by its pid.
 *
 * In a pool shared with a group (a group-writable folder) it is readable
 * by the pool's group, and `runs/` is the group's and sticky: each user
 * makes a folder there, none removes another's. A member makes no `runs/`
 * in a group's pool (see [func@Tessera.folder_path_may_make_folder]):
 * `tessera init` does.
 *
 * Returns: the folder's descriptor, to close, or -1 (with @path untouched)
 *   when it cannot be had safely (a co-user's link or folder in its
 *   place) or at all (a pool this user may not write)
 */
int
tessera_pool_part_open_runs (const char  *lock_folder,
                             char       **path)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  struct stat st;
  int lock_folder_fd, runs_fd = -1, own_fd = -1;
  gboolean shared;

  g_return_val_if_fail (lock_folder != NULL, -1);
  lock_folder_fd = tessera_folder_path_open (lock_folder, NULL);
  if (lock_folder_fd < 0)
    goto out;
  /* Group-writable, everyone's too: what is made here is the group's. */
  shared = tessera_folder_path_get_sharing (lock_folder_fd) != TESSERA_FOLDER_SHARING_NONE;
  /* A member makes no runs/ in a group's pool: its owner could move
   * anyone's job folder in it (init makes it). */
  if (fstatat (lock_folder_fd, _TESSERA_POOL_RUNS, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
      !tessera_folder_path_may_make_folder (lock_folder_fd, lock_folder, _TESSERA_POOL_RUNS, NULL))
    goto out;
  if (mkdirat (lock_folder_fd, _TESSERA_POOL_RUNS, shared ? 0770 : 0755) == 0 &&
      (runs_fd = openat (lock_folder_fd, _TESSERA_POOL_RUNS, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0 &&
      shared)
    fchmod (runs_fd, S_ISVTX | S_ISGID | 0770);
  if (runs_fd < 0)
    runs_fd = openat (lock_folder_fd, _TESSERA_POOL_RUNS, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (runs_fd < 0 || (mkdirat (runs_fd, uid, 0750) < 0 && errno != EEXIST))
    goto out;
  own_fd = open_own_folder_at (runs_fd, uid);
  if (own_fd >= 0 && shared && fchmod (own_fd, S_ISGID | 0750) < 0)
    {
      close (own_fd);
      own_fd = -1;
    }
  if (own_fd >= 0 && path != NULL)
    *path = g_build_filename (lock_folder, _TESSERA_POOL_RUNS, uid, NULL);

out:
  if (runs_fd >= 0)
    close (runs_fd);
  if (lock_folder_fd >= 0)
    close (lock_folder_fd);
  return own_fd;
}

/* Says that the folder @path could not be made (or opened: @making
 * FALSE) for the reason @saved. */
static void
set_folder_error (GError **error, gboolean making, const char *path, int saved)
{
  if (making)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"), path,
                 g_strerror (saved));
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot open %s: %s"), path,
                 g_strerror (saved));
}

/* The job folder @name made in @root by path, for a root given by
 * whoever runs (none a co-user may swap). */
static char *
make_job_folder_in (const char *root, const char *name, int *folder_fd, GError **error)
{
  g_autofree char *folder = g_build_filename (root, name, NULL);
  struct stat st;

  if (g_mkdir_with_parents (folder, 0750) < 0)
    {
      set_folder_error (error, TRUE, folder, errno);
      return NULL;
    }
  /* Whatever our umask, the group of a shared runs folder reads it. */
  if (stat (root, &st) == 0 && (st.st_mode & (S_ISGID | S_IRGRP | S_IXGRP)) == (S_ISGID | S_IRGRP | S_IXGRP))
    chmod (folder, S_ISGID | 0750);
  /* From here the job's files go through this descriptor. */
  if ((*folder_fd = open (folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    {
      set_folder_error (error, FALSE, folder, errno);
      return NULL;
    }
  return g_steal_pointer (&folder);
}

/**
 * tessera_pool_part_make_job_folder:
 * @lock_folder: (nullable): a folder pool's lock folder, or %NULL
 * @root: the folder to make it in when @lock_folder is %NULL or has no
 *   folder for this user's job folders; made when missing
 * @identifier: (out) (transfer full): the job's identifier, the folder's
 *   name (`<host>-<pid>-<random>`, as [ctor@Tessera.Job.new_private]
 *   names its job)
 * @folder_fd: (out): the folder's descriptor, to close
 * @error: return location for a #GError
 *
 * Makes a job's own folder for a run, as `tessera run` does: in
 * @lock_folder's `runs/UID` ([func@Tessera.pool_part_open_runs]), where
 * every judge of the pool (in a container with its own state folder, on
 * another host) can probe the job's lock; else, when @lock_folder is
 * %NULL or that folder cannot be had, in @root (for instance
 * `$XDG_STATE_HOME/tessera/jobs`).
 *
 * In a pool's `runs/UID`, which a co-user of a group's pool may try to
 * swap, the folder is made through the descriptor of the `runs/UID` that
 * was checked, is ours, readable by the pool's group (setgid), and its
 * path must still lead to it. In @root it is made by path, and readable
 * by @root's group when @root is setgid and group-readable. The job's
 * files are written through @folder_fd ([ctor@Tessera.Job.new_at]).
 *
 * Returns: (transfer full): the folder's path, or %NULL with @error set
 *   (a `G_IO_ERROR`)
 */
char *
tessera_pool_part_make_job_folder (const char  *lock_folder,
                                   const char  *root,
                                   char       **identifier,
                                   int         *folder_fd,
                                   GError     **error)
{
  g_autofree char *name = _tessera_job_dup_new_identifier ();
  g_autofree char *runs = NULL;
  g_autofree char *folder = NULL;
  struct stat st, path_st;
  int own_fd, job_fd;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (identifier != NULL, NULL);
  g_return_val_if_fail (folder_fd != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  own_fd = lock_folder != NULL ? tessera_pool_part_open_runs (lock_folder, &runs) : -1;
  if (own_fd < 0)
    {
      folder = make_job_folder_in (root, name, folder_fd, error);
      if (folder != NULL)
        *identifier = g_steal_pointer (&name);
      return g_steal_pointer (&folder);
    }
  folder = g_build_filename (runs, name, NULL);
  if (mkdirat (own_fd, name, 0750) < 0 || (job_fd = open_own_folder_at (own_fd, name)) < 0)
    {
      int saved = errno;

      close (own_fd);
      set_folder_error (error, TRUE, folder, saved);
      return NULL;
    }
  close (own_fd);
  fchmod (job_fd, S_ISGID | 0750);
  /* The files of the job are written by path from here: the path must
   * lead to the folder just made, not to one a co-user swapped in. */
  if (fstat (job_fd, &st) < 0 || lstat (folder, &path_st) < 0 || st.st_dev != path_st.st_dev ||
      st.st_ino != path_st.st_ino)
    {
      close (job_fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("The job folder %s was moved while it was made (a co-user of the pool?)"), folder);
      return NULL;
    }
  *folder_fd = job_fd;
  *identifier = g_steal_pointer (&name);
  return g_steal_pointer (&folder);
}
