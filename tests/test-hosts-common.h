/* test-hosts-common.h: what the tests of several hosts share: a fixture
 * (a counter's folder with a jobs/ folder, and a configuration of one
 * counter r), lock files and specs written as a holder writes them, and
 * `tessera` run at a place: this host, a container, a simulated host, as
 * a user of a group; each is described where it is defined.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "test-counter.h"
#include "test-utils.h"

G_BEGIN_DECLS

typedef struct
{
  char *tmp;
  char *folder;
  char *jobs;
  char *config;
} Fixture;

/* Where a `tessera` of a test runs, and as whom. */
typedef struct
{
  const char *host;      /* a simulated host's name; NULL: this host */
  gboolean container;    /* (this host) in a pid namespace of its own, its /proc mounted */
  TestGroupPool *gp;     /* with @user: the pool's users and configuration */
  const char *user;      /* one of @gp's users; NULL: as the test (root) */
  const char *poll_max;  /* TESSERA_POLL_INTERVAL_MAX; NULL: the default */
  gboolean view;         /* (a simulated host, or a container) tmp/real seen at tmp/view through a FUSE view of its own */
  gboolean bind;         /* (a container) tmp/real bind-mounted at tmp/view in mounts of its own */
  gboolean hide_proc;    /* (a container with a view) /proc covered by an empty tmpfs once the view is up:
                          * no mountinfo, no boot id */
} Place;

void fixture_set_up (Fixture *f, gconstpointer data);
void fixture_tear_down (Fixture *f, gconstpointer data);
void hosts_test_init (int *argc, char ***argv);
void hosts_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer));
void use_lease_config (Fixture *f, gint64 total, double lease);
char *job_uri_for (Fixture *f, const char *name);
char *own_spec (void (*edit) (JsonObject *spec, gpointer data), gpointer data);
void set_boot (JsonObject *spec, gpointer data);
void set_other_machine (JsonObject *spec, gpointer data);
int run_no_wait_here (Fixture *f, char **out, char **err);
GSubprocess *spawn_tool (Fixture *f, gboolean in_container, GSubprocessFlags flags, GError **error, ...);
void append_place (Fixture *f, const Place *at, const char *config, GPtrArray *argv);
GSubprocess *spawn_place_va (Fixture *f, const Place *at, GSubprocessLauncher *launcher, const char *config, GError **error,
                             va_list ap);
GSubprocess *spawn_at_with (Fixture *f, const Place *at, GSubprocessLauncher *launcher, GError **error, ...);
GSubprocess *spawn_at (Fixture *f, const Place *at, GSubprocessFlags flags, GError **error, ...);
GSubprocess *spawn_on_other_host_full (Fixture *f, GSubprocessLauncher *launcher, const char *host,
                                       GError **error, va_list ap);
GSubprocess *spawn_default_on_other_host_va (Fixture *f, GSubprocessLauncher *launcher, const char *host, GError **error, ...);
GSubprocess *spawn_on_other_host (Fixture *f, const char *host, GSubprocessFlags flags, GError **error, ...);
GPid namespace_init (GSubprocess *unshare);
char *host_id_on (Fixture *f, const char *host);
GPid pid_here (GPid init, int local);
GSubprocess *start_holder_at (Fixture *f, const Place *at, char **fd, GPid *pid);
int try_at (Fixture *f, const Place *at);
GSubprocess *start_waiter_at (Fixture *f, const Place *at);
double kill_and_wait_through (GSubprocess *holder, GSubprocess *waiter);
double server_now (Fixture *f);
char *kill_renewer_half_way (Fixture *f, const char *host);
double file_time (const char *path);

G_END_DECLS
