/* tessera-audit-private.h: the audit log's lines, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* The log domain of the audit lines: who did what to a pool, and when.
 * An embedder's log writer routes it (the `tessera` command sends it to
 * the journal or syslog); GLib's default writer shows it only with
 * G_MESSAGES_DEBUG, as it does every G_LOG_LEVEL_INFO message. */
#define TESSERA_AUDIT_LOG_DOMAIN "Tessera-Audit"

/* Logs one line in the audit domain at G_LOG_LEVEL_INFO: "event=@event
 * resource=@resource user=… uid=… host=… pid=…" (the acting process),
 * then, for a holding (@lock_file, or only its file @name when it could
 * not be read), "job=… owner=… amount=… batch_job=… command=… job_uri=…",
 * then the NULL-terminated pairs of keys and values that follow (a NULL
 * value is left out). Each also goes in a structured field
 * TESSERA_<KEY>. Any thread, any lock held. */
void _tessera_audit_log (const char             *event,
                         const char             *resource,
                         const char             *name,
                         TesseraDynamicLockFile *lock_file,
                         ...) G_GNUC_NULL_TERMINATED;

/* Whether the pool in @lock_folder (NULL: a store elsewhere, shared by
 * nature) is shared by a group, so audited by default: the folder holding
 * it is group-writable and not everyone's (/tmp), or the pool's own folder
 * is a setgid group-writable folder (`tessera init --group`). */
gboolean _tessera_audit_pool_is_shared (const char *lock_folder);

/* Whether this process's `audit=off` is honoured for the pool in
 * @lock_folder: the pool's owner decides, not a member's configuration.
 * Root, or the owner of @lock_folder (NULL: a store elsewhere, etcd:
 * root only); a folder that cannot be opened here is not this process's. */
gboolean _tessera_audit_may_switch_off (const char *lock_folder);

G_END_DECLS
