/* tessera-private.h: helpers shared inside libtessera-1, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "config.h"

#include <sys/stat.h>
#include <tessera/tessera.h>

#include "tessera-verdict-private.h"

G_BEGIN_DECLS

/* Messages go through the library's own domain, bound once. */
const char *_tessera_gettext (const char *msgid) G_GNUC_FORMAT (1);
#define _(s) _tessera_gettext (s)
#define N_(s) (s)

/* A translated "… %s: %s" message with the path, then the system's reason. */
#define _tessera_set_io_error(error, saved_errno, format, path) \
  g_set_error ((error), G_IO_ERROR, g_io_error_from_errno (saved_errno), (format), (path), \
               g_strerror (saved_errno))

/* File helpers (atomic writes and reads that follow no link: see
 * tessera-lock-folder-private.h) */
char    *_tessera_path_with_suffix    (const char  *path,
                                       const char  *suffix);
char    *_tessera_dup_user_name       (uid_t        uid);
gboolean _tessera_mkdir_with_parents  (const char  *path,
                                       GError     **error);
gint64   _tessera_stat_mtime_ns       (const struct stat *st);
gint64   _tessera_stat_ctime_ns       (const struct stat *st);

/* An OFD lock on the whole file (F_RDLCK, F_WRLCK, F_UNLCK), retried on
 * EINTR; @wait: block until it is granted. */
int      _tessera_ofd_lock            (int          fd,
                                       short        type,
                                       gboolean     wait);

/* Job lock (`<job_uri>.lock`): OFD write lock; what its probe answers
 * (TesseraJobLockState) is the verdict's to read. */

int      _tessera_job_lock_take       (const char  *path,
                                       GError     **error);
/* The same for @name in the folder @dir_fd (@path for messages). */
int      _tessera_job_lock_take_at    (int          dir_fd,
                                       const char  *name,
                                       const char  *path,
                                       GError     **error);
/* @errsv (nullable): why, when it is neither free nor held (an errno;
 * 0: not a regular file). */
TesseraJobLockState _tessera_job_lock_probe (const char *path,
                                             int        *errsv);
/* The same for @name in the folder @dir_fd (AT_FDCWD: @name is a path). */
TesseraJobLockState _tessera_job_lock_probe_at (int         dir_fd,
                                                const char *name,
                                                int        *errsv);
gboolean _tessera_job_lock_is_held    (const char  *path);
char    *_tessera_job_dup_checked_lock_file_name (TesseraJob *self,
                                                  GError    **error);
/* The device and inode of the folder that holds the job lock this job
 * holds (its job folder), recorded when it took it: FALSE when unknown. */
gboolean _tessera_job_get_folder      (TesseraJob  *self,
                                       guint64     *dev,
                                       guint64     *ino);

/* Task ids and job identifiers: safe as part of a file name in `jobs/`
 * (tessera-job.c) */
gboolean _tessera_check_name          (const char  *name,
                                       GError     **error);

/* Processes */
gssize      _tessera_proc_read        (GPid         pid,
                                       const char  *name,
                                       char        *buffer,
                                       gsize        size,
                                       gboolean     first_line);
gboolean    _tessera_proc_stat        (GPid         pid,
                                       guint64     *start_time,
                                       char        *state);
const char *_tessera_boot_id          (void);
const char *_tessera_host_name        (void);
int         _tessera_pidfd_open       (GPid         pid);

/* This host (tessera-host.c) */
const char *_tessera_machine_id       (void);
const char *_tessera_host_id          (void);
/* The build (git describe, else the version), for the host marks. */
extern const char _tessera_build_id[];
guint64     _tessera_pid_namespace    (void);
gboolean    _tessera_is_this_host     (const char  *machine_id,
                                       const char  *host_id);
gint64      _tessera_first_seen       (const char  *key);
gboolean    _tessera_locks_cross_hosts (const char *path,
                                        char      **why);
/* Whether the spec's host ids are this host's. */
gboolean    _tessera_process_on_this_host (TesseraProcess *process);
/* A lock that holds what it holds without its do_acquire (tessera-lock.c). */
void        _tessera_lock_set_held      (TesseraLock    *self);
/* Whether the spec is this very process's (written by Tessera). */
gboolean    _tessera_process_is_self    (TesseraProcess *process);
gboolean    _tessera_process_on_other_host (TesseraProcess *process);
/* The host id the spec records (NULL when none). */
const char *_tessera_process_get_host_id (TesseraProcess *process);
/* Whether @text is shaped like a host id: 32 lowercase hex digits. */
gboolean    _tessera_is_host_id       (const char  *text);
void        _tessera_forget_seen      (const char  *key);
/* Whether a spec carries any member only Tessera writes: its holder took
 * its job lock before writing it, so a free job lock is a death at once. */
gboolean    _tessera_process_written_by_tessera (TesseraProcess *process);
/* The problem that keeps Tessera from judging the spec, or NULL. */
const char *_tessera_process_get_problem        (TesseraProcess *process);
TesseraProcess *_tessera_process_new_unknown    (const char     *problem);
TesseraProcessType *_tessera_process_type_for   (const char     *type_name);

/* Waiting */
/* The longest polling interval while somebody waits (set once, at init). */
void _tessera_dynamic_resource_set_poll_interval_max (TesseraDynamicResource *self,
                                                      double                  seconds);
/* Whether waits poll at all (a store whose notification misses nothing
 * turns it off; set once, at init). */
void _tessera_dynamic_resource_set_polling (TesseraDynamicResource *self,
                                            gboolean                polling);
/* Fallback polling while somebody waits: each begin is matched by an end. */
void _tessera_dynamic_resource_begin_polling (TesseraDynamicResource *self);
void _tessera_dynamic_resource_end_polling   (TesseraDynamicResource *self);
/* tessera_dynamic_resource_wait() up to a monotonic @deadline (-1: for
 * ever), for the retry loops that keep one deadline across attempts. */
gboolean _tessera_dynamic_resource_wait_until (TesseraDynamicResource *self,
                                               guint64                 generation,
                                               gint64                  deadline,
                                               GCancellable           *cancellable,
                                               GError                **error);
gpointer _tessera_dynamic_resource_add_waker    (TesseraDynamicResource *self,
                                                GMainContext           *context,
                                                GSourceFunc             func,
                                                gpointer                data,
                                                GDestroyNotify          destroy);
void     _tessera_dynamic_resource_remove_waker (TesseraDynamicResource *self,
                                                gpointer                handle);
/* Watching (the poller's thread, the resource type's watches) starts at
 * the first wait, not when the resource is made: a process that only takes
 * what is free and leaves pays for none of it. @func (set once, at init)
 * starts the resource type's watches, once, with no lock held; it ends
 * with tessera_dynamic_resource_notify_changed(), since what changed
 * before its watches began is known only to a full read. */
typedef void (*TesseraWatchStartFunc) (TesseraDynamicResource *self,
                                       gpointer                data);
/* @wait_begin (nullable) runs at the start of every wait, once it is
 * counted by _tessera_dynamic_resource_has_waiters(), with no lock held. */
void _tessera_dynamic_resource_set_watch_start  (TesseraDynamicResource *self,
                                                 TesseraWatchStartFunc   func,
                                                 TesseraWatchStartFunc   wait_begin,
                                                 gpointer                data);
/* Whether a wait is under way on @self: lock-free, for any lock held. */
gboolean _tessera_dynamic_resource_has_waiters  (TesseraDynamicResource *self);
/* Starts watching now (the first wait does it too); no lock held. */
void _tessera_dynamic_resource_start_watching   (TesseraDynamicResource *self);
/* Starts the poller's thread only (a resource type whose watches began
 * on their own, under its locks). */
void _tessera_dynamic_resource_start_thread     (TesseraDynamicResource *self);
/* Where polling is the primary path (no inotify): the longest interval. */
#define TESSERA_POLL_INTERVAL_MAX_UNWATCHED 2.0
/* The context of the resource's own poller, where its watches run. */
GMainContext *_tessera_dynamic_resource_get_context (TesseraDynamicResource *self);

/* Acquires @lock on @resource, waiting for ipc.lock (a peer's critical
 * section) until @deadline (monotonic µs, or -1) and a grace, or until
 * @cancellable is cancelled: by non-blocking tries when either can end
 * the wait, else blocked in flock(). `G_IO_ERROR_WOULD_BLOCK`, naming
 * ipc.lock, when a peer kept it past then (the caller's wait timed out);
 * other errors are the acquire's own (tessera-dynamic-dependency.c). @brief_us ≥ 0 waits
 * that long at most, whatever @deadline (a pool tried while others are
 * held: a peer's critical section takes microseconds). */
gboolean _tessera_dynamic_dependency_lock_acquire_until (TesseraDynamicDependencyLock  *lock,
                                                         TesseraDynamicResource        *resource,
                                                         gint64                         deadline,
                                                         gint64                         brief_us,
                                                         GCancellable                  *cancellable,
                                                         GError                       **error);
/* When a wait for ipc.lock with @deadline gives up (-1: never). */
gint64   _tessera_ipc_lock_give_up_time       (gint64                         deadline);
/* %TESSERA_ERROR_TIMEOUT for a wait on @resource ended by @busy (a peer
 * keeping ipc.lock). */
void     _tessera_set_ipc_lock_timeout        (GError                       **error,
                                               TesseraDynamicResource        *resource,
                                               const GError                  *busy);
/* %TESSERA_ERROR_TIMEOUT for a wait on @resource, saying @reason when
 * there is one (see _tessera_wait_reason()). */
void     _tessera_set_wait_timeout            (GError                       **error,
                                               TesseraDynamicResource        *resource,
                                               const char                    *reason);

/* The waiters' queue of a lock folder (tessera-wait-queue.c). The wait
 * loops mark a dependency as waiting for the length of a lock() call; the
 * tracked resource's acquire reads the queue, counts the reservations
 * before the acquirer's around is_available, and, past the patience, enters
 * the queue (or leaves it). */
typedef struct _TesseraWaitQueueView TesseraWaitQueueView;
void     _tessera_wait_begin                  (TesseraDynamicDependency      *dependency);
void     _tessera_wait_end                    (TesseraDynamicDependency      *dependency);
/* When a waiter that does not reserve yet must try again to start
 * reserving (monotonic µs), or -1. */
gint64   _tessera_wait_get_patience_deadline  (TesseraDynamicDependency      *dependency);
gint64   _tessera_wait_wake_time              (TesseraDynamicDependency      *dependency,
                                               gint64                         deadline);
/* Begins a wait on each; freeing the array ends them. */
GPtrArray *_tessera_wait_begin_all            (TesseraDynamicDependency     **dependencies,
                                               guint                          n_dependencies);
/* @store: the pool's, which keeps the queue (a folder's queue/, etcd
 * keys); a reservation of a host whose lease expired is dropped, like
 * its holdings. */
struct _TesseraPoolStore;
TesseraWaitQueueView *_tessera_wait_queue_read (double                        min_age,
                                               double                        patience,
                                               struct _TesseraPoolStore     *store,
                                               TesseraDynamicDependency     *dependency,
                                               const char                   *own_name,
                                               const char                   *job_uri);
gboolean _tessera_wait_queue_decide          (TesseraTrackedDynamicResource  *self,
                                               TesseraWaitQueueView           *view,
                                               TesseraDynamicDependency       *dependency,
                                               struct _TesseraPoolStore       *holders,
                                               const char                     *name,
                                               GError                        **error);
void     _tessera_wait_queue_after_attempt    (TesseraTrackedDynamicResource *self,
                                               TesseraWaitQueueView          *view,
                                               TesseraDynamicDependency      *dependency,
                                               gboolean                       acquired,
                                               gboolean                       full);
void     _tessera_wait_queue_view_free        (TesseraWaitQueueView          *view);
gboolean _tessera_wait_queue_never_served     (TesseraDynamicLockFile        *entry,
                                               gint64                         capacity);
/* (transfer container): the live reserving waiters of @store's queue,
 * shaped like lock files ("information": what each asks for; its time:
 * when it began to wait), the longest waiting first. Both locks held. */
GPtrArray *_tessera_wait_queue_list          (struct _TesseraPoolStore      *store,
                                               double                         min_age);
/* (transfer container): the live waiters within their patience of the
 * folder pool at @folder (`queue/NAME.waiting`), for people, the longest
 * waiting first; those found gone removed unless @read_only. Both locks
 * held. */
GPtrArray *_tessera_wait_queue_folder_list_waiting (const char               *folder,
                                                    GType                     lock_file_type,
                                                    struct _TesseraPoolStore *store,
                                                    gboolean                  read_only,
                                                    double                    min_age);
/* (transfer container): the live waiters within their patience of
 * @store, which keeps side entries (`waiting/NAME` on etcd), for people,
 * the longest waiting first. Thread lock held, after a refresh. */
GPtrArray *_tessera_wait_queue_store_list_waiting (struct _TesseraPoolStore *store,
                                                   GType                     lock_file_type);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraWaitQueueView, _tessera_wait_queue_view_free)
double   _tessera_patience_default            (void);

/* Whether an acquire that failed with @error should wait and try again:
 * the resource is full, or smaller than the request for now. */
static inline gboolean
_tessera_error_means_wait (const GError *error)
{
  return g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE) ||
         g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY);
}

/* What a wait's timeout says of @error (one that means wait): the type's
 * reason for a request larger than the whole capacity, which no release
 * will serve; nothing for a resource that is merely busy. */
static inline const char *
_tessera_wait_reason (const GError *error)
{
  return g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY) ? error->message : NULL;
}

/* json_parser_load_from_data() of strict RFC 8259 JSON only, nested at
 * most TESSERA_JSON_MAX_DEPTH deep (tessera-json.c): for every file of a
 * folder. */
gboolean _tessera_json_load (JsonParser  *parser,
                             const char  *data,
                             gssize       length,
                             GError     **error);

/* The same, except that a number JSON cannot carry back (too large for a
 * double, or one json-glib writes as no JSON: 1e400, 1e308) is made null
 * rather than refused, and an integer beyond 64 bits is let through
 * (json-glib reads it wrapped, a wrong value somewhere in the tree); each
 * sets @nulled: for what still reads a text that holds one (a lock file's
 * salvage), which must then trust none of its numbers. @parser must not
 * be immutable. */
gboolean _tessera_json_load_nulling_numbers (JsonParser  *parser,
                                             const char  *data,
                                             gssize       length,
                                             gboolean    *nulled,
                                             GError     **error);

/* Whether @data is strict JSON cut short: the scan ran off its end before
 * the top-level value closed, all it read so far being JSON (what a writer
 * in place leaves half-way). FALSE for text that is complete, or refused
 * before its end (not JSON, too deep, not UTF-8, a lone surrogate). */
gboolean _tessera_json_is_cut_short (const char *data,
                                     gsize       length);

TesseraDynamicLockFile *_tessera_dynamic_lock_file_load_once (GType        lock_file_type,
                                                              int          dir_fd,
                                                              const char  *name,
                                                              const char  *path,
                                                              char       **data,
                                                              gsize       *length,
                                                              GError     **error);
/* What _tessera_dynamic_lock_file_load_once() makes of @data when the
 * file, of lstat @st, was read earlier (the lock file index). */
TesseraDynamicLockFile *_tessera_dynamic_lock_file_new_from_text (GType              lock_file_type,
                                                                  const char        *path,
                                                                  const char        *data,
                                                                  gsize              length,
                                                                  const struct stat *st,
                                                                  GError           **error);

/* What tessera_dynamic_lock_file_get_mtime() says of @lock_file, for a
 * store without files (etcd, a module): when its holder was written, in
 * nanoseconds since the epoch. */
TESSERA_AVAILABLE_IN_ALL
void _tessera_dynamic_lock_file_set_mtime (TesseraDynamicLockFile *lock_file,
                                           gint64                  mtime_ns);

/* The owner of @self's file, as it was read or written: whose the
 * holding is (the uid its process spec records is anyone's claim);
 * -1 when it has no file (etcd, a module). */
gint64 _tessera_dynamic_lock_file_get_file_uid (TesseraDynamicLockFile *self);

/* The holder's job folder (device and inode), written in its "process"
 * as "job_folder" (tessera-dynamic-lock-file.c): FALSE when not recorded. */
void     _tessera_dynamic_lock_file_set_job_folder (TesseraDynamicLockFile *self,
                                                    guint64                 dev,
                                                    guint64                 ino);
gboolean _tessera_dynamic_lock_file_get_job_folder (TesseraDynamicLockFile *self,
                                                    guint64                *dev,
                                                    guint64                *ino);

/* Whether the holder's job lock was taken where locks cross hosts,
 * written in its "process" as "locks_cross": FALSE when not recorded
 * (experimaestro's, an older Tessera's). */
void     _tessera_dynamic_lock_file_set_locks_cross (TesseraDynamicLockFile *self,
                                                     gboolean                locks_cross);
gboolean _tessera_dynamic_lock_file_get_locks_cross (TesseraDynamicLockFile *self,
                                                     gboolean               *locks_cross);
/* The view of the pool through which the holder took its job lock: the
 * device of its job folder as the holder saw it, written in its
 * "process" as "view" (on one host, another mount of the pool, such as a
 * FUSE view, has another): FALSE when not recorded (experimaestro's, an
 * older Tessera's). */
void     _tessera_dynamic_lock_file_set_view (TesseraDynamicLockFile *self,
                                              guint64                 view);
gboolean _tessera_dynamic_lock_file_get_view (TesseraDynamicLockFile *self,
                                              guint64                *view);
/* What tessera_dynamic_lock_file_dup_unknown_reason() says (NULL: none). */
void     _tessera_dynamic_lock_file_set_unknown_reason (TesseraDynamicLockFile *self,
                                                        const char             *reason);
/* What tessera_dynamic_lock_file_get_information() says of @lock_file, a
 * waiting entry shown to people: what its request asks for, which its
 * type's lock files need not read (a GPU request's count). */
void _tessera_dynamic_lock_file_show_information (TesseraDynamicLockFile *lock_file,
                                                  JsonNode               *information);
/* What tessera_dynamic_lock_file_get_problem() says of @lock_file. */
void _tessera_dynamic_lock_file_set_problem (TesseraDynamicLockFile *lock_file,
                                             const char             *problem);

TesseraDynamicLockFile *_tessera_dynamic_lock_file_new_unsaved (GType            lock_file_type,
                                                                const char      *path,
                                                                const char      *job_uri,
                                                                JsonNode        *information,
                                                                TesseraProcess  *process,
                                                                GError         **error);
/* @tmp_fd: where the temporary file goes (-1: beside @name);
 * @tmp_unusable: see _tessera_write_file_atomic_via(); @st: the file
 * written, as it then is (gone at once: an error). */
gboolean _tessera_dynamic_lock_file_save_at (TesseraDynamicLockFile  *self,
                                             int                      tmp_fd,
                                             int                      dir_fd,
                                             const char              *name,
                                             gboolean                *tmp_unusable,
                                             struct stat             *st,
                                             GError                 **error);

void _tessera_share_like_parent (int fd, const char *path);
void _tessera_share_like_parent_writable (int fd, const char *path);

/* Whether @resource's pool lives in its folder (the folder store), the
 * only place where holders are files and there is an ipc.lock
 * (tessera-tracked-resource-store.c). */
gboolean _tessera_dynamic_resource_in_a_folder (TesseraDynamicResource *resource);
/* Whether that folder is on a file system this kernel alone changes
 * (_tessera_fs_is_local()), where a try of ipc.lock costs no round trip. */
gboolean _tessera_dynamic_resource_in_a_local_folder (TesseraDynamicResource *resource);

/* Environment knobs, read once */
double _tessera_poll_interval_initial (void);
double _tessera_poll_interval_max     (void);
gboolean _tessera_inotify_disabled    (void);

/* Named pause points for the race tests (tessera-pause-point.c); nothing
 * at all unless built with -Dpause_points=true. */
#if TESSERA_PAUSE_POINTS
void _tessera_pause_point (const char *name);
#else
#define _tessera_pause_point(name) ((void) 0)
#endif

G_END_DECLS
