/* test-wait.c: waiting on a full resource — woken by events, timeout,
 * cancel, async (acceptance 4).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-counter.h"
#include "test-utils.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Polling only every 1000 s: a waiter that gets through did so by an event. */
static const char * const no_poll_env[] = { "TESSERA_POLL_INTERVAL", "1000", NULL };
/* Nor waking at the end of its patience (60 s by default) to reserve. */
static const char * const no_poll_no_patience_env[] = { "TESSERA_POLL_INTERVAL", "1000", "TESSERA_PATIENCE", "1000", NULL };

typedef struct
{
  char *tmp;
  char *folder;
  TestCounter *counter;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->tmp = test_make_tmpdir ();
  f->folder = g_build_filename (f->tmp, "token", NULL);
  f->counter = test_counter_new (f->folder, 1, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->counter);
  g_clear_pointer (&f->tmp, test_tmpdir_free);
  g_free (f->folder);
}

static void
test_woken_by_release (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *line = NULL;

  helper_expect_line (holder, "ACQUIRED", 60);
  /* Nor patience: its end (60 s, within the read's 90) would wake it too. */
  waiter = helper_spawn (no_poll_no_patience_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);   /* let it sleep in the wait (not required for correctness) */
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  line = helper_read_line (waiter, 90);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A peer raising the total in place wakes a waiter of another process
 * at once (no polling), also after informations.json was replaced by
 * another file (a rename), whose in-place write must be seen too. */
static void
check_woken_by_total_in_place (Fixture *f, gboolean replaced_first)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *info = g_build_filename (f->folder, "informations.json", NULL);
  g_autofree char *line = NULL;

  helper_expect_line (holder, "ACQUIRED", 60);
  waiter = helper_spawn (no_poll_no_patience_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);   /* let it sleep in the wait (not required for correctness) */
  if (replaced_first)
    {
      /* Same total, new file: nothing to grant yet. */
      test_write_file (info, "{\"total\": 1, \"tessera_protocol\": 2}");
      g_usleep (200 * 1000);   /* let it see the new file (not required for correctness) */
    }
  test_write_in_place (info, "{\"total\": 2, \"tessera_protocol\": 2}");
  line = helper_read_line (waiter, 90);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

static void
test_woken_by_total_in_place (Fixture *f, gconstpointer data)
{
  check_woken_by_total_in_place (f, FALSE);
}

static void
test_woken_by_total_in_place_after_replace (Fixture *f, gconstpointer data)
{
  check_woken_by_total_in_place (f, TRUE);
}

static TesseraDynamicDependencyLock *
hold_in_process (Fixture *f, const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", id);
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  TesseraDynamicDependencyLock *lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);

  g_assert_no_error (error);
  return lock;
}

/* A lock file that appears under its name without a rename or a write
 * (link(2): a peer's "create, never replace" writer, O_TMPFILE + linkat)
 * counts for the next decision of a process that watches the folder,
 * even though such an appearance wakes no waiter (it frees nothing). */
static void
test_linked_lock_file_counts (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "late");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) process = tessera_process_to_json (self);
  g_autofree char *process_text = json_to_string (process, FALSE);
  g_autofree char *uri = g_build_filename (f->tmp, "other", "linked", NULL);
  g_autofree char *content = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, "
                                              "\"process\": %s}", uri, process_text);
  g_autofree char *outside = g_build_filename (f->tmp, "linked.json", NULL);
  g_autofree char *inside = g_build_filename (f->folder, "jobs", "other@linked.json", NULL);

  helper_expect_line (holder, "ACQUIRED", 60);
  /* A first wait: this process now watches the folder. */
  lock = tessera_dynamic_dependency_lock (dep, 0.2, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_clear_error (&error);
  test_write_file (outside, content);
  g_assert_cmpint (link (outside, inside), ==, 0);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  /* The holder's unit is free, but the linked lock file (this very
   * process, alive) holds the only unit. */
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
}

static char *peer_lock_file_text (Fixture *f, GPid pid);

/* A live peer (`sleep 600`, returned) holding the only unit through its
 * lock file @path (its JSON in @text); this process knows the file and
 * watches the folder after a first wait for @dep, refused. */
static GSubprocess *
watch_peer_holder (Fixture *f, TesseraDynamicDependency *dep, const char *path, char **text)
{
  g_autoptr(GError) error = NULL;
  GSubprocess *peer = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                        &error, "sleep", "600", NULL);

  g_assert_no_error (error);
  *text = peer_lock_file_text (f, (GPid) g_ascii_strtoll (g_subprocess_get_identifier (peer), NULL, 10));
  test_write_file (path, *text);
  g_assert_null (tessera_dynamic_dependency_lock (dep, 0.2, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  return peer;
}

/* A lock file removed and made again at once in place, still open (a
 * peer writing it: inotify tells of its creation, not yet of a write),
 * counts for the next decision of a process that watches the folder:
 * the last event the name had on the waking instance is the removal,
 * but the creation, told only to the other, came after it. */
static void
test_removed_then_made_in_place_counts (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "late");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *path = g_build_filename (f->folder, "jobs", "peer@job.json", NULL);
  g_autofree char *notes = g_build_filename (f->folder, "jobs", "notes.txt", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GSubprocess) peer = watch_peer_holder (f, dep, path, &text);
  int fd;

  /* A change that wakes its poller, which finds nobody waiting and then
   * reads events only every few seconds: the removal and the creation
   * are then read in one drain, the decision's (more likely so, not
   * required for correctness). */
  test_write_file (notes, "not a holder");
  g_usleep (300 * 1000);
  g_assert_cmpint (g_unlink (path), ==, 0);
  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
  g_assert_cmpint (close (fd), ==, 0);
  g_subprocess_force_exit (peer);
}

/* A lock file replaced by an exchange of names (renameat2's
 * RENAME_EXCHANGE, `mv --exchange`) counts: the last event its name had
 * is IN_MOVED_FROM (the old file leaving), yet a file is there. */
static void
test_exchanged_lock_file_counts (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "late");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autofree char *path = g_build_filename (f->folder, "jobs", "peer@job.json", NULL);
  g_autofree char *next = g_build_filename (f->folder, "jobs", "peer@job.json.next", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GSubprocess) peer = watch_peer_holder (f, dep, path, &text);

  test_write_file (next, text);
  g_assert_cmpint (renameat2 (AT_FDCWD, next, AT_FDCWD, path, RENAME_EXCHANGE), ==, 0);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_null (lock);
  g_subprocess_force_exit (peer);
}

/* The JSON of a lock file of one unit whose holder is process @pid. */
static char *
peer_lock_file_text (Fixture *f, GPid pid)
{
  g_autoptr(TesseraProcess) process = tessera_process_new_local (pid);
  g_autoptr(JsonNode) node = tessera_process_to_json (process);
  g_autofree char *process_text = json_to_string (node, FALSE);
  g_autofree char *uri = g_build_filename (f->tmp, "peer", "job", NULL);

  return g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"process\": %s}",
                          uri, process_text);
}

/* A peer that rewrites its lock file in place to name another process
 * (experimaestro names its job's process so) wakes a waiter, which must
 * then watch that process: when it dies, the waiter gets the unit at
 * once (polling and patience off), though the first process lives on. */
static void
test_woken_by_holder_renamed_in_place (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) first = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "sleep", "600", NULL);
  g_autoptr(GSubprocess) second = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "sleep", "600", NULL);
  g_autofree char *path = g_build_filename (f->folder, "jobs", "peer@job.json", NULL);
  g_autofree char *text = NULL;
  g_autofree char *line = NULL;
  g_autoptr(Helper) waiter = NULL;

  g_assert_no_error (error);
  text = peer_lock_file_text (f, (GPid) g_ascii_strtoll (g_subprocess_get_identifier (first), NULL, 10));
  test_write_file (path, text);
  waiter = helper_spawn (no_poll_no_patience_env, "wait", f->folder, "-1", "waiter", "100", NULL);
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);   /* let it sleep in the wait (not required for correctness) */
  g_free (text);
  text = peer_lock_file_text (f, (GPid) g_ascii_strtoll (g_subprocess_get_identifier (second), NULL, 10));
  test_write_in_place (path, text);
  g_subprocess_force_exit (second);
  g_assert_true (g_subprocess_wait (second, NULL, &error));
  g_assert_no_error (error);
  line = helper_read_line (waiter, 60);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_subprocess_force_exit (first);
}

/* A waiter whose process watched the folder while nobody waited in it
 * (a wake-up then found nobody and left later events queued, unpolled)
 * is woken by a release once it waits: no polling, no patience, so only
 * the event can wake it. */
static void
test_woken_after_idle (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *line = NULL;

  helper_expect_line (holder, "ACQUIRED", 60);
  waiter = helper_spawn (no_poll_no_patience_env, "wait", f->folder, "-1", "waiter", "100", "--watch-first", NULL);
  helper_expect_line (waiter, "WATCHING", 60);
  /* Changes in jobs/ that are no lock files (they count for nobody) wake
   * its poller, which finds nobody waiting; then more, left queued. */
  for (int i = 0; i < 5; i++)
    {
      g_autofree char *name = g_strdup_printf ("notes-%d.txt", i);
      g_autofree char *path = g_build_filename (f->folder, "jobs", name, NULL);

      test_write_file (path, "not a holder");
      g_usleep (100 * 1000);   /* one wake-up each (not required for correctness) */
    }
  helper_write_line (waiter, "go");
  helper_expect_line (waiter, "WAITING", 60);
  g_usleep (200 * 1000);   /* let it sleep in the wait (not required for correctness) */
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  line = helper_read_line (waiter, 90);
  g_assert_cmpstr (line, ==, "ACQUIRED polls=0");
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* Voluntary context switches (its sleeps after wake-ups) of this
 * process's poller thread so far. */
static guint64
poller_switches (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;
  guint64 total = 0;
  guint found = 0;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *comm_path = g_build_filename ("/proc/self/task", tid, "comm", NULL);
      g_autofree char *status_path = g_build_filename ("/proc/self/task", tid, "status", NULL);
      g_autofree char *comm = NULL, *status = NULL;
      g_auto(GStrv) lines = NULL;

      if (!g_file_get_contents (comm_path, &comm, NULL, NULL) || !g_str_has_prefix (comm, "tessera-poller") ||
          !g_file_get_contents (status_path, &status, NULL, NULL))
        continue;
      found++;
      lines = g_strsplit (status, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (g_str_has_prefix (lines[i], "voluntary_ctxt_switches:"))   /* not preemptions: load */
          total += g_ascii_strtoull (strchr (lines[i], ':') + 1, NULL, 10);
    }
  if (found != 1)
    g_error ("%u poller threads in this process, one expected", found);
  return total;
}

/* Makes this process watch the pool (a wait of 0.3 s on a full
 * resource), then lets it go: nobody waits in it any more. */
static void
watch_then_idle (Fixture *f, TesseraDynamicDependency *dep)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) none = tessera_dynamic_dependency_lock (dep, 0.3, NULL, &error);

  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));
  g_usleep (200 * 1000);   /* its own release's events read (not required for correctness) */
}

/* A process that watches a pool (it has waited on it) but in which nobody
 * waits now is not woken by each acquisition and release of the pool's
 * other processes: their events stay queued for its next decision. (Each
 * woke every such process's poller thread, most of the CPU of a busy
 * pool's acquisitions.) */
static void
test_idle_poller_sleeps (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  g_autofree char *log = g_build_filename (f->tmp, "cycles.log", NULL);
  g_autoptr(Helper) cycler = NULL;
  guint64 before, after;
  gint64 start;
  double seconds;

  watch_then_idle (f, dep);
  before = poller_switches ();
  start = g_get_monotonic_time ();
  cycler = helper_spawn (NULL, "cycle", f->folder, "-1", "c", "40", log, NULL);
  g_assert_cmpint (helper_wait (cycler), ==, 0);
  after = poller_switches ();
  seconds = (double) (g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  g_test_message ("the idle process's poller switched %" G_GUINT64_FORMAT " times during 40 acquisitions "
                  "and releases of another process (%.1f s)", after - before, seconds);
  /* A few wake-ups, and its drain of the queue every 2 s while events
   * come (under valgrind each wake-up may cost two switches): not two per
   * acquisition and release (80). */
  g_assert_cmpuint (after - before, <, 10 + 2 * (guint64) seconds);

  /* A wait that begins now still sees the queued events, then new ones. */
  {
    g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, 60, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
  }
}

static void
on_total_counted (GObject *object, GParamSpec *pspec, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

static gboolean
counter_total_is_4 (gpointer counter)
{
  return test_counter_get_total (counter) == 4;
}

/* A process that watches the pool (it has waited on it) but in which
 * nobody waits now still applies another process's change of
 * informations.json (notify::total, the total property), as the class's
 * documentation says ("a change is applied in every running process").
 * It makes no decision meanwhile: only the folder monitor can tell it. */
static void
test_idle_process_applies_total (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(TestCounter) other = NULL;
  gint notified = 0;

  watch_then_idle (f, dep);
  g_signal_connect (f->counter, "notify::total", G_CALLBACK (on_total_counted), &notified);
  other = test_counter_new (f->folder, -1, &error);
  g_assert_no_error (error);
  for (int total = 2; total <= 4; total++)
    {
      g_autofree char *text = g_strdup_printf ("{\"total\": %d}", total);
      g_autoptr(JsonNode) node = json_from_string (text, NULL);

      tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (other), node, &error);
      g_assert_no_error (error);
      g_usleep (100 * 1000);
    }
  /* A bound, not a time: a hang is far longer. */
  test_poll_until (counter_total_is_4, f->counter, 30);
  g_test_message ("notify::total emitted %d times", g_atomic_int_get (&notified));
  g_assert_cmpint (test_counter_get_total (f->counter), ==, 4);
  g_assert_cmpint (g_atomic_int_get (&notified), >=, 1);
  g_signal_handlers_disconnect_by_data (f->counter, &notified);
}

/* A process that watches the pool (more than 8 refreshes) but does not
 * wait reads its events only every few seconds: a burst of changes fills
 * its inotify queue (IN_Q_OVERFLOW). If jobs/ is then replaced (its
 * IN_MOVE_SELF / IN_IGNORED lost to the full queue), its watch still
 * named the old folder: after the full scan the overflow asks for, it
 * must still see holders that appear in the new jobs/, or it grants a
 * unit that is held. (Three queues' worth of changes: one idle drain
 * during the burst leaves it full again before the replacement.) */
static void
test_overflow_then_jobs_replaced (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->folder, "jobs", NULL);
  g_autofree char *old = g_build_filename (f->folder, "jobs.old", NULL);
  g_autofree char *max_text = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "p");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GError) error = NULL;
  guint64 events;

  for (int i = 0; i < 10; i++)
    {
      tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (f->counter), &error);
      g_assert_no_error (error);
    }
  g_assert_true (g_file_get_contents ("/proc/sys/fs/inotify/max_queued_events", &max_text, NULL, NULL));
  events = 3 * g_ascii_strtoull (max_text, NULL, 10);
  for (guint64 i = 0; i < events; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/n%" G_GUINT64_FORMAT ".txt", jobs, i);
      int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

      g_assert_cmpint (fd, >=, 0);
      close (fd);
      g_assert_cmpint (unlink (path), ==, 0);
    }
  g_assert_cmpint (rename (jobs, old), ==, 0);
  g_assert_cmpint (g_mkdir (jobs, 0755), ==, 0);
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (f->counter), &error);
  g_assert_no_error (error);

  holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  helper_expect_line (holder, "ACQUIRED", 60);
  lock = tessera_dynamic_dependency_lock (dep, 0, NULL, &error);
  g_assert_null (lock);
  g_clear_error (&error);
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

static void
test_timeout (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_null (tessera_dynamic_dependency_lock (dep, 0.3, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 300 * 1000);
}

static void
on_timed_out (GObject *source, GAsyncResult *result, gpointer data)
{
  GError **error = data;

  g_assert_null (tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, error));
  g_assert_nonnull (*error);
}

/* A request larger than the whole total waits (the total may grow), and
 * its timeout says why it waited: the type's reason reaches the caller of
 * a lock, an async lock and acquire_all, not only a bare "timed out". */
static void
test_timeout_says_why (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "big");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 2);
  g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();
  g_autoptr(GError) error = NULL;

  g_assert_null (tessera_dynamic_dependency_lock (dep, 0.3, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_nonnull (strstr (error->message, "more than the total"));
  g_clear_error (&error);

  tessera_dynamic_dependency_lock_async (dep, 0.3, NULL, on_timed_out, &error);
  while (error == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_nonnull (strstr (error->message, "more than the total"));
  g_clear_error (&error);

  g_assert_false (tessera_dynamic_dependency_locks_acquire_all (locks, &dep, 1, 0.3, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_nonnull (strstr (error->message, "more than the total"));
}

/* tessera_dynamic_resource_wait's timeout is in seconds, as the lock's. */
static void
test_wait_timeout_seconds (Fixture *f, gconstpointer data)
{
  TesseraDynamicResource *resource = TESSERA_DYNAMIC_RESOURCE (f->counter);
  g_autoptr(GError) error = NULL;
  gint64 start;

  /* The fallback poll may change the generation first: wait again until
   * a wait runs out (its intervals grow past 0.3 s). */
  do
    start = g_get_monotonic_time ();
  while (tessera_dynamic_resource_wait (resource, tessera_dynamic_resource_get_generation (resource),
                                        0.3, NULL, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 300 * 1000);
}

typedef struct
{
  TesseraDynamicDependency *dep;
  GCancellable *cancellable;
  GError *error;
  TesseraDynamicDependencyLock *lock;
} Waiter;

static gpointer
wait_forever (gpointer data)
{
  Waiter *w = data;
  w->lock = tessera_dynamic_dependency_lock (w->dep, -1, w->cancellable, &w->error);
  return NULL;
}

static void
test_cancel (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Waiter w = { dep, cancellable, NULL, NULL };
  GThread *thread = g_thread_new ("waiter", wait_forever, &w);

  g_usleep (300 * 1000);
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);
  g_assert_null (w.lock);
  g_assert_error (w.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&w.error);
}

typedef struct
{
  GMainLoop *loop;
  TesseraDynamicDependencyLock *held;
  TesseraDynamicDependencyLock *got;
  GError *error;
  gboolean released;
} AsyncState;

static gboolean
release_held (gpointer data)
{
  AsyncState *s = data;
  g_assert_true (tessera_lock_release (TESSERA_LOCK (s->held), NULL));
  s->released = TRUE;
  return G_SOURCE_REMOVE;
}

static void
on_locked (GObject *source, GAsyncResult *result, gpointer data)
{
  AsyncState *s = data;
  s->got = tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &s->error);
  g_main_loop_quit (s->loop);
}

static void
test_async (Fixture *f, gconstpointer data)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "local", "b");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  AsyncState s = { loop, held, NULL, NULL, FALSE };

  tessera_dynamic_dependency_lock_async (dep, 60, NULL, on_locked, &s);
  g_timeout_add (200, release_held, &s);
  g_main_loop_run (loop);
  g_assert_no_error (s.error);
  g_assert_true (s.released);
  g_assert_nonnull (s.got);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (s.got)), ==, 1);
  g_object_unref (s.got);
}

static void
on_async_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock =
    tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &error);

  g_assert_null (lock);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  (*(guint *) data)++;
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Async waits wait through sources in the caller's context: twelve of
 * them park no thread (a thread-pool thread each before), and a cancel
 * ends each at once. */
static void
test_async_waits_park_no_thread (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GPtrArray) deps = g_ptr_array_new_with_free_func (g_object_unref);
  guint before = test_count_entries ("/proc/self/task"), during, done = 0;
  gboolean settled = FALSE;

  for (int i = 0; i < 12; i++)
    {
      g_autofree char *id = g_strdup_printf ("w%d", i);
      g_autoptr(TesseraJob) job = test_job_new (f->tmp, "async", id);
      TesseraDynamicDependency *dep = test_counter_dependency_new (f->counter, job, 1);

      g_ptr_array_add (deps, dep);
      tessera_dynamic_dependency_lock_async (dep, 60, cancellable, on_async_done, &done);
    }
  /* Long enough for a thread pool to have grown for blocked tasks. */
  g_timeout_add (2000, set_flag, &settled);
  while (!settled)
    g_main_context_iteration (NULL, TRUE);
  during = test_count_entries ("/proc/self/task");
  g_cancellable_cancel (cancellable);
  while (done < 12)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (during, <=, before + 2);
}

static void
test_reentrant_levels (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autofree char *path = g_build_filename (f->folder, "jobs", "local@a.json", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (tessera_lock_acquire (TESSERA_LOCK (held), &error));
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (held)), ==, 2);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (tessera_lock_release (TESSERA_LOCK (held), NULL));   /* not held: nothing happens */
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (held)), ==, 0);
}

typedef struct
{
  TestCounter *counter;
  gint done;
} UpdateRun;

static void
on_total_read_usage (GObject *object, GParamSpec *pspec, gpointer data)
{
  /* A handler's natural reaction: look at the new state. */
  tessera_tracked_dynamic_resource_get_usage (TESSERA_TRACKED_DYNAMIC_RESOURCE (object), NULL, NULL);
  g_assert_cmpint (test_counter_get_total (TEST_COUNTER (object)), ==, 3);
  g_atomic_int_inc ((gint *) data);
}

static gpointer
run_update (gpointer data)
{
  UpdateRun *run = data;
  g_autoptr(GError) error = NULL;

  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (run->counter), &error);
  g_assert_no_error (error);
  g_atomic_int_set (&run->done, 1);
  return NULL;
}

/* A notify::total handler that reads the usage must not deadlock: the
 * resource emits only once it has let go of its own lock. */
static void
test_notify_outside_lock (Fixture *f, gconstpointer data)
{
  g_autoptr(TestCounter) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) three = json_from_string ("{\"total\": 3}", NULL);
  UpdateRun run = { f->counter, 0 };
  gint notified = 0;
  GThread *thread;

  g_signal_connect (f->counter, "notify::total", G_CALLBACK (on_total_read_usage), &notified);
  other = test_counter_new (f->folder, -1, &error);
  g_assert_no_error (error);
  tessera_tracked_dynamic_resource_write_informations (TESSERA_TRACKED_DYNAMIC_RESOURCE (other), three, &error);
  g_assert_no_error (error);

  thread = g_thread_new ("update", run_update, &run);
  test_wait_until (test_flag_is_set, &run.done, 60,
                   "update did not return: a notify handler deadlocked on the resource's lock");
  g_thread_join (thread);
  g_assert_cmpint (g_atomic_int_get (&notified), >=, 1);
  g_signal_handlers_disconnect_by_data (f->counter, &notified);
}

/* Whether /proc/locks shows a request of this process blocked on a lock. */
static gboolean
blocked_on_a_lock (gpointer data)
{
  g_autofree char *locks = NULL;
  g_autofree char *needle = g_strdup_printf (" %d ", (int) getpid ());
  g_auto(GStrv) lines = NULL;

  g_assert_true (g_file_get_contents ("/proc/locks", &locks, NULL, NULL));
  lines = g_strsplit (locks, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "->") != NULL && strstr (lines[i], needle) != NULL)
      return TRUE;
  return FALSE;
}

/* Waits (up to a minute) until a thread of this process is blocked on a
 * lock: @who's wait for a peer's ipc.lock. */
static void
wait_blocked_on_a_lock (const char *who)
{
  test_wait_until (blocked_on_a_lock, NULL, 60, "%s never blocked on its ipc.lock", who);
}

static gpointer
acquire_blocked (gpointer data)
{
  Fixture *f = data;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "blocked", "a");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  /* No timeout nor cancellable: it waits in flock() for the peer. */
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_lock (dep, -1, NULL, &error);

  return NULL;
}

/* A peer keeping folder A's ipc.lock must not stall this process's other
 * resources: the waiter on B is woken when B's holder dies, although an
 * acquirer of A is stuck behind the peer. */
static void
test_stuck_folder_does_not_stall_others (Fixture *f, gconstpointer data)
{
  g_autofree char *folder_b = g_build_filename (f->tmp, "other", NULL);
  g_autofree char *ipc_a = g_build_filename (f->folder, "ipc.lock", NULL);
  g_autofree char *event_a = g_build_filename (f->folder, "jobs", "event.txt", NULL);
  g_autoptr(TestCounter) b = NULL;
  g_autoptr(Helper) peer = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dep = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  GThread *stuck;

  b = test_counter_new (folder_b, 1, &error);
  g_assert_no_error (error);
  holder = helper_spawn (no_poll_env, "hold", folder_b, "-1", "holder", "1", NULL);
  helper_expect_line (holder, "ACQUIRED", 60);
  tessera_tracked_dynamic_resource_update (TESSERA_TRACKED_DYNAMIC_RESOURCE (b), &error);
  g_assert_no_error (error);

  peer = helper_spawn (NULL, "flock", ipc_a, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  stuck = g_thread_new ("stuck", acquire_blocked, f);
  wait_blocked_on_a_lock ("the acquirer of A");
  /* An event on A for the poller's thread, then B's holder dies. */
  test_write_file (event_a, "[]");
  g_usleep (200 * 1000);   /* let the poller reach A's event first (not needed for correctness) */
  helper_kill (holder, SIGKILL);
  helper_wait (holder);

  job = test_job_new (f->tmp, "waiter", "b");
  dep = test_counter_dependency_new (b, job, 1);
  lock = tessera_dynamic_dependency_lock (dep, 30, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (lock);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));

  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  g_thread_join (stuck);
}

typedef struct
{
  TesseraLock *lock;
  gint asked;
  guint level;
  gboolean detached;
} LevelQuestion;

static gpointer
take_behind_peer (gpointer data)
{
  /* No try-only: the real taking waits in flock() for the peer. */
  g_assert_true (tessera_lock_acquire (data, NULL));
  return NULL;
}

static gpointer
ask_level (gpointer data)
{
  LevelQuestion *q = data;

  q->level = tessera_lock_get_level (q->lock);
  q->detached = tessera_lock_is_detached (q->lock);
  g_atomic_int_set (&q->asked, 1);
  return NULL;
}

/* Asking a lock's level or whether it is detached never waits for a
 * taking of that lock that waits for a busy folder (a peer keeps its
 * ipc.lock): the answer comes at once. */
static void
test_level_asked_while_taking_waits (Fixture *f, gconstpointer data)
{
  g_autofree char *ipc = g_build_filename (f->folder, "ipc.lock", NULL);
  g_autoptr(Helper) peer = NULL;
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "taker", "a");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = tessera_dynamic_dependency_create_lock (dep, &error);
  LevelQuestion q = { TESSERA_LOCK (lock), 0, 7, TRUE };
  GThread *taker, *asker;

  g_assert_no_error (error);
  peer = helper_spawn (NULL, "flock", ipc, NULL);
  helper_expect_line (peer, "LOCKED", 60);
  taker = g_thread_new ("taker", take_behind_peer, lock);
  wait_blocked_on_a_lock ("the taking");
  asker = g_thread_new ("asker", ask_level, &q);
  test_wait_until (test_flag_is_set, &q.asked, 60, "asking the level waited for the taking behind the peer");
  g_thread_join (asker);
  g_assert_cmpuint (q.level, ==, 0);
  g_assert_false (q.detached);

  helper_close_stdin (peer);
  g_assert_cmpint (helper_wait (peer), ==, 0);
  g_thread_join (taker);
  g_assert_cmpuint (tessera_lock_get_level (TESSERA_LOCK (lock)), ==, 1);
  g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
}

/* A waiter keeps its back-off across the wake-ups that poll ticks cause:
 * from 0.1 s growing by 1.5, six seconds take about nine polls, not sixty. */
static void
test_backoff_kept_across_wakeups (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = helper_spawn (NULL, "hold", f->folder, "-1", "holder", "1", NULL);
  g_autoptr(TesseraJob) job = test_job_new (f->tmp, "patient", "a");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (f->counter, job, 1);
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  guint before;

  helper_expect_line (holder, "ACQUIRED", 60);
  before = test_counter_get_polls (f->counter);
  lock = tessera_dynamic_dependency_lock (dep, 6, NULL, &error);
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_cmpuint (test_counter_get_polls (f->counter) - before, <=, 20);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* How a wait behind a peer keeping ipc.lock is made: one dependency,
 * several at once (what `tessera run` does) or without a thread. */
typedef enum
{
  BEHIND_LOCK,
  BEHIND_LOCKS,
  BEHIND_ASYNC,
} BehindWay;

typedef struct
{
  Fixture *f;
  BehindWay way;
  double timeout;
  GCancellable *cancellable;
  GError *error;
  gint done;
  gint waiting;   /* the async wait has begun */
} BlockedLock;

static void
on_behind_locked (GObject *source, GAsyncResult *result, gpointer data)
{
  BlockedLock *b = data;
  g_autoptr(TesseraDynamicDependencyLock) lock =
    tessera_dynamic_dependency_lock_finish (TESSERA_DYNAMIC_DEPENDENCY (source), result, &b->error);

  g_atomic_int_set (&b->done, 1);
}

static gpointer
lock_behind_peer (gpointer data)
{
  BlockedLock *b = data;
  g_autoptr(TesseraJob) job = test_job_new (b->f->tmp, "behind", "a");
  g_autoptr(TesseraDynamicDependency) dep = test_counter_dependency_new (b->f->counter, job, 1);

  if (b->way == BEHIND_LOCK)
    {
      g_autoptr(TesseraDynamicDependencyLock) lock =
        tessera_dynamic_dependency_lock (dep, b->timeout, b->cancellable, &b->error);
    }
  else if (b->way == BEHIND_LOCKS)
    {
      g_autoptr(TesseraDynamicDependencyLocks) locks = tessera_dynamic_dependency_locks_new ();

      tessera_dynamic_dependency_locks_acquire_all (locks, &dep, 1, b->timeout, b->cancellable, &b->error);
    }
  else
    {
      g_autoptr(GMainContext) context = g_main_context_new ();

      g_main_context_push_thread_default (context);
      tessera_dynamic_dependency_lock_async (dep, b->timeout, b->cancellable, on_behind_locked, b);
      g_atomic_int_set (&b->waiting, 1);
      while (!g_atomic_int_get (&b->done))
        g_main_context_iteration (context, TRUE);
      g_main_context_pop_thread_default (context);
    }
  g_atomic_int_set (&b->done, 1);
  return NULL;
}

/* A peer keeping ipc.lock must not make a wait deaf to its cancellable
 * nor to its timeout: cancelling ends it at once, and a timeout of 0.5 s
 * ends it about then (a second of grace for a peer's short critical
 * section), while the peer still keeps the lock. */
static void
test_behind_ipc_lock (Fixture *f, gconstpointer data)
{
  guint mode = GPOINTER_TO_UINT (data);
  gboolean cancel = (mode & 1) != 0;
  g_autofree char *ipc = g_build_filename (f->folder, "ipc.lock", NULL);
  g_autoptr(Helper) peer = helper_spawn (NULL, "flock", ipc, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  BlockedLock b = { f, mode >> 1, cancel ? 60 : 0.5, cancel ? cancellable : NULL, NULL, 0, 0 };
  GThread *thread;
  gboolean ended_while_locked;

  helper_expect_line (peer, "LOCKED", 60);
  thread = g_thread_new ("behind", lock_behind_peer, &b);
  g_usleep (300 * 1000);   /* let it reach ipc.lock (not needed for correctness) */
  if (cancel)
    g_cancellable_cancel (cancellable);
  ended_while_locked = test_poll_until (test_flag_is_set, &b.done, 30);
  /* Let the peer go in any case, so a failing run still ends. */
  helper_close_stdin (peer);
  g_thread_join (thread);
  if (cancel)
    g_assert_error (b.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  else
    g_assert_error (b.error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT);
  g_assert_true (ended_while_locked);
  g_clear_error (&b.error);
  g_assert_cmpint (helper_wait (peer), ==, 0);
}

static void
slow_cancelled_handler (GCancellable *cancellable, gpointer data)
{
  g_usleep (300 * 1000);
}

/* An async wait cancelled from another thread, whose cancel is still busy
 * (a slower "cancelled" handler of the caller's) when the wait ends:
 * everything the wait made is freed (valgrind, LeakSanitizer). GLib 2.74
 * keeps a cancellable source freed while a cancel runs, for that cancel's
 * handler to drop, which has run already: it leaked. */
static void
test_async_cancelled_from_another_thread (Fixture *f, gconstpointer data)
{
  g_autoptr(TesseraDynamicDependencyLock) held = hold_in_process (f, "a");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  BlockedLock b = { f, BEHIND_ASYNC, -1, cancellable, NULL, 0, 0 };
  GThread *thread = g_thread_new ("async-waiter", lock_behind_peer, &b);

  while (!g_atomic_int_get (&b.waiting))
    g_usleep (1000);
  /* After the wait's own handler: the cancel is busy here once the wait
   * has been told. */
  g_signal_connect (cancellable, "cancelled", G_CALLBACK (slow_cancelled_handler), NULL);
  g_cancellable_cancel (cancellable);
  g_thread_join (thread);
  g_assert_error (b.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&b.error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/wait/woken-by-release-in-another-process", test_woken_by_release);
  ADD ("/wait/woken-by-total-written-in-place", test_woken_by_total_in_place);
  ADD ("/wait/woken-by-total-written-in-place/after-replace", test_woken_by_total_in_place_after_replace);
  ADD ("/wait/lock-file-made-by-link-counts", test_linked_lock_file_counts);
  ADD ("/wait/removed-then-made-in-place-counts", test_removed_then_made_in_place_counts);
  ADD ("/wait/exchanged-lock-file-counts", test_exchanged_lock_file_counts);
  ADD ("/wait/woken-by-holder-renamed-in-place", test_woken_by_holder_renamed_in_place);
  ADD ("/wait/idle-poller-sleeps-through-others-changes", test_idle_poller_sleeps);
  ADD ("/wait/woken-after-events-queued-while-nobody-waited", test_woken_after_idle);
  ADD ("/wait/idle-process-applies-total", test_idle_process_applies_total);
  ADD ("/wait/overflow-then-jobs-replaced", test_overflow_then_jobs_replaced);
  ADD ("/wait/timeout", test_timeout);
  ADD ("/wait/timeout-says-why", test_timeout_says_why);
  ADD ("/wait/resource-wait-timeout-in-seconds", test_wait_timeout_seconds);
  ADD ("/wait/notify-outside-lock", test_notify_outside_lock);
#define ADD_BEHIND(path, way, cancel) \
  g_test_add (path, Fixture, GUINT_TO_POINTER ((way) << 1 | (cancel)), fixture_set_up, test_behind_ipc_lock, \
              fixture_tear_down)
  ADD_BEHIND ("/wait/cancel-behind-ipc-lock", BEHIND_LOCK, 1);
  ADD_BEHIND ("/wait/cancel-behind-ipc-lock/all-at-once", BEHIND_LOCKS, 1);
  ADD_BEHIND ("/wait/cancel-behind-ipc-lock/async", BEHIND_ASYNC, 1);
  ADD_BEHIND ("/wait/timeout-behind-ipc-lock", BEHIND_LOCK, 0);
  ADD_BEHIND ("/wait/timeout-behind-ipc-lock/all-at-once", BEHIND_LOCKS, 0);
  ADD_BEHIND ("/wait/timeout-behind-ipc-lock/async", BEHIND_ASYNC, 0);
  ADD ("/wait/async-waits-park-no-thread", test_async_waits_park_no_thread);
  ADD ("/wait/backoff-kept-across-wakeups", test_backoff_kept_across_wakeups);
  ADD ("/wait/stuck-folder-does-not-stall-others", test_stuck_folder_does_not_stall_others);
  ADD ("/wait/level-asked-while-taking-waits", test_level_asked_while_taking_waits);
  ADD ("/wait/cancel", test_cancel);
  ADD ("/wait/async", test_async);
  ADD ("/wait/async-cancelled-from-another-thread", test_async_cancelled_from_another_thread);
  ADD ("/wait/reentrant-levels", test_reentrant_levels);
  return g_test_run ();
}
