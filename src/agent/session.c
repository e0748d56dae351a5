/* The control plane's agent sessions (steward/agent/session.h). */
#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "steward/agent/protocol.h"
#include "steward/agent/session.h"
#include "steward/agent/ws.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "steward/db/db.h"
#include "steward/db/statements_servers.h"
#include "steward/http/http.h"
#include "steward/http/upgrade.h"
#include "steward/io/io.h"

/* A read of pending commands takes at most 32 (the statement's LIMIT): a
 * session remembers that many ids it sent, not to send one twice on one
 * connection (a new connection sends again: the agent's journal answers). */
#define SESSION_SENT_IDS 32

enum state {
	AWAIT_HELLO, /* the 101 is out; nothing but a hello is taken */
	STORING,     /* the hello is being recorded; the welcome follows */
	ONLINE,      /* welcomed: heartbeats */
	CLOSING,     /* a close is queued; nothing more is read */
};

struct session {
	struct session *prev, *next; /* this thread's sessions */
	struct sw_http_upgraded *u;  /* NULL once closed() ran */
	struct sw_loop *loop;
	struct sw_ws_reader rd;
	struct sw_ws_out out;
	enum state state;
	char server_id[37];
	char token_hash[65];
	char connection_id[37];
	char peer[46];
	uint64_t protocol;        /* chosen at the hello (the welcome says it) */
	uint64_t hb_seq;          /* the last heartbeat sent (1) or received (2) */
	uint64_t last_answer_ms;  /* monotonic: the hello, the last heartbeat answered, or the last
				   * command message (a heartbeat's answer may queue behind a
				   * command's output: an agent sending it is not silent) */
	unsigned queries;         /* in flight; each holds the session */
	bool seen_due;            /* a heartbeat answered since lastSeenAt was last written */
	bool pending_inflight;    /* the server's pending commands are being read */
	bool pending_again;       /* ... and must be read again once answered */
	bool input_inflight;      /* commands' input chunks are being taken */
	bool input_again;         /* ... and must be taken again once answered */
	/* Progress chunks waiting for the insert in flight: one insert (one
	 * transaction) at a time takes all that came meanwhile, so a chatty
	 * command costs few commits and never queues the heartbeats' writes
	 * behind a long line of its own. */
	json_t *out_batch;        /* [{id, seq, stream, data}] */
	size_t out_batch_bytes;
	bool out_inflight;
	/* The input credit the same way: the agent acks every chunk, and the
	 * write in flight is followed by one of the latest count that came
	 * meanwhile (a build's context is written once per batch of acks,
	 * not once per 48 KiB chunk; bench/results/agents.md). */
	bool taken_inflight;
	char taken_id[37];        /* "": none waits */
	uint64_t taken_n;
	/* ids sent on this connection, the latest; allocated with the first
	 * command (most sessions are idle: 10,000 of them would hold 12 MB) */
	char (*sent)[37];
	unsigned nsent;
	bool stored;              /* the hello is on the row: OFFLINE is written at the end */
	struct session *hb_prev, *hb_next; /* this thread's heartbeat line, while ONLINE */
	uint64_t hb_due_ms;       /* monotonic: the next heartbeat */
	bool hb_listed;
};

static unsigned heartbeat_ms = SW_AGENT_HEARTBEAT_MS_DEFAULT;
static _Thread_local struct session *sessions;
/* lastSeenAt of this thread's sessions is written in one statement at most
 * every half heartbeat interval (not one UPDATE per heartbeat: 10,000
 * agents would be 1,000 statements a second, bench/agent_fleet.mjs). A
 * live agent's lastSeenAt is then never older than about one interval,
 * well inside the three a read allows before it says OFFLINE. */
static _Thread_local bool seen_writing;
static _Thread_local uint64_t seen_written_ms;
/* The heartbeats of this thread's ONLINE sessions: one timer per loop
 * thread over a line in order of due time, not a timer per session (at
 * 10,000 agents the per-session timers' heap was a tenth of stewardd's
 * CPU, bench/agent_fleet.mjs). Every session is due heartbeat_ms after it
 * was last served, so appending keeps the line in order; the timer serves
 * what is due (and what falls due within HB_BATCH_MS: fewer wake-ups) and
 * sleeps until the head's turn. The timer is stopped whenever the line is
 * empty, so a stopping loop holds none of it. */
static _Thread_local struct session *hb_head, *hb_tail;
static _Thread_local struct sw_timer hb_timer;
static _Thread_local struct sw_loop *hb_loop;
static _Thread_local bool hb_sweeping;
#define HB_BATCH_MS 20

void sw_agent_sessions_configure(unsigned ms)
{
	heartbeat_ms = SW_MIN(SW_MAX(ms, 100u), 600000u);
}

unsigned sw_agent_heartbeat_ms(void)
{
	return heartbeat_ms;
}

static void hb_sweep(struct sw_timer *t);

static void hb_arm(void)
{
	if (hb_sweeping)
		return; /* the sweep arms once, at its end */
	if (!hb_head) {
		if (hb_loop)
			sw_timer_stop(hb_loop, &hb_timer);
		return;
	}
	uint64_t now = sw_loop_now_ms(hb_loop);
	uint64_t due = hb_head->hb_due_ms;
	sw_timer_stop(hb_loop, &hb_timer);
	sw_timer_start(hb_loop, &hb_timer, due > now ? due - now : 0, hb_sweep);
}

/* Puts s at the end of the line, due heartbeat_ms from now. */
static void hb_enqueue(struct session *s)
{
	SW_ASSERT(!s->hb_listed);
	hb_loop = s->loop;
	s->hb_due_ms = sw_loop_now_ms(s->loop) + heartbeat_ms;
	s->hb_listed = true;
	s->hb_next = NULL;
	s->hb_prev = hb_tail;
	if (hb_tail)
		hb_tail->hb_next = s;
	else
		hb_head = s;
	hb_tail = s;
	if (!sw_timer_armed(&hb_timer))
		hb_arm();
}

static void hb_remove(struct session *s)
{
	if (!s->hb_listed)
		return;
	s->hb_listed = false;
	if (s->hb_prev)
		s->hb_prev->hb_next = s->hb_next;
	else
		hb_head = s->hb_next;
	if (s->hb_next)
		s->hb_next->hb_prev = s->hb_prev;
	else
		hb_tail = s->hb_prev;
	s->hb_prev = s->hb_next = NULL;
	/* A new head's turn is later: the timer wakes for the old one, serves
	 * nothing and sleeps again; only an empty line stops it. */
	if (!hb_head)
		hb_arm();
}

static void heartbeat_due(struct session *s);

static void hb_sweep(struct sw_timer *t)
{
	(void)t;
	uint64_t now = sw_loop_now_ms(hb_loop);
	/* Those served now go to the end, due an interval later: never
	 * served twice in one sweep. */
	struct session *last = hb_tail;
	hb_sweeping = true;
	while (hb_head && hb_head->hb_due_ms <= now + HB_BATCH_MS) {
		struct session *s = hb_head;
		bool was_last = s == last;
		hb_remove(s);
		heartbeat_due(s);
		if (was_last)
			break;
	}
	hb_sweeping = false;
	hb_arm();
}

static void session_free(struct session *s)
{
	json_decref(s->out_batch);
	free(s->sent);
	sw_ws_reader_release(&s->rd);
	sw_ws_out_release(&s->out);
	free(s);
}

/* A query's answer holds the session: freed by the last of closed() and
 * the answers. */
static void unhold(struct session *s)
{
	SW_ASSERT(s->queries > 0);
	if (--s->queries == 0 && !s->u)
		session_free(s);
}

static bool query(struct session *s, const struct sw_db_stmt *stmt, const char *const *params,
		  int n, sw_db_cb cb)
{
	struct sw_db_pool *pool = sw_db_pool_of(s->loop);
	if (!pool || sw_db_query(pool, stmt, params, n, cb, s) < 0)
		return false;
	s->queries++;
	return true;
}

/* Hands what is queued to the socket once it has taken the last batch, so
 * that s->out holds what the agent has not read and its cap means that. */
static void pump(struct session *s)
{
	if (!s->u || !s->out.buf.len || sw_http_upgraded_pending(s->u))
		return;
	sw_http_upgraded_write(s->u, s->out.buf.data, s->out.buf.len);
	/* Written out (copied): an idle session keeps no output buffer. */
	sw_buf_release(&s->out.buf);
}

/* Queues a close (code 0: an empty one) after what is queued, then ends
 * the connection once written. */
static void close_with(struct session *s, unsigned code, const char *reason)
{
	if (!s->u || s->state == CLOSING)
		return;
	s->state = CLOSING;
	hb_remove(s);
	if (code)
		sw_log_info("agent session closed server=%s peer=%s code=%u reason=%s", s->server_id,
			    s->peer, code, reason ? reason : "");
	sw_ws_out_close(&s->out, code, reason);
	if (s->out.buf.len) {
		sw_http_upgraded_write(s->u, s->out.buf.data, s->out.buf.len);
		sw_buf_consume(&s->out.buf, s->out.buf.len);
	}
	sw_http_upgraded_end(s->u);
}

/* A peer that does not read what it is sent: dropped without a goodbye
 * (a close would queue behind what it does not read). */
static void drop(struct session *s, const char *why)
{
	if (!s->u || s->state == CLOSING)
		return;
	s->state = CLOSING;
	hb_remove(s);
	sw_log_warn("agent session dropped server=%s peer=%s: %s", s->server_id, s->peer, why);
	sw_http_upgraded_abort(s->u);
}

static void send_msg(struct session *s, const struct sw_agent_msg *m)
{
	struct sw_buf b = { 0 };
	int r = sw_agent_msg_encode(&b, m);
	if (r == 0)
		r = sw_ws_out_message(&s->out, SW_WS_OP_TEXT, b.data, b.len);
	sw_buf_release(&b);
	if (r == -ENOBUFS)
		drop(s, "its queued output is over the cap (it does not read)");
	else if (r < 0)
		close_with(s, SW_WS_CLOSE_INTERNAL, "cannot send");
	else
		pump(s);
}

/* ---- the row ---- */

static void gone_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	(void)res;
	struct session *s = arg;
	if (err->code)
		sw_log_warn("agent session: cannot mark server %s OFFLINE: %s", s->server_id,
			    err->message);
	unhold(s);
}

struct seen_batch {
	unsigned n;
	struct session *s[];
};

static void seen_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct seen_batch *b = arg;
	seen_writing = false;
	bool *held = calloc(b->n ? b->n : 1, sizeof(*held));
	for (int r = 0; !err->code && held && r < PQntuples(res); r++) {
		unsigned long i = strtoul(PQgetvalue(res, r, 0), NULL, 10);
		if (i >= 1 && i <= b->n)
			held[i - 1] = true;
	}
	for (unsigned i = 0; i < b->n; i++) {
		struct session *s = b->s[i];
		/* Not written: the token was rotated, the server deleted, or a
		 * newer session holds it. A database that fails is not the
		 * agent's fault: written again next time. */
		if (err->code || !held)
			s->seen_due = true;
		else if (!held[i])
			close_with(s, SW_WS_CLOSE_POLICY,
				   "agent token rotated, server deleted, or a newer session holds it");
		unhold(s);
	}
	free(held);
	free(b);
}

/* Writes lastSeenAt of this thread's sessions that answered a heartbeat
 * since the last write, unless one write is in flight or (without force)
 * the last was less than half an interval ago. */
static void seen_write(struct sw_loop *loop, bool force)
{
	uint64_t now = sw_loop_now_ms(loop);
	if (seen_writing || (!force && now - seen_written_ms < heartbeat_ms / 2))
		return;
	unsigned n = 0;
	for (struct session *s = sessions; s; s = s->next)
		n += s->seen_due && s->u && s->state == ONLINE;
	if (!n)
		return;
	struct seen_batch *b = malloc(sizeof(*b) + n * sizeof(b->s[0]));
	struct sw_buf ids = { 0 }, hashes = { 0 }, conns = { 0 };
	struct sw_db_pool *pool = sw_db_pool_of(loop);
	if (!b || !pool)
		goto fail;
	b->n = 0;
	for (struct session *s = sessions; s; s = s->next) {
		if (!s->seen_due || !s->u || s->state != ONLINE)
			continue;
		const char *sep = b->n ? "," : "{";
		if (sw_buf_appendf(&ids, "%s%s", sep, s->server_id) < 0 ||
		    sw_buf_appendf(&hashes, "%s%s", sep, s->token_hash) < 0 ||
		    sw_buf_appendf(&conns, "%s%s", sep, s->connection_id) < 0)
			goto fail;
		b->s[b->n++] = s;
	}
	if (sw_buf_append(&ids, "}", 2) < 0 || sw_buf_append(&hashes, "}", 2) < 0 ||
	    sw_buf_append(&conns, "}", 2) < 0)
		goto fail;
	const char *params[] = { ids.data, hashes.data, conns.data };
	if (sw_db_query(pool, &sw_db_stmt_agent_seen, params, 3, seen_done, b) < 0)
		goto fail;
	for (unsigned i = 0; i < b->n; i++) {
		b->s[i]->seen_due = false;
		b->s[i]->queries++;
	}
	seen_writing = true;
	seen_written_ms = now;
	sw_buf_release(&ids);
	sw_buf_release(&hashes);
	sw_buf_release(&conns);
	return;
fail:
	free(b);
	sw_buf_release(&ids);
	sw_buf_release(&hashes);
	sw_buf_release(&conns);
}

static void seen(struct session *s)
{
	if (s->state != ONLINE)
		return;
	s->seen_due = true;
	seen_write(s->loop, false);
}

/* ---- commands ---- */

static void command_written(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	(void)res;
	struct session *s = arg;
	if (err->code)
		sw_log_warn("agent session server=%s: a command's state was not written: %s",
			    s->server_id, err->message);
	unhold(s);
}

static bool was_sent(const struct session *s, const char *id)
{
	if (!s->sent)
		return false;
	for (unsigned i = 0; i < SW_MIN(s->nsent, (unsigned)SESSION_SENT_IDS); i++)
		if (strcmp(s->sent[i], id) == 0)
			return true;
	return false;
}

static void fetch_pending(struct session *s);

static void send_command(struct session *s, const PGresult *res, int row)
{
	const char *id = PQgetvalue(res, row, 0), *kind = PQgetvalue(res, row, 1);
	struct sw_agent_msg m = { .type = SW_AGENT_MSG_COMMAND, .id = id, .kind_name = kind,
				  .expires_at_ms = strtoull(PQgetvalue(res, row, 3), NULL, 10) };
	if (was_sent(s, id) || !sw_agent_cmd_from_name(kind, &m.kind))
		return;
	if (!s->sent && !(s->sent = calloc(SESSION_SENT_IDS, sizeof(s->sent[0]))))
		return; /* sent again with the next read of pending commands */
	if (PQgetisnull(res, row, 4)) {
		m.payload = json_loads(PQgetvalue(res, row, 2), 0, NULL);
	} else {
		/* Sealed at rest (migration 0023): opened here, in memory, for
		 * the send only. */
		const char *sealed = PQgetvalue(res, row, 4);
		size_t cap = (size_t)PQgetlength(res, row, 4) + 1, len = 0;
		char aad[SW_SEAL_AAD_MAX], *plain = malloc(cap);
		sw_seal_aad_agent_command(aad, id);
		int r = plain ? sw_unseal(sealed, aad, plain, cap, &len) : -ENOMEM;
		if (r == 0)
			m.payload = json_loadb(plain, len, 0, NULL);
		else
			sw_log_warn("agent session server=%s: command %s cannot be opened (%s); not sent",
				    s->server_id, id, strerror(-r));
		if (plain)
			OPENSSL_cleanse(plain, cap);
		free(plain);
	}
	if (!m.payload)
		return;
	send_msg(s, &m);
	json_decref(m.payload);
	snprintf(s->sent[s->nsent++ % SESSION_SENT_IDS], sizeof(s->sent[0]), "%s", id);
	const char *params[] = { s->server_id, id };
	query(s, &sw_db_stmt_agent_command_sent, params, 2, command_written);
}

static void pending_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct session *s = arg;
	s->pending_inflight = false;
	if (err->code)
		sw_log_warn("agent session server=%s: cannot read its commands: %s", s->server_id,
			    err->message);
	for (int i = 0; !err->code && i < PQntuples(res) && s->u && s->state == ONLINE; i++)
		send_command(s, res, i);
	if (s->pending_again) {
		s->pending_again = false;
		fetch_pending(s);
	}
	unhold(s);
}

/* Runs stmt for the server unless it is in flight already (then once
 * more after it: *again). */
static void read_once(struct session *s, bool *inflight, bool *again, const struct sw_db_stmt *stmt,
		      sw_db_cb cb)
{
	if (!s->u || s->state != ONLINE)
		return;
	if (*inflight) {
		*again = true;
		return;
	}
	const char *params[] = { s->server_id };
	if (query(s, stmt, params, 1, cb))
		*inflight = true;
}

/* Sends the server's pending commands that this connection has not sent:
 * after the welcome, and whenever one is issued on any replica. */
static void fetch_pending(struct session *s)
{
	read_once(s, &s->pending_inflight, &s->pending_again, &sw_db_stmt_agent_commands_pending,
		  pending_done);
}

/* ---- a command's input and output (docs/agent-protocol.md) ---- */

static void fetch_input(struct session *s);

struct chunk_row {
	const PGresult *res;
	int row;
};

static int chunk_cmp(const void *a, const void *b)
{
	const struct chunk_row *x = a, *y = b;
	int c = strcmp(PQgetvalue(x->res, x->row, 0), PQgetvalue(y->res, y->row, 0));
	if (c)
		return c;
	unsigned long long p = strtoull(PQgetvalue(x->res, x->row, 1), NULL, 10);
	unsigned long long q = strtoull(PQgetvalue(y->res, y->row, 1), NULL, 10);
	return p < q ? -1 : p > q;
}

static void input_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct session *s = arg;
	s->input_inflight = false;
	int n = err->code ? 0 : PQntuples(res);
	if (err->code)
		sw_log_warn("agent session server=%s: cannot read its commands' input: %s", s->server_id,
			    err->message);
	struct chunk_row *rows = n ? calloc((size_t)n, sizeof(*rows)) : NULL;
	for (int i = 0; rows && i < n; i++)
		rows[i] = (struct chunk_row){ res, i };
	if (rows)
		qsort(rows, (size_t)n, sizeof(*rows), chunk_cmp);
	for (int i = 0; rows && i < n && s->u && s->state == ONLINE; i++) {
		int r = rows[i].row;
		struct sw_agent_msg m = { .type = SW_AGENT_MSG_INPUT,
					  .id = PQgetvalue(res, r, 0),
					  .seq = strtoull(PQgetvalue(res, r, 1), NULL, 10),
					  .data = PQgetvalue(res, r, 2),
					  .last = PQgetvalue(res, r, 3)[0] == 't' };
		send_msg(s, &m);
	}
	free(rows);
	/* A full batch: there may be more (the job keeps a window's worth). */
	if (s->input_again || n == 32) {
		s->input_again = false;
		fetch_input(s);
	}
	unhold(s);
}

/* Sends the input chunks the jobs have put for this server's commands and
 * that were not sent yet: at most a window past what the agent has taken,
 * for the job puts no more than that. */
static void fetch_input(struct session *s)
{
	read_once(s, &s->input_inflight, &s->input_again, &sw_db_stmt_agent_input_take, input_done);
}

static void flush_output(struct session *s);
static void flush_taken(struct session *s);

static void taken_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct session *s = arg;
	s->taken_inflight = false;
	flush_taken(s); /* before the unhold, as output_done() */
	command_written(arg, res, err);
}

static void flush_taken(struct session *s)
{
	if (s->taken_inflight || !s->taken_id[0])
		return;
	char taken[24];
	snprintf(taken, sizeof(taken), "%llu", (unsigned long long)s->taken_n);
	const char *params[] = { s->server_id, s->taken_id, taken };
	if (query(s, &sw_db_stmt_agent_input_taken, params, 3, taken_done))
		s->taken_inflight = true;
	s->taken_id[0] = '\0';
}

/* An ack's inputTaken: written now, or after the write in flight with the
 * latest count (another command's waiting count is written first). */
static void on_input_taken(struct session *s, const char *id, uint64_t n)
{
	if (s->taken_id[0] && strcmp(s->taken_id, id) != 0) {
		char taken[24];
		snprintf(taken, sizeof(taken), "%llu", (unsigned long long)s->taken_n);
		const char *params[] = { s->server_id, s->taken_id, taken };
		query(s, &sw_db_stmt_agent_input_taken, params, 3, command_written);
		s->taken_id[0] = '\0';
	}
	if (!s->taken_id[0] || n > s->taken_n)
		s->taken_n = n;
	snprintf(s->taken_id, sizeof(s->taken_id), "%s", id);
	flush_taken(s);
}

static void output_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct session *s = arg;
	s->out_inflight = false;
	flush_output(s); /* before the unhold: the session may be closed and freed with it */
	command_written(arg, res, err);
}

static void flush_output(struct session *s)
{
	if (s->out_inflight || !s->out_batch || !json_array_size(s->out_batch))
		return;
	char *rows = json_dumps(s->out_batch, JSON_COMPACT);
	json_array_clear(s->out_batch);
	s->out_batch_bytes = 0;
	const char *params[] = { s->server_id, rows };
	if (rows && query(s, &sw_db_stmt_agent_output_put, params, 2, output_done))
		s->out_inflight = true;
	free(rows);
}

/* A progress chunk of this server's command, for its job to read; a chunk
 * resent under its seq is dropped by the table's key. */
static void on_progress(struct session *s, const struct sw_agent_msg *m)
{
	if (!sw_is_uuid(sw_str_cstr(m->id)))
		return;
	if (!s->out_batch && !(s->out_batch = json_array()))
		return;
	s->out_batch_bytes += strlen(m->data);
	if (s->out_batch_bytes > SW_AGENT_MAX_QUEUED_OUTPUT) {
		drop(s, "its output outruns the database");
		return;
	}
	json_array_append_new(s->out_batch, json_pack("{s:s,s:I,s:s,s:s}", "id", m->id, "seq",
						      (json_int_t)m->seq, "stream", m->stream, "data",
						      m->data));
	flush_output(s);
}

/* The agent's ack or result, written on this server's command only. */
static void on_command_answer(struct session *s, const struct sw_agent_msg *m)
{
	/* Our commands' ids are UUIDs: an answer to another id answers
	 * nothing we sent (the statement would only refuse it). */
	if (!sw_is_uuid(sw_str_cstr(m->id)))
		return;
	if (m->type == SW_AGENT_MSG_ACK && m->input_taken) {
		on_input_taken(s, m->id, m->input_taken);
		return;
	}
	if (m->type == SW_AGENT_MSG_ACK) {
		const char *params[] = { s->server_id, m->id };
		query(s, &sw_db_stmt_agent_command_acked, params, 2, command_written);
		return;
	}
	char *result = m->ok && m->result ? json_dumps(m->result, JSON_COMPACT) : NULL;
	const char *params[] = { s->server_id,
				 m->id,
				 m->ok ? "t" : "f",
				 m->ok ? (result ? result : "{}") : NULL,
				 m->ok ? NULL : m->error_code,
				 m->ok ? NULL : m->error_message };
	query(s, &sw_db_stmt_agent_command_result, params, 6, command_written);
	free(result);
}

static void hello_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct session *s = arg;
	if (s->u && s->state == STORING) {
		if (err->code) {
			close_with(s, SW_WS_CLOSE_TRY_AGAIN, "the control plane cannot record the agent");
		} else if (PQntuples(res) == 0) {
			close_with(s, SW_WS_CLOSE_POLICY, "agent token rotated or server deleted");
		} else {
			s->stored = true;
			s->state = ONLINE;
			s->last_answer_ms = sw_loop_now_ms(s->loop);
			struct sw_agent_msg w = { .type = SW_AGENT_MSG_WELCOME,
						  .connection_id = s->connection_id,
						  .protocol = s->protocol,
						  .heartbeat_ms = heartbeat_ms };
			send_msg(s, &w);
			sw_log_info("agent online server=%s peer=%s connection=%s", s->server_id, s->peer,
				    s->connection_id);
			hb_enqueue(s);
			fetch_pending(s);
		}
	} else if (!err->code && PQntuples(res) == 1) {
		/* Recorded after the connection went: say so. */
		s->stored = true;
	}
	if (!s->u && s->stored) {
		const char *params[] = { s->server_id, s->connection_id };
		query(s, &sw_db_stmt_agent_gone, params, 2, gone_done);
	}
	unhold(s);
}

static void on_hello(struct session *s, const struct sw_agent_msg *m)
{
	uint64_t protocol;
	if (!sw_agent_protocol_choose(m, &protocol)) {
		char reason[64];
		snprintf(reason, sizeof(reason), "this control plane speaks protocol %d to %d",
			 SW_AGENT_PROTOCOL_MIN, SW_AGENT_PROTOCOL_MAX);
		close_with(s, SW_WS_CLOSE_POLICY, reason);
		return;
	}
	s->protocol = protocol;
	json_t *host = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "os", m->host.os, "kernel",
				 m->host.kernel, "arch", m->host.arch, "hostname", m->host.hostname,
				 "cores", (json_int_t)m->host.cores, "memoryBytes",
				 (json_int_t)m->host.memory_bytes);
	char *host_text = host ? json_dumps(host, JSON_COMPACT) : NULL;
	char *caps_text = m->capabilities ? json_dumps(m->capabilities, JSON_COMPACT)
					  : strdup("[]");
	json_decref(host);
	char proto[24], hb[24];
	snprintf(proto, sizeof(proto), "%llu", (unsigned long long)protocol);
	snprintf(hb, sizeof(hb), "%u", heartbeat_ms);
	bool ok = host_text && caps_text && sw_random_uuid(s->connection_id) == 0;
	if (ok) {
		const char *params[] = { s->server_id,	     s->token_hash, s->connection_id,
					 m->agent_version, proto,	    m->boot_id,
					 host_text,	     caps_text,	    hb };
		ok = query(s, &sw_db_stmt_agent_hello, params, 9, hello_done);
	}
	free(host_text);
	free(caps_text);
	if (!ok) {
		close_with(s, SW_WS_CLOSE_TRY_AGAIN, "the control plane cannot record the agent");
		return;
	}
	s->state = STORING;
}

/* ---- messages and frames ---- */

static void on_message(struct session *s, const struct sw_ws_event *ev)
{
	if (ev->opcode != SW_WS_OP_TEXT) {
		close_with(s, SW_WS_CLOSE_UNSUPPORTED, "protocol 1 sends text messages only");
		return;
	}
	struct sw_agent_msg m;
	char err[128];
	int r = sw_agent_msg_decode((const char *)ev->data, ev->len, &m, err, sizeof(err));
	if (r < 0) {
		close_with(s, r == -ENOMEM ? SW_WS_CLOSE_INTERNAL : SW_WS_CLOSE_POLICY,
			   r == -ENOMEM ? "out of memory" : err);
		return;
	}
	if (s->state == AWAIT_HELLO) {
		if (m.type == SW_AGENT_MSG_HELLO)
			on_hello(s, &m);
		else
			close_with(s, SW_WS_CLOSE_POLICY, "the first message must be a hello");
	} else if (m.type == SW_AGENT_MSG_HEARTBEAT && s->state == ONLINE) {
		/* 2: the agent's own, seq counting up; nothing is answered. */
		bool own = s->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS;
		if (!own && m.seq > s->hb_seq) {
			close_with(s, SW_WS_CLOSE_POLICY, "a heartbeat answers a seq never sent");
		} else if (own && m.seq <= s->hb_seq) {
			close_with(s, SW_WS_CLOSE_POLICY, "a heartbeat's seq must grow");
		} else {
			if (own)
				s->hb_seq = m.seq;
			s->last_answer_ms = sw_loop_now_ms(s->loop);
			seen(s);
		}
	} else if (m.type == SW_AGENT_MSG_HEARTBEAT && s->state == STORING) {
		/* cannot be: no heartbeat was sent before the welcome */
		close_with(s, SW_WS_CLOSE_POLICY, "a heartbeat before the welcome");
	} else if ((m.type == SW_AGENT_MSG_ACK || m.type == SW_AGENT_MSG_RESULT) &&
		   s->state == ONLINE) {
		s->last_answer_ms = sw_loop_now_ms(s->loop);
		on_command_answer(s, &m);
	} else if (m.type == SW_AGENT_MSG_PROGRESS && s->state == ONLINE) {
		s->last_answer_ms = sw_loop_now_ms(s->loop);
		on_progress(s, &m);
	} else {
		/* hello twice, or a message of the control plane's. */
		char reason[96];
		snprintf(reason, sizeof(reason), "unexpected %s message",
			 sw_agent_msg_type_name(m.type));
		close_with(s, SW_WS_CLOSE_POLICY, reason);
	}
	sw_agent_msg_release(&m);
}

static void on_input(void *arg, struct sw_buf *in)
{
	struct session *s = arg;
	while (s->u && s->state != CLOSING && in->len) {
		size_t used = 0;
		struct sw_ws_event ev;
		int r = sw_ws_read(&s->rd, (const uint8_t *)in->data, in->len, &used, &ev);
		sw_buf_consume(in, used);
		if (r < 0) {
			close_with(s, SW_WS_CLOSE_INTERNAL, "out of memory");
			break;
		}
		switch (ev.kind) {
		case SW_WS_NEED_MORE:
			if (!used)
				return;
			break;
		case SW_WS_MESSAGE:
			on_message(s, &ev);
			break;
		case SW_WS_PING:
			sw_ws_out_control(&s->out, SW_WS_OP_PONG, ev.data, ev.len);
			pump(s);
			break;
		case SW_WS_PONG:
			break;
		case SW_WS_CLOSE:
			close_with(s, ev.close_code == SW_WS_CLOSE_NO_STATUS ? 0 : ev.close_code, NULL);
			break;
		case SW_WS_ERROR:
			close_with(s, ev.close_code, ev.error);
			break;
		}
	}
	if (s->state == CLOSING)
		sw_buf_consume(in, in->len);
	/* Between messages (a heartbeat every few seconds) a session keeps
	 * neither its input nor its last message: 10,000 idle agents. */
	if (!in->len) {
		sw_buf_release(in);
		sw_ws_reader_trim(&s->rd);
	}
}

static void on_drained(void *arg)
{
	pump(arg);
}

static void on_timeout(void *arg)
{
	struct session *s = arg;
	if (s->state == AWAIT_HELLO || s->state == STORING) {
		close_with(s, SW_WS_CLOSE_POLICY, "no hello in time");
		return;
	}
	/* ONLINE: the thread's heartbeat line serves it (hb_sweep()); the
	 * hello's deadline may still fire once: nothing to do. */
}

/* An ONLINE session's heartbeat is due: drop it after three intervals
 * unanswered (1) or without the agent's heartbeat (2), or send the next
 * (1 only) and take its place at the end of the line. */
static void heartbeat_due(struct session *s)
{
	uint64_t now = sw_loop_now_ms(s->loop);
	if (s->state != ONLINE || !s->u)
		return;
	if (now - s->last_answer_ms >= (uint64_t)SW_AGENT_MISSED_HEARTBEATS * heartbeat_ms) {
		char reason[64];
		snprintf(reason, sizeof(reason), "%d heartbeats %s", SW_AGENT_MISSED_HEARTBEATS,
			 s->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS ? "missed" : "unanswered");
		drop(s, reason);
		return;
	}
	if (s->protocol < SW_AGENT_PROTOCOL_AGENT_BEATS) {
		struct sw_agent_msg hb = { .type = SW_AGENT_MSG_HEARTBEAT, .seq = ++s->hb_seq };
		send_msg(s, &hb);
	}
	if (s->u && s->state == ONLINE && !s->hb_listed)
		hb_enqueue(s);
}

/* The server is stopping: the agent is told to come back after a delay
 * drawn over a window, so that a fleet does not return in one wave. */
static void on_shutdown(void *arg)
{
	struct session *s = arg;
	if (s->state == ONLINE) {
		uint32_t r = 0;
		if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
			r = 0;
		struct sw_agent_msg g = { .type = SW_AGENT_MSG_GOAWAY,
					  .retry_after_ms = SW_AGENT_GOAWAY_MIN_MS +
							    r % SW_AGENT_GOAWAY_SPREAD_MS };
		send_msg(s, &g);
	}
	close_with(s, SW_WS_CLOSE_GOING_AWAY, "the control plane is stopping");
}

static void on_closed(void *arg)
{
	struct session *s = arg;
	s->u = NULL;
	hb_remove(s);
	flush_output(s); /* what the agent sent before it went */
	if (s->prev)
		s->prev->next = s->next;
	else
		sessions = s->next;
	if (s->next)
		s->next->prev = s->prev;
	if (s->stored) {
		sw_log_info("agent offline server=%s peer=%s connection=%s", s->server_id, s->peer,
			    s->connection_id);
		const char *params[] = { s->server_id, s->connection_id };
		query(s, &sw_db_stmt_agent_gone, params, 2, gone_done);
	}
	if (!s->queries)
		session_free(s);
}

static const struct sw_http_upgrade_ops ops = {
	.input = on_input,
	.drained = on_drained,
	.timeout = on_timeout,
	.shutdown = on_shutdown,
	.closed = on_closed,
};

/* ---- the upgrade ---- */

static bool header_is(const struct sw_http_request *req, const char *name, const char *want)
{
	const struct sw_http_header *h = sw_http_request_header(req, sw_str_cstr(name));
	return h && h->value.len == strlen(want) && strncasecmp(h->value.ptr, want, h->value.len) == 0;
}

/* Connection: a comma-separated list that must name "upgrade". */
static bool connection_upgrade(const struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, sw_str_cstr("connection"));
	if (!h)
		return false;
	const char *p = h->value.ptr, *end = p + h->value.len;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		const char *q = p;
		while (q < end && *q != ',')
			q++;
		const char *e = q;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e - p == 7 && strncasecmp(p, "upgrade", 7) == 0)
			return true;
		p = q;
	}
	return false;
}

void sw_agent_session_start(struct sw_http_request *req, const char *server_id,
			    const char *token_hash)
{
	char accept[29];
	const struct sw_http_header *key = sw_http_request_header(req, sw_str_cstr("sec-websocket-key"));
	req->keep_alive = false; /* a refusal closes; a 101 never returns to HTTP */
	if (!header_is(req, "upgrade", "websocket") || !connection_upgrade(req) || !key ||
	    sw_ws_accept_key(key->value, accept) < 0) {
		sw_http_error(req, 400, "BAD_REQUEST",
			      "/agent/connect takes a WebSocket upgrade (RFC 6455): Upgrade: "
			      "websocket, Connection: Upgrade and a Sec-WebSocket-Key.");
		return;
	}
	if (!header_is(req, "sec-websocket-version", "13")) {
		sw_http_add_header(req, "Sec-WebSocket-Version", sw_str_cstr("13"));
		sw_http_error(req, 426, "UPGRADE_REQUIRED", "Only WebSocket version 13 is spoken.");
		return;
	}
	struct session *s = calloc(1, sizeof(*s));
	if (!s) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	snprintf(s->server_id, sizeof(s->server_id), "%s", server_id);
	snprintf(s->token_hash, sizeof(s->token_hash), "%s", token_hash);
	snprintf(s->peer, sizeof(s->peer), "%s", sw_http_peer_address(req));
	s->loop = req->loop;
	sw_ws_reader_init(&s->rd, SW_WS_SERVER, SW_AGENT_MAX_MESSAGE);
	sw_ws_out_init(&s->out, SW_WS_SERVER, SW_AGENT_MAX_QUEUED_OUTPUT);
	char head[160];
	snprintf(head, sizeof(head),
		 "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n", accept);
	s->u = sw_http_upgrade(req, head, &ops, s);
	if (!s->u) {
		session_free(s);
		return;
	}
	s->next = sessions;
	if (sessions)
		sessions->prev = s;
	sessions = s;
	sw_http_upgraded_timer(s->u, SW_AGENT_HELLO_TIMEOUT_MS);
}

unsigned sw_agent_sessions_cut(const char *server_id, const char *reason)
{
	unsigned n = 0;
	for (struct session *s = sessions, *next; s; s = next) {
		next = s->next;
		if (strcmp(s->server_id, server_id) == 0 && s->state != CLOSING) {
			close_with(s, SW_WS_CLOSE_POLICY, reason);
			n++;
		}
	}
	return n;
}

static void on_notify(void *arg, const char *payload)
{
	(void)arg;
	if (strncmp(payload, "server:", 7) == 0) {
		sw_agent_sessions_cut(payload + 7, "agent token rotated or server deleted");
	} else if (strncmp(payload, "command:", 8) == 0) {
		for (struct session *s = sessions; s; s = s->next)
			if (strcmp(s->server_id, payload + 8) == 0) {
				fetch_pending(s);
				fetch_input(s);
			}
	} else if (strncmp(payload, "cancel:", 7) == 0 && strlen(payload) == 7 + 36 + 1 + 36 &&
		   payload[7 + 36] == ':') {
		/* "cancel:<server>:<command>": its waiter gave up (a log
		 * follow's reader left); the holder tells the agent
		 * (protocol 2), which stops it and answers its result. */
		char server[37];
		snprintf(server, sizeof(server), "%.36s", payload + 7);
		struct sw_agent_msg m = { .type = SW_AGENT_MSG_CANCEL, .id = payload + 7 + 37 };
		for (struct session *s = sessions; s; s = s->next)
			if (strcmp(s->server_id, server) == 0 && s->state == ONLINE && s->protocol >= 2) {
				sw_log_info("agent session server=%s: command %s cancelled", server, m.id);
				send_msg(s, &m);
			}
	}
}

/* Notifications may have been lost: every session checks its token and
 * reads its server's pending commands now. */
static void on_resync(void *arg)
{
	(void)arg;
	struct sw_loop *loop = NULL;
	for (struct session *s = sessions; s; s = s->next) {
		if (s->state == ONLINE)
			s->seen_due = true;
		loop = s->loop;
		fetch_pending(s);
		fetch_input(s);
	}
	if (loop)
		seen_write(loop, true);
}

int sw_agent_sessions_listen(struct sw_db_pool *pool)
{
	return sw_db_pool_listen(pool, "steward_agent", on_notify, on_resync, NULL);
}
