/* tessera.c: the `tessera` command — run a command holding resources,
 * and look after the pools. The commands' table, the global options
 * and main().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tessera-config.h"

#include "tessera-commands.h"
#include "tessera-options.h"
#include "tessera-output.h"

#include "tessera-child.h"

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
  { "hosts", cmd_hosts, N_("Show the hosts that use each pool, their heartbeat and their Tessera") },
  { "plugins", cmd_plugins, N_("List plugin folders, types and classes") },
  { "init", cmd_init, N_("Prepare a pool folder, shared by a group if asked, and its configured resources") },
  { "config", cmd_config, N_("Show where the configuration comes from and what it defines, or check a file") },
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

/* The descriptors open below @limit, listed in /proc/self/fd (but the
 * one that lists them); -1 when it cannot be read (no /proc, or no
 * descriptor left to read it with). */
static gint64
count_open_descriptors (guint64 limit)
{
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *entry;
  gint64 count = 0;

  if (dir == NULL)
    return -1;
  errno = 0;
  while ((entry = readdir (dir)) != NULL)
    {
      char *end;
      guint64 fd;

      if (entry->d_name[0] == '.')
        continue;
      fd = g_ascii_strtoull (entry->d_name, &end, 10);
      if (end == entry->d_name || *end != '\0')
        break;   /* not a descriptor's number: trust nothing of it */
      if (fd < limit && fd != (guint64) dirfd (dir))
        count++;
    }
  if (entry != NULL || errno != 0)
    count = -1;
  closedir (dir);
  return count;
}

/* Whether DESCRIPTORS_NEEDED descriptors can be had, told in a handful of
 * calls rather than ~130 (each costs, on a virtual machine above all):
 * the free numbers under the soft limit, counted, and one eventfd, which
 * alone shows that the kind GLib needs can be made now (the system's
 * limit, fs.file-max, can only be seen by trying). FALSE when unsure:
 * the caller then opens them one by one. */
static gboolean
descriptors_free (void)
{
  struct rlimit now;
  guint64 limit;
  gint64 open;
  int fd;

  if (getrlimit (RLIMIT_NOFILE, &now) < 0)
    return FALSE;
  limit = now.rlim_cur == RLIM_INFINITY ? G_MAXUINT64 : (guint64) now.rlim_cur;
  fd = eventfd (0, EFD_CLOEXEC);
  if (fd < 0)
    return FALSE;
  close (fd);
  open = count_open_descriptors (limit);
  return open >= 0 && (guint64) open <= limit && limit - (guint64) open >= DESCRIPTORS_NEEDED;
}

/* Makes sure that descriptors do not run out half-way through a command,
 * nor in GLib, which aborts when it cannot make the eventfd of a main
 * context: raises the soft limit to the hard one (the command gets the
 * first back, see gated_child()), then checks that DESCRIPTORS_NEEDED of
 * them are free (descriptors_free()), or else opens them, which tells
 * how many could be. FALSE, with one line said, when they cannot be had.
 * Before any thread or main context. */
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
  if (descriptors_free ())
    return TRUE;
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
                   tessera_get_build_id ());
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
