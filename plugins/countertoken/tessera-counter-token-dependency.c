/* tessera-counter-token-dependency.c: "job J needs COUNT tokens"; the
 * count is the public TesseraCounterDependency's, the lock is the
 * plugin's own (it writes the token's locks.json entry).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-counter-token.h"

struct _TesseraCounterTokenDependency
{
  TesseraCounterDependency parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraCounterTokenDependency, tessera_counter_token_dependency, TESSERA_TYPE_COUNTER_DEPENDENCY)

static TesseraDynamicDependencyLock *
create_lock (TesseraDynamicDependency *self, GError **error)
{
  return g_object_new (TESSERA_TYPE_COUNTER_TOKEN_LOCK, "dependency", self, NULL);
}

static void
tessera_counter_token_dependency_class_init (TesseraCounterTokenDependencyClass *klass)
{
  TESSERA_DYNAMIC_DEPENDENCY_CLASS (klass)->create_lock = create_lock;
}

static void
tessera_counter_token_dependency_class_finalize (TesseraCounterTokenDependencyClass *klass)
{
}

static void
tessera_counter_token_dependency_init (TesseraCounterTokenDependency *self)
{
}

void
_tessera_counter_token_dependency_register (GTypeModule *module)
{
  tessera_counter_token_dependency_register_type (module);
}
