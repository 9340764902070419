/* tessera-pool-part.c: the parts Tessera keeps in a folder pool, named
 * for the programs and plugins that reach them (`tessera init` and
 * `run`, the configuration's sharing, the mutex's intents/) from the lock
 * folder's names: what each is and how a group's pool has it, one opened
 * without following a link, and whose a holder's entry in it is. Making
 * a run's folders, side folders and giving a group its modes are in
 * tessera-pool-part-runs.c, -side-folders.c and -sharing.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-lock-folder-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <tessera/tessera.h>
#include <unistd.h>

#define FOLDER_OF_ALL (TESSERA_POOL_PART_FLAGS_FOLDER | TESSERA_POOL_PART_FLAGS_GROUP_WRITES | \
                       TESSERA_POOL_PART_FLAGS_STICKY | TESSERA_POOL_PART_FLAGS_MADE_AHEAD)

static const struct
{
  const char *name;
  TesseraPoolPartFlags flags;
} parts[TESSERA_POOL_PART_LAST] = {
  [TESSERA_POOL_PART_JOBS] = { _TESSERA_POOL_JOBS, FOLDER_OF_ALL | TESSERA_POOL_PART_FLAGS_OF_RESOURCE },
  [TESSERA_POOL_PART_RUNS] = { _TESSERA_POOL_RUNS, FOLDER_OF_ALL },
  [TESSERA_POOL_PART_QUEUE] = { _TESSERA_POOL_QUEUE, FOLDER_OF_ALL },
  /* Sticky too: each user renews her own heartbeat and mark of each
   * host there, and no member may remove another's. */
  [TESSERA_POOL_PART_HOSTS] = { _TESSERA_POOL_HOSTS, FOLDER_OF_ALL },
  [TESSERA_POOL_PART_IPC_LOCK] = { _TESSERA_POOL_IPC_LOCK,
                                   TESSERA_POOL_PART_FLAGS_GROUP_WRITES | TESSERA_POOL_PART_FLAGS_OF_RESOURCE },
  [TESSERA_POOL_PART_INFORMATIONS] = { _TESSERA_POOL_INFORMATIONS,
                                       TESSERA_POOL_PART_FLAGS_OF_RESOURCE | TESSERA_POOL_PART_FLAGS_OWNERS },
};

/**
 * tessera_pool_part_get_name:
 * @part: a part of a folder pool
 *
 * The name of @part in a pool's lock folder.
 *
 * Returns: (transfer none): its name (`jobs`, `ipc.lock`, …)
 */
const char *
tessera_pool_part_get_name (TesseraPoolPart part)
{
  g_return_val_if_fail (part < TESSERA_POOL_PART_LAST, NULL);
  return parts[part].name;
}

/**
 * tessera_pool_part_get_flags:
 * @part: a part of a folder pool
 *
 * What @part is, and how a pool shared with a group has it.
 *
 * Returns: its flags
 */
TesseraPoolPartFlags
tessera_pool_part_get_flags (TesseraPoolPart part)
{
  g_return_val_if_fail (part < TESSERA_POOL_PART_LAST, TESSERA_POOL_PART_FLAGS_NONE);
  return parts[part].flags;
}

/**
 * tessera_pool_part_open:
 * @lock_folder: a folder pool's lock folder
 * @part: one of its folders (%TESSERA_POOL_PART_JOBS, …)
 *
 * Opens the folder @part of the pool, without following a link,
 * @lock_folder opened as [func@Tessera.folder_path_open] opens it;
 * nothing is made. A program that looks at a part itself (whose a lock
 * file is) reaches what is in it through the descriptor.
 *
 * Returns: the folder's descriptor, to close, or -1 with `errno` set
 */
int
tessera_pool_part_open (const char      *lock_folder,
                        TesseraPoolPart  part)
{
  int lock_folder_fd, fd, saved;

  g_return_val_if_fail (lock_folder != NULL, -1);
  g_return_val_if_fail (part < TESSERA_POOL_PART_LAST && (parts[part].flags & TESSERA_POOL_PART_FLAGS_FOLDER), -1);
  lock_folder_fd = tessera_folder_path_open (lock_folder, NULL);
  if (lock_folder_fd < 0)
    return -1;
  fd = openat (lock_folder_fd, parts[part].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  saved = errno;
  close (lock_folder_fd);
  errno = saved;
  return fd;
}

/**
 * tessera_pool_part_dup_holder_name:
 * @entry: the name of a holder's or a waiter's entry: a lock file of
 *   `jobs/` (`TASK@ID.json`), a waiting entry of `queue/`
 *   (`TASK@ID.waiting`), or the last part of a holder's key in a pool
 *   elsewhere (`TASK@ID`)
 *
 * The name of the holder (or waiter) whose entry @entry is, as a program
 * shows it or gives it back ([method@Tessera.TrackedDynamicResource.remove_holder]):
 * @entry without the end a pool gives it.
 *
 * Returns: (transfer full): its name (`TASK@ID`)
 */
char *
tessera_pool_part_dup_holder_name (const char *entry)
{
  const char *suffix;

  g_return_val_if_fail (entry != NULL, NULL);
  suffix = g_str_has_suffix (entry, _TESSERA_POOL_QUEUE_WAITING) ? _TESSERA_POOL_QUEUE_WAITING
                                                                  : TESSERA_LOCK_FILE_SUFFIX;
  if (g_str_has_suffix (entry, suffix))
    return g_strndup (entry, strlen (entry) - strlen (suffix));
  return g_strdup (entry);
}

/* Who owns @file of @part (a folder) of @lock_folder, never through a
 * link; -1 when none. */
static gint64
entry_owner (const char *lock_folder, TesseraPoolPart part, const char *file)
{
  struct stat st;
  gint64 owner = -1;
  int part_fd;

  if (strchr (file, '/') != NULL || (part_fd = tessera_pool_part_open (lock_folder, part)) < 0)
    return -1;
  if (fstatat (part_fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0)
    owner = st.st_uid;
  close (part_fd);
  return owner;
}

/**
 * tessera_pool_part_get_holder_owner:
 * @lock_folder: a folder pool's lock folder
 * @name: a holder's name (`TASK@ID`)
 *
 * Who owns the lock file of the holder @name in the pool's `jobs/`, as
 * it is there (never through a link), @lock_folder opened as
 * [func@Tessera.folder_path_open] opens it: whose holding it is, whatever
 * uid the file records (whoever may write in `jobs/` may write another's
 * uid in a file of hers, but owns it all the same).
 *
 * Returns: the owner's uid, or -1 when there is no such file (or @name is
 *   none: it has a `/`), or `jobs/` cannot be opened
 */
gint64
tessera_pool_part_get_holder_owner (const char *lock_folder,
                                    const char *name)
{
  g_autofree char *file = NULL;

  g_return_val_if_fail (lock_folder != NULL && name != NULL, -1);
  file = g_strconcat (name, TESSERA_LOCK_FILE_SUFFIX, NULL);
  return entry_owner (lock_folder, TESSERA_POOL_PART_JOBS, file);
}

/**
 * tessera_pool_part_get_entry_owner:
 * @lock_folder: a folder pool's lock folder
 * @path: the path of one of its entries as the library names it
 *   ([method@Tessera.DynamicLockFile.get_path]): a lock file in `jobs/`,
 *   or a request in `queue/`
 *
 * Who owns the entry at @path now, reached as
 * [func@Tessera.pool_part_get_holder_owner] reaches a lock file (never
 * through a link): whose holding or request it is, for an entry the
 * library shows without having read its file (one it cannot read, a
 * waiter's request).
 *
 * Returns: the owner's uid, or -1 when there is no such file, or @path is
 *   no entry of @lock_folder's `jobs/` or `queue/`
 */
gint64
tessera_pool_part_get_entry_owner (const char *lock_folder,
                                   const char *path)
{
  static const TesseraPoolPart entry_parts[] = { TESSERA_POOL_PART_JOBS, TESSERA_POOL_PART_QUEUE };
  g_autofree char *folder = NULL;
  g_autofree char *file = NULL;

  g_return_val_if_fail (lock_folder != NULL && path != NULL, -1);
  folder = g_path_get_dirname (path);
  file = g_path_get_basename (path);
  for (guint i = 0; i < G_N_ELEMENTS (entry_parts); i++)
    {
      g_autofree char *part = g_build_filename (lock_folder, tessera_pool_part_get_name (entry_parts[i]), NULL);

      if (strcmp (folder, part) == 0)
        return entry_owner (lock_folder, entry_parts[i], file);
    }
  return -1;
}
