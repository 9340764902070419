/* tessera-etcd-watch.c: the etcd client's watches: a stream read on a thread
 * of its own, its messages handed over, restarted from the last revision
 * seen when a member goes away, or when it stops answering: a stream
 * silent for a request deadline has its member asked whether it is still
 * there (its status, within the deadline), and one that does not answer
 * is given up for the next member, so a leader that stopped (a host that
 * died without closing its connections) costs a waiter a deadline or two
 * after the election, not the stream's idle timeout.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "tessera-etcd-client-private.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>
#include <tessera/tessera.h>

/* What the reading thread hands over: a message, or why it stopped. */
typedef struct
{
  JsonNode *message;
  GError *error;
} Item;

static void
item_free (Item *item)
{
  g_clear_pointer (&item->message, json_node_unref);
  g_clear_error (&item->error);
  g_free (item);
}

struct _TesseraEtcdWatch
{
  TesseraEtcdClient *client;
  char *key;
  char *range_end;
  GCancellable *cancellable;   /* stops the thread */
  GAsyncQueue *queue;          /* Item */
  GThread *thread;
  gint64 next_revision;        /* where a new stream starts; the thread's */
  gint64 revision;             /* the last one handed out; the reader's */
  GPtrArray *pending;          /* events of a change still in fragments */

  GMutex mutex;                /* the stream being read: */
  GCancellable *stream;        /* stops it (only it), NULL between streams */
  guint member;                /* the endpoint it reads from */
  gint64 heard;                /* when it last said something, or began */
};

/* Something came from the stream (or it began): it is not silent. */
static void
heard_from_stream (TesseraEtcdWatch *watch)
{
  g_mutex_lock (&watch->mutex);
  watch->heard = g_get_monotonic_time ();
  g_mutex_unlock (&watch->mutex);
}

/* Splits a stream of JSON objects ({…}{…} or one per line) into its
 * messages: tracks braces outside strings. The buffer is compacted once
 * per feed, never per byte or per message (a chunk of many messages, or
 * of much whitespace, costs its length, not its square). */
typedef struct
{
  GByteArray *buffer;
  int depth;
  gboolean in_string;
  gboolean escaped;
  gsize start;     /* where the message being read begins */
  gsize scanned;
} Splitter;

/* Feeds @data; calls @emit for each complete message. FALSE when a
 * message is too large. */
static gboolean
splitter_feed (Splitter *splitter, const char *data, gsize length,
               void (*emit) (const char *message, gsize length, gpointer user_data), gpointer user_data)
{
  g_byte_array_append (splitter->buffer, (const guint8 *) data, length);
  while (splitter->scanned < splitter->buffer->len)
    {
      char c = (char) splitter->buffer->data[splitter->scanned++];

      if (splitter->in_string)
        {
          if (splitter->escaped)
            splitter->escaped = FALSE;
          else if (c == '\\')
            splitter->escaped = TRUE;
          else if (c == '"')
            splitter->in_string = FALSE;
          continue;
        }
      if (splitter->depth == 0 && c != '{')
        {
          /* Whitespace between messages: dropped. */
          splitter->start = splitter->scanned;
          continue;
        }
      if (c == '"')
        splitter->in_string = TRUE;
      else if (c == '{' || c == '[')
        splitter->depth++;
      else if ((c == '}' || c == ']') && --splitter->depth == 0)
        {
          emit ((const char *) splitter->buffer->data + splitter->start, splitter->scanned - splitter->start,
                user_data);
          splitter->start = splitter->scanned;
        }
    }
  g_byte_array_remove_range (splitter->buffer, 0, splitter->start);
  splitter->scanned -= splitter->start;
  splitter->start = 0;
  return splitter->buffer->len <= MAX_MESSAGE;
}

static void
push_error (TesseraEtcdWatch *watch, GError *error)
{
  Item *item = g_new0 (Item, 1);

  item->error = error;
  g_async_queue_push (watch->queue, item);
  /* cppcheck sees no free of item: the queue owns it. */
  // cppcheck-suppress memleak
}

typedef struct
{
  TesseraEtcdWatch *watch;
  gboolean got_any;
} Reading;

static void
emit_message (const char *data, gsize length, gpointer user_data)
{
  Reading *reading = user_data;
  TesseraEtcdWatch *watch = reading->watch;
  g_autoptr(GError) error = NULL;
  JsonNode *root = tessera_json_parse (data, (gssize) length, &error);
  JsonObject *result;
  Item *item;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_debug ("etcd watch: dropping a message that is not a JSON object: %s",
               error != NULL ? error->message : "wrong type");
      g_clear_pointer (&root, json_node_unref);
      return;
    }
  reading->got_any = TRUE;
  heard_from_stream (watch);
  /* Where the stream would start again: after the last revision seen
   * (for a watch "from now", after the revision it was created at). */
  result = _tessera_etcd_member_object (json_node_get_object (root), "result");
  if (result != NULL && watch->next_revision == 0 && _tessera_etcd_member_int (_tessera_etcd_member_object (result, "header"), "revision") > 0)
    watch->next_revision = _tessera_etcd_member_int (_tessera_etcd_member_object (result, "header"), "revision") + 1;
  if (result != NULL && _tessera_etcd_member_int (_tessera_etcd_member_object (result, "header"), "revision") > 0 &&
      json_object_has_member (result, "events") &&
      !json_object_get_boolean_member_with_default (result, "fragment", FALSE))
    {
      gint64 newest = 0;
      JsonNode *events = json_object_get_member (result, "events");

      for (guint i = 0; JSON_NODE_HOLDS_ARRAY (events) && i < json_array_get_length (json_node_get_array (events)); i++)
        {
          JsonNode *event = json_array_get_element (json_node_get_array (events), i);
          if (JSON_NODE_HOLDS_OBJECT (event))
            newest = MAX (newest, _tessera_etcd_member_int (_tessera_etcd_member_object (json_node_get_object (event), "kv"), "mod_revision"));
        }
      if (newest > 0)
        watch->next_revision = newest + 1;
    }
  item = g_new0 (Item, 1);
  item->message = root;
  g_async_queue_push (watch->queue, item);
  /* cppcheck sees no free of item: the queue owns it (item_free is its
   * destroy notify, and the reader frees what it pops). */
  // cppcheck-suppress memleak
}

/* Reads one stream to its end. Returns FALSE when the watch must stop. */
static gboolean
read_stream (TesseraEtcdWatch *watch, guint member, gboolean *got_any, GError **error)
{
  TesseraEtcdClient *client = watch->client;
  const char *endpoint = client->endpoints[member];
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  JsonObject *object;
  JsonObject *create = json_object_new ();
  g_autoptr(JsonNode) request = _tessera_etcd_new_request_node (&object);
  g_autofree char *body = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SoupMessage) message = NULL;
  g_autoptr(GInputStream) stream = NULL;
  Splitter splitter = { g_byte_array_new (), 0, FALSE, FALSE, 0, 0 };
  Reading reading = { watch, FALSE };
  char chunk[65536];
  gboolean ok = TRUE;

  _tessera_etcd_set_key (create, "key", watch->key);
  if (watch->range_end != NULL)
    _tessera_etcd_set_key (create, "range_end", watch->range_end);
  _tessera_etcd_set_int (create, "start_revision", watch->next_revision);
  /* Large changes come in pieces (each under etcd's request limit). */
  json_object_set_boolean_member (create, "fragment", TRUE);
  json_object_set_object_member (object, "create_request", create);
  body = json_to_string (request, FALSE);
  token = _tessera_etcd_dup_token (client, watch->cancellable, error);
  if (token == NULL && error != NULL && *error != NULL)
    {
      g_byte_array_unref (splitter.buffer);
      return FALSE;
    }
  message = _tessera_etcd_new_request (client, endpoint, "watch", body, token);
  /* A member that has lost its leader ends the watch instead of keeping
   * it open on a view that no longer moves. */
  soup_message_headers_replace (soup_message_get_request_headers (message), "Grpc-Metadata-hasleader", "true");
  /* The stream can be stopped on its own (its member went silent), or
   * with the watch: watch->cancellable is looked at after the stream's
   * is set, and tessera_etcd_watch_free() cancels both under the mutex. */
  g_mutex_lock (&watch->mutex);
  watch->stream = cancellable;
  watch->member = member;
  watch->heard = g_get_monotonic_time ();
  g_mutex_unlock (&watch->mutex);
  if (g_cancellable_is_cancelled (watch->cancellable))
    g_cancellable_cancel (cancellable);
  g_debug ("etcd: watch to %s", endpoint);
  stream = soup_session_send (client->streams, message, cancellable, error);
  if (stream == NULL)
    {
      g_mutex_lock (&watch->mutex);
      watch->stream = NULL;
      g_mutex_unlock (&watch->mutex);
      g_byte_array_unref (splitter.buffer);
      return TRUE;   /* another endpoint, or this one again later */
    }
  heard_from_stream (watch);
  if (soup_message_get_status (message) != SOUP_STATUS_OK)
    {
      g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNAVAILABLE,
                   _("etcd at %s did not open the watch (HTTP %u)"), endpoint, soup_message_get_status (message));
      g_mutex_lock (&watch->mutex);
      watch->stream = NULL;
      g_mutex_unlock (&watch->mutex);
      g_byte_array_unref (splitter.buffer);
      return TRUE;
    }
  while (TRUE)
    {
      gssize n = g_input_stream_read (stream, chunk, sizeof chunk, cancellable, error);

      if (n <= 0)
        break;   /* end of stream, or an error: start again */
      if (!splitter_feed (&splitter, chunk, (gsize) n, emit_message, &reading))
        {
          g_clear_error (error);
          g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY,
                       _("etcd sent a watch message larger than %d bytes"), MAX_MESSAGE);
          ok = FALSE;
          break;
        }
    }
  g_mutex_lock (&watch->mutex);
  watch->stream = NULL;
  g_mutex_unlock (&watch->mutex);
  g_input_stream_close (stream, NULL, NULL);
  g_byte_array_unref (splitter.buffer);
  *got_any = reading.got_any;
  return ok;
}

/* Whether member @member answers a request (its status: served by the
 * member alone, whatever the cluster's state) within the request
 * deadline. Any reply will do: it is there. */
static gboolean
member_answers (TesseraEtcdClient *client, guint member, GCancellable *cancellable)
{
  g_autoptr(SoupMessage) message = _tessera_etcd_new_request (client, client->endpoints[member],
                                                              "maintenance/status", "{}", NULL);
  g_autoptr(GBytes) reply = NULL;

  g_debug ("etcd: maintenance/status to %s", client->endpoints[member]);
  reply = soup_session_send_and_read (client->session, message, cancellable, NULL);

  return reply != NULL;
}

/* A stream that has said nothing for a request deadline: its member is
 * asked whether it is still there, and one that misses the deadline too
 * has the stream stopped (the reading thread goes on with the next
 * member) and is tried last by the other calls for a while, as any
 * member that misses a deadline. A stream whose member answers is left
 * alone for another deadline: a watch on a quiet pool costs its member
 * one status a deadline, and the pool no read. */
static void
look_at_silent_stream (TesseraEtcdWatch *watch, GCancellable *cancellable)
{
  TesseraEtcdClient *client = watch->client;
  g_autoptr(GCancellable) stream = NULL;
  guint member = 0;

  g_mutex_lock (&watch->mutex);
  if (watch->stream != NULL &&
      g_get_monotonic_time () - watch->heard >= (gint64) client->request_timeout * G_USEC_PER_SEC)
    {
      stream = g_object_ref (watch->stream);
      member = watch->member;
    }
  g_mutex_unlock (&watch->mutex);
  if (stream == NULL)
    return;
  if (member_answers (client, member, cancellable))
    {
      g_mutex_lock (&watch->mutex);
      if (watch->stream == stream)
        watch->heard = g_get_monotonic_time ();
      g_mutex_unlock (&watch->mutex);
      return;
    }
  if (g_cancellable_is_cancelled (cancellable))
    return;
  g_debug ("etcd watch: %s did not answer within %u s: the watch goes on elsewhere",
           client->endpoints[member], client->request_timeout);
  _tessera_etcd_members_note_missed (client->endpoints[member]);
  g_cancellable_cancel (stream);
}

static gpointer
watch_thread (gpointer data)
{
  TesseraEtcdWatch *watch = data;
  TesseraEtcdClient *client = watch->client;
  guint n = g_strv_length (client->endpoints);
  guint i;
  gint64 give_up = 0;
  double pause = 0.05;

  g_mutex_lock (&client->mutex);
  i = client->current;
  g_mutex_unlock (&client->mutex);
  while (!g_cancellable_is_cancelled (watch->cancellable))
    {
      g_autoptr(GError) error = NULL;
      gboolean got_any = FALSE;

      if (!read_stream (watch, i % n, &got_any, &error))
        {
          push_error (watch, g_steal_pointer (&error));
          return NULL;
        }
      if (g_cancellable_is_cancelled (watch->cancellable))
        break;
      /* The stream ended (a member stopped, a leader changed): the next
       * member, from the next revision, until the retry time is spent
       * without an answer. */
      if (got_any)
        {
          give_up = 0;
          pause = 0.05;
        }
      if (give_up == 0)
        give_up = g_get_monotonic_time () + (gint64) (client->retry_time * G_USEC_PER_SEC);
      else if (g_get_monotonic_time () > give_up)
        {
          push_error (watch, g_error_new (TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_UNAVAILABLE,
                                          _("No etcd endpoint keeps the watch open: %s"),
                                          error != NULL ? error->message : "?"));
          return NULL;
        }
      i++;
      if (i % n == 0 && !_tessera_etcd_pause_for (pause, watch->cancellable, NULL))
        break;
      if (i % n == 0)
        pause = MIN (pause * 2, 1.0);
    }
  return NULL;
}

TesseraEtcdWatch *
tessera_etcd_client_watch (TesseraEtcdClient  *self,
                           const char         *key,
                           const char         *range_end,
                           gint64              start_revision,
                           GError            **error)
{
  TesseraEtcdWatch *watch;

  g_return_val_if_fail (TESSERA_IS_ETCD_CLIENT (self), NULL);
  /* Always from a known revision: a watch "from now" that is reopened
   * would lose what came in between. */
  g_return_val_if_fail (start_revision > 0, NULL);

  watch = g_new0 (TesseraEtcdWatch, 1);
  watch->client = g_object_ref (self);
  watch->key = g_strdup (key);
  watch->range_end = g_strdup (range_end);
  watch->cancellable = g_cancellable_new ();
  watch->queue = g_async_queue_new_full ((GDestroyNotify) item_free);
  watch->next_revision = start_revision;
  watch->revision = start_revision > 0 ? start_revision - 1 : 0;
  g_mutex_init (&watch->mutex);
  watch->thread = g_thread_try_new ("tessera-etcd-watch", watch_thread, watch, error);
  if (watch->thread == NULL)
    {
      tessera_etcd_watch_free (watch);
      return NULL;
    }
  return watch;
}

static GPtrArray *
events_of (JsonObject *result, GError **error)
{
  g_autoptr(GPtrArray) events = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
  JsonNode *list = json_object_get_member (result, "events");

  for (guint i = 0; list != NULL && JSON_NODE_HOLDS_ARRAY (list) &&
                    i < json_array_get_length (json_node_get_array (list)); i++)
    {
      JsonNode *node = json_array_get_element (json_node_get_array (list), i);
      JsonObject *kv_object;
      TesseraEtcdEvent *event;
      TesseraEtcdKv *kv;

      if (!JSON_NODE_HOLDS_OBJECT (node) ||
          (kv_object = _tessera_etcd_member_object (json_node_get_object (node), "kv")) == NULL ||
          (kv = _tessera_etcd_kv_from_json (kv_object, error)) == NULL)
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_BAD_REPLY, _("etcd sent a watch event with no key"));
          return NULL;
        }
      event = g_new0 (TesseraEtcdEvent, 1);
      /* PUT is the default value, so the gateway leaves it out. */
      event->type = g_strcmp0 (_tessera_etcd_member_string (json_node_get_object (node), "type"), "DELETE") == 0
                    ? TESSERA_ETCD_EVENT_DELETE : TESSERA_ETCD_EVENT_PUT;
      event->kv = kv;
      g_ptr_array_add (events, event);
    }
  return g_steal_pointer (&events);
}

/* The caller's cancellable was cancelled: a wake-up (an item with
 * neither message nor error) ends its wait on the queue at once, so
 * closing a store does not wait for the next look. */
static void
wake_watch_reader (GCancellable *cancellable, gpointer queue)
{
  g_async_queue_push (queue, g_new0 (Item, 1));
}

static GPtrArray *watch_next (TesseraEtcdWatch *watch, double timeout, gint64 *revision,
                              GCancellable *cancellable, GError **error);

/* Waits up to @timeout seconds (negative: for ever) for changes. Returns
 * the events of one message (empty when the time ran out), with
 * @revision the revision they bring the view to; NULL with @error when
 * the watch cannot go on (compacted: read again and watch anew). */
GPtrArray *
tessera_etcd_watch_next (TesseraEtcdWatch  *watch,
                         double             timeout,
                         gint64            *revision,
                         GCancellable      *cancellable,
                         GError           **error)
{
  gulong wake = cancellable != NULL ? g_cancellable_connect (cancellable, G_CALLBACK (wake_watch_reader),
                                                             watch->queue, NULL) : 0;
  GPtrArray *events = watch_next (watch, timeout, revision, cancellable, error);

  if (wake != 0)
    g_cancellable_disconnect (cancellable, wake);
  return events;
}

static GPtrArray *
watch_next (TesseraEtcdWatch  *watch,
            double             timeout,
            gint64            *revision,
            GCancellable      *cancellable,
            GError           **error)
{
  gint64 deadline = timeout < 0 ? G_MAXINT64 : g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);

  while (TRUE)
    {
      Item *item;
      gint64 now = g_get_monotonic_time ();

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (now >= deadline)
        {
          if (revision != NULL)
            *revision = watch->revision;
          return g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
        }
      look_at_silent_stream (watch, cancellable);
      /* A cancel wakes this at once; the second is a guard only (and
       * how often a silent stream is looked at). */
      item = g_async_queue_timeout_pop (watch->queue, MIN (deadline - now, G_USEC_PER_SEC));
      if (item == NULL)
        continue;
      if (item->message == NULL && item->error == NULL)
        {
          item_free (item);   /* a wake-up: look at the cancellable again */
          continue;
        }
      if (item->error != NULL)
        {
          /* The thread has stopped: the error stays for the next call. */
          g_propagate_error (error, g_error_copy (item->error));
          g_async_queue_push_front (watch->queue, item);
          return NULL;
        }
      {
        JsonObject *root = json_node_get_object (item->message);
        JsonObject *result = _tessera_etcd_member_object (root, "result");
        GPtrArray *events;

        if (result == NULL)
          {
            JsonObject *failure = _tessera_etcd_member_object (root, "error");
            const char *text = _tessera_etcd_member_string (failure, "message");

            /* Its member is unavailable for now (it lost the leader: an
             * election is under way): the stream ends there and the
             * reading thread opens it again elsewhere, from the next
             * revision, as after a cancel. */
            if (_tessera_etcd_member_int (failure, "grpc_code") == 14 ||
                (text != NULL && strstr (text, "no leader") != NULL))
              {
                g_debug ("etcd watch: its member said \"%s\": the watch goes on elsewhere", text != NULL ? text : "?");
                item_free (item);
                continue;
              }
            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_REFUSED,
                         _("etcd ended the watch: %s"), text != NULL ? text : "?");
            item_free (item);
            return NULL;
          }
        if (_tessera_etcd_member_int (result, "compact_revision") > 0)
          {
            g_set_error (error, TESSERA_ETCD_ERROR, TESSERA_ETCD_ERROR_COMPACTED,
                         _("etcd compacted the revisions this watch needs (up to %" PRId64 ")"),
                         _tessera_etcd_member_int (result, "compact_revision"));
            item_free (item);
            return NULL;
          }
        if (json_object_get_boolean_member_with_default (result, "canceled", FALSE))
          {
            /* Cancelled for another reason (its member lost the leader):
             * the reading thread opens it again elsewhere. */
            item_free (item);
            continue;
          }
        if (!json_object_has_member (result, "events"))
          {
            /* "created", or a progress notice. */
            item_free (item);
            continue;
          }
        events = events_of (result, error);
        if (events == NULL)
          {
            item_free (item);
            return NULL;
          }
        /* A large change comes in fragments: handed out whole. */
        if (watch->pending == NULL)
          watch->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) tessera_etcd_event_free);
        while (events->len > 0)
          g_ptr_array_add (watch->pending, g_ptr_array_steal_index (events, 0));
        g_ptr_array_unref (events);
        if (json_object_get_boolean_member_with_default (result, "fragment", FALSE))
          {
            item_free (item);
            continue;
          }
        events = g_steal_pointer (&watch->pending);
        for (guint i = 0; i < events->len; i++)
          watch->revision = MAX (watch->revision,
                                 ((TesseraEtcdEvent *) g_ptr_array_index (events, i))->kv->mod_revision);
        if (revision != NULL)
          *revision = watch->revision;
        item_free (item);
        return events;
      }
    }
}

void
tessera_etcd_watch_free (TesseraEtcdWatch *watch)
{
  if (watch == NULL)
    return;
  g_mutex_lock (&watch->mutex);
  g_cancellable_cancel (watch->cancellable);
  if (watch->stream != NULL)
    g_cancellable_cancel (watch->stream);
  g_mutex_unlock (&watch->mutex);
  if (watch->thread != NULL)
    g_thread_join (watch->thread);
  g_mutex_clear (&watch->mutex);
  g_async_queue_unref (watch->queue);
  g_clear_pointer (&watch->pending, g_ptr_array_unref);
  g_object_unref (watch->cancellable);
  g_object_unref (watch->client);
  g_free (watch->key);
  g_free (watch->range_end);
  g_free (watch);
}

