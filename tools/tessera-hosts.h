/* tessera-hosts.h: the hosts a pool knows (see tessera-hosts.c), for a
 * mistyped clean --host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

#include "tessera-config.h"

G_BEGIN_DECLS

GHashTable      *dup_known_hosts             (TesseraConfig *config, GPtrArray *names);
char            *join_host_names             (GHashTable *hosts);

G_END_DECLS
