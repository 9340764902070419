/* tessera-counter-token.c: experimaestro's CounterToken, a counting
 * semaphore in a lock folder: informations.json {"total": N}, one lock file
 * per holder with information {"count": K}. The counting is the public
 * TesseraCounterResource; what is the plugin's own is its lock class, the
 * one locks.json names.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-counter-token.h"

struct _TesseraCounterToken
{
  TesseraCounterResource parent_instance;
};

G_DEFINE_DYNAMIC_TYPE (TesseraCounterToken, tessera_counter_token, TESSERA_TYPE_COUNTER_RESOURCE)

static void
tessera_counter_token_class_init (TesseraCounterTokenClass *klass)
{
  TESSERA_COUNTER_RESOURCE_CLASS (klass)->dependency_type = TESSERA_TYPE_COUNTER_TOKEN_DEPENDENCY;
}

static void
tessera_counter_token_class_finalize (TesseraCounterTokenClass *klass)
{
}

static void
tessera_counter_token_init (TesseraCounterToken *self)
{
}

void
_tessera_counter_token_register (GTypeModule *module)
{
  tessera_counter_token_register_type (module);
}
