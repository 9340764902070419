/* tessera-tracked-dynamic-resource.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The resource is the GObject, its vfunc dispatch, its pool view (the
 * store its pool lives in behind the two locks, opened at init), the
 * acquire / release / record-process protocol, its usage and what it
 * tells of its store (location, leases, side entries). Calls go one way
 * only (A -> B: A calls B, B never calls A):
 *
 *   tracked resource -> pool store (the folder store: lock file cache,
 *                       folder monitor, holder monitor, resource
 *                       informations), wait queue
 *
 * Upward only through the type's class, which the store calls (account,
 * unaccount, apply informations), the store's owner calls (the thread
 * lock, the reclaims' audit: TesseraPoolStoreOwner) and the
 * poller-thread sources the store owns.
 * docs/design.md draws the whole map. */
#include "tessera-audit-private.h"
#include "tessera-dynamic-resource-private.h"
#include "tessera-environment-private.h"
#include "tessera-host-lease-private.h"
#include "tessera-job-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-tracked-dynamic-resource-private.h"
#include "tessera-wait-queue-private.h"

#include <sched.h>
#include <string.h>

typedef struct
{
  char *lock_folder;
  GType lock_file_type;
  double min_age;
  double patience;            /* seconds a waiter takes what is free before it reserves */
  double host_lease;          /* seconds; 0: no host lease */
  gboolean read_only;         /* only look: create, change and remove nothing */
  char *audit;                /* "auto", "on" or "off", as configured */
  gboolean audited;           /* grants, releases and reclaims are logged */

  TesseraPoolStoreSettings store;   /* where the pool lives, read at init */

  /* What it sees of its pool (its pool view): the store, made at init
   * (the folder store until the settings choose another at open),
   * behind the two locks every decision takes, in this order: the
   * store's exclusion between processes (ipc.lock for a folder), then
   * the thread lock. */
  TesseraPoolStore *pool_store;
  GMutex lock;                /* the seed's thread lock */
  gboolean refresh_changed;   /* a refresh changed it: wake this process's waiters */
  gboolean opened;

  GMutex reclaims_lock;       /* guards reclaims only, never held while logging */
  GPtrArray *reclaims;        /* of Reclaim: made under the locks, logged once they are let go */
} TesseraTrackedDynamicResourcePrivate;

/* A reclaim to log. */
typedef struct
{
  char *name;
  TesseraDynamicLockFile *lock_file;
  char *reason;
  gboolean left;
} Reclaim;

static void
reclaim_free (gpointer data)
{
  Reclaim *reclaim = data;

  g_free (reclaim->name);
  g_clear_object (&reclaim->lock_file);
  g_free (reclaim->reason);
  g_free (reclaim);
}

enum {
  PROP_0,
  PROP_LOCK_FOLDER,
  PROP_PATH,
  PROP_MIN_AGE,
  PROP_READ_ONLY,
  PROP_PATIENCE,
  PROP_HOST_LEASE,
  PROP_AUDIT,
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

/* What a resource opened only to look answers a change: an error the
 * caller can show (an acquire, a holder's process record, informations.json). */
static gboolean
refuse_read_only (TesseraTrackedDynamicResource *self, GError **error)
{
  if (!PRIV (self)->read_only)
    return FALSE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), resource_name (self));
  return TRUE;
}

#define STORE(o) (PRIV (o)->pool_store)
#define STORE_CLASS(o) (STORE (o)->klass)
/* The holders the store has read, and what they are called on. */
#define HOLDERS(o) (STORE (o)->klass->holders)
#define TABLE(o) (STORE (o)->holder_table)

/* ---------------------------------------------------------------------- */
/* The pool view: the store behind the two locks */

/* The thread lock alone: what the poller's thread takes. Property
 * notifications raised under it are held back until it is released. */
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
  /* What waited for the locks to go: the audit lines of the reclaims
   * made under them. */
  _tessera_tracked_dynamic_resource_log_reclaims (self);
}

/* What the store calls in the resource that owns it: the thread lock
 * (from the poller's thread), the audit of reclaims. */
static const TesseraPoolStoreOwner pool_owner = {
  .lock_thread = lock_thread,
  .unlock_thread = unlock_thread,
  .audit_reclaim = _tessera_tracked_dynamic_resource_audit_reclaim,
};

/* The store's exclusion then the thread lock ("both"), in that order,
 * always: a peer that keeps ipc.lock must not keep the poller's thread
 * (which needs only the thread lock) from serving this process's other
 * resources. The token to give back, TESSERA_POOL_STORE_NO_LOCK, or -1
 * with @error. */
static int
lock_both (TesseraTrackedDynamicResource *self, GError **error)
{
  int fd = STORE_CLASS (self)->begin (STORE (self), error);

  if (fd >= 0)
    lock_thread (self);
  return fd;
}

/* Wakes this process's waiters when a refresh under the locks changed
 * something. */
static void
unlock_both (TesseraTrackedDynamicResource *self, int fd)
{
  gboolean changed = PRIV (self)->refresh_changed;

  PRIV (self)->refresh_changed = FALSE;
  STORE_CLASS (self)->end (STORE (self), fd);
  unlock_thread (self);
  if (changed)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
}

/* Makes the writes since the store's begin one decision; a store
 * without commit (the folder: every write was made under ipc.lock) made
 * each one already. Both locks held. */
static gboolean
commit_locked (TesseraTrackedDynamicResource *self, GError **error)
{
  return STORE_CLASS (self)->commit == NULL || STORE_CLASS (self)->commit (STORE (self), error);
}

/* The seed's `_update`, incremental; every holder when @full. Both locks
 * held. What it found (a holder gone, a peer's release whose events it
 * consumed) other threads of this process have not seen. */
static void
refresh_locked (TesseraTrackedDynamicResource *self, gboolean full)
{
  if (STORE_CLASS (self)->refresh (STORE (self), full))
    PRIV (self)->refresh_changed = TRUE;
}

/* The store the settings name, in place of the folder store made at init
 * (not opened yet: nothing was touched). */
static gboolean
choose_store (TesseraTrackedDynamicResource *self, GError **error)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  const TesseraPoolStoreClass *klass = priv->pool_store->klass;
  TesseraPoolStore *store, *old;

  if (_tessera_pool_store_settings_elsewhere (&priv->store))
    klass = _tessera_pool_store_lookup (priv->store.store, error);
  if (klass == NULL || !_tessera_pool_store_settings_check (&priv->store, klass, error))
    return FALSE;
  if (klass == priv->pool_store->klass)
    return TRUE;
  store = klass->create (self, &pool_owner, &priv->store, error);
  if (store == NULL)
    return FALSE;
  /* Under the thread lock: the min-age setter writes the store's. */
  g_mutex_lock (&priv->lock);
  old = priv->pool_store;
  store->owner = old->owner;
  store->owner_calls = old->owner_calls;
  store->owner_class = old->owner_class;
  store->lock_file_type = old->lock_file_type;
  store->read_only = old->read_only;
  store->min_age = old->min_age;
  store->host_lease = old->host_lease;
  store->name = old->name;
  priv->pool_store = store;
  g_mutex_unlock (&priv->lock);
  old->klass->free (old);
  return TRUE;
}

/* Sets up the pool (unless read-only) in the store the settings name
 * (the lock folder by default) and its informations, starts watching
 * it, reads every holder, and refuses a pool of a newer protocol. The
 * lock-file type, read_only, min_age, host_lease and the name (else the
 * folder) for messages are the store's from then on (TesseraPoolStore):
 * no call is given them again. */
static gboolean
open_pool (TesseraTrackedDynamicResource *self, GError **error)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  gboolean usable;
  int fd;

  g_return_val_if_fail (!priv->opened, FALSE);
  if (!g_type_is_a (priv->lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) ||
      G_TYPE_IS_ABSTRACT (priv->lock_file_type))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s is not a concrete lock file type"), g_type_name (priv->lock_file_type));
      return FALSE;
    }
  /* The store's from now on, whichever it is. Under the thread lock:
   * from opened on, the min-age setter writes the store's min_age, in
   * any thread, and a value it set meanwhile must not be lost. */
  g_mutex_lock (&priv->lock);
  priv->opened = TRUE;
  priv->pool_store->owner = self;
  priv->pool_store->owner_calls = &pool_owner;
  priv->pool_store->owner_class = KLASS (self);
  priv->pool_store->lock_file_type = priv->lock_file_type;
  priv->pool_store->read_only = priv->read_only;
  priv->pool_store->min_age = priv->min_age;
  priv->pool_store->host_lease = priv->host_lease;
  priv->pool_store->name = tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self));
  if (priv->pool_store->name == NULL)
    priv->pool_store->name = priv->lock_folder;
  g_mutex_unlock (&priv->lock);
  if (!choose_store (self, error) || !STORE_CLASS (self)->open (STORE (self), priv->lock_folder, error))
    return FALSE;
  /* Polling would only read the pool again for nothing; a first interval
   * set on purpose still polls, and so does a read-only view (`tessera
   * watch`), which the store does not watch. */
  if (STORE_CLASS (self)->wakes_waiters && !priv->read_only && g_getenv ("TESSERA_POLL_INTERVAL") == NULL)
    _tessera_dynamic_resource_set_polling (TESSERA_DYNAMIC_RESOURCE (self), FALSE);
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  usable = STORE_CLASS (self)->load (STORE (self), error);
  unlock_both (self, fd);
  return usable;
}

/* ---------------------------------------------------------------------- */
/* GObject */

static void
tessera_tracked_dynamic_resource_dispose (GObject *object)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (TESSERA_TRACKED_DYNAMIC_RESOURCE (object));

  /* The store's sources in the poller's thread. */
  g_mutex_lock (&priv->lock);
  priv->pool_store->klass->stop (priv->pool_store);
  g_mutex_unlock (&priv->lock);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->dispose (object);
}

static void
tessera_tracked_dynamic_resource_finalize (GObject *object)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  priv->pool_store->klass->free (priv->pool_store);
  priv->pool_store = NULL;
  g_mutex_clear (&priv->lock);
  _tessera_tracked_dynamic_resource_log_reclaims (self);
  g_ptr_array_unref (priv->reclaims);
  g_mutex_clear (&priv->reclaims_lock);
  g_free (priv->lock_folder);
  g_free (priv->audit);
  _tessera_pool_store_settings_clear (&priv->store);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->finalize (object);
}

/* Once open, the pool's recorded lease wins (the store's proof knows it). */
static double
get_host_lease (TesseraTrackedDynamicResourcePrivate *priv)
{
  TesseraPoolStore *store;

  if (priv->pool_store == NULL || !priv->opened)
    return priv->host_lease;
  store = priv->pool_store;
  return store->proof != NULL ? store->klass->liveness->get_lease (store->proof) : store->host_lease;
}

static void
tessera_tracked_dynamic_resource_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (TESSERA_TRACKED_DYNAMIC_RESOURCE (object));

  switch (prop_id)
    {
    case PROP_LOCK_FOLDER:
    case PROP_PATH: g_value_set_string (value, priv->lock_folder); break;
    case PROP_MIN_AGE:
      g_value_set_double (value, tessera_tracked_dynamic_resource_get_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (object)));
      break;
    case PROP_READ_ONLY: g_value_set_boolean (value, priv->read_only); break;
    case PROP_AUDIT: g_value_set_string (value, priv->audit); break;
    case PROP_PATIENCE: g_value_set_double (value, priv->patience); break;
    case PROP_HOST_LEASE:
      g_value_set_double (value, get_host_lease (priv));
      break;
    default: _tessera_pool_store_settings_get (&priv->store, prop_id - N_PROPS, value);
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
    case PROP_AUDIT:
      g_free (priv->audit);
      priv->audit = g_value_dup_string (value);
      break;
    case PROP_PATIENCE:
      /* Read by acquires in any thread. */
      lock_thread (self);
      priv->patience = g_value_get_double (value);
      unlock_thread (self);
      break;
    case PROP_HOST_LEASE: priv->host_lease = g_value_get_double (value); break;
    default: _tessera_pool_store_settings_set (&priv->store, prop_id - N_PROPS, value);
    }
}

static void
tessera_tracked_dynamic_resource_refresh_state (TesseraDynamicResource *resource)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);

  /* Runs in the poller's thread, which never takes ipc.lock: mark the cache
   * for a full re-read and let the waiters do it under ipc.lock. */
  lock_thread (self);
  STORE_CLASS (self)->force_scan (STORE (self));
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
   * missing. A pool in another store (`store=etcd`) needs none.
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
  /**
   * TesseraTrackedDynamicResource:host-lease:
   *
   * Seconds of the pool's host lease; 0 (the default): no lease. On a
   * lease pool every holding process renews its host's heartbeat in
   * `hosts/` eight times per lease; a holder on another host whose heartbeat
   * this host has seen unchanged for the lease is dead, even if its job
   * lock looks held (NFSv3). From 2 to 86400; on NFS more than twice its
   * attribute cache time (120 s is safe). A host frozen longer than the
   * lease loses its holdings. The pool records the first one set
   * (`"host_lease"`, informations.json): once open, that one wins (read here).
   */
  props[PROP_HOST_LEASE] = g_param_spec_double ("host-lease", NULL, NULL, 0, TESSERA_HOST_LEASE_MAX, 0,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:audit:
   *
   * Whether grants, releases and reclaims of dead holders are logged,
   * one line each, in the `Tessera-Audit` log domain (at
   * %G_LOG_LEVEL_INFO, with structured fields): "on", "off", or "auto"
   * (the default, %NULL too): on for a pool shared by a group (the folder
   * holding the lock folder is group-writable and not everyone's, or the
   * lock folder is a setgid group-writable folder, as `tessera init
   * --group` makes it) and for a pool in another store, off for a private
   * one. "off" is honoured only for root and the owner of the lock
   * folder: another user's (a member of a group's pool) is "auto", the
   * pool's owner decides. The `tessera` command sends these lines to the
   * journal, or to syslog. Any other value fails the initialization
   * (%TESSERA_ERROR_INVALID_CONFIGURATION).
   */
  props[PROP_AUDIT] = g_param_spec_string ("audit", NULL, NULL, "auto",
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
  _tessera_pool_store_settings_install (object_class, N_PROPS);
}

/* The acquire protocol (below), which the dependency lock's defaults
 * reach through the base resource: the lock names no tracked resource. */
static gboolean grant_acquire        (TesseraDynamicResource    *resource,
                                      TesseraDynamicDependency  *dependency,
                                      gint64                    *token,
                                      GError                   **error);
static gboolean grant_release        (TesseraDynamicResource    *resource,
                                      TesseraDynamicDependency  *dependency,
                                      GError                   **error);
static gboolean grant_record_process (TesseraDynamicResource    *resource,
                                      TesseraDynamicDependency  *dependency,
                                      TesseraProcess            *process,
                                      GError                   **error);

static const TesseraGrantFuncs grant_funcs = {
  .acquire = grant_acquire,
  .release = grant_release,
  .record_process = grant_record_process,
};

static void
tessera_tracked_dynamic_resource_init (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  _tessera_dynamic_resource_set_grant (TESSERA_DYNAMIC_RESOURCE (self), &grant_funcs);

  g_mutex_init (&priv->reclaims_lock);
  priv->reclaims = g_ptr_array_new_with_free_func (reclaim_free);
  g_mutex_init (&priv->lock);
  /* Its settings are not set yet: the folder store reads none. */
  priv->pool_store = _tessera_pool_store_folder_new (self, &pool_owner, NULL, NULL);
  priv->min_age = 30.0;
  priv->patience = _tessera_patience_default ();
}

static gboolean
tessera_tracked_dynamic_resource_initable_init_impl (GInitable     *initable,
                                                     GCancellable  *cancellable,
                                                     GError       **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (initable);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  if (KLASS (self)->check_settings != NULL && !KLASS (self)->check_settings (self, error))
    return FALSE;
  if (!_tessera_pool_store_settings_check_folder (&priv->store, &priv->lock_folder, error))
    return FALSE;
  /* What the dependencies and the queue ask of where the pool lives. */
  if (!_tessera_pool_store_settings_elsewhere (&priv->store))
    _tessera_dynamic_resource_set_pool_folder (TESSERA_DYNAMIC_RESOURCE (self), priv->lock_folder);
  if (priv->audit != NULL && !g_str_equal (priv->audit, "auto") && !g_str_equal (priv->audit, "on") &&
      !g_str_equal (priv->audit, "off"))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s: audit is “%s”: it is auto, on or off"), resource_name (self), priv->audit);
      return FALSE;
    }
  priv->lock_file_type = KLASS (self)->lock_file_type;
  if (priv->lock_file_type == G_TYPE_INVALID)
    priv->lock_file_type = TESSERA_TYPE_DYNAMIC_LOCK_FILE;
  if (!open_pool (self, error))
    return FALSE;
  /* Decided once the folder is there (open_pool makes it). A member's
   * own configuration cannot switch off the audit of another's pool:
   * her "off" is "auto" there. */
  {
    const char *folder = _tessera_pool_store_settings_elsewhere (&priv->store) ? NULL : priv->lock_folder;

    priv->audited = g_strcmp0 (priv->audit, "on") == 0 ||
                    (!(g_strcmp0 (priv->audit, "off") == 0 && _tessera_audit_may_switch_off (folder)) &&
                     _tessera_audit_pool_is_shared (folder));
  }
  return TRUE;
}

static void
tessera_tracked_dynamic_resource_initable_init (GInitableIface *iface)
{
  iface->init = tessera_tracked_dynamic_resource_initable_init_impl;
}

/* ---------------------------------------------------------------------- */
/* Public API */

/**
 * tessera_tracked_dynamic_resource_prepare_pool:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Makes what the resource's type keeps in its pool's folder beyond what
 * every pool has (see [vfunc@Tessera.TrackedDynamicResource.prepare_pool]),
 * such as the mutex's `intents/`: what `tessera init` calls, so that the
 * pool's owner, not a member's first use, makes and owns it.
 *
 * Returns: %TRUE when the parts are there (or the type has none);
 *   %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_prepare_pool (TesseraTrackedDynamicResource  *self,
                                               GError                        **error)
{
  TesseraTrackedDynamicResourceClass *klass;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  klass = TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (self);
  return klass->prepare_pool == NULL || klass->prepare_pool (self, error);
}

/**
 * tessera_tracked_dynamic_resource_dup_hosts:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * The hosts that use the pool, as the marks and heartbeats in its
 * folder's `hosts/` say (what `tessera hosts` shows, as sinfo shows a
 * cluster's nodes): an array of objects, one per host id, with "host_id",
 * "host" (its name, or null), "this_host", "uids" (the users whose files
 * are there), "locks_cross" (%FALSE when any file of the host says its
 * locks stay local or cannot be trusted), "distrust" (why a file cannot
 * be trusted, or null), "heartbeat_age" (seconds since its newest file
 * was written, or null), "version", "build" (`git describe` of the
 * build, as `tessera --version` says it) and "protocol" (the Tessera it
 * runs, each null from one older than that). An empty array for a pool in
 * another store, or one without `hosts/` yet.
 *
 * Returns: (transfer full) (nullable): a JSON array, or %NULL with @error
 *   set when `hosts/` cannot be read
 */
JsonNode *
tessera_tracked_dynamic_resource_dup_hosts (TesseraTrackedDynamicResource  *self,
                                            GError                        **error)
{
  const char *folder;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  folder = tessera_tracked_dynamic_resource_get_lock_folder (self);
  if (folder == NULL || !_tessera_dynamic_resource_in_a_folder (TESSERA_DYNAMIC_RESOURCE (self)))
    {
      JsonNode *empty = json_node_new (JSON_NODE_ARRAY);

      json_node_take_array (empty, json_array_new ());
      return empty;
    }
  return _tessera_host_lease_list_hosts (folder, error);
}

/**
 * tessera_tracked_dynamic_resource_get_lock_folder:
 * @self: a tracked resource
 *
 * Gets the absolute path of the lock folder.
 *
 * Returns: (nullable): the absolute path of the lock folder; %NULL for a
 *   pool in another store (`store=etcd`) configured without one
 */
const char *
tessera_tracked_dynamic_resource_get_lock_folder (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return PRIV (self)->lock_folder;
}

#define lock_file_name_for(dependency, error) \
  _tessera_job_dup_checked_lock_file_name (tessera_dynamic_dependency_get_target (dependency), (error))

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
  return name && PRIV (self)->opened
    ? STORE_CLASS (self)->dup_holder_location (STORE (self), name) : NULL;
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
  double min_age;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  /* Written under the thread lock, maybe by another thread. */
  g_mutex_lock (&PRIV (self)->lock);
  min_age = PRIV (self)->min_age;
  g_mutex_unlock (&PRIV (self)->lock);
  return min_age;
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
  gboolean changed;

  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  g_return_if_fail (min_age >= 0);

  /* The store's once open (open_pool gives it then, under the thread
   * lock): what judges holders and waiters from the next decision on.
   * Those read it under the thread lock (the cache's refresh, the
   * queue's read), maybe in another thread, and an open in another
   * thread copies ours: so both are written under it, and whether the
   * resource is open is asked under it. */
  g_mutex_lock (&PRIV (self)->lock);
  changed = PRIV (self)->min_age != min_age;
  PRIV (self)->min_age = min_age;
  if (PRIV (self)->pool_store != NULL && PRIV (self)->opened)
    STORE (self)->min_age = min_age;
  g_mutex_unlock (&PRIV (self)->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_MIN_AGE]);
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
  refresh_locked (self, TRUE);
  STORE_CLASS (self)->judge_all (STORE (self));   /* every verdict, dead holders removed */
  unlock_both (self, fd);
  return TRUE;
}

/* One decision of acquire, both locks held: refreshes the state, checks
 * availability, takes the job lock, calls `do_acquire` and writes the
 * lock file; @token: the grant's fencing token. %G_IO_ERROR_BUSY when
 * the store refused the write because a peer changed the pool since it
 * was read (etcd): nothing was taken. */
static gboolean
decide_locked (TesseraTrackedDynamicResource  *self,
               TesseraDynamicDependency       *dependency,
               const char                     *name,
               gint64                         *token,
               GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  TesseraJob *job = tessera_dynamic_dependency_get_target (dependency);
  g_autoptr(JsonNode) information = NULL;
  g_autoptr(TesseraWaitQueueView) queue = NULL;
  TesseraDynamicLockFile *lock_file;

  refresh_locked (self, FALSE);
  if (!HOLDERS (self)->check_usable (TABLE (self), error))
    return FALSE;
  queue = _tessera_wait_queue_read (self, KLASS (self), priv->patience, STORE (self), dependency, name,
                                    tessera_job_get_job_uri (job));

  lock_file = HOLDERS (self)->get (TABLE (self), name);
  if (lock_file != NULL && tessera_dynamic_lock_file_is_valid (lock_file))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                   _("Job %s already holds %s: a job holds a resource once (ask for more in one request)"),
                   name, resource_name (self));
      return FALSE;
    }
  if (!_tessera_wait_queue_decide (queue, dependency, resource_name (self), error))
    return FALSE;
  if (!tessera_job_hold (job, error) || !STORE (self)->klass->liveness->renew (STORE (self)->proof, error) ||
      !KLASS (self)->do_acquire (self, dependency, error))
    return FALSE;

  information = KLASS (self)->get_lock_file_information (self, dependency);
  if (!STORE_CLASS (self)->put_holder (STORE (self), name, job, information, error) ||
      !commit_locked (self, error))
    {
      KLASS (self)->do_release (self, dependency);
      return FALSE;
    }
  *token = STORE_CLASS (self)->get_token (STORE (self));
  _tessera_wait_queue_after_attempt (queue, dependency, TRUE, FALSE);
  STORE (self)->klass->liveness->hold (STORE (self)->proof);
  g_debug ("Acquired %s for %s", resource_name (self), name);
  return TRUE;
}

/* Decisions a store refused at commit (a peer's change came first) that
 * are made again at once, each on a fresh read, before the acquire says
 * "unavailable" (a waiter then waits for the next change). Each refusal
 * means a peer's decision went through. */
#define DECISIONS_MAX 16

/* The seed's `acquire`: decides under the thread lock and the store's
 * exclusion (ipc.lock), again when the store refused the decision. Does
 * not wait: tessera_dynamic_dependency_lock() does. FALSE with
 * TESSERA_ERROR_UNAVAILABLE when the resource is full. */
static gboolean
grant_acquire (TesseraDynamicResource    *resource,
               TesseraDynamicDependency  *dependency,
               gint64                    *token,
               GError                   **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
  g_autofree char *name = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(TesseraDynamicLockFile) granted = NULL;
  gboolean ok = FALSE;
  int fd;

  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (dependency), FALSE);
  g_return_val_if_fail (KLASS (self)->is_available != NULL, FALSE);

  *token = 0;
  if (refuse_read_only (self, error))
    return FALSE;
  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  _tessera_pause_point ("acquire-locked");
  for (guint i = 0; !ok && (i == 0 || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_BUSY)); i++)
    {
      g_clear_error (&local);
      if (i == DECISIONS_MAX)
        {
          g_set_error (&local, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, _("Resource %s is not available"),
                       resource_name (self));
          break;
        }
      ok = decide_locked (self, dependency, name, token, &local);
    }
  if (ok && PRIV (self)->audited && HOLDERS (self)->get (TABLE (self), name) != NULL)
    granted = g_object_ref (HOLDERS (self)->get (TABLE (self), name));
  unlock_both (self, fd);
  /* Logged once no lock is held: a slow log (syslog blocks while its
   * reader's queue is full) must not hold the pool. */
  if (granted != NULL)
    _tessera_audit_log ("grant", resource_name (self), name, granted, NULL);
  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local));
  return ok;
}

/* The seed's `release`: calls `do_release`, deletes the lock file and
 * wakes waiters. A lock file that is already gone (the job process deleted
 * it, or a peer judged the holder dead) is not an error. */
static gboolean
grant_release (TesseraDynamicResource    *resource,
               TesseraDynamicDependency  *dependency,
               GError                   **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
  g_autofree char *name = NULL;
  g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
  TesseraDynamicLockFile *cached;
  gboolean deleted;
  int fd;

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  /* Once per acquire that succeeded, even if its lock file is gone since. */
  STORE (self)->klass->liveness->unhold (STORE (self)->proof);
  refresh_locked (self, FALSE);
  cached = HOLDERS (self)->get (TABLE (self), name);
  if (cached == NULL)
    {
      g_debug ("Lock file %s of %s already released", name, resource_name (self));
      unlock_both (self, fd);
      return TRUE;
    }
  lock_file = g_object_ref (cached);
  HOLDERS (self)->forget (TABLE (self), name);
  KLASS (self)->do_release (self, dependency);
  deleted = HOLDERS (self)->delete_own (TABLE (self), name, error) &&
            commit_locked (self, error);
  unlock_both (self, fd);
  if (deleted && PRIV (self)->audited)
    _tessera_audit_log ("release", resource_name (self), name, lock_file, NULL);
  tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  /* Let a waiter woken by this release run before our next acquire takes
   * the unit back (on a busy machine it would, again and again). */
  sched_yield ();
  return deleted;
}

/* Writes @process into the dependency's lock file (and `<job_uri>.pid`),
 * so that any peer reclaims the holding as soon as @process ends: the
 * default `job_started` of a dynamic dependency lock. FALSE with @error
 * when the lock file is gone or cannot be written. */
static gboolean
grant_record_process (TesseraDynamicResource    *resource,
                      TesseraDynamicDependency  *dependency,
                      TesseraProcess            *process,
                      GError                   **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
  g_autofree char *name = NULL;
  TesseraDynamicLockFile *cached;
  gboolean named;
  int fd;

  g_return_val_if_fail (TESSERA_IS_PROCESS (process), FALSE);
  if (refuse_read_only (self, error))
    return FALSE;
  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  if (!tessera_job_set_process (tessera_dynamic_dependency_get_target (dependency), process, error))
    return FALSE;
  /* Written with this very process already (`tessera run` names it
   * before it acquires): no second ipc.lock cycle. */
  lock_thread (self);
  cached = HOLDERS (self)->get (TABLE (self), name);
  named = cached != NULL && tessera_dynamic_lock_file_get_process (cached) == process;
  unlock_thread (self);
  if (named)
    return TRUE;
  _tessera_pause_point ("record-process");
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  refresh_locked (self, FALSE);
  if (!STORE_CLASS (self)->set_holder_process (STORE (self), name, process, error) ||
      !commit_locked (self, error))
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
  if (HOLDERS (self)->get_whole (TABLE (self)) > 0 && f > 0)
    f = 0;   /* a holder whose amount cannot be read holds everything */
  unlock_thread (self);
  if (capacity != NULL)
    *capacity = c;
  if (free_units != NULL)
    *free_units = f;
}

/**
 * tessera_tracked_dynamic_resource_dup_usage_text:
 * @self: a tracked resource
 *
 * What the type says of its usage as last seen, in place of "N of M
 * free" (see [vfunc@Tessera.TrackedDynamicResource.dup_usage_text]):
 * "shared by 2" for a mutex held shared. %NULL when the type says
 * nothing more, or when a holder whose amount cannot be read holds
 * everything.
 *
 * Returns: (transfer full) (nullable): the phrase, or %NULL
 */
char *
tessera_tracked_dynamic_resource_dup_usage_text (TesseraTrackedDynamicResource *self)
{
  char *text = NULL;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  lock_thread (self);
  if (KLASS (self)->dup_usage_text != NULL && HOLDERS (self)->get_whole (TABLE (self)) == 0)
    text = KLASS (self)->dup_usage_text (self);
  unlock_thread (self);
  return text;
}

/**
 * tessera_tracked_dynamic_resource_list_lock_files:
 * @self: a tracked resource
 *
 * The lock files that count, as last seen: the valid ones, and the
 * entries of `jobs/` that hold the whole resource without being read (a
 * FIFO named like a lock file, a lock file that cannot be opened, one
 * whose text is not strict JSON or is cut short), each listed as a lock
 * file with only its path and its
 * [method@Tessera.DynamicLockFile.get_problem] (no job, its job URI
 * %NULL; no process). Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 *
 * Returns: (transfer container) (element-type TesseraDynamicLockFile): the
 *   lock files that count against the capacity
 */
GPtrArray *
tessera_tracked_dynamic_resource_list_lock_files (TesseraTrackedDynamicResource *self)
{
  GPtrArray *result;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self),
                        g_ptr_array_new_with_free_func (g_object_unref));
  lock_thread (self);
  result = HOLDERS (self)->list (TABLE (self));
  unlock_thread (self);
  return result;
}

/**
 * tessera_tracked_dynamic_resource_list_waiters:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * The waiters of the resource's queue, as they are now: those whose
 * patience is over and who reserve what they ask for (a waiter within
 * its patience is listed by
 * [method@Tessera.TrackedDynamicResource.list_waiting]), the
 * longest waiting first. Each is shaped like a lock file: its path is
 * its queue entry's, [method@Tessera.DynamicLockFile.get_information] and
 * [method@Tessera.DynamicLockFile.get_amount] say what it asks for,
 * [method@Tessera.DynamicLockFile.get_process] is the waiting process
 * and [method@Tessera.DynamicLockFile.get_mtime] when it began to wait
 * (its entry's time when the entry does not say). Entries whose waiter
 * is gone are left out (and removed where this process may, unless the
 * resource is read-only). Reads the queue under ipc.lock, as an acquire
 * does; works on a read-only resource.
 *
 * Returns: (transfer container) (element-type TesseraDynamicLockFile) (nullable):
 *   the waiters, or %NULL with @error when ipc.lock could not be taken
 */
GPtrArray *
tessera_tracked_dynamic_resource_list_waiters (TesseraTrackedDynamicResource  *self,
                                               GError                        **error)
{
  GPtrArray *waiters;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  fd = lock_both (self, error);
  if (fd < 0)
    return NULL;
  refresh_locked (self, FALSE);
  waiters = _tessera_wait_queue_list (STORE (self));
  unlock_both (self, fd);
  return waiters;
}

/**
 * tessera_tracked_dynamic_resource_list_waiting:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * The waiters within their patience, who reserve nothing yet: each has
 * an entry for people from its first failed attempt until its wait ends
 * or it reserves (then [method@Tessera.TrackedDynamicResource.list_waiters]
 * lists it), shaped like the reserving ones' (its path is the entry's,
 * ending in `.waiting` on a folder; on a store that keeps side entries,
 * etcd, the side entry `waiting/NAME` on its waiter's lease), the longest
 * waiting first. Other stores give none. Entries whose waiter is gone
 * are left out (and removed unless the resource is read-only); a folder's
 * first 1024 entries only are read (any member may plant more). Reads
 * under ipc.lock (on etcd, the pool as it is now); works on a read-only
 * resource.
 *
 * Returns: (transfer container) (element-type TesseraDynamicLockFile) (nullable):
 *   the waiters, or %NULL with @error when ipc.lock could not be taken
 */
GPtrArray *
tessera_tracked_dynamic_resource_list_waiting (TesseraTrackedDynamicResource  *self,
                                               GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  GPtrArray *waiting;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  priv = PRIV (self);
  if (PRIV (self)->opened && STORE_CLASS (self)->waiting_in_side_entries)
    {
      fd = lock_both (self, error);
      if (fd < 0)
        return NULL;
      refresh_locked (self, FALSE);
      waiting = _tessera_wait_queue_store_list_waiting (STORE (self));
      unlock_both (self, fd);
      return waiting;
    }
  if (!_tessera_dynamic_resource_in_a_folder (TESSERA_DYNAMIC_RESOURCE (self)) || priv->lock_folder == NULL)
    return g_ptr_array_new_with_free_func (g_object_unref);
  fd = lock_both (self, error);
  if (fd < 0)
    return NULL;
  waiting = _tessera_wait_queue_folder_list_waiting (priv->lock_folder, STORE (self), priv->read_only);
  unlock_both (self, fd);
  return waiting;
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
  return STORE_CLASS (self)->informations->read (STORE (self)->informations_table, error);
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
  gboolean ok;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (informations != NULL, FALSE);

  if (refuse_read_only (self, error))
    return FALSE;
  /* Applied, then written: a shape the resource type rejects never
   * reaches the store. Wakes this process's waiters. */
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  ok = KLASS (self)->handle_information_change (self, informations, error) &&
       STORE_CLASS (self)->informations->write (STORE (self)->informations_table, informations, error);
  /* Applied again by the next refresh, whatever happened (a failed apply
   * may have left the resource type half changed). */
  STORE_CLASS (self)->informations->forget (STORE (self)->informations_table);
  refresh_locked (self, FALSE);
  if (ok)
    PRIV (self)->refresh_changed = TRUE;
  unlock_both (self, fd);
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
  gboolean ok;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (job != NULL, FALSE);
  if (!HOLDERS (self)->check_name (TABLE (self), job, error))
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  refresh_locked (self, TRUE);
  ok = HOLDERS (self)->remove (TABLE (self), job, error) &&
       commit_locked (self, error);
  if (ok)
    PRIV (self)->refresh_changed = TRUE;   /* unlock_both wakes this process's waiters */
  unlock_both (self, fd);
  return ok;
}

/* ---------------------------------------------------------------------- */
/* What it tells of its store: where the pool is, whether it could be
 * read, the leases of its holders and of this host, side entries */

/**
 * tessera_tracked_dynamic_resource_dup_location:
 * @self: a tracked resource
 *
 * Where the pool lives, for people: its lock folder
 * ([property@Tessera.TrackedDynamicResource:path]) on a folder, its key
 * on etcd (`PREFIX/NAME/`: the local path holds nothing of it).
 * Callable from any thread.
 *
 * Returns: (transfer full) (nullable): the pool's location, or %NULL when
 *   @self could not be opened
 */
char *
tessera_tracked_dynamic_resource_dup_location (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return PRIV (self)->opened ? STORE_CLASS (self)->dup_location (STORE (self)) : NULL;
}

/**
 * tessera_tracked_dynamic_resource_get_holder_lease_left:
 * @self: a tracked resource
 * @lock_file: one of its holders, from
 *   [method@Tessera.TrackedDynamicResource.list_lock_files]
 *
 * On a store whose holders live on leases (etcd), the seconds the lease
 * of @lock_file's holder has left before the store drops it, unless its
 * process renews it: asked of the store now (it may wait for it).
 *
 * Returns: seconds, or -1 when the holder has no lease of its own (a
 *   folder pool), is gone, or the store cannot say
 */
double
tessera_tracked_dynamic_resource_get_holder_lease_left (TesseraTrackedDynamicResource *self,
                                                        TesseraDynamicLockFile        *lock_file)
{
  g_autofree char *name = NULL;
  double left;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), -1);
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (lock_file), -1);
  /* A store without get_holder_lease_left has no lease per holder. */
  if (!PRIV (self)->opened || STORE_CLASS (self)->get_holder_lease_left == NULL ||
      tessera_dynamic_lock_file_get_path (lock_file) == NULL)
    return -1;
  name = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
  lock_thread (self);
  left = STORE_CLASS (self)->get_holder_lease_left (STORE (self), name);
  unlock_thread (self);
  return left;
}

/**
 * tessera_tracked_dynamic_resource_get_lease_unrenewed:
 * @self: a tracked resource
 *
 * On a lease pool ([property@Tessera.TrackedDynamicResource:host-lease]),
 * how long this process has held something in @self without renewing its
 * host's heartbeat. Once that nears the lease, other hosts may take this
 * host's holdings for dead: whoever uses them should stop first (as
 * `tessera run` ends its command). Callable from any thread.
 *
 * Returns: seconds since the last renewal while holding; 0 when @self is
 *   no lease pool or this process holds nothing in it
 */
double
tessera_tracked_dynamic_resource_get_lease_unrenewed (TesseraTrackedDynamicResource *self)
{
  TesseraPoolStore *store;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  store = STORE (self);
  return store != NULL && store->proof != NULL ? store->klass->liveness->get_unrenewed (store->proof) : 0;
}

/**
 * tessera_tracked_dynamic_resource_check_readable:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Whether every holder of the pool could be read when it was last seen,
 * for a tool that only looks (`tessera status`): %FALSE with the error an
 * acquire would fail with when not — its `jobs/` is not a folder (a
 * planted link), or could not be listed — since holders may then hold
 * what looks free. It looks only: it writes nothing to the pool. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 *
 * Returns: %TRUE when every holder could be read; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_check_readable (TesseraTrackedDynamicResource  *self,
                                                 GError                        **error)
{
  gboolean readable;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  lock_thread (self);
  /* Without a check of its own, the store's usable check writes nothing. */
  readable = HOLDERS (self)->check_readable != NULL ? HOLDERS (self)->check_readable (TABLE (self), error)
                                                    : HOLDERS (self)->check_usable (TABLE (self), error);
  unlock_thread (self);
  return readable;
}

/* A side entry's kind: a short lower-case word that is none of the
 * pool's own (jobs/, queue/); its name: one name (a holder's, without
 * ".json"). */
static gboolean
check_side_entry (const char *kind, const char *name, GError **error)
{
  gboolean good_kind = kind != NULL && *kind != '\0' && strlen (kind) <= 32 &&
                       !g_str_equal (kind, _TESSERA_POOL_JOBS) && !g_str_equal (kind, _TESSERA_POOL_QUEUE);
  gboolean good_name = name == NULL || (*name != '\0' && strchr (name, '/') == NULL && !g_str_equal (name, ".") &&
                                        !g_str_equal (name, "..") && strlen (name) <= 256 &&
                                        g_utf8_validate (name, -1, NULL));

  for (const char *p = kind; good_kind && *p != '\0'; p++)
    good_kind = g_ascii_islower (*p) || g_ascii_isdigit (*p) || *p == '_' || *p == '-';
  if (good_kind && good_name)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME, _("“%s/%s” is not a side entry's name"),
               kind != NULL ? kind : "", name != NULL ? name : "");
  return FALSE;
}

/**
 * tessera_tracked_dynamic_resource_keeps_side_entries:
 * @self: a tracked resource
 *
 * Whether the store @self's pool lives in keeps side entries: small JSON
 * texts a resource type keeps in the pool beside its holders, which every
 * process of the pool sees, and which live no longer than the process
 * that wrote them (the mutex's intents). The etcd store keeps them under
 * the pool's key, on the process's lease, seen on every host; the folder
 * store as files `KIND/NAME.json` of its lock folder
 * ([func@Tessera.pool_part_open_side_folder]), which a type gives a
 * lifetime of its own (the mutex's intents say until when they count).
 * So a type reaches them the same way whatever the store. Callable from
 * any thread.
 *
 * Returns: %TRUE when [method@Tessera.TrackedDynamicResource.list_side_entries]
 *   and its kin may be used: the pool is open, and its store keeps
 *   them
 */
gboolean
tessera_tracked_dynamic_resource_keeps_side_entries (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  return STORE (self) != NULL && PRIV (self)->opened && STORE_CLASS (self)->side_list != NULL;
}

/**
 * tessera_tracked_dynamic_resource_list_side_entries:
 * @self: a tracked resource whose store keeps side entries
 *   ([method@Tessera.TrackedDynamicResource.keeps_side_entries])
 * @kind: the entries' kind (a short lower-case word, the type's own:
 *   "intents")
 *
 * The side entries of @kind as the pool was last read, read at the same
 * time as its holders (in a lock folder, under ipc.lock now): what
 * another process wrote, as it wrote it (read it as a hostile co-user's
 * text; in a lock folder, one that says nothing readable, too large or
 * not text, has the empty text). Call it from the type's virtual
 * functions, the thread lock held
 * ([vfunc@Tessera.TrackedDynamicResource.is_available]); it does not
 * wait for another process (in a lock folder, it reads the files).
 *
 * Returns: (transfer full) (element-type utf8 utf8): each entry's name
 *   and text; empty when there are none, or when the store keeps none
 */
GHashTable *
tessera_tracked_dynamic_resource_list_side_entries (TesseraTrackedDynamicResource *self,
                                                    const char                    *kind)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self) || !check_side_entry (kind, NULL, NULL))
    return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return STORE_CLASS (self)->side_list (STORE (self), kind);
}

/**
 * tessera_tracked_dynamic_resource_put_side_entry:
 * @self: a tracked resource whose store keeps side entries
 * @kind: the entry's kind
 * @name: its name (one name: a holder's, `task@identifier`)
 * @text: its text, JSON
 * @error: return location for a #GError
 *
 * Writes side entry @name of @kind, at once: every process of the pool
 * sees it from its next decision, and a decision of another process made
 * on the pool as it was before is made again. It lives no longer than
 * this process (on etcd, it is on the process's lease; in a lock folder,
 * the file `KIND/NAME.json` stays until it is deleted: its text says
 * until when it counts, and whose it is). Write it only when it changes:
 * on etcd every write wakes every waiter of the pool. Call it from the
 * type's virtual functions, the thread lock held; it waits for the
 * store.
 *
 * Returns: %TRUE when written; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_put_side_entry (TesseraTrackedDynamicResource  *self,
                                                 const char                     *kind,
                                                 const char                     *name,
                                                 const char                     *text,
                                                 GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  if (!check_side_entry (kind, name, error))
    return FALSE;
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("The pool of %s keeps no side entries"),
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)));
      return FALSE;
    }
  return STORE_CLASS (self)->side_put (STORE (self), kind, name, text, error);
}

/**
 * tessera_tracked_dynamic_resource_delete_side_entry:
 * @self: a tracked resource whose store keeps side entries
 * @kind: the entry's kind
 * @name: its name
 * @error: return location for a #GError
 *
 * Deletes side entry @name of @kind; one already gone is no error. From
 * the type's virtual functions during a decision (the thread lock held),
 * it is done once the decision's grant is written, after it, so that
 * what the entry keeps out stays out until the new holder counts (the
 * mutex's intent, dropped by its
 * [vfunc@Tessera.TrackedDynamicResource.do_acquire]), and not at all
 * when no grant is written; from elsewhere (a request given up: no lock
 * held), at once. In a lock folder it is deleted at once in either case:
 * ipc.lock keeps every other process from deciding until the grant is
 * written. Callable from any thread.
 *
 * Returns: %TRUE when deleted, or to be; %FALSE with @error set
 */
gboolean
tessera_tracked_dynamic_resource_delete_side_entry (TesseraTrackedDynamicResource  *self,
                                                    const char                     *kind,
                                                    const char                     *name,
                                                    GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  if (!check_side_entry (kind, name, error))
    return FALSE;
  if (!tessera_tracked_dynamic_resource_keeps_side_entries (self))
    return TRUE;
  return STORE_CLASS (self)->side_delete (STORE (self), kind, name, error);
}

/* ---------------------------------------------------------------------- */
/* The audit of reclaims */

void
_tessera_tracked_dynamic_resource_audit_reclaim (TesseraTrackedDynamicResource *self,
                                                 const char                    *name,
                                                 TesseraDynamicLockFile        *lock_file,
                                                 const char                    *reason,
                                                 gboolean                       left)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  Reclaim *reclaim;

  if (!priv->audited)
    return;
  reclaim = g_new0 (Reclaim, 1);
  reclaim->name = g_strdup (name);
  reclaim->lock_file = lock_file != NULL ? g_object_ref (lock_file) : NULL;
  reclaim->reason = g_strdup (reason);
  reclaim->left = left;
  g_mutex_lock (&priv->reclaims_lock);
  g_ptr_array_add (priv->reclaims, reclaim);
  g_mutex_unlock (&priv->reclaims_lock);
}

void
_tessera_tracked_dynamic_resource_log_reclaims (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autoptr(GPtrArray) reclaims = NULL;

  g_mutex_lock (&priv->reclaims_lock);
  if (priv->reclaims->len > 0)
    {
      reclaims = g_steal_pointer (&priv->reclaims);
      priv->reclaims = g_ptr_array_new_with_free_func (reclaim_free);
    }
  g_mutex_unlock (&priv->reclaims_lock);
  for (guint i = 0; reclaims != NULL && i < reclaims->len; i++)
    {
      Reclaim *reclaim = g_ptr_array_index (reclaims, i);

      _tessera_audit_log ("reclaim", resource_name (self), reclaim->name, reclaim->lock_file, "reason",
                          reclaim->reason, "file", reclaim->left ? "left to its owner" : "removed", NULL);
    }
}

/**
 * tessera_tracked_dynamic_resource_audit:
 * @self: a tracked resource
 * @action: what was done, one word such as "set" or "force"
 * @lock_file: (nullable): the holding it was done to, read before it
 *   was removed
 * @detail: (nullable): what else the line says (the settings changed)
 *
 * Logs an administrator's action on the pool in the audit log, when the
 * resource is audited ([property@Tessera.TrackedDynamicResource:audit]):
 * one line in the `Tessera-Audit` log domain with the acting user, host
 * and process, the holding's job, owner and amount, and @detail. The
 * library logs grants, releases and reclaims itself.
 */
void
tessera_tracked_dynamic_resource_audit (TesseraTrackedDynamicResource *self,
                                        const char                    *action,
                                        TesseraDynamicLockFile        *lock_file,
                                        const char                    *detail)
{
  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  g_return_if_fail (action != NULL);
  if (PRIV (self)->audited)
    _tessera_audit_log (action, resource_name (self), NULL, lock_file, "detail", detail, NULL);
}
