/* test-tool-status.c: `tessera status` and `tessera watch`: text, JSON
 * and OpenMetrics; holders, the queue, verdicts, and what cannot be read.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "test-utils.h"
#include "test-tool-common.h"
#include <tessera/tessera.h>

static JsonObject *
status_of_r (Fixture *f, JsonNode **root)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "status", "--json", NULL);

  g_assert_cmpint (status, ==, 0);
  *root = json_from_string (out, NULL);
  g_assert_nonnull (*root);
  return test_status_only_resource (*root);
}

static void
test_status_json (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--name", "trainer", "--", "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *pid = test_read_line (holder, 60);
  g_autofree char *path = g_build_filename (f->tmp, "r", NULL);
  g_autoptr(JsonNode) during = NULL;
  g_autoptr(JsonNode) after = NULL;
  JsonObject *r, *h;
  JsonArray *holders;

  g_assert_nonnull (pid);
  r = status_of_r (f, &during);
  g_assert_cmpstr (json_object_get_string_member (r, "name"), ==, "r");
  g_assert_cmpstr (json_object_get_string_member (r, "type"), ==, "countertoken");
  g_assert_cmpstr (json_object_get_string_member (r, "path"), ==, path);
  g_assert_cmpint (json_object_get_int_member (r, "capacity"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  holders = json_object_get_array_member (r, "holders");
  g_assert_cmpuint (json_array_get_length (holders), ==, 1);
  h = json_array_get_object_element (holders, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (h, "job"), "trainer@"));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (h, "job_uri"), "/trainer"));
  /* The child, not the wrapper, is the holder. */
  g_assert_cmpint (json_object_get_int_member (h, "pid"), ==, atoi (pid));
  g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, g_get_host_name ());
  g_assert_cmpstr (json_object_get_string_member (h, "state"), ==, "alive");
  /* Whose job it is: the uid the process ran as, and its name. */
  g_assert_cmpint (json_object_get_int_member (h, "uid"), ==, getuid ());
  g_assert_cmpstr (json_object_get_string_member (h, "user"), ==, g_get_user_name ());
  g_assert_true (g_str_has_suffix (json_object_get_string_member (h, "since"), "Z"));
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (h, "information"), "count"), ==, 1);

  test_let_go (holder);
  r = status_of_r (f, &after);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 0);
}

/* Whose a holding is, in status: the lock file's owner, not the uid its
 * process spec claims (anyone who may write in jobs/ can claim another's
 * uid in a file of hers; none can own a file as another). */
static void
test_status_user_is_file_owner (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                   "run", "--need", "r", "--name", "claimer", "--", "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *pid = test_read_line (holder, 60);
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_autofree char *claimed = NULL;
  g_autoptr(JsonNode) status = NULL;
  JsonObject *h;

  g_assert_nonnull (pid);
  path = find_lock_file (f);
  if (path == NULL || !g_file_get_contents (path, &text, NULL, NULL))
    g_error ("no lock file in %s", jobs);
  /* Another uid of as many digits: the file keeps its size and times. */
  {
    g_autofree char *mine = g_strdup_printf ("\"uid\":%u", (guint) getuid ());
    g_autofree char *other = g_strdup_printf ("\"uid\":%u", getuid () == 0 ? 7 : (guint) getuid () ^ 1);

    if (strstr (text, mine) == NULL)
      g_error ("%s does not record the uid: %s", path, text);
    claimed = test_substitute (text, mine, other);
  }
  test_rewrite_keeping_stat (path, claimed);

  h = json_array_get_object_element (json_object_get_array_member (status_of_r (f, &status), "holders"), 0);
  g_assert_cmpint (json_object_get_int_member (h, "uid"), ==, getuid ());
  g_assert_cmpstr (json_object_get_string_member (h, "user"), ==, g_get_user_name ());
  test_let_go (holder);
}

/* Writes r's configuration again with a capacity of @total. */
static void
set_total (Fixture *f, int total)
{
  g_autofree char *content = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=%d\n", f->tmp, total);

  test_write_file (f->config, content);
}

/* `tessera run --need r=@count --name @name` holding until told (its
 * command's pid in *@pid when asked). */
static GSubprocess *
hold_r_named (Fixture *f, const char *name, const char *count, GPid *pid)
{
  g_autofree char *need = g_strdup_printf ("r=%s", count);
  GSubprocess *holder = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDIN_PIPE,
                                       "run", "--need", need, "--name", name, "--",
                                       "sh", "-c", "echo $$; read x || true", NULL);
  g_autofree char *line = test_read_line (holder, 60);

  g_assert_nonnull (line);
  if (pid != NULL)
    *pid = (GPid) g_ascii_strtoll (line, NULL, 10);
  return holder;
}

/* A run of r=@count named @name whose patience is over at once: past its
 * first attempt it has a reserving entry in r's queue. Returns once it
 * has. */
static GSubprocess *
queue_for_r (Fixture *f, const char *name, const char *count)
{
  const char *env[] = { "TESSERA_PATIENCE", "0.05", NULL };
  g_autofree char *need = g_strdup_printf ("r=%s", count);
  g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
  GSubprocess *waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_SILENCE,
                                       "run", "--need", need, "--name", name, "--", "true", NULL);

  /* A reserving entry is NAME.json (one within its patience, NAME.waiting). */
  g_free (test_wait_entry (queue, NULL, ".json", NULL, 60));
  return waiter;
}

/* Waits until process @pid is gone or a zombie (dead, for a judge). */
static void
wait_until_dead (GPid pid)
{
  test_wait_until (test_pid_has_ended, GINT_TO_POINTER (pid), 60, "process %d still ran after SIGKILL", (int) pid);
}

/* The queue view, as squeue's: a waiter past its patience is listed with
 * its user, its job, what it wants and since when, in status and in its
 * JSON; each holder has a type-neutral "amount" (a counter's count), and
 * the resource what is held beside what is free (issue 42, point 4). */
static void
test_status_queue (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) since = NULL;
  g_autofree char *text = NULL;
  JsonObject *r, *h, *w;
  JsonArray *waiters;
  int status;

  set_total (f, 2);
  holder = hold_r_named (f, "big", "2", NULL);
  waiter = queue_for_r (f, "small", "1");

  r = status_of_r (f, &root);
  g_assert_cmpint (json_object_get_int_member (r, "capacity"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 2);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 0);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpint (json_object_get_int_member_with_default (h, "amount", -1), ==, 2);
  g_assert_true (json_object_has_member (r, "waiters"));
  waiters = json_object_get_array_member (r, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), "small@"));
  g_assert_cmpstr (json_object_get_string_member (w, "user"), ==, g_get_user_name ());
  g_assert_cmpint (json_object_get_int_member (w, "uid"), ==, getuid ());
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "reserved");
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (w, "since"), NULL);
  g_assert_nonnull (since);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 1);

  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "\n  waiting: small@"));
  g_assert_nonnull (strstr (text, g_get_user_name ()));
  g_assert_nonnull (strstr (text, "{\"count\":1}"));

  test_let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* The one waiter in r's queue view that a run named @name is: its JSON
 * object in status --json, shown as waiting in status's text and counted
 * in the OpenMetrics text (issue 42, point 4: every waiting run, not
 * only those past their patience). */
static void
assert_shown_waiting (Fixture *f, const char *name)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) since = NULL;
  g_autofree char *text = NULL;
  g_autofree char *metrics = NULL;
  g_autofree char *line = g_strdup_printf ("\n  waiting: %s@", name);
  g_autofree char *job = g_strdup_printf ("%s@", name);
  g_autofree char *user_waiting = g_strdup_printf ("tessera_user_waiting{resource=\"r\",user=\"%s\"} 1\n",
                                                   g_get_user_name ());
  JsonObject *r, *w;
  JsonArray *waiters;
  int status;

  r = status_of_r (f, &root);
  waiters = json_object_get_array_member (r, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), job));
  g_assert_cmpstr (json_object_get_string_member (w, "user"), ==, g_get_user_name ());
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  since = g_date_time_new_from_iso8601 (json_object_get_string_member (w, "since"), NULL);
  g_assert_nonnull (since);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 1);

  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, line));
  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (metrics, "\ntessera_waiters{resource=\"r\"} 1\n"));
  g_assert_nonnull (strstr (metrics, user_waiting));
}

/* Nobody waits in r's queue view, by status --json and status. */
static void
assert_none_waiting (Fixture *f)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  JsonObject *r;
  int status;

  r = status_of_r (f, &root);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "waiters")), ==, 0);
  g_assert_cmpint (json_object_get_int_member (r, "waiting"), ==, 0);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (text, "\n  waiting: "));
}

/* A run that waits within its patience (an hour here), reserving
 * nothing yet, is in the queue view all the same, as "waiting": an
 * administrator sees who waits; killed, it is no longer shown (its entry
 * judged like a holder's), and a waiter granted leaves nothing behind
 * (issue 42, point 4). */
static void
test_status_patient_waiter (Fixture *f, gconstpointer data)
{
  const char *env[] = { "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) killed = NULL;
  g_autoptr(GSubprocess) granted = NULL;
  g_autofree char *line = NULL;
  g_autofree char *second_line = NULL;

  holder = hold_r_named (f, "big", "1", NULL);
  killed = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "r=1", "--name", "patient", "--", "true", NULL);
  /* Said once its first attempt failed. */
  line = read_error_line (killed, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for r"));
  assert_shown_waiting (f, "patient");

  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  assert_none_waiting (f);

  granted = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                           "run", "--need", "r=1", "--name", "later", "--", "true", NULL);
  second_line = read_error_line (granted, 60);
  g_assert_nonnull (second_line);
  g_assert_true (g_str_has_prefix (second_line, "tessera: waiting for r"));
  assert_shown_waiting (f, "later");
  test_let_go (holder);
  g_assert_cmpint (test_exit_code (granted), ==, 0);
  assert_none_waiting (f);
  g_assert_cmpuint (test_count_entries (queue), ==, 0);
}

/* The one waiter of status --json's only resource: its "wants". */
static JsonNode *
waiter_wants (Fixture *f, JsonNode **root)
{
  int status;
  g_autofree char *out = run_capture (f, &status, "status", "--json", NULL);
  JsonObject *resource;
  JsonArray *waiters;
  JsonObject *w;

  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  *root = json_from_string (out, NULL);
  g_assert_nonnull (*root);
  resource = test_status_first_resource (*root);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  return json_object_get_member (w, "wants");
}

/* A mutex's or a GPU's waiter within its patience shows what it asks
 * for (issue 42, point 4): a mutex's its mode, a GPU's how many devices,
 * said by the type without preparing a reservation (its "wants" was
 * null: the wait information of those types has side effects). */
static void
test_status_patient_waiter_wants (Fixture *f, gconstpointer data)
{
  const char *env[] = { "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *mutex = g_strdup_printf ("[resource m]\ntype=mutex\npath=%s/m\n", f->tmp);
  g_autofree char *gpu = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s/g\ndevices=0;1\n", f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(GSubprocess) gpu_holder = NULL;
  g_autoptr(GSubprocess) gpu_waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonNode) gpu_root = NULL;
  g_autofree char *ready = NULL, *line = NULL, *gpu_ready = NULL, *gpu_line = NULL;
  JsonNode *wants;

  test_write_file (f->config, mutex);
  holder = hold_need (f, NULL, "m");
  waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "m=shared", "--name", "reader", "--", "true", NULL);
  line = read_error_line (waiter, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for m"));
  wants = waiter_wants (f, &root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (wants));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (wants), "mode"), ==, "shared");
  test_let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);

  test_write_file (f->config, gpu);
  gpu_holder = hold_need (f, NULL, "g=1");
  gpu_waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                              "run", "--need", "g=2", "--name", "trainer", "--", "true", NULL);
  gpu_line = read_error_line (gpu_waiter, 60);
  g_assert_nonnull (gpu_line);
  g_assert_true (g_str_has_prefix (gpu_line, "tessera: waiting for g"));
  wants = waiter_wants (f, &gpu_root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (wants));
  g_assert_cmpint (json_object_get_int_member_with_default (json_node_get_object (wants), "count", -1), ==, 2);
  test_let_go (gpu_holder);
  g_assert_cmpint (test_exit_code (gpu_waiter), ==, 0);
}

/* A GPU request waiting within its patience names no device yet (its
 * entry says {"count": N}): its amount in the queue view is N all the
 * same, in status --json ("amount", the resource's "waiting") and in
 * the OpenMetrics sums, as a counter's is (issue 42, point 5: a
 * type-neutral amount). */
static void
test_status_gpu_waiter_amount (Fixture *f, gconstpointer data)
{
  const char *env[] = { "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *gpu = g_strdup_printf ("[resource g]\ntype=gpu\npath=%s/g\ndevices=0;1\n", f->tmp);
  g_autofree char *user_waiting = g_strdup_printf ("\ntessera_user_waiting{resource=\"g\",user=\"%s\"} 1\n",
                                                   g_get_user_name ());
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;
  g_autofree char *metrics = NULL;
  JsonObject *g, *w;
  JsonArray *waiters;
  int status;

  test_write_file (f->config, gpu);
  holder = hold_need (f, NULL, "g=2");
  waiter = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "g=1", "--name", "small", "--", "true", NULL);
  if ((line = read_error_line (waiter, 60)) == NULL)
    g_error ("the waiter said nothing within 60 s");
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for g"));

  g = status_of_r (f, &root);
  g_assert_cmpstr (json_object_get_string_member (g, "name"), ==, "g");
  g_assert_cmpint (json_object_get_int_member (g, "capacity"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (g, "held"), ==, 2);
  waiters = json_object_get_array_member (g, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (w, "wants"), "count"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (w, "amount"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (g, "waiting"), ==, 1);

  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_test_message ("%s", metrics);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (metrics, "\ntessera_waiters{resource=\"g\"} 1\n"));
  g_assert_nonnull (strstr (metrics, "\ntessera_waiting{resource=\"g\"} 1\n"));
  g_assert_nonnull (strstr (metrics, user_waiting));

  test_let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* A waiter within its patience of a type that reserves nothing (no
 * get_wait_information: the example "slots" plugin) is shown all the
 * same: it reserves nothing, but it waits (issue 42, point 4). */
static void
test_status_patient_waiter_no_reservation (Fixture *f, gconstpointer data)
{
  g_autofree char *built = g_test_build_filename (G_TEST_BUILT, "example-plugin", NULL);
  g_autofree char *path = g_strconcat (built, ":", g_getenv ("TESSERA_PLUGIN_PATH"), NULL);
  const char *env[] = { "TESSERA_PLUGIN_PATH", path, NULL };
  const char *waiter_env[] = { "TESSERA_PLUGIN_PATH", path, "TESSERA_PATIENCE", "3600", NULL };
  g_autofree char *content = g_strdup_printf ("[resource s]\ntype=slots\npath=%s/s\nslots=1\n", f->tmp);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *ready = NULL, *line = NULL, *out = NULL;
  JsonObject *resource, *w;
  JsonArray *waiters;
  int status;

  test_write_file (f->config, content);
  holder = hold_need (f, env, "s");
  waiter = tessera_spawn (f, waiter_env, G_SUBPROCESS_FLAGS_STDERR_PIPE,
                          "run", "--need", "s", "--name", "builder", "--", "true", NULL);
  line = read_error_line (waiter, 60);
  g_assert_nonnull (line);
  g_assert_true (g_str_has_prefix (line, "tessera: waiting for s"));

  {
    g_autoptr(GSubprocess) show = tessera_spawn (f, env, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "status", "--json", NULL);
    g_autoptr(GError) error = NULL;

    g_subprocess_communicate_utf8 (show, NULL, NULL, &out, NULL, &error);
    g_assert_no_error (error);
    status = test_exit_code (show);
  }
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  resource = test_status_first_resource (root);
  waiters = json_object_get_array_member (resource, "waiters");
  g_assert_cmpuint (json_array_get_length (waiters), ==, 1);
  w = json_array_get_object_element (waiters, 0);
  g_assert_true (g_str_has_prefix (json_object_get_string_member (w, "job"), "builder@"));
  g_assert_cmpstr (json_object_get_string_member (w, "state"), ==, "waiting");
  test_let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* A holder whose process is dead while its lock file stays is no free
 * capacity in status: its share is "reclaimable" (the next run takes it
 * back), apart from what is free and from what live holders hold (issue
 * 42, point 4). */
static void
test_status_reclaimable (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) alive = NULL;
  g_autoptr(GSubprocess) killed = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  JsonObject *r;
  JsonArray *holders;
  GPid command = 0;
  gboolean seen_dead = FALSE;
  int status;

  set_total (f, 3);
  alive = hold_r_named (f, "alive", "1", NULL);
  killed = hold_r_named (f, "killed", "2", &command);
  g_subprocess_force_exit (killed);
  g_assert_cmpint (test_exit_code (killed), ==, 128 + SIGKILL);
  g_assert_cmpint (kill (command, SIGKILL), ==, 0);
  wait_until_dead (command);
  g_assert_cmpuint (test_count_entries (jobs), ==, 2);

  r = status_of_r (f, &root);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 1);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 2);
  holders = json_object_get_array_member (r, "holders");
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);

      if (g_str_equal (json_object_get_string_member (h, "state"), "dead"))
        {
          g_assert_true (g_str_has_prefix (json_object_get_string_member (h, "job"), "killed@"));
          g_assert_cmpint (json_object_get_int_member (h, "amount"), ==, 2);
          seen_dead = TRUE;
        }
    }
  g_assert_true (seen_dead);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (text, "r (countertoken): 0 of 3 free, 1 held, 2 reclaimable\n"));
  test_let_go (alive);
}

/* A holder whose pid says nothing here (a third host's) and whose job
 * lock, seen here, is free is dead by the verdict on a holder: status
 * shows it "dead" and its share reclaimable, as a run would take it
 * back, not "remote" and held (issue 38). */
static void
test_status_verdict_dead (Fixture *f, gconstpointer data)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "far@1.json", NULL);
  g_autofree char *job_dir = g_build_filename (f->tmp, "far-job", NULL);
  JsonObject *r, *h;
  int status;

  set_total (f, 3);
  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  g_assert_cmpint (status, ==, 0);
  test_write_third_host_holder (lock_file, job_dir, "task", 2);

  r = status_of_r (f, &root);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 1);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "state"), ==, "dead");
  g_assert_cmpint (json_object_get_int_member_with_default (r, "held", -1), ==, 0);
  g_assert_cmpint (json_object_get_int_member_with_default (r, "reclaimable", -1), ==, 2);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));   /* status removes nothing */
}

/* `status --format=openmetrics`, read by Prometheus's own parser
 * (python3-prometheus-client): capacity, free, held, reclaimable and
 * waiting per resource, held and waiting per user; `--format=json` is
 * --json and a format it does not know is a usage error (issue 42,
 * point 5). */
static void
test_status_openmetrics (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GSubprocess) waiter = NULL;
  g_autoptr(JsonNode) json = NULL;
  g_autofree char *metrics = NULL;
  g_autofree char *parsed = NULL;
  g_autofree char *as_json = NULL;
  g_autofree char *bad = NULL;
  g_autofree char *user_held = NULL;
  g_autofree char *user_waiting = NULL;
  int status;

  set_total (f, 3);
  holder = hold_r_named (f, "big", "2", NULL);
  waiter = queue_for_r (f, "large", "2");

  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_suffix (metrics, "# EOF\n"));
  g_assert_nonnull (strstr (metrics, "# TYPE tessera_capacity gauge\n"));
  g_assert_nonnull (strstr (metrics, "# HELP tessera_capacity "));
  parsed = test_parse_openmetrics (metrics);
  g_test_message ("%s", parsed);
  g_assert_nonnull (strstr (parsed, "gauge tessera_capacity tessera_capacity {resource=r} 3\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_free tessera_free {resource=r} 1\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_held tessera_held {resource=r} 2\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_reclaimable tessera_reclaimable {resource=r} 0\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_waiting tessera_waiting {resource=r} 2\n"));
  g_assert_nonnull (strstr (parsed, "gauge tessera_waiters tessera_waiters {resource=r} 1\n"));
  user_held = g_strdup_printf ("gauge tessera_user_held tessera_user_held {resource=r,user=%s} 2\n", g_get_user_name ());
  g_assert_nonnull (strstr (parsed, user_held));
  user_waiting = g_strdup_printf ("gauge tessera_user_waiting tessera_user_waiting {resource=r,user=%s} 2\n",
                                  g_get_user_name ());
  g_assert_nonnull (strstr (parsed, user_waiting));

  /* An entry asking for more than there is in all (a member may plant
   * one), of the waiter's live process: never served, so out of
   * tessera_waiting, and out of the user's sum too. */
  {
    g_autofree char *queue = g_build_filename (f->tmp, "r", "queue", NULL);
    g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
    g_autofree char *entry = NULL;
    g_autofree char *text = NULL;
    g_autofree char *planted_text = NULL;
    g_autofree char *planted = g_build_filename (queue, "planted@1.json", NULL);
    g_autofree char *again = NULL;
    const char *name;

    while (dir != NULL && entry == NULL && (name = g_dir_read_name (dir)) != NULL)
      if (g_str_has_suffix (name, ".json"))
        entry = g_build_filename (queue, name, NULL);
    g_assert_nonnull (entry);
    g_assert_true (g_file_get_contents (entry, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "\"count\":2"));
    planted_text = test_substitute (text, "\"count\":2", "\"count\":100");
    test_write_file (planted, planted_text);
    again = run_capture (f, &status, "status", "--format=openmetrics", NULL);
    g_test_message ("%s", again);
    g_assert_cmpint (status, ==, 0);
    g_assert_nonnull (strstr (again, "\ntessera_waiting{resource=\"r\"} 2\n"));
    g_free (user_waiting);
    user_waiting = g_strdup_printf ("\ntessera_user_waiting{resource=\"r\",user=\"%s\"} 2\n", g_get_user_name ());
    g_assert_nonnull (strstr (again, user_waiting));
    g_assert_cmpint (g_unlink (planted), ==, 0);
  }

  as_json = run_capture (f, &status, "status", "--format=json", NULL);
  g_assert_cmpint (status, ==, 0);
  json = json_from_string (as_json, NULL);
  g_assert_nonnull (json);
  g_assert_true (json_object_has_member (json_node_get_object (json), "resources"));
  bad = run_capture (f, &status, "status", "--format=yaml", NULL);
  g_assert_cmpint (status, ==, 64);
  g_assert_nonnull (strstr (bad, "yaml"));

  test_let_go (holder);
  g_assert_cmpint (test_exit_code (waiter), ==, 0);
}

/* Holders whose lock files (a co-user may write them) say a count of
 * 2^63-1 each: the per-user sum of OpenMetrics and the resource's held
 * units stop at the largest count (saturate) instead of wrapping round
 * to a negative number. */
static void
test_status_openmetrics_saturates (Fixture *f, gconstpointer data)
{
  g_autofree char *user_held = g_strdup_printf ("\ntessera_user_held{resource=\"r\",user=\"%s\"} %" G_GINT64_FORMAT
                                                "\n", g_get_user_name (), G_MAXINT64);
  g_autofree char *held = g_strdup_printf ("\ntessera_held{resource=\"r\"} %" G_GINT64_FORMAT "\n", G_MAXINT64);
  g_autofree char *metrics = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/r/jobs/huge%d@1.json", f->tmp, i);
      g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/huge%d\", \"information\": {\"count\": %"
                                               G_GINT64_FORMAT "}}", f->tmp, i, G_MAXINT64);

      test_write_file (path, text);
    }
  metrics = run_capture (f, &status, "status", "--format=openmetrics", NULL);
  g_test_message ("%s", metrics);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (metrics, user_held));
  g_assert_nonnull (strstr (metrics, held));
}

/* Reads one line of `watch --json` and parses it: r's object. */
static JsonObject *
watched_r (GSubprocess *watch, JsonNode **root)
{
  g_autofree char *line = test_read_line (watch, 60);

  g_assert_nonnull (line);
  g_assert_null (strchr (line, '\n'));
  *root = json_from_string (line, NULL);
  g_assert_nonnull (*root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*root));
  g_assert_nonnull (json_object_get_string_member (json_node_get_object (*root), "time"));
  return test_status_only_resource (*root);
}

/* `tessera watch --json`: one JSON document per line, one line per
 * change, as status --json's (issue 42, point 5). */
static void
test_watch_json (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) watch =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "watch", "--json", NULL);
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(JsonNode) first = NULL;
  g_autoptr(JsonNode) second = NULL;
  g_autoptr(JsonNode) third = NULL;
  JsonObject *r;

  r = watched_r (watch, &first);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 0);
  holder = hold_r (f);
  r = watched_r (watch, &second);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (r, "holders")), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (json_object_get_array_member (r, "holders"), 0),
                                               "amount"), ==, 1);
  test_let_go (holder);
  r = watched_r (watch, &third);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 1);
  g_subprocess_force_exit (watch);
  g_assert_cmpint (test_exit_code (watch), ==, 128 + SIGKILL);
}

/* ---------------------------------------------------------------------- */
/* Configuration errors: exit 78 and one message naming file, group, key */

/* `tessera watch` shows the resources again when one changes. */
static void
test_watch (Fixture *f, gconstpointer data)
{
  /* A zone far from UTC: a local time would show. */
  const char *no_poll[] = { "TESSERA_POLL_INTERVAL", "1000", "TZ", "ZZZ-5:30", NULL };
  g_autoptr(GSubprocess) watch = tessera_spawn (f, no_poll, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "watch", NULL);
  gboolean saw_three = FALSE;
  int status;

  g_autofree char *stamp = test_read_line (watch, 60);
  g_autoptr(GRegex) utc = g_regex_new ("^— [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z —$", 0, 0, NULL);

  /* The header's time is UTC, in ISO 8601, as a holder's "since". */
  g_assert_nonnull (stamp);
  g_test_message ("%s", stamp);
  g_assert_true (g_regex_match (utc, stamp, 0, NULL));
  for (int i = 0; i < 2; i++)
    g_free (test_read_line (watch, 60));   /* the rest of the first view: resource, no holder */
  g_free (run_capture (f, &status, "set", "r", "total=3", NULL));
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 12 && !saw_three; i++)
    {
      g_autofree char *line = test_read_line (watch, 4);
      saw_three = line != NULL && strstr (line, "of 3 free") != NULL;
    }
  g_subprocess_force_exit (watch);
  g_assert_true (saw_three);
}

/* ---------------------------------------------------------------------- */
/* Configuration and settings */

/* A mutex held shared says by how many, not "0 of 1 free"; held
 * exclusively, it is 0 of 1 free. */
static void
test_status_mutex_shared (Fixture *f, gconstpointer data)
{
  g_autofree char *content = g_strdup_printf ("[resource m]\ntype=mutex\npath=%s/m\n", f->tmp);
  g_autoptr(GSubprocess) first = NULL, second = NULL, exclusive = NULL;
  g_autofree char *ready1 = NULL, *ready2 = NULL, *ready3 = NULL;
  g_autofree char *one = NULL, *two = NULL, *held = NULL, *json = NULL;
  int status;

  test_write_file (f->config, content);
  first = hold_need (f, NULL, "m=shared");
  one = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", one);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (one, "m (mutex): shared by 1\n"));

  second = hold_need (f, NULL, "m=shared");
  two = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", two);
  g_assert_true (g_str_has_prefix (two, "m (mutex): shared by 2\n"));
  json = run_capture (f, &status, "status", "--json", NULL);
  g_assert_nonnull (strstr (json, "\"usage\" : \"shared by 2\""));
  test_let_go (first);
  test_let_go (second);

  exclusive = hold_need (f, NULL, "m");
  held = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", held);
  g_assert_true (g_str_has_prefix (held, "m (mutex): 0 of 1 free\n"));
  test_let_go (exclusive);
}

/* A holder counted from a lock file that cannot be read in full has no
 * known time: "since ?" (JSON null), never 1970. */
static void
test_status_unknown_since (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = g_build_filename (f->tmp, "r", "jobs", "neg@1.json", NULL);
  g_autofree char *out = NULL;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  test_write_file (bad, "{\"job_uri\": \"/x/neg\", \"information\": {\"count\": -1}, "
                        "\"process\": {\"type\": \"local\", \"pid\": 1, \"start_time\": 1}}");
  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "since ?"));
  g_assert_null (strstr (out, "1970"));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", "--json", NULL);
  g_assert_nonnull (strstr (out, "\"since\" : null"));
}

/* Such a lock file cannot be read: `status`, `run` and `clean` neither
 * crash nor count it for the 1 it seems to hold: it holds everything. */
static void
test_not_strict_json_lock_file (Fixture *f, gconstpointer data)
{
  g_autofree char *evil = g_build_filename (f->tmp, "r", "jobs", "evil@1.json", NULL);
  g_autoptr(GPtrArray) texts = not_strict_lock_files ();
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* creates the folder */
  g_free (run_capture (f, &status, "set", "r", "total=2", NULL));
  g_assert_cmpint (status, ==, 0);
  for (guint i = 0; i < texts->len; i++)
    {
      g_autofree char *shown = g_strndup (g_ptr_array_index (texts, i), 64);
      g_autofree char *out = NULL, *ran = NULL, *cleaned = NULL;

      g_test_message ("%s", shown);
      test_write_file (evil, g_ptr_array_index (texts, i));
      out = run_capture (f, &status, "status", NULL);
      g_test_message ("%s", out);
      g_assert_cmpint (status, ==, 0);
      g_assert_nonnull (strstr (out, "r (countertoken): 0 of 2 free"));
      ran = run_capture (f, &status, "run", "--no-wait", "--need", "r=1", "--", "true", NULL);
      g_assert_cmpint (status, ==, 75);
      cleaned = run_capture (f, &status, "clean", NULL);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_test (evil, G_FILE_TEST_EXISTS));
      g_assert_cmpint (g_unlink (evil), ==, 0);
    }
}

/* `tessera watch` is quiet while nothing changes (a holder that lives on,
 * polls that find nothing new), and shows a change. */
static void
test_watch_quiet_when_idle (Fixture *f, gconstpointer data)
{
  g_autoptr(GSubprocess) holder = hold_r (f);
  g_autoptr(GSubprocess) watch = NULL;
  g_autofree char *idle = NULL;
  gboolean saw_three = FALSE;
  int status;

  watch = tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE, "watch", NULL);
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *line = test_read_line (watch, 60);   /* first view: stamp, resource, the holder */
      g_assert_nonnull (line);
    }
  /* Nothing changes: nothing more is printed. */
  idle = test_read_line (watch, 2.0);
  g_assert_null (idle);
  g_free (run_capture (f, &status, "set", "r", "total=3", NULL));
  g_assert_cmpint (status, ==, 0);
  for (int i = 0; i < 3 && !saw_three; i++)
    {
      g_autofree char *line = test_read_line (watch, 30);
      saw_three = line != NULL && strstr (line, "of 3 free") != NULL;
    }
  g_subprocess_force_exit (watch);
  g_assert_true (saw_three);
  test_let_go (holder);
}

/* ---------------------------------------------------------------------- */
/* All at once */

/* Names from the folder reach the output escaped: a lock file named with
 * a terminal escape and a byte that is not UTF-8 neither clears the
 * screen of whoever runs status nor makes status --json invalid. (In the
 * file, the escape is written as JSON writes it: a raw one in a string is
 * not JSON.) */
static void
test_hostile_names_escaped (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *path = g_strdup_printf ("%s/evil\033[2J\377@1.json", jobs);
  g_autofree char *json = g_strdup_printf ("{\"job_uri\": \"%s/evil\\u001b[2J\", \"information\": {\"count\": 1}, "
                                           "\"process\": {\"type\": \"local\", \"pid\": %d}}",
                                           f->tmp, (int) getpid ());
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *r, *h;
  int status;

  g_free (run_capture (f, &status, "status", NULL));   /* makes the folder */
  test_write_file (path, json);
  text = run_capture (f, &status, "status", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strchr (text, '\033'));
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_nonnull (strstr (text, "evil\\x1B[2J\\xFF@1"));

  out = run_capture (f, &status, "status", "--json", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  root = json_from_string (out, NULL);
  g_assert_nonnull (root);
  r = test_status_first_resource (root);
  h = json_array_get_object_element (json_object_get_array_member (r, "holders"), 0);
  g_assert_cmpstr (json_object_get_string_member (h, "job"), ==, "evil\033[2J\\xFF@1");
}

/* `tessera status --json` of r (its output alone: warnings go to the
 * error output), parsed. */
static JsonNode *
status_json_of (Fixture *f)
{
  g_autoptr(GSubprocess) process =
    tessera_spawn (f, NULL, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, "status", "--json", NULL);

  return test_output_json (process, 0);
}

/* What cannot be read holds the whole resource, and says why: a FIFO
 * named like a lock file, and the lock file of a live holder whose count
 * json-glib reads but cannot represent. `status` shows both with their
 * reason (text and JSON), a run is refused, `clean --min-age 0` keeps
 * them; `clean --force` removes them without reading them. */
static void
test_unreadable_holders (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *fifo = g_build_filename (jobs, "fifo@1.json", NULL);
  g_autofree char *big = g_build_filename (jobs, "big@1.json", NULL);
  g_autoptr(TesseraProcess) self = tessera_process_new_self ();
  g_autoptr(JsonNode) spec = tessera_process_to_json (self);
  g_autofree char *spec_text = json_to_string (spec, FALSE);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/big\", \"information\": {\"count\": 1e308}, "
                                           "\"process\": %s}", f->tmp, spec_text);
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  JsonObject *r;
  JsonArray *holders;
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (mkfifo (fifo, 0644), ==, 0);
  test_write_file (big, text);

  root = status_json_of (f);
  r = test_status_first_resource (root);
  g_assert_cmpint (json_object_get_int_member (r, "free"), ==, 0);
  holders = json_object_get_array_member (r, "holders");
  g_assert_cmpuint (json_array_get_length (holders), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);
      const char *job = json_object_get_string_member (h, "job");

      g_test_message ("%s: %s", job, json_object_get_string_member_with_default (h, "reason", "(none)"));
      g_assert_true (g_str_equal (job, "fifo@1") || g_str_equal (job, "big@1"));
      g_assert_nonnull (json_object_get_string_member_with_default (h, "reason", NULL));
      /* Never judged dead (its numbers are not trusted: unknown). */
      g_assert_cmpstr (json_object_get_string_member (h, "state"), !=, "dead");
    }

  out = run_capture (f, &status, "status", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "r (countertoken): 0 of 1 free"));
  g_assert_nonnull (strstr (out, "  fifo@1  "));
  g_assert_nonnull (strstr (out, "  big@1  "));
  /* Each with its reason on the line below. */
  {
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
    guint reasons = 0;

    for (guint i = 1; lines[i] != NULL; i++)
      if (g_str_has_prefix (lines[i], "    (") &&
          (g_str_has_prefix (lines[i - 1], "  fifo@1  ") || g_str_has_prefix (lines[i - 1], "  big@1  ")))
        reasons++;
    g_assert_cmpuint (reasons, ==, 2);
  }

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "run", "--no-wait", "--need", "r", "--", "true", NULL);
  g_assert_cmpint (status, ==, 75);
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--min-age", "0", NULL);
  g_test_message ("%s", out);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (fifo, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (big, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "clean", "--force", "r", "fifo@1", "big@1", NULL);
  g_assert_cmpint (status, ==, 0);
  /* After the warnings of its opening. */
  g_test_message ("%s", out);
  g_assert_true (g_str_has_suffix (out, "\nr: removed fifo@1 (forced)\nr: removed big@1 (forced)\n"));
  g_assert_false (g_file_test (fifo, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (big, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  out = run_capture (f, &status, "status", NULL);
  g_assert_nonnull (strstr (out, "r (countertoken): 1 of 1 free"));
}

/* A jobs/ that is a link or a file cannot be read, so holders may hold
 * what looks free: `status` says so rather than "2 of 2 free" (as `run`
 * refuses to decide there), exits non-zero, and its JSON still lists the
 * resource, its free units unknown (-1) and why in "error". */
static void
test_status_unreadable_jobs (Fixture *f, gconstpointer data)
{
  g_autofree char *jobs = g_build_filename (f->tmp, "r", "jobs", NULL);
  g_autofree char *moved = g_build_filename (f->tmp, "r", "jobs.real", NULL);
  int status;

  g_free (run_capture (f, &status, "run", "--need", "r", "--", "true", NULL));   /* sets the pool up */
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpint (g_rename (jobs, moved), ==, 0);
  g_assert_cmpint (symlink (moved, jobs), ==, 0);
  for (int round = 0; round < 2; round++)
    {
      g_autofree char *out = run_capture (f, &status, "status", NULL);

      g_test_message ("%s", out);
      g_assert_cmpint (status, !=, 0);
      g_assert_null (strstr (out, "free"));
      g_assert_nonnull (strstr (out, "r (countertoken): cannot be read: "));
      assert_json_lists_unreadable (f, status);
      /* The same for a file in its place. */
      g_assert_cmpint (g_unlink (jobs), ==, 0);
      test_write_file (jobs, "not a folder\n");
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("/tool/status/hostile-names-escaped", test_hostile_names_escaped);
  ADD ("/tool/status/json", test_status_json);
  ADD ("/tool/status/user-is-file-owner", test_status_user_is_file_owner);
  ADD ("/tool/status/queue", test_status_queue);
  ADD ("/tool/status/queue-within-patience", test_status_patient_waiter);
  ADD ("/tool/status/queue-within-patience-wants", test_status_patient_waiter_wants);
  ADD ("/tool/status/queue-within-patience-no-reservation", test_status_patient_waiter_no_reservation);
  ADD ("/tool/status/queue-within-patience-gpu-amount", test_status_gpu_waiter_amount);
  ADD ("/tool/status/dead-holder-reclaimable", test_status_reclaimable);
  ADD ("/tool/status/verdict-dead", test_status_verdict_dead);
  ADD ("/tool/status/openmetrics", test_status_openmetrics);
  ADD ("/tool/status/openmetrics-saturates", test_status_openmetrics_saturates);
  ADD ("/tool/watch/json-lines", test_watch_json);
  ADD ("/tool/status/unreadable-jobs-folder", test_status_unreadable_jobs);
  ADD ("/tool/status/unknown-since", test_status_unknown_since);
  ADD ("/tool/status/unreadable-holders-hold-all", test_unreadable_holders);
  ADD ("/tool/watch/updates-on-change", test_watch);
  ADD ("/tool/watch/quiet-when-idle", test_watch_quiet_when_idle);
  ADD ("/tool/status/not-strict-json-lock-file-holds-everything", test_not_strict_json_lock_file);
  ADD ("/tool/status/mutex-shared-by", test_status_mutex_shared);
  return g_test_run ();
}
