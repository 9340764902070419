/* tessera-file-warnings-private.h: warnings about single files of a
 * pool, said as one when a look at it finds many; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Keeps what _tessera_file_warning() says in this thread until
 * _tessera_file_warnings_end(). TRUE when this call began keeping (and
 * so ends it): a nested call keeps nothing of its own. */
gboolean _tessera_file_warnings_begin (void);
/* Says one file's warning now, or keeps it when this thread keeps them. */
void     _tessera_file_warning        (const char *format,
                                       ...) G_GNUC_PRINTF (1, 2);
/* When @began (what _tessera_file_warnings_begin() returned): says what
 * was kept as one warning, the first file's with how many files of
 * @owner_name there were, and keeps no more. */
void     _tessera_file_warnings_end   (gboolean    began,
                                       const char *owner_name);

G_END_DECLS
