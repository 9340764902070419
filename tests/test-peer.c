/* test-peer.c: what the helper programs share: their line protocol, their
 * job, their holders' log and their "try", "tries" and "request" commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-peer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line of a helper's protocol on stdout, flushed at once: the test
 * reads it while the helper goes on. */
void
test_peer_say (const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  vprintf (format, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

/* "ERROR <code> <message>" of @error, as a line of the protocol. */
void
test_peer_say_error (const GError *error)
{
  test_peer_say ("ERROR %d %s", error->code, error->message);
}

/* The test closes the helper's stdin to let it go on. */
void
test_peer_hold_until_stdin_closes (void)
{
  char buf[64];

  while (read (0, buf, sizeof buf) > 0)
    ;
}

/* The job "helper" @id of the pool whose lock folder is @folder, its
 * folder FOLDER/../JOBS/ID/helper (@jobs: a path under the pool, each
 * helper keeps its own), run by this process if @with_process. Exits
 * with status 2 on an error, as the helpers do with their arguments. */
TesseraJob *
test_peer_job_new (const char *folder,
                   const char *jobs,
                   const char *id,
                   gboolean    with_process)
{
  g_autofree char *uri = g_build_filename (folder, "..", jobs, id, "helper", NULL);
  g_autofree char *canon = g_canonicalize_filename (uri, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = tessera_job_new ("helper", id, canon, &error);

  if (job != NULL && with_process)
    {
      g_autoptr(TesseraProcess) self = tessera_process_new_self ();

      if (!tessera_job_set_process (job, self, &error))
        g_clear_object (&job);
    }
  if (job == NULL)
    {
      g_printerr ("helper: %s\n", error->message);
      exit (2);
    }
  return g_steal_pointer (&job);
}

/* A line "KIND <monotonic µs> ID[ REST]" of the holders' log @fd (opened
 * with O_APPEND; test_read_holder_log reads it). Exits with status 3 if
 * it cannot be written. */
void
test_peer_log (int         fd,
               char        kind,
               const char *id,
               const char *rest)
{
  g_autofree char *line = g_strdup_printf ("%c %" G_GINT64_FORMAT " %s%s%s\n", kind, g_get_monotonic_time (), id,
                                           rest != NULL ? " " : "", rest != NULL ? rest : "");
  gssize n = (gssize) strlen (line);

  /* One write per line: lines of several processes never mix. */
  if (write (fd, line, n) != n)
    exit (3);
}

/* Reads the resource's folder, prints "READY", waits for a line on stdin,
 * tries once: prints "ACQUIRED", "UNAVAILABLE" or "ERROR <message>", then
 * holds until stdin closes. */
int
test_peer_try (TesseraTrackedDynamicResource *resource,
               TesseraDynamicDependency      *dependency,
               const char                    *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  char buf[64];

  if (!tessera_tracked_dynamic_resource_update (resource, &error))
    {
      g_printerr ("helper %s: %s\n", id, error->message);
      return 1;
    }
  test_peer_say ("READY");
  if (fgets (buf, sizeof buf, stdin) == NULL)
    return 1;
  lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);
  if (lock != NULL)
    test_peer_say ("ACQUIRED");
  else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
    test_peer_say ("UNAVAILABLE");
  else
    {
      g_autofree char *line = g_strdup_printf ("ERROR %s", error->message);
      test_peer_say ("%s", line);
    }
  test_peer_hold_until_stdin_closes ();
  if (lock != NULL)
    g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  return 0;
}

/* For each line on stdin, tries once and prints "ACQUIRED", "UNAVAILABLE"
 * or "ERROR <message>", releasing at once: one process, warm, that
 * acquires again and again. Ends when stdin closes. */
int
test_peer_tries (TesseraDynamicDependency *dependency)
{
  char buf[64];

  while (fgets (buf, sizeof buf, stdin) != NULL)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);

      if (lock != NULL)
        {
          g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
          test_peer_say ("ACQUIRED");
        }
      else if (g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
        test_peer_say ("UNAVAILABLE");
      else
        {
          g_autofree char *line = g_strdup_printf ("ERROR %s", error->message);
          test_peer_say ("%s", line);
        }
    }
  return 0;
}

typedef struct
{
  GMainLoop *loop;
  TesseraDynamicDependencyLock *lock;
  GError *error;
} AsyncRequest;

static void
on_request_locked (GObject *source, GAsyncResult *result, gpointer data)
{
  AsyncRequest *request = data;

  request->lock = tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result,
                                                          &request->error);
  g_main_loop_quit (request->loop);
}

/* Tries once; if that fails, prints "WAITING", then waits up to @timeout
 * seconds (through lock_async and a main loop with @async): prints
 * "ACQUIRED ms=N" (N: milliseconds since the first try) or
 * "ERROR <code> <message>"; holds until stdin closes, releases, prints
 * "RELEASED". */
int
test_peer_request (TesseraDynamicDependency *dependency,
                   double                    timeout,
                   gboolean                  async)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  gint64 start;

  start = g_get_monotonic_time ();
  lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, NULL);
  if (lock == NULL)
    test_peer_say ("WAITING");
  if (lock == NULL && async)
    {
      AsyncRequest request = { g_main_loop_new (NULL, FALSE), NULL, NULL };

      tessera_dynamic_dependency_lock_async (dependency, timeout, NULL, on_request_locked, &request);
      g_main_loop_run (request.loop);
      g_main_loop_unref (request.loop);
      lock = request.lock;
      error = request.error;
    }
  else if (lock == NULL)
    lock = tessera_dynamic_dependency_lock (dependency, timeout, NULL, &error);
  if (lock == NULL)
    {
      test_peer_say_error (error);
      return 1;
    }
  {
    g_autofree char *line = g_strdup_printf ("ACQUIRED ms=%" G_GINT64_FORMAT,
                                             (g_get_monotonic_time () - start) / 1000);
    test_peer_say ("%s", line);
  }
  test_peer_hold_until_stdin_closes ();
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  test_peer_say ("RELEASED");
  return 0;
}
