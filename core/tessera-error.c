/* tessera-error.c: the error domain of Tessera's errors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <tessera/tessera.h>

/**
 * tessera_error_quark:
 *
 * The error domain of Tessera's errors, %TESSERA_ERROR.
 *
 * Returns: the quark of the %TESSERA_ERROR domain
 */
G_DEFINE_QUARK (tessera-error-quark, tessera_error)
