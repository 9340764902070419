/* tessera-lock-file-cache-unreadable.c: what the lock file cache cannot
 * read in jobs/: a look at the folder that failed (nothing is decided),
 * and entries that hold everything unread (a lock file that cannot be
 * opened, a FIFO or the like named like one), shown by their reason
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-file-warnings-private.h"
#include "tessera-lock-file-cache-table-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* The warning of a failed look, and the error of the decisions it stops,
 * in the same words (a command that shows both says it once). */
char *
_tessera_lock_file_cache_look_failure_text (TesseraLockFileCache *cache)
{
  return g_strdup_printf (_("Cannot read %s (%s): its holders cannot be counted, so nothing is granted until it "
                            "can be read"),
                          _tessera_lock_folder_get_jobs_path (cache->folder), g_strerror (cache->look_errno));
}

/* What was known stays; this refresh decides nothing (see
 * _tessera_lock_file_cache_check_usable()) and the next reads jobs/ whole. */
void
_tessera_lock_file_cache_look_failed (TesseraLockFileCache *cache, int saved_errno)
{
  cache->look_errno = saved_errno != 0 ? saved_errno : EIO;
  _tessera_folder_monitor_force_scan (cache->monitor);
  /* Once until a look succeeds: a read-only user (status) sees no error. */
  if (!cache->look_warned)
    {
      g_autofree char *text = _tessera_lock_file_cache_look_failure_text (cache);

      g_warning ("%s", text);
    }
  cache->look_warned = TRUE;
}

/* A lock file that could not be read at all (@problem says why): whoever
 * wrote it may hold anything, so it counts as a holder of everything
 * until it is read or gone (unaccount() takes that back); read again on
 * every refresh, unless it is not a file at all (its stat tells when that
 * changes). */
void
_tessera_lock_file_cache_keep_unreadable (TesseraLockFileCache *cache, Entry *entry, const char *problem)
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
void
_tessera_lock_file_cache_keep_not_a_file (TesseraLockFileCache *cache, Entry *entry, const char *path, gboolean was_unreadable)
{
  if (cache->index != NULL)
    _tessera_lock_file_index_drop (cache->index, entry->h.name);
  if (!was_unreadable)
    _tessera_file_warning (_("%s is not a regular file (a FIFO, socket, device or folder): it counts as holding "
                             "everything until it is removed"), path);
  entry->not_a_file = TRUE;
  _tessera_lock_file_cache_keep_unreadable (cache, entry, _("it is not a regular file (a FIFO, socket, device or folder): it holds "
                                   "everything"));
}

/* Whether the lock file @name, which could not be opened as a regular
 * file, is now something else than a file or a link: its stat in @st. */
gboolean
_tessera_lock_file_cache_swapped_for_not_a_file (TesseraLockFileCache *cache, const char *name, int jobs_fd,
                                                 struct stat *st)
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
TesseraDynamicLockFile *
_tessera_lock_file_cache_show_unreadable (TesseraLockFileCache *cache, Entry *entry)
{
  g_autofree char *path = _tessera_lock_folder_dup_job_path (cache->folder, entry->h.name);
  TesseraDynamicLockFile *shown = g_object_new (cache->lock_file_type, "path", path, NULL);

  _tessera_dynamic_lock_file_set_problem (shown, entry->problem != NULL ? entry->problem
                                                  : _("it is empty or cut short: it holds everything until it "
                                                      "reads or, unchanged for min-age, goes"));
  return shown;
}
