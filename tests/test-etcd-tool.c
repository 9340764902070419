/* test-etcd-tool.c: the `tessera` command on an etcd pool: run, status,
 * watch, set, clean and init, a frozen or hostile holder, administrators.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

/* The command on an etcd pool, from real processes: `tessera run --need`
 * holds both tokens while its command runs, `tessera status` shows it, a
 * second `tessera run` waits (woken by the watch: polling is off) and
 * runs its command once the first ends, and the pool is free after. */
static void
test_store_tool (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  gint64 free_units;
  guint holders;

  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
  tool_hand_over (f, config);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
}

/* The command of a `tessera run` on an etcd pool reads its locks as a
 * job's process does (TESSERA_LOCKS): they name no local lock file (the
 * holder is a key, kept on the run's lease), so entering them does not
 * look for one in a folder that holds nothing of the pool. */
static void
test_store_job_side_locks (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL);
  const char *run_args[] = { "run", "--need", "tokens=1", "--", helper, "job-locks", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, run_args);
  g_autoptr(Helper) run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  g_autofree char *line = helper_read_line (run, 60);

  g_test_message ("the command said: %s", line ? line : "(nothing)");
  g_assert_cmpstr (line, ==, "JOB-LOCKS 1");
  g_assert_cmpint (helper_wait (run), ==, 0);
}

/* `tessera status` on an etcd pool: the pool's key as its "path" (the
 * local folder holds nothing of it) and "store": "etcd"; each holder
 * named as its key names it (what `tessera clean` takes), with the
 * seconds its lease has left ("lease_ttl"), which the text output says
 * too. */
static void
test_store_status (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  const char *json_args[] = { "status", "--json", NULL };
  const char *text_args[] = { "status", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GPtrArray) text_argv = tool_argv (f, config, NULL, text_args);
  g_autoptr(GPtrArray) keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) text = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *shown = NULL;
  g_autofree char *expected = NULL;
  const char *key;
  JsonObject *resource, *h;
  double ttl;

  g_assert_cmpuint (keys->len, ==, 1);
  key = ((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key;
  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = test_status_first_resource (root);
  g_assert_cmpstr (json_object_get_string_member (resource, "path"), ==, "/tool/tokens/");
  g_assert_cmpstr (json_object_get_string_member_with_default (resource, "store", NULL), ==, "etcd");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (resource, "holders")), ==, 1);
  h = json_array_get_object_element (json_object_get_array_member (resource, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "job"), ==, key + strlen ("/tool/tokens/jobs/"));
  g_assert_true (json_object_has_member (h, "lease_ttl"));
  ttl = json_object_get_double_member (h, "lease_ttl");
  g_test_message ("holder %s: lease %.1f s left of %d s", key, ttl, TOOL_LEASE);
  g_assert_cmpfloat (ttl, >, 0);
  g_assert_cmpfloat (ttl, <=, TOOL_LEASE);

  g_assert_cmpint (test_run_capture (text_argv, &text, NULL), ==, 0);
  shown = g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
  g_test_message ("%s", shown);
  expected = g_strdup_printf ("  %s  ", key + strlen ("/tool/tokens/jobs/"));
  g_assert_nonnull (strstr (shown, expected));
  g_assert_nonnull (strstr (shown, "    lease: "));
  g_assert_nonnull (strstr (shown, " s left\n"));

  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A waiter within its patience on an etcd pool is shown (issue 42, point
 * 4), as on a folder: `tessera status --json` lists it, "waiting", with
 * what it asks for, from a side entry on its lease (`waiting/NAME`);
 * once served, its entry is gone. */
static void
test_store_waiting (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  const char *json_args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) left = NULL;
  JsonObject *resource, *w;
  JsonArray *waiters;

  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  g_test_message ("%.*s", (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = test_status_first_resource (root);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (resource, "waiting"), ==, 1);
  g_assert_false (json_object_get_null_member (w, "since"));

  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (waiter, "SECOND", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  left = range_prefix (f, "/tool/tokens/waiting/", NULL);
  g_assert_cmpuint (left->len, ==, 0);
}

/* A `tessera run` frozen with SIGSTOP past its lease: etcd deletes its
 * holder key, a waiting run gets the tokens, and once resumed the frozen
 * run ends its command at once (fencing, exit 76). The overlap (both
 * commands running) lasts from the hand-over to that end: printed; every
 * lease has it, as long as the freeze. */
static void
test_store_frozen_holder (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  gint64 frozen, handed, resumed;

  frozen = g_get_monotonic_time ();
  g_assert_cmpint (kill (helper_get_pid (holder), SIGSTOP), ==, 0);
  helper_expect_line (waiter, "SECOND", TOOL_LEASE + 60);
  handed = g_get_monotonic_time ();
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  resumed = g_get_monotonic_time ();
  g_assert_cmpint (kill (helper_get_pid (holder), SIGCONT), ==, 0);
  g_assert_cmpint (helper_wait (holder), ==, 76);
  g_test_message ("frozen holder: tokens handed over %.2f s after SIGSTOP (lease %d s); "
                  "its command ended %.2f s after SIGCONT; overlap %.2f s",
                  (handed - frozen) / 1e6, TOOL_LEASE, (g_get_monotonic_time () - resumed) / 1e6,
                  (g_get_monotonic_time () - handed) / 1e6);
  g_assert_cmpfloat ((handed - frozen) / 1e6, >=, TOOL_LEASE * 2.0 / 3 - 0.5);
  g_assert_cmpfloat ((g_get_monotonic_time () - resumed) / 1e6, <, 30);
}

#define SHORT_LEASE 3

/* A `tessera run` on a 3 s lease keeps its tokens while it runs: its
 * lease is renewed often enough (at least every half second, its
 * renewals counted by etcd) that the fence, which ends the command once
 * the lease has gone unrenewed for 1.5 s, keeps a second for a slow
 * renewal; over three leases a waiter gets nothing, and the command
 * ends by itself (not fenced, exit 76). */
static void
test_store_short_lease (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config_lease (f, SHORT_LEASE);
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(Helper) waiter = tool_waiter (f, config);
  g_autofree char *quiet = NULL;
  gint64 before, after;

  before = metric (f, "etcd_debugging_lease_renewed_total");
  quiet = helper_read_line (waiter, 3 * SHORT_LEASE);
  after = metric (f, "etcd_debugging_lease_renewed_total");
  g_test_message ("a %d s lease renewed %" G_GINT64_FORMAT " times in %d s", SHORT_LEASE, after - before,
                  3 * SHORT_LEASE);
  g_assert_null (quiet);
  g_assert_cmpint (after - before, >=, 2 * 3 * SHORT_LEASE);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  helper_expect_line (waiter, "SECOND", 60);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* Values a hostile co-user wrote under an etcd pool's jobs (not JSON,
 * too deep, large garbage) hold everything, as on a folder, and
 * `tessera clean --force` removes them; `tessera set` changes the
 * capacity every user sees. */
static void
test_store_hostile (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autofree char *garbage = g_strnfill (1300 * 1024, '{');
  const char *clean[] = { "clean", "--force", "tokens", "a@1", "b@1", "c@1", NULL };
  const char *set[] = { "set", "tokens", "total=3", NULL };
  g_autoptr(GPtrArray) informations = NULL;
  gint64 capacity, free_units;
  guint holders;

  for (int i = 0; i < 10000; i++)
    g_string_append_c (deep, '[');
  tool_status (f, config, &free_units, &holders);   /* sets the pool up */
  put (f, "/tool/tokens/jobs/a@1", "not json", 0);
  put (f, "/tool/tokens/jobs/b@1", deep->str, 0);
  put (f, "/tool/tokens/jobs/c@1", garbage, 0);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 0);

  g_assert_cmpint (tool_run (f, config, clean), ==, 0);
  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);

  g_assert_cmpint (tool_run (f, config, set), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 3);
  g_assert_cmpint (free_units, ==, 3);
  informations = range_prefix (f, "/tool/tokens/informations", NULL);
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/tool/tokens/informations", "{\"total\":3}");
}

/* Reads @helper's lines until one contains @text (bounded). */
static void
expect_line_containing (Helper *helper, const char *text, double timeout)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (TRUE)
    {
      double left = (double) (deadline - g_get_monotonic_time ()) / G_USEC_PER_SEC;
      g_autofree char *line = left > 0 ? helper_read_line (helper, left) : NULL;

      if (line == NULL)
        g_error ("expected a line with “%s”, got nothing more", text);
      if (strstr (line, text) != NULL)
        return;
    }
}

/* `tessera watch` on an etcd pool, a real process: it shows the pool,
 * again when a `tessera run` takes both tokens, and again when it gives
 * them back. */
static void
test_store_watch (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  const char *watch_args[] = { "watch", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, watch_args);
  g_autoptr(Helper) watch = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  g_autoptr(Helper) holder = NULL;

  expect_line_containing (watch, "tokens (countertoken): 2 of 2 free", 60);
  holder = tool_holder (f, config);
  expect_line_containing (watch, "tokens (countertoken): 0 of 2 free", 60);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  expect_line_containing (watch, "tokens (countertoken): 2 of 2 free", 60);
  helper_kill (watch, SIGTERM);
  helper_wait (watch);
}

/* `tessera set` and `tessera clean` on an etcd pool while a `tessera run`
 * holds a token: set changes the capacity every process sees (the
 * holder keeps its token), clean without --force removes nothing from a
 * holder whose lease lives, and with --force removes it by name. */
static void
test_store_set_clean (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  const char *one_args[] = { "run", "--need", "tokens=1", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) one_argv = tool_argv (f, config, NULL, one_args);
  g_autoptr(Helper) holder = helper_spawn_argv (NULL, (const char * const *) one_argv->pdata);
  const char *set[] = { "set", "tokens", "total=5", NULL };
  const char *clean[] = { "clean", NULL };
  g_autoptr(GPtrArray) keys = NULL;
  g_autofree char *job = NULL;
  gint64 capacity, free_units;
  guint holders;

  helper_expect_line (holder, "RUNNING", 60);
  g_assert_cmpint (tool_run (f, config, set), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 5);
  g_assert_cmpint (free_units, ==, 4);
  g_assert_cmpuint (holders, ==, 1);

  g_assert_cmpint (tool_run (f, config, clean), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpuint (holders, ==, 1);

  keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_assert_cmpuint (keys->len, ==, 1);
  job = g_strdup (((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key + strlen ("/tool/tokens/jobs/"));
  {
    const char *force[] = { "clean", "--force", "tokens", job, NULL };

    g_assert_cmpint (tool_run (f, config, force), ==, 0);
  }
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 5);
  g_assert_cmpuint (holders, ==, 0);
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* `tessera @args` as @user with @config, its state in a folder of hers
 * under @parent: its exit status. */
static int
tool_run_as (const char *parent, const char *user, const char *config, const char * const *args)
{
  g_autofree char *state = test_user_folder (parent, user);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  int status;

  test_argv_tessera_as (argv, user, state, config, 120);
  /* Her runtime folder, not this test's (root's): GIO's settings and the
   * etcd members' memory go there. */
  for (guint i = 0; i < argv->len; i++)
    if (g_str_equal (g_ptr_array_index (argv, i), "env"))
      {
        g_ptr_array_insert (argv, (gint) i + 1, g_strdup_printf ("XDG_RUNTIME_DIR=%s", state));
        break;
      }
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, &err);
  g_test_message ("%s's tessera %s: %d, %.*s%.*s", user, args[0], status, (int) g_bytes_get_size (err),
                  (const char *) g_bytes_get_data (err, NULL), (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  return status;
}

/* Administering an etcd pool (issue 42, point 1): a pool elsewhere has no
 * folder whose owner decides, so its configuration's owner does. With a
 * site's configuration (root's), a user's `set`, `clean --force` of
 * root's holder and `clean --host --yes` are refused with 77 and change
 * nothing; with a configuration of her own, her `set` works. Fails
 * before: every user who could reach the cluster administered it (a
 * user in no group set the capacity, forced another's holder out). */
static void
test_store_administrators (Fixture *f, gconstpointer data)
{
  g_autoptr(TestUsers) users = test_users_new ("etad");
  g_autofree char *site_config = tool_config (f);
  g_autofree char *shared = g_build_filename (f->dir, "shared", NULL);
  g_autofree char *config = g_build_filename (shared, "site.conf", NULL);
  g_autofree char *own_config = NULL;
  g_autofree char *text = NULL;
  const char *one_args[] = { "run", "--need", "tokens=1", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) one_argv = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GPtrArray) keys = NULL;
  g_autofree char *job = NULL;
  struct passwd *pw;
  uid_t uid;
  gid_t gid;
  gint64 capacity, free_units;
  guint holders;

  if ((pw = getpwnam (users->users[0])) == NULL)
    g_error ("no user %s", users->users[0]);
  uid = pw->pw_uid;   /* getpwnam()'s record is overwritten by the next */
  gid = pw->pw_gid;
  /* The site's configuration, root's, readable by all; f->dir too. */
  g_assert_cmpint (chmod (f->dir, 0755), ==, 0);
  g_assert_cmpint (mkdir (shared, 0755), ==, 0);
  g_assert_true (g_file_get_contents (site_config, &text, NULL, NULL));
  test_write_file (config, text);
  g_assert_cmpint (chmod (config, 0644), ==, 0);
  one_argv = tool_argv (f, config, NULL, one_args);
  holder = helper_spawn_argv (NULL, (const char * const *) one_argv->pdata);
  helper_expect_line (holder, "RUNNING", 60);
  keys = range_prefix (f, "/tool/tokens/jobs/", NULL);
  g_assert_cmpuint (keys->len, ==, 1);
  job = g_strdup (((TesseraEtcdKv *) g_ptr_array_index (keys, 0))->key + strlen ("/tool/tokens/jobs/"));

  g_assert_cmpint (tool_run_as (shared, users->users[0], config, (const char *[]) { "set", "tokens", "total=1", NULL }),
                   ==, 77);
  g_assert_cmpint (tool_run_as (shared, users->users[1], config,
                                (const char *[]) { "clean", "--force", "tokens", job, NULL }), ==, 77);
  g_assert_cmpint (tool_run_as (shared, users->users[1], config,
                                (const char *[]) { "clean", "--host", "node9", "--yes", NULL }), ==, 77);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 2);
  g_assert_cmpuint (holders, ==, 1);

  /* Her own configuration of the same pool: hers to administer (the
   * cluster's credentials are what binds her). */
  own_config = g_build_filename (shared, "own.conf", NULL);
  test_write_file (own_config, text);
  g_assert_cmpint (chown (own_config, uid, gid), ==, 0);
  g_assert_cmpint (tool_run_as (shared, users->users[0], own_config,
                                (const char *[]) { "set", "tokens", "total=3", NULL }), ==, 0);
  tool_status_full (f, config, &capacity, &free_units, &holders);
  g_assert_cmpint (capacity, ==, 3);
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* `tessera init PATH` with an etcd pool whose path lies in PATH: it sets
 * the pool up in etcd (its informations), says where (the pool's key,
 * not a folder) and makes no folder for it. */
static void
test_store_init (Fixture *f, gconstpointer data)
{
  g_autofree char *endpoints_path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *pool = g_build_filename (f->dir, "pool", NULL);
  g_autofree char *folder = g_build_filename (pool, "tokens", NULL);
  g_autofree char *config = g_build_filename (f->dir, "init.conf", NULL);
  g_autofree char *list = NULL;
  g_autofree char *text = NULL;
  g_autofree char *said = NULL;
  const char *args[] = { "init", pool, NULL };
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GPtrArray) informations = NULL;

  g_assert_true (g_file_get_contents (endpoints_path, &list, NULL, NULL));
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\npath=%s\ntotal=4\n", g_strstrip (list), folder);
  test_write_file (config, text);
  argv = tool_argv (f, config, NULL, args);
  g_assert_cmpint (test_run_capture (argv, &out, NULL), ==, 0);
  said = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  g_test_message ("%s", said);
  g_assert_nonnull (strstr (said, "/tool/tokens/"));
  g_assert_null (strstr (said, folder));
  informations = range_prefix (f, "/tool/tokens/informations", NULL);
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/tool/tokens/informations", "{\"total\":4}");
  g_assert_false (g_file_test (folder, G_FILE_TEST_EXISTS));
}

/* `tessera status` on an etcd pool says since when a holder holds (the
 * time its key was written), not the epoch. */
static void
test_store_since (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autoptr(GDateTime) before = g_date_time_new_now_utc ();
  g_autoptr(Helper) holder = tool_holder (f, config);
  g_autoptr(GDateTime) after = g_date_time_new_now_utc ();
  const char *json_args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) json_argv = tool_argv (f, config, NULL, json_args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDateTime) since = NULL;
  JsonObject *resource, *h;

  g_assert_cmpint (test_run_capture (json_argv, &out, NULL), ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = test_status_first_resource (root);
  h = json_array_get_object_element (json_object_get_array_member (resource, "holders"), 0);
  g_test_message ("holder since %s", json_object_get_string_member (h, "since"));
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (h, "since"), NULL);
  g_assert_nonnull (since);
  /* Whole seconds: the same second as the run's start, or after. */
  g_assert_cmpint (g_date_time_to_unix (since), >=, g_date_time_to_unix (before));
  g_assert_cmpint (g_date_time_to_unix (since), <=, g_date_time_to_unix (after));
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A pool set up by someone else is joined by a configuration without
 * its total, as on a folder (/tool/config/missing-total-for-a-new-pool):
 * the pool's informations are the store's (its informations key), never
 * a local informations.json that the etcd store does not keep. */
static void
test_store_joined_without_total (Fixture *f, gconstpointer data)
{
  g_autofree char *config = tool_config (f);
  g_autofree char *text = NULL;
  g_autofree char *joining = NULL;
  const char *run[] = { "run", "--need", "tokens", "--", "true", NULL };
  gint64 free_units;
  guint holders;

  /* A run sets the pool up (status only looks). */
  g_assert_cmpint (tool_run (f, config, run), ==, 0);
  g_assert_true (g_file_get_contents (config, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "total=2\n"));
  joining = g_build_filename (f->dir, "joining.conf", NULL);
  {
    g_auto(GStrv) parts = g_strsplit (text, "total=2\n", 2);
    g_autofree char *without = g_strjoinv ("", parts);

    test_write_file (joining, without);
  }
  tool_status (f, joining, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 2);
  g_assert_cmpuint (holders, ==, 0);
  g_assert_cmpint (tool_run (f, joining, run), ==, 0);
}

int
main (int argc, char **argv)
{
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/store/tool", NULL, test_store_tool);
  etcd_test_add ("/etcd/store/status", NULL, test_store_status);
  etcd_test_add ("/etcd/store/waiting", NULL, test_store_waiting);
  etcd_test_add ("/etcd/store/frozen-holder", NULL, test_store_frozen_holder);
  etcd_test_add ("/etcd/store/hostile", NULL, test_store_hostile);
  etcd_test_add ("/etcd/store/job-side-locks", NULL, test_store_job_side_locks);
  etcd_test_add ("/etcd/store/watch", NULL, test_store_watch);
  etcd_test_add ("/etcd/store/set-clean", NULL, test_store_set_clean);
  etcd_test_add ("/etcd/store/administrators", NULL, test_store_administrators);
  etcd_test_add ("/etcd/store/init", NULL, test_store_init);
  etcd_test_add ("/etcd/store/since", NULL, test_store_since);
  etcd_test_add ("/etcd/store/short-lease", NULL, test_store_short_lease);
  etcd_test_add ("/etcd/store/joined-without-total", NULL, test_store_joined_without_total);
  return etcd_test_run ();
}
