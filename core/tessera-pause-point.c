/* tessera-pause-point.c: named pause points for the race tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-pause-point-private.h"

#if TESSERA_PAUSE_POINTS

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* A race between two steps is reproduced by holding a process between
 * them while a test changes the folder: with TESSERA_PAUSE_AT=NAME[,NAME…]
 * and TESSERA_PAUSE_DIR=DIR, the first time this process reaches pause
 * point NAME it creates DIR/NAME.reached, then waits until DIR/NAME.go
 * exists. Each point pauses once per process. */
void
_tessera_pause_point (const char *name)
{
  static GMutex mutex;
  static GHashTable *passed;
  const char *armed = g_getenv ("TESSERA_PAUSE_AT");
  const char *dir = g_getenv ("TESSERA_PAUSE_DIR");
  g_auto(GStrv) names = NULL;
  g_autofree char *reached = NULL;
  g_autofree char *go = NULL;
  gboolean first;
  int fd;

  if (armed == NULL || dir == NULL)
    return;
  names = g_strsplit (armed, ",", -1);
  if (!g_strv_contains ((const char * const *) names, name))
    return;

  g_mutex_lock (&mutex);
  if (passed == NULL)
    passed = g_hash_table_new (g_str_hash, g_str_equal);
  first = g_hash_table_add (passed, (gpointer) g_intern_string (name));
  g_mutex_unlock (&mutex);
  if (!first)
    return;

  reached = g_strdup_printf ("%s/%s.reached", dir, name);
  go = g_strdup_printf ("%s/%s.go", dir, name);
  fd = open (reached, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0)
    close (fd);
  /* A test-only wait on a file the test creates; never in a release build. */
  while (access (go, F_OK) < 0 && errno == ENOENT)
    g_usleep (2000);
}

#endif
