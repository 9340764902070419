/* tessera-lock-folder-private.h: a pool's lock folder on disk, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/stat.h>
#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The one place that knows the folder layout of a pool, in
 * experimaestro's format:
 *
 * - `F/informations.json`: resource-level data, replaced atomically;
 * - `F/ipc.lock`: held around every read-modify-write of F;
 * - `F/jobs/NAME.json`: one lock file per holder; `NAME.json.XXXXXX` is
 *   the temporary of an atomic write (a peer's, or ours when we cannot
 *   use our own folder);
 * - `F/.tessera-tmp-UID/`: where user UID's Tessera writes the temporary
 *   files of its lock files, so that only the rename reaches jobs/;
 * - `F/fence.UID` and `F/fence.UID.now`: user UID's part of the fencing
 *   counter (a durable ceiling, and the last token given);
 * - `F/hosts/`: each host's mark, `HOSTID[.UID[.vVIEW]].host`, and
 *   heartbeat, `HOSTID[.UID].lease` (tessera-host-lease.c);
 * - `F/queue/`: the waiting requests, `NAME.json` for one that reserves
 *   and `NAME.waiting` for one that only waits (tessera-wait-queue.c);
 * - `F/runs/UID/`: user UID's job folders of `tessera run`.
 *
 * Every other unit of core spells these names through the macros below,
 * never as strings of its own.
 *
 * Everything above it (the lock file cache, the folder monitor, the
 * holder monitor, informations.json) asks it for names, reads and
 * removals, so that a second store (an etcd cluster) can later sit
 * behind the same functions. Not thread-safe: the owner serialises. */
typedef struct _TesseraLockFolder TesseraLockFolder;

#define _TESSERA_POOL_JOBS          "jobs"
#define _TESSERA_POOL_IPC_LOCK      "ipc.lock"
#define _TESSERA_POOL_INFORMATIONS  "informations.json"
#define _TESSERA_POOL_HOSTS         "hosts"
#define _TESSERA_POOL_QUEUE         "queue"
#define _TESSERA_POOL_RUNS          "runs"
/* Followed by the writer's uid. */
#define _TESSERA_POOL_WRITER_TMP    ".tessera-tmp-"
/* The ends of the names of hosts/ and queue/ entries. */
#define _TESSERA_POOL_HOST_LEASE    ".lease"
#define _TESSERA_POOL_HOST_MARK     ".host"
#define _TESSERA_POOL_QUEUE_WAITING ".waiting"

/* @path: absolute. Touches nothing on disk. */
TesseraLockFolder *_tessera_lock_folder_new       (const char         *path);
void        _tessera_lock_folder_free             (TesseraLockFolder  *folder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraLockFolder, _tessera_lock_folder_free)

const char *_tessera_lock_folder_get_path         (TesseraLockFolder  *folder);
const char *_tessera_lock_folder_get_jobs_path    (TesseraLockFolder  *folder);
const char *_tessera_lock_folder_get_informations_path (TesseraLockFolder *folder);
char       *_tessera_lock_folder_dup_job_path     (TesseraLockFolder  *folder,
                                                   const char         *name);

/* The pool's folder, opened as configured (see
 * _tessera_open_folder_path()) once and kept: -1 with errno while it
 * cannot be (tried again at the next call). Not the caller's to close.
 * The wait queue and the host lease reach queue/ and hosts/ from it, so
 * every part of a resource's pool is reached from the same folder. */
int         _tessera_lock_folder_get_fd           (TesseraLockFolder  *folder);

/* Makes the folder and jobs/ (with a group folder's group and bits),
 * opening the folder (see _tessera_open_folder_path()). Both: FALSE when
 * the folder, in a group's pool, is neither root's nor the pool's
 * owner's (see _tessera_owner_believed_in()). */
gboolean    _tessera_lock_folder_create           (TesseraLockFolder  *folder,
                                                   GError            **error);
/* Opens the folder, making nothing, for a view that only reads: FALSE
 * only when a link on the way may not be followed or it is not believed
 * (one nobody set up yet is an empty pool). */
gboolean    _tessera_lock_folder_open             (TesseraLockFolder  *folder,
                                                   GError            **error);
/* Whether every change to the folder is made by this kernel (so inotify
 * sees them all): not on NFS, CIFS, Lustre, FUSE, … */
gboolean    _tessera_lock_folder_is_local         (TesseraLockFolder  *folder);

/* ipc.lock, taken for writing; @shared: for reading only, and -1 without
 * @error set when it cannot be opened (the caller reads without it). */
int         _tessera_lock_folder_lock             (TesseraLockFolder  *folder,
                                                   gboolean            shared,
                                                   GError            **error);
void        _tessera_lock_folder_unlock           (int                 fd);

/* jobs/, opened without following a link from the pool's folder (which
 * is opened once): -1 with errno when it cannot be. */
int         _tessera_lock_folder_open_jobs        (TesseraLockFolder  *folder);
/* jobs/ itself (lstat: a link is seen as a link). */
gboolean    _tessera_lock_folder_stat_jobs        (TesseraLockFolder  *folder,
                                                   struct stat        *st);
/* Makes a missing jobs/ again, saying why it could not. */
void        _tessera_lock_folder_make_jobs        (TesseraLockFolder  *folder);
/* One name in jobs/ (lstat). */
gboolean    _tessera_lock_folder_stat_job         (TesseraLockFolder  *folder,
                                                   const char         *name,
                                                   struct stat        *st);
/* Called with each lock file name of jobs/ and jobs/ itself, open. */
typedef void (*TesseraJobNameFunc) (const char *name,
                                    int         jobs_fd,
                                    gpointer    user_data);
/* Calls @func with the lock file names in jobs/, in its readdir order,
 * read through a descriptor that follows no link; on the way, unless
 * @read_only, removes the temporaries of writers dead for @min_age. FALSE,
 * errno set, when jobs/ cannot be read (or not to its end: @func may have
 * been called for some names). */
gboolean    _tessera_lock_folder_foreach_job      (TesseraLockFolder  *folder,
                                                   double              min_age,
                                                   gboolean            read_only,
                                                   TesseraJobNameFunc  func,
                                                   gpointer            user_data);
/* Removes jobs/@name if it is still the regular file @ino, never through
 * a link. FALSE when it is not (gone, replaced): nothing was removed. */
gboolean    _tessera_lock_folder_remove_job       (TesseraLockFolder  *folder,
                                                   const char         *name,
                                                   ino_t               ino,
                                                   GError            **error);

/* Removes jobs/@name, of inode @ino, whatever it holds and without
 * opening it (a FIFO, a socket, a device, an empty folder too; never a
 * link), when this user may: root, its owner or the pool folder's owner
 * (else %TESSERA_ERROR_FAILED, nothing removed). FALSE without an error
 * when it is not there (gone, replaced, a link). */
gboolean    _tessera_lock_folder_force_remove_job (TesseraLockFolder  *folder,
                                                   const char         *name,
                                                   ino_t               ino,
                                                   GError            **error);

/* Removes this user's temporary files a writer killed before its rename
 * left (a minute old), as a process's first write does; makes nothing. */
void        _tessera_lock_folder_sweep_writer_tmp (TesseraLockFolder  *folder);

/* Writes @lock_file as jobs/@name, atomically, never through a link;
 * @st: the file written, as it then is. */
gboolean    _tessera_lock_folder_save_job         (TesseraLockFolder  *folder,
                                                   const char         *name,
                                                   TesseraDynamicLockFile *lock_file,
                                                   struct stat        *st,
                                                   GError            **error);
/* Removes our own jobs/@name when we let it go: a regular file only,
 * never through a link; already gone is no error. */
gboolean    _tessera_lock_folder_remove_own_job   (TesseraLockFolder  *folder,
                                                   const char         *name,
                                                   GError            **error);

/* informations.json */
gboolean    _tessera_lock_folder_has_informations (TesseraLockFolder  *folder);
gboolean    _tessera_lock_folder_stat_informations (TesseraLockFolder *folder,
                                                    struct stat       *st);
gboolean    _tessera_lock_folder_read_informations (TesseraLockFolder *folder,
                                                    char             **data,
                                                    gsize             *length,
                                                    struct stat       *st,
                                                    GError           **error);
/* FALSE, with @error naming it and its owner, when informations.json is
 * there and, in a group's pool, neither root's nor the pool's owner's
 * (see _tessera_owner_believed_in()). */
gboolean    _tessera_lock_folder_informations_believed (TesseraLockFolder  *folder,
                                                        GError            **error);
/* FALSE, with @error saying to run `tessera init`, when this user may not
 * make informations.json (see _tessera_may_make_folder_in()). */
gboolean    _tessera_lock_folder_may_make_informations (TesseraLockFolder  *folder,
                                                        GError            **error);
gboolean    _tessera_lock_folder_write_informations (TesseraLockFolder *folder,
                                                     const char        *text,
                                                     GError           **error);

/* The pool's fencing counter, `F/fence.UID` and `F/fence.UID.now` (one
 * part per user, so that each rewrites only files of its own in a
 * group's sticky folder; see tessera-lock-folder.c): reads every part and
 * gives in @token one more than the largest token any user may have
 * given, after raising our own part (durably, when the token passes our
 * ceiling). Under ipc.lock. FALSE with @error when a ceiling cannot be
 * read (or holds no number) or our part cannot be written: no token is
 * given. */
gboolean    _tessera_lock_folder_next_fence       (TesseraLockFolder  *folder,
                                                   gint64             *token,
                                                   GError            **error);

/* Whether @name is a part of the fencing counter by its name: fence.UID,
 * fence.UID.N (N from 1 to 15), or either followed by .now; @uid (out):
 * the user it is named for. */
gboolean    _tessera_is_fence_name                (const char         *name,
                                                   guint32            *uid);

/* How long a file system's clock tick may be for a file time @mtime_ns
 * (µs): whole-second times tell a coarse file system. */
gint64      _tessera_lock_folder_mtime_tick_us    (gint64              mtime_ns);
/* Whether a file of stat @st was stamped a clock tick before @looked_us
 * (real time): git's racy rule, where this kernel stamps files from the
 * clock we read (a local file system). The later of mtime and ctime
 * counts: a back-dated mtime (cp -p) does not make a new file old. */
gboolean    _tessera_stat_tick_before             (const struct stat  *st,
                                                   gint64              looked_us);

/* Whether @path is on a file system whose every change this kernel
 * makes (see _tessera_lock_folder_is_local()). */
gboolean _tessera_fs_is_local         (const char  *path);

/* While set in this thread, ipc.lock is only tried: a peer holding it
 * makes the acquire fail with G_IO_ERROR_WOULD_BLOCK. */
void     _tessera_ipc_lock_set_try_only (gboolean   try_only);

G_END_DECLS
