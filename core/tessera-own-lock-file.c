/* tessera-own-lock-file.c: a lock file this process wrote, and whether
 * it is still there as it was
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tessera/tessera.h>

/* More than any lock file Tessera writes. */
#define OWN_LOCK_FILE_MAX (1024 * 1024)

/**
 * TesseraOwnLockFile:
 *
 * A lock file this process wrote (a holding's, see
 * [method@Tessera.DynamicDependencyLock.dup_lock_file_path]), as it was
 * when made: its file and its text. [method@Tessera.OwnLockFile.check]
 * then says whether it is still there as it was, so that a program that
 * holds a share for long (`tessera run --on-lost`) learns it may be handed
 * to another. It is reached through its folder, opened at each look as
 * the library opens a pool's `jobs/`: never through a link, from its
 * parent opened as [func@Tessera.folder_path_open] opens a pool's folders
 * (a link on the way followed only where no other user may have put it),
 * and read bounded, never a FIFO and never through a link.
 */
struct _TesseraOwnLockFile
{
  GObject parent_instance;
  char *path;
  char *name;           /* its last component, in its folder */
  struct stat st;       /* the file when made */
  char *text;           /* and its text; NULL: none could be read */
};

G_DEFINE_FINAL_TYPE (TesseraOwnLockFile, tessera_own_lock_file, G_TYPE_OBJECT)

static void
tessera_own_lock_file_finalize (GObject *object)
{
  TesseraOwnLockFile *self = TESSERA_OWN_LOCK_FILE (object);

  g_free (self->path);
  g_free (self->name);
  g_free (self->text);
  G_OBJECT_CLASS (tessera_own_lock_file_parent_class)->finalize (object);
}

static void
tessera_own_lock_file_class_init (TesseraOwnLockFileClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_own_lock_file_finalize;
}

static void
tessera_own_lock_file_init (TesseraOwnLockFile *self)
{
}

/* Its folder (a pool's jobs/), opened as the library opens jobs/ to
 * read a lock file by its path (see docs/design.md, "Folder I/O
 * rules"): never through a link, even one only we could have put there
 * (a resource refuses a jobs/ that is a link), from its parent opened as
 * the pool's folders are. -1 with errno. Opened at each look, so a
 * folder renamed or put in its place is the one at its path, as a peer
 * sees it. */
static int
open_folder (TesseraOwnLockFile *self)
{
  g_autofree char *folder = g_path_get_dirname (self->path);

  return _tessera_open_pool_subfolder (folder);
}

/**
 * tessera_own_lock_file_new:
 * @path: the lock file this process wrote, absolute
 *
 * Reads the lock file @path as it is now, to tell later whether someone
 * else removed or rewrote it. Call it once the file is as this process
 * means it to stay, and before anything may hang on the pool's file
 * system (it reads the file once).
 *
 * Returns: (transfer full): the lock file as it is now (when it cannot be
 *   read, [method@Tessera.OwnLockFile.check] only tells it gone)
 */
TesseraOwnLockFile *
tessera_own_lock_file_new (const char *path)
{
  TesseraOwnLockFile *self;
  int dir_fd;

  g_return_val_if_fail (path != NULL, NULL);
  self = g_object_new (TESSERA_TYPE_OWN_LOCK_FILE, NULL);
  self->path = g_strdup (path);
  self->name = g_path_get_basename (path);
  dir_fd = open_folder (self);
  if (dir_fd >= 0)
    {
      self->text = _tessera_read_bounded_at (dir_fd, self->name, OWN_LOCK_FILE_MAX, NULL, &self->st);
      close (dir_fd);
    }
  return self;
}

/**
 * tessera_own_lock_file_get_path:
 * @self: a lock file
 *
 * Where the lock file is, to name it in a message.
 *
 * Returns: (transfer none): its path, as given to
 *   [ctor@Tessera.OwnLockFile.new]
 */
const char *
tessera_own_lock_file_get_path (TesseraOwnLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_OWN_LOCK_FILE (self), NULL);
  return self->path;
}

static gboolean
same_times (const struct stat *a, const struct stat *b)
{
  return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
         a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
         a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* tessera_own_lock_file_check() in its folder @dir_fd. */
static TesseraOwnLockFileState
check_in (TesseraOwnLockFile *self, int dir_fd)
{
  g_autofree char *text = NULL;
  struct stat now, st;

  if (fstatat (dir_fd, self->name, &now, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? TESSERA_OWN_LOCK_FILE_GONE : TESSERA_OWN_LOCK_FILE_UNCHANGED;
  if (self->text == NULL)
    return TESSERA_OWN_LOCK_FILE_UNCHANGED;
  if (now.st_dev != self->st.st_dev || now.st_ino != self->st.st_ino)
    return TESSERA_OWN_LOCK_FILE_REWRITTEN;
  if (same_times (&now, &self->st))
    return TESSERA_OWN_LOCK_FILE_UNCHANGED;
  text = _tessera_read_bounded_at (dir_fd, self->name, OWN_LOCK_FILE_MAX, NULL, &st);
  /* Grown past any lock file of ours: not ours any more. */
  if (text == NULL)
    return errno == EFBIG ? TESSERA_OWN_LOCK_FILE_REWRITTEN : TESSERA_OWN_LOCK_FILE_UNCHANGED;
  return st.st_ino != self->st.st_ino || !g_str_equal (text, self->text)
         ? TESSERA_OWN_LOCK_FILE_REWRITTEN : TESSERA_OWN_LOCK_FILE_UNCHANGED;
}

/**
 * tessera_own_lock_file_check:
 * @self: a lock file
 *
 * Whether the lock file is still there as it was made: gone, or
 * rewritten (another file in its place, as a rename leaves it, or other
 * content), or unchanged. Its text is read again only when its size or
 * times changed. A file that could not be read when made is never told
 * rewritten; one that cannot be looked at now (other than missing) is
 * told unchanged: it is asked again later.
 *
 * Returns: what became of it
 */
TesseraOwnLockFileState
tessera_own_lock_file_check (TesseraOwnLockFile *self)
{
  TesseraOwnLockFileState state;
  int dir_fd;

  g_return_val_if_fail (TESSERA_IS_OWN_LOCK_FILE (self), TESSERA_OWN_LOCK_FILE_UNCHANGED);
  dir_fd = open_folder (self);
  /* Its folder gone: so is it. Refused or not answering: asked again. */
  if (dir_fd < 0)
    return errno == ENOENT ? TESSERA_OWN_LOCK_FILE_GONE : TESSERA_OWN_LOCK_FILE_UNCHANGED;
  state = check_in (self, dir_fd);
  close (dir_fd);
  return state;
}
