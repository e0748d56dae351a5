/* The live stream of a deployment's build log, for GET
 * /deployments/:id/live (src/api/deployment_logs.c, which also sends the
 * file for /logs): Server-Sent Events of the log so far, live lines from
 * the hub (hub.c), then the status.
 *
 * Why it looks like this:
 * - The log file is the one source of truth (src/deploy/build_log.c writes whole
 *   lines, then tells the hub). /logs is the file as it is, spliced to the
 *   socket (sw_http_respond_file).
 * - /live needs "data: " before every line, so the part already in the
 *   file is read (through the ring) and framed in user space once per
 *   reader, block by block as the socket drains; the zero-copy rule is for
 *   /logs and for live lines: those come from the hub pre-framed once and
 *   are written by reference by every reader.
 * - Joining the live part without a gap or a repeat: attach to the hub
 *   first, which says the byte count B the writer had published; read the
 *   file up to B; every chunk pulled after the attach ends past B. Chunks
 *   published while the file is still being read wait in the hub's chain,
 *   and are pulled while the socket keeps up (never more than PULL_AHEAD
 *   queued per reader); a reader SW_HUB_MAX_LAG_BYTES behind is cut.
 * - The hub is per process. A reader in a process whose runners do not
 *   write this log hears nothing from it: it polls the file and the
 *   deployment's row every SW_DEPLOY_LOG_POLL_MS until the row's status is
 *   final (and switches to live chunks if a writer of this process opens
 *   the log meanwhile: the hub tells attached readers). A process without
 *   the file (another replica's runner writes it, in its own data
 *   directory) reads the copy the runner stores in deployment_log_chunks
 *   instead, up to the row's logByteCount, a buffer's worth a query.
 * - Event ids are byte offsets in the log: Last-Event-ID resumes right
 *   after the line it names (an offset inside a line resumes at the next
 *   line). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/deploy/deploy.h"
#include "steward/deploy/live_log.h"
#include "steward/io/io.h"
#include "steward/base/log.h"
#include "steward/base/limits.h"
#include "steward/db/statements_deployments.h"

#define READ_BLOCK (16 * 1024)
/* The next block of the file is read once less than this waits for the socket. */
#define READ_AHEAD (64 * 1024)
/* Live chunks are pulled from the hub while less than this waits: a
 * reader's queue stays small however far behind it is (the hub's chain
 * holds the rest, shared). */
#define PULL_AHEAD (16 * 1024)

static bool status_final(const char *s)
{
	return s && (strcmp(s, "SUCCEEDED") == 0 || strcmp(s, "FAILED") == 0 ||
		     strcmp(s, "CANCELLED") == 0);
}

static void internal_error(struct sw_http_request *req)
{
	sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
}

/* ---- the live stream ---- */

struct live {
	struct sw_http_stream *s; /* NULL once the stream is over */
	struct sw_loop *loop;
	struct sw_db_pool *db;
	void (*poll)(const char *deployment_id, sw_deploy_live_status_cb done, void *arg);
	struct sw_hub_reader *reader;
	char id[37];
	char org[37];
	char *path;
	int fd;               /* the log file, -1 until it exists */
	uint64_t sent;        /* bytes of the log sent: always a line's end */
	uint64_t target;      /* the file is read up to here before anything else */
	bool skip_partial;    /* resuming inside a line: drop through its "\n" */
	bool writing;         /* a writer of this process has the log open */
	bool read_active;
	bool query_active;
	char *buf;            /* buf_cap (up to READ_BLOCK) bytes, while reading */
	size_t buf_cap;
	size_t carry;         /* bytes of an unfinished line at the start of buf */
	struct sw_io_op read_op;
	struct sw_timer poll_timer;
	bool stored;          /* no file here: the copy in deployment_log_chunks is read */
	uint64_t row_bytes;   /* the row's logByteCount, last read */
	char *final_event;    /* the status event from the row, once it is final */
	size_t final_len;
};

static void live_advance(struct live *lv);

/* Frees lv once nothing refers to it any more. */
static void live_maybe_free(struct live *lv)
{
	if (lv->s || lv->read_active || lv->query_active)
		return;
	if (lv->fd >= 0)
		close(lv->fd);
	free(lv->path);
	free(lv->buf);
	free(lv->final_event);
	free(lv);
}

/* The stream is over (ended = we ended it; else it failed): no more
 * chunks, no more polls. */
static void live_release(struct live *lv)
{
	sw_hub_detach(lv->reader);
	lv->reader = NULL;
	sw_timer_stop(lv->loop, &lv->poll_timer);
	lv->s = NULL;
	live_maybe_free(lv);
}

static void live_end(struct live *lv)
{
	if (!lv->s)
		return;
	sw_http_stream_end(lv->s);
	live_release(lv);
}

/* Too far behind: the connection is cut; the client resumes from the file. */
static void live_cut(struct live *lv)
{
	if (!lv->s)
		return;
	sw_http_stream_abort(lv->s);
	live_release(lv);
}

static void live_closed(void *arg, int reason)
{
	(void)reason;
	live_release(arg);
}

static void live_writable(void *arg)
{
	live_advance(arg);
}

static const struct sw_http_stream_ops live_ops = {
	.closed = live_closed,
	.writable = live_writable,
	.heartbeat_ms = SW_SSE_HEARTBEAT_MS,
	.heartbeat = ": ping\n\n",
};

/* The status event framed from a row's values. */
static int set_final(struct live *lv, const char *status, const char *error_message)
{
	struct sw_hub_chunk *c = sw_hub_status_chunk(status, error_message);
	if (!c)
		return -ENOMEM;
	free(lv->final_event);
	lv->final_event = malloc(c->len);
	if (lv->final_event) {
		memcpy(lv->final_event, c->data, c->len);
		lv->final_len = c->len;
	}
	sw_hub_chunk_unref(c);
	return lv->final_event ? 0 : -ENOMEM;
}

/* The size of the file now (0 when it does not exist yet). */
static uint64_t file_size(struct live *lv)
{
	if (lv->fd < 0) {
		lv->fd = open(lv->path, O_RDONLY | O_CLOEXEC);
		if (lv->fd < 0)
			return 0;
	}
	struct stat sb;
	return fstat(lv->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* A frame of archived lines, owned by the stream once written. */
struct frame_block {
	struct sw_ref ref;
	char data[];
};

static void frame_release(struct sw_ref *ref)
{
	free(SW_CONTAINER_OF(ref, struct frame_block, ref));
}

static int write_lines(struct live *lv, const char *data, size_t n, uint64_t end)
{
	size_t fn = sw_hub_frame_log(NULL, end, data, n);
	struct frame_block *b = malloc(sizeof(*b) + fn);
	if (!b)
		return -ENOMEM;
	b->ref.release = frame_release;
	sw_hub_frame_log(b->data, end, data, n);
	return sw_http_stream_write(lv->s, b->data, fn, &b->ref);
}

/* res bytes read into buf after carry (0: none past the target; -errno). */
static void read_finished(struct live *lv, int res)
{
	lv->read_active = false;
	if (!lv->s) {
		live_maybe_free(lv);
		return;
	}
	if (res < 0) {
		sw_log_error("deployment log %s: read failed: %s", lv->id, strerror(-res));
		live_end(lv);
		return;
	}
	if (res == 0) {
		/* The file is shorter than the target: nothing more to read. */
		lv->target = lv->sent;
		lv->carry = 0;
		live_advance(lv);
		return;
	}
	char *data = lv->buf;
	size_t n = lv->carry + (size_t)res;
	if (lv->skip_partial) {
		char *nl = memchr(data, '\n', n);
		size_t drop = nl ? (size_t)(nl - data) + 1 : n;
		lv->sent += drop;
		memmove(data, data + drop, n - drop);
		n -= drop;
		lv->skip_partial = !nl;
	}
	size_t whole = 0;
	for (size_t i = n; i > 0; i--)
		if (data[i - 1] == '\n') {
			whole = i;
			break;
		}
	if (!whole && n == lv->buf_cap)
		whole = n; /* no line end in a whole buffer: not from our writer; send it as one */
	if (whole) {
		lv->sent += whole;
		if (write_lines(lv, data, whole, lv->sent) < 0) {
			live_end(lv);
			return;
		}
		if (!lv->s)
			return;
	}
	lv->carry = n - whole;
	memmove(data, data + whole, lv->carry);
	if (lv->sent + lv->carry >= lv->target) {
		/* An unfinished line at the target (a file another process is
		 * writing): caught up for now; it is read again whole later. */
		lv->carry = 0;
		lv->target = lv->sent;
	}
	live_advance(lv);
}

static void read_done(struct sw_io_op *op, int res, uint32_t flags)
{
	(void)flags;
	read_finished(SW_CONTAINER_OF(op, struct live, read_op), res);
}

int sw_deploy_log_stored_bytes(const PGresult *res, unsigned char **ret, size_t *n)
{
	*n = 0;
	*ret = NULL;
	if (PQgetisnull(res, 0, 1))
		return 0;
	*ret = PQunescapeBytea((const unsigned char *)PQgetvalue(res, 0, 1), n);
	return *ret ? 0 : -ENOMEM;
}

/* The stored copy's bytes asked for (at most what buf has room for). */
static void stored_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct live *lv = arg;
	if (!lv->s) {
		lv->read_active = false;
		live_maybe_free(lv);
		return;
	}
	if (!res || err->code || PQntuples(res) != 1) {
		read_finished(lv, -EIO);
		return;
	}
	size_t n = 0;
	unsigned char *b = NULL;
	if (sw_deploy_log_stored_bytes(res, &b, &n) < 0) {
		read_finished(lv, -ENOMEM);
		return;
	}
	n = SW_MIN(n, lv->buf_cap - lv->carry);
	if (n)
		memcpy(lv->buf + lv->carry, b, n);
	PQfreemem(b);
	read_finished(lv, (int)n);
}

/* Reads want bytes of the stored copy from at into buf after carry. */
static int stored_read(struct live *lv, uint64_t at, size_t want)
{
	char from[24], len[24];
	snprintf(from, sizeof(from), "%llu", (unsigned long long)at);
	snprintf(len, sizeof(len), "%zu", want);
	const char *params[3] = { lv->id, from, len };
	return sw_db_query(lv->db, &sw_db_stmt_deployment_log_read, params, 3, stored_done, lv);
}

/* The log's size as this process can read it: the file's, or (none here,
 * and the database is the poll) the stored copy's, up to the row's
 * logByteCount. */
static uint64_t log_size(struct live *lv)
{
	uint64_t size = file_size(lv);
	lv->stored = lv->fd < 0 && !lv->poll && lv->db;
	return lv->stored ? lv->row_bytes : size;
}

/* Handles one pulled chunk (the file is read up to target); false when the
 * stream is over. */
static bool apply_chunk(struct live *lv, struct sw_hub_chunk *c)
{
	switch (c->kind) {
	case SW_HUB_LOG:
		if (c->offset > lv->sent) {
			lv->sent = c->offset;
			/* Takes our reference; a failure means closed() is coming. */
			return sw_http_stream_write(lv->s, c->data, c->len, &c->ref) == 0;
		}
		break;
	case SW_HUB_STATUS:
		sw_http_stream_write(lv->s, c->data, c->len, &c->ref);
		live_end(lv);
		return false;
	case SW_HUB_OPENED:
		lv->writing = true;
		sw_timer_stop(lv->loop, &lv->poll_timer);
		if (c->offset > lv->target)
			lv->target = c->offset;
		break;
	case SW_HUB_CLOSED:
		/* The deployment goes on elsewhere (another job, maybe another
		 * process): read what it wrote, then poll. */
		lv->writing = false;
		if (c->offset > lv->target)
			lv->target = c->offset;
		break;
	case SW_HUB_START:
		break;
	}
	sw_hub_chunk_unref(c);
	return true;
}

static void poll_tick(struct sw_timer *t);

/* What to do next: read the file up to target, then the chunks that
 * waited, then the end (a final status) or wait (live chunks, or polls). */
static void live_advance(struct live *lv)
{
	if (!lv->s)
		return;
	if (sw_hub_lag(lv->reader) > SW_HUB_MAX_LAG_BYTES) {
		live_cut(lv);
		return;
	}
	if (lv->read_active)
		return;
	if (lv->sent < lv->target) {
		if (sw_http_stream_queued(lv->s) >= READ_AHEAD)
			return; /* writable() comes back */
		/* A buffer for what is left, up to READ_BLOCK: a thousand readers
		 * joining a short log do not each hold a whole block. */
		size_t need = (size_t)SW_MIN((uint64_t)READ_BLOCK, lv->target - lv->sent + 1);
		if (lv->buf_cap < need && lv->buf_cap < READ_BLOCK) {
			char *b = realloc(lv->buf, need);
			if (!b) {
				live_end(lv);
				return;
			}
			lv->buf = b;
			lv->buf_cap = need;
		}
		if (lv->fd < 0)
			log_size(lv);
		uint64_t at = lv->sent + lv->carry;
		size_t want = (size_t)SW_MIN((uint64_t)(lv->buf_cap - lv->carry), lv->target - at);
		lv->read_op.cb = read_done;
		if (lv->fd < 0 && lv->stored && want && stored_read(lv, at, want) == 0) {
			lv->read_active = true;
			return;
		}
		if (lv->fd < 0 || want == 0 ||
		    sw_io_pread(lv->loop, &lv->read_op, lv->fd, lv->buf + lv->carry, want, at) < 0) {
			/* No file (or nothing to read): nothing up to target exists. */
			lv->target = lv->sent;
			lv->carry = 0;
		} else {
			lv->read_active = true;
			return;
		}
	}
	/* Caught up: the file buffer is not needed until the next catch-up. */
	free(lv->buf);
	lv->buf = NULL;
	lv->buf_cap = 0;
	for (;;) {
		if (sw_http_stream_queued(lv->s) >= PULL_AHEAD)
			return; /* writable() comes back */
		struct sw_hub_chunk *c = sw_hub_next(lv->reader);
		if (!c)
			break;
		if (!apply_chunk(lv, c))
			return; /* ended (lv may be gone) */
		if (lv->sent < lv->target) {
			live_advance(lv); /* OPENED or CLOSED moved the target */
			return;
		}
	}
	if (lv->final_event && !lv->writing) {
		sw_http_stream_write(lv->s, lv->final_event, lv->final_len, NULL);
		live_end(lv);
		return;
	}
	if (!lv->writing && !sw_timer_armed(&lv->poll_timer) && !lv->query_active)
		sw_timer_start(lv->loop, &lv->poll_timer, SW_DEPLOY_LOG_POLL_MS, poll_tick);
}

/* The hub has new chunks. */
static void on_chunk(void *arg)
{
	live_advance(arg);
}

/* ---- polling (no writer in this process) ---- */

static void polled(void *arg, const char *status, const char *error_message)
{
	struct live *lv = arg;
	lv->query_active = false;
	if (!lv->s) {
		live_maybe_free(lv);
		return;
	}
	if (!status) {
		live_end(lv); /* the deployment is gone */
		return;
	}
	if (!lv->writing) {
		if (status_final(status) && set_final(lv, status, error_message) < 0) {
			live_end(lv);
			return;
		}
		uint64_t size = log_size(lv);
		if (size > lv->target)
			lv->target = size;
	}
	live_advance(lv);
}

static void db_polled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct live *lv = arg;
	if (!res || err->code) {
		/* Try again at the next tick. */
		lv->query_active = false;
		if (!lv->s) {
			live_maybe_free(lv);
			return;
		}
		live_advance(lv);
		return;
	}
	if (PQntuples(res) != 1) {
		polled(lv, NULL, NULL);
		return;
	}
	lv->row_bytes = strtoull(PQgetvalue(res, 0, SW_DB_DEPLOYMENT_LOG_BYTE_COUNT), NULL, 10);
	polled(lv, PQgetvalue(res, 0, SW_DB_DEPLOYMENT_STATUS),
	       PQgetisnull(res, 0, SW_DB_DEPLOYMENT_ERROR_MESSAGE)
		       ? NULL
		       : PQgetvalue(res, 0, SW_DB_DEPLOYMENT_ERROR_MESSAGE));
}

static void poll_tick(struct sw_timer *t)
{
	struct live *lv = SW_CONTAINER_OF(t, struct live, poll_timer);
	if (!lv->s || lv->writing || lv->query_active)
		return;
	lv->query_active = true;
	if (lv->poll) {
		lv->poll(lv->id, polled, lv);
		return;
	}
	const char *params[3] = { lv->org, lv->id, NULL };
	if (sw_db_query(lv->db, &sw_db_stmt_deployment_get, params, 3, db_polled, lv) < 0) {
		lv->query_active = false;
		sw_timer_start(lv->loop, &lv->poll_timer, SW_DEPLOY_LOG_POLL_MS, poll_tick);
	}
}

/* ---- starting ---- */

/* Last-Event-ID: the byte offset to resume after (0: from the start). */
static uint64_t resume_offset(const struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Last-Event-ID"));
	int64_t v = 0;
	/* Any other value is refused before the stream starts
	 * (src/api/deployment_logs.c); absent or empty: from the start. */
	if (!h || h->value.len == 0 || !sw_parse_i64_canonical(h->value, &v))
		return 0;
	return (uint64_t)v;
}

void sw_deploy_live_start(struct sw_http_request *req, const struct sw_deploy_live_source *src)
{
	struct live *lv = calloc(1, sizeof(*lv));
	char path[4096];
	if (!lv || sw_deploy_log_path(src->data_dir, src->deployment_id, path, sizeof(path)) < 0 ||
	    !(lv->path = strdup(path))) {
		free(lv);
		internal_error(req);
		return;
	}
	lv->fd = -1;
	lv->loop = req->loop;
	lv->db = sw_db_pool_of(req->loop);
	lv->poll = src->poll;
	lv->row_bytes = src->log_bytes;
	snprintf(lv->id, sizeof(lv->id), "%s", src->deployment_id);
	snprintf(lv->org, sizeof(lv->org), "%s", req->principal.organization_id);
	uint64_t offset = 0;
	int r = sw_hub_attach(lv->id, lv->loop, on_chunk, lv, &lv->reader, &lv->writing, &offset);
	if (r < 0) {
		free(lv->path);
		free(lv);
		if (r == -EBUSY) {
			sw_http_add_header(req, "Retry-After", SW_STR("5"));
			sw_http_error(req, 503, "SERVICE_UNAVAILABLE",
				      "This deployment has as many live readers as the server allows; try again shortly.");
		} else {
			internal_error(req);
		}
		return;
	}
	if (lv->writing) {
		lv->target = offset;
	} else {
		if (status_final(src->status) && set_final(lv, src->status, src->error_message) < 0) {
			sw_hub_detach(lv->reader);
			free(lv->path);
			free(lv);
			internal_error(req);
			return;
		}
		lv->target = log_size(lv);
	}
	lv->sent = resume_offset(req);
	if (lv->sent) {
		lv->sent--; /* read from the byte before: resume at a line's start */
		lv->skip_partial = true;
	}
	sw_http_add_header(req, "X-Accel-Buffering", SW_STR("no"));
	lv->s = sw_http_stream_begin(req, 200, "text/event-stream; charset=utf-8", &live_ops, lv);
	if (!lv->s) {
		live_release(lv); /* HEAD, or the client is gone */
		return;
	}
	live_advance(lv);
}
