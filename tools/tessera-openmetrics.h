/* tessera-openmetrics.h: status in the OpenMetrics text format (see
 * tessera-openmetrics.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Appends to @out the OpenMetrics text of @descriptions (status --json's
 * objects), with its final `# EOF`. */
void             format_openmetrics          (GPtrArray *descriptions, GString *out);

G_END_DECLS
