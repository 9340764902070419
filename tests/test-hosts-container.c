/* test-hosts-container.c: holders in containers (pid namespaces of
 * their own, their own state or job folders) and behind hidepid are never
 * taken for dead; a job lock that cannot be opened is no death, and a
 * recorded job folder decides which job lock is the holder's (issues 14
 * and 38).
 *
 * Containers are made with unshare(1): CI runs as root, so a test that
 * cannot get a namespace fails, it does not skip.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-counter.h"
#include "test-utils.h"
#include "test-hosts-common.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------- */
/* Containers: our host name, our kernel, their own pid namespace */

/* data: whether the holder is the one in the container (else the one
 * that looks is). */
static void
test_container_holder_counts (Fixture *f, gconstpointer data)
{
  gboolean holder_inside = GPOINTER_TO_INT (data);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) other = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autoptr(GPtrArray) files = NULL;

  holder = spawn_tool (f, holder_inside, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                       "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  test_wait_ready (holder, 120);

  for (int i = 0; i < 2; i++)
    {
      other = spawn_tool (f, !holder_inside, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                          "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
      g_assert_no_error (error);
      /* Unavailable: the holder was not taken for dead. */
      g_assert_cmpint (test_exit_code (other), ==, 75);
      g_clear_object (&other);
    }
  files = test_list_json_files (jobs);
  g_assert_cmpuint (files->len, ==, 1);

  test_let_go (holder);
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
  g_autoptr(GError) error = NULL;
  g_autofree char *path = test_only_json_file (jobs);
  g_autofree char *text = NULL;
  JsonNode *node;

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  node = json_from_string (text, &error);
  g_assert_no_error (error);
  if (path_out != NULL)
    *path_out = g_steal_pointer (&path);
  return node;
}

/* The container: its own state folder mounted over ours. Its
 * `tessera run` keeps its job folder in the pool's runs/, where a judge
 * outside sees its job lock held; its spec records that folder. */
static void
test_container_own_state_folder_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *own = g_build_filename (f->tmp, "own-state", NULL);
  g_autofree char *setup = NULL;
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
  test_wait_ready (holder, 120);

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

  test_let_go (holder);
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
  test_wait_ready (holder, 120);
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
  h = json_array_get_object_element (json_object_get_array_member (test_status_first_resource (described), "holders"),
                                     0);
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
  path = test_write_lock_file (f->tmp, f->jobs, "recorded", "{\"count\": 1}", spec, TEST_JOB_FOLDER_EMPTY);
  if (g_str_equal (which, "none"))
    g_assert_cmpint (g_rmdir (job_dir), ==, 0);
  counter = test_counter_open (f->folder, -1, 30);
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
  g_autofree char *process = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) test_dead_pid ());
  g_autofree char *job_uri = job_uri_for (f, "xp-job");
  g_autofree char *job_dir = g_path_get_dirname (job_uri);
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  if (g_str_equal (which, "lock"))
    test_write_file (lock_path, "");
  path = test_write_lock_file (f->tmp, f->jobs, "xp-job", "{\"count\": 1}", process, TEST_JOB_FOLDER_EMPTY);
  if (g_str_equal (which, "none"))
    g_assert_cmpint (g_rmdir (job_dir), ==, 0);
  counter = test_counter_open (f->folder, -1, 30);
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

/* ---------------------------------------------------------------------- */
/* Another host: its own UTS, pid and mount namespaces, with its own
 * /etc/machine-id, boot id and host-local state (/var/tmp) bind-mounted,
 * and our host name (the machines all called alike). Namespaces on one
 * kernel share locks, as NFSv4 or Lustre `flock` hosts do through the
 * file server. */

/* On NFS a peer's flock probe (a brief LOCK_SH) reaches the file server
 * as a shared POSIX lock, which conflicts with the job lock we take: the
 * take waits such a lock out instead of failing as if another process
 * ran the job. The taker is held at pause point "job-lock-shared" (it
 * met the shared lock) until the probe has ended. A write lock still
 * means another runs the job, at once. */
typedef struct
{
  TestPausePoint *pause;
  Helper *taker;
} PausedTaker;

static gboolean
paused_or_ended (gpointer data)
{
  PausedTaker *p = data;

  return test_pause_point_is_reached (p->pause) || !helper_is_running (p->taker);
}

static void
test_job_lock_take_waits_out_probe (Fixture *f, gconstpointer data)
{
  g_autofree char *job_uri = job_uri_for (f, "probed");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (pause_dir, "job-lock-shared");
  g_autoptr(Helper) probe = NULL;
  g_autoptr(Helper) taker = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) other = NULL;
  g_autofree char *line = NULL;
  g_autofree char *line2 = NULL;

  probe = helper_spawn (NULL, "probe", lock_path, NULL);
  helper_expect_line (probe, "LOCKED", 60);
  taker = helper_spawn (pause->env, "hold-job", job_uri, NULL);
  /* It meets the probe's lock and waits (or, failing at once, ends). */
  test_poll_until (paused_or_ended, &(PausedTaker) { pause, taker }, 60);
  helper_close_stdin (probe);
  g_assert_cmpint (helper_wait (probe), ==, 0);
  test_pause_point_release (pause);
  line = helper_read_line (taker, 60);
  g_assert_cmpstr (line, ==, "HELD");
  g_assert_true (test_pause_point_is_reached (pause));
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
  g_autofree char *lock_file = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);

  g_assert_cmpint (g_chmod (f->tmp, 0777), ==, 0);
  g_assert_cmpint (g_chmod (f->config, 0644), ==, 0);
  holder = spawn_tool_as (f, 64001, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                          "run", "--need", "r=1", "--", "sh", "-c", "echo ready; read x || true", NULL);
  g_assert_no_error (error);
  test_wait_ready (holder, 120);
  lock_file = test_only_json_file (jobs);

  other = spawn_tool_as (f, 64002, TRUE, G_SUBPROCESS_FLAGS_NONE, &error,
                         "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (other), ==, 75);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  test_let_go (holder);
}

int
main (int argc, char **argv)
{
  hosts_test_init (&argc, &argv);
  hosts_test_add ("/hosts/container/holder-inside-counts", GINT_TO_POINTER (TRUE), test_container_holder_counts);
  hosts_test_add ("/hosts/container/holder-outside-counts", GINT_TO_POINTER (FALSE), test_container_holder_counts);
  hosts_test_add ("/hosts/container/own-state-folder/holder-counts", NULL, test_container_own_state_folder_counts);
  hosts_test_add ("/hosts/container/hidden-job-folder/holder-counts", NULL, test_container_hidden_job_folder_counts);
  hosts_test_add ("/hosts/job-lock/recorded-job-folder-without-lock/reclaimed", "same", test_recorded_job_folder);
  hosts_test_add ("/hosts/job-lock/recorded-job-folder-replaced/counts", "other", test_recorded_job_folder);
  hosts_test_add ("/hosts/job-lock/recorded-job-folder-unseen/counts", "none", test_recorded_job_folder);
  hosts_test_add ("/hosts/job-lock/recorded-job-folder-other-host-device/reclaimed", "other-host", test_recorded_job_folder);
  hosts_test_add ("/hosts/job-lock/recorded-job-folder-other-host-local/counts", "other-host-local", test_recorded_job_folder);
  hosts_test_add ("/hosts/job-lock/experimaestro-free-lock/reclaimed", "lock", test_experimaestro_job_folder);
  hosts_test_add ("/hosts/job-lock/experimaestro-no-lock/counts", "no-lock", test_experimaestro_job_folder);
  hosts_test_add ("/hosts/job-lock/experimaestro-no-job-folder/counts", "none", test_experimaestro_job_folder);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    hosts_test_add ("/hosts/job-lock/take-waits-out-a-probe", NULL, test_job_lock_take_waits_out_probe);
  hosts_test_add ("/hosts/hidepid/other-users-holder-counts", NULL, test_hidepid_holder_counts);
  return g_test_run ();
}
