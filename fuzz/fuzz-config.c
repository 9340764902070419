/* fuzz-config.c: the `tessera` command's keyfile configuration, with the
 * plugins' settings checked against their types.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"
#include "tessera-config.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_load_plugins ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_strndup (data, size);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GError) error = NULL;

  config = tessera_config_load_from_data ("fuzz.conf", text, size, &error);
  g_assert ((config == NULL) != (error == NULL));
  if (config != NULL)
    {
      g_autoptr(GPtrArray) names = tessera_config_get_names (config);

      for (guint i = 0; i < names->len; i++)
        {
          const char *name = g_ptr_array_index (names, i);
          g_autofree char *path = tessera_config_dup_path (config, name);

          g_assert (tessera_config_has (config, name));
          g_assert (tessera_config_get_type_name (config, name) != NULL);
          g_assert (path != NULL && g_path_is_absolute (path));
        }
    }
  return 0;
}
