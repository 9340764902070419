/* tessera-options.c: what every command reads first: its options, the
 * configuration, the resources it names, opened with the errors said; and
 * who may administer a pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <glib/gi18n-lib.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera-config.h"
#include "tessera-lock-wait.h"

#include "tessera-options.h"
#include "tessera-output.h"

char *opt_config = NULL;
static char *opt_config_late = NULL;   /* --config after the subcommand */

TesseraConfig *
load_config (int *status)
{
  g_autoptr(GError) error = NULL;
  TesseraConfig *config = tessera_config_load (opt_config, &error);

  const char * const *warnings;
  guint n;

  if (config == NULL)
    {
      *status = fail (EXIT_CONFIG, "%s", error->message);
      return NULL;
    }
  /* A file for a newer Tessera: what this one ignores in it, said once. */
  warnings = tessera_config_get_warnings (config, &n);
  for (guint i = 0; i < n; i++)
    g_printerr (_("tessera: %s\n"), warnings[i]);
  return config;
}

gboolean
is_io_error (const GError *error)
{
  return error->domain == G_IO_ERROR ||
         error->domain == G_FILE_ERROR;
}

/* @status, or 71 (EX_OSERR) when @error says that descriptors ran out:
 * the system's fault, not the user's nor the folder's; or 68 (EX_NOHOST)
 * when the pool's store (etcd) cannot be reached. */
int
oserr_or (const GError *error, int status)
{
  if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_STORE_UNREACHABLE))
    return EXIT_NOHOST;
  return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_OPEN_FILES) ||
         g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_MFILE) ||
         g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NFILE) ? EXIT_OSERR : status;
}

/* Whether this process is in group @gid. */
static gboolean
in_group (gid_t gid)
{
  int n = getgroups (0, NULL);
  g_autofree gid_t *groups = NULL;

  if (gid == getegid ())
    return TRUE;
  if (n <= 0)
    return FALSE;
  groups = g_new (gid_t, n);
  n = getgroups (n, groups);
  for (int i = 0; i < n; i++)
    if (groups[i] == gid)
      return TRUE;
  return FALSE;
}

/* Why this user may not use the pool in @folder, when it is a group's
 * (issue 42): the nearest folder, @folder or one above it, that gives its
 * group more than everyone else and whose group this user is not in.
 * "USER is not in group G, which FOLDER is shared with", or %NULL. */
static char *
not_in_group_cause (const char *folder)
{
  g_autofree char *path = g_strdup (folder);

  while (path != NULL && g_path_is_absolute (path))
    {
      struct stat st;
      char *parent;

      if (stat (path, &st) == 0 && S_ISDIR (st.st_mode) &&
          (((st.st_mode >> 3) & 07) & ~(st.st_mode & 07)) != 0 && !in_group (st.st_gid))
        {
          struct group *gr = getgrgid (st.st_gid);
          g_autofree char *group = gr != NULL ? g_strdup (gr->gr_name) : g_strdup_printf ("%u", (guint) st.st_gid);

          return g_strdup_printf (_("%s is not in group %s, which %s is shared with"), g_get_user_name (), group,
                                  path);
        }
      if (g_str_equal (path, "/"))
        break;
      parent = g_path_get_dirname (path);
      g_free (path);
      path = parent;
    }
  return NULL;
}

/* @message, and when @error is a permission denied in the pool of
 * @folder, a group's that this user is not in, that cause too. */
char *
with_denied_cause (const char *message, const GError *error, const char *folder)
{
  g_autofree char *cause = NULL;

  if (folder != NULL && (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED) ||
                         g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_ACCES) ||
                         g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_PERM)))
    cause = not_in_group_cause (folder);
  if (cause == NULL)
    return g_strdup (message);
  /* Translators: an error, then why: "USER is not in group G, which FOLDER is shared with" */
  return g_strdup_printf (_("%s (%s)"), message, cause);
}

gboolean lock_note_started;   /* or `run`, which says it itself */
/* `run`: what informations.json overrides is for status to say, not for
 * every job's log. */
gboolean quiet_notices;

/* Opens a resource; with @check, also checks its informations.json against
 * the configuration (not for `set`, which is how a broken one is fixed).
 * On failure, the message said is also in @why when given. */
TesseraTrackedDynamicResource *
open_resource_why (TesseraConfig *config, const char *name, gboolean check, int *status, char **why)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *notice = NULL;
  TesseraTrackedDynamicResource *resource;
  guint mark;

  if (!tessera_config_has (config, name))
    {
      *status = fail (EXIT_USAGE, _("no resource named “%s” (see “tessera status”)"), name);
      return NULL;
    }
  /* `run` says so from its signal thread. */
  if (!lock_note_started)
    tessera_lock_wait_note_start ();
  lock_note_started = TRUE;
  mark = hold_log ();
  resource = tessera_config_open (config, name, &error);
  if (resource == NULL)
    {
      g_autofree char *folder = tessera_config_dup_path (config, name);
      g_autofree char *message = with_denied_cause (error->message, error, folder);

      release_log (oserr_or (error, 0) != EXIT_OSERR);
      *status = fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION) ||
                      g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_UNSUPPORTED_PROTOCOL)
                      ? EXIT_CONFIG : oserr_or (error, EXIT_IOERR), "%s", message);
      if (why != NULL)
        *why = g_steal_pointer (&message);
      return NULL;
    }
  if (check && !tessera_config_check_informations (config, name, resource, &notice, &error))
    {
      g_autofree char *message =
        with_denied_cause (error->message, error, tessera_tracked_dynamic_resource_get_lock_folder (resource));

      /* This message says all this opening would have said. */
      drop_log_since (mark);
      release_log_unless_deferred ();
      *status = fail (is_io_error (error) ? oserr_or (error, EXIT_IOERR) : EXIT_CONFIG, "%s", message);
      if (why != NULL)
        *why = g_steal_pointer (&message);
      return NULL;
    }
  release_log_unless_deferred ();
  if (notice != NULL && !quiet_notices)
    g_printerr (_("tessera: %s\n"), notice);
  return resource;
}

TesseraTrackedDynamicResource *
open_resource_full (TesseraConfig *config, const char *name, gboolean check, int *status)
{
  return open_resource_why (config, name, check, status, NULL);
}

TesseraTrackedDynamicResource *
open_resource (TesseraConfig *config, const char *name, int *status)
{
  return open_resource_full (config, name, TRUE, status);
}

GOptionContext *
new_context (const char *parameters, const char *summary, const GOptionEntry *entries)
{
  /* The global options work after the subcommand too. */
  static const GOptionEntry global_entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &opt_config_late, N_("Read the configuration from FILE only"),
      N_("FILE") },
    { NULL }
  };
  GOptionContext *context = g_option_context_new (parameters);

  g_option_context_set_summary (context, summary);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, global_entries, GETTEXT_PACKAGE);
  return context;
}

gboolean
parse (GOptionContext *context, int *argc, char ***argv, int *status)
{
  g_autoptr(GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      *status = fail (EXIT_USAGE, "%s", error->message);
      if (g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION))
        try_help (g_get_prgname ());
      return FALSE;
    }
  if (opt_config_late != NULL)
    opt_config = opt_config_late;
  return TRUE;
}

/* The seconds an option such as --timeout gives: a number, 0 or more
 * (infinity too when @infinite), never NaN. */
gboolean
parse_seconds (const char *option, const char *text, gboolean infinite, double *seconds, int *status)
{
  char *end = NULL;
  double value = g_ascii_strtod (text, &end);
  /* Decimal only, as written by a person: strtod() also reads
   * hexadecimal and skips blanks. */
  gboolean decimal = (g_ascii_isdigit (text[0]) || text[0] == '.' || g_ascii_strncasecmp (text, "inf", 3) == 0) &&
                     strpbrk (text, "xX") == NULL;

  if (!decimal || end == text || *end != '\0' || isnan (value) || value < 0 || (!infinite && isinf (value)))
    {
      /* Translators: the first %s is an option, such as --timeout */
      *status = fail (EXIT_USAGE, _("%s wants a number of seconds, 0 or more, not “%s”"), option, text);
      return FALSE;
    }
  *seconds = value;
  return TRUE;
}

/* The resources named on the command line, or all of them. */
GPtrArray *
selected_names (TesseraConfig *config, int argc, char **argv, int *status)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);

  if (argc <= 1)
    {
      g_autoptr(GPtrArray) all = tessera_config_get_names (config);
      for (guint i = 0; i < all->len; i++)
        g_ptr_array_add (names, g_strdup (g_ptr_array_index (all, i)));
      return names;
    }
  for (int i = 1; i < argc; i++)
    {
      if (!tessera_config_has (config, argv[i]))
        {
          *status = fail (EXIT_USAGE, _("no resource named “%s” (see “tessera status”)"), argv[i]);
          g_ptr_array_unref (names);
          return NULL;
        }
      g_ptr_array_add (names, g_strdup (argv[i]));
    }
  return names;
}


/* For a command that only looks (status, hosts): the configuration, to
 * be read only (a read-only mount, a pool it may not change), and in
 * *@names the resources named on the command line, or all of them; NULL
 * with *@status set when either cannot be had. */
TesseraConfig *
load_config_to_look (int argc, char **argv, GPtrArray **names, int *status)
{
  g_autoptr(TesseraConfig) config = load_config (status);

  if (config == NULL || (*names = selected_names (config, argc, argv, status)) == NULL)
    return NULL;
  tessera_config_set_read_only (config, TRUE);
  return g_steal_pointer (&config);
}

/* Begins, in @builder, the JSON object of a command's output: its
 * "resources" array, one element a resource. */
void
begin_resources_json (JsonBuilder *builder)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "resources");
  json_builder_begin_array (builder);
}

/* Whether every configuration file @config read is this user's: in a
 * site whose configuration is root's (/etc/xdg/tessera), no member's. */
static gboolean
configuration_is_ours (TesseraConfig *config)
{
  uid_t uid = geteuid ();
  guint read = 0;

  for (guint i = 0; i < tessera_config_get_n_files (config); i++)
    {
      TesseraConfigFileState state;
      const char *file = tessera_config_get_file (config, i, &state);
      struct stat st;

      if (state != TESSERA_CONFIG_FILE_READ)
        continue;
      read++;
      if (stat (file, &st) < 0 || st.st_uid != uid)
        return FALSE;
    }
  return read > 0;
}

/* Whether this user may administer the pool in @folder (a resource's
 * folder of @config; NULL for a pool that lives elsewhere, etcd): change
 * its settings, force another user's holder out, retire a host. Root and
 * the pool's owner may (tessera_folder_path_get_pool_owner(): in a
 * group's pool the owner of the folder holding the resource's), as the
 * sticky bit lets them rename or remove any entry there; anyone else may
 * not (its caller says so in one line, status 77). A folder that cannot
 * be opened (not made yet) is left to the command. A pool elsewhere has
 * no folder to tell its owner: there the owner of the configuration
 * decides (every file read is hers: a site's, root's, leaves it to
 * root), as only the cluster's own access control binds anyone who has
 * its credentials. */
gboolean
may_administer (TesseraConfig *config, const char *folder)
{
  uid_t uid = geteuid ();
  gint64 owner;

  if (uid == 0)
    return TRUE;
  if (folder == NULL)
    return configuration_is_ours (config);
  owner = tessera_folder_path_get_pool_owner (folder);
  return owner < 0 || owner == (gint64) uid;
}

/* Whose pool @folder is, for a refusal: the folder, or (NULL: a pool
 * elsewhere) its configuration. */
const char *
pool_owned_by (const char *folder)
{
  return folder != NULL ? folder : _("its configuration");
}

/* Whether the entry of @job in @folder's jobs/ is another user's
 * (tessera_pool_part_get_holder_owner()); in a pool elsewhere (@folder
 * NULL: etcd, whose keys have no owner), whether @holder's process does
 * not say it is ours (the uid its spec records). */
gboolean
is_others_entry (const char *folder, const char *job, TesseraDynamicLockFile *holder)
{
  gint64 owner;

  if (folder == NULL)
    {
      TesseraProcess *process = holder != NULL ? tessera_dynamic_lock_file_get_process (holder) : NULL;

      return holder != NULL && (process == NULL || tessera_process_get_uid (process) != (gint64) geteuid ());
    }
  owner = tessera_pool_part_get_holder_owner (folder, job);
  return owner >= 0 && owner != (gint64) geteuid ();
}
