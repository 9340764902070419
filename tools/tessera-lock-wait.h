/* tessera-lock-wait.h: what a command stuck behind a peer's lock says
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

G_BEGIN_DECLS

/* When thread @tid of this process waits in flock() or fcntl() for a
 * lock another process keeps (a pool's ipc.lock behind a stuck peer), or
 * sleeps while another process keeps a lock on an ipc.lock it has open
 * (Tessera polls for a seed-era peer's lockf()):
 * words naming the lock file and, when /proc/locks shows one, the pid
 * that holds it. NULL when it does not wait so (it runs, or waits on
 * something else). *@unknown is TRUE when it cannot be told (no /proc). */
char *tessera_lock_wait_describe (pid_t tid, gboolean *unknown);

/* How long a command waits in a lock a peer keeps before it says so. */
#define TESSERA_LOCK_NOTE_US (2 * G_USEC_PER_SEC)

/* Says on standard error that the command waits: @words are
 * tessera_lock_wait_describe()'s. */
void  tessera_lock_wait_say (const char *words);

/* For commands other than `run` (which watches from its signal thread):
 * from now on, a thread says once per lock file on standard error when
 * the calling thread has waited TESSERA_LOCK_NOTE_US for a lock a peer
 * keeps. */
void  tessera_lock_wait_note_start (void);

G_END_DECLS
