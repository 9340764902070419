/* fuzz-lock-file.c: a lock file as a peer may have left it, read by each
 * plugin's lock file type. The first byte picks the type.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"

static GType types[3];

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_quiet ();
  types[0] = fuzz_lock_file_type ("countertoken");
  types[1] = fuzz_lock_file_type ("gpu");
  types[2] = fuzz_lock_file_type ("mutex");
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
  g_autoptr(GError) error = NULL;

  if (size < 1)
    return 0;
  lock_file = tessera_dynamic_lock_file_new_from_data (types[data[0] % G_N_ELEMENTS (types)],
                                                       "/nonexistent/jobs/fuzz@0.json",
                                                       (const char *) data + 1, (gssize) size - 1, &error);
  g_assert ((lock_file == NULL) != (error == NULL));
  if (lock_file != NULL)
    {
      /* What a reader does next: account it, look at its holder, and
       * write it back (the round trip must read again). */
      g_autoptr(JsonNode) json = tessera_dynamic_lock_file_to_json (lock_file);
      g_autofree char *text = json_to_string (json, FALSE);
      g_autoptr(TesseraDynamicLockFile) again = NULL;
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);

      (void) tessera_dynamic_lock_file_is_valid (lock_file);
      (void) tessera_dynamic_lock_file_get_job_uri (lock_file);
      if (process != NULL)
        (void) tessera_process_is_local (process);
      again = tessera_dynamic_lock_file_new_from_data (G_OBJECT_TYPE (lock_file), "/nonexistent/jobs/fuzz@0.json",
                                                       text, -1, &error);
      if (again == NULL)
        g_error ("a lock file written back does not read again: %s\n%s", error->message, text);
    }
  return 0;
}
