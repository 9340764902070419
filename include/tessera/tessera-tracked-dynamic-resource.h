/* tessera-tracked-dynamic-resource.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-dynamic-resource.h>
#include <tessera/tessera-dynamic-dependency.h>
#include <tessera/tessera-dynamic-lock-file.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_TRACKED_DYNAMIC_RESOURCE (tessera_tracked_dynamic_resource_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraTrackedDynamicResource, tessera_tracked_dynamic_resource, TESSERA, TRACKED_DYNAMIC_RESOURCE, TesseraDynamicResource)

/**
 * TesseraTrackedDynamicResourceClass:
 * @reset_state: forgets all accounting before lock files are read again
 * @account_lock_file: counts a valid lock file against the capacity
 * @unaccount_lock_file: undoes @account_lock_file for a lock file that is gone
 * @is_available: whether @dependency can be granted now; returns %FALSE
 *   without error when it must wait, %FALSE with @error set when it can
 *   never be granted
 * @do_acquire: called after the lock file of @dependency was created
 * @do_release: called before the lock file of @dependency is deleted
 * @get_lock_file_information: the "information" to write in the lock file
 *   of @dependency (%NULL for none)
 * @handle_information_change: applies informations.json, given parsed
 *   (never %NULL); returns %FALSE with @error set when it has the wrong shape
 * @initialize_informations: returns the content of a new informations.json,
 *   written when the folder has none (%NULL to write nothing)
 * @get_usage: how many units the resource has in all and how many are free
 *   now, in the type's own unit (tokens, devices…); -1 when not known
 * @lock_file_type: the [class@Tessera.DynamicLockFile] subtype that reads
 *   this class's lock files (the seed's `lock_file_class`); the
 *   [property@Tessera.TrackedDynamicResource:lock-file-type] property, when
 *   set, wins
 * @get_wait_information: the "information" of @dependency's entry in the
 *   waiters' queue once its patience is over: what it needs, in the shape
 *   of a lock file's, read back through @lock_file_type and
 *   @account_lock_file to reserve it; it must not depend on what is free.
 *   %NULL (the default) for a type whose waiters reserve nothing
 *
 * The class of [class@Tessera.TrackedDynamicResource]: the seed's abstract
 * methods. All of them run with the resource's thread lock held, and all
 * but @handle_information_change also hold ipc.lock.
 */
struct _TesseraTrackedDynamicResourceClass
{
  TesseraDynamicResourceClass parent_class;

  void      (*reset_state)               (TesseraTrackedDynamicResource *self);
  void      (*account_lock_file)         (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicLockFile        *lock_file);
  void      (*unaccount_lock_file)       (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicLockFile        *lock_file);
  gboolean  (*is_available)              (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency,
                                          GError                       **error);
  void      (*do_acquire)                (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  void      (*do_release)                (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  JsonNode *(*get_lock_file_information) (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);
  gboolean  (*handle_information_change) (TesseraTrackedDynamicResource *self,
                                          JsonNode                      *informations,
                                          GError                       **error);
  JsonNode *(*initialize_informations)   (TesseraTrackedDynamicResource *self);
  void      (*get_usage)                 (TesseraTrackedDynamicResource *self,
                                          gint64                        *capacity,
                                          gint64                        *free_units);

  GType lock_file_type;

  JsonNode *(*get_wait_information)      (TesseraTrackedDynamicResource *self,
                                          TesseraDynamicDependency      *dependency);

  /*< private >*/
  gpointer padding[11];
};

TESSERA_AVAILABLE_IN_ALL
const char *tessera_tracked_dynamic_resource_get_lock_folder       (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_jobs_folder       (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_ipc_lock_path     (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_informations_path (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
char       *tessera_tracked_dynamic_resource_dup_lock_file_path    (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicDependency      *dependency);
TESSERA_AVAILABLE_IN_ALL
double      tessera_tracked_dynamic_resource_get_min_age           (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_set_min_age           (TesseraTrackedDynamicResource *self,
                                                                    double                         min_age);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_acquire               (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicDependency      *dependency,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_release               (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicDependency      *dependency);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_record_process        (TesseraTrackedDynamicResource *self,
                                                                    TesseraDynamicDependency      *dependency,
                                                                    TesseraProcess                *process,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_update                (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
void        tessera_tracked_dynamic_resource_get_usage             (TesseraTrackedDynamicResource *self,
                                                                    gint64                        *capacity,
                                                                    gint64                        *free_units);
TESSERA_AVAILABLE_IN_ALL
GPtrArray  *tessera_tracked_dynamic_resource_list_lock_files       (TesseraTrackedDynamicResource *self);
TESSERA_AVAILABLE_IN_ALL
JsonNode   *tessera_tracked_dynamic_resource_read_informations     (TesseraTrackedDynamicResource *self,
                                                                    GError                       **error);
TESSERA_AVAILABLE_IN_ALL
gboolean    tessera_tracked_dynamic_resource_write_informations    (TesseraTrackedDynamicResource *self,
                                                                    JsonNode                      *informations,
                                                                    GError                       **error);

G_END_DECLS
