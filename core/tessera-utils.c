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
