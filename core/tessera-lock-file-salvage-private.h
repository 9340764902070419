/* tessera-lock-file-salvage-private.h: what is left of a lock file that does not load, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* What stands of a lock file of @lock_file_type (at @path) of
 * @owner_name's that did not load (@error says why; @data: its text, NULL
 * when it could not be read): if it names a job, it still holds (fail
 * closed), read again with whole floats made integers and an unreadable
 * "process" dropped (@holder_unknown then set), or, if its "information"
 * still cannot be read, without it and @whole set (it holds everything);
 * or NULL: @truncated set when the text is empty or cut short (it holds
 * everything, and may age away), @refused set to the reason (free it)
 * when it is complete text the strict scan refuses (it holds everything
 * until removed by force); either way warned about. */
TesseraDynamicLockFile *_tessera_lock_file_salvage_failed (GType         lock_file_type,
                                                           const char   *path,
                                                           const char   *owner_name,
                                                           const char   *data,
                                                           gsize         length,
                                                           const GError *error,
                                                           gboolean     *whole,
                                                           gboolean     *holder_unknown,
                                                           gboolean     *truncated,
                                                           char        **refused);

G_END_DECLS
