/* test-peer.c: the "try", "tries" and "request" commands of the helper programs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-peer.h"

#include <stdarg.h>
#include <stdio.h>
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

static void
hold_until_stdin_closes (void)
{
  char buf[64];

  while (read (0, buf, sizeof buf) > 0)
    ;
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
  hold_until_stdin_closes ();
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
  hold_until_stdin_closes ();
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  test_peer_say ("RELEASED");
  return 0;
}
