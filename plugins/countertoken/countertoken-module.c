/* countertoken-module.c: the entry point the registry calls on loading.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <gmodule.h>

#include "tessera-counter-token.h"

G_MODULE_EXPORT void tessera_countertoken_register_types (GTypeModule *module);

G_MODULE_EXPORT void
tessera_countertoken_register_types (GTypeModule *module)
{
  _tessera_counter_token_dependency_register (module);
  _tessera_counter_token_job_lock_register (module);
  _tessera_counter_token_lock_register (module);
  _tessera_counter_token_register (module);

  tessera_registry_register_resource_type ("countertoken", TESSERA_TYPE_COUNTER_TOKEN);
  tessera_dynamic_dependency_lock_register_class (TESSERA_TYPE_COUNTER_TOKEN_LOCK,
                                                  "tessera.countertoken", "CounterTokenLock");
  /* locks.json written by experimaestro names its own module. */
  tessera_dynamic_dependency_lock_register_class (TESSERA_TYPE_COUNTER_TOKEN_LOCK,
                                                  "experimaestro.tokens", "CounterTokenLock");
}
