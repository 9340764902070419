/* tessera-pool-protocol-private.h: the pool protocol, never installed
 * (tessera_get_pool_protocol() tells it to the command's --version)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* The member of informations.json that names the lowest Tessera protocol
 * that may use the pool (experimaestro ignores it), and this library's
 * protocol: 1 was every Tessera before the member existed, 2 judges
 * holders by host id, boot id and pid namespace, then by their job lock
 * (issue 14). Raise it when a peer following older rules would misjudge
 * what this one writes. */
#define TESSERA_POOL_PROTOCOL_MEMBER "tessera_protocol"
/* The newest protocol this Tessera follows; what a plain pool asks for;
 * what a pool with a host lease asks for (its holders renew a heartbeat:
 * a Tessera that does not must leave it alone). */
#define TESSERA_POOL_PROTOCOL 3
#define TESSERA_POOL_PROTOCOL_PLAIN 2
#define TESSERA_POOL_PROTOCOL_LEASE 3
