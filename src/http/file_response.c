/* The file producer: len bytes of an open file as a response body,
 * without copying them through user space. Once the head is written, the
 * file is spliced file -> pipe -> socket on the ring; where the ring
 * cannot splice (an old kernel, a file system without splice) sendfile(2)
 * runs on the worker pool, a bounded amount per job so the loop gets its
 * turn. The connection's timer is the idle timeout while the body runs: a
 * client that takes nothing for that long loses the connection. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>
#include "http/conn.h"

/* Bytes one sendfile() job moves before it hands the loop a turn. */
#define SENDFILE_BUDGET (1024 * 1024)
#define SPLICE_PIPE_SIZE (256 * 1024)

enum file_step { FILE_WAIT, FILE_IN, FILE_OUT, FILE_POLL, FILE_WORKER, FILE_RETRY };

struct file_body {
	struct sw_conn *conn;
	int fd;
	uint64_t off, left, sent;
	int pipe_r, pipe_w;
	size_t pipe_cap, in_pipe;
	enum file_step step;
	bool active;   /* a ring op or a worker job is in flight */
	bool fallback; /* sendfile on the worker pool */
	bool cancelling;
	struct sw_io_op op;
	struct sw_worker_job job;
	struct sw_timer retry;
	int job_err;   /* worker: errno of the last sendfile, 0, or -1 for the end of the file */
};

/* Test hook (http_internal.h): the sendfile path even where splice works. */
static bool force_sendfile; /* atomic */

void sw_http_force_sendfile(bool on)
{
	__atomic_store_n(&force_sendfile, on, __ATOMIC_RELAXED);
}

static void file_op_done(struct sw_io_op *op, int res, uint32_t flags);
static void file_worker_submit(struct sw_conn *c);

/* The body is over: complete (ok) or not (the connection closes after
 * what was sent, so the client sees a short body). */
static void file_done(struct sw_conn *c, bool ok)
{
	struct file_body *fb = c->body;
	sw_conn_detach(c);
	sw_timer_stop(c->srv->loop, &fb->retry);
	close(fb->fd);
	if (fb->pipe_r >= 0)
		close(fb->pipe_r);
	if (fb->pipe_w >= 0)
		close(fb->pipe_w);
	uint64_t sent = fb->sent;
	free(fb);
	if (!ok) {
		c->close_after_write = true;
		if (!c->closing && c->fd >= 0)
			shutdown(c->fd, SHUT_RDWR);
	}
	sw_conn_request_done(c->req, (size_t)sent);
}

static void file_submit(struct sw_conn *c, int r)
{
	struct file_body *fb = c->body;
	if (r == 0)
		fb->active = true;
	else
		file_done(c, false);
}

static void splice_in(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	fb->step = FILE_IN;
	fb->op.cb = file_op_done;
	unsigned n = (unsigned)SW_MIN(fb->left, (uint64_t)fb->pipe_cap);
	file_submit(c, sw_io_splice(c->srv->loop, &fb->op, fb->fd, (int64_t)fb->off, fb->pipe_w, -1, n));
}

static void splice_out(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	fb->step = FILE_OUT;
	fb->op.cb = file_op_done;
	file_submit(c, sw_io_splice(c->srv->loop, &fb->op, fb->pipe_r, -1, c->fd, -1, (unsigned)fb->in_pipe));
}

static void poll_out(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	fb->step = FILE_POLL;
	fb->op.cb = file_op_done;
	file_submit(c, sw_io_poll(c->srv->loop, &fb->op, c->fd, POLLOUT));
}

static void file_retry_timer(struct sw_timer *t)
{
	struct file_body *fb = SW_CONTAINER_OF(t, struct file_body, retry);
	struct sw_conn *c = fb->conn;
	sw_conn_hold(c);
	if (c->closing)
		file_done(c, false);
	else if (fb->step == FILE_RETRY)
		file_worker_submit(c);
	sw_conn_release(c);
}

static void file_worker_run(struct sw_worker_job *job)
{
	struct file_body *fb = SW_CONTAINER_OF(job, struct file_body, job);
	size_t budget = SENDFILE_BUDGET;
	fb->job_err = 0;
	while (fb->left && budget) {
		off_t off = (off_t)fb->off;
		ssize_t w = sendfile(fb->conn->fd, fb->fd, &off, (size_t)SW_MIN(fb->left, (uint64_t)budget));
		if (w > 0) {
			fb->off += (uint64_t)w;
			fb->left -= (uint64_t)w;
			fb->sent += (uint64_t)w;
			budget -= (size_t)w;
		} else if (w == 0) {
			fb->job_err = -1; /* the file ended early */
			return;
		} else if (errno != EINTR) {
			fb->job_err = errno;
			return;
		}
	}
}

static void file_worker_done(struct sw_worker_job *job)
{
	struct file_body *fb = SW_CONTAINER_OF(job, struct file_body, job);
	struct sw_conn *c = fb->conn;
	sw_conn_hold(c);
	fb->active = false;
	if (fb->sent)
		sw_conn_arm_timer(c, c->srv->config->idle_timeout_ms); /* progress */
	if (c->closing)
		file_done(c, false);
	else if (fb->left == 0)
		file_done(c, true);
	else if (fb->job_err == 0)
		file_worker_submit(c); /* the budget ran out: another turn */
	else if (fb->job_err == EAGAIN)
		poll_out(c);
	else
		file_done(c, false);
	sw_conn_release(c);
}

static void file_worker_submit(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	fb->step = FILE_WORKER;
	fb->job.run = file_worker_run;
	fb->job.done = file_worker_done;
	int r = sw_worker_submit(c->srv->loop, &fb->job);
	if (r == 0) {
		fb->active = true;
	} else if (r == -EBUSY) {
		fb->step = FILE_RETRY; /* the pool is full: try again shortly */
		sw_timer_start(c->srv->loop, &fb->retry, 10, file_retry_timer);
	} else {
		file_done(c, false);
	}
}

static void file_use_fallback(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	fb->fallback = true;
	if (fb->pipe_r >= 0)
		close(fb->pipe_r);
	if (fb->pipe_w >= 0)
		close(fb->pipe_w);
	fb->pipe_r = fb->pipe_w = -1;
	file_worker_submit(c);
}

static void file_op_done_held(struct sw_conn *c, int res);

static void file_op_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct file_body *fb = SW_CONTAINER_OF(op, struct file_body, op);
	struct sw_conn *c = fb->conn;
	(void)flags;
	sw_conn_hold(c);
	fb->active = false;
	file_op_done_held(c, res);
	sw_conn_release(c);
}

static void file_op_done_held(struct sw_conn *c, int res)
{
	struct file_body *fb = c->body;
	if (c->closing) {
		file_done(c, false);
		return;
	}
	switch (fb->step) {
	case FILE_IN:
		if (res > 0) {
			fb->in_pipe = (size_t)res;
			fb->off += (uint64_t)res;
			fb->left -= (uint64_t)res;
			splice_out(c);
		} else if (res == -EAGAIN || res == -EINTR) {
			splice_in(c);
		} else if (res == -EINVAL || res == -EOPNOTSUPP) {
			/* This file system cannot splice: the pipe is empty here. */
			file_use_fallback(c);
		} else {
			file_done(c, false); /* 0: the file ended early */
		}
		return;
	case FILE_OUT:
		if (res > 0) {
			fb->in_pipe -= (size_t)res;
			fb->sent += (uint64_t)res;
			sw_conn_arm_timer(c, c->srv->config->idle_timeout_ms); /* progress */
			if (fb->in_pipe)
				splice_out(c);
			else if (fb->left)
				splice_in(c);
			else
				file_done(c, true);
		} else if (res == -EAGAIN || res == -EINTR) {
			poll_out(c);
		} else {
			file_done(c, false);
		}
		return;
	case FILE_POLL:
		if (res < 0 && res != -EINTR)
			file_done(c, false);
		else if (fb->fallback)
			file_worker_submit(c);
		else
			splice_out(c);
		return;
	default:
		(void)SW_NEVER(true);
		file_done(c, false);
		return;
	}
}

/* Starts sending the file once the head has been written. */
static void file_maybe_start(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	if (!fb || fb->step != FILE_WAIT || c->write_active || sw_conn_out_pending(c))
		return;
	if (c->closing) {
		file_done(c, false);
		return;
	}
	int p[2];
	if (__atomic_load_n(&force_sendfile, __ATOMIC_RELAXED) || !sw_loop_can_splice(c->srv->loop) ||
	    pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		file_use_fallback(c);
		return;
	}
	fb->pipe_r = p[0];
	fb->pipe_w = p[1];
	fcntl(fb->pipe_w, F_SETPIPE_SZ, SPLICE_PIPE_SIZE); /* best effort */
	int cap = fcntl(fb->pipe_w, F_GETPIPE_SZ);
	fb->pipe_cap = cap > 0 ? (size_t)cap : 65536;
	splice_in(c);
}

/* The connection is going away under a file body: make its operation
 * complete soon; its completion finishes the request. */
static void file_cancel(struct sw_conn *c)
{
	struct file_body *fb = c->body;
	if (fb->cancelling)
		return;
	fb->cancelling = true;
	if (fb->active) {
		if (fb->step != FILE_WORKER)
			sw_io_cancel(c->srv->loop, &fb->op);
		/* A sendfile job fails fast on the shut-down socket. */
	} else {
		fb->step = FILE_RETRY;
		sw_timer_start(c->srv->loop, &fb->retry, 0, file_retry_timer);
	}
}

/* ---- the producer's ops (conn.h) ---- */

static bool file_written(struct sw_conn *c)
{
	sw_conn_flush(c);
	file_maybe_start(c); /* once the head is written */
	return true;
}

/* The client took nothing of the file for the idle timeout. */
static void file_timeout(struct sw_conn *c)
{
	sw_conn_close(c);
}

static const struct sw_http_producer file_producer = {
	.written = file_written,
	.cancel = file_cancel,
	.timeout = file_timeout,
	/* no shutdown: a file body runs to its end, bounded by the deadline */
};

void sw_http_respond_file(struct sw_http_request *req, int status, const char *content_type,
			  int fd, uint64_t off, uint64_t len)
{
	struct sw_conn *c = req->conn;
	if (!sw_http_begin_answer(req, status)) {
		close(fd);
		return;
	}
	sw_http_write_head(req, status, content_type, FRAME_LENGTH, len);
	struct file_body *fb = NULL;
	if (!req->head_only && len)
		fb = calloc(1, sizeof(*fb));
	if (!fb) {
		close(fd);
		if (!req->head_only && len)
			c->close_after_write = true; /* out of memory: the body cannot follow */
		sw_conn_request_done(req, 0);
		return;
	}
	fb->conn = c;
	fb->fd = fd;
	fb->off = off;
	fb->left = len;
	fb->pipe_r = fb->pipe_w = -1;
	fb->step = FILE_WAIT;
	sw_conn_attach(c, &file_producer, fb);
	/* A client that stops reading for this long loses the connection. */
	sw_conn_arm_timer(c, c->srv->config->idle_timeout_ms);
	sw_conn_hold(c);
	sw_conn_flush(c);
	file_maybe_start(c);
	sw_conn_release(c);
}
