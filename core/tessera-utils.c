/* tessera-utils.c: errors, i18n, environment knobs, paths, job locks and /proc
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <libintl.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
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

gboolean
_tessera_job_lock_is_held (const char *path)
{
  return _tessera_job_lock_probe (path, NULL) == TESSERA_JOB_LOCK_HELD;
}

/* Reads /proc/PID/@name into @buffer (at most @size - 1 bytes, then a
 * NUL), with no stdio (this runs once per holder a fresh `status`
 * judges); @first_line stops at the first line's end, sparing the read
 * that would say the file ended. The length read, or -1 when the file
 * cannot be opened (the process is gone, or hidden from us). */
gssize
_tessera_proc_read (GPid        pid,
                    const char *name,
                    char       *buffer,
                    gsize       size,
                    gboolean    first_line)
{
  char path[64];
  gsize got = 0;
  int fd;

  g_return_val_if_fail (size > 0, -1);
  if (pid <= 0)
    return -1;
  g_snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  for (;;)
    {
      ssize_t r = read (fd, buffer + got, size - 1 - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += r;
      if (first_line && buffer[got - 1] == '\n')
        break;
    }
  close (fd);
  buffer[got] = '\0';
  return got;
}

/* Field 3 (state) and field 22 (start time, in clock ticks since boot) of
 * /proc/PID/stat; the command name may hold spaces and parentheses, so
 * parse from the last ')'. */
gboolean
_tessera_proc_stat (GPid     pid,
                    guint64 *start_time,
                    char    *state)
{
  char contents[4096];   /* a stat line is about 300 bytes, at most about 1 100 */
  const char *p;
  int field;

  if (_tessera_proc_read (pid, "stat", contents, sizeof contents, TRUE) < 0)
    return FALSE;
  p = strrchr (contents, ')');
  if (p == NULL || p[1] != ' ')
    return FALSE;
  p += 2;
  if (state != NULL)
    *state = *p;
  /* p is at field 3; advance to field 22 */
  for (field = 3; field < 22 && *p != '\0'; p++)
    if (*p == ' ')
      field++;
  if (field != 22)
    return FALSE;
  if (start_time != NULL)
    *start_time = g_ascii_strtoull (p, NULL, 10);
  return TRUE;
}

const char *
_tessera_boot_id (void)
{
  static gsize once = 0;
  static char *boot_id = NULL;

  if (g_once_init_enter (&once))
    {
      if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL))
        boot_id = g_strdup ("");
      g_strstrip (boot_id);
      g_once_init_leave (&once, 1);
    }
  return boot_id;
}

const char *
_tessera_host_name (void)
{
  return g_get_host_name ();
}

int
_tessera_pidfd_open (GPid pid)
{
#ifdef SYS_pidfd_open
  return (int) syscall (SYS_pidfd_open, (pid_t) pid, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}
