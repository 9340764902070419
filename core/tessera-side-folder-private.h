/* tessera-side-folder-private.h: a folder pool's side entries, files of
 * its side folders (tessera-side-folder.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* What the folder store's side_list, side_put and side_delete do
 * (tessera-pool-store-private.h), given the store's lock folder
 * @lock_folder (its path; %NULL before the store's open) rather than the
 * store: side entry KIND/NAME of the pool in @lock_folder is the file
 * @lock_folder/KIND/NAME.json (the mutex's intents/TASK@ID.json), the
 * side folder reached through tessera_pool_part_open_side_folder().
 * What each call means, and under which lock, is said there; a folder's
 * ipc.lock keeps peers from deciding in between, so a delete is done at
 * once. Any thread: each call opens the folder again. */

/* (transfer full): name (without ".json") → text of the regular files
 * KIND/NAME.json, each read up to 4 KiB: one larger, with a NUL byte, or
 * that cannot be read is listed with the empty text (it says nothing:
 * its type may delete it). Empty when the folder is missing. Unless
 * @read_only (the store's: it only looks), a writer's temporary file left
 * there for 5 minutes goes. */
GHashTable *_tessera_side_folder_list   (const char  *lock_folder,
                                         const char  *kind,
                                         gboolean     read_only);
/* Writes @text as KIND/NAME.json, through a temporary file and a rename
 * (the folder made when missing, if this user may). */
gboolean    _tessera_side_folder_put    (const char  *lock_folder,
                                         const char  *kind,
                                         const char  *name,
                                         const char  *text,
                                         GError     **error);
/* Removes KIND/NAME.json when it is a regular file; one already gone,
 * or a missing folder, is no error. */
gboolean    _tessera_side_folder_delete (const char  *lock_folder,
                                         const char  *kind,
                                         const char  *name,
                                         GError     **error);

G_END_DECLS
