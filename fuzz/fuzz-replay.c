/* fuzz-replay.c: main() for a fuzz target outside libFuzzer: runs it once
 * on each file named (or each file of each folder named).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"

#include <stdio.h>

static int
replay (const char *path)
{
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;

  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, &error);
      const char *name;
      int n = 0;

      if (dir == NULL)
        g_error ("%s", error->message);
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          n += replay (child);
        }
      return n;
    }
  if (!g_file_get_contents (path, &data, &length, &error))
    g_error ("%s", error->message);
  LLVMFuzzerTestOneInput ((const uint8_t *) data, length);
  return 1;
}

int
main (int argc, char **argv)
{
  int n = 0;

  LLVMFuzzerInitialize (&argc, &argv);
  for (int i = 1; i < argc; i++)
    n += replay (argv[i]);
  if (n == 0)
    {
      g_printerr ("fuzz-replay: no input\n");
      return 1;
    }
  printf ("%d inputs, no crash\n", n);
  return 0;
}
