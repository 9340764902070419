/* tessera-verdict-private.h: the verdict on a lock file's holder, made
 * from what is known of it and what each probe answered; for the library
 * and the `tessera` command; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <tessera/tessera.h>

G_BEGIN_DECLS

/* What the job lock probe (`<job_uri>.lock`, _tessera_job_lock_probe())
 * answered. */
typedef enum {
  TESSERA_JOB_LOCK_FREE,      /* opened, and nobody holds it */
  TESSERA_JOB_LOCK_HELD,
  TESSERA_JOB_LOCK_UNKNOWN,   /* cannot be opened or probed: no verdict */
  /* Not there to open (ENOENT, ENOTDIR): no verdict either, since its
   * folder may be one this process cannot see (a container's own,
   * another host's). */
  TESSERA_JOB_LOCK_ABSENT,
  /* No write lock, but a flock, which whoever may open the file for
   * reading can take (it is open to more than its owner): no proof of
   * life. */
  TESSERA_JOB_LOCK_FLOCKED,
} TesseraJobLockState;

typedef enum {
  TESSERA_VERDICT_ALIVE,      /* it runs: it counts */
  TESSERA_VERDICT_DEAD,       /* surely gone: its lock file may go */
  TESSERA_VERDICT_UNKNOWN,    /* cannot be told (yet): it counts */
} TesseraVerdict;

/* A probe the verdict needs an answer from, before it can be made. */
typedef enum {
  TESSERA_PROBE_NONE,
  TESSERA_PROBE_LEASE,          /* whether its host's lease expired */
  TESSERA_PROBE_JOB_LOCK,       /* its job lock */
  TESSERA_PROBE_LOCK_FREE_LONG, /* whether this host saw its job lock free for min-age */
  TESSERA_PROBE_LOCKS_CROSS,    /* whether locks where this host sees the pool cross hosts */
  TESSERA_PROBE_SEEN_FOR,       /* whether this host saw its lock file (a waiter's entry) unchanged for min-age */
  TESSERA_PROBE_PROCESS_OWNER,  /* a waiter's: whether its process here is its entry's owner's */
} TesseraProbe;

/* A yes-or-no probe's answer; not asked (yet) is no answer at all. */
typedef enum {
  TESSERA_ANSWER_NOT_ASKED,
  TESSERA_ANSWER_NO,
  TESSERA_ANSWER_YES,
} TesseraAnswer;

/* What is known of a holder, then each probe's answer. Strings are
 * borrowed (for the reasons only). */
typedef struct
{
  /* What we know of the holder */
  gboolean has_process;           /* a process spec: its lock file's, or its .pid's */
  /* The pid check (tessera_process_check(): the spec's host id, boot
   * id and pid namespace against ours, then pid and start time in
   * /proc, or its type's plugin): ALIVE, DEAD, REMOTE (the pid says
   * nothing here: another host or namespace, hidden, no start time),
   * UNKNOWN (cannot be judged: unreadable spec, unknown type, no
   * answer from the plugin). */
  TesseraProcessState process;
  GPid pid;
  /* A start time or a spec to tell this process from a later one of
   * the same pid (experimaestro's specs have neither). */
  gboolean identifies_process;
  gboolean written_by_tessera;    /* its job lock is taken before its lock file exists */
  gboolean on_this_host;
  int locks_cross_recorded;       /* its spec: its job lock taken where locks cross hosts (1), not (0), unsaid (-1) */
  gboolean lock_seen_held;        /* its job lock was seen held before: its job ran */
  const char *host;               /* its host, for the reasons */
  const char *lock_path;          /* its job lock, for the reasons */
  /* A waiter of the queue (an entry in queue/, shaped like a lock file),
   * not a holder: the queue's own rules hold too (see
   * _tessera_verdict_decide()). */
  gboolean waiter;
  gboolean entry_by_root;         /* its entry is root's, who may write anyone's */

  /* The probes' answers */
  TesseraAnswer lease_expired;
  double lease_time;              /* the lease, for the reasons */
  gboolean job_lock_asked;
  TesseraJobLockState job_lock;
  int job_lock_errno;             /* why it is neither free nor held (0: not a regular file) */
  gboolean job_folder_replaced;   /* its recorded job folder is not the one at its path */
  /* Its spec records the view of the pool its job lock was taken through
   * ("view": the device of its job folder there), and the probe found
   * the job lock on another: on one host, another mount of the pool (a
   * container's FUSE view), whose locks may not reach ours. */
  gboolean other_view;
  TesseraAnswer lock_free_long;
  TesseraAnswer locks_cross_here;
  TesseraAnswer seen_for;
  TesseraAnswer process_of_owner; /* a waiter's process here is (or may be) its entry owner's */
} TesseraVerdictFacts;

/* What the pid check (tessera_process_check()) found of a process whose
 * spec says it runs on this host, in our /proc. */
typedef struct
{
  gboolean sure;                  /* its spec's identity (host, boot, pid namespace) says the pid is ours */
  guint64 start_time;             /* its spec's start time; 0: none */
  gboolean proc_read;             /* /proc/PID/stat was read */
  int proc_errno;                 /* else why (0: read, but not a stat line) */
  guint64 proc_start_time;        /* when read: its start time (0: none found) */
  char proc_state;                /* when read: 'R', 'S', 'Z', … */
  int kill_errno;                 /* when not read, kill (pid, 0): 0 (there), ESRCH, EPERM (hidepid), … */
} TesseraPidFacts;

/* Whether a process whose /proc/PID/stat shows @state has ended: a
 * zombie (Z) or dead (X, or x as some older kernels show it), which can
 * no longer do anything. Pure. */
gboolean _tessera_verdict_state_ended (char state);

/* Row "same host id, boot id and pid namespace as us" of the table "Who
 * may judge a holder": pid and start time in /proc; hidden by hidepid
 * (ENOENT there, EPERM from kill (pid, 0)) or without a start time to
 * compare, TESSERA_PROCESS_REMOTE: the job lock decides. When @facts are
 * not @sure (a spec without the identity), never DEAD: only a matching
 * live process is ALIVE, anything else REMOTE. Pure. */
TesseraProcessState _tessera_verdict_pid (const TesseraPidFacts *facts);

/* The verdict on a holder, following the table "Who may judge a holder"
 * (docs/design.md) row by row, or on a waiter of the queue (@facts'
 * waiter), by the same rows and the queue's own; pure: it reads @facts
 * only. When it needs
 * a probe's answer that @facts does not have yet, *@ask names it (the
 * verdict is then UNKNOWN, to be made again once it is answered), else
 * TESSERA_PROBE_NONE. *@reason (nullable out): why it is DEAD, or why it
 * is UNKNOWN when it can say (status shows it); NULL when it cannot be
 * told yet only for want of time (a job lock just found free, an orphan
 * just seen) or of an answer. Whatever is not known counts: only a sure
 * verdict is DEAD. */
TesseraVerdict _tessera_verdict_decide (const TesseraVerdictFacts *facts,
                                        TesseraProbe              *ask,
                                        char                     **reason);

/* Whether a job folder's job lock (@state, from _tessera_job_lock_probe())
 * shows that nobody runs that job any more: only one opened and found
 * free, or held only by a flock (never tessera run's), does. */
gboolean _tessera_verdict_job_lock_released (TesseraJobLockState state);

G_END_DECLS
