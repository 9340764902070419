/* tessera-config-search.c: where the configuration is looked for, and
 * which file is read: --config, $TESSERA_CONFIG, the user's config
 * folder, then each system config folder; the first found wins, and
 * with none the built-in configuration serves. What became of each file
 * looked for is kept, for `tessera config show`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>

#include "tessera-config-entry.h"

static TesseraConfig *
load_file (const char *file, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autofree char *text = NULL;
  gsize length;

  if (!g_file_get_contents (file, &text, &length, &local))
    {
      config_error (error, file, NULL, NULL, local->message);
      return NULL;
    }
  return tessera_config_load_from_data (file, text, length, error);
}

/* Looks for @dir/tessera/tessera.conf: TRUE with *@found set when it is
 * there, TRUE with *@found NULL when it is not (no @dir, no tessera/ in
 * it, no file there). A folder on the way that exists but cannot be
 * searched is an error naming it: the configuration it may hold is not
 * to be replaced by the next one, or by the built-in default, without a
 * word (issue 42). So is a step that is a symbolic link whose target
 * cannot be reached (to nothing, as a shared mount not mounted on this
 * node leaves it, or through a folder we may not search): the error
 * names the link and its target, not the folder that holds it. */
static gboolean
find_config_in (const char *dir, char **found, GError **error)
{
  g_autofree char *folder = g_build_filename (dir, "tessera", NULL);
  g_autofree char *file = g_build_filename (folder, "tessera.conf", NULL);
  const char *steps[] = { dir, folder, file };

  *found = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      GStatBuf st;
      int saved;

      if (g_stat (steps[i], &st) == 0)
        continue;
      saved = errno;
      if (g_lstat (steps[i], &st) == 0 && S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (steps[i], NULL);

          if (i == G_N_ELEMENTS (steps) - 1)
            g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                         _("cannot read the configuration file %s, a link to %s: %s"), steps[i],
                         target != NULL ? target : "?", g_strerror (saved));
          else
            g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                         _("cannot read the configuration folder %s, a link to %s: %s"), steps[i],
                         target != NULL ? target : "?", g_strerror (saved));
          return FALSE;
        }
      if (saved == ENOENT || saved == ENOTDIR)
        return TRUE;
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("cannot read the configuration folder %s: %s"), steps[i > 0 ? i - 1 : 0],
                   g_strerror (saved));
      return FALSE;
    }
  *found = g_steal_pointer (&file);
  return TRUE;
}

/* Where the configuration is looked for, in order, after --config and
 * $TESSERA_CONFIG: the user's folder, then each system folder. */
static GPtrArray *
dup_search_files (void)
{
  const char * const *system_dirs = g_get_system_config_dirs ();
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (files, g_build_filename (g_get_user_config_dir (), "tessera", "tessera.conf", NULL));
  for (guint i = 0; system_dirs[i] != NULL; i++)
    g_ptr_array_add (files, g_build_filename (system_dirs[i], "tessera", "tessera.conf", NULL));
  return files;
}

/* Records where the configuration was looked for: @read, the file read
 * (NULL: none, the built-in default), and every other file of the
 * search, there (but not read: the one read wins) or not. */
static void
record_looked_at (TesseraConfig *self, const char *read)
{
  g_autoptr(GPtrArray) files = dup_search_files ();
  gboolean found = FALSE;

  if (read != NULL && !g_ptr_array_find_with_equal_func (files, read, g_str_equal, NULL))
    {
      LookedAt *looked_at = g_new0 (LookedAt, 1);

      looked_at->path = g_strdup (read);
      looked_at->state = TESSERA_CONFIG_FILE_READ;
      g_ptr_array_add (self->looked_at, looked_at);
      found = TRUE;
    }
  for (guint i = 0; i < files->len; i++)
    {
      LookedAt *looked_at = g_new0 (LookedAt, 1);
      const char *path = g_ptr_array_index (files, i);

      looked_at->path = g_strdup (path);
      if (!found && read != NULL && g_str_equal (path, read))
        {
          looked_at->state = TESSERA_CONFIG_FILE_READ;
          found = TRUE;
        }
      else if (g_file_test (path, G_FILE_TEST_EXISTS))
        looked_at->state = TESSERA_CONFIG_FILE_NOT_READ;
      else
        looked_at->state = TESSERA_CONFIG_FILE_ABSENT;
      g_ptr_array_add (self->looked_at, looked_at);
    }
}

static TesseraConfig *
load_file_recorded (const char *file, GError **error)
{
  TesseraConfig *self = load_file (file, error);

  if (self != NULL)
    record_looked_at (self, file);
  return self;
}

TesseraConfig *
tessera_config_load (const char *explicit_path, GError **error)
{
  const char *env = g_getenv ("TESSERA_CONFIG");
  const char * const *system_dirs = g_get_system_config_dirs ();
  g_autofree char *user = NULL;
  TesseraConfig *self;

  /* Named explicitly: it must exist. */
  if (explicit_path != NULL)
    return load_file_recorded (explicit_path, error);
  if (env != NULL && *env != '\0')
    return load_file_recorded (env, error);
  if (!find_config_in (g_get_user_config_dir (), &user, error))
    return NULL;
  if (user != NULL)
    return load_file_recorded (user, error);
  for (guint i = 0; system_dirs[i] != NULL; i++)
    {
      g_autofree char *path = NULL;

      if (!find_config_in (system_dirs[i], &path, error))
        return NULL;
      if (path != NULL)
        return load_file_recorded (path, error);
    }
  self = builtin_default ();
  record_looked_at (self, NULL);
  return self;
}

/* The files the configuration was looked for in, in order: how many. */
guint
tessera_config_get_n_files (TesseraConfig *self)
{
  return self->looked_at->len;
}

/* The @index-th of them, and in @state whether it was read. */
const char *
tessera_config_get_file (TesseraConfig *self, guint index, TesseraConfigFileState *state)
{
  LookedAt *looked_at = g_ptr_array_index (self->looked_at, index);

  *state = looked_at->state;
  return looked_at->path;
}
