/* tessera-process.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-host-private.h"
#include "tessera-private.h"
#include "tessera-process-private.h"
#include "tessera-registry-private.h"
#include "tessera-verdict-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/**
 * TesseraProcess:
 *
 * The process that holds a lock: the seed's local process spec
 * `{"type": "local", "pid": N}`, which Tessera extends so that a reader
 * knows whether a pid check means anything to it: "start_time" (field 22
 * of `/proc/PID/stat`), "boot_id", "host" (the host name, for people),
 * "machine_id" (`/etc/machine-id`), "host_id" (a random id drawn once per
 * host, as cloned images share machine ids), "pid_ns" (the inode of the
 * writer's `/proc/self/ns/pid`, where the pid number means something) and
 * "uid". Readers ignore members they do not know, so the extended spec
 * stays readable by experimaestro. For people (never to judge), it may
 * also say what the holder runs: "command_line", an array of strings, and
 * "batch_job_id", the id of the batch job it runs in
 * ([method@Tessera.Process.set_command_line],
 * [method@Tessera.Process.set_batch_job_id]).
 *
 * A spec of another process type (experimaestro's "slurm" or "ssh") is
 * kept as it was read ([method@Tessera.Process.get_spec]) and judged by
 * the plugin that provides that type ([class@Tessera.ProcessType]); a spec
 * no plugin judges, or with a pid that is not a number, makes
 * [method@Tessera.Process.check] say %TESSERA_PROCESS_UNKNOWN and its
 * holder counts.
 */
struct _TesseraProcess
{
  GObject parent_instance;

  GPid pid;             /* 0 when the spec has none Tessera can use */
  guint64 start_time;   /* 0 when unknown */
  char *boot_id;        /* NULL when unknown */
  char *host;           /* NULL when unknown */
  char *machine_id;     /* NULL when unknown */
  char *host_id;        /* NULL when unknown */
  guint64 pid_ns;       /* 0 when unknown */
  gint64 uid;           /* -1 when unknown */
  char *type;           /* "local" unless the spec said otherwise */
  char *problem;        /* why Tessera cannot judge it; NULL when it can */
  JsonNode *spec;       /* the spec as read, written back when not understood */
  TesseraProcessType *judge;   /* for a "type" a plugin judges; not owned */
  gboolean by_tessera;  /* it carries members only Tessera writes */
  char **command_line;  /* for people; NULL when not recorded */
  char *batch_job_id;   /* for people; NULL when not recorded */
};

/* What is kept of a command line: enough to tell a job, bounded so that
 * a lock file stays small. */
#define COMMAND_LINE_MAX_ARGS 64
#define COMMAND_LINE_MAX_BYTES 4096

/* /proc/PID/stat's state and start time (with the /proc readers below). */
static gboolean parse_stat (const char *contents, guint64 *start_time, char *state);
static gboolean proc_stat (GPid pid, guint64 *start_time, char *state);

G_DEFINE_FINAL_TYPE (TesseraProcess, tessera_process, G_TYPE_OBJECT)

static void
tessera_process_finalize (GObject *object)
{
  TesseraProcess *self = TESSERA_PROCESS (object);

  g_free (self->boot_id);
  g_free (self->host);
  g_free (self->machine_id);
  g_free (self->host_id);
  g_free (self->type);
  g_free (self->problem);
  g_strfreev (self->command_line);
  g_free (self->batch_job_id);
  g_clear_pointer (&self->spec, json_node_unref);
  G_OBJECT_CLASS (tessera_process_parent_class)->finalize (object);
}

static void
tessera_process_class_init (TesseraProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_process_finalize;
}

static void
tessera_process_init (TesseraProcess *self)
{
  self->uid = -1;
}

static char *
nonempty_dup (const char *text)
{
  return text != NULL && *text != '\0' ? g_strdup (text) : NULL;
}

/**
 * tessera_process_new_local:
 * @pid: a process id on this machine, in our pid namespace
 *
 * Describes a running process of this machine, with its start time and
 * owner, this boot's id, this host's ids and name, and our pid namespace.
 * When @pid does not run, the start time stays unknown (0).
 *
 * Returns: (transfer full): a new process
 */
TesseraProcess *
tessera_process_new_local (GPid pid)
{
  TesseraProcess *self = g_object_new (TESSERA_TYPE_PROCESS, NULL);
  char path[64];
  struct stat st;

  self->type = g_strdup ("local");
  self->pid = pid;
  if (!proc_stat (pid, &self->start_time, NULL))
    self->start_time = 0;
  self->boot_id = nonempty_dup (_tessera_boot_id ());
  self->host = g_strdup (_tessera_host_name ());
  self->machine_id = nonempty_dup (_tessera_machine_id ());
  self->host_id = nonempty_dup (_tessera_host_id ());
  self->pid_ns = _tessera_pid_namespace ();
  self->by_tessera = TRUE;
  g_snprintf (path, sizeof path, "/proc/%d", (int) pid);
  if (pid == getpid ())
    self->uid = (gint64) getuid ();
  else if (stat (path, &st) == 0)
    self->uid = (gint64) st.st_uid;
  return self;
}

/* A holder named by something Tessera cannot read at all (a `.pid` that is
 * not a JSON object): it counts, for @problem. */
TesseraProcess *
_tessera_process_new_unknown (const char *problem)
{
  TesseraProcess *self = g_object_new (TESSERA_TYPE_PROCESS, NULL);

  self->problem = g_strdup (problem);
  return self;
}

/**
 * tessera_process_new_self:
 *
 * Describes the calling process.
 *
 * Returns: (transfer full): a new process
 */
TesseraProcess *
tessera_process_new_self (void)
{
  return tessera_process_new_local (getpid ());
}

/* Whether @process is the very process that asks: its spec, written by
 * Tessera (a start time), is ours. Made again after a fork. */
gboolean
_tessera_process_is_self (TesseraProcess *process)
{
  static GMutex lock;
  static TesseraProcess *self;
  gboolean is_self;

  if (process->pid != getpid () || process->start_time == 0)
    return FALSE;
  g_mutex_lock (&lock);
  if (self == NULL || self->pid != getpid ())
    {
      g_clear_object (&self);
      self = tessera_process_new_self ();
    }
  is_self = tessera_process_equal (process, self);
  g_mutex_unlock (&lock);
  return is_self;
}

static const char *
optional_string (JsonObject *object, const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_STRING)
    return json_node_get_string (node);
  return NULL;
}

/* A non-negative integer member, or -1. */
static gint64
optional_int (JsonObject *object, const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_INT64 && json_node_get_int (node) >= 0)
    return json_node_get_int (node);
  return -1;
}

/* Keeps what @argv holds within the bounds (whole arguments only). */
static char **
bounded_command_line (const char * const *argv)
{
  GPtrArray *kept = g_ptr_array_new ();
  gsize bytes = 0;

  for (guint i = 0; i < COMMAND_LINE_MAX_ARGS && argv[i] != NULL; i++)
    {
      bytes += strlen (argv[i]) + 1;
      if (bytes > COMMAND_LINE_MAX_BYTES)
        break;
      g_ptr_array_add (kept, g_strdup (argv[i]));
    }
  g_ptr_array_add (kept, NULL);
  return (char **) g_ptr_array_free (kept, FALSE);
}

/* "command_line": an array of strings; anything else is ignored. */
static void
read_command_line (TesseraProcess *self, JsonObject *object)
{
  JsonNode *node = json_object_get_member (object, "command_line");
  g_autoptr(GPtrArray) argv = NULL;
  JsonArray *array;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return;
  array = json_node_get_array (node);
  argv = g_ptr_array_new ();
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *element = json_array_get_element (array, i);

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        return;
      g_ptr_array_add (argv, (gpointer) json_node_get_string (element));
    }
  g_ptr_array_add (argv, NULL);
  self->command_line = bounded_command_line ((const char * const *) argv->pdata);
}

/**
 * tessera_process_new_from_json:
 * @node: a process spec such as `{"type": "local", "pid": 42}`
 * @error: return location for a #GError
 *
 * Reads a process spec as experimaestro writes it in `<job>.pid` and as
 * Tessera writes it in a lock file's "process" member. Unknown members are
 * ignored. A spec whose "type" is not "local" (experimaestro's "slurm",
 * "ssh"…) or whose "pid" is not a positive integer is read all the same:
 * Tessera cannot judge it ([method@Tessera.Process.get_problem] says why),
 * so its holder counts. Only a spec that is not a JSON object is an error.
 *
 * Returns: (transfer full): a new process, or %NULL with @error set
 */
TesseraProcess *
tessera_process_new_from_json (JsonNode  *node,
                               GError   **error)
{
  static const char * const tessera_members[] = {
    "start_time", "boot_id", "host", "machine_id", "host_id", "pid_ns", "uid",
  };
  JsonObject *object;
  JsonNode *type_node;
  const char *type;
  gint64 pid, value;
  TesseraProcess *self;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("A process spec must be a JSON object"));
      return NULL;
    }
  object = json_node_get_object (node);
  self = g_object_new (TESSERA_TYPE_PROCESS, NULL);
  type_node = json_object_get_member (object, "type");
  type = optional_string (object, "type");
  self->type = g_strdup (type != NULL ? type : "local");
  if (type_node != NULL && type == NULL)
    self->problem = g_strdup (_("its process type is not a string"));
  else if (g_strcmp0 (self->type, "local") != 0)
    {
      self->judge = tessera_check_plugin_name (self->type, NULL)
                    ? _tessera_registry_process_type_for (self->type) : NULL;
      if (self->judge == NULL)
        self->problem = g_strdup_printf (_("its process type “%s” is not known here"), self->type);
      self->spec = json_node_copy (node);
    }
  else if ((pid = optional_int (object, "pid")) <= 0 || pid > G_MAXINT32)
    self->problem = g_strdup (_("its process spec has no usable “pid”"));
  else
    self->pid = (GPid) pid;
  if (self->problem != NULL && self->spec == NULL)
    self->spec = json_node_copy (node);

  if ((value = optional_int (object, "start_time")) > 0)
    self->start_time = (guint64) value;
  self->boot_id = nonempty_dup (optional_string (object, "boot_id"));
  self->host = g_strdup (optional_string (object, "host"));
  self->machine_id = g_strdup (optional_string (object, "machine_id"));
  self->host_id = nonempty_dup (optional_string (object, "host_id"));
  if ((value = optional_int (object, "pid_ns")) > 0)
    self->pid_ns = (guint64) value;
  self->uid = optional_int (object, "uid");
  read_command_line (self, object);
  self->batch_job_id = nonempty_dup (optional_string (object, "batch_job_id"));
  for (guint i = 0; i < G_N_ELEMENTS (tessera_members); i++)
    if (json_object_has_member (object, tessera_members[i]))
      self->by_tessera = TRUE;
  return self;
}

/**
 * tessera_process_to_json:
 * @self: a process
 *
 * Writes the process spec: "type" and "pid" as experimaestro expects, and
 * the members Tessera knows when they are known. A spec Tessera could not
 * judge is written back as it was read.
 *
 * Returns: (transfer full): a JSON object node
 */
JsonNode *
tessera_process_to_json (TesseraProcess *self)
{
  JsonObject *object;
  JsonNode *node;

  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);

  if (self->spec != NULL)
    return json_node_copy (self->spec);
  object = json_object_new ();
  json_object_set_string_member (object, "type", self->type != NULL ? self->type : "local");
  if (self->pid > 0)
    json_object_set_int_member (object, "pid", self->pid);
  if (self->start_time > 0)
    json_object_set_int_member (object, "start_time", (gint64) self->start_time);
  if (self->boot_id != NULL)
    json_object_set_string_member (object, "boot_id", self->boot_id);
  if (self->host != NULL)
    json_object_set_string_member (object, "host", self->host);
  if (self->machine_id != NULL)
    json_object_set_string_member (object, "machine_id", self->machine_id);
  if (self->host_id != NULL)
    json_object_set_string_member (object, "host_id", self->host_id);
  if (self->pid_ns > 0)
    json_object_set_int_member (object, "pid_ns", (gint64) self->pid_ns);
  if (self->uid >= 0)
    json_object_set_int_member (object, "uid", self->uid);
  if (self->command_line != NULL)
    {
      JsonArray *array = json_array_new ();

      for (guint i = 0; self->command_line[i] != NULL; i++)
        json_array_add_string_element (array, self->command_line[i]);
      json_object_set_array_member (object, "command_line", array);
    }
  if (self->batch_job_id != NULL)
    json_object_set_string_member (object, "batch_job_id", self->batch_job_id);
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, object);
  return node;
}

/**
 * tessera_process_get_pid:
 * @self: a process
 *
 * Gets the process id.
 *
 * Returns: the process id
 */
GPid
tessera_process_get_pid (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), 0);
  return self->pid;
}

/**
 * tessera_process_get_start_time:
 * @self: a process
 *
 * Gets the start time in clock ticks after boot, or 0 when unknown.
 *
 * Returns: the start time in clock ticks after boot, or 0 when unknown
 */
guint64
tessera_process_get_start_time (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), 0);
  return self->start_time;
}

/**
 * tessera_process_get_host:
 * @self: a process
 *
 * Gets the host the process runs on, when recorded.
 *
 * Returns: (nullable): the host the process runs on, when recorded
 */
const char *
tessera_process_get_host (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->host;
}

/**
 * tessera_process_get_boot_id:
 * @self: a process
 *
 * Gets the boot id of the machine when the process was recorded,
 * when known.
 *
 * Returns: (nullable): the boot id of the machine when the process was
 *   recorded, when known
 */
const char *
tessera_process_get_boot_id (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->boot_id;
}

/**
 * tessera_process_get_process_type:
 * @self: a process
 *
 * Gets the spec's "type": "local" for the processes Tessera judges, another
 * name (experimaestro's "slurm", "ssh"…) for the others.
 *
 * Returns: the spec's "type": "local" for the processes Tessera judges,
 *   another name (experimaestro's "slurm", "ssh"…) for the others
 */
const char *
tessera_process_get_process_type (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->type != NULL ? self->type : "local";
}

/**
 * tessera_process_get_spec:
 * @self: a process
 *
 * The spec as it was read, for a process of another type than "local" (a
 * [class@Tessera.ProcessType] reads its own members there, such as the
 * Slurm job id in "pid") or one Tessera could not understand.
 *
 * Returns: (transfer none) (nullable): the spec as read, or %NULL for a
 *   local process Tessera understood
 */
JsonNode *
tessera_process_get_spec (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->spec;
}

/**
 * tessera_process_get_problem:
 * @self: a process
 *
 * Gets why Tessera cannot judge this process (its holder then
 * counts until it is removed by hand), or %NULL when it can.
 *
 * Returns: (nullable): why Tessera cannot judge this process (its holder
 *   then counts until it is removed by hand), or %NULL when it can
 */
const char *
tessera_process_get_problem (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->problem;
}

const char *
_tessera_process_get_problem (TesseraProcess *self)
{
  return self->problem;
}

gboolean
_tessera_process_on_this_host (TesseraProcess *self)
{
  return self->host_id != NULL && _tessera_is_this_host (self->machine_id, self->host_id);
}

/* Whether the spec says its process runs on another host: host ids
 * recorded and not ours, or, without them, a host name not ours. A spec
 * that names no host (experimaestro's local one) says nothing. */
gboolean
_tessera_process_on_other_host (TesseraProcess *self)
{
  if (self->host_id != NULL)
    return !_tessera_is_this_host (self->machine_id, self->host_id);
  return self->host != NULL && strcmp (self->host, _tessera_host_name ()) != 0;
}

const char *
_tessera_process_get_host_id (TesseraProcess *self)
{
  return self->host_id;
}

gboolean
_tessera_process_written_by_tessera (TesseraProcess *self)
{
  return self->by_tessera;
}

/**
 * tessera_process_get_uid:
 * @self: a process
 *
 * Gets the user id the process ran as when recorded, or -1 when unknown.
 *
 * Returns: the user id the process ran as when recorded, or -1 when unknown
 */
gint64
tessera_process_get_uid (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), -1);
  return self->uid;
}

/**
 * tessera_process_set_command_line:
 * @self: a process
 * @argv: (array zero-terminated=1) (nullable): the command line the
 *   process runs, or %NULL to record none
 *
 * Records the command line the process runs, for people (`tessera
 * status`, the audit log): it is written in its spec's "command_line"
 * (at most 64 arguments and 4096 bytes, whole arguments only) and never
 * used to judge the process. Set it before the spec is written (before
 * the process is recorded in a job or a lock file).
 */
void
tessera_process_set_command_line (TesseraProcess     *self,
                                  const char * const *argv)
{
  g_return_if_fail (TESSERA_IS_PROCESS (self));
  g_clear_pointer (&self->command_line, g_strfreev);
  if (argv != NULL)
    self->command_line = bounded_command_line (argv);
}

/**
 * tessera_process_get_command_line:
 * @self: a process
 *
 * Gets the command line recorded for the process, if any.
 *
 * Returns: (array zero-terminated=1) (nullable) (transfer none): the
 *   command line, or %NULL when none was recorded
 */
const char * const *
tessera_process_get_command_line (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return (const char * const *) self->command_line;
}

/**
 * tessera_process_set_batch_job_id:
 * @self: a process
 * @id: (nullable): the id of the batch job the process runs in (a Slurm
 *   job's `SLURM_JOB_ID`), or %NULL or empty for none
 *
 * Records the batch job the process runs in, for people: written in its
 * spec's "batch_job_id", never used to judge the process.
 */
void
tessera_process_set_batch_job_id (TesseraProcess *self,
                                  const char     *id)
{
  g_return_if_fail (TESSERA_IS_PROCESS (self));
  g_free (self->batch_job_id);
  self->batch_job_id = nonempty_dup (id);
}

/**
 * tessera_process_get_batch_job_id:
 * @self: a process
 *
 * Gets the id of the batch job recorded for the process, if any.
 *
 * Returns: (nullable): the batch job's id, or %NULL when none was recorded
 */
const char *
tessera_process_get_batch_job_id (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);
  return self->batch_job_id;
}

/* Whether the spec says where its pid means something: host, boot and pid
 * namespace. Only then can a pid check give a verdict of death. */
static gboolean
has_identity (TesseraProcess *self)
{
  return self->host_id != NULL && self->boot_id != NULL && self->pid_ns > 0;
}

/**
 * tessera_process_is_local:
 * @self: a process
 *
 * A process recorded with its host ids is local when they are this
 * host's; one recorded without them (the seed's specs, older Tessera)
 * when it names no host or this host's name. Only
 * [method@Tessera.Process.check] says whether a pid check means anything.
 *
 * Returns: whether the process may run on this machine
 */
gboolean
tessera_process_is_local (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), FALSE);
  if (self->host_id != NULL)
    return _tessera_is_this_host (self->machine_id, self->host_id);
  return self->host == NULL || g_strcmp0 (self->host, _tessera_host_name ()) == 0;
}

GHashTable *
_tessera_pid_look_new (void)
{
  return g_hash_table_new_full (NULL, NULL, NULL, g_free);
}

/* What /proc says of @pid, into @facts: read now, or as @look (nullable)
 * saw it when it has it (kept there when read). */
static void
look_at_pid (GPid pid, GHashTable *look, TesseraPidFacts *facts)
{
  const TesseraPidFacts *seen = look != NULL ? g_hash_table_lookup (look, GINT_TO_POINTER (pid)) : NULL;

  if (seen != NULL)
    {
      facts->proc_read = seen->proc_read;
      facts->proc_errno = seen->proc_errno;
      facts->proc_start_time = seen->proc_start_time;
      facts->proc_state = seen->proc_state;
      facts->kill_errno = seen->kill_errno;
      return;
    }
  facts->proc_state = '?';
  errno = 0;
  facts->proc_read = proc_stat (pid, &facts->proc_start_time, &facts->proc_state);
  if (!facts->proc_read)
    {
      facts->proc_errno = errno;
      /* Not in /proc: gone, or hidden from us (hidepid), which kill() tells. */
      facts->kill_errno = kill (pid, 0) < 0 ? errno : 0;
    }
  if (look != NULL)
    g_hash_table_insert (look, GINT_TO_POINTER (pid), g_memdup2 (facts, sizeof *facts));
}

/* The pid in our /proc (as @look saw it, when not %NULL). @sure: the
 * spec's identity says the pid is ours, so a pid that is gone is a dead
 * holder. */
static TesseraProcessState
check_pid (TesseraProcess *self, gboolean sure, GHashTable *look)
{
  TesseraPidFacts facts = { .sure = sure, .start_time = self->start_time };

  look_at_pid (self->pid, look, &facts);
  return _tessera_verdict_pid (&facts);
}

/**
 * tessera_process_check:
 * @self: a process
 *
 * Judges whether the process still holds, as far as a pid check can:
 *
 * - a spec of another process type is judged by the plugin that provides
 *   it ([method@Tessera.ProcessType.check]), and is
 *   %TESSERA_PROCESS_UNKNOWN when no plugin does;
 * - with its host ids, boot id and pid namespace recorded: on another host
 *   it is %TESSERA_PROCESS_REMOTE; on ours but during another boot, dead;
 *   in another pid namespace, remote; in ours, dead when its pid is gone,
 *   is a zombie or has another start time, and remote (the job lock
 *   decides) when it has no start time or is hidden by `hidepid`
 *   (`kill (pid, 0)` answers EPERM);
 * - without them (experimaestro's and older Tessera's specs), the pid
 *   may be another host's or another namespace's: a matching live process
 *   here is alive, anything else is remote, never dead.
 *
 * Returns: what was found
 */
TesseraProcessState
tessera_process_check (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), TESSERA_PROCESS_UNKNOWN);
  return _tessera_process_check_in (self, NULL);
}

/**
 * tessera_process_pid_has_ended:
 * @pid: a process of this pid namespace, such as a child or a descendant
 *
 * Tells whether @pid has ended: gone from `/proc` (or hidden from us
 * there), or a zombie not reaped yet, which can no longer do anything
 * and loses a signal sent to it. `/proc/PID/stat` is read as
 * [method@Tessera.Process.check] reads it, with no start time to tell a
 * reused pid: for a process one knows, not for a holder.
 *
 * Returns: %TRUE when @pid has ended
 */
gboolean
tessera_process_pid_has_ended (GPid pid)
{
  char contents[4096];   /* as proc_stat () reads it */
  char state = '?';

  if (_tessera_proc_read (pid, "stat", contents, sizeof contents, TRUE) < 0)
    return TRUE;
  /* A line that cannot be parsed is a process still there. */
  return parse_stat (contents, NULL, &state) && _tessera_verdict_state_ended (state);
}

TesseraProcessState
_tessera_process_check_in (TesseraProcess *self,
                           GHashTable     *look)
{
  TesseraProcessState state;


  if (self->problem != NULL)
    return TESSERA_PROCESS_UNKNOWN;
  if (self->judge != NULL)
    return tessera_process_type_check (self->judge, self);
  if (has_identity (self))
    {
      if (!_tessera_is_this_host (self->machine_id, self->host_id))
        return TESSERA_PROCESS_REMOTE;
      if (*_tessera_boot_id () != '\0' && g_strcmp0 (self->boot_id, _tessera_boot_id ()) != 0)
        return TESSERA_PROCESS_DEAD;
      if (_tessera_pid_namespace () == 0 || self->pid_ns != _tessera_pid_namespace ())
        return TESSERA_PROCESS_REMOTE;
      return check_pid (self, TRUE, look);
    }
  if (!tessera_process_is_local (self))
    return TESSERA_PROCESS_REMOTE;
  if (self->boot_id != NULL && *_tessera_boot_id () != '\0' &&
      g_strcmp0 (self->boot_id, _tessera_boot_id ()) != 0)
    return TESSERA_PROCESS_REMOTE;
  state = check_pid (self, FALSE, look);
  return state == TESSERA_PROCESS_ALIVE ? TESSERA_PROCESS_ALIVE : TESSERA_PROCESS_REMOTE;
}

/**
 * tessera_process_equal:
 * @a: a process
 * @b: another process
 *
 * Tells whether both name the same process (pid, and start time, boot and
 * host where both know them).
 *
 * Returns: whether both name the same process (pid, and start time, boot
 *   and host where both know them)
 */
gboolean
tessera_process_equal (TesseraProcess *a,
                       TesseraProcess *b)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (a) && TESSERA_IS_PROCESS (b), FALSE);

  if (a->pid != b->pid)
    return FALSE;
  if (a->start_time && b->start_time && a->start_time != b->start_time)
    return FALSE;
  if (a->boot_id && b->boot_id && g_strcmp0 (a->boot_id, b->boot_id) != 0)
    return FALSE;
  if (a->host && b->host && g_strcmp0 (a->host, b->host) != 0)
    return FALSE;
  if (a->host_id && b->host_id && g_strcmp0 (a->host_id, b->host_id) != 0)
    return FALSE;
  if (a->pid_ns && b->pid_ns && a->pid_ns != b->pid_ns)
    return FALSE;
  if (g_strcmp0 (a->type, b->type) != 0)
    return FALSE;
  return TRUE;
}

/* Reads /proc/PID/@name into @buffer (at most @size - 1 bytes, then a
 * NUL), with no stdio (this runs once per holder a fresh `status`
 * judges); @first_line stops at the first line's end, sparing the read
 * that would say the file ended. The length read, or -1 when the file
 * cannot be opened (the process is gone, or hidden from us). */
gssize
_tessera_proc_read (GPid        pid,
                    const char *name,
                    char       *buffer,
                    gsize       size,
                    gboolean    first_line)
{
  char path[64];
  gsize got = 0;
  int fd;

  g_return_val_if_fail (size > 0, -1);
  if (pid <= 0)
    return -1;
  g_snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  for (;;)
    {
      ssize_t r = read (fd, buffer + got, size - 1 - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += r;
      if (first_line && buffer[got - 1] == '\n')
        break;
    }
  close (fd);
  buffer[got] = '\0';
  return got;
}

/* Field 3 (state) and field 22 (start time, in clock ticks since boot) of
 * a /proc/PID/stat line; the command name may hold spaces and
 * parentheses, so parse from the last ')'. */
static gboolean
parse_stat (const char *contents,
            guint64    *start_time,
            char       *state)
{
  const char *p;
  int field;

  p = strrchr (contents, ')');
  if (p == NULL || p[1] != ' ')
    return FALSE;
  p += 2;
  if (state != NULL)
    *state = *p;
  /* p is at field 3; advance to field 22 */
  for (field = 3; field < 22 && *p != '\0'; p++)
    if (*p == ' ')
      field++;
  if (field != 22)
    return FALSE;
  if (start_time != NULL)
    *start_time = g_ascii_strtoull (p, NULL, 10);
  return TRUE;
}

/* /proc/PID/stat read and parsed: FALSE when it cannot be opened or is no
 * stat line. */
static gboolean
proc_stat (GPid     pid,
           guint64 *start_time,
           char    *state)
{
  char contents[4096];   /* a stat line is about 300 bytes, at most about 1 100 */

  if (_tessera_proc_read (pid, "stat", contents, sizeof contents, TRUE) < 0)
    return FALSE;
  return parse_stat (contents, start_time, state);
}

int
_tessera_pidfd_open (GPid pid)
{
#ifdef SYS_pidfd_open
  return (int) syscall (SYS_pidfd_open, (pid_t) pid, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}
