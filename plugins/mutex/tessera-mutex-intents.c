/* tessera-mutex-intents.c: the mutex's intents/ folder, opened safely
 *
 * Exclusive waiters leave their intents in F/intents/ (see
 * tessera-mutex.c); both the resource, which reads and sweeps them, and
 * a dependency, which drops its own, reach the folder only here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera-mutex.h"

/* F/intents/, opened without following a link (a co-user may have
 * planted one to a folder of ours), F as the library opens it
 * (tessera_folder_path_open()): everything in it is reached through
 * this descriptor. -1 when it is missing or not a real folder, or when
 * the pool has no folder (a pool elsewhere configured without one). */
int
_tessera_mutex_open_intents (const char *lock_folder, gboolean create)
{
  int pool_fd = lock_folder != NULL ? tessera_folder_path_open (lock_folder, NULL) : -1;
  gboolean created;
  struct stat pool_st, st, there;
  int fd;

  if (pool_fd < 0)
    return -1;
  /* A member makes no intents/ in a group's pool (she could remove the
   * others' intents in it): init makes it (prepare_pool). */
  created = create && (fstatat (pool_fd, "intents", &there, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT ||
                       tessera_folder_path_may_make_folder (pool_fd, lock_folder, "intents", NULL)) &&
            mkdirat (pool_fd, "intents", 0777) == 0;
  fd = openat (pool_fd, "intents", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  /* In a group's pool, the group's whatever our umask (as jobs/ is), and
   * sticky when the resource's folder is: only an intent's owner (or
   * root, or the folder's owner) rewrites or removes it. */
  if (created && fd >= 0 && fstat (pool_fd, &pool_st) == 0 && (pool_st.st_mode & S_IWGRP) && fstat (fd, &st) == 0 &&
      (fchown (fd, (uid_t) -1, pool_st.st_gid) < 0 ||
       fchmod (fd, (st.st_mode & 07777) | S_ISGID | S_IRWXG | (pool_st.st_mode & S_ISVTX)) < 0))
    g_debug ("Cannot open %s/intents to the group: %s", lock_folder, g_strerror (errno));
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
    {
      static gsize warned = 0;
      if (g_once_init_enter (&warned))
        {
          g_autofree char *path = g_build_filename (lock_folder, "intents", NULL);
          g_warning (_("%s is not a folder (a symbolic link?): nothing is read, written or deleted through it; remove it"),
                     path);
          g_once_init_leave (&warned, 1);
        }
    }
  close (pool_fd);
  return fd;
}
