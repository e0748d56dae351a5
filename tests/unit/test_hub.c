/* The hub and the live log stream.
 *
 * The hub alone (a loop in this thread, chunks published from another
 * thread): one chunk reaches N readers with one allocation, its refcount
 * reaches N, and it is freed once; publishes coalesce into one post per
 * loop; the readers' bound; a loop that does not drain loses chunks and
 * its readers are told; the writer's end and the scrubbed error message.
 *
 * Then the server (a thread composed as stewardd composes one, on 127.0.0.1, a route table of
 * this file's own that calls the production stream code: no test route is
 * in stewardd) with a writer in this thread: the archived log then live
 * lines then the status event, Last-Event-ID, a finished deployment, a
 * deployment run by another process (polled), 503 past the readers'
 * bound, a reader too slow losing its stream, N readers sharing each
 * chunk (one allocation, N deliveries), file bodies by splice and by
 * sendfile, streamed responses (heartbeats, keep-alive after the end,
 * HTTP/1.0, the client going away), and a stopping server ending streams
 * cleanly. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/buf.h"
#include "steward/base/config.h"
#include "steward/deploy/deploy.h"
#include "steward/http/http.h"
#include "steward/http/upgrade.h"
#include "steward/io/io.h"
#include "steward/base/limits.h"
#include "steward/deploy/live_log.h"
#include "http/conn.h"
#include "http/http_internal.h"
#include "main/thread.h"
#include "scratch_dir.h"
#include "test_help.h"

static const char *dir;

static void make_dir(void)
{
	dir = scratch_dir("sw-hub");
}

static const char *new_id(void)
{
	static char ids[64][37];
	static unsigned n;
	n++;
	snprintf(ids[n % 64], 37, "00000000-0000-4000-8000-%012u", n);
	return ids[n % 64];
}

static struct sw_loop *loop_or_skip(void)
{
	static struct sw_loop *L;
	if (L)
		return L;
	char err[256];
	if (sw_io_probe(err, sizeof(err)) < 0) {
		printf("skipped: %s\n", err);
		exit(77);
	}
	L = sw_loop_new(0, 64, 16, 4096);
	if (!L) {
		printf("skipped: cannot create a ring\n");
		exit(77);
	}
	return L;
}

static struct sw_hub_counters counted(void)
{
	struct sw_hub_counters c;
	sw_hub_counters(&c);
	return c;
}

/* ---- the hub alone ---- */

struct rd {
	struct sw_hub_reader *r;
	struct sw_hub_chunk *got[8]; /* the first LOG chunks pulled, kept */
	unsigned n;
	unsigned logs;    /* LOG chunks pulled */
	unsigned kinds[8];
	uint64_t last_offset;
	bool out_of_order;
	bool detach_on_log; /* detaches itself inside the wake-up */
	bool idle;          /* never pulls: a reader whose socket is full */
};

static unsigned expected, seen;
static struct sw_loop *hub_loop;
static char last_status[256]; /* the data of the last STATUS chunk pulled */

static void rd_fn(void *arg)
{
	struct rd *x = arg;
	struct sw_hub_chunk *c;
	while (x->r && !x->idle && (c = sw_hub_next(x->r))) {
		seen++;
		x->kinds[c->kind]++;
		if (c->kind == SW_HUB_STATUS)
			snprintf(last_status, sizeof(last_status), "%.*s", (int)c->len, c->data);
		if (c->kind == SW_HUB_LOG) {
			if (c->offset <= x->last_offset)
				x->out_of_order = true;
			x->last_offset = c->offset;
			x->logs++;
			if (x->n < 8) {
				x->got[x->n++] = c;
				c = NULL;
			}
			if (x->detach_on_log) {
				sw_hub_detach(x->r);
				x->r = NULL;
			}
		}
		sw_hub_chunk_unref(c);
	}
	if (seen >= expected)
		sw_loop_stop(hub_loop);
}

static void run_until(unsigned n)
{
	expected = n;
	while (seen < expected)
		sw_loop_run(hub_loop);
}

/* One LOG chunk of one line, published the way the writer does. */
static void publish_line(struct sw_hub_topic *t, uint64_t *offset, const char *line)
{
	size_t n = strlen(line);
	*offset += n;
	if (sw_hub_advance(t, *offset) == 0)
		return;
	size_t fn = sw_hub_frame_log(NULL, *offset, line, n);
	struct sw_hub_chunk *c = sw_hub_chunk_new(SW_HUB_LOG, *offset, fn);
	sw_hub_frame_log(c->data, *offset, line, n);
	sw_hub_publish(t, c);
}

struct pub_arg {
	struct sw_hub_topic *t;
	uint64_t offset;
	unsigned lines;
};

static void *publisher(void *p)
{
	struct pub_arg *a = p;
	for (unsigned i = 0; i < a->lines; i++)
		publish_line(a->t, &a->offset, "a line of the build\n");
	return NULL;
}

/* Chunks allocated and not freed. */
static long long live_chunks(void)
{
	struct sw_hub_counters c = counted();
	return (long long)(c.chunks_allocated - c.chunks_freed);
}

TEST(sse_framing_gives_each_line_and_each_cr_its_own_data_field)
{
	const char lines[] = "first\nsecond\rpart\n\n";
	char out[256];
	size_t n = sw_hub_frame_log(NULL, 42, lines, sizeof(lines) - 1);
	REQUIRE(n < sizeof(out));
	CHECK_INT_EQ(sw_hub_frame_log(out, 42, lines, sizeof(lines) - 1), n);
	out[n] = '\0';
	CHECK_STR_EQ(out, "id: 42\nevent: log\ndata: first\ndata: second\ndata: part\ndata: \n\n");
	struct sw_hub_chunk *c = sw_hub_status_chunk("FAILED", "it \"broke\"\nbadly");
	REQUIRE(c);
	CHECK_INT_EQ(c->kind, SW_HUB_STATUS);
	CHECK_STR_EQ(c->data, "event: status\ndata: {\"status\":\"FAILED\",\"errorMessage\":\"it \\\"broke\\\"\\nbadly\"}\n\n");
	sw_hub_chunk_unref(c);
}

TEST(one_chunk_reaches_n_readers_with_one_allocation_and_is_freed_once)
{
	hub_loop = loop_or_skip();
	long long live0 = live_chunks();
	const char *id = new_id();
	enum { N = 50 };
	static struct rd r[N];
	memset(r, 0, sizeof(r));
	bool writing = true;
	uint64_t off = 99;
	for (int i = 0; i < N; i++)
		REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &r[i], &r[i].r, &writing, &off) == 0);
	CHECK(!writing); /* no writer yet */
	struct sw_hub_topic *t = sw_hub_writer_open(id, 0);
	REQUIRE(t);
	seen = 0;
	run_until(N); /* OPENED, pulled by each */
	for (int i = 0; i < N; i++)
		CHECK_INT_EQ(r[i].kinds[SW_HUB_OPENED], 1);

	struct sw_hub_counters before = counted();
	struct pub_arg a = { t, 0, 1 };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, publisher, &a) == 0);
	pthread_join(th, NULL);
	seen = 0;
	run_until(N);
	struct sw_hub_counters after = counted();
	CHECK_INT_EQ(after.chunks_allocated - before.chunks_allocated, 1);
	CHECK_INT_EQ(after.pulled - before.pulled, N);
	CHECK_INT_EQ(after.posts - before.posts, 1);
	/* Every reader holds the same chunk: no copy. Its references: each
	 * reader's (what its stream would write), each reader's cursor, and
	 * the topic's (the chain's tail). */
	struct sw_hub_chunk *c = r[0].got[0];
	REQUIRE(c);
	for (int i = 0; i < N; i++)
		CHECK(r[i].n == 1 && r[i].got[0] == c);
	CHECK_INT_EQ(__atomic_load_n(&c->refs, __ATOMIC_RELAXED), 2 * N + 1);
	for (int i = 0; i < N; i++)
		sw_hub_chunk_unref(r[i].got[0]); /* the writes completed */
	CHECK_INT_EQ(__atomic_load_n(&c->refs, __ATOMIC_RELAXED), N + 1);
	for (int i = 0; i < N; i++)
		sw_hub_detach(r[i].r);
	CHECK_INT_EQ(__atomic_load_n(&c->refs, __ATOMIC_RELAXED), 1);
	/* Freed so far: OPENED, which every cursor has passed; not the line. */
	CHECK_INT_EQ(counted().chunks_freed - before.chunks_freed, 1);
	sw_hub_writer_close(t, NULL); /* the tail moves on: the last reference */
	CHECK_INT_EQ(live_chunks(), live0);
}

TEST(a_burst_of_lines_is_one_post_per_loop_and_arrives_in_order)
{
	hub_loop = loop_or_skip();
	long long live0 = live_chunks();
	const char *id = new_id();
	static struct rd r[3];
	memset(r, 0, sizeof(r));
	r[1].detach_on_log = true; /* leaves inside the wake-up: the others go on */
	bool writing;
	uint64_t off;
	for (int i = 0; i < 3; i++)
		REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &r[i], &r[i].r, &writing, &off) == 0);
	struct sw_hub_counters before = counted();
	struct sw_hub_topic *t = sw_hub_writer_open(id, 1000);
	REQUIRE(t);
	struct pub_arg a = { t, 1000, 200 };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, publisher, &a) == 0);
	pthread_join(th, NULL);
	CHECK_INT_EQ(counted().posts - before.posts, 1);
	seen = 0;
	run_until(3 + 200 + 1 + 200); /* OPENED x3, then r[1] leaves after its first line */
	for (int i = 0; i < 3; i += 2) {
		CHECK_INT_EQ(r[i].logs, 200);
		CHECK(!r[i].out_of_order);
		for (unsigned k = 0; k < r[i].n; k++)
			sw_hub_chunk_unref(r[i].got[k]);
	}
	CHECK_INT_EQ(r[1].logs, 1);
	sw_hub_chunk_unref(r[1].got[0]);
	/* Readers attaching now start past everything published. */
	struct rd late = { 0 };
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &late, &late.r, &writing, &off) == 0);
	CHECK(writing);
	CHECK_INT_EQ(off, 1000 + 200 * 20);
	CHECK(sw_hub_next(late.r) == NULL);
	CHECK_INT_EQ(sw_hub_lag(late.r), 0);
	sw_hub_detach(late.r);
	sw_hub_detach(r[0].r);
	sw_hub_detach(r[2].r);
	sw_hub_writer_close(t, NULL);
	CHECK_INT_EQ(live_chunks(), live0);
}

TEST(advance_asks_for_a_chunk_only_when_someone_reads)
{
	hub_loop = loop_or_skip();
	const char *id = new_id();
	struct sw_hub_topic *t = sw_hub_writer_open(id, 0);
	REQUIRE(t);
	CHECK(sw_hub_writer_open(id, 0) == NULL && errno == EBUSY);
	CHECK_INT_EQ(sw_hub_advance(t, 10), 0);
	struct rd r = { 0 };
	bool writing;
	uint64_t off;
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &r, &r.r, &writing, &off) == 0);
	CHECK(writing);
	CHECK_INT_EQ(off, 10);
	CHECK_INT_EQ(sw_hub_advance(t, 20), -EAGAIN);
	sw_hub_detach(r.r);
	CHECK_INT_EQ(sw_hub_advance(t, 20), 0);
	sw_hub_writer_close(t, NULL);
}

/* SW_SSE_MAX_READERS readers of id that never pull (full); false when one
 * could not attach. */
static struct sw_hub_reader *full[SW_SSE_MAX_READERS];
static struct rd idle_reader = { .idle = true };

static bool fill_readers(const char *id)
{
	bool writing;
	uint64_t off;
	for (int i = 0; i < SW_SSE_MAX_READERS; i++)
		if (sw_hub_attach(id, loop_or_skip(), rd_fn, &idle_reader, &full[i], &writing, &off) < 0)
			return false;
	return true;
}

static void drop_readers(void)
{
	for (int i = 0; i < SW_SSE_MAX_READERS; i++)
		sw_hub_detach(full[i]);
}

TEST(readers_of_one_deployment_are_bounded)
{
	hub_loop = loop_or_skip();
	const char *id = new_id();
	static struct rd x;
	bool writing;
	uint64_t off;
	REQUIRE(fill_readers(id));
	struct sw_hub_reader *extra;
	CHECK_INT_EQ(sw_hub_attach(id, hub_loop, rd_fn, &x, &extra, &writing, &off), -EBUSY);
	/* Another deployment is not affected. */
	CHECK_INT_EQ(sw_hub_attach(new_id(), hub_loop, rd_fn, &x, &extra, &writing, &off), 0);
	sw_hub_detach(extra);
	drop_readers();
}

TEST(a_reader_that_does_not_pull_holds_one_cursor_and_the_chain_behind_it_is_freed)
{
	hub_loop = loop_or_skip();
	long long live0 = live_chunks();
	const char *id = new_id();
	struct sw_hub_topic *t = sw_hub_writer_open(id, 0);
	REQUIRE(t);
	static struct rd slow, fast;
	memset(&slow, 0, sizeof(slow));
	memset(&fast, 0, sizeof(fast));
	slow.idle = true;
	bool writing;
	uint64_t off;
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &slow, &slow.r, &writing, &off) == 0);
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &fast, &fast.r, &writing, &off) == 0);
	uint64_t o = 0;
	for (int i = 0; i < 1000; i++)
		publish_line(t, &o, "x\n");
	seen = 0;
	run_until(1000);
	CHECK_INT_EQ(fast.logs, 1000);
	for (unsigned k = 0; k < fast.n; k++)
		sw_hub_chunk_unref(fast.got[k]);
	/* The chain from the slow cursor on is alive (it is what the slow
	 * reader has not sent); the lag says how far behind it is. */
	CHECK_INT_EQ(sw_hub_lag(slow.r), 2000);
	CHECK_INT_EQ(sw_hub_lag(fast.r), 0);
	CHECK(live_chunks() - live0 >= 1000);
	sw_hub_detach(slow.r); /* cut (as its stream does past SW_HUB_MAX_LAG_BYTES) */
	CHECK(live_chunks() - live0 <= 2); /* the tail, and the fast cursor's */
	sw_hub_detach(fast.r);
	sw_hub_writer_close(t, NULL);
	CHECK_INT_EQ(live_chunks(), live0);
}

TEST(the_writers_end_reaches_readers_with_the_error_message_scrubbed)
{
	hub_loop = loop_or_skip();
	make_dir();
	const char *id = new_id();
	static struct rd r;
	memset(&r, 0, sizeof(r));
	bool writing;
	uint64_t off;
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &r, &r.r, &writing, &off) == 0);
	const char *secrets[] = { "s3cr3t-token" };
	struct sw_deploy_log *l = sw_deploy_log_open(dir, id, 1 << 20, secrets, 1);
	REQUIRE(l);
	sw_deploy_log_line(l, "using s3cr3t-token", 18);
	sw_deploy_log_end(l, "FAILED", "push with s3cr3t-token refused");
	/* The status chunk: pulled through the same cursor. */
	seen = 0;
	run_until(3); /* OPENED, the line, STATUS */
	CHECK_INT_EQ(r.kinds[SW_HUB_OPENED], 1);
	CHECK_INT_EQ(r.kinds[SW_HUB_STATUS], 1);
	REQUIRE(r.n == 1);
	CHECK_STR_EQ(r.got[0]->data, "id: 10\nevent: log\ndata: using ***\n\n");
	CHECK_STR_EQ(last_status, "event: status\ndata: {\"status\":\"FAILED\","
				  "\"errorMessage\":\"push with *** refused\"}\n\n");
	sw_hub_chunk_unref(r.got[0]);
	sw_hub_detach(r.r);
	/* The topic is gone with its writer and its last reader. */
	REQUIRE(sw_hub_attach(id, hub_loop, rd_fn, &r, &r.r, &writing, &off) == 0);
	CHECK(!writing);
	sw_hub_detach(r.r);
}

/* ---- the server ---- */

static struct sw_config cfg;
static struct sw_server_shared shared;
static struct sw_main_threads threads_shared;
static struct sw_router *router;
static pthread_t server_thread;
static int server_port;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static bool server_ready;
static struct sw_loop *server_loop; /* atomic */

/* What the live route says of its deployment (set here, read on the
 * server's loop: atomic). */
#define GET(v) __atomic_load_n(&(v), __ATOMIC_SEQ_CST)
#define SET(v, x) __atomic_store_n(&(v), (x), __ATOMIC_SEQ_CST)
static const char *live_status = "BUILDING";
static const char *live_error;
static const char *poll_status = "BUILDING";
static char file_path[128];

static void t_poll(const char *id, sw_deploy_live_status_cb done, void *arg)
{
	(void)id;
	const char *st = GET(poll_status);
	done(arg, st, st && strcmp(st, "FAILED") == 0 ? "it broke" : NULL);
}

static void t_live(struct sw_http_request *req)
{
	char id[37];
	snprintf(id, sizeof(id), "%.*s", (int)req->params.value[0].len, req->params.value[0].ptr);
	struct sw_deploy_live_source src = {
		.deployment_id = id, .data_dir = dir, .status = GET(live_status),
		.error_message = GET(live_error), .poll = t_poll,
	};
	sw_deploy_live_start(req, &src);
}

static void t_file(struct sw_http_request *req)
{
	int fd = open(file_path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		sw_http_error(req, 500, "X", "no file");
		return;
	}
	sw_http_respond_file(req, 200, "application/octet-stream", fd, 0, (uint64_t)st.st_size);
}

/* A raw stream: "hello", then what the test posts. */
static struct sw_http_stream *t_stream_s; /* the server's loop only */
static int t_closed_reason = 1;            /* atomic */

static void t_closed(void *arg, int reason)
{
	(void)arg;
	t_stream_s = NULL;
	SET(t_closed_reason, reason);
}

static const struct sw_http_stream_ops t_ops = {
	.closed = t_closed, .heartbeat_ms = 150, .heartbeat = ": hb\n\n",
};

static void t_stream(struct sw_http_request *req)
{
	SET(server_loop, req->loop);
	struct sw_http_stream *s = sw_http_stream_begin(req, 200, "text/event-stream", &t_ops, NULL);
	if (!s)
		return;
	sw_http_stream_write(s, "data: hello\n\n", 13, NULL);
	SET(t_closed_reason, 1);
	t_stream_s = s;
}

static void t_stream_end(void *arg)
{
	(void)arg;
	if (t_stream_s) {
		sw_http_stream_write(t_stream_s, "data: bye\n\n", 11, NULL);
		sw_http_stream_end(t_stream_s);
		t_stream_s = NULL;
	}
}

/* A connection taken over after 101, as the agents' WebSocket will be: a
 * producer of the test's own, written against conn.h alone, echoes what
 * the client sends, upper-cased, until "BYE"; then the connection closes. */
struct echo {
	struct sw_conn *conn;
	struct sw_timer timer; /* finishes the request after a cancel */
};

static void echo_finish(struct sw_conn *c)
{
	struct sw_http_request *req = c->req;
	struct echo *e = c->body;
	sw_timer_stop(c->srv->loop, &e->timer);
	free(e);
	sw_conn_detach(c);
	c->close_after_write = true; /* an upgraded connection never returns to HTTP */
	sw_conn_request_done(req, 0);
}

static void echo_input(struct sw_conn *c)
{
	char up[256];
	size_t n = SW_MIN(c->in.len, sizeof(up));
	for (size_t i = 0; i < n; i++)
		up[i] = (char)(c->in.data[i] >= 'a' && c->in.data[i] <= 'z' ? c->in.data[i] - 32 : c->in.data[i]);
	sw_buf_consume(&c->in, n);
	sw_conn_out_bytes(c, up, n);
	if (memmem(up, n, "BYE", 3))
		echo_finish(c);
	else
		sw_conn_flush(c);
}

static bool echo_written(struct sw_conn *c)
{
	sw_conn_flush(c);
	return true;
}

/* The connection goes away: the request is finished from a timer, never
 * inside the state machine's call. */
static void echo_cancel_done(struct sw_timer *t)
{
	echo_finish(SW_CONTAINER_OF(t, struct echo, timer)->conn);
}

static void echo_cancel(struct sw_conn *c)
{
	struct echo *e = c->body;
	sw_timer_start(c->srv->loop, &e->timer, 0, echo_cancel_done);
}

static const struct sw_http_producer echo_producer = {
	.written = echo_written, .cancel = echo_cancel, .input = echo_input,
};

static void t_upgrade(struct sw_http_request *req)
{
	struct sw_conn *c = req->conn;
	struct echo *e = calloc(1, sizeof(*e));
	if (!e || !sw_http_begin_answer(req, 101)) {
		free(e);
		return;
	}
	static const char head[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\n"
				   "Connection: Upgrade\r\n\r\n";
	sw_conn_out_bytes(c, head, sizeof(head) - 1);
	e->conn = c;
	sw_conn_attach(c, &echo_producer, e);
	if (c->in.len)
		echo_input(c); /* bytes that came with the request */
	else
		sw_conn_flush(c);
}

/* The same through the public face (steward/http/upgrade.h), as a module
 * above http owns an upgraded connection: echoes upper-cased until "BYE",
 * says "GOODBYE" when the server stops; closed() is counted. */
static int upgraded_closed;

struct owner {
	struct sw_http_upgraded *u;
};

static void owner_input(void *arg, struct sw_buf *in)
{
	struct owner *o = arg;
	char up[256];
	size_t n = SW_MIN(in->len, sizeof(up));
	for (size_t i = 0; i < n; i++)
		up[i] = (char)(in->data[i] >= 'a' && in->data[i] <= 'z' ? in->data[i] - 32 : in->data[i]);
	sw_buf_consume(in, n);
	sw_http_upgraded_write(o->u, up, n);
	if (memmem(up, n, "BYE", 3))
		sw_http_upgraded_end(o->u);
}

static void owner_timeout(void *arg)
{
	(void)arg;
}

static void owner_shutdown(void *arg)
{
	struct owner *o = arg;
	sw_http_upgraded_write(o->u, "GOODBYE", 7);
	sw_http_upgraded_end(o->u);
}

static void owner_closed(void *arg)
{
	free(arg);
	__atomic_add_fetch(&upgraded_closed, 1, __ATOMIC_SEQ_CST);
}

static const struct sw_http_upgrade_ops owner_ops = {
	.input = owner_input, .timeout = owner_timeout, .shutdown = owner_shutdown,
	.closed = owner_closed,
};

static void t_upgraded(struct sw_http_request *req)
{
	struct owner *o = calloc(1, sizeof(*o));
	if (!o) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	o->u = sw_http_upgrade(req, "Upgrade: echo\r\nConnection: Upgrade\r\n", &owner_ops, o);
	if (!o->u)
		free(o);
}

static void t_guard(struct sw_http_request *req)
{
	sw_http_run_handler(req);
}

static const struct sw_route t_routes[] = {
	{ SW_HTTP_GET, "/t/live/:id", SW_ACCESS_PUBLIC, t_live, 0, 0, { .summary = "t" } },
	{ SW_HTTP_GET, "/t/file", SW_ACCESS_PUBLIC, t_file, 0, 0, { .summary = "t" } },
	{ SW_HTTP_GET, "/t/stream", SW_ACCESS_PUBLIC, t_stream, 0, 0, { .summary = "t" } },
	{ SW_HTTP_GET, "/t/upgrade", SW_ACCESS_PUBLIC, t_upgrade, 0, 0, { .summary = "t" } },
	{ SW_HTTP_GET, "/t/upgraded", SW_ACCESS_PUBLIC, t_upgraded, 0, 0, { .summary = "t" } },
};

static void on_ready(unsigned index)
{
	(void)index;
	pthread_mutex_lock(&ready_lock);
	server_ready = true;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
}

static void *server_main(void *arg)
{
	(void)arg;
	int r = sw_main_thread_run(&threads_shared, 0);
	if (r < 0)
		fprintf(stderr, "server thread: %s\n", strerror(-r));
	on_ready(0);
	return NULL;
}

static void start_server(void)
{
	if (server_port)
		return;
	loop_or_skip();
	make_dir();
	signal(SIGPIPE, SIG_IGN);
	server_port = scratch_port();
	char listen[64], err[256];
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", server_port);
	setenv("STEWARD_LISTEN", listen, 1);
	setenv("STEWARD_DATA_DIR", dir, 1);
	setenv("STEWARD_ACCESS_LOG", "off", 1);
	setenv("STEWARD_DB_POOL_SIZE", "1", 1);
	setenv("DATABASE_URL", "postgresql:///none?host=/nonexistent-sw-test", 1);
	if (sw_config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "config: %s\n", err);
		exit(1);
	}
	router = sw_router_new(t_routes, SW_ARRAY_SIZE(t_routes), &cfg);
	if (!router) {
		fprintf(stderr, "router: %s\n", strerror(errno));
		exit(1);
	}
	shared = (struct sw_server_shared){ .config = &cfg, .router = router, .guard = t_guard };
	threads_shared = (struct sw_main_threads){ .server = &shared, .conninfo = cfg.database_url,
						   .ready = on_ready };
	sw_workers_start(2);
	pthread_create(&server_thread, NULL, server_main, NULL);
	pthread_mutex_lock(&ready_lock);
	while (!server_ready)
		pthread_cond_wait(&ready_cond, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
}

/* ---- a client ---- */

struct client {
	int fd;
	char raw[1 << 16];
	size_t rawlen;
	bool head_done;
	int status;
	char head[4096];
	bool chunked;
	long long content_length; /* -1: until the close */
	struct sw_buf body;
	int cstate; /* chunked: 0 size line, 1 data, 2 CRLF, 3 trailer */
	size_t chunk_left;
	bool done;   /* the body is complete */
	bool head_request; /* the response has no body */
	bool closed; /* EOF or reset */
};

static void client_connect(struct client *c, int rcvbuf)
{
	memset(c, 0, sizeof(*c));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (rcvbuf)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)server_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("connect");
		exit(1);
	}
}

static void client_send(struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void client_send(struct client *c, const char *fmt, ...)
{
	char req[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	if (write(c->fd, req, (size_t)n) != n)
		perror("write");
	/* A new response on the same connection. */
	c->head_done = c->done = false;
	c->body.len = 0;
	c->cstate = 0;
}

/* Expects the next response on the connection (pipelined). */
static void client_next(struct client *c, bool head_request)
{
	c->head_done = c->done = false;
	c->body.len = 0;
	c->cstate = 0;
	c->head_request = head_request;
}

/* Consumes what raw holds into the head and the decoded body. */
static void client_parse(struct client *c)
{
	if (!c->head_done) {
		char *end = memmem(c->raw, c->rawlen, "\r\n\r\n", 4);
		if (!end)
			return;
		size_t hl = (size_t)(end - c->raw) + 4;
		memcpy(c->head, c->raw, SW_MIN(hl, sizeof(c->head) - 1));
		c->head[SW_MIN(hl, sizeof(c->head) - 1)] = '\0';
		c->status = atoi(c->head + 9);
		c->chunked = strstr(c->head, "Transfer-Encoding: chunked") != NULL;
		char *cl = strstr(c->head, "Content-Length: ");
		c->content_length = cl ? atoll(cl + 16) : -1;
		memmove(c->raw, c->raw + hl, c->rawlen - hl);
		c->rawlen -= hl;
		c->head_done = true;
		if (c->content_length == 0 || strncmp(c->head, "HTTP/1.1 204", 12) == 0 || c->head_request)
			c->done = true;
	}
	size_t i = 0;
	while (i < c->rawlen && !c->done) {
		if (!c->chunked) {
			size_t take = c->rawlen - i;
			if (c->content_length >= 0)
				take = SW_MIN(take, (size_t)c->content_length - c->body.len);
			sw_buf_append(&c->body, c->raw + i, take);
			i += take;
			if (c->content_length >= 0 && c->body.len == (size_t)c->content_length)
				c->done = true;
			continue;
		}
		if (c->cstate == 0 || c->cstate == 3) {
			char *eol = memmem(c->raw + i, c->rawlen - i, "\r\n", 2);
			if (!eol)
				break;
			size_t size = strtoul(c->raw + i, NULL, 16);
			bool trailer = c->cstate == 3;
			i = (size_t)(eol - c->raw) + 2;
			if (trailer) {
				c->done = true;
			} else if (size == 0) {
				c->cstate = 3;
			} else {
				c->chunk_left = size;
				c->cstate = 1;
			}
		} else if (c->cstate == 1) {
			size_t take = SW_MIN(c->chunk_left, c->rawlen - i);
			sw_buf_append(&c->body, c->raw + i, take);
			i += take;
			c->chunk_left -= take;
			if (!c->chunk_left)
				c->cstate = 2;
		} else {
			if (c->rawlen - i < 2)
				break;
			i += 2;
			c->cstate = 0;
		}
	}
	memmove(c->raw, c->raw + i, c->rawlen - i);
	c->rawlen -= i;
}

/* Reads until the body holds needle (NULL: until it is complete), the
 * connection closes, or ms pass. true when the condition was met. */
static bool client_wait(struct client *c, const char *needle, int ms)
{
	uint64_t deadline = sw_now_ms() + (uint64_t)ms;
	for (;;) {
		client_parse(c);
		if (c->head_done) {
			if (needle && c->body.len && memmem(c->body.data, c->body.len, needle, strlen(needle)))
				return true;
			if (!needle && c->done)
				return true;
		}
		if (c->closed || c->done)
			return !needle && c->closed && c->head_done && c->content_length < 0 && !c->chunked;
		uint64_t now = sw_now_ms();
		if (now >= deadline)
			return false;
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		if (poll(&p, 1, (int)(deadline - now)) <= 0)
			continue;
		ssize_t n = read(c->fd, c->raw + c->rawlen, sizeof(c->raw) - c->rawlen);
		if (n <= 0)
			c->closed = true;
		else
			c->rawlen += (size_t)n;
	}
}

/* Waits for EOF from the server (what is read is kept). */
static bool client_wait_closed(struct client *c, int ms)
{
	uint64_t deadline = sw_now_ms() + (uint64_t)ms;
	while (!c->closed && sw_now_ms() < deadline) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		if (poll(&p, 1, 50) <= 0)
			continue;
		if (c->rawlen == sizeof(c->raw))
			c->rawlen = 0; /* not parsed: only the close matters */
		ssize_t n = read(c->fd, c->raw + c->rawlen, sizeof(c->raw) - c->rawlen);
		if (n <= 0)
			c->closed = true;
		else
			c->rawlen += (size_t)n;
	}
	return c->closed;
}

static void client_close(struct client *c)
{
	close(c->fd);
	sw_buf_release(&c->body);
}

/* The log text carried by the "log" events of an SSE body (each event's
 * data lines, each with its "\n"), and the last status event's data. */
static void sse_log(const struct sw_buf *body, struct sw_buf *log, char *status, size_t cap, uint64_t *last_id)
{
	log->len = 0;
	if (status)
		status[0] = '\0';
	const char *p = body->data, *end = body->data + body->len;
	bool is_status = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		size_t n = (size_t)(nl - p);
		if (n == 0)
			is_status = false;
		else if (n >= 6 && memcmp(p, "data: ", 6) == 0) {
			if (is_status && status)
				snprintf(status, cap, "%.*s", (int)n - 6, p + 6);
			else {
				sw_buf_append(log, p + 6, n - 6);
				sw_buf_append(log, "\n", 1);
			}
		} else if (n == 13 && memcmp(p, "event: status", 13) == 0) {
			is_status = true;
		} else if (n > 4 && memcmp(p, "id: ", 4) == 0 && last_id) {
			*last_id = strtoull(p + 4, NULL, 10);
		}
		p = nl + 1;
	}
}

static char *file_of(const char *id, size_t *ret_len)
{
	char path[256];
	sw_deploy_log_path(dir, id, path, sizeof(path));
	return scratch_read(path, ret_len);
}

static bool log_is_file(const struct sw_buf *log, const char *id)
{
	size_t n;
	char *f = file_of(id, &n);
	bool same = f && n == log->len && memcmp(f, log->data, n) == 0;
	if (!same)
		fprintf(stderr, "  stream log (%zu bytes) is not the file (%zu bytes)\n", log->len, f ? n : 0);
	free(f);
	return same;
}

/* The server running, a fresh deployment and its writer with one line
 * written; secrets scrubbed. NULL when it cannot be opened. */
static struct sw_deploy_log *server_log(const char **ret_id, const char *first, const char *secret)
{
	start_server();
	*ret_id = new_id();
	const char *secrets[] = { secret };
	struct sw_deploy_log *l = sw_deploy_log_open(dir, *ret_id, 64u << 20, secrets, secret ? 1 : 0);
	if (l && first)
		sw_deploy_log_line(l, first, strlen(first));
	return l;
}

/* A reader of the live log of id on a new connection (extra: header lines). */
static void live_reader(struct client *c, const char *id, const char *extra, int rcvbuf)
{
	client_connect(c, rcvbuf);
	client_send(c, "GET /t/live/%s HTTP/1.1\r\nHost: x\r\n%s\r\n", id, extra);
}

#define SUCCEEDED_EVENT "{\"status\":\"SUCCEEDED\",\"errorMessage\":null}"

/* The stream c read is the whole log file of id, then the status event
 * whose data is want. */
static bool stream_is_log_then(const struct client *c, const char *id, const char *want)
{
	struct sw_buf log = { 0 };
	char status[256];
	sse_log(&c->body, &log, status, sizeof(status), NULL);
	bool same = log_is_file(&log, id);
	if (strcmp(status, want) != 0) {
		fprintf(stderr, "  status event \"%s\", not \"%s\"\n", status, want);
		same = false;
	}
	sw_buf_release(&log);
	return same;
}

TEST(live_stream_sends_the_file_then_live_lines_then_the_status)
{
	const char *id;
	struct sw_deploy_log *l = server_log(&id, "==> BUILDING", "hunter2");
	REQUIRE(l);
	sw_deploy_log_line(l, "Step 1/3 : FROM base", 20);
	SET(live_status, "BUILDING");
	struct client c;
	live_reader(&c, id, "", 0);
	REQUIRE(client_wait(&c, "Step 1/3", 5000));
	CHECK_INT_EQ(c.status, 200);
	CHECK(strstr(c.head, "Content-Type: text/event-stream") != NULL);
	CHECK(c.chunked);
	CHECK(strstr(c.head, "Cache-Control: no-store") != NULL);
	for (int i = 0; i < 50; i++)
		sw_deploy_log_printf(l, "live line %d with hunter2 in it", i);
	REQUIRE(client_wait(&c, "live line 49", 5000));
	sw_deploy_log_end(l, "FAILED", "the build broke (hunter2)");
	REQUIRE(client_wait(&c, NULL, 5000));
	CHECK(stream_is_log_then(&c, id, "{\"status\":\"FAILED\",\"errorMessage\":\"the build broke (***)\"}"));
	CHECK(!memmem(c.body.data, c.body.len, "hunter2", 7));
	/* The stream ended cleanly: the connection serves the next request. */
	SET(live_status, "FAILED");
	SET(live_error, "from the row");
	client_send(&c, "GET /t/live/%s HTTP/1.1\r\nHost: x\r\n\r\n", id);
	bool done = client_wait(&c, NULL, 5000);
	SET(live_error, (const char *)NULL);
	REQUIRE(done);
	CHECK(stream_is_log_then(&c, id, "{\"status\":\"FAILED\",\"errorMessage\":\"from the row\"}"));
	client_close(&c);
}

TEST(last_event_id_resumes_after_that_offset_and_at_the_next_line_inside_one)
{
	const char *id;
	struct sw_deploy_log *l = server_log(&id, "aaaa", NULL); /* 0..5 */
	REQUIRE(l);
	sw_deploy_log_line(l, "bbbb", 4); /* 5..10 */
	sw_deploy_log_line(l, "cccc", 4); /* 10..15 */
	sw_deploy_log_close(l, NULL);
	SET(live_status, "SUCCEEDED");
	const struct {
		const char *last_id;
		const char *want;
	} cases[] = { { "5", "bbbb\ncccc\n" }, { "7", "cccc\n" }, { "10", "cccc\n" },
		      { "15", "" }, { "0", "aaaa\nbbbb\ncccc\n" }, { "junk", "aaaa\nbbbb\ncccc\n" } };
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		struct client c;
		char header[64];
		snprintf(header, sizeof(header), "Last-Event-ID: %s\r\n", cases[i].last_id);
		live_reader(&c, id, header, 0);
		REQUIRE(client_wait(&c, NULL, 5000));
		struct sw_buf log = { 0 };
		char status[128];
		uint64_t last = 0;
		sse_log(&c.body, &log, status, sizeof(status), &last);
		sw_buf_append(&log, "", 1);
		if (strcmp(log.data, cases[i].want) != 0)
			fprintf(stderr, "  Last-Event-ID %s: got \"%s\"\n", cases[i].last_id, log.data);
		CHECK_STR_EQ(log.data, cases[i].want);
		if (cases[i].want[0])
			CHECK_INT_EQ(last, 15);
		CHECK_STR_EQ(status, SUCCEEDED_EVENT);
		sw_buf_release(&log);
		client_close(&c);
	}
}

TEST(a_deployment_run_elsewhere_is_polled_until_its_status_is_final)
{
	start_server();
	const char *id = new_id();
	char path[256];
	sw_deploy_log_path(dir, id, path, sizeof(path));
	/* Written by "another process": no writer of this process. */
	char logs[128];
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	mkdir(logs, 0700);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "before\n", 7) == 7);
	SET(live_status, "BUILDING");
	SET(poll_status, "BUILDING");
	struct client c;
	live_reader(&c, id, "", 0);
	REQUIRE(client_wait(&c, "before", 5000));
	REQUIRE(write(fd, "after one\npartial", 17) == 17);
	REQUIRE(client_wait(&c, "after one", 5000));
	CHECK(!memmem(c.body.data, c.body.len, "partial", 7)); /* only whole lines */
	REQUIRE(write(fd, " line\n", 6) == 6);
	REQUIRE(client_wait(&c, "partial line", 5000));
	SET(poll_status, "SUCCEEDED");
	REQUIRE(client_wait(&c, NULL, 5000));
	CHECK(stream_is_log_then(&c, id, SUCCEEDED_EVENT));
	close(fd);
	client_close(&c);
}

TEST(a_reader_waiting_for_a_queued_deployment_goes_live_when_its_writer_opens)
{
	start_server();
	const char *id = new_id();
	SET(live_status, "QUEUED");
	SET(poll_status, "QUEUED");
	struct client c;
	live_reader(&c, id, "", 0);
	usleep(200 * 1000);
	struct sw_deploy_log *l = sw_deploy_log_open(dir, id, 1 << 20, NULL, 0);
	REQUIRE(l);
	sw_deploy_log_line(l, "cloning", 7);
	REQUIRE(client_wait(&c, "cloning", 5000));
	/* The build job closes the log; the deploy job opens it again. */
	sw_deploy_log_close(l, NULL);
	l = sw_deploy_log_open(dir, id, 1 << 20, NULL, 0);
	REQUIRE(l);
	sw_deploy_log_line(l, "starting", 8);
	REQUIRE(client_wait(&c, "starting", 5000));
	sw_deploy_log_close(l, "SUCCEEDED");
	REQUIRE(client_wait(&c, NULL, 5000));
	CHECK(stream_is_log_then(&c, id, SUCCEEDED_EVENT));
	client_close(&c);
	SET(poll_status, "BUILDING");
}

TEST(readers_share_each_live_chunk_one_allocation_for_all)
{
	const char *id;
	struct sw_deploy_log *l = server_log(&id, "ready", NULL);
	REQUIRE(l);
	SET(live_status, "BUILDING");
	enum { N = 64 };
	static struct client cs[N];
	for (int i = 0; i < N; i++) {
		live_reader(&cs[i], id, "", 0);
	}
	for (int i = 0; i < N; i++)
		REQUIRE(client_wait(&cs[i], "ready", 5000));
	struct sw_hub_counters before = counted();
	sw_deploy_log_line(l, "one shared line", 15);
	for (int i = 0; i < N; i++)
		REQUIRE(client_wait(&cs[i], "one shared line", 5000));
	struct sw_hub_counters after = counted();
	CHECK_INT_EQ(after.chunks_allocated - before.chunks_allocated, 1);
	CHECK_INT_EQ(after.pulled - before.pulled, N);
	/* Once every reader has written the next line too, nothing refers to
	 * the first: it is freed, once. */
	sw_deploy_log_line(l, "and the next", 12);
	for (int i = 0; i < N; i++)
		REQUIRE(client_wait(&cs[i], "and the next", 5000));
	for (int w = 0; w < 100 && counted().chunks_freed - before.chunks_freed < 1; w++)
		usleep(10 * 1000);
	CHECK_INT_EQ(counted().chunks_allocated - before.chunks_allocated, 2);
	/* OPENED (the chain's link before the first line) and the first line. */
	CHECK_INT_EQ(counted().chunks_freed - before.chunks_freed, 2);
	sw_deploy_log_close(l, "SUCCEEDED");
	for (int i = 0; i < N; i++) {
		CHECK(client_wait(&cs[i], NULL, 5000));
		client_close(&cs[i]);
	}
}

TEST(past_the_readers_bound_a_new_reader_gets_503)
{
	start_server();
	const char *id = new_id();
	REQUIRE(fill_readers(id));
	SET(live_status, "BUILDING");
	struct client c;
	live_reader(&c, id, "", 0);
	REQUIRE(client_wait(&c, NULL, 5000));
	CHECK_INT_EQ(c.status, 503);
	CHECK(strstr(c.head, "Retry-After: ") != NULL);
	sw_buf_append(&c.body, "", 1);
	CHECK(strstr(c.body.data, "\"SERVICE_UNAVAILABLE\"") != NULL);
	client_close(&c);
	drop_readers();
}

TEST(a_reader_too_slow_loses_its_stream_and_the_writer_goes_on)
{
	const char *id;
	struct sw_deploy_log *l = server_log(&id, NULL, NULL);
	REQUIRE(l);
	SET(live_status, "BUILDING");
	struct client slow, fast;
	live_reader(&slow, id, "", 4096);
	REQUIRE(client_wait(&slow, NULL, 300) == false); /* the head, nothing more */
	char line[2000];
	memset(line, 'x', sizeof(line));
	uint64_t t0 = sw_now_ms();
	for (int i = 0; i < 12000; i++)
		REQUIRE(sw_deploy_log_line(l, line, sizeof(line)) == 0);
	uint64_t dt = sw_now_ms() - t0;
	(void)dt;
	/* The server closed it without the end of the body. */
	CHECK(client_wait_closed(&slow, 10000));
	client_close(&slow);
	/* A reader that reads gets everything, whether it attaches before the
	 * writer's end (the hub's status) or after it (the row's, polled). */
	SET(poll_status, "SUCCEEDED");
	live_reader(&fast, id, "", 0);
	sw_deploy_log_close(l, "SUCCEEDED");
	REQUIRE(client_wait(&fast, NULL, 20000));
	CHECK(stream_is_log_then(&fast, id, SUCCEEDED_EVENT));
	client_close(&fast);
	SET(poll_status, "BUILDING");
}

static void check_file_body(int *sw_failed_, bool sendfile_path)
{
	sw_http_force_sendfile(sendfile_path);
	snprintf(file_path, sizeof(file_path), "%s/blob", dir);
	FILE *f = fopen(file_path, "wb");
	size_t n = 3 * 1024 * 1024 + 17;
	char *want = malloc(n);
	for (size_t i = 0; i < n; i++)
		want[i] = (char)(i * 7 + i / 4096);
	fwrite(want, 1, n, f);
	fclose(f);
	struct client c;
	client_connect(&c, 0);
	/* Pipelined: the second answer waits for the whole file. */
	client_send(&c, "GET /t/file HTTP/1.1\r\nHost: x\r\n\r\nHEAD /t/file HTTP/1.1\r\nHost: x\r\n\r\n");
	REQUIRE(client_wait(&c, NULL, 10000));
	CHECK_INT_EQ(c.status, 200);
	CHECK_INT_EQ(c.body.len, n);
	CHECK(c.body.len == n && memcmp(c.body.data, want, n) == 0);
	/* HEAD: the length, no body. */
	client_next(&c, true);
	REQUIRE(client_wait(&c, NULL, 5000));
	CHECK_INT_EQ(c.status, 200);
	char cl[64];
	snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", n);
	CHECK(strstr(c.head, cl) != NULL);
	client_close(&c);
	free(want);
	sw_http_force_sendfile(false);
}

TEST(a_file_body_is_spliced_whole)
{
	start_server();
	check_file_body(sw_failed_, false);
}

TEST(a_file_body_goes_by_sendfile_where_splice_is_not_used)
{
	start_server();
	check_file_body(sw_failed_, true);
}

static void post_end(void)
{
	sw_loop_post(GET(server_loop), t_stream_end, NULL);
}

/* A reader of /t/stream that has its "hello" (version: "1.1" or "1.0"). */
static bool stream_reader(struct client *c, const char *version)
{
	start_server();
	client_connect(c, 0);
	client_send(c, "GET /t/stream HTTP/%s\r\nHost: x\r\n\r\n", version);
	return client_wait(c, "data: hello", 3000);
}

TEST(a_stream_sends_heartbeats_ends_cleanly_and_keeps_the_connection)
{
	struct client c;
	REQUIRE(stream_reader(&c, "1.1"));
	REQUIRE(client_wait(&c, ": hb\n\n", 3000));
	post_end();
	REQUIRE(client_wait(&c, NULL, 3000));
	CHECK(memmem(c.body.data, c.body.len, "data: bye\n\n", 11) != NULL);
	CHECK_INT_EQ(GET(t_closed_reason), 1); /* ended by its owner: closed never ran */
	client_send(&c, "GET /t/stream HTTP/1.1\r\nHost: x\r\n\r\n");
	REQUIRE(client_wait(&c, "data: hello", 3000));
	/* The client goes away: the owner hears it. */
	client_close(&c);
	for (int i = 0; i < 200 && GET(t_closed_reason) == 1; i++)
		usleep(10 * 1000);
	CHECK_INT_EQ(GET(t_closed_reason), -EPIPE);
}

TEST(an_http_1_0_stream_is_delimited_by_the_close)
{
	struct client c;
	REQUIRE(stream_reader(&c, "1.0"));
	CHECK(!c.chunked);
	CHECK(strstr(c.head, "Connection: close") != NULL);
	post_end();
	CHECK(client_wait(&c, NULL, 3000));
	CHECK(c.closed);
	CHECK(memmem(c.body.data, c.body.len, "data: bye\n\n", 11) != NULL);
	client_close(&c);
}

/* An echoing session on path: the first bytes ride with the request, the
 * rest come later, a request line is not parsed as one, "bye" ends it;
 * then a client that goes away mid-session (a leak of the owner's state
 * would fail the sanitizer build). false, saying where, when one fails. */
static bool echo_session(const char *path)
{
	struct client c;
	const char *failed = NULL;
	client_connect(&c, 0);
	client_send(&c, "GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\n"
			"Connection: Upgrade\r\n\r\nhello ", path);
	if (!client_wait(&c, "HELLO ", 3000) || c.status != 101)
		failed = "the 101 and the first bytes' echo";
	if (!failed && write(c.fd, "GET / HTTP/1.1\r\n\r\n", 18) == 18 &&
	    !client_wait(&c, "GET / HTTP/1.1", 3000))
		failed = "a request line echoed, not parsed";
	if (!failed && write(c.fd, "bye", 3) == 3 &&
	    !(client_wait(&c, "BYE", 3000) && client_wait_closed(&c, 3000)))
		failed = "the end after bye";
	client_close(&c);
	if (!failed) {
		client_connect(&c, 0);
		client_send(&c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\nhi", path);
		if (!client_wait(&c, "HI", 3000))
			failed = "the session of a client that leaves";
		client_close(&c);
	}
	if (failed)
		fprintf(stderr, "  echo session on %s: %s failed\n", path, failed);
	return !failed;
}

TEST(a_producer_takes_the_connection_over_after_101_without_the_state_machine_knowing)
{
	start_server();
	CHECK(echo_session("/t/upgrade"));
}

TEST(the_upgrade_face_hands_a_connection_to_its_owner_and_closes_it_once)
{
	start_server();
	int before = __atomic_load_n(&upgraded_closed, __ATOMIC_SEQ_CST);
	CHECK(echo_session("/t/upgraded"));
	for (int i = 0; i < 300 && __atomic_load_n(&upgraded_closed, __ATOMIC_SEQ_CST) < before + 2; i++)
		usleep(10000);
	CHECK_INT_EQ(__atomic_load_n(&upgraded_closed, __ATOMIC_SEQ_CST), before + 2);
}

TEST(a_stopping_server_ends_streams_cleanly)
{
	/* An upgraded connection is told first (its owner's shutdown). */
	struct client up;
	start_server();
	client_connect(&up, 0);
	client_send(&up, "GET /t/upgraded HTTP/1.1\r\nHost: x\r\n\r\nstill here");
	REQUIRE(client_wait(&up, "STILL HERE", 3000));
	const char *id;
	struct sw_deploy_log *l = server_log(&id, "running", NULL);
	REQUIRE(l);
	SET(live_status, "BUILDING");
	struct client c;
	live_reader(&c, id, "", 0);
	REQUIRE(client_wait(&c, "running", 5000));
	sw_main_thread_request_shutdown(0);
	CHECK(client_wait(&c, NULL, 5000)); /* the last chunk: a clean end */
	CHECK(client_wait_closed(&c, 5000));
	client_close(&c);
	CHECK(client_wait(&up, "GOODBYE", 5000));
	CHECK(client_wait_closed(&up, 5000));
	client_close(&up);
	pthread_join(server_thread, NULL);
	sw_deploy_log_close(l, NULL);
	sw_workers_stop();
	sw_router_free(router);
	sw_config_release(&cfg);
	/* Nothing of the hub is left: every chunk was freed. */
	struct sw_hub_counters k = counted();
	CHECK_INT_EQ(k.chunks_allocated, k.chunks_freed);
}

TEST_MAIN()
