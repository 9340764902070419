/* tessera-tracked-dynamic-resource.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"
#include "tessera-resource-informations-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

/**
 * TesseraTrackedDynamicResource:
 *
 * The seed's `TrackedDynamicResource`: a resource whose holders are files
 * in a lock folder F, in experimaestro's format:
 *
 * - `F/informations.json`: resource-level data (for a counter token,
 *   `{"total": N}`); a change is applied in every running process;
 * - `F/ipc.lock`: held (flock and an fcntl lock) around every
 *   read-modify-write of F;
 * - `F/jobs/{task_id}@{identifier}.json`: one [class@Tessera.DynamicLockFile]
 *   per holder.
 *
 * The resource keeps a cache of the lock files and re-reads only what
 * changed: inotify tells which names changed (read under ipc.lock, so the
 * view is exact when it matters); without inotify (network file systems,
 * `TESSERA_NO_INOTIFY=1`) the folder's modification time does. A holder's
 * death is seen through a pidfd in the [class@Tessera.ResourcePoller]'s
 * thread; the next process that looks removes the dead holder's file. A
 * valid lock file with no process, seen unchanged by this host for
 * [property@Tessera.TrackedDynamicResource:min-age], whose job lock is
 * not held (in either kind), is an orphan and is removed too.
 *
 * Subclasses implement the seed's accounting virtual functions; all of
 * them run under the resource's thread lock.
 */

typedef struct
{
  char *name;
  TesseraDynamicLockFile *lock_file;  /* NULL: unreadable or not a file */
  gboolean accounted;
  ino_t ino;
  gint64 mtime_ns;
  goffset size;
  TesseraProcess *holder;             /* from the file or from <job_uri>.pid */
  gboolean watched;
  gboolean truncated;                 /* empty or cut short: not JSON at all */
  gboolean whole;                     /* names a job, amount unreadable: holds all */
  gboolean lock_seen_held;            /* its job lock was seen held: its job ran */
  gint64 first_seen_us;               /* monotonic: when this host first saw it; 0: not asked */
  gint64 lock_free_since_us;          /* monotonic: its job lock first seen free; 0: not */
} Entry;

typedef struct
{
  GWeakRef resource;
  gint published;   /* set last, read first: see watch_box_resource() */
} WatchBox;

typedef struct
{
  GPid pid;
  guint64 serial;   /* tells this watch from a later one that reused its fd */
  int fd;
  GSource *source;
  GHashTable *names;
} PidWatch;

typedef struct
{
  WatchBox *box;
  GPid pid;
  guint64 serial;
} PidWatchTicket;

typedef struct
{
  char *lock_folder;
  TesseraLockFolder *folder;  /* made at init, from lock_folder */
  GType lock_file_type;
  double min_age;
  double patience;            /* seconds a waiter takes what is free before it reserves */

  GMutex lock;                /* the seed's thread lock */
  GHashTable *cache;          /* name → Entry */
  GHashTable *attention;      /* names to look at on every refresh */
  GHashTable *dirty;          /* names inotify reported */
  gboolean force_scan;
  guint64 view_serial;        /* moves whenever accounting changes */
  gboolean refresh_changed;   /* a refresh changed it: wake this process's waiters */

  gboolean shared_fs;         /* not on the local allow-list: read jobs/ every time */
  gboolean jobs_hostile;      /* jobs/ is not a folder (a planted link): use nothing in it */
  gboolean read_only;         /* only look: create, change and remove nothing */
  gboolean jobs_known;
  gint64 jobs_mtime_ns;
  ino_t jobs_ino;
  gint64 jobs_seen_mono;      /* our monotonic time when we first read that mtime */
  gboolean jobs_mtime_clean;  /* a scan ran after that mtime's clock tick was over */

  TesseraResourceInformations *informations;

  WatchBox *box;
  int inotify_fd;
  int jobs_wd;
  GSource *inotify_source;
  GHashTable *pid_watches;    /* pid → PidWatch */
  guint64 next_serial;
  guint whole_holders;        /* accounted entries that hold everything */
  int locks_cross_hosts;      /* 0: not looked yet, 1: they do, -1: they do not */
} TesseraTrackedDynamicResourcePrivate;

enum {
  PROP_0,
  PROP_LOCK_FOLDER,
  PROP_PATH,
  PROP_LOCK_FILE_TYPE,
  PROP_MIN_AGE,
  PROP_READ_ONLY,
  PROP_PATIENCE,
  N_PROPS
};

static GParamSpec *props[N_PROPS];

static void tessera_tracked_dynamic_resource_initable_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TesseraTrackedDynamicResource, tessera_tracked_dynamic_resource,
                                  TESSERA_TYPE_DYNAMIC_RESOURCE,
                                  G_ADD_PRIVATE (TesseraTrackedDynamicResource)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         tessera_tracked_dynamic_resource_initable_init))

#define PRIV(o) ((TesseraTrackedDynamicResourcePrivate *) tessera_tracked_dynamic_resource_get_instance_private (o))
#define KLASS(o) TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (o)

static const char *
resource_name (TesseraTrackedDynamicResource *self)
{
  const char *name = tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self));
  return name ? name : PRIV (self)->lock_folder;
}

/* The thread lock. Property notifications raised under it (a plugin's
 * notify::total) are held back until it is released, so a handler may call
 * back into the resource. */
static void
lock_thread (TesseraTrackedDynamicResource *self)
{
  g_object_freeze_notify (G_OBJECT (self));
  g_mutex_lock (&PRIV (self)->lock);
}

static void
unlock_thread (TesseraTrackedDynamicResource *self)
{
  g_mutex_unlock (&PRIV (self)->lock);
  g_object_thaw_notify (G_OBJECT (self));
}

/* Takes ipc.lock then the thread lock, in that order, always: a peer that
 * keeps ipc.lock must not keep the poller's thread (which needs only the
 * thread lock) from serving this process's other resources. */
/* No ipc.lock held, but go on (read-only: none could be opened). */
#define IPC_LOCK_NONE G_MAXINT

static int
lock_both (TesseraTrackedDynamicResource *self, GError **error)
{
  int fd;

  if (PRIV (self)->read_only)
    {
      fd = _tessera_lock_folder_lock (PRIV (self)->folder, TRUE, NULL);
      if (fd < 0)
        fd = IPC_LOCK_NONE;
    }
  else
    fd = _tessera_lock_folder_lock (PRIV (self)->folder, FALSE, error);
  if (fd >= 0)
    lock_thread (self);
  return fd;
}

static void
unlock_both (TesseraTrackedDynamicResource *self, int fd)
{
  gboolean changed = PRIV (self)->refresh_changed;

  PRIV (self)->refresh_changed = FALSE;
  if (fd != IPC_LOCK_NONE)
    _tessera_lock_folder_unlock (fd);
  unlock_thread (self);
  if (changed)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
}

/* ---------------------------------------------------------------------- */
/* Watch boxes: sources in the poller's thread reach the resource through a
 * weak reference, so they never keep it alive nor touch it once disposed. */

static WatchBox *
watch_box_new (TesseraTrackedDynamicResource *self)
{
  WatchBox *box = g_atomic_rc_box_new0 (WatchBox);
  g_weak_ref_init (&box->resource, self);
  g_atomic_int_set (&box->published, 1);
  return box;
}

/* Sources reach the poller's thread through GMainContext's own locking,
 * which ThreadSanitizer cannot see: an atomic store made before the source
 * was attached, read here first, makes the hand-over explicit. */
static TesseraTrackedDynamicResource *
watch_box_resource (WatchBox *box)
{
  if (!g_atomic_int_get (&box->published))
    return NULL;
  return g_weak_ref_get (&box->resource);
}

static void
watch_box_clear (WatchBox *box)
{
  g_weak_ref_clear (&box->resource);
}

static WatchBox *
watch_box_ref (WatchBox *box)
{
  return g_atomic_rc_box_acquire (box);
}

static void
watch_box_unref (gpointer box)
{
  g_atomic_rc_box_release_full (box, (GDestroyNotify) watch_box_clear);
}

/* Always the poller this resource holds: the default one may be another
 * by now (the last one gone, a new one made), and a context borrowed from
 * a temporary reference could be freed before the source is attached. */
static GMainContext *
poller_context (TesseraTrackedDynamicResource *self)
{
  return _tessera_dynamic_resource_get_context (TESSERA_DYNAMIC_RESOURCE (self));
}

/* ---------------------------------------------------------------------- */
/* Entries */

/* What tells a lock file from the next one of the same name. */
static void
entry_set_stat (Entry *entry, const struct stat *st)
{
  entry->ino = st->st_ino;
  entry->mtime_ns = _tessera_stat_mtime_ns (st);
  entry->size = st->st_size;
}

static gboolean
entry_same_stat (Entry *entry, const struct stat *st)
{
  return entry->ino == st->st_ino && entry->mtime_ns == _tessera_stat_mtime_ns (st) &&
         entry->size == st->st_size;
}

static void
entry_free (Entry *entry)
{
  g_free (entry->name);
  g_clear_object (&entry->lock_file);
  g_clear_object (&entry->holder);
  g_free (entry);
}

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

static void
unwatch_entry (TesseraTrackedDynamicResource *self, Entry *entry)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  PidWatch *watch;

  if (!entry->watched || entry->holder == NULL)
    return;
  entry->watched = FALSE;
  watch = g_hash_table_lookup (priv->pid_watches,
                               GINT_TO_POINTER (tessera_process_get_pid (entry->holder)));
  if (watch == NULL)
    return;
  g_hash_table_remove (watch->names, entry->name);
  if (g_hash_table_size (watch->names) == 0)
    g_hash_table_remove (priv->pid_watches, GINT_TO_POINTER (watch->pid));
}

static void
ticket_free (PidWatchTicket *ticket)
{
  watch_box_unref (ticket->box);
  g_free (ticket);
}

static gboolean
on_pidfd_ready (gint fd, GIOCondition condition, gpointer data)
{
  PidWatchTicket *ticket = data;
  g_autoptr(TesseraTrackedDynamicResource) self =
    watch_box_resource (g_atomic_pointer_get (&ticket->box));
  TesseraTrackedDynamicResourcePrivate *priv;
  PidWatch *watch;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  priv = PRIV (self);
  lock_thread (self);
  /* This dispatch may have waited for the lock while its watch was
   * dropped and the descriptor number reused: only act on the very watch
   * this source was made for. */
  watch = g_hash_table_lookup (priv->pid_watches, GINT_TO_POINTER (ticket->pid));
  if (watch != NULL && watch->serial == ticket->serial)
    {
      GHashTableIter names;
      gpointer name;

      g_hash_table_iter_init (&names, watch->names);
      while (g_hash_table_iter_next (&names, &name, NULL))
        {
          Entry *entry = g_hash_table_lookup (priv->cache, name);
          if (entry != NULL)
            {
              entry->watched = FALSE;
              g_hash_table_add (priv->attention, g_strdup (entry->name));
            }
        }
      g_debug ("Holder %d of %s exited", watch->pid, resource_name (self));
      g_hash_table_remove (priv->pid_watches, GINT_TO_POINTER (watch->pid));
    }
  unlock_thread (self);

  tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return G_SOURCE_REMOVE;
}

/* Called with the thread lock held; holder known to be alive and local. */
static void
watch_entry (TesseraTrackedDynamicResource *self, Entry *entry)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  GPid pid = tessera_process_get_pid (entry->holder);
  PidWatch *watch = g_hash_table_lookup (priv->pid_watches, GINT_TO_POINTER (pid));

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
      if (tessera_process_check (entry->holder) != TESSERA_PROCESS_ALIVE)
        {
          close (fd);
          pidfd_budget_give ();
          return;
        }
      PidWatchTicket *ticket = g_new0 (PidWatchTicket, 1);

      watch = g_new0 (PidWatch, 1);
      watch->pid = pid;
      watch->serial = ++priv->next_serial;
      watch->fd = fd;
      ticket->pid = pid;
      ticket->serial = watch->serial;
      g_atomic_pointer_set (&ticket->box, watch_box_ref (priv->box));   /* last */
      watch->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      watch->source = g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_name (watch->source, "tessera-pidfd");
      g_source_set_callback (watch->source, (GSourceFunc) (void (*)(void)) on_pidfd_ready,
                             ticket, (GDestroyNotify) ticket_free);
      g_hash_table_insert (priv->pid_watches, GINT_TO_POINTER (pid), watch);
      g_source_attach (watch->source, poller_context (self));
      /* cppcheck sees no free of ticket: the source owns it (ticket_free is
       * its destroy notify). */
      // cppcheck-suppress memleak
    }
  g_hash_table_add (watch->names, g_strdup (entry->name));
  entry->watched = TRUE;
}

static void
account (TesseraTrackedDynamicResource *self, Entry *entry)
{
  if (entry->lock_file != NULL && !entry->accounted &&
      tessera_dynamic_lock_file_is_valid (entry->lock_file))
    {
      KLASS (self)->account_lock_file (self, entry->lock_file);
      entry->accounted = TRUE;
      PRIV (self)->whole_holders += entry->whole;
      PRIV (self)->view_serial++;
    }
}

static void
unaccount (TesseraTrackedDynamicResource *self, Entry *entry)
{
  if (entry->accounted)
    {
      KLASS (self)->unaccount_lock_file (self, entry->lock_file);
      entry->accounted = FALSE;
      PRIV (self)->whole_holders -= entry->whole;
      PRIV (self)->view_serial++;
    }
}

static void
remove_entry (TesseraTrackedDynamicResource *self, const char *name)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  Entry *entry = g_hash_table_lookup (priv->cache, name);

  if (entry == NULL)
    return;
  unaccount (self, entry);
  unwatch_entry (self, entry);
  g_hash_table_remove (priv->attention, name);
  g_hash_table_remove (priv->cache, name);
}

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

/* Whether a file that did not load is not even JSON: what a writer in
 * place (a Python peer) leaves when it dies half-way. */
static gboolean
is_truncated (const char *data, gsize length)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();

  return length == 0 || !_tessera_json_load (parser, data, length, NULL);
}

/* Numbers written as 1.0 (Python's json may) become integers; FALSE when
 * some number is not a whole one, or the information is nested deeper than
 * any type's needs (then it is not read at all). */
static gboolean
integral_numbers (JsonNode *node, guint depth)
{
  gboolean whole = TRUE;

  if (depth > 32)
    return FALSE;
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(GList) members = json_object_get_values (json_node_get_object (node));
      for (GList *l = members; l != NULL; l = l->next)
        whole &= integral_numbers (l->data, depth + 1);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (array); i++)
        whole &= integral_numbers (json_array_get_element (array, i), depth + 1);
    }
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      double value = json_node_get_double (node);
      if (value != (double) (gint64) value || value < (double) G_MININT64 || value > (double) G_MAXINT64)
        return FALSE;
      json_node_set_int (node, (gint64) value);
    }
  return whole;
}

/* A lock file that did not load but names a job still holds (fail closed):
 * read again with whole floats made integers and an unreadable "process"
 * dropped (@holder_unknown then set); if its "information" still cannot
 * be read, without it, and @whole set: it holds everything. */
static TesseraDynamicLockFile *
salvage_lock_file (TesseraTrackedDynamicResource *self, const char *path, const char *data, gsize length,
                   gboolean *whole, gboolean *holder_unknown)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autofree char *text = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();   /* edited below */
  JsonNode *root;
  TesseraDynamicLockFile *lock_file;
  JsonObject *object;
  JsonNode *member;

  if (!_tessera_json_load (parser, data, length, NULL) ||
      json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  root = json_parser_get_root (parser);
  object = json_node_get_object (root);
  member = json_object_get_member (object, "job_uri");
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      json_node_get_value_type (member) != G_TYPE_STRING || *json_node_get_string (member) == '\0')
    return NULL;   /* names no job: it never counted */

  member = json_object_get_member (object, "process");
  if (member != NULL && !JSON_NODE_HOLDS_NULL (member) && !JSON_NODE_HOLDS_OBJECT (member))
    {
      json_object_remove_member (object, "process");
      *holder_unknown = TRUE;
    }
  member = json_object_get_member (object, "information");
  if (member != NULL && integral_numbers (member, 0))
    {
      text = json_to_string (root, FALSE);
      lock_file = tessera_dynamic_lock_file_new_from_data (priv->lock_file_type, path, text, -1, NULL);
      if (lock_file != NULL)
        return lock_file;
      g_clear_pointer (&text, g_free);
    }
  json_object_remove_member (object, "information");
  text = json_to_string (root, FALSE);
  lock_file = tessera_dynamic_lock_file_new_from_data (priv->lock_file_type, path, text, -1, NULL);
  if (lock_file != NULL)
    *whole = TRUE;
  return lock_file;
}

/* Reads (or re-reads) one lock file. Called with the thread lock held. */
static void
load_entry (TesseraTrackedDynamicResource *self, const char *name, const struct stat *st)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autofree char *path = _tessera_lock_folder_dup_job_path (priv->folder, name);
  g_autoptr(GError) error = NULL;
  gboolean holder_unknown = FALSE;
  Entry *entry;

  remove_entry (self, name);
  entry = g_new0 (Entry, 1);
  entry->name = g_strdup (name);
  entry_set_stat (entry, st);

  if (S_ISLNK (st->st_mode))
    g_warning (_("Ignoring %s: a lock file must not be a symbolic link"), path);
  else if (!S_ISREG (st->st_mode))
    g_warning (_("Ignoring %s: not a regular file"), path);
  else
    {
      g_autofree char *data = NULL;
      gsize length;

      /* Read once: under ipc.lock no writer is half-way, and what does not
       * load is judged from this very text. */
      entry->lock_file = _tessera_dynamic_lock_file_load_once (priv->lock_file_type, path, &data, &length, &error);
      if (entry->lock_file == NULL)
        {
          if (g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            {
              entry_free (entry);
              return;
            }
          entry->lock_file = data != NULL ? salvage_lock_file (self, path, data, length, &entry->whole, &holder_unknown)
                                          : NULL;
          if (entry->lock_file != NULL)
            g_warning (_("Lock file %s of %s names a job but cannot be read in full (%s): it counts, %s"),
                       path, resource_name (self), error->message,
                       entry->whole ? _("as holding everything") : _("for its declared amount"));
          else
            {
              g_warning (_("Ignoring lock file of %s: %s"), resource_name (self), error->message);
              entry->truncated = data != NULL && is_truncated (data, length);
            }
        }
    }

  g_hash_table_replace (priv->cache, entry->name, entry);
  if (entry->lock_file == NULL)
    {
      /* Re-examined on every refresh: a peer may still be writing it. */
      g_hash_table_add (priv->attention, g_strdup (name));
      return;
    }
  account (self, entry);
  if (!tessera_dynamic_lock_file_is_valid (entry->lock_file))
    return;
  if (holder_unknown)
    entry->holder = _tessera_process_new_unknown (_("its process spec is not a JSON object"));
  else if (tessera_dynamic_lock_file_get_process (entry->lock_file) != NULL)
    entry->holder = g_object_ref (tessera_dynamic_lock_file_get_process (entry->lock_file));
  g_hash_table_add (priv->attention, g_strdup (name));
}

/* What tells this very file from the next one of the same name, for the
 * host's memory of when it was first seen. */
static char *
seen_key (TesseraTrackedDynamicResource *self, Entry *entry)
{
  return g_strdup_printf ("%s/%s\n%" G_GUINT64_FORMAT "\n%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT,
                          _tessera_lock_folder_get_jobs_path (PRIV (self)->folder), entry->name, (guint64) entry->ino,
                          entry->mtime_ns, (gint64) entry->size);
}

/* Whether this host has seen the file unchanged for min-age: the age of
 * an orphan, on our monotonic clock, never its mtime against our clock
 * (the writer's or the file server's clock may be anything). */
static gboolean
seen_for_min_age (TesseraTrackedDynamicResource *self, Entry *entry)
{
  if (entry->first_seen_us == 0)
    {
      g_autofree char *key = seen_key (self, entry);
      entry->first_seen_us = _tessera_first_seen (key);
    }
  return (double) (g_get_monotonic_time () - entry->first_seen_us) / G_USEC_PER_SEC >= PRIV (self)->min_age;
}

static char *
lock_free_key (TesseraTrackedDynamicResource *self, Entry *entry)
{
  g_autofree char *key = seen_key (self, entry);

  return g_strconcat ("job lock free\n", key, NULL);
}

static void
forget_lock_free (TesseraTrackedDynamicResource *self, Entry *entry)
{
  if (entry->lock_free_since_us != 0)
    {
      g_autofree char *key = lock_free_key (self, entry);
      _tessera_forget_seen (key);
      entry->lock_free_since_us = 0;
    }
}

/* Whether a free job lock is a sure death. A Tessera holder takes its job
 * lock before its lock file exists, and a job whose lock was seen held has
 * run: then at once. An experimaestro job takes it only once its process
 * has started (Python starting can take seconds after its spec was
 * written): then once this host has seen it free for min-age. */
static gboolean
lock_free_for_long (TesseraTrackedDynamicResource *self, Entry *entry)
{
  if (entry->lock_seen_held || _tessera_process_written_by_tessera (entry->holder))
    return TRUE;
  if (entry->lock_free_since_us == 0)
    {
      g_autofree char *key = lock_free_key (self, entry);
      entry->lock_free_since_us = _tessera_first_seen (key);
    }
  return (double) (g_get_monotonic_time () - entry->lock_free_since_us) / G_USEC_PER_SEC >= PRIV (self)->min_age;
}

/* Whether a job lock's state here is its state for every host. Where it is
 * not, a free job lock says nothing about a holder on another host, so no
 * such holder can ever be judged dead: said once per resource. */
static gboolean
locks_cross_hosts (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  if (priv->locks_cross_hosts == 0)
    {
      g_autofree char *why = NULL;

      priv->locks_cross_hosts = _tessera_locks_cross_hosts (priv->lock_folder, &why) ? 1 : -1;
      if (priv->locks_cross_hosts < 0)
        g_warning (_("Locks on the file system of %s (%s) do not cross hosts: holders that may run on "
                     "another host are never judged dead, and ipc.lock cannot exclude other hosts. "
                     "Share a pool between hosts only on a mount whose locks do (NFS without "
                     "“nolock” or “local_lock”, Lustre with “flock”) or in the etcd store."),
                   priv->lock_folder, why);
    }
  return priv->locks_cross_hosts > 0;
}

/* Whether the holder of a valid lock file is gone (then @reason says why).
 * Only a sure verdict frees capacity: what cannot be judged counts.
 * Thread lock and ipc.lock held. */
static gboolean
holder_is_gone (TesseraTrackedDynamicResource *self, Entry *entry, gint64 now_ns, char **reason)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  const char *job_uri = tessera_dynamic_lock_file_get_job_uri (entry->lock_file);
  g_autofree char *lock_path = _tessera_path_with_suffix (job_uri, ".lock");

  if (entry->holder == NULL)
    entry->holder = holder_from_pid_file (job_uri);

  if (entry->holder != NULL)
    {
      /* The verdict comes from /proc (pid, start time, zombie state) when
       * the spec says its pid is ours, else from the job lock: an exit
       * event only brought the entry here. */
      TesseraProcessState state = tessera_process_check (entry->holder);
      GPid pid = tessera_process_get_pid (entry->holder);

      /* A live pid with no start time to compare (experimaestro's spec)
       * may be another process now: the job lock decides too. */
      if (state == TESSERA_PROCESS_ALIVE && tessera_process_get_start_time (entry->holder) == 0)
        state = TESSERA_PROCESS_REMOTE;
      if (state == TESSERA_PROCESS_REMOTE)
        {
          if (_tessera_job_lock_probe (lock_path) != TESSERA_JOB_LOCK_FREE)
            {
              /* Held (or not ours to probe): the holder runs. */
              entry->lock_seen_held = TRUE;
              forget_lock_free (self, entry);
              if (tessera_process_check (entry->holder) == TESSERA_PROCESS_ALIVE && !entry->watched)
                watch_entry (self, entry);   /* its exit brings it back here */
              return FALSE;
            }
          if (!lock_free_for_long (self, entry))
            return FALSE;   /* counts; looked at again on every refresh */
          if (!locks_cross_hosts (self) && !_tessera_process_on_this_host (entry->holder))
            return FALSE;   /* it may run on a host whose locks we cannot see */
          *reason = g_strdup_printf (_("its process %d cannot be judged from here and its job lock is free"),
                                     (int) pid);
          return TRUE;
        }
      if (state == TESSERA_PROCESS_DEAD)
        {
          *reason = g_strdup_printf (_("its process %d is gone"), (int) pid);
          return TRUE;
        }
      if (state == TESSERA_PROCESS_UNKNOWN)
        {
          g_debug ("Holder of %s counts: %s", entry->name, _tessera_process_get_problem (entry->holder));
          if (tessera_dynamic_lock_file_get_process (entry->lock_file) == NULL)
            g_clear_object (&entry->holder);   /* its .pid is read again */
          else
            g_hash_table_remove (priv->attention, entry->name);
          return FALSE;
        }
      if (!entry->watched)
        watch_entry (self, entry);
      /* Watched holders need no more attention. */
      if (entry->watched)
        g_hash_table_remove (priv->attention, entry->name);
      return FALSE;
    }
  else
    {
      g_autofree char *job_dir = g_path_get_dirname (job_uri);

      (void) now_ns;
      /* A process holding the job lock (either kind) is the holder, still
       * starting. */
      if (_tessera_job_lock_probe (lock_path) != TESSERA_JOB_LOCK_FREE)
        return FALSE;
      if (!seen_for_min_age (self, entry))
        return FALSE;
      *reason = g_strdup (g_file_test (job_dir, G_FILE_TEST_IS_DIR)
                          ? _("it has no process and nobody holds its job lock")
                          : _("its job directory is gone"));
      return TRUE;
    }
}

/* Decides whether a lock file still holds. Thread lock and ipc.lock held.
 * Returns FALSE when the entry is gone. */
static gboolean
examine_entry (TesseraTrackedDynamicResource *self, Entry *entry, gint64 now_ns)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autofree char *reason = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;

  if (entry->lock_file == NULL)
    {
      /* Seen under ipc.lock, which every writer holds, a file that is not
       * JSON at all was left by a writer in place (a Python peer) that
       * died: it never counted, and once old enough it goes rather than be
       * warned about by every process for ever. */
      if (!entry->truncated || !seen_for_min_age (self, entry))
        return TRUE;
      reason = g_strdup (_("it is not JSON (its writer died while writing it)"));
    }
  else if (!tessera_dynamic_lock_file_is_valid (entry->lock_file) || !holder_is_gone (self, entry, now_ns, &reason))
    return TRUE;

  /* A read-only view shows the dead holder as dead and leaves it be. */
  if (priv->read_only)
    return TRUE;
  path = _tessera_lock_folder_dup_job_path (priv->folder, entry->name);
  /* Only the very file we judged, never through a link. */
  if (_tessera_lock_folder_remove_job (priv->folder, entry->name, entry->ino, &error))
    {
      g_info (_("Removing lock file %s of %s: %s"), path, resource_name (self), reason);
      if (error != NULL)
        g_warning ("%s", error->message);
      if (entry->first_seen_us != 0)
        {
          g_autofree char *key = seen_key (self, entry);
          _tessera_forget_seen (key);
        }
      forget_lock_free (self, entry);
    }
  remove_entry (self, entry->name);
  return FALSE;
}

/* ---------------------------------------------------------------------- */
/* Folder and file times */

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
note_jobs_mtime (TesseraTrackedDynamicResource *self, gint64 mtime_ns, gint64 now_mono, gboolean scanned)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  if (mtime_ns != priv->jobs_mtime_ns || !priv->jobs_known)
    {
      priv->jobs_mtime_ns = mtime_ns;
      priv->jobs_seen_mono = now_mono;
      priv->jobs_mtime_clean = FALSE;
    }
  else if (scanned && now_mono - priv->jobs_seen_mono >= _tessera_lock_folder_mtime_tick_us (mtime_ns))
    priv->jobs_mtime_clean = TRUE;
}

/* ---------------------------------------------------------------------- */
/* informations.json */

static gboolean
apply_informations (gpointer owner, JsonNode *informations, GError **error)
{
  return KLASS (owner)->handle_information_change (owner, informations, error);
}

/* Applies informations.json when it changed. Thread lock held. */
static gboolean
check_informations_locked (TesseraTrackedDynamicResource *self)
{
  return _tessera_resource_informations_check (PRIV (self)->informations, resource_name (self),
                                               apply_informations, self);
}

/* ---------------------------------------------------------------------- */
/* inotify */

static gboolean
drain_inotify_locked (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  gboolean relevant = FALSE;
  char buf[16384] __attribute__ ((aligned (__alignof__ (struct inotify_event))));

  if (priv->inotify_fd < 0)
    return FALSE;
  for (;;)
    {
      ssize_t n = read (priv->inotify_fd, buf, sizeof buf);
      char *p;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      for (p = buf; p < buf + n;)
        {
          struct inotify_event *ev = (struct inotify_event *) p;
          p += sizeof (struct inotify_event) + ev->len;

          if (ev->mask & IN_Q_OVERFLOW)
            {
              priv->force_scan = TRUE;
              relevant = TRUE;
            }
          else if (ev->wd == priv->jobs_wd)
            {
              if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
                {
                  priv->jobs_wd = -1;
                  priv->force_scan = TRUE;
                  relevant = TRUE;
                }
              else if (ev->len > 0 && g_str_has_suffix (ev->name, ".json"))
                {
                  g_hash_table_add (priv->dirty, g_strdup (ev->name));
                  relevant = TRUE;
                }
            }
          else if (ev->len > 0 && strcmp (ev->name, "informations.json") == 0)
            relevant |= check_informations_locked (self);
          else if (ev->len > 0 && strcmp (ev->name, "jobs") == 0)
            {
              priv->force_scan = TRUE;
              relevant = TRUE;
            }
        }
    }
  return relevant;
}

static gboolean
on_inotify_ready (gint fd, GIOCondition condition, gpointer data)
{
  g_autoptr(TesseraTrackedDynamicResource) self = watch_box_resource (data);
  gboolean relevant;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  lock_thread (self);
  relevant = drain_inotify_locked (self);
  unlock_thread (self);
  if (relevant)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return G_SOURCE_CONTINUE;
}

static void
add_jobs_watch (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  if (priv->inotify_fd < 0 || priv->jobs_wd >= 0)
    return;
  priv->jobs_wd = inotify_add_watch (priv->inotify_fd, _tessera_lock_folder_get_jobs_path (priv->folder),
                                     IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                                     IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF |
                                     IN_ONLYDIR | IN_DONT_FOLLOW);
}

static void
setup_inotify (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  /* inotify sees only what this kernel does: on any file system not known
   * to be local, another host's change would go unseen, so jobs/ is read
   * under ipc.lock before every decision and the poller is the primary
   * path to wake waiters, with a short interval. */
  priv->shared_fs = !_tessera_lock_folder_is_local (priv->folder);
  if (_tessera_inotify_disabled () || priv->shared_fs)
    {
      /* Never below a first interval set on purpose (TESSERA_POLL_INTERVAL). */
      _tessera_dynamic_resource_set_poll_interval_max (TESSERA_DYNAMIC_RESOURCE (self),
        MAX (MIN (TESSERA_POLL_INTERVAL_MAX_UNWATCHED, _tessera_poll_interval_max ()),
             _tessera_poll_interval_initial ()));
      return;
    }
  priv->inotify_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (priv->inotify_fd < 0)
    return;
  if (inotify_add_watch (priv->inotify_fd, priv->lock_folder,
                         IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE |
                         IN_ONLYDIR | IN_DONT_FOLLOW) < 0)
    {
      close (priv->inotify_fd);
      priv->inotify_fd = -1;
      return;
    }
  add_jobs_watch (self);
  priv->inotify_source = g_unix_fd_source_new (priv->inotify_fd, G_IO_IN);
  g_source_set_name (priv->inotify_source, "tessera-inotify");
  g_source_set_callback (priv->inotify_source, (GSourceFunc) (void (*)(void)) on_inotify_ready,
                         watch_box_ref (priv->box), watch_box_unref);
  g_source_attach (priv->inotify_source, poller_context (self));
}

/* ---------------------------------------------------------------------- */
/* Refreshing the cache */

/* Whether names in jobs/ are known from inotify rather than from the
 * folder's modification time. */
static gboolean
watching_jobs (TesseraTrackedDynamicResource *self)
{
  return PRIV (self)->inotify_fd >= 0 && PRIV (self)->jobs_wd >= 0;
}


static void
stat_and_load (TesseraTrackedDynamicResource *self, const char *name)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  Entry *entry = g_hash_table_lookup (priv->cache, name);
  struct stat st;

  if (!_tessera_lock_folder_stat_job (priv->folder, name, &st))
    {
      remove_entry (self, name);
      return;
    }
  if (entry != NULL && entry_same_stat (entry, &st))
    return;
  load_entry (self, name, &st);
}

static void
scan_jobs_folder (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autoptr(GHashTable) seen = _tessera_lock_folder_list_jobs (priv->folder, priv->min_age, priv->read_only);
  g_autoptr(GPtrArray) gone = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, priv->cache);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (!g_hash_table_contains (seen, key))
      g_ptr_array_add (gone, g_strdup (key));
  for (guint i = 0; i < gone->len; i++)
    remove_entry (self, g_ptr_array_index (gone, i));
  g_hash_table_iter_init (&iter, seen);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    stat_and_load (self, key);
}

/* The seed's `_update`, done incrementally. Thread lock and ipc.lock held. */
static void
refresh_locked (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  g_autoptr(GPtrArray) names = NULL;
  GHashTableIter iter;
  gpointer key;
  struct stat st;
  gboolean scan;
  guint64 serial_before = priv->view_serial;
  gint64 now_mono;

  /* The drain itself may ask for a full scan (overflow, jobs/ replaced):
   * read the flag only after it. */
  drain_inotify_locked (self);
  scan = priv->force_scan;
  if (check_informations_locked (self))
    priv->view_serial++;

  now_mono = g_get_monotonic_time ();
  if (!_tessera_lock_folder_stat_jobs (priv->folder, &st))
    {
      if (priv->read_only)
        return;   /* nothing to make, nothing to read: an empty pool */
      _tessera_lock_folder_make_jobs (priv->folder);
      if (!_tessera_lock_folder_stat_jobs (priv->folder, &st))
        st.st_mode = 0;   /* not a folder: see below */
      scan = TRUE;
    }
  /* A co-user may replace jobs/ by a link to a folder of ours: read,
   * write and delete nothing through it (acquire then fails, saying so). */
  if (!S_ISDIR (st.st_mode))
    {
      if (!priv->jobs_hostile)
        g_warning (_("%s is not a folder (a symbolic link?): nothing is read, written or deleted through it; remove it"),
                   _tessera_lock_folder_get_jobs_path (priv->folder));
      priv->jobs_hostile = TRUE;
      return;
    }
  priv->jobs_hostile = FALSE;
  add_jobs_watch (self);
  if (priv->shared_fs)
    scan = TRUE;
  else if (!watching_jobs (self))
    /* Without inotify, the folder's mtime says whether any name changed,
     * unless it may hide a change made in the same clock tick. */
    scan |= !priv->jobs_known || st.st_ino != priv->jobs_ino ||
            _tessera_stat_mtime_ns (&st) != priv->jobs_mtime_ns || !priv->jobs_mtime_clean;
  else
    scan |= !priv->jobs_known;

  if (scan)
    {
      g_hash_table_remove_all (priv->dirty);
      scan_jobs_folder (self);
      priv->force_scan = FALSE;
      if (priv->jobs_ino != st.st_ino)
        priv->jobs_known = FALSE;
      note_jobs_mtime (self, _tessera_stat_mtime_ns (&st), now_mono, TRUE);
      priv->jobs_known = TRUE;
      priv->jobs_ino = st.st_ino;
    }
  else if (g_hash_table_size (priv->dirty) > 0)
    {
      g_autoptr(GHashTable) dirty = priv->dirty;

      priv->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_hash_table_iter_init (&iter, dirty);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        stat_and_load (self, key);
    }

  /* Holders that died, have no process yet or could not be watched. */
  if (g_hash_table_size (priv->attention) > 0)
    {
      gint64 now_ns = g_get_real_time () * 1000;

      names = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_iter_init (&iter, priv->attention);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        g_ptr_array_add (names, g_strdup (key));
      for (guint i = 0; i < names->len; i++)
        {
          const char *name = g_ptr_array_index (names, i);
          Entry *entry = g_hash_table_lookup (priv->cache, name);
          if (entry != NULL && entry->lock_file == NULL)
            {
              /* Read again if it changed (a peer may have finished it). */
              stat_and_load (self, name);
              entry = g_hash_table_lookup (priv->cache, name);
            }
          if (entry == NULL)
            g_hash_table_remove (priv->attention, name);
          else
            examine_entry (self, entry, now_ns);
        }
    }
  /* What this refresh found (a holder gone, a peer's release whose events
   * it consumed) other threads of this process have not seen. */
  if (priv->view_serial != serial_before)
    priv->refresh_changed = TRUE;
}

/* After our own change to jobs/, the folder's new mtime is explained.
 * Only the mtime path needs it: with inotify, no stat on the hot path. */
static void
note_own_change (TesseraTrackedDynamicResource *self, gint64 mtime_before)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  struct stat st;

  gint64 now_mono = g_get_monotonic_time ();

  if (!watching_jobs (self) && priv->jobs_known && mtime_before == priv->jobs_mtime_ns &&
      _tessera_lock_folder_stat_jobs (priv->folder, &st))
    note_jobs_mtime (self, _tessera_stat_mtime_ns (&st), now_mono, FALSE);
}

static gint64
jobs_mtime_now (TesseraTrackedDynamicResource *self)
{
  struct stat st;

  if (watching_jobs (self))
    return -1;
  return _tessera_lock_folder_stat_jobs (PRIV (self)->folder, &st) ? _tessera_stat_mtime_ns (&st) : -1;
}

/* ---------------------------------------------------------------------- */
/* GObject */

static void
tessera_tracked_dynamic_resource_dispose (GObject *object)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_mutex_lock (&priv->lock);
  if (priv->inotify_source != NULL)
    {
      g_source_destroy (priv->inotify_source);
      g_clear_pointer (&priv->inotify_source, g_source_unref);
    }
  g_hash_table_remove_all (priv->pid_watches);
  g_mutex_unlock (&priv->lock);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->dispose (object);
}

static void
tessera_tracked_dynamic_resource_finalize (GObject *object)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_hash_table_unref (priv->pid_watches);
  g_hash_table_unref (priv->cache);
  g_clear_pointer (&priv->informations, _tessera_resource_informations_free);
  g_hash_table_unref (priv->attention);
  g_hash_table_unref (priv->dirty);
  if (priv->inotify_fd >= 0)
    close (priv->inotify_fd);
  watch_box_unref (priv->box);
  g_free (priv->lock_folder);
  _tessera_lock_folder_free (priv->folder);
  g_mutex_clear (&priv->lock);
  G_OBJECT_CLASS (tessera_tracked_dynamic_resource_parent_class)->finalize (object);
}

static void
tessera_tracked_dynamic_resource_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (TESSERA_TRACKED_DYNAMIC_RESOURCE (object));

  switch (prop_id)
    {
    case PROP_LOCK_FOLDER:
    case PROP_PATH: g_value_set_string (value, priv->lock_folder); break;
    case PROP_LOCK_FILE_TYPE: g_value_set_gtype (value, priv->lock_file_type); break;
    case PROP_MIN_AGE: g_value_set_double (value, priv->min_age); break;
    case PROP_READ_ONLY: g_value_set_boolean (value, priv->read_only); break;
    case PROP_PATIENCE: g_value_set_double (value, priv->patience); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_tracked_dynamic_resource_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (object);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_LOCK_FOLDER:
    case PROP_PATH:
      /* Two names, one folder: the one not given arrives as NULL. */
      if (g_value_get_string (value) != NULL)
        {
          g_free (priv->lock_folder);
          priv->lock_folder = g_value_dup_string (value);
        }
      break;
    case PROP_LOCK_FILE_TYPE: priv->lock_file_type = g_value_get_gtype (value); break;
    case PROP_MIN_AGE: tessera_tracked_dynamic_resource_set_min_age (self, g_value_get_double (value)); break;
    case PROP_READ_ONLY: priv->read_only = g_value_get_boolean (value); break;
    case PROP_PATIENCE:
      /* Read by acquires in any thread. */
      lock_thread (self);
      priv->patience = g_value_get_double (value);
      unlock_thread (self);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tessera_tracked_dynamic_resource_refresh_state (TesseraDynamicResource *resource)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);

  /* Runs in the poller's thread, which never takes ipc.lock: mark the cache
   * for a full re-read and let the waiters do it under ipc.lock. */
  lock_thread (self);
  PRIV (self)->force_scan = TRUE;
  unlock_thread (self);
  tessera_dynamic_resource_notify_changed (resource);
}

static void
real_noop_lock_file (TesseraTrackedDynamicResource *self, TesseraDynamicLockFile *lock_file)
{
}

static void
real_noop_dependency (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency)
{
}

static JsonNode *
real_get_lock_file_information (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency)
{
  return NULL;
}

static gboolean
real_handle_information_change (TesseraTrackedDynamicResource *self, JsonNode *informations, GError **error)
{
  return TRUE;
}

static JsonNode *
real_initialize_informations (TesseraTrackedDynamicResource *self)
{
  return NULL;
}

static void
real_reset_state (TesseraTrackedDynamicResource *self)
{
}

static void
real_get_usage (TesseraTrackedDynamicResource *self, gint64 *capacity, gint64 *free_units)
{
  *capacity = *free_units = -1;
}

static gboolean
real_is_available (TesseraTrackedDynamicResource *self, TesseraDynamicDependency *dependency, GError **error)
{
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED,
               _("%s does not implement is_available"), G_OBJECT_TYPE_NAME (self));
  return FALSE;
}

static void
tessera_tracked_dynamic_resource_class_init (TesseraTrackedDynamicResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tessera_tracked_dynamic_resource_dispose;
  object_class->finalize = tessera_tracked_dynamic_resource_finalize;
  object_class->get_property = tessera_tracked_dynamic_resource_get_property;
  object_class->set_property = tessera_tracked_dynamic_resource_set_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->refresh_state = tessera_tracked_dynamic_resource_refresh_state;

  klass->reset_state = real_reset_state;
  klass->account_lock_file = real_noop_lock_file;
  klass->unaccount_lock_file = real_noop_lock_file;
  klass->is_available = real_is_available;
  klass->do_acquire = real_noop_dependency;
  klass->do_release = real_noop_dependency;
  klass->get_lock_file_information = real_get_lock_file_information;
  klass->handle_information_change = real_handle_information_change;
  klass->initialize_informations = real_initialize_informations;
  klass->get_usage = real_get_usage;

  /**
   * TesseraTrackedDynamicResource:lock-folder:
   *
   * The folder holding informations.json, ipc.lock and jobs/. Created if
   * missing.
   */
  props[PROP_LOCK_FOLDER] = g_param_spec_string ("lock-folder", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:path:
   *
   * The lock folder under the name the key file, the command and the docs
   * use: the same as [property@Tessera.TrackedDynamicResource:lock-folder],
   * which is its older name.
   */
  props[PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:lock-file-type:
   *
   * The [class@Tessera.DynamicLockFile] subtype that reads this resource's
   * lock files, when it is not the class's own `lock_file_type`. Only
   * read when the resource is initialized. (Not a construct property:
   * its default must not hide the class's choice.)
   */
  props[PROP_LOCK_FILE_TYPE] = g_param_spec_gtype ("lock-file-type", NULL, NULL,
    TESSERA_TYPE_DYNAMIC_LOCK_FILE,
    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:min-age:
   *
   * Seconds a lock file without a process is given before it may be
   * removed as an orphan, counted from when this host first saw it as it
   * is (on the monotonic clock, shared by the host's processes through
   * `/var/tmp/tessera-UID/`), never from its modification time.
   */
  props[PROP_MIN_AGE] = g_param_spec_double ("min-age", NULL, NULL, 0, G_MAXDOUBLE, 30.0,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:read-only:
   *
   * Only look at the folder: create, change and remove nothing (no folder
   * or file made, no dead holder removed: such holders still count), take
   * ipc.lock shared when it can be opened and read without it otherwise
   * (a read-only mount, a pool of another group). What `tessera status`
   * uses. Acquiring, releasing and writing informations.json fail.
   */
  props[PROP_READ_ONLY] = g_param_spec_boolean ("read-only", NULL, NULL, FALSE,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraTrackedDynamicResource:patience:
   *
   * Seconds a waiter takes only what is free. Past them, it reserves what
   * it needs (an entry in the folder's `queue/`): later requests take only
   * what is left, so a large request among a stream of small ones is
   * served about this long after it began to wait. A shorter wait never
   * keeps capacity idle. The default, 60, can be
   * changed with `TESSERA_PATIENCE`; experimaestro peers ignore
   * reservations. Read when a waiter first fails to acquire.
   */
  props[PROP_PATIENCE] = g_param_spec_double ("patience", NULL, NULL, 0, G_MAXDOUBLE, 60.0,
    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_tracked_dynamic_resource_init (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);

  g_mutex_init (&priv->lock);
  priv->cache = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) entry_free);
  priv->attention = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  priv->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  priv->pid_watches = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) pid_watch_free);
  priv->lock_file_type = G_TYPE_INVALID;
  priv->min_age = 30.0;
  priv->patience = _tessera_patience_default ();
  priv->inotify_fd = -1;
  priv->jobs_wd = -1;
  priv->box = watch_box_new (self);
}

static gboolean
tessera_tracked_dynamic_resource_initable_init_impl (GInitable     *initable,
                                                     GCancellable  *cancellable,
                                                     GError       **error)
{
  TesseraTrackedDynamicResource *self = TESSERA_TRACKED_DYNAMIC_RESOURCE (initable);
  TesseraTrackedDynamicResourcePrivate *priv = PRIV (self);
  int fd;

  if (priv->lock_folder == NULL || *priv->lock_folder == '\0')
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A tracked resource needs a lock folder"));
      return FALSE;
    }
  if (!g_path_is_absolute (priv->lock_folder))
    {
      char *abs = g_canonicalize_filename (priv->lock_folder, NULL);
      g_free (priv->lock_folder);
      priv->lock_folder = abs;
    }
  if (priv->lock_file_type == G_TYPE_INVALID)
    priv->lock_file_type = KLASS (self)->lock_file_type;
  if (priv->lock_file_type == G_TYPE_INVALID)
    priv->lock_file_type = TESSERA_TYPE_DYNAMIC_LOCK_FILE;
  if (!g_type_is_a (priv->lock_file_type, TESSERA_TYPE_DYNAMIC_LOCK_FILE) ||
      G_TYPE_IS_ABSTRACT (priv->lock_file_type))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("%s is not a concrete lock file type"), g_type_name (priv->lock_file_type));
      return FALSE;
    }
  priv->folder = _tessera_lock_folder_new (priv->lock_folder);
  priv->informations = _tessera_resource_informations_new (priv->folder);
  /* A read-only view of a pool nobody set up yet is an empty pool. */
  if (!priv->read_only && !_tessera_lock_folder_create (priv->folder, error))
    return FALSE;

  setup_inotify (self);

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  if (!_tessera_lock_folder_has_informations (priv->folder))
    {
      g_autoptr(JsonNode) initial = KLASS (self)->initialize_informations (self);
      /* Only looking: what the first writer would set up, kept in memory. */
      if (initial != NULL && priv->read_only)
        KLASS (self)->handle_information_change (self, initial, NULL);
      else if (initial != NULL && !_tessera_resource_informations_write (priv->informations, initial, error))
        {
          unlock_both (self, fd);
          return FALSE;
        }
    }
  KLASS (self)->reset_state (self);
  priv->force_scan = TRUE;
  refresh_locked (self);
  unlock_both (self, fd);
  return TRUE;
}

static void
tessera_tracked_dynamic_resource_initable_init (GInitableIface *iface)
{
  iface->init = tessera_tracked_dynamic_resource_initable_init_impl;
}

/* ---------------------------------------------------------------------- */
/* Public API */

/**
 * tessera_tracked_dynamic_resource_get_lock_folder:
 * @self: a tracked resource
 *
 * Gets the absolute path of the lock folder.
 *
 * Returns: the absolute path of the lock folder
 */
const char *
tessera_tracked_dynamic_resource_get_lock_folder (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return PRIV (self)->lock_folder;
}

/**
 * tessera_tracked_dynamic_resource_dup_jobs_folder:
 * @self: a tracked resource
 *
 * Gets the path of `jobs/` in the lock folder.
 *
 * Returns: (transfer full): the path of `jobs/` in the lock folder
 */
char *
tessera_tracked_dynamic_resource_dup_jobs_folder (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return g_build_filename (PRIV (self)->lock_folder, "jobs", NULL);
}

/**
 * tessera_tracked_dynamic_resource_dup_ipc_lock_path:
 * @self: a tracked resource
 *
 * Gets the path of `ipc.lock` in the lock folder.
 *
 * Returns: (transfer full): the path of `ipc.lock` in the lock folder
 */
char *
tessera_tracked_dynamic_resource_dup_ipc_lock_path (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return g_build_filename (PRIV (self)->lock_folder, "ipc.lock", NULL);
}

/**
 * tessera_tracked_dynamic_resource_dup_informations_path:
 * @self: a tracked resource
 *
 * Gets the path of `informations.json`.
 *
 * Returns: (transfer full): the path of `informations.json`
 */
char *
tessera_tracked_dynamic_resource_dup_informations_path (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return g_build_filename (PRIV (self)->lock_folder, "informations.json", NULL);
}

static char *
lock_file_name_for (TesseraDynamicDependency *dependency, GError **error)
{
  TesseraJob *job = tessera_dynamic_dependency_get_target (dependency);

  if (job == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED,
                   _("The dependency has no target job"));
      return NULL;
    }
  if (!tessera_check_name (tessera_job_get_task_id (job), error) ||
      !tessera_check_name (tessera_job_get_identifier (job), error))
    return NULL;
  return tessera_job_dup_lock_file_name (job);
}

/**
 * tessera_tracked_dynamic_resource_dup_lock_file_path:
 * @self: a tracked resource
 * @dependency: a dependency on @self
 *
 * Gets `jobs/{task_id}@{identifier}.json` for the dependency's
 * job, or %NULL when its names are not acceptable.
 *
 * Returns: (transfer full) (nullable): `jobs/{task_id}@{identifier}.json`
 *   for the dependency's job, or %NULL when its names are not acceptable
 */
char *
tessera_tracked_dynamic_resource_dup_lock_file_path (TesseraTrackedDynamicResource *self,
                                                     TesseraDynamicDependency      *dependency)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  name = lock_file_name_for (dependency, NULL);
  return name && PRIV (self)->folder ? _tessera_lock_folder_dup_job_path (PRIV (self)->folder, name) : NULL;
}

/**
 * tessera_tracked_dynamic_resource_get_min_age:
 * @self: a tracked resource
 *
 * Gets the value of [property@Tessera.TrackedDynamicResource:min-age].
 *
 * Returns: the value of [property@Tessera.TrackedDynamicResource:min-age]
 */
double
tessera_tracked_dynamic_resource_get_min_age (TesseraTrackedDynamicResource *self)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), 0);
  return PRIV (self)->min_age;
}

/**
 * tessera_tracked_dynamic_resource_set_min_age:
 * @self: a tracked resource
 * @min_age: seconds
 *
 * Sets [property@Tessera.TrackedDynamicResource:min-age].
 */
void
tessera_tracked_dynamic_resource_set_min_age (TesseraTrackedDynamicResource *self,
                                              double                         min_age)
{
  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  g_return_if_fail (min_age >= 0);

  if (PRIV (self)->min_age != min_age)
    {
      PRIV (self)->min_age = min_age;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_MIN_AGE]);
    }
}

/**
 * tessera_tracked_dynamic_resource_update:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Brings the cache up to date now, under ipc.lock, removing the lock files
 * of dead holders and old orphans on the way.
 *
 * Returns: %FALSE with @error set when ipc.lock cannot be taken
 */
gboolean
tessera_tracked_dynamic_resource_update (TesseraTrackedDynamicResource  *self,
                                         GError                        **error)
{
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  PRIV (self)->force_scan = TRUE;
  refresh_locked (self);
  unlock_both (self, fd);
  return TRUE;
}

/**
 * tessera_tracked_dynamic_resource_acquire:
 * @self: a tracked resource
 * @dependency: the dependency to grant
 * @error: return location for a #GError
 *
 * The seed's `acquire`: under the thread lock and ipc.lock, refreshes the
 * state, checks availability, takes the job lock, writes the lock file and
 * calls `do_acquire`. Does not wait: see
 * [method@Tessera.DynamicDependency.lock] for that.
 *
 * Returns: %TRUE when granted; %FALSE with %TESSERA_ERROR_UNAVAILABLE when
 *   the resource is full, or another error
 */
gboolean
tessera_tracked_dynamic_resource_acquire (TesseraTrackedDynamicResource  *self,
                                          TesseraDynamicDependency       *dependency,
                                          GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  g_autoptr(JsonNode) information = NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(TesseraWaitQueueView) queue = NULL;
  TesseraDynamicLockFile *lock_file;
  TesseraJob *job;
  Entry *entry;
  struct stat st;
  gint64 mtime_before;
  gboolean available;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (TESSERA_IS_DYNAMIC_DEPENDENCY (dependency), FALSE);
  priv = PRIV (self);
  if (priv->read_only)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), resource_name (self));
      return FALSE;
    }

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  job = tessera_dynamic_dependency_get_target (dependency);
  path = _tessera_lock_folder_dup_job_path (priv->folder, name);

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  _tessera_pause_point ("acquire-locked");
  refresh_locked (self);
  if (priv->jobs_hostile)
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("%s is not a folder (a symbolic link?): refusing to use it; remove it"),
                   _tessera_lock_folder_get_jobs_path (priv->folder));
      return FALSE;
    }
  queue = _tessera_wait_queue_read (priv->lock_folder, priv->lock_file_type, priv->min_age,
                                    priv->patience, dependency, name);

  entry = g_hash_table_lookup (priv->cache, name);
  if (entry != NULL && entry->lock_file != NULL && tessera_dynamic_lock_file_is_valid (entry->lock_file))
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_ALREADY_HELD,
                   _("Job %s already holds %s"), name, resource_name (self));
      return FALSE;
    }
  /* Waiters before us whose patience is over count as holders here. */
  _tessera_wait_queue_account (self, queue, TRUE);
  available = priv->whole_holders == 0 && KLASS (self)->is_available (self, dependency, &local);
  _tessera_wait_queue_account (self, queue, FALSE);
  if (!available)
    {
      _tessera_wait_queue_after_attempt (self, queue, dependency, FALSE, local == NULL);
      unlock_both (self, fd);
      if (local != NULL)
        g_propagate_error (error, g_steal_pointer (&local));
      else
        g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE,
                     _("Resource %s is not available"), resource_name (self));
      return FALSE;
    }
  if (!tessera_job_hold (job, error))
    {
      unlock_both (self, fd);
      return FALSE;
    }

  mtime_before = jobs_mtime_now (self);
  if (entry != NULL)
    {
      /* Our name is taken by something that does not count (garbage, a
       * symlink): replace it. rename() never follows a symlink. */
      g_info (_("Replacing unusable lock file %s"), path);
      remove_entry (self, name);
    }
  information = KLASS (self)->get_lock_file_information (self, dependency);
  lock_file = tessera_dynamic_lock_file_create (priv->lock_file_type, path,
                                                tessera_job_get_job_uri (job), information,
                                                tessera_job_get_process (job), error);
  if (lock_file == NULL || g_lstat (path, &st) < 0)
    {
      g_clear_object (&lock_file);
      unlock_both (self, fd);
      return FALSE;
    }
  note_own_change (self, mtime_before);

  entry = g_new0 (Entry, 1);
  entry->name = g_strdup (name);
  entry->lock_file = lock_file;
  entry_set_stat (entry, &st);
  g_hash_table_replace (priv->cache, entry->name, entry);
  account (self, entry);
  if (tessera_job_get_process (job) != NULL)
    {
      entry->holder = g_object_ref (tessera_job_get_process (job));
      watch_entry (self, entry);
    }
  KLASS (self)->do_acquire (self, dependency);
  _tessera_wait_queue_after_attempt (self, queue, dependency, TRUE, FALSE);
  g_debug ("Acquired %s for %s", resource_name (self), name);
  unlock_both (self, fd);
  return TRUE;
}

/**
 * tessera_tracked_dynamic_resource_release:
 * @self: a tracked resource
 * @dependency: a dependency granted by
 *   [method@Tessera.TrackedDynamicResource.acquire]
 *
 * The seed's `release`: calls `do_release`, deletes the lock file and wakes
 * waiters. A lock file that is already gone (the job process deleted it,
 * or a peer judged the holder dead) is not an error.
 */
void
tessera_tracked_dynamic_resource_release (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
  Entry *entry;
  gint64 mtime_before;
  int fd;

  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  priv = PRIV (self);

  name = lock_file_name_for (dependency, NULL);
  if (name == NULL)
    return;
  fd = lock_both (self, &error);
  if (fd < 0)
    {
      g_warning (_("Cannot release %s: %s"), resource_name (self), error->message);
      return;
    }
  refresh_locked (self);
  entry = g_hash_table_lookup (priv->cache, name);
  if (entry == NULL || entry->lock_file == NULL)
    {
      g_debug ("Lock file %s of %s already released", name, resource_name (self));
      unlock_both (self, fd);
      return;
    }
  lock_file = g_object_ref (entry->lock_file);
  mtime_before = jobs_mtime_now (self);
  remove_entry (self, name);
  KLASS (self)->do_release (self, dependency);
  /* jobs/ swapped for a link since we acquired: our file is not there. */
  if (!priv->jobs_hostile && !tessera_dynamic_lock_file_delete (lock_file, &error))
    g_warning ("%s", error->message);
  note_own_change (self, mtime_before);
  unlock_both (self, fd);
  tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
}

/**
 * tessera_tracked_dynamic_resource_record_process:
 * @self: a tracked resource
 * @dependency: a dependency granted by
 *   [method@Tessera.TrackedDynamicResource.acquire]
 * @process: the process that runs the job
 * @error: return location for a #GError
 *
 * Writes @process into the dependency's lock file (and `<job_uri>.pid`),
 * so that any peer reclaims the holding as soon as @process ends. This is
 * what the default `job_started` of [class@Tessera.DynamicDependencyLock]
 * does.
 *
 * Returns: %FALSE with @error set when the lock file is gone or cannot be
 *   written
 */
gboolean
tessera_tracked_dynamic_resource_record_process (TesseraTrackedDynamicResource  *self,
                                                 TesseraDynamicDependency       *dependency,
                                                 TesseraProcess                 *process,
                                                 GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  g_autofree char *name = NULL;
  Entry *entry;
  struct stat st;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (TESSERA_IS_PROCESS (process), FALSE);
  priv = PRIV (self);
  if (priv->read_only)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), resource_name (self));
      return FALSE;
    }

  name = lock_file_name_for (dependency, error);
  if (name == NULL)
    return FALSE;
  if (!tessera_job_set_process (tessera_dynamic_dependency_get_target (dependency), process, error))
    return FALSE;
  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  refresh_locked (self);
  entry = g_hash_table_lookup (priv->cache, name);
  if (entry == NULL || entry->lock_file == NULL || priv->jobs_hostile)
    {
      unlock_both (self, fd);
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING,
                   _("Lock file %s of %s is missing"), name, resource_name (self));
      return FALSE;
    }
  unwatch_entry (self, entry);
  tessera_dynamic_lock_file_set_process (entry->lock_file, process);
  if (!tessera_dynamic_lock_file_save (entry->lock_file, error))
    {
      unlock_both (self, fd);
      return FALSE;
    }
  if (g_lstat (tessera_dynamic_lock_file_get_path (entry->lock_file), &st) == 0)
    entry_set_stat (entry, &st);
  g_set_object (&entry->holder, process);
  g_hash_table_add (priv->attention, g_strdup (name));
  examine_entry (self, entry, g_get_real_time () * 1000);
  unlock_both (self, fd);
  return TRUE;
}

/**
 * tessera_tracked_dynamic_resource_get_usage:
 * @self: a tracked resource
 * @capacity: (out): units in all, or -1 when not known
 * @free_units: (out): units free now, or -1 when not known
 *
 * The state as last seen, in the type's own unit. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 */
void
tessera_tracked_dynamic_resource_get_usage (TesseraTrackedDynamicResource *self,
                                            gint64                        *capacity,
                                            gint64                        *free_units)
{
  gint64 c = -1, f = -1;

  g_return_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self));
  lock_thread (self);
  KLASS (self)->get_usage (self, &c, &f);
  if (PRIV (self)->whole_holders > 0 && f > 0)
    f = 0;   /* a holder whose amount cannot be read holds everything */
  unlock_thread (self);
  if (capacity != NULL)
    *capacity = c;
  if (free_units != NULL)
    *free_units = f;
}

/**
 * tessera_tracked_dynamic_resource_list_lock_files:
 * @self: a tracked resource
 *
 * The valid lock files as last seen. Call
 * [method@Tessera.TrackedDynamicResource.update] first for a fresh view.
 *
 * Returns: (transfer container) (element-type TesseraDynamicLockFile): the
 *   lock files that count against the capacity
 */
GPtrArray *
tessera_tracked_dynamic_resource_list_lock_files (TesseraTrackedDynamicResource *self)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  GPtrArray *result = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), result);
  priv = PRIV (self);
  g_mutex_lock (&priv->lock);
  g_hash_table_iter_init (&iter, priv->cache);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Entry *entry = value;
      if (entry->accounted)
        g_ptr_array_add (result, g_object_ref (entry->lock_file));
    }
  g_mutex_unlock (&priv->lock);
  return result;
}

/**
 * tessera_tracked_dynamic_resource_read_informations:
 * @self: a tracked resource
 * @error: return location for a #GError
 *
 * Gets the parsed content of informations.json, or %NULL
 * with %TESSERA_ERROR_INVALID_INFORMATION.
 *
 * Returns: (transfer full): the parsed content of informations.json, or
 *   %NULL with %TESSERA_ERROR_INVALID_INFORMATION
 */
JsonNode *
tessera_tracked_dynamic_resource_read_informations (TesseraTrackedDynamicResource  *self,
                                                    GError                        **error)
{
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  return _tessera_resource_informations_read (PRIV (self)->informations, NULL, error);
}

/**
 * tessera_tracked_dynamic_resource_write_informations:
 * @self: a tracked resource
 * @informations: the new resource-level data
 * @error: return location for a #GError
 *
 * Replaces informations.json atomically under ipc.lock, after checking
 * that this resource's class accepts it. Every process using the folder
 * applies it; waiters here are woken at once.
 *
 * Returns: %TRUE on success
 */
gboolean
tessera_tracked_dynamic_resource_write_informations (TesseraTrackedDynamicResource  *self,
                                                     JsonNode                       *informations,
                                                     GError                        **error)
{
  TesseraTrackedDynamicResourcePrivate *priv;
  gboolean ok;
  int fd;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), FALSE);
  g_return_val_if_fail (informations != NULL, FALSE);
  priv = PRIV (self);
  if (priv->read_only)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED, _("%s is opened read-only"), resource_name (self));
      return FALSE;
    }

  fd = lock_both (self, error);
  if (fd < 0)
    return FALSE;
  /* Apply first: a shape the class rejects never reaches the disk. */
  ok = KLASS (self)->handle_information_change (self, informations, error);
  if (ok)
    ok = _tessera_resource_informations_write (priv->informations, informations, error);
  _tessera_resource_informations_forget (priv->informations);
  refresh_locked (self);
  unlock_both (self, fd);
  if (ok)
    tessera_dynamic_resource_notify_changed (TESSERA_DYNAMIC_RESOURCE (self));
  return ok;
}
