/* test-filesystems.c: change detection on file systems other than the
 * machine's own: a FUSE view (bindfs), as a stand-in for any shared file
 * system whose other writers inotify cannot see, and an ext2 image with
 * one-second timestamps. Needs root (mounts); fails without it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  char *mount_point;
  char *image;
  GSubprocess *bindfs;   /* the FUSE view's daemon */
} Fixture;

static void
fuse_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *real = NULL;

  f->tmp = test_make_tmpdir ();
  real = g_build_filename (f->tmp, "real", NULL);
  f->mount_point = g_build_filename (f->tmp, "view", NULL);
  f->bindfs = test_mount_fuse_view (real, f->mount_point);
}

static void
ext2_set_up (Fixture *f, gconstpointer data)
{
  f->tmp = test_make_tmpdir ();
  f->image = g_build_filename (f->tmp, "ext2.img", NULL);
  f->mount_point = g_build_filename (f->tmp, "ext2", NULL);
  g_assert_cmpint (g_mkdir (f->mount_point, 0755), ==, 0);
  test_run_or_fail ((const char *[]) { "truncate", "-s", "16M", f->image, NULL });
  /* 128-byte inodes have no room for nanoseconds: one-second times. */
  test_run_or_fail ((const char *[]) { "mkfs.ext2", "-q", "-I", "128", f->image, NULL });
  test_run_or_fail ((const char *[]) { "mount", "-o", "loop", f->image, f->mount_point, NULL });
}

static void
tear_down (Fixture *f, gconstpointer data)
{
  if (f->bindfs != NULL)
    test_unmount_fuse_view (f->mount_point, f->bindfs);
  else
    test_run_or_fail ((const char *[]) { "umount", f->mount_point, NULL });
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->mount_point);
  g_free (f->image);
}

/* Another host writes through its own mount (here: the folder under the
 * FUSE view), which inotify on ours never reports: the acquirer must read
 * jobs/ before deciding. */
static void
test_fuse_other_writer (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", "token", NULL);
  g_autofree char *view = g_build_filename (f->mount_point, "token", NULL);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(Helper) late = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *planted = NULL;
  g_autofree char *line = NULL;

  counter = test_counter_new (real, 1, &error);
  g_assert_no_error (error);
  late = helper_spawn (NULL, "try", view, "-1", "late", "1", NULL);
  helper_expect_line (late, "READY", 60);
  planted = test_plant_live_holder (real, 1, TRUE);
  helper_write_line (late, "go");
  line = helper_read_line (late, 60);
  g_assert_cmpstr (line, ==, "UNAVAILABLE");
  helper_close_stdin (late);
  g_assert_cmpint (helper_wait (late), ==, 0);
}

/* A lock file read within its clock tick and re-made in it keeping inode,
 * mtime and size (git's racy rule), where the file system's clock is not
 * ours: only our monotonic clock since the first read can say when its
 * tick (two seconds for whole-second times) is over, so a decision less
 * than that after the first read must read it again and see the rewrite.
 * A slower round (a loaded machine) proves nothing and is run again. */
static void
test_fuse_lock_file_remade_within_its_tick (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->mount_point, "token", NULL);
  g_autofree char *other = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) spec = tessera_process_to_json (self);
  g_autofree char *spec_text = json_to_string (spec, FALSE);
  g_autoptr(GError) error = NULL;
  gboolean seen = FALSE;

  counter = test_counter_new (folder, 1, &error);
  g_assert_no_error (error);
  job = test_job_new (f->tmp, "late", "x");
  dep = test_counter_dependency_new (counter, job, 1);
  other = g_build_filename (folder, "jobs", "notes.txt", NULL);
  for (int round = 0; !seen; round++)
    {
      g_autofree char *name = g_strdup_printf ("holder@%d.json", round);
      g_autofree char *path = g_build_filename (folder, "jobs", name, NULL);
      g_autofree char *holds_none = NULL, *holds_all = NULL;
      g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
      /* Both times: bindfs drops a change of the mtime alone. */
      struct timespec ahead[2] = { { time (NULL) + 30, 0 }, { time (NULL) + 30, 0 } };
      gint64 start;

      g_assert_cmpint (round, <, 20);
      holds_none = g_strdup_printf ("{\"job_uri\": \"%s/holder%d\", \"information\": {\"count\": 0}, "
                                    "\"process\": %s}", f->tmp, round, spec_text);
      holds_all = g_strdup_printf ("{\"job_uri\": \"%s/holder%d\", \"information\": {\"count\": 1}, "
                                   "\"process\": %s}", f->tmp, round, spec_text);
      /* A live holder of nothing, stamped ahead (whole seconds: a
       * two-second tick): the unit is free. */
      test_write_file (path, holds_none);
      g_assert_cmpint (utimensat (AT_FDCWD, path, ahead, 0), ==, 0);
      start = g_get_monotonic_time ();
      lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (lock);
      g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), &error));
      g_assert_no_error (error);
      g_clear_object (&lock);

      /* The same holder now holds it, its stat unchanged. */
      test_rewrite_keeping_stat (path, holds_all);
      test_write_file (other, "not a holder");
      g_assert_cmpint (g_unlink (other), ==, 0);
      lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
      if (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC)
        {
          g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
          g_assert_null (lock);
          g_test_message ("seen in round %d", round);
          seen = TRUE;
        }
      else if (lock != NULL)
        g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
      g_clear_error (&error);
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
}

static gint64
mtime_of (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  return (gint64) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* With one-second directory times and no inotify, a holder created in the
 * second the acquirer last read jobs/ leaves its mtime as it was: the
 * acquirer must not trust it. Rounds in which the second ticked over in
 * between prove nothing and are tried again. */
static void
test_coarse_mtime_same_tick (Fixture *f, gconstpointer data)
{
  g_autofree char *folder = g_build_filename (f->mount_point, "token", NULL);
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  const char *env[] = { "TESSERA_NO_INOTIFY", "1", NULL };
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GError) error = NULL;
  int rounds = 0;

  counter = test_counter_new (folder, 2, &error);
  g_assert_no_error (error);
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);
  g_assert_no_error (error);

  for (;;)
    {
      g_autoptr(Helper) late = helper_spawn (env, "try", folder, "-1", "late", "1", NULL);
      g_autofree char *planted = NULL;
      g_autofree char *line = NULL;
      gint64 before;

      helper_expect_line (late, "READY", 60);
      before = mtime_of (jobs);
      planted = test_plant_live_holder (folder, 2, TRUE);
      if (mtime_of (jobs) != before)
        {
          /* The second ticked over: the mtime shows the change anyway. */
          helper_close_stdin (late);
          helper_wait (late);
          g_unlink (planted);
          g_assert_cmpint (++rounds, <, 20);
          g_usleep (100 * 1000);
          continue;
        }
      helper_write_line (late, "go");
      line = helper_read_line (late, 60);
      g_assert_cmpstr (line, ==, "UNAVAILABLE");
      helper_close_stdin (late);
      g_assert_cmpint (helper_wait (late), ==, 0);
      break;
    }
}

static void
ro_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *real = NULL;

  f->tmp = test_make_tmpdir ();
  real = g_build_filename (f->tmp, "real", NULL);
  f->mount_point = g_build_filename (f->tmp, "ro", NULL);
  g_assert_cmpint (g_mkdir (real, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (f->mount_point, 0755), ==, 0);
}

/* status only looks: on a read-only mount of a pool it shows the pool (no
 * folder or file to create, no dead holder to remove), and a resource it
 * cannot read is reported without hiding the others. */
static void
test_status_read_only (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", "token", NULL);
  g_autofree char *config = g_build_filename (f->tmp, "tessera.conf", NULL);
  /* tmp bound read-only on tmp/ro: the pool is seen at ro/real/token. */
  g_autofree char *content = g_strdup_printf ("[resource missing]\ntype=countertoken\npath=%s/none\n\n"
                                              "[resource token]\ntype=countertoken\npath=%s/real/token\n",
                                              f->mount_point, f->mount_point);
  g_autofree char *ipc = g_build_filename (real, "ipc.lock", NULL);
  g_autoptr(TestCounter) counter = NULL;
  g_autoptr(GSubprocess) status = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  counter = test_counter_new (real, 3, &error);
  g_assert_no_error (error);
  g_clear_object (&counter);
  g_unlink (ipc);   /* a pool whose ipc.lock nobody made yet */
  test_write_file (config, content);
  test_run_or_fail ((const char *[]) { "mount", "--bind", "-o", "ro", f->tmp, f->mount_point, NULL });
  status = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                             g_getenv ("TESSERA_TOOL"), "--config", config, "status", NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (status, NULL, NULL, &out, &err, &error);
  g_assert_no_error (error);
  g_test_message ("status: %s / %s", out, err);
  g_assert_nonnull (strstr (out, "token (countertoken): 3 of 3 free"));
  g_assert_nonnull (strstr (err, "/none"));
  g_assert_cmpint (g_subprocess_get_exit_status (status), !=, 0);
}

int
main (int argc, char **argv)
{
  /* Before any thread: the mounts are this process's own. */
  test_private_mounts ();
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/filesystems/fuse/other-writer-seen", Fixture, NULL,
              fuse_set_up, test_fuse_other_writer, tear_down);
  g_test_add ("/filesystems/fuse/lock-file-remade-within-its-tick", Fixture, NULL,
              fuse_set_up, test_fuse_lock_file_remade_within_its_tick, tear_down);
  g_test_add ("/filesystems/ext2/coarse-mtime-same-tick", Fixture, NULL,
              ext2_set_up, test_coarse_mtime_same_tick, tear_down);
  g_test_add ("/filesystems/ro/status-only-looks", Fixture, NULL,
              ro_set_up, test_status_read_only, tear_down);
  return g_test_run ();
}
