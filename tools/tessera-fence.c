/* tessera-fence.c: `tessera run` ends its command before its host lease
 * lapses. Other hosts take this host's holdings for dead once they have
 * seen its heartbeat unchanged for the lease; a command still using them
 * then would share what was handed out again. So when renewals fail (the
 * file server is gone, hosts/ cannot be written), the command is ended
 * while there is still time: SIGTERM at lease − margin, SIGKILL a grace
 * later, with margin = grace + 2 check intervals, so it is dead before
 * the lease since the last renewal is over. Renewals come every eighth
 * of the lease (core/tessera-host-lease.c), on a thread of their own, so
 * a renewer stalled (a loaded machine, a slow write) for up to
 * lease − margin − lease/8 is not fenced: half the lease up to 16 s.
 *
 * The checks run on a thread of their own, touching no file of the
 * pool: a file server that hangs blocks the command's main thread (it
 * looks at its lock files) and the renewal itself, exactly when the fence
 * must act.
 *
 * What is ended is every process descending from `tessera run`, not only
 * the command: its background children, and orphans (a daemon that
 * setsid()s and forks away), which come back to `tessera run` as it is
 * their subreaper (PR_SET_CHILD_SUBREAPER, set by the run on a lease
 * pool). They are found through /proc/PID/task/TID/children, from this
 * process down.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-fence.h"
#include "tessera-proc.h"

#include <glib/gi18n-lib.h>
#include <signal.h>
#include <unistd.h>

struct _TesseraFence
{
  GPtrArray *resources;
  GPtrArray *names;
  double *leases;       /* each resource's, read once (0: no lease) */
  GPid watcher;         /* the command's watcher: it ends with the command */
  TesseraFenceSignalFunc signal_command;   /* where descendants cannot be listed */
  gpointer data;
  double interval;      /* seconds between checks */
  GThread *thread;      /* checks every interval until stopping */
  GMutex lock;
  GCond cond;
  gboolean stopping;    /* under lock */
  gint64 term_at;       /* monotonic: when SIGTERM was sent; 0: not yet (the thread's until stopped) */
  gboolean killed;
  gint fenced;          /* atomic: the command was told to end */
};

static double
lease_of (TesseraTrackedDynamicResource *resource)
{
  double lease = 0;

  if (g_object_class_find_property (G_OBJECT_GET_CLASS (resource), "host-lease") != NULL)
    g_object_get (resource, "host-lease", &lease, NULL);
  return lease;
}

/* The grace a command gets between SIGTERM and SIGKILL, and how often
 * renewals are checked, for a lease of @lease seconds. */
static double
grace_for (double lease)
{
  return CLAMP (lease / 4, 0.2, 10);
}

/* The checks touch no file: frequent ones cost nothing and keep the
 * margin short, which is the slack a loaded machine's renewer has. */
static double
interval_for (double lease)
{
  return CLAMP (lease / 16, 0.1, 1);
}

gboolean
tessera_fence_needed (GPtrArray *resources)
{
  for (guint i = 0; i < resources->len; i++)
    if (lease_of (g_ptr_array_index (resources, i)) > 0)
      return TRUE;
  return FALSE;
}

int
tessera_fence_signal_descendants (int signum, GPid except)
{
  g_autoptr(GArray) queue = g_array_new (FALSE, FALSE, sizeof (GPid));
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  GPid self = getpid ();
  int live = 0;

  if (!tessera_proc_lists_children ())
    return -1;
  g_array_append_val (queue, self);
  /* Breadth first, each process's children from each of its threads. */
  for (guint i = 0; i < queue->len; i++)
    {
      g_autoptr(GArray) children = tessera_proc_dup_children (g_array_index (queue, GPid, i));

      for (guint j = 0; j < children->len; j++)
        {
          GPid child = g_array_index (children, GPid, j);

          if (child == self || g_hash_table_contains (seen, GINT_TO_POINTER (child)))
            continue;
          g_hash_table_add (seen, GINT_TO_POINTER (child));
          g_array_append_val (queue, child);
          if (child != except && !tessera_process_pid_has_ended (child) && kill (child, signum) == 0)
            live++;
        }
    }
  return live;
}

static void
check (TesseraFence *fence)
{
  gint64 now = g_get_monotonic_time ();

  if (fence->term_at != 0)
    {
      double grace = G_MAXDOUBLE;

      for (guint i = 0; i < fence->resources->len; i++)
        if (fence->leases[i] > 0)
          grace = MIN (grace, grace_for (fence->leases[i]));
      if (!fence->killed && (double) (now - fence->term_at) / G_USEC_PER_SEC >= grace)
        {
          if (tessera_fence_signal_descendants (SIGKILL, 0) < 0)
            fence->signal_command (SIGKILL, fence->data);
          fence->killed = TRUE;
        }
      return;
    }
  for (guint i = 0; i < fence->resources->len; i++)
    {
      TesseraTrackedDynamicResource *resource = g_ptr_array_index (fence->resources, i);
      double lease = fence->leases[i];
      double unrenewed = tessera_tracked_dynamic_resource_get_lease_unrenewed (resource);
      double margin = grace_for (lease) + 2 * interval_for (lease);

      if (lease <= 0 || unrenewed <= lease - margin)
        continue;
      g_printerr (_("tessera: %s: this host's lease (%g s) has not been renewed for %.1f s: ending the command "
                    "before other hosts take its share for dead\n"),
                  (const char *) g_ptr_array_index (fence->names, i), lease, unrenewed);
      /* Said before the signal: the command may end, and the run
       * report its status, before this thread runs again. */
      g_atomic_int_set (&fence->fenced, 1);
      /* Not the watcher: it ends once the command has, and passes
       * on what it gets to the command (which would hear it twice). */
      if (tessera_fence_signal_descendants (SIGTERM, fence->watcher) <= 0)
        fence->signal_command (SIGTERM, fence->data);
      fence->term_at = now;
      break;
    }
}

/* The fence's thread: a check every interval, until told to stop. A
 * plain wait, not a main loop: nothing else runs here. */
static gpointer
fence_thread (gpointer data)
{
  TesseraFence *fence = data;
  gint64 next = g_get_monotonic_time () + (gint64) (fence->interval * G_USEC_PER_SEC);

  g_mutex_lock (&fence->lock);
  while (!fence->stopping)
    {
      if (g_cond_wait_until (&fence->cond, &fence->lock, next) || fence->stopping)
        continue;
      g_mutex_unlock (&fence->lock);
      check (fence);
      next = g_get_monotonic_time () + (gint64) (fence->interval * G_USEC_PER_SEC);
      g_mutex_lock (&fence->lock);
    }
  g_mutex_unlock (&fence->lock);
  return NULL;
}

TesseraFence *
tessera_fence_start (GPtrArray              *resources,
                     GPtrArray              *names,
                     GPid                    watcher,
                     TesseraFenceSignalFunc  signal_command,
                     gpointer                data)
{
  TesseraFence *fence;
  double interval = G_MAXDOUBLE;

  for (guint i = 0; i < resources->len; i++)
    {
      double lease = lease_of (g_ptr_array_index (resources, i));
      if (lease > 0)
        interval = MIN (interval, interval_for (lease));
    }
  if (interval == G_MAXDOUBLE)
    return NULL;
  fence = g_new0 (TesseraFence, 1);
  fence->resources = g_ptr_array_ref (resources);
  fence->names = g_ptr_array_ref (names);
  fence->leases = g_new0 (double, resources->len);
  for (guint i = 0; i < resources->len; i++)
    fence->leases[i] = lease_of (g_ptr_array_index (resources, i));
  fence->watcher = watcher;
  fence->signal_command = signal_command;
  fence->data = data;
  fence->interval = interval;
  g_mutex_init (&fence->lock);
  g_cond_init (&fence->cond);
  fence->thread = g_thread_new ("tessera-fence", fence_thread, fence);
  return fence;
}

gboolean
tessera_fence_fenced (TesseraFence *fence)
{
  return fence != NULL && g_atomic_int_get (&fence->fenced);
}

void
tessera_fence_stop (TesseraFence *fence)
{
  if (fence == NULL)
    return;
  g_mutex_lock (&fence->lock);
  fence->stopping = TRUE;
  g_cond_signal (&fence->cond);
  g_mutex_unlock (&fence->lock);
  g_thread_join (fence->thread);
  if (fence->term_at != 0)
    {
      double grace = G_MAXDOUBLE;
      gint64 kill_at;

      for (guint i = 0; i < fence->resources->len; i++)
        if (fence->leases[i] > 0)
          grace = MIN (grace, grace_for (fence->leases[i]));
      /* What is left of the command (the command itself may be gone,
       * its children not) gets the rest of its grace, then SIGKILL until
       * none is left: they die at once, and their own children come
       * back to us, to be found by the next walk. */
      kill_at = fence->term_at + (gint64) (grace * G_USEC_PER_SEC);
      while (!fence->killed && g_get_monotonic_time () < kill_at &&
             tessera_fence_signal_descendants (0, 0) > 0)
        g_usleep (10 * 1000);
      while (tessera_fence_signal_descendants (SIGKILL, 0) > 0)
        g_usleep (10 * 1000);
    }
  g_mutex_clear (&fence->lock);
  g_cond_clear (&fence->cond);
  g_ptr_array_unref (fence->resources);
  g_ptr_array_unref (fence->names);
  g_free (fence->leases);
  g_free (fence);
}
