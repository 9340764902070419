/* test-hosts-identity.c: who a holder is (issue 14). What cannot be
 * understood counts (fail closed); a spec records the holder's host,
 * boot and start time, which decide when a pid check means something; the
 * host id is neither planted by another user nor carried by a copy;
 * orphans are judged by how long this host has seen them, never by their
 * mtime against our clock.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-counter.h"
#include "test-utils.h"
#include "test-hosts-common.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Fail closed: what cannot be understood counts */

/* "count": 1.0 is the declared amount 1, as Python's json may write it. */
static void
test_float_count_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "float", "{\"count\": 1.0}", NULL,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);

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
      g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "odd", cases[i], NULL,
                                                    TEST_JOB_FOLDER_EMPTY);
      g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);

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
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "slurm", "{\"count\": 1}", slurm,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autofree char *ssh_path = NULL;
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);

  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  ssh_path = test_write_lock_file (f->tmp, f->jobs, "ssh", "{\"count\": 1}",
                                   "{\"type\": \"ssh\", \"pid\": 17, \"host\": \"far\"}",
                                   TEST_JOB_FOLDER_EMPTY);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (ssh_path, G_FILE_TEST_EXISTS));
}

/* A seed-era lock file (no "process") whose <job_uri>.pid is of a type
 * Tessera does not know is no orphan, however old. */
static void
test_slurm_pid_file_no_orphan (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "slurmpid", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autofree char *job_uri = job_uri_for (f, "slurmpid");
  g_autofree char *pid_path = g_strconcat (job_uri, ".pid", NULL);
  g_autoptr(TestCounter) counter = NULL;

  test_write_file (pid_path, "{\"type\": \"slurm\", \"pid\": \"4242\"}");
  test_set_file_age (path, 3600);
  counter = test_counter_open (f->folder, -1, 30);
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
  g_autofree char *process = g_strdup_printf ("{\"type\": \"local\", \"pid\": %d}", (int) test_dead_pid ());
  g_autofree char *job_uri = job_uri_for (f, "elsewhere");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(Helper) job = helper_spawn (NULL, "lockf", lock_path, NULL);
  g_autofree char *path = NULL;
  g_autoptr(TestCounter) counter = NULL;

  helper_expect_line (job, "LOCKED", 60);
  path = test_write_lock_file (f->tmp, f->jobs, "elsewhere", "{\"count\": 1}", process,
                               TEST_JOB_FOLDER_EMPTY);
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));

  /* The job ended without its lock file (killed): now it goes. */
  helper_close_stdin (job);
  g_assert_cmpint (helper_wait (job), ==, 0);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Our host, another boot: dead. */
static void
test_same_host_other_boot_dead (Fixture *f, gconstpointer data)
{
  g_autofree char *spec = own_spec (set_boot, NULL);
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "rebooted", "{\"count\": 1}", spec,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autoptr(TestCounter) counter = test_counter_open (f->folder, -1, 30);

  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Our host name on another machine (containers all named localhost):
 * its boot id says nothing about it. */
static void
test_same_name_other_machine_counts (Fixture *f, gconstpointer data)
{
  g_autofree char *spec = own_spec (set_other_machine, NULL);
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "twin", "{\"count\": 1}", spec,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autofree char *job_uri = job_uri_for (f, "twin");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(Helper) holder = helper_spawn (NULL, "lockf", lock_path, NULL);
  g_autoptr(TestCounter) counter = NULL;

  helper_expect_line (holder, "LOCKED", 60);
  counter = test_counter_open (f->folder, -1, 30);
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
  path = test_write_lock_file (f->tmp, f->jobs, "reused", "{\"count\": 1}", spec, TEST_JOB_FOLDER_EMPTY);
  counter = test_counter_open (f->folder, -1, 30);
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
/* Orphans by observation: how long this host has seen a file, never its
 * mtime against our clock */

/* A writer whose clock runs an hour ahead (or a file server's): its fresh
 * file without process is not old. */
static void
test_orphan_mtime_hour_behind_is_young (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "fresh", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autoptr(TestCounter) counter = NULL;

  test_set_file_age (path, 3600);
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* A writer whose clock runs an hour behind: its orphan still ages, and
 * what one process of this host saw, the next one knows. */
static void
test_orphan_mtime_hour_ahead_ages (Fixture *f, gconstpointer data)
{
  g_autofree char *path = test_write_lock_file (f->tmp, f->jobs, "future", "{\"count\": 1}", NULL,
                                                TEST_JOB_FOLDER_EMPTY);
  g_autofree char *job_uri = job_uri_for (f, "future");
  g_autofree char *lock_path = g_strconcat (job_uri, ".lock", NULL);
  g_autoptr(TestCounter) first = NULL;
  g_autoptr(TestCounter) second = NULL;
  gint64 since;

  test_write_file (lock_path, "");   /* seen here, and free */
  test_set_file_age (path, -3600);
  first = test_counter_open (f->folder, -1, 30);
  g_assert_cmpint (test_counter_grantable (first, f->tmp, 3), ==, 1);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_clear_object (&first);
  /* Let this host's observation (made before now) grow older than
   * min-age, with nobody looking; then a new process judges at once. */
  since = g_get_monotonic_time ();
  while (g_get_monotonic_time () - since < (gint64) (1.2 * G_USEC_PER_SEC))
    g_usleep (50 * 1000);
  second = test_counter_open (f->folder, -1, 30);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (second), 1);
  g_assert_cmpint (test_counter_grantable (second, f->tmp, 3), ==, 2);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

typedef struct
{
  TestCounter *counter;
  const char *tmp;
} Grantable;

static gboolean
grants_two (gpointer data)
{
  const Grantable *g = data;

  return test_counter_grantable (g->counter, g->tmp, 3) == 2;
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
  path = test_write_lock_file (f->tmp, f->jobs, "reused-xp", "{\"count\": 1}", process,
                               TEST_JOB_FOLDER_EMPTY);
  test_write_file (lock_path, "");   /* its job ended: its job lock is free */
  counter = test_counter_open (f->folder, -1, 30);
  g_assert_cmpint (test_counter_grantable (counter, f->tmp, 3), ==, 1);
  tessera_tracked_dynamic_resource_set_min_age (TESSERA_TRACKED_DYNAMIC_RESOURCE (counter), 1);
  test_wait_until (grants_two, &(Grantable) { counter, f->tmp }, 60, "the reused pid's job was never judged");
  g_assert_cmpint (g_get_monotonic_time () - since, >=, G_USEC_PER_SEC);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  helper_close_stdin (other);
  helper_wait (other);
}

/* ---------------------------------------------------------------------- */
/* Another host: its own UTS, pid and mount namespaces, with its own
 * /etc/machine-id, boot id and host-local state (/var/tmp) bind-mounted,
 * and our host name (the machines all called alike). Namespaces on one
 * kernel share locks, as NFSv4 or Lustre `flock` hosts do through the
 * file server. */

static GSubprocess *
spawn_default_on_other_host (Fixture *f, GSubprocessLauncher *launcher, const char *host, GError **error)
{
  return spawn_default_on_other_host_va (f, launcher, host, error, "status", "--json", NULL);
}

/* With no configuration, the built-in pools are per host: two hosts that
 * share a home (one XDG_STATE_HOME) do not share a `cpu` pool sized for
 * one of them. */
static char *
default_cpu_path (Fixture *f, const char *host)
{
  g_autofree char *state = g_build_filename (f->tmp, "home-state", NULL);
  g_autofree char *cfg = g_build_filename (f->tmp, "no-config", NULL);
  g_autoptr(GSubprocessLauncher) launcher = test_launcher_without_config (G_SUBPROCESS_FLAGS_STDOUT_PIPE, state, cfg);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *resource;

  if (host == NULL)
    process = g_subprocess_launcher_spawn (launcher, &error, g_getenv ("TESSERA_TOOL"), "status", "--json", NULL);
  else
    process = spawn_default_on_other_host (f, launcher, host, &error);
  g_assert_no_error (error);
  root = test_output_json (process, 0);
  resource = test_status_first_resource (root);
  g_assert_cmpstr (json_object_get_string_member (resource, "name"), ==, "cpu");
  return g_strdup (json_object_get_string_member (resource, "path"));
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
/* The host id: neither planted by another user nor carried by a copy */

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

      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      planted = test_substitute (text, first, chosen);
      test_write_in_place (path, planted);
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

int
main (int argc, char **argv)
{
  hosts_test_init (&argc, &argv);
  hosts_test_add ("/hosts/fail-closed/float-count", NULL, test_float_count_counts);
  hosts_test_add ("/hosts/fail-closed/unreadable-information-holds-all", NULL, test_unreadable_information_counts_whole);
  hosts_test_add ("/hosts/fail-closed/slurm-and-ssh-lock-files-count", NULL, test_slurm_lock_file_counts);
  hosts_test_add ("/hosts/fail-closed/slurm-pid-file-is-no-orphan", NULL, test_slurm_pid_file_no_orphan);
  hosts_test_add ("/hosts/identity/spec-records-identity", NULL, test_spec_records_identity);
  hosts_test_add ("/hosts/identity/no-host-written-elsewhere-counts", NULL, test_no_host_written_elsewhere_counts);
  hosts_test_add ("/hosts/identity/same-host-other-boot-is-dead", NULL, test_same_host_other_boot_dead);
  hosts_test_add ("/hosts/identity/same-name-other-machine-counts", NULL, test_same_name_other_machine_counts);
  hosts_test_add ("/hosts/identity/pid-reuse-no-start-time/lockf", "lockf", test_pid_reuse_no_start_time);
  hosts_test_add ("/hosts/identity/pid-reuse-no-start-time/flock", "flock", test_pid_reuse_no_start_time);
  hosts_test_add ("/hosts/identity/experimaestro-pid-reuse-no-start-time", NULL, test_experimaestro_pid_reuse);
  hosts_test_add ("/hosts/orphans/mtime-an-hour-behind-is-young", NULL, test_orphan_mtime_hour_behind_is_young);
  hosts_test_add ("/hosts/orphans/mtime-an-hour-ahead-ages-seen-by-the-next-process", NULL, test_orphan_mtime_hour_ahead_ages);
  hosts_test_add ("/hosts/defaults/built-in-pools-are-per-host", NULL, test_default_pools_per_host);
  hosts_test_add ("/hosts/host-id/planted-by-another-user-ignored", NULL, test_host_id_planted_ignored);
  hosts_test_add ("/hosts/host-id/copied-to-a-clone-drawn-again", NULL, test_host_id_copied_to_a_clone);
  return g_test_run ();
}
