/* tessera-counter-token-job-lock.c: the seed's CounterTokenJobLock, the
 * job process's side: the base class verifies and deletes the lock file;
 * this one only keeps the token's members at hand.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-counter-token.h"

struct _TesseraCounterTokenJobLock
{
  TesseraJobDependencyLock parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraCounterTokenJobLock, tessera_counter_token_job_lock, TESSERA_TYPE_JOB_DEPENDENCY_LOCK)

static void
tessera_counter_token_job_lock_class_init (TesseraCounterTokenJobLockClass *klass)
{
}

static void
tessera_counter_token_job_lock_class_finalize (TesseraCounterTokenJobLockClass *klass)
{
}

static void
tessera_counter_token_job_lock_init (TesseraCounterTokenJobLock *self)
{
}

void
_tessera_counter_token_job_lock_register (GTypeModule *module)
{
  tessera_counter_token_job_lock_register_type (module);
}
