/* tessera-tracked-resource-usage.c: what a tracked resource says of its
 * usage in words, where "N of M free" would mislead (`tessera status`)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-tracked-dynamic-resource-private.h"

#define VIEW(o) _tessera_tracked_dynamic_resource_get_view (o)
#define STORE(o) _tessera_pool_view_get_store (VIEW (o))
/* The holders the store has read, and what they are called on. */
#define HOLDERS(o) (STORE (o)->klass->holders)
#define TABLE(o) (STORE (o)->holder_table)
#define KLASS(o) TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (o)
#define lock_thread(o) _tessera_pool_view_lock_thread (VIEW (o))
#define unlock_thread(o) _tessera_pool_view_unlock_thread (VIEW (o))

/**
 * tessera_tracked_dynamic_resource_dup_usage_text:
 * @self: a tracked resource
 *
 * What the type says of its usage as last seen, in place of "N of M
 * free" (see [vfunc@Tessera.TrackedDynamicResource.dup_usage_text]):
 * "shared by 2" for a mutex held shared. %NULL when the type says
 * nothing more, or when a holder whose amount cannot be read holds
 * everything.
 *
 * Returns: (transfer full) (nullable): the phrase, or %NULL
 */
char *
tessera_tracked_dynamic_resource_dup_usage_text (TesseraTrackedDynamicResource *self)
{
  char *text = NULL;

  g_return_val_if_fail (TESSERA_IS_TRACKED_DYNAMIC_RESOURCE (self), NULL);
  lock_thread (self);
  if (KLASS (self)->dup_usage_text != NULL && HOLDERS (self)->get_whole (TABLE (self)) == 0)
    text = KLASS (self)->dup_usage_text (self);
  unlock_thread (self);
  return text;
}
