/* tessera-set.c: `tessera set`: a resource's settings, changed while
 * it is held.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-options.h"
#include "tessera-output.h"

static JsonNode *
parse_value (const char *text)
{
  JsonNode *node = tessera_json_parse (text, -1, NULL);

  /* A bare word is a string, as a shell user means it. */
  if (node == NULL)
    {
      node = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (node, text);
    }
  return node;
}

/* @text, a value of the type's setting @pspec as the configuration file
 * gives it (a GPU pool's "0;1:16384"), in informations.json's form: the
 * member of that name in what the type writes for a new pool set up with
 * it, read by the type's own rules. %NULL with @error when the type
 * refuses it; %NULL alone when the type writes the setting as it is (a
 * total): then it is read as JSON. */
static JsonNode *
setting_as_informations (TesseraTrackedDynamicResource *resource, GParamSpec *pspec, const char *text,
                         GError **error)
{
  TesseraTrackedDynamicResourceClass *klass = TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (resource);
  g_autoptr(TesseraTrackedDynamicResource) setup = NULL;
  g_autoptr(JsonNode) informations = NULL;
  GValue value = G_VALUE_INIT;
  JsonNode *member;

  if (G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_STRING || klass->initialize_informations == NULL)
    return NULL;
  if (!tessera_settings_value_from_string (pspec, text, &value, error))
    return NULL;
  /* Never opened: only its settings are looked at. */
  setup = TESSERA_TRACKED_DYNAMIC_RESOURCE (g_object_new_with_properties (G_OBJECT_TYPE (resource), 1,
                                                                          &pspec->name, &value));
  g_value_unset (&value);
  if (klass->check_settings != NULL && !klass->check_settings (setup, error))
    return NULL;
  informations = klass->initialize_informations (setup);
  if (informations == NULL || !JSON_NODE_HOLDS_OBJECT (informations))
    return NULL;
  member = json_object_get_member (json_node_get_object (informations), pspec->name);
  if (member == NULL || !(JSON_NODE_HOLDS_ARRAY (member) || JSON_NODE_HOLDS_OBJECT (member)))
    return NULL;
  return json_node_copy (member);
}

/* What `tessera set` may change: the members informations.json has, and
 * the settings the type itself declares (a counter token's total, a GPU
 * pool's devices) — not those of the base classes (folder, min-age…). */
static GPtrArray *
run_time_settings (TesseraTrackedDynamicResource *resource, JsonNode *informations)
{
  GPtrArray *settings = g_ptr_array_new_with_free_func (g_free);
  GObjectClass *klass = G_OBJECT_GET_CLASS (resource);
  g_autofree GParamSpec **pspecs = NULL;
  guint n_pspecs;

  if (informations != NULL && JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_autoptr(GList) members = json_object_get_members (json_node_get_object (informations));
      for (GList *l = members; l != NULL; l = l->next)
        if (!g_str_equal (l->data, "tessera_protocol"))   /* the pool's, not a setting */
          g_ptr_array_add (settings, g_strdup (l->data));
    }
  pspecs = g_object_class_list_properties (klass, &n_pspecs);
  for (guint i = 0; i < n_pspecs; i++)
    if (tessera_config_is_type_setting (pspecs[i]) &&
        !g_ptr_array_find_with_equal_func (settings, pspecs[i]->name, g_str_equal, NULL))
      g_ptr_array_add (settings, g_strdup (pspecs[i]->name));
  return settings;
}


int
cmd_set (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (_("NAME KEY=VALUE…"),
                 _("Change a resource's run-time information (informations.json), e.g. “tessera set cpu total=16”. "
                   "Waiting processes see it at once."), NULL);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(JsonNode) informations = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autofree char *folder = NULL;
  TesseraTrackedDynamicResource *resource;
  JsonObject *object;
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  if (argc < 3)
    return fail (EXIT_USAGE, _("usage: tessera set NAME KEY=VALUE…"));
  if ((config = load_config (&status)) == NULL ||
      (resource = open_resource_full (config, argv[1], FALSE, &status)) == NULL)
    return status;
  folder = tessera_config_dup_pool_folder (config, argv[1]);
  if (!may_administer (config, folder))
    return fail (EXIT_NOPERM, _("%s: only root or the owner of %s may change its settings"), argv[1],
                 pool_owned_by (folder));

  informations = tessera_tracked_dynamic_resource_read_informations (resource, NULL);
  if (informations == NULL || !JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_clear_pointer (&informations, json_node_unref);
      informations = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (informations, json_object_new ());
    }
  object = json_node_get_object (informations);
  settings = run_time_settings (resource, informations);
  for (int i = 2; i < argc; i++)
    {
      g_auto(GStrv) kv = g_strsplit (argv[i], "=", 2);
      GParamSpec *pspec;
      JsonNode *node;

      if (kv[0] == NULL || kv[1] == NULL || *kv[0] == '\0')
        return fail (EXIT_USAGE, _("“%s” is not KEY=VALUE"), argv[i]);
      if (settings->len == 0)
        return fail (EXIT_USAGE, _("%s (%s) has no run-time settings"), argv[1],
                     tessera_config_get_type_name (config, argv[1]));
      if (!g_ptr_array_find_with_equal_func (settings, kv[0], g_str_equal, NULL))
        {
          g_autofree char *known = NULL;

          g_ptr_array_add (settings, NULL);
          known = g_strjoinv (", ", (char **) settings->pdata);
          return fail (EXIT_USAGE, _("%s has no setting “%s” (it has: %s)"), argv[1], kv[0], known);
        }
      node = parse_value (kv[1]);
      /* A setting also in the configuration file's syntax (devices=0;1). */
      pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (resource), kv[0]);
      if (pspec != NULL && tessera_config_is_type_setting (pspec) && !JSON_NODE_HOLDS_ARRAY (node) &&
          !JSON_NODE_HOLDS_OBJECT (node))
        {
          JsonNode *configured = setting_as_informations (resource, pspec, kv[1], &error);

          if (error != NULL)
            {
              json_node_unref (node);
              return fail (EXIT_USAGE, _("%s: %s (informations.json is unchanged)"), argv[1], error->message);
            }
          if (configured != NULL)
            {
              json_node_unref (node);
              node = configured;
            }
        }
      json_object_set_member (object, kv[0], node);
    }
  /* Never write what the pool could not be read with afterwards. */
  if (!tessera_config_check_informations_content (resource, informations, &error))
    return fail (EXIT_USAGE, _("%s: %s (informations.json is unchanged)"), argv[1], error->message);
  if (!tessera_tracked_dynamic_resource_write_informations (resource, informations, &error))
    return fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION) ? EXIT_USAGE
                 : oserr_or (error, EXIT_IOERR),
                 "%s", error->message);
  text = json_to_string (informations, FALSE);
  {
    g_autofree char *changed = g_strjoinv (" ", argv + 2);

    tessera_tracked_dynamic_resource_audit (resource, "set", NULL, changed);
  }
  g_print ("%s: %s\n", argv[1], text);
  return 0;
}
