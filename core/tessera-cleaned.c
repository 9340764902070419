/* tessera-cleaned.c: one thing that the cleaning of a pool removed, or
 * left and why
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "tessera-cleaned-private.h"

/**
 * TesseraCleaned:
 *
 * One thing that the cleaning of a pool (see
 * [func@Tessera.pool_clean_fence_parts] and the other `pool_clean_`
 * functions) removed, or found and left: what it is, where, and, when it
 * was left, whose it is. The cleaning only reports; saying it is the
 * caller's (`tessera clean` prints one line each).
 */
struct _TesseraCleaned
{
  GObject parent_instance;
  TesseraCleanedKind kind;
  char *path;
  char *name;
  gboolean removed;
  guint owner;
  guint named_uid;
};

G_DEFINE_FINAL_TYPE (TesseraCleaned, tessera_cleaned, G_TYPE_OBJECT)

static void
tessera_cleaned_finalize (GObject *object)
{
  TesseraCleaned *self = TESSERA_CLEANED (object);

  g_free (self->path);
  g_free (self->name);
  G_OBJECT_CLASS (tessera_cleaned_parent_class)->finalize (object);
}

static void
tessera_cleaned_class_init (TesseraCleanedClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tessera_cleaned_finalize;
}

static void
tessera_cleaned_init (TesseraCleaned *self)
{
}

TesseraCleaned *
_tessera_cleaned_new (TesseraCleanedKind  kind,
                      const char         *folder,
                      const char         *file,
                      const char         *name,
                      gboolean            removed,
                      guint               owner,
                      guint               named_uid)
{
  TesseraCleaned *self = g_object_new (TESSERA_TYPE_CLEANED, NULL);

  self->kind = kind;
  self->path = g_build_filename (folder, file, NULL);
  self->name = g_strdup (name != NULL ? name : file);
  self->removed = removed;
  self->owner = owner;
  self->named_uid = named_uid;
  return self;
}

/**
 * tessera_cleaned_get_kind:
 * @self: a #TesseraCleaned
 *
 * What was removed or left.
 *
 * Returns: what was removed or left
 */
TesseraCleanedKind
tessera_cleaned_get_kind (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), TESSERA_CLEANED_TEMPORARY);
  return self->kind;
}

/**
 * tessera_cleaned_get_path:
 * @self: a #TesseraCleaned
 *
 * Where it is.
 *
 * Returns: (transfer none): its path: the pool's folder as configured,
 *   then the names in it
 */
const char *
tessera_cleaned_get_path (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), NULL);
  return self->path;
}

/**
 * tessera_cleaned_get_name:
 * @self: a #TesseraCleaned
 *
 * Its name in its folder, or its job's.
 *
 * Returns: (transfer none): its name in its folder, the last part of
 *   [method@Tessera.Cleaned.get_path]; for a holder
 *   (%TESSERA_CLEANED_HOLDER), the name of its job
 */
const char *
tessera_cleaned_get_name (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), NULL);
  return self->name;
}

/**
 * tessera_cleaned_get_removed:
 * @self: a #TesseraCleaned
 *
 * Whether it was removed or left.
 *
 * Returns: %TRUE when it was removed; %FALSE when it was left, being
 *   another user's ([method@Tessera.Cleaned.get_owner]) that this one may
 *   not remove
 */
gboolean
tessera_cleaned_get_removed (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), FALSE);
  return self->removed;
}

/**
 * tessera_cleaned_get_owner:
 * @self: a #TesseraCleaned
 *
 * Whose it is.
 *
 * Returns: the uid of its owner, as found
 */
guint
tessera_cleaned_get_owner (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), 0);
  return self->owner;
}

/**
 * tessera_cleaned_get_named_uid:
 * @self: a #TesseraCleaned
 *
 * Whose a fencing part claims to be.
 *
 * Returns: for a part of the fencing counter
 *   (%TESSERA_CLEANED_FENCE_PART), the uid it is named for, whose it
 *   claims to be; 0 for the other kinds
 */
guint
tessera_cleaned_get_named_uid (TesseraCleaned *self)
{
  g_return_val_if_fail (TESSERA_IS_CLEANED (self), 0);
  return self->named_uid;
}
