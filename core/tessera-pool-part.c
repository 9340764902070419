/* tessera-pool-part.c: the parts Tessera keeps in a folder pool, named
 * for the programs and plugins that reach them (`tessera init` and
 * `run`, the configuration's sharing, the mutex's intents/) from the
 * lock folder's names, and reached for them: opened from the pool's
 * folder without following a link, made and shared with the pool's
 * group as the library makes its own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-job-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <dirent.h>
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

/* @name in @dir_fd, a folder, if it is ours (never through a link):
 * -1 with errno else (EPERM: another user's). */
static int
open_own_folder_at (int dir_fd, const char *name)
{
  struct stat st;
  int fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

  if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_uid != geteuid ()))
    {
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

/**
 * tessera_pool_part_open_runs:
 * @lock_folder: a folder pool's lock folder
 * @path: (out) (optional) (transfer full): where the folder opened is
 *
 * Opens this user's folder for job folders in the lock folder
 * @lock_folder, making it when missing: `runs/UID` in it, ours, reached
 * from [func@Tessera.folder_path_open] without following a link.
 * `tessera run` keeps its job folders there, so that every judge of the
 * pool (in a container with its own state folder, on another host) can
 * probe the job lock of a holder it cannot judge by its pid.
 *
 * In a pool shared with a group (a group-writable folder) it is readable
 * by the pool's group, and `runs/` is the group's and sticky: each user
 * makes a folder there, none removes another's. A member makes no `runs/`
 * in a group's pool (see [func@Tessera.folder_path_may_make_folder]):
 * `tessera init` does.
 *
 * Returns: the folder's descriptor, to close, or -1 (with @path untouched)
 *   when it cannot be had safely (a co-user's link or folder in its
 *   place) or at all (a pool this user may not write)
 */
int
tessera_pool_part_open_runs (const char  *lock_folder,
                             char       **path)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  struct stat st;
  int lock_folder_fd, runs_fd = -1, own_fd = -1;
  gboolean shared;

  g_return_val_if_fail (lock_folder != NULL, -1);
  lock_folder_fd = tessera_folder_path_open (lock_folder, NULL);
  if (lock_folder_fd < 0)
    goto out;
  /* Group-writable, everyone's too: what is made here is the group's. */
  shared = tessera_folder_path_get_sharing (lock_folder_fd) != TESSERA_FOLDER_SHARING_NONE;
  /* A member makes no runs/ in a group's pool: its owner could move
   * anyone's job folder in it (init makes it). */
  if (fstatat (lock_folder_fd, _TESSERA_POOL_RUNS, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
      !tessera_folder_path_may_make_folder (lock_folder_fd, lock_folder, _TESSERA_POOL_RUNS, NULL))
    goto out;
  if (mkdirat (lock_folder_fd, _TESSERA_POOL_RUNS, shared ? 0770 : 0755) == 0 &&
      (runs_fd = openat (lock_folder_fd, _TESSERA_POOL_RUNS, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0 &&
      shared)
    fchmod (runs_fd, S_ISVTX | S_ISGID | 0770);
  if (runs_fd < 0)
    runs_fd = openat (lock_folder_fd, _TESSERA_POOL_RUNS, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (runs_fd < 0 || (mkdirat (runs_fd, uid, 0750) < 0 && errno != EEXIST))
    goto out;
  own_fd = open_own_folder_at (runs_fd, uid);
  if (own_fd >= 0 && shared && fchmod (own_fd, S_ISGID | 0750) < 0)
    {
      close (own_fd);
      own_fd = -1;
    }
  if (own_fd >= 0 && path != NULL)
    *path = g_build_filename (lock_folder, _TESSERA_POOL_RUNS, uid, NULL);

out:
  if (runs_fd >= 0)
    close (runs_fd);
  if (lock_folder_fd >= 0)
    close (lock_folder_fd);
  return own_fd;
}

/* Says that the folder @path could not be made (or opened: @making
 * FALSE) for the reason @saved. */
static void
set_folder_error (GError **error, gboolean making, const char *path, int saved)
{
  if (making)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"), path,
                 g_strerror (saved));
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot open %s: %s"), path,
                 g_strerror (saved));
}

/* The job folder @name made in @root by path, for a root given by
 * whoever runs (none a co-user may swap). */
static char *
make_job_folder_in (const char *root, const char *name, int *folder_fd, GError **error)
{
  g_autofree char *folder = g_build_filename (root, name, NULL);
  struct stat st;

  if (g_mkdir_with_parents (folder, 0750) < 0)
    {
      set_folder_error (error, TRUE, folder, errno);
      return NULL;
    }
  /* Whatever our umask, the group of a shared runs folder reads it. */
  if (stat (root, &st) == 0 && (st.st_mode & (S_ISGID | S_IRGRP | S_IXGRP)) == (S_ISGID | S_IRGRP | S_IXGRP))
    chmod (folder, S_ISGID | 0750);
  /* From here the job's files go through this descriptor. */
  if ((*folder_fd = open (folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    {
      set_folder_error (error, FALSE, folder, errno);
      return NULL;
    }
  return g_steal_pointer (&folder);
}

/**
 * tessera_pool_part_make_job_folder:
 * @lock_folder: (nullable): a folder pool's lock folder, or %NULL
 * @root: the folder to make it in when @lock_folder is %NULL or has no
 *   folder for this user's job folders; made when missing
 * @identifier: (out) (transfer full): the job's identifier, the folder's
 *   name (`<host>-<pid>-<random>`, as [ctor@Tessera.Job.new_private]
 *   names its job)
 * @folder_fd: (out): the folder's descriptor, to close
 * @error: return location for a #GError
 *
 * Makes a job's own folder for a run, as `tessera run` does: in
 * @lock_folder's `runs/UID` ([func@Tessera.pool_part_open_runs]), where
 * every judge of the pool (in a container with its own state folder, on
 * another host) can probe the job's lock; else, when @lock_folder is
 * %NULL or that folder cannot be had, in @root (for instance
 * `$XDG_STATE_HOME/tessera/jobs`).
 *
 * In a pool's `runs/UID`, which a co-user of a group's pool may try to
 * swap, the folder is made through the descriptor of the `runs/UID` that
 * was checked, is ours, readable by the pool's group (setgid), and its
 * path must still lead to it. In @root it is made by path, and readable
 * by @root's group when @root is setgid and group-readable. The job's
 * files are written through @folder_fd ([ctor@Tessera.Job.new_at]).
 *
 * Returns: (transfer full): the folder's path, or %NULL with @error set
 *   (a `G_IO_ERROR`)
 */
char *
tessera_pool_part_make_job_folder (const char  *lock_folder,
                                   const char  *root,
                                   char       **identifier,
                                   int         *folder_fd,
                                   GError     **error)
{
  g_autofree char *name = _tessera_job_dup_new_identifier ();
  g_autofree char *runs = NULL;
  g_autofree char *folder = NULL;
  struct stat st, path_st;
  int own_fd, job_fd;

  g_return_val_if_fail (root != NULL, NULL);
  g_return_val_if_fail (identifier != NULL, NULL);
  g_return_val_if_fail (folder_fd != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  own_fd = lock_folder != NULL ? tessera_pool_part_open_runs (lock_folder, &runs) : -1;
  if (own_fd < 0)
    {
      folder = make_job_folder_in (root, name, folder_fd, error);
      if (folder != NULL)
        *identifier = g_steal_pointer (&name);
      return g_steal_pointer (&folder);
    }
  folder = g_build_filename (runs, name, NULL);
  if (mkdirat (own_fd, name, 0750) < 0 || (job_fd = open_own_folder_at (own_fd, name)) < 0)
    {
      int saved = errno;

      close (own_fd);
      set_folder_error (error, TRUE, folder, saved);
      return NULL;
    }
  close (own_fd);
  fchmod (job_fd, S_ISGID | 0750);
  /* The files of the job are written by path from here: the path must
   * lead to the folder just made, not to one a co-user swapped in. */
  if (fstat (job_fd, &st) < 0 || lstat (folder, &path_st) < 0 || st.st_dev != path_st.st_dev ||
      st.st_ino != path_st.st_ino)
    {
      close (job_fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("The job folder %s was moved while it was made (a co-user of the pool?)"), folder);
      return NULL;
    }
  *folder_fd = job_fd;
  *identifier = g_steal_pointer (&name);
  return g_steal_pointer (&folder);
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

/* Whether a part of a pool is ours to give a group or a mode: this
 * user's folder, or this user's regular file with no other link (a file
 * of ours linked there keeps its mode). Root's part (when this user is
 * not root), another user's, or anything else is left as it is. */
static gboolean
is_ours_to_share (int fd, struct stat *st)
{
  return fstat (fd, st) == 0 && st->st_uid == geteuid () &&
         (S_ISDIR (st->st_mode) || (S_ISREG (st->st_mode) && st->st_nlink == 1));
}

/**
 * tessera_pool_part_share_with_group:
 * @fd: a part of a pool (a folder or a file), opened without following
 *   a link
 * @gid: the group the pool is shared with
 * @writable_file: for a file: whether every member writes it (ipc.lock)
 * @sticky: for a folder: whether it is made sticky (only an entry's
 *   owner, root or the folder's owner then renames or removes it)
 *
 * Gives @fd, when it is this user's, to the group @gid as a pool shared
 * from the start (`tessera init --group`) has it, whatever the umask: a
 * folder group-writable and setgid; a file group-readable, and
 * group-writable only when @writable_file: no member rewrites another's.
 * What the library makes in a group's pool is given the same mode. Root's
 * part (when this user is not root), another user's, a file with other
 * links, or what is neither a folder nor a regular file is left as it is.
 *
 * Returns: 0, or the `errno` of the change that failed (the group is
 *   given first: the mode is not changed when it could not be)
 */
int
tessera_pool_part_share_with_group (int      fd,
                                      guint32  gid,
                                      gboolean writable_file,
                                      gboolean sticky)
{
  struct stat st;
  mode_t mode;

  g_return_val_if_fail (fd >= 0, EBADF);
  if (!is_ours_to_share (fd, &st))
    return 0;
  mode = _tessera_group_share_mode (&st, TRUE, writable_file, sticky);
  if ((st.st_gid != (gid_t) gid && fchown (fd, (uid_t) -1, (gid_t) gid) < 0) ||
      (mode != (st.st_mode & 07777) && fchmod (fd, mode) < 0))
    return errno;
  return 0;
}

/**
 * tessera_pool_part_give_settings:
 * @fd: a part of a resource's pool (its folder, a folder or a file in
 *   it), opened without following a link
 * @mode: the mode of the resource's `mode=` setting (a folder is given
 *   it, a file its read and write bits), or -1 to leave the mode
 * @gid: the group of its `group=` setting, or -1 to leave the group
 *
 * Gives @fd, when it is this user's, the mode and group a resource's
 * settings say, instead of what it took from the folder it is in. What
 * is left as it is is what [func@Tessera.pool_part_share_with_group]
 * leaves: root's part (when this user is not root), another user's, a
 * file with other links, or what is neither a folder nor a regular file.
 *
 * Returns: 0, or the `errno` of the change of group that failed (the
 *   mode is given all the same)
 */
int
tessera_pool_part_give_settings (int    fd,
                                 int    mode,
                                 gint64 gid)
{
  struct stat st;
  int saved = 0;

  g_return_val_if_fail (fd >= 0, EBADF);
  if (!is_ours_to_share (fd, &st))
    return 0;
  if (gid >= 0 && st.st_gid != (gid_t) gid && fchown (fd, (uid_t) -1, (gid_t) gid) < 0)
    saved = errno;
  /* Only a group not given is worth its caller's message: the parts
   * stay usable by their owner whatever their mode. */
  if (mode >= 0)
    (void) fchmod (fd, (mode_t) (S_ISDIR (st.st_mode) ? mode : mode & 0666));
  return saved;
}
