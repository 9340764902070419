/* tessera-own-lock-file.h: a lock file this process wrote, and whether
 * it is still there as it was
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

/**
 * TesseraOwnLockFileState:
 * @TESSERA_OWN_LOCK_FILE_UNCHANGED: there as it was (or it cannot be
 *   told now: a file server that does not answer)
 * @TESSERA_OWN_LOCK_FILE_GONE: removed (a `clean --force`, a peer's
 *   mistaken verdict, an older Tessera)
 * @TESSERA_OWN_LOCK_FILE_REWRITTEN: another file in its place, or other
 *   content: written by someone else
 *
 * What became of a [class@Tessera.OwnLockFile].
 */
typedef enum {
  TESSERA_OWN_LOCK_FILE_UNCHANGED,
  TESSERA_OWN_LOCK_FILE_GONE,
  TESSERA_OWN_LOCK_FILE_REWRITTEN,
} TesseraOwnLockFileState;

#define TESSERA_TYPE_OWN_LOCK_FILE (tessera_own_lock_file_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraOwnLockFile, tessera_own_lock_file, TESSERA, OWN_LOCK_FILE, GObject)

/**
 * TesseraOwnLockFileClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.OwnLockFile], a final type: it has no
 * virtual functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraOwnLockFile      *tessera_own_lock_file_new      (const char         *path);
TESSERA_AVAILABLE_IN_ALL
const char              *tessera_own_lock_file_get_path (TesseraOwnLockFile *self);
TESSERA_AVAILABLE_IN_ALL
TesseraOwnLockFileState  tessera_own_lock_file_check    (TesseraOwnLockFile *self);

G_END_DECLS
