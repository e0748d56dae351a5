/* PostgreSQL: an asynchronous pool per loop thread, migrations and the
 * embedded cluster.
 *
 * The pool drives libpq non-blocking on the ring: PQconnectStart/Poll and
 * PQsendQueryPrepared, the socket polled through sw_io_poll(). Hot
 * statements are prepared on every connection when it is established. Each
 * query has a deadline (the pool's query timeout); on expiry the caller gets
 * -ETIMEDOUT and the connection is dropped and re-established with backoff
 * (PQcancel would block the loop). Idle connections are watched for
 * readability, so a server that goes away is noticed at once.
 *
 * All SQL lives in src/db/ (statements.c and migrations/). */
#ifndef STEWARD_DB_H
#define STEWARD_DB_H

#include <libpq-fe.h>
#include "steward/base/base.h"

struct sw_loop;
struct sw_db_pool;

struct sw_db_audited;

/* A statement prepared on every connection under its name. A statement
 * that acts on behalf of someone names its audit shape (SW_DB_AUDITED): the
 * registry then also prepares its audited twin, which runs the statement
 * and writes the audit record in one statement, so one transaction
 * (sw_db_query_audited()). */
struct sw_db_stmt {
	const char *name;
	const char *sql;
	int nparams;
	struct sw_db_audited *audited; /* NULL: never audited */
	/* The statement writes nothing, locks nothing and calls nothing that
	 * does: a plain SELECT. The pool may then run it in one implicit
	 * transaction with other such reads sent in the same turn of the
	 * loop (one sync, one write to the server for the batch); should one
	 * of them fail, the reads after it in the batch are sent again.
	 * A SELECT over a function that writes (steward_signup) is not one. */
	bool reads_only;
};

/* The audit shape of a statement: which of its result columns give the
 * record's target id (when the caller names none) and its metadata "name";
 * -1 for none. A statement whose record says more names SQL expressions
 * over its result columns, written c0, c1, ... (ncols of them are named):
 * the organization, actor, action and target type when the caller gives none,
 * metadata (a jsonb merged into the caller's), and a condition without
 * which no record is written (say, only when a state changed). The twin
 * is built once by the registry (src/db/audited.c). */
struct sw_db_audited {
	int id_col;
	int name_col;
	int ncols;
	const char *organization_sql, *actor_sql, *action_sql, *target_type_sql, *metadata_sql,
		*when_sql;
	bool always; /* recorded even when the statement returns no row (the
		      * statement raises an error when it did not act) */
	struct sw_db_stmt twin;
};
#define SW_DB_AUDITED(id, name) (&(struct sw_db_audited){ .id_col = (id), .name_col = (name) })

/* The record written with an audited statement. Any member may be NULL
 * (SQL NULL) but action and target_type; target_id NULL takes the
 * statement's id column; metadata is a JSON object (text), merged with
 * {"name": <name column>} when the shape has one. */
struct sw_db_audit_row {
	const char *organization_id;
	const char *actor_user_id;
	const char *action;
	const char *target_type;
	const char *target_id;
	const char *ip;
	const char *metadata_json;
};
#define SW_DB_AUDIT_PARAMS 7 /* the twin's parameters after the statement's own */

/* Statements (defined in src/db/statements.c). */
extern const struct sw_db_stmt sw_db_stmt_ping;
extern const struct sw_db_stmt sw_db_stmt_user_count;
extern const struct sw_db_stmt sw_db_stmt_setup;
extern const struct sw_db_stmt sw_db_stmt_signup;
extern const struct sw_db_stmt sw_db_stmt_user_by_email;

struct sw_db_error {
	int code;         /* 0 ok; -ETIMEDOUT, -ECONNRESET (lost), -EBUSY (queue full),
			     -ECANCELED (pool closing), -EIO (server error: see sqlstate) */
	char sqlstate[6]; /* for -EIO, e.g. "23505"; else empty */
	const char *message; /* for logs only; may contain no secret since params never appear */
};

/* Called on the pool's loop thread exactly once per accepted query. res is
 * NULL on error and is freed by the pool after the callback returns. */
typedef void (*sw_db_cb)(void *arg, const PGresult *res, const struct sw_db_error *err);

/* Creates a pool of size connections on loop; connecting starts at once and
 * failures are retried with backoff, so it returns even if the server is down. */
struct sw_db_pool *sw_db_pool_new(struct sw_loop *loop, const char *conninfo,
				  unsigned size, unsigned query_timeout_ms);
/* The pool of loop's thread, as its composition root (src/main/thread.c)
 * handed it over with sw_db_pool_attach(): how code that serves a request
 * reaches the database (sw_db_pool_of(req->loop)), since http knows no
 * database. NULL when the loop has none. The loop's data slot
 * (sw_loop_set_data) is the pool's in every loop that has one. */
void sw_db_pool_attach(struct sw_db_pool *pool);
struct sw_db_pool *sw_db_pool_of(const struct sw_loop *loop);
/* Stops accepting queries, fails queued ones with -ECANCELED, waits for
 * in-flight ones, closes connections, then calls done(arg) and frees itself. */
void sw_db_pool_close(struct sw_db_pool *pool, void (*done)(void *arg), void *arg);

/* Queues stmt with text parameters (NULL for SQL NULL). params are copied.
 * 0, or -EBUSY when SW_DB_MAX_PENDING_QUERIES are waiting, -ECANCELED when
 * closing; on error cb is not called. */
int sw_db_query(struct sw_db_pool *pool, const struct sw_db_stmt *stmt,
		const char *const *params, int nparams, sw_db_cb cb, void *arg);

/* Runs stmt (which must have an audit shape) and writes the audit record a
 * in the same statement: the record is written if and only if the
 * statement returns a row, and if it cannot be written the statement's
 * effect is rolled back with it (the caller gets the error). The result
 * is the statement's own. Returns as sw_db_query(); -EINVAL when stmt has
 * no audit shape or too many parameters. */
int sw_db_query_audited(struct sw_db_pool *pool, const struct sw_db_stmt *stmt,
			const char *const *params, int nparams, const struct sw_db_audit_row *a,
			sw_db_cb cb, void *arg);

/* The database's state as last seen, never older than
 * SW_DB_HEALTH_MAX_AGE_MS while queries flow (else a ping is started and
 * the state seen so far is returned). Makes no round trip. On false,
 * *ret_reason says why (static or pool-owned string). */
bool sw_db_pool_healthy(struct sw_db_pool *pool, const char **ret_reason);

/* Notifications on a channel: cb(arg, payload) runs on the pool's loop for
 * each NOTIFY received; resync(arg) runs whenever the pool (re)starts
 * listening (first time and after any connection loss), because
 * notifications sent while nobody listened are lost: the caller must then
 * drop everything it cached. At most SW_DB_MAX_CHANNELS channels per pool,
 * each with its own callbacks (a resync is every channel's); 0 or -errno.
 *
 * channel must match [a-z_][a-z0-9_]{0,62} and cb and resync be non-NULL
 * (else -EINVAL); -EALREADY if the pool listens on it already, -ENOSPC
 * past SW_DB_MAX_CHANNELS, -ECANCELED when closing, -EBUSY once a
 * connection listens: channels are added before the pool's loop runs
 * (src/main/thread.c's pool_created), since one LISTEN statement covers
 * them all. One connection of the pool sends LISTEN (the first to be idle;
 * when it is lost, another takes over) and still serves queries. Only
 * committed NOTIFYs arrive, in the server's order; payload is valid during
 * the call only. resync also runs when notifications had to be dropped
 * (out of memory, or a flood within one read). Neither callback runs inside a pool function, before the first
 * resync, or after sw_db_pool_close(); both may query or close the pool.
 * Until the first resync, and between a listener's loss and the next
 * resync, nothing is heard. An answer to a query sent before a cb or
 * resync ran may predate it: a cache should not keep it (e.g. compare a
 * generation counter taken when the query was sent). */
#define SW_DB_MAX_CHANNELS 4
int sw_db_pool_listen(struct sw_db_pool *pool, const char *channel,
		      void (*cb)(void *arg, const char *payload),
		      void (*resync)(void *arg), void *arg);

/* Applies the migrations compiled in from src/db/migrations/NNNN_name.sql,
 * in order, each in its own transaction, under a session advisory lock, and
 * records them in schema_migrations; applied ones are skipped. Blocking:
 * start-up only. 0 or -errno with a message in err. */
int sw_db_migrate(const char *conninfo, char *err, size_t errlen);

/* Embedded PostgreSQL: creates (first start) and runs a private cluster in
 * data_dir/pg with the system's binaries (/usr/lib/postgresql/N/bin, or
 * PG_BINDIR), listening only on a unix socket in data_dir/run. As root the
 * server runs as the "postgres" user. It dies with this process
 * (PR_SET_PDEATHSIG) and sw_db_embedded_stop() stops it cleanly. Writes the
 * connection string into conninfo. Blocking: start-up only. */
int sw_db_embedded_start(const char *data_dir, char *conninfo, size_t conninfo_len,
			 char *err, size_t errlen);
void sw_db_embedded_stop(void);

#endif
