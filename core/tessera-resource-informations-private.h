/* tessera-resource-informations-private.h: informations.json, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-lock-folder-private.h"
#include "tessera-pool-protocol-private.h"
#include "tessera-pool-store-private.h"

G_BEGIN_DECLS

/* The member of informations.json that records a lease pool's host lease
 * (seconds; experimaestro ignores it): every Tessera using the pool takes
 * it over its own configuration, so that no holder renews on another
 * schedule, or not at all, and is taken for dead. */
#define TESSERA_POOL_HOST_LEASE_MEMBER "host_lease"

/* A pool's informations.json (resource-level data, such as a counter
 * token's total) as this process last read it, and whether it changed
 * since. Not thread-safe: the owner serialises (the resource's thread
 * lock). */
typedef struct _TesseraResourceInformations TesseraResourceInformations;

/* @folder: borrowed, outlives the result. */
TesseraResourceInformations *_tessera_resource_informations_new (TesseraLockFolder *folder);
void      _tessera_resource_informations_free   (TesseraResourceInformations  *info);

/* (transfer full): the parsed file as it is now, or NULL with
 * TESSERA_ERROR_INVALID_INFORMATION (the folder store's informations'
 * @read). */
JsonNode *_tessera_resource_informations_read   (TesseraResourceInformations *info,
                                                 GError                      **error);
/* Reads the file again when it may have changed (a peer writing in place
 * in the clock tick it was last read is caught) and hands what changed to
 * the resource type of @store, the folder store that owns @info (its
 * owner_class's handle_information_change, on its owner), which may
 * refuse it. TRUE when it was applied; a broken or refused file is warned
 * about once per change (the store's name in the message), the last
 * capacity kept. A missing file is reported only with @report_missing
 * (under ipc.lock, where a decision is made); otherwise it is left for
 * that next look (the poller's thread may see a resource's folder being
 * removed after its application dropped it). */
gboolean  _tessera_resource_informations_check  (TesseraResourceInformations  *info,
                                                 TesseraPoolStore             *store,
                                                 gboolean                      report_missing);
/* FALSE with TESSERA_ERROR_UNSUPPORTED_PROTOCOL when the file as last
 * checked asks for a newer protocol than ours: such a pool is left alone
 * (its content is not applied). */
gboolean  _tessera_resource_informations_usable (TesseraResourceInformations  *info,
                                                 GError                      **error);
/* Replaces the file atomically and durably. Our protocol is set in
 * @informations itself first (never lowering the one it names). */
gboolean  _tessera_resource_informations_write  (TesseraResourceInformations  *info,
                                                 JsonNode                     *informations,
                                                 GError                      **error);
/* Forgets what was read: the next check reads the file again. */
void      _tessera_resource_informations_forget (TesseraResourceInformations *info);
/* The protocol this pool's writers mark (TESSERA_POOL_PROTOCOL_PLAIN by
 * default); _require() marks a file read with a lower one. Both locks. */
void      _tessera_resource_informations_set_required (TesseraResourceInformations *info,
                                                       gint64                       protocol);
gboolean  _tessera_resource_informations_require      (TesseraResourceInformations  *info,
                                                       GError                      **error);
/* The host lease this process is configured with (0: none): what our
 * writes record when the file records none, and what _require() adds to
 * a file that records none. */
void      _tessera_resource_informations_set_host_lease (TesseraResourceInformations *info,
                                                         double                       configured);
/* The host lease the file as last checked records (a number within the
 * lease bounds), else 0. The first time it disagrees with the configured
 * one, says so (a warning naming @resource_name): the pool's wins. */
double    _tessera_resource_informations_get_host_lease (TesseraResourceInformations *info,
                                                         const char                  *resource_name);

G_END_DECLS
