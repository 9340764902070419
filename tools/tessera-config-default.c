/* tessera-config-default.c: the built-in configuration, which serves
 * when no file is found anywhere: a `cpu` counter token sized to the
 * CPUs and a `gpu` resource of the detected devices, under the user's
 * state directory, in a folder per host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-config-entry.h"

/* The built-in pools count this machine's CPUs and GPUs, so they are per
 * host even when the state folder is a home shared by many hosts (NFS):
 * the folder names the machine id and the host name (clones of one image
 * share a machine id, not their names). A pool shared by hosts is what a
 * configured `path` is for. */
static char *
dup_host_state_dir (void)
{
  g_autofree char *state = tessera_config_dup_state_dir ();
  g_autofree char *machine_id = NULL;
  g_autofree char *name = NULL;

  if (!g_file_get_contents ("/etc/machine-id", &machine_id, NULL, NULL))
    machine_id = g_strdup ("");
  g_strstrip (machine_id);
  name = g_strdup_printf ("host-%s%s%s", g_get_host_name (), *machine_id ? "-" : "", machine_id);
  g_strdelimit (name, "/", '_');
  return g_build_filename (state, name, NULL);
}

TesseraConfig *
builtin_default (void)
{
  TesseraConfig *self = config_new (NULL);
  g_autofree char *state = dup_host_state_dir ();
  Entry *cpu = g_new0 (Entry, 1);
  Entry *gpu = g_new0 (Entry, 1);
  const char *cpu_keys[] = { "lock-folder", "total", NULL };
  const char *gpu_keys[] = { "lock-folder", "devices", NULL };
  g_autofree char *cpus = g_strdup_printf ("%u", g_get_num_processors ());
  g_autofree char *cpu_path = g_build_filename (state, "cpu", NULL);
  g_autofree char *gpu_path = g_build_filename (state, "gpu", NULL);
  const char *cpu_values[] = { cpu_path, cpus, NULL };
  const char *gpu_values[] = { gpu_path, "auto", NULL };

  cpu->name = g_strdup ("cpu");
  cpu->type = g_strdup ("countertoken");
  cpu->keys = g_strdupv ((char **) cpu_keys);
  cpu->values = g_strdupv ((char **) cpu_values);
  gpu->name = g_strdup ("gpu");
  gpu->type = g_strdup ("gpu");
  gpu->keys = g_strdupv ((char **) gpu_keys);
  gpu->values = g_strdupv ((char **) gpu_values);
  g_ptr_array_add (self->entries, cpu);
  g_ptr_array_add (self->entries, gpu);
  return self;
}
