/* tessera-counter-token.h: the countertoken plugin's classes (private to
 * the plugin; programs reach them through the registry and GObject
 * properties).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

#define TESSERA_TYPE_COUNTER_TOKEN (tessera_counter_token_get_type ())
G_DECLARE_FINAL_TYPE (TesseraCounterToken, tessera_counter_token, TESSERA, COUNTER_TOKEN, TesseraCounterResource)

#define TESSERA_TYPE_COUNTER_TOKEN_DEPENDENCY (tessera_counter_token_dependency_get_type ())
G_DECLARE_FINAL_TYPE (TesseraCounterTokenDependency, tessera_counter_token_dependency, TESSERA, COUNTER_TOKEN_DEPENDENCY, TesseraCounterDependency)

#define TESSERA_TYPE_COUNTER_TOKEN_LOCK (tessera_counter_token_lock_get_type ())
G_DECLARE_FINAL_TYPE (TesseraCounterTokenLock, tessera_counter_token_lock, TESSERA, COUNTER_TOKEN_LOCK, TesseraDynamicDependencyLock)

#define TESSERA_TYPE_COUNTER_TOKEN_JOB_LOCK (tessera_counter_token_job_lock_get_type ())
G_DECLARE_FINAL_TYPE (TesseraCounterTokenJobLock, tessera_counter_token_job_lock, TESSERA, COUNTER_TOKEN_JOB_LOCK, TesseraJobDependencyLock)

void _tessera_counter_token_register (GTypeModule *module);
void _tessera_counter_token_dependency_register (GTypeModule *module);
void _tessera_counter_token_lock_register (GTypeModule *module);
void _tessera_counter_token_job_lock_register (GTypeModule *module);

G_END_DECLS
