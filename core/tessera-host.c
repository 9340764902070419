/* tessera-host.c: who we are — this host's ids and our pid namespace, the
 * facts a process spec records so that a reader can tell whether a pid
 * check means anything to it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-host-private.h"
#include "tessera-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The random half of the host id: cloned images share /etc/machine-id, so
 * each host also draws an id once and keeps it in host-local state that
 * survives reboots: /var/tmp (local to the machine).
 *
 * /var/tmp is everyone's: a file there is taken only when it is a regular
 * file of root's or ours, writable by no one else, with one link. And an
 * image cloned with the file in it must not share the id: the file
 * records, beside the id, the machine id and the device and inode the
 * file had when it was written. A copy (an image built or unpacked, a
 * file copied by hand) has another inode, a host with its own machine id
 * another machine id: either way the id is drawn again. (A block-level
 * clone that also keeps /etc/machine-id keeps all three: such clones must
 * get their own machine id, as systemd-firstboot and cloud-init give.)
 *
 * When the shared file cannot be ours (another user's, or root's and out
 * of date while we are not root), a per-user one in /var/tmp/tessera-UID
 * (ours, 0700) serves: our holders then look like another host's to the
 * other users, who judge them by their job lock. Root's file, made by any
 * root run of Tessera, serves every user. */
#define HOST_ID_FOLDER "/var/tmp"
#define HOST_ID_NAME "tessera-host-identity"
#define HOST_ID_USER_NAME "host-identity"
#define HOST_ID_LENGTH 32
#define HOST_ID_FILE_MAX 512

gboolean
_tessera_is_host_id (const char *text)
{
  if (strlen (text) != HOST_ID_LENGTH)
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p) || g_ascii_isupper (*p))
      return FALSE;
  return TRUE;
}

/* Reads a small file without following a symbolic link; "" when it cannot. */
static char *
read_small_file (const char *path)
{
  char *data = _tessera_read_bounded_at (AT_FDCWD, path, 256, NULL, NULL);

  return data != NULL ? g_strstrip (data) : g_strdup ("");
}

typedef enum
{
  HOST_ID_OK,
  HOST_ID_MISSING,
  HOST_ID_STALE,     /* ours (or root's) but not this host's, or garbled */
  HOST_ID_FOREIGN,   /* not a file we may trust at all */
} HostIdState;

/* What the host id file says of the host that wrote it. */
static char *
host_id_binding (dev_t device, ino_t inode)
{
  return g_strdup_printf ("machine-id %s\ndevice %u:%u\ninode %" G_GUINT64_FORMAT "\n", _tessera_machine_id (),
                          major (device), minor (device), (guint64) inode);
}

/* Reads @name in @dir_fd; the id in @id when it is OK; in @st_out what
 * the file is, when there is one. */
static HostIdState
load_host_id (int dir_fd, const char *name, char **id, struct stat *st_out)
{
  struct stat st = { 0 };
  g_autofree char *text = _tessera_read_bounded_at (dir_fd, name, HOST_ID_FILE_MAX, NULL, &st);
  g_autofree char *binding = NULL;
  const char *newline;
  int saved = errno;

  if (st.st_mode == 0)   /* not opened */
    return saved == ENOENT ? HOST_ID_MISSING : HOST_ID_FOREIGN;
  if (st_out != NULL)
    *st_out = st;
  if (!S_ISREG (st.st_mode) || st.st_nlink != 1 ||
      (st.st_uid != 0 && st.st_uid != geteuid ()) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return HOST_ID_FOREIGN;
  if (text == NULL)
    return HOST_ID_STALE;   /* too large, or unreadable */
  binding = host_id_binding (st.st_dev, st.st_ino);
  newline = strchr (text, '\n');
  if (newline == NULL || newline - text != HOST_ID_LENGTH || strcmp (newline + 1, binding) != 0)
    return HOST_ID_STALE;
  *id = g_strndup (text, HOST_ID_LENGTH);
  if (_tessera_is_host_id (*id))
    return HOST_ID_OK;
  g_clear_pointer (id, g_free);
  return HOST_ID_STALE;
}

/* Draws a host id and writes it whole as @name in @dir_fd: a temporary
 * file (O_EXCL, never through a link) renamed to @name without replacing
 * it when it is missing (if another process made it first, its id wins),
 * over it when @replace. */
static void
create_host_id (int dir_fd, const char *name, gboolean replace)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *tmp = NULL;
  g_autofree char *binding = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  struct stat st;
  gboolean written;
  int fd = -1;

  for (int attempt = 0; fd < 0 && attempt < 100; attempt++)
    {
      g_free (tmp);
      tmp = g_strdup_printf (".%s.%08x", name, g_random_int ());
      fd = openat (dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST)
        break;
    }
  if (fd < 0)
    {
      g_debug ("Cannot create a host id file beside %s: %s", name, g_strerror (errno));
      return;
    }
  for (const char *p = uuid; *p != '\0'; p++)
    if (*p != '-')
      g_string_append_c (text, *p);
  g_string_append_c (text, '\n');
  written = fchmod (fd, 0644) == 0 && fstat (fd, &st) == 0;
  if (written)
    {
      binding = host_id_binding (st.st_dev, st.st_ino);
      g_string_append (text, binding);
      written = write (fd, text->str, text->len) == (gssize) text->len && fsync (fd) == 0;
    }
  close (fd);
  /* Renamed, not linked, where the file system can refuse to replace: a
   * reader never sees the file with two links (which it would refuse). */
  if (written && replace && renameat (dir_fd, tmp, dir_fd, name) < 0)
    g_debug ("Cannot replace %s: %s", name, g_strerror (errno));
  else if (written && !replace && renameat2 (dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE) < 0 &&
           errno != EEXIST && (errno != EINVAL || (linkat (dir_fd, tmp, dir_fd, name, 0) < 0 && errno != EEXIST)))
    g_debug ("Cannot create %s: %s", name, g_strerror (errno));
  unlinkat (dir_fd, tmp, 0);
}

/* The host id kept as @name in @dir_fd, made or remade when it may be;
 * NULL when this file cannot give one. */
static char *
host_id_in (int dir_fd, const char *name)
{
  for (int attempt = 0; attempt < 3; attempt++)
    {
      char *id = NULL;
      struct stat st = { 0 };

      switch (load_host_id (dir_fd, name, &id, &st))
        {
        case HOST_ID_OK:
          return id;
        case HOST_ID_MISSING:
          create_host_id (dir_fd, name, FALSE);
          break;
        case HOST_ID_STALE:
          if (st.st_uid != geteuid ())
            return NULL;
          create_host_id (dir_fd, name, TRUE);
          break;
        case HOST_ID_FOREIGN:
          /* Only root may replace what another user put in /var/tmp;
           * a folder stays (rename() refuses it). */
          if (geteuid () != 0 || S_ISDIR (st.st_mode))
            return NULL;
          create_host_id (dir_fd, name, TRUE);
          break;
        }
    }
  return NULL;
}

/* The host id: the shared file's, else our per-user one's; "" if none. */
static char *
load_or_create_host_id (void)
{
  g_autofree char *user = g_strdup_printf ("tessera-%u", (unsigned) geteuid ());
  char *id = NULL;
  struct stat st;
  int dir_fd = open (HOST_ID_FOLDER, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int user_fd;

  if (dir_fd < 0)
    return g_strdup ("");
  if ((id = host_id_in (dir_fd, HOST_ID_NAME)) != NULL)
    {
      close (dir_fd);
      return id;
    }
  if (mkdirat (dir_fd, user, 0700) < 0 && errno != EEXIST)
    g_debug ("Cannot create %s/%s: %s", HOST_ID_FOLDER, user, g_strerror (errno));
  user_fd = openat (dir_fd, user, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  close (dir_fd);
  if (user_fd < 0)
    return g_strdup ("");
  if (fstat (user_fd, &st) == 0 && st.st_uid == geteuid () && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
    id = host_id_in (user_fd, HOST_ID_USER_NAME);
  close (user_fd);
  return id != NULL ? id : g_strdup ("");
}

/**
 * _tessera_machine_id:
 *
 * Returns: `/etc/machine-id`, or "" when there is none
 */
const char *
_tessera_machine_id (void)
{
  static gsize once = 0;
  static char *machine_id = NULL;

  if (g_once_init_enter (&once))
    {
      machine_id = read_small_file ("/etc/machine-id");
      g_once_init_leave (&once, 1);
    }
  return machine_id;
}

/**
 * _tessera_host_id:
 *
 * Returns: this host's random id (32 hex digits), created on first use,
 *   or "" when it can be neither read nor made
 */
const char *
_tessera_host_id (void)
{
  static gsize once = 0;
  static char *host_id = NULL;

  if (g_once_init_enter (&once))
    {
      host_id = load_or_create_host_id ();
      g_once_init_leave (&once, 1);
    }
  return host_id;
}

/**
 * _tessera_pid_namespace:
 *
 * Pids are numbers in a pid namespace: this is ours (the inode of
 * `/proc/self/ns/pid`). When the `/proc` we see belongs to another
 * namespace (a pid namespace without its own /proc mounted), a pid check
 * there would be about other processes, so the namespace is unknown.
 *
 * Returns: the namespace's inode, or 0 when unknown
 */
guint64
_tessera_pid_namespace (void)
{
  static gsize once = 0;
  static guint64 ns = 0;

  if (g_once_init_enter (&once))
    {
      g_autofree char *self = g_file_read_link ("/proc/self", NULL);
      struct stat st;

      if (self != NULL && g_ascii_strtoll (self, NULL, 10) == (gint64) getpid () &&
          stat ("/proc/self/ns/pid", &st) == 0)
        ns = (guint64) st.st_ino;
      g_once_init_leave (&once, 1);
    }
  return ns;
}

/**
 * _tessera_is_this_host:
 * @machine_id: (nullable): a recorded machine id
 * @host_id: (nullable): a recorded host id
 *
 * A process is on our host only when both ids were recorded and match
 * ours, and ours are known.
 *
 * Returns: whether the ids are this host's
 */
gboolean
_tessera_is_this_host (const char *machine_id,
                       const char *host_id)
{
  return host_id != NULL && *_tessera_host_id () != '\0' &&
         strcmp (host_id, _tessera_host_id ()) == 0 &&
         g_strcmp0 (machine_id != NULL ? machine_id : "", _tessera_machine_id ()) == 0;
}

/* ---------------------------------------------------------------------- */
/* What this host has seen: first-seen times on the monotonic clock, kept
 * in host-local state so that every process of the host (short-lived
 * commands as well as long waiters) judges an orphan's age alike. The
 * clock restarts at boot, so the folder is per boot id; it is per user,
 * so no user can forge another's observations. */

static char *
seen_folder (void)
{
  return g_strdup_printf ("/var/tmp/tessera-%u/seen-%s", (unsigned) getuid (),
                          *_tessera_boot_id () != '\0' ? _tessera_boot_id () : "unknown");
}

/* Removes the folders of earlier boots (their times mean nothing now). */
static void
forget_other_boots (const char *parent, const char *keep)
{
  g_autoptr(GDir) dir = g_dir_open (parent, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autoptr(GDir) old = NULL;
      const char *file;

      if (!g_str_has_prefix (name, "seen-") || strcmp (name, keep) == 0)
        continue;
      path = g_build_filename (parent, name, NULL);
      old = g_dir_open (path, 0, NULL);
      while (old != NULL && (file = g_dir_read_name (old)) != NULL)
        {
          g_autofree char *victim = g_build_filename (path, file, NULL);
          g_unlink (victim);
        }
      g_rmdir (path);
    }
}

/* The folder, made when missing; NULL when it is not ours to use. */
static char *
seen_folder_ready (void)
{
  g_autofree char *folder = seen_folder ();
  g_autofree char *parent = g_path_get_dirname (folder);
  g_autofree char *base = g_path_get_basename (folder);
  struct stat st;

  if (g_mkdir (parent, 0700) < 0 && errno != EEXIST)
    return NULL;
  if (g_lstat (parent, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ())
    return NULL;
  if (g_mkdir (folder, 0700) == 0)
    forget_other_boots (parent, base);
  else if (errno != EEXIST)
    return NULL;
  if (g_lstat (folder, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ())
    return NULL;
  return g_steal_pointer (&folder);
}

static char *
seen_path (const char *folder, const char *key)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key, -1);

  return g_build_filename (folder, digest, NULL);
}

static gint64
read_seen (const char *path)
{
  g_autofree char *text = read_small_file (path);
  char *end = NULL;
  gint64 when = g_ascii_strtoll (text, &end, 10);

  return *text != '\0' && end != NULL && *end == '\0' && when > 0 ? when : 0;
}

/* Records are dropped when their file is judged, but a file deleted by its
 * owner leaves one: once per process, drop those a day old (by the times
 * they hold, on this boot's monotonic clock). */
static void
drop_old_records (const char *folder)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
      gint64 limit = g_get_monotonic_time () - (gint64) 24 * 3600 * G_USEC_PER_SEC;
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (folder, name, NULL);
          gint64 when = read_seen (path);

          if (when > 0 && when < limit)
            g_unlink (path);
        }
      g_once_init_leave (&once, 1);
    }
}

/**
 * _tessera_first_seen:
 * @key: what was seen (a file and the stat values that tell it from the
 *   next one of the same name)
 *
 * Returns: when this host first saw @key, in g_get_monotonic_time()'s
 *   microseconds: now when it never did (or cannot remember)
 */
gint64
_tessera_first_seen (const char *key)
{
  g_autofree char *folder = seen_folder_ready ();
  g_autofree char *path = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *text = NULL;
  gint64 now = g_get_monotonic_time ();
  gint64 when;
  int fd;

  if (folder == NULL)
    return now;
  drop_old_records (folder);
  path = seen_path (folder, key);
  if ((when = read_seen (path)) > 0)
    return MIN (when, now);
  /* Written whole, then linked: the first writer's time wins. */
  tmp = g_build_filename (folder, ".seen-XXXXXX", NULL);
  fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return now;
  text = g_strdup_printf ("%" G_GINT64_FORMAT "\n", now);
  if (write (fd, text, strlen (text)) == (gssize) strlen (text) &&
      link (tmp, path) < 0 && errno == EEXIST && (when = read_seen (path)) > 0)
    now = MIN (when, now);
  close (fd);
  g_unlink (tmp);
  return now;
}

/**
 * _tessera_forget_seen:
 * @key: as given to _tessera_first_seen()
 *
 * Drops what this host remembers of @key (the file is gone).
 */
void
_tessera_forget_seen (const char *key)
{
  g_autofree char *folder = seen_folder ();
  g_autofree char *path = seen_path (folder, key);

  g_unlink (path);
}

/* ---------------------------------------------------------------------- */
/* Whether locks cross hosts where a pool lives */

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *
unescape_mount_field (const char *field)
{
  GString *out = g_string_new (NULL);

  for (const char *p = field; *p != '\0'; p++)
    {
      if (p[0] == '\\' && g_ascii_isdigit (p[1]) && g_ascii_isdigit (p[2]) && g_ascii_isdigit (p[3]))
        {
          g_string_append_c (out, (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0')));
          p += 3;
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static gboolean
has_option (const char *options, const char *option)
{
  g_auto(GStrv) parts = g_strsplit (options, ",", -1);

  for (guint i = 0; parts[i] != NULL; i++)
    if (strcmp (parts[i], option) == 0 || (g_str_has_suffix (option, "=") && g_str_has_prefix (parts[i], option)))
      return TRUE;
  return FALSE;
}

/* One mount of the mount table: where, what, with which options (the
 * mount's and the super block's, joined). */
typedef struct
{
  char *point;
  char *type;
  char *options;
} MountEntry;

static void
mount_entry_clear (gpointer data)
{
  MountEntry *entry = data;

  g_free (entry->point);
  g_free (entry->type);
  g_free (entry->options);
}

/* The mount table, read once per process while it holds: every run asks
 * for the pool's folder, its job folder and its host lease's, from the
 * holder monitor's thread and the caller's. It is held while the process
 * is in the same mount namespace (its inode) and the same process (a
 * child shares the open file, and a look by one would take the other's
 * news), and while the open mountinfo reports no change: the kernel
 * tells poll() of every mount, unmount and remount in the namespace
 * since the file was opened or last polled (POLLPRI). Under @lock. */
static struct
{
  GMutex lock;
  int fd;                       /* on /proc/self/mountinfo, or -1 */
  pid_t pid;                    /* that opened it */
  struct stat ns;               /* /proc/self/ns/mnt then */
  struct stat file;             /* the fd's, so another file on its number is no answer */
  GArray *entries;              /* MountEntry, in the file's order */
} mount_table = { .fd = -1 };

static GArray *
parse_mount_table (const char *text)
{
  GArray *entries = g_array_new (FALSE, TRUE, sizeof (MountEntry));
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

  g_array_set_clear_func (entries, mount_entry_clear);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", -1);
      guint n = g_strv_length (fields), dash;
      MountEntry *entry;

      for (dash = 6; dash < n && strcmp (fields[dash], "-") != 0; dash++)
        ;
      if (n < 7 || dash + 1 >= n)
        continue;
      /* Filled in place: the array owns its strings from the start. */
      g_array_set_size (entries, entries->len + 1);
      entry = &g_array_index (entries, MountEntry, entries->len - 1);
      entry->point = unescape_mount_field (fields[4]);
      entry->type = g_strdup (fields[dash + 1]);
      entry->options = g_strjoin (",", fields[5], dash + 3 < n ? fields[dash + 3] : "", NULL);
    }
  return entries;
}

/* Reads the open mountinfo again from its start; FALSE on an error. */
static gboolean
read_mount_table (int fd)
{
  g_autoptr(GString) text = g_string_new (NULL);
  char buffer[16384];
  gssize got;

  if (lseek (fd, 0, SEEK_SET) != 0)
    return FALSE;
  while ((got = read (fd, buffer, sizeof buffer)) != 0)
    {
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return FALSE;
      g_string_append_len (text, buffer, got);
    }
  g_clear_pointer (&mount_table.entries, g_array_unref);
  mount_table.entries = parse_mount_table (text->str);
  return TRUE;
}

static gboolean
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Makes mount_table.entries this namespace's mount table as it is now;
 * FALSE when /proc cannot tell it. Under mount_table.lock. */
static gboolean
mount_table_update (void)
{
  struct stat ns, file;
  gboolean ours;
  int fd;

  if (stat ("/proc/self/ns/mnt", &ns) != 0)
    memset (&ns, 0, sizeof ns);   /* no namespaces: the file alone says */
  /* Another file on its number (closed behind our back) is not ours to
   * read or close. */
  ours = mount_table.fd >= 0 && fstat (mount_table.fd, &file) == 0 && same_file (&file, &mount_table.file);
  if (ours && mount_table.pid == getpid () && same_file (&ns, &mount_table.ns))
    {
      struct pollfd look = { .fd = mount_table.fd, .events = POLLPRI };

      if (poll (&look, 1, 0) == 0 || read_mount_table (mount_table.fd))
        return TRUE;
    }
  /* First time, or another namespace or process (a child closes its copy
   * of the parent's descriptor: the parent's stays open). */
  if (ours)
    close (mount_table.fd);
  mount_table.fd = -1;
  g_clear_pointer (&mount_table.entries, g_array_unref);
  fd = open ("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  if (fstat (fd, &file) != 0 || !read_mount_table (fd))
    {
      close (fd);
      g_clear_pointer (&mount_table.entries, g_array_unref);
      return FALSE;
    }
  mount_table.fd = fd;
  mount_table.pid = getpid ();
  mount_table.ns = ns;
  mount_table.file = file;
  return TRUE;
}

/**
 * _tessera_locks_cross_hosts:
 * @path: a folder
 * @why: (out) (optional): when they do not, the file system and option
 *   that say so
 *
 * Job locks and ipc.lock mean something for other hosts only where the
 * file system's lock manager spans hosts. They do not on most FUSE file
 * systems, on NFS mounted `nolock` or with `local_lock` other than `none`,
 * and on Lustre mounted `localflock`. Read from `/proc/self/mountinfo`
 * (once per process while no mount changes: the descriptor on it stays
 * open for the life of the process); when it cannot be read (no
 * /proc in a container, no descriptor left), they are taken to stay
 * local: when in doubt a holder counts, and a judge that thought they
 * crossed took a free-looking job lock for a death.
 *
 * Returns: whether locks on @path are seen by other hosts
 */
gboolean
_tessera_locks_cross_hosts (const char  *path,
                            char       **why)
{
  g_autofree char *real = realpath (path, NULL);
  g_autofree char *best_type = NULL;
  g_autofree char *best_options = NULL;
  gsize best_length = 0;

  if (why != NULL)
    *why = NULL;
  if (real == NULL)
    {
      if (why != NULL)
        *why = g_strdup_printf (_("%s cannot be read"), path);
      return FALSE;
    }
  g_mutex_lock (&mount_table.lock);
  if (!mount_table_update ())
    {
      g_mutex_unlock (&mount_table.lock);
      if (why != NULL)
        *why = g_strdup_printf (_("%s cannot be read"), "/proc/self/mountinfo");
      return FALSE;
    }
  for (guint i = 0; i < mount_table.entries->len; i++)
    {
      const MountEntry *entry = &g_array_index (mount_table.entries, MountEntry, i);
      gsize length = strlen (entry->point);

      /* The deepest mount point above the folder; a later one on the same
       * point covers an earlier one. */
      if (!(strcmp (entry->point, "/") == 0 ||
            (g_str_has_prefix (real, entry->point) && (real[length] == '\0' || real[length] == '/'))))
        continue;
      if (strcmp (entry->point, "/") == 0)
        length = 1;
      if (length < best_length)
        continue;
      best_length = length;
      g_free (best_type);
      g_free (best_options);
      best_type = g_strdup (entry->type);
      best_options = g_strdup (entry->options);
    }
  g_mutex_unlock (&mount_table.lock);
  if (best_type == NULL)
    return TRUE;
  if (strcmp (best_type, "fuse") == 0 || g_str_has_prefix (best_type, "fuse."))
    {
      if (why != NULL)
        *why = g_strdup (best_type);
      return FALSE;
    }
  if ((strcmp (best_type, "nfs") == 0 || strcmp (best_type, "nfs4") == 0) &&
      (has_option (best_options, "nolock") ||
       (has_option (best_options, "local_lock=") && !has_option (best_options, "local_lock=none"))))
    {
      if (why != NULL)
        *why = g_strdup_printf ("%s (%s)", best_type,
                                has_option (best_options, "nolock") ? "nolock" : "local_lock");
      return FALSE;
    }
  if (strcmp (best_type, "lustre") == 0 && has_option (best_options, "localflock"))
    {
      if (why != NULL)
        *why = g_strdup ("lustre (localflock)");
      return FALSE;
    }
  return TRUE;
}

const char *
_tessera_boot_id (void)
{
  static gsize once = 0;
  static char *boot_id = NULL;

  if (g_once_init_enter (&once))
    {
      if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &boot_id, NULL, NULL))
        boot_id = g_strdup ("");
      g_strstrip (boot_id);
      g_once_init_leave (&once, 1);
    }
  return boot_id;
}

const char *
_tessera_host_name (void)
{
  return g_get_host_name ();
}
