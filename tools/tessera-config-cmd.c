/* tessera-config-cmd.c: `tessera config show`, the files the configuration
 * was looked for in and the resources it defines, and `tessera config
 * check FILE`, a file read as a run would read it, before it is deployed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-options.h"
#include "tessera-output.h"

static void
show_resource (TesseraConfig *config, const char *name)
{
  const char *source = tessera_config_get_source (config);
  const char * const *keys = NULL;
  const char * const *values = NULL;
  const char *store = "folder";
  g_autofree char *path = tessera_config_dup_path (config, name);

  if (!tessera_config_get_settings (config, name, &keys, &values))
    return;
  for (guint i = 0; keys[i] != NULL; i++)
    if (g_str_equal (keys[i], "store"))
      store = values[i];
  g_print ("\n[resource %s]\n", name);
  /* Translators: where a resource is defined: a file, or the built-in configuration */
  g_print (_("# from %s\n"), source != NULL ? source : _("the built-in configuration"));
  g_print ("type=%s\n", tessera_config_get_type_name (config, name));
  g_print ("store=%s\n", store);
  g_print ("path=%s\n", path);
  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autofree char *shown = NULL;

      if (g_str_equal (keys[i], "lock-folder") || g_str_equal (keys[i], "store"))
        continue;
      /* A secret never: a password, nor one in an endpoint's URL. */
      shown = tessera_config_dup_shown_value (keys[i], values[i]);
      g_print ("%s=%s\n", keys[i], shown);
    }
}

static int
config_show (void)
{
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  gboolean read = FALSE;
  int status = 0;

  if ((config = load_config (&status)) == NULL)
    return status;
  g_print ("%s\n", _("Configuration files, in the order they are looked for:"));
  for (guint i = 0; i < tessera_config_get_n_files (config); i++)
    {
      TesseraConfigFileState state;
      const char *file = tessera_config_get_file (config, i, &state);

      switch (state)
        {
        case TESSERA_CONFIG_FILE_READ:
          g_print (_("  %s: read\n"), file);
          read = TRUE;
          break;
        case TESSERA_CONFIG_FILE_NOT_READ:
          g_print (_("  %s: not read (only the first file found is)\n"), file);
          break;
        case TESSERA_CONFIG_FILE_ABSENT:
        default:
          g_print (_("  %s: not there\n"), file);
          break;
        }
    }
  if (!read)
    g_print ("%s\n", _("  none found: the built-in configuration"));
  names = tessera_config_get_names (config);
  for (guint i = 0; i < names->len; i++)
    show_resource (config, g_ptr_array_index (names, i));
  return 0;
}

/* The file read as every command reads it: "ok", or the one line loading
 * it gives (78); what it has for a newer Tessera is said, as every
 * command says it. */
static int
config_check (const char *file)
{
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GError) error = NULL;
  const char * const *warnings;
  guint n;

  config = tessera_config_load (file, &error);
  if (config == NULL)
    return fail (EXIT_CONFIG, "%s", error->message);
  warnings = tessera_config_get_warnings (config, &n);
  for (guint i = 0; i < n; i++)
    g_printerr (_("tessera: %s\n"), warnings[i]);
  g_print ("%s\n", _("ok"));
  return 0;
}

int
cmd_config (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (_("show | check FILE"),
                 _("“show”: the files the configuration is looked for in, the one read, and the resources it "
                   "defines. “check FILE”: read FILE as a command would, and say “ok” or what is wrong (78)."),
                 NULL);
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  if (argc == 2 && g_str_equal (argv[1], "show"))
    return config_show ();
  if (argc == 3 && g_str_equal (argv[1], "check"))
    return config_check (argv[2]);
  return fail (EXIT_USAGE, _("usage: tessera config show | tessera config check FILE"));
}
