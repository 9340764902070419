/* tessera-etcd-lease.c: this process's etcd lease, kept alive on a thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-lease.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>

/* TesseraEtcdLease:
 *
 * Granted once, then renewed every third of its TTL (more often for a
 * TTL under 12 s, see renew_interval_us()) by a thread of its own, so that a process busy elsewhere (or blocked on a slow call) keeps
 * its holdings. Each keep-alive has a deadline well under the TTL: the
 * keeper client's retry time is a quarter of it and one request to one
 * member at most a quarter divided among the members, so a member that
 * hangs does not hold the renewal past the TTL while another member would
 * answer (a client's default retry time, 30 s, is longer than a TTL).
 *
 * How long the lease has gone unrenewed is counted on this host's
 * monotonic clock from the moment the last successful keep-alive was
 * *sent* (etcd restarts the TTL when it receives it, later): the figure
 * errs on the safe side. Once it nears the TTL, etcd may already have
 * deleted this process's keys: whoever uses the holdings should stop
 * (the fencing of `tessera run`). When etcd answers that the lease is
 * gone, it is lost for good: the keys it carried are gone. */

struct _TesseraEtcdLease
{
  TesseraEtcdClient *client;   /* grants: the caller's, riding out elections */
  TesseraEtcdClient *keeper;   /* the thread's (and the revoke's), with deadlines */
  gint64 id;
  gint64 ttl;

  GMutex mutex;
  GCond cond;
  gboolean stopping;           /* mutex */
  gboolean lost;               /* mutex */
  gint64 renewed_mono;         /* mutex: when the last successful keep-alive was sent */
  GThread *thread;
};

/* A third of the TTL between renewals, more often below 12 s (TTL²/36:
 * every 0.25 s for 3 s, 1 s for 6 s). `tessera run` ends its command once
 * the lease has gone unrenewed for the TTL less a quarter of it and two
 * checks (1.5 s of a 3 s lease): a third of a short TTL would leave a
 * late renewal half a second there, this more than a second. */
static gint64
renew_interval_us (TesseraEtcdLease *lease)
{
  if (lease->ttl >= 12)
    return lease->ttl * G_USEC_PER_SEC / 3;
  return lease->ttl * lease->ttl * G_USEC_PER_SEC / 36;
}

/* After a failure, sooner. */
static gint64
retry_interval_us (TesseraEtcdLease *lease)
{
  return MIN (renew_interval_us (lease), MIN (G_USEC_PER_SEC, lease->ttl * G_USEC_PER_SEC / 10));
}

/* Waits until @until or until told to stop: TRUE when stopping. */
static gboolean
wait_until (TesseraEtcdLease *lease, gint64 until)
{
  gboolean stopping;

  g_mutex_lock (&lease->mutex);
  while (!lease->stopping && g_get_monotonic_time () < until)
    g_cond_wait_until (&lease->cond, &lease->mutex, until);
  stopping = lease->stopping;
  g_mutex_unlock (&lease->mutex);
  return stopping;
}

static gpointer
keep_alive_thread (gpointer data)
{
  TesseraEtcdLease *lease = data;
  gint64 next = g_get_monotonic_time () + renew_interval_us (lease);

  while (!wait_until (lease, next))
    {
      g_autoptr(GError) error = NULL;
      gint64 sent = g_get_monotonic_time ();

      if (tessera_etcd_client_lease_keepalive (lease->keeper, lease->id, NULL, NULL, &error))
        {
          g_mutex_lock (&lease->mutex);
          lease->renewed_mono = sent;
          g_mutex_unlock (&lease->mutex);
          next = sent + renew_interval_us (lease);
          continue;
        }
      if (g_error_matches (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_LEASE_NOT_FOUND))
        {
          g_warning (_("The etcd lease %" PRId64 " of this process has expired: "
                       "its holdings are gone"), lease->id);
          g_mutex_lock (&lease->mutex);
          lease->lost = TRUE;
          g_mutex_unlock (&lease->mutex);
          break;
        }
      g_debug ("Keep-alive of etcd lease %" G_GINT64_FORMAT " failed: %s", lease->id, error->message);
      next = g_get_monotonic_time () + retry_interval_us (lease);
    }
  return NULL;
}

/**
 * tessera_etcd_lease_new:
 * @client: grants the lease (with its own retry time, riding out an
 *   election)
 * @keeper: another client of the same cluster, fresh, for the lease
 *   alone: its retry time and request timeout are set here (never
 *   longer than @client's request timeout)
 * @ttl: seconds etcd keeps the lease without a keep-alive (at least 2)
 *
 * Grants a lease and starts renewing it.
 *
 * Returns: (transfer full) (nullable): the lease, or %NULL with @error
 */
TesseraEtcdLease *
tessera_etcd_lease_new (TesseraEtcdClient  *client,
                        TesseraEtcdClient  *keeper,
                        gint64              ttl,
                        GError            **error)
{
  TesseraEtcdLease *lease;
  guint members;
  gint64 sent, id;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (client), NULL);
  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (keeper) && keeper != client, NULL);
  if (ttl < 2)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("An etcd lease of %" PRId64 " s is too short (at least 2 s)"), ttl);
      return NULL;
    }
  members = MAX (1, tessera_etcd_client_get_n_endpoints (keeper));
  tessera_etcd_client_set_retry_time (keeper, ttl / 4.0);
  tessera_etcd_client_set_request_timeout (keeper, MIN (tessera_etcd_client_get_request_timeout (client),
                                                        (guint) MAX (1, ttl / (4 * (gint64) members))));

  sent = g_get_monotonic_time ();
  id = tessera_etcd_client_lease_grant (client, ttl, NULL, error);
  if (id == 0)
    return NULL;
  lease = g_new0 (TesseraEtcdLease, 1);
  lease->client = g_object_ref (client);
  lease->keeper = g_object_ref (keeper);
  lease->id = id;
  lease->ttl = ttl;
  lease->renewed_mono = sent;
  g_mutex_init (&lease->mutex);
  g_cond_init (&lease->cond);
  lease->thread = g_thread_new ("tessera-etcd-lease", keep_alive_thread, lease);
  return lease;
}

gint64
tessera_etcd_lease_get_id (TesseraEtcdLease *lease)
{
  return lease->id;
}

gint64
tessera_etcd_lease_get_ttl (TesseraEtcdLease *lease)
{
  return lease->ttl;
}

/* Seconds since the last keep-alive that etcd acknowledged was sent (the
 * grant counts as one). Any thread. */
double
tessera_etcd_lease_get_unrenewed (TesseraEtcdLease *lease)
{
  gint64 renewed;

  g_mutex_lock (&lease->mutex);
  renewed = lease->renewed_mono;
  g_mutex_unlock (&lease->mutex);
  return (double) (g_get_monotonic_time () - renewed) / G_USEC_PER_SEC;
}

/* Whether etcd said the lease is gone (with every key on it). Any thread. */
gboolean
tessera_etcd_lease_is_lost (TesseraEtcdLease *lease)
{
  gboolean lost;

  g_mutex_lock (&lease->mutex);
  lost = lease->lost;
  g_mutex_unlock (&lease->mutex);
  return lost;
}

/* Stops renewing and revokes the lease, within the keeper's deadline:
 * the keys on it go at once (or after the TTL when etcd cannot be
 * reached). */
void
tessera_etcd_lease_free (TesseraEtcdLease *lease)
{
  g_autoptr(GError) error = NULL;

  if (lease == NULL)
    return;
  g_mutex_lock (&lease->mutex);
  lease->stopping = TRUE;
  g_cond_signal (&lease->cond);
  g_mutex_unlock (&lease->mutex);
  g_thread_join (lease->thread);
  if (!lease->lost && !tessera_etcd_client_lease_revoke (lease->keeper, lease->id, NULL, &error))
    g_debug ("Revoking etcd lease %" G_GINT64_FORMAT ": %s", lease->id, error->message);
  g_object_unref (lease->client);
  g_object_unref (lease->keeper);
  g_mutex_clear (&lease->mutex);
  g_cond_clear (&lease->cond);
  g_free (lease);
}
