/* tessera-cleaned-private.h: making a TesseraCleaned, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* What the cleaning found: the file or folder @file in the folder
 * @folder (a path, for messages), of @kind, owned by @owner, named @name
 * (NULL: @file); @named_uid: the uid a fencing part is named for (0
 * else); @removed FALSE: left. */
TesseraCleaned *_tessera_cleaned_new (TesseraCleanedKind  kind,
                                      const char         *folder,
                                      const char         *file,
                                      const char         *name,
                                      gboolean            removed,
                                      guint               owner,
                                      guint               named_uid);

G_END_DECLS
