/* tessera-config.c: the configuration of the `tessera` command, the
 * resources it defines: what the command asks of them (names, type,
 * settings, folder; a setting as it may be shown), and opening one, in
 * the registry, with the mode and group its settings give.
 *
 * Its other jobs each have a file: where it is looked for
 * (tessera-config-search.c), reading a file (tessera-config-parse.c), the
 * built-in one (tessera-config-default.c), mode= and group=
 * (tessera-config-sharing.c) and a pool's informations.json checked
 * against it (tessera-config-informations.c); what they share is in
 * tessera-config-entry.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tessera-config-entry.h"

static void
entry_free (Entry *entry)
{
  g_free (entry->name);
  g_free (entry->type);
  g_strfreev (entry->keys);
  g_strfreev (entry->values);
  g_clear_object (&entry->resource);
  g_free (entry);
}

static void
looked_at_free (LookedAt *looked_at)
{
  g_free (looked_at->path);
  g_free (looked_at);
}

void
tessera_config_free (TesseraConfig *self)
{
  if (self == NULL)
    return;
  g_free (self->source);
  g_ptr_array_unref (self->entries);
  g_ptr_array_unref (self->looked_at);
  g_ptr_array_unref (self->warnings);
  g_free (self);
}

char *
tessera_config_dup_state_dir (void)
{
  return g_build_filename (g_get_user_state_dir (), TESSERA_STATE_FOLDER, NULL);
}

TesseraConfig *
config_new (const char *source)
{
  TesseraConfig *self = g_new0 (TesseraConfig, 1);

  self->source = g_strdup (source);
  self->entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_free);
  self->looked_at = g_ptr_array_new_with_free_func ((GDestroyNotify) looked_at_free);
  self->warnings = g_ptr_array_new_with_free_func (g_free);
  return self;
}

void
config_error (GError **error, const char *file, const char *group, const char *key, const char *message)
{
  if (key != NULL)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                 "%s: [%s] %s: %s", file, group, key, message);
  else if (group != NULL)
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                 "%s: [%s]: %s", file, group, message);
  else
    g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                 "%s: %s", file, message);
}

/* A setting of the resource type (its class or a base of it below the
 * generic tracked resource, such as the public counting base), not one of
 * the core's own properties. */
gboolean
tessera_config_is_type_setting (GParamSpec *pspec)
{
  return g_type_is_a (pspec->owner_type, TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE) &&
         pspec->owner_type != TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE &&
         (pspec->flags & G_PARAM_WRITABLE);
}

/* A type's own setting that sets a new pool up and has no default: an
 * int64 whose minimum and default are -1, "not given" (a counter token's
 * total). */
gboolean
is_setup_setting (GParamSpec *pspec)
{
  return G_IS_PARAM_SPEC_INT64 (pspec) && G_PARAM_SPEC_INT64 (pspec)->minimum == -1 &&
         G_PARAM_SPEC_INT64 (pspec)->default_value == -1;
}

/* @value of setting @key as it may be printed: a secret never is. A
 * password is "***", and so is the password of an endpoint's URL
 * (`https://user:***@host:2379`). */
char *
tessera_config_dup_shown_value (const char *key, const char *value)
{
  g_auto(GStrv) urls = NULL;

  if (g_str_equal (key, "password"))
    return g_strdup ("***");
  if (!g_str_equal (key, "endpoints"))
    return g_strdup (value);
  urls = g_strsplit (value, ",", -1);
  for (guint i = 0; urls[i] != NULL; i++)
    {
      const char *scheme = strstr (urls[i], "://");
      const char *authority = scheme != NULL ? scheme + strlen ("://") : urls[i];
      gsize length = strcspn (authority, "/?#");
      const char *at = g_strrstr_len (authority, (gssize) length, "@");
      const char *colon = at != NULL ? memchr (authority, ':', at - authority) : NULL;

      if (colon != NULL)
        {
          char *shown = g_strdup_printf ("%.*s***%s", (int) (colon + 1 - urls[i]), urls[i], at);

          g_free (urls[i]);
          urls[i] = shown;
        }
    }
  return g_strjoinv (",", urls);
}

const char *
entry_get (Entry *entry, const char *key)
{
  for (guint i = 0; entry->keys[i] != NULL; i++)
    if (g_str_equal (entry->keys[i], key))
      return entry->values[i];
  return NULL;
}

/* One line each for what the file has that this Tessera does not know and
 * ignores (a file for a newer one), in file order. */
const char * const *
tessera_config_get_warnings (TesseraConfig *self, guint *n)
{
  *n = self->warnings->len;
  return (const char * const *) self->warnings->pdata;
}

const char *
tessera_config_get_source (TesseraConfig *self)
{
  return self->source;
}

GPtrArray *
tessera_config_get_names (TesseraConfig *self)
{
  GPtrArray *names = g_ptr_array_new ();

  for (guint i = 0; i < self->entries->len; i++)
    g_ptr_array_add (names, ((Entry *) g_ptr_array_index (self->entries, i))->name);
  return names;
}

Entry *
find_entry (TesseraConfig *self, const char *name)
{
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (self->entries, i);
      if (g_str_equal (entry->name, name))
        return entry;
    }
  return NULL;
}

gboolean
tessera_config_has (TesseraConfig *self, const char *name)
{
  return find_entry (self, name) != NULL;
}

/* The settings resource @name is given, as in the file (its folder as
 * "lock-folder"), NULL-terminated; FALSE when there is no such resource. */
gboolean
tessera_config_get_settings (TesseraConfig *self, const char *name, const char * const **keys,
                             const char * const **values)
{
  Entry *entry = find_entry (self, name);

  if (entry == NULL)
    return FALSE;
  *keys = (const char * const *) entry->keys;
  *values = (const char * const *) entry->values;
  return TRUE;
}

const char *
tessera_config_get_type_name (TesseraConfig *self, const char *name)
{
  Entry *entry = find_entry (self, name);
  return entry ? entry->type : NULL;
}

/* Whether resource @name has a mode= or group= of its own: opening it
 * (not read-only) gives its folders and files those. */
gboolean
tessera_config_has_sharing (TesseraConfig *self, const char *name)
{
  Entry *entry = find_entry (self, name);
  return entry != NULL && entry->sharing_set;
}

/* The resource's folder, without opening it. */
char *
tessera_config_dup_path (TesseraConfig *self, const char *name)
{
  Entry *entry = find_entry (self, name);

  if (entry == NULL)
    return NULL;
  for (guint i = 0; entry->keys[i] != NULL; i++)
    if (g_str_equal (entry->keys[i], "lock-folder"))
      return g_strdup (entry->values[i]);
  return NULL;
}

/* The folder that holds resource @name's pool, as tessera_config_dup_path(),
 * or NULL when its store keeps the pool elsewhere (etcd): its path then
 * holds nothing of it. */
char *
tessera_config_dup_pool_folder (TesseraConfig *self, const char *name)
{
  Entry *entry = find_entry (self, name);

  if (entry == NULL)
    return NULL;
  for (guint i = 0; entry->keys[i] != NULL; i++)
    if (g_str_equal (entry->keys[i], "store") && !g_str_equal (entry->values[i], "folder"))
      return NULL;
  return tessera_config_dup_path (self, name);
}

/* From now on, open resources only to look: create, change and remove
 * nothing (see TesseraTrackedDynamicResource:read-only). */
void
tessera_config_set_read_only (TesseraConfig *self, gboolean read_only)
{
  self->read_only = read_only;
}

TesseraTrackedDynamicResource *
tessera_config_open (TesseraConfig *self, const char *name, GError **error)
{
  Entry *entry = find_entry (self, name);
  TesseraDynamicResource *resource;

  if (entry == NULL)
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("No resource named “%s” in %s"), name, self->source ? self->source : _("the built-in configuration"));
      return NULL;
    }
  if (entry->resource == NULL)
    {
      g_autoptr(GStrvBuilder) keys = g_strv_builder_new ();
      g_autoptr(GStrvBuilder) values = g_strv_builder_new ();
      g_autoptr(GError) local = NULL;
      g_auto(GStrv) all_keys = NULL;
      g_auto(GStrv) all_values = NULL;

      g_strv_builder_addv (keys, (const char **) entry->keys);
      g_strv_builder_addv (values, (const char **) entry->values);
      if (self->read_only)
        {
          g_strv_builder_add (keys, "read-only");
          g_strv_builder_add (values, "true");
        }
      all_keys = g_strv_builder_end (keys);
      all_values = g_strv_builder_end (values);
      resource = tessera_registry_create_resource (tessera_registry_get_default (), entry->type, entry->name,
                                                   (const char * const *) all_keys,
                                                   (const char * const *) all_values, &local);
      if (resource == NULL)
        {
          /* What the type refuses in its settings is this file's error:
           * say where, as for what loading it found. */
          if (g_error_matches (local, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION))
            {
              g_autofree char *group = g_strdup_printf ("resource %s", entry->name);

              config_error (error, self->source ? self->source : _("the built-in configuration"), group, NULL,
                            local->message);
            }
          else
            g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
      if (!TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (resource))
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("Type “%s” is not a tracked resource"), entry->type);
          g_object_unref (resource);
          return NULL;
        }
      entry->resource = TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
      if (!self->read_only && entry->sharing_set)
        apply_sharing (entry, tessera_tracked_dynamic_resource_get_lock_folder (entry->resource));
    }
  return entry->resource;
}
