/* The PostgreSQL pool's structures and the calls between its sections
 * (pool.c: connections, the query queue, LISTEN; its top comment tells how
 * they fit and why they are one file). Private to src/db. */
#ifndef STEWARD_DB_POOL_INTERNAL_H
#define STEWARD_DB_POOL_INTERNAL_H

#include <libpq-fe.h>
#include "steward/db/db.h"
#include "steward/io/io.h"

enum conn_state {
	CONN_DOWN,       /* no PGconn; the reconnect timer may be armed */
	CONN_CONNECTING, /* PQconnectPoll in progress */
	CONN_PREPARING,  /* the prepare pipeline is in flight */
	CONN_IDLE,       /* ready, POLLIN armed, not in pipeline mode */
	CONN_BUSY,       /* queries in flight, in pipeline mode (a sync each, or
			    one per batch of reads) */
	CONN_LISTENING,  /* up; its LISTEN is in flight (pool->listener) */
};

/* Notifications read but not yet delivered; beyond this many (in one
 * step), they are dropped for a resync. */
#define MAX_QUEUED_NOTIFICATIONS 1024u

struct note {
	struct note *next;
	unsigned channel; /* index in pool->channels */
	char payload[];
};

struct query {
	struct query *prev, *next; /* the pool's queue, while waiting; next: the
				      connection's pipeline, while on the wire */
	struct sw_db_pool *pool;
	struct conn *conn;         /* while on the wire */
	PGresult *result;          /* on the wire: its first result (or first error) */
	const struct sw_db_stmt *stmt;
	sw_db_cb cb;
	void *arg;
	struct sw_timer deadline;
	bool batched;              /* sent in a batch of reads, without a sync of its own */
	int nparams;
	const char **params;       /* point into this allocation */
};

struct conn {
	struct sw_db_pool *pool;
	enum conn_state state;
	PGconn *pg;
	struct sw_io_op poll;
	bool poll_inflight;
	bool poll_stale;     /* its completion is to be ignored */
	bool cancel_pending; /* stale, but the cancel could not be submitted yet */
	unsigned poll_mask;  /* of the poll in flight */
	unsigned want_mask;  /* to arm once the stale poll has completed */
	bool flushing;       /* PQflush returned 1: output waits for POLLOUT */
	unsigned prepared;   /* PREPARING: statements confirmed so far */
	struct sw_timer timer; /* reconnect backoff (DOWN), deadline (CONNECTING,
				  PREPARING, LISTENING) */
	unsigned backoff_ms;
	struct query *sent_head, *sent_tail; /* BUSY: the pipeline, oldest first */
	unsigned nsent;
	unsigned nsyncs;       /* syncs sent whose answer has not been read */
	bool batch_open;       /* reads sent since the last sync: the turn's end syncs them */
	PGresult *result;      /* LISTENING: the first result */
	const char *notice_reason; /* set by a FATAL notice (server shutting down) */
	const char *break_reason;  /* conn_break(): why, for the deferred conn_lost() */
	char break_detail[256];
};

struct sw_db_pool {
	struct sw_loop *loop;
	const char **keywords; /* connection parameters, NULL-terminated */
	const char **values;
	char *strings;         /* owns what keywords/values point at */
	unsigned query_timeout_ms;
	unsigned connect_timeout_ms;
	unsigned size;
	struct conn *conns;
	unsigned nup;          /* connections IDLE or BUSY */
	struct query *qhead, *qtail;
	unsigned nqueued;
	struct sw_turn sync_turn; /* queued while a connection has a batch open */
	uint32_t rng;

	/* health */
	bool down;             /* a connection attempt failed and none is up */
	struct sw_timer fail_timer; /* fails the queue while down */
	bool verified_up;
	uint64_t last_ok_ms;   /* 0: must be verified again */
	bool ping_inflight;
	const char *reason;    /* why not up: a static phrase */
	char logged[256];      /* the last connection failure logged */

	/* listening */
	struct listen_channel {
		char name[64];
		void (*cb)(void *arg, const char *payload);
		void (*resync)(void *arg);
		void *arg;
	} channels[SW_DB_MAX_CHANNELS];
	unsigned nchannels;    /* 0: not listening */
	char listen_sql[SW_DB_MAX_CHANNELS * 72]; /* LISTEN "<a>";LISTEN "<b>"... */
	struct conn *listener; /* LISTENING, or listens; NULL: none */
	struct sw_timer listen_timer; /* retry after the server refused LISTEN */
	bool resync_due;
	struct note *notes_head, *notes_tail;
	unsigned nnotes;

	/* closing */
	bool closing;
	void (*done)(void *arg);
	void *done_arg;
	struct sw_timer close_timer;
};

static inline uint64_t now_ms(const struct sw_db_pool *pool)
{
	return sw_loop_now_ms(pool->loop);
}

/* The pool's invariants (SW_ASSERT: Debug and sanitizer builds): the
 * counts agree with the states, a connection holds a query exactly while
 * BUSY (and the query points back at it), the listener is a connection
 * that is up, and at most one poll per connection is in flight. */
#if SW_CHECKS
void sw_db_pool_check(const struct sw_db_pool *pool);
#define POOL_CHECK(pool) sw_db_pool_check(pool)
#else
#define POOL_CHECK(pool) ((void)0)
#endif

/* ---- pool.c: connections ---- */
/* Arms the connection's one poll for mask (after a stale one completes);
 * on failure the connection is broken. */
void sw_db_conn_watch(struct conn *c, unsigned mask);
/* Marks c broken now and drops it from a timer (never inside the caller's
 * stack). */
void sw_db_conn_break(struct conn *c, const char *reason, const char *detail);
/* Drops c (its query fails with code), schedules the reconnect, hands the
 * listener on. */
void sw_db_conn_lost(struct conn *c, int code, const char *reason, const char *detail);
/* Keeps in *kept the first result of a statement, or its first error. */
void sw_db_keep_result(PGresult **kept, PGresult *r);
/* Reads what arrived on c (not pipelined: the LISTEN); done(c) once its
 * result is complete. */
void sw_db_conn_read_step(struct conn *c, void (*done)(struct conn *c));
/* Pushes libpq's output onto the socket (c->flushing: some is left);
 * false when the connection failed. */
bool sw_db_conn_push(struct conn *c);
/* libpq's message as one of our fixed phrases (never the text itself). */
const char *sw_db_classify(const char *msg);
/* Logs a connection failure once per change of its text. */
void sw_db_log_failure(struct sw_db_pool *pool, const char *detail);
/* The completion of a connection's poll. */
void sw_db_on_poll(struct sw_io_op *op, int res, uint32_t flags);
/* Frees a closing pool once nothing of it is in flight. */
void sw_db_check_closed(struct sw_db_pool *pool);

/* ---- the query queue ---- */
struct conn *sw_db_idle_conn(struct sw_db_pool *pool);
/* Starts queued queries on idle connections. */
void sw_db_dispatch(struct sw_db_pool *pool);
/* Fails every queued query with code. */
void sw_db_fail_queued(struct sw_db_pool *pool, int code, const char *message);
/* Calls the query's callback and frees it; q is on no list. */
void sw_db_query_finish(struct query *q, const PGresult *res, int code, const char *sqlstate,
			const char *message);
/* A BUSY connection's poll completed. */
void sw_db_conn_query_step(struct conn *c);

/* ---- LISTEN and notifications ---- */
/* Makes prefer (or another idle connection) the listener if none is. */
void sw_db_claim_listener(struct sw_db_pool *pool, struct conn *prefer);
/* A LISTENING connection's poll completed. */
void sw_db_conn_listen_step(struct conn *c);
/* Copies the notifications libpq parsed on c into the pool's queue. */
void sw_db_drain_notifies(struct conn *c);
/* Hands the queued notifications out (a due resync first). */
void sw_db_deliver_notes(struct sw_db_pool *pool);
void sw_db_drop_notes(struct sw_db_pool *pool);

#endif
