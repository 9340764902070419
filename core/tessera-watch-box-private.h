/* tessera-watch-box-private.h: a weak way back to an object for sources, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Sources in the poller's thread reach their owner (a resource) through a
 * box holding a weak reference, so they never keep it alive nor touch it
 * once disposed. Reference-counted, atomically: each source holds one. */
typedef struct _TesseraWatchBox TesseraWatchBox;

/* @data: something @object owns, given back while @object lives. */
TesseraWatchBox *_tessera_watch_box_new    (gpointer         object,
                                            gpointer         data);
gpointer         _tessera_watch_box_ref    (gpointer         box);
void             _tessera_watch_box_unref  (gpointer         box);
/* (transfer full) (nullable): the object, or NULL once it is gone. */
gpointer         _tessera_watch_box_dup_object (TesseraWatchBox *box);
/* The data given at creation: only while holding the object from
 * _tessera_watch_box_dup_object(). */
gpointer         _tessera_watch_box_get_data   (TesseraWatchBox *box);

G_END_DECLS
