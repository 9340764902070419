/* test-hosts.c: who may judge a holder (issue 14). Holders Tessera cannot
 * judge count; holders in other pid namespaces, on other hosts or hidden
 * by hidepid are never taken for dead; a recorded identity decides when
 * a pid check means something, the job lock (either kind) otherwise.
 *
 * Containers are made with unshare(1): CI runs as root, so a test that
 * cannot get a namespace fails, it does not skip.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <fcntl.h>
#include <pwd.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

typedef struct
{
  char *tmp;
  char *folder;
  char *jobs;
  char *config;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autofree char *info = NULL;
  g_autofree char *config = NULL;

  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->jobs = g_build_filename (f->folder, "jobs", NULL);
  info = g_build_filename (f->folder, "informations.json", NULL);
  g_mkdir_with_parents (f->jobs, 0777);
  test_write_file (info, "{\"total\": 2}");
  f->config = g_build_filename (f->tmp, "tessera.conf", NULL);
  config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", f->tmp);
  test_write_file (f->config, config);
  test_expect_warnings ();
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  test_remove_tree (f->tmp);
  g_free (f->tmp);
  g_free (f->folder);
  g_free (f->jobs);
  g_free (f->config);
}

static TestCounter *
open_counter (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  TestCounter *counter = test_counter_new (f->folder, -1, &error);

  g_assert_no_error (error);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 30);
  return counter;
}

/* tmp/xp/<name>/task: the job URI of a lock file written by the tests. */
static char *
job_uri_for (Fixture *f, const char *name)
{
  g_autofree char *job_dir = g_build_filename (f->tmp, "xp", name, NULL);

  g_mkdir_with_parents (job_dir, 0777);
  return g_build_filename (job_dir, "task", NULL);
}

/* Writes jobs/<name>@id.json with the given information and process
 * (either may be NULL); returns its path. */
static char *
write_lock_file (Fixture *f, const char *name, const char *information, const char *process)
{
  g_autofree char *job_uri = job_uri_for (f, name);
  g_autofree char *file_name = g_strconcat (name, "@id.json", NULL);
  char *path = g_build_filename (f->jobs, file_name, NULL);
  GString *content = g_string_new (NULL);

  g_string_append_printf (content, "{\"job_uri\": \"%s\"", job_uri);
  if (information != NULL)
    g_string_append_printf (content, ", \"information\": %s", information);
  if (process != NULL)
    g_string_append_printf (content, ", \"process\": %s", process);
  g_string_append (content, "}");
  test_write_file (path, content->str);
  g_string_free (content, TRUE);
  return path;
}

/* The pid of a process that has ended. */
static GPid
dead_pid (void)
{
  g_autofree char *out = NULL;

  g_assert_true (g_spawn_command_line_sync ("sh -c 'echo $$'", &out, NULL, NULL, NULL));
  g_assert_cmpint (atoi (out), >, 0);
  return atoi (out);
}

/* Our own process spec as Tessera writes it, with @edit applied. */
static char *
own_spec (void (*edit) (JsonObject *spec, gpointer data), gpointer data)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) node = tessera_process_to_json (self);

  if (edit != NULL)
    edit (json_node_get_object (node), data);
  return json_to_string (node, FALSE);
}

/* ---------------------------------------------------------------------- */
/* Fail closed: what cannot be understood counts */

/* "count": 1.0 is the declared amount 1, as Python's json may write it. */
static void
test_float_count_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_lock_file (f, "float", "{\"count\": 1.0}", NULL);
  g_autoptr(TestCounter) counter = open_counter (f);

  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Information with no readable amount holds the whole resource. */
static void
test_unreadable_information_counts_whole (Fixture *f, gconstpointer data)
{
  const char *cases[] = { "\"three\"", "{\"count\": -4}", "{\"count\": 1.5}", "[1]" };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = write_lock_file (f, "odd", cases[i], NULL);
      g_autoptr(TestCounter) counter = open_counter (f);

      g_test_message ("information %s", cases[i]);
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 0);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (path), ==, 0);
    }
}

/* experimaestro on Slurm: the process is not ours to judge, so it counts
 * (and is not removed) whatever its pid. */
static void
test_slurm_lock_file_counts (Fixture *f, gconstpointer data)
{
  const char *slurm = "{\"type\": \"slurm\", \"pid\": \"4242\", \"options\": {\"partition\": \"gpu\"}}";
  g_autofree char *path = write_lock_file (f, "slurm", "{\"count\": 1}", slurm);
  g_autofree char *ssh_path = NULL;
  g_autoptr(TestCounter) counter = open_counter (f);

  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  ssh_path = write_lock_file (f, "ssh", "{\"count\": 1}", "{\"type\": \"ssh\", \"pid\": 17, \"host\": \"far\"}");
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (ssh_path, G_FILE_TEST_EXISTS));
}

/* A seed-era lock file (no "process") whose <job_uri>.pid is of a type
 * Tessera does not know is no orphan, however old. */
static void
test_slurm_pid_file_no_orphan (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_lock_file (f, "slurmpid", "{\"count\": 1}", NULL);
  g_autofree char *job_uri = job_uri_for (f, "slurmpid");
  g_autofree char *pid_path = g_strconcat (job_uri, ".pid", NULL);
  g_autoptr(TestCounter) counter = NULL;

  test_write_file (pid_path, "{\"type\": \"slurm\", \"pid\": \"4242\"}");
  test_set_file_age (path, 3600);
  counter = open_counter (f);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* ---------------------------------------------------------------------- */
/* Identity */

static void
test_spec_records_identity (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) node = tessera_process_to_json (self);
  JsonObject *spec = json_node_get_object (node);
  g_autofree char *ns_link = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_autofree char *ns_text = NULL;
  struct stat st;

  /* The seed's keys stay. */
  g_assert_cmpstr (json_object_get_string_member (spec, "type"), ==, "local");
  g_assert_cmpint (json_object_get_int_member (spec, "pid"), ==, getpid ());
  g_assert_cmpint (json_object_get_int_member (spec, "start_time"), >, 0);
  g_assert_true (json_object_has_member (spec, "boot_id"));
  g_assert_cmpstr (json_object_get_string_member (spec, "host"), ==, g_get_host_name ());
  /* And the identity. */
  g_assert_true (json_object_has_member (spec, "machine_id"));
  g_assert_cmpuint (strlen (json_object_get_string_member (spec, "host_id")), ==, 32);
  g_assert_cmpint (stat ("/proc/self/ns/pid", &st), ==, 0);
  g_assert_cmpint (json_object_get_int_member (spec, "pid_ns"), ==, (gint64) st.st_ino);
  g_assert_cmpint (json_object_get_int_member (spec, "uid"), ==, (gint64) getuid ());
  g_assert_nonnull (ns_link);
  /* A second reading gives the same host id: it is kept, not drawn again. */
  {
    g_autoptr(TesseraProcess) again = tessera_process_new_self ();
    g_autoptr(JsonNode) again_node = tessera_process_to_json (again);
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (again_node), "host_id"), ==,
                     json_object_get_string_member (spec, "host_id"));
  }
}

/* experimaestro writes {"type": "local", "pid": P}, no host: on another
 * host, P means nothing here, so a pid that is not running here is no
 * verdict; the job lock, which the job holds while it runs, is. */
static void
test_no_host_written_elsewhere_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *process = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) dead_pid ());
  g_autofree char *job_uri = job_uri_for (f, "elsewhere");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(Helper) job = helper_spawn (NULL, "lockf", lock_path, NULL);
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  helper_expect_line (job, "LOCKED", 60);
  path = write_lock_file (f, "elsewhere", "{\"count\": 1}", process);
  counter = open_counter (f);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  /* The job ended without its lock file (killed): now it goes. */
  helper_close_stdin (job);
  g_assert_cmpint (helper_wait (job), ==, 0);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
set_boot (JsonObject *spec, gpointer data)
{
  json_object_set_string_member (spec, "boot_id", "00000000-dead-beef-0000-000000000000");
}

static void
set_other_machine (JsonObject *spec, gpointer data)
{
  set_boot (spec, data);
  json_object_set_string_member (spec, "machine_id", "0123456789abcdef0123456789abcdef");
  json_object_set_string_member (spec, "host_id", "fedcba9876543210fedcba9876543210");
}

/* Our host, another boot: dead. */
static void
test_same_host_other_boot_dead (Fixture *f, gconstpointer data)
{
  g_autofree char *spec = own_spec (set_boot, NULL);
  g_autofree char *path = write_lock_file (f, "rebooted", "{\"count\": 1}", spec);
  g_autoptr(TestCounter) counter = open_counter (f);

  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Our host name on another machine (containers all named localhost):
 * its boot id says nothing about it. */
static void
test_same_name_other_machine_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *spec = own_spec (set_other_machine, NULL);
  g_autofree char *path = write_lock_file (f, "twin", "{\"count\": 1}", spec);
  g_autofree char *job_uri = job_uri_for (f, "twin");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(Helper) holder = helper_spawn (NULL, "lockf", lock_path, NULL);
  g_autoptr(TestCounter) counter = NULL;

  helper_expect_line (holder, "LOCKED", 60);
  counter = open_counter (f);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

typedef struct
{
  GPid pid;
} PidEdit;

static void
set_pid_no_start (JsonObject *spec, gpointer data)
{
  PidEdit *edit = data;

  json_object_set_int_member (spec, "pid", edit->pid);
  json_object_remove_member (spec, "start_time");
}

/* A Tessera spec of this host without a start time names a pid that now
 * belongs to someone else: only the job lock can tell. Its write lock
 * (lockf) is the holder's; a flock is not, since Tessera's holders take
 * none and anyone who may read the file can take one: the holder is
 * gone at once. */
static void
test_pid_reuse_no_start_time (Fixture *f, gconstpointer data)
{
  const char *kind = data;
  g_autofree char *job_uri = job_uri_for (f, "reused");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *dummy = g_build_filename (f->tmp, "dummy", NULL);
  g_autoptr(Helper) other = helper_spawn (NULL, "flock", dummy, NULL);
  g_autoptr(Helper) locker = NULL;
  g_autoptr(TestCounter) counter = NULL;
  g_autofree char *spec = NULL;
  g_autofree char *path = NULL;
  PidEdit edit;

  helper_expect_line (other, "LOCKED", 60);
  edit.pid = helper_get_pid (other);
  spec = own_spec (set_pid_no_start, &edit);

  /* The job lock is held: the holder runs (its pid may look reused). */
  locker = helper_spawn (NULL, kind, lock_path, NULL);
  helper_expect_line (locker, "LOCKED", 60);
  path = write_lock_file (f, "reused", "{\"count\": 1}", spec);
  counter = open_counter (f);
  if (g_str_equal (kind, "flock"))
    g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  else
    {
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }

  /* Free: the live pid is another process; the holder is gone. */
  helper_close_stdin (locker);
  g_assert_cmpint (helper_wait (locker), ==, 0);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  helper_close_stdin (other);
  helper_wait (other);
}

/* ---------------------------------------------------------------------- */
/* A mount whose locks do not cross hosts (most FUSE file systems, NFS
 * `nolock` or `local_lock=all`, Lustre `localflock`): a free job lock says
 * nothing about a holder on another host. */

static GSubprocess *spawn_tool (Fixture *f, gboolean in_container, GSubprocessFlags flags, GError **error, ...);

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

/* `tessera run --no-wait --need r=1 -- echo ran` on this host: its exit
 * status, with what it wrote on stdout and stderr. */
static int
run_no_wait_here (Fixture *f, char **out, char **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;

  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                    "run", "--no-wait", "--need", "r=1", "--", "echo", "ran", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (run, NULL, NULL, out, err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run said: %s%s", *out, *err);
  return test_exit_code (run);
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
/* Orphans by observation: how long this host has seen a file, never its
 * mtime against our clock */

/* A writer whose clock runs an hour ahead (or a file server's): its fresh
 * file without process is not old. */
static void
test_orphan_mtime_hour_behind_is_young (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_lock_file (f, "fresh", "{\"count\": 1}", NULL);
  g_autoptr(TestCounter) counter = NULL;

  test_set_file_age (path, 3600);
  counter = open_counter (f);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* A writer whose clock runs an hour behind: its orphan still ages, and
 * what one process of this host saw, the next one knows. */
static void
test_orphan_mtime_hour_ahead_ages (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_lock_file (f, "future", "{\"count\": 1}", NULL);
  g_autofree char *job_uri = job_uri_for (f, "future");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(TestCounter) first = NULL;
  g_autoptr(TestCounter) second = NULL;
  gint64 since;

  test_write_file (lock_path, "");   /* seen here, and free */
  test_set_file_age (path, -3600);
  first = open_counter (f);
  g_assert_cmpint (test_counter_grantable (first, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_object (&first);
  /* Let this host's observation (made before now) grow older than
   * min-age, with nobody looking; then a new process judges at once. */
  since = g_get_monotonic_time ();
  while (g_get_monotonic_time () - since < (gint64) (1.2 * G_USEC_PER_SEC))
    g_usleep (50 * 1000);
  second = open_counter (f);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (second), 1);
  g_assert_cmpint (test_counter_grantable (second, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* experimaestro's spec has no start time: its pid, alive here, may now be
 * another process's. The job holds its job lock while it runs, but takes
 * it a moment after its spec is written (Python starting), so a free job
 * lock decides only once this host has seen it free for min-age. */
static void
test_experimaestro_pid_reuse (Fixture *f, gconstpointer data)
{
  g_autofree char *dummy = g_build_filename (f->tmp, "dummy", NULL);
  g_autoptr(Helper) other = helper_spawn (NULL, "flock", dummy, NULL);
  g_autofree char *job_uri = job_uri_for (f, "reused-xp");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *process = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;
  gint64 since = g_get_monotonic_time ();

  helper_expect_line (other, "LOCKED", 60);
  process = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) helper_get_pid (other));
  path = write_lock_file (f, "reused-xp", "{\"count\": 1}", process);
  test_write_file (lock_path, "");   /* its job ended: its job lock is free */
  counter = open_counter (f);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 1);
  while (test_counter_grantable (counter, f->tmp, 3) != 2)
    {
      g_assert_cmpint (g_get_monotonic_time () - since, <, 60 * G_USEC_PER_SEC);
      g_usleep (20 * 1000);
    }
  g_assert_cmpint (g_get_monotonic_time () - since, >=, G_USEC_PER_SEC);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  helper_close_stdin (other);
  helper_wait (other);
}

/* ---------------------------------------------------------------------- */
/* Containers: our host name, our kernel, their own pid namespace */

static GSubprocess *
spawn_tool (Fixture *f, gboolean in_container, GSubprocessFlags flags, GError **error, ...)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  va_list ap;

  if (in_container)
    {
      g_ptr_array_add (argv, (gpointer) "unshare");
      g_ptr_array_add (argv, (gpointer) "--pid");
      g_ptr_array_add (argv, (gpointer) "--fork");
      g_ptr_array_add (argv, (gpointer) "--mount-proc");
    }
  g_ptr_array_add (argv, (gpointer) g_getenv ("TESSERA_TOOL"));
  g_ptr_array_add (argv, (gpointer) "--config");
  g_ptr_array_add (argv, f->config);
  va_start (ap, error);
  for (const char *arg = va_arg (ap, const char *); arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

/* The holder prints its line once it holds; the read ends at the latest
 * when it dies (then NULL), and meson's timeout bounds the rest. */
static char *
read_line (GSubprocess *process)
{
  GDataInputStream *in = g_data_input_stream_new (g_subprocess_get_stdout_pipe (process));
  char *line;

  line = g_data_input_stream_read_line (in, NULL, NULL, NULL);
  g_object_unref (in);
  return line;
}

/* data: whether the holder is the one in the container (else the one
 * that looks is). */
static void
test_container_holder_counts (Fixture *f, gconstpointer data)
{
  gboolean holder_inside = GPOINTER_TO_INT (data);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GDir) dir = NULL;
  guint files = 0;

  holder = spawn_tool (f, holder_inside, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                       "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_cmpstr (ready, ==, "ready");

  for (int i = 0; i < 2; i++)
    {
      other = spawn_tool (f, !holder_inside, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                          "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
      g_assert_no_error (error);
      /* Unavailable: the holder was not taken for dead. */
      g_assert_cmpint (test_exit_code (other), ==, 75);
      g_clear_object (&other);
    }
  dir = g_dir_open (jobs, 0, &error);
  g_assert_no_error (error);
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    files += g_str_has_suffix (name, ".json");
  g_assert_cmpuint (files, ==, 1);

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
}

/* ---------------------------------------------------------------------- */
/* A job lock that cannot be opened (issue 38): only a job lock that was
 * opened and found free is a death. A container with its own state or job
 * folders (podman, apptainer) keeps its job lock where a judge outside
 * cannot see it. */

/* `tessera ARGS…` in a container of its own: pid and mount namespaces,
 * its /proc mounted, after the shell commands @setup (its own mounts). */
static GSubprocess *
spawn_in_own_mounts (Fixture *f, GSubprocessLauncher *launcher, const char *setup, GError **error, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  const char *unshare[] = { "unshare", "--pid", "--fork", "--mount", "--mount-proc", "--propagation", "private",
                            "sh", "-c" };
  va_list ap;

  for (guint i = 0; i < G_N_ELEMENTS (unshare); i++)
    g_ptr_array_add (argv, g_strdup (unshare[i]));
  g_ptr_array_add (argv, g_strdup_printf ("set -e; %s; exec \"$@\"", setup));
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  g_ptr_array_add (argv, g_strdup ("--config"));
  g_ptr_array_add (argv, g_strdup (f->config));
  va_start (ap, error);
  for (const char *arg = va_arg (ap, const char *); arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

/* `tessera run --no-wait --need r=1 -- true` here, as @launcher makes it:
 * its exit status. */
static int
run_no_wait_with (Fixture *f, GSubprocessLauncher *launcher)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config",
                                                            f->config, "run", "--no-wait", "--need", "r=1", "--",
                                                            "true", NULL);

  g_assert_no_error (error);
  return test_exit_code (run);
}

/* The one lock file of the pool r (its path), read as JSON. */
static JsonNode *
read_only_lock_file (Fixture *f, char **path_out)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  const char *name;
  JsonNode *node;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      {
        g_assert_null (path);
        path = g_build_filename (jobs, name, NULL);
      }
  g_assert_nonnull (path);
  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  node = json_from_string (text, &error);
  g_assert_no_error (error);
  if (path_out != NULL)
    *path_out = g_steal_pointer (&path);
  return node;
}

/* The issue's container: its own state folder mounted over ours. Its
 * `tessera run` keeps its job folder in the pool's runs/, where a judge
 * outside sees its job lock held; its spec records that folder. */
static void
test_container_own_state_folder_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *own = g_build_filename (f->tmp, "own-state", NULL);
  g_autofree char *setup = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *path = NULL;
  g_autofree char *job_dir = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDIN_PIPE);
  g_autoptr(GSubprocessLauncher) here = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) lock_file = NULL;
  JsonObject *process, *identity;
  struct stat st;

  g_assert_cmpint (g_mkdir_with_parents (own, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (g_get_user_state_dir (), 0700), ==, 0);
  setup = g_strdup_printf ("mount --bind '%s' \"$XDG_STATE_HOME\"", own);
  holder = spawn_in_own_mounts (f, launcher, setup, &error,
                                "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_cmpstr (ready, ==, "ready");

  /* Unavailable: the holder was not taken for dead, its file stays. */
  g_assert_cmpint (run_no_wait_with (f, here), ==, 75);
  lock_file = read_only_lock_file (f, &path);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  /* Its job folder is in the pool, and its spec records which folder. */
  job_dir = g_path_get_dirname (json_object_get_string_member (json_node_get_object (lock_file), "job_uri"));
  g_test_message ("job folder: %s", job_dir);
  g_assert_true (g_str_has_prefix (job_dir, f->tmp));
  g_assert_nonnull (strstr (job_dir, "/r/runs/"));
  g_assert_cmpint (stat (job_dir, &st), ==, 0);
  process = json_object_get_object_member (json_node_get_object (lock_file), "process");
  g_assert_nonnull (process);
  identity = json_object_get_object_member (process, "job_folder");
  g_assert_nonnull (identity);
  g_assert_cmpint (json_object_get_int_member (identity, "dev"), ==, (gint64) st.st_dev);
  g_assert_cmpint (json_object_get_int_member (identity, "ino"), ==, (gint64) st.st_ino);

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (job_dir, G_FILE_TEST_EXISTS));
}

/* A container whose job folders (TESSERA_JOB_FOLDERS) are its own: the
 * judge outside cannot open the job lock, so the holder counts; status
 * says it is unknown, why, and how to free it; that line frees it. */
static void
test_container_hidden_job_folder_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *folders = g_build_filename (f->tmp, "job-folders", NULL);
  g_autofree char *setup = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *path = NULL;
  g_autofree char *out = NULL;
  g_autofree char *json_out = NULL;
  g_autofree char *free_line = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDIN_PIPE);
  g_autoptr(GSubprocessLauncher) here = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocessLauncher) capture = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) status = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) lock_file = NULL;
  g_autoptr(JsonNode) described = NULL;
  JsonObject *h;
  const char *job;

  g_assert_cmpint (g_mkdir_with_parents (folders, 0755), ==, 0);
  g_subprocess_launcher_setenv (launcher, "TESSERA_JOB_FOLDERS", folders, TRUE);
  g_subprocess_launcher_setenv (here, "TESSERA_JOB_FOLDERS", folders, TRUE);
  g_subprocess_launcher_setenv (capture, "TESSERA_JOB_FOLDERS", folders, TRUE);
  setup = g_strdup_printf ("mount -t tmpfs tmpfs '%s'", folders);
  holder = spawn_in_own_mounts (f, launcher, setup, &error,
                                "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_cmpstr (ready, ==, "ready");
  g_assert_cmpuint (test_count_entries (folders), ==, 0);   /* nothing of it seen here */

  for (int i = 0; i < 2; i++)
    g_assert_cmpint (run_no_wait_with (f, here), ==, 75);
  lock_file = read_only_lock_file (f, &path);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  /* status: unknown, why, and the line that frees it. */
  status = g_subprocess_launcher_spawn (capture, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                        "status", "--json", "r", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (status, NULL, NULL, &json_out, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("status --json: %s", json_out);
  described = json_from_string (json_out, &error);
  g_assert_no_error (error);
  h = json_array_get_object_element (json_object_get_array_member (json_array_get_object_element (
        json_object_get_array_member (json_node_get_object (described), "resources"), 0), "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "state"), ==, "unknown");
  g_assert_nonnull (json_object_get_string_member (h, "reason"));
  g_assert_nonnull (strstr (json_object_get_string_member (h, "reason"), "job lock"));
  job = json_object_get_string_member (h, "job");
  g_clear_object (&status);
  status = g_subprocess_launcher_spawn (capture, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                        "status", "r", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (status, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("status: %s", out);
  g_assert_nonnull (strstr (out, ", unknown, "));
  free_line = g_strdup_printf ("tessera clean --force r %s", job);
  g_assert_nonnull (strstr (out, free_line));

  /* What status says frees it. */
  g_clear_object (&status);
  status = g_subprocess_launcher_spawn (capture, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                        "clean", "--force", "r", job, NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (status), ==, 0);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_cmpint (run_no_wait_with (f, here), ==, 0);

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  test_exit_code (holder);
}

/* A spec of this host and boot in another pid namespace (a container's):
 * only its job lock can tell. */
static void
set_other_pid_ns (JsonObject *spec, gpointer data)
{
  json_object_set_int_member (spec, "pid_ns", 1);
}

typedef struct
{
  const char *folder;   /* whose identity the spec records */
} FolderEdit;

static void
set_container_job_folder (JsonObject *spec, gpointer data)
{
  FolderEdit *edit = data;
  JsonObject *identity = json_object_new ();
  struct stat st;

  set_other_pid_ns (spec, NULL);
  g_assert_cmpint (stat (edit->folder, &st), ==, 0);
  json_object_set_int_member (identity, "dev", (gint64) st.st_dev);
  json_object_set_int_member (identity, "ino", (gint64) st.st_ino);
  json_object_set_object_member (spec, "job_folder", identity);
}

/* A spec of another host (an NFS client of the same export): it records
 * its job folder by the device number it sees there, which is not the one
 * this host sees for the same folder (each client numbers its mounts). */
static void
set_other_host_job_folder (JsonObject *spec, gpointer data)
{
  FolderEdit *edit = data;
  JsonObject *identity = json_object_new ();
  struct stat st;

  g_assert_cmpint (stat (edit->folder, &st), ==, 0);
  json_object_set_string_member (spec, "host", "elsewhere");
  json_object_set_string_member (spec, "host_id", "0123456789abcdef0123456789abcdef");
  json_object_set_string_member (spec, "machine_id", "fedcba9876543210fedcba9876543210");
  json_object_set_boolean_member (spec, "locks_cross", TRUE);
  json_object_set_int_member (identity, "dev", (gint64) st.st_dev + 7);
  json_object_set_int_member (identity, "ino", (gint64) st.st_ino);
  json_object_set_object_member (spec, "job_folder", identity);
}

/* A Tessera holder whose spec records its job folder: seen here without
 * its job lock, that very folder says the holder is gone (a run removes
 * its lock files before its job lock); another folder at that path, or
 * none, says nothing, and the holder counts. data: "same", "other" or
 * "none". */
static void
test_recorded_job_folder (Fixture *f, gconstpointer data)
{
  const char *which = data;
  g_autofree char *xp = g_build_filename (f->tmp, "xp", NULL);
  /* "other-host-local": the job folders on a file system of their own
   * here (a host-local disk, which another host's job folder of that
   * path is not), not the pool's. */
  gboolean local = g_str_equal (which, "other-host-local") &&
                   g_mkdir_with_parents (xp, 0777) == 0 && mount ("tessera-test", xp, "tmpfs", 0, NULL) == 0;
  g_autofree char *job_uri = job_uri_for (f, "recorded");
  g_autofree char *job_dir = g_path_get_dirname (job_uri);
  g_autofree char *other = g_build_filename (f->tmp, "xp", "elsewhere", NULL);
  FolderEdit edit = { job_dir };
  g_autofree char *spec = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  g_assert_cmpint (g_mkdir_with_parents (other, 0755), ==, 0);
  if (g_str_equal (which, "other"))
    edit.folder = other;
  if (g_str_equal (which, "other-host-local") && !local)
    g_error ("cannot mount a tmpfs on %s: %s", xp, g_strerror (errno));
  spec = own_spec (g_str_has_prefix (which, "other-host") ? set_other_host_job_folder : set_container_job_folder,
                   &edit);
  path = write_lock_file (f, "recorded", "{\"count\": 1}", spec);
  if (g_str_equal (which, "none"))
    g_assert_cmpint (g_rmdir (job_dir), ==, 0);
  counter = open_counter (f);
  if (g_str_equal (which, "same") || g_str_equal (which, "other-host"))
    {
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  else
    {
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  if (local)
    g_assert_cmpint (umount2 (xp, MNT_DETACH), ==, 0);
}

/* experimaestro's holders keep their own layout and record no folder:
 * judged as before when their job lock can be opened (free: gone, once
 * seen free for min-age), but a job folder that cannot be seen, or one
 * without its job lock (not taken yet, or taken where we do not look),
 * says nothing: the holder counts. data: "lock", "no-lock" or "none". */
static void
test_experimaestro_job_folder (Fixture *f, gconstpointer data)
{
  const char *which = data;
  g_autofree char *process = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) dead_pid ());
  g_autofree char *job_uri = job_uri_for (f, "xp-job");
  g_autofree char *job_dir = g_path_get_dirname (job_uri);
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  if (g_str_equal (which, "lock"))
    test_write_file (lock_path, "");
  path = write_lock_file (f, "xp-job", "{\"count\": 1}", process);
  if (g_str_equal (which, "none"))
    g_assert_cmpint (g_rmdir (job_dir), ==, 0);
  counter = open_counter (f);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 0);
  if (g_str_equal (which, "lock"))
    {
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  else
    {
      g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }
}

/* A waiter within its patience that this process cannot check (in a
 * container: another pid namespace; no job lock held) stays listed for
 * longer than min-age while it waits (issue 42, point 4): its entry is
 * refreshed as it tries again, where it was written once per wait, so
 * another host took it for gone once it had seen it unchanged for
 * min-age. The pool's min-age is 6 s, and the judge looks for 15 s.
 * @data "often": the waiter tries often (polling every 0.3 s); "quiet":
 * nothing else changes in the pool and it would poll once a minute (a
 * watched folder: it wakes at changes, its own rewrites among them). */
static void
test_waiting_entry_refreshed (Fixture *f, gconstpointer data)
{
  gboolean quiet = g_str_equal (data, "quiet");
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) counter = test_counter_new (f->folder, -1, &error);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "holder");
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL);
  g_autofree char *queue = g_build_filename (f->folder, "queue", NULL);
  const char *env[] = { "TESSERA_PATIENCE", "3600", "TESSERA_POLL_INTERVAL_MAX", quiet ? "60" : "0.3",
                        "TEST_MIN_AGE", "6", NULL };
  const char *argv[] = { "unshare", "--pid", "--fork", "--mount-proc", helper, "request", f->folder, "2", "remote",
                         "1", "120", NULL };
  g_autoptr(Helper) waiter = NULL;
  gint64 start, deadline;

  g_assert_no_error (error);
  dep = test_counter_dependency_new (counter, job, 2);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_no_error (error);
  waiter = helper_spawn_argv (env, argv);
  helper_expect_line (waiter, "WAITING", 60);
  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (test_count_entries (queue) == 0)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("the waiter wrote no entry in %s within 60 s", queue);
      g_usleep (10 * 1000);
    }

  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 6);
  start = g_get_monotonic_time ();
  while (g_get_monotonic_time () - start < 15 * G_USEC_PER_SEC)
    {
      g_autoptr(GPtrArray) waiting =
        tessera_tracked_dynamic_resource_list_waiting (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), &error);

      g_assert_no_error (error);
      if (waiting->len != 1)
        g_error ("the waiter was not listed %.1f s after the first look (min-age 6 s)",
                 (double) (g_get_monotonic_time () - start) / G_USEC_PER_SEC);
      g_usleep (G_USEC_PER_SEC / 2);
    }

  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  helper_expect_line (waiter, "ACQUIRED", 60);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_clear_object (&lock);
  g_clear_object (&dep);
  test_drop_resource (&counter);
}

/* ---------------------------------------------------------------------- */
/* Another host: its own UTS, pid and mount namespaces, with its own
 * /etc/machine-id, boot id and host-local state (/var/tmp) bind-mounted,
 * and our host name (the machines all called alike). Namespaces on one
 * kernel share locks, as NFSv4 or Lustre `flock` hosts do through the
 * file server. */

/* Where a `tessera` of a test runs, and as whom. */
typedef struct
{
  const char *host;      /* a simulated host's name; NULL: this host */
  gboolean container;    /* (this host) in a pid namespace of its own, its /proc mounted */
  TestGroupPool *gp;     /* with @user: the pool's users and configuration */
  const char *user;      /* one of @gp's users; NULL: as the test (root) */
  const char *poll_max;  /* TESSERA_POLL_INTERVAL_MAX; NULL: the default */
  gboolean view;         /* (a simulated host, or a container) tmp/real seen at tmp/view through a FUSE view of its own */
  gboolean bind;         /* (a container) tmp/real bind-mounted at tmp/view in mounts of its own */
  gboolean hide_proc;    /* (a container with a view) /proc covered by an empty tmpfs once the view is up:
                          * no mountinfo, no boot id */
} Place;

/* Appends to @argv the command `tessera` run at @at, with `--config
 * @config` unless @config is NULL (then TESSERA_CONFIG says). A simulated
 * host is made in tmp/HOST: its machine id, boot id and /var/tmp
 * (everyone's, as a real one is) bind-mounted; a user's run has its state
 * (and home) in a folder of its own beside the pool, umask 022, and is
 * killed after two minutes. */
static void
append_place (Fixture *f, const Place *at, const char *config, GPtrArray *argv)
{
  if (at->host != NULL)
    {
      g_autofree char *view = at->view ? g_strdup_printf ("bindfs --no-allow-other -o nonempty '%s/real' '%s/view'; ",
                                                          f->tmp, f->tmp)
                                       : g_strdup ("");

      test_argv_simulated_host (argv, f->tmp, at->host, view);
    }
  else if (at->container && (at->view || at->bind))
    {
      /* This host (its machine id, boot id and /var/tmp: its host id), in
       * a pid namespace and mounts of its own, seeing the pool through
       * another mount of its own. */
      const char *unshare[] = { "unshare", "--pid", "--mount", "--fork", "--propagation", "private", "sh", "-c" };

      for (guint i = 0; i < G_N_ELEMENTS (unshare); i++)
        g_ptr_array_add (argv, g_strdup (unshare[i]));
      g_ptr_array_add (argv, g_strdup_printf ("set -e; mount -t proc proc /proc; %s '%s/real' '%s/view'; "
                                              "%sexec \"$@\"",
                                              at->view ? "bindfs --no-allow-other -o nonempty" : "mount --bind",
                                              f->tmp, f->tmp, at->hide_proc ? "mount -t tmpfs none /proc; " : ""));
      g_ptr_array_add (argv, g_strdup ("sh"));
    }
  else if (at->container)
    {
      const char *unshare[] = { "unshare", "--pid", "--fork", "--mount-proc" };

      for (guint i = 0; i < G_N_ELEMENTS (unshare); i++)
        g_ptr_array_add (argv, g_strdup (unshare[i]));
    }
  if (at->user != NULL)
    test_argv_as_user (argv, at->user, 120);
  g_ptr_array_add (argv, g_strdup ("env"));
  if (at->poll_max != NULL)
    g_ptr_array_add (argv, g_strdup_printf ("TESSERA_POLL_INTERVAL_MAX=%s", at->poll_max));
  if (at->user != NULL)
    {
      g_autofree char *state = test_user_folder (at->gp->tmp, at->user);

      g_ptr_array_add (argv, g_strdup_printf ("XDG_STATE_HOME=%s", state));
      g_ptr_array_add (argv, g_strdup_printf ("HOME=%s", state));
      g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
    }
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  if (config != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("--config"));
      g_ptr_array_add (argv, g_strdup (config));
    }
}

/* Runs `tessera ARGS…` at @at through @launcher. */
static GSubprocess *
spawn_place_va (Fixture *f, const Place *at, GSubprocessLauncher *launcher, const char *config, GError **error,
                va_list ap)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  append_place (f, at, config, argv);
  for (const char *arg = va_arg (ap, const char *); arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  g_ptr_array_add (argv, NULL);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

/* Runs `tessera --config CONFIG ARGS…` at @at through @launcher: CONFIG
 * is the group pool's for a user, the fixture's else. */
static GSubprocess *
spawn_at_with (Fixture *f, const Place *at, GSubprocessLauncher *launcher, GError **error, ...)
{
  GSubprocess *process;
  va_list ap;

  va_start (ap, error);
  process = spawn_place_va (f, at, launcher, at->gp != NULL ? at->gp->config : f->config, error, ap);
  va_end (ap);
  return process;
}

/* The same with a launcher of @flags. */
static GSubprocess *
spawn_at (Fixture *f, const Place *at, GSubprocessFlags flags, GError **error, ...)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  GSubprocess *process;
  va_list ap;

  va_start (ap, error);
  process = spawn_place_va (f, at, launcher, at->gp != NULL ? at->gp->config : f->config, error, ap);
  va_end (ap);
  return process;
}

static GSubprocess *
spawn_on_other_host_full (Fixture *f, GSubprocessLauncher *launcher, const char *host,
                          GError **error, va_list ap)
{
  const Place at = { .host = host };

  return spawn_place_va (f, &at, launcher, NULL, error, ap);
}

static GSubprocess *
spawn_default_on_other_host_va (Fixture *f, GSubprocessLauncher *launcher, const char *host, GError **error, ...)
{
  GSubprocess *process;
  va_list ap;

  va_start (ap, error);
  process = spawn_on_other_host_full (f, launcher, host, error, ap);
  va_end (ap);
  return process;
}

static GSubprocess *
spawn_default_on_other_host (Fixture *f, GSubprocessLauncher *launcher, const char *host, GError **error)
{
  return spawn_default_on_other_host_va (f, launcher, host, error, "status", "--json", NULL);
}

/* Runs `tessera ARGS…` on the simulated @host, with the fixture's
 * configuration. */
static GSubprocess *
spawn_on_other_host (Fixture *f, const char *host, GSubprocessFlags flags, GError **error, ...)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  GSubprocess *process;
  va_list ap;

  g_subprocess_launcher_setenv (launcher, "TESSERA_CONFIG", f->config, TRUE);
  va_start (ap, error);
  process = spawn_on_other_host_full (f, launcher, host, error, ap);
  va_end (ap);
  return process;
}

/* The init of the namespace an `unshare --fork` made: its only child. */
static GPid
namespace_init (GSubprocess *unshare)
{
  int pid = atoi (g_subprocess_get_identifier (unshare));
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", pid, pid);
  g_autofree char *children = NULL;

  g_assert_true (g_file_get_contents (path, &children, NULL, NULL));
  g_assert_cmpint (atoi (children), >, 0);
  return atoi (children);
}

/* A holder on another host named like ours counts while it lives; when
 * the whole host dies (SIGKILL to its namespace's init), a waiter here
 * gets through: the job lock tells, within the poll interval. */
static void
test_other_host_holder_then_host_killed (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *through = NULL;
  gint64 killed;
  double reclaim;

  holder = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                                "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_cmpstr (ready, ==, "ready");

  /* No over-allocation: same host name, other machine, other boot. */
  other = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                      "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (other), ==, 75);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_POLL_INTERVAL_MAX", "1", TRUE);
  waiter = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                        "run", "--need", "r=1", "--", "echo", "through", NULL);
  g_assert_no_error (error);

  kill (namespace_init (holder), SIGKILL);
  killed = g_get_monotonic_time ();
  g_assert_cmpint (test_exit_code (holder), !=, 0);   /* unshare reports the kill its own way */
  through = read_line (waiter);
  reclaim = (double) (g_get_monotonic_time () - killed) / G_USEC_PER_SEC;
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  g_test_message ("reclaim time of a dead host (job-lock path, poll interval max 1 s, "
                  "waiter started just before the kill): %.2f s", reclaim);
  g_assert_cmpfloat (reclaim, <, 30);
}

/* The first child of @pid (any of its threads'), 0 when it has none. */
static GPid
first_child (GPid pid)
{
  g_autofree char *tasks = g_strdup_printf ("/proc/%d/task", (int) pid);
  g_autoptr(GDir) dir = g_dir_open (tasks, 0, NULL);
  const char *task;

  while (dir != NULL && (task = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tasks, task, "children", NULL);
      g_autofree char *children = NULL;

      if (g_file_get_contents (path, &children, NULL, NULL) && atoi (children) > 0)
        return atoi (children);
    }
  return 0;
}

/* NFSv3: locks cross hosts, but a vanished host's stay held (here by a
 * stand-in process that keeps a copy of the dead command's job lock
 * descriptor). On a lease pool, the host's lease decides: a waiter here
 * gets through once it has seen the dead host's heartbeat unchanged for
 * the lease time. */
static void
test_other_host_killed_lease (Fixture *f, gconstpointer data)
{
  /* The holder is healthy until the kill: its renewals may stall for half
   * the lease before its fence acts (see test_lease_healthy_run). */
  const double lease = 5;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *through = NULL;
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autoptr(GDir) dir = NULL;
  const char *name;
  guint heartbeats = 0;
  g_autofree char *command_text = NULL;
  g_autofree char *fd_text = NULL;
  g_autoptr(Helper) stand_in = NULL;
  GPid wrapper, command;
  gint64 killed;
  double reclaim;

  test_write_file (f->config, config);
  holder = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                                "run", "--need", "r=1", "--", "sh", "-c",
                                "echo \"ready $TESSERA_JOB_LOCK_FD\"; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_nonnull (ready);
  g_assert_true (g_str_has_prefix (ready, "ready "));

  /* The holding host renews one heartbeat, named by its host id. */
  dir = g_dir_open (hosts, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    heartbeats += g_str_has_suffix (name, ".lease");
  g_assert_cmpuint (heartbeats, ==, 1);

  /* The stand-in keeps the command's job lock held after the host dies. */
  wrapper = namespace_init (holder);
  command = first_child (wrapper);
  g_assert_cmpint (command, >, 0);
  command_text = g_strdup_printf ("%d", (int) command);
  fd_text = g_strdup (ready + strlen ("ready "));
  stand_in = helper_spawn (NULL, "keep-fd", command_text, fd_text, NULL);
  helper_expect_line (stand_in, "KEPT", 60);

  other = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                      "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (other), ==, 75);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_POLL_INTERVAL_MAX", "1", TRUE);
  waiter = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                        "run", "--need", "r=1", "--", "echo", "through", NULL);
  g_assert_no_error (error);

  kill (wrapper, SIGKILL);
  killed = g_get_monotonic_time ();
  g_assert_cmpint (test_exit_code (holder), !=, 0);
  through = read_line (waiter);
  reclaim = (double) (g_get_monotonic_time () - killed) / G_USEC_PER_SEC;
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  g_test_message ("reclaim time of a dead host (lease path, job lock still held, lease %g s, "
                  "poll interval max 1 s, waiter started just before the kill): %.2f s", lease, reclaim);
  /* Not the job lock: the heartbeat had to stay unchanged for the lease
   * (its last renewal came at most an eighth of it before the kill, a
   * quarter on a late one). */
  g_assert_cmpfloat (reclaim, >=, lease * 3 / 4 - 0.1);
  g_assert_cmpfloat (reclaim, <, lease + 30);
  helper_close_stdin (stand_in);
  g_assert_cmpint (helper_wait (stand_in), ==, 0);
}

/* A run on a lease pool that got its share at once (it never waited)
 * renews its lease for as long as it holds: its command outlives the
 * lease twice over and is never fenced. (Renewals come every eighth of
 * the lease and the fence acts once they have failed for 5/8 of it, so
 * a renewer may stall for half the lease: 4 s here, more than a loaded
 * 2-core machine's stalls.) */
static void
test_lease_healthy_run (Fixture *f, gconstpointer data)
{
  const double lease = 8;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                    "run", "--need", "r=1", "--", "sleep", "17", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (run, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run said: %s", err);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  g_assert_null (strstr (err, "lease"));
}

/* Whether @pid has ended (gone, or a zombie nobody reaped yet). */
static gboolean
process_gone (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *end;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return TRUE;
  end = strrchr (stat, ')');
  return end != NULL && end[1] == ' ' && end[2] == 'Z';
}

/* Starts `tessera run --need r=1 -- sh -c SCRIPT`, where SCRIPT first
 * prints its pid; returns the run, with the command's pid in @command
 * once it holds. */
static GSubprocess *
spawn_run_holding (Fixture *f, GSubprocessFlags flags, const char *script, GPid *command)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  GSubprocess *run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | flags, &error,
                                 "run", "--need", "r=1", "--", "sh", "-c", script, NULL);

  g_assert_no_error (error);
  ready = read_line (run);
  g_assert_nonnull (ready);
  *command = atoi (ready);
  g_assert_cmpint (*command, >, 0);
  return run;
}

/* Fencing: a run whose host lease cannot be renewed ends its command
 * before another host may take its share for dead (SIGTERM, then SIGKILL
 * for a command that ignores it), and exits 76. Renewal is made to fail
 * by replacing hosts/ with a file (as root, permissions would not). */
static void
test_lease_fence (Fixture *f, gconstpointer data)
{
  gboolean ignores_term = GPOINTER_TO_INT (data);
  const double lease = 4;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autofree char *moved = g_build_filename (f->tmp, "r", "hosts-moved", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;
  g_autofree char *err = NULL;
  GPid command;
  gint64 broken;
  double ended;

  test_write_file (f->config, config);
  run = spawn_run_holding (f, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                           ignores_term ? "trap '' TERM; echo $$; while :; do sleep 0.05; done"
                                        : "echo $$; exec sleep 600", &command);
  g_assert_true (g_file_test (hosts, G_FILE_TEST_IS_DIR));

  g_assert_cmpint (g_rename (hosts, moved), ==, 0);
  test_write_file (hosts, "not a folder");
  broken = g_get_monotonic_time ();
  while (!process_gone (command) && g_get_monotonic_time () - broken < 60 * G_USEC_PER_SEC)
    g_usleep (10 * 1000);
  ended = (double) (g_get_monotonic_time () - broken) / G_USEC_PER_SEC;
  if (!process_gone (command))
    {
      /* Never fenced: end it here, and fail below. */
      kill (command, SIGKILL);
      g_subprocess_force_exit (run);
    }
  {
    g_autoptr(GOutputStream) sink = g_memory_output_stream_new_resizable ();

    g_output_stream_splice (sink, g_subprocess_get_stderr_pipe (run), G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                            &error);
    g_assert_no_error (error);
    err = g_strndup (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (sink)),
                     g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (sink)));
  }
  g_test_message ("tessera run said: %s", err);
  g_test_message ("command %s %.2f s after renewal broke (lease %g s)",
                  ignores_term ? "killed" : "ended", ended, lease);
  g_assert_cmpint (test_exit_code (run), ==, 76);
  g_assert_nonnull (strstr (err, "lease"));
  g_assert_true (process_gone (command));
  /* Before any other host could have taken the holding for dead: the last
   * renewal came before the break. */
  g_assert_cmpfloat (ended, <, lease);
}

/* The file server hangs (the FUSE daemon of the pool's view is stopped):
 * the wrapper's main thread and its renewals block in its I/O, yet the
 * fence ends the command before the lease is over, and once the server
 * answers again the run exits 76. */
static void
test_lease_fence_server_hangs (Fixture *f, gconstpointer data)
{
  const double lease = 4;
  g_autofree char *real = g_build_filename (f->tmp, "real", NULL);
  g_autofree char *view = g_build_filename (f->tmp, "view", NULL);
  g_autofree char *view_folder = g_build_filename (view, "r", NULL);
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s\ntotal=1\nhost-lease=%g\n",
                                             view_folder, lease);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;
  GSubprocess *bindfs = test_mount_fuse_view (real, view);
  GPid server = atoi (g_subprocess_get_identifier (bindfs));
  GPid command;
  gint64 stopped;
  double ended;

  test_write_file (f->config, config);
  run = spawn_run_holding (f, G_SUBPROCESS_FLAGS_NONE, "echo $$; exec sleep 600", &command);

  g_assert_cmpint (kill (server, SIGSTOP), ==, 0);
  stopped = g_get_monotonic_time ();
  while (!process_gone (command) && g_get_monotonic_time () - stopped < 30 * G_USEC_PER_SEC)
    g_usleep (10 * 1000);
  ended = (double) (g_get_monotonic_time () - stopped) / G_USEC_PER_SEC;
  if (!process_gone (command))
    kill (command, SIGKILL);   /* never fenced: fail below, leaving nothing */
  g_assert_cmpint (kill (server, SIGCONT), ==, 0);
  g_test_message ("command ended %.2f s after the server stopped answering (lease %g s)", ended, lease);
  g_assert_cmpint (test_exit_code (run), ==, 76);
  g_assert_cmpfloat (ended, <, lease);
  g_clear_object (&run);
  test_unmount_fuse_view (view, bindfs);
}

/* The pool's lease is every user's: a user whose configuration lacks
 * host-lease, holding on a host whose heartbeat an earlier run left,
 * renews it as the pool records (informations.json), is told so, and is
 * not taken for dead here once the lease has passed. */
static void
test_lease_recorded_in_pool (Fixture *f, gconstpointer data)
{
  /* Not shorter: with three clean-clone CI runs at once (load 19, the
   * ASan build), the holder's renewals stalled past what a 3 s lease
   * survived then; a renewer may stall for half the lease. */
  const double lease = 8;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autofree char *plain_config = g_build_filename (f->tmp, "plain.conf", NULL);
  g_autofree char *plain = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n", f->tmp);
  g_autofree char *info_path = g_build_filename (f->tmp, "r", "informations.json", NULL);
  g_autofree char *info = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) first = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GDataInputStream) holder_out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *err = NULL;

  test_write_file (f->config, config);
  test_write_file (plain_config, plain);
  /* A run with the lease makes the pool, and leaves host-b's heartbeat. */
  first = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true",
                               NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (first), ==, 0);
  g_assert_true (g_file_get_contents (info_path, &info, NULL, NULL));
  g_test_message ("informations.json: %s", info);
  g_assert_nonnull (strstr (info, "\"host_lease\""));
  g_assert_nonnull (strstr (info, "\"total\""));

  /* Another user on host-b, whose configuration names no lease. */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_CONFIG", plain_config, TRUE);
  holder = spawn_default_on_other_host_va (f, launcher, "host-b", &error, "run", "--need", "r=1", "--", "sh", "-c",
                                           "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  holder_out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (holder));
  ready = g_data_input_stream_read_line (holder_out, NULL, NULL, NULL);
  g_assert_cmpstr (ready, ==, "ready");

  /* Here, with the lease: its holder stays alive well past the lease. */
  waiter = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                       "run", "--timeout", "17", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (waiter), ==, 75);

  /* Ends it (its stdin closes) and reads what it said. */
  {
    g_autofree char *out = NULL;

    g_subprocess_communicate_utf8 (holder, NULL, NULL, &out, &err, &error);
    g_assert_no_error (error);
  }
  g_test_message ("the holder without host-lease said: %s", err);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
  g_assert_nonnull (strstr (err, "lease"));
}

/* The first renewal comes before the lock file: a heartbeat that cannot
 * be written fails the acquire, and nothing is held. */
static void
test_lease_first_renewal_before_lock_file (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autofree char *heartbeat = NULL;
  g_autofree char *inside = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  const char *name;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  g_clear_object (&run);
  g_assert_true (g_file_test (hosts, G_FILE_TEST_IS_DIR));
  /* The heartbeat, not the host's mark beside it, cannot be written: a
   * folder that is not empty in its place. */
  dir = g_dir_open (hosts, 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".lease"))
      heartbeat = g_build_filename (hosts, name, NULL);
  g_assert_nonnull (heartbeat);
  g_assert_cmpint (g_unlink (heartbeat), ==, 0);
  inside = g_build_filename (heartbeat, "in-the-way", NULL);
  test_write_file (inside, "");

  g_assert_cmpint (run_no_wait_here (f, &out, &err), !=, 0);
  g_assert_cmpstr (out, ==, "");
  g_assert_nonnull (strstr (err, "lease"));
  g_assert_cmpuint (test_count_entries (jobs), ==, 0);
}

/* The reserving entry of the queue (queue/NAME.json with "reserve":
 * true) as soon as there is one (a minute at most): its job URI. */
static char *
wait_for_reservation (Fixture *f)
{
  g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (queue, name, NULL);
          g_autofree char *text = NULL;
          g_autoptr(JsonParser) parser = json_parser_new ();
          JsonObject *entry;

          if (!g_str_has_suffix (name, ".json") || !g_file_get_contents (path, &text, NULL, NULL) ||
              !json_parser_load_from_data (parser, text, -1, NULL) ||
              !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
            continue;
          entry = json_node_get_object (json_parser_get_root (parser));
          if (json_object_get_boolean_member_with_default (entry, "reserve", FALSE))
            return g_strdup (json_object_get_string_member_with_default (entry, "job_uri", ""));
        }
      g_usleep (20 * 1000);
    }
  g_assert_not_reached ();
}

/* NFSv3: a whole host vanishes with a holder and a waiter that reserved
 * capacity, and stand-ins keep their job locks held. Its lease expires:
 * the holding is reclaimed, and so is the reservation, which would keep
 * every later arrival here waiting for ever. */
static void
test_lease_dead_host_reservation_dropped (Fixture *f, gconstpointer data)
{
  const double lease = 5;   /* the holder is healthy until its host dies: half of it may stall */
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) here = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocessLauncher) here_launcher = NULL;
  g_autoptr(Helper) holder_stand_in = NULL;
  g_autoptr(Helper) waiter_stand_in = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *command_text = NULL;
  g_autofree char *waiter_job = NULL;
  g_autofree char *waiter_lock = NULL;
  g_autofree char *through = NULL;
  GPid wrapper;
  gint64 killed;

  test_write_file (f->config, config);
  holder = spawn_on_other_host (f, "host-b", G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                                "run", "--need", "r=1", "--", "sh", "-c",
                                "echo \"ready $TESSERA_JOB_LOCK_FD\"; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_nonnull (ready);
  g_assert_true (g_str_has_prefix (ready, "ready "));
  wrapper = namespace_init (holder);
  command_text = g_strdup_printf ("%d", (int) first_child (wrapper));
  holder_stand_in = helper_spawn (NULL, "keep-fd", command_text, ready + strlen ("ready "), NULL);
  helper_expect_line (holder_stand_in, "KEPT", 60);

  /* A waiter on the same host, whose patience is over at once. */
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_CONFIG", f->config, TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PATIENCE", "0.1", TRUE);
  waiter = spawn_default_on_other_host_va (f, launcher, "host-b", &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  waiter_job = wait_for_reservation (f);
  g_assert_cmpstr (waiter_job, !=, "");

  /* The whole host dies; its job locks stay held. */
  kill (namespace_init (waiter), SIGKILL);
  kill (wrapper, SIGKILL);
  killed = g_get_monotonic_time ();
  g_assert_cmpint (test_exit_code (waiter), !=, 0);
  g_assert_cmpint (test_exit_code (holder), !=, 0);
  waiter_lock = g_strconcat (waiter_job, ".lock", NULL);
  waiter_stand_in = helper_spawn (NULL, "lockf", waiter_lock, NULL);
  helper_expect_line (waiter_stand_in, "LOCKED", 60);

  /* Here, a later arrival gets through once the lease has expired. */
  here_launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_subprocess_launcher_setenv (here_launcher, "TESSERA_POLL_INTERVAL_MAX", "1", TRUE);
  here = g_subprocess_launcher_spawn (here_launcher, &error, g_getenv ("TESSERA_TOOL"), "--config", f->config,
                                      "run", "--timeout", "30", "--need", "r=1", "--", "echo", "through", NULL);
  g_assert_no_error (error);
  through = read_line (here);
  g_test_message ("a later arrival got through %.2f s after the host died (lease %g s)",
                  (double) (g_get_monotonic_time () - killed) / G_USEC_PER_SEC, lease);
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (here), ==, 0);

  helper_close_stdin (holder_stand_in);
  g_assert_cmpint (helper_wait (holder_stand_in), ==, 0);
  helper_close_stdin (waiter_stand_in);
  helper_wait (waiter_stand_in);
}

/* On NFS a peer's flock probe (a brief LOCK_SH) reaches the file server
 * as a shared POSIX lock, which conflicts with the job lock we take: the
 * take waits such a lock out instead of failing as if another process
 * ran the job. The taker is held at pause point "job-lock-shared" (it
 * met the shared lock) until the probe has ended. A write lock still
 * means another runs the job, at once. */
static void
test_job_lock_take_waits_out_probe (Fixture *f, gconstpointer data)
{
  g_autofree char *job_uri = job_uri_for (f, "probed");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autofree char *reached = g_build_filename (pause_dir, "job-lock-shared.reached", NULL);
  g_autofree char *go = g_build_filename (pause_dir, "job-lock-shared.go", NULL);
  const char *env[] = { "TESSERA_PAUSE_AT", "job-lock-shared", "TESSERA_PAUSE_DIR", pause_dir, NULL };
  g_autoptr(Helper) probe = NULL;
  g_autoptr(Helper) taker = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) other = NULL;
  g_autofree char *line = NULL;
  g_autofree char *line2 = NULL;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  g_mkdir_with_parents (pause_dir, 0777);
  probe = helper_spawn (NULL, "probe", lock_path, NULL);
  helper_expect_line (probe, "LOCKED", 60);
  taker = helper_spawn (env, "hold-job", job_uri, NULL);
  /* It meets the probe's lock and waits (or, failing at once, ends). */
  while (!g_file_test (reached, G_FILE_TEST_EXISTS) && helper_is_running (taker) &&
         g_get_monotonic_time () < deadline)
    g_usleep (5 * 1000);
  helper_close_stdin (probe);
  g_assert_cmpint (helper_wait (probe), ==, 0);
  test_write_file (go, "");
  line = helper_read_line (taker, 60);
  g_assert_cmpstr (line, ==, "HELD");
  g_assert_true (g_file_test (reached, G_FILE_TEST_EXISTS));
  helper_close_stdin (taker);
  g_assert_cmpint (helper_wait (taker), ==, 0);

  holder = helper_spawn (NULL, "lockf", lock_path, NULL);
  helper_expect_line (holder, "LOCKED", 60);
  other = helper_spawn (NULL, "hold-job", job_uri, NULL);
  line2 = helper_read_line (other, 60);
  g_assert_nonnull (line2);
  g_assert_true (g_str_has_prefix (line2, "ERROR ms="));
  g_assert_cmpint (helper_wait (other), ==, 1);
  /* A holder's write lock ends the take at once: it is not waited out as
   * a probe's shared lock is (2 s), as the take itself timed it. */
  g_assert_cmpint (atoi (line2 + strlen ("ERROR ms=")), <, 1500);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A command that forks: a background child (`sleep &`) and an orphan
 * that setsid()s away and whose parent ends at once. Each prints its pid
 * on a line of its own ("child N", "orphan N", "command N"); they keep
 * none of the run's pipes. */
#define FORKING_SCRIPT \
  "(setsid sh -c \"echo orphan \\$\\$; exec sleep 600 </dev/null >/dev/null 2>&1\" &); " \
  "sleep 600 </dev/null >/dev/null 2>&1 & echo child $!; echo command $$; wait"

/* Starts `tessera run --need r=1 -- sh -c FORKING_SCRIPT`: @pids gets the
 * command's, its child's and the orphan's pids once all three run. */
static GSubprocess *
spawn_run_forking (Fixture *f, GPid pids[3])
{
  const char *tags[3] = { "command ", "child ", "orphan " };
  g_autoptr(GError) error = NULL;
  GSubprocess *run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                 &error, "run", "--need", "r=1", "--", "sh", "-c", FORKING_SCRIPT, NULL);
  g_autoptr(GDataInputStream) in = NULL;

  g_assert_no_error (error);
  in = g_data_input_stream_new (g_subprocess_get_stdout_pipe (run));
  pids[0] = pids[1] = pids[2] = 0;
  for (int lines = 0; lines < 3; lines++)
    {
      g_autofree char *line = g_data_input_stream_read_line (in, NULL, NULL, NULL);

      g_assert_nonnull (line);
      for (int i = 0; i < 3; i++)
        if (g_str_has_prefix (line, tags[i]))
          pids[i] = atoi (line + strlen (tags[i]));
    }
  for (int i = 0; i < 3; i++)
    g_assert_cmpint (pids[i], >, 0);
  return run;
}

/* Whether the command, its child and the orphan are all gone; any left
 * is killed here (the test fails, leaving nothing behind). */
static gboolean
forking_all_gone (GPid pids[3])
{
  gboolean gone = TRUE;

  for (int i = 0; i < 3; i++)
    if (!process_gone (pids[i]))
      {
        g_test_message ("pid %d (%s) still runs", (int) pids[i], i == 0 ? "command" : i == 1 ? "child" : "orphan");
        kill (pids[i], SIGKILL);
        gone = FALSE;
      }
  return gone;
}

/* The fence reaches every process the command started, not only the
 * command: its background child and an orphan that left its session are
 * ended before the run exits 76 and gives its share back. */
static void
test_lease_fence_reaches_descendants (Fixture *f, gconstpointer data)
{
  const double lease = 4;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autofree char *moved = g_build_filename (f->tmp, "r", "hosts-moved", NULL);
  g_autoptr(GSubprocess) run = NULL;
  GPid pids[3];

  test_write_file (f->config, config);
  run = spawn_run_forking (f, pids);
  g_assert_true (g_file_test (hosts, G_FILE_TEST_IS_DIR));
  g_assert_cmpint (g_rename (hosts, moved), ==, 0);
  test_write_file (hosts, "not a folder");
  g_assert_cmpint (test_exit_code (run), ==, 76);
  g_assert_true (forking_all_gone (pids));
}

/* On a lease pool, every process the command started dies with the
 * wrapper, not only the command. */
static void
test_lease_descendants_die_with_wrapper (Fixture *f, gconstpointer data)
{
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autoptr(GSubprocess) run = NULL;
  gint64 deadline;
  GPid pids[3];

  test_write_file (f->config, config);
  run = spawn_run_forking (f, pids);
  g_subprocess_force_exit (run);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGKILL);
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (!(process_gone (pids[0]) && process_gone (pids[1]) && process_gone (pids[2])) &&
         g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  g_assert_true (forking_all_gone (pids));
}

/* On a lease pool the command dies with its wrapper: a command whose
 * wrapper was killed renews nothing. Elsewhere it outlives it, its lock
 * file naming it. */
static void
test_lease_command_dies_with_wrapper (Fixture *f, gconstpointer data)
{
  gboolean lease = GPOINTER_TO_INT (data);
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\n%s",
                                             f->tmp, lease ? "host-lease=30\n" : "");
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = NULL;
  gint64 deadline;
  GPid command;

  test_write_file (f->config, config);
  run = spawn_run_holding (f, G_SUBPROCESS_FLAGS_NONE, "echo $$; exec sleep 600", &command);
  g_subprocess_force_exit (run);
  g_assert_cmpint (test_exit_code (run), ==, 128 + SIGKILL);
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  if (lease)
    {
      while (!process_gone (command))
        {
          g_assert_cmpint (g_get_monotonic_time (), <, deadline);
          g_usleep (10 * 1000);
        }
    }
  else
    {
      g_assert_false (process_gone (command));
      kill (command, SIGKILL);
    }
}

/* With no configuration, the built-in pools are per host: two hosts that
 * share a home (one XDG_STATE_HOME) do not share a `cpu` pool sized for
 * one of them. */
static char *
default_cpu_path (Fixture *f, const char *host)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  g_autofree char *state = g_build_filename (f->tmp, "home-state", NULL);
  g_autofree char *cfg = g_build_filename (f->tmp, "no-config", NULL);
  JsonArray *resources;

  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_HOME", cfg, TRUE);
  g_subprocess_launcher_setenv (launcher, "XDG_CONFIG_DIRS", cfg, TRUE);
  g_subprocess_launcher_unsetenv (launcher, "TESSERA_CONFIG");
  if (host == NULL)
    process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "status", "--json", NULL);
  else
    process = spawn_default_on_other_host (f, launcher, host, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  resources = json_object_get_array_member (json_node_get_object (root), "resources");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (resources, 0), "name"), ==, "cpu");
  return g_strdup (json_object_get_string_member (json_array_get_object_element (resources, 0), "path"));
}

static void
test_default_pools_per_host (Fixture *f, gconstpointer data)
{
  g_autofree char *here = default_cpu_path (f, NULL);
  g_autofree char *there = default_cpu_path (f, "host-b");
  g_autofree char *again = default_cpu_path (f, NULL);

  g_assert_cmpstr (here, ==, again);
  g_assert_cmpstr (here, !=, there);
}

/* ---------------------------------------------------------------------- */
/* hidepid: /proc hides other users' processes */

/* Runs the tool as user @uid with umask 0 and its own state folder;
 * @hidepid: in a mount namespace whose /proc is mounted hidepid=2. */
static GSubprocess *
spawn_tool_as (Fixture *f, int uid, gboolean hidepid, GSubprocessFlags flags, GError **error, ...)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (flags);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *state = g_strdup_printf ("%s/state-%d", f->tmp, uid);
  GString *script = g_string_new (NULL);
  va_list ap;

  if (hidepid)
    g_string_append (script, "mount -t proc -o hidepid=2 proc /proc && ");
  g_string_append_printf (script, "exec setpriv --reuid=%d --regid=%d --clear-groups sh -c 'umask 0; exec \"$0\" \"$@\"' ",
                          uid, uid);
  g_string_append_printf (script, "'%s' --config '%s'", g_getenv ("TESSERA_TOOL"), f->config);
  va_start (ap, error);
  for (const char *arg = va_arg (ap, const char *); arg != NULL; arg = va_arg (ap, const char *))
    g_string_append_printf (script, " '%s'", arg);
  va_end (ap);

  if (hidepid)
    {
      g_ptr_array_add (argv, g_strdup ("unshare"));
      g_ptr_array_add (argv, g_strdup ("--mount"));
      g_ptr_array_add (argv, g_strdup ("--propagation"));
      g_ptr_array_add (argv, g_strdup ("private"));
    }
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_string_free (script, FALSE));
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", state, TRUE);
  return g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, error);
}

/* A holder of another user, hidden from a judge by hidepid=2, is alive. */
static void
test_hidepid_holder_counts (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GDir) dir = NULL;
  const char *name;

  g_assert_cmpint (g_chmod (f->tmp, 0777), ==, 0);
  g_assert_cmpint (g_chmod (f->config, 0644), ==, 0);
  holder = spawn_tool_as (f, 64001, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                          "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_cmpstr (ready, ==, "ready");
  dir = g_dir_open (jobs, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      lock_file = g_build_filename (jobs, name, NULL);
  g_assert_nonnull (lock_file);

  other = spawn_tool_as (f, 64002, TRUE, G_SUBPROCESS_FLAGS_NONE, &error,
                         "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (other), ==, 75);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
}

/* ---------------------------------------------------------------------- */
/* Fencing tokens across hosts (issue 40, point 3) */

/* The fencing token that a `tessera run --need r=1` on the simulated
 * @host (NULL: this one) gives its command, from TESSERA_FENCING_TOKEN
 * ("r:TOKEN"). */
static gint64
fencing_token_on (Fixture *f, const char *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *out = NULL;
  const char *script = "printf '%s\\n' \"${TESSERA_FENCING_TOKEN-unset}\"";

  if (host != NULL)
    process = spawn_on_other_host (f, host, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                   "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
  else
    process = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  g_strstrip (out);
  g_test_message ("on %s: TESSERA_FENCING_TOKEN=%s", host != NULL ? host : "this host", out);
  if (!g_str_has_prefix (out, "r:"))
    g_error ("the command on %s was given TESSERA_FENCING_TOKEN “%s”, not r:TOKEN",
             host != NULL ? host : "this host", out);
  return g_ascii_strtoll (out + 2, NULL, 10);
}

/* Runs on three hosts (this one and two simulated ones, each with its
 * own host id and /var/tmp) take the pool's unit in turn: each grant's
 * token is larger than every earlier one's, whichever host granted it. */
static void
test_fencing_tokens_across_hosts (Fixture *f, gconstpointer data)
{
  const char *hosts[] = { "host-b", NULL, "host-c", "host-b", "host-c", NULL };
  gint64 last = 0;

  for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
    {
      gint64 token = fencing_token_on (f, hosts[i]);

      g_assert_cmpint (token, >, last);
      last = token;
    }
}

/* ---------------------------------------------------------------------- */
/* The host id: neither planted by another user nor carried by a copy */

/* The host id that a `tessera run` on the simulated @host records in its
 * lock file (the process spec's "host_id"). */
static char *
host_id_on (Fixture *f, const char *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *script = g_strdup_printf ("cat '%s'/r/jobs/*.json", f->tmp);
  g_autofree char *out = NULL;
  JsonObject *spec;

  process = spawn_on_other_host (f, host, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                 "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  root = json_from_string (out, &error);
  g_assert_no_error (error);
  spec = json_object_get_object_member (json_node_get_object (root), "process");
  g_assert_nonnull (spec);
  g_assert_cmpuint (strlen (json_object_get_string_member (spec, "host_id")), ==, 32);
  return g_strdup (json_object_get_string_member (spec, "host_id"));
}

/* The files Tessera keeps the host id in, in a simulated host's /var/tmp. */
static GPtrArray *
host_id_files (Fixture *f, const char *host)
{
  g_autofree char *var_tmp = g_build_filename (f->tmp, host, "var-tmp", NULL);
  g_autoptr(GDir) dir = g_dir_open (var_tmp, 0, NULL);
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "tessera-host"))
      g_ptr_array_add (files, g_build_filename (var_tmp, name, NULL));
  g_assert_cmpuint (files->len, >, 0);
  return files;
}

/* Another user of the host (/var/tmp is everyone's) rewrites the host id
 * files to name an id of their choice, in place (same inode, the rest of
 * the content as it was): no process of ours takes that id. */
static void
test_host_id_planted_ignored (Fixture *f, gconstpointer data)
{
  const char *chosen = "0123456789abcdef0123456789abcdef";
  g_autofree char *first = host_id_on (f, "planted");
  g_autoptr(GPtrArray) files = host_id_files (f, "planted");
  g_autofree char *second = NULL;

  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autofree char *text = NULL;
      g_autofree char *planted = NULL;
      int fd;

      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      planted = test_substitute (text, first, chosen);
      fd = open (path, O_WRONLY | O_TRUNC | O_NOFOLLOW);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (write (fd, planted, strlen (planted)), ==, (gssize) strlen (planted));
      close (fd);
      g_assert_cmpint (chown (path, 4242, 4242), ==, 0);
      g_assert_cmpint (chmod (path, 0644), ==, 0);
    }
  second = host_id_on (f, "planted");
  g_test_message ("first id %s, after the planting %s", first, second);
  g_assert_cmpstr (second, !=, chosen);
}

/* The host id files of one host copied into another's /var/tmp (a cloned
 * image), with another machine id: the clone draws its own id, and keeps
 * it. */
static void
test_host_id_copied_to_a_clone (Fixture *f, gconstpointer data)
{
  g_autofree char *original = host_id_on (f, "original");
  g_autoptr(GPtrArray) files = host_id_files (f, "original");
  g_autofree char *clone_var_tmp = g_build_filename (f->tmp, "clone", "var-tmp", NULL);
  g_autofree char *clone = NULL;
  g_autofree char *again = NULL;

  g_assert_cmpint (g_mkdir_with_parents (clone_var_tmp, 0777), ==, 0);
  for (guint i = 0; i < files->len; i++)
    {
      const char *path = g_ptr_array_index (files, i);
      g_autofree char *base = g_path_get_basename (path);
      g_autofree char *copy = g_build_filename (clone_var_tmp, base, NULL);
      g_autofree char *text = NULL;
      gsize length;

      g_assert_true (g_file_get_contents (path, &text, &length, NULL));
      g_assert_true (g_file_set_contents_full (copy, text, (gssize) length, G_FILE_SET_CONTENTS_NONE, 0644, NULL));
    }
  clone = host_id_on (f, "clone");
  again = host_id_on (f, "clone");
  g_test_message ("original %s, clone %s", original, clone);
  g_assert_cmpstr (clone, !=, original);
  g_assert_cmpstr (again, ==, clone);
}

/* ---------------------------------------------------------------------- */
/* clean --host: a retired host leaves nothing behind */

/* Writes hosts/@id@suffix in the pool with @content. */
static void
write_in_hosts (Fixture *f, const char *id, const char *suffix, const char *content)
{
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autofree char *name = g_strconcat (id, suffix, NULL);
  g_autofree char *path = g_build_filename (hosts, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (hosts, 0777), ==, 0);
  test_write_file (path, content);
}

static gboolean
in_hosts (Fixture *f, const char *id, const char *suffix)
{
  g_autofree char *name = g_strconcat (id, suffix, NULL);
  g_autofree char *path = g_build_filename (f->tmp, "r", "hosts", name, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* A host's heartbeat as its renewer writes it. */
static char *
heartbeat_of (const char *id, const char *host, const char *boot_id, const char *renewal)
{
  return g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"%s\", \"boot_id\": \"%s\", "
                          "\"lease\": 30, \"renewal\": \"%s\"}", id, id, host, boot_id, renewal);
}

/* `tessera hosts` lists each pool's hosts, as sinfo lists nodes: host
 * name and id, the users that hold there, whether its locks cross, its
 * last heartbeat and its Tessera version and protocol; a mistyped
 * `clean --host` names the hosts it knows. */
static void
test_hosts_listing (Fixture *f, gconstpointer data)
{
  const char *other = "0123456789abcdef0123456789abcdef";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"other-node\", "
                                           "\"boot_id\": \"00000000-0000-4000-8000-000000000000\", \"lease\": 30, "
                                           "\"locks_cross\": true, \"version\": \"0.0.9\", \"protocol\": 2, "
                                           "\"renewal\": \"a\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) hosts = NULL;
  g_autoptr(GSubprocess) text = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  JsonArray *list;
  gboolean seen_other = FALSE, seen_here = FALSE;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, other, ".0.lease", beat);
  write_in_hosts (f, other, ".0.host", beat);

  hosts = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", "--json", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (hosts, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (hosts), ==, 0);
  root = json_from_string (out, &error);
  g_assert_no_error (error);
  list = json_object_get_array_member (json_array_get_object_element (
           json_object_get_array_member (json_node_get_object (root), "resources"), 0), "hosts");
  g_assert_nonnull (list);
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *h = json_array_get_object_element (list, i);
      const char *id = json_object_get_string_member (h, "host_id");
      JsonArray *users = json_object_get_array_member (h, "uids");

      g_assert_nonnull (users);
      g_assert_cmpint (json_array_get_int_element (users, 0), ==, 0);
      g_assert_true (json_object_get_boolean_member (h, "locks_cross"));
      g_assert_true (json_object_get_double_member (h, "heartbeat_age") >= 0);
      if (g_str_equal (id, other))
        {
          seen_other = TRUE;
          g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, "other-node");
          g_assert_cmpstr (json_object_get_string_member (h, "version"), ==, "0.0.9");
          g_assert_cmpint (json_object_get_int_member (h, "protocol"), ==, 2);
        }
      else
        {
          seen_here = TRUE;
          g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, g_get_host_name ());
          g_assert_nonnull (json_object_get_string_member (h, "version"));
          g_assert_cmpint (json_object_get_int_member (h, "protocol"), >, 0);
        }
    }
  g_assert_true (seen_other);
  g_assert_true (seen_here);

  g_clear_pointer (&out, g_free);
  text = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (text, NULL, NULL, &out, NULL, &error));
  g_assert_cmpint (test_exit_code (text), ==, 0);
  g_assert_nonnull (strstr (out, "other-node"));
  g_assert_nonnull (strstr (out, "0.0.9"));

  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, "clean", "--host", "other-nod", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (clean, NULL, NULL, NULL, &err, &error));
  g_assert_cmpint (test_exit_code (clean), ==, 64);
  g_assert_nonnull (strstr (err, "other-node"));
}

/* What @process wrote, to its end (its exit status must be 0). */
static char *
output_of (GSubprocess *process)
{
  g_autoptr(GError) error = NULL;
  char *out = NULL;

  g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (process), ==, 0);
  return out;
}

/* `tessera hosts` shows each host's build beside its version, as
 * `tessera --version` says it: this host's mark records it; a mark of an
 * older Tessera, without one, still reads (build null, "?"). */
static void
test_hosts_build (Fixture *f, gconstpointer data)
{
  const char *old = "0123456789abcdef0123456789abcdef";
  const char *other = "fedcba9876543210fedcba9876543210";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *old_beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"old-node\", "
                                               "\"boot_id\": \"00000000-0000-4000-8000-000000000000\", \"lease\": 30, "
                                               "\"locks_cross\": true, \"version\": \"0.0.9\", \"protocol\": 2, "
                                               "\"renewal\": \"a\"}", old, old);
  g_autofree char *other_beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": "
                                                 "\"new-node\", \"boot_id\": \"00000000-0000-4000-8000-000000000001\", "
                                                 "\"lease\": 30, \"locks_cross\": true, \"version\": \"0.1.0\", "
                                                 "\"build\": \"v0.1.0-7-gfeedbee\", \"protocol\": 2, "
                                                 "\"renewal\": \"b\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) version = NULL;
  g_autoptr(GSubprocess) hosts = NULL;
  g_autoptr(GSubprocess) text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *version_out = NULL, *out = NULL, *text_out = NULL, *build = NULL, *build_text = NULL;
  const char *at;
  JsonArray *list;
  guint seen = 0;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, old, ".0.host", old_beat);
  write_in_hosts (f, other, ".0.host", other_beat);

  /* "tessera 0.1.0 (pool protocol 2, build BUILD)" */
  version = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "--version", NULL);
  g_assert_no_error (error);
  version_out = output_of (version);
  if ((at = strstr (version_out, "build ")) == NULL)
    g_error ("no build in “%s”", version_out);
  build = g_strndup (at + strlen ("build "), strcspn (at + strlen ("build "), ")\n"));
  g_test_message ("this build: %s", build);

  hosts = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", "--json", NULL);
  g_assert_no_error (error);
  out = output_of (hosts);
  root = json_from_string (out, &error);
  g_assert_no_error (error);
  list = json_object_get_array_member (json_array_get_object_element (
           json_object_get_array_member (json_node_get_object (root), "resources"), 0), "hosts");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *h = json_array_get_object_element (list, i);
      const char *id = json_object_get_string_member (h, "host_id");

      g_assert_true (json_object_has_member (h, "build"));
      if (g_str_equal (id, old))
        g_assert_true (json_object_get_null_member (h, "build"));
      else if (g_str_equal (id, other))
        g_assert_cmpstr (json_object_get_string_member (h, "build"), ==, "v0.1.0-7-gfeedbee");
      else
        g_assert_cmpstr (json_object_get_string_member (h, "build"), ==, build);
      seen++;
    }
  g_assert_cmpuint (seen, ==, 3);

  text = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", NULL);
  g_assert_no_error (error);
  text_out = output_of (text);
  build_text = g_strdup_printf ("build %s", build);
  g_assert_nonnull (strstr (text_out, build_text));
  g_assert_nonnull (strstr (text_out, "build v0.1.0-7-gfeedbee"));
  g_assert_nonnull (strstr (text_out, "tessera 0.0.9 (build ?,"));
}

/* A host name may hold ", ": `clean --host` of a part of it is no known
 * host, and the hint names the hosts whole. */
static void
test_clean_host_comma_name (Fixture *f, gconstpointer data)
{
  const char *other = "0123456789abcdef0123456789abcdef";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": "
                                           "\"node-1, node-2\", \"boot_id\": \"00000000-0000-4000-8000-000000000000\", "
                                           "\"lease\": 30, \"locks_cross\": true, \"renewal\": \"a\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, other, ".0.host", beat);

  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, "clean", "--host", "node-1", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (clean, NULL, NULL, NULL, &err, &error));
  g_test_message ("%s", err);
  g_assert_cmpint (test_exit_code (clean), ==, 64);
  g_assert_nonnull (strstr (err, "no holder and no mark of a host node-1 in these pools"));
  g_assert_nonnull (strstr (err, "node-1, node-2"));
}

/* `tessera clean --host NAME --yes` removes the retired host's holdings,
 * its heartbeats and marks (every user's, and those of an older Tessera),
 * its job folders in the pool's runs/ and the temporary files a renewer
 * killed half-way left;
 * another host's heartbeat and its fresh temporary file stay. */
static void
test_clean_host_removes_heartbeat (Fixture *f, gconstpointer data)
{
  const char *retired = "0123456789abcdef0123456789abcdef";
  const char *live = "fedcba9876543210fedcba9876543210";
  const char *retired_boot = "00000000-0000-4000-8000-000000000000";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "gone@id.json", NULL);
  g_autofree char *job_uri = job_uri_for (f, "gone");
  g_autofree char *holder = NULL;
  g_autofree char *retired_beat = heartbeat_of (retired, "retired-node", retired_boot, "a");
  g_autofree char *live_beat = heartbeat_of (live, "live-node", "00000000-0000-4000-8000-000000000001", "b");
  g_autoptr(GSubprocess) status = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;

  test_write_file (f->config, config);
  status = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "status", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (status), ==, 0);

  holder = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"process\": "
                            "{\"type\": \"local\", \"pid\": 4242, \"host\": \"retired-node\", \"host_id\": \"%s\", "
                            "\"machine_id\": \"%s\", \"boot_id\": \"%s\"}}",
                            job_uri, retired, retired, retired_boot);
  test_write_file (lock_file, holder);
  write_in_hosts (f, retired, ".lease", retired_beat);
  write_in_hosts (f, retired, ".lease.Ab12Cd", "{\"host_id\": \"");
  write_in_hosts (f, live, ".lease", live_beat);
  write_in_hosts (f, live, ".lease.Zz99Yy", "{");
  /* The marks of a lock-less mount's hosts, which name their host too. */
  write_in_hosts (f, retired, ".host", "{\"host\": \"retired-node\", \"lease\": 0}");
  write_in_hosts (f, live, ".host", "{\"host\": \"live-node\", \"lease\": 0}");
  /* Each user's, as Tessera writes them now (HOSTID.UID.lease and .host). */
  write_in_hosts (f, retired, ".0.lease", retired_beat);
  write_in_hosts (f, retired, ".1000.lease", retired_beat);
  write_in_hosts (f, retired, ".1000.lease.Ef34Gh", "{");
  write_in_hosts (f, retired, ".0.host", "{\"host\": \"retired-node\", \"lease\": 0, \"locks_cross\": true}");
  write_in_hosts (f, live, ".0.lease", live_beat);
  write_in_hosts (f, live, ".0.lease.Yy88Xx", "{");
  write_in_hosts (f, live, ".0.host", "{\"host\": \"live-node\", \"lease\": 0, \"locks_cross\": true}");

  /* Job folders `tessera run` made there (runs/UID/HOST-PID-RANDOM), one
   * of each host, its job lock held for ever by a vanished client. */
  {
    const char *hosts[] = { "retired-node", "live-node" };

    for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
      {
        g_autofree char *job = g_strdup_printf ("%s/r/runs/%u/%s-4242-0000abcd", f->tmp, (guint) getuid (), hosts[i]);
        g_autofree char *file = g_build_filename (job, "task.lock", NULL);

        g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
        test_write_file (file, "");
        g_free (file);
        file = g_build_filename (job, "locks.json", NULL);
        test_write_file (file, "{\"dynamic_locks\": []}");
      }
  }
  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "clean", "--host", "retired-node", "--yes",
                      NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (clean), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  {
    g_autofree char *retired_job = g_strdup_printf ("%s/r/runs/%u/retired-node-4242-0000abcd", f->tmp,
                                                    (guint) getuid ());
    g_autofree char *live_job = g_strdup_printf ("%s/r/runs/%u/live-node-4242-0000abcd", f->tmp, (guint) getuid ());

    g_assert_false (g_file_test (retired_job, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (live_job, G_FILE_TEST_IS_DIR));
  }
  g_assert_false (in_hosts (f, retired, ".lease"));
  g_assert_false (in_hosts (f, retired, ".lease.Ab12Cd"));
  g_assert_true (in_hosts (f, live, ".lease"));
  g_assert_true (in_hosts (f, live, ".lease.Zz99Yy"));
  g_assert_false (in_hosts (f, retired, ".host"));
  g_assert_true (in_hosts (f, live, ".host"));
  g_assert_false (in_hosts (f, retired, ".0.lease"));
  g_assert_false (in_hosts (f, retired, ".1000.lease"));
  g_assert_false (in_hosts (f, retired, ".1000.lease.Ef34Gh"));
  g_assert_false (in_hosts (f, retired, ".0.host"));
  g_assert_true (in_hosts (f, live, ".0.lease"));
  g_assert_true (in_hosts (f, live, ".0.lease.Yy88Xx"));
  g_assert_true (in_hosts (f, live, ".0.host"));
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
/* Verdicts between two users of a group: the holder as one user on
 * another host or in a container, the judge here as another, as on a
 * cluster */

/* The pid here of the process whose pid is @local in the pid namespace
 * of @init (its NSpid's last field); 0 when there is none. */
static GPid
pid_here (GPid init, int local)
{
  g_autofree char *ns_path = g_strdup_printf ("/proc/%d/ns/pid", (int) init);
  g_autofree char *ns = g_file_read_link (ns_path, NULL);
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;

  g_assert_nonnull (ns);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *status_path = g_strdup_printf ("/proc/%s/status", name);
      g_autofree char *link_path = g_strdup_printf ("/proc/%s/ns/pid", name);
      g_autofree char *status = NULL;
      g_autofree char *link = NULL;
      const char *line, *last;

      if (!g_ascii_isdigit (*name) || !g_file_get_contents (status_path, &status, NULL, NULL) ||
          (line = strstr (status, "\nNSpid:")) == NULL)
        continue;
      line += strlen ("\nNSpid:");
      *strchrnul (line, '\n') = '\0';
      last = strrchr (line, '\t') != NULL ? strrchr (line, '\t') + 1 : line;
      if (atoi (last) == local && (link = g_file_read_link (link_path, NULL)) != NULL && g_str_equal (link, ns))
        return atoi (name);
    }
  return 0;
}

/* Starts `tessera run --need r=1` at @at, whose command says "ready FD
 * PID" (its job lock's descriptor, its pid where it runs) and holds until
 * its input closes; returns once it holds. @fd and @pid (optional): that
 * descriptor, and the command's pid here. */
static GSubprocess *
start_holder_at (Fixture *f, const Place *at, char **fd, GPid *pid)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_auto(GStrv) words = NULL;
  GSubprocess *holder = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                                  "run", "--need", "r=1", "--", "sh", "-c",
                                  "echo \"ready $TESSERA_JOB_LOCK_FD $$\"; read x || true", NULL);

  g_assert_no_error (error);
  ready = read_line (holder);
  g_assert_nonnull (ready);
  words = g_strsplit (ready, " ", -1);
  g_assert_cmpuint (g_strv_length (words), ==, 3);
  g_assert_cmpstr (words[0], ==, "ready");
  if (fd != NULL)
    *fd = g_strdup (words[1]);
  if (pid != NULL)
    {
      *pid = at->host != NULL || at->container ? pid_here (namespace_init (holder), atoi (words[2])) : atoi (words[2]);
      g_assert_cmpint (*pid, >, 0);
    }
  return holder;
}

/* `tessera run --no-wait --need r=1 -- true` at @at: its exit status
 * (75: unavailable). */
static int
try_at (Fixture *f, const Place *at)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                                         "run", "--no-wait", "--need", "r=1", "--", "true", NULL);

  g_assert_no_error (error);
  return test_exit_code (run);
}

/* Starts `tessera run --need r=1 -- echo through` at @at (a waiter). */
static GSubprocess *
start_waiter_at (Fixture *f, const Place *at)
{
  g_autoptr(GError) error = NULL;
  GSubprocess *waiter = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                  "run", "--need", "r=1", "--", "echo", "through", NULL);

  g_assert_no_error (error);
  return waiter;
}

/* Kills the whole namespace @holder runs in (SIGKILL to its init); returns
 * how long after it @waiter got through (it must). */
static double
kill_and_wait_through (GSubprocess *holder, GSubprocess *waiter)
{
  g_autofree char *through = NULL;
  gint64 killed;
  double reclaim;

  g_assert_cmpint (kill (namespace_init (holder), SIGKILL), ==, 0);
  killed = g_get_monotonic_time ();
  g_assert_cmpint (test_exit_code (holder), !=, 0);
  through = read_line (waiter);
  reclaim = (double) (g_get_monotonic_time () - killed) / G_USEC_PER_SEC;
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  return reclaim;
}

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
      g_autofree char *out = NULL;
      g_autofree char *text = g_strdup_printf ("%s\n", chosen);
      const char *id;

      /* Planted as the other user would: the id and, for a reader that
       * checks them, a machine id and a device and inode that match. */
      test_write_file (old_planted, text);
      g_assert_cmpint (chown (old_planted, 4242, 4242), ==, 0);
      process = spawn_at (f, &planter, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                          "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_communicate_utf8 (process, NULL, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpint (test_exit_code (process), ==, 0);
      root = json_from_string (out, &error);
      g_assert_no_error (error);
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
  g_autofree char *reached = g_build_filename (pause_dir, "job-hold.reached", NULL);
  g_autofree char *go = g_build_filename (pause_dir, "job-hold.go", NULL);
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
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  const char *name;

  g_assert_cmpint (g_mkdir (root, 0775), ==, 0);
  g_assert_cmpint (chown (root, 0, gp->users->gid), ==, 0);
  g_assert_cmpint (chmod (root, 02775), ==, 0);
  g_assert_cmpint (g_mkdir (pause_dir, 0777), ==, 0);
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  g_assert_cmpint (chmod (other_state, 0755), ==, 0);
  /* The decoy takes whatever is written through the link. */
  g_assert_cmpint (g_mkdir (decoy, 0777), ==, 0);
  g_assert_cmpint (chmod (decoy, 0777), ==, 0);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_JOB_FOLDERS", root, TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_AT", "job-hold", TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_DIR", pause_dir, TRUE);
  /* The command shows what reached the decoy (the run cleans up after). */
  run = spawn_at_with (f, &runner, launcher, &error, "run", "--need", "r=1", "--", "sh", "-c",
                       "ls -A \"$1\"; echo ran", "sh", decoy, NULL);
  g_assert_no_error (error);
  while (!g_file_test (reached, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (5 * 1000);
    }
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
  test_write_file (go, "");

  g_assert_true (g_subprocess_communicate_utf8 (run, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_test_message ("tessera run said: %s%s", out, err);
  g_assert_cmpuint (test_count_entries (decoy), ==, 0);
  g_assert_cmpstr (out, ==, "");
  g_assert_cmpint (test_exit_code (run), ==, 74);
  g_assert_nonnull (strstr (err, "moved"));
  test_group_pool_free (gp);
}

/* ---------------------------------------------------------------------- */
/* Temporary files in hosts/: a renewer killed between writing its
 * heartbeat's temporary file (HOSTID.lease.XXXXXX) and renaming it leaves
 * it there; they must not pile up */

/* Now on the clock of the file server of tmp/ (the pool's): the time
 * stamp of a file written there now, in seconds. */
static double
server_now (Fixture *f)
{
  g_autofree char *stamp = g_build_filename (f->tmp, "stamp", NULL);
  struct stat st;

  test_write_file (stamp, "now");
  g_assert_cmpint (g_stat (stamp, &st), ==, 0);
  return (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* Starts `tessera run --need r=1 -- true` on simulated host @host, holds
 * it at pause point "heartbeat-renaming" (its first renewal, before its
 * lock file), kills it there and returns the temporary file it left in
 * hosts/. */
static char *
kill_renewer_half_way (Fixture *f, const char *host)
{
  const Place there = { .host = host };
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autofree char *reached = g_build_filename (pause_dir, "heartbeat-renaming.reached", NULL);
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) renewer = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  const char *name;
  char *temporary = NULL;

  g_mkdir_with_parents (pause_dir, 0777);
  g_unlink (reached);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_AT", "heartbeat-renaming", TRUE);
  g_subprocess_launcher_setenv (launcher, "TESSERA_PAUSE_DIR", pause_dir, TRUE);
  renewer = spawn_at_with (f, &there, launcher, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  while (!g_file_test (reached, G_FILE_TEST_EXISTS))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (5 * 1000);
    }
  dir = g_dir_open (hosts, 0, &error);
  while (dir != NULL && temporary == NULL && (name = g_dir_read_name (dir)) != NULL)
    if (strstr (name, ".lease.") != NULL)
      temporary = g_build_filename (hosts, name, NULL);
  /* Killed first, so that a failure below leaves nothing paused. */
  g_assert_cmpint (kill (namespace_init (renewer), SIGKILL), ==, 0);
  g_assert_cmpint (test_exit_code (renewer), !=, 0);
  g_assert_no_error (error);
  g_assert_nonnull (temporary);
  g_assert_true (g_file_test (temporary, G_FILE_TEST_EXISTS));
  return temporary;
}

/* The time stamp of @path (the file server's clock), in seconds. */
static double
file_time (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* The host lives on (another of its runs holds and renews): its renewer
 * removes the temporary file once it has seen it unchanged for the lease,
 * not before. */
static void
test_lease_killed_renewer_temporary_removed (Fixture *f, gconstpointer data)
{
  /* Long enough that a loaded machine's late renewal does not fence
   * the holder, whose renewer is the one that must do the removing (a
   * renewer may stall for half the lease). */
  const double lease = 6;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=2\nhost-lease=%g\n",
                                             f->tmp, lease);
  const Place there = { .host = "host-b" };
  g_autoptr(GSubprocess) holder = NULL;
  g_autofree char *temporary = NULL;
  gint64 deadline;
  double written;

  test_write_file (f->config, config);
  holder = start_holder_at (f, &there, NULL, NULL);
  temporary = kill_renewer_half_way (f, "host-b");
  written = file_time (temporary);
  deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (g_file_test (temporary, G_FILE_TEST_EXISTS))
    {
      if (g_subprocess_get_identifier (holder) == NULL || g_get_monotonic_time () >= deadline)
        g_error ("the temporary file is still there %.2f s after it was written (holder %s)",
                 server_now (f) - written, g_subprocess_get_identifier (holder) ? "running" : "ended");
      g_usleep (20 * 1000);
    }
  g_test_message ("the killed renewer's temporary file went %.2f s after it was written (lease %g s)",
                  server_now (f) - written, lease);
  g_assert_cmpfloat (server_now (f) - written, >=, lease);
  /* Its host still holds: the holder was never taken for dead. */
  g_assert_cmpint (try_at (f, &there), ==, 0);
  g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, NULL);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
}

/* No renewer is left to remove it (every run of its host was killed):
 * `tessera clean` removes a temporary file of hosts/ older than the lease
 * on the file server's clock, whatever its host, and leaves a younger
 * one. */
static void
test_clean_removes_stale_host_temporaries (Fixture *f, gconstpointer data)
{
  const double lease = 4;
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=%g\n",
                                             f->tmp, lease);
  const Place there = { .host = "host-b" };
  g_autofree char *temporary = NULL;
  gint64 deadline;
  double written, after;

  test_write_file (f->config, config);
  g_assert_cmpint (try_at (f, &there), ==, 0);   /* makes the pool */
  temporary = kill_renewer_half_way (f, "host-b");
  written = file_time (temporary);
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  for (;;)
    {
      g_autoptr(GSubprocess) clean = NULL;
      g_autoptr(GError) error = NULL;

      clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "clean", NULL);
      g_assert_no_error (error);
      g_assert_cmpint (test_exit_code (clean), ==, 0);
      after = server_now (f);
      if (!g_file_test (temporary, G_FILE_TEST_EXISTS))
        break;
      /* Kept while young; gone within the deadline once old. */
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_test_message ("kept at %.2f s", after - written);
      g_usleep (200 * 1000);
    }
  /* The clean that removed it ended at @after: it was old by then. */
  g_test_message ("clean removed the temporary file at most %.2f s after it was written (lease %g s)",
                  after - written, lease);
  g_assert_cmpfloat (after - written, >=, lease);
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

/* The names of the lock files in tmp/real/r/jobs. */
static GPtrArray *
mixed_mounts_lock_files (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "real", "r", "jobs", NULL);
  g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      g_ptr_array_add (names, g_build_filename (jobs, name, NULL));
  return names;
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

  g_assert_true (g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
  g_assert_cmpint (umount2 (view, MNT_DETACH), ==, 0);
}

/* A host alone on its lock-less view keeps using the pool: its own mark
 * refuses nothing. */
static void
test_mixed_mounts_view_alone_works (Fixture *f, gconstpointer data)
{
  const Place b = { .host = "host-b", .view = TRUE };
  g_autofree char *view = mixed_mounts_pool (f);
  g_autofree char *err = NULL;

  g_assert_cmpint (run_no_wait_at (f, &b, &err), ==, 0);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_no_wait_at (f, &b, &err), ==, 0);
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

  g_assert_true (g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
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
  g_autoptr(GError) error = NULL;
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
  g_assert_true (g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
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
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = start_holder_at (f, &bound, NULL, NULL);

  g_assert_cmpint (run_no_wait_at (f, &here, &err), ==, 75);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_no_wait_at (f, &bound, &err), ==, 75);
  g_clear_pointer (&err, g_free);
  g_assert_true (g_output_stream_close (g_subprocess_get_stdin_pipe (holder), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (holder), ==, 0);
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
  /* Before any thread: the FUSE views are this process's own. */
  test_private_mounts ();
  g_test_init (&argc, &argv, NULL);
#define ADD(path, data, fn) g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down)
  ADD ("/hosts/fail-closed/float-count", NULL, test_float_count_counts);
  ADD ("/hosts/queue/waiting-entry-refreshed", "often", test_waiting_entry_refreshed);
  ADD ("/hosts/queue/waiting-entry-refreshed-quiet", "quiet", test_waiting_entry_refreshed);
  ADD ("/hosts/fail-closed/unreadable-information-holds-all", NULL, test_unreadable_information_counts_whole);
  ADD ("/hosts/fail-closed/slurm-and-ssh-lock-files-count", NULL, test_slurm_lock_file_counts);
  ADD ("/hosts/fail-closed/slurm-pid-file-is-no-orphan", NULL, test_slurm_pid_file_no_orphan);
  ADD ("/hosts/identity/spec-records-identity", NULL, test_spec_records_identity);
  ADD ("/hosts/identity/no-host-written-elsewhere-counts", NULL, test_no_host_written_elsewhere_counts);
  ADD ("/hosts/identity/same-host-other-boot-is-dead", NULL, test_same_host_other_boot_dead);
  ADD ("/hosts/identity/same-name-other-machine-counts", NULL, test_same_name_other_machine_counts);
  ADD ("/hosts/identity/pid-reuse-no-start-time/lockf", "lockf", test_pid_reuse_no_start_time);
  ADD ("/hosts/identity/pid-reuse-no-start-time/flock", "flock", test_pid_reuse_no_start_time);
  ADD ("/hosts/identity/experimaestro-pid-reuse-no-start-time", NULL, test_experimaestro_pid_reuse);
  ADD ("/hosts/lockless-mount/shared-pool-refused", NULL, test_lockless_mount_shared_pool_refused);
  ADD ("/hosts/lockless-mount/run-refused", NULL, test_lockless_mount_run_refused);
  ADD ("/hosts/orphans/mtime-an-hour-behind-is-young", NULL, test_orphan_mtime_hour_behind_is_young);
  ADD ("/hosts/orphans/mtime-an-hour-ahead-ages-seen-by-the-next-process", NULL, test_orphan_mtime_hour_ahead_ages);
  ADD ("/hosts/container/holder-inside-counts", GINT_TO_POINTER (TRUE), test_container_holder_counts);
  ADD ("/hosts/container/holder-outside-counts", GINT_TO_POINTER (FALSE), test_container_holder_counts);
  ADD ("/hosts/container/own-state-folder/holder-counts", NULL, test_container_own_state_folder_counts);
  ADD ("/hosts/container/hidden-job-folder/holder-counts", NULL, test_container_hidden_job_folder_counts);
  ADD ("/hosts/job-lock/recorded-job-folder-without-lock/reclaimed", "same", test_recorded_job_folder);
  ADD ("/hosts/job-lock/recorded-job-folder-replaced/counts", "other", test_recorded_job_folder);
  ADD ("/hosts/job-lock/recorded-job-folder-unseen/counts", "none", test_recorded_job_folder);
  ADD ("/hosts/job-lock/recorded-job-folder-other-host-device/reclaimed", "other-host", test_recorded_job_folder);
  ADD ("/hosts/job-lock/recorded-job-folder-other-host-local/counts", "other-host-local", test_recorded_job_folder);
  ADD ("/hosts/job-lock/experimaestro-free-lock/reclaimed", "lock", test_experimaestro_job_folder);
  ADD ("/hosts/job-lock/experimaestro-no-lock/counts", "no-lock", test_experimaestro_job_folder);
  ADD ("/hosts/job-lock/experimaestro-no-job-folder/counts", "none", test_experimaestro_job_folder);
  ADD ("/hosts/other-host/counts-then-reclaimed-when-host-dies", NULL, test_other_host_holder_then_host_killed);
  ADD ("/hosts/lease/dead-host-reclaimed-through-lease", NULL, test_other_host_killed_lease);
  ADD ("/hosts/lease/healthy-run-outlives-its-lease", NULL, test_lease_healthy_run);
  ADD ("/hosts/lease/fence/ends-command", GINT_TO_POINTER (FALSE), test_lease_fence);
  ADD ("/hosts/lease/fence/file-server-hangs", NULL, test_lease_fence_server_hangs);
  ADD ("/hosts/lease/fence/kills-command-ignoring-sigterm", GINT_TO_POINTER (TRUE), test_lease_fence);
  ADD ("/hosts/lease/fence/reaches-descendants", NULL, test_lease_fence_reaches_descendants);
  ADD ("/hosts/lease/recorded-in-the-pool", NULL, test_lease_recorded_in_pool);
  ADD ("/hosts/lease/first-renewal-before-the-lock-file", NULL, test_lease_first_renewal_before_lock_file);
  ADD ("/hosts/lease/dead-host-reservation-dropped", NULL, test_lease_dead_host_reservation_dropped);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    ADD ("/hosts/job-lock/take-waits-out-a-probe", NULL, test_job_lock_take_waits_out_probe);
  ADD ("/hosts/lease/command-dies-with-wrapper", GINT_TO_POINTER (TRUE), test_lease_command_dies_with_wrapper);
  ADD ("/hosts/lease/descendants-die-with-wrapper", NULL, test_lease_descendants_die_with_wrapper);
  ADD ("/hosts/lease/command-outlives-wrapper-without-lease", GINT_TO_POINTER (FALSE),
       test_lease_command_dies_with_wrapper);
  ADD ("/hosts/defaults/built-in-pools-are-per-host", NULL, test_default_pools_per_host);
  ADD ("/hosts/hidepid/other-users-holder-counts", NULL, test_hidepid_holder_counts);
  ADD ("/hosts/fencing-token/successive-grants-increase-across-hosts", NULL, test_fencing_tokens_across_hosts);
  ADD ("/hosts/host-id/planted-by-another-user-ignored", NULL, test_host_id_planted_ignored);
  ADD ("/hosts/host-id/copied-to-a-clone-drawn-again", NULL, test_host_id_copied_to_a_clone);
  ADD ("/hosts/clean-host/removes-heartbeat-and-its-temporary-files", NULL, test_clean_host_removes_heartbeat);
  ADD ("/hosts/listing/hosts-and-mistyped-clean-host", NULL, test_hosts_listing);
  ADD ("/hosts/listing/build", NULL, test_hosts_build);
  ADD ("/hosts/clean-host/name-with-comma", NULL, test_clean_host_comma_name);
  ADD ("/hosts/lockless-mount/other-host-seen-without-holders", NULL, test_lockless_mount_other_host_seen_without_holders);
  ADD ("/hosts/lockless-mount/holder-of-unknown-host-refused", NULL, test_lockless_mount_unknown_host_refused);
  ADD ("/hosts/mixed-mounts/both-hosts-refuse", NULL, test_mixed_mounts_both_refuse);
  ADD ("/hosts/mixed-mounts/view-holder-not-judged-dead", NULL, test_mixed_mounts_view_holder_not_dead);
  ADD ("/hosts/mixed-mounts/view-alone-works", NULL, test_mixed_mounts_view_alone_works);
  ADD ("/hosts/same-host-views/fuse-view-and-real-folder-refuse", NULL, test_same_host_views_refuse);
  ADD ("/hosts/same-host-views/bind-mount-is-one-view", NULL, test_same_host_bind_mount_one_view);
  ADD ("/hosts/same-host-views/fuse-view-without-proc", NULL, test_same_host_views_proc_hidden);
  ADD ("/hosts/group-marks/member-removes-them", NULL, test_group_marks_member_removes);
  ADD ("/hosts/group-marks/planted-named-with-owner", NULL, test_group_marks_planted);
  ADD ("/hosts/mixed-mounts/warm-process-sees-changed-marks", NULL, test_mixed_mounts_warm_process_sees_new_marks);
  ADD ("/hosts/users/other-host-holder-counts-then-reclaimed", NULL, test_users_other_host_holder_then_host_killed);
  ADD ("/hosts/users/planted-host-id-ignored", NULL, test_users_planted_host_id_ignored);
  ADD ("/hosts/users/lease-verdict", NULL, test_users_lease_verdict);
  if (TESSERA_PAUSE_POINTS)
    {
      ADD ("/hosts/users/job-folder-swapped-for-a-link", NULL, test_users_job_folder_swapped_for_a_link);
      ADD ("/hosts/lease/killed-renewer-temporary-removed-by-its-host", NULL,
           test_lease_killed_renewer_temporary_removed);
      ADD ("/hosts/clean/removes-stale-temporaries-of-any-host", NULL, test_clean_removes_stale_host_temporaries);
    }
  ADD ("/hosts/users/container-holder-judged-outside", GINT_TO_POINTER (FALSE), test_users_container_verdict);
  ADD ("/hosts/users/container-holder-judged-in-another", GINT_TO_POINTER (TRUE), test_users_container_verdict);
  return g_test_run ();
}
