/* tessera-error.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

/**
 * TESSERA_ERROR:
 *
 * The error domain of every error Tessera reports itself.
 * Cancellation is reported as `G_IO_ERROR_CANCELLED`, as in GIO, and a
 * failed file-system operation in the `G_IO_ERROR` domain with the code
 * `g_io_error_from_errno()` gives for the system's error.
 */
#define TESSERA_ERROR (tessera_error_quark ())

/**
 * TesseraError:
 * @TESSERA_ERROR_FAILED: a failure with no more specific code
 * @TESSERA_ERROR_UNAVAILABLE: the resource cannot grant the request now
 * @TESSERA_ERROR_TIMEOUT: waiting for the resource took longer than allowed
 * @TESSERA_ERROR_LOCK_FILE_MISSING: a job-side lock found no lock file
 * @TESSERA_ERROR_INVALID_LOCK_FILE: a lock file or locks.json cannot be understood
 * @TESSERA_ERROR_INVALID_INFORMATION: informations.json cannot be understood
 * @TESSERA_ERROR_INVALID_NAME: a task id, identifier or other name is hostile or malformed
 * @TESSERA_ERROR_PLUGIN_NOT_FOUND: no plugin provides the requested module
 * @TESSERA_ERROR_CLASS_NOT_FOUND: no known lock class has the requested name
 * @TESSERA_ERROR_INVALID_CONFIGURATION: a configuration value is wrong
 * @TESSERA_ERROR_ALREADY_HELD: the job already holds this resource
 * @TESSERA_ERROR_REQUEST_TOO_LARGE: the request can never be granted, whatever
 *   the capacity (a plugin's own rule, such as a cap per user); the built-in
 *   types never say it, as their capacity may grow: they wait instead
 *   (%TESSERA_ERROR_OVER_CAPACITY)
 * @TESSERA_ERROR_OVER_CAPACITY: the request is larger than the resource's
 *   current capacity (its total, its devices); waiting goes on, since the
 *   capacity may grow, and the message says why, naming the capacity: a
 *   wait that times out then says it in its %TESSERA_ERROR_TIMEOUT (the
 *   `tessera` command gives up at once instead, unless told to wait)
 * @TESSERA_ERROR_UNSUPPORTED_PROTOCOL: the pool's informations.json asks
 *   for a newer Tessera protocol than this library speaks (its
 *   `tessera_protocol` member); this Tessera leaves the pool alone
 * @TESSERA_ERROR_STORE_UNREACHABLE: the pool's store (its servers, such as
 *   an etcd cluster) cannot be reached: none of them could be connected
 *   to, or none answered for the store's retry time; the message names
 *   the servers tried and why each failed
 *
 * Error codes of the %TESSERA_ERROR domain.
 */
typedef enum {
  TESSERA_ERROR_FAILED,
  TESSERA_ERROR_UNAVAILABLE,
  TESSERA_ERROR_TIMEOUT,
  TESSERA_ERROR_LOCK_FILE_MISSING,
  TESSERA_ERROR_INVALID_LOCK_FILE,
  TESSERA_ERROR_INVALID_INFORMATION,
  TESSERA_ERROR_INVALID_NAME,
  TESSERA_ERROR_PLUGIN_NOT_FOUND,
  TESSERA_ERROR_CLASS_NOT_FOUND,
  TESSERA_ERROR_INVALID_CONFIGURATION,
  TESSERA_ERROR_ALREADY_HELD,
  TESSERA_ERROR_REQUEST_TOO_LARGE,
  TESSERA_ERROR_OVER_CAPACITY,
  TESSERA_ERROR_UNSUPPORTED_PROTOCOL,
  TESSERA_ERROR_STORE_UNREACHABLE,
} TesseraError;

TESSERA_AVAILABLE_IN_ALL
GQuark tessera_error_quark (void);

G_END_DECLS
