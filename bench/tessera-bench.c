/* tessera-bench.c: measurements behind bench/run.sh. Each mode prints one
 * line "median=… p10=… p90=… [more]" in microseconds unless said.
 *
 *   tessera-bench cycle FOLDER OTHERS CYCLES
 *       acquire + release through the C API on a countertoken while OTHERS
 *       other lock files are held in the folder.
 *   tessera-bench handover FOLDER ROLE COUNT LOG
 *       two processes (ROLE a and b) pass a 1-token countertoken back and
 *       forth; each logs "R <µs>" just before releasing and "A <µs>" just
 *       after acquiring.
 *   tessera-bench throughput FOLDER SECONDS LOG
 *       cycle on a token for SECONDS; log the number of acquisitions, then
 *       the context switches and the CPU time (µs) of the whole process,
 *       its poller's thread included (where a busy pool's time goes).
 *   tessera-bench hold FOLDER
 *       hold one token and exit: the RSS of a process holding through the API.
 *   tessera-bench polling FOLDER
 *       wait 20 s on a full 1-token countertoken (held by a lock file naming
 *       this process); print "millirate=" the wake-ups per 1000 s in the
 *       second ten seconds (the resource's generation moves once per poll
 *       when nothing else changes): each is one ipc.lock take by the waiter.
 *   tessera-bench big FOLDER COUNT TIMEOUT
 *       wait up to TIMEOUT s for COUNT tokens of a 4-token countertoken;
 *       print "served=0|1 wait=" µs.
 *   tessera-bench crash FOLDER holder|waiter
 *       a 1-token countertoken. holder: take it, print "held", then sleep
 *       until killed. waiter: try once, print "waiting", wait up to 120 s
 *       and print "got=" the monotonic clock (µs) when it has it.
 *
 * With TESSERA_BENCH_ETCD set to an etcd cluster's endpoints (comma
 * separated), the pool lives in etcd instead of FOLDER, under the key
 * prefix TESSERA_BENCH_ETCD_PREFIX with a lease of
 * TESSERA_BENCH_ETCD_LEASE seconds (FOLDER stays the job folders' base).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static TesseraTrackedDynamicResource *
open_token (const char *folder, const char *total)
{
  const char *endpoints = g_getenv ("TESSERA_BENCH_ETCD");
  const char *prefix = g_getenv ("TESSERA_BENCH_ETCD_PREFIX");
  const char *lease = g_getenv ("TESSERA_BENCH_ETCD_LEASE");
  const char *keys[] = { "path", "total", "store", "endpoints", "prefix", "lease", NULL };
  const char *values[] = { folder, total, "etcd", endpoints, prefix ? prefix : "/tessera-bench/",
                           lease ? lease : "15", NULL };
  g_autoptr(GError) error = NULL;
  TesseraDynamicResource *resource;

  if (endpoints == NULL)
    keys[2] = values[2] = NULL;   /* a folder pool */
  resource = tessera_registry_create_resource (tessera_registry_get_default (), "countertoken", "bench",
                                               keys, values, &error);
  if (resource == NULL)
    {
      fprintf (stderr, "tessera-bench: %s\n", error->message);
      exit (1);
    }
  return TESSERA_TRACKED_DYNAMIC_RESOURCE (resource);
}

static TesseraJob *
make_job (const char *folder, const char *id)
{
  g_autofree char *uri = g_build_filename (folder, "..", "jobs", id, "bench", NULL);
  g_autofree char *canon = g_canonicalize_filename (uri, NULL);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  TesseraJob *job = tessera_job_new ("bench", id, canon, NULL);

  tessera_job_set_process (job, self, NULL);
  return job;
}

static TesseraDynamicDependencyLock *
acquire (TesseraTrackedDynamicResource *token, TesseraDynamicDependency *dep, double timeout)
{
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, timeout, NULL, &error);

  if (lock == NULL)
    {
      fprintf (stderr, "tessera-bench: %s\n", error->message);
      exit (1);
    }
  return lock;
}

static int
compare (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

static void
print_stats (gint64 *values, guint n)
{
  qsort (values, n, sizeof *values, compare);
  printf ("median=%" G_GINT64_FORMAT " p10=%" G_GINT64_FORMAT " p90=%" G_GINT64_FORMAT " p99=%" G_GINT64_FORMAT " n=%u\n",
          values[n / 2], values[n / 10], values[n * 9 / 10], values[MIN (n - 1, n * 99 / 100)], n);
}

static int
mode_cycle (const char *folder, int others, int cycles)
{
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *uri = g_build_filename (folder, "..", "jobs", "others", "x", NULL);
  g_autofree char *content = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) process = tessera_process_to_json (self);
  g_autofree char *process_text = json_to_string (process, FALSE);
  g_autoptr(TesseraTrackedDynamicResource) token = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autofree gint64 *times = g_new (gint64, cycles);

  /* The other holders: alive (this process), one token each. */
  g_mkdir_with_parents (jobs, 0777);
  content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"process\": %s}", uri, process_text);
  for (int i = 0; i < others; i++)
    {
      g_autofree char *name = g_strdup_printf ("other@%d.json", i);
      g_autofree char *path = g_build_filename (jobs, name, NULL);
      g_file_set_contents (path, content, -1, NULL);
    }
  token = open_token (folder, "1000000");
  job = make_job (folder, "cycler");
  dep = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  for (int i = 0; i < cycles + 10; i++)
    {
      gint64 start = g_get_monotonic_time ();
      g_autoptr(TesseraDynamicDependencyLock) lock = acquire (token, dep, 0);

      tessera_lock_release (TESSERA_LOCK (lock), NULL);
      if (i >= 10)   /* the first cycles warm the cache */
        times[i - 10] = g_get_monotonic_time () - start;
    }
  print_stats (times, cycles);
  return 0;
}

static void
log_line (int fd, char kind, const char *role)
{
  char line[64];
  int n = g_snprintf (line, sizeof line, "%c %" G_GINT64_FORMAT " %s\n", kind, g_get_monotonic_time (), role);
  if (write (fd, line, n) != n)
    exit (3);
}

static int
mode_handover (const char *folder, const char *role, int count, const char *log)
{
  g_autoptr(TesseraTrackedDynamicResource) token = open_token (folder, "1");
  g_autoptr(TesseraJob) job = make_job (folder, role);
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  int fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

  for (int i = 0; i < count; i++)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock = acquire (token, dep, 60);

      log_line (fd, 'A', role);
      g_usleep (2000);
      log_line (fd, 'R', role);
      tessera_lock_release (TESSERA_LOCK (lock), NULL);
      g_usleep (500);   /* let the other side in */
    }
  close (fd);
  return 0;
}

static int
mode_throughput (const char *folder, double seconds, const char *log)
{
  g_autoptr(TesseraTrackedDynamicResource) token = open_token (folder, "4");
  g_autofree char *id = g_strdup_printf ("t%d", (int) getpid ());
  g_autoptr(TesseraJob) job = make_job (folder, id);
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  long count = 0;
  int fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  struct rusage usage;
  char line[128];
  int n;

  while (g_get_monotonic_time () < end)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock = acquire (token, dep, 60);
      count++;
      tessera_lock_release (TESSERA_LOCK (lock), NULL);
    }
  getrusage (RUSAGE_SELF, &usage);
  n = g_snprintf (line, sizeof line, "%ld %ld %ld\n", count, usage.ru_nvcsw + usage.ru_nivcsw,
                  (long) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L +
                  (long) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec));
  if (write (fd, line, n) != n)
    return 3;
  close (fd);
  return 0;
}

static int
mode_hold (const char *folder)
{
  g_autoptr(TesseraTrackedDynamicResource) token = open_token (folder, "1");
  g_autoptr(TesseraJob) job = make_job (folder, "holder");
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  g_autoptr(TesseraDynamicDependencyLock) lock = acquire (token, dep, 0);
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  printf ("maxrss_kib=%ld\n", usage.ru_maxrss);
  tessera_lock_release (TESSERA_LOCK (lock), NULL);
  return 0;
}

static int
mode_polling (const char *folder)
{
  g_autofree char *jobs = g_build_filename (folder, "jobs", NULL);
  g_autofree char *path = g_build_filename (jobs, "holder@1.json", NULL);
  g_autofree char *uri = g_build_filename (folder, "..", "jobs", "holder", "x", NULL);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) process = tessera_process_to_json (self);
  g_autofree char *process_text = json_to_string (process, FALSE);
  g_autofree char *content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"process\": %s}",
                                              uri, process_text);
  g_autoptr(TesseraTrackedDynamicResource) token = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  guint64 at_10;

  g_mkdir_with_parents (jobs, 0777);
  g_file_set_contents (path, content, -1, NULL);
  token = open_token (folder, "1");
  job = make_job (folder, "waiter");
  dep = tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  for (int half = 0; half < 2; half++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, 10, NULL, &error);

      if (lock != NULL)
        return 1;
      if (half == 0)
        at_10 = tessera_dynamic_resource_get_generation (TESSERA_DYNAMIC_RESOURCE (token));
    }
  /* Wake-ups per 1000 s: whole numbers for run.py. */
  printf ("millirate=%" G_GUINT64_FORMAT "\n",
          (tessera_dynamic_resource_get_generation (TESSERA_DYNAMIC_RESOURCE (token)) - at_10) * 100);
  return 0;
}

static int
mode_big (const char *folder, const char *count, double timeout)
{
  g_autoptr(TesseraTrackedDynamicResource) token = open_token (folder, "4");
  g_autoptr(TesseraJob) job = make_job (folder, "big");
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, count, NULL);
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, timeout, NULL, &error);

  printf ("served=%d wait=%" G_GINT64_FORMAT "\n", lock != NULL, g_get_monotonic_time () - start);
  if (lock != NULL)
    tessera_lock_release (TESSERA_LOCK (lock), NULL);
  return 0;
}

static int
mode_crash (const char *folder, const char *role)
{
  g_autoptr(TesseraTrackedDynamicResource) token = open_token (folder, "1");
  g_autoptr(TesseraJob) job = make_job (folder, role);
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (TESSERA_DYNAMIC_RESOURCE (token), job, "1", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;

  if (strcmp (role, "holder") == 0)
    {
      lock = acquire (token, dep, 60);
      printf ("held\n");
      fflush (stdout);
      for (;;)
        pause ();
    }
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  if (lock != NULL)
    {
      fprintf (stderr, "tessera-bench: the token was free\n");
      return 1;
    }
  printf ("waiting\n");
  fflush (stdout);
  lock = acquire (token, dep, 120);
  printf ("got=%" G_GINT64_FORMAT "\n", g_get_monotonic_time ());
  tessera_lock_release (TESSERA_LOCK (lock), NULL);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 5 && strcmp (argv[1], "cycle") == 0)
    return mode_cycle (argv[2], atoi (argv[3]), atoi (argv[4]));
  if (argc == 6 && strcmp (argv[1], "handover") == 0)
    return mode_handover (argv[2], argv[3], atoi (argv[4]), argv[5]);
  if (argc == 5 && strcmp (argv[1], "throughput") == 0)
    return mode_throughput (argv[2], g_ascii_strtod (argv[3], NULL), argv[4]);
  if (argc == 3 && strcmp (argv[1], "hold") == 0)
    return mode_hold (argv[2]);
  if (argc == 3 && strcmp (argv[1], "polling") == 0)
    return mode_polling (argv[2]);
  if (argc == 5 && strcmp (argv[1], "big") == 0)
    return mode_big (argv[2], argv[3], g_ascii_strtod (argv[4], NULL));
  if (argc == 4 && strcmp (argv[1], "crash") == 0)
    return mode_crash (argv[2], argv[3]);
  fprintf (stderr, "usage: see the comment at the top of tessera-bench.c\n");
  return 2;
}
