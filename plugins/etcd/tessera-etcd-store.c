/* tessera-etcd-store.c: the etcd store, a pool under PREFIX/NAME/ in etcd
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-lease.h"
#include "tessera-etcd-pool.h"
#include "tessera-pool-store-private.h"

#include <glib/gi18n-lib.h>
#include <gmodule.h>
#include <string.h>

/* The store of tessera-pool-store-private.h on an etcd cluster, for
 * hosts without a shared file system whose locks can be trusted:
 *
 * - begin takes nothing: the transaction is the lock. refresh reads the
 *   pool's keys at one revision (tessera-etcd-pool.c) and brings the
 *   resource type's accounting to them; put_holder counts the new holder
 *   at once and keeps its write for commit, one transaction that puts it
 *   only if nothing under the pool changed since that revision, else
 *   %G_IO_ERROR_BUSY (the caller decides again). Deletions (a release, a
 *   forced removal) are written at once: freeing never over-allocates.
 * - Liveness is the lease: every holder key is attached to this
 *   process's lease (one per process and cluster, kept alive on a thread,
 *   tessera-etcd-lease.c); a process that dies or freezes past the TTL
 *   loses it and etcd deletes its keys. Nothing here judges a holder
 *   (judge_all and host_expired say no), and no heartbeat is written.
 * - The waiters' queue (tessera-wait-queue.c) is the etcd semaphore
 *   recipe: a waiter past its patience puts `queue/TASK@ID` on its lease,
 *   once (the lease says it still waits), and its place is the key's
 *   create revision; entries are read with the holders at one revision,
 *   and the acquire's transaction covers them.
 * - A resource type's side entries (the mutex's intents) are keys
 *   `KIND/NAME` under the pool, put at once on the process's lease and
 *   read with the holders; one deleted during a decision goes after the
 *   holder that decision writes (so what it kept out stays out until the
 *   holder counts), or not at all when none is written.
 * - Change notification is a watch on the pool's prefix from the last
 *   revision read, on a thread of the store's own, which wakes this
 *   process's waiters (tessera_dynamic_resource_notify_changed() on its
 *   owner; again after any gap in the watch), so waiters are not polled
 *   (wakes_waiters).
 *
 * Values come from anyone who can write under the prefix: an unreadable
 * holder holds everything (as on a folder), said once per change. */

#define DEFAULT_PREFIX "/tessera/"
#define DEFAULT_LEASE 15.0
#define LEASE_MIN 2.0
#define REQUEST_TIMEOUT_MAX 30.0

/* ---------------------------------------------------------------------- */
/* The process's lease, one per cluster and TTL, shared by its stores */

typedef struct
{
  char *id;                    /* endpoints, user, TTL and request timeout */
  int refs;                    /* leases_mutex */
  GMutex mutex;                /* lease */
  TesseraEtcdClient *client;
  gint64 ttl;
  /* How the keeper reaches the cluster: as the client does. */
  GStrv endpoints;
  char *ca, *cert, *key, *user, *password;
  TesseraEtcdLease *lease;     /* NULL until a first holding, or after it was lost */
} SharedLease;

static GMutex leases_mutex;
static GHashTable *leases;     /* id → SharedLease */

static SharedLease *
shared_lease_get (TesseraEtcdClient *client, const TesseraPoolStoreSettings *settings, gint64 ttl)
{
  g_autofree char *id = g_strdup_printf ("%s|%s|%" G_GINT64_FORMAT "|%u", settings->endpoints,
                                         settings->user != NULL ? settings->user : "", ttl,
                                         tessera_etcd_client_get_request_timeout (client));
  SharedLease *shared;

  g_mutex_lock (&leases_mutex);
  if (leases == NULL)
    leases = g_hash_table_new (g_str_hash, g_str_equal);
  shared = g_hash_table_lookup (leases, id);
  if (shared == NULL)
    {
      shared = g_new0 (SharedLease, 1);
      shared->id = g_steal_pointer (&id);
      g_mutex_init (&shared->mutex);
      shared->client = g_object_ref (client);
      shared->ttl = ttl;
      shared->endpoints = g_strsplit (settings->endpoints, ",", -1);
      shared->ca = g_strdup (settings->ca);
      shared->cert = g_strdup (settings->cert);
      shared->key = g_strdup (settings->key);
      shared->user = g_strdup (settings->user);
      shared->password = g_strdup (settings->password);
      g_hash_table_insert (leases, shared->id, shared);
    }
  shared->refs++;
  g_mutex_unlock (&leases_mutex);
  return shared;
}

/* The last store gone revokes the lease: what it carried goes at once. */
static void
shared_lease_unref (SharedLease *shared)
{
  gboolean last;

  g_mutex_lock (&leases_mutex);
  last = --shared->refs == 0;
  if (last)
    g_hash_table_remove (leases, shared->id);
  g_mutex_unlock (&leases_mutex);
  if (!last)
    return;
  g_clear_pointer (&shared->lease, tessera_etcd_lease_free);
  g_object_unref (shared->client);
  g_strfreev (shared->endpoints);
  g_free (shared->ca);
  g_free (shared->cert);
  g_free (shared->key);
  g_free (shared->user);
  g_free (shared->password);
  g_mutex_clear (&shared->mutex);
  g_free (shared->id);
  g_free (shared);
}

/* A client of the cluster for the keeper alone (it sets its own
 * deadlines), with the same TLS and user as the store's. */
static TesseraEtcdClient *
shared_lease_new_keeper (SharedLease *shared, GError **error)
{
  g_autoptr(TesseraEtcdClient) keeper = tessera_etcd_client_new ((const char * const *) shared->endpoints, error);

  if (keeper == NULL)
    return NULL;
  tessera_etcd_client_start_anywhere (keeper);
  if ((shared->ca != NULL || shared->cert != NULL) &&
      !tessera_etcd_client_set_tls (keeper, shared->ca, shared->cert, shared->key, error))
    return NULL;
  if (shared->user != NULL)
    tessera_etcd_client_set_auth (keeper, shared->user, shared->password);
  return g_steal_pointer (&keeper);
}

/* The lease's id, granted first (again, when etcd said it was lost), or
 * 0 with @error. */
static gint64
shared_lease_ensure (SharedLease *shared, GError **error)
{
  gint64 id = 0;

  g_mutex_lock (&shared->mutex);
  if (shared->lease != NULL && tessera_etcd_lease_is_lost (shared->lease))
    g_clear_pointer (&shared->lease, tessera_etcd_lease_free);
  if (shared->lease == NULL)
    {
      g_autoptr(TesseraEtcdClient) keeper = shared_lease_new_keeper (shared, error);

      if (keeper != NULL)
        shared->lease = tessera_etcd_lease_new (shared->client, keeper, shared->ttl, error);
    }
  if (shared->lease != NULL)
    id = tessera_etcd_lease_get_id (shared->lease);
  g_mutex_unlock (&shared->mutex);
  return id;
}

static double
shared_lease_unrenewed (SharedLease *shared)
{
  double unrenewed = 0;

  g_mutex_lock (&shared->mutex);
  if (shared->lease != NULL)
    unrenewed = tessera_etcd_lease_is_lost (shared->lease) ? G_MAXDOUBLE
                                                            : tessera_etcd_lease_get_unrenewed (shared->lease);
  g_mutex_unlock (&shared->mutex);
  return unrenewed;
}

/* ---------------------------------------------------------------------- */
/* The store */

typedef struct
{
  TesseraDynamicLockFile *lock_file;   /* NULL: unreadable, it holds everything */
  gint64 mod_revision;                 /* 0: our own write, not read back yet */
  gint64 create_revision;              /* 0: likewise */
  gint64 lease;                        /* its key's lease; 0: none, or not read back yet */
  gboolean counted;                    /* accounted (valid) */
} Holder;

typedef struct
{
  TesseraPoolStore parent;

  TesseraTrackedDynamicResource *owner;   /* not referenced: it owns the store */

  /* Settings, then what open made; set once. */
  GStrv endpoints;
  char *prefix;
  double ttl;
  TesseraEtcdClient *client;
  TesseraEtcdPool *pool;
  SharedLease *lease;
  int holds;                           /* atomic */

  /* The pool as last read. Thread lock. */
  gint64 revision;
  GHashTable *holders;                 /* name → Holder */
  guint whole;                         /* unreadable holders */
  GBytes *informations;                /* as last applied */
  GError *read_error;                  /* the last read failed: why */
  char *pending;                       /* the holder put since begin, to commit */
  gint64 token;                        /* the revision of the last holder committed */
  GPtrArray *queue;                    /* TesseraEtcdHolder: the queue as last read */
  GPtrArray *side;                     /* TesseraEtcdKv: the side entries as last read */
  GPtrArray *side_deletes;             /* keys: deletions for the commit of a holder */
  gpointer decider;                    /* atomic: the thread between refresh and end, or NULL */
  GHashTable *ttls;                    /* lease id → seconds left, asked at ttls_revision */
  gint64 ttls_revision;

  /* The watch thread. */
  GThread *watcher;
  GCancellable *cancellable;
  GMutex watch_mutex;
  gint64 watch_from;                   /* watch_mutex: the revision to watch after */
} EtcdStore;

#define ETCD_STORE(s) ((EtcdStore *) (s))
/* The resource served, and its type's virtual functions. */
#define OWNER(s) ((s)->owner)
#define OWNER_CLASS(s) ((s)->parent.owner_class)

/* The core names a holder as a folder's jobs/ does (`TASK@ID.json`,
 * TESSERA_LOCK_FILE_SUFFIX); its key is `jobs/TASK@ID`. */
static char *
key_name (const char *name)
{
  if (g_str_has_suffix (name, TESSERA_LOCK_FILE_SUFFIX))
    return g_strndup (name, strlen (name) - strlen (TESSERA_LOCK_FILE_SUFFIX));
  return g_strdup (name);
}

/* A GDestroyNotify: the table's, called with its exact type. */
static void
holder_free (gpointer data)
{
  Holder *holder = data;

  g_clear_object (&holder->lock_file);
  g_free (holder);
}

/* Forgets @name, unaccounted. Thread lock. */
static void
drop_holder (EtcdStore *self, const char *name)
{
  Holder *holder = g_hash_table_lookup (self->holders, name);

  if (holder == NULL)
    return;
  if (holder->counted)
    OWNER_CLASS (self)->unaccount_lock_file (OWNER (self), holder->lock_file);
  if (holder->lock_file == NULL)
    self->whole--;
  g_hash_table_remove (self->holders, name);
}

/* Takes @lock_file (NULL: unreadable) for @name, accounted when valid.
 * Thread lock. */
static Holder *
add_holder (EtcdStore *self, const char *name, TesseraDynamicLockFile *lock_file, gint64 mod_revision)
{
  Holder *holder = g_new0 (Holder, 1);

  drop_holder (self, name);
  holder->lock_file = lock_file;
  holder->mod_revision = mod_revision;
  holder->counted = lock_file != NULL && tessera_dynamic_lock_file_is_valid (lock_file);
  if (lock_file == NULL)
    self->whole++;
  g_hash_table_insert (self->holders, g_strdup (name), holder);
  if (holder->counted)
    OWNER_CLASS (self)->account_lock_file (OWNER (self), lock_file);
  return holder;
}

/* ---------------------------------------------------------------------- */
/* The watch: wakes this process's waiters when the pool changes */

static gint64
get_watch_from (EtcdStore *self)
{
  gint64 from;

  g_mutex_lock (&self->watch_mutex);
  from = self->watch_from;
  g_mutex_unlock (&self->watch_mutex);
  return from;
}

/* Only forward: a read older than what the watch has seen is no news. */
static void
set_watch_from (EtcdStore *self, gint64 revision)
{
  g_mutex_lock (&self->watch_mutex);
  self->watch_from = MAX (self->watch_from, revision);
  g_mutex_unlock (&self->watch_mutex);
}

/* Waits a second, or less when the store stops. */
static void
pause_watch (EtcdStore *self)
{
  GPollFD fd;

  if (g_cancellable_make_pollfd (self->cancellable, &fd))
    {
      g_poll (&fd, 1, 1000);
      g_cancellable_release_fd (self->cancellable);
    }
}

static gpointer
watch_thread (gpointer data)
{
  EtcdStore *self = data;
  const char *key = tessera_etcd_pool_get_key (self->pool);
  g_autofree char *end = tessera_etcd_prefix_end (key);

  while (!g_cancellable_is_cancelled (self->cancellable))
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraEtcdWatch) watch = tessera_etcd_client_watch (self->client, key, end,
                                                                     get_watch_from (self) + 1, &error);

      while (watch != NULL)
        {
          gint64 revision = 0;
          g_autoptr(GPtrArray) events = tessera_etcd_watch_next (watch, -1, &revision, self->cancellable, &error);

          if (events == NULL)
            break;
          if (events->len == 0)
            continue;
          set_watch_from (self, revision);
          tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self->owner));
        }
      if (g_cancellable_is_cancelled (self->cancellable))
        break;
      /* Compacted, or no member keeps it open: again from the current
       * revision, and the waiters read the pool again. */
      g_debug ("Watch of etcd pool %s: %s", key, error != NULL ? error->message : "?");
      if (g_error_matches (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_COMPACTED))
        {
          g_autoptr(TesseraEtcdPoolState) state = tessera_etcd_pool_read (self->pool, self->cancellable, NULL);

          if (state != NULL)
            set_watch_from (self, state->revision);
        }
      tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self->owner));
      pause_watch (self);
    }
  return NULL;
}

static void
etcd_store_stop (TesseraPoolStore *store)
{
  EtcdStore *self = ETCD_STORE (store);

  if (self->watcher == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_thread_join (g_steal_pointer (&self->watcher));
}

static void
etcd_store_free (TesseraPoolStore *store)
{
  EtcdStore *self = ETCD_STORE (store);

  etcd_store_stop (store);
  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->holders, g_hash_table_unref);
  g_clear_pointer (&self->queue, g_ptr_array_unref);
  g_clear_pointer (&self->side, g_ptr_array_unref);
  g_clear_pointer (&self->side_deletes, g_ptr_array_unref);
  g_clear_pointer (&self->ttls, g_hash_table_unref);
  g_clear_pointer (&self->informations, g_bytes_unref);
  g_clear_error (&self->read_error);
  g_free (self->pending);
  g_clear_pointer (&self->pool, tessera_etcd_pool_free);
  g_clear_pointer (&self->lease, shared_lease_unref);
  g_clear_object (&self->client);
  g_strfreev (self->endpoints);
  g_free (self->prefix);
  g_mutex_clear (&self->watch_mutex);
  g_free (self);
}

/* ---------------------------------------------------------------------- */
/* Reading the pool */

/* Applies the informations when they changed. Thread lock. */
static gboolean
apply_informations (EtcdStore *self, TesseraEtcdPoolState *state, GBytes *text)
{
  g_autoptr(GError) error = NULL;

  if (state->informations == NULL || (self->informations != NULL && g_bytes_equal (self->informations, text)))
    return FALSE;
  g_clear_pointer (&self->informations, g_bytes_unref);
  self->informations = g_bytes_ref (text);
  if (!OWNER_CLASS (self)->handle_information_change (OWNER (self), state->informations, &error))
    g_warning (_("Ignoring the informations of etcd pool %s: %s"), tessera_etcd_pool_get_key (self->pool),
               error->message);
  return TRUE;
}

/* Brings the holders and the informations to @state. TRUE when the
 * accounting or the informations changed. Thread lock. */
static gboolean
apply_state (EtcdStore *self, TesseraEtcdPoolState *state, GBytes *informations_text)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func (g_free);
  gboolean changed = apply_informations (self, state, informations_text);
  GHashTableIter iter;
  gpointer known_name;

  g_clear_pointer (&self->queue, g_ptr_array_unref);
  self->queue = g_steal_pointer (&state->queue);
  g_clear_pointer (&self->side, g_ptr_array_unref);
  self->side = g_steal_pointer (&state->side);

  for (guint i = 0; i < state->holders->len; i++)
    {
      TesseraEtcdHolder *read = g_ptr_array_index (state->holders, i);
      char *name = g_strconcat (read->name, TESSERA_LOCK_FILE_SUFFIX, NULL);
      Holder *known = g_hash_table_lookup (self->holders, name);

      g_hash_table_add (seen, name);
      if (known != NULL && known->mod_revision == read->kv->mod_revision)
        continue;
      if (read->lock_file == NULL)
        g_warning (_("Holder %s of etcd pool %s cannot be read, so it holds everything: %s"),
                   read->name, tessera_etcd_pool_get_key (self->pool), read->error->message);
      if (read->lock_file != NULL)
        _tessera_dynamic_lock_file_set_mtime (read->lock_file, read->since_ns);
      known = add_holder (self, name, g_steal_pointer (&read->lock_file), read->kv->mod_revision);
      known->create_revision = read->kv->create_revision;
      known->lease = read->kv->lease;
      changed = TRUE;
    }
  g_hash_table_iter_init (&iter, self->holders);
  while (g_hash_table_iter_next (&iter, &known_name, NULL))
    if (!g_hash_table_contains (seen, known_name) && g_strcmp0 (known_name, self->pending) != 0)
      g_ptr_array_add (gone, g_strdup (known_name));
  for (guint i = 0; i < gone->len; i++)
    drop_holder (self, g_ptr_array_index (gone, i));
  return changed || gone->len > 0;
}

/* The informations' text as read, to tell a change. */
static GBytes *
informations_text (TesseraEtcdPoolState *state)
{
  g_autofree char *text = state->informations != NULL ? json_to_string (state->informations, FALSE) : NULL;

  return text != NULL ? g_bytes_new_take (g_steal_pointer (&text), strlen (text)) : NULL;
}

static gboolean
etcd_store_refresh (TesseraPoolStore *store, gboolean full)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autoptr(TesseraEtcdPoolState) state = NULL;
  g_autoptr(GBytes) text = NULL;

  g_atomic_pointer_set (&self->decider, g_thread_self ());
  g_clear_error (&self->read_error);
  state = tessera_etcd_pool_read (self->pool, NULL, &self->read_error);
  if (state == NULL)
    return FALSE;
  self->revision = state->revision;
  set_watch_from (self, state->revision);
  text = informations_text (state);
  return apply_state (self, state, text);
}

static void
etcd_store_force_scan (TesseraPoolStore *store)
{
  /* Every refresh reads the whole pool. */
}

/* ---------------------------------------------------------------------- */
/* Opening */

static gboolean
etcd_store_open (TesseraPoolStore *store,
                 const char       *location,
                 GError          **error)
{
  EtcdStore *self = ETCD_STORE (store);

  self->pool = tessera_etcd_pool_new (self->client, self->prefix, self->parent.name,
                                      store->lock_file_type, error);
  return self->pool != NULL;
}

static gboolean
etcd_store_load (TesseraPoolStore *store, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autoptr(TesseraEtcdPoolState) state = tessera_etcd_pool_read (self->pool, NULL, error);
  g_autoptr(GBytes) text = NULL;

  if (state == NULL)
    return FALSE;
  if (state->informations == NULL && state->informations_error == NULL)
    {
      g_autoptr(JsonNode) initial = OWNER_CLASS (self)->initialize_informations (OWNER (self));

      /* Only looking: what the first writer would set up, kept in memory. */
      if (initial != NULL && self->parent.read_only)
        OWNER_CLASS (self)->handle_information_change (OWNER (self), initial, NULL);
      else if (initial != NULL && !tessera_etcd_pool_put_informations (self->pool, initial, NULL, error))
        return FALSE;
      if (initial != NULL && !self->parent.read_only)
        {
          g_clear_pointer (&state, tessera_etcd_pool_state_free);
          state = tessera_etcd_pool_read (self->pool, NULL, error);
          if (state == NULL)
            return FALSE;
        }
    }
  OWNER_CLASS (self)->reset_state (OWNER (self));
  self->revision = state->revision;
  set_watch_from (self, state->revision);
  text = informations_text (state);
  apply_state (self, state, text);
  if (!self->parent.read_only)
    self->watcher = g_thread_new ("tessera-etcd-store", watch_thread, self);
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* A decision: begin, commit, end */

static int
etcd_store_begin (TesseraPoolStore *store, GError **error)
{
  /* The transaction at commit is the lock. */
  return 0;
}

/* A holder put and not committed (a decision given up): forgotten. */
static void
drop_pending (EtcdStore *self)
{
  if (self->pending == NULL)
    return;
  drop_holder (self, self->pending);
  g_clear_pointer (&self->pending, g_free);
}

static void
etcd_store_end (TesseraPoolStore *store, int token)
{
  EtcdStore *self = ETCD_STORE (store);

  drop_pending (self);
  /* No holder was written: what the entries say still holds. */
  g_ptr_array_set_size (self->side_deletes, 0);
  g_atomic_pointer_set (&self->decider, NULL);
}

/* The side entries deleted during the decision, now that its holder is
 * written. */
static void
delete_side_entries (EtcdStore *self)
{
  for (guint i = 0; i < self->side_deletes->len; i++)
    {
      const char *key = g_ptr_array_index (self->side_deletes, i);
      g_autoptr(GError) error = NULL;

      if (!tessera_etcd_pool_delete_side_key (self->pool, key, NULL, &error))
        g_warning (_("Cannot delete %s: %s"), key, error->message);
    }
  g_ptr_array_set_size (self->side_deletes, 0);
}

static gboolean
etcd_store_commit (TesseraPoolStore *store, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *key = NULL;
  Holder *holder;
  gboolean written = FALSE;
  gint64 lease;

  if (self->pending == NULL)
    return TRUE;
  holder = g_hash_table_lookup (self->holders, self->pending);
  key = key_name (self->pending);
  lease = shared_lease_ensure (self->lease, error);
  self->token = 0;
  if (lease == 0 ||
      !tessera_etcd_pool_put_holder (self->pool, self->revision, key, holder->lock_file, lease,
                                     &written, &self->token, NULL, error))
    {
      drop_pending (self);
      return FALSE;
    }
  if (!written)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   _("etcd pool %s changed while %s was decided"), tessera_etcd_pool_get_key (self->pool), key);
      drop_pending (self);
      return FALSE;
    }
  g_clear_pointer (&self->pending, g_free);
  delete_side_entries (self);
  return TRUE;
}

/* The fencing token of the holder just committed: its key's create
 * revision (the revision of the transaction that wrote it, as etcd's
 * Mutex recipe gives its holder), larger than that of every key written
 * before it in the cluster. */
static gint64
etcd_store_get_token (TesseraPoolStore *store)
{
  return ETCD_STORE (store)->token;
}

/* ---------------------------------------------------------------------- */
/* Holders */

static gboolean
etcd_store_check_usable (gpointer store, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);

  if (self->read_error == NULL)
    return TRUE;
  g_set_error (error, TESSERA_ERROR,
               g_error_matches (self->read_error, TESSERA_ERROR, TESSERA_ERROR_STORE_UNREACHABLE)
               ? TESSERA_ERROR_STORE_UNREACHABLE : TESSERA_ERROR_UNAVAILABLE, _("Cannot read etcd pool %s: %s"),
               tessera_etcd_pool_get_key (self->pool), self->read_error->message);
  return FALSE;
}

static TesseraDynamicLockFile *
etcd_store_get_holder (gpointer store, const char *name)
{
  Holder *holder = g_hash_table_lookup (ETCD_STORE (store)->holders, name);

  return holder != NULL ? holder->lock_file : NULL;
}

/* etcd's lease is the liveness: nothing to judge. */
static gboolean
etcd_store_judge_all (TesseraPoolStore *store)
{
  return FALSE;
}

static guint
etcd_store_get_whole_holders (gpointer store)
{
  return ETCD_STORE (store)->whole;
}

static GPtrArray *
etcd_store_list_holders (gpointer store)
{
  GPtrArray *result = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  Holder *holder;

  g_hash_table_iter_init (&iter, ETCD_STORE (store)->holders);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &holder))
    if (holder->counted)
      g_ptr_array_add (result, g_object_ref (holder->lock_file));
  return result;
}

/* The lock file's JSON, as on a folder, and since when it holds
 * (@since_ns, nanoseconds since the epoch: a file's time on a folder),
 * which its key's value carries (tessera-etcd-pool.c). */
static TesseraDynamicLockFile *
new_lock_file (EtcdStore *self, const char *name, const char *job_uri, JsonNode *information,
               TesseraProcess *process, gint64 since_ns, GError **error)
{
  TesseraDynamicLockFile *lock_file;
  g_autofree char *short_name = key_name (name);
  g_autofree char *key = tessera_etcd_pool_dup_holder_key (self->pool, short_name);
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();
  g_autofree char *text = NULL;

  json_node_take_object (root, object);
  json_object_set_string_member (object, "job_uri", job_uri);
  json_object_set_member (object, "information", information != NULL ? json_node_copy (information)
                                                                      : json_node_new (JSON_NODE_NULL));
  if (process != NULL)
    json_object_set_member (object, "process", tessera_process_to_json (process));
  text = json_to_string (root, FALSE);
  lock_file = tessera_dynamic_lock_file_new_from_data (self->parent.lock_file_type, key, text, -1, error);
  if (lock_file != NULL)
    _tessera_dynamic_lock_file_set_mtime (lock_file, since_ns);
  return lock_file;
}

static gboolean
etcd_store_put_holder (TesseraPoolStore *store,
                       const char       *name,
                       TesseraJob       *job,
                       JsonNode         *information,
                       GError          **error)
{
  EtcdStore *self = ETCD_STORE (store);
  TesseraDynamicLockFile *lock_file;

  g_autofree char *short_name = key_name (name);

  g_return_val_if_fail (self->pending == NULL, FALSE);
  if (!tessera_etcd_pool_check_holder_name (short_name, error))
    return FALSE;
  lock_file = new_lock_file (self, name, tessera_job_get_job_uri (job), information,
                             tessera_job_get_process (job), g_get_real_time () * 1000, error);
  if (lock_file == NULL)
    return FALSE;
  add_holder (self, name, lock_file, 0);
  self->pending = g_strdup (name);
  return TRUE;
}

static void
etcd_store_forget_holder (gpointer store, const char *name)
{
  drop_holder (ETCD_STORE (store), name);
}

static gboolean
etcd_store_delete_own_holder (gpointer store, const char *name, GError **error)
{
  g_autofree char *short_name = key_name (name);

  return tessera_etcd_pool_delete_holder (ETCD_STORE (store)->pool, short_name, NULL, error);
}

static gboolean
etcd_store_set_holder_process (TesseraPoolStore *store,
                               const char       *name,
                               TesseraProcess   *process,
                               GError          **error)
{
  EtcdStore *self = ETCD_STORE (store);
  Holder *holder = g_hash_table_lookup (self->holders, name);
  g_autoptr(TesseraDynamicLockFile) updated = NULL;
  JsonNode *information;
  g_autofree char *short_name = key_name (name);
  gboolean written = FALSE;
  gint64 lease;

  if (holder == NULL || holder->lock_file == NULL || holder->create_revision == 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING, _("Lock file %s of %s is missing"),
                   name, self->parent.name);
      return FALSE;
    }
  information = tessera_dynamic_lock_file_get_information (holder->lock_file);
  updated = new_lock_file (self, name, tessera_dynamic_lock_file_get_job_uri (holder->lock_file), information,
                           process, tessera_dynamic_lock_file_get_mtime (holder->lock_file), error);
  lease = updated != NULL ? shared_lease_ensure (self->lease, error) : 0;
  /* Only over the holder as read: one removed meanwhile stays removed. */
  if (lease == 0 ||
      !tessera_etcd_pool_update_holder (self->pool, short_name, holder->create_revision, updated, lease, &written,
                                        NULL, error))
    return FALSE;
  if (!written)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING, _("Lock file %s of %s is missing"),
                   name, self->parent.name);
      return FALSE;
    }
  tessera_dynamic_lock_file_set_process (holder->lock_file, process);
  return TRUE;
}

static gboolean
etcd_store_check_holder_name (gpointer store, const char *job, GError **error)
{
  return tessera_etcd_pool_check_holder_name (job, error);
}

static gboolean
etcd_store_remove_holder (gpointer store, const char *job, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *name = g_strconcat (job, TESSERA_LOCK_FILE_SUFFIX, NULL);

  if (!g_hash_table_contains (self->holders, name))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING, _("Lock file %s of %s is missing"),
                   job, self->parent.name);
      return FALSE;
    }
  if (!tessera_etcd_pool_delete_holder (self->pool, job, NULL, error))
    return FALSE;
  drop_holder (self, name);
  return TRUE;
}

/* The holders as read: the store's own table, its holder_table. */
static const TesseraPoolStoreHolders etcd_store_holders = {
  .check_usable = etcd_store_check_usable,
  .get = etcd_store_get_holder,
  .get_whole = etcd_store_get_whole_holders,
  .list = etcd_store_list_holders,
  .forget = etcd_store_forget_holder,
  .delete_own = etcd_store_delete_own_holder,
  .check_name = etcd_store_check_holder_name,
  .remove = etcd_store_remove_holder,
};

static char *
etcd_store_dup_location (TesseraPoolStore *store)
{
  EtcdStore *self = ETCD_STORE (store);

  return self->pool != NULL ? g_strdup (tessera_etcd_pool_get_key (self->pool)) : NULL;
}

/* Asked of etcd: a holder's key goes when its lease ends. Once per
 * lease and read of the pool (a process's holders share its lease). */
static double
etcd_store_get_holder_lease_left (TesseraPoolStore *store, const char *name)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *full = g_str_has_suffix (name, TESSERA_LOCK_FILE_SUFFIX)
                            ? g_strdup (name)
                            : g_strconcat (name, TESSERA_LOCK_FILE_SUFFIX, NULL);
  Holder *holder = g_hash_table_lookup (self->holders, full);
  g_autoptr(GError) error = NULL;
  gpointer known;
  gint64 ttl = -1;

  if (holder == NULL || holder->lease == 0)
    return -1;
  if (self->ttls == NULL || self->ttls_revision != self->revision)
    {
      g_clear_pointer (&self->ttls, g_hash_table_unref);
      self->ttls = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
      self->ttls_revision = self->revision;
    }
  if ((known = g_hash_table_lookup (self->ttls, &holder->lease)) != NULL)
    return *(double *) known;
  if (!tessera_etcd_client_lease_time_to_live (self->client, holder->lease, &ttl, NULL, &error))
    {
      g_debug ("Lease of holder %s of etcd pool %s: %s", name, tessera_etcd_pool_get_key (self->pool),
               error->message);
      return -1;
    }
  g_hash_table_insert (self->ttls, g_memdup2 (&holder->lease, sizeof holder->lease),
                       g_memdup2 (&(double) { ttl >= 0 ? (double) ttl : -1 }, sizeof (double)));
  return ttl >= 0 ? (double) ttl : -1;
}

static char *
etcd_store_dup_holder_location (TesseraPoolStore *store, const char *name)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *short_name = key_name (name);

  return self->pool != NULL ? tessera_etcd_pool_dup_holder_key (self->pool, short_name) : NULL;
}

/* ---------------------------------------------------------------------- */
/* This process's liveness proof: the lease */

static void
etcd_store_hold (gpointer store)
{
  g_atomic_int_inc (&ETCD_STORE (store)->holds);
}

static void
etcd_store_unhold (gpointer store)
{
  EtcdStore *self = ETCD_STORE (store);

  if (g_atomic_int_get (&self->holds) > 0)
    g_atomic_int_add (&self->holds, -1);
}

static double
etcd_store_get_unrenewed (gpointer store)
{
  EtcdStore *self = ETCD_STORE (store);

  return g_atomic_int_get (&self->holds) > 0 && self->lease != NULL ? shared_lease_unrenewed (self->lease) : 0;
}

static double
etcd_store_get_lease (gpointer store)
{
  return ETCD_STORE (store)->ttl;
}

/* Granted before the first holder is written (again once lost): the
 * keep-alive thread renews it. */
static gboolean
etcd_store_renew (gpointer store, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);

  return shared_lease_ensure (self->lease, error) != 0;
}

static gboolean
etcd_store_host_expired (gpointer store, const char *host_id)
{
  return FALSE;
}

/* Called on the store itself (its proof from create on). */
static const TesseraPoolStoreLiveness etcd_store_liveness = {
  etcd_store_hold,
  etcd_store_unhold,
  etcd_store_get_unrenewed,
  etcd_store_get_lease,
  etcd_store_renew,
  etcd_store_host_expired,
};

/* ---------------------------------------------------------------------- */
/* Informations */

static JsonNode *
etcd_store_read_informations (gpointer store, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autoptr(TesseraEtcdPoolState) state = tessera_etcd_pool_read (self->pool, NULL, error);

  if (state == NULL)
    return NULL;
  if (state->informations_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&state->informations_error));
      return NULL;
    }
  if (state->informations == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION, _("etcd pool %s has no informations"),
                   tessera_etcd_pool_get_key (self->pool));
      return NULL;
    }
  return g_steal_pointer (&state->informations);
}

static gboolean
etcd_store_write_informations (gpointer store, JsonNode *informations, GError **error)
{
  return tessera_etcd_pool_put_informations (ETCD_STORE (store)->pool, informations, NULL, error);
}

/* Applied again by the next refresh. */
static void
etcd_store_forget_informations (gpointer store)
{
  g_clear_pointer (&ETCD_STORE (store)->informations, g_bytes_unref);
}

/* The pool's informations key, on the store itself. */
static const TesseraPoolStoreInformations etcd_store_informations = {
  .read = etcd_store_read_informations,
  .write = etcd_store_write_informations,
  .forget = etcd_store_forget_informations,
};

/* ---------------------------------------------------------------------- */
/* The waiters' queue: `queue/` keys */

static void
etcd_store_queue_read (TesseraPoolStore *store,
                       const char       *own_name,
                       gint64            own_place,
                       GPtrArray        *ahead,
                       gint64           *last_place,
                       gint64           *own_found)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *own = key_name (own_name);

  for (guint i = 0; self->queue != NULL && i < self->queue->len; i++)
    {
      TesseraEtcdHolder *entry = g_ptr_array_index (self->queue, i);
      gint64 place = entry->kv->create_revision;

      *last_place = MAX (*last_place, place);
      if (g_str_equal (entry->name, own))
        {
          *own_found = place;
          continue;
        }
      /* Its waiter's lease is its liveness: etcd deletes a dead one's.
       * Tessera puts every entry on one: a key without is a co-user's,
       * which would otherwise reserve for ever. */
      if (entry->reserve && entry->kv->lease != 0 && entry->lock_file != NULL &&
          tessera_dynamic_lock_file_is_valid (entry->lock_file) && (own_place <= 0 || place < own_place))
        g_ptr_array_add (ahead, g_object_ref (entry->lock_file));
    }
}

/* Written once, on this process's lease: rewriting it would only wake
 * every watcher and refuse every decision made meanwhile. */
static gboolean
etcd_store_queue_put (TesseraPoolStore *store,
                      const char       *own_name,
                      const char       *text,
                      gint64            own_found,
                      gint64           *place,
                      char            **location,
                      GError          **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *name = key_name (own_name);
  gint64 lease, revision = 0;

  if (own_found > 0)
    {
      *place = own_found;
      *location = tessera_etcd_pool_dup_queue_key (self->pool, name);
      return TRUE;
    }
  lease = shared_lease_ensure (self->lease, error);
  if (lease == 0 || !tessera_etcd_pool_put_queue_entry (self->pool, name, text, lease, &revision, NULL, error))
    return FALSE;
  *place = revision;
  *location = tessera_etcd_pool_dup_queue_key (self->pool, name);
  return TRUE;
}

static void
etcd_store_queue_delete (TesseraPoolStore *store, const char *location)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autoptr(GError) error = NULL;

  if (!tessera_etcd_pool_delete_queue_entry (self->pool, location, NULL, &error))
    g_warning (_("Cannot delete queue entry %s: %s"), location, error->message);
}

static const TesseraPoolStoreQueue etcd_store_queue = {
  etcd_store_queue_read,
  etcd_store_queue_put,
  etcd_store_queue_delete,
};

/* ---------------------------------------------------------------------- */
/* Side entries: `KIND/NAME` keys */

/* Only those on a lease: Tessera puts every one on its process's, and a
 * key without is a co-user's, which would otherwise count for ever. */
static GHashTable *
etcd_store_side_list (TesseraPoolStore *store, const char *kind)
{
  EtcdStore *self = ETCD_STORE (store);
  GHashTable *entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *prefix = tessera_etcd_pool_dup_side_key (self->pool, kind, "");

  for (guint i = 0; self->side != NULL && i < self->side->len; i++)
    {
      TesseraEtcdKv *kv = g_ptr_array_index (self->side, i);
      gsize length = 0;
      const char *data = g_bytes_get_data (kv->value, &length);

      if (kv->lease != 0 && g_str_has_prefix (kv->key, prefix))
        g_hash_table_insert (entries, g_strdup (kv->key + strlen (prefix)),
                             g_strndup (data != NULL ? data : "", length));
    }
  return entries;
}

static gboolean
etcd_store_side_put (TesseraPoolStore *store,
                     const char       *kind,
                     const char       *name,
                     const char       *text,
                     GError          **error)
{
  EtcdStore *self = ETCD_STORE (store);
  gint64 lease = shared_lease_ensure (self->lease, error);

  return lease != 0 && tessera_etcd_pool_put_side_entry (self->pool, kind, name, text, lease, NULL, error);
}

static gboolean
etcd_store_side_delete (TesseraPoolStore *store, const char *kind, const char *name, GError **error)
{
  EtcdStore *self = ETCD_STORE (store);
  g_autofree char *key = tessera_etcd_pool_dup_side_key (self->pool, kind, name);

  if (g_atomic_pointer_get (&self->decider) == g_thread_self ())
    {
      g_ptr_array_add (self->side_deletes, g_steal_pointer (&key));
      return TRUE;
    }
  return tessera_etcd_pool_delete_side_key (self->pool, key, NULL, error);
}

/* ---------------------------------------------------------------------- */
/* Making one */

static const char * const etcd_settings[] = {
  "endpoints", "prefix", "lease", "ca", "cert", "key", "user", "password", "request-timeout", NULL,
};

static TesseraPoolStore *
etcd_store_create (TesseraTrackedDynamicResource  *owner,
                   const TesseraPoolStoreOwner    *owner_calls,
                   const TesseraPoolStoreSettings *settings,
                   GError                        **error);

static const TesseraPoolStoreClass etcd_store_class = {
  .name = "etcd",
  .wakes_waiters = TRUE,
  .waiting_in_side_entries = TRUE,   /* `waiting/NAME`, on the waiter's lease */
  .settings = etcd_settings,
  .create = etcd_store_create,
  .open = etcd_store_open,
  .load = etcd_store_load,
  .stop = etcd_store_stop,
  .free = etcd_store_free,
  .begin = etcd_store_begin,
  .end = etcd_store_end,
  .refresh = etcd_store_refresh,
  .commit = etcd_store_commit,
  .get_token = etcd_store_get_token,
  .force_scan = etcd_store_force_scan,
  .holders = &etcd_store_holders,
  .judge_all = etcd_store_judge_all,
  .put_holder = etcd_store_put_holder,
  .set_holder_process = etcd_store_set_holder_process,
  .dup_holder_location = etcd_store_dup_holder_location,
  .liveness = &etcd_store_liveness,
  .informations = &etcd_store_informations,
  .queue = &etcd_store_queue,
  .dup_location = etcd_store_dup_location,
  .get_holder_lease_left = etcd_store_get_holder_lease_left,
  .side_list = etcd_store_side_list,
  .side_put = etcd_store_side_put,
  .side_delete = etcd_store_side_delete,
};

/* A setting's bad value: one line, naming the setting. */
static void
setting_error (GError **error, const char *setting, const GError *why)
{
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION, _("etcd store setting “%s”: %s"),
               setting, why->message);
}

static TesseraPoolStore *
etcd_store_create (TesseraTrackedDynamicResource  *owner,
                   const TesseraPoolStoreOwner    *owner_calls,
                   const TesseraPoolStoreSettings *settings,
                   GError                        **error)
{
  g_autoptr(GError) local = NULL;
  EtcdStore *self;

  if (settings->endpoints == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("The etcd store needs “endpoints” (http://HOST:PORT, comma-separated)"));
      return NULL;
    }
  if (settings->lease != 0 && settings->lease < LEASE_MIN)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("etcd store setting “lease”: %g s is too short (at least %g s)"), settings->lease, LEASE_MIN);
      return NULL;
    }
  /* libsoup's deadlines are whole seconds; past the retry time (30 s) a
   * member that hangs would outlast the whole call. */
  if (settings->request_timeout != 0 &&
      (settings->request_timeout < 1 || settings->request_timeout > REQUEST_TIMEOUT_MAX ||
       settings->request_timeout != (double) (guint) settings->request_timeout))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("etcd store setting “request-timeout”: %g s is not a whole number of seconds from 1 to %g"),
                   settings->request_timeout, REQUEST_TIMEOUT_MAX);
      return NULL;
    }
  self = g_new0 (EtcdStore, 1);
  self->parent.klass = &etcd_store_class;
  self->parent.proof = self;
  self->parent.holder_table = self;
  self->parent.informations_table = self;
  self->owner = owner;
  g_mutex_init (&self->watch_mutex);
  self->holders = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, holder_free);
  self->side_deletes = g_ptr_array_new_with_free_func (g_free);
  self->cancellable = g_cancellable_new ();
  self->endpoints = g_strsplit (settings->endpoints, ",", -1);
  self->prefix = g_strdup (settings->prefix != NULL ? settings->prefix : DEFAULT_PREFIX);
  self->ttl = settings->lease != 0 ? settings->lease : DEFAULT_LEASE;
  self->client = tessera_etcd_client_new ((const char * const *) self->endpoints, &local);
  if (self->client == NULL)
    {
      setting_error (error, "endpoints", local);
      etcd_store_free (&self->parent);
      return NULL;
    }
  tessera_etcd_client_start_anywhere (self->client);
  if (settings->request_timeout != 0)
    tessera_etcd_client_set_request_timeout (self->client, (guint) settings->request_timeout);
  if ((settings->ca != NULL || settings->cert != NULL) &&
      !tessera_etcd_client_set_tls (self->client, settings->ca, settings->cert, settings->key, &local))
    {
      setting_error (error, settings->cert != NULL && settings->ca == NULL ? "cert" : "ca", local);
      etcd_store_free (&self->parent);
      return NULL;
    }
  if (settings->key != NULL && settings->cert == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("etcd store setting “key” needs “cert”"));
      etcd_store_free (&self->parent);
      return NULL;
    }
  if (settings->user != NULL)
    tessera_etcd_client_set_auth (self->client, settings->user, settings->password);
  self->lease = shared_lease_get (self->client, settings, (gint64) self->ttl);
  return &self->parent;
}

/* The module's entry point (tessera-plugin-module.c): the store only, no
 * GType. */
G_MODULE_EXPORT void tessera_etcd_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_etcd_register_types (GTypeModule *module)
{
  _tessera_pool_store_register (&etcd_store_class);
}
