/* The connection state machine: HEAD (reading a head) -> BODY -> HANDLER
 * -> HEAD ..., and LINGER after an error.
 *
 * Why it looks like this:
 * - A connection receives with one multishot recv into the loop's provided
 *   buffers; bytes are appended to the connection's input buffer and the
 *   provided buffer goes straight back to the kernel, so an idle connection
 *   holds no receive buffer of the loop's. Between requests it keeps no
 *   buffer of its own either: the input buffer is released when empty and
 *   the output state (c->out) once written, so an idle keep-alive
 *   connection is its struct sw_conn (232 bytes) and its timer.
 * - Requests are handled in order. While a handler is pending (database,
 *   worker), later pipelined requests wait in the input buffer.
 * - Output accumulates in one generation while the other is being written
 *   with writev (out.c); headers and small bodies are copied into a buffer,
 *   large long-lived bodies (the OpenAPI document) are sent by reference.
 * - One timer per connection, whose meaning follows the state: the head's
 *   deadline, a stalled body, an idle keep-alive, a lingering close.
 * - A connection is freed only when no operation of the ring and no handler
 *   still refers to it (libuv's rule): closing is a state, freeing an event.
 * - Closing after an error is a lingering close: write the response, shut
 *   down our side, then read and discard until the client closes or a short
 *   timer expires, so unread input cannot turn into a reset that destroys
 *   the response before the client reads it.
 * - A body that is not in memory belongs to a producer (conn.h): the state
 *   machine only tells it when a write completed, when the connection goes
 *   away, when the server stops; the producer finishes the request. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "http/conn.h"

#define LINGER_MS 2000

static void conn_process(struct sw_conn *c);

static void write_done_held(struct sw_conn *c, int res);

static void write_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_conn *c = SW_CONTAINER_OF(op, struct sw_conn, write_op);
	(void)flags;
	sw_conn_hold(c);
	write_done_held(c, res);
	sw_conn_release(c);
}

static void write_done_held(struct sw_conn *c, int res)
{
	struct outgen *g = &c->out->gen[c->out->wi];
	c->write_active = false;
	c->writes_done++;
	if (res < 0) {
		if (res == -EAGAIN || res == -EINTR) {
			sw_conn_flush(c);
			return;
		}
		sw_conn_out_drop(c);
		c->closing = true;
		sw_conn_close(c);
		return;
	}
	SW_ASSERT((size_t)res <= g->bytes);
	sw_conn_gen_consume(g, (size_t)res);
	if (g->npieces == 0) {
		sw_conn_gen_reset(g);
		/* A producer idles between events: it keeps no output buffer. */
		if (c->producer)
			sw_buf_release(&g->buf);
	}
	/* The producer writes more, or finishes its request (false): the
	 * connection then goes on as after any response. */
	if (c->producer && c->producer->written(c))
		return;
	sw_conn_flush(c);
	if (!c->write_active && sw_conn_out_pending(c) == 0) {
		if (c->close_after_write || c->closing) {
			sw_conn_close(c);
			return;
		}
		/* Reading may have paused for output backpressure. */
		if (c->state == CONN_HEAD || c->state == CONN_BODY)
			conn_process(c);
	}
}

void sw_conn_flush(struct sw_conn *c)
{
	struct conn_out *o = c->out;
	if (c->write_active || c->fd < 0 || !o)
		return;
	struct outgen *g = &o->gen[o->wi];
	CONN_CHECK(c);
	if (g->npieces == 0) {
		if (o->gen[o->wi ^ 1].npieces == 0)
			return;
		o->wi ^= 1;
		g = &o->gen[o->wi];
	}
	SW_ASSERT(g->npieces <= OUT_MAX_PIECES && g->bytes > 0);
	for (unsigned i = 0; i < g->npieces; i++) {
		const struct piece *p = &g->pieces[i];
		o->iov[i].iov_base = (void *)(p->ptr ? p->ptr : g->buf.data + p->off);
		o->iov[i].iov_len = p->len;
	}
	c->write_op.cb = write_done;
	if (sw_io_writev(c->srv->loop, &c->write_op, c->fd, o->iov, g->npieces) == 0)
		c->write_active = true;
	else
		sw_conn_close(c);
}

static void finish_request_held(struct sw_http_request *req, size_t body_len);

void sw_conn_request_done(struct sw_http_request *req, size_t body_len)
{
	struct sw_conn *c = req->conn;
	sw_conn_hold(c);
	finish_request_held(req, body_len);
	sw_conn_release(c);
}

/* Logs the answered request and gives it back (once the current
 * completion has been handled). */
static void request_retire(struct sw_http_request *req, size_t body_len)
{
	if (req->server->config->access_log)
		sw_log_access(sw_str_from(req->request_id, req->request_id_len), req->method_str,
			      req->path, req->status, body_len, sw_now_us() - req->start_us);
	sw_http_request_release_later(req);
}

/* After a response (or an upgraded connection's end): close, or go on
 * with the next request. */
static void after_response(struct sw_conn *c);

static void finish_request_held(struct sw_http_request *req, size_t body_len)
{
	struct sw_conn *c = req->conn;
	SW_ASSERT(c->req == req && c->state == CONN_HANDLER && !c->producer);
	c->state = CONN_HEAD;
	c->req = NULL;
	request_retire(req, body_len);
	after_response(c);
}

void sw_conn_upgraded(struct sw_conn *c)
{
	struct sw_http_request *req = c->req;
	SW_ASSERT(req && c->state == CONN_HANDLER && c->producer);
	c->state = CONN_UPGRADED;
	c->req = NULL;
	request_retire(req, 0);
}

void sw_conn_upgraded_done(struct sw_conn *c)
{
	SW_ASSERT(c->state == CONN_UPGRADED && !c->producer && c->close_after_write);
	sw_conn_hold(c);
	c->state = CONN_HEAD;
	after_response(c);
	sw_conn_release(c);
}

static void after_response(struct sw_conn *c)
{
	if (c->closing || c->close_after_write) {
		sw_conn_flush(c);
		/* With a write in flight, its completion closes; sw_conn_close() may
		 * free c, so nothing follows it. */
		if (!c->write_active)
			sw_conn_close(c);
		return;
	}
	if (!c->processing)
		conn_process(c);
}

/* A reader too slow or stalled. What is queued is dropped; a write in
 * flight completes (with an error) and releases its pieces then. */
void sw_conn_abort(struct sw_conn *c)
{
	sw_conn_out_drop(c);
	c->closing = true;
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	if (c->recv_active)
		sw_io_cancel(c->srv->loop, &c->recv_op);
	if (c->write_active)
		sw_io_cancel(c->srv->loop, &c->write_op);
}

/* ---- the connection state machine ---- */

/* Answers the connection's current request (or a new one, when the head
 * never completed) with an error, discards unread input, and closes the
 * connection after the response: what follows cannot be trusted. */
static void conn_refuse(struct sw_conn *c, int status, const char *code, const char *message)
{
	struct sw_http_request *req = c->req ? c->req : sw_http_request_new(c);
	if (!req) {
		sw_conn_close(c);
		return;
	}
	req->state = NULL; /* a chunked decoder in the arena is done with */
	c->req = req;
	c->state = CONN_HANDLER;
	c->close_after_write = true;
	sw_buf_consume(&c->in, c->in.len);
	c->srv->error(req, status, code, message);
}

void sw_conn_hold(struct sw_conn *c)
{
	c->holds++;
}

void sw_conn_release(struct sw_conn *c)
{
	SW_ASSERT(c->holds > 0);
	if (--c->holds == 0)
		sw_conn_maybe_free(c);
}

static void conn_timeout_held(struct sw_conn *c);

static void conn_timeout(struct sw_timer *t)
{
	struct sw_conn *c = SW_CONTAINER_OF(t, struct sw_conn, timer);
	sw_conn_hold(c);
	conn_timeout_held(c);
	sw_conn_release(c);
}

static void conn_timeout_held(struct sw_conn *c)
{
	if (c->closing) {
		/* Lingering close or a stuck write: give up now. */
		if (c->recv_active)
			sw_io_cancel(c->srv->loop, &c->recv_op);
		if (c->write_active)
			sw_io_cancel(c->srv->loop, &c->write_op);
		shutdown(c->fd, SHUT_RDWR);
		sw_conn_maybe_free(c);
		return;
	}
	if (c->producer) {
		/* The timer is the producer's while it runs (a file: the
		 * client took nothing for the idle timeout). */
		if (c->producer->timeout)
			c->producer->timeout(c);
		return;
	}
	if (c->state == CONN_HANDLER)
		return; /* the handler's own deadlines bound it (a stream: its heartbeat) */
	if (c->write_active) {
		/* The client reads nothing of what we send. */
		sw_conn_close(c);
		return;
	}
	if ((c->state == CONN_HEAD && c->in.len > 0) || c->state == CONN_BODY) {
		conn_refuse(c, 408, "REQUEST_TIMEOUT",
			    c->state == CONN_BODY ? "The request body stalled." :
						    "The request head was not received in time.");
		sw_conn_flush(c);
		return;
	}
	sw_conn_close(c); /* idle keep-alive */
}

void sw_conn_arm_timer(struct sw_conn *c, unsigned ms)
{
	sw_timer_start(c->srv->loop, &c->timer, ms, conn_timeout);
}

/* Decides what to do once a head is complete. */
static void start_request(struct sw_conn *c, const struct sw_http_head *h, size_t head_len)
{
	struct sw_server *srv = c->srv;
	struct sw_http_request *req = sw_http_request_new(c);
	if (!req || sw_http_request_capture_head(req, h) < 0) {
		if (req)
			sw_http_request_free(req);
		sw_conn_close(c);
		return;
	}
	c->req = req;
	c->head_len = head_len;
	c->head_started = false;
	sw_http_request_set_id(req);

	unsigned allowed = 0;
	enum sw_route_match m = SW_ROUTE_NOT_FOUND;
	if (h->method == SW_HTTP_OPTIONS)
		allowed = sw_router_allowed(srv->shared->router, req->path);
	else
		m = sw_router_match(srv->shared->router, h->method, req->path, &req->route,
				    &req->params, &allowed);
	bool has_body = h->body_kind == SW_HTTP_BODY_CHUNKED ||
			(h->body_kind == SW_HTTP_BODY_LENGTH && h->content_length > 0);
	size_t max_body = 0;
	if (m == SW_ROUTE_FOUND)
		max_body = req->route->max_body ? req->route->max_body : SW_HTTP_BODILESS_MAX_BODY;

	if (has_body && (m != SW_ROUTE_FOUND || h->content_length > max_body)) {
		/* Unknown path, wrong method, or too large: answer without
		 * reading the body, and close (the body is never read). */
		c->state = CONN_HANDLER;
		c->close_after_write = true;
		sw_buf_consume(&c->in, head_len);
		if (m == SW_ROUTE_FOUND) {
			srv->error(req, 413, "PAYLOAD_TOO_LARGE",
				      req->route->max_body ? "The request body is larger than this route accepts." :
							     "This route accepts no request body.");
		} else {
			req->route = NULL;
			srv->dispatch(req);
		}
		return;
	}
	if (has_body) {
		c->state = CONN_BODY;
		c->body_raw = 0;
		c->body_out = 0;
		req->body.len = h->body_kind == SW_HTTP_BODY_LENGTH ? h->content_length : 0;
		req->state = NULL;
		if (h->body_kind == SW_HTTP_BODY_CHUNKED) {
			struct sw_http_chunked *ch = sw_arena_alloc(&req->arena, sizeof(*ch));
			if (!ch) {
				sw_conn_close(c);
				return;
			}
			sw_http_chunked_init(ch, max_body);
			req->state = ch; /* the handler's state slot is free until dispatch */
		}
		if (h->expect_continue && c->in.len == head_len) {
			static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
			sw_conn_out_bytes(c, cont, sizeof(cont) - 1);
			sw_conn_flush(c);
		}
		sw_conn_arm_timer(c, srv->config->body_timeout_ms);
		return;
	}
	sw_buf_consume(&c->in, head_len);
	c->state = CONN_HANDLER;
	if (h->method == SW_HTTP_OPTIONS)
		req->route = NULL;
	srv->dispatch(req);
}



/* Reads the body of c->req out of the input buffer. true when complete. */
static bool read_body(struct sw_conn *c)
{
	struct sw_http_request *req = c->req;
	if (!req->state) {
		size_t need = c->head_len + req->body.len;
		if (c->in.len < need)
			return false;
		char *body = sw_arena_alloc(&req->arena, req->body.len);
		if (!body) {
			sw_conn_close(c);
			return false;
		}
		memcpy(body, c->in.data + c->head_len, req->body.len);
		req->body.ptr = body;
		sw_buf_consume(&c->in, need);
		return true;
	}
	struct sw_http_chunked *ch = req->state;
	size_t raw_off = c->head_len + c->body_raw;
	size_t consumed = 0, written = 0;
	struct sw_http_parse_error err;
	int r = sw_http_chunked_decode(ch, c->in.data + raw_off, c->in.len - raw_off,
				       c->in.data + c->head_len + c->body_out, &consumed, &written, &err);
	c->body_raw += consumed;
	c->body_out += written;
	if (r == -EAGAIN)
		return false;
	if (r < 0) {
		conn_refuse(c, err.status, err.code, err.message);
		return false;
	}
	char *body = sw_arena_alloc(&req->arena, c->body_out ? c->body_out : 1);
	if (!body) {
		sw_conn_close(c);
		return false;
	}
	memcpy(body, c->in.data + c->head_len, c->body_out);
	req->body = sw_str_from(body, c->body_out);
	req->state = NULL;
	sw_buf_consume(&c->in, c->head_len + c->body_raw);
	return true;
}

static void conn_process(struct sw_conn *c)
{
	struct sw_server *srv = c->srv;
	SW_ASSERT(!c->processing);
	CONN_CHECK(c);
	c->processing = true;
	while (!c->closing && !c->close_after_write) {
		if (sw_conn_out_pending(c) > SW_HTTP_MAX_PENDING_OUTPUT)
			break; /* resumed by write_done() */
		if (c->state == CONN_HANDLER)
			break;
		if (c->state == CONN_HEAD) {
			if (c->in.len == 0) {
				if (srv->stopping) {
					sw_conn_flush(c);
					c->close_after_write = true;
					if (!c->write_active)
						sw_conn_close(c);
					break;
				}
				/* Idle between requests: keep neither an input
				 * buffer nor, once written, the output state. */
				sw_buf_release(&c->in);
				sw_conn_out_idle(c);
				c->head_started = false;
				sw_conn_arm_timer(c, srv->config->idle_timeout_ms);
				break;
			}
			size_t consumed;
			struct sw_http_parse_error err;
			int r = sw_http_parse_head(c->in.data, c->in.len, c->prev_len, &srv->head,
						   &consumed, &err);
			if (r == -EAGAIN) {
				c->prev_len = c->in.len;
				if (!c->head_started) {
					c->head_started = true;
					sw_conn_arm_timer(c, srv->config->header_timeout_ms);
				}
				break;
			}
			c->prev_len = 0;
			if (r < 0) {
				conn_refuse(c, err.status, err.code, err.message);
				break;
			}
			start_request(c, &srv->head, consumed);
			continue;
		}
		if (c->state == CONN_BODY) {
			if (!read_body(c))
				break;
			c->state = CONN_HANDLER;
			srv->dispatch(c->req);
			continue;
		}
		break;
	}
	c->processing = false;
	sw_conn_flush(c);
}

static void recv_done_held(struct sw_conn *c, int res, uint32_t flags);

static void recv_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_conn *c = SW_CONTAINER_OF(op, struct sw_conn, recv_op);
	sw_conn_hold(c);
	recv_done_held(c, res, flags);
	sw_conn_release(c);
}

static void recv_done_held(struct sw_conn *c, int res, uint32_t flags)
{
	struct sw_server *srv = c->srv;
	if (!(flags & SW_IO_MORE))
		c->recv_active = false;
	if (res > 0) {
		char *data = sw_loop_buffer(srv->loop, flags);
		if (c->closing || c->close_after_write) {
			/* Lingering or answering an error: discard. */
			sw_loop_buffer_recycle(srv->loop, flags);
		} else {
			int r = sw_buf_append(&c->in, data, (size_t)res);
			sw_loop_buffer_recycle(srv->loop, flags);
			if (r < 0 || (c->producer && !c->producer->input &&
				       c->in.len > STREAMING_INPUT_MAX)) {
				sw_conn_close(c);
				return;
			}
			if (c->producer && c->producer->input) {
				/* The connection was taken over (an upgrade): the
				 * bytes are the producer's, not a request's. */
				c->producer->input(c);
				goto rearm;
			}
			if (c->state == CONN_BODY)
				sw_conn_arm_timer(c, srv->config->body_timeout_ms);
			if (!c->processing)
				conn_process(c);
		}
	} else if (res == 0) {
		/* The client closed its side. */
		c->closing = true;
		if (c->recv_active)
			sw_io_cancel(srv->loop, &c->recv_op);
		sw_conn_maybe_free(c);
		return;
	} else if (res != -ENOBUFS) {
		if (res != -ECANCELED)
			c->closing = true;
		sw_conn_maybe_free(c); /* may free c */
		return;
	} else if (flags & SW_IO_BUFFER) {
		sw_loop_buffer_recycle(srv->loop, flags);
	}
rearm:
	if (!c->recv_active && !c->closing) {
		/* Multishot ended (-ENOBUFS, or the kernel's choice): re-arm. */
		c->recv_op.cb = recv_done;
		if (sw_io_recv_multishot(srv->loop, &c->recv_op, c->fd) == 0)
			c->recv_active = true;
		else
			sw_conn_close(c);
	} else if (c->closing) {
		sw_conn_maybe_free(c);
	}
}

/* Stops taking requests on c. With output still to write, writes it
 * first; then shuts down our side and lingers (see the top comment). */
void sw_conn_close(struct sw_conn *c)
{
	if (c->producer) {
		/* A body in progress cannot be completed: stop all I/O; the
		 * producer finishes the request (its stream's closed callback,
		 * its file's last completion), then the connection is freed. */
		if (!c->closing) {
			c->closing = true;
			if (c->fd >= 0)
				shutdown(c->fd, SHUT_RDWR);
			if (c->recv_active)
				sw_io_cancel(c->srv->loop, &c->recv_op);
		}
		sw_conn_maybe_free(c);
		return;
	}
	if (c->write_active || sw_conn_out_pending(c)) {
		c->close_after_write = true;
		sw_conn_flush(c);
		return;
	}
	if (c->closing && c->state == CONN_LINGER)
		return;
	bool was_closing = c->closing;
	c->closing = true;
	if (!was_closing && c->recv_active && c->fd >= 0) {
		/* Let the client see our FIN, and drain what it still sends. */
		c->state = CONN_LINGER;
		shutdown(c->fd, SHUT_WR);
		sw_conn_arm_timer(c, LINGER_MS);
		return;
	}
	if (c->recv_active)
		sw_io_cancel(c->srv->loop, &c->recv_op);
	sw_conn_maybe_free(c);
}

void sw_conn_maybe_free(struct sw_conn *c)
{
	/* Never while an entry point still uses c: sw_conn_release() frees then. */
	if (!c->closing || c->holds)
		return;
	/* A body in progress ends asynchronously, then finishes its request. */
	if (c->producer)
		c->producer->cancel(c);
	if (c->req && c->state != CONN_HANDLER) {
		/* Mid-head or mid-body: no handler holds it, nobody will answer. */
		sw_http_request_free(c->req);
		c->req = NULL;
	}
	if (c->recv_active || c->write_active || c->req || c->producer)
		return; /* an upgraded connection's producer ends it from a timer */
	SW_ASSERT(!c->producer && c->state != CONN_HANDLER);
	struct sw_server *srv = c->srv;
	sw_timer_stop(srv->loop, &c->timer);
	if (c->fd >= 0)
		sw_io_close(srv->loop, c->fd);
	c->fd = -1;
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	__atomic_fetch_sub(&srv->shared->connections, 1, __ATOMIC_RELAXED);
	sw_buf_release(&c->in);
	if (c->out) {
		sw_conn_out_drop(c);
		sw_conn_out_free(c->out);
	}
	free(c);
	if (srv->stopping)
		sw_server_maybe_drained(srv);
}

static void peer_address(int fd, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	snprintf(out, outlen, "unknown");
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)outlen);
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, (socklen_t)outlen);
}

bool sw_conn_start(struct sw_server *srv, int fd)
{
	struct sw_conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return false;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	peer_address(fd, c->peer, sizeof(c->peer));
	c->fd = fd;
	c->srv = srv;
	c->state = CONN_HEAD;
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	c->recv_op.cb = recv_done;
	if (sw_io_recv_multishot(srv->loop, &c->recv_op, fd) == 0)
		c->recv_active = true;
	c->head_started = true;
	sw_conn_arm_timer(c, srv->config->header_timeout_ms);
	if (!c->recv_active) {
		c->closing = true;
		sw_conn_maybe_free(c);
	}
	return true;
}

void sw_conn_attach(struct sw_conn *c, const struct sw_http_producer *p, void *body)
{
	SW_ASSERT(!c->producer && c->state == CONN_HANDLER && p && p->written && p->cancel && body);
	c->producer = p;
	c->body = body;
	if (c->in.len == 0)
		sw_buf_release(&c->in); /* a long-lived body keeps no input buffer */
}

void sw_conn_detach(struct sw_conn *c)
{
	SW_ASSERT(c->producer);
	c->producer = NULL;
	c->body = NULL;
}

void sw_server_maybe_drained(struct sw_server *srv)
{
	if (!srv->stopping || srv->nconns || srv->accept_active || srv->drained_told)
		return;
	srv->drained_told = true;
	sw_timer_stop(srv->loop, &srv->shutdown_timer);
	if (srv->listen_fd >= 0) {
		sw_io_close(srv->loop, srv->listen_fd);
		srv->listen_fd = -1;
	}
	if (srv->drained)
		srv->drained(srv->drained_arg);
}
