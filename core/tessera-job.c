/* tessera-job.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-job-lock-private.h"
#include "tessera-job-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-temporary-name-private.h"
#include "tessera-verdict-private.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/**
 * TesseraJob:
 *
 * Who holds a lock: the seed's job, with its task id, its identifier and
 * its job URI, the path `<job dir>/<name>` that experimaestro derives
 * `<job_uri>.lock` and `<job_uri>.pid` from.
 *
 * While a job holds resources, its process keeps an fcntl lock on
 * `<job_uri>.lock` ([method@Tessera.Job.hold]) and, once it knows its
 * process, writes `<job_uri>.pid`: seed-era experimaestro watchers wait on
 * the first and read the second to learn when the holder is gone.
 */
struct _TesseraJob
{
  GObject parent_instance;

  char *task_id;
  char *identifier;
  char *job_uri;
  TesseraProcess *process;
  GMutex mutex;     /* lock_fd and wrote_pid: acquires of one job may run in parallel */
  int lock_fd;
  gboolean wrote_pid;
  int folder_fd;    /* the job's folder, checked by the caller; -1: reached by path */
  /* The folder that holds the job lock, as it was when the lock was
   * taken (lock files record it): folder_known FALSE when unknown. */
  gboolean folder_known;
  guint64 folder_dev;
  guint64 folder_ino;
};

enum {
  PROP_0,
  PROP_TASK_ID,
  PROP_IDENTIFIER,
  PROP_JOB_URI,
  PROP_PROCESS,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_FINAL_TYPE (TesseraJob, tessera_job, G_TYPE_OBJECT)

static void
tessera_job_finalize (GObject *object)
{
  TesseraJob *self = TESSERA_JOB (object);

  tessera_job_unhold (self);
  if (self->folder_fd >= 0)
    close (self->folder_fd);
  g_mutex_clear (&self->mutex);
  g_free (self->task_id);
  g_free (self->identifier);
  g_free (self->job_uri);
  g_clear_object (&self->process);
  G_OBJECT_CLASS (tessera_job_parent_class)->finalize (object);
}

static void
tessera_job_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraJob *self = TESSERA_JOB (object);

  switch (prop_id)
    {
    case PROP_TASK_ID: g_value_set_string (value, self->task_id); break;
    case PROP_IDENTIFIER: g_value_set_string (value, self->identifier); break;
    case PROP_JOB_URI: g_value_set_string (value, self->job_uri); break;
    case PROP_PROCESS: g_value_set_object (value, self->process); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_job_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraJob *self = TESSERA_JOB (object);

  switch (prop_id)
    {
    case PROP_TASK_ID: self->task_id = g_value_dup_string (value); break;
    case PROP_IDENTIFIER: self->identifier = g_value_dup_string (value); break;
    case PROP_JOB_URI: self->job_uri = g_value_dup_string (value); break;
    case PROP_PROCESS: tessera_job_set_process (self, g_value_get_object (value), NULL); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_job_class_init (TesseraJobClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tessera_job_finalize;
  object_class->get_property = tessera_job_get_property;
  object_class->set_property = tessera_job_set_property;

  /**
   * TesseraJob:task-id:
   *
   * The task identifier, the first half of the lock file name.
   */
  props[PROP_TASK_ID] = g_param_spec_string ("task-id", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraJob:identifier:
   *
   * The job identifier (in experimaestro, a hash), the second half of the
   * lock file name.
   */
  props[PROP_IDENTIFIER] = g_param_spec_string ("identifier", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraJob:job-uri:
   *
   * The absolute path `<job dir>/<name>` written as "job_uri" in lock files.
   */
  props[PROP_JOB_URI] = g_param_spec_string ("job-uri", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraJob:process:
   *
   * The process that runs the job, once known. When set before a resource
   * is acquired, the lock file names it from the start, so a crash of the
   * holder is noticed at once.
   */
  props[PROP_PROCESS] = g_param_spec_object ("process", NULL, NULL, TESSERA_TYPE_PROCESS,
    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_job_init (TesseraJob *self)
{
  g_mutex_init (&self->mutex);
  self->lock_fd = -1;
  self->folder_fd = -1;
}

/* Checks that @name (a task id or job identifier from a caller or a file)
 * can become part of a file name in `jobs/` without escaping it: not
 * empty, valid UTF-8, no `/`, no `..`, no control characters. Else
 * %TESSERA_ERROR_INVALID_NAME. */
static gboolean
check_name (const char  *name,
            GError     **error)
{
  const char *p;

  if (name == NULL || *name == '\0')
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("A job name must not be empty"));
      return FALSE;
    }
  if (!g_utf8_validate (name, -1, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("A job name must be valid UTF-8"));
      return FALSE;
    }
  if (strchr (name, '/') != NULL || strstr (name, "..") != NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("Job name “%s” must not contain “/” or “..”"), name);
      return FALSE;
    }
  for (p = name; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      {
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                     _("Job name “%s” must not contain control characters"), name);
        return FALSE;
      }
  return TRUE;
}

/**
 * tessera_lock_file_name:
 * @task_id: a task id (its names checked by callers)
 * @identifier: a job identifier
 *
 * The seed's `get_job_lock_relpath`: `"{task_id}@{identifier}"` cut to 256
 * characters, then ".json".
 *
 * Returns: (transfer full): the lock file name
 */
char *
tessera_lock_file_name (const char *task_id,
                        const char *identifier)
{
  g_autofree char *full = g_strdup_printf ("%s@%s", task_id, identifier);
  g_autofree char *cut = g_utf8_validate (full, -1, NULL)
                         ? g_utf8_substring (full, 0, MIN (256, g_utf8_strlen (full, -1)))
                         : g_strndup (full, 256);
  return g_strconcat (cut, TESSERA_LOCK_FILE_SUFFIX, NULL);
}

/* Whether @name, and its temporary while it is written (@temporary),
 * fit in a folder. */
static gboolean
name_fits (const char *name, gboolean temporary)
{
  return strlen (name) + (temporary ? _TESSERA_TEMPORARY_SUFFIX_LEN : 0) <= NAME_MAX;
}

/* A job's lock file name is checked when the job is made (and again at
 * each acquire, for a job made with g_object_new()): TASK@ID.json with its
 * temporary must fit in a folder, so the seed's cut at 256 characters
 * never applies (two long names would share a lock file); and a task id
 * with an `@` would make another job's lock file name (`a@b` + `c`,
 * `a` + `b@c`). */
static gboolean
check_lock_file_name (const char  *task_id,
                      const char  *lock_name,
                      GError     **error)
{
  if (strchr (task_id, '@') != NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("Task id “%s” must not contain “@”: it ends the task id in lock file names"), task_id);
      return FALSE;
    }
  if (!name_fits (lock_name, TRUE))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("Task id and identifier “%s” are too long: its lock file name would be %u bytes, "
                     "and at most %u fit"),
                   lock_name, (guint) strlen (lock_name), (guint) (NAME_MAX - _TESSERA_TEMPORARY_SUFFIX_LEN));
      return FALSE;
    }
  return TRUE;
}

/* <job_uri>.pid is written through a temporary, <job_uri>.lock in place. */
static gboolean
check_job_uri_names (const char  *job_uri,
                     GError     **error)
{
  g_autofree char *pid_path = _tessera_path_with_suffix (job_uri, ".pid");
  g_autofree char *pid_name = g_path_get_basename (pid_path);
  g_autofree char *lock_path = _tessera_path_with_suffix (job_uri, ".lock");
  g_autofree char *lock_base = g_path_get_basename (lock_path);

  if (!name_fits (pid_name, TRUE) || !name_fits (lock_base, FALSE))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("The last part of job URI “%s” is too long for a file name"), job_uri);
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_job_new:
 * @task_id: the task id
 * @identifier: the job identifier
 * @job_uri: the absolute path `<job dir>/<name>` of the job
 * @error: return location for a #GError
 *
 * Creates a job after checking its names (not empty, valid UTF-8, no
 * `/`, no `..`, no control characters; no `@` in @task_id, which would
 * make another job's lock file name) and that its files' names fit in a
 * folder: `TASK@ID.json` at most 248 bytes (255 with the temporary of its
 * atomic write), the last part of @job_uri with `.pid` as much, and with
 * `.lock` at most 255 bytes.
 *
 * Returns: (transfer full): a new job, or %NULL with @error set
 */
TesseraJob *
tessera_job_new (const char  *task_id,
                 const char  *identifier,
                 const char  *job_uri,
                 GError     **error)
{
  g_autofree char *lock_name = NULL;

  if (!check_name (task_id, error) || !check_name (identifier, error))
    return NULL;
  if (job_uri == NULL || !g_path_is_absolute (job_uri) || !g_utf8_validate (job_uri, -1, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("A job URI must be an absolute path"));
      return NULL;
    }
  lock_name = tessera_lock_file_name (task_id, identifier);
  if (!check_lock_file_name (task_id, lock_name, error) || !check_job_uri_names (job_uri, error))
    return NULL;
  return g_object_new (TESSERA_TYPE_JOB,
                       "task-id", task_id,
                       "identifier", identifier,
                       "job-uri", job_uri,
                       NULL);
}

/**
 * tessera_job_new_at:
 * @task_id: the task id
 * @identifier: the job identifier
 * @job_uri: the absolute path `<job dir>/<name>` of the job
 * @folder_fd: an open descriptor of `<job dir>`, the folder the caller
 *   made or checked; the job keeps a copy of it
 * @error: return location for a #GError
 *
 * Creates a job as [ctor@Tessera.Job.new] does, whose own files
 * (`<job_uri>.lock`, `<job_uri>.pid`, and what
 * [method@Tessera.Job.write_file] writes) are made, written and removed
 * through @folder_fd, never by path, and never through a link: a folder
 * someone swaps for a link (or renames) after the caller checked it
 * receives none of them. [method@Tessera.Job.folder_is_at_path] tells
 * whether the path still leads there.
 *
 * Returns: (transfer full): a new job, or %NULL with @error set
 */
TesseraJob *
tessera_job_new_at (const char  *task_id,
                    const char  *identifier,
                    const char  *job_uri,
                    int          folder_fd,
                    GError     **error)
{
  TesseraJob *self;
  struct stat st;
  int fd;

  if (folder_fd < 0 || fstat (folder_fd, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, _("The job folder of %s is not an open folder"),
                   job_uri != NULL ? job_uri : "?");
      return NULL;
    }
  if ((fd = fcntl (folder_fd, F_DUPFD_CLOEXEC, 3)) < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), job_uri != NULL ? job_uri : "?");
      return NULL;
    }
  self = tessera_job_new (task_id, identifier, job_uri, error);
  if (self == NULL)
    {
      close (fd);
      return NULL;
    }
  self->folder_fd = fd;
  return self;
}

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

/* A name from a program name: what check_name() accepts, never empty. */
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

/* <host>-<pid>-<random>, as experimaestro names a job: unique on the
 * host, and told apart from another host's in a shared pool; a host
 * name's dots and the like become '-', so that it is one folder name. */
char *
_tessera_job_dup_new_identifier (void)
{
  char *identifier = g_strdup_printf ("%s-%d-%08x", g_get_host_name (), (int) getpid (), g_random_int ());

  for (char *p = identifier; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      *p = '-';
  return identifier;
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

  identifier = _tessera_job_dup_new_identifier ();
  job_dir = g_build_filename (g_get_user_state_dir (), TESSERA_STATE_FOLDER, TESSERA_JOB_STATE_FOLDER, identifier, NULL);
  job_uri = g_build_filename (job_dir, task_id, NULL);
  job = tessera_job_new (task_id, identifier, job_uri, error);
  if (job == NULL || !tessera_job_set_process (job, self, error))
    return NULL;
  files = g_new0 (PrivateJobFiles, 1);
  files->lock_path = tessera_job_dup_lock_path (job);
  files->locks_json = g_build_filename (job_dir, TESSERA_JOB_LOCKS_FILE, NULL);
  files->job_dir = g_steal_pointer (&job_dir);
  /* Run by GObject after TesseraJob's own finalize has unheld the job. */
  g_object_set_data_full (G_OBJECT (job), "tessera-private-job-files", files, private_job_files_free);
  return g_steal_pointer (&job);
}

/**
 * tessera_job_folder_is_at_path:
 * @self: a job
 *
 * Tells whether the job's folder path (the folder of its job URI) still
 * leads, without a link, to the folder given to [ctor@Tessera.Job.new_at].
 * A command given that path (for instance the `TESSERA_LOCKS` of `tessera
 * run`) must not start when it does not.
 *
 * Returns: whether it does; %TRUE for a job made by path
 */
gboolean
tessera_job_folder_is_at_path (TesseraJob *self)
{
  g_autofree char *dir = NULL;
  struct stat st, path_st;

  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);
  if (self->folder_fd < 0)
    return TRUE;
  dir = g_path_get_dirname (self->job_uri);
  return fstat (self->folder_fd, &st) == 0 && lstat (dir, &path_st) == 0 && S_ISDIR (path_st.st_mode) &&
         st.st_dev == path_st.st_dev && st.st_ino == path_st.st_ino;
}

/**
 * tessera_job_write_file:
 * @self: a job
 * @name: a file name in the job's folder (no `/`)
 * @contents: what to write
 * @error: return location for a #GError
 *
 * Writes `<job dir>/@name` atomically (a temporary file beside it, made
 * with `O_CREAT | O_EXCL | O_NOFOLLOW`, then renamed): through the
 * folder's descriptor for a job made with [ctor@Tessera.Job.new_at], by
 * path else. `tessera run` writes `locks.json` so.
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_job_write_file (TesseraJob  *self,
                        const char  *name,
                        const char  *contents,
                        GError     **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;

  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);
  g_return_val_if_fail (name != NULL && *name != '\0' && strchr (name, '/') == NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  dir = g_path_get_dirname (self->job_uri);
  path = g_build_filename (dir, name, NULL);
  if (self->folder_fd < 0)
    return _tessera_write_file_atomic (path, contents, -1, FALSE, error);
  return _tessera_write_file_atomic_at (self->folder_fd, name, path, contents, -1, FALSE, error);
}

/**
 * tessera_job_remove_file:
 * @self: a job
 * @name: a file name in the job's folder (no `/`)
 *
 * Removes `<job dir>/@name`: through the folder's descriptor for a job
 * made with [ctor@Tessera.Job.new_at] (a link put in the folder's place
 * since costs its target nothing), by path else. A file already gone is
 * not an error. `tessera run` removes `locks.json` and the job lock so.
 *
 * Returns: %TRUE when the file is gone
 */
gboolean
tessera_job_remove_file (TesseraJob *self,
                         const char *name)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  int r;

  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);
  g_return_val_if_fail (name != NULL && *name != '\0' && strchr (name, '/') == NULL, FALSE);
  if (self->folder_fd >= 0)
    r = unlinkat (self->folder_fd, name, 0);
  else
    {
      dir = g_path_get_dirname (self->job_uri);
      path = g_build_filename (dir, name, NULL);
      r = g_unlink (path);
    }
  return r == 0 || errno == ENOENT;
}

/**
 * tessera_job_get_task_id:
 * @self: a job
 *
 * Gets the task id.
 *
 * Returns: the task id
 */
const char *
tessera_job_get_task_id (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return self->task_id;
}

/**
 * tessera_job_get_identifier:
 * @self: a job
 *
 * Gets the job identifier.
 *
 * Returns: the job identifier
 */
const char *
tessera_job_get_identifier (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return self->identifier;
}

/**
 * tessera_job_get_job_uri:
 * @self: a job
 *
 * Gets the job URI.
 *
 * Returns: the job URI
 */
const char *
tessera_job_get_job_uri (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return self->job_uri;
}

/**
 * tessera_job_dup_lock_path:
 * @self: a job
 *
 * Gets `<job_uri>.lock`, derived as Python's
 * `Path.with_suffix` does.
 *
 * Returns: (transfer full): `<job_uri>.lock`, derived as Python's
 *   `Path.with_suffix` does
 */
char *
tessera_job_dup_lock_path (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return _tessera_path_with_suffix (self->job_uri, ".lock");
}

/**
 * tessera_job_dup_pid_path:
 * @self: a job
 *
 * Gets `<job_uri>.pid`, derived as Python's
 * `Path.with_suffix` does.
 *
 * Returns: (transfer full): `<job_uri>.pid`, derived as Python's
 *   `Path.with_suffix` does
 */
char *
tessera_job_dup_pid_path (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return _tessera_path_with_suffix (self->job_uri, ".pid");
}

/* The lock file's name, once the job's names are checked: what a resource
 * uses, never a path out of jobs/. */
char *
_tessera_job_dup_checked_lock_file_name (TesseraJob *self, GError **error)
{
  g_autofree char *lock_name = NULL;

  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  if (!check_name (self->task_id, error) || !check_name (self->identifier, error))
    return NULL;
  lock_name = tessera_lock_file_name (self->task_id, self->identifier);
  if (!check_lock_file_name (self->task_id, lock_name, error))
    return NULL;
  return g_steal_pointer (&lock_name);
}

/**
 * tessera_job_dup_lock_file_name:
 * @self: a job
 *
 * Gets the name of this job's lock file in `jobs/`.
 *
 * Returns: (transfer full): the name of this job's lock file in `jobs/`
 */
char *
tessera_job_dup_lock_file_name (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return tessera_lock_file_name (self->task_id, self->identifier);
}

/**
 * tessera_job_get_process:
 * @self: a job
 *
 * Gets the process running the job, if known.
 *
 * Returns: (transfer none) (nullable): the process running the job, if known
 */
TesseraProcess *
tessera_job_get_process (TesseraJob *self)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), NULL);
  return self->process;
}

static gboolean
write_pid_file (TesseraJob *self, GError **error)
{
  g_autofree char *path = tessera_job_dup_pid_path (self);
  g_autofree char *name = g_path_get_basename (path);
  g_autoptr(JsonNode) node = tessera_process_to_json (self->process);
  g_autofree char *text = json_to_string (node, FALSE);

  if (self->folder_fd >= 0 ? !_tessera_write_file_atomic_at (self->folder_fd, name, path, text, -1, FALSE, error)
                           : !_tessera_write_file_atomic (path, text, -1, FALSE, error))
    return FALSE;
  self->wrote_pid = TRUE;
  return TRUE;
}

/**
 * tessera_job_set_process:
 * @self: a job
 * @process: (nullable): the process running the job
 * @error: return location for a #GError
 *
 * Records the process of the job. While the job is held
 * ([method@Tessera.Job.hold]), `<job_uri>.pid` is written at once.
 *
 * Returns: %FALSE with @error set when `<job_uri>.pid` cannot be written
 */
gboolean
tessera_job_set_process (TesseraJob      *self,
                         TesseraProcess  *process,
                         GError         **error)
{
  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);
  g_return_val_if_fail (process == NULL || TESSERA_IS_PROCESS (process), FALSE);

  gboolean changed, ok = TRUE;

  g_mutex_lock (&self->mutex);
  changed = g_set_object (&self->process, process);
  /* The same process again: its `<job_uri>.pid` is written already. */
  if (self->lock_fd >= 0 && self->process != NULL && (changed || !self->wrote_pid))
    ok = write_pid_file (self, error);
  g_mutex_unlock (&self->mutex);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_PROCESS]);
  return ok;
}

/* Called with the job's mutex held. */
static void
unhold_locked (TesseraJob *self)
{
  if (self->lock_fd < 0)
    return;
  if (self->wrote_pid)
    {
      g_autofree char *pid_path = tessera_job_dup_pid_path (self);
      g_autofree char *pid_name = g_path_get_basename (pid_path);

      if ((self->folder_fd >= 0 ? unlinkat (self->folder_fd, pid_name, 0) : g_unlink (pid_path)) < 0 &&
          errno != ENOENT)
        g_warning (_("Cannot remove %s: %s"), pid_path, g_strerror (errno));
      self->wrote_pid = FALSE;
    }
  /* Closing the descriptor drops the open-file-description lock. */
  close (self->lock_fd);
  self->folder_known = FALSE;
  self->lock_fd = -1;
}

/* Records the job folder's identity once the job lock @lock_name is held
 * there: the folder (its descriptor, else its path) must hold that very
 * lock, so that whoever finds the folder without it knows the holder let
 * it go. Called with the job's mutex held. */
static void
record_folder (TesseraJob *self, const char *dir, const char *lock_name)
{
  struct stat dir_st, lock_st, held_st;
  int dir_fd = self->folder_fd >= 0 ? self->folder_fd : open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  self->folder_known = dir_fd >= 0 && fstat (dir_fd, &dir_st) == 0 &&
                       fstatat (dir_fd, lock_name, &lock_st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       fstat (self->lock_fd, &held_st) == 0 &&
                       lock_st.st_dev == held_st.st_dev && lock_st.st_ino == held_st.st_ino;
  if (self->folder_known)
    {
      self->folder_dev = (guint64) dir_st.st_dev;
      self->folder_ino = (guint64) dir_st.st_ino;
    }
  if (dir_fd >= 0 && dir_fd != self->folder_fd)
    close (dir_fd);
}

gboolean
_tessera_job_get_folder (TesseraJob *self,
                         guint64    *dev,
                         guint64    *ino)
{
  gboolean known;

  g_mutex_lock (&self->mutex);
  known = self->lock_fd >= 0 && self->folder_known;
  *dev = self->folder_dev;
  *ino = self->folder_ino;
  g_mutex_unlock (&self->mutex);
  return known;
}

/**
 * tessera_job_hold:
 * @self: a job
 * @error: return location for a #GError
 *
 * Takes the job lock `<job_uri>.lock` (creating the job directory if
 * needed) and writes `<job_uri>.pid` when the process is known. Tessera
 * calls this before it creates a lock file for the job; holding twice is
 * fine. Fails with %TESSERA_ERROR_ALREADY_HELD when another process runs
 * the same job.
 *
 * Returns: whether the job is now held by this process
 */
gboolean
tessera_job_hold (TesseraJob  *self,
                  GError     **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *lock_path = NULL;
  g_autofree char *lock_name = NULL;
  gboolean ok = FALSE;

  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);

  g_mutex_lock (&self->mutex);
  if (self->lock_fd >= 0)
    {
      g_mutex_unlock (&self->mutex);
      return TRUE;
    }
  /* The race tests change the job's folder here. */
  _tessera_pause_point ("job-hold");
  dir = g_path_get_dirname (self->job_uri);
  lock_path = tessera_job_dup_lock_path (self);
  lock_name = g_path_get_basename (lock_path);
  if (self->folder_fd >= 0)
    self->lock_fd = _tessera_job_lock_take_at (self->folder_fd, lock_name, lock_path, error);
  else if (_tessera_mkdir_with_parents (dir, error))
    self->lock_fd = _tessera_job_lock_take (lock_path, error);
  if (self->lock_fd >= 0)
    {
      record_folder (self, dir, lock_name);
      ok = self->process == NULL || write_pid_file (self, error);
      if (!ok)
        unhold_locked (self);
    }
  g_mutex_unlock (&self->mutex);
  return ok;
}

/**
 * tessera_job_dup_lock_fd:
 * @self: a job
 *
 * Gives a new descriptor of the held job lock, close-on-exec. The lock is
 * an open-file-description lock: it lasts as long as any descriptor of
 * that open file does, so a process started with this descriptor kept
 * open (as flock(1) passes its lock) keeps the job lock held until it
 * ends, even after this process has died. Judges that cannot see our pids
 * (on another host, in another pid namespace) rely on that lock.
 *
 * Returns: a descriptor the caller owns, or -1 when the job is not held
 */
int
tessera_job_dup_lock_fd (TesseraJob *self)
{
  int fd = -1;

  g_return_val_if_fail (TESSERA_IS_JOB (self), -1);
  g_mutex_lock (&self->mutex);
  if (self->lock_fd >= 0)
    fd = fcntl (self->lock_fd, F_DUPFD_CLOEXEC, 3);
  g_mutex_unlock (&self->mutex);
  return fd;
}

/**
 * tessera_job_lock_is_released_at:
 * @dir_fd: an open job folder, or `AT_FDCWD`
 * @name: the name of a job lock in @dir_fd (a path with `AT_FDCWD`)
 *
 * Tells whether the job lock @name of a job folder of `tessera run` shows
 * that its job is over, as the verdict on a holder reads a Tessera
 * holder's job lock: only one that could be opened and that no fcntl lock
 * holds does (`tessera run` never takes a flock, which anyone who may
 * read the file can: one proves nothing). One that is not there, cannot
 * be opened or probed, or is not a regular file does not. Never follows a link, never blocks. `tessera clean`
 * asks it of each job lock in a job folder it would remove.
 *
 * Returns: whether the job lock was opened and found free
 */
gboolean
tessera_job_lock_is_released_at (int         dir_fd,
                                 const char *name)
{
  g_return_val_if_fail (name != NULL, FALSE);
  return _tessera_verdict_job_lock_released (_tessera_job_lock_probe_at (dir_fd, name, NULL));
}

/**
 * tessera_job_is_held:
 * @self: a job
 *
 * Tells whether this process holds the job lock.
 *
 * Returns: whether this process holds the job lock
 */
gboolean
tessera_job_is_held (TesseraJob *self)
{
  gboolean held;

  g_return_val_if_fail (TESSERA_IS_JOB (self), FALSE);
  g_mutex_lock (&self->mutex);
  held = self->lock_fd >= 0;
  g_mutex_unlock (&self->mutex);
  return held;
}

/**
 * tessera_job_unhold:
 * @self: a job
 *
 * Removes `<job_uri>.pid` if this process wrote it and lets the job lock
 * go: for a seed-era watcher, the job has finished. Does nothing when the
 * job is not held.
 */
void
tessera_job_unhold (TesseraJob *self)
{
  g_return_if_fail (TESSERA_IS_JOB (self));

  g_mutex_lock (&self->mutex);
  unhold_locked (self);
  g_mutex_unlock (&self->mutex);
}
