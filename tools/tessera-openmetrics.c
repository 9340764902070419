/* tessera-openmetrics.c: `tessera status --format=openmetrics`: the
 * resources' numbers for Prometheus (node_exporter's textfile collector
 * reads the file a timer writes).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "tessera-config.h"

#include "tessera-describe.h"
#include "tessera-openmetrics.h"

/* A label value in OpenMetrics: a backslash, a double quote and a line
 * feed are escaped (names come from folders a co-user may write, already
 * made valid UTF-8 by the description). */
static void
append_label_value (GString *out, const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    {
      if (*p == '\\')
        g_string_append (out, "\\\\");
      else if (*p == '"')
        g_string_append (out, "\\\"");
      else if (*p == '\n')
        g_string_append (out, "\\n");
      else
        g_string_append_c (out, *p);
    }
}

/* A holder's or waiter's user as a label: its name, else its uid, else
 * "unknown" (a seed-era holder records none). */
static char *
user_label (JsonObject *who)
{
  const char *user = json_object_get_string_member_with_default (who, "user", NULL);
  JsonNode *uid = json_object_get_member (who, "uid");

  if (user != NULL)
    return g_strdup (user);
  if (uid != NULL && JSON_NODE_HOLDS_VALUE (uid))
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (uid));
  return g_strdup ("unknown");
}

/* Adds each member of @array of @object to @sums (user → total), by its
 * "amount", leaving out those whose "state" is @left_out (NULL: none): a
 * dead holder's share is reclaimable, no one's; a waiter that asks for
 * more than there is in all is never served, and the resource's waiting
 * units leave it out. */
static void
sum_per_user (JsonObject *object, const char *array, const char *left_out, GHashTable *sums)
{
  JsonArray *members = json_object_get_array_member (object, array);

  for (guint i = 0; members != NULL && i < json_array_get_length (members); i++)
    {
      JsonObject *who = json_array_get_object_element (members, i);
      char *user;
      gint64 *sum;

      if (left_out != NULL &&
          g_strcmp0 (json_object_get_string_member_with_default (who, "state", NULL), left_out) == 0)
        continue;
      user = user_label (who);
      sum = g_hash_table_lookup (sums, user);
      if (sum == NULL)
        {
          sum = g_new0 (gint64, 1);
          g_hash_table_insert (sums, user, sum);
        }
      else
        g_free (user);
      *sum = add_units (*sum, MAX (json_object_get_int_member_with_default (who, "amount", 0), 0));
    }
}

/* A resource's number @member, -1 when unknown (it cannot be read); for
 * "waiters", how many there are. */
static gint64
resource_number (JsonObject *object, const char *member)
{
  if (json_object_has_member (object, "error") && json_object_get_int_member_with_default (object, "capacity", -1) < 0)
    return -1;
  if (g_str_equal (member, "waiters"))
    return json_array_get_length (json_object_get_array_member (object, "waiters"));
  return json_object_get_int_member_with_default (object, member, -1);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* One metric family: its # TYPE and # HELP lines, then one sample per
 * resource (@member of each description; resources whose number is not
 * known, as one that cannot be read, have none) or, with @per_user, one
 * per resource and user (@member: the array summed, but for its members
 * in state @left_out). The help texts are part of the format, as the
 * names: not translated. */
static void
append_family (GString *out, GPtrArray *descriptions, const char *metric, const char *help, const char *member,
               gboolean per_user, const char *left_out)
{
  g_string_append_printf (out, "# TYPE %s gauge\n# HELP %s %s\n", metric, metric, help);
  for (guint i = 0; i < descriptions->len; i++)
    {
      JsonObject *object = json_node_get_object (g_ptr_array_index (descriptions, i));
      const char *name = json_object_get_string_member (object, "name");
      g_autoptr(GHashTable) sums = NULL;
      g_autofree gpointer *users = NULL;
      guint n_users;

      if (!per_user)
        {
          gint64 value = resource_number (object, member);

          if (value < 0)
            continue;
          g_string_append_printf (out, "%s{resource=\"", metric);
          append_label_value (out, name);
          g_string_append_printf (out, "\"} %" G_GINT64_FORMAT "\n", value);
          continue;
        }
      sums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      sum_per_user (object, member, left_out, sums);
      users = g_hash_table_get_keys_as_array (sums, &n_users);
      qsort (users, n_users, sizeof (gpointer), compare_strings);
      for (guint u = 0; u < n_users; u++)
        {
          g_string_append_printf (out, "%s{resource=\"", metric);
          append_label_value (out, name);
          g_string_append (out, "\",user=\"");
          append_label_value (out, users[u]);
          g_string_append_printf (out, "\"} %" G_GINT64_FORMAT "\n",
                                  *(gint64 *) g_hash_table_lookup (sums, users[u]));
        }
    }
}

/* The OpenMetrics text of @descriptions (status --json's objects), with
 * its final `# EOF`. */
void
format_openmetrics (GPtrArray *descriptions, GString *out)
{
  append_family (out, descriptions, "tessera_capacity", "Units the resource has.", "capacity", FALSE, NULL);
  append_family (out, descriptions, "tessera_free", "Units free now: neither held nor left by a dead holder.",
                 "free", FALSE, NULL);
  append_family (out, descriptions, "tessera_held", "Units held by live or unjudged holders.", "held", FALSE, NULL);
  append_family (out, descriptions, "tessera_reclaimable",
                 "Units left by dead holders whose lock file stays; the next run takes them back.",
                 "reclaimable", FALSE, NULL);
  append_family (out, descriptions, "tessera_waiting", "Units asked for by the requests in the queue.", "waiting",
                 FALSE, NULL);
  append_family (out, descriptions, "tessera_waiters", "Requests in the queue (waiting, reserving past their patience or not yet).",
                 "waiters", FALSE, NULL);
  append_family (out, descriptions, "tessera_user_held", "Units held by the live holders of a user.", "holders",
                 TRUE, "dead");
  append_family (out, descriptions, "tessera_user_waiting", "Units asked for by a user's requests in the queue.",
                 "waiters", TRUE, "never-served");
  g_string_append (out, "# EOF\n");
}
