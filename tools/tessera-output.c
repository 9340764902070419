/* tessera-output.c: what the command says and how it ends: a failure's
 * one line and exit status, text in the locale's character set, and the
 * library's messages, held back while they may be superseded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "tessera-describe.h"
#include "tessera-output.h"

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

/* A --json answer: what @builder built, pretty-printed (JSON is UTF-8
 * whatever the locale). */
void
print_json (JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = json_builder_get_root (builder);
  g_autofree char *text = json_to_string (root, TRUE);

  g_print ("%s\n", text);
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

/* The library's audit lines (who did what to a pool: grants, releases,
 * reclaims; set, clean --force and --host), never on the terminal: to
 * the journal where one runs, else to syslog(3) as "tessera", facility
 * authpriv (who holds what, and their command lines, are for the pool's
 * administrators: Debian's rsyslog writes it to /var/log/auth.log, read
 * by root and adm), priority info. The lines are for machines: English
 * key=value pairs, never translated. */
static GLogWriterOutput
write_audit (GLogLevelFlags level, const GLogField *fields, gsize n_fields, const char *message)
{
  static gsize opened;
  g_autofree GLogField *all = g_new (GLogField, n_fields + 2);

  memcpy (all, fields, n_fields * sizeof (GLogField));
  all[n_fields] = (GLogField) { "SYSLOG_IDENTIFIER", "tessera", -1 };
  all[n_fields + 1] = (GLogField) { "SYSLOG_FACILITY", "10", -1 };   /* authpriv */
  if (g_log_writer_journald (level, all, n_fields + 2, NULL) == G_LOG_WRITER_HANDLED)
    return G_LOG_WRITER_HANDLED;
  if (g_once_init_enter (&opened))
    {
      openlog ("tessera", LOG_PID, LOG_AUTHPRIV);
      g_once_init_leave (&opened, 1);
    }
  syslog (LOG_AUTHPRIV | LOG_INFO, "%s", message);
  return G_LOG_WRITER_HANDLED;
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
  if (g_strcmp0 (domain, "Tessera-Audit") == 0 && message != NULL)
    return write_audit (level, fields, n_fields, message);
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
void
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
void
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
