/* A connection taken over after 101 (steward/http/upgrade.h): one more
 * body producer (conn.h), which forwards the state machine's calls to the
 * owner's ops and ends the connection from a timer, so that closed()
 * never runs inside the state machine's or the owner's own call. The
 * request is released at the upgrade (sw_conn_upgraded()): a session
 * holds only its struct sw_conn, this struct and, while output is queued,
 * an output state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/http/upgrade.h"
#include "http/conn.h"

struct sw_http_upgraded {
	struct sw_conn *conn;
	const struct sw_http_upgrade_ops *ops;
	void *arg;
	struct sw_timer finish_timer;
	struct sw_timer first_input; /* hands over the bytes that came with the request */
	bool ending;
};

static void finish(struct sw_timer *t)
{
	struct sw_http_upgraded *u = SW_CONTAINER_OF(t, struct sw_http_upgraded, finish_timer);
	struct sw_conn *c = u->conn;
	const struct sw_http_upgrade_ops *ops = u->ops;
	void *arg = u->arg;
	sw_conn_hold(c);
	sw_timer_stop(c->srv->loop, &u->first_input);
	sw_conn_detach(c);
	c->close_after_write = true; /* never back to HTTP */
	sw_conn_upgraded_done(c);
	free(u);
	ops->closed(arg);
	sw_conn_release(c);
}

static void end_later(struct sw_http_upgraded *u)
{
	u->ending = true;
	if (!sw_timer_armed(&u->finish_timer))
		sw_timer_start(u->conn->srv->loop, &u->finish_timer, 0, finish);
}

static void on_input(struct sw_conn *c)
{
	struct sw_http_upgraded *u = c->body;
	if (!u->ending)
		u->ops->input(u->arg, &c->in);
	else
		sw_buf_consume(&c->in, c->in.len);
}

static void deliver_first_input(struct sw_timer *t)
{
	struct sw_http_upgraded *u = SW_CONTAINER_OF(t, struct sw_http_upgraded, first_input);
	struct sw_conn *c = u->conn;
	if (c->in.len) {
		sw_conn_hold(c);
		on_input(c);
		sw_conn_release(c);
	}
}

static bool on_written(struct sw_conn *c)
{
	struct sw_http_upgraded *u = c->body;
	sw_conn_flush(c);
	if (sw_conn_out_pending(c) == 0) {
		if (!u->ending && u->ops->drained)
			u->ops->drained(u->arg);
		/* Between messages the session keeps no output state. */
		if (sw_conn_out_pending(c) == 0)
			sw_conn_out_idle(c);
	}
	return true;
}

static void on_cancel(struct sw_conn *c)
{
	end_later(c->body);
}

static void on_shutdown(struct sw_conn *c)
{
	struct sw_http_upgraded *u = c->body;
	if (u->ending)
		return;
	if (u->ops->shutdown)
		u->ops->shutdown(u->arg);
	else
		end_later(u);
}

static void on_timeout(struct sw_conn *c)
{
	struct sw_http_upgraded *u = c->body;
	if (!u->ending)
		u->ops->timeout(u->arg);
}

static const struct sw_http_producer producer = {
	.written = on_written,
	.cancel = on_cancel,
	.shutdown = on_shutdown,
	.timeout = on_timeout,
	.input = on_input,
};

struct sw_http_upgraded *sw_http_upgrade(struct sw_http_request *req, const char *head_lines,
					 const struct sw_http_upgrade_ops *ops, void *arg)
{
	struct sw_http_upgraded *u = calloc(1, sizeof(*u));
	if (!u) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return NULL;
	}
	if (!sw_http_begin_answer(req, 101)) {
		free(u);
		return NULL;
	}
	struct sw_conn *c = req->conn;
	static const char status[] = "HTTP/1.1 101 Switching Protocols\r\n";
	sw_conn_out_bytes(c, status, sizeof(status) - 1);
	sw_conn_out_bytes(c, head_lines, strlen(head_lines));
	sw_conn_out_bytes(c, "\r\n", 2);
	u->conn = c;
	u->ops = ops;
	u->arg = arg;
	sw_conn_attach(c, &producer, u);
	sw_conn_upgraded(c); /* req is released: nothing below may use it */
	sw_conn_flush(c);
	if (c->in.len)
		sw_timer_start(c->srv->loop, &u->first_input, 0, deliver_first_input);
	return u;
}

void sw_http_upgraded_write(struct sw_http_upgraded *u, const void *p, size_t n)
{
	if (u->ending || u->conn->closing)
		return;
	sw_conn_out_bytes(u->conn, p, n);
	sw_conn_flush(u->conn);
}

size_t sw_http_upgraded_pending(const struct sw_http_upgraded *u)
{
	return sw_conn_out_pending(u->conn);
}

void sw_http_upgraded_timer(struct sw_http_upgraded *u, unsigned ms)
{
	if (!u->ending)
		sw_conn_arm_timer(u->conn, ms);
}

void sw_http_upgraded_end(struct sw_http_upgraded *u)
{
	end_later(u);
}

void sw_http_upgraded_abort(struct sw_http_upgraded *u)
{
	if (u->ending)
		return;
	sw_conn_abort(u->conn);
	end_later(u);
}

const char *sw_http_upgraded_peer(const struct sw_http_upgraded *u)
{
	return u->conn->peer;
}

struct sw_loop *sw_http_upgraded_loop(const struct sw_http_upgraded *u)
{
	return u->conn->srv->loop;
}
