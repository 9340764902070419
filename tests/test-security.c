/* test-security.c: a pool shared by a group, where the second user is
 * hostile. As that user, each case plants something in the pool (links,
 * FIFOs, deep or huge JSON, hostile names) or hides processes (/proc with
 * hidepid=2); then the first user runs `tessera run`, `status` (text and
 * --json), `clean` and `watch`, and each must: touch no file outside the
 * pool (a folder of the first user's, checked byte for byte), end within
 * a bound, not crash, say what it has to say in clear lines, and stay
 * small. Real users and a group: CI is root; without root this fails.
 * After an aborted run, remove what it left: `userdel txuPIDa` (and b),
 * `groupdel txgPID`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-utils.h"

#include <errno.h>
#include <pwd.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Generous: a loaded 2-core machine; a hang is far longer. */
#define BOUND_S 60
/* Largest resident size any command may reach (ASan builds included). */
#define MAX_RSS_KB (384 * 1024)

typedef struct
{
  TestGroupPool *gp;
  char *state[2];
  char *victim;          /* the first user's, outside the pool */
  char *evil;            /* the second user's own folder */
  GHashTable *victim_before;   /* name → contents */
  gboolean nothing_readable;   /* no resource can be read: watch refuses */
} Fixture;

/* name → contents of every entry of @folder (links read as links). */
static GHashTable *
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

static void
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
static void
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

static void
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
static void
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

static int
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
static Helper *
spawn_as_first (Fixture *f, const char * const *wrap, const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);

  for (const char *const *a = (const char *[]) { "sh", "-c", "exec \"$@\" 2>&1", "sh", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
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
static void
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

static void
first_user_round (Fixture *f)
{
  first_user_round_in (f, NULL);
}

/* The first user's pool, as its first runs make it. */
static void
make_pool (Fixture *f)
{
  g_autoptr(GBytes) out = NULL;

  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--need", "r", "--need", "m", "--", "true", NULL), ==, 0);
}

static char *
status_text (Fixture *f, const char * const *wrap)
{
  g_autoptr(GBytes) out = NULL;

  tessera_in (f, wrap, &out, NULL, "status", "r", NULL);
  return g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
}

/* ---------------------------------------------------------------------- */
/* Plantings that the first user's whole round must cope with */

typedef struct
{
  const char *path;
  const char *script;          /* as the second user: see sh_as() */
  gboolean nothing_readable;   /* no resource can be read after it */
} Planting;

static const Planting plantings[] = {
  { "link/jobs",
    "cd \"$1/r\"; mv jobs jobs.old; ln -s \"$2\" jobs" },
  { "link/intents",
    "ln -s \"$2\" \"$1/m/intents\"" },
  { "link/lock-file",
    "for n in a b c; do ln -s \"$2/$n.json\" \"$1/r/jobs/$n.json\"; ln -s \"$2/$n.json\" \"$1/m/jobs/$n.json\"; done" },
  { "link/temporary",
    "mkdir -p \"$1/m/intents\"; "
    "for d in r/jobs m/jobs m/intents; do "
    "  ln -s \"$2/a.json\" \"$1/$d/x.json.Ab12Cd\"; ln -s \"$2/d.json.Ab12Cd\" \"$1/$d/d.json.Ab12Cd\"; "
    "  ln -s \"$2\" \"$1/$d/dir.json.Ab12Cd\"; "
    "  touch -h -d '2 hours ago' \"$1/$d/x.json.Ab12Cd\" \"$1/$d/d.json.Ab12Cd\" \"$1/$d/dir.json.Ab12Cd\"; "
    "done" },
  /* The first user's folder for its temporary files moved aside, a link
   * to the victim's folder in its place. */
  { "link/writer-temporaries",
    "for d in r m; do cd \"$1/$d\"; for t in .tessera-tmp-*; do [ -d \"$t\" ]; mv \"$t\" \"$t.old\"; "
    "ln -s \"$2\" \"$t\"; done; done" },
  { "link/ipc-lock",
    "for d in r m; do rm -f \"$1/$d/ipc.lock\"; ln -s \"$2/b.json\" \"$1/$d/ipc.lock\"; done" },
  { "fifo/jobs",
    "mkfifo \"$1/r/jobs/fifo.json\" \"$1/m/jobs/fifo.json\"" },
  { "fifo/intents",
    "mkdir -p \"$1/m/intents\"; mkfifo \"$1/m/intents/fifo.json\" \"$1/m/intents/fifo.json.Ab12Cd\"" },
  { "json/deep",
    "head -c 100000 /dev/zero | tr '\\0' '[' > \"$3/deep\"; mkdir -p \"$1/m/intents\"; "
    "for p in r/jobs/deep.json m/jobs/deep.json m/intents/deep.json r/informations.json m/informations.json; do "
    "  rm -f \"$1/$p\"; cp \"$3/deep\" \"$1/$p\"; "
    "done",
    TRUE },
  { "json/huge",
    "{ printf '{\"job_uri\": \"'; head -c 17000000 /dev/zero | tr '\\0' a; printf '\", \"total\": 8}'; } > \"$3/huge\"; "
    "mkdir -p \"$1/m/intents\"; "
    "for p in r/jobs/huge.json m/jobs/huge.json m/intents/huge.json r/informations.json m/informations.json; do "
    "  rm -f \"$1/$p\"; cp \"$3/huge\" \"$1/$p\"; "
    "done",
    TRUE },
};

static void
test_planted (Fixture *f, gconstpointer data)
{
  const Planting *planting = data;

  make_pool (f);
  plant (f, planting->script);
  f->nothing_readable = planting->nothing_readable;
  first_user_round (f);
}

/* The second user's `tessera run --need NEED` holding until its input
 * is closed. */
static Helper *
hold_as_second (Fixture *f, const char *need)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  Helper *holder;

  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S * 4);
  for (const char *const *a = (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo held; exec cat", NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (holder, "held", BOUND_S);
  return holder;
}

static void
release_held (Helper *holder)
{
  helper_close_stdin (holder);
  g_assert_cmpint (helper_wait (holder), ==, 0);
}

/* An exclusive request that has to wait writes an intent: never through
 * a planted intents/ (looked at while it waits: giving up removes it). */
static void
test_link_intents_waiting (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) waiter = NULL;
  g_autofree char *line = NULL;

  make_pool (f);
  plant (f, "ln -s \"$2\" \"$1/m/intents\"");
  holder = hold_as_second (f, "m=shared");
  waiter = spawn_as_first (f, NULL, (const char *[]) { "run", "--need", "m", "--", "true", NULL });
  /* Other lines (about the link) may come first. */
  do
    {
      g_free (line);
      line = helper_read_line (waiter, BOUND_S);
      g_test_message ("waiter: %s", line);
      g_assert_nonnull (line);
    }
  while (!g_str_has_prefix (line, "tessera: waiting for m"));
  assert_victim_untouched (f);
  release_held (holder);
  g_assert_cmpint (helper_wait (waiter), ==, 0);
  assert_victim_untouched (f);
}

/* The intents/ folder the first user's waiting request makes is the
 * group's, as jobs/ is: the second user's requests judge and remove
 * stale intents there. */
static void
test_intents_folder_shared (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autofree char *intents = g_build_filename (f->gp->pool, "m", "intents", NULL);
  GStatBuf st;

  make_pool (f);
  holder = hold_as_second (f, "m=shared");
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--timeout", "0.5", "--need", "m", "--", "true", NULL),
                   ==, 75);
  g_assert_cmpint (g_lstat (intents, &st), ==, 0);
  g_assert_cmpuint (st.st_gid, ==, f->gp->users->gid);
  g_assert_cmpuint (st.st_mode & (S_ISGID | S_IRWXG), ==, S_ISGID | S_IRWXG);
  release_held (holder);
}

/* The first user's folder for its temporary files moved aside and the
 * second user's own, writable by all, in its place: the first user's
 * writes never go there (the second user could swap a temporary file for
 * its own before the rename), they go beside the lock files. */
static void
test_writer_temporaries_of_another (Fixture *f, gconstpointer data)
{
  make_pool (f);
  plant (f, "for d in r m; do cd \"$1/$d\"; for t in .tessera-tmp-*; do [ -d \"$t\" ]; mv \"$t\" \"$t.old\"; "
            "mkdir -m 777 \"$t\"; done; done");
  first_user_round (f);
  for (const char *const *d = (const char *[]) { "r", "m", NULL }; *d != NULL; d++)
    {
      g_autoptr(GDir) dir = NULL;
      g_autofree char *folder = g_build_filename (f->gp->pool, *d, NULL);
      const char *name;
      guint planted = 0;

      dir = g_dir_open (folder, 0, NULL);
      g_assert_nonnull (dir);
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_prefix (name, ".tessera-tmp-") && !g_str_has_suffix (name, ".old"))
          {
            g_autofree char *path = g_build_filename (folder, name, NULL);

            planted++;
            g_assert_cmpuint (test_count_entries (path), ==, 0);
          }
      g_assert_cmpuint (planted, ==, 1);
    }
}

/* The second user holds the mutex m, then puts in place of m/jobs/ a
 * folder of their own that others may write in but not list, with their
 * lock file in it: the first user cannot see who holds m, so must not
 * take it (a folder that cannot be read is no empty pool), and says why
 * in one line (and what else there is to say, in its own). */
static void
test_jobs_unlistable (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  int status;

  make_pool (f);
  holder = hold_as_second (f, "m");
  plant (f, "cd \"$1/m\"; mkdir jobs.new; mv jobs/*.json jobs.new/; mv jobs jobs.old; mv jobs.new jobs; "
            "chmod 0733 jobs");
  /* And something else to say about r. */
  plant (f, "ln -s \"$2/a.json\" \"$1/r/jobs/evil.json\"");
  status = tessera_in (f, NULL, &out, &err, "run", "--no-wait", "--need", "r", "--need", "m", "--", "true", NULL);
  text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
  g_assert_cmpint (status, !=, 0);
  /* One line per cause: r's link, m's folder (the warning of the look
   * that failed is the error). */
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[2], ==, "");
  g_assert_nonnull (strstr (text, "symbolic link"));
  g_assert_nonnull (strstr (text, "m/jobs"));
  assert_clear (err, "run");
  /* status cannot show m's holders: it says so, rather than show none. */
  g_clear_pointer (&out, g_bytes_unref);
  g_clear_pointer (&err, g_bytes_unref);
  g_free (text);
  tessera_in (f, NULL, &out, &err, "status", "m", NULL);
  text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
  g_assert_nonnull (strstr (text, "Cannot read"));
  assert_clear (err, "status");
  release_held (holder);
}

static void
test_link_informations (Fixture *f, gconstpointer data)
{
  make_pool (f);
  plant (f, "rm -f \"$1/m/informations.json\"; ln -s \"$2/a.json\" \"$1/m/informations.json\"");
  first_user_round (f);
  /* And both: nothing left to show. */
  plant (f, "rm -f \"$1/r/informations.json\"; ln -s \"$2/b.json\" \"$1/r/informations.json\"");
  f->nothing_readable = TRUE;
  first_user_round (f);
}

/* ---------------------------------------------------------------------- */
/* FIFOs */

/* A lock file names a job whose `.lock` and `.pid` are FIFOs: without a
 * "process" (seed-era: the .pid is read), and with one (the job lock is
 * probed). */
static void
test_fifo_job_lock_and_pid (Fixture *f, gconstpointer data)
{
  g_autofree char *job_lock = g_build_filename (f->evil, "job.lock", NULL);

  make_pool (f);
  plant (f, "mkfifo \"$3/job.lock\" \"$3/job.pid\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}}' \"$3\" > \"$1/r/jobs/seed.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
            "\"process\": {\"type\": \"local\", \"pid\": 1, \"host\": \"elsewhere\"}}' \"$3\" > \"$1/r/jobs/other.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"mode\": \"shared\"}}' \"$3\" > \"$1/m/jobs/seed.json\"; "
            "touch -d '2 hours ago' \"$1/r/jobs/seed.json\" \"$1/r/jobs/other.json\" \"$1/m/jobs/seed.json\"");
  first_user_round (f);
  /* Nothing the lock files name was written or removed. */
  g_assert_true (g_file_test (job_lock, G_FILE_TEST_EXISTS));
}

/* `tessera clean --force r JOB` as the second user: its status, its
 * output in @out. */
static int
force_as_second (Fixture *f, const char *job, GBytes **out)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  int status;

  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S);
  for (const char * const *a = (const char *[]) { "clean", "--force", "r", job, NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, out, NULL);
  g_test_message ("second user: clean --force r %s -> %d: %.*s", job, status, (int) g_bytes_get_size (*out),
                  (const char *) g_bytes_get_data (*out, NULL));
  assert_clear (*out, "clean --force");
  return status;
}

/* `tessera clean --force` removes an entry of jobs/ (a FIFO too: it
 * holds everything) only for its owner, root or the pool's owner: the
 * second user, who owns neither the pool (the group's folder is the
 * first user's here, and her first run made r/ in it) nor the first
 * user's FIFO, is refused in one line (77) and removes nothing; it
 * removes its own FIFO, and the pool's owner removes the second user's
 * lock file. */
static void
test_force_by_owner (Fixture *f, gconstpointer data)
{
  g_autofree char *mine = g_build_filename (f->gp->pool, "r", "jobs", "mine@1.json", NULL);
  g_autofree char *theirs = g_build_filename (f->gp->pool, "r", "jobs", "theirs@1.json", NULL);
  g_autofree char *other = g_build_filename (f->gp->pool, "r", "jobs", "other@1.json", NULL);
  g_autoptr(GBytes) out = NULL;

  test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], f->gp->pool, NULL });
  make_pool (f);
  sh_as (f, f->gp->users->users[0], "mkfifo \"$1/r/jobs/mine@1.json\"");
  plant (f, "mkfifo \"$1/r/jobs/theirs@1.json\"; "
            "printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}}' \"$3\" > \"$1/r/jobs/other@1.json\"");

  g_assert_cmpint (force_as_second (f, "mine@1", &out), ==, 77);
  g_assert_nonnull (g_strstr_len (g_bytes_get_data (out, NULL), g_bytes_get_size (out), "owner"));
  g_assert_true (g_file_test (mine, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (force_as_second (f, "theirs@1", &out), ==, 0);
  g_assert_false (g_file_test (theirs, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "clean", "--force", "r", "mine@1", "other@1", NULL), ==, 0);
  /* The pool's owner also changes its capacity. */
  g_clear_pointer (&out, g_bytes_unref);
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "set", "r", "total=9", NULL), ==, 0);
  g_assert_false (g_file_test (mine, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (other, G_FILE_TEST_EXISTS));
  assert_victim_untouched (f);
}

/* ---------------------------------------------------------------------- */
/* Hostile names */

static void
test_hostile_names (Fixture *f, gconstpointer data)
{
  g_autofree char *text = NULL;

  make_pool (f);
  plant (f, "for n in \"$(printf 'bad\\377\\376name')\" \"$(printf 'esc\\033[2J\\033]0;title\\007name')\" "
            "          \"$(printf 'line\\nbreak')\"; do "
            "  printf '{\"job_uri\": \"%s/%s\", \"information\": {\"count\": 1}}' \"$3\" \"$n\" > \"$1/r/jobs/$n.json\"; "
            "done");
  first_user_round (f);
  /* They are shown, escaped. */
  text = status_text (f, NULL);
  g_assert_nonnull (strstr (text, "bad\\xFF\\xFEname"));
  g_assert_nonnull (strstr (text, "esc\\x1B[2J"));
}

/* ---------------------------------------------------------------------- */
/* Folders swapped for links while the first user's tessera works */

#if TESSERA_PAUSE_POINTS
/* The first user's `tessera run --need r -- true`, held at pause point
 * @point; there, jobs/ of r becomes a link to the first user's victim
 * folder. Nothing of the victim's is created, read as a lock file or
 * deleted. To pause at the removal of its own lock file, the run gives
 * back the pool it took first (pools are taken in the order of their
 * folders' inodes) because the second user holds the other one (all or
 * none), and the victim's folder has a file of that very name. */
static void
test_jobs_swapped (Fixture *f, gconstpointer data)
{
  const char *point = data;
  g_autofree char *pause_dir = g_build_filename (f->gp->tmp, "pause", NULL);
  g_autofree char *reached = g_strdup_printf ("%s/%s.reached", pause_dir, point);
  g_autofree char *go = g_strdup_printf ("%s/%s.go", pause_dir, point);
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) run = NULL;
  g_autoptr(Helper) holder = NULL;
  gboolean own_delete = g_str_equal (point, "lock-file-delete");
  const char *first = "r", *second = "m";
  int status;

  make_pool (f);
  if (own_delete)
    {
      g_autofree char *r = g_build_filename (f->gp->pool, "r", NULL);
      g_autofree char *m = g_build_filename (f->gp->pool, "m", NULL);
      struct stat rst, mst;

      g_assert_cmpint (stat (r, &rst), ==, 0);
      g_assert_cmpint (stat (m, &mst), ==, 0);
      if (mst.st_ino < rst.st_ino)
        {
          first = "m";
          second = "r";
        }
      holder = hold_as_second (f, g_str_equal (second, "r") ? "r=8" : "m");
      g_free (jobs);
      jobs = g_build_filename (f->gp->pool, first, "jobs", NULL);
    }
  g_assert_cmpint (g_mkdir (pause_dir, 0777), ==, 0);
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_AT=%s", point));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_DIR=%s", pause_dir));
  test_argv_tessera (argv, f->state[0], f->gp->config);
  for (const char *const *a = own_delete ? (const char *[]) { "run", "--no-wait", "--need", first, "--need", second, "--", "true", NULL }
                                         : (const char *[]) { "run", "--need", "r", "--", "true", NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  test_wait_for_file (reached, BOUND_S);

  if (own_delete)
    {
      /* Our lock file's name, also in the victim's folder. */
      g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
      const char *name;
      guint found = 0;

      g_assert_nonnull (dir);
      while ((name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".json"))
          {
            g_autofree char *path = g_build_filename (f->victim, name, NULL);

            test_write_file (path, "{\"the victim's\": true}\n");
            test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], path, NULL });
            found++;
          }
      g_assert_cmpuint (found, ==, 1);
      g_hash_table_unref (f->victim_before);
      f->victim_before = snapshot (f->victim);
    }
  {
    g_autofree char *script = g_strdup_printf ("cd \"$1/%s\"; mv jobs jobs.old; ln -s \"$2\" jobs", first);
    plant (f, script);
  }
  test_write_file (go, "");
  status = helper_wait (run);
  g_test_message ("run -> %d", status);
  g_assert_cmpint (status, <, 124);
  assert_victim_untouched (f);
  if (holder != NULL)
    release_held (holder);
}

/* The same, with the resource folder r itself swapped for a link to a
 * folder of the first user's that has a jobs/ of its own (another pool
 * of theirs): the lock file goes to the folder r was when it was opened. */
static void
test_folder_swapped (Fixture *f, gconstpointer data)
{
  g_autofree char *pause_dir = g_build_filename (f->gp->tmp, "pause", NULL);
  g_autofree char *reached = g_build_filename (pause_dir, "lock-file-create.reached", NULL);
  g_autofree char *go = g_build_filename (pause_dir, "lock-file-create.go", NULL);
  g_autofree char *other = g_build_filename (f->state[0], "other-pool", NULL);
  g_autofree char *other_jobs = g_build_filename (other, "jobs", NULL);
  g_autofree char *mine = g_build_filename (other_jobs, "mine.json", NULL);
  g_autofree char *old_jobs = g_build_filename (f->gp->pool, "r.old", "jobs", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) run = NULL;
  int status;

  make_pool (f);
  g_assert_cmpint (g_mkdir (pause_dir, 0777), ==, 0);
  g_assert_cmpint (chmod (pause_dir, 0777), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (other_jobs, 0755), ==, 0);
  test_write_file (mine, "{\"mine\": true}\n");
  test_run_or_fail ((const char *[]) { "chown", "-R", f->gp->users->users[0], other, NULL });
  /* That folder is the one checked byte for byte. */
  g_free (f->victim);
  f->victim = g_strdup (other_jobs);
  g_hash_table_unref (f->victim_before);
  f->victim_before = snapshot (f->victim);

  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup ("TESSERA_PAUSE_AT=lock-file-create"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PAUSE_DIR=%s", pause_dir));
  test_argv_tessera (argv, f->state[0], f->gp->config);
  for (const char *const *a = (const char *[]) { "run", "--need", "r", "--", "true", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  run = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  test_wait_for_file (reached, BOUND_S);
  /* $2 is now other-pool/jobs. */
  plant (f, "mv \"$1/r\" \"$1/r.old\"; ln -s \"$(dirname \"$2\")\" \"$1/r\"");
  test_write_file (go, "");
  status = helper_wait (run);
  g_test_message ("run -> %d", status);
  g_assert_cmpint (status, <, 124);
  assert_victim_untouched (f);
  /* It went where r was, and was let go there. */
  g_assert_cmpuint (test_count_entries (old_jobs), ==, 0);
}
#endif

/* ---------------------------------------------------------------------- */
/* The configured path: no link followed in a folder others may write */

/* Into @files: path below the root → contents of every file below
 * @folder, "/" for a folder, "-> TARGET" for a link (never followed). */
static void
tree_snapshot_into (GHashTable *files, const char *folder, const char *below)
{
  g_autoptr(GDir) dir = g_dir_open (folder, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (folder, name, NULL);
      char *key = below != NULL ? g_build_filename (below, name, NULL) : g_strdup (name);
      char *contents = NULL;
      GStatBuf st;

      g_assert_cmpint (g_lstat (path, &st), ==, 0);
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (path, NULL);
          contents = g_strconcat ("-> ", target, NULL);
        }
      else if (S_ISDIR (st.st_mode))
        {
          contents = g_strdup ("/");
          tree_snapshot_into (files, path, key);
        }
      else
        g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_hash_table_insert (files, key, contents);
    }
}

static GHashTable *
tree_snapshot (const char *folder)
{
  GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  tree_snapshot_into (files, folder, NULL);
  return files;
}

static void
assert_tree_unchanged (const char *folder, GHashTable *before)
{
  g_autoptr(GHashTable) after = tree_snapshot (folder);
  GHashTableIter iter;
  gpointer name, contents;

  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &name, &contents))
    {
      const char *now = g_hash_table_lookup (after, name);

      if (now == NULL)
        g_error ("%s/%s was deleted", folder, (const char *) name);
      if (!g_str_equal (now, contents))
        g_error ("%s/%s was changed: %s, then %s", folder, (const char *) name, (const char *) contents, now);
    }
  g_hash_table_iter_init (&iter, after);
  while (g_hash_table_iter_next (&iter, &name, NULL))
    if (!g_hash_table_contains (before, name))
      g_error ("%s/%s appeared", folder, (const char *) name);
}

/* From now on the commands read a configuration of @text (@DIR@: the
 * group's shared folder, @OWN@: the first user's state folder). */
static void
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

/* Another pool of the first user's, in its own folder: capacity 8, and
 * the old lock file of a holder long gone (what `clean --min-age 0`
 * removes from a pool it cleans). */
static char *
make_own_pool (Fixture *f)
{
  char *pool = g_build_filename (f->state[0], "own-pool", NULL);
  g_autofree char *jobs = g_build_filename (pool, "jobs", NULL);
  g_autofree char *informations = g_build_filename (pool, "informations.json", NULL);
  g_autofree char *dead = g_build_filename (jobs, "gone@1.json", NULL);
  g_autofree char *text = g_strdup_printf ("{\"job_uri\": \"%s/gone/job\", \"information\": {\"count\": 1}}\n",
                                           f->state[0]);

  g_assert_cmpint (g_mkdir_with_parents (jobs, 0755), ==, 0);
  test_write_file (informations, "{\"total\": 8}\n");
  test_write_file (dead, text);
  test_set_file_age (dead, 7200);
  test_run_or_fail ((const char *[]) { "chown", "-R", f->gp->users->users[0], pool, NULL });
  return pool;
}

/* The issue's case: in the group's folder (group-writable, not sticky)
 * the second user renames the first user's resource folder n1 away and
 * puts a link to another pool of the first user's in its place. Every
 * command of the first user's refuses n1 in one line (exit 74) and
 * touches nothing in that pool. */
static void
test_link_resource_folder (Fixture *f, gconstpointer data)
{
  static const char *commands[][7] = {
    { "clean", "--min-age", "0", "n1", NULL },
    { "set", "n1", "total=5", NULL },
    { "run", "--no-wait", "--need", "n1=1", "--", "true", NULL },
    { "status", NULL },
  };
  g_autofree char *own = make_own_pool (f);
  g_autofree char *link = g_build_filename (f->gp->pool, "n1", NULL);
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(GBytes) out = NULL;

  use_config (f, "[resource n1]\ntype=countertoken\npath=@DIR@/n1\ntotal=2\n");
  g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--need", "n1", "--", "true", NULL), ==, 0);
  before = tree_snapshot (own);
  g_free (f->victim);
  f->victim = g_strdup (own);   /* $2 */
  plant (f, "mv \"$1/n1\" \"$1/n1.old\"; ln -s \"$2\" \"$1/n1\"");

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      const char **c = commands[i];
      g_autoptr(GBytes) err = NULL;
      g_autofree char *text = NULL;
      int status;

      g_clear_pointer (&out, g_bytes_unref);
      status = tessera_in (f, NULL, &out, &err, c[0], c[1], c[2], c[3], c[4], c[5], c[6], NULL);
      text = g_strndup (g_bytes_get_size (err) > 0 ? g_bytes_get_data (err, NULL) : "", g_bytes_get_size (err));
      g_test_message ("%s: %d: %s", c[0], status, text);
      assert_tree_unchanged (own, before);
      g_assert_cmpint (status, ==, 74);
      /* One line, naming the link. */
      g_assert_true (g_str_has_prefix (text, "tessera: "));
      g_assert_nonnull (strstr (text, link));
      g_assert_nonnull (strchr (text, '\n'));
      g_assert_cmpstr (strchr (text, '\n'), ==, "\n");
    }
  assert_tree_unchanged (own, before);
  g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
}

/* Links that nobody else can have put there are followed: in a folder
 * only its owner (the first user, or root) may write, and in a sticky
 * folder when the link is the first user's (or root's, or the folder's
 * owner's); one of the second user's in a sticky folder is refused. */
static void
test_link_followed_where_safe (Fixture *f, gconstpointer data)
{
  static const struct { const char *path; int status; } cases[] = {
    { "@OWN@/pools/n1", 0 },                   /* the first user's folder */
    { "@TMP@/sticky/mine/n1", 0 },             /* the first user's link in a sticky folder */
    { "@TMP@/sticky/root/n1", 0 },             /* root's */
    { "@TMP@/sticky/theirs/n1", 74 },          /* the second user's */
  };
  g_autofree char *sticky = g_build_filename (f->gp->tmp, "sticky", NULL);
  g_autofree char *n1_info = g_build_filename (f->gp->pool, "n1", "informations.json", NULL);
  g_autofree char *root_link = g_build_filename (sticky, "root", NULL);

  g_assert_cmpint (g_mkdir (sticky, 0755), ==, 0);
  g_assert_cmpint (chmod (sticky, 01777), ==, 0);
  g_assert_cmpint (symlink (f->gp->pool, root_link), ==, 0);
  /* The first user owns the group's pool folder, so that her `set` is
   * the pool owner's (a member who only made n1 in it is not). */
  test_run_or_fail ((const char *[]) { "chown", f->gp->users->users[0], f->gp->pool, NULL });
  sh_as (f, f->gp->users->users[0], "ln -s \"$1\" \"$(dirname \"$1\")/sticky/mine\"; ln -s \"$1\" \"$2/../pools\"");
  plant (f, "ln -s \"$1\" \"$(dirname \"$1\")/sticky/theirs\"");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *config = g_strdup_printf ("[resource n1]\ntype=countertoken\npath=%s\ntotal=2\n", cases[i].path);
      g_autofree char *set = g_strdup_printf ("total=%u", 3 + i);
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GBytes) err = NULL;

      g_test_message ("%s", cases[i].path);
      use_config (f, config);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "run", "--no-wait", "--need", "n1", "--", "true", NULL),
                       ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, &err, "set", "n1", set, NULL), ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "status", NULL), ==, cases[i].status);
      g_clear_pointer (&out, g_bytes_unref);
      g_assert_cmpint (tessera_in (f, NULL, &out, NULL, "clean", "n1", NULL), ==, cases[i].status);
      if (cases[i].status == 0)
        {
          g_autoptr(JsonParser) parser = json_parser_new ();
          g_autoptr(GError) error = NULL;

          json_parser_load_from_file (parser, n1_info, &error);
          g_assert_no_error (error);
          g_assert_cmpint (json_object_get_int_member (json_node_get_object (json_parser_get_root (parser)), "total"),
                           ==, 3 + i);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Processes hidden by hidepid=2: the second user's holder counts. */

static void
test_hidepid (Fixture *f, gconstpointer data)
{
  const char *hidden[] = { "unshare", "--mount", "sh", "-c",
                           "mount -t proc -o hidepid=2 proc /proc && exec \"$@\"", "sh", NULL };
  g_autoptr(Helper) holder = NULL;
  g_autofree char *text = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  guint before;

  make_pool (f);
  holder = hold_as_second (f, "r=3");
  before = test_count_entries (jobs);

  /* The mount namespace really hides the holder. */
  {
    g_autoptr(GPtrArray) ps = g_ptr_array_new_with_free_func (g_free);
    g_autoptr(GBytes) out = NULL;

    for (guint i = 0; hidden[i] != NULL; i++)
      g_ptr_array_add (ps, g_strdup (hidden[i]));
    test_argv_as_user (ps, f->gp->users->users[0], BOUND_S);
    g_ptr_array_add (ps, g_strdup ("sh"));
    g_ptr_array_add (ps, g_strdup ("-c"));
    g_ptr_array_add (ps, g_strdup ("ls /proc | grep -c '^[0-9]'"));
    g_ptr_array_add (ps, NULL);
    g_assert_cmpint (test_run_capture (ps, &out, NULL), ==, 0);
    g_test_message ("processes seen by the first user: %.*s", (int) g_bytes_get_size (out),
                    (const char *) g_bytes_get_data (out, NULL));
    g_assert_cmpint (g_ascii_strtoll (g_bytes_get_data (out, NULL), NULL, 10), <, 10);
  }
  first_user_round_in (f, hidden);
  text = status_text (f, hidden);
  g_assert_nonnull (strstr (text, "5 of 8 free"));
  g_assert_null (strstr (text, "dead"));
  g_assert_cmpuint (test_count_entries (jobs), ==, before);
  release_held (holder);
}

/* ---------------------------------------------------------------------- */
/* What a member may do to another member's share (issue 38, defect 4) */

/* `tessera init POOL --group GROUP` as root, as a site sets a pool up. */
static void
init_group_pool (Fixture *f)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *state = g_build_filename (f->gp->tmp, "root-state", NULL);
  g_autoptr(GBytes) out = NULL;
  int status;

  g_assert_cmpint (g_mkdir_with_parents (state, 0700), ==, 0);
  test_argv_tessera (argv, state, f->gp->config);
  for (const char *const *a = (const char *[]) { "init", f->gp->pool, "--group", f->gp->users->group, NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("init -> %d: %.*s", status, (int) g_bytes_get_size (out), (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 0);
}

/* The first user's `tessera run --need NEED` holding until its input is
 * closed. */
static Helper *
hold_as_first (Fixture *f, const char *need)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  Helper *holder;

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  for (const char *const *a = (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo held; exec cat", NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  holder = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (holder, "held", BOUND_S);
  return holder;
}

/* The only lock file in r/jobs/ (its path). */
static char *
only_lock_file (Fixture *f)
{
  g_autofree char *jobs = g_build_filename (f->gp->pool, "r", "jobs", NULL);
  g_autoptr(GDir) dir = g_dir_open (jobs, 0, NULL);
  char *found = NULL;
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, ".json"))
      {
        g_assert_null (found);
        found = g_build_filename (jobs, name, NULL);
      }
  g_assert_nonnull (found);
  return found;
}

/* In a pool made by `tessera init --group`, the second member can
 * neither rewrite the first member's lock file (in place), nor replace it
 * (by rename), nor move or delete it: lock files are writable by their
 * owner only and jobs/ is sticky. The first member's holding still
 * counts: the whole pool is taken. */
static void
test_member_cannot_touch_another_share (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *script = NULL;
  int status;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  g_assert_true (g_file_get_contents (lock_file, &before, NULL, NULL));
  script = g_strdup_printf ("f='%s'; "
                            "if printf '{\"job_uri\": \"x\", \"information\": {\"count\": 0}}' > \"$f\"; then "
                            "  echo \"rewrote $f in place\"; exit 1; fi; "
                            "printf '{\"job_uri\": \"x\", \"information\": {\"count\": 0}}' > \"$3/forged.json\"; "
                            "if mv -f -T \"$3/forged.json\" \"$f\"; then echo \"replaced $f by a rename\"; exit 1; fi; "
                            "if mv -T \"$f\" \"$f.away\"; then echo \"moved $f away\"; exit 1; fi; "
                            "if rm -f \"$f\"; then echo \"deleted $f\"; exit 1; fi",
                            lock_file);
  plant (f, script);
  g_assert_true (g_file_get_contents (lock_file, &after, NULL, NULL));
  g_assert_cmpstr (after, ==, before);

  /* The first member's holding counts for the second. */
  test_argv_tessera_as (argv, f->gp->users->users[1], f->state[1], f->gp->config, BOUND_S);
  for (const char *const *a = (const char *[]) { "run", "--no-wait", "--need", "r", "--", "true", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, NULL);
  g_test_message ("second member's run -> %d: %.*s", status, (int) g_bytes_get_size (out),
                  (const char *) g_bytes_get_data (out, NULL));
  g_assert_cmpint (status, ==, 75);
  release_held (holder);
}

/* `tessera ARGS…` as @user (NULL: root), its status; its output, whole
 * in @out (and checked to be one line when @one_line). */
static int
tessera_by (Fixture *f, const char *user, char **out, gboolean one_line, const char *first, ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) bytes = NULL;
  va_list ap;
  int status;

  if (user == NULL)
    {
      g_autofree char *state = g_build_filename (f->gp->tmp, "root-state", NULL);

      g_assert_cmpint (g_mkdir_with_parents (state, 0700), ==, 0);
      test_argv_tessera (argv, state, f->gp->config);
    }
  else
    test_argv_tessera_as (argv, user, g_str_equal (user, f->gp->users->users[0]) ? f->state[0] : f->state[1],
                          f->gp->config, BOUND_S);
  va_start (ap, first);
  for (const char *arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (argv, g_strdup (arg));
  va_end (ap);
  g_ptr_array_add (argv, NULL);
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

/* Changing a pool's capacity, forcing another user's holder out and
 * retiring a host are for root and the pool's owner (here root, which
 * made it with `tessera init --group`): a member is refused in one line
 * with status 77 (EX_NOPERM) and changes nothing; root succeeds. */
static void
test_member_is_no_administrator (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *base = NULL;
  g_autofree char *job = NULL;
  g_autofree char *out = NULL;
  const char *member = f->gp->users->users[1];

  init_group_pool (f);
  holder = hold_as_first (f, "r=1");
  lock_file = only_lock_file (f);
  base = g_path_get_basename (lock_file);
  job = g_strndup (base, strlen (base) - strlen (".json"));

  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "set", "r", "total=100", NULL), ==, 77);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "clean", "--force", "r", job, NULL), ==, 77);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, TRUE, "clean", "--host", "retired.example", "--yes", NULL), ==, 77);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "7 of 8 free"));

  /* Root, the pool's owner, may. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "set", "r", "total=9", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "retired.example", "--yes", NULL), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--force", "r", job, NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "9 of 9 free"));
  /* Its lock file forced out, the holder may say so and fail. */
  helper_close_stdin (holder);
  helper_wait (holder);
}

/* Each of @resource's parts in the pool (informations.json only @with
 * one: a mutex has none): owned by root (who ran init), the group's and
 * setgid; the folders sticky, hosts/ too (no member removes another's
 * mark of a host there: issue 38, F3). */
static void
assert_owned_by_root (Fixture *f, const char *resource, gboolean with_informations)
{
  static const struct { const char *name; gboolean folder, sticky; } parts[] = {
    { "", TRUE, TRUE }, { "jobs", TRUE, TRUE }, { "runs", TRUE, TRUE }, { "queue", TRUE, TRUE },
    { "hosts", TRUE, TRUE }, { "informations.json", FALSE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      g_autofree char *path = g_build_filename (f->gp->pool, resource, parts[i].name, NULL);
      struct stat st;

      if (!parts[i].folder && !with_informations)
        continue;
      if (lstat (path, &st) < 0)
        g_error ("init did not make %s: %s", path, g_strerror (errno));
      g_test_message ("%s: uid %u, mode %o", path, (guint) st.st_uid, (guint) st.st_mode);
      g_assert_cmpuint (st.st_uid, ==, 0);
      g_assert_cmpuint (st.st_gid, ==, f->gp->users->gid);
      g_assert_true (parts[i].folder ? S_ISDIR (st.st_mode) : S_ISREG (st.st_mode));
      if (parts[i].folder)
        {
          g_assert_cmpuint (st.st_mode & (S_ISGID | S_IRWXG), ==, S_ISGID | S_IRWXG);
          g_assert_cmpuint (st.st_mode & S_ISVTX, ==, parts[i].sticky ? S_ISVTX : 0);
        }
    }
}

/* `tessera init --group` leaves no part of a resource for a member to
 * make (and own): each resource's folder, jobs/, runs/, queue/, hosts/,
 * informations.json and a mutex's intents/ are root's, as a member who owned runs/ could
 * rename another's entries there. */
static void
test_init_owns_every_part (Fixture *f, gconstpointer data)
{
  g_autofree char *intents = g_build_filename (f->gp->pool, "m", "intents", NULL);
  struct stat st;

  init_group_pool (f);
  assert_owned_by_root (f, "r", TRUE);
  assert_owned_by_root (f, "m", FALSE);
  /* The mutex's own part, which its type makes (prepare_pool). */
  if (lstat (intents, &st) < 0)
    g_error ("init did not make %s: %s", intents, g_strerror (errno));
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpuint (st.st_mode & (S_ISGID | S_ISVTX | S_IRWXG), ==, S_ISGID | S_ISVTX | S_IRWXG);
}

/* A member's folder where a resource of the pool goes (made before
 * root's init) is refused by init in one line naming it and its owner,
 * with status 77, never skipped: the member would own the resource. */
static void
test_init_refuses_a_members_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *folder = g_build_filename (f->gp->pool, "r", NULL);
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", folder, f->gp->users->users[1]);

  plant (f, "mkdir \"$1/r\"");
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "init", f->gp->pool, "--group", f->gp->users->group, NULL), ==, 77);
  g_assert_nonnull (strstr (out, named));
  g_assert_true (strchr (out, '\n') == out + strlen (out) - 1);
}

/* That @out (a command's output, NULL when it said nothing) says @what. */
static void
assert_said (const char *out, const char *what)
{
  if (out == NULL || strstr (out, what) == NULL)
    g_error ("expected “%s” in the output, which was: %s", what, out != NULL ? out : "(nothing)");
}

/* That @out is one line. */
static void
assert_one_line (const char *out)
{
  if (out == NULL || strchr (out, '\n') != out + strlen (out) - 1)
    g_error ("expected one line, not: %s", out != NULL ? out : "(nothing)");
}

/* A resource added to the configuration after init, whose folder a
 * member made by her own mkdir (hers, as init would refuse it): in the
 * group's pool nobody's process believes it, hers neither: each run is
 * refused in one line naming the folder and its owner (74) and makes
 * nothing in it, and status says why (issue 38, point 4). */
static void
test_member_made_resource (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *jobs = g_build_filename (f->gp->pool, "new", "jobs", NULL);
  g_autofree char *folder = g_build_filename (f->gp->pool, "new", NULL);
  const char *member = f->gp->users->users[1];
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", folder, member);
  const char *users[] = { member, f->gp->users->users[0], NULL };

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\n\n"
                 "[resource new]\ntype=countertoken\npath=@DIR@/new\ntotal=2\n");
  /* Her own mkdir (a run makes none there: member-run-makes-no-resource). */
  g_assert_cmpint (g_mkdir (folder, 02775), ==, 0);
  test_run_or_fail ((const char *[]) { "chown", member, folder, NULL });
  for (guint i = 0; users[i] != NULL; i++)
    {
      g_clear_pointer (&out, g_free);
      g_assert_cmpint (tessera_by (f, users[i], &out, FALSE, "run", "--no-wait", "--need", "new", "--", "true", NULL),
                       ==, 74);
      assert_one_line (out);
      assert_said (out, named);
    }
  g_assert_false (g_file_test (jobs, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "new", NULL);
  assert_said (out, named);
}

/* informations.json, the pool's capacity, is its owner's: when root
 * removed it (as the message about a broken one advises), a member's run
 * makes none (she would own the capacity) and says to run init (74); one
 * she planted is believed by nobody, her own runs neither: each is
 * refused in one line naming it and its owner (74), and status says why
 * (issue 38, point 4). Root's init makes it again, root's. */
static void
test_member_informations_not_believed (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *informations = g_build_filename (f->gp->pool, "r", "informations.json", NULL);
  const char *member = f->gp->users->users[1];
  g_autofree char *named = g_strdup_printf ("%s belongs to %s", informations, member);
  const char *users[] = { member, f->gp->users->users[0], NULL };
  struct stat st;

  init_group_pool (f);
  g_assert_cmpint (g_unlink (informations), ==, 0);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r=1", "--", "true", NULL), ==, 74);
  assert_one_line (out);
  assert_said (out, "tessera init");
  g_assert_false (g_file_test (informations, G_FILE_TEST_EXISTS));

  plant (f, "printf '{\"total\": 1000}\\n' > \"$1/r/informations.json\"");
  for (guint i = 0; users[i] != NULL; i++)
    {
      g_clear_pointer (&out, g_free);
      g_assert_cmpint (tessera_by (f, users[i], &out, FALSE, "run", "--no-wait", "--need", "r=100", "--", "true",
                                   NULL), ==, 74);
      assert_one_line (out);
      assert_said (out, named);
    }
  g_clear_pointer (&out, g_free);
  tessera_by (f, f->gp->users->users[0], &out, FALSE, "status", "r", NULL);
  assert_said (out, named);

  /* Root removes it; init makes it again, root's, and the pool serves. */
  g_assert_cmpint (g_unlink (informations), ==, 0);
  init_group_pool (f);
  g_assert_cmpint (g_stat (informations, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--no-wait", "--need", "r=8", "--", "true", NULL),
                   ==, 0);
}

/* hosts/ and queue/ are made by init (root's, sticky: see
 * init-owns-every-part); when they are gone, a member's process makes
 * neither (she would own it, and could remove the other users' marks or
 * entries there): without hosts/ her run cannot leave this host's mark
 * and stops with the line that says to run init (74); without queue/ a
 * waiter past its patience cannot reserve, says so with that line, and
 * waits on as before (75 at its timeout) (issue 38, point 4). */
static void
test_member_makes_no_hosts_or_queue (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *out = NULL;
  g_autofree char *hosts = g_build_filename (f->gp->pool, "r", "hosts", NULL);
  g_autofree char *queue = g_build_filename (f->gp->pool, "r", "queue", NULL);
  g_autofree char *rm_hosts = NULL;
  const char *member = f->gp->users->users[1];

  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\npatience=0\n");
  init_group_pool (f);
  rm_hosts = g_strdup_printf ("rm -rf '%s' '%s'", hosts, queue);
  test_run_or_fail ((const char *[]) { "sh", "-c", rm_hosts, NULL });
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r=1", "--", "true", NULL), ==, 74);
  assert_one_line (out);
  assert_said (out, "tessera init");
  assert_said (out, hosts);
  g_assert_false (g_file_test (hosts, G_FILE_TEST_EXISTS));

  /* hosts/ made again; queue/ still missing. */
  init_group_pool (f);
  g_assert_cmpint (g_rmdir (queue), ==, 0);
  holder = hold_as_first (f, "r=8");
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--timeout", "2", "--need", "r=1", "--", "true", NULL),
                   ==, 75);
  assert_said (out, "tessera init");
  g_assert_false (g_file_test (queue, G_FILE_TEST_EXISTS));
  release_held (holder);
}

/* In a group's pool only its owner (or root) makes a resource's folder:
 * a member's run on a resource added after init is refused in one line
 * that says to run init, and makes nothing (were the folder and its
 * jobs/ hers, she could remove the other members' lock files there). */
static void
test_member_run_makes_no_resource (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *folder = g_build_filename (f->gp->pool, "new", NULL);
  const char *member = f->gp->users->users[1];
  struct stat st;

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\n\n"
                 "[resource new]\ntype=countertoken\npath=@DIR@/new\ntotal=2\n");
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "new", "--", "true", NULL), ==, 74);
  g_assert_nonnull (strstr (out, "tessera init"));
  g_assert_false (g_file_test (folder, G_FILE_TEST_EXISTS));

  /* Once init made it, the member's run goes. */
  init_group_pool (f);
  g_assert_cmpint (g_stat (folder, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "new", "--", "true", NULL), ==, 0);
}

/* In a pool an older init made without runs/ (or with it removed), a
 * member's run makes none (she would own it, and could move another's job
 * folder in it): the run goes, its job folder in her state folder. */
static void
test_member_run_makes_no_runs (Fixture *f, gconstpointer data)
{
  g_autofree char *out = NULL;
  g_autofree char *runs = g_build_filename (f->gp->pool, "r", "runs", NULL);
  const char *member = f->gp->users->users[1];

  init_group_pool (f);
  g_assert_cmpint (g_rmdir (runs), ==, 0);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--need", "r", "--", "true", NULL), ==, 0);
  g_assert_false (g_file_test (runs, G_FILE_TEST_EXISTS));
}

/* Root's `tessera clean` removes the ended job folders of every user in a
 * pool's runs/ (a member's clean removes only her own): a folder whose
 * job lock nobody holds and whose lock files are gone. */
static void
test_root_cleans_ended_job_folders (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  struct passwd *pw = getpwnam (member);
  g_autofree char *out = NULL;
  g_autofree char *own = NULL;
  g_autofree char *job = NULL;
  g_autofree char *file = NULL;
  g_autofree char *uid = NULL;

  if (pw == NULL)
    g_error ("no user %s", member);
  uid = g_strdup_printf ("%u", (guint) pw->pw_uid);
  init_group_pool (f);
  own = g_build_filename (f->gp->pool, "r", "runs", uid, NULL);
  job = g_build_filename (own, "ended-1", NULL);
  g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
  file = g_build_filename (job, "ended.lock", NULL);
  test_write_file (file, "");
  g_free (file);
  file = g_build_filename (job, "ended.pid", NULL);
  test_write_file (file, "123\n");
  g_free (file);
  file = g_build_filename (job, "locks.json", NULL);
  test_write_file (file, "{\"dynamic_locks\": [{\"lock_file_path\": \"/nonexistent/ended@1.json\"}]}");
  test_run_or_fail ((const char *[]) { "chown", "-R", member, own, NULL });

  /* Hers: another member's clean leaves it. */
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, FALSE, "clean", NULL), ==, 0);
  g_assert_true (g_file_test (job, G_FILE_TEST_IS_DIR));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "removed the job folder"));
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (own, G_FILE_TEST_IS_DIR));
}

/* A flock on an ended job's job lock keeps nothing (issue 38; "Who may
 * judge a holder"): `tessera run` holds its job lock with an fcntl lock,
 * never a flock, and anyone who may read the file can flock it, so a
 * flock there proves nothing of the job, as the verdict on a holder
 * already reads it. Another member who flocks a member's ended job lock
 * does not keep root's clean from removing her job folder. */
static void
test_root_cleans_job_folder_flocked_by_another (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  struct passwd *pw = getpwnam (member);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) locker = NULL;
  g_autofree char *out = NULL;
  g_autofree char *own = NULL;
  g_autofree char *job = NULL;
  g_autofree char *lock = NULL;
  g_autofree char *file = NULL;

  if (pw == NULL)
    g_error ("no user %s", member);
  init_group_pool (f);
  own = g_strdup_printf ("%s/r/runs/%u", f->gp->pool, (guint) pw->pw_uid);
  job = g_build_filename (own, "ended-1", NULL);
  g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
  lock = g_build_filename (job, "ended.lock", NULL);
  test_write_file (lock, "");
  file = g_build_filename (job, "ended.pid", NULL);
  test_write_file (file, "{\"type\": \"local\", \"pid\": 123}\n");
  g_free (file);
  file = g_build_filename (job, "locks.json", NULL);
  test_write_file (file, "{\"dynamic_locks\": []}");
  test_run_or_fail ((const char *[]) { "chown", "-R", member, own, NULL });

  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S * 4);
  for (const char *const *a = (const char *[]) { test_python (), "-c", "import fcntl, sys\n"
                                                  "f = open(sys.argv[1], 'r')\n"
                                                  "fcntl.flock(f, fcntl.LOCK_EX)\n"
                                                  "print('held', flush=True)\n"
                                                  "sys.stdin.read()\n", lock, NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  locker = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (locker, "held", BOUND_S);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  helper_close_stdin (locker);
  g_assert_cmpint (helper_wait (locker), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
}

/* `tessera run --need cpu=1 -- true` as the first user, with no
 * --config and no $TESSERA_CONFIG: the configuration is looked for in
 * @config_home, then @config_dirs. Its error output in @err. */
static int
run_found_config (Fixture *f, const char *config_home, const char *config_dirs, char **err)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err_bytes = NULL;
  int status;

  test_argv_as_user (argv, f->gp->users->users[0], BOUND_S);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup ("-u"));
  g_ptr_array_add (argv, g_strdup ("TESSERA_CONFIG"));
  g_ptr_array_add (argv, g_strdup_printf ("XDG_CONFIG_HOME=%s", config_home));
  g_ptr_array_add (argv, g_strdup_printf ("XDG_CONFIG_DIRS=%s", config_dirs));
  g_ptr_array_add (argv, g_strdup_printf ("XDG_STATE_HOME=%s", f->state[0]));
  g_ptr_array_add (argv, g_strdup_printf ("HOME=%s", f->state[0]));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PLUGIN_PATH=%s", g_getenv ("TESSERA_PLUGIN_PATH")));
  g_ptr_array_add (argv, g_strdup (g_getenv ("TESSERA_TOOL")));
  for (const char * const *a = (const char *[]) { "run", "--need", "cpu=1", "--", "true", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  status = test_run_capture (argv, &out, &err_bytes);
  *err = g_strndup (g_bytes_get_size (err_bytes) > 0 ? g_bytes_get_data (err_bytes, NULL) : "",
                    g_bytes_get_size (err_bytes));
  g_test_message ("XDG_CONFIG_HOME=%s XDG_CONFIG_DIRS=%s: %d: %s", config_home, config_dirs, status, *err);
  if (status == 137)
    g_error ("tessera run hung (killed after %d s)", BOUND_S);
  return status;
}

/* @dir/tessera/tessera.conf, a configuration of a cpu pool in @pool. */
static void
write_found_config (const char *dir, const char *pool)
{
  g_autofree char *folder = g_build_filename (dir, "tessera", NULL);
  g_autofree char *file = g_build_filename (folder, "tessera.conf", NULL);
  g_autofree char *text = g_strdup_printf ("[resource cpu]\ntype=countertoken\npath=%s\ntotal=2\n", pool);

  g_assert_cmpint (g_mkdir_with_parents (folder, 0755), ==, 0);
  test_write_file (file, text);
  g_assert_cmpint (chmod (file, 0644), ==, 0);
}

/* Exit 78 and one line that names @folder. */
static void
assert_unreadable_config (int status, const char *err, const char *folder)
{
  g_assert_cmpint (status, ==, 78);
  g_assert_true (g_str_has_prefix (err, "tessera: "));
  g_assert_nonnull (strstr (err, folder));
  g_assert_cmpstr (strchr (err, '\n'), ==, "\n");
}

/* A configuration folder that exists but cannot be read (root's, 0700)
 * is an error (78, one line naming it), never skipped for the next one
 * or the built-in default: the system's tessera/ folder, a folder of
 * $XDG_CONFIG_DIRS, the user's configuration folder. A folder that does
 * not exist is skipped without a word (issue 42, point 2). Fails before:
 * each ran on the built-in default (exit 0). */
static void
test_config_folder_unreadable (Fixture *f, gconstpointer data)
{
  g_autofree char *configured = g_build_filename (f->state[0], "configured-cpu", NULL);
  g_autofree char *nowhere = g_build_filename (f->gp->tmp, "no-such-folder", NULL);
  g_autofree char *etc = g_build_filename (f->gp->tmp, "etc-xdg", NULL);
  g_autofree char *etc_tessera = g_build_filename (etc, "tessera", NULL);
  g_autofree char *closed = g_build_filename (f->gp->tmp, "closed-xdg", NULL);
  g_autofree char *home = g_build_filename (f->gp->tmp, "closed-home", NULL);
  g_autofree char *dirs = NULL;
  g_autofree char *err = NULL;
  int status;

  /* Nothing there: the built-in default, without a word. */
  status = run_found_config (f, nowhere, nowhere, &err);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (err, ==, "");
  g_clear_pointer (&err, g_free);

  /* /etc/xdg/tessera at 0700, root's. */
  write_found_config (etc, configured);
  g_assert_cmpint (chmod (etc, 0755), ==, 0);
  g_assert_cmpint (chmod (etc_tessera, 0700), ==, 0);
  dirs = g_strdup_printf ("%s:%s", nowhere, etc);
  status = run_found_config (f, nowhere, dirs, &err);
  assert_unreadable_config (status, err, etc_tessera);
  g_clear_pointer (&err, g_free);

  /* A folder of $XDG_CONFIG_DIRS at 0700, root's, holding tessera/. */
  write_found_config (closed, configured);
  g_assert_cmpint (chmod (closed, 0700), ==, 0);
  status = run_found_config (f, nowhere, closed, &err);
  assert_unreadable_config (status, err, closed);
  g_clear_pointer (&err, g_free);

  /* The user's configuration folder, root's at 0700: an error before
   * the system's folders are looked at. */
  write_found_config (home, configured);
  g_assert_cmpint (chmod (home, 0700), ==, 0);
  status = run_found_config (f, home, nowhere, &err);
  assert_unreadable_config (status, err, home);
  g_clear_pointer (&err, g_free);

  /* Once readable, the configured pool serves, not the default. */
  g_assert_cmpint (chmod (etc_tessera, 0755), ==, 0);
  status = run_found_config (f, nowhere, dirs, &err);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (configured, G_FILE_TEST_IS_DIR));
}

/* A configuration file or folder that is a symbolic link is followed;
 * one to nothing (a shared mount not mounted on this node) is no
 * configuration that is absent but one that cannot be read: 78, one line
 * naming the link and where it points, never the built-in default. A
 * link to a file the user may not reach (under a folder of root's at
 * 0700) names the file, not its readable folder (issue 42, a review
 * finding). Fail before: the dangling links ran on the built-in default
 * (exit 0, nothing said); the unreachable file's message blamed
 * "the configuration folder …/tessera". */
static void
test_config_link_dangling_or_unreadable (Fixture *f, gconstpointer data)
{
  g_autofree char *configured = g_build_filename (f->state[0], "configured-cpu", NULL);
  g_autofree char *nowhere = g_build_filename (f->gp->tmp, "no-such-folder", NULL);
  g_autofree char *unmounted = g_build_filename (f->gp->tmp, "unmounted", "tessera.conf", NULL);
  g_autofree char *dangling = g_build_filename (f->gp->tmp, "dangling-xdg", NULL);
  g_autofree char *dangling_file = g_build_filename (dangling, "tessera", "tessera.conf", NULL);
  g_autofree char *dangling_dir = g_build_filename (f->gp->tmp, "dangling-dir-xdg", NULL);
  g_autofree char *dangling_folder = g_build_filename (dangling_dir, "tessera", NULL);
  g_autofree char *secret = g_build_filename (f->gp->tmp, "root-only", NULL);
  g_autofree char *secret_file = g_build_filename (secret, "tessera", "tessera.conf", NULL);
  g_autofree char *hidden = g_build_filename (f->gp->tmp, "hidden-xdg", NULL);
  g_autofree char *hidden_file = g_build_filename (hidden, "tessera", "tessera.conf", NULL);
  g_autofree char *hidden_folder = g_build_filename (hidden, "tessera", NULL);
  g_autofree char *err = NULL;
  int status;

  /* tessera/tessera.conf, a link to nothing. */
  g_assert_cmpint (g_mkdir_with_parents (dangling, 0755), ==, 0);
  write_found_config (dangling, configured);
  g_assert_cmpint (g_unlink (dangling_file), ==, 0);
  g_assert_cmpint (symlink (unmounted, dangling_file), ==, 0);
  status = run_found_config (f, nowhere, dangling, &err);
  assert_unreadable_config (status, err, dangling_file);
  g_assert_nonnull (strstr (err, unmounted));
  g_clear_pointer (&err, g_free);

  /* tessera/, a link to nothing. */
  g_assert_cmpint (g_mkdir_with_parents (dangling_dir, 0755), ==, 0);
  g_assert_cmpint (symlink (nowhere, dangling_folder), ==, 0);
  status = run_found_config (f, nowhere, dangling_dir, &err);
  assert_unreadable_config (status, err, dangling_folder);
  g_assert_nonnull (strstr (err, nowhere));
  g_clear_pointer (&err, g_free);

  /* tessera/tessera.conf, a link to a file in root's folder at 0700. */
  write_found_config (secret, configured);
  g_assert_cmpint (chmod (secret, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (hidden_folder, 0755), ==, 0);
  g_assert_cmpint (symlink (secret_file, hidden_file), ==, 0);
  status = run_found_config (f, nowhere, hidden, &err);
  assert_unreadable_config (status, err, hidden_file);
  g_clear_pointer (&err, g_free);

  /* Once it can be reached, the configured pool serves. */
  g_assert_cmpint (chmod (secret, 0755), ==, 0);
  status = run_found_config (f, nowhere, hidden, &err);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_file_test (configured, G_FILE_TEST_IS_DIR));
}

/* The pid of the holder whose lock file is @lock_file (its process). */
static GPid
lock_file_pid (const char *lock_file)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *process;

  g_assert_true (json_parser_load_from_file (parser, lock_file, NULL));
  process = json_object_get_object_member (json_node_get_object (json_parser_get_root (parser)), "process");
  g_assert_nonnull (process);
  return (GPid) json_object_get_int_member (process, "pid");
}

/* The parent of process @pid. */
static GPid
parent_pid (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  if ((line = strstr (status, "\nPPid:")) == NULL)
    g_error ("%s has no PPid line", path);
  return (GPid) atoi (line + strlen ("\nPPid:"));
}

/* A member's holder killed with SIGKILL leaves its lock file, which
 * another member may not delete (jobs/ is sticky): it is judged dead and
 * does not count, and the other member's run says nothing of the file it
 * could not delete. That member's clean lists it with its owner and
 * leaves it; root's clean removes it. */
static void
test_dead_holder_of_another_member (Fixture *f, gconstpointer data)
{
  g_autoptr(Helper) holder = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *base = NULL;
  g_autofree char *out = NULL;
  const char *first = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  GPid command, wrapper;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  base = g_path_get_basename (lock_file);
  /* The holder is killed, the run's wrapper first (its command, which
   * the lock file names, would otherwise give its share back). */
  command = lock_file_pid (lock_file);
  wrapper = parent_pid (command);
  g_assert_cmpint (kill (wrapper, SIGKILL), ==, 0);
  g_assert_true (kill (command, SIGKILL) == 0 || errno == ESRCH);
  g_assert_cmpint (helper_wait (holder), !=, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The dead holder does not count, and its file is its owner's. */
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "run", "--no-wait", "--need", "r=8", "--", "true", NULL), ==, 0);
  g_assert_true (out == NULL || strstr (out, base) == NULL);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The member's clean names it and its owner, and leaves it. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", "--min-age", "0", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, base));
  g_assert_nonnull (strstr (out, first));
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* Root's removes it. */
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--min-age", "0", "r", NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "status", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, "8 of 8 free"));
}

/* The job lock of the holder whose lock file is @lock_file: its job_uri
 * with its last suffix replaced by ".lock" (the seed's rule). */
static char *
lock_file_job_lock (const char *lock_file)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *base = NULL;
  const char *job_uri, *dot;

  g_assert_true (json_parser_load_from_file (parser, lock_file, NULL));
  job_uri = json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)), "job_uri");
  if (job_uri == NULL)
    g_error ("%s names no job", lock_file);
  base = g_path_get_basename (job_uri);
  dot = strrchr (base, '.');
  if (dot == NULL || dot == base)
    return g_strconcat (job_uri, ".lock", NULL);
  return g_strdup_printf ("%.*s.lock", (int) (strlen (job_uri) - strlen (dot)), job_uri);
}

/* A member who may only read another's job lock locks it (data: a
 * classic or an OFD fcntl read lock, a shared or an exclusive flock: what
 * a descriptor opened for reading can take) after that holder died. A
 * judge to whom the job lock is the only witness (here in a pid namespace
 * of its own, as in a container) must not take that lock for the
 * holder's: the holder, whose job lock holds no write lock, is gone and
 * its share is taken (issue 38, "Who may judge a holder"). */
static void
test_dead_holder_job_lock_read_locked (Fixture *f, gconstpointer data)
{
  const char *own_pid_namespace[] = { "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", NULL };
  const char *kind = data;
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(Helper) holder = NULL;
  g_autoptr(Helper) reader = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *job_lock = NULL;
  GPid command, wrapper;

  init_group_pool (f);
  holder = hold_as_first (f, "r=8");
  lock_file = only_lock_file (f);
  job_lock = lock_file_job_lock (lock_file);
  g_assert_true (g_file_test (job_lock, G_FILE_TEST_IS_REGULAR));
  command = lock_file_pid (lock_file);
  wrapper = parent_pid (command);
  g_assert_cmpint (kill (wrapper, SIGKILL), ==, 0);
  g_assert_true (kill (command, SIGKILL) == 0 || errno == ESRCH);
  g_assert_cmpint (helper_wait (holder), !=, 0);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));

  /* The second member, who may read the job lock, locks it. */
  test_argv_as_user (argv, f->gp->users->users[1], BOUND_S * 4);
  g_ptr_array_add (argv, g_test_build_filename (G_TEST_BUILT, "tessera-helper", NULL));
  g_ptr_array_add (argv, g_strdup ("read-lock"));
  g_ptr_array_add (argv, g_strdup (job_lock));
  g_ptr_array_add (argv, g_strdup (kind));
  g_ptr_array_add (argv, NULL);
  reader = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (reader, "LOCKED", BOUND_S);

  /* In a pid namespace of its own, the holder's pid says nothing: its job
   * lock is the judge, and the reader's lock is not the holder's. */
  g_assert_cmpint (tessera_in (f, own_pid_namespace, &out, NULL, "run", "--no-wait", "--need", "r=8", "--", "true",
                               NULL), ==, 0);
  g_assert_true (helper_is_running (reader));
  helper_close_stdin (reader);
  g_assert_cmpint (helper_wait (reader), ==, 0);
}

/* A user outside the pool's group: `tessera run` (which must write in the
 * pool) and, once the pool is the group's only (2770), `tessera status`
 * fail naming the cause on each line, that the user is not in the group,
 * not only a folder or file it cannot open (issue 42, point 8). */
static void
test_outsider_told_not_in_group (Fixture *f, gconstpointer data)
{
  g_autofree char *outsider = g_strdup_printf ("txo%d", (int) getpid ());
  g_autofree char *state = NULL;
  g_autofree char *cause = NULL;
  g_autofree char *said = NULL;
  const char *commands[][6] = {
    { "run", "--need", "r=1", "--", "true", NULL },
    { "status", NULL },
  };

  test_run_or_fail ((const char *[]) { "useradd", "-M", "-N", "-s", "/bin/sh", outsider, NULL });
  state = test_user_folder (f->gp->tmp, outsider);
  cause = g_strdup_printf ("not in group %s", f->gp->users->group);
  init_group_pool (f);
  for (guint round = 0; round < 2; round++)
    {
      /* init's pool, others may look (2775); then the group's only. */
      if (round == 1)
        g_assert_cmpint (chmod (f->gp->pool, 02770), ==, 0);
      for (guint c = 0; c < (round == 0 ? 1 : G_N_ELEMENTS (commands)); c++)
        {
          g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
          g_autoptr(GBytes) bytes = NULL;
          int status;

          test_argv_tessera_as (argv, outsider, state, f->gp->config, BOUND_S);
          for (guint a = 0; commands[c][a] != NULL; a++)
            g_ptr_array_add (argv, g_strdup (commands[c][a]));
          g_ptr_array_add (argv, NULL);
          status = test_run_capture (argv, &bytes, NULL);
          g_free (said);
          said = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
          g_test_message ("outsider: %s (pool %s) -> %d: %s", commands[c][0], round == 0 ? "2775" : "2770", status,
                          said);
          g_assert_cmpint (status, !=, 0);
          /* One line per resource it could not use, each with the cause. */
          {
            g_auto(GStrv) lines = g_strsplit (said, "\n", -1);

            g_assert_nonnull (lines[0]);
            g_assert_cmpstr (lines[0], !=, "");
            for (guint l = 0; lines[l] != NULL && lines[l + 1] != NULL; l++)
              g_assert_nonnull (strstr (lines[l], cause));
          }
        }
    }
  test_run_or_fail ((const char *[]) { "userdel", outsider, NULL });
}

/* ---------------------------------------------------------------------- */
/* The fencing counter: what a member plants beside ipc.lock (issue 40,
 * point 3; issue 38) */

/* The uid of @user. */
static guint
uid_of (const char *user)
{
  struct passwd *pw = getpwnam (user);

  if (pw == NULL)
    g_error ("no user %s", user);
  return (guint) pw->pw_uid;
}

/* The fencing token a `tessera run --need r` of @user (NULL: root) gives
 * its command; fails the test when the run fails. What the run said, its
 * warnings too, in *@said when given. */
static gint64
users_token (Fixture *f, const char *user, char **said)
{
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  gint64 value = 0;
  gboolean found = FALSE;
  int status;

  status = tessera_by (f, user, &out, FALSE, "run", "--no-wait", "--need", "r", "--",
                       "sh", "-c", "printf '%s\\n' \"${TESSERA_FENCING_TOKEN-unset}\"", NULL);
  if (status != 0)
    g_error ("the run of %s failed (%d): %s", user != NULL ? user : "root", status, out);
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && !found; i++)
    found = g_str_has_prefix (lines[i], "r:") &&
            g_ascii_string_to_signed (lines[i] + 2, 10, 1, G_MAXINT64, &value, NULL);
  if (!found)
    g_error ("the command was given no TESSERA_FENCING_TOKEN r:TOKEN: %s", out);
  if (said != NULL)
    *said = g_steal_pointer (&out);
  return value;
}

/* The fencing token a `tessera run --need r` of the first user gives its
 * command; fails the test when the run fails. */
static gint64
first_users_token (Fixture *f)
{
  return users_token (f, f->gp->users->users[0], NULL);
}

/* The bound of the fencing counter for the clock now, as the library
 * reckons it: 2^20 a second since 2020-01-01 UTC, the clock read as no
 * earlier than 2026-01-01 UTC. */
static gint64
fence_bound_now (void)
{
  gint64 us = MAX (g_get_real_time (), G_GINT64_CONSTANT (1767225600) * G_USEC_PER_SEC) -
              G_GINT64_CONSTANT (1577836800) * G_USEC_PER_SEC;

  return us / G_USEC_PER_SEC * 1048576 + us % G_USEC_PER_SEC * 1048576 / G_USEC_PER_SEC;
}

/* A member writes the largest number but one in the part of the counter
 * her name gives (fence.UID, hers, a regular file): the next grants still
 * succeed, their tokens rise, and stay far below the largest value; once
 * she removes it, a grant still succeeds. Fails before: the first grant
 * after it takes 2^63 - 1, and from then on every run fails, saying that
 * the counter is at its largest value. */
static void
test_fence_huge_value (Fixture *f, gconstpointer data)
{
  guint member = uid_of (f->gp->users->users[1]);
  g_autofree char *plant_huge = g_strdup_printf ("printf '9223372036854775806\\n' > \"$1/r/fence.%u\"", member);
  g_autofree char *unplant = g_strdup_printf ("rm -f \"$1/r/fence.%u\"", member);
  gint64 tokens[4];

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  plant (f, plant_huge);
  tokens[1] = first_users_token (f);
  tokens[2] = first_users_token (f);
  plant (f, unplant);
  tokens[3] = first_users_token (f);
  g_test_message ("tokens: %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                  tokens[0], tokens[1], tokens[2], tokens[3]);
  for (guint i = 1; i < G_N_ELEMENTS (tokens); i++)
    g_assert_cmpint (tokens[i], >, tokens[i - 1]);
  g_assert_cmpint (tokens[3], <, G_GINT64_CONSTANT (1) << 62);
}

/* A member's part above the bound of this host's clock, as a host whose
 * clock is ahead writes once the tokens were raised to its bound (here
 * 2^30, about 17 minutes, above it): the first user's next grants still
 * give tokens above it (tokens never go back from one user to another),
 * and her run warns, once, naming the part. Fails before: the token is
 * the bound plus one, below the member's. */
static void
test_fence_clock_ahead (Fixture *f, gconstpointer data)
{
  guint member = uid_of (f->gp->users->users[1]);
  g_autofree char *part = g_strdup_printf ("fence.%u", member);
  g_autofree char *part_path = g_build_filename (f->gp->pool, "r", part, NULL);
  g_autofree char *said = NULL;
  g_autofree char *script = NULL;
  gint64 planted, tokens[2];

  init_group_pool (f);
  g_assert_cmpint (first_users_token (f), >, 0);
  planted = fence_bound_now () + (G_GINT64_CONSTANT (1) << 30);
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/%s\"", planted, part);
  plant (f, script);
  tokens[0] = users_token (f, f->gp->users->users[0], &said);
  tokens[1] = first_users_token (f);
  g_test_message ("planted %" G_GINT64_FORMAT ", tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT, planted,
                  tokens[0], tokens[1]);
  g_assert_cmpint (tokens[0], >, planted);
  g_assert_cmpint (tokens[1], >, tokens[0]);
  g_assert_nonnull (strstr (said, part_path));
}

/* The part of a host whose clock is ahead, as it is seen where every
 * other user's part is owned by nobody (NFS with root_squash or
 * all_squash, or user names that do not map): fence.4242, the member's,
 * a quarter of the slack above this host's bound (the tokens had reached
 * the bound, as after a planted value, and that host's bound is ahead).
 * The first user's next token is above it: tokens keep their order across
 * hosts whose clocks differ by less than an hour, squashed or not. Fails
 * before: a part whose owner is not its name's counted only up to the
 * bound, and the token (the bound and one) was below the other host's. */
static void
test_fence_clock_ahead_squashed (Fixture *f, gconstpointer data)
{
  g_autofree char *script = NULL;
  gint64 planted, token;

  init_group_pool (f);
  g_assert_cmpint (first_users_token (f), >, 0);
  planted = fence_bound_now () + (G_GINT64_CONSTANT (1) << 30);
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/fence.4242\"", planted);
  plant (f, script);
  token = first_users_token (f);
  g_test_message ("planted %" G_GINT64_FORMAT ", token %" G_GINT64_FORMAT, planted, token);
  g_assert_cmpint (token, >, planted);
}

/* A member plants root's part (fence.0, hers) holding the largest number
 * but one: it is not root's, so root counts it as everyone does, up to
 * the bound and its slack (2^32); root's token stays at most one above
 * that, far below the largest number, and the first user's next token is
 * above root's. */
static void
test_fence_root_name_planted (Fixture *f, gconstpointer data)
{
  gint64 tokens[3], bound;

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  plant (f, "printf '9223372036854775806\\n' > \"$1/r/fence.0\"");
  tokens[1] = users_token (f, NULL, NULL);
  bound = fence_bound_now ();
  tokens[2] = first_users_token (f);
  g_test_message ("tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " (root's; bound %" G_GINT64_FORMAT "), %"
                  G_GINT64_FORMAT, tokens[0], tokens[1], bound, tokens[2]);
  g_assert_cmpint (tokens[1], >, tokens[0]);
  g_assert_cmpint (tokens[1], <=, bound + (G_GINT64_CONSTANT (1) << 32) + 1);
  g_assert_cmpint (tokens[2], >, tokens[1]);
}

/* A member's part that is no number, a FIFO, a folder, a link or longer
 * than any part blocks no grant: each is left out, and the tokens still
 * rise. Fails before: the first, junk, stops the run ("does not hold a
 * number"). */
static void
test_fence_unreadable_parts (Fixture *f, gconstpointer data)
{
  static const char *kinds[] = {
    "printf 'junk\\n' > \"$f\"",
    "mkfifo \"$f\"",
    "mkdir \"$f\"",
    "ln -s \"$2/a.json\" \"$f\"",
    "head -c 200 /dev/zero | tr '\\0' 7 > \"$f\"",
  };
  guint member = uid_of (f->gp->users->users[1]);
  gint64 last;

  init_group_pool (f);
  last = first_users_token (f);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *script = g_strdup_printf ("f=\"$1/r/fence.%u\"; %s", member, kinds[i]);
      g_autofree char *unplant = g_strdup_printf ("rm -rf \"$1/r/fence.%u\"", member);
      gint64 token;

      g_test_message ("planted: %s", kinds[i]);
      plant (f, script);
      token = first_users_token (f);
      g_assert_cmpint (token, >, last);
      g_assert_cmpint (token, <, 1000000000);
      last = token;
      plant (f, unplant);
    }
}

/* A part whose owner is not the user its name gives (fence.1, the
 * member's), as every other user's part is seen on NFS with root_squash
 * or all_squash, or where the names of users do not map (owned by
 * nobody): it counts, up to the bound and its slack (2^32), so a value
 * above the tokens given so far still raises the next token above it;
 * 2^63 - 2 there moves the tokens to the bound and its slack, no further.
 * Fails before: such a part was left out, and the token stays below it. */
static void
test_fence_part_of_another_owner (Fixture *f, gconstpointer data)
{
  g_autofree char *script = NULL;
  gint64 tokens[3], planted;

  init_group_pool (f);
  tokens[0] = first_users_token (f);
  planted = tokens[0] + 1000000;
  script = g_strdup_printf ("printf '%" G_GINT64_FORMAT "\\n' > \"$1/r/fence.1\"", planted);
  plant (f, script);
  tokens[1] = first_users_token (f);
  plant (f, "printf '9223372036854775806\\n' > \"$1/r/fence.2\"");
  tokens[2] = first_users_token (f);
  g_test_message ("tokens %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " (planted %" G_GINT64_FORMAT "), %"
                  G_GINT64_FORMAT, tokens[0], tokens[1], planted, tokens[2]);
  g_assert_cmpint (tokens[1], >, planted);
  g_assert_cmpint (tokens[2], >, tokens[1]);
  g_assert_cmpint (tokens[2], <=, fence_bound_now () + (G_GINT64_CONSTANT (1) << 32) + 1);
}

/* As many names of the first user's parts as the library tries: fence.UID
 * and fence.UID.1 to fence.UID.15. */
#define FENCE_NAMES 16

/* A member plants the first user's own parts (fence.UID, fence.UID.now
 * and fence.UID.1 to .15, hers) before that user's first grant: the
 * sticky folder lets the first user replace none. Her run fails in one
 * line naming the planted fence.UID and its owner. Once the member has
 * removed fence.UID.2 to .15, the first user's grants succeed, writing her
 * parts as fence.UID.2, with tokens above every part counted: the planted
 * ones (up to the bound) and the member's own fence.MEMBER.3, read as
 * hers. The member's clean leaves the planted parts; root's clean removes
 * them (fence.UID.1 too), saying so, and leaves fence.UID.2 and
 * fence.MEMBER.3; the first user's tokens still rise. Fails before: the
 * grant fails while fence.UID is planted. */
static void
test_fence_own_name_taken (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  guint first = uid_of (f->gp->users->users[0]);
  guint second = uid_of (member);
  g_autofree char *script = g_strdup_printf ("printf '1000000\\n' > \"$1/r/fence.%u\"; "
                                             "printf '1000000 x\\n' > \"$1/r/fence.%u.now\"; "
                                             "for i in $(seq 1 %d); do printf '2000000\\n' > \"$1/r/fence.%u.$i\"; done; "
                                             "printf '3000000\\n' > \"$1/r/fence.%u.3\"",
                                             first, first, FENCE_NAMES - 1, first, second);
  g_autofree char *unplant = g_strdup_printf ("for i in $(seq 2 %d); do rm \"$1/r/fence.%u.$i\"; done",
                                              FENCE_NAMES - 1, first);
  g_autofree char *name = g_strdup_printf ("fence.%u", first);
  g_autofree char *path = g_build_filename (f->gp->pool, "r", name, NULL);
  g_autofree char *now_path = g_strconcat (path, ".now", NULL);
  g_autofree char *first_path = g_strconcat (path, ".1", NULL);
  g_autofree char *second_path = g_strconcat (path, ".2", NULL);
  g_autofree char *members_name = g_strdup_printf ("fence.%u.3", second);
  g_autofree char *members_path = g_build_filename (f->gp->pool, "r", members_name, NULL);
  g_autofree char *out = NULL;
  struct stat st;
  gint64 token;

  init_group_pool (f);
  plant (f, script);
  g_assert_cmpint (tessera_by (f, f->gp->users->users[0], &out, TRUE, "run", "--no-wait", "--need", "r", "--",
                               "true", NULL), !=, 0);
  g_assert_nonnull (strstr (out, path));
  g_assert_nonnull (strstr (out, member));

  plant (f, unplant);
  token = first_users_token (f);
  g_assert_cmpint (token, >, 3000000);
  g_assert_cmpint (lstat (second_path, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpuint (st.st_uid, ==, first);
  g_assert_cmpint (first_users_token (f), >, token);

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", "r", NULL), ==, 0);
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (first_path, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "r", NULL), ==, 0);
  g_assert_nonnull (strstr (out, path));
  g_assert_nonnull (strstr (out, first_path));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (now_path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (first_path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (second_path, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (members_path, G_FILE_TEST_EXISTS));
  token = first_users_token (f);
  g_assert_cmpint (first_users_token (f), >, token);
}

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
  for (const char *const *a = (const char *[]) { "sh", "-c", "echo $$; exec cat", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
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
  r = json_array_get_object_element (json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)),
                                                                  "resources"), 0);
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
  g_autofree char *entry = NULL;
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_USEC_PER_SEC;
  gint64 ticket;

  init_group_pool (f);
  use_config (f, "[resource r]\ntype=countertoken\npath=@DIR@/r\ntotal=8\npatience=0\n");
  plant_queue_entry (f, "1", 1, "9223372036854775807");
  holder = hold_as_first (f, "r=8");

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  for (const char *const *a = (const char *[]) { "run", "--need", "r=1", "--", "true", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  waiter = g_subprocess_newv ((const char * const *) argv->pdata, G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error);
  g_assert_no_error (error);
  /* Its entry, beside the planted one. */
  while (entry == NULL)
    {
      g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".json") && !g_str_equal (name, "evil@1.json"))
          entry = g_build_filename (queue, name, NULL);
      if (entry == NULL && g_get_monotonic_time () > deadline)
        g_error ("the waiter never entered %s within %d s", queue, BOUND_S);
      if (entry == NULL)
        g_usleep (10 * 1000);
    }
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
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_USEC_PER_SEC;
  Helper *waiter;

  test_argv_tessera_as (argv, f->gp->users->users[0], f->state[0], f->gp->config, BOUND_S * 4);
  for (const char *const *a = (const char *[]) { "run", "--need", need, "--", "sh", "-c", "echo got; exec cat", NULL };
       *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  *entry = NULL;
  while (*entry == NULL)
    {
      g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_suffix (name, ".json") && !g_strv_contains (others, name))
          *entry = g_strdup (name);
      if (*entry == NULL && g_get_monotonic_time () > deadline)
        g_error ("the waiter for %s never entered %s within %d s", need, queue, BOUND_S);
      if (*entry == NULL)
        g_usleep (10 * 1000);
    }
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
  gint64 deadline = g_get_monotonic_time () + BOUND_S * G_USEC_PER_SEC;
  gboolean entered = FALSE;
  Helper *waiter;

  for (const char *const *a = (const char *[]) { "sh", "-c", "exec \"$@\" 2>&1", "sh", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  test_argv_as_user (argv, user, BOUND_S * 4);
  g_ptr_array_add (argv, g_strdup ("env"));
  g_ptr_array_add (argv, g_strdup_printf ("TESSERA_PATIENCE=%s", patience));
  test_argv_tessera (argv, state, f->gp->config);
  for (const char *const *a = (const char *[]) { "run", "--need", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, g_strdup_printf ("r=%s", count));
  for (const char *const *a = (const char *[]) { "--name", name, "--", "true", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, g_strdup (*a));
  g_ptr_array_add (argv, NULL);
  waiter = helper_spawn_argv (NULL, (const char * const *) argv->pdata);
  helper_expect_line (waiter, "tessera: waiting for r", BOUND_S);
  while (!entered)
    {
      g_autoptr(GDir) dir = g_dir_open (queue, 0, NULL);
      const char *entry;

      while (dir != NULL && !entered && (entry = g_dir_read_name (dir)) != NULL)
        entered = g_str_has_prefix (entry, prefix) && g_str_has_suffix (entry, suffix);
      if (!entered && g_get_monotonic_time () > deadline)
        g_error ("%s never had its entry *%s in %s within %d s", name, suffix, queue, BOUND_S);
      if (!entered)
        g_usleep (10 * 1000);
    }
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
  g_assert_cmpint (json_object_get_int_member (w, "uid"), ==, uid_of (user));
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
  static const char parse[] =
    "import sys\n"
    "from prometheus_client.openmetrics.parser import text_string_to_metric_families\n"
    "for family in text_string_to_metric_families(sys.stdin.read()):\n"
    "    for s in family.samples:\n"
    "        if s.labels.get('resource') != 'r':\n"
    "            continue\n"
    "        labels = ','.join('%s=%s' % kv for kv in sorted(s.labels.items()) if kv[0] != 'resource')\n"
    "        print('%s{%s} %g' % (s.name, labels, s.value))\n";
  GHashTable *samples = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GSubprocess) parser = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *metrics = NULL;
  g_autofree char *parsed = NULL;
  g_auto(GStrv) lines = NULL;

  g_assert_cmpint (tessera_by (f, user, &metrics, FALSE, "status", "--format=openmetrics", NULL), ==, 0);
  g_assert_true (g_str_has_suffix (metrics, "# EOF\n"));
  parser = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                             test_python (), "-c", parse, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (parser, metrics, NULL, &parsed, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (test_exit_code (parser), ==, 0);
  g_test_message ("parsed: %s", parsed);
  lines = g_strsplit (parsed, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *space;

      if (lines[i][0] == '\0')
        continue;
      if ((space = strrchr (lines[i], ' ')) == NULL)
        g_error ("an OpenMetrics sample without a value: “%s”", lines[i]);
      g_assert_true (g_hash_table_insert (samples, g_strndup (lines[i], space - lines[i]), g_strdup (space + 1)));
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
    uid_of (first), (int) firsts, (int) firsts, (int) seconds);
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

/* What clean --host removes (issue 38, points 2 and 3) */

/* A mark a member plants in hosts/, named for another member (a host id,
 * then the first member's uid), blocks the pool by design: it cannot be
 * trusted to say its host's locks cross. Root's `clean --host HOSTID`
 * removes it by its file name, whatever its JSON says, and the pool
 * serves again. */
static void
test_clean_host_planted_mark (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  const char *id = "0123456789abcdef0123456789abcdef";
  struct passwd *pw = getpwnam (first);
  g_autofree char *out = NULL;
  g_autofree char *mark = NULL;
  g_autofree char *script = NULL;

  if (pw == NULL)
    g_error ("no user %s", first);
  init_group_pool (f);
  mark = g_strdup_printf ("%s/r/hosts/%s.%u.host", f->gp->pool, id, (guint) pw->pw_uid);
  script = g_strdup_printf ("printf '{\"host\": \"elsewhere\", \"locks_cross\": true}' > '%s'", mark);
  plant (f, script);
  g_assert_cmpint (tessera_by (f, first, &out, FALSE, "run", "--no-wait", "--need", "r=1", "--", "true", NULL), !=, 0);
  g_clear_pointer (&out, g_free);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", id, "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, first, &out, FALSE, "run", "--no-wait", "--need", "r=1", "--", "true", NULL), ==, 0);
}

/* As `tessera run` leaves it: in r/runs/UID/, the job folder @name of
 * @user, with its job lock, pid and locks.json (naming no lock file
 * left). */
static char *
plant_job_folder (Fixture *f, const char *user, const char *name)
{
  struct passwd *pw = getpwnam (user);
  g_autofree char *own = NULL;
  g_autofree char *file = NULL;
  char *job;

  if (pw == NULL)
    g_error ("no user %s", user);
  own = g_strdup_printf ("%s/r/runs/%u", f->gp->pool, (guint) pw->pw_uid);
  job = g_build_filename (own, name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
  file = g_build_filename (job, "job.lock", NULL);
  test_write_file (file, "");
  g_free (file);
  file = g_build_filename (job, "job.pid", NULL);
  test_write_file (file, "{\"type\": \"local\", \"pid\": 123}\n");
  g_free (file);
  file = g_build_filename (job, "locks.json", NULL);
  test_write_file (file, "{\"dynamic_locks\": []}");
  test_run_or_fail ((const char *[]) { "chown", "-R", user, own, NULL });
  return job;
}

/* clean --host node7 removes node7's job folders (node7-PID-RANDOM, as
 * run names them), not those of a host node7-gpu (node7-gpu-PID-RANDOM,
 * whose name begins the same), nor one whose job lock is held. */
static void
test_clean_host_job_folders (Fixture *f, gconstpointer data)
{
  const char *first = f->gp->users->users[0];
  g_autofree char *other = NULL;
  g_autofree char *held = NULL;
  g_autofree char *lock = NULL;
  g_autofree char *out = NULL;
  g_autoptr(Helper) locker = NULL;

  init_group_pool (f);
  other = plant_job_folder (f, first, "node7-gpu-1234-abcdef01");
  held = plant_job_folder (f, first, "node7-1235-abcdef02");
  lock = g_build_filename (held, "job.lock", NULL);
  locker = helper_spawn_argv (NULL, (const char *[]) {
    test_python (), "-c", "import fcntl, sys\n"
                          "f = open(sys.argv[1], 'r+')\n"
                          "fcntl.lockf(f, fcntl.LOCK_EX)\n"
                          "print('held', flush=True)\n"
                          "sys.stdin.read()\n", lock, NULL });
  helper_expect_line (locker, "held", BOUND_S);

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_true (g_file_test (other, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (held, G_FILE_TEST_IS_DIR));

  /* Its job lock free, node7's folder goes; node7-gpu's stays. */
  helper_close_stdin (locker);
  g_assert_cmpint (helper_wait (locker), ==, 0);
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (held, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (other, G_FILE_TEST_IS_DIR));
}

/* The first line of @text that has @needle in it (a copy), or NULL. */
static char *
line_containing (const char *text, const char *needle)
{
  const char *hit = strstr (text, needle);
  const char *start, *end;

  if (hit == NULL)
    return NULL;
  for (start = hit; start > text && start[-1] != '\n'; start--)
    ;
  end = strchr (hit, '\n');
  return end != NULL ? g_strndup (start, (gsize) (end - start)) : g_strdup (start);
}

/* A pool's owner who is not root retires host node7 (issue 42, a review
 * finding): `tessera clean --host node7 --yes` removes the member's lock
 * file naming node7 and her mark of node7, but her job folder
 * (runs/UID/node7-PID-RANDOM, hers, its files hers) is no folder the
 * owner may empty: she is told so, one line naming the folder, whose it
 * is and who may remove it, not left to believe it gone. The member's
 * own `tessera clean` then removes it, as that line says. */
static void
test_clean_host_job_folders_by_owner (Fixture *f, gconstpointer data)
{
  const char *owner = f->gp->users->users[0];
  const char *member = f->gp->users->users[1];
  const char *id = "0123456789abcdef0123456789abcdef";
  g_autofree char *job = NULL;
  g_autofree char *lock_file = NULL;
  g_autofree char *mark = NULL;
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_autofree char *line = NULL;

  test_run_or_fail ((const char *[]) { "chown", owner, f->gp->pool, NULL });
  g_assert_cmpint (tessera_by (f, owner, &out, FALSE, "init", f->gp->pool, "--group", f->gp->users->group, NULL),
                   ==, 0);
  job = plant_job_folder (f, member, "node7-1236-abcdef03");
  lock_file = g_strdup_printf ("%s/r/jobs/far@1.json", f->gp->pool);
  mark = g_strdup_printf ("%s/r/hosts/%s.%u.host", f->gp->pool, id, uid_of (member));
  script = g_strdup_printf ("printf '{\"job_uri\": \"%s/job\", \"information\": {\"count\": 1}, "
                            "\"process\": {\"type\": \"local\", \"pid\": 123, \"host\": \"node7\"}}' > '%s'; "
                            "printf '{\"host\": \"node7\", \"lease\": 0, \"locks_cross\": true}' > '%s'",
                            job, lock_file, mark);
  plant (f, script);
  g_assert_true (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (mark, G_FILE_TEST_EXISTS));

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, owner, &out, FALSE, "clean", "--host", "node7", "--yes", "r", NULL), ==, 0);
  g_assert_false (g_file_test (lock_file, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (mark, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (job, G_FILE_TEST_IS_DIR));
  if ((line = line_containing (out, job)) == NULL)
    g_error ("the member's job folder %s left unsaid: %s", job, out);
  g_assert_nonnull (strstr (line, member));
  g_assert_nonnull (strstr (line, "root"));

  g_clear_pointer (&out, g_free);
  g_assert_cmpint (tessera_by (f, member, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
}

/* Root's clean looks at no path a member's locks.json names outside the
 * pool's own folders (issue 38, point 4): a job folder of hers whose
 * locks.json names a file in a folder only root may read goes as one
 * naming a file that does not exist does, so her folder's fate tells
 * her nothing of root's files. */
static void
test_root_clean_looks_only_in_the_pool (Fixture *f, gconstpointer data)
{
  const char *member = f->gp->users->users[1];
  struct passwd *pw = getpwnam (member);
  g_autofree char *secret_dir = g_build_filename (f->gp->tmp, "root-only", NULL);
  g_autofree char *secret = g_build_filename (secret_dir, "secret@1.json", NULL);
  g_autofree char *own = NULL;
  g_autofree char *job = NULL;
  g_autofree char *file = NULL;
  g_autofree char *text = NULL;
  g_autofree char *out = NULL;

  if (pw == NULL)
    g_error ("no user %s", member);
  g_assert_cmpint (g_mkdir_with_parents (secret_dir, 0700), ==, 0);
  test_write_file (secret, "{}");
  init_group_pool (f);
  own = g_strdup_printf ("%s/r/runs/%u", f->gp->pool, (guint) pw->pw_uid);
  job = g_build_filename (own, "probe-1", NULL);
  g_assert_cmpint (g_mkdir_with_parents (job, 0750), ==, 0);
  file = g_build_filename (job, "probe.lock", NULL);
  test_write_file (file, "");
  g_free (file);
  file = g_build_filename (job, "locks.json", NULL);
  text = g_strdup_printf ("{\"dynamic_locks\": [{\"lock_file_path\": \"%s\"}]}", secret);
  test_write_file (file, text);
  test_run_or_fail ((const char *[]) { "chown", "-R", member, own, NULL });

  g_assert_cmpint (tessera_by (f, NULL, &out, FALSE, "clean", NULL), ==, 0);
  g_assert_false (g_file_test (job, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (secret, G_FILE_TEST_EXISTS));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (plantings); i++)
    {
      g_autofree char *path = g_strconcat ("/security/", plantings[i].path, NULL);
      g_test_add (path, Fixture, &plantings[i], fixture_set_up, test_planted, fixture_tear_down);
    }
#define ADD(path, fn) g_test_add ("/security/" path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD ("link/intents-waiting", test_link_intents_waiting);
  ADD ("share/intents-folder", test_intents_folder_shared);
  ADD ("link/informations", test_link_informations);
  ADD ("share/writer-temporaries-of-another-user", test_writer_temporaries_of_another);
  ADD ("share/jobs-unlistable", test_jobs_unlistable);
  ADD ("fifo/job-lock-and-pid", test_fifo_job_lock_and_pid);
  ADD ("share/force-by-owner", test_force_by_owner);
  ADD ("names/hostile", test_hostile_names);
  ADD ("proc/hidepid", test_hidepid);
  ADD ("link/resource-folder", test_link_resource_folder);
  ADD ("link/followed-where-safe", test_link_followed_where_safe);
  ADD ("share/member-cannot-touch-another-share", test_member_cannot_touch_another_share);
  ADD ("share/member-is-no-administrator", test_member_is_no_administrator);
  ADD ("config/folder-unreadable", test_config_folder_unreadable);
  ADD ("config/link-dangling-or-unreadable", test_config_link_dangling_or_unreadable);
  ADD ("share/dead-holder-of-another-member", test_dead_holder_of_another_member);
  for (guint i = 0; i < 4; i++)
    {
      static const char *kinds[] = { "fcntl", "ofd", "flock-sh", "flock-ex" };
      g_autofree char *path = g_strconcat ("/security/share/dead-holder-job-lock-read-locked/", kinds[i], NULL);

      g_test_add (path, Fixture, kinds[i], fixture_set_up, test_dead_holder_job_lock_read_locked, fixture_tear_down);
    }
  ADD ("share/init-owns-every-part", test_init_owns_every_part);
  ADD ("share/init-refuses-a-members-folder", test_init_refuses_a_members_folder);
  ADD ("share/member-made-resource-is-not-believed", test_member_made_resource);
  ADD ("share/member-informations-not-believed", test_member_informations_not_believed);
  ADD ("share/member-makes-no-hosts-or-queue", test_member_makes_no_hosts_or_queue);
  ADD ("share/member-run-makes-no-resource", test_member_run_makes_no_resource);
  ADD ("share/root-cleans-ended-job-folders", test_root_cleans_ended_job_folders);
  ADD ("share/root-cleans-job-folder-flocked-by-another", test_root_cleans_job_folder_flocked_by_another);
  ADD ("share/member-run-makes-no-runs", test_member_run_makes_no_runs);
  ADD ("share/outsider-told-not-in-group", test_outsider_told_not_in_group);
  ADD ("fence/huge-value", test_fence_huge_value);
  ADD ("fence/unreadable-parts", test_fence_unreadable_parts);
  ADD ("fence/own-name-taken", test_fence_own_name_taken);
  ADD ("fence/clock-ahead", test_fence_clock_ahead);
  ADD ("fence/clock-ahead-squashed", test_fence_clock_ahead_squashed);
  ADD ("fence/root-name-planted", test_fence_root_name_planted);
  ADD ("fence/part-of-another-owner", test_fence_part_of_another_owner);
  ADD ("queue/entry-asks-too-much", test_queue_entry_asks_too_much);
  ADD ("queue/entry-last-ticket", test_queue_entry_last_ticket);
  ADD ("queue/entries-same-place", test_queue_entries_same_place);
  ADD ("queue/entry-of-another-process", test_queue_entry_of_another_process);
  ADD ("queue/entry-of-set-user-id", test_queue_entry_of_set_user_id);
  ADD ("queue/entry-of-acting-daemon", test_queue_entry_of_acting_daemon);
  ADD ("queue/view-of-members", test_queue_view_of_members);
  ADD ("queue/view-planted-for-another", test_queue_view_planted_for_another);
  ADD ("clean-host/planted-mark", test_clean_host_planted_mark);
  ADD ("clean-host/job-folders", test_clean_host_job_folders);
  ADD ("clean-host/job-folders-by-owner", test_clean_host_job_folders_by_owner);
  ADD ("share/root-clean-looks-only-in-the-pool", test_root_clean_looks_only_in_the_pool);
#if TESSERA_PAUSE_POINTS
  g_test_add ("/security/race/jobs-swapped-before-create", Fixture, "lock-file-create",
              fixture_set_up, test_jobs_swapped, fixture_tear_down);
  g_test_add ("/security/race/jobs-swapped-before-own-delete", Fixture, "lock-file-delete",
              fixture_set_up, test_jobs_swapped, fixture_tear_down);
  g_test_add ("/security/race/folder-swapped-before-create", Fixture, NULL,
              fixture_set_up, test_folder_swapped, fixture_tear_down);
#endif
#undef ADD
  return g_test_run ();
}
