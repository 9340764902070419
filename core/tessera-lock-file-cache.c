/* tessera-lock-file-cache.c: the table of a pool's lock files: scanning
 * jobs/, loading, accounting, what cannot be read, this process's own lock
 * files (made, named with their process, removed) and the removal of those
 * whose holder is gone
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-file-warnings-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-job-private.h"
#include "tessera-lock-file-cache-private.h"
#include "tessera-lock-file-index-private.h"
#include "tessera-lock-file-salvage-private.h"
#include "tessera-lock-file-stand-in-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"
#include "tessera-process-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

/* Records changed in one refresh above which the index is written at once
 * (a fresh process's first scan read that many files: writing them costs
 * a fraction of that); fewer wait for the cache's end. */
#define INDEX_SAVE_CHANGES 256

/* The entries of a scan into an empty table (a fresh process's, of
 * thousands of lock files, all let go at its end) are made in blocks of
 * this size, not one allocation each. */
#define ENTRY_BLOCK_SIZE (64 * 1024)

/* A block of entries, followed by them: it goes with the last of them. */
typedef struct
{
  guint live;                         /* its entries not freed, and 1 while the cache fills it */
} EntryBlock;

typedef struct
{
  TesseraHolder h;                    /* name, lock file, identity, holder */
  /* Bits, not gbooleans: a fresh process makes 10 000 entries, and each
   * page of them is a fault. */
  guint accounted : 1;
  guint truncated : 1;                /* empty or cut short: holds all until it reads, or ages away */
  guint whole : 1;                    /* names a job, amount unreadable: holds all */
  /* Could not be read at all (no permission, no descriptor left): holds
   * all, read again on every refresh. */
  guint unreadable : 1;
  /* Unreadable for what its stat shows (a FIFO, socket, device or folder
   * named like a lock file): never opened, looked at again only when its
   * stat changes. */
  guint not_a_file : 1;
  /* Unreadable for its complete text, which the strict scan refuses (a
   * lone surrogate, bytes that are not UTF-8): no writer leaves it
   * half-way, so it never ages away; read again only when its stat
   * changes. */
  guint refused : 1;
  mode_t type;                        /* S_IFMT of the stat: a link re-made as a file is new */
  char *problem;                      /* why an unreadable entry holds all */
  /* Taken from the index by a lazy view, not built yet (h.lock_file and
   * h.process NULL): counted through its stand-in. Unused while
   * recorded.stand_in is NULL. */
  TesseraRecorded recorded;
  /* git's racy rule for a lock file: read within its clock tick, it may
   * be re-made in that tick with the same inode, mtime and size (one-second
   * times). Until read again after the tick, the text read is kept here to
   * compare with; NULL: the stat proves the text. */
  GBytes *racy_text;
  gint64 racy_since;                  /* monotonic, just after that first read */
  EntryBlock *block;                  /* where it was made; NULL: an allocation of its own */
} Entry;

struct _TesseraLockFileCache
{
  TesseraLockFolder *folder;
  TesseraFolderMonitor *monitor;
  TesseraHolderMonitor *holders;
  GType lock_file_type;
  gboolean read_only;
  /* Its owner, the folder store, which it calls up: the resource type's
   * accounting (the store's owner_class), the owner's audit of reclaims,
   * the resource's name and min-age, read where they are kept. */
  TesseraPoolStore *store;
  GHashTable *cache;          /* name → Entry */
  GHashTable *attention;      /* names to look at on every refresh */
  gboolean lazy;              /* holders read are not judged (they count) until judge_all */
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
  /* While a scan fills an empty table: new entries are made in blocks,
   * the last one made and its free space (NULL and 0 before the first). */
  gboolean in_blocks;
  EntryBlock *filling;
  char *filling_next;
  gsize filling_left;
};

#define OWNER_NAME(cache) ((cache)->store->name)
#define ACCOUNT(cache, lock_file) \
  ((cache)->store->owner_class->account_lock_file ((cache)->store->owner, (lock_file)))
#define UNACCOUNT(cache, lock_file) \
  ((cache)->store->owner_class->unaccount_lock_file ((cache)->store->owner, (lock_file)))
#define RECLAIMED(cache, name, lock_file, reason, left) \
  ((cache)->store->owner_calls->audit_reclaim ((cache)->store->owner, (name), (lock_file), (reason), (left)))

/* What tells a lock file from the next one of the same name. */
static void
entry_set_stat (Entry *entry, const struct stat *st)
{
  entry->h.ino = st->st_ino;
  entry->h.mtime_ns = _tessera_stat_mtime_ns (st);
  entry->h.size = st->st_size;
  entry->type = st->st_mode & S_IFMT;
}

static gboolean
entry_same_stat (Entry *entry, const struct stat *st)
{
  return entry->h.ino == st->st_ino && entry->h.mtime_ns == _tessera_stat_mtime_ns (st) &&
         entry->h.size == st->st_size && entry->type == (st->st_mode & S_IFMT);
}

#define ENTRY_ALIGN(size) (((size) + G_ALIGNOF (Entry) - 1) & ~(gsize) (G_ALIGNOF (Entry) - 1))

static void
entry_block_release (EntryBlock *block)
{
  if (--block->live == 0)
    g_free (block);
}

/* Where the next entry of @size goes while a scan fills an empty table:
 * the filling block, or a new one when there is none or it is full; NULL
 * when @size does not fit in a block. */
static Entry *
entry_block_take (TesseraLockFileCache *cache, gsize size)
{
  Entry *entry;

  if (size > ENTRY_BLOCK_SIZE - ENTRY_ALIGN (sizeof (EntryBlock)))
    return NULL;
  if (size > cache->filling_left)
    {
      if (cache->filling != NULL)
        entry_block_release (cache->filling);
      /* Not zeroed as a whole: each entry is, when taken (its name is
       * copied over the rest). */
      cache->filling = g_malloc (ENTRY_BLOCK_SIZE);
      cache->filling->live = 1;
      cache->filling_next = (char *) cache->filling + ENTRY_ALIGN (sizeof (EntryBlock));
      cache->filling_left = ENTRY_BLOCK_SIZE - ENTRY_ALIGN (sizeof (EntryBlock));
    }
  entry = memset (cache->filling_next, 0, sizeof (Entry));
  cache->filling_next += size;
  cache->filling_left -= size;
  cache->filling->live++;
  entry->block = cache->filling;
  return entry;
}

/* An entry for @name, its name after it in the same allocation; made in
 * the filling block, if any (see ENTRY_BLOCK_SIZE). */
static Entry *
entry_new (TesseraLockFileCache *cache, const char *name)
{
  gsize length = strlen (name) + 1;
  gsize size = ENTRY_ALIGN (sizeof (Entry) + length);
  Entry *entry = cache->in_blocks ? entry_block_take (cache, size) : NULL;

  if (entry == NULL)
    entry = g_malloc0 (size);
  entry->h.name = memcpy ((char *) (entry + 1), name, length);
  return entry;
}

/* A GDestroyNotify: the table's, called with its exact type. It only
 * reads the entry (no g_clear_*, which writes NULL back): the command's
 * table is filled before it forks its command and freed after, when each
 * write to a page would cost a copy-on-write fault, one per page of
 * entries (480 of them with 10 000 holders). */
static void
entry_free (gpointer data)
{
  Entry *entry = data;

  if (entry->racy_text != NULL)
    g_bytes_unref (entry->racy_text);
  g_free (entry->problem);
  if (entry->h.lock_file != NULL)
    g_object_unref (entry->h.lock_file);
  if (entry->h.process != NULL)
    g_object_unref (entry->h.process);
  if (entry->block != NULL)
    {
      EntryBlock *block = entry->block;

#ifdef __SANITIZE_ADDRESS__
      /* Its memory stays in the block: AddressSanitizer is told, so that
       * a use after this free is caught as with an entry of its own. */
      ASAN_POISON_MEMORY_REGION (entry, ENTRY_ALIGN (sizeof (Entry) + strlen (entry->h.name) + 1));
#endif
      entry_block_release (block);
    }
  else
    g_free (entry);
}

TesseraLockFileCache *
_tessera_lock_file_cache_new (TesseraLockFolder    *folder,
                              TesseraFolderMonitor *monitor,
                              TesseraHolderMonitor *holders,
                              TesseraPoolStore     *store)
{
  TesseraLockFileCache *cache = g_new0 (TesseraLockFileCache, 1);

  cache->folder = folder;
  cache->monitor = monitor;
  cache->holders = holders;
  /* Set before the store's open, and never changed after. */
  cache->lock_file_type = store->lock_file_type;
  cache->read_only = store->read_only;
  cache->store = store;
  cache->cache = g_hash_table_new_full (_tessera_lock_file_name_hash, g_str_equal, NULL, entry_free);
  cache->attention = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  cache->stand_ins = _tessera_stand_ins_new (cache->lock_file_type, _tessera_lock_folder_get_jobs_path (folder));
  /* Holders are judged only when their share is needed, or on an update:
   * a read-only view (status) counts them all anyway (it removes none)
   * and asks for the verdicts it shows itself. */
  cache->lazy = TRUE;
  return cache;
}

void
_tessera_lock_file_cache_free (TesseraLockFileCache *cache)
{
  if (cache == NULL)
    return;
  if (cache->index != NULL)
    {
      g_debug ("Lock file index %s: %u lock files taken from it, %u read from %s; holders built: %u",
               _tessera_lock_file_index_get_path (cache->index), cache->index_hits, cache->files_read,
               _tessera_lock_folder_get_jobs_path (cache->folder), cache->holders_built);
      _tessera_lock_file_index_save (cache->index, cache->cache);
    }
  /* Entries not built borrow their text from the index and their
   * stand-in from the stand-ins: they go first. */
  g_hash_table_unref (cache->cache);
  _tessera_lock_file_index_free (cache->index);
  g_hash_table_unref (cache->attention);
  _tessera_stand_ins_free (cache->stand_ins);
  g_free (cache);
}

/* ---------------------------------------------------------------------- */
/* Accounting */

/* What the resource type counts for @entry: its lock file, or the
 * stand-in of one not built yet. */
static TesseraDynamicLockFile *
counted_file (Entry *entry)
{
  return entry->h.lock_file != NULL ? entry->h.lock_file
         : entry->recorded.stand_in;
}

static void
account (TesseraLockFileCache *cache, Entry *entry)
{
  TesseraDynamicLockFile *counted = counted_file (entry);

  /* A stand-in is valid: the stand-ins keep no other. */
  if (counted != NULL && !entry->accounted &&
      (counted == entry->recorded.stand_in || tessera_dynamic_lock_file_is_valid (counted)))
    {
      ACCOUNT (cache, counted);
      entry->accounted = TRUE;
      cache->whole_holders += entry->whole;
      cache->serial++;
    }
}

static void
unaccount (TesseraLockFileCache *cache, Entry *entry)
{
  if (entry->unreadable || entry->truncated)
    {
      cache->whole_holders -= (guint) entry->unreadable + (guint) entry->truncated;
      entry->unreadable = entry->truncated = FALSE;
      cache->serial++;
    }
  if (entry->accounted)
    {
      UNACCOUNT (cache, counted_file (entry));
      entry->accounted = FALSE;
      cache->whole_holders -= entry->whole;
      cache->serial++;
    }
}

/* _tessera_lock_file_cache_forget() of @name, whose @entry was already
 * looked up. */
static void
forget_known_entry (TesseraLockFileCache *cache, const char *name, Entry *entry)
{
  unaccount (cache, entry);
  _tessera_holder_monitor_unwatch (cache->holders, &entry->h);
  g_hash_table_remove (cache->attention, name);
  g_hash_table_remove (cache->cache, name);
}

/* ---------------------------------------------------------------------- */
/* What cannot be read in jobs/: a look at the folder that failed (nothing
 * is decided), and entries that hold everything unread (a lock file that
 * cannot be opened, a FIFO or the like named like one), shown by their
 * reason */

/* The warning of a failed look, and the error of the decisions it stops,
 * in the same words (a command that shows both says it once). */
static char *
look_failure_text (TesseraLockFileCache *cache)
{
  return g_strdup_printf (_("Cannot read %s (%s): its holders cannot be counted, so nothing is granted until it "
                            "can be read"),
                          _tessera_lock_folder_get_jobs_path (cache->folder), g_strerror (cache->look_errno));
}

/* What was known stays; this refresh decides nothing (see
 * _tessera_lock_file_cache_check_usable()) and the next reads jobs/ whole. */
static void
look_failed (TesseraLockFileCache *cache, int saved_errno)
{
  cache->look_errno = saved_errno != 0 ? saved_errno : EIO;
  _tessera_folder_monitor_force_scan (cache->monitor);
  /* Once until a look succeeds: a read-only user (status) sees no error. */
  if (!cache->look_warned)
    {
      g_autofree char *text = look_failure_text (cache);

      g_warning ("%s", text);
    }
  cache->look_warned = TRUE;
}

/* A lock file that could not be read at all (@problem says why): whoever
 * wrote it may hold anything, so it counts as a holder of everything
 * until it is read or gone (unaccount() takes that back); read again on
 * every refresh, unless it is not a file at all (its stat tells when that
 * changes). */
static void
keep_unreadable (TesseraLockFileCache *cache, Entry *entry, const char *problem)
{
  entry->unreadable = TRUE;
  g_free (entry->problem);
  entry->problem = g_strdup (problem);
  cache->whole_holders++;
  cache->serial++;
  g_hash_table_replace (cache->cache, entry->h.name, entry);
  if (!entry->not_a_file)
    g_hash_table_add (cache->attention, g_strdup (entry->h.name));
}

/* A FIFO, socket, device or folder named like a lock file: it cannot be
 * read (and is never opened), so it holds everything until it is gone
 * (`tessera clean --force` removes it). */
static void
keep_not_a_file (TesseraLockFileCache *cache, Entry *entry, const char *path, gboolean was_unreadable)
{
  if (cache->index != NULL)
    _tessera_lock_file_index_drop (cache->index, entry->h.name);
  if (!was_unreadable)
    _tessera_file_warning (_("%s is not a regular file (a FIFO, socket, device or folder): it counts as holding "
                             "everything until it is removed"), path);
  entry->not_a_file = TRUE;
  keep_unreadable (cache, entry, _("it is not a regular file (a FIFO, socket, device or folder): it holds "
                                    "everything"));
}

/* Whether the lock file @name, which could not be opened as a regular
 * file, is now something else than a file or a link: its stat in @st. */
static gboolean
swapped_for_not_a_file (TesseraLockFileCache *cache, const char *name, int jobs_fd, struct stat *st)
{
  int dir_fd = jobs_fd >= 0 ? jobs_fd : _tessera_lock_folder_open_jobs (cache->folder);
  gboolean swapped;

  if (dir_fd < 0)
    return FALSE;
  swapped = fstatat (dir_fd, name, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG (st->st_mode) && !S_ISLNK (st->st_mode);
  if (dir_fd != jobs_fd)
    close (dir_fd);
  return swapped;
}

/* What tessera_tracked_dynamic_resource_list_lock_files() shows of an
 * unreadable @entry, or of one empty or cut short (both hold everything): a
 * lock file with its path and its problem only. */
static TesseraDynamicLockFile *
show_unreadable (TesseraLockFileCache *cache, Entry *entry)
{
  g_autofree char *path = _tessera_lock_folder_dup_job_path (cache->folder, entry->h.name);
  TesseraDynamicLockFile *shown = g_object_new (cache->lock_file_type, "path", path, NULL);

  _tessera_dynamic_lock_file_set_problem (shown, entry->problem != NULL ? entry->problem
                                                  : _("it is empty or cut short: it holds everything until it "
                                                      "reads or, unchanged for min-age, goes"));
  return shown;
}

/* ---------------------------------------------------------------------- */
/* Loading */

/* Counts a lock file the index covers without building it: a lazy view
 * judges nobody until their share is needed, so until then only the
 * accounting of its information matters. FALSE when it cannot (no
 * summary, no stand-in): then it is built. */
static gboolean
defer_entry (TesseraLockFileCache *cache, Entry *entry, const char *recorded, gsize length, const char *summary,
             const struct stat *st)
{
  if (!cache->lazy || summary == NULL ||
      !_tessera_recorded_init (&entry->recorded, cache->stand_ins, summary, recorded, length, st))
    return FALSE;
  cache->index_hits++;
  g_hash_table_replace (cache->cache, entry->h.name, entry);
  account (cache, entry);
  return TRUE;
}

/* Builds the lock file of an entry counted from the index, when first
 * needed (a judgement, a decision, a display): from the recorded text,
 * exactly as if read, its accounting moved from the stand-in to it. FALSE
 * when the entry has no lock file: the text no longer makes one (a
 * plugin changed since it was recorded): it then keeps counting as
 * recorded until the next look at jobs/ reads it again. */
static gboolean
build_entry (TesseraLockFileCache *cache, Entry *entry)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  TesseraDynamicLockFile *lock_file;

  if (entry->recorded.stand_in == NULL || entry->h.lock_file != NULL)
    return entry->h.lock_file != NULL;
  path = _tessera_lock_folder_dup_job_path (cache->folder, entry->h.name);
  lock_file = _tessera_recorded_build (&entry->recorded, cache->lock_file_type, path, &error);
  if (lock_file == NULL)
    {
      g_debug ("Lock file %s as recorded in the index no longer loads (%s): read again", path, error->message);
      entry->h.ino = 0;   /* so not the same stat: read again */
      g_hash_table_add (cache->attention, g_strdup (entry->h.name));
      return FALSE;
    }
  cache->holders_built++;
  entry->h.lock_file = lock_file;
  if (entry->accounted)
    {
      /* The same information: the totals do not move (nor the serial). */
      UNACCOUNT (cache, entry->recorded.stand_in);
      ACCOUNT (cache, lock_file);
    }
  entry->recorded.stand_in = NULL;
  if (tessera_dynamic_lock_file_get_process (lock_file) != NULL)
    entry->h.process = g_object_ref (tessera_dynamic_lock_file_get_process (lock_file));
  return TRUE;
}

/* Keeps the text of a lock file read within its clock tick (see Entry):
 * a file re-made in that tick would pass for it. On our own clock, times
 * a tick before we looked settle it at once. */
static void
note_racy (TesseraLockFileCache *cache, Entry *entry, const struct stat *st, const char *data, gsize length)
{
  if (cache->same_clock && _tessera_stat_tick_before (st, cache->looked_us))
    return;
  entry->racy_text = g_bytes_new (data, length);
  /* After the read, so after whatever stamped the file. */
  entry->racy_since = g_get_monotonic_time ();
}

/* Reads (or re-reads) one lock file; @old: @name's entry, NULL for a new
 * name (the caller looked it up: a first scan looks each name up once);
 * @jobs_fd: jobs/ when the caller opened it, else -1. */
static void
load_entry (TesseraLockFileCache *cache, const char *name, Entry *old, const struct stat *st, int jobs_fd)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  gboolean holder_unknown = FALSE, whole = FALSE, truncated = FALSE;
  const char *recorded = NULL;
  const char *summary = NULL;
  gsize length = 0;
  Entry *entry;
  gboolean was_unreadable = old != NULL && old->unreadable;
  struct stat swapped_st;
  g_autofree char *refused = NULL;

  if (old != NULL)
    forget_known_entry (cache, name, old);
  entry = entry_new (cache, name);
  entry_set_stat (entry, st);
  /* The text a previous process read of this very file (same inode, size
   * and times): counted from its summary, or parsed below exactly as if
   * read again. */
  if (S_ISREG (st->st_mode) && cache->index != NULL &&
      (recorded = _tessera_lock_file_index_lookup (cache->index, name, st, &length, &summary)) != NULL &&
      defer_entry (cache, entry, recorded, length, summary, st))
    return;
  path = _tessera_lock_folder_dup_job_path (cache->folder, name);

  if (S_ISLNK (st->st_mode))
    _tessera_file_warning (_("Ignoring %s: a lock file must not be a symbolic link"), path);
  else if (!S_ISREG (st->st_mode))
    {
      keep_not_a_file (cache, entry, path, was_unreadable);
      return;
    }
  else
    {
      g_autofree char *data = NULL;

      if (recorded != NULL)
        {
          data = g_memdup2 (recorded, length);
          cache->index_hits++;
          entry->h.lock_file = _tessera_dynamic_lock_file_new_from_text (cache->lock_file_type, path, data, length,
                                                                         st, &error);
          cache->holders_built += entry->h.lock_file != NULL;
        }
      else
        {
          /* Read once: under ipc.lock no writer is half-way, and what does
           * not load is judged from this very text. */
          int dir_fd = jobs_fd >= 0 ? jobs_fd : _tessera_lock_folder_open_jobs (cache->folder);

          if (dir_fd < 0)
            {
              /* jobs/ gone, or swapped for a link, since it was listed;
               * anything else (no descriptor left) proves nothing, and
               * what this file held is not known. */
              int saved = errno;

              if (saved == ENOENT || saved == ENOTDIR || saved == ELOOP)
                entry_free (entry);
              else
                {
                  g_autofree char *problem = g_strdup_printf (_("it cannot be read (%s): it holds everything"),
                                                              g_strerror (saved));

                  look_failed (cache, saved);
                  keep_unreadable (cache, entry, problem);
                }
              return;
            }
          entry->h.lock_file = _tessera_dynamic_lock_file_load_once (cache->lock_file_type, dir_fd, name, path,
                                                                     &data, &length, &error);
          if (dir_fd != jobs_fd)
            close (dir_fd);
          cache->files_read++;
          cache->holders_built += entry->h.lock_file != NULL;
          if (data != NULL)
            note_racy (cache, entry, st, data, length);
          if (cache->index != NULL && entry->h.lock_file != NULL)
            {
              g_autofree char *made = _tessera_lock_file_summarize (entry->h.lock_file);
              _tessera_lock_file_index_put (cache->index, name, st, data, length, made, cache->looked_us);
            }
        }
      if (entry->h.lock_file == NULL)
        {
          if (cache->index != NULL)
            _tessera_lock_file_index_drop (cache->index, name);
          if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            {
              entry_free (entry);
              return;
            }
          if (error != NULL && error->domain == G_IO_ERROR)
            {
              /* Not read at all: whoever wrote it may hold anything. */
              g_autofree char *problem = g_strdup_printf (_("it cannot be read (%s): it holds everything"),
                                                          error->message);

              if (!was_unreadable)
                _tessera_file_warning (_("Lock file %s of %s cannot be read (%s): it counts as holding everything"),
                                       path, OWNER_NAME (cache), error->message);
              keep_unreadable (cache, entry, problem);
              return;
            }
          if (data == NULL && swapped_for_not_a_file (cache, name, jobs_fd, &swapped_st))
            {
              /* Made a FIFO (or the like) since it was looked at. */
              entry_set_stat (entry, &swapped_st);
              keep_not_a_file (cache, entry, path, was_unreadable);
              return;
            }
          entry->h.lock_file = _tessera_lock_file_salvage_failed (cache->lock_file_type, path, OWNER_NAME (cache),
                                                                  data, length, error, &whole,
                                                                  &holder_unknown, &truncated, &refused);
          entry->whole = whole;
          entry->truncated = truncated;
          if (refused != NULL)
            {
              /* Complete, refused: it holds everything until removed. */
              entry->refused = TRUE;
              keep_unreadable (cache, entry, refused);
              return;
            }
          if (entry->truncated && (st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
            {
              /* Cut short, but others may write it: a co-user may have
               * cut a live holder's file, so it does not age away. */
              entry->truncated = FALSE;
              entry->refused = TRUE;
              keep_unreadable (cache, entry,
                               _("it is cut short and users other than its owner may write it: it holds "
                                 "everything until tessera clean --force removes it"));
              return;
            }
          cache->whole_holders += entry->truncated;   /* cut short: it holds everything */
          cache->serial += entry->truncated;
        }
    }

  g_hash_table_replace (cache->cache, entry->h.name, entry);
  if (entry->h.lock_file == NULL)
    {
      /* Re-examined on every refresh: a peer may still be writing it. */
      g_hash_table_add (cache->attention, g_strdup (name));
      return;
    }
  account (cache, entry);
  if (!tessera_dynamic_lock_file_is_valid (entry->h.lock_file))
    return;
  if (holder_unknown)
    {
      entry->h.process = _tessera_process_new_unknown (_("its process spec cannot be read"));
      entry->h.spec_unreadable = TRUE;
    }
  else if (tessera_dynamic_lock_file_get_process (entry->h.lock_file) != NULL)
    entry->h.process = g_object_ref (tessera_dynamic_lock_file_get_process (entry->h.lock_file));
  /* A holder counts until judged (when in doubt, a holder counts): a
   * lazy view judges it only when its share is needed. */
  if (!cache->lazy)
    g_hash_table_add (cache->attention, g_strdup (name));
}

/* Decides whether a lock file still holds. Under ipc.lock. Returns FALSE
 * when the entry is gone, or left (judged gone, its file another user's
 * that we may not delete: it counts no more, and stays so while its stat
 * does). */
static gboolean
examine_entry (TesseraLockFileCache *cache, Entry *entry, double min_age)
{
  g_autofree char *reason = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  gboolean found;

  if (entry->h.lock_file == NULL)
    {
      /* Cut short under ipc.lock (which every writer holds): its writer
       * died half-way. It holds everything until, once old enough, it
       * goes. (Complete text refused is unreadable: it stays.) */
      if (!entry->truncated || !_tessera_holder_monitor_seen_for (cache->holders, &entry->h, min_age))
        return TRUE;
      reason = g_strdup (_("it is not JSON (its writer died while writing it)"));
    }
  else if (!tessera_dynamic_lock_file_is_valid (entry->h.lock_file))
    return TRUE;
  else
    switch (_tessera_holder_monitor_judge (cache->holders, &entry->h, min_age, &reason))
      {
      case TESSERA_HOLDER_HOLDS:
        return TRUE;
      case TESSERA_HOLDER_HOLDS_UNATTENDED:
        g_hash_table_remove (cache->attention, entry->h.name);
        return TRUE;
      case TESSERA_HOLDER_GONE:
      default:
        break;
      }

  /* A read-only view shows the dead holder as dead and leaves it be. */
  if (cache->read_only)
    return TRUE;
  path = _tessera_lock_folder_dup_job_path (cache->folder, entry->h.name);
  /* Only the very file we judged, never through a link. */
  found = _tessera_lock_folder_remove_job (cache->folder, entry->h.name, entry->h.ino, &error);
  if (found && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    {
      /* Another user's file in a sticky jobs/ (a group pool): its owner,
       * root or the pool's owner removes it (tessera clean says which are
       * left). It counts no more, and is not judged again while its stat
       * stays (reload() keeps such an entry as it is): no word on every
       * refresh. */
      g_debug ("Lock file %s of %s is gone (%s), left to its owner: %s", path, OWNER_NAME (cache), reason,
               error->message);
      RECLAIMED (cache, entry->h.name, entry->h.lock_file, reason, TRUE);
      unaccount (cache, entry);
      _tessera_holder_monitor_unwatch (cache->holders, &entry->h);
      g_hash_table_remove (cache->attention, entry->h.name);
      return FALSE;
    }
  if (found)
    {
      g_info (_("Removing lock file %s of %s: %s"), path, OWNER_NAME (cache), reason);
      RECLAIMED (cache, entry->h.name, entry->h.lock_file, reason, FALSE);
      if (error != NULL)
        g_warning ("%s", error->message);
      _tessera_holder_monitor_forget (cache->holders, &entry->h);
    }
  _tessera_lock_file_cache_forget (cache, entry->h.name);
  return FALSE;
}

/* ---------------------------------------------------------------------- */
/* Refreshing */

/* An entry of unchanged stat @st, read within its clock tick: TRUE when
 * its text is still the one read, or could not be looked at for want of
 * resources (the entry stands; once read after the tick, its stat alone
 * proves its text). @now_mono: before @st was taken. */
static gboolean
racy_text_unchanged (TesseraLockFileCache *cache, Entry *entry, const struct stat *st, int dir_fd, gint64 now_mono)
{
  gsize length = 0;
  g_autofree char *data = NULL;
  int fd = dir_fd >= 0 ? dir_fd : _tessera_lock_folder_open_jobs (cache->folder);
  int saved = errno;

  if (fd >= 0)
    {
      data = _tessera_read_bounded_at (fd, entry->h.name, g_bytes_get_size (entry->racy_text), &length, NULL);
      saved = errno;
      if (fd != dir_fd)
        close (fd);
    }
  if (data == NULL)
    {
      /* Out of descriptors or memory proves nothing; else read as new. */
      if (saved != EMFILE && saved != ENFILE && saved != ENOMEM)
        return FALSE;
      look_failed (cache, saved);
      return TRUE;
    }
  cache->files_read++;
  if (length != g_bytes_get_size (entry->racy_text) ||
      (length > 0 && memcmp (data, g_bytes_get_data (entry->racy_text, NULL), length) != 0))
    return FALSE;
  /* Where the kernel stamps from our clock, the file's times say it (also
   * when ahead of us); elsewhere our monotonic clock since the first read. */
  if (cache->same_clock ? _tessera_stat_tick_before (st, cache->looked_us)
                        : now_mono - entry->racy_since >= _tessera_lock_folder_mtime_tick_us (entry->h.mtime_ns))
    g_clear_pointer (&entry->racy_text, g_bytes_unref);
  return TRUE;
}

/* @dir_fd: jobs/ when the caller opened it, else -1. */
static void
reload (TesseraLockFileCache *cache, const char *name, int dir_fd)
{
  Entry *entry = g_hash_table_lookup (cache->cache, name);
  gint64 now_mono = g_get_monotonic_time ();
  struct stat st;

  if (dir_fd >= 0 ? fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0
                  : !_tessera_lock_folder_stat_job (cache->folder, name, &st))
    {
      /* Only a name that is not there is gone: a look that failed (no
       * descriptor left) proves nothing, and the next refresh reads all. */
      if (errno == ENOENT)
        _tessera_lock_file_cache_forget (cache, name);
      else
        look_failed (cache, errno);
      return;
    }
  if (entry != NULL && entry_same_stat (entry, &st) && (!entry->unreadable || entry->not_a_file || entry->refused) &&
      (entry->racy_text == NULL || racy_text_unchanged (cache, entry, &st, dir_fd, now_mono)))
    return;
  load_entry (cache, name, entry, &st, dir_fd);
}

/* The names inotify reported: those it says are gone without a look
 * (most of them, where holders come and go), the others through one
 * opening of jobs/. */
static void
reload_dirty (TesseraLockFileCache *cache, GHashTable *dirty)
{
  GHashTableIter iter;
  gpointer key, value;
  int dir_fd = -2;

  g_hash_table_iter_init (&iter, dirty);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      if (GPOINTER_TO_INT (value) == TESSERA_DIRTY_REMOVED)
        {
          _tessera_lock_file_cache_forget (cache, key);
          continue;
        }
      if (dir_fd == -2)
        dir_fd = _tessera_lock_folder_open_jobs (cache->folder);
      reload (cache, key, dir_fd);
    }
  if (dir_fd >= 0)
    close (dir_fd);
}

static void
collect_name (const char *name, int jobs_fd, gpointer data)
{
  g_ptr_array_add (data, g_strdup (name));
}

static void
reload_name (const char *name, int jobs_fd, gpointer data)
{
  reload (data, name, jobs_fd);
}

/* Reads the whole of jobs/ again (only what changed is loaded); FALSE
 * when it could not be read (nothing was dropped). */
static gboolean
scan_jobs (TesseraLockFileCache *cache, double min_age)
{
  g_autoptr(GPtrArray) seen = NULL;
  g_autoptr(GHashTable) present = NULL;
  g_autoptr(GPtrArray) gone = NULL;
  GHashTableIter iter;
  gpointer key;
  int dir_fd;

  /* A fresh table (every command's) has nothing to drop: its names are
   * loaded as readdir gives them (10 000 copies fewer), into entries made
   * in blocks, a block's memory going with the last of its entries. */
  if (g_hash_table_size (cache->cache) == 0)
    {
      gboolean listed;

      cache->in_blocks = TRUE;
      listed = _tessera_lock_folder_foreach_job (cache->folder, min_age, cache->read_only, reload_name, cache);
      if (!listed)
        look_failed (cache, errno);
      cache->in_blocks = FALSE;
      g_clear_pointer (&cache->filling, entry_block_release);
      cache->filling_left = 0;
      return listed && cache->look_errno == 0;
    }
  /* Else listed whole first, in as short a time as readdir takes, then
   * what is gone dropped: a name missed while a writer renamed over it
   * would be dropped for good. */
  seen = g_ptr_array_new_with_free_func (g_free);
  if (!_tessera_lock_folder_foreach_job (cache->folder, min_age, cache->read_only, collect_name, seen))
    {
      look_failed (cache, errno);
      return FALSE;
    }
  present = g_hash_table_new (g_str_hash, g_str_equal);
  gone = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < seen->len; i++)
    g_hash_table_add (present, g_ptr_array_index (seen, i));
  g_hash_table_iter_init (&iter, cache->cache);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (present, key))
      g_ptr_array_add (gone, g_strdup (key));
  for (guint i = 0; i < gone->len; i++)
    _tessera_lock_file_cache_forget (cache, g_ptr_array_index (gone, i));
  /* jobs/ opened once for all (never through a link), not per name. */
  dir_fd = _tessera_lock_folder_open_jobs (cache->folder);
  for (guint i = 0; i < seen->len; i++)
    reload (cache, g_ptr_array_index (seen, i), dir_fd);
  if (dir_fd >= 0)
    close (dir_fd);
  return cache->look_errno == 0;
}

/* Judges the holders that need it (died, no process yet, not watched),
 * removing the lock files of those gone and of old broken files. */
static void
examine_all (TesseraLockFileCache *cache, double min_age)
{
  g_autoptr(GPtrArray) names = NULL;
  GHashTableIter iter;
  gpointer key;

  /* Holders that died, have no process yet or could not be watched. */
  if (g_hash_table_size (cache->attention) == 0)
    return;
  names = g_ptr_array_new_with_free_func (g_free);
  g_hash_table_iter_init (&iter, cache->attention);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (names, g_strdup (key));
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      Entry *entry = g_hash_table_lookup (cache->cache, name);
      if (entry != NULL && entry->h.lock_file == NULL)
        {
          /* Read again if it changed (a peer may have finished it). */
          reload (cache, name, -1);
          entry = g_hash_table_lookup (cache->cache, name);
        }
      if (entry == NULL)
        g_hash_table_remove (cache->attention, name);
      else
        examine_entry (cache, entry, min_age);
    }
}

gboolean
_tessera_lock_file_cache_refresh (TesseraLockFileCache *cache)
{
  /* Thread lock held, which the resource's setter takes to change it. */
  double min_age = cache->store->min_age;
  g_autoptr(GHashTable) dirty = NULL;
  struct stat st;
  /* The drain itself may ask for a full scan (overflow, jobs/ replaced):
   * the owner drained the monitor before, so read the flag only now. */
  gboolean scan = _tessera_folder_monitor_scan_forced (cache->monitor);
  gint64 now_mono = g_get_monotonic_time ();

  cache->looked_us = g_get_real_time ();
  cache->look_errno = 0;

  if (!_tessera_lock_folder_stat_jobs (cache->folder, &st))
    {
      if (cache->read_only)
        return FALSE;   /* nothing to make, nothing to read: an empty pool */
      _tessera_lock_folder_make_jobs (cache->folder);
      if (!_tessera_lock_folder_stat_jobs (cache->folder, &st))
        st.st_mode = 0;   /* not a folder: see below */
      scan = TRUE;
    }
  /* A co-user may replace jobs/ by a link to a folder of ours: read,
   * write and delete nothing through it (acquire then fails, saying so). */
  if (!S_ISDIR (st.st_mode))
    {
      if (!cache->jobs_hostile)
        g_warning (_("%s is not a folder (a symbolic link?): nothing is read, written or deleted through it; remove it"),
                   _tessera_lock_folder_get_jobs_path (cache->folder));
      cache->jobs_hostile = TRUE;
      return FALSE;
    }
  cache->jobs_hostile = FALSE;
  if (!cache->index_opened)
    {
      cache->index = _tessera_lock_file_index_open (cache->folder, &st, cache->read_only);
      cache->same_clock = _tessera_lock_folder_is_local (cache->folder);
      cache->index_opened = TRUE;
    }
  _tessera_folder_monitor_watch_jobs (cache->monitor);
  scan |= _tessera_folder_monitor_must_scan (cache->monitor, &st);

  /* A read that failed vouches for nothing: the next one is whole. */
  if (scan && scan_jobs (cache, min_age))
    _tessera_folder_monitor_scanned (cache->monitor, &st, now_mono);
  else if ((dirty = _tessera_folder_monitor_take_dirty (cache->monitor)) != NULL)
    reload_dirty (cache, dirty);
  examine_all (cache, min_age);
  if (cache->look_errno == 0)
    cache->look_warned = FALSE;
  if (cache->index != NULL && _tessera_lock_file_index_get_changes (cache->index) >= INDEX_SAVE_CHANGES)
    _tessera_lock_file_index_save (cache->index, cache->cache);
  return TRUE;
}

gboolean
_tessera_lock_file_cache_judge_all (TesseraLockFileCache *cache)
{
  guint64 serial_before = cache->serial;
  GHashTableIter iter;
  gpointer value;

  if (!cache->lazy)
    return FALSE;   /* every holder was judged as it was read */
  /* From now on this process may wait on the pool: every holder it reads
   * is judged at once, so that the deaths of those alive wake it. */
  cache->lazy = FALSE;
  g_hash_table_iter_init (&iter, cache->cache);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((Entry *) value)->accounted)
      {
        /* Holders counted from the index are judged too: built first. */
        build_entry (cache, value);
        g_hash_table_add (cache->attention, g_strdup (((Entry *) value)->h.name));
      }
  examine_all (cache, cache->store->min_age);
  return cache->serial != serial_before;
}

gboolean
_tessera_lock_file_cache_jobs_refused (TesseraLockFileCache *cache)
{
  return cache->jobs_hostile;
}

gboolean
_tessera_lock_file_cache_check_readable (TesseraLockFileCache *cache, GError **error)
{
  if (cache->jobs_hostile)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("%s is not a folder (a symbolic link?): refusing to use it; remove it"),
                   _tessera_lock_folder_get_jobs_path (cache->folder));
      return FALSE;
    }
  /* Holders it could not see may hold what looks free. */
  if (cache->look_errno != 0)
    {
      g_autofree char *text = look_failure_text (cache);

      g_set_error_literal (error, G_IO_ERROR, g_io_error_from_errno (cache->look_errno), text);
      return FALSE;
    }
  return TRUE;
}

gboolean
_tessera_lock_file_cache_check_usable (TesseraLockFileCache *cache, GError **error)
{
  g_autoptr(GPtrArray) held = NULL;

  if (!_tessera_lock_file_cache_check_readable (cache, error))
    return FALSE;
  /* No two hosts of which one's locks do not cross; where ours do not,
   * only a pool of this host is safe. */
  if (!_tessera_holder_monitor_locks_cross_hosts (cache->holders))
    held = _tessera_lock_file_cache_list (cache);
  return _tessera_holder_monitor_check_hosts (cache->holders, held, error);
}

gboolean
_tessera_lock_file_cache_check_holder_name (TesseraLockFileCache  *cache,
                                            const char            *job,
                                            GError               **error)
{
  if (*job == '\0' || strchr (job, '/') != NULL || g_str_equal (job, ".") || g_str_equal (job, "..") ||
      g_str_has_suffix (job, TESSERA_LOCK_FILE_SUFFIX) || strlen (job) > 256 || !g_utf8_validate (job, -1, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME,
                   _("“%s” is not a holder's name (task@identifier, as “tessera status” shows it)"), job);
      return FALSE;
    }
  if (cache->read_only)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), OWNER_NAME (cache));
      return FALSE;
    }
  return TRUE;
}

void
_tessera_lock_file_cache_holder_exited (TesseraLockFileCache *cache,
                                        GPid                  pid,
                                        guint64               serial)
{
  g_autoptr(GHashTable) names = _tessera_holder_monitor_take_exited (cache->holders, pid, serial);
  GHashTableIter iter;
  gpointer name;

  if (names == NULL)
    return;
  g_hash_table_iter_init (&iter, names);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    {
      Entry *entry = g_hash_table_lookup (cache->cache, name);
      if (entry != NULL)
        {
          entry->h.watched = FALSE;
          g_hash_table_add (cache->attention, g_strdup (entry->h.name));
        }
    }
  g_debug ("Holder %d of %s exited", pid, OWNER_NAME (cache));
}

/* ---------------------------------------------------------------------- */
/* What the resource reads and changes */

guint64
_tessera_lock_file_cache_get_serial (TesseraLockFileCache *cache)
{
  return cache->serial;
}

guint
_tessera_lock_file_cache_get_whole_holders (TesseraLockFileCache *cache)
{
  return cache->whole_holders;
}

TesseraDynamicLockFile *
_tessera_lock_file_cache_get_lock_file (TesseraLockFileCache *cache,
                                        const char           *name)
{
  Entry *entry = g_hash_table_lookup (cache->cache, name);

  return entry != NULL && build_entry (cache, entry) ? entry->h.lock_file : NULL;
}

GPtrArray *
_tessera_lock_file_cache_list (TesseraLockFileCache *cache)
{
  GPtrArray *result = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, cache->cache);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Entry *entry = value;
      if (entry->accounted && build_entry (cache, entry))
        g_ptr_array_add (result, g_object_ref (entry->h.lock_file));
      else if (entry->unreadable || entry->truncated)
        g_ptr_array_add (result, show_unreadable (cache, entry));
    }
  return result;
}

/* ---------------------------------------------------------------------- */
/* This process's own lock files: made, named with their process, removed */

gboolean
_tessera_lock_file_cache_create (TesseraLockFileCache  *cache,
                                 const char            *name,
                                 TesseraJob            *job,
                                 JsonNode              *information,
                                 GError               **error)
{
  g_autofree char *path = _tessera_lock_folder_dup_job_path (cache->folder, name);
  gint64 mtime_before = _tessera_folder_monitor_jobs_mtime (cache->monitor);
  TesseraProcess *process = tessera_job_get_process (job);
  TesseraDynamicLockFile *lock_file;
  guint64 folder_dev = 0, folder_ino = 0;
  gboolean folder_known;
  int locks_cross;
  Entry *entry;
  struct stat st;

  if (g_hash_table_contains (cache->cache, name))
    {
      /* Our name is taken by something that does not count (garbage, a
       * symlink): replace it. rename() never follows a symlink. */
      g_info (_("Replacing unusable lock file %s"), path);
      _tessera_lock_file_cache_forget (cache, name);
    }
  _tessera_pause_point ("lock-file-create");
  lock_file = _tessera_dynamic_lock_file_new_unsaved (cache->lock_file_type, path,
                                                      tessera_job_get_job_uri (job), information,
                                                      process, error);
  /* Its job folder, where a judge that finds it without its job lock
   * knows the holder gone (the job lock goes after the lock files). */
  folder_known = lock_file != NULL && _tessera_job_get_folder (job, &folder_dev, &folder_ino);
  if (folder_known)
    _tessera_dynamic_lock_file_set_job_folder (lock_file, folder_dev, folder_ino);
  /* Where its job lock is taken: a judge on another host does not trust
   * one that looks free there when locks do not cross. */
  locks_cross = lock_file != NULL ? _tessera_holder_monitor_job_locks_cross (cache->holders,
                                                                             tessera_job_get_job_uri (job),
                                                                             folder_known, &folder_dev) : -1;
  /* And through which view of the pool (its job folder's device): on one
   * host, a judge on another mount of it (a container's FUSE view) does
   * not trust it either. */
  if (locks_cross >= 0)
    {
      _tessera_dynamic_lock_file_set_locks_cross (lock_file, locks_cross > 0);
      _tessera_dynamic_lock_file_set_view (lock_file, folder_dev);
    }
  if (lock_file == NULL || !_tessera_lock_folder_save_job (cache->folder, name, lock_file, &st, error))
    {
      g_clear_object (&lock_file);
      return FALSE;
    }
  _tessera_folder_monitor_note_own_change (cache->monitor, mtime_before);
  if (cache->index != NULL)
    _tessera_lock_file_index_drop (cache->index, name);

  entry = entry_new (cache, name);
  entry->h.lock_file = lock_file;
  entry_set_stat (entry, &st);
  g_hash_table_replace (cache->cache, entry->h.name, entry);
  account (cache, entry);
  if (process != NULL)
    {
      entry->h.process = g_object_ref (process);
      _tessera_holder_monitor_watch (cache->holders, &entry->h);
    }
  return TRUE;
}

void
_tessera_lock_file_cache_forget (TesseraLockFileCache *cache,
                                 const char           *name)
{
  Entry *entry = g_hash_table_lookup (cache->cache, name);

  if (entry != NULL)
    forget_known_entry (cache, name, entry);
}

gboolean
_tessera_lock_file_cache_delete_own (TesseraLockFileCache  *cache,
                                     const char            *name,
                                     GError               **error)
{
  gint64 mtime_before;
  gboolean deleted;

  /* jobs/ swapped for a link since we acquired: our file is not there. */
  if (cache->jobs_hostile)
    return TRUE;
  mtime_before = _tessera_folder_monitor_jobs_mtime (cache->monitor);
  deleted = _tessera_lock_folder_remove_own_job (cache->folder, name, error);
  _tessera_folder_monitor_note_own_change (cache->monitor, mtime_before);
  return deleted;
}

gboolean
_tessera_lock_file_cache_set_process (TesseraLockFileCache  *cache,
                                      const char            *name,
                                      TesseraProcess        *process,
                                      GError               **error)
{
  Entry *entry = g_hash_table_lookup (cache->cache, name);
  g_autoptr(TesseraProcess) before = NULL;
  struct stat st;

  g_return_val_if_fail (entry != NULL && entry->h.lock_file != NULL, FALSE);
  _tessera_holder_monitor_unwatch (cache->holders, &entry->h);
  g_set_object (&before, tessera_dynamic_lock_file_get_process (entry->h.lock_file));
  tessera_dynamic_lock_file_set_process (entry->h.lock_file, process);
  if (!_tessera_lock_folder_save_job (cache->folder, name, entry->h.lock_file, &st, error))
    {
      /* The file still names what it did (or is gone): so must its object. */
      tessera_dynamic_lock_file_set_process (entry->h.lock_file, before);
      return FALSE;
    }
  entry_set_stat (entry, &st);
  /* Our own text now, not the one read before. (Our own files are never
   * racy: only a co-user who removed a live holder's file and made one of
   * its name again within the tick could pass for it.) */
  g_clear_pointer (&entry->racy_text, g_bytes_unref);
  if (cache->index != NULL)
    _tessera_lock_file_index_drop (cache->index, name);
  g_set_object (&entry->h.process, process);
  g_hash_table_add (cache->attention, g_strdup (name));
  examine_entry (cache, entry, cache->store->min_age);
  return TRUE;
}

gboolean
_tessera_lock_file_cache_remove_holder (TesseraLockFileCache  *cache,
                                        const char            *job,
                                        GError               **error)
{
  g_autofree char *name = g_strconcat (job, TESSERA_LOCK_FILE_SUFFIX, NULL);
  Entry *entry = g_hash_table_lookup (cache->cache, name);
  g_autoptr(GError) local = NULL;

  g_return_val_if_fail (!cache->read_only, FALSE);
  /* Only the very entry the table holds, never through a link, never
   * opened: a FIFO or the like holds everything, and goes too. */
  if (entry == NULL || !_tessera_lock_folder_force_remove_job (cache->folder, name, entry->h.ino, &local))
    {
      g_autofree char *path = _tessera_lock_folder_dup_job_path (cache->folder, name);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING,
                   _("%s has no lock file %s"), OWNER_NAME (cache), path);
      return FALSE;
    }
  if (local != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  _tessera_holder_monitor_forget (cache->holders, &entry->h);
  _tessera_lock_file_cache_forget (cache, name);
  return TRUE;
}
