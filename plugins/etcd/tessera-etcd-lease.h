/* tessera-etcd-lease.h: this process's etcd lease, kept alive on a thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-etcd-client.h"

G_BEGIN_DECLS

/* One lease per process: every key the process writes for a holding is
 * attached to it, so when the process (or its host) dies and the
 * keep-alives stop, etcd deletes them after the TTL and wakes the
 * watchers. */
typedef struct _TesseraEtcdLease TesseraEtcdLease;

TesseraEtcdLease *tessera_etcd_lease_new          (TesseraEtcdClient  *client,
                                                   TesseraEtcdClient  *keeper,
                                                   gint64              ttl,
                                                   GError            **error);
gint64            tessera_etcd_lease_get_id       (TesseraEtcdLease   *lease);
gint64            tessera_etcd_lease_get_ttl      (TesseraEtcdLease   *lease);
double            tessera_etcd_lease_get_unrenewed (TesseraEtcdLease  *lease);
gboolean          tessera_etcd_lease_is_lost      (TesseraEtcdLease   *lease);
void              tessera_etcd_lease_free         (TesseraEtcdLease   *lease);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraEtcdLease, tessera_etcd_lease_free)

G_END_DECLS
