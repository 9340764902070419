/* fuzz-common.c: helpers of the fuzz targets.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"

#include <string.h>

GType
fuzz_lock_file_type (const char *resource_type)
{
  g_autoptr(GError) error = NULL;
  GType type = tessera_registry_lookup_resource_type (tessera_registry_get_default (), resource_type, &error);
  TesseraTrackedDynamicResourceClass *klass;
  GType lock_file_type;

  if (type == G_TYPE_INVALID)
    g_error ("fuzz: %s (is TESSERA_PLUGIN_PATH set?)", error->message);
  klass = g_type_class_ref (type);
  lock_file_type = klass->lock_file_type;
  g_type_class_unref (klass);
  return lock_file_type;
}

char *
fuzz_strndup (const uint8_t *data, size_t size)
{
  char *copy = g_malloc (size + 1);

  memcpy (copy, data, size);
  copy[size] = '\0';
  return copy;
}

static void
drop_log (const char *domain, GLogLevelFlags level, const char *message, gpointer user_data)
{
  /* Criticals are bugs, not bad input: they stay fatal. */
  if (level & (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_ERROR))
    {
      g_printerr ("fuzz: %s\n", message);
      __builtin_trap ();
    }
}

void
fuzz_quiet (void)
{
  g_log_set_default_handler (drop_log, NULL);
}

void
fuzz_load_plugins (void)
{
  fuzz_quiet ();
  (void) fuzz_lock_file_type ("countertoken");
  (void) fuzz_lock_file_type ("gpu");
  (void) fuzz_lock_file_type ("mutex");
}
