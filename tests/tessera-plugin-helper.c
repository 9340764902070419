/* tessera-plugin-helper.c: a real peer process using resource types from
 * plugins, through the registry only (as a third-party program would).
 *
 *   tessera-plugin-helper cycle TYPE FOLDER ID CYCLES HOLD_MS LOG REQUEST [KEY=VALUE...]
 *       CYCLES times: acquire REQUEST, log "A <µs> ID REQUEST GPUS", hold
 *       up to HOLD_MS ms, log "R <µs> ID REQUEST GPUS", release. GPUS is
 *       TESSERA_GPUS from the lock's environment, or "-".
 *   tessera-plugin-helper hold TYPE FOLDER ID REQUEST [KEY=VALUE...]
 *       acquire, print "ACQUIRED <environment>", hold until stdin closes,
 *       release, print "RELEASED".
 *   tessera-plugin-helper try TYPE FOLDER ID REQUEST [KEY=VALUE...]
 *       open the resource and read its folder, print "READY", wait for a
 *       line on stdin, try once: print "ACQUIRED", "UNAVAILABLE" or
 *       "ERROR <message>", then hold until stdin closes.
 *   tessera-plugin-helper request TYPE FOLDER ID REQUEST TIMEOUT [KEY=VALUE...]
 *       try once; if that fails, print "WAITING" and wait up to TIMEOUT s:
 *       print "ACQUIRED ms=N" (N: milliseconds since the first try) or
 *       "ERROR <code> <message>"; hold until stdin closes, release, print
 *       "RELEASED".
 *
 *   tessera-plugin-helper plugins
 *       print "PLUGIN <module> <manifest>" for each plugin found, then load
 *       each one's types: "LOADED <module>" or "ERROR <message>".
 *
 * KEY=VALUE are settings of the resource type (as in a keyfile group).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include "test-peer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static TesseraDynamicResource *
open_resource (const char *type, const char *folder, char **settings)
{
  g_autoptr(GStrvBuilder) keys = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) values = g_strv_builder_new ();
  g_auto(GStrv) k = NULL, v = NULL;
  g_autoptr(GError) error = NULL;
  TesseraDynamicResource *resource;

  g_strv_builder_add (keys, "lock-folder");
  g_strv_builder_add (values, folder);
  for (guint i = 0; settings[i] != NULL; i++)
    {
      g_auto(GStrv) kv = g_strsplit (settings[i], "=", 2);
      if (kv[1] == NULL)
        {
          g_printerr ("helper: “%s” is not KEY=VALUE\n", settings[i]);
          exit (2);
        }
      g_strv_builder_add (keys, kv[0]);
      g_strv_builder_add (values, kv[1]);
    }
  k = g_strv_builder_end (keys);
  v = g_strv_builder_end (values);
  resource = tessera_registry_create_resource (tessera_registry_get_default (), type, "r",
                                               (const char * const *) k, (const char * const *) v, &error);
  if (resource == NULL)
    {
      g_printerr ("helper: %s\n", error->message);
      exit (2);
    }
  return resource;
}

/* The job "helper" @id, its folder under the pool's jobs/. */
static TesseraJob *
make_job (const char *folder, const char *id)
{
  return test_peer_job_new (folder, "jobs", id, TRUE);
}

static char *
environment_of (TesseraDynamicDependencyLock *lock, const char *only)
{
  g_auto(GStrv) env = tessera_dynamic_dependency_lock_dup_environment (lock);

  if (env == NULL)
    return g_strdup ("-");
  if (only != NULL)
    {
      const char *value = g_environ_getenv (env, only);
      return g_strdup (value && *value ? value : "-");
    }
  return g_strjoinv (" ", env);
}

static TesseraDynamicDependencyLock *
acquire (TesseraDynamicResource *resource, TesseraJob *job, const char *request)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependency) dep =
    tessera_dynamic_resource_create_dependency (resource, job, request, &error);
  TesseraDynamicDependencyLock *lock = dep ? tessera_dynamic_dependency_lock (dep, 120, NULL, &error) : NULL;

  if (lock == NULL)
    {
      test_peer_say_error (error);
      exit (1);
    }
  return lock;
}

static TesseraDynamicDependency *
dependency_for (TesseraDynamicResource *resource, TesseraJob *job, const char *request)
{
  g_autoptr(GError) error = NULL;
  TesseraDynamicDependency *dep = tessera_dynamic_resource_create_dependency (resource, job, request, &error);

  if (dep == NULL)
    {
      g_printerr ("helper: %s\n", error->message);
      exit (2);
    }
  return dep;
}

static int
do_try (char **argv)
{
  g_autoptr(TesseraDynamicResource) resource = open_resource (argv[2], argv[3], argv + 6);
  g_autoptr(TesseraJob) job = make_job (argv[3], argv[4]);
  g_autoptr(TesseraDynamicDependency) dep = dependency_for (resource, job, argv[5]);

  return test_peer_try (TESSERA_TRACKED_DYNAMIC_RESOURCE (resource), dep, argv[4]);
}

static int
do_request (char **argv)
{
  g_autoptr(TesseraDynamicResource) resource = open_resource (argv[2], argv[3], argv + 7);
  g_autoptr(TesseraJob) job = make_job (argv[3], argv[4]);
  g_autoptr(TesseraDynamicDependency) dep = dependency_for (resource, job, argv[5]);

  return test_peer_request (dep, g_ascii_strtod (argv[6], NULL), FALSE);
}

static void
log_line (int fd, char kind, const char *id, const char *request, const char *gpus)
{
  g_autofree char *rest = g_strjoin (" ", request, gpus, NULL);

  test_peer_log (fd, kind, id, rest);
}

int
main (int argc, char **argv)
{
  if (argc >= 9 && strcmp (argv[1], "cycle") == 0)
    {
      g_autoptr(TesseraDynamicResource) resource = open_resource (argv[2], argv[3], argv + 9);
      g_autoptr(TesseraJob) job = make_job (argv[3], argv[4]);
      int cycles = atoi (argv[5]), hold_ms = atoi (argv[6]);
      int fd = open (argv[7], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

      if (fd < 0)
        return 2;
      for (int i = 0; i < cycles; i++)
        {
          g_autoptr(TesseraDynamicDependencyLock) lock = acquire (resource, job, argv[8]);
          g_autofree char *gpus = environment_of (lock, "TESSERA_GPUS");

          log_line (fd, 'A', argv[4], argv[8], gpus);
          g_usleep (g_random_int_range (hold_ms / 2, hold_ms + 1) * 1000);
          log_line (fd, 'R', argv[4], argv[8], gpus);
          g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
        }
      close (fd);
      return 0;
    }
  if (argc >= 6 && strcmp (argv[1], "hold") == 0)
    {
      g_autoptr(TesseraDynamicResource) resource = open_resource (argv[2], argv[3], argv + 6);
      g_autoptr(TesseraJob) job = make_job (argv[3], argv[4]);
      g_autoptr(TesseraDynamicDependencyLock) lock = acquire (resource, job, argv[5]);
      g_autofree char *env = environment_of (lock, NULL);

      test_peer_say ("ACQUIRED %s", env);
      test_peer_hold_until_stdin_closes ();
      g_assert_true (tessera_lock_release (TESSERA_LOCK (lock), NULL));
      test_peer_say ("RELEASED");
      return 0;
    }
  if (argc >= 6 && strcmp (argv[1], "try") == 0)
    return do_try (argv);
  if (argc >= 7 && strcmp (argv[1], "request") == 0)
    return do_request (argv);
  if (argc == 2 && strcmp (argv[1], "plugins") == 0)
    {
      TesseraRegistry *registry = tessera_registry_get_default ();
      g_autoptr(GPtrArray) plugins = tessera_registry_list_plugins (registry);

      for (guint i = 0; i < plugins->len; i++)
        {
          TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
          printf ("PLUGIN %s %s\n", tessera_plugin_info_get_module (info), tessera_plugin_info_get_manifest_path (info));
        }
      for (guint i = 0; i < plugins->len; i++)
        {
          TesseraPluginInfo *info = g_ptr_array_index (plugins, i);
          const char * const *types = tessera_plugin_info_get_resource_types (info);
          g_autoptr(GError) error = NULL;

          if (types[0] != NULL && tessera_registry_lookup_resource_type (registry, types[0], &error) == G_TYPE_INVALID)
            printf ("ERROR %s\n", error->message);
          else
            printf ("LOADED %s\n", tessera_plugin_info_get_module (info));
        }
      return 0;
    }
  g_printerr ("usage: see the comment at the top of tessera-plugin-helper.c\n");
  return 2;
}
