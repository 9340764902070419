/* tessera-process-private.h: /proc and process specs (core/tessera-
 * process.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* /proc/PID and pidfds */
gssize      _tessera_proc_read        (GPid         pid,
                                       const char  *name,
                                       char        *buffer,
                                       gsize        size,
                                       gboolean     first_line);
int         _tessera_pidfd_open       (GPid         pid);

/* Process specs */
/* Whether the spec's host ids are this host's. */
gboolean    _tessera_process_on_this_host (TesseraProcess *process);
/* Whether the spec is this very process's (written by Tessera). */
gboolean    _tessera_process_is_self    (TesseraProcess *process);
gboolean    _tessera_process_on_other_host (TesseraProcess *process);
/* The host id the spec records (NULL when none). */
const char *_tessera_process_get_host_id (TesseraProcess *process);
/* Whether a spec carries any member only Tessera writes: its holder took
 * its job lock before writing it, so a free job lock is a death at once. */
gboolean    _tessera_process_written_by_tessera (TesseraProcess *process);
/* The problem that keeps Tessera from judging the spec, or NULL. */
const char *_tessera_process_get_problem        (TesseraProcess *process);
TesseraProcess *_tessera_process_new_unknown    (const char     *problem);

/* One look at /proc: judging many holders at once (a status of thousands
 * of holders of one process), each pid is read once, not once per
 * holder. Made by _tessera_pid_look_new(), freed by g_hash_table_unref(). */
GHashTable *_tessera_pid_look_new (void);
/* tessera_process_check(), a pid read within @look (nullable: none). */
TesseraProcessState _tessera_process_check_in (TesseraProcess *self,
                                               GHashTable     *look);

G_END_DECLS
