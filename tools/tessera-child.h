/* tessera-child.h: the life of the command `tessera run` starts (see
 * tessera-child.c): its gate, the run's signals, its death at the gate,
 * its end.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/resource.h>
#include <tessera/tessera.h>

G_BEGIN_DECLS

/* A started command: its pid, the write end of its gate, and the read end
 * of the pipe on which it reports a failed exec (an errno). */
typedef struct
{
  GPid pid;
  int gate;
  int report;
} Gated;

/* The run as its signal thread sees it (tessera-run.c has the one, in
 * static storage). Signals are caught from the start, on a thread of
 * their own: while waiting they cancel the wait at once (giving back
 * what is held), once the child runs they are forwarded. @lock orders
 * the signal thread's look at @child with the main thread's start of
 * the child. */
typedef struct
{
  GMutex lock;
  GCancellable *cancel;
  GMainLoop *loop;
  GPid child;          /* 0 until started, and again once reaped */
  int wait_status;
  gboolean share_terminal;
  int pending_signal;
  int command_gone;    /* the command died at its gate while we waited */
  /* Opening a resource takes its folder's ipc.lock, where neither the
   * cancellable nor the timeout reaches: until every need is open, the
   * signal thread ends the run itself (nothing is held yet). */
  char *opening;       /* the need being opened ("" before), or NULL */
  gint64 open_deadline; /* monotonic µs, or -1 */
  gboolean no_wait;
  int conflict_status; /* when the run gives up waiting: 75, or -E's */
  /* Once the acquisition is over, no command runs while the run names
   * the command in its lock files (before its gate opens) or releases
   * (after it ended): the same ipc.lock may keep the run waiting there,
   * and a signal then ends it once it has waited there a while (what it
   * holds is then a dead holder's). */
  gboolean settling;
  gboolean gate_open;  /* the command was let through its gate */
} RunState;

/* While a run waits, its command waits at its gate. Killed there on its
 * own, it closes the gate's report pipe: the wait then ends (as a signal
 * ends it), so that nothing is taken for a command that is gone. */
typedef struct
{
  RunState *state;
  int report;
  int stop[2];
  GThread *thread;
} GateGuard;

/* The descriptor limit the wrapper started with (main() may raise it). */
extern struct rlimit start_nofile;
extern gboolean start_nofile_raised;
/* A lease pool: the command, and all it starts, die with the wrapper. */
extern gboolean gate_die_with_wrapper;

/* Started behind its gate */
void     remember_start_signals (void);
gboolean gated_spawn            (char **command, int keep_fd, Gated *gated, GError **error);
void     gated_close            (Gated *gated);
int      gated_open             (Gated *gated, gboolean go, char **env);
int      gated_wait             (GPid pid);
int      exit_status_of         (int wstatus);

/* The run's signals, and the terminal it may share with the command */
gboolean in_terminal_foreground (void);
void     start_signal_thread    (RunState *state);
void     signal_command         (int signum, gpointer data);

/* Its death at the gate while the run waits, and its end once it runs */
void     gate_guard_start       (GateGuard *guard, RunState *state, int report);
void     gate_guard_stop        (GateGuard *guard);
void     child_exited           (GPid pid, int wait_status, gpointer data);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GateGuard, gate_guard_stop)

G_END_DECLS
