/* tessera-json-private.h: strict JSON (core/tessera-json.c), never
 * installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* json_parser_load_from_data() of strict RFC 8259 JSON only, nested at
 * most TESSERA_JSON_MAX_DEPTH deep (tessera-json.c): for every file of a
 * folder. */
gboolean _tessera_json_load (JsonParser  *parser,
                             const char  *data,
                             gssize       length,
                             GError     **error);

/* The same, except that a number JSON cannot carry back (too large for a
 * double, or one json-glib writes as no JSON: 1e400, 1e308) is made null
 * rather than refused, and an integer beyond 64 bits is let through
 * (json-glib reads it wrapped, a wrong value somewhere in the tree); each
 * sets @nulled: for what still reads a text that holds one (a lock file's
 * salvage), which must then trust none of its numbers. @parser must not
 * be immutable. */
gboolean _tessera_json_load_nulling_numbers (JsonParser  *parser,
                                             const char  *data,
                                             gssize       length,
                                             gboolean    *nulled,
                                             GError     **error);

/* Whether @data is strict JSON cut short: the scan ran off its end before
 * the top-level value closed, all it read so far being JSON (what a writer
 * in place leaves half-way). FALSE for text that is complete, or refused
 * before its end (not JSON, too deep, not UTF-8, a lone surrogate). */
gboolean _tessera_json_is_cut_short (const char *data,
                                     gsize       length);

G_END_DECLS
