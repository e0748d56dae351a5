/* Connections, requests and responses on one loop.
 *
 * Why it looks like this:
 * - Each loop thread has its own listener (SO_REUSEPORT), so the kernel
 *   spreads connections and no state is shared between loops but an atomic
 *   connection counter.
 * - A connection receives with one multishot recv into the loop's provided
 *   buffers; bytes are appended to the connection's input buffer and the
 *   provided buffer goes straight back to the kernel, so an idle connection
 *   holds no receive buffer of the loop's.
 * - Requests are handled in order. While a handler is pending (database,
 *   worker), later pipelined requests wait in the input buffer.
 * - Output accumulates in one generation while the other is being written
 *   with writev; headers and small bodies are copied into a buffer, large
 *   long-lived bodies (the OpenAPI document) are sent by reference.
 * - A connection is freed only when no operation of the ring and no handler
 *   still refers to it (libuv's rule): closing is a state, freeing an event.
 * - Closing after an error is a lingering close: write the response, shut
 *   down our side, then read and discard until the client closes or a short
 *   timer expires, so unread input cannot turn into a reset that destroys
 *   the response before the client reads it.
 * - Bodies that are not in memory: a streamed response (SSE) queues pieces
 *   by reference (struct sw_http_ref) and moves them into the output
 *   generation as room frees up, each batch framed as one HTTP chunk; a
 *   file is spliced file -> pipe -> socket on the ring once the head is
 *   written (sendfile() on the worker pool where the ring cannot splice).
 *   Either keeps the request open (CONN_HANDLER) until its body is done,
 *   so later pipelined requests wait; the connection going away ends it
 *   asynchronously (the stream's closed callback, the splice's completion). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "steward/db.h"
#include "steward/http.h"
#include "steward/io.h"
#include "steward/limits.h"
#include "steward/log.h"
#include "steward/query.h"
#include "http/internal.h"

#define MAX_LOOPS 64
#define LINGER_MS 2000
#define OUT_MAX_PIECES 16
#define IDLE_BUF_KEEP 4096
/* Input a client may pipeline while a streamed or file body is being
 * sent; past it the connection is closed (a stream can last hours). */
#define STREAMING_INPUT_MAX (64 * 1024)
/* Bytes one sendfile() job moves before it hands the loop a turn. */
#define SENDFILE_BUDGET (1024 * 1024)
#define SPLICE_PIPE_SIZE (256 * 1024)

struct piece {
	const char *ptr; /* NULL: bytes [off, off+len) of the generation's buffer */
	size_t off;
	size_t len;
	struct sw_http_ref *ref; /* released once the piece is written or dropped */
};

struct outgen {
	struct sw_buf buf;
	struct piece pieces[OUT_MAX_PIECES];
	unsigned npieces;
	size_t bytes;
};

enum conn_state { CONN_HEAD, CONN_BODY, CONN_HANDLER, CONN_LINGER };

struct sw_conn {
	struct sw_conn *prev, *next;
	struct sw_server *srv;
	int fd;
	enum conn_state state;
	struct sw_io_op recv_op;
	struct sw_io_op write_op;
	bool recv_active;
	bool write_active;
	bool closing;         /* no more requests; free once quiet */
	bool close_after_write;
	bool processing;      /* inside conn_process() */
	unsigned holds;       /* entry points on the stack; freed only at 0 */
	bool head_started;    /* header timer running for a request */
	struct sw_buf in;
	size_t prev_len;
	size_t head_len;
	size_t body_raw;      /* chunked: raw bytes consumed after the head */
	size_t body_out;      /* chunked: decoded bytes so far */
	struct sw_http_request *req;
	struct sw_timer timer;
	char peer[46];        /* INET6_ADDRSTRLEN */
	struct outgen gen[2]; /* gen[wi] is being written */
	unsigned wi;
	uint64_t writes_done;  /* completed writes: a stream's stall detector */
	struct sw_http_stream *stream; /* a streamed body in progress */
	struct file_body *file;        /* a file body in progress */
	struct iovec iov[OUT_MAX_PIECES];
};

/* A streamed body: pieces wait here until the output generation has room. */
struct stream_piece {
	const char *p;
	size_t n;
	struct sw_http_ref *ref;
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

/* A file body: splice(2) through a pipe on the ring, or sendfile(2) on a
 * worker (fallback). */
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

struct sw_server {
	struct sw_server_shared *shared;
	const struct sw_config *config;
	struct sw_loop *loop;
	struct sw_db_pool *db;
	int listen_fd;
	struct sw_io_op accept_op;
	bool accept_active;
	struct sw_timer accept_retry;
	struct sw_conn *conns;
	unsigned nconns;
	struct sw_http_request *free_reqs;
	unsigned nfree;
	struct sw_http_head head; /* scratch: parsing is synchronous */
	char date[32];
	time_t date_sec;
	uint64_t seq;
	bool stopping;
	bool db_closing;
	struct sw_timer shutdown_timer;
	struct sw_timer ready_timer;
	uint64_t ready_deadline;
	/* Answered requests, released once the current completion has been
	 * handled (see request_release_later()). */
	struct sw_http_request *answered;
	struct sw_timer reap_timer;
};

/* Running loops, for sw_server_request_shutdown() from the main thread.
 * The lock keeps a post from overlapping the loop's free. */
static struct sw_loop *loops[MAX_LOOPS];
static pthread_mutex_t loops_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t rid_prefix;
static pthread_once_t rid_once = PTHREAD_ONCE_INIT;

/* A random per-process prefix makes request ids unique across restarts
 * and replicas; the loop index and a counter make them unique within. */
static void rid_init(void)
{
	if (getrandom(&rid_prefix, sizeof(rid_prefix), 0) != sizeof(rid_prefix))
		rid_prefix = (uint32_t)sw_wall_ms();
}

static void conn_process(struct sw_conn *c);
static void conn_close(struct sw_conn *c);
static void conn_flush(struct sw_conn *c);
static void conn_maybe_free(struct sw_conn *c);
static void conn_hold(struct sw_conn *c);
static void conn_release(struct sw_conn *c);
static void server_check_done(struct sw_server *srv);
static void ready_check(struct sw_timer *t);
static void finish_request(struct sw_http_request *req, size_t body_len);
static void stream_pump(struct sw_conn *c);
static void stream_fail(struct sw_http_stream *s, int reason, bool hard);
static void file_maybe_start(struct sw_conn *c);
static void file_cancel(struct sw_conn *c);
static void conn_arm_timer(struct sw_conn *c, unsigned ms);

const char *sw_http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	}
	return "Unknown";
}

/* ---- output ---- */

static struct outgen *acc(struct sw_conn *c)
{
	return &c->gen[c->wi ^ 1];
}

static void out_bytes(struct sw_conn *c, const void *p, size_t n)
{
	struct outgen *g = acc(c);
	size_t off = g->buf.len;
	if (sw_buf_append(&g->buf, p, n) < 0) {
		c->close_after_write = true; /* out of memory: give up on this connection */
		return;
	}
	struct piece *last = g->npieces ? &g->pieces[g->npieces - 1] : NULL;
	if (last && !last->ptr && last->off + last->len == off) {
		last->len += n;
	} else if (g->npieces < OUT_MAX_PIECES) {
		g->pieces[g->npieces++] = (struct piece){ NULL, off, n, NULL };
	} else {
		/* No piece left: fold everything into the buffer. Only happens
		 * with many static bodies queued at once. */
		c->close_after_write = true;
		return;
	}
	g->bytes += n;
}

static void out_static(struct sw_conn *c, const char *p, size_t n)
{
	struct outgen *g = acc(c);
	if (n < 4096 || g->npieces >= OUT_MAX_PIECES - 1) {
		out_bytes(c, p, n);
		return;
	}
	g->pieces[g->npieces++] = (struct piece){ p, 0, n, NULL };
	g->bytes += n;
}

/* Queues n bytes at p by reference; the caller made sure a piece is free. */
static void out_ref(struct sw_conn *c, const char *p, size_t n, struct sw_http_ref *ref)
{
	struct outgen *g = acc(c);
	if (SW_NEVER(g->npieces >= OUT_MAX_PIECES)) {
		if (ref)
			ref->release(ref);
		c->close_after_write = true;
		return;
	}
	g->pieces[g->npieces++] = (struct piece){ p, 0, n, ref };
	g->bytes += n;
}

static size_t out_pending(const struct sw_conn *c)
{
	return c->gen[0].bytes + c->gen[1].bytes;
}

/* Empties g, releasing what it held by reference: never while a write of
 * g is in flight (the kernel may still read it). */
static void gen_reset(struct outgen *g)
{
	for (unsigned i = 0; i < g->npieces; i++)
		if (g->pieces[i].ref)
			g->pieces[i].ref->release(g->pieces[i].ref);
	g->npieces = 0;
	g->bytes = 0;
	g->buf.len = 0;
	if (g->buf.cap > 64 * 1024)
		sw_buf_release(&g->buf);
}

static void write_done_held(struct sw_conn *c, int res);

static void write_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_conn *c = SW_CONTAINER_OF(op, struct sw_conn, write_op);
	(void)flags;
	conn_hold(c);
	write_done_held(c, res);
	conn_release(c);
}

static void write_done_held(struct sw_conn *c, int res)
{
	struct outgen *g = &c->gen[c->wi];
	c->write_active = false;
	c->writes_done++;
	if (res < 0) {
		if (res == -EAGAIN || res == -EINTR) {
			conn_flush(c);
			return;
		}
		gen_reset(g);
		gen_reset(acc(c));
		c->closing = true;
		conn_close(c);
		return;
	}
	size_t n = (size_t)res;
	g->bytes -= n;
	unsigned i = 0;
	while (i < g->npieces && n >= g->pieces[i].len) {
		n -= g->pieces[i].len;
		if (g->pieces[i].ref)
			g->pieces[i].ref->release(g->pieces[i].ref);
		i++;
	}
	if (i < g->npieces) {
		if (g->pieces[i].ptr)
			g->pieces[i].ptr += n;
		else
			g->pieces[i].off += n;
		g->pieces[i].len -= n;
	}
	memmove(g->pieces, g->pieces + i, (g->npieces - i) * sizeof(g->pieces[0]));
	g->npieces -= i;
	if (g->npieces == 0) {
		gen_reset(g);
		/* A stream idles between events: it keeps no output buffer. */
		if (c->stream)
			sw_buf_release(&g->buf);
	}
	if (c->stream)
		stream_pump(c); /* may end the stream and the request */
	conn_flush(c);
	if (c->file) {
		file_maybe_start(c); /* once the head is written */
		return;
	}
	struct sw_http_stream *s = c->stream;
	if (s) {
		/* Last: the owner may write, or end the stream (and with it
		 * the request: the connection then goes on to the next). */
		if (!s->failed && !s->ended && s->qlen == 0 && s->ops->writable)
			s->ops->writable(s->arg);
		return;
	}
	if (!c->write_active && out_pending(c) == 0) {
		if (c->close_after_write || c->closing) {
			conn_close(c);
			return;
		}
		/* Reading may have paused for output backpressure. */
		if (c->state == CONN_HEAD || c->state == CONN_BODY)
			conn_process(c);
	}
}

static void conn_flush(struct sw_conn *c)
{
	if (c->write_active || c->fd < 0)
		return;
	struct outgen *g = &c->gen[c->wi];
	if (g->npieces == 0) {
		if (acc(c)->npieces == 0)
			return;
		c->wi ^= 1;
		g = &c->gen[c->wi];
	}
	for (unsigned i = 0; i < g->npieces; i++) {
		const struct piece *p = &g->pieces[i];
		c->iov[i].iov_base = (void *)(p->ptr ? p->ptr : g->buf.data + p->off);
		c->iov[i].iov_len = p->len;
	}
	c->write_op.cb = write_done;
	if (sw_io_writev(c->srv->loop, &c->write_op, c->fd, c->iov, g->npieces) == 0)
		c->write_active = true;
	else
		conn_close(c);
}

/* ---- requests ---- */

static struct sw_http_request *request_new(struct sw_conn *c)
{
	struct sw_server *srv = c->srv;
	struct sw_http_request *req = srv->free_reqs;
	if (req) {
		srv->free_reqs = req->next_free;
		srv->nfree--;
	} else {
		req = malloc(sizeof(*req));
		if (!req)
			return NULL;
		req->resp_headers = (struct sw_buf){ 0 };
	}
	struct sw_buf keep = req->resp_headers;
	memset(req, 0, offsetof(struct sw_http_request, arena_first));
	req->resp_headers = keep;
	req->resp_headers.len = 0;
	sw_arena_init(&req->arena, req->arena_first, sizeof(req->arena_first));
	req->conn = c;
	req->server = srv;
	req->loop = srv->loop;
	req->start_us = sw_now_us();
	req->keep_alive = true;
	req->method_str = SW_STR("-");
	req->path = SW_STR("-");
	return req;
}

static void request_free(struct sw_http_request *req)
{
	struct sw_server *srv = req->server;
	sw_arena_reset(&req->arena);
	if (srv->nfree < 256) {
		if (req->resp_headers.cap > 4096)
			sw_buf_release(&req->resp_headers);
		req->next_free = srv->free_reqs;
		srv->free_reqs = req;
		srv->nfree++;
	} else {
		sw_buf_release(&req->resp_headers);
		free(req);
	}
}

static void reap_answered(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, reap_timer);
	while (srv->answered) {
		struct sw_http_request *req = srv->answered;
		srv->answered = req->next_free;
		request_free(req);
	}
}

/* A handler's code may still run after it answered (a callback chain
 * unwinding, wiping a secret it held in the request's arena), so the
 * request is released after the current batch of completions, not inside
 * the answer: Valkey's freeClientAsync, for requests. */
static void request_release_later(struct sw_http_request *req)
{
	struct sw_server *srv = req->server;
	req->next_free = srv->answered;
	srv->answered = req;
	if (!sw_timer_armed(&srv->reap_timer))
		sw_timer_start(srv->loop, &srv->reap_timer, 0, reap_answered);
}

static bool request_id_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == ':' || ch == '-';
}

static void request_set_id(struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("X-Request-Id"));
	if (h && h->value.len >= 1 && h->value.len <= 64) {
		bool ok = true;
		for (size_t i = 0; i < h->value.len && ok; i++)
			ok = request_id_char(h->value.ptr[i]);
		if (ok) {
			memcpy(req->request_id, h->value.ptr, h->value.len);
			req->request_id_len = h->value.len;
			return;
		}
	}
	struct sw_server *srv = req->server;
	req->request_id_len = (size_t)snprintf(req->request_id, sizeof(req->request_id),
					      "%08x-%x-%llx", rid_prefix, sw_loop_index(srv->loop),
					      (unsigned long long)++srv->seq);
}

const struct sw_http_header *sw_http_request_header(const struct sw_http_request *req,
						    struct sw_str name)
{
	for (unsigned i = 0; i < req->header_count; i++)
		if (sw_str_case_eq(req->headers[i].name, name))
			return &req->headers[i];
	return NULL;
}

const struct sw_config *sw_http_config(const struct sw_http_request *req)
{
	return req->server->config;
}

struct sw_db_pool *sw_http_db(const struct sw_http_request *req)
{
	return req->server->db;
}

const struct sw_router *sw_http_router(const struct sw_http_request *req)
{
	return req->server->shared->router;
}

int sw_http_add_header(struct sw_http_request *req, const char *name, struct sw_str value)
{
	for (size_t i = 0; i < value.len; i++)
		if (value.ptr[i] == '\r' || value.ptr[i] == '\n' || value.ptr[i] == '\0')
			return -EINVAL;
	if (strpbrk(name, "\r\n: "))
		return -EINVAL;
	int r = sw_buf_append_str(&req->resp_headers, sw_str_cstr(name));
	r = r ?: sw_buf_append_lit(&req->resp_headers, ": ");
	r = r ?: sw_buf_append_str(&req->resp_headers, value);
	r = r ?: sw_buf_append_lit(&req->resp_headers, "\r\n");
	return r;
}

/* Copies what the handler may read out of the connection's input buffer,
 * which later receives may move. */
static int request_capture_head(struct sw_http_request *req, const struct sw_http_head *h)
{
	struct sw_arena *a = &req->arena;
	char *m = sw_arena_strndup(a, h->method_str.ptr, h->method_str.len);
	char *p = sw_arena_strndup(a, h->path.ptr, h->path.len);
	char *q = sw_arena_strndup(a, h->query.ptr, h->query.len);
	req->headers = sw_arena_alloc(a, sizeof(*req->headers) * (h->header_count ? h->header_count : 1));
	if (!m || !p || !q || !req->headers)
		return -ENOMEM;
	req->method = h->method;
	req->method_str = sw_str_from(m, h->method_str.len);
	req->path = sw_str_from(p, h->path.len);
	req->query = sw_str_from(q, h->query.len);
	size_t total = 0;
	for (unsigned i = 0; i < h->header_count; i++)
		total += h->headers[i].name.len + h->headers[i].value.len;
	char *store = sw_arena_alloc(a, total ? total : 1);
	if (!store)
		return -ENOMEM;
	for (unsigned i = 0; i < h->header_count; i++) {
		const struct sw_http_header *src = &h->headers[i];
		memcpy(store, src->name.ptr, src->name.len);
		req->headers[i].name = sw_str_from(store, src->name.len);
		store += src->name.len;
		memcpy(store, src->value.ptr, src->value.len);
		req->headers[i].value = sw_str_from(store, src->value.len);
		store += src->value.len;
	}
	req->header_count = h->header_count;
	req->keep_alive = h->keep_alive;
	req->head_only = h->method == SW_HTTP_HEAD;
	req->version_minor = h->version_minor;
	return 0;
}

static void refresh_date(struct sw_server *srv)
{
	time_t now = time(NULL);
	if (now == srv->date_sec)
		return;
	srv->date_sec = now;
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(srv->date, sizeof(srv->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* CORS: the request's Origin, when it is one of CORS_ALLOWED_ORIGINS. */
static struct sw_str allowed_origin(const struct sw_http_request *req)
{
	const struct sw_server_shared *sh = req->server->shared;
	if (sh->cors_count == 0)
		return SW_STR_NULL;
	const struct sw_http_header *o = sw_http_request_header(req, SW_STR("Origin"));
	if (!o)
		return SW_STR_NULL;
	for (unsigned i = 0; i < sh->cors_count; i++)
		if (sw_str_eq(o->value, sh->cors[i]))
			return o->value;
	return SW_STR_NULL;
}

static void finish_request_held(struct sw_http_request *req, size_t body_len);

static void finish_request(struct sw_http_request *req, size_t body_len)
{
	struct sw_conn *c = req->conn;
	conn_hold(c);
	finish_request_held(req, body_len);
	conn_release(c);
}

static void finish_request_held(struct sw_http_request *req, size_t body_len)
{
	struct sw_conn *c = req->conn;
	c->state = CONN_HEAD;
	c->req = NULL;
	if (req->server->config->access_log)
		sw_log_access(sw_str_from(req->request_id, req->request_id_len), req->method_str,
			      req->path, req->status, body_len, sw_now_us() - req->start_us);
	request_release_later(req);
	if (c->closing || c->close_after_write) {
		conn_flush(c);
		/* With a write in flight, its completion closes; conn_close() may
		 * free c, so nothing follows it. */
		if (!c->write_active)
			conn_close(c);
		return;
	}
	if (!c->processing)
		conn_process(c);
}

/* How a response's body is delimited. */
enum body_framing {
	FRAME_LENGTH,  /* Content-Length (none for 204) */
	FRAME_CHUNKED, /* a stream: Transfer-Encoding: chunked */
	FRAME_CLOSE,   /* a stream to an HTTP/1.0 client: the end is the close */
};

/* Whether the connection closes after this response. */
static bool response_closes(const struct sw_http_request *req, int status)
{
	return !req->keep_alive || req->server->stopping || req->conn->close_after_write ||
	       status == 400 || status == 408 || status == 413 || status == 414 || status == 431;
}

/* Writes the status line and the headers of req's response. A response
 * framed by length that closes the connection sets close_after_write; a
 * stream says Connection: close and closes at its end instead. */
static void write_head(struct sw_http_request *req, int status, const char *content_type,
		       enum body_framing framing, uint64_t length)
{
	struct sw_conn *c = req->conn;
	struct sw_server *srv = req->server;
	bool close = framing == FRAME_CLOSE || response_closes(req, status);
	refresh_date(srv);
	char line[256];
	int n;
	if (framing != FRAME_LENGTH)
		n = snprintf(line, sizeof(line), "HTTP/1.1 %d %s\r\nDate: %s\r\n%s", status,
			     sw_http_reason(status), srv->date,
			     framing == FRAME_CHUNKED ? "Transfer-Encoding: chunked\r\n" : "");
	else if (status == 204) /* RFC 9110 15.3.5: no Content-Length, no body */
		n = snprintf(line, sizeof(line), "HTTP/1.1 204 No Content\r\nDate: %s\r\n", srv->date);
	else
		n = snprintf(line, sizeof(line), "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Length: %llu\r\n",
			     status, sw_http_reason(status), srv->date, (unsigned long long)length);
	out_bytes(c, line, (size_t)n);
	if (content_type && (framing != FRAME_LENGTH || length || req->head_only)) {
		out_bytes(c, "Content-Type: ", 14);
		out_bytes(c, content_type, strlen(content_type));
		out_bytes(c, "\r\n", 2);
	}
	out_bytes(c, "X-Request-Id: ", 14);
	out_bytes(c, req->request_id, req->request_id_len);
	const char *cache = req->cache_control ? req->cache_control : "no-store";
	out_bytes(c, "\r\nCache-Control: ", 17);
	out_bytes(c, cache, strlen(cache));
	out_bytes(c, "\r\nX-Content-Type-Options: nosniff\r\n", 35);
	struct sw_str origin = allowed_origin(req);
	if (srv->shared->cors_count)
		out_bytes(c, "Vary: Origin\r\n", 14);
	if (origin.len) {
		out_bytes(c, "Access-Control-Allow-Origin: ", 29);
		out_bytes(c, origin.ptr, origin.len);
		out_bytes(c, "\r\nAccess-Control-Allow-Credentials: true\r\n"
			     "Access-Control-Expose-Headers: X-Request-Id\r\n", 88);
	}
	if (req->resp_headers.len)
		out_bytes(c, req->resp_headers.data, req->resp_headers.len);
	if (close) {
		out_bytes(c, "Connection: close\r\n\r\n", 21);
		if (framing == FRAME_LENGTH)
			c->close_after_write = true;
	} else if (req->keep_alive && req->version_minor == 0) {
		out_bytes(c, "Connection: keep-alive\r\n\r\n", 26);
	} else {
		out_bytes(c, "\r\n", 2);
	}
}

/* Takes the answer slot of req: false when it was answered already (a bug)
 * or the client is gone (the request is then finished). */
static bool begin_answer(struct sw_http_request *req, int status)
{
	if (SW_NEVER(req->status != 0))
		return false;
	req->status = status;
	if (!req->request_id_len)
		request_set_id(req);
	if (req->conn->closing) {
		/* The client went away while the handler ran: nothing to send. */
		finish_request(req, 0);
		return false;
	}
	return true;
}

static void respond(struct sw_http_request *req, int status, const char *content_type,
		    struct sw_str body, bool by_reference)
{
	struct sw_conn *c = req->conn;
	if (!begin_answer(req, status))
		return;
	write_head(req, status, content_type, FRAME_LENGTH, status == 204 ? 0 : body.len);
	size_t sent_body = 0;
	if (!req->head_only && body.len) {
		if (by_reference)
			out_static(c, body.ptr, body.len);
		else
			out_bytes(c, body.ptr, body.len);
		sent_body = body.len;
	}
	finish_request(req, sent_body);
}

void sw_http_respond(struct sw_http_request *req, int status, const char *content_type,
		     struct sw_str body)
{
	respond(req, status, content_type, body, false);
}

void sw_http_respond_static(struct sw_http_request *req, int status, const char *content_type,
			    struct sw_str body)
{
	respond(req, status, content_type, body, true);
}

/* ---- streamed bodies ---- */

static void noop_release(struct sw_http_ref *ref)
{
	(void)ref;
}

/* Heartbeats and other literals are sent by reference with nothing to release. */
static struct sw_http_ref static_ref = { noop_release };

/* Bytes a stream copied: released with the piece. */
struct owned_bytes {
	struct sw_http_ref ref;
	char data[];
};

static void owned_release(struct sw_http_ref *ref)
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
	c->stream = NULL;
	free(s);
	finish_request(req, (size_t)bytes);
}

/* The body is complete: the last chunk, then the request is done. */
static void stream_finish(struct sw_conn *c, struct sw_http_stream *s)
{
	if (s->chunked)
		out_static(c, "0\r\n\r\n", 5);
	if (s->close_at_end || c->srv->stopping)
		c->close_after_write = true;
	stream_done(c, s);
}

/* Moves queued pieces into the output generation while it has room; a
 * batch is one HTTP chunk. Ends the stream once the owner ended it and
 * nothing is queued. */
static void stream_pump(struct sw_conn *c)
{
	struct sw_http_stream *s = c->stream;
	if (!s || s->failed)
		return;
	struct outgen *g = acc(c);
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
			out_bytes(c, line, (size_t)n);
		}
		for (unsigned i = 0; i < k; i++) {
			struct stream_piece *e = &s->q[s->qhead];
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qlen--;
			out_ref(c, e->p, e->n, e->ref);
		}
		if (s->chunked)
			out_bytes(c, "\r\n", 2);
		s->qbytes -= total;
		s->body_bytes += total;
	}
	if (s->ended && s->qlen == 0)
		stream_finish(c, s);
}

/* Stops all I/O on c at once: a reader too slow or stalled. What is queued
 * is dropped; a write in flight completes (with an error) and releases its
 * pieces then. */
static void conn_abort(struct sw_conn *c)
{
	gen_reset(acc(c));
	if (!c->write_active)
		gen_reset(&c->gen[c->wi]);
	c->closing = true;
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	if (c->recv_active)
		sw_io_cancel(c->srv->loop, &c->recv_op);
	if (c->write_active)
		sw_io_cancel(c->srv->loop, &c->write_op);
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
		conn_abort(s->conn);
	sw_timer_start(s->conn->srv->loop, &s->timer, 0, stream_timer);
}

static void stream_timer_held(struct sw_conn *c, struct sw_http_stream *s);

static void stream_timer(struct sw_timer *t)
{
	struct sw_http_stream *s = SW_CONTAINER_OF(t, struct sw_http_stream, timer);
	struct sw_conn *c = s->conn;
	conn_hold(c);
	stream_timer_held(c, s);
	conn_release(c);
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
				out_static(c, "0\r\n\r\n", 5);
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

struct sw_http_stream *sw_http_stream_begin(struct sw_http_request *req, int status,
					    const char *content_type,
					    const struct sw_http_stream_ops *ops, void *arg)
{
	struct sw_conn *c = req->conn;
	if (!begin_answer(req, status))
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
	write_head(req, status, content_type, chunked ? FRAME_CHUNKED : FRAME_CLOSE, 0);
	sw_buf_release(&req->resp_headers); /* written: a long stream keeps nothing it needs no more */
	if (!s) {
		/* HEAD: the head is the whole answer. */
		if (!chunked || response_closes(req, status))
			c->close_after_write = true;
		finish_request(req, 0);
		return NULL;
	}
	s->conn = c;
	s->req = req;
	s->ops = ops;
	s->arg = arg;
	s->chunked = chunked;
	s->close_at_end = !chunked || response_closes(req, status);
	s->last_ms = sw_loop_now_ms(req->loop);
	c->stream = s;
	if (c->in.len == 0)
		sw_buf_release(&c->in); /* a long-lived stream keeps no input buffer */
	if (ops->heartbeat_ms)
		sw_timer_start(req->loop, &s->timer, ops->heartbeat_ms, stream_timer);
	conn_hold(c);
	conn_flush(c);
	conn_release(c);
	return s;
}

int sw_http_stream_write(struct sw_http_stream *s, const void *p, size_t n, struct sw_http_ref *ref)
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
	conn_hold(c);
	stream_pump(c);
	conn_flush(c);
	conn_release(c);
	return 0;
}

size_t sw_http_stream_queued(const struct sw_http_stream *s)
{
	return s->qbytes + out_pending(s->conn);
}

void sw_http_stream_end(struct sw_http_stream *s)
{
	if (s->in_closed || s->ended)
		return;
	s->ended = true;
	struct sw_conn *c = s->conn;
	conn_hold(c);
	if (s->failed) {
		/* The deferred closed will not run: finish now. */
		stream_done(c, s);
	} else {
		stream_pump(c); /* ends it once nothing is queued */
		conn_flush(c);
	}
	conn_release(c);
}

void sw_http_stream_abort(struct sw_http_stream *s)
{
	if (s->in_closed || s->ended)
		return;
	s->ended = true;
	struct sw_conn *c = s->conn;
	conn_hold(c);
	if (s->failed)
		stream_done(c, s);
	else
		stream_fail(s, -ECONNABORTED, true); /* its timer finishes the request */
	conn_release(c);
}

/* ---- file bodies ---- */

/* Test hook (http/internal.h): the sendfile path even where splice works. */
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
	struct file_body *fb = c->file;
	c->file = NULL;
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
	finish_request(c->req, (size_t)sent);
}

static void file_submit(struct sw_conn *c, int r)
{
	if (r == 0)
		c->file->active = true;
	else
		file_done(c, false);
}

static void splice_in(struct sw_conn *c)
{
	struct file_body *fb = c->file;
	fb->step = FILE_IN;
	fb->op.cb = file_op_done;
	unsigned n = (unsigned)SW_MIN(fb->left, (uint64_t)fb->pipe_cap);
	file_submit(c, sw_io_splice(c->srv->loop, &fb->op, fb->fd, (int64_t)fb->off, fb->pipe_w, -1, n));
}

static void splice_out(struct sw_conn *c)
{
	struct file_body *fb = c->file;
	fb->step = FILE_OUT;
	fb->op.cb = file_op_done;
	file_submit(c, sw_io_splice(c->srv->loop, &fb->op, fb->pipe_r, -1, c->fd, -1, (unsigned)fb->in_pipe));
}

static void poll_out(struct sw_conn *c)
{
	struct file_body *fb = c->file;
	fb->step = FILE_POLL;
	fb->op.cb = file_op_done;
	file_submit(c, sw_io_poll(c->srv->loop, &fb->op, c->fd, POLLOUT));
}

static void file_retry_timer(struct sw_timer *t)
{
	struct file_body *fb = SW_CONTAINER_OF(t, struct file_body, retry);
	struct sw_conn *c = fb->conn;
	conn_hold(c);
	if (c->closing)
		file_done(c, false);
	else if (fb->step == FILE_RETRY)
		file_worker_submit(c);
	conn_release(c);
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
	conn_hold(c);
	fb->active = false;
	if (fb->sent)
		conn_arm_timer(c, c->srv->config->idle_timeout_ms); /* progress */
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
	conn_release(c);
}

static void file_worker_submit(struct sw_conn *c)
{
	struct file_body *fb = c->file;
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
	struct file_body *fb = c->file;
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
	conn_hold(c);
	fb->active = false;
	file_op_done_held(c, res);
	conn_release(c);
}

static void file_op_done_held(struct sw_conn *c, int res)
{
	struct file_body *fb = c->file;
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
			conn_arm_timer(c, c->srv->config->idle_timeout_ms); /* progress */
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
	struct file_body *fb = c->file;
	if (!fb || fb->step != FILE_WAIT || c->write_active || out_pending(c))
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
	struct file_body *fb = c->file;
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

void sw_http_respond_file(struct sw_http_request *req, int status, const char *content_type,
			  int fd, uint64_t off, uint64_t len)
{
	struct sw_conn *c = req->conn;
	if (!begin_answer(req, status)) {
		close(fd);
		return;
	}
	write_head(req, status, content_type, FRAME_LENGTH, len);
	struct file_body *fb = NULL;
	if (!req->head_only && len)
		fb = calloc(1, sizeof(*fb));
	if (!fb) {
		close(fd);
		if (!req->head_only && len)
			c->close_after_write = true; /* out of memory: the body cannot follow */
		finish_request(req, 0);
		return;
	}
	fb->conn = c;
	fb->fd = fd;
	fb->off = off;
	fb->left = len;
	fb->pipe_r = fb->pipe_w = -1;
	fb->step = FILE_WAIT;
	c->file = fb;
	if (c->in.len == 0)
		sw_buf_release(&c->in);
	/* A client that stops reading for this long loses the connection. */
	conn_arm_timer(c, c->srv->config->idle_timeout_ms);
	conn_hold(c);
	conn_flush(c);
	file_maybe_start(c);
	conn_release(c);
}

void sw_http_json_begin(struct sw_http_request *req, struct sw_buf *buf, struct sw_json *j)
{
	(void)req;
	buf->len = 0;
	sw_json_init(j, buf);
	sw_json_object_begin(j);
	sw_json_key(j, "data");
}

void sw_http_json_end(struct sw_http_request *req, int status, struct sw_buf *buf,
		      struct sw_json *j)
{
	sw_json_object_end(j);
	if (sw_json_finish(j) < 0) {
		sw_log_error("response JSON could not be built for %.*s", (int)req->path.len, req->path.ptr);
		sw_buf_release(buf);
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server could not build the response.");
		return;
	}
	sw_http_respond(req, status, "application/json", sw_str_from(buf->data, buf->len));
	sw_buf_release(buf);
}

static void error_envelope(struct sw_http_request *req, int status, const char *code,
			   const char *message, const struct sw_field_errors *fe)
{
	if (!req->request_id_len)
		request_set_id(req);
	struct sw_buf b = { 0 };
	struct sw_json j;
	sw_json_init(&j, &b);
	sw_json_object_begin(&j);
	sw_json_key(&j, "error");
	sw_json_object_begin(&j);
	sw_json_key(&j, "code");
	sw_json_cstr(&j, code);
	sw_json_key(&j, "message");
	sw_json_cstr(&j, message);
	sw_json_key(&j, "requestId");
	sw_json_string(&j, sw_str_from(req->request_id, req->request_id_len));
	if (fe) {
		sw_json_key(&j, "fields");
		/* fe->buf holds members rendered by sw_field_error() with
		 * sw_json_append_escaped(); close the last array and object. */
		struct sw_buf inner = { 0 };
		int r = sw_buf_append_lit(&inner, "{");
		r = r ?: sw_buf_append(&inner, fe->buf.data, fe->buf.len);
		r = r ?: (fe->count ? sw_buf_append_lit(&inner, "]}") : sw_buf_append_lit(&inner, "}"));
		if (r < 0)
			j.err = r;
		sw_json_raw(&j, sw_str_from(inner.data, inner.len));
		sw_buf_release(&inner);
	}
	sw_json_object_end(&j);
	sw_json_object_end(&j);
	if (sw_json_finish(&j) < 0) {
		sw_buf_release(&b);
		static const char oom[] = "{\"error\":{\"code\":\"INTERNAL_ERROR\",\"message\":\"Out of memory.\"}}";
		respond(req, 500, "application/json", SW_STR(oom), true);
		return;
	}
	respond(req, status, "application/json", sw_str_from(b.data, b.len), false);
	sw_buf_release(&b);
}

void sw_http_error(struct sw_http_request *req, int status, const char *code, const char *message)
{
	error_envelope(req, status, code, message, NULL);
}

void sw_field_error(struct sw_field_errors *fe, const char *field, const char *message)
{
	int r = 0;
	if (fe->last_field && strcmp(fe->last_field, field) == 0) {
		r = sw_buf_append_lit(&fe->buf, ",");
	} else {
		if (fe->count)
			r = sw_buf_append_lit(&fe->buf, "],");
		r = r ?: sw_json_append_escaped(&fe->buf, sw_str_cstr(field));
		r = r ?: sw_buf_append_lit(&fe->buf, ":[");
		fe->last_field = field;
	}
	r = r ?: sw_json_append_escaped(&fe->buf, sw_str_cstr(message));
	(void)r; /* on -ENOMEM the envelope reports an internal error */
	fe->count++;
}

void sw_http_validation_error(struct sw_http_request *req, struct sw_field_errors *fe)
{
	error_envelope(req, 422, "VALIDATION_FAILED", "The request has invalid fields.", fe);
	sw_buf_release(&fe->buf);
	fe->count = 0;
	fe->last_field = NULL;
}

json_t *sw_http_json_body(struct sw_http_request *req)
{
	const struct sw_http_header *ct = sw_http_request_header(req, SW_STR("Content-Type"));
	struct sw_str media = ct ? ct->value : SW_STR_NULL;
	for (size_t i = 0; i < media.len; i++)
		if (media.ptr[i] == ';' || media.ptr[i] == ' ') {
			media.len = i;
			break;
		}
	if (!sw_str_case_eq(media, SW_STR("application/json"))) {
		sw_http_error(req, 415, "UNSUPPORTED_MEDIA_TYPE",
			      "The request body must be JSON with Content-Type: application/json.");
		return NULL;
	}
	char err[160];
	json_t *v = sw_json_parse_object(req->body, err, sizeof(err));
	if (!v)
		sw_http_error(req, 400, "INVALID_JSON", err);
	return v;
}

/* ---- the connection state machine ---- */

/* Answers the connection's current request (or a new one, when the head
 * never completed) with an error, discards unread input, and closes the
 * connection after the response: what follows cannot be trusted. */
static void conn_refuse(struct sw_conn *c, int status, const char *code, const char *message)
{
	struct sw_http_request *req = c->req ? c->req : request_new(c);
	if (!req) {
		conn_close(c);
		return;
	}
	req->state = NULL; /* a chunked decoder in the arena is done with */
	c->req = req;
	c->state = CONN_HANDLER;
	c->close_after_write = true;
	sw_buf_consume(&c->in, c->in.len);
	sw_http_error(req, status, code, message);
}

/* Every way into a connection's code (a completion, its timer, a handler's
 * answer) holds it for the duration, so nothing called from there can free
 * it under the caller's feet; the last release frees a closed connection. */
static void conn_hold(struct sw_conn *c)
{
	c->holds++;
}

static void conn_release(struct sw_conn *c)
{
	if (--c->holds == 0)
		conn_maybe_free(c);
}

static void conn_timeout_held(struct sw_conn *c);

static void conn_timeout(struct sw_timer *t)
{
	struct sw_conn *c = SW_CONTAINER_OF(t, struct sw_conn, timer);
	conn_hold(c);
	conn_timeout_held(c);
	conn_release(c);
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
		conn_maybe_free(c);
		return;
	}
	if (c->file) {
		/* The client took nothing of the file for the idle timeout. */
		conn_close(c);
		return;
	}
	if (c->state == CONN_HANDLER)
		return; /* the handler's own deadlines bound it (a stream: its heartbeat) */
	if (c->write_active) {
		/* The client reads nothing of what we send. */
		conn_close(c);
		return;
	}
	if ((c->state == CONN_HEAD && c->in.len > 0) || c->state == CONN_BODY) {
		conn_refuse(c, 408, "REQUEST_TIMEOUT",
			    c->state == CONN_BODY ? "The request body stalled." :
						    "The request head was not received in time.");
		conn_flush(c);
		return;
	}
	conn_close(c); /* idle keep-alive */
}

static void conn_arm_timer(struct sw_conn *c, unsigned ms)
{
	sw_timer_start(c->srv->loop, &c->timer, ms, conn_timeout);
}

static void dispatch(struct sw_conn *c);

/* Decides what to do once a head is complete. */
static void start_request(struct sw_conn *c, const struct sw_http_head *h, size_t head_len)
{
	struct sw_server *srv = c->srv;
	struct sw_http_request *req = request_new(c);
	if (!req || request_capture_head(req, h) < 0) {
		if (req)
			request_free(req);
		conn_close(c);
		return;
	}
	c->req = req;
	c->head_len = head_len;
	c->head_started = false;
	request_set_id(req);

	unsigned allowed = 0;
	enum sw_route_match m = SW_ROUTE_NOT_FOUND;
	if (h->method == SW_HTTP_OPTIONS)
		allowed = sw_router_allowed(srv->shared->router, req->path);
	else
		m = sw_router_match(srv->shared->router, h->method, req->path, &req->route,
				    &req->params, &allowed);
	bool has_body = h->body_kind == SW_HTTP_BODY_CHUNKED ||
			(h->body_kind == SW_HTTP_BODY_LENGTH && h->content_length > 0);
	size_t max_body = (m == SW_ROUTE_FOUND) ? req->route->max_body : 0;

	if (has_body && (m != SW_ROUTE_FOUND || h->content_length > max_body)) {
		/* Unknown path, wrong method, or too large: answer without
		 * reading the body, and close (the body is never read). */
		c->state = CONN_HANDLER;
		c->close_after_write = true;
		sw_buf_consume(&c->in, head_len);
		if (m == SW_ROUTE_FOUND) {
			sw_http_error(req, 413, "PAYLOAD_TOO_LARGE",
				      max_body ? "The request body is larger than this route accepts." :
						 "This route accepts no request body.");
		} else {
			req->route = NULL;
			dispatch(c);
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
				conn_close(c);
				return;
			}
			sw_http_chunked_init(ch, max_body);
			req->state = ch; /* the handler's state slot is free until dispatch */
		}
		if (h->expect_continue && c->in.len == head_len) {
			static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
			out_bytes(c, cont, sizeof(cont) - 1);
			conn_flush(c);
		}
		conn_arm_timer(c, srv->config->body_timeout_ms);
		return;
	}
	sw_buf_consume(&c->in, head_len);
	c->state = CONN_HANDLER;
	if (h->method == SW_HTTP_OPTIONS)
		req->route = NULL;
	dispatch(c);
}

/* Routes a complete request: OPTIONS, 404, 405, the guard, the handler. */
static void dispatch(struct sw_conn *c)
{
	struct sw_http_request *req = c->req;
	struct sw_server *srv = c->srv;
	if (req->method == SW_HTTP_OPTIONS) {
		unsigned allowed = sw_router_allowed(srv->shared->router, req->path);
		if (!allowed) {
			sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
			return;
		}
		struct sw_buf allow = { 0 };
		sw_http_append_allow(&allow, allowed);
		sw_http_add_header(req, "Allow", sw_str_from(allow.data, allow.len));
		if (allowed_origin(req).len &&
		    sw_http_request_header(req, SW_STR("Access-Control-Request-Method"))) {
			sw_http_add_header(req, "Access-Control-Allow-Methods", sw_str_from(allow.data, allow.len));
			sw_http_add_header(req, "Access-Control-Allow-Headers",
					   SW_STR("Content-Type, Authorization, X-Request-Id"));
			sw_http_add_header(req, "Access-Control-Max-Age", SW_STR("600"));
		}
		sw_buf_release(&allow);
		sw_http_respond(req, 204, NULL, SW_STR_NULL);
		return;
	}
	if (!req->route) {
		unsigned allowed = sw_router_allowed(srv->shared->router, req->path);
		if (!allowed) {
			sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
			return;
		}
		struct sw_buf allow = { 0 };
		sw_http_append_allow(&allow, allowed);
		sw_http_add_header(req, "Allow", sw_str_from(allow.data, allow.len));
		sw_buf_release(&allow);
		sw_http_error(req, 405, "METHOD_NOT_ALLOWED", "The resource does not support this method.");
		return;
	}
	/* Every route passes the guard; it admits public ones at once. */
	srv->shared->guard(req);
}

void sw_http_run_handler(struct sw_http_request *req)
{
	/* An API route that documents no query parameters takes none: a
	 * misspelt filter or page size must not be silently ignored (query.h).
	 * Public routes (health checks, the document) ignore a query string, as
	 * load balancers and caches add their own. */
	if (!req->route->doc.query && req->route->access != SW_ACCESS_PUBLIC && req->query.len) {
		static const char *const none[] = { NULL };
		const char *unused[1];
		struct sw_field_errors fe = { 0 };
		if (!sw_query_read(&req->arena, req->query, none, unused, &fe)) {
			sw_http_validation_error(req, &fe);
			return;
		}
	}
	req->route->handler(req);
}

const char *sw_http_peer_address(const struct sw_http_request *req)
{
	return req->conn->peer;
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
			conn_close(c);
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
		conn_close(c);
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
	c->processing = true;
	while (!c->closing && !c->close_after_write) {
		if (out_pending(c) > SW_HTTP_MAX_PENDING_OUTPUT)
			break; /* resumed by write_done() */
		if (c->state == CONN_HANDLER)
			break;
		if (c->state == CONN_HEAD) {
			if (c->in.len == 0) {
				if (srv->stopping) {
					conn_flush(c);
					c->close_after_write = true;
					if (!c->write_active)
						conn_close(c);
					break;
				}
				if (c->in.cap > IDLE_BUF_KEEP)
					sw_buf_release(&c->in);
				c->head_started = false;
				conn_arm_timer(c, srv->config->idle_timeout_ms);
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
					conn_arm_timer(c, srv->config->header_timeout_ms);
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
			dispatch(c);
			continue;
		}
		break;
	}
	c->processing = false;
	conn_flush(c);
}

static void recv_done_held(struct sw_conn *c, int res, uint32_t flags);

static void recv_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_conn *c = SW_CONTAINER_OF(op, struct sw_conn, recv_op);
	conn_hold(c);
	recv_done_held(c, res, flags);
	conn_release(c);
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
			if (r < 0 || ((c->stream || c->file) && c->in.len > STREAMING_INPUT_MAX)) {
				conn_close(c);
				return;
			}
			if (c->state == CONN_BODY)
				conn_arm_timer(c, srv->config->body_timeout_ms);
			if (!c->processing)
				conn_process(c);
		}
	} else if (res == 0) {
		/* The client closed its side. */
		c->closing = true;
		if (c->recv_active)
			sw_io_cancel(srv->loop, &c->recv_op);
		conn_maybe_free(c);
		return;
	} else if (res != -ENOBUFS) {
		if (res != -ECANCELED)
			c->closing = true;
		conn_maybe_free(c); /* may free c */
		return;
	} else if (flags & SW_IO_BUFFER) {
		sw_loop_buffer_recycle(srv->loop, flags);
	}
	if (!c->recv_active && !c->closing) {
		/* Multishot ended (-ENOBUFS, or the kernel's choice): re-arm. */
		c->recv_op.cb = recv_done;
		if (sw_io_recv_multishot(srv->loop, &c->recv_op, c->fd) == 0)
			c->recv_active = true;
		else
			conn_close(c);
	} else if (c->closing) {
		conn_maybe_free(c);
	}
}

/* Stops taking requests on c. With output still to write, writes it
 * first; then shuts down our side and lingers (see the top comment). */
static void conn_close(struct sw_conn *c)
{
	if (c->stream || c->file) {
		/* A body in progress cannot be completed: stop all I/O; the
		 * stream's closed callback or the file's last completion
		 * finishes the request, then the connection is freed. */
		if (!c->closing) {
			c->closing = true;
			if (c->fd >= 0)
				shutdown(c->fd, SHUT_RDWR);
			if (c->recv_active)
				sw_io_cancel(c->srv->loop, &c->recv_op);
		}
		conn_maybe_free(c);
		return;
	}
	if (c->write_active || out_pending(c)) {
		c->close_after_write = true;
		conn_flush(c);
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
		conn_arm_timer(c, LINGER_MS);
		return;
	}
	if (c->recv_active)
		sw_io_cancel(c->srv->loop, &c->recv_op);
	conn_maybe_free(c);
}

static void conn_maybe_free(struct sw_conn *c)
{
	/* Never while an entry point still uses c: conn_release() frees then. */
	if (!c->closing || c->holds)
		return;
	/* A body in progress ends asynchronously, then finishes its request. */
	if (c->stream && !c->stream->failed)
		stream_fail(c->stream, -EPIPE, false);
	if (c->file)
		file_cancel(c);
	if (c->req && c->state != CONN_HANDLER) {
		/* Mid-head or mid-body: no handler holds it, nobody will answer. */
		request_free(c->req);
		c->req = NULL;
	}
	if (c->recv_active || c->write_active || c->req)
		return;
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
	sw_buf_release(&c->gen[0].buf);
	sw_buf_release(&c->gen[1].buf);
	free(c);
	if (srv->stopping)
		server_check_done(srv);
}

/* ---- accepting ---- */

static void accept_arm(struct sw_server *srv);

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

static void accept_retry(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, accept_retry);
	if (!srv->stopping && !srv->accept_active)
		accept_arm(srv);
}

#define BUSY_BODY \
	"{\"error\":{\"code\":\"SERVICE_UNAVAILABLE\",\"message\":\"The server is at its connection limit.\",\"requestId\":\"-\"}}"

static void refuse_connection(struct sw_server *srv, int fd)
{
	char rid[40];
	int ridlen = snprintf(rid, sizeof(rid), "%08x-%x-%llx", rid_prefix, sw_loop_index(srv->loop),
			      (unsigned long long)++srv->seq);
	struct sw_buf body = { 0 };
	struct sw_json j;
	sw_json_init(&j, &body);
	sw_json_object_begin(&j);
	sw_json_key(&j, "error");
	sw_json_object_begin(&j);
	sw_json_key(&j, "code");
	sw_json_cstr(&j, "SERVICE_UNAVAILABLE");
	sw_json_key(&j, "message");
	sw_json_cstr(&j, "The server is at its connection limit; try again shortly.");
	sw_json_key(&j, "requestId");
	sw_json_string(&j, sw_str_from(rid, (size_t)ridlen));
	sw_json_object_end(&j);
	sw_json_object_end(&j);
	refresh_date(srv);
	char msg[768];
	int n = -1;
	if (sw_json_finish(&j) == 0)
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
		sw_log_access(sw_str_from(rid, (size_t)ridlen), SW_STR("-"), SW_STR("-"), 503,
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
		} else {
			struct sw_conn *c = calloc(1, sizeof(*c));
			if (!c) {
				__atomic_fetch_sub(&srv->shared->connections, 1, __ATOMIC_RELAXED);
				close(fd);
			} else {
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
				conn_arm_timer(c, srv->config->header_timeout_ms);
				if (!c->recv_active) {
					c->closing = true;
					conn_maybe_free(c);
				}
			}
		}
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOMEM || res == -ENOBUFS) {
		sw_log_warn("accept failed on loop %u: %s; retrying", sw_loop_index(srv->loop), strerror(-res));
		if (!srv->accept_active && !srv->stopping) {
			sw_timer_start(srv->loop, &srv->accept_retry, 100, accept_retry);
			return;
		}
	} else if (res == -ECANCELED || srv->stopping) {
		if (!srv->accept_active)
			server_check_done(srv);
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

/* ---- shutdown ---- */

static void db_closed(void *arg)
{
	struct sw_server *srv = arg;
	srv->db = NULL;
	sw_loop_stop(srv->loop);
}

static void server_check_done(struct sw_server *srv)
{
	if (!srv->stopping || srv->nconns || srv->accept_active || srv->db_closing)
		return;
	srv->db_closing = true;
	sw_timer_stop(srv->loop, &srv->shutdown_timer);
	if (srv->listen_fd >= 0) {
		sw_io_close(srv->loop, srv->listen_fd);
		srv->listen_fd = -1;
	}
	if (srv->db)
		sw_db_pool_close(srv->db, db_closed, srv);
	else
		sw_loop_stop(srv->loop);
}

static void shutdown_deadline(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, shutdown_timer);
	sw_log_warn("shutdown deadline reached on loop %u with %u connections open; closing them",
		    sw_loop_index(srv->loop), srv->nconns);
	for (struct sw_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		gen_reset(acc(c));
		if (!c->write_active) /* else its completion releases it */
			gen_reset(&c->gen[c->wi]);
		c->closing = true;
		if (c->recv_active)
			sw_io_cancel(srv->loop, &c->recv_op);
		if (c->write_active)
			sw_io_cancel(srv->loop, &c->write_op);
		shutdown(c->fd, SHUT_RDWR);
		conn_maybe_free(c);
	}
}

static void begin_shutdown(void *arg)
{
	struct sw_server *srv = arg;
	if (srv->stopping)
		return;
	srv->stopping = true;
	sw_timer_stop(srv->loop, &srv->accept_retry);
	if (sw_timer_armed(&srv->ready_timer))
		ready_check(&srv->ready_timer); /* report, so main is not left waiting */
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
	 * streams end now (cleanly: the client resumes elsewhere). */
	for (struct sw_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		if (c->stream)
			stream_fail(c->stream, -ESHUTDOWN, false);
		else if (c->state == CONN_HEAD && c->in.len == 0 && !c->write_active && !out_pending(c))
			conn_close(c);
	}
	sw_timer_start(srv->loop, &srv->shutdown_timer, srv->config->shutdown_timeout_ms,
		       shutdown_deadline);
	server_check_done(srv);
}

/* A thread accepts connections and reports ready once its pool has a
 * connection, so that /health right after start-up means what it says on
 * every thread; a database that is down does not keep the server from
 * starting (it accepts and reports ready after a bound, then answers 503
 * DATABASE_UNAVAILABLE where a query is needed). */
#define READY_WAIT_MS 3000

static void ready_check(struct sw_timer *t)
{
	struct sw_server *srv = SW_CONTAINER_OF(t, struct sw_server, ready_timer);
	const char *reason;
	if (!sw_db_pool_healthy(srv->db, &reason) && sw_loop_now_ms(srv->loop) < srv->ready_deadline &&
	    !srv->stopping) {
		sw_timer_start(srv->loop, &srv->ready_timer, 5, ready_check);
		return;
	}
	sw_timer_stop(srv->loop, &srv->ready_timer);
	/* Only now does this thread take connections: the kernel holds the
	 * ones its listener gets meanwhile in the backlog, so no request is
	 * answered 503 by a thread whose pool is still connecting while
	 * another thread's /health already says ok. */
	if (!srv->stopping && !srv->accept_active)
		accept_arm(srv);
	if (srv->shared->ready)
		srv->shared->ready(srv->shared, sw_loop_index(srv->loop));
}

void sw_server_request_shutdown(unsigned index)
{
	pthread_mutex_lock(&loops_lock);
	struct sw_loop *loop = loops[index];
	if (loop)
		sw_loop_post(loop, begin_shutdown, sw_loop_data(loop));
	pthread_mutex_unlock(&loops_lock);
}

int sw_server_run_thread(struct sw_server_shared *shared, unsigned index)
{
	if (index >= MAX_LOOPS)
		return -EINVAL;
	pthread_once(&rid_once, rid_init);
	struct sw_server *srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->shared = shared;
	srv->config = shared->config;
	srv->listen_fd = -1;
	int r = 0;
	srv->loop = sw_loop_new(index, 1024, 512, 4096);
	if (!srv->loop) {
		r = -errno;
		goto out_free;
	}
	sw_loop_set_data(srv->loop, srv);
	r = sw_server_listen(srv->config, &srv->listen_fd);
	if (r < 0) {
		sw_log_error("cannot listen on %s: %s", srv->config->listen_str, strerror(-r));
		goto out_loop;
	}
	srv->db = sw_db_pool_new(srv->loop, shared->conninfo, srv->config->db_pool_size,
				 srv->config->db_query_timeout_ms);
	if (!srv->db) {
		r = -ENOMEM;
		goto out_listen;
	}
	if (shared->pool_created)
		shared->pool_created(srv->db);
	pthread_mutex_lock(&loops_lock);
	loops[index] = srv->loop;
	pthread_mutex_unlock(&loops_lock);
	srv->ready_deadline = sw_loop_now_ms(srv->loop) + READY_WAIT_MS;
	sw_timer_start(srv->loop, &srv->ready_timer, 0, ready_check);
	r = sw_loop_run(srv->loop);
	pthread_mutex_lock(&loops_lock);
	loops[index] = NULL;
	pthread_mutex_unlock(&loops_lock);
	goto out_loop;

out_listen:
	close(srv->listen_fd);
out_loop:
	reap_answered(&srv->reap_timer);
	while (srv->free_reqs) {
		struct sw_http_request *req = srv->free_reqs;
		srv->free_reqs = req->next_free;
		sw_buf_release(&req->resp_headers);
		free(req);
	}
	sw_loop_free(srv->loop);
out_free:
	free(srv);
	return r;
}
