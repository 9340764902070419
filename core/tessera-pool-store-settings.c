/* tessera-pool-store-settings.c: where a pool lives, as configured: the
 * store settings of a tracked resource (`store=etcd`, `endpoints=`, …)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* The settings are properties of every tracked resource, so that a key
 * file's `[resource NAME]` group and the registry set them like any other
 * key; the core reads only `store` (a name, tessera-pool-store-lookup.c),
 * the store the rest. A setting the chosen store does not read is
 * refused rather than ignored. */
#include "tessera-host-lease-private.h"
#include "tessera-pool-store-private.h"
#include "tessera-private.h"

/* In property order: index i is property first_id + i. */
static const char * const names[TESSERA_POOL_STORE_N_SETTINGS] = {
  "store", "endpoints", "prefix", "lease", "ca", "cert", "key", "user", "password",
  "request-timeout",
};

void
_tessera_pool_store_settings_install (GObjectClass *klass, guint first_id)
{
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  /**
   * TesseraTrackedDynamicResource:store:
   *
   * The store the pool lives in: `folder` (the default, experimaestro's
   * lock folder at [property@Tessera.TrackedDynamicResource:path]) or
   * `etcd` (an etcd cluster, for hosts without a shared file system whose
   * locks can be trusted: a plugin, loaded only when named here).
   */
  g_object_class_install_property (klass, first_id + 0,
    g_param_spec_string ("store", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:endpoints:
   *
   * The etcd store's members, as comma-separated URLs
   * (`http://10.0.0.1:2379,http://10.0.0.2:2379`), tried in turn.
   */
  g_object_class_install_property (klass, first_id + 1,
    g_param_spec_string ("endpoints", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:prefix:
   *
   * The etcd store's key prefix (`/tessera/` when not set): the pool lives
   * under `PREFIX/NAME/`, NAME being the resource's name.
   */
  g_object_class_install_property (klass, first_id + 2,
    g_param_spec_string ("prefix", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:lease:
   *
   * Seconds of the etcd store's lease (0: 15 s): a process that stops
   * renewing it (crashed, frozen, cut off) loses its holdings after this
   * long. From 2 to 86400.
   */
  g_object_class_install_property (klass, first_id + 3,
    g_param_spec_double ("lease", NULL, NULL, 0, TESSERA_HOST_LEASE_MAX, 0, flags));
  /**
   * TesseraTrackedDynamicResource:ca:
   *
   * A file of CA certificates (PEM) that the etcd store's `https://`
   * members must be signed by.
   */
  g_object_class_install_property (klass, first_id + 4,
    g_param_spec_string ("ca", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:cert:
   *
   * The etcd store's client certificate (PEM), for members that ask for one.
   */
  g_object_class_install_property (klass, first_id + 5,
    g_param_spec_string ("cert", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:key:
   *
   * The private key (PEM) of [property@Tessera.TrackedDynamicResource:cert],
   * when it is not in the certificate's file.
   */
  g_object_class_install_property (klass, first_id + 6,
    g_param_spec_string ("key", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:user:
   *
   * The etcd store's user, when the cluster has authentication on.
   */
  g_object_class_install_property (klass, first_id + 7,
    g_param_spec_string ("user", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:password:
   *
   * The password of [property@Tessera.TrackedDynamicResource:user].
   */
  g_object_class_install_property (klass, first_id + 8,
    g_param_spec_string ("password", NULL, NULL, NULL, flags));
  /**
   * TesseraTrackedDynamicResource:request-timeout:
   *
   * Seconds one request of the etcd store may wait on one member (0: 2 s)
   * before it goes to the next, a whole number from 1 to 30: a member
   * that misses it is tried last for a while.
   */
  g_object_class_install_property (klass, first_id + 9,
    g_param_spec_double ("request-timeout", NULL, NULL, 0, TESSERA_HOST_LEASE_MAX, 0, flags));
}

/* The settings that are numbers (seconds): NULL for a string's index. */
static double *
number_slot (TesseraPoolStoreSettings *settings, guint index)
{
  return index == 3 ? &settings->lease : index == 9 ? &settings->request_timeout : NULL;
}

static char **
string_slot (TesseraPoolStoreSettings *settings, guint index)
{
  char **slots[TESSERA_POOL_STORE_N_SETTINGS] = {
    &settings->store, &settings->endpoints, &settings->prefix, NULL, &settings->ca,
    &settings->cert, &settings->key, &settings->user, &settings->password, NULL,
  };

  g_return_val_if_fail (index < TESSERA_POOL_STORE_N_SETTINGS, NULL);
  return slots[index];
}

void
_tessera_pool_store_settings_set (TesseraPoolStoreSettings *settings,
                                  guint                     index,
                                  const GValue             *value)
{
  double *number = number_slot (settings, index);
  char **slot;

  if (number != NULL)
    {
      *number = g_value_get_double (value);
      return;
    }
  slot = string_slot (settings, index);
  /* Construct-only: the value not given arrives as NULL. */
  if (slot != NULL && g_value_get_string (value) != NULL)
    {
      g_free (*slot);
      *slot = g_value_dup_string (value);
    }
}

void
_tessera_pool_store_settings_get (TesseraPoolStoreSettings *settings,
                                  guint                     index,
                                  GValue                   *value)
{
  double *number = number_slot (settings, index);
  char **slot;

  if (number != NULL)
    {
      g_value_set_double (value, *number);
      return;
    }
  slot = string_slot (settings, index);
  if (slot != NULL)
    g_value_set_string (value, *slot);
}

void
_tessera_pool_store_settings_clear (TesseraPoolStoreSettings *settings)
{
  for (guint i = 0; i < TESSERA_POOL_STORE_N_SETTINGS; i++)
    if (number_slot (settings, i) == NULL)
      g_clear_pointer (string_slot (settings, i), g_free);
  settings->lease = 0;
  settings->request_timeout = 0;
}

gboolean
_tessera_pool_store_settings_elsewhere (const TesseraPoolStoreSettings *settings)
{
  return settings->store != NULL && !g_str_equal (settings->store, "folder");
}

gboolean
_tessera_pool_store_settings_check (const TesseraPoolStoreSettings *settings,
                                    const TesseraPoolStoreClass    *klass,
                                    GError                        **error)
{
  for (guint i = 1; i < TESSERA_POOL_STORE_N_SETTINGS; i++)
    {
      double *number = number_slot ((TesseraPoolStoreSettings *) settings, i);
      gboolean given = number != NULL ? *number != 0
                                      : *string_slot ((TesseraPoolStoreSettings *) settings, i) != NULL;

      if (given && (klass->settings == NULL || !g_strv_contains (klass->settings, names[i])))
        {
          g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                       _("The %s store has no setting “%s”"), klass->name, names[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* The lock folder @folder (the resource's `path`), made absolute; "" is
 * none. Only the folder store needs one: a pool elsewhere keeps nothing
 * of its own in it (a resource type may keep local things there). */
gboolean
_tessera_pool_store_settings_check_folder (const TesseraPoolStoreSettings *settings,
                                           char                          **folder,
                                           GError                        **error)
{
  if (*folder != NULL && **folder == '\0')
    g_clear_pointer (folder, g_free);
  if (*folder == NULL && !_tessera_pool_store_settings_elsewhere (settings))
    {
      g_set_error (error, TESSERA_ERROR, TESSERA_ERROR_INVALID_CONFIGURATION,
                   _("A tracked resource needs a lock folder"));
      return FALSE;
    }
  if (*folder != NULL && !g_path_is_absolute (*folder))
    {
      g_autofree char *relative = g_steal_pointer (folder);

      *folder = g_canonicalize_filename (relative, NULL);
    }
  return TRUE;
}
