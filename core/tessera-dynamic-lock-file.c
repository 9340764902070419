/* tessera-dynamic-lock-file.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-json-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>

/**
 * TesseraDynamicLockFile:
 *
 * One JSON file per holder in a resource's `jobs/` folder (experimaestro's
 * `DynamicLockFile`),
 * `{"job_uri": …, "information": …, "process": {"type": "local", "pid": N}}`.
 * A file is valid, and counts against the capacity, when "job_uri" is set.
 *
 * The base class keeps the "information" member it was read or created
 * with and writes it back unchanged whenever the file is saved again (for
 * instance when the holder's process is recorded). A subclass interprets
 * it in [vfunc@Tessera.DynamicLockFile.from_information]; it overrides
 * [vfunc@Tessera.DynamicLockFile.to_information] only if it changes what
 * is written.
 *
 * Tessera writes lock files atomically (a temporary name that does not end
 * in ".json", then a rename) and never follows a symbolic link when
 * reading one.
 */
typedef struct
{
  char *path;
  char *job_uri;
  TesseraProcess *process;
  JsonNode *information;   /* sealed; NULL for JSON null or no member */
  gint64 mtime_ns;
  /* The owner of its file, as read or written (-1: no file, as in etcd):
   * whose the holding is, whatever uid its "process" claims. */
  gint64 file_uid;
  /* The holder's job folder (the folder of job_uri), as its process
   * recorded it in "process": "job_folder". */
  gboolean job_folder_known;
  guint64 job_folder_dev;
  guint64 job_folder_ino;
  /* Whether its job lock was taken where locks cross hosts, as its
   * process recorded it in "process": "locks_cross" (-1: not recorded). */
  int locks_cross;
  /* The view of the pool its job lock was taken through (the device of
   * its job folder there), as its process recorded it in "process":
   * "view". */
  gboolean view_known;
  guint64 view;
  char *unknown_reason;    /* under unknown_reason_lock */
  char *problem;           /* why it holds the whole resource; NULL: read in full */
} TesseraDynamicLockFilePrivate;

/* A verdict is made under its resource's thread lock, and read by anyone
 * who has the lock file (tessera_dynamic_lock_file_dup_unknown_reason()). */
static GMutex unknown_reason_lock;

enum {
  PROP_0,
  PROP_PATH,
  PROP_JOB_URI,
  PROP_PROCESS,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraDynamicLockFile, tessera_dynamic_lock_file, G_TYPE_OBJECT)

#define PRIV(o) ((TesseraDynamicLockFilePrivate *) tessera_dynamic_lock_file_get_instance_private (o))

static void
tessera_dynamic_lock_file_finalize (GObject *object)
{
  TesseraDynamicLockFilePrivate *priv = PRIV (TESSERA_DYNAMIC_LOCK_FILE (object));

  g_free (priv->path);
  g_free (priv->job_uri);
  g_free (priv->unknown_reason);
  g_free (priv->problem);
  g_clear_object (&priv->process);
  g_clear_pointer (&priv->information, json_node_unref);
  G_OBJECT_CLASS (tessera_dynamic_lock_file_parent_class)->finalize (object);
}

static void
tessera_dynamic_lock_file_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraDynamicLockFilePrivate *priv = PRIV (TESSERA_DYNAMIC_LOCK_FILE (object));

  switch (prop_id)
    {
    case PROP_PATH: g_value_set_string (value, priv->path); break;
    case PROP_JOB_URI: g_value_set_string (value, priv->job_uri); break;
    case PROP_PROCESS: g_value_set_object (value, priv->process); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_dynamic_lock_file_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraDynamicLockFile *self = TESSERA_DYNAMIC_LOCK_FILE (object);
  TesseraDynamicLockFilePrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_PATH: g_free (priv->path); priv->path = g_value_dup_string (value); break;
    case PROP_JOB_URI: g_free (priv->job_uri); priv->job_uri = g_value_dup_string (value); break;
    case PROP_PROCESS: tessera_dynamic_lock_file_set_process (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
tessera_dynamic_lock_file_real_from_information (TesseraDynamicLockFile *self,
                                                 JsonNode *information,
                                                 GError **error)
{
  return TRUE;
}

/* The information as it was read or created, unchanged: a subclass that
 * only reads it never loses what it does not understand. */
static JsonNode *
tessera_dynamic_lock_file_real_to_information (TesseraDynamicLockFile *self)
{
  JsonNode *information = PRIV (self)->information;

  return information != NULL ? json_node_copy (information) : NULL;
}

static gint64
tessera_dynamic_lock_file_real_get_amount (TesseraDynamicLockFile *self)
{
  return 1;
}

/* Keeps a sealed copy of @information; JSON null is kept as %NULL. */
static void
keep_information (TesseraDynamicLockFile *self, JsonNode *information)
{
  TesseraDynamicLockFilePrivate *priv = PRIV (self);

  g_clear_pointer (&priv->information, json_node_unref);
  if (information == NULL || JSON_NODE_HOLDS_NULL (information))
    return;
  priv->information = json_node_copy (information);
  json_node_seal (priv->information);
}

static void
tessera_dynamic_lock_file_class_init (TesseraDynamicLockFileClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tessera_dynamic_lock_file_finalize;
  object_class->get_property = tessera_dynamic_lock_file_get_property;
  object_class->set_property = tessera_dynamic_lock_file_set_property;
  klass->from_information = tessera_dynamic_lock_file_real_from_information;
  klass->to_information = tessera_dynamic_lock_file_real_to_information;
  klass->get_amount = tessera_dynamic_lock_file_real_get_amount;

  /**
   * TesseraDynamicLockFile:path:
   *
   * Where the lock file lives.
   */
  props[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraDynamicLockFile:job-uri:
   *
   * The holder's job URI; %NULL makes the lock file invalid.
   */
  props[PROP_JOB_URI] = g_param_spec_string ("job-uri", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraDynamicLockFile:process:
   *
   * The holder's process, once recorded.
   */
  props[PROP_PROCESS] = g_param_spec_object ("process", NULL, NULL, TESSERA_TYPE_PROCESS,
    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_dynamic_lock_file_init (TesseraDynamicLockFile *self)
{
  PRIV (self)->locks_cross = -1;
  PRIV (self)->file_uid = -1;
}

/* A type that is not a concrete lock file type is the plugin's bug. */
#define CONCRETE_LOCK_FILE_TYPE(type) \
  (g_type_is_a ((type), TESSERA_TYPE_DYNAMIC_LOCK_FILE) && !G_TYPE_IS_ABSTRACT (type))

/* "job_folder": {"dev": N, "ino": N} in @process, as Tessera writes it
 * (anything else says nothing). */
static void
read_job_folder (TesseraDynamicLockFile *self, JsonObject *process)
{
  TesseraDynamicLockFilePrivate *priv = PRIV (self);
  JsonNode *node = json_object_get_member (process, "job_folder");
  JsonNode *dev, *ino;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  dev = json_object_get_member (json_node_get_object (node), "dev");
  ino = json_object_get_member (json_node_get_object (node), "ino");
  if (dev == NULL || !JSON_NODE_HOLDS_VALUE (dev) || json_node_get_value_type (dev) != G_TYPE_INT64 ||
      ino == NULL || !JSON_NODE_HOLDS_VALUE (ino) || json_node_get_value_type (ino) != G_TYPE_INT64)
    return;
  priv->job_folder_known = TRUE;
  priv->job_folder_dev = (guint64) json_node_get_int (dev);
  priv->job_folder_ino = (guint64) json_node_get_int (ino);
}

/* "locks_cross": true or false in @process, as Tessera writes it
 * (anything else says nothing). */
static void
read_locks_cross (TesseraDynamicLockFile *self, JsonObject *process)
{
  JsonNode *node = json_object_get_member (process, "locks_cross");

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    PRIV (self)->locks_cross = json_node_get_boolean (node) ? 1 : 0;
}

/* "view": N in @process, as Tessera writes it (anything else says
 * nothing). */
static void
read_view (TesseraDynamicLockFile *self, JsonObject *process)
{
  JsonNode *node = json_object_get_member (process, "view");

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return;
  PRIV (self)->view_known = TRUE;
  PRIV (self)->view = (guint64) json_node_get_int (node);
}

/**
 * tessera_dynamic_lock_file_new_from_data:
 * @lock_file_type: a concrete subtype of #TesseraDynamicLockFile
 * @path: the path the data was read from
 * @data: the JSON text of a lock file
 * @length: the length of @data, or -1 when it is nul-terminated
 * @error: return location for a #GError
 *
 * Parses a lock file. A missing "job_uri" makes an invalid (not counted)
 * lock file, not an error; text that is not a JSON object, or members of
 * the wrong type, are %TESSERA_ERROR_INVALID_LOCK_FILE.
 *
 * Returns: (transfer full): the lock file, or %NULL with @error set
 */
TesseraDynamicLockFile *
tessera_dynamic_lock_file_new_from_data (GType        lock_file_type,
                                         const char  *path,
                                         const char  *data,
                                         gssize       length,
                                         GError     **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(TesseraDynamicLockFile) self = NULL;
  g_autoptr(TesseraProcess) process = NULL;
  JsonNode *root, *job_uri, *information, *process_node;
  JsonObject *object;

  g_return_val_if_fail (CONCRETE_LOCK_FILE_TYPE (lock_file_type), NULL);
  parser = json_parser_new_immutable ();
  if (!_tessera_json_load (parser, data, length, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("Lock file %s is not valid JSON: %s"), path, local->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("Lock file %s is not a JSON object"), path);
      return NULL;
    }
  object = json_node_get_object (root);
  job_uri = json_object_get_member (object, "job_uri");
  if (job_uri != NULL && !JSON_NODE_HOLDS_NULL (job_uri) &&
      (!JSON_NODE_HOLDS_VALUE (job_uri) || json_node_get_value_type (job_uri) != G_TYPE_STRING))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("Lock file %s: “job_uri” must be a string"), path);
      return NULL;
    }
  process_node = json_object_get_member (object, "process");
  if (process_node != NULL && !JSON_NODE_HOLDS_NULL (process_node))
    {
      process = tessera_process_new_from_json (process_node, &local);
      if (process == NULL)
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                       _("Lock file %s: %s"), path, local->message);
          return NULL;
        }
    }
  self = g_object_new (lock_file_type,
                       "path", path,
                       "job-uri", (job_uri && JSON_NODE_HOLDS_VALUE (job_uri))
                                  ? json_node_get_string (job_uri) : NULL,
                       "process", process,
                       NULL);
  if (process != NULL)
    {
      read_job_folder (self, json_node_get_object (process_node));
      read_locks_cross (self, json_node_get_object (process_node));
      read_view (self, json_node_get_object (process_node));
    }
  information = json_object_get_member (object, "information");
  if (information != NULL && JSON_NODE_HOLDS_NULL (information))
    information = NULL;
  keep_information (self, information);
  if (!TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (self)->from_information (self, information, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("Lock file %s: %s"), path, local->message);
      return NULL;
    }
  return g_steal_pointer (&self);
}

/**
 * tessera_dynamic_lock_file_load:
 * @lock_file_type: a concrete subtype of #TesseraDynamicLockFile
 * @path: the lock file
 * @error: return location for a #GError
 *
 * Reads a lock file, without following a symbolic link. A Python peer
 * writes in place, so text that does not parse is read again a few times
 * before it is reported as %TESSERA_ERROR_INVALID_LOCK_FILE. A file that
 * does not exist is `G_FILE_ERROR_NOENT`.
 *
 * Returns: (transfer full): the lock file, or %NULL with @error set
 */
/* One read, no retry (under ipc.lock every writer has finished): the
 * lock file, or NULL with @error and, when the file could be read, its
 * text in @data for the caller to judge. */
TesseraDynamicLockFile *
_tessera_dynamic_lock_file_load_once (GType        lock_file_type,
                                      int          dir_fd,
                                      const char  *name,
                                      const char  *path,
                                      char       **data,
                                      gsize       *length,
                                      GError     **error)
{
  struct stat st;
  TesseraDynamicLockFile *self;

  *data = NULL;
  *length = 0;
  if (!_tessera_read_file_at (dir_fd, name, path, data, length, &st, error))
    return NULL;
  self = tessera_dynamic_lock_file_new_from_data (lock_file_type, path, *data, *length, error);
  if (self != NULL)
    {
      PRIV (self)->mtime_ns = _tessera_stat_mtime_ns (&st);
      PRIV (self)->file_uid = st.st_uid;
    }
  return self;
}

TesseraDynamicLockFile *
_tessera_dynamic_lock_file_new_from_text (GType              lock_file_type,
                                          const char        *path,
                                          const char        *data,
                                          gsize              length,
                                          const struct stat *st,
                                          GError           **error)
{
  TesseraDynamicLockFile *self = tessera_dynamic_lock_file_new_from_data (lock_file_type, path, data, length, error);

  if (self != NULL)
    {
      PRIV (self)->mtime_ns = _tessera_stat_mtime_ns (st);
      PRIV (self)->file_uid = st->st_uid;
    }
  return self;
}

TesseraDynamicLockFile *
tessera_dynamic_lock_file_load (GType        lock_file_type,
                                const char  *path,
                                GError     **error)
{
  for (guint attempt = 0;; attempt++)
    {
      g_autofree char *data = NULL;
      g_autoptr(GError) local = NULL;
      gsize length;
      struct stat st;
      TesseraDynamicLockFile *self;

      if (!_tessera_read_file_nofollow (path, &data, &length, &st, error))
        return NULL;
      self = tessera_dynamic_lock_file_new_from_data (lock_file_type, path, data, length, &local);
      if (self != NULL)
        {
          PRIV (self)->mtime_ns = _tessera_stat_mtime_ns (&st);
          PRIV (self)->file_uid = st.st_uid;
          return self;
        }
      if (attempt >= 3 || !g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      g_usleep (20 * 1000);
    }
}

/**
 * tessera_dynamic_lock_file_to_json:
 * @self: a lock file
 *
 * The JSON written by [method@Tessera.DynamicLockFile.save].
 *
 * Returns: (transfer full): the lock file's content: "job_uri",
 *   "information" and, when known, "process"
 */
JsonNode *
tessera_dynamic_lock_file_to_json (TesseraDynamicLockFile *self)
{
  TesseraDynamicLockFilePrivate *priv;
  JsonObject *object;
  JsonNode *node, *information;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  priv = PRIV (self);

  object = json_object_new ();
  if (priv->job_uri != NULL)
    json_object_set_string_member (object, "job_uri", priv->job_uri);
  else
    json_object_set_null_member (object, "job_uri");
  information = TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (self)->to_information (self);
  json_object_set_member (object, "information",
                          information ? information : json_node_new (JSON_NODE_NULL));
  if (priv->process != NULL)
    {
      JsonNode *process = tessera_process_to_json (priv->process);

      /* Beside the process, in the spec, which readers that do not know
       * the member ignore. */
      if (priv->job_folder_known && JSON_NODE_HOLDS_OBJECT (process))
        {
          JsonObject *identity = json_object_new ();

          json_object_set_int_member (identity, "dev", (gint64) priv->job_folder_dev);
          json_object_set_int_member (identity, "ino", (gint64) priv->job_folder_ino);
          json_object_set_object_member (json_node_get_object (process), "job_folder", identity);
        }
      if (priv->locks_cross >= 0 && JSON_NODE_HOLDS_OBJECT (process))
        json_object_set_boolean_member (json_node_get_object (process), "locks_cross", priv->locks_cross > 0);
      if (priv->view_known && JSON_NODE_HOLDS_OBJECT (process))
        json_object_set_int_member (json_node_get_object (process), "view", (gint64) priv->view);
      json_object_set_member (object, "process", process);
    }
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, object);
  return node;
}

/**
 * tessera_dynamic_lock_file_save:
 * @self: a lock file
 * @error: return location for a #GError
 *
 * Writes the lock file atomically to its path.
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_dynamic_lock_file_save (TesseraDynamicLockFile  *self,
                                GError                 **error)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  struct stat st;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), FALSE);

  node = tessera_dynamic_lock_file_to_json (self);
  text = json_to_string (node, FALSE);
  /* Never through a link planted in place of jobs/. */
  if (!_tessera_write_pool_file_atomic (PRIV (self)->path, text, error))
    return FALSE;
  if (g_lstat (PRIV (self)->path, &st) == 0)
    {
      PRIV (self)->mtime_ns = _tessera_stat_mtime_ns (&st);
      PRIV (self)->file_uid = st.st_uid;
    }
  return TRUE;
}

/**
 * tessera_dynamic_lock_file_create:
 * @lock_file_type: a concrete subtype of #TesseraDynamicLockFile
 * @path: where to write the lock file
 * @job_uri: the holder's job URI
 * @information: (nullable): the type-specific "information"
 * @process: (nullable): the holder's process, when already known
 * @error: return location for a #GError
 *
 * The seed's `DynamicLockFile.create`: makes a lock file and writes it.
 *
 * Returns: (transfer full): the new lock file, or %NULL with @error set
 */
TesseraDynamicLockFile *
tessera_dynamic_lock_file_create (GType            lock_file_type,
                                  const char      *path,
                                  const char      *job_uri,
                                  JsonNode        *information,
                                  TesseraProcess  *process,
                                  GError         **error)
{
  g_autoptr(TesseraDynamicLockFile) self = NULL;

  g_return_val_if_fail (path != NULL && job_uri != NULL, NULL);
  self = _tessera_dynamic_lock_file_new_unsaved (lock_file_type, path, job_uri, information, process, error);
  if (self == NULL || !tessera_dynamic_lock_file_save (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

/* tessera_dynamic_lock_file_create() without the write: the caller
 * writes it where it knows the folder to be. */
TesseraDynamicLockFile *
_tessera_dynamic_lock_file_new_unsaved (GType            lock_file_type,
                                        const char      *path,
                                        const char      *job_uri,
                                        JsonNode        *information,
                                        TesseraProcess  *process,
                                        GError         **error)
{
  g_autoptr(TesseraDynamicLockFile) self = NULL;

  g_return_val_if_fail (CONCRETE_LOCK_FILE_TYPE (lock_file_type), NULL);
  self = g_object_new (lock_file_type, "path", path, "job-uri", job_uri, "process", process, NULL);
  keep_information (self, information);
  if (!TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (self)->from_information (self, information, error))
    return NULL;
  return g_steal_pointer (&self);
}

/* Writes it atomically as @name in @dir_fd (its path is for messages). */
gboolean
_tessera_dynamic_lock_file_save_at (TesseraDynamicLockFile  *self,
                                    int                      tmp_fd,
                                    int                      dir_fd,
                                    const char              *name,
                                    gboolean                *tmp_unusable,
                                    struct stat             *st,
                                    GError                 **error)
{
  g_autoptr(JsonNode) node = tessera_dynamic_lock_file_to_json (self);
  g_autofree char *text = json_to_string (node, FALSE);

  if (!_tessera_write_file_atomic_via (tmp_fd, dir_fd, name, PRIV (self)->path, text, tmp_unusable, error))
    return FALSE;
  if (fstatat (dir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      /* Removed by someone else at once: say so rather than fail mute. */
      _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), PRIV (self)->path);
      return FALSE;
    }
  PRIV (self)->mtime_ns = _tessera_stat_mtime_ns (st);
  PRIV (self)->file_uid = st->st_uid;
  return TRUE;
}

/**
 * tessera_dynamic_lock_file_delete:
 * @self: a lock file
 * @error: return location for a #GError
 *
 * Removes the lock file from disk: a regular file only, never through a
 * symbolic link planted in place of its folder. A file that is already
 * gone is not an error: peers may delete it at any moment.
 *
 * Returns: %TRUE when the file is gone
 */
gboolean
tessera_dynamic_lock_file_delete (TesseraDynamicLockFile  *self,
                                  GError                 **error)
{
  const char *path;
  int saved;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), FALSE);
  path = PRIV (self)->path;
  _tessera_pause_point ("lock-file-delete");
  saved = _tessera_unlink_pool_file (path);
  if (saved != 0 && saved != ENOENT)
    {
      _tessera_set_io_error (error, saved, _("Cannot delete lock file %s: %s"), path);
      return FALSE;
    }
  return TRUE;
}

/**
 * tessera_dynamic_lock_file_get_path:
 * @self: a lock file
 *
 * Where the lock file lives.
 *
 * Returns: the lock file's path
 */
const char *
tessera_dynamic_lock_file_get_path (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  return PRIV (self)->path;
}

/**
 * tessera_dynamic_lock_file_get_job_uri:
 * @self: a lock file
 *
 * The holder's job URI, the "job_uri" member.
 *
 * Returns: (nullable): the holder's job URI
 */
const char *
tessera_dynamic_lock_file_get_job_uri (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  return PRIV (self)->job_uri;
}

/**
 * tessera_dynamic_lock_file_is_valid:
 * @self: a lock file
 *
 * Whether the lock file counts against the capacity: it does when
 * "job_uri" is set.
 *
 * Returns: whether the lock file names a job, and so counts
 */
gboolean
tessera_dynamic_lock_file_is_valid (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), FALSE);
  return PRIV (self)->job_uri != NULL;
}

/**
 * tessera_dynamic_lock_file_get_process:
 * @self: a lock file
 *
 * The holder's process, the "process" member.
 *
 * Returns: (transfer none) (nullable): the holder's process, if recorded
 */
TesseraProcess *
tessera_dynamic_lock_file_get_process (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  return PRIV (self)->process;
}

/**
 * tessera_dynamic_lock_file_set_process:
 * @self: a lock file
 * @process: (nullable): the holder's process
 *
 * Sets the holder's process in memory; [method@Tessera.DynamicLockFile.save]
 * writes it.
 */
void
tessera_dynamic_lock_file_set_process (TesseraDynamicLockFile *self,
                                       TesseraProcess         *process)
{
  g_return_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self));
  if (g_set_object (&PRIV (self)->process, process))
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_PROCESS]);
}

/**
 * tessera_dynamic_lock_file_get_information:
 * @self: a lock file
 *
 * The "information" member exactly as the lock file was read or created
 * with it. The default [vfunc@Tessera.DynamicLockFile.to_information]
 * writes it back unchanged, so a subclass needs only
 * [vfunc@Tessera.DynamicLockFile.from_information] to interpret it.
 *
 * The node is sealed (immutable) and may be read from any thread.
 *
 * Returns: (transfer none) (nullable): the information, or %NULL when the
 *   file has none or JSON `null`
 */
JsonNode *
tessera_dynamic_lock_file_get_information (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  return PRIV (self)->information;
}

/**
 * tessera_dynamic_lock_file_get_amount:
 * @self: a lock file
 *
 * How much its holder has, in the resource's units whatever the type (a
 * counter's count, a number of GPUs, 1 for a mutex: see
 * [vfunc@Tessera.DynamicLockFile.get_amount]), so that holdings of
 * several types add up per user. Any thread.
 *
 * Returns: the amount, or -1 when the file could not be read in full
 *   ([method@Tessera.DynamicLockFile.get_problem]): it holds the whole
 *   resource
 */
gint64
tessera_dynamic_lock_file_get_amount (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), -1);
  if (PRIV (self)->problem != NULL)
    return -1;
  return MAX (TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (self)->get_amount (self), 0);
}

/**
 * tessera_dynamic_lock_file_get_mtime:
 * @self: a lock file
 *
 * When the file was last read or written by this object.
 *
 * Returns: the modification time of the file when it was read or written,
 *   in nanoseconds since the epoch (0 if unknown)
 */
gint64
tessera_dynamic_lock_file_get_mtime (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), 0);
  return PRIV (self)->mtime_ns;
}

/**
 * tessera_dynamic_lock_file_get_problem:
 * @self: a lock file
 *
 * Why this lock file holds the whole resource whatever it says: it could
 * not be read in full (its amount is no number the resource type can
 * count, such as `"count": 1e308`), or it is no file at all (a FIFO, a
 * socket, a device or a folder named like a lock file in `jobs/`, listed
 * by [method@Tessera.TrackedDynamicResource.list_lock_files] with its
 * path and this reason only). Such a holder counts until it is gone;
 * `tessera clean --force` removes it. Any thread.
 *
 * Returns: (nullable): the reason, for people, or %NULL when the file was
 *   read in full
 */
const char *
tessera_dynamic_lock_file_get_problem (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  return PRIV (self)->problem;
}

/* Set once, by whoever found it unreadable (the lock file cache). */
void
_tessera_dynamic_lock_file_set_problem (TesseraDynamicLockFile *self, const char *problem)
{
  g_free (PRIV (self)->problem);
  PRIV (self)->problem = g_strdup (problem);
}

/* A store without files gives the time its holder was written (etcd). */
void
_tessera_dynamic_lock_file_show_information (TesseraDynamicLockFile *self, JsonNode *information)
{
  keep_information (self, information);
}

/**
 * tessera_dynamic_lock_file_get_file_uid:
 * @self: a lock file
 *
 * The owner of the file, as it was when this object read or wrote it:
 * whose the holding is. The uid a process spec records is anyone's claim
 * (a member of a group pool may write another's uid in a file of hers);
 * the file's owner is not.
 *
 * Returns: the uid owning the file, or -1 when it has none (a pool in
 *   etcd, a lock file made from data)
 */
gint64
tessera_dynamic_lock_file_get_file_uid (TesseraDynamicLockFile *self)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), -1);
  return PRIV (self)->file_uid;
}

void
_tessera_dynamic_lock_file_set_mtime (TesseraDynamicLockFile *self, gint64 mtime_ns)
{
  PRIV (self)->mtime_ns = mtime_ns;
}

void
_tessera_dynamic_lock_file_set_job_folder (TesseraDynamicLockFile *self,
                                           guint64                 dev,
                                           guint64                 ino)
{
  PRIV (self)->job_folder_known = TRUE;
  PRIV (self)->job_folder_dev = dev;
  PRIV (self)->job_folder_ino = ino;
}

gboolean
_tessera_dynamic_lock_file_get_job_folder (TesseraDynamicLockFile *self,
                                           guint64                *dev,
                                           guint64                *ino)
{
  *dev = PRIV (self)->job_folder_dev;
  *ino = PRIV (self)->job_folder_ino;
  return PRIV (self)->job_folder_known;
}

void
_tessera_dynamic_lock_file_set_locks_cross (TesseraDynamicLockFile *self,
                                            gboolean                locks_cross)
{
  PRIV (self)->locks_cross = locks_cross ? 1 : 0;
}

gboolean
_tessera_dynamic_lock_file_get_locks_cross (TesseraDynamicLockFile *self,
                                            gboolean               *locks_cross)
{
  *locks_cross = PRIV (self)->locks_cross > 0;
  return PRIV (self)->locks_cross >= 0;
}

void
_tessera_dynamic_lock_file_set_view (TesseraDynamicLockFile *self,
                                     guint64                 view)
{
  PRIV (self)->view_known = TRUE;
  PRIV (self)->view = view;
}

gboolean
_tessera_dynamic_lock_file_get_view (TesseraDynamicLockFile *self,
                                     guint64                *view)
{
  *view = PRIV (self)->view;
  return PRIV (self)->view_known;
}

void
_tessera_dynamic_lock_file_set_unknown_reason (TesseraDynamicLockFile *self,
                                               const char             *reason)
{
  TesseraDynamicLockFilePrivate *priv = PRIV (self);

  g_mutex_lock (&unknown_reason_lock);
  if (g_strcmp0 (priv->unknown_reason, reason) != 0)
    {
      g_free (priv->unknown_reason);
      priv->unknown_reason = g_strdup (reason);
    }
  g_mutex_unlock (&unknown_reason_lock);
}

/**
 * tessera_dynamic_lock_file_dup_unknown_reason:
 * @self: a lock file
 *
 * Why the last verdict of this process on the holder could not tell
 * whether it still runs, so that it counts as an unknown holder until
 * it is surely gone or removed by hand (`tessera clean --force`): for
 * instance a job lock that cannot be opened from here. Set by the
 * resource that read the lock file, when it judges the holder. Callable
 * from any thread.
 *
 * Returns: (transfer full) (nullable): why, or %NULL when the last
 *   verdict was sure, or there was none
 */
char *
tessera_dynamic_lock_file_dup_unknown_reason (TesseraDynamicLockFile *self)
{
  char *reason;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), NULL);
  g_mutex_lock (&unknown_reason_lock);
  reason = g_strdup (PRIV (self)->unknown_reason);
  g_mutex_unlock (&unknown_reason_lock);
  return reason;
}
