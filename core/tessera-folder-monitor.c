/* tessera-folder-monitor.c: what changed in a lock folder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-environment-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-folder-monitor-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pause-point-private.h"

#include <errno.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

struct _TesseraFolderMonitor
{
  TesseraLockFolder *folder;
  GHashTable *dirty;          /* name → TesseraDirtyName: what inotify reported */
  gboolean force_scan;
  gboolean overflowed;        /* events lost, or jobs/ renamed or made: a watch may name a folder gone since */
  gboolean shared_fs;         /* not on the local allow-list: read jobs/ every time */
  gboolean jobs_known;
  gint64 jobs_mtime_ns;
  ino_t jobs_ino;
  gint64 jobs_seen_mono;      /* our monotonic time when we first read that mtime */
  gboolean jobs_mtime_clean;  /* a scan ran after that mtime's clock tick was over */
  int inotify_fd;             /* what wakes waiters: the source's */
  int jobs_wd;
  int info_wd;                /* informations.json itself, for in-place writes */
  int view_fd;                /* what only keeps the view current: read, never polled */
  int view_jobs_wd;
  /* The waking instance's source, polled only while somebody waits in
   * this process (see _tessera_folder_monitor_set_polled()): what to
   * make it again with. */
  GSource *inotify_source;
  GSource *idle_source;       /* instead, while nobody waits: a drain every IDLE_DRAIN_S */
  gboolean read_since_tick;   /* a drain read events since the last idle drain */
  GMainContext *context;
  GUnixFDSourceFunc func;
  gpointer data;
  GBoxedCopyFunc ref;
  GDestroyNotify destroy;
};

TesseraFolderMonitor *
_tessera_folder_monitor_new (TesseraLockFolder *folder)
{
  TesseraFolderMonitor *monitor = g_new0 (TesseraFolderMonitor, 1);

  monitor->folder = folder;
  monitor->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  monitor->inotify_fd = -1;
  monitor->jobs_wd = -1;
  monitor->info_wd = -1;
  monitor->view_fd = -1;
  monitor->view_jobs_wd = -1;
  return monitor;
}

static void
drop (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

void
_tessera_folder_monitor_stop (TesseraFolderMonitor *monitor)
{
  drop (&monitor->inotify_source);
  drop (&monitor->idle_source);
  g_clear_pointer (&monitor->context, g_main_context_unref);
  if (monitor->data != NULL && monitor->destroy != NULL)
    monitor->destroy (monitor->data);
  monitor->data = NULL;
  monitor->func = NULL;
}

void
_tessera_folder_monitor_free (TesseraFolderMonitor *monitor)
{
  if (monitor == NULL)
    return;
  _tessera_folder_monitor_stop (monitor);
  g_hash_table_unref (monitor->dirty);
  if (monitor->inotify_fd >= 0)
    close (monitor->inotify_fd);
  if (monitor->view_fd >= 0)
    close (monitor->view_fd);
  g_free (monitor);
}

/* ---------------------------------------------------------------------- */
/* inotify */

/* The pool's folder is watched for names only (informations.json or jobs/
 * made, replaced or removed): every take of ipc.lock opens it for writing
 * and closes it, which IN_CLOSE_WRITE on the folder would report to every
 * process of the pool, several times per acquisition. A peer writing
 * informations.json in place (Python's json.dump) is seen by a watch of
 * that file, made again whenever the name gets a new file. */
#define FOLDER_MASK (IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_DONT_FOLLOW)

static void
watch_informations (TesseraFolderMonitor *monitor)
{
  int wd = inotify_add_watch (monitor->inotify_fd, _tessera_lock_folder_get_informations_path (monitor->folder),
                              IN_CLOSE_WRITE | IN_DONT_FOLLOW);

  /* The file it replaced (still linked elsewhere) tells nothing more. */
  if (monitor->info_wd >= 0 && monitor->info_wd != wd)
    inotify_rm_watch (monitor->inotify_fd, monitor->info_wd);
  monitor->info_wd = wd;
}

/* Records what an event says of @name in jobs/ (see
 * TesseraDirtyName). A creation only the view's instance told of stays
 * MADE until the name is looked at: it may have come after any removal
 * the waking instance tells of, whose order against it is unknown. */
static void
note_name (TesseraFolderMonitor *monitor,
           const char           *name,
           TesseraDirtyName      kind)
{
  if (GPOINTER_TO_INT (g_hash_table_lookup (monitor->dirty, name)) == TESSERA_DIRTY_MADE)
    return;
  g_hash_table_replace (monitor->dirty, g_strdup (name), GINT_TO_POINTER (kind));
}

/* Reads one inotify instance to the end. */
static gboolean
drain_fd (TesseraFolderMonitor *monitor,
          int                   fd,
          gboolean             *informations_changed)
{
  gboolean relevant = FALSE;
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));

  for (;;)
    {
      ssize_t n = read (fd, buf, sizeof buf);
      char *p;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      monitor->read_since_tick = TRUE;
      for (p = buf; p < buf + n;)
        {
          struct inotify_event *ev = (struct inotify_event *) p;
          p += sizeof (struct inotify_event) + ev->len;

          if (ev->mask & IN_Q_OVERFLOW)
            {
              monitor->overflowed = TRUE;
              monitor->force_scan = TRUE;
              relevant = TRUE;
            }
          else if (fd == monitor->view_fd)
            {
              /* Only appearances: they free nothing,
               * but the next decision must see them. Losing this watch
               * (jobs/ gone) is told by the other instance. */
              if (ev->wd == monitor->view_jobs_wd && (ev->mask & IN_IGNORED))
                monitor->view_jobs_wd = -1;
              else if (ev->wd == monitor->view_jobs_wd && ev->len > 0 &&
                       g_str_has_suffix (ev->name, TESSERA_LOCK_FILE_SUFFIX))
                note_name (monitor, ev->name, TESSERA_DIRTY_MADE);
            }
          else if (ev->wd == monitor->jobs_wd)
            {
              if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
                {
                  monitor->jobs_wd = -1;
                  monitor->force_scan = TRUE;
                  relevant = TRUE;
                }
              else if (ev->len > 0 && g_str_has_suffix (ev->name, TESSERA_LOCK_FILE_SUFFIX))
                {
                  note_name (monitor, ev->name,
                             (ev->mask & IN_CREATE) ? TESSERA_DIRTY_MADE
                             : (ev->mask & IN_DELETE) ? TESSERA_DIRTY_REMOVED
                                                      : TESSERA_DIRTY_CHANGED);
                  relevant = TRUE;
                }
            }
          else if (ev->wd == monitor->info_wd && ev->wd >= 0)
            {
              if (ev->mask & IN_CLOSE_WRITE)
                *informations_changed = TRUE;
              if (ev->mask & IN_IGNORED)
                monitor->info_wd = -1;
            }
          else if (ev->len > 0 && strcmp (ev->name, _TESSERA_POOL_INFORMATIONS) == 0)
            {
              /* A new file under the name: watch it before it is read. */
              if (ev->mask & (IN_CREATE | IN_MOVED_TO))
                watch_informations (monitor);
              *informations_changed = TRUE;
            }
          else if (ev->len > 0 && strcmp (ev->name, _TESSERA_POOL_JOBS) == 0)
            {
              /* Replaced: both watches must be on the new one, even one
               * put in place in the middle of the swap. */
              monitor->overflowed = TRUE;
              monitor->force_scan = TRUE;
              relevant = TRUE;
            }
        }
    }
  return relevant;
}

gboolean
_tessera_folder_monitor_drain (TesseraFolderMonitor *monitor,
                               gboolean             *informations_changed)
{
  gboolean relevant;

  if (monitor->inotify_fd < 0)
    return FALSE;
  /* The view's instance is read on every wake-up too, so its queue
   * stays short; and first: a creation made while this drain runs is
   * then read by the next one, at the latest by the drain before the
   * next look (see TesseraDirtyName). */
  relevant = monitor->view_fd >= 0 && drain_fd (monitor, monitor->view_fd, informations_changed);
  relevant |= drain_fd (monitor, monitor->inotify_fd, informations_changed);
  return relevant;
}

/* What may free capacity, or change who must be watched, wakes waiters: a
 * lock file removed, renamed away or replaced by a rename (Tessera's
 * writes: the temporary file's rename), or written in place (a Python
 * peer naming its job's process: the waiter must watch that process, whose
 * death then frees the unit). A name made goes to a second instance that
 * nothing polls, read before each decision: an acquisition elsewhere then
 * wakes each process for its rename, not also for the temporary file's
 * creation; the temporary's close wakes the thread, but its name (not
 * `.json`) asks for no reading. */
#define JOBS_WAKE_MASK (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | \
                        IN_ONLYDIR | IN_DONT_FOLLOW)
#define JOBS_VIEW_MASK (IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)

void
_tessera_folder_monitor_watch_jobs (TesseraFolderMonitor *monitor)
{
  const char *jobs = _tessera_lock_folder_get_jobs_path (monitor->folder);

  if (monitor->inotify_fd < 0)
    return;
  /* Events were lost: the ones that said jobs/ (or informations.json)
   * was replaced may be among them, and a watch of the old folder would
   * hear nothing of the new one's holders. Watching the path again gives
   * the same descriptor for the same folder, another for a new one. */
  if (monitor->overflowed)
    {
      monitor->overflowed = FALSE;
      if (monitor->jobs_wd >= 0)
        {
          int view_wd = monitor->view_jobs_wd >= 0
                        ? inotify_add_watch (monitor->view_fd, jobs, JOBS_VIEW_MASK) : -1;
          int wd = inotify_add_watch (monitor->inotify_fd, jobs,
                                      monitor->view_jobs_wd >= 0 ? JOBS_WAKE_MASK : JOBS_WAKE_MASK | JOBS_VIEW_MASK);

          /* Either on another folder: both are put in place again. */
          if (view_wd != monitor->view_jobs_wd && view_wd >= 0)
            inotify_rm_watch (monitor->view_fd, view_wd);
          if (wd != monitor->jobs_wd || view_wd != monitor->view_jobs_wd)
            {
              inotify_rm_watch (monitor->inotify_fd, monitor->jobs_wd);
              if (wd >= 0)
                inotify_rm_watch (monitor->inotify_fd, wd);
              if (monitor->view_jobs_wd >= 0)
                inotify_rm_watch (monitor->view_fd, monitor->view_jobs_wd);
              monitor->jobs_wd = -1;
              monitor->view_jobs_wd = -1;
            }
        }
      watch_informations (monitor);
    }
  if (monitor->jobs_wd >= 0)
    return;
  /* The view's watch first: whatever happens once the waking one is in
   * place is seen by both. */
  if (monitor->view_fd >= 0)
    {
      int wd = inotify_add_watch (monitor->view_fd, jobs, JOBS_VIEW_MASK);

      /* A jobs/ moved away (still there elsewhere) tells nothing more. */
      if (monitor->view_jobs_wd >= 0 && monitor->view_jobs_wd != wd)
        inotify_rm_watch (monitor->view_fd, monitor->view_jobs_wd);
      monitor->view_jobs_wd = wd;
    }
  _tessera_pause_point ("watch-jobs-between");
  monitor->jobs_wd = inotify_add_watch (monitor->inotify_fd, jobs,
                                        monitor->view_jobs_wd >= 0 ? JOBS_WAKE_MASK
                                                                   : JOBS_WAKE_MASK | JOBS_VIEW_MASK);
}

gboolean
_tessera_folder_monitor_can_watch (TesseraFolderMonitor *monitor)
{
  /* inotify sees only what this kernel does: on any file system not known
   * to be local, another host's change would go unseen, so jobs/ is read
   * under ipc.lock before every decision and the poller is the primary
   * path to wake waiters, with a short interval. */
  monitor->shared_fs = !_tessera_lock_folder_is_local (monitor->folder);
  return !_tessera_inotify_disabled () && !monitor->shared_fs;
}

/* Each source holds a reference on the callback's data: one may still
 * be dispatching in the poller's thread when it is dropped. */
static void
make_source (TesseraFolderMonitor *monitor)
{
  monitor->inotify_source = g_unix_fd_source_new (monitor->inotify_fd, G_IO_IN);
  g_source_set_name (monitor->inotify_source, "tessera-inotify");
  /* Its callback never runs the loop: no need for GLib to take its
   * descriptor out of the poll set around each dispatch, which wakes the
   * loop's own eventfd twice (another turn of the loop) per wake-up. */
  g_source_set_can_recurse (monitor->inotify_source, TRUE);
  g_source_set_callback (monitor->inotify_source, (GSourceFunc) (void (*)(void)) monitor->func,
                         monitor->ref (monitor->data), monitor->destroy);
  g_source_attach (monitor->inotify_source, monitor->context);
}

/* While nobody waits, the events are read by a drain every IDLE_DRAIN_S
 * seconds instead of each waking the poller's thread: informations.json
 * changes are applied (the total a process shows stays current) and the
 * kernel's queue stays short (an overflow costs a full scan). */
#define IDLE_DRAIN_S 2

typedef struct
{
  GUnixFDSourceFunc func;
  gpointer data;
  GDestroyNotify destroy;
} IdleDrain;

static gboolean
idle_drain (gpointer data)
{
  IdleDrain *drain = data;

  drain->func (-1, G_IO_IN, drain->data);
  return G_SOURCE_CONTINUE;
}

static void
idle_drain_free (gpointer data)
{
  IdleDrain *drain = data;

  drain->destroy (drain->data);
  g_free (drain);
}

static void
make_idle_source (TesseraFolderMonitor *monitor)
{
  IdleDrain *drain = g_new (IdleDrain, 1);

  drain->func = monitor->func;
  drain->data = monitor->ref (monitor->data);
  drain->destroy = monitor->destroy;
  monitor->idle_source = g_timeout_source_new_seconds (IDLE_DRAIN_S);
  g_source_set_name (monitor->idle_source, "tessera-inotify-idle");
  g_source_set_callback (monitor->idle_source, idle_drain, drain, idle_drain_free);
  g_source_attach (monitor->idle_source, monitor->context);
  monitor->read_since_tick = FALSE;
  /* cppcheck sees no free of drain: the source owns it (idle_drain_free
   * is its destroy notify). */
  // cppcheck-suppress memleak
}

/* Events wake waiters only: a process in which nobody waits is not woken
 * by every acquisition and release of the pool's other processes. The
 * folder store calls this after each drain of its callback, with FALSE
 * when nobody waits: the first such drain turns the waking source into
 * the idle drain, and an idle drain that found nothing (nor did any
 * decision since the last one) turns it back (a quiet pool then costs no
 * wake-up at all). With TRUE (a wait begins), the waking source is made
 * again; events queued meanwhile make it ready at once. */
void
_tessera_folder_monitor_set_polled (TesseraFolderMonitor *monitor,
                                    gboolean              polled)
{
  if (monitor->inotify_fd < 0 || monitor->func == NULL)
    return;
  if (polled)
    {
      drop (&monitor->idle_source);
      if (monitor->inotify_source == NULL)
        make_source (monitor);
    }
  else if (monitor->inotify_source != NULL)
    {
      drop (&monitor->inotify_source);
      make_idle_source (monitor);
    }
  else if (monitor->idle_source != NULL && !monitor->read_since_tick)
    {
      drop (&monitor->idle_source);
      make_source (monitor);
    }
  else
    monitor->read_since_tick = FALSE;
}

gboolean
_tessera_folder_monitor_start (TesseraFolderMonitor *monitor,
                               GMainContext         *context,
                               GUnixFDSourceFunc     func,
                               gpointer              data,
                               GBoxedCopyFunc        ref,
                               GDestroyNotify        destroy)
{
  if (!_tessera_folder_monitor_can_watch (monitor))
    {
      destroy (data);
      return FALSE;
    }
  monitor->inotify_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (monitor->inotify_fd < 0)
    {
      destroy (data);
      return TRUE;
    }
  if (inotify_add_watch (monitor->inotify_fd, _tessera_lock_folder_get_path (monitor->folder), FOLDER_MASK) < 0)
    {
      close (monitor->inotify_fd);
      monitor->inotify_fd = -1;
      destroy (data);
      return TRUE;
    }
  watch_informations (monitor);
  /* Without it (no descriptor left), one instance reports everything. */
  monitor->view_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  _tessera_folder_monitor_watch_jobs (monitor);
  monitor->context = g_main_context_ref (context);
  monitor->func = func;
  monitor->data = data;
  monitor->ref = ref;
  monitor->destroy = destroy;
  make_source (monitor);
  return TRUE;
}

/* ---------------------------------------------------------------------- */
/* Folder times */

/* Whether names in jobs/ are known from inotify rather than from the
 * folder's modification time. */
static gboolean
watching_jobs (TesseraFolderMonitor *monitor)
{
  return monitor->inotify_fd >= 0 && monitor->jobs_wd >= 0;
}

/* git's "racy" rule for the folder's mtime. A directory's mtime moves once
 * per clock tick of its file system (one second on ext2 or some NFS
 * servers, a jiffy elsewhere): a peer's change in the tick in which we read
 * the mtime leaves it as we saw it. So an unchanged mtime proves nothing
 * until we have scanned at a time when that tick was surely over, which
 * we measure on our own monotonic clock from when we first read that
 * mtime — never by comparing the file system's times with our wall clock.
 *
 * Records the mtime read at @now_mono (taken before the read), after a
 * scan or our own change. */
static void
note_jobs_mtime (TesseraFolderMonitor *monitor, gint64 mtime_ns, gint64 now_mono, gboolean scanned)
{
  if (mtime_ns != monitor->jobs_mtime_ns || !monitor->jobs_known)
    {
      monitor->jobs_mtime_ns = mtime_ns;
      monitor->jobs_seen_mono = now_mono;
      monitor->jobs_mtime_clean = FALSE;
    }
  else if (scanned && now_mono - monitor->jobs_seen_mono >= _tessera_lock_folder_mtime_tick_us (mtime_ns))
    monitor->jobs_mtime_clean = TRUE;
}

void
_tessera_folder_monitor_force_scan (TesseraFolderMonitor *monitor)
{
  monitor->force_scan = TRUE;
}

gboolean
_tessera_folder_monitor_scan_forced (TesseraFolderMonitor *monitor)
{
  return monitor->force_scan;
}

gboolean
_tessera_folder_monitor_must_scan (TesseraFolderMonitor *monitor,
                                   const struct stat    *jobs_st)
{
  if (monitor->shared_fs)
    return TRUE;
  if (!watching_jobs (monitor))
    /* Without inotify, the folder's mtime says whether any name changed,
     * unless it may hide a change made in the same clock tick. */
    return !monitor->jobs_known || jobs_st->st_ino != monitor->jobs_ino ||
           _tessera_stat_mtime_ns (jobs_st) != monitor->jobs_mtime_ns || !monitor->jobs_mtime_clean;
  return !monitor->jobs_known;
}

void
_tessera_folder_monitor_scanned (TesseraFolderMonitor *monitor,
                                 const struct stat    *jobs_st,
                                 gint64                now_mono)
{
  g_hash_table_remove_all (monitor->dirty);
  monitor->force_scan = FALSE;
  if (monitor->jobs_ino != jobs_st->st_ino)
    monitor->jobs_known = FALSE;
  note_jobs_mtime (monitor, _tessera_stat_mtime_ns (jobs_st), now_mono, TRUE);
  monitor->jobs_known = TRUE;
  monitor->jobs_ino = jobs_st->st_ino;
}

GHashTable *
_tessera_folder_monitor_take_dirty (TesseraFolderMonitor *monitor)
{
  GHashTable *dirty;

  if (g_hash_table_size (monitor->dirty) == 0)
    return NULL;
  dirty = monitor->dirty;
  monitor->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return dirty;
}

gint64
_tessera_folder_monitor_jobs_mtime (TesseraFolderMonitor *monitor)
{
  struct stat st;

  if (watching_jobs (monitor))
    return -1;
  return _tessera_lock_folder_stat_jobs (monitor->folder, &st) ? _tessera_stat_mtime_ns (&st) : -1;
}

/* After our own change to jobs/, the folder's new mtime is explained.
 * Only the mtime path needs it: with inotify, no stat on the hot path. */
void
_tessera_folder_monitor_note_own_change (TesseraFolderMonitor *monitor,
                                         gint64                mtime_before)
{
  struct stat st;

  gint64 now_mono = g_get_monotonic_time ();

  if (!watching_jobs (monitor) && monitor->jobs_known && mtime_before == monitor->jobs_mtime_ns &&
      _tessera_lock_folder_stat_jobs (monitor->folder, &st))
    note_jobs_mtime (monitor, _tessera_stat_mtime_ns (&st), now_mono, FALSE);
}
