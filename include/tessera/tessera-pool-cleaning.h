/* tessera-pool-cleaning.h: what in a pool nobody needs, removed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-cleaned.h>
#include <tessera/tessera-tracked-dynamic-resource.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_POOL_CLEANING (tessera_pool_cleaning_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraPoolCleaning, tessera_pool_cleaning, TESSERA, POOL_CLEANING, GObject)

/**
 * TesseraPoolCleaningClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.PoolCleaning], a final type: it has no
 * virtual functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraPoolCleaning *tessera_pool_cleaning_new          (const char          *lock_folder);
TESSERA_AVAILABLE_IN_ALL
gboolean   tessera_pool_cleaning_had_holder             (TesseraPoolCleaning *self,
                                                         const char          *job);
TESSERA_AVAILABLE_IN_ALL
void       tessera_pool_cleaning_forget_holder          (TesseraPoolCleaning *self,
                                                         const char          *job);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_cleaning_list_gone_holders      (TesseraPoolCleaning *self);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_cleaning_list_left_holders      (TesseraPoolCleaning           *self,
                                                         TesseraTrackedDynamicResource *resource);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_cleaning_list_gone_temporaries  (TesseraPoolCleaning *self,
                                                         double               jobs_stale);

TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_clean_fence_parts            (const char *lock_folder,
                                                      gboolean    may_remove);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_clean_host_temporaries       (const char *lock_folder,
                                                      double      bound);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_clean_retired_host_files     (const char *lock_folder,
                                                      const char *host);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_clean_job_folders            (const char *lock_folder);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_pool_clean_retired_host_job_folders (const char *lock_folder,
                                                        const char *host);
TESSERA_AVAILABLE_IN_ALL
GPtrArray *tessera_clean_state_job_folders           (const char *state_dir);

G_END_DECLS
