/* tessera-lock-file-cache-private.h: the table of a pool's lock files, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-folder-monitor-private.h"
#include "tessera-holder-monitor-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pool-store-private.h"

G_BEGIN_DECLS

/* The lock files of jobs/ as last read, re-read only where they changed:
 * loading (a file that names a job but cannot be read in full is salvaged,
 * failing closed), the names that need looking at again, the removal of
 * those whose holder is gone, and the accounting calls into the resource
 * type. Not thread-safe: the owner serialises (the resource's thread
 * lock; ipc.lock too for whatever reads or changes jobs/). */
typedef struct _TesseraLockFileCache TesseraLockFileCache;

/* @folder, @monitor, @holders, @store: borrowed, outlive the result.
 * @store, the folder store that owns the cache, is called as it is: the
 * resource type's accounting of a valid lock file (its owner_class's
 * account_lock_file and unaccount_lock_file), and its owner_calls'
 * audit_reclaim when a holder judged gone no longer counts; its name,
 * lock_file_type, read_only (create and remove nothing) and min_age are
 * read from it. */
TesseraLockFileCache *_tessera_lock_file_cache_new (TesseraLockFolder    *folder,
                                                    TesseraFolderMonitor *monitor,
                                                    TesseraHolderMonitor *holders,
                                                    TesseraPoolStore     *store);
void     _tessera_lock_file_cache_free        (TesseraLockFileCache *cache);

/* Brings the table up to date with jobs/ (makes it again when missing),
 * after the owner drained the folder monitor: reads it all when the
 * monitor says so, else the names it reported, then judges the holders
 * that need it. FALSE when there is nothing to read (a read-only view of
 * a pool without jobs/) or jobs/ is refused (not a folder). Under
 * ipc.lock. */
gboolean _tessera_lock_file_cache_refresh     (TesseraLockFileCache *cache);
/* A view reads holders without judging them: each counts (fail closed)
 * until its share is needed (a read-only view never removes any). The
 * first call judges every holder read so far, removing the lock files of
 * those gone, and from then on holders are judged as they are read (their
 * deaths then wake this process's waiters). TRUE when the accounting
 * changed. Under ipc.lock, after a refresh. */
gboolean _tessera_lock_file_cache_judge_all   (TesseraLockFileCache *cache);
/* Whether jobs/ was found not to be a folder (a planted link): nothing is
 * read, written or removed through it. */
gboolean _tessera_lock_file_cache_jobs_refused (TesseraLockFileCache *cache);
/* FALSE with TESSERA_ERROR_INVALID_LOCK_FILE when jobs/ is refused, or
 * TESSERA_ERROR_INVALID_CONFIGURATION on a mount whose locks do not cross
 * hosts when another host uses the pool. Under ipc.lock. */
gboolean _tessera_lock_file_cache_check_usable (TesseraLockFileCache *cache,
                                                GError              **error);
/* Its first part only: FALSE when jobs/ is refused or the last look at
 * it failed, so holders may hold what looks free. Writes nothing (the
 * hosts check marks the pool); thread lock held. */
gboolean _tessera_lock_file_cache_check_readable (TesseraLockFileCache *cache,
                                                  GError              **error);
/* A watched holder exited (from the holder monitor's notification). */
void     _tessera_lock_file_cache_holder_exited (TesseraLockFileCache *cache,
                                                 GPid                  pid,
                                                 guint64               serial);

/* Moves whenever the accounting changes. */
guint64  _tessera_lock_file_cache_get_serial  (TesseraLockFileCache *cache);
/* Accounted lock files whose amount cannot be read: they hold everything. */
guint    _tessera_lock_file_cache_get_whole_holders (TesseraLockFileCache *cache);
/* (transfer none) (nullable): the readable lock file of @name. */
TesseraDynamicLockFile *_tessera_lock_file_cache_get_lock_file (TesseraLockFileCache *cache,
                                                                const char           *name);
/* (transfer container): the lock files that count; an unreadable entry
 * (it holds everything) as one with its path and problem only. */
GPtrArray *_tessera_lock_file_cache_list      (TesseraLockFileCache *cache);

/* Writes the lock file of @name for @job (replacing a file of that name
 * that does not count): it counts at once, and @job's process (if known)
 * is watched. Under ipc.lock. */
gboolean _tessera_lock_file_cache_create      (TesseraLockFileCache  *cache,
                                               const char            *name,
                                               TesseraJob            *job,
                                               JsonNode              *information,
                                               GError               **error);
/* Forgets @name (it no longer counts); the file is left as it is. */
void     _tessera_lock_file_cache_forget      (TesseraLockFileCache *cache,
                                               const char           *name);
/* Deletes our own lock file of @name, already forgotten; one that is gone
 * is not an error. Under ipc.lock. */
gboolean _tessera_lock_file_cache_delete_own  (TesseraLockFileCache  *cache,
                                               const char            *name,
                                               GError               **error);
/* Writes @process into the lock file of @name and judges it again. */
gboolean _tessera_lock_file_cache_set_process (TesseraLockFileCache  *cache,
                                               const char            *name,
                                               TesseraProcess        *process,
                                               GError               **error);
/* Whether @job (task@identifier, a lock file's name without ".json") is a
 * holder's name that may be removed here: one name in jobs/, never a path,
 * and a cache that may change the folder. */
gboolean _tessera_lock_file_cache_check_holder_name (TesseraLockFileCache  *cache,
                                                     const char            *job,
                                                     GError               **error);
/* Removes the lock file of @job (checked with the above) whatever its
 * holder's liveness, and forgets it. FALSE with
 * TESSERA_ERROR_LOCK_FILE_MISSING when jobs/ has no such lock file, or an
 * I/O error. Under ipc.lock. */
gboolean _tessera_lock_file_cache_remove_holder (TesseraLockFileCache  *cache,
                                                 const char            *job,
                                                 GError               **error);

G_END_DECLS
