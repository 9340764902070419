/* tessera-environment.c: the environment's knobs (polling, patience,
 * inotify), each read once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-environment-private.h"
#include "tessera-private.h"

#include <math.h>

/* Below this, polling is a busy loop. */
#define POLL_INTERVAL_FLOOR 0.01

/* Read once per process (a wrong value is said once, not at every poll),
 * and kept at or above the floor. */
static double
env_seconds (const char *name, double fallback)
{
  const char *value = g_getenv (name);
  char *end = NULL;
  double v;

  if (value == NULL || *value == '\0')
    return fallback;
  v = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0' || !(v > 0) || isinf (v))
    {
      g_warning (_("Ignoring %s=%s: not a positive number of seconds"), name, value);
      return fallback;
    }
  if (v < POLL_INTERVAL_FLOOR)
    {
      g_warning (_("%s=%s is too short: polling every %g s instead"), name, value, POLL_INTERVAL_FLOOR);
      return POLL_INTERVAL_FLOOR;
    }
  return v;
}

/* The seed polls from 0.1 s, growing by 1.5 up to a maximum. */
double
_tessera_poll_interval_initial (void)
{
  static gsize once = 0;
  static double initial;

  if (g_once_init_enter (&once))
    {
      initial = env_seconds ("TESSERA_POLL_INTERVAL", 0.1);
      g_once_init_leave (&once, 1);
    }
  return initial;
}

double
_tessera_poll_interval_max (void)
{
  static gsize once = 0;
  static double max;

  if (g_once_init_enter (&once))
    {
      max = env_seconds ("TESSERA_POLL_INTERVAL_MAX", 30.0);
      g_once_init_leave (&once, 1);
    }
  return MAX (max, _tessera_poll_interval_initial ());
}

/* How long a waiter takes what is free before it reserves (seconds). */
double
_tessera_patience_default (void)
{
  return env_seconds ("TESSERA_PATIENCE", 60.0);
}

gboolean
_tessera_inotify_disabled (void)
{
  return g_strcmp0 (g_getenv ("TESSERA_NO_INOTIFY"), "1") == 0;
}
