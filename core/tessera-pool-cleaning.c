/* tessera-pool-cleaning.c: what in a pool nobody needs, removed: the
 * fencing parts planted under another's name, the temporary files of
 * killed writers in hosts/, a retired host's heartbeats, marks and job
 * folders, and the folders of ended jobs of `tessera run`. Each
 * operation returns what it removed and what it left, for the caller to
 * say; the holders themselves are the resource's
 * (tessera_tracked_dynamic_resource_update()).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-cleaned-private.h"
#include "tessera-folder-io-private.h"
#include "tessera-host-lease-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FOLDER_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* The biggest locks.json a job folder's cleaning reads: one entry per
 * resource a job holds, a few hundred bytes each. */
#define LOCKS_JSON_MAX (1024 * 1024)

static void
close_if_open (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}
#define AUTO_FD __attribute__ ((cleanup (close_if_open)))

static GPtrArray *
cleaned_array (void)
{
  return g_ptr_array_new_with_free_func (g_object_unref);
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

/* The folder @sub of the lock folder @lock_folder (the configured path
 * followed as tessera_folder_path_open() follows it), never through a
 * link; -1 when it cannot be had. */
static int
open_in_lock_folder (const char *lock_folder, const char *sub)
{
  AUTO_FD int lock_folder_fd = lock_folder != NULL ? tessera_folder_path_open (lock_folder, NULL) : -1;

  return lock_folder_fd >= 0 ? openat (lock_folder_fd, sub, FOLDER_FLAGS) : -1;
}

/**
 * tessera_pool_clean_fence_parts:
 * @lock_folder: a folder pool's lock folder, as configured
 * @may_remove: whether this user administers the pool (root or its
 *   owner): only then are such parts removed
 *
 * The parts of the pool's fencing counter that a user planted under
 * another's name (`fence.UID`, `fence.UID.N`, or either with `.now`: a
 * regular file owned by neither UID nor root). The library counts them
 * up to its bound and slack, as no one's own, and UID cannot replace them
 * in the sticky folder: her parts go under another of her names, and she
 * gets no token once all are taken. With @may_remove they are removed;
 * else each is left and reported.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): what was
 *   removed and what was left, each with the uid it is named for
 */
GPtrArray *
tessera_pool_clean_fence_parts (const char *lock_folder,
                                gboolean    may_remove)
{
  GPtrArray *cleaned = cleaned_array ();
  AUTO_FD int lock_folder_fd = lock_folder != NULL ? tessera_folder_path_open (lock_folder, NULL) : -1;
  DIR *dir = open_dir_copy (lock_folder_fd);
  struct dirent *entry;

  if (dir == NULL)
    return cleaned;
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;
      guint32 uid;
      gboolean removed;

      if (!_tessera_is_fence_name (entry->d_name, &uid) ||
          fstatat (lock_folder_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          st.st_uid == uid || st.st_uid == 0)
        continue;
      removed = may_remove && unlinkat (lock_folder_fd, entry->d_name, 0) == 0;
      g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_FENCE_PART, lock_folder, entry->d_name, NULL, removed,
                                                      (guint) st.st_uid, uid));
    }
  closedir (dir);
  return cleaned;
}

/**
 * tessera_pool_clean_host_temporaries:
 * @lock_folder: a folder pool's lock folder, as configured
 * @bound: the age in seconds past which such a file goes: the pool's host
 *   lease, or where it has none its min-age
 *
 * Removes from the pool's `hosts/` the temporary files of any host's
 * heartbeats and marks (renewers killed half-way) older than @bound. Their
 * age is read on the file server's clock, never ours: against the time
 * stamp of a file made there now. A writer still busy with one after a
 * whole lease has lost its lease anyway.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): what was
 *   removed
 */
GPtrArray *
tessera_pool_clean_host_temporaries (const char *lock_folder,
                                     double      bound)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autofree char *hosts = NULL;
  AUTO_FD int hosts_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_HOSTS);
  g_autofree char *clock_name = NULL;
  struct timespec now = { 0 };
  struct dirent *entry;
  struct stat st;
  DIR *dir = NULL;
  int fd = -1;

  if (hosts_fd < 0)
    return cleaned;
  hosts = g_build_filename (lock_folder, _TESSERA_POOL_HOSTS, NULL);
  /* A file made there now: its mtime is the file server's clock. */
  fd = _tessera_create_temporary_at (hosts_fd, ".tessera-clock", &clock_name);
  if (fd >= 0)
    {
      if (fstat (fd, &st) == 0)
        now = st.st_mtim;
      close (fd);
      unlinkat (hosts_fd, clock_name, 0);
      if (now.tv_sec != 0)
        dir = open_dir_copy (hosts_fd);
    }
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *id = NULL;
      gboolean is_lease, temporary;

      if (!_tessera_host_file_name (entry->d_name, &id, &is_lease, &temporary) || !temporary ||
          fstatat (hosts_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          (double) (now.tv_sec - st.st_mtim.tv_sec) + (double) (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9 < bound ||
          unlinkat (hosts_fd, entry->d_name, 0) < 0)
        continue;
      g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_TEMPORARY, hosts, entry->d_name, NULL, TRUE,
                                                      (guint) st.st_uid, 0));
    }
  if (dir != NULL)
    closedir (dir);
  return cleaned;
}

/**
 * tessera_pool_clean_retired_host_files:
 * @lock_folder: a folder pool's lock folder, as configured
 * @host: the name of a retired host, or its host id
 *
 * Removes, in the pool's `hosts/`, the heartbeats (`HOSTID.UID.lease`)
 * and the marks (`HOSTID.UID.host`, `HOSTID.UID.vVIEW.host`) of the
 * retired host @host, every user's (in a group's pool, where `hosts/` is
 * sticky, only root and the pool's owner may), those of an older Tessera
 * (`HOSTID.lease`, `HOSTID.host`), and the temporary files that its
 * renewers left, never through a link. A temporary file of another host
 * is left to that host (it may be renewing now). @host may be a host id
 * too: the files named for it go, whatever they say (a member's planted
 * mark, named for another's uid, says what she wrote).
 *
 * Returns: (transfer container) (element-type TesseraCleaned): the
 *   heartbeats and marks removed (the temporary files are not listed)
 */
GPtrArray *
tessera_pool_clean_retired_host_files (const char *lock_folder,
                                       const char *host)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autoptr(GHashTable) ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *hosts = NULL;
  AUTO_FD int hosts_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_HOSTS);
  DIR *dir = open_dir_copy (hosts_fd);
  struct dirent *entry;

  if (dir == NULL)
    return cleaned;
  hosts = g_build_filename (lock_folder, _TESSERA_POOL_HOSTS, NULL);
  for (int pass = 0; pass < 2; pass++)
    {
      rewinddir (dir);
      while ((entry = readdir (dir)) != NULL)
        {
          const char *name = entry->d_name;
          g_autofree char *named = NULL;
          g_autofree char *id = NULL;
          gboolean is_lease, temporary;
          struct stat st;

          if (!_tessera_host_file_name (name, &id, &is_lease, &temporary) ||
              fstatat (hosts_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
            continue;
          /* First the heartbeats and the marks, which name their host... */
          if (pass == 0 && !temporary)
            {
              if ((g_str_equal (id, host) || g_strcmp0 ((named = _tessera_host_file_dup_host (hosts_fd, name)),
                                                        host) == 0) &&
                  unlinkat (hosts_fd, name, 0) == 0)
                {
                  g_ptr_array_add (cleaned,
                                   _tessera_cleaned_new (is_lease ? TESSERA_CLEANED_HEARTBEAT : TESSERA_CLEANED_MARK,
                                                         hosts, name, NULL, TRUE, (guint) st.st_uid, 0));
                  g_hash_table_add (ids, g_steal_pointer (&id));
                }
            }
          /* ...then the temporary files of those hosts, or that name it. */
          else if (pass == 1 && temporary &&
                   (g_hash_table_contains (ids, id) ||
                    g_strcmp0 ((named = _tessera_host_file_dup_host (hosts_fd, name)), host) == 0))
            unlinkat (hosts_fd, name, 0);
        }
    }
  closedir (dir);
  return cleaned;
}

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

/* Whether the lock files that the locks.json @name in @job_fd names are
 * all gone (a peer removes them once the command has ended). With
 * @pool_jobs, only those in that folder are looked at (see
 * job_folder_is_done()). */
static gboolean
locks_json_says_done (int job_fd, const char *name, const char *pool_jobs)
{
  g_autofree char *text = _tessera_read_bounded_at (job_fd, name, LOCKS_JSON_MAX, NULL, NULL);
  g_autoptr(JsonNode) root = NULL;
  JsonArray *locks;

  if (text == NULL || (root = tessera_json_parse (text, -1, NULL)) == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      (locks = json_object_get_array_member (json_node_get_object (root), "dynamic_locks")) == NULL)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (locks); i++)
    {
      JsonNode *element = json_array_get_element (locks, i);
      const char *lock_file = JSON_NODE_HOLDS_OBJECT (element)
        ? json_object_get_string_member_with_default (json_node_get_object (element), "lock_file_path", NULL)
        : NULL;
      g_autofree char *jobs_folder = lock_file != NULL ? g_path_get_dirname (lock_file) : NULL;
      GStatBuf lock_st;

      if (lock_file != NULL && pool_jobs != NULL && g_strcmp0 (jobs_folder, pool_jobs) != 0)
        continue;
      /* Only looked at, never opened: a path read from a file. */
      if (lock_file == NULL || g_lstat (lock_file, &lock_st) == 0 || errno != ENOENT)
        return FALSE;
    }
  return TRUE;
}

/* Whether a job folder of `tessera run` (<state>/jobs/<identifier>),
 * opened as @job_fd, may go: its wrapper is gone (the job lock is free),
 * and its command too (no lock file that its locks.json names is left: a
 * peer removes them once the command has ended); a @retired host's
 * locks.json is not read: whatever it names, its job is over. Only
 * Tessera's own file names are in it, regular files all, @owner's; their
 * names go to @files. With @pool_jobs (another user's folder: root's
 * clean), only the lock files its locks.json names in that folder, the
 * pool's own jobs/, are looked at: a path elsewhere is hers to name, and
 * looking would tell her whether root's files exist (or hang on an
 * automount); it is taken as gone, its job lock being free. */
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
      else if (retired && g_str_equal (name, TESSERA_JOB_LOCKS_FILE))
        ;
      else if (g_str_has_suffix (name, ".lock") || is_job_lock_temporary (name))
        done = tessera_job_lock_is_released_at (job_fd, name);   /* the verdict's reading of a job lock */
      else if (g_str_equal (name, TESSERA_JOB_LOCKS_FILE))
        done = locks_json_says_done (job_fd, name, pool_jobs);
      else if (!g_str_has_suffix (name, ".pid"))
        done = FALSE;
      if (done)
        g_ptr_array_add (files, g_strdup (name));
    }
  closedir (dir);
  return done;
}

/* Removes the job folder @name in @jobs_fd, opened as @job_fd, whose
 * files are @files; whether it went. */
static gboolean
remove_job_folder (int jobs_fd, const char *name, int job_fd, GPtrArray *files)
{
  for (guint i = 0; i < files->len; i++)
    unlinkat (job_fd, g_ptr_array_index (files, i), 0);
  return unlinkat (jobs_fd, name, AT_REMOVEDIR) == 0;
}

/* Removes into @cleaned the job folders in @jobs_fd (@jobs, for
 * messages) that `tessera run` left (a wrapper killed by SIGKILL cannot
 * clean up), once their jobs are done. @jobs_fd is a folder of @owner's:
 * no one else can swap a name in it, and every name is removed through
 * it. */
static void
clean_job_folders_in (GPtrArray *cleaned, int jobs_fd, const char *jobs, uid_t owner, const char *pool_jobs)
{
  DIR *dir = open_dir_copy (jobs_fd);
  struct dirent *entry;

  if (dir == NULL)
    return;
  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
      AUTO_FD int job_fd = -1;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if ((job_fd = open_folder_of_at (jobs_fd, name, owner)) < 0)
        continue;
      if (job_folder_is_done (job_fd, owner, FALSE, pool_jobs, files) &&
          remove_job_folder (jobs_fd, name, job_fd, files))
        g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_JOB_FOLDER, jobs, name, NULL, TRUE,
                                                        (guint) owner, 0));
    }
  closedir (dir);
}

/**
 * tessera_clean_state_job_folders:
 * @state_dir: the user's state folder, opened as given (links too: it is
 *   hers)
 *
 * Removes the folders of ended jobs that `tessera run` left in
 * @state_dir's `jobs/` (a wrapper killed by SIGKILL cannot clean up): a
 * job folder goes once its job lock is free and no lock file that its
 * `locks.json` names is left, and only when all in it is Tessera's own
 * files. `jobs/` is reached without following a link, and only if it is
 * this user's.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): the job
 *   folders removed
 */
GPtrArray *
tessera_clean_state_job_folders (const char *state_dir)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autofree char *jobs = g_build_filename (state_dir, TESSERA_JOB_STATE_FOLDER, NULL);
  AUTO_FD int state_fd = open (state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  AUTO_FD int jobs_fd = state_fd >= 0 ? open_folder_of_at (state_fd, TESSERA_JOB_STATE_FOLDER, geteuid ()) : -1;

  clean_job_folders_in (cleaned, jobs_fd, jobs, geteuid (), NULL);
  return cleaned;
}

/* Root's clean: the ended job folders of every user in the pool's runs/
 * (@runs_fd; @lock_folder, for messages and its jobs/): runs/UID opened
 * only when UID owns it, and each of its job folders only when all in it
 * is UID's; of the paths their locks.json name, only those in the pool's
 * jobs/ are looked at. */
static void
clean_others_job_folders (GPtrArray *cleaned, int runs_fd, const char *lock_folder)
{
  g_autofree char *pool_jobs = g_build_filename (lock_folder, _TESSERA_POOL_JOBS, NULL);
  DIR *dir = open_dir_copy (runs_fd);
  struct dirent *entry;

  if (dir == NULL)
    return;
  while ((entry = readdir (dir)) != NULL)
    {
      guint64 uid;
      g_autofree char *runs = NULL;
      AUTO_FD int own_fd = -1;

      if (!g_ascii_string_to_unsigned (entry->d_name, 10, 1, G_MAXUINT32 - 1, &uid, NULL))
        continue;
      if ((own_fd = open_folder_of_at (runs_fd, entry->d_name, (uid_t) uid)) < 0)
        continue;
      runs = g_build_filename (lock_folder, _TESSERA_POOL_RUNS, entry->d_name, NULL);
      clean_job_folders_in (cleaned, own_fd, runs, (uid_t) uid, pool_jobs);
    }
  closedir (dir);
}

/**
 * tessera_pool_clean_job_folders:
 * @lock_folder: a folder pool's lock folder, as configured
 *
 * Removes the folders of ended jobs that `tessera run` left in the pool's
 * `runs/UID` (this user's; see [func@Tessera.clean_state_job_folders] for
 * when a job folder goes), each reached from its parent without following
 * a link, and only if it is this user's. Root's cleaning also empties
 * every other user's `runs/UID`, each folder and file of which must be
 * that user's; of the paths their `locks.json` name, only those in the
 * pool's `jobs/` are looked at.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): the job
 *   folders removed
 */
GPtrArray *
tessera_pool_clean_job_folders (const char *lock_folder)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autofree char *runs = g_build_filename (lock_folder, _TESSERA_POOL_RUNS, uid, NULL);
  AUTO_FD int runs_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_RUNS);
  AUTO_FD int own_fd = runs_fd >= 0 ? open_folder_of_at (runs_fd, uid, geteuid ()) : -1;

  clean_job_folders_in (cleaned, own_fd, runs, geteuid (), NULL);
  if (geteuid () == 0 && runs_fd >= 0)
    clean_others_job_folders (cleaned, runs_fd, lock_folder);
  return cleaned;
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

/**
 * tessera_pool_clean_retired_host_job_folders:
 * @lock_folder: a folder pool's lock folder, as configured
 * @host: the name of a retired host
 *
 * Removes the retired host's job folders in the pool's `runs/`
 * (`UID/HOST-PID-RANDOM`, as `tessera run` names them): this user's, or
 * every user's for root, once their job lock is free (one held is a live
 * job's, whatever its name says: host names made safe may meet) and only
 * when all in one is Tessera's own files, its owner's. Another user's that
 * root would remove (or that this user cannot read to tell) is left and
 * reported: a pool's owner who is not root may not empty it.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): the job
 *   folders removed and those left
 */
GPtrArray *
tessera_pool_clean_retired_host_job_folders (const char *lock_folder,
                                             const char *host)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autofree char *prefix = g_strconcat (host, "-", NULL);
  AUTO_FD int runs_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_RUNS);
  DIR *dir = open_dir_copy (runs_fd);
  struct dirent *entry;

  /* As run makes a job's identifier of its host name. */
  for (char *p = prefix; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      *p = '-';
  if (dir == NULL)
    return cleaned;
  while ((entry = readdir (dir)) != NULL)
    {
      guint64 uid;
      g_autofree char *runs = NULL;
      AUTO_FD int own_fd = -1;
      gboolean others;
      DIR *jobs;
      struct dirent *job;

      if (!g_ascii_string_to_unsigned (entry->d_name, 10, 0, G_MAXUINT32 - 1, &uid, NULL) ||
          (own_fd = open_folder_of_at (runs_fd, entry->d_name, (uid_t) uid)) < 0 ||
          (jobs = open_dir_copy (own_fd)) == NULL)
        continue;
      runs = g_build_filename (lock_folder, _TESSERA_POOL_RUNS, entry->d_name, NULL);
      others = geteuid () != 0 && uid != geteuid ();
      while ((job = readdir (jobs)) != NULL)
        {
          g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
          AUTO_FD int job_fd = -1;

          if (!is_job_folder_of (job->d_name, prefix))
            continue;
          if ((job_fd = open_folder_of_at (own_fd, job->d_name, (uid_t) uid)) < 0)
            {
              /* Hers, closed to us: left. */
              if (others && errno == EACCES)
                g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_JOB_FOLDER, runs, job->d_name, NULL,
                                                                FALSE, (guint) uid, 0));
              continue;
            }
          if (!job_folder_is_done (job_fd, (uid_t) uid, TRUE, NULL, files))
            continue;
          if (others)
            g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_JOB_FOLDER, runs, job->d_name, NULL, FALSE,
                                                            (guint) uid, 0));
          else if (remove_job_folder (own_fd, job->d_name, job_fd, files))
            g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_JOB_FOLDER, runs, job->d_name, NULL, TRUE,
                                                            (guint) uid, 0));
        }
      closedir (jobs);
    }
  closedir (dir);
  return cleaned;
}

/* A live writer's temporary lasts microseconds: one younger than this
 * when listed that is gone after was renamed into place, whatever the
 * min-age says. */
#define LIVE_TMP_S 1.0

/**
 * TesseraPoolCleaning:
 *
 * The cleaning of a folder pool's holders: opening a resource, and its
 * update, already remove the lock files of dead holders and the temporary
 * files of killed writers (see
 * [method@Tessera.TrackedDynamicResource.update]); a cleaning, made
 * before the resource is opened, looks at the pool's `jobs/` and at this
 * user's own writer's folder then, so that after the update it can tell
 * what went, and which holders judged gone were left, being another
 * user's lock file that this one may not delete (a group pool's sticky
 * `jobs/`).
 *
 * A pool that lives elsewhere than in a folder (a store plugin's) has
 * nothing to look at: every list is empty.
 */
struct _TesseraPoolCleaning
{
  GObject parent_instance;
  char *lock_folder;
  /* jobs/'s lock files then: job name -> owner's uid + 1 */
  GHashTable *holders;
  /* The temporaries then, of jobs/ and of the writer's own folder: each
   * folder kept open (one renamed away meanwhile is still the one looked
   * at after), each name with its age then (seconds). */
  int jobs_fd;
  GHashTable *jobs_tmp;
  int own_fd;
  char *own_name;
  GHashTable *own_tmp;
  gint64 listed_us;
};

G_DEFINE_FINAL_TYPE (TesseraPoolCleaning, tessera_pool_cleaning, G_TYPE_OBJECT)

static void
tessera_pool_cleaning_finalize (GObject *object)
{
  TesseraPoolCleaning *self = TESSERA_POOL_CLEANING (object);

  g_free (self->lock_folder);
  g_hash_table_unref (self->holders);
  close_if_open (&self->jobs_fd);
  g_hash_table_unref (self->jobs_tmp);
  close_if_open (&self->own_fd);
  g_free (self->own_name);
  g_hash_table_unref (self->own_tmp);
  G_OBJECT_CLASS (tessera_pool_cleaning_parent_class)->finalize (object);
}

static void
tessera_pool_cleaning_class_init (TesseraPoolCleaningClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_pool_cleaning_finalize;
}

static void
tessera_pool_cleaning_init (TesseraPoolCleaning *self)
{
  self->jobs_fd = self->own_fd = -1;
}

/* The lock files in @lock_folder's jobs/, as the library counts them (a
 * link there is no holder; a FIFO holds everything): job name -> its
 * owner's uid + 1. */
static GHashTable *
list_holders (const char *lock_folder)
{
  GHashTable *holders = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  AUTO_FD int jobs_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_JOBS);
  DIR *dir = open_dir_copy (jobs_fd);
  struct dirent *entry;

  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (g_str_has_suffix (entry->d_name, TESSERA_LOCK_FILE_SUFFIX) &&
          fstatat (jobs_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK (st.st_mode))
        g_hash_table_insert (holders,
                             g_strndup (entry->d_name, strlen (entry->d_name) - strlen (TESSERA_LOCK_FILE_SUFFIX)),
                             GUINT_TO_POINTER ((guint) st.st_uid + 1));
    }
  if (dir != NULL)
    closedir (dir);
  return holders;
}

/* The temporaries in @fd, as the library's sweeps tell them (in the
 * writer's own folder, @own, only a holder's), each with its age now. */
static GHashTable *
list_temporaries (int fd, gboolean own)
{
  GHashTable *ages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  gint64 now_ns = g_get_real_time () * 1000;
  DIR *dir = open_dir_copy (fd);
  struct dirent *entry;
  struct stat st;

  while (dir != NULL && (entry = readdir (dir)) != NULL)
    if (tessera_folder_path_is_temporary_name (entry->d_name, own) &&
        fstatat (fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
      {
        double *age = g_new (double, 1);

        *age = (double) (now_ns - ((gint64) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)) / 1e9;
        g_hash_table_insert (ages, g_strdup (entry->d_name), age);
      }
  if (dir != NULL)
    closedir (dir);
  return ages;
}

/**
 * tessera_pool_cleaning_new:
 * @lock_folder: (nullable): a folder pool's lock folder, as configured
 *   (the path followed as [func@Tessera.folder_path_open] follows it);
 *   %NULL for a pool that lives elsewhere
 *
 * Begins the cleaning of a pool: looks at its holders and temporary files
 * now, before its resource is opened (which removes what is dead).
 *
 * Returns: (transfer full): a new #TesseraPoolCleaning
 */
TesseraPoolCleaning *
tessera_pool_cleaning_new (const char *lock_folder)
{
  TesseraPoolCleaning *self = g_object_new (TESSERA_TYPE_POOL_CLEANING, NULL);
  struct stat st;

  self->lock_folder = g_strdup (lock_folder);
  self->holders = list_holders (lock_folder);
  self->own_name = g_strdup_printf (_TESSERA_POOL_WRITER_TMP "%u", (unsigned) geteuid ());
  self->listed_us = g_get_monotonic_time ();
  self->jobs_fd = open_in_lock_folder (lock_folder, _TESSERA_POOL_JOBS);
  self->own_fd = open_in_lock_folder (lock_folder, self->own_name);
  /* The writer's own folder is looked at only when it is ours and closed
   * to others, as the library requires. */
  if (self->own_fd >= 0 &&
      (fstat (self->own_fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 077) != 0))
    {
      close (self->own_fd);
      self->own_fd = -1;
    }
  self->jobs_tmp = list_temporaries (self->jobs_fd, FALSE);
  self->own_tmp = list_temporaries (self->own_fd, TRUE);
  return self;
}

/**
 * tessera_pool_cleaning_had_holder:
 * @self: a #TesseraPoolCleaning
 * @job: the name of a job
 *
 * Whether @job held something in the pool when the cleaning began.
 *
 * Returns: %TRUE when the pool's `jobs/` had a lock file of @job then
 */
gboolean
tessera_pool_cleaning_had_holder (TesseraPoolCleaning *self,
                                  const char          *job)
{
  g_return_val_if_fail (TESSERA_IS_POOL_CLEANING (self), FALSE);
  return g_hash_table_contains (self->holders, job);
}

/**
 * tessera_pool_cleaning_forget_holder:
 * @self: a #TesseraPoolCleaning
 * @job: the name of a job
 *
 * Forgets that @job held something when the cleaning began: the caller
 * removed it (or tried) and says so itself, so that
 * [method@Tessera.PoolCleaning.list_gone_holders] does not list it.
 */
void
tessera_pool_cleaning_forget_holder (TesseraPoolCleaning *self,
                                     const char          *job)
{
  g_return_if_fail (TESSERA_IS_POOL_CLEANING (self));
  g_hash_table_remove (self->holders, job);
}

/* The lock file of @job in the pool's jobs/, as a path. */
static TesseraCleaned *
holder_cleaned (TesseraPoolCleaning *self, const char *job, gboolean removed, guint owner)
{
  g_autofree char *jobs = g_build_filename (self->lock_folder, _TESSERA_POOL_JOBS, NULL);
  g_autofree char *file = g_strconcat (job, TESSERA_LOCK_FILE_SUFFIX, NULL);

  return _tessera_cleaned_new (TESSERA_CLEANED_HOLDER, jobs, file, job, removed, owner, 0);
}

/**
 * tessera_pool_cleaning_list_gone_holders:
 * @self: a #TesseraPoolCleaning
 *
 * The holders that were in the pool when the cleaning began and are gone
 * now: the opening of its resource and its update removed them, dead.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): those
 *   holders, removed, named by their job
 */
GPtrArray *
tessera_pool_cleaning_list_gone_holders (TesseraPoolCleaning *self)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autoptr(GHashTable) now = NULL;
  GHashTableIter iter;
  gpointer job, owner;

  g_return_val_if_fail (TESSERA_IS_POOL_CLEANING (self), cleaned);
  now = list_holders (self->lock_folder);
  g_hash_table_iter_init (&iter, self->holders);
  while (g_hash_table_iter_next (&iter, &job, &owner))
    if (!g_hash_table_contains (now, job))
      g_ptr_array_add (cleaned, holder_cleaned (self, job, TRUE, GPOINTER_TO_UINT (owner) - 1));
  return cleaned;
}

/**
 * tessera_pool_cleaning_list_left_holders:
 * @self: a #TesseraPoolCleaning
 * @resource: the pool's resource, opened and updated since the cleaning
 *   began
 *
 * The holders that were in the pool when the cleaning began that the
 * update of @resource judged gone (it counts them no more) but whose lock
 * file is left: another user's, which this one may not delete (a group
 * pool's sticky `jobs/`). Its owner, root or the pool's owner may remove
 * it.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): those
 *   holders, left, named by their job, each with the owner of its file
 */
GPtrArray *
tessera_pool_cleaning_list_left_holders (TesseraPoolCleaning           *self,
                                         TesseraTrackedDynamicResource *resource)
{
  GPtrArray *cleaned = cleaned_array ();
  g_autoptr(GHashTable) now = NULL;
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GHashTable) counted = NULL;
  AUTO_FD int jobs_fd = -1;
  GHashTableIter iter;
  gpointer job;

  g_return_val_if_fail (TESSERA_IS_POOL_CLEANING (self), cleaned);
  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (resource), cleaned);
  now = list_holders (self->lock_folder);
  if (g_hash_table_size (now) == 0)
    return cleaned;
  /* Reached as list_holders() reaches it, never through a link. */
  jobs_fd = open_in_lock_folder (self->lock_folder, _TESSERA_POOL_JOBS);
  files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  counted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = tessera_dynamic_lock_file_get_path (g_ptr_array_index (files, i));
      g_autofree char *base = path != NULL ? g_path_get_basename (path) : NULL;

      if (base != NULL && g_str_has_suffix (base, TESSERA_LOCK_FILE_SUFFIX))
        g_hash_table_add (counted, g_strndup (base, strlen (base) - strlen (TESSERA_LOCK_FILE_SUFFIX)));
    }
  g_hash_table_iter_init (&iter, now);
  while (g_hash_table_iter_next (&iter, &job, NULL))
    {
      g_autofree char *file = g_strconcat (job, TESSERA_LOCK_FILE_SUFFIX, NULL);
      struct stat st;

      if (!g_hash_table_contains (self->holders, job) || g_hash_table_contains (counted, job) ||
          jobs_fd < 0 || fstatat (jobs_fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          st.st_uid == geteuid ())
        continue;
      g_ptr_array_add (cleaned, holder_cleaned (self, job, FALSE, (guint) st.st_uid));
    }
  return cleaned;
}

/* Adds to @cleaned the temporaries of @ages (in @fd, the folder @sub of
 * the pool) that are gone and had reached @stale seconds by now: a killed
 * writer's, which the library's sweep removed. */
static void
add_gone_temporaries (TesseraPoolCleaning *self, GPtrArray *cleaned, int fd, const char *sub, GHashTable *ages,
                      double stale)
{
  double since = (double) (g_get_monotonic_time () - self->listed_us) / G_USEC_PER_SEC;
  g_autofree char *folder = NULL;
  GHashTableIter iter;
  gpointer name, age;

  if (fd < 0)
    return;
  folder = g_build_filename (self->lock_folder, sub, NULL);
  g_hash_table_iter_init (&iter, ages);
  while (g_hash_table_iter_next (&iter, &name, &age))
    {
      struct stat st;

      if (*(double *) age < LIVE_TMP_S || *(double *) age + since < stale ||
          fstatat (fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        continue;
      g_ptr_array_add (cleaned, _tessera_cleaned_new (TESSERA_CLEANED_TEMPORARY, folder, name, NULL, TRUE,
                                                      (guint) geteuid (), 0));
    }
}

/**
 * tessera_pool_cleaning_list_gone_temporaries:
 * @self: a #TesseraPoolCleaning
 * @jobs_stale: the age in seconds from which a temporary file of `jobs/`
 *   is a killed writer's: the smallest min-age that the opening and the
 *   update of the pool's resource swept with
 *
 * The temporary files of killed writers that were in the pool's `jobs/`
 * and in this user's own writer's folder when the cleaning began and that
 * the library's sweeps have removed since: those of `jobs/` that had
 * reached @jobs_stale seconds by now, those of the writer's folder
 * %TESSERA_FOLDER_PATH_TEMPORARY_STALE_S. A live writer's, renamed into
 * place meanwhile, is not listed.
 *
 * Returns: (transfer container) (element-type TesseraCleaned): those
 *   temporary files, removed
 */
GPtrArray *
tessera_pool_cleaning_list_gone_temporaries (TesseraPoolCleaning *self,
                                             double               jobs_stale)
{
  GPtrArray *cleaned = cleaned_array ();

  g_return_val_if_fail (TESSERA_IS_POOL_CLEANING (self), cleaned);
  add_gone_temporaries (self, cleaned, self->jobs_fd, _TESSERA_POOL_JOBS, self->jobs_tmp, jobs_stale);
  add_gone_temporaries (self, cleaned, self->own_fd, self->own_name, self->own_tmp,
                        TESSERA_FOLDER_PATH_TEMPORARY_STALE_S);
  return cleaned;
}
