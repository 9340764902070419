/* tessera-stress-holder.c: one holder of the stress run, through the public
 * API and the registry only, as any program embedding Tessera would be.
 *
 *   tessera-stress-holder ROOT ID LOG OPTIONS REQUEST...
 *
 * ROOT holds one lock folder per resource (cpu: countertoken, gpu, mutex).
 * REQUEST is RESOURCE=VALUE (cpu=2, gpu=1, mutex=shared); resources are
 * taken in the order given, which the driver keeps fixed so that holders
 * waiting with a resource in hand cannot deadlock. OPTIONS is a
 * comma-separated list:
 *   hold=MS       hold between MS/2 and MS milliseconds (default 100)
 *   min-age=S     the resources' min-age (orphan lock files), seconds
 *   timeout=S     give up waiting after S seconds (default 600)
 *   late=MS       acquire with no process recorded, record it only after
 *                 up to MS ms (the window between a lock file and its
 *                 process that orphan handling covers)
 *   die-late      SIGKILL itself inside that window
 *
 * The holder appends to LOG, one write per line (O_APPEND):
 *   S <µs> ID RESOURCE REQUEST     before asking
 *   A <µs> ID RESOURCE INFO        once granted (INFO: count, devices, mode)
 *   R <µs> ID RESOURCE INFO        before releasing
 *   K <µs> ID                      before killing itself
 * with µs from the monotonic clock. Exit status: 0 done, 1 not granted.
 *
 * With TESSERA_STRESS_ETCD_ENDPOINTS set (comma-separated URLs), the
 * pools live in etcd instead, under TESSERA_STRESS_ETCD_PREFIX (a prefix
 * ending in "/") with a lease of TESSERA_STRESS_ETCD_LEASE seconds; the
 * folders under ROOT then keep only what a resource type keeps locally
 * (a mutex's intents).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct
{
  char *resource;
  char *request;
  TesseraDynamicResource *object;
  TesseraDynamicDependencyLock *lock;
  char *info;
} Holding;

static int log_fd = -1;

static void
log_line (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
log_line (const char *format, ...)
{
  va_list args;
  g_autofree char *body = NULL;
  g_autofree char *line = NULL;
  gssize n;

  va_start (args, format);
  body = g_strdup_vprintf (format, args);
  va_end (args);
  line = g_strdup_printf ("%c %" G_GINT64_FORMAT "%s\n", body[0], g_get_monotonic_time (), body + 1);
  n = (gssize) strlen (line);
  if (write (log_fd, line, n) != n)
    exit (3);
}

static G_NORETURN void
fail (const char *what, const GError *error)
{
  g_printerr ("stress-holder: %s: %s\n", what, error ? error->message : "?");
  exit (2);
}

static const char *
type_of (const char *resource)
{
  if (strcmp (resource, "cpu") == 0)
    return "countertoken";
  return resource;
}

static TesseraDynamicResource *
open_resource (const char *root, const char *resource, const char *min_age)
{
  g_autofree char *folder = g_build_filename (root, resource, NULL);
  const char *endpoints = g_getenv ("TESSERA_STRESS_ETCD_ENDPOINTS");
  const char *prefix = g_getenv ("TESSERA_STRESS_ETCD_PREFIX");
  const char *lease = g_getenv ("TESSERA_STRESS_ETCD_LEASE");
  const char *keys[] = { "lock-folder", "min-age", "store", "endpoints", "prefix", "lease", NULL };
  const char *values[] = { folder, min_age, "etcd", endpoints, prefix ? prefix : "/tessera/",
                           lease ? lease : "15", NULL };
  g_autoptr(GError) error = NULL;
  TesseraDynamicResource *object;

  if (endpoints == NULL)
    keys[2] = values[2] = NULL;   /* a folder pool */
  object = tessera_registry_create_resource (tessera_registry_get_default (), type_of (resource),
                                             resource, keys, values, &error);
  if (object == NULL)
    fail (resource, error);
  return object;
}

/* What the holder got, in the auditor's words. */
static char *
describe (Holding *h)
{
  if (strcmp (h->resource, "gpu") == 0)
    {
      g_auto(GStrv) env = tessera_dynamic_dependency_lock_dup_environment (h->lock);
      const char *gpus = env ? g_environ_getenv (env, "TESSERA_GPUS") : NULL;
      return g_strdup (gpus && *gpus ? gpus : "-");
    }
  return g_strdup (h->request);
}

static void
holding_clear (Holding *h)
{
  g_free (h->resource);
  g_free (h->request);
  g_clear_object (&h->lock);
  g_clear_object (&h->object);
  g_free (h->info);
}

int
main (int argc, char **argv)
{
  g_autoptr(GArray) holdings = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraProcess) self = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) options = NULL;
  g_autofree char *uri = NULL;
  const char *root, *id, *min_age = "30";
  int hold_ms = 100, late_ms = -1;
  double timeout = 600;
  gboolean die_late = FALSE;

  if (argc < 6)
    {
      g_printerr ("usage: see the comment at the top of tessera-stress-holder.c\n");
      return 2;
    }
  root = argv[1];
  id = argv[2];
  log_fd = open (argv[3], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log_fd < 0)
    return 2;
  options = g_strsplit (argv[4], ",", -1);
  for (guint i = 0; options[i] != NULL; i++)
    {
      const char *o = options[i];
      if (g_str_has_prefix (o, "hold="))
        hold_ms = MAX (2, atoi (o + 5));
      else if (g_str_has_prefix (o, "min-age="))
        min_age = o + 8;
      else if (g_str_has_prefix (o, "timeout="))
        timeout = g_ascii_strtod (o + 8, NULL);
      else if (g_str_has_prefix (o, "late="))
        late_ms = atoi (o + 5);
      else if (strcmp (o, "die-late") == 0)
        die_late = TRUE;
    }

  self = tessera_process_new_self ();
  uri = g_build_filename (root, "jobs", id, "job", NULL);
  job = tessera_job_new ("stress", id, uri, &error);
  if (job == NULL)
    fail (id, error);
  if (late_ms < 0 && !tessera_job_set_process (job, self, &error))
    fail (id, error);

  holdings = g_array_new (FALSE, TRUE, sizeof (Holding));
  g_array_set_clear_func (holdings, (GDestroyNotify) holding_clear);
  for (int i = 5; i < argc; i++)
    {
      g_auto(GStrv) kv = g_strsplit (argv[i], "=", 2);
      Holding h = { 0 };

      if (kv[1] == NULL)
        {
          g_printerr ("stress-holder: “%s” is not RESOURCE=VALUE\n", argv[i]);
          return 2;
        }
      h.resource = g_strdup (kv[0]);
      h.request = g_strdup (kv[1]);
      h.object = open_resource (root, h.resource, min_age);
      g_array_append_val (holdings, h);
    }

  for (guint i = 0; i < holdings->len; i++)
    {
      Holding *h = &g_array_index (holdings, Holding, i);
      g_autoptr(TesseraDynamicDependency) dep = NULL;

      log_line ("S %s %s %s", id, h->resource, h->request);
      dep = tessera_dynamic_resource_create_dependency (h->object, job, h->request, &error);
      if (dep == NULL)
        fail (h->resource, error);
      h->lock = tessera_dynamic_dependency_lock (dep, timeout, NULL, &error);
      if (h->lock == NULL)
        {
          g_printerr ("stress-holder %s: %s: %s\n", id, h->resource, error->message);
          return 1;
        }
    }

  if (late_ms >= 0)
    {
      g_usleep ((gulong) g_random_int_range (0, late_ms + 1) * 1000);
      if (die_late)
        {
          log_line ("K %s", id);
          kill (getpid (), SIGKILL);
        }
      if (!tessera_job_set_process (job, self, &error))
        fail (id, error);
      for (guint i = 0; i < holdings->len; i++)
        if (!tessera_dynamic_dependency_lock_job_started (g_array_index (holdings, Holding, i).lock,
                                                          job, self, &error))
          fail (id, error);
    }

  for (guint i = 0; i < holdings->len; i++)
    {
      Holding *h = &g_array_index (holdings, Holding, i);
      h->info = describe (h);
      log_line ("A %s %s %s", id, h->resource, h->info);
    }
  g_usleep ((gulong) g_random_int_range (hold_ms / 2, hold_ms + 1) * 1000);
  for (guint i = holdings->len; i-- > 0;)
    {
      Holding *h = &g_array_index (holdings, Holding, i);
      log_line ("R %s %s %s", id, h->resource, h->info);
      g_assert_true (tessera_lock_release (TESSERA_LOCK (h->lock), NULL));
    }
  close (log_fd);
  return 0;
}
