/* tessera-hosts.c: `tessera hosts`: the hosts of each pool, as sinfo
 * lists a cluster's nodes; and the hosts a mistyped `clean --host` may
 * have meant.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <stdlib.h>
#include <string.h>

#include "tessera-commands.h"
#include "tessera-describe.h"
#include "tessera-hosts.h"
#include "tessera-options.h"
#include "tessera-output.h"

/* "alice, bob" for @uids (a JSON array of integers). */
static char *
join_users (JsonArray *uids, GHashTable *users)
{
  g_autoptr(GString) text = g_string_new (NULL);

  for (guint i = 0; uids != NULL && i < json_array_get_length (uids); i++)
    {
      gint64 uid = json_array_get_int_element (uids, i);
      const char *user = user_name (users, (uid_t) uid);

      if (text->len > 0)
        g_string_append (text, ", ");
      if (user != NULL)
        g_string_append (text, user);
      else
        g_string_append_printf (text, "%" G_GINT64_FORMAT, uid);
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
print_hosts (const char *name, const char *location, JsonArray *hosts, GHashTable *users)
{
  g_print ("%s (%s):\n", name, location);
  if (json_array_get_length (hosts) == 0)
    {
      g_print ("  %s\n", _("no host has marked it yet"));
      return;
    }
  for (guint i = 0; i < json_array_get_length (hosts); i++)
    {
      JsonObject *h = json_array_get_object_element (hosts, i);
      const char *host = json_object_get_string_member_with_default (h, "host", NULL);
      g_autofree char *shown = escape_name (host != NULL ? host : "?", TRUE);
      g_autofree char *who = join_users (json_object_get_array_member (h, "uids"), users);
      const char *version = json_object_get_string_member_with_default (h, "version", NULL);
      g_autofree char *shown_version = escape_name (version != NULL ? version : "?", TRUE);
      const char *build = json_object_get_string_member_with_default (h, "build", NULL);
      g_autofree char *shown_build = escape_name (build != NULL ? build : "?", TRUE);
      JsonNode *age = json_object_get_member (h, "heartbeat_age");
      JsonNode *protocol = json_object_get_member (h, "protocol");
      const char *distrust = json_object_get_string_member_with_default (h, "distrust", NULL);
      g_autofree char *seen = age != NULL && !JSON_NODE_HOLDS_NULL (age)
                              /* Translators: how long ago a host's last heartbeat was written */
                              ? g_strdup_printf (_("%.0f s ago"), json_node_get_double (age)) : g_strdup ("?");
      g_autofree char *proto = protocol != NULL && !JSON_NODE_HOLDS_NULL (protocol)
                               ? g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (protocol)) : g_strdup ("?");

      /* Translators: a host of a pool: name, id, users, whether locks
       * cross, last heartbeat, Tessera version, its build, pool protocol */
      g_print (_("  %s%s  %s  users %s  locks %s  seen %s  tessera %s (build %s, protocol %s)\n"), shown,
               json_object_get_boolean_member_with_default (h, "this_host", FALSE) ? _(" (this host)") : "",
               json_object_get_string_member (h, "host_id"), who,
               json_object_get_boolean_member_with_default (h, "locks_cross", FALSE) ? _("cross hosts")
                                                                                      : _("stay on the host"),
               seen, shown_version, shown_build, proto);
      if (distrust != NULL)
        /* Translators: why a file of a host in hosts/ cannot be trusted */
        g_print (_("    a file of it cannot be trusted: %s\n"), distrust);
    }
}

int
cmd_hosts (int argc, char **argv)
{
  gboolean as_json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &as_json, N_("Print JSON (see the man page for its fields)"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…]"), _("Show the hosts that use each pool: their name and id, the users holding there, "
                                 "whether their locks cross hosts, their last heartbeat and their Tessera."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  /* Only looks, as status does. */
  if ((config = load_config_to_look (argc, argv, &names, &status)) == NULL)
    return status;
  begin_resources_json (builder);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      int one_status = 0;
      TesseraTrackedDynamicResource *resource = open_resource_full (config, name, FALSE, &one_status);
      g_autoptr(JsonNode) hosts = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *location = NULL;

      if (resource == NULL)
        {
          status = status != 0 ? status : one_status;
          continue;
        }
      hosts = tessera_tracked_dynamic_resource_dup_hosts (resource, &error);
      if (hosts == NULL)
        {
          int failed = fail (oserr_or (error, EXIT_IOERR), "%s: %s", name, error->message);

          status = status != 0 ? status : failed;
          continue;
        }
      location = tessera_tracked_dynamic_resource_dup_location (resource);
      if (location == NULL)
        location = g_strdup (tessera_tracked_dynamic_resource_get_lock_folder (resource));
      if (as_json)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "name");
          json_builder_add_string_value (builder, name);
          json_builder_set_member_name (builder, "path");
          if (location != NULL)
            json_builder_add_string_value (builder, location);
          else
            json_builder_add_null_value (builder);
          json_builder_set_member_name (builder, "hosts");
          json_builder_add_value (builder, g_steal_pointer (&hosts));
          json_builder_end_object (builder);
        }
      else
        print_hosts (name, location != NULL ? location : "?", json_node_get_array (hosts), users);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  if (as_json)
    print_json (builder);
  return status;
}

/* The names of the hosts the pools @names know (other than this one),
 * as shown (escaped): a set, looked up whole (a name may hold ", "). */
GHashTable *
dup_known_hosts (TesseraConfig *config, GPtrArray *names)
{
  GHashTable *known = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; i < names->len; i++)
    {
      int status = 0;
      TesseraTrackedDynamicResource *resource = open_resource_full (config, g_ptr_array_index (names, i), FALSE,
                                                                    &status);
      g_autoptr(JsonNode) hosts = resource != NULL ? tessera_tracked_dynamic_resource_dup_hosts (resource, NULL)
                                                   : NULL;
      JsonArray *list = hosts != NULL ? json_node_get_array (hosts) : NULL;

      for (guint j = 0; list != NULL && j < json_array_get_length (list); j++)
        {
          JsonObject *h = json_array_get_object_element (list, j);
          const char *host = json_object_get_string_member_with_default (h, "host", NULL);
          char *shown = escape_name (host != NULL ? host : json_object_get_string_member (h, "host_id"), TRUE);

          if (json_object_get_boolean_member_with_default (h, "this_host", FALSE))
            g_free (shown);
          else
            g_hash_table_add (known, shown);
        }
    }
  return known;
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* "a, b": the names of @hosts, in order. */
char *
join_host_names (GHashTable *hosts)
{
  g_autofree gpointer *names = NULL;
  guint n = 0;

  names = g_hash_table_get_keys_as_array (hosts, &n);
  qsort (names, n, sizeof (gpointer), compare_names);
  return g_strjoinv (", ", (char **) names);
}
