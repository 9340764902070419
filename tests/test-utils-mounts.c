/* test-utils-mounts.c: mounts of the test's own (root): a mount namespace,
 * a FUSE view of a folder, a simulated host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/* Mounts this test process makes from now on are its own: they are not
 * seen by the rest of the machine and go with the process, also when a
 * test fails before its own umount (a loop mount left behind holds its
 * image and device for good). The children inherit the namespace, so
 * they see the mounts. unshare() moves only the calling thread, so this
 * is called first in main(), before any thread (GLib's worker, a
 * resource's) exists. Returns FALSE, saying why, without the privilege
 * (CAP_SYS_ADMIN: root, as in CI, but not root in a default container). */
gboolean
test_try_private_mounts (void)
{
  g_autofree char *status = NULL;

  if (g_file_get_contents ("/proc/self/status", &status, NULL, NULL) && strstr (status, "\nThreads:\t1\n") == NULL)
    g_error ("test_private_mounts() must come before any thread is started");
  if (unshare (CLONE_NEWNS) != 0)
    {
      g_printerr ("# unshare(CLONE_NEWNS): %s: the tests that mount will fail\n", g_strerror (errno));
      return FALSE;
    }
  /* A type string, though the kernel ignores it here: valgrind checks it. */
  if (mount ("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0)
    g_error ("making / private: %s", g_strerror (errno));
  return TRUE;
}

/* The same for a test program whose every test mounts: fails without the
 * privilege. */
void
test_private_mounts (void)
{
  if (!test_try_private_mounts ())
    g_error ("these tests mount: run them as root, as CI does");
}

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

static gboolean
mounted (gpointer needle)
{
  g_autofree char *mounts = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/mountinfo", &mounts, NULL, NULL));
  return strstr (mounts, needle) != NULL;
}

/* Until @path is a mount point in /proc/self/mountinfo (a minute at most). */
static void
wait_for_mount (const char *path)
{
  g_autofree char *needle = g_strdup_printf (" %s ", path);

  test_wait_until (mounted, needle, 60, "%s is not mounted", path);
}

/* A FUSE view (bindfs) of @real at @view, both made if needed, with the
 * FUSE daemon in the foreground and ended with this process, so that a
 * failing test leaves nothing behind (with test_private_mounts(), not
 * even the mount). Returns the daemon, for test_unmount_fuse_view(). */
GSubprocess *
test_mount_fuse_view (const char *real, const char *view)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  GSubprocess *bindfs;

  g_mkdir_with_parents (real, 0777);
  g_mkdir_with_parents (view, 0777);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  bindfs = g_subprocess_launcher_spawn (launcher, &error, "bindfs", "-f", "--no-allow-other", real, view, NULL);
  g_assert_no_error (error);
  wait_for_mount (view);
  return bindfs;
}

/* Unmounts @view; its daemon @bindfs then ends, and is freed. */
void
test_unmount_fuse_view (const char *view, GSubprocess *bindfs)
{
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (umount2 (view, 0), ==, 0);
  g_assert_true (g_subprocess_wait (bindfs, NULL, &error));
  g_assert_no_error (error);
  g_object_unref (bindfs);
}

/* Appends to @argv the start of a command run on the simulated host
 * @host, made in @parent/HOST: its own UTS, pid and mount namespaces, its
 * machine id, boot id (both derived from @host) and /var/tmp (everyone's,
 * as a real one is) bind-mounted, /proc its own, and our host name (the
 * machines all called alike). The shell commands @setup (each ending in
 * "; ", or "") run there first, then what follows in @argv. Namespaces
 * on one kernel share locks, as NFSv4 or Lustre `flock` hosts do through
 * the file server. */
void
test_argv_simulated_host (GPtrArray *argv, const char *parent, const char *host, const char *setup)
{
  g_autofree char *root = g_build_filename (parent, host, NULL);
  g_autofree char *machine_id = g_build_filename (root, "machine-id", NULL);
  g_autofree char *boot_id = g_build_filename (root, "boot_id", NULL);
  g_autofree char *var_tmp = g_build_filename (root, "var-tmp", NULL);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_MD5, host, -1);
  g_autofree char *boot = g_strdup_printf ("%.8s-0000-4000-8000-%.12s\n", digest, digest + 8);
  g_autofree char *line = g_strconcat (digest, "\n", NULL);
  const char *unshare[] = { "unshare", "--uts", "--pid", "--mount", "--fork", "--propagation", "private",
                            "sh", "-c" };

  g_assert_cmpint (g_mkdir_with_parents (var_tmp, 0777), ==, 0);
  g_assert_cmpint (chmod (var_tmp, 01777), ==, 0);
  test_write_file (machine_id, line);
  test_write_file (boot_id, boot);
  for (guint i = 0; i < G_N_ELEMENTS (unshare); i++)
    g_ptr_array_add (argv, g_strdup (unshare[i]));
  g_ptr_array_add (argv, g_strdup_printf ("set -e; hostname '%s'; mount -t proc proc /proc; "
                                          "mount --bind '%s' /etc/machine-id; "
                                          "mount --bind '%s' /proc/sys/kernel/random/boot_id; "
                                          "mount --bind '%s' /var/tmp; %sexec \"$@\"",
                                          g_get_host_name (), machine_id, boot_id, var_tmp, setup));
  g_ptr_array_add (argv, g_strdup ("sh"));
}
