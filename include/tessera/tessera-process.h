/* tessera-process.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <json-glib/json-glib.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

/**
 * TesseraProcessState:
 * @TESSERA_PROCESS_ALIVE: the process runs (or is judged to, see below)
 * @TESSERA_PROCESS_DEAD: the process has exited, is a zombie, or its pid now
 *   belongs to another process
 * @TESSERA_PROCESS_REMOTE: a pid check here says nothing sure about the
 *   process (another host, another pid namespace, hidden by `hidepid`, no
 *   start time to tell a reused pid): its job lock decides, and while
 *   nothing decides, it counts
 * @TESSERA_PROCESS_UNKNOWN: Tessera cannot judge the process at all (a
 *   process type it does not know, such as experimaestro's "slurm", or a
 *   pid it cannot read): its holder counts
 *
 * What a liveness check found out about a [class@Tessera.Process].
 */
typedef enum {
  TESSERA_PROCESS_ALIVE,
  TESSERA_PROCESS_DEAD,
  TESSERA_PROCESS_REMOTE,
  TESSERA_PROCESS_UNKNOWN,
} TesseraProcessState;

#define TESSERA_TYPE_PROCESS (tessera_process_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraProcess, tessera_process, TESSERA, PROCESS, GObject)

/**
 * TesseraProcessClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.Process], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraProcess     *tessera_process_new_self        (void);
TESSERA_AVAILABLE_IN_ALL
TesseraProcess     *tessera_process_new_local       (GPid          pid);
TESSERA_AVAILABLE_IN_ALL
TesseraProcess     *tessera_process_new_from_json   (JsonNode     *node,
                                                     GError      **error);
TESSERA_AVAILABLE_IN_ALL
JsonNode           *tessera_process_to_json         (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
GPid                tessera_process_get_pid         (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
guint64             tessera_process_get_start_time  (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_process_get_host        (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_process_get_boot_id     (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_process_get_process_type (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_process_get_problem     (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
JsonNode           *tessera_process_get_spec        (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
gint64              tessera_process_get_uid         (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
void                tessera_process_set_command_line (TesseraProcess     *self,
                                                      const char * const *argv);
TESSERA_AVAILABLE_IN_ALL
const char * const *tessera_process_get_command_line (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
void                tessera_process_set_batch_job_id (TesseraProcess *self,
                                                      const char     *id);
TESSERA_AVAILABLE_IN_ALL
const char         *tessera_process_get_batch_job_id (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_process_is_local        (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
TesseraProcessState tessera_process_check           (TesseraProcess *self);
TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_process_equal           (TesseraProcess *a,
                                                     TesseraProcess *b);
TESSERA_AVAILABLE_IN_ALL
gboolean            tessera_process_pid_has_ended   (GPid          pid);

G_END_DECLS
