/* tessera-pool-store.c: the one store operation asked by name
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The units above a store call its class and its interfaces directly
 * (tessera-pool-store-private.h); this one has a name of its own so that
 * scripts/check-layers.py sees who asks for a verdict on another host
 * (one place judges a holder: the holder monitor). */
#include "tessera-pool-store-private.h"

gboolean
_tessera_pool_store_host_expired (TesseraPoolStore *store, const char *host_id)
{
  return store->klass->liveness->host_expired (store->proof, host_id);
}
