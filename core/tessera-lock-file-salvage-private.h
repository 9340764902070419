/* tessera-lock-file-salvage-private.h: what is left of a lock file that does not load, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Whether a file that did not load is what a writer in place (a Python
 * peer) leaves while it writes or when it dies half-way: empty, white
 * space alone, or strict JSON cut short (the scan ran off its end before
 * the top-level value closed). Complete text the strict scan refuses is
 * not. */
gboolean _tessera_lock_file_is_truncated (const char *data,
                                          gsize       length);

/* A lock file of @lock_file_type (at @path, read as @data) that did not
 * load but names a job still holds (fail closed): read again with whole
 * floats made integers and an unreadable "process" dropped
 * (@holder_unknown then set); if its "information" still cannot be read,
 * without it, and @whole set: it holds everything. NULL when it names no
 * job (it never counted). */
TesseraDynamicLockFile *_tessera_lock_file_salvage (GType       lock_file_type,
                                                    const char *path,
                                                    const char *data,
                                                    gsize       length,
                                                    gboolean   *whole,
                                                    gboolean   *holder_unknown);

/* What stands of a lock file of @owner_name's that did not load (@error
 * says why; @data: its text, NULL when it could not be read): the
 * salvaged lock file (as above), or NULL: @truncated set when the text is
 * empty or cut short (it holds everything, and may age away), @refused
 * set to the reason (free it) when it is complete text the strict scan
 * refuses (it holds everything until removed by force); either way warned
 * about. */
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
