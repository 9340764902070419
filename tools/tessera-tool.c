/* tessera-tool.c: the command's shared parts: failing with a status,
 * the log of the library's messages, the configuration, opening a
 * resource, options, and who may administer a pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <glib/gi18n-lib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera-config.h"
#include "tessera-folder-path-private.h"
#include "tessera-lock-wait.h"

#include "tessera-tool.h"

char *opt_config = NULL;
static char *opt_config_late = NULL;   /* --config after the subcommand */

int
fail (int status, const char *format, ...)
{
  g_autofree char *message = NULL;
  va_list ap;

  /* What was held back for this very failure comes first; out of
   * descriptors, what failed for want of them says nothing more. */
  if (status == EXIT_OSERR)
    release_log (FALSE);
  else
    end_deferred_log ();
  va_start (ap, format);
  message = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_printerr (_("tessera: %s\n"), message);
  return status;
}

/* After a usage error of the command line: where to look, on its own
 * line (never the whole usage). @command: "tessera" or "tessera run"… */
int
try_help (const char *command)
{
  g_printerr (_("Try “%s --help”.\n"), command);
  return EXIT_USAGE;
}

/* What the command prints, in the locale's character set. Without UTF-8
 * (cron, `su -`, LC_ALL=C), typographic quotes, dashes and the like that
 * it cannot show become their ASCII forms, not the '?' a conversion
 * leaves; anything else it cannot show still becomes a '?'. */
static char *
to_charset (const char *text, const char *charset)
{
  static const struct { gunichar c; const char *ascii; } plain[] = {
    { 0x201C, "\"" }, { 0x201D, "\"" }, { 0x201E, "\"" }, { 0x00AB, "\"" }, { 0x00BB, "\"" },
    { 0x2018, "'" }, { 0x2019, "'" }, { 0x2026, "..." }, { 0x00A0, " " }, { 0x202F, " " },
    { 0x2013, "-" }, { 0x2014, "-" },
  };
  g_autoptr(GString) out = g_string_new (NULL);
  char *converted;

  if (!g_utf8_validate (text, -1, NULL))
    return g_strdup (text);
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      gsize len = (gsize) (g_utf8_next_char (p) - p);
      const char *ascii = NULL;

      for (guint i = 0; c >= 0x80 && i < G_N_ELEMENTS (plain); i++)
        if (plain[i].c == c)
          ascii = plain[i].ascii;
      if (ascii != NULL)
        {
          g_autofree char *here = g_convert (p, (gssize) len, charset, "UTF-8", NULL, NULL, NULL);

          if (here == NULL)
            {
              g_string_append (out, ascii);
              continue;
            }
        }
      g_string_append_len (out, p, (gssize) len);
    }
  converted = g_convert_with_fallback (out->str, -1, charset, "UTF-8", "?", NULL, NULL, NULL);
  return converted != NULL ? converted : g_string_free (g_steal_pointer (&out), FALSE);
}

static void
print_to (FILE *stream, const char *text)
{
  const char *charset;

  if (g_get_charset (&charset))
    fputs (text, stream);
  else
    {
      g_autofree char *shown = to_charset (text, charset);

      fputs (shown, stream);
    }
  fflush (stream);
}

void
print_out (const char *text)
{
  print_to (stdout, text);
}

void
print_err (const char *text)
{
  print_to (stderr, text);
}

/* Lets the holdings go; what stays behind (a lock file that could not be
 * deleted) is said, and counts until its holder is judged dead. */
void
release_or_say (TesseraLock *lock)
{
  g_autoptr(GError) error = NULL;

  if (!tessera_lock_release (lock, &error))
    fail (0, "%s", error->message);
}

/* The library's warnings, shown as the command's own short lines, once
 * each (watch would repeat them); held back while a resource is opened, so
 * that a failed check's one message says it all. The library keeps its log
 * domain for embedders; errors and criticals (bugs) keep GLib's form. */
static GMutex log_lock;
static GHashTable *log_shown;     /* messages already printed */
static GPtrArray *log_held;       /* non-NULL: hold */
static gboolean log_deferred;     /* held past the opening (run), see defer_log() */


static void
show_log_message (const char *message)
{
  if (log_shown == NULL)
    log_shown = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  if (g_hash_table_add (log_shown, g_strdup (message)))
    {
      /* Library messages name files of the folder: never raw to a terminal. */
      g_autofree char *shown = escape_name (message, TRUE);
      g_printerr (_("tessera: %s\n"), shown);
    }
}

GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
  const char *domain = NULL, *message = NULL;

  for (gsize i = 0; i < n_fields; i++)
    if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
      domain = fields[i].value;
    else if (g_str_equal (fields[i].key, "MESSAGE"))
      message = fields[i].value;
  if (domain == NULL || message == NULL || !g_str_has_prefix (domain, "Tessera") ||
      !(level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE)))
    return g_log_writer_default (level, fields, n_fields, data);
  g_mutex_lock (&log_lock);
  /* Each look at a folder says what is wrong with it: once is enough. */
  if (log_held != NULL && !g_ptr_array_find_with_equal_func (log_held, message, g_str_equal, NULL))
    g_ptr_array_add (log_held, g_strdup (message));
  else if (log_held == NULL)
    show_log_message (message);
  g_mutex_unlock (&log_lock);
  return G_LOG_WRITER_HANDLED;
}

/* Returns a mark for drop_log_since(): what was held before. */
guint
hold_log (void)
{
  guint mark;

  g_mutex_lock (&log_lock);
  if (log_held == NULL)
    log_held = g_ptr_array_new_with_free_func (g_free);
  mark = log_held->len;
  g_mutex_unlock (&log_lock);
  return mark;
}

/* Drops what was held since @mark. */
static void
drop_log_since (guint mark)
{
  g_mutex_lock (&log_lock);
  if (log_held != NULL && log_held->len > mark)
    g_ptr_array_remove_range (log_held, mark, log_held->len - mark);
  g_mutex_unlock (&log_lock);
}

/* Drops held messages that say @message (an error about to be shown). */
void
drop_log_said_by (const char *message)
{
  g_mutex_lock (&log_lock);
  for (guint i = log_held != NULL ? log_held->len : 0; i > 0; i--)
    if (g_str_equal (g_ptr_array_index (log_held, i - 1), message))
      g_ptr_array_remove_index (log_held, i - 1);
  g_mutex_unlock (&log_lock);
}

static void
release_log_locked (gboolean show)
{
  for (guint i = 0; show && log_held != NULL && i < log_held->len; i++)
    show_log_message (g_ptr_array_index (log_held, i));
  g_clear_pointer (&log_held, g_ptr_array_unref);
  log_deferred = FALSE;
}

/* Shows (or drops) what was held, deferred or not. */
void
release_log (gboolean show)
{
  g_mutex_lock (&log_lock);
  release_log_locked (show);
  g_mutex_unlock (&log_lock);
}

/* A run holds what the opening of its resources says until its first
 * try: a folder that cannot be read is warned of at the opening, and the
 * try's error then says the same. */
void
defer_log (void)
{
  hold_log ();
  g_mutex_lock (&log_lock);
  log_deferred = TRUE;
  g_mutex_unlock (&log_lock);
}

/* Shows what was held, unless deferred. */
static void
release_log_unless_deferred (void)
{
  g_mutex_lock (&log_lock);
  if (!log_deferred)
    release_log_locked (TRUE);
  g_mutex_unlock (&log_lock);
}

/* Shows what was deferred, if anything (any failure before the first
 * try, on any thread). */
void
end_deferred_log (void)
{
  g_mutex_lock (&log_lock);
  if (log_deferred)
    release_log_locked (TRUE);
  g_mutex_unlock (&log_lock);
}

TesseraConfig *
load_config (int *status)
{
  g_autoptr(GError) error = NULL;
  TesseraConfig *config = tessera_config_load (opt_config, &error);

  if (config == NULL)
    *status = fail (EXIT_CONFIG, "%s", error->message);
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

/* Opens a resource; with @check, also checks its informations.json against
 * the configuration (not for `set`, which is how a broken one is fixed).
 * On failure, the message said is also in @why when given. */
gboolean lock_note_started;   /* or `run`, which says it itself */
/* `run`: what informations.json overrides is for status to say, not for
 * every job's log. */
gboolean quiet_notices;

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
      release_log (oserr_or (error, 0) != EXIT_OSERR);
      *status = fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION) ||
                      g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_UNSUPPORTED_PROTOCOL)
                      ? EXIT_CONFIG : oserr_or (error, EXIT_IOERR), "%s", error->message);
      if (why != NULL)
        *why = g_strdup (error->message);
      return NULL;
    }
  if (check && !tessera_config_check_informations (config, name, resource, &notice, &error))
    {
      /* This message says all this opening would have said. */
      drop_log_since (mark);
      release_log_unless_deferred ();
      *status = fail (is_io_error (error) ? oserr_or (error, EXIT_IOERR) : EXIT_CONFIG, "%s", error->message);
      if (why != NULL)
        *why = g_strdup (error->message);
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


/* Whether this user may administer the pool in @folder (a resource's
 * folder; NULL for a pool that lives elsewhere, whose store decides):
 * change its settings, force another user's holder out, retire a host.
 * Root and the pool's owner may, as the sticky bit lets them rename or
 * remove any entry there; anyone else may not (its caller says so in one
 * line, status 77). In a group's pool (the folder holding the resource's
 * is group-writable, and not everyone's as /tmp is), the pool's owner is
 * that folder's, the one `init --group` shared: a member may have made
 * the resource's folder (her first run, or before init), which makes her
 * no owner. Otherwise (a private pool) it is the resource folder's. A
 * folder that cannot be opened (not made yet) is left to the command. */
gboolean
may_administer (const char *folder)
{
  g_autofree char *parent = NULL;
  struct stat st;
  uid_t uid = geteuid ();
  int fd;
  gboolean may;

  if (uid == 0 || folder == NULL)
    return TRUE;
  parent = g_path_get_dirname (folder);
  if ((fd = _tessera_open_folder_path (parent, FALSE, NULL)) >= 0)
    {
      gboolean group_pool = fstat (fd, &st) == 0 && (st.st_mode & S_IWGRP) && !(st.st_mode & S_IWOTH);

      close (fd);
      if (group_pool)
        return st.st_uid == uid;
    }
  if ((fd = _tessera_open_folder_path (folder, FALSE, NULL)) < 0)
    return TRUE;
  may = fstat (fd, &st) < 0 || st.st_uid == uid;
  close (fd);
  return may;
}

/* Whether the entry of @job in @folder's jobs/ (never followed) is
 * another user's. */
gboolean
is_others_entry (const char *folder, const char *job)
{
  g_autofree char *file = g_strconcat (job, ".json", NULL);
  struct stat st;
  int fd, jobs_fd;
  gboolean others = FALSE;

  if (folder == NULL || strchr (job, '/') != NULL || (fd = _tessera_open_folder_path (folder, FALSE, NULL)) < 0)
    return FALSE;
  jobs_fd = openat (fd, "jobs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  close (fd);
  if (jobs_fd < 0)
    return FALSE;
  others = fstatat (jobs_fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != geteuid ();
  close (jobs_fd);
  return others;
}
