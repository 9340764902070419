/* test-utils.h: what the tests share, one section a unit (test-utils-TOPIC.c):
 * files, waits, processes, the command, a pool, real users, mounts and
 * pause points
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <tessera/tessera.h>

G_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* test-utils-files.c: folders, files and their contents (made, written,
 * aged, counted, read) */

char    *test_make_tmpdir        (void);
void     test_remove_tree        (const char *path);
void     test_tmpdir_free        (char *tmp);
void     test_write_file         (const char *path, const char *contents);
void     test_set_file_age       (const char *path, double seconds_ago);

/* Writes over @path in place: the same inode, truncated, no link followed. */
void     test_write_in_place     (const char *path, const char *text);
void     test_rewrite_keeping_stat (const char *path, const char *text);
guint    test_count_entries      (const char *path);
GPtrArray *test_list_json_files  (const char *folder);
char    *test_only_json_file     (const char *folder);
char    *test_substitute         (const char *text, const char *token, const char *value);
JsonNode *test_parse_json_file   (const char *path);

/* ------------------------------------------------------------------ */
/* test-utils-wait.c: waiting for what another process or thread does,
 * bounded and never busy */

void     test_wait_for_file      (const char *path, double timeout_s);

/* What a test waits for: TRUE once it holds. */
typedef gboolean (*TestCondition) (gpointer data);

/* Polls @done (a short sleep between, growing) until it holds or
 * @timeout_s has passed: FALSE then. Timeouts are generous: a loaded
 * machine must never make a test fail. */
gboolean test_poll_until         (TestCondition done, gpointer data, double timeout_s);

/* The same, failing the test with the message @format if it never holds. */
void     test_wait_until         (TestCondition done, gpointer data, double timeout_s,
                                  const char *format, ...) G_GNUC_PRINTF (4, 5);

/* A TestCondition: the gint at @flag (set by another thread) is not 0. */
gboolean test_flag_is_set        (gpointer flag);

/* TestConditions: the GSubprocess @process has ended (GLib reaped it);
 * the process GINT_TO_POINTER (pid) is gone or a zombie. */
gboolean test_subprocess_has_ended (gpointer process);
gboolean test_pid_has_ended      (gpointer pid);

/* ------------------------------------------------------------------ */
/* test-utils-process.c: other processes: the helper programs and any
 * command as a helper (its lines read and written), commands run to their
 * end, their exit status, their children, the helpers' log and the Python
 * peers */

typedef struct _Helper Helper;
const char *test_python          (void);
void     test_run_or_fail        (const char * const *argv);
int      test_exit_code          (GSubprocess *process);
GPid     test_first_child        (GPid pid);
char    *test_read_stream_line   (GInputStream *out, double timeout_s);
char    *test_read_line          (GSubprocess *process, double timeout_s);

/* Waits until @process says "ready" on its stdout: a holder's command runs. */
void     test_wait_ready         (GSubprocess *process, double timeout_s);

/* Closes @holder's stdin and waits until it has ended (status 0). */
void     test_let_go             (GSubprocess *holder);

/* What @process wrote on its stdout, to its end (status 0). */
char    *test_output_of          (GSubprocess *process, int expected);
JsonNode *test_output_json       (GSubprocess *process, int expected);
Helper  *helper_spawn            (const char * const *env, const char *first_arg, ...) G_GNUC_NULL_TERMINATED;
Helper  *plugin_helper_spawn     (const char * const *env, const char *first_arg, ...) G_GNUC_NULL_TERMINATED;
Helper  *helper_spawn_argv       (const char * const *env, const char * const *argv);
char    *helper_read_line        (Helper *helper, double timeout_s);
void     helper_expect_line      (Helper *helper, const char *prefix, double timeout_s);
void     helper_write_line       (Helper *helper, const char *line);
void     helper_close_stdin      (Helper *helper);
void     helper_kill             (Helper *helper, int signum);
int      helper_wait             (Helper *helper);
gboolean helper_is_running       (Helper *helper);
GPid     helper_get_pid          (Helper *helper);
void     helper_free             (Helper *helper);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Helper, helper_free)

/* Holders' own timestamped log: "A|R <monotonic µs> ID [REQUEST [GPUS
 * [TOKEN]]]" (TOKEN: the grant's fencing token; 0 when not given) */
typedef struct
{
  gint64 time;
  gboolean acquire;
  char *id;
  char *request;
  char *gpus;
  gint64 token;
} LogEvent;
GArray  *test_read_holder_log    (const char *path);
int      test_run_capture        (GPtrArray *argv, GBytes **out, GBytes **err);
int      test_run_capture_text   (GPtrArray *argv, char **out, char **err);
void     test_argv_append        (GPtrArray *argv, const char * const *args);
void     test_argv_end           (GPtrArray *argv, const char * const *args);
void     test_argv_end_va        (GPtrArray *argv, const char *first, va_list ap);
char    *test_python_output      (const char *input, const char *script, ...) G_GNUC_NULL_TERMINATED;

/* The pid of a process that has ended. */
GPid     test_dead_pid           (void);

/* ------------------------------------------------------------------ */
/* test-utils-command.c: the `tessera` command as the tests run it: its
 * state, configuration and environment, run to its end or holding */

void     test_argv_tessera       (GPtrArray *argv, const char *state, const char *config);
void     test_argv_tessera_env   (GPtrArray *argv, const char *state, const char *config,
                                  const char * const *env);

/* `tessera ARGS…` run to its end (see test_argv_tessera_env()). */
int      test_run_tessera_va     (const char *state, const char *config, const char * const *env,
                                  char **out, char **err, const char *first, va_list ap);
GSubprocessLauncher *test_launcher_without_config (GSubprocessFlags flags, const char *state,
                                                   const char *no_config);
/* Whether the tests (and the `tessera` they run) are a sanitizer build's
 * under its setup (ASAN_OPTIONS or TSAN_OPTIONS set by meson's setups). */
gboolean test_under_sanitizer    (void);
Helper  *test_hold_argv          (GPtrArray *argv, const char *need, double timeout_s);

/* ------------------------------------------------------------------ */
/* test-utils-pool.c: a pool as the library keeps it: lock files planted,
 * locks.json handed over, resources dropped, the fixture of one pool's
 * folder, what status says of it, its queue's entries and the library's
 * warnings */

/* Drops a resource and waits until it is gone, before its folder is removed. */
void     test_drop_resource      (gpointer    resource_location);
char    *test_plant_live_holder  (const char *folder, int count, gboolean whole_spec);

/* What test_write_lock_file leaves of the job's folder, tmp/xp/NAME. */
typedef enum
{
  TEST_JOB_FOLDER_NONE,        /* none */
  TEST_JOB_FOLDER_EMPTY,       /* the folder */
  TEST_JOB_FOLDER_WITH_LOCK,   /* the folder and its job lock, free, as a job that ended leaves them */
} TestJobFolder;
char    *test_write_lock_file    (const char *tmp, const char *jobs, const char *name, const char *information,
                                  const char *process, TestJobFolder job_folder);
void     test_write_third_host_holder (const char *lock_file, const char *job_dir, const char *task, int count);
void     test_expect_warnings    (void);
guint    test_warning_count      (void);

/* locks.json, as a scheduler writes it and its job takes it over. */
TesseraDynamicDependencyLocks *test_locks_json_save (TesseraDynamicDependencyLock *lock, TesseraJob *job,
                                                      const char *locks_path);
TesseraJobDependencyLocks *test_locks_json_take_over (TesseraDynamicDependencyLock *lock, const char *locks_path);

/* @metrics (`status --format=openmetrics`) read by Prometheus's own
 * parser: a line a sample, "TYPE FAMILY NAME {LABEL=VALUE,…} VALUE",
 * labels sorted, the value as %g. */
char    *test_parse_openmetrics  (const char *metrics);

/* The first resource of `tessera status --json`'s document @root
 * (there must be one); the only one (there must be just one). */
JsonObject *test_status_first_resource (JsonNode *root);
JsonObject *test_status_only_resource  (JsonNode *root);

/* A pool's queue/ folder @queue: its entries (JSON objects); (transfer
 * full) (nullable) a reserving entry ("reserve": true); waiting until
 * there is one. */
GPtrArray *test_queue_read         (const char *queue);
JsonNode *test_queue_find_reservation (const char *queue);
JsonNode *test_queue_wait_reservation (const char *queue, double timeout_s);

/* The name of an entry of @folder (a queue/ or jobs/) that starts with
 * @prefix (NULL: any) and ends with @suffix, not among @others (NULL:
 * none), once there is one. */
char    *test_wait_entry         (const char *folder, const char *prefix, const char *suffix,
                                  const char * const *others, double timeout_s);

/* The fixture of tests on one pool's folder: a fresh folder @tmp, the
 * pool's folder @folder (TMP/token) and its jobs/ folder @jobs. */
typedef struct
{
  char *tmp;
  char *folder;
  char *jobs;
} TestPoolFixture;
void     test_pool_fixture_set_up    (TestPoolFixture *f, gconstpointer data);
void     test_pool_fixture_set_up_one_unit (TestPoolFixture *f, gconstpointer data);
void     test_pool_fixture_tear_down (TestPoolFixture *f, gconstpointer data);

/* ------------------------------------------------------------------ */
/* test-utils-users.c: real users of a group sharing a pool (root only: CI
 * is root; without root the test fails), and commands run as them */

/* Real users and a group (root only: the test fails without it). */
typedef struct
{
  char *group;
  guint gid;
  char *users[2];
} TestUsers;
TestUsers *test_users_new        (const char *prefix);
void     test_users_free         (TestUsers *users);
guint    test_uid_of             (const char *user);
char    *test_user_folder        (const char *parent, const char *user);
void     test_argv_as_user       (GPtrArray *argv, const char *user, double timeout_s);
void     test_argv_tessera_as    (GPtrArray *argv, const char *user, const char *state, const char *config,
                                  double timeout_s);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestUsers, test_users_free)

/* Those users' shared folder (setgid, the group's) and a configuration. */
typedef struct
{
  char *tmp;         /* all of it, removed after */
  TestUsers *users;
  char *pool;        /* the shared folder */
  char *config;
} TestGroupPool;
TestGroupPool *test_group_pool_new  (const char *prefix, const char *config_text);
void     test_group_pool_free    (TestGroupPool *gp);

/* `tessera` of the pool as one of its users or root, in that one's state. */
void     test_group_pool_argv_tessera (GPtrArray *argv, TestGroupPool *gp, char * const *states,
                                       const char *user, gboolean own_cache, const char * const *env,
                                       double timeout_s);

/* ------------------------------------------------------------------ */
/* test-utils-mounts.c: mounts of the test's own (root): a mount namespace,
 * a FUSE view of a folder, a simulated host */

/* Moves this test process into a mount namespace of its own (root):
 * first thing in main(), before any thread. */
void     test_private_mounts     (void);
gboolean test_try_private_mounts (void);
GSubprocess *test_mount_fuse_view (const char *real, const char *view);
void     test_unmount_fuse_view  (const char *view, GSubprocess *bindfs);

/* Appends the start of a command run on a simulated host (test-hosts-*.c). */
void     test_argv_simulated_host (GPtrArray *argv, const char *parent, const char *host, const char *setup);

/* ------------------------------------------------------------------ */
/* test-utils-pause.c: the library's pause points, armed, waited for and
 * let go */

/* A pause point of the library (core/tessera-pause-point.c): a process
 * whose environment names it (TESSERA_PAUSE_AT, TESSERA_PAUSE_DIR) stops
 * there, creates DIR/NAME.reached and waits until DIR/NAME.go exists. */
typedef struct
{
  char *name;
  char *dir;
  char *reached;
  char *go;
  /* For helper_spawn (): TESSERA_PAUSE_AT, NAME, TESSERA_PAUSE_DIR, DIR. */
  const char *env[5];
} TestPausePoint;

/* @dir is made if need be; a .reached left by an earlier run is removed. */
TestPausePoint *test_pause_point_new (const char *dir, const char *name);
void     test_pause_point_free   (TestPausePoint *point);
void     test_pause_point_set_launcher (TestPausePoint *point, GSubprocessLauncher *launcher);

/* Appends "env TESSERA_PAUSE_AT=NAME TESSERA_PAUSE_DIR=DIR" to @argv. */
void     test_pause_point_argv_env (TestPausePoint *point, GPtrArray *argv);

/* Arms (or disarms) it in this process: for the library called in it. */
void     test_pause_point_arm_here (TestPausePoint *point);
void     test_pause_points_disarm_here (void);
gboolean test_pause_point_is_reached (TestPausePoint *point);
void     test_pause_point_wait   (TestPausePoint *point, double timeout_s);

/* Lets the paused process go on. */
void     test_pause_point_release (TestPausePoint *point);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestPausePoint, test_pause_point_free)
G_END_DECLS
