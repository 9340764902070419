/* tessera-embed.c: an application with a main loop takes 2 tokens of a
 * pool for itself, without blocking, works, and gives them back.
 *
 *   meson devenv -C _build examples/tessera-embed [FOLDER]
 *
 * (Run by tests/test-embed.c; examples/tessera-embed.py is the same in
 * Python.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include <stdio.h>

typedef struct
{
  GMainLoop *loop;
  int status;
} Demo;

static void
on_taken (GObject *source, GAsyncResult *result, gpointer data)
{
  Demo *demo = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TesseraDynamicDependencyLock) lock = NULL;

  lock = tessera_dynamic_resource_take_finish (TESSERA_DYNAMIC_RESOURCE (source), result, &error);
  if (lock == NULL)
    {
      g_printerr ("%s\n", error->message);   /* TESSERA_ERROR_TIMEOUT, … */
      demo->status = 1;
    }
  else
    {
      printf ("took 2 of %s\n", tessera_dynamic_resource_get_name (TESSERA_DYNAMIC_RESOURCE (source)));
      /* … work … then give the tokens back (or drop the last reference):
       * the private job Tessera made for the request goes with them. */
      if (!tessera_lock_release (TESSERA_LOCK (lock), &error))
        {
          g_printerr ("%s\n", error->message);
          demo->status = 1;
        }
    }
  g_main_loop_quit (demo->loop);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(TesseraCounterResource) cpu = NULL;
  Demo demo = { loop, 0 };

  /* A pool of 8 tokens in a folder (created if missing). */
  cpu = tessera_counter_resource_new ("cpu", argc > 1 ? argv[1] : "/var/lib/tessera/cpu", 8, &error);
  if (cpu == NULL)
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  /* Take 2 for this process, waiting at most 60 s; the main loop runs
   * meanwhile. A request is a job of its own: a job holds a resource
   * once, so ask for more in one request. */
  tessera_dynamic_resource_take_async (TESSERA_DYNAMIC_RESOURCE (cpu), "2", 60, NULL, on_taken, &demo);
  g_main_loop_run (loop);
  return demo.status;
}
