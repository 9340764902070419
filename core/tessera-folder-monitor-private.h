/* tessera-folder-monitor-private.h: what changed in a lock folder, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-lock-folder-private.h"

#include <glib-unix.h>

G_BEGIN_DECLS

/* Tells "this name in jobs/ changed" or "everything may have changed":
 * inotify (as a GSource) where the file system is local, the folder's
 * modification time elsewhere (git's racy rule: an unchanged mtime proves
 * nothing until a scan ran after its clock tick). Not thread-safe: the
 * owner serialises (the resource's thread lock), the source's callback
 * included. */
typedef struct _TesseraFolderMonitor TesseraFolderMonitor;

/* @folder: borrowed, outlives the result. */
TesseraFolderMonitor *_tessera_folder_monitor_new (TesseraLockFolder *folder);
void        _tessera_folder_monitor_free          (TesseraFolderMonitor *monitor);
/* Whether _tessera_folder_monitor_start() would watch with inotify (the
 * file system is local and TESSERA_NO_INOTIFY is not set). Until it does,
 * the folder's modification time tells what changed, as on a file system
 * other hosts change. */
gboolean    _tessera_folder_monitor_can_watch     (TesseraFolderMonitor *monitor);
/* Watches with inotify where the file system is local and
 * TESSERA_NO_INOTIFY is not set: @func(@data) runs in @context when it
 * has something to drain, while polled (each source holds a @ref of
 * @data; @destroy frees @data at stop, at once when no source is made).
 * FALSE when polling is the primary path (inotify off or a file system
 * other hosts change): then every refresh reads jobs/. */
gboolean    _tessera_folder_monitor_start         (TesseraFolderMonitor *monitor,
                                                   GMainContext         *context,
                                                   GUnixFDSourceFunc     func,
                                                   gpointer              data,
                                                   GBoxedCopyFunc        ref,
                                                   GDestroyNotify        destroy);
/* After each drain of @func's, and when a wait begins: TRUE (somebody
 * waits) makes events wake @func; FALSE lets them be read by a drain
 * every few seconds instead (or, once that found nothing, by @func at
 * the next event). The owner serialises it. */
void        _tessera_folder_monitor_set_polled    (TesseraFolderMonitor *monitor,
                                                   gboolean              polled);
/* Destroys the source: its callback never runs again. */
void        _tessera_folder_monitor_stop          (TesseraFolderMonitor *monitor);
/* Reads the pending events: TRUE when any is relevant (a lock file
 * changed, jobs/ replaced, events lost); @informations_changed set when
 * informations.json may have. */
gboolean    _tessera_folder_monitor_drain         (TesseraFolderMonitor *monitor,
                                                   gboolean             *informations_changed);
/* Watches jobs/ (again) when it was not (made late, replaced). */
void        _tessera_folder_monitor_watch_jobs    (TesseraFolderMonitor *monitor);
void        _tessera_folder_monitor_force_scan    (TesseraFolderMonitor *monitor);
gboolean    _tessera_folder_monitor_scan_forced   (TesseraFolderMonitor *monitor);
/* Whether jobs/ (as @jobs_st, just read) must be read in full. */
gboolean    _tessera_folder_monitor_must_scan     (TesseraFolderMonitor *monitor,
                                                   const struct stat    *jobs_st);
/* After a full read of jobs/ (its stat @jobs_st read at @now_mono). */
void        _tessera_folder_monitor_scanned       (TesseraFolderMonitor *monitor,
                                                   const struct stat    *jobs_st,
                                                   gint64                now_mono);
/* What the events since the last look say of a name in jobs/.
 * REMOVED: its last event on the waking instance was an unlink (not a
 * rename away: an exchange of names, RENAME_EXCHANGE, tells IN_MOVED_FROM
 * of a name that stays), and the view's instance told of no creation
 * since. A file made again after its removal is told by a rename onto it
 * (CHANGED, later on the same instance) or by a creation (MADE, which
 * nothing turns back). Every look drains both instances just before,
 * view first, so only a file made during that drain could be missed:
 * lock files are made under ipc.lock, which the one who looks holds. */
typedef enum
{
  TESSERA_DIRTY_CHANGED = 1,   /* look at the file */
  TESSERA_DIRTY_REMOVED,       /* gone: no need to look */
  TESSERA_DIRTY_MADE,          /* made in place or linked: look at the file */
} TesseraDirtyName;

/* (transfer full) (nullable): the names inotify reported since (name →
 * TesseraDirtyName), or NULL. */
GHashTable *_tessera_folder_monitor_take_dirty    (TesseraFolderMonitor *monitor);
/* jobs/'s mtime before our own change (-1: not needed, inotify knows),
 * then, after it: the new mtime is explained by it. */
gint64      _tessera_folder_monitor_jobs_mtime    (TesseraFolderMonitor *monitor);
void        _tessera_folder_monitor_note_own_change (TesseraFolderMonitor *monitor,
                                                     gint64                mtime_before);

G_END_DECLS
