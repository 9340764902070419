/* tessera-lock-file-index.c: a pool's lock files as last read, kept between processes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-lock-file-index-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

/* The file: MAGIC, the jobs/ folder's device and inode, the pool's path
 * (with its NUL), then records (name with its NUL, inode, size, mtime and
 * ctime in ns, text, accounting summary with its NUL or a zero length), a
 * zero name length, and a hash of all that. Native byte order: it never
 * leaves this user's machine. Version 1 (no summary) had a name of its
 * own, pruned in time; so has version 2, written before only strict JSON
 * was read (65292cc): it summarises texts now refused (a comment, a lone
 * surrogate), which would count for what they seem to say. */
#define FORMAT_VERSION 3
#define MAGIC "TESSERA-LOCK-FILE-INDEX " G_STRINGIFY (FORMAT_VERSION) "\n"
#define MAGIC_LENGTH (sizeof MAGIC - 1)
/* Bounds: lock files are tiny; anything larger is read from jobs/ again. */
#define MAX_INDEX_SIZE (64 * 1024 * 1024)
#define MAX_RECORD_TEXT (64 * 1024)
#define MAX_NAME_LENGTH 4096
/* An index nobody wrote for a week is a removed pool's, or a writer's
 * leftover temporary: removed when another is written. */
#define PRUNE_AGE_S (7 * 24 * 3600)

typedef struct
{
  const char *name;       /* in the file's mapping or in owned_name */
  const char *data;       /* likewise */
  gsize length;
  const char *summary;    /* likewise; NULL: none */
  guint64 ino;
  gint64 size;
  gint64 mtime_ns;
  gint64 ctime_ns;
  /* When this process first looked it up or put it (1, 2, …; 0: not
   * yet): the index is written in that order, jobs/'s readdir order. */
  guint seen;
  char *owned_name;
  char *owned_data;
  char *owned_summary;
} Record;

struct _TesseraLockFileIndex
{
  char *folder_path;      /* $XDG_CACHE_HOME/tessera/lock-file-index */
  char *file_name;        /* in that folder */
  char *path;             /* both */
  char *pool_path;
  guint64 jobs_dev;
  guint64 jobs_ino;
  gboolean read_only;
  /* The file as read, in pages of this process's own (see
   * load_private()): records point into it. */
  void *map;
  gsize map_length;
  /* The file's records, in the mapping: not decoded ahead. A fresh
   * process looks its names up in the file's order, each decoded where
   * the cursor is; Records are made (in loaded) only for the table. With
   * 10 000 holders they took a megabyte of fresh pages, a fault each. */
  const char *first;      /* NULL: no file */
  const char *end;        /* the mapping's end, less the hash */
  guint n_loaded;
  const char *cursor;     /* the record expected next */
  GArray *loaded;         /* the file's Records, in one block, once the table is made */
  /* name → Record (in loaded, or one of put's); NULL until needed: while
   * names are looked up in the order of the file, @next finds them. */
  GHashTable *records;
  guint next;             /* the number of the record at cursor */
  guint seen;             /* the last Record.seen given */
  gboolean dropped;       /* a name was dropped without the table */
  guint changes;
};

static void
record_free (Record *record)
{
  /* The file's Records live in one block (index->loaded), not one each:
   * 10 000 allocations cost as much as reading the file. */
  if (record->owned_name == NULL)
    return;
  g_free (record->owned_name);
  g_free (record->owned_data);
  g_free (record->owned_summary);
  g_free (record);
}

/* Cheap and enough to tell a torn or damaged file: the index is written
 * by us alone, so this guards against accidents, not against forgery. */
static guint64
hash_bytes (const char *data, gsize length)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  gsize i = 0;

  for (; i + 8 <= length; i += 8)
    {
      guint64 word;
      memcpy (&word, data + i, 8);
      h = (h ^ word) * G_GUINT64_CONSTANT (0x100000001b3);
      h ^= h >> 29;
    }
  for (; i < length; i++)
    h = (h ^ (guchar) data[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  return h;
}

/* The records' table hashes a name eight bytes at a time: a fresh
 * process hashes each of its 10 000 names twice (put in the table, then
 * looked up), and g_str_hash, a byte at a time, cost more than the rest
 * of the lookup. The last step mixes the high bits into the low ones,
 * which the table uses. */
guint
_tessera_lock_file_name_hash (gconstpointer key)
{
  const char *name = key;
  guint64 h = hash_bytes (name, strlen (name));

  h ^= h >> 32;
  h *= G_GUINT64_CONSTANT (0x9e3779b97f4a7c15);
  return (guint) (h >> 32);
}

/* ---------------------------------------------------------------------- */
/* The folder of indexes */

/* Our own folder, opened without following a link: -1 unless it is a
 * folder of ours that nobody else may enter. @create: make it first. */
static int
open_index_folder (TesseraLockFileIndex *index, gboolean create)
{
  struct stat st;
  int fd;

  if (create)
    {
      g_autofree char *parent = g_path_get_dirname (index->folder_path);
      if (g_mkdir_with_parents (parent, 0700) < 0 || (mkdir (index->folder_path, 0700) < 0 && errno != EEXIST))
        {
          g_debug ("Cannot create %s: %s", index->folder_path, g_strerror (errno));
          return -1;
        }
    }
  fd = open (index->folder_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 0077) != 0)
    {
      g_debug ("Not using %s: not a private folder of ours", index->folder_path);
      close (fd);
      return -1;
    }
  return fd;
}

/* ---------------------------------------------------------------------- */
/* Reading */

typedef struct
{
  const char *p;
  const char *end;
} Cursor;

static gboolean
take (Cursor *c, void *out, gsize n)
{
  if ((gsize) (c->end - c->p) < n)
    return FALSE;
  memcpy (out, c->p, n);
  c->p += n;
  return TRUE;
}

/* A NUL-terminated string of @n bytes (NUL included) at the cursor. */
static const char *
take_string (Cursor *c, guint32 n)
{
  const char *s = c->p;

  if (n == 0 || n > MAX_NAME_LENGTH || (gsize) (c->end - c->p) < n || s[n - 1] != '\0' || strlen (s) != n - 1)
    return NULL;
  c->p += n;
  return s;
}

/* Only names the cache could ask for: lock file names of jobs/, of
 * @length bytes (known when read, so not counted again). */
static gboolean
is_record_name_of_length (const char *name, gsize length)
{
  gsize suffix = strlen (TESSERA_LOCK_FILE_SUFFIX);

  return length > suffix && memcmp (name + length - suffix, TESSERA_LOCK_FILE_SUFFIX, suffix) == 0 &&
         memchr (name, '/', length) == NULL;
}

static gboolean
is_record_name (const char *name)
{
  return is_record_name_of_length (name, strlen (name));
}

/* The record at @c, pointing into the file: FALSE at the end (a zero
 * name length), or with *@bad set when it is not one. */
static gboolean
decode (Cursor *c, Record *record, gboolean *bad)
{
  guint32 n, text_length;

  memset (record, 0, sizeof *record);
  *bad = TRUE;
  if (!take (c, &n, 4))
    return FALSE;
  if (n == 0)
    {
      *bad = FALSE;
      return FALSE;
    }
  if ((record->name = take_string (c, n)) == NULL || !is_record_name_of_length (record->name, n - 1) ||
      !take (c, &record->ino, 8) || !take (c, &record->size, 8) || !take (c, &record->mtime_ns, 8) ||
      !take (c, &record->ctime_ns, 8) || !take (c, &text_length, 4) ||
      text_length > MAX_RECORD_TEXT || (gsize) (c->end - c->p) < text_length)
    return FALSE;
  record->data = c->p;
  record->length = text_length;
  c->p += text_length;
  if (!take (c, &n, 4) || (n != 0 && ((record->summary = take_string (c, n)) == NULL)))
    return FALSE;
  *bad = FALSE;
  return TRUE;
}

static gboolean
parse (TesseraLockFileIndex *index, const char *data, gsize length)
{
  Cursor c = { data, data + length };
  guint64 dev, ino, sum;
  guint32 n;
  const char *pool_path, *first;
  gboolean bad;
  Record record;
  guint count = 0;

  if (length < MAGIC_LENGTH + 8 || memcmp (data, MAGIC, MAGIC_LENGTH) != 0)
    return FALSE;
  memcpy (&sum, data + length - 8, 8);
  if (sum != hash_bytes (data, length - 8))
    return FALSE;
  c.p += MAGIC_LENGTH;
  c.end -= 8;
  if (!take (&c, &dev, 8) || !take (&c, &ino, 8) || !take (&c, &n, 4) ||
      (pool_path = take_string (&c, n)) == NULL)
    return FALSE;
  if (dev != index->jobs_dev || ino != index->jobs_ino || strcmp (pool_path, index->pool_path) != 0)
    return FALSE;   /* another pool's (a collision), or jobs/ made again */
  /* Every record is checked here, once: decoding one again later cannot fail. */
  first = c.p;
  while (decode (&c, &record, &bad))
    count++;
  if (bad || c.p != c.end)
    return FALSE;
  index->first = index->cursor = first;
  index->end = c.end;
  index->n_loaded = count;
  return TRUE;
}

/* The table of the records, made at the first name looked up out of the
 * file's order, or put, or dropped: a process that finds jobs/ as the
 * last one left it (its readdir order, in which it wrote the file) looks
 * every name up without it. */
static GHashTable *
records (TesseraLockFileIndex *index)
{
  if (index->records != NULL)
    return index->records;
  index->records = g_hash_table_new_full (_tessera_lock_file_name_hash, g_str_equal, NULL, (GDestroyNotify) record_free);
  if (index->first != NULL)
    {
      Cursor c = { index->first, index->end };
      Record record;
      gboolean bad;

      index->loaded = g_array_sized_new (FALSE, FALSE, sizeof (Record), index->n_loaded);
      while (decode (&c, &record, &bad))
        {
          /* Those before the cursor were looked up in order, one by one. */
          if (index->loaded->len < index->next)
            record.seen = index->loaded->len + 1;
          g_array_append_val (index->loaded, record);
        }
      for (guint i = 0; i < index->loaded->len; i++)
        {
          Record *loaded = &g_array_index (index->loaded, Record, i);
          g_hash_table_replace (index->records, (gpointer) loaded->name, loaded);
        }
    }
  return index->records;
}

/* The @size bytes of the open file @fd in memory of this process's own,
 * MAP_FAILED when they cannot all be read. A fresh process with 10 000
 * holders read the two-megabyte index into a fresh buffer: 500 page
 * faults, one by one. A sealed memfd filled by the kernel (sendfile) and
 * mapped in one call costs a fraction of that. Not the file itself
 * mapped, which costs less still: shortened in place while a process
 * waits (a backup restored over it, `cp`, another host's prune on a
 * shared home), its pages would raise SIGBUS in whatever read the
 * records next. An anonymous mapping filled by read() where memfds or
 * sendfile are refused. */
static void *
load_private (int fd, gsize size)
{
  int copy = memfd_create ("tessera-lock-file-index", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  void *data = MAP_FAILED;
  off_t offset = 0;
  gsize got = 0;

  if (copy >= 0)
    {
      while ((gsize) offset < size)
        {
          ssize_t n = sendfile (copy, fd, &offset, size - (gsize) offset);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            break;
        }
      /* Sealed: nothing may shorten it under the mapping. */
      if ((gsize) offset == size && fcntl (copy, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0)
        data = mmap (NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, copy, 0);
      close (copy);
      if (data != MAP_FAILED)
        return data;
    }
  data = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED)
    return MAP_FAILED;
  while (got < size)
    {
      ssize_t n = pread (fd, (char *) data + got, size - got, (off_t) got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += (gsize) n;
    }
  if (got != size)
    {
      munmap (data, size);
      return MAP_FAILED;
    }
  return data;
}

/* Reads our index, if it is one: a regular file of ours, opened without
 * following a link or waiting on a FIFO, of a bounded size. */
static void
load (TesseraLockFileIndex *index)
{
  int dir_fd = open_index_folder (index, FALSE);
  struct stat st;
  void *data;
  int fd;

  if (dir_fd < 0)
    return;
  fd = openat (dir_fd, index->file_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  close (dir_fd);
  if (fd < 0)
    return;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid () ||
      st.st_size <= 0 || st.st_size > MAX_INDEX_SIZE)
    {
      g_debug ("Ignoring %s: not a regular file of ours of a sensible size", index->path);
      close (fd);
      return;
    }
  data = load_private (fd, (gsize) st.st_size);
  close (fd);
  if (data == MAP_FAILED)
    {
      g_debug ("Ignoring %s: cannot read it whole", index->path);
      return;
    }
  if (!parse (index, data, (gsize) st.st_size))
    {
      g_debug ("Ignoring %s: not a whole index of this pool", index->path);
      munmap (data, (gsize) st.st_size);
      return;
    }
  index->map = data;
  index->map_length = (gsize) st.st_size;
}

TesseraLockFileIndex *
_tessera_lock_file_index_open (TesseraLockFolder *folder,
                               const struct stat *jobs_st,
                               gboolean           read_only)
{
  TesseraLockFileIndex *index;
  g_autofree char *hash = NULL;

  if (!_tessera_lock_folder_is_local (folder))
    return NULL;
  index = g_new0 (TesseraLockFileIndex, 1);
  index->pool_path = g_strdup (_tessera_lock_folder_get_path (folder));
  index->jobs_dev = jobs_st->st_dev;
  index->jobs_ino = jobs_st->st_ino;
  index->read_only = read_only;
  index->folder_path = g_build_filename (g_get_user_cache_dir (), "tessera", "lock-file-index", NULL);
  hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, index->pool_path, -1);
  hash[16] = '\0';
  /* The format's version in the name: two Tessera versions of this user
   * (two installs, a build beside a package) keep one index each rather
   * than each throw away the other's at every start. */
  index->file_name = g_strdup_printf ("%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x-%s-v%d",
                                      index->jobs_dev, index->jobs_ino, hash, FORMAT_VERSION);
  index->path = g_build_filename (index->folder_path, index->file_name, NULL);
  load (index);
  return index;
}

void
_tessera_lock_file_index_free (TesseraLockFileIndex *index)
{
  if (index == NULL)
    return;
  g_clear_pointer (&index->records, g_hash_table_unref);
  g_clear_pointer (&index->loaded, g_array_unref);
  if (index->map != NULL)
    munmap (index->map, index->map_length);
  g_free (index->folder_path);
  g_free (index->file_name);
  g_free (index->path);
  g_free (index->pool_path);
  g_free (index);
}

const char *
_tessera_lock_file_index_get_path (TesseraLockFileIndex *index)
{
  return index->path;
}

/* ---------------------------------------------------------------------- */
/* Records */

const char *
_tessera_lock_file_index_lookup (TesseraLockFileIndex *index,
                                 const char           *name,
                                 const struct stat    *st,
                                 gsize                *length,
                                 const char          **summary)
{
  Record *record = NULL, in_order;
  gboolean bad;

  if (index->records == NULL && index->first != NULL && index->next < index->n_loaded)
    {
      Cursor c = { index->cursor, index->end };

      if (decode (&c, &in_order, &bad) && strcmp (in_order.name, name) == 0)
        {
          /* Its seen is its number, which records() gives it. */
          record = &in_order;
          index->cursor = c.p;
          index->seen = ++index->next;
        }
    }
  if (record == NULL && (index->records != NULL || index->first != NULL))
    {
      record = g_hash_table_lookup (records (index), name);
      if (record != NULL && record->seen == 0)
        record->seen = ++index->seen;
    }
  if (record == NULL || !S_ISREG (st->st_mode) || record->ino != (guint64) st->st_ino ||
      record->size != (gint64) st->st_size || record->mtime_ns != _tessera_stat_mtime_ns (st) ||
      record->ctime_ns != _tessera_stat_ctime_ns (st))
    return NULL;
  *length = record->length;
  *summary = record->summary;
  return record->data;
}

void
_tessera_lock_file_index_put (TesseraLockFileIndex *index,
                              const char           *name,
                              const struct stat    *st,
                              const char           *data,
                              gsize                 length,
                              const char           *summary,
                              gint64                looked_us)
{
  Record *record, *old;

  /* Racy: a peer writing in place within the same clock tick would leave
   * the same times (and maybe size); such a file is read every time until
   * its times are old enough. */
  if (!S_ISREG (st->st_mode) || length > MAX_RECORD_TEXT || !is_record_name (name) ||
      !_tessera_stat_tick_before (st, looked_us))
    {
      _tessera_lock_file_index_drop (index, name);
      return;
    }
  record = g_new0 (Record, 1);
  record->name = record->owned_name = g_strdup (name);
  record->data = record->owned_data = g_memdup2 (data, length);
  record->length = length;
  /* A summary as long as a name at most (an information of a few devices
   * is far shorter); a longer one is not kept: its file is then parsed. */
  if (summary != NULL && strlen (summary) < MAX_NAME_LENGTH)
    record->summary = record->owned_summary = g_strdup (summary);
  record->ino = st->st_ino;
  record->size = st->st_size;
  record->mtime_ns = _tessera_stat_mtime_ns (st);
  record->ctime_ns = _tessera_stat_ctime_ns (st);
  /* In the place of the one it replaces, for the order of the file. */
  old = g_hash_table_lookup (records (index), name);
  record->seen = old != NULL && old->seen != 0 ? old->seen : ++index->seen;
  g_hash_table_replace (index->records, record->owned_name, record);
  index->changes++;
}

void
_tessera_lock_file_index_drop (TesseraLockFileIndex *index,
                               const char           *name)
{
  /* A fresh `tessera run` drops only the name of its own new lock file,
   * which no record has: one look through the file's records costs less
   * than the table, which the next drop makes. */
  if (index->records == NULL && !index->dropped)
    {
      Cursor c = { index->first, index->end };
      gboolean found = FALSE, bad;
      Record record;

      index->dropped = TRUE;
      while (!found && index->first != NULL && decode (&c, &record, &bad))
        found = strcmp (record.name, name) == 0;
      if (!found)
        return;
    }
  if (g_hash_table_remove (records (index), name))
    index->changes++;
}

guint
_tessera_lock_file_index_get_changes (TesseraLockFileIndex *index)
{
  return index->changes;
}

/* ---------------------------------------------------------------------- */
/* Writing */

static void
append_u32 (GByteArray *out, guint32 value)
{
  g_byte_array_append (out, (const guint8 *) &value, 4);
}

static void
append_u64 (GByteArray *out, guint64 value)
{
  g_byte_array_append (out, (const guint8 *) &value, 8);
}

static void
append_string (GByteArray *out, const char *s)
{
  gsize n = strlen (s) + 1;

  append_u32 (out, (guint32) n);
  g_byte_array_append (out, (const guint8 *) s, n);
}

/* Removes the old files of the folder (see PRUNE_AGE_S); regular files
 * only, never through a link. Takes @dir_fd. */
static void
prune (int dir_fd)
{
  gint64 now_s = g_get_real_time () / G_USEC_PER_SEC;
  DIR *dir = fdopendir (dir_fd);
  struct dirent *d;

  if (dir == NULL)
    {
      close (dir_fd);
      return;
    }
  while ((d = readdir (dir)) != NULL)
    {
      struct stat st;
      if (strcmp (d->d_name, ".") != 0 && strcmp (d->d_name, "..") != 0 &&
          fstatat (dirfd (dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode) &&
          now_s - (gint64) st.st_mtime > PRUNE_AGE_S)
        unlinkat (dirfd (dir), d->d_name, 0);
    }
  closedir (dir);
}

static gboolean
write_all (int fd, const guint8 *data, gsize length)
{
  while (length > 0)
    {
      ssize_t r = write (fd, data, length);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return FALSE;
      data += r;
      length -= r;
    }
  return TRUE;
}

/* The order of the file: as this process first met them (jobs/'s
 * readdir order, in which the next process looks them up), then the
 * others by name. */
static gint
compare_seen (gconstpointer a, gconstpointer b)
{
  const Record *x = *(Record * const *) a;
  const Record *y = *(Record * const *) b;

  if (x->seen != y->seen)
    return x->seen == 0 ? 1 : y->seen == 0 ? -1 : x->seen < y->seen ? -1 : 1;
  return strcmp (x->name, y->name);
}

void
_tessera_lock_file_index_save (TesseraLockFileIndex *index,
                               GHashTable           *names)
{
  g_autoptr(GByteArray) out = NULL;
  g_autoptr(GPtrArray) order = NULL;
  g_autofree char *temp = NULL;
  GHashTableIter iter;
  gpointer value;
  gboolean ok;
  int dir_fd, fd;

  if (index->read_only || index->changes == 0)
    return;
  order = g_ptr_array_sized_new (g_hash_table_size (records (index)));
  g_hash_table_iter_init (&iter, index->records);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_hash_table_contains (names, ((Record *) value)->name))
      g_ptr_array_add (order, value);   /* else gone from jobs/ */
  g_ptr_array_sort (order, compare_seen);
  out = g_byte_array_sized_new (4096 + order->len * 256);
  g_byte_array_append (out, (const guint8 *) MAGIC, MAGIC_LENGTH);
  append_u64 (out, index->jobs_dev);
  append_u64 (out, index->jobs_ino);
  append_string (out, index->pool_path);
  for (guint i = 0; i < order->len; i++)
    {
      Record *record = g_ptr_array_index (order, i);
      if (out->len + record->length + strlen (record->name) + MAX_NAME_LENGTH + 64 > MAX_INDEX_SIZE)
        break;      /* the rest is read from jobs/ */
      append_string (out, record->name);
      append_u64 (out, record->ino);
      append_u64 (out, (guint64) record->size);
      append_u64 (out, (guint64) record->mtime_ns);
      append_u64 (out, (guint64) record->ctime_ns);
      append_u32 (out, (guint32) record->length);
      g_byte_array_append (out, (const guint8 *) record->data, record->length);
      if (record->summary != NULL)
        append_string (out, record->summary);
      else
        append_u32 (out, 0);
    }
  append_u32 (out, 0);
  append_u64 (out, hash_bytes ((const char *) out->data, out->len));

  dir_fd = open_index_folder (index, TRUE);
  if (dir_fd < 0)
    return;
  temp = g_strdup_printf (".%s.%08x", index->file_name, g_random_int ());
  fd = openat (dir_fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      g_debug ("Cannot write %s: %s", index->path, g_strerror (errno));
      close (dir_fd);
      return;
    }
  ok = write_all (fd, out->data, out->len);
  ok &= close (fd) == 0;
  /* rename() replaces whatever is in its place (a link, a FIFO, a file of
   * someone else's) without following it. */
  if (!ok || renameat (dir_fd, temp, dir_fd, index->file_name) < 0)
    {
      g_debug ("Cannot write %s: %s", index->path, g_strerror (errno));
      unlinkat (dir_fd, temp, 0);
    }
  else
    index->changes = 0;
  prune (dir_fd);
}
