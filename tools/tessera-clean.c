/* tessera-clean.c: `tessera clean`: dead holders, ended job folders,
 * forced entries and retired hosts removed from a pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "tessera-config.h"

#include "tessera-tool.h"

/* The lock file names in a resource's jobs/ folder, as the library
 * counts them (a link there is no holder; a FIFO holds everything); the
 * folder reached as the library reaches it (tessera_folder_path_open()). */
static GHashTable *
lock_file_names (const char *folder)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* None for a pool that lives elsewhere (etcd). */
  int folder_fd = folder != NULL ? tessera_folder_path_open (folder, NULL) : -1;
  int jobs_fd = folder_fd >= 0 ? openat (folder_fd, "jobs", FOLDER_FLAGS) : -1;
  DIR *dir = jobs_fd >= 0 ? fdopendir (jobs_fd) : NULL;
  struct dirent *entry;

  if (folder_fd >= 0)
    close (folder_fd);
  if (dir == NULL)
    {
      if (jobs_fd >= 0)
        close (jobs_fd);
      return names;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (g_str_has_suffix (entry->d_name, ".json") &&
          fstatat (jobs_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK (st.st_mode))
        g_hash_table_add (names, g_strndup (entry->d_name, strlen (entry->d_name) - strlen (".json")));
    }
  closedir (dir);
  return names;
}

/* Says which of the holders @before (lock_file_names() of @folder) of
 * resource @name are gone now; returns how many. */
static guint
report_gone_holders (const char *name, GHashTable *before, const char *folder)
{
  g_autoptr(GHashTable) after = lock_file_names (folder);
  GHashTableIter iter;
  gpointer job;
  guint gone = 0;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &job, NULL))
    if (!g_hash_table_contains (after, job))
      {
        g_autofree char *shown = escape_name (job, TRUE);

        g_print (_("%s: removed %s\n"), name, shown);
        gone++;
      }
  return gone;
}

/* Closes *@fd if it is open: `AUTO_FD int fd = …` ends with its scope. */
void
close_if_open (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}

/* Says which of the holders @before (lock_file_names() of @folder) of
 * resource @name were judged gone by the update of @resource but are
 * left, their file another user's that we may not delete (a group pool's
 * sticky jobs/): one line each, naming the file and its owner. Returns
 * how many. */
static guint
report_left_holders (const char *name, GHashTable *before, const char *folder,
                     TesseraTrackedDynamicResource *resource)
{
  g_autoptr(GHashTable) after = lock_file_names (folder);
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  g_autoptr(GHashTable) counted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  /* Reached as lock_file_names() reaches it, never through a link. */
  AUTO_FD int folder_fd = g_hash_table_size (after) > 0 ? tessera_folder_path_open (folder, NULL) : -1;
  AUTO_FD int jobs_fd = folder_fd >= 0 ? openat (folder_fd, "jobs", FOLDER_FLAGS) : -1;
  GHashTableIter iter;
  gpointer job;
  guint left = 0;

  for (guint i = 0; i < files->len; i++)
    {
      const char *path = tessera_dynamic_lock_file_get_path (g_ptr_array_index (files, i));
      g_autofree char *base = path != NULL ? g_path_get_basename (path) : NULL;

      if (base != NULL && g_str_has_suffix (base, ".json"))
        g_hash_table_add (counted, g_strndup (base, strlen (base) - strlen (".json")));
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &job, NULL))
    {
      g_autofree char *file = g_strconcat (job, ".json", NULL);
      g_autofree char *path = g_build_filename (folder, "jobs", file, NULL);
      g_autofree char *shown = NULL;
      g_autofree char *owner = NULL;
      struct stat st;

      if (!g_hash_table_contains (before, job) || g_hash_table_contains (counted, job) ||
          jobs_fd < 0 || fstatat (jobs_fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          st.st_uid == geteuid ())
        continue;
      owner = user_name (users, st.st_uid) != NULL ? g_strdup (user_name (users, st.st_uid))
                                                   : g_strdup_printf ("uid %u", (unsigned) st.st_uid);
      shown = escape_name (path, TRUE);
      g_print (_("%s: left %s, gone but %s's: its owner, root or the pool's owner may remove it\n"),
               name, shown, owner);
      left++;
    }
  return left;
}

/* The biggest locks.json a job folder's cleaning reads: one entry per
 * resource a job holds, a few hundred bytes each. */
#define LOCKS_JSON_MAX (1024 * 1024)

/* The folder @name in @dir_fd, never through a link, and only if it is
 * ours: in a group's runs/ a co-user may have put a link or a folder of
 * theirs there. -1 otherwise. */
/* The folder @name in @dir_fd, opened where it is (never through a
 * link), only if @owner owns it; -1 (EPERM) otherwise. */
static int
open_folder_of_at (int dir_fd, const char *name, uid_t owner)
{
  struct stat st;
  int fd = openat (dir_fd, name, FOLDER_FLAGS);

  if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_uid != owner))
    {
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

int
open_own_folder_at (int dir_fd, const char *name)
{
  return open_folder_of_at (dir_fd, name, geteuid ());
}

/* The text of the regular file @name in @dir_fd, never through a link,
 * never blocking on a FIFO, and only when it has at most @max bytes;
 * NULL otherwise. */
static char *
read_bounded_at (int dir_fd, const char *name, gsize max)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  g_autoptr(GString) text = NULL;
  struct stat st;
  char chunk[8192];

  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size < 0 || (gsize) st.st_size > max)
    {
      close (fd);
      return NULL;
    }
  text = g_string_sized_new ((gsize) st.st_size + 1);
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || text->len + (gsize) n > max)
        {
          close (fd);
          return NULL;
        }
      if (n == 0)
        break;
      g_string_append_len (text, chunk, n);
    }
  close (fd);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Whether @name is a job lock made under a temporary name
 * (NAME.lock.XXXXXX, six hex digits), held, then linked into place: one
 * left by a run killed in between is probed as a job lock. */
static gboolean
is_job_lock_temporary (const char *name)
{
  const char *dot = strrchr (name, '.');

  if (dot == NULL || strlen (dot + 1) != 6 || dot - name < 5 || strncmp (dot - 5, ".lock", 5) != 0)
    return FALSE;
  for (const char *c = dot + 1; *c != '\0'; c++)
    if (!g_ascii_isxdigit (*c))
      return FALSE;
  return TRUE;
}

/* A DIR that reads @dir_fd's folder through a copy of it, so that
 * closedir() leaves @dir_fd open; NULL when it cannot be had. */
static DIR *
open_dir_copy (int dir_fd)
{
  int fd = dir_fd >= 0 ? dup (dir_fd) : -1;
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;

  if (dir == NULL && fd >= 0)
    close (fd);
  return dir;
}

/* fence.UID, fence.UID.N (N from 1 to 15), or either followed by .now, a
 * part of a folder pool's fencing counter, user UID's (in *@uid) by its
 * name, as the library names them (is_fence_name() there: keep them in
 * step). */
static gboolean
fence_part_uid (const char *name, guint32 *uid)
{
  const char *digits;
  guint64 number = 0;
  guint other = 0;
  gsize n = 0;

  if (!g_str_has_prefix (name, "fence."))
    return FALSE;
  digits = name + strlen ("fence.");
  while (n <= 10 && g_ascii_isdigit (digits[n]))
    number = number * 10 + (guint64) (digits[n++] - '0');
  if (n == 0 || n > 10 || number > G_MAXUINT32)
    return FALSE;
  digits += n;
  if (digits[0] == '.' && digits[1] >= '1' && digits[1] <= '9')
    {
      for (digits++; g_ascii_isdigit (*digits) && other < 16; digits++)
        other = other * 10 + (guint) (*digits - '0');
      if (other >= 16)
        return FALSE;
    }
  if (*digits != '\0' && !g_str_equal (digits, ".now"))
    return FALSE;
  *uid = (guint32) number;
  return TRUE;
}

/* The parts of the fencing counter in the pool @folder of resource @name
 * that a user planted under another's name (fence.UID, fence.UID.N, or
 * either with .now, a regular file owned by neither UID nor root): the
 * library counts them up to its bound and slack, as no one's own, and UID cannot
 * replace them in the sticky folder: her parts go under another of her
 * names, and she gets no token once all are taken. Root and the pool's
 * owner remove them; anyone else is told of them, each counted in *@left.
 * Returns how many were removed. */
static guint
clean_fence_strays (TesseraConfig *config, const char *name, const char *folder, guint *left)
{
  AUTO_FD int folder_fd = folder != NULL ? tessera_folder_path_open (folder, NULL) : -1;
  DIR *dir = open_dir_copy (folder_fd);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  gboolean may = folder != NULL && may_administer (config, folder);
  struct dirent *entry;
  guint removed = 0;

  if (dir == NULL)
    return 0;
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *shown = NULL;
      const char *owner;
      struct stat st;
      guint32 uid;

      if (!fence_part_uid (entry->d_name, &uid) ||
          fstatat (folder_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          st.st_uid == uid || st.st_uid == 0)
        continue;
      path = g_build_filename (folder, entry->d_name, NULL);
      shown = escape_name (path, TRUE);
      if (may && unlinkat (folder_fd, entry->d_name, 0) == 0)
        {
          g_print (_("%s: removed %s, planted under uid %u's name\n"), name, shown, (unsigned) uid);
          removed++;
          continue;
        }
      owner = user_name (users, st.st_uid);
      if (owner != NULL)
        g_print (_("%s: left %s, planted under uid %u's name by %s: root or the pool's owner may remove it\n"),
                 name, shown, (unsigned) uid, owner);
      else
        g_print (_("%s: left %s, planted under uid %u's name by uid %u: root or the pool's owner may remove it\n"),
                 name, shown, (unsigned) uid, (unsigned) st.st_uid);
      (*left)++;
    }
  closedir (dir);
  return removed;
}

/* Whether a job folder of `tessera run` (<state>/jobs/<identifier>),
 * opened as @job_fd, may go: its wrapper is gone (the job lock is free),
 * and its command too (no lock file that its locks.json names is left: a
 * peer removes them once the command has ended). Only Tessera's own file
 * names are in it, regular files all; their names go to @files. With
 * @pool_jobs (another user's folder: root's clean), only the lock files
 * its locks.json names in that folder, the pool's own jobs/, are looked
 * at: a path elsewhere is hers to name, and looking would tell her
 * whether root's files exist (or hang on an automount); it is taken as
 * gone, its job lock being free. */
static gboolean
job_folder_is_done (int job_fd, uid_t owner, gboolean retired, const char *pool_jobs, GPtrArray *files)
{
  DIR *dir = open_dir_copy (job_fd);
  gboolean done = TRUE;
  struct dirent *entry;

  if (dir == NULL)
    return FALSE;
  while (done && (entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      struct stat st;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if (fstatat (job_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) || st.st_uid != owner)
        done = FALSE;
      else if (retired && g_str_equal (name, "locks.json"))
        ;   /* a retired host's: whatever it names, its job is over */
      else if (g_str_has_suffix (name, ".lock") || is_job_lock_temporary (name))
        done = tessera_job_lock_is_released_at (job_fd, name);   /* the verdict's reading of a job lock */
      else if (g_str_equal (name, "locks.json"))
        {
          g_autofree char *text = read_bounded_at (job_fd, name, LOCKS_JSON_MAX);
          g_autoptr(JsonNode) root = NULL;
          JsonArray *locks;

          if (text == NULL || (root = tessera_json_parse (text, -1, NULL)) == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
              (locks = json_object_get_array_member (json_node_get_object (root), "dynamic_locks")) == NULL)
            done = FALSE;
          for (guint i = 0; done && i < json_array_get_length (locks); i++)
            {
              JsonNode *element = json_array_get_element (locks, i);
              const char *lock_file = JSON_NODE_HOLDS_OBJECT (element)
                ? json_object_get_string_member_with_default (json_node_get_object (element), "lock_file_path", NULL)
                : NULL;
              g_autofree char *lock_folder = lock_file != NULL ? g_path_get_dirname (lock_file) : NULL;
              GStatBuf lock_st;

              if (lock_file != NULL && pool_jobs != NULL && g_strcmp0 (lock_folder, pool_jobs) != 0)
                continue;
              /* Only looked at, never opened: a path read from a file. */
              if (lock_file == NULL || g_lstat (lock_file, &lock_st) == 0 || errno != ENOENT)
                done = FALSE;
            }
        }
      else if (!g_str_has_suffix (name, ".pid"))
        done = FALSE;
      if (done)
        g_ptr_array_add (files, g_strdup (name));
    }
  closedir (dir);
  return done;
}

/* Where `tessera run` keeps its job folders: POOL/runs/UID, ours, in the
 * pool, so that every judge of the pool (in a container with its own
 * state folder, on another host) can probe the job lock of a holder it
 * cannot judge by its pid. In a pool shared with a group (a
 * group-writable folder) it is readable by the pool's group, and runs/
 * is the group's and sticky: each user makes a folder there, none
 * removes another's. NULL when that folder cannot be had safely (a
 * co-user's link or folder in its place) or at all (a pool we may not
 * write): the job folder then stays in the user's state folder and such
 * holders count until they are surely dead. Never follows a link. */
char *
dup_runs_folder (const char *pool, int *own_fd_out)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  struct stat st;
  AUTO_FD int pool_fd = tessera_folder_path_open (pool, NULL);
  AUTO_FD int runs_fd = -1;
  AUTO_FD int own_fd = -1;
  gboolean shared;

  if (pool_fd < 0 || fstat (pool_fd, &st) < 0)
    return NULL;
  shared = (st.st_mode & S_IWGRP) != 0;
  /* A member makes no runs/ in a group's pool: its owner could move
   * anyone's job folder in it (init makes it). */
  if (fstatat (pool_fd, "runs", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
      !tessera_folder_path_may_make_folder (pool_fd, pool, "runs", NULL))
    return NULL;
  if (mkdirat (pool_fd, "runs", shared ? 0770 : 0755) == 0 &&
      (runs_fd = openat (pool_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0 && shared)
    fchmod (runs_fd, S_ISVTX | S_ISGID | 0770);
  if (runs_fd < 0)
    runs_fd = openat (pool_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (runs_fd < 0 || (mkdirat (runs_fd, uid, 0750) < 0 && errno != EEXIST))
    return NULL;
  own_fd = open_own_folder_at (runs_fd, uid);
  if (own_fd < 0 || (shared && fchmod (own_fd, S_ISGID | 0750) < 0))
    return NULL;
  *own_fd_out = g_steal_fd (&own_fd);
  return g_build_filename (pool, "runs", uid, NULL);
}

/* Removes the job folders in @jobs_fd (@jobs, for messages) that
 * `tessera run` left (a wrapper killed by SIGKILL cannot clean up), once
 * their jobs are done. @jobs_fd is a folder of ours: no one else can
 * swap a name in it, and every name is removed through it. */
static guint
clean_job_folders_in (int jobs_fd, const char *jobs, uid_t owner, const char *pool_jobs)
{
  DIR *dir = open_dir_copy (jobs_fd);
  struct dirent *entry;
  guint removed = 0;

  if (dir == NULL)
    return 0;
  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
      int job_fd;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if ((job_fd = open_folder_of_at (jobs_fd, name, owner)) < 0)
        continue;
      if (job_folder_is_done (job_fd, owner, FALSE, pool_jobs, files))
        {
          for (guint i = 0; i < files->len; i++)
            unlinkat (job_fd, g_ptr_array_index (files, i), 0);
          if (unlinkat (jobs_fd, name, AT_REMOVEDIR) == 0)
            {
              g_autofree char *folder = g_build_filename (jobs, name, NULL);
              g_autofree char *shown = escape_name (folder, TRUE);

              g_print (_("removed the job folder %s\n"), shown);
              removed++;
            }
        }
      close (job_fd);
    }
  closedir (dir);
  return removed;
}

/* Root's clean: the ended job folders of every user in the pool's runs/
 * (@runs_fd; @pool, for messages and its jobs/): runs/UID opened only
 * when UID owns it, and each of its job folders only when all in it is
 * UID's; of the paths their locks.json name, only those in the pool's
 * jobs/ are looked at. */
static guint
clean_others_job_folders (int runs_fd, const char *pool)
{
  g_autofree char *pool_jobs = g_build_filename (pool, "jobs", NULL);
  DIR *dir = open_dir_copy (runs_fd);
  struct dirent *entry;
  guint removed = 0;

  if (dir == NULL)
    return 0;
  while ((entry = readdir (dir)) != NULL)
    {
      guint64 uid;
      g_autofree char *runs = NULL;
      AUTO_FD int own_fd = -1;

      if (!g_ascii_string_to_unsigned (entry->d_name, 10, 1, G_MAXUINT32 - 1, &uid, NULL))
        continue;
      if ((own_fd = open_folder_of_at (runs_fd, entry->d_name, (uid_t) uid)) < 0)
        continue;
      runs = g_build_filename (pool, "runs", entry->d_name, NULL);
      removed += clean_job_folders_in (own_fd, runs, (uid_t) uid, pool_jobs);
    }
  closedir (dir);
  return removed;
}

/* Whether @name is the name run gives a job folder of the host whose
 * name, made safe, is @prefix ("HOST-"): HOST-PID-RANDOM, PID decimal,
 * RANDOM eight hex digits. Not a prefix alone: node7-gpu-PID-RANDOM is
 * host node7-gpu's, not node7's. */
static gboolean
is_job_folder_of (const char *name, const char *prefix)
{
  const char *p = name + strlen (prefix);
  const char *digits;

  if (!g_str_has_prefix (name, prefix))
    return FALSE;
  for (digits = p; g_ascii_isdigit (*p); p++)
    ;
  if (p == digits || p - digits > 10 || *p++ != '-' || strlen (p) != 8)
    return FALSE;
  for (; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p))
      return FALSE;
  return TRUE;
}

/* Says that the job folder @job of runs/@uid_name in @pool (another
 * user's: @uid) is left: only its owner (her plain `clean`) or root may
 * empty it, the files in it being hers. */
static void
say_job_folder_left (const char *name, const char *pool, const char *uid_name, const char *job, uid_t uid,
                     GHashTable *users)
{
  g_autofree char *folder = g_build_filename (pool, "runs", uid_name, job, NULL);
  g_autofree char *shown = escape_name (folder, TRUE);
  const char *user = user_name (users, uid);
  g_autofree char *owner = user != NULL ? escape_name (user, TRUE) : g_strdup_printf ("uid %u", (unsigned) uid);

  /* Translators: "cpu: left the job folder /srv/pool/cpu/runs/1001/node7-…, alice's: only its owner (with
   * “tessera clean”) or root may remove it" */
  g_print (_("%s: left the job folder %s, %s's: only its owner (with “tessera clean”) or root may remove it\n"),
           name, shown, owner);
}

/* clean --host HOST --yes: the retired host's job folders in the pool's
 * runs/ (@pool; UID/HOST-PID-RANDOM, as run names them): ours, or every
 * user's for root, once their job lock is free (one held is a live job's,
 * whatever its name says: host names made safe may meet) and only when
 * all in one is Tessera's own files, its owner's. Another user's that
 * root would remove (or that we cannot read to tell) is named in one line
 * each: a pool's owner who is not root may not empty it. @left (out):
 * how many. */
static guint
clean_host_job_folders (const char *name, const char *pool, const char *host, guint *left)
{
  g_autofree char *prefix = g_strconcat (host, "-", NULL);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  AUTO_FD int pool_fd = tessera_folder_path_open (pool, NULL);
  AUTO_FD int runs_fd = pool_fd >= 0 ? openat (pool_fd, "runs", FOLDER_FLAGS) : -1;
  DIR *dir = open_dir_copy (runs_fd);
  struct dirent *entry;
  guint removed = 0;

  /* As run makes a job's identifier of its host name. */
  for (char *p = prefix; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      *p = '-';
  if (dir == NULL)
    return 0;
  while ((entry = readdir (dir)) != NULL)
    {
      guint64 uid;
      AUTO_FD int own_fd = -1;
      gboolean others;
      DIR *jobs;
      struct dirent *job;

      if (!g_ascii_string_to_unsigned (entry->d_name, 10, 0, G_MAXUINT32 - 1, &uid, NULL) ||
          (own_fd = open_folder_of_at (runs_fd, entry->d_name, (uid_t) uid)) < 0 ||
          (jobs = open_dir_copy (own_fd)) == NULL)
        continue;
      others = geteuid () != 0 && uid != geteuid ();
      while ((job = readdir (jobs)) != NULL)
        {
          g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
          int job_fd;

          if (!is_job_folder_of (job->d_name, prefix))
            continue;
          if ((job_fd = open_folder_of_at (own_fd, job->d_name, (uid_t) uid)) < 0)
            {
              /* Hers, closed to us: left, and said. */
              if (others && errno == EACCES)
                {
                  say_job_folder_left (name, pool, entry->d_name, job->d_name, (uid_t) uid, users);
                  (*left)++;
                }
              continue;
            }
          if (job_folder_is_done (job_fd, (uid_t) uid, TRUE, NULL, files))
            {
              if (others)
                {
                  say_job_folder_left (name, pool, entry->d_name, job->d_name, (uid_t) uid, users);
                  (*left)++;
                  close (job_fd);
                  continue;
                }
              for (guint i = 0; i < files->len; i++)
                unlinkat (job_fd, g_ptr_array_index (files, i), 0);
              if (unlinkat (own_fd, job->d_name, AT_REMOVEDIR) == 0)
                {
                  g_autofree char *folder = g_build_filename (pool, "runs", entry->d_name, job->d_name, NULL);
                  g_autofree char *shown = escape_name (folder, TRUE);

                  /* Translators: "cpu: removed the job folder /srv/pool/cpu/runs/1000/node7-…" */
                  g_print (_("%s: removed the job folder %s\n"), name, shown);
                  removed++;
                }
            }
          close (job_fd);
        }
      closedir (jobs);
    }
  closedir (dir);
  return removed;
}

/* The state folder's jobs/, and runs/UID in every configured pool (the
 * pool's folder as `tessera run` reaches it, tessera_folder_path_open()): each
 * reached from its parent without following a link, and only if ours. */
static guint
clean_job_folders (TesseraConfig *config)
{
  g_autofree char *state = tessera_config_dup_state_dir ();
  g_autofree char *jobs = g_build_filename (state, "jobs", NULL);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autoptr(GPtrArray) names = tessera_config_get_names (config);
  /* The state folder is the user's own: opened as given, links too. */
  AUTO_FD int state_fd = open (state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  AUTO_FD int jobs_fd = state_fd >= 0 ? open_own_folder_at (state_fd, "jobs") : -1;
  guint removed = clean_job_folders_in (jobs_fd, jobs, geteuid (), NULL);

  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *pool = tessera_config_dup_path (config, g_ptr_array_index (names, i));
      g_autofree char *runs = g_build_filename (pool, "runs", uid, NULL);
      AUTO_FD int pool_fd = pool != NULL ? tessera_folder_path_open (pool, NULL) : -1;
      AUTO_FD int runs_fd = pool_fd >= 0 ? openat (pool_fd, "runs", FOLDER_FLAGS) : -1;
      AUTO_FD int own_fd = runs_fd >= 0 ? open_own_folder_at (runs_fd, uid) : -1;

      removed += clean_job_folders_in (own_fd, runs, geteuid (), NULL);
      /* Root's also every other user's runs/UID, each folder and file of
       * which must be that user's. */
      if (geteuid () == 0 && runs_fd >= 0)
        removed += clean_others_job_folders (runs_fd, pool);
    }
  return removed;
}

/* The holding of @job as last read (a new reference), NULL when none:
 * what the audit log says of it once it is removed. */
static TesseraDynamicLockFile *
holder_of (TesseraTrackedDynamicResource *resource, const char *job)
{
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  g_autofree char *file = g_strconcat (job, ".json", NULL);

  for (guint i = 0; i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));

      if (g_str_equal (base, file) || g_str_equal (base, job))
        return g_object_ref (lock_file);
    }
  return NULL;
}

/* clean --force NAME JOB…: the named holders go, whatever their
 * liveness. */
static int
clean_force (TesseraConfig *config, int argc, char **argv)
{
  const char *name = argv[1];
  g_autofree char *folder = NULL;
  g_autofree char *pool_folder = NULL;
  g_autoptr(GHashTable) before = NULL;
  TesseraTrackedDynamicResource *resource;
  int status = 0;

  if (argc < 3)
    return fail (EXIT_USAGE, _("usage: tessera clean --force NAME JOB…"));
  if (!tessera_config_has (config, name))
    return fail (EXIT_USAGE, _("no resource named “%s” (see “tessera status”)"), name);
  /* Opening a resource already removes what is dead: look before. */
  folder = tessera_config_dup_path (config, name);
  pool_folder = tessera_config_dup_pool_folder (config, name);
  before = lock_file_names (folder);
  resource = open_resource_full (config, name, FALSE, &status);
  if (resource == NULL)
    return status;
  for (int i = 2; i < argc; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *shown = escape_name (argv[i], TRUE);
      g_autoptr(TesseraDynamicLockFile) holder = holder_of (resource, argv[i]);

      if (is_others_entry (pool_folder, argv[i], holder) && !may_administer (config, pool_folder))
        status = fail (EXIT_NOPERM, _("%s: %s is another user's: only its owner, root or the owner of %s may force it out"),
                       name, shown, pool_owned_by (pool_folder));
      else if (tessera_tracked_dynamic_resource_remove_holder (resource, argv[i], &error))
        {
          tessera_tracked_dynamic_resource_audit (resource, "force", holder, "tessera clean --force");
          g_print (_("%s: removed %s (forced)\n"), name, shown);
        }
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING) &&
               g_hash_table_contains (before, argv[i]))
        g_print (_("%s: removed %s\n"), name, shown);   /* dead: gone when the pool was opened */
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING))
        status = fail (EXIT_USAGE, _("%s has no holder “%s” (see “tessera status %s”)"), name, shown, name);
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME))
        {
          g_autofree char *message = escape_name (error->message, TRUE);
          status = fail (EXIT_USAGE, "%s", message);
        }
      else
        status = fail (oserr_or (error, error->domain == G_IO_ERROR ? EXIT_IOERR : 1), "%s", error->message);
    }
  return status;
}

/* The biggest heartbeat in a pool's hosts/ (as the core reads them). */
#define HEARTBEAT_MAX 4096

/* Whether @text is a host id: 32 lowercase hex digits. */
static gboolean
is_host_id (const char *text, gsize length)
{
  if (length != 32)
    return FALSE;
  for (gsize i = 0; i < length; i++)
    if (!g_ascii_isxdigit (text[i]) || g_ascii_isupper (text[i]))
      return FALSE;
  return TRUE;
}

/* The kind of the file hosts/@name (".lease": a heartbeat, ".host": a
 * mark), NULL when it is neither: HOSTID.UID.lease and HOSTID.UID.host
 * (each user's), HOSTID.UID.vVIEW.host (a user's mark of a view of the
 * pool), HOSTID.lease and HOSTID.host (of an older Tessera), or one's
 * temporary file; @rest (out): what follows the kind ("", or the
 * temporary's ".XXXXXX"). */
static const char *
host_file_kind (const char *name, const char **rest)
{
  const char *dot = strchr (name, '.');
  const char *p, *kind;

  if (dot == NULL || !is_host_id (name, (gsize) (dot - name)))
    return NULL;
  p = dot;
  if (g_ascii_isdigit (p[1]))
    {
      const char *end = p + 1;

      while (g_ascii_isdigit (*end))
        end++;
      if (*end != '.' || end - (p + 1) > 10)
        return NULL;
      p = end;
      if (p[1] == 'v' && g_ascii_isxdigit (p[2]))
        {
          end = p + 2;
          while (g_ascii_isxdigit (*end))
            end++;
          if (*end != '.' || end - (p + 2) > 16 || !g_str_has_prefix (end, ".host"))
            return NULL;
          p = end;
        }
    }
  kind = g_str_has_prefix (p, ".lease") ? ".lease" : g_str_has_prefix (p, ".host") ? ".host" : NULL;
  if (kind != NULL)
    *rest = p + strlen (kind);
  return kind != NULL && (**rest == '\0' || **rest == '.') ? kind : NULL;
}

/* The host name that the heartbeat @name in @hosts_fd (or a temporary
 * one written whole) gives; NULL when it gives none. */
static char *
heartbeat_host_at (int hosts_fd, const char *name)
{
  g_autofree char *text = read_bounded_at (hosts_fd, name, HEARTBEAT_MAX);
  g_autoptr(JsonNode) root = text != NULL ? tessera_json_parse (text, -1, NULL) : NULL;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return g_strdup (json_object_get_string_member_with_default (json_node_get_object (root), "host", NULL));
}

/* Removes, in the pool @pool's hosts/, the heartbeats `HOSTID.UID.lease`
 * and the marks `HOSTID.UID.host` of the retired host @host, every user's
 * (in a group's pool, where hosts/ is sticky, only root and the pool's
 * owner may: administering), those of an older Tessera (`HOSTID.lease`,
 * `HOSTID.host`), and the temporary files (`HOSTID.UID.lease.XXXXXX`)
 * that its renewers left (one killed half-way through a renewal), never
 * through a link. A temporary file of another host is left to that host
 * (it may be renewing now). @host may be a host id too: the files named
 * for it go, whatever they say (a member's planted mark, named for
 * another's uid, says what she wrote). Returns how many heartbeats and
 * marks went. */
static guint
clean_host_heartbeats (const char *resource, const char *pool, const char *host, const char *shown_host)
{
  g_autoptr(GHashTable) ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int pool_fd = tessera_folder_path_open (pool, NULL);
  int hosts_fd = pool_fd >= 0 ? openat (pool_fd, "hosts", FOLDER_FLAGS) : -1;
  int fd;
  DIR *dir;
  struct dirent *entry;
  guint removed = 0;

  if (pool_fd >= 0)
    close (pool_fd);
  if (hosts_fd < 0)
    return 0;
  fd = dup (hosts_fd);
  dir = fd >= 0 ? fdopendir (fd) : NULL;
  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      close (hosts_fd);
      return 0;
    }
  for (int pass = 0; pass < 2; pass++)
    {
      rewinddir (dir);
      while ((entry = readdir (dir)) != NULL)
        {
          const char *name = entry->d_name;
          const char *rest = NULL;
          const char *kind = host_file_kind (name, &rest);
          g_autofree char *named = NULL;
          g_autofree char *id = NULL;
          struct stat st;

          if (kind == NULL || fstatat (hosts_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
            continue;
          id = g_strndup (name, (gsize) (strchr (name, '.') - name));
          /* First the heartbeats and the marks, which name their host... */
          if (pass == 0 && *rest == '\0')
            {
              if ((g_str_equal (id, host) || g_strcmp0 ((named = heartbeat_host_at (hosts_fd, name)), host) == 0) &&
                  unlinkat (hosts_fd, name, 0) == 0)
                {
                  g_print (g_str_equal (kind, ".lease") ? _("%s: removed the heartbeat of host %s\n")
                                                        : _("%s: removed the mark of host %s\n"),
                           resource, shown_host);
                  g_hash_table_add (ids, g_steal_pointer (&id));
                  removed++;
                }
            }
          /* ...then the temporary files of those hosts, or that name it. */
          else if (pass == 1 && *rest == '.' &&
                   (g_hash_table_contains (ids, id) ||
                    g_strcmp0 ((named = heartbeat_host_at (hosts_fd, name)), host) == 0))
            unlinkat (hosts_fd, name, 0);
        }
    }
  closedir (dir);
  close (hosts_fd);
  return removed;
}

/* Whether @name is the temporary file of a heartbeat or of a mark
 * (HOSTID.UID.lease.XXXXXX, HOSTID.UID.host.XXXXXX, or without the UID
 * of an older Tessera). */
static gboolean
is_host_temporary (const char *name)
{
  const char *rest = NULL;

  if (host_file_kind (name, &rest) == NULL || strlen (rest) != 7)
    return FALSE;
  for (const char *p = rest + 1; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return TRUE;
}

/* A live writer's temporary lasts microseconds: one younger than this
 * when listed that is gone after was renamed into place, whatever
 * --min-age says. */
#define LIVE_TMP_S 1.0

/* The temporaries of one folder of a pool as `clean` found them before
 * its update: the folder (kept open, so one renamed away meanwhile is
 * still the one looked at after), each name with its age then. */
typedef struct
{
  int fd;
  GHashTable *ages;
  gint64 listed_us;
} Temporaries;

static void
temporaries_clear (Temporaries *t)
{
  if (t->fd >= 0)
    close (t->fd);
  t->fd = -1;
  g_clear_pointer (&t->ages, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Temporaries, temporaries_clear)

/* Lists into @t the temporaries of the subfolder @sub of the pool @pool
 * (the configured path followed as the library follows it, see
 * tessera_folder_path_open(), @sub never
 * through a link); @own: the writer's own folder, looked at only when it
 * is ours and closed to others, as the library requires. */
static void
list_temporaries (Temporaries *t, const char *pool, const char *sub, gboolean own)
{
  AUTO_FD int pool_fd = tessera_folder_path_open (pool, NULL);
  int fd = pool_fd >= 0 ? openat (pool_fd, sub, FOLDER_FLAGS) : -1;
  int list_fd;
  DIR *dir;
  gint64 now_ns = g_get_real_time () * 1000;
  struct dirent *entry;
  struct stat st;

  t->fd = -1;
  t->ages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  t->listed_us = g_get_monotonic_time ();
  if (fd < 0 || (own && (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 077) != 0)))
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  t->fd = fd;
  list_fd = dup (fd);
  dir = list_fd >= 0 ? fdopendir (list_fd) : NULL;
  if (dir == NULL && list_fd >= 0)
    close (list_fd);
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    /* As the library's sweeps tell them (in the writer's own folder, only
     * a holder's). */
    if (tessera_folder_path_is_temporary_name (entry->d_name, own) &&
        fstatat (fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
      {
        double *age = g_new (double, 1);

        *age = (double) (now_ns - ((gint64) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)) / 1e9;
        g_hash_table_insert (t->ages, g_strdup (entry->d_name), age);
      }
  if (dir != NULL)
    closedir (dir);
}

/* Says which temporaries of @t (the folder @sub) are gone that had
 * reached @stale seconds by now: a killed writer's, which the library's
 * sweep removed. Returns how many. */
static guint
report_gone_temporaries (const char *resource, const char *sub, Temporaries *t, double stale)
{
  double since = (double) (g_get_monotonic_time () - t->listed_us) / G_USEC_PER_SEC;
  GHashTableIter iter;
  gpointer name, age;
  guint gone = 0;

  if (t->fd < 0)
    return 0;
  g_hash_table_iter_init (&iter, t->ages);
  while (g_hash_table_iter_next (&iter, &name, &age))
    {
      g_autofree char *shown = NULL;
      struct stat st;

      if (*(double *) age < LIVE_TMP_S || *(double *) age + since < stale ||
          fstatat (t->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        continue;
      shown = escape_name (name, TRUE);
      g_print (_("%s: removed %s, a temporary file left in %s/\n"), resource, shown, sub);
      gone++;
    }
  return gone;
}

/* Removes from the pool @pool's hosts/ the temporary files of any host
 * (renewers killed half-way) older than @bound seconds. Their age is read
 * on the file server's clock, never ours: against the time stamp of a
 * file made there now. A writer still busy with one after a whole lease
 * has lost its lease anyway. Returns how many went. */
static guint
clean_host_temporaries (const char *resource, const char *pool, double bound)
{
  int pool_fd = tessera_folder_path_open (pool, NULL);
  int hosts_fd = pool_fd >= 0 ? openat (pool_fd, "hosts", FOLDER_FLAGS) : -1;
  char clock_name[] = ".tessera-clock.XXXXXX";
  struct timespec now = { 0 };
  struct dirent *entry;
  struct stat st;
  guint removed = 0;
  DIR *dir = NULL;
  int fd = -1;

  if (pool_fd >= 0)
    close (pool_fd);
  if (hosts_fd < 0)
    return 0;
  for (int attempt = 0; fd < 0 && attempt < 10; attempt++)
    {
      for (char *p = clock_name + strlen (".tessera-clock."); *p != '\0'; p++)
        *p = "abcdefghijklmnopqrstuvwxyz0123456789"[g_random_int_range (0, 36)];
      fd = openat (hosts_fd, clock_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
  if (fd >= 0)
    {
      if (fstat (fd, &st) == 0)
        now = st.st_mtim;
      close (fd);
      unlinkat (hosts_fd, clock_name, 0);
      fd = dup (hosts_fd);
      dir = fd >= 0 && now.tv_sec != 0 ? fdopendir (fd) : NULL;
      if (dir == NULL && fd >= 0)
        close (fd);
    }
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *shown = NULL;

      if (!is_host_temporary (entry->d_name) ||
          fstatat (hosts_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          (double) (now.tv_sec - st.st_mtim.tv_sec) + (double) (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9 < bound ||
          unlinkat (hosts_fd, entry->d_name, 0) < 0)
        continue;
      shown = escape_name (entry->d_name, TRUE);
      g_print (_("%s: removed %s, a temporary file left in %s/\n"), resource, shown, "hosts");
      removed++;
    }
  if (dir != NULL)
    closedir (dir);
  close (hosts_fd);
  return removed;
}

/* clean --host HOST [--yes] [NAME…]: the holdings whose process spec
 * names host HOST go (with --yes; without, they are only shown). */
static int
clean_host (TesseraConfig *config, const char *host, gboolean yes, int argc, char **argv)
{
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *shown_host = escape_name (host, TRUE);
  guint found = 0, left = 0;
  int status = 0;

  /* Ours are judged by their pid: a live one must never go this way. */
  if (g_str_equal (host, g_get_host_name ()))
    return fail (EXIT_USAGE, _("%s is this host: its holders are judged by their process (“tessera clean” "
                               "removes the dead ones); --host is for a retired host"), shown_host);
  if ((names = selected_names (config, argc, argv, &status)) == NULL)
    return status;
  /* Retiring a host is the pools' administrators': refused before
   * anything is removed. */
  for (guint i = 0; yes && i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *pool = tessera_config_dup_pool_folder (config, name);

      if (!may_administer (config, pool))
        return fail (EXIT_NOPERM, _("%s: only root or the owner of %s may remove a retired host's holdings"), name,
                     pool_owned_by (pool));
    }
  /* Without --yes, only look: opening a pool to change it would remove
   * its dead holders, whatever their host. */
  tessera_config_set_read_only (config, !yes);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *pool = tessera_config_dup_path (config, name);
      g_autoptr(GHashTable) before = yes ? lock_file_names (pool) : NULL;
      g_autoptr(GPtrArray) files = NULL;
      g_autoptr(GError) error = NULL;
      TesseraTrackedDynamicResource *resource = open_resource_full (config, name, FALSE, &status);

      if (resource == NULL)
        return status;
      if (!tessera_tracked_dynamic_resource_update (resource, &error))
        return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      files = tessera_tracked_dynamic_resource_list_lock_files (resource);
      for (guint j = 0; j < files->len; j++)
        {
          TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, j);
          TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
          g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
          g_autofree char *job = g_strndup (base, strlen (base) - strlen (".json"));
          g_autofree char *shown = escape_name (job, TRUE);

          if (process == NULL || g_strcmp0 (tessera_process_get_host (process), host) != 0)
            continue;
          found++;
          if (!yes)
            g_print (_("%s: would remove %s (host %s)\n"), name, shown, shown_host);
          else if (tessera_tracked_dynamic_resource_remove_holder (resource, job, &error))
            {
              g_autofree char *detail = g_strdup_printf ("tessera clean --host %s", host);

              tessera_tracked_dynamic_resource_audit (resource, "retire", lock_file, detail);
              g_print (_("%s: removed %s (host %s)\n"), name, shown, shown_host);
            }
          else if (!g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING))   /* gone meanwhile */
            status = fail (oserr_or (error, error->domain == G_IO_ERROR ? EXIT_IOERR : 1),
                           "%s", error->message);
          if (before != NULL)
            g_hash_table_remove (before, job);
          g_clear_error (&error);
        }
      if (yes)
        {
          /* What opening the pool removed as dead is said, as plain
           * clean says it. */
          found += report_gone_holders (name, before, pool);
          found += clean_host_heartbeats (name, pool, host, shown_host);
          found += clean_host_job_folders (name, pool, host, &left);
        }
    }
  /* Nothing of that host: perhaps a mistyped name. The pools' hosts/
   * say which other hosts they know (the status stays: 64 without
   * --yes, 0 with it, as a second clean of a retired host is). */
  if (found == 0 && left == 0)
    {
      g_autoptr(GHashTable) hosts = dup_known_hosts (config, names);

      if (g_hash_table_size (hosts) > 0 && !g_hash_table_contains (hosts, shown_host))
        {
          g_autofree char *known = join_host_names (hosts);
          /* Translators: the second %s lists host names, comma separated */
          g_autofree char *hint = g_strdup_printf (_("no holder and no mark of a host %s in these pools; the other "
                                                     "hosts they know: %s"), shown_host, known);

          if (!yes)
            return fail (EXIT_USAGE, "%s", hint);
          g_print ("%s\n", hint);
        }
    }
  if (!yes)
    return fail (EXIT_USAGE, "%s", found > 0 ? _("nothing removed: add --yes to remove them")
                                             : _("nothing to remove (and without --yes, nothing would be)"));
  if (found == 0 && left == 0)
    g_print ("%s\n", _("nothing to remove"));
  return status;
}

int
cmd_clean (int argc, char **argv)
{
  g_autofree char *min_age_text = NULL;
  double min_age = -1;
  gboolean force = FALSE;
  gboolean yes = FALSE;
  g_autofree char *host = NULL;
  const GOptionEntry entries[] = {
    { "min-age", 0, 0, G_OPTION_ARG_STRING, &min_age_text,
      N_("Remove holders without a process older than SECONDS (default: 30)"), N_("SECONDS") },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      N_("Remove the holders JOB… of resource NAME whatever their liveness (see the man page for the risk)"),
      NULL },
    { "host", 0, 0, G_OPTION_ARG_STRING, &host,
      N_("Remove the holdings of the retired host HOST (with --yes; without, show them)"), N_("HOST") },
    { "yes", 0, 0, G_OPTION_ARG_NONE, &yes, N_("Do remove what --host names"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…] | --force NAME JOB… | --host HOST --yes [NAME…]"),
                 _("Remove dead and orphaned holders now, saying what was removed."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  int status = 0;
  guint removed = 0, left = 0;

  if (!parse (context, &argc, &argv, &status) ||
      (min_age_text != NULL && !parse_seconds ("--min-age", min_age_text, FALSE, &min_age, &status)) ||
      (config = load_config (&status)) == NULL)
    return status;
  if (force && host != NULL)
    return fail (EXIT_USAGE, _("--force and --host go separately"));
  if (yes && host == NULL)
    return fail (EXIT_USAGE, _("--yes goes with --host"));
  if (force)
    return clean_force (config, argc, argv);
  if (host != NULL)
    return clean_host (config, host, yes, argc, argv);
  if ((names = selected_names (config, argc, argv, &status)) == NULL)
    return status;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *folder = tessera_config_dup_path (config, name);
      /* Opening a resource already removes what is dead: look before.
       * The temporaries of killed writers go too: the library sweeps
       * those of jobs/ older than min-age, and those of the writer's own
       * folder older than a minute. */
      g_autoptr(GHashTable) before = lock_file_names (folder);
      g_autofree char *own_tmp = g_strdup_printf (".tessera-tmp-%u", (unsigned) geteuid ());
      g_auto(Temporaries) jobs_tmp = { -1, NULL, 0 };
      g_auto(Temporaries) writer_tmp = { -1, NULL, 0 };
      double open_min_age;
      g_autoptr(GError) error = NULL;
      TesseraTrackedDynamicResource *resource = NULL;

      list_temporaries (&jobs_tmp, folder, "jobs", FALSE);
      list_temporaries (&writer_tmp, folder, own_tmp, TRUE);
      if ((resource = open_resource_full (config, name, FALSE, &status)) == NULL)
        return status;
      /* Opening swept jobs/ with the configured min-age, the update with
       * --min-age. */
      open_min_age = tessera_tracked_dynamic_resource_get_min_age (resource);
      if (min_age >= 0)
        tessera_tracked_dynamic_resource_set_min_age (resource, min_age);
      if (!tessera_tracked_dynamic_resource_update (resource, &error))
        return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      removed += report_gone_holders (name, before, folder);
      left += report_left_holders (name, before, folder, resource);
      removed += report_gone_temporaries (name, "jobs", &jobs_tmp,
                                          MIN (open_min_age, tessera_tracked_dynamic_resource_get_min_age (resource)));
      removed += report_gone_temporaries (name, own_tmp, &writer_tmp, TESSERA_FOLDER_PATH_TEMPORARY_STALE_S);
      removed += clean_fence_strays (config, name, folder, &left);
      {
        /* The lease, else (a lock-less mount's marks) min-age. */
        double lease = 0;

        g_object_get (resource, "host-lease", &lease, NULL);
        removed += clean_host_temporaries (name, folder, lease > 0 ? lease
                                                       : tessera_tracked_dynamic_resource_get_min_age (resource));
      }
    }
  /* Job folders belong to no resource: cleaned when all are. */
  if (argc <= 1)
    removed += clean_job_folders (config);
  if (removed == 0 && left == 0)
    g_print ("%s\n", _("nothing to remove"));
  return 0;
}
