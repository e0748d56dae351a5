/* GET /servers/:id/live: Server-Sent Events of a server's samples, one
 * "sample" event per tick of the metrics loop (metrics_loop.c).
 *
 * Decisions:
 * - One frame per sample and server, made once by the loop and shared by
 *   every reader by reference: the loop publishes it in the hub
 *   (src/deploy/hub.c) under the server's id, a topic of its own (server
 *   and deployment ids are random UUIDs of different tables: they never
 *   meet), and keeps it 60 s in its cache.
 * - On connecting: the frames of the cache newer than Last-Event-ID (an
 *   event id is the sample's time in ms), or without one the latest frame,
 *   so a dashboard draws at once; then live frames. The reader attaches to
 *   the hub before reading the cache, and skips live frames it already
 *   sent, so nothing is missed or sent twice.
 * - Heartbeats (": ping") when nothing was sent for SW_SSE_HEARTBEAT_MS;
 *   a reader too far behind is cut by the stream (it resumes with
 *   Last-Event-ID). The stream lasts until the client leaves or the
 *   server stops.
 * - A remote server's frames are its agent's samples, taken by the loop
 *   of the replica that writes the metric history, and by another
 *   replica's loop while that replica has readers of it (each reader is
 *   counted in sw_api_metrics_live_watch, uncounted when it leaves); a remote server whose
 *   agent is not ONLINE as the stream starts is 409 SERVER_NOT_CONNECTED
 *   (metrics.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/deploy/deploy.h"
#include "steward/http/http.h"
#include "steward/base/limits.h"
#include "api/api_internal.h"

struct reader {
	struct sw_http_stream *s;
	struct sw_loop *loop;
	struct sw_hub_reader *hub;
	uint64_t sent; /* the last event id sent */
	char remote_id[37]; /* a remote server's id (watched while read), else "" */
};

static void reader_free(struct reader *r)
{
	sw_hub_detach(r->hub);
	if (r->remote_id[0])
		sw_api_metrics_live_watch(r->remote_id, false);
	free(r);
}

static void on_closed(void *arg, int reason)
{
	(void)reason;
	reader_free(arg);
}

static const struct sw_http_stream_ops ops = {
	.closed = on_closed,
	.heartbeat_ms = SW_SSE_HEARTBEAT_MS,
	.heartbeat = ": ping\n\n",
};

/* Sends c (takes the caller's reference) unless an event as new was sent. */
static void send_frame(struct reader *r, struct sw_hub_chunk *c)
{
	if (c->kind != SW_HUB_LOG || c->offset <= r->sent) {
		sw_hub_chunk_unref(c);
		return;
	}
	r->sent = c->offset;
	/* A failure means closed() is coming. */
	sw_http_stream_write(r->s, c->data, c->len, &c->ref);
}

static void on_chunk(void *arg)
{
	struct reader *r = arg;
	struct sw_hub_chunk *c;
	while ((c = sw_hub_next(r->hub)))
		send_frame(r, c);
}

static uint64_t last_event_id(const struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Last-Event-ID"));
	uint64_t v = 0;
	if (!h || h->value.len == 0 || h->value.len > 20 || !sw_parse_u64(h->value, &v))
		return 0;
	return v;
}

void sw_api_metrics_live_start(struct sw_http_request *req, const char *server_id, bool remote)
{
	struct reader *r = calloc(1, sizeof(*r));
	if (!r) {
		sw_api_internal_error(req);
		return;
	}
	r->loop = req->loop;
	bool writing = false;
	uint64_t offset = 0;
	int rc = sw_hub_attach(server_id, r->loop, on_chunk, r, &r->hub, &writing, &offset);
	if (rc < 0) {
		free(r);
		if (rc == -EBUSY)
			sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "Too many live readers of this server.");
		else
			sw_api_internal_error(req);
		return;
	}
	if (remote) {
		snprintf(r->remote_id, sizeof(r->remote_id), "%s", server_id);
		sw_api_metrics_live_watch(server_id, true);
	}
	uint64_t after = last_event_id(req);
	struct sw_hub_chunk *frames[SW_METRICS_CACHE_SLOTS];
	size_t n = sw_api_metrics_cache_frames(server_id, after, frames, SW_ARRAY_SIZE(frames));
	size_t first = 0;
	if (!after && n > 1) { /* a new reader: the latest sample only */
		for (size_t i = 0; i + 1 < n; i++)
			sw_hub_chunk_unref(frames[i]);
		first = n - 1;
	}
	r->s = sw_http_stream_begin(req, 200, "text/event-stream; charset=utf-8", &ops, r);
	if (!r->s) {
		for (size_t i = first; i < n; i++)
			sw_hub_chunk_unref(frames[i]);
		reader_free(r); /* HEAD, or the client is gone */
		return;
	}
	r->sent = after;
	for (size_t i = first; i < n; i++)
		send_frame(r, frames[i]);
	on_chunk(r); /* what was published meanwhile */
}
