/* test-hosts-users.c: verdicts between two users of a group: the
 * holder as one user on another host or in a container, the judge here as
 * another, as on a cluster.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-utils.h"
#include "test-hosts-common.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Verdicts between two users of a group: the holder as one user on
 * another host or in a container, the judge here as another, as on a
 * cluster */

/* A holder on another host (same name, other machine and boot), run by
 * one user of a shared pool, counts for the other user; when that host
 * dies, the other user's waiter gets through by the job lock, which it
 * can probe as a member of the pool's group. */
static void
test_users_other_host_holder_then_host_killed (Fixture *f, gconstpointer data)
{
  TestGroupPool *gp = test_group_pool_new ("th", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=1\n");
  const Place there = { .host = "host-b", .gp = gp, .user = gp->users->users[0] };
  const Place judge = { .gp = gp, .user = gp->users->users[1], .poll_max = "1" };
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  double reclaim;

  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  holder = start_holder_at (f, &there, NULL, NULL);
  /* No over-allocation: another user, same host name, other machine. */
  g_assert_cmpint (try_at (f, &judge), ==, 75);
  waiter = start_waiter_at (f, &judge);
  reclaim = kill_and_wait_through (holder, waiter);
  g_test_message ("reclaim time of a dead host, holder and judge two users of a group (job-lock path): %.2f s",
                  reclaim);
  g_assert_cmpfloat (reclaim, <, 30);
  test_group_pool_free (gp);
}

/* The lease verdict between two users of a group (NFSv3: a stand-in keeps
 * the dead host's job lock held): a holder whose host renews its
 * heartbeat counts well past the lease; once the host is dead, the other
 * user reclaims it when the lease is over, not before. */
static void
test_users_lease_verdict (Fixture *f, gconstpointer data)
{
  const double lease = 8;   /* a renewer may stall for half the lease: a loaded machine's stalls stay below */
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=1\nhost-lease=%g\n",
                                             lease);
  TestGroupPool *gp = test_group_pool_new ("tl", config);
  const Place there = { .host = "host-b", .gp = gp, .user = gp->users->users[0] };
  const Place judge = { .gp = gp, .user = gp->users->users[1], .poll_max = "1" };
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) patient = NULL;
  g_autoptr(Helper) stand_in = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *fd = NULL;
  g_autofree char *pid_text = NULL;
  GPid command;
  double reclaim;

  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  holder = start_holder_at (f, &there, &fd, &command);
  pid_text = g_strdup_printf ("%d", (int) command);
  stand_in = helper_spawn (NULL, "keep-fd", pid_text, fd, NULL);
  helper_expect_line (stand_in, "KEPT", 60);

  /* Fresh heartbeat: the holder counts for the whole wait, which outlasts
   * the lease twice. */
  patient = spawn_at (f, &judge, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                      "run", "--timeout", "17", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (patient), ==, 75);

  waiter = start_waiter_at (f, &judge);
  reclaim = kill_and_wait_through (holder, waiter);
  g_test_message ("reclaim time of a dead host, holder and judge two users of a group (lease path, lease %g s, "
                  "job lock still held): %.2f s", lease, reclaim);
  g_assert_cmpfloat (reclaim, >=, lease * 3 / 4 - 0.1);
  g_assert_cmpfloat (reclaim, <, lease + 30);
  helper_close_stdin (stand_in);
  g_assert_cmpint (helper_wait (stand_in), ==, 0);
  test_group_pool_free (gp);
}

/* The container verdict between two users of a group: a holder in a pid
 * namespace of its own counts for the other user outside it (data FALSE)
 * or inside another (TRUE) while it lives, and is reclaimed once it
 * dies. */
static void
test_users_container_verdict (Fixture *f, gconstpointer data)
{
  gboolean judge_inside = GPOINTER_TO_INT (data);
  TestGroupPool *gp = test_group_pool_new ("tc", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=1\n");
  const Place there = { .container = TRUE, .gp = gp, .user = gp->users->users[0] };
  const Place judge = { .container = judge_inside, .gp = gp, .user = gp->users->users[1], .poll_max = "1" };
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  double reclaim;

  holder = start_holder_at (f, &there, NULL, NULL);
  for (int i = 0; i < 2; i++)
    g_assert_cmpint (try_at (f, &judge), ==, 75);
  waiter = start_waiter_at (f, &judge);
  reclaim = kill_and_wait_through (holder, waiter);
  g_test_message ("a dead container's holding reclaimed by another user after %.2f s", reclaim);
  g_assert_cmpfloat (reclaim, <, 30);
  test_group_pool_free (gp);
}

/* A user (not root) on a host where another user planted the host id
 * file with an id of their choice (root never ran Tessera there): that
 * user takes an id of its own, and keeps it. */
static void
test_users_planted_host_id_ignored (Fixture *f, gconstpointer data)
{
  const char *chosen = "0123456789abcdef0123456789abcdef";
  TestGroupPool *gp = test_group_pool_new ("ti", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=1\n");
  const Place planter = { .host = "planted", .gp = gp, .user = gp->users->users[0] };
  g_autofree char *script = g_strdup_printf ("cat '%s'/r/jobs/*.json", gp->pool);
  g_autofree char *var_tmp = g_build_filename (f->tmp, "planted", "var-tmp", NULL);
  g_autofree char *planted = g_build_filename (var_tmp, "tessera-host-identity", NULL);
  g_autofree char *old_planted = g_build_filename (var_tmp, "tessera-host-id", NULL);
  g_autofree char *second = NULL;

  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (var_tmp, 0777), ==, 0);
  for (int i = 0; i < 3; i++)
    {
      g_autoptr(GSubprocess) process = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *text = g_strdup_printf ("%s\n", chosen);
      const char *id;

      /* Planted as the other user would: the id and, for a reader that
       * checks them, a machine id and a device and inode that match. */
      test_write_file (old_planted, text);
      g_assert_cmpint (chown (old_planted, 4242, 4242), ==, 0);
      process = spawn_at (f, &planter, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
      g_assert_no_error (error);
      root = test_output_json (process, 0);
      id = json_object_get_string_member (json_object_get_object_member (json_node_get_object (root), "process"),
                                          "host_id");
      g_test_message ("run %d: host id %s", i, id);
      g_assert_cmpstr (id, !=, chosen);
      g_assert_cmpuint (strlen (id), ==, 32);
      if (i == 0)
        {
          struct stat st;
          g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_MD5, "planted", -1);
          g_autofree char *content = NULL;
          int fd;

          /* What the user made (the file was missing) goes; the other
           * user's takes its place. */
          g_unlink (planted);
          fd = open (planted, O_WRONLY | O_CREAT | O_EXCL, 0644);
          g_assert_cmpint (fd, >=, 0);
          g_assert_cmpint (fstat (fd, &st), ==, 0);
          content = g_strdup_printf ("%s\nmachine-id %s\ndevice %u:%u\ninode %" G_GUINT64_FORMAT "\n", chosen, digest,
                                     major (st.st_dev), minor (st.st_dev), (guint64) st.st_ino);
          g_assert_cmpint (write (fd, content, strlen (content)), ==, (gssize) strlen (content));
          close (fd);
          g_assert_cmpint (chown (planted, 4242, 4242), ==, 0);
        }
      else if (i == 1)
        second = g_strdup (id);
      else
        g_assert_cmpstr (id, ==, second);
    }
  test_group_pool_free (gp);
}

/* `tessera run` checks its job folder, then writes the job's files there
 * (its .lock, .pid and locks.json). A member of the group of a shared
 * job-folder root (TESSERA_JOB_FOLDERS) swaps the folder for a link to
 * one of its own in between (the run held at pause point "job-hold"):
 * nothing of the job is written through the link, and the run refuses
 * to start its command, whose TESSERA_LOCKS would lead there. */
static void
test_users_job_folder_swapped_for_a_link (Fixture *f, gconstpointer data)
{
  TestGroupPool *gp = test_group_pool_new ("tj", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=1\n");
  const Place runner = { .gp = gp, .user = gp->users->users[0] };
  g_autofree char *root = g_build_filename (gp->tmp, "job-folders", NULL);
  g_autofree char *pause_dir = g_build_filename (gp->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = NULL;
  g_autofree char *other_state = test_user_folder (gp->tmp, gp->users->users[1]);
  g_autofree char *decoy = g_build_filename (other_state, "decoy", NULL);
  g_autofree char *folder = NULL;
  g_autofree char *moved = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GPtrArray) swap = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  g_assert_cmpint (g_mkdir (root, 0775), ==, 0);
  g_assert_cmpint (chown (root, 0, gp->users->gid), ==, 0);
  g_assert_cmpint (chmod (root, 02775), ==, 0);
  pause = test_pause_point_new (pause_dir, "job-hold");
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  g_assert_cmpint (chmod (other_state, 0755), ==, 0);
  /* The decoy takes whatever is written through the link. */
  g_assert_cmpint (g_mkdir (decoy, 0777), ==, 0);
  g_assert_cmpint (chmod (decoy, 0777), ==, 0);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_JOB_FOLDERS", root, TRUE);
  test_pause_point_set_launcher (pause, launcher);
  /* The command shows what reached the decoy (the run cleans up after). */
  run = spawn_at_with (f, &runner, launcher, &error, "run", "--need", "r=1", "--", "sh", "-c",
                       "ls -A \"$1\"; echo ran", "sh", decoy, NULL);
  g_assert_no_error (error);
  test_pause_point_wait (pause, 60);
  dir = g_dir_open (root, 0, &error);
  g_assert_no_error (error);
  name = g_dir_read_name (dir);
  g_assert_nonnull (name);
  folder = g_build_filename (root, name, NULL);
  moved = g_strconcat (folder, "-moved", NULL);

  /* The other user swaps it. */
  test_argv_as_user (swap, gp->users->users[1], 60);
  g_ptr_array_add (swap, g_strdup ("sh"));
  g_ptr_array_add (swap, g_strdup ("-c"));
  g_ptr_array_add (swap, g_strdup ("mv \"$1\" \"$2\" && ln -s \"$3\" \"$1\""));
  g_ptr_array_add (swap, g_strdup ("swap"));
  g_ptr_array_add (swap, g_strdup (folder));
  g_ptr_array_add (swap, g_strdup (moved));
  g_ptr_array_add (swap, g_strdup (decoy));
  g_ptr_array_add (swap, NULL);
  g_assert_cmpint (test_run_capture (swap, NULL, NULL), ==, 0);
  test_pause_point_release (pause);

  g_assert_true (g_subprocess_communicate_utf8 (run, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run said: %s%s", out, err);
  g_assert_cmpuint (test_count_entries (decoy), ==, 0);
  g_assert_cmpstr (out, ==, "");
  g_assert_cmpint (test_exit_code (run), ==, 74);
  g_assert_nonnull (strstr (err, "moved"));
  test_group_pool_free (gp);
}

int
main (int argc, char **argv)
{
  hosts_test_init (&argc, &argv);
  hosts_test_add ("/hosts/users/other-host-holder-counts-then-reclaimed", NULL, test_users_other_host_holder_then_host_killed);
  hosts_test_add ("/hosts/users/planted-host-id-ignored", NULL, test_users_planted_host_id_ignored);
  hosts_test_add ("/hosts/users/lease-verdict", NULL, test_users_lease_verdict);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    hosts_test_add ("/hosts/users/job-folder-swapped-for-a-link", NULL, test_users_job_folder_swapped_for_a_link);
  hosts_test_add ("/hosts/users/container-holder-judged-outside", GINT_TO_POINTER (FALSE), test_users_container_verdict);
  hosts_test_add ("/hosts/users/container-holder-judged-in-another", GINT_TO_POINTER (TRUE), test_users_container_verdict);
  return g_test_run ();
}
