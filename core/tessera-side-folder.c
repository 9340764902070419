/* tessera-side-folder.c: a folder pool's side entries, the files of its
 * side folders
 *
 * A resource type's side entry KIND/NAME (the mutex's intents) is kept
 * in a folder pool as the file KIND/NAME.json of its lock folder, in the
 * side folder tessera_pool_part_open_side_folder() opens and makes: the
 * files Tessera has always written there, so that older and newer
 * processes read each other's. Everything is reached through the
 * folder's descriptor, never through a link; files are read bounded,
 * written whole through a temporary file and a rename, and only regular
 * files are removed (docs/design.md, "Folder I/O rules").
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-private.h"
#include "tessera-side-folder-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <tessera/tessera.h>
#include <unistd.h>

/* An entry's text is small JSON: a file larger than this says nothing. */
#define ENTRY_MAX 4095
/* A writer killed between its temporary file and its rename leaves the
 * former (NAME.json.XXXXXX); a write takes microseconds, and this is how
 * long Tessera has always left one there. */
#define TEMPORARY_MAX_AGE (5 * 60)

/* An entry's name as a file's: one name, valid UTF-8 (a holder's, without
 * ".json"). */
static gboolean
is_entry_name (const char *name, gsize length)
{
  return length > 0 && length <= 256 && g_utf8_validate (name, (gssize) length, NULL);
}

GHashTable *
_tessera_side_folder_list (const char *lock_folder,
                           const char *kind,
                           gboolean    read_only)
{
  /* A writer's temporary file left here goes, unless we only look. */
  gboolean sweep = !read_only;
  GHashTable *entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  int dir_fd = tessera_pool_part_open_side_folder (lock_folder, kind, FALSE);
  /* A descriptor of its own for readdir, which moves its offset. */
  int list_fd = dir_fd >= 0 ? dup (dir_fd) : -1;
  DIR *dir = list_fd >= 0 ? fdopendir (list_fd) : NULL;
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  struct dirent *d;

  if (dir == NULL && list_fd >= 0)
    close (list_fd);
  while (dir != NULL && (d = readdir (dir)) != NULL)
    {
      const char *name = d->d_name;
      gsize entry_length;
      char *text;
      gsize text_length = 0;
      struct stat st;

      /* Only regular files are entries (never a link, a FIFO…). */
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
        continue;
      if (!g_str_has_suffix (name, TESSERA_LOCK_FILE_SUFFIX))
        {
          if (sweep && strstr (name, TESSERA_LOCK_FILE_SUFFIX ".") != NULL && st.st_mtime < now - TEMPORARY_MAX_AGE)
            unlinkat (dir_fd, name, 0);
          continue;
        }
      entry_length = strlen (name) - strlen (TESSERA_LOCK_FILE_SUFFIX);
      if (!is_entry_name (name, entry_length))
        continue;
      text = _tessera_read_bounded_at (dir_fd, name, ENTRY_MAX, &text_length, NULL);
      if (text == NULL && errno == ENOENT)
        continue;
      if (text == NULL || memchr (text, '\0', text_length) != NULL)
        {
          g_free (text);
          text = g_strdup ("");
        }
      g_hash_table_replace (entries, g_strndup (name, entry_length), text);
    }
  if (dir != NULL)
    closedir (dir);
  if (dir_fd >= 0)
    close (dir_fd);
  return entries;
}

gboolean
_tessera_side_folder_put (const char  *lock_folder,
                          const char  *kind,
                          const char  *name,
                          const char  *text,
                          GError     **error)
{
  g_autofree char *file = g_strconcat (name, TESSERA_LOCK_FILE_SUFFIX, NULL);
  g_autofree char *path = g_build_filename (lock_folder != NULL ? lock_folder : "", kind, file, NULL);
  g_autofree char *tmp = NULL;
  int dir_fd = tessera_pool_part_open_side_folder (lock_folder, kind, TRUE);
  gsize left = strlen (text);
  const char *data = text;
  int fd, saved = 0;

  if (dir_fd < 0)
    {
      g_autofree char *folder = g_path_get_dirname (path);

      saved = errno;
      _tessera_set_io_error (error, saved, _("Cannot create the folder %s: %s"), folder);
      return FALSE;
    }
  /* NAME.json.XXXXXX, 0644 less the umask, never through a link. No
   * fsync: an entry lives no longer than its process. */
  fd = _tessera_create_temporary_at (dir_fd, file, &tmp);
  if (fd < 0)
    saved = errno;
  while (fd >= 0 && saved == 0 && left > 0)
    {
      gssize n = write (fd, data, left);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        saved = n < 0 ? errno : EIO;
      else
        {
          data += n;
          left -= (gsize) n;
        }
    }
  if (fd >= 0 && close (fd) < 0 && saved == 0)
    saved = errno;
  if (fd >= 0 && saved == 0 && renameat (dir_fd, tmp, dir_fd, file) < 0)
    saved = errno;
  if (fd >= 0 && saved != 0)
    unlinkat (dir_fd, tmp, 0);
  close (dir_fd);
  if (saved == 0)
    return TRUE;
  _tessera_set_io_error (error, saved, _("Cannot write %s: %s"), path);
  return FALSE;
}

gboolean
_tessera_side_folder_delete (const char  *lock_folder,
                             const char  *kind,
                             const char  *name,
                             GError     **error)
{
  g_autofree char *file = g_strconcat (name, TESSERA_LOCK_FILE_SUFFIX, NULL);
  int dir_fd = tessera_pool_part_open_side_folder (lock_folder, kind, FALSE);
  struct stat st;
  int saved = 0;

  if (dir_fd < 0)
    return TRUE;
  /* Only what is an entry: a regular file. */
  if (fstatat (dir_fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode) &&
      unlinkat (dir_fd, file, 0) < 0 && errno != ENOENT)
    saved = errno;
  close (dir_fd);
  if (saved != 0)
    {
      g_autofree char *path = g_build_filename (lock_folder, kind, file, NULL);

      _tessera_set_io_error (error, saved, _("Cannot remove %s: %s"), path);
      return FALSE;
    }
  return TRUE;
}
