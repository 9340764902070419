/* test-security-queue.c: the waiting queue of a group pool: entries a
 * member plants, of other processes or users, and what each member sees of
 * it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

/* Queue entries a member plants (issue 38, defect 1) */

/* A process of the second member's that lives until its input is
 * closed: its pid in @pid. */
static Helper *
live_as_second (Fixture *f, GPid *pid)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *line = NULL;
  Helper *helper;

  test_argv_as_user (argv, f->gp->users->users[1], BOUND_S * 4);
  test_argv_end (argv, (const char *[]) { "sh", "-c", "echo $$; exec cat", NULL });
  helper = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  line = helper_read_line (helper, BOUND_S);
  g_assert_nonnull (line);
  *pid = (GPid) g_ascii_strtoll (line, NULL, 10);
  g_assert_cmpint (*pid, >, 1);
  return helper;
}

/* As the second member, r/queue/evil@1.json: a reserving entry asking
 * for @count, of the process @pid, at place @ticket. */
static void
plant_queue_entry (Fixture *f, const char *count, GPid pid, const char *ticket)
{
  g_autofree char *script =
    g_strdup_printf ("printf '{\"job_uri\": \"%%s/evil/job\", \"information\": {\"count\": %s}, "
                     "\"process\": {\"type\": \"local\", \"pid\": %d}, \"ticket\": %s, \"reserve\": true, "
                     "\"since\": 1}' \"$3\" > \"$1/r/queue/evil@1.json\"",
                     count, (int) pid, ticket);

  plant (f, script);
}

/* An entry asking for more than the resource has in all (100 of 8) can
 * never be served: it must not block the others (the first member takes
 * 1 at once), and status shows it as never served, reserving nothing. */
static void
test_queue_entry_asks_too_much (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) waiter = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *out = NULL;
  JsonObject *r, *w;
  GPid pid;

  init_group_pool (f);
  waiter = live_as_second (f, &pid);
  plant_queue_entry (f, "100", pid, "1");

  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "run", "--no-wait", "--need", "r=1", "--",
                               "true", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "--json", "r", NULL), ==, 0);
  g_assert_true (json_parser_load_from_data (parser, out, -1, NULL));
  r = test_status_first_resource (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "waiters")), ==, 1);
  w = json_array_get_object_element (json_object_get_array_member (r, "waiters"), 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "never-served");
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "never served"));
  helper_close_stdin (waiter);
  helper_wait (waiter);
}

/* An entry at the last place a ticket can say (2⁶³−1) gives no waiter
 * a place past it that overflows: the first member's waiter, past its
 * patience while the pool is full, enters the queue at a place above 0,
 * and is served once the pool is free. */
static void
test_queue_entry_last_ticket (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  g_autofree char *queue = g_build_filename (f->gp->pool, "r", "queue", NULL);
  g_autofree char *name = NULL;
  g_autofree char *entry = NULL;
  gint64 ticket;

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\npatience=0\n");
  plant_queue_entry (f, "1", 1, "9223372036854775807");
  holder = hold_as_first (f, "r=8");

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  test_argv_end (argv, (const char *[]) { "run", "--need", "r=1", "--", "true", NULL });
  waiter = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  /* Its entry, beside the planted one. */
  name = test_wait_entry (queue, NULL, ".json", (const char *[]) { "evil@1.json", NULL }, BOUND_S);
  entry = g_build_filename (queue, name, NULL);
  {
    g_autoptr(JsonParser) parser = json_parser_new ();

    /* Written atomically: whole once it is there. */
    g_assert_true (json_parser_load_from_file (parser, entry, NULL));
    ticket = json_object_get_int_member_with_default (json_node_get_object (json_parser_get_root (parser)),
                                                      "ticket", 0);
  }
  g_test_message ("the waiter's ticket: %" G_GINT64_FORMAT, ticket);
  g_assert_cmpint (ticket, >, 0);
  release_held (holder);
  g_assert_true (g_subprocess_wait (waiter, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (waiter), ==, 0);
}

/* The first member waits, as @need, past its patience (0): a helper
 * that says "got" once it runs its command. Returns once its entry is in
 * r/queue/ (its path in *@entry), not one of @others. */
static Helper *
wait_as_first (Fixture *f, const char *need, const char *const *others, char **entry)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *queue = g_build_filename (f->gp->pool, "r", "queue", NULL);
  Helper *waiter;

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  test_argv_end (argv, (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo got; exec cat", NULL });
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  *entry = test_wait_entry (queue, NULL, ".json", others, BOUND_S);
  return waiter;
}

/* Two waiters at one place: a planted entry at the last place (2⁵³) gives
 * every later waiter that place too. The one that came first is still
 * ahead: the first waiter (2 of 8), then, a second later, the second (1);
 * once 1 is free, the second must not take it past the first's
 * reservation; once all is free, both run. */
static void
test_queue_entries_same_place (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) most = NULL;
  g_autoptr(Helper) one = NULL;
  g_autoptr(Helper) first = NULL;
  g_autoptr(Helper) second = NULL;
  g_autofree char *first_entry = NULL;
  g_autofree char *second_entry = NULL;
  g_autofree char *line = NULL;
  gint64 first_second;

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\npatience=0\n");
  plant_queue_entry (f, "1", 1, "9007199254740992");
  most = hold_as_first (f, "r=7");
  one = hold_as_first (f, "r=1");
  first = wait_as_first (f, "r=2", (const char *[]) { "evil@1.json", NULL }, &first_entry);
  /* Its "since" is in seconds: the second waiter comes a second later. */
  first_second = g_get_real_time () / G_USEC_PER_SEC;
  while (g_get_real_time () / G_USEC_PER_SEC <= first_second + 1)
    g_usleep (50 * 1000);
  second = wait_as_first (f, "r=1", (const char *[]) { "evil@1.json", first_entry, NULL }, &second_entry);
  release_held (one);
  /* Nothing can show that it never runs: a few seconds in which it
   * would have (it wakes at the release within a second). */
  line = helper_read_line (second, 10);
  if (line != NULL)
    g_error ("the second waiter (1 of 8, at the first's place, a second later) ran past the first's reservation: "
             "“%s”", line);
  release_held (most);
  helper_expect_line (first, "got", BOUND_S);
  helper_expect_line (second, "got", BOUND_S);
  release_held (first);
  release_held (second);
}

/* An entry is its file owner's: one of the second member's that names a
 * process of another user (here init, root's) is no waiter of hers and
 * reserves nothing: the first member takes the pool. */
static void
test_queue_entry_of_another_process (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;

  init_group_pool (f);
  plant_queue_entry (f, "8", 1, "1");
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "run", "--no-wait", "--need", "r=1", "--",
                               "true", NULL), ==, 0);
}

/* A waiter of hers that is a set-user-ID root program (real uid hers,
 * effective uid root, not dumpable) has a /proc/PID that is root's: it is
 * still her process (its real uid, in /proc/PID/status, is hers), and her
 * entry naming it reserves what it asks (8 of 8): the first member cannot
 * take 1 at once. */
static void
queue_entry_of_uid_changer (Fixture *f, const char *how)
{
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *uid = NULL;
  g_autofree char *line = NULL;
  g_autofree char *out = NULL;
  g_autofree char *proc = NULL;
  g_autofree char *status = NULL;
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL);
  struct passwd *pw;
  struct stat st;
  GPid pid;

  if ((pw = getpwnam (f->gp->users->users[1])) == NULL)
    g_error ("no user %s", f->gp->users->users[1]);
  init_group_pool (f);
  uid = g_strdup_printf ("%u", (unsigned) pw->pw_uid);
  waiter = helper_spawn_argv (NULL, (const char * const []) { helper, "set-user-id", uid, how, NULL });
  line = helper_read_line (waiter, BOUND_S);
  g_assert_nonnull (line);
  pid = (GPid) g_ascii_strtoll (line, NULL, 10);
  g_assert_cmpint (pid, >, 1);
  /* What the test is about: its /proc/PID is not hers (set-user-ID), or
   * its real uid is not (acting: root's, the first of "Uid:"). */
  if (how == NULL)
    {
      proc = g_strdup_printf ("/proc/%d", (int) pid);
      g_assert_cmpint (stat (proc, &st), ==, 0);
      g_assert_cmpuint (st.st_uid, !=, pw->pw_uid);
    }
  else
    {
      g_autofree char *expected = g_strdup_printf ("\nUid:\t0\t%s\t0\t", uid);

      proc = g_strdup_printf ("/proc/%d/status", (int) pid);
      if (!g_file_get_contents (proc, &status, NULL, NULL))
        g_error ("cannot read %s", proc);
      g_assert_nonnull (strstr (status, expected));
    }

  plant_queue_entry (f, "8", pid, "1");
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "run", "--no-wait", "--need", "r=1", "--",
                               "true", NULL), ==, 75);
  helper_close_stdin (waiter);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

static void
test_queue_entry_of_set_user_id (Fixture *f, gconstpointer data)
{
  queue_entry_of_uid_changer (f, NULL);
}

/* A waiter of hers that is a root daemon acting for her (real uid root,
 * effective uid hers, as a file it writes is hers) may be hers too: a
 * process any of whose uids is hers is not known to be another user's,
 * and her entry naming it reserves what it asks. */
static void
test_queue_entry_of_acting_daemon (Fixture *f, gconstpointer data)
{
  queue_entry_of_uid_changer (f, "acting");
}

/* The queue view and the per-user OpenMetrics series across members
 * (issue 42, acceptance 1) */

/* `tessera run --need r=@count --name @name -- true` of @user (with its
 * state in @state) whose patience is @patience seconds, its error output
 * read as its output: returned once it said that it waits and its entry
 * (@name@…, ending in @suffix: ".waiting" within its patience, ".json"
 * past it) is in r's queue. */
static Helper *
wait_as (Fixture *f, const char *user, const char *state, const char *patience, const char *count, const char *name,
         const char *suffix)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *queue = g_build_filename (f->gp->pool, "r", "queue", NULL);
  g_autofree char *prefix = g_strconcat (name, "@", NULL);
  Helper *waiter;

  test_argv_append (argv, (const char *[]) { "sh", "-c", "exec \"$@\" 2>&1", "sh", NULL });
  test_argv_as_user (argv, user, BOUND_S * 4);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PATIENCE=%s", patience));
  test_argv_tessera (argv, state, f->gp->config);
  test_argv_append (argv, (const char *[]) { "run", "--need", NULL });
  g_ptr_array_add (argv, g_strdup_printf ("r=%s", count));
  test_argv_end (argv, (const char *[]) { "--name", name, "--", "true", NULL });
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (waiter, "tessera: waiting for r", BOUND_S);
  g_free (test_wait_entry (queue, prefix, suffix, NULL, BOUND_S));
  return waiter;
}

/* r's object in `tessera status --json` of @user (NULL: root), in
 * @parser. */
static JsonObject *
status_json_of_r (Fixture *f, const char *user, JsonParser *parser)
{
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  JsonArray *resources;

  g_assert_cmpint (tessera_by (f, user, &out, FALSE, "status", "--json", NULL), ==, 0);
  json_parser_load_from_data (parser, out, -1, &error);
  g_assert_no_error (error);
  resources = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "resources");
  for (guint i = 0; i < json_array_get_length (resources); i++)
    {
      JsonObject *r = json_array_get_object_element (resources, i);

      if (g_str_equal (json_object_get_string_member (r, "name"), "r"))
        return r;
    }
  g_error ("no resource r in status --json: %s", out);
}

/* The waiter of @r (status --json's object) whose job begins with
 * @name@; fails when it is not listed. */
static JsonObject *
waiter_named (JsonObject *r, const char *name)
{
  JsonArray *waiters = json_object_get_array_member (r, "waiters");
  g_autofree char *prefix = g_strconcat (name, "@", NULL);

  for (guint i = 0; waiters != NULL && i < json_array_get_length (waiters); i++)
    {
      JsonObject *w = json_array_get_object_element (waiters, i);

      if (g_str_has_prefix (json_object_get_string_member (w, "job"), prefix))
        return w;
    }
  g_error ("no waiter %s listed", prefix);
}

/* Asserts that waiter @w is @user's, asks for @count of r (its amount
 * and what it wants) and is in @state. */
static void
assert_waiter (JsonObject *w, const char *user, gint64 count, const char *state)
{
  g_assert_cmpstr (json_object_get_string_member (w, "user"), ==, user);
  g_assert_cmpint (json_object_get_int_member (w, "uid"), ==, test_uid_of (user));
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, count);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, count);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, state);
}

/* `tessera status --format=openmetrics` of @user (NULL: root), read by
 * Prometheus's own parser (python3-prometheus-client): each sample of r
 * as "NAME{LABEL=VALUE,…}" (labels sorted, "resource" left out) → its
 * value, printed as %g. */
static GHashTable *
openmetrics_of_r (Fixture *f, const char *user)
{
  GHashTable *samples = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree char *metrics = NULL;
  g_autofree char *parsed = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_cmpint (tessera_by (f, user, &metrics, FALSE, "status", "--format=openmetrics", NULL), ==, 0);
  g_assert_true (g_str_has_suffix (metrics, "# EOF\n"));
  parsed = test_parse_openmetrics (metrics);
  g_test_message ("parsed: %s", parsed);
  lines = g_strsplit (parsed, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      /* TYPE FAMILY NAME {LABELS} VALUE */
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", 5);
      g_autoptr(GPtrArray) kept = g_ptr_array_new ();
      g_auto(GStrv) labels = NULL;
      g_autofree char *inside = NULL;
      g_autofree char *joined = NULL;
      gboolean of_r = FALSE;

      if (lines[i][0] == '\0')
        continue;
      if (g_strv_length (fields) != 5 || !g_str_has_prefix (fields[3], "{") || !g_str_has_suffix (fields[3], "}"))
        g_error ("an OpenMetrics sample not as parsed: “%s”", lines[i]);
      inside = g_strndup (fields[3] + 1, strlen (fields[3]) - 2);
      labels = g_strsplit (inside, ",", -1);
      for (guint j = 0; labels[j] != NULL; j++)
        if (g_str_equal (labels[j], "resource=r"))
          of_r = TRUE;
        else if (!g_str_has_prefix (labels[j], "resource=") && labels[j][0] != '\0')
          g_ptr_array_add (kept, labels[j]);
      if (!of_r)
        continue;
      g_ptr_array_add (kept, NULL);
      joined = g_strjoinv (",", (char **) kept->pdata);
      g_assert_true (g_hash_table_insert (samples, g_strdup_printf ("%s{%s}", fields[2], joined),
                                          g_strdup (fields[4])));
    }
  return samples;
}

/* How many samples of @samples are of the metric @metric. */
static guint
count_samples (GHashTable *samples, const char *metric)
{
  g_autofree char *prefix = g_strconcat (metric, "{", NULL);
  GHashTableIter iter;
  gpointer key;
  guint n = 0;

  g_hash_table_iter_init (&iter, samples);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    n += g_str_has_prefix (key, prefix);
  return n;
}

/* Asserts that @samples has @metric{user=@user} of @value. */
static void
assert_user_sample (GHashTable *samples, const char *metric, const char *user, const char *value)
{
  g_autofree char *key = g_strdup_printf ("%s{user=%s}", metric, user);

  g_assert_cmpstr (g_hash_table_lookup (samples, key), ==, value);
}

/* A member holds the whole of r (8 of 8); another waits twice, 3 within
 * her patience (an hour) and 2 past hers (0.05 s): root, and the holding
 * member too, see in status --json each of her waiters with her name and
 * uid, what it asks for and whether it reserves, 5 units waiting; in the
 * OpenMetrics text (Prometheus's parser), 8 held by the first member
 * alone and 5 waited for by the second alone (issue 42, acceptance 1).
 * Once the holder lets go, both waiters are served. */
static void
test_queue_view_of_members (Fixture *f, gconstpointer data)
{
  const char *holding = f->gp->users->users[0];
  const char *waiting = f->gp->users->users[1];
  const char *viewers[] = { NULL, holding };
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) patient = NULL;
  g_autoptr(Helper) reserving = NULL;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  patient = wait_as (f, waiting, f->state[1], "3600", "3", "patient", ".waiting");
  reserving = wait_as (f, waiting, f->state[1], "0.05", "2", "reserving", ".json");

  for (guint i = 0; i < G_N_ELEMENTS (viewers); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GHashTable) samples = NULL;
      g_autofree char *text = NULL;
      JsonObject *r = status_json_of_r (f, viewers[i], parser);
      JsonObject *h;

      g_test_message ("as %s", viewers[i] != NULL ? viewers[i] : "root");
      g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
      g_assert_cmpint (json_object_get_int_member (r, "held"), ==, 8);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 1);
      h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
      g_assert_cmpstr (json_object_get_string_member (h, "user"), ==, holding);
      g_assert_cmpint (json_object_get_int_member (h, "amount"), ==, 8);
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "waiters")), ==, 2);
      assert_waiter (waiter_named (r, "patient"), waiting, 3, "waiting");
      assert_waiter (waiter_named (r, "reserving"), waiting, 2, "reserved");
      g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 5);

      g_assert_cmpint (tessera_by (f, viewers[i], &text, FALSE, "status", "r", NULL), ==, 0);
      g_assert_nonnull (strstr (text, "\n  waiting: patient@"));
      g_assert_nonnull (strstr (text, "\n  waiting: reserving@"));

      samples = openmetrics_of_r (f, viewers[i]);
      g_assert_cmpstr (g_hash_table_lookup (samples, "tessera_held{}"), ==, "8");
      g_assert_cmpstr (g_hash_table_lookup (samples, "tessera_waiting{}"), ==, "5");
      g_assert_cmpstr (g_hash_table_lookup (samples, "tessera_waiters{}"), ==, "2");
      assert_user_sample (samples, "tessera_user_held", holding, "8");
      g_assert_cmpuint (count_samples (samples, "tessera_user_held"), ==, 1);
      assert_user_sample (samples, "tessera_user_waiting", waiting, "5");
      g_assert_cmpuint (count_samples (samples, "tessera_user_waiting"), ==, 1);
    }

  release_held (holder);
  g_assert_cmpint (helper_wait (reserving), ==, 0);
  g_assert_cmpint (helper_wait (patient), ==, 0);
}

/* Entries the second member plants in r's queue naming the first
 * member's live process (her holder's command, holding 7 of 8), and
 * saying her uid, one within its patience (NAME.waiting) and one
 * reserving (NAME.json): the verdict takes an entry naming a process
 * here of another user than its owner for no waiter, so neither is
 * shown, as the first member's or as anyone's, nor counted as waiting,
 * and the reserving one keeps nothing from the first member (she takes
 * the 1 left at once). One naming the second member's own live process,
 * though it says the first member's uid, is shown as hers (its file's
 * owner), not the first member's; in OpenMetrics too. */
static void
test_queue_view_planted_for_another (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *second = f->gp->users->users[1];
  const char *viewers[] = { NULL, first };
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) own = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *script = NULL;
  GPid firsts, seconds;

  init_group_pool (f);
  holder = hold_as_first (f, "r=7");
  lock_file = only_lock_file (f);
  firsts = lock_file_pid (lock_file);
  own = live_as_second (f, &seconds);
  script = g_strdup_printf (
    "e=\"$3\"; entry () { printf '{\"job_uri\": \"%%s/%%s/job\", \"information\": {\"count\": %%s}, "
    "\"process\": {\"type\": \"local\", \"pid\": %%s, \"uid\": %u}, \"ticket\": 1, \"reserve\": %%s}' "
    "\"$e\" \"$1\" \"$2\" \"$3\" \"$4\"; }; "
    "entry firsts 3 %d false > \"$1/r/queue/firsts@1.waiting\"; "
    "entry reserves 1 %d true > \"$1/r/queue/reserves@1.json\"; "
    "entry hers 2 %d false > \"$1/r/queue/hers@1.waiting\"",
    test_uid_of (first), (int) firsts, (int) firsts, (int) seconds);
  plant (f, script);

  for (guint i = 0; i < G_N_ELEMENTS (viewers); i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GHashTable) samples = NULL;
      g_autofree char *text = NULL;
      g_autofree char *line = g_strdup_printf ("\n  waiting: hers@1  %s, since ", second);
      JsonObject *r = status_json_of_r (f, viewers[i], parser);

      g_test_message ("as %s", viewers[i] != NULL ? viewers[i] : "root");
      g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "waiters")), ==, 1);
      assert_waiter (waiter_named (r, "hers"), second, 2, "waiting");
      g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 2);

      g_assert_cmpint (tessera_by (f, viewers[i], &text, FALSE, "status", "r", NULL), ==, 0);
      g_assert_nonnull (strstr (text, line));
      g_assert_null (strstr (text, "firsts@1"));
      g_assert_null (strstr (text, "reserves@1"));

      samples = openmetrics_of_r (f, viewers[i]);
      g_assert_cmpstr (g_hash_table_lookup (samples, "tessera_waiting{}"), ==, "2");
      g_assert_cmpstr (g_hash_table_lookup (samples, "tessera_waiters{}"), ==, "1");
      assert_user_sample (samples, "tessera_user_held", first, "7");
      g_assert_cmpuint (count_samples (samples, "tessera_user_held"), ==, 1);
      assert_user_sample (samples, "tessera_user_waiting", second, "2");
      g_assert_cmpuint (count_samples (samples, "tessera_user_waiting"), ==, 1);
    }
  {
    g_autofree char *out = NULL;

    g_assert_cmpint (tessera_by (f, first, &out, FALSE, "run", "--no-wait", "--need", "r=1", "--", "true", NULL),
                     ==, 0);
  }
  release_held (holder);
  helper_close_stdin (own);
  g_assert_cmpint (helper_wait (own), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  security_test_add ("/security/queue/entry-asks-too-much", NULL, test_queue_entry_asks_too_much);
  security_test_add ("/security/queue/entry-last-ticket", NULL, test_queue_entry_last_ticket);
  security_test_add ("/security/queue/entries-same-place", NULL, test_queue_entries_same_place);
  security_test_add ("/security/queue/entry-of-another-process", NULL, test_queue_entry_of_another_process);
  security_test_add ("/security/queue/entry-of-set-user-id", NULL, test_queue_entry_of_set_user_id);
  security_test_add ("/security/queue/entry-of-acting-daemon", NULL, test_queue_entry_of_acting_daemon);
  security_test_add ("/security/queue/view-of-members", NULL, test_queue_view_of_members);
  security_test_add ("/security/queue/view-planted-for-another", NULL, test_queue_view_planted_for_another);
  return g_test_run ();
}
