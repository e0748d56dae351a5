/* The asynchronous pool on a real ring and a real PostgreSQL: one scratch
 * cluster for the file (sw_db_embedded_start in a mkdtemp directory), a
 * migrated database (a fresh one where rows matter), the loop run in this
 * thread until each test's condition holds. Exits 77 when the PostgreSQL server
 * binaries are not installed. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "steward/db/db.h"
#include "steward/io/io.h"
#include "steward/base/limits.h"
#include "steward/db/statements.h"
#include "db_scratch.h"
#include "test_help.h"

static struct sw_loop *loop;

/* The scratch cluster (exits 77 without PostgreSQL), then the loop, once. */
static void cluster(void)
{
	if (loop)
		return;
	scratch_cluster_start("sw-pool");
	loop = sw_loop_new(0, 256, 16, 4096);
	if (!loop) {
		perror("sw_loop_new");
		exit(1);
	}
}

/* A fresh migrated database; its conninfo into out. */
static void fresh_database(const char *name, char *out, size_t outlen)
{
	cluster();
	scratch_fresh_database(name, true, out, outlen);
}

/* The migrated database most tests share (they create no rows). */
static void shared_database(char *out, size_t outlen)
{
	static char ci[600];
	if (!ci[0])
		fresh_database("p_shared", ci, sizeof(ci));
	snprintf(out, outlen, "%s", ci);
}

/* ---- running the loop ---- */

static bool (*until_cond)(void);
static uint64_t until_deadline;
static struct sw_timer tick;

static void tick_cb(struct sw_timer *t)
{
	if ((until_cond && until_cond()) || sw_now_ms() >= until_deadline) {
		sw_loop_stop(loop);
		return;
	}
	sw_timer_start(loop, t, 5, tick_cb);
}

/* Runs the loop until cond() holds or ms pass; returns cond(). */
static bool run_until(bool (*cond)(void), unsigned ms)
{
	until_cond = cond;
	until_deadline = sw_now_ms() + ms;
	sw_timer_start(loop, &tick, 0, tick_cb);
	sw_loop_run(loop);
	sw_timer_stop(loop, &tick);
	return cond ? cond() : true;
}

/* ---- query results ---- */

struct answer {
	bool done;
	int code;
	char sqlstate[6];
	int ntuples;
	bool is_null;
	char value[128];
	uint64_t at_ms;
};

static int outstanding;

static void on_answer(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct answer *a = arg;
	a->done = true;
	a->code = err->code;
	a->at_ms = sw_now_ms();
	memcpy(a->sqlstate, err->sqlstate, sizeof(a->sqlstate));
	if (res) {
		a->ntuples = PQntuples(res);
		if (a->ntuples > 0 && PQnfields(res) > 0) {
			a->is_null = PQgetisnull(res, 0, 0);
			snprintf(a->value, sizeof(a->value), "%s", PQgetvalue(res, 0, 0));
		}
	}
	outstanding--;
}

static bool none_outstanding(void)
{
	return outstanding == 0;
}

static struct sw_db_pool *cur_pool;

static bool pool_up(void)
{
	const char *reason;
	return sw_db_pool_healthy(cur_pool, &reason);
}

static bool pool_down(void)
{
	const char *reason;
	return !sw_db_pool_healthy(cur_pool, &reason);
}

static bool closed;

static void on_closed(void *arg)
{
	(void)arg;
	closed = true;
}

static bool is_closed(void)
{
	return closed;
}

static void close_pool(struct sw_db_pool *pool)
{
	closed = false;
	sw_db_pool_close(pool, on_closed, NULL);
	run_until(is_closed, 5000);
}

static int query(struct sw_db_pool *pool, const struct sw_db_stmt *stmt, const char *const *params,
		 struct answer *a)
{
	memset(a, 0, sizeof(*a));
	int r = sw_db_query(pool, stmt, params, stmt->nparams, on_answer, a);
	if (r == 0)
		outstanding++;
	return r;
}

/* ---- tests ---- */

TEST(a_query_queued_before_connecting_returns_its_row)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 5000);
	REQUIRE(pool);
	struct answer a;
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &a) == 0);
	CHECK(run_until(none_outstanding, 5000));
	CHECK_INT_EQ(a.code, 0);
	CHECK_INT_EQ(a.ntuples, 1);
	CHECK_STR_EQ(a.value, "1");
	close_pool(pool);
	CHECK(closed);
}

TEST(a_database_restart_is_noticed_within_a_second_and_survived)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 10000);
	REQUIRE(pool);
	cur_pool = pool;
	REQUIRE(run_until(pool_up, 5000));
	const char *ten[] = { "10" };
	struct answer running;
	REQUIRE(query(pool, &sw_db_stmt_test_sleep, ten, &running) == 0);
	run_until(NULL, 50);

	sw_db_embedded_stop();
	uint64_t t0 = sw_now_ms();
	CHECK(run_until(pool_down, 2000));
	CHECK(sw_now_ms() - t0 < 1200);
	const char *reason = NULL;
	CHECK(!sw_db_pool_healthy(pool, &reason));
	CHECK(reason && *reason);
	if (reason)
		printf("  reason while down: %s\n", reason);
	CHECK(!strstr(reason ? reason : "", "/")); /* no socket path or host leaks */
	CHECK(run_until(none_outstanding, 2000));
	CHECK_INT_EQ(running.code, -ECONNRESET); /* in flight on the lost connection */

	/* Queries while down fail at once rather than wait for their deadline. */
	struct answer a;
	t0 = sw_now_ms();
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &a) == 0);
	CHECK(run_until(none_outstanding, 8000));
	CHECK_INT_EQ(a.code, -ECONNRESET);
	CHECK(sw_now_ms() - t0 < 1000);

	char again[512], err[1024];
	int r = sw_db_embedded_start(scratch_db.data_dir, again, sizeof(again), err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "  restart: %s\n", err);
	REQUIRE(r == 0);
	CHECK(run_until(pool_up, 10000));
	struct answer b;
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &b) == 0);
	CHECK(run_until(none_outstanding, 5000));
	CHECK_INT_EQ(b.code, 0);
	close_pool(pool);
}

TEST(parameters_are_bound_never_spliced_and_null_stays_null)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 5000);
	REQUIRE(pool);
	const char *evil[] = { "x'); DROP TABLE users; --" };
	const char *null[] = { NULL };
	const char *email[] = { "nobody@example.com" };
	struct answer a, b, c, d;
	REQUIRE(query(pool, &sw_db_stmt_test_echo, evil, &a) == 0);
	REQUIRE(query(pool, &sw_db_stmt_test_echo, null, &b) == 0);
	REQUIRE(query(pool, &sw_db_stmt_user_by_email, email, &c) == 0);
	REQUIRE(query(pool, &sw_db_stmt_user_count, NULL, &d) == 0);
	evil[0] = "changed after queueing"; /* params are copied */
	CHECK(run_until(none_outstanding, 5000));
	CHECK_INT_EQ(a.code, 0);
	CHECK_STR_EQ(a.value, "x'); DROP TABLE users; --");
	CHECK_INT_EQ(b.code, 0);
	CHECK(b.is_null);
	CHECK_INT_EQ(c.code, 0);
	CHECK_INT_EQ(c.ntuples, 0);
	CHECK_INT_EQ(d.code, 0);
	CHECK_STR_EQ(d.value, "0");
	close_pool(pool);
}

TEST(a_server_error_reports_eio_with_its_sqlstate)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	const char *signup[] = { "a@example.com", "A", "hash", "Org" };
	const char *bad[] = { "not a number" };
	struct answer a, b, c;
	REQUIRE(query(pool, &sw_db_stmt_signup, signup, &a) == 0);
	REQUIRE(query(pool, &sw_db_stmt_test_sleep, bad, &b) == 0);
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &c) == 0);
	CHECK(run_until(none_outstanding, 5000));
	CHECK_INT_EQ(a.code, -EIO);
	CHECK_STR_EQ(a.sqlstate, SW_DB_SQLSTATE_SETUP_REQUIRED);
	CHECK_INT_EQ(b.code, -EIO);
	CHECK_STR_EQ(b.sqlstate, "22P02");
	CHECK_INT_EQ(c.code, 0); /* the connection goes on after an error */
	close_pool(pool);
}

TEST(unknown_statements_and_wrong_parameter_counts_are_einval)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	static const struct sw_db_stmt rogue = { "rogue", "SELECT 2", 0 };
	CHECK_INT_EQ(sw_db_query(pool, &rogue, NULL, 0, on_answer, NULL), -EINVAL);
	CHECK_INT_EQ(sw_db_query(pool, &sw_db_stmt_test_echo, NULL, 0, on_answer, NULL), -EINVAL);
	close_pool(pool);
}

TEST(setup_under_50_concurrent_calls_succeeds_exactly_once)
{
	char ci[600];
	fresh_database("p_setup", ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 8, 10000);
	REQUIRE(pool);
	cur_pool = pool;
	REQUIRE(run_until(pool_up, 5000));
	enum { N = 50 };
	static struct answer a[N];
	static char emails[N][32];
	for (int i = 0; i < N; i++) {
		snprintf(emails[i], sizeof(emails[i]), "user%d@example.com", i);
		const char *p[] = { emails[i], "User", "hash", "Org" };
		REQUIRE(query(pool, &sw_db_stmt_setup, p, &a[i]) == 0);
	}
	CHECK(run_until(none_outstanding, 20000));
	int ok = 0, complete = 0;
	for (int i = 0; i < N; i++) {
		if (a[i].code == 0)
			ok++;
		else if (a[i].code == -EIO && strcmp(a[i].sqlstate, SW_DB_SQLSTATE_SETUP_COMPLETE) == 0)
			complete++;
		else
			fprintf(stderr, "  call %d: code %d sqlstate %s\n", i, a[i].code, a[i].sqlstate);
	}
	CHECK_INT_EQ(ok, 1);
	CHECK_INT_EQ(complete, N - 1);

	struct answer count;
	REQUIRE(query(pool, &sw_db_stmt_user_count, NULL, &count) == 0);
	CHECK(run_until(none_outstanding, 5000));
	CHECK_STR_EQ(count.value, "1");
	close_pool(pool);
}

TEST(a_query_past_its_deadline_is_etimedout_and_the_pool_recovers)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 200);
	REQUIRE(pool);
	cur_pool = pool;
	REQUIRE(run_until(pool_up, 5000));
	const char *five[] = { "5" };
	struct answer a;
	uint64_t t0 = sw_now_ms();
	REQUIRE(query(pool, &sw_db_stmt_test_sleep, five, &a) == 0);
	CHECK(run_until(none_outstanding, 3000));
	CHECK_INT_EQ(a.code, -ETIMEDOUT);
	CHECK(a.at_ms - t0 >= 150 && a.at_ms - t0 < 1500);

	/* The pool reconnects (after the backoff) and then answers within the
	 * deadline. A query queued while it reconnects would spend its 200 ms
	 * waiting for the connection and its statements to be prepared,
	 * which is a correct timeout on a busy machine, not a recovery
	 * failure: so the query is asked once the pool is back. */
	CHECK(run_until(pool_up, 5000));
	struct answer b;
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &b) == 0);
	CHECK(run_until(none_outstanding, 3000));
	CHECK_INT_EQ(b.code, 0);
	close_pool(pool);
}

TEST(queries_beyond_the_pending_limit_are_ebusy)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 20000);
	REQUIRE(pool);
	/* Not connected yet: everything waits in the queue. */
	static struct answer a[SW_DB_MAX_PENDING_QUERIES];
	for (int i = 0; i < SW_DB_MAX_PENDING_QUERIES; i++)
		REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &a[i]) == 0);
	struct answer extra;
	CHECK_INT_EQ(query(pool, &sw_db_stmt_ping, NULL, &extra), -EBUSY);
	CHECK(run_until(none_outstanding, 15000));
	int ok = 0;
	for (int i = 0; i < SW_DB_MAX_PENDING_QUERIES; i++)
		ok += a[i].code == 0;
	CHECK_INT_EQ(ok, SW_DB_MAX_PENDING_QUERIES);
	close_pool(pool);
}

TEST(health_is_false_before_connecting_true_after_and_stays_cached)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	cur_pool = pool;
	const char *reason = NULL;
	CHECK(!sw_db_pool_healthy(pool, &reason));
	CHECK(reason && *reason);
	CHECK(run_until(pool_up, 5000));
	/* Idle past the cache age: still up (a ping refreshes it). */
	run_until(NULL, SW_DB_HEALTH_MAX_AGE_MS + 300);
	CHECK(sw_db_pool_healthy(pool, &reason));
	run_until(NULL, 100);
	CHECK(sw_db_pool_healthy(pool, &reason));
	close_pool(pool);
}

TEST(a_pool_pointed_at_nothing_reports_connection_refused)
{
	cluster();
	char ci[700];
	REQUIRE(scratch_unreachable_conninfo(ci, sizeof(ci)));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 1000);
	REQUIRE(pool);
	struct answer a;
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &a) == 0);
	CHECK(run_until(none_outstanding, 3000));
	CHECK_INT_EQ(a.code, -ECONNRESET);
	const char *reason = NULL;
	CHECK(!sw_db_pool_healthy(pool, &reason));
	CHECK_STR_EQ(reason, "connection refused");
	close_pool(pool);
}

/* A pool of one connection (query timeout 5 s), once it is up; NULL if it
 * does not come up. */
static struct sw_db_pool *one_connection_up(void)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	cur_pool = pool;
	return pool && run_until(pool_up, 5000) ? pool : NULL;
}

TEST(closing_cancels_queued_queries_finishes_those_on_the_wire_and_calls_done)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	/* One connection: a full pipeline goes on the wire, the rest waits. */
	enum { WIRE = SW_DB_PIPELINE_DEPTH, N = SW_DB_PIPELINE_DEPTH + 4 };
	const char *hundredth[] = { "0.01" };
	static struct answer a[N];
	for (int i = 0; i < N; i++)
		REQUIRE(query(pool, &sw_db_stmt_test_sleep, hundredth, &a[i]) == 0);
	closed = false;
	sw_db_pool_close(pool, on_closed, NULL);
	CHECK_INT_EQ(sw_db_query(pool, &sw_db_stmt_ping, NULL, 0, on_answer, NULL), -ECANCELED);
	for (int i = WIRE; i < N; i++)
		CHECK_INT_EQ(a[i].code, -ECANCELED);
	CHECK(run_until(is_closed, 5000));
	for (int i = 0; i < WIRE; i++) {
		CHECK(a[i].done);
		CHECK_INT_EQ(a[i].code, 0);
	}
	CHECK_INT_EQ(outstanding, 0);
}

/* ---- pipelining ---- */

static int answered_order[2 * SW_DB_PIPELINE_DEPTH + 8];
static int answered_count;

struct ordered {
	struct answer a;
	int index;
};

static void on_ordered(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct ordered *o = arg;
	if (answered_count < (int)SW_ARRAY_SIZE(answered_order))
		answered_order[answered_count++] = o->index;
	on_answer(&o->a, res, err);
}

TEST(pipelined_queries_answer_in_order_each_its_own_and_an_error_spoils_no_other)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	/* More than two pipelines' worth on one connection: every fifth
	 * query fails in the server (a bad number), the rest echo their own
	 * index. */
	enum { N = 2 * SW_DB_PIPELINE_DEPTH + 8 };
	static struct ordered o[N];
	static char text[N][16];
	answered_count = 0;
	for (int i = 0; i < N; i++) {
		memset(&o[i], 0, sizeof(o[i]));
		o[i].index = i;
		const struct sw_db_stmt *stmt = i % 5 == 4 ? &sw_db_stmt_test_sleep : &sw_db_stmt_test_echo;
		snprintf(text[i], sizeof(text[i]), i % 5 == 4 ? "bad %d" : "%d", i);
		const char *params[] = { text[i] };
		REQUIRE(sw_db_query(pool, stmt, params, 1, on_ordered, &o[i]) == 0);
		outstanding++;
	}
	CHECK(run_until(none_outstanding, 10000));
	CHECK_INT_EQ(answered_count, N);
	for (int i = 0; i < N; i++) {
		CHECK_INT_EQ(answered_order[i], i);
		if (i % 5 == 4) {
			CHECK_INT_EQ(o[i].a.code, -EIO);
			CHECK_STR_EQ(o[i].a.sqlstate, "22P02");
		} else {
			CHECK_INT_EQ(o[i].a.code, 0);
			CHECK_STR_EQ(o[i].a.value, text[i]);
		}
	}
	close_pool(pool);
}

/* ---- batches of reads (statements marked reads_only) ---- */

/* test_read's row: the integer, its transaction's time, its statement's. */
struct read_answer {
	struct answer a;
	int index;
	char txn[40];
	char stmt[40];
};

static void on_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct read_answer *r = arg;
	if (answered_count < (int)SW_ARRAY_SIZE(answered_order))
		answered_order[answered_count++] = r->index;
	if (res && PQntuples(res) == 1 && PQnfields(res) == 3) {
		snprintf(r->txn, sizeof(r->txn), "%s", PQgetvalue(res, 0, 1));
		snprintf(r->stmt, sizeof(r->stmt), "%s", PQgetvalue(res, 0, 2));
	}
	on_answer(&r->a, res, err);
}

/* Queues test_read(text) (or, with echo, test_echo: a statement that is
 * not marked a read) as query index. */
static bool queue_read(struct sw_db_pool *pool, struct read_answer *r, int index, const char *text,
		       bool echo)
{
	memset(r, 0, sizeof(*r));
	r->index = index;
	const char *params[] = { text };
	const struct sw_db_stmt *st = echo ? &sw_db_stmt_test_echo : &sw_db_stmt_test_read;
	if (sw_db_query(pool, st, params, 1, on_read, r) != 0)
		return false;
	outstanding++;
	return true;
}

/* Queues text[0..n) as test_read (test_echo at index echo, -1: none) in
 * one turn, runs the loop until all are answered and checks each got its
 * own row, in order; the one at index bad (-1: none) must fail 22P02. */
static bool run_batch(struct sw_db_pool *pool, struct read_answer *r, const char *const *text, int n,
		      int echo, int bad)
{
	answered_count = 0;
	for (int i = 0; i < n; i++)
		if (!queue_read(pool, &r[i], i, text[i], i == echo))
			return false;
	if (!run_until(none_outstanding, 10000) || answered_count != n)
		return false;
	bool good = true;
	for (int i = 0; i < n; i++) {
		good &= answered_order[i] == i;
		if (i == bad)
			good &= r[i].a.code == -EIO && strcmp(r[i].a.sqlstate, "22P02") == 0;
		else
			good &= r[i].a.code == 0 && strcmp(r[i].a.value, text[i]) == 0;
	}
	return good;
}

TEST(reads_sent_in_one_turn_share_one_transaction_and_each_gets_its_own_row)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	enum { N = 12 };
	static struct read_answer r[N];
	const char *text[N] = { "0", "7", "14", "21", "28", "35", "42", "49", "56", "63", "70", "77" };
	CHECK(run_batch(pool, r, text, N, -1, -1));
	/* One sync for the batch: one implicit transaction (each with a
	 * sync of its own would have a time of its own). */
	CHECK(r[0].txn[0] != 0);
	for (int i = 1; i < N; i++)
		CHECK_STR_EQ(r[i].txn, r[0].txn);
	close_pool(pool);
}

TEST(a_read_that_fails_spoils_no_other_read_of_its_batch)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	enum { N = 6, BAD = 2 };
	static struct read_answer r[N];
	const char *text[N] = { "10", "11", "not a number", "13", "14", "15" };
	CHECK(run_batch(pool, r, text, N, -1, BAD));
	/* The error aborted the rest of its batch on the server: those
	 * reads were sent again, together, in a transaction of their own. */
	CHECK_STR_EQ(r[1].txn, r[0].txn);
	for (int i = BAD + 2; i < N; i++)
		CHECK_STR_EQ(r[i].txn, r[BAD + 1].txn);
	CHECK(strcmp(r[BAD + 1].txn, r[0].txn) != 0);
	close_pool(pool);
}

TEST(a_statement_not_marked_a_read_closes_the_batch_and_runs_on_its_own)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	enum { N = 5, ECHO = 2 };
	static struct read_answer r[N];
	const char *text[N] = { "20", "21", "twenty-two", "23", "24" };
	CHECK(run_batch(pool, r, text, N, ECHO, -1));
	/* The reads before it were synced before it; those after it make a
	 * batch of their own. */
	CHECK_STR_EQ(r[1].txn, r[0].txn);
	CHECK_STR_EQ(r[4].txn, r[3].txn);
	CHECK(strcmp(r[3].txn, r[0].txn) != 0);
	close_pool(pool);
}

TEST(closing_with_a_batch_open_still_answers_its_reads)
{
	struct sw_db_pool *pool = one_connection_up();
	REQUIRE(pool);
	enum { N = 4 };
	static struct read_answer r[N];
	const char *text[N] = { "30", "31", "32", "33" };
	for (int i = 0; i < N; i++)
		REQUIRE(queue_read(pool, &r[i], i, text[i], false));
	/* The batch is on the wire without its sync, which comes at the end
	 * of the loop's turn: closing now must not lose it. */
	closed = false;
	sw_db_pool_close(pool, on_closed, NULL);
	CHECK(run_until(is_closed, 5000));
	CHECK_INT_EQ(outstanding, 0);
	for (int i = 0; i < N; i++) {
		CHECK_INT_EQ(r[i].a.code, 0);
		CHECK_STR_EQ(r[i].a.value, text[i]);
	}
}

/* ---- notifications (sw_db_pool_listen) ---- */

struct heard {
	int resyncs;
	int n;               /* notifications, even those not kept below */
	char payloads[8][64];
	struct sw_db_pool *close_on_first; /* closes this pool from the callback */
};

static struct heard heard;
static int want_notes, want_resyncs;

static void on_note(void *arg, const char *payload)
{
	struct heard *h = arg;
	if (h->n < (int)SW_ARRAY_SIZE(h->payloads))
		snprintf(h->payloads[h->n], sizeof(h->payloads[0]), "%s", payload);
	h->n++;
	if (h->close_on_first) {
		struct sw_db_pool *pool = h->close_on_first;
		h->close_on_first = NULL;
		closed = false;
		sw_db_pool_close(pool, on_closed, NULL);
	}
}

static void on_resync(void *arg)
{
	struct heard *h = arg;
	h->resyncs++;
}

static bool heard_enough(void)
{
	return heard.n >= want_notes;
}

static struct heard heard2; /* a second channel's */

static bool both_heard(void)
{
	return heard.n >= 1 && heard2.n >= 1;
}

static bool resynced_enough(void)
{
	return heard.resyncs >= want_resyncs;
}

static int listen_auth(struct sw_db_pool *pool)
{
	memset(&heard, 0, sizeof(heard));
	return sw_db_pool_listen(pool, "steward_auth", on_note, on_resync, &heard);
}

/* Runs sqls (NULL-terminated) in order on a blocking connection of its
 * own, as another stewardd process would; false on any error. The first
 * value of the last statement's first row goes into out, if given. */
static bool run_sql(const char *ci, const char *const *sqls, char *out, size_t outlen)
{
	PGconn *pg = PQconnectdb(ci);
	bool ok = PQstatus(pg) == CONNECTION_OK;
	if (!ok)
		fprintf(stderr, "  connect: %s", PQerrorMessage(pg));
	for (; ok && *sqls; sqls++) {
		PGresult *r = PQexec(pg, *sqls);
		ExecStatusType st = PQresultStatus(r);
		ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
		if (!ok)
			fprintf(stderr, "  %s: %s", *sqls, PQerrorMessage(pg));
		else if (out && PQntuples(r) > 0 && PQnfields(r) > 0)
			snprintf(out, outlen, "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	PQfinish(pg);
	return ok;
}

static bool notify(const char *ci, const char *payload)
{
	char sql[160];
	snprintf(sql, sizeof(sql), "SELECT pg_notify('steward_auth', '%s')", payload);
	const char *sqls[] = { sql, NULL };
	return run_sql(ci, sqls, NULL, 0);
}

/* Backends of this database (but the asking one) matching cond, or -1. */
static int count_backends(const char *ci, const char *cond)
{
	char sql[300], out[32] = "";
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
		 "AND pid <> pg_backend_pid() AND %s", cond);
	const char *sqls[] = { sql, NULL };
	return run_sql(ci, sqls, out, sizeof(out)) ? atoi(out) : -1;
}

struct late_notify {
	const char *ci;
	const char *payload;
	bool ok;
};

static void *late_notify_main(void *arg)
{
	struct late_notify *ln = arg;
	nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	ln->ok = notify(ln->ci, ln->payload);
	return NULL;
}

TEST(a_notify_from_another_session_reaches_the_callback_with_its_payload)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 5000);
	REQUIRE(pool);
	cur_pool = pool;
	REQUIRE(run_until(pool_up, 5000));
	/* Connections already idle: one of them starts listening. */
	REQUIRE(listen_auth(pool) == 0);
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));

	/* Sent from another thread while this one runs the loop. */
	struct late_notify ln = { ci, "session:abc", false };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, late_notify_main, &ln) == 0);
	want_notes = 1;
	CHECK(run_until(heard_enough, 5000));
	pthread_join(th, NULL);
	CHECK(ln.ok);
	CHECK_INT_EQ(heard.n, 1);
	CHECK_STR_EQ(heard.payloads[0], "session:abc");
	close_pool(pool);
}

TEST(resync_runs_once_at_start_and_exactly_one_connection_listens)
{
	char ci[600];
	fresh_database("p_listen_one", ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 3, 5000);
	REQUIRE(pool);
	/* Before any connection is up: the first to be ready listens. */
	REQUIRE(listen_auth(pool) == 0);
	CHECK_INT_EQ(heard.resyncs, 0); /* never inside the call */
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	run_until(NULL, 500); /* the other two are up by now */
	CHECK_INT_EQ(heard.resyncs, 1);
	CHECK_INT_EQ(count_backends(ci, "application_name = 'stewardd'"), 3);
	CHECK_INT_EQ(count_backends(ci, "query LIKE 'LISTEN%'"), 1);
	close_pool(pool);
}

TEST(listening_resumes_after_a_database_restart_with_a_resync)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 10000);
	REQUIRE(pool);
	cur_pool = pool;
	REQUIRE(listen_auth(pool) == 0);
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	REQUIRE(notify(ci, "session:before"));
	want_notes = 1;
	CHECK(run_until(heard_enough, 5000));

	sw_db_embedded_stop();
	CHECK(run_until(pool_down, 2000));
	run_until(NULL, 200);
	int before = heard.resyncs;
	char again[512], err[1024];
	int r = sw_db_embedded_start(scratch_db.data_dir, again, sizeof(again), err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "  restart: %s\n", err);
	REQUIRE(r == 0);
	want_resyncs = before + 1;
	CHECK(run_until(resynced_enough, 10000));
	REQUIRE(notify(ci, "token:after"));
	want_notes = 2;
	CHECK(run_until(heard_enough, 5000));
	CHECK_INT_EQ(heard.n, 2);
	CHECK_STR_EQ(heard.payloads[0], "session:before");
	CHECK_STR_EQ(heard.payloads[1], "token:after");
	close_pool(pool);
}

TEST(a_rolled_back_notify_is_not_delivered_and_a_committed_one_is)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	REQUIRE(listen_auth(pool) == 0);
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	const char *rolled[] = { "BEGIN", "SELECT pg_notify('steward_auth', 'token:rolled-back')",
				 "ROLLBACK", NULL };
	const char *committed[] = { "BEGIN", "SELECT pg_notify('steward_auth', 'token:committed')",
				    "COMMIT", NULL };
	REQUIRE(run_sql(ci, rolled, NULL, 0));
	REQUIRE(run_sql(ci, committed, NULL, 0));
	want_notes = 1;
	CHECK(run_until(heard_enough, 5000));
	run_until(NULL, 100);
	/* Delivered in commit order: a rolled-back one would come first. */
	CHECK_INT_EQ(heard.n, 1);
	CHECK_STR_EQ(heard.payloads[0], "token:committed");
	close_pool(pool);
}

TEST(queries_keep_working_on_the_listening_connection)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	/* One connection: it is the listener and serves every query. */
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	REQUIRE(listen_auth(pool) == 0);
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	struct answer a, b, c;
	REQUIRE(query(pool, &sw_db_stmt_ping, NULL, &a) == 0);
	CHECK(run_until(none_outstanding, 5000));
	CHECK_INT_EQ(a.code, 0);
	CHECK_STR_EQ(a.value, "1");

	/* A NOTIFY committed while a query runs on the listener arrives with
	 * its answer; the query after it runs on the same connection. */
	const char *fifth[] = { "0.2" };
	const char *after[] = { "after" };
	REQUIRE(query(pool, &sw_db_stmt_test_sleep, fifth, &b) == 0);
	REQUIRE(query(pool, &sw_db_stmt_test_echo, after, &c) == 0);
	REQUIRE(notify(ci, "user:during-query"));
	want_notes = 1;
	CHECK(run_until(none_outstanding, 5000));
	CHECK(run_until(heard_enough, 5000));
	CHECK_INT_EQ(b.code, 0);
	CHECK_INT_EQ(c.code, 0);
	CHECK_STR_EQ(c.value, "after");
	CHECK_STR_EQ(heard.payloads[0], "user:during-query");
	CHECK_INT_EQ(heard.resyncs, 1); /* the listener was never lost */
	close_pool(pool);
}

TEST(a_lost_listener_is_replaced_and_listening_resyncs)
{
	char ci[600];
	fresh_database("p_listen_lost", ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 5000);
	REQUIRE(pool);
	REQUIRE(listen_auth(pool) == 0);
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	run_until(NULL, 300);
	char out[32] = "";
	const char *kill[] = { "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
			       "WHERE datname = current_database() AND pid <> pg_backend_pid() "
			       "AND query LIKE 'LISTEN%'", NULL };
	REQUIRE(run_sql(ci, kill, out, sizeof(out)));
	CHECK_STR_EQ(out, "1");
	want_resyncs = 2;
	CHECK(run_until(resynced_enough, 5000));
	REQUIRE(notify(ci, "session:after-loss"));
	want_notes = 1;
	CHECK(run_until(heard_enough, 5000));
	CHECK_STR_EQ(heard.payloads[0], "session:after-loss");
	close_pool(pool);
}

TEST(a_callback_may_close_the_pool_and_nothing_is_delivered_after)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 2, 5000);
	REQUIRE(pool);
	REQUIRE(listen_auth(pool) == 0);
	heard.close_on_first = pool;
	closed = false; /* set again only by the close from the callback */
	want_resyncs = 1;
	REQUIRE(run_until(resynced_enough, 5000));
	const char *two[] = { "BEGIN", "SELECT pg_notify('steward_auth', 'user:1')",
			      "SELECT pg_notify('steward_auth', 'user:2')", "COMMIT", NULL };
	REQUIRE(run_sql(ci, two, NULL, 0));
	CHECK(run_until(is_closed, 5000));
	CHECK_INT_EQ(heard.n, 1);
	CHECK_STR_EQ(heard.payloads[0], "user:1");
}

TEST(listen_refuses_bad_channels_a_second_channel_and_a_closing_pool)
{
	char ci[600];
	shared_database(ci, sizeof(ci));
	struct sw_db_pool *pool = sw_db_pool_new(loop, ci, 1, 5000);
	REQUIRE(pool);
	memset(&heard, 0, sizeof(heard));
	char c64[65], c63[64];
	memset(c64, 'a', 64);
	c64[64] = '\0';
	memset(c63, 'a', 63);
	c63[63] = '\0';
	const char *bad[] = { "Steward_auth", "1auth", "steward-auth", "a\"b", "", NULL, c64 };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++)
		CHECK_INT_EQ(sw_db_pool_listen(pool, bad[i], on_note, on_resync, &heard), -EINVAL);
	CHECK_INT_EQ(sw_db_pool_listen(pool, "steward_auth", NULL, on_resync, &heard), -EINVAL);
	CHECK_INT_EQ(sw_db_pool_listen(pool, "steward_auth", on_note, NULL, &heard), -EINVAL);
	/* The longest name PostgreSQL keeps whole is accepted and listened on. */
	CHECK_INT_EQ(sw_db_pool_listen(pool, c63, on_note, on_resync, &heard), 0);
	CHECK_INT_EQ(sw_db_pool_listen(pool, c63, on_note, on_resync, &heard), -EALREADY);
	/* A second channel with callbacks of its own: one LISTEN covers both,
	 * each hears only its own notifications, and a resync is both's. */
	memset(&heard2, 0, sizeof(heard2));
	CHECK_INT_EQ(sw_db_pool_listen(pool, "steward_auth", on_note, on_resync, &heard2), 0);
	want_resyncs = 1;
	CHECK(run_until(resynced_enough, 5000));
	CHECK_INT_EQ(heard2.resyncs, 1);
	/* Once a connection listens, a channel cannot be added to its LISTEN. */
	CHECK_INT_EQ(sw_db_pool_listen(pool, "late", on_note, on_resync, &heard), -EBUSY);
	char sql[160];
	snprintf(sql, sizeof(sql), "SELECT pg_notify('%s', 'x'), pg_notify('steward_auth', 'y')", c63);
	const char *sqls[] = { sql, NULL };
	REQUIRE(run_sql(ci, sqls, NULL, 0));
	want_notes = 1;
	CHECK(run_until(both_heard, 5000));
	CHECK_INT_EQ(heard.n, 1);
	CHECK_STR_EQ(heard.payloads[0], "x");
	CHECK_INT_EQ(heard2.n, 1);
	CHECK_STR_EQ(heard2.payloads[0], "y");

	closed = false;
	sw_db_pool_close(pool, on_closed, NULL);
	CHECK_INT_EQ(sw_db_pool_listen(pool, "other", on_note, on_resync, &heard), -ECANCELED);
	CHECK(run_until(is_closed, 5000));
}

TEST_MAIN()
