/* tessera-stress-commands.c: `tessera run` commands, some in containers
 * with state folders of their own, killed at random; the commands
 * themselves say when they run, and no more of them run at once than the
 * pool has tokens.
 *
 *   tessera-stress-commands --tool PATH [--seconds N] [--processes N]
 *                           [--container-percent P] [--kill-percent P]
 *                           [--capacity N] [--seed N] [--fuse-host-seconds N]
 *
 * The pool "cmd" (countertoken, --capacity tokens, min-age 1 s) lives in a
 * folder of the run's own. Slots keep --processes `tessera run --need cmd=1`
 * going; each command appends "+ TIME ID" to a log outside the pool when
 * it starts and "- TIME ID" when it ends (TIME: date +%s%N, the realtime
 * clock every namespace shares). That share of the runs given by
 * --container-percent runs in a container: its own pid and mount
 * namespaces, where its state folder (XDG_STATE_HOME) is a private folder
 * that nobody outside sees; the job folder is in the pool's runs/, as
 * every run keeps it. Of those, --kill-percent are killed with SIGKILL as
 * a whole (the namespace dies with its command, which then says nothing:
 * the driver writes "k TIME ID" just before the kill): half of them up to
 * 1.5 s after the spawn, while they wait or run, half up to 0.2 s after
 * their command's start shows in the log.
 *
 * The auditor trusts neither the library nor the pool's files: it counts
 * the commands running at each moment from the log, a killed one ending at
 * its "k" (it is dead by then or soon after, and no token comes back from
 * it before it is). More than --capacity at once is over-allocation. At
 * the end one last run takes the whole capacity at once (--no-wait): a
 * killed holder that was never given back is a leak. Exit status 0 when
 * both hold and the run did start, kill and finish commands.
 *
 * With --fuse-host-seconds, a second host reaches the pool through a FUSE
 * view beside the real folder (issue 38, the mixed mounts): its own UTS,
 * pid and mount namespaces, machine id, boot id, /var/tmp and host name,
 * kept for the whole run, where bindfs shows the pool's folder at view/
 * (whose locks stay on that host). For its first N seconds (and until one
 * of its commands ran) only that host runs commands (--processes at a
 * time, ids "f…"), which work: it is alone. Then the runs on the real
 * folder (ids "c…", containers and kills as above) start beside them; the
 * driver watches hosts/ and notes when it first sees the marks of two
 * hosts. From then on the pool must be refused rather than shared: every
 * run started after that, on either side, exits 1 with one line naming
 * the fix (etcd) and its command never starts, at least one such refusal
 * on each side (the runs go on past --seconds until there is one, 120 s
 * at most, whatever the load); never more than --capacity
 * commands at once across both hosts; and at least one command ran on the
 * FUSE side. At the end the FUSE host is retired (its namespace gone,
 * `tessera clean --host NAME --yes`) and the whole capacity is had on the
 * real folder: nothing leaked.
 *
 * With --fuse-host-joins too, the other way round: the real folder's
 * runs (containers with state folders of their own, kills) go alone for
 * the first N seconds (and until a container was killed while its
 * command ran, up to a minute past --seconds), then the
 * FUSE host joins, and from the marks on the pool is refused on either
 * side as above; the FUSE host need run no command (its first run finds
 * the real folder's marks), but containers must have run and been killed
 * on the real folder, never more than --capacity at once.
 *
 * Needs root (namespaces, mounts, bindfs), as CI has.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gio/gio.h>
#include <glib/gstdio.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct
{
  GSubprocess *process;
  char *id;
  char *err_path;             /* its stderr (--fuse-host-seconds), NULL: inherited */
  gboolean container, fuse, late;   /* late: started once both hosts' marks were seen */
  gint64 kill_at;             /* monotonic µs, 0: never */
  gint64 kill_after_start;    /* µs after its command's start (as the log shows) to kill it, 0: not so */
  gboolean kill_when_running; /* kill_at was set once its command's start was seen */
  int pidfd;
  gboolean done;
} Run;

typedef struct
{
  char *tool;
  double seconds;
  int processes, container_percent, kill_percent, capacity;
  guint32 seed;
  char *root, *config, *log_path, *state;
  GPtrArray *runs;
  guint serial, started, in_containers, kills, failed;
  guint kills_running;        /* kills sent once the run's command was seen started */
  /* The FUSE host (--fuse-host-seconds): its namespaces' keeper (pid 1
   * there is `cat`, ended by closing its stdin), that process's pid, its
   * configuration, state, host name, and the pool's hosts/ as seen here. */
  double fuse_seconds;
  gboolean fuse_joins;        /* the real folder's runs first, then the FUSE host */
  GSubprocess *fuse_host;
  int fuse_pid;
  char *fuse_config, *fuse_state, *fuse_name, *hosts;
  gint64 marks_at;            /* realtime µs when two hosts' marks were first seen, 0: not yet */
  GHashTable *late_ids;       /* the ids of the runs started after marks_at */
  guint fuse_started, fuse_ran, early_refused, late_refused[2], late_granted;   /* [0]: real folder, [1]: FUSE */
} Stress;

static void
run_free (Run *run)
{
  if (run->pidfd >= 0)
    close (run->pidfd);
  g_clear_object (&run->process);
  g_free (run->id);
  g_free (run->err_path);
  g_free (run);
}

static void
run_exited (GObject *source, GAsyncResult *result, gpointer data)
{
  Run *run = data;

  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  run->done = TRUE;
}

/* The log line the driver writes itself (a kill), in the commands' format. */
static void
log_kill (Stress *s, const char *id)
{
  g_autofree char *line = g_strdup_printf ("k %" G_GINT64_FORMAT "000 %s\n", g_get_real_time (), id);
  int fd = open (s->log_path, O_WRONLY | O_APPEND | O_CLOEXEC);

  if (fd < 0 || write (fd, line, strlen (line)) != (gssize) strlen (line))
    g_error ("cannot write %s: %s", s->log_path, g_strerror (errno));
  close (fd);
}

static void
spawn_run (Stress *s, GRand *rand, gboolean fuse)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL;
  Run *run = g_new0 (Run, 1);
  const char *identifier;

  run->id = g_strdup_printf ("%c%u", fuse ? 'f' : 'c', ++s->serial);
  run->fuse = fuse;
  run->container = !fuse && g_rand_int_range (rand, 0, 100) < s->container_percent;
  run->late = s->marks_at != 0;
  if (run->late)
    g_hash_table_add (s->late_ids, g_strdup (run->id));
  /* Quoted for sh: the paths are the run's own (no quote in them). */
  command = g_strdup_printf ("echo \"+ $(date +%%s%%N) %s\" >> '%s'; sleep 0.%d; "
                             "echo \"- $(date +%%s%%N) %s\" >> '%s'",
                             run->id, s->log_path, g_rand_int_range (rand, 1, 5), run->id, s->log_path);
  if (run->container)
    {
      g_autofree char *own = g_build_filename (s->root, "containers", run->id, NULL);
      g_autofree char *script = g_strdup_printf ("set -e; mount --bind '%s' '%s'; exec \"$0\" \"$@\"", own,
                                                 s->state);
      const char *prefix[] = { "unshare", "--pid", "--fork", "--mount-proc", "--mount", "--propagation",
                               "private", "--kill-child=SIGKILL", "sh", "-c" };

      g_assert_cmpint (g_mkdir_with_parents (own, 0700), ==, 0);
      for (guint i = 0; i < G_N_ELEMENTS (prefix); i++)
        g_ptr_array_add (argv, g_strdup (prefix[i]));
      g_ptr_array_add (argv, g_steal_pointer (&script));
      s->in_containers++;
      /* Half of the kills come at a time after the spawn, while the run
       * waits or runs; the other half while its command runs (its start
       * seen in the log), which a loaded machine, where a run in a
       * container may take longer to start than the first half's delays,
       * would otherwise hardly ever see. */
      if (g_rand_int_range (rand, 0, 100) < s->kill_percent)
        {
          if (g_rand_boolean (rand))
            run->kill_at = g_get_monotonic_time () + g_rand_int_range (rand, 10000, 1500000);
          else
            run->kill_after_start = g_rand_int_range (rand, 10000, 200000);
        }
    }
  else if (fuse)
    {
      /* On the FUSE host: nsenter forks the command into its pid
       * namespace, where its /proc is. */
      const char *prefix[] = { "nsenter", "--target", NULL, "--uts", "--mount", "--pid", "--" };

      for (guint i = 0; i < G_N_ELEMENTS (prefix); i++)
        g_ptr_array_add (argv, prefix[i] ? g_strdup (prefix[i]) : g_strdup_printf ("%d", s->fuse_pid));
      s->fuse_started++;
    }
  for (const char *const *a = (const char *[]) { s->tool, "--config", fuse ? s->fuse_config : s->config, "run",
                                                  "--need", "cmd=1", "--name", run->id, "--", "sh", "-c", command,
                                                  NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", fuse ? s->fuse_state : s->state, TRUE);
  if (s->fuse_seconds > 0)
    {
      /* What a refusal says is read at the end of the run. */
      run->err_path = g_build_filename (s->root, "stderr", run->id, NULL);
      g_subprocess_launcher_set_stderr_file_path (launcher, run->err_path);
    }
  run->process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  if (run->process == NULL)
    g_error ("cannot start %s: %s", s->tool, error->message);
  identifier = g_subprocess_get_identifier (run->process);
  run->pidfd = identifier ? (int) syscall (SYS_pidfd_open, (pid_t) atoi (identifier), 0) : -1;
  g_subprocess_wait_async (run->process, NULL, run_exited, run);
  g_ptr_array_add (s->runs, run);
  s->started++;
}

/* Whether the run whose stderr is @path was refused as a pool shared by
 * a host whose locks stay local is: its last line (a run that waited said
 * so before) is the one line naming the resource and the fix (see SHARING
 * A POOL in tessera(1)). */
static gboolean
refused_shared_pool (const char *path)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  char *last;

  if (path == NULL || !g_file_get_contents (path, &text, &length, NULL) || length == 0 || text[length - 1] != '\n')
    return FALSE;
  text[length - 1] = '\0';
  last = strrchr (text, '\n');
  last = last != NULL ? last + 1 : text;
  return g_str_has_prefix (last, "tessera: cmd: refusing ") && strstr (last, "etcd") != NULL;
}

/* Kills what is due, reaps what ended; returns how many still run. */
static guint
tend (Stress *s)
{
  gint64 now = g_get_monotonic_time ();
  g_autofree char *log = NULL;

  while (g_main_context_iteration (NULL, FALSE))
    ;
  for (guint i = 0; i < s->runs->len;)
    {
      Run *run = g_ptr_array_index (s->runs, i);

      /* Its command started: the first line that names it is its "+". */
      if (!run->done && run->kill_after_start != 0 &&
          (log != NULL || g_file_get_contents (s->log_path, &log, NULL, NULL)))
        {
          g_autofree char *named = g_strdup_printf (" %s\n", run->id);

          if (strstr (log, named) != NULL)
            {
              run->kill_at = now + run->kill_after_start;
              run->kill_after_start = 0;
              run->kill_when_running = TRUE;
            }
        }
      if (!run->done && run->kill_at != 0 && now >= run->kill_at && run->pidfd >= 0)
        {
          log_kill (s, run->id);
          if (syscall (SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0) == 0)
            {
              s->kills++;
              s->kills_running += run->kill_when_running;
            }
          run->kill_at = 0;
        }
      if (run->done)
        {
          int status = g_subprocess_get_if_exited (run->process) ? g_subprocess_get_exit_status (run->process) : -1;
          gboolean killed = g_subprocess_get_if_signaled (run->process) || (run->container && status == 128 + SIGKILL);

          /* Refused as a pool two hosts share on mixed mounts: counted
           * by when the run started. */
          if (status == 1 && refused_shared_pool (run->err_path))
            {
              if (run->late)
                s->late_refused[run->fuse]++;
              else
                s->early_refused++;
            }
          /* Killed (by us), or the command's own 0; anything else is a
           * run that failed, said at the end. */
          else if (status != 0 && !killed)
            {
              g_autofree char *said = NULL;

              if (run->err_path != NULL && g_file_get_contents (run->err_path, &said, NULL, NULL))
                g_printerr ("stress-commands: %s exited %d: %s\n", run->id, status, said);
              s->failed++;
            }
          else if (status == 0 && run->late)
            s->late_granted++;
          if (status == 0 && run->fuse)
            s->fuse_ran++;
          g_ptr_array_remove_index_fast (s->runs, i);
          continue;
        }
      i++;
    }
  return s->runs->len;
}

typedef struct
{
  gint64 time;
  char kind;
  char *id;
} Event;

static int
compare_events (gconstpointer a, gconstpointer b)
{
  const Event *x = a, *y = b;

  if (x->time != y->time)
    return x->time < y->time ? -1 : 1;
  /* At one instant an end comes before a start: a token handed over. */
  return (x->kind == '+') - (y->kind == '+');
}

static void
event_clear (gpointer data)
{
  g_free (((Event *) data)->id);
}

/* The most commands that ran at once, from the log; how many started,
 * ended and were killed; how many started on the FUSE host, and how many
 * of the runs started once both hosts' marks were seen. */
static int
audit (Stress *s, guint *starts, guint *ends, guint *kills, guint *fuse_starts, guint *late_starts)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GArray) events = g_array_new (FALSE, TRUE, sizeof (Event));
  g_autoptr(GHashTable) running = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) ended = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) said_end = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) killed_first = g_hash_table_new (g_str_hash, g_str_equal);
  int now = 0, most = 0;

  g_array_set_clear_func (events, event_clear);
  if (!g_file_get_contents (s->log_path, &text, NULL, &error))
    g_error ("%s", error->message);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", 3);
      Event e = { 0 };

      if (f[0] == NULL || f[1] == NULL || f[2] == NULL || strlen (f[0]) != 1)
        continue;
      e.kind = f[0][0];
      e.time = g_ascii_strtoll (f[1], NULL, 10) / 1000;   /* ns → µs */
      g_array_append_val (events, e);
      /* Owned by the array from here (its clear function frees it). */
      g_array_index (events, Event, events->len - 1).id = g_strdup (f[2]);
    }
  /* A command that said its end ran until then, killed or not. */
  for (guint i = 0; i < events->len; i++)
    if (g_array_index (events, Event, i).kind == '-')
      g_hash_table_add (said_end, g_array_index (events, Event, i).id);
  g_array_sort (events, compare_events);
  /* One that started after its kill was written (the kill was on its
   * way) ran only until the kill reached it: its start ends it too, as
   * its token comes back only once it is dead (its job lock is its
   * command's too). */
  for (guint i = 0; i < events->len; i++)
    {
      Event *e = &g_array_index (events, Event, i);

      if (e->kind == 'k' && !g_hash_table_contains (said_end, e->id) && !g_hash_table_contains (running, e->id))
        g_hash_table_add (killed_first, e->id);
      else if (e->kind == '+')
        g_hash_table_add (running, e->id);
    }
  g_hash_table_remove_all (running);
  *starts = *ends = *kills = *fuse_starts = *late_starts = 0;
  for (guint i = 0; i < events->len; i++)
    {
      Event *e = &g_array_index (events, Event, i);

      if (e->kind == '+' && e->id[0] == 'f')
        (*fuse_starts)++;
      if (e->kind == '+' && g_hash_table_contains (s->late_ids, e->id))
        (*late_starts)++;
      if (e->kind == '+' && g_hash_table_contains (killed_first, e->id))
        {
          (*starts)++;
          (*kills)++;
        }
      else if (e->kind == '+')
        {
          (*starts)++;
          g_hash_table_add (running, e->id);
          now++;
          most = MAX (most, now);
        }
      else if ((e->kind == '-' || (e->kind == 'k' && !g_hash_table_contains (said_end, e->id))) &&
               g_hash_table_contains (running, e->id) && !g_hash_table_contains (ended, e->id))
        {
          *(e->kind == '-' ? ends : kills) += 1;
          g_hash_table_add (ended, e->id);
          now--;
        }
    }
  return most;
}

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* Starts the FUSE host: a simulated host (its own UTS, pid and mount
 * namespaces, machine id, boot id, /var/tmp and host name, as the hosts
 * tests make one) whose bindfs shows root/pool at root/view; it lasts
 * until its stdin is closed. Commands enter it with nsenter. */
static void
start_fuse_host (Stress *s)
{
  g_autofree char *host = g_build_filename (s->root, "fuse-host", NULL);
  g_autofree char *machine_id = g_build_filename (host, "machine-id", NULL);
  g_autofree char *boot_id = g_build_filename (host, "boot_id", NULL);
  g_autofree char *var_tmp = g_build_filename (host, "var-tmp", NULL);
  g_autofree char *real = g_build_filename (s->root, "pool", NULL);
  g_autofree char *view = g_build_filename (s->root, "view", NULL);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_MD5, s->root, -1);
  g_autofree char *boot = g_strdup_printf ("%.8s-0000-4000-8000-%.12s\n", digest, digest + 8);
  g_autofree char *line = g_strconcat (digest, "\n", NULL);
  g_autofree char *script = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *children_path = NULL;
  g_autofree char *children = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GDataInputStream) out = NULL;
  const char *identifier;

  s->fuse_name = g_strdup_printf ("%.40s-fuse", g_get_host_name ());
  if (g_mkdir_with_parents (var_tmp, 0777) != 0 || chmod (var_tmp, 01777) != 0 ||
      g_mkdir_with_parents (real, 0755) != 0 || g_mkdir_with_parents (view, 0755) != 0 ||
      !g_file_set_contents (machine_id, line, -1, &error) || !g_file_set_contents (boot_id, boot, -1, &error))
    g_error ("cannot make the FUSE host in %s: %s", host, error ? error->message : g_strerror (errno));
  script = g_strdup_printf ("set -e; hostname '%s'; mount -t proc proc /proc; mount --bind '%s' /etc/machine-id; "
                            "mount --bind '%s' /proc/sys/kernel/random/boot_id; mount --bind '%s' /var/tmp; "
                            "bindfs --no-allow-other '%s' '%s' </dev/null >/dev/null; echo ready; exec cat >/dev/null",
                            s->fuse_name, machine_id, boot_id, var_tmp, real, view);
  g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
  s->fuse_host = g_subprocess_launcher_spawn (launcher, &error, "unshare", "--uts", "--pid", "--mount", "--fork",
                                              "--propagation", "private", "--kill-child=SIGKILL", "sh", "-c", script,
                                              NULL);
  if (s->fuse_host == NULL)
    g_error ("cannot start the FUSE host: %s", error->message);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (s->fuse_host));
  ready = g_data_input_stream_read_line (out, NULL, NULL, &error);
  if (g_strcmp0 (ready, "ready") != 0)
    g_error ("the FUSE host did not start (%s)", error ? error->message : "it ended");
  /* Its pid 1, whose namespaces the commands enter. */
  identifier = g_subprocess_get_identifier (s->fuse_host);
  children_path = g_strdup_printf ("/proc/%s/task/%s/children", identifier, identifier);
  if (!g_file_get_contents (children_path, &children, NULL, &error))
    g_error ("%s", error->message);
  s->fuse_pid = atoi (children);
  if (s->fuse_pid <= 0)
    g_error ("the FUSE host's first process is not in %s", children_path);
  s->hosts = g_build_filename (real, "cmd", "hosts", NULL);
}

/* Notes when hosts/ first holds the marks (HOSTID.UID.host) of two hosts. */
static void
watch_marks (Stress *s)
{
  g_autoptr(GDir) dir = NULL;
  g_autofree char *first = NULL;
  const char *name;

  if (s->hosts == NULL || s->marks_at != 0 || (dir = g_dir_open (s->hosts, 0, NULL)) == NULL)
    return;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      const char *dot = strchr (name, '.');

      if (dot == NULL || !g_str_has_suffix (name, ".host"))
        continue;
      if (first == NULL)
        first = g_strndup (name, dot - name);
      else if (strncmp (first, name, dot - name) != 0 || first[dot - name] != '\0')
        {
          s->marks_at = g_get_real_time ();
          return;
        }
    }
}

/* How many runs of that side (on the FUSE host or not) are running. */
static guint
running_on (Stress *s, gboolean fuse)
{
  guint n = 0;

  for (guint i = 0; i < s->runs->len; i++)
    n += ((Run *) g_ptr_array_index (s->runs, i))->fuse == fuse;
  return n;
}

int
main (int argc, char **argv)
{
  Stress s = { .seconds = 20, .processes = 6, .container_percent = 50, .kill_percent = 40, .capacity = 2 };
  gint64 seed = -1;
  const GOptionEntry entries[] = {
    { "tool", 0, 0, G_OPTION_ARG_FILENAME, &s.tool, "The tessera command", "PATH" },
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &s.seconds, "How long to start runs (20)", "N" },
    { "processes", 0, 0, G_OPTION_ARG_INT, &s.processes, "Runs at once (6)", "N" },
    { "container-percent", 0, 0, G_OPTION_ARG_INT, &s.container_percent, "Runs in containers (50)", "P" },
    { "kill-percent", 0, 0, G_OPTION_ARG_INT, &s.kill_percent, "Containers killed (40)", "P" },
    { "capacity", 0, 0, G_OPTION_ARG_INT, &s.capacity, "Tokens of the pool (2)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Random seed", "N" },
    { "fuse-host-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &s.fuse_seconds,
      "A host on a FUSE view runs alone this long first (0: none)", "N" },
    { "fuse-host-joins", 0, 0, G_OPTION_ARG_NONE, &s.fuse_joins,
      "The real folder's runs go alone for --fuse-host-seconds, then the FUSE host joins", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = NULL;
  g_autofree char *pool = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GSubprocess) last = NULL;
  gint64 began, began_real, end, real_from, real_started = 0, next[2] = { 0, 0 };
  guint starts, ends, kills, fuse_starts, late_starts;
  int most, status = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || s.tool == NULL || s.capacity < 1 ||
      s.fuse_seconds < 0 || s.fuse_seconds >= s.seconds)
    {
      g_printerr ("tessera-stress-commands: %s\n",
                  error ? error->message : "--tool PATH is needed, --fuse-host-seconds below --seconds");
      return 2;
    }
  if (geteuid () != 0)
    {
      g_printerr ("tessera-stress-commands: needs root (namespaces), as CI has\n");
      return 1;
    }
  s.seed = seed >= 0 ? (guint32) seed : g_random_int ();
  rand = g_rand_new_with_seed (s.seed);
  s.root = g_dir_make_tmp ("tessera-stress-commands-XXXXXX", &error);
  if (s.root == NULL)
    g_error ("%s", error->message);
  s.config = g_build_filename (s.root, "tessera.conf", NULL);
  s.log_path = g_build_filename (s.root, "commands.log", NULL);
  s.state = g_build_filename (s.root, "state", NULL);
  pool = g_build_filename (s.root, "pool", "cmd", NULL);
  text = g_strdup_printf ("[resource cmd]\ntype=countertoken\npath=%s\ntotal=%d\nmin-age=1\n", pool, s.capacity);
  if (!g_file_set_contents (s.config, text, -1, &error) || !g_file_set_contents (s.log_path, "", 0, &error))
    g_error ("%s", error->message);
  g_assert_cmpint (g_mkdir_with_parents (s.state, 0700), ==, 0);
  s.runs = g_ptr_array_new_with_free_func ((GDestroyNotify) run_free);
  s.late_ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_print ("stress-commands: seed %u, %d runs at once on %d tokens, %d%% in containers, %d%% of those killed\n",
           s.seed, s.processes, s.capacity, s.container_percent, s.kill_percent);
  if (s.fuse_seconds > 0)
    {
      g_autofree char *view_pool = g_build_filename (s.root, "view", "cmd", NULL);
      g_autofree char *stderr_folder = g_build_filename (s.root, "stderr", NULL);
      g_autofree char *fuse_text = g_strdup_printf ("[resource cmd]\ntype=countertoken\npath=%s\ntotal=%d\n"
                                                    "min-age=1\n", view_pool, s.capacity);

      s.fuse_config = g_build_filename (s.root, "fuse-host.conf", NULL);
      s.fuse_state = g_build_filename (s.root, "fuse-host-state", NULL);
      if (!g_file_set_contents (s.fuse_config, fuse_text, -1, &error))
        g_error ("%s", error->message);
      g_assert_cmpint (g_mkdir_with_parents (s.fuse_state, 0700), ==, 0);
      g_assert_cmpint (g_mkdir_with_parents (stderr_folder, 0700), ==, 0);
      start_fuse_host (&s);
      if (s.fuse_joins)
        g_print ("stress-commands: the real folder's runs go alone for %.0f s, then a host on a FUSE view (%s) "
                 "joins, %d at once\n", s.fuse_seconds, s.fuse_name, s.processes);
      else
        g_print ("stress-commands: a host on a FUSE view (%s) runs %d at once alone for %.0f s, then beside the "
                 "real folder's\n", s.fuse_name, s.processes, s.fuse_seconds);
    }

  began = g_get_monotonic_time ();
  began_real = g_get_real_time ();
  end = began + (gint64) (s.seconds * G_USEC_PER_SEC);
  real_from = began + (gint64) (s.fuse_seconds * G_USEC_PER_SEC);
  /* With the FUSE host, whatever the load: the real folder's runs start
   * once one of its runs ran its command, and the runs go on past --seconds
   * (120 s at most) until a run started once both marks were seen was
   * refused on each side. */
  while (g_get_monotonic_time () < end ||
         (s.fuse_host != NULL && g_get_monotonic_time () < end + 120 * G_USEC_PER_SEC &&
          !(s.late_refused[0] > 0 && s.late_refused[1] > 0) && s.late_granted == 0))
    {
      tend (&s);
      watch_marks (&s);
      /* Side 0 on the real folder (once the FUSE host ran alone, or from
       * the start when it joins), 1 on the FUSE host (from the start, or
       * once the real folder's runs went alone and killed a container).
       * Once the pool is refused, runs end at once: a run every 50 ms
       * each side is enough to show it. */
      for (int side = 0; side < 2; side++)
        {
          gboolean first = s.fuse_joins ? side == 0 : side == 1;
          /* A kill of a command seen running, not just of a run: one
           * sent while it waited may leave the audit no kill of a
           * running command (a loaded machine starts few commands). */
          gboolean alone_done = g_get_monotonic_time () >= real_from &&
                                (s.fuse_joins ? s.kills_running > 0 : s.fuse_ran > 0);
          /* With --fuse-host-joins the FUSE host waits for that kill up
           * to a minute past --seconds (the runs go on until then). */
          gint64 alone_until = end + (s.fuse_joins ? 60 * G_USEC_PER_SEC : 0);

          if ((side == 1 && s.fuse_host == NULL) ||
              (s.fuse_host != NULL && !first && !alone_done && g_get_monotonic_time () < alone_until) ||
              (s.fuse_host == NULL && g_get_monotonic_time () < real_from))
            continue;
          while (running_on (&s, side == 1) < (guint) s.processes &&
                 (s.marks_at == 0 || g_get_monotonic_time () >= next[side]))
            {
              spawn_run (&s, rand, side == 1);
              next[side] = g_get_monotonic_time () + 50000;
              if (side == 0 && real_started == 0)
                real_started = g_get_monotonic_time ();
            }
        }
      g_usleep (5000);
    }
  /* Every run ends: they wait at most for the others' commands. */
  end = g_get_monotonic_time () + 300 * G_USEC_PER_SEC;
  while (tend (&s) > 0 && g_get_monotonic_time () < end)
    g_usleep (5000);
  if (s.runs->len > 0)
    {
      g_printerr ("stress-commands: PROBLEM: %u runs still running after 300 s\n", s.runs->len);
      status = 1;
    }

  most = audit (&s, &starts, &ends, &kills, &fuse_starts, &late_starts);
  g_print ("stress-commands: runs started %u (%u in containers), killed %u; commands started %u, ended %u, "
           "killed running %u; at most %d at once of %d\n",
           s.started, s.in_containers, s.kills, starts, ends, kills, most, s.capacity);
  if (s.fuse_host != NULL)
    {
      g_print ("stress-commands: FUSE host: %u runs, %u commands started; both hosts' marks seen %s; "
               "refused once seen: %u on the real folder, %u on the FUSE view (%u before); granted once seen: %u "
               "(%u commands started)\n",
               s.fuse_started, fuse_starts, s.marks_at != 0 ? "yes" : "never", s.late_refused[0], s.late_refused[1],
               s.early_refused, s.late_granted, late_starts);
      g_print ("stress-commands: real folder runs from %.1f s, both hosts' marks seen at %.1f s\n",
               (real_started - began) / 1e6, s.marks_at != 0 ? (s.marks_at - began_real) / 1e6 : -1.0);
      if (fuse_starts == 0 && !s.fuse_joins)
        {
          g_printerr ("stress-commands: PROBLEM: no command ran on the FUSE host\n");
          status = 1;
        }
      if (s.marks_at == 0 || s.late_refused[0] == 0 || s.late_refused[1] == 0)
        {
          g_printerr ("stress-commands: PROBLEM: the pool was not seen refused on each side once both hosts' "
                      "marks were there\n");
          status = 1;
        }
      if (s.late_granted > 0 || late_starts > 0)
        {
          g_printerr ("stress-commands: PROBLEM: the pool was shared: %u runs started once both hosts' marks were "
                      "there were granted (%u of their commands started)\n", s.late_granted, late_starts);
          status = 1;
        }
    }
  if (most > s.capacity)
    {
      g_printerr ("stress-commands: PROBLEM: over-allocation: %d commands ran at once on %d tokens\n", most,
                  s.capacity);
      status = 1;
    }
  if (s.failed > 0)
    {
      g_printerr ("stress-commands: PROBLEM: %u runs that were not killed failed\n", s.failed);
      status = 1;
    }
  /* With the FUSE host first, the real folder's runs (in containers or
   * not) come once the pool is to be refused: none of them is killed
   * running. */
  if (starts == 0 || ends == 0 || (kills == 0 && (s.fuse_host == NULL || s.fuse_joins)) || s.in_containers == 0)
    {
      g_printerr ("stress-commands: PROBLEM: the run proved nothing (no command started, ended, or was killed "
                  "running in a container)\n");
      status = 1;
    }

  /* Nothing leaked: the whole capacity at once, after min-age. */
  {
    g_autofree char *need = g_strdup_printf ("cmd=%d", s.capacity);
    g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);

    g_usleep (2 * G_USEC_PER_SEC);
    g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", s.state, TRUE);
    if (s.fuse_host != NULL)
      {
        g_autoptr(GSubprocess) retire = NULL;

        /* The FUSE host retired: its namespaces (and bindfs) gone, its
         * marks removed as tessera(1) says, the pool is this host's. */
        if (!g_output_stream_close (g_subprocess_get_stdin_pipe (s.fuse_host), NULL, &error) ||
            !g_subprocess_wait (s.fuse_host, NULL, &error))
          g_error ("%s", error->message);
        retire = g_subprocess_launcher_spawn (launcher, &error, s.tool, "--config", s.config, "clean", "--host",
                                              s.fuse_name, "--yes", "cmd", NULL);
        if (retire == NULL || !g_subprocess_wait (retire, NULL, &error))
          g_error ("%s", error->message);
        if (!g_subprocess_get_if_exited (retire) || g_subprocess_get_exit_status (retire) != 0)
          {
            g_printerr ("stress-commands: PROBLEM: tessera clean --host %s --yes cmd failed\n", s.fuse_name);
            status = 1;
          }
      }
    last = g_subprocess_launcher_spawn (launcher, &error, s.tool, "--config", s.config, "run", "--no-wait",
                                        "--need", need, "--", "true", NULL);
    if (last == NULL || !g_subprocess_wait (last, NULL, &error))
      g_error ("%s", error->message);
    if (!g_subprocess_get_if_exited (last) || g_subprocess_get_exit_status (last) != 0)
      {
        g_autoptr(GSubprocess) st = g_subprocess_launcher_spawn (launcher, NULL, s.tool, "--config", s.config,
                                                                 "status", NULL);

        if (st != NULL)
          g_subprocess_wait (st, NULL, NULL);
        g_printerr ("stress-commands: PROBLEM: leak: the whole capacity could not be had at the end\n");
        status = 1;
      }
  }
  if (status == 0)
    {
      const char *rm[] = { "rm", "-rf", s.root, NULL };

      if (!g_spawn_sync (NULL, (char **) rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL))
        g_printerr ("stress-commands: could not remove %s\n", s.root);
    }
  else
    g_printerr ("stress-commands: kept %s (seed %u)\n", s.root, s.seed);
  g_ptr_array_unref (s.runs);
  g_hash_table_unref (s.late_ids);
  g_clear_object (&s.fuse_host);
  g_free (s.fuse_config);
  g_free (s.fuse_state);
  g_free (s.fuse_name);
  g_free (s.hosts);
  g_free (s.tool);
  g_free (s.root);
  g_free (s.config);
  g_free (s.log_path);
  g_free (s.state);
  return status;
}
