/* tessera-commands.h: each command's entry point, one file each
 * (tessera-run.c, tessera-status.c, …), which main() dispatches to.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

int              cmd_run                     (int argc, char **argv);
int              cmd_status                  (int argc, char **argv);
int              cmd_watch                   (int argc, char **argv);
int              cmd_set                     (int argc, char **argv);
int              cmd_clean                   (int argc, char **argv);
int              cmd_init                    (int argc, char **argv);
int              cmd_plugins                 (int argc, char **argv);
int              cmd_hosts                   (int argc, char **argv);
int              cmd_config                  (int argc, char **argv);

G_END_DECLS
