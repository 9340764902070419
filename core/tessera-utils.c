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
