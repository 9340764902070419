/* fuzz-locks-json.c: job_uri/locks.json, which the job process reads to
 * learn its locks (module and class names come from the file: they must
 * only ever be looked up, never loaded as paths).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-common.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_load_plugins ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(TesseraJobDependencyLocks) locks = NULL;
  g_autoptr(GError) error = NULL;

  /* As the library reads locks.json: bounded depth. */
  root = tessera_json_parse ((const char *) data, (gssize) size, NULL);
  if (root == NULL)
    return 0;
  locks = tessera_job_dependency_locks_new_from_json (root, &error);
  g_assert ((locks == NULL) != (error == NULL));
  if (locks != NULL)
    {
      GPtrArray *list = tessera_job_dependency_locks_get_locks (locks);
      const char * const *skipped = tessera_job_dependency_locks_get_skipped (locks);

      for (guint i = 0; i < list->len; i++)
        {
          TesseraJobDependencyLock *lock = g_ptr_array_index (list, i);
          g_auto(GStrv) env = tessera_job_dependency_lock_dup_environment (lock);
          (void) tessera_job_dependency_lock_get_lock_file_path (lock);
        }
      for (guint i = 0; skipped != NULL && skipped[i] != NULL; i++)
        ;
    }
  return 0;
}
