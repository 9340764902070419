/* tessera-utils.c: errors, i18n, files and inter-process locks
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
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef NFS_SUPER_MAGIC
#define NFS_SUPER_MAGIC 0x6969
#endif

/**
 * tessera_error_quark:
 *
 * The error domain of Tessera's errors, %TESSERA_ERROR.
 *
 * Returns: the quark of the %TESSERA_ERROR domain
 */
G_DEFINE_QUARK (tessera-error-quark, tessera_error)

const char *
_tessera_gettext (const char *msgid)
{
  static gsize bound = 0;

  if (g_once_init_enter (&bound))
    {
      /* TESSERA_LOCALEDIR: catalogues of a build tree (meson devenv, tests). */
      const char *dir = g_getenv ("TESSERA_LOCALEDIR");
      bindtextdomain (GETTEXT_PACKAGE, dir && *dir ? dir : LOCALEDIR);
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&bound, 1);
    }
  return g_dgettext (GETTEXT_PACKAGE, msgid);
}

/* Below this, polling is a busy loop. */
#define POLL_INTERVAL_FLOOR 0.01

/* Read once per process (a wrong value is said once, not at every poll),
 * and kept at or above the floor. */
static double
env_seconds (const char *name, double fallback)
{
  const char *value = g_getenv (name);
  char *end = NULL;
  double v;

  if (value == NULL || *value == '\0')
    return fallback;
  v = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0' || !(v > 0) || isinf (v))
    {
      g_warning (_("Ignoring %s=%s: not a positive number of seconds"), name, value);
      return fallback;
    }
  if (v < POLL_INTERVAL_FLOOR)
    {
      g_warning (_("%s=%s is too short: polling every %g s instead"), name, value, POLL_INTERVAL_FLOOR);
      return POLL_INTERVAL_FLOOR;
    }
  return v;
}

/* The seed polls from 0.1 s, growing by 1.5 up to a maximum. */
double
_tessera_poll_interval_initial (void)
{
  static gsize once = 0;
  static double initial;

  if (g_once_init_enter (&once))
    {
      initial = env_seconds ("TESSERA_POLL_INTERVAL", 0.1);
      g_once_init_leave (&once, 1);
    }
  return initial;
}

double
_tessera_poll_interval_max (void)
{
  static gsize once = 0;
  static double max;

  if (g_once_init_enter (&once))
    {
      max = env_seconds ("TESSERA_POLL_INTERVAL_MAX", 30.0);
      g_once_init_leave (&once, 1);
    }
  return MAX (max, _tessera_poll_interval_initial ());
}

/* How long a waiter takes what is free before it reserves (seconds). */
double
_tessera_patience_default (void)
{
  return env_seconds ("TESSERA_PATIENCE", 60.0);
}

gboolean
_tessera_inotify_disabled (void)
{
  return g_strcmp0 (g_getenv ("TESSERA_NO_INOTIFY"), "1") == 0;
}

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

gint64
_tessera_stat_mtime_ns (const struct stat *st)
{
  return (gint64) st->st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000) + st->st_mtim.tv_nsec;
}

/* A translated "… %s: %s" message with the path, then the system's reason. */
#define set_io_error(error, saved_errno, format, path) \
  g_set_error ((error), TESSERA_ERROR, TESSERA_ERROR_IO, (format), (path), g_strerror (saved_errno))

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
gboolean
_tessera_write_file_atomic (const char  *path,
                            const char  *data,
                            gssize       length,
                            gboolean     durable,
                            GError     **error)
{
  /* g_mkstemp_full() replaces the six X with random characters. */
  g_autofree char *tmp = g_strconcat (path, ".XXXXXX", NULL);
  gsize left = length < 0 ? strlen (data) : (gsize) length;
  int fd, saved;

  /* 0644 & ~umask: readable by the other users of a shared folder. */
  fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      saved = errno;
      set_io_error (error, saved, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  while (left > 0)
    {
      gssize n = write (fd, data, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        goto fail;
      data += n;
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
  if (rename (tmp, path) < 0)
    goto fail;
  if (durable)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      int dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd >= 0)
        {
          fsync (dir_fd);
          close (dir_fd);
        }
    }
  return TRUE;

fail:
  saved = errno ? errno : EIO;
  if (fd >= 0)
    close (fd);
  g_unlink (tmp);
  set_io_error (error, saved, _("Cannot write %s: %s"), path);
  return FALSE;
}

gboolean
_tessera_read_file_nofollow (const char  *path,
                             char       **data,
                             gsize       *length,
                             struct stat *st,
                             GError     **error)
{
  int fd;
  struct stat local_st;
  GString *buf;
  char chunk[8192];

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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
        set_io_error (error, saved, _("Cannot open %s: %s"), path);
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
          set_io_error (error, saved, _("Cannot read %s: %s"), path);
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

/* A pool shared by the users of a group lives in a group-writable (and
 * usually setgid) folder: what Tessera creates there must be usable by
 * the others whatever the creator's umask. So a folder, or a file others
 * must open for writing (ipc.lock), that we just created in a
 * group-writable folder takes that folder's group and its group bits
 * (setgid too for a folder). Nothing happens elsewhere, nor to a file we
 * do not own. @fd may be -1: @path is then opened (never followed). */
void
_tessera_share_like_parent (int         fd,
                            const char *path)
{
  g_autofree char *parent = g_path_get_dirname (path);
  struct stat pst, st;
  int own_fd = -1;

  if (stat (parent, &pst) < 0 || !(pst.st_mode & S_IWGRP))
    return;
  if (fd < 0)
    fd = own_fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return;
  if (fstat (fd, &st) == 0 && st.st_uid == geteuid () && (S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)))
    {
      mode_t add = S_IRGRP | S_IWGRP | (S_ISDIR (st.st_mode) ? S_IXGRP | S_ISGID : 0);

      /* Not a member of that group: the folder's setgid bit did it already,
       * or nothing can. */
      if (st.st_gid != pst.st_gid && fchown (fd, (uid_t) -1, pst.st_gid) < 0)
        g_debug ("Cannot give %s the group of %s: %s", path, parent, g_strerror (errno));
      if ((st.st_mode & add) != add && fchmod (fd, (st.st_mode & 07777) | add) < 0)
        g_debug ("Cannot open %s to the group of %s: %s", path, parent, g_strerror (errno));
    }
  if (own_fd >= 0)
    close (own_fd);
}

gboolean
_tessera_mkdir_with_parents (const char  *path,
                             GError     **error)
{
  if (g_mkdir_with_parents (path, 0777) < 0)
    {
      set_io_error (error, errno, _("Cannot create the folder %s: %s"), path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
is_nfs (int fd)
{
  struct statfs sfs;
  return fstatfs (fd, &sfs) == 0 && sfs.f_type == NFS_SUPER_MAGIC;
}

static int
ofd_lock (int fd, short type, gboolean wait)
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
      if (ofd_lock (fd, F_WRLCK, FALSE) == 0)
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

int
_tessera_ipc_lock_acquire (const char  *path,
                           GError     **error)
{
  gboolean try_only = GPOINTER_TO_INT (g_private_get (&ipc_try_only));

  for (;;)
    {
      struct stat fst, pst;
      gboolean nfs;
      /* 0666 & ~umask, like the Python peers; made usable by the pool's
       * group when we are the one creating it. */
      int fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

      if (fd < 0 && errno == ENOENT)
        {
          fd = open (path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
          if (fd >= 0)
            _tessera_share_like_parent (fd, path);
          else if (errno == EEXIST)
            continue;
        }

      if (fd < 0)
        {
          set_io_error (error, errno, _("Cannot open %s: %s"), path);
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
              set_io_error (error, errno, _("Cannot lock %s: %s"), path);
              close (fd);
              return -1;
            }
          if (ofd_lock (fd, F_WRLCK, FALSE) < 0)
            {
              if (errno == EAGAIN || errno == EACCES)
                return fail_would_block (fd, path, error);
              set_io_error (error, errno, _("Cannot lock %s: %s"), path);
              close (fd);
              return -1;
            }
        }
      else if (!nfs && flock_retry (fd, LOCK_EX) < 0)
        {
          int saved = errno;
          close (fd);
          set_io_error (error, saved, _("Cannot lock %s: %s"), path);
          return -1;
        }
      else if ((nfs ? ofd_lock (fd, F_WRLCK, TRUE) : ofd_lock_after_flock (fd)) < 0)
        {
          int saved = errno;
          close (fd);
          set_io_error (error, saved, _("Cannot lock %s: %s"), path);
          return -1;
        }
      /* filelock-based peers unlink ipc.lock when they release: a lock on
       * an unlinked inode excludes nobody, so start again on the new one. */
      if (fstat (fd, &fst) == 0 && fst.st_nlink > 0 &&
          lstat (path, &pst) == 0 && pst.st_ino == fst.st_ino && pst.st_dev == fst.st_dev)
        return fd;
      _tessera_ipc_lock_release (fd);
    }
}

/* For a reader that changes nothing (status): a shared hold on ipc.lock
 * when it can be opened, so no writer is half-way; -1 when it cannot (a
 * read-only mount, a pool of another group, none made yet): the caller
 * then reads without it, and the view may be moving. */
int
_tessera_ipc_lock_acquire_shared (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  struct stat st;

  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) ||
      (!is_nfs (fd) && flock_retry (fd, LOCK_SH) < 0) || ofd_lock (fd, F_RDLCK, TRUE) < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

void
_tessera_ipc_lock_release (int fd)
{
  if (fd < 0)
    return;
  ofd_lock (fd, F_UNLCK, FALSE);
  flock_retry (fd, LOCK_UN);
  close (fd);
}

int
_tessera_job_lock_take (const char  *path,
                        GError     **error)
{
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);

  if (fd < 0)
    {
      set_io_error (error, errno, _("Cannot open %s: %s"), path);
      return -1;
    }
  /* Never waits: a job runs once, so a held lock means another runs it. */
  if (ofd_lock (fd, F_WRLCK, FALSE) < 0)
    {
      int saved = errno;
      close (fd);
      if (saved == EAGAIN || saved == EACCES)
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                     _("Job lock %s is held by another process"), path);
      else
        set_io_error (error, saved, _("Cannot lock %s: %s"), path);
      return -1;
    }
  return fd;
}

/* Whether some process holds the job lock, in either kind: an fcntl lock
 * (classic lockf, as fasteners takes it, or OFD, as Tessera does) or a
 * flock (filelock, newer experimaestro). Never blocks: the flock probe
 * takes a shared lock without waiting and drops it at once. */
TesseraJobLockState
_tessera_job_lock_probe (const char *path)
{
  struct flock fl = { 0 };
  struct stat st;
  TesseraJobLockState state = TESSERA_JOB_LOCK_FREE;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

  if (fd < 0)
    return errno == ENOENT || errno == ENOTDIR ? TESSERA_JOB_LOCK_FREE : TESSERA_JOB_LOCK_UNKNOWN;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    state = TESSERA_JOB_LOCK_UNKNOWN;
  else
    {
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      if (fcntl (fd, F_OFD_GETLK, &fl) < 0)
        state = TESSERA_JOB_LOCK_UNKNOWN;
      else if (fl.l_type != F_UNLCK)
        state = TESSERA_JOB_LOCK_HELD;
      else if (flock (fd, LOCK_SH | LOCK_NB) < 0)
        state = errno == EWOULDBLOCK ? TESSERA_JOB_LOCK_HELD : TESSERA_JOB_LOCK_UNKNOWN;
    }
  close (fd);
  return state;
}

gboolean
_tessera_job_lock_is_held (const char *path)
{
  return _tessera_job_lock_probe (path) == TESSERA_JOB_LOCK_HELD;
}

/* Field 3 (state) and field 22 (start time, in clock ticks since boot) of
 * /proc/PID/stat; the command name may hold spaces and parentheses, so
 * parse from the last ')'. */
gboolean
_tessera_proc_stat (GPid     pid,
                    guint64 *start_time,
                    char    *state)
{
  char path[64];
  g_autofree char *contents = NULL;
  const char *p;
  int field;

  if (pid <= 0)
    return FALSE;
  g_snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
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
