/* tessera-host-lease-private.h: the host lease of a pool, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* Where locks cross hosts but outlive a vanished host (NFSv3's lock
 * manager frees a client's locks only when that client reboots), a lease
 * decides. Each user of a host that holds something in a lease pool
 * keeps a heartbeat, `F/hosts/HOSTID.UID.lease` (files in proportion to
 * hosts and users, not holders; experimaestro never looks in hosts/; one
 * per user, so that in a group's pool, where hosts/ is sticky, none may
 * remove or replace another's), rewritten atomically with new content
 * eight times per lease by every process of hers on the host that holds
 * something there, on a thread of its own. A reader takes a host's lease
 * for expired when it has seen its heartbeats (those of all its users,
 * and `HOSTID.lease` of an older Tessera) unchanged for the lease time on its own
 * monotonic clock (first-seen times in host-local state, shared by every
 * process of the reader's host: _tessera_first_seen()); a host that never
 * wrote one is not judged by the lease at all.
 *
 * Thread-safe: renewals run on the lease's own thread (made at the
 * first holding, joined by _tessera_host_lease_free()); the rest from any
 * thread. */
typedef struct _TesseraHostLease TesseraHostLease;

/* Bounds of the lease time, in seconds (0: not a lease pool). */
#define TESSERA_HOST_LEASE_MIN 2.0
#define TESSERA_HOST_LEASE_MAX 86400.0
/* A heartbeat larger than this is not one. */
#define TESSERA_HOST_LEASE_MAX_SIZE 4096

/* @folder: the pool's lock folder unit, whose kept descriptor hosts/ is
 * reached from; it outlives the lease's renewals (it must outlive
 * _tessera_host_lease_free()). */
struct _TesseraLockFolder;
TesseraHostLease *_tessera_host_lease_new      (struct _TesseraLockFolder *folder);
/* Stops renewing and joins the renewer's thread; the lease is freed once
 * no renewal uses it any more. */
void        _tessera_host_lease_free           (TesseraHostLease *lease);

/* Seconds; 0 (the default) makes the pool no lease pool. */
void        _tessera_host_lease_set_time       (TesseraHostLease *lease,
                                                double            seconds);
double      _tessera_host_lease_get_time       (TesseraHostLease *lease);

/* On a lease pool, renews this host's heartbeat now, before a holding's
 * lock file is written: FALSE with @error when it cannot (then nothing
 * may be held). TRUE at once elsewhere. */
gboolean    _tessera_host_lease_renew_first    (TesseraHostLease *lease,
                                                GError           **error);
/* This process holds one more (one less) thing in the pool: while it
 * holds anything in a lease pool, it renews this host's heartbeat. The
 * time set later (the pool's recorded lease) applies to a holding
 * already made. */
void        _tessera_host_lease_hold           (TesseraHostLease *lease);
void        _tessera_host_lease_unhold         (TesseraHostLease *lease);

/* How long, in seconds, this process has held something in a lease pool
 * without a successful renewal (0 when it renews, holds nothing or the
 * pool is no lease pool). */
double      _tessera_host_lease_unrenewed_for  (TesseraHostLease *lease);

/* Whether the lease of @host_id (32 hex digits; another host's) has
 * expired as seen from this host: its heartbeat seen unchanged for the
 * lease time (the longer of ours and the ones they state). FALSE when the
 * pool is no lease pool, the host has no heartbeat, or one of them cannot
 * be trusted (see _tessera_host_lease_mark_and_dup_other_host()). */
gboolean    _tessera_host_lease_expired        (TesseraHostLease *lease,
                                                const char       *host_id);

/* Before this host's first grant in the pool, whatever its file system:
 * leaves this user's mark of this host in hosts/ (HOSTID.UID.host,
 * stating whether its locks cross hosts; written once per process, again
 * only when missing or when it claimed locks that cross and this
 * process's do not), and its mark of the view of the pool it reaches it
 * through (HOSTID.UID.vVIEW.host, VIEW the device of hosts/ here), then
 * looks at other hosts' marks and heartbeats (those of every user, and
 * HOSTID.host and HOSTID.lease of an older Tessera), and at this host's
 * marks of other views in this boot (another mount of the pool, such as
 * a container's FUSE view, counts as another host), for one that makes
 * the sharing unsafe: where this host's locks
 * do not cross, any other host; where they do, another host whose locks
 * do not ("locks_cross": false, or a mark of an older Tessera without the
 * member: those were written only where locks do not cross), or a file
 * that cannot be trusted to say they do (not a regular file, unreadable,
 * not a JSON object that says it, or named for a uid other than its
 * owner's: closed, as the over-allocation side must fail). (transfer
 * full) (nullable): the name of that file in hosts/, "" when there is
 * none, NULL with @error set when this host cannot mark or look.
 * @host_name (out) (optional): the host name that file states, NULL when
 * it states none. @owner (out) (optional): the name (or uid) of that
 * file's owner, NULL when unknown. @distrust (out) (optional): when that
 * file cannot be trusted, why (translated, static); NULL when it can. */
char       *_tessera_host_lease_mark_and_dup_other_host (TesseraHostLease  *lease,
                                                         char             **host_name,
                                                         char             **owner,
                                                         const char       **distrust,
                                                         GError           **error);

/* The hosts whose marks and heartbeats are in @lock_folder's hosts/, one
 * JSON object each, by host id (see
 * tessera_tracked_dynamic_resource_dup_hosts()); an empty array when
 * there is no hosts/; NULL with @error when it cannot be read. */
JsonNode   *_tessera_host_lease_list_hosts      (const char       *lock_folder,
                                                 GError          **error);

/* Whether @name is a file of hosts/ by its name (see host_file_kind()
 * in tessera-host-lease.c): a heartbeat (*@is_lease) or a mark, or
 * (*@temporary) the temporary file of one, its renewer's before the
 * rename. @id (out) (transfer full): the host id it is named for. */
gboolean    _tessera_host_file_name             (const char       *name,
                                                 char            **id,
                                                 gboolean         *is_lease,
                                                 gboolean         *temporary);

/* The host name that the heartbeat or mark @name in @hosts_fd states
 * (a temporary one too, once written whole): read as every file of
 * hosts/ is, never through a link, never blocking, at most
 * TESSERA_HOST_LEASE_MAX_SIZE. NULL when it states none. */
char       *_tessera_host_file_dup_host         (int               hosts_fd,
                                                 const char       *name);

G_END_DECLS
