/* tessera-lock-file-cache-writes.c: this process's own lock files in the
 * lock file cache's table: made, named with their process, removed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-job-private.h"
#include "tessera-lock-file-cache-table-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-private.h"

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
      _tessera_lock_file_cache_remove_entry (cache, name);
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

  entry = g_new0 (Entry, 1);
  entry->h.name = g_strdup (name);
  entry->h.lock_file = lock_file;
  _tessera_lock_file_cache_entry_set_stat (entry, &st);
  g_hash_table_replace (cache->cache, entry->h.name, entry);
  _tessera_lock_file_cache_account (cache, entry);
  if (process != NULL)
    {
      entry->h.process = g_object_ref (process);
      _tessera_holder_monitor_watch (cache->holders, &entry->h);
    }
  return TRUE;
}

void
_tessera_lock_file_cache_remove (TesseraLockFileCache *cache,
                                 const char           *name)
{
  _tessera_lock_file_cache_remove_entry (cache, name);
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
                                      double                 min_age,
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
  _tessera_lock_file_cache_entry_set_stat (entry, &st);
  /* Our own text now, not the one read before. (Our own files are never
   * racy: only a co-user who removed a live holder's file and made one of
   * its name again within the tick could pass for it.) */
  g_clear_pointer (&entry->racy_text, g_bytes_unref);
  if (cache->index != NULL)
    _tessera_lock_file_index_drop (cache->index, name);
  g_set_object (&entry->h.process, process);
  g_hash_table_add (cache->attention, g_strdup (name));
  _tessera_lock_file_cache_examine_entry (cache, entry, min_age);
  return TRUE;
}

gboolean
_tessera_lock_file_cache_remove_holder (TesseraLockFileCache  *cache,
                                        const char            *job,
                                        GError               **error)
{
  g_autofree char *name = g_strconcat (job, ".json", NULL);
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
  _tessera_lock_file_cache_remove_entry (cache, name);
  return TRUE;
}
