/* tessera-demo.c: contention and recovery, visibly.
 *
 * Five worker processes share a pool of 2 counter tokens (the countertoken
 * plugin, found through the registry). One of them is killed with SIGKILL
 * while it holds a token: a waiting worker gets that token at once, woken
 * by the holder's death rather than by polling, and the pool ends with
 * every token back.
 *
 *   meson devenv -C _build examples/tessera-demo [FOLDER]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 5
#define TOKENS 2

static gint64 t0;

static void
say (const char *who, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
say (const char *who, const char *format, ...)
{
  g_autofree char *text = NULL;
  const char *start = g_getenv ("DEMO_T0");
  gint64 origin = start ? g_ascii_strtoll (start, NULL, 10) : t0;
  va_list ap;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  printf ("%6.2fs  %-9s %s\n", (g_get_monotonic_time () - origin) / 1e6, who, text);
  fflush (stdout);
}

static TesseraTrackedDynamicResource *
open_pool (const char *folder, GError **error)
{
  GType type = tessera_registry_lookup_resource_type (tessera_registry_get_default (), "countertoken", error);

  if (type == G_TYPE_INVALID)
    return NULL;
  return g_initable_new (type, NULL, error, "name", "demo", "path", folder,
                         "total", (gint64) TOKENS, NULL);
}

static int
held_tokens (TesseraTrackedDynamicResource *pool)
{
  g_autoptr(GPtrArray) files = NULL;

  tessera_tracked_dynamic_resource_update (pool, NULL);
  files = tessera_tracked_dynamic_resource_list_lock_files (pool);
  return (int) files->len;
}

static int
worker (const char *id, const char *folder)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraTrackedDynamicResource) pool = open_pool (folder, &error);
  g_autofree char *who = g_strdup_printf ("worker %s", id);
  g_autofree char *job_uri = g_build_filename (folder, "..", "jobs", id, "demo", NULL);
  g_autofree char *canonical = g_canonicalize_filename (job_uri, NULL);
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;

  if (pool == NULL)
    {
      fprintf (stderr, "%s: %s\n", who, error->message);
      return 1;
    }
  job = tessera_job_new ("demo", id, canonical, &error);
  if (job == NULL || !tessera_job_set_process (job, self, &error))
    {
      fprintf (stderr, "%s: %s\n", who, error->message);
      return 1;
    }
  dep = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (pool), job, "1", &error);
  say (who, "(pid %d) wants a token", getpid ());
  lock = tessera_dynamic_dependency_lock (dep, 60, NULL, &error);
  if (lock == NULL)
    {
      fprintf (stderr, "%s: %s\n", who, error->message);
      return 1;
    }
  say (who, "got a token");
  g_usleep (1500 * 1000);
  say (who, "done, gives its token back");
  if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
    {
      fprintf (stderr, "%s: %s\n", who, error->message);
      return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraTrackedDynamicResource) pool = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *folder = NULL;
  g_autofree char *t0_text = NULL;
  GSubprocess *workers[WORKERS];
  GPid victim = 0;

  if (argc == 4 && strcmp (argv[1], "--worker") == 0)
    return worker (argv[2], argv[3]);

  t0 = g_get_monotonic_time ();
  if (argc > 1)
    folder = g_canonicalize_filename (argv[1], NULL);
  else
    {
      tmp = g_dir_make_tmp ("tessera-demo-XXXXXX", &error);
      if (tmp == NULL)
        {
          fprintf (stderr, "tessera-demo: %s\n", error->message);
          return 1;
        }
      folder = g_build_filename (tmp, "pool", NULL);
    }
  pool = open_pool (folder, &error);
  if (pool == NULL)
    {
      fprintf (stderr, "tessera-demo: %s\n", error->message);
      return 1;
    }
  say ("demo", "a pool of %d tokens in %s, %d workers want one each", TOKENS, folder, WORKERS);

  t0_text = g_strdup_printf ("%" G_GINT64_FORMAT, t0);
  g_setenv ("DEMO_T0", t0_text, TRUE);
  for (int i = 0; i < WORKERS; i++)
    {
      g_autofree char *id = g_strdup_printf ("%d", i + 1);
      workers[i] = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, argv[0], "--worker", id, folder, NULL);
      if (workers[i] == NULL)
        {
          fprintf (stderr, "tessera-demo: %s\n", error->message);
          return 1;
        }
      g_usleep (100 * 1000);
    }

  /* Kill a holder while it holds. */
  g_usleep (500 * 1000);
  {
    g_autoptr(GPtrArray) files = NULL;
    tessera_tracked_dynamic_resource_update (pool, NULL);
    files = tessera_tracked_dynamic_resource_list_lock_files (pool);
    for (guint i = 0; i < files->len && victim == 0; i++)
      {
        TesseraProcess *holder = tessera_dynamic_lock_file_get_process (g_ptr_array_index (files, i));
        if (holder != NULL)
          victim = tessera_process_get_pid (holder);
      }
  }
  if (victim != 0)
    {
      say ("demo", "kill -9 %d, a worker holding a token: %d/%d tokens held", (int) victim,
           held_tokens (pool), TOKENS);
      kill (victim, SIGKILL);
    }

  for (int i = 0; i < WORKERS; i++)
    {
      g_subprocess_wait (workers[i], NULL, NULL);
      g_object_unref (workers[i]);
    }
  say ("demo", "all workers ended: %d/%d tokens held, %s", held_tokens (pool), TOKENS,
       held_tokens (pool) == 0 ? "the pool has recovered" : "SOMETHING LEAKED");
  g_clear_object (&pool);
  if (tmp != NULL)
    {
      g_autofree char *cmd = NULL;
      g_autofree char *quoted = g_shell_quote (tmp);
      cmd = g_strdup_printf ("rm -rf %s", quoted);
      if (system (cmd) != 0)
        fprintf (stderr, "tessera-demo: could not remove %s\n", tmp);
    }
  return 0;
}
