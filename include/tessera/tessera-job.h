/* tessera-job.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>
#include <tessera/tessera-process.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_JOB (tessera_job_get_type ())

/**
 * TESSERA_JOB_LOCKS_FILE:
 *
 * The name of the file in a job's folder that lists the locks the job
 * holds (`locks.json`, experimaestro's name), as
 * [method@Tessera.DynamicDependencyLocks.save_for_job] writes it and the
 * job's process reads it ([func@Tessera.JobDependencyLocks.load]).
 */
#define TESSERA_JOB_LOCKS_FILE "locks.json"

/**
 * TESSERA_STATE_FOLDER:
 *
 * The name of Tessera's state folder in the user's (`$XDG_STATE_HOME`,
 * as `g_get_user_state_dir()` gives it): `tessera`. It holds the job
 * folders made there (in `TESSERA_JOB_STATE_FOLDER`) and what the
 * `tessera` command keeps of its own.
 */
#define TESSERA_STATE_FOLDER "tessera"

/**
 * TESSERA_JOB_STATE_FOLDER:
 *
 * The folder, in Tessera's state folder (`$XDG_STATE_HOME/tessera`), that
 * holds the job folders made there: those of
 * [ctor@Tessera.Job.new_private], and those of `tessera run` when no pool
 * has a folder for them (`jobs`, experimaestro's name).
 */
#define TESSERA_JOB_STATE_FOLDER "jobs"

/**
 * TESSERA_LOCK_FILE_SUFFIX:
 *
 * How the name of a lock file ends: a holder's lock file in a pool's
 * `jobs/` is its name followed by it ([func@Tessera.Lock.file_name]).
 */
#define TESSERA_LOCK_FILE_SUFFIX ".json"

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraJob, tessera_job, TESSERA, JOB, GObject)

/**
 * TesseraJobClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.Job], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraJob     *tessera_job_new                (const char     *task_id,
                                                const char     *identifier,
                                                const char     *job_uri,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
TesseraJob     *tessera_job_new_at             (const char     *task_id,
                                                const char     *identifier,
                                                const char     *job_uri,
                                                int             folder_fd,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
TesseraJob     *tessera_job_new_private        (const char     *name,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_folder_is_at_path  (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_write_file         (TesseraJob     *self,
                                                const char     *name,
                                                const char     *contents,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_remove_file        (TesseraJob     *self,
                                                const char     *name);
TESSERA_AVAILABLE_IN_ALL
const char     *tessera_job_get_task_id        (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
const char     *tessera_job_get_identifier     (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
const char     *tessera_job_get_job_uri        (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
char           *tessera_job_dup_lock_path      (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
char           *tessera_job_dup_pid_path       (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
char           *tessera_job_dup_lock_file_name (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
TesseraProcess *tessera_job_get_process        (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_set_process        (TesseraJob     *self,
                                                TesseraProcess *process,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_hold               (TesseraJob     *self,
                                                GError        **error);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_is_held            (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
void            tessera_job_unhold             (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
int             tessera_job_dup_lock_fd        (TesseraJob     *self);
TESSERA_AVAILABLE_IN_ALL
gboolean        tessera_job_lock_is_released_at (int             dir_fd,
                                                 const char     *name);

TESSERA_AVAILABLE_IN_ALL
char           *tessera_lock_file_name         (const char     *task_id,
                                                const char     *identifier);

G_END_DECLS
