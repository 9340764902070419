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
 * @from_information: reads the type-specific "information" member (which
 *   may be %NULL when the file has none); returns %FALSE with @error set
 *   when it has the wrong shape
 * @to_information: returns the type-specific "information" member, or
 *   %NULL for JSON `null`
 *
 * The class of [class@Tessera.DynamicLockFile]: subclasses map the
 * "information" member of a lock file onto their own fields.
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
gint64                  tessera_dynamic_lock_file_get_mtime    (TesseraDynamicLockFile *self);

G_END_DECLS
