/* tessera-version.h: export macros
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib.h>

/**
 * TESSERA_AVAILABLE_IN_ALL:
 *
 * Marks a symbol as part of the public, exported API of libtessera-1.
 */
#define TESSERA_AVAILABLE_IN_ALL __attribute__((visibility ("default"))) extern
