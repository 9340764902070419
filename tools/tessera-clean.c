/* tessera-clean.c: `tessera clean`: dead holders, ended job folders,
 * forced entries and retired hosts removed from a pool. What goes is
 * core's to find and remove (tessera-pool-cleaning.h); the command has
 * the options, asks, and says what went and what was left.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-describe.h"
#include "tessera-hosts.h"
#include "tessera-options.h"
#include "tessera-output.h"

/* Says which holders of resource @name that @cleaning saw are gone now
 * (removed as dead by the opening of the resource and its update);
 * returns how many. */
static guint
say_gone_holders (const char *name, TesseraPoolCleaning *cleaning)
{
  g_autoptr(GPtrArray) gone = tessera_pool_cleaning_list_gone_holders (cleaning);

  for (guint i = 0; i < gone->len; i++)
    {
      g_autofree char *shown = escape_name (tessera_cleaned_get_name (g_ptr_array_index (gone, i)), TRUE);

      g_print (_("%s: removed %s\n"), name, shown);
    }
  return gone->len;
}

/* Says which holders of resource @name that @cleaning saw were judged
 * gone by the update of @resource but are left, their file another
 * user's that we may not delete (a group pool's sticky jobs/): one line
 * each, naming the file and its owner. Returns how many. */
static guint
say_left_holders (const char *name, TesseraPoolCleaning *cleaning, TesseraTrackedDynamicResource *resource)
{
  g_autoptr(GPtrArray) left = tessera_pool_cleaning_list_left_holders (cleaning, resource);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);

  for (guint i = 0; i < left->len; i++)
    {
      TesseraCleaned *holder = g_ptr_array_index (left, i);
      uid_t uid = tessera_cleaned_get_owner (holder);
      g_autofree char *shown = escape_name (tessera_cleaned_get_path (holder), TRUE);
      g_autofree char *owner = user_name (users, uid) != NULL ? g_strdup (user_name (users, uid))
                                                             : g_strdup_printf ("uid %u", (unsigned) uid);

      g_print (_("%s: left %s, gone but %s's: its owner, root or the pool's owner may remove it\n"),
               name, shown, owner);
    }
  return left->len;
}

/* Says what the cleaning of the fencing counter in the pool @folder of
 * resource @name found (tessera_pool_clean_fence_parts()): the parts
 * that a user planted under another's name, removed when we administer
 * the pool, else told of, each counted in *@left. Returns how many were
 * removed. */
static guint
clean_fence_strays (TesseraConfig *config, const char *name, const char *folder, guint *left)
{
  g_autoptr(GPtrArray) cleaned = tessera_pool_clean_fence_parts (folder, folder != NULL &&
                                                                 may_administer (config, folder));
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  guint removed = 0;

  for (guint i = 0; i < cleaned->len; i++)
    {
      TesseraCleaned *part = g_ptr_array_index (cleaned, i);
      g_autofree char *shown = escape_name (tessera_cleaned_get_path (part), TRUE);
      guint uid = tessera_cleaned_get_named_uid (part);
      guint by = tessera_cleaned_get_owner (part);
      const char *owner;

      if (tessera_cleaned_get_removed (part))
        {
          g_print (_("%s: removed %s, planted under uid %u's name\n"), name, shown, uid);
          removed++;
          continue;
        }
      owner = user_name (users, by);
      if (owner != NULL)
        g_print (_("%s: left %s, planted under uid %u's name by %s: root or the pool's owner may remove it\n"),
                 name, shown, uid, owner);
      else
        g_print (_("%s: left %s, planted under uid %u's name by uid %u: root or the pool's owner may remove it\n"),
                 name, shown, uid, by);
      (*left)++;
    }
  return removed;
}

/* Says that the job folder @folder (another user's: @uid) of resource
 * @name's pool is left: only its owner (her plain `clean`) or root may
 * empty it, the files in it being hers. */
static void
say_job_folder_left (const char *name, const char *folder, uid_t uid, GHashTable *users)
{
  g_autofree char *shown = escape_name (folder, TRUE);
  const char *user = user_name (users, uid);
  g_autofree char *owner = user != NULL ? escape_name (user, TRUE) : g_strdup_printf ("uid %u", (unsigned) uid);

  /* Translators: "cpu: left the job folder /srv/pool/cpu/runs/1001/node7-…, alice's: only its owner (with
   * “tessera clean”) or root may remove it" */
  g_print (_("%s: left the job folder %s, %s's: only its owner (with “tessera clean”) or root may remove it\n"),
           name, shown, owner);
}

/* clean --host HOST --yes: says what the cleaning of the retired host's
 * job folders in the lock folder @lock_folder of resource @name found
 * (tessera_pool_clean_retired_host_job_folders()): those removed, and,
 * one line each, another user's that were left (@left, out: how many).
 * Returns how many were removed. */
static guint
clean_host_job_folders (const char *name, const char *lock_folder, const char *host, guint *left)
{
  g_autoptr(GPtrArray) cleaned = tessera_pool_clean_retired_host_job_folders (lock_folder, host);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  guint removed = 0;

  for (guint i = 0; i < cleaned->len; i++)
    {
      TesseraCleaned *folder = g_ptr_array_index (cleaned, i);
      g_autofree char *shown = NULL;

      if (!tessera_cleaned_get_removed (folder))
        {
          say_job_folder_left (name, tessera_cleaned_get_path (folder), tessera_cleaned_get_owner (folder), users);
          (*left)++;
          continue;
        }
      shown = escape_name (tessera_cleaned_get_path (folder), TRUE);
      /* Translators: "cpu: removed the job folder /srv/pool/cpu/runs/1000/node7-…" */
      g_print (_("%s: removed the job folder %s\n"), name, shown);
      removed++;
    }
  return removed;
}

/* Says which job folders @cleaned (a new array, taken) were removed;
 * returns how many. */
static guint
say_job_folders_removed (GPtrArray *cleaned)
{
  guint removed = cleaned->len;

  for (guint i = 0; i < cleaned->len; i++)
    {
      g_autofree char *shown = escape_name (tessera_cleaned_get_path (g_ptr_array_index (cleaned, i)), TRUE);

      g_print (_("removed the job folder %s\n"), shown);
    }
  g_ptr_array_unref (cleaned);
  return removed;
}

/* The ended job folders of the state folder's jobs/, and of runs/UID in
 * every configured pool (every user's for root). */
static guint
clean_job_folders (TesseraConfig *config)
{
  g_autofree char *state = tessera_config_dup_state_dir ();
  g_autoptr(GPtrArray) names = tessera_config_get_names (config);
  guint removed = say_job_folders_removed (tessera_clean_state_job_folders (state));

  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *pool = tessera_config_dup_path (config, g_ptr_array_index (names, i));

      removed += say_job_folders_removed (tessera_pool_clean_job_folders (pool));
    }
  return removed;
}

/* The holding of @job as last read (a new reference), NULL when none:
 * what the audit log says of it once it is removed. @job is a holder's
 * name (tessera_pool_part_dup_holder_name() of its entry), or its entry
 * as given. */
static TesseraDynamicLockFile *
holder_of (TesseraTrackedDynamicResource *resource, const char *job)
{
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (resource);

  for (guint i = 0; i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
      g_autofree char *holder = tessera_pool_part_dup_holder_name (base);

      if (g_str_equal (holder, job) || g_str_equal (base, job))
        return g_object_ref (lock_file);
    }
  return NULL;
}

/* clean --force NAME JOB…: the named holders go, whatever their
 * liveness. */
static int
clean_force (TesseraConfig *config, int argc, char **argv)
{
  const char *name = argv[1];
  g_autofree char *folder = NULL;
  g_autofree char *pool_folder = NULL;
  g_autoptr(TesseraPoolCleaning) cleaning = NULL;
  TesseraTrackedDynamicResource *resource;
  int status = 0;

  if (argc < 3)
    return fail (EXIT_USAGE, _("usage: tessera clean --force NAME JOB…"));
  if (!tessera_config_has (config, name))
    return fail (EXIT_USAGE, _("no resource named “%s” (see “tessera status”)"), name);
  /* Opening a resource already removes what is dead: look before. */
  folder = tessera_config_dup_path (config, name);
  pool_folder = tessera_config_dup_pool_folder (config, name);
  cleaning = tessera_pool_cleaning_new (folder);
  resource = open_resource_full (config, name, FALSE, &status);
  if (resource == NULL)
    return status;
  for (int i = 2; i < argc; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *shown = escape_name (argv[i], TRUE);
      g_autoptr(TesseraDynamicLockFile) holder = holder_of (resource, argv[i]);

      if (is_others_entry (pool_folder, argv[i], holder) && !may_administer (config, pool_folder))
        status = fail (EXIT_NOPERM, _("%s: %s is another user's: only its owner, root or the owner of %s may force it out"),
                       name, shown, pool_owned_by (pool_folder));
      else if (tessera_tracked_dynamic_resource_remove_holder (resource, argv[i], &error))
        {
          tessera_tracked_dynamic_resource_audit (resource, "force", holder, "tessera clean --force");
          g_print (_("%s: removed %s (forced)\n"), name, shown);
        }
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING) &&
               tessera_pool_cleaning_had_holder (cleaning, argv[i]))
        g_print (_("%s: removed %s\n"), name, shown);   /* dead: gone when the pool was opened */
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING))
        status = fail (EXIT_USAGE, _("%s has no holder “%s” (see “tessera status %s”)"), name, shown, name);
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_NAME))
        {
          g_autofree char *message = escape_name (error->message, TRUE);
          status = fail (EXIT_USAGE, "%s", message);
        }
      else
        status = fail (oserr_or (error, error->domain == G_IO_ERROR ? EXIT_IOERR : 1), "%s", error->message);
    }
  return status;
}

/* Says which heartbeats and marks of the retired host @host (@shown_host,
 * as shown) went from the lock folder @lock_folder's hosts/
 * (tessera_pool_clean_retired_host_files()); returns how many. */
static guint
clean_host_heartbeats (const char *resource, const char *lock_folder, const char *host, const char *shown_host)
{
  g_autoptr(GPtrArray) cleaned = tessera_pool_clean_retired_host_files (lock_folder, host);

  for (guint i = 0; i < cleaned->len; i++)
    g_print (tessera_cleaned_get_kind (g_ptr_array_index (cleaned, i)) == TESSERA_CLEANED_HEARTBEAT
               ? _("%s: removed the heartbeat of host %s\n")
               : _("%s: removed the mark of host %s\n"),
             resource, shown_host);
  return cleaned->len;
}

/* Says that the temporary file @temporary of the pool of resource
 * @resource went: its name, and its folder's. */
static void
say_temporary_removed (const char *resource, TesseraCleaned *temporary)
{
  g_autofree char *folder = g_path_get_dirname (tessera_cleaned_get_path (temporary));
  g_autofree char *sub = g_path_get_basename (folder);
  g_autofree char *shown = escape_name (tessera_cleaned_get_name (temporary), TRUE);

  g_print (_("%s: removed %s, a temporary file left in %s/\n"), resource, shown, sub);
}

/* Says which temporary files of killed writers that @cleaning saw in the
 * pool of resource @resource are gone now (@jobs_stale: see
 * tessera_pool_cleaning_list_gone_temporaries()); returns how many. */
static guint
say_gone_temporaries (const char *resource, TesseraPoolCleaning *cleaning, double jobs_stale)
{
  g_autoptr(GPtrArray) gone = tessera_pool_cleaning_list_gone_temporaries (cleaning, jobs_stale);

  for (guint i = 0; i < gone->len; i++)
    say_temporary_removed (resource, g_ptr_array_index (gone, i));
  return gone->len;
}

/* Says which temporary files of killed renewers older than @bound
 * seconds went from the lock folder @lock_folder's hosts/
 * (tessera_pool_clean_host_temporaries()); returns how many. */
static guint
clean_host_temporaries (const char *resource, const char *lock_folder, double bound)
{
  g_autoptr(GPtrArray) cleaned = tessera_pool_clean_host_temporaries (lock_folder, bound);

  for (guint i = 0; i < cleaned->len; i++)
    say_temporary_removed (resource, g_ptr_array_index (cleaned, i));
  return cleaned->len;
}

/* clean --host HOST [--yes] [NAME…]: the holdings whose process spec
 * names host HOST go (with --yes; without, they are only shown). */
static int
clean_host (TesseraConfig *config, const char *host, gboolean yes, int argc, char **argv)
{
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *shown_host = escape_name (host, TRUE);
  guint found = 0, left = 0;
  int status = 0;

  /* Ours are judged by their pid: a live one must never go this way. */
  if (g_str_equal (host, g_get_host_name ()))
    return fail (EXIT_USAGE, _("%s is this host: its holders are judged by their process (“tessera clean” "
                               "removes the dead ones); --host is for a retired host"), shown_host);
  if ((names = selected_names (config, argc, argv, &status)) == NULL)
    return status;
  /* Retiring a host is the pools' administrators': refused before
   * anything is removed. */
  for (guint i = 0; yes && i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *pool = tessera_config_dup_pool_folder (config, name);

      if (!may_administer (config, pool))
        return fail (EXIT_NOPERM, _("%s: only root or the owner of %s may remove a retired host's holdings"), name,
                     pool_owned_by (pool));
    }
  /* Without --yes, only look: opening a pool to change it would remove
   * its dead holders, whatever their host. */
  tessera_config_set_read_only (config, !yes);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *pool = tessera_config_dup_path (config, name);
      g_autoptr(TesseraPoolCleaning) cleaning = yes ? tessera_pool_cleaning_new (pool) : NULL;
      g_autoptr(GPtrArray) files = NULL;
      g_autoptr(GError) error = NULL;
      TesseraTrackedDynamicResource *resource = open_resource_full (config, name, FALSE, &status);

      if (resource == NULL)
        return status;
      if (!tessera_tracked_dynamic_resource_update (resource, &error))
        return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      files = tessera_tracked_dynamic_resource_list_lock_files (resource);
      for (guint j = 0; j < files->len; j++)
        {
          TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, j);
          TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
          g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
          g_autofree char *job = tessera_pool_part_dup_holder_name (base);
          g_autofree char *shown = escape_name (job, TRUE);

          if (process == NULL || g_strcmp0 (tessera_process_get_host (process), host) != 0)
            continue;
          found++;
          if (!yes)
            g_print (_("%s: would remove %s (host %s)\n"), name, shown, shown_host);
          else if (tessera_tracked_dynamic_resource_remove_holder (resource, job, &error))
            {
              g_autofree char *detail = g_strdup_printf ("tessera clean --host %s", host);

              tessera_tracked_dynamic_resource_audit (resource, "retire", lock_file, detail);
              g_print (_("%s: removed %s (host %s)\n"), name, shown, shown_host);
            }
          else if (!g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING))   /* gone meanwhile */
            status = fail (oserr_or (error, error->domain == G_IO_ERROR ? EXIT_IOERR : 1),
                           "%s", error->message);
          if (cleaning != NULL)
            tessera_pool_cleaning_forget_holder (cleaning, job);
          g_clear_error (&error);
        }
      if (yes)
        {
          /* What opening the pool removed as dead is said, as plain
           * clean says it. */
          found += say_gone_holders (name, cleaning);
          found += clean_host_heartbeats (name, pool, host, shown_host);
          found += clean_host_job_folders (name, pool, host, &left);
        }
    }
  /* Nothing of that host: perhaps a mistyped name. The pools' hosts/
   * say which other hosts they know (the status stays: 64 without
   * --yes, 0 with it, as a second clean of a retired host is). */
  if (found == 0 && left == 0)
    {
      g_autoptr(GHashTable) hosts = dup_known_hosts (config, names);

      if (g_hash_table_size (hosts) > 0 && !g_hash_table_contains (hosts, shown_host))
        {
          g_autofree char *known = join_host_names (hosts);
          /* Translators: the second %s lists host names, comma separated */
          g_autofree char *hint = g_strdup_printf (_("no holder and no mark of a host %s in these pools; the other "
                                                     "hosts they know: %s"), shown_host, known);

          if (!yes)
            return fail (EXIT_USAGE, "%s", hint);
          g_print ("%s\n", hint);
        }
    }
  if (!yes)
    return fail (EXIT_USAGE, "%s", found > 0 ? _("nothing removed: add --yes to remove them")
                                             : _("nothing to remove (and without --yes, nothing would be)"));
  if (found == 0 && left == 0)
    g_print ("%s\n", _("nothing to remove"));
  return status;
}

int
cmd_clean (int argc, char **argv)
{
  g_autofree char *min_age_text = NULL;
  double min_age = -1;
  gboolean force = FALSE;
  gboolean yes = FALSE;
  g_autofree char *host = NULL;
  const GOptionEntry entries[] = {
    { "min-age", 0, 0, G_OPTION_ARG_STRING, &min_age_text,
      N_("Remove holders without a process older than SECONDS (default: 30)"), N_("SECONDS") },
    { "force", 0, 0, G_OPTION_ARG_NONE, &force,
      N_("Remove the holders JOB… of resource NAME whatever their liveness (see the man page for the risk)"),
      NULL },
    { "host", 0, 0, G_OPTION_ARG_STRING, &host,
      N_("Remove the holdings of the retired host HOST (with --yes; without, show them)"), N_("HOST") },
    { "yes", 0, 0, G_OPTION_ARG_NONE, &yes, N_("Do remove what --host names"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…] | --force NAME JOB… | --host HOST --yes [NAME…]"),
                 _("Remove dead and orphaned holders now, saying what was removed."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  int status = 0;
  guint removed = 0, left = 0;

  if (!parse (context, &argc, &argv, &status) ||
      (min_age_text != NULL && !parse_seconds ("--min-age", min_age_text, FALSE, &min_age, &status)) ||
      (config = load_config (&status)) == NULL)
    return status;
  if (force && host != NULL)
    return fail (EXIT_USAGE, _("--force and --host go separately"));
  if (yes && host == NULL)
    return fail (EXIT_USAGE, _("--yes goes with --host"));
  if (force)
    return clean_force (config, argc, argv);
  if (host != NULL)
    return clean_host (config, host, yes, argc, argv);
  if ((names = selected_names (config, argc, argv, &status)) == NULL)
    return status;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *folder = tessera_config_dup_path (config, name);
      /* Opening a resource already removes what is dead: look before.
       * The temporaries of killed writers go too: the library sweeps
       * those of jobs/ older than min-age, and those of the writer's own
       * folder older than a minute. */
      g_autoptr(TesseraPoolCleaning) cleaning = tessera_pool_cleaning_new (folder);
      double open_min_age;
      g_autoptr(GError) error = NULL;
      TesseraTrackedDynamicResource *resource = NULL;

      if ((resource = open_resource_full (config, name, FALSE, &status)) == NULL)
        return status;
      /* Opening swept jobs/ with the configured min-age, the update with
       * --min-age. */
      open_min_age = tessera_tracked_dynamic_resource_get_min_age (resource);
      if (min_age >= 0)
        tessera_tracked_dynamic_resource_set_min_age (resource, min_age);
      if (!tessera_tracked_dynamic_resource_update (resource, &error))
        return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      removed += say_gone_holders (name, cleaning);
      left += say_left_holders (name, cleaning, resource);
      removed += say_gone_temporaries (name, cleaning,
                                       MIN (open_min_age, tessera_tracked_dynamic_resource_get_min_age (resource)));
      removed += clean_fence_strays (config, name, folder, &left);
      {
        /* The lease, else (a lock-less mount's marks) min-age. */
        double lease = 0;

        g_object_get (resource, "host-lease", &lease, NULL);
        removed += clean_host_temporaries (name, folder, lease > 0 ? lease
                                                       : tessera_tracked_dynamic_resource_get_min_age (resource));
      }
    }
  /* Job folders belong to no resource: cleaned when all are. */
  if (argc <= 1)
    removed += clean_job_folders (config);
  if (removed == 0 && left == 0)
    g_print ("%s\n", _("nothing to remove"));
  return 0;
}
