/* tessera-tracked-dynamic-resource-private.h: what a tracked resource
 * keeps for the audit log, private to the project. Its acquire protocol
 * is reached through the base resource (_tessera_dynamic_resource_get_grant()):
 * the one public way to acquire is a dependency's lock
 * ([method@Tessera.DynamicDependency.lock]).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-pool-store-private.h"

G_BEGIN_DECLS

/* Keeps a reclaim for the audit log when the resource is audited: a dead
 * holder's lock file @name removed, or (@left) left to its owner. Made
 * under the pool's locks, it is logged once they are let go
 * (_tessera_tracked_dynamic_resource_log_reclaims()): a slow log must
 * not hold the pool. */
void _tessera_tracked_dynamic_resource_audit_reclaim (TesseraTrackedDynamicResource *self,
                                                      const char                    *name,
                                                      TesseraDynamicLockFile        *lock_file,
                                                      const char                    *reason,
                                                      gboolean                       left);
/* Logs the reclaims kept so far. No lock held. */
void _tessera_tracked_dynamic_resource_log_reclaims (TesseraTrackedDynamicResource *self);

G_END_DECLS
