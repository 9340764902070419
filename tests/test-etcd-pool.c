/* test-etcd-pool.c: a pool's keys (tessera-etcd-pool.c): processes
 * contending for its tokens, and values a hostile co-user wrote.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-etcd-common.h"

#define CONTEND_ENV "TESSERA_TEST_ETCD_CONTEND"

#define CONTEND_PREFIX "/contend/"

#define CONTEND_POOL "tokens"

static TesseraDynamicLockFile *
lock_file_for (const char *key, const char *job_uri)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}}", job_uri);
  TesseraDynamicLockFile *lock_file =
    tessera_dynamic_lock_file_new_from_data (TESSERA_TYPE_DYNAMIC_LOCK_FILE, key, text, -1, &error);

  g_assert_no_error (error);
  return lock_file;
}

/* The capacity the pool's informations give, or -1. */
static gint64
total_of (TesseraEtcdPoolState *state)
{
  if (state->informations == NULL || !JSON_NODE_HOLDS_OBJECT (state->informations))
    return -1;
  return json_object_get_int_member_with_default (json_node_get_object (state->informations), "total", -1);
}

/* A contender process (this program again, CONTEND_ENV set to the
 * endpoints): @rounds times, takes one token of the pool the etcd way
 * (read at a revision, judge, put only if nothing changed since, else
 * read again; wait on a watch when full), holds it a moment, lets it go.
 * Prints how many of its writes were refused. */
static int
contend (const char *endpoint_list, const char *id, int rounds)
{
  g_auto(GStrv) list = g_strsplit (endpoint_list, ",", -1);
  g_autoptr(TesseraEtcdClient) client = client_for ((const char * const *) list);
  g_autoptr(TesseraEtcdClient) keeper = client_for ((const char * const *) list);
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraEtcdLease) lease = tessera_etcd_lease_new (client, keeper, 10, &error);
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autofree char *name = g_strdup_printf ("contend@%s", id);
  g_autofree char *job_uri = g_strdup_printf ("/jobs/%s", id);
  guint refused = 0;

  if (lease == NULL)
    goto fail;
  pool = tessera_etcd_pool_new (client, CONTEND_PREFIX, CONTEND_POOL, TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  if (pool == NULL)
    goto fail;
  for (int round = 0; round < rounds; round++)
    {
      gboolean held = FALSE;

      while (!held)
        {
          g_autoptr(TesseraEtcdPoolState) state = tessera_etcd_pool_read (pool, NULL, &error);
          gboolean changed;

          if (state == NULL)
            goto fail;
          if ((gint64) state->holders->len < total_of (state))
            {
              g_autofree char *key = tessera_etcd_pool_dup_holder_key (pool, name);
              g_autoptr(TesseraDynamicLockFile) mine = lock_file_for (key, job_uri);

              if (!tessera_etcd_pool_put_holder (pool, state->revision, name, mine,
                                                 tessera_etcd_lease_get_id (lease), &held, NULL, NULL, &error))
                goto fail;
              refused += !held;
            }
          else if (!tessera_etcd_pool_wait (pool, state->revision, 30, &changed, NULL, &error))
            goto fail;
        }
      g_usleep (G_USEC_PER_SEC / 50);   /* the work done with the token */
      if (!tessera_etcd_pool_delete_holder (pool, name, NULL, &error))
        goto fail;
    }
  printf ("%u\n", refused);
  return 0;
fail:
  fprintf (stderr, "contender %s: %s\n", id, error->message);
  return 1;
}

/* Five processes take the two tokens of a pool four times each, at once.
 * An auditor replays every change under the pool from the revision
 * before they started: at no revision are more than two holder keys
 * live, and all are gone at the end. */
static void
test_pool_contention (Fixture *f, gconstpointer data)
{
  const guint contenders = 5, rounds = 4;
  const gint64 total = 2;
  g_autofree char *list = NULL;
  g_autofree char *path = g_build_filename (f->dir, "endpoints", NULL);
  g_autofree char *end = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GPtrArray) children = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autoptr(TesseraEtcdWatch) watch = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(JsonNode) informations = json_from_string ("{\"total\": 2}", NULL);
  g_autoptr(GError) error = NULL;
  guint most = 0, refused = 0;
  gint64 revision = 0;

  pool = tessera_etcd_pool_new (f->client, CONTEND_PREFIX, CONTEND_POOL, TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  g_assert_no_error (error);
  g_assert_true (tessera_etcd_pool_put_informations (pool, informations, NULL, &error));
  g_assert_no_error (error);
  end = tessera_etcd_prefix_end (tessera_etcd_pool_get_key (pool));
  g_ptr_array_unref (range_prefix (f, tessera_etcd_pool_get_key (pool), &revision));
  watch = tessera_etcd_client_watch (f->client, tessera_etcd_pool_get_key (pool), end, revision + 1, &error);
  g_assert_no_error (error);

  g_assert_true (g_file_get_contents (path, &list, NULL, NULL));
  g_subprocess_launcher_setenv (launcher, CONTEND_ENV, g_strstrip (list), TRUE);
  for (guint i = 0; i < contenders; i++)
    {
      g_autofree char *id = g_strdup_printf ("%u", i);
      g_autofree char *n = g_strdup_printf ("%u", rounds);
      GSubprocess *child = g_subprocess_launcher_spawn (launcher, &error, self, "contend", id, n, NULL);

      g_assert_no_error (error);
      g_ptr_array_add (children, child);
    }
  for (guint i = 0; i < children->len; i++)
    {
      g_autofree char *out = NULL;

      g_assert_true (g_subprocess_communicate_utf8 (g_ptr_array_index (children, i), NULL, NULL, &out, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (g_ptr_array_index (children, i)));
      g_assert_cmpint (g_subprocess_get_exit_status (g_ptr_array_index (children, i)), ==, 0);
      refused += (guint) atoi (out);
    }

  /* Every take and every release, in revision order. */
  events = collect_events (watch, 2 * contenders * rounds);
  most = audit_holders (events, (guint) total);
  g_test_message ("%u takes by %u processes of a %d-token pool: at most %u held at once, "
                  "%u conditional writes refused (decided again)",
                  contenders * rounds, contenders, (int) total, most, refused);
}

/* Values under a pool that a hostile co-user wrote: not JSON, too deep,
 * large garbage, keys that are not the pool's shapes. Each unreadable
 * holder is kept (it holds everything) with why; the rest is ignored. */
static void
test_pool_hostile (Fixture *f, gconstpointer data)
{
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autofree char *garbage = g_strnfill (1300 * 1024, '{');
  g_autoptr(TesseraEtcdPool) pool = NULL;
  g_autoptr(TesseraEtcdPoolState) state = NULL;
  g_autoptr(GError) error = NULL;

  for (int i = 0; i < 10000; i++)
    g_string_append_c (deep, '[');
  put (f, "/h/gpu/informations", "{\"total\": ", 0);
  put (f, "/h/gpu/jobs/a@1", "not json", 0);
  put (f, "/h/gpu/jobs/b@1", deep->str, 0);
  put (f, "/h/gpu/jobs/c@1", garbage, 0);
  put (f, "/h/gpu/jobs/d@1", "{\"job_uri\": \"/jobs/d\", \"information\": {\"count\": 1}}", 0);
  put (f, "/h/gpu/jobs/e/f", "{}", 0);
  put (f, "/h/gpu/elsewhere", "{}", 0);
  put (f, "/h/gpux/jobs/g@1", "{}", 0);

  g_assert_null (tessera_etcd_pool_new (f->client, "h/", "gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_clear_error (&error);
  g_assert_null (tessera_etcd_pool_new (f->client, "/h/", "../gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error));
  g_assert_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION);
  g_clear_error (&error);

  pool = tessera_etcd_pool_new (f->client, "/h", "gpu", TESSERA_TYPE_DYNAMIC_LOCK_FILE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (tessera_etcd_pool_get_key (pool), ==, "/h/gpu/");
  state = tessera_etcd_pool_read (pool, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (state->informations);
  g_assert_error (state->informations_error, TESSERA_ERROR, TESSERA_ERROR_INVALID_INFORMATION);
  g_assert_cmpuint (state->holders->len, ==, 4);
  for (guint i = 0; i < 3; i++)
    {
      TesseraEtcdHolder *holder = g_ptr_array_index (state->holders, i);

      g_assert_null (holder->lock_file);
      g_assert_error (holder->error, TESSERA_ERROR, TESSERA_ERROR_INVALID_LOCK_FILE);
    }
  {
    TesseraEtcdHolder *holder = g_ptr_array_index (state->holders, 3);

    g_assert_cmpstr (holder->name, ==, "d@1");
    g_assert_nonnull (holder->lock_file);
    g_assert_true (tessera_dynamic_lock_file_is_valid (holder->lock_file));
  }
}

int
main (int argc, char **argv)
{
  if (g_getenv (CONTEND_ENV) != NULL && argc == 4 && g_str_equal (argv[1], "contend"))
    return contend (g_getenv (CONTEND_ENV), argv[2], atoi (argv[3]));
  etcd_test_init (&argc, &argv);
  etcd_test_add ("/etcd/pool/contention", NULL, test_pool_contention);
  etcd_test_add ("/etcd/pool/hostile", NULL, test_pool_hostile);
  return etcd_test_run ();
}
