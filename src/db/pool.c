/* The PostgreSQL pool: a few libpq connections per loop thread, driven
 * non-blocking on that loop's ring. This file stays whole, over 1,000
 * lines: it is one state machine. A connection's step (connect, prepare,
 * a query's round trip, LISTEN) decides the next, and the query queue and
 * the listener both break, re-arm and hand back the connection they run
 * on. Cut into files (connections, queries, LISTEN) each called the
 * others: three files in a circle. It is read in sections instead: the
 * connections (connect, prepare, poll, loss), health and the pool's life;
 * then the query queue and a query's round trip; then LISTEN and
 * notifications; pool_internal.h holds the structures they share.
 *
 * Each connection is a small state machine:
 *
 *   DOWN --(backoff timer)--> CONNECTING --(PQconnectPoll OK)--> PREPARING
 *     ^                                                             |
 *     |                    every registered statement prepared      |
 *     |                    in one pipeline round trip               v
 *     +----(failure, loss, query timeout)------------------ IDLE <--> BUSY
 *                                                                   (pipeline)
 *                                                            ^ |
 *                                    LISTEN answered         | | the pool needs
 *                                                            | v a listener
 *                                                         LISTENING
 *
 * libpq says which readiness it needs (PQconnectPoll's READING/WRITING,
 * PQflush's 1); we arm a one-shot sw_io_poll on PQsocket() for it. An idle
 * connection keeps POLLIN armed: readability there means a notification, a
 * notice or a server going away, so a restart of the database is noticed
 * at once, not at the next query. When a query is sent on an idle
 * connection the same POLLIN poll keeps serving it.
 *
 * Queries are pipelined (libpq pipeline mode): a BUSY connection has up to
 * SW_DB_PIPELINE_DEPTH queries on the wire. A statement that may write is
 * followed by its own sync, so it is its own implicit transaction and an
 * error in one does not abort the next, exactly as outside pipeline mode;
 * it is answered at that sync, once committed. A statement marked
 * reads_only joins the connection's batch instead: the reads one turn of
 * the loop sends on a connection share one sync, sent at the turn's end
 * (sync_batches), because libpq 15's PQpipelineSync flushes, one write to
 * the server per sync. A read is answered as soon as its result is in; a
 * read that fails aborts the rest of its batch on the server, and those
 * (PGRES_PIPELINE_ABORTED) go back to the head of the queue. A query goes
 * to an idle connection if there is one, else (a read) to a busy one with
 * its batch open, else to the busy connection with the shortest pipeline
 * that has room, else it waits in the queue. The answers of a whole batch
 * are read with one receive and PostgreSQL works through the batch without
 * waiting for us: a round trip per batch, not per query, which is most of
 * stewardd's own CPU on a read that queries the database.
 * A connection leaves pipeline mode when its pipeline is empty (IDLE;
 * LISTEN is a simple query and needs that). The price: a connection that
 * is lost, or whose oldest query passes its deadline, fails every query
 * on its pipeline (they were sent, so none is sent again).
 *
 * Listening (sw_db_pool_listen): exactly one connection, pool->listener,
 * holds the LISTEN. Once a channel is set and no connection listens, the
 * first connection to be IDLE (just prepared, just done with a query, or
 * already idle when the channel is set or the listener is lost) sends
 * LISTEN "<channel>" before taking queries: LISTENING counts as up but is
 * not dispatched to, and has the query timeout as its deadline. When it is
 * answered, a resync is due (whatever was sent while nobody listened is
 * lost) and the connection serves queries like any other. When the
 * listener is lost, another idle connection takes over at once, else the
 * next one to become idle. A LISTEN the server refuses with an SQL error
 * (a hot standby) keeps the connection in service and is retried after
 * SW_DB_RECONNECT_MAX_MS rather than cycling connections.
 *
 * After every PQconsumeInput (idle, query, prepare and LISTEN steps) the
 * notifications libpq parsed are moved, copied, into the pool's queue;
 * the queue is delivered (a due resync first, then the payloads in
 * arrival order) at the end of on_poll, once the step is over and the
 * connection is in a consistent state, so a callback may query or close
 * the pool. A queue beyond MAX_QUEUED_NOTIFICATIONS, or an allocation
 * failure, drops the queued payloads for one resync. Nothing is delivered
 * once the pool is closing.
 *
 * At most one poll is in flight per connection, and its op lives in the
 * connection, which lives as long as the pool. Abandoning a poll (the
 * connection is dropped, or a different mask is needed) cancels it and
 * marks it stale; its completion is then ignored, and a new poll is armed
 * only after it, so two completions never share one op. The pool itself
 * is freed from a timer callback once no poll is in flight and no query
 * is running, never from inside a call stack that still uses it.
 *
 * Every query has a deadline from sw_db_query() on (queue time counts).
 * A query still queued at its deadline just fails with -ETIMEDOUT; a query
 * on the wire also costs its connection, which is dropped and re-made
 * (PQcancel would block the loop). The server's statement_timeout is set
 * to the same value so that an abandoned statement does not run on (its
 * 57014 then also reads as -ETIMEDOUT). While no connection is up and the
 * last attempt failed, queries fail with -ECONNRESET at the next turn of
 * the loop instead of waiting out their deadline, so an outage answers
 * 503 at once. Callbacks never run inside sw_db_query().
 *
 * Health is cached: any result from the server counts as a verification;
 * /health reads the cache and, when it is older than
 * SW_DB_HEALTH_MAX_AGE_MS, queues a ping and answers with what it knows.
 * Reasons are short fixed phrases ("connection refused"), never libpq's
 * text, which names hosts and socket paths; that text goes to the log
 * once per change.
 *
 * Known limit: libpq resolves host names synchronously inside
 * PQconnectStart; use an IP address or a unix socket path in
 * DATABASE_URL for a loop that never waits on DNS. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/db/statements.h"
#include "db/pool_internal.h"

static void start_connect(struct conn *c);

#if SW_CHECKS
void sw_db_pool_check(const struct sw_db_pool *pool)
{
	unsigned up = 0, queued = 0;
	for (unsigned i = 0; i < pool->size; i++) {
		const struct conn *c = &pool->conns[i];
		up += c->state == CONN_IDLE || c->state == CONN_BUSY || c->state == CONN_LISTENING;
		SW_ASSERT(c->state == CONN_DOWN || c->pg);
		unsigned sent = 0;
		for (const struct query *q = c->sent_head; q; q = q->next) {
			SW_ASSERT(q->conn == c && (q->next || q == c->sent_tail));
			sent++;
		}
		SW_ASSERT(sent == c->nsent && sent <= SW_DB_PIPELINE_DEPTH);
		SW_ASSERT(!sent || c->state == CONN_BUSY);
		SW_ASSERT(!c->batch_open || (sent && c->state == CONN_BUSY) || c->break_reason);
		SW_ASSERT(!c->nsyncs || c->state == CONN_BUSY);
		SW_ASSERT(!c->poll_stale || c->poll_inflight);
	}
	SW_ASSERT(up == pool->nup);
	SW_ASSERT(!pool->listener || pool->listener->state != CONN_DOWN);
	for (const struct query *q = pool->qhead; q; q = q->next) {
		SW_ASSERT(!q->conn && (q->next || q == pool->qtail));
		queued++;
	}
	SW_ASSERT(queued == pool->nqueued);
}
#endif

/* ---- small helpers ---- */

static uint32_t next_rand(struct sw_db_pool *pool)
{
	uint32_t x = pool->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	pool->rng = x ? x : 0x9e3779b9u;
	return pool->rng;
}

static bool contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

/* A short public phrase for a libpq failure message. */
const char *sw_db_classify(const char *msg)
{
	if (contains(msg, "Connection refused") || contains(msg, "No such file or directory"))
		return "connection refused";
	if (contains(msg, "timeout expired") || contains(msg, "timed out"))
		return "database did not answer in time";
	if (contains(msg, "authentication failed") || contains(msg, "no pg_hba.conf entry") ||
	    contains(msg, "password"))
		return "authentication failed";
	if (contains(msg, "does not exist"))
		return "database or role does not exist";
	if (contains(msg, "starting up"))
		return "database is starting up";
	if (contains(msg, "shutting down") || contains(msg, "administrator command"))
		return "database is shutting down";
	if (contains(msg, "too many clients") || contains(msg, "connection slots"))
		return "database has no free connection slots";
	if (contains(msg, "translate host name") || contains(msg, "Name or service not known"))
		return "database host not found";
	if (contains(msg, "SSL"))
		return "TLS with the database failed";
	if (contains(msg, "closed the connection") || contains(msg, "connection to server was lost") ||
	    contains(msg, "EOF"))
		return "connection to the database lost";
	return "cannot connect to the database";
}

/* Logs a connection problem once per distinct message. */
void sw_db_log_failure(struct sw_db_pool *pool, const char *detail)
{
	char line[256];
	if (!detail || !*detail)
		return;
	size_t n = strcspn(detail, "\r\n");
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, detail, n);
	line[n] = '\0';
	if (strcmp(line, pool->logged) == 0)
		return;
	memcpy(pool->logged, line, n + 1);
	sw_log_warn("database connection problem loop=%u: %s", sw_loop_index(pool->loop), line);
}

static void notice_receiver(void *arg, const PGresult *res)
{
	struct conn *c = arg;
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	/* Class 57, operator intervention: admin shutdown, crash shutdown. */
	if (state && strncmp(state, "57", 2) == 0)
		c->notice_reason = "database is shutting down";
}

/* ---- the poll op ---- */

static void submit_cancel(struct conn *c)
{
	c->cancel_pending = sw_io_cancel(c->pool->loop, &c->poll) < 0;
}

/* Stops caring about the poll in flight, if any. */
static void abandon_poll(struct conn *c)
{
	c->want_mask = 0;
	if (c->poll_inflight && !c->poll_stale) {
		c->poll_stale = true;
		submit_cancel(c);
	}
}

/* Arms the connection's poll for mask (after the stale one, if any has
 * still to complete). On failure the connection is broken (sw_db_conn_break). */
void sw_db_conn_watch(struct conn *c, unsigned mask)
{
	if (c->poll_inflight) {
		if (!c->poll_stale && c->poll_mask == mask)
			return;
		c->want_mask = mask;
		if (!c->poll_stale) {
			c->poll_stale = true;
			submit_cancel(c);
		} else if (c->cancel_pending) {
			submit_cancel(c);
		}
		return;
	}
	SW_ASSERT(c->pg && mask);
	int fd = PQsocket(c->pg);
	int r = fd < 0 ? -EBADF : sw_io_poll(c->pool->loop, &c->poll, fd, mask);
	if (r < 0) {
		sw_db_conn_break(c, "cannot watch the database connection", strerror(-r));
		return;
	}
	c->poll_inflight = true;
	c->poll_mask = mask;
	c->want_mask = 0;
}

/* ---- connections ---- */

static void reconnect_timer(struct sw_timer *t)
{
	struct conn *c = SW_CONTAINER_OF(t, struct conn, timer);
	if (c->cancel_pending)
		submit_cancel(c);
	if (!c->pool->closing)
		start_connect(c);
}

static void connect_deadline(struct sw_timer *t)
{
	struct conn *c = SW_CONTAINER_OF(t, struct conn, timer);
	struct sw_db_pool *pool = c->pool;
	sw_db_conn_lost(c, -ETIMEDOUT, "database did not answer in time", "connecting timed out");
	sw_db_check_closed(pool);
}

static void broken_timer(struct sw_timer *t)
{
	struct conn *c = SW_CONTAINER_OF(t, struct conn, timer);
	struct sw_db_pool *pool = c->pool;
	sw_db_conn_lost(c, -ECONNRESET, c->break_reason, c->break_detail);
	sw_db_check_closed(pool);
}

/* A failure found where callbacks must not run (inside sw_db_query(), or
 * deep in a handler): the connection leaves service now and is dropped
 * from a timer at the next turn of the loop. */
void sw_db_conn_break(struct conn *c, const char *reason, const char *detail)
{
	struct sw_db_pool *pool = c->pool;
	if (c->state == CONN_IDLE)
		c->state = CONN_BUSY; /* not dispatched to any more */
	c->break_reason = reason;
	snprintf(c->break_detail, sizeof(c->break_detail), "%s", detail ? detail : "");
	if (sw_timer_start(pool->loop, &c->timer, 0, broken_timer) < 0)
		sw_log_error("database pool: cannot arm a timer (out of memory)");
}

static void schedule_reconnect(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	if (pool->closing)
		return;
	/* Jitter of +-25% keeps the loops of a process from reconnecting in step. */
	uint64_t d = c->backoff_ms;
	d = d * 3 / 4 + next_rand(pool) % (d / 2 + 1);
	c->backoff_ms = SW_MIN(c->backoff_ms * 2, SW_DB_RECONNECT_MAX_MS);
	if (sw_timer_start(pool->loop, &c->timer, d, reconnect_timer) < 0)
		sw_log_error("database pool: cannot arm the reconnect timer (out of memory)");
}

/* Drops the connection: the poll is abandoned (its completion comes later
 * and is ignored), the query on the wire, if any, fails with code, and a
 * reconnection is scheduled unless the pool is closing. */
void sw_db_conn_lost(struct conn *c, int code, const char *reason, const char *detail)
{
	struct sw_db_pool *pool = c->pool;
	bool was_up = c->state == CONN_IDLE || c->state == CONN_BUSY ||
		      c->state == CONN_LISTENING;
	bool was_connecting = c->state == CONN_CONNECTING || c->state == CONN_PREPARING;
	if (c->notice_reason && code == -ECONNRESET)
		reason = c->notice_reason;
	if (c->state == CONN_DOWN)
		return;
	bool was_listener = pool->listener == c;
	if (was_listener)
		pool->listener = NULL;

	/* The pipeline fails as a whole: its queries were sent (any of them
	 * may have run), so none is sent again. */
	struct query *sent = c->sent_head;
	c->sent_head = c->sent_tail = NULL;
	c->nsent = 0;
	c->nsyncs = 0;
	c->batch_open = false;
	for (struct query *q = sent; q; q = q->next)
		q->conn = NULL;
	PQclear(c->result);
	c->result = NULL;
	abandon_poll(c);
	sw_timer_stop(pool->loop, &c->timer);
	sw_db_log_failure(pool, detail);
	PQfinish(c->pg);
	c->pg = NULL;
	c->state = CONN_DOWN;
	c->flushing = false;
	c->notice_reason = NULL;
	c->break_reason = NULL;
	if (was_up)
		pool->nup--;
	if (pool->nup == 0) {
		pool->verified_up = false;
		pool->reason = reason;
	}
	schedule_reconnect(c);
	/* Another connection takes over at once if one is idle: while
	 * nobody listens, revocations go unheard (the resync comes when
	 * listening resumes). */
	if (was_listener)
		sw_db_claim_listener(pool, NULL);

	while (sent) {
		struct query *q = sent;
		sent = q->next;
		q->next = NULL;
		PQclear(q->result);
		q->result = NULL;
		sw_db_query_finish(q, NULL, code == -ETIMEDOUT ? -ETIMEDOUT : -ECONNRESET, NULL, reason);
	}
	/* The database is unreachable: queued queries would only wait for
	 * their deadline, so they fail now, and new ones soon (fail_timer). */
	if (was_connecting && pool->nup == 0 && !pool->closing) {
		pool->down = true;
		sw_db_fail_queued(pool, -ECONNRESET, reason);
	}
}

static void start_connect(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	if (SW_NEVER(c->state != CONN_DOWN))
		return;
	c->pg = PQconnectStartParams(pool->keywords, pool->values, 0);
	if (!c->pg) {
		schedule_reconnect(c);
		return;
	}
	PQsetNoticeReceiver(c->pg, notice_receiver, c);
	c->state = CONN_CONNECTING;
	if (PQstatus(c->pg) == CONNECTION_BAD) {
		sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	if (sw_timer_start(pool->loop, &c->timer, pool->connect_timeout_ms, connect_deadline) < 0) {
		sw_db_conn_lost(c, -ECONNRESET, "cannot connect to the database", "out of memory");
		return;
	}
	c->break_reason = NULL;
	/* libpq: before the first PQconnectPoll, act as if it said WRITING. */
	sw_db_conn_watch(c, POLLOUT);
}

static void conn_connect_step(struct conn *c)
{
	switch (PQconnectPoll(c->pg)) {
	case PGRES_POLLING_READING:
		sw_db_conn_watch(c, POLLIN);
		return;
	case PGRES_POLLING_WRITING:
		sw_db_conn_watch(c, POLLOUT);
		return;
	case PGRES_POLLING_OK:
		break;
	default:
		sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}

	/* Established: prepare every statement in one pipeline. */
	size_t n;
	const struct sw_db_stmt *const *stmts = sw_db_statements(&n);
	if (PQsetnonblocking(c->pg, 1) != 0 || !PQenterPipelineMode(c->pg))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!PQsendPrepare(c->pg, stmts[i]->name, stmts[i]->sql, stmts[i]->nparams, NULL))
			goto fail;
	if (!PQpipelineSync(c->pg))
		goto fail;
	if (!sw_db_conn_push(c))
		goto fail;
	c->prepared = 0;
	c->state = CONN_PREPARING;
	sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
	return;
fail:
	sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
}

static void conn_ready(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	sw_timer_stop(pool->loop, &c->timer);
	c->state = CONN_IDLE;
	c->backoff_ms = SW_DB_RECONNECT_MIN_MS;
	pool->nup++;
	pool->down = false;
	sw_timer_stop(pool->loop, &pool->fail_timer);
	pool->verified_up = true;
	pool->last_ok_ms = now_ms(pool);
	pool->reason = NULL;
	pool->logged[0] = '\0';
	sw_db_claim_listener(pool, c);
	sw_db_dispatch(pool);
	if (c->state == CONN_IDLE)
		sw_db_conn_watch(c, POLLIN);
}

static void conn_prepare_step(struct conn *c)
{
	if (c->flushing && !sw_db_conn_push(c))
		goto lost;
	if (!PQconsumeInput(c->pg))
		goto lost;

	size_t nstmts;
	const struct sw_db_stmt *const *stmts = sw_db_statements(&nstmts);
	/* Results: (COMMAND_OK, NULL) per statement, then PIPELINE_SYNC. The
	 * guard bounds the loop should libpq ever behave otherwise. */
	for (unsigned guard = 0; guard < 4 * nstmts + 8 && !PQisBusy(c->pg); guard++) {
		PGresult *r = PQgetResult(c->pg);
		if (!r)
			continue;
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			if (!PQexitPipelineMode(c->pg))
				goto lost;
			sw_db_drain_notifies(c);
			conn_ready(c);
			return;
		}
		if (st != PGRES_COMMAND_OK) {
			/* The server went away meanwhile, or a statement does not
			 * compile (the schema is not migrated). Either way:
			 * retry with backoff. */
			char detail[512];
			const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
			const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
			bool server_gone = PQstatus(c->pg) == CONNECTION_BAD || !state ||
					   strncmp(state, "57", 2) == 0 || strncmp(state, "08", 2) == 0;
			snprintf(detail, sizeof(detail), "preparing statement %s failed: %s",
				 c->prepared < nstmts ? stmts[c->prepared]->name : "?",
				 m ? m : PQresStatus(st));
			PQclear(r);
			sw_db_conn_lost(c, -ECONNRESET,
				  server_gone ? sw_db_classify(detail) : "database schema is not ready", detail);
			return;
		}
		c->prepared++;
		PQclear(r);
	}
	sw_db_drain_notifies(c);
	sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
	return;
lost:
	sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
}

static void conn_idle_step(struct conn *c)
{
	if (!PQconsumeInput(c->pg) || PQstatus(c->pg) == CONNECTION_BAD) {
		sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	sw_db_drain_notifies(c);
	sw_db_conn_watch(c, POLLIN);
}

/* Keeps in *kept the first result of a statement, or its first error. */
void sw_db_keep_result(PGresult **kept, PGresult *r)
{
	if (!*kept) {
		*kept = r;
	} else if (PQresultStatus(r) == PGRES_FATAL_ERROR &&
		   PQresultStatus(*kept) != PGRES_FATAL_ERROR) {
		PQclear(*kept);
		*kept = r;
	} else {
		PQclear(r);
	}
}

/* Reads what a statement on the wire sends back (the LISTEN): keeps the
 * first result, and once the statement is complete calls done(c);
 * meanwhile hands on notifications and keeps the right poll. */
void sw_db_conn_read_step(struct conn *c, void (*done)(struct conn *c))
{
	if (c->flushing && !sw_db_conn_push(c))
		goto lost;
	if (!PQconsumeInput(c->pg))
		goto lost;
	while (!PQisBusy(c->pg)) {
		PGresult *r = PQgetResult(c->pg);
		if (!r) {
			done(c);
			return;
		}
		/* One statement gives one result; several (the LISTENs of
		 * every channel): one failing fails them all. */
		sw_db_keep_result(&c->result, r);
	}
	if (PQstatus(c->pg) == CONNECTION_BAD)
		goto lost;
	sw_db_drain_notifies(c);
	sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
	return;
lost:
	sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
}

void sw_db_on_poll(struct sw_io_op *op, int res, uint32_t flags)
{
	(void)flags;
	struct conn *c = SW_CONTAINER_OF(op, struct conn, poll);
	struct sw_db_pool *pool = c->pool;
	SW_ASSERT(c->poll_inflight);
	POOL_CHECK(pool);
	c->poll_inflight = false;
	if (c->poll_stale) {
		c->poll_stale = false;
		c->cancel_pending = false;
		unsigned want = c->want_mask;
		c->want_mask = 0;
		if (want && c->pg)
			sw_db_conn_watch(c, want);
		sw_db_check_closed(pool);
		return;
	}
	if (c->break_reason) {
		sw_db_check_closed(pool); /* broken_timer() drops it */
		return;
	}
	if (res < 0) {
		sw_db_conn_lost(c, -ECONNRESET, "connection to the database lost", strerror(-res));
		sw_db_check_closed(pool);
		return;
	}
	switch (c->state) {
	case CONN_CONNECTING:
		conn_connect_step(c);
		break;
	case CONN_PREPARING:
		conn_prepare_step(c);
		break;
	case CONN_IDLE:
		conn_idle_step(c);
		break;
	case CONN_BUSY:
		sw_db_conn_query_step(c);
		break;
	case CONN_LISTENING:
		sw_db_conn_listen_step(c);
		break;
	case CONN_DOWN:
		(void)SW_NEVER(true);
		break;
	}
	POOL_CHECK(pool);
	sw_db_deliver_notes(pool);
	sw_db_check_closed(pool);
}

/* ---- health ---- */

static void ping_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_db_pool *pool = arg;
	(void)res;
	pool->ping_inflight = false;
	if (err->code == -ETIMEDOUT) {
		pool->verified_up = false;
		pool->reason = "database did not answer in time";
	}
}

bool sw_db_pool_healthy(struct sw_db_pool *pool, const char **ret_reason)
{
	uint64_t now = now_ms(pool);
	if (pool->nup == 0) {
		*ret_reason = pool->reason ? pool->reason : "no connection to the database";
		return false;
	}
	if (pool->verified_up && pool->last_ok_ms && now - pool->last_ok_ms <= SW_DB_HEALTH_MAX_AGE_MS)
		return true;
	if (!pool->ping_inflight && !pool->closing) {
		if (sw_db_query(pool, &sw_db_stmt_ping, NULL, 0, ping_done, pool) == 0) {
			pool->ping_inflight = true;
		}
	}
	/* A ping still in flight leaves the last state standing: a slow answer
	 * is not a down database. The ping's own deadline (the query timeout)
	 * decides that, in ping_done(). */
	if (!pool->verified_up) {
		*ret_reason = pool->reason ? pool->reason : "database did not answer in time";
		return false;
	}
	return true;
}

void sw_db_pool_attach(struct sw_db_pool *pool)
{
	sw_loop_set_data(pool->loop, pool);
}

struct sw_db_pool *sw_db_pool_of(const struct sw_loop *loop)
{
	return sw_loop_data(loop);
}

/* ---- life cycle ---- */

/* The connection parameters: the caller's conninfo (key=value or URI),
 * with our application name as a fallback and statement_timeout appended
 * to any options it carries. No DNS or I/O happens here. */
static int build_params(struct sw_db_pool *pool, const char *conninfo)
{
	char *errmsg = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &errmsg);
	if (!opts) {
		PQfreemem(errmsg);
		return -EINVAL;
	}
	size_t count = 0, bytes = 0;
	const char *user_options = NULL;
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val)
			continue;
		if (strcmp(o->keyword, "options") == 0) {
			user_options = o->val;
			continue;
		}
		if (strcmp(o->keyword, "fallback_application_name") == 0)
			continue;
		count++;
		bytes += strlen(o->keyword) + strlen(o->val) + 2;
	}
	char extra[64];
	snprintf(extra, sizeof(extra), "-c statement_timeout=%u", pool->query_timeout_ms);
	bytes += sizeof("options") + sizeof("fallback_application_name") + sizeof("stewardd") +
		 (user_options ? strlen(user_options) + 1 : 0) + strlen(extra) + 1;
	count += 2;

	int r = -ENOMEM;
	pool->keywords = calloc(count + 1, sizeof(char *));
	pool->values = calloc(count + 1, sizeof(char *));
	pool->strings = malloc(bytes);
	if (!pool->keywords || !pool->values || !pool->strings)
		goto out;
	char *s = pool->strings;
	size_t i = 0;
#define PUT(dst, str)                              \
	do {                                       \
		size_t n_ = strlen(str) + 1;       \
		memcpy(s, (str), n_);              \
		(dst) = s;                         \
		s += n_;                           \
	} while (0)
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val || strcmp(o->keyword, "options") == 0 ||
		    strcmp(o->keyword, "fallback_application_name") == 0)
			continue;
		PUT(pool->keywords[i], o->keyword);
		PUT(pool->values[i], o->val);
		i++;
	}
	PUT(pool->keywords[i], "fallback_application_name");
	PUT(pool->values[i], "stewardd");
	i++;
	PUT(pool->keywords[i], "options");
	pool->values[i] = s;
	if (user_options)
		s += sprintf(s, "%s ", user_options);
	s += sprintf(s, "%s", extra) + 1;
	i++;
#undef PUT
	pool->keywords[i] = NULL;
	pool->values[i] = NULL;
	r = 0;
out:
	PQconninfoFree(opts);
	return r;
}

static void pool_free(struct sw_db_pool *pool)
{
	sw_turn_cancel(pool->loop, &pool->sync_turn);
	sw_db_drop_notes(pool);
	free(pool->conns);
	free(pool->keywords);
	free(pool->values);
	free(pool->strings);
	free(pool);
}

struct sw_db_pool *sw_db_pool_new(struct sw_loop *loop, const char *conninfo,
				  unsigned size, unsigned query_timeout_ms)
{
	if (!loop || !conninfo || size == 0 || query_timeout_ms == 0) {
		errno = EINVAL;
		return NULL;
	}
	struct sw_db_pool *pool = calloc(1, sizeof(*pool));
	if (!pool) {
		errno = ENOMEM;
		return NULL;
	}
	pool->loop = loop;
	pool->size = size;
	pool->query_timeout_ms = query_timeout_ms;
	pool->connect_timeout_ms = SW_MAX(query_timeout_ms, 1000u);
	pool->rng = (uint32_t)(uintptr_t)pool ^ (sw_loop_index(loop) * 0x9e3779b9u) ^
		    (uint32_t)sw_now_us();
	pool->reason = "connecting to the database";
	int r = build_params(pool, conninfo);
	if (r < 0) {
		pool_free(pool);
		errno = -r;
		return NULL;
	}
	pool->conns = calloc(size, sizeof(*pool->conns));
	if (!pool->conns) {
		pool_free(pool);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < size; i++) {
		struct conn *c = &pool->conns[i];
		c->pool = pool;
		c->poll.cb = sw_db_on_poll;
		c->backoff_ms = SW_DB_RECONNECT_MIN_MS;
	}
	for (unsigned i = 0; i < size; i++)
		start_connect(&pool->conns[i]);
	return pool;
}

static void close_timer(struct sw_timer *t)
{
	struct sw_db_pool *pool = SW_CONTAINER_OF(t, struct sw_db_pool, close_timer);
	void (*done)(void *) = pool->done;
	void *arg = pool->done_arg;
	pool_free(pool);
	if (done)
		done(arg);
}

/* Once closing and nothing is in flight, frees the pool from a timer, so
 * that no caller still on the stack sees it go. */
void sw_db_check_closed(struct sw_db_pool *pool)
{
	if (!pool->closing || sw_timer_armed(&pool->close_timer))
		return;
	for (unsigned i = 0; i < pool->size; i++) {
		struct conn *c = &pool->conns[i];
		if (c->state != CONN_DOWN || c->poll_inflight)
			return;
	}
	if (sw_timer_start(pool->loop, &pool->close_timer, 0, close_timer) < 0)
		sw_log_error("database pool: cannot arm the close timer (out of memory)");
}

void sw_db_pool_close(struct sw_db_pool *pool, void (*done)(void *arg), void *arg)
{
	if (SW_NEVER(pool->closing))
		return;
	pool->closing = true;
	sw_timer_stop(pool->loop, &pool->fail_timer);
	sw_timer_stop(pool->loop, &pool->listen_timer);
	pool->resync_due = false;
	sw_db_drop_notes(pool);
	pool->done = done;
	pool->done_arg = arg;
	sw_db_fail_queued(pool, -ECANCELED, "the database pool is closing");
	for (unsigned i = 0; i < pool->size; i++) {
		struct conn *c = &pool->conns[i];
		if (c->state == CONN_DOWN)
			sw_timer_stop(pool->loop, &c->timer);
		else if (c->state != CONN_BUSY || c->break_reason)
			sw_db_conn_lost(c, -ECANCELED, "the database pool is closing", NULL);
		if (c->cancel_pending)
			submit_cancel(c);
	}
	sw_db_check_closed(pool);
}

/* ==== the query queue: sw_db_query(), the bounded queue of queries
 * waiting for an idle connection, deadlines, and a query's round trip ==== */

/* ---- queries ---- */

/* Pushes what libpq holds for the server onto the socket; c->flushing
 * then says whether some is left (so the poll also waits for POLLOUT).
 * false when the connection failed. */
bool sw_db_conn_push(struct conn *c)
{
	int f = PQflush(c->pg);
	if (f < 0)
		return false;
	c->flushing = f == 1;
	return true;
}

static void queue_unlink(struct sw_db_pool *pool, struct query *q)
{
	SW_ASSERT(pool->nqueued > 0 && !q->conn);
	if (q->prev)
		q->prev->next = q->next;
	else
		pool->qhead = q->next;
	if (q->next)
		q->next->prev = q->prev;
	else
		pool->qtail = q->prev;
	q->prev = q->next = NULL;
	pool->nqueued--;
}

static void queue_push(struct sw_db_pool *pool, struct query *q, bool front)
{
	SW_ASSERT(!q->conn && !q->prev && !q->next && pool->qhead != q);
	if (front) {
		q->prev = NULL;
		q->next = pool->qhead;
		if (pool->qhead)
			pool->qhead->prev = q;
		else
			pool->qtail = q;
		pool->qhead = q;
	} else {
		q->next = NULL;
		q->prev = pool->qtail;
		if (pool->qtail)
			pool->qtail->next = q;
		else
			pool->qhead = q;
		pool->qtail = q;
	}
	pool->nqueued++;
}

/* Calls the query's callback and frees it. The query is on no list. */
void sw_db_query_finish(struct query *q, const PGresult *res, int code, const char *sqlstate,
			 const char *message)
{
	struct sw_db_pool *pool = q->pool;
	SW_ASSERT(!q->conn && !q->prev && !q->next && pool->qhead != q);
	sw_timer_stop(pool->loop, &q->deadline);
	struct sw_db_error err = { .code = code, .message = message };
	if (sqlstate)
		snprintf(err.sqlstate, sizeof(err.sqlstate), "%s", sqlstate);
	q->cb(q->arg, code == 0 ? res : NULL, &err);
	free(q);
}

static void query_deadline(struct sw_timer *t)
{
	struct query *q = SW_CONTAINER_OF(t, struct query, deadline);
	struct sw_db_pool *pool = q->pool;
	if (q->conn) {
		/* On the wire: the connection cannot be reused without reading
		 * the late answer, so it goes (conn_lost finishes q). */
		pool->last_ok_ms = 0;
		sw_db_conn_lost(q->conn, -ETIMEDOUT, "database did not answer in time", NULL);
	} else {
		queue_unlink(pool, q);
		sw_db_query_finish(q, NULL, -ETIMEDOUT, NULL, "database did not answer in time");
	}
	sw_db_check_closed(pool);
}

/* Ends c's pipeline so far with a sync; libpq's PQpipelineSync also pushes
 * every byte it holds to the server (libpq 17's PQsendPipelineSync would
 * not; Debian 12 has libpq 15). false: c is broken. */
static bool send_sync(struct conn *c)
{
	if (!PQpipelineSync(c->pg) || !sw_db_conn_push(c)) {
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return false;
	}
	c->nsyncs++;
	c->batch_open = false;
	return true;
}

/* The end of the loop's turn: every connection's batch of reads gets its
 * sync, one write to the server each. */
static void sync_batches(struct sw_turn *t)
{
	struct sw_db_pool *pool = SW_CONTAINER_OF(t, struct sw_db_pool, sync_turn);
	for (unsigned i = 0; i < pool->size; i++) {
		struct conn *c = &pool->conns[i];
		if (!c->batch_open)
			continue;
		SW_ASSERT(c->state == CONN_BUSY);
		if (c->break_reason) {
			c->batch_open = false; /* it is dropped, its queries failed, at its timer */
			continue;
		}
		if (send_sync(c))
			sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
	}
}

/* Sends q on c, IDLE or BUSY with room in its pipeline. A statement that
 * may write goes with a sync of its own, so it is its own implicit
 * transaction, as outside pipeline mode, and an error in one does not
 * abort the next (a batch of reads open on c is closed first). A read
 * joins c's batch, synced at the end of the turn (sync_batches). */
static void start_query(struct conn *c, struct query *q)
{
	struct sw_db_pool *pool = c->pool;
	SW_ASSERT((c->state == CONN_IDLE || c->state == CONN_BUSY) && !c->break_reason &&
		  c->nsent < SW_DB_PIPELINE_DEPTH && !q->conn && c->pg);
	bool batched = q->stmt->reads_only;
	if (!batched && c->batch_open && !send_sync(c)) {
		queue_push(pool, q, true);
		return;
	}
	if ((c->state == CONN_IDLE && !PQenterPipelineMode(c->pg)) ||
	    !PQsendQueryPrepared(c->pg, q->stmt->name, q->nparams, q->params, NULL, NULL, 0)) {
		/* Nothing was sent: the query goes back to the head of the queue. */
		queue_push(pool, q, true);
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	c->state = CONN_BUSY;
	q->conn = c;
	q->batched = batched;
	if (c->sent_tail)
		c->sent_tail->next = q;
	else
		c->sent_head = q;
	c->sent_tail = q;
	c->nsent++;
	if (batched) {
		c->batch_open = true;
		sw_turn_at_end(pool->loop, &pool->sync_turn, sync_batches);
		return;
	}
	if (send_sync(c))
		sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
}

struct conn *sw_db_idle_conn(struct sw_db_pool *pool)
{
	for (unsigned i = 0; i < pool->size; i++)
		if (pool->conns[i].state == CONN_IDLE)
			return &pool->conns[i];
	return NULL;
}

/* Whether busy connection c takes a query before busy connection best: a
 * read goes first to a connection whose batch of this turn is open, then
 * (any query) to the shorter pipeline. */
static bool takes_before(const struct conn *c, const struct conn *best, bool read)
{
	if (read && c->batch_open != best->batch_open)
		return c->batch_open;
	return c->nsent < best->nsent;
}

/* Where the next query goes: an idle connection, else the busy one with
 * room that takes_before() the others; NULL: it waits in the queue. */
static struct conn *pick_conn(struct sw_db_pool *pool, bool read)
{
	struct conn *best = NULL;
	for (unsigned i = 0; i < pool->size; i++) {
		struct conn *c = &pool->conns[i];
		if (c->state == CONN_IDLE)
			return c;
		if (c->state == CONN_BUSY && !c->break_reason && c->nsent < SW_DB_PIPELINE_DEPTH &&
		    (!best || takes_before(c, best, read)))
			best = c;
	}
	return best;
}

void sw_db_dispatch(struct sw_db_pool *pool)
{
	while (pool->qhead && !pool->closing) {
		struct conn *c = pick_conn(pool, pool->qhead->stmt->reads_only);
		if (!c)
			return;
		struct query *q = pool->qhead;
		queue_unlink(pool, q);
		start_query(c, q);
	}
}

/* Fails every queued query with code. */
void sw_db_fail_queued(struct sw_db_pool *pool, int code, const char *message)
{
	while (pool->qhead) {
		struct query *q = pool->qhead;
		queue_unlink(pool, q);
		sw_db_query_finish(q, NULL, code, NULL, message);
	}
}

static void fail_timer(struct sw_timer *t)
{
	struct sw_db_pool *pool = SW_CONTAINER_OF(t, struct sw_db_pool, fail_timer);
	if (pool->down)
		sw_db_fail_queued(pool, -ECONNRESET, pool->reason ? pool->reason : "no connection to the database");
	sw_db_check_closed(pool);
}

int sw_db_query(struct sw_db_pool *pool, const struct sw_db_stmt *stmt,
		const char *const *params, int nparams, sw_db_cb cb, void *arg)
{
	if (pool->closing)
		return -ECANCELED;
	if (!sw_db_statement_known(stmt) || nparams != stmt->nparams || nparams < 0 ||
	    (nparams > 0 && !params) || !cb)
		return -EINVAL;
	if (pool->nqueued >= SW_DB_MAX_PENDING_QUERIES)
		return -EBUSY;

	size_t size = sizeof(struct query) + (size_t)nparams * sizeof(char *);
	for (int i = 0; i < nparams; i++)
		if (params[i])
			size += strlen(params[i]) + 1;
	struct query *q = calloc(1, size);
	if (!q)
		return -ENOMEM;
	q->pool = pool;
	q->stmt = stmt;
	q->cb = cb;
	q->arg = arg;
	q->nparams = nparams;
	q->params = (const char **)(q + 1);
	char *s = (char *)(q->params + nparams);
	for (int i = 0; i < nparams; i++) {
		if (!params[i]) {
			q->params[i] = NULL;
			continue;
		}
		size_t n = strlen(params[i]) + 1;
		memcpy(s, params[i], n);
		q->params[i] = s;
		s += n;
	}
	if (sw_timer_start(pool->loop, &q->deadline, pool->query_timeout_ms, query_deadline) < 0) {
		free(q);
		return -ENOMEM;
	}
	queue_push(pool, q, false);
	sw_db_dispatch(pool);
	/* While the database is known to be unreachable the query fails at
	 * the next turn of the loop (never inside this call). */
	if (pool->down && pool->qhead && !sw_timer_armed(&pool->fail_timer))
		sw_timer_start(pool->loop, &pool->fail_timer, 0, fail_timer);
	return 0;
}


/* A query's answer is complete: classify it, note the database's health,
 * call back. q is off every list. */
static void query_answered(struct sw_db_pool *pool, struct query *q)
{
	PGresult *res = q->result;
	q->result = NULL;
	int code = -EIO;
	const char *sqlstate = NULL, *message = NULL;
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		code = 0;
	} else if (res) {
		sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		/* 57014 is the server's statement_timeout (we never cancel);
		 * the rest of class 57 (shutdown) and class 08 mean the
		 * connection is going away, not that the statement failed. */
		if (sqlstate && strcmp(sqlstate, "57014") == 0) {
			code = -ETIMEDOUT;
			sqlstate = NULL;
		} else if (sqlstate && (strncmp(sqlstate, "57P", 3) == 0 ||
					strncmp(sqlstate, "08", 2) == 0)) {
			code = -ECONNRESET;
			sqlstate = NULL;
		}
	}
	if (!message)
		message = code == 0 ? NULL : code == -ETIMEDOUT ? "database did not answer in time"
							       : PQresStatus(st);
	if (code == 0 || code == -EIO) {
		pool->verified_up = true;
		pool->last_ok_ms = now_ms(pool);
	} else if (code == -ECONNRESET) {
		/* The idle watch notices the end of the connection next. */
	} else {
		pool->last_ok_ms = 0; /* verify at the next look */
	}
	sw_db_query_finish(q, res, code, sqlstate, message);
	PQclear(res);
}

/* Takes the oldest query off c's pipeline onto the answered list. */
static void take_answered(struct conn *c, struct query ***tail)
{
	struct query *q = c->sent_head;
	c->sent_head = q->next;
	if (!c->sent_head)
		c->sent_tail = NULL;
	c->nsent--;
	q->next = NULL;
	q->conn = NULL;
	**tail = q;
	*tail = &q->next;
}

/* A BUSY connection's poll completed: reads what arrived, takes every
 * answered query off the pipeline (in order), and once the pipeline is
 * empty leaves pipeline mode and is IDLE again. Then the answered queries
 * are called back, with the connection in a consistent state (a callback
 * may query, or close the pool), and the connection is re-armed or handed
 * the next queries. A read of a batch that an earlier read's error
 * aborted goes back to the head of the queue, to be sent again. */
void sw_db_conn_query_step(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	struct query *answered = NULL, **answered_tail = &answered;
	bool lost = (c->flushing && !sw_db_conn_push(c)) || !PQconsumeInput(c->pg);
	/* Results come as: a statement's result, then NULL; a sync's is
	 * PGRES_PIPELINE_SYNC. A statement with a sync of its own is answered
	 * at that sync (its implicit transaction has committed), a read of a
	 * batch at its NULL. Two NULLs in a row would mean libpq waits for
	 * more: the guard keeps the loop finite should it ever say so without
	 * PQisBusy. */
	unsigned nulls = 0;
	while (!lost && (c->sent_head || c->nsyncs) && !PQisBusy(c->pg) && nulls < 2) {
		PGresult *r = PQgetResult(c->pg);
		struct query *q = c->sent_head;
		if (!r) {
			nulls++;
			if (q && q->batched && q->result)
				take_answered(c, &answered_tail);
			continue;
		}
		nulls = 0;
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			if (c->nsyncs)
				c->nsyncs--;
			/* A sync after an answered statement is its own; else it
			 * closed a batch, whose reads were answered at their NULL. */
			if (q && !q->batched && q->result)
				take_answered(c, &answered_tail);
			continue;
		}
		if (q)
			sw_db_keep_result(&q->result, r);
		else
			PQclear(r);
	}
	if (!lost)
		lost = PQstatus(c->pg) == CONNECTION_BAD;
	if (!lost) {
		sw_db_drain_notifies(c);
		if (!c->sent_head && !c->nsyncs && !c->batch_open) {
			lost = !PQexitPipelineMode(c->pg);
			if (!lost)
				c->state = CONN_IDLE;
		}
	}
	if (lost) {
		/* The queries still on the wire fail with the connection. */
		sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
	} else if (c->state == CONN_IDLE) {
		if (pool->closing)
			sw_db_conn_lost(c, -ECANCELED, "the pool is closing", NULL);
		else
			sw_db_claim_listener(pool, c);
	}
	/* Aborted reads go back to the head of the queue in their order,
	 * before any callback can queue more: taken off the answered list
	 * newest first, each pushed to the front. */
	struct query *again = NULL;
	for (struct query **p = &answered; *p;) {
		struct query *q = *p;
		if (PQresultStatus(q->result) != PGRES_PIPELINE_ABORTED || pool->closing) {
			p = &q->next;
			continue;
		}
		*p = q->next;
		PQclear(q->result);
		q->result = NULL;
		q->next = again;
		again = q;
	}
	while (again) {
		struct query *q = again;
		again = q->next;
		q->next = NULL;
		queue_push(pool, q, true);
	}
	while (answered) {
		struct query *q = answered;
		answered = q->next;
		q->next = NULL;
		query_answered(pool, q);
	}
	/* The callbacks may have queued work onto this connection, or closed
	 * the pool (dispatch then does nothing). */
	sw_db_dispatch(pool);
	if (c->state == CONN_IDLE)
		sw_db_conn_watch(c, POLLIN);
	else if (c->state == CONN_BUSY && !c->break_reason)
		sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
}

/* ==== LISTEN and notifications: exactly one connection holds the LISTEN;
 * notifications are copied into the pool's queue after each read and
 * delivered once the step is over ==== */

/* ---- notifications ---- */

void sw_db_drop_notes(struct sw_db_pool *pool)
{
	while (pool->notes_head) {
		struct note *n = pool->notes_head;
		pool->notes_head = n->next;
		free(n);
	}
	pool->notes_tail = NULL;
	pool->nnotes = 0;
}

/* Whatever the caller cached may be stale: one resync supersedes the
 * payloads still queued. */
static void need_resync(struct sw_db_pool *pool)
{
	sw_db_drop_notes(pool);
	pool->resync_due = true;
}

static void queue_note(struct sw_db_pool *pool, unsigned channel, const char *payload)
{
	size_t len = strlen(payload) + 1;
	struct note *n = pool->nnotes < MAX_QUEUED_NOTIFICATIONS ? malloc(sizeof(*n) + len) : NULL;
	if (!n) {
		need_resync(pool); /* it covers this payload too */
		return;
	}
	memcpy(n->payload, payload, len);
	n->channel = channel;
	n->next = NULL;
	if (pool->notes_tail)
		pool->notes_tail->next = n;
	else
		pool->notes_head = n;
	pool->notes_tail = n;
	pool->nnotes++;
}

/* Moves the notifications libpq has parsed on c into the pool's queue;
 * sw_db_deliver_notes() hands them out once the current step is over. */
void sw_db_drain_notifies(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	PGnotify *n;
	while ((n = PQnotifies(c->pg))) {
		for (unsigned i = 0; i < pool->nchannels && !pool->closing; i++)
			if (strcmp(n->relname, pool->channels[i].name) == 0) {
				queue_note(pool, i, n->extra ? n->extra : "");
				break;
			}
		PQfreemem(n);
	}
}

/* The due resync (of every channel), then each queued payload in arrival
 * order, to its channel's callback. Called only
 * at the end of sw_db_on_poll, when no step is under way: the callbacks may
 * query, or close the pool (the rest is then dropped). */
void sw_db_deliver_notes(struct sw_db_pool *pool)
{
	while (!pool->closing) {
		if (pool->resync_due) {
			pool->resync_due = false;
			for (unsigned i = 0; i < pool->nchannels && !pool->closing && !pool->resync_due; i++)
				pool->channels[i].resync(pool->channels[i].arg);
			continue;
		}
		struct note *n = pool->notes_head;
		if (!n)
			return;
		pool->notes_head = n->next;
		if (!pool->notes_head)
			pool->notes_tail = NULL;
		pool->nnotes--;
		struct listen_channel *ch = &pool->channels[n->channel];
		ch->cb(ch->arg, n->payload);
		free(n);
	}
	pool->resync_due = false;
	sw_db_drop_notes(pool);
}

static void listen_deadline(struct sw_timer *t)
{
	struct conn *c = SW_CONTAINER_OF(t, struct conn, timer);
	struct sw_db_pool *pool = c->pool;
	pool->last_ok_ms = 0;
	sw_db_conn_lost(c, -ETIMEDOUT, "database did not answer in time", "LISTEN timed out");
	sw_db_check_closed(pool);
}

/* Sends LISTEN on c, which is IDLE; it takes no query until the answer.
 * Runs no callback: a failure is a sw_db_conn_break(). */
static void start_listen(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	pool->listener = c;
	c->state = CONN_LISTENING;
	if (!PQsendQuery(c->pg, pool->listen_sql)) {
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	if (!sw_db_conn_push(c)) {
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	if (sw_timer_start(pool->loop, &c->timer, pool->query_timeout_ms, listen_deadline) < 0) {
		sw_db_conn_break(c, "cannot listen for notifications", "out of memory");
		return;
	}
	sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
}

/* Gives the pool its listener if it needs one: prefer when it is IDLE,
 * else any IDLE connection; none: the next to become IDLE. */
void sw_db_claim_listener(struct sw_db_pool *pool, struct conn *prefer)
{
	if (!pool->nchannels || pool->listener || pool->closing ||
	    sw_timer_armed(&pool->listen_timer))
		return;
	struct conn *c = prefer && prefer->state == CONN_IDLE ? prefer : sw_db_idle_conn(pool);
	if (c)
		start_listen(c);
}

static void listen_retry(struct sw_timer *t)
{
	sw_db_claim_listener(SW_CONTAINER_OF(t, struct sw_db_pool, listen_timer), NULL);
}

/* LISTEN is answered: c listens from now on (a resync is due), or the
 * server refused it with an SQL error and c serves queries while the
 * listen is retried later. Either way c goes back to IDLE. */
static void listen_done(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	PGresult *r = c->result;
	c->result = NULL;
	sw_timer_stop(pool->loop, &c->timer);
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (st == PGRES_COMMAND_OK) {
		need_resync(pool);
	} else {
		char detail[256];
		const char *m = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
		const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
		snprintf(detail, sizeof(detail), "LISTEN failed: %s", m ? m : PQresStatus(st));
		if (PQstatus(c->pg) == CONNECTION_BAD || !state || strncmp(state, "57", 2) == 0 ||
		    strncmp(state, "08", 2) == 0) {
			PQclear(r);
			sw_db_conn_lost(c, -ECONNRESET, sw_db_classify(detail), detail);
			return;
		}
		sw_db_log_failure(pool, detail);
		pool->listener = NULL;
		if (!pool->closing && sw_timer_start(pool->loop, &pool->listen_timer,
						     SW_DB_RECONNECT_MAX_MS, listen_retry) < 0)
			sw_log_error("database pool: cannot arm the listen timer (out of memory)");
	}
	PQclear(r);
	pool->verified_up = true;
	pool->last_ok_ms = now_ms(pool);
	c->state = CONN_IDLE;
	sw_db_drain_notifies(c);
	sw_db_dispatch(pool);
	if (c->state == CONN_IDLE)
		sw_db_conn_watch(c, POLLIN);
}

void sw_db_conn_listen_step(struct conn *c)
{
	sw_db_conn_read_step(c, listen_done);
}

/* The channel as an identifier needing no escape: [a-z_][a-z0-9_]{0,62}. */
static bool channel_valid(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z')))
		return false;
	size_t n = 0;
	for (; s[n]; n++)
		if (!(s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')))
			return false;
	return n <= 63;
}

int sw_db_pool_listen(struct sw_db_pool *pool, const char *channel,
		      void (*cb)(void *arg, const char *payload),
		      void (*resync)(void *arg), void *arg)
{
	if (pool->closing)
		return -ECANCELED;
	if (!channel_valid(channel) || !cb || !resync)
		return -EINVAL;
	for (unsigned i = 0; i < pool->nchannels; i++)
		if (strcmp(pool->channels[i].name, channel) == 0)
			return -EALREADY;
	if (pool->nchannels == SW_DB_MAX_CHANNELS)
		return -ENOSPC;
	/* One LISTEN statement covers every channel: a channel added once a
	 * connection listens would need one of its own. */
	if (pool->listener)
		return -EBUSY;
	struct listen_channel *ch = &pool->channels[pool->nchannels++];
	snprintf(ch->name, sizeof(ch->name), "%s", channel);
	ch->cb = cb;
	ch->resync = resync;
	ch->arg = arg;
	/* Quoted although they need no quoting: each name stays exactly as
	 * given, and relname of each notification is compared with it. One
	 * simple query, so one implicit transaction: all or none. */
	size_t off = 0;
	for (unsigned i = 0; i < pool->nchannels; i++)
		off += (size_t)snprintf(pool->listen_sql + off, sizeof(pool->listen_sql) - off,
					"%sLISTEN \"%s\"", i ? ";" : "", pool->channels[i].name);
	sw_db_claim_listener(pool, NULL);
	return 0;
}

/* ==== audited statements: the twin (audited.c builds it) run with the
 * audit record's parameters after the statement's own ==== */

int sw_db_query_audited(struct sw_db_pool *pool, const struct sw_db_stmt *stmt,
			const char *const *params, int nparams, const struct sw_db_audit_row *a,
			sw_db_cb cb, void *arg)
{
	enum { MAX = 64 };
	if (!stmt->audited || !stmt->audited->twin.sql || nparams != stmt->nparams ||
	    nparams + SW_DB_AUDIT_PARAMS > MAX)
		return -EINVAL;
	const char *all[MAX];
	memcpy(all, params, sizeof(*params) * (size_t)nparams);
	const char *audit[SW_DB_AUDIT_PARAMS] = {
		a->organization_id && *a->organization_id ? a->organization_id : NULL,
		a->actor_user_id && *a->actor_user_id ? a->actor_user_id : NULL,
		a->action, a->target_type, a->target_id, a->ip, a->metadata_json,
	};
	memcpy(all + nparams, audit, sizeof(audit));
	return sw_db_query(pool, &stmt->audited->twin, all, nparams + SW_DB_AUDIT_PARAMS, cb, arg);
}
