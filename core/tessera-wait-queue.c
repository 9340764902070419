/* tessera-wait-queue.c: the waiters' queue of a lock folder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-dynamic-lock-file-private.h"
#include "tessera-dynamic-resource-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-folder-path-private.h"
#include "tessera-holder-monitor-private.h"
#include "tessera-host-private.h"
#include "tessera-json-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"
#include "tessera-verdict-private.h"
#include "tessera-wait-queue-private.h"

#include <fcntl.h>

#include <dirent.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

/* Anyone takes what is free until a waiter has waited longer than its
 * patience. From then on the waiter has an entry in the pool's queue
 * (the store's: below, a folder's; an etcd pool keeps its entries under
 * PREFIX/NAME/queue/ on the waiter's lease, placed by their create
 * revision). On a folder it is a file in `F/queue/`, named like
 * its lock file and shaped like one ("job_uri", "information" = what it
 * asks for, "process" = the waiting process) with two more keys:
 * "ticket", its place in the queue (one more than the largest ticket there
 * when it entered), "reserve" (true) and "since" (when it began to wait,
 * in Unix seconds, for people: `tessera status`). Every acquire of the folder by a
 * later arrival (a larger ticket, or none: any acquirer whose patience is
 * not over; at an equal ticket, a later "since", then a later name) first
 * counts those reservations as if they were held.
 * experimaestro globs only the JSON files of jobs/: it never sees the
 * queue and takes what is free, as it always has.
 *
 * Waits shorter than the patience reserve nothing (and write only the
 * entry for people below, which no acquire reads): with 16 processes on 4
 * tokens, queueing every waiter halved the throughput (each acquire read
 * a dozen entries). Among waiters with the same patience, the queue's
 * order is their arrival order.
 *
 * The queue is read and written under ipc.lock, from the acquire itself,
 * so it costs no extra lock take. An entry is removed by its waiter when
 * the wait ends (granted, timed out, cancelled, failed), and by anyone who
 * finds its process dead, with the holders' rules.
 *
 * So that people see every waiter (`tessera status`), a waiter within
 * its patience also has an entry, once, from its first failed attempt to
 * the end of its wait (or until it reserves), shaped like a reserving one
 * with "reserve" false. On a folder it is `F/queue/NAME.waiting`: its
 * name does not end in ".json", so acquires never read it (they skip it
 * at readdir): it costs a write per wait (and one every 2 s at most as
 * it tries again, so that judges elsewhere see it renewed), not a read
 * per acquire. Its waiter removes it; a later waiter removes those whose waiter it finds
 * gone, judged as the reserving ones are. On a store whose waiting
 * entries are side entries (its class's waiting_in_side_entries: etcd)
 * it is the side entry `waiting/NAME`, on the waiter's lease: it goes
 * with its process, and no acquire counts it. */

#define WAITING_SUFFIX _TESSERA_POOL_QUEUE_WAITING
/* The kind of a waiting entry kept as a store's side entry. */
#define WAITING_KIND "waiting"

/* The largest place an entry may say: a place is one more than the
 * largest read, so any member could write 2⁶³−1 and overflow the next
 * one. 2⁵³ is more entries than any queue sees, and exact in any JSON
 * reader. Larger (or below 1) is no place: ignored for the order. */
#define QUEUE_TICKET_MAX (G_GINT64_CONSTANT (1) << 53)

/* The most waiting entries (".waiting") one read looks at. Any member may
 * plant them, and each waiter reads them under ipc.lock at its first
 * failed attempt (to remove those of waiters gone): read them all, and
 * every process of the pool waits for thousands of reads. The reserving
 * entries have no such cap: every acquire must count them all. */
#define WAITING_READ_MAX 1024

/* How often at most a waiter within its patience rewrites its folder
 * entry as it tries again (less than half the pool's min-age, when that
 * is shorter): a judge that cannot check its process (another host, a
 * container) takes it for gone once it has seen it unchanged for
 * min-age. */
#define WAITING_REFRESH (2 * G_USEC_PER_SEC)

typedef struct
{
  gint64 since;       /* monotonic µs of the first failed attempt; 0 = none yet */
  gint64 since_real;  /* the same, in real time (µs since the epoch): for people */
  gint64 last;        /* monotonic µs of the last failed attempt */
  double patience;    /* seconds, the resource's at that attempt */
  gint64 ticket;      /* its place in the queue */
  gboolean reserve;   /* what the entry on disk says */
  gboolean never_reserves;   /* its type cannot say what a waiter needs */
  char *path;         /* the entry, once written: where the store keeps it */
  char *waiting;      /* the entry of a waiter within its patience, once written: a folder's path, or
                       * the name of a side entry of @waiting_store */
  TesseraPoolStore *waiting_store;   /* where @waiting is a side entry (of @resource's), or NULL */
  gboolean waiting_live;             /* @waiting is written, not deleted since */
  gint64 waiting_written;            /* monotonic µs when @waiting was last written (a folder's) */
  TesseraLockFolder *waiting_folder; /* the lock folder unit a folder's @waiting was written through: its
                                      * store's, which lives as long as @resource */
  TesseraDynamicResource *resource;   /* whose store wrote it */
  TesseraPoolStore *store;
  gboolean warned;
} WaitState;

struct _TesseraWaitQueueView
{
  /* The resource deciding, and its type's class: what counts the
   * reservations and says what a waiter asks for (given by the resource,
   * which makes the view). */
  TesseraTrackedDynamicResource *resource;
  TesseraTrackedDynamicResourceClass *klass;
  TesseraPoolStore *store;
  char *own_name;
  char *job_uri;      /* of the waiting job, written into its entry */
  double patience;
  gint64 max_ticket;
  gint64 own_found;   /* the place of our own entry as read; 0: none */
  GPtrArray *ahead;   /* lock files of live reservations before ours */
  gboolean accounted;
};

static GQuark
wait_state_quark (void)
{
  return g_quark_from_static_string ("tessera-wait-state");
}

static void
wait_state_free (gpointer data)
{
  WaitState *state = data;

  g_free (state->path);
  g_free (state->waiting);
  g_clear_object (&state->resource);
  g_free (state);
}

/* queue/ of @lock_folder, opened without following a link from the
 * kept descriptor of @folder, the lock folder unit of the store asking
 * (see _tessera_lock_folder_get_fd()), so that queue/ is reached from
 * the very folder jobs/ and hosts/ are; -1 with errno set when it cannot
 * be. A folder asked for that is not @folder's (or none: NULL) is never
 * reached through that descriptor: it is opened by its path, as
 * configured (see _tessera_open_pool_subfolder()). */
static gboolean
is_unit_of (TesseraLockFolder *folder, const char *lock_folder)
{
  return folder != NULL && strcmp (_tessera_lock_folder_get_path (folder), lock_folder) == 0;
}

static int
open_queue (TesseraLockFolder *folder, const char *lock_folder)
{
  int fd;

  if (!is_unit_of (folder, lock_folder))
    {
      g_autofree char *queue = g_build_filename (lock_folder, _TESSERA_POOL_QUEUE, NULL);

      return _tessera_open_pool_subfolder (queue);
    }
  fd = _tessera_lock_folder_get_fd (folder);
  return fd < 0 ? -1 : openat (fd, _TESSERA_POOL_QUEUE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* From the wait loops. A dependency is waited for by one call at a time. */
void
_tessera_wait_begin (TesseraDynamicDependency *dependency)
{
  if (g_object_get_qdata (G_OBJECT (dependency), wait_state_quark ()) == NULL)
    g_object_set_qdata_full (G_OBJECT (dependency), wait_state_quark (),
                             g_new0 (WaitState, 1), wait_state_free);
}

/* Removes our own entry @path, a regular file of the queue of @folder
 * (the lock folder unit it was written through), never through a link
 * planted in place of queue/: 0, or an errno (ENOENT: already gone). An
 * entry elsewhere than in @folder's queue/ (or without @folder) is
 * removed by its path, through its folder opened as configured. */
static int
unlink_entry (TesseraLockFolder *folder, const char *path)
{
  g_autofree char *name = g_path_get_basename (path);
  const char *lock_folder = folder != NULL ? _tessera_lock_folder_get_path (folder) : NULL;
  g_autofree char *expected = lock_folder != NULL ? g_build_filename (lock_folder, _TESSERA_POOL_QUEUE, name, NULL)
                                                  : NULL;
  struct stat st;
  int queue_fd, result = 0;

  if (expected == NULL || strcmp (expected, path) != 0)
    return _tessera_unlink_pool_file (path);
  queue_fd = open_queue (folder, lock_folder);
  if (queue_fd < 0)
    return errno;
  if (fstatat (queue_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    result = errno;
  else if (!S_ISREG (st.st_mode))
    result = EPERM;
  else if (unlinkat (queue_fd, name, 0) < 0)
    result = errno;
  close (queue_fd);
  return result;
}

/* Our own entry, never through a link planted in place of queue/. */
static void
delete_folder_entry (TesseraLockFolder *folder, const char *path)
{
  int saved = unlink_entry (folder, path);

  if (saved != 0 && saved != ENOENT)
    g_warning (_("Cannot delete queue entry %s: %s"), path, g_strerror (saved));
}

/* Deletes our own entry, where its store keeps it. */
static void
delete_own (WaitState *state)
{
  if (state->path != NULL)
    state->store->klass->queue->remove (state->store, state->path);
  g_clear_pointer (&state->path, g_free);
}

/* Deletes our own entry of a waiter within its patience. A side entry
 * deleted during a decision goes only with the holder that decision
 * writes (none when it waits on): its name is kept, and the wait's end
 * (@final, no decision under way) deletes it at once. */
static void
delete_waiting (WaitState *state, gboolean final)
{
  g_autoptr(GError) error = NULL;

  if (state->waiting != NULL && state->waiting_store == NULL)
    {
      delete_folder_entry (state->waiting_folder, state->waiting);
      g_clear_pointer (&state->waiting, g_free);
    }
  else if (state->waiting != NULL && (state->waiting_live || final) &&
           !state->waiting_store->klass->side_delete (state->waiting_store, WAITING_KIND, state->waiting, &error))
    g_debug ("Cannot delete waiting entry %s: %s", state->waiting, error->message);
  state->waiting_live = FALSE;
}

void
_tessera_wait_end (TesseraDynamicDependency *dependency)
{
  WaitState *state = g_object_steal_qdata (G_OBJECT (dependency), wait_state_quark ());

  if (state == NULL)
    return;
  /* Our own entry: no need for ipc.lock to delete it (readers take what
   * they find, and a missing entry reserves nothing). */
  delete_own (state);
  delete_waiting (state, TRUE);
  wait_state_free (state);
}

gint64
_tessera_wait_get_patience_deadline (TesseraDynamicDependency *dependency)
{
  WaitState *state = g_object_get_qdata (G_OBJECT (dependency), wait_state_quark ());

  gint64 end;

  if (state == NULL || state->since == 0 || state->reserve || state->never_reserves)
    return -1;
  end = state->since + (gint64) (state->patience * G_USEC_PER_SEC);
  /* Tried since and still not reserving: its request exceeds the whole
   * capacity, and only a change can help. */
  return state->last >= end ? -1 : end;
}

/* When a wait for @dependency must end at the latest: @deadline, or
 * earlier when its patience ends before (to start reserving). */
gint64
_tessera_wait_wake_time (TesseraDynamicDependency *dependency,
                         gint64                    deadline)
{
  gint64 wake = _tessera_wait_get_patience_deadline (dependency);

  return wake < 0 || (deadline >= 0 && deadline < wake) ? deadline : wake;
}

static void
end_and_unref (gpointer dependency)
{
  _tessera_wait_end (dependency);
  g_object_unref (dependency);
}

/* For a wait on several dependencies at once: ends them all when freed. */
GPtrArray *
_tessera_wait_begin_all (TesseraDynamicDependency **dependencies,
                         guint                      n_dependencies)
{
  GPtrArray *waiting = g_ptr_array_new_with_free_func (end_and_unref);

  for (guint i = 0; i < n_dependencies; i++)
    {
      _tessera_wait_begin (dependencies[i]);
      g_ptr_array_add (waiting, g_object_ref (dependencies[i]));
    }
  return waiting;
}

void
_tessera_wait_queue_view_free (TesseraWaitQueueView *view)
{
  g_warn_if_fail (!view->accounted);
  g_free (view->own_name);
  g_free (view->job_uri);
  g_ptr_array_unref (view->ahead);
  g_free (view);
}

/* What this host remembers an entry by: its name and what a rewrite
 * changes. */
static char *
seen_key (const char *path, const struct stat *st)
{
  return g_strdup_printf ("%s\n%" G_GUINT64_FORMAT "\n%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT, path,
                          (guint64) st->st_ino, _tessera_stat_mtime_ns (st), (gint64) st->st_size);
}

/* Whether this host has seen the entry as it is for @min_age seconds, on
 * its monotonic clock: never its mtime against our clock (the writer's or
 * the file server's clock may be anything). A waiter that rewrites its
 * entry starts it again. */
static gboolean
seen_unchanged_for (const char *path, const struct stat *st, double min_age)
{
  g_autofree char *key = seen_key (path, st);

  return (double) (g_get_monotonic_time () - _tessera_first_seen (key)) / G_USEC_PER_SEC >= min_age;
}

/* Deletes a queue entry judged dead, @name in queue/ (@queue_fd, the
 * descriptor it was read through, so never through a link planted in
 * place of queue/ nor in another folder now at its path; @path for
 * messages), if it is still the file we read (the same inode on the same
 * device). */
static void
remove_dead (int queue_fd, const char *name, const char *path, const struct stat *st, const char *reason)
{
  g_autofree char *key = seen_key (path, st);
  struct stat now;

  if (fstatat (queue_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st->st_ino &&
      now.st_dev == st->st_dev && S_ISREG (now.st_mode))
    {
      int saved;

      g_info (_("Removing queue entry %s: %s"), path, reason);
      saved = unlinkat (queue_fd, name, 0) < 0 ? errno : 0;
      if (saved == EPERM || saved == EACCES)
        /* Another user's, in a group's sticky queue/: left to its owner. */
        g_debug ("Cannot delete queue entry %s: %s", path, g_strerror (saved));
      else if (saved != 0 && saved != ENOENT)
        g_warning (_("Cannot delete queue entry %s: %s"), path, g_strerror (saved));
      else
        _tessera_forget_seen (key);
    }
}

/* What the verdict asks of the queue: whether this host has seen the
 * entry unchanged for min-age. */
typedef struct
{
  const char *path;
  const struct stat *st;
  double min_age;
} EntrySeen;

static gboolean
entry_unrenewed (gpointer data)
{
  EntrySeen *seen = data;

  return seen_unchanged_for (seen->path, seen->st, seen->min_age);
}

/* Whether the waiter of an entry still waits: the verdict's, by the
 * holders' rules and the queue's own (_tessera_holder_monitor_judge_waiter()):
 * a process that can be checked here is checked, and is the entry
 * owner's; another host's waiter is gone once its host's lease expired
 * (@store says so, on a lease pool: a vanished NFSv3 host's job locks may
 * stay held), else counts while its job lock is held or this host has
 * seen its entry unchanged for less than @min_age (a reserving waiter
 * rewrites it on every attempt). When in doubt, it waits. */
static gboolean
waiter_is_alive (TesseraDynamicLockFile *lock_file, const char *path, const struct stat *st, double min_age,
                 TesseraPoolStore *store, const char **reason)
{
  EntrySeen seen = { path, st, min_age };
  g_autofree char *why = NULL;
  gboolean alive = _tessera_holder_monitor_judge_waiter (lock_file, st->st_uid, store, entry_unrenewed, &seen,
                                                         &why) != TESSERA_VERDICT_DEAD;

  /* The verdict's reasons for a waiter are a handful of fixed sentences:
   * interned, as the callers take them. */
  *reason = why != NULL ? g_intern_string (why) : NULL;
  return alive;
}

/* Reads the queue through @store. Thread lock and ipc.lock held. */
TesseraWaitQueueView *
_tessera_wait_queue_read (TesseraTrackedDynamicResource      *resource,
                          TesseraTrackedDynamicResourceClass *klass,
                          double                              patience,
                          TesseraPoolStore                   *store,
                          TesseraDynamicDependency           *dependency,
                          const char                         *own_name,
                          const char                         *job_uri)
{
  TesseraWaitQueueView *view = g_new0 (TesseraWaitQueueView, 1);
  WaitState *state = g_object_get_qdata (G_OBJECT (dependency), wait_state_quark ());

  view->resource = resource;
  view->klass = klass;
  view->store = store;
  view->own_name = g_strdup (own_name);
  view->job_uri = g_strdup (job_uri);
  view->patience = patience;
  view->ahead = g_ptr_array_new_with_free_func (g_object_unref);
  store->klass->queue->read (store, own_name, state != NULL ? state->ticket : 0, view->ahead, &view->max_ticket,
                             &view->own_found);
  return view;
}

/* A waiting entry shows what its "request" says it asks for (its type's
 * describe_request), when it has one: an object, for people only. */
static void
show_request (TesseraDynamicLockFile *lock_file, JsonObject *object)
{
  JsonNode *request = json_object_get_member (object, "request");

  if (request != NULL && JSON_NODE_HOLDS_OBJECT (request))
    _tessera_dynamic_lock_file_show_information (lock_file, request);
}

/* The entries of `F/queue/` whose names end in @suffix: ".json", the
 * reserving ones (@reserving), or ".waiting", those of waiters within
 * their patience. Each is read, parsed and judged alike; one found gone
 * is left out, and removed unless @read_only. The live ones, shaped like
 * lock files whose time is when their waiter began to wait, are added to
 * @entries: when @reserving, only those that reserve and are placed
 * before @own_place (every one when 0), and @last_place is set to the
 * largest place read and @own_found to the place of @own_name's own
 * entry (0: none); else every one, showing what it asks for, of the
 * first WAITING_READ_MAX read. Thread lock and ipc.lock held. */
static void
read_entries (const char       *lock_folder,
              const char       *suffix,
              gboolean          reserving,
              TesseraPoolStore *store,
              gboolean          read_only,
              const char       *own_name,
              gint64            own_place,
              GPtrArray        *entries,
              gint64           *last_place,
              gint64           *own_found)
{
  g_autofree char *folder = g_build_filename (lock_folder, _TESSERA_POOL_QUEUE, NULL);
  double min_age = store->min_age;
  gint64 own_ticket = own_place > 0 ? own_place : G_MAXINT64;
  gint64 own_since = 0;
  g_autoptr(GPtrArray) tied = g_ptr_array_new_with_free_func (g_object_unref);
  guint looked = 0;
  DIR *dir;
  struct dirent *dent;

  {
    /* Never through a link planted in place of queue/. */
    int dir_fd = open_queue (store->lock_folder, lock_folder);
    dir = dir_fd >= 0 ? fdopendir (dir_fd) : NULL;
    if (dir == NULL && dir_fd >= 0)
      close (dir_fd);
  }
  if (dir == NULL)
    return;
  while ((dent = readdir (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *data = NULL;
      g_autoptr(JsonParser) parser = NULL;
      g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
      JsonObject *object;
      struct stat st;
      gsize length;
      gint64 ticket = 0, since;
      const char *reason = NULL;

      /* Temporary files of the atomic writer do not end in the suffix. */
      if (!g_str_has_suffix (dent->d_name, suffix) || dent->d_name[0] == '.')
        continue;
      if (!reserving && ++looked > WAITING_READ_MAX)
        {
          g_debug ("%s: more than %d waiting entries, the rest left unread", folder, WAITING_READ_MAX);
          break;
        }
      path = g_build_filename (folder, dent->d_name, NULL);
      if (!_tessera_read_file_at (dirfd (dir), dent->d_name, path, &data, &length, &st, NULL))
        continue;
      parser = json_parser_new_immutable ();
      if (!_tessera_json_load (parser, data, length, NULL) ||
          !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        {
          /* Never counted; gone once old (its writer died while writing). */
          if (reserving && !read_only && seen_unchanged_for (path, &st, min_age))
            remove_dead (dirfd (dir), dent->d_name, path, &st, _("it is not JSON"));
          continue;
        }
      object = json_node_get_object (json_parser_get_root (parser));
      if (reserving)
        {
          ticket = json_object_get_int_member_with_default (object, "ticket", 0);
          if (ticket < 1 || ticket > QUEUE_TICKET_MAX)
            ticket = 0;   /* no place: nothing follows from it */
          *last_place = MAX (*last_place, ticket);
          if (strcmp (dent->d_name, own_name) == 0)
            {
              *own_found = ticket;
              own_since = json_object_get_int_member_with_default (object, "since", 0);
              continue;
            }
          if (!json_object_get_boolean_member_with_default (object, "reserve", FALSE))
            continue;
        }
      lock_file = tessera_dynamic_lock_file_new_from_data (store->lock_file_type, path, data, (gssize) length, NULL);
      if (lock_file == NULL || !tessera_dynamic_lock_file_is_valid (lock_file))
        continue;
      if (!waiter_is_alive (lock_file, path, &st, min_age, store, &reason))
        {
          if (!read_only)
            remove_dead (dirfd (dir), dent->d_name, path, &st, reason);
          continue;
        }
      /* Its time is when it began to wait (the entry is rewritten at
       * every attempt), when it says (any number may be written here). */
      since = json_object_get_int_member_with_default (object, "since", 0);
      if (since > 0 && since < G_MAXINT64 / G_GINT64_CONSTANT (1000000000))
        _tessera_dynamic_lock_file_set_mtime (lock_file, since * G_GINT64_CONSTANT (1000000000));
      if (!reserving)
        show_request (lock_file, object);
      if (!reserving || (ticket > 0 && ticket < own_ticket))
        g_ptr_array_add (entries, g_steal_pointer (&lock_file));
      else if (ticket > 0 && ticket == own_ticket)
        g_ptr_array_add (tied, g_steal_pointer (&lock_file));
    }
  closedir (dir);
  /* Places are equal once one reached the last (every later waiter takes
   * it): then the one that began to wait first is ahead, and the names
   * order those of one second. Our own time is only known once read. */
  for (guint i = 0; own_since > 0 && i < tied->len; i++)
    {
      TesseraDynamicLockFile *other = g_ptr_array_index (tied, i);
      gint64 since = tessera_dynamic_lock_file_get_mtime (other) / G_GINT64_CONSTANT (1000000000);
      g_autofree char *name = g_path_get_basename (tessera_dynamic_lock_file_get_path (other));

      if (since < own_since || (since == own_since && strcmp (name, own_name) < 0))
        g_ptr_array_add (entries, g_object_ref (other));
    }
}

/* The folder store's queue read: the entries of `F/queue/`, F the
 * store's location. Thread lock and ipc.lock held. A read-only view
 * (tessera status) deletes nothing: what it finds gone it leaves out. */
static void
folder_queue_read (TesseraPoolStore *store,
                   const char       *own_name,
                   gint64            own_place,
                   GPtrArray        *ahead,
                   gint64           *last_place,
                   gint64           *own_found)
{
  g_autofree char *lock_folder = store->klass->dup_location (store);

  read_entries (lock_folder, TESSERA_LOCK_FILE_SUFFIX, TRUE, store, store->read_only, own_name, own_place, ahead,
                last_place, own_found);
}

static int
compare_since (gconstpointer a, gconstpointer b)
{
  gint64 x = tessera_dynamic_lock_file_get_mtime (*(TesseraDynamicLockFile * const *) a);
  gint64 y = tessera_dynamic_lock_file_get_mtime (*(TesseraDynamicLockFile * const *) b);

  return x < y ? -1 : x > y;
}

/* Every live reserving waiter of the queue of @store, the longest
 * waiting first (tessera status). Between begin and end, after a
 * refresh, thread lock held. */
GPtrArray *
_tessera_wait_queue_list (TesseraPoolStore *store)
{
  GPtrArray *waiters = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 last_place = 0, own_found = 0;

  /* No name of ours and no place: every entry is before us. */
  store->klass->queue->read (store, "", 0, waiters, &last_place, &own_found);
  g_ptr_array_sort (waiters, compare_since);
  return waiters;
}

/* The waiters within their patience of the folder pool at @lock_folder
 * (`queue/NAME.waiting`), shaped like lock files as the reserving ones
 * are, the longest waiting first; an entry whose waiter is gone is left
 * out, and removed unless @read_only. Thread lock and ipc.lock held. */
GPtrArray *
_tessera_wait_queue_folder_list_waiting (const char       *lock_folder,
                                         TesseraPoolStore *store,
                                         gboolean          read_only)
{
  GPtrArray *waiters = g_ptr_array_new_with_free_func (g_object_unref);

  read_entries (lock_folder, WAITING_SUFFIX, FALSE, store, read_only, NULL, 0, waiters, NULL, NULL);
  g_ptr_array_sort (waiters, compare_since);
  return waiters;
}


/* The waiters within their patience of @store, whose waiting entries
 * are side entries (`waiting/NAME`, each on its waiter's lease: the
 * store drops a dead one's), as last read, shaped like lock files whose path is the
 * entry's location, the longest waiting first. One whose waiter has a
 * reserving entry is left out (that one shows it; the side entry goes at
 * the end of its wait). Thread lock held, after a refresh. */
GPtrArray *
_tessera_wait_queue_store_list_waiting (TesseraPoolStore *store)
{
  GPtrArray *waiters = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GHashTable) entries = store->klass->side_list (store, WAITING_KIND);
  g_autofree char *location = store->klass->dup_location (store);
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, entries);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const char *text = value;
      g_autofree char *own_name = g_strconcat (key, TESSERA_LOCK_FILE_SUFFIX, NULL);
      g_autofree char *path = g_strconcat (location != NULL ? location : "", WAITING_KIND "/", key, NULL);
      g_autoptr(JsonParser) parser = json_parser_new_immutable ();
      g_autoptr(TesseraDynamicLockFile) lock_file = NULL;
      g_autoptr(GPtrArray) ahead = g_ptr_array_new_with_free_func (g_object_unref);
      gint64 last_place = 0, own_found = 0, since;

      store->klass->queue->read (store, own_name, 1, ahead, &last_place, &own_found);
      if (own_found > 0)
        continue;
      if (!_tessera_json_load (parser, text, strlen (text), NULL) || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      lock_file = tessera_dynamic_lock_file_new_from_data (store->lock_file_type, path, text, -1, NULL);
      if (lock_file == NULL || !tessera_dynamic_lock_file_is_valid (lock_file))
        continue;
      since = json_object_get_int_member_with_default (json_node_get_object (json_parser_get_root (parser)),
                                                       "since", 0);
      if (since > 0 && since < G_MAXINT64 / G_GINT64_CONSTANT (1000000000))
        _tessera_dynamic_lock_file_set_mtime (lock_file, since * G_GINT64_CONSTANT (1000000000));
      show_request (lock_file, json_node_get_object (json_parser_get_root (parser)));
      g_ptr_array_add (waiters, g_steal_pointer (&lock_file));
    }
  g_ptr_array_sort (waiters, compare_since);
  return waiters;
}

/* Whether the waiter of @entry asks for more than the resource has in
 * all (@capacity, in the units of the lock file's amount; -1: not
 * known): it can never be served, so it reserves nothing (any member
 * may write an entry asking for 100 of 8). Any thread. */
gboolean
_tessera_wait_queue_never_served (TesseraDynamicLockFile *entry,
                                  gint64                  capacity)
{
  return capacity >= 0 && tessera_dynamic_lock_file_get_amount (entry) > capacity;
}

/* Counts the reservations before ours as held (@account) or stops
 * counting them. Thread lock and ipc.lock held; the plugin's own
 * account/unaccount do it, so resource types need nothing more. */
static void
_tessera_wait_queue_account (TesseraWaitQueueView *view,
                             gboolean              account)
{
  TesseraTrackedDynamicResource *self = view->resource;
  TesseraTrackedDynamicResourceClass *klass = view->klass;
  gint64 capacity, free_units;

  if (account == view->accounted)
    return;
  klass->get_usage (self, &capacity, &free_units);
  for (guint i = 0; i < view->ahead->len; i++)
    if (_tessera_wait_queue_never_served (g_ptr_array_index (view->ahead, i), capacity))
      ;   /* it would block every later request for good */
    else if (account)
      klass->account_lock_file (self, g_ptr_array_index (view->ahead, i));
    else
      klass->unaccount_lock_file (self, g_ptr_array_index (view->ahead, i));
  view->accounted = account;
}

/* Whether @dependency may have what it asks now: none of @store's holders
 * holds everything (those unjudged are judged first when it does not fit), and
 * the type says it fits once the waiters before it whose patience is over
 * count as holders (@name: the resource's, for
 * messages). A refusal is recorded (the
 * patience starts; past it, a full resource's waiter reserves its share).
 * FALSE with @error, TESSERA_ERROR_UNAVAILABLE when full. Both locks
 * held. */
gboolean
_tessera_wait_queue_decide (TesseraWaitQueueView      *view,
                            TesseraDynamicDependency  *dependency,
                            const char                *name,
                            GError                   **error)
{
  TesseraPoolStore *store = view->store;
  g_autoptr(GError) local = NULL;
  gboolean available;

  do
    {
      g_clear_error (&local);
      _tessera_wait_queue_account (view, TRUE);
      available = store->klass->holders->get_whole (store->holder_table) == 0 &&
                  view->klass->is_available (view->resource, dependency, &local);
      _tessera_wait_queue_account (view, FALSE);
      if (available)
        return TRUE;
    }
  while (store->klass->judge_all (store));   /* a dead holder's share freed: again */
  /* A holder of everything; or a type that broke is_available's rule. */
  g_warn_if_fail (local != NULL || store->klass->holders->get_whole (store->holder_table) > 0);
  if (local == NULL)
    local = g_error_new (TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, _("Resource %s is not available"),
                         name);
  _tessera_wait_queue_after_attempt (view, dependency, FALSE,
                                     g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE));
  g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

/* Writes @text as `F/queue/NAME`, atomically, F being the lock folder
 * @lock_folder, reached from the descriptor of @unit (a lock folder
 * unit) when it is @unit's (see open_queue()). */
static gboolean
put_folder_entry (TesseraLockFolder *unit,
                  const char  *lock_folder,
                  const char  *own_name,
                  const char  *text,
                  char       **location,
                  GError     **error)
{
  g_autofree char *folder = g_build_filename (lock_folder, _TESSERA_POOL_QUEUE, NULL);
  g_autofree char *path = g_build_filename (folder, own_name, NULL);
  /* Made in the folder the entry goes to: @unit's kept descriptor. */
  gboolean own_fd = !is_unit_of (unit, lock_folder);
  int lock_folder_fd = own_fd ? _tessera_open_folder_path (lock_folder, FALSE, NULL) : _tessera_lock_folder_get_fd (unit);
  gboolean made = FALSE, ok = TRUE;
  struct stat st;
  int queue_fd;

  if (lock_folder_fd >= 0 && fstatat (lock_folder_fd, _TESSERA_POOL_QUEUE, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
      errno == ENOENT)
    {
      /* A member makes no queue/ in a group's pool (she would own it, and
       * could remove the other waiters' entries): init makes it. */
      ok = _tessera_may_make_folder_in (lock_folder_fd, lock_folder, _TESSERA_POOL_QUEUE, error);
      if (ok && mkdirat (lock_folder_fd, _TESSERA_POOL_QUEUE, 0777) == 0)
        made = TRUE;
      else if (ok && errno != EEXIST)
        {
          _tessera_set_io_error (error, errno, _("Cannot create the folder %s: %s"), folder);
          ok = FALSE;
        }
    }
  if (own_fd && lock_folder_fd >= 0)
    close (lock_folder_fd);
  if (!ok)
    return FALSE;
  /* No lock folder to reach (removed since): made by its path, as ever. */
  if (lock_folder_fd < 0 && lstat (folder, &st) < 0)
    {
      if (mkdir (folder, 0777) == 0)
        made = TRUE;
      else if (errno != EEXIST && !_tessera_mkdir_with_parents (folder, error))
        return FALSE;
    }
  queue_fd = open_queue (unit, lock_folder);
  if (queue_fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot create a file beside %s: %s"), path);
      return FALSE;
    }
  /* In a group's shared pool, the others must write and clean it too. */
  if (made)
    _tessera_share_like_parent_at (own_fd ? -1 : lock_folder_fd, queue_fd, folder);
  ok = _tessera_write_file_atomic_at (queue_fd, own_name, path, text, -1, FALSE, error);
  close (queue_fd);
  if (!ok)
    return FALSE;
  *location = g_steal_pointer (&path);
  return TRUE;
}

/* The folder store's queue put: written again at the place asked, every
 * time (its time tells other hosts that its waiter still waits). */
static gboolean
folder_queue_put (TesseraPoolStore *store,
                  const char       *own_name,
                  const char       *text,
                  gint64            own_found,
                  gint64           *place,
                  char            **location,
                  GError          **error)
{
  g_autofree char *lock_folder = store->klass->dup_location (store);

  return put_folder_entry (store->lock_folder, lock_folder, own_name, text, location, error);
}

static void
folder_queue_remove (TesseraPoolStore *store, const char *location)
{
  delete_folder_entry (store->lock_folder, location);
}

const TesseraPoolStoreQueue _tessera_wait_queue_folder = {
  folder_queue_read,
  folder_queue_put,
  folder_queue_remove,
};

/* The JSON of our entry, reserving or not as @state says. */
static char *
entry_text (TesseraWaitQueueView     *view,
            TesseraDynamicDependency *dependency,
            WaitState                *state)
{
  TesseraTrackedDynamicResource *self = view->resource;
  TesseraTrackedDynamicResourceClass *klass = view->klass;
  g_autoptr(TesseraProcess) process = tessera_process_new_self ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  g_autofree char *text = NULL;
  JsonObject *object = json_object_new ();
  JsonNode *information, *request;

  json_node_take_object (root, object);
  json_object_set_string_member (object, "job_uri", view->job_uri);
  /* get_wait_information() prepares a reservation (a mutex's waiter then
   * passes the intents, a gpu waiter gives up its choice): only a
   * reserving entry may call it. A waiting one carries its lock file
   * information only when that is the type's wait information, which is
   * plain (counting tokens); and what the type's describe_request(),
   * which has no side effect, says it asks for, as "request" (the type's
   * lock files need not read it: a GPU request names no device yet). */
  if (state->reserve)
    information = klass->get_wait_information (self, dependency);
  else if (klass->get_wait_information != NULL && klass->get_wait_information == klass->get_lock_file_information)
    information = klass->get_lock_file_information (self, dependency);
  else
    information = NULL;
  if (information != NULL)
    json_object_set_member (object, "information", information);
  request = !state->reserve && klass->describe_request != NULL ? klass->describe_request (self, dependency) : NULL;
  if (request != NULL)
    json_object_set_member (object, "request", request);
  json_object_set_member (object, "process", tessera_process_to_json (process));
  json_object_set_int_member (object, "ticket", state->ticket);
  json_object_set_boolean_member (object, "reserve", state->reserve);
  json_object_set_int_member (object, "since", state->since_real / G_USEC_PER_SEC);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

static gboolean
write_entry (TesseraWaitQueueView      *view,
             TesseraDynamicDependency  *dependency,
             WaitState                 *state,
             char                     **location,
             GError                   **error)
{
  g_autofree char *text = entry_text (view, dependency, state);

  return view->store->klass->queue->put (view->store, view->own_name, text, view->own_found, &state->ticket, location,
                                        error);
}

/* The name of our side entry of a waiter within its patience: the
 * holder's name, without ".json". */
static char *
waiting_side_name (const char *own_name)
{
  return g_str_has_suffix (own_name, TESSERA_LOCK_FILE_SUFFIX)
         ? g_strndup (own_name, strlen (own_name) - strlen (TESSERA_LOCK_FILE_SUFFIX))
         : g_strdup (own_name);
}

/* A waiter within its patience: its entry, for people only. On a store
 * whose waiting entries are side entries, `waiting/NAME`, once a wait
 * (on this process's lease on etcd: it goes with it); on a folder,
 * NAME.waiting, first removing the entries of waiters gone, then
 * rewritten as it tries again, every WAITING_REFRESH at most, so that
 * judges elsewhere see it renewed. Thread lock and ipc.lock held. A
 * failure costs only the view. */
static void
write_waiting (TesseraWaitQueueView     *view,
               TesseraDynamicDependency *dependency,
               WaitState                *state)
{
  TesseraDynamicResource *resource = TESSERA_DYNAMIC_RESOURCE (view->resource);
  const char *lock_folder;
  g_autofree char *name = NULL;
  g_autofree char *text = NULL;
  g_autofree char *location = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) live = NULL;
  gint64 now = g_get_monotonic_time ();
  gint64 refresh = MIN (WAITING_REFRESH, (gint64) (view->store->min_age / 2 * G_USEC_PER_SEC));

  if (state->waiting_live ||
      (state->waiting != NULL && state->waiting_store == NULL && now - state->waiting_written < refresh))
    return;
  if (view->store->klass->waiting_in_side_entries)
    {
      if (state->waiting_store != NULL && state->waiting_store != view->store)
        return;
      name = waiting_side_name (view->own_name);
      text = entry_text (view, dependency, state);
      if (!view->store->klass->side_put (view->store, WAITING_KIND, name, text, &error))
        {
          g_debug ("Cannot write waiting entry %s: %s", name, error->message);
          return;
        }
      if (state->resource == NULL)
        state->resource = g_object_ref (resource);
      state->waiting_store = view->store;
      g_free (state->waiting);
      state->waiting = g_steal_pointer (&name);
      state->waiting_live = TRUE;
      return;
    }
  lock_folder = _tessera_dynamic_resource_get_pool_folder (resource);
  if (lock_folder == NULL)
    return;
  if (state->waiting == NULL)
    live = _tessera_wait_queue_folder_list_waiting (lock_folder, view->store, FALSE);
  /* NAME.waiting for NAME.json: acquires read only "*.json". */
  name = g_str_has_suffix (view->own_name, TESSERA_LOCK_FILE_SUFFIX)
         ? g_strdup_printf ("%.*s" WAITING_SUFFIX, (int) (strlen (view->own_name) - strlen (TESSERA_LOCK_FILE_SUFFIX)),
                            view->own_name)
         : g_strconcat (view->own_name, WAITING_SUFFIX, NULL);
  text = entry_text (view, dependency, state);
  if (state->resource == NULL)
    state->resource = g_object_ref (resource);
  if (!put_folder_entry (view->store->lock_folder, lock_folder, name, text, &location, &error))
    g_debug ("Cannot write waiting entry %s: %s", name, error->message);
  else
    {
      state->waiting_folder = view->store->lock_folder;
      g_free (state->waiting);
      state->waiting = g_steal_pointer (&location);
      state->waiting_written = now;
    }
}

/* After a decision of acquire on @dependency. Thread lock and ipc.lock
 * held. A dependency that is not waiting (one try) leaves no entry; a
 * waiting one starts its patience at its first failure, enters the queue
 * once that is over while the resource is merely full (not while its
 * request exceeds the whole capacity), and leaves at success. */
void
_tessera_wait_queue_after_attempt (TesseraWaitQueueView     *view,
                                   TesseraDynamicDependency *dependency,
                                   gboolean                  acquired,
                                   gboolean                  full)
{
  TesseraTrackedDynamicResource *self = view->resource;
  WaitState *state = g_object_get_qdata (G_OBJECT (dependency), wait_state_quark ());
  g_autofree char *location = NULL;
  g_autoptr(GError) error = NULL;
  gboolean reserve;
  gint64 now;

  if (state == NULL)
    return;
  if (acquired)
    {
      delete_own (state);
      delete_waiting (state, FALSE);
      state->ticket = 0;
      state->reserve = FALSE;
      /* The patience goes on: taking all of a job's dependencies at once
       * may give this one back and wait again. */
      return;
    }
  /* A type that cannot say what a waiter needs reserves nothing; its
   * waiter is shown all the same (it waits), and its patience wakes
   * nothing. */
  state->never_reserves = view->klass->get_wait_information == NULL;

  now = g_get_monotonic_time ();
  state->last = now;
  if (state->since == 0)
    {
      state->since = now;
      state->since_real = g_get_real_time ();
      state->patience = view->patience;
    }
  reserve = full && !state->never_reserves && now - state->since >= (gint64) (state->patience * G_USEC_PER_SEC);
  if (!reserve)
    {
      /* Within its patience, asking for more than the whole capacity
       * (the total shrank), or of a type that reserves nothing: no
       * reserving entry. */
      delete_own (state);
      state->ticket = 0;
      state->reserve = FALSE;
      write_waiting (view, dependency, state);
      return;
    }
  if (state->ticket == 0)
    state->ticket = MIN (view->max_ticket, QUEUE_TICKET_MAX - 1) + 1;
  /* Rewritten on every attempt on a folder: its new time tells other
   * hosts that it still waits (on etcd, its lease does). */
  state->reserve = TRUE;
  if (state->store == NULL)
    {
      if (state->resource == NULL)
        state->resource = g_object_ref (TESSERA_DYNAMIC_RESOURCE (self));
      state->store = view->store;
    }
  g_return_if_fail (state->store == view->store);
  if (!write_entry (view, dependency, state, &location, &error))
    {
      if (!state->warned)
        g_warning (_("Cannot queue for %s: %s"), tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self))
                   ? tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)) : "?", error->message);
      state->warned = TRUE;
      return;
    }
  if (g_strcmp0 (state->path, location) != 0)
    {
      g_free (state->path);
      state->path = g_steal_pointer (&location);
    }
  /* Its reserving entry shows it now. */
  delete_waiting (state, FALSE);
}
