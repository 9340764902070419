/* tessera-lock-file-cache.c: the table of a pool's lock files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-lock-file-cache-table-private.h"
#include "tessera-lock-file-index-private.h"
#include "tessera-lock-file-salvage-private.h"
#include "tessera-lock-file-stand-in-private.h"
#include "tessera-private.h"
#include "tessera-process-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <unistd.h>

/* Records changed in one refresh above which the index is written at once
 * (a fresh process's first scan read that many files: writing them costs
 * a fraction of that); fewer wait for the cache's end. */
#define INDEX_SAVE_CHANGES 256


/* What tells a lock file from the next one of the same name. */
void
_tessera_lock_file_cache_entry_set_stat (Entry *entry, const struct stat *st)
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

static void
entry_free (Entry *entry)
{
  g_clear_pointer (&entry->recorded, _tessera_recorded_free);
  g_clear_pointer (&entry->racy_text, g_bytes_unref);
  g_free (entry->problem);
  g_free (entry->h.name);
  g_clear_object (&entry->h.lock_file);
  g_clear_object (&entry->h.process);
  g_free (entry);
}

TesseraLockFileCache *
_tessera_lock_file_cache_new (TesseraLockFolder               *folder,
                              TesseraFolderMonitor            *monitor,
                              TesseraHolderMonitor            *holders,
                              GType                            lock_file_type,
                              gboolean                         read_only,
                              const TesseraLockFileCacheCalls *calls,
                              gpointer                         owner)
{
  TesseraLockFileCache *cache = g_new0 (TesseraLockFileCache, 1);

  cache->folder = folder;
  cache->monitor = monitor;
  cache->holders = holders;
  cache->lock_file_type = lock_file_type;
  cache->read_only = read_only;
  cache->calls = calls;
  cache->owner = owner;
  cache->cache = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) entry_free);
  cache->attention = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  cache->stand_ins = _tessera_stand_ins_new (lock_file_type, _tessera_lock_folder_get_jobs_path (folder));
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
  /* Entries not built borrow their text from the index: they go first. */
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
         : entry->recorded != NULL ? entry->recorded->stand_in : NULL;
}

void
_tessera_lock_file_cache_account (TesseraLockFileCache *cache, Entry *entry)
{
  if (counted_file (entry) != NULL && !entry->accounted &&
      tessera_dynamic_lock_file_is_valid (counted_file (entry)))
    {
      cache->calls->account (cache->owner, counted_file (entry));
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
      cache->calls->unaccount (cache->owner, counted_file (entry));
      entry->accounted = FALSE;
      cache->whole_holders -= entry->whole;
      cache->serial++;
    }
}

void
_tessera_lock_file_cache_remove_entry (TesseraLockFileCache *cache, const char *name)
{
  Entry *entry = g_hash_table_lookup (cache->cache, name);

  if (entry == NULL)
    return;
  unaccount (cache, entry);
  _tessera_holder_monitor_unwatch (cache->holders, &entry->h);
  g_hash_table_remove (cache->attention, name);
  g_hash_table_remove (cache->cache, name);
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
      (entry->recorded = _tessera_recorded_new (cache->stand_ins, summary, recorded, length, st)) == NULL)
    return FALSE;
  cache->index_hits++;
  g_hash_table_replace (cache->cache, entry->h.name, entry);
  _tessera_lock_file_cache_account (cache, entry);
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

  if (entry->recorded == NULL || entry->h.lock_file != NULL)
    return entry->h.lock_file != NULL;
  path = _tessera_lock_folder_dup_job_path (cache->folder, entry->h.name);
  lock_file = _tessera_recorded_build (entry->recorded, cache->lock_file_type, path, &error);
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
      cache->calls->unaccount (cache->owner, entry->recorded->stand_in);
      cache->calls->account (cache->owner, lock_file);
    }
  g_clear_pointer (&entry->recorded, _tessera_recorded_free);
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

/* Reads (or re-reads) one lock file; @jobs_fd: jobs/ when the caller
 * opened it, else -1. */
static void
load_entry (TesseraLockFileCache *cache, const char *name, const struct stat *st, int jobs_fd)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  gboolean holder_unknown = FALSE;
  const char *recorded = NULL;
  const char *summary = NULL;
  gsize length = 0;
  Entry *entry = g_hash_table_lookup (cache->cache, name);
  gboolean was_unreadable = entry != NULL && entry->unreadable;
  struct stat swapped_st;
  g_autofree char *refused = NULL;

  _tessera_lock_file_cache_remove_entry (cache, name);
  entry = g_new0 (Entry, 1);
  entry->h.name = g_strdup (name);
  _tessera_lock_file_cache_entry_set_stat (entry, st);
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
      _tessera_lock_file_cache_keep_not_a_file (cache, entry, path, was_unreadable);
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

                  _tessera_lock_file_cache_look_failed (cache, saved);
                  _tessera_lock_file_cache_keep_unreadable (cache, entry, problem);
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
              _tessera_lock_file_cache_keep_unreadable (cache, entry, problem);
              return;
            }
          if (data == NULL && _tessera_lock_file_cache_swapped_for_not_a_file (cache, name, jobs_fd, &swapped_st))
            {
              /* Made a FIFO (or the like) since it was looked at. */
              _tessera_lock_file_cache_entry_set_stat (entry, &swapped_st);
              _tessera_lock_file_cache_keep_not_a_file (cache, entry, path, was_unreadable);
              return;
            }
          entry->h.lock_file = _tessera_lock_file_salvage_failed (cache->lock_file_type, path, OWNER_NAME (cache),
                                                                  data, length, error, &entry->whole,
                                                                  &holder_unknown, &entry->truncated, &refused);
          if (refused != NULL)
            {
              /* Complete, refused: it holds everything until removed. */
              entry->refused = TRUE;
              _tessera_lock_file_cache_keep_unreadable (cache, entry, refused);
              return;
            }
          if (entry->truncated && (st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
            {
              /* Cut short, but others may write it: a co-user may have
               * cut a live holder's file, so it does not age away. */
              entry->truncated = FALSE;
              entry->refused = TRUE;
              _tessera_lock_file_cache_keep_unreadable (cache, entry,
                                                         _("it is cut short and users other than its owner may write "
                                                           "it: it holds everything until tessera clean --force "
                                                           "removes it"));
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
  _tessera_lock_file_cache_account (cache, entry);
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
 * that we may not delete). */
gboolean
_tessera_lock_file_cache_examine_entry (TesseraLockFileCache *cache, Entry *entry, double min_age)
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
      cache->calls->reclaimed (cache->owner, entry->h.name, entry->h.lock_file, reason, TRUE);
      unaccount (cache, entry);
      _tessera_holder_monitor_unwatch (cache->holders, &entry->h);
      g_hash_table_remove (cache->attention, entry->h.name);
      return FALSE;
    }
  if (found)
    {
      g_info (_("Removing lock file %s of %s: %s"), path, OWNER_NAME (cache), reason);
      cache->calls->reclaimed (cache->owner, entry->h.name, entry->h.lock_file, reason, FALSE);
      if (error != NULL)
        g_warning ("%s", error->message);
      _tessera_holder_monitor_forget (cache->holders, &entry->h);
    }
  _tessera_lock_file_cache_remove_entry (cache, entry->h.name);
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
      _tessera_lock_file_cache_look_failed (cache, saved);
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
        _tessera_lock_file_cache_remove_entry (cache, name);
      else
        _tessera_lock_file_cache_look_failed (cache, errno);
      return;
    }
  if (entry != NULL && entry_same_stat (entry, &st) && (!entry->unreadable || entry->not_a_file || entry->refused) &&
      (entry->racy_text == NULL || racy_text_unchanged (cache, entry, &st, dir_fd, now_mono)))
    return;
  load_entry (cache, name, &st, dir_fd);
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
          _tessera_lock_file_cache_remove_entry (cache, key);
          continue;
        }
      if (dir_fd == -2)
        dir_fd = _tessera_lock_folder_open_jobs (cache->folder);
      reload (cache, key, dir_fd);
    }
  if (dir_fd >= 0)
    close (dir_fd);
}

/* Reads the whole of jobs/ again (only what changed is loaded); FALSE
 * when it could not be read (nothing was dropped). */
static gboolean
scan_jobs (TesseraLockFileCache *cache, double min_age)
{
  g_autoptr(GHashTable) seen = _tessera_lock_folder_list_jobs (cache->folder, min_age, cache->read_only);
  g_autoptr(GPtrArray) gone = NULL;
  GHashTableIter iter;
  gpointer key;
  int dir_fd;

  if (seen == NULL)
    {
      _tessera_lock_file_cache_look_failed (cache, errno);
      return FALSE;
    }
  gone = g_ptr_array_new_with_free_func (g_free);

  g_hash_table_iter_init (&iter, cache->cache);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (seen, key))
      g_ptr_array_add (gone, g_strdup (key));
  for (guint i = 0; i < gone->len; i++)
    _tessera_lock_file_cache_remove_entry (cache, g_ptr_array_index (gone, i));
  /* jobs/ opened once for all (never through a link), not per name. */
  dir_fd = _tessera_lock_folder_open_jobs (cache->folder);
  g_hash_table_iter_init (&iter, seen);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    reload (cache, key, dir_fd);
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
        _tessera_lock_file_cache_examine_entry (cache, entry, min_age);
    }
}

gboolean
_tessera_lock_file_cache_refresh (TesseraLockFileCache *cache,
                                  double                min_age)
{
  g_autoptr(GHashTable) dirty = NULL;
  struct stat st;
  /* The drain itself may ask for a full scan (overflow, jobs/ replaced):
   * the owner drained the monitor before, so read the flag only now. */
  gboolean scan = _tessera_folder_monitor_scan_forced (cache->monitor);
  gint64 now_mono = g_get_monotonic_time ();

  cache->looked_us = g_get_real_time ();
  cache->min_age = min_age;
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
  examine_all (cache, cache->min_age);
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
      g_autofree char *text = _tessera_lock_file_cache_look_failure_text (cache);

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
      g_str_has_suffix (job, ".json") || strlen (job) > 256 || !g_utf8_validate (job, -1, NULL))
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
        g_ptr_array_add (result, _tessera_lock_file_cache_show_unreadable (cache, entry));
    }
  return result;
}
