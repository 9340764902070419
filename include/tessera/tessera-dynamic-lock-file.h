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

/**
 * TesseraHolderState:
 * @TESSERA_HOLDER_STATE_ALIVE: its holder runs: what it holds counts
 * @TESSERA_HOLDER_STATE_DEAD: its holder is surely gone: what it holds is
 *   reclaimable (the next acquire of its pool removes its lock file)
 * @TESSERA_HOLDER_STATE_UNKNOWN: it cannot be told from here, or not yet:
 *   what it holds counts
 *
 * The verdict on the holder of a lock file
 * ([method@Tessera.DynamicLockFile.judge_holder]).
 */
typedef enum {
  TESSERA_HOLDER_STATE_ALIVE,
  TESSERA_HOLDER_STATE_DEAD,
  TESSERA_HOLDER_STATE_UNKNOWN,
} TesseraHolderState;

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (TesseraDynamicLockFile, tessera_dynamic_lock_file, TESSERA, DYNAMIC_LOCK_FILE, GObject)

/**
 * TesseraDynamicLockFileClass:
 * @parent_class: the parent class
 * @from_information: optional: interprets the "information" member
 * @to_information: optional: the "information" member to write; the
 *   default writes back what was read or created
 * @get_amount: optional: how much the holder has, in a number of the
 *   resource's units whatever its type; the default says 1
 *
 * The class of [class@Tessera.DynamicLockFile]. A resource type names its
 * lock-file subclass in the `lock_file_type` member of
 * #TesseraTrackedDynamicResourceClass; the subclass turns the
 * type-specific "information" into fields that
 * [vfunc@Tessera.TrackedDynamicResource.account_lock_file] reads.
 */
/**
 * TesseraDynamicLockFileClass::from_information:
 * @self: the lock file being read or created
 * @information: (nullable): the "information" member, or %NULL when the
 *   file has none or JSON `null`
 * @error: return location for a #GError
 *
 * Interprets the "information" of a lock file: copies out what the
 * resource counts (a count, devices, a mode…). Optional: the base class
 * has already kept @information (see
 * [method@Tessera.DynamicLockFile.get_information]) and writes it back
 * unchanged.
 *
 * Called on any thread — the application's, the poller's — with the
 * resource's thread lock (and usually ipc.lock) held when a resource
 * reads the file: must not block and must not call into the resource.
 *
 * Returns: %FALSE with @error set when @information has the wrong shape:
 *   the resource then warns, leaves the file out of its accounting and
 *   reads it again on each refresh
 */

/**
 * TesseraDynamicLockFileClass::to_information:
 * @self: the lock file being written
 *
 * The "information" member to write when the lock file is saved (again:
 * recording the holder's process rewrites the file). Optional: the
 * default returns, unchanged, the information the file was read or
 * created with; override it only if the subclass changes its fields after
 * creation.
 *
 * Same threads and locks as
 * [vfunc@Tessera.DynamicLockFile.from_information].
 *
 * Returns: (transfer full) (nullable): the information, or %NULL for JSON
 *   `null`
 */

/**
 * TesseraDynamicLockFileClass::get_amount:
 * @self: a lock file, read or created
 *
 * How much its holder has (or a waiter asks for), as one number that
 * means the same for every type, so that a script sums holdings per user
 * without knowing the types: a counter's count, a number of GPUs, 1 for
 * a mutex. Optional: the default says 1 (the holder has the resource).
 * Not called for a lock file with a
 * [method@Tessera.DynamicLockFile.get_problem] (it holds everything).
 *
 * Same threads and locks as
 * [vfunc@Tessera.DynamicLockFile.from_information]: reads only what
 * that copied out.
 *
 * Returns: the amount, 0 or more
 */

struct _TesseraDynamicLockFileClass
{
  GObjectClass parent_class;

  gboolean  (*from_information) (TesseraDynamicLockFile *self,
                                 JsonNode               *information,
                                 GError                **error);
  JsonNode *(*to_information)   (TesseraDynamicLockFile *self);
  gint64    (*get_amount)       (TesseraDynamicLockFile *self);

  /*< private >*/
  gpointer padding[7];
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
gint64                  tessera_dynamic_lock_file_get_amount   (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
void                    tessera_dynamic_lock_file_set_process  (TesseraDynamicLockFile *self,
                                                                TesseraProcess         *process);
TESSERA_AVAILABLE_IN_ALL
JsonNode               *tessera_dynamic_lock_file_get_information (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
gint64                  tessera_dynamic_lock_file_get_mtime    (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
char                   *tessera_dynamic_lock_file_dup_unknown_reason (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
const char             *tessera_dynamic_lock_file_get_problem  (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
gint64                  tessera_dynamic_lock_file_get_file_uid (TesseraDynamicLockFile *self);
TESSERA_AVAILABLE_IN_ALL
TesseraHolderState      tessera_dynamic_lock_file_judge_holder (TesseraDynamicLockFile *self,
                                                                TesseraProcessState    *process_state,
                                                                char                  **reason);
TESSERA_AVAILABLE_IN_ALL
GArray                 *tessera_dynamic_lock_file_judge_holders (GPtrArray             *lock_files,
                                                                 GArray               **process_states);

G_END_DECLS
