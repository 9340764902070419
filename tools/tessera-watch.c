/* tessera-watch.c: `tessera watch`: status, again at each change.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <stdio.h>
#include <unistd.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-describe.h"
#include "tessera-options.h"

typedef struct
{
  TesseraDynamicResource *resource;
  GAsyncQueue *changes;
} WatchThread;

static gpointer
watch_thread (gpointer data)
{
  WatchThread *w = data;

  for (;;)
    {
      guint64 generation = tessera_dynamic_resource_get_generation (w->resource);
      if (tessera_dynamic_resource_wait (w->resource, generation, -1, NULL, NULL))
        g_async_queue_push (w->changes, w->resource);
    }
  return NULL;
}

int
cmd_watch (int argc, char **argv)
{
  gboolean as_json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &as_json,
      N_("Print one line of JSON per change: status --json's, with its time"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…]"), _("Show the resources, again after every change, until interrupted."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(GAsyncQueue) changes = g_async_queue_new ();
  g_autoptr(GHashTable) unreadable = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GString *shown = NULL;
  gboolean on_terminal = isatty (1);
  int status = 0;

  if (!parse (context, &argc, &argv, &status) || (config = load_config (&status)) == NULL ||
      (names = selected_names (config, argc, argv, &status)) == NULL)
    return status;
  tessera_config_set_read_only (config, TRUE);   /* watch only looks, as status */
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      char *why = NULL;
      TesseraTrackedDynamicResource *resource = open_resource_why (config, name, TRUE, &status, &why);
      WatchThread *w;

      /* As status: one resource that cannot be read hides no other. */
      if (resource == NULL)
        {
          g_hash_table_insert (unreadable, g_strdup (name), why);
          continue;
        }
      w = g_new0 (WatchThread, 1);
      w->resource = TESSERA_DYNAMIC_RESOURCE (resource);
      w->changes = changes;
      g_thread_unref (g_thread_new ("tessera-watch", watch_thread, w));
    }
  if (g_hash_table_size (unreadable) == names->len)
    return status;
  for (;;)
    {
      g_autoptr(GString) view = g_string_new (NULL);
      g_autoptr(JsonBuilder) builder = json_builder_new ();

      json_builder_begin_array (builder);
      for (guint i = 0; i < names->len; i++)
        {
          const char *name = g_ptr_array_index (names, i);
          const char *why = g_hash_table_lookup (unreadable, name);
          g_autoptr(JsonNode) node = NULL;

          node = why != NULL ? describe_unreadable (config, name, why)
                             : describe (config, name, tessera_config_open (config, name, NULL), FALSE, NULL);
          if (as_json)
            json_builder_add_value (builder, g_steal_pointer (&node));
          else
            format_description (node, view);
        }
      json_builder_end_array (builder);
      if (as_json)
        {
          /* The resources' array, compared without the time. */
          g_autoptr(JsonNode) resources = json_builder_get_root (builder);
          g_autofree char *text = json_to_string (resources, FALSE);

          g_string_append (view, text);
        }
      /* Redrawn when it changed only: polls and wake-ups that find nothing
       * new leave the screen as it is. */
      if (shown == NULL || !g_str_equal (shown->str, view->str))
        {
          /* UTC, as a holder's "since". */
          g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
          g_autofree char *stamp = g_date_time_format (now, "%Y-%m-%dT%H:%M:%SZ");

          if (as_json)
            /* One document per line (JSON Lines): status --json's, and
             * when it was seen. */
            g_print ("{\"time\":\"%s\",\"resources\":%s}\n", stamp, view->str);
          else
            {
              if (on_terminal)
                g_print ("\033[H\033[2J");   /* one stable screen, as watch(1) */
              g_print ("— %s —\n%s", stamp, view->str);
            }
          fflush (stdout);
          if (shown != NULL)
            g_string_free (shown, TRUE);
          shown = g_steal_pointer (&view);
        }
      /* Wake on a change; also every few seconds, for holders' liveness. */
      g_async_queue_timeout_pop (changes, 5 * G_USEC_PER_SEC);
      g_usleep (50 * 1000);   /* let a burst of changes settle */
      while (g_async_queue_try_pop (changes) != NULL)
        ;
    }
  return 0;
}
