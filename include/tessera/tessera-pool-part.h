/* tessera-pool-part.h: the parts Tessera keeps in a folder pool
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

/**
 * TesseraPoolPart:
 * @TESSERA_POOL_PART_JOBS: `jobs/`: one lock file per holder
 * @TESSERA_POOL_PART_RUNS: `runs/`: each user's job folders of
 *   `tessera run` (`runs/UID/`, [func@Tessera.pool_part_open_runs])
 * @TESSERA_POOL_PART_QUEUE: `queue/`: the requests that wait
 * @TESSERA_POOL_PART_HOSTS: `hosts/`: each user's mark and heartbeat of
 *   each host
 * @TESSERA_POOL_PART_IPC_LOCK: `ipc.lock`: held around every change of
 *   the folder
 * @TESSERA_POOL_PART_INFORMATIONS: `informations.json`: the resource's
 *   data (its capacity, its settings)
 * @TESSERA_POOL_PART_LAST: the number of parts
 *
 * The parts Tessera keeps in a folder pool's lock folder, as
 * experimaestro's format names them. Besides them it keeps its writers'
 * temporary folders and the fencing counter's files, which only the
 * library makes and reads, and a resource type may keep a side folder
 * there ([func@Tessera.pool_part_open_side_folder]). A program that
 * reaches a part itself gets its name from
 * [func@Tessera.pool_part_get_name], never spells it.
 */
typedef enum {
  TESSERA_POOL_PART_JOBS,
  TESSERA_POOL_PART_RUNS,
  TESSERA_POOL_PART_QUEUE,
  TESSERA_POOL_PART_HOSTS,
  TESSERA_POOL_PART_IPC_LOCK,
  TESSERA_POOL_PART_INFORMATIONS,
  TESSERA_POOL_PART_LAST,
} TesseraPoolPart;

/**
 * TesseraPoolPartFlags:
 * @TESSERA_POOL_PART_FLAGS_NONE: a file, written by its owner only
 * @TESSERA_POOL_PART_FLAGS_FOLDER: a folder (else a file)
 * @TESSERA_POOL_PART_FLAGS_GROUP_WRITES: in a pool shared with a group,
 *   every member writes in it (see
 *   [func@Tessera.pool_part_share_with_group])
 * @TESSERA_POOL_PART_FLAGS_STICKY: in a pool shared with a group, sticky:
 *   only an entry's owner (or root, or the folder's owner) renames or
 *   removes it
 * @TESSERA_POOL_PART_FLAGS_MADE_AHEAD: `tessera init --group` makes it
 *   (else the first process that needs it does)
 * @TESSERA_POOL_PART_FLAGS_OF_RESOURCE: made with every resource's folder:
 *   the resource's `mode=` and `group=` settings apply to it
 * @TESSERA_POOL_PART_FLAGS_OWNERS: in a pool shared with a group, believed
 *   only when it is root's or the pool's owner's
 *
 * What a [enum@Tessera.PoolPart] is and how a pool shared with a group
 * has it.
 */
typedef enum {
  TESSERA_POOL_PART_FLAGS_NONE = 0,
  TESSERA_POOL_PART_FLAGS_FOLDER = 1 << 0,
  TESSERA_POOL_PART_FLAGS_GROUP_WRITES = 1 << 1,
  TESSERA_POOL_PART_FLAGS_STICKY = 1 << 2,
  TESSERA_POOL_PART_FLAGS_MADE_AHEAD = 1 << 3,
  TESSERA_POOL_PART_FLAGS_OF_RESOURCE = 1 << 4,
  TESSERA_POOL_PART_FLAGS_OWNERS = 1 << 5,
} TesseraPoolPartFlags;

TESSERA_AVAILABLE_IN_ALL
const char          *tessera_pool_part_get_name  (TesseraPoolPart part);

TESSERA_AVAILABLE_IN_ALL
TesseraPoolPartFlags tessera_pool_part_get_flags (TesseraPoolPart part);

TESSERA_AVAILABLE_IN_ALL
int tessera_pool_part_open              (const char      *lock_folder,
                                         TesseraPoolPart  part);

TESSERA_AVAILABLE_IN_ALL
int tessera_pool_part_open_runs         (const char      *lock_folder,
                                         char           **path);

TESSERA_AVAILABLE_IN_ALL
char *tessera_pool_part_make_job_folder (const char      *lock_folder,
                                         const char      *root,
                                         char           **identifier,
                                         int             *folder_fd,
                                         GError         **error);

TESSERA_AVAILABLE_IN_ALL
char *tessera_pool_part_dup_holder_name (const char      *entry);

TESSERA_AVAILABLE_IN_ALL
gint64 tessera_pool_part_get_holder_owner (const char    *lock_folder,
                                           const char    *name);
TESSERA_AVAILABLE_IN_ALL
gint64 tessera_pool_part_get_entry_owner (const char     *lock_folder,
                                          const char     *path);

TESSERA_AVAILABLE_IN_ALL
int tessera_pool_part_open_side_folder  (const char      *lock_folder,
                                         const char      *kind,
                                         gboolean         create);

TESSERA_AVAILABLE_IN_ALL
char **tessera_pool_part_list_side_folders (int lock_folder_fd);

TESSERA_AVAILABLE_IN_ALL
int tessera_pool_part_share_with_group  (int              fd,
                                         guint32          gid,
                                         gboolean         writable_file,
                                         gboolean         sticky);

TESSERA_AVAILABLE_IN_ALL
int tessera_pool_part_give_settings     (int              fd,
                                         int              mode,
                                         gint64           gid);

G_END_DECLS
