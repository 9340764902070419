/* tessera-pause-point-private.h: named pause points for the race tests
 * (core/tessera-pause-point.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "config.h"

#include <glib.h>

G_BEGIN_DECLS

/* Named pause points for the race tests (tessera-pause-point.c); nothing
 * at all unless built with -Dpause_points=true. */
#if TESSERA_PAUSE_POINTS
void _tessera_pause_point (const char *name);
#else
#define _tessera_pause_point(name) ((void) 0)
#endif

G_END_DECLS
