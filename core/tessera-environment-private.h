/* tessera-environment-private.h: the environment's knobs, read once
 * (core/tessera-environment.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Environment knobs, read once */
double   _tessera_poll_interval_initial (void);
double   _tessera_poll_interval_max     (void);
gboolean _tessera_inotify_disabled      (void);
/* How long a waiter takes what is free before it reserves (seconds). */
double   _tessera_patience_default      (void);

G_END_DECLS
