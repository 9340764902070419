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

/* Sends @signum to the command, if it still runs. */
typedef void (*TesseraFenceSignalFunc) (int signum, gpointer data);

/* Whether any of @resources (TesseraTrackedDynamicResource) is a lease
 * pool: then the command must die with its wrapper. */
gboolean      tessera_fence_needed (GPtrArray *resources);

/* Watches the lease renewals of @resources (and their @names, for
 * messages) on a thread of its own, which touches no file (so a file
 * server that hangs cannot keep it from acting): once one has not been
 * renewed for its lease minus a margin (the SIGTERM grace plus two check
 * intervals), says so, sends SIGTERM, and SIGKILL after the grace. NULL
 * when no resource is a lease pool. */
TesseraFence *tessera_fence_start  (GPtrArray              *resources,
                                    GPtrArray              *names,
                                    TesseraFenceSignalFunc  signal_command,
                                    gpointer                data);
/* Whether it ended the command. */
gboolean      tessera_fence_fenced (TesseraFence *fence);
void          tessera_fence_stop   (TesseraFence *fence);

G_END_DECLS
