/* tessera-host-private.h: this host (core/tessera-host.c), never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* This host (tessera-host.c) */
const char *_tessera_boot_id          (void);
const char *_tessera_host_name        (void);
const char *_tessera_machine_id       (void);
const char *_tessera_host_id          (void);
/* The build (git describe, else the version), for the host marks. */
extern const char _tessera_build_id[];
guint64     _tessera_pid_namespace    (void);
gboolean    _tessera_is_this_host     (const char  *machine_id,
                                       const char  *host_id);
gint64      _tessera_first_seen       (const char  *key);
gboolean    _tessera_locks_cross_hosts (const char *path,
                                        char      **why);
/* Whether @text is shaped like a host id: 32 lowercase hex digits. */
gboolean    _tessera_is_host_id       (const char  *text);
void        _tessera_forget_seen      (const char  *key);

G_END_DECLS
