/* tessera-holder-monitor.c: whether lock files' holders still run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-holder-monitor-private.h"
#include "tessera-host-lease-private.h"
#include "tessera-host-private.h"
#include "tessera-job-lock-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-json-private.h"
#include "tessera-pause-point-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"
#include "tessera-process-private.h"
#include "tessera-verdict-private.h"

#include <fcntl.h>
#include <glib-unix.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  GPid pid;
  guint64 serial;   /* tells this watch from a later one that reused its fd */
  int fd;
  GSource *source;
  GHashTable *names;
} PidWatch;

/* What a pidfd source carries: its own reference to the owner's data and
 * what to call, so that it never reaches a monitor freed meanwhile. */
typedef struct
{
  gpointer data;
  GPid pid;
  guint64 serial;
  TesseraHolderExitedFunc func;
  GDestroyNotify unref;
} PidWatchTicket;

struct _TesseraHolderMonitor
{
  TesseraLockFolder *folder;
  GMainContext *context;
  TesseraHolderExitedFunc func;
  gpointer data;
  gpointer (*ref) (gpointer data);
  GDestroyNotify unref;
  GHashTable *pid_watches;    /* pid → PidWatch */
  guint idle_watches;         /* of them, those that watch no holder any more */
  guint64 next_serial;
  int locks_cross_hosts;      /* 0: not looked yet, 1: they do, -1: they do not */
  char *lockless_why;         /* when they do not: the file system and option */
  guint64 job_mount_dev;      /* the device of the last job folder looked at */
  int job_mount_cross;        /* whether locks cross there; 0: none looked at yet */
  TesseraHostLease *lease;    /* the pool's host lease (off unless set) */
};

/* pidfds of the whole process: a quarter of its descriptor limit, so that
 * 10 000 holders never starve it of descriptors for ipc.lock and files. */
static gint pidfds_open;

static gboolean
pidfd_budget_take (void)
{
  static gsize budget;

  if (g_once_init_enter (&budget))
    {
      struct rlimit rl;
      rlim_t limit = getrlimit (RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
      g_once_init_leave (&budget, (gsize) CLAMP (limit / 4, 1, 4096));
    }
  if ((gsize) g_atomic_int_add (&pidfds_open, 1) < budget)
    return TRUE;
  g_atomic_int_add (&pidfds_open, -1);
  return FALSE;
}

static void
pidfd_budget_give (void)
{
  g_atomic_int_add (&pidfds_open, -1);
}

static void
pid_watch_free (PidWatch *watch)
{
  g_source_destroy (watch->source);
  g_source_unref (watch->source);
  close (watch->fd);
  pidfd_budget_give ();
  g_hash_table_unref (watch->names);
  g_free (watch);
}

TesseraHolderMonitor *
_tessera_holder_monitor_new (TesseraLockFolder       *folder,
                             GMainContext            *context,
                             TesseraHolderExitedFunc  func,
                             gpointer                 data,
                             gpointer               (*ref) (gpointer data),
                             GDestroyNotify           unref)
{
  TesseraHolderMonitor *monitor = g_new0 (TesseraHolderMonitor, 1);

  monitor->folder = folder;
  monitor->context = g_main_context_ref (context);
  monitor->func = func;
  monitor->data = data;
  monitor->ref = ref;
  monitor->unref = unref;
  monitor->pid_watches = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) pid_watch_free);
  monitor->lease = _tessera_host_lease_new (folder);
  return monitor;
}

void
_tessera_holder_monitor_stop (TesseraHolderMonitor *monitor)
{
  g_hash_table_remove_all (monitor->pid_watches);
  monitor->idle_watches = 0;
}

/* A watch whose last holder went is kept, up to this many: on a busy pool
 * the same processes hold again at once, and each watch dropped and made
 * again would wake the poller's thread twice. */
#define IDLE_WATCHES_MAX 64

void
_tessera_holder_monitor_free (TesseraHolderMonitor *monitor)
{
  if (monitor == NULL)
    return;
  g_hash_table_unref (monitor->pid_watches);
  g_free (monitor->lockless_why);
  _tessera_host_lease_free (monitor->lease);
  monitor->unref (monitor->data);
  g_main_context_unref (monitor->context);
  g_free (monitor);
}

TesseraHostLease *
_tessera_holder_monitor_get_lease (TesseraHolderMonitor *monitor)
{
  return monitor->lease;
}

/* ---------------------------------------------------------------------- */
/* Watches */

void
_tessera_holder_monitor_unwatch (TesseraHolderMonitor *monitor,
                                 TesseraHolder        *holder)
{
  PidWatch *watch;

  if (!holder->watched || holder->process == NULL)
    return;
  holder->watched = FALSE;
  watch = g_hash_table_lookup (monitor->pid_watches,
                               GINT_TO_POINTER (tessera_process_get_pid (holder->process)));
  if (watch == NULL)
    return;
  g_hash_table_remove (watch->names, holder->name);
  if (g_hash_table_size (watch->names) > 0)
    return;
  if (monitor->idle_watches < IDLE_WATCHES_MAX)
    monitor->idle_watches++;
  else
    g_hash_table_remove (monitor->pid_watches, GINT_TO_POINTER (watch->pid));
}

static void
ticket_free (PidWatchTicket *ticket)
{
  ticket->unref (ticket->data);
  g_free (ticket);
}

static gboolean
on_pidfd_ready (gint fd, GIOCondition condition, gpointer data)
{
  PidWatchTicket *ticket = data;

  ticket->func (g_atomic_pointer_get (&ticket->data), ticket->pid, ticket->serial);
  return G_SOURCE_REMOVE;
}

GHashTable *
_tessera_holder_monitor_take_exited (TesseraHolderMonitor *monitor,
                                     GPid                  pid,
                                     guint64               serial)
{
  /* This notification may have waited for the owner's lock while its
   * watch was dropped and the descriptor number reused: only act on the
   * very watch its source was made for. */
  PidWatch *watch = g_hash_table_lookup (monitor->pid_watches, GINT_TO_POINTER (pid));
  GHashTable *names;

  if (watch == NULL || watch->serial != serial)
    return NULL;
  names = g_hash_table_ref (watch->names);
  if (g_hash_table_size (names) == 0)
    monitor->idle_watches--;
  g_hash_table_remove (monitor->pid_watches, GINT_TO_POINTER (watch->pid));
  return names;
}

/* Holder known to be alive and local. */
void
_tessera_holder_monitor_watch (TesseraHolderMonitor *monitor,
                               TesseraHolder        *holder)
{
  GPid pid = tessera_process_get_pid (holder->process);
  PidWatch *watch = g_hash_table_lookup (monitor->pid_watches, GINT_TO_POINTER (pid));

  /* A kept watch serves again while its process lives: the holder, known
   * alive, is that process (a pid names one live process). One whose
   * process ended (its exit not dispatched yet) is made anew. */
  if (watch != NULL && g_hash_table_size (watch->names) == 0)
    {
      struct pollfd pfd = { watch->fd, POLLIN, 0 };

      monitor->idle_watches--;
      if (poll (&pfd, 1, 0) != 0)
        {
          g_hash_table_remove (monitor->pid_watches, GINT_TO_POINTER (pid));
          watch = NULL;
        }
    }

  /* This very process lives as long as it looks: no pidfd, and no wake-up
   * of the poller's thread on each acquire (another process judges it
   * once it has ended). */
  if (watch == NULL && _tessera_process_is_self (holder->process))
    {
      holder->watched = TRUE;
      return;
    }
  if (watch == NULL)
    {
      int fd;

      /* Past the budget, holders stay in the attention set, checked
       * through /proc at every refresh and poll. */
      if (!pidfd_budget_take ())
        return;
      fd = _tessera_pidfd_open (pid);
      if (fd < 0)
        {
          pidfd_budget_give ();
          return;   /* no pidfd (old kernel, no descriptors left): polled instead */
        }
      /* The pid may have been reused between the check and the open. */
      if (tessera_process_check (holder->process) != TESSERA_PROCESS_ALIVE)
        {
          close (fd);
          pidfd_budget_give ();
          return;
        }
      PidWatchTicket *ticket = g_new0 (PidWatchTicket, 1);

      watch = g_new0 (PidWatch, 1);
      watch->pid = pid;
      watch->serial = ++monitor->next_serial;
      watch->fd = fd;
      ticket->pid = pid;
      ticket->serial = watch->serial;
      ticket->func = monitor->func;
      ticket->unref = monitor->unref;
      /* Sources reach the watch context through GMainContext's own
       * locking, which ThreadSanitizer cannot see: an atomic store made
       * before the source is attached, read first, makes the hand-over
       * explicit. */
      g_atomic_pointer_set (&ticket->data, monitor->ref (monitor->data));   /* last */
      watch->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      watch->source = g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_name (watch->source, "tessera-pidfd");
      g_source_set_callback (watch->source, (GSourceFunc) (void (*)(void)) on_pidfd_ready,
                             ticket, (GDestroyNotify) ticket_free);
      g_hash_table_insert (monitor->pid_watches, GINT_TO_POINTER (pid), watch);
      g_source_attach (watch->source, monitor->context);
      /* cppcheck sees no free of ticket: the source owns it (ticket_free is
       * its destroy notify). */
      // cppcheck-suppress memleak
    }
  g_hash_table_add (watch->names, g_strdup (holder->name));
  holder->watched = TRUE;
}

/* ---------------------------------------------------------------------- */
/* Verdicts */

/* Finds the holder of a lock file without "process": seed-era writers name
 * it only through <job_uri>.pid. A `.pid` that is there but cannot be read
 * names a holder all the same, one Tessera cannot judge. */
static TesseraProcess *
holder_from_pid_file (const char *job_uri)
{
  g_autofree char *pid_path = _tessera_path_with_suffix (job_uri, ".pid");
  g_autofree char *data = NULL;
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) error = NULL;
  TesseraProcess *process;
  gsize length;

  if (!_tessera_read_file_nofollow (pid_path, &data, &length, NULL, &error))
    {
      if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT) ||
          g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
        return NULL;
      return _tessera_process_new_unknown (_("its .pid file cannot be read"));
    }
  if (!_tessera_json_load (parser, data, length, NULL))
    return _tessera_process_new_unknown (_("its .pid file is not JSON"));
  process = tessera_process_new_from_json (json_parser_get_root (parser), NULL);
  return process != NULL ? process : _tessera_process_new_unknown (_("its .pid file is not a process spec"));
}

/* What tells this very file from the next one of the same name, for the
 * host's memory of when it was first seen. */
static char *
seen_key (TesseraHolderMonitor *monitor, TesseraHolder *holder)
{
  return g_strdup_printf ("%s/%s\n%" G_GUINT64_FORMAT "\n%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT,
                          _tessera_lock_folder_get_jobs_path (monitor->folder), holder->name, (guint64) holder->ino,
                          holder->mtime_ns, (gint64) holder->size);
}

/* Whether this host has seen the file unchanged for min-age: the age of
 * an orphan, on our monotonic clock, never its mtime against our clock
 * (the writer's or the file server's clock may be anything). */
gboolean
_tessera_holder_monitor_seen_for (TesseraHolderMonitor *monitor,
                                  TesseraHolder        *holder,
                                  double                min_age)
{
  if (holder->first_seen_us == 0)
    {
      g_autofree char *key = seen_key (monitor, holder);
      holder->first_seen_us = _tessera_first_seen (key);
    }
  return (double) (g_get_monotonic_time () - holder->first_seen_us) / G_USEC_PER_SEC >= min_age;
}

static char *
lock_free_key (TesseraHolderMonitor *monitor, TesseraHolder *holder)
{
  g_autofree char *key = seen_key (monitor, holder);

  return g_strconcat ("job lock free\n", key, NULL);
}

static void
forget_lock_free (TesseraHolderMonitor *monitor, TesseraHolder *holder)
{
  if (holder->lock_free_since_us != 0)
    {
      g_autofree char *key = lock_free_key (monitor, holder);
      _tessera_forget_seen (key);
      holder->lock_free_since_us = 0;
    }
}

void
_tessera_holder_monitor_forget (TesseraHolderMonitor *monitor,
                                TesseraHolder        *holder)
{
  if (holder->first_seen_us != 0)
    {
      g_autofree char *key = seen_key (monitor, holder);
      _tessera_forget_seen (key);
    }
  forget_lock_free (monitor, holder);
}

/* Whether a free job lock is a sure death. A Tessera holder takes its job
 * lock before its lock file exists, and a job whose lock was seen held has
 * run: then at once. An experimaestro job takes it only once its process
 * has started (Python starting can take seconds after its spec was
 * written): then once this host has seen it free for min-age. */
static gboolean
lock_free_for_long (TesseraHolderMonitor *monitor, TesseraHolder *holder, double min_age)
{
  if (holder->lock_seen_held || _tessera_process_written_by_tessera (holder->process))
    return TRUE;
  if (holder->lock_free_since_us == 0)
    {
      g_autofree char *key = lock_free_key (monitor, holder);
      holder->lock_free_since_us = _tessera_first_seen (key);
    }
  return (double) (g_get_monotonic_time () - holder->lock_free_since_us) / G_USEC_PER_SEC >= min_age;
}

/* Whether a job lock's state here is its state for every host. Where it is
 * not, a free job lock says nothing about a holder on another host, so no
 * such holder can ever be judged dead; and since ipc.lock cannot exclude
 * other hosts there either, acquire refuses a pool they use
 * (_tessera_holder_monitor_check_hosts()). */
static gboolean
locks_cross_hosts (TesseraHolderMonitor *monitor)
{
  if (monitor->locks_cross_hosts == 0)
    {
      g_free (monitor->lockless_why);
      monitor->lockless_why = NULL;
      monitor->locks_cross_hosts =
        _tessera_locks_cross_hosts (_tessera_lock_folder_get_path (monitor->folder), &monitor->lockless_why) ? 1 : -1;
    }
  return monitor->locks_cross_hosts > 0;
}

gboolean
_tessera_holder_monitor_locks_cross_hosts (TesseraHolderMonitor *monitor)
{
  return locks_cross_hosts (monitor);
}

int
_tessera_holder_monitor_job_locks_cross (TesseraHolderMonitor *monitor,
                                         const char           *job_uri,
                                         gboolean              folder_known,
                                         guint64              *folder_dev)
{
  g_autofree char *dir = NULL;
  struct stat st;

  if (job_uri == NULL)
    return -1;
  dir = g_path_get_dirname (job_uri);
  if (!folder_known)
    {
      if (stat (dir, &st) != 0)
        return -1;
      *folder_dev = (guint64) st.st_dev;
    }
  /* Read again only for another device: jobs of a pool keep their
   * folders in one place, mostly. */
  if (monitor->job_mount_cross == 0 || monitor->job_mount_dev != *folder_dev)
    {
      monitor->job_mount_dev = *folder_dev;
      monitor->job_mount_cross = _tessera_locks_cross_hosts (dir, NULL) ? 1 : -1;
    }
  return monitor->job_mount_cross > 0;
}

/* Refuses a pool that two hosts use where the locks of one of them do not
 * cross hosts, as the hosts' marks show: nothing there can keep them
 * from granting the same share. On a mount whose locks do not cross, a
 * holder in @lock_files that runs on another host refuses it too. Used by
 * this host only, it is safe. @lock_files: NULL where locks cross. */
gboolean
_tessera_holder_monitor_check_hosts (TesseraHolderMonitor  *monitor,
                                     GPtrArray             *lock_files,
                                     GError               **error)
{
  g_autofree char *other = NULL;
  g_autofree char *other_name = NULL;
  g_autofree char *owner = NULL;
  const char *distrust = NULL;
  gboolean cross = locks_cross_hosts (monitor);

  /* Every host marks the pool before its first grant; this looks for
   * another host's mark or heartbeat that makes sharing it unsafe. */
  other = _tessera_host_lease_mark_and_dup_other_host (monitor->lease, &other_name, &owner, &distrust, error);
  if (other == NULL)
    return FALSE;
  if (*other == '\0')
    g_clear_pointer (&other, g_free);
  if (other != NULL && distrust != NULL)
    {
      g_autofree char *shown = g_strescape (other, NULL);

      /* Closed: it may be a host's whose locks do not cross. Named with
       * its owner, for the administrator to remove. */
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("refusing %s: hosts/%s (owned by %s) cannot be trusted to say whether the locks of the host "
                     "it names cross hosts (%s), so it is taken for a host whose locks do not, and nothing could "
                     "keep that host and this one from handing out the same share; if it is not a retired host's "
                     "mark, the pool's owner or root may remove it"),
                   _tessera_lock_folder_get_path (monitor->folder), shown,
                   owner != NULL ? owner : _("a user it does not name"), distrust);
      return FALSE;
    }
  if (other != NULL && g_str_has_prefix (other, _tessera_host_id ()) && other[strlen (_tessera_host_id ())] == '.')
    {
      /* A mark of another view of the pool on this very host. */
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("refusing %s: this host also reaches it through another view (another mount of it, such as "
                     "a container's FUSE view), as hosts/%s (owned by %s) says, and locks taken through one of the "
                     "two do not reach the other, so nothing can keep their processes from handing out the same "
                     "share; reach it through one view (a bind mount of the same file system is one) or keep the "
                     "pool in the etcd store; `tessera clean --host` removes the mark of a view that is gone"),
                   _tessera_lock_folder_get_path (monitor->folder), other,
                   owner != NULL ? owner : _("a user it does not name"));
      return FALSE;
    }
  if (other != NULL && cross)
    {
      g_autofree char *shown = other_name != NULL ? g_strescape (other_name, NULL) : NULL;

      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("refusing %s: another host (%s) reaches it where locks do not cross hosts, as hosts/%s (owned "
                     "by %s) says, so nothing can keep that host and this one from handing out the same share; "
                     "mount it there so that locks cross hosts (NFS without “nolock” and with “local_lock=none”, "
                     "Lustre with “flock”, no FUSE view) or keep a pool shared by hosts in the etcd store; "
                     "`tessera clean --host` removes a retired host's mark"),
                   _tessera_lock_folder_get_path (monitor->folder),
                   shown != NULL ? shown : _("a host it does not name"), other,
                   owner != NULL ? owner : _("a user it does not name"));
      return FALSE;
    }
  if (cross)
    return TRUE;
  if (other != NULL)
    {
      /* Whatever the file states, on one line. */
      g_autofree char *shown = other_name != NULL ? g_strescape (other_name, NULL) : NULL;

      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   g_str_has_suffix (other, _TESSERA_POOL_HOST_MARK)
                   ? _("refusing %s: it is on a file system whose locks do not cross hosts (%s) and another host "
                       "(%s) has used it, as its mark hosts/%s (owned by %s) says, so nothing can keep the hosts "
                       "from handing out the same share; mount it so that locks cross hosts (NFS without “nolock” "
                       "and with “local_lock=none”, Lustre with “flock”) or keep a pool shared by hosts in the etcd "
                       "store")
                   : _("refusing %s: it is on a file system whose locks do not cross hosts (%s) and another host "
                       "(%s) has used it, as its heartbeat hosts/%s (owned by %s) says, so nothing can keep the "
                       "hosts from handing out the same share; mount it so that locks cross hosts (NFS without "
                       "“nolock” and with “local_lock=none”, Lustre with “flock”) or keep a pool shared by hosts in "
                       "the etcd store"),
                   _tessera_lock_folder_get_path (monitor->folder), monitor->lockless_why,
                   shown != NULL ? shown : _("a host it does not name"), other,
                   owner != NULL ? owner : _("a user it does not name"));
      return FALSE;
    }
  for (guint i = 0; i < lock_files->len; i++)
    {
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (g_ptr_array_index (lock_files, i));
      const char *host;

      /* A spec that names no host (experimaestro's) may come from any. */
      if (process == NULL ||
          (_tessera_process_written_by_tessera (process) && !_tessera_process_on_other_host (process)))
        continue;
      host = tessera_process_get_host (process);
      if (host == NULL)
        host = _("a host it does not name");
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("refusing %s: it is on a file system whose locks do not cross hosts (%s) and a holder on "
                     "another host (%s) uses it, so nothing can keep the hosts from handing out the same share; "
                     "mount it so that locks cross hosts (NFS without “nolock” and with “local_lock=none”, "
                     "Lustre with “flock”) or keep a pool shared by hosts in the etcd store"),
                   _tessera_lock_folder_get_path (monitor->folder), monitor->lockless_why,
                   host != NULL ? host : "?");
      return FALSE;
    }
  return TRUE;
}

/* Whether @dev is the device of @lock_file's pool folder (the folder of
 * its jobs/) here. */
static gboolean
on_pool_device (TesseraDynamicLockFile *lock_file, dev_t dev)
{
  const char *path = tessera_dynamic_lock_file_get_path (lock_file);
  g_autofree char *jobs = NULL;
  g_autofree char *pool = NULL;
  struct stat st;

  if (path == NULL)
    return FALSE;
  jobs = g_path_get_dirname (path);
  pool = g_path_get_dirname (jobs);
  return stat (pool, &st) == 0 && st.st_dev == dev;
}

/* Probes @holder's job lock (@lock_path) in the job folder its spec
 * recorded when that folder is at its path here: the folder is opened
 * once (never a link in its place), known by its device and inode, and
 * the job lock probed in that very folder, so that nobody who can write
 * the job folders' root can swap a link in between. There, a job lock not
 * found means the holder let it go (a holder takes its job lock before it
 * writes its lock file, and removes its lock files before its job lock):
 * free. Another folder (or a link) at that path, where the spec recorded
 * one, was put there by someone else: a job lock in it says nothing of
 * the holder, which stays unknown (*@replaced). Without a recorded folder
 * (experimaestro's specs) or without a folder here, the job lock is
 * probed by its path, and one not found there stays absent (the folder
 * may be one this host cannot see). The device number is compared only
 * for a holder of this host (@this_host): each NFS client numbers its
 * mounts itself, so another host's says nothing here; the inode, which
 * the server gives, still does, where the folder is on the pool's file
 * system here (a folder of that path on a disk of this host is not the
 * other host's, and anyone may make one whose inode matches).
 * *@other_view: the spec records the view of the pool its job lock was
 * taken through (its job folder's device there) and the folder probed
 * here is on another device: on one
 * host, another mount of the pool (a container's FUSE view), whose locks
 * may not reach ours. */
static TesseraJobLockState
probe_job_lock (TesseraDynamicLockFile *lock_file,
                const char             *lock_path,
                gboolean                this_host,
                int                    *errsv,
                gboolean               *replaced,
                gboolean               *other_view)
{
  g_autofree char *dir = g_path_get_dirname (lock_path);
  g_autofree char *name = g_path_get_basename (lock_path);
  TesseraJobLockState state;
  guint64 dev, ino, view;
  struct stat st;
  int dir_fd = -1;

  *replaced = FALSE;
  *other_view = FALSE;
  if (_tessera_dynamic_lock_file_get_view (lock_file, &view))
    *other_view = stat (dir, &st) == 0 && (guint64) st.st_dev != view;
  if (_tessera_dynamic_lock_file_get_job_folder (lock_file, &dev, &ino))
    {
      dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dir_fd < 0 && errno != ENOENT && errno != ENOTDIR)
        *replaced = TRUE;   /* a link, or what cannot be opened: not ours to probe */
      else if (dir_fd >= 0 && (fstat (dir_fd, &st) < 0 || (this_host && (guint64) st.st_dev != dev) ||
                               (!this_host && !on_pool_device (lock_file, st.st_dev)) || (guint64) st.st_ino != ino))
        {
          close (dir_fd);
          dir_fd = -1;
          *replaced = TRUE;
        }
    }
  /* Whatever is at the path from now on does not matter. */
  _tessera_pause_point ("job-folder-check");
  if (*replaced)
    {
      *errsv = 0;
      return TESSERA_JOB_LOCK_UNKNOWN;
    }
  if (dir_fd < 0)
    return _tessera_job_lock_probe (lock_path, errsv);
  state = _tessera_job_lock_probe_at (dir_fd, name, errsv);
  close (dir_fd);
  return state == TESSERA_JOB_LOCK_ABSENT ? TESSERA_JOB_LOCK_FREE : state;
}

/* What is known of @holder before any probe: its process (from its
 * lock file, else from its .pid) and the pid check, which reads /proc
 * (once per pid within @look, when not %NULL). */
static void
gather_facts (TesseraHolder *holder, const char *job_uri, const char *lock_path, GHashTable *look,
              TesseraVerdictFacts *facts)
{
  gboolean crossed;

  if (holder->process == NULL)
    holder->process = holder_from_pid_file (job_uri);
  facts->lock_path = lock_path;
  facts->lock_seen_held = holder->lock_seen_held;
  facts->locks_cross_recorded = _tessera_dynamic_lock_file_get_locks_cross (holder->lock_file, &crossed)
                                ? (crossed ? 1 : 0) : -1;
  if (holder->process == NULL)
    return;
  facts->has_process = TRUE;
  facts->process = _tessera_process_check_in (holder->process, look);
  facts->pid = tessera_process_get_pid (holder->process);
  facts->identifies_process = tessera_process_get_start_time (holder->process) != 0 ||
                              tessera_process_get_spec (holder->process) != NULL;
  facts->written_by_tessera = _tessera_process_written_by_tessera (holder->process);
  facts->on_this_host = _tessera_process_on_this_host (holder->process);
  facts->host = tessera_process_get_host (holder->process) != NULL
                ? tessera_process_get_host (holder->process)
                : _tessera_process_get_host_id (holder->process);
}

/* A holder's job lock probe: in the job folder its spec recorded
 * (probe_job_lock()) for one with a process, by its path for one without
 * (a seed-era holder). */
static void
answer_job_lock (TesseraDynamicLockFile *lock_file, TesseraVerdictFacts *facts)
{
  facts->job_lock_asked = TRUE;
  facts->job_lock_errno = 0;
  if (facts->has_process)
    facts->job_lock = probe_job_lock (lock_file, facts->lock_path, facts->on_this_host, &facts->job_lock_errno,
                                      &facts->job_folder_replaced, &facts->other_view);
  else
    facts->job_lock = _tessera_job_lock_probe (facts->lock_path, &facts->job_lock_errno);
}

/* Answers @probe in @facts, as the verdict asked. */
typedef void (*ProbeFunc) (TesseraProbe probe, TesseraVerdictFacts *facts, gpointer data);

/* The one loop that judges: _tessera_verdict_decide() on @facts, each
 * probe it names answered by @answer (only when a verdict needs it),
 * until it needs none. *@why: the verdict's reason. */
static TesseraVerdict
decide (TesseraVerdictFacts *facts, ProbeFunc answer, gpointer data, char **why)
{
  TesseraVerdict verdict;
  TesseraProbe ask;

  for (;;)
    {
      verdict = _tessera_verdict_decide (facts, &ask, why);
      if (ask == TESSERA_PROBE_NONE)
        return verdict;
      g_clear_pointer (why, g_free);
      answer (ask, facts, data);
    }
}

/* A holder's probes: of @monitor's memory over time, or of one look
 * (@monitor NULL: tessera_dynamic_lock_file_judge_holder()). */
typedef struct
{
  TesseraHolderMonitor *monitor;
  TesseraHolder *holder;
  double min_age;
} HolderProbes;

static void
answer_holder_probe (TesseraProbe probe, TesseraVerdictFacts *facts, gpointer data)
{
  HolderProbes *probes = data;
  TesseraHolderMonitor *monitor = probes->monitor;
  TesseraHolder *holder = probes->holder;

#define ANSWER(yes) ((yes) ? TESSERA_ANSWER_YES : TESSERA_ANSWER_NO)
  switch (probe)
    {
    case TESSERA_PROBE_LEASE:
      /* A lease expires on this host's clock, over time: one look sees
       * none expire. */
      facts->lease_expired = monitor == NULL ? TESSERA_ANSWER_NO
                             : ANSWER (_tessera_host_lease_expired (monitor->lease,
                                                                    _tessera_process_get_host_id (holder->process)));
      if (monitor != NULL)
        facts->lease_time = _tessera_host_lease_get_time (monitor->lease);
      break;
    case TESSERA_PROBE_JOB_LOCK:
      answer_job_lock (holder->lock_file, facts);
      break;
    case TESSERA_PROBE_LOCK_FREE_LONG:
      /* One look has not seen anything for long. */
      facts->lock_free_long = monitor == NULL ? TESSERA_ANSWER_NO
                              : ANSWER (lock_free_for_long (monitor, holder, probes->min_age));
      break;
    case TESSERA_PROBE_LOCKS_CROSS:
      if (monitor != NULL)
        facts->locks_cross_here = ANSWER (locks_cross_hosts (monitor));
      else
        {
          /* Its pool: the folder of its jobs/. */
          g_autofree char *jobs = g_path_get_dirname (tessera_dynamic_lock_file_get_path (holder->lock_file));
          g_autofree char *pool = g_path_get_dirname (jobs);

          facts->locks_cross_here = ANSWER (_tessera_locks_cross_hosts (pool, NULL));
        }
      break;
    case TESSERA_PROBE_SEEN_FOR:
      facts->seen_for = monitor == NULL ? TESSERA_ANSWER_NO
                        : ANSWER (_tessera_holder_monitor_seen_for (monitor, holder, probes->min_age));
      break;
    case TESSERA_PROBE_NONE:
    case TESSERA_PROBE_PROCESS_OWNER:   /* a waiter's */
    default:
      g_assert_not_reached ();
    }
#undef ANSWER
}

/* The verdict on @holder (_tessera_verdict_decide(), asking the probes it
 * needs), then what it asks of the monitor: a live holder watched, what
 * this host remembers of its job lock. @doubt: why it could not tell,
 * when it could not (it then holds), else left NULL. */
static TesseraHolderVerdict
judge (TesseraHolderMonitor *monitor,
       TesseraHolder        *holder,
       double                min_age,
       char                **reason,
       char                **doubt)
{
  const char *job_uri = tessera_dynamic_lock_file_get_job_uri (holder->lock_file);
  g_autofree char *lock_path = _tessera_path_with_suffix (job_uri, ".lock");
  g_autofree char *why = NULL;
  TesseraVerdictFacts facts = { 0 };
  HolderProbes probes = { monitor, holder, min_age };
  TesseraVerdict verdict;

  gather_facts (holder, job_uri, lock_path, NULL, &facts);
  verdict = decide (&facts, answer_holder_probe, &probes, &why);

  if (verdict == TESSERA_VERDICT_DEAD)
    {
      *reason = g_steal_pointer (&why);
      return TESSERA_HOLDER_GONE;
    }
  if (!facts.has_process)
    {
      /* A process holding the job lock (either kind) is the holder, still
       * starting. */
      *doubt = g_steal_pointer (&why);
      return TESSERA_HOLDER_HOLDS;
    }
  if (facts.process == TESSERA_PROCESS_UNKNOWN)
    {
      g_debug ("Holder of %s counts: %s", holder->name,
               _tessera_process_get_problem (holder->process) != NULL
               ? _tessera_process_get_problem (holder->process) : "its process type cannot tell");
      /* A spec that could not be read (a number in it that cannot be
       * trusted) leaves its holder unknown for good: it is no seed-era
       * holder without one, to be judged an orphan. */
      if (tessera_dynamic_lock_file_get_process (holder->lock_file) == NULL && !holder->spec_unreadable)
        g_clear_object (&holder->process);   /* its .pid is read again */
      else if (_tessera_process_get_problem (holder->process) != NULL)
        return TESSERA_HOLDER_HOLDS_UNATTENDED;
      /* else a plugin could not tell yet (Slurm did not answer): asked
       * again at the next look, through its cache. */
      return TESSERA_HOLDER_HOLDS;
    }
  if (verdict == TESSERA_VERDICT_ALIVE && !facts.job_lock_asked)
    {
      /* Alive by its pid. Watched holders need no more attention. */
      if (!holder->watched)
        _tessera_holder_monitor_watch (monitor, holder);
      return holder->watched ? TESSERA_HOLDER_HOLDS_UNATTENDED : TESSERA_HOLDER_HOLDS;
    }
  if (facts.job_lock_asked && facts.job_lock != TESSERA_JOB_LOCK_FREE)
    {
      /* Held: the holder runs. Not ours to probe: it counts. */
      if (facts.job_lock == TESSERA_JOB_LOCK_HELD)
        holder->lock_seen_held = TRUE;
      forget_lock_free (monitor, holder);
      if (facts.process == TESSERA_PROCESS_ALIVE && !holder->watched)
        _tessera_holder_monitor_watch (monitor, holder);   /* its exit brings it back here */
    }
  /* Counts; looked at again on every refresh. */
  *doubt = g_steal_pointer (&why);
  return TESSERA_HOLDER_HOLDS;
}

/* One holder judged in one look (@look: what /proc said of each pid,
 * shared by the holders judged with it; nullable). */
static TesseraHolderState
judge_in_look (TesseraDynamicLockFile *self,
               GHashTable             *look,
               TesseraProcessState    *process_state,
               char                  **reason)
{
  TesseraHolder holder = { 0 };
  TesseraVerdictFacts facts = { 0 };
  HolderProbes probes = { NULL, &holder, 0 };
  g_autofree char *lock_path = NULL;
  g_autofree char *why = NULL;
  TesseraVerdict verdict;
  const char *job_uri;

  if (process_state != NULL)
    *process_state = TESSERA_PROCESS_UNKNOWN;
  if (reason != NULL)
    *reason = NULL;
  job_uri = tessera_dynamic_lock_file_get_job_uri (self);
  if (job_uri == NULL || !tessera_dynamic_lock_file_is_valid (self))
    return TESSERA_HOLDER_STATE_UNKNOWN;
  holder.lock_file = self;
  if (tessera_dynamic_lock_file_get_process (self) != NULL)
    holder.process = g_object_ref (tessera_dynamic_lock_file_get_process (self));
  lock_path = _tessera_path_with_suffix (job_uri, ".lock");
  gather_facts (&holder, job_uri, lock_path, look, &facts);
  verdict = decide (&facts, answer_holder_probe, &probes, &why);
  if (process_state != NULL && facts.has_process)
    *process_state = facts.process;
  if (why == NULL && facts.has_process && facts.process == TESSERA_PROCESS_UNKNOWN &&
      _tessera_process_get_problem (holder.process) != NULL)
    why = g_strdup (_tessera_process_get_problem (holder.process));
  g_clear_object (&holder.process);
  if (reason != NULL)
    *reason = g_steal_pointer (&why);
  return verdict == TESSERA_VERDICT_DEAD ? TESSERA_HOLDER_STATE_DEAD
         : verdict == TESSERA_VERDICT_ALIVE ? TESSERA_HOLDER_STATE_ALIVE
         : TESSERA_HOLDER_STATE_UNKNOWN;
}

/* Defined here, with the probes it gathers for the verdict: the holder
 * monitor's own judging, in one look, without a monitor's memory. */
/**
 * tessera_dynamic_lock_file_judge_holder:
 * @self: a lock file, as read from its pool's `jobs/`
 * @process_state: (out) (optional): what the pid check of its process
 *   found ([enum@Tessera.ProcessState]; `TESSERA_PROCESS_UNKNOWN` for a
 *   lock file that names no process)
 * @reason: (out) (optional) (nullable) (transfer full): why its holder is
 *   dead, or why it cannot be told when that can be said, else `NULL`
 *
 * Judges whether the holder of @self still runs, as an acquire of its
 * pool does, by the table "Who may judge a holder" of the design: its
 * process (pid and start time in `/proc`, its host and boot, its type's
 * plugin), then its job lock. In one look: what only this host's memory
 * can tell over time (a host's lease that expired, an experimaestro job
 * lock seen free for long enough, a holder without a process seen for
 * long enough) is not told, and such a holder counts. Reads `/proc` and
 * probes the job lock; writes nothing. `tessera status` shows what it
 * says.
 *
 * Returns: the verdict: only `TESSERA_HOLDER_STATE_DEAD` is a death
 */
TesseraHolderState
tessera_dynamic_lock_file_judge_holder (TesseraDynamicLockFile *self,
                                        TesseraProcessState    *process_state,
                                        char                  **reason)
{
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_LOCK_FILE (self), TESSERA_HOLDER_STATE_UNKNOWN);
  return judge_in_look (self, NULL, process_state, reason);
}

/**
 * tessera_dynamic_lock_file_judge_holders:
 * @lock_files: (element-type TesseraDynamicLockFile): lock files, as read
 *   from a pool's `jobs/`
 * @process_states: (out) (optional) (transfer full) (element-type TesseraProcessState):
 *   for each lock file, what the pid check of its process found, as
 *   [method@Tessera.DynamicLockFile.judge_holder] says it
 *
 * Judges the holder of each of @lock_files as
 * [method@Tessera.DynamicLockFile.judge_holder] does, in one look at
 * `/proc`: a process that many lock files name (a scheduler holding
 * thousands of tokens) is read there once, not once per lock file. For
 * a description of a pool at one moment; a caller that judges again
 * later calls again.
 *
 * Returns: (transfer full) (element-type TesseraHolderState): the
 *   verdict on each lock file's holder, in the order of @lock_files: only
 *   `TESSERA_HOLDER_STATE_DEAD` is a death
 */
GArray *
tessera_dynamic_lock_file_judge_holders (GPtrArray *lock_files,
                                         GArray   **process_states)
{
  g_autoptr(GHashTable) look = _tessera_pid_look_new ();
  GArray *states;

  g_return_val_if_fail (lock_files != NULL, NULL);
  states = g_array_sized_new (FALSE, FALSE, sizeof (TesseraHolderState), lock_files->len);
  if (process_states != NULL)
    *process_states = g_array_sized_new (FALSE, FALSE, sizeof (TesseraProcessState), lock_files->len);
  for (guint i = 0; i < lock_files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (lock_files, i);
      TesseraProcessState process = TESSERA_PROCESS_UNKNOWN;
      TesseraHolderState state = TESSERA_HOLDER_STATE_UNKNOWN;

      if (TESSERA_IS_DYNAMIC_LOCK_FILE (lock_file))
        state = judge_in_look (lock_file, look, &process, NULL);
      g_array_append_val (states, state);
      if (process_states != NULL)
        g_array_append_val (*process_states, process);
    }
  return states;
}

TesseraHolderVerdict
_tessera_holder_monitor_judge (TesseraHolderMonitor *monitor,
                               TesseraHolder        *holder,
                               double                min_age,
                               char                **reason)
{
  g_autofree char *doubt = NULL;
  TesseraHolderVerdict verdict = judge (monitor, holder, min_age, reason, &doubt);

  /* Every verdict says whether it could tell: a doubt of an earlier one
   * must not stay in a long-lived view (status, watch). */
  _tessera_dynamic_lock_file_set_unknown_reason (holder->lock_file, doubt);
  return verdict;
}

/* The uid an id that does not map into our user namespace reads as
 * (/proc/sys/kernel/overflowuid, 65534 unless set otherwise). */
static guint64
overflow_uid (void)
{
  static gsize once;
  static guint64 uid = 65534;

  if (g_once_init_enter (&once))
    {
      g_autofree char *text = NULL;
      char *end;
      guint64 read;

      if (g_file_get_contents ("/proc/sys/kernel/overflowuid", &text, NULL, NULL) &&
          (read = g_ascii_strtoull (text, &end, 10), end != text))
        uid = read;
      g_once_init_leave (&once, 1);
    }
  return uid;
}

/* Whether process @pid, which runs here, may be @owner's: only one none
 * of whose uids (real, effective, saved, file system: "Uid:" in
 * /proc/PID/status) is @owner is another user's. Not /proc/PID's owner:
 * that is its effective uid, root for a set-user-ID root program its user
 * runs; a root daemon acting for her has her effective uid, as the files
 * it writes. One hidden from us (hidepid), gone meanwhile, whose status
 * cannot be read, or with a uid that does not map here (the overflow
 * uid) may be hers. */
static gboolean
process_may_be_owners (GPid pid, uid_t owner)
{
  char contents[4096];   /* "Uid:" is within the first dozen lines */
  const char *line;
  char *end;
  guint fields = 0;

  if (_tessera_proc_read (pid, "status", contents, sizeof contents, FALSE) < 0)
    return TRUE;
  line = g_str_has_prefix (contents, "Uid:") ? contents : strstr (contents, "\nUid:");
  if (line == NULL)
    return TRUE;
  line += line == contents ? 4 : 5;
  for (;;)
    {
      guint64 uid;

      while (*line == ' ' || *line == '\t')
        line++;
      if (*line == '\n' || *line == '\0')
        return fields == 0;
      if (!g_ascii_isdigit (*line))
        return TRUE;
      errno = 0;
      uid = g_ascii_strtoull (line, &end, 10);
      if (errno != 0 || (*end != '\t' && *end != ' ' && *end != '\n' && *end != '\0'))
        return TRUE;
      if (uid == (guint64) owner || uid == overflow_uid ())
        return TRUE;
      fields++;
      line = end;
    }
}

/* A waiter's probes: its entry's owner, the store's leases, its
 * reader's memory of the entry. */
typedef struct
{
  uid_t owner;
  TesseraPoolStore *store;
  TesseraEntryUnrenewedFunc unrenewed;
  gpointer data;
} WaiterProbes;

static void
answer_waiter_probe (TesseraProbe probe, TesseraVerdictFacts *facts, gpointer data)
{
  WaiterProbes *probes = data;

#define ANSWER(yes) ((yes) ? TESSERA_ANSWER_YES : TESSERA_ANSWER_NO)
  switch (probe)
    {
    case TESSERA_PROBE_PROCESS_OWNER:
      facts->process_of_owner = ANSWER (process_may_be_owners (facts->pid, probes->owner));
      break;
    case TESSERA_PROBE_LEASE:
      facts->lease_expired = ANSWER (probes->store->klass->liveness->host_expired (probes->store->proof, facts->host));
      break;
    case TESSERA_PROBE_JOB_LOCK:
      /* By its path: a queue entry records no job folder. */
      facts->job_lock_asked = TRUE;
      facts->job_lock = _tessera_job_lock_probe (facts->lock_path, &facts->job_lock_errno);
      break;
    case TESSERA_PROBE_SEEN_FOR:
      facts->seen_for = ANSWER (probes->unrenewed (probes->data));
      break;
    case TESSERA_PROBE_NONE:
    case TESSERA_PROBE_LOCK_FREE_LONG:
    case TESSERA_PROBE_LOCKS_CROSS:
    default:
      g_assert_not_reached ();   /* a holder's */
    }
#undef ANSWER
}

TesseraVerdict
_tessera_holder_monitor_judge_waiter (TesseraDynamicLockFile    *entry,
                                      uid_t                      owner,
                                      TesseraPoolStore          *store,
                                      TesseraEntryUnrenewedFunc  unrenewed,
                                      gpointer                   data,
                                      char                     **reason)
{
  TesseraProcess *process = tessera_dynamic_lock_file_get_process (entry);
  g_autofree char *lock_path = _tessera_path_with_suffix (tessera_dynamic_lock_file_get_job_uri (entry), ".lock");
  g_autofree char *why = NULL;
  TesseraVerdictFacts facts = { 0 };
  WaiterProbes probes = { owner, store, unrenewed, data };
  TesseraVerdict verdict;

  facts.waiter = TRUE;
  facts.entry_by_root = owner == 0;
  facts.lock_path = lock_path;
  if (process != NULL)
    {
      facts.has_process = TRUE;
      facts.process = tessera_process_check (process);
      facts.pid = tessera_process_get_pid (process);
      facts.host = _tessera_process_get_host_id (process);
    }
  verdict = decide (&facts, answer_waiter_probe, &probes, &why);
  *reason = g_steal_pointer (&why);
  return verdict;
}
