/* tessera-slurm-process-type.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-slurm-process-type.h"

/* TesseraSlurmProcessType:
 *
 * Judges experimaestro's `{"type": "slurm", "pid": "JOBID", …}` holders by
 * asking Slurm: `squeue` knows pending, running and recently ended jobs;
 * `sacct` (where accounting is kept) knows older ones. A controller that
 * answers "Invalid job id" has forgotten the job: it ended. Anything else
 * (no answer within the timeout, no Slurm here, a state we do not know)
 * is unknown, and the holder counts.
 *
 * Verdicts are cached per job id, because they are asked under the pool's
 * ipc.lock at every look at the folder: a live job is asked again after
 * ALIVE_TTL, an unknown one after UNKNOWN_TTL (so a controller that does
 * not answer costs one timeout per UNKNOWN_TTL, not one per acquire), and
 * an ended job never again. A Slurm that did not answer in time is not
 * asked again, for any job, for UNKNOWN_TTL; a host with no Slurm
 * configuration (no SLURM_CONF, no /etc/slurm/slurm.conf, where squeue
 * would retry for a minute) is never asked. */

#define ALIVE_TTL_US   (5 * G_USEC_PER_SEC)
#define UNKNOWN_TTL_US (30 * G_USEC_PER_SEC)
#define DEFAULT_TIMEOUT_S 5.0
#define MAX_CACHED 4096   /* ids come from files anyone may write */

struct _TesseraSlurmProcessType
{
  TesseraProcessType parent_instance;

  GMutex mutex;
  GHashTable *verdicts;   /* job id → Verdict */
  gint64 silent_until;    /* monotonic µs: Slurm did not answer in time */
};

typedef struct
{
  TesseraProcessState state;
  gint64 expires;   /* monotonic µs; G_MAXINT64 for ended jobs */
} Verdict;

G_DEFINE_DYNAMIC_TYPE (TesseraSlurmProcessType, tessera_slurm_process_type, TESSERA_TYPE_PROCESS_TYPE)

/* Slurm's job states (squeue's %T, sacct's State) that mean the job may
 * still run or hold its allocation. */
static const char * const alive_states[] = {
  "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED",
  "RESIZING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD",
  "SIGNALING", "STAGE_OUT", "SPECIAL_EXIT", "POWER_UP_NODE", "UPDATE_DB",
  NULL
};

/* States of a job that has ended for good. */
static const char * const ended_states[] = {
  "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
  "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "REVOKED",
  NULL
};

static double
command_timeout (void)
{
  const char *text = g_getenv ("TESSERA_SLURM_TIMEOUT");
  char *end = NULL;
  double value;

  if (text == NULL || *text == '\0')
    return DEFAULT_TIMEOUT_S;
  value = g_ascii_strtod (text, &end);
  if (end == text || *end != '\0' || !(value > 0.0) || value > 3600.0)
    return DEFAULT_TIMEOUT_S;
  return value;
}

static gboolean
slurm_configured (void)
{
  const char *conf = g_getenv ("SLURM_CONF");

  if (conf != NULL && *conf != '\0')
    return g_file_test (conf, G_FILE_TEST_IS_REGULAR);
  return g_file_test ("/etc/slurm/slurm.conf", G_FILE_TEST_IS_REGULAR);
}

/* Only `^[0-9]+(_[0-9]+)?$` (a job, or an array task) is ever passed on,
 * and as one argument: ids come from files anyone may write. */
static gboolean
is_job_id (const char *id)
{
  const char *p = id;
  gboolean underscore = FALSE;

  if (!g_ascii_isdigit (*p))
    return FALSE;
  for (; *p != '\0'; p++)
    {
      if (*p == '_' && !underscore && g_ascii_isdigit (p[1]))
        underscore = TRUE;
      else if (!g_ascii_isdigit (*p))
        return FALSE;
    }
  return p - id <= 40;
}

/* The job id: experimaestro writes it as a string in "pid"; a number is
 * accepted too. */
static char *
job_id_of (TesseraProcess *process)
{
  JsonNode *spec = tessera_process_get_spec (process);
  JsonNode *pid;

  if (spec == NULL || !JSON_NODE_HOLDS_OBJECT (spec))
    return NULL;
  pid = json_object_get_member (json_node_get_object (spec), "pid");
  if (pid == NULL || !JSON_NODE_HOLDS_VALUE (pid))
    return NULL;
  if (json_node_get_value_type (pid) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (pid));
  if (json_node_get_value_type (pid) == G_TYPE_INT64 && json_node_get_int (pid) >= 0)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (pid));
  return NULL;
}

typedef struct
{
  gboolean done;
  gboolean timed_out;
  char *out;
  char *err;
  GError *error;
} Reply;

static void
on_communicated (GObject *source, GAsyncResult *result, gpointer data)
{
  Reply *reply = data;

  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result,
                                        &reply->out, &reply->err, &reply->error);
  reply->done = TRUE;
}

static gboolean
on_timeout (gpointer data)
{
  Reply *reply = data;

  reply->timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs @argv (no shell) with its output captured, for at most the
 * timeout. Returns FALSE when it could not run or took too long. */
static gboolean
run_command (const char * const *argv, int *status, char **out, char **err, gboolean *timed_out)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GSource) timeout = NULL;
  g_autoptr(GError) error = NULL;
  Reply reply = { 0 };
  gboolean ok;

  process = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                               &error);
  if (process == NULL)
    {
      g_debug ("slurm: cannot run %s: %s", argv[0], error->message);
      return FALSE;
    }
  g_main_context_push_thread_default (context);
  timeout = g_timeout_source_new ((guint) (command_timeout () * 1000.0));
  g_source_set_callback (timeout, on_timeout, &reply, NULL);
  g_source_attach (timeout, context);
  g_subprocess_communicate_utf8_async (process, NULL, cancellable, on_communicated, &reply);
  while (!reply.done && !reply.timed_out)
    g_main_context_iteration (context, TRUE);
  if (!reply.done)
    {
      g_debug ("slurm: %s did not answer in time", argv[0]);
      g_subprocess_force_exit (process);
      g_cancellable_cancel (cancellable);
      while (!reply.done)
        g_main_context_iteration (context, TRUE);
    }
  g_source_destroy (timeout);
  *timed_out = reply.timed_out;
  ok = reply.done && !reply.timed_out && reply.error == NULL;
  if (ok)
    {
      /* The pipes are at end of file: the exit comes at once. */
      if (!g_subprocess_wait (process, NULL, NULL))
        ok = FALSE;
      else
        *status = g_subprocess_get_if_exited (process) ? g_subprocess_get_exit_status (process) : -1;
    }
  g_main_context_pop_thread_default (context);
  if (ok)
    {
      *out = g_steal_pointer (&reply.out);
      *err = g_steal_pointer (&reply.err);
    }
  g_free (reply.out);
  g_free (reply.err);
  g_clear_error (&reply.error);
  return ok;
}

/* "RUNNING", or sacct's "CANCELLED by 0": the first word decides. */
static TesseraProcessState
state_from_word (const char *text)
{
  g_auto(GStrv) words = g_strsplit_set (text, " \t\n+", 2);
  const char *word = words[0] != NULL ? words[0] : "";

  if (g_strv_contains (alive_states, word))
    return TESSERA_PROCESS_ALIVE;
  if (g_strv_contains (ended_states, word))
    return TESSERA_PROCESS_DEAD;
  return TESSERA_PROCESS_UNKNOWN;
}

static TesseraProcessState
ask_sacct (const char *id, gboolean *timed_out)
{
  const char *argv[] = {
    "sacct", "--noheader", "--parsable2", "--allocations",
    "--format=State", "--jobs", id, NULL
  };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = -1;

  if (!run_command (argv, &status, &out, &err, timed_out) || status != 0)
    return TESSERA_PROCESS_UNKNOWN;
  g_strstrip (out);
  /* No accounting ("Slurm accounting storage is disabled"), or no record:
   * nothing sure. */
  if (*out == '\0')
    return TESSERA_PROCESS_UNKNOWN;
  return state_from_word (out);
}

static TesseraProcessState
ask_slurm (const char *id, gboolean *timed_out)
{
  const char *argv[] = {
    "squeue", "--noheader", "--states=all", "--format=%T", "--jobs", id, NULL
  };
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = -1;

  if (!run_command (argv, &status, &out, &err, timed_out))
    return TESSERA_PROCESS_UNKNOWN;
  if (status == 0)
    {
      g_strstrip (out);
      if (*out != '\0')
        return state_from_word (out);
      return ask_sacct (id, timed_out);
    }
  /* The controller answered and has no such job: it left Slurm's memory
   * (MinJobAge after its end). A job it never knew is judged the same
   * way: the pool's hosts must all talk to the job's cluster. */
  if (err != NULL && strstr (err, "Invalid job id") != NULL)
    {
      TesseraProcessState state = ask_sacct (id, timed_out);
      return state == TESSERA_PROCESS_ALIVE ? TESSERA_PROCESS_ALIVE : TESSERA_PROCESS_DEAD;
    }
  g_debug ("slurm: squeue failed for job %s: %s", id, err != NULL ? err : "");
  return TESSERA_PROCESS_UNKNOWN;
}

static TesseraProcessState
tessera_slurm_process_type_check (TesseraProcessType *type,
                                  TesseraProcess     *process)
{
  TesseraSlurmProcessType *self = TESSERA_SLURM_PROCESS_TYPE (type);
  g_autofree char *id = job_id_of (process);
  gint64 now = g_get_monotonic_time ();
  TesseraProcessState state;
  gboolean timed_out = FALSE;
  Verdict *verdict;

  if (id == NULL || !is_job_id (id) || !slurm_configured ())
    return TESSERA_PROCESS_UNKNOWN;

  g_mutex_lock (&self->mutex);
  verdict = g_hash_table_lookup (self->verdicts, id);
  if ((verdict != NULL && now < verdict->expires) || now < self->silent_until)
    {
      state = verdict != NULL && now < verdict->expires ? verdict->state : TESSERA_PROCESS_UNKNOWN;
      g_mutex_unlock (&self->mutex);
      return state;
    }
  g_mutex_unlock (&self->mutex);

  /* Asked without the mutex: another id need not wait for this one. */
  state = ask_slurm (id, &timed_out);

  g_mutex_lock (&self->mutex);
  if (timed_out)
    self->silent_until = g_get_monotonic_time () + UNKNOWN_TTL_US;
  if (g_hash_table_size (self->verdicts) >= MAX_CACHED)
    g_hash_table_remove_all (self->verdicts);
  verdict = g_new (Verdict, 1);
  verdict->state = state;
  verdict->expires = state == TESSERA_PROCESS_DEAD ? G_MAXINT64
                     : now + (state == TESSERA_PROCESS_ALIVE ? ALIVE_TTL_US : UNKNOWN_TTL_US);
  g_hash_table_replace (self->verdicts, g_strdup (id), verdict);
  g_mutex_unlock (&self->mutex);
  return state;
}

static void
tessera_slurm_process_type_finalize (GObject *object)
{
  TesseraSlurmProcessType *self = TESSERA_SLURM_PROCESS_TYPE (object);

  g_hash_table_unref (self->verdicts);
  g_mutex_clear (&self->mutex);
  G_OBJECT_CLASS (tessera_slurm_process_type_parent_class)->finalize (object);
}

static void
tessera_slurm_process_type_class_init (TesseraSlurmProcessTypeClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_slurm_process_type_finalize;
  TESSERA_PROCESS_TYPE_CLASS (klass)->check = tessera_slurm_process_type_check;
}

static void
tessera_slurm_process_type_class_finalize (TesseraSlurmProcessTypeClass *klass)
{
  (void) klass;
}

static void
tessera_slurm_process_type_init (TesseraSlurmProcessType *self)
{
  g_mutex_init (&self->mutex);
  self->verdicts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

void
_tessera_slurm_process_type_register (GTypeModule *module)
{
  tessera_slurm_process_type_register_type (module);
}
