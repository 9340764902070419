/* tessera-private.h: the library's messages (its gettext domain), what every
 * file of libtessera-1 needs; never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "config.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/* Messages go through the library's own domain, bound once. */
const char *_tessera_gettext (const char *msgid) G_GNUC_FORMAT (1);
#define _(s) _tessera_gettext (s)
#define N_(s) (s)

/* A translated "… %s: %s" message with the path, then the system's reason. */
#define _tessera_set_io_error(error, saved_errno, format, path) \
  g_set_error ((error), G_IO_ERROR, g_io_error_from_errno (saved_errno), (format), (path), \
               g_strerror (saved_errno))

G_END_DECLS
