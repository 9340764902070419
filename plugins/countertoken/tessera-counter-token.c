/* tessera-counter-token.c: the seed's CounterToken, a counting semaphore
 * in a lock folder: informations.json {"total": N}, one lock file per
 * holder with information {"count": K}.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-counter-token.h"

struct _TesseraCounterToken
{
  TesseraTrackedDynamicResource parent_instance;

  gint64 initial_total;   /* written to a new informations.json; -1: none */
  gint64 total;
  gint64 used;            /* sum of the counts no larger than G_MAXINT32 */
  guint huge;             /* lock files claiming more: each takes everything */
};

enum { PROP_0, PROP_TOTAL, PROP_USED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_DYNAMIC_TYPE (TesseraCounterToken, tessera_counter_token, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (object);

  switch (prop_id)
    {
    case PROP_TOTAL: g_value_set_int64 (value, self->total); break;
    case PROP_USED: g_value_set_int64 (value, self->huge > 0 ? G_MAXINT64 : self->used); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_TOTAL)
    TESSERA_COUNTER_TOKEN (object)->initial_total = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static gint64
count_of (TesseraDynamicLockFile *lock_file)
{
  return tessera_token_lock_file_get_count (TESSERA_TOKEN_LOCK_FILE (lock_file));
}

static void
reset_state (TesseraTrackedDynamicResource *resource)
{
  TESSERA_COUNTER_TOKEN (resource)->used = 0;
  TESSERA_COUNTER_TOKEN (resource)->huge = 0;
}

/* No request is above G_MAXINT32, so neither is a real holder: a file that
 * claims more counts as taking everything, and the sum of the others
 * (at most G_MAXINT32 each) cannot overflow. */
static gboolean
is_huge (gint64 count)
{
  return count > G_MAXINT32;
}

static void
account_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (resource);
  gint64 count = count_of (lock_file);

  if (is_huge (count))
    self->huge++;
  else
    self->used += count;
}

static void
unaccount_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (resource);
  gint64 count = count_of (lock_file);

  if (is_huge (count))
    self->huge--;
  else
    self->used -= count;
}

static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (resource);
  gint64 count = tessera_counter_token_dependency_get_count (TESSERA_COUNTER_TOKEN_DEPENDENCY (dependency));

  /* More than there is in all waits, as experimaestro's does: the total
   * may grow (tessera set, informations.json); the error says why. */
  if (count > self->total)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE,
                   _("Token %s has %lld in all, fewer than the %lld asked for: waiting for the total to grow"),
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (self)),
                   (long long) self->total, (long long) count);
      return FALSE;
    }
  return self->huge == 0 && count <= self->total - self->used;
}

static JsonNode *
get_lock_file_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (object, "count",
    tessera_counter_token_dependency_get_count (TESSERA_COUNTER_TOKEN_DEPENDENCY (dependency)));
  json_node_take_object (node, object);
  return node;
}

static gboolean
handle_information_change (TesseraTrackedDynamicResource *resource, JsonNode *informations, GError **error)
{
  JsonNode *total = JSON_NODE_HOLDS_OBJECT (informations)
                    ? json_object_get_member (json_node_get_object (informations), "total") : NULL;

  if (total == NULL || !JSON_NODE_HOLDS_VALUE (total) || json_node_get_value_type (total) != G_TYPE_INT64 ||
      json_node_get_int (total) < 0)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                   _("a counter token's informations.json must be {\"total\": a non-negative integer}"));
      return FALSE;
    }
  TESSERA_COUNTER_TOKEN (resource)->total = json_node_get_int (total);
  g_object_notify_by_pspec (G_OBJECT (resource), props[PROP_TOTAL]);
  return TRUE;
}

static JsonNode *
initialize_informations (TesseraTrackedDynamicResource *resource)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (resource);
  JsonObject *object;
  JsonNode *node;

  if (self->initial_total < 0)
    return NULL;
  object = json_object_new ();
  node = json_node_new (JSON_NODE_OBJECT);
  json_object_set_int_member (object, "total", self->initial_total);
  json_node_take_object (node, object);
  return node;
}

/* request: a count of tokens, 1 when absent */
static void
get_usage (TesseraTrackedDynamicResource *resource, gint64 *capacity, gint64 *free_units)
{
  TesseraCounterToken *self = TESSERA_COUNTER_TOKEN (resource);

  *capacity = self->total;
  *free_units = self->huge > 0 ? 0 : MAX (0, self->total - self->used);
}

static TesseraDynamicDependency *
create_dependency (TesseraDynamicResource *resource, TesseraJob *job, const char *request, GError **error)
{
  guint64 count = 1;

  if (request != NULL &&
      !g_ascii_string_to_unsigned (request, 10, 1, G_MAXINT32, &count, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a token count (1 to %d)"), request, G_MAXINT32);
      return NULL;
    }
  return g_object_new (TESSERA_TYPE_COUNTER_TOKEN_DEPENDENCY,
                       "resource", resource, "target", job, "count", (gint64) count, NULL);
}

static void
tessera_counter_token_class_init (TesseraCounterTokenClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  TesseraTrackedDynamicResourceClass *tracked = TESSERA_TRACKED_DYNAMIC_RESOURCE_CLASS (klass);

  object_class->get_property = get_property;
  object_class->set_property = set_property;
  TESSERA_DYNAMIC_RESOURCE_CLASS (klass)->create_dependency = create_dependency;
  tracked->reset_state = reset_state;
  tracked->account_lock_file = account_lock_file;
  tracked->unaccount_lock_file = unaccount_lock_file;
  tracked->is_available = is_available;
  tracked->get_lock_file_information = get_lock_file_information;
  tracked->get_wait_information = get_lock_file_information;
  tracked->handle_information_change = handle_information_change;
  tracked->initialize_informations = initialize_informations;
  tracked->get_usage = get_usage;
  tracked->lock_file_type = TESSERA_TYPE_TOKEN_LOCK_FILE;

  /* The number of tokens; written to informations.json only when the
   * folder has none (-1 writes nothing). Reads give the current total. */
  props[PROP_TOTAL] = g_param_spec_int64 ("total", NULL, NULL, -1, G_MAXINT32, -1,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* Tokens held, as last seen. */
  props[PROP_USED] = g_param_spec_int64 ("used", NULL, NULL, 0, G_MAXINT64, 0,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_counter_token_class_finalize (TesseraCounterTokenClass *klass)
{
}

static void
tessera_counter_token_init (TesseraCounterToken *self)
{
  self->initial_total = -1;
}

void
_tessera_counter_token_register (GTypeModule *module)
{
  tessera_counter_token_register_type (module);
}
