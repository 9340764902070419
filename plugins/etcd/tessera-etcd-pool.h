/* tessera-etcd-pool.h: a pool's keys in etcd, read and changed at revisions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-etcd-client.h"

#include <tessera/tessera.h>

G_BEGIN_DECLS

/* A holder's key carries, beside a folder's lock-file JSON, "since": when
 * it was first written (seconds since the epoch, a number), since the
 * store has no file time to tell it. */
#define TESSERA_ETCD_POOL_SINCE "since"

/* A pool lives under PREFIX/NAME/: `informations` (the JSON of a folder's
 * informations.json), `jobs/TASK@ID` (the JSON of a folder's lock
 * file) and `queue/TASK@ID` (the JSON of a folder's queue entry, for a
 * waiter past its patience), every holder and queue key on its
 * process's lease; and a resource type's side entries, `KIND/NAME` for
 * other kinds (the mutex's `intents/TASK@ID`), on their process's lease
 * too. */
typedef struct _TesseraEtcdPool TesseraEtcdPool;

/* One holder as read. */
typedef struct
{
  char *name;                          /* TASK@ID */
  TesseraEtcdKv *kv;
  TesseraDynamicLockFile *lock_file;   /* NULL: unreadable, so it holds everything */
  GError *error;                       /* why, when unreadable */
  gboolean reserve;                    /* a queue entry's "reserve" */
  gint64 since_ns;                     /* its "since", in ns since the epoch; 0: none */
} TesseraEtcdHolder;

/* The pool at one revision. */
typedef struct
{
  gint64 revision;
  GPtrArray *holders;                  /* TesseraEtcdHolder, oldest (create revision) first */
  GPtrArray *queue;                    /* TesseraEtcdHolder: the queue's entries, likewise */
  GPtrArray *side;                     /* TesseraEtcdKv: side entries, `KIND/NAME` of another kind */
  JsonNode *informations;              /* NULL: none, or unreadable (see below) */
  GError *informations_error;          /* why they could not be read, if there are some */
} TesseraEtcdPoolState;

void tessera_etcd_pool_state_free (TesseraEtcdPoolState *state);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraEtcdPoolState, tessera_etcd_pool_state_free)

TesseraEtcdPool      *tessera_etcd_pool_new      (TesseraEtcdClient  *client,
                                                  const char         *prefix,
                                                  const char         *name,
                                                  GType               lock_file_type,
                                                  GError            **error);
void                  tessera_etcd_pool_free     (TesseraEtcdPool    *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraEtcdPool, tessera_etcd_pool_free)

const char           *tessera_etcd_pool_get_key  (TesseraEtcdPool    *pool);
char                 *tessera_etcd_pool_dup_holder_key (TesseraEtcdPool *pool,
                                                        const char      *name);
gboolean              tessera_etcd_pool_check_holder_name (const char   *name,
                                                           GError      **error);

TesseraEtcdPoolState *tessera_etcd_pool_read     (TesseraEtcdPool    *pool,
                                                  GCancellable       *cancellable,
                                                  GError            **error);
gboolean              tessera_etcd_pool_put_holder (TesseraEtcdPool        *pool,
                                                    gint64                  since_revision,
                                                    const char             *name,
                                                    TesseraDynamicLockFile *lock_file,
                                                    gint64                  lease,
                                                    gboolean               *succeeded,
                                                    gint64                 *revision,
                                                    GCancellable           *cancellable,
                                                    GError                **error);
gboolean              tessera_etcd_pool_update_holder (TesseraEtcdPool        *pool,
                                                       const char             *name,
                                                       gint64                  create_revision,
                                                       TesseraDynamicLockFile *lock_file,
                                                       gint64                  lease,
                                                       gboolean               *succeeded,
                                                       GCancellable           *cancellable,
                                                       GError                **error);
gboolean              tessera_etcd_pool_delete_holder (TesseraEtcdPool  *pool,
                                                       const char       *name,
                                                       GCancellable     *cancellable,
                                                       GError          **error);
char                 *tessera_etcd_pool_dup_queue_key (TesseraEtcdPool *pool,
                                                       const char      *name);
gboolean              tessera_etcd_pool_put_queue_entry (TesseraEtcdPool  *pool,
                                                         const char       *name,
                                                         const char       *text,
                                                         gint64            lease,
                                                         gint64           *revision,
                                                         GCancellable     *cancellable,
                                                         GError          **error);
gboolean              tessera_etcd_pool_delete_queue_entry (TesseraEtcdPool  *pool,
                                                            const char       *key,
                                                            GCancellable     *cancellable,
                                                            GError          **error);
char                 *tessera_etcd_pool_dup_side_key (TesseraEtcdPool *pool,
                                                      const char      *kind,
                                                      const char      *name);
gboolean              tessera_etcd_pool_put_side_entry (TesseraEtcdPool  *pool,
                                                        const char       *kind,
                                                        const char       *name,
                                                        const char       *text,
                                                        gint64            lease,
                                                        GCancellable     *cancellable,
                                                        GError          **error);
gboolean              tessera_etcd_pool_delete_side_key (TesseraEtcdPool  *pool,
                                                         const char       *key,
                                                         GCancellable     *cancellable,
                                                         GError          **error);
gboolean              tessera_etcd_pool_put_informations (TesseraEtcdPool  *pool,
                                                          JsonNode         *informations,
                                                          GCancellable     *cancellable,
                                                          GError          **error);
gboolean              tessera_etcd_pool_wait     (TesseraEtcdPool    *pool,
                                                  gint64              revision,
                                                  double              timeout,
                                                  gboolean           *changed,
                                                  GCancellable       *cancellable,
                                                  GError            **error);

G_END_DECLS
