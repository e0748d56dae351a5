/* The server of one loop: its listener (SO_REUSEPORT: each loop thread
 * binds its own, so the kernel spreads connections and no state is shared
 * between loops but an atomic connection counter), accepting under the
 * connection cap (a 503 written straight to the socket past it), and the
 * graceful shutdown. The thread's owner (src/main/thread.c) decides when
 * the server starts accepting and what happens once it has drained. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "steward/base/log.h"
#include "http/conn.h"

static void accept_arm(struct sw_server *srv);

static void accept_retry(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, accept_retry);
	if (!srv->stopping && !srv->accept_active)
		accept_arm(srv);
}

static void refuse_connection(struct sw_server *srv, int fd)
{
	char rid[40];
	size_t ridlen = sw_http_request_id_new(srv, rid);
	struct sw_buf body = { 0 };
	int r = sw_http_error_json(&body, "SERVICE_UNAVAILABLE",
				   "The server is at its connection limit; try again shortly.",
				   sw_str_from(rid, ridlen), NULL);
	sw_server_refresh_date(srv);
	char msg[768];
	int n = -1;
	if (r == 0)
		n = snprintf(msg, sizeof(msg),
			     "HTTP/1.1 503 Service Unavailable\r\nDate: %s\r\nContent-Length: %zu\r\n"
			     "Content-Type: application/json\r\nX-Request-Id: %s\r\n"
			     "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			     "Retry-After: 1\r\nConnection: close\r\n\r\n%.*s",
			     srv->date, body.len, rid, (int)body.len, body.data);
	/* Best effort and non-blocking: the socket buffer of a new connection
	 * takes this whole. */
	if (n > 0 && (size_t)n < sizeof(msg)) {
		ssize_t w = send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)w;
	}
	sw_buf_release(&body);
	/* Discard what the client already sent, so the close is a FIN rather
	 * than a reset that could destroy the 503 before it is read. */
	char sink[4096];
	for (int i = 0; i < 16 && recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
		;
	shutdown(fd, SHUT_WR);
	close(fd);
	if (srv->config->access_log)
		sw_log_access(sw_str_from(rid, ridlen), SW_STR("-"), SW_STR("-"), 503,
			      0, 0);
}

static void accept_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_server *srv = SW_CONTAINER_OF(op, struct sw_server, accept_op);
	if (!(flags & SW_IO_MORE))
		srv->accept_active = false;
	if (res >= 0) {
		int fd = res;
		if (srv->stopping) {
			close(fd);
		} else if (__atomic_add_fetch(&srv->shared->connections, 1, __ATOMIC_RELAXED) >
			   srv->config->max_connections) {
			__atomic_fetch_sub(&srv->shared->connections, 1, __ATOMIC_RELAXED);
			refuse_connection(srv, fd);
		} else if (!sw_conn_start(srv, fd)) {
			__atomic_fetch_sub(&srv->shared->connections, 1, __ATOMIC_RELAXED);
		}
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOMEM || res == -ENOBUFS) {
		sw_log_warn("accept failed on loop %u: %s; retrying", sw_loop_index(srv->loop), strerror(-res));
		if (!srv->accept_active && !srv->stopping) {
			sw_timer_start(srv->loop, &srv->accept_retry, 100, accept_retry);
			return;
		}
	} else if (res == -ECANCELED || srv->stopping) {
		if (!srv->accept_active)
			sw_server_maybe_drained(srv);
		return;
	}
	if (!srv->accept_active && !srv->stopping)
		accept_arm(srv);
}

static void accept_arm(struct sw_server *srv)
{
	srv->accept_op.cb = accept_done;
	if (sw_io_accept_multishot(srv->loop, &srv->accept_op, srv->listen_fd) == 0)
		srv->accept_active = true;
	else
		sw_timer_start(srv->loop, &srv->accept_retry, 100, accept_retry);
}

int sw_server_listen(const struct sw_config *config, int *ret_fd)
{
	int fd = socket(config->listen_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (const struct sockaddr *)&config->listen_addr, config->listen_addr_len) < 0 ||
	    listen(fd, 4096) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* ---- the server's life ---- */

struct sw_server *sw_server_new(struct sw_loop *loop, struct sw_server_shared *shared)
{
	struct sw_server *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->shared = shared;
	srv->config = shared->config;
	srv->loop = loop;
	srv->dispatch = sw_http_dispatch;
	srv->error = sw_http_error;
	int r = sw_server_listen(srv->config, &srv->listen_fd);
	if (r < 0) {
		free(srv);
		errno = -r;
		return NULL;
	}
	return srv;
}

void sw_server_accept(struct sw_server *srv)
{
	if (!srv->stopping && !srv->accept_active)
		accept_arm(srv);
}

static void shutdown_deadline(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, shutdown_timer);
	sw_log_warn("shutdown deadline reached on loop %u with %u connections open; closing them",
		    sw_loop_index(srv->loop), srv->nconns);
	for (struct sw_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		sw_conn_out_drop(c); /* a write in flight: its completion releases it */
		c->closing = true;
		if (c->recv_active)
			sw_io_cancel(srv->loop, &c->recv_op);
		if (c->write_active)
			sw_io_cancel(srv->loop, &c->write_op);
		shutdown(c->fd, SHUT_RDWR);
		sw_conn_maybe_free(c);
	}
}

void sw_server_shutdown(struct sw_server *srv, void (*drained)(void *arg), void *arg)
{
	if (srv->stopping)
		return;
	srv->stopping = true;
	srv->drained = drained;
	srv->drained_arg = arg;
	sw_timer_stop(srv->loop, &srv->accept_retry);
	if (srv->accept_active)
		sw_io_cancel(srv->loop, &srv->accept_op);
	/* Closing the listener now makes the kernel refuse new connections
	 * (and reset those in the backlog) while requests in flight finish.
	 * The cancelled accept keeps its own reference until it completes. */
	if (srv->listen_fd >= 0) {
		sw_io_close(srv->loop, srv->listen_fd);
		srv->listen_fd = -1;
	}
	/* Idle connections go now; the others after their current request;
	 * producers are told (a stream ends now, cleanly: the client resumes
	 * elsewhere). */
	for (struct sw_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		if (c->producer) {
			if (c->producer->shutdown)
				c->producer->shutdown(c);
		} else if (c->state == CONN_HEAD && c->in.len == 0 && !c->write_active &&
			   !sw_conn_out_pending(c)) {
			sw_conn_close(c);
		}
	}
	sw_timer_start(srv->loop, &srv->shutdown_timer, srv->config->shutdown_timeout_ms,
		       shutdown_deadline);
	sw_server_maybe_drained(srv);
}

void sw_server_free(struct sw_server *srv)
{
	if (!srv)
		return;
	if (srv->listen_fd >= 0)
		close(srv->listen_fd);
	sw_http_request_reap(srv);
	while (srv->free_reqs) {
		struct sw_http_request *req = srv->free_reqs;
		srv->free_reqs = req->next_free;
		sw_buf_release(&req->resp_headers);
		free(req);
	}
	while (srv->free_outs) {
		struct conn_out *o = srv->free_outs;
		srv->free_outs = o->next_free;
		sw_conn_out_free(o);
	}
	free(srv);
}
