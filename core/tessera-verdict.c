/* tessera-verdict.c: the verdict on a lock file's holder, one place
 * whose structure follows the table "Who may judge a holder"
 * (docs/design.md)
 *
 * Private to the project: the holder monitor gathers what is known of a
 * holder and asks the probes this asks for (job lock, /proc, host lease,
 * how long this host saw something); `tessera clean` asks it whether a
 * job folder's job is over (tessera_job_lock_is_released_at());
 * tests/test-verdict.c drives every row with substituted probe answers.
 * Pure: no I/O, no clock, no state.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef TESSERA_COMPILATION
#include "tessera-private.h"
#include "tessera-private.h"      /* the library's _(), its domain bound once */
#else
#include "config.h"
#include <glib/gi18n-lib.h>       /* the command's _(), bound in main () */
#endif
#include "tessera-verdict-private.h"

#include <errno.h>

/* Why a job lock that could not be probed leaves its holder unknown. */
static char *
job_lock_doubt (const TesseraVerdictFacts *facts)
{
  if (facts->job_folder_replaced)
    {
      g_autofree char *folder = g_path_get_dirname (facts->lock_path);

      return g_strdup_printf (_("its job folder %s is not the one its holder recorded (moved, replaced or a link): "
                                "the job lock there says nothing of it"), folder);
    }
  if (facts->job_lock == TESSERA_JOB_LOCK_FLOCKED)
    return g_strdup_printf (_("its job lock %s is held only by a flock, which anyone who may read it can take: "
                              "that proves nothing of its holder"),
                            facts->lock_path);
  if (facts->job_lock == TESSERA_JOB_LOCK_ABSENT)
    return g_strdup_printf (_("its job lock %s cannot be opened here (%s): its job folder may be one this host "
                              "cannot see (a container's own, another host's)"),
                            facts->lock_path, g_strerror (facts->job_lock_errno));
  if (facts->job_lock_errno == 0)
    return g_strdup_printf (_("its job lock %s is not a regular file"), facts->lock_path);
  return g_strdup_printf (_("its job lock %s cannot be probed here (%s)"), facts->lock_path,
                          g_strerror (facts->job_lock_errno));
}

/* Asks for @probe: no verdict yet. */
static TesseraVerdict
need (TesseraProbe *ask, TesseraProbe probe)
{
  *ask = probe;
  return TESSERA_VERDICT_UNKNOWN;
}

/* Row "anything else, or no identity": its job lock held or not. Only a
 * job lock that we opened and found free is a death; one we cannot open
 * (absent, not a folder, no permission, a link) counts. */
static TesseraVerdict
by_job_lock (const TesseraVerdictFacts *facts,
             TesseraProbe              *ask,
             char                     **reason)
{
  TesseraJobLockState lock = facts->job_lock;

  if (!facts->job_lock_asked)
    return need (ask, TESSERA_PROBE_JOB_LOCK);
  /* Tessera's holder keeps a write lock on its job lock while its job
   * holds anything, and never a flock: a flock there is someone else's,
   * who could read the file. */
  if (lock == TESSERA_JOB_LOCK_FLOCKED && facts->has_process && facts->written_by_tessera)
    lock = TESSERA_JOB_LOCK_FREE;
  if (lock == TESSERA_JOB_LOCK_HELD)
    return TESSERA_VERDICT_ALIVE;
  if (lock != TESSERA_JOB_LOCK_FREE)
    {
      *reason = job_lock_doubt (facts);
      return TESSERA_VERDICT_UNKNOWN;
    }
  return TESSERA_VERDICT_DEAD;
}

/* A waiter of the queue (its entry in queue/, shaped like a lock file):
 * by the rows of the table that its process and its host's lease answer,
 * and by the queue's own rules. An entry is its file owner's: one naming
 * a process that runs here, of another user than the entry's owner (a
 * member may name anyone's), is no waiter of hers; root may write
 * anyone's. An entry that names no process is no waiter either. Any
 * other waiter (another host's, hidden, unknown) counts while its job
 * lock is held, or while this host has seen its entry renewed within
 * min-age (a reserving waiter rewrites it at every attempt): its renewal
 * settles what nothing else can, and a waiter that counts may stay
 * ALIVE without a start time (its pid may be another process's now, the
 * renewal of its entry says nothing of it). */
static TesseraVerdict
waiter_verdict (const TesseraVerdictFacts *facts,
                TesseraProbe              *ask,
                char                     **reason)
{
  if (!facts->has_process)
    {
      *reason = g_strdup (_("it names no process"));
      return TESSERA_VERDICT_DEAD;
    }
  if (facts->process == TESSERA_PROCESS_DEAD)
    {
      *reason = g_strdup (_("its process is gone"));
      return TESSERA_VERDICT_DEAD;
    }
  if (facts->process == TESSERA_PROCESS_ALIVE)
    {
      if (facts->entry_by_root)
        return TESSERA_VERDICT_ALIVE;
      if (facts->process_of_owner == TESSERA_ANSWER_NOT_ASKED)
        return need (ask, TESSERA_PROBE_PROCESS_OWNER);
      if (facts->process_of_owner == TESSERA_ANSWER_NO)
        {
          *reason = g_strdup (_("it names a process of another user than its owner"));
          return TESSERA_VERDICT_DEAD;
        }
      return TESSERA_VERDICT_ALIVE;
    }
  if (facts->lease_expired == TESSERA_ANSWER_NOT_ASKED)
    return need (ask, TESSERA_PROBE_LEASE);
  if (facts->lease_expired == TESSERA_ANSWER_YES)
    {
      *reason = g_strdup (_("the lease of its host expired"));
      return TESSERA_VERDICT_DEAD;
    }
  if (!facts->job_lock_asked)
    return need (ask, TESSERA_PROBE_JOB_LOCK);
  if (facts->job_lock == TESSERA_JOB_LOCK_HELD)
    return TESSERA_VERDICT_ALIVE;
  if (facts->seen_for == TESSERA_ANSWER_NOT_ASKED)
    return need (ask, TESSERA_PROBE_SEEN_FOR);
  if (facts->seen_for != TESSERA_ANSWER_YES)
    return TESSERA_VERDICT_UNKNOWN;   /* counts; looked at again at every read */
  *reason = g_strdup (_("its process is on another host and it was not renewed"));
  return TESSERA_VERDICT_DEAD;
}

TesseraVerdict
_tessera_verdict_decide (const TesseraVerdictFacts *facts,
                         TesseraProbe              *ask,
                         char                     **reason)
{
  TesseraProcessState state = facts->process;
  TesseraVerdict verdict;

  *ask = TESSERA_PROBE_NONE;
  *reason = NULL;

  if (facts->waiter)
    return waiter_verdict (facts, ask, reason);

  /* Row "no identity" of a seed-era holder that names no process (in its
   * lock file nor in its .pid): its job lock, held by it while it
   * starts, and an orphan only once this host saw it for min-age. */
  if (!facts->has_process)
    {
      verdict = by_job_lock (facts, ask, reason);
      if (verdict != TESSERA_VERDICT_DEAD)
        return verdict;
      if (facts->seen_for == TESSERA_ANSWER_NOT_ASKED)
        return need (ask, TESSERA_PROBE_SEEN_FOR);
      if (facts->seen_for != TESSERA_ANSWER_YES)
        return TESSERA_VERDICT_UNKNOWN;   /* counts; looked at again on every refresh */
      *reason = g_strdup (_("it has no process and nobody holds its job lock"));
      return TESSERA_VERDICT_DEAD;
    }

  /* Rows "process type from a plugin" (no answer) and "unreadable
   * information, unknown type": they count. Why is the process's own
   * problem, shown with it. */
  if (state == TESSERA_PROCESS_UNKNOWN)
    return TESSERA_VERDICT_UNKNOWN;

  /* Row "same host id, boot id and pid namespace as us": pid and start
   * time in /proc. A live pid with no start time to compare (nor a spec:
   * experimaestro's) may be another process now: the job lock decides
   * too. */
  if (state == TESSERA_PROCESS_ALIVE && !facts->identifies_process)
    state = TESSERA_PROCESS_REMOTE;
  if (state == TESSERA_PROCESS_ALIVE)
    return TESSERA_VERDICT_ALIVE;
  /* Rows "same host id, boot id and pid namespace" (its pid gone, a
   * zombie, another start time) and "same host id, other boot id". */
  if (state == TESSERA_PROCESS_DEAD)
    {
      *reason = g_strdup_printf (_("its process %d is gone"), (int) facts->pid);
      return TESSERA_VERDICT_DEAD;
    }

  /* Row "host vanished but its locks linger (NFSv3 lock manager)": on a
   * lease pool, a host whose lease expired is gone with all it held,
   * whatever its job locks still look like. */
  if (facts->lease_expired == TESSERA_ANSWER_NOT_ASKED)
    return need (ask, TESSERA_PROBE_LEASE);
  if (facts->lease_expired == TESSERA_ANSWER_YES)
    {
      *reason = g_strdup_printf (_("the lease of its host %s expired (no renewal seen for %g s)"),
                                 facts->host != NULL ? facts->host : "?", facts->lease_time);
      return TESSERA_VERDICT_DEAD;
    }

  /* Row "anything else" (another host or namespace, hidden by hidepid,
   * no start time): its job lock, or its recorded job folder seen here
   * without it. */
  verdict = by_job_lock (facts, ask, reason);
  if (verdict != TESSERA_VERDICT_DEAD)
    return verdict;
  /* A Tessera holder takes its job lock before its lock file exists, and
   * a job whose lock was seen held has run: free is a death at once. An
   * experimaestro job takes it only once its process has started (Python
   * starting can take seconds after its spec was written): only once
   * this host has seen it free for min-age. */
  if (!facts->lock_seen_held && !facts->written_by_tessera)
    {
      if (facts->lock_free_long == TESSERA_ANSWER_NOT_ASKED)
        return need (ask, TESSERA_PROBE_LOCK_FREE_LONG);
      if (facts->lock_free_long != TESSERA_ANSWER_YES)
        return TESSERA_VERDICT_UNKNOWN;   /* counts; looked at again on every refresh */
    }
  /* Rows "a job lock taken on a mount whose locks do not reach the
   * shared file system" and "file system whose locks do not cross
   * hosts": a holder that may run on another host, whose job lock was
   * taken where locks do not cross, or seen here where they do not,
   * cannot be judged by it. Nor can one of this host whose job lock was
   * taken through another view of the pool (another mount of it, a
   * container's FUSE view): on one host too, locks taken on one view
   * reach the other only where both cross hosts. */
  if (!facts->on_this_host || facts->other_view)
    {
      if (facts->locks_cross_recorded != 0 && facts->locks_cross_here == TESSERA_ANSWER_NOT_ASKED)
        return need (ask, TESSERA_PROBE_LOCKS_CROSS);
      if (facts->locks_cross_recorded == 0 || facts->locks_cross_here != TESSERA_ANSWER_YES)
        {
          *reason = facts->on_this_host
                    ? g_strdup_printf (_("its job lock %s looks free here, which says nothing: it was taken "
                                         "through another view of the pool on this host (another mount of it), "
                                         "and locks taken on one of the two do not reach the other"),
                                       facts->lock_path)
                    : g_strdup_printf (_("its job lock %s looks free here, which says nothing: locks taken where it "
                                         "was taken or where this host sees it do not cross hosts"),
                                       facts->lock_path);
          return TESSERA_VERDICT_UNKNOWN;
        }
    }
  *reason = g_strdup_printf (_("its process %d cannot be judged from here and its job lock is free"),
                             (int) facts->pid);
  return TESSERA_VERDICT_DEAD;
}

gboolean
_tessera_verdict_state_ended (char state)
{
  return state == 'Z' || state == 'X' || state == 'x';
}

TesseraProcessState
_tessera_verdict_pid (const TesseraPidFacts *facts)
{
  if (facts->proc_read)
    {
      if (_tessera_verdict_state_ended (facts->proc_state))
        return facts->sure ? TESSERA_PROCESS_DEAD : TESSERA_PROCESS_REMOTE;
      if (facts->start_time != 0)
        return facts->proc_start_time == facts->start_time ? TESSERA_PROCESS_ALIVE
               : facts->sure ? TESSERA_PROCESS_DEAD : TESSERA_PROCESS_REMOTE;
      /* A live pid with no start time to compare may have been reused:
       * only the job lock can tell, unless the spec is not sure to be
       * about our pids at all (then a live pid is a holder, for safety). */
      return facts->sure ? TESSERA_PROCESS_REMOTE : TESSERA_PROCESS_ALIVE;
    }
  /* Not in /proc (or /proc could not be read): gone, or hidden from us
   * (hidepid), which kill() tells; whatever else it says is no death. */
  if (facts->kill_errno == ESRCH && facts->sure)
    return TESSERA_PROCESS_DEAD;
  return TESSERA_PROCESS_REMOTE;
}

gboolean
_tessera_verdict_job_lock_released (TesseraJobLockState state)
{
  /* A job folder of tessera run's: its job lock is held with an fcntl
   * lock (the wrapper's, which its command inherits), never a flock, so
   * a flock there is anyone's who may read the file, and proves nothing
   * (as by_job_lock() reads a Tessera holder's). */
  return state == TESSERA_JOB_LOCK_FREE || state == TESSERA_JOB_LOCK_FLOCKED;
}
