/* tessera-host-lease.c: the host lease — one heartbeat per host in the
 * pool's hosts/ folder, renewed while this process holds something there,
 * and judged by readers on their own monotonic clock, never by comparing
 * clocks across hosts.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-folder-path-private.h"
#include "tessera-host-lease-private.h"
#include "tessera-host-private.h"
#include "tessera-json-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define LEASE_SUFFIX _TESSERA_POOL_HOST_LEASE
#define MARK_SUFFIX  _TESSERA_POOL_HOST_MARK

/* What a file of hosts/ is, by its name. Each user of a host writes her
 * own: HOSTID.UID.lease (heartbeat) and HOSTID.UID.host (mark), so that
 * where hosts/ is sticky (a group's pool) none may remove or replace
 * another's; and a mark per view of the pool that she reaches it
 * through, HOSTID.UID.vVIEW.host (VIEW: the device of hosts/ there, in
 * hexadecimal), so that two mounts of the pool on one host (a
 * container's FUSE view and the real folder) see each other. HOSTID.lease
 * and HOSTID.host are of a Tessera before that, whoever wrote them: still
 * read. */
typedef enum
{
  HOST_FILE_NONE,
  HOST_FILE_LEASE,
  HOST_FILE_MARK,
} HostFileKind;

/* The kind of hosts/@name; @id (out): its host id; @uid (out): the uid it
 * is named for, -1 for a name of the older kind; @view (out): the view it
 * is named for; returns with @has_view (out) FALSE for none. */
static HostFileKind
host_file_kind (const char *name, char **id, gint64 *uid, gboolean *has_view, guint64 *view)
{
  const char *dot = strchr (name, '.');
  const char *rest;
  HostFileKind kind;

  *id = NULL;
  *uid = -1;
  *has_view = FALSE;
  *view = 0;
  if (dot == NULL)
    return HOST_FILE_NONE;
  rest = dot + 1;
  if (g_ascii_isdigit (*rest))
    {
      const char *end = rest;

      while (g_ascii_isdigit (*end))
        end++;
      /* A uid as Tessera writes it: no sign, no leading zero. */
      if (*end != '.' || end - rest > 10 || (*rest == '0' && end - rest > 1) ||
          (*uid = g_ascii_strtoll (rest, NULL, 10)) > G_MAXUINT32)
        return HOST_FILE_NONE;
      rest = end + 1;
      /* A view as Tessera writes it: lowercase hex, no leading zero. */
      if (*rest == 'v')
        {
          end = ++rest;
          while (g_ascii_isxdigit (*end) && !g_ascii_isupper (*end))
            end++;
          if (*end != '.' || end == rest || end - rest > 16 || (*rest == '0' && end - rest > 1) ||
              strcmp (end + 1, MARK_SUFFIX + 1) != 0)
            return HOST_FILE_NONE;
          *has_view = TRUE;
          *view = g_ascii_strtoull (rest, NULL, 16);
          rest = end + 1;
        }
    }
  kind = strcmp (rest, LEASE_SUFFIX + 1) == 0 ? HOST_FILE_LEASE
         : strcmp (rest, MARK_SUFFIX + 1) == 0 ? HOST_FILE_MARK : HOST_FILE_NONE;
  if (kind == HOST_FILE_NONE)
    return kind;
  *id = g_strndup (name, (gsize) (dot - name));
  if (_tessera_is_host_id (*id))
    return kind;
  g_clear_pointer (id, g_free);
  return HOST_FILE_NONE;
}

/* This user's file of this host: HOSTID.UID@suffix. */
static char *
own_host_file (const char *suffix)
{
  return g_strdup_printf ("%s.%u%s", _tessera_host_id (), (unsigned) geteuid (), suffix);
}

/* This user's mark of this host and view: HOSTID.UID.vVIEW.host. */
static char *
own_view_mark (guint64 view)
{
  return g_strdup_printf ("%s.%u.v%" G_GINT64_MODIFIER "x%s", _tessera_host_id (), (unsigned) geteuid (), view,
                          MARK_SUFFIX);
}

/* What this process last saw of another host's heartbeat. */
typedef struct
{
  char *key;            /* what tells this heartbeat from its next renewal */
  gint64 first_seen_us; /* monotonic: when this host first saw it */
} Seen;

struct _TesseraHostLease
{
  /* The pool's lock folder unit (the holder monitor's, which outlives
   * the lease's renewer): hosts/ is reached from its kept descriptor at
   * every grant, as jobs/ is, without walking its path from / again. */
  TesseraLockFolder *folder;
  const char *lock_folder;   /* its path, for messages */
  char *hosts_path;
  /* The renewer's own thread and context: no other work of this process
   * (rescans of a large pool, holder exits, the waiting of a slow peer's
   * file) can delay a renewal. The context is made before the first
   * holding (make_context_locked()), the thread at it. */
  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;

  GMutex lock;
  double time;              /* seconds; 0: not a lease pool */
  guint holdings;
  GSource *timer;
  gboolean stopped;
  gint64 last_renewal_us;   /* monotonic; 0: none since holding */
  gint64 holding_since_us;  /* monotonic: when this process began to hold */
  /* The above as the fence reads it, without the lock (a renewal may hang
   * in the file server's I/O with the lock held): the last renewal, or
   * the start of the holding; 0 when nothing is held on a lease. */
  _Atomic gint64 unrenewed_since_us;
  gboolean told;            /* a failed renewal was reported */
  gint64 last_sweep_us;     /* monotonic: when hosts/ was last swept; 0: never */
  GHashTable *seen;         /* host id → Seen */
  int locks_cross;          /* atomic; 0: not looked yet, 1: the pool's locks cross hosts, -1: they do not */
  gboolean marked;          /* this process has checked its host's mark */
  guint64 view;             /* when marked: the view of the pool this process reaches it through */
};

static void
seen_free (Seen *seen)
{
  g_free (seen->key);
  g_free (seen);
}

static TesseraHostLease *
lease_ref (TesseraHostLease *lease)
{
  return g_atomic_rc_box_acquire (lease);
}

static void
lease_clear (TesseraHostLease *lease)
{
  g_free (lease->hosts_path);
  g_hash_table_unref (lease->seen);
  g_mutex_clear (&lease->lock);
}

static void
lease_unref (TesseraHostLease *lease)
{
  g_atomic_rc_box_release_full (lease, (GDestroyNotify) lease_clear);
}

TesseraHostLease *
_tessera_host_lease_new (TesseraLockFolder *folder)
{
  TesseraHostLease *lease = g_atomic_rc_box_new0 (TesseraHostLease);

  lease->folder = folder;
  lease->lock_folder = _tessera_lock_folder_get_path (folder);
  lease->hosts_path = g_build_filename (lease->lock_folder, _TESSERA_POOL_HOSTS, NULL);
  lease->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) seen_free);
  g_mutex_init (&lease->lock);
  return lease;
}

static void
stop_timer_locked (TesseraHostLease *lease)
{
  if (lease->timer != NULL)
    {
      g_source_destroy (lease->timer);
      g_clear_pointer (&lease->timer, g_source_unref);
    }
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static gpointer
renewer_thread (gpointer data)
{
  TesseraHostLease *lease = data;

  g_main_context_push_thread_default (lease->context);
  g_main_loop_run (lease->loop);
  g_main_context_pop_thread_default (lease->context);
  return NULL;
}

void
_tessera_host_lease_free (TesseraHostLease *lease)
{
  GThread *thread;

  if (lease == NULL)
    return;
  g_mutex_lock (&lease->lock);
  lease->stopped = TRUE;
  atomic_store (&lease->unrenewed_since_us, 0);
  stop_timer_locked (lease);
  thread = g_steal_pointer (&lease->thread);
  g_mutex_unlock (&lease->lock);
  if (thread != NULL)
    {
      /* Quit from within the loop: a quit before it runs would be lost. */
      GSource *idle = g_idle_source_new ();

      g_source_set_callback (idle, quit_loop, lease->loop, NULL);
      g_source_attach (idle, lease->context);
      g_source_unref (idle);
      g_thread_join (thread);
    }
  g_clear_pointer (&lease->loop, g_main_loop_unref);
  g_clear_pointer (&lease->context, g_main_context_unref);
  lease_unref (lease);
}

static void start_timer_locked (TesseraHostLease *lease);
static void renew_and_note_locked (TesseraHostLease *lease);

/* A heartbeat is renewed eight times per lease: the fence (tools/) ends a
 * command only once renewals have failed for the lease minus its margin,
 * so each renewal that comes in time leaves the renewer that much slack
 * again; a reader sees it change well within its lease time. */
static gint64
renewal_interval_us (double time)
{
  return MAX (100 * 1000, (gint64) (time * G_USEC_PER_SEC / 8));
}

void
_tessera_host_lease_set_time (TesseraHostLease *lease,
                              double            seconds)
{
  g_mutex_lock (&lease->lock);
  if (lease->time != seconds)
    {
      lease->time = seconds;
      /* The pool's recorded lease, read after this process began to
       * hold: renewals follow it from now on. */
      if (lease->holdings > 0 && !lease->stopped)
        {
          stop_timer_locked (lease);
          if (seconds > 0)
            {
              if (atomic_load (&lease->unrenewed_since_us) == 0)
                atomic_store (&lease->unrenewed_since_us, g_get_monotonic_time ());
              renew_and_note_locked (lease);
              start_timer_locked (lease);
            }
          else
            atomic_store (&lease->unrenewed_since_us, 0);
        }
    }
  g_mutex_unlock (&lease->lock);
}

double
_tessera_host_lease_get_time (TesseraHostLease *lease)
{
  double time;

  g_mutex_lock (&lease->lock);
  time = lease->time;
  g_mutex_unlock (&lease->lock);
  return time;
}

/* ---------------------------------------------------------------------- */
/* Renewing this host's heartbeat */

/* hosts/, opened from the lock folder's descriptor without following a
 * link there (opened again at each call: a link planted in its place
 * meanwhile is refused); made (with the pool's group and bits) when
 * @create and missing, but not by a member in a group's pool: then -1
 * with @refused set, saying to run init (see
 * _tessera_may_make_folder_in()). */
static int
open_hosts (TesseraHostLease *lease, gboolean create, GError **refused)
{
  int folder_fd = _tessera_lock_folder_get_fd (lease->folder);
  gboolean made;
  int fd;

  if (folder_fd < 0)
    return -1;
  fd = openat (folder_fd, _TESSERA_POOL_HOSTS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create)
    {
      if (!_tessera_may_make_folder_in (folder_fd, lease->lock_folder, _TESSERA_POOL_HOSTS, refused))
        {
          errno = EACCES;
          return -1;
        }
      made = mkdirat (folder_fd, _TESSERA_POOL_HOSTS, 0777) == 0;
      fd = openat (folder_fd, _TESSERA_POOL_HOSTS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      /* Sticky where the pool's folder is (a group's pool): only a
       * file's owner (or root, or the folder's) removes a mark. Through
       * the folder just made, never by its path (which another folder may
       * hold by now). */
      if (made && fd >= 0)
        _tessera_share_like_parent_at (folder_fd, fd, lease->hosts_path);
    }
  return fd;
}

/* Whether locks on the pool's folder reach other hosts, as the mark and
 * heartbeats of this host state it (read once; the holder monitor reads
 * the same for the same folder). */
static gboolean
lease_locks_cross (TesseraHostLease *lease)
{
  int cross = g_atomic_int_get (&lease->locks_cross);

  if (cross == 0)
    {
      cross = _tessera_locks_cross_hosts (lease->lock_folder, NULL) ? 1 : -1;
      g_atomic_int_set (&lease->locks_cross, cross);
    }
  return cross > 0;
}

static char *
heartbeat_text (double time, gboolean locks_cross)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *renewal = g_uuid_string_random ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "host_id");
  json_builder_add_string_value (builder, _tessera_host_id ());
  json_builder_set_member_name (builder, "machine_id");
  json_builder_add_string_value (builder, _tessera_machine_id ());
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, _tessera_host_name ());
  json_builder_set_member_name (builder, "boot_id");
  json_builder_add_string_value (builder, _tessera_boot_id ());
  json_builder_set_member_name (builder, "lease");
  json_builder_add_double_value (builder, time);
  /* Whether this host's locks reach the other hosts: a host whose locks
   * cross refuses to share the pool with one whose locks do not. */
  json_builder_set_member_name (builder, "locks_cross");
  json_builder_add_boolean_value (builder, locks_cross);
  /* What `tessera hosts` shows of the host, as sinfo shows a node's. */
  json_builder_set_member_name (builder, "version");
  json_builder_add_string_value (builder, PACKAGE_VERSION);
  /* Two builds of one version tell themselves apart (older marks have
   * none: read as unknown). */
  json_builder_set_member_name (builder, "build");
  json_builder_add_string_value (builder, _tessera_build_id);
  json_builder_set_member_name (builder, "protocol");
  json_builder_add_int_value (builder, tessera_get_pool_protocol ());
  /* New at every renewal: what a reader sees change. */
  json_builder_set_member_name (builder, "renewal");
  json_builder_add_string_value (builder, renewal);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}

/* Whether @name is the temporary file of a heartbeat or of a mark
 * (HOSTID[.UID].lease.XXXXXX, HOSTID[.UID].host.XXXXXX, as
 * _tessera_write_file_atomic_at() names them). */
static gboolean
is_host_temporary (const char *name)
{
  gsize length = strlen (name);
  g_autofree char *target = NULL;
  g_autofree char *id = NULL;
  gint64 uid;
  gboolean has_view;
  guint64 view;

  if (length <= 7 || name[length - 7] != '.')
    return FALSE;
  for (const char *p = name + length - 6; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  target = g_strndup (name, length - 7);
  return host_file_kind (target, &id, &uid, &has_view, &view) != HOST_FILE_NONE;
}

gboolean
_tessera_host_file_name (const char  *name,
                         char       **id,
                         gboolean    *is_lease,
                         gboolean    *temporary)
{
  g_autofree char *target = NULL;
  gint64 uid;
  gboolean has_view;
  guint64 view;
  HostFileKind kind;

  *temporary = is_host_temporary (name);
  if (*temporary)
    target = g_strndup (name, strlen (name) - 7);
  kind = host_file_kind (*temporary ? target : name, id, &uid, &has_view, &view);
  *is_lease = kind == HOST_FILE_LEASE;
  return kind != HOST_FILE_NONE;
}

char *
_tessera_host_file_dup_host (int         hosts_fd,
                             const char *name)
{
  g_autofree char *text = _tessera_read_bounded_at (hosts_fd, name, TESSERA_HOST_LEASE_MAX_SIZE, NULL, NULL);
  g_autoptr(JsonNode) root = text != NULL ? tessera_json_parse (text, -1, NULL) : NULL;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return g_strdup (json_object_get_string_member_with_default (json_node_get_object (root), "host", NULL));
}

/* A renewer killed between writing its temporary file and renaming it
 * leaves the file: once per lease, a renewer removes from @hosts_fd the
 * temporary files of any host that this host has seen unchanged for the
 * lease (first-seen times on our monotonic clock, shared by the host's
 * processes). A writer still busy with one after a whole lease has lost
 * its lease anyway: its rename then fails, as its renewal had. Lock held. */
static void
sweep_temporaries_locked (TesseraHostLease *lease, int hosts_fd)
{
  gint64 now = g_get_monotonic_time ();
  gint64 bound = (gint64) (lease->time * G_USEC_PER_SEC);
  struct dirent *entry;
  DIR *dir;
  int fd;

  if (lease->time <= 0 || (lease->last_sweep_us != 0 && now - lease->last_sweep_us < bound))
    return;
  lease->last_sweep_us = now;
  fd = dup (hosts_fd);
  dir = fd >= 0 ? fdopendir (fd) : NULL;
  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *key = NULL;
      struct stat st;

      if (!is_host_temporary (entry->d_name) ||
          fstatat (hosts_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
        continue;
      key = g_strdup_printf ("host temporary\n%s/%s\n%" G_GUINT64_FORMAT "\n%" G_GINT64_FORMAT "\n%"
                             G_GINT64_FORMAT ".%09ld", lease->hosts_path, entry->d_name, (guint64) st.st_ino,
                             (gint64) st.st_size, (gint64) st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
      if (now - _tessera_first_seen (key) < bound)
        continue;
      /* In a sticky hosts/, another user's is left to her (EPERM). */
      if (unlinkat (hosts_fd, entry->d_name, 0) == 0 || errno == ENOENT)
        _tessera_forget_seen (key);
    }
  closedir (dir);
}

/* Writes this host's heartbeat anew, then sweeps hosts/. @started_us
 * (out): when the write began, on our monotonic clock: a reader may see
 * the new heartbeat from then on, so the lease runs from there, however
 * long the write takes. Lock held. */
static gboolean
renew_locked (TesseraHostLease *lease, gint64 *started_us, GError **error)
{
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) refused = NULL;
  gboolean ok;
  int fd;

  if (*_tessera_host_id () == '\0')
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED,
                   _("This host has no host id: it cannot renew its lease in %s"), lease->lock_folder);
      return FALSE;
    }
  name = own_host_file (LEASE_SUFFIX);
  path = g_build_filename (lease->hosts_path, name, NULL);
  *started_us = g_get_monotonic_time ();
  fd = open_hosts (lease, TRUE, &refused);
  if (fd < 0)
    {
      if (refused != NULL)
        g_propagate_error (error, g_steal_pointer (&refused));
      else
        _tessera_set_io_error (error, errno, _("Cannot renew this host's lease in %s: %s"), lease->hosts_path);
      return FALSE;
    }
  text = heartbeat_text (lease->time, lease_locks_cross (lease));
  ok = _tessera_write_file_atomic_at (fd, name, path, text, -1, FALSE, error);
  sweep_temporaries_locked (lease, fd);
  close (fd);
  return ok;
}

/* Renews, keeping the time of the last success; a failure is said once
 * until the next success. Lock held. */
static void
renew_and_note_locked (TesseraHostLease *lease)
{
  g_autoptr(GError) error = NULL;
  gint64 started_us;

  if (renew_locked (lease, &started_us, &error))
    {
      lease->last_renewal_us = started_us;
      if (lease->holdings > 0 && !lease->stopped)
        atomic_store (&lease->unrenewed_since_us, lease->last_renewal_us);
      lease->told = FALSE;
    }
  else if (!lease->told)
    {
      g_warning ("%s", error->message);
      lease->told = TRUE;
    }
}

static gboolean
on_renewal_due (gpointer data)
{
  TesseraHostLease *lease = data;

  g_mutex_lock (&lease->lock);
  if (!lease->stopped && lease->holdings > 0 && lease->time > 0)
    renew_and_note_locked (lease);
  g_mutex_unlock (&lease->lock);
  return G_SOURCE_CONTINUE;
}

/* The renewer's context, made where a failure can still be said: before
 * the first holding's lock file, not at the holding, when the command's
 * spare descriptors may all be gone. GLib aborts when it cannot make a
 * context's eventfd: one is made first to see that a descriptor is there,
 * and let go just before GLib makes its own. Lock held. */
static gboolean
make_context_locked (TesseraHostLease *lease, GError **error)
{
  int fd;

  if (lease->context != NULL)
    return TRUE;
  fd = eventfd (0, EFD_CLOEXEC);
  if (fd < 0)
    {
      _tessera_set_io_error (error, errno, _("Cannot renew this host's lease in %s: %s"), lease->hosts_path);
      return FALSE;
    }
  close (fd);
  lease->context = g_main_context_new ();
  lease->loop = g_main_loop_new (lease->context, FALSE);
  return TRUE;
}

/* Renewals on the renewer's thread, started at the first holding. Lock
 * held. */
static void
start_timer_locked (TesseraHostLease *lease)
{
  /* Made already, unless the holding came without _renew_first(). */
  if (lease->context == NULL)
    {
      lease->context = g_main_context_new ();
      lease->loop = g_main_loop_new (lease->context, FALSE);
    }
  if (lease->thread == NULL)
    lease->thread = g_thread_new ("tessera-lease", renewer_thread, lease);
  lease->timer = g_timeout_source_new ((guint) (renewal_interval_us (lease->time) / 1000));
  g_source_set_name (lease->timer, "tessera-host-lease");
  g_source_set_callback (lease->timer, on_renewal_due, lease_ref (lease), (GDestroyNotify) lease_unref);
  g_source_attach (lease->timer, lease->context);
}

gboolean
_tessera_host_lease_renew_first (TesseraHostLease *lease,
                                 GError           **error)
{
  gboolean ok = TRUE;
  gint64 started_us;

  g_mutex_lock (&lease->lock);
  /* Before the lock file exists: a holding whose heartbeat cannot be
   * written would be taken for dead by other hosts. */
  if (lease->time > 0 && !lease->stopped)
    {
      ok = make_context_locked (lease, error) && renew_locked (lease, &started_us, error);
      if (ok)
        {
          lease->last_renewal_us = started_us;
          if (lease->holdings > 0)
            atomic_store (&lease->unrenewed_since_us, lease->last_renewal_us);
          lease->told = FALSE;
        }
    }
  g_mutex_unlock (&lease->lock);
  return ok;
}

void
_tessera_host_lease_hold (TesseraHostLease *lease)
{
  g_mutex_lock (&lease->lock);
  if (lease->holdings++ == 0 && lease->time > 0 && !lease->stopped)
    {
      gint64 now = g_get_monotonic_time ();

      lease->holding_since_us = now;
      /* Renewed just before (_renew_first): counted from then on. */
      if (lease->last_renewal_us == 0 || now - lease->last_renewal_us > renewal_interval_us (lease->time))
        {
          lease->last_renewal_us = 0;
          /* Published before the renewal, which may hang. */
          atomic_store (&lease->unrenewed_since_us, now);
          renew_and_note_locked (lease);
        }
      else
        atomic_store (&lease->unrenewed_since_us, lease->last_renewal_us);
      start_timer_locked (lease);
    }
  g_mutex_unlock (&lease->lock);
}

void
_tessera_host_lease_unhold (TesseraHostLease *lease)
{
  g_mutex_lock (&lease->lock);
  if (lease->holdings > 0 && --lease->holdings == 0)
    {
      atomic_store (&lease->unrenewed_since_us, 0);
      stop_timer_locked (lease);
    }
  g_mutex_unlock (&lease->lock);
}

double
_tessera_host_lease_unrenewed_for (TesseraHostLease *lease)
{
  /* Never the lock: this is how the fence sees a renewal that hangs. */
  gint64 since = atomic_load (&lease->unrenewed_since_us);

  return since != 0 ? (double) (g_get_monotonic_time () - since) / G_USEC_PER_SEC : 0;
}

/* ---------------------------------------------------------------------- */
/* Judging another host's lease */

/* One file of hosts/, as a reader lists it. */
typedef struct
{
  char *name;
  char *id;          /* the host id it is named for */
  gint64 uid;        /* the uid it is named for; -1: a name of the older kind */
  gboolean has_view; /* a mark of a view of the pool, not of the host */
  guint64 view;      /* then, the view it is named for */
  HostFileKind kind;
} HostFile;

static void
host_file_free (HostFile *file)
{
  g_free (file->name);
  g_free (file->id);
  g_free (file);
}

static int
compare_host_files (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(HostFile * const *) a)->name, (*(HostFile * const *) b)->name);
}

/* The heartbeats and marks in hosts/ (@hosts_fd, left open), by name: the
 * one listing of hosts/ that its readers make. NULL, errno set, when it
 * cannot be listed. */
static GPtrArray *
list_host_files (int hosts_fd)
{
  GPtrArray *files;
  struct dirent *entry;
  int fd = dup (hosts_fd);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;

  if (dir == NULL)
    {
      int saved = errno;

      if (fd >= 0)
        close (fd);
      errno = saved;
      return NULL;
    }
  rewinddir (dir);
  files = g_ptr_array_new_with_free_func ((GDestroyNotify) host_file_free);
  while ((entry = readdir (dir)) != NULL)
    {
      HostFile *file = g_new0 (HostFile, 1);

      file->kind = host_file_kind (entry->d_name, &file->id, &file->uid, &file->has_view, &file->view);
      if (file->kind == HOST_FILE_NONE)
        {
          host_file_free (file);
          continue;
        }
      file->name = g_strdup (entry->d_name);
      g_ptr_array_add (files, file);
    }
  closedir (dir);
  g_ptr_array_sort (files, compare_host_files);
  return files;
}

/* What a file of hosts/ says, and whether it may be trusted to. */
typedef struct
{
  struct stat st;        /* st_mode 0: gone */
  char *text;            /* NULL when it cannot be read */
  gboolean locks_cross;  /* as it states; FALSE when it cannot be trusted */
  char *host;            /* the host name it states; NULL: none */
  char *boot_id;         /* the boot it states; NULL: none */
  const char *distrust;  /* (untranslated) why it cannot be trusted; NULL when it can */
} HostFileSays;

static void
host_file_says_clear (HostFileSays *says)
{
  g_clear_pointer (&says->text, g_free);
  g_clear_pointer (&says->host, g_free);
  g_clear_pointer (&says->boot_id, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (HostFileSays, host_file_says_clear)

/* The string @object states as @name; NULL when none. */
static const char *
string_member (JsonObject *object, const char *name)
{
  JsonNode *member = json_object_get_member (object, name);

  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (member);
}

/* Reads @file in hosts/ (@hosts_fd): a regular file, never through a
 * link, never larger than TESSERA_HOST_LEASE_MAX_SIZE, strict JSON, and
 * one named for a uid is that user's; the hosts may be trusted with what
 * it states of their locks only then. A file that says nothing of them:
 * a heartbeat of an older Tessera (HOSTID.lease) is taken to cross, its
 * mark (HOSTID.host) not: it wrote marks only where locks do not cross. */
static void
read_host_file (int hosts_fd, const HostFile *file, HostFileSays *says)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonObject *object;
  JsonNode *root, *member;

  memset (says, 0, sizeof *says);
  if (fstatat (hosts_fd, file->name, &says->st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno != ENOENT)
        says->distrust = N_("it cannot be looked at");
      says->st.st_mode = 0;
      return;
    }
  if (!S_ISREG (says->st.st_mode))
    {
      says->distrust = N_("it is not a regular file");
      return;
    }
  if ((says->text = _tessera_read_bounded_at (hosts_fd, file->name, TESSERA_HOST_LEASE_MAX_SIZE, NULL,
                                              &says->st)) == NULL)
    {
      says->distrust = errno == ENOENT ? NULL : N_("it cannot be read");
      if (errno == ENOENT)
        says->st.st_mode = 0;
      return;
    }
  if (file->uid >= 0 && (gint64) says->st.st_uid != file->uid)
    {
      says->distrust = N_("it belongs to another user than the one it is named for");
      return;
    }
  if (!_tessera_json_load (parser, says->text, strlen (says->text), NULL) ||
      !JSON_NODE_HOLDS_OBJECT ((root = json_parser_get_root (parser))))
    {
      says->distrust = N_("it is not a JSON object");
      return;
    }
  object = json_node_get_object (root);
  says->host = g_strdup (json_object_get_string_member_with_default (object, "host", NULL));
  says->boot_id = g_strdup (string_member (object, "boot_id"));
  member = json_object_get_member (object, "locks_cross");
  if (member == NULL && file->uid < 0)
    says->locks_cross = file->kind == HOST_FILE_LEASE;
  else if (member != NULL && JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_BOOLEAN)
    says->locks_cross = json_node_get_boolean (member);
  else
    says->distrust = N_("it does not say whether its host's locks cross hosts");
}

/* Reads hosts/@name: a regular file, never through a link, never larger
 * than TESSERA_HOST_LEASE_MAX_SIZE. NULL when it is not there or not one. */
static char *
read_heartbeat (int hosts_fd, const char *name, struct stat *st)
{
  return _tessera_read_bounded_at (hosts_fd, name, TESSERA_HOST_LEASE_MAX_SIZE, NULL, st);
}

/* The lease time a heartbeat states, within the bounds; 0 when none. */
static double
stated_time (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *root, *member;

  if (!_tessera_json_load (parser, text, strlen (text), NULL))
    return 0;
  root = json_parser_get_root (parser);
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return 0;
  member = json_object_get_member (json_node_get_object (root), "lease");
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      (json_node_get_value_type (member) != G_TYPE_DOUBLE && json_node_get_value_type (member) != G_TYPE_INT64))
    return 0;
  return CLAMP (json_node_get_double (member), 0, TESSERA_HOST_LEASE_MAX);
}

gboolean
_tessera_host_lease_expired (TesseraHostLease *lease,
                             const char       *host_id)
{
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GString) key = NULL;
  double time;
  Seen *seen;
  gboolean expired, any = FALSE;
  int fd;

  g_mutex_lock (&lease->lock);
  time = lease->time;
  g_mutex_unlock (&lease->lock);
  /* Only another host's well-formed id names a file here. */
  if (time <= 0 || host_id == NULL || !_tessera_is_host_id (host_id) || strcmp (host_id, _tessera_host_id ()) == 0)
    return FALSE;
  fd = open_hosts (lease, FALSE, NULL);
  if (fd < 0)
    return FALSE;
  files = list_host_files (fd);
  /* The host's heartbeats, one per user that holds there: the host lives
   * while any is renewed, so what is seen is all of them. */
  key = g_string_new ("host lease\n");
  g_string_append (key, lease->hosts_path);
  for (guint i = 0; files != NULL && i < files->len; i++)
    {
      const HostFile *file = g_ptr_array_index (files, i);
      g_auto(HostFileSays) says = { 0 };

      if (file->kind != HOST_FILE_LEASE || strcmp (file->id, host_id) != 0)
        continue;
      read_host_file (fd, file, &says);
      if (says.st.st_mode == 0 && says.distrust == NULL)
        continue;   /* gone */
      if (says.distrust != NULL)
        {
          /* Closed: its holders count. */
          close (fd);
          return FALSE;
        }
      any = TRUE;
      time = MAX (time, stated_time (says.text));
      g_string_append_printf (key, "\n%s\n%" G_GUINT64_FORMAT "\n%s", file->name, (guint64) says.st.st_ino,
                              says.text);
    }
  close (fd);
  if (!any)
    return FALSE;   /* no heartbeat: this host is not judged by a lease */

  g_mutex_lock (&lease->lock);
  seen = g_hash_table_lookup (lease->seen, host_id);
  if (seen == NULL || strcmp (seen->key, key->str) != 0)
    {
      /* Renewed since we last looked: what we remembered of the last
       * heartbeat goes, for every process of this host. */
      if (seen != NULL)
        _tessera_forget_seen (seen->key);
      seen = g_new0 (Seen, 1);
      seen->key = g_strdup (key->str);
      seen->first_seen_us = _tessera_first_seen (seen->key);
      g_hash_table_replace (lease->seen, g_strdup (host_id), seen);
    }
  expired = (double) (g_get_monotonic_time () - seen->first_seen_us) / G_USEC_PER_SEC >= time;
  g_mutex_unlock (&lease->lock);
  return expired;
}

/* ipc.lock excludes another host only where both hosts' locks cross
 * hosts: each user of each host that uses the pool leaves a mark,
 * hosts/HOSTID.UID.host (a heartbeat that states no lease, and whether
 * the host's locks cross; written once, kept), before it grants anything,
 * and a mark of the view of the pool it reaches it through
 * (HOSTID.UID.vVIEW.host), then looks at the other hosts' marks and
 * heartbeats, and at the marks of this host's other views. Of two hosts that
 * start at once, each writes before it looks, so at least one sees the
 * other (both may, and both refuse: closed, as it must fail). In a
 * group's pool hosts/ is sticky: no member removes another's mark to hide
 * her host; a file that cannot be trusted counts as a host whose locks
 * do not cross. */

/* Whether this user's mark hosts/@name in @hosts_fd is to be written
 * (again): missing, not a regular file of ours, or, at this process's
 * first look, one that does not state what this process's locks do (one
 * that claims locks that cross where ours do not; one that says they do
 * not stays: another process of this user may use a lock-less view). A
 * mark of a view (@exact), which only processes with the same locks
 * write, is written again too when it states others, or another boot. */
static gboolean
mark_to_write (TesseraHostLease *lease, int hosts_fd, const char *name, gboolean locks_cross, gboolean exact)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autofree char *text = NULL;
  struct stat st;
  JsonNode *root, *member;

  if (fstatat (hosts_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    return TRUE;
  if (lease->marked)
    return FALSE;
  parser = json_parser_new_immutable ();
  if ((text = read_heartbeat (hosts_fd, name, &st)) == NULL || !_tessera_json_load (parser, text, strlen (text), NULL))
    return TRUE;
  root = json_parser_get_root (parser);
  member = JSON_NODE_HOLDS_OBJECT (root) ? json_object_get_member (json_node_get_object (root), "locks_cross") : NULL;
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) || json_node_get_value_type (member) != G_TYPE_BOOLEAN)
    return TRUE;
  if (exact)
    return json_node_get_boolean (member) != locks_cross ||
           g_strcmp0 (string_member (json_node_get_object (root), "boot_id"), _tessera_boot_id ()) != 0;
  return json_node_get_boolean (member) && !locks_cross;
}

char *
_tessera_host_lease_mark_and_dup_other_host (TesseraHostLease  *lease,
                                             char             **host_name,
                                             char             **owner,
                                             const char       **distrust,
                                             GError           **error)
{
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  g_autofree char *view_name = NULL;
  g_autofree char *view_path = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GError) refused = NULL;
  gboolean locks_cross = lease_locks_cross (lease);
  char *found = NULL;
  struct stat st;
  int fd;

  if (host_name != NULL)
    *host_name = NULL;
  if (owner != NULL)
    *owner = NULL;
  if (distrust != NULL)
    *distrust = NULL;
  if (*_tessera_host_id () == '\0')
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_FAILED,
                   _("This host has no host id: it cannot tell itself from other hosts in %s"), lease->lock_folder);
      return NULL;
    }
  fd = open_hosts (lease, TRUE, &refused);
  if (fd < 0)
    {
      if (refused != NULL)
        g_propagate_error (error, g_steal_pointer (&refused));
      else
        _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), lease->hosts_path);
      return NULL;
    }
  /* hosts/ of a group's pool made by an older Tessera is not sticky:
   * its owner's first look here makes it so (as it is made now). */
  if (!lease->marked)
    _tessera_share_like_parent (fd, lease->hosts_path);
  name = own_host_file (MARK_SUFFIX);
  path = g_build_filename (lease->hosts_path, name, NULL);
  if (mark_to_write (lease, fd, name, locks_cross, FALSE))
    {
      g_autofree char *text = heartbeat_text (0, locks_cross);

      if (!_tessera_write_file_atomic_at (fd, name, path, text, -1, TRUE, error))
        {
          close (fd);
          return NULL;
        }
    }
  /* The view of the pool this process reaches it through: the device of
   * hosts/ here. Another mount of one file system (a bind mount) has the
   * same, and the same locks; a FUSE view of it has another. */
  if (!lease->marked)
    {
      if (fstat (fd, &st) < 0)
        {
          _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), lease->hosts_path);
          close (fd);
          return NULL;
        }
      lease->view = (guint64) st.st_dev;
    }
  view_name = own_view_mark (lease->view);
  view_path = g_build_filename (lease->hosts_path, view_name, NULL);
  if (mark_to_write (lease, fd, view_name, locks_cross, TRUE))
    {
      g_autofree char *text = heartbeat_text (0, locks_cross);

      if (!_tessera_write_file_atomic_at (fd, view_name, view_path, text, -1, TRUE, error))
        {
          close (fd);
          return NULL;
        }
    }
  lease->marked = TRUE;
  files = list_host_files (fd);
  if (files == NULL)
    {
      _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), lease->hosts_path);
      close (fd);
      return NULL;
    }
  for (guint i = 0; found == NULL && i < files->len; i++)
    {
      const HostFile *file = g_ptr_array_index (files, i);
      g_auto(HostFileSays) says = { 0 };

      gboolean this_host = strcmp (file->id, _tessera_host_id ()) == 0;

      /* Of this host, only the marks of its other views: on one host too,
       * locks taken through one view reach another only where both
       * cross hosts. */
      if (this_host && (!file->has_view || file->view == lease->view))
        continue;
      read_host_file (fd, file, &says);
      if (says.st.st_mode == 0 && says.distrust == NULL)
        continue;   /* gone */
      /* A view of an earlier boot: its processes are gone. Where either
       * boot id could not be read (""), it may be of this boot. */
      if (this_host && says.distrust == NULL && says.boot_id != NULL && *says.boot_id != '\0' &&
          *_tessera_boot_id () != '\0' && strcmp (says.boot_id, _tessera_boot_id ()) != 0)
        continue;
      /* Where our locks cross, only a host whose locks do not, or a file
       * that cannot be trusted to say they do. */
      if (says.distrust == NULL && says.locks_cross && locks_cross)
        continue;
      found = g_strdup (file->name);
      if (host_name != NULL)
        *host_name = g_steal_pointer (&says.host);
      if (owner != NULL && says.st.st_mode != 0)
        *owner = _tessera_dup_user_name (says.st.st_uid);
      if (distrust != NULL && says.distrust != NULL)
        *distrust = _(says.distrust);
    }
  close (fd);
  if (found == NULL)
    found = g_strdup ("");
  return found;
}

/* One host of _tessera_host_lease_list_hosts(), as its files say. */
typedef struct
{
  char *id;
  char *host;
  char *version;
  char *build;          /* its Tessera's build; NULL from one older than that */
  gint64 protocol;
  GArray *uids;         /* gint64, each once */
  gboolean locks_cross;
  gboolean distrusted;
  const char *distrust;
  gint64 newest_beat;   /* µs since the epoch; 0: none */
} HostSeen;

static void
host_seen_free (HostSeen *seen)
{
  g_free (seen->id);
  g_free (seen->host);
  g_free (seen->version);
  g_free (seen->build);
  g_array_unref (seen->uids);
  g_free (seen);
}

JsonNode *
_tessera_host_lease_list_hosts (const char  *lock_folder,
                                GError     **error)
{
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GHashTable) by_id = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                       (GDestroyNotify) host_seen_free);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  int lock_folder_fd = _tessera_open_folder_path (lock_folder, FALSE, error);
  int hosts_fd;
  gint64 now = g_get_real_time ();

  if (lock_folder_fd < 0)
    return NULL;
  hosts_fd = openat (lock_folder_fd, _TESSERA_POOL_HOSTS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  close (lock_folder_fd);
  if (hosts_fd < 0 && errno != ENOENT)
    {
      g_autofree char *hosts = g_build_filename (lock_folder, _TESSERA_POOL_HOSTS, NULL);

      _tessera_set_io_error (error, errno, _("Cannot open %s: %s"), hosts);
      return NULL;
    }
  files = hosts_fd >= 0 ? list_host_files (hosts_fd) : NULL;
  for (guint i = 0; files != NULL && i < files->len; i++)
    {
      const HostFile *file = g_ptr_array_index (files, i);
      g_auto(HostFileSays) says = { 0 };
      HostSeen *seen = g_hash_table_lookup (by_id, file->id);
      g_autoptr(JsonParser) parser = json_parser_new_immutable ();
      gint64 uid = file->uid;

      read_host_file (hosts_fd, file, &says);
      if (says.st.st_mode == 0 && says.distrust == NULL)
        continue;   /* gone meanwhile */
      if (seen == NULL)
        {
          seen = g_new0 (HostSeen, 1);
          seen->id = g_strdup (file->id);
          seen->protocol = -1;
          seen->locks_cross = TRUE;
          seen->uids = g_array_new (FALSE, FALSE, sizeof (gint64));
          g_hash_table_insert (by_id, seen->id, seen);
          g_ptr_array_add (order, seen);
        }
      if (uid < 0 && says.st.st_mode != 0)
        uid = says.st.st_uid;   /* an older Tessera's file: its owner's */
      if (uid >= 0)
        {
          gboolean known = FALSE;

          for (guint j = 0; j < seen->uids->len; j++)
            known = known || g_array_index (seen->uids, gint64, j) == uid;
          if (!known)
            g_array_append_val (seen->uids, uid);
        }
      if (says.distrust != NULL)
        {
          seen->distrusted = TRUE;
          seen->distrust = says.distrust;
          seen->locks_cross = FALSE;
          continue;
        }
      seen->locks_cross = seen->locks_cross && says.locks_cross;
      if (says.host != NULL && seen->host == NULL)
        seen->host = g_strdup (says.host);
      if (file->kind == HOST_FILE_LEASE || seen->newest_beat == 0)
        {
          gint64 when = (gint64) says.st.st_mtim.tv_sec * G_USEC_PER_SEC + says.st.st_mtim.tv_nsec / 1000;

          seen->newest_beat = MAX (seen->newest_beat, when);
        }
      /* What Tessera the host runs: its files say (newer ones do). */
      if (says.text != NULL && _tessera_json_load (parser, says.text, strlen (says.text), NULL) &&
          JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        {
          JsonObject *object = json_node_get_object (json_parser_get_root (parser));
          JsonNode *version = json_object_get_member (object, "version");
          JsonNode *build = json_object_get_member (object, "build");
          JsonNode *protocol = json_object_get_member (object, "protocol");

          if (version != NULL && JSON_NODE_HOLDS_VALUE (version) &&
              json_node_get_value_type (version) == G_TYPE_STRING && seen->version == NULL)
            seen->version = g_strdup (json_node_get_string (version));
          if (build != NULL && JSON_NODE_HOLDS_VALUE (build) &&
              json_node_get_value_type (build) == G_TYPE_STRING && seen->build == NULL)
            seen->build = g_strdup (json_node_get_string (build));
          if (protocol != NULL && JSON_NODE_HOLDS_VALUE (protocol) &&
              json_node_get_value_type (protocol) == G_TYPE_INT64)
            seen->protocol = MAX (seen->protocol, json_node_get_int (protocol));
        }
    }
  if (hosts_fd >= 0)
    close (hosts_fd);

  json_builder_begin_array (builder);
  for (guint i = 0; i < order->len; i++)
    {
      HostSeen *seen = g_ptr_array_index (order, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "host_id");
      json_builder_add_string_value (builder, seen->id);
      json_builder_set_member_name (builder, "host");
      if (seen->host != NULL && g_utf8_validate (seen->host, -1, NULL))
        json_builder_add_string_value (builder, seen->host);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "this_host");
      json_builder_add_boolean_value (builder, strcmp (seen->id, _tessera_host_id ()) == 0);
      json_builder_set_member_name (builder, "uids");
      json_builder_begin_array (builder);
      for (guint j = 0; j < seen->uids->len; j++)
        json_builder_add_int_value (builder, g_array_index (seen->uids, gint64, j));
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "locks_cross");
      json_builder_add_boolean_value (builder, seen->locks_cross);
      json_builder_set_member_name (builder, "distrust");
      if (seen->distrust != NULL)
        json_builder_add_string_value (builder, _(seen->distrust));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "heartbeat_age");
      if (seen->newest_beat > 0)
        json_builder_add_double_value (builder, MAX (0, now - seen->newest_beat) / 1e6);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "version");
      if (seen->version != NULL && g_utf8_validate (seen->version, -1, NULL))
        json_builder_add_string_value (builder, seen->version);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "build");
      if (seen->build != NULL && g_utf8_validate (seen->build, -1, NULL))
        json_builder_add_string_value (builder, seen->build);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "protocol");
      if (seen->protocol >= 0)
        json_builder_add_int_value (builder, seen->protocol);
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  return json_builder_get_root (builder);
}
