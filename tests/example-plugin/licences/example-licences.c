/* example-licences.c: a licence pool with a per-user cap — a counter
 * (informations.json {"total": N}) where one user may hold at most
 * `per-user` licences at a time.
 *
 *   [resource matlab]
 *   type=licences
 *   path=/var/lib/tessera/matlab
 *   total=10
 *   per-user=2
 *
 * It subclasses the public TesseraCounterResource, chains up, and adds
 * the holder's user to each lock file's "information"; the lock file keeps
 * it when Tessera rewrites the file. docs/writing-a-plugin.md walks
 * through it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gmodule.h>
#include <tessera/tessera.h>

#define EXAMPLE_TYPE_LICENCES (example_licences_get_type ())
G_DECLARE_FINAL_TYPE (ExampleLicences, example_licences, EXAMPLE, LICENCES, TesseraCounterResource)

struct _ExampleLicences
{
  TesseraCounterResource parent_instance;
  gint64 per_user;         /* from the key file */
  GHashTable *by_user;     /* user name → gint64 held, from the lock files */
};

G_DEFINE_DYNAMIC_TYPE (ExampleLicences, example_licences, TESSERA_TYPE_COUNTER_RESOURCE)

#define PARENT TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (example_licences_parent_class)

enum { PROP_0, PROP_PER_USER };

/* The user a lock file names; "" for a holder written by another type. */
static const char *
holder_of (TesseraDynamicLockFile *lock_file)
{
  JsonNode *information = tessera_dynamic_lock_file_get_information (lock_file);
  JsonNode *user;

  if (information == NULL || !JSON_NODE_HOLDS_OBJECT (information))
    return "";
  user = json_object_get_member (json_node_get_object (information), "user");
  if (user == NULL || json_node_get_value_type (user) != G_TYPE_STRING)
    return "";
  return json_node_get_string (user);
}

static gint64 *
held_by (ExampleLicences *self, const char *user)
{
  gint64 *held = g_hash_table_lookup (self->by_user, user);

  if (held == NULL)
    {
      held = g_new0 (gint64, 1);
      g_hash_table_insert (self->by_user, g_strdup (user), held);
    }
  return held;
}

/* Accounting: the counter counts the total; we count per user. These run
 * with the resource's locks held, on any thread: no blocking calls. */
static void
reset_state (TesseraTrackedDynamicResource *resource)
{
  PARENT->reset_state (resource);
  g_hash_table_remove_all (EXAMPLE_LICENCES (resource)->by_user);
}

static void
account (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  PARENT->account_lock_file (resource, lock_file);
  *held_by (EXAMPLE_LICENCES (resource), holder_of (lock_file)) +=
    tessera_counter_lock_file_get_count (TESSERA_COUNTER_LOCK_FILE (lock_file));
}

static void
unaccount (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  PARENT->unaccount_lock_file (resource, lock_file);
  *held_by (EXAMPLE_LICENCES (resource), holder_of (lock_file)) -=
    tessera_counter_lock_file_get_count (TESSERA_COUNTER_LOCK_FILE (lock_file));
}

/* The requester is the process acquiring, so its user is ours. */
static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  ExampleLicences *self = EXAMPLE_LICENCES (resource);
  gint64 wanted = tessera_counter_dependency_get_count (TESSERA_COUNTER_DEPENDENCY (dependency));

  if (wanted > self->per_user)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_REQUEST_TOO_LARGE,
                   "at most %" G_GINT64_FORMAT " licences per user", self->per_user);
      return FALSE;
    }
  if (!PARENT->is_available (resource, dependency, error))
    return FALSE;
  if (*held_by (self, g_get_user_name ()) + wanted <= self->per_user)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, "this user holds their licences");
  return FALSE;
}

/* The counter writes {"count": K}; we add who holds them. */
static JsonNode *
information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  JsonNode *node = PARENT->get_lock_file_information (resource, dependency);

  json_object_set_string_member (json_node_get_object (node), "user", g_get_user_name ());
  return node;
}

/* What a request waiting past its patience reserves: the counter's
 * {"count": K}, and who waits, as in the lock file, so that the
 * reservation counts against its user too (account reads "user"). */
static JsonNode *
wait_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  JsonNode *node = PARENT->get_wait_information (resource, dependency);

  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    json_object_set_string_member (json_node_get_object (node), "user", g_get_user_name ());
  return node;
}

/* Key file settings are properties: `per-user=2`. */
static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_PER_USER)
    EXAMPLE_LICENCES (object)->per_user = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_PER_USER)
    g_value_set_int64 (value, EXAMPLE_LICENCES (object)->per_user);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
finalize (GObject *object)
{
  g_hash_table_unref (EXAMPLE_LICENCES (object)->by_user);
  G_OBJECT_CLASS (example_licences_parent_class)->finalize (object);
}

static void
example_licences_class_init (ExampleLicencesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->set_property = set_property;
  object_class->get_property = get_property;
  object_class->finalize = finalize;
  tracked->reset_state = reset_state;
  tracked->account_lock_file = account;
  tracked->unaccount_lock_file = unaccount;
  tracked->is_available = is_available;
  tracked->get_lock_file_information = information;
  tracked->get_wait_information = wait_information;

  g_object_class_install_property (object_class, PROP_PER_USER,
    g_param_spec_int64 ("per-user", NULL, NULL, 1, G_MAXINT32, 1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

static void
example_licences_class_finalize (ExampleLicencesClass *klass)
{
}

static void
example_licences_init (ExampleLicences *self)
{
  self->by_user = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

/* The entry point: tessera_<Module>_register_types. */
G_MODULE_EXPORT void tessera_licences_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_licences_register_types (GTypeModule *module)
{
  example_licences_register_type (module);
  tessera_registry_register_resource_type ("licences", EXAMPLE_TYPE_LICENCES);
}
