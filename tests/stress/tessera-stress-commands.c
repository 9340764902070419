/* tessera-stress-commands.c: `tessera run` commands, some in containers
 * with state folders of their own, killed at random; the commands
 * themselves say when they run, and no more of them run at once than the
 * pool has tokens.
 *
 *   tessera-stress-commands --tool PATH [--seconds N] [--processes N]
 *                           [--container-percent P] [--kill-percent P]
 *                           [--capacity N] [--seed N]
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
 * the driver writes "k TIME ID" just before the kill).
 *
 * The auditor trusts neither the library nor the pool's files: it counts
 * the commands running at each moment from the log, a killed one ending at
 * its "k" (it is dead by then or soon after, and no token comes back from
 * it before it is). More than --capacity at once is over-allocation. At
 * the end one last run takes the whole capacity at once (--no-wait): a
 * killed holder that was never given back is a leak. Exit status 0 when
 * both hold and the run did start, kill and finish commands.
 *
 * Needs root (namespaces), as CI has.
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
#include <sys/syscall.h>
#include <unistd.h>

typedef struct
{
  GSubprocess *process;
  char *id;
  gboolean container;
  gint64 kill_at;             /* monotonic µs, 0: never */
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
} Stress;

static void
run_free (Run *run)
{
  if (run->pidfd >= 0)
    close (run->pidfd);
  g_clear_object (&run->process);
  g_free (run->id);
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
spawn_run (Stress *s, GRand *rand)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL;
  Run *run = g_new0 (Run, 1);
  const char *identifier;

  run->id = g_strdup_printf ("c%u", ++s->serial);
  run->container = g_rand_int_range (rand, 0, 100) < s->container_percent;
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
      if (g_rand_int_range (rand, 0, 100) < s->kill_percent)
        run->kill_at = g_get_monotonic_time () + g_rand_int_range (rand, 10000, 1500000);
    }
  for (const char *const *a = (const char *[]) { s->tool, "--config", s->config, "run", "--need", "cmd=1",
                                                  "--name", run->id, "--", "sh", "-c", command, NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (launcher, "XDG_STATE_HOME", s->state, TRUE);
  run->process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  if (run->process == NULL)
    g_error ("cannot start %s: %s", s->tool, error->message);
  identifier = g_subprocess_get_identifier (run->process);
  run->pidfd = identifier ? (int) syscall (SYS_pidfd_open, (pid_t) atoi (identifier), 0) : -1;
  g_subprocess_wait_async (run->process, NULL, run_exited, run);
  g_ptr_array_add (s->runs, run);
  s->started++;
}

/* Kills what is due, reaps what ended; returns how many still run. */
static guint
tend (Stress *s)
{
  gint64 now = g_get_monotonic_time ();

  while (g_main_context_iteration (NULL, FALSE))
    ;
  for (guint i = 0; i < s->runs->len;)
    {
      Run *run = g_ptr_array_index (s->runs, i);

      if (!run->done && run->kill_at != 0 && now >= run->kill_at && run->pidfd >= 0)
        {
          log_kill (s, run->id);
          if (syscall (SYS_pidfd_send_signal, run->pidfd, SIGKILL, NULL, 0) == 0)
            s->kills++;
          run->kill_at = 0;
        }
      if (run->done)
        {
          int status = g_subprocess_get_if_exited (run->process) ? g_subprocess_get_exit_status (run->process) : -1;

          /* Killed (by us), or the command's own 0; anything else is a
           * run that failed, said at the end. */
          if (status != 0 && !(g_subprocess_get_if_signaled (run->process) ||
                               (run->container && status == 128 + SIGKILL)))
            s->failed++;
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
 * ended and were killed. */
static int
audit (Stress *s, guint *starts, guint *ends, guint *kills)
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
  *starts = *ends = *kills = 0;
  for (guint i = 0; i < events->len; i++)
    {
      Event *e = &g_array_index (events, Event, i);

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
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = NULL;
  g_autofree char *pool = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GSubprocess) last = NULL;
  gint64 end;
  guint starts, ends, kills;
  int most, status = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || s.tool == NULL || s.capacity < 1)
    {
      g_printerr ("tessera-stress-commands: %s\n", error ? error->message : "--tool PATH is needed");
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
  g_print ("stress-commands: seed %u, %d runs at once on %d tokens, %d%% in containers, %d%% of those killed\n",
           s.seed, s.processes, s.capacity, s.container_percent, s.kill_percent);

  end = g_get_monotonic_time () + (gint64) (s.seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    {
      while (tend (&s) < (guint) s.processes)
        spawn_run (&s, rand);
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

  most = audit (&s, &starts, &ends, &kills);
  g_print ("stress-commands: runs started %u (%u in containers), killed %u; commands started %u, ended %u, "
           "killed running %u; at most %d at once of %d\n",
           s.started, s.in_containers, s.kills, starts, ends, kills, most, s.capacity);
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
  if (starts == 0 || ends == 0 || kills == 0 || s.in_containers == 0)
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
  g_free (s.tool);
  g_free (s.root);
  g_free (s.config);
  g_free (s.log_path);
  g_free (s.state);
  return status;
}
