/* test-security-common.c: what the security test programs share (see
 * test-security-common.h). Real users and a group: CI is root; without
 * root the tests fail. After an aborted run, remove what it left:
 * `userdel txuPIDa` (and b), `groupdel txgPID`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-security-common.h"

/* name → contents of every entry of @folder (links read as links). */
GHashTable *
snapshot (const char *folder)
{
  GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);
      char *contents = NULL;

      g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_hash_table_insert (files, g_strdup (name), contents);
    }
  return files;
}

void
assert_victim_untouched (Fixture *f)
{
  g_autoptr(GHashTable) after = snapshot (f->victim);
  GHashTableIter iter;
  gpointer name, contents;

  g_hash_table_iter_init (&iter, f->victim_before);
  while (g_hash_table_iter_next (&iter, &name, &contents))
    {
      const char *now = g_hash_table_lookup (after, name);

      if (now == NULL)
        g_error ("the first user's %s/%s was deleted", f->victim, (const char *) name);
      g_assert_cmpstr (now, ==, contents);
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    if (!g_hash_table_contains (f->victim_before, name))
      g_error ("a file %s appeared in the first user's %s", (const char *) name, f->victim);
}

/* Runs a shell script as @user (umask 022) with $1 = the pool, $2 = the
 * victim folder, $3 = the second user's folder. */
void
sh_as (Fixture *f, const char *user, const char *script)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  int status;

  test_argv_as_user (argv, user, BOUND_S);
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup ("-ec"));
  g_ptr_array_add (argv, g_strdup (script));
  g_ptr_array_add (argv, g_strdup ("sh"));
  g_ptr_array_add (argv, g_strdup (f->gp->pool));
  g_ptr_array_add (argv, g_strdup (f->victim));
  g_ptr_array_add (argv, g_strdup (f->evil));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  if (status != 0)
    g_error ("planting as %s failed (%d): %.*s", user, status, (int) g_bytes_get_size (out),
             (const char *) g_bytes_get_data (out, NULL));
}

void
plant (Fixture *f, const char *script)
{
  sh_as (f, f->gp->users->users[1], script);
}

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  static const char *victim_files[][2] = {
    { "a.json", "{\"a\": 1}\n" },
    { "b.json", "[1]\n" },
    { "c.json", "not json\n" },
    { "d.json.Ab12Cd", "{\"temporary\": \"looking\"}\n" },
    { "notes.txt", "mine\n" },
  };

  f->gp = test_group_pool_new ("tx", "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\n\n"
                                     "[resource m]\ntype=mutex\npath=@DIR@/m\n");
  for (int i = 0; i < 2; i++)
    {
      f->state[i] = test_user_folder (f->gp->tmp, f->gp->users->users[i]);
      g_assert_cmpint (chmod (f->state[i], 0755), ==, 0);
    }
  f->evil = g_strdup (f->state[1]);

  /* The first user's files: JSON that is no lock file, old enough for
   * any sweep, and a name like a temporary. */
  f->victim = g_build_filename (f->state[0], "victim", NULL);
  g_assert_cmpint (g_mkdir (f->victim, 0755), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (victim_files); i++)
    {
      g_autofree char *path = g_build_filename (f->victim, victim_files[i][0], NULL);
      test_write_file (path, victim_files[i][1]);
      test_set_file_age (path, 7200);
    }
  test_run_or_fail ((const char *[]) { "chown", "-R", f->gp->users->users[0], f->victim, NULL });
  f->victim_before = snapshot (f->victim);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  g_clear_pointer (&f->gp, test_group_pool_free);
  for (int i = 0; i < 2; i++)
    g_free (f->state[i]);
  g_free (f->victim);
  g_free (f->evil);
  g_hash_table_unref (f->victim_before);
}

/* Clear output: text (valid UTF-8, no control character but the line
 * end), and no message of the command's said twice. */
void
assert_clear (GBytes *bytes, const char *what)
{
  gsize size;
  const char *data = g_bytes_get_data (bytes, &size);
  g_autofree char *text = size > 0 ? g_strndup (data, size) : g_strdup ("");
  g_auto(GStrv) lines = NULL;
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  if (strlen (text) != size || !g_utf8_validate (text, -1, NULL))
    g_error ("%s: the output is not text: %s", what, text);
  for (const char *p = text; *p != '\0'; p++)
    if ((guchar) *p < 0x20 && *p != '\n')
      g_error ("%s: a control character (0x%02x) reached the output: %s", what, (guchar) *p, text);
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "tessera:") && !g_hash_table_add (seen, lines[i]))
      g_error ("%s: said twice: %s", what, lines[i]);
}

static void
assert_small (void)
{
  struct rusage usage;

  /* The largest of all the commands waited for so far. */
  g_assert_cmpint (getrusage (RUSAGE_CHILDREN, &usage), ==, 0);
  g_test_message ("largest resident size so far: %ld KiB", usage.ru_maxrss);
  g_assert_cmpint (usage.ru_maxrss, <, MAX_RSS_KB);
}

/* Runs `tessera ARGS…` as the first user, inside @wrap (a command that
 * runs its arguments, e.g. in another mount namespace) when given. The
 * output (and error output) in @out / @err. */
static int
tessera_v (Fixture *f, const char * const *wrap, GBytes **out, GBytes **err, const char *first, va_list ap)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  int status;

  for (guint i = 0; wrap != NULL && wrap[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (wrap[i]));
  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, out, err);
  g_test_message ("%s -> %d", first, status);
  g_test_message ("%.*s", (int) MIN (g_bytes_get_size (*out), 4000), (const char *) g_bytes_get_data (*out, NULL));
  if (err != NULL)
    g_test_message ("%.*s", (int) MIN (g_bytes_get_size (*err), 4000), (const char *) g_bytes_get_data (*err, NULL));
  if (status == 137)
    g_error ("tessera %s hung (killed after %d s)", first, BOUND_S);
  if (status > 128)
    g_error ("tessera %s died of signal %d", first, status - 128);
  g_assert_cmpint (status, <, 124);
  return status;
}

int
tessera_in (Fixture *f, const char * const *wrap, GBytes **out, GBytes **err, const char *first, ...)
{
  va_list ap;
  int status;

  va_start (ap, first);
  status = tessera_v (f, wrap, out, err, first, ap);
  va_end (ap);
  return status;
}

/* `tessera ARGS…` as the first user (inside @wrap when given), its error
 * output read as its output, line by line. */
Helper *
spawn_as_first (Fixture *f, const char * const *wrap, const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_append (argv, (const char *[]) { "sh", "-c", "exec \"$@\" 2>&1", "sh", NULL });
  for (guint i = 0; wrap != NULL && wrap[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (wrap[i]));
  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);
  return helper_spawn_argv (NULL, (const char * const *) argv->pdata);
}

/* `tessera watch` as the first user, up to its first frame, then ended;
 * or, when it can read no resource at all, its clear refusal. */
static char *
watch_first_frame (Fixture *f, const char * const *wrap)
{
  g_autoptr(GString) frame = g_string_new (NULL);
  g_autoptr(Helper) watch = spawn_as_first (f, wrap, (const char *[]) { "watch", NULL });
  gboolean last = FALSE, framed = FALSE;

  /* A frame: "— <UTC time> —", then each resource (r, then m) and its
   * holders' lines; m's first line after its title ends it. */
  for (;;)
    {
      g_autofree char *line = helper_read_line (watch, BOUND_S);

      if (line == NULL)
        break;
      g_string_append_printf (frame, "%s\n", line);
      framed = framed || g_str_has_prefix (line, "— ");
      if (last || (framed && g_str_has_prefix (line, "m (") && strstr (line, ": cannot be read: ") != NULL))
        break;
      last = framed && g_str_has_prefix (line, "m (");
    }
  g_test_message ("watch: %s", frame->str);
  if (framed)
    {
      g_assert_true (helper_is_running (watch));
      helper_kill (watch, SIGTERM);
      helper_wait (watch);
    }
  else
    {
      int status = helper_wait (watch);

      if (!f->nothing_readable || status == 137)
        g_error ("watch showed no whole frame within %d s: %s", BOUND_S, frame->str);
      g_assert_cmpint (status, >, 0);
      g_assert_cmpint (status, <, 124);
      g_assert_true (g_str_has_prefix (frame->str, "tessera: "));
    }
  return g_string_free (g_steal_pointer (&frame), FALSE);
}

/* The first user's whole round, each command held to the rules. */
void
first_user_round_in (Fixture *f, const char * const *wrap)
{
  static const char *commands[][5] = {
    { "run", "--no-wait", "--need", "r", NULL },
    { "run", "--no-wait", "--need", "m=shared", NULL },
    { "run", "--no-wait", "--need", "m", NULL },
    { "status", NULL },
    { "clean", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autoptr(GBytes) out = NULL;
      const char **c = commands[i];
      int status;

      if (g_str_equal (c[0], "run"))
        status = tessera_in (f, wrap, &out, NULL, c[0], c[1], c[2], c[3], "--", "true", NULL);
      else
        status = tessera_in (f, wrap, &out, NULL, c[0], NULL);
      assert_clear (out, c[0]);
      /* Full (69, 75) is an answer; anything but a clear refusal is not. */
      if (status != 0)
        g_assert_cmpuint (g_bytes_get_size (out), >, 0);
      assert_victim_untouched (f);
    }
  {
    g_autoptr(GBytes) out = NULL;
    g_autoptr(GBytes) err = NULL;
    g_autoptr(JsonParser) parser = json_parser_new ();
    g_autoptr(GError) error = NULL;

    tessera_in (f, wrap, &out, &err, "status", "--json", NULL);
    assert_clear (err, "status --json (errors)");
    json_parser_load_from_data (parser, g_bytes_get_data (out, NULL), g_bytes_get_size (out), &error);
    g_assert_no_error (error);
    g_assert_true (g_utf8_validate (g_bytes_get_data (out, NULL), g_bytes_get_size (out), NULL));
  }
  {
    g_autofree char *frame = watch_first_frame (f, wrap);
    g_autoptr(GBytes) bytes = g_bytes_new (frame, strlen (frame));

    assert_clear (bytes, "watch");
  }
  assert_victim_untouched (f);
  assert_small ();
}

void
first_user_round (Fixture *f)
{
  first_user_round_in (f, NULL);
}

/* The first user's pool, as its first runs make it. */
void
make_pool (Fixture *f)
{
  g_autoptr(GBytes) out = NULL;

  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--need", "r", "--need", "m", "--", "true", NULL), ==, 0);
}

/* The second user's `tessera run --need NEED` holding until its input
 * is closed. */
Helper *
hold_as_second (Fixture *f, const char *need)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S * 4);
  return test_hold_argv (argv, need, BOUND_S);
}

void
release_held (Helper *holder)
{
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* From now on the commands read a configuration of @text (@DIR@: the
 * group's shared folder, @OWN@: the first user's state folder). */
void
use_config (Fixture *f, const char *text)
{
  g_autofree char *in_pool = test_substitute (text, "@DIR@", f->gp->pool);
  g_autofree char *own = test_substitute (in_pool, "@OWN@", f->state[0]);
  g_autofree char *tmp = test_substitute (own, "@TMP@", f->gp->tmp);
  g_autofree char *path = g_strdup_printf ("%s.%u", f->gp->config, g_random_int ());

  test_write_file (path, tmp);
  g_assert_cmpint (chmod (path, 0644), ==, 0);
  g_free (f->gp->config);
  f->gp->config = g_steal_pointer (&path);
}

/* `tessera init POOL --group GROUP` as root, as a site sets a pool up. */
void
init_group_pool (Fixture *f)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  int status;

  test_group_pool_argv_tessera (argv, f->gp, f->state, NULL, FALSE, NULL, BOUND_S);
  test_argv_end (argv, (const char *[]) { "init", f->gp->pool, "--group", f->gp->users->group, NULL });
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("init -> %d: %.*s", status, (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 0);
}

/* The first user's `tessera run --need NEED` holding until its input is
 * closed. */
Helper *
hold_as_first (Fixture *f, const char *need)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  return test_hold_argv (argv, need, BOUND_S);
}

/* The only lock file in r/jobs/ (its path). */
char *
only_lock_file (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);

  return test_only_json_file (jobs);
}

/* `tessera ARGS…` as @user (NULL: root), its status; its output, whole
 * in @out (and checked to be one line when @one_line). */
int
tessera_by (Fixture *f, const char *user, char **out, gboolean one_line, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) bytes = NULL;
  va_list ap;
  int status;

  test_group_pool_argv_tessera (argv, f->gp, f->state, user, FALSE, NULL, BOUND_S);
  va_start (ap, first);
  test_argv_end_va (argv, first, ap);
  va_end (ap);
  status = test_run_capture (argv, &bytes, NULL);
  *out = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  g_test_message ("%s: %s -> %d: %s", user != NULL ? user : "root", first, status, *out);
  assert_clear (bytes, first);
  if (one_line)
    {
      const char *end = strchr (*out, '\n');

      g_assert_true (end != NULL && end[1] == '\0');
    }
  return status;
}

/* The pid of the holder whose lock file is @lock_file (its process). */
GPid
lock_file_pid (const char *lock_file)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *process;

  g_assert_true (json_parser_load_from_file (parser, lock_file, NULL));
  process = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "process");
  g_assert_nonnull (process);
  return (GPid) json_object_get_int_member (process, "pid");
}

/* The test @path: @fn on a fixture of @data. */
void
security_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer))
{
  g_test_add (path, Fixture, data, fixture_set_up, fn, fixture_tear_down);
}

/* As `tessera run` leaves it: in r/runs/UID/, the job folder @name of
 * @user, with its job lock JOB.lock, its JOB.pid of @pid and its
 * locks.json of @locks; its path. */
char *
plant_job_folder (Fixture *f, const char *user, const char *name, const char *job, const char *pid,
                  const char *locks)
{
  struct passwd *pw = getpwnam (user);
  g_autofree char *own = NULL;
  g_autofree char *file = NULL;
  char *folder;

  if (pw == NULL)
    g_error ("no user %s", user);
  own = g_strdup_printf ("%s/r/runs/%u", f->gp->pool, (guint) pw->pw_uid);
  folder = g_build_filename (own, name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0750), ==, 0);
  file = g_strdup_printf ("%s/%s.lock", folder, job);
  test_write_file (file, "");
  g_free (file);
  file = g_strdup_printf ("%s/%s.pid", folder, job);
  test_write_file (file, pid);
  g_free (file);
  file = g_build_filename (folder, "locks.json", NULL);
  test_write_file (file, locks);
  test_run_or_fail ((const char *[]) { "chown", "-R", user, own, NULL });
  return folder;
}
