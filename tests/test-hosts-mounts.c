/* test-hosts-mounts.c: mounts whose locks do not cross hosts (lock-less
 * mounts, FUSE views, mixed mounts, two views on one host): every host
 * that uses the pool is known, and where locks cannot tell, the pool is
 * refused rather than shared; the marks in a group's pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-counter.h"
#include "test-utils.h"
#include "test-hosts-common.h"

#include <fcntl.h>
#include <pwd.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* A mount whose locks do not cross hosts (most FUSE file systems, NFS
 * `nolock` or `local_lock=all`, Lustre `localflock`): a free job lock says
 * nothing about a holder on another host. */

/* Writes view_jobs/NAME@id.json for a holder of one unit with @spec. */
static char *
write_view_lock_file (Fixture *f, const char *view_jobs, const char *name, const char *spec)
{
  g_autofree char *job_uri = job_uri_for (f, name);
  g_autofree char *file_name = g_strconcat (name, "@id.json", NULL);
  g_autofree char *content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, "
                                              "\"process\": %s}", job_uri, spec);
  char *path = g_build_filename (view_jobs, file_name, NULL);

  test_write_file (path, content);
  return path;
}

/* The pool `r` (total 2) seen through a lock-less view at tmp/view/r,
 * named by the configuration; returns the FUSE daemon. */
static GSubprocess *
lockless_pool (Fixture *f, char **view, char **view_jobs)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *folder = NULL;
  g_autofree char *config = NULL;
  GSubprocess *bindfs;

  *view = g_build_filename (f->tmp, "view", NULL);
  folder = g_build_filename (*view, "r", NULL);
  config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=2\n", folder);
  bindfs = test_mount_fuse_view (real, *view);
  test_write_file (f->config, config);
  *view_jobs = g_build_filename (folder, "jobs", NULL);
  g_mkdir_with_parents (*view_jobs, 0777);
  return bindfs;
}

/* ipc.lock cannot exclude another host there: a pool another host uses
 * is refused at acquire, with the fix named; our own host's holders
 * (another boot of ours is still judged dead) leave it usable. */
static void
test_lockless_mount_shared_pool_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *view = g_build_filename (f->tmp, "view", NULL);
  g_autofree char *view_folder = g_build_filename (view, "token", NULL);
  g_autofree char *view_jobs = g_build_filename (view_folder, "jobs", NULL);
  g_autofree char *info = g_build_filename (view_folder, "informations.json", NULL);
  g_autofree char *spec = own_spec (set_other_machine, NULL);
  g_autofree char *rebooted_spec = own_spec (set_boot, NULL);
  g_autofree char *live_spec = own_spec (NULL, NULL);
  g_autofree char *path = NULL;
  g_autofree char *rebooted = NULL;
  g_autofree char *live = NULL;
  g_autofree char *hosts = g_build_filename (view_folder, "hosts", NULL);
  g_autofree char *heartbeat = g_build_filename (hosts, "fedcba9876543210fedcba9876543210.lease", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  GSubprocess *bindfs = test_mount_fuse_view (real, view);
  TestCounter *counter;

  g_mkdir_with_parents (view_jobs, 0777);
  test_write_file (info, "{\"total\": 3}");
  path = write_view_lock_file (f, view_jobs, "far", spec);
  rebooted = write_view_lock_file (f, view_jobs, "rebooted", rebooted_spec);

  counter = test_counter_new (view_folder, -1, &error);
  g_assert_no_error (error);
  job = test_job_new (f->tmp, "probe", "refused");
  dep = test_counter_dependency_new (counter, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, "etcd"));
  g_assert_nonnull (strstr (error->message, "fuse"));
  g_assert_null (strchr (error->message, '\n'));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_error (&error);

  /* Used by this host only (a live holder of ours): it works. Our own
   * host's holder of another boot is still judged (when its unit is
   * needed): our ids. */
  g_assert_cmpint (g_unlink (path), ==, 0);
  live = write_view_lock_file (f, view_jobs, "live", live_spec);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (rebooted, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (live, G_FILE_TEST_EXISTS));

  /* Another host's lease heartbeat says it uses the pool too. */
  g_mkdir_with_parents (hosts, 0777);
  test_write_file (heartbeat, "{\"host_id\": \"fedcba9876543210fedcba9876543210\", \"lease\": 60}");
  g_clear_object (&lock);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_null (lock);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_assert_nonnull (strstr (error->message, "fedcba9876543210fedcba9876543210"));
  g_clear_error (&error);
  g_assert_cmpint (g_unlink (heartbeat), ==, 0);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_clear_object (&dep);
  /* Gone with its threads' descriptors on the view before the unmount. */
  test_drop_resource (&counter);

  test_unmount_fuse_view (view, bindfs);
}

/* The same from `tessera run`: a one-line message, a non-zero status;
 * and it runs once only this host uses the pool. */
static void
test_lockless_mount_run_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *view = NULL;
  g_autofree char *view_jobs = NULL;
  g_autofree char *spec = own_spec (set_other_machine, NULL);
  g_autofree char *path = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  GSubprocess *bindfs = lockless_pool (f, &view, &view_jobs);

  path = write_view_lock_file (f, view_jobs, "far", spec);
  g_assert_cmpint (run_no_wait_here (f, &out, &err), ==, 1);
  g_assert_true (g_str_has_prefix (err, "tessera: r: "));
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);   /* one line */
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (run_no_wait_here (f, &out, &err), ==, 0);
  g_assert_cmpstr (out, ==, "ran\n");

  test_unmount_fuse_view (view, bindfs);
}

/* ---------------------------------------------------------------------- */
/* A lock-less mount: every host that uses the pool is known */

/* Another host used the pool on a lock-less mount and is done with it
 * (no holder left): ipc.lock never excluded it, so had both run at once
 * both would have granted. This host must refuse the pool all the same;
 * and so must the other host, once this one has tried it. */
static void
test_lockless_mount_other_host_seen_without_holders (Fixture *f, gconstpointer data)
{
  g_autofree char *view = NULL;
  g_autofree char *view_jobs = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;
  GSubprocess *bindfs = lockless_pool (f, &view, &view_jobs);

  run = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                             "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  g_clear_object (&run);

  g_assert_cmpint (run_no_wait_here (f, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "etcd"));
  /* What refused it: the other host's mark, named, not a holder. */
  g_assert_nonnull (strstr (err, "mark"));
  g_assert_nonnull (strstr (err, ".host"));
  g_assert_null (strstr (err, "holder"));
  g_clear_object (&run);

  /* And the other host, which granted first, now refuses too. */
  run = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                             "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 1);

  test_unmount_fuse_view (view, bindfs);
}

/* experimaestro's spec names no host: on a lock-less mount its holder may
 * be on any host, so the pool is refused. */
static void
test_lockless_mount_unknown_host_refused (Fixture *f, gconstpointer data)
{
  g_autofree char *view = NULL;
  g_autofree char *view_jobs = NULL;
  g_autofree char *spec = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) getpid ());
  g_autofree char *path = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  GSubprocess *bindfs = lockless_pool (f, &view, &view_jobs);

  path = write_view_lock_file (f, view_jobs, "xp", spec);
  g_assert_cmpint (run_no_wait_here (f, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  test_unmount_fuse_view (view, bindfs);
}

/* ---------------------------------------------------------------------- */
/* Mixed mounts: one host reaches the pool where locks cross hosts, another
 * through a FUSE view whose locks stay on it (issue 38, defect 2) */

/* The pool r (total 1) at tmp/view/r, where every host finds it: here a
 * bind mount of tmp/real, whose locks cross hosts as the file server's
 * do; on a simulated host with .view, a FUSE view of tmp/real, whose
 * locks reach no other host. Returns tmp/view, to unmount. */
static char *
mixed_mounts_pool (Fixture *f)
{
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *jobs = g_build_filename (real, "r", "jobs", NULL);
  g_autofree char *config = NULL;
  char *view = g_build_filename (f->tmp, "view", NULL);

  g_assert_cmpint (g_mkdir_with_parents (jobs, 0777), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (view, 0777), ==, 0);
  /* A type string, though the kernel ignores it here: valgrind checks it. */
  g_assert_cmpint (mount (real, view, "none", MS_BIND, NULL), ==, 0);
  config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", view);
  test_write_file (f->config, config);
  return view;
}

/* The paths of the lock files in tmp/real/r/jobs. */
static GPtrArray *
mixed_mounts_lock_files (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "real", "r", "jobs", NULL);

  g_assert_true (g_file_test (jobs, G_FILE_TEST_IS_DIR));
  return test_list_json_files (jobs);
}

/* `tessera run --no-wait --need r=1 -- true` at @at: its exit status, and
 * what it wrote on stderr in @err. */
static int
run_no_wait_at (Fixture *f, const Place *at, char **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                                         "run", "--no-wait", "--need", "r=1", "--", "true", NULL);

  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (run, NULL, NULL, NULL, err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run at %s said: %s", at->host != NULL ? at->host : "this host", *err);
  return test_exit_code (run);
}

/* Host A, where locks cross, granted and released: nothing is left in
 * jobs/, so only marks in hosts/ can tell host B, on its lock-less view,
 * that ipc.lock does not exclude A. B refuses the pool; and A, once it
 * sees B's mark, refuses it too, naming B and the fix. */
static void
test_mixed_mounts_both_refuse (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const Place b = { .host = "host-b", .view = TRUE };
  g_autofree char *b_id = host_id_on (f, "host-b");
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;
  g_autoptr(GPtrArray) left = NULL;

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 0);
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 0);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_no_wait_at (f, &b, &err), ==, 1);
  g_assert_true (g_str_has_prefix (err, "tessera: r: "));
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);   /* one line */
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_assert_true (g_str_has_prefix (err, "tessera: r: "));
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_nonnull (strstr (err, b_id));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);
  g_clear_pointer (&err, g_free);

  /* Still so for both. */
  g_assert_cmpint (run_no_wait_at (f, &b, &err), ==, 1);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A holder that took its job lock on host B's lock-less view: from the
 * real folder, on host A, its job lock looks free, which says nothing.
 * Judged from A (a clean, a run) it is not dead: the resource stays held. */
static void
test_mixed_mounts_view_holder_not_dead (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const Place b = { .host = "host-b", .view = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = start_holder_at (f, &b, NULL, NULL);
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GPtrArray) held = mixed_mounts_lock_files (f);
  g_autoptr(GPtrArray) left = NULL;

  g_assert_cmpuint (held->len, ==, 1);
  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                      "clean", NULL);
  g_assert_no_error (error);
  test_exit_code (clean);
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (left, 0), ==, g_ptr_array_index (held, 0));

  g_assert_cmpint (run_no_wait_at (f, &here, &err), !=, 0);
  g_clear_pointer (&left, g_ptr_array_unref);
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 1);

  test_let_go (holder);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A host alone on its lock-less view keeps using the pool: its own mark
 * refuses nothing. Both runs go through one FUSE mount of host B, as a
 * container's processes do: a new mount is a new view (another device),
 * which the first one's mark would refuse for the rest of the boot. */
static void
test_mixed_mounts_view_alone_works (Fixture *f, gconstpointer data)
{
  const Place b = { .host = "host-b", .view = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GSubprocess) runs = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  g_autofree char *twice = NULL;
  char *tool, *flag, *config;

  append_place (f, &b, f->config, argv);
  /* … env TOOL --config CONFIG: the tool run twice by a shell there. */
  config = g_ptr_array_steal_index (argv, argv->len - 1);
  flag = g_ptr_array_steal_index (argv, argv->len - 1);
  tool = g_ptr_array_steal_index (argv, argv->len - 1);
  twice = g_strdup_printf ("for i in 1 2; do '%s' %s '%s' run --no-wait --need r=1 -- true || exit $?; done",
                           tool, flag, config);
  g_free (tool);
  g_free (flag);
  g_free (config);
  test_argv_end (argv, (const char *[]) { "sh", "-c", twice, NULL });
  runs = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (runs, NULL, NULL, NULL, &err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run at host-b, twice, said: %s", err);
  g_assert_cmpint (test_exit_code (runs), ==, 0);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* ---------------------------------------------------------------------- */
/* Two views of the pool on one host (issue 38, review finding 5): the
 * same host id (machine id, boot, /var/tmp), one process in a container
 * that sees the pool through a FUSE view, one through the real folder.
 * Locks taken through the one do not reach the other: neither ipc.lock
 * nor a job lock excludes them. */

/* The host id in the spec of the lock file @path. */
static char *
spec_host_id (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *spec;

  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  spec = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "process");
  g_assert_nonnull (spec);
  g_assert_cmpuint (strlen (json_object_get_string_member (spec, "host_id")), ==, 32);
  return g_strdup (json_object_get_string_member (spec, "host_id"));
}

/* A holder in a container of this host, on its FUSE view: judged from the
 * real folder (a clean, a run) it is never reclaimed, and the pool is
 * refused on both sides (as between two hosts whose locks do not cross),
 * in one line naming the other view's mark in hosts/; still so once the
 * holder is gone. */
static void
test_same_host_views_refuse (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const Place fuse = { .container = TRUE, .view = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;
  g_autofree char *id = NULL;
  g_autofree char *mark = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = start_holder_at (f, &fuse, NULL, NULL);
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GPtrArray) held = mixed_mounts_lock_files (f);
  g_autoptr(GPtrArray) left = NULL;

  g_assert_cmpuint (held->len, ==, 1);
  id = spec_host_id (g_ptr_array_index (held, 0));
  mark = g_strconcat ("hosts/", id, ".", NULL);

  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                      "clean", NULL);
  g_assert_no_error (error);
  test_exit_code (clean);
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (left, 0), ==, g_ptr_array_index (held, 0));

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_assert_true (g_str_has_prefix (err, "tessera: r: "));
  g_assert_nonnull (strstr (err, mark));
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);   /* one line */
  g_clear_pointer (&err, g_free);
  g_clear_pointer (&left, g_ptr_array_unref);
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 1);

  /* The view's side sees the real folder's mark. */
  g_assert_cmpint (run_no_wait_at (f, &fuse, &err), ==, 1);
  g_assert_nonnull (strstr (err, mark));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);
  g_clear_pointer (&err, g_free);

  test_let_go (holder);
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_no_wait_at (f, &fuse, &err), ==, 1);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A judge on a FUSE view that cannot read /proc (no mountinfo to say its
 * locks stay local, no boot id to match marks by) must not take another
 * host's live holder on the real folder for dead: it is refused, or finds the pool busy,
 * and the holder's lock file stays. Where that could not be read, locks
 * were taken to cross and the other view's mark, of an unknown boot, was
 * passed over: the judge took the token and deleted the lock file. And
 * this host on the real folder must refuse the pool beside that view:
 * it passed over the view's mark, whose boot id was not its own (""). */
static void
test_same_host_views_proc_hidden (Fixture *f, gconstpointer data)
{
  const Place here = { .host = "node2" };
  const Place real = { NULL };
  const Place blind = { .container = TRUE, .view = TRUE, .hide_proc = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;
  g_autoptr(GSubprocess) holder = start_holder_at (f, &here, NULL, NULL);
  g_autoptr(GPtrArray) held = mixed_mounts_lock_files (f);
  g_autoptr(GPtrArray) left = NULL;
  int code;

  g_assert_cmpuint (held->len, ==, 1);
  code = run_no_wait_at (f, &blind, &err);
  if (code != 1 && code != 75)
    g_error ("a judge on a FUSE view without /proc exited %d (refused: 1, busy: 75): “%s”", code, err);
  /* Its mark (the one of no boot id) says its locks stay local. */
  {
    g_autofree char *hosts = g_build_filename (f->tmp, "real", "r", "hosts", NULL);
    g_autoptr(GDir) dir = g_dir_open (hosts, 0, NULL);
    const char *name;
    guint blind_marks = 0;

    g_assert_nonnull (dir);
    while ((name = g_dir_read_name (dir)) != NULL)
      {
        g_autofree char *path = g_build_filename (hosts, name, NULL);
        g_autoptr(JsonParser) parser = json_parser_new ();
        JsonObject *mark;

        if (!g_str_has_suffix (name, ".host") || !json_parser_load_from_file (parser, path, NULL) ||
            !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
          continue;
        mark = json_node_get_object (json_parser_get_root (parser));
        if (g_strcmp0 (json_object_get_string_member_with_default (mark, "boot_id", "?"), "") != 0)
          continue;
        blind_marks++;
        if (json_object_get_boolean_member_with_default (mark, "locks_cross", TRUE))
          g_error ("%s, written where /proc/self/mountinfo could not be read, says its locks cross hosts", name);
      }
    g_assert_cmpuint (blind_marks, >, 0);
  }
  left = mixed_mounts_lock_files (f);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (left, 0), ==, g_ptr_array_index (held, 0));
  test_let_go (holder);
  /* This host on the real folder, once that holder is gone, sees the
   * blind view's mark (its boot id unknown, so maybe of this boot) and
   * refuses the pool too: its locks do not reach that view's. */
  g_clear_pointer (&err, g_free);
  code = run_no_wait_at (f, &real, &err);
  if (code != 1)
    g_error ("this host on the real folder, beside a view of it whose mark has no boot id, exited %d "
             "(refused: 1): “%s”", code, err);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A plain bind mount of the same folder (the same file system, so the
 * same locks) in a container of this host is one view with the real
 * folder: no refusal; the container's holder counts here (its job lock
 * held), and once it is gone both sides are served. */
static void
test_same_host_bind_mount_one_view (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const Place bound = { .container = TRUE, .bind = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;
  g_autoptr(GSubprocess) holder = start_holder_at (f, &bound, NULL, NULL);

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 75);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_no_wait_at (f, &bound, &err), ==, 75);
  g_clear_pointer (&err, g_free);
  test_let_go (holder);
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 0);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_no_wait_at (f, &bound, &err), ==, 0);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* ---------------------------------------------------------------------- */
/* Marks in a group's pool: what a member of the group may do to them
 * (issue 38, review findings F3 and F4) */

/* The mixed mounts' pool made a group's by `tessera init tmp/view --group
 * GROUP`, as a site sets one up: tmp/real root's, setgid, the group's.
 * Returns the group's users; @view (out): tmp/view, to unmount. */
static TestUsers *
mixed_mounts_group_pool (Fixture *f, char **view)
{
  TestUsers *users = test_users_new ("hm");
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) init = NULL;

  *view = mixed_mounts_pool (f);
  g_assert_cmpint (chmod (f->tmp, 0755), ==, 0);
  g_assert_cmpint (chown (real, 0, users->gid), ==, 0);
  g_assert_cmpint (chmod (real, 02775), ==, 0);
  init = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "init", *view, "--group", users->group,
                     NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (init), ==, 0);
  return users;
}

/* Runs the shell @script as the member @user (whatever it does, it is
 * let fail). */
static void
as_member (const char *user, const char *script)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  int status;

  test_argv_as_user (argv, user, 60);
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup (script));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("as %s: %s -> %d: %.*s", user, script, status, (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
}

/* A member of the group removes every file of r/hosts/ she can. */
static void
member_removes_marks (Fixture *f, const char *user)
{
  g_autofree char *script = g_strdup_printf ("rm -fv '%s'/real/r/hosts/*", f->tmp);

  as_member (user, script);
}

/* Host A (locks cross) granted; a member of the pool's group removes the
 * hosts' marks each time before the other host looks (F3: in a loop, she
 * would): host B, on its lock-less view, must still refuse the pool, and
 * A, once B tried it, too. Had both granted, nothing would keep them from
 * handing out the same share. */
static void
test_group_marks_member_removes (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const Place b = { .host = "host-b", .view = TRUE };
  g_autofree char *view = NULL;
  g_autoptr(TestUsers) users = mixed_mounts_group_pool (f, &view);
  g_autofree char *err = NULL;

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 0);
  g_clear_pointer (&err, g_free);
  member_removes_marks (f, users->users[0]);
  g_assert_cmpint (run_no_wait_at (f, &b, &err), ==, 1);
  g_assert_nonnull (strstr (err, "etcd"));
  g_clear_pointer (&err, g_free);
  member_removes_marks (f, users->users[0]);
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_assert_nonnull (strstr (err, "etcd"));
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A member plants a mark (F4): one that claims to be root's (named for
 * uid 0, hers), and then one of her own that says its host's locks do
 * not cross. Neither can be trusted to say the pool is safe: the pool is
 * refused (closed: she could hold every share anyway), in one line that
 * names the file and its owner, so that the administrator can remove it. */
static void
test_group_marks_planted (Fixture *f, gconstpointer data)
{
  const Place here = { NULL };
  const char *id = "0123456789abcdef0123456789abcdef";
  g_autofree char *view = NULL;
  g_autoptr(TestUsers) users = mixed_mounts_group_pool (f, &view);
  struct passwd *pw = getpwnam (users->users[0]);
  g_autofree char *as_root = g_strdup_printf ("%s.0.host", id);
  g_autofree char *own = NULL;
  g_autofree char *script = NULL;
  g_autofree char *path = NULL;
  g_autofree char *err = NULL;

  if (pw == NULL)
    g_error ("no user %s", users->users[0]);
  own = g_strdup_printf ("%s.%u.host", id, (unsigned) pw->pw_uid);
  script = g_strdup_printf ("printf '{\"locks_cross\": true}' > '%s'/real/r/hosts/%s", f->tmp, as_root);
  as_member (users->users[0], script);
  path = g_build_filename (f->tmp, "real", "r", "hosts", as_root, NULL);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_assert_nonnull (strstr (err, as_root));
  g_assert_nonnull (strstr (err, users->users[0]));
  g_assert_cmpint (strchr (err, '\n') - err, ==, (int) strlen (err) - 1);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_clear_pointer (&script, g_free);
  g_clear_pointer (&path, g_free);

  script = g_strdup_printf ("printf '{\"locks_cross\": false}' > '%s'/real/r/hosts/%s", f->tmp, own);
  as_member (users->users[0], script);
  path = g_build_filename (f->tmp, "real", "r", "hosts", own, NULL);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 1);
  g_assert_nonnull (strstr (err, own));
  g_assert_nonnull (strstr (err, users->users[0]));
  g_clear_pointer (&err, g_free);
  /* Once the administrator removed it, the pool serves again. */
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 0);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* Writes hosts/@id.host in @hosts as a host does (a temporary file
 * renamed into place), stating @host and whether its locks cross; with
 * @times_of, with that file's access and modification times. */
static void
write_host_mark (const char *hosts, const char *id, const char *host, gboolean cross, const char *times_of)
{
  g_autofree char *path = g_strdup_printf ("%s/%s.host", hosts, id);
  g_autofree char *temporary = g_strconcat (path, ".XXXXXX", NULL);
  g_autofree char *text = g_strdup_printf ("{\"host_id\":\"%s\",\"host\":\"%s\",\"lease\":0,\"locks_cross\":%s}", id,
                                           host, cross ? "true" : "false");
  struct stat st;
  int fd = g_mkstemp (temporary);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
  g_assert_cmpint (close (fd), ==, 0);
  if (times_of != NULL)
    {
      struct timespec times[2];

      g_assert_cmpint (stat (times_of, &st), ==, 0);
      times[0] = st.st_atim;
      times[1] = st.st_mtim;
      g_assert_cmpint (utimensat (AT_FDCWD, temporary, times, 0), ==, 0);
    }
  g_assert_cmpint (rename (temporary, path), ==, 0);
}

/* One process that keeps the pool open and acquires again and again
 * remembers the other hosts' marks it read (issue 43), yet sees a mark
 * that changed before its next grant: another host's mark replaced by one
 * of the same size and times that says its locks do not cross, and a new
 * host's mark; it refuses the pool for each, naming the mark. */
static void
test_mixed_mounts_warm_process_sees_new_marks (Fixture *f, gconstpointer data)
{
  const char *other = "0123456789abcdef0123456789abcdef";
  const char *third = "fedcba9876543210fedcba9876543210";
  g_autofree char *hosts = g_build_filename (f->folder, "hosts", NULL);
  g_autofree char *mark = g_strdup_printf ("%s/%s.host", hosts, other);
  g_autofree char *line = NULL;
  g_autoptr(Helper) warm = NULL;

  g_assert_cmpint (g_mkdir_with_parents (hosts, 0777), ==, 0);
  write_host_mark (hosts, other, "host-b1", TRUE, NULL);
  warm = helper_spawn (NULL, "tries", f->folder, "-1", "warm", "1", NULL);
  helper_write_line (warm, "go");
  helper_expect_line (warm, "ACQUIRED", 30);
  /* Once the mark is older than a clock tick of the file system, what the
   * process read of it is trusted while the file stays the same. */
  g_usleep (G_USEC_PER_SEC / 4);
  helper_write_line (warm, "go");
  helper_expect_line (warm, "ACQUIRED", 30);

  /* "host-b" and false: the same size as "host-b1" and true. */
  write_host_mark (hosts, other, "host-b", FALSE, mark);
  helper_write_line (warm, "go");
  line = helper_read_line (warm, 30);
  g_assert_true (g_str_has_prefix (line, "ERROR "));
  g_assert_nonnull (strstr (line, other));
  g_clear_pointer (&line, g_free);

  write_host_mark (hosts, other, "host-b1", TRUE, NULL);
  helper_write_line (warm, "go");
  helper_expect_line (warm, "ACQUIRED", 30);
  write_host_mark (hosts, third, "host-c", FALSE, NULL);
  helper_write_line (warm, "go");
  line = helper_read_line (warm, 30);
  g_assert_true (g_str_has_prefix (line, "ERROR "));
  g_assert_nonnull (strstr (line, third));
  helper_close_stdin (warm);
}

int
main (int argc, char **argv)
{
  hosts_test_init (&argc, &argv);
  hosts_test_add ("/hosts/lockless-mount/shared-pool-refused", NULL, test_lockless_mount_shared_pool_refused);
  hosts_test_add ("/hosts/lockless-mount/run-refused", NULL, test_lockless_mount_run_refused);
  hosts_test_add ("/hosts/lockless-mount/other-host-seen-without-holders", NULL,
                  test_lockless_mount_other_host_seen_without_holders);
  hosts_test_add ("/hosts/lockless-mount/holder-of-unknown-host-refused", NULL, test_lockless_mount_unknown_host_refused);
  hosts_test_add ("/hosts/mixed-mounts/both-hosts-refuse", NULL, test_mixed_mounts_both_refuse);
  hosts_test_add ("/hosts/mixed-mounts/view-holder-not-judged-dead", NULL, test_mixed_mounts_view_holder_not_dead);
  hosts_test_add ("/hosts/mixed-mounts/view-alone-works", NULL, test_mixed_mounts_view_alone_works);
  hosts_test_add ("/hosts/same-host-views/fuse-view-and-real-folder-refuse", NULL, test_same_host_views_refuse);
  hosts_test_add ("/hosts/same-host-views/bind-mount-is-one-view", NULL, test_same_host_bind_mount_one_view);
  hosts_test_add ("/hosts/same-host-views/fuse-view-without-proc", NULL, test_same_host_views_proc_hidden);
  hosts_test_add ("/hosts/group-marks/member-removes-them", NULL, test_group_marks_member_removes);
  hosts_test_add ("/hosts/group-marks/planted-named-with-owner", NULL, test_group_marks_planted);
  hosts_test_add ("/hosts/mixed-mounts/warm-process-sees-changed-marks", NULL, test_mixed_mounts_warm_process_sees_new_marks);
  return g_test_run ();
}
