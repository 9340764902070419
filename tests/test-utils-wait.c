/* test-utils-wait.c: waiting for what another process or thread does,
 * bounded and never busy
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <stdarg.h>

/* The sleep between two looks starts short, for what comes at once, and
 * grows to 50 ms, so that a long wait does not load the machine. */
gboolean
test_poll_until (TestCondition done, gpointer data, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  gulong pause_us = 2000;

  while (!done (data))
    {
      if (g_get_monotonic_time () > deadline)
        return done (data);
      g_usleep (pause_us);
      pause_us = MIN (pause_us * 2, 50 * 1000);
    }
  return TRUE;
}

void
test_wait_until (TestCondition done, gpointer data, double timeout_s, const char *format, ...)
{
  g_autofree char *what = NULL;
  va_list ap;

  if (test_poll_until (done, data, timeout_s))
    return;
  va_start (ap, format);
  what = g_strdup_vprintf (format, ap);
  va_end (ap);
  g_error ("%s (waited %.0f s)", what, timeout_s);
}

gboolean
test_flag_is_set (gpointer flag)
{
  return g_atomic_int_get ((gint *) flag) != 0;
}

gboolean
test_subprocess_has_ended (gpointer process)
{
  return g_subprocess_get_identifier (process) == NULL;
}

gboolean
test_pid_has_ended (gpointer pid)
{
  return tessera_process_pid_has_ended (GPOINTER_TO_INT (pid));
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* Waits (up to @timeout_s, generous) until @path exists. */
void
test_wait_for_file (const char *path, double timeout_s)
{
  test_wait_until (file_exists, (gpointer) path, timeout_s, "%s did not appear", path);
}
