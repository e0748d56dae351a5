/* The remote driver (steward/driver/remote.h): driver.h's calls as agent
 * commands through agent_commands, awaited on the runner's connection.
 * The payloads are the kinds' tables in src/agent/protocol.c; the agent
 * answers through sw_driver_agent_exec() (agent_exec.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/db/statements_servers.h"
#include "steward/driver/container_state.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

static const struct sw_rd_ops ops;

struct sw_driver_remote {
	PGconn *conn;
	char server_id[37];
	const volatile bool *stop;
	/* How long a command or the driver's making waits for an agent that
	 * is reconnecting (STEWARD_AGENT_RECONNECT_WAIT_MS for a job; 0: not
	 * at all). */
	unsigned wait_ms;
};

/* The string member key of obj (or "") into the array dst. */
#define COPY_STR(dst, obj, key) \
	snprintf((dst), sizeof(dst), "%s", json_string_value(json_object_get((obj), (key))) ?: "")

#define POLL_FIRST_MS 10
#define POLL_MAX_MS 250

static PGresult *exec(struct sw_driver_remote *r, const struct sw_db_stmt *st, const char *const *params,
		      char *err, size_t errlen)
{
	PGresult *res = PQexecParams(r->conn, st->sql, st->nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType t = PQresultStatus(res);
	if (t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK)
		return res;
	PQclear(res);
	snprintf(err, errlen, "The database failed while a command for the server was handled (%s).",
		 st->name);
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A stop or cancel flag, written by another thread (the runner's listener,
 * a log reader leaving): read atomically. */
static bool stopped(const volatile bool *stop)
{
	return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/* st (a statement on the server's row) with params: its one row, or NULL
 * with *rc -EIO (the database failed) or -ENOENT (no such remote server),
 * each with a sentence. */
static PGresult *server_row(struct sw_driver_remote *r, const struct sw_db_stmt *st, const char *const *params,
			    int *rc, char *err, size_t errlen)
{
	PGresult *res = exec(r, st, params, err, errlen);
	*rc = res ? 0 : -EIO;
	if (res && PQntuples(res) != 1) {
		PQclear(res);
		res = NULL;
		snprintf(err, errlen, "The server was deleted: nothing was done on it.");
		*rc = -ENOENT;
	}
	return res;
}

/* The sentence of a call that waited wait_ms for the server's agent in
 * vain (none: SW_DRIVER_NOT_CONNECTED). */
static void not_connected(char *err, size_t errlen, unsigned wait_ms)
{
	if (!wait_ms)
		snprintf(err, errlen, "%s", SW_DRIVER_NOT_CONNECTED);
	else if (wait_ms % 1000 == 0)
		snprintf(err, errlen, "The server's agent is not connected (waited %u s): nothing was done "
			 "on the server.", wait_ms / 1000);
	else
		snprintf(err, errlen, "The server's agent is not connected (waited %.1f s): nothing was done "
			 "on the server.", wait_ms / 1000.0);
}

/* Sleeps ms, in slices short enough that a stop is seen within
 * STOP_SLICE_MS: no query meanwhile. */
#define STOP_SLICE_MS 50
static void sleep_unless_stopped(const volatile bool *stop, uint64_t ms)
{
	while (ms && !stopped(stop)) {
		unsigned slice = ms > STOP_SLICE_MS ? STOP_SLICE_MS : (unsigned)ms;
		sleep_ms(slice);
		ms -= slice;
	}
}

/* 0 once the server's agent reads ONLINE. While it reads OFFLINE (an agent
 * it had is reconnecting: its session ended, or its holder was killed and
 * lastSeenAt went late), its status is read again every
 * SW_DRIVER_REMOTE_WAIT_POLL_MS for at most r->wait_ms; never while it is
 * PENDING (no agent yet). -EHOSTUNREACH with the not-connected sentence,
 * -ECANCELED when r->stop is set meanwhile, -ENOENT (deleted or local) or
 * -EIO, each with a sentence. */
static int server_ready(struct sw_driver_remote *r, char *err, size_t errlen)
{
	uint64_t start = now_ms();
	bool waiting = false;
	for (;;) {
		const char *params[1] = { r->server_id };
		int rc;
		PGresult *res = server_row(r, &sw_db_stmt_agent_server_status, params, &rc, err, errlen);
		if (!res)
			return rc;
		bool online = strcmp(PQgetvalue(res, 0, 0), "ONLINE") == 0;
		bool known = strcmp(PQgetvalue(res, 0, 0), "OFFLINE") == 0;
		PQclear(res);
		uint64_t waited = now_ms() - start;
		if (online) {
			if (waiting)
				sw_log_info("remote driver: the agent of server=%s is back after %llu ms", r->server_id,
					    (unsigned long long)waited);
			return 0;
		}
		if (stopped(r->stop)) {
			if (waiting)
				sw_log_info("remote driver: the wait for the agent of server=%s ended by the job's "
					    "stop after %llu ms", r->server_id, (unsigned long long)waited);
			snprintf(err, errlen, "The work was stopped while it waited for the server's agent: "
				 "nothing was done on the server.");
			return -ECANCELED;
		}
		if (!known || waited >= r->wait_ms) {
			not_connected(err, errlen, known ? r->wait_ms : 0);
			return -EHOSTUNREACH;
		}
		if (!waiting)
			sw_log_info("remote driver: waiting up to %u ms for the agent of server=%s to reconnect",
				    r->wait_ms, r->server_id);
		waiting = true;
		uint64_t left = r->wait_ms - waited;
		sleep_unless_stopped(r->stop, left < SW_DRIVER_REMOTE_WAIT_POLL_MS ? left : SW_DRIVER_REMOTE_WAIT_POLL_MS);
	}
}

/* A driver for server_id without reading its status. */
static int remote_make(PGconn *conn, const char *server_id, const volatile bool *stop, unsigned wait_ms,
		       struct sw_driver **ret, char *err, size_t errlen)
{
	*ret = NULL;
	if (strlen(server_id) >= sizeof(((struct sw_driver_remote *)0)->server_id)) {
		snprintf(err, errlen, "The server's id is not valid.");
		return -EINVAL;
	}
	struct sw_driver *d = calloc(1, sizeof(*d));
	struct sw_driver_remote *r = calloc(1, sizeof(*r));
	if (!d || !r) {
		free(d);
		free(r);
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	*r = (struct sw_driver_remote){ .conn = conn, .stop = stop, .wait_ms = wait_ms };
	snprintf(r->server_id, sizeof(r->server_id), "%s", server_id);
	d->remote = r;
	d->rops = &ops;
	*ret = d;
	return 0;
}

int sw_driver_remote_new(PGconn *conn, const char *server_id, const volatile bool *stop, unsigned wait_ms,
			 struct sw_driver **ret, char *err, size_t errlen)
{
	int rc = remote_make(conn, server_id, stop, wait_ms, ret, err, errlen);
	if (rc == 0 && (rc = server_ready((*ret)->remote, err, errlen)) != 0) {
		sw_driver_free(*ret);
		*ret = NULL;
	}
	return rc;
}

static void remote_free(struct sw_driver_remote *r)
{
	free(r);
}

/* Called at each poll of a command still running, with the poll's row:
 * 1 when it did something (the next poll comes soon), 0, or -errno with a
 * sentence (the wait ends with it). */
typedef int (*await_hook)(struct sw_driver_remote *r, void *arg, const char *id, const PGresult *row,
			  char *err, size_t errlen);

/* Inserts command kind with payload (taken) for the server, expiring in
 * ttl ms plus r->wait_ms (the time it may wait, QUEUED, for an agent that
 * is reconnecting: agent_gone): its id into id. */
static int issue(struct sw_driver_remote *r, const char *kind, json_t *payload, uint64_t ttl, char id[37],
		 char *err, size_t errlen)
{
	char *text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
	json_decref(payload);
	if (!text) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	/* The payload is sealed at rest (migration 0023): a container's
	 * environment or a password file waits in the table for its answer.
	 * The id is ours, so the sealed text is bound to its row. */
	char aad[SW_SEAL_AAD_MAX];
	size_t len = strlen(text), cap = sw_seal_size(len);
	char *sealed = malloc(cap);
	int rc = sealed ? sw_random_uuid(id) : -ENOMEM;
	if (rc == 0) {
		sw_seal_aad_agent_command(aad, id);
		rc = sw_seal(text, len, aad, sealed, cap);
	}
	OPENSSL_cleanse(text, len);
	free(text);
	if (rc < 0) {
		free(sealed);
		snprintf(err, errlen, "The command for the server could not be sealed (%s).", strerror(-rc));
		return rc;
	}
	char ttl_s[24];
	snprintf(ttl_s, sizeof(ttl_s), "%llu", (unsigned long long)(ttl + r->wait_ms));
	const char *params[5] = { id, r->server_id, kind, sealed, ttl_s };
	PGresult *res = server_row(r, &sw_db_stmt_agent_command_issue, params, &rc, err, errlen);
	free(sealed);
	PQclear(res);
	return rc;
}

/* A command given up on (its job stopped: a deployment cancelled during a
 * remote build; a log follow's reader left): the agent is told to stop it
 * (protocol 2's cancel, sent by whichever replica holds its session, only
 * while the row is SENT or ACKED), before await() closes the row; the
 * agent answers as the command ends. */
static void agent_cancel(struct sw_driver_remote *r, const char *id)
{
	char e[128];
	const char *cancel[1] = { id };
	PQclear(exec(r, &sw_db_stmt_agent_command_cancel, cancel, e, sizeof(e)));
}

/* Whether a command's agent is gone, its server read as not ONLINE (row
 * res of agent_command_poll), since *since (set at the first such poll).
 * A command sent (SENT, ACKED) whose session ended (the holder wrote
 * OFFLINE): at once, its outcome unknown. A command not sent yet (QUEUED)
 * with no session: once wait_ms has passed (0: at once), time in which an
 * agent that is reconnecting (its holder stopped) dials a replica, which
 * sends it. A command QUEUED while a session holds the server is not given
 * up sooner than one that was sent: the holder writes SENT after it has
 * sent the command, so the agent may be running it already (its output
 * arriving) while the row still reads QUEUED. Otherwise only lastSeenAt is
 * older than three heartbeats,
 * which a holder also shows while its session and the agent run on, when
 * its write of lastSeenAt comes late: its UPDATE waits on a lock of the
 * server's row, or the holder's threads are starved of CPU (on the test
 * machines' two cores; they run PostgreSQL with fsync=off, so the disk is
 * not what holds it): gone once that has lasted
 * SW_DRIVER_REMOTE_SILENT_GRACE_MS (a holder killed without writing
 * OFFLINE: the agent dials another one meanwhile, and its row reads ONLINE
 * again). */
static bool agent_gone(const PGresult *res, const char *status, unsigned wait_ms, uint64_t *since)
{
	bool queued = strcmp(status, "QUEUED") == 0;
	bool session = strcmp(PQgetvalue(res, 0, 6), "ONLINE") == 0;
	if (!queued && !session)
		return true;
	uint64_t now = now_ms();
	if (!*since)
		*since = now;
	uint64_t bound = !session ? wait_ms
				  : SW_MAX((uint64_t)wait_ms, (uint64_t)SW_DRIVER_REMOTE_SILENT_GRACE_MS);
	return now - *since >= bound;
}

/* Waits for command id's answer until ttl ms (plus r->wait_ms, as issue()
 * gave it) from now: 0 with *ret (the
 * result object, or NULL when ret is NULL), or -errno with a sentence. The
 * command is closed either way. */
static int await(struct sw_driver_remote *r, const char *id, const char *kind, uint64_t ttl, await_hook hook,
		 void *hook_arg, json_t **ret, char *err, size_t errlen)
{
	PGresult *res;
	if (ret)
		*ret = NULL;
	uint64_t deadline = now_ms() + ttl + r->wait_ms, silent_since = 0;
	unsigned delay = POLL_FIRST_MS;
	int rc;
	for (;;) {
		const char *params[1] = { id };
		if (!(res = exec(r, &sw_db_stmt_agent_command_poll, params, err, errlen))) {
			rc = -EIO;
			break;
		}
		if (PQntuples(res) != 1) {
			PQclear(res);
			snprintf(err, errlen, "The server was deleted while it ran %s.", kind);
			rc = -ENOENT;
			break;
		}
		const char *status = PQgetvalue(res, 0, 0), *server = PQgetvalue(res, 0, 4);
		if (strcmp(status, "SUCCEEDED") == 0) {
			rc = 0;
			if (ret && !PQgetisnull(res, 0, 1))
				*ret = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
			if (ret && !*ret)
				*ret = json_object();
			if (ret && !*ret) {
				snprintf(err, errlen, "Out of memory.");
				rc = -ENOMEM;
			}
		} else if (strcmp(status, "FAILED") == 0) {
			rc = sw_driver_error_errno(PQgetvalue(res, 0, 2));
			snprintf(err, errlen, "%s", PQgetvalue(res, 0, 3));
			if (!err[0])
				snprintf(err, errlen, "The server's agent failed %s.", kind);
		} else if (strcmp(status, "EXPIRED") == 0 || now_ms() > deadline) {
			snprintf(err, errlen, "The server's agent did not answer %s in time.", kind);
			rc = -ETIMEDOUT;
		} else if (strcmp(server, "ONLINE") != 0 && agent_gone(res, status, r->wait_ms, &silent_since)) {
			if (strcmp(status, "QUEUED") == 0)
				not_connected(err, errlen, r->wait_ms);
			else
				snprintf(err, errlen, "The server's agent disconnected while it ran %s: its "
					 "outcome on the server is not known.", kind);
			rc = -EHOSTUNREACH;
		} else if (stopped(r->stop)) {
			agent_cancel(r, id);
			snprintf(err, errlen, "The work was stopped while the server's agent ran %s.", kind);
			rc = -ECANCELED;
		} else {
			/* Not ONLINE here: lastSeenAt late, the session not ended,
			 * or not sent yet while its agent may reconnect
			 * (agent_gone): the command goes on, its streams too. */
			if (strcmp(server, "ONLINE") == 0)
				silent_since = 0;
			rc = hook ? hook(r, hook_arg, id, res, err, errlen) : 0;
			if (rc == 1)
				delay = POLL_FIRST_MS;
			rc = rc < 0 ? rc : 1;
		}
		PQclear(res);
		if (rc <= 0)
			break;
		sleep_ms(delay);
		delay = delay * 2 > POLL_MAX_MS ? POLL_MAX_MS : delay * 2;
	}
	/* Closed: a command given up on is not sent again (ABANDONED), and the
	 * payload goes; a finished one keeps its answer. */
	char e[128];
	const char *close[3] = { id, "ABANDONED", rc ? err : "" };
	PQclear(exec(r, &sw_db_stmt_agent_command_close, close, e, sizeof(e)));
	if (rc && ret) {
		json_decref(*ret);
		*ret = NULL;
	}
	return rc;
}

/* Issues kind with payload (taken) and waits for its answer, at most
 * wait_ms beyond SW_DRIVER_REMOTE_COMMAND_MS. 0 with *ret (the result
 * object, or NULL when ret is NULL), or -errno with a sentence. */
static int call(struct sw_driver *d, const char *kind, json_t *payload, unsigned wait_ms, json_t **ret,
		char *err, size_t errlen)
{
	if (ret)
		*ret = NULL;
	uint64_t ttl = (uint64_t)wait_ms + SW_DRIVER_REMOTE_COMMAND_MS;
	char id[37];
	int rc = issue(d->remote, kind, payload, ttl, id, err, errlen);
	return rc ? rc : await(d->remote, id, kind, ttl, NULL, NULL, ret, err, errlen);
}

static json_t *strings(const char *const *v)
{
	json_t *a = json_array();
	for (; a && v && *v; v++)
		if (json_array_append_new(a, json_string(*v)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* ---- images ---- */

/* The build's streams on the job's side: the context as input chunks put
 * no further than INPUT_WINDOW past what the agent has taken, and the
 * agent's output read back in seq order into the build's log. */
#define INPUT_WINDOW 16
#define INPUT_CHUNK (48u * 1024) /* raw bytes: 64 KiB of base64, SW_AGENT_MAX_CHUNK */

struct build_stream {
	const char *what;        /* "the build", "the restore", "the dump" */
	const volatile bool *cancel;
	struct sw_driver_tar *tar; /* the input: a build's context, */
	int fd;                  /* or a file read with pread (-1: none) */
	uint64_t total, sent, seq;
	bool input_done;
	sw_driver_log_fn log;
	void *log_arg;
	uint64_t out_next;       /* the next output chunk to read */
	struct sw_buf line;      /* output not yet ended by '\n' */
	char *chunk;             /* INPUT_CHUNK bytes */
	char *b64;
	/* A dump: the output's base64 lines decoded into sink, counted and
	 * hashed to be checked against the agent's result. */
	sw_driver_sink_fn sink;
	void *sink_arg;
	int sink_error;
	EVP_MD_CTX *md;
	uint64_t sunk;
};

/* Reads the context once for its size and SHA-256: the payload carries
 * both, so the command's digest covers its input. */
static int context_digest(const struct sw_image_build *b, uint64_t *bytes, char hex[65], char *buf,
			  char *err, size_t errlen)
{
	struct sw_driver_tar *t = sw_driver_tar_open(b->context_dir, b->dockerfile, b->context_max_bytes,
						     err, errlen);
	if (!t)
		return -errno;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int rc = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;
	ssize_t n = 0;
	while (rc == 0 && (n = sw_driver_tar_read(t, buf, INPUT_CHUNK)) > 0)
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1)
			rc = -ENOMEM;
	if (rc == 0 && n < 0) {
		rc = (int)n;
		snprintf(err, errlen, "%s", sw_driver_tar_error(t));
	}
	unsigned char out[32];
	unsigned len = 0;
	if (rc == 0 && EVP_DigestFinal_ex(md, out, &len) != 1)
		rc = -ENOMEM;
	for (unsigned i = 0; rc == 0 && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", out[i]);
	*bytes = sw_driver_tar_bytes(t);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "Out of memory.");
	EVP_MD_CTX_free(md);
	sw_driver_tar_free(t);
	return rc;
}

/* The output chunks the session stored, taken while they follow on. */
static int read_output(struct sw_driver_remote *r, struct build_stream *bs, const char *id, char *err,
		       size_t errlen)
{
	char from[24];
	snprintf(from, sizeof(from), "%llu", (unsigned long long)bs->out_next);
	const char *params[2] = { id, from };
	PGresult *res = exec(r, &sw_db_stmt_agent_output_read, params, err, errlen);
	if (!res)
		return -EIO;
	int took = 0;
	for (int i = 0; i < PQntuples(res); i++) {
		if (strtoull(PQgetvalue(res, i, 0), NULL, 10) != bs->out_next)
			break; /* one before it is not stored yet */
		bs->out_next++;
		took = 1;
		if (!bs->log)
			continue; /* a command whose output nothing reads */
		const char *p = PQgetvalue(res, i, 1);
		for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
			if (bs->line.len) {
				sw_buf_append(&bs->line, p, (size_t)(nl - p));
				bs->log(bs->log_arg, bs->line.data, bs->line.len);
				sw_buf_consume(&bs->line, bs->line.len);
			} else {
				bs->log(bs->log_arg, p, (size_t)(nl - p));
			}
		}
		sw_buf_append(&bs->line, p, strlen(p));
	}
	PQclear(res);
	if (took && bs->sink) {
		/* A dump's chunks, once decoded, leave the table. */
		char below[24];
		snprintf(below, sizeof(below), "%llu", (unsigned long long)bs->out_next);
		const char *consume[2] = { id, below };
		PGresult *gone = exec(r, &sw_db_stmt_agent_output_consume, consume, err, errlen);
		if (!gone)
			return -EIO;
		PQclear(gone);
	}
	return took;
}

static bool plain(struct sw_driver_remote *r, const char *sql)
{
	PGresult *res = PQexec(r->conn, sql);
	bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	return ok;
}

static int put_window(struct sw_driver_remote *r, struct build_stream *bs, const char *id, uint64_t taken,
		      char *err, size_t errlen);

/* Puts the next input chunks the window allows (the command must be
 * acknowledged: the agent is ready for them), in one transaction: one
 * commit, and one notification, for the window. */
static int put_input(struct sw_driver_remote *r, struct build_stream *bs, const char *id, uint64_t taken,
		     char *err, size_t errlen)
{
	if (bs->input_done || bs->seq >= taken + INPUT_WINDOW)
		return 0;
	if (!plain(r, "BEGIN")) {
		snprintf(err, errlen, "The database failed while the build context was sent.");
		return -EIO;
	}
	int rc = put_window(r, bs, id, taken, err, errlen);
	if (rc >= 0 && !plain(r, "COMMIT")) {
		snprintf(err, errlen, "The database failed while the build context was sent.");
		rc = -EIO;
	}
	if (rc < 0)
		plain(r, "ROLLBACK");
	return rc;
}

static int put_window(struct sw_driver_remote *r, struct build_stream *bs, const char *id, uint64_t taken,
		      char *err, size_t errlen)
{
	int did = 0;
	while (!bs->input_done && bs->seq < taken + INPUT_WINDOW) {
		size_t n = 0;
		while (n < INPUT_CHUNK && bs->sent + n < bs->total) {
			size_t want = (size_t)SW_MIN((uint64_t)(INPUT_CHUNK - n), bs->total - bs->sent - n);
			ssize_t got = bs->tar ? sw_driver_tar_read(bs->tar, bs->chunk + n, want)
					      : pread(bs->fd, bs->chunk + n, want, (off_t)(bs->sent + n));
			if (got < 0 && !bs->tar && errno == EINTR)
				continue;
			if (got < 0) {
				if (bs->tar)
					snprintf(err, errlen, "%s", sw_driver_tar_error(bs->tar));
				else
					snprintf(err, errlen, "the backup file could not be read while it was "
						 "sent to the server: nothing was restored");
				return bs->tar ? (int)got : -EIO;
			}
			if (got == 0)
				break;
			n += (size_t)got;
		}
		if (bs->sent + n != bs->total && n < INPUT_CHUNK) {
			snprintf(err, errlen, "%s changed while it was sent to the server",
				 bs->tar ? "the build context" : "the backup file");
			return -EIO;
		}
		bs->sent += n;
		EVP_EncodeBlock((unsigned char *)bs->b64, (const unsigned char *)bs->chunk, (int)n);
		char seq[24];
		snprintf(seq, sizeof(seq), "%llu", (unsigned long long)bs->seq);
		bool last = bs->sent == bs->total;
		const char *params[4] = { id, seq, bs->b64, last ? "t" : "f" };
		PGresult *res = exec(r, &sw_db_stmt_agent_input_put, params, err, errlen);
		if (!res)
			return -EIO;
		PQclear(res);
		bs->seq++;
		bs->input_done = last;
		did = 1;
	}
	return did;
}

/* True once *bs->cancel is set (a log follow's reader left, a build's
 * cancel flag other than the job's stop): the agent is told to stop. */
static bool given_up(struct sw_driver_remote *r, const struct build_stream *bs, const char *id, char *err,
		     size_t errlen)
{
	if (!stopped(bs->cancel))
		return false;
	agent_cancel(r, id);
	snprintf(err, errlen, "%s was cancelled", bs->what);
	return true;
}

static int build_hook(struct sw_driver_remote *r, void *arg, const char *id, const PGresult *row, char *err,
		      size_t errlen)
{
	struct build_stream *bs = arg;
	if (given_up(r, bs, id, err, errlen))
		return -ECANCELED;
	int did = 0;
	if (strcmp(PQgetvalue(row, 0, 0), "ACKED") == 0)
		did = put_input(r, bs, id, strtoull(PQgetvalue(row, 0, 5), NULL, 10), err, errlen);
	int out = did < 0 ? 0 : read_output(r, bs, id, err, errlen);
	if (out >= 0 && bs->sink_error) {
		snprintf(err, errlen, "the dump from the server could not be written (%s)",
			 strerror(-bs->sink_error));
		return bs->sink_error;
	}
	/* While input remains, the agent's credit is looked for at the first
	 * poll's pace, not the slowing one. */
	return did < 0 ? did : out < 0 ? out : (did || out || !bs->input_done);
}

/* The output the session stores may trail the result: a success says how
 * many chunks there were, and they are read (for at most 10 s); after a
 * failure, what is there. */
static void output_rest(struct sw_driver_remote *r, struct build_stream *bs, const char *id, int rc,
			const json_t *res)
{
	uint64_t chunks = (uint64_t)json_integer_value(json_object_get(res, "outputChunks"));
	uint64_t until = now_ms() + 10000;
	char e[128];
	while (bs->out_next < chunks && now_ms() < until && read_output(r, bs, id, e, sizeof(e)) >= 0)
		if (bs->out_next < chunks)
			sleep_ms(POLL_FIRST_MS);
	if (rc)
		read_output(r, bs, id, e, sizeof(e));
}

static void streams_drop(struct sw_driver_remote *r, const char *id)
{
	char e[128];
	const char *drop[1] = { id };
	PQclear(exec(r, &sw_db_stmt_agent_streams_drop, drop, e, sizeof(e)));
}

static int rd_image_build(struct sw_driver *d, const struct sw_image_build *b, sw_driver_log_fn log,
			  void *log_arg, char *err, size_t errlen)
{
	struct sw_driver_remote *r = d->remote;
	if (!b->context_dir || !b->tag) {
		snprintf(err, errlen, "the image build was given no context or tag");
		return -EINVAL;
	}
	struct build_stream bs = { .what = "the build", .cancel = b->cancel, .fd = -1, .log = log,
				   .log_arg = log_arg };
	bs.chunk = malloc(INPUT_CHUNK);
	bs.b64 = malloc(4 * ((INPUT_CHUNK + 2) / 3) + 1);
	char hex[65];
	json_t *labels = json_object();
	int rc = bs.chunk && bs.b64 && labels ? 0 : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "Out of memory.");
	for (const char *const *l = b->labels; rc == 0 && l && *l; l++) {
		const char *eq = strchr(*l, '=');
		char key[128];
		if (!eq || (size_t)(eq - *l) >= sizeof(key)) {
			snprintf(err, errlen, "the image build was given a malformed label");
			rc = -EINVAL;
			break;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *l), *l);
		json_object_set_new(labels, key, json_string(eq + 1));
	}
	if (rc == 0)
		rc = context_digest(b, &bs.total, hex, bs.chunk, err, errlen);
	if (rc == 0 && !(bs.tar = sw_driver_tar_open(b->context_dir, b->dockerfile, b->context_max_bytes, err,
						     errlen)))
		rc = -errno;
	char id[37];
	if (rc == 0) {
		json_t *p = json_pack("{s:s,s:s,s:I,s:s,s:O}", "tag", b->tag, "dockerfile", b->dockerfile,
				      "contextBytes", (json_int_t)bs.total, "contextSha256", hex, "labels",
				      labels);
		rc = issue(r, "image.build", p, SW_DRIVER_REMOTE_BUILD_MS, id, err, errlen);
	}
	json_t *res = NULL;
	if (rc == 0) {
		rc = await(r, id, "image.build", SW_DRIVER_REMOTE_BUILD_MS, build_hook, &bs, &res, err, errlen);
		output_rest(r, &bs, id, rc, res);
		if (bs.line.len)
			log(log_arg, bs.line.data, bs.line.len);
		streams_drop(r, id);
	}
	json_decref(res);
	json_decref(labels);
	sw_driver_tar_free(bs.tar);
	sw_buf_release(&bs.line);
	free(bs.chunk);
	free(bs.b64);
	return rc;
}

/* ---- a service's data ---- */

/* The time a dump or a restore may take on the server, streams included. */
#define SERVICE_DATA_MS (6u * 60 * 60 * 1000)

static json_t *service_payload(const struct sw_service_target *t)
{
	const char *engine = strcmp(t->kind, "POSTGRESQL") == 0 ? "postgres"
			     : strcmp(t->kind, "MYSQL") == 0    ? "mysql"
								 : "redis";
	return json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:s}", "name", t->container, "engine", engine, "port",
			 (json_int_t)t->port, "database", t->database, "username", t->username, "password",
			 t->password, "dataDir", t->data_dir);
}

/* One output line of service.dump: base64 of the dump's next bytes. */
static void dump_line(void *arg, const char *line, size_t len)
{
	struct build_stream *bs = arg;
	if (bs->sink_error)
		return;
	unsigned char *buf = malloc(len / 4 * 3 + 1);
	size_t n = 0;
	if (!buf)
		bs->sink_error = -ENOMEM;
	else if (sw_base64_decode(sw_str_from(line, len), buf, len / 4 * 3 + 1, &n) != 0)
		bs->sink_error = -EBADMSG;
	else if (EVP_DigestUpdate(bs->md, buf, n) != 1)
		bs->sink_error = -ENOMEM;
	else
		bs->sink_error = bs->sink(bs->sink_arg, (const char *)buf, n);
	bs->sunk += n;
	free(buf);
}

static int rd_service_dump(struct sw_driver *d, const struct sw_service_target *t, sw_driver_sink_fn sink,
			   void *sink_arg, const volatile bool *cancel, char *err, size_t errlen)
{
	struct sw_driver_remote *r = d->remote;
	struct build_stream bs = { .what = "the dump", .cancel = cancel, .fd = -1, .input_done = true,
				   .log = dump_line, .sink = sink, .sink_arg = sink_arg,
				   .md = EVP_MD_CTX_new() };
	bs.log_arg = &bs;
	json_t *p = service_payload(t), *res = NULL;
	char id[37];
	int rc = p && bs.md && EVP_DigestInit_ex(bs.md, EVP_sha256(), NULL) == 1 ? 0 : -ENOMEM;
	if (rc) {
		json_decref(p);
		snprintf(err, errlen, "Out of memory.");
	} else {
		rc = issue(r, "service.dump", p, SERVICE_DATA_MS, id, err, errlen);
	}
	if (rc == 0) {
		rc = await(r, id, "service.dump", SERVICE_DATA_MS, build_hook, &bs, &res, err, errlen);
		output_rest(r, &bs, id, rc, res);
		streams_drop(r, id);
	}
	unsigned char digest[32];
	unsigned dlen = 0;
	char sum[65] = "";
	if (rc == 0 && bs.sink_error) {
		rc = bs.sink_error;
		snprintf(err, errlen, "the dump from the server could not be written (%s)", strerror(-rc));
	}
	if (rc == 0 && EVP_DigestFinal_ex(bs.md, digest, &dlen) == 1)
		for (unsigned i = 0; i < 32; i++)
			snprintf(sum + 2 * i, 3, "%02x", digest[i]);
	const char *want = json_string_value(json_object_get(res, "dumpSha256"));
	if (rc == 0 && (bs.line.len || !want || strcmp(want, sum) != 0 ||
			(uint64_t)json_integer_value(json_object_get(res, "dumpBytes")) != bs.sunk)) {
		rc = -EIO;
		snprintf(err, errlen, "the dump did not arrive whole from the server (%llu bytes came; its size "
			 "or SHA-256 is not what the agent sent)", (unsigned long long)bs.sunk);
	}
	json_decref(res);
	EVP_MD_CTX_free(bs.md);
	sw_buf_release(&bs.line);
	return rc;
}

static int rd_service_restore(struct sw_driver *d, const struct sw_service_target *t, int fd, uint64_t size,
			      const char *sha256, const volatile bool *cancel, char *err, size_t errlen)
{
	struct sw_driver_remote *r = d->remote;
	struct build_stream bs = { .what = "the restore", .cancel = cancel, .fd = fd, .total = size,
				   .log = NULL };
	bs.chunk = malloc(INPUT_CHUNK);
	bs.b64 = malloc(4 * ((INPUT_CHUNK + 2) / 3) + 1);
	json_t *p = service_payload(t);
	int rc = bs.chunk && bs.b64 && p ? 0 : -ENOMEM;
	if (rc == 0 && (json_object_set_new(p, "dumpBytes", json_integer((json_int_t)size)) != 0 ||
			json_object_set_new(p, "dumpSha256", json_string(sha256)) != 0))
		rc = -ENOMEM;
	char id[37];
	if (rc) {
		json_decref(p);
		snprintf(err, errlen, "Out of memory.");
	} else {
		rc = issue(r, "service.restore", p, SERVICE_DATA_MS, id, err, errlen);
	}
	if (rc == 0) {
		rc = await(r, id, "service.restore", SERVICE_DATA_MS, build_hook, &bs, NULL, err, errlen);
		streams_drop(r, id);
	}
	free(bs.chunk);
	free(bs.b64);
	sw_buf_release(&bs.line);
	return rc;
}

/* ---- a container's logs ----
 * The agent's container.logs: each line comes back as a line of output,
 * {"stream", "timeUs", "text": base64} (agent_exec.c). With follow the
 * command lives until *cancel (at most SW_AGENT_FOLLOW_MAX_MS): the wait
 * then ends -ECANCELED, the row is closed and the agent is sent a cancel
 * (agent_command_cancel; protocol 2). */
struct logs_in {
	sw_driver_container_log_fn fn;
	void *arg;
	int rc;          /* fn's first error, or a line that cannot be read */
	struct sw_buf raw;
};

static void logs_in_line(void *arg, const char *line, size_t len)
{
	struct logs_in *in = arg;
	if (in->rc || !len)
		return;
	json_t *o = json_loadb(line, len, 0, NULL);
	const char *b64 = json_string_value(json_object_get(o, "text"));
	size_t n = b64 ? strlen(b64) : 0;
	size_t got = 0;
	if (!b64 || sw_buf_reserve(&in->raw, n / 4 * 3 + 3) != 0 ||
	    sw_base64_decode(sw_str_from(b64, n), (uint8_t *)in->raw.data, n / 4 * 3 + 3, &got) != 0) {
		in->rc = -EBADMSG;
	} else {
		struct sw_container_log_line l = {
			.stream = json_integer_value(json_object_get(o, "stream")) == 2 ? 2 : 1,
			.time_us = (int64_t)json_integer_value(json_object_get(o, "timeUs")),
			.text = in->raw.data,
			.len = (size_t)got,
		};
		in->rc = in->fn(in->arg, &l);
		OPENSSL_cleanse(in->raw.data, (size_t)got);
	}
	json_decref(o);
}

static int logs_hook(struct sw_driver_remote *r, void *arg, const char *id, const PGresult *row, char *err,
		     size_t errlen)
{
	(void)row;
	struct build_stream *bs = arg;
	if (given_up(r, bs, id, err, errlen))
		return -ECANCELED;
	int out = read_output(r, bs, id, err, errlen);
	struct logs_in *in = bs->log_arg;
	if (out >= 0 && in->rc) {
		snprintf(err, errlen, "the container's log lines could not be taken (%s)", strerror(-in->rc));
		return in->rc;
	}
	return out;
}

static int rd_container_logs(struct sw_driver *d, const struct sw_container_logs_query *q,
			     sw_driver_container_log_fn fn, void *arg, char *err, size_t errlen)
{
	struct sw_driver_remote *r = d->remote;
	struct logs_in in = { .fn = fn, .arg = arg };
	struct build_stream bs = { .what = "the log read", .cancel = q->cancel, .fd = -1, .input_done = true,
				   .log = logs_in_line, .log_arg = &in };
	json_t *p = json_pack("{s:s,s:I,s:I}", "name", q->container, "tail", (json_int_t)q->tail, "sinceUs",
			      (json_int_t)(q->since_us > 0 ? q->since_us : 0));
	if (p && q->follow)
		json_object_set_new(p, "follow", json_true());
	uint64_t ttl = q->follow ? SW_AGENT_FOLLOW_MAX_MS : SW_DRIVER_REMOTE_COMMAND_MS;
	char id[37];
	int rc = issue(r, "container.logs", p, ttl, id, err, errlen);
	json_t *res = NULL;
	if (rc == 0) {
		rc = await(r, id, "container.logs", ttl, logs_hook, &bs, &res, err, errlen);

		output_rest(r, &bs, id, rc, res);
		if (bs.line.len)
			logs_in_line(&in, bs.line.data, bs.line.len);
		streams_drop(r, id);
		if (rc == 0 && in.rc) {
			rc = in.rc;
			snprintf(err, errlen, "the container's log lines could not be taken (%s)", strerror(-rc));
		}
	}
	json_decref(res);
	if (in.raw.data)
		OPENSSL_cleanse(in.raw.data, in.raw.cap);
	sw_buf_release(&in.raw);
	sw_buf_release(&bs.line);
	return rc;
}

static int rd_image_remove(struct sw_driver *d, const char *tag, char *err, size_t errlen)
{
	return call(d, "image.remove", json_pack("{s:s}", "image", tag), 0, NULL, err, errlen);
}

/* A call whose answer is {key: [strings]}: at most cap of them into the
 * rows of width w at base. */
static int call_names(struct sw_driver *d, const char *kind, const char *application_id, const char *key,
		      char *base, size_t w, size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	json_t *res;
	*ret_n = 0;
	int rc = call(d, kind, json_pack("{s:s}", "applicationId", application_id), 0, &res, err, errlen);
	if (rc)
		return rc;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(res, key), i, v) {
		if (*ret_n < cap && json_string_value(v))
			snprintf(base + (*ret_n)++ * w, w, "%s", json_string_value(v));
	}
	json_decref(res);
	return 0;
}

static int rd_images_list(struct sw_driver *d, const char *application_id, char (*tags)[SW_DRIVER_TAG_MAX],
		      size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	return call_names(d, "image.list", application_id, "tags", tags[0], SW_DRIVER_TAG_MAX, cap, ret_n,
			  err, errlen);
}

static bool rd_image_exists(struct sw_driver *d, const char *tag)
{
	json_t *res;
	char err[256];
	if (call(d, "image.exists", json_pack("{s:s}", "image", tag), 0, &res, err, sizeof(err)) != 0)
		return false;
	bool yes = json_is_true(json_object_get(res, "exists"));
	json_decref(res);
	return yes;
}

/* ---- containers ---- */

static int rd_container_create(struct sw_driver *d, const struct sw_container_spec *s, char id[SW_DRIVER_ID_MAX],
			   char *err, size_t errlen)
{
	json_t *spec = json_pack("{s:o,s:o,s:o*,s:o,s:I,s:I,s:i,s:b}", "env", strings(s->env), "labels",
				 strings(s->labels), "cmd", s->cmd ? strings(s->cmd) : NULL, "mounts",
				 strings(s->mounts), "memoryBytes", (json_int_t)s->memory_bytes, "nanoCpus",
				 (json_int_t)s->nano_cpus, "port", (int)s->port, "restartUnlessStopped",
				 s->restart_unless_stopped);
	json_t *res;
	id[0] = '\0';
	int rc = call(d, "container.create",
		      spec ? json_pack("{s:s,s:s,s:o}", "name", s->name, "image", s->image, "spec", spec) : NULL,
		      0, &res, err, errlen);
	if (rc)
		return rc;
	snprintf(id, SW_DRIVER_ID_MAX, "%s", json_string_value(json_object_get(res, "id")) ?: "");
	if (json_is_true(json_object_get(res, "existed")))
		rc = -EEXIST;
	json_decref(res);
	return rc;
}

static int rd_container_action(struct sw_driver *d, const char *kind, const char *name, unsigned timeout_s,
			   char *err, size_t errlen)
{
	json_t *p = strcmp(kind, "container.stop") == 0
			    ? json_pack("{s:s,s:i}", "name", name, "timeoutS", (int)timeout_s)
			    : json_pack("{s:s}", "name", name);
	return call(d, kind, p, timeout_s * 1000, NULL, err, errlen);
}

static int rd_containers_list(struct sw_driver *d, const char *application_id, struct sw_container_info *out,
			  size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	json_t *res;
	*ret_n = 0;
	json_t *p = application_id ? json_pack("{s:s}", "applicationId", application_id) : json_object();
	int rc = call(d, "container.list", p, 0, &res, err, errlen);
	if (rc)
		return rc;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(res, "containers"), i, c) {
		if (*ret_n >= cap)
			break;
		struct sw_container_info *o = &out[(*ret_n)++];
		memset(o, 0, sizeof(*o));
#define STR(field, key) COPY_STR(o->field, c, key)
		STR(id, "id");
		STR(name, "name");
		STR(image, "image");
		STR(state, "state");
		STR(status, "status");
		STR(project, "project");
		STR(colour, "colour");
#undef STR
		o->created = (int64_t)json_integer_value(json_object_get(c, "created"));
	}
	json_decref(res);
	return 0;
}

/* ---- volumes ---- */

static int rd_volume_create(struct sw_driver *d, const struct sw_volume_spec *v, char *err, size_t errlen)
{
	json_t *labels = v->application_id ? json_pack("{s:s}", "steward.application", v->application_id)
			 : v->service_id   ? json_pack("{s:s}", "steward.service", v->service_id)
					   : json_object();
	return call(d, "volume.create", json_pack("{s:s,s:o}", "name", v->name, "labels", labels), 0, NULL,
		    err, errlen);
}

static int rd_volumes_list(struct sw_driver *d, const char *application_id, char (*names)[SW_DRIVER_VOLUME_MAX],
		       size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	return call_names(d, "volume.list", application_id, "names", names[0], SW_DRIVER_VOLUME_MAX, cap,
			  ret_n, err, errlen);
}

static int rd_volume_remove(struct sw_driver *d, const char *name, char *err, size_t errlen)
{
	return call(d, "volume.remove", json_pack("{s:s}", "name", name), 0, NULL, err, errlen);
}

/* ---- ingress ---- */

static void route_id(char out[64], const char *application_id)
{
	snprintf(out, 64, "steward-app-%s", application_id);
}

static int rd_route_set(struct sw_driver *d, const struct sw_ingress_route *rt, char *err, size_t errlen)
{
	char rid[64];
	route_id(rid, rt->application_id);
	json_t *route = json_pack("{s:o,s:s}", "hosts", strings(rt->hostnames), "upstream", rt->upstream);
	return call(d, "caddy.route.set",
		    route ? json_pack("{s:s,s:o}", "routeId", rid, "route", route) : NULL, 0, NULL, err,
		    errlen);
}

static int rd_route_remove(struct sw_driver *d, const char *application_id, char *err, size_t errlen)
{
	char rid[64];
	route_id(rid, application_id);
	return call(d, "caddy.route.remove", json_pack("{s:s}", "routeId", rid), 0, NULL, err, errlen);
}

static int rd_proxy_state(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	json_t *res;
	*ret_json = NULL;
	int rc = call(d, "caddy.state", json_object(), 0, &res, err, errlen);
	if (rc)
		return rc;
	json_t *state = json_object_get(res, "state");
	*ret_json = state ? json_dumps(state, JSON_COMPACT) : NULL;
	json_decref(res);
	if (!*ret_json) {
		snprintf(err, errlen, "The server's agent sent no proxy state.");
		return -EIO;
	}
	return 0;
}

/* metrics.sample's answer (rc, res: await()'s) as the sample's JSON text. */
static int sample_text(int rc, json_t *res, char **ret_json, char *err, size_t errlen)
{
	*ret_json = NULL;
	if (rc)
		return rc;
	*ret_json = json_object_get(res, "takenAt") ? json_dumps(res, JSON_COMPACT) : NULL;
	json_decref(res);
	if (!*ret_json) {
		snprintf(err, errlen, "The server's agent sent no sample.");
		return -EIO;
	}
	return 0;
}

static int rd_metrics_sample(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	json_t *res;
	int rc = call(d, "metrics.sample", json_object(), 0, &res, err, errlen);
	return sample_text(rc, res, ret_json, err, errlen);
}

void sw_driver_remote_metrics_samples(PGconn *conn, struct sw_driver_remote_sample *v, size_t n,
				      unsigned command_ms)
{
	/* Every agent asked first: their sessions (on any replica) send and
	 * the agents sample meanwhile; then each answer is awaited in turn,
	 * most of them already there at the first poll. */
	for (size_t i = 0; i < n; i++) {
		struct sw_driver_remote_sample *s = &v[i];
		s->json = NULL;
		s->d = NULL;
		/* No status read first: the caller lists ONLINE servers, and a
		 * command whose agent is gone meanwhile is answered
		 * SW_DRIVER_NOT_CONNECTED by await() (not sent: wait_ms 0). */
		s->rc = remote_make(conn, s->server_id, NULL, 0, &s->d, s->err, sizeof(s->err));
		if (s->rc == 0)
			s->rc = issue(s->d->remote, "metrics.sample", json_object(), command_ms, s->id, s->err,
				      sizeof(s->err));
	}
	for (size_t i = 0; i < n; i++) {
		struct sw_driver_remote_sample *s = &v[i];
		if (s->rc == 0) {
			json_t *res;
			int rc = await(s->d->remote, s->id, "metrics.sample", command_ms, NULL, NULL, &res, s->err,
				       sizeof(s->err));
			s->rc = sample_text(rc, res, &s->json, s->err, sizeof(s->err));
		}
		sw_driver_free(s->d);
		s->d = NULL;
	}
}

/* ---- files ---- */

#define FILE_MAX (48u * 1024)

static int rd_container_put_file(struct sw_driver *d, const char *container, const char *dir, const char *name,
			     const void *data, size_t len, unsigned mode, char *err, size_t errlen)
{
	if (len > FILE_MAX) {
		snprintf(err, errlen, "A file larger than %u bytes cannot be written on a remote server.",
			 FILE_MAX);
		return -EFBIG;
	}
	size_t cap = 4 * ((len + 2) / 3) + 1;
	char *b64 = malloc(cap);
	if (!b64) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	EVP_EncodeBlock((unsigned char *)b64, data, (int)len);
	json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", container, "dir", dir, "file", name, "data",
			      b64, "mode", (int)mode);
	OPENSSL_cleanse(b64, cap); /* a secret, often */
	free(b64);
	return call(d, "container.file", p, 0, NULL, err, errlen);
}

/* ---- a container's state ---- */

static int rd_container_state(struct sw_driver *d, const char *id, struct sw_container_state *ret, char *err,
			      size_t errlen)
{
	json_t *res;
	int rc = call(d, "container.inspect", json_pack("{s:s}", "name", id), 0, &res, err, errlen);
	if (rc)
		return rc;
	memset(ret, 0, sizeof(*ret));
#define STR(field, key) COPY_STR(ret->field, res, key)
	STR(id, "id");
	STR(application_id, "applicationId");
	STR(name, "name");
	STR(state, "state");
	STR(health, "health");
#undef STR
	ret->restart_count = (int64_t)json_integer_value(json_object_get(res, "restartCount"));
	ret->pid = 0; /* a process of the remote host: nothing here can use it */
	ret->oom_killed = json_is_true(json_object_get(res, "oomKilled"));
	json_decref(res);
	return 0;
}

static int rd_memory_available(struct sw_driver *d, uint64_t *ret_bytes)
{
	json_t *res;
	char err[256];
	int rc = call(d, "host.facts", json_object(), 0, &res, err, sizeof(err));
	if (rc)
		return rc;
	json_t *v = json_object_get(res, "memoryAvailableBytes");
	rc = json_is_integer(v) && json_integer_value(v) >= 0 ? 0 : -ENODATA;
	if (rc == 0)
		*ret_bytes = (uint64_t)json_integer_value(v);
	json_decref(res);
	return rc;
}

/* ---- a BLUE_GREEN colour's port, found free on the server itself ---- */

static int rd_free_port(struct sw_driver *d, unsigned *ret_port, char *err, size_t errlen)
{
	json_t *res;
	int rc = call(d, "port.free", json_object(), 0, &res, err, errlen);
	if (rc)
		return rc;
	json_t *v = json_object_get(res, "port");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535) {
		json_decref(res);
		snprintf(err, errlen, "The server's agent sent no port.");
		return -EPROTO;
	}
	*ret_port = (unsigned)json_integer_value(v);
	json_decref(res);
	return 0;
}

/* ---- the health gate's probe, made by the agent on its own loopback ---- */

static int rd_http_probe(struct sw_driver *d, const struct sw_http_probe *q, int *ret_status, uint64_t *ret_ms,
			 char *err, size_t errlen)
{
	json_t *res;
	json_t *p = json_pack("{s:s,s:i,s:s,s:i}", "host", q->host ? q->host : "127.0.0.1", "port",
			      (int)q->port, "path", q->path, "timeoutS", (int)q->timeout_s);
	int rc = call(d, "container.probe", p, q->timeout_s * 1000, &res, err, errlen);
	if (rc)
		return rc;
	json_t *st = json_object_get(res, "status"), *ms = json_object_get(res, "elapsedMs");
	if (!json_is_integer(st) || json_integer_value(st) < 100 || json_integer_value(st) > 599) {
		json_decref(res);
		snprintf(err, errlen, "The server's agent sent no status for the probe.");
		return -EPROTO;
	}
	*ret_status = (int)json_integer_value(st);
	if (ret_ms && json_is_integer(ms) && json_integer_value(ms) >= 0)
		*ret_ms = (uint64_t)json_integer_value(ms);
	json_decref(res);
	return 0;
}

static const struct sw_rd_ops ops = {
	.free = remote_free,
	.image_build = rd_image_build,
	.image_remove = rd_image_remove,
	.images_list = rd_images_list,
	.image_exists = rd_image_exists,
	.container_create = rd_container_create,
	.container_action = rd_container_action,
	.containers_list = rd_containers_list,
	.volume_create = rd_volume_create,
	.volumes_list = rd_volumes_list,
	.volume_remove = rd_volume_remove,
	.route_set = rd_route_set,
	.route_remove = rd_route_remove,
	.proxy_state = rd_proxy_state,
	.metrics_sample = rd_metrics_sample,
	.container_put_file = rd_container_put_file,
	.container_state = rd_container_state,
	.memory_available = rd_memory_available,
	.free_port = rd_free_port,
	.http_probe = rd_http_probe,
	.service_dump = rd_service_dump,
	.service_restore = rd_service_restore,
	.container_logs = rd_container_logs,
};
