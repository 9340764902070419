/* tessera-tool.h: what the files of the `tessera` command share that is
 * no unit's own: how a pool's folder is opened, and descriptors closed
 * with their scope. Each unit has its own header (tessera-output.h,
 * tessera-options.h, tessera-describe.h, …).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <fcntl.h>
#include <glib.h>
#include <unistd.h>

G_BEGIN_DECLS

/* A folder of the pool, opened where it is (never through a link). */
#define FOLDER_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* Closes *@fd if it is open: `AUTO_FD int fd = …` ends with its scope. */
static inline void
close_if_open (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}

/* An int descriptor closed when it goes out of scope. */
#define AUTO_FD __attribute__ ((cleanup (close_if_open)))

G_END_DECLS
