/* tessera-process-type.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

/**
 * TesseraProcessType:
 *
 * Judges holders whose process spec has a "type" other than "local":
 * experimaestro writes `{"type": "slurm", "pid": "JOBID"}` for a job it
 * submitted to Slurm, for instance. A plugin provides a process type by
 * naming it in its manifest (`ProcessTypes=slurm`) and registering a
 * subclass under that name with
 * [func@Tessera.Registry.register_process_type]; Tessera loads the plugin
 * the first time it meets a spec of that type.
 *
 * A process type must be safe against what it reads: the spec comes from a
 * file any user of the pool may have written. It is called with the pool's
 * ipc.lock held, from any thread, so it answers quickly (cache verdicts,
 * bound every external call with a timeout) and keeps its own state under
 * a lock.
 */

G_DEFINE_ABSTRACT_TYPE (TesseraProcessType, tessera_process_type, G_TYPE_OBJECT)

static TesseraProcessState
real_check (TesseraProcessType *self,
            TesseraProcess     *process)
{
  (void) self;
  (void) process;
  return TESSERA_PROCESS_UNKNOWN;
}

static void
tessera_process_type_class_init (TesseraProcessTypeClass *klass)
{
  klass->check = real_check;
}

static void
tessera_process_type_init (TesseraProcessType *self)
{
  (void) self;
}

/**
 * tessera_process_type_check:
 * @self: a process type
 * @process: a process whose spec has this type; its original spec is
 *   [method@Tessera.Process.get_spec]
 *
 * Judges whether @process still holds. Only a sure answer frees capacity:
 * a process type that cannot tell (its scheduler does not answer, the
 * spec makes no sense) says %TESSERA_PROCESS_UNKNOWN, and the holder
 * counts.
 *
 * Returns: %TESSERA_PROCESS_ALIVE, %TESSERA_PROCESS_DEAD or
 *   %TESSERA_PROCESS_UNKNOWN
 */
TesseraProcessState
tessera_process_type_check (TesseraProcessType *self,
                            TesseraProcess     *process)
{
  TesseraProcessState state;

  g_return_val_if_fail (TESSERA_IS_PROCESS_TYPE (self), TESSERA_PROCESS_UNKNOWN);
  /* Not TESSERA_IS_PROCESS: the process's methods, which a type's check
   * reads it with, check its class, and this class, which the process
   * calls, need not name the process's. */
  g_return_val_if_fail (G_IS_OBJECT (process), TESSERA_PROCESS_UNKNOWN);

  state = TESSERA_PROCESS_TYPE_GET_CLASS (self)->check (self, process);
  /* A pid check means nothing for these processes: "remote" would send
   * the caller to a job lock it may not have, so it reads as unknown. */
  return state == TESSERA_PROCESS_REMOTE ? TESSERA_PROCESS_UNKNOWN : state;
}
