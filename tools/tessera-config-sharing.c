/* tessera-config-sharing.c: a resource's `mode=` and `group=`, what its
 * folders and files are given instead of what they take from the folder
 * they are in: read from its group, and given to what Tessera owns of
 * the pool when the resource is opened to change it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <glib/gi18n-lib.h>
#include <unistd.h>

#include "tessera-config-entry.h"

/* mode= (octal, for the folders; files get its read and write bits) and
 * group= (a group name) of a resource: what its folders and files are
 * given instead of what they take from the folder they are in. NULL when
 * @key of @group is right, else what it should be (the parser says where:
 * this file calls nothing of the configuration's). */
const char *
check_sharing_key (GKeyFile *keyfile, const char *group, const char *key, int *mode, gint64 *gid)
{
  g_autofree char *value = g_key_file_get_string (keyfile, group, key, NULL);
  guint64 number;

  if (g_str_equal (key, "mode"))
    {
      if (value == NULL || !g_ascii_string_to_unsigned (value, 8, 0, 07777, &number, NULL))
        return _("an octal mode from 0 to 7777, such as 2770");
      *mode = (int) number;
    }
  else
    {
      struct group *gr = value != NULL ? getgrnam (value) : NULL;

      if (gr == NULL)
        return _("no such group");
      *gid = gr->gr_gid;
    }
  return NULL;
}

/* Gives what Tessera owns of a resource (its folder, jobs/, ipc.lock,
 * informations.json) the mode and group its settings say, by core's rule
 * (tessera_pool_part_give_settings(): never a file with other links);
 * never through a link below the folder, which is reached as the library
 * reaches it (tessera_folder_path_open()). */
void
apply_sharing (Entry *entry, const char *folder)
{
  int folder_fd = tessera_folder_path_open (folder, NULL);

  /* The folder itself (-1), then its parts made with every resource. */
  for (int i = -1; folder_fd >= 0 && i < TESSERA_POOL_PART_LAST; i++)
    {
      const char *part = i < 0 ? "" : tessera_pool_part_get_name (i);
      int fd, saved;

      if (i >= 0 && !(tessera_pool_part_get_flags (i) & TESSERA_POOL_PART_FLAGS_OF_RESOURCE))
        continue;
      fd = i < 0 ? dup (folder_fd) : openat (folder_fd, part, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        continue;
      if ((saved = tessera_pool_part_give_settings (fd, entry->mode, entry->gid)) != 0)
        {
          g_autofree char *path = g_build_filename (folder, part, NULL);

          g_printerr (_("tessera: cannot give %s the group of its settings: %s\n"), path, g_strerror (saved));
        }
      close (fd);
    }
  if (folder_fd >= 0)
    close (folder_fd);
}
