/* tessera-dynamic-lock-file-private.h: loading, saving and the private
 * members of a lock file (core/tessera-dynamic-lock-file.c), never
 * installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/stat.h>
#include <tessera/tessera.h>

G_BEGIN_DECLS

TesseraDynamicLockFile *_tessera_dynamic_lock_file_load_once (GType        lock_file_type,
                                                              int          dir_fd,
                                                              const char  *name,
                                                              const char  *path,
                                                              char       **data,
                                                              gsize       *length,
                                                              GError     **error);
/* What _tessera_dynamic_lock_file_load_once() makes of @data when the
 * file, of lstat @st, was read earlier (the lock file index). */
TesseraDynamicLockFile *_tessera_dynamic_lock_file_new_from_text (GType              lock_file_type,
                                                                  const char        *path,
                                                                  const char        *data,
                                                                  gsize              length,
                                                                  const struct stat *st,
                                                                  GError           **error);

/* A store without files saying when a holder was written:
 * _tessera_dynamic_lock_file_set_mtime(), in the store header
 * (tessera-pool-store-private.h), what a store plugin includes. */

/* The holder's job folder (device and inode), written in its "process"
 * as "job_folder" (tessera-dynamic-lock-file.c): FALSE when not recorded. */
void     _tessera_dynamic_lock_file_set_job_folder (TesseraDynamicLockFile *self,
                                                    guint64                 dev,
                                                    guint64                 ino);
gboolean _tessera_dynamic_lock_file_get_job_folder (TesseraDynamicLockFile *self,
                                                    guint64                *dev,
                                                    guint64                *ino);

/* Whether the holder's job lock was taken where locks cross hosts,
 * written in its "process" as "locks_cross": FALSE when not recorded
 * (experimaestro's, an older Tessera's). */
void     _tessera_dynamic_lock_file_set_locks_cross (TesseraDynamicLockFile *self,
                                                     gboolean                locks_cross);
gboolean _tessera_dynamic_lock_file_get_locks_cross (TesseraDynamicLockFile *self,
                                                     gboolean               *locks_cross);
/* The view of the pool through which the holder took its job lock: the
 * device of its job folder as the holder saw it, written in its
 * "process" as "view" (on one host, another mount of the pool, such as a
 * FUSE view, has another): FALSE when not recorded (experimaestro's, an
 * older Tessera's). */
void     _tessera_dynamic_lock_file_set_view (TesseraDynamicLockFile *self,
                                              guint64                 view);
gboolean _tessera_dynamic_lock_file_get_view (TesseraDynamicLockFile *self,
                                              guint64                *view);
/* What tessera_dynamic_lock_file_dup_unknown_reason() says (NULL: none). */
void     _tessera_dynamic_lock_file_set_unknown_reason (TesseraDynamicLockFile *self,
                                                        const char             *reason);
/* What tessera_dynamic_lock_file_get_information() says of @lock_file, a
 * waiting entry shown to people: what its request asks for, which its
 * type's lock files need not read (a GPU request's count). */
void _tessera_dynamic_lock_file_show_information (TesseraDynamicLockFile *lock_file,
                                                  JsonNode               *information);
/* What tessera_dynamic_lock_file_get_problem() says of @lock_file. */
void _tessera_dynamic_lock_file_set_problem (TesseraDynamicLockFile *lock_file,
                                             const char             *problem);

TesseraDynamicLockFile *_tessera_dynamic_lock_file_new_unsaved (GType            lock_file_type,
                                                                const char      *path,
                                                                const char      *job_uri,
                                                                JsonNode        *information,
                                                                TesseraProcess  *process,
                                                                GError         **error);
/* @tmp_fd: where the temporary file goes (-1: beside @name);
 * @tmp_unusable: see _tessera_write_file_atomic_via(); @st: the file
 * written, as it then is (gone at once: an error). */
gboolean _tessera_dynamic_lock_file_save_at (TesseraDynamicLockFile  *self,
                                             int                      tmp_fd,
                                             int                      dir_fd,
                                             const char              *name,
                                             gboolean                *tmp_unusable,
                                             struct stat             *st,
                                             GError                 **error);

G_END_DECLS
