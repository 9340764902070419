/* tessera-json.h: parsing JSON that a co-user of a folder may have written
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

/**
 * TESSERA_JSON_MAX_DEPTH:
 *
 * The deepest nesting of arrays and objects [func@Tessera.json_parse]
 * accepts: far more than any format of a lock folder needs.
 */
#define TESSERA_JSON_MAX_DEPTH 64

TESSERA_AVAILABLE_IN_ALL
JsonNode *tessera_json_parse     (const char  *data,
                                  gssize       length,
                                  GError     **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode *tessera_json_read_file (const char  *path,
                                  GError     **error);

G_END_DECLS
