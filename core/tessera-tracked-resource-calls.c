/* tessera-tracked-resource-calls.c: what a tracked resource's pool view
 * calls in the resource type (its accounting and informations)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The upward table of tessera-pool-store-private.h, filled with the
 * resource type's vfuncs: the store below the view reaches the resource
 * only through it (see docs/design.md). */
#include "tessera-tracked-dynamic-resource-private.h"

#define KLASS(o) TESSERA_TRACKED_DYNAMIC_RESOURCE_GET_CLASS (o)

static void
view_account (gpointer owner, TesseraDynamicLockFile *lock_file)
{
  KLASS (owner)->account_lock_file (owner, lock_file);
}

static void
view_unaccount (gpointer owner, TesseraDynamicLockFile *lock_file)
{
  KLASS (owner)->unaccount_lock_file (owner, lock_file);
}

/* The resource's name, else its folder. */
static const char *
view_name (gpointer owner)
{
  const char *name = tessera_dynamic_resource_get_name (owner);

  return name != NULL ? name : tessera_tracked_dynamic_resource_get_lock_folder (owner);
}

static void
view_reclaimed (gpointer owner, const char *name, TesseraDynamicLockFile *lock_file, const char *reason,
                gboolean left)
{
  _tessera_tracked_dynamic_resource_audit_reclaim (owner, name, lock_file, reason, left);
}

static gboolean
view_apply_informations (gpointer owner, JsonNode *informations, GError **error)
{
  return KLASS (owner)->handle_information_change (owner, informations, error);
}

static void
view_unlocked (gpointer owner)
{
  _tessera_tracked_dynamic_resource_log_reclaims (owner);
}

const TesseraPoolViewCalls _tessera_tracked_resource_view_calls = {
  { view_account, view_unaccount, view_name, view_reclaimed },
  view_apply_informations,
  view_unlocked,
};
