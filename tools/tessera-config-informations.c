/* tessera-config-informations.c: a pool's informations.json checked
 * against the configuration. Once it exists it wins (it is what `tessera
 * set` and experimaestro change): the configuration only sets a new pool
 * up. Each of the type's own settings must be readable from it as the
 * type's (else it is broken, and the message says how to fix it), and a
 * notice says when the two differ. Also what `tessera set` checks before
 * it writes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <glib/gi18n-lib.h>
#include <unistd.h>

#include "tessera-config-entry.h"
#include "tessera-tool.h"

/* A scalar member of informations.json as the configuration writes it. */
static char *
scalar_text (JsonNode *node)
{
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return NULL;
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_INT64: return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
    case G_TYPE_BOOLEAN: return g_strdup (json_node_get_boolean (node) ? "true" : "false");
    case G_TYPE_STRING: return g_strdup (json_node_get_string (node));
    case G_TYPE_DOUBLE:
      {
        char buffer[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup (g_ascii_dtostr (buffer, sizeof buffer, json_node_get_double (node)));
      }
    default: return NULL;
    }
}

/* The first setting of the type's own, for "tessera set NAME KEY=…". */
static const char *
first_own_setting (GObjectClass *klass)
{
  g_autofree GParamSpec **pspecs = NULL;
  guint n;

  pspecs = g_object_class_list_properties (klass, &n);
  for (guint i = 0; i < n; i++)
    if (tessera_config_is_type_setting (pspecs[i]))
      return pspecs[i]->name;
  return NULL;
}

static void
broken_error (GError **error, const char *name, const char *path, const char *detail, GObjectClass *klass)
{
  const char *setting = first_own_setting (klass);

  if (setting != NULL)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                 _("%s: %s is broken (%s); fix it with “tessera set %s %s=…”, or remove it to set the pool up "
                   "again from the configuration"), name, path, detail, name, setting);
  else
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION,
                 _("%s: %s is broken (%s); remove it to set the pool up again from the configuration"),
                 name, path, detail);
}

/* Why @member (%NULL when absent) of an informations.json cannot give
 * the setting @pspec its value: of another JSON type than the setting's
 * (a string "3" for a count, which the type refuses), out of its range,
 * or missing when it sets the pool up. %NULL when it can; @value then
 * holds it, unless the member is absent or an array or object (the
 * type's own business, as GPU devices). */
static char *
check_member (GParamSpec *pspec, JsonNode *member, GValue *value)
{
  GType type = G_PARAM_SPEC_VALUE_TYPE (pspec);
  GType fundamental = G_TYPE_FUNDAMENTAL (type);
  g_autofree char *text = NULL;
  g_autoptr(GError) local = NULL;
  gboolean fits;

  if (member == NULL)
    return is_setup_setting (pspec) ? g_strdup_printf (_("“%s” is missing"), pspec->name) : NULL;
  if (JSON_NODE_HOLDS_ARRAY (member) || JSON_NODE_HOLDS_OBJECT (member))
    return NULL;
  if (JSON_NODE_HOLDS_VALUE (member))
    switch (json_node_get_value_type (member))
      {
      case G_TYPE_INT64:
        fits = fundamental == G_TYPE_INT || fundamental == G_TYPE_UINT || fundamental == G_TYPE_INT64 ||
               fundamental == G_TYPE_UINT64 || fundamental == G_TYPE_DOUBLE;
        break;
      case G_TYPE_DOUBLE:
        fits = fundamental == G_TYPE_DOUBLE;
        break;
      case G_TYPE_BOOLEAN:
        fits = fundamental == G_TYPE_BOOLEAN;
        break;
      case G_TYPE_STRING:
        fits = fundamental == G_TYPE_STRING || fundamental == G_TYPE_ENUM;
        break;
      default:
        fits = FALSE;
      }
  else
    fits = FALSE;
  if (!fits || (text = scalar_text (member)) == NULL)
    return g_strdup_printf (_("“%s” has a value of the wrong type"), pspec->name);
  if (is_setup_setting (pspec) &&
      (json_node_get_int (member) < 0 || json_node_get_int (member) > G_PARAM_SPEC_INT64 (pspec)->maximum))
    return g_strdup_printf (_("“%s” must be an integer from 0 to %" PRId64), pspec->name,
                            G_PARAM_SPEC_INT64 (pspec)->maximum);
  if (!tessera_settings_value_from_string (pspec, text, value, &local))
    return g_strdup_printf ("“%s”: %s", pspec->name, local->message);
  return NULL;
}

/*
 * Whether @informations, an informations.json for resource @name, gives
 * each of its type's own settings a value the type can be read with (see
 * check_member()); else %FALSE with %TESSERA_ERROR_INVALID_INFORMATION
 * saying why. For `tessera set`, before it writes.
 */
gboolean
tessera_config_check_informations_content (TesseraTrackedDynamicResource *resource, JsonNode *informations,
                                           GError **error)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (resource);
  g_autofree GParamSpec **pspecs = NULL;
  guint n;

  if (!JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION, _("it must be a JSON object"));
      return FALSE;
    }
  pspecs = g_object_class_list_properties (klass, &n);
  for (guint i = 0; i < n; i++)
    {
      GValue value = G_VALUE_INIT;
      g_autofree char *detail = NULL;

      if (!tessera_config_is_type_setting (pspecs[i]))
        continue;
      detail = check_member (pspecs[i], json_object_get_member (json_node_get_object (informations), pspecs[i]->name),
                             &value);
      if (G_IS_VALUE (&value))
        g_value_unset (&value);
      if (detail != NULL)
        {
          g_set_error_literal (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION, detail);
          return FALSE;
        }
    }
  return TRUE;
}

/* Whether informations.json (@path, in @lock_folder) is there, in
 * @exists, once the store could not read it (its one error code does not
 * say): reached through its folder, opened as the pool's folders are,
 * never through a link. Missing, or its folder missing: not there. A link
 * there counts as there (the library refuses it as broken when it reads
 * it). A pool folder that is a file, or one this user may not read, is a
 * G_IO_ERROR saying so, never a "broken" file that `tessera set` would
 * fix. */
static gboolean
informations_there (const char *lock_folder, const char *path, gboolean *exists, GError **error)
{
  AUTO_FD int dir_fd = tessera_folder_path_open (lock_folder, NULL);
  AUTO_FD int fd = -1;
  int saved;

  if (dir_fd >= 0)
    fd = openat (dir_fd, tessera_pool_part_get_name (TESSERA_POOL_PART_INFORMATIONS),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  saved = errno;
  *exists = fd >= 0 || saved == ELOOP;
  if (*exists || saved == ENOENT)
    return TRUE;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot open %s: %s"), path,
               g_strerror (saved));
  return FALSE;
}

/*
 * informations.json, once it exists, wins over the configuration (it is
 * what `tessera set` and experimaestro change): the configuration only sets
 * a new pool up. Fails when the folder has none and the configuration does
 * not say how to set it up (%TESSERA_ERROR_INVALID_CONFIGURATION), or when
 * it cannot be read as the type's (%TESSERA_ERROR_INVALID_INFORMATION).
 * Sets @notice to a line to show when the two say different things.
 */
gboolean
tessera_config_check_informations (TesseraConfig *self, const char *name, TesseraTrackedDynamicResource *resource,
                                   char **notice, GError **error)
{
  Entry *entry = find_entry (self, name);
  GObjectClass *klass = G_OBJECT_GET_CLASS (resource);
  g_autofree char *path = g_build_filename (tessera_tracked_dynamic_resource_get_lock_folder (resource),
                                            tessera_pool_part_get_name (TESSERA_POOL_PART_INFORMATIONS), NULL);
  g_autofree GParamSpec **pspecs = NULL;
  g_autoptr(JsonNode) informations = NULL;
  g_autoptr(GError) local = NULL;
  gboolean exists = TRUE;
  JsonObject *object;
  guint n;

  *notice = NULL;
  g_return_val_if_fail (entry != NULL, FALSE);
  pspecs = g_object_class_list_properties (klass, &n);
  /* Asked of the pool's store first: on etcd it is the store's key, and
   * no informations.json is kept. The library says any failure with one
   * code (%TESSERA_ERROR_INVALID_INFORMATION, as documented), so only
   * then is the file looked at, for what that code cannot tell: none
   * yet (the configuration sets the pool up), or a folder that cannot
   * be read (not a broken file that `tessera set` would fix). */
  informations = tessera_tracked_dynamic_resource_read_informations (resource, &local);
  if (informations == NULL &&
      !informations_there (tessera_tracked_dynamic_resource_get_lock_folder (resource), path, &exists, error))
    return FALSE;
  if (informations == NULL && !exists)
    {
      for (guint i = 0; i < n; i++)
        if (tessera_config_is_type_setting (pspecs[i]) && is_setup_setting (pspecs[i]) &&
            entry_get (entry, pspecs[i]->name) == NULL)
          {
            g_autofree char *group = g_strdup_printf ("resource %s", name);
            g_autofree char *message =
              g_strdup_printf (_("missing: %s has no informations.json yet, so this sets the pool up"),
                               tessera_tracked_dynamic_resource_get_lock_folder (resource));
            config_error (error, self->source ? self->source : _("the built-in configuration"), group,
                          pspecs[i]->name, message);
            return FALSE;
          }
      return TRUE;
    }
  if (informations == NULL)
    {
      broken_error (error, name, path, local->message, klass);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (informations))
    {
      broken_error (error, name, path, _("it must be a JSON object"), klass);
      return FALSE;
    }
  object = json_node_get_object (informations);
  for (guint i = 0; i < n; i++)
    {
      GParamSpec *pspec = pspecs[i];
      const char *configured = entry_get (entry, pspec->name);
      g_autofree char *text = NULL;
      g_autofree char *detail = NULL;
      GValue value = G_VALUE_INIT;

      if (!tessera_config_is_type_setting (pspec))
        continue;
      if ((detail = check_member (pspec, json_object_get_member (object, pspec->name), &value)) != NULL)
        {
          broken_error (error, name, path, detail, klass);
          return FALSE;
        }
      if (!G_IS_VALUE (&value))
        continue;   /* not there, or the type's own business */
      text = scalar_text (json_object_get_member (object, pspec->name));
      if (configured != NULL && *notice == NULL)
        {
          GValue wanted = G_VALUE_INIT;
          gboolean differs = tessera_settings_value_from_string (pspec, configured, &wanted, NULL) &&
                             g_param_values_cmp (pspec, &value, &wanted) != 0;

          if (G_IS_VALUE (&wanted))
            g_value_unset (&wanted);
          if (differs)
            *notice = g_strdup_printf (_("%s: informations.json says %s=%s, the configuration %s=%s; "
                                     "informations.json wins (“tessera set %s %s=%s” changes it)"),
                                   name, pspec->name, text, pspec->name, configured, name, pspec->name, configured);
        }
      g_value_unset (&value);
    }
  return TRUE;
}
