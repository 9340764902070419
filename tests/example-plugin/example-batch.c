/* example-batch.c: a process type — copy it to judge the holders of your
 * own batch system.
 *
 * A lock file's "process" says who holds it. Tessera judges
 * {"type": "local", "pid": 1234} itself; a launcher that submits jobs to a
 * batch system writes its own type, as experimaestro writes
 * {"type": "slurm", "pid": "JOBID"}. This sample judges
 * {"type": "batch", "pid": "JOBID"} for a toy batch system that keeps a
 * file <JOBID>.running in a folder while the job runs.
 *
 * One instance per type name serves the whole process: Tessera makes it
 * with g_object_new() the first time it meets a spec of the type and keeps
 * it until the process ends, for every pool and every thread. It gets no
 * settings from the configuration file: read yours from the environment
 * (here EXAMPLE_BATCH_DIR) or a file of your own, once, in init.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gmodule.h>
#include <string.h>
#include <tessera/tessera.h>

#define EXAMPLE_TYPE_BATCH (example_batch_get_type ())
G_DECLARE_FINAL_TYPE (ExampleBatch, example_batch, EXAMPLE, BATCH, TesseraProcessType)

struct _ExampleBatch
{
  TesseraProcessType parent_instance;
  char *folder;   /* EXAMPLE_BATCH_DIR, read once; NULL when unset */
};

G_DEFINE_DYNAMIC_TYPE (ExampleBatch, example_batch, TESSERA_TYPE_PROCESS_TYPE)

/* A job id as the batch system writes them: digits only. The spec comes
 * from a file any user of the pool may have written: never pass it on
 * (to a path, a shell) unchecked. */
static gboolean
valid_job_id (const char *id)
{
  if (id == NULL || *id == '\0' || strlen (id) > 20)
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/* Called under the pool's ipc.lock, from any thread: answer quickly, keep
 * any state of your own under a lock, bound every call to the outside
 * with a timeout. Only a sure answer frees capacity: when in doubt, say
 * TESSERA_PROCESS_UNKNOWN and the holder counts. */
static TesseraProcessState
example_batch_check (TesseraProcessType *type, TesseraProcess *process)
{
  ExampleBatch *self = EXAMPLE_BATCH (type);
  JsonNode *spec = tessera_process_get_spec (process);   /* the lock file's "process" */
  JsonObject *object = spec != NULL && JSON_NODE_HOLDS_OBJECT (spec) ? json_node_get_object (spec) : NULL;
  JsonNode *pid = object != NULL ? json_object_get_member (object, "pid") : NULL;
  const char *id = pid != NULL && JSON_NODE_HOLDS_VALUE (pid) && json_node_get_value_type (pid) == G_TYPE_STRING
                   ? json_node_get_string (pid) : NULL;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;

  if (self->folder == NULL || !valid_job_id (id))
    return TESSERA_PROCESS_UNKNOWN;
  name = g_strconcat (id, ".running", NULL);
  path = g_build_filename (self->folder, name, NULL);
  return g_file_test (path, G_FILE_TEST_EXISTS) ? TESSERA_PROCESS_ALIVE : TESSERA_PROCESS_DEAD;
}

static void
example_batch_finalize (GObject *object)
{
  g_free (EXAMPLE_BATCH (object)->folder);
  G_OBJECT_CLASS (example_batch_parent_class)->finalize (object);
}

static void
example_batch_class_init (ExampleBatchClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = example_batch_finalize;
  TESSERA_PROCESS_TYPE_CLASS (klass)->check = example_batch_check;
}

static void
example_batch_class_finalize (ExampleBatchClass *klass)
{
}

/* The settings, once: the instance is shared and lives as long as the
 * process. */
static void
example_batch_init (ExampleBatch *self)
{
  const char *folder = g_getenv ("EXAMPLE_BATCH_DIR");

  self->folder = folder != NULL && g_path_is_absolute (folder) ? g_strdup (folder) : NULL;
}

/* The entry point: tessera_<Module>_register_types. The manifest names
 * the type (ProcessTypes=batch); register the class under that name. */
G_MODULE_EXPORT void tessera_batch_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_batch_register_types (GTypeModule *module)
{
  example_batch_register_type (module);
  tessera_registry_register_process_type ("batch", EXAMPLE_TYPE_BATCH);
}
