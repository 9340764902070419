/* tessera-init.c: `tessera init`: a pool's folders made, for one user
 * or shared with a group.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <string.h>
#include <sys/stat.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-options.h"
#include "tessera-output.h"
#include "tessera-tool.h"

/* Opens @fd's folder to group @gid: group-writable and setgid, whatever
 * the umask, so that what is created in it is the group's too; and
 * sticky, so that only an entry's owner (or root, or the folder's owner)
 * renames or deletes it. */
static gboolean
share_folder (int fd, const char *path, gid_t gid)
{
  int saved = tessera_pool_part_share_with_group (fd, gid, FALSE, TRUE);

  if (saved != 0)
    {
      fail (EXIT_IOERR, _("cannot open %s to its group: %s"), path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* Whether @folder is @pool or lies inside it. */
static gboolean
is_in_pool (const char *folder, const char *pool)
{
  return g_str_equal (folder, pool) ||
         (g_str_has_prefix (folder, pool) && folder[strlen (pool)] == G_DIR_SEPARATOR);
}

/* Refuses @path (as @st says it is), another user's part of the pool
 * (EXIT_NOPERM): its owner, a member, would own that part (rename others'
 * entries in a sticky folder, pass for the pool's owner). Ours or root's:
 * 0. This is init's rule, not the library's of whose parts a group's pool
 * believes (root's or the pool's owner's, as
 * tessera_folder_path_get_pool_owner() tells it): init makes every part
 * its runner's, so it refuses any other user's, the pool folder owner's
 * too when root runs it, and before the pool is a group's (when the
 * library's rule has no pool's owner yet). */
static int
refuse_anothers (const char *path, const struct stat *st)
{
  struct passwd *pw;
  g_autofree char *owner = NULL;

  if (st->st_uid == geteuid () || st->st_uid == 0)
    return 0;
  pw = getpwuid (st->st_uid);
  owner = pw != NULL ? g_strdup (pw->pw_name) : g_strdup_printf ("%u", (guint) st->st_uid);
  /* Translators: "/srv/pool/cpu belongs to mallory, not to the pool's owner: …" */
  return fail (EXIT_NOPERM, _("%s belongs to %s, not to the pool's owner: remove it or chown it, "
                              "then run init again"), path, owner);
}

/* Gives @fd (@path, for messages), when it is ours, to group @gid as a
 * pool shared from the start has it: a folder group-writable, setgid and,
 * when @sticky, sticky; a file group-readable, and group-writable only
 * when @writable (ipc.lock): no member rewrites another's. Root's (when
 * we are not root), or a file with other links, is left as it is.
 * Another user's is refused (EXIT_NOPERM): its owner, a member, would own
 * that part of the pool (rename others' entries in a sticky folder, pass
 * for the pool's owner). Returns 0, or the status of the failure (said). */
static int
share_existing (int fd, const char *path, gid_t gid, gboolean writable, gboolean sticky)
{
  struct stat st;
  int saved;

  if (fstat (fd, &st) < 0)
    return 0;
  if ((saved = refuse_anothers (path, &st)) != 0)
    return saved;
  saved = tessera_pool_part_share_with_group (fd, gid, writable, sticky);
  if (saved != 0)
    return fail (EXIT_IOERR, _("cannot open %s to its group: %s"), path, g_strerror (saved));
  return 0;
}

/* What share_resource() and refuse_members_parts() do to each folder on
 * the way down from the pool to a resource's. */
typedef struct {
  gid_t gid;
  int status;
} Step;

/* Gives @fd (@path) to the group, unless it is another user's (refused,
 * as share_existing() says). */
static gboolean
share_step (int fd, const char *path, gpointer user_data)
{
  Step *step = user_data;

  step->status = share_existing (fd, path, step->gid, TRUE, TRUE);
  return step->status == 0;
}

/* Refuses @fd (@path) when it is another user's, as refuse_anothers()
 * says. */
static gboolean
refuse_step (int fd, const char *path, gpointer user_data)
{
  Step *step = user_data;
  struct stat st;

  if (fstat (fd, &st) == 0)
    step->status = refuse_anothers (path, &st);
  return step->status == 0;
}

/* Gives the group @gid the resource in @folder as a pool shared from
 * the start has it: the folders from the pool's (@pool_fd, @pool) down
 * to it, then its parts, the folders made when missing, so that none is
 * left for a member's first run to make (and own). Each is reached from
 * its parent's descriptor, never through a link: a member of the group
 * may have planted one to have a file of ours handed over. Returns 0, or
 * the status of the failure (said). */
static int
share_resource (int pool_fd, const char *pool, const char *folder, gid_t gid)
{
  Step step = { gid, 0 };
  g_autoptr(GError) error = NULL;
  AUTO_FD int dir_fd = tessera_folder_path_open_below (pool_fd, pool, folder + strlen (pool), share_step, &step,
                                                       &error);
  int status = step.status;

  if (dir_fd < 0 && status == 0)
    return fail (EXIT_IOERR, "%s", error->message);
  /* The library's parts, then the side folders its type made there
   * (prepare_pool; the mutex's intents/): sticky, like the library's
   * folders. */
  g_auto(GStrv) sides = status == 0 ? tessera_pool_part_list_side_folders (dir_fd) : NULL;
  guint n_sides = sides != NULL ? g_strv_length (sides) : 0;

  for (guint i = 0; status == 0 && i < TESSERA_POOL_PART_LAST + n_sides; i++)
    {
      const char *name = i < TESSERA_POOL_PART_LAST ? tessera_pool_part_get_name (i)
                                                    : sides[i - TESSERA_POOL_PART_LAST];
      TesseraPoolPartFlags flags = i < TESSERA_POOL_PART_LAST
                                   ? tessera_pool_part_get_flags (i)
                                   : TESSERA_POOL_PART_FLAGS_FOLDER | TESSERA_POOL_PART_FLAGS_GROUP_WRITES |
                                       TESSERA_POOL_PART_FLAGS_STICKY;
      g_autofree char *part_path = g_build_filename (folder, name, NULL);
      AUTO_FD int fd = -1;

      if ((flags & TESSERA_POOL_PART_FLAGS_MADE_AHEAD) && mkdirat (dir_fd, name, 0770) < 0 && errno != EEXIST)
        {
          int saved = errno;
          return fail (EXIT_IOERR, _("cannot create the folder %s: %s"), part_path, g_strerror (saved));
        }
      fd = openat (dir_fd, name, (flags & TESSERA_POOL_PART_FLAGS_FOLDER)
                                   ? FOLDER_FLAGS : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      /* Not there yet, or a link or other planted thing: left alone (the
       * library refuses what it should not use). */
      if (fd >= 0)
        status = share_existing (fd, part_path, gid, (flags & TESSERA_POOL_PART_FLAGS_GROUP_WRITES) != 0,
                                 (flags & TESSERA_POOL_PART_FLAGS_STICKY) != 0);
    }
  return status;
}

/* Refuses, before the resource in @folder is opened (in a group's pool
 * the library believes no member's folder or informations.json, and
 * would only say so, 74), another user's folder on the way from the pool
 * (@pool, open as @pool_fd) to it, or its informations.json, as
 * share_resource() would (77). Returns 0, or the status said. */
static int
refuse_members_parts (int pool_fd, const char *pool, const char *folder)
{
  Step step = { 0, 0 };
  AUTO_FD int dir_fd = tessera_folder_path_open_below (pool_fd, pool, folder + strlen (pool), refuse_step, &step,
                                                       NULL);
  struct stat st;

  /* Refused on the way, or missing (the opening makes it) or not to be
   * opened there: left to the opening. */
  if (dir_fd < 0)
    return step.status;
  /* The files the library believes only when they are the pool
   * owner's (informations.json). */
  for (guint i = 0; i < TESSERA_POOL_PART_LAST; i++)
    if ((tessera_pool_part_get_flags (i) & TESSERA_POOL_PART_FLAGS_OWNERS) &&
        fstatat (dir_fd, tessera_pool_part_get_name (i), &st, AT_SYMLINK_NOFOLLOW) == 0)
      {
        g_autofree char *part_path = g_build_filename (folder, tessera_pool_part_get_name (i), NULL);
        int status = refuse_anothers (part_path, &st);

        if (status != 0)
          return status;
      }
  return 0;
}

/* Sets up one resource of the pool @pool (open as @pool_fd) as `run`
 * would (its folder, jobs/, ipc.lock, informations.json). In a pool
 * shared with group @share_gid (-1: not shared), every part a run makes
 * is made and given to the group too, owned by us (the pool's owner),
 * unless the resource has a mode= or group= of its own (opening it
 * applied those). */
static gboolean
init_resource (TesseraConfig *config, const char *name, int pool_fd, const char *pool, gint64 share_gid, int *status)
{
  TesseraTrackedDynamicResource *resource = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *location = NULL;
  g_autofree char *configured = tessera_config_dup_path (config, name);
  int shared;

  if (configured != NULL && share_gid >= 0 && !tessera_config_has_sharing (config, name))
    {
      g_autofree char *lexical = g_canonicalize_filename (configured, "/");

      if (is_in_pool (lexical, pool) && (*status = refuse_members_parts (pool_fd, pool, lexical)) != 0)
        return FALSE;
    }
  resource = open_resource (config, name, status);
  if (resource == NULL)
    return FALSE;
  /* Lexically: a ".." in the configured path must not lead out of the
   * pool. */
  folder = g_canonicalize_filename (tessera_tracked_dynamic_resource_get_lock_folder (resource), "/");
  /* What its type keeps there too (the mutex's intents/), made by us. */
  if (!tessera_tracked_dynamic_resource_prepare_pool (resource, &error))
    {
      *status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      return FALSE;
    }
  if (share_gid >= 0 && !tessera_config_has_sharing (config, name) && is_in_pool (folder, pool) &&
      (shared = share_resource (pool_fd, pool, folder, (gid_t) share_gid)) != 0)
    {
      /* Another user's part: nothing is said prepared. */
      if (shared == EXIT_NOPERM)
        {
          *status = shared;
          return FALSE;
        }
      *status = EXIT_IOERR;
    }
  /* Where the pool lives: its folder, or its key in another store. */
  location = tessera_tracked_dynamic_resource_dup_location (resource);
  /* Translators: "prepared cpu (countertoken) in /srv/pool/cpu" */
  g_print (_("prepared %s (%s) in %s\n"), name, tessera_config_get_type_name (config, name),
           location != NULL ? location : folder);
  return TRUE;
}

int
cmd_init (int argc, char **argv)
{
  g_autofree char *group = NULL;
  g_auto(GStrv) types = NULL;
  const GOptionEntry entries[] = {
    { "group", 'g', 0, G_OPTION_ARG_STRING, &group, N_("Share the pool with the users of GROUP"), N_("GROUP") },
    { "type", 't', 0, G_OPTION_ARG_STRING_ARRAY, &types,
      N_("Set up only the configured resources of type TYPE (again for more types)"), N_("TYPE") },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("PATH [--group GROUP] [--type TYPE…]"),
                 _("Prepare a pool folder: create it (with --group, the group's: group-writable and setgid, "
                   "whatever the umask) and set up each configured resource whose path lies in it."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *pool = NULL;
  g_autofree char *parent = NULL;
  struct stat parent_st, pool_st;
  struct group *gr = NULL;
  gid_t gid = 0;
  gint64 share_gid = -1;
  guint prepared = 0;
  int status = 0;
  AUTO_FD int fd = -1;
  AUTO_FD int parent_fd = -1;
  gboolean shared = TRUE;

  if (!parse (context, &argc, &argv, &status))
    return status;
  if (argc != 2)
    return fail (EXIT_USAGE, _("usage: tessera init PATH [--group GROUP] [--type TYPE…]"));
  if ((config = load_config (&status)) == NULL)
    return status;
  pool = g_canonicalize_filename (argv[1], NULL);
  for (guint i = 0; types != NULL && types[i] != NULL; i++)
    if (tessera_registry_lookup_resource_type (tessera_registry_get_default (), types[i], NULL) == G_TYPE_INVALID)
      return fail (EXIT_USAGE, _("no resource type “%s” (see “tessera plugins”)"), types[i]);
  if (group != NULL && (gr = getgrnam (group)) == NULL)
    return fail (EXIT_USAGE, _("no group named “%s”"), group);
  if (gr != NULL)
    gid = gr->gr_gid;   /* getgrnam's answer does not last */

  /* The pool's folder, and its group. */
  parent = g_path_get_dirname (pool);
  if (g_mkdir_with_parents (parent, 0777) < 0 || (mkdir (pool, 0777) < 0 && errno != EEXIST))
    {
      int saved = errno;
      return fail (EXIT_IOERR, _("cannot create the folder %s: %s"), pool, g_strerror (saved));
    }
  /* Never through a link: a co-user of a group's folder may have planted
   * the pool's name as one, to have a folder of ours handed to the group. */
  fd = open (pool, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    {
      int saved = errno;
      if (saved == ELOOP || saved == ENOTDIR)
        return fail (EXIT_IOERR, _("%s is not a folder (a link is never followed there)"), pool);
      return fail (EXIT_IOERR, _("cannot open the folder %s: %s"), pool, g_strerror (saved));
    }
  {
    struct stat st;

    if (fstat (fd, &st) < 0 || st.st_uid != geteuid ())
      return fail (EXIT_IOERR, _("%s belongs to another user: only its owner may prepare it"), pool);
  }
  /* Only looked at (as stat would, following a link): its mode and group. */
  parent_fd = open (parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (group != NULL)
    share_gid = gid;
  else if (parent_fd >= 0 && tessera_folder_path_get_sharing (parent_fd) != TESSERA_FOLDER_SHARING_NONE &&
           fstat (parent_fd, &parent_st) == 0)
    /* In a group-writable folder, the pool is that group's, as Tessera
     * makes everything it creates there. */
    share_gid = parent_st.st_gid;
  else if (tessera_folder_path_get_sharing (fd) != TESSERA_FOLDER_SHARING_NONE && fstat (fd, &pool_st) == 0)
    share_gid = pool_st.st_gid;   /* a pool shared before stays so */
  if (share_gid >= 0)
    shared = share_folder (fd, pool, (gid_t) share_gid);
  if (shared && share_gid >= 0)
    {
      /* runs/, made by an earlier run, as `run` makes it in a shared
       * pool: the group's and sticky. */
      const char *runs = tessera_pool_part_get_name (TESSERA_POOL_PART_RUNS);
      g_autofree char *runs_path = g_build_filename (pool, runs, NULL);
      AUTO_FD int runs_fd = openat (fd, runs, FOLDER_FLAGS);

      if (runs_fd >= 0 && (status = share_existing (runs_fd, runs_path, (gid_t) share_gid, TRUE, TRUE)) != 0)
        return status;
    }
  if (!shared)
    return EXIT_IOERR;

  /* Its resources, as `run` sets them up. */
  names = tessera_config_get_names (config);
  for (guint t = 0; t == 0 || (types != NULL && types[t] != NULL); t++)
    {
      guint of_type = 0;

      for (guint i = 0; i < names->len; i++)
        {
          const char *name = g_ptr_array_index (names, i);
          g_autofree char *folder = tessera_config_dup_path (config, name);

          if (folder == NULL || !is_in_pool (folder, pool) ||
              (types != NULL && !g_str_equal (types[t], tessera_config_get_type_name (config, name))))
            continue;
          /* Through the folder checked above: never the pool's name again,
           * which a member of the group may have swapped meanwhile. */
          if (!init_resource (config, name, fd, pool, share_gid, &status))
            return status;
          of_type++;
        }
      if (types != NULL && of_type == 0)
        return fail (EXIT_CONFIG, _("no resource of type “%s” is configured in %s (%s): give one a path there"),
                     types[t], pool, tessera_config_get_source (config) ? tessera_config_get_source (config)
                                                                        : _("the built-in configuration"));
      prepared += of_type;
    }
  if (prepared == 0)
    g_print (_("prepared %s; no configured resource lies in it (give each a path=%s/NAME)\n"), pool, pool);
  return status;
}
