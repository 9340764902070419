/* tessera-resource-informations.c: informations.json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-folder-io-private.h"
#include "tessera-host-lease-private.h"
#include "tessera-json-private.h"
#include "tessera-private.h"
#include "tessera-resource-informations-private.h"

struct _TesseraResourceInformations
{
  TesseraLockFolder *folder;
  gboolean known;
  gint64 mtime_ns;
  ino_t ino;
  goffset size;
  gint64 seen_mono;           /* our monotonic time when we first read that mtime */
  gboolean clean;             /* a read happened after that mtime's clock tick was over */
  JsonNode *node;             /* what was last read, NULL when it was broken */
  gint64 protocol;            /* the protocol it asks for, 0 when it names none */
  gint64 required;            /* what our writes mark */
  double configured_lease;    /* our configuration's host lease, 0: none */
  double recorded_lease;      /* what the file last read records, 0: none */
  double told_lease;          /* the recorded lease last said to disagree */
};

int
tessera_get_pool_protocol (void)
{
  return TESSERA_POOL_PROTOCOL;
}

/* The host lease @node records: a number within the bounds, else 0. */
static double
host_lease_of (JsonNode *node)
{
  JsonNode *member = JSON_NODE_HOLDS_OBJECT (node)
                     ? json_object_get_member (json_node_get_object (node), TESSERA_POOL_HOST_LEASE_MEMBER) : NULL;
  double lease;

  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      (json_node_get_value_type (member) != G_TYPE_INT64 && json_node_get_value_type (member) != G_TYPE_DOUBLE))
    return 0;
  lease = json_node_get_double (member);
  return lease >= TESSERA_HOST_LEASE_MIN && lease <= TESSERA_HOST_LEASE_MAX ? lease : 0;
}

/* The protocol @node asks for: 0 when it names none (experimaestro's, an
 * older Tessera's), G_MAXINT64 when it names one we cannot read (so a
 * newer writer's shape is refused, never taken for "none"). */
static gint64
protocol_of (JsonNode *node)
{
  JsonNode *member = JSON_NODE_HOLDS_OBJECT (node)
                     ? json_object_get_member (json_node_get_object (node), TESSERA_POOL_PROTOCOL_MEMBER) : NULL;

  if (member == NULL)
    return 0;
  if (JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_INT64)
    return MAX (json_node_get_int (member), 0);
  /* 2.0, as Python's json may write a number. */
  if (JSON_NODE_HOLDS_VALUE (member) && json_node_get_value_type (member) == G_TYPE_DOUBLE &&
      json_node_get_double (member) >= 0 && json_node_get_double (member) < 1e9 &&
      json_node_get_double (member) == (double) (gint64) json_node_get_double (member))
    return (gint64) json_node_get_double (member);
  return G_MAXINT64;
}

TesseraResourceInformations *
_tessera_resource_informations_new (TesseraLockFolder *folder)
{
  TesseraResourceInformations *info = g_new0 (TesseraResourceInformations, 1);

  info->folder = folder;
  info->required = TESSERA_POOL_PROTOCOL_PLAIN;
  return info;
}

void
_tessera_resource_informations_free (TesseraResourceInformations *info)
{
  if (info == NULL)
    return;
  g_clear_pointer (&info->node, json_node_unref);
  g_free (info);
}

/* The parsed file (@st, when given, gets what was read), or NULL with
 * TESSERA_ERROR_INVALID_INFORMATION. */
static JsonNode *
read_file (TesseraResourceInformations  *info,
           struct stat                  *st,
           GError                      **error)
{
  g_autofree char *data = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local = NULL;
  gsize length;

  if (!_tessera_lock_folder_read_informations (info->folder, &data, &length, st, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION, "%s", local->message);
      return NULL;
    }
  if (!_tessera_json_load (parser, data, length, &local))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                   _("%s is not valid JSON: %s"), _tessera_lock_folder_get_informations_path (info->folder),
                   local->message);
      return NULL;
    }
  if (json_parser_get_root (parser) == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                   _("%s is empty"), _tessera_lock_folder_get_informations_path (info->folder));
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

JsonNode *
_tessera_resource_informations_read (TesseraResourceInformations *info,
                                     GError                      **error)
{
  return read_file (info, NULL, error);
}

gboolean
_tessera_resource_informations_check (TesseraResourceInformations *info,
                                      TesseraPoolStore            *store,
                                      gboolean                     report_missing)
{
  const char *resource_name = store->name;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  gint64 now_mono = g_get_monotonic_time ();
  gboolean was_known = info->known;
  struct stat st;

  if (!_tessera_lock_folder_stat_informations (info->folder, &st))
    {
      if (!report_missing)
        return FALSE;
      if (info->known)
        g_warning (_("%s disappeared; keeping the last capacity of %s"),
                   _tessera_lock_folder_get_informations_path (info->folder), resource_name);
      info->known = FALSE;
      return FALSE;
    }
  if (info->known && st.st_ino == info->ino &&
      _tessera_stat_mtime_ns (&st) == info->mtime_ns && st.st_size == info->size)
    {
      /* A peer writing in place (Python's json.dump) in the clock tick we
       * last read it leaves all three as they were: read it again until a
       * read happened after that tick. */
      if (info->clean)
        return FALSE;
      info->clean = now_mono - info->seen_mono >= _tessera_lock_folder_mtime_tick_us (info->mtime_ns);
      node = read_file (info, &st, &error);
      if ((node == NULL && info->node == NULL) ||
          (node != NULL && info->node != NULL && json_node_equal (node, info->node)))
        return FALSE;
    }
  else
    {
      info->seen_mono = now_mono;
      info->clean = FALSE;
      node = read_file (info, &st, &error);
    }

  /* Remember what we looked at, good or bad, so a broken file is reported
   * once per change rather than on every acquire. */
  info->known = TRUE;
  info->ino = st.st_ino;
  info->mtime_ns = _tessera_stat_mtime_ns (&st);
  info->size = st.st_size;
  g_clear_pointer (&info->node, json_node_unref);
  info->protocol = 0;
  /* A broken file keeps the last lease, as it keeps the last capacity. */
  if (node != NULL)
    info->recorded_lease = host_lease_of (node);
  if (node == NULL)
    {
      g_warning (_("Keeping the last capacity of %s: %s"), resource_name, error->message);
      return FALSE;
    }
  info->node = json_node_copy (node);
  info->protocol = protocol_of (node);
  if (info->protocol > TESSERA_POOL_PROTOCOL)
    {
      /* Opening the pool fails with the reason; one in use says it once. */
      if (was_known)
        g_warning (_("Keeping the last capacity of %s: %s asks for a newer Tessera protocol"),
                   resource_name, _tessera_lock_folder_get_informations_path (info->folder));
      return FALSE;
    }
  if (!store->owner_class->handle_information_change (store->owner, node, &error))
    {
      g_warning (_("Keeping the last capacity of %s: %s: %s"), resource_name,
                 _tessera_lock_folder_get_informations_path (info->folder), error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
_tessera_resource_informations_usable (TesseraResourceInformations  *info,
                                       GError                      **error)
{
  if (info->node == NULL || info->protocol <= TESSERA_POOL_PROTOCOL)
    return TRUE;
  if (info->protocol == G_MAXINT64)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNSUPPORTED_PROTOCOL,
                 _("%s names a Tessera protocol this Tessera (protocol %d) cannot read: use a newer Tessera"),
                 _tessera_lock_folder_get_informations_path (info->folder), TESSERA_POOL_PROTOCOL);
  else
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_UNSUPPORTED_PROTOCOL,
                 _("%s asks for Tessera protocol %lld or later and this Tessera has protocol %d: use a newer Tessera"),
                 _tessera_lock_folder_get_informations_path (info->folder), (long long) info->protocol,
                 TESSERA_POOL_PROTOCOL);
  return FALSE;
}

gboolean
_tessera_resource_informations_write (TesseraResourceInformations  *info,
                                      JsonNode                     *informations,
                                      GError                      **error)
{
  g_autofree char *text = NULL;

  /* Whoever writes the file says which rules its holders follow; a pool
   * already marked for a newer protocol keeps that mark. */
  if (JSON_NODE_HOLDS_OBJECT (informations) && protocol_of (informations) < info->required)
    json_object_set_int_member (json_node_get_object (informations), TESSERA_POOL_PROTOCOL_MEMBER,
                                info->required);
  /* The first to make or mark a lease pool records its lease; a recorded
   * one stays. */
  if (JSON_NODE_HOLDS_OBJECT (informations) && info->configured_lease > 0 && host_lease_of (informations) <= 0)
    {
      JsonObject *object = json_node_get_object (informations);

      if (info->configured_lease == (double) (gint64) info->configured_lease)
        json_object_set_int_member (object, TESSERA_POOL_HOST_LEASE_MEMBER, (gint64) info->configured_lease);
      else
        json_object_set_double_member (object, TESSERA_POOL_HOST_LEASE_MEMBER, info->configured_lease);
    }
  text = json_to_string (informations, FALSE);

  return _tessera_lock_folder_write_informations (info->folder, text, error);
}

void
_tessera_resource_informations_forget (TesseraResourceInformations *info)
{
  info->known = FALSE;
}

void
_tessera_resource_informations_set_required (TesseraResourceInformations *info,
                                             gint64                       protocol)
{
  info->required = protocol;
}

gboolean
_tessera_resource_informations_require (TesseraResourceInformations  *info,
                                        GError                      **error)
{
  g_autoptr(JsonNode) marked = NULL;

  /* A plain pool is used as it is (experimaestro's stays unmarked until
   * Tessera writes it); unknown, broken, or marked already: nothing to do
   * (a newer mark is refused elsewhere). */
  if (info->required <= TESSERA_POOL_PROTOCOL_PLAIN || info->node == NULL || !JSON_NODE_HOLDS_OBJECT (info->node) ||
      (info->protocol >= info->required && (info->configured_lease <= 0 || info->recorded_lease > 0)))
    return TRUE;
  marked = json_node_copy (info->node);
  if (!_tessera_resource_informations_write (info, marked, error))
    return FALSE;
  _tessera_resource_informations_forget (info);
  return TRUE;
}

void
_tessera_resource_informations_set_host_lease (TesseraResourceInformations *info,
                                               double                       configured)
{
  info->configured_lease = configured;
}

double
_tessera_resource_informations_get_host_lease (TesseraResourceInformations *info,
                                               const char                  *resource_name)
{
  if (info->recorded_lease > 0 && info->recorded_lease != info->configured_lease &&
      info->recorded_lease != info->told_lease)
    {
      if (info->configured_lease > 0)
        g_warning (_("%s: its pool records a host lease of %g s (%s), this configuration says %g s: "
                     "using the pool's"), resource_name, info->recorded_lease,
                   _tessera_lock_folder_get_informations_path (info->folder), info->configured_lease);
      else
        g_warning (_("%s: its pool records a host lease of %g s (%s), which this configuration lacks: "
                     "renewing this host's heartbeat as the pool asks"), resource_name, info->recorded_lease,
                   _tessera_lock_folder_get_informations_path (info->folder));
      info->told_lease = info->recorded_lease;
    }
  return info->recorded_lease;
}
