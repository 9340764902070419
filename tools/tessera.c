/* tessera.c: the `tessera` command — run a command holding resources,
 * and look after the pools.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <glib-unix.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include "tessera-build-id.h"
#include "tessera-config.h"
#include "tessera-config-values-private.h"
#include "tessera-fence.h"
#include "tessera-folder-path-private.h"
#include "tessera-lock-wait.h"
#include "tessera-temporary-name-private.h"

/* sysexits.h */
#define EXIT_USAGE 64
#define EXIT_NOHOST 68
#define EXIT_OSERR 71
#define EXIT_UNAVAILABLE 69
#define EXIT_IOERR 74
#define EXIT_TEMPFAIL 75
#define EXIT_NOPERM 77
#define EXIT_CONFIG 78

static char *opt_config = NULL;
static char *opt_config_late = NULL;   /* --config after the subcommand */

static int
fail (int status, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void end_deferred_log (void);
static void release_log (gboolean show);

static int
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
static int
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

static void
print_out (const char *text)
{
  print_to (stdout, text);
}

static void
print_err (const char *text)
{
  print_to (stderr, text);
}

/* Lets the holdings go; what stays behind (a lock file that could not be
 * deleted) is said, and counts until its holder is judged dead. */
static void
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

static char *escape_name (const char *name, gboolean for_terminal);

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

static GLogWriterOutput
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
static guint
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
static void
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
static void
release_log (gboolean show)
{
  g_mutex_lock (&log_lock);
  release_log_locked (show);
  g_mutex_unlock (&log_lock);
}

/* A run holds what the opening of its resources says until its first
 * try: a folder that cannot be read is warned of at the opening, and the
 * try's error then says the same. */
static void
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
static void
end_deferred_log (void)
{
  g_mutex_lock (&log_lock);
  if (log_deferred)
    release_log_locked (TRUE);
  g_mutex_unlock (&log_lock);
}

static TesseraConfig *
load_config (int *status)
{
  g_autoptr(GError) error = NULL;
  TesseraConfig *config = tessera_config_load (opt_config, &error);

  if (config == NULL)
    *status = fail (EXIT_CONFIG, "%s", error->message);
  return config;
}

static gboolean
is_io_error (const GError *error)
{
  return error->domain == G_IO_ERROR ||
         error->domain == G_FILE_ERROR;
}

/* @status, or 71 (EX_OSERR) when @error says that descriptors ran out:
 * the system's fault, not the user's nor the folder's; or 68 (EX_NOHOST)
 * when the pool's store (etcd) cannot be reached. */
static int
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
static gboolean lock_note_started;   /* or `run`, which says it itself */
/* `run`: what informations.json overrides is for status to say, not for
 * every job's log. */
static gboolean quiet_notices;

static TesseraTrackedDynamicResource *
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

static TesseraTrackedDynamicResource *
open_resource_full (TesseraConfig *config, const char *name, gboolean check, int *status)
{
  return open_resource_why (config, name, check, status, NULL);
}

static TesseraTrackedDynamicResource *
open_resource (TesseraConfig *config, const char *name, int *status)
{
  return open_resource_full (config, name, TRUE, status);
}

static GOptionContext *
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

static gboolean
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
static gboolean
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
static GPtrArray *
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

/* ---------------------------------------------------------------------- */
/* Describing a resource (status, watch, the waiting line) */

static const char *
holder_state_now (TesseraProcess *process)
{
  switch (tessera_process_check (process))
    {
    case TESSERA_PROCESS_ALIVE: return "alive";
    case TESSERA_PROCESS_DEAD: return "dead";
    case TESSERA_PROCESS_REMOTE: return "remote";
    default: return "unknown";
    }
}

/* Judged once per distinct process spec in one description (a verdict
 * follows from the spec, as Tessera writes it, alone): the many holders of one process (a
 * scheduler's tokens) cost one look at /proc, not one each. @verdicts:
 * spec text → state, owned. */
static const char *
holder_state (TesseraDynamicLockFile *lock_file, GHashTable *verdicts)
{
  TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
  g_autoptr(JsonNode) spec = NULL;
  g_autofree char *key = NULL;
  const char *state;

  if (process == NULL)
    return "unknown";
  spec = tessera_process_to_json (process);
  key = json_to_string (spec, FALSE);
  state = g_hash_table_lookup (verdicts, key);
  if (state == NULL)
    {
      state = holder_state_now (process);
      g_hash_table_insert (verdicts, g_steal_pointer (&key), (gpointer) state);
    }
  return state;
}

static char *
format_since (TesseraDynamicLockFile *lock_file)
{
  gint64 mtime = tessera_dynamic_lock_file_get_mtime (lock_file);
  g_autoptr(GDateTime) when = NULL;

  /* A holder counted from a file it could not read has no time: unknown,
   * never 1970. */
  if (mtime <= 0)
    return NULL;
  when = g_date_time_new_from_unix_utc (mtime / G_GINT64_CONSTANT (1000000000));
  return when ? g_date_time_format_iso8601 (when) : NULL;
}

/* Names and paths come from a folder a co-user may write: for JSON, bytes
 * that are not UTF-8 become the text \xNN (valid UTF-8 passes as is, and
 * JSON escapes control characters itself); for a terminal, control
 * characters too, and a backslash is doubled, so no name can move the
 * cursor, clear the screen or pass for another. */
static char *
escape_name (const char *name, gboolean for_terminal)
{
  GString *out = g_string_new (NULL);
  const char *p = name;

  while (*p != '\0')
    {
      gunichar c = g_utf8_get_char_validated (p, -1);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (out, "\\x%02X", (guchar) *p);
          p++;
          continue;
        }
      if (for_terminal && (c < 0x20 || (c >= 0x7f && c < 0xa0)))
        g_string_append_printf (out, "\\x%02X", c);
      else
        g_string_append_len (out, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (out, FALSE);
}

/* A lock file's name is `jobs/TASK@ID.json`; an etcd holder's key
 * `PREFIX/NAME/jobs/TASK@ID`. */
static char *
holder_name (TesseraDynamicLockFile *lock_file)
{
  g_autofree char *base = g_path_get_basename (tessera_dynamic_lock_file_get_path (lock_file));
  g_autofree char *name = g_str_has_suffix (base, ".json") ? g_strndup (base, strlen (base) - strlen (".json"))
                                                           : g_strdup (base);
  return escape_name (name, FALSE);
}

/* The name of @uid (NULL: none), looked up once per description: a
 * passwd lookup may read the whole of /etc/passwd, for each of thousands
 * of holders of a few users. @users: uid → name, owned. */
static const char *
user_name (GHashTable *users, uid_t uid)
{
  gpointer name;

  if (!g_hash_table_lookup_extended (users, GUINT_TO_POINTER (uid), NULL, &name))
    {
      struct passwd *pw = getpwuid (uid);
      name = pw != NULL ? g_strdup (pw->pw_name) : NULL;
      g_hash_table_insert (users, GUINT_TO_POINTER (uid), name);
    }
  return name;
}

/* Opens status --json's object for resource @name, up to its holders'
 * array, left open: @path (escaped here), @store and @usage (the type's
 * words in place of "N of M free") may be %NULL, JSON null. */
static void
begin_description (JsonBuilder *builder, TesseraConfig *config, const char *name, const char *path,
                   const char *store, gint64 capacity, gint64 free_units, const char *usage)
{
  g_autofree char *shown = path != NULL ? escape_name (path, FALSE) : NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, name);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, tessera_config_get_type_name (config, name));
  json_builder_set_member_name (builder, "path");
  if (shown != NULL)
    json_builder_add_string_value (builder, shown);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "store");
  if (store != NULL)
    json_builder_add_string_value (builder, store);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "capacity");
  json_builder_add_int_value (builder, capacity);
  json_builder_set_member_name (builder, "free");
  json_builder_add_int_value (builder, free_units);
  json_builder_set_member_name (builder, "usage");
  if (usage != NULL)
    json_builder_add_string_value (builder, usage);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "holders");
  json_builder_begin_array (builder);
}

/* {"name", "type", "path", "store", "capacity", "free", "holders": [...]}
 * ("path": where the pool lives, its key on etcd)
 * @fresh: just opened, so its view was brought up to date under ipc.lock
 * a moment ago: not read again (each holder's state is judged here). */
static JsonNode *
describe (TesseraConfig *config, const char *name, TesseraTrackedDynamicResource *resource, gboolean fresh,
          GError **unusable_out)
{
  g_autoptr(GError) unusable = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GPtrArray) files = NULL;
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GHashTable) verdicts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *location = tessera_tracked_dynamic_resource_dup_location (resource);
  g_autofree char *store = NULL;
  g_autofree char *usage = NULL;
  gint64 capacity = -1, free_units = -1;

  if (!fresh)
    tessera_tracked_dynamic_resource_update (resource, NULL);
  tessera_tracked_dynamic_resource_get_usage (resource, &capacity, &free_units);
  files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  /* A holder that no pid check here can judge (remote, or without a
   * process) is judged by its job lock, which the opening did not look
   * at: an update does, and says which cannot be judged at all. */
  for (guint i = 0; fresh && i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);

      if (tessera_dynamic_lock_file_get_process (lock_file) == NULL ||
          g_str_equal (holder_state (lock_file, verdicts), "remote"))
        {
          tessera_tracked_dynamic_resource_update (resource, NULL);
          tessera_tracked_dynamic_resource_get_usage (resource, &capacity, &free_units);
          g_ptr_array_unref (files);
          files = tessera_tracked_dynamic_resource_list_lock_files (resource);
          break;
        }
    }
  /* Holders it could not read may hold what looks free: a run would not
   * decide there. */
  if (!tessera_tracked_dynamic_resource_check_readable (resource, &unusable))
    free_units = -1;
  else
    usage = tessera_tracked_dynamic_resource_dup_usage_text (resource);

  g_object_get (resource, "store", &store, NULL);
  begin_description (builder, config, name, location != NULL ? location
                                            : tessera_tracked_dynamic_resource_get_lock_folder (resource),
                     store != NULL ? store : "folder", capacity, free_units, usage);
  for (guint i = 0; i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
      g_autofree char *job = holder_name (lock_file);
      g_autofree char *since = format_since (lock_file);
      /* Why its verdict was no verdict (a job lock it cannot open). */
      g_autofree char *doubt = tessera_dynamic_lock_file_dup_unknown_reason (lock_file);
      /* What tessera_dynamic_lock_file_to_json() would hold, without the
       * rest of the file it builds (once per holder). */
      JsonNode *information = TESSERA_DYNAMIC_LOCK_FILE_GET_CLASS (lock_file)->to_information (lock_file);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "job");
      json_builder_add_string_value (builder, job);
      json_builder_set_member_name (builder, "job_uri");
      /* None for an entry that is not even read (a FIFO in jobs/). */
      if (tessera_dynamic_lock_file_get_job_uri (lock_file) != NULL)
        {
          g_autofree char *job_uri = escape_name (tessera_dynamic_lock_file_get_job_uri (lock_file), FALSE);
          json_builder_add_string_value (builder, job_uri);
        }
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "pid");
      if (process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0)
        json_builder_add_int_value (builder, tessera_process_get_pid (process));
      else
        json_builder_add_null_value (builder);
      /* Another process type (experimaestro's Slurm jobs): its type and
       * its own id ("pid" in its spec: a job id), and why an unknown
       * holder is unknown. */
      json_builder_set_member_name (builder, "process_type");
      if (process)
        {
          g_autofree char *type = escape_name (tessera_process_get_process_type (process), FALSE);
          json_builder_add_string_value (builder, type);
        }
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "process_id");
      {
        JsonNode *spec = process ? tessera_process_get_spec (process) : NULL;
        JsonNode *id = spec && JSON_NODE_HOLDS_OBJECT (spec)
                       ? json_object_get_member (json_node_get_object (spec), "pid") : NULL;
        g_autofree char *text = NULL;

        if (id != NULL && JSON_NODE_HOLDS_VALUE (id) && json_node_get_value_type (id) == G_TYPE_STRING)
          text = escape_name (json_node_get_string (id), FALSE);
        else if (id != NULL && JSON_NODE_HOLDS_VALUE (id) && json_node_get_value_type (id) == G_TYPE_INT64)
          text = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (id));
        else if (process && g_strcmp0 (tessera_process_get_process_type (process), "local") == 0)
          text = g_strdup_printf ("%d", (int) tessera_process_get_pid (process));
        if (text != NULL)
          json_builder_add_string_value (builder, text);
        else
          json_builder_add_null_value (builder);
      }
      /* Why it holds everything (its file cannot be read), else why it
       * is unknown. */
      json_builder_set_member_name (builder, "reason");
      if (tessera_dynamic_lock_file_get_problem (lock_file) != NULL)
        {
          g_autofree char *problem = escape_name (tessera_dynamic_lock_file_get_problem (lock_file), FALSE);
          json_builder_add_string_value (builder, problem);
        }
      else if (process && tessera_process_get_problem (process) != NULL)
        json_builder_add_string_value (builder, tessera_process_get_problem (process));
      else if (doubt != NULL)
        {
          g_autofree char *shown = escape_name (doubt, FALSE);
          json_builder_add_string_value (builder, shown);
        }
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "host");
      if (process && tessera_process_get_host (process))
        {
          g_autofree char *host = escape_name (tessera_process_get_host (process), FALSE);
          json_builder_add_string_value (builder, host);
        }
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, doubt != NULL ? "unknown" : holder_state (lock_file, verdicts));
      /* Whose job it is, when the process spec says (Tessera records it). */
      json_builder_set_member_name (builder, "uid");
      if (process && tessera_process_get_uid (process) >= 0)
        json_builder_add_int_value (builder, tessera_process_get_uid (process));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "user");
      {
        const char *user = process && tessera_process_get_uid (process) >= 0
                           ? user_name (users, (uid_t) tessera_process_get_uid (process)) : NULL;
        if (user != NULL)
          json_builder_add_string_value (builder, user);
        else
          json_builder_add_null_value (builder);
      }
      json_builder_set_member_name (builder, "since");
      if (since != NULL)
        json_builder_add_string_value (builder, since);
      else
        json_builder_add_null_value (builder);
      /* Seconds its store lease has left (etcd), null without one. */
      json_builder_set_member_name (builder, "lease_ttl");
      {
        double left = tessera_tracked_dynamic_resource_get_holder_lease_left (resource, lock_file);

        if (left >= 0)
          json_builder_add_int_value (builder, (gint64) left);
        else
          json_builder_add_null_value (builder);
      }
      json_builder_set_member_name (builder, "information");
      json_builder_add_value (builder, information ? information : json_node_new (JSON_NODE_NULL));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  if (unusable != NULL)
    {
      g_autofree char *why = escape_name (unusable->message, FALSE);

      json_builder_set_member_name (builder, "error");
      json_builder_add_string_value (builder, why);
    }
  json_builder_end_object (builder);
  if (unusable_out != NULL)
    *unusable_out = g_steal_pointer (&unusable);
  return json_builder_get_root (builder);
}

/* What status --json says of resource @name when it cannot be opened:
 * nothing is known of it but why. */
static JsonNode *
describe_unreadable (TesseraConfig *config, const char *name, const char *why)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *path = tessera_config_dup_path (config, name);
  g_autofree char *shown_why = escape_name (why != NULL ? why : "", FALSE);

  begin_description (builder, config, name, path, NULL, -1, -1, NULL);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "error");
  json_builder_add_string_value (builder, shown_why);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static void
format_description (JsonNode *node, GString *out)
{
  JsonObject *object = json_node_get_object (node);
  JsonArray *holders = json_object_get_array_member (object, "holders");
  gint64 capacity = json_object_get_int_member (object, "capacity");
  const char *why = json_object_get_string_member_with_default (object, "error", NULL);

  if (why != NULL)
    {
      g_autofree char *why_text = escape_name (why, TRUE);

      /* Translators: "gpu (gpu): cannot be read: <why>" */
      g_string_append_printf (out, _("%s (%s): cannot be read: %s\n"), json_object_get_string_member (object, "name"),
                              json_object_get_string_member (object, "type"), why_text);
      return;
    }
  if (json_object_get_string_member_with_default (object, "usage", NULL) != NULL)
    {
      g_autofree char *usage_text = escape_name (json_object_get_string_member (object, "usage"), TRUE);

      g_string_append_printf (out, "%s (%s): %s\n", json_object_get_string_member (object, "name"),
                              json_object_get_string_member (object, "type"), usage_text);
    }
  else if (capacity >= 0)
    /* Translators: "cpu (countertoken): 6 of 8 free" */
    g_string_append_printf (out, _("%s (%s): %lld of %lld free\n"),
             json_object_get_string_member (object, "name"), json_object_get_string_member (object, "type"),
             (long long) json_object_get_int_member (object, "free"), (long long) capacity);
  else
    g_string_append_printf (out, "%s (%s)\n", json_object_get_string_member (object, "name"),
             json_object_get_string_member (object, "type"));
  if (json_array_get_length (holders) == 0)
    g_string_append_printf (out, "  %s\n", _("no holder"));
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);
      g_autofree char *info = json_to_string (json_object_get_member (h, "information"), FALSE);
      JsonNode *pid = json_object_get_member (h, "pid");
      g_autofree char *pid_text = JSON_NODE_HOLDS_NULL (pid) ? g_strdup ("?")
                                  : g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (pid));

      JsonNode *user = json_object_get_member (h, "user");
      JsonNode *uid = json_object_get_member (h, "uid");
      g_autofree char *user_text = user && !JSON_NODE_HOLDS_NULL (user) ? g_strdup (json_node_get_string (user))
                                   : uid && !JSON_NODE_HOLDS_NULL (uid)
                                   ? g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (uid))
                                   : g_strdup ("?");

      const char *host = json_object_get_string_member_with_default (h, "host", "?");
      g_autofree char *job_text = escape_name (json_object_get_string_member (h, "job"), TRUE);
      g_autofree char *host_text = escape_name (host ? host : "?", TRUE);
      g_autofree char *info_text = escape_name (info, TRUE);
      g_autofree char *user_safe = escape_name (user_text, TRUE);

      const char *type = json_object_get_string_member_with_default (h, "process_type", NULL);
      const char *id = json_object_get_string_member_with_default (h, "process_id", NULL);
      const char *reason = json_object_get_string_member_with_default (h, "reason", NULL);

      if (type != NULL && !g_str_equal (type, "local"))
        {
          g_autofree char *type_text = escape_name (type, TRUE);
          g_autofree char *id_text = escape_name (id != NULL ? id : "?", TRUE);

          /* Translators: job, user, process type (slurm…), its job id, state, time, details */
          g_string_append_printf (out, _("  %s  %s, %s job %s, %s, since %s  %s\n"),
                   job_text, user_safe, type_text, id_text,
                   json_object_get_string_member (h, "state"),
                   json_object_get_string_member_with_default (h, "since", "?"), info_text);
        }
      else
        /* Translators: job, user, pid, host, state (alive/dead/remote/unknown), time, details */
        g_string_append_printf (out, _("  %s  %s, pid %s on %s, %s, since %s  %s\n"),
                 job_text, user_safe, pid_text, host_text,
                 json_object_get_string_member (h, "state"),
                 json_object_get_string_member_with_default (h, "since", "?"), info_text);
      if (reason != NULL)
        {
          g_autofree char *reason_text = escape_name (reason, TRUE);
          /* Translators: why a holder is "unknown" */
          g_string_append_printf (out, _("    (%s)\n"), reason_text);
        }
      if (reason != NULL && g_strcmp0 (json_object_get_string_member (h, "state"), "unknown") == 0)
        {
          g_autofree char *name_text = escape_name (json_object_get_string_member (object, "name"), TRUE);

          /* Translators: the command that frees an "unknown" holder (resource, job) */
          g_string_append_printf (out, _("    it counts until it is surely gone; once it is: tessera clean --force %s %s\n"),
                                  name_text, job_text);
        }
      {
        JsonNode *ttl = json_object_get_member (h, "lease_ttl");

        if (ttl != NULL && !JSON_NODE_HOLDS_NULL (ttl))
          /* Translators: seconds the holder's etcd lease has left */
          g_string_append_printf (out, _("    lease: %lld s left\n"), (long long) json_node_get_int (ttl));
      }
    }
}

static void
print_description (JsonNode *node)
{
  g_autoptr(GString) out = g_string_new (NULL);

  format_description (node, out);
  g_print ("%s", out->str);
}

/* ---------------------------------------------------------------------- */
/* status */

static int
cmd_status (int argc, char **argv)
{
  gboolean as_json = FALSE;
  const GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &as_json, N_("Print JSON (see the man page for its fields)"), NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…]"), _("Show each resource's capacity, what is free, and its holders."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  int status = 0;

  if (!parse (context, &argc, &argv, &status) || (config = load_config (&status)) == NULL ||
      (names = selected_names (config, argc, argv, &status)) == NULL)
    return status;

  /* status only looks: it works on a read-only mount and on a pool it may
   * not change, and a resource it cannot read hides none of the others. */
  tessera_config_set_read_only (config, TRUE);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "resources");
  json_builder_begin_array (builder);
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
          continue;
        }
      node = describe (config, name, resource, TRUE, &unusable);
      /* Said in the view (cannot be read: …), and in the exit status. */
      if (unusable != NULL && status == 0)
        status = oserr_or (unusable, is_io_error (unusable) ? EXIT_IOERR : 1);
      if (as_json)
        json_builder_add_value (builder, g_steal_pointer (&node));
      else
        print_description (node);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  if (as_json)
    {
      g_autoptr(JsonNode) root = json_builder_get_root (builder);
      g_autofree char *text = json_to_string (root, TRUE);
      g_print ("%s\n", text);
    }
  return status;
}

/* ---------------------------------------------------------------------- */
/* set */

static JsonNode *
parse_value (const char *text)
{
  JsonNode *node = tessera_json_parse (text, -1, NULL);

  /* A bare word is a string, as a shell user means it. */
  if (node == NULL)
    {
      node = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (node, text);
    }
  return node;
}

/* @text, a value of the type's setting @pspec as the configuration file
 * gives it (a GPU pool's "0;1:16384"), in informations.json's form: the
 * member of that name in what the type writes for a new pool set up with
 * it, read by the type's own rules. %NULL with @error when the type
 * refuses it; %NULL alone when the type writes the setting as it is (a
 * total): then it is read as JSON. */
static JsonNode *
setting_as_informations (TesseraTrackedDynamicResource *resource, GParamSpec *pspec, const char *text,
                         GError **error)
{
  TesseraTrackedDynamicResourceClass *klass = TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (resource);
  g_autoptr(TesseraTrackedDynamicResource) setup = NULL;
  g_autoptr(JsonNode) informations = NULL;
  GValue value = G_VALUE_INIT;
  JsonNode *member;

  if (G_PARAM_SPEC_VALUE_TYPE (pspec) != G_TYPE_STRING || klass->initialize_informations == NULL)
    return NULL;
  if (!_tessera_config_value_from_string (pspec, text, &value, error))
    return NULL;
  /* Never opened: only its settings are looked at. */
  setup = TESSERA_TRACKED_DYNAMIC_RESOURCE (g_object_new_with_properties (G_OBJECT_TYPE (resource), 1,
                                                                          &pspec->name, &value));
  g_value_unset (&value);
  if (klass->check_settings != NULL && !klass->check_settings (setup, error))
    return NULL;
  informations = klass->initialize_informations (setup);
  if (informations == NULL || !JSON_NODE_HOLDS_OBJECT (informations))
    return NULL;
  member = json_object_get_member (json_node_get_object (informations), pspec->name);
  if (member == NULL || !(JSON_NODE_HOLDS_ARRAY (member) || JSON_NODE_HOLDS_OBJECT (member)))
    return NULL;
  return json_node_copy (member);
}

/* What `tessera set` may change: the members informations.json has, and
 * the settings the type itself declares (a counter token's total, a GPU
 * pool's devices) — not those of the base classes (folder, min-age…). */
static GPtrArray *
run_time_settings (TesseraTrackedDynamicResource *resource, JsonNode *informations)
{
  GPtrArray *settings = g_ptr_array_new_with_free_func (g_free);
  GObjectClass *klass = G_OBJECT_GET_CLASS (resource);
  g_autofree GParamSpec **pspecs = NULL;
  guint n_pspecs;

  if (informations != NULL && JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_autoptr(GList) members = json_object_get_members (json_node_get_object (informations));
      for (GList *l = members; l != NULL; l = l->next)
        if (!g_str_equal (l->data, "tessera_protocol"))   /* the pool's, not a setting */
          g_ptr_array_add (settings, g_strdup (l->data));
    }
  pspecs = g_object_class_list_properties (klass, &n_pspecs);
  for (guint i = 0; i < n_pspecs; i++)
    if (tessera_config_is_type_setting (pspecs[i]) &&
        !g_ptr_array_find_with_equal_func (settings, pspecs[i]->name, g_str_equal, NULL))
      g_ptr_array_add (settings, g_strdup (pspecs[i]->name));
  return settings;
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
static gboolean
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
static gboolean
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

static int
cmd_set (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (_("NAME KEY=VALUE…"),
                 _("Change a resource's run-time information (informations.json), e.g. “tessera set cpu total=16”. "
                   "Waiting processes see it at once."), NULL);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(JsonNode) informations = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autofree char *folder = NULL;
  TesseraTrackedDynamicResource *resource;
  JsonObject *object;
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  if (argc < 3)
    return fail (EXIT_USAGE, _("usage: tessera set NAME KEY=VALUE…"));
  if ((config = load_config (&status)) == NULL ||
      (resource = open_resource_full (config, argv[1], FALSE, &status)) == NULL)
    return status;
  folder = tessera_config_dup_path (config, argv[1]);
  if (!may_administer (folder))
    return fail (EXIT_NOPERM, _("%s: only root or the owner of %s may change its settings"), argv[1], folder);

  informations = tessera_tracked_dynamic_resource_read_informations (resource, NULL);
  if (informations == NULL || !JSON_NODE_HOLDS_OBJECT (informations))
    {
      g_clear_pointer (&informations, json_node_unref);
      informations = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (informations, json_object_new ());
    }
  object = json_node_get_object (informations);
  settings = run_time_settings (resource, informations);
  for (int i = 2; i < argc; i++)
    {
      g_auto(GStrv) kv = g_strsplit (argv[i], "=", 2);
      GParamSpec *pspec;
      JsonNode *node;

      if (kv[0] == NULL || kv[1] == NULL || *kv[0] == '\0')
        return fail (EXIT_USAGE, _("“%s” is not KEY=VALUE"), argv[i]);
      if (settings->len == 0)
        return fail (EXIT_USAGE, _("%s (%s) has no run-time settings"), argv[1],
                     tessera_config_get_type_name (config, argv[1]));
      if (!g_ptr_array_find_with_equal_func (settings, kv[0], g_str_equal, NULL))
        {
          g_autofree char *known = NULL;

          g_ptr_array_add (settings, NULL);
          known = g_strjoinv (", ", (char **) settings->pdata);
          return fail (EXIT_USAGE, _("%s has no setting “%s” (it has: %s)"), argv[1], kv[0], known);
        }
      node = parse_value (kv[1]);
      /* A setting also in the configuration file's syntax (devices=0;1). */
      pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (resource), kv[0]);
      if (pspec != NULL && tessera_config_is_type_setting (pspec) && !JSON_NODE_HOLDS_ARRAY (node) &&
          !JSON_NODE_HOLDS_OBJECT (node))
        {
          JsonNode *configured = setting_as_informations (resource, pspec, kv[1], &error);

          if (error != NULL)
            {
              json_node_unref (node);
              return fail (EXIT_USAGE, _("%s: %s (informations.json is unchanged)"), argv[1], error->message);
            }
          if (configured != NULL)
            {
              json_node_unref (node);
              node = configured;
            }
        }
      json_object_set_member (object, kv[0], node);
    }
  /* Never write what the pool could not be read with afterwards. */
  if (!tessera_config_check_informations_content (resource, informations, &error))
    return fail (EXIT_USAGE, _("%s: %s (informations.json is unchanged)"), argv[1], error->message);
  if (!tessera_tracked_dynamic_resource_write_informations (resource, informations, &error))
    return fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION) ? EXIT_USAGE
                 : oserr_or (error, EXIT_IOERR),
                 "%s", error->message);
  text = json_to_string (informations, FALSE);
  g_print ("%s: %s\n", argv[1], text);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* clean */

#define FOLDER_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* The lock file names in a resource's jobs/ folder, as the library
 * counts them (a link there is no holder; a FIFO holds everything); the
 * folder reached as the library reaches it (_tessera_open_folder_path). */
static GHashTable *
lock_file_names (const char *folder)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* None for a pool that lives elsewhere (etcd). */
  int folder_fd = folder != NULL ? _tessera_open_folder_path (folder, FALSE, NULL) : -1;
  int jobs_fd = folder_fd >= 0 ? openat (folder_fd, "jobs", FOLDER_FLAGS) : -1;
  DIR *dir = jobs_fd >= 0 ? fdopendir (jobs_fd) : NULL;
  struct dirent *entry;

  if (folder_fd >= 0)
    close (folder_fd);
  if (dir == NULL)
    {
      if (jobs_fd >= 0)
        close (jobs_fd);
      return names;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (g_str_has_suffix (entry->d_name, ".json") &&
          fstatat (jobs_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK (st.st_mode))
        g_hash_table_add (names, g_strndup (entry->d_name, strlen (entry->d_name) - strlen (".json")));
    }
  closedir (dir);
  return names;
}

/* Says which of the holders @before (lock_file_names() of @folder) of
 * resource @name are gone now; returns how many. */
static guint
report_gone_holders (const char *name, GHashTable *before, const char *folder)
{
  g_autoptr(GHashTable) after = lock_file_names (folder);
  GHashTableIter iter;
  gpointer job;
  guint gone = 0;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &job, NULL))
    if (!g_hash_table_contains (after, job))
      {
        g_autofree char *shown = escape_name (job, TRUE);

        g_print (_("%s: removed %s\n"), name, shown);
        gone++;
      }
  return gone;
}

/* Closes *@fd if it is open: `AUTO_FD int fd = …` ends with its scope. */
static void
close_if_open (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}
#define AUTO_FD __attribute__ ((cleanup (close_if_open)))

/* Says which of the holders @before (lock_file_names() of @folder) of
 * resource @name were judged gone by the update of @resource but are
 * left, their file another user's that we may not delete (a group pool's
 * sticky jobs/): one line each, naming the file and its owner. Returns
 * how many. */
static guint
report_left_holders (const char *name, GHashTable *before, const char *folder,
                     TesseraTrackedDynamicResource *resource)
{
  g_autoptr(GHashTable) after = lock_file_names (folder);
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (resource);
  g_autoptr(GHashTable) counted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) users = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  /* Reached as lock_file_names() reaches it, never through a link. */
  AUTO_FD int folder_fd = g_hash_table_size (after) > 0 ? _tessera_open_folder_path (folder, FALSE, NULL) : -1;
  AUTO_FD int jobs_fd = folder_fd >= 0 ? openat (folder_fd, "jobs", FOLDER_FLAGS) : -1;
  GHashTableIter iter;
  gpointer job;
  guint left = 0;

  for (guint i = 0; i < files->len; i++)
    {
      const char *path = tessera_dynamic_lock_file_get_path (g_ptr_array_index (files, i));
      g_autofree char *base = path != NULL ? g_path_get_basename (path) : NULL;

      if (base != NULL && g_str_has_suffix (base, ".json"))
        g_hash_table_add (counted, g_strndup (base, strlen (base) - strlen (".json")));
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &job, NULL))
    {
      g_autofree char *file = g_strconcat (job, ".json", NULL);
      g_autofree char *path = g_build_filename (folder, "jobs", file, NULL);
      g_autofree char *shown = NULL;
      g_autofree char *owner = NULL;
      struct stat st;

      if (!g_hash_table_contains (before, job) || g_hash_table_contains (counted, job) ||
          jobs_fd < 0 || fstatat (jobs_fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          st.st_uid == geteuid ())
        continue;
      owner = user_name (users, st.st_uid) != NULL ? g_strdup (user_name (users, st.st_uid))
                                                   : g_strdup_printf ("uid %u", (unsigned) st.st_uid);
      shown = escape_name (path, TRUE);
      g_print (_("%s: left %s, gone but %s's: its owner, root or the pool's owner may remove it\n"),
               name, shown, owner);
      left++;
    }
  return left;
}

/* The biggest locks.json a job folder's cleaning reads: one entry per
 * resource a job holds, a few hundred bytes each. */
#define LOCKS_JSON_MAX (1024 * 1024)

/* The folder @name in @dir_fd, never through a link, and only if it is
 * ours: in a group's runs/ a co-user may have put a link or a folder of
 * theirs there. -1 otherwise. */
static int
open_own_folder_at (int dir_fd, const char *name)
{
  struct stat st;
  int fd = openat (dir_fd, name, FOLDER_FLAGS);

  if (fd >= 0 && (fstat (fd, &st) < 0 || st.st_uid != geteuid ()))
    {
      close (fd);
      errno = EPERM;
      return -1;
    }
  return fd;
}

/* The text of the regular file @name in @dir_fd, never through a link,
 * never blocking on a FIFO, and only when it has at most @max bytes;
 * NULL otherwise. */
static char *
read_bounded_at (int dir_fd, const char *name, gsize max)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  g_autoptr(GString) text = NULL;
  struct stat st;
  char chunk[8192];

  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size < 0 || (gsize) st.st_size > max)
    {
      close (fd);
      return NULL;
    }
  text = g_string_sized_new ((gsize) st.st_size + 1);
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || text->len + (gsize) n > max)
        {
          close (fd);
          return NULL;
        }
      if (n == 0)
        break;
      g_string_append_len (text, chunk, n);
    }
  close (fd);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Whether @name is a job lock made under a temporary name
 * (NAME.lock.XXXXXX, six hex digits), held, then linked into place: one
 * left by a run killed in between is probed as a job lock. */
static gboolean
is_job_lock_temporary (const char *name)
{
  const char *dot = strrchr (name, '.');

  if (dot == NULL || strlen (dot + 1) != 6 || dot - name < 5 || strncmp (dot - 5, ".lock", 5) != 0)
    return FALSE;
  for (const char *c = dot + 1; *c != '\0'; c++)
    if (!g_ascii_isxdigit (*c))
      return FALSE;
  return TRUE;
}

/* Whether a job folder of `tessera run` (<state>/jobs/<identifier>),
 * opened as @job_fd, may go: its wrapper is gone (the job lock is free),
 * and its command too (no lock file that its locks.json names is left: a
 * peer removes them once the command has ended). Only Tessera's own file
 * names are in it, regular files all; their names go to @files. */
static gboolean
job_folder_is_done (int job_fd, GPtrArray *files)
{
  int fd = dup (job_fd);
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  gboolean done = TRUE;
  struct dirent *entry;

  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  while (done && (entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      struct stat st;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if (fstatat (job_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
        done = FALSE;
      else if (g_str_has_suffix (name, ".lock") || is_job_lock_temporary (name))
        {
          struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
          int lock_fd = openat (job_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

          done = lock_fd >= 0 && fcntl (lock_fd, F_OFD_GETLK, &lock) == 0 && lock.l_type == F_UNLCK;
          if (lock_fd >= 0)
            close (lock_fd);
        }
      else if (g_str_equal (name, "locks.json"))
        {
          g_autofree char *text = read_bounded_at (job_fd, name, LOCKS_JSON_MAX);
          g_autoptr(JsonNode) root = NULL;
          JsonArray *locks;

          if (text == NULL || (root = tessera_json_parse (text, -1, NULL)) == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
              (locks = json_object_get_array_member (json_node_get_object (root), "dynamic_locks")) == NULL)
            done = FALSE;
          for (guint i = 0; done && i < json_array_get_length (locks); i++)
            {
              JsonNode *element = json_array_get_element (locks, i);
              const char *lock_file = JSON_NODE_HOLDS_OBJECT (element)
                ? json_object_get_string_member_with_default (json_node_get_object (element), "lock_file_path", NULL)
                : NULL;
              GStatBuf lock_st;

              /* Only looked at, never opened: a path read from a file. */
              if (lock_file == NULL || g_lstat (lock_file, &lock_st) == 0 || errno != ENOENT)
                done = FALSE;
            }
        }
      else if (!g_str_has_suffix (name, ".pid"))
        done = FALSE;
      if (done)
        g_ptr_array_add (files, g_strdup (name));
    }
  closedir (dir);
  return done;
}

/* Where `tessera run` keeps its job folders: POOL/runs/UID, ours, in the
 * pool, so that every judge of the pool (in a container with its own
 * state folder, on another host) can probe the job lock of a holder it
 * cannot judge by its pid. In a pool shared with a group (a
 * group-writable folder) it is readable by the pool's group, and runs/
 * is the group's and sticky: each user makes a folder there, none
 * removes another's. NULL when that folder cannot be had safely (a
 * co-user's link or folder in its place) or at all (a pool we may not
 * write): the job folder then stays in the user's state folder and such
 * holders count until they are surely dead. Never follows a link. */
static char *
dup_runs_folder (const char *pool, int *own_fd_out)
{
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  struct stat st;
  AUTO_FD int pool_fd = _tessera_open_folder_path (pool, FALSE, NULL);
  AUTO_FD int runs_fd = -1;
  AUTO_FD int own_fd = -1;
  gboolean shared;

  if (pool_fd < 0 || fstat (pool_fd, &st) < 0)
    return NULL;
  shared = (st.st_mode & S_IWGRP) != 0;
  if (mkdirat (pool_fd, "runs", shared ? 0770 : 0755) == 0 &&
      (runs_fd = openat (pool_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0 && shared)
    fchmod (runs_fd, S_ISVTX | S_ISGID | 0770);
  if (runs_fd < 0)
    runs_fd = openat (pool_fd, "runs", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (runs_fd < 0 || (mkdirat (runs_fd, uid, 0750) < 0 && errno != EEXIST))
    return NULL;
  own_fd = open_own_folder_at (runs_fd, uid);
  if (own_fd < 0 || (shared && fchmod (own_fd, S_ISGID | 0750) < 0))
    return NULL;
  *own_fd_out = g_steal_fd (&own_fd);
  return g_build_filename (pool, "runs", uid, NULL);
}

/* Removes the job folders in @jobs_fd (@jobs, for messages) that
 * `tessera run` left (a wrapper killed by SIGKILL cannot clean up), once
 * their jobs are done. @jobs_fd is a folder of ours: no one else can
 * swap a name in it, and every name is removed through it. */
static guint
clean_job_folders_in (int jobs_fd, const char *jobs)
{
  int fd = jobs_fd >= 0 ? dup (jobs_fd) : -1;
  DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
  struct dirent *entry;
  guint removed = 0;

  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      return 0;
    }
  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
      int job_fd;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if ((job_fd = open_own_folder_at (jobs_fd, name)) < 0)
        continue;
      if (job_folder_is_done (job_fd, files))
        {
          for (guint i = 0; i < files->len; i++)
            unlinkat (job_fd, g_ptr_array_index (files, i), 0);
          if (unlinkat (jobs_fd, name, AT_REMOVEDIR) == 0)
            {
              g_autofree char *folder = g_build_filename (jobs, name, NULL);
              g_autofree char *shown = escape_name (folder, TRUE);

              g_print (_("removed the job folder %s\n"), shown);
              removed++;
            }
        }
      close (job_fd);
    }
  closedir (dir);
  return removed;
}

/* The state folder's jobs/, and runs/UID in every configured pool (the
 * pool's folder as `tessera run` reaches it, _tessera_open_folder_path): each
 * reached from its parent without following a link, and only if ours. */
static guint
clean_job_folders (TesseraConfig *config)
{
  g_autofree char *state = tessera_config_dup_state_dir ();
  g_autofree char *jobs = g_build_filename (state, "jobs", NULL);
  g_autofree char *uid = g_strdup_printf ("%u", (guint) geteuid ());
  g_autoptr(GPtrArray) names = tessera_config_get_names (config);
  /* The state folder is the user's own: opened as given, links too. */
  AUTO_FD int state_fd = open (state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  AUTO_FD int jobs_fd = state_fd >= 0 ? open_own_folder_at (state_fd, "jobs") : -1;
  guint removed = clean_job_folders_in (jobs_fd, jobs);

  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *pool = tessera_config_dup_path (config, g_ptr_array_index (names, i));
      g_autofree char *runs = g_build_filename (pool, "runs", uid, NULL);
      AUTO_FD int pool_fd = pool != NULL ? _tessera_open_folder_path (pool, FALSE, NULL) : -1;
      AUTO_FD int runs_fd = pool_fd >= 0 ? openat (pool_fd, "runs", FOLDER_FLAGS) : -1;
      AUTO_FD int own_fd = runs_fd >= 0 ? open_own_folder_at (runs_fd, uid) : -1;

      removed += clean_job_folders_in (own_fd, runs);
    }
  return removed;
}

/* clean --force NAME JOB…: the named holders go, whatever their
 * liveness. */
static int
clean_force (TesseraConfig *config, int argc, char **argv)
{
  const char *name = argv[1];
  g_autofree char *folder = NULL;
  g_autoptr(GHashTable) before = NULL;
  TesseraTrackedDynamicResource *resource;
  int status = 0;

  if (argc < 3)
    return fail (EXIT_USAGE, _("usage: tessera clean --force NAME JOB…"));
  if (!tessera_config_has (config, name))
    return fail (EXIT_USAGE, _("no resource named “%s” (see “tessera status”)"), name);
  /* Opening a resource already removes what is dead: look before. */
  folder = tessera_config_dup_path (config, name);
  before = lock_file_names (folder);
  resource = open_resource_full (config, name, FALSE, &status);
  if (resource == NULL)
    return status;
  for (int i = 2; i < argc; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *shown = escape_name (argv[i], TRUE);

      if (is_others_entry (folder, argv[i]) && !may_administer (folder))
        status = fail (EXIT_NOPERM, _("%s: %s is another user's: only its owner, root or the owner of %s may force it out"),
                       name, shown, folder);
      else if (tessera_tracked_dynamic_resource_remove_holder (resource, argv[i], &error))
        g_print (_("%s: removed %s (forced)\n"), name, shown);
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING) &&
               g_hash_table_contains (before, argv[i]))
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

/* The biggest heartbeat in a pool's hosts/ (as the core reads them). */
#define HEARTBEAT_MAX 4096

/* Whether @text is a host id: 32 lowercase hex digits. */
static gboolean
is_host_id (const char *text, gsize length)
{
  if (length != 32)
    return FALSE;
  for (gsize i = 0; i < length; i++)
    if (!g_ascii_isxdigit (text[i]) || g_ascii_isupper (text[i]))
      return FALSE;
  return TRUE;
}

/* The host name that the heartbeat @name in @hosts_fd (or a temporary
 * one written whole) gives; NULL when it gives none. */
static char *
heartbeat_host_at (int hosts_fd, const char *name)
{
  g_autofree char *text = read_bounded_at (hosts_fd, name, HEARTBEAT_MAX);
  g_autoptr(JsonNode) root = text != NULL ? tessera_json_parse (text, -1, NULL) : NULL;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return g_strdup (json_object_get_string_member_with_default (json_node_get_object (root), "host", NULL));
}

/* Removes, in the pool @pool's hosts/, the heartbeat `HOSTID.lease` and
 * the lock-less mount's mark `HOSTID.host` of the retired host @host, and
 * the temporary files `HOSTID.lease.XXXXXX` that its renewers left (one
 * killed half-way through a renewal), never through a link. A temporary
 * file of another host is left to that host (it may be renewing now). */
static void
clean_host_heartbeats (const char *resource, const char *pool, const char *host, const char *shown_host)
{
  g_autoptr(GHashTable) ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int pool_fd = _tessera_open_folder_path (pool, FALSE, NULL);
  int hosts_fd = pool_fd >= 0 ? openat (pool_fd, "hosts", FOLDER_FLAGS) : -1;
  int fd;
  DIR *dir;
  struct dirent *entry;

  if (pool_fd >= 0)
    close (pool_fd);
  if (hosts_fd < 0)
    return;
  fd = dup (hosts_fd);
  dir = fd >= 0 ? fdopendir (fd) : NULL;
  if (dir == NULL)
    {
      if (fd >= 0)
        close (fd);
      close (hosts_fd);
      return;
    }
  for (int pass = 0; pass < 2; pass++)
    {
      rewinddir (dir);
      while ((entry = readdir (dir)) != NULL)
        {
          const char *name = entry->d_name;
          const char *suffix = strchr (name, '.');
          const char *kind = suffix == NULL ? NULL
                             : g_str_has_prefix (suffix, ".lease") ? ".lease"
                             : g_str_has_prefix (suffix, ".host") ? ".host" : NULL;
          g_autofree char *named = NULL;
          g_autofree char *id = NULL;
          struct stat st;

          if (kind == NULL || !is_host_id (name, (gsize) (suffix - name)) ||
              fstatat (hosts_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
            continue;
          id = g_strndup (name, (gsize) (suffix - name));
          /* First the heartbeats and the marks of a lock-less mount's
           * hosts, which name their host... */
          if (pass == 0 && g_str_equal (suffix, kind))
            {
              named = heartbeat_host_at (hosts_fd, name);
              if (g_strcmp0 (named, host) == 0 && unlinkat (hosts_fd, name, 0) == 0)
                {
                  g_print (g_str_equal (kind, ".lease") ? _("%s: removed the heartbeat of host %s\n")
                                                        : _("%s: removed the mark of host %s\n"),
                           resource, shown_host);
                  g_hash_table_add (ids, g_steal_pointer (&id));
                }
            }
          /* ...then the temporary files of those hosts, or that name it. */
          else if (pass == 1 && suffix[strlen (kind)] == '.' &&
                   (g_hash_table_contains (ids, id) ||
                    g_strcmp0 ((named = heartbeat_host_at (hosts_fd, name)), host) == 0))
            unlinkat (hosts_fd, name, 0);
        }
    }
  closedir (dir);
  close (hosts_fd);
}

/* Whether @name is the temporary file of a heartbeat or of a mark
 * (HOSTID.lease.XXXXXX, HOSTID.host.XXXXXX). */
static gboolean
is_host_temporary (const char *name)
{
  const char *dot = strchr (name, '.');
  const char *rest = dot == NULL ? NULL
                     : g_str_has_prefix (dot, ".lease.") ? dot + strlen (".lease")
                     : g_str_has_prefix (dot, ".host.") ? dot + strlen (".host") : NULL;

  if (rest == NULL || strlen (rest) != 7 || !is_host_id (name, (gsize) (dot - name)))
    return FALSE;
  for (const char *p = rest + 1; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p))
      return FALSE;
  return TRUE;
}

/* A live writer's temporary lasts microseconds: one younger than this
 * when listed that is gone after was renamed into place, whatever
 * --min-age says. */
#define LIVE_TMP_S 1.0

/* The temporaries of one folder of a pool as `clean` found them before
 * its update: the folder (kept open, so one renamed away meanwhile is
 * still the one looked at after), each name with its age then. */
typedef struct
{
  int fd;
  GHashTable *ages;
  gint64 listed_us;
} Temporaries;

static void
temporaries_clear (Temporaries *t)
{
  if (t->fd >= 0)
    close (t->fd);
  t->fd = -1;
  g_clear_pointer (&t->ages, g_hash_table_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Temporaries, temporaries_clear)

/* Lists into @t the temporaries of the subfolder @sub of the pool @pool
 * (the configured path followed as the library follows it, see
 * _tessera_open_folder_path(), @sub never
 * through a link); @own: the writer's own folder, looked at only when it
 * is ours and closed to others, as the library requires. */
static void
list_temporaries (Temporaries *t, const char *pool, const char *sub, gboolean own)
{
  AUTO_FD int pool_fd = _tessera_open_folder_path (pool, FALSE, NULL);
  int fd = pool_fd >= 0 ? openat (pool_fd, sub, FOLDER_FLAGS) : -1;
  int list_fd;
  DIR *dir;
  gint64 now_ns = g_get_real_time () * 1000;
  struct dirent *entry;
  struct stat st;

  t->fd = -1;
  t->ages = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  t->listed_us = g_get_monotonic_time ();
  if (fd < 0 || (own && (fstat (fd, &st) < 0 || st.st_uid != geteuid () || (st.st_mode & 077) != 0)))
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  t->fd = fd;
  list_fd = dup (fd);
  dir = list_fd >= 0 ? fdopendir (list_fd) : NULL;
  if (dir == NULL && list_fd >= 0)
    close (list_fd);
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    /* As the library's sweeps tell them (in the writer's own folder, only
     * a holder's). */
    if ((own ? _tessera_is_lock_file_temporary_name (entry->d_name) : _tessera_is_temporary_name (entry->d_name)) &&
        fstatat (fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
      {
        double *age = g_new (double, 1);

        *age = (double) (now_ns - ((gint64) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec)) / 1e9;
        g_hash_table_insert (t->ages, g_strdup (entry->d_name), age);
      }
  if (dir != NULL)
    closedir (dir);
}

/* Says which temporaries of @t (the folder @sub) are gone that had
 * reached @stale seconds by now: a killed writer's, which the library's
 * sweep removed. Returns how many. */
static guint
report_gone_temporaries (const char *resource, const char *sub, Temporaries *t, double stale)
{
  double since = (double) (g_get_monotonic_time () - t->listed_us) / G_USEC_PER_SEC;
  GHashTableIter iter;
  gpointer name, age;
  guint gone = 0;

  if (t->fd < 0)
    return 0;
  g_hash_table_iter_init (&iter, t->ages);
  while (g_hash_table_iter_next (&iter, &name, &age))
    {
      g_autofree char *shown = NULL;
      struct stat st;

      if (*(double *) age < LIVE_TMP_S || *(double *) age + since < stale ||
          fstatat (t->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
        continue;
      shown = escape_name (name, TRUE);
      g_print (_("%s: removed %s, a temporary file left in %s/\n"), resource, shown, sub);
      gone++;
    }
  return gone;
}

/* Removes from the pool @pool's hosts/ the temporary files of any host
 * (renewers killed half-way) older than @bound seconds. Their age is read
 * on the file server's clock, never ours: against the time stamp of a
 * file made there now. A writer still busy with one after a whole lease
 * has lost its lease anyway. Returns how many went. */
static guint
clean_host_temporaries (const char *resource, const char *pool, double bound)
{
  int pool_fd = _tessera_open_folder_path (pool, FALSE, NULL);
  int hosts_fd = pool_fd >= 0 ? openat (pool_fd, "hosts", FOLDER_FLAGS) : -1;
  char clock_name[] = ".tessera-clock.XXXXXX";
  struct timespec now = { 0 };
  struct dirent *entry;
  struct stat st;
  guint removed = 0;
  DIR *dir = NULL;
  int fd = -1;

  if (pool_fd >= 0)
    close (pool_fd);
  if (hosts_fd < 0)
    return 0;
  for (int attempt = 0; fd < 0 && attempt < 10; attempt++)
    {
      for (char *p = clock_name + strlen (".tessera-clock."); *p != '\0'; p++)
        *p = "abcdefghijklmnopqrstuvwxyz0123456789"[g_random_int_range (0, 36)];
      fd = openat (hosts_fd, clock_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
  if (fd >= 0)
    {
      if (fstat (fd, &st) == 0)
        now = st.st_mtim;
      close (fd);
      unlinkat (hosts_fd, clock_name, 0);
      fd = dup (hosts_fd);
      dir = fd >= 0 && now.tv_sec != 0 ? fdopendir (fd) : NULL;
      if (dir == NULL && fd >= 0)
        close (fd);
    }
  while (dir != NULL && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *shown = NULL;

      if (!is_host_temporary (entry->d_name) ||
          fstatat (hosts_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode) ||
          (double) (now.tv_sec - st.st_mtim.tv_sec) + (double) (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9 < bound ||
          unlinkat (hosts_fd, entry->d_name, 0) < 0)
        continue;
      shown = escape_name (entry->d_name, TRUE);
      g_print (_("%s: removed %s, a temporary file left in %s/\n"), resource, shown, "hosts");
      removed++;
    }
  if (dir != NULL)
    closedir (dir);
  close (hosts_fd);
  return removed;
}

/* clean --host HOST [--yes] [NAME…]: the holdings whose process spec
 * names host HOST go (with --yes; without, they are only shown). */
static int
clean_host (TesseraConfig *config, const char *host, gboolean yes, int argc, char **argv)
{
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *shown_host = escape_name (host, TRUE);
  guint found = 0;
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
      g_autofree char *pool = tessera_config_dup_path (config, name);

      if (!may_administer (pool))
        return fail (EXIT_NOPERM, _("%s: only root or the owner of %s may remove a retired host's holdings"), name, pool);
    }
  /* Without --yes, only look: opening a pool to change it would remove
   * its dead holders, whatever their host. */
  tessera_config_set_read_only (config, !yes);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *pool = tessera_config_dup_path (config, name);
      g_autoptr(GHashTable) before = yes ? lock_file_names (pool) : NULL;
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
          g_autofree char *job = g_strndup (base, strlen (base) - strlen (".json"));
          g_autofree char *shown = escape_name (job, TRUE);

          if (process == NULL || g_strcmp0 (tessera_process_get_host (process), host) != 0)
            continue;
          found++;
          if (!yes)
            g_print (_("%s: would remove %s (host %s)\n"), name, shown, shown_host);
          else if (tessera_tracked_dynamic_resource_remove_holder (resource, job, &error))
            g_print (_("%s: removed %s (host %s)\n"), name, shown, shown_host);
          else if (!g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_LOCK_FILE_MISSING))   /* gone meanwhile */
            status = fail (oserr_or (error, error->domain == G_IO_ERROR ? EXIT_IOERR : 1),
                           "%s", error->message);
          if (before != NULL)
            g_hash_table_remove (before, job);
          g_clear_error (&error);
        }
      if (yes)
        {
          /* What opening the pool removed as dead is said, as plain
           * clean says it. */
          found += report_gone_holders (name, before, pool);
          clean_host_heartbeats (name, pool, host, shown_host);
        }
    }
  if (!yes)
    return fail (EXIT_USAGE, "%s", found > 0 ? _("nothing removed: add --yes to remove them")
                                             : _("nothing to remove (and without --yes, nothing would be)"));
  if (found == 0)
    g_print ("%s\n", _("nothing to remove"));
  return status;
}

static int
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
      g_autoptr(GHashTable) before = lock_file_names (folder);
      g_autofree char *own_tmp = g_strdup_printf (".tessera-tmp-%u", (unsigned) geteuid ());
      g_auto(Temporaries) jobs_tmp = { -1, NULL, 0 };
      g_auto(Temporaries) writer_tmp = { -1, NULL, 0 };
      double open_min_age;
      g_autoptr(GError) error = NULL;
      TesseraTrackedDynamicResource *resource = NULL;

      list_temporaries (&jobs_tmp, folder, "jobs", FALSE);
      list_temporaries (&writer_tmp, folder, own_tmp, TRUE);
      if ((resource = open_resource_full (config, name, FALSE, &status)) == NULL)
        return status;
      /* Opening swept jobs/ with the configured min-age, the update with
       * --min-age. */
      open_min_age = tessera_tracked_dynamic_resource_get_min_age (resource);
      if (min_age >= 0)
        tessera_tracked_dynamic_resource_set_min_age (resource, min_age);
      if (!tessera_tracked_dynamic_resource_update (resource, &error))
        return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      removed += report_gone_holders (name, before, folder);
      left += report_left_holders (name, before, folder, resource);
      removed += report_gone_temporaries (name, "jobs", &jobs_tmp,
                                          MIN (open_min_age, tessera_tracked_dynamic_resource_get_min_age (resource)));
      removed += report_gone_temporaries (name, own_tmp, &writer_tmp, _TESSERA_WRITER_TMP_STALE_S);
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

/* ---------------------------------------------------------------------- */
/* watch */

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

static int
cmd_watch (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (_("[NAME…]"), _("Show the resources, again after every change, until interrupted."), NULL);
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

      for (guint i = 0; i < names->len; i++)
        {
          const char *name = g_ptr_array_index (names, i);
          const char *why = g_hash_table_lookup (unreadable, name);
          g_autoptr(JsonNode) node = NULL;

          node = why != NULL ? describe_unreadable (config, name, why)
                             : describe (config, name, tessera_config_open (config, name, NULL), FALSE, NULL);
          format_description (node, view);
        }
      /* Redrawn when it changed only: polls and wake-ups that find nothing
       * new leave the screen as it is. */
      if (shown == NULL || !g_str_equal (shown->str, view->str))
        {
          /* UTC, as a holder's "since". */
          g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
          g_autofree char *stamp = g_date_time_format (now, "%Y-%m-%dT%H:%M:%SZ");

          if (on_terminal)
            g_print ("\033[H\033[2J");   /* one stable screen, as watch(1) */
          g_print ("— %s —\n%s", stamp, view->str);
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

/* ---------------------------------------------------------------------- */
/* init */

/* Opens @fd's folder to group @gid: group-writable and setgid, whatever
 * the umask, so that what is created in it is the group's too; and
 * sticky, so that only an entry's owner (or root, or the folder's owner)
 * renames or deletes it. */
static gboolean
share_folder (int fd, const char *path, gid_t gid)
{
  struct stat st;

  if (fstat (fd, &st) < 0 || (st.st_gid != gid && fchown (fd, (uid_t) -1, gid) < 0) ||
      fchmod (fd, (st.st_mode & 07777) | S_ISGID | S_ISVTX | S_IRWXG) < 0)
    {
      int saved = errno;
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
  mode_t add, drop, mode;

  if (fstat (fd, &st) < 0)
    return 0;
  if (st.st_uid != geteuid () && st.st_uid != 0)
    {
      struct passwd *pw = getpwuid (st.st_uid);
      g_autofree char *owner = pw != NULL ? g_strdup (pw->pw_name) : g_strdup_printf ("%u", (guint) st.st_uid);

      /* Translators: "/srv/pool/cpu belongs to mallory, not to the pool's owner: …" */
      return fail (EXIT_NOPERM, _("%s belongs to %s, not to the pool's owner: remove it or chown it, "
                                  "then run init again"), path, owner);
    }
  if (st.st_uid != geteuid () || !(S_ISDIR (st.st_mode) || (S_ISREG (st.st_mode) && st.st_nlink == 1)))
    return 0;
  add = S_ISDIR (st.st_mode) ? S_IRWXG | S_ISGID | (sticky ? S_ISVTX : 0) : S_IRGRP | (writable ? S_IWGRP : 0);
  drop = S_ISDIR (st.st_mode) || writable ? 0 : S_IWGRP | S_IWOTH;
  mode = ((st.st_mode & 07777) | add) & ~drop;
  if ((st.st_gid != gid && fchown (fd, (uid_t) -1, gid) < 0) ||
      (mode != (st.st_mode & 07777) && fchmod (fd, mode) < 0))
    {
      int saved = errno;
      return fail (EXIT_IOERR, _("cannot open %s to its group: %s"), path, g_strerror (saved));
    }
  return 0;
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
  /* hosts/ is not sticky: a host's heartbeat is renewed by whichever
   * user holds something on it. runs/ holds each user's job folders
   * (runs/UID). */
  static const struct { const char *name; gboolean folder, writable, sticky, make; } parts[] = {
    { "jobs", TRUE, TRUE, TRUE, TRUE }, { "runs", TRUE, TRUE, TRUE, TRUE }, { "queue", TRUE, TRUE, TRUE, TRUE },
    { "intents", TRUE, TRUE, TRUE, FALSE }, { "hosts", TRUE, TRUE, FALSE, TRUE },
    { "ipc.lock", FALSE, TRUE, FALSE, FALSE }, { "informations.json", FALSE, FALSE, FALSE, FALSE },
  };
  g_auto(GStrv) steps = g_strsplit (folder + strlen (pool), G_DIR_SEPARATOR_S, -1);
  g_autofree char *path = g_strdup (pool);
  AUTO_FD int dir_fd = dup (pool_fd);
  int status = dir_fd >= 0 ? 0 : EXIT_IOERR;

  for (guint i = 0; status == 0 && steps[i] != NULL; i++)
    {
      g_autofree char *next_path = NULL;
      int next;

      if (*steps[i] == '\0')
        continue;
      next_path = g_build_filename (path, steps[i], NULL);
      next = openat (dir_fd, steps[i], FOLDER_FLAGS);
      if (next < 0)
        {
          int saved = errno;

          if (saved == ELOOP || saved == ENOTDIR)
            return fail (EXIT_IOERR, _("%s is not a folder (a link is never followed there)"), next_path);
          return fail (EXIT_IOERR, _("cannot open %s to its group: %s"), next_path, g_strerror (saved));
        }
      close (dir_fd);
      dir_fd = next;
      g_free (path);
      path = g_steal_pointer (&next_path);
      status = share_existing (dir_fd, path, gid, TRUE, TRUE);
    }
  for (guint i = 0; status == 0 && i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *part_path = g_build_filename (path, parts[i].name, NULL);
      AUTO_FD int fd = -1;

      if (parts[i].make && mkdirat (dir_fd, parts[i].name, 0770) < 0 && errno != EEXIST)
        {
          int saved = errno;
          return fail (EXIT_IOERR, _("cannot create the folder %s: %s"), part_path, g_strerror (saved));
        }
      fd = openat (dir_fd, parts[i].name, parts[i].folder ? FOLDER_FLAGS
                                          : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      /* Not there yet, or a link or other planted thing: left alone (the
       * library refuses what it should not use). */
      if (fd >= 0)
        status = share_existing (fd, part_path, gid, parts[i].writable, parts[i].sticky);
    }
  return status;
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
  TesseraTrackedDynamicResource *resource = open_resource (config, name, status);
  g_autofree char *folder = NULL;
  g_autofree char *location = NULL;
  int shared;

  if (resource == NULL)
    return FALSE;
  /* Lexically: a ".." in the configured path must not lead out of the
   * pool. */
  folder = g_canonicalize_filename (tessera_tracked_dynamic_resource_get_lock_folder (resource), "/");
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

static int
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
  if (group != NULL)
    share_gid = gid;
  else if (stat (parent, &parent_st) == 0 && (parent_st.st_mode & S_IWGRP))
    /* In a group's folder, the pool is that group's, as Tessera makes
     * everything it creates there. */
    share_gid = parent_st.st_gid;
  else if (fstat (fd, &pool_st) == 0 && (pool_st.st_mode & S_IWGRP))
    share_gid = pool_st.st_gid;   /* a pool shared before stays so */
  if (share_gid >= 0)
    shared = share_folder (fd, pool, (gid_t) share_gid);
  if (shared && share_gid >= 0)
    {
      /* runs/, made by an earlier run, as `run` makes it in a shared
       * pool: the group's and sticky. */
      g_autofree char *runs_path = g_build_filename (pool, "runs", NULL);
      AUTO_FD int runs_fd = openat (fd, "runs", FOLDER_FLAGS);

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

/* ---------------------------------------------------------------------- */
/* plugins */

/* The names joined by ", ", or %NULL when there are none. */
static char *
join_names (const char * const *names)
{
  return names != NULL && names[0] != NULL ? g_strjoinv (", ", (char **) names) : NULL;
}

static int
cmd_plugins (int argc, char **argv)
{
  g_autoptr(GOptionContext) context =
    new_context (NULL, _("List the plugin folders, manifests, resource types and lock classes."), NULL);
  TesseraRegistry *registry = tessera_registry_get_default ();
  g_autoptr(GPtrArray) plugins = NULL;
  const char * const *path;
  int status = 0;

  if (!parse (context, &argc, &argv, &status))
    return status;
  path = tessera_registry_get_search_path (registry);
  g_print ("%s\n", _("Plugin folders:"));
  for (guint i = 0; path[i] != NULL; i++)
    g_print ("  %s\n", path[i]);
  plugins = tessera_registry_list_plugins (registry);
  for (guint i = 0; i < plugins->len; i++)
    {
      TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
      g_autofree char *types = join_names (tessera_plugin_info_get_resource_types (info));
      g_autofree char *classes = join_names (tessera_plugin_info_get_classes (info));
      g_autofree char *process_types = join_names (tessera_plugin_info_get_process_types (info));
      g_autofree char *stores = join_names (tessera_plugin_info_get_stores (info));

      g_print ("\n%s — %s\n", tessera_plugin_info_get_module (info), tessera_plugin_info_get_name (info));
      g_print (_("  manifest: %s\n"), tessera_plugin_info_get_manifest_path (info));
      g_print (_("  module:   %s (%s)\n"), tessera_plugin_info_get_module_path (info),
               tessera_plugin_info_is_loaded (info) ? _("loaded")
               : !g_file_test (tessera_plugin_info_get_module_path (info), G_FILE_TEST_IS_REGULAR)
               ? _("module missing") : _("not loaded"));
      /* Only what the plugin provides: a plugin of process types or of
       * stores has no resource type nor class. */
      if (types != NULL)
        g_print (_("  types:    %s\n"), types);
      if (classes != NULL)
        g_print (_("  classes:  %s\n"), classes);
      if (process_types != NULL)
        g_print (_("  process types: %s\n"), process_types);
      if (stores != NULL)
        g_print (_("  stores:   %s\n"), stores);
    }
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Starting the command behind a gate */

/* The signal mask and the ignored signals this process started with: the
 * command gets them back, as from nohup(1) or flock(1). */
static sigset_t start_mask;
static sigset_t start_ignored;
/* And its descriptor limit, which main() may raise (see
 * ensure_descriptors()): the command gets it back too. */
static struct rlimit start_nofile;
static gboolean start_nofile_raised;

static void
remember_start_signals (void)
{
  sigemptyset (&start_ignored);
  pthread_sigmask (SIG_SETMASK, NULL, &start_mask);
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction sa;

      if (sigaction (sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
        sigaddset (&start_ignored, sig);
    }
}

/* A started command: its pid, the write end of its gate, and the read end
 * of the pipe on which it reports a failed exec (an errno). */
typedef struct
{
  GPid pid;
  int gate;
  int report;
} Gated;

static gboolean gate_die_with_wrapper;   /* set before the fork */

/* The watcher's part (see gated_watch). Async-signal-safe calls only. */

/* Ends like @wstatus says: the same exit code, or the same signal (with
 * no core: the command already dumped its own, if any). */
G_GNUC_NORETURN static void
watcher_exit_like (int wstatus)
{
  if (WIFSIGNALED (wstatus))
    {
      int sig = WTERMSIG (wstatus);
      struct rlimit no_core = { 0, 0 };
      struct sigaction dfl = { 0 };
      sigset_t one;

      setrlimit (RLIMIT_CORE, &no_core);
      dfl.sa_handler = SIG_DFL;
      sigaction (sig, &dfl, NULL);
      sigemptyset (&one);
      sigaddset (&one, sig);
      kill (getpid (), sig);
      pthread_sigmask (SIG_UNBLOCK, &one, NULL);
      _exit (128 + sig);
    }
  _exit (WEXITSTATUS (wstatus));
}

/* Whether /proc is our pid namespace's: /proc/self names our pid. */
static gboolean
watcher_proc_is_ours (void)
{
  char link[32];
  ssize_t n = readlink ("/proc/self", link, sizeof link - 1);
  long pid = 0;

  if (n <= 0)
    return FALSE;
  for (ssize_t i = 0; i < n; i++)
    {
      if (link[i] < '0' || link[i] > '9')
        return FALSE;
      pid = pid * 10 + (link[i] - '0');
    }
  return pid == (long) getpid ();
}

/* The wrapper is gone: SIGKILL to every child of ours (the command, and
 * the orphans that came back to us, their subreaper) until none is left.
 * A killed process's children come back to us before we can reap it, so
 * the next round finds them. */
G_GNUC_NORETURN static void
watcher_end_all (pid_t command)
{
  const struct timespec tick = { 0, 5 * 1000 * 1000 };

  kill (command, SIGKILL);
  /* A /proc of another pid namespace (its pids are not ours to kill), or
   * a kernel that lists no children: the command only. */
  if (!watcher_proc_is_ours () || access ("/proc/thread-self/children", R_OK) < 0)
    {
      while (waitpid (command, NULL, 0) < 0 && errno == EINTR)
        ;
      _exit (128 + SIGKILL);
    }
  for (;;)
    {
      int fd = open ("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
      pid_t reaped;

      if (fd >= 0)
        {
          char buffer[512];
          long pid = 0;
          ssize_t n;

          while ((n = read (fd, buffer, sizeof buffer)) > 0)
            for (ssize_t i = 0; i < n; i++)
              {
                if (buffer[i] >= '0' && buffer[i] <= '9')
                  pid = pid * 10 + (buffer[i] - '0');
                else
                  {
                    if (pid > 0)
                      kill ((pid_t) pid, SIGKILL);
                    pid = 0;
                  }
              }
          if (pid > 0)
            kill ((pid_t) pid, SIGKILL);
          close (fd);
        }
      reaped = waitpid (-1, NULL, WNOHANG);
      if (reaped < 0 && errno == ECHILD)
        _exit (128 + SIGKILL);
      if (reaped < 0 && errno != EINTR)
        _exit (128 + SIGKILL);
      if (reaped == 0)
        nanosleep (&tick, NULL);
    }
}

/* On a lease pool, the process the lock files name is a watcher: it
 * forks the command, becomes the subreaper of everything the command
 * starts, and when the wrapper dies (the gate's other end closes, even
 * on SIGKILL) it kills all of them; a PR_SET_PDEATHSIG would reach the
 * command only. It passes on the signals a process sends it (the
 * wrapper forwarding SIGINT, SIGTERM, SIGHUP; --on-lost=end) to the
 * command, not those of the terminal (the command got them too), and
 * ends as the command does. Returns in the command's process. */
static void
gated_watch (int gate, int report)
{
  const int passed[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
  struct sigaction dfl = { 0 };
  pid_t watcher = getpid ();
  pid_t command;
  sigset_t set;
  int sfd, err;

  /* Ignored at start (nohup), a signal stays ignored by both. */
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (guint i = 0; i < G_N_ELEMENTS (passed); i++)
    if (!sigismember (&start_ignored, passed[i]))
      sigaddset (&set, passed[i]);
  dfl.sa_handler = SIG_DFL;
  sigaction (SIGCHLD, &dfl, NULL);   /* ignored, no status would come */
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0 || prctl (PR_SET_CHILD_SUBREAPER, 1) < 0 || (command = fork ()) < 0)
    {
      err = errno;
      while (write (report, &err, sizeof err) < 0 && errno == EINTR)
        ;
      _exit (126);
    }
  if (command == 0)
    {
      /* The command: as it was, and dying with its watcher. */
      close (sfd);
      close (gate);
      if (sigismember (&start_ignored, SIGCHLD))
        {
          struct sigaction ign = { 0 };

          ign.sa_handler = SIG_IGN;
          sigaction (SIGCHLD, &ign, NULL);
        }
      pthread_sigmask (SIG_SETMASK, &start_mask, NULL);
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != watcher)
        _exit (125);
      return;
    }
  close (report);
  for (;;)
    {
      struct pollfd fds[2] = { { sfd, POLLIN, 0 }, { gate, POLLIN, 0 } };
      struct signalfd_siginfo info;

      if (poll (fds, 2, -1) < 0)
        continue;
      if (fds[1].revents != 0)
        watcher_end_all (command);   /* never data: the wrapper is gone */
      if (!(fds[0].revents & POLLIN) || read (sfd, &info, sizeof info) != sizeof info)
        continue;
      if (info.ssi_signo == SIGCHLD)
        {
          int wstatus;
          pid_t pid;

          /* Orphans that came back to us are reaped too. */
          while ((pid = waitpid (-1, &wstatus, WNOHANG)) > 0)
            if (pid == command)
              watcher_exit_like (wstatus);
        }
      else if (info.ssi_code != SI_KERNEL)
        kill (command, (int) info.ssi_signo);
    }
}

/* Reads exactly @size bytes from @fd; async-signal-safe. */
static gboolean
gated_read_all (int fd, void *buffer, size_t size)
{
  char *p = buffer;

  while (size > 0)
    {
      ssize_t n = read (fd, p, size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= (size_t) n;
    }
  return TRUE;
}

/* After the go, the gate brings the command's environment, known only
 * once the locks are held: its size (a guint32), then its "NAME=VALUE"
 * strings, each ending in a NUL. Read into memory of its own (mmap, not
 * malloc: async-signal-safe). NULL when the wrapper is gone. */
static char **
gated_read_environment (int gate)
{
  guint32 size;
  size_t count = 0;
  char *text, **envp;

  if (!gated_read_all (gate, &size, sizeof size) || size == 0 || size > 64 * 1024 * 1024)
    return NULL;
  text = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (text == MAP_FAILED || !gated_read_all (gate, text, size) || text[size - 1] != '\0')
    return NULL;
  for (guint32 i = 0; i < size; i++)
    if (text[i] == '\0')
      count++;
  envp = mmap (NULL, (count + 1) * sizeof (char *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (envp == MAP_FAILED)
    return NULL;
  count = 0;
  for (guint32 i = 0; i < size; i += (guint32) strlen (text + i) + 1)
    envp[count++] = text + i;
  envp[count] = NULL;
  return envp;
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
G_GNUC_NORETURN static void
gated_child (int gate, int report, int keep_fd, char **candidates, char **argv, char **sh_argv)
{
  struct sigaction dfl = { 0 }, ign = { 0 };
  gboolean denied = FALSE;
  int err = ENOENT;
  char **envp;
  char go;
  ssize_t n;

  dfl.sa_handler = SIG_DFL;
  ign.sa_handler = SIG_IGN;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, sigismember (&start_ignored, sig) ? &ign : &dfl, NULL);
  pthread_sigmask (SIG_SETMASK, &start_mask, NULL);

  /* The gate opens once the lock files name this process; end-of-file
   * means the wrapper is gone or gave up: never run without a holding. */
  do
    n = read (gate, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'g' || (envp = gated_read_environment (gate)) == NULL)
    _exit (125);
  /* On a lease pool the command, and all it starts, die with the
   * wrapper, which renews the lease: this process stays to see to it. */
  if (gate_die_with_wrapper)
    gated_watch (gate, report);
  else
    close (gate);
  /* The command keeps the job lock for its whole life. */
  if (keep_fd >= 0)
    fcntl (keep_fd, F_SETFD, 0);
  if (start_nofile_raised)
    setrlimit (RLIMIT_NOFILE, &start_nofile);

  for (guint i = 0; candidates[i] != NULL; i++)
    {
      execve (candidates[i], argv, envp);
      err = errno;
      if (err == ENOEXEC)
        {
          /* A script without "#!": the shell runs it, as execvp does. */
          sh_argv[1] = candidates[i];
          execve ("/bin/sh", sh_argv, envp);
          err = errno;
        }
      if (err == EACCES)
        denied = TRUE;
      else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT)
        break;
    }
  if (denied && (err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT))
    err = EACCES;
  while (write (report, &err, sizeof err) < 0 && errno == EINTR)
    ;
  _exit (err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* Forks the command, which waits behind its gate (see gated_open) until
 * its locks are held: it is forked before they are taken, so that the
 * lock files name it from their first version. Where to look for it is
 * worked out here, as posix_spawnp does, with the PATH of this process
 * (the locks' environment does not set PATH), so that the child only
 * calls execve(). Descriptors without close-on-exec pass to the command;
 * Tessera's own have it, but for @keep_fd. */
static gboolean
gated_spawn (char **command, int keep_fd, Gated *gated, GError **error)
{
  g_autoptr(GPtrArray) candidates = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) sh_argv = g_ptr_array_new ();
  int gate[2] = { -1, -1 }, report[2] = { -1, -1 };
  sigset_t all, saved;
  int fork_errno;
  GPid pid;

  if (strchr (command[0], '/') != NULL)
    g_ptr_array_add (candidates, g_strdup (command[0]));
  else
    {
      const char *path = g_getenv ("PATH");
      g_auto(GStrv) dirs = g_strsplit (path != NULL ? path : "/bin:/usr/bin", ":", -1);

      for (guint i = 0; dirs[i] != NULL; i++)
        g_ptr_array_add (candidates, g_build_filename (*dirs[i] ? dirs[i] : ".", command[0], NULL));
    }
  g_ptr_array_add (candidates, NULL);
  g_ptr_array_add (sh_argv, (gpointer) "/bin/sh");
  for (guint i = 0; command[i] != NULL; i++)
    g_ptr_array_add (sh_argv, command[i]);
  g_ptr_array_add (sh_argv, NULL);

  /* Not g_unix_open_pipe(): its error does not say which errno (out of
   * descriptors is exit 71). */
  if (pipe2 (gate, O_CLOEXEC) < 0 || pipe2 (report, O_CLOEXEC) < 0)
    {
      int pipe_errno = errno;

      if (gate[0] >= 0)
        {
          close (gate[0]);
          close (gate[1]);
        }
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (pipe_errno), _("Cannot start a process: %s"),
                   g_strerror (pipe_errno));
      return FALSE;
    }
  /* No handler of this process may run in the child before it resets them. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pid = fork ();
  fork_errno = errno;
  if (pid == 0)
    {
      close (gate[1]);
      close (report[0]);
      gated_child (gate[0], report[1], keep_fd, (char **) candidates->pdata, command, (char **) sh_argv->pdata);
    }
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  close (gate[0]);
  close (report[1]);
  if (pid < 0)
    {
      close (gate[1]);
      close (report[0]);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (fork_errno),
                   _("Cannot start a process: %s"), g_strerror (fork_errno));
      return FALSE;
    }
  gated->pid = pid;
  gated->gate = gate[1];
  gated->report = report[0];
  return TRUE;
}

static void
gated_close (Gated *gated)
{
  if (gated->gate >= 0)
    close (gated->gate);
  gated->gate = -1;
}

/* Opens the gate, handing the command @env (@go), or closes it for good;
 * then returns 0 when the command runs, or the errno of its failed exec. */
static int
gated_open (Gated *gated, gboolean go, char **env)
{
  int err = 0;
  ssize_t n;

  if (go)
    {
      g_autoptr(GByteArray) message = g_byte_array_new ();
      guint32 size = 0;
      gsize done = 0;

      g_byte_array_append (message, (const guint8 *) "g", 1);
      g_byte_array_append (message, (const guint8 *) &size, sizeof size);
      for (guint i = 0; env[i] != NULL; i++)
        g_byte_array_append (message, (const guint8 *) env[i], strlen (env[i]) + 1);
      size = message->len - 1 - sizeof size;
      memcpy (message->data + 1, &size, sizeof size);
      while (done < message->len)
        {
          ssize_t w = write (gated->gate, message->data + done, message->len - done);

          if (w < 0 && errno == EINTR)
            continue;
          /* EPIPE: a signal passed on has already ended the command. */
          if (w < 0 && errno != EPIPE)
            g_printerr (_("tessera: %s\n"), g_strerror (errno));
          if (w < 0)
            break;
          done += (gsize) w;
        }
    }
  /* A watcher (lease pool) takes the gate's end for our death: it stays
   * open until the watcher is reaped (gated_close). */
  if (!go || !gate_die_with_wrapper)
    gated_close (gated);
  do
    n = read (gated->report, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close (gated->report);
  gated->report = -1;
  return n == sizeof err ? err : 0;
}

static int
gated_wait (GPid pid)
{
  int wstatus = 0;

  while (waitpid (pid, &wstatus, 0) < 0 && errno == EINTR)
    ;
  return wstatus;
}

static int
exit_status_of (int wstatus)
{
  if (WIFSIGNALED (wstatus))
    return 128 + WTERMSIG (wstatus);
  return WEXITSTATUS (wstatus);
}

/* ---------------------------------------------------------------------- */
/* run */

typedef struct
{
  char *name;
  char *request;
  TesseraTrackedDynamicResource *resource;
  TesseraDynamicDependencyLock *lock;
} Need;

/* Makes the run's job folder: under TESSERA_JOB_FOLDERS when set, else in
 * the first pool's runs/UID (every judge of that pool probes our job lock
 * there; the first in a folder: an etcd pool judges by its leases), else,
 * when that cannot be had, in the state folder's jobs/. In a setgid,
 * group-readable folder it is
 * readable by that group too. In a pool's runs/UID, which a co-user may
 * try to swap, it is made through the descriptor of the runs/UID that was
 * checked, and its path must still lead to it. */
static char *
dup_job_folder (GPtrArray *needs, const char *state_dir, const char *identifier, int *folder_fd, GError **error)
{
  const char *setting = g_getenv ("TESSERA_JOB_FOLDERS");
  g_autofree char *root = NULL;
  g_autofree char *folder = NULL;
  struct stat st, path_st;
  int own_fd = -1, job_fd;

  if (setting != NULL && *setting != '\0')
    {
      if (!g_path_is_absolute (setting))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("TESSERA_JOB_FOLDERS must be an absolute path, not “%s”"), setting);
          return NULL;
        }
      root = g_strdup (setting);
    }
  for (guint i = 0; root == NULL && i < needs->len; i++)
    {
      TesseraTrackedDynamicResource *resource = ((Need *) g_ptr_array_index (needs, i))->resource;
      g_autofree char *store = NULL;

      g_object_get (resource, "store", &store, NULL);
      if (store == NULL || g_str_equal (store, "folder"))
        {
          root = dup_runs_folder (tessera_tracked_dynamic_resource_get_lock_folder (resource), &own_fd);
          break;
        }
    }
  if (root == NULL)
    root = g_build_filename (state_dir, "jobs", NULL);
  folder = g_build_filename (root, identifier, NULL);
  if (own_fd < 0)
    {
      if (g_mkdir_with_parents (folder, 0750) < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"),
                       folder, g_strerror (saved));
          return NULL;
        }
      /* Whatever our umask, the group of a shared runs folder reads it. */
      if (stat (root, &st) == 0 && (st.st_mode & (S_ISGID | S_IRGRP | S_IXGRP)) == (S_ISGID | S_IRGRP | S_IXGRP))
        chmod (folder, S_ISGID | 0750);
      /* From here the job's files go through this descriptor. */
      if ((*folder_fd = open (folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot open %s: %s"), folder,
                       g_strerror (saved));
          return NULL;
        }
      return g_steal_pointer (&folder);
    }
  if (mkdirat (own_fd, identifier, 0750) < 0 || (job_fd = open_own_folder_at (own_fd, identifier)) < 0)
    {
      int saved = errno;
      close (own_fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot create the folder %s: %s"),
                   folder, g_strerror (saved));
      return NULL;
    }
  close (own_fd);
  fchmod (job_fd, S_ISGID | 0750);
  /* The files of the job are written by path from here: the path must
   * lead to the folder just made, not to one a co-user swapped in. */
  if (fstat (job_fd, &st) < 0 || lstat (folder, &path_st) < 0 || st.st_dev != path_st.st_dev ||
      st.st_ino != path_st.st_ino)
    {
      close (job_fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("The job folder %s was moved while it was made (a co-user of the pool?)"), folder);
      return NULL;
    }
  *folder_fd = job_fd;
  return g_steal_pointer (&folder);
}

static void
need_free (Need *need)
{
  g_free (need->name);
  g_free (need->request);
  g_clear_object (&need->lock);
  g_free (need);
}

static int
compare_needs (gconstpointer a, gconstpointer b)
{
  return strcmp ((*(Need **) a)->name, (*(Need **) b)->name);
}

static gboolean interactive;

/* Signals are caught from the start, on a thread of their own: while
 * waiting they cancel the wait at once (giving back what is held), once
 * the child runs they are forwarded. @lock orders the signal thread's
 * look at @child with the main thread's start of the child. */
typedef struct
{
  GMutex lock;
  GCancellable *cancel;
  GMainLoop *loop;
  GPid child;          /* 0 until started, and again once reaped */
  int wait_status;
  gboolean share_terminal;
  int pending_signal;
  int command_gone;    /* the command died at its gate while we waited */
  /* Opening a resource takes its folder's ipc.lock, where neither the
   * cancellable nor the timeout reaches: until every need is open, the
   * signal thread ends the run itself (nothing is held yet). */
  char *opening;       /* the need being opened ("" before), or NULL */
  gint64 open_deadline; /* monotonic µs, or -1 */
  gboolean no_wait;
  int conflict_status; /* when the run gives up waiting: 75, or -E's */
  /* Once the acquisition is over, no command runs while the run names
   * the command in its lock files (before its gate opens) or releases
   * (after it ended): the same ipc.lock may keep the run waiting there,
   * and a signal then ends it once it has waited there a while (what it
   * holds is then a dead holder's). */
  gboolean settling;
  gboolean gate_open;  /* the command was let through its gate */
} RunState;

/* Static: the signal thread may look at it until the process exits. */
static RunState run_state;

/* How long opening the resources may wait in a lock a peer keeps, past
 * the run's timeout: as long as a wait for ipc.lock may (a peer's
 * critical section is short). */
#define OPEN_GRACE_US G_USEC_PER_SEC

static void
clear_line (void)
{
  if (interactive)
    g_printerr ("\r\033[K");
}

/* How often a log (stderr not a terminal) hears that we still wait. */
#define WAITING_REPORT_INTERVAL (60 * G_USEC_PER_SEC)

/* What we wait for, why (@why: the type's refusal, or NULL) and who
 * holds it: on a terminal, one self-updating line; in a log, one line
 * when the wait starts (@since == @last_report) and one a minute after
 * the last, as srun does. @grow: the request is larger than the
 * resource, and the run waits for it to grow (its holders do not
 * matter). */
static void
show_waiting (Need *need, const char *why, gboolean grow, gint64 since, gint64 *last_report)
{
  g_autoptr(GPtrArray) files = tessera_tracked_dynamic_resource_list_lock_files (need->resource);
  g_autoptr(GString) holders = g_string_new (NULL);
  struct winsize ws = { 0 };
  guint width = ioctl (2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
  gint64 now = g_get_monotonic_time ();
  gboolean later = !interactive && *last_report != since;
  guint minutes = (guint) ((now - since) / (60 * G_USEC_PER_SEC));
  g_autofree char *what = NULL;
  g_autofree char *what_why = NULL;
  g_autofree char *held = NULL;
  g_autofree char *line = NULL;

  if (!interactive && *last_report != since && now - *last_report < WAITING_REPORT_INTERVAL)
    return;
  for (guint i = 0; !grow && i < files->len; i++)
    {
      TesseraDynamicLockFile *lock_file = g_ptr_array_index (files, i);
      TesseraProcess *process = tessera_dynamic_lock_file_get_process (lock_file);
      g_autofree char *name = holder_name (lock_file);
      g_autofree char *job = escape_name (name, TRUE);

      if (process != NULL)
        g_string_append_printf (holders, "%s%s (pid %d)", i ? ", " : "", job, (int) tessera_process_get_pid (process));
      else
        g_string_append_printf (holders, "%s%s", i ? ", " : "", job);
    }
  if (grow)
    what = later ? g_strdup_printf (_("still waiting for the total of %s to grow after %u min"), need->name, minutes)
                 : g_strdup_printf (_("waiting for the total of %s to grow"), need->name);
  else
    what = later ? g_strdup_printf (_("still waiting for %s after %u min"), need->name, minutes)
                 : g_strdup_printf (_("waiting for %s"), need->name);
  /* Translators: what a run waits for, then the resource type's reason:
   * "waiting for gpu (gpu has fewer than 2 device(s) free)" */
  if (why != NULL)
    {
      /* A type's words may carry a store's (a server's answer). */
      g_autofree char *shown_why = escape_name (why, TRUE);

      what_why = g_strdup_printf (_("%s (%s)"), what, shown_why);
    }
  else
    what_why = g_strdup (what);
  /* Translators: "waiting for cpu (…), held by train@host-1 (pid 42)" */
  if (holders->len)
    held = g_strdup_printf (_("%s, held by %s"), what_why, holders->str);
  line = g_strdup_printf (_("tessera: %s"), held != NULL ? held : what_why);
  if (!interactive)
    {
      g_printerr ("%s\n", line);
      *last_report = now;
      return;
    }
  if (g_utf8_strlen (line, -1) >= width)
    {
      g_autofree char *cut = g_utf8_substring (line, 0, width - 2);
      g_printerr ("\r\033[K%s…", cut);
    }
  else
    g_printerr ("\r\033[K%s", line);
}

static Need *
need_of (GPtrArray *needs, GPtrArray *deps, TesseraDynamicDependency *dep)
{
  for (guint i = 0; i < deps->len; i++)
    if (g_ptr_array_index (deps, i) == dep)
      return g_ptr_array_index (needs, i);
  return g_ptr_array_index (needs, 0);
}

/* While a run waits, its command waits at its gate. Killed there on its
 * own, it closes the gate's report pipe: the wait then ends (as a signal
 * ends it), so that nothing is taken for a command that is gone. */
typedef struct
{
  RunState *state;
  int report;
  int stop[2];
  GThread *thread;
} GateGuard;

static gpointer
gate_guard_thread (gpointer data)
{
  GateGuard *guard = data;
  struct pollfd fds[2] = { { guard->report, POLLIN, 0 }, { guard->stop[0], POLLIN, 0 } };

  while (poll (fds, 2, -1) < 0 && errno == EINTR)
    ;
  if (fds[1].revents == 0 && fds[0].revents != 0)
    {
      g_atomic_int_set (&guard->state->command_gone, TRUE);
      g_cancellable_cancel (guard->state->cancel);
    }
  return NULL;
}

static void
gate_guard_start (GateGuard *guard, RunState *state, int report)
{
  guard->state = state;
  guard->report = report;
  if (!g_unix_open_pipe (guard->stop, FD_CLOEXEC, NULL))
    return;   /* unguarded: the death is then seen once the locks are held */
  guard->thread = g_thread_new ("tessera-gate", gate_guard_thread, guard);
}

static void
gate_guard_stop (GateGuard *guard)
{
  if (guard->thread == NULL)
    return;
  while (write (guard->stop[1], "", 1) < 0 && errno == EINTR)
    ;
  g_thread_join (guard->thread);
  guard->thread = NULL;
  close (guard->stop[0]);
  close (guard->stop[1]);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GateGuard, gate_guard_stop)

/* Acquires every need at once, or none (see
 * tessera_dynamic_dependency_locks_acquire_all): a waiting run holds
 * nothing, and two runs never deadlock. A need larger than its resource
 * ends the run at once (69), unless @wait_for_capacity: then it waits
 * for the resource to grow, as the library does. */
static int
acquire_all (GPtrArray *needs, TesseraJob *job, TesseraDynamicDependencyLocks *locks, double timeout,
             gboolean no_wait, gboolean wait_for_capacity, RunState *state, int report)
{
  /* Stopped on every return: a waiting command is guarded (a run that
   * does not wait starts no thread for it). */
  g_auto(GateGuard) guard = { NULL, -1, { -1, -1 }, NULL };
  g_autoptr(GPtrArray) deps = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 deadline = no_wait ? g_get_monotonic_time ()
                    : timeout >= 0 ? g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC) : -1;
  gboolean shown = FALSE;
  gint64 since = 0, last_report = 0;
  g_autofree char *told_reason = NULL;
  GPtrArray *held;

  for (guint i = 0; i < needs->len; i++)
    {
      Need *need = g_ptr_array_index (needs, i);
      g_autoptr(GError) error = NULL;
      TesseraDynamicDependency *dep =
        tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (need->resource), job,
                                                    need->request, &error);

      if (dep == NULL)
        return fail (oserr_or (error, EXIT_USAGE), "%s: %s", need->name, error->message);
      g_ptr_array_add (deps, dep);
    }
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gint64 now = g_get_monotonic_time ();
      /* One try first, to say at once that we wait; then slices to
       * refresh the waiting line (events still wake us; a signal cancels
       * the wait). */
      double slice = !shown ? 0
                     : interactive ? 1.0
                     : MAX (0, (last_report + WAITING_REPORT_INTERVAL - now) / 1e6);
      const char *reason;
      const char *why;
      const GError *refusal;
      Need *need;
      gboolean acquired;
      gboolean grow;

      if (deadline >= 0)
        slice = MIN (slice, MAX (0, (deadline - now) / 1e6));
      /* The first try's warnings are held (and the opening's, see
       * defer_log()): when it fails on a folder that cannot be read, the
       * error says what the warning of the look did. */
      if (!shown)
        hold_log ();
      acquired = tessera_dynamic_dependency_locks_acquire_all (locks, (TesseraDynamicDependency **) deps->pdata,
                                                               deps->len, slice, state->cancel, &error);
      if (!shown)
        {
          if (error != NULL)
            drop_log_said_by (error->message);
          if (tessera_dynamic_dependency_locks_get_refusal (locks) != NULL)
            drop_log_said_by (tessera_dynamic_dependency_locks_get_refusal (locks)->message);
          release_log (TRUE);
        }
      if (acquired)
        break;
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          clear_line ();
          return 128 + g_atomic_int_get (&state->pending_signal);
        }
      need = need_of (needs, deps, tessera_dynamic_dependency_locks_get_waiting_for (locks));
      if (!g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
        {
          clear_line ();
          return fail (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_REQUEST_TOO_LARGE) ? EXIT_UNAVAILABLE
                       : oserr_or (error, is_io_error (error) ? EXIT_IOERR : 1), "%s: %s", need->name,
                       error->message);
        }
      /* The type's refusal says why, in its words: the resource is
       * full for this request, or smaller than it. Without one, a peer
       * keeps the folder locked: said once, or with the failure. */
      refusal = tessera_dynamic_dependency_locks_get_refusal (locks);
      grow = g_error_matches (refusal, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY);
      why = refusal != NULL ? refusal->message : NULL;
      reason = refusal == NULL ? tessera_dynamic_dependency_locks_get_waiting_reason (locks) : NULL;
      /* Larger than the resource, which no release will change: as
       * Slurm refuses a job larger than the cluster. */
      if (grow && !wait_for_capacity)
        {
          clear_line ();
          /* Translators: "gpu: gpu has 0 device(s) with at least 0 MiB,
           * fewer than the 1 asked for (--wait-for-capacity waits for it
           * to grow)"; the second %s is the resource type's reason */
          return fail (EXIT_UNAVAILABLE, _("%s: %s (--wait-for-capacity waits for it to grow)"), need->name, why);
        }
      if (deadline >= 0 && g_get_monotonic_time () >= deadline)
        {
          clear_line ();
          if (why == NULL && reason != NULL && g_strcmp0 (reason, told_reason) != 0)
            why = reason;
          if (why != NULL)
            return fail (state->conflict_status,
                         no_wait ? _("%s is not available: %s") : _("timed out waiting for %s: %s"), need->name, why);
          return fail (state->conflict_status, no_wait ? _("%s is not available") : _("timed out waiting for %s"),
                       need->name);
        }
      if (!shown)
        {
          since = last_report = g_get_monotonic_time ();
          if (report >= 0)
            gate_guard_start (&guard, state, report);
        }
      if (reason != NULL && g_strcmp0 (reason, told_reason) != 0)
        {
          clear_line ();
          g_printerr (_("tessera: %s\n"), reason);
          g_free (told_reason);
          told_reason = g_strdup (reason);
        }
      show_waiting (need, why, grow, since, &last_report);
      shown = TRUE;
    }
  if (shown)
    clear_line ();
  /* The locks come in the order of the needs. */
  held = tessera_locks_get_locks (TESSERA_LOCKS (locks));
  for (guint i = 0; i < needs->len; i++)
    ((Need *) g_ptr_array_index (needs, i))->lock = g_object_ref (g_ptr_array_index (held, i));
  return 0;
}

/* A lock file of ours that disappears while the command runs (a
 * `clean --force`, a peer's mistaken verdict, an older Tessera) means our
 * share may be handed to another run: say so once per resource, and with
 * --on-lost=end end the command (SIGTERM). Checked every second. */
typedef struct
{
  GPtrArray *paths;     /* lock file paths, one per need */
  GPtrArray *names;     /* the needs' names */
  GHashTable *told;     /* paths already reported */
  gboolean end;
  RunState *state;
  GArray *stats;        /* each lock file's stat when the command started */
  GPtrArray *texts;     /* and its text (NULL: none could be read) */
} LostWatch;

/* The text of the lock file @path (never followed, never a FIFO), at
 * most a mebibyte; NULL when it cannot be read. */
static char *
read_own_lock_file (const char *path, struct stat *st)
{
  g_autoptr(GString) text = g_string_new (NULL);
  char buffer[4096];
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return NULL;
  if (fstat (fd, st) < 0 || !S_ISREG (st->st_mode))
    {
      close (fd);
      return NULL;
    }
  while (text->len < 1024 * 1024)
    {
      gssize n = read (fd, buffer, sizeof buffer);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      g_string_append_len (text, buffer, n);
    }
  close (fd);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Whether this run's lock file @i was rewritten since the command
 * started: another file in its place (a rename), or other content. */
static gboolean
lock_file_rewritten (LostWatch *w, guint i, const struct stat *now)
{
  const struct stat *then = &g_array_index (w->stats, struct stat, i);
  const char *text = g_ptr_array_index (w->texts, i);
  g_autofree char *now_text = NULL;
  struct stat st;

  if (text == NULL)
    return FALSE;
  if (now->st_dev != then->st_dev || now->st_ino != then->st_ino)
    return TRUE;
  if (now->st_size == then->st_size && now->st_mtim.tv_sec == then->st_mtim.tv_sec &&
      now->st_mtim.tv_nsec == then->st_mtim.tv_nsec && now->st_ctim.tv_sec == then->st_ctim.tv_sec &&
      now->st_ctim.tv_nsec == then->st_ctim.tv_nsec)
    return FALSE;
  now_text = read_own_lock_file (g_ptr_array_index (w->paths, i), &st);
  return now_text != NULL && (st.st_ino != then->st_ino || !g_str_equal (now_text, text));
}

/* Sends @signum to the command's watcher while it runs (the fence's way
 * to end the command where it cannot list its descendants). */
static void
signal_command (int signum, gpointer data)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  if (state->child != 0)
    kill (state->child, signum);
  g_mutex_unlock (&state->lock);
}

static gboolean
check_lost (gpointer data)
{
  LostWatch *w = data;

  for (guint i = 0; i < w->paths->len; i++)
    {
      const char *path = g_ptr_array_index (w->paths, i);
      struct stat st;

      gboolean gone;

      if (path == NULL || g_hash_table_contains (w->told, path))
        continue;
      gone = lstat (path, &st) < 0;
      if ((gone && errno != ENOENT) || (!gone && !lock_file_rewritten (w, i, &st)))
        continue;
      g_hash_table_add (w->told, (gpointer) path);
      {
        g_autofree char *shown = escape_name (path, TRUE);
        if (gone)
          g_printerr (_("tessera: %s: this run's lock file %s is gone: its share may be handed to another run\n"),
                      (const char *) g_ptr_array_index (w->names, i), shown);
        else
          g_printerr (_("tessera: %s: this run's lock file %s was rewritten by someone else: "
                        "its share may be handed to another run\n"),
                      (const char *) g_ptr_array_index (w->names, i), shown);
      }
      if (w->end)
        {
          g_mutex_lock (&w->state->lock);
          if (w->state->child != 0)
            kill (w->state->child, SIGTERM);
          g_mutex_unlock (&w->state->lock);
        }
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
forward_signal (gpointer data, int signum)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  if (state->child == 0)
    {
      g_atomic_int_set (&state->pending_signal, signum);
      g_cancellable_cancel (state->cancel);
    }
  /* Ctrl-C on a shared terminal already reached the child. */
  else if (!(signum == SIGINT && state->share_terminal))
    kill (state->child, signum);
  g_mutex_unlock (&state->lock);
  return G_SOURCE_CONTINUE;
}

/* Whether Ctrl-C on our controlling terminal reaches the command by itself:
 * we are in the terminal's foreground process group, which the command
 * shares. Judged from the controlling terminal, not from stdin, which may
 * be a file or /dev/null while the terminal still sends SIGINT. */
static gboolean
in_terminal_foreground (void)
{
  int fd = open ("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  gboolean foreground;

  if (fd < 0)
    return FALSE;
  foreground = tcgetpgrp (fd) == getpgrp ();
  close (fd);
  return foreground;
}

/* The signals a run catches: SIGINT, SIGTERM and SIGHUP, unless ignored at
 * start (nohup): those stay ignored, here and in the command. */
static sigset_t run_signals;

/* They are blocked in every thread (before any exists) and taken here
 * with sigtimedwait(): no handler interrupts whatever a thread is doing,
 * and none can defer them (sanitizers delay handlers to safe points). */
/* How often a run looks at its main thread while it opens its resources
 * or settles (see RunState). */
#define OPEN_SAMPLE_US (G_USEC_PER_SEC / 10)

/* While the resources open or the run settles (see RunState): what the
 * main thread waits for, when it waits for a lock a peer keeps, to be said. */
static char *
main_thread_lock_wait (void)
{
  gboolean unknown;
  char *words = tessera_lock_wait_describe (getpid (), &unknown);

  /* Cannot be told (no /proc): take the deadline as it comes. */
  return words == NULL && unknown ? g_strdup (_("its folder stays locked by another process")) : words;
}

/* What the signal thread watches the main thread for: nothing (a
 * command runs, or no resource is open yet), the opening, or the
 * settling (see RunState). Under the state's lock. */
typedef enum
{
  WATCH_NONE,
  WATCH_OPENING,
  WATCH_SETTLING,
} WatchPhase;

static WatchPhase
watch_phase (RunState *state)
{
  if (state->opening != NULL)
    return WATCH_OPENING;
  if (state->settling && (state->child == 0 || !state->gate_open))
    return WATCH_SETTLING;
  return WATCH_NONE;
}

static gpointer
signal_thread (gpointer data)
{
  RunState *state = &run_state;
  g_autofree char *waiting = NULL;   /* what the main thread was last seen waiting for */
  gint64 waiting_since = 0, sampled = 0;
  gboolean noted = FALSE;
  WatchPhase last_phase = WATCH_NONE;
  int settle_signal = 0;             /* a signal that came while settling */

  for (;;)
    {
      WatchPhase phase;
      struct timespec ts;
      int signum, saved;
      gint64 now;

      g_mutex_lock (&state->lock);
      phase = watch_phase (state);
      g_mutex_unlock (&state->lock);
      /* While opening or settling, look at the main thread ten times a
       * second; otherwise once a second, for the next phase (the main
       * thread does not wake us). */
      ts.tv_sec = phase != WATCH_NONE ? 0 : 1;
      ts.tv_nsec = phase != WATCH_NONE ? OPEN_SAMPLE_US * 1000 : 0;
      signum = sigtimedwait (&run_signals, NULL, &ts);
      saved = errno;

      g_mutex_lock (&state->lock);
      phase = watch_phase (state);
      /* Still opening: nothing is held, end here. */
      if (phase == WATCH_OPENING && signum > 0)
        {
          end_deferred_log ();
          _exit (128 + signum);
        }
      /* Each phase waits, and is told of, on its own. */
      if (phase != last_phase)
        {
          g_clear_pointer (&waiting, g_free);
          noted = FALSE;
          settle_signal = 0;
          last_phase = phase;
        }
      if (phase == WATCH_SETTLING && signum > 0)
        settle_signal = signum;
      now = g_get_monotonic_time ();
      /* Looked at on each tick, and afresh when a signal comes: the
       * last tick's look may be a tenth of a second old. */
      if (phase != WATCH_NONE && (signum > 0 || saved == EAGAIN))
        {
          g_autofree char *words = main_thread_lock_wait ();

          /* Two samples far apart (the run was stopped, or starved):
           * what came between is unknown, so the wait starts again. */
          if (words == NULL || g_strcmp0 (words, waiting) != 0 || now - sampled > 5 * OPEN_SAMPLE_US)
            waiting_since = now;
          sampled = now;
          g_free (waiting);
          waiting = g_steal_pointer (&words);
          /* A peer kept the lock a whole grace, past the deadline. */
          if (waiting != NULL && phase == WATCH_OPENING && state->open_deadline >= 0 &&
              now >= state->open_deadline && now - waiting_since >= OPEN_GRACE_US)
            {
              fail (0, state->no_wait ? _("%s is not available: %s") : _("timed out waiting for %s: %s"),
                    state->opening, waiting);
              _exit (state->conflict_status);
            }
          if (waiting != NULL && !noted && now - waiting_since >= TESSERA_LOCK_NOTE_US)
            {
              tessera_lock_wait_say (waiting);
              noted = TRUE;
            }
        }
      /* Settling behind a peer's lock for a grace, told to end: the
       * command is gone or never ran, so ending here leaves only a dead
       * holder's lock files. A shorter wait (a peer's critical section)
       * ends as usual. */
      if (phase == WATCH_SETTLING && settle_signal != 0 && waiting != NULL &&
          now - waiting_since >= OPEN_GRACE_US)
        {
          fail (0, _("interrupted while %s; what this run held is taken back as a dead holder's"), waiting);
          _exit (128 + settle_signal);
        }
      g_mutex_unlock (&state->lock);
      if (signum > 0)
        forward_signal (state, signum);
    }
  return NULL;
}

/* Before any thread exists, so that all of them block the signals. */
static void
start_signal_thread (void)
{
  const int caught[] = { SIGINT, SIGTERM, SIGHUP };

  sigemptyset (&run_signals);
  for (guint i = 0; i < G_N_ELEMENTS (caught); i++)
    if (!sigismember (&start_ignored, caught[i]))
      sigaddset (&run_signals, caught[i]);
  pthread_sigmask (SIG_BLOCK, &run_signals, NULL);
  g_thread_unref (g_thread_new ("tessera-signals", signal_thread, NULL));
}

static void
child_exited (GPid pid, int wait_status, gpointer data)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  state->child = 0;
  g_mutex_unlock (&state->lock);
  state->wait_status = wait_status;
  g_main_loop_quit (state->loop);
}

static char *
job_task_id (const char *name, const char *command)
{
  g_autofree char *base = g_path_get_basename (name ? name : command);
  GString *s = g_string_new (NULL);

  for (const char *p = base; *p && s->len < 64; p++)
    g_string_append_c (s, g_ascii_isalnum (*p) || *p == '-' || *p == '_' ? *p : (*p == '.' ? '_' : '-'));
  if (s->len == 0)
    g_string_append (s, "run");
  return g_string_free (s, FALSE);
}

/* Holds the job (its lock, kept by the command too) and forks the
 * command behind its gate; the job names it from now on. An exit status
 * on failure, else 0. */
/* A run's end: its job files go through the folder it made (see
 * tessera_job_remove_file), then the folder, which is empty by then
 * (rmdir removes no link, and no folder with anything in it). */
static void
remove_job_files (TesseraJob *job, const char *job_dir)
{
  g_autofree char *lock_path = tessera_job_dup_lock_path (job);
  g_autofree char *lock_name = g_path_get_basename (lock_path);

  tessera_job_remove_file (job, "locks.json");
  tessera_job_unhold (job);
  tessera_job_remove_file (job, lock_name);
  g_rmdir (job_dir);
}

static int
start_command (GPtrArray *needs, TesseraJob *job, char **command, Gated *child, int *job_lock_number,
               TesseraProcess **child_process)
{
  g_autoptr(GPtrArray) resources = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int job_lock_fd, status = 0;

  /* The job lock is taken before the command is forked, which keeps a
   * descriptor of it: the lock then lasts exactly as long as the holding
   * (flock(1) passes its lock the same way), which is what a judge that
   * cannot see our pids (another host or pid namespace) uses. */
  if (!tessera_job_hold (job, &error))
    return fail (oserr_or (error, is_io_error (error) ? EXIT_IOERR : 1), "%s", error->message);
  job_lock_fd = tessera_job_dup_lock_fd (job);

  /* The command is the wrapper's stand-in: it gets its stdin, its other
   * descriptors and its process group. It waits behind a gate that opens
   * only once its locks are held and the lock files name it: they stay
   * valid if this wrapper is killed, and any peer reclaims them once the
   * command is gone. Were this wrapper killed before the gate opens, the
   * gate reads end-of-file and the command never runs without a valid
   * holding. */
  for (guint i = 0; i < needs->len; i++)
    g_ptr_array_add (resources, ((Need *) g_ptr_array_index (needs, i))->resource);
  gate_die_with_wrapper = tessera_fence_needed (resources);
  /* And what the command starts comes back to us when orphaned, for
   * the fence to end it too. */
  if (gate_die_with_wrapper && prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
    g_printerr (_("tessera: cannot become the subreaper of the command's processes: %s\n"), g_strerror (errno));
  /* A command that is gone before its gate opens must not kill us. */
  signal (SIGPIPE, SIG_IGN);
  if (!gated_spawn (command, job_lock_fd, child, &error))
    status = fail (oserr_or (error, 1), "%s", error->message);
  /* The command has its copy, under the same number. */
  *job_lock_number = job_lock_fd;
  if (job_lock_fd >= 0)
    close (job_lock_fd);
  if (status == 0)
    {
      *child_process = tessera_process_new_local (child->pid);
      if (!tessera_job_set_process (job, *child_process, &error))
        status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
    }
  return status;
}

/* -n is --no-wait, as in flock(1); it was --need: said when it is
 * followed by what --need takes. */
static gboolean run_short_n;
static gboolean run_no_wait;

static gboolean
set_no_wait (const char *option_name, const char *value, gpointer data, GError **error)
{
  run_no_wait = TRUE;
  if (g_str_equal (option_name, "-n"))
    run_short_n = TRUE;
  return TRUE;
}

/* The exit status -E N (--conflict-exit-code) gives: 0 to 255, as
 * flock(1)'s. */
static gboolean
parse_exit_code (const char *text, int *code, int *status)
{
  guint64 value;

  if (!g_ascii_string_to_unsigned (text, 10, 0, 255, &value, NULL))
    {
      *status = fail (EXIT_USAGE, _("--conflict-exit-code wants an exit status from 0 to 255, not “%s”"), text);
      return FALSE;
    }
  *code = (int) value;
  return TRUE;
}

static int
cmd_run (int argc, char **argv)
{
  g_auto(GStrv) need_args = NULL;
  g_auto(GStrv) command = NULL;
  g_autofree char *job_name = NULL;
  g_autofree char *timeout_text = NULL;
  g_autofree char *on_lost_text = NULL;
  g_autofree char *conflict_text = NULL;
  gboolean on_lost_end = FALSE;
  double timeout = -1;
  gboolean no_wait = FALSE;
  gboolean wait_for_capacity = FALSE;
  int conflict_status = EXIT_TEMPFAIL;
  int after_dashes = -1;
  /* A callback is given as data; ISO C has no cast between the two. */
  const union { GOptionArgFunc func; gpointer data; } no_wait_callback = { .func = set_no_wait };
  const GOptionEntry entries[] = {
    { "need", 0, 0, G_OPTION_ARG_STRING_ARRAY, &need_args,
      N_("A resource the command needs, with what of it (e.g. cpu=4, gpu=1:16G, db=shared)"), N_("NAME[=REQUEST]") },
    { "timeout", 'w', 0, G_OPTION_ARG_STRING, &timeout_text, N_("Give up after SECONDS (exit 75, or -E's)"),
      N_("SECONDS") },
    { "no-wait", 'n', G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, no_wait_callback.data,
      N_("Give up at once when something is not free (exit 75, or -E's)"), NULL },
    { "conflict-exit-code", 'E', 0, G_OPTION_ARG_STRING, &conflict_text,
      N_("The exit status when the run gives up, at once or at its timeout (75 by default)"), N_("N") },
    { "wait-for-capacity", 0, 0, G_OPTION_ARG_NONE, &wait_for_capacity,
      N_("Wait for a resource smaller than the request to grow, instead of failing at once (exit 69)"), NULL },
    { "name", 0, 0, G_OPTION_ARG_STRING, &job_name, N_("The job's name in lock files (default: the command's)"), N_("NAME") },
    { "on-lost", 0, 0, G_OPTION_ARG_STRING, &on_lost_text,
      N_("When a lock file of this run disappears while the command runs: warn (default) or end the command"),
      N_("warn|end") },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &command, NULL, NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context =
    new_context (_("--need NAME[=REQUEST]… [--timeout SECONDS | --no-wait] [-E N] [--wait-for-capacity] -- COMMAND "
                   "[ARG…]"),
                 _("Run COMMAND once every resource it needs is held, with the environment the locks provide "
                   "(TESSERA_LOCKS, CUDA_VISIBLE_DEVICES…), and give them back when it ends. "
                   "The exit status is the command's (128+N when killed by signal N)."), entries);
  g_autoptr(TesseraConfig) config = NULL;
  g_autoptr(GPtrArray) needs = g_ptr_array_new_with_free_func ((GDestroyNotify) need_free);
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraProcess) child_process = NULL;
  Gated child = { 0, -1, -1 };
  int exec_errno;
  int job_lock_number = -1;
  gboolean fork_first, acquired = FALSE;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) env = NULL;
  g_autofree char *state_dir = tessera_config_dup_state_dir ();
  g_autofree char *identifier = NULL;
  g_autofree char *task_id = NULL;
  g_autofree char *job_dir = NULL;
  int job_dir_fd = -1;
  g_autofree char *job_uri = NULL;
  g_autofree char *locks_path = NULL;
  /* What --on-lost and the fence watch, one of each per need. */
  g_autoptr(GPtrArray) lost_paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) lost_names = g_ptr_array_new ();
  g_autoptr(GArray) lost_stats = g_array_new (FALSE, TRUE, sizeof (struct stat));
  g_autoptr(GPtrArray) lost_texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) lost_resources = g_ptr_array_new ();
  int status = 0;

  g_option_context_set_strict_posix (context, TRUE);
  /* After the first “--”: the command, unless the parse stops before. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        after_dashes = argc - i - 1;
        break;
      }
  if (!parse (context, &argc, &argv, &status))
    return status;
  no_wait = run_no_wait;
  /* `-n cpu=4 -- COMMAND`, -n taken for --need: the parse stopped at
   * cpu=4, before the “--”. */
  if (run_short_n && (need_args == NULL ||
                      (command != NULL && after_dashes >= 0 && g_strv_length (command) > (guint) after_dashes) ||
                      (command != NULL && command[0] != NULL && strchr (command[0], '=') != NULL)))
    return fail (EXIT_USAGE, _("-n means --no-wait (as in flock(1)): name what the command needs with "
                               "--need NAME[=REQUEST]"));
  if (command == NULL || command[0] == NULL)
    return fail (EXIT_USAGE, _("no command to run (put it after “--”)"));
  if (need_args == NULL || need_args[0] == NULL)
    return fail (EXIT_USAGE, _("nothing needed: give at least one --need NAME[=REQUEST]"));
  if (conflict_text != NULL && !parse_exit_code (conflict_text, &conflict_status, &status))
    return status;
  if (timeout_text != NULL)
    {
      if (!parse_seconds ("--timeout", timeout_text, TRUE, &timeout, &status))
        return status;
      if (isinf (timeout))
        timeout = -1;   /* for ever, as without --timeout */
    }
  if (no_wait && timeout_text != NULL)
    return fail (EXIT_USAGE, _("--timeout and --no-wait go separately"));
  if (on_lost_text != NULL && !g_str_equal (on_lost_text, "warn") && !g_str_equal (on_lost_text, "end"))
    return fail (EXIT_USAGE, _("--on-lost wants “warn” or “end”, not “%s”"), on_lost_text);
  on_lost_end = g_strcmp0 (on_lost_text, "end") == 0;
  /* Signals are caught from here on (opening resources starts threads). */
  run_state.share_terminal = in_terminal_foreground ();
  run_state.cancel = g_cancellable_new ();
  run_state.opening = g_strdup ("");
  run_state.no_wait = no_wait;
  run_state.conflict_status = conflict_status;
  lock_note_started = TRUE;
  run_state.open_deadline = no_wait ? g_get_monotonic_time ()
                            : timeout >= 0 ? g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC) : -1;
  quiet_notices = TRUE;
  start_signal_thread ();
  if ((config = load_config (&status)) == NULL)
    return status;
  defer_log ();

  for (guint i = 0; need_args[i] != NULL; i++)
    {
      g_auto(GStrv) kv = g_strsplit (need_args[i], "=", 2);
      Need *need;

      if (kv[0] == NULL || *kv[0] == '\0')   /* g_strsplit ("") is empty */
        return fail (EXIT_USAGE, _("“--need %s” names no resource (give NAME or NAME=REQUEST)"), need_args[i]);
      need = g_new0 (Need, 1);
      need->name = g_strdup (kv[0]);
      need->request = g_strdup (kv[1]);
      g_ptr_array_add (needs, need);
      for (guint j = 0; j + 1 < needs->len; j++)
        if (g_str_equal (((Need *) g_ptr_array_index (needs, j))->name, need->name))
          return fail (EXIT_USAGE, _("%s is needed twice"), need->name);
      g_mutex_lock (&run_state.lock);
      g_free (run_state.opening);
      run_state.opening = g_strdup (need->name);
      g_mutex_unlock (&run_state.lock);
      need->resource = open_resource (config, need->name, &status);
      if (need->resource == NULL)
        return status;
    }
  g_mutex_lock (&run_state.lock);
  g_clear_pointer (&run_state.opening, g_free);
  g_mutex_unlock (&run_state.lock);
  g_ptr_array_sort (needs, compare_needs);

  /* A job in experimaestro's layout: <state>/jobs/<id>/<task>, holding
   * <task>.lock and writing <task>.pid. */
  task_id = job_task_id (job_name, command[0]);
  identifier = g_strdup_printf ("%s-%d-%08x", g_get_host_name (), (int) getpid (), g_random_int ());
  for (char *p = identifier; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      *p = '-';
  job_dir = dup_job_folder (needs, state_dir, identifier, &job_dir_fd, &error);
  if (job_dir == NULL)
    return fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
  job_uri = g_build_filename (job_dir, task_id, NULL);
  /* The job's files go through the folder just checked, never by path. */
  job = tessera_job_new_at (task_id, identifier, job_uri, job_dir_fd, &error);
  close (job_dir_fd);
  if (job == NULL)
    return fail (oserr_or (error, EXIT_USAGE), "%s", error->message);
  /* A run that may wait forks its command first, so that the lock files
   * name it from their first version (one write each). One that may not
   * wait does so once it holds: on a busy resource it then starts nothing
   * (the second write costs less than a fork that comes to nothing). */
  fork_first = !no_wait;
  if (fork_first)
    status = start_command (needs, job, command, &child, &job_lock_number, &child_process);
  else
    {
      g_autoptr(TesseraProcess) self = tessera_process_new_self ();

      if (!tessera_job_set_process (job, self, &error))
        status = fail (oserr_or (error, EXIT_USAGE), "%s", error->message);
    }
  if (status == 0)
    {
      interactive = isatty (2);
      status = acquire_all (needs, job, locks, timeout, no_wait, wait_for_capacity, &run_state,
                            fork_first ? child.report : -1);
      acquired = status == 0;
      g_mutex_lock (&run_state.lock);
      run_state.settling = TRUE;
      g_mutex_unlock (&run_state.lock);
    }
  if (status == 0)
    {
      locks_path = g_build_filename (job_dir, "locks.json", NULL);
      if (!tessera_dynamic_dependency_locks_save_for_job (locks, job, &error))
        status = fail (oserr_or (error, EXIT_IOERR), "%s", error->message);
      /* The command finds locks.json by path: it must lead there. */
      else if (!tessera_job_folder_is_at_path (job))
        status = fail (EXIT_IOERR, _("The job folder %s was moved while it was made (a co-user of the pool?)"),
                       job_dir);
    }
  if (status == 0 && !fork_first)
    status = start_command (needs, job, command, &child, &job_lock_number, &child_process);
  /* From here a signal goes to the child (at its gate, it ends there);
   * one that came before stops everything. */
  if (status == 0)
    {
      g_mutex_lock (&run_state.lock);
      run_state.child = child.pid;
      g_mutex_unlock (&run_state.lock);
      if (g_atomic_int_get (&run_state.pending_signal) != 0)
        status = 128 + g_atomic_int_get (&run_state.pending_signal);
    }
  if (status != 0)
    {
      /* Nothing is held on a failure: all or none. The command never runs. */
      if (child.pid > 0)
        {
          int wstatus;

          gated_open (&child, FALSE, NULL);
          wstatus = gated_wait (child.pid);
          /* Ended as its command did; a signal of ours takes precedence,
           * also one that came after the guard had ended the wait. */
          if (!acquired && g_atomic_int_get (&run_state.command_gone) &&
              g_atomic_int_get (&run_state.pending_signal) != 0)
            status = 128 + g_atomic_int_get (&run_state.pending_signal);
          else if (!acquired && g_atomic_int_get (&run_state.command_gone))
            {
              status = exit_status_of (wstatus);
              if (WIFSIGNALED (wstatus))
                g_printerr (_("tessera: the command was killed by signal %d (%s) while this run waited; "
                              "nothing was taken\n"), WTERMSIG (wstatus), g_strsignal (WTERMSIG (wstatus)));
              else
                g_printerr (_("tessera: the command ended (status %d) while this run waited; nothing was taken\n"),
                            status);
            }
        }
      if (acquired)
        release_or_say (TESSERA_LOCK (locks));
      remove_job_files (job, job_dir);
      return status;
    }

  env = g_get_environ ();
  env = g_environ_setenv (env, "TESSERA_LOCKS", locks_path, TRUE);
  /* The command's copy of the job lock, under the number it had here. */
  if (job_lock_number >= 0)
    {
      g_autofree char *text = g_strdup_printf ("%d", job_lock_number);
      env = g_environ_setenv (env, "TESSERA_JOB_LOCK_FD", text, TRUE);
    }
  for (guint i = 0; i < needs->len; i++)
    {
      g_auto(GStrv) extra = tessera_dynamic_dependency_lock_dup_environment (((Need *) g_ptr_array_index (needs, i))->lock);
      for (guint j = 0; extra != NULL && extra[j] != NULL; j++)
        {
          g_auto(GStrv) kv = g_strsplit (extra[j], "=", 2);
          env = g_environ_setenv (env, kv[0], kv[1] ? kv[1] : "", TRUE);
        }
    }

  /* A run that forked its command first names it in its lock files
   * already: then this writes nothing more (unless a resource type does
   * more on job_started). With --no-wait it names the command now. */
  if (!tessera_dynamic_dependency_locks_job_started (locks, job, child_process, &error))
    g_printerr (_("tessera: %s\n"), error->message);
  /* What --on-lost compares with, read before the command runs: once it
   * runs, nothing on the pool's file system may come before the fence
   * starts (a file server that hangs there would keep it from ever
   * starting). */
  for (guint i = 0; i < needs->len; i++)
    {
      Need *need = g_ptr_array_index (needs, i);

      /* None for a pool in another store (etcd), which has no lock
       * file to look at: its lease and the fence keep watch. */
      char *lock_path = tessera_dynamic_dependency_lock_dup_lock_file_path (need->lock);
      struct stat st = { 0 };

      g_ptr_array_add (lost_paths, lock_path);
      g_ptr_array_add (lost_names, need->name);
      /* As the command starts with it: what a rewrite would change. */
      g_ptr_array_add (lost_texts, lock_path != NULL ? read_own_lock_file (lock_path, &st) : NULL);
      g_array_append_val (lost_stats, st);
      g_ptr_array_add (lost_resources, need->resource);
    }
  /* Open before the gate is: from here no lock a peer keeps comes before
   * the command runs (a failed exec reaps it, and the run settles). */
  g_mutex_lock (&run_state.lock);
  run_state.gate_open = TRUE;
  g_mutex_unlock (&run_state.lock);
  exec_errno = gated_open (&child, TRUE, env);
  if (exec_errno != 0)
    {
      gated_wait (child.pid);
      g_mutex_lock (&run_state.lock);
      run_state.child = 0;
      g_mutex_unlock (&run_state.lock);
      if (exec_errno == ENOENT && strchr (command[0], '/') == NULL)
        fail (127, _("%s: command not found"), command[0]);
      else
        fail (126, _("cannot run “%s”: %s"), command[0], g_strerror (exec_errno));
      status = exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
    }
  else
    {
      g_autoptr(GHashTable) told = g_hash_table_new (g_str_hash, g_str_equal);
      LostWatch lost = { lost_paths, lost_names, told, on_lost_end, &run_state, lost_stats, lost_texts };
      TesseraFence *fence;
      guint lost_source;

      loop = g_main_loop_new (NULL, FALSE);
      run_state.loop = loop;
      g_child_watch_add (child.pid, child_exited, &run_state);
      lost_source = g_timeout_add_seconds (1, check_lost, &lost);
      fence = tessera_fence_start (lost_resources, lost_names, child.pid, signal_command, &run_state);
      g_main_loop_run (loop);
      g_source_remove (lost_source);
      status = tessera_fence_fenced (fence) ? TESSERA_EXIT_FENCED : exit_status_of (run_state.wait_status);
      tessera_fence_stop (fence);
    }
  gated_close (&child);
  /* Orphans that came back to us as their subreaper and have ended. */
  if (gate_die_with_wrapper)
    while (waitpid (-1, NULL, WNOHANG) > 0)
      ;

  tessera_dynamic_dependency_locks_job_finished (locks, job, NULL);
  release_or_say (TESSERA_LOCK (locks));
  remove_job_files (job, job_dir);
  return status;
}

/* ---------------------------------------------------------------------- */

static int cmd_help (int argc, char **argv);
static int usage (FILE *out, int status);

static const struct
{
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} commands[] = {
  { "run", cmd_run, N_("Run a command once the resources it needs are held") },
  { "status", cmd_status, N_("Show capacity, what is free and who holds what") },
  { "set", cmd_set, N_("Change a resource's run-time information (e.g. its total)") },
  { "clean", cmd_clean, N_("Remove dead and orphaned holders now") },
  { "watch", cmd_watch, N_("Show the resources again after every change") },
  { "plugins", cmd_plugins, N_("List plugin folders, types and classes") },
  { "init", cmd_init, N_("Prepare a pool folder, shared by a group if asked, and its configured resources") },
  { "help", cmd_help, N_("Show this list, or a command's options (tessera help COMMAND)") },
};

static int
run_command (int argc, char **argv)
{
  for (guint c = 0; c < G_N_ELEMENTS (commands); c++)
    if (g_str_equal (argv[0], commands[c].name))
      {
        /* Usage lines read "tessera run [OPTION…]". */
        g_autofree char *prgname = g_strdup_printf ("tessera %s", commands[c].name);

        g_set_prgname (prgname);
        return commands[c].run (argc, argv);
      }
  fail (EXIT_USAGE, _("unknown command “%s”"), argv[0]);
  return try_help ("tessera");
}

/* `tessera help` is `tessera --help`; `tessera help CMD` is `tessera CMD --help`. */
static int
cmd_help (int argc, char **argv)
{
  char *help_argv[] = { NULL, (char *) "--help", NULL };

  if (argc < 2)
    return usage (stdout, 0);
  if (g_str_equal (argv[1], "help"))
    return usage (stdout, 0);
  help_argv[0] = argv[1];
  return run_command (2, help_argv);
}

/* Descriptors a command may need at once beyond those open when it
 * starts: the library lives within 64 (a quarter of its limit for holders'
 * pidfds); a few more for the command, its gate and its fence. */
#define DESCRIPTORS_NEEDED 64

/* Makes sure that descriptors do not run out half-way through a command,
 * nor in GLib, which aborts when it cannot make the eventfd of a main
 * context: raises the soft limit to the hard one (the command gets the
 * first back, see gated_child()), then opens DESCRIPTORS_NEEDED of them.
 * FALSE, with one line said, when they cannot be had. Before any thread
 * or main context. */
static gboolean
ensure_descriptors (int *status)
{
  struct rlimit raised;
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  int fd, saved = 0;

  if (getrlimit (RLIMIT_NOFILE, &start_nofile) == 0 && start_nofile.rlim_cur < start_nofile.rlim_max)
    {
      raised = start_nofile;
      raised.rlim_cur = raised.rlim_max;
      /* An infinite hard limit is more than the kernel allows: kept as it is. */
      start_nofile_raised = setrlimit (RLIMIT_NOFILE, &raised) == 0;
    }
  /* The kind GLib makes for a main context, then copies. */
  fd = eventfd (0, EFD_CLOEXEC);
  if (fd < 0 && errno != EMFILE && errno != ENFILE)
    fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  while (fd >= 0)
    {
      g_array_append_val (fds, fd);
      if (fds->len >= DESCRIPTORS_NEEDED)
        break;
      fd = fcntl (g_array_index (fds, int, 0), F_DUPFD_CLOEXEC, 0);
    }
  if (fd < 0)
    saved = errno;
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  if (saved == EMFILE)
    {
      struct rlimit now;
      g_autofree char *limit = getrlimit (RLIMIT_NOFILE, &now) == 0 && now.rlim_cur != RLIM_INFINITY
                               ? g_strdup_printf ("%llu", (unsigned long long) now.rlim_cur) : g_strdup ("?");

      *status = fail (EXIT_OSERR, _("too few file descriptors: only %u more can be opened under this process's limit "
                                    "of %s (ulimit -n, at most ulimit -Hn), Tessera needs %u"),
                      fds->len, limit, DESCRIPTORS_NEEDED);
      return FALSE;
    }
  if (saved == ENFILE)
    {
      *status = fail (EXIT_OSERR, _("too few file descriptors: %s (the system's limit, fs.file-max)"),
                      g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static int
usage (FILE *out, int status)
{
  g_autoptr(GString) text = g_string_new (NULL);

  /* Translators: FILE and COMMAND as in the commands' usage lines */
  g_string_append_printf (text, "%s\n  %s\n  tessera --version\n\n%s\n", _("Usage:"),
                          _("tessera [--config FILE] COMMAND [OPTION…]"), _("Commands:"));
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    g_string_append_printf (text, "  %-9s %s\n", commands[i].name, _(commands[i].summary));
  g_string_append_printf (text, "\n%s\n", _("“tessera COMMAND --help” tells more; see also tessera(1)."));
  if (out == stdout)
    g_print ("%s", text->str);
  else
    g_printerr ("%s", text->str);
  return status;
}

/* GLib's own words for an unknown option, as every command's options
 * say it (in the same language). */
static char *
unknown_option_message (const char *option)
{
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  char *args[] = { (char *) "tessera", (char *) option, NULL };
  char **parsed = args;
  int n = 2;
  g_autoptr(GError) error = NULL;

  g_option_context_set_help_enabled (context, FALSE);
  if (!g_option_context_parse (context, &n, &parsed, &error))
    return g_strdup (error->message);
  return g_strdup_printf (_("unknown option %s"), option);
}

int
main (int argc, char **argv)
{
  int i = 1, status;

  remember_start_signals ();
  g_log_set_writer_func (log_writer, NULL, NULL);
  setlocale (LC_ALL, "");
  /* TESSERA_LOCALEDIR: catalogues of a build tree (meson devenv, tests). */
  bindtextdomain (GETTEXT_PACKAGE, g_getenv ("TESSERA_LOCALEDIR") && *g_getenv ("TESSERA_LOCALEDIR")
                                   ? g_getenv ("TESSERA_LOCALEDIR") : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  /* Everything printed goes through these: in the locale's character set. */
  g_set_print_handler (print_out);
  g_set_printerr_handler (print_err);

  /* Descriptors first: GLib aborts when it cannot make a main context's
   * eventfd, so the default one is made now, while they are there. */
  if (!ensure_descriptors (&status))
    return status;
  g_main_context_default ();

  /* Options before the command. */
  for (; i < argc && argv[i][0] == '-'; i++)
    {
      if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h"))
        return usage (stdout, 0);
      else if (g_str_equal (argv[i], "--version"))
        {
          /* Translators: version, the newest pool protocol it follows, the build (git describe) */
          g_print (_("tessera %s (pool protocol %d, build %s)\n"), PACKAGE_VERSION, tessera_get_pool_protocol (),
                   tessera_build_id);
          return 0;
        }
      else if ((g_str_equal (argv[i], "--config") || g_str_equal (argv[i], "-c")) && i + 1 < argc)
        opt_config = argv[++i];
      else if (g_str_has_prefix (argv[i], "--config="))
        opt_config = argv[i] + strlen ("--config=");
      else
        {
          g_autofree char *message = unknown_option_message (argv[i]);

          fail (EXIT_USAGE, "%s", message);
          return try_help ("tessera");
        }
    }
  if (i >= argc)
    return usage (stderr, EXIT_USAGE);
  return run_command (argc - i, argv + i);
}
