/* tessera-lock-wait.c: what a command stuck behind a peer's lock says
 *
 * A pool's ipc.lock is held for the microseconds of a decision; a peer
 * stopped or stuck on its file system keeps it, and every command of the
 * pool waits in flock() with no word of why. The kernel tells what a
 * thread waits in (/proc/self/task/TID/syscall: number and arguments),
 * on which file (its descriptor) and who holds that file's locks
 * (/proc/locks).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-lock-wait.h"

#include <glib/gi18n-lib.h>
#include <tessera/tessera.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The mount and inode numbers of a descriptor (@info: its
 * /proc/PID/fdinfo/N) and whether a lock is held through it (its "lock:"
 * lines: granted locks only). Read from the kernel's records, never
 * through the file's file system: a stat() of another process's file on
 * a hung mount would hang this thread, the one that takes signals. */
static gboolean
read_fd_info (const char *info, long *mnt_id, guint64 *ino, gboolean *locked)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  *mnt_id = -1;
  *ino = 0;
  *locked = FALSE;
  if (!g_file_get_contents (info, &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "mnt_id:"))
      *mnt_id = strtol (lines[i] + strlen ("mnt_id:"), NULL, 10);
    else if (g_str_has_prefix (lines[i], "ino:"))
      *ino = g_ascii_strtoull (lines[i] + strlen ("ino:"), NULL, 10);
    else if (g_str_has_prefix (lines[i], "lock:"))
      *locked = TRUE;
  return *mnt_id >= 0 && *ino != 0;
}

/* Whether process @pid holds a lock through a descriptor on the mount
 * @mnt_id and inode @ino (the very file ours is). Only what this user may
 * read of it: another user's process is not named. */
static gboolean
holds_lock_on (long pid, long mnt_id, guint64 ino)
{
  g_autofree char *infos = g_strdup_printf ("/proc/%ld/fdinfo", pid);
  g_autoptr(GDir) dir = g_dir_open (infos, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *info = g_build_filename (infos, name, NULL);
      long their_mnt_id;
      guint64 their_ino;
      gboolean locked;

      if (read_fd_info (info, &their_mnt_id, &their_ino, &locked) && locked &&
          their_mnt_id == mnt_id && their_ino == ino)
        return TRUE;
    }
  return FALSE;
}

/* The pid /proc/locks names as holding a lock on the file of @st (not a
 * waiter: "->" lines), or 0 (none seen; OFD locks name no pid). Lines
 * name a file by its file system's device, which on btrfs (and stacked
 * file systems) is not the one stat() gives: a holder of a lock on the
 * same inode number elsewhere is named only if it holds a lock through a
 * descriptor on the very file (@fd_path: ours), by the kernel's records
 * of its descriptors (inode numbers repeat across subvolumes). */
static long
holder_pid (const struct stat *st, const char *fd_path, long self)
{
  g_autofree char *locks = NULL;
  g_autofree char *file = g_strdup_printf ("%02x:%02x:%lu", major (st->st_dev), minor (st->st_dev),
                                           (unsigned long) st->st_ino);
  g_autofree char *inode = g_strdup_printf (":%lu", (unsigned long) st->st_ino);
  g_auto(GStrv) lines = NULL;
  long elsewhere[16];
  guint n_elsewhere = 0;

  if (!g_file_get_contents ("/proc/locks", &locks, NULL, NULL))
    return 0;
  lines = g_strsplit (locks, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = NULL;
      const char *where = NULL;
      long pid = 0;

      if (strstr (lines[i], inode) == NULL || strstr (lines[i], "->") != NULL)
        continue;
      /* "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END" */
      fields = g_strsplit_set (lines[i], " ", -1);
      for (guint j = 0, seen = 0; fields[j] != NULL; j++)
        {
          if (*fields[j] == '\0')
            continue;
          if (++seen == 5)
            pid = strtol (fields[j], NULL, 10);
          else if (seen == 6)
            where = fields[j];
        }
      if (pid <= 0 || pid == self || where == NULL)
        continue;
      if (strcmp (where, file) == 0)
        return pid;
      if (g_str_has_suffix (where, inode) && n_elsewhere < G_N_ELEMENTS (elsewhere))
        elsewhere[n_elsewhere++] = pid;
    }
  if (n_elsewhere > 0)
    {
      /* Our descriptor's own record: /proc/self/fd/N → /proc/self/fdinfo/N. */
      g_autofree char *base = g_path_get_basename (fd_path);
      g_autofree char *info = g_build_filename ("/proc/self/fdinfo", base, NULL);
      long mnt_id;
      guint64 ino;
      gboolean locked;

      if (read_fd_info (info, &mnt_id, &ino, &locked))
        for (guint i = 0; i < n_elsewhere; i++)
          if (holds_lock_on (elsewhere[i], mnt_id, ino))
            return elsewhere[i];
    }
  return 0;
}

/* "PATH is locked by another process", with the holder's pid when
 * /proc/locks names one; NULL when @only_held and it names none. */
static char *
describe_locked (const char *target, const char *fd_path, gboolean only_held)
{
  struct stat st;
  long pid = stat (fd_path, &st) == 0 ? holder_pid (&st, fd_path, (long) getpid ()) : 0;

  if (pid > 0)
    return g_strdup_printf (_("%s is locked by another process (pid %ld)"), target, pid);
  return only_held ? NULL : g_strdup_printf (_("%s is locked by another process"), target);
}

/* Holding a pool's flock, Tessera polls (sleeps) for the fcntl lock that
 * only a seed-era peer, using lockf() alone, can keep: a sleeping thread
 * waits so when another process keeps a lock on an ipc.lock we have open. */
static char *
describe_ipc_lock_poll (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *fd_path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (fd_path, NULL);
      const char *base = target != NULL ? strrchr (target, G_DIR_SEPARATOR) : NULL;
      char *words = base != NULL && g_str_equal (base + 1, tessera_pool_part_get_name (TESSERA_POOL_PART_IPC_LOCK))
                    ? describe_locked (target, fd_path, TRUE) : NULL;

      if (words != NULL)
        return words;
    }
  return NULL;
}

/* System call numbers: 32-bit systems have a 64-bit variant of each too,
 * which their C library calls. */
static const long sleep_calls[] = {
#ifdef SYS_nanosleep
  SYS_nanosleep,
#endif
#ifdef SYS_clock_nanosleep_time64
  SYS_clock_nanosleep_time64,
#endif
  SYS_clock_nanosleep,
};
static const long lock_calls[] = {
#ifdef SYS_fcntl64
  SYS_fcntl64,
#endif
  SYS_flock, SYS_fcntl,
};

static gboolean
is_one_of (long number, const long *numbers, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (number == numbers[i])
      return TRUE;
  return FALSE;
}

char *
tessera_lock_wait_describe (pid_t tid, gboolean *unknown)
{
  g_autofree char *syscall_path = g_strdup_printf ("/proc/self/task/%d/syscall", (int) tid);
  g_autofree char *text = NULL;
  g_autofree char *fd_path = NULL;
  g_autofree char *target = NULL;
  char *end = NULL;
  long number, fd;

  *unknown = FALSE;
  if (!g_file_get_contents (syscall_path, &text, NULL, NULL))
    {
      *unknown = TRUE;
      return NULL;
    }
  number = strtol (text, &end, 10);
  if (end != text && is_one_of (number, sleep_calls, G_N_ELEMENTS (sleep_calls)))
    return describe_ipc_lock_poll ();
  if (end == text || !is_one_of (number, lock_calls, G_N_ELEMENTS (lock_calls)))
    return NULL;
  fd = strtol (end, NULL, 16);
  fd_path = g_strdup_printf ("/proc/self/fd/%ld", fd);
  target = g_file_read_link (fd_path, NULL);
  if (target == NULL)
    return g_strdup (_("a lock file is locked by another process"));
  return describe_locked (target, fd_path, FALSE);
}

void
tessera_lock_wait_say (const char *words)
{
  g_printerr (_("tessera: %s; waiting for it (Ctrl-C gives up)\n"), words);
}

/* Looks at thread @data (a tid) four times a second. */
static gpointer
note_thread (gpointer data)
{
  pid_t tid = GPOINTER_TO_INT (data);
  g_autoptr(GHashTable) told = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *waiting = NULL;
  gint64 since = 0;

  for (;;)
    {
      gboolean unknown;
      g_autofree char *words = tessera_lock_wait_describe (tid, &unknown);

      if (unknown)
        break;
      if (g_strcmp0 (words, waiting) != 0)
        {
          g_free (waiting);
          waiting = g_steal_pointer (&words);
          since = g_get_monotonic_time ();
        }
      else if (waiting != NULL && g_get_monotonic_time () - since >= TESSERA_LOCK_NOTE_US &&
               !g_hash_table_contains (told, waiting))
        {
          tessera_lock_wait_say (waiting);
          g_hash_table_add (told, g_strdup (waiting));
        }
      g_usleep (G_USEC_PER_SEC / 4);
    }
  return NULL;
}

void
tessera_lock_wait_note_start (void)
{
  pid_t tid = (pid_t) syscall (SYS_gettid);

  g_thread_unref (g_thread_new ("tessera-lock-note", note_thread, GINT_TO_POINTER (tid)));
}
