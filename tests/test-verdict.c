/* test-verdict.c: the verdict on a holder (core/tessera-verdict.c), row by
 * row of the table "Who may judge a holder" (docs/design.md) and errno by
 * errno of each probe, with the probes' answers substituted: whatever is
 * not known, or a probe that failed, counts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessera-verdict-private.h"

/* What a holder is, what each probe answers, what the verdict must be. */
typedef struct
{
  const char *name;
  /* What we know of the holder */
  gboolean has_process;
  TesseraProcessState process;
  gboolean identifies_process;
  gboolean written_by_tessera;
  gboolean on_this_host;
  int recorded;                 /* 0: its job lock taken where locks cross, or: */
  gboolean lock_seen_held;
  /* The probes' answers, given when asked */
  gboolean lease_expired;
  TesseraJobLockState job_lock;
  int job_lock_errno;
  gboolean job_folder_replaced;
  gboolean other_view;           /* its job lock taken through another view of the pool than where it is probed */
  gboolean lock_free_long;
  gboolean locks_local_here;     /* locks do not cross hosts where this host sees the pool */
  gboolean seen_for;
  /* Wanted */
  TesseraVerdict verdict;
  const char *reason;     /* in the reason; NULL: none */
} Row;

#define RECORDED_LOCAL 1    /* taken where locks do not cross hosts */
#define RECORDED_UNSAID 2   /* its spec does not say */

#define PID 4242
#define LOCK_PATH "/pool/runs/1000/job.lock"

/* Our holder: a Tessera spec with every identity, on this host. */
#define OURS .has_process = TRUE, .identifies_process = TRUE, .written_by_tessera = TRUE, .on_this_host = TRUE
/* Another host's Tessera holder, its job lock taken where locks cross. */
#define OTHER_HOST .has_process = TRUE, .process = TESSERA_PROCESS_REMOTE, .identifies_process = TRUE, \
                   .written_by_tessera = TRUE
/* experimaestro's: a pid and a host name, no start time, no spec. */
#define XPM .has_process = TRUE, .recorded = RECORDED_UNSAID

static const Row rows[] = {
  /* Row 1: same host id, boot id and pid namespace as us: /proc. */
  { "same-host/alive", OURS, .process = TESSERA_PROCESS_ALIVE, .verdict = TESSERA_VERDICT_ALIVE },
  { "same-host/gone", OURS, .process = TESSERA_PROCESS_DEAD, .verdict = TESSERA_VERDICT_DEAD,
    .reason = "its process 4242 is gone" },
  /* Hidden by hidepid (ENOENT in /proc, EPERM from kill): remote for the
   * pid check, then the job lock. */
  { "same-host/hidden/lock-held", OURS, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_HELD,
    .verdict = TESSERA_VERDICT_ALIVE },
  { "same-host/hidden/lock-free", OURS, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_FREE,
    .verdict = TESSERA_VERDICT_DEAD, .reason = "cannot be judged from here and its job lock is free" },
  /* A live pid with no start time to compare (experimaestro's) may be
   * another process: the job lock decides. */
  { "same-host/no-start-time/lock-held", XPM, .process = TESSERA_PROCESS_ALIVE, .on_this_host = TRUE,
    .job_lock = TESSERA_JOB_LOCK_HELD, .verdict = TESSERA_VERDICT_ALIVE },
  { "same-host/no-start-time/lock-free-long", XPM, .process = TESSERA_PROCESS_ALIVE, .on_this_host = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .lock_free_long = TRUE, .verdict = TESSERA_VERDICT_DEAD,
    .reason = "job lock is free" },
  /* Row 2: same host id, other boot id: dead (the pid check says so). */
  { "same-host/other-boot", OURS, .process = TESSERA_PROCESS_DEAD, .verdict = TESSERA_VERDICT_DEAD,
    .reason = "is gone" },
  /* Row 3: anything else: its job lock held or not. */
  { "other-host/lock-held", OTHER_HOST, .job_lock = TESSERA_JOB_LOCK_HELD, .verdict = TESSERA_VERDICT_ALIVE },
  { "other-host/lock-free", OTHER_HOST, .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_DEAD,
    .reason = "its process 4242 cannot be judged from here and its job lock is free" },
  { "other-host/lock-free/seen-held-before", .has_process = TRUE, .process = TESSERA_PROCESS_REMOTE,
    .identifies_process = TRUE, .lock_seen_held = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_DEAD, .reason = "job lock is free" },
  /* Its recorded job folder is not the one at its path. */
  { "other-host/job-folder-replaced", OTHER_HOST, .job_lock = TESSERA_JOB_LOCK_UNKNOWN,
    .job_folder_replaced = TRUE, .verdict = TESSERA_VERDICT_UNKNOWN,
    .reason = "its job folder /pool/runs/1000 is not the one its holder recorded" },
  /* experimaestro's job lock is taken once Python started: free only
   * counts once this host saw it free for min-age. */
  { "experimaestro/lock-free-not-long", XPM, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_FREE,
    .lock_free_long = FALSE, .verdict = TESSERA_VERDICT_UNKNOWN },
  { "experimaestro/lock-free-long", XPM, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_FREE,
    .lock_free_long = TRUE, .verdict = TESSERA_VERDICT_DEAD, .reason = "job lock is free" },
  { "experimaestro/lock-held", XPM, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_HELD,
    .verdict = TESSERA_VERDICT_ALIVE },
  /* A job lock taken on a mount whose locks do not reach the shared file
   * system proves nothing to a judge elsewhere. */
  { "other-host/lock-taken-where-locks-stay-local", OTHER_HOST, .recorded = RECORDED_LOCAL,
    .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_UNKNOWN, .reason = "which says nothing" },
  /* Row 5: a file system whose locks do not cross hosts, as this host
   * sees the pool: nothing can judge another host's holder. */
  { "other-host/locks-do-not-cross-here", OTHER_HOST, .locks_local_here = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_UNKNOWN, .reason = "do not cross hosts" },
  { "experimaestro/locks-do-not-cross-here", XPM, .process = TESSERA_PROCESS_REMOTE, .locks_local_here = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .lock_free_long = TRUE, .verdict = TESSERA_VERDICT_UNKNOWN,
    .reason = "do not cross hosts" },
  /* ...but a holder of this host is judged by its job lock here. */
  { "same-host/hidden/locks-do-not-cross-here", OURS, .process = TESSERA_PROCESS_REMOTE, .locks_local_here = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_DEAD },
  /* ...unless its job lock was taken through another view of the pool
   * (a container's FUSE view, another mount): on one host, locks taken on
   * one view do not reach the other unless both cross hosts. */
  { "same-host/other-view/lock-taken-where-locks-stay-local", OURS, .process = TESSERA_PROCESS_REMOTE,
    .other_view = TRUE, .recorded = RECORDED_LOCAL, .job_lock = TESSERA_JOB_LOCK_FREE,
    .verdict = TESSERA_VERDICT_UNKNOWN, .reason = "another view" },
  { "same-host/other-view/locks-do-not-cross-here", OURS, .process = TESSERA_PROCESS_REMOTE, .other_view = TRUE,
    .locks_local_here = TRUE, .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_UNKNOWN,
    .reason = "another view" },
  { "same-host/other-view/lock-held", OURS, .process = TESSERA_PROCESS_REMOTE, .other_view = TRUE,
    .recorded = RECORDED_LOCAL, .job_lock = TESSERA_JOB_LOCK_HELD, .verdict = TESSERA_VERDICT_ALIVE },
  /* Two views whose locks both cross hosts (two mounts of one file
   * server) exclude each other: its job lock decides. */
  { "same-host/other-view/locks-cross-on-both", OURS, .process = TESSERA_PROCESS_REMOTE, .other_view = TRUE,
    .job_lock = TESSERA_JOB_LOCK_FREE, .verdict = TESSERA_VERDICT_DEAD, .reason = "job lock is free" },
  /* A flock on a job lock that more than its owner may read proves
   * nothing (a member may take one): a Tessera holder never takes one,
   * so its job lock is free; experimaestro's may, so it is not known. */
  { "other-host/flock-only", OTHER_HOST, .job_lock = TESSERA_JOB_LOCK_FLOCKED, .verdict = TESSERA_VERDICT_DEAD,
    .reason = "job lock is free" },
  { "experimaestro/flock-only", XPM, .process = TESSERA_PROCESS_REMOTE, .job_lock = TESSERA_JOB_LOCK_FLOCKED,
    .lock_free_long = TRUE, .verdict = TESSERA_VERDICT_UNKNOWN, .reason = "held only by a flock" },
  { "no-process/flock-only", .job_lock = TESSERA_JOB_LOCK_FLOCKED, .seen_for = TRUE,
    .verdict = TESSERA_VERDICT_UNKNOWN, .reason = "held only by a flock" },
  /* Row 4: host vanished but its locks linger (NFSv3): its lease. */
  { "other-host/lease-expired/lock-held", OTHER_HOST, .lease_expired = TRUE, .job_lock = TESSERA_JOB_LOCK_HELD,
    .verdict = TESSERA_VERDICT_DEAD, .reason = "the lease of its host node7 expired (no renewal seen for 30 s)" },
  { "other-host/lease-live/lock-held", OTHER_HOST, .lease_expired = FALSE, .job_lock = TESSERA_JOB_LOCK_HELD,
    .verdict = TESSERA_VERDICT_ALIVE },
  /* Row 6: a process type from a plugin that does not answer; row 7:
   * unreadable information, an unknown type: they count. */
  { "plugin/no-answer", .has_process = TRUE, .process = TESSERA_PROCESS_UNKNOWN, .job_lock = TESSERA_JOB_LOCK_FREE,
    .lock_free_long = TRUE, .seen_for = TRUE, .verdict = TESSERA_VERDICT_UNKNOWN },
  { "unreadable-spec", OURS, .process = TESSERA_PROCESS_UNKNOWN, .job_lock = TESSERA_JOB_LOCK_FREE,
    .lease_expired = TRUE, .verdict = TESSERA_VERDICT_UNKNOWN },
  /* No identity at all (a seed-era holder that names no process): its job
   * lock, then min-age as an orphan. */
  { "no-process/lock-held", .job_lock = TESSERA_JOB_LOCK_HELD, .seen_for = TRUE, .verdict = TESSERA_VERDICT_ALIVE },
  { "no-process/lock-free/new", .job_lock = TESSERA_JOB_LOCK_FREE, .seen_for = FALSE,
    .verdict = TESSERA_VERDICT_UNKNOWN },
  { "no-process/lock-free/old", .job_lock = TESSERA_JOB_LOCK_FREE, .seen_for = TRUE,
    .verdict = TESSERA_VERDICT_DEAD, .reason = "it has no process and nobody holds its job lock" },
};

/* Each way the job lock probe can fail, as it says it: opening it
 * (ENOENT and ENOTDIR: absent; the rest: unknown), fstat(), F_OFD_GETLK,
 * flock(), and not a regular file (0). */
typedef struct
{
  int errsv;
  TesseraJobLockState state;
  const char *reason;
} ProbeFailure;

static const ProbeFailure job_lock_failures[] = {
  { ENOENT, TESSERA_JOB_LOCK_ABSENT, "cannot be opened here" },
  { ENOTDIR, TESSERA_JOB_LOCK_ABSENT, "cannot be opened here" },
  { EACCES, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EPERM, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ELOOP, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EIO, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EMFILE, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ENFILE, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ESTALE, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EINTR, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ENAMETOOLONG, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ENXIO, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EOVERFLOW, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ENOMEM, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { ENOLCK, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EINVAL, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EBADF, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { EWOULDBLOCK, TESSERA_JOB_LOCK_UNKNOWN, "cannot be probed here" },
  { 0, TESSERA_JOB_LOCK_UNKNOWN, "is not a regular file" },
};

/* Answers @probe as @row says. */
static void
answer (const Row *row, TesseraProbe probe, TesseraVerdictFacts *facts)
{
#define ANSWER(yes) ((yes) ? TESSERA_ANSWER_YES : TESSERA_ANSWER_NO)
  switch (probe)
    {
    case TESSERA_PROBE_LEASE:
      facts->lease_expired = ANSWER (row->lease_expired);
      facts->lease_time = 30;
      break;
    case TESSERA_PROBE_JOB_LOCK:
      facts->job_lock_asked = TRUE;
      facts->job_lock = row->job_lock;
      facts->job_lock_errno = row->job_lock_errno;
      facts->job_folder_replaced = row->job_folder_replaced;
      facts->other_view = row->other_view;
      break;
    case TESSERA_PROBE_LOCK_FREE_LONG:
      facts->lock_free_long = ANSWER (row->lock_free_long);
      break;
    case TESSERA_PROBE_LOCKS_CROSS:
      facts->locks_cross_here = ANSWER (!row->locks_local_here);
      break;
    case TESSERA_PROBE_SEEN_FOR:
      facts->seen_for = ANSWER (row->seen_for);
      break;
    case TESSERA_PROBE_NONE:
    default:
      g_assert_not_reached ();
    }
#undef ANSWER
}

/* What a probe that fails gives (the holder monitor's answer when it
 * cannot tell): its lease not expired, its job lock unknown (EIO), not
 * seen free or unchanged for min-age, locks that stay local here, a
 * process that may be its entry owner's. */
static void
answer_failed (TesseraProbe probe, TesseraVerdictFacts *facts)
{
  switch (probe)
    {
    case TESSERA_PROBE_LEASE:
      facts->lease_expired = TESSERA_ANSWER_NO;
      facts->lease_time = 30;
      break;
    case TESSERA_PROBE_JOB_LOCK:
      facts->job_lock_asked = TRUE;
      facts->job_lock = TESSERA_JOB_LOCK_UNKNOWN;
      facts->job_lock_errno = EIO;
      break;
    case TESSERA_PROBE_LOCK_FREE_LONG:
      facts->lock_free_long = TESSERA_ANSWER_NO;
      break;
    case TESSERA_PROBE_LOCKS_CROSS:
      facts->locks_cross_here = TESSERA_ANSWER_NO;
      break;
    case TESSERA_PROBE_SEEN_FOR:
      facts->seen_for = TESSERA_ANSWER_NO;
      break;
    case TESSERA_PROBE_PROCESS_OWNER:
      facts->process_of_owner = TESSERA_ANSWER_YES;
      break;
    case TESSERA_PROBE_NONE:
    default:
      g_assert_not_reached ();
    }
}

/* Every probe, as a mask for judge(). */
#define ALL_PROBES (~0u)

/* The verdict on @row's holder, asking the probes it needs as the holder
 * monitor does, but for those in @failed (a mask of 1 << probe), which
 * fail (answer_failed()). @asked: the probes asked. */
static TesseraVerdict
judge (const Row *row, guint failed, char **reason, guint *asked)
{
  TesseraVerdictFacts facts = {
    .has_process = row->has_process,
    .process = row->process,
    .pid = PID,
    .identifies_process = row->identifies_process,
    .written_by_tessera = row->written_by_tessera,
    .on_this_host = row->on_this_host,
    .locks_cross_recorded = row->recorded == RECORDED_LOCAL ? 0 : row->recorded == RECORDED_UNSAID ? -1 : 1,
    .lock_seen_held = row->lock_seen_held,
    .host = "node7",
    .lock_path = LOCK_PATH,
  };
  TesseraVerdict verdict;
  TesseraProbe ask;

  *asked = 0;
  for (guint round = 0;; round++)
    {
      g_assert_cmpuint (round, <, 8);   /* each probe asked once at most */
      g_clear_pointer (reason, g_free);
      verdict = _tessera_verdict_decide (&facts, &ask, reason);
      if (ask == TESSERA_PROBE_NONE)
        break;
      g_assert_cmpint (verdict, ==, TESSERA_VERDICT_UNKNOWN);
      g_assert_false (*asked & (1u << ask));
      *asked |= 1u << ask;
      if (failed & (1u << ask))
        answer_failed (ask, &facts);
      else
        answer (row, ask, &facts);
    }
  return verdict;
}

static void
check_row (const Row *row)
{
  g_autofree char *reason = NULL;
  g_autofree char *failed_reason = NULL;
  guint asked = 0, failed_asked = 0;
  TesseraVerdict verdict = judge (row, 0, &reason, &asked);

  g_test_message ("%s: verdict %d, reason %s", row->name, verdict, reason != NULL ? reason : "(none)");
  g_assert_cmpint (verdict, ==, row->verdict);
  if (row->reason != NULL)
    {
      g_assert_nonnull (reason);
      g_assert_nonnull (strstr (reason, row->reason));
    }
  if (verdict == TESSERA_VERDICT_ALIVE)
    g_assert_null (reason);
  if (verdict == TESSERA_VERDICT_DEAD)
    g_assert_nonnull (reason);

  /* Fail closed: a probe asked on the way that fails never makes a
   * holder dead that its answer left counted… */
  for (TesseraProbe probe = TESSERA_PROBE_LEASE; probe <= TESSERA_PROBE_PROCESS_OWNER; probe++)
    {
      g_autofree char *one_reason = NULL;
      guint one_asked = 0;

      if (!(asked & (1u << probe)) || verdict == TESSERA_VERDICT_DEAD)
        continue;
      g_assert_cmpint (judge (row, 1u << probe, &one_reason, &one_asked), !=, TESSERA_VERDICT_DEAD);
    }
  /* … and a holder whose every probe fails counts, unless what is known
   * of it without any (its process, dead here) says it is gone. */
  if (judge (row, ALL_PROBES, &failed_reason, &failed_asked) == TESSERA_VERDICT_DEAD)
    g_assert_cmpuint (failed_asked, ==, 0);
}

static void
test_row (gconstpointer data)
{
  check_row (data);
}

/* Each failure of the job lock probe, for each kind of holder judged by
 * its job lock: it counts, and status says why. */
static void
test_job_lock_failures (gconstpointer data)
{
  const Row *base = data;

  for (gsize i = 0; i < G_N_ELEMENTS (job_lock_failures); i++)
    {
      Row row = *base;
      g_autofree char *wanted = g_strdup_printf ("its job lock " LOCK_PATH " %s", job_lock_failures[i].reason);

      row.name = g_strerror (job_lock_failures[i].errsv);
      row.job_lock = job_lock_failures[i].state;
      row.job_lock_errno = job_lock_failures[i].errsv;
      /* Whatever else says it might go. */
      row.lock_free_long = row.seen_for = TRUE;
      row.locks_local_here = FALSE;
      row.verdict = TESSERA_VERDICT_UNKNOWN;
      row.reason = wanted;
      check_row (&row);
      if (job_lock_failures[i].errsv != 0)
        {
          g_autofree char *why = g_strdup_printf ("(%s)", g_strerror (job_lock_failures[i].errsv));
          g_autofree char *reason = NULL;
          guint asked;

          judge (&row, 0, &reason, &asked);
          g_assert_nonnull (strstr (reason, why));
        }
    }
}

/* Row "same host id, boot id and pid namespace as us": pid and start
 * time in /proc, and each way reading /proc can fail, with each answer
 * of kill (pid, 0). */
typedef struct
{
  const char *name;
  TesseraPidFacts facts;
  TesseraProcessState sure;      /* wanted with the identity */
} PidRow;

#define START 123456
static const PidRow pid_rows[] = {
  { "running", { .start_time = START, .proc_read = TRUE, .proc_start_time = START, .proc_state = 'S' },
    TESSERA_PROCESS_ALIVE },
  { "other-start-time", { .start_time = START, .proc_read = TRUE, .proc_start_time = START + 1, .proc_state = 'R' },
    TESSERA_PROCESS_DEAD },
  { "zombie", { .start_time = START, .proc_read = TRUE, .proc_start_time = START, .proc_state = 'Z' },
    TESSERA_PROCESS_DEAD },
  { "dead-state", { .start_time = START, .proc_read = TRUE, .proc_start_time = START, .proc_state = 'X' },
    TESSERA_PROCESS_DEAD },
  { "no-start-time", { .proc_read = TRUE, .proc_start_time = START, .proc_state = 'S' }, TESSERA_PROCESS_REMOTE },
  { "stat-without-start-time", { .start_time = START, .proc_read = TRUE, .proc_state = 'S' }, TESSERA_PROCESS_DEAD },
};
static const int proc_errnos[] = { ENOENT, EACCES, EPERM, ESRCH, EIO, EMFILE, ENFILE, ENOMEM, ESTALE, EINTR, 0 };
static const int kill_errnos[] = { 0, ESRCH, EPERM, EINVAL };

static void
test_pid (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (pid_rows); i++)
    {
      TesseraPidFacts facts = pid_rows[i].facts;
      TesseraProcessState state;

      facts.sure = TRUE;
      g_test_message ("%s", pid_rows[i].name);
      g_assert_cmpint (_tessera_verdict_pid (&facts), ==, pid_rows[i].sure);
      /* Without the identity the pid may be another host's: never dead. */
      facts.sure = FALSE;
      state = _tessera_verdict_pid (&facts);
      g_assert_cmpint (state, ==, pid_rows[i].sure == TESSERA_PROCESS_REMOTE ? TESSERA_PROCESS_ALIVE
                                  : pid_rows[i].sure == TESSERA_PROCESS_DEAD ? TESSERA_PROCESS_REMOTE
                                  : pid_rows[i].sure);
    }
  /* Not read: only kill()'s ESRCH is a death (hidden by hidepid: EPERM,
   * the job lock decides), whatever /proc said. */
  for (gsize i = 0; i < G_N_ELEMENTS (proc_errnos); i++)
    for (gsize j = 0; j < G_N_ELEMENTS (kill_errnos); j++)
      {
        TesseraPidFacts facts = { .sure = TRUE, .start_time = START, .proc_errno = proc_errnos[i],
                                  .kill_errno = kill_errnos[j] };

        g_test_message ("/proc: %s, kill: %s", g_strerror (proc_errnos[i]), g_strerror (kill_errnos[j]));
        g_assert_cmpint (_tessera_verdict_pid (&facts), ==,
                         kill_errnos[j] == ESRCH ? TESSERA_PROCESS_DEAD : TESSERA_PROCESS_REMOTE);
        facts.sure = FALSE;
        g_assert_cmpint (_tessera_verdict_pid (&facts), ==, TESSERA_PROCESS_REMOTE);
      }
}

/* `tessera clean`'s question of a job folder: only a job lock opened and
 * found free ends a job. */
static void
test_job_folder (void)
{
  g_assert_true (_tessera_verdict_job_lock_released (TESSERA_JOB_LOCK_FREE));
  g_assert_false (_tessera_verdict_job_lock_released (TESSERA_JOB_LOCK_HELD));
  g_assert_false (_tessera_verdict_job_lock_released (TESSERA_JOB_LOCK_UNKNOWN));
  g_assert_false (_tessera_verdict_job_lock_released (TESSERA_JOB_LOCK_ABSENT));
  /* tessera run never flocks its job lock: anyone who may read it can. */
  g_assert_true (_tessera_verdict_job_lock_released (TESSERA_JOB_LOCK_FLOCKED));
}

/* The same, of real job locks in a real folder (what `tessera clean`
 * asks before it removes a job folder): free only when opened and no
 * fcntl lock holds it; a flock (never tessera run's) proves nothing. */
static void
test_job_folder_locks (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tessera-verdict-XXXXXX", NULL);
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int dir_fd, fd, held;

  g_assert_nonnull (dir);
  dir_fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (dir_fd, >=, 0);
  fd = openat (dir_fd, "job.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_true (tessera_job_lock_is_released_at (dir_fd, "job.lock"));

  /* Held: an OFD write lock (Tessera's, lockf's kind); a flock
   * (filelock's), on its own open file description, holds nothing. */
  held = openat (dir_fd, "job.lock", O_RDWR | O_CLOEXEC);
  g_assert_cmpint (fcntl (held, F_OFD_SETLK, &fl), ==, 0);
  g_assert_false (tessera_job_lock_is_released_at (dir_fd, "job.lock"));
  close (held);
  g_assert_true (tessera_job_lock_is_released_at (dir_fd, "job.lock"));
  held = openat (dir_fd, "job.lock", O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (flock (held, LOCK_EX | LOCK_NB), ==, 0);
  g_assert_true (tessera_job_lock_is_released_at (dir_fd, "job.lock"));
  close (held);

  /* Not there, a link, a FIFO, a folder: not a job lock found free. */
  g_assert_false (tessera_job_lock_is_released_at (dir_fd, "gone.lock"));
  g_assert_cmpint (symlinkat ("job.lock", dir_fd, "link.lock"), ==, 0);
  g_assert_false (tessera_job_lock_is_released_at (dir_fd, "link.lock"));
  g_assert_cmpint (mkfifoat (dir_fd, "fifo.lock", 0644), ==, 0);
  g_assert_false (tessera_job_lock_is_released_at (dir_fd, "fifo.lock"));
  g_assert_cmpint (mkdirat (dir_fd, "dir.lock", 0755), ==, 0);
  g_assert_false (tessera_job_lock_is_released_at (dir_fd, "dir.lock"));

  close (fd);
  for (const char *const *name = (const char *const[]) { "job.lock", "link.lock", "fifo.lock", NULL }; *name; name++)
    g_assert_cmpint (unlinkat (dir_fd, *name, 0), ==, 0);
  g_assert_cmpint (unlinkat (dir_fd, "dir.lock", AT_REMOVEDIR), ==, 0);
  close (dir_fd);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* A waiter of the queue: what its entry says, what each probe answers,
 * what the verdict must be. */
typedef struct
{
  const char *name;
  gboolean has_process;
  TesseraProcessState process;
  gboolean identifies_process;
  gboolean entry_by_root;
  gboolean process_of_owner;
  gboolean lease_expired;
  TesseraJobLockState job_lock;
  gboolean unrenewed;           /* this host saw its entry unchanged for min-age */
  TesseraVerdict verdict;
  const char *reason;           /* in the reason, when DEAD */
} WaiterRow;

static const WaiterRow waiter_rows[] = {
  { "no-process", FALSE, TESSERA_PROCESS_UNKNOWN, FALSE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_HELD, FALSE,
    TESSERA_VERDICT_DEAD, "names no process" },
  { "process-gone", TRUE, TESSERA_PROCESS_DEAD, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_HELD, FALSE,
    TESSERA_VERDICT_DEAD, "is gone" },
  { "alive-hers", TRUE, TESSERA_PROCESS_ALIVE, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_FREE, TRUE,
    TESSERA_VERDICT_ALIVE, NULL },
  { "alive-of-another-user", TRUE, TESSERA_PROCESS_ALIVE, TRUE, FALSE, FALSE, FALSE, TESSERA_JOB_LOCK_HELD, FALSE,
    TESSERA_VERDICT_DEAD, "another user" },
  { "alive-entry-by-root", TRUE, TESSERA_PROCESS_ALIVE, TRUE, TRUE, FALSE, FALSE, TESSERA_JOB_LOCK_FREE, TRUE,
    TESSERA_VERDICT_ALIVE, NULL },
  /* No start time: its pid may be another's now, but a waiter counts. */
  { "alive-no-identity", TRUE, TESSERA_PROCESS_ALIVE, FALSE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_FREE, TRUE,
    TESSERA_VERDICT_ALIVE, NULL },
  { "remote-lease-expired", TRUE, TESSERA_PROCESS_REMOTE, TRUE, FALSE, TRUE, TRUE, TESSERA_JOB_LOCK_HELD, FALSE,
    TESSERA_VERDICT_DEAD, "lease" },
  { "remote-job-lock-held", TRUE, TESSERA_PROCESS_REMOTE, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_HELD, TRUE,
    TESSERA_VERDICT_ALIVE, NULL },
  { "remote-renewed", TRUE, TESSERA_PROCESS_REMOTE, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_FREE, FALSE,
    TESSERA_VERDICT_UNKNOWN, NULL },
  { "remote-unrenewed", TRUE, TESSERA_PROCESS_REMOTE, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_FREE, TRUE,
    TESSERA_VERDICT_DEAD, "not renewed" },
  { "remote-job-lock-absent-unrenewed", TRUE, TESSERA_PROCESS_REMOTE, TRUE, FALSE, TRUE, FALSE,
    TESSERA_JOB_LOCK_ABSENT, TRUE, TESSERA_VERDICT_DEAD, "not renewed" },
  { "unknown-renewed", TRUE, TESSERA_PROCESS_UNKNOWN, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_UNKNOWN, FALSE,
    TESSERA_VERDICT_UNKNOWN, NULL },
  { "unknown-unrenewed", TRUE, TESSERA_PROCESS_UNKNOWN, TRUE, FALSE, TRUE, FALSE, TESSERA_JOB_LOCK_FLOCKED, TRUE,
    TESSERA_VERDICT_DEAD, "not renewed" },
};

/* The verdict on a waiter, as _tessera_holder_monitor_judge_waiter()
 * asks it, but for the probes in @failed (a mask of 1 << probe), which
 * fail (answer_failed()). @asked: the probes asked. */
static TesseraVerdict
judge_waiter (const WaiterRow *row, guint failed, char **reason, guint *asked)
{
  TesseraVerdictFacts facts = {
    .waiter = TRUE,
    .entry_by_root = row->entry_by_root,
    .has_process = row->has_process,
    .process = row->process,
    .pid = PID,
    .identifies_process = row->identifies_process,
    .host = "node7",
    .lock_path = LOCK_PATH,
  };
  TesseraVerdict verdict;
  TesseraProbe ask;

#define ANSWER(yes) ((yes) ? TESSERA_ANSWER_YES : TESSERA_ANSWER_NO)
  *asked = 0;
  for (guint round = 0;; round++)
    {
      g_assert_cmpuint (round, <, 8);
      g_clear_pointer (reason, g_free);
      verdict = _tessera_verdict_decide (&facts, &ask, reason);
      if (ask == TESSERA_PROBE_NONE)
        break;
      g_assert_cmpint (verdict, ==, TESSERA_VERDICT_UNKNOWN);
      g_assert_false (*asked & (1u << ask));
      *asked |= 1u << ask;
      if (failed & (1u << ask))
        {
          answer_failed (ask, &facts);
          continue;
        }
      switch (ask)
        {
        case TESSERA_PROBE_PROCESS_OWNER:
          facts.process_of_owner = ANSWER (row->process_of_owner);
          break;
        case TESSERA_PROBE_LEASE:
          facts.lease_expired = ANSWER (row->lease_expired);
          break;
        case TESSERA_PROBE_JOB_LOCK:
          facts.job_lock_asked = TRUE;
          facts.job_lock = row->job_lock;
          break;
        case TESSERA_PROBE_SEEN_FOR:
          facts.seen_for = ANSWER (row->unrenewed);
          break;
        case TESSERA_PROBE_NONE:
        case TESSERA_PROBE_LOCK_FREE_LONG:
        case TESSERA_PROBE_LOCKS_CROSS:
        default:
          g_assert_not_reached ();   /* not a waiter's */
        }
    }
#undef ANSWER
  return verdict;
}

/* Each row, then each probe failing, then all of them. */
static void
test_waiter_row (gconstpointer data)
{
  const WaiterRow *row = data;
  g_autofree char *reason = NULL;
  guint asked = 0;
  TesseraVerdict verdict = judge_waiter (row, 0, &reason, &asked);

  g_test_message ("%s: verdict %d, reason %s", row->name, verdict, reason != NULL ? reason : "(none)");
  g_assert_cmpint (verdict, ==, row->verdict);
  if (row->reason != NULL)
    {
      g_assert_nonnull (reason);
      g_assert_nonnull (strstr (reason, row->reason));
    }
  /* A probe that fails never makes a waiter that its answer left
   * counted no waiter; every probe failing leaves it counted, unless
   * what is known without any says it is none. The job lock is the
   * exception the queue's rules make: only one seen held proves a waiter
   * that stopped renewing its entry alive (another member's job lock is
   * often unreadable: her crashed waiter must not reserve for ever). */
  for (TesseraProbe probe = TESSERA_PROBE_LEASE; probe <= TESSERA_PROBE_PROCESS_OWNER; probe++)
    {
      g_clear_pointer (&reason, g_free);
      if (verdict != TESSERA_VERDICT_DEAD && probe != TESSERA_PROBE_JOB_LOCK)
        g_assert_cmpint (judge_waiter (row, 1u << probe, &reason, &asked), !=, TESSERA_VERDICT_DEAD);
    }
  g_clear_pointer (&reason, g_free);
  if (judge_waiter (row, ALL_PROBES, &reason, &asked) == TESSERA_VERDICT_DEAD)
    g_assert_cmpuint (asked, ==, 0);
}

int
main (int argc, char *argv[])
{
  static const Row job_lock_judged[] = {
    { "other-host", OTHER_HOST },
    { "same-host-hidden", OURS, .process = TESSERA_PROCESS_REMOTE },
    { "experimaestro", XPM, .process = TESSERA_PROCESS_REMOTE },
    { "experimaestro-live-pid", XPM, .process = TESSERA_PROCESS_ALIVE, .on_this_host = TRUE },
    { "no-process" },
  };

  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strconcat ("/verdict/row/", rows[i].name, NULL);
      g_test_add_data_func (path, &rows[i], test_row);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (job_lock_judged); i++)
    {
      g_autofree char *path = g_strconcat ("/verdict/job-lock-fails/", job_lock_judged[i].name, NULL);
      g_test_add_data_func (path, &job_lock_judged[i], test_job_lock_failures);
    }
  for (guint i = 0; i < G_N_ELEMENTS (waiter_rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/verdict/waiter/%s", waiter_rows[i].name);
      g_test_add_data_func (path, &waiter_rows[i], test_waiter_row);
    }
  g_test_add_func ("/verdict/pid", test_pid);
  g_test_add_func ("/verdict/job-folder", test_job_folder);
  g_test_add_func ("/verdict/job-folder/real-locks", test_job_folder_locks);
  return g_test_run ();
}
