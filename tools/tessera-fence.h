/* tessera-fence.h: `tessera run` ends its command before its host lease
 * lapses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* What `tessera run` exits with when it ended its command for a lease it
 * could not renew. */
#define TESSERA_EXIT_FENCED 76

typedef struct _TesseraFence TesseraFence;

/* Whether any of @resources (TesseraTrackedDynamicResource) is a lease
 * pool: then the command must die with its wrapper. */
gboolean      tessera_fence_needed (GPtrArray *resources);

/* Sends @signum to the command's watcher (which passes SIGTERM on to the
 * command), where descendants cannot be listed. */
typedef void (*TesseraFenceSignalFunc) (int signum, gpointer data);

/* Sends @signum to every live process descending from this one (the
 * command, its children, orphans reparented to us as a subreaper) but
 * @except (0: none); returns how many it found, or -1 when it cannot
 * list them (a /proc of another pid namespace, whose pids are not ours,
 * or a kernel without /proc/PID/task/TID/children). */
int           tessera_fence_signal_descendants (int signum, GPid except);

/* Watches the lease renewals of @resources (and their @names, for
 * messages) on a thread of its own, which touches no file of the pool
 * (so a file server that hangs cannot keep it from acting): once one has
 * not been renewed for its lease minus a margin (the SIGTERM grace plus
 * two check intervals), says so, sends SIGTERM to every descendant of
 * this process but @watcher (the command's watcher, which ends when the
 * command does), and SIGKILL to all of them after the grace; where they
 * cannot be listed, @signal_command instead. NULL when no resource is a
 * lease pool. */
TesseraFence *tessera_fence_start  (GPtrArray              *resources,
                                    GPtrArray              *names,
                                    GPid                    watcher,
                                    TesseraFenceSignalFunc  signal_command,
                                    gpointer                data);
/* Whether it ended the command. */
gboolean      tessera_fence_fenced (TesseraFence *fence);
/* Stops the checks; when it ended the command, first waits out the grace
 * for what remains of its descendants, then kills them (SIGKILL) until
 * none is left, so that nothing of the command runs once the share is
 * given back. */
void          tessera_fence_stop   (TesseraFence *fence);

G_END_DECLS
