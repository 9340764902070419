/* tessera-tracked-dynamic-resource.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-dynamic-resource.h>
#include <tessera/tessera-dynamic-dependency.h>
#include <tessera/tessera-dynamic-lock-file.h>

G_BEGIN_DECLS

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
#define TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE (tessera_tracked_dynamic_resource_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraTrackedDynamicResource, tessera_tracked_dynamic_resource, TESSERA, TRACKED_DYNAMIC_RESOURCE, TesseraDynamicResource)

/**
 * TesseraTrackedDynamicResourceClass:
 * @parent_class: the parent class
 * @reset_state: optional: forgets all accounting before lock files are read
 *   again
 * @account_lock_file: required: counts a valid lock file against the
 *   capacity
 * @unaccount_lock_file: required: undoes @account_lock_file for a lock file
 *   that is gone
 * @is_available: required: whether @dependency can be granted now, or why
 *   not
 * @do_acquire: optional: claims what a granted @dependency holds, before its
 *   lock file is written
 * @do_release: optional: called before the lock file of @dependency is
 *   deleted
 * @get_lock_file_information: optional: the "information" to write in the
 *   lock file of @dependency
 * @handle_information_change: optional: applies informations.json
 * @initialize_informations: optional: the content of a new
 *   informations.json
 * @get_usage: optional: capacity and free units, for `tessera status`
 * @lock_file_type: the [class@Tessera.DynamicLockFile] subtype that reads
 *   this class's lock files (experimaestro's `lock_file_class`); set it in
 *   the class's `class_init` (there is no property: a resource's lock files
 *   are read by its type's rules, never by a per-instance choice)
 * @get_wait_information: optional: what a waiter past its patience
 *   reserves, for the folder's queue
 * @check_settings: optional: refuses settings the type cannot work with,
 *   when the resource is made
 * @dup_usage_text: optional: what `tessera status` says of the usage
 *   when "N of M free" would mislead (a mutex held shared)
 * @prepare_pool: optional: makes what the type keeps in its pool's folder
 *   beyond what every pool has (the mutex's `intents/`), for `tessera init`
 * @describe_request: optional: what a request asks for, for people (a
 *   waiter's entry in `tessera status`), reserving nothing
 *
 * The class of [class@Tessera.TrackedDynamicResource]: the counting rules of
 * a resource type. Each virtual function has its own page; in short, a
 * type must implement @account_lock_file, @unaccount_lock_file and
 * @is_available (with @reset_state when it keeps totals), and implements
 * the others when it writes per-holder or resource-level data.
 *
 * Threads: every virtual function here is called with the resource's
 * thread lock held, on the thread that called into the resource — the
 * application's thread for blocking calls, the thread running the
 * caller's main context for [method@Tessera.DynamicDependency.lock_async]
 * — or, for
 * @handle_information_change only, on the poller's thread; never
 * concurrently for one resource. All but @get_usage usually hold ipc.lock
 * too, so every process of the pool waits while they run: they must not
 * block (no I/O beyond what they are given, no waiting), and must not
 * call the resource's public methods (the thread lock is not recursive).
 */
/**
 * TesseraTrackedDynamicResourceClass::reset_state:
 * @self: the resource
 *
 * Forgets all accounting: Tessera is about to read every lock file again
 * and will call [vfunc@Tessera.TrackedDynamicResource.account_lock_file]
 * for each valid one. Implement it when the class keeps totals.
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 */

/**
 * TesseraTrackedDynamicResourceClass::account_lock_file:
 * @self: the resource
 * @lock_file: a valid lock file, of the class's
 *   `lock_file_type`
 *
 * Counts a holder: @lock_file appeared in `jobs/` (written by this
 * process, another process or experimaestro). Required for any type
 * with a capacity.
 *
 * What it counts must follow from the lock file's information alone
 * (its [class@Tessera.DynamicLockFile] subtype's reading of
 * "information"), never from its path, job or process: a fresh process
 * counts the holders its lock file index covers through one stand-in
 * lock file per distinct information, with an empty "job_uri" and no
 * process, and later moves each holder's share from the stand-in to its
 * own lock file (an @unaccount_lock_file of the one, an
 * @account_lock_file of the other).
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 */

/**
 * TesseraTrackedDynamicResourceClass::unaccount_lock_file:
 * @self: the resource
 * @lock_file: a lock file that was passed to
 *   [vfunc@Tessera.TrackedDynamicResource.account_lock_file]
 *
 * Undoes the accounting of @lock_file: its holder released it, died or
 * the file changed (it is then accounted again as read now).
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 */

/**
 * TesseraTrackedDynamicResourceClass::is_available:
 * @self: the resource
 * @dependency: the request, as
 *   [vfunc@Tessera.DynamicResource.create_dependency] made it
 * @error: return location for a #GError
 *
 * Whether @dependency fits now, the state being fresh from disk. Required.
 *
 * Two outcomes: %TRUE grants the request; %FALSE refuses it, always with
 * @error set, and the error's code says what the caller does next:
 *
 * - %TESSERA_ERROR_UNAVAILABLE: the resource is full; wait for a change
 *   (past its patience, the waiter reserves its share in the queue);
 * - %TESSERA_ERROR_OVER_CAPACITY: the request is larger than the current
 *   capacity; wait, since the capacity may grow (no reservation);
 * - any other error (for instance %TESSERA_ERROR_REQUEST_TOO_LARGE): the
 *   request can never be granted; the acquisition fails with it.
 *
 * The message is the type's reason, and reaches the user as it is: a
 * waiter gets it from [method@Tessera.DynamicDependencyLocks.get_refusal],
 * and `tessera run` says it when it gives up (`--no-wait`, a timeout) and
 * while it waits. So it says what stands in the way ("this user holds
 * their licences", "Token cpu has fewer than 4 free"), not what comes next
 * (the caller may not wait); one of %TESSERA_ERROR_OVER_CAPACITY names the
 * current capacity ("Token cpu has 8 in all, fewer than the 12 asked for").
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: %TRUE to grant @dependency, %FALSE with @error set otherwise
 */

/**
 * TesseraTrackedDynamicResourceClass::do_acquire:
 * @self: the resource
 * @dependency: the request just granted
 * @error: return location for a #GError
 *
 * Claims what @dependency holds (the devices the decision picked…), right
 * after [vfunc@Tessera.TrackedDynamicResource.is_available] granted it and
 * before [vfunc@Tessera.TrackedDynamicResource.get_lock_file_information]
 * describes it and its lock file is written. Most types need nothing here:
 * the new lock file is accounted like any other. When writing the lock
 * file then fails, [vfunc@Tessera.TrackedDynamicResource.do_release] undoes
 * it.
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: %TRUE on success; %FALSE with @error set, and the acquisition
 *   fails with it (nothing is written)
 */

/**
 * TesseraTrackedDynamicResourceClass::do_release:
 * @self: the resource
 * @dependency: the request being released
 *
 * Called before the lock file of @dependency is deleted, or when writing
 * it failed after [vfunc@Tessera.TrackedDynamicResource.do_acquire].
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 */

/**
 * TesseraTrackedDynamicResourceClass::get_lock_file_information:
 * @self: the resource
 * @dependency: the request being granted
 *
 * The "information" member of the lock file about to be written for the
 * request, which [vfunc@Tessera.DynamicLockFile.from_information] reads
 * back (a count, devices, a mode…). The default writes none. It only
 * describes: what the request holds was claimed in
 * [vfunc@Tessera.TrackedDynamicResource.do_acquire], and it has no side
 * effect.
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: (transfer full) (nullable): the information, or %NULL for JSON
 *   `null`
 */

/**
 * TesseraTrackedDynamicResourceClass::handle_information_change:
 * @self: the resource
 * @informations: the parsed content of informations.json (never %NULL)
 * @error: return location for a #GError
 *
 * Applies resource-level data: called when informations.json is first
 * read and whenever it changes on disk, and by
 * [method@Tessera.TrackedDynamicResource.write_informations] before
 * writing. On failure the last good state is kept. The default accepts
 * anything.
 *
 * Called with the thread lock held, on any thread — including the
 * poller's, without ipc.lock, when it sees informations.json change —
 * never concurrently for one resource; must not block.
 *
 * Returns: %FALSE with @error set when @informations has the wrong shape
 */

/**
 * TesseraTrackedDynamicResourceClass::initialize_informations:
 * @self: the resource
 *
 * The content of informations.json for a folder that has none, usually
 * from construct properties (a counter's `total`). The default writes
 * nothing.
 *
 * Called once, during initialisation, with the thread lock and ipc.lock
 * held, on the thread that initialises the resource.
 *
 * Returns: (transfer full) (nullable): the informations, or %NULL to write
 *   no file
 */

/**
 * TesseraTrackedDynamicResourceClass::get_usage:
 * @self: the resource
 * @capacity: (out): the number of units in all, or -1 when not known
 * @free_units: (out): the number of units free now, or -1 when not known
 *
 * What `tessera status` prints, in the type's own unit (tokens,
 * devices…). The default knows nothing (-1, -1).
 *
 * Called with the thread lock held (not ipc.lock), on any thread, never
 * concurrently for one resource; must not block.
 */

/**
 * TesseraTrackedDynamicResourceClass::get_wait_information:
 * @self: the resource
 * @dependency: a request that has waited longer than the resource's
 *   [property@Tessera.TrackedDynamicResource:patience]
 *
 * What the request needs, in the shape of a lock file's "information":
 * it goes into the request's entry in the folder's `queue/`, and every
 * later request reads it back through the class's lock file type and
 * counts it with [vfunc@Tessera.TrackedDynamicResource.account_lock_file]
 * while it decides, so the waiter's share is reserved. A type that hands
 * out named units (devices) names those it keeps: it picks them in
 * [vfunc@Tessera.TrackedDynamicResource.is_available], where earlier
 * waiters' reservations count as held (they no longer do here). Leave it
 * %NULL (the default) for a type whose waiters reserve nothing; the
 * counting base [class@Tessera.CounterResource] returns its lock file's
 * information.
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: (transfer full) (nullable): the information, or %NULL for JSON
 *   `null`
 */

/**
 * TesseraTrackedDynamicResourceClass::check_settings:
 * @self: the resource, its construct properties set
 * @error: return location for a #GError
 *
 * Refuses the type's own settings when it cannot work with them (a
 * device list it cannot read, say), so that making the resource fails
 * with %TESSERA_ERROR_INVALID_CONFIGURATION rather than the pool
 * behaving as if it were empty. A setting's type and range are already
 * checked by its #GParamSpec; this is for what a spec cannot say. The
 * default accepts everything.
 *
 * Called once, from g_initable_init(), before the pool's folder is
 * opened or created; no lock is held.
 *
 * Returns: %TRUE when the settings can be used; %FALSE with @error set
 */

/**
 * TesseraTrackedDynamicResourceClass::dup_usage_text:
 * @self: the resource
 *
 * What `tessera status` says of the usage, as last seen, in place of
 * "N of M free" when that would mislead: a mutex held by shared holders
 * is "shared by 2", not "0 of 1 free". The default, and %NULL, keep
 * "N of M free". Translated, one short phrase.
 *
 * Called with the thread lock held (not ipc.lock), on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: (transfer full) (nullable): the phrase, or %NULL
 */

/**
 * TesseraTrackedDynamicResourceClass::prepare_pool:
 * @self: the resource
 * @error: return location for a #GError
 *
 * Makes what this type keeps in its pool's folder beyond what every
 * pool has (jobs/, runs/, queue/, hosts/, ipc.lock, informations.json):
 * the mutex's `intents/`, for example. [method@Tessera.TrackedDynamicResource.prepare_pool]
 * calls it for whoever prepares the pool (`tessera init`), so that the
 * pool's owner makes and owns it rather than a member's first use (the
 * owner of a sticky folder may remove anyone's entry in it). What it
 * makes in a group's folder takes the folder's group, as jobs/ does.
 * The default makes nothing.
 *
 * Called with no lock held, after the pool's folder is made, on the
 * thread that called [method@Tessera.TrackedDynamicResource.prepare_pool]
 * (any thread; never concurrently for one resource by Tessera itself).
 *
 * Returns: %TRUE when the parts are there; %FALSE with @error set
 */

/**
 * TesseraTrackedDynamicResourceClass::describe_request:
 * @self: the resource
 * @dependency: a request, as
 *   [vfunc@Tessera.DynamicResource.create_dependency] made it
 *
 * What @dependency asks for, for people: it goes into the entry that
 * shows a waiter within its patience (`tessera status`,
 * [method@Tessera.TrackedDynamicResource.list_waiting], where
 * [method@Tessera.DynamicLockFile.get_information] gives it), which no
 * acquire reads. It only describes: it reserves, chooses and marks
 * nothing, unlike [vfunc@Tessera.TrackedDynamicResource.get_wait_information]
 * (which prepares a reservation, and is called only past the patience),
 * and it may be called at any attempt. A JSON object, in the shape of the
 * type's lock file "information" where the request can say it (a
 * mutex's mode), else of its own (a GPU request's `{"count": 2}`: which
 * devices are not chosen yet). Leave it %NULL (the default) when the
 * type cannot say: a waiter of a type whose wait information is its lock
 * file information (the counting base [class@Tessera.CounterResource])
 * shows that.
 *
 * Called with the thread lock and ipc.lock held, on any thread, never
 * concurrently for one resource; must not block.
 *
 * Returns: (transfer full) (nullable): the description, or %NULL when
 *   not known
 */

struct _TesseraTrackedDynamicResourceClass
{
  TesseraDynamicResourceClass parent_class;

  void      (*reset_state)               (TesseraTrackedDynamicResource *self);
  void      (*account_lock_file)         (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicLockFile        *lock_file);
  void      (*unaccount_lock_file)       (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicLockFile        *lock_file);
  gboolean  (*is_available)              (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency,
                                          GError                       **error);
  gboolean  (*do_acquire)                (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency,
                                          GError                       **error);
  void      (*do_release)                (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  JsonNode *(*get_lock_file_information) (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  gboolean  (*handle_information_change) (TesseraTrackedDynamicResource *self,
                                          JsonNode                      *informations,
                                          GError                       **error);
  JsonNode *(*initialize_informations)   (TesseraTrackedDynamicResource *self);
  void      (*get_usage)                 (TesseraTrackedDynamicResource *self,
                                          gint64                        *capacity,
                                          gint64                        *free_units);

  GType lock_file_type;

  JsonNode *(*get_wait_information)      (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  gboolean  (*check_settings)            (TesseraTrackedDynamicResource *self,
                                          GError                       **error);
  char     *(*dup_usage_text)            (TesseraTrackedDynamicResource *self);
  gboolean  (*prepare_pool)              (TesseraTrackedDynamicResource *self,
                                          GError                       **error);
  JsonNode *(*describe_request)          (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);

  /*< private >*/
  gpointer padding[7];
};

TESSERA_AVAILABLE_IN_ALL
const char *tessera_tracked_dynamic_resource_get_lock_folder       (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_lock_file_path    (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicDependency      *dependency);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_location          (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_prepare_pool          (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode   *tessera_tracked_dynamic_resource_dup_hosts             (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
double      tessera_tracked_dynamic_resource_get_holder_lease_left (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicLockFile        *lock_file);
TESSERA_AVAILABLE_IN_ALL
double      tessera_tracked_dynamic_resource_get_lease_unrenewed   (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
double      tessera_tracked_dynamic_resource_get_min_age           (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_set_min_age           (TesseraTrackedDynamicResource *self,
                                                                    double                         min_age);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_update                (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_get_usage             (TesseraTrackedDynamicResource *self,
                                                                    gint64                        *capacity,
                                                                    gint64                        *free_units);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_usage_text        (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_check_readable        (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_keeps_side_entries    (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
GHashTable *tessera_tracked_dynamic_resource_list_side_entries     (TesseraTrackedDynamicResource *self,
                                                                    const char                    *kind);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_put_side_entry        (TesseraTrackedDynamicResource *self,
                                                                    const char                    *kind,
                                                                    const char                    *name,
                                                                    const char                    *text,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_delete_side_entry     (TesseraTrackedDynamicResource *self,
                                                                    const char                    *kind,
                                                                    const char                    *name,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
GPtrArray  *tessera_tracked_dynamic_resource_list_lock_files       (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
GPtrArray  *tessera_tracked_dynamic_resource_list_waiters          (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
GPtrArray  *tessera_tracked_dynamic_resource_list_waiting          (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode   *tessera_tracked_dynamic_resource_read_informations     (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_write_informations    (TesseraTrackedDynamicResource *self,
                                                                    JsonNode                      *informations,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_remove_holder         (TesseraTrackedDynamicResource *self,
                                                                    const char                    *job,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_audit                 (TesseraTrackedDynamicResource *self,
                                                                    const char                    *action,
                                                                    TesseraDynamicLockFile        *lock_file,
                                                                    const char                    *detail);

G_END_DECLS
