/* tessera-run.c: `tessera run`: take what a command needs, run it,
 * fence it when a lease is lost, and give everything back.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tessera-config.h"
#include "tessera-fence.h"

#include "tessera-commands.h"
#include "tessera-describe.h"
#include "tessera-options.h"
#include "tessera-output.h"
#include "tessera-tool.h"
#include "tessera-child.h"

typedef struct
{
  char *name;
  char *request;
  TesseraTrackedDynamicResource *resource;
  TesseraDynamicDependencyLock *lock;
} Need;

/* Makes the run's job folder (tessera_pool_part_make_job_folder()):
 * under TESSERA_JOB_FOLDERS when set, else in the first pool's runs/UID
 * (every judge of that pool probes our job lock there; the first in a
 * folder: an etcd pool judges by its leases), else, when that cannot be
 * had, in the state folder's jobs/. */
static char *
dup_job_folder (GPtrArray *needs, const char *state_dir, char **identifier, int *folder_fd, GError **error)
{
  const char *setting = g_getenv ("TESSERA_JOB_FOLDERS");
  const char *pool = NULL;
  g_autofree char *root = NULL;

  if (setting != NULL && *setting != '\0')
    {
      if (!g_path_is_absolute (setting))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("TESSERA_JOB_FOLDERS must be an absolute path, not “%s”"), setting);
          return NULL;
        }
      return tessera_pool_part_make_job_folder (NULL, setting, identifier, folder_fd, error);
    }
  for (guint i = 0; i < needs->len; i++)
    {
      TesseraTrackedDynamicResource *resource = ((Need *) g_ptr_array_index (needs, i))->resource;
      g_autofree char *store = NULL;

      g_object_get (resource, "store", &store, NULL);
      if (store == NULL || g_str_equal (store, "folder"))
        {
          pool = tessera_tracked_dynamic_resource_get_lock_folder (resource);
          break;
        }
    }
  root = g_build_filename (state_dir, TESSERA_JOB_STATE_FOLDER, NULL);
  return tessera_pool_part_make_job_folder (pool, root, identifier, folder_fd, error);
}

static void
need_free (Need *need)
{
  g_free (need->name);
  g_free (need->request);
  g_clear_object (&need->lock);
  g_free (need);
}

/* TESSERA_FENCING_TOKEN=NAME:TOKEN[,NAME:TOKEN…]: each grant's fencing
 * token, in the order of the names, for storage that refuses a stale
 * holder's writes; unset (not inherited from an outer run) when no
 * resource gives one. */
static char **
set_fencing_tokens (char **env, GPtrArray *needs)
{
  g_autoptr(GString) tokens = g_string_new (NULL);

  for (guint i = 0; i < needs->len; i++)
    {
      Need *need = g_ptr_array_index (needs, i);
      gint64 token = tessera_dynamic_dependency_lock_get_fencing_token (need->lock);

      if (token > 0)
        g_string_append_printf (tokens, "%s%s:%" G_GINT64_FORMAT, tokens->len > 0 ? "," : "", need->name, token);
    }
  if (tokens->len == 0)
    return g_environ_unsetenv (env, "TESSERA_FENCING_TOKEN");
  return g_environ_setenv (env, "TESSERA_FENCING_TOKEN", tokens->str, TRUE);
}

static int
compare_needs (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(Need **) a)->name, (*(Need **) b)->name);
}

static gboolean interactive;

/* Static: the signal thread may look at it until the process exits. */
static RunState run_state;

static void
clear_line (void)
{
  if (interactive)
    g_printerr ("\r\033[K");
}

/* How often a log (stderr not a terminal) hears that we still wait. */
#define WAITING_REPORT_INTERVAL (60 * G_USEC_PER_SEC)

/* What we wait for, why (@why: the type's refusal, or NULL) and who
 * holds it: on a terminal, one self-updating line; in a log, one line
 * when the wait starts (@since == @last_report) and one a minute after
 * the last, as srun does. @grow: the request is larger than the
 * resource, and the run waits for it to grow (its holders do not
 * matter). */
static void
show_waiting (Need *need, const char *why, gboolean grow, gint64 since, gint64 *last_report)
{
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (need->resource);
  g_autoptr(GString) holders = g_string_new (NULL);
  struct winsize ws = { 0 };
  guint width = ioctl (2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
  gint64 now = g_get_monotonic_time ();
  gboolean later = !interactive && *last_report != since;
  guint minutes = (guint) ((now - since) / (60 * G_USEC_PER_SEC));
  g_autofree char *what = NULL;
  g_autofree char *what_why = NULL;
  g_autofree char *held = NULL;
  g_autofree char *line = NULL;

  if (!interactive && *last_report != since && now - *last_report < WAITING_REPORT_INTERVAL)
    return;
  for (guint i = 0; !grow && i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
      g_autofree char *name = holder_name (lock_file);
      g_autofree char *job = escape_name (name, TRUE);

      if (process != NULL)
        g_string_append_printf (holders, "%s%s (pid %d)", i ? ", " : "", job, (int) tessera_process_get_pid (process));
      else
        g_string_append_printf (holders, "%s%s", i ? ", " : "", job);
    }
  if (grow)
    what = later ? g_strdup_printf (_("still waiting for the total of %s to grow after %u min"), need->name, minutes)
                 : g_strdup_printf (_("waiting for the total of %s to grow"), need->name);
  else
    what = later ? g_strdup_printf (_("still waiting for %s after %u min"), need->name, minutes)
                 : g_strdup_printf (_("waiting for %s"), need->name);
  /* Translators: what a run waits for, then the resource type's reason:
   * "waiting for gpu (gpu has fewer than 2 device(s) free)" */
  if (why != NULL)
    {
      /* A type's words may carry a store's (a server's answer). */
      g_autofree char *shown_why = escape_name (why, TRUE);

      what_why = g_strdup_printf (_("%s (%s)"), what, shown_why);
    }
  else
    what_why = g_strdup (what);
  /* Translators: "waiting for cpu (…), held by train@host-1 (pid 42)" */
  if (holders->len)
    held = g_strdup_printf (_("%s, held by %s"), what_why, holders->str);
  line = g_strdup_printf (_("tessera: %s"), held != NULL ? held : what_why);
  if (!interactive)
    {
      g_printerr ("%s\n", line);
      *last_report = now;
      return;
    }
  if (g_utf8_strlen (line, -1) >= width)
    {
      g_autofree char *cut = g_utf8_substring (line, 0, width - 2);
      g_printerr ("\r\033[K%s…", cut);
    }
  else
    g_printerr ("\r\033[K%s", line);
}

static Need *
need_of (GPtrArray *needs, GPtrArray *deps, TesseraDynamicDependency *dep)
{
  for (guint i = 0; i < deps->len; i++)
    if (g_ptr_array_index (deps, i) == dep)
      return g_ptr_array_index (needs, i);
  return g_ptr_array_index (needs, 0);
}

/* Acquires every need at once, or none (see
 * tessera_dynamic_dependency_locks_acquire_all): a waiting run holds
 * nothing, and two runs never deadlock. A need larger than its resource
 * ends the run at once (69), unless @wait_for_capacity: then it waits
 * for the resource to grow, as the library does. */
static int
acquire_all (GPtrArray *needs, TesseraJob *job, TesseraDynamicDependencyLocks *locks, double timeout,
             gboolean no_wait, gboolean wait_for_capacity, RunState *state, int report)
{
  /* Stopped on every return: a waiting command is guarded (a run that
   * does not wait starts no thread for it). */
  g_auto(GateGuard) guard = { NULL, -1, { -1, -1 }, NULL };
  g_autoptr(GPtrArray) deps = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 deadline = no_wait ? g_get_monotonic_time ()
                    : timeout >= 0 ? g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC) : -1;
  gboolean shown = FALSE;
  gint64 since = 0, last_report = 0;
  g_autofree char *told_reason = NULL;
  GPtrArray *held;

  for (guint i = 0; i < needs->len; i++)
    {
      Need *need = g_ptr_array_index (needs, i);
      g_autoptr(GError) error = NULL;
      TesseraDynamicDependency *dep =
        tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (need->resource), job,
                                                    need->request, &error);

      if (dep == NULL)
        return fail (oserr_or (error, EXIT_USAGE), "%s: %s", need->name, error->message);
      g_ptr_array_add (deps, dep);
    }
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gint64 now = g_get_monotonic_time ();
      /* One try first, to say at once that we wait; then slices to
       * refresh the waiting line (events still wake us; a signal cancels
       * the wait). */
      double slice = !shown ? 0
                     : interactive ? 1.0
                     : MAX (0, (last_report + WAITING_REPORT_INTERVAL - now) / 1e6);
      const char *reason;
      const char *why;
      const GError *refusal;
      Need *need;
      gboolean acquired;
      gboolean grow;

      if (deadline >= 0)
        slice = MIN (slice, MAX (0, (deadline - now) / 1e6));
      /* The first try's warnings are held (and the opening's, see
       * defer_log()): when it fails on a folder that cannot be read, the
       * error says what the warning of the look did. */
      if (!shown)
        hold_log ();
      acquired = tessera_dynamic_dependency_locks_acquire_all (locks, (TesseraDynamicDependency **) deps->pdata,
                                                               deps->len, slice, state->cancel, &error);
      if (!shown)
        {
          if (error != NULL)
            drop_log_said_by (error->message);
          if (tessera_dynamic_dependency_locks_get_refusal (locks) != NULL)
            drop_log_said_by (tessera_dynamic_dependency_locks_get_refusal (locks)->message);
          release_log (TRUE);
        }
      if (acquired)
        break;
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          clear_line ();
          return 128 + g_atomic_int_get (&state->pending_signal);
        }
      need = need_of (needs, deps, tessera_dynamic_dependency_locks_get_waiting_for (locks));
      if (!g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
        {
          g_autofree char *message =
            with_denied_cause (error->message, error, tessera_tracked_dynamic_resource_get_lock_folder (need->resource));

          clear_line ();
          return fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_REQUEST_TOO_LARGE) ? EXIT_UNAVAILABLE
                       : oserr_or (error, is_io_error (error) ? EXIT_IOERR : 1), "%s: %s", need->name, message);
        }
      /* The type's refusal says why, in its words: the resource is
       * full for this request, or smaller than it. Without one, a peer
       * keeps the folder locked: said once, or with the failure. */
      refusal = tessera_dynamic_dependency_locks_get_refusal (locks);
      grow = g_error_matches (refusal, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY);
      why = refusal != NULL ? refusal->message : NULL;
      reason = refusal == NULL ? tessera_dynamic_dependency_locks_get_waiting_reason (locks) : NULL;
      /* Larger than the resource, which no release will change: as
       * Slurm refuses a job larger than the cluster. */
      if (grow && !wait_for_capacity)
        {
          clear_line ();
          /* Translators: "gpu: gpu has 0 device(s) with at least 0 MiB,
           * fewer than the 1 asked for (--wait-for-capacity waits for it
           * to grow)"; the second %s is the resource type's reason */
          return fail (EXIT_UNAVAILABLE, _("%s: %s (--wait-for-capacity waits for it to grow)"), need->name, why);
        }
      if (deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          clear_line ();
          if (why == NULL && reason != NULL && g_strcmp0 (reason, told_reason) != 0)
            why = reason;
          if (why != NULL)
            return fail (state->conflict_status,
                         no_wait ? _("%s is not available: %s") : _("timed out waiting for %s: %s"), need->name, why);
          return fail (state->conflict_status, no_wait ? _("%s is not available") : _("timed out waiting for %s"),
                       need->name);
        }
      if (!shown)
        {
          since = last_report = g_get_monotonic_time ();
          if (report >= 0)
            gate_guard_start (&guard, state, report);
        }
      if (reason != NULL && g_strcmp0 (reason, told_reason) != 0)
        {
          clear_line ();
          g_printerr (_("tessera: %s\n"), reason);
          g_free (told_reason);
          told_reason = g_strdup (reason);
        }
      show_waiting (need, why, grow, since, &last_report);
      shown = TRUE;
    }
  if (shown)
    clear_line ();
  /* The locks come in the order of the needs. */
  held = tessera_locks_get_locks (TESSERA_LOCKS (locks));
  for (guint i = 0; i < needs->len; i++)
    ((Need *) g_ptr_array_index (needs, i))->lock = g_object_ref (g_ptr_array_index (held, i));
  return 0;
}

/* A lock file of ours that disappears while the command runs (a
 * `clean --force`, a peer's mistaken verdict, an older Tessera) means our
 * share may be handed to another run: say so once per resource, and with
 * --on-lost=end end the command (SIGTERM). Checked every second, by core
 * (TesseraOwnLockFile). */
typedef struct
{
  GPtrArray *files;     /* TesseraOwnLockFile, one per need (NULL: none) */
  GPtrArray *names;     /* the needs' names */
  GHashTable *told;     /* lock files already reported */
  gboolean end;
  RunState *state;
} LostWatch;

/* A free function for the lock files, some of which are none. */
static void
unref_own_lock_file (gpointer file)
{
  if (file != NULL)
    g_object_unref (file);
}

static gboolean
check_lost (gpointer data)
{
  LostWatch *w = data;

  for (guint i = 0; i < w->files->len; i++)
    {
      TesseraOwnLockFile *file = g_ptr_array_index (w->files, i);
      TesseraOwnLockFileState state;
      g_autofree char *shown = NULL;

      if (file == NULL || g_hash_table_contains (w->told, file))
        continue;
      state = tessera_own_lock_file_check (file);
      if (state == TESSERA_OWN_LOCK_FILE_UNCHANGED)
        continue;
      g_hash_table_add (w->told, file);
      shown = escape_name (tessera_own_lock_file_get_path (file), TRUE);
      if (state == TESSERA_OWN_LOCK_FILE_GONE)
        g_printerr (_("tessera: %s: this run's lock file %s is gone: its share may be handed to another run\n"),
                    (const char *) g_ptr_array_index (w->names, i), shown);
      else
        g_printerr (_("tessera: %s: this run's lock file %s was rewritten by someone else: "
                      "its share may be handed to another run\n"),
                    (const char *) g_ptr_array_index (w->names, i), shown);
      if (w->end)
        signal_command (SIGTERM, w->state);
    }
  return G_SOURCE_CONTINUE;
}

static char *
job_task_id (const char *name, const char *command)
{
  g_autofree char *base = g_path_get_basename (name ? name : command);
  GString *s = g_string_new (NULL);

  for (const char *p = base; *p && s->len < 64; p++)
    g_string_append_c (s, g_ascii_isalnum (*p) || *p == '-' || *p == '_' ? *p : (*p == '.' ? '_' : '-'));
  if (s->len == 0)
    g_string_append (s, "run");
  return g_string_free (s, FALSE);
}

/* A run's end: its job files go through the folder it made (see
 * tessera_job_remove_file), then the folder, which is empty by then
 * (rmdir removes no link, and no folder with anything in it). */
static void
remove_job_files (TesseraJob *job, const char *job_dir)
{
  g_autofree char *lock_path = tessera_job_dup_lock_path (job);
  g_autofree char *lock_name = g_path_get_basename (lock_path);

  tessera_job_remove_file (job, TESSERA_JOB_LOCKS_FILE);
  tessera_job_unhold (job);
  tessera_job_remove_file (job, lock_name);
  g_rmdir (job_dir);
}

/* What a holder records for people (status, the audit log): the command
 * it runs and the batch job it runs in (Slurm's). */
static void
describe_holder (TesseraProcess *process, char **command)
{
  tessera_process_set_command_line (process, (const char * const *) command);
  tessera_process_set_batch_job_id (process, g_getenv ("SLURM_JOB_ID"));
}

/* Holds the job (its lock, kept by the command too) and forks the
 * command behind its gate; the job names it from now on. An exit status
 * on failure, else 0. */
static int
start_command (GPtrArray *needs, TesseraJob *job, char **command, Gated *child, int *job_lock_number,
               TesseraProcess **child_process)
{
  g_autoptr(GPtrArray) resources = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int job_lock_fd, status = 0;

  /* The job lock is taken before the command is forked, which keeps a
   * descriptor of it: the lock then lasts exactly as long as the holding
   * (flock(1) passes its lock the same way), which is what a judge that
   * cannot see our pids (another host or pid namespace) uses. */
  if (!tessera_job_hold (job, &error))
    return fail (oserr_or (error, is_io_error (error) ? EXIT_IOERR : 1), "%s", error->message);
  job_lock_fd = tessera_job_dup_lock_fd (job);

  /* The command is the wrapper's stand-in: it gets its stdin, its other
   * descriptors and its process group. It waits behind a gate that opens
   * only once its locks are held and the lock files name it: they stay
   * valid if this wrapper is killed, and any peer reclaims them once the
   * command is gone. Were this wrapper killed before the gate opens, the
   * gate reads end-of-file and the command never runs without a valid
   * holding. */
  for (guint i = 0; i < needs->len; i++)
    g_ptr_array_add (resources, ((Need *) g_ptr_array_index (needs, i))->resource);
  gate_die_with_wrapper = tessera_fence_needed (resources);
  /* And what the command starts comes back to us when orphaned, for
   * the fence to end it too. */
  if (gate_die_with_wrapper && prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    g_printerr (_("tessera: cannot become the subreaper of the command's processes: %s\n"), g_strerror (errno));
  /* A command that is gone before its gate opens must not kill us. */
  signal (SIGPIPE, SIG_IGN);
  if (!gated_spawn (command, job_lock_fd, child, &error))
    status = fail (oserr_or (error, 1), "%s", error->message);
  /* The command has its copy, under the same number. */
  *job_lock_number = job_lock_fd;
  if (job_lock_fd >= 0)
    close (job_lock_fd);
  if (status == 0)
    {
      *child_process = tessera_process_new_local (child->pid);
      describe_holder (*child_process, command);
      if (!tessera_job_set_process (job, *child_process, &error))
        status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
    }
  return status;
}

/* -n is --no-wait, as in flock(1); it was --need: said when it is
 * followed by what --need takes. */
static gboolean run_short_n;
static gboolean run_no_wait;

static gboolean
set_no_wait (const char *option_name, const char *value, gpointer data, GError **error)
{
  run_no_wait = TRUE;
  if (g_str_equal (option_name, "-n"))
    run_short_n = TRUE;
  return TRUE;
}

/* The exit status -E N (--conflict-exit-code) gives: 0 to 255, as
 * flock(1)'s. */
static gboolean
parse_exit_code (const char *text, int *code, int *status)
{
  guint64 value;

  if (!g_ascii_string_to_unsigned (text, 10, 0, 255, &value, NULL))
    {
      *status = fail (EXIT_USAGE, _("--conflict-exit-code wants an exit status from 0 to 255, not “%s”"), text);
      return FALSE;
    }
  *code = (int) value;
  return TRUE;
}

/* What `run` was asked, once its options are parsed and checked. */
typedef struct
{
  char **need_args;
  char **command;
  char *job_name;
  double timeout;            /* seconds, or -1 for ever */
  gboolean no_wait;
  gboolean wait_for_capacity;
  int conflict_status;
  gboolean on_lost_end;
} RunOptions;

static void
run_options_clear (RunOptions *options)
{
  g_clear_pointer (&options->need_args, g_strfreev);
  g_clear_pointer (&options->command, g_strfreev);
  g_clear_pointer (&options->job_name, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunOptions, run_options_clear)

/* Parses and checks run's options into @options: FALSE, with one line
 * said and *@status set, when they are wrong. */
static gboolean
parse_run_options (int argc, char **argv, RunOptions *options, int *status)
{
  g_autofree char *timeout_text = NULL;
  g_autofree char *on_lost_text = NULL;
  g_autofree char *conflict_text = NULL;
  int after_dashes = -1;
  /* A callback is given as data; ISO C has no cast between the two. */
  const union { GOptionArgFunc func; gpointer data; } no_wait_callback = { .func = set_no_wait };
  const GOptionEntry entries[] = {
    { "need", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options->need_args,
      N_("A resource the command needs, with what of it (e.g. cpu=4, gpu=1:16G, db=shared)"), N_("NAME[=REQUEST]") },
    { "timeout", 'w', 0, G_OPTION_ARG_STRING, &timeout_text, N_("Give up after SECONDS (exit 75, or -E's)"),
      N_("SECONDS") },
    { "no-wait", 'n', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, no_wait_callback.data,
      N_("Give up at once when something is not free (exit 75, or -E's)"), NULL },
    { "conflict-exit-code", 'E', 0, G_OPTION_ARG_STRING, &conflict_text,
      N_("The exit status when the run gives up, at once or at its timeout (75 by default)"), N_("N") },
    { "wait-for-capacity", 0, 0, G_OPTION_ARG_NONE, &options->wait_for_capacity,
      N_("Wait for a resource smaller than the request to grow, instead of failing at once (exit 69)"), NULL },
    { "name", 0, 0, G_OPTION_ARG_STRING, &options->job_name, N_("The job's name in lock files (default: the command's)"),
      N_("NAME") },
    { "on-lost", 0, 0, G_OPTION_ARG_STRING, &on_lost_text,
      N_("When a lock file of this run disappears while the command runs: warn (default) or end the command"),
      N_("warn|end") },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &options->command, NULL, NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("--need NAME[=REQUEST]… [--timeout SECONDS | --no-wait] [-E N] [--wait-for-capacity] -- COMMAND "
                   "[ARG…]"),
                 _("Run COMMAND once every resource it needs is held, with the environment the locks provide "
                   "(TESSERA_LOCKS, CUDA_VISIBLE_DEVICES…), and give them back when it ends. "
                   "The exit status is the command's (128+N when killed by signal N)."), entries);
  char **command;

  options->timeout = -1;
  options->conflict_status = EXIT_TEMPFAIL;
  g_option_context_set_strict_posix (context, TRUE);
  /* After the first “--”: the command, unless the parse stops before. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        after_dashes = argc - i - 1;
        break;
      }
  if (!parse (context, &argc, &argv, status))
    return FALSE;
  options->no_wait = run_no_wait;
  command = options->command;
  /* `-n cpu=4 -- COMMAND`, -n taken for --need: the parse stopped at
   * cpu=4, before the “--”. */
  if (run_short_n && (options->need_args == NULL ||
                      (command != NULL && after_dashes >= 0 && g_strv_length (command) > (guint) after_dashes) ||
                      (command != NULL && command[0] != NULL && strchr (command[0], '=') != NULL)))
    *status = fail (EXIT_USAGE, _("-n means --no-wait (as in flock(1)): name what the command needs with "
                                  "--need NAME[=REQUEST]"));
  else if (command == NULL || command[0] == NULL)
    *status = fail (EXIT_USAGE, _("no command to run (put it after “--”)"));
  else if (options->need_args == NULL || options->need_args[0] == NULL)
    *status = fail (EXIT_USAGE, _("nothing needed: give at least one --need NAME[=REQUEST]"));
  else if (conflict_text != NULL && !parse_exit_code (conflict_text, &options->conflict_status, status))
    ;
  else if (timeout_text != NULL && !parse_seconds ("--timeout", timeout_text, TRUE, &options->timeout, status))
    ;
  else if (options->no_wait && timeout_text != NULL)
    *status = fail (EXIT_USAGE, _("--timeout and --no-wait go separately"));
  else if (on_lost_text != NULL && !g_str_equal (on_lost_text, "warn") && !g_str_equal (on_lost_text, "end"))
    *status = fail (EXIT_USAGE, _("--on-lost wants “warn” or “end”, not “%s”"), on_lost_text);
  else
    {
      if (isinf (options->timeout))
        options->timeout = -1;   /* for ever, as without --timeout */
      options->on_lost_end = g_strcmp0 (on_lost_text, "end") == 0;
      return TRUE;
    }
  return FALSE;
}

/* Opens each resource @need_args names, into @needs sorted by name (the
 * order every run takes them in). 0, or the status of a failure said. */
static int
open_needs (TesseraConfig *config, char **need_args, GPtrArray *needs)
{
  int status = 0;

  for (guint i = 0; need_args[i] != NULL; i++)
    {
      g_auto(GStrv) kv = g_strsplit (need_args[i], "=", 2);
      Need *need;

      if (kv[0] == NULL || *kv[0] == '\0')   /* g_strsplit ("") is empty */
        return fail (EXIT_USAGE, _("“--need %s” names no resource (give NAME or NAME=REQUEST)"), need_args[i]);
      need = g_new0 (Need, 1);
      need->name = g_strdup (kv[0]);
      need->request = g_strdup (kv[1]);
      g_ptr_array_add (needs, need);
      for (guint j = 0; j + 1 < needs->len; j++)
        if (g_str_equal (((Need *) g_ptr_array_index (needs, j))->name, need->name))
          return fail (EXIT_USAGE, _("%s is needed twice"), need->name);
      g_mutex_lock (&run_state.lock);
      g_free (run_state.opening);
      run_state.opening = g_strdup (need->name);
      g_mutex_unlock (&run_state.lock);
      need->resource = open_resource (config, need->name, &status);
      if (need->resource == NULL)
        return status;
    }
  g_mutex_lock (&run_state.lock);
  g_clear_pointer (&run_state.opening, g_free);
  g_mutex_unlock (&run_state.lock);
  g_ptr_array_sort (needs, compare_needs);
  return 0;
}

/* A job in experimaestro's layout: <state>/jobs/<id>/<task>, holding
 * <task>.lock and writing <task>.pid. NULL, with *@status, on failure. */
static TesseraJob *
make_job (GPtrArray *needs, const char *job_name, const char *command, char **job_dir_out, int *status)
{
  g_autofree char *state_dir = tessera_config_dup_state_dir ();
  g_autofree char *task_id = job_task_id (job_name, command);
  g_autofree char *identifier = NULL;
  g_autofree char *job_dir = NULL;
  g_autofree char *job_uri = NULL;
  g_autoptr(GError) error = NULL;
  TesseraJob *job;
  int job_dir_fd = -1;

  job_dir = dup_job_folder (needs, state_dir, &identifier, &job_dir_fd, &error);
  if (job_dir == NULL)
    {
      *status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      return NULL;
    }
  job_uri = g_build_filename (job_dir, task_id, NULL);
  /* The job's files go through the folder just checked, never by path. */
  job = tessera_job_new_at (task_id, identifier, job_uri, job_dir_fd, &error);
  close (job_dir_fd);
  if (job == NULL)
    {
      *status = fail (oserr_or (error, EXIT_USAGE), "%s", error->message);
      return NULL;
    }
  *job_dir_out = g_steal_pointer (&job_dir);
  return job;
}

/* A run, from its options to its end: what cmd_run's steps share. */
typedef struct
{
  RunOptions options;
  TesseraConfig *config;
  GPtrArray *needs;                      /* Need, sorted by name */
  TesseraDynamicDependencyLocks *locks;
  TesseraJob *job;
  TesseraProcess *child_process;         /* the command, once forked */
  char *job_dir;
  char *locks_path;                      /* set once everything is held */
  Gated child;
  int job_lock_number;                   /* the command's copy of the job lock, or -1 */
  gboolean fork_first;                   /* the command forked before the wait */
  gboolean acquired;
} Run;

/* In the reverse order of their making. */
static void
run_clear (Run *run)
{
  g_clear_pointer (&run->locks_path, g_free);
  g_clear_pointer (&run->job_dir, g_free);
  g_clear_object (&run->child_process);
  g_clear_object (&run->job);
  g_clear_object (&run->locks);
  g_clear_pointer (&run->needs, g_ptr_array_unref);
  g_clear_pointer (&run->config, tessera_config_free);
  run_options_clear (&run->options);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

/* The first step: parses the options, catches the signals, opens what is
 * needed and makes the job. A run that may wait forks its command now,
 * so that the lock files name it from their first version (one write
 * each). One that may not wait does so once it holds: on a busy resource
 * it then starts nothing (the second write costs less than a fork that
 * comes to nothing); until then its job names this process. 0, or the
 * status of a failure said (with run->job NULL when none was made). */
static int
prepare (Run *run, int argc, char **argv)
{
  RunOptions *options = &run->options;
  g_autoptr(TesseraProcess) self = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (!parse_run_options (argc, argv, options, &status))
    return status;
  /* Signals are caught from here on (opening resources starts threads). */
  run_state.share_terminal = in_terminal_foreground ();
  run_state.cancel = g_cancellable_new ();
  run_state.opening = g_strdup ("");
  run_state.no_wait = options->no_wait;
  run_state.conflict_status = options->conflict_status;
  lock_note_started = TRUE;
  run_state.open_deadline = options->no_wait ? g_get_monotonic_time ()
                            : options->timeout >= 0 ? g_get_monotonic_time () + (gint64) (options->timeout * G_USEC_PER_SEC)
                            : -1;
  quiet_notices = TRUE;
  start_signal_thread (&run_state);
  if ((run->config = load_config (&status)) == NULL)
    return status;
  defer_log ();
  if ((status = open_needs (run->config, options->need_args, run->needs)) != 0)
    return status;
  if ((run->job = make_job (run->needs, options->job_name, options->command[0], &run->job_dir, &status)) == NULL)
    return status;

  run->fork_first = !options->no_wait;
  if (run->fork_first)
    return start_command (run->needs, run->job, options->command, &run->child, &run->job_lock_number,
                          &run->child_process);
  self = tessera_process_new_self ();
  describe_holder (self, options->command);
  if (!tessera_job_set_process (run->job, self, &error))
    return fail (oserr_or (error, EXIT_USAGE), "%s", error->message);
  return 0;
}

/* The second step: takes everything (waiting as told), saves locks.json
 * where the command finds it, forks the command now if it was not forked
 * first, and from then on hands the signals to it. 0, or the status of a
 * failure said. */
static int
wait_for_needs (Run *run)
{
  RunOptions *options = &run->options;
  g_autoptr(GError) error = NULL;
  int status;

  interactive = isatty (2);
  status = acquire_all (run->needs, run->job, run->locks, options->timeout, options->no_wait,
                        options->wait_for_capacity, &run_state, run->fork_first ? run->child.report : -1);
  run->acquired = status == 0;
  g_mutex_lock (&run_state.lock);
  run_state.settling = TRUE;
  g_mutex_unlock (&run_state.lock);
  if (status == 0)
    {
      run->locks_path = g_build_filename (run->job_dir, TESSERA_JOB_LOCKS_FILE, NULL);
      if (!tessera_dynamic_dependency_locks_save_for_job (run->locks, run->job, &error))
        status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      /* The command finds locks.json by path: it must lead there. */
      else if (!tessera_job_folder_is_at_path (run->job))
        status = fail (EXIT_IOERR, _("The job folder %s was moved while it was made (a co-user of the pool?)"),
                       run->job_dir);
    }
  if (status == 0 && !run->fork_first)
    status = start_command (run->needs, run->job, options->command, &run->child, &run->job_lock_number,
                            &run->child_process);
  /* From here a signal goes to the child (at its gate, it ends there);
   * one that came before stops everything. */
  if (status == 0)
    {
      g_mutex_lock (&run_state.lock);
      run_state.child = run->child.pid;
      g_mutex_unlock (&run_state.lock);
      if (g_atomic_int_get (&run_state.pending_signal) != 0)
        status = 128 + g_atomic_int_get (&run_state.pending_signal);
    }
  return status;
}

/* After a failure (@status) before the command was let through: nothing
 * stays held (all or none) and the command never runs; what it ended
 * with, when it ended at its gate while the run waited, is the run's. */
static int
give_up (int status, Run *run)
{
  Gated *child = &run->child;
  gboolean acquired = run->acquired;

  if (child->pid > 0)
    {
      int wstatus;

      gated_open (child, FALSE, NULL);
      wstatus = gated_wait (child->pid);
      /* Ended as its command did; a signal of ours takes precedence,
       * also one that came after the guard had ended the wait. */
      if (!acquired && g_atomic_int_get (&run_state.command_gone) &&
          g_atomic_int_get (&run_state.pending_signal) != 0)
        status = 128 + g_atomic_int_get (&run_state.pending_signal);
      else if (!acquired && g_atomic_int_get (&run_state.command_gone))
        {
          status = exit_status_of (wstatus);
          if (WIFSIGNALED (wstatus))
            g_printerr (_("tessera: the command was killed by signal %d (%s) while this run waited; "
                          "nothing was taken\n"), WTERMSIG (wstatus), g_strsignal (WTERMSIG (wstatus)));
          else
            g_printerr (_("tessera: the command ended (status %d) while this run waited; nothing was taken\n"),
                        status);
        }
    }
  if (acquired)
    release_or_say (TESSERA_LOCK (run->locks));
  remove_job_files (run->job, run->job_dir);
  return status;
}

/* The last step, everything held: lets the command through its gate
 * with the locks' environment, watches it (--on-lost, the fence) until
 * it ends, and gives everything back. Returns the run's status: the
 * command's, or 76 when it was fenced. */
static int
supervise (Run *run)
{
  GPtrArray *needs = run->needs;
  TesseraDynamicDependencyLocks *locks = run->locks;
  TesseraJob *job = run->job;
  Gated *child = &run->child;
  char **command = run->options.command;
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  /* What --on-lost and the fence watch, one of each per need. */
  g_autoptr(GPtrArray) lost_files = g_ptr_array_new_with_free_func (unref_own_lock_file);
  g_autoptr(GPtrArray) lost_names = g_ptr_array_new ();
  g_autoptr(GPtrArray) lost_resources = g_ptr_array_new ();
  int exec_errno, status;

  env = g_environ_setenv (env, "TESSERA_LOCKS", run->locks_path, TRUE);
  /* The command's copy of the job lock, under the number it had here. */
  if (run->job_lock_number >= 0)
    {
      g_autofree char *text = g_strdup_printf ("%d", run->job_lock_number);
      env = g_environ_setenv (env, "TESSERA_JOB_LOCK_FD", text, TRUE);
    }
  for (guint i = 0; i < needs->len; i++)
    {
      g_auto(GStrv) extra = tessera_dynamic_dependency_lock_dup_environment (((Need *) g_ptr_array_index (needs, i))->lock);
      for (guint j = 0; extra != NULL && extra[j] != NULL; j++)
        {
          g_auto(GStrv) kv = g_strsplit (extra[j], "=", 2);
          env = g_environ_setenv (env, kv[0], kv[1] ? kv[1] : "", TRUE);
        }
    }
  env = set_fencing_tokens (env, needs);

  /* A run that forked its command first names it in its lock files
   * already: then this writes nothing more (unless a resource type does
   * more on job_started). With --no-wait it names the command now. */
  if (!tessera_dynamic_dependency_locks_job_started (locks, job, run->child_process, &error))
    g_printerr (_("tessera: %s\n"), error->message);
  /* What --on-lost compares with, read before the command runs: once it
   * runs, nothing on the pool's file system may come before the fence
   * starts (a file server that hangs there would keep it from ever
   * starting). */
  for (guint i = 0; i < needs->len; i++)
    {
      Need *need = g_ptr_array_index (needs, i);

      /* None for a pool in another store (etcd), which has no lock
       * file to look at: its lease and the fence keep watch. */
      g_autofree char *lock_path = tessera_dynamic_dependency_lock_dup_lock_file_path (need->lock);

      /* As the command starts with it: what a rewrite would change. */
      g_ptr_array_add (lost_files, lock_path != NULL ? tessera_own_lock_file_new (lock_path) : NULL);
      g_ptr_array_add (lost_names, need->name);
      g_ptr_array_add (lost_resources, need->resource);
    }
  /* Open before the gate is: from here no lock a peer keeps comes before
   * the command runs (a failed exec reaps it, and the run settles). */
  g_mutex_lock (&run_state.lock);
  run_state.gate_open = TRUE;
  g_mutex_unlock (&run_state.lock);
  exec_errno = gated_open (child, TRUE, env);
  if (exec_errno != 0)
    {
      gated_wait (child->pid);
      g_mutex_lock (&run_state.lock);
      run_state.child = 0;
      g_mutex_unlock (&run_state.lock);
      if (exec_errno == ENOENT && strchr (command[0], '/') == NULL)
        fail (127, _("%s: command not found"), command[0]);
      else
        fail (126, _("cannot run “%s”: %s"), command[0], g_strerror (exec_errno));
      status = exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
    }
  else
    {
      g_autoptr(GHashTable) told = g_hash_table_new (NULL, NULL);
      LostWatch lost = { lost_files, lost_names, told, run->options.on_lost_end, &run_state };
      g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
      TesseraFence *fence;
      guint lost_source;

      run_state.loop = loop;
      g_child_watch_add (child->pid, child_exited, &run_state);
      lost_source = g_timeout_add_seconds (1, check_lost, &lost);
      fence = tessera_fence_start (lost_resources, lost_names, child->pid, signal_command, &run_state);
      g_main_loop_run (loop);
      g_source_remove (lost_source);
      status = tessera_fence_fenced (fence) ? TESSERA_EXIT_FENCED : exit_status_of (run_state.wait_status);
      tessera_fence_stop (fence);
      run_state.loop = NULL;
    }
  gated_close (child);
  /* Orphans that came back to us as their subreaper and have ended. */
  if (gate_die_with_wrapper)
    while (waitpid (-1, NULL, WNOHANG) > 0)
      ;
  tessera_dynamic_dependency_locks_job_finished (locks, job, NULL);
  release_or_say (TESSERA_LOCK (locks));
  remove_job_files (job, run->job_dir);
  return status;
}

/* `tessera run`: prepare (parse, open what is needed, make the job),
 * wait until everything is held, then supervise the command and give
 * everything back. */
int
cmd_run (int argc, char **argv)
{
  g_auto(Run) run = {
    .needs = g_ptr_array_new_with_free_func ((GDestroyNotify) need_free),
    .locks = tessera_dynamic_dependency_locks_new (),
    .child = { 0, -1, -1 },
    .job_lock_number = -1,
  };
  int status;

  status = prepare (&run, argc, argv);
  if (status != 0 && run.job == NULL)
    return status;
  if (status == 0)
    status = wait_for_needs (&run);
  if (status != 0)
    return give_up (status, &run);
  return supervise (&run);
}
