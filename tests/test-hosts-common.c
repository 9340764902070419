/* test-hosts-common.c: the fixture of the tests of several hosts and the
 * helpers more than one of them uses.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-counter.h"
#include "test-utils.h"
#include "test-hosts-common.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
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

/* First thing in main(), before any thread: this process's own mount
 * namespace (the FUSE views are its own), then GTest. */
void
hosts_test_init (int *argc, char ***argv)
{
  test_private_mounts ();
  g_test_init (argc, argv, NULL);
}

/* The test @path: @fn on the hosts fixture, given @data. */
void
hosts_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer))
{
  g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down);
}

void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
  g_free (f->jobs);
  g_free (f->config);
}

/* The fixture's configuration: one counter r of @total units in TMP/r,
 * its hosts on a lease of @lease seconds. */
void
use_lease_config (Fixture *f, gint64 total, double lease)
{
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=%" G_GINT64_FORMAT
                                             "\nhost-lease=%g\n", f->tmp, total, lease);

  test_write_file (f->config, config);
}

/* tmp/xp/<name>/task: the job URI of a lock file written by the tests. */
char *
job_uri_for (Fixture *f, const char *name)
{
  g_autofree char *job_dir = g_build_filename (f->tmp, "xp", name, NULL);

  g_mkdir_with_parents (job_dir, 0777);
  return g_build_filename (job_dir, "task", NULL);
}

/* Our own process spec as Tessera writes it, with @edit applied. */
char *
own_spec (void (*edit) (JsonObject *spec, gpointer data), gpointer data)
{
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) node = tessera_process_to_json (self);

  if (edit != NULL)
    edit (json_node_get_object (node), data);
  return json_to_string (node, FALSE);
}

/* ---------------------------------------------------------------------- */
/* Identity */

void
set_boot (JsonObject *spec, gpointer data)
{
  json_object_set_string_member (spec, "boot_id", "00000000-dead-beef-0000-000000000000");
}

void
set_other_machine (JsonObject *spec, gpointer data)
{
  set_boot (spec, data);
  json_object_set_string_member (spec, "machine_id", "0123456789abcdef0123456789abcdef");
  json_object_set_string_member (spec, "host_id", "fedcba9876543210fedcba9876543210");
}

/* ---------------------------------------------------------------------- */
/* A mount whose locks do not cross hosts (most FUSE file systems, NFS
 * `nolock` or `local_lock=all`, Lustre `localflock`): a free job lock says
 * nothing about a holder on another host. */

/* `tessera run --no-wait --need r=1 -- echo ran` on this host: its exit
 * status, with what it wrote on stdout and stderr. */
int
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

/* ---------------------------------------------------------------------- */
/* Containers: our host name, our kernel, their own pid namespace */

GSubprocess *
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

/* ---------------------------------------------------------------------- */
/* Another host: its own UTS, pid and mount namespaces, with its own
 * /etc/machine-id, boot id and host-local state (/var/tmp) bind-mounted,
 * and our host name (the machines all called alike). Namespaces on one
 * kernel share locks, as NFSv4 or Lustre `flock` hosts do through the
 * file server. */

/* Appends to @argv the command `tessera` run at @at, with `--config
 * @config` unless @config is NULL (then TESSERA_CONFIG says). A simulated
 * host is made in tmp/HOST: its machine id, boot id and /var/tmp
 * (everyone's, as a real one is) bind-mounted; a user's run has its state
 * (and home) in a folder of its own beside the pool, umask 022, and is
 * killed after two minutes. */
void
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
GSubprocess *
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
GSubprocess *
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
GSubprocess *
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

GSubprocess *
spawn_on_other_host_full (Fixture *f, GSubprocessLauncher *launcher, const char *host,
                          GError **error, va_list ap)
{
  const Place at = { .host = host };

  return spawn_place_va (f, &at, launcher, NULL, error, ap);
}

GSubprocess *
spawn_default_on_other_host_va (Fixture *f, GSubprocessLauncher *launcher, const char *host, GError **error, ...)
{
  GSubprocess *process;
  va_list ap;

  va_start (ap, error);
  process = spawn_on_other_host_full (f, launcher, host, error, ap);
  va_end (ap);
  return process;
}

/* Runs `tessera ARGS…` on the simulated @host, with the fixture's
 * configuration. */
GSubprocess *
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
GPid
namespace_init (GSubprocess *unshare)
{
  GPid init = test_first_child (atoi (g_subprocess_get_identifier (unshare)));

  g_assert_cmpint (init, >, 0);
  return init;
}

/* ---------------------------------------------------------------------- */
/* The host id: neither planted by another user nor carried by a copy */

/* The host id that a `tessera run` on the simulated @host records in its
 * lock file (the process spec's "host_id"). */
char *
host_id_on (Fixture *f, const char *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *script = g_strdup_printf ("cat '%s'/r/jobs/*.json", f->tmp);
  JsonObject *spec;

  process = spawn_on_other_host (f, host, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                 "run", "--need", "r=1", "--", "sh", "-c", script, NULL);
  g_assert_no_error (error);
  root = test_output_json (process, 0);
  spec = json_object_get_object_member (json_node_get_object (root), "process");
  g_assert_nonnull (spec);
  g_assert_cmpuint (strlen (json_object_get_string_member (spec, "host_id")), ==, 32);
  return g_strdup (json_object_get_string_member (spec, "host_id"));
}

/* ---------------------------------------------------------------------- */
/* Verdicts between two users of a group: the holder as one user on
 * another host or in a container, the judge here as another, as on a
 * cluster */

/* The pid here of the process whose pid is @local in the pid namespace
 * of @init (its NSpid's last field); 0 when there is none. */
GPid
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
GSubprocess *
start_holder_at (Fixture *f, const Place *at, char **fd, GPid *pid)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_auto(GStrv) words = NULL;
  GSubprocess *holder = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE, &error,
                                  "run", "--need", "r=1", "--", "sh", "-c",
                                  "echo \"ready $TESSERA_JOB_LOCK_FD $$\"; read x || true", NULL);

  g_assert_no_error (error);
  ready = test_read_line (holder, 60);
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
int
try_at (Fixture *f, const Place *at)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) run = spawn_at (f, at, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
                                         "run", "--no-wait", "--need", "r=1", "--", "true", NULL);

  g_assert_no_error (error);
  return test_exit_code (run);
}

/* Starts `tessera run --need r=1 -- echo through` at @at (a waiter). */
GSubprocess *
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
double
kill_and_wait_through (GSubprocess *holder, GSubprocess *waiter)
{
  g_autofree char *through = NULL;
  gint64 killed;
  double reclaim;

  g_assert_cmpint (kill (namespace_init (holder), SIGKILL), ==, 0);
  killed = g_get_monotonic_time ();
  g_assert_cmpint (test_exit_code (holder), !=, 0);
  through = test_read_line (waiter, 60);
  reclaim = (double) (g_get_monotonic_time () - killed) / G_USEC_PER_SEC;
  g_assert_cmpstr (through, ==, "through");
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
  return reclaim;
}

/* ---------------------------------------------------------------------- */
/* Temporary files in hosts/: a renewer killed between writing its
 * heartbeat's temporary file (HOSTID.lease.XXXXXX) and renaming it leaves
 * it there; they must not pile up */

/* Now on the clock of the file server of tmp/ (the pool's): the time
 * stamp of a file written there now, in seconds. */
double
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
char *
kill_renewer_half_way (Fixture *f, const char *host)
{
  const Place there = { .host = host };
  g_autofree char *pause_dir = g_build_filename (f->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = test_pause_point_new (pause_dir, "heartbeat-renaming");
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDERR_SILENCE);
  g_autoptr(GSubprocess) renewer = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;
  char *temporary = NULL;

  test_pause_point_set_launcher (pause, launcher);
  renewer = spawn_at_with (f, &there, launcher, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  test_pause_point_wait (pause, 60);
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
double
file_time (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return (double) st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}
