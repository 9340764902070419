/* test-peer.h: what the helper programs share, tessera-helper (the test
 * counter) and tessera-plugin-helper (plugin types): their line protocol,
 * their job, their holders' log and their "try", "tries" and "request"
 * commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

void test_peer_say       (const char *format, ...) G_GNUC_PRINTF (1, 2);
void test_peer_say_error (const GError *error);
void test_peer_hold_until_stdin_closes (void);

TesseraJob *test_peer_job_new (const char *folder,
                               const char *jobs,
                               const char *id,
                               gboolean    with_process);
void test_peer_log (int         fd,
                    char        kind,
                    const char *id,
                    const char *rest);

int test_peer_try     (TesseraTrackedDynamicResource *resource,
                       TesseraDynamicDependency      *dependency,
                       const char                    *id);
int test_peer_tries   (TesseraDynamicDependency      *dependency);
int test_peer_request (TesseraDynamicDependency      *dependency,
                       double                         timeout,
                       gboolean                       async);

G_END_DECLS
