/* tessera-pool-store-private.h: where a pool lives, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* The one private header a store plugin includes (with the public API):
 * it names no other. */
#include <tessera/tessera.h>

G_BEGIN_DECLS

/* A pool lives in a store: the folder store (built in, experimaestro's
 * format: tessera-pool-store-folder.c) or, later, a store from a module
 * (an etcd cluster). The store owns I/O, mutual exclusion between
 * processes, change notification and the liveness of what it cannot see;
 * the tracked resource above it, its owner, owns the thread lock and
 * calls the store in this order for every decision:
 *
 *   begin (no lock held: folder: takes ipc.lock; etcd: nothing)
 *     thread lock
 *       refresh (folder: reads what changed; etcd: reads the pool's keys
 *                at a revision)
 *       holders: get, list, put, forget, delete, set process, remove
 *       commit (folder: none, every write was made under ipc.lock;
 *               etcd: one transaction, refused when anything under the
 *               pool changed since the revision read: the caller decides
 *               again)
 *     thread unlock
 *   end (folder: releases ipc.lock)
 *
 * Resource types never see the store: they count lock-file JSON, whichever
 * store it came from. Private to the project, not public API. */
typedef struct _TesseraPoolStore      TesseraPoolStore;
typedef struct _TesseraPoolStoreClass TesseraPoolStoreClass;
typedef struct _TesseraPoolStoreQueue TesseraPoolStoreQueue;
typedef struct _TesseraPoolStoreLiveness TesseraPoolStoreLiveness;
typedef struct _TesseraPoolStoreHolders TesseraPoolStoreHolders;
typedef struct _TesseraPoolStoreInformations TesseraPoolStoreInformations;

/* What a store calls in the resource it serves (upward), its owner:
 * the resource type's class (TesseraPoolStore's owner_class), under the
 * locks its documentation names: account_lock_file and
 * unaccount_lock_file as holders count and stop counting,
 * handle_information_change for new informations,
 * initialize_informations (what a new pool's informations say) and
 * reset_state (forget every holding, before the first full read), both
 * from @load; tessera_dynamic_resource_notify_changed() when something
 * changed (no lock held); and the owner's own calls below. */

/**
 * TesseraPoolStoreOwner:
 * @lock_thread: takes the owner's thread lock, from the poller's thread
 *   (a change was heard, a holder exited).
 * @unlock_thread: releases it.
 * @audit_reclaim: keeps a dead holder's reclaim for the owner's audit
 *   log (_tessera_tracked_dynamic_resource_audit_reclaim()): its lock
 *   file @name removed, or (@left) left to its owner. Thread lock held.
 *
 * The tracked resource's own functions that a store calls, given at
 * @create with the resource (the owner), which outlives the store.
 *
 * Why a table and not the owner's class: these are not virtual
 * functions (no type overrides the thread lock or the audit), the
 * class struct is public API and would have to grow to carry them, and
 * calling them by name from the store's units would make a cycle
 * (tracked resource -> folder store -> lock file cache -> tracked
 * resource) that the layers suite refuses. What a type does differently
 * (its accounting and informations) the store calls through the class
 * (owner_class).
 */
typedef struct
{
  void (*lock_thread)   (TesseraTrackedDynamicResource *owner);
  void (*unlock_thread) (TesseraTrackedDynamicResource *owner);
  void (*audit_reclaim) (TesseraTrackedDynamicResource *owner,
                         const char                    *name,
                         TesseraDynamicLockFile        *lock_file,
                         const char                    *reason,
                         gboolean                       left);
} TesseraPoolStoreOwner;

/* Where the pool lives, as configured (`store=`, `endpoints=`, …: the
 * tracked resource's store settings, tessera-pool-store-settings.c).
 * Strings are %NULL and numbers 0 when not given. */
typedef struct
{
  char  *store;       /* a store's name; NULL: "folder" */
  char  *endpoints;   /* comma-separated URLs */
  char  *prefix;
  double lease;       /* seconds */
  char  *ca;
  char  *cert;
  char  *key;
  char  *user;
  char  *password;
  double request_timeout;   /* seconds */
} TesseraPoolStoreSettings;

#define TESSERA_POOL_STORE_N_SETTINGS 10

/* Installs the settings as properties @first_id… of @klass (a tracked
 * resource's), read and written through the two calls below with
 * @index = property id - @first_id. */
void     _tessera_pool_store_settings_install (GObjectClass             *klass,
                                               guint                     first_id);
void     _tessera_pool_store_settings_set     (TesseraPoolStoreSettings *settings,
                                               guint                     index,
                                               const GValue             *value);
void     _tessera_pool_store_settings_get     (TesseraPoolStoreSettings *settings,
                                               guint                     index,
                                               GValue                   *value);
void     _tessera_pool_store_settings_clear   (TesseraPoolStoreSettings *settings);
/* Whether the store is another than the folder (no lock folder needed). */
gboolean _tessera_pool_store_settings_elsewhere (const TesseraPoolStoreSettings *settings);
/* Makes *@folder (the resource's `path`, owned) absolute, %NULL when
 * empty; %FALSE with %TESSERA_ERROR_INVALID_CONFIGURATION when there is
 * none and the store is the folder. */
gboolean _tessera_pool_store_settings_check_folder (const TesseraPoolStoreSettings *settings,
                                                    char                          **folder,
                                                    GError                        **error);
/* %FALSE with %TESSERA_ERROR_INVALID_CONFIGURATION when a setting is given
 * that store @klass does not read. */
gboolean _tessera_pool_store_settings_check   (const TesseraPoolStoreSettings *settings,
                                               const TesseraPoolStoreClass    *klass,
                                               GError                        **error);

/* Begin gave no exclusive lock but the caller may go on (read-only: none
 * could be taken). */
#define TESSERA_POOL_STORE_NO_LOCK G_MAXINT

/**
 * TesseraPoolStoreQueue:
 * @read: reads the queue of waiters past their patience (a folder's
 *   `queue/`, an etcd pool's `queue/` keys; see tessera-wait-queue.c):
 *   adds to @ahead the lock files (shaped like a holder's; "information"
 *   is what the waiter asks for) of the live reserving entries placed
 *   before @own_place (every one when @own_place is 0), removes the
 *   entries of waiters it finds gone (judged with the store's min_age),
 *   and sets @last_place to the largest place read and @own_found to the
 *   place of @own_name's own entry as read (0: none). Between @begin and
 *   @end, after a @refresh, thread lock held.
 * @put: makes @own_name's entry (@text, its JSON) be in the queue.
 *   *@place is in: the place asked (@own_found as read, or one past the
 *   last place); out: the place it has (a folder writes the one asked,
 *   rewriting the entry so that its time tells other hosts it still
 *   waits; etcd keeps an entry it read, else writes one on this
 *   process's lease, placed by its create revision). *@location: where
 *   it lives, for @remove. Between @begin and @end.
 * @remove: deletes our own entry at @location; one already gone is no
 *   error (a warning for others). Any thread, no lock.
 *
 * The waiters' queue of a store (TesseraPoolStoreClass's @queue), called
 * as `store->klass->queue->read (store, …)`; @begin, @end and @refresh
 * are the class's. The folder store's is the wait queue's own
 * (tessera-wait-queue.c). Every member is set.
 */
struct _TesseraPoolStoreQueue
{
  void      (*read)   (TesseraPoolStore  *store,
                       const char        *own_name,
                       gint64             own_place,
                       GPtrArray         *ahead,
                       gint64            *last_place,
                       gint64            *own_found);
  gboolean  (*put)    (TesseraPoolStore  *store,
                       const char        *own_name,
                       const char        *text,
                       gint64             own_found,
                       gint64            *place,
                       char             **location,
                       GError           **error);
  void      (*remove) (TesseraPoolStore  *store,
                       const char        *location);
};

/**
 * TesseraPoolStoreLiveness:
 * @hold: this process holds one more thing here (keep its liveness
 *   proof alive: a host lease, a store lease). Between @begin and @end.
 * @unhold: one thing fewer. Between @begin and @end.
 * @get_unrenewed: seconds this process has held something here without
 *   renewing its liveness proof (0: none, or nothing held). Any thread.
 * @get_lease: the time to live of this process's liveness proof (the
 *   pool's recorded one wins over the configured one); 0: none. Any
 *   thread.
 * @host_expired: whether the liveness proof of host @host_id (a host
 *   lease) expired, so what its processes left here is gone. Between
 *   @begin and @end; asked by the holder monitor only (one place judges
 *   a holder: scripts/check-layers.py fails on another caller).
 * @renew: renews this process's liveness proof before a holder is
 *   written, so the holder never outlives it unseen. Between @begin and
 *   @end.
 *
 * This process's liveness proof in a store, and other hosts'
 * (TesseraPoolStoreClass's @liveness), each called on the store's
 * @proof: `store->klass->liveness->hold (store->proof)`; @begin and @end
 * are the class's. The folder store's proof is the pool's host lease,
 * and these call the host lease's own functions
 * (tessera-host-lease-private.h), each through a function of the
 * member's exact type (in tessera-pool-store-folder.c). @proof is %NULL until @open made it:
 * then nothing is held here, nothing was left unrenewed (0), and the
 * lease is the configured one (the store's host_lease). Every member is
 * set.
 */
struct _TesseraPoolStoreLiveness
{
  void      (*hold)          (gpointer proof);
  void      (*unhold)        (gpointer proof);
  double    (*get_unrenewed) (gpointer proof);
  double    (*get_lease)     (gpointer proof);
  gboolean  (*renew)         (gpointer     proof,
                              GError     **error);
  gboolean  (*host_expired)  (gpointer     proof,
                              const char  *host_id);
};

/**
 * TesseraPoolStoreHolders:
 * @check_usable: %FALSE with @error when holders cannot be read or
 *   written safely here (a planted link, locks that do not cross hosts).
 *   Between @begin and @end.
 * @check_readable: optional: %FALSE with @error when holders could not
 *   all be read (a planted link, a failed listing), so what looks free
 *   may be held; looks only, writes nothing. Thread lock held. Without
 *   it, @check_usable stands in (a store whose check writes nothing).
 * @get: (transfer none) (nullable): the readable lock file of the holder
 *   @name (`task@identifier`). Thread lock held.
 * @get_whole: holders whose amount cannot be read (they hold
 *   everything). Thread lock held.
 * @list: (transfer container): the lock files that count (an entry that
 *   holds everything unread as one with its path and its problem only).
 *   Thread lock held.
 * @forget: @name no longer counts here; the store is left as it is.
 *   Thread lock held.
 * @delete_own: deletes our own holder @name, already forgotten; one
 *   already gone is no error. Between @begin and @end.
 * @check_name: whether @job is a holder's name that may be removed here.
 *   Any thread, no lock.
 * @remove: removes holder @job whatever its liveness;
 *   %TESSERA_ERROR_LOCK_FILE_MISSING when it holds nothing. Between
 *   @begin and @end.
 *
 * The holders a store has read (TesseraPoolStoreClass's @holders), each
 * called on the store's @holder_table:
 * `store->klass->holders->get (store->holder_table, name)`; @begin, @end
 * and what decides (@put_holder, @judge_all, @set_holder_process) are the
 * class's. The folder store's table is its lock-file cache, and these
 * call the cache's own functions (tessera-lock-file-cache-private.h),
 * each through a function of the member's exact type (in
 * tessera-pool-store-folder.c); the etcd store's is the store itself.
 * @holder_table is %NULL until @open made it (nothing is asked of it
 * before). Every member is set but the optional one.
 *
 * Three words, three meanings, each a member's and its fillers' (the
 * cache's _forget, _delete_own and _remove_holder, the etcd store's
 * forget_holder, delete_own_holder and remove_holder): to forget changes
 * only what this process has read (a release forgets its holder before
 * it deletes it); to delete_own deletes from the store a holder this
 * process wrote and already forgot; to remove forgets a holder and
 * deletes it from the store, whoever wrote it and whatever its liveness
 * (tessera_tracked_dynamic_resource_remove_holder(): `tessera clean`
 * for a holder nobody can judge).
 */
struct _TesseraPoolStoreHolders
{
  gboolean  (*check_usable)   (gpointer     table,
                               GError     **error);
  gboolean  (*check_readable) (gpointer     table,
                               GError     **error);
  TesseraDynamicLockFile *(*get) (gpointer     table,
                                  const char  *name);
  guint     (*get_whole)      (gpointer table);
  GPtrArray *(*list)          (gpointer table);
  void      (*forget)         (gpointer     table,
                               const char  *name);
  gboolean  (*delete_own)     (gpointer     table,
                               const char  *name,
                               GError     **error);
  gboolean  (*check_name)     (gpointer     table,
                               const char  *job,
                               GError     **error);
  gboolean  (*remove)         (gpointer     table,
                               const char  *job,
                               GError     **error);
};

/**
 * TesseraPoolStoreInformations:
 * @read: (transfer full): the pool's informations as they are now, or
 *   %NULL with %TESSERA_ERROR_INVALID_INFORMATION. Any thread, no lock.
 * @write: replaces them in the store, as they are (the resource applied
 *   them through its type first, which may refuse them: a shape the type
 *   rejects is never stored). Between @begin and @end, thread lock held.
 * @forget: forgets the informations last applied, so that the next
 *   @refresh applies what the store has again (after a @write, whatever
 *   happened: a failed apply may have left the type half changed).
 *   Thread lock held.
 *
 * The pool's informations in a store (TesseraPoolStoreClass's
 * @informations), each called on the store's @informations_table:
 * `store->klass->informations->read (store->informations_table, error)`.
 * The folder store's table is its informations.json, and these call its
 * own functions (tessera-resource-informations-private.h), each through
 * a function of the member's exact type (in
 * tessera-pool-store-folder.c); the etcd
 * store's is the store itself. @informations_table is %NULL until @open
 * made it. Every member is set.
 */
struct _TesseraPoolStoreInformations
{
  JsonNode *(*read)   (gpointer     table,
                       GError     **error);
  gboolean  (*write)  (gpointer     table,
                       JsonNode    *informations,
                       GError     **error);
  void      (*forget) (gpointer table);
};

/**
 * TesseraPoolStoreClass:
 * @name: the store's name in a configuration (`store=folder`)
 * @wakes_waiters: its change notification misses nothing (etcd's watch,
 *   which wakes the waiters again after any gap): waiters of a resource
 *   that is not read-only are not polled, unless `TESSERA_POLL_INTERVAL`
 *   is set
 * @waiting_in_side_entries: the entries of the waiters within their
 *   patience (who reserve nothing yet, listed for people) are its side
 *   entries `waiting/NAME` (@side_put), each on its waiter's lease
 *   (etcd); %FALSE: files `queue/NAME.waiting` of the pool's folder
 *   (the folder store's, tessera-wait-queue.c), or none without one
 * @settings: the names of the settings it reads (besides `store`); a
 *   setting it does not read is refused
 * @create: makes a store for @owner (with its @owner_calls), from the
 *   settings; %NULL with @error for a bad value. Nothing is touched
 *   until @open. No lock held.
 * @open: prepares the pool (made unless read-only) and what tells its
 *   changes, with the settings the owner set in the store before
 *   (TesseraPoolStore's lock_file_type, read_only, min_age, name and
 *   host_lease). Called once, from the resource's init, no lock held.
 * @load: right after @open, between @begin and @end, thread lock held:
 *   sets up a new pool's informations (kept in memory when read-only),
 *   resets the resource type, reads every holder, and refuses a pool of
 *   a newer protocol.
 * @stop: stops the store's sources in the poller's thread (dispose).
 *   Any thread, thread lock held.
 * @free: frees the store. No lock held, no source left.
 * @begin: takes the exclusion between processes, before the thread lock:
 *   a token for @end, %TESSERA_POOL_STORE_NO_LOCK, or -1 with @error.
 *   Any thread; may block (a peer holds ipc.lock).
 * @end: gives back what @begin took, thread lock held. Any thread.
 * @refresh: the seed's `_update`: brings the holders up to date
 *   (everything when @full), removing those whose holder is gone; %TRUE
 *   when the accounting or the informations changed. Between @begin and
 *   @end, thread lock held.
 * @commit: optional (%NULL: every write since @begin is one decision as
 *   it is made, as the folder's under ipc.lock; the caller goes on as if
 *   it returned %TRUE): makes the writes since @begin one decision: %FALSE with
 *   %G_IO_ERROR_BUSY when a peer changed the pool meanwhile (nothing was
 *   written: the caller decides again), or with another error. Between
 *   @begin and @end, thread lock held.
 * @get_token: the fencing token of the holder put since @begin, once
 *   @commit made it one: larger than every token of an earlier grant of
 *   the pool, whichever process or host made it (folder: the pool's
 *   counter, `fence.UID`, raised by @put_holder under ipc.lock;
 *   etcd: the holder key's create revision). Between @begin and @end,
 *   after a @commit that succeeded, thread lock held.
 * @force_scan: the next @refresh reads everything. Thread lock held.
 * @holders: the holders it has read (TesseraPoolStoreHolders, on the
 *   store's holder_table).
 * @judge_all: judges every holder not judged yet (a store may count a
 *   holder unjudged until its share is needed: fail closed), removing
 *   those gone; from then on holders are judged as they are read. %TRUE
 *   when the accounting changed. Between @begin and @end, after a
 *   @refresh, thread lock held.
 * @put_holder: writes the holder @name for @job with @information: it
 *   counts at once; a folder raises its fencing counter first (see
 *   @get_token), and fails when it cannot. Between @begin and @end.
 * @set_holder_process: writes @process into holder @name and judges it
 *   again; %TESSERA_ERROR_LOCK_FILE_MISSING when there is no such holder.
 *   Between @begin and @end.
 * @dup_holder_location: (transfer full) (nullable): where holder @name
 *   lives, for people (a path, a key); %NULL when @open failed early.
 *   Any thread.
 * @liveness: this process's liveness proof here, and other hosts'
 *   (TesseraPoolStoreLiveness, on the store's proof).
 * @informations: the pool's informations (TesseraPoolStoreInformations,
 *   on the store's informations_table).
 * @queue: the waiters' queue (TesseraPoolStoreQueue).
 * @dup_location: (transfer full) (nullable): where the pool lives, for
 *   people (a folder's path, an etcd pool's key); %NULL when @open failed
 *   early. Any thread.
 * @get_holder_lease_left: optional (%NULL: holders have no liveness
 *   proof of their own, as a folder's, whose host lease is the host's:
 *   the caller answers -1): seconds the liveness proof of holder @name
 *   (an etcd lease) has left, asked of the store now; -1 when the store
 *   has none for it, or it is gone. Thread lock held; may wait for the
 *   store.
 * @side_list: optional (with @side_put and @side_delete; %NULL: the
 *   store keeps no side entries, and nothing stands in for them, not
 *   even a lock folder the pool may have: the resource's
 *   keeps_side_entries says %FALSE, a type's list is empty and its put
 *   fails with %G_IO_ERROR_NOT_SUPPORTED, so a mutex there keeps no
 *   intents and its exclusive requests hold no shared one back; the
 *   folder store keeps them as files of its side folders, through
 *   tessera-side-folder.c, which it gives its lock folder's path and
 *   read_only):
 *   (transfer full): the side entries of kind @kind as last read (name →
 *   text), small JSON texts that a resource type keeps in the pool beside
 *   its holders (the mutex's intents), whose liveness is the store's
 *   (etcd: only those on a lease). Between @begin and @end, after a
 *   @refresh, thread lock held.
 * @side_put: writes side entry @name of kind @kind, @text, so that it
 *   lives no longer than this process (etcd: on its lease); written at
 *   once, and it changes the pool (a peer's decision read before it is
 *   refused). Between @begin and @end, thread lock held.
 * @side_delete: deletes side entry @name of kind @kind; one already gone
 *   is no error. Asked by the thread deciding between @begin and @end,
 *   it is done by the @commit that writes a holder, after it (what the
 *   entry kept out stays out until the holder counts), and forgotten at
 *   @end when none is written (the decision was not made: what the entry
 *   says still holds); asked otherwise (a request given up), at once.
 *   Any thread.
 *
 * The operations of a store. Every member is set but the optional ones.
 */
struct _TesseraPoolStoreClass
{
  const char *name;
  gboolean wakes_waiters;
  gboolean waiting_in_side_entries;
  const char * const *settings;

  TesseraPoolStore *(*create)     (TesseraTrackedDynamicResource  *owner,
                                   const TesseraPoolStoreOwner    *owner_calls,
                                   const TesseraPoolStoreSettings *settings,
                                   GError                        **error);
  gboolean  (*open)               (TesseraPoolStore       *store,
                                   const char             *location,
                                   GError                **error);
  gboolean  (*load)               (TesseraPoolStore       *store,
                                   GError                **error);
  void      (*stop)               (TesseraPoolStore       *store);
  void      (*free)               (TesseraPoolStore       *store);

  int       (*begin)              (TesseraPoolStore       *store,
                                   GError                **error);
  void      (*end)                (TesseraPoolStore       *store,
                                   int                     token);
  gboolean  (*refresh)            (TesseraPoolStore       *store,
                                   gboolean                full);
  gboolean  (*commit)             (TesseraPoolStore       *store,
                                   GError                **error);
  void      (*force_scan)         (TesseraPoolStore       *store);

  const TesseraPoolStoreHolders *holders;
  gboolean  (*judge_all)          (TesseraPoolStore       *store);
  gboolean  (*put_holder)         (TesseraPoolStore       *store,
                                   const char             *name,
                                   TesseraJob             *job,
                                   JsonNode               *information,
                                   GError                **error);
  gboolean  (*set_holder_process) (TesseraPoolStore       *store,
                                   const char             *name,
                                   TesseraProcess         *process,
                                   GError                **error);
  char     *(*dup_holder_location) (TesseraPoolStore      *store,
                                    const char            *name);

  const TesseraPoolStoreLiveness *liveness;

  const TesseraPoolStoreInformations *informations;

  const TesseraPoolStoreQueue *queue;
  char     *(*dup_location)       (TesseraPoolStore       *store);
  double    (*get_holder_lease_left) (TesseraPoolStore    *store,
                                      const char          *name);
  gint64    (*get_token)          (TesseraPoolStore       *store);

  GHashTable *(*side_list)        (TesseraPoolStore       *store,
                                   const char             *kind);
  gboolean  (*side_put)           (TesseraPoolStore       *store,
                                   const char             *kind,
                                   const char             *name,
                                   const char             *text,
                                   GError                **error);
  gboolean  (*side_delete)        (TesseraPoolStore       *store,
                                   const char             *kind,
                                   const char             *name,
                                   GError                **error);
};

/* Every store starts with this: its class, and the resource's settings
 * that are the store's. The owner sets them once, at its open, before
 * the class's @open (a store made by @create starts with zeros); the
 * store keeps them, and no operation is given them again. */
struct _TesseraPoolStore
{
  const TesseraPoolStoreClass *klass;
  /* The resource the store serves, and its calls that a store makes
   * (those given to @create, which a store may keep too), so that the
   * units a store is made of call its owner directly (the folder
   * store's lock file cache). The owner outlives the store. */
  TesseraTrackedDynamicResource *owner;
  const TesseraPoolStoreOwner *owner_calls;
  /* The owner's type's class, which the store calls (see above): its
   * accounting and informations. Set at open, since the owner's class
   * is its own type's only once it is made. */
  TesseraTrackedDynamicResourceClass *owner_class;
  /* What the holders' lock files are made as: a concrete
   * TesseraDynamicLockFile type (the resource type's). */
  GType lock_file_type;
  /* Only looking: nothing is made, changed or removed (`tessera status`). */
  gboolean read_only;
  /* Seconds this host must have seen a holder's or a waiter's file
   * unchanged before a lost job lock makes it gone (the resource's
   * min-age): read here, where it is kept, by what judges (the folder
   * store's lock file cache, at each refresh and set_holder_process,
   * and the queue's read), never passed on. Thread lock: the owner's
   * open gives it (and a store chosen then takes it over) under it,
   * and the resource's min-age setter, in any thread, changes it under
   * it from then on; read under it. */
  double min_age;
  /* The host lease asked for (the resource's host-lease, seconds; 0:
   * none): @open's, and the lease while @proof is %NULL. */
  double host_lease;
  /* What the class's @liveness is called on (the folder store's host
   * lease, set by its @open; the etcd store itself, from @create); %NULL
   * until then. Set once, read from any thread. */
  gpointer proof;
  /* What the class's @holders is called on (the folder store's lock-file
   * cache, set by its @open; the etcd store itself, from @create); %NULL
   * until then. Set once. */
  gpointer holder_table;
  /* What the class's @informations is called on (the folder store's
   * informations.json, set by its @open; the etcd store itself, from
   * @create); %NULL until then. Set once. */
  gpointer informations_table;
  /* The folder store's lock folder unit, set by its @open (%NULL on any
   * other store): its queue (tessera-wait-queue.c) reaches queue/ from
   * the unit's kept descriptor, as jobs/ and hosts/ are. Set once. */
  struct _TesseraLockFolder *lock_folder;
  /* The resource's name, else its folder, for messages (borrowed: the
   * resource's, which outlives the store). */
  const char *name;
};

/* The folder store, built in, its class's @create: @owner and
 * @owner_calls outlive it; @settings (nullable) are not read, and it
 * never fails. Nothing is touched until its open. */
TesseraPoolStore *_tessera_pool_store_folder_new (TesseraTrackedDynamicResource  *owner,
                                                  const TesseraPoolStoreOwner    *owner_calls,
                                                  const TesseraPoolStoreSettings *settings,
                                                  GError                        **error);

/* A store from a module (tessera-pool-store-lookup.c): its entry point
 * registers its class, which lives as long as the process. */
TESSERA_AVAILABLE_IN_ALL
void              _tessera_pool_store_register   (const TesseraPoolStoreClass *klass);
/* The class of store @name: the built-in folder store, or the one a
 * plugin's manifest lists in `Stores=`, its module loaded now. %NULL with
 * %TESSERA_ERROR_INVALID_CONFIGURATION or %TESSERA_ERROR_PLUGIN_NOT_FOUND. */
const TesseraPoolStoreClass *_tessera_pool_store_lookup (const char *name,
                                                         GError    **error);

/* The units above a store call its class (`store->klass->refresh (store,
 * …)`) and its interfaces in one step; what each operation means, and
 * under which lock, is said above. A store keeps side entries when its
 * class has @side_list, and only then (see there). */

/* What tessera_dynamic_lock_file_get_mtime() says of @lock_file, for a
 * store without files (etcd, a module): when its holder was written, in
 * nanoseconds since the epoch (tessera-dynamic-lock-file.c). */
TESSERA_AVAILABLE_IN_ALL
void _tessera_dynamic_lock_file_set_mtime (TesseraDynamicLockFile *lock_file,
                                           gint64                  mtime_ns);

/* The folder's queue (tessera-wait-queue.c), the folder store's @queue:
 * the entries of `queue/` in the store's location, a pool folder. */
extern const TesseraPoolStoreQueue _tessera_wait_queue_folder;

G_END_DECLS
