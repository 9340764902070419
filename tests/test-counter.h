/* test-counter.h: a small counting resource defined by the tests, so the
 * core is exercised without any plugin. Same format as the seed's
 * CounterToken: informations.json {"total": N}, information {"count": K}.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

#define TEST_TYPE_COUNTER (test_counter_get_type ())
G_DECLARE_FINAL_TYPE (TestCounter, test_counter, TEST, COUNTER, TesseraTrackedDynamicResource)

#define TEST_TYPE_COUNTER_LOCK_FILE (test_counter_lock_file_get_type ())
G_DECLARE_FINAL_TYPE (TestCounterLockFile, test_counter_lock_file, TEST, COUNTER_LOCK_FILE, TesseraDynamicLockFile)

#define TEST_TYPE_COUNTER_DEPENDENCY (test_counter_dependency_get_type ())
G_DECLARE_FINAL_TYPE (TestCounterDependency, test_counter_dependency, TEST, COUNTER_DEPENDENCY, TesseraDynamicDependency)

TestCounter *test_counter_new       (const char *folder, gint64 total, GError **error);
void         test_counter_make      (const char *folder, gint64 total);
TestCounter *test_counter_open      (const char *folder, gint64 total, double min_age);
gint64       test_counter_get_total (TestCounter *self);
gint64       test_counter_get_used  (TestCounter *self);
/* How many fallback polls of the resource ran so far. */
guint        test_counter_get_polls (TestCounter *self);
gint64       test_counter_lock_file_get_count (TestCounterLockFile *self);

TesseraDynamicDependency *test_counter_dependency_new (TestCounter *counter, TesseraJob *job, gint64 count);

/* A job under @base with a fresh directory: job_uri = base/jobs/<task>/<id>/<task> */
TesseraJob *test_job_new (const char *base, const char *task_id, const char *identifier);

/* How many single units of @counter can be had now, each by a new job
 * under @base (at most @at_most): all are given back before it returns. */
int          test_counter_grantable (TestCounter *counter, const char *base, int at_most);
/* Whether @count of @counter can be had now by a new job @id under @base
 * (a try, never a wait): it is given back before it returns. */
gboolean     test_counter_can_take  (TestCounter *counter, const char *base, gint64 count, const char *id);

/* A TestCondition (test_wait_until): whether @count of @counter can be
 * had now, by a new job under @base at each look. */
typedef struct
{
  TestCounter *counter;
  const char *base;
  gint64 count;
  guint tries;
} TestCounterProbe;

gboolean     test_counter_probe_can_take (gpointer probe);

G_END_DECLS
