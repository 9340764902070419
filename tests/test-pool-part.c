/* test-pool-part.c: the parts of a folder pool as a program or plugin
 * reaches them (tessera_pool_part_*()): their names and what a group's
 * pool makes of them, a holder's name and owner, how a folder is shared,
 * runs/UID, a run's job folder and a type's side folder opened and made,
 * the group's modes given, who may make a folder in a group's pool, and
 * the names of an atomic write's temporary files; and what else the
 * command asks of the library: a lock file of its own still as written,
 * whether a process of its own has ended
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-utils.h"

/* experimaestro's names; folders sticky in a group's pool; the files a
 * resource's settings give a mode to. */
static void
test_pool_part_names (void)
{
  g_assert_cmpstr (tessera_pool_part_get_name (TESSERA_POOL_PART_JOBS), ==, "jobs");
  g_assert_cmpstr (tessera_pool_part_get_name (TESSERA_POOL_PART_IPC_LOCK), ==, "ipc.lock");
  g_assert_cmpstr (tessera_pool_part_get_name (TESSERA_POOL_PART_INFORMATIONS), ==, "informations.json");
  for (guint i = 0; i < TESSERA_POOL_PART_LAST; i++)
    {
      TesseraPoolPartFlags flags = tessera_pool_part_get_flags (i);

      g_assert_nonnull (tessera_pool_part_get_name (i));
      g_assert_true (!(flags & TESSERA_POOL_PART_FLAGS_FOLDER) || (flags & TESSERA_POOL_PART_FLAGS_STICKY));
    }
  g_assert_true (tessera_pool_part_get_flags (TESSERA_POOL_PART_INFORMATIONS) & TESSERA_POOL_PART_FLAGS_OWNERS);
  g_assert_false (tessera_pool_part_get_flags (TESSERA_POOL_PART_RUNS) & TESSERA_POOL_PART_FLAGS_OF_RESOURCE);
}

/* A part's folder opened, never through a link, nothing made. */
static void
test_pool_part_open (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *jobs = g_build_filename (tmp, "jobs", NULL);
  int fd;

  errno = 0;
  g_assert_cmpint (tessera_pool_part_open (tmp, TESSERA_POOL_PART_JOBS), ==, -1);
  g_assert_cmpint (errno, ==, ENOENT);
  g_assert_false (g_file_test (jobs, G_FILE_TEST_EXISTS));
  g_assert_cmpint (symlink (tmp, jobs), ==, 0);
  g_assert_cmpint (tessera_pool_part_open (tmp, TESSERA_POOL_PART_JOBS), ==, -1);
  g_assert_cmpint (g_unlink (jobs), ==, 0);
  g_assert_cmpint (g_mkdir (jobs, 0755), ==, 0);
  fd = tessera_pool_part_open (tmp, TESSERA_POOL_PART_JOBS);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  test_remove_tree (tmp);
}

/* runs/UID made, ours; the group's and sticky in a group's pool; never
 * reached through a link. */
static void
test_pool_part_open_runs (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
  g_autofree char *group_pool = g_build_filename (tmp, "group-pool", NULL);
  g_autofree char *linked = g_build_filename (tmp, "linked", NULL);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autofree char *expected = g_build_filename (pool, "runs", uid, NULL);
  g_autofree char *group_runs = g_build_filename (group_pool, "runs", NULL);
  g_autofree char *path = NULL;
  g_autofree char *group_path = NULL;
  struct stat st, path_st;
  int fd;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  fd = tessera_pool_part_open_runs (pool, &path);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpstr (path, ==, expected);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (stat (path, &path_st), ==, 0);
  g_assert_cmpuint (st.st_ino, ==, path_st.st_ino);
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
  close (fd);
  /* Again: the same folder. */
  fd = tessera_pool_part_open_runs (pool, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  /* A group's pool (group-writable): runs/ sticky and setgid, runs/UID
   * setgid and readable by the group. */
  g_assert_cmpint (g_mkdir (group_pool, 0755), ==, 0);
  g_assert_cmpint (chmod (group_pool, 0775), ==, 0);
  fd = tessera_pool_part_open_runs (group_pool, &group_path);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (stat (group_runs, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, S_ISVTX | S_ISGID | 0770);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, S_ISGID | 0750);
  close (fd);

  /* runs/ a link: nothing is opened through it. */
  g_assert_cmpint (g_mkdir (linked, 0755), ==, 0);
  g_free (path);
  path = g_build_filename (linked, "runs", NULL);
  g_assert_cmpint (symlink (tmp, path), ==, 0);
  g_clear_pointer (&path, g_free);
  g_assert_cmpint (tessera_pool_part_open_runs (linked, &path), ==, -1);
  g_assert_null (path);

  test_remove_tree (tmp);
}

/* Whether @identifier reads as a job's: <host>-<pid>-<8 hex digits>,
 * one folder name. */
static void
assert_job_identifier (const char *identifier)
{
  g_autofree char *pid = g_strdup_printf ("-%d-", (int) getpid ());
  const char *tail = strstr (identifier, pid);

  g_assert_nonnull (tail);
  tail += strlen (pid);
  g_assert_cmpuint (strlen (tail), ==, 8);
  for (const char *p = tail; *p != '\0'; p++)
    g_assert_true (g_ascii_isxdigit (*p));
  g_assert_null (strchr (identifier, '/'));
  g_assert_null (strchr (identifier, '.'));
}

/* A run's job folder: in the pool's runs/UID, ours and setgid; in the
 * root given when there is no pool or no runs/UID to be had (a link in
 * its place), readable by a setgid root's group; the root made when
 * missing; each folder a new name. */
static void
test_pool_part_make_job_folder (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
  g_autofree char *linked = g_build_filename (tmp, "linked", NULL);
  g_autofree char *linked_runs = g_build_filename (linked, "runs", NULL);
  g_autofree char *root = g_build_filename (tmp, "state", "jobs", NULL);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autofree char *runs = g_build_filename (pool, "runs", uid, NULL);
  g_autofree char *identifier = NULL;
  g_autofree char *other = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st, path_st;
  int fd = -1;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  folder = tessera_pool_part_make_job_folder (pool, root, &identifier, &fd, &error);
  g_assert_no_error (error);
  g_assert_nonnull (folder);
  assert_job_identifier (identifier);
  expected = g_build_filename (runs, identifier, NULL);
  g_assert_cmpstr (folder, ==, expected);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (lstat (folder, &path_st), ==, 0);
  g_assert_cmpuint (st.st_ino, ==, path_st.st_ino);
  g_assert_cmpuint (st.st_uid, ==, geteuid ());
  g_assert_cmpint (st.st_mode & 07777, ==, S_ISGID | 0750);
  g_assert_false (g_file_test (root, G_FILE_TEST_EXISTS));
  close (fd);
  g_clear_pointer (&folder, g_free);
  g_clear_pointer (&expected, g_free);

  /* No pool: in the root, made with its parents. */
  folder = tessera_pool_part_make_job_folder (NULL, root, &other, &fd, &error);
  g_assert_no_error (error);
  assert_job_identifier (other);
  g_assert_cmpstr (other, !=, identifier);
  expected = g_build_filename (root, other, NULL);
  g_assert_cmpstr (folder, ==, expected);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & S_ISGID, ==, 0);
  close (fd);
  g_clear_pointer (&folder, g_free);
  g_clear_pointer (&expected, g_free);
  g_clear_pointer (&other, g_free);

  /* A setgid, group-readable root: its group reads the folder. */
  g_assert_cmpint (chmod (root, S_ISGID | 0750), ==, 0);
  folder = tessera_pool_part_make_job_folder (NULL, root, &other, &fd, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, S_ISGID | 0750);
  close (fd);
  g_clear_pointer (&folder, g_free);
  g_clear_pointer (&other, g_free);

  /* runs/ a link: the root, nothing made through it. */
  g_assert_cmpint (g_mkdir (linked, 0755), ==, 0);
  g_assert_cmpint (symlink (tmp, linked_runs), ==, 0);
  folder = tessera_pool_part_make_job_folder (linked, root, &other, &fd, &error);
  g_assert_no_error (error);
  expected = g_build_filename (root, other, NULL);
  g_assert_cmpstr (folder, ==, expected);
  close (fd);
  g_clear_pointer (&folder, g_free);
  g_clear_pointer (&other, g_free);

  /* A root that cannot be made: the folder's path in the message. */
  g_assert_cmpint (chmod (tmp, 0500), ==, 0);
  if (access (tmp, W_OK) < 0)
    {
      g_autofree char *unmade = g_build_filename (tmp, "unmade", NULL);

      g_assert_null (tessera_pool_part_make_job_folder (NULL, unmade, &other, &fd, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
      g_assert_nonnull (strstr (error->message, unmade));
      g_assert_null (other);
      g_clear_error (&error);
    }
  g_assert_cmpint (chmod (tmp, 0700), ==, 0);

  test_remove_tree (tmp);
}

/* A holder's name from its entry: a lock file's .json, a waiting
 * entry's .waiting, nothing from an etcd key's name. */
static void
test_pool_part_holder_name (void)
{
  static const char *const cases[][2] = {
    { "task@host-1-0badcafe.json", "task@host-1-0badcafe" },
    { "task@host-1-0badcafe.waiting", "task@host-1-0badcafe" },
    { "task@host-1-0badcafe", "task@host-1-0badcafe" },
    { "task.waiting.json", "task.waiting" },
    { ".json", "" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = tessera_pool_part_dup_holder_name (cases[i][0]);

      g_assert_cmpstr (name, ==, cases[i][1]);
    }
}

/* Whose an entry the library names by its path is: a lock file in jobs/
 * or a request in queue/, as it is there; -1 for a path elsewhere, even
 * in the lock folder or through a part's name. */
static void
test_pool_part_entry_owner (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *jobs = g_build_filename (tmp, "jobs", NULL);
  g_autofree char *queue = g_build_filename (tmp, "queue", NULL);
  g_autofree char *file = g_build_filename (jobs, "task@1.json", NULL);
  g_autofree char *waiting = g_build_filename (queue, "task@2.waiting", NULL);
  g_autofree char *informations = g_build_filename (tmp, "informations.json", NULL);
  g_autofree char *below = g_build_filename (jobs, "task@1.json", "x", NULL);
  g_autofree char *climbing = g_build_filename (jobs, "..", "informations.json", NULL);

  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, file), ==, -1);
  g_assert_cmpint (g_mkdir (jobs, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (queue, 0755), ==, 0);
  g_assert_true (g_file_set_contents (file, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (waiting, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (informations, "{}", -1, NULL));
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, file), ==, (gint64) geteuid ());
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, waiting), ==, (gint64) geteuid ());
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, informations), ==, -1);
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, below), ==, -1);
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, climbing), ==, -1);
  g_assert_cmpint (tessera_pool_part_get_entry_owner (tmp, "PREFIX/r/jobs/task@1"), ==, -1);
  test_remove_tree (tmp);
}

/* Whose a lock file in jobs/ is, as it is there: never through a link,
 * -1 when there is none, no jobs/, or a name that leaves jobs/. */
static void
test_pool_part_holder_owner (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *jobs = g_build_filename (tmp, "jobs", NULL);
  g_autofree char *file = g_build_filename (jobs, "task@1.json", NULL);
  g_autofree char *linked = g_build_filename (jobs, "linked@1.json", NULL);
  g_autofree char *outside = g_build_filename (tmp, "outside.json", NULL);

  g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "task@1"), ==, -1);
  g_assert_cmpint (g_mkdir (jobs, 0755), ==, 0);
  g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "task@1"), ==, -1);
  g_assert_true (g_file_set_contents (file, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (outside, "{}", -1, NULL));
  g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "task@1"), ==, (gint64) geteuid ());
  g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "../outside"), ==, -1);
  /* A link is the link's, never its target's: lchown makes it another
   * user's where we may (root). */
  g_assert_cmpint (symlink (file, linked), ==, 0);
  if (geteuid () == 0 && lchown (linked, 1, (gid_t) -1) == 0)
    g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "linked@1"), ==, 1);
  else
    g_assert_cmpint (tessera_pool_part_get_holder_owner (tmp, "linked@1"), ==, (gint64) geteuid ());
  test_remove_tree (tmp);
}

/* How a folder is shared, from the least to the most particular: the
 * one rule every "is it a group's pool" asks. */
static void
test_pool_part_folder_sharing (void)
{
  static const struct
  {
    mode_t mode;
    TesseraFolderSharing sharing;
  } cases[] = {
    { 0755, TESSERA_FOLDER_SHARING_NONE },
    { 0757, TESSERA_FOLDER_SHARING_NONE },
    { S_ISGID | S_ISVTX | 0755, TESSERA_FOLDER_SHARING_NONE },
    { S_ISVTX | 0777, TESSERA_FOLDER_SHARING_EVERYONE },
    { S_ISGID | S_ISVTX | 0777, TESSERA_FOLDER_SHARING_EVERYONE },
    { 0775, TESSERA_FOLDER_SHARING_GROUP },
    { S_ISGID | 0770, TESSERA_FOLDER_SHARING_GROUP },
    { S_ISVTX | 0770, TESSERA_FOLDER_SHARING_GROUP },
    { S_ISGID | S_ISVTX | 0770, TESSERA_FOLDER_SHARING_GROUP_PREPARED },
    { S_ISGID | S_ISVTX | 0775, TESSERA_FOLDER_SHARING_GROUP_PREPARED },
  };
  g_autofree char *tmp = test_make_tmpdir ();
  int fd = open (tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_assert_cmpint (fchmod (fd, cases[i].mode), ==, 0);
      g_assert_cmpint (tessera_folder_path_get_sharing (fd), ==, cases[i].sharing);
    }
  g_assert_cmpint (fchmod (fd, 0700), ==, 0);
  close (fd);
  test_remove_tree (tmp);
}

/* In a child that is user and group @uid, whether it may make "runs"
 * in @fd: 1 when it may, 0 when refused as the documentation says
 * (PERMISSION_DENIED, naming the folder), 2 otherwise. */
static int
may_make_as (uid_t uid, int fd, const char *path)
{
  int status = 0;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *named = g_strdup_printf ("%s/runs", path);

      if (setgroups (0, NULL) < 0 || setresgid (uid, uid, uid) < 0 || setresuid (uid, uid, uid) < 0)
        _exit (3);
      if (tessera_folder_path_may_make_folder (fd, path, "runs", &error))
        _exit (error == NULL ? 1 : 2);
      _exit (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED) &&
             strstr (error->message, named) != NULL ? 0 : 2);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  return WEXITSTATUS (status);
}

/* tessera_folder_path_may_make_folder(): in a group's pool that `tessera
 * init --group` prepared (setgid, sticky, not everyone's), only its owner
 * and root make folders; anywhere else, anyone who can write. */
static void
test_folder_path_may_make_folder (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *prepared = g_build_filename (tmp, "prepared", NULL);
  g_autofree char *plain = g_build_filename (tmp, "plain", NULL);
  g_autofree char *theirs = g_build_filename (tmp, "theirs", NULL);
  const uid_t nobody = 65534;
  int prepared_fd, plain_fd, theirs_fd;

  g_assert_cmpint (g_mkdir (prepared, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (plain, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (theirs, 0700), ==, 0);
  prepared_fd = open (prepared, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  plain_fd = open (plain, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  theirs_fd = open (theirs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (prepared_fd, >=, 0);
  g_assert_cmpint (plain_fd, >=, 0);
  g_assert_cmpint (theirs_fd, >=, 0);
  g_assert_cmpint (fchmod (prepared_fd, S_ISGID | S_ISVTX | 0770), ==, 0);
  g_assert_cmpint (fchmod (plain_fd, 0775), ==, 0);
  g_assert_cmpint (fchmod (theirs_fd, S_ISGID | S_ISVTX | 0770), ==, 0);

  /* Its owner (and root) may. */
  g_assert_true (tessera_folder_path_may_make_folder (prepared_fd, prepared, "runs", NULL));
  g_assert_true (tessera_folder_path_may_make_folder (plain_fd, plain, "runs", NULL));
  if (geteuid () != 0)
    {
      g_test_message ("not root: a member who is not the pool's owner is not tried");
      goto out;
    }
  /* A member who owns neither: refused in the prepared pool only; in a
   * prepared pool of her own, she may. */
  g_assert_cmpint (fchown (theirs_fd, nobody, nobody), ==, 0);
  g_assert_cmpint (fchmod (theirs_fd, S_ISGID | S_ISVTX | 0770), ==, 0);
  g_assert_cmpint (may_make_as (nobody, prepared_fd, prepared), ==, 0);
  g_assert_cmpint (may_make_as (nobody, plain_fd, plain), ==, 1);
  g_assert_cmpint (may_make_as (nobody, theirs_fd, theirs), ==, 1);

out:
  close (prepared_fd);
  close (plain_fd);
  close (theirs_fd);
  test_remove_tree (tmp);
}

/* tessera_folder_path_is_temporary_name(): NAME.json and the six
 * characters an atomic write adds; a lock file's (TASK@ID.json…) only,
 * when asked for those. */
static void
test_folder_path_is_temporary_name (void)
{
  static const struct
  {
    const char *name;
    gboolean temporary;
    gboolean lock_file;
  } cases[] = {
    { "task@1.json.a1B2c3", TRUE, TRUE },
    { "informations.json.Xy12Zq", TRUE, FALSE },
    { "x.json.abcdef", TRUE, FALSE },
    { "task@1.json", FALSE, FALSE },
    { "informations.json", FALSE, FALSE },
    { "task@1.json.abcde", FALSE, FALSE },
    { "task@1.json.abcdefg", FALSE, FALSE },
    { "task@1.txt.abcdef", FALSE, FALSE },
    { ".json.abcdef", FALSE, FALSE },
    { "ipc.lock", FALSE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].name);
      g_assert_cmpint (tessera_folder_path_is_temporary_name (cases[i].name, FALSE), ==, cases[i].temporary);
      g_assert_cmpint (tessera_folder_path_is_temporary_name (cases[i].name, TRUE), ==, cases[i].lock_file);
    }
}

/* A type's side folder: made when asked, opened after, never through a
 * link; the pool's own names and odd words refused. */
static void
test_pool_part_open_side_folder (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
  g_autofree char *side = g_build_filename (pool, "intents", NULL);
  g_autofree char *linked = g_build_filename (pool, "linked", NULL);
  struct stat st, side_st;
  int fd;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  errno = 0;
  g_assert_cmpint (tessera_pool_part_open_side_folder (pool, "intents", FALSE), ==, -1);
  g_assert_cmpint (errno, ==, ENOENT);
  g_assert_false (g_file_test (side, G_FILE_TEST_EXISTS));
  fd = tessera_pool_part_open_side_folder (pool, "intents", TRUE);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (lstat (side, &side_st), ==, 0);
  g_assert_true (S_ISDIR (side_st.st_mode));
  g_assert_cmpuint (st.st_ino, ==, side_st.st_ino);
  close (fd);
  fd = tessera_pool_part_open_side_folder (pool, "intents", FALSE);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  /* The pool's own folders and what is no short word are no side folder. */
  for (guint i = 0; i < 6; i++)
    {
      const char *bad[] = { "jobs", "queue", "hosts", "runs", "../x", "" };

      errno = 0;
      g_assert_cmpint (tessera_pool_part_open_side_folder (pool, bad[i], TRUE), ==, -1);
      g_assert_cmpint (errno, ==, EINVAL);
    }
  /* No folder: nothing. */
  g_assert_cmpint (tessera_pool_part_open_side_folder (NULL, "intents", TRUE), ==, -1);

  /* A link in its place: refused (and warned of once). */
  g_assert_cmpint (symlink (tmp, linked), ==, 0);
  g_test_expect_message ("Tessera", G_LOG_LEVEL_WARNING, "*linked is not a folder*");
  g_assert_cmpint (tessera_pool_part_open_side_folder (pool, "linked", TRUE), ==, -1);
  g_test_assert_expected_messages ();

  test_remove_tree (tmp);
}

/* The side folders of a lock folder: its real folders that are no part
 * of the pool's own, sorted; no link, no file, no odd name. */
static void
test_pool_part_list_side_folders (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
  g_auto(GStrv) sides = NULL;
  const char *folders[] = { "jobs", "hosts", "intents", "b-side", ".tessera-tmp-0", "Odd" };
  int fd;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (folders); i++)
    {
      g_autofree char *path = g_build_filename (pool, folders[i], NULL);

      g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
    }
  {
    g_autofree char *file = g_build_filename (pool, "file", NULL);
    g_autofree char *link = g_build_filename (pool, "linked", NULL);

    g_assert_true (g_file_set_contents (file, "", 0, NULL));
    g_assert_cmpint (symlink (tmp, link), ==, 0);
  }
  fd = open (pool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  sides = tessera_pool_part_list_side_folders (fd);
  g_assert_cmpuint (g_strv_length (sides), ==, 2);
  g_assert_cmpstr (sides[0], ==, "b-side");
  g_assert_cmpstr (sides[1], ==, "intents");
  /* Twice: the caller's descriptor is not moved. */
  g_clear_pointer (&sides, g_strfreev);
  sides = tessera_pool_part_list_side_folders (fd);
  g_assert_cmpuint (g_strv_length (sides), ==, 2);
  close (fd);
  g_clear_pointer (&sides, g_strfreev);
  sides = tessera_pool_part_list_side_folders (-1);
  g_assert_cmpuint (g_strv_length (sides), ==, 0);

  test_remove_tree (tmp);
}

/* A group's pool's modes, whatever the umask: folders group-writable
 * and setgid (sticky when asked), files group-readable, written by the
 * group only when asked; another's or a linked file left alone. */
static void
test_pool_part_share_with_group (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "folder", NULL);
  g_autofree char *file = g_build_filename (tmp, "file", NULL);
  g_autofree char *lock = g_build_filename (tmp, "lock", NULL);
  g_autofree char *linked = g_build_filename (tmp, "linked", NULL);
  struct stat st;
  int fd;

  g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "{}", -1, NULL));
  g_assert_cmpint (chmod (file, 0666), ==, 0);
  g_assert_true (g_file_set_contents (lock, "", -1, NULL));
  g_assert_cmpint (chmod (lock, 0600), ==, 0);

  fd = open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_share_with_group (fd, getegid (), FALSE, TRUE), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0700 | S_IRWXG | S_ISGID | S_ISVTX);
  close (fd);

  fd = open (file, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_share_with_group (fd, getegid (), FALSE, FALSE), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0644);
  close (fd);

  fd = open (lock, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_share_with_group (fd, getegid (), TRUE, FALSE), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0660);
  close (fd);

  /* A file with another link: left as it is. */
  g_assert_cmpint (chmod (lock, 0600), ==, 0);
  g_assert_cmpint (link (lock, linked), ==, 0);
  fd = open (lock, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_share_with_group (fd, getegid (), TRUE, FALSE), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  close (fd);

  test_remove_tree (tmp);
}

/* A resource's mode= and group=: a folder given the mode, a file its
 * read and write bits; a linked file left alone. */
static void
test_pool_part_give_settings (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *folder = g_build_filename (tmp, "folder", NULL);
  g_autofree char *file = g_build_filename (tmp, "file", NULL);
  g_autofree char *linked = g_build_filename (tmp, "linked", NULL);
  struct stat st;
  int fd;

  g_assert_cmpint (g_mkdir (folder, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "{}", -1, NULL));
  g_assert_cmpint (chmod (file, 0600), ==, 0);

  fd = open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_give_settings (fd, 02750, getegid ()), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 02750);
  g_assert_cmpuint (st.st_gid, ==, getegid ());
  /* -1: the mode is left. */
  g_assert_cmpint (tessera_pool_part_give_settings (fd, -1, -1), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 02750);
  close (fd);

  fd = open (file, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_give_settings (fd, 02750, -1), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0640);
  close (fd);

  /* A file with another link: left as it is. */
  g_assert_cmpint (chmod (file, 0600), ==, 0);
  g_assert_cmpint (link (file, linked), ==, 0);
  fd = open (file, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (tessera_pool_part_give_settings (fd, 0777, -1), ==, 0);
  g_assert_cmpint (fstat (fd, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  close (fd);

  test_remove_tree (tmp);
}

/* The pool's owner: the folder holding the resource's in a group's pool,
 * the resource's folder otherwise; none for a folder not made. (Without
 * root every folder is ours: the test holds the answer to the folders
 * asked, not to their owners.) */
static void
test_pool_part_pool_owner (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *pool = g_build_filename (tmp, "pool", NULL);
  g_autofree char *resource = g_build_filename (pool, "r", NULL);
  g_autofree char *missing = g_build_filename (tmp, "missing", "r", NULL);

  g_assert_cmpint (g_mkdir (pool, 0700), ==, 0);
  g_assert_cmpint (tessera_folder_path_get_pool_owner (missing), ==, -1);
  g_assert_cmpint (tessera_folder_path_get_pool_owner (resource), ==, -1);
  g_assert_cmpint (g_mkdir (resource, 0700), ==, 0);
  g_assert_cmpint (tessera_folder_path_get_pool_owner (resource), ==, geteuid ());
  g_assert_cmpint (chmod (pool, S_ISGID | S_ISVTX | 0770), ==, 0);
  g_assert_cmpint (tessera_folder_path_get_pool_owner (resource), ==, geteuid ());
  /* A group's pool is its folder's even before the resource is made. */
  g_assert_cmpint (rmdir (resource), ==, 0);
  g_assert_cmpint (tessera_folder_path_get_pool_owner (resource), ==, geteuid ());
  g_assert_cmpint (chmod (pool, 0700), ==, 0);
  test_remove_tree (tmp);
}

/* A lock file of ours: unchanged while only read or touched to the same
 * text, rewritten when its text or its file changes, gone when removed. */
static void
test_pool_part_own_lock_file (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *path = g_build_filename (tmp, "job@1.json", NULL);
  g_autofree char *other = g_build_filename (tmp, "other", NULL);
  g_autoptr(TesseraOwnLockFile) file = NULL;
  g_autoptr(TesseraOwnLockFile) missing = NULL;

  g_assert_true (g_file_set_contents (path, "{\"pid\": 1}", -1, NULL));
  file = tessera_own_lock_file_new (path);
  g_assert_cmpstr (tessera_own_lock_file_get_path (file), ==, path);
  g_assert_cmpint (tessera_own_lock_file_check (file), ==, TESSERA_OWN_LOCK_FILE_UNCHANGED);
  /* Written again with the same text, in place: still ours. */
  {
    int fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);

    g_assert_cmpint (fd, >=, 0);
    g_assert_cmpint (write (fd, "{\"pid\": 1}", 10), ==, 10);
    close (fd);
  }
  g_assert_cmpint (tessera_own_lock_file_check (file), ==, TESSERA_OWN_LOCK_FILE_UNCHANGED);
  /* Another file in its place, with the same text. */
  g_assert_true (g_file_set_contents (other, "{\"pid\": 1}", -1, NULL));
  g_assert_cmpint (rename (other, path), ==, 0);
  g_assert_cmpint (tessera_own_lock_file_check (file), ==, TESSERA_OWN_LOCK_FILE_REWRITTEN);
  g_assert_cmpint (unlink (path), ==, 0);
  g_assert_cmpint (tessera_own_lock_file_check (file), ==, TESSERA_OWN_LOCK_FILE_GONE);

  /* Never read: only ever told gone. */
  missing = tessera_own_lock_file_new (path);
  g_assert_cmpint (tessera_own_lock_file_check (missing), ==, TESSERA_OWN_LOCK_FILE_GONE);
  g_assert_true (g_file_set_contents (path, "{}", -1, NULL));
  g_assert_cmpint (tessera_own_lock_file_check (missing), ==, TESSERA_OWN_LOCK_FILE_UNCHANGED);
  test_remove_tree (tmp);
}

/* A lock file of ours is reached through its folder, opened as the pool's
 * folders are: a link another user may have put in place of its folder (in
 * a sticky folder open to all) is not followed, so nothing behind it is
 * read, and a file there rewritten is not taken for ours. (Root only: the
 * link must be another user's.) */
static void
test_pool_part_own_lock_file_planted_folder (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *real = g_build_filename (tmp, "real", NULL);
  g_autofree char *file = g_build_filename (real, "job@1.json", NULL);
  g_autofree char *open_to_all = g_build_filename (tmp, "open", NULL);
  g_autofree char *planted = g_build_filename (open_to_all, "jobs", NULL);
  g_autofree char *path = g_build_filename (planted, "job@1.json", NULL);
  g_autoptr(TesseraOwnLockFile) own = NULL;

  if (geteuid () != 0)
    {
      g_test_skip ("needs root: the planted link must be another user's");
      test_remove_tree (tmp);
      return;
    }
  g_assert_cmpint (g_mkdir (real, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (open_to_all, 0755), ==, 0);
  g_assert_cmpint (chmod (open_to_all, 01777), ==, 0);
  g_assert_cmpint (symlink (real, planted), ==, 0);
  g_assert_cmpint (lchown (planted, 1, 1), ==, 0);
  g_assert_true (g_file_set_contents (file, "{\"pid\": 1}", -1, NULL));
  own = tessera_own_lock_file_new (path);
  /* Someone else's text in the file behind the link. */
  {
    int fd = open (file, O_WRONLY | O_TRUNC | O_CLOEXEC);

    g_assert_cmpint (fd, >=, 0);
    g_assert_cmpint (write (fd, "{\"pid\": 22}", 11), ==, 11);
    close (fd);
  }
  g_assert_cmpint (tessera_own_lock_file_check (own), !=, TESSERA_OWN_LOCK_FILE_REWRITTEN);
  test_remove_tree (tmp);
}

/* A pid of ours: running, then a zombie (ended, though not reaped), then
 * gone. */
static void
test_process_pid_has_ended (void)
{
  int gate[2];
  char byte = 0;
  GPid child;
  int status;

  g_assert_false (tessera_process_pid_has_ended (getpid ()));
  g_assert_cmpint (pipe (gate), ==, 0);
  child = fork ();
  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      close (gate[1]);
      /* Until the test closes the gate. */
      while (read (gate[0], &byte, 1) < 0 && errno == EINTR)
        ;
      _exit (0);
    }
  close (gate[0]);
  g_assert_false (tessera_process_pid_has_ended (child));
  close (gate[1]);
  /* A zombie until reaped: waitid with WNOWAIT leaves it so. */
  {
    siginfo_t info = { 0 };

    g_assert_cmpint (waitid (P_PID, child, &info, WEXITED | WNOWAIT), ==, 0);
  }
  g_assert_true (tessera_process_pid_has_ended (child));
  g_assert_cmpint (waitpid (child, &status, 0), ==, child);
  g_assert_true (tessera_process_pid_has_ended (child));
}

/* A lock file of ours is read as the library reads jobs/: its folder is
 * opened without following a link, even one only we could have put
 * there (a pool's jobs/ swapped for a link is refused by the resource
 * too), so nothing behind such a link is read: a file there rewritten is
 * not told ours rewritten (the folder refused is asked again later). */
static void
test_pool_part_own_lock_file_folder_link (void)
{
  g_autofree char *tmp = test_make_tmpdir ();
  g_autofree char *real = g_build_filename (tmp, "real", NULL);
  g_autofree char *file = g_build_filename (real, "job@1.json", NULL);
  g_autofree char *jobs = g_build_filename (tmp, "jobs", NULL);
  g_autofree char *path = g_build_filename (jobs, "job@1.json", NULL);
  g_autoptr(TesseraOwnLockFile) own = NULL;

  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_assert_cmpint (symlink (real, jobs), ==, 0);
  g_assert_true (g_file_set_contents (file, "{\"pid\": 1}", -1, NULL));
  own = tessera_own_lock_file_new (path);
  g_assert_true (g_file_set_contents (file, "{\"pid\": 22}", -1, NULL));
  g_assert_cmpint (tessera_own_lock_file_check (own), !=, TESSERA_OWN_LOCK_FILE_REWRITTEN);
  test_remove_tree (tmp);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pool-part/names", test_pool_part_names);
  g_test_add_func ("/pool-part/open", test_pool_part_open);
  g_test_add_func ("/pool-part/open-runs", test_pool_part_open_runs);
  g_test_add_func ("/pool-part/make-job-folder", test_pool_part_make_job_folder);
  g_test_add_func ("/pool-part/holder-name", test_pool_part_holder_name);
  g_test_add_func ("/pool-part/holder-owner", test_pool_part_holder_owner);
  g_test_add_func ("/pool-part/entry-owner", test_pool_part_entry_owner);
  g_test_add_func ("/pool-part/folder-sharing", test_pool_part_folder_sharing);
  g_test_add_func ("/pool-part/folder-path/may-make-folder", test_folder_path_may_make_folder);
  g_test_add_func ("/pool-part/folder-path/is-temporary-name", test_folder_path_is_temporary_name);
  g_test_add_func ("/pool-part/pool-owner", test_pool_part_pool_owner);
  g_test_add_func ("/pool-part/own-lock-file", test_pool_part_own_lock_file);
  g_test_add_func ("/pool-part/own-lock-file/planted-folder", test_pool_part_own_lock_file_planted_folder);
  g_test_add_func ("/pool-part/process/pid-has-ended", test_process_pid_has_ended);
  g_test_add_func ("/pool-part/open-side-folder", test_pool_part_open_side_folder);
  g_test_add_func ("/pool-part/list-side-folders", test_pool_part_list_side_folders);
  g_test_add_func ("/pool-part/share-with-group", test_pool_part_share_with_group);
  g_test_add_func ("/pool-part/give-settings", test_pool_part_give_settings);
  g_test_add_func ("/pool-part/own-lock-file/folder-link", test_pool_part_own_lock_file_folder_link);
  return g_test_run ();
}
