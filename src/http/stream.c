/* The streamed producer: a response whose body is written as it comes
 * (SSE), HTTP/1.1 chunked or delimited by the close for HTTP/1.0. Pieces
 * wait in the stream's own queue, by reference (struct sw_ref) or copied
 * once, and move into the connection's output generation as room frees
 * up, each batch framed as one HTTP chunk. A heartbeat timer writes the
 * owner's literal when nothing else was written, and notices a reader
 * that stopped reading (a write pending through two ticks). The owner
 * learns of an end it did not ask for from ops->closed, always from the
 * stream's timer, never inside the call that noticed it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/limits.h"
#include "http/conn.h"

/* A streamed body: pieces wait here until the output generation has room. */
struct stream_piece {
	const char *p;
	size_t n;
	struct sw_ref *ref;
};

struct sw_http_stream {
	struct sw_conn *conn;
	struct sw_http_request *req;
	const struct sw_http_stream_ops *ops;
	void *arg;
	bool chunked;
	bool close_at_end;
	bool ended;       /* the owner is done with it (sw_http_stream_end) */
	bool in_closed;   /* inside ops->closed */
	int failed;       /* 0, or the reason given to ops->closed */
	struct sw_timer timer; /* heartbeat, stall check, the deferred closed */
	uint64_t last_ms;      /* when bytes were last queued */
	uint64_t writes_seen;  /* conn->writes_done at the last tick */
	bool stalled;          /* a write was pending at the last tick without progress */
	uint64_t body_bytes;
	struct stream_piece *q; /* ring of qcap */
	unsigned qhead, qlen, qcap;
	size_t qbytes;
};

static void noop_release(struct sw_ref *ref)
{
	(void)ref;
}

/* Heartbeats and other literals are sent by reference with nothing to release. */
static struct sw_ref static_ref = { noop_release };

/* Bytes a stream copied: released with the piece. */
struct owned_bytes {
	struct sw_ref ref;
	char data[];
};

static void owned_release(struct sw_ref *ref)
{
	free(SW_CONTAINER_OF(ref, struct owned_bytes, ref));
}

static void stream_timer(struct sw_timer *t);

static void stream_drop_queue(struct sw_http_stream *s)
{
	while (s->qlen) {
		struct stream_piece *e = &s->q[s->qhead];
		s->qhead = (s->qhead + 1) % s->qcap;
		s->qlen--;
		if (e->ref)
			e->ref->release(e->ref);
	}
	s->qbytes = 0;
}

/* Frees s and finishes its request (the connection goes on or closes). */
static void stream_done(struct sw_conn *c, struct sw_http_stream *s)
{
	struct sw_http_request *req = s->req;
	uint64_t bytes = s->body_bytes;
	stream_drop_queue(s);
	sw_timer_stop(c->srv->loop, &s->timer);
	free(s->q);
	sw_conn_detach(c);
	free(s);
	sw_conn_request_done(req, (size_t)bytes);
}

/* The body is complete: the last chunk, then the request is done. */
static void stream_finish(struct sw_conn *c, struct sw_http_stream *s)
{
	if (s->chunked)
		sw_conn_out_static(c, "0\r\n\r\n", 5);
	if (s->close_at_end || c->srv->stopping)
		c->close_after_write = true;
	stream_done(c, s);
}

/* Moves queued pieces into the output generation while it has room; a
 * batch is one HTTP chunk. Ends the stream once the owner ended it and
 * nothing is queued. */
static void stream_pump(struct sw_conn *c)
{
	struct sw_http_stream *s = c->body;
	if (!s || s->failed)
		return;
	struct outgen *g = conn_acc(c);
	if (!g)
		return;
	while (s->qlen) {
		/* A chunk needs its size line and its CRLF beside the pieces. */
		unsigned free_pieces = OUT_MAX_PIECES - g->npieces;
		unsigned need = s->chunked ? 2 : 0;
		if (free_pieces <= need)
			break;
		unsigned k = SW_MIN(free_pieces - need, s->qlen);
		size_t total = 0;
		for (unsigned i = 0; i < k; i++)
			total += s->q[(s->qhead + i) % s->qcap].n;
		if (s->chunked) {
			char line[24];
			int n = snprintf(line, sizeof(line), "%zx\r\n", total);
			sw_conn_out_bytes(c, line, (size_t)n);
		}
		for (unsigned i = 0; i < k; i++) {
			struct stream_piece *e = &s->q[s->qhead];
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qlen--;
			sw_conn_out_ref(c, e->p, e->n, e->ref);
		}
		if (s->chunked)
			sw_conn_out_bytes(c, "\r\n", 2);
		s->qbytes -= total;
		s->body_bytes += total;
	}
	if (s->ended && s->qlen == 0)
		stream_finish(c, s);
}

/* The stream cannot go on: drop what is queued, and tell the owner (unless
 * it ended the stream itself) from the stream's timer, never from inside
 * the call that noticed. hard: stop the connection's I/O at once. */
static void stream_fail(struct sw_http_stream *s, int reason, bool hard)
{
	if (s->failed)
		return;
	s->failed = reason;
	stream_drop_queue(s);
	if (hard)
		sw_conn_abort(s->conn);
	sw_timer_start(s->conn->srv->loop, &s->timer, 0, stream_timer);
}

static void stream_timer_held(struct sw_conn *c, struct sw_http_stream *s);

static void stream_timer(struct sw_timer *t)
{
	struct sw_http_stream *s = SW_CONTAINER_OF(t, struct sw_http_stream, timer);
	struct sw_conn *c = s->conn;
	sw_conn_hold(c);
	stream_timer_held(c, s);
	sw_conn_release(c);
}

static void stream_timer_held(struct sw_conn *c, struct sw_http_stream *s)
{
	struct sw_loop *loop = c->srv->loop;
	if (s->failed) {
		if (!s->ended) {
			s->in_closed = true;
			s->ops->closed(s->arg, s->failed);
			s->ended = true;
		}
		if (s->failed == -ESHUTDOWN && !c->closing) {
			/* A clean end the client can resume after. */
			if (s->chunked)
				sw_conn_out_static(c, "0\r\n\r\n", 5);
			c->close_after_write = true;
		}
		stream_done(c, s);
		return;
	}
	/* A write pending through two ticks without completing: the client
	 * stopped reading. */
	if (c->write_active && c->writes_done == s->writes_seen) {
		if (s->stalled) {
			stream_fail(s, -ETIMEDOUT, true);
			return;
		}
		s->stalled = true;
	} else {
		s->stalled = false;
	}
	s->writes_seen = c->writes_done;
	uint64_t now = sw_loop_now_ms(loop);
	if (now - s->last_ms >= s->ops->heartbeat_ms)
		sw_http_stream_write(s, s->ops->heartbeat, strlen(s->ops->heartbeat), &static_ref);
	if (!s->failed)
		sw_timer_start(loop, &s->timer, s->ops->heartbeat_ms, stream_timer);
}

/* ---- the producer's ops (conn.h) ---- */

static bool stream_written(struct sw_conn *c)
{
	struct sw_http_stream *s = c->body;
	stream_pump(c); /* may end the stream and the request */
	if (c->body != s) {
		/* The next request may already have a body of its own. */
		return c->producer && c->producer->written(c);
	}
	sw_conn_flush(c);
	/* Last: the owner may write, or end the stream (and with it the
	 * request: the connection then goes on to the next). */
	if (!s->failed && !s->ended && s->qlen == 0 && s->ops->writable)
		s->ops->writable(s->arg);
	return true;
}

static void stream_cancel(struct sw_conn *c)
{
	struct sw_http_stream *s = c->body;
	if (!s->failed)
		stream_fail(s, -EPIPE, false);
}

/* A stopping server ends streams now, cleanly: the client resumes
 * elsewhere. */
static void stream_shutdown(struct sw_conn *c)
{
	stream_fail(c->body, -ESHUTDOWN, false);
}

static const struct sw_http_producer stream_producer = {
	.written = stream_written,
	.cancel = stream_cancel,
	.shutdown = stream_shutdown,
	/* no timeout: the stream's own timer bounds it (heartbeat, stall) */
};

struct sw_http_stream *sw_http_stream_begin(struct sw_http_request *req, int status,
					    const char *content_type,
					    const struct sw_http_stream_ops *ops, void *arg)
{
	struct sw_conn *c = req->conn;
	if (!sw_http_begin_answer(req, status))
		return NULL;
	struct sw_http_stream *s = NULL;
	if (!req->head_only) {
		s = calloc(1, sizeof(*s));
		if (!s) {
			/* Not answered yet: the error envelope can still go. */
			req->status = 0;
			sw_http_error(req, 500, "INTERNAL_ERROR", "The server is out of memory.");
			return NULL;
		}
	}
	bool chunked = req->version_minor >= 1;
	sw_http_write_head(req, status, content_type, chunked ? FRAME_CHUNKED : FRAME_CLOSE, 0);
	sw_buf_release(&req->resp_headers); /* written: a long stream keeps nothing it needs no more */
	if (!s) {
		/* HEAD: the head is the whole answer. */
		if (!chunked || sw_http_response_closes(req, status))
			c->close_after_write = true;
		sw_conn_request_done(req, 0);
		return NULL;
	}
	s->conn = c;
	s->req = req;
	s->ops = ops;
	s->arg = arg;
	s->chunked = chunked;
	s->close_at_end = !chunked || sw_http_response_closes(req, status);
	s->last_ms = sw_loop_now_ms(req->loop);
	sw_conn_attach(c, &stream_producer, s);
	if (ops->heartbeat_ms)
		sw_timer_start(req->loop, &s->timer, ops->heartbeat_ms, stream_timer);
	sw_conn_hold(c);
	sw_conn_flush(c);
	sw_conn_release(c);
	return s;
}

int sw_http_stream_write(struct sw_http_stream *s, const void *p, size_t n, struct sw_ref *ref)
{
	if (s->failed || s->ended) {
		if (ref)
			ref->release(ref);
		return -EPIPE;
	}
	if (n == 0) {
		if (ref)
			ref->release(ref);
		return 0;
	}
	if (s->qlen >= SW_HTTP_STREAM_MAX_QUEUED || s->qbytes + n > SW_HTTP_STREAM_MAX_QUEUED_BYTES) {
		if (ref)
			ref->release(ref);
		stream_fail(s, -ENOBUFS, true);
		return -ENOBUFS;
	}
	if (s->qlen == s->qcap) {
		unsigned cap = s->qcap ? s->qcap * 2 : 8;
		struct stream_piece *q = malloc(cap * sizeof(*q));
		if (!q) {
			if (ref)
				ref->release(ref);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < s->qlen; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		free(s->q);
		s->q = q;
		s->qcap = cap;
		s->qhead = 0;
	}
	if (!ref) {
		struct owned_bytes *o = malloc(sizeof(*o) + n);
		if (!o)
			return -ENOMEM;
		o->ref.release = owned_release;
		memcpy(o->data, p, n);
		p = o->data;
		ref = &o->ref;
	}
	s->q[(s->qhead + s->qlen) % s->qcap] = (struct stream_piece){ p, n, ref };
	s->qlen++;
	s->qbytes += n;
	s->last_ms = sw_loop_now_ms(s->conn->srv->loop);
	struct sw_conn *c = s->conn;
	sw_conn_hold(c);
	stream_pump(c);
	sw_conn_flush(c);
	sw_conn_release(c);
	return 0;
}

size_t sw_http_stream_queued(const struct sw_http_stream *s)
{
	return s->qbytes + sw_conn_out_pending(s->conn);
}

void sw_http_stream_end(struct sw_http_stream *s)
{
	if (s->in_closed || s->ended)
		return;
	s->ended = true;
	struct sw_conn *c = s->conn;
	sw_conn_hold(c);
	if (s->failed) {
		/* The deferred closed will not run: finish now. */
		stream_done(c, s);
	} else {
		stream_pump(c); /* ends it once nothing is queued */
		sw_conn_flush(c);
	}
	sw_conn_release(c);
}

void sw_http_stream_abort(struct sw_http_stream *s)
{
	if (s->in_closed || s->ended)
		return;
	s->ended = true;
	struct sw_conn *c = s->conn;
	sw_conn_hold(c);
	if (s->failed)
		stream_done(c, s);
	else
		stream_fail(s, -ECONNABORTED, true); /* its timer finishes the request */
	sw_conn_release(c);
}
