/* tessera-proc.c: this machine's processes as /proc shows them: whether
 * they can be listed here, and a process's children, from
 * /proc/PID/task/TID/children. Not a verdict on a holder (that is the
 * library's judge): the command's own processes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-proc.h"

#include <stdlib.h>
#include <unistd.h>

/**
 * tessera_proc_lists_children:
 *
 * Whether this process's descendants can be listed: /proc is our pid
 * namespace's (/proc/self names our pid; another namespace's pids are
 * not ours) and the kernel shows /proc/PID/task/TID/children.
 *
 * Returns: %TRUE when tessera_proc_dup_children() can be trusted
 */
gboolean
tessera_proc_lists_children (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self", NULL);
  g_autofree char *own = g_strdup_printf ("/proc/%d/task/%d/children", (int) getpid (), (int) getpid ());

  return self != NULL && atoi (self) == (int) getpid () && g_file_test (own, G_FILE_TEST_EXISTS);
}

/**
 * tessera_proc_dup_children:
 * @pid: a process of this pid namespace
 *
 * The children of @pid, from each of its threads (the main one first, as
 * /proc lists them): a child belongs to the thread that forked it.
 *
 * Returns: (transfer full) (element-type GPid): its children, empty when
 *   it has none or they cannot be read
 */
GArray *
tessera_proc_dup_children (GPid pid)
{
  GArray *result = g_array_new (FALSE, FALSE, sizeof (GPid));
  g_autofree char *tasks = g_strdup_printf ("/proc/%d/task", (int) pid);
  g_autoptr(GDir) dir = g_dir_open (tasks, 0, NULL);
  const char *task;

  while (dir != NULL && (task = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (tasks, task, "children", NULL);
      g_autofree char *children = NULL;
      g_auto(GStrv) pids = NULL;

      if (!g_file_get_contents (path, &children, NULL, NULL))
        continue;
      pids = g_strsplit_set (children, " \n", -1);
      for (guint j = 0; pids[j] != NULL; j++)
        {
          GPid child = atoi (pids[j]);

          if (child > 0)
            g_array_append_val (result, child);
        }
    }
  return result;
}
