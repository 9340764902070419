/* test-audit.c: who did what, when (issue 42, point 3). Grants, releases,
 * reclaims of dead holders, `set`, `clean --force` and `clean --host` are logged, one line
 * each with the user, the resource and the amount, to the journal where
 * one runs and otherwise through syslog(3): this test takes /dev/log in
 * a mount namespace of its own (a tmpfs /dev with the devices commands
 * use, the journal's socket hidden) and reads the lines there. Real
 * users and a group, mounts: root, as CI is; without root this fails.
 * After an aborted run, remove what it left: `userdel tauPIDa` (and b),
 * `groupdel tagPID`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Generous: a loaded 2-core machine; a hang is far longer. */
#define BOUND_S 60

static int log_socket = -1;
static char *old_dev;
/* Every datagram read from /dev/log, by a thread that reads them as they
 * come: a sender blocks when a datagram socket's queue is full. */
static GMutex received_lock;
static GCond received_cond;
static GPtrArray *received;

/* A tmpfs on /dev in this process's mount namespace (its children share
 * it), with the devices that commands open bound from the real /dev and a
 * datagram socket at /dev/log that anyone may write to; the journal's
 * socket hidden, so that the syslog path is the one taken. */
static void
private_dev_log (void)
{
  static const char *devices[] = { "null", "zero", "full", "random", "urandom", "tty" };
  static const char *links[][2] = {
    { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" },
  };
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_autoptr(GError) error = NULL;

  old_dev = g_dir_make_tmp ("tessera-audit-dev-XXXXXX", &error);
  g_assert_no_error (error);
  g_assert_cmpint (mount ("/dev", old_dev, "none", MS_BIND | MS_REC, NULL), ==, 0);
  g_assert_cmpint (mount ("tmpfs", "/dev", "tmpfs", 0, "mode=0755"), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (devices); i++)
    {
      g_autofree char *real = g_build_filename (old_dev, devices[i], NULL);
      g_autofree char *here = g_build_filename ("/dev", devices[i], NULL);

      if (!g_file_test (real, G_FILE_TEST_EXISTS))
        continue;
      test_write_file (here, "");
      g_assert_cmpint (mount (real, here, "none", MS_BIND, NULL), ==, 0);
    }
  for (guint i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *here = g_build_filename ("/dev", links[i][0], NULL);
      g_assert_cmpint (symlink (links[i][1], here), ==, 0);
    }
  g_assert_cmpint (g_mkdir ("/dev/shm", 01777), ==, 0);
  g_assert_cmpint (chmod ("/dev/shm", 01777), ==, 0);
  if (g_file_test ("/run/systemd/journal", G_FILE_TEST_IS_DIR))
    g_assert_cmpint (mount ("tmpfs", "/run/systemd/journal", "tmpfs", 0, "mode=0755"), ==, 0);

  log_socket = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (log_socket, >=, 0);
  g_strlcpy (address.sun_path, "/dev/log", sizeof address.sun_path);
  g_assert_cmpint (bind (log_socket, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (chmod ("/dev/log", 0666), ==, 0);
  received = g_ptr_array_new_with_free_func (g_free);
}

static gpointer
read_log (gpointer data)
{
  for (;;)
    {
      char buffer[8192];
      ssize_t n = recv (log_socket, buffer, sizeof buffer - 1, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return NULL;   /* shut down */
      buffer[n] = '\0';
      g_mutex_lock (&received_lock);
      g_ptr_array_add (received, g_strdup (buffer));
      g_cond_broadcast (&received_cond);
      g_mutex_unlock (&received_lock);
    }
}

static gboolean
has_all (const char *line, const char * const *needles)
{
  for (guint i = 0; needles[i] != NULL; i++)
    if (strstr (line, needles[i]) == NULL)
      return FALSE;
  return TRUE;
}

/* The first line received (before or within BOUND_S) holding each of the
 * NULL-terminated strings; fails past it. */
static const char *
wait_for_log (const char *first, ...)
{
  g_autoptr(GPtrArray) needles = g_ptr_array_new ();
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_TIME_SPAN_SECOND;
  guint looked = 0;
  va_list ap;

  va_start (ap, first);
  for (const char *s = first; s != NULL; s = va_arg (ap, const char *))
    g_ptr_array_add (needles, (gpointer) s);
  va_end (ap);
  g_ptr_array_add (needles, NULL);
  g_mutex_lock (&received_lock);
  for (;;)
    {
      for (; looked < received->len; looked++)
        if (has_all (g_ptr_array_index (received, looked), (const char * const *) needles->pdata))
          {
            const char *line = g_ptr_array_index (received, looked);

            g_mutex_unlock (&received_lock);
            g_test_message ("logged: %s", line);
            return line;
          }
      if (!g_cond_wait_until (&received_cond, &received_lock, deadline))
        {
          g_autofree char *wanted = g_strjoinv ("”, “", (char **) needles->pdata);

          for (guint i = 0; i < received->len; i++)
            g_test_message ("logged: %s", (const char *) g_ptr_array_index (received, i));
          g_error ("no line with “%s” was logged in %d s", wanted, BOUND_S);
        }
    }
}

/* Fails if any line received so far holds @needle. */
static void
assert_not_logged (const char *needle)
{
  g_mutex_lock (&received_lock);
  for (guint i = 0; i < received->len; i++)
    if (strstr (g_ptr_array_index (received, i), needle) != NULL)
      g_error ("logged, though it should not be: %s", (const char *) g_ptr_array_index (received, i));
  g_mutex_unlock (&received_lock);
}

typedef struct
{
  TestGroupPool *gp;
  char *state[2];
  char *root_state;
} Fixture;

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->gp = test_group_pool_new ("ta", data);
  for (int i = 0; i < 2; i++)
    {
      f->state[i] = test_user_folder (f->gp->tmp, f->gp->users->users[i]);
      g_assert_cmpint (chmod (f->state[i], 0755), ==, 0);
    }
  f->root_state = g_build_filename (f->gp->tmp, "root-state", NULL);
  g_assert_cmpint (g_mkdir_with_parents (f->root_state, 0700), ==, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  test_group_pool_free (f->gp);
  for (int i = 0; i < 2; i++)
    g_free (f->state[i]);
  g_free (f->root_state);
}

/* `tessera ARGS…` as @user (NULL: root), with SLURM_JOB_ID=@batch when
 * given; each user with its own cache, as at home: her lock file index. */
static GPtrArray *
tessera_argv (Fixture *f, const char *user, const char *batch, va_list ap)
{
  GPtrArray *argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *job_id = batch != NULL ? g_strdup_printf ("SLURM_JOB_ID=%s", batch) : NULL;
  const char *first;

  test_group_pool_argv_tessera (argv, f->gp, f->state, user, TRUE,
                                job_id != NULL ? (const char *[]) { job_id, NULL } : NULL, BOUND_S * 4);
  first = va_arg (ap, const char *);
  test_argv_end_va (argv, first, ap);
  return argv;
}

/* Its output and error output in @out and @err. */
static int
tessera_by (Fixture *f, const char *user, const char *batch, char **out, char **err, ...)
{
  g_autoptr(GPtrArray) argv = NULL;
  va_list ap;

  va_start (ap, err);
  argv = tessera_argv (f, user, batch, ap);
  va_end (ap);
  return test_run_capture_text (argv, out, err);
}

/* A holder of @need that runs `sh -c 'echo held; exec cat'` as @user,
 * until its input is closed. */
static Helper *
hold_as (Fixture *f, const char *user, const char *batch, const char *need, ...)
{
  g_autoptr(GPtrArray) argv = NULL;
  va_list ap;

  va_start (ap, need);
  argv = tessera_argv (f, user, batch, ap);
  va_end (ap);
  g_ptr_array_remove_index (argv, argv->len - 1);
  return test_hold_argv (argv, need, BOUND_S);
}

/* The only live holder of the first resource, in `tessera status --json`
 * (as root; a dead one another member may not remove may stay listed). */
static JsonObject *
only_holder (Fixture *f, JsonNode **root)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *r, *live = NULL;
  JsonArray *holders;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "status", "--json", NULL), ==, 0);
  *root = json_from_string (out, &error);
  g_assert_no_error (error);
  r = test_status_first_resource (*root);
  holders = json_object_get_array_member (r, "holders");
  for (guint i = 0; i < json_array_get_length (holders); i++)
    {
      JsonObject *h = json_array_get_object_element (holders, i);

      if (g_strcmp0 (json_object_get_string_member_with_default (h, "state", ""), "alive") == 0)
        {
          g_assert_null (live);
          live = h;
        }
    }
  g_assert_nonnull (live);
  return live;
}

static GPid
parent_of (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *end;
  int state_parent = 0;
  char state;

  g_assert_true (g_file_get_contents (path, &stat, NULL, NULL));
  if ((end = strrchr (stat, ')')) == NULL)
    g_error ("%s has no ')'", path);
  g_assert_cmpint (sscanf (end + 1, " %c %d", &state, &state_parent), ==, 2);
  return (GPid) state_parent;
}

/* Kills a holder as a crash would: @pid, the holder's process as status
 * names it, and the wrapper it runs under, the wrapper first; then waits
 * for @holder, which fails. Its lock file stays for another to judge. */
static void
kill_holder (Helper *holder, GPid pid)
{
  GPid wrapper = parent_of (pid);

  g_assert_cmpint (kill (wrapper, SIGKILL), ==, 0);
  g_assert_true (kill (pid, SIGKILL) == 0 || errno == ESRCH);
  g_assert_cmpint (helper_wait (holder), !=, 0);
}

/* In a group's pool, audited by default: a grant and its release, the
 * command line and batch job id a holder records (in status --json), the
 * reclaim of a killed holder by another member (whose, by whom, why), a
 * `set` and a `clean --force`, each one line with the user, the resource
 * and the amount; nothing of it on the terminal. */
static void
test_group_pool (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  g_autofree char *user_first = g_strdup_printf ("user=%s ", first);
  g_autofree char *user_member = g_strdup_printf ("user=%s ", member);
  g_autofree char *owner_first = g_strdup_printf ("owner=%s ", first);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *job = NULL, *job_field = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(Helper) holder = NULL;
  JsonObject *h;
  JsonArray *command;
  const char *line;
  GPid pid;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* A grant and its release, syslog's authpriv.info, nothing on the
   * terminal. */
  g_assert_cmpint (tessera_by (f, first, "4242", &out, &err, "run", "--need", "cpu=2", "--", "true", NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_assert_cmpstr (out, ==, "");
  line = wait_for_log ("event=grant ", "resource=cpu ", user_first, "amount={\"count\":2}", "batch_job=4242", NULL);
  g_assert_true (g_str_has_prefix (line, "<86>"));
  g_assert_nonnull (strstr (line, "tessera["));
  wait_for_log ("event=release ", "resource=cpu ", user_first, "amount={\"count\":2}", NULL);

  /* A holder records its command line and batch job id; status shows them. */
  holder = hold_as (f, first, "4243", "cpu=1", NULL);
  wait_for_log ("event=grant ", "resource=cpu ", user_first, "amount={\"count\":1}", "batch_job=4243", NULL);
  h = only_holder (f, &root);
  g_assert_cmpstr (json_object_get_string_member_with_default (h, "batch_job_id", "(none)"), ==, "4243");
  g_assert_true (json_object_has_member (h, "command_line"));
  command = json_object_get_array_member (h, "command_line");
  g_assert_cmpuint (json_array_get_length (command), ==, 3);
  g_assert_cmpstr (json_array_get_string_element (command, 0), ==, "sh");
  g_assert_cmpstr (json_array_get_string_element (command, 2), ==, "echo held; exec cat");
  pid = (GPid) json_object_get_int_member (h, "pid");
  g_clear_pointer (&root, json_node_unref);

  /* Killed (its wrapper first), it is reclaimed by the other member. */
  kill_holder (holder, pid);
  g_clear_pointer (&holder, helper_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, member, NULL, &out, &err, "run", "--no-wait", "--need", "cpu=4", "--", "true", NULL),
                   ==, 0);
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=reclaim ", "resource=cpu ", user_member, owner_first, "amount={\"count\":1}", "reason=", NULL);
  wait_for_log ("event=grant ", "resource=cpu ", user_member, "amount={\"count\":4}", NULL);

  /* Root's set. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "set", "cpu", "total=6", NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=set ", "resource=cpu ", "user=root ", "total=6", NULL);

  /* Root forces a live holder out. */
  holder = hold_as (f, first, NULL, "cpu=3", NULL);
  h = only_holder (f, &root);
  job = g_strdup (json_object_get_string_member (h, "job"));
  g_clear_pointer (&root, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "clean", "--force", "cpu", job, NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  job_field = g_strdup_printf ("job=%s ", job);
  wait_for_log ("event=force ", "resource=cpu ", "user=root ", owner_first, job_field, "amount={\"count\":3}", NULL);
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* A member cannot switch the audit of a group's pool off (issue 42,
 * point 3): `audit=off` in a configuration of her own (passed with
 * --config) is ignored in a pool whose folder is another user's; its
 * owner (or root) decides. Her grant and release are logged. */
static void
test_member_audit_off (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  g_autofree char *user_member = g_strdup_printf ("user=%s ", member);
  g_autofree char *own = g_build_filename (f->state[1], "own.conf", NULL);
  g_autofree char *text = test_substitute ("[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\naudit=off\n",
                                           "@DIR@", f->gp->pool);
  g_autofree char *out = NULL, *err = NULL;
  char *shared_config;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  test_write_file (own, text);
  g_assert_cmpint (chown (own, test_uid_of (member), (gid_t) -1), ==, 0);
  g_assert_cmpint (chmod (own, 0644), ==, 0);
  shared_config = f->gp->config;
  f->gp->config = own;
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, member, NULL, &out, &err, "run", "--need", "cpu=3", "--", "true", NULL), ==, 0);
  f->gp->config = shared_config;
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=grant ", "resource=cpu ", user_member, "amount={\"count\":3}", NULL);
  wait_for_log ("event=release ", "resource=cpu ", user_member, "amount={\"count\":3}", NULL);
}

/* The owner an audit line names is the lock file's owner, not the uid its
 * process spec claims (anyone may write any uid in a file of hers), as
 * status judges it (issue 42, point 3): a member's dead holder whose spec
 * claims the first member's uid is reclaimed by the first member, and the
 * line names the member as owner, the claim apart (claimed_uid=). */
static void
test_forged_owner (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  g_autofree char *user_first = g_strdup_printf ("user=%s ", first);
  g_autofree char *owner_member = g_strdup_printf ("owner=%s ", member);
  g_autofree char *claimed = g_strdup_printf ("claimed_uid=%u", (unsigned) test_uid_of (first));
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *lock_file = NULL, *contents = NULL, *forged = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonNode) spec = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(Helper) holder = NULL;
  JsonObject *h;
  GPid pid;
  struct stat st;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  holder = hold_as (f, member, NULL, "cpu=1", NULL);
  h = only_holder (f, &root);
  pid = (GPid) json_object_get_int_member (h, "pid");
  lock_file = g_strdup_printf ("%s/cpu/jobs/%s.json", f->gp->pool, json_object_get_string_member (h, "job"));
  g_clear_pointer (&root, json_node_unref);
  kill_holder (holder, pid);

  /* Rewritten in place (still the member's file), claiming the first's uid. */
  g_assert_true (g_file_get_contents (lock_file, &contents, NULL, NULL));
  spec = json_from_string (contents, &error);
  g_assert_no_error (error);
  json_object_set_int_member (json_object_get_object_member (json_node_get_object (spec), "process"), "uid",
                              test_uid_of (first));
  forged = json_to_string (spec, FALSE);
  test_write_in_place (lock_file, forged);
  g_assert_cmpint (stat (lock_file, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, test_uid_of (member));

  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, first, NULL, &out, &err, "run", "--no-wait", "--need", "cpu=4", "--", "true", NULL),
                   ==, 0);
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=reclaim ", "resource=cpu ", user_first, "amount={\"count\":1}", NULL);
  wait_for_log ("event=reclaim ", "resource=cpu ", user_first, owner_member, claimed, "amount={\"count\":1}", NULL);
}

/* A reclaim logs the holding's owner, its file's, also when the run
 * counted that file from its lock file index (recorded while its holder
 * lived) and built it from there to judge it: the index keeps texts, the
 * owner comes from the file's stat. */
static void
test_owner_from_index (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  g_autofree char *user_first = g_strdup_printf ("user=%s ", first);
  g_autofree char *owner_member = g_strdup_printf ("owner=%s ", member);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(Helper) holder = NULL;
  JsonObject *h;
  GPid pid;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  holder = hold_as (f, member, NULL, "cpu=1", NULL);
  h = only_holder (f, &root);
  pid = (GPid) json_object_get_int_member (h, "pid");
  /* The first user's run reads the member's lock file and records it in
   * the first user's index. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, first, NULL, &out, &err, "run", "--no-wait", "--need", "cpu=1", "--", "true", NULL),
                   ==, 0);
  kill_holder (holder, pid);

  /* The file is as recorded: this run counts it from the index. */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, first, NULL, &out, &err, "run", "--no-wait", "--need", "cpu=4", "--", "true", NULL),
                   ==, 0);
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=reclaim ", "resource=cpu ", user_first, owner_member, "amount={\"count\":1}", NULL);
}

/* Root's `clean --host` of a retired host is logged: one line for each
 * holding of that host it removes, with who removed it, whose it was,
 * the resource and the amount, and the host named. */
static void
test_clean_host (Fixture *f, gconstpointer data)
{
  const char *retired = "0123456789abcdef0123456789abcdef";
  g_autofree char *jobs = g_build_filename (f->gp->pool, "cpu", "jobs", NULL);
  g_autofree char *lock_file = g_build_filename (jobs, "gone@id.json", NULL);
  g_autofree char *holder = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  holder = g_strdup_printf ("{\"job_uri\": \"%s/gone\", \"information\": {\"count\": 3}, \"process\": "
                            "{\"type\": \"local\", \"pid\": 4242, \"host\": \"retired-node\", \"host_id\": \"%s\", "
                            "\"machine_id\": \"%s\", \"boot_id\": \"00000000-0000-4000-8000-000000000000\"}}",
                            f->gp->tmp, retired, retired);
  g_assert_cmpint (g_mkdir_with_parents (jobs, 0775), ==, 0);
  test_write_file (lock_file, holder);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "clean", "--host", "retired-node", "--yes", NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=retire ", "resource=cpu ", "user=root ", "job=gone@id ", "amount={\"count\":3}",
                "clean --host retired-node", NULL);
}

/* A private pool (its folder in one that only its owner may write) is
 * audited only when its configuration says `audit=on`; `audit=off` turns
 * it off in a group's pool; another value is refused (78). */
static void
test_private_pool (Fixture *f, gconstpointer data)
{
  g_autofree char *private = g_build_filename (f->gp->tmp, "private", NULL);
  g_autofree char *text = NULL;
  g_autofree char *out = NULL, *err = NULL;

  g_assert_cmpint (g_mkdir (private, 0755), ==, 0);
  text = g_strdup_printf ("[resource quiet]\ntype=countertoken\npath=%s/quiet\ntotal=2\n\n"
                          "[resource told]\ntype=countertoken\npath=%s/told\ntotal=2\naudit=on\n\n"
                          "[resource shared-off]\ntype=countertoken\npath=%s/off\ntotal=2\naudit=off\n",
                          private, private, f->gp->pool);
  test_write_file (f->gp->config, text);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "run", "--need", "quiet=1", "--need", "shared-off=1",
                               "--", "true", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "run", "--need", "told=1", "--", "true", NULL), ==, 0);
  g_assert_cmpstr (err, ==, "");
  wait_for_log ("event=grant ", "resource=told ", "user=root ", NULL);
  wait_for_log ("event=release ", "resource=told ", "user=root ", NULL);
  assert_not_logged ("resource=quiet ");
  assert_not_logged ("resource=shared-off ");

  g_clear_pointer (&text, g_free);
  text = g_strdup_printf ("[resource told]\ntype=countertoken\npath=%s/told\ntotal=2\naudit=maybe\n", private);
  test_write_file (f->gp->config, text);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (tessera_by (f, NULL, NULL, &out, &err, "run", "--need", "told=1", "--", "true", NULL), ==, 78);
  g_assert_nonnull (strstr (err, "audit"));
}

/* A reclaim is logged once the pool's locks are let go (issue 42): a
 * slow log (syslog blocks while its reader's queue is full, a full disk)
 * must not hold the pool. A process held in its audit write of a reclaim
 * (pause point "audit-write") keeps no lock: another's `run --no-wait`
 * of the same resource is served meanwhile, and the reclaim is logged
 * once the first goes on. */
static void
test_reclaim_logged_unlocked (Fixture *f, gconstpointer data)
{
  g_autofree char *private = g_build_filename (f->gp->tmp, "private", NULL);
  g_autofree char *pause_dir = g_build_filename (f->gp->tmp, "pause", NULL);
  g_autoptr(TestPausePoint) pause = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) paused = NULL;
  g_autoptr(Helper) other = NULL;
  g_autofree char *line = NULL;
  GPid pid;

  g_assert_cmpint (g_mkdir (private, 0755), ==, 0);
  pause = test_pause_point_new (pause_dir, "audit-write");
  text = g_strdup_printf ("[resource told]\ntype=countertoken\npath=%s/told\ntotal=2\naudit=on\n", private);
  test_write_file (f->gp->config, text);

  /* A holder of all of it killed (its wrapper first) leaves its lock
   * file: the next acquire needs its share, so judges it. */
  holder = hold_as (f, NULL, NULL, "told=2", NULL);
  pid = (GPid) json_object_get_int_member (only_holder (f, &root), "pid");
  kill_holder (holder, pid);

  /* The next run reclaims it, and is held in the audit write. */
  test_pause_point_argv_env (pause, argv);
  test_argv_tessera (argv, f->root_state, f->gp->config);
  test_argv_end (argv, (const char *[]) { "run", "--need", "told=1", "--", "echo", "first", NULL });
  paused = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  test_pause_point_wait (pause, BOUND_S);

  /* Meanwhile the pool serves: ipc.lock is free. */
  g_ptr_array_set_size (argv, 0);
  test_argv_tessera (argv, f->root_state, f->gp->config);
  test_argv_end (argv, (const char *[]) { "run", "--no-wait", "--need", "told=1", "--", "echo", "second", NULL });
  other = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  line = helper_read_line (other, BOUND_S);
  test_pause_point_release (pause);   /* the first goes on, whatever the second did */
  g_assert_cmpstr (line, ==, "second");
  g_assert_cmpint (helper_wait (other), ==, 0);

  helper_expect_line (paused, "first", BOUND_S);
  g_assert_cmpint (helper_wait (paused), ==, 0);
  wait_for_log ("event=reclaim ", "resource=told ", "user=root ", "amount={\"count\":2}", "reason=", NULL);
}

int
main (int argc, char **argv)
{
  GThread *reader;
  int status;

  test_private_mounts ();
  private_dev_log ();
  reader = g_thread_new ("read-dev-log", read_log, NULL);
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/audit/group-pool", Fixture, "[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\n",
              fixture_set_up, test_group_pool, fixture_tear_down);
  g_test_add ("/audit/clean-host", Fixture, "[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\n",
              fixture_set_up, test_clean_host, fixture_tear_down);
  g_test_add ("/audit/member-audit-off", Fixture, "[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\n",
              fixture_set_up, test_member_audit_off, fixture_tear_down);
  g_test_add ("/audit/forged-owner", Fixture, "[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\n",
              fixture_set_up, test_forged_owner, fixture_tear_down);
  g_test_add ("/audit/owner-from-index", Fixture, "[resource cpu]\ntype=countertoken\npath=@DIR@/cpu\ntotal=4\n",
              fixture_set_up, test_owner_from_index, fixture_tear_down);
  g_test_add ("/audit/private-pool", Fixture, "", fixture_set_up, test_private_pool, fixture_tear_down);
  if (TESSERA_PAUSE_POINTS)
    g_test_add ("/audit/reclaim-logged-unlocked", Fixture, "", fixture_set_up, test_reclaim_logged_unlocked,
                fixture_tear_down);
  status = g_test_run ();
  shutdown (log_socket, SHUT_RDWR);
  g_thread_join (reader);
  close (log_socket);
  umount2 (old_dev, MNT_DETACH);
  g_rmdir (old_dev);
  g_free (old_dev);
  g_ptr_array_unref (received);
  return status;
}
