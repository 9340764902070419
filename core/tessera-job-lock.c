/* tessera-job-lock.c: a job's job lock (`<job_uri>.lock`), taken by its
 * holder and probed by the judges of a holder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-job-lock-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-verdict-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a job-lock take waits out shared locks on it: under ipc.lock,
 * so short; a probe lasts two round trips to the file server. */
#define JOB_LOCK_PROBE_PATIENCE_US (2 * G_USEC_PER_SEC)

/* Takes the job lock's write lock without waiting for a holder (a write
 * lock: another process runs the job) but waiting out, for a bounded
 * time, shared locks: peers' probes. On NFS, which emulates flock with
 * POSIX locks, the LOCK_SH of a probe (_tessera_job_lock_probe()) is a
 * shared POSIX lock on the server, in conflict with ours. Returns 0 or
 * an errno. */
static int
job_lock_write (int fd)
{
  gint64 give_up = 0;
  gulong pause_us = 1000;

  for (;;)
    {
      struct flock fl = { 0 };

      if (_tessera_ofd_lock (fd, F_WRLCK, FALSE) == 0)
        return 0;
      if (errno != EAGAIN && errno != EACCES)
        return errno;
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      if (fcntl (fd, F_OFD_GETLK, &fl) < 0 || fl.l_type == F_WRLCK)
        return EAGAIN;   /* a holder (or nothing to tell it from one) */
      if (give_up == 0)
        give_up = g_get_monotonic_time () + JOB_LOCK_PROBE_PATIENCE_US;
      else if (g_get_monotonic_time () >= give_up)
        return EAGAIN;
      /* F_UNLCK: the probe ended in between; try again at once. */
      if (fl.l_type == F_RDLCK)
        {
          _tessera_pause_point ("job-lock-shared");
          g_usleep (pause_us);
          pause_us = MIN (pause_us * 2, 50 * 1000);
        }
    }
}

int
_tessera_job_lock_take (const char  *path,
                        GError     **error)
{
  return _tessera_job_lock_take_at (AT_FDCWD, path, path, error);
}

/* Makes the job lock @name in @dir_fd held from its first appearance: a
 * judge that finds it there finds it locked, never free between its
 * creation and its lock, when it would take the new holder for a dead
 * one (and `tessera clean` would remove the job's folder under it). It
 * is made, shared and locked under a temporary name (@name and six random
 * characters), then linked to @name: that fails (EEXIST) when another
 * process made one first, to be taken as it is. Where the file system has
 * no hard links (some FUSE ones), it is made in place and locked just
 * after, as before. A descriptor, or -1 with errno set. */
static int
create_job_lock_held (int dir_fd, const char *name, const char *path)
{
  g_autofree char *tmp = NULL;
  int fd = -1, saved;

  for (int i = 0; i < 16 && fd < 0; i++)
    {
      g_free (tmp);
      tmp = g_strdup_printf ("%s.%06x", name, g_random_int () & 0xffffff);
      fd = openat (dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0 && errno == ENAMETOOLONG)
    return openat (dir_fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
  if (fd < 0)
    return -1;
  _tessera_share_like_parent (fd, path);
  if (_tessera_ofd_lock (fd, F_WRLCK, FALSE) < 0 || linkat (dir_fd, tmp, dir_fd, name, 0) < 0)
    {
      saved = errno;
      unlinkat (dir_fd, tmp, 0);
      close (fd);
      if (saved == EPERM || saved == EOPNOTSUPP || saved == ENOSYS || saved == EMLINK)
        return openat (dir_fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
      errno = saved;
      return -1;
    }
  unlinkat (dir_fd, tmp, 0);
  return fd;
}

int
_tessera_job_lock_take_at (int          dir_fd,
                           const char  *name,
                           const char  *path,
                           GError     **error)
{
  int saved, fd = -1;
  struct stat st;

  /* One that is there already (ours held again, experimaestro's) is
   * taken as it is; a new one appears held. Never blocks on a FIFO
   * planted there; only a regular file is a lock. */
  for (int i = 0; i < 16 && fd < 0; i++)
    {
      fd = openat (dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (fd < 0 && errno == ENOENT)
        fd = create_job_lock_held (dir_fd, name, path);
      /* EEXIST: another made it first; ENOENT: it went since. */
      if (fd < 0 && errno != EEXIST && errno != ENOENT)
        break;
    }
  if (fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), path);
      return -1;
    }
  /* The job lock is there for every judge to see: the race tests look at it here. */
  _tessera_pause_point ("job-lock-created");
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE, _("%s is not a regular file"), path);
      return -1;
    }
  /* Whoever shares the job's folder probes this lock: readable whatever
   * our umask. */
  _tessera_share_like_parent (fd, path);
  /* Never waits for a holder: a job runs once, so a held lock means
   * another runs it. */
  saved = job_lock_write (fd);
  if (saved != 0)
    {
      close (fd);
      if (saved == EAGAIN || saved == EACCES)
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                     _("Job lock %s is held by another process"), path);
      else
        _tessera_set_io_error (error, saved, _("Cannot lock %s: %s"), path);
      return -1;
    }
  return fd;
}

/* Whether the job's process holds its job lock, in either kind: an fcntl
 * write lock (classic lockf, as fasteners takes it, or OFD, as Tessera
 * does) or a flock (filelock, newer experimaestro). Only a lock that
 * needs more than reading the file is proof: an fcntl write lock needs a
 * descriptor opened for writing (the owner's, root's), so the probe asks
 * for a read lock, which only a write lock conflicts with, and a read
 * lock that any reader may take is not seen. A flock can be taken on a
 * descriptor opened for reading: one is proof (held) only on a file that
 * gives nobody but its owner any access, and otherwise flocked, which
 * the caller weighs (Tessera's holders never flock their job locks).
 * Never blocks: the flock probe takes a shared lock without waiting and
 * drops it at once. Only a job lock opened and found free is free: one
 * that is not there (ENOENT, ENOTDIR) may be in a folder this process
 * cannot see, and is absent. */
TesseraJobLockState
_tessera_job_lock_probe (const char *path,
                         int        *errsv)
{
  return _tessera_job_lock_probe_at (AT_FDCWD, path, errsv);
}

TesseraJobLockState
_tessera_job_lock_probe_at (int         dir_fd,
                            const char *name,
                            int        *errsv)
{
  struct flock fl = { 0 };
  struct stat st;
  TesseraJobLockState state = TESSERA_JOB_LOCK_FREE;
  int fd = openat (dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  int saved = 0;

  if (fd < 0)
    {
      saved = errno;
      state = saved == ENOENT || saved == ENOTDIR ? TESSERA_JOB_LOCK_ABSENT : TESSERA_JOB_LOCK_UNKNOWN;
    }
  else if (fstat (fd, &st) < 0)
    {
      saved = errno;
      state = TESSERA_JOB_LOCK_UNKNOWN;
    }
  else if (!S_ISREG (st.st_mode))
    state = TESSERA_JOB_LOCK_UNKNOWN;
  else
    {
      fl.l_type = F_RDLCK;
      fl.l_whence = SEEK_SET;
      if (fcntl (fd, F_OFD_GETLK, &fl) < 0)
        {
          saved = errno;
          state = TESSERA_JOB_LOCK_UNKNOWN;
        }
      else if (fl.l_type == F_WRLCK)
        state = TESSERA_JOB_LOCK_HELD;
      else if (flock (fd, LOCK_SH | LOCK_NB) < 0)
        {
          saved = errno;
          if (saved != EWOULDBLOCK)
            state = TESSERA_JOB_LOCK_UNKNOWN;
          else
            {
              saved = 0;
              state = (st.st_mode & (S_IRWXG | S_IRWXO)) == 0 ? TESSERA_JOB_LOCK_HELD : TESSERA_JOB_LOCK_FLOCKED;
            }
        }
    }
  if (fd >= 0)
    close (fd);
  if (errsv != NULL)
    *errsv = saved;
  return state;
}
