/* test-security-clean.c: `tessera clean --host`: what it removes from a
 * host's folders of a group pool, whose marks and job folders, and only
 * those.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

/* What clean --host removes (issue 38, points 2 and 3) */

/* A mark a member plants in hosts/, named for another member (a host id,
 * then the first member's uid), blocks the pool by design: it cannot be
 * trusted to say its host's locks cross. Root's `clean --host HOSTID`
 * removes it by its file name, whatever its JSON says, and the pool
 * serves again. */
static void
test_clean_host_planted_mark (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *id = "0123456789abcdef0123456789abcdef";
  struct passwd *pw = getpwnam (first);
  g_autofree char *out = NULL;
  g_autofree char *mark = NULL;
  g_autofree char *script = NULL;

  if (pw == NULL)
    g_error ("no user %s", first);
  init_group_pool (f);
  mark = g_strdup_printf ("%s/r/hosts/%s.%u.host", f->gp->pool, id, (guint) pw->pw_uid);
  script = g_strdup_printf ("printf '{\"host\": \"elsewhere\", \"locks_cross\": true}' > '%s'", mark);
  plant (f, script);
  g_assert_cmpint (tessera_by (f, first, &out, FALSE, "run", "--no-wait", "--need", "r=1", "--", "true", NULL), !=, 0);
  g_clear_pointer (&out, g_free);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", id, "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, first, &out, FALSE, "run", "--no-wait", "--need", "r=1", "--", "true", NULL), ==, 0);
}

/* clean --host node7 removes node7's job folders (node7-PID-RANDOM, as
 * run names them), not those of a host node7-gpu (node7-gpu-PID-RANDOM,
 * whose name begins the same), nor one whose job lock is held. */
static void
test_clean_host_job_folders (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  g_autofree char *other = NULL;
  g_autofree char *held = NULL;
  g_autofree char *lock = NULL;
  g_autofree char *out = NULL;
  g_autoptr(Helper) locker = NULL;

  init_group_pool (f);
  other = plant_job_folder (f, first, "node7-gpu-1234-abcdef01", "job", JOB_PID, "{\"dynamic_locks\": []}");
  held = plant_job_folder (f, first, "node7-1235-abcdef02", "job", JOB_PID, "{\"dynamic_locks\": []}");
  lock = g_build_filename (held, "job.lock", NULL);
  locker = helper_spawn_argv (NULL, (const char *[]) {
    test_python (), "-c", "import fcntl, sys\n"
                          "f = open(sys.argv[1], 'r+')\n"
                          "fcntl.lockf(f, fcntl.LOCK_EX)\n"
                          "print('held', flush=True)\n"
                          "sys.stdin.read()\n", lock, NULL });
  helper_expect_line (locker, "held", BOUND_S);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_true (g_file_test (other, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (held, G_FILE_TEST_IS_DIR));

  /* Its job lock free, node7's folder goes; node7-gpu's stays. */
  helper_close_stdin (locker);
  g_assert_cmpint (helper_wait (locker), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (held, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (other, G_FILE_TEST_IS_DIR));
}

/* The first line of @text that has @needle in it (a copy), or NULL. */
static char *
line_containing (const char *text, const char *needle)
{
  const char *hit = strstr (text, needle);
  const char *start, *end;

  if (hit == NULL)
    return NULL;
  for (start = hit; start > text && start[-1] != '\n'; start--)
    ;
  end = strchr (hit, '\n');
  return end != NULL ? g_strndup (start, (gsize) (end - start)) : g_strdup (start);
}

/* A pool's owner who is not root retires host node7 (issue 42, a review
 * finding): `tessera clean --host node7 --yes` removes the member's lock
 * file naming node7 and her mark of node7, but her job folder
 * (runs/UID/node7-PID-RANDOM, hers, its files hers) is no folder the
 * owner may empty: she is told so, one line naming the folder, whose it
 * is and who may remove it, not left to believe it gone. The member's
 * own `tessera clean` then removes it, as that line says. */
static void
test_clean_host_job_folders_by_owner (Fixture *f, gconstpointer data)
{
  const char *owner = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  const char *id = "0123456789abcdef0123456789abcdef";
  g_autofree char *job = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *mark = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *line = NULL;

  test_run_or_fail ((const char *[]) { "chown", owner, f->gp->pool, NULL });
  g_assert_cmpint (tessera_by (f, owner, &out, FALSE, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  job = plant_job_folder (f, member, "node7-1236-abcdef03", "job", JOB_PID, "{\"dynamic_locks\": []}");
  lock_file = g_strdup_printf ("%s/r/jobs/far@1.json", f->gp->pool);
  mark = g_strdup_printf ("%s/r/hosts/%s.%u.host", f->gp->pool, id, test_uid_of (member));
  script = g_strdup_printf ("printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
                            "\"process\": {\"type\": \"local\", \"pid\": 123, \"host\": \"node7\"}}' > '%s'; "
                            "printf '{\"host\": \"node7\", \"lease\": 0, \"locks_cross\": true}' > '%s'",
                            job, lock_file, mark);
  plant (f, script);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (mark, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, owner, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (job, G_FILE_TEST_IS_DIR));
  if ((line = line_containing (out, job)) == NULL)
    g_error ("the member's job folder %s left unsaid: %s", job, out);
  g_assert_nonnull (strstr (line, member));
  g_assert_nonnull (strstr (line, "root"));

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  security_test_add ("/security/clean-host/planted-mark", NULL, test_clean_host_planted_mark);
  security_test_add ("/security/clean-host/job-folders", NULL, test_clean_host_job_folders);
  security_test_add ("/security/clean-host/job-folders-by-owner", NULL, test_clean_host_job_folders_by_owner);
  return g_test_run ();
}
