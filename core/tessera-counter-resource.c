/* tessera-counter-resource.c: a counting semaphore in a lock folder, the
 * base of the countertoken plugin and of third-party counted types
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-private.h"

#include <tessera/tessera.h>

/**
 * TesseraCounterResource:
 *
 * A counted resource: `informations.json` holds `{"total": N}`, each
 * holder's lock file a [class@Tessera.CounterLockFile] with
 * `{"count": K}`, and a request for K units is granted while the counts
 * held plus K stay within N. This is experimaestro's `CounterToken`
 * format, which the `countertoken` plugin serves.
 *
 * Subclass it for a type that counts with extra rules — a per-user cap, a
 * quota per project: chain up in
 * [vfunc@Tessera.TrackedDynamicResource.is_available],
 * [vfunc@Tessera.TrackedDynamicResource.account_lock_file] and the others,
 * and add members to the lock file's "information" in
 * [vfunc@Tessera.TrackedDynamicResource.get_lock_file_information]; they
 * are kept when the file is rewritten. `docs/writing-a-plugin.md` walks
 * through such a plugin.
 *
 * A request (`--need NAME=REQUEST`) is a count from 1 to 2³¹−1; none
 * means 1. A request larger than the total waits, as experimaestro's
 * does: the total may grow. A lock file that claims more than 2³¹−1 takes
 * everything (no real holder can), so absurd counts never wrap round to
 * a free pool.
 */
typedef struct
{
  gint64 initial_total;   /* written to a new informations.json; -1: none */
  gint64 total;
  gint64 used;            /* sum of the counts no larger than G_MAXINT32 */
  guint huge;             /* lock files claiming more: each takes everything */
} TesseraCounterResourcePrivate;

enum { PROP_0, PROP_TOTAL, PROP_USED, N_PROPS };
static GParamSpec *props[N_PROPS];

G_DEFINE_TYPE_WITH_PRIVATE (TesseraCounterResource, tessera_counter_resource, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE)

#define PRIV(o) ((TesseraCounterResourcePrivate *) tessera_counter_resource_get_instance_private (TESSERA_COUNTER_RESOURCE (o)))

static void
get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_TOTAL: g_value_set_int64 (value, __atomic_load_n (&PRIV (object)->total, __ATOMIC_RELAXED)); break;
    case PROP_USED: g_value_set_int64 (value, PRIV (object)->huge > 0 ? G_MAXINT64 : PRIV (object)->used); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  if (prop_id == PROP_TOTAL)
    PRIV (object)->initial_total = g_value_get_int64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static gint64
count_of (TesseraDynamicLockFile *lock_file)
{
  return tessera_counter_lock_file_get_count (TESSERA_COUNTER_LOCK_FILE (lock_file));
}

static void
reset_state (TesseraTrackedDynamicResource *resource)
{
  PRIV (resource)->used = 0;
  PRIV (resource)->huge = 0;
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
  TesseraCounterResourcePrivate *priv = PRIV (resource);
  gint64 count = count_of (lock_file);

  if (is_huge (count))
    priv->huge++;
  else
    priv->used += count;
}

static void
unaccount_lock_file (TesseraTrackedDynamicResource *resource, TesseraDynamicLockFile *lock_file)
{
  TesseraCounterResourcePrivate *priv = PRIV (resource);
  gint64 count = count_of (lock_file);

  if (is_huge (count))
    priv->huge--;
  else
    priv->used -= count;
}

static gboolean
is_available (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency, GError **error)
{
  TesseraCounterResourcePrivate *priv = PRIV (resource);
  gint64 count = tessera_counter_dependency_get_count (TESSERA_COUNTER_DEPENDENCY (dependency));

  /* More than there is in all waits, as experimaestro's does: the total
   * may grow (tessera set, informations.json); the error says why. */
  if (count > priv->total)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY,
                   _("Token %s has %lld in all, fewer than the %lld asked for"),
                   tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (resource)),
                   (long long) priv->total, (long long) count);
      return FALSE;
    }
  if (priv->huge == 0 && count <= priv->total - priv->used)
    return TRUE;
  g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE, _("Token %s has fewer than %lld free"),
               tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (resource)), (long long) count);
  return FALSE;
}

static JsonNode *
get_lock_file_information (TesseraTrackedDynamicResource *resource, TesseraDynamicDependency *dependency)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (object, "count",
    tessera_counter_dependency_get_count (TESSERA_COUNTER_DEPENDENCY (dependency)));
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
  /* Read without the thread lock by get_total() and the property; told
   * only when it changed (a rewrite with the same total is none). */
  if (__atomic_exchange_n (&PRIV (resource)->total, json_node_get_int (total), __ATOMIC_RELAXED) !=
      json_node_get_int (total))
    g_object_notify_by_pspec (G_OBJECT (resource), props[PROP_TOTAL]);
  return TRUE;
}

static JsonNode *
initialize_informations (TesseraTrackedDynamicResource *resource)
{
  TesseraCounterResourcePrivate *priv = PRIV (resource);
  JsonObject *object;
  JsonNode *node;

  if (priv->initial_total < 0)
    return NULL;
  object = json_object_new ();
  node = json_node_new (JSON_NODE_OBJECT);
  json_object_set_int_member (object, "total", priv->initial_total);
  json_node_take_object (node, object);
  return node;
}

static void
get_usage (TesseraTrackedDynamicResource *resource, gint64 *capacity, gint64 *free_units)
{
  TesseraCounterResourcePrivate *priv = PRIV (resource);

  *capacity = priv->total;
  *free_units = priv->huge > 0 ? 0 : MAX (0, priv->total - priv->used);
}

/* request: a count of units, 1 when absent */
static TesseraDynamicDependency *
create_dependency (TesseraDynamicResource *resource, TesseraJob *job, const char *request, GError **error)
{
  GType dependency_type = TESSERA_COUNTER_RESOURCE_GET_CLASS (resource)->dependency_type;
  guint64 count = 1;

  if (request != NULL &&
      !g_ascii_string_to_unsigned (request, 10, 1, G_MAXINT32, &count, NULL))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("“%s” is not a token count (1 to %d)"), request, G_MAXINT32);
      return NULL;
    }
  if (dependency_type == G_TYPE_INVALID)
    dependency_type = TESSERA_TYPE_COUNTER_DEPENDENCY;
  g_return_val_if_fail (g_type_is_a (dependency_type, TESSERA_TYPE_COUNTER_DEPENDENCY), NULL);
  return g_object_new (dependency_type, "resource", resource, "target", job, "count", (gint64) count, NULL);
}

static void
tessera_counter_resource_class_init (TesseraCounterResourceClass *klass)
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
  tracked->lock_file_type = TESSERA_TYPE_COUNTER_LOCK_FILE;

  /**
   * TesseraCounterResource:total:
   *
   * The number of units. Set at construction (a key file's `total=8`), it
   * is written to informations.json only when the folder has none (-1
   * writes nothing); read, it gives the total in force now, which
   * `tessera set` or a peer may have changed.
   *
   * Its `notify` signal tells of a change of the total in force (not of a
   * rewrite with the same total), on whichever thread noticed it: often
   * Tessera's poller thread, or one inside a Tessera call; never with the
   * resource's own locks held. A handler that updates a user interface
   * passes the news to its main context (g_main_context_invoke()).
   */
  props[PROP_TOTAL] = g_param_spec_int64 ("total", NULL, NULL, -1, G_MAXINT32, -1,
    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * TesseraCounterResource:used:
   *
   * The units held, by every process, as last read from the folder
   * (%G_MAXINT64 while a lock file claims more than any request can).
   */
  props[PROP_USED] = g_param_spec_int64 ("used", NULL, NULL, 0, G_MAXINT64, 0,
    G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
tessera_counter_resource_init (TesseraCounterResource *self)
{
  PRIV (self)->initial_total = -1;
}

/**
 * tessera_counter_resource_new:
 * @name: the resource's name, as in `[resource NAME]`
 * @path: the absolute path of its folder, created if missing (the key
 *   file's `path`)
 * @total: the number of units, written to informations.json when the
 *   folder has none; -1 to write nothing
 * @error: return location for a #GError
 *
 * Opens a counter in the same format as the `countertoken` plugin, with
 * no plugin and no property list to get wrong. Any thread.
 *
 * Returns: (transfer full): the counter, or %NULL with @error set when the
 *   folder cannot be used
 */
TesseraCounterResource *
tessera_counter_resource_new (const char  *name,
                              const char  *path,
                              gint64       total,
                              GError     **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (total >= -1 && total <= G_MAXINT32, NULL);

  return g_initable_new (TESSERA_TYPE_COUNTER_RESOURCE, NULL, error,
                         "name", name, "lock-folder", path, "total", total, NULL);
}

/**
 * tessera_counter_resource_get_total:
 * @self: a counter
 *
 * The total in force, from informations.json as last read. Call it from a
 * virtual function of the counter (the thread lock is then held) or
 * accept a value that may already be stale.
 *
 * Returns: the number of units, or 0 before the folder was read
 */
gint64
tessera_counter_resource_get_total (TesseraCounterResource *self)
{
  g_return_val_if_fail (TESSERA_IS_COUNTER_RESOURCE (self), 0);
  return __atomic_load_n (&PRIV (self)->total, __ATOMIC_RELAXED);
}

/**
 * tessera_counter_resource_get_used:
 * @self: a counter
 *
 * The units held by every process, as last read. Same threading note as
 * [method@Tessera.CounterResource.get_total].
 *
 * Returns: the units held (%G_MAXINT64 while a lock file claims more
 *   than any request can)
 */
gint64
tessera_counter_resource_get_used (TesseraCounterResource *self)
{
  g_return_val_if_fail (TESSERA_IS_COUNTER_RESOURCE (self), 0);
  return PRIV (self)->huge > 0 ? G_MAXINT64 : PRIV (self)->used;
}
