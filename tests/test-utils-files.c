/* test-utils-files.c: folders, files and their contents (made, written,
 * aged, counted, read)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

char *
test_make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("tessera-test-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

void
test_remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  const char *name;

  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            test_remove_tree (child);
          else
            g_unlink (child);
        }
      g_dir_close (dir);
    }
  g_rmdir (path);
}

/* Removes the folder @tmp (test_make_tmpdir()) with all it holds and
 * frees its name: a fixture's g_clear_pointer (&f->tmp, test_tmpdir_free). */
void
test_tmpdir_free (char *tmp)
{
  test_remove_tree (tmp);
  g_free (tmp);
}

void
test_write_file (const char *path, const char *contents)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (path);

  g_mkdir_with_parents (dir, 0777);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

void
test_set_file_age (const char *path, double seconds_ago)
{
  struct timeval tv[2];
  gint64 when = g_get_real_time () - (gint64) (seconds_ago * G_USEC_PER_SEC);

  tv[0].tv_sec = tv[1].tv_sec = when / G_USEC_PER_SEC;
  tv[0].tv_usec = tv[1].tv_usec = when % G_USEC_PER_SEC;
  g_assert_cmpint (utimes (path, tv), ==, 0);
}

/* Writes @text over @path in place, as Python's json.dump does and as
 * a co-user can in a file of hers: the same file (no link followed),
 * truncated, then written and closed. */
void
test_write_in_place (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
  g_assert_cmpint (close (fd), ==, 0);
}

/* Rewrites @path in place (the same inode) with @text, then puts its
 * times back: only its text and ctime change. */
void
test_rewrite_keeping_stat (const char *path, const char *text)
{
  struct stat before, after;
  struct timespec times[2];

  g_assert_cmpint (stat (path, &before), ==, 0);
  test_write_in_place (path, text);
  /* Both times: bindfs drops a change of the mtime alone. */
  times[0] = before.st_atim;
  times[1] = before.st_mtim;
  g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
  g_assert_cmpint (stat (path, &after), ==, 0);
  g_assert_cmpint (after.st_ino, ==, before.st_ino);
  g_assert_cmpint (after.st_size, ==, before.st_size);
  g_assert_cmpint (after.st_mtim.tv_sec, ==, before.st_mtim.tv_sec);
  g_assert_cmpint (after.st_mtim.tv_nsec, ==, before.st_mtim.tv_nsec);
}

/* Entries of a folder (0 when it cannot be read): open descriptors in
 * /proc/self/fd, threads in /proc/self/task, files left somewhere. */
guint
test_count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* The paths of the NAME.json files in @folder (a pool's lock files in
 * its jobs/, a queue's entries), in the folder's order; none when it
 * cannot be read. */
GPtrArray *
test_list_json_files (const char *folder)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      g_ptr_array_add (paths, g_build_filename (folder, name, NULL));
  return paths;
}

/* The path of the one NAME.json file in @folder (a pool's jobs/ with one
 * holder): the test fails when there is none or more than one. */
char *
test_only_json_file (const char *folder)
{
  g_autoptr(GPtrArray) paths = test_list_json_files (folder);

  if (paths->len != 1)
    g_error ("%s holds %u .json files, not one", folder, paths->len);
  return g_strdup (g_ptr_array_index (paths, 0));
}

/* @text with every @token replaced by @value. */
char *
test_substitute (const char *text, const char *token, const char *value)
{
  g_auto(GStrv) parts = g_strsplit (text, token, -1);

  return g_strjoinv (value, parts);
}

/* The JSON document in the file @path, which must read. */
JsonNode *
test_parse_json_file (const char *path)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}
