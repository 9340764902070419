/* tessera-dynamic-lock-file.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-process.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_DYNAMIC_LOCK_FILE (tessera_dynamic_lock_file_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraDynamicLockFile, tessera_dynamic_lock_file, TESSERA, DYNAMIC_LOCK_FILE, GObject)

/**
 * TesseraDynamicLockFileClass:
 * @parent_class: the parent class
 * @from_information: optional. Interprets the "information" member of a
 *   lock file that was just read or created: @information is %NULL when
 *   the file has none (or JSON `null`). Return %FALSE with @error set when
 *   it has the wrong shape: the resource then warns, leaves the file out
 *   of its accounting and reads it again on each refresh. The base
 *   class has already kept @information (see
 *   [method@Tessera.DynamicLockFile.get_information]), so a subclass only
 *   copies out what it counts. Called on the thread that reads the file —
 *   the caller's, a worker or Tessera's watcher thread — with the
 *   resource's thread lock held: never block, never call back into the
 *   resource.
 * @to_information: optional. Returns the "information" member to write
 *   (transfer full), or %NULL for JSON `null`. The default writes back,
 *   unchanged, the information the file was read or created with, so most
 *   subclasses leave it alone; override it only if the subclass changes
 *   its fields after creation. Same threads and locks as
 *   @from_information.
 *
 * The class of [class@Tessera.DynamicLockFile]. A resource type gives its
 * lock-file subclass in
 * `lock_file_type` member of #TesseraTrackedDynamicResourceClass; the subclass
 * turns the type-specific "information" into fields that
 * [vfunc@Tessera.TrackedDynamicResource.account_lock_file] reads.
 */
struct _TesseraDynamicLockFileClass
{
  GObjectClass parent_class;

  gboolean  (*from_information) (TesseraDynamicLockFile *self,
                                 JsonNode               *information,
                                 GError                **error);
  JsonNode *(*to_information)   (TesseraDynamicLockFile *self);

  /*< private >*/
  gpointer padding[8];
};

TESSERA_AVAILABLE_IN_ALL
TesseraDynamicLockFile *tessera_dynamic_lock_file_load         (GType                   lock_file_type,
                                                                const char             *path,
                                                                GError                **error);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicLockFile *tessera_dynamic_lock_file_new_from_data (GType                  lock_file_type,
                                                                 const char            *path,
                                                                 const char            *data,
                                                                 gssize                 length,
                                                                 GError               **error);
TESSERA_AVAILABLE_IN_ALL
TesseraDynamicLockFile *tessera_dynamic_lock_file_create       (GType                   lock_file_type,
                                                                const char             *path,
                                                                const char             *job_uri,
                                                                JsonNode               *information,
                                                                TesseraProcess         *process,
                                                                GError                **error);
TESSERA_AVAILABLE_IN_ALL
gboolean                tessera_dynamic_lock_file_save         (TesseraDynamicLockFile *self,
                                                                GError                **error);
TESSERA_AVAILABLE_IN_ALL
gboolean                tessera_dynamic_lock_file_delete       (TesseraDynamicLockFile *self,
                                                                GError                **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode               *tessera_dynamic_lock_file_to_json      (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
const char             *tessera_dynamic_lock_file_get_path     (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
const char             *tessera_dynamic_lock_file_get_job_uri  (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
gboolean                tessera_dynamic_lock_file_is_valid     (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
TesseraProcess         *tessera_dynamic_lock_file_get_process  (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
void                    tessera_dynamic_lock_file_set_process  (TesseraDynamicLockFile *self,
                                                                TesseraProcess         *process);
TESSERA_AVAILABLE_IN_ALL
JsonNode               *tessera_dynamic_lock_file_get_information (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
gint64                  tessera_dynamic_lock_file_get_mtime    (TesseraDynamicLockFile *self);

G_END_DECLS
