/* tessera-helper.c: a real peer process for the multi-process tests.
 *
 *   tessera-helper cycle FOLDER TOTAL ID CYCLES LOG
 *       CYCLES times: acquire 1 unit, log "A <monotonic µs> ID 1 - TOKEN"
 *       (TOKEN: the grant's fencing token), hold 1-8 ms, log
 *       "R <monotonic µs> ID", release.
 *   tessera-helper hold FOLDER TOTAL ID COUNT [--no-process]
 *       acquire COUNT units, print "ACQUIRED", hold until stdin closes,
 *       release, print "RELEASED".
 *   tessera-helper wait FOLDER TOTAL ID TIMEOUT [--watch-first]
 *       check the resource is full, print "WAITING", then wait up to
 *       TIMEOUT s: print "ACQUIRED polls=N" or "ERROR <code>". With
 *       --watch-first, the check is a wait of 0.3 s (which starts
 *       watching the folder), then "WATCHING" and a line read on stdin
 *       (nobody waits meanwhile) before "WAITING".
 *   tessera-helper try FOLDER TOTAL ID COUNT
 *       open the resource and look at its folder, print "READY", wait for
 *       a line on stdin, try once to acquire COUNT units: print "ACQUIRED",
 *       "UNAVAILABLE" or "ERROR <message>", then hold until stdin closes.
 *   tessera-helper tries FOLDER TOTAL ID COUNT
 *       for each line on stdin, try once to acquire COUNT units and
 *       release them at once: print "ACQUIRED", "UNAVAILABLE" or
 *       "ERROR <message>"; exit when stdin closes.
 *   tessera-helper wake FOLDER
 *       run with TESSERA_PAUSE_AT=wait-registered: a thread waits for 1
 *       unit (up to 30 s); once it is held at that pause point, print
 *       "WAITING" and wait for a line on stdin; then the main thread takes
 *       1 unit at once ("A ACQUIRED" or "A UNAVAILABLE"), lets the waiter
 *       go on and prints "W ACQUIRED" or "W <error>".
 *   tessera-helper request FOLDER TOTAL ID COUNT TIMEOUT [async]
 *       try once to acquire COUNT units; if that fails, print "WAITING",
 *       then wait up to TIMEOUT s (through lock_async and a main loop with
 *       "async"): print
 *       "ACQUIRED ms=N" (N: milliseconds waited) or "ERROR <code> <message>",
 *       hold until stdin closes, release, print "RELEASED".
 *   tessera-helper flock PATH | lockf PATH
 *       take only that kind of lock on PATH, print "LOCKED", hold until
 *       stdin closes.
 *   tessera-helper read-lock PATH fcntl|ofd|flock-sh|flock-ex
 *       open PATH for reading only (what a user who may only read it
 *       has), take that lock on it without waiting (a classic or an OFD
 *       fcntl read lock, a shared or an exclusive flock), print "LOCKED"
 *       (or "FAILED …"), hold it until stdin closes.
 *   tessera-helper probe PATH
 *       take a shared fcntl lock on PATH (what a peer's flock probe is on
 *       NFS, which emulates flock with POSIX locks), print "LOCKED", hold
 *       it until stdin closes.
 *   tessera-helper hold-job JOB_URI
 *       take the job lock of JOB_URI (tessera_job_hold), print "HELD" or
 *       "ERROR ms=N <message>" (N: what the take took), keep it until
 *       stdin closes.
 *   tessera-helper job-locks
 *       as a job's process: load $TESSERA_LOCKS, enter its locks, print
 *       "JOB-LOCKS N" (or "ERROR <message>", exit 1), leave them.
 *   tessera-helper keep-fd PID FD
 *       copy descriptor FD of process PID (pidfd_getfd: the same open
 *       file, so the same locks), print "KEPT", keep it until stdin
 *       closes: a stand-in that keeps a vanished host's locks (NFSv3).
 *   tessera-helper set-user-id UID [acting]
 *       run as root: become what a set-user-ID root program run by UID
 *       is (real uid UID, effective and saved uid root, not dumpable:
 *       its /proc/PID is root's), print its pid, wait until stdin
 *       closes. With "acting": become a root daemon acting for UID
 *       instead (real and saved uid root, effective uid UID).
 *
 * TOTAL < 0 leaves informations.json alone.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-peer.h"
#include "test-utils.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

static TestCounter *
open_counter (const char *folder, const char *total)
{
  g_autoptr(GError) error = NULL;
  TestCounter *counter = test_counter_new (folder, g_ascii_strtoll (total, NULL, 10), &error);

  if (counter == NULL)
    {
      g_printerr ("helper: %s\n", error->message);
      exit (2);
    }
  return counter;
}

/* The job "helper" @id, its folder under the pool's jobs/helper/. */
static TesseraJob *
make_job (const char *folder, const char *id, gboolean with_process)
{
  return test_peer_job_new (folder, "jobs/helper", id, with_process);
}

static int
do_cycle (char **argv)
{
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], TRUE);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  int cycles = atoi (argv[5]);
  int fd = open (argv[6], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

  if (fd < 0)
    return 2;
  for (int i = 0; i < cycles; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, 120, NULL, &error);
      gint64 token = 0;

      if (lock == NULL)
        {
          g_printerr ("helper %s: %s\n", argv[4], error->message);
          return 1;
        }
      g_object_get (lock, "fencing-token", &token, NULL);
      {
        g_autofree char *grant = g_strdup_printf ("1 - %" G_GINT64_FORMAT, token);
        test_peer_log (fd, 'A', argv[4], grant);
      }
      g_usleep (g_random_int_range (1000, 8000));
      test_peer_log (fd, 'R', argv[4], NULL);
      g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
    }
  close (fd);
  return 0;
}

static int
do_hold (int argc, char **argv)
{
  gboolean with_process = !(argc > 6 && strcmp (argv[6], "--no-process") == 0);
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], with_process);
  g_autoptr(TesseraDynamicDependency) dep =
    test_counter_dependency_new (counter, job, g_ascii_strtoll (argv[5], NULL, 10));
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, 120, NULL, &error);

  if (lock == NULL)
    {
      g_printerr ("helper %s: %s\n", argv[4], error->message);
      return 1;
    }
  test_peer_say ("ACQUIRED");
  test_peer_hold_until_stdin_closes ();
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  test_peer_say ("RELEASED");
  return 0;
}

static int
do_wait (int argc, char **argv)
{
  gboolean watch_first = argc > 6 && strcmp (argv[6], "--watch-first") == 0;
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], TRUE);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (counter, job, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  guint polls_before;

  lock = tessera_dynamic_dependency_lock (dep, watch_first ? 0.3 : 0, NULL, &error);
  if (lock != NULL || !g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
    {
      test_peer_say ("ERROR not-full");
      return 1;
    }
  g_clear_error (&error);
  if (watch_first)
    {
      char buf[64];

      test_peer_say ("WATCHING");
      if (fgets (buf, sizeof buf, stdin) == NULL)
        return 1;
    }
  polls_before = test_counter_get_polls (counter);
  test_peer_say ("WAITING");
  lock = tessera_dynamic_dependency_lock (dep, g_ascii_strtod (argv[5], NULL), NULL, &error);
  if (lock == NULL)
    {
      test_peer_say_error (error);
      return 1;
    }
  {
    g_autofree char *line = g_strdup_printf ("ACQUIRED polls=%u",
                                             test_counter_get_polls (counter) - polls_before);
    test_peer_say ("%s", line);
  }
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  return 0;
}

static int
do_try (char **argv)
{
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], TRUE);
  g_autoptr(TesseraDynamicDependency) dep =
    test_counter_dependency_new (counter, job, g_ascii_strtoll (argv[5], NULL, 10));

  return test_peer_try (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), dep, argv[4]);
}

static gpointer
wait_one (gpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (data, 30, NULL, &error);
  g_autofree char *line = lock != NULL ? g_strdup ("W ACQUIRED") : g_strdup_printf ("W %s", error->message);

  test_peer_say ("%s", line);
  if (lock != NULL)
    g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  return NULL;
}

static int
do_wake (char **argv)
{
  g_autoptr(TestCounter) counter = open_counter (argv[2], "-1");
  g_autoptr(TesseraJob) job_w = make_job (argv[2], "waiter", TRUE);
  g_autoptr(TesseraJob) job_a = make_job (argv[2], "taker", TRUE);
  g_autoptr(TesseraDynamicDependency) dep_w = test_counter_dependency_new (counter, job_w, 1);
  g_autoptr(TesseraDynamicDependency) dep_a = test_counter_dependency_new (counter, job_a, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TestPausePoint) pause = test_pause_point_new (g_getenv ("TESSERA_PAUSE_DIR"), "wait-registered");
  GThread *waiter;
  char buf[64];

  /* The lock class is made here, before the second thread exists: GLib's
   * type lock, which ThreadSanitizer cannot see, would order it otherwise. */
  g_clear_object (&lock);
  lock = tessera_dynamic_dependency_create_lock (dep_a, NULL);
  g_clear_object (&lock);
  waiter = g_thread_new ("waiter", wait_one, dep_w);
  test_pause_point_wait (pause, 60);
  test_peer_say ("WAITING");
  if (fgets (buf, sizeof buf, stdin) == NULL)
    return 1;
  lock = tessera_dynamic_dependency_lock (dep_a, 0, NULL, &error);
  test_peer_say ("%s", lock != NULL ? "A ACQUIRED" : "A UNAVAILABLE");
  test_pause_point_release (pause);
  g_thread_join (waiter);
  if (lock != NULL)
    g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  return 0;
}

static int
do_request (int argc, char **argv)
{
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], TRUE);
  g_autoptr(TesseraDynamicDependency) dep =
    test_counter_dependency_new (counter, job, g_ascii_strtoll (argv[5], NULL, 10));
  const char *min_age = g_getenv ("TEST_MIN_AGE");

  /* The pool's min-age, as its configuration would give it. */
  if (min_age != NULL)
    tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter),
                                                  g_ascii_strtod (min_age, NULL));
  return test_peer_request (dep, g_ascii_strtod (argv[6], NULL), argc > 7 && strcmp (argv[7], "async") == 0);
}

static int
say_failed (const char *what, int saved_errno)
{
  g_autofree char *line = g_strdup_printf ("FAILED %s: %s", what, g_strerror (saved_errno));

  test_peer_say ("%s", line);
  return 2;
}

static int
do_raw_lock (char **argv, gboolean use_flock)
{
  int fd = open (argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0666);

  /* Said, so that a test expecting LOCKED tells why it did not come. */
  if (fd < 0)
    return say_failed ("open", errno);
  if (use_flock ? flock (fd, LOCK_EX) < 0 : lockf (fd, F_LOCK, 0) < 0)
    return say_failed (use_flock ? "flock" : "lockf", errno);
  test_peer_say ("LOCKED");
  test_peer_hold_until_stdin_closes ();
  close (fd);
  return 0;
}

static int
do_probe (char **argv)
{
  struct flock fl = { 0 };
  int fd = open (argv[2], O_RDWR | O_CREAT | O_CLOEXEC, 0666);

  fl.l_type = F_RDLCK;
  fl.l_whence = SEEK_SET;
  if (fd < 0)
    return say_failed ("open", errno);
  if (fcntl (fd, F_SETLK, &fl) < 0)
    return say_failed ("fcntl", errno);
  test_peer_say ("LOCKED");
  test_peer_hold_until_stdin_closes ();
  close (fd);
  return 0;
}

static int
do_read_lock (char **argv)
{
  struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  const char *kind = argv[3];
  int fd = open (argv[2], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  int r;

  if (fd < 0)
    return say_failed ("open", errno);
  if (strcmp (kind, "fcntl") == 0)
    r = fcntl (fd, F_SETLK, &fl);
  else if (strcmp (kind, "ofd") == 0)
    r = fcntl (fd, F_OFD_SETLK, &fl);
  else if (strcmp (kind, "flock-sh") == 0)
    r = flock (fd, LOCK_SH | LOCK_NB);
  else if (strcmp (kind, "flock-ex") == 0)
    r = flock (fd, LOCK_EX | LOCK_NB);
  else
    {
      close (fd);
      return say_failed (kind, EINVAL);
    }
  if (r < 0)
    return say_failed (kind, errno);
  test_peer_say ("LOCKED");
  test_peer_hold_until_stdin_closes ();
  close (fd);
  return 0;
}

static int
do_hold_job (char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = tessera_job_new ("task", "held", argv[2], &error);
  gint64 start = g_get_monotonic_time ();

  if (job == NULL || !tessera_job_hold (job, &error))
    {
      /* How long the take took, for a test to tell a refusal from a wait
       * whatever the time the helper took to start. */
      g_autofree char *line = g_strdup_printf ("ERROR ms=%" G_GINT64_FORMAT " %s",
                                               (g_get_monotonic_time () - start) / 1000, error->message);
      test_peer_say ("%s", line);
      return 1;
    }
  test_peer_say ("HELD");
  test_peer_hold_until_stdin_closes ();
  tessera_job_unhold (job);
  return 0;
}

static int
do_keep_fd (char **argv)
{
  int pidfd = (int) syscall (SYS_pidfd_open, atoi (argv[2]), 0);
  int fd;

  if (pidfd < 0)
    return 2;
  fd = (int) syscall (SYS_pidfd_getfd, pidfd, atoi (argv[3]), 0);
  close (pidfd);
  if (fd < 0)
    return 2;
  test_peer_say ("KEPT");
  test_peer_hold_until_stdin_closes ();
  close (fd);
  return 0;
}

static int
do_set_user_id (char **argv)
{
  g_autofree char *line = NULL;

  uid_t uid = (uid_t) atol (argv[2]);
  gboolean acting = argv[3] != NULL && strcmp (argv[3], "acting") == 0;

  if ((acting ? setresuid (0, uid, 0) : setresuid (uid, 0, 0)) != 0 || prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return 2;
  line = g_strdup_printf ("%d", (int) getpid ());
  test_peer_say ("%s", line);
  test_peer_hold_until_stdin_closes ();
  /* Root again (the saved uid) and dumpable before exit: LeakSanitizer's
   * check at exit traces this process, which it cannot as another user
   * of a process that is not dumpable. */
  if (setresuid (0, 0, 0) != 0 || prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
    return 2;
  return 0;
}

static int
do_job_locks (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJobDependencyLocks) locks = tessera_job_dependency_locks_load (g_getenv ("TESSERA_LOCKS"), &error);
  g_autofree char *line = NULL;

  if (locks == NULL || !tessera_job_dependency_locks_acquire (locks, &error))
    {
      line = g_strdup_printf ("ERROR %s", error->message);
      test_peer_say ("%s", line);
      return 1;
    }
  line = g_strdup_printf ("JOB-LOCKS %u", tessera_job_dependency_locks_get_locks (locks)->len);
  test_peer_say ("%s", line);
  tessera_job_dependency_locks_release (locks);
  return 0;
}
static int
do_tries (char **argv)
{
  g_autoptr(TestCounter) counter = open_counter (argv[2], argv[3]);
  g_autoptr(TesseraJob) job = make_job (argv[2], argv[4], TRUE);
  g_autoptr(TesseraDynamicDependency) dep =
    test_counter_dependency_new (counter, job, g_ascii_strtoll (argv[5], NULL, 10));

  return test_peer_tries (dep);
}

int
main (int argc, char **argv)
{
  if (argc >= 7 && strcmp (argv[1], "cycle") == 0)
    return do_cycle (argv);
  if (argc >= 6 && strcmp (argv[1], "hold") == 0)
    return do_hold (argc, argv);
  if (argc >= 6 && strcmp (argv[1], "wait") == 0)
    return do_wait (argc, argv);
  if (argc >= 3 && strcmp (argv[1], "wake") == 0)
    return do_wake (argv);
  if (argc >= 6 && strcmp (argv[1], "try") == 0)
    return do_try (argv);
  if (argc >= 6 && strcmp (argv[1], "tries") == 0)
    return do_tries (argv);
  if (argc >= 7 && strcmp (argv[1], "request") == 0)
    return do_request (argc, argv);
  if (argc >= 3 && strcmp (argv[1], "flock") == 0)
    return do_raw_lock (argv, TRUE);
  if (argc >= 3 && strcmp (argv[1], "lockf") == 0)
    return do_raw_lock (argv, FALSE);
  if (argc >= 3 && strcmp (argv[1], "hold-job") == 0)
    return do_hold_job (argv);
  if (argc >= 4 && strcmp (argv[1], "read-lock") == 0)
    return do_read_lock (argv);
  if (argc >= 3 && strcmp (argv[1], "probe") == 0)
    return do_probe (argv);
  if (argc >= 2 && strcmp (argv[1], "job-locks") == 0)
    return do_job_locks ();
  if (argc >= 4 && strcmp (argv[1], "keep-fd") == 0)
    return do_keep_fd (argv);
  if (argc >= 3 && strcmp (argv[1], "set-user-id") == 0)
    return do_set_user_id (argv);
  g_printerr ("usage: see the comment at the top of tessera-helper.c\n");
  return 2;
}
