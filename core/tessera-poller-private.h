/* tessera-poller-private.h: the private thread every resource of a
 * process shares, and one-shot timers on it; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TesseraPoller TesseraPoller;

/* The poller of this process (transfer full); its thread is not started. */
TesseraPoller *_tessera_poller_get_default (void);
void           _tessera_poller_unref       (TesseraPoller  *self);
/* Starts its thread, when not yet started: sources attached to its
 * context are dispatched from then on. */
void           _tessera_poller_start       (TesseraPoller  *self);
GMainContext  *_tessera_poller_get_context (TesseraPoller  *self);
GSource       *_tessera_poller_add_timer   (TesseraPoller  *self,
                                            double          delay_s,
                                            GSourceFunc     func,
                                            gpointer        data,
                                            GDestroyNotify  destroy);

G_END_DECLS
