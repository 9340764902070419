/* tessera-etcd-members.c: what this host learnt of the members it asks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A member that missed a request's deadline (stopped, overloaded, cut
 * off) or that could not be connected to is tried last for
 * MISSED_SKIP_S. What one client learns, every client of the process
 * knows at once (a store's and its lease keeper's, each store's), and so
 * does every process of this user on this host that starts meanwhile:
 * the members and until when live in a small file of the user's,
 * $XDG_RUNTIME_DIR/tessera/etcd-members (without $XDG_RUNTIME_DIR,
 * CACHE/tessera/etcd-members.HOSTNAME in the user's cache folder, which
 * hosts may share through a shared home), one line "UNTIL_US ENDPOINT" each,
 * UNTIL_US real time in microseconds, written whole (temporary file and
 * rename) whenever a member misses a deadline or, marked, answers
 * again. A fresh process thus starts on a member that answered instead
 * of paying the deadline again.
 *
 * The file is a hint: it only orders the members (a member it names is
 * still asked when the others fail), so whatever it says cannot break
 * anything. It is read once per process, bounded (MEMORY_MAX bytes,
 * MEMORY_ENTRIES_MAX lines), only as a regular file of this user reached
 * without following a link, and a date further ahead than MISSED_SKIP_S
 * (a clock set back, a hand-written line) counts as MISSED_SKIP_S from
 * now. Two processes that write at once may lose one's line: that one
 * member is then asked once more by a fresh process, no worse than with
 * no memory at all.
 *
 * Also kept per process: the member that answered last, per list of
 * endpoints, where a new client of the same cluster starts. */

#define MEMORY_NAME "etcd-members"
#define MEMORY_MAX (64 * 1024)
#define MEMORY_ENTRIES_MAX 256
#define ENDPOINT_MAX 1024

static GMutex members_mutex;
static GHashTable *missed;       /* endpoint → gint64 * (real time, µs); members_mutex */
static GHashTable *answered;     /* endpoints joined by "," → GUINT_TO_POINTER (index + 1) */
static gboolean loaded;

static char *
memory_folder (void)
{
  return g_build_filename (g_get_user_runtime_dir (), "tessera", NULL);
}

/* The file's name in memory_folder(): this host's own where the folder
 * is the cache folder (GLib's fallback without $XDG_RUNTIME_DIR). */
static char *
memory_name (void)
{
  if (g_strcmp0 (g_get_user_runtime_dir (), g_get_user_cache_dir ()) != 0)
    return g_strdup (MEMORY_NAME);
  return g_strconcat (MEMORY_NAME ".", g_get_host_name (), NULL);
}

/* The entries of the file into @table (the later of two for one
 * endpoint), those still running at @now only. */
static void
read_memory (GHashTable *table, gint64 now)
{
  g_autofree char *folder = memory_folder ();
  g_autofree char *name = memory_name ();
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  int dir_fd, fd;
  struct stat st;
  gssize n = 0, got;
  guint entries = 0;

  dir_fd = open (folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0)
    return;
  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  close (dir_fd);
  if (fd < 0)
    return;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    {
      close (fd);
      return;
    }
  text = g_malloc (MEMORY_MAX + 1);
  while (n < MEMORY_MAX && (got = read (fd, text + n, MEMORY_MAX - n)) > 0)
    n += got;
  close (fd);
  text[n] = '\0';
  lines = g_strsplit (text, "\n", MEMORY_ENTRIES_MAX + 1);
  for (guint i = 0; lines[i] != NULL && entries < MEMORY_ENTRIES_MAX; i++)
    {
      char *end = NULL;
      gint64 until;
      gint64 *known;

      errno = 0;
      until = g_ascii_strtoll (lines[i], &end, 10);
      if (errno != 0 || end == lines[i] || *end != ' ' || end[1] == '\0' || strlen (end + 1) > ENDPOINT_MAX ||
          strchr (end + 1, ' ') != NULL || until <= now)
        continue;
      until = MIN (until, now + MISSED_SKIP_S * G_USEC_PER_SEC);
      known = g_hash_table_lookup (table, end + 1);
      if (known == NULL)
        {
          known = g_new (gint64, 1);
          *known = until;
          g_hash_table_insert (table, g_strdup (end + 1), known);
          entries++;
        }
      else
        *known = MAX (*known, until);
    }
}

static void
load (gint64 now)
{
  if (loaded)
    return;
  loaded = TRUE;
  missed = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  answered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  read_memory (missed, now);
}

/* The file again: what it says now (another process may have written
 * since), with the process's entries over it and @forget left out.
 * members_mutex held. A failure costs only the hint. */
static void
write_memory (const char *forget, gint64 now)
{
  g_autoptr(GHashTable) table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autofree char *folder = memory_folder ();
  g_autofree char *name = memory_name ();
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr(GError) error = NULL;
  GHashTableIter iter;
  gpointer endpoint, until;
  guint entries = 0;

  read_memory (table, now);
  g_hash_table_iter_init (&iter, missed);
  while (g_hash_table_iter_next (&iter, &endpoint, &until))
    {
      gint64 *known = g_hash_table_lookup (table, endpoint);

      if (*(gint64 *) until <= now)
        continue;
      if (known == NULL)
        {
          known = g_new (gint64, 1);
          *known = *(gint64 *) until;
          g_hash_table_insert (table, g_strdup (endpoint), known);
        }
      else
        *known = MAX (*known, *(gint64 *) until);
    }
  if (forget != NULL)
    g_hash_table_remove (table, forget);
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, &endpoint, &until) && entries++ < MEMORY_ENTRIES_MAX)
    g_string_append_printf (text, "%" G_GINT64_FORMAT " %s\n", *(gint64 *) until, (const char *) endpoint);
  if (g_mkdir_with_parents (folder, 0700) != 0 ||
      !g_file_set_contents_full (path, text->str, (gssize) text->len, G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    g_debug ("etcd: cannot keep what was learnt of the members in %s: %s", path,
             error != NULL ? error->message : g_strerror (errno));
}

/* Whether @endpoint missed a deadline lately, in this process or in
 * another of this host: it is then tried last. Any thread. */
gboolean
_tessera_etcd_members_is_missed (const char *endpoint)
{
  gint64 now = g_get_real_time ();
  gint64 *until;
  gboolean late;

  g_mutex_lock (&members_mutex);
  load (now);
  until = g_hash_table_lookup (missed, endpoint);
  late = until != NULL && *until > now;
  g_mutex_unlock (&members_mutex);
  return late;
}

/* @endpoint missed a deadline, or could not be connected to: it is tried
 * last for MISSED_SKIP_S by this process and the host's. Any thread. */
void
_tessera_etcd_members_note_missed (const char *endpoint)
{
  gint64 now = g_get_real_time ();
  gint64 *until = g_new (gint64, 1);

  *until = now + MISSED_SKIP_S * G_USEC_PER_SEC;
  g_debug ("etcd: %s is tried last for %d s", endpoint, MISSED_SKIP_S);
  g_mutex_lock (&members_mutex);
  load (now);
  g_hash_table_replace (missed, g_strdup (endpoint), until);
  write_memory (NULL, now);
  g_mutex_unlock (&members_mutex);
}

/* @endpoint answered, as member @i of @cluster (the endpoints joined by
 * ","): a new client of that cluster starts there, and a member that
 * was tried last for a missed deadline is no longer. Any thread. */
void
_tessera_etcd_members_note_answered (const char *cluster, guint i, const char *endpoint)
{
  gint64 now = g_get_real_time ();
  gint64 *until;

  g_mutex_lock (&members_mutex);
  load (now);
  if (g_hash_table_lookup (answered, cluster) != GUINT_TO_POINTER (i + 1))
    g_hash_table_replace (answered, g_strdup (cluster), GUINT_TO_POINTER (i + 1));
  until = g_hash_table_lookup (missed, endpoint);
  if (until != NULL)
    {
      gboolean was_late = *until > now;

      g_hash_table_remove (missed, endpoint);
      if (was_late)
        write_memory (endpoint, now);
    }
  g_mutex_unlock (&members_mutex);
}

/* The member of @cluster that answered last in this process, or -1. */
int
_tessera_etcd_members_last_answered (const char *cluster)
{
  gpointer i;

  g_mutex_lock (&members_mutex);
  load (g_get_real_time ());
  i = g_hash_table_lookup (answered, cluster);
  g_mutex_unlock (&members_mutex);
  return i != NULL ? (int) GPOINTER_TO_UINT (i) - 1 : -1;
}
