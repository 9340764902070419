/* tessera-pool-part-side-folders.c: the folders a resource type keeps
 * in a lock folder beside the pool's own parts (the mutex's intents/):
 * a kind's name checked, its folder opened and made, and all of them
 * listed; their entries are tessera-side-folder.c's
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <tessera/tessera.h>
#include <unistd.h>

/* A side folder's kind: a short lower-case word, none of the pool's own
 * names. */
static gboolean
is_side_kind (const char *kind)
{
  static const char *const own[] = { _TESSERA_POOL_JOBS, _TESSERA_POOL_QUEUE, _TESSERA_POOL_HOSTS,
                                     _TESSERA_POOL_RUNS, NULL };

  if (*kind == '\0' || strlen (kind) > 32 || g_strv_contains (own, kind))
    return FALSE;
  for (const char *p = kind; *p != '\0'; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

/**
 * tessera_pool_part_open_side_folder:
 * @lock_folder: (nullable): a folder pool's lock folder
 * @kind: the folder's name, a short lower-case word of the resource
 *   type's own (the mutex's `intents`), none of the pool's own folders
 * @create: make it when missing
 *
 * Opens the folder @kind a resource type keeps in its lock folder beside
 * the pool's own files (as the etcd store keeps side entries,
 * [method@Tessera.TrackedDynamicResource.put_side_entry]), without
 * following a link (a co-user may have planted one to a folder of ours),
 * @lock_folder opened as [func@Tessera.folder_path_open] opens it: reach
 * everything in it through the descriptor.
 *
 * When @create, it is made unless this user may not make it (a member
 * makes none in a group's pool, see
 * [func@Tessera.folder_path_may_make_folder]: she could remove the
 * others' entries in it; `tessera init` makes it, through
 * [vfunc@Tessera.TrackedDynamicResource.prepare_pool]). In a group's pool
 * what is made is the group's whatever the umask (as `jobs/` is), and
 * sticky when the lock folder is: only an entry's owner (or root, or the
 * folder's owner) rewrites or removes it.
 *
 * Returns: the folder's descriptor, to close, or -1 with `errno` set when
 *   it is missing or not a real folder (a link is warned of once), when
 *   @kind is no side folder's name (`EINVAL`), or when @lock_folder is
 *   %NULL (a pool configured without a folder)
 */
int
tessera_pool_part_open_side_folder (const char *lock_folder,
                                    const char *kind,
                                    gboolean    create)
{
  int lock_folder_fd;
  gboolean created;
  struct stat there;
  int fd, saved;

  g_return_val_if_fail (kind != NULL, -1);
  if (!is_side_kind (kind))
    {
      errno = EINVAL;
      return -1;
    }
  lock_folder_fd = lock_folder != NULL ? tessera_folder_path_open (lock_folder, NULL) : -1;
  if (lock_folder_fd < 0)
    return -1;
  created = create && (fstatat (lock_folder_fd, kind, &there, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT ||
                       tessera_folder_path_may_make_folder (lock_folder_fd, lock_folder, kind, NULL)) &&
            mkdirat (lock_folder_fd, kind, 0777) == 0;
  fd = openat (lock_folder_fd, kind, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  saved = errno;
  if (created && fd >= 0)
    {
      g_autofree char *path = g_build_filename (lock_folder, kind, NULL);

      _tessera_share_like_parent (fd, path);
    }
  if (fd < 0 && (saved == ELOOP || saved == ENOTDIR))
    {
      static gsize warned = 0;

      if (g_once_init_enter (&warned))
        {
          g_autofree char *path = g_build_filename (lock_folder, kind, NULL);

          g_warning (_("%s is not a folder (a symbolic link?): nothing is read, written or deleted through it; remove it"),
                     path);
          g_once_init_leave (&warned, 1);
        }
    }
  close (lock_folder_fd);
  errno = saved;
  return fd;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/**
 * tessera_pool_part_list_side_folders:
 * @lock_folder_fd: a folder pool's lock folder, opened
 *
 * The side folders resource types keep in the lock folder
 * ([func@Tessera.pool_part_open_side_folder]): every real folder
 * directly in it (never a link) whose name is a side folder's kind, none
 * of the pool's own parts. A program that handles every part of a pool
 * (`tessera init --group`, which gives them to the group) reaches them
 * so, without knowing which type made which.
 *
 * Returns: (transfer full) (array zero-terminated=1): their names, sorted;
 *   empty when there is none or the folder cannot be read
 */
char **
tessera_pool_part_list_side_folders (int lock_folder_fd)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  /* A descriptor of its own: readdir moves its offset. */
  int fd = lock_folder_fd >= 0 ? openat (lock_folder_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *entry;

  if (dir == NULL && fd >= 0)
    close (fd);
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (is_side_kind (entry->d_name) &&
          fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode))
        g_ptr_array_add (names, g_strdup (entry->d_name));
    }
  if (dir != NULL)
    closedir (dir);
  g_ptr_array_sort (names, compare_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_steal (names, NULL);
}
