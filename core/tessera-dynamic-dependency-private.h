/* tessera-dynamic-dependency-private.h: a dependency's waits for ipc.lock
 * and their timeouts (core/tessera-dynamic-dependency.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Acquires @lock on @resource, waiting for ipc.lock (a peer's critical
 * section) until @deadline (monotonic µs, or -1) and a grace, or until
 * @cancellable is cancelled: by non-blocking tries when either can end
 * the wait, else blocked in flock(). `G_IO_ERROR_WOULD_BLOCK`, naming
 * ipc.lock, when a peer kept it past then (the caller's wait timed out);
 * other errors are the acquire's own (tessera-dynamic-dependency.c). @brief_us ≥ 0 waits
 * that long at most, whatever @deadline (a pool tried while others are
 * held: a peer's critical section takes microseconds). */
gboolean _tessera_dynamic_dependency_lock_acquire_until (TesseraDynamicDependencyLock  *lock,
                                                         TesseraDynamicResource        *resource,
                                                         gint64                         deadline,
                                                         gint64                         brief_us,
                                                         GCancellable                  *cancellable,
                                                         GError                       **error);
/* %TESSERA_ERROR_TIMEOUT for a wait on @resource ended by @busy (a peer
 * keeping ipc.lock). */
void     _tessera_set_ipc_lock_timeout        (GError                       **error,
                                               TesseraDynamicResource        *resource,
                                               const GError                  *busy);
/* %TESSERA_ERROR_TIMEOUT for a wait on @resource, saying @reason when
 * there is one (see _tessera_wait_reason()). */
void     _tessera_set_wait_timeout            (GError                       **error,
                                               TesseraDynamicResource        *resource,
                                               const char                    *reason);

/* Whether an acquire that failed with @error should wait and try again:
 * the resource is full, or smaller than the request for now. */
static inline gboolean
_tessera_error_means_wait (const GError *error)
{
  return g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_UNAVAILABLE) ||
         g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY);
}

/* What a wait's timeout says of @error (one that means wait): the type's
 * reason for a request larger than the whole capacity, which no release
 * will serve; nothing for a resource that is merely busy. */
static inline const char *
_tessera_wait_reason (const GError *error)
{
  return g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_OVER_CAPACITY) ? error->message : NULL;
}

G_END_DECLS
