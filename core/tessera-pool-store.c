/* tessera-pool-store.c: a store's operations, for the units above it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* Dispatch only: what each operation means, and under which lock it is
 * called, is said in tessera-pool-store-private.h. */
#include "tessera-pool-store-private.h"

gboolean
_tessera_pool_store_judge_all (TesseraPoolStore *store)
{
  return store->klass->judge_all (store);
}

gboolean
_tessera_pool_store_put_holder (TesseraPoolStore *store,
                                const char       *name,
                                TesseraJob       *job,
                                JsonNode         *information,
                                GError          **error)
{
  return store->klass->put_holder (store, name, job, information, error);
}

gboolean
_tessera_pool_store_set_holder_process (TesseraPoolStore *store,
                                        const char       *name,
                                        TesseraProcess   *process,
                                        GError          **error)
{
  return store->klass->set_holder_process (store, name, process, error);
}

char *
_tessera_pool_store_dup_holder_location (TesseraPoolStore *store, const char *name)
{
  return store->klass->dup_holder_location (store, name);
}

gboolean
_tessera_pool_store_commit (TesseraPoolStore *store, GError **error)
{
  return store->klass->commit (store, error);
}

gint64
_tessera_pool_store_get_token (TesseraPoolStore *store)
{
  return store->klass->get_token (store);
}

gboolean
_tessera_pool_store_host_expired (TesseraPoolStore *store, const char *host_id)
{
  return store->klass->liveness->host_expired (store->proof, host_id);
}

JsonNode *
_tessera_pool_store_read_informations (TesseraPoolStore *store, GError **error)
{
  return store->klass->read_informations (store, error);
}

char *
_tessera_pool_store_dup_location (TesseraPoolStore *store)
{
  return store->klass->dup_location (store);
}

double
_tessera_pool_store_get_holder_lease_left (TesseraPoolStore *store, const char *name)
{
  return store->klass->get_holder_lease_left (store, name);
}

gboolean
_tessera_pool_store_has_side_entries (TesseraPoolStore *store)
{
  return store->klass->side_list != NULL;
}

GHashTable *
_tessera_pool_store_side_list (TesseraPoolStore *store, const char *kind)
{
  return store->klass->side_list (store, kind);
}

gboolean
_tessera_pool_store_side_put (TesseraPoolStore *store,
                              const char       *kind,
                              const char       *name,
                              const char       *text,
                              GError          **error)
{
  return store->klass->side_put (store, kind, name, text, error);
}

gboolean
_tessera_pool_store_side_delete (TesseraPoolStore *store, const char *kind, const char *name, GError **error)
{
  return store->klass->side_delete (store, kind, name, error);
}
