/* The HTTP server's engine, shared by the files of src/http only: the
 * connection, the server of one loop, the output generations, and the
 * producer interface through which a response body that is not in memory
 * is written.
 *
 * The files and what each calls (downward only; upward goes through a
 * pointer):
 *   out.c            output generations: bytes, references, pieces (data only)
 *   request.c        request objects, ids, the accessors of http.h
 *   conn.c           the connection state machine: receive, parse, write,
 *                    timers, close, free. It hands a complete request to
 *                    srv->dispatch and an error answer to srv->error, and
 *                    a body in progress to c->producer: it knows nothing of
 *                    routes, envelopes, streams or files.
 *   write.c          response heads and in-memory bodies (the buffer producer)
 *   response.c       the JSON envelopes and field errors
 *   dispatch.c       OPTIONS, 404, 405, the guard, the handler
 *   stream.c         the streamed (SSE) producer
 *   file_response.c  the file producer (splice, sendfile)
 *   listener.c       accepting, the server's life, its shutdown
 *
 * Producers (the generators of h2o). A body that is not written in one
 * go attaches a producer to the connection (sw_conn_attach()) after its
 * head is queued; the request stays open (CONN_HANDLER, later pipelined
 * requests wait) until the producer finishes it with
 * sw_conn_request_done(). The state machine calls the producer's ops at
 * the points where the body's life meets the connection's: a write
 * completed (written), the connection is going away (cancel), the server
 * is stopping (shutdown), the connection's timer fired (timeout), bytes
 * arrived (input).
 *
 * A protocol that takes the connection over after "101 Switching
 * Protocols" (the agents' WebSocket) is one more producer, without a
 * change to conn.c (tests/unit/test_hub.c has one that echoes):
 * - its handler takes the answer (sw_http_begin_answer(req, 101)), queues
 *   the 101 head itself (sw_conn_out_bytes(): the head has no framing of
 *   write.c's), attaches its producer, and reads the bytes that came with
 *   the request, already in c->in;
 * - input: the client's frames arrive in c->in; the producer consumes
 *   them (sw_buf_consume()) and bounds them itself (the WebSocket message
 *   cap): STREAMING_INPUT_MAX does not apply to a producer with input;
 * - written: the last write completed: queue the next frames
 *   (sw_conn_out_*()) and sw_conn_flush(); timeout: ping (the producer
 *   arms the timer with sw_conn_arm_timer());
 * - cancel: the connection is going away: finish from a timer;
 * - once attached, it may call sw_conn_upgraded() (upgrade.c does): that
 *   logs the request (101) and releases it: a long-lived session keeps no request object (state CONN_UPGRADED,
 *   c->req NULL), and its output state is given back whenever everything
 *   queued is written (sw_conn_out_idle());
 * - the session ends with sw_conn_detach(), close_after_write (an upgraded
 *   connection never returns to HTTP) and sw_conn_upgraded_done() (or
 *   sw_conn_request_done() when it kept its request, as tests/unit/test_hub.c's
 *   echo does).
 * Until it detaches, the state machine parses nothing of c->in. */
#ifndef STEWARD_HTTP_CONN_H
#define STEWARD_HTTP_CONN_H

#include <sys/uio.h>
#include <time.h>
#include "steward/http/http.h"
#include "steward/io/io.h"
#include "http/http_internal.h"

#define OUT_MAX_PIECES 16
/* Input a client may pipeline while a producer sends a body; past it
 * the connection is closed (a stream can last hours). */
#define STREAMING_INPUT_MAX (64 * 1024)

/* Invariant checks of the state machine (SW_ASSERT: Debug and sanitizer
 * builds only). */
#define CONN_CHECK(c) \
	SW_ASSERT((c)->holds < 1000 && (!(c)->write_active || (c)->fd >= 0) && \
		  ((c)->state != CONN_HANDLER || (c)->req) && (!(c)->producer || (c)->body))

struct piece {
	const char *ptr; /* NULL: bytes [off, off+len) of the generation's buffer */
	size_t off;
	size_t len;
	struct sw_ref *ref; /* released once the piece is written or dropped */
};

/* Output in two generations: gen[wi] is being written with writev, the
 * other accumulates. */
struct outgen {
	struct sw_buf buf;
	struct piece pieces[OUT_MAX_PIECES];
	unsigned npieces;
	size_t bytes;
};

/* A connection's output state, taken when output is first queued and given
 * back once it is all written and the connection idles (sw_conn_out_idle()):
 * an idle keep-alive connection holds only its struct sw_conn. The server
 * keeps up to OUT_FREE_MAX of them, buffers included, for the next
 * request of any connection. */
struct conn_out {
	struct outgen gen[2]; /* gen[wi] is being written */
	unsigned wi;
	struct iovec iov[OUT_MAX_PIECES];
	struct conn_out *next_free;
};
#define OUT_FREE_MAX 64

/* CONN_UPGRADED: taken over after 101 by a producer (upgrade.c); the
 * request is answered and released, the connection never returns to HTTP. */
enum conn_state { CONN_HEAD, CONN_BODY, CONN_HANDLER, CONN_LINGER, CONN_UPGRADED };

struct sw_conn;

/* A body producer: see the top comment. */
struct sw_http_producer {
	/* A write completed and what it took is released: queue more output
	 * and flush. false when the producer finished its request inside the
	 * call: the state machine then goes on as after any response. */
	bool (*written)(struct sw_conn *c);
	/* The connection is going away: stop, and finish the request later
	 * (a completion, a timer), never inside this call. May run again. */
	void (*cancel)(struct sw_conn *c);
	/* Optional: the server is stopping. */
	void (*shutdown)(struct sw_conn *c);
	/* Optional: the connection's timer fired; NULL ignores it. */
	void (*timeout)(struct sw_conn *c);
	/* Optional: bytes arrived in c->in. NULL: they wait there (pipelined
	 * requests), at most STREAMING_INPUT_MAX. */
	void (*input)(struct sw_conn *c);
};

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
	bool processing;      /* inside the state machine's loop */
	unsigned holds;       /* entry points on the stack; freed only at 0 */
	bool head_started;    /* header timer running for a request */
	struct sw_buf in;     /* released whenever it is empty between requests */
	size_t prev_len;
	size_t head_len;
	size_t body_raw;      /* chunked: raw bytes consumed after the head */
	size_t body_out;      /* chunked: decoded bytes so far */
	struct sw_http_request *req;
	struct sw_timer timer;
	char peer[46];        /* INET6_ADDRSTRLEN */
	struct conn_out *out; /* NULL while nothing is queued or being written */
	uint64_t writes_done;  /* completed writes: a stream's stall detector */
	const struct sw_http_producer *producer; /* a body in progress, or NULL */
	void *body;                              /* the producer's state */
};

struct sw_server {
	struct sw_server_shared *shared;
	const struct sw_config *config;
	struct sw_loop *loop;
	int listen_fd;
	struct sw_io_op accept_op;
	bool accept_active;
	struct sw_timer accept_retry;
	struct sw_conn *conns;
	unsigned nconns;
	struct sw_http_request *free_reqs;
	unsigned nfree;
	struct conn_out *free_outs; /* empty output states, at most OUT_FREE_MAX */
	unsigned nfree_outs;
	struct sw_http_head head; /* scratch: parsing is synchronous */
	char date[32];
	time_t date_sec;
	uint64_t seq;
	bool stopping;
	bool drained_told;
	void (*drained)(void *arg);
	void *drained_arg;
	struct sw_timer shutdown_timer;
	/* Answered requests, released once the current completion has been
	 * handled (sw_http_request_release_later()). */
	struct sw_http_request *answered;
	struct sw_timer reap_timer;
	/* Upward, through pointers (listener.c sets them): a complete request,
	 * and the error answer of a request the state machine refuses. */
	void (*dispatch)(struct sw_http_request *req);
	void (*error)(struct sw_http_request *req, int status, const char *code, const char *message);
};

/* ---- out.c ---- */
/* The accumulating generation, allocating c->out on first use; NULL when
 * out of memory (then close_after_write is set). */
struct outgen *conn_acc(struct sw_conn *c);
static inline size_t sw_conn_out_pending(const struct sw_conn *c)
{
	return c->out ? c->out->gen[0].bytes + c->out->gen[1].bytes : 0;
}
/* Drops what is queued; a generation whose write is in flight is left to
 * that write's completion (the kernel may still read it). */
void sw_conn_out_drop(struct sw_conn *c);
/* Gives c->out back when nothing is queued or in flight and no producer runs. */
void sw_conn_out_idle(struct sw_conn *c);
/* Frees an output state (on the server's list or not). */
void sw_conn_out_free(struct conn_out *o);
/* Copies n bytes into the accumulating generation (out of memory or of
 * pieces: close_after_write). */
void sw_conn_out_bytes(struct sw_conn *c, const void *p, size_t n);
/* Bytes that live until the server stops: by reference when large. */
void sw_conn_out_static(struct sw_conn *c, const char *p, size_t n);
/* By reference; the caller made sure a piece is free. */
void sw_conn_out_ref(struct sw_conn *c, const char *p, size_t n, struct sw_ref *ref);
/* Empties g, releasing what it held by reference: never while a write of
 * g is in flight (the kernel may still read it). */
void sw_conn_gen_reset(struct outgen *g);
/* Drops the first n written bytes of g. */
void sw_conn_gen_consume(struct outgen *g, size_t n);

/* ---- request.c ---- */
struct sw_http_request *sw_http_request_new(struct sw_conn *c);
void sw_http_request_free(struct sw_http_request *req);
/* Releases the answered requests now (the reap timer's work). */
void sw_http_request_reap(struct sw_server *srv);
void sw_http_request_release_later(struct sw_http_request *req);
void sw_http_request_set_id(struct sw_http_request *req);
/* A new request id ("prefix-loop-seq") into out (40 bytes); its length. */
size_t sw_http_request_id_new(struct sw_server *srv, char out[40]);
int sw_http_request_capture_head(struct sw_http_request *req, const struct sw_http_head *h);

/* ---- conn.c ---- */
/* Every way into a connection's code (a completion, its timer, a
 * handler's answer) holds it for the duration, so nothing called from
 * there can free it under the caller's feet; the last release frees a
 * closed connection. */
void sw_conn_hold(struct sw_conn *c);
void sw_conn_release(struct sw_conn *c);
/* A connection for an accepted fd; false when it could not start (fd closed). */
bool sw_conn_start(struct sw_server *srv, int fd);
void sw_conn_flush(struct sw_conn *c);
/* Stops taking requests on c (lingering close after the output). */
void sw_conn_close(struct sw_conn *c);
/* Stops all I/O on c at once, dropping what is queued. */
void sw_conn_abort(struct sw_conn *c);
/* Frees c once closed and quiet. */
void sw_conn_maybe_free(struct sw_conn *c);
void sw_conn_arm_timer(struct sw_conn *c, unsigned ms);
/* The request's answer is complete (body_len bytes of body): log it,
 * release it, and go on with the connection (the next request, or close). */
void sw_conn_request_done(struct sw_http_request *req, size_t body_len);
/* Hands the body to a producer; the request stays open until it calls
 * sw_conn_request_done(). */
void sw_conn_attach(struct sw_conn *c, const struct sw_http_producer *p, void *body);
void sw_conn_detach(struct sw_conn *c);
/* An upgrade's producer is attached and its 101 queued: the request is
 * logged (101) and released now, not kept for the connection's life;
 * c->req is NULL from then on (state CONN_UPGRADED). */
void sw_conn_upgraded(struct sw_conn *c);
/* Ends an upgraded connection once its producer is detached and
 * close_after_write set: it closes after what is queued is written. */
void sw_conn_upgraded_done(struct sw_conn *c);
/* Tells the server's owner once it stops with no connection left. */
void sw_server_maybe_drained(struct sw_server *srv);

/* ---- write.c ---- */
/* How a response's body is delimited. */
enum body_framing {
	FRAME_LENGTH,  /* Content-Length (none for 204) */
	FRAME_CHUNKED, /* a stream: Transfer-Encoding: chunked */
	FRAME_CLOSE,   /* a stream to an HTTP/1.0 client: the end is the close */
};
void sw_server_refresh_date(struct sw_server *srv);
struct sw_str sw_http_allowed_origin(const struct sw_http_request *req);
bool sw_http_response_closes(const struct sw_http_request *req, int status);
void sw_http_write_head(struct sw_http_request *req, int status, const char *content_type,
			enum body_framing framing, uint64_t length);
/* Takes the answer slot of req: false when it was answered already (a
 * bug) or the client is gone (the request is then finished). */
bool sw_http_begin_answer(struct sw_http_request *req, int status);
void sw_http_respond_body(struct sw_http_request *req, int status, const char *content_type,
			  struct sw_str body, bool by_reference);

/* ---- response.c ---- */
/* Renders the error envelope into b. 0, or -ENOMEM. */
int sw_http_error_json(struct sw_buf *b, const char *code, const char *message,
		       struct sw_str request_id, const struct sw_field_errors *fe);

/* ---- dispatch.c ---- */
void sw_http_dispatch(struct sw_http_request *req);

#endif
