/* test-etcd-common.h: what the etcd test programs (test-etcd-TOPIC.c)
 * share: the fixture (a real etcd of one member or three, or one that
 * speaks TLS, started by tests/etcd-fixture.sh), the client calls of the
 * tests, the store's child processes and the `tessera` command on an
 * etcd pool; each is described where it is defined.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-etcd-client.h"
#include "tessera-etcd-lease.h"
#include "tessera-etcd-pool.h"
#include "test-counter.h"
#include "test-utils.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

G_BEGIN_DECLS

typedef struct
{
  char *dir;
  TesseraEtcdClient *client;
} Fixture;

#define STORE_ENV "TESSERA_TEST_ETCD_STORE"

/* The lease of the store's test processes. A holder whose renewals do
 * not get through for a whole lease loses its holdings (as it must):
 * under ten CI jobs' load on two cores a 3 s lease lapsed (a waiter
 * started next found the tokens free), so the tests, which are not
 * about expiry but where they measure it, leave more room. */
#define STORE_TTL 10

/* The lease of the tool's pools: `tessera run` ends its command when its
 * lease has gone unrenewed for the lease less a margin (7 s here), and
 * renews every third of it (4 s): room for a loaded machine. */
#define TOOL_LEASE 12

void fixture_run (Fixture *f, const char *action, const char *arg);
char **endpoints (Fixture *f);
GBytes *text_bytes (const char *text);
void put (Fixture *f, const char *key, const char *value, gint64 lease);
GPtrArray *range_prefix (Fixture *f, const char *prefix, gint64 *revision);
void assert_value (TesseraEtcdKv *kv, const char *key, const char *value);
GPtrArray *collect_events (TesseraEtcdWatch *watch, guint count);
char *leader_of (Fixture *f);
void prefer_member (Fixture *f, const char *first);
TesseraEtcdClient *client_for (const char * const *list);
guint audit_holders (GPtrArray *events, guint total);
Helper *store_spawn_on (Fixture *f, const char *host, const char *mode, const char * const *env, const char *id, const char *count, const char * const *settings);
Helper *store_spawn_mode (Fixture *f, const char *mode, const char * const *env, const char *id, const char *count, const char * const *settings);
Helper *store_spawn (Fixture *f, const char * const *env, const char *id, const char *count, const char * const *settings);
int expect_acquired (Helper *helper, double timeout);
GPtrArray *pool_keys (Fixture *f, const char *what);
extern const char * const no_polling_env[];
void test_store_acquire_release (Fixture *f, gconstpointer data);
void contend_and_audit (Fixture *f, guint contenders, guint rounds, gboolean kill_leader);
gint64 member_metric (Fixture *f, guint k, const char *name);
gint64 metric (Fixture *f, const char *name);
void release_store_child (Helper *child);
void hand_over_and_end (Helper *holder, Helper *waiter);
GPtrArray *tool_argv (Fixture *f, const char *config, const char * const *env, const char * const *args);
void tool_status_full (Fixture *f, const char *config, gint64 *capacity, gint64 *free_units, guint *holders);
void tool_status (Fixture *f, const char *config, gint64 *free_units, guint *holders);
int tool_run (Fixture *f, const char *config, const char *const *args);
char *tool_config_lease (Fixture *f, int lease);
char *tool_config (Fixture *f);
Helper *tool_waiter (Fixture *f, const char *config);
Helper *tool_holder (Fixture *f, const char *config);
void tool_hand_over (Fixture *f, const char *config);
void etcd_test_init (int *argc, char ***argv);
void etcd_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer));
int etcd_test_run (void);

G_END_DECLS
