/* test-peer.h: the line protocol of the helper programs' "try", "tries"
 * and "request" commands, shared by tessera-helper (the test counter) and
 * tessera-plugin-helper (plugin types)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

void test_peer_say       (const char *format, ...) G_GNUC_PRINTF (1, 2);
void test_peer_say_error (const GError *error);

int test_peer_try     (TesseraTrackedDynamicResource *resource,
                       TesseraDynamicDependency      *dependency,
                       const char                    *id);
int test_peer_tries   (TesseraDynamicDependency      *dependency);
int test_peer_request (TesseraDynamicDependency      *dependency,
                       double                         timeout,
                       gboolean                       async);

G_END_DECLS
