/* test-security-common.h: what the tests of a pool shared by a group
 * whose second user is hostile (test-security-TOPIC.c) share: the
 * fixture (two real users of a group, a pool of theirs, a folder of the
 * first user's outside it), ways to act as either user, and the first
 * user's round of commands that must cope with what the second planted;
 * each is described where it is defined.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-utils.h"

#include <errno.h>
#include <pwd.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

G_BEGIN_DECLS

/* Generous: a loaded 2-core machine; a hang is far longer. */
#define BOUND_S 60
/* A job.pid of a process that has ended (or is not the job's). */
#define JOB_PID "{\"type\": \"local\", \"pid\": 123}\n"

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

GHashTable *snapshot (const char *folder);
void assert_victim_untouched (Fixture *f);
void sh_as (Fixture *f, const char *user, const char *script);
void plant (Fixture *f, const char *script);
void assert_clear (GBytes *bytes, const char *what);
int tessera_in (Fixture *f, const char *const *wrap, GBytes **out, GBytes **err, const char *first, ...);
Helper *spawn_as_first (Fixture *f, const char * const *wrap, const char * const *args);
void first_user_round_in (Fixture *f, const char *const *wrap);
void first_user_round (Fixture *f);
void make_pool (Fixture *f);
Helper *hold_as_second (Fixture *f, const char *need);
void release_held (Helper *holder);
void use_config (Fixture *f, const char *text);
void init_group_pool (Fixture *f);
Helper *hold_as_first (Fixture *f, const char *need);
char *only_lock_file (Fixture *f);
int tessera_by (Fixture *f, const char *user, char **out, gboolean one_line, const char *first, ...);
GPid lock_file_pid (const char *lock_file);
char *plant_job_folder (Fixture *f, const char *user, const char *name, const char *job, const char *pid,
                        const char *locks);
void security_test_add (const char *path, gconstpointer data, void (*fn) (Fixture *, gconstpointer));

G_END_DECLS
