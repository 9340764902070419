/* tessera-lock-file-stand-in-private.h: counting lock files without building them, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/stat.h>

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* A lazy view (the lock file cache of a fresh process) counts the lock
 * files its index covers without parsing them: each through the
 * stand-in of its information, one per distinct information, made from
 * the summary the index recorded with its text; the lock file itself is
 * built from that text when first needed. Relies on what
 * account_lock_file promises: a share follows from the information
 * alone. Not thread-safe: the owner serialises. */
typedef struct _TesseraStandIns TesseraStandIns;

/* @jobs_path: the path the stand-ins name (for messages). */
TesseraStandIns *_tessera_stand_ins_new  (GType            lock_file_type,
                                          const char      *jobs_path);
/* After every TesseraRecorded that borrows one of its stand-ins. */
void             _tessera_stand_ins_free (TesseraStandIns *stand_ins);

/* (nullable): the summary the index records of @lock_file, just read: the
 * JSON text of its "information" when it counts, NULL when it does not. */
char *_tessera_lock_file_summarize      (TesseraDynamicLockFile *lock_file);

/* A lock file counted through a stand-in and not built yet: its stand-in
 * (borrowed from the stand-ins, which outlive it), its recorded text
 * (borrowed from the index: the owner drops this before the index's
 * record of the file changes or the index goes), and its modification
 * time and owner as the look that found it unchanged saw them. Plain
 * data, kept inside its owner's entry: a fresh process makes one for each
 * of thousands of holders, and lets them all go at its end. */
typedef struct
{
  TesseraDynamicLockFile *stand_in;
  const char *text;
  gint64 mtime_ns;
  guint32 length;     /* the index keeps no text of more than 64 KiB */
  uid_t uid;
} TesseraRecorded;

/* Fills @recorded; FALSE (@recorded untouched) when @summary makes no
 * stand-in (the file is then built). @text: borrowed, see above. @st: the
 * file's stat, which the index's record matched. */
gboolean _tessera_recorded_init (TesseraRecorded   *recorded,
                                 TesseraStandIns   *stand_ins,
                                 const char        *summary,
                                 const char        *text,
                                 gsize              length,
                                 const struct stat *st);
/* The lock file of the recorded text, built exactly as if read from
 * @path; NULL with @error when it makes none. */
TesseraDynamicLockFile *_tessera_recorded_build (TesseraRecorded *recorded,
                                                 GType            lock_file_type,
                                                 const char      *path,
                                                 GError         **error);

G_END_DECLS
