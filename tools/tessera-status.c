/* tessera-status.c: `tessera status`: what each resource holds, who
 * holds it, and why.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-describe.h"
#include "tessera-openmetrics.h"
#include "tessera-options.h"
#include "tessera-output.h"

int
cmd_status (int argc, char **argv)
{
  gboolean as_json = FALSE;
  g_autofree char *format = NULL;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &as_json, N_("Print JSON (see the man page for its fields): --format=json"), NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format,
      N_("Print FORMAT: text (the default), json or openmetrics (for Prometheus)"), N_("FORMAT") },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…]"), _("Show each resource's capacity, what is free, and its holders."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  /* Each resource's description, for the OpenMetrics text. */
  g_autoptr(GPtrArray) descriptions = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  gboolean as_metrics = FALSE;
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  if (format != NULL && !g_str_equal (format, "text") && !g_str_equal (format, "json") &&
      !g_str_equal (format, "openmetrics"))
    /* Translators: %s is what --format was given */
    return fail (EXIT_USAGE, _("Unknown format “%s”: text, json or openmetrics"), format);
  if (as_json && format != NULL && !g_str_equal (format, "json"))
    /* Translators: %s is what --format was given */
    return fail (EXIT_USAGE, _("--json and --format=%s ask for two formats: give one"), format);
  as_json = as_json || g_strcmp0 (format, "json") == 0;
  as_metrics = g_strcmp0 (format, "openmetrics") == 0;
  /* status only looks: it works on a read-only mount and on a pool it may
   * not change, and a resource it cannot read hides none of the others. */
  if ((config = load_config_to_look (argc, argv, &names, &status)) == NULL)
    return status;
  begin_resources_json (builder);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      int one_status = 0;
      g_autofree char *why = NULL;
      TesseraTrackedDynamicResource *resource = open_resource_why (config, name, TRUE, &one_status, &why);
      g_autoptr(JsonNode) node = NULL;
      g_autoptr(GError) unusable = NULL;

      if (resource == NULL)
        {
          if (status == 0)
            status = one_status;
          /* Listed all the same: a resource is never silently missing. */
          if (as_json)
            json_builder_add_value (builder, describe_unreadable (config, name, why));
          else if (as_metrics)
            g_ptr_array_add (descriptions, describe_unreadable (config, name, why));
          continue;
        }
      if (!as_json && !as_metrics)
        {
          g_autoptr(GString) text = g_string_new (NULL);

          describe_text (config, name, resource, TRUE, text, &unusable);
          g_print ("%s", text->str);
        }
      else
        node = describe (config, name, resource, TRUE, &unusable);
      /* Said in the view (cannot be read: …), and in the exit status. */
      if (unusable != NULL && status == 0)
        status = oserr_or (unusable, is_io_error (unusable) ? EXIT_IOERR : 1);
      if (as_json)
        json_builder_add_value (builder, g_steal_pointer (&node));
      else if (as_metrics)
        g_ptr_array_add (descriptions, g_steal_pointer (&node));
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  if (as_json)
    print_json (builder);
  else if (as_metrics)
    {
      g_autoptr(GString) text = g_string_new (NULL);

      format_openmetrics (descriptions, text);
      g_print ("%s", text->str);
    }
  return status;
}
