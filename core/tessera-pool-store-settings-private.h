/* tessera-pool-store-settings-private.h: where a resource's pool lives,
 * asked of the resource (core/tessera-pool-store-settings.c), never
 * installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Whether @resource's pool lives in its folder (the folder store), the
 * only place where holders are files and there is an ipc.lock
 * (tessera-pool-store-settings.c). */
gboolean _tessera_dynamic_resource_in_a_folder (TesseraDynamicResource *resource);
/* Whether that folder is on a file system this kernel alone changes
 * (_tessera_fs_is_local()), where a try of ipc.lock costs no round trip. */
gboolean _tessera_dynamic_resource_in_a_local_folder (TesseraDynamicResource *resource);

G_END_DECLS
