/* tessera-config-entry.h: what the files of the `tessera` command's
 * configuration share: a resource's entry (its settings as read), the
 * configuration that holds them, and the helpers each file of it uses.
 * Only those files include it; the rest of the command uses
 * tessera-config.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-config.h"

G_BEGIN_DECLS

typedef struct
{
  char *name;
  char *type;
  GStrv keys;     /* property names */
  GStrv values;
  int mode;       /* mode= (octal), or -1: as the folder it is in */
  gint64 gid;     /* group=, or -1: as the folder it is in */
  gboolean sharing_set;   /* mode= or group= given */
  TesseraTrackedDynamicResource *resource;
} Entry;

typedef struct
{
  char *path;
  TesseraConfigFileState state;
} LookedAt;

struct _TesseraConfig
{
  char *source;         /* file, or NULL for the built-in default */
  GPtrArray *entries;   /* Entry, in file order */
  gboolean read_only;   /* open resources only to look (status, watch) */
  GPtrArray *looked_at; /* LookedAt: the files looked for, in order */
  GPtrArray *warnings;  /* what a newer file has that is ignored */
};

/* tessera-config.c: the configuration and its entries */
TesseraConfig *config_new        (const char *source);
void           config_error      (GError **error, const char *file, const char *group, const char *key,
                                  const char *message);
Entry         *find_entry        (TesseraConfig *self, const char *name);
const char    *entry_get         (Entry *entry, const char *key);
gboolean       is_setup_setting  (GParamSpec *pspec);

/* tessera-config-sharing.c: mode= and group= (calls nothing above) */
const char    *check_sharing_key (GKeyFile *keyfile, const char *group, const char *key, int *mode,
                                  gint64 *gid);
void           apply_sharing     (Entry *entry, const char *folder);

/* tessera-config-default.c: with no file anywhere */
TesseraConfig *builtin_default   (void);

G_END_DECLS
