/* tessera-process.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <unistd.h>

/**
 * TesseraProcess:
 *
 * The process that holds a lock: the seed's local process spec
 * `{"type": "local", "pid": N}`, which Tessera extends with "start_time"
 * (field 22 of `/proc/PID/stat`), "boot_id" and "host" so that a reused pid,
 * a reboot or a holder on another machine are told apart. Readers ignore
 * members they do not know, so the extended spec stays readable by
 * experimaestro.
 */
struct _TesseraProcess
{
  GObject parent_instance;

  GPid pid;
  guint64 start_time;   /* 0 when unknown */
  char *boot_id;        /* NULL when unknown */
  char *host;           /* NULL when unknown */
};

G_DEFINE_FINAL_TYPE (TesseraProcess, tessera_process, G_TYPE_OBJECT)

static void
tessera_process_finalize (GObject *object)
{
  TesseraProcess *self = TESSERA_PROCESS (object);

  g_free (self->boot_id);
  g_free (self->host);
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
}

/**
 * tessera_process_new_local:
 * @pid: a process id on this machine
 *
 * Describes a running process of this machine, with its start time, this
 * boot's id and this host's name. When @pid does not run, the start time
 * stays unknown (0) and [method@Tessera.Process.check] reports it dead.
 *
 * Returns: (transfer full): a new process
 */
TesseraProcess *
tessera_process_new_local (GPid pid)
{
  TesseraProcess *self = g_object_new (TESSERA_TYPE_PROCESS, NULL);

  self->pid = pid;
  if (!_tessera_proc_stat (pid, &self->start_time, NULL))
    self->start_time = 0;
  self->boot_id = g_strdup (_tessera_boot_id ());
  self->host = g_strdup (_tessera_host_name ());
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

static const char *
optional_string (JsonObject *object, const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_STRING)
    return json_node_get_string (node);
  return NULL;
}

/**
 * tessera_process_new_from_json:
 * @node: a process spec such as `{"type": "local", "pid": 42}`
 * @error: return location for a #GError
 *
 * Reads a process spec as experimaestro writes it in `<job>.pid` and as
 * Tessera writes it in a lock file's "process" member. Unknown members are
 * ignored; a spec that is not an object, whose "type" is not "local" or
 * whose "pid" is not a positive integer is an error.
 *
 * Returns: (transfer full): a new process, or %NULL with @error set
 */
TesseraProcess *
tessera_process_new_from_json (JsonNode  *node,
                               GError   **error)
{
  JsonObject *object;
  JsonNode *pid_node, *start_node;
  const char *type;
  gint64 pid;
  TesseraProcess *self;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("A process spec must be a JSON object"));
      return NULL;
    }
  object = json_node_get_object (node);
  type = optional_string (object, "type");
  if (type != NULL && g_strcmp0 (type, "local") != 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("Unsupported process type “%s”"), type);
      return NULL;
    }
  pid_node = json_object_get_member (object, "pid");
  if (pid_node == NULL || !JSON_NODE_HOLDS_VALUE (pid_node) ||
      json_node_get_value_type (pid_node) != G_TYPE_INT64 ||
      (pid = json_node_get_int (pid_node)) <= 0 || pid > G_MAXINT32)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE,
                   _("A process spec needs a positive integer “pid”"));
      return NULL;
    }
  self = g_object_new (TESSERA_TYPE_PROCESS, NULL);
  self->pid = (GPid) pid;
  start_node = json_object_get_member (object, "start_time");
  if (start_node != NULL && JSON_NODE_HOLDS_VALUE (start_node) &&
      json_node_get_value_type (start_node) == G_TYPE_INT64 &&
      json_node_get_int (start_node) > 0)
    self->start_time = (guint64) json_node_get_int (start_node);
  self->boot_id = g_strdup (optional_string (object, "boot_id"));
  self->host = g_strdup (optional_string (object, "host"));
  return self;
}

/**
 * tessera_process_to_json:
 * @self: a process
 *
 * Writes the process spec: "type" and "pid" as experimaestro expects, and
 * the members Tessera knows when they are known.
 *
 * Returns: (transfer full): a JSON object node
 */
JsonNode *
tessera_process_to_json (TesseraProcess *self)
{
  JsonObject *object;
  JsonNode *node;

  g_return_val_if_fail (TESSERA_IS_PROCESS (self), NULL);

  object = json_object_new ();
  json_object_set_string_member (object, "type", "local");
  json_object_set_int_member (object, "pid", self->pid);
  if (self->start_time > 0)
    json_object_set_int_member (object, "start_time", (gint64) self->start_time);
  if (self->boot_id != NULL && *self->boot_id != '\0')
    json_object_set_string_member (object, "boot_id", self->boot_id);
  if (self->host != NULL)
    json_object_set_string_member (object, "host", self->host);
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, object);
  return node;
}

/**
 * tessera_process_get_pid:
 * @self: a process
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
 * tessera_process_is_local:
 * @self: a process
 *
 * A process is local when it names no host (the seed's specs never do) or
 * names this one. A pid check only means something for a local process.
 *
 * Returns: whether the process runs on this machine
 */
gboolean
tessera_process_is_local (TesseraProcess *self)
{
  g_return_val_if_fail (TESSERA_IS_PROCESS (self), FALSE);
  return self->host == NULL || g_strcmp0 (self->host, _tessera_host_name ()) == 0;
}

/**
 * tessera_process_check:
 * @self: a process
 *
 * Judges whether the process still holds: a local process is dead when its
 * pid is gone, is a zombie, has another start time than recorded (the pid
 * was reused) or was recorded during another boot. A process on another
 * host is never judged by a local pid check.
 *
 * Returns: what was found
 */
TesseraProcessState
tessera_process_check (TesseraProcess *self)
{
  guint64 start = 0;
  char state = '?';

  g_return_val_if_fail (TESSERA_IS_PROCESS (self), TESSERA_PROCESS_DEAD);

  if (!tessera_process_is_local (self))
    return TESSERA_PROCESS_REMOTE;
  if (self->boot_id != NULL && *self->boot_id != '\0' &&
      *_tessera_boot_id () != '\0' && g_strcmp0 (self->boot_id, _tessera_boot_id ()) != 0)
    return TESSERA_PROCESS_DEAD;
  if (!_tessera_proc_stat (self->pid, &start, &state))
    return TESSERA_PROCESS_DEAD;
  if (state == 'Z' || state == 'X' || state == 'x')
    return TESSERA_PROCESS_DEAD;
  if (self->start_time != 0 && start != self->start_time)
    return TESSERA_PROCESS_DEAD;
  return TESSERA_PROCESS_ALIVE;
}

/**
 * tessera_process_equal:
 * @a: a process
 * @b: another process
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
  return TRUE;
}
