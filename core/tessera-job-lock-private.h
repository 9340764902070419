/* tessera-job-lock-private.h: the job lock (`<job_uri>.lock`),
 * core/tessera-job-lock.c, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-verdict-private.h"

G_BEGIN_DECLS

/* Job lock (`<job_uri>.lock`): OFD write lock; what its probe answers
 * (TesseraJobLockState) is the verdict's to read. */

int      _tessera_job_lock_take       (const char  *path,
                                       GError     **error);
/* The same for @name in the folder @dir_fd (@path for messages). */
int      _tessera_job_lock_take_at    (int          dir_fd,
                                       const char  *name,
                                       const char  *path,
                                       GError     **error);
/* @errsv (nullable): why, when it is neither free nor held (an errno;
 * 0: not a regular file). */
TesseraJobLockState _tessera_job_lock_probe (const char *path,
                                             int        *errsv);
/* The same for @name in the folder @dir_fd (AT_FDCWD: @name is a path). */
TesseraJobLockState _tessera_job_lock_probe_at (int         dir_fd,
                                                const char *name,
                                                int        *errsv);

G_END_DECLS
