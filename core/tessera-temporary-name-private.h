/* tessera-temporary-name-private.h: the names of an atomic write's
 * temporary files, for the library's sweeps and the `tessera clean`
 * command, which says what they removed; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <tessera/tessera.h>
#include <string.h>

G_BEGIN_DECLS

/* A temporary file of a writer's own folder (.tessera-tmp-UID) older than
 * this (seconds) was left by a writer killed between its write and its
 * rename (which take microseconds); the library's sweep removes it. Every
 * write there is made under ipc.lock, and so is the sweep (at a process's
 * first write), so any temporary it finds is a dead writer's; the age is
 * a second guard only, should a writer come without ipc.lock. */
#define _TESSERA_WRITER_TMP_STALE_S TESSERA_FOLDER_PATH_TEMPORARY_STALE_S

/* What an atomic write adds to a file's name for its temporary: a dot
 * and six random characters. */
#define _TESSERA_TEMPORARY_SUFFIX_LEN 7

/* NAME.json, a dot and six random characters: the temporary file of an
 * atomic write of a JSON file (create_temporary_at in
 * tessera-folder-io.c makes them). */
static inline gboolean
_tessera_is_temporary_name (const char *name)
{
  const char *dot = strrchr (name, '.');

  return dot != NULL && strlen (dot + 1) == 6 && dot - name > 5 && strncmp (dot - 5, ".json", 5) == 0;
}

/* A lock file's temporary (TASK@ID.json plus the six characters): the
 * only ones swept from a writer's own folder, so a folder of ours put in
 * its place by a co-user (a rename in the pool's folder) loses nothing
 * else. */
static inline gboolean
_tessera_is_lock_file_temporary_name (const char *name)
{
  return _tessera_is_temporary_name (name) && strchr (name, '@') != NULL;
}

G_END_DECLS
