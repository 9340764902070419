/* tessera-lock-file-index-private.h: a pool's lock files as last read, kept between processes, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-lock-folder-private.h"

G_BEGIN_DECLS

/* What a fresh process would otherwise read again: the text of each lock
 * file of jobs/ with what told it apart when it was read (inode, size,
 * modification and change times). A file of the user's own, under
 * `$XDG_CACHE_HOME/tessera/lock-file-index/`, named after the pool's
 * jobs/ (device, inode) and a hash of its path, so a co-user can neither
 * write nor forge it; written whole (temporary file + rename).
 *
 * It only ever spares a read (and, through a summary, a parse): a lock
 * file is taken from it when its stat now is the one recorded, and a file
 * whose times were within the file system's clock tick of the moment it
 * was looked at (git's racy rule: a peer writing in place in the same
 * tick would keep them) is never recorded. The text, when parsed, is
 * parsed exactly as if read, and the summary was made from that very
 * parse, so what counts is what counts without it. An index that is missing, not a regular file of ours,
 * too large, truncated or garbage is ignored and written anew; nothing
 * blocks on it (opened O_NONBLOCK | O_NOFOLLOW). Kept on local file
 * systems only (elsewhere another host's clock stamps the files).
 *
 * Not thread-safe: the owner (the lock file cache) serialises. */
typedef struct _TesseraLockFileIndex TesseraLockFileIndex;

/* Reads the index of the pool at @pool_path whose jobs/ is @jobs_st.
 * @read_only: never writes it (status). NULL when the pool's file system
 * is not local: then there is no index. */
TesseraLockFileIndex *_tessera_lock_file_index_open (TesseraLockFolder *folder,
                                                     const struct stat *jobs_st,
                                                     gboolean           read_only);
void        _tessera_lock_file_index_free         (TesseraLockFileIndex *index);

/* (transfer none) (nullable): the recorded text of jobs/@name when @st
 * (its lstat now) is what was recorded, and its length in @length;
 * @summary: what was recorded with it (NULL: nothing), see below. Both
 * stay valid until @name is put or dropped, or the index freed. */
const char *_tessera_lock_file_index_lookup       (TesseraLockFileIndex *index,
                                                   const char           *name,
                                                   const struct stat    *st,
                                                   gsize                *length,
                                                   const char          **summary);
/* Records @data, read from jobs/@name whose lstat (taken before the read)
 * was @st; @looked_us: the real time before that lstat. @summary
 * (nullable): what the owner needs to count the file without parsing
 * @data (the cache: its "information" as JSON text, for a file that
 * counts). Not recorded (and any older record dropped) when the times are
 * too recent to trust. */
void        _tessera_lock_file_index_put          (TesseraLockFileIndex *index,
                                                   const char           *name,
                                                   const struct stat    *st,
                                                   const char           *data,
                                                   gsize                 length,
                                                   const char           *summary,
                                                   gint64                looked_us);
/* jobs/@name is no longer as recorded (written by us, unreadable). */
void        _tessera_lock_file_index_drop         (TesseraLockFileIndex *index,
                                                   const char           *name);
/* How many records changed since the index was read or written. */
guint       _tessera_lock_file_index_get_changes  (TesseraLockFileIndex *index);
/* Writes the records of the names in @names (the lock files still in
 * jobs/) when some changed; quietly does nothing when it cannot. */
void        _tessera_lock_file_index_save         (TesseraLockFileIndex *index,
                                                   GHashTable           *names);

/* A GHashFunc for lock file names, cheaper than g_str_hash (eight bytes
 * at a time): the index's table and the lock file cache's hash each of a
 * pool's names. */
guint       _tessera_lock_file_name_hash          (gconstpointer         name);

/* The file of the index (for tests and messages). */
const char *_tessera_lock_file_index_get_path     (TesseraLockFileIndex *index);

G_END_DECLS
