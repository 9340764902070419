/* tessera-tracked-dynamic-resource.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The resource is the GObject, its vfunc dispatch and the acquire /
 * release / record-process protocol; the rest is in units below it. Calls
 * go one way only (A -> B: A calls B, B never calls A):
 *
 *   tracked resource -> lock file cache -> holder monitor -> lock folder -> utils
 *   tracked resource -> lock file cache -> folder monitor -> lock folder
 *   tracked resource -> folder monitor, holder monitor (made, started, stopped)
 *   tracked resource -> resource informations -> lock folder
 *   tracked resource -> lock folder, watch box
 *
 * Upward only through callbacks: the cache's TesseraLockFileCacheCalls
 * (account, unaccount, name), the informations' TesseraInformationsApply,
 * and the poller-thread sources (inotify, pidfd), which reach the resource
 * through a TesseraWatchBox (on_inotify_ready, on_holder_exited here). */
#include "tessera-folder-monitor-private.h"
#include "tessera-holder-monitor-private.h"
#include "tessera-lock-file-cache-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"
#include "tessera-resource-informations-private.h"
#include "tessera-tracked-dynamic-resource-private.h"
#include "tessera-watch-box-private.h"

/**
 * TesseraTrackedDynamicResource:
 *
 * The seed's `TrackedDynamicResource`: a resource whose holders are files
 * in a lock folder F, in experimaestro's format:
 *
 * - `F/informations.json`: resource-level data (for a counter token,
 *   `{"total": N}`); a change is applied in every running process;
 * - `F/ipc.lock`: held (flock and an fcntl lock) around every
 *   read-modify-write of F;
 * - `F/jobs/{task_id}@{identifier}.json`: one [class@Tessera.DynamicLockFile]
 *   per holder.
 *
 * The resource keeps a cache of the lock files and re-reads only what
 * changed: inotify tells which names changed (read under ipc.lock, so the
 * view is exact when it matters); without inotify (network file systems,
 * `TESSERA_NO_INOTIFY=1`) the folder's modification time does. A holder's
 * death is seen through a pidfd in the private poller's
 * thread; the next process that looks removes the dead holder's file. A
 * valid lock file with no process, seen unchanged by this host for
 * [property@Tessera.TrackedDynamicResource:min-age], whose job lock is
 * not held (in either kind), is an orphan and is removed too.
 *
 * Subclasses implement the seed's accounting virtual functions; all of
 * them run under the resource's thread lock.
 */

typedef struct
{
  char *lock_folder;
  TesseraLockFolder *folder;  /* made at init, from lock_folder */
  GType lock_file_type;
  double min_age;
  double patience;            /* seconds a waiter takes what is free before it reserves */

  GMutex lock;                /* the seed's thread lock */
  TesseraLockFileCache *cache;
  gboolean refresh_changed;   /* a refresh changed it: wake this process's waiters */

  gboolean read_only;         /* only look: create, change and remove nothing */
  TesseraFolderMonitor *monitor;

  TesseraResourceInformations *informations;

  TesseraWatchBox *box;        /* how the poller's sources reach us */
  TesseraHolderMonitor *holders;
} TesseraTrackedDynamicResourcePrivate;

enum {
  PROP_0,
  PROP_LOCK_FOLDER,
  PROP_PATH,
  PROP_MIN_AGE,
  PROP_READ_ONLY,
  PROP_PATIENCE,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

static void tessera_tracked_dynamic_resource_initable_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TesseraTrackedDynamicResource, tessera_tracked_dynamic_resource,
                                  TESSERA_TYPE_DYNAMIC_RESOURCE,
                                  G_ADD_PRIVATE (TesseraTrackedDynamicResource)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         tessera_tracked_dynamic_resource_initable_init))

#define PRIV(o) ((TesseraTrackedDynamicResourcePrivate *) tessera_tracked_dynamic_resource_get_instance_private (o))
#define KLASS(o) TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (o)

static const char *
resource_name (TesseraTrackedDynamicResource *self)
{
  const char *name = tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self));
  return name ? name : PRIV (self)->lock_folder;
}

/* The thread lock. Property notifications raised under it (a plugin's
 * notify::total) are held back until it is released, so a handler may call
 * back into the resource. */
static void
lock_thread (TesseraTrackedDynamicResource *self)
{
  g_object_freeze_notify (G_OBJECT (self));
  g_mutex_lock (&PRIV (self)->lock);
}

static void
unlock_thread (TesseraTrackedDynamicResource *self)
{
  g_mutex_unlock (&PRIV (self)->lock);
  g_object_thaw_notify (G_OBJECT (self));
}

/* Takes ipc.lock then the thread lock, in that order, always: a peer that
 * keeps ipc.lock must not keep the poller's thread (which needs only the
 * thread lock) from serving this process's other resources. */
/* No ipc.lock held, but go on (read-only: none could be opened). */
#define IPC_LOCK_NONE G_MAXINT

static int
lock_both (TesseraTrackedDynamicResource *self, GError **error)
{
  int fd;

  if (PRIV (self)->read_only)
    {
      fd = _tessera_lock_folder_lock (PRIV (self)->folder, TRUE, NULL);
      if (fd < 0)
        fd = IPC_LOCK_NONE;
    }
  else
    fd = _tessera_lock_folder_lock (PRIV (self)->folder, FALSE, error);
  if (fd >= 0)
    lock_thread (self);
  return fd;
}

static void
unlock_both (TesseraTrackedDynamicResource *self, int fd)
{
  gboolean changed = PRIV (self)->refresh_changed;

  PRIV (self)->refresh_changed = FALSE;
  if (fd != IPC_LOCK_NONE)
    _tessera_lock_folder_unlock (fd);
  unlock_thread (self);
  if (changed)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
}

/* Always the poller this resource holds: the default one may be another
 * by now (the last one gone, a new one made), and a context borrowed from
 * a temporary reference could be freed before the source is attached. */
static GMainContext *
poller_context (TesseraTrackedDynamicResource *self)
{
  return _tessera_dynamic_resource_get_context (TESSERA_DYNAMIC_RESOURCE (self));
}

/* ---------------------------------------------------------------------- */
/* The lock file cache's calls into the resource type */

static void
cache_account (gpointer owner, TesseraDynamicLockFile *lock_file)
{
  KLASS (owner)->account_lock_file (owner, lock_file);
}

static void
cache_unaccount (gpointer owner, TesseraDynamicLockFile *lock_file)
{
  KLASS (owner)->unaccount_lock_file (owner, lock_file);
}

static const char *
cache_name (gpointer owner)
{
  return resource_name (owner);
}

static const TesseraLockFileCacheCalls cache_calls = { cache_account, cache_unaccount, cache_name };

/* A watched holder exited: in the poller's thread. */
static void
on_holder_exited (gpointer data, GPid pid, guint64 serial)
{
  g_autoptr(TesseraTrackedDynamicResource) self = _tessera_watch_box_dup_object (data);

  if (self == NULL)
    return;
  lock_thread (self);
  _tessera_lock_file_cache_holder_exited (PRIV (self)->cache, pid, serial);
  unlock_thread (self);
  tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
}

/* ---------------------------------------------------------------------- */
/* informations.json */

static gboolean
apply_informations (gpointer owner, JsonNode *informations, GError **error)
{
  return KLASS (owner)->handle_information_change (owner, informations, error);
}

/* Applies informations.json when it changed. Thread lock held. */
static gboolean
check_informations_locked (TesseraTrackedDynamicResource *self)
{
  return _tessera_resource_informations_check (PRIV (self)->informations, resource_name (self),
                                               apply_informations, self);
}

/* ---------------------------------------------------------------------- */
/* Change detection */

/* Reads what the folder monitor has heard; informations.json is applied
 * at once. Thread lock held. */
static gboolean
drain_locked (TesseraTrackedDynamicResource *self)
{
  gboolean informations_changed = FALSE;
  gboolean relevant = _tessera_folder_monitor_drain (PRIV (self)->monitor, &informations_changed);

  if (informations_changed)
    relevant |= check_informations_locked (self);
  return relevant;
}

static gboolean
on_inotify_ready (gint fd, GIOCondition condition, gpointer data)
{
  g_autoptr(TesseraTrackedDynamicResource) self = _tessera_watch_box_dup_object (data);
  gboolean relevant;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  lock_thread (self);
  relevant = drain_locked (self);
  unlock_thread (self);
  if (relevant)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return G_SOURCE_CONTINUE;
}

static void
start_monitor (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  if (!_tessera_folder_monitor_start (priv->monitor, poller_context (self), on_inotify_ready,
                                      _tessera_watch_box_ref (priv->box), _tessera_watch_box_unref))
    {
      /* Polling is the primary path to wake waiters, with a short
       * interval, never below a first interval set on purpose
       * (TESSERA_POLL_INTERVAL). */
      _tessera_dynamic_resource_set_poll_interval_max (TESSERA_DYNAMIC_RESOURCE (self),
        MAX (MIN (TESSERA_POLL_INTERVAL_MAX_UNWATCHED, _tessera_poll_interval_max ()),
             _tessera_poll_interval_initial ()));
    }
}

/* ---------------------------------------------------------------------- */
/* Refreshing the cache */

/* The seed's `_update`, done incrementally. Thread lock and ipc.lock held. */
static void
refresh_locked (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  guint64 serial_before = _tessera_lock_file_cache_get_serial (priv->cache);
  gboolean informations_changed;

  drain_locked (self);
  informations_changed = check_informations_locked (self);
  if (!_tessera_lock_file_cache_refresh (priv->cache, priv->min_age))
    return;

  /* What this refresh found (a holder gone, a peer's release whose events
   * it consumed) other threads of this process have not seen. */
  if (informations_changed || _tessera_lock_file_cache_get_serial (priv->cache) != serial_before)
    priv->refresh_changed = TRUE;
}

/* ---------------------------------------------------------------------- */
/* GObject */

static void
tessera_tracked_dynamic_resource_dispose (GObject *object)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_mutex_lock (&priv->lock);
  if (priv->monitor != NULL)
    _tessera_folder_monitor_stop (priv->monitor);
  if (priv->holders != NULL)
    _tessera_holder_monitor_stop (priv->holders);
  g_mutex_unlock (&priv->lock);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->dispose (object);
}

static void
tessera_tracked_dynamic_resource_finalize (GObject *object)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_clear_pointer (&priv->cache, _tessera_lock_file_cache_free);
  g_clear_pointer (&priv->holders, _tessera_holder_monitor_free);
  g_clear_pointer (&priv->informations, _tessera_resource_informations_free);
  g_clear_pointer (&priv->monitor, _tessera_folder_monitor_free);
  _tessera_watch_box_unref (priv->box);
  g_free (priv->lock_folder);
  _tessera_lock_folder_free (priv->folder);
  g_mutex_clear (&priv->lock);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->finalize (object);
}

static void
tessera_tracked_dynamic_resource_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (TESSERA_TRACKED_DYNAMIC_RESOURCE (object));

  switch (prop_id)
    {
    case PROP_LOCK_FOLDER:
    case PROP_PATH: g_value_set_string (value, priv->lock_folder); break;
    case PROP_MIN_AGE: g_value_set_double (value, priv->min_age); break;
    case PROP_READ_ONLY: g_value_set_boolean (value, priv->read_only); break;
    case PROP_PATIENCE: g_value_set_double (value, priv->patience); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_tracked_dynamic_resource_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_LOCK_FOLDER:
    case PROP_PATH:
      /* Two names, one folder: the one not given arrives as NULL. */
      if (g_value_get_string (value) != NULL)
        {
          g_free (priv->lock_folder);
          priv->lock_folder = g_value_dup_string (value);
        }
      break;
    case PROP_MIN_AGE: tessera_tracked_dynamic_resource_set_min_age (self, g_value_get_double (value)); break;
    case PROP_READ_ONLY: priv->read_only = g_value_get_boolean (value); break;
    case PROP_PATIENCE:
      /* Read by acquires in any thread. */
      lock_thread (self);
      priv->patience = g_value_get_double (value);
      unlock_thread (self);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_tracked_dynamic_resource_refresh_state (TesseraDynamicResource *resource)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);

  /* Runs in the poller's thread, which never takes ipc.lock: mark the cache
   * for a full re-read and let the waiters do it under ipc.lock. */
  lock_thread (self);
  if (PRIV (self)->monitor != NULL)   /* NULL: not initialized */
    _tessera_folder_monitor_force_scan (PRIV (self)->monitor);
  unlock_thread (self);
  tessera_dynamic_resource_notify_changed (resource);
}

static void
real_noop_lock_file (TesseraTrackedDynamicResource *self, TesseraDynamicLockFile *lock_file)
{
}

static void
real_noop_dependency (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency)
{
}

static gboolean
real_do_acquire (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency, GError **error)
{
  return TRUE;
}

static JsonNode *
real_get_lock_file_information (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency)
{
  return NULL;
}

static gboolean
real_handle_information_change (TesseraTrackedDynamicResource *self, JsonNode *informations, GError **error)
{
  return TRUE;
}

static JsonNode *
real_initialize_informations (TesseraTrackedDynamicResource *self)
{
  return NULL;
}

static void
real_reset_state (TesseraTrackedDynamicResource *self)
{
}

static void
real_get_usage (TesseraTrackedDynamicResource *self, gint64 *capacity, gint64 *free_units)
{
  *capacity = *free_units = -1;
}

static void
tessera_tracked_dynamic_resource_class_init (TesseraTrackedDynamicResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tessera_tracked_dynamic_resource_dispose;
  object_class->finalize = tessera_tracked_dynamic_resource_finalize;
  object_class->get_property = tessera_tracked_dynamic_resource_get_property;
  object_class->set_property = tessera_tracked_dynamic_resource_set_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->refresh_state = tessera_tracked_dynamic_resource_refresh_state;

  klass->reset_state = real_reset_state;
  klass->account_lock_file = real_noop_lock_file;
  klass->unaccount_lock_file = real_noop_lock_file;
  klass->do_acquire = real_do_acquire;
  klass->do_release = real_noop_dependency;
  klass->get_lock_file_information = real_get_lock_file_information;
  klass->handle_information_change = real_handle_information_change;
  klass->initialize_informations = real_initialize_informations;
  klass->get_usage = real_get_usage;

  /**
   * TesseraTrackedDynamicResource:lock-folder:
   *
   * The folder holding informations.json, ipc.lock and jobs/. Created if
   * missing.
   */
  props[PROP_LOCK_FOLDER] = g_param_spec_string ("lock-folder", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:path:
   *
   * The lock folder under the name the key file, the command and the docs
   * use: the same as [property@Tessera.TrackedDynamicResource:lock-folder],
   * which is its older name.
   */
  props[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:min-age:
   *
   * Seconds a lock file without a process is given before it may be
   * removed as an orphan, counted from when this host first saw it as it
   * is (on the monotonic clock, shared by the host's processes through
   * `/var/tmp/tessera-UID/`), never from its modification time.
   */
  props[PROP_MIN_AGE] = g_param_spec_double ("min-age", NULL, NULL, 0, G_MAXDOUBLE, 30.0,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:read-only:
   *
   * Only look at the folder: create, change and remove nothing (no folder
   * or file made, no dead holder removed: such holders still count), take
   * ipc.lock shared when it can be opened and read without it otherwise
   * (a read-only mount, a pool of another group). What `tessera status`
   * uses. Acquiring, releasing and writing informations.json fail.
   */
  props[PROP_READ_ONLY] = g_param_spec_boolean ("read-only", NULL, NULL, FALSE,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:patience:
   *
   * Seconds a waiter takes only what is free. Past them, it reserves what
   * it needs (an entry in the folder's `queue/`): later requests take only
   * what is left, so a large request among a stream of small ones is
   * served about this long after it began to wait. A shorter wait never
   * keeps capacity idle. The default, 60, can be
   * changed with `TESSERA_PATIENCE`; experimaestro peers ignore
   * reservations. Read when a waiter first fails to acquire.
   */
  props[PROP_PATIENCE] = g_param_spec_double ("patience", NULL, NULL, 0, G_MAXDOUBLE, 60.0,
    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_tracked_dynamic_resource_init (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_mutex_init (&priv->lock);
  priv->min_age = 30.0;
  priv->patience = _tessera_patience_default ();
  priv->box = _tessera_watch_box_new (self);
}

static gboolean
tessera_tracked_dynamic_resource_initable_init_impl (GInitable     *initable,
                                                     GCancellable  *cancellable,
                                                     GError       **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (initable);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  gboolean usable;
  int fd;

  if (priv->lock_folder == NULL || *priv->lock_folder == '\0')
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A tracked resource needs a lock folder"));
      return FALSE;
    }
  if (!g_path_is_absolute (priv->lock_folder))
    {
      char *abs = g_canonicalize_filename (priv->lock_folder, NULL);
      g_free (priv->lock_folder);
      priv->lock_folder = abs;
    }
  priv->lock_file_type = KLASS (self)->lock_file_type;
  if (priv->lock_file_type == G_TYPE_INVALID)
    priv->lock_file_type = TESSERA_TYPE_DYNAMIC_LOCK_FILE;
  if (!g_type_is_a (priv->lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) ||
      G_TYPE_IS_ABSTRACT (priv->lock_file_type))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s is not a concrete lock file type"), g_type_name (priv->lock_file_type));
      return FALSE;
    }
  priv->folder = _tessera_lock_folder_new (priv->lock_folder);
  priv->informations = _tessera_resource_informations_new (priv->folder);
  priv->monitor = _tessera_folder_monitor_new (priv->folder);
  priv->holders = _tessera_holder_monitor_new (priv->folder, poller_context (self), on_holder_exited,
                                               _tessera_watch_box_ref (priv->box), _tessera_watch_box_ref,
                                               _tessera_watch_box_unref);
  priv->cache = _tessera_lock_file_cache_new (priv->folder, priv->monitor, priv->holders, priv->lock_file_type,
                                              priv->read_only, &cache_calls, self);
  /* A read-only view of a pool nobody set up yet is an empty pool. */
  if (!priv->read_only && !_tessera_lock_folder_create (priv->folder, error))
    return FALSE;

  start_monitor (self);

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  if (!_tessera_lock_folder_has_informations (priv->folder))
    {
      g_autoptr(JsonNode) initial = KLASS (self)->initialize_informations (self);
      /* Only looking: what the first writer would set up, kept in memory. */
      if (initial != NULL && priv->read_only)
        KLASS (self)->handle_information_change (self, initial, NULL);
      else if (initial != NULL && !_tessera_resource_informations_write (priv->informations, initial, error))
        {
          unlock_both (self, fd);
          return FALSE;
        }
    }
  KLASS (self)->reset_state (self);
  _tessera_folder_monitor_force_scan (priv->monitor);
  refresh_locked (self);
  /* A pool for a newer protocol: its holders follow rules we do not know.
   * Asked under the locks: the poller thread updates what it reads. */
  usable = _tessera_resource_informations_usable (priv->informations, error);
  unlock_both (self, fd);
  return usable;
}

static void
tessera_tracked_dynamic_resource_initable_init (GInitableIface *iface)
{
  iface->init = tessera_tracked_dynamic_resource_initable_init_impl;
}

/* ---------------------------------------------------------------------- */
/* Public API */

/**
 * tessera_tracked_dynamic_resource_get_lock_folder:
 * @self: a tracked resource
 *
 * Gets the absolute path of the lock folder.
 *
 * Returns: the absolute path of the lock folder
 */
const char *
tessera_tracked_dynamic_resource_get_lock_folder (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return PRIV (self)->lock_folder;
}

/**
 * tessera_tracked_dynamic_resource_dup_jobs_folder:
 * @self: a tracked resource
 *
 * Gets the path of `jobs/` in the lock folder.
 *
 * Returns: (transfer full): the path of `jobs/` in the lock folder
 */
char *
tessera_tracked_dynamic_resource_dup_jobs_folder (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return g_build_filename (PRIV (self)->lock_folder, "jobs", NULL);
}

/**
 * tessera_tracked_dynamic_resource_dup_informations_path:
 * @self: a tracked resource
 *
 * Gets the path of `informations.json`.
 *
 * Returns: (transfer full): the path of `informations.json`
 */
char *
tessera_tracked_dynamic_resource_dup_informations_path (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return g_build_filename (PRIV (self)->lock_folder, "informations.json", NULL);
}

static char *
lock_file_name_for (TesseraDynamicDependency *dependency, GError **error)
{
  TesseraJob *job = tessera_dynamic_dependency_get_target (dependency);

  g_return_val_if_fail (job != NULL, NULL);
  if (!_tessera_check_name (tessera_job_get_task_id (job), error) ||
      !_tessera_check_name (tessera_job_get_identifier (job), error))
    return NULL;
  return tessera_job_dup_lock_file_name (job);
}

/**
 * tessera_tracked_dynamic_resource_dup_lock_file_path:
 * @self: a tracked resource
 * @dependency: a dependency on @self
 *
 * Gets `jobs/{task_id}@{identifier}.json` for the dependency's
 * job, or %NULL when its names are not acceptable.
 *
 * Returns: (transfer full) (nullable): `jobs/{task_id}@{identifier}.json`
 *   for the dependency's job, or %NULL when its names are not acceptable
 */
char *
tessera_tracked_dynamic_resource_dup_lock_file_path (TesseraTrackedDynamicResource *self,
                                                     TesseraDynamicDependency      *dependency)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  name = lock_file_name_for (dependency, NULL);
  return name && PRIV (self)->folder ? _tessera_lock_folder_dup_job_path (PRIV (self)->folder, name) : NULL;
}

/**
 * tessera_tracked_dynamic_resource_get_min_age:
 * @self: a tracked resource
 *
 * Gets the value of [property@Tessera.TrackedDynamicResource:min-age].
 *
 * Returns: the value of [property@Tessera.TrackedDynamicResource:min-age]
 */
double
tessera_tracked_dynamic_resource_get_min_age (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  return PRIV (self)->min_age;
}

/**
 * tessera_tracked_dynamic_resource_set_min_age:
 * @self: a tracked resource
 * @min_age: seconds
 *
 * Sets [property@Tessera.TrackedDynamicResource:min-age].
 */
void
tessera_tracked_dynamic_resource_set_min_age (TesseraTrackedDynamicResource *self,
                                              double                         min_age)
{
  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  g_return_if_fail (min_age >= 0);

  if (PRIV (self)->min_age != min_age)
    {
      PRIV (self)->min_age = min_age;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_MIN_AGE]);
    }
}

/**
 * tessera_tracked_dynamic_resource_update:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Brings the cache up to date now, under ipc.lock, removing the lock files
 * of dead holders and old orphans on the way.
 *
 * Returns: %FALSE with @error set when ipc.lock cannot be taken
 */
gboolean
tessera_tracked_dynamic_resource_update (TesseraTrackedDynamicResource  *self,
                                         GError                        **error)
{
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  _tessera_folder_monitor_force_scan (PRIV (self)->monitor);
  refresh_locked (self);
  unlock_both (self, fd);
  return TRUE;
}

/* The seed's `acquire`: under the thread lock and ipc.lock, refreshes the
 * state, checks availability, takes the job lock, calls `do_acquire` and
 * writes the lock file. Does not wait: tessera_dynamic_dependency_lock()
 * does. FALSE with TESSERA_ERROR_UNAVAILABLE when the resource is full. */
gboolean
_tessera_tracked_dynamic_resource_acquire (TesseraTrackedDynamicResource  *self,
                                           TesseraDynamicDependency       *dependency,
                                           GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  g_autoptr(JsonNode) information = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(TesseraWaitQueueView) queue = NULL;
  TesseraDynamicLockFile *lock_file;
  TesseraJob *job;
  gboolean available;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (dependency), FALSE);
  g_return_val_if_fail (KLASS (self)->is_available != NULL, FALSE);
  priv = PRIV (self);
  g_return_val_if_fail (!priv->read_only, FALSE);

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  job = tessera_dynamic_dependency_get_target (dependency);

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  _tessera_pause_point ("acquire-locked");
  refresh_locked (self);
  if (_tessera_lock_file_cache_jobs_refused (priv->cache))
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("%s is not a folder (a symbolic link?): refusing to use it; remove it"),
                   _tessera_lock_folder_get_jobs_path (priv->folder));
      return FALSE;
    }
  queue = _tessera_wait_queue_read (priv->lock_folder, priv->lock_file_type, priv->min_age,
                                    priv->patience, dependency, name, tessera_job_get_job_uri (job));

  lock_file = _tessera_lock_file_cache_get_lock_file (priv->cache, name);
  if (lock_file != NULL && tessera_dynamic_lock_file_is_valid (lock_file))
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                   _("Job %s already holds %s"), name, resource_name (self));
      return FALSE;
    }
  /* Waiters before us whose patience is over count as holders here. */
  _tessera_wait_queue_account (self, queue, TRUE);
  available = _tessera_lock_file_cache_get_whole_holders (priv->cache) == 0 &&
              KLASS (self)->is_available (self, dependency, &local);
  _tessera_wait_queue_account (self, queue, FALSE);
  if (!available)
    {
      /* A holder of everything; or a type that broke is_available's rule. */
      g_warn_if_fail (local != NULL || _tessera_lock_file_cache_get_whole_holders (priv->cache) > 0);
      if (local == NULL)
        local = g_error_new (TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE,
                             _("Resource %s is not available"), resource_name (self));
      /* Only a full resource's waiter reserves its share. */
      _tessera_wait_queue_after_attempt (self, queue, dependency, FALSE,
                                         g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE));
      unlock_both (self, fd);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (!tessera_job_hold (job, error) || !KLASS (self)->do_acquire (self, dependency, error))
    {
      unlock_both (self, fd);
      return FALSE;
    }

  information = KLASS (self)->get_lock_file_information (self, dependency);
  if (!_tessera_lock_file_cache_create (priv->cache, name, job, information, error))
    {
      KLASS (self)->do_release (self, dependency);
      unlock_both (self, fd);
      return FALSE;
    }
  _tessera_wait_queue_after_attempt (self, queue, dependency, TRUE, FALSE);
  g_debug ("Acquired %s for %s", resource_name (self), name);
  unlock_both (self, fd);
  return TRUE;
}

/* The seed's `release`: calls `do_release`, deletes the lock file and
 * wakes waiters. A lock file that is already gone (the job process deleted
 * it, or a peer judged the holder dead) is not an error. */
gboolean
_tessera_tracked_dynamic_resource_release (TesseraTrackedDynamicResource  *self,
                                           TesseraDynamicDependency       *dependency,
                                           GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
  TesseraDynamicLockFile *cached;
  gint64 mtime_before;
  gboolean deleted;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  priv = PRIV (self);

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  refresh_locked (self);
  cached = _tessera_lock_file_cache_get_lock_file (priv->cache, name);
  if (cached == NULL)
    {
      g_debug ("Lock file %s of %s already released", name, resource_name (self));
      unlock_both (self, fd);
      return TRUE;
    }
  lock_file = g_object_ref (cached);
  mtime_before = _tessera_folder_monitor_jobs_mtime (priv->monitor);
  _tessera_lock_file_cache_remove (priv->cache, name);
  KLASS (self)->do_release (self, dependency);
  /* jobs/ swapped for a link since we acquired: our file is not there. */
  deleted = _tessera_lock_file_cache_jobs_refused (priv->cache) ||
            _tessera_lock_folder_remove_own_job (priv->folder, name, error);
  _tessera_folder_monitor_note_own_change (priv->monitor, mtime_before);
  unlock_both (self, fd);
  tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return deleted;
}

/* Writes @process into the dependency's lock file (and `<job_uri>.pid`),
 * so that any peer reclaims the holding as soon as @process ends: the
 * default `job_started` of a dynamic dependency lock. FALSE with @error
 * when the lock file is gone or cannot be written. */
gboolean
_tessera_tracked_dynamic_resource_record_process (TesseraTrackedDynamicResource  *self,
                                                  TesseraDynamicDependency       *dependency,
                                                  TesseraProcess                 *process,
                                                  GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (TESSERA_IS_PROCESS (process), FALSE);
  priv = PRIV (self);
  g_return_val_if_fail (!priv->read_only, FALSE);

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  if (!tessera_job_set_process (tessera_dynamic_dependency_get_target (dependency), process, error))
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  refresh_locked (self);
  if (_tessera_lock_file_cache_get_lock_file (priv->cache, name) == NULL ||
      _tessera_lock_file_cache_jobs_refused (priv->cache))
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING,
                   _("Lock file %s of %s is missing"), name, resource_name (self));
      return FALSE;
    }
  if (!_tessera_lock_file_cache_set_process (priv->cache, name, process, priv->min_age, error))
    {
      unlock_both (self, fd);
      return FALSE;
    }
  unlock_both (self, fd);
  return TRUE;
}

/**
 * tessera_tracked_dynamic_resource_get_usage:
 * @self: a tracked resource
 * @capacity: (out): units in all, or -1 when not known
 * @free_units: (out): units free now, or -1 when not known
 *
 * The state as last seen, in the type's own unit. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 */
void
tessera_tracked_dynamic_resource_get_usage (TesseraTrackedDynamicResource *self,
                                            gint64                        *capacity,
                                            gint64                        *free_units)
{
  gint64 c = -1, f = -1;

  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  lock_thread (self);
  KLASS (self)->get_usage (self, &c, &f);
  if (_tessera_lock_file_cache_get_whole_holders (PRIV (self)->cache) > 0 && f > 0)
    f = 0;   /* a holder whose amount cannot be read holds everything */
  unlock_thread (self);
  if (capacity != NULL)
    *capacity = c;
  if (free_units != NULL)
    *free_units = f;
}

/**
 * tessera_tracked_dynamic_resource_list_lock_files:
 * @self: a tracked resource
 *
 * The valid lock files as last seen. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 *
 * Returns: (transfer container) (element-type TesseraDynamicLockFile): the
 *   lock files that count against the capacity
 */
GPtrArray *
tessera_tracked_dynamic_resource_list_lock_files (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  GPtrArray *result;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self),
                        g_ptr_array_new_with_free_func (g_object_unref));
  priv = PRIV (self);
  g_mutex_lock (&priv->lock);
  result = _tessera_lock_file_cache_list (priv->cache);
  g_mutex_unlock (&priv->lock);
  return result;
}

/**
 * tessera_tracked_dynamic_resource_read_informations:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Gets the parsed content of informations.json, or %NULL
 * with %TESSERA_ERROR_INVALID_INFORMATION.
 *
 * Returns: (transfer full): the parsed content of informations.json, or
 *   %NULL with %TESSERA_ERROR_INVALID_INFORMATION
 */
JsonNode *
tessera_tracked_dynamic_resource_read_informations (TesseraTrackedDynamicResource  *self,
                                                    GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return _tessera_resource_informations_read (PRIV (self)->informations, NULL, error);
}

/**
 * tessera_tracked_dynamic_resource_write_informations:
 * @self: a tracked resource
 * @informations: the new resource-level data
 * @error: return location for a #GError
 *
 * Replaces informations.json atomically under ipc.lock, after checking
 * that this resource's class accepts it. Every process using the folder
 * applies it; waiters here are woken at once.
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_tracked_dynamic_resource_write_informations (TesseraTrackedDynamicResource  *self,
                                                     JsonNode                       *informations,
                                                     GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  gboolean ok;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (informations != NULL, FALSE);
  priv = PRIV (self);
  g_return_val_if_fail (!priv->read_only, FALSE);

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  /* Apply first: a shape the class rejects never reaches the disk. */
  ok = KLASS (self)->handle_information_change (self, informations, error);
  if (ok)
    ok = _tessera_resource_informations_write (priv->informations, informations, error);
  _tessera_resource_informations_forget (priv->informations);
  refresh_locked (self);
  unlock_both (self, fd);
  if (ok)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return ok;
}

/**
 * tessera_tracked_dynamic_resource_remove_holder:
 * @self: a tracked resource
 * @job: the holder, as `tessera status` shows it: `task_id@identifier`,
 *   the name of its lock file in `jobs/` without ".json"
 * @error: return location for a #GError
 *
 * Removes @job's lock file now, under ipc.lock, whatever its holder's
 * liveness: its capacity is handed out again at once. This is for a
 * holder Tessera cannot judge (a host that is gone for good, a process
 * type nothing here understands): if it still runs, it keeps running
 * with its capacity given to someone else. A `tessera run` that holds it
 * notices and says so.
 *
 * @job is only ever a name in this resource's `jobs/`: one with a `/`,
 * `.` or `..`, or that does not name a lock file there, is refused.
 *
 * Returns: %TRUE when the lock file was removed; %FALSE with
 *   %TESSERA_ERROR_INVALID_NAME for a malformed @job,
 *   %TESSERA_ERROR_LOCK_FILE_MISSING when @job holds nothing here, or
 *   another error (the resource is read-only, an I/O error)
 */
gboolean
tessera_tracked_dynamic_resource_remove_holder (TesseraTrackedDynamicResource  *self,
                                                const char                     *job,
                                                GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  gboolean ok;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (job != NULL, FALSE);
  priv = PRIV (self);
  if (*job == '\0' || strchr (job, '/') != NULL || g_str_equal (job, ".") || g_str_equal (job, "..") ||
      g_str_has_suffix (job, ".json") || strlen (job) > 256 || !g_utf8_validate (job, -1, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("“%s” is not a holder's name (task@identifier, as “tessera status” shows it)"), job);
      return FALSE;
    }
  if (priv->read_only)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), resource_name (self));
      return FALSE;
    }

  name = g_strconcat (job, ".json", NULL);
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  _tessera_folder_monitor_force_scan (priv->monitor);
  refresh_locked (self);
  ok = _tessera_lock_file_cache_remove_holder (priv->cache, name, error);
  if (ok)
    priv->refresh_changed = TRUE;   /* unlock_both wakes this process's waiters */
  unlock_both (self, fd);
  return ok;
}
