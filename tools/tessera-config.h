/* tessera-config.h: keyfile configuration of the `tessera` command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

typedef struct _TesseraConfig TesseraConfig;

/* The configuration level of this Tessera: what its files may say. A file
 * whose `[tessera] requires=` is above it is written for a newer Tessera;
 * what this one does not know in it is ignored with a warning. Raised when
 * a release adds keys or groups (docs/design.md, "Configuration"). */
#define TESSERA_CONFIG_LEVEL 1

/* What became of a file the configuration is looked for in. */
typedef enum
{
  TESSERA_CONFIG_FILE_READ,       /* read: the configuration */
  TESSERA_CONFIG_FILE_NOT_READ,   /* there, but a file before it was read */
  TESSERA_CONFIG_FILE_ABSENT,     /* not there */
} TesseraConfigFileState;

TesseraConfig  *tessera_config_load          (const char     *explicit_path,
                                              GError        **error);
TesseraConfig  *tessera_config_load_from_data (const char    *file,
                                               const char    *text,
                                               gsize          length,
                                               GError       **error);
void            tessera_config_free          (TesseraConfig  *self);
const char     *tessera_config_get_source    (TesseraConfig  *self);
GPtrArray      *tessera_config_get_names     (TesseraConfig  *self);
guint           tessera_config_get_n_files   (TesseraConfig  *self);
const char     *tessera_config_get_file      (TesseraConfig  *self,
                                              guint           index,
                                              TesseraConfigFileState *state);
const char * const *tessera_config_get_warnings (TesseraConfig *self,
                                                 guint         *n);
gboolean        tessera_config_get_settings  (TesseraConfig  *self,
                                              const char     *name,
                                              const char * const **keys,
                                              const char * const **values);
gboolean        tessera_config_has           (TesseraConfig  *self,
                                              const char     *name);
const char     *tessera_config_get_type_name (TesseraConfig  *self,
                                              const char     *name);
char           *tessera_config_dup_path      (TesseraConfig  *self,
                                              const char     *name);
char           *tessera_config_dup_pool_folder  (TesseraConfig  *self,
                                              const char     *name);
TesseraTrackedDynamicResource *tessera_config_open (TesseraConfig  *self,
                                                    const char     *name,
                                                    GError        **error);
char           *tessera_config_dup_state_dir (void);
gboolean        tessera_config_has_sharing (TesseraConfig  *self,
                                            const char     *name);
gboolean        tessera_config_is_type_setting (GParamSpec *pspec);
char           *tessera_config_dup_shown_value (const char *key,
                                                const char *value);
void            tessera_config_set_read_only (TesseraConfig  *self,
                                              gboolean        read_only);
gboolean        tessera_config_check_informations_content (TesseraTrackedDynamicResource *resource,
                                                           JsonNode                      *informations,
                                                           GError                       **error);
gboolean        tessera_config_check_informations (TesseraConfig                 *self,
                                                   const char                    *name,
                                                   TesseraTrackedDynamicResource *resource,
                                                   char                         **notice,
                                                   GError                       **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraConfig, tessera_config_free)

G_END_DECLS
