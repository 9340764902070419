/* tessera-folder-path.c: a configured folder opened component by
 * component, following a link only where no other user could have put it
 *
 * The library opens every pool and resource folder of its configuration
 * this way, and tessera_folder_path_open() gives the same to a program
 * or plugin that reaches such a folder itself (`tessera clean`, the mutex
 * plugin's intents).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-path-private.h"
#include "tessera-private.h"
#include "tessera-temporary-name-private.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* On the way, search permission is enough (as for a path): O_PATH. */
#define STEP_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Whether the link @link_st, found in the folder @folder_st, may be
 * followed: no other user may have put it there. In a folder that only
 * we or root may write (OpenSSH's safe_path(): owned by us or root,
 * neither group- nor other-writable), whoever made the link could
 * follow it anyway. In a sticky folder nobody renames or removes
 * another's entry, so a link of ours, of root's or of the folder's
 * owner's is theirs to have made (the kernel's protected_symlinks). */
static gboolean
link_may_be_followed (const struct stat *folder_st,
                      const struct stat *link_st)
{
  uid_t me = geteuid ();

  if ((folder_st->st_uid == me || folder_st->st_uid == 0) && (folder_st->st_mode & (S_IWGRP | S_IWOTH)) == 0)
    return TRUE;
  return (folder_st->st_mode & S_ISVTX) != 0 &&
         (link_st->st_uid == me || link_st->st_uid == 0 || link_st->st_uid == folder_st->st_uid);
}

/* Puts the components of @text at the head of @queue, in order. */
static void
push_components (GQueue *queue, const char *text)
{
  g_auto(GStrv) parts = g_strsplit (text, "/", -1);

  for (guint i = g_strv_length (parts); i-- > 0;)
    if (*parts[i] != '\0' && strcmp (parts[i], ".") != 0)
      g_queue_push_head (queue, g_strdup (parts[i]));
}

/* The text of the link @name in @dir_fd, whatever its length. */
static char *
read_link_at (int dir_fd, const char *name, gsize size)
{
  gsize room = MAX (size, 64) + 1;

  for (;;)
    {
      g_autofree char *buffer = g_malloc (room);
      ssize_t n = readlinkat (dir_fd, name, buffer, room);

      if (n < 0)
        return NULL;
      if ((gsize) n < room)
        {
          buffer[n] = '\0';
          return g_steal_pointer (&buffer);
        }
      if (room > 1024 * 1024)
        {
          errno = ENAMETOOLONG;
          return NULL;
        }
      room *= 2;
    }
}

/* Says why @path cannot be had (@creating: a folder on the way could not
 * be made), with errno set to @saved; closes @fd. */
static int
fail_creating (int fd, int saved, gboolean creating, GError **error, const char *path)
{
  if (fd >= 0)
    close (fd);
  if (creating)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"), path,
                 g_strerror (saved));
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot open %s: %s"), path,
                 g_strerror (saved));
  errno = saved;
  return -1;
}

static int
fail (int fd, int saved, GError **error, const char *path)
{
  return fail_creating (fd, saved, FALSE, error, path);
}

/* How the folder of stat @st is shared: the one rule of
 * tessera_folder_path_get_sharing(), for core's units that have the
 * stat already. */
TesseraFolderSharing
_tessera_folder_sharing_of (const struct stat *st)
{
  if (!(st->st_mode & S_IWGRP))
    return TESSERA_FOLDER_SHARING_NONE;
  if (st->st_mode & S_IWOTH)
    return TESSERA_FOLDER_SHARING_EVERYONE;
  if ((st->st_mode & (S_ISGID | S_ISVTX)) == (S_ISGID | S_ISVTX))
    return TESSERA_FOLDER_SHARING_GROUP_PREPARED;
  return TESSERA_FOLDER_SHARING_GROUP;
}

/* A folder that `tessera init --group` prepared: setgid, sticky,
 * writable by its group and not by everyone. */
static gboolean
is_group_pool (const struct stat *st)
{
  return _tessera_folder_sharing_of (st) == TESSERA_FOLDER_SHARING_GROUP_PREPARED;
}

/* The owner of a group's pool: that of @parent_fd, the folder that holds
 * a resource's folder (the one `init --group` shared), when it is shared
 * with its group at least as @least says; else -1. The one rule of who
 * owns a pool (tessera_folder_path_get_pool_owner()) and whose entries a
 * group's pool believes (_tessera_owner_believed_in()). */
static gint64
group_pool_owner (int parent_fd, TesseraFolderSharing least)
{
  struct stat st;

  if (fstat (parent_fd, &st) < 0 || _tessera_folder_sharing_of (&st) < least)
    return -1;
  return st.st_uid;
}

gboolean
_tessera_may_make_folder_in (int          dir_fd,
                             const char  *dir_path,
                             const char  *name,
                             GError     **error)
{
  struct stat st;
  uid_t me = geteuid ();

  if (fstat (dir_fd, &st) < 0 || me == 0 || st.st_uid == me || !is_group_pool (&st))
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               _("%s/%s does not exist, and in a folder shared with a group (setgid and sticky, as “tessera init "
                 "--group” makes it) only its owner or root makes it: ask them to run “tessera init” for it, or "
                 "keep a pool of your own elsewhere"), dir_path, name);
  errno = EACCES;
  return FALSE;
}

gboolean
_tessera_owner_believed_in (int                pool_fd,
                            const struct stat *st,
                            const char        *path,
                            GError           **error)
{
  gint64 pool_owner = group_pool_owner (pool_fd, TESSERA_FOLDER_SHARING_GROUP_PREPARED);
  struct passwd *pw;
  g_autofree char *owner = NULL;

  if (pool_owner < 0 || st->st_uid == 0 || (gint64) st->st_uid == pool_owner)
    return TRUE;
  pw = getpwuid (st->st_uid);
  owner = pw != NULL ? g_strdup (pw->pw_name) : g_strdup_printf ("%u", (guint) st->st_uid);
  /* Translators: "/srv/pool/cpu/informations.json belongs to mallory, not to the pool's owner: …" */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
               _("%s belongs to %s, not to the pool's owner, so it is not believed in a group's pool: the pool's "
                 "owner or root removes it or chowns it, then runs “tessera init”"), path, owner);
  errno = EACCES;
  return FALSE;
}

/* How walk() goes down. */
typedef struct {
  /* A missing folder is made (where this user may make one). */
  gboolean create;
  /* A link on the way is refused, never followed, and so is "..": the
   * walk stays below where it starts. Each folder on the way is opened
   * for reading (not O_PATH), to be given to @step. */
  gboolean no_links;
  /* Given each folder on the way, the last one too. */
  TesseraFolderPathStepFunc step;
  gpointer step_data;
} WalkRules;

/* Fails a walk under no_links at the step @step_path, with errno @saved:
 * a link (or anything not a folder) says so; closes @fd. */
static int
fail_step (int fd, int saved, GError **error, const char *step_path)
{
  if (saved != ENOTDIR && saved != ELOOP)
    return fail (fd, saved, error, step_path);
  if (fd >= 0)
    close (fd);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, _("%s is not a folder (a link is never followed there)"),
               step_path);
  errno = ENOTDIR;
  return -1;
}

/* Walks from @from_fd (@from_path, for messages), or from / when it is
 * -1, through the components in @queue (@path, for messages), as
 * @rules say. */
static int
walk (int from_fd, const char *from_path, GQueue *queue, const char *path, const WalkRules *rules, GError **error)
{
  /* Where we are, for messages: the links resolved, as the kernel would. */
  g_autoptr(GString) here = g_string_new (from_fd >= 0 ? from_path : NULL);
  int step_flags = rules->no_links ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC : STEP_FLAGS;
  guint links = 0;
  int fd, next_fd;

  fd = from_fd >= 0 ? openat (from_fd, ".", step_flags) : open ("/", STEP_FLAGS);
  if (fd < 0)
    return fail (-1, errno, error, from_fd >= 0 ? from_path : path);

  while (!g_queue_is_empty (queue))
    {
      g_autofree char *name = g_queue_pop_head (queue);
      g_autofree char *target = NULL;
      struct stat folder_st, link_st;
      int next;

      if (strcmp (name, "..") == 0 && rules->no_links)
        return fail (fd, EINVAL, error, path);
      if (strcmp (name, "..") == 0)
        {
          char *slash = strrchr (here->str, '/');

          next = openat (fd, "..", STEP_FLAGS);
          if (next < 0)
            return fail (fd, errno, error, path);
          close (fd);
          fd = next;
          g_string_truncate (here, slash != NULL ? (gsize) (slash - here->str) : 0);
          continue;
        }
      next = openat (fd, name, step_flags);
      if (next < 0 && errno == ENOENT && rules->create)
        {
          if (!_tessera_may_make_folder_in (fd, here->len > 0 ? here->str : "", name, error))
            {
              close (fd);
              return -1;
            }
          if (mkdirat (fd, name, 0777) < 0 && errno != EEXIST)
            return fail_creating (fd, errno, TRUE, error, path);
          next = openat (fd, name, step_flags);
        }
      if (next >= 0)
        {
          close (fd);
          fd = next;
          g_string_append_c (here, '/');
          g_string_append (here, name);
          if (rules->step != NULL && !rules->step (fd, here->str, rules->step_data))
            {
              close (fd);
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Stopped at %s"), here->str);
              errno = ECANCELED;
              return -1;
            }
          continue;
        }
      if (rules->no_links)
        {
          int saved = errno;
          g_autofree char *step_path = g_strdup_printf ("%s/%s", here->str, name);

          return fail_step (fd, saved, error, step_path);
        }
      /* O_NOFOLLOW | O_DIRECTORY on a link: ENOTDIR (ELOOP without
       * O_DIRECTORY). Anything else, or no link, is the answer. */
      if ((errno != ENOTDIR && errno != ELOOP) || fstatat (fd, name, &link_st, AT_SYMLINK_NOFOLLOW) < 0 ||
          !S_ISLNK (link_st.st_mode))
        return fail (fd, errno == ELOOP ? ENOTDIR : errno, error, path);
      if (fstat (fd, &folder_st) < 0)
        return fail (fd, errno, error, path);
      if (!link_may_be_followed (&folder_st, &link_st))
        {
          close (fd);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                       _("%s/%s is a symbolic link in a folder other users may write in: refusing to follow it"),
                       here->str, name);
          errno = EPERM;
          return -1;
        }
      if (++links > _TESSERA_FOLDER_PATH_MAX_LINKS)
        return fail (fd, ELOOP, error, path);
      target = read_link_at (fd, name, (gsize) link_st.st_size);
      if (target == NULL)
        return fail (fd, errno, error, path);
      if (g_path_is_absolute (target))
        {
          close (fd);
          fd = open ("/", STEP_FLAGS);
          if (fd < 0)
            return fail (-1, errno, error, path);
          g_string_truncate (here, 0);
        }
      push_components (queue, target);
    }
  /* The folder itself, for reading its entries and writing there. */
  next_fd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (next_fd < 0)
    return fail (fd, errno, error, path);
  close (fd);
  return next_fd;
}

int
_tessera_open_folder_path (const char  *path,
                           gboolean     create,
                           GError     **error)
{
  GQueue queue = G_QUEUE_INIT;
  int fd, saved;

  if (path == NULL || *path == '\0')
    return fail (-1, ENOENT, error, "");
  if (!g_path_is_absolute (path))
    {
      g_autofree char *cwd = g_get_current_dir ();
      push_components (&queue, path);
      push_components (&queue, cwd);
    }
  else
    push_components (&queue, path);
  fd = walk (-1, NULL, &queue, path, &(WalkRules) { .create = create }, error);
  saved = errno;
  g_queue_clear_full (&queue, g_free);
  errno = saved;
  return fd;
}

/**
 * tessera_folder_path_open:
 * @path: a configured folder (a pool's or a resource's), absolute or from
 *   the current folder
 * @error: return location for a #GError
 *
 * Opens the folder @path as Tessera opens a pool's folder: one component
 * at a time, with `openat (O_DIRECTORY | O_NOFOLLOW)`, following a
 * component that is a symbolic link only if no other user may have put it
 * there (OpenSSH's StrictModes idea): its folder is ours or root's and
 * neither group- nor other-writable, or it is sticky and the link is
 * ours, root's or the folder owner's (the kernel's `protected_symlinks`
 * rule); at most 40 links in all. Nothing is created.
 *
 * A program that reaches a pool's folder itself (to look at its owner, or
 * give it a mode) should open it so, and reach what is below it with
 * `*at()` calls from the descriptor.
 *
 * Returns: the folder's descriptor (`O_RDONLY | O_DIRECTORY |
 *   O_CLOEXEC`), to close, or -1 with `errno` and @error set (a
 *   %G_IO_ERROR; a link refused is %G_IO_ERROR_PERMISSION_DENIED and
 *   `EPERM`, naming the link)
 */
int
tessera_folder_path_open (const char  *path,
                          GError     **error)
{
  return _tessera_open_folder_path (path, FALSE, error);
}

/**
 * tessera_folder_path_open_below:
 * @folder_fd: a folder, opened (a pool's folder, as
 *   [func@Tessera.folder_path_open] opens it)
 * @folder_path: its path, for messages and for @step
 * @below: a folder inside it, relative to it (`gpus`, `site/gpus`; a
 *   leading `/` and `.` components are skipped): no `..`; empty for
 *   @folder_fd's own
 * @step: (scope call) (nullable): given each folder on the way down,
 *   @below's own too, before the walk goes on
 * @user_data: (closure step): data for @step
 * @error: return location for a #GError
 *
 * Opens the folder @below in @folder_fd one component at a time, each
 * from its parent's descriptor with `openat (O_DIRECTORY | O_NOFOLLOW)`,
 * never following a link: a member of a group's pool may have planted
 * one on the way to have a folder of someone else's handed over. Unlike
 * [func@Tessera.folder_path_open], a link on the way is refused even
 * where no other user could have put it, and nothing is created.
 *
 * A program that does something to each folder from a pool's folder down
 * to a resource's (`tessera init --group` giving them to the group, or
 * refusing another user's) does it in @step, on the descriptor it is
 * given (open for reading: `fstat()`, `fchown()` and `fchmod()` work on
 * it), and reaches what is in the last with `*at()` calls from the
 * descriptor returned.
 *
 * Returns: @below's descriptor (`O_RDONLY | O_DIRECTORY | O_CLOEXEC`),
 *   to close, or -1 with `errno` and @error set (a %G_IO_ERROR naming the
 *   folder that failed; a link or a file on the way is
 *   %G_IO_ERROR_NOT_DIRECTORY and `ENOTDIR`; a walk that @step stopped is
 *   %G_IO_ERROR_CANCELLED and `ECANCELED`; a `..` in @below is
 *   %G_IO_ERROR_INVALID_ARGUMENT and `EINVAL`, before @step is called)
 */
int
tessera_folder_path_open_below (int                        folder_fd,
                                const char                *folder_path,
                                const char                *below,
                                TesseraFolderPathStepFunc  step,
                                gpointer                   user_data,
                                GError                   **error)
{
  GQueue queue = G_QUEUE_INIT;
  g_autofree char *path = NULL;
  int fd, saved;

  g_return_val_if_fail (folder_fd >= 0, -1);
  g_return_val_if_fail (folder_path != NULL && below != NULL, -1);
  path = g_build_filename (folder_path, below, NULL);
  push_components (&queue, below);
  /* Refused before the first step: @step must not have run on the
   * folders before a "..". */
  for (GList *l = queue.head; l != NULL; l = l->next)
    if (strcmp (l->data, "..") == 0)
      {
        g_queue_clear_full (&queue, g_free);
        return fail (-1, EINVAL, error, path);
      }
  fd = walk (folder_fd, folder_path, &queue, path,
             &(WalkRules) { .no_links = TRUE, .step = step, .step_data = user_data }, error);
  saved = errno;
  g_queue_clear_full (&queue, g_free);
  errno = saved;
  return fd;
}

/**
 * tessera_folder_path_may_make_folder:
 * @dir_fd: a folder of a pool (its own folder, or a resource's), as
 *   [func@Tessera.folder_path_open] opened it
 * @dir_path: its path, for the message
 * @name: the folder to be made in it (`runs`, `intents`, …)
 * @error: return location for a #GError
 *
 * Whether this user may make the folder @name in @dir_fd: not in a
 * group's pool that `tessera init --group` prepared (setgid, sticky,
 * writable by its group and not by everyone) that is neither this user's
 * nor is this user root. There only the pool's owner makes a resource's
 * folders: a member who made one would own it, and could remove the other
 * members' entries in it.
 *
 * Returns: %TRUE when it may; else %FALSE, with @error
 *   (%G_IO_ERROR_PERMISSION_DENIED) saying to run `tessera init`
 */
gboolean
tessera_folder_path_may_make_folder (int          dir_fd,
                                     const char  *dir_path,
                                     const char  *name,
                                     GError     **error)
{
  g_return_val_if_fail (dir_fd >= 0, FALSE);
  g_return_val_if_fail (dir_path != NULL && name != NULL, FALSE);
  return _tessera_may_make_folder_in (dir_fd, dir_path, name, error);
}

/**
 * tessera_folder_path_get_sharing:
 * @folder_fd: a folder of a pool (its own folder, the folder that holds
 *   it, a resource's), opened
 *
 * How @folder_fd is shared with other users, from its mode: by no one,
 * with its group and everyone, with its group only, or with its group
 * as `tessera init --group` prepares a pool (setgid and sticky). A
 * program that asks whether a pool is a group's asks it here, with the
 * least [enum@Tessera.FolderSharing] its question needs: "is anything
 * made here to be given to the group" (more than
 * %TESSERA_FOLDER_SHARING_NONE), "does the folder's owner administer the
 * pool" (%TESSERA_FOLDER_SHARING_GROUP or more), "may a member make
 * folders here, are her files believed"
 * (%TESSERA_FOLDER_SHARING_GROUP_PREPARED).
 *
 * Returns: how it is shared; %TESSERA_FOLDER_SHARING_NONE when it cannot
 *   be told
 */
TesseraFolderSharing
tessera_folder_path_get_sharing (int folder_fd)
{
  struct stat st;

  g_return_val_if_fail (folder_fd >= 0, TESSERA_FOLDER_SHARING_NONE);
  if (fstat (folder_fd, &st) < 0)
    return TESSERA_FOLDER_SHARING_NONE;
  return _tessera_folder_sharing_of (&st);
}

/**
 * tessera_folder_path_is_temporary_name:
 * @name: a file name in a pool's folder
 * @lock_files_only: only those of a lock file (`jobs/`, the queue), not of
 *   `informations.json` or another JSON file
 *
 * Whether @name is that of a temporary file Tessera's atomic writer makes
 * beside a JSON file it writes (`NAME.json.XXXXXX`), renamed into place
 * once whole: a writer killed half-way leaves it, and a cleaner may
 * remove it once no writer can still be busy with it.
 *
 * Returns: whether it is such a name
 */
gboolean
tessera_folder_path_is_temporary_name (const char *name,
                                       gboolean    lock_files_only)
{
  g_return_val_if_fail (name != NULL, FALSE);
  return lock_files_only ? _tessera_is_lock_file_temporary_name (name) : _tessera_is_temporary_name (name);
}

/**
 * tessera_folder_path_get_pool_owner:
 * @folder: a resource's folder (its pool's lock folder), absolute
 *
 * Who owns the pool whose resource's folder @folder is: the one who may
 * change its settings, force another user's holder out or retire a host,
 * beside root. In a group's pool (the folder that holds @folder is
 * shared with its group, %TESSERA_FOLDER_SHARING_GROUP or more, and not
 * with everyone as `/tmp` is), the owner of that folder, the one
 * `tessera init --group` shared: a member may have made @folder (her
 * first run, or before init), which makes her no owner. Otherwise (a
 * private pool) the owner of @folder. Both are opened as
 * [func@Tessera.folder_path_open] opens them.
 *
 * Returns: the owner's uid, or -1 when it cannot be told (@folder is
 *   not made yet, or cannot be opened)
 */
gint64
tessera_folder_path_get_pool_owner (const char *folder)
{
  g_autofree char *parent = NULL;
  struct stat st;
  gint64 owner = -1;
  int fd;

  g_return_val_if_fail (folder != NULL, -1);
  parent = g_path_get_dirname (folder);
  if ((fd = tessera_folder_path_open (parent, NULL)) >= 0)
    {
      owner = group_pool_owner (fd, TESSERA_FOLDER_SHARING_GROUP);
      close (fd);
      if (owner >= 0)
        return owner;
    }
  if ((fd = tessera_folder_path_open (folder, NULL)) < 0)
    return -1;
  if (fstat (fd, &st) == 0)
    owner = st.st_uid;
  close (fd);
  return owner;
}
