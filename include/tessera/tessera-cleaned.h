/* tessera-cleaned.h: one thing that the cleaning of a pool removed, or
 * left and why
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
 * TesseraCleanedKind:
 * @TESSERA_CLEANED_HOLDER: a holder's lock file in the pool's `jobs/`,
 *   gone (judged dead), or left (another user's that this one may not
 *   delete)
 * @TESSERA_CLEANED_HEARTBEAT: the heartbeat of a retired host, in the
 *   pool's `hosts/`
 * @TESSERA_CLEANED_MARK: the mark of a retired host, in the pool's
 *   `hosts/`
 * @TESSERA_CLEANED_TEMPORARY: a temporary file that a writer killed
 *   half-way left, in the pool's `jobs/`, in a writer's own folder or in
 *   `hosts/`
 * @TESSERA_CLEANED_FENCE_PART: a part of the pool's fencing counter that a
 *   user planted under another user's name
 *   ([method@Tessera.Cleaned.get_named_uid])
 * @TESSERA_CLEANED_JOB_FOLDER: the folder of an ended job of
 *   `tessera run`
 *
 * What a [class@Tessera.Cleaned] is.
 */
typedef enum {
  TESSERA_CLEANED_HOLDER,
  TESSERA_CLEANED_HEARTBEAT,
  TESSERA_CLEANED_MARK,
  TESSERA_CLEANED_TEMPORARY,
  TESSERA_CLEANED_FENCE_PART,
  TESSERA_CLEANED_JOB_FOLDER,
} TesseraCleanedKind;

#define TESSERA_TYPE_CLEANED (tessera_cleaned_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraCleaned, tessera_cleaned, TESSERA, CLEANED, GObject)

/**
 * TesseraCleanedClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.Cleaned], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraCleanedKind tessera_cleaned_get_kind      (TesseraCleaned *self);
TESSERA_AVAILABLE_IN_ALL
const char        *tessera_cleaned_get_path      (TesseraCleaned *self);
TESSERA_AVAILABLE_IN_ALL
const char        *tessera_cleaned_get_name      (TesseraCleaned *self);
TESSERA_AVAILABLE_IN_ALL
gboolean           tessera_cleaned_get_removed   (TesseraCleaned *self);
TESSERA_AVAILABLE_IN_ALL
guint              tessera_cleaned_get_owner     (TesseraCleaned *self);
TESSERA_AVAILABLE_IN_ALL
guint              tessera_cleaned_get_named_uid (TesseraCleaned *self);

G_END_DECLS
