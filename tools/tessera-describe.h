/* tessera-describe.h: a resource and its holders, described (see
 * tessera-describe.c): the JSON that status and watch show, its text, and
 * the names in it made safe to print.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/types.h>
#include <tessera/tessera.h>

#include "tessera-config.h"

G_BEGIN_DECLS

char            *escape_name                 (const char *name, gboolean for_terminal);
char            *holder_name                 (TesseraDynamicLockFile *lock_file);
const char      *user_name                   (GHashTable *users, uid_t uid);
JsonNode        *describe                    (TesseraConfig *config, const char *name,
                                              TesseraTrackedDynamicResource *resource, gboolean fresh,
                                              GError **unusable_out);
JsonNode        *describe_unreadable         (TesseraConfig *config, const char *name, const char *why);
void             format_description          (JsonNode *node, GString *out);
/* The text of format_description() for an open resource, written to @out
 * without building its holders' JSON. */
void             describe_text               (TesseraConfig *config, const char *name,
                                              TesseraTrackedDynamicResource *resource, gboolean fresh,
                                              GString *out, GError **unusable_out);

/* @sum + @amount of a resource's units, both at least 0, stopping at
 * G_MAXINT64: counts come from files a co-user may write, and may be
 * anything up to that. */
static inline gint64
add_units (gint64 sum, gint64 amount)
{
  return amount > G_MAXINT64 - sum ? G_MAXINT64 : sum + amount;
}

G_END_DECLS
