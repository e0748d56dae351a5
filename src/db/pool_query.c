/* The query queue of the PostgreSQL pool: sw_db_query(), the bounded
 * queue of queries waiting for an idle connection, deadlines, and a
 * query's round trip on its connection (pool.c's top comment). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/db/statements.h"
#include "db/pool_internal.h"

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

static void start_query(struct conn *c, struct query *q)
{
	struct sw_db_pool *pool = c->pool;
	SW_ASSERT(c->state == CONN_IDLE && !c->query && !q->conn && c->pg);
	c->state = CONN_BUSY;
	c->query = q;
	q->conn = c;
	if (!PQsendQueryPrepared(c->pg, q->stmt->name, q->nparams, q->params, NULL, NULL, 0)) {
		/* Nothing was sent: the query goes back to the head of the queue. */
		c->query = NULL;
		q->conn = NULL;
		queue_push(pool, q, true);
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	if (!sw_db_conn_push(c)) {
		sw_db_conn_break(c, sw_db_classify(PQerrorMessage(c->pg)), PQerrorMessage(c->pg));
		return;
	}
	sw_db_conn_watch(c, POLLIN | (c->flushing ? POLLOUT : 0));
}

struct conn *sw_db_idle_conn(struct sw_db_pool *pool)
{
	for (unsigned i = 0; i < pool->size; i++)
		if (pool->conns[i].state == CONN_IDLE)
			return &pool->conns[i];
	return NULL;
}

void sw_db_dispatch(struct sw_db_pool *pool)
{
	while (pool->qhead && !pool->closing) {
		struct conn *c = sw_db_idle_conn(pool);
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


/* The query's answer is complete: report it, then reuse the connection. */
static void conn_query_done(struct conn *c)
{
	struct sw_db_pool *pool = c->pool;
	struct query *q = c->query;
	PGresult *res = c->result;
	SW_ASSERT(c->state == CONN_BUSY && q && q->conn == c);
	c->query = NULL;
	c->result = NULL;
	q->conn = NULL;
	c->state = CONN_IDLE;

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

	/* The callback may have queued work onto this connection, or closed
	 * the pool. */
	if (c->state != CONN_IDLE)
		return;
	if (pool->closing) {
		sw_db_conn_lost(c, -ECANCELED, "the pool is closing", NULL);
		return;
	}
	sw_db_claim_listener(pool, c);
	sw_db_dispatch(pool);
	if (c->state == CONN_IDLE)
		sw_db_conn_watch(c, POLLIN);
}

static void query_complete(struct conn *c)
{
	sw_db_drain_notifies(c);
	conn_query_done(c);
}

void sw_db_conn_query_step(struct conn *c)
{
	sw_db_conn_read_step(c, query_complete);
}
