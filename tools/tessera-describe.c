/* tessera-describe.c: describing a resource and its holders (status,
 * watch, and the waiting line of run).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>
#include <time.h>
#include <pwd.h>

#include "tessera-config.h"

#include "tessera-describe.h"

/* Each holder's state, the library's verdict (as a run's): "dead",
 * else what the pid check made of its process: "alive" by its pid,
 * "remote" (judged from elsewhere, by its job lock) or "unknown" (also
 * for a lock file naming no process). Judged in one look: the many
 * holders of one process (a scheduler's tokens) cost one read of /proc,
 * not one each. */
static GPtrArray *
holder_states (GPtrArray *files)
{
  g_autoptr(GArray) processes = NULL;
  g_autoptr(GArray) verdicts = tessera_dynamic_lock_file_judge_holders (files, &processes);
  GPtrArray *states = g_ptr_array_sized_new (files->len);

  for (guint i = 0; i < files->len; i++)
    {
      const char *state = "unknown";

      if (tessera_dynamic_lock_file_get_process (g_ptr_array_index (files, i)) != NULL &&
          g_array_index (verdicts, TesseraHolderState, i) == TESSERA_HOLDER_STATE_DEAD)
        state = "dead";
      else if (tessera_dynamic_lock_file_get_process (g_ptr_array_index (files, i)) != NULL)
        switch (g_array_index (processes, TesseraProcessState, i))
          {
          case TESSERA_PROCESS_ALIVE: state = "alive"; break;
          case TESSERA_PROCESS_DEAD: state = "dead"; break;
          case TESSERA_PROCESS_REMOTE: state = "remote"; break;
          default: break;
          }
      g_ptr_array_add (states, (gpointer) state);
    }
  return states;
}

static char *
format_since (TesseraDynamicLockFile *lock_file)
{
  gint64 mtime = tessera_dynamic_lock_file_get_mtime (lock_file);
  time_t seconds;
  struct tm when;

  /* A holder counted from a file it could not read has no time: unknown,
   * never 1970. */
  if (mtime <= 0)
    return NULL;
  /* What g_date_time_format_iso8601() says of whole seconds in UTC, and
   * none beyond year 9999 as GDateTime, without building one per holder. */
  seconds = (time_t) (mtime / G_GINT64_CONSTANT (1000000000));
  if (seconds > G_GINT64_CONSTANT (253402300799) || gmtime_r (&seconds, &when) == NULL)
    return NULL;
  return g_strdup_printf ("%04d-%02d-%02dT%02d:%02d:%02dZ", when.tm_year + 1900, when.tm_mon + 1, when.tm_mday,
                          when.tm_hour, when.tm_min, when.tm_sec);
}

/* Names and paths come from a folder a co-user may write: for JSON, bytes
 * that are not UTF-8 become the text \xNN (valid UTF-8 passes as is, and
 * JSON escapes control characters itself); for a terminal, control
 * characters too, and a backslash is doubled, so no name can move the
 * cursor, clear the screen or pass for another. */
char *
escape_name (const char *name, gboolean for_terminal)
{
  GString *out;
  const char *p = name;

  /* Most names are printable ASCII, which none of the rules touches:
   * copied as they are (status escapes several strings of each of
   * thousands of holders). */
  while (*p != '\0' && (guchar) *p < 0x80 && (!for_terminal || ((guchar) *p >= 0x20 && *p != 0x7f)))
    p++;
  if (*p == '\0')
    return g_strdup (name);
  out = g_string_new_len (name, p - name);
  while (*p != '\0')
    {
      gunichar c = g_utf8_get_char_validated (p, -1);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02X", (guchar) *p);
          p++;
          continue;
        }
      if (for_terminal && (c < 0x20 || (c >= 0x7f && c < 0xa0)))
        g_string_append_printf (out, "\\x%02X", c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (out, FALSE);
}

/* A lock file's name is `jobs/TASK@ID.json`; an etcd holder's key
 * `PREFIX/NAME/jobs/TASK@ID`. */
char *
holder_name (TesseraDynamicLockFile *lock_file)
{
  g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
  /* A waiter within its patience has its entry as NAME.waiting. */
  g_autofree char *name = tessera_pool_part_dup_holder_name (base);

  return escape_name (name, FALSE);
}

/* Whose a holding is: its lock file's owner, where it has a file (the
 * uid its process spec records is anyone's claim: whoever may write in
 * jobs/ may write another's uid in a file of hers, but owns it all the
 * same); else (a pool in etcd) the uid its spec records; -1: unknown.
 * @lock_folder: @resource's, NULL in etcd. */
static gint64
holder_owner (const char *lock_folder, TesseraDynamicLockFile *lock_file, TesseraProcess *process)
{
  const char *path = tessera_dynamic_lock_file_get_path (lock_file);
  gint64 owner = tessera_dynamic_lock_file_get_file_uid (lock_file);

  /* Known from when it was read (no stat of each of thousands of
   * holders); else (a waiting entry, a file that could not be read) the
   * file as it is now. */
  if (owner < 0 && lock_folder != NULL && path != NULL)
    owner = tessera_pool_part_get_entry_owner (lock_folder, path);
  if (owner >= 0)
    return owner;
  return process != NULL ? tessera_process_get_uid (process) : -1;
}

/* The name of @uid (NULL: none), looked up once per description: a
 * passwd lookup may read the whole of /etc/passwd, for each of thousands
 * of holders of a few users. @users: uid → name, owned. */
const char *
user_name (GHashTable *users, uid_t uid)
{
  gpointer name;

  if (!g_hash_table_lookup_extended (users, GUINT_TO_POINTER (uid), NULL, &name))
    {
      struct passwd *pw = getpwuid (uid);
      name = pw != NULL ? g_strdup (pw->pw_name) : NULL;
      g_hash_table_insert (users, GUINT_TO_POINTER (uid), name);
    }
  return name;
}

/* What a holder or a waiter has, in the resource's units whatever its
 * type: a lock file that could not be read holds all of @capacity. */
static gint64
amount_of (TesseraDynamicLockFile *lock_file, gint64 capacity)
{
  gint64 amount = tessera_dynamic_lock_file_get_amount (lock_file);

  return amount >= 0 ? amount : MAX (capacity, 0);
}

/* The member @member: @text as a name is shown (escaped), or null. */
static void
add_name (JsonBuilder *builder, const char *member, const char *text)
{
  json_builder_set_member_name (builder, member);
  if (text != NULL)
    {
      g_autofree char *shown = escape_name (text, FALSE);

      json_builder_add_string_value (builder, shown);
    }
  else
    json_builder_add_null_value (builder);
}

/* The user @uid ("uid", "user"), each JSON null when unknown (-1). */
static void
add_user (JsonBuilder *builder, gint64 uid, GHashTable *users)
{
  const char *user = uid >= 0 ? user_name (users, (uid_t) uid) : NULL;

  json_builder_set_member_name (builder, "uid");
  if (uid >= 0)
    json_builder_add_int_value (builder, uid);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "user");
  if (user != NULL)
    json_builder_add_string_value (builder, user);
  else
    json_builder_add_null_value (builder);
}

static int
compare_since (gconstpointer a, gconstpointer b)
{
  gint64 x = tessera_dynamic_lock_file_get_mtime (*(TesseraDynamicLockFile * const *) a);
  gint64 y = tessera_dynamic_lock_file_get_mtime (*(TesseraDynamicLockFile * const *) b);

  return x < y ? -1 : x > y;
}

/* status --json's "waiters": the queue, like squeue's: those whose
 * patience is over ("reserved") and those within it ("waiting"), the
 * longest waiting first; their sum in "waiting". */
static void
add_waiters (JsonBuilder *builder, TesseraTrackedDynamicResource *resource, gint64 capacity, GHashTable *users)
{
  g_autoptr(GPtrArray) waiters = tessera_tracked_dynamic_resource_list_waiters (resource, NULL);
  g_autoptr(GPtrArray) patient = tessera_tracked_dynamic_resource_list_waiting (resource, NULL);
  g_autoptr(GHashTable) reserving = g_hash_table_new (NULL, NULL);
  gint64 waiting = 0;

  if (waiters == NULL)
    waiters = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < waiters->len; i++)
    g_hash_table_add (reserving, g_ptr_array_index (waiters, i));
  for (guint i = 0; patient != NULL && i < patient->len; i++)
    g_ptr_array_add (waiters, g_object_ref (g_ptr_array_index (patient, i)));
  g_ptr_array_sort (waiters, compare_since);
  json_builder_set_member_name (builder, "waiters");
  json_builder_begin_array (builder);
  for (guint i = 0; i < waiters->len; i++)
    {
      TesseraDynamicLockFile *waiter = g_ptr_array_index (waiters, i);
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (waiter);
      JsonNode *wants = tessera_dynamic_lock_file_get_information (waiter);
      g_autofree char *job = holder_name (waiter);
      g_autofree char *since = format_since (waiter);
      gint64 amount = amount_of (waiter, capacity);
      /* More than the resource has in all: never served, and the
       * library counts it as reserving nothing (a member may write any
       * count in her entry). */
      gboolean never = capacity >= 0 && tessera_dynamic_lock_file_get_amount (waiter) > capacity;

      if (!never)
        waiting = add_units (waiting, amount);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "job");
      json_builder_add_string_value (builder, job);
      add_name (builder, "job_uri", tessera_dynamic_lock_file_get_job_uri (waiter));
      add_user (builder, holder_owner (tessera_tracked_dynamic_resource_get_lock_folder (resource), waiter, process),
                users);
      json_builder_set_member_name (builder, "pid");
      if (process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0)
        json_builder_add_int_value (builder, tessera_process_get_pid (process));
      else
        json_builder_add_null_value (builder);
      add_name (builder, "host", process ? tessera_process_get_host (process) : NULL);
      /* A reserving entry: later requests count it as held; one asking
       * for more than there is in all reserves nothing. */
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, never ? "never-served"
                                              : g_hash_table_contains (reserving, waiter) ? "reserved" : "waiting");
      json_builder_set_member_name (builder, "since");
      if (since != NULL)
        json_builder_add_string_value (builder, since);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "amount");
      json_builder_add_int_value (builder, amount);
      json_builder_set_member_name (builder, "wants");
      json_builder_add_value (builder, wants != NULL ? json_node_copy (wants) : json_node_new (JSON_NODE_NULL));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "waiting");
  json_builder_add_int_value (builder, waiting);
}

/* Opens status --json's object for resource @name, up to its holders'
 * array, left open: @path (escaped here), @store and @usage (the type's
 * words in place of "N of M free") may be %NULL, JSON null. */
static void
begin_description (JsonBuilder *builder, TesseraConfig *config, const char *name, const char *path,
                   const char *store, gint64 capacity, gint64 free_units, const char *usage)
{
  g_autofree char *shown = path != NULL ? escape_name (path, FALSE) : NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, name);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, tessera_config_get_type_name (config, name));
  json_builder_set_member_name (builder, "path");
  if (shown != NULL)
    json_builder_add_string_value (builder, shown);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "store");
  if (store != NULL)
    json_builder_add_string_value (builder, store);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "capacity");
  json_builder_add_int_value (builder, capacity);
  json_builder_set_member_name (builder, "free");
  json_builder_add_int_value (builder, free_units);
  json_builder_set_member_name (builder, "usage");
  if (usage != NULL)
    json_builder_add_string_value (builder, usage);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "holders");
  json_builder_begin_array (builder);
}

/* A holder's line of the text, from what its JSON holds (members that
 * are JSON null here NULL; the names as escaped for JSON, escaped for a
 * terminal when written). */
typedef struct
{
  const char *job;
  const char *user;        /* NULL: its uid (uid_text), else "?" */
  const char *uid_text;
  const char *pid_text;    /* NULL: "?" */
  const char *host;
  const char *process_type;
  const char *process_id;
  const char *reason;
  const char *state;
  const char *since;
  const char *information; /* its JSON text */
  gint64 lease_ttl;        /* < 0: none */
} HolderLine;

static void format_holder_line (const char *resource_name, const HolderLine *line, GString *out);
static void format_header (JsonObject *object, guint holders, GString *out);
static void format_waiters (JsonObject *object, GString *out);
static char *information_text (JsonGenerator **generator, JsonNode *node);

/* What the text line and the JSON both show of a holder: its process's
 * own id (its spec's "pid": a Slurm job's id; else a local pid), and why
 * it holds everything (its file cannot be read) or is unknown (its
 * process's problem, else @doubt); each NULL when there is none. */
static void
holder_id_and_reason (TesseraDynamicLockFile *lock_file, TesseraProcess *process, const char *doubt,
                      char **process_id, char **reason)
{
  JsonNode *spec = process ? tessera_process_get_spec (process) : NULL;
  JsonNode *id = spec && JSON_NODE_HOLDS_OBJECT (spec)
                 ? json_object_get_member (json_node_get_object (spec), "pid") : NULL;

  *process_id = NULL;
  *reason = NULL;
  if (id != NULL && JSON_NODE_HOLDS_VALUE (id) && json_node_get_value_type (id) == G_TYPE_STRING)
    *process_id = escape_name (json_node_get_string (id), FALSE);
  else if (id != NULL && JSON_NODE_HOLDS_VALUE (id) && json_node_get_value_type (id) == G_TYPE_INT64)
    *process_id = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (id));
  else if (process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0)
    *process_id = g_strdup_printf ("%d", (int) tessera_process_get_pid (process));
  if (tessera_dynamic_lock_file_get_problem (lock_file) != NULL)
    *reason = escape_name (tessera_dynamic_lock_file_get_problem (lock_file), FALSE);
  else if (process && tessera_process_get_problem (process) != NULL)
    *reason = g_strdup (tessera_process_get_problem (process));
  else if (doubt != NULL)
    *reason = escape_name (doubt, FALSE);
}

/* The text line of a holder, from the values its JSON would hold
 * (describe_into()'s, as it computes them): @information is consumed. */
static void
describe_holder_line (TesseraTrackedDynamicResource *resource, const char *resource_name,
                      TesseraDynamicLockFile *lock_file, TesseraProcess *process, const char *job,
                      const char *since, const char *process_id, const char *reason, JsonNode *information,
                      const char *state, gint64 owner, GHashTable *users, JsonGenerator **generator, GString *out)
{
  gboolean local = process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0;
  g_autoptr(JsonNode) shown_information = information ? information : json_node_new (JSON_NODE_NULL);
  g_autofree char *info = information_text (generator, shown_information);
  g_autofree char *pid_text = local ? g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) tessera_process_get_pid (process))
                                    : NULL;
  g_autofree char *uid_text = owner >= 0 ? g_strdup_printf ("%" G_GINT64_FORMAT, owner) : NULL;
  g_autofree char *host = process && tessera_process_get_host (process)
                          ? escape_name (tessera_process_get_host (process), FALSE) : NULL;
  g_autofree char *type = process && tessera_process_get_process_type (process)
                          ? escape_name (tessera_process_get_process_type (process), FALSE) : NULL;
  double left = tessera_tracked_dynamic_resource_get_holder_lease_left (resource, lock_file);
  HolderLine line = { 0 };

  line.job = job;
  line.user = owner >= 0 ? user_name (users, (uid_t) owner) : NULL;
  line.uid_text = uid_text;
  line.pid_text = pid_text;
  line.host = host;
  line.process_type = type;
  line.process_id = process_id;
  line.reason = reason;
  line.state = state;
  line.since = since;
  line.information = info;
  line.lease_ttl = left >= 0 ? (gint64) left : -1;
  format_holder_line (resource_name, &line, out);
}

/* {"name", "type", "path", "store", "capacity", "free", "holders": [...]}
 * ("path": where the pool lives, its key on etcd)
 * @fresh: just opened, so its view was brought up to date under ipc.lock
 * a moment ago: not read again (each holder's state is judged here).
 * @lines: when given, the holders are written there as format_description()
 * would (not put in the JSON, whose "holders" stays empty): a JSON tree
 * of 10 000 holders cost more than reading their files. */
static JsonNode *
describe_into (TesseraConfig *config, const char *name, TesseraTrackedDynamicResource *resource, gboolean fresh,
               GString *lines, GError **unusable_out)
{
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(GError) unusable = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GPtrArray) states = NULL;
  g_autofree char *location = tessera_tracked_dynamic_resource_dup_location (resource);
  const char *lock_folder = tessera_tracked_dynamic_resource_get_lock_folder (resource);
  g_autofree char *store = NULL;
  g_autofree char *usage = NULL;
  gint64 capacity = -1, free_units = -1;
  /* What live (or unjudged) holders have, and dead ones whose lock file
   * stays: theirs is not free until a run takes it back. */
  gint64 held = 0, reclaimable = 0;

  if (!fresh)
    tessera_tracked_dynamic_resource_update (resource, NULL);
  tessera_tracked_dynamic_resource_get_usage (resource, &capacity, &free_units);
  files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  states = holder_states (files);
  /* A holder that no pid check here can judge (remote, or without a
   * process) is judged by its job lock, which the opening did not look
   * at: an update does, and says which cannot be judged at all. */
  for (guint i = 0; fresh && i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);

      if (tessera_dynamic_lock_file_get_process (lock_file) == NULL ||
          g_str_equal (g_ptr_array_index (states, i), "remote"))
        {
          tessera_tracked_dynamic_resource_update (resource, NULL);
          tessera_tracked_dynamic_resource_get_usage (resource, &capacity, &free_units);
          g_ptr_array_unref (files);
          files = tessera_tracked_dynamic_resource_list_lock_files (resource);
          g_ptr_array_unref (states);
          states = holder_states (files);
          break;
        }
    }
  /* Holders it could not read may hold what looks free: a run would not
   * decide there. */
  if (!tessera_tracked_dynamic_resource_check_readable (resource, &unusable))
    free_units = -1;
  else
    usage = tessera_tracked_dynamic_resource_dup_usage_text (resource);

  g_object_get (resource, "store", &store, NULL);
  begin_description (builder, config, name, location != NULL ? location : lock_folder,
                     store != NULL ? store : "folder", capacity, free_units, usage);
  for (guint i = 0; i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
      g_autofree char *job = holder_name (lock_file);
      g_autofree char *since = format_since (lock_file);
      /* Why its verdict was no verdict (a job lock it cannot open). */
      g_autofree char *doubt = tessera_dynamic_lock_file_dup_unknown_reason (lock_file);
      /* What tessera_dynamic_lock_file_to_json() would hold, without the
       * rest of the file it builds (once per holder). */
      JsonNode *information = TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (lock_file)->to_information (lock_file);
      const char *state = doubt != NULL ? "unknown" : g_ptr_array_index (states, i);
      gint64 amount = amount_of (lock_file, capacity);

      if (g_str_equal (state, "dead"))
        reclaimable = add_units (reclaimable, amount);
      else
        held = add_units (held, amount);
      gint64 owner = holder_owner (lock_folder, lock_file, process);
      g_autofree char *process_id = NULL;
      g_autofree char *reason = NULL;

      holder_id_and_reason (lock_file, process, doubt, &process_id, &reason);
      if (lines != NULL)
        {
          describe_holder_line (resource, name, lock_file, process, job, since, process_id, reason, information,
                                state, owner, users, &generator, lines);
          continue;
        }
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "job");
      json_builder_add_string_value (builder, job);
      /* None for an entry that is not even read (a FIFO in jobs/). */
      add_name (builder, "job_uri", tessera_dynamic_lock_file_get_job_uri (lock_file));
      json_builder_set_member_name (builder, "pid");
      if (process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0)
        json_builder_add_int_value (builder, tessera_process_get_pid (process));
      else
        json_builder_add_null_value (builder);
      /* Another process type (experimaestro's Slurm jobs): its type and
       * its own id ("pid" in its spec: a job id), and why an unknown
       * holder is unknown. */
      add_name (builder, "process_type", process ? tessera_process_get_process_type (process) : NULL);
      json_builder_set_member_name (builder, "process_id");
      if (process_id != NULL)
        json_builder_add_string_value (builder, process_id);
      else
        json_builder_add_null_value (builder);
      /* Why it holds everything (its file cannot be read), else why it
       * is unknown. */
      json_builder_set_member_name (builder, "reason");
      if (reason != NULL)
        json_builder_add_string_value (builder, reason);
      else
        json_builder_add_null_value (builder);
      add_name (builder, "host", process ? tessera_process_get_host (process) : NULL);
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, state);
      /* Whose job it is: the lock file's owner (nobody owns a file as
       * another), or where it has no file (etcd) the uid its process
       * spec records (Tessera records it). */
      add_user (builder, owner, users);
      /* What it runs and in which batch job, when recorded. */
      json_builder_set_member_name (builder, "command_line");
      if (process && tessera_process_get_command_line (process) != NULL)
        {
          const char * const *argv = tessera_process_get_command_line (process);

          json_builder_begin_array (builder);
          for (guint k = 0; argv[k] != NULL; k++)
            {
              g_autofree char *arg = escape_name (argv[k], FALSE);
              json_builder_add_string_value (builder, arg);
            }
          json_builder_end_array (builder);
        }
      else
        json_builder_add_null_value (builder);
      add_name (builder, "batch_job_id", process ? tessera_process_get_batch_job_id (process) : NULL);
      json_builder_set_member_name (builder, "since");
      if (since != NULL)
        json_builder_add_string_value (builder, since);
      else
        json_builder_add_null_value (builder);
      /* Seconds its store lease has left (etcd), null without one. */
      json_builder_set_member_name (builder, "lease_ttl");
      {
        double left = tessera_tracked_dynamic_resource_get_holder_lease_left (resource, lock_file);

        if (left >= 0)
          json_builder_add_int_value (builder, (gint64) left);
        else
          json_builder_add_null_value (builder);
      }
      /* The same number for every type (a count, a number of GPUs, 1 for
       * a mutex), beside the type's own words: scripts sum it per user. */
      json_builder_set_member_name (builder, "amount");
      json_builder_add_int_value (builder, amount);
      json_builder_set_member_name (builder, "information");
      json_builder_add_value (builder, information ? information : json_node_new (JSON_NODE_NULL));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "held");
  json_builder_add_int_value (builder, held);
  json_builder_set_member_name (builder, "reclaimable");
  json_builder_add_int_value (builder, reclaimable);
  add_waiters (builder, resource, capacity, users);
  if (unusable != NULL)
    {
      g_autofree char *why = escape_name (unusable->message, FALSE);

      json_builder_set_member_name (builder, "error");
      json_builder_add_string_value (builder, why);
    }
  json_builder_end_object (builder);
  if (unusable_out != NULL)
    *unusable_out = g_steal_pointer (&unusable);
  return json_builder_get_root (builder);
}

JsonNode *
describe (TesseraConfig *config, const char *name, TesseraTrackedDynamicResource *resource, gboolean fresh,
          GError **unusable_out)
{
  return describe_into (config, name, resource, fresh, NULL, unusable_out);
}

void
describe_text (TesseraConfig *config, const char *name, TesseraTrackedDynamicResource *resource, gboolean fresh,
               GString *out, GError **unusable_out)
{
  g_autoptr(GString) holders = g_string_new (NULL);
  g_autoptr(JsonNode) node = describe_into (config, name, resource, fresh, holders, unusable_out);
  JsonObject *object = json_node_get_object (node);

  if (json_object_get_string_member_with_default (object, "error", NULL) != NULL)
    {
      format_header (object, 0, out);
      return;
    }
  /* Described above: the holders' count is that of their lines' first. */
  format_header (object, holders->len > 0 ? 1 : 0, out);
  g_string_append_len (out, holders->str, holders->len);
  format_waiters (object, out);
}

/* What status --json says of resource @name when it cannot be opened:
 * nothing is known of it but why. */
JsonNode *
describe_unreadable (TesseraConfig *config, const char *name, const char *why)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *path = tessera_config_dup_path (config, name);
  g_autofree char *shown_why = escape_name (why != NULL ? why : "", FALSE);

  begin_description (builder, config, name, path, NULL, -1, -1, NULL);
  json_builder_end_array (builder);
  /* Unknown, as capacity and free. */
  json_builder_set_member_name (builder, "held");
  json_builder_add_int_value (builder, -1);
  json_builder_set_member_name (builder, "reclaimable");
  json_builder_add_int_value (builder, -1);
  json_builder_set_member_name (builder, "waiters");
  json_builder_begin_array (builder);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "waiting");
  json_builder_add_int_value (builder, -1);
  json_builder_set_member_name (builder, "error");
  json_builder_add_string_value (builder, shown_why);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* json_to_string (@node, FALSE), through one generator for all holders
 * (@generator: made at the first) rather than one each. */
static char *
information_text (JsonGenerator **generator, JsonNode *node)
{
  if (node == NULL)
    return json_to_string (node, FALSE);
  if (*generator == NULL)
    *generator = json_generator_new ();
  json_generator_set_root (*generator, node);
  return json_generator_to_data (*generator, NULL);
}

/* The first line(s): the resource, what is free (or why it cannot be
 * read), and "no holder" when @holders is 0. */
static void
format_header (JsonObject *object, guint holders, GString *out)
{
  gint64 capacity = json_object_get_int_member (object, "capacity");
  gint64 reclaimable = json_object_get_int_member_with_default (object, "reclaimable", 0);
  /* What dead holders leave to take back, when they leave any. */
  g_autofree char *also = reclaimable > 0
    /* Translators: after "cpu (countertoken): 0 of 8 free": what live holders hold, and dead ones */
    ? g_strdup_printf (_(", %lld held, %lld reclaimable"),
                       (long long) json_object_get_int_member_with_default (object, "held", 0), (long long) reclaimable)
    : g_strdup ("");
  const char *why = json_object_get_string_member_with_default (object, "error", NULL);

  if (why != NULL)
    {
      g_autofree char *why_text = escape_name (why, TRUE);

      /* Translators: "gpu (gpu): cannot be read: <why>" */
      g_string_append_printf (out, _("%s (%s): cannot be read: %s\n"), json_object_get_string_member (object, "name"),
                              json_object_get_string_member (object, "type"), why_text);
      return;
    }
  if (json_object_get_string_member_with_default (object, "usage", NULL) != NULL)
    {
      g_autofree char *usage_text = escape_name (json_object_get_string_member (object, "usage"), TRUE);

      g_string_append_printf (out, "%s (%s): %s%s\n", json_object_get_string_member (object, "name"),
                              json_object_get_string_member (object, "type"), usage_text, also);
    }
  else if (capacity >= 0)
    /* Translators: "cpu (countertoken): 6 of 8 free" */
    g_string_append_printf (out, _("%s (%s): %lld of %lld free%s\n"),
             json_object_get_string_member (object, "name"), json_object_get_string_member (object, "type"),
             (long long) json_object_get_int_member (object, "free"), (long long) capacity, also);
  else
    g_string_append_printf (out, "%s (%s)\n", json_object_get_string_member (object, "name"),
             json_object_get_string_member (object, "type"));
  if (holders == 0)
    g_string_append_printf (out, "  %s\n", _("no holder"));
}

/* A holder's line(s) under resource @resource_name. */
static void
format_holder_line (const char *resource_name, const HolderLine *line, GString *out)
{
  g_autofree char *user_text = g_strdup (line->user != NULL ? line->user
                                         : line->uid_text != NULL ? line->uid_text : "?");
  const char *host = line->host != NULL ? line->host : "?";
  g_autofree char *job_text = escape_name (line->job, TRUE);
  g_autofree char *host_text = escape_name (host, TRUE);
  g_autofree char *info_text = escape_name (line->information, TRUE);
  g_autofree char *user_safe = escape_name (user_text, TRUE);
  const char *since = line->since != NULL ? line->since : "?";

  if (line->process_type != NULL && !g_str_equal (line->process_type, "local"))
    {
      g_autofree char *type_text = escape_name (line->process_type, TRUE);
      g_autofree char *id_text = escape_name (line->process_id != NULL ? line->process_id : "?", TRUE);

      /* Translators: job, user, process type (slurm…), its job id, state, time, details */
      g_string_append_printf (out, _("  %s  %s, %s job %s, %s, since %s  %s\n"),
               job_text, user_safe, type_text, id_text, line->state, since, info_text);
    }
  else
    /* Translators: job, user, pid, host, state (alive/dead/remote/unknown), time, details */
    g_string_append_printf (out, _("  %s  %s, pid %s on %s, %s, since %s  %s\n"),
             job_text, user_safe, line->pid_text != NULL ? line->pid_text : "?", host_text, line->state, since,
             info_text);
  if (line->reason != NULL)
    {
      g_autofree char *reason_text = escape_name (line->reason, TRUE);
      /* Translators: why a holder is "unknown" */
      g_string_append_printf (out, _("    (%s)\n"), reason_text);
    }
  if (line->reason != NULL && g_strcmp0 (line->state, "unknown") == 0)
    {
      g_autofree char *name_text = escape_name (resource_name, TRUE);

      /* Translators: the command that frees an "unknown" holder (resource, job) */
      g_string_append_printf (out, _("    it counts until it is surely gone; once it is: tessera clean --force %s %s\n"),
                              name_text, job_text);
    }
  if (line->lease_ttl >= 0)
    /* Translators: seconds the holder's etcd lease has left */
    g_string_append_printf (out, _("    lease: %lld s left\n"), (long long) line->lease_ttl);
}

static void
format_waiters (JsonObject *object, GString *out)
{
  JsonArray *waiters = json_object_get_array_member (object, "waiters");

  for (guint i = 0; waiters != NULL && i < json_array_get_length (waiters); i++)
    {
      JsonObject *w = json_array_get_object_element (waiters, i);
      g_autofree char *wants = json_to_string (json_object_get_member (w, "wants"), FALSE);
      const char *user = json_object_get_string_member_with_default (w, "user", NULL);
      JsonNode *uid = json_object_get_member (w, "uid");
      g_autofree char *user_text = user != NULL ? g_strdup (user)
                                   : uid && !JSON_NODE_HOLDS_NULL (uid)
                                   ? g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (uid))
                                   : g_strdup ("?");
      const char *since = json_object_get_string_member_with_default (w, "since", NULL);
      g_autofree char *job_text = escape_name (json_object_get_string_member (w, "job"), TRUE);
      g_autofree char *user_safe = escape_name (user_text, TRUE);
      g_autofree char *wants_text = escape_name (wants, TRUE);

      if (g_strcmp0 (json_object_get_string_member_with_default (w, "state", NULL), "never-served") == 0)
        /* Translators: a request in the queue that asks for more than the
         * resource has: job, user, since when, what it asks for */
        g_string_append_printf (out, _("  waiting: %s  %s, since %s, wants %s: more than there is in all, never "
                                       "served (reserves nothing)\n"), job_text, user_safe,
                                since != NULL ? since : "?", wants_text);
      else
        /* Translators: a request in the queue: job, user, since when, what it asks for */
        g_string_append_printf (out, _("  waiting: %s  %s, since %s, wants %s\n"), job_text, user_safe,
                                since != NULL ? since : "?", wants_text);
    }
}

void
format_description (JsonNode *node, GString *out)
{
  JsonObject *object = json_node_get_object (node);
  JsonArray *holders = json_object_get_array_member (object, "holders");
  g_autoptr(JsonGenerator) generator = NULL;

  format_header (object, json_array_get_length (holders), out);
  if (json_object_get_string_member_with_default (object, "error", NULL) != NULL)
    return;
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);
      g_autofree char *info = information_text (&generator, json_object_get_member (h, "information"));
      JsonNode *pid = json_object_get_member (h, "pid");
      JsonNode *uid = json_object_get_member (h, "uid");
      JsonNode *ttl = json_object_get_member (h, "lease_ttl");
      g_autofree char *pid_text = JSON_NODE_HOLDS_NULL (pid) ? NULL
                                  : g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (pid));
      g_autofree char *uid_text = uid && !JSON_NODE_HOLDS_NULL (uid)
                                  ? g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (uid)) : NULL;
      JsonNode *user = json_object_get_member (h, "user");
      HolderLine line = { 0 };

      line.job = json_object_get_string_member (h, "job");
      line.user = user && !JSON_NODE_HOLDS_NULL (user) ? json_node_get_string (user) : NULL;
      line.uid_text = uid_text;
      line.pid_text = pid_text;
      line.host = json_object_get_string_member_with_default (h, "host", NULL);
      line.process_type = json_object_get_string_member_with_default (h, "process_type", NULL);
      line.process_id = json_object_get_string_member_with_default (h, "process_id", NULL);
      line.reason = json_object_get_string_member_with_default (h, "reason", NULL);
      line.state = json_object_get_string_member (h, "state");
      line.since = json_object_get_string_member_with_default (h, "since", NULL);
      line.information = info;
      line.lease_ttl = ttl != NULL && !JSON_NODE_HOLDS_NULL (ttl) ? json_node_get_int (ttl) : -1;
      format_holder_line (json_object_get_string_member (object, "name"), &line, out);
    }
  format_waiters (object, out);
}
