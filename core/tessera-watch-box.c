/* tessera-watch-box.c: a weak way back to an object for sources
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-watch-box-private.h"

struct _TesseraWatchBox
{
  GWeakRef object;
  gpointer data;    /* the object's, valid while it lives */
  gint published;   /* set last, read first: see _tessera_watch_box_dup_object() */
};

TesseraWatchBox *
_tessera_watch_box_new (gpointer object, gpointer data)
{
  TesseraWatchBox *box = g_atomic_rc_box_new0 (TesseraWatchBox);
  g_weak_ref_init (&box->object, object);
  box->data = data;
  g_atomic_int_set (&box->published, 1);
  return box;
}

/* Sources reach the poller's thread through GMainContext's own locking,
 * which ThreadSanitizer cannot see: an atomic store made before the source
 * was attached, read here first, makes the hand-over explicit. */
gpointer
_tessera_watch_box_dup_object (TesseraWatchBox *box)
{
  if (!g_atomic_int_get (&box->published))
    return NULL;
  return g_weak_ref_get (&box->object);
}

/* Only while holding a reference from _tessera_watch_box_dup_object(). */
gpointer
_tessera_watch_box_get_data (TesseraWatchBox *box)
{
  return box->data;
}

static void
watch_box_clear (TesseraWatchBox *box)
{
  g_weak_ref_clear (&box->object);
}

gpointer
_tessera_watch_box_ref (gpointer box)
{
  return g_atomic_rc_box_acquire (box);
}

void
_tessera_watch_box_unref (gpointer box)
{
  g_atomic_rc_box_release_full (box, (GDestroyNotify) watch_box_clear);
}
