/* fuzz-informations.c: informations.json of each plugin's resource type,
 * read the way a running process reads it after a change on disk. The
 * first byte picks the resource.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"

#include <glib/gstdio.h>

#include <errno.h>
#include <stdlib.h>

static const char *type_names[] = { "countertoken", "gpu", "mutex" };
static TesseraTrackedDynamicResource *resources[G_N_ELEMENTS (type_names)];
static char *root;

static void
cleanup (void)
{
  const char *argv[] = { "rm", "-rf", "--", root, NULL };

  for (guint i = 0; i < G_N_ELEMENTS (resources); i++)
    g_clear_object (&resources[i]);
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free (root);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  g_autoptr(GError) error = NULL;

  fuzz_quiet ();
  /* No watching thread: the fuzzer looks at the folder itself. */
  g_setenv ("TESSERA_NO_INOTIFY", "1", TRUE);
  root = g_dir_make_tmp ("tessera-fuzz-XXXXXX", &error);
  if (root == NULL)
    g_error ("%s", error->message);
  for (guint i = 0; i < G_N_ELEMENTS (type_names); i++)
    {
      g_autofree char *folder = g_build_filename (root, type_names[i], NULL);
      const char *keys[] = { "lock-folder", NULL };
      const char *values[] = { folder, NULL };
      TesseraDynamicResource *resource =
        tessera_registry_create_resource (tessera_registry_get_default (), type_names[i], type_names[i],
                                          keys, values, &error);
      if (resource == NULL)
        g_error ("%s", error->message);
      resources[i] = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
    }
  atexit (cleanup);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  TesseraTrackedDynamicResource *resource;
  g_autofree char *path = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  gint64 capacity = -1, free_units = -1;

  if (size < 1)
    return 0;
  resource = resources[data[0] % G_N_ELEMENTS (resources)];
  path = g_build_filename (tessera_tracked_dynamic_resource_get_lock_folder (resource), "informations.json", NULL);
  tmp = g_strconcat (path, ".new", NULL);
  /* A new file each time, as a peer's rename leaves it: a new inode is a
   * change even within one clock tick. */
  if (!g_file_set_contents (tmp, (const char *) data + 1, (gssize) size - 1, &error) || g_rename (tmp, path) < 0)
    g_error ("cannot write %s: %s", path, error ? error->message : g_strerror (errno));

  if (!tessera_tracked_dynamic_resource_update (resource, &error))
    g_error ("update: %s", error->message);
  tessera_tracked_dynamic_resource_get_usage (resource, &capacity, &free_units);
  g_assert (capacity >= 0 && free_units >= 0 && free_units <= capacity);
  node = tessera_tracked_dynamic_resource_read_informations (resource, &error);
  g_assert ((node == NULL) != (error == NULL));
  return 0;
}
