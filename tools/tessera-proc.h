/* tessera-proc.h: this machine's processes as /proc shows them (see
 * tessera-proc.c): whether a process has ended, and its children. The
 * run's fence walks its command's tree with them; the tests watch the
 * command's processes with the same reading.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

gboolean tessera_proc_lists_children (void);
gboolean tessera_proc_has_ended      (GPid pid);
GArray  *tessera_proc_dup_children   (GPid pid);

G_END_DECLS
