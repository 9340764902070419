/* test-hosts-listing.c: the hosts a pool knows (`tessera hosts`) and
 * what a retired host leaves behind: `clean --host`, its heartbeats and
 * their temporary files.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "test-utils.h"
#include "test-hosts-common.h"

#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* clean --host: a retired host leaves nothing behind */

/* Writes hosts/@id@suffix in the pool with @content. */
static void
write_in_hosts (Fixture *f, const char *id, const char *suffix, const char *content)
{
  g_autofree char *hosts = g_build_filename (f->tmp, "r", "hosts", NULL);
  g_autofree char *name = g_strconcat (id, suffix, NULL);
  g_autofree char *path = g_build_filename (hosts, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (hosts, 0777), ==, 0);
  test_write_file (path, content);
}

static gboolean
in_hosts (Fixture *f, const char *id, const char *suffix)
{
  g_autofree char *name = g_strconcat (id, suffix, NULL);
  g_autofree char *path = g_build_filename (f->tmp, "r", "hosts", name, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* A host's heartbeat as its renewer writes it. */
static char *
heartbeat_of (const char *id, const char *host, const char *boot_id, const char *renewal)
{
  return g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"%s\", \"boot_id\": \"%s\", "
                          "\"lease\": 30, \"renewal\": \"%s\"}", id, id, host, boot_id, renewal);
}

/* `tessera hosts` lists each pool's hosts, as sinfo lists nodes: host
 * name and id, the users that hold there, whether its locks cross, its
 * last heartbeat and its Tessera version and protocol; a mistyped
 * `clean --host` names the hosts it knows. */
static void
test_hosts_listing (Fixture *f, gconstpointer data)
{
  const char *other = "0123456789abcdef0123456789abcdef";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"other-node\", "
                                           "\"boot_id\": \"00000000-0000-4000-8000-000000000000\", \"lease\": 30, "
                                           "\"locks_cross\": true, \"version\": \"0.0.9\", \"protocol\": 2, "
                                           "\"renewal\": \"a\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) hosts = NULL;
  g_autoptr(GSubprocess) text = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  JsonArray *list;
  gboolean seen_other = FALSE, seen_here = FALSE;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, other, ".0.lease", beat);
  write_in_hosts (f, other, ".0.host", beat);

  hosts = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", "--json", NULL);
  g_assert_no_error (error);
  root = test_output_json (hosts, 0);
  list = json_object_get_array_member (test_status_first_resource (root), "hosts");
  g_assert_nonnull (list);
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *h = json_array_get_object_element (list, i);
      const char *id = json_object_get_string_member (h, "host_id");
      JsonArray *users = json_object_get_array_member (h, "uids");

      g_assert_nonnull (users);
      g_assert_cmpint (json_array_get_int_element (users, 0), ==, 0);
      g_assert_true (json_object_get_boolean_member (h, "locks_cross"));
      g_assert_true (json_object_get_double_member (h, "heartbeat_age") >= 0);
      if (g_str_equal (id, other))
        {
          seen_other = TRUE;
          g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, "other-node");
          g_assert_cmpstr (json_object_get_string_member (h, "version"), ==, "0.0.9");
          g_assert_cmpint (json_object_get_int_member (h, "protocol"), ==, 2);
        }
      else
        {
          seen_here = TRUE;
          g_assert_cmpstr (json_object_get_string_member (h, "host"), ==, g_get_host_name ());
          g_assert_nonnull (json_object_get_string_member (h, "version"));
          g_assert_cmpint (json_object_get_int_member (h, "protocol"), >, 0);
        }
    }
  g_assert_true (seen_other);
  g_assert_true (seen_here);

  g_clear_pointer (&out, g_free);
  text = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (text, NULL, NULL, &out, NULL, &error));
  g_assert_cmpint (test_exit_code (text), ==, 0);
  g_assert_nonnull (strstr (out, "other-node"));
  g_assert_nonnull (strstr (out, "0.0.9"));

  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, "clean", "--host", "other-nod", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (clean, NULL, NULL, NULL, &err, &error));
  g_assert_cmpint (test_exit_code (clean), ==, 64);
  g_assert_nonnull (strstr (err, "other-node"));
}

/* `tessera hosts` shows each host's build beside its version, as
 * `tessera --version` says it: this host's mark records it; a mark of an
 * older Tessera, without one, still reads (build null, "?"). */
static void
test_hosts_build (Fixture *f, gconstpointer data)
{
  const char *old = "0123456789abcdef0123456789abcdef";
  const char *other = "fedcba9876543210fedcba9876543210";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *old_beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": \"old-node\", "
                                               "\"boot_id\": \"00000000-0000-4000-8000-000000000000\", \"lease\": 30, "
                                               "\"locks_cross\": true, \"version\": \"0.0.9\", \"protocol\": 2, "
                                               "\"renewal\": \"a\"}", old, old);
  g_autofree char *other_beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": "
                                                 "\"new-node\", \"boot_id\": \"00000000-0000-4000-8000-000000000001\", "
                                                 "\"lease\": 30, \"locks_cross\": true, \"version\": \"0.1.0\", "
                                                 "\"build\": \"v0.1.0-7-gfeedbee\", \"protocol\": 2, "
                                                 "\"renewal\": \"b\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) version = NULL;
  g_autoptr(GSubprocess) hosts = NULL;
  g_autoptr(GSubprocess) text = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *version_out = NULL, *text_out = NULL, *build = NULL, *build_text = NULL;
  const char *at;
  JsonArray *list;
  guint seen = 0;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, old, ".0.host", old_beat);
  write_in_hosts (f, other, ".0.host", other_beat);

  /* "tessera 0.1.0 (pool protocol 2, build BUILD)" */
  version = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "--version", NULL);
  g_assert_no_error (error);
  version_out = test_output_of (version, 0);
  if ((at = strstr (version_out, "build ")) == NULL)
    g_error ("no build in “%s”", version_out);
  build = g_strndup (at + strlen ("build "), strcspn (at + strlen ("build "), ")\n"));
  g_test_message ("this build: %s", build);

  hosts = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", "--json", NULL);
  g_assert_no_error (error);
  root = test_output_json (hosts, 0);
  list = json_object_get_array_member (test_status_first_resource (root), "hosts");
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      JsonObject *h = json_array_get_object_element (list, i);
      const char *id = json_object_get_string_member (h, "host_id");

      g_assert_true (json_object_has_member (h, "build"));
      if (g_str_equal (id, old))
        g_assert_true (json_object_get_null_member (h, "build"));
      else if (g_str_equal (id, other))
        g_assert_cmpstr (json_object_get_string_member (h, "build"), ==, "v0.1.0-7-gfeedbee");
      else
        g_assert_cmpstr (json_object_get_string_member (h, "build"), ==, build);
      seen++;
    }
  g_assert_cmpuint (seen, ==, 3);

  text = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "hosts", NULL);
  g_assert_no_error (error);
  text_out = test_output_of (text, 0);
  build_text = g_strdup_printf ("build %s", build);
  g_assert_nonnull (strstr (text_out, build_text));
  g_assert_nonnull (strstr (text_out, "build v0.1.0-7-gfeedbee"));
  g_assert_nonnull (strstr (text_out, "tessera 0.0.9 (build ?,"));
}

/* A host name may hold ", ": `clean --host` of a part of it is no known
 * host, and the hint names the hosts whole. */
static void
test_clean_host_comma_name (Fixture *f, gconstpointer data)
{
  const char *other = "0123456789abcdef0123456789abcdef";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *beat = g_strdup_printf ("{\"host_id\": \"%s\", \"machine_id\": \"%s\", \"host\": "
                                           "\"node-1, node-2\", \"boot_id\": \"00000000-0000-4000-8000-000000000000\", "
                                           "\"lease\": 30, \"locks_cross\": true, \"renewal\": \"a\"}", other, other);
  g_autoptr(GSubprocess) run = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  test_write_file (f->config, config);
  run = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_NONE, &error, "run", "--need", "r=1", "--", "true", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (run), ==, 0);
  write_in_hosts (f, other, ".0.host", beat);

  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, "clean", "--host", "node-1", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (clean, NULL, NULL, NULL, &err, &error));
  g_test_message ("%s", err);
  g_assert_cmpint (test_exit_code (clean), ==, 64);
  g_assert_nonnull (strstr (err, "no holder and no mark of a host node-1 in these pools"));
  g_assert_nonnull (strstr (err, "node-1, node-2"));
}

/* `tessera clean --host NAME --yes` removes the retired host's holdings,
 * its heartbeats and marks (every user's, and those of an older Tessera),
 * its job folders in the pool's runs/ and the temporary files a renewer
 * killed half-way left;
 * another host's heartbeat and its fresh temporary file stay. */
static void
test_clean_host_removes_heartbeat (Fixture *f, gconstpointer data)
{
  const char *retired = "0123456789abcdef0123456789abcdef";
  const char *live = "fedcba9876543210fedcba9876543210";
  const char *retired_boot = "00000000-0000-4000-8000-000000000000";
  g_autofree char *config = g_strdup_printf ("[resource r]\ntype=countertoken\npath=%s/r\ntotal=1\nhost-lease=30\n",
                                             f->tmp);
  g_autofree char *lock_file = g_build_filename (f->tmp, "r", "jobs", "gone@id.json", NULL);
  g_autofree char *job_uri = job_uri_for (f, "gone");
  g_autofree char *holder = NULL;
  g_autofree char *retired_beat = heartbeat_of (retired, "retired-node", retired_boot, "a");
  g_autofree char *live_beat = heartbeat_of (live, "live-node", "00000000-0000-4000-8000-000000000001", "b");
  g_autoptr(GSubprocess) status = NULL;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;

  test_write_file (f->config, config);
  status = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "status", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (status), ==, 0);

  holder = g_strdup_printf ("{\"job_uri\": \"%s\", \"information\": {\"count\": 1}, \"process\": "
                            "{\"type\": \"local\", \"pid\": 4242, \"host\": \"retired-node\", \"host_id\": \"%s\", "
                            "\"machine_id\": \"%s\", \"boot_id\": \"%s\"}}",
                            job_uri, retired, retired, retired_boot);
  test_write_file (lock_file, holder);
  write_in_hosts (f, retired, ".lease", retired_beat);
  write_in_hosts (f, retired, ".lease.Ab12Cd", "{\"host_id\": \"");
  write_in_hosts (f, live, ".lease", live_beat);
  write_in_hosts (f, live, ".lease.Zz99Yy", "{");
  /* The marks of a lock-less mount's hosts, which name their host too. */
  write_in_hosts (f, retired, ".host", "{\"host\": \"retired-node\", \"lease\": 0}");
  write_in_hosts (f, live, ".host", "{\"host\": \"live-node\", \"lease\": 0}");
  /* Each user's, as Tessera writes them now (HOSTID.UID.lease and .host). */
  write_in_hosts (f, retired, ".0.lease", retired_beat);
  write_in_hosts (f, retired, ".1000.lease", retired_beat);
  write_in_hosts (f, retired, ".1000.lease.Ef34Gh", "{");
  write_in_hosts (f, retired, ".0.host", "{\"host\": \"retired-node\", \"lease\": 0, \"locks_cross\": true}");
  write_in_hosts (f, live, ".0.lease", live_beat);
  write_in_hosts (f, live, ".0.lease.Yy88Xx", "{");
  write_in_hosts (f, live, ".0.host", "{\"host\": \"live-node\", \"lease\": 0, \"locks_cross\": true}");

  /* Job folders `tessera run` made there (runs/UID/HOST-PID-RANDOM), one
   * of each host, its job lock held for ever by a vanished client. */
  {
    const char *hosts[] = { "retired-node", "live-node" };

    for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
      {
        g_autofree char *job = g_strdup_printf ("%s/r/runs/%u/%s-4242-0000abcd", f->tmp, (guint) getuid (), hosts[i]);
        g_autofree char *file = g_build_filename (job, "task.lock", NULL);

        g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
        test_write_file (file, "");
        g_free (file);
        file = g_build_filename (job, "locks.json", NULL);
        test_write_file (file, "{\"dynamic_locks\": []}");
      }
  }
  clean = spawn_tool (f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "clean", "--host", "retired-node", "--yes",
                      NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (clean), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  {
    g_autofree char *retired_job = g_strdup_printf ("%s/r/runs/%u/retired-node-4242-0000abcd", f->tmp,
                                                    (guint) getuid ());
    g_autofree char *live_job = g_strdup_printf ("%s/r/runs/%u/live-node-4242-0000abcd", f->tmp, (guint) getuid ());

    g_assert_false (g_file_test (retired_job, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (live_job, G_FILE_TEST_IS_DIR));
  }
  g_assert_false (in_hosts (f, retired, ".lease"));
  g_assert_false (in_hosts (f, retired, ".lease.Ab12Cd"));
  g_assert_true (in_hosts (f, live, ".lease"));
  g_assert_true (in_hosts (f, live, ".lease.Zz99Yy"));
  g_assert_false (in_hosts (f, retired, ".host"));
  g_assert_true (in_hosts (f, live, ".host"));
  g_assert_false (in_hosts (f, retired, ".0.lease"));
  g_assert_false (in_hosts (f, retired, ".1000.lease"));
  g_assert_false (in_hosts (f, retired, ".1000.lease.Ef34Gh"));
  g_assert_false (in_hosts (f, retired, ".0.host"));
  g_assert_true (in_hosts (f, live, ".0.lease"));
  g_assert_true (in_hosts (f, live, ".0.lease.Yy88Xx"));
  g_assert_true (in_hosts (f, live, ".0.host"));
}

/* ---------------------------------------------------------------------- */
/* Temporary files in hosts/: a renewer killed between writing its
 * heartbeat's temporary file (HOSTID.lease.XXXXXX) and renaming it leaves
 * it there; they must not pile up */

typedef struct
{
  Fixture *f;
  const char *temporary;
  double written;
  double after;   /* when the last clean ended, on the server's clock */
} Cleaning;

static gboolean
cleaned_away (gpointer data)
{
  Cleaning *c = data;
  g_autoptr(GSubprocess) clean = NULL;
  g_autoptr(GError) error = NULL;

  clean = spawn_tool (c->f, FALSE, G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, "clean", NULL);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (clean), ==, 0);
  c->after = server_now (c->f);
  if (!g_file_test (c->temporary, G_FILE_TEST_EXISTS))
    return TRUE;
  g_test_message ("kept at %.2f s", c->after - c->written);
  return FALSE;
}

/* No renewer is left to remove it (every run of its host was killed):
 * `tessera clean` removes a temporary file of hosts/ older than the lease
 * on the file server's clock, whatever its host, and leaves a younger
 * one. */
static void
test_clean_removes_stale_host_temporaries (Fixture *f, gconstpointer data)
{
  const double lease = 4;
  const Place there = { .host = "host-b" };
  g_autofree char *temporary = NULL;
  Cleaning cleaning = { f, NULL, 0, 0 };
  double written;

  use_lease_config (f, 1, lease);
  g_assert_cmpint (try_at (f, &there), ==, 0);   /* makes the pool */
  temporary = kill_renewer_half_way (f, "host-b");
  written = file_time (temporary);
  cleaning.temporary = temporary;
  cleaning.written = written;
  /* Kept while young; gone within the deadline once old. */
  test_wait_until (cleaned_away, &cleaning, 30, "clean kept %s", temporary);
  /* The clean that removed it ended at @after: it was old by then. */
  g_test_message ("clean removed the temporary file at most %.2f s after it was written (lease %g s)",
                  cleaning.after - written, lease);
  g_assert_cmpfloat (cleaning.after - written, >=, lease);
}

int
main (int argc, char **argv)
{
  hosts_test_init (&argc, &argv);
  hosts_test_add ("/hosts/clean-host/removes-heartbeat-and-its-temporary-files", NULL, test_clean_host_removes_heartbeat);
  hosts_test_add ("/hosts/listing/hosts-and-mistyped-clean-host", NULL, test_hosts_listing);
  hosts_test_add ("/hosts/listing/build", NULL, test_hosts_build);
  hosts_test_add ("/hosts/clean-host/name-with-comma", NULL, test_clean_host_comma_name);
  /* Held at a pause point: only in builds that have them. */
  if (TESSERA_PAUSE_POINTS)
    hosts_test_add ("/hosts/clean/removes-stale-temporaries-of-any-host", NULL, test_clean_removes_stale_host_temporaries);
  return g_test_run ();
}
