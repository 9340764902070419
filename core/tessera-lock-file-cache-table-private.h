/* tessera-lock-file-cache-table-private.h: the lock file cache's table,
 * shared by the files that make it up, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-file-warnings-private.h"
#include "tessera-lock-file-cache-private.h"
#include "tessera-lock-file-index-private.h"
#include "tessera-lock-file-stand-in-private.h"

G_BEGIN_DECLS

typedef struct
{
  TesseraHolder h;                    /* name, lock file, identity, holder */
  gboolean accounted;
  gboolean truncated;                 /* empty or cut short: holds all until it reads, or ages away */
  gboolean whole;                     /* names a job, amount unreadable: holds all */
  /* Could not be read at all (no permission, no descriptor left): holds
   * all, read again on every refresh. */
  gboolean unreadable;
  /* Unreadable for what its stat shows (a FIFO, socket, device or folder
   * named like a lock file): never opened, looked at again only when its
   * stat changes. */
  gboolean not_a_file;
  /* Unreadable for its complete text, which the strict scan refuses (a
   * lone surrogate, bytes that are not UTF-8): no writer leaves it
   * half-way, so it never ages away; read again only when its stat
   * changes. */
  gboolean refused;
  char *problem;                      /* why an unreadable entry holds all */
  /* Taken from the index by a lazy view, not built yet (h.lock_file and
   * h.process NULL): counted through its stand-in. */
  TesseraRecorded *recorded;
  /* git's racy rule for a lock file: read within its clock tick, it may
   * be re-made in that tick with the same inode, mtime and size (one-second
   * times). Until read again after the tick, the text read is kept here to
   * compare with; NULL: the stat proves the text. */
  GBytes *racy_text;
  gint64 racy_since;                  /* monotonic, just after that first read */
  mode_t type;                        /* S_IFMT of the stat: a link re-made as a file is new */
} Entry;

struct _TesseraLockFileCache
{
  TesseraLockFolder *folder;
  TesseraFolderMonitor *monitor;
  TesseraHolderMonitor *holders;
  GType lock_file_type;
  gboolean read_only;
  const TesseraLockFileCacheCalls *calls;
  gpointer owner;
  GHashTable *cache;          /* name → Entry */
  GHashTable *attention;      /* names to look at on every refresh */
  gboolean lazy;              /* holders read are not judged (they count) until judge_all */
  double min_age;             /* of the last refresh */
  guint64 serial;             /* moves whenever accounting changes */
  guint whole_holders;        /* entries that hold everything (accounted, unreadable, not JSON) */
  gboolean jobs_hostile;      /* jobs/ is not a folder (a planted link): use nothing in it */
  int look_errno;             /* this refresh could not read jobs/ or a name in it: decide nothing */
  gboolean look_warned;       /* said so, since the last look that succeeded */
  TesseraLockFileIndex *index; /* what a previous process read; NULL: none (not a local fs) */
  gboolean index_opened;
  /* File times come from our own clock (a local file system, known once
   * the index is opened): a lock file's mtime a tick before we looked
   * proves it was read after its tick. Else only our monotonic clock does. */
  gboolean same_clock;
  gint64 looked_us;           /* real time at the start of this refresh: before any stat */
  guint index_hits;           /* lock files taken from the index, not read */
  guint files_read;
  guint holders_built;        /* lock file objects made of what jobs/ holds */
  TesseraStandIns *stand_ins; /* what lock files counted from the index are counted through */
};

#define OWNER_NAME(cache) ((cache)->calls->name ((cache)->owner))

/* The table's own steps (tessera-lock-file-cache.c), for the writes of
 * this process's own lock files (tessera-lock-file-cache-writes.c). */
void     _tessera_lock_file_cache_entry_set_stat (Entry *entry, const struct stat *st);
void     _tessera_lock_file_cache_account        (TesseraLockFileCache *cache, Entry *entry);
void     _tessera_lock_file_cache_remove_entry   (TesseraLockFileCache *cache, const char *name);
/* Decides whether a lock file still holds. Under ipc.lock. FALSE when
 * the entry is gone, or left (judged gone, its file another user's that
 * we may not delete: it counts no more, and stays so while its stat
 * does). */
gboolean _tessera_lock_file_cache_examine_entry  (TesseraLockFileCache *cache, Entry *entry, double min_age);

/* What cannot be read (tessera-lock-file-cache-unreadable.c). The
 * warning of a failed look at jobs/ and the error of the decisions it
 * stops, in the same words. */
char    *_tessera_lock_file_cache_look_failure_text (TesseraLockFileCache *cache);
/* A look at jobs/ failed (@saved_errno): what was known stays; this
 * refresh decides nothing and the next reads jobs/ whole. */
void     _tessera_lock_file_cache_look_failed      (TesseraLockFileCache *cache, int saved_errno);
/* @entry holds everything unread, for @problem (shown by status); read
 * again on every refresh unless it is not a file. */
void     _tessera_lock_file_cache_keep_unreadable  (TesseraLockFileCache *cache, Entry *entry, const char *problem);
/* @entry (at @path) is a FIFO, socket, device or folder: it holds
 * everything until its stat changes; warned about unless
 * @was_unreadable. */
void     _tessera_lock_file_cache_keep_not_a_file  (TesseraLockFileCache *cache, Entry *entry, const char *path,
                                                    gboolean was_unreadable);
/* Whether @name, which could not be opened as a regular file, is now no
 * file nor link (its stat in @st). @jobs_fd: jobs/, or -1. */
gboolean _tessera_lock_file_cache_swapped_for_not_a_file (TesseraLockFileCache *cache, const char *name,
                                                          int jobs_fd, struct stat *st);
/* (transfer full): how an unreadable @entry (or one not JSON) is listed. */
TesseraDynamicLockFile *_tessera_lock_file_cache_show_unreadable (TesseraLockFileCache *cache, Entry *entry);

G_END_DECLS
