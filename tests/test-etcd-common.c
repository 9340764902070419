/* test-etcd-common.c: what the etcd test programs share (see
 * test-etcd-common.h). The etcd store (a module: plugins/etcd/etcd.plugin)
 * is used through the public API by child processes (this program again,
 * STORE_ENV set), never in the test process: the module has its own copy
 * of the client, whose GType the test process registers already.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

static void
fixture_run_full (Fixture *f, const char *action, const char *arg, const char *mode)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "etcd-fixture.sh", NULL);
  const char *argv[] = { "bash", script, action, f->dir, arg, mode, NULL };

  test_run_or_fail (argv);
}

void
fixture_run (Fixture *f, const char *action, const char *arg)
{
  fixture_run_full (f, action, arg, NULL);
}

/* The fixture's file @name (a certificate of a "tls" cluster). */
static char *
fixture_file (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

char **
endpoints (Fixture *f)
{
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strsplit (g_strstrip (text), ",", -1);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  /* "1" or "3" members, or "tls": one member speaking https only to
   * clients with a certificate. */
  gboolean tls = g_strcmp0 (data, "tls") == 0;
  const char *members = data != NULL && !tls ? data : "1";
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) list = NULL;

  f->dir = test_make_tmpdir ();
  fixture_run_full (f, "start", members, tls ? "tls" : NULL);
  list = endpoints (f);
  f->client = tessera_etcd_client_new ((const char * const *) list, &error);
  g_assert_no_error (error);
  if (tls)
    {
      g_autofree char *ca = fixture_file (f, "ca.pem");
      g_autofree char *cert = fixture_file (f, "client.pem");
      g_autofree char *key = fixture_file (f, "client-key.pem");

      g_assert_true (tessera_etcd_client_set_tls (f->client, ca, cert, key, &error));
      g_assert_no_error (error);
    }
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->client);
  fixture_run (f, "stop", NULL);
  test_remove_tree (f->dir);
  g_free (f->dir);
}

GBytes *
text_bytes (const char *text)
{
  return g_bytes_new (text, strlen (text));
}

void
put (Fixture *f, const char *key, const char *value, gint64 lease)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = text_bytes (value);

  gboolean ok = tessera_etcd_client_put (f->client, key, bytes, lease, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (ok);
}

GPtrArray *
range_prefix (Fixture *f, const char *prefix, gint64 *revision)
{
  g_autofree char *end = tessera_etcd_prefix_end (prefix);
  g_autoptr(GError) error = NULL;
  GPtrArray *kvs = NULL;

  g_assert_true (tessera_etcd_client_range (f->client, prefix, end, revision, &kvs, NULL, &error));
  g_assert_no_error (error);
  return kvs;
}

void
assert_value (TesseraEtcdKv *kv, const char *key, const char *value)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (kv->value, &length);

  g_assert_cmpstr (kv->key, ==, key);
  g_assert_cmpmem (data, length, value, strlen (value));
}

/* Collects events until @count have come (bounded). */
GPtrArray *
collect_events (TesseraEtcdWatch *watch, guint count)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (all->len < count)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) events = tessera_etcd_watch_next (watch, 1.0, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (events);
      while (events->len > 0)
        g_ptr_array_add (all, g_ptr_array_steal_index (events, 0));
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
    }
  return all;
}

/* The member number (1…N) of the leader. */
char *
leader_of (Fixture *f)
{
  g_autofree char *script = g_test_build_filename (G_TEST_DIST, "etcd-fixture.sh", NULL);
  const char *argv[] = { "bash", script, "leader", f->dir, NULL };
  g_autoptr(GError) error = NULL;
  char *leader = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &leader, NULL, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  return g_strstrip (leader);
}

/* The fixture's client again, with member @first's endpoint first: the
 * member its calls and watches go to while it answers. */
void
prefer_member (Fixture *f, const char *first)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) ordered = NULL;
  g_autoptr(GError) error = NULL;
  guint k = (guint) atoi (first) - 1;

  g_assert_cmpuint (k, <, g_strv_length (list));
  g_strv_builder_add (builder, list[k]);
  for (guint i = 0; list[i] != NULL; i++)
    if (i != k)
      g_strv_builder_add (builder, list[i]);
  ordered = g_strv_builder_end (builder);
  g_clear_object (&f->client);
  f->client = tessera_etcd_client_new ((const char * const *) ordered, &error);
  g_assert_no_error (error);
}

TesseraEtcdClient *
client_for (const char * const *list)
{
  g_autoptr(GError) error = NULL;
  TesseraEtcdClient *client = tessera_etcd_client_new (list, &error);

  g_assert_no_error (error);
  return client;
}

/* Replays @events (puts and deletes of holder keys, in revision order):
 * at no revision are more than @total holders live, and none is left at
 * the end. Returns the most live at once. */
guint
audit_holders (GPtrArray *events, guint total)
{
  g_autoptr(GHashTable) live = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint most = 0;

  for (guint i = 0; i < events->len; i++)
    {
      TesseraEtcdEvent *event = g_ptr_array_index (events, i);

      if (event->type == TESSERA_ETCD_EVENT_PUT)
        g_hash_table_add (live, g_strdup (event->kv->key));
      else
        g_assert_true (g_hash_table_remove (live, event->kv->key));
      g_assert_cmpuint (g_hash_table_size (live), <=, total);
      most = MAX (most, g_hash_table_size (live));
    }
  g_assert_cmpuint (g_hash_table_size (live), ==, 0);
  return most;
}

static void
say (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
say (const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  vprintf (format, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
}

static int
store_cycle (TesseraDynamicResource *resource, const char *base, const char *id, int rounds)
{
  for (int round = 0; round < rounds; round++)
    {
      g_autofree char *identifier = g_strdup_printf ("%s-%d", id, round);
      g_autoptr(TesseraJob) job = test_job_new (base, "task", identifier);
      g_autoptr(GError) error = NULL;
      g_autoptr(TesseraDynamicDependency) dependency =
        tessera_dynamic_resource_create_dependency (resource, job, "1", &error);
      g_autoptr(TesseraDynamicDependencyLock) lock =
        dependency != NULL ? tessera_dynamic_dependency_lock (dependency, 120, NULL, &error) : NULL;

      if (lock == NULL)
        {
          say ("ERROR %s", error->message);
          return 1;
        }
      g_usleep (G_USEC_PER_SEC / 50);   /* the work done with the token */
      if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
        {
          say ("ERROR %s", error->message);
          return 1;
        }
    }
  say ("DONE");
  return 0;
}

/* A store child: test-etcd store BASE ID COUNT [KEY=VALUE…], STORE_ENV
 * set to the endpoints. Opens the countertoken pool "tokens" (total 2,
 * prefix /store/, a STORE_TTL lease, on etcd; KEY=VALUE settings added
 * or replacing these, -KEY leaving KEY out) the way a key file does;
 * COUNT 0: prints "OPENED"
 * and ends. Else tries once to take COUNT units as job task@ID; if that
 * fails, prints "WAITING" and waits up to 120 s; prints "ACQUIRED ms=N
 * token=T" (N: milliseconds waited, T: the grant's fencing token), holds
 * until stdin closes, releases and
 * prints "RELEASED". A failure prints "ERROR <message>".
 *
 * test-etcd store-try BASE ID COUNT [KEY=VALUE…]: the same, but tries
 * only once: prints "UNAVAILABLE" and ends when it cannot take them.
 *
 * test-etcd store-mutex BASE ID MODE [KEY=VALUE…]: the same on the mutex
 * "lock" (no total), MODE "shared" or "exclusive".
 *
 * test-etcd store-cycle BASE ID ROUNDS: ROUNDS times, takes one token as
 * job task@ID-ROUND (waiting up to 120 s), holds it a moment, releases
 * it; prints "DONE" or "ERROR <message>". */
static int
store_child (const char *endpoint_list, int argc, char **argv)
{
  g_autoptr(GStrvBuilder) keys = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) values = g_strv_builder_new ();
  g_autofree char *folder = g_build_filename (argv[2], "pool", NULL);
  g_autofree char *lease = g_strdup_printf ("%d", STORE_TTL);
  gboolean mutex = g_str_equal (argv[1], "store-mutex");
  const char *defaults[] = { "path", folder, "store", "etcd", "endpoints", endpoint_list,
                             "prefix", "/store/", "lease", lease, mutex ? NULL : "total", "2", NULL };
  g_auto(GStrv) key_list = NULL;
  g_auto(GStrv) value_list = NULL;
  g_autoptr(TesseraDynamicResource) resource = NULL;
  g_autoptr(TesseraJob) job = NULL;
  g_autoptr(TesseraDynamicDependency) dependency = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;
  g_autoptr(GError) error = NULL;
  gboolean only_open = g_str_equal (argv[1], "store") && g_str_equal (argv[4], "0");
  gint64 start;
  char buffer[64];

  for (guint i = 0; defaults[i] != NULL; i += 2)
    {
      gboolean replaced = FALSE;

      for (int j = 5; j < argc; j++)
        replaced |= (g_str_has_prefix (argv[j], defaults[i]) && argv[j][strlen (defaults[i])] == '=') ||
                    (argv[j][0] == '-' && g_str_equal (argv[j] + 1, defaults[i]));
      if (!replaced)
        {
          g_strv_builder_add (keys, defaults[i]);
          g_strv_builder_add (values, defaults[i + 1]);
        }
    }
  for (int j = 5; j < argc && !g_str_equal (argv[1], "store-cycle"); j++)
    {
      g_auto(GStrv) pair = NULL;

      if (argv[j][0] == '-')
        continue;
      pair = g_strsplit (argv[j], "=", 2);

      g_strv_builder_add (keys, pair[0]);
      g_strv_builder_add (values, pair[1] != NULL ? pair[1] : "");
    }
  key_list = g_strv_builder_end (keys);
  value_list = g_strv_builder_end (values);
  resource = tessera_registry_create_resource (tessera_registry_get_default (), mutex ? "mutex" : "countertoken",
                                               mutex ? "lock" : "tokens",
                                               (const char * const *) key_list,
                                               (const char * const *) value_list, &error);
  if (resource == NULL)
    {
      say ("ERROR %s", error->message);
      return 2;
    }
  if (only_open)
    {
      say ("OPENED");
      return 0;
    }
  if (g_str_equal (argv[1], "store-cycle"))
    return store_cycle (resource, argv[2], argv[3], atoi (argv[4]));
  job = test_job_new (argv[2], "task", argv[3]);
  dependency = tessera_dynamic_resource_create_dependency (resource, job, argv[4], &error);
  if (dependency == NULL)
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  start = g_get_monotonic_time ();
  lock = tessera_dynamic_dependency_lock (dependency, 0, NULL, &error);
  if (lock == NULL && g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT) &&
      g_str_equal (argv[1], "store-try"))
    {
      say ("UNAVAILABLE");
      return 0;
    }
  if (lock == NULL && g_error_matches (error, TESSERA_ERROR, TESSERA_ERROR_TIMEOUT))
    {
      g_clear_error (&error);
      say ("WAITING");
      lock = tessera_dynamic_dependency_lock (dependency, 120, NULL, &error);
    }
  if (lock == NULL)
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  {
    gint64 token = 0;

    g_object_get (lock, "fencing-token", &token, NULL);
    say ("ACQUIRED ms=%d token=%" G_GINT64_FORMAT, (int) ((g_get_monotonic_time () - start) / 1000), token);
  }
  while (read (0, buffer, sizeof buffer) > 0)
    ;
  if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
    {
      say ("ERROR %s", error->message);
      return 1;
    }
  say ("RELEASED");
  return 0;
}

/* A store child for @f, its environment extended by @env (NAME, VALUE
 * pairs), arguments after COUNT in @settings (NULL-terminated); run on
 * the simulated @host (see test_argv_simulated_host(), made in the
 * fixture's folder), or here if @host is NULL. */
Helper *
store_spawn_on (Fixture *f, const char *host, const char *mode, const char * const *env, const char *id,
                const char *count, const char * const *settings)
{
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) full_env = g_ptr_array_new ();

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  g_strstrip (list);
  g_ptr_array_add (full_env, (gpointer) STORE_ENV);
  g_ptr_array_add (full_env, list);
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    g_ptr_array_add (full_env, (gpointer) env[i]);
  g_ptr_array_add (full_env, NULL);
  if (host != NULL)
    test_argv_simulated_host (argv, f->dir, host, "");
  g_ptr_array_add (argv, g_file_read_link ("/proc/self/exe", NULL));
  g_ptr_array_add (argv, g_strdup (mode));
  g_ptr_array_add (argv, g_build_filename (f->dir, "jobs", NULL));
  g_ptr_array_add (argv, g_strdup (id));
  g_ptr_array_add (argv, g_strdup (count));
  for (guint i = 0; settings != NULL && settings[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (settings[i]));
  g_ptr_array_add (argv, NULL);
  return helper_spawn_argv ((const char * const *) full_env->pdata, (const char * const *) argv->pdata);
}

Helper *
store_spawn_mode (Fixture *f, const char *mode, const char * const *env, const char *id, const char *count,
                  const char * const *settings)
{
  return store_spawn_on (f, NULL, mode, env, id, count, settings);
}

Helper *
store_spawn (Fixture *f, const char * const *env, const char *id, const char *count, const char * const *settings)
{
  return store_spawn_mode (f, "store", env, id, count, settings);
}

/* The milliseconds an "ACQUIRED ms=N" line says. */
int
expect_acquired (Helper *helper, double timeout)
{
  g_autofree char *line = helper_read_line (helper, timeout);

  if (line == NULL || !g_str_has_prefix (line, "ACQUIRED ms="))
    g_error ("expected ACQUIRED from the store child, got “%s”", line != NULL ? line : "(nothing)");
  return atoi (line + strlen ("ACQUIRED ms="));
}

/* The pool's keys as etcd has them now. */
GPtrArray *
pool_keys (Fixture *f, const char *what)
{
  g_autofree char *prefix = g_strconcat ("/store/tokens/", what, NULL);

  return range_prefix (f, prefix, NULL);
}

/* Waiting is never woken by polling here: its first interval is longer
 * than the test. */
const char * const no_polling_env[] = {
  "TESSERA_POLL_INTERVAL", "600", "TESSERA_POLL_INTERVAL_MAX", "600", NULL
};

/* Two processes share a 2-token pool on etcd: the first takes both (its
 * key on its lease, the informations set up by the first user), the
 * second waits and gets its token through the watch when the first
 * releases (polling is off), and every key is gone at the end. */
void
test_store_acquire_release (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) first = store_spawn (f, NULL, "A", "2", NULL);
  g_autoptr(Helper) second = NULL;
  g_autoptr(GPtrArray) jobs = NULL;
  g_autoptr(GPtrArray) informations = NULL;
  gint64 released;
  int waited;

  expect_acquired (first, 60);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/tokens/jobs/task@A");
  g_assert_cmpint (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->lease, !=, 0);
  informations = pool_keys (f, "informations");
  g_assert_cmpuint (informations->len, ==, 1);
  assert_value (g_ptr_array_index (informations, 0), "/store/tokens/informations", "{\"total\":2}");

  second = store_spawn (f, no_polling_env, "B", "1", NULL);
  helper_expect_line (second, "WAITING", 60);
  released = g_get_monotonic_time ();
  helper_close_stdin (first);
  helper_expect_line (first, "RELEASED", 60);
  waited = expect_acquired (second, 120);
  g_test_message ("the waiter got its token %.3f s after the holder was told to release (no polling)",
                  (g_get_monotonic_time () - released) / 1e6);
  g_assert_cmpint (waited, <, 120 * 1000);
  g_assert_cmpint (helper_wait (first), ==, 0);
  g_ptr_array_unref (jobs);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 1);
  g_assert_cmpstr (((TesseraEtcdKv *) g_ptr_array_index (jobs, 0))->key, ==, "/store/tokens/jobs/task@B");

  release_store_child (second);
  g_ptr_array_unref (jobs);
  jobs = pool_keys (f, "jobs/");
  g_assert_cmpuint (jobs->len, ==, 0);
}

/* @contenders processes take the two tokens of an etcd pool @rounds
 * times each, at once, through the public API; with @kill_leader, the
 * cluster's leader is killed once they are under way. An auditor
 * replays every change under the pool's jobs from the revision before
 * they started: at no revision are more than two holders live, and none
 * is left at the end. */
void
contend_and_audit (Fixture *f, guint contenders, guint rounds, gboolean kill_leader)
{
  const guint total = 2;
  g_autoptr(GPtrArray) children = g_ptr_array_new_with_free_func ((GDestroyNotify) helper_free);
  g_autofree char *end = tessera_etcd_prefix_end ("/store/tokens/jobs/");
  g_autofree char *leader = kill_leader ? leader_of (f) : NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  guint most = 0;
  gint64 revision = 0;

  if (leader != NULL)
    {
      /* The auditor reads from another member. */
      g_autofree char *other = g_strdup_printf ("%d", atoi (leader) % 3 + 1);
      prefer_member (f, other);
    }
  put (f, "/store/tokens/informations", "{\"total\": 2}", 0);
  g_ptr_array_unref (range_prefix (f, "/store/tokens/", &revision));
  watch = tessera_etcd_client_watch (f->client, "/store/tokens/jobs/", end, revision + 1, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < contenders; i++)
    {
      g_autofree char *id = g_strdup_printf ("%u", i);
      g_autofree char *n = g_strdup_printf ("%u", rounds);

      g_ptr_array_add (children, store_spawn_mode (f, "store-cycle", NULL, id, n, NULL));
    }
  events = collect_events (watch, leader != NULL ? 4 : 0);
  if (leader != NULL)
    {
      fixture_run (f, "kill", leader);
      g_test_message ("leader (member %s) killed after %u changes", leader, events->len);
    }
  for (guint i = 0; i < children->len; i++)
    {
      g_autofree char *line = helper_read_line (g_ptr_array_index (children, i), 300);

      g_assert_cmpstr (line, ==, "DONE");
      g_assert_cmpint (helper_wait (g_ptr_array_index (children, i)), ==, 0);
    }

  {
    g_autoptr(GPtrArray) rest = collect_events (watch, 2 * contenders * rounds - events->len);

    while (rest->len > 0)
      g_ptr_array_add (events, g_ptr_array_steal_index (rest, 0));
  }
  most = audit_holders (events, total);
  g_test_message ("%u takes by %u processes of a %u-token etcd pool: at most %u held at once",
                  contenders * rounds, contenders, total, most);
}

/* Counter @name of etcd's member @k (0…N-1), from its metrics. */
gint64
member_metric (Fixture *f, guint k, const char *name)
{
  g_auto(GStrv) list = endpoints (f);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autofree char *text = NULL;
  g_autofree char *prefix = NULL;
  const char *line;

  g_ptr_array_add (argv, g_strdup (test_python ()));
  g_ptr_array_add (argv, g_strdup ("-c"));
  g_ptr_array_add (argv, g_strdup ("import sys, urllib.request\n"
                                   "sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=60).read().decode())"));
  g_ptr_array_add (argv, g_strconcat (list[k], "/metrics", NULL));
  g_ptr_array_add (argv, NULL);
  g_assert_cmpint (test_run_capture (argv, &out, NULL), ==, 0);
  text = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
  prefix = g_strdup_printf ("\n%s ", name);
  line = strstr (text, prefix);
  if (line == NULL)
    g_error ("etcd metrics without %s", name);
  return g_ascii_strtoll (line + strlen (prefix), NULL, 10);
}

/* Counter @name of etcd's first member. */
gint64
metric (Fixture *f, const char *name)
{
  return member_metric (f, 0, name);
}

/* A store child that holds lets go (its input closed): it says
 * "RELEASED" and ends well. */
void
release_store_child (Helper *child)
{
  helper_close_stdin (child);
  helper_expect_line (child, "RELEASED", 60);
  g_assert_cmpint (helper_wait (child), ==, 0);
}

/* The holder lets go; the waiter gets its share, then lets go too. */
void
hand_over_and_end (Helper *holder, Helper *waiter)
{
  helper_close_stdin (holder);
  helper_expect_line (holder, "RELEASED", 60);
  expect_acquired (waiter, 60);
  helper_close_stdin (waiter);
  helper_expect_line (waiter, "RELEASED", 60);
  g_assert_cmpint (helper_wait (holder), ==, 0);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
}

/* `tessera` with @config, its state in @f's folder, then @args; @env
 * (NAME=VALUE strings) set for it, criticals fatal. */
GPtrArray *
tool_argv (Fixture *f, const char *config, const char * const *env, const char * const *args)
{
  g_autofree char *state = g_build_filename (f->dir, "state", NULL);
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera (argv, state, config);
  /* A critical ends it: its exit status tells. */
  g_ptr_array_insert (argv, 1, g_strdup ("G_DEBUG=fatal-criticals,gc-friendly"));
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    g_ptr_array_insert (argv, 1, g_strdup (env[i]));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  return argv;
}

/* `tessera status --json` on the pool: its free units and holders. */
void
tool_status_full (Fixture *f, const char *config, gint64 *capacity, gint64 *free_units, guint *holders)
{
  const char *args[] = { "status", "--json", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, args);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *resource;
  int status;

  status = test_run_capture (argv, &out, &err);
  g_assert_cmpint (status, ==, 0);
  root = json_from_string (g_bytes_get_data (out, NULL), &error);
  g_assert_no_error (error);
  resource = test_status_first_resource (root);
  g_assert_cmpstr (json_object_get_string_member (resource, "name"), ==, "tokens");
  *capacity = json_object_get_int_member (resource, "capacity");
  *free_units = json_object_get_int_member (resource, "free");
  *holders = json_array_get_length (json_object_get_array_member (resource, "holders"));
}

void
tool_status (Fixture *f, const char *config, gint64 *free_units, guint *holders)
{
  gint64 capacity;

  tool_status_full (f, config, &capacity, free_units, holders);
  g_assert_cmpint (capacity, ==, 2);
}

/* `tessera` with @config and @args, to its end: its exit status. */
int
tool_run (Fixture *f, const char *config, const char * const *args)
{
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, args);
  g_autoptr(GBytes) out = NULL;

  return test_run_capture (argv, &out, NULL);
}

/* A configuration of the countertoken pool "tokens" (2 tokens) on @f's
 * etcd, under /tool/, with a lease of @lease seconds: its path. */
char *
tool_config_lease (Fixture *f, int lease)
{
  g_autofree char *endpoints_path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *list = NULL;
  g_autofree char *text = NULL;
  char *config = g_build_filename (f->dir, "tessera.conf", NULL);

  g_assert_true (g_file_get_contents (endpoints_path, &list, NULL, NULL));
  text = g_strdup_printf ("[resource tokens]\ntype=countertoken\nstore=etcd\nendpoints=%s\n"
                          "prefix=/tool/\nlease=%d\ntotal=2\n", g_strstrip (list), lease);
  test_write_file (config, text);
  return config;
}

char *
tool_config (Fixture *f)
{
  return tool_config_lease (f, TOOL_LEASE);
}

/* A `tessera run` that waits for a token of @config's pool then prints
 * SECOND; what it says on its error output (that it waits) comes as its
 * output, and polling is off. */
Helper *
tool_waiter (Fixture *f, const char *config)
{
  const char *wait_args[] = { "run", "--need", "tokens=1", "--", "echo", "SECOND", NULL };
  const char *no_polling[] = { "TESSERA_POLL_INTERVAL=600", "TESSERA_POLL_INTERVAL_MAX=600", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, no_polling, wait_args);
  Helper *waiter;

  g_ptr_array_insert (argv, 0, g_strdup ("sh"));
  g_ptr_array_insert (argv, 1, g_strdup ("-c"));
  g_ptr_array_insert (argv, 2, g_strdup ("exec \"$@\" 2>&1"));
  g_ptr_array_insert (argv, 3, g_strdup ("sh"));
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (waiter, "tessera: waiting for tokens", 60);
  return waiter;
}

/* A `tessera run` that holds both tokens of @config's pool while its
 * command runs (until its input closes), once it runs. */
Helper *
tool_holder (Fixture *f, const char *config)
{
  const char *hold_args[] = { "run", "--need", "tokens=2", "--", "sh", "-c", "echo RUNNING; cat >/dev/null", NULL };
  g_autoptr(GPtrArray) argv = tool_argv (f, config, NULL, hold_args);
  Helper *holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);

  helper_expect_line (holder, "RUNNING", 60);
  return holder;
}

/* `tessera run` holds both tokens (status: none free, one holder), a
 * second run waits and runs its command once the first ends. */
void
tool_hand_over (Fixture *f, const char *config)
{
  g_autoptr(Helper) first = tool_holder (f, config);
  g_autoptr(Helper) second = NULL;
  gint64 free_units;
  guint holders;

  tool_status (f, config, &free_units, &holders);
  g_assert_cmpint (free_units, ==, 0);
  g_assert_cmpuint (holders, ==, 1);
  second = tool_waiter (f, config);
  helper_close_stdin (first);
  g_assert_cmpint (helper_wait (first), ==, 0);
  helper_expect_line (second, "SECOND", 60);
  g_assert_cmpint (helper_wait (second), ==, 0);
}

/* When this program runs as a store child (STORE_ENV set, see
 * store_child()): its exit status; else -1. */
static int
etcd_store_child_main (int argc, char **argv)
{
  if (g_getenv (STORE_ENV) != NULL && argc >= 5 &&
      (g_str_equal (argv[1], "store") || g_str_equal (argv[1], "store-try") ||
       g_str_equal (argv[1], "store-cycle") || g_str_equal (argv[1], "store-mutex")))
    return store_child (g_getenv (STORE_ENV), argc, argv);
  return -1;
}

static char *runtime;

/* The start of a test program's main. Run as a store child, it is
 * that child, to its end. Else a runtime folder of this run's (what the
 * clients learn of hung members, RUNTIME/tessera/etcd-members, stays
 * there, not in the user's), then GLib's tests. */
void
etcd_test_init (int *argc, char ***argv)
{
  int child = etcd_store_child_main (*argc, *argv);

  if (child >= 0)
    exit (child);
  runtime = test_make_tmpdir ();
  g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  g_test_init (argc, argv, NULL);
}

/* The test @path: @fn on a fixture of @data ("3" members, "tls", or
 * NULL: one member). */
void
etcd_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer))
{
  g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down);
}

/* Runs the tests, then removes the runtime folder. */
int
etcd_test_run (void)
{
  int status = g_test_run ();

  test_remove_tree (runtime);
  g_clear_pointer (&runtime, g_free);
  return status;
}
