/* tessera-process-type-private.h: process types by name (core/tessera-
 * process-type.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The one instance of the process type @type_name, made at its first use
 * and kept; NULL when no plugin provides it. */
TesseraProcessType *_tessera_process_type_for   (const char     *type_name);

G_END_DECLS
