/* tessera-acquire.c: the short path `tessera run` takes, for applications
 * that embed the library: a job for this process in a private folder that
 * Tessera cleans, and a one-call acquire.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <glib/gstdio.h>
#include <unistd.h>

/* What a private job leaves once its own finalize has let the job lock go
 * and removed <job_uri>.pid: the lock file and two folders. */
typedef struct
{
  char *lock_path;
  char *job_dir;        /* <state>/tessera/jobs/<identifier> */
  char *locks_json;     /* <job_dir>/locks.json, should the caller write one */
} PrivateJobFiles;

static void
private_job_files_free (gpointer data)
{
  PrivateJobFiles *files = data;

  g_unlink (files->lock_path);
  g_unlink (files->locks_json);
  g_rmdir (files->job_dir);
  g_free (files->lock_path);
  g_free (files->job_dir);
  g_free (files->locks_json);
  g_free (files);
}

/* A name from a program name: what _tessera_check_name() accepts, never empty. */
static char *
sanitize_name (const char *name)
{
  GString *out = g_string_new (NULL);

  for (const char *p = name ? name : ""; *p != '\0' && out->len < 64; p++)
    g_string_append_c (out, (g_ascii_isalnum (*p) || *p == '-' || *p == '_') ? *p : '-');
  if (out->len == 0)
    g_string_append (out, "job");
  return g_string_free (out, FALSE);
}

/**
 * tessera_job_new_private:
 * @name: (nullable): the job's name in lock files (its task id), or %NULL
 *   for the program's name
 * @error: return location for a #GError
 *
 * A job for the calling process, as `tessera run` makes one: its folder is
 * `$XDG_STATE_HOME/tessera/jobs/<host>-<pid>-<random>/`, private to the
 * process, and its process is this one
 * ([ctor@Tessera.Process.new_self]). The job lock and `.pid` file that
 * experimaestro's peers look for live there, and Tessera removes them and
 * the folder when the last reference to the job goes. Any thread.
 *
 * Returns: (transfer full): the job, or %NULL with @error set when @name is
 *   not acceptable as a job name (see [ctor@Tessera.Job.new]) or the folder cannot be
 *   made
 */
TesseraJob *
tessera_job_new_private (const char  *name,
                         GError     **error)
{
  g_autofree char *task_id = name != NULL ? g_strdup (name) : sanitize_name (g_get_prgname ());
  g_autofree char *identifier = NULL;
  g_autofree char *job_dir = NULL;
  g_autofree char *job_uri = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  PrivateJobFiles *files;

  identifier = g_strdup_printf ("%s-%d-%08x", g_get_host_name (), (int) getpid (), g_random_int ());
  for (char *p = identifier; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      *p = '-';
  job_dir = g_build_filename (g_get_user_state_dir (), "tessera", "jobs", identifier, NULL);
  job_uri = g_build_filename (job_dir, task_id, NULL);
  job = tessera_job_new (task_id, identifier, job_uri, error);
  if (job == NULL || !tessera_job_set_process (job, self, error))
    return NULL;
  files = g_new0 (PrivateJobFiles, 1);
  files->lock_path = tessera_job_dup_lock_path (job);
  files->locks_json = g_build_filename (job_dir, "locks.json", NULL);
  files->job_dir = g_steal_pointer (&job_dir);
  /* Run by GObject after TesseraJob's own finalize has unheld the job. */
  g_object_set_data_full (G_OBJECT (job), "tessera-private-job-files", files, private_job_files_free);
  return g_steal_pointer (&job);
}

/**
 * tessera_dynamic_resource_take:
 * @self: a resource
 * @request: (nullable): what to take, as `--need NAME=REQUEST` says it: a
 *   count for a counter, "2:8192" for GPUs, "shared" for a mutex; %NULL
 *   for one unit
 * @timeout: seconds to wait while the resource is busy: 0 fails at once,
 *   a negative value waits for ever
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Takes @request of @self for this process, in one call: the short path
 * `tessera run` takes. It makes a private job for the process
 * ([ctor@Tessera.Job.new_private]), the dependency
 * ([method@Tessera.DynamicResource.create_dependency]) and waits for the
 * lock ([method@Tessera.DynamicDependency.lock]). Release it with
 * [method@Tessera.Lock.release] or by dropping the last reference; the
 * job's files go with it.
 *
 * Blocks the calling thread (no main loop needed); any thread.
 *
 * A request larger than the resource's whole capacity waits, as the
 * capacity may grow; its timeout's message then says so.
 *
 * Returns: (transfer full): the acquired lock, or %NULL with @error set
 *   (%TESSERA_ERROR_TIMEOUT, %TESSERA_ERROR_INVALID_CONFIGURATION for a
 *   malformed @request, %TESSERA_ERROR_REQUEST_TOO_LARGE from a plugin's
 *   type, …)
 */
TesseraDynamicDependencyLock *
tessera_dynamic_resource_take (TesseraDynamicResource  *self,
                                  const char              *request,
                                  double                   timeout,
                                  GCancellable            *cancellable,
                                  GError                 **error)
{
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_RESOURCE (self), NULL);

  job = tessera_job_new_private (NULL, error);
  if (job == NULL)
    return NULL;
  dependency = tessera_dynamic_resource_create_dependency (self, job, request, error);
  if (dependency == NULL)
    return NULL;
  return tessera_dynamic_dependency_lock (dependency, timeout, cancellable, error);
}
