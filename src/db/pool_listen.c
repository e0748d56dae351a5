/* LISTEN and notifications in the PostgreSQL pool: exactly one connection
 * holds the LISTEN; notifications are copied into the pool's queue after
 * each read and delivered once the step is over (pool.c's top comment). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/db/statements.h"
#include "db/pool_internal.h"

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

