/* test-tool-stuck.c: commands behind a peer that stopped while it held
 * ipc.lock or a lockf(3) lock: they wait, answer --no-wait, release, name
 * the peer and can be interrupted.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

/* ---------------------------------------------------------------------- */
/* Signals and descriptors, as flock(1) and nohup(1) */

/* Whether @process ends within @timeout seconds (GLib reaps it). */
static gboolean
ends_within (GSubprocess *process, double timeout)
{
  return test_poll_until (test_subprocess_has_ended, process, timeout);
}

/* A peer that keeps the pool's ipc.lock, taken with the helper's @how
 * ("flock" or "lockf") once the pool exists. */
static Helper *
stuck_peer_new (Fixture *f, const char *ipc, const char *how)
{
  Helper *peer;
  int status;

  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  peer = helper_spawn (NULL, how, ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  return peer;
}

/* `run --no-wait` behind it, its command to make @mark: whether it ended
 * within 30 s (once the peer is let go, the rest is checked). */
static GSubprocess *
no_wait_behind (Fixture *f, const char *mark, gboolean *ended)
{
  GSubprocess *no_wait = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--no-wait", "--need", "r",
                                        "--", "touch", mark, NULL);

  *ended = ends_within (no_wait, 30);
  return no_wait;
}

/* It ended while the peer kept the lock: 75, naming the lock, its
 * command never run. */
static void
check_no_wait_answered (GSubprocess *no_wait, gboolean ended, const char *ipc, const char *mark)
{
  g_autofree char *said = NULL;

  g_assert_true (ended);
  g_assert_cmpint (test_exit_code (no_wait), ==, 75);
  said = read_error_line (no_wait, 10);
  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, ipc));
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
}

/* A peer stuck in its critical section keeps ipc.lock: `--no-wait` still
 * answers (75, saying why), Ctrl-C still ends a waiting run, which then
 * never runs its command, and `status` says what it waits for (and who
 * keeps it). Before, all waited for the peer without a word. */
static void
test_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autoptr(Helper) peer = stuck_peer_new (f, ipc, "flock");
  g_autofree char *holder = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_autoptr(GSubprocess) no_wait = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) status_command = NULL;
  g_autofree char *status_said = NULL;
  gboolean no_wait_ended, waiter_ended;

  no_wait = no_wait_behind (f, mark, &no_wait_ended);
  waiter = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_SILENCE, "run", "--need", "r",
                          "--", "touch", mark, NULL);
  g_usleep (300 * 1000);   /* let it reach ipc.lock (not needed for correctness) */
  g_subprocess_send_signal (waiter, SIGINT);
  waiter_ended = ends_within (waiter, 30);
  status_command = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                                  "status", NULL);
  status_said = read_error_line (status_command, 30);
  /* Let the peer go in any case, so a failing run still ends. */
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);

  check_no_wait_answered (no_wait, no_wait_ended, ipc, mark);
  g_assert_true (waiter_ended);
  g_assert_cmpint (test_exit_code (waiter), ==, 128 + SIGINT);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_assert_nonnull (status_said);
  g_assert_nonnull (strstr (status_said, ipc));
  g_assert_nonnull (strstr (status_said, holder));
  g_assert_cmpint (test_exit_code (status_command), ==, 0);
}

/* The pool on btrfs, whose stat() names another device than /proc/locks
 * does (a subvolume's own, and not the file system's): the note of a
 * command behind a stuck peer still names the peer's pid. Root mounts a
 * btrfs image (CI is root). */
static void
test_behind_stuck_ipc_lock_btrfs (Fixture *f, gconstpointer data)
{
  g_autofree char *pool = g_build_filename (f->tmp, "r", NULL);
  g_autofree char *image = g_build_filename (f->tmp, "btrfs.img", NULL);
  g_autofree char *ipc = g_build_filename (pool, "ipc.lock", NULL);
  g_autoptr(Helper) peer = NULL;
  g_autoptr(GSubprocess) status_command = NULL;
  g_autofree char *holder = NULL;
  g_autofree char *said = NULL;
  struct stat st;

  g_assert_cmpint (g_mkdir (pool, 0755), ==, 0);
  test_run_or_fail ((const char *[]) { "truncate", "-s", "128M", image, NULL });
  test_run_or_fail ((const char *[]) { "mkfs.btrfs", "-q", image, NULL });
  test_run_or_fail ((const char *[]) { "mount", "-o", "loop", image, pool, NULL });
  peer = stuck_peer_new (f, ipc, "flock");
  holder = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_assert_cmpint (stat (ipc, &st), ==, 0);
  g_test_message ("ipc.lock: device %u:%u by stat()", major (st.st_dev), minor (st.st_dev));

  status_command = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDERR_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE,
                                  "status", NULL);
  said = read_error_line (status_command, 30);
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  g_assert_cmpint (test_exit_code (status_command), ==, 0);
  test_run_or_fail ((const char *[]) { "umount", pool, NULL });

  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, ipc));
  g_assert_nonnull (strstr (said, holder));
}

/* The same behind a seed-era peer that locks ipc.lock with lockf() only
 * (Tessera, holding the flock, then polls for the fcntl lock, asleep
 * rather than in a lock): `--no-wait` still answers, naming the lock. */
static void
test_behind_stuck_lockf_peer (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autoptr(Helper) peer = stuck_peer_new (f, ipc, "lockf");
  g_autoptr(GSubprocess) no_wait = NULL;
  gboolean ended;

  no_wait = no_wait_behind (f, mark, &ended);
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  check_no_wait_answered (no_wait, ended, ipc, mark);
}

/* @run waits behind @peer, which keeps @ipc, where a signal should end
 * it: it says so, and Ctrl-C ends it (128 + SIGINT, naming the lock);
 * what it held is then taken back by the next run. The peer is let go. */
static void
interrupt_behind_peer (Fixture *f, GSubprocess *run, Helper *peer, const char *ipc)
{
  g_autofree char *kept_by = g_strdup_printf ("(pid %d)", (int) helper_get_pid (peer));
  g_autofree char *note = read_error_line (run, 60);
  g_autofree char *last = NULL;
  gboolean ended;
  int status;

  g_subprocess_send_signal (run, SIGINT);
  ended = ends_within (run, 30);
  /* Let the peer go in any case, so a failing run still ends. */
  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);

  g_assert_nonnull (note);
  g_assert_nonnull (strstr (note, ipc));
  g_assert_nonnull (strstr (note, kept_by));
  g_assert_true (ended);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGINT);
  last = read_error_line (run, 10);
  g_assert_nonnull (last);
  g_assert_nonnull (strstr (last, ipc));
  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
}

/* A peer stuck in its critical section when the command ends: the run,
 * left to release behind it, says so once it has waited a while, and
 * Ctrl-C ends it there (its command is gone, so what it still holds is a
 * dead holder's, which the next run takes back). Before, it waited for
 * the peer without a word and no signal ended it. */
static void
test_release_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE |
                   G_SUBPROCESS_FLAGS_STDERR_PIPE,
                   "run", "--need", "r", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_autoptr(Helper) peer = NULL;

  test_wait_ready (holder, 60);
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  interrupt_behind_peer (f, holder, peer, ipc);
}

/* The same while a `--no-wait` run names its command in its lock files
 * (after it acquired, before the command's gate opens): held at pause
 * point "record-process" until the peer keeps ipc.lock. The run says so,
 * Ctrl-C ends it and the command never runs. Before, the run was deaf
 * there (the command, at its gate, took the signal). */
static void
test_naming_behind_stuck_ipc_lock (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->tmp, "r", "ipc.lock", NULL);
  g_autofree char *mark = g_build_filename (f->tmp, "ran", NULL);
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (pause_dir, "record-process");
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(Helper) peer = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL));
  g_assert_cmpint (status, ==, 0);
  run = tessera_spawn (f, pause->env, G_SUBPROCESS_FLAGS_STDERR_PIPE, "run", "--no-wait", "--need", "r",
                       "--", "touch", mark, NULL);
  test_pause_point_wait (pause, 60);
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  test_pause_point_release (pause);
  interrupt_behind_peer (f, run, peer, ipc);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  /* Before any thread: the btrfs test's mount is this process's own.
   * Without the privilege that test fails at its mount; the others run. */
  test_try_private_mounts ();
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/run/behind-stuck-ipc-lock", test_behind_stuck_ipc_lock);
  ADD ("/tool/status/behind-stuck-ipc-lock-on-btrfs", test_behind_stuck_ipc_lock_btrfs);
  ADD ("/tool/run/behind-stuck-lockf-peer", test_behind_stuck_lockf_peer);
  ADD ("/tool/run/release-behind-stuck-ipc-lock", test_release_behind_stuck_ipc_lock);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    ADD ("/tool/run/naming-behind-stuck-ipc-lock", test_naming_behind_stuck_ipc_lock);
  return g_test_run ();
}
