/* test-etcd-members.c: three etcd members: the leader killed or stopped, a
 * member frozen or hung, with the client, the store and the command.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

/* Three members: the leader, which the watch and the calls go to, is
 * killed; calls and the watch go on through the other members after the
 * election. */
static void
test_leader_killed (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *leader = leader_of (f);
  g_autofree char *end = tessera_etcd_prefix_end ("/k/");
  gint64 revision = 0;
  gint64 start;

  prefer_member (f, leader);
  put (f, "/k/a", "1", 0);
  g_ptr_array_unref (range_prefix (f, "/k/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/k/", end, revision + 1, &error);
  g_assert_no_error (error);
  put (f, "/k/b", "2", 0);
  events = collect_events (watch, 1);
  g_clear_pointer (&events, g_ptr_array_unref);
  fixture_run (f, "kill", leader);

  start = g_get_monotonic_time ();
  put (f, "/k/c", "3", 0);
  g_test_message ("first write %.1f s after the leader (member %s) was killed",
                  (g_get_monotonic_time () - start) / 1e6, leader);
  events = collect_events (watch, 1);
  assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 0))->kv, "/k/c", "3");
  {
    g_autoptr(GPtrArray) kvs = range_prefix (f, "/k/", NULL);
    g_assert_cmpuint (kvs->len, ==, 3);
  }
}

/* Three members: the member the watch reads from is frozen (SIGSTOP): it
 * keeps the stream open and says nothing. The watch goes on through
 * another member once its member misses a request deadline (the stream
 * silent for one, its status is asked for). */
static void
test_frozen_member (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autofree char *end = tessera_etcd_prefix_end ("/z/");
  gint64 revision = 0;
  gint64 start;

  prefer_member (f, "1");
  put (f, "/z/a", "1", 0);
  g_ptr_array_unref (range_prefix (f, "/z/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/z/", end, revision + 1, &error);
  g_assert_no_error (error);
  put (f, "/z/b", "2", 0);
  events = collect_events (watch, 1);
  g_clear_pointer (&events, g_ptr_array_unref);

  fixture_run (f, "freeze", "1");
  start = g_get_monotonic_time ();
  put (f, "/z/c", "3", 0);
  events = collect_events (watch, 1);
  g_test_message ("the watch saw a change %.1f s after its member froze",
                  (g_get_monotonic_time () - start) / 1e6);
  assert_value (((TesseraEtcdEvent *) g_ptr_array_index (events, 0))->kv, "/z/c", "3");
  fixture_run (f, "thaw", "1");
}

/* Fencing tokens on etcd (issue 40, point 3): processes take tokens of
 * the pool in turn, two of them at times together, A on one simulated
 * host and B on another (test_argv_simulated_host()); each grant's token
 * is the creation revision of its holder key, so larger than every
 * earlier grant's, whichever host took it. */
static void
test_store_fencing_tokens (Fixture *f, gconstpointer data)
{
  gint64 last = 0;

  for (int round = 0; round < 3; round++)
    {
      g_autofree char *id_a = g_strdup_printf ("A%d", round);
      g_autofree char *id_b = g_strdup_printf ("B%d", round);
      g_autoptr(Helper) a = store_spawn_on (f, "host-A", "store", NULL, id_a, "1", NULL);
      g_autoptr(Helper) b = NULL;
      g_autoptr(GPtrArray) jobs = NULL;
      g_autofree char *line_a = helper_read_line (a, 60);
      g_autofree char *line_b = NULL;
      gint64 token_a, token_b;

      g_assert_nonnull (line_a);
      b = store_spawn_on (f, "host-B", "store", NULL, id_b, "1", NULL);
      line_b = helper_read_line (b, 60);
      g_assert_nonnull (line_b);
      g_test_message ("%s: %s; %s: %s", id_a, line_a, id_b, line_b);
      g_assert_nonnull (strstr (line_a, " token="));
      g_assert_nonnull (strstr (line_b, " token="));
      token_a = g_ascii_strtoll (strstr (line_a, " token=") + strlen (" token="), NULL, 10);
      token_b = g_ascii_strtoll (strstr (line_b, " token=") + strlen (" token="), NULL, 10);
      g_assert_cmpint (token_a, >, last);
      g_assert_cmpint (token_b, >, token_a);
      last = token_b;

      /* Each is its holder key's creation revision. */
      jobs = pool_keys (f, "jobs/");
      g_assert_cmpuint (jobs->len, ==, 2);
      for (guint i = 0; i < jobs->len; i++)
        {
          TesseraEtcdKv *kv = g_ptr_array_index (jobs, i);

          g_assert_cmpint (kv->create_revision, ==, g_str_has_suffix (kv->key, id_a) ? token_a : token_b);
        }
      release_store_child (a);
      release_store_child (b);
    }
}

/* Three members, the leader SIGKILLed while five processes take and give
 * back tokens: they go on after the election, and nothing is ever
 * over-allocated. */
static void
test_store_leader_killed (Fixture *f, gconstpointer data)
{
  contend_and_audit (f, 5, 6, TRUE);
}

/* The mutex's intent keys under /store/lock/intents/ now, each checked
 * to be on a lease. */
static guint
count_intents (Fixture *f)
{
  g_autoptr(GPtrArray) intents = range_prefix (f, "/store/lock/intents/", NULL);

  for (guint i = 0; i < intents->len; i++)
    g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (intents, i))->lease, !=, 0);
  return intents->len;
}

/* The machine id the process of the pool's only intent says it ran on. */
static char *
intent_machine_id (Fixture *f)
{
  g_autoptr(GPtrArray) intents = range_prefix (f, "/store/lock/intents/", NULL);
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;
  const char *data;
  JsonObject *process;

  g_assert_cmpuint (intents->len, ==, 1);
  data = g_bytes_get_data (((TesseraEtcdKv *) g_ptr_array_index (intents, 0))->value, &length);
  text = g_strndup (data, length);
  root = json_from_string (text, NULL);
  g_assert_nonnull (root);
  process = json_object_get_object_member (json_node_get_object (root), "process");
  g_assert_nonnull (process);
  return g_strdup (json_object_get_string_member_with_default (process, "machine_id", ""));
}

/* The mutex's writer preference across hosts on etcd (issue 40, point
 * 4): three processes, each on a simulated host of its own (its own
 * namespaces, machine id, boot id and /var/tmp, as test-hosts.c makes
 * them) with its own local folder as `path`: no file system in common
 * but the job folders. A holds the mutex shared; B asks for it
 * exclusive and waits, its intent a key of the pool on its lease; C's
 * shared request, which A's share alone would let in, waits for B. A
 * releases: B gets it (C, had it been let in, would hold it shared and B
 * would wait for ever); B releases: C gets it. No intent is left. */
static void
test_store_mutex_intents (Fixture *f, gconstpointer data)
{
  g_autofree char *path_a = g_strdup_printf ("path=%s/host-A/pool", f->dir);
  g_autofree char *path_b = g_strdup_printf ("path=%s/host-B/pool", f->dir);
  g_autofree char *path_c = g_strdup_printf ("path=%s/host-C/pool", f->dir);
  const char *settings_a[] = { path_a, NULL };
  const char *settings_b[] = { path_b, NULL };
  const char *settings_c[] = { path_c, NULL };
  g_autoptr(Helper) a = store_spawn_on (f, "host-A", "store-mutex", NULL, "A", "shared", settings_a);
  g_autoptr(Helper) b = NULL;
  g_autoptr(Helper) c = NULL;
  g_autoptr(GPtrArray) jobs = NULL;
  g_autofree char *line = NULL;
  g_autofree char *machine_b = NULL;
  g_autofree char *intent_host = NULL;

  expect_acquired (a, 60);
  b = store_spawn_on (f, "host-B", "store-mutex", no_polling_env, "B", "exclusive", settings_b);
  helper_expect_line (b, "WAITING", 60);
  c = store_spawn_on (f, "host-C", "store-mutex", no_polling_env, "C", "shared", settings_c);
  line = helper_read_line (c, 60);
  g_assert_cmpstr (line, ==, "WAITING");
  g_assert_cmpuint (count_intents (f), ==, 1);
  /* Written on host B, whose machine id is its own. */
  machine_b = g_compute_checksum_for_string (G_CHECKSUM_MD5, "host-B", -1);
  intent_host = intent_machine_id (f);
  g_assert_cmpstr (intent_host, ==, machine_b);

  release_store_child (a);
  expect_acquired (b, 120);
  jobs = range_prefix (f, "/store/lock/jobs/", NULL);
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/lock/jobs/task@B");
  g_assert_cmpuint (count_intents (f), ==, 0);

  release_store_child (b);
  expect_acquired (c, 120);
  release_store_child (c);
  g_assert_cmpuint (count_intents (f), ==, 0);
}

/* Three members, the one first in `endpoints` a follower frozen
 * (SIGSTOP) for up to 30 s: `tessera run` after `tessera run` starts its
 * command and gives its token back while it is still frozen (each
 * request waits on it a short deadline, then it is skipped), and
 * `tessera status` then shows the pool free. */
static void
test_hung_first_member (Fixture *f, gconstpointer data)
{
  g_autofree char *leader = leader_of (f);
  g_autofree char *follower = g_strdup (g_str_equal (leader, "1") ? "2" : "1");
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GString) ordered = g_string_new (list[atoi (follower) - 1]);
  g_autofree char *config = g_build_filename (f->dir, "hung.conf", NULL);
  g_autofree char *text = NULL;
  const char *run[] = { "run", "--need", "tokens=1", "--", "true", NULL };
  gint64 frozen;
  gint64 free_units;
  guint holders, runs = 0;
  double took;

  for (guint i = 0; list[i] != NULL; i++)
    if (i != (guint) atoi (follower) - 1)
      g_string_append_printf (ordered, ",%s", list[i]);
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nlease=%d\ntotal=2\n", ordered->str, TOOL_LEASE);
  test_write_file (config, text);
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */

  fixture_run (f, "freeze", follower);
  frozen = g_get_monotonic_time ();
  while (runs < 3 && g_get_monotonic_time () - frozen < 25 * G_USEC_PER_SEC)
    {
      g_assert_cmpint (tool_run (f, config, run), ==, 0);
      runs++;
    }
  tool_status (f, config, &free_units, &holders);
  took = (g_get_monotonic_time () - frozen) / 1e6;
  g_test_message ("member %s (first in endpoints, the leader being %s) frozen: %u runs and a status in %.2f s",
                  follower, leader, runs, took);
  g_assert_cmpuint (runs, ==, 3);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
  g_assert_cmpfloat (took, <, 30);
  fixture_run (f, "thaw", follower);
}

/* Until when (real time, µs) the host's memory of members that missed a
 * deadline, RUNTIME/tessera/etcd-members (lines "UNTIL_US ENDPOINT"),
 * has @endpoint tried last; 0 when it does not name it. */
static gint64
remembered_until (const char *runtime, const char *endpoint)
{
  g_autofree char *path = g_build_filename (runtime, "tessera", "etcd-members", NULL);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gint64 until = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *end = NULL;
      gint64 value = g_ascii_strtoll (lines[i], &end, 10);

      if (end != NULL && *end == ' ' && g_str_equal (end + 1, endpoint))
        until = MAX (until, value);
    }
  return until;
}

/* One `tessera run` of @config with debug messages on; whether any of
 * them says that it sent a request to @endpoint. */
static gboolean
run_asked (Fixture *f, const char *config, const char *runtime, const char *endpoint)
{
  const char *run[] = { "run", "--need", "tokens=1", "--", "true", NULL };
  g_autofree char *runtime_env = g_strconcat ("XDG_RUNTIME_DIR=", runtime, NULL);
  const char *env[] = { runtime_env, "G_MESSAGES_DEBUG=Tessera-etcd", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, env, run);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *said = NULL;
  g_autofree char *sent = g_strdup_printf (" to %s\n", endpoint);
  g_autofree char *any = g_strdup (" to http");

  g_assert_cmpint (test_run_capture (argv, &out, &err), ==, 0);
  said = g_strdup_printf ("%.*s%.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL),
                          (int) g_bytes_get_size (err), (const char *) g_bytes_get_data (err, NULL));
  /* The log says every request (else the check below proves nothing). */
  g_assert_nonnull (strstr (said, any));
  return strstr (said, sent) != NULL;
}

/* Three members, the one first in `endpoints` a follower frozen
 * (SIGSTOP): once one `tessera run` has waited a deadline on it, the
 * host remembers it (RUNTIME/tessera/etcd-members), and a fresh `tessera
 * run` started while that memory lasts sends it no request at all,
 * neither from its store nor from its lease's keeper: each request's
 * member is in the debug log, which never names the frozen one. A run
 * started when little of the memory is left may ask it again (and
 * renews the memory when it misses its deadline): it is not checked. */
static void
test_hung_member_remembered (Fixture *f, gconstpointer data)
{
  g_autofree char *leader = leader_of (f);
  g_autofree char *follower = g_strdup (g_str_equal (leader, "1") ? "2" : "1");
  g_auto(GStrv) list = endpoints (f);
  const char *frozen = list[atoi (follower) - 1];
  g_autoptr(GString) ordered = g_string_new (frozen);
  g_autofree char *config = g_build_filename (f->dir, "remembered.conf", NULL);
  g_autofree char *runtime = g_build_filename (f->dir, "runtime", NULL);
  g_autofree char *text = NULL;
  gint64 free_units;
  guint holders, runs = 0, checked = 0;

  for (guint i = 0; list[i] != NULL; i++)
    if (i != (guint) atoi (follower) - 1)
      g_string_append_printf (ordered, ",%s", list[i]);
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nrequest-timeout=1\ntotal=2\n", ordered->str);
  test_write_file (config, text);
  g_assert_cmpint (g_mkdir_with_parents (runtime, 0700), ==, 0);
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */

  fixture_run (f, "freeze", follower);
  while (checked < 4 && runs < 40)
    {
      /* Seconds of the memory left as this run starts. */
      double left = (remembered_until (runtime, frozen) - g_get_real_time ()) / 1e6;
      gboolean asked = run_asked (f, config, runtime, frozen);

      runs++;
      g_test_message ("run %u: %.1f s of the memory left, %s %s", runs, left,
                      asked ? "asked" : "did not ask", frozen);
      if (left < 6)
        continue;
      g_assert_false (asked);
      checked++;
    }
  fixture_run (f, "thaw", follower);
  g_assert_cmpuint (checked, ==, 4);
}

/* The watches each member serves now, in @counts (3 members); their sum. */
static gint64
watchers (Fixture *f, gint64 counts[3])
{
  gint64 sum = 0;

  for (guint k = 0; k < 3; k++)
    sum += counts[k] = member_metric (f, k, "etcd_debugging_mvcc_watcher_total");
  return sum;
}

typedef struct
{
  Fixture *f;
  gint64 sum;
  gint64 *counts;
} Watchers;

static gboolean
serve_watchers (gpointer data)
{
  const Watchers *w = data;

  return watchers (w->f, w->counts) == w->sum;
}

/* Waits until the members serve @sum watches in all (bounded). */
static void
expect_watchers (Fixture *f, gint64 sum, gint64 counts[3])
{
  test_wait_until (serve_watchers, &(Watchers) { f, sum, counts }, 60,
                   "etcd's members do not serve %" G_GINT64_FORMAT " watches in all", sum);
}

/* Three members; a waiter whose watch reads from the leader waits for
 * the pool a process on a follower holds; the leader stops answering
 * (SIGSTOP: to the others, a leader whose host died without closing its
 * connections) and the other two elect another. The holder lets go
 * through its member, and the waiter, whose request deadline is 1 s
 * (request-timeout=1), is served within a few of them after the
 * election: its watch, silent on the stopped member, is opened again on
 * another once that member misses a deadline, not after the 20 s that a
 * silent stream was given (issue 40, point 5: after a leader change two
 * waiters waited 7.5 s). The waiter kept is one whose watch went to the
 * leader (each process starts with a member chosen at random): etcd's
 * metrics say which member serves each watch. */
static void
test_store_waiter_leader_stopped (Fixture *f, gconstpointer data)
{
  const double bound = 12;   /* s: the election and a few deadlines of 1 s, loaded */
  g_autofree char *leader = leader_of (f);
  guint l = (guint) atoi (leader) - 1;
  g_autofree char *follower = g_strdup_printf ("%u", (l + 1) % 3 + 1);
  g_auto(GStrv) list = endpoints (f);
  g_autofree char *only_follower = g_strdup_printf ("endpoints=%s", list[atoi (follower) - 1]);
  const char *holder_settings[] = { only_follower, NULL };
  const char *waiter_settings[] = { "request-timeout=1", NULL };
  g_autoptr(Helper) holder = store_spawn (f, no_polling_env, "A", "2", holder_settings);
  g_autoptr(Helper) waiter = NULL;
  gint64 counts[3];
  gint64 base;
  gint64 stopped;
  double waited;

  expect_acquired (holder, 60);
  base = watchers (f, counts);
  for (guint attempt = 0; waiter == NULL; attempt++)
    {
      g_autofree char *id = g_strdup_printf ("W%u", attempt);
      gint64 on_leader = counts[l];
      Helper *candidate;

      g_assert_cmpuint (attempt, <, 40);   /* (2/3)^40: never */
      candidate = store_spawn (f, no_polling_env, id, "1", waiter_settings);
      helper_expect_line (candidate, "WAITING", 60);
      expect_watchers (f, base + 1, counts);
      if (counts[l] == on_leader + 1)
        {
          waiter = candidate;
          break;
        }
      helper_kill (candidate, SIGKILL);
      helper_wait (candidate);
      helper_free (candidate);
      expect_watchers (f, base, counts);
    }

  fixture_run (f, "freeze", leader);
  stopped = g_get_monotonic_time ();
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  expect_acquired (waiter, 120);
  waited = (g_get_monotonic_time () - stopped) / 1e6;
  g_test_message ("the waiter whose watch read from the leader (member %s) got its token %.2f s after "
                  "the leader stopped", leader, waited);
  g_assert_cmpfloat (waited, <, bound);
  fixture_run (f, "thaw", leader);
  release_store_child (waiter);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

int
main (int argc, char **argv)
{
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/cluster/leader-killed", "3", test_leader_killed);
  etcd_test_add ("/etcd/cluster/store-acquire-release", "3", test_store_acquire_release);
  etcd_test_add ("/etcd/cluster/store-leader-killed", "3", test_store_leader_killed);
  etcd_test_add ("/etcd/cluster/waiter-leader-stopped", "3", test_store_waiter_leader_stopped);
  etcd_test_add ("/etcd/cluster/fencing-tokens", "3", test_store_fencing_tokens);
  etcd_test_add ("/etcd/cluster/mutex-intents", "3", test_store_mutex_intents);
  etcd_test_add ("/etcd/cluster/frozen-member", "3", test_frozen_member);
  etcd_test_add ("/etcd/cluster/hung-first-member", "3", test_hung_first_member);
  etcd_test_add ("/etcd/cluster/hung-member-remembered", "3", test_hung_member_remembered);
  return etcd_test_run ();
}
