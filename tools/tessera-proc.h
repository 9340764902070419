/* tessera-proc.h: this machine's processes as /proc shows them (see
 * tessera-proc.c): whether children can be listed, and a process's
 * children. The run's fence walks its command's tree with them; the
 * tests watch the command's processes with the same reading. Whether a
 * process has ended is the library's tessera_process_pid_has_ended().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean tessera_proc_lists_children (void);
GArray  *tessera_proc_dup_children   (GPid pid);

G_END_DECLS
