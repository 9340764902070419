/* tessera-mutex.c: one exclusive holder, or any number of shared holders.
 *
 * Fairness to writers: an exclusive request that has to wait leaves an
 * intent, a side entry of its pool of kind "intents" (in a lock folder
 * the file F/intents/NAME.json, outside jobs/, so no peer counts it as a
 * holder; on etcd a key on its process's lease, seen by every host),
 * reached the same way whatever the store. While a live intent of
 * another job exists, new shared requests wait too, so a stream of
 * shared holders cannot starve an exclusive one. An intent is removed
 * when its request is granted or given up, when its process is gone, or
 * at the latest INTENT_LIFETIME seconds after it was written; a waiter
 * attempts again at least every poll interval and writes it again once
 * half its life is gone (not at every attempt: on etcd a write wakes
 * every waiter). The one dropped by a grant goes once the grant's holder
 * counts.
 *
 * Past its patience, a waiter also reserves in the folder's queue, as
 * other types' waiters do: an exclusive one the whole mutex, a shared one
 * a share (which keeps later exclusive requests out). Intents stay (an
 * exclusive request still goes first from its first wait, and Tessera
 * peers that do not read the queue still see it); but a shared waiter
 * that reserves no longer yields to them: an exclusive waiter ahead of it
 * in the queue reserves the whole mutex, which it counts, and the others
 * come after it and wait for its share (yielding to each other, the two
 * would wait for ever). So a stream of exclusive requests cannot starve a
 * shared one either.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <glib/gi18n-lib.h>
#include <string.h>
#include <unistd.h>

#include "tessera-mutex.h"

#define INTENT_LIFETIME 300

struct _TesseraMutex
{
  TesseraTrackedDynamicResource parent_instance;

  gint64 exclusive;
  gint64 shared;
};

enum { PROP_0, PROP_HOLDERS, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraMutex, tessera_mutex, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraMutex *self = TESSERA_MUTEX (object);

  if (prop_id == PROP_HOLDERS)
    g_value_set_int64 (value, self->exclusive + self->shared);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
reset_state (TesseraTrackedDynamicResource *resource)
{
  TESSERA_MUTEX (resource)->exclusive = TESSERA_MUTEX (resource)->shared = 0;
}

static void
account_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  if (tessera_mutex_lock_file_is_shared (TESSERA_MUTEX_LOCK_FILE (lock_file)))
    TESSERA_MUTEX (resource)->shared++;
  else
    TESSERA_MUTEX (resource)->exclusive++;
}

static void
unaccount_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  if (tessera_mutex_lock_file_is_shared (TESSERA_MUTEX_LOCK_FILE (lock_file)))
    TESSERA_MUTEX (resource)->shared--;
  else
    TESSERA_MUTEX (resource)->exclusive--;
}

/* Whether an intent (@node as read; NULL when it could not be) still
 * counts at @now: one without a plain number for "until", past it, or
 * whose process is dead, does not. */
static gboolean
intent_counts (JsonNode *node, gint64 now)
{
  g_autoptr(TesseraProcess) process = NULL;
  JsonObject *object;
  JsonNode *until;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return FALSE;
  object = json_node_get_object (node);
  if (json_object_has_member (object, "process"))
    process = tessera_process_new_from_json (json_object_get_member (object, "process"), NULL);
  until = json_object_get_member (object, "until");
  return until != NULL && JSON_NODE_HOLDS_VALUE (until) && json_node_get_value_type (until) == G_TYPE_INT64 &&
         json_node_get_int (until) >= now && process != NULL &&
         tessera_process_check (process) != TESSERA_PROCESS_DEAD;
}

/* An intent as the pool keeps it: bounded as a file's always was (an
 * empty text: one the store could not read). */
static JsonNode *
parse_intent (const char *text)
{
  gsize length = strlen (text);

  return length > 0 && length < 4096 ? tessera_json_parse (text, (gssize) length, NULL) : NULL;
}

/* Whether another job's exclusive request waits (@own: ours, a holder's
 * name without ".json"); intents that no longer count go. */
static gboolean
exclusive_waiting (TesseraMutex *self, const char *own)
{
  TesseraTrackedDynamicResource *resource = TESSERA_TRACKED_DYNAMIC_RESOURCE (self);
  g_autoptr(GHashTable) intents = tessera_tracked_dynamic_resource_list_side_entries (resource, TESSERA_MUTEX_INTENTS);
  gint64 now = g_get_real_time () / G_USEC_PER_SEC;
  gboolean waiting = FALSE;
  GHashTableIter iter;
  gpointer name, text;

  g_hash_table_iter_init (&iter, intents);
  while (!waiting && g_hash_table_iter_next (&iter, &name, &text))
    {
      g_autoptr(JsonNode) node = NULL;

      if (g_str_equal (name, own))
        continue;
      node = parse_intent (text);
      if (intent_counts (node, now))
        waiting = TRUE;
      else
        tessera_tracked_dynamic_resource_delete_side_entry (resource, TESSERA_MUTEX_INTENTS, name, NULL);
    }
  return waiting;
}

/* The intent's JSON: its job, its process, and until when it counts. */
static char *
intent_text (TesseraMutexDependency *dependency)
{
  g_autoptr(TesseraProcess) process = tessera_process_new_self ();
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  JsonObject *object = json_object_new ();
  TesseraJob *job = tessera_dynamic_dependency_get_target (TESSERA_DYNAMIC_DEPENDENCY (dependency));

  json_object_set_string_member (object, "job_uri", tessera_job_get_job_uri (job));
  json_object_set_member (object, "process", tessera_process_to_json (process));
  json_object_set_int_member (object, "until", g_get_real_time () / G_USEC_PER_SEC + INTENT_LIFETIME);
  json_node_take_object (node, object);
  return json_to_string (node, FALSE);
}

/* Our intent @own (without ".json"): written when it is missing or half
 * its life is gone, not at every attempt (on etcd every write wakes
 * every waiter of the pool, this one too). */
static void
write_intent (TesseraMutex *self, TesseraMutexDependency *dependency, const char *own)
{
  TesseraTrackedDynamicResource *resource = TESSERA_TRACKED_DYNAMIC_RESOURCE (self);
  g_autoptr(GHashTable) intents = tessera_tracked_dynamic_resource_list_side_entries (resource, TESSERA_MUTEX_INTENTS);
  const char *known = g_hash_table_lookup (intents, own);
  g_autoptr(JsonNode) node = known != NULL ? parse_intent (known) : NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  if (!intent_counts (node, g_get_real_time () / G_USEC_PER_SEC + INTENT_LIFETIME / 2))
    {
      text = intent_text (dependency);
      if (!tessera_tracked_dynamic_resource_put_side_entry (resource, TESSERA_MUTEX_INTENTS, own, text, &error))
        {
          g_debug ("Cannot write the intent %s of %s: %s", own,
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)), error->message);
          return;
        }
    }
  tessera_mutex_dependency_set_intent (dependency, own);
}

static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  TesseraMutex *self = TESSERA_MUTEX (resource);
  TesseraMutexDependency *dep = TESSERA_MUTEX_DEPENDENCY (dependency);
  g_autofree char *name = tessera_job_dup_lock_file_name (tessera_dynamic_dependency_get_target (dependency));
  /* Side entries are named as holders are, without ".json". */
  g_autofree char *own = g_str_has_suffix (name, TESSERA_LOCK_FILE_SUFFIX)
                         ? g_strndup (name, strlen (name) - strlen (TESSERA_LOCK_FILE_SUFFIX))
                         : g_strdup (name);
  gboolean queued = tessera_mutex_dependency_take_queued (dep);

  if (tessera_mutex_dependency_is_shared (dep))
    {
      if (self->exclusive == 0 && (queued || !exclusive_waiting (self, own)))
        return TRUE;
    }
  else if (self->exclusive == 0 && self->shared == 0)
    return TRUE;
  else
    write_intent (self, dep, own);
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, _("Mutex %s is held"),
               tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (resource)));
  return FALSE;
}

static gboolean
do_acquire (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  tessera_mutex_dependency_drop_intent (TESSERA_MUTEX_DEPENDENCY (dependency));
  return TRUE;
}

static JsonNode *
get_lock_file_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "mode",
    tessera_mutex_dependency_is_shared (TESSERA_MUTEX_DEPENDENCY (dependency)) ? "shared" : "exclusive");
  json_node_take_object (node, object);
  return node;
}

/* What a request asks for, for people: its mode, as its lock file says
 * it (get_lock_file_information marks nothing). */
static JsonNode *
describe_request (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  return get_lock_file_information (resource, dependency);
}

/* Past its patience, a waiter reserves its own mode. */
static JsonNode *
get_wait_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  tessera_mutex_dependency_set_queued (TESSERA_MUTEX_DEPENDENCY (dependency));
  return get_lock_file_information (resource, dependency);
}

static void
get_usage (TesseraTrackedDynamicResource *resource, gint64 *capacity, gint64 *free_units)
{
  TesseraMutex *self = TESSERA_MUTEX (resource);

  *capacity = 1;
  *free_units = self->exclusive == 0 && self->shared == 0 ? 1 : 0;
}

/* Held shared only: by how many ("0 of 1 free" would hide it). */
static char *
dup_usage_text (TesseraTrackedDynamicResource *resource)
{
  TesseraMutex *self = TESSERA_MUTEX (resource);

  if (self->exclusive > 0 || self->shared == 0)
    return NULL;
  /* Translators: status of a mutex held by N shared holders */
  return g_strdup_printf (_("shared by %lld"), (long long) self->shared);
}

/* request: "exclusive" (the default, also "1") or "shared" */
static TesseraDynamicDependency *
create_dependency (TesseraDynamicResource *resource, TesseraJob *job, const char *request, GError **error)
{
  gboolean shared;

  if (request == NULL || g_strcmp0 (request, "exclusive") == 0 || g_strcmp0 (request, "1") == 0)
    shared = FALSE;
  else if (g_strcmp0 (request, "shared") == 0)
    shared = TRUE;
  else
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A mutex is asked for as “exclusive” or “shared”, not “%s”"), request);
      return NULL;
    }
  return g_object_new (TESSERA_TYPE_MUTEX_DEPENDENCY, "resource", resource, "target", job,
                       "shared", shared, NULL);
}

/* intents/, made by whoever prepares the pool (its owner, in a group's
 * pool), not at a member's first exclusive wait. Made here as a side
 * folder, not through the side-entry API (list/put/delete_side_entry):
 * that API has no "make the kind's folder" call, and giving it one means
 * a new store operation (the folder store's alone: etcd keeps no
 * folders), a new public method and its own mode rule for a group's
 * pool, to spare this one call; the store seam is to get narrower, not
 * wider. */
static gboolean
prepare_pool (TesseraTrackedDynamicResource *resource, GError **error)
{
  const char *folder = tessera_tracked_dynamic_resource_get_lock_folder (resource);
  int fd;

  if (folder == NULL)
    return TRUE;
  fd = tessera_pool_part_open_side_folder (folder, TESSERA_MUTEX_INTENTS, TRUE);
  if (fd < 0)
    {
      int saved = errno;
      g_autofree char *path = g_build_filename (folder, TESSERA_MUTEX_INTENTS, NULL);

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"), path,
                   g_strerror (saved));
      return FALSE;
    }
  close (fd);
  return TRUE;
}

static void
tessera_mutex_class_init (TesseraMutexClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->get_property = get_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->create_dependency = create_dependency;
  tracked->reset_state = reset_state;
  tracked->account_lock_file = account_lock_file;
  tracked->unaccount_lock_file = unaccount_lock_file;
  tracked->is_available = is_available;
  tracked->do_acquire = do_acquire;
  tracked->get_lock_file_information = get_lock_file_information;
  tracked->get_wait_information = get_wait_information;
  tracked->describe_request = describe_request;
  tracked->get_usage = get_usage;
  tracked->dup_usage_text = dup_usage_text;
  tracked->prepare_pool = prepare_pool;
  tracked->lock_file_type = TESSERA_TYPE_MUTEX_LOCK_FILE;

  /* Holders, shared or exclusive, as last seen. */
  props[PROP_HOLDERS] = g_param_spec_int64 ("holders", NULL, NULL, 0, G_MAXINT64, 0,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_mutex_class_finalize (TesseraMutexClass *klass)
{
}

static void
tessera_mutex_init (TesseraMutex *self)
{
}

void
_tessera_mutex_register (GTypeModule *module)
{
  tessera_mutex_register_type (module);
}
