/* tessera-resource-poller.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(TESSERA_INSIDE) && !defined(TESSERA_COMPILATION)
#error "Only <tessera/tessera.h> can be included directly."
#endif

#include <glib-object.h>
#include <tessera/tessera-version.h>

G_BEGIN_DECLS

typedef struct _TesseraDynamicResource TesseraDynamicResource;

#define TESSERA_TYPE_RESOURCE_POLLER (tessera_resource_poller_get_type ())

TESSERA_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (TesseraResourcePoller, tessera_resource_poller, TESSERA, RESOURCE_POLLER, GObject)

/**
 * TesseraResourcePollerClass:
 * @parent_class: the parent class
 *
 * The class of [class@Tessera.ResourcePoller], a final type: it has no virtual
 * functions of its own.
 */

TESSERA_AVAILABLE_IN_ALL
TesseraResourcePoller *tessera_resource_poller_get_default  (void);
TESSERA_AVAILABLE_IN_ALL
GMainContext          *tessera_resource_poller_get_context  (TesseraResourcePoller  *self);
TESSERA_AVAILABLE_IN_ALL
void                   tessera_resource_poller_register     (TesseraResourcePoller  *self,
                                                             TesseraDynamicResource *resource);
TESSERA_AVAILABLE_IN_ALL
void                   tessera_resource_poller_unregister   (TesseraResourcePoller  *self,
                                                             TesseraDynamicResource *resource);
TESSERA_AVAILABLE_IN_ALL
void                   tessera_resource_poller_notify       (TesseraResourcePoller  *self,
                                                             TesseraDynamicResource *resource);
TESSERA_AVAILABLE_IN_ALL
guint64                tessera_resource_poller_get_poll_count (TesseraResourcePoller *self);

G_END_DECLS
