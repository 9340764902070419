/* tessera-job-private.h: what core asks of a job (core/tessera-job.c),
 * never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The job's lock file name, checked (tessera-job.c). */
char    *_tessera_job_dup_checked_lock_file_name (TesseraJob *self,
                                                  GError    **error);
/* The device and inode of the folder that holds the job lock this job
 * holds (its job folder), recorded when it took it: FALSE when unknown. */
gboolean _tessera_job_get_folder      (TesseraJob  *self,
                                       guint64     *dev,
                                       guint64     *ino);

/* A new job's identifier, the name of its job folder (tessera-job.c):
 * tessera_job_new_private() and tessera_pool_part_make_job_folder() name
 * their folders so. */
char    *_tessera_job_dup_new_identifier (void);

G_END_DECLS
