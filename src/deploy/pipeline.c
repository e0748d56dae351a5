/* The deployment pipeline's job framework: what every handler of a
 * deployment or of a lifecycle job shares (its state, SQL on the runner's
 * own connection, the variables and their scrubbing, the log and the
 * record's view of it, the runtime lock, runtime names, a deployment's
 * steps: begin, phase, end, fail), and the table of job kinds. The build
 * is build_job.c, the deploy strategy.c, the health gate health_gate.c,
 * the lifecycle kinds and the recovery lifecycle.c.
 *
 * Why the build and the deploy are two jobs: they run in queues of their
 * own concurrency (build 1: builds saturate a small host; deploy 2), and a
 * rollback is a deploy alone (on the lifecycle queue). The deployment
 * stays in flight (the partial unique index of migration 0012 is the
 * application's lock) from the build's claim to the deploy's end: the
 * build's last statement records the image, the log's size and tail, and
 * queues the deploy job in one transaction (it stays BUILDING; the deploy
 * job's claim moves it to DEPLOYING, 0013), so a crash between the two
 * loses nothing.
 *
 * The job runners' claim (0013, 0019) moves a deployment QUEUED ->
 * BUILDING -> DEPLOYING, one per application at a time and in number
 * order; the handlers check that state again (sw_pl_begin()): a
 * deployment cancelled or ended meanwhile is left alone.
 *
 * Failure: every step returns a sentence; the deployment ends FAILED with
 * it as errorMessage (scrubbed of the variables' values, like every log
 * line), its log's byte count and tail saved, and what the step started
 * undone (build_job.c, strategy.c). A cancel (the job's stop flag with
 * cancel_requested set) ends it CANCELLED the same way; a stop for
 * shutdown undoes the same things but leaves the deployment in flight,
 * and the job runners hand it back to the queue (QUEUED, its job QUEUED
 * again, the uploaded archive kept): the next start or another replica
 * runs it (migration 0019).
 *
 * The record's logByteCount and logTail follow the log while it runs (at
 * each phase, and at most once per SW_PL_PROGRESS_MS while lines come).
 * A failed or cancelled deployment keeps the phase it was in; DONE is a
 * success's alone.
 *
 * Phases are written to the row as they start (QUEUED, CLONING or
 * UNPACKING, BUILDING, STARTING, HEALTH_GATE, SWITCHING, FINISHING, DONE),
 * and each is a line "==> PHASE at <RFC 3339 time>" in the log: the
 * benchmark (bench/deploy_time.mjs) reads the phases' durations there. */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/validate.h"
#include "steward/driver/remote.h"
#include "deploy/pipeline_internal.h"

/* ---- state ---- */

void sw_pl_init(struct sw_pl *p, struct sw_job *job, const struct sw_deploy_settings *s)
{
	memset(p, 0, sizeof(*p));
	p->job = job;
	p->s = s;
}

static void variables_wipe(struct sw_pl *p)
{
	for (size_t i = 0; i < p->nenv; i++) {
		OPENSSL_cleanse(p->env[i], strlen(p->env[i]));
		free(p->env[i]);
	}
	free(p->env);
	free(p->secrets);
	p->env = NULL;
	p->secrets = NULL;
	p->nenv = p->nsecrets = 0;
}

void sw_pl_release(struct sw_pl *p)
{
	sw_pl_unlock(p);
	if (p->log) {
		sw_deploy_log_close(p->log, NULL);
		p->log = NULL;
	}
	variables_wipe(p);
	PQclear(p->row);
	p->row = NULL;
	sw_driver_free(p->driver);
	p->driver = NULL;
}

/* ---- SQL ---- */

PGresult *sw_pl_exec(struct sw_pl *p, const struct sw_db_stmt *st, const char *const *params,
		     char *err, size_t errlen)
{
	PGresult *res = PQexecParams(p->job->conn, st->sql, st->nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType t = PQresultStatus(res);
	if (t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK)
		return res;
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	/* The primary message never holds a parameter's value (those go to
	 * DETAIL), and no statement here binds a secret. */
	sw_log_error("runner statement failed stmt=%s job=%s sqlstate=%s msg=\"%s\"", st->name,
		     p->job->id, state ? state : "-", primary ? primary : PQerrorMessage(p->job->conn));
	snprintf(err, errlen, "The database failed while the work ran (%s).", st->name);
	PQclear(res);
	return NULL;
}

const char *sw_pl_col(const struct sw_pl *p, int col)
{
	if (!p->row || PQntuples(p->row) < 1 || PQgetisnull(p->row, 0, col))
		return NULL;
	return PQgetvalue(p->row, 0, col);
}

const char *sw_pl_app(const struct sw_pl *p, enum sw_db_rt_app_col col)
{
	return sw_pl_col(p, p->app + (int)col);
}

int sw_pl_driver(struct sw_pl *p, char *err, size_t errlen)
{
	return sw_pl_driver_for(p, sw_pl_app(p, SW_DB_RT_APP_SERVER_ID),
				sw_pl_app(p, SW_DB_RT_APP_SERVER_IS_LOCAL), err, errlen);
}

int sw_pl_driver_for(struct sw_pl *p, const char *server_id, const char *is_local, char *err,
		     size_t errlen)
{
	if (p->driver)
		return 0;
	/* Only a server known to be the local one gets the local driver: work
	 * for any other goes to its agent or fails, never to this host. */
	if (!is_local || strcmp(is_local, "t") != 0) {
		if (!server_id) {
			snprintf(err, errlen, "%s", SW_DRIVER_NOT_CONNECTED);
			return -EHOSTUNREACH;
		}
		/* Every job gives an agent that is reconnecting a while (a job
		 * handed back by a replica that stopped often starts before
		 * the agent has dialled another), then fails saying so. */
		return sw_driver_remote_new(p->job->conn, server_id, p->job->stop, p->s->agent_reconnect_wait_ms,
					    &p->driver, err, errlen);
	}
	p->driver = sw_driver_local_new();
	if (!p->driver) {
		int r = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "The local server's driver could not be made (%s).", strerror(-r));
		return r;
	}
	return 0;
}

int sw_pl_driver_server(struct sw_pl *p, const char *server_id, char *err, size_t errlen)
{
	if (p->driver)
		return 0;
	if (!server_id || !sw_is_uuid(sw_str_cstr(server_id))) {
		snprintf(err, errlen, "The job names no server: nothing was done on any server.");
		return -EINVAL;
	}
	const char *params[1] = { server_id };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_server, params, err, errlen);
	if (!res)
		return -EIO;
	int r;
	if (PQntuples(res) != 1) {
		snprintf(err, errlen, "The server was deleted: nothing was done on it.");
		r = -ENOENT;
	} else {
		r = sw_pl_driver_for(p, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), err, errlen);
	}
	PQclear(res);
	return r;
}

/* ---- variables and scrubbing ---- */

int sw_pl_variables_load(struct sw_pl *p, const char *app_id, char *err, size_t errlen)
{
	const char *params[1] = { app_id };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_variables, params, err, errlen);
	if (!res)
		return -EIO;
	int n = PQntuples(res), r = 0;
	if (n > SW_PL_MAX_VARIABLES)
		n = SW_PL_MAX_VARIABLES;
	p->env = calloc((size_t)n + 1, sizeof(*p->env));
	p->secrets = calloc((size_t)n + 1, sizeof(*p->secrets));
	if (!p->env || !p->secrets) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory while reading the application's variables.");
		goto done;
	}
	for (int i = 0; i < n; i++) {
		const char *key = PQgetvalue(res, i, 0), *sealed = PQgetvalue(res, i, 1);
		size_t klen = strlen(key), cap = strlen(sealed) + 1;
		char aad[SW_SEAL_AAD_MAX];
		sw_seal_aad_variable(aad, app_id, key);
		char *kv = malloc(klen + 1 + cap);
		if (!kv) {
			r = -ENOMEM;
			snprintf(err, errlen, "Out of memory while reading the application's variables.");
			goto done;
		}
		memcpy(kv, key, klen);
		kv[klen] = '=';
		size_t vlen = 0;
		r = sw_unseal(sealed, aad, kv + klen + 1, cap, &vlen);
		if (r < 0) {
			OPENSSL_cleanse(kv, klen + 1 + cap);
			free(kv);
			snprintf(err, errlen, "The variable %s could not be opened (%s): set it again.", key,
				 r == -EKEYREJECTED ? "sealed under another master key" : "damaged");
			goto done;
		}
		kv[klen + 1 + vlen] = '\0';
		p->env[p->nenv++] = kv;
		if (vlen)
			p->secrets[p->nsecrets++] = kv + klen + 1;
	}
done:
	PQclear(res);
	return r;
}

void sw_pl_scrub(const struct sw_pl *p, char *s, size_t cap)
{
	if (!s || !cap || !p->nsecrets)
		return;
	char *out = malloc(cap);
	if (!out) {
		s[0] = '\0'; /* nothing is better than a secret */
		return;
	}
	for (size_t i = 0; i < p->nsecrets; i++) {
		const char *v = p->secrets[i];
		size_t vlen = strlen(v), o = 0;
		if (vlen < SW_VARIABLE_SCRUB_MIN_LEN || !strstr(s, v))
			continue;
		for (const char *in = s; *in;) {
			if (strncmp(in, v, vlen) == 0) {
				for (int k = 0; k < 3 && o + 1 < cap; k++)
					out[o++] = '*';
				in += vlen;
			} else {
				if (o + 1 < cap)
					out[o++] = *in;
				in++;
			}
		}
		out[o] = '\0';
		memcpy(s, out, o + 1);
	}
	free(out);
}

/* ---- the log ---- */

int sw_pl_log_open(struct sw_pl *p, char *err, size_t errlen)
{
	if (p->log)
		return 0;
	p->log = sw_deploy_log_open(p->s->data_dir, p->job->target_id, p->s->log_max_bytes,
				    p->secrets, p->nsecrets);
	if (!p->log) {
		int r = errno ? -errno : -EIO;
		snprintf(err, errlen, "The deployment's log could not be opened (%s).", strerror(-r));
		return r;
	}
	/* Where the stored copy ends: an earlier job of the deployment (its
	 * build) stored up to there. */
	const char *params[1] = { p->job->target_id };
	char e[256];
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_log_stored, params, e, sizeof(e));
	p->log_stored = res && PQntuples(res) == 1 ? strtoull(PQgetvalue(res, 0, 0), NULL, 10) : 0;
	PQclear(res);
	return 0;
}

/* A stored chunk: at most this many bytes of the file (one insert). */
#define LOG_CHUNK_MAX (512u * 1024)

void sw_pl_log_store(struct sw_pl *p)
{
	if (!p->log)
		return;
	uint64_t bytes = sw_deploy_log_bytes(p->log);
	if (bytes <= p->log_stored)
		return;
	size_t cap = (size_t)SW_MIN(bytes - p->log_stored, (uint64_t)LOG_CHUNK_MAX);
	char *raw = malloc(cap), *b64 = malloc(4 * ((cap + 2) / 3) + 1);
	while (raw && b64 && p->log_stored < bytes) {
		size_t n = (size_t)SW_MIN(bytes - p->log_stored, (uint64_t)cap);
		ssize_t got = sw_deploy_log_read(p->log, p->log_stored, raw, n);
		if (got <= 0) {
			sw_log_warn("deployment %s: its log could not be read back to be stored (%s)",
				    p->job->target_id, got < 0 ? strerror((int)-got) : "short file");
			break;
		}
		EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)raw, (int)got);
		char off[24], e[256];
		snprintf(off, sizeof(off), "%llu", (unsigned long long)p->log_stored);
		const char *params[3] = { p->job->target_id, off, b64 };
		PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_log_chunk, params, e, sizeof(e));
		if (!res) {
			sw_log_warn("deployment %s: its log could not be stored: %s", p->job->target_id, e);
			break;
		}
		PQclear(res);
		p->log_stored += (uint64_t)got;
	}
	free(raw);
	free(b64);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sw_pl_log_progress(struct sw_pl *p, bool force)
{
	if (!p->log)
		return;
	uint64_t now = mono_ms();
	if (!force && now - p->progress_ms < SW_PL_PROGRESS_MS)
		return;
	p->progress_ms = now;
	sw_pl_log_store(p);
	char bytes[24], err[256], *tail = malloc(SW_DEPLOY_LOG_TAIL + 1);
	if (!tail)
		return;
	sw_deploy_log_tail(p->log, tail);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)sw_deploy_log_bytes(p->log));
	const char *params[3] = { p->job->target_id, bytes, tail };
	PQclear(sw_pl_exec(p, &sw_db_stmt_rt_log_progress, params, err, sizeof(err)));
	free(tail);
}

/* Whether the pause file lists point (names separated by white space). */
static bool fault_listed(const char *path, const char *point)
{
	char buf[256];
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
		if (strcmp(w, point) == 0)
			return true;
	return false;
}

void sw_pl_fault_pause(struct sw_pl *p, const char *point)
{
	if (!p->s || !p->s->fault_pause_file || !fault_listed(p->s->fault_pause_file, point))
		return;
	sw_pl_log(p, "Failure injection: paused at %s.", point);
	sw_pl_log_progress(p, true);
	sw_log_warn("job kind=%s id=%s target=%s: failure injection: paused at %s", p->job->kind,
		    p->job->id, p->job->target_id, point);
	while (!sw_pl_stopping(p) && fault_listed(p->s->fault_pause_file, point)) {
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

void sw_pl_log(struct sw_pl *p, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (p->log) {
		sw_deploy_log_line(p->log, line, len);
		sw_pl_log_progress(p, false);
		return;
	}
	sw_pl_scrub(p, line, sizeof(line));
	sw_log_info("job kind=%s id=%s target=%s: %s", p->job->kind, p->job->id, p->job->target_id, line);
}

void sw_pl_log_sink(void *arg, const char *line, size_t len)
{
	struct sw_pl *p = arg;
	if (p->log && sw_deploy_log_line(p->log, line, len) == -EFBIG && p->stop_on_full &&
	    !p->log_full) {
		p->log_full = true;
		__atomic_store_n(p->job->stop, true, __ATOMIC_RELAXED);
	}
	sw_pl_log_progress(p, false);
}

/* ---- stop, sleep, lock ---- */

bool sw_pl_stopping(const struct sw_pl *p)
{
	return p->job->stop && __atomic_load_n(p->job->stop, __ATOMIC_RELAXED);
}

bool sw_pl_sleep(const struct sw_pl *p, unsigned ms)
{
	while (ms) {
		if (sw_pl_stopping(p))
			return false;
		unsigned step = ms < 100 ? ms : 100;
		struct timespec ts = { 0, (long)step * 1000000L };
		nanosleep(&ts, NULL);
		ms -= step;
	}
	return !sw_pl_stopping(p);
}

int sw_pl_lock(struct sw_pl *p, const char *app_id, char *err, size_t errlen)
{
	if (p->locked)
		return 0;
	const char *params[1] = { app_id };
	for (unsigned waited = 0;; waited += 200) {
		PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_lock, params, err, errlen);
		if (!res)
			return -EIO;
		bool got = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
		PQclear(res);
		if (got) {
			p->locked = true;
			snprintf(p->locked_app, sizeof(p->locked_app), "%s", app_id);
			return 0;
		}
		if (waited >= SW_PL_LOCK_WAIT_MS) {
			snprintf(err, errlen, "Another runner kept the application's containers busy for "
				 "more than %u s.", SW_PL_LOCK_WAIT_MS / 1000);
			return -ETIMEDOUT;
		}
		if (!sw_pl_sleep(p, 200)) {
			snprintf(err, errlen, "The work was stopped.");
			return -ECANCELED;
		}
	}
}

void sw_pl_unlock(struct sw_pl *p)
{
	if (!p->locked)
		return;
	char err[256];
	const char *params[1] = { p->locked_app };
	PQclear(sw_pl_exec(p, &sw_db_stmt_rt_unlock, params, err, sizeof(err)));
	p->locked = false;
}

/* ---- names ---- */

void sw_pl_container_name(char out[SW_PL_NAME_MAX], const char *app_id, long number,
			  const char *colour)
{
	/* The first 12 hex digits of "xxxxxxxx-xxxx-...": 8, the dash, 4. */
	snprintf(out, SW_PL_NAME_MAX, "sw-%.8s%.4s-%ld%s%s", app_id, app_id + 9, number,
		 colour ? "-" : "", colour ? colour : "");
}

long sw_pl_container_number(const char *name, const char *app_id)
{
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "sw-%.8s%.4s-", app_id, app_id + 9);
	if (*name == '/')
		name++;
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return -1;
	char *end;
	errno = 0;
	long v = strtol(name + n, &end, 10);
	if (errno || end == name + n || v < 1 || (*end && *end != '-'))
		return -1;
	return v;
}

void sw_pl_volume_name(char *out, size_t cap, const char *app_id, const char *volume)
{
	snprintf(out, cap, "sw-%s-%s", app_id, volume);
}

void sw_pl_image_tag(char out[SW_DRIVER_TAG_MAX], const char *app_id, long number)
{
	snprintf(out, SW_DRIVER_TAG_MAX, "steward/%s:%ld", app_id, number);
}

int sw_pl_containers(struct sw_pl *p, const char *app_id, struct sw_container_info *out,
		     size_t *ret_n, char *err, size_t errlen)
{
	int r = sw_pl_driver(p, err, errlen);
	if (r)
		return r;
	return sw_driver_containers_list(p->driver, app_id, out, SW_PL_MAX_CONTAINERS, ret_n, err, errlen);
}

/* ---- a deployment's steps ---- */

int sw_pl_load_deployment(struct sw_pl *p, char *err, size_t errlen)
{
	const char *params[1] = { p->job->target_id };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_deployment, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(p->row);
	p->row = res;
	p->app = SW_DB_RT_DEPLOYMENT_APP;
	return PQntuples(res) == 1 ? 1 : 0;
}

int sw_pl_begin(struct sw_pl *p, const char *status, const char *phase, const char *allowed,
		char *err, size_t errlen)
{
	const char *params[5] = { p->job->target_id, status, phase,
				  p->job->worker_id ? p->job->worker_id : "", allowed };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_begin, params, err, errlen);
	if (!res)
		return -EIO; /* 23505 included: the claim (0013) never lets it happen */
	int n = PQntuples(res);
	PQclear(res);
	if (n == 1)
		return 1;
	/* Not runnable: cancelled, or already ended. */
	int r = sw_pl_load_deployment(p, err, errlen);
	if (r <= 0)
		return r;
	const char *now = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_STATUS);
	const char *cancel = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_CANCEL_REQUESTED);
	if (cancel && strcmp(cancel, "t") == 0 && now &&
	    (strcmp(now, "QUEUED") == 0 || strcmp(now, "BUILDING") == 0 || strcmp(now, "DEPLOYING") == 0))
		return sw_pl_end(p, "CANCELLED", NULL) < 0 ? -EIO : 0;
	return 0;
}

void sw_pl_now_rfc3339(char out[25])
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	sw_format_rfc3339((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000, out);
}

int sw_pl_step(struct sw_pl *p, const struct sw_db_stmt *st, const char *const *params, char *err,
	       size_t errlen)
{
	PGresult *res = sw_pl_exec(p, st, params, err, errlen);
	if (!res)
		return -EIO;
	int n = PQntuples(res);
	bool cancel = n == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (n != 1) {
		snprintf(err, errlen, "The deployment is no longer in flight.");
		return -ESTALE;
	}
	if (cancel || sw_pl_stopping(p)) {
		snprintf(err, errlen, "The deployment was stopped.");
		return -ECANCELED;
	}
	return 0;
}

int sw_pl_phase(struct sw_pl *p, const char *phase, char *err, size_t errlen)
{
	const char *params[2] = { p->job->target_id, phase };
	int r = sw_pl_step(p, &sw_db_stmt_rt_phase, params, err, errlen);
	/* FINISHING is past the point of no return (the new version serves):
	 * a cancel or a stop asked now is too late, and once the row says
	 * FINISHING a dead worker's deployment is settled SUCCEEDED (0019). */
	bool too_late = r == -ECANCELED && strcmp(phase, "FINISHING") == 0;
	if (r && !too_late)
		return r;
	char when[25];
	sw_pl_now_rfc3339(when);
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	sw_pl_log(p, "==> %s at %s", phase, when);
	if (too_late)
		sw_pl_log(p, "A cancel or a stop asked now comes too late: the new version serves "
			  "already, and the deployment finishes.");
	sw_pl_log_progress(p, true);
	sw_pl_fault_pause(p, phase);
	return 0;
}

/* message as a sentence: the callees' reasons (the driver's, libgit2's)
 * are clauses ("the image build failed: ..."); an errorMessage starts with
 * a capital and ends with a full stop. */
static void sentence(char *out, size_t cap, const char *message)
{
	size_t n = (size_t)snprintf(out, cap, "%s", message);
	if (n >= cap)
		n = cap - 1;
	while (n && (out[n - 1] == ' ' || out[n - 1] == '\n'))
		out[--n] = '\0';
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
	if (n && !strchr(".!?", out[n - 1]) && n + 1 < cap) {
		out[n] = '.';
		out[n + 1] = '\0';
	}
}

int sw_pl_end(struct sw_pl *p, const char *status, const char *message)
{
	char msg[1024] = "", bytes[24] = "", *tail = NULL;
	const char *bytes_p = NULL;
	if (message) {
		sentence(msg, sizeof(msg), message);
		sw_pl_scrub(p, msg, sizeof(msg));
	}
	if (strcmp(status, "FAILED") == 0)
		sw_pl_log(p, "Deployment failed: %s", msg);
	else if (strcmp(status, "CANCELLED") == 0)
		sw_pl_log(p, "Deployment cancelled.");
	else
		sw_pl_log(p, "Deployment succeeded.");
	if (p->log) {
		sw_pl_log_store(p);
		tail = malloc(SW_DEPLOY_LOG_TAIL + 1);
		if (tail)
			sw_deploy_log_tail(p->log, tail);
		snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)sw_deploy_log_bytes(p->log));
		bytes_p = bytes;
	}
	const char *params[5] = { p->job->target_id, status, message ? msg : NULL, bytes_p, tail };
	char err[256];
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_finish, params, err, sizeof(err));
	free(tail);
	if (p->log) {
		sw_deploy_log_end(p->log, status, message ? msg : NULL);
		p->log = NULL;
	}
	if (!res)
		return -EIO;
	PQclear(res);
	return 0;
}

int sw_pl_fail(struct sw_pl *p, int r, const char *err)
{
	if (r == -ESTALE)
		return 0; /* ended by someone else (the reaper), or deleted */
	if (p->log_full)
		return sw_pl_end(p, "FAILED", err);
	char e[256];
	bool cancel = false;
	if (r == -ECANCELED || sw_pl_stopping(p)) {
		const char *params[1] = { p->job->target_id };
		PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_deployment, params, e, sizeof(e));
		cancel = res && PQntuples(res) == 1 &&
			 strcmp(PQgetvalue(res, 0, SW_DB_RT_DEPLOYMENT_CANCEL_REQUESTED), "t") == 0;
		PQclear(res);
		if (cancel)
			return sw_pl_end(p, "CANCELLED", NULL);
		if (sw_pl_stopping(p)) {
			/* The runner settles the job as stopped: the deployment
			 * goes back to the queue, whole, for the next start or
			 * another replica (steward_job_abandon, 0019). */
			sw_pl_log(p, "The worker is stopping: what this attempt started is undone and the "
				  "deployment goes back to the queue, to run again from the start of its %s.",
				  strcmp(p->job->kind, "deployment.build") == 0 ? "build" : "deploy");
			sw_pl_log_progress(p, true);
			return 1;
		}
	}
	return sw_pl_end(p, "FAILED", err && *err ? err : "The deployment failed for a reason not recorded.");
}

/* ---- files ---- */

static int rmtree_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void sw_pl_rmtree(const char *path)
{
	if (*path)
		nftw(path, rmtree_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the kinds ---- */

const struct sw_job_kind *sw_deploy_job_kinds(const struct sw_deploy_settings *s, size_t *ret_n)
{
	/* Filled once at start-up (sw_jobs_start() copies the array). */
	static struct sw_job_kind kinds[] = {
		{ "deployment.build", sw_pl_build, NULL },
		{ "deployment.deploy", sw_pl_deploy, NULL },
		{ "runtime.recover", sw_pl_recover, NULL },
		{ "application.start", sw_pl_app_lifecycle, NULL },
		{ "application.stop", sw_pl_app_lifecycle, NULL },
		{ "application.restart", sw_pl_app_lifecycle, NULL },
		{ "application.delete", sw_pl_app_delete, NULL },
		{ "volume.delete", sw_pl_volume_delete, NULL },
		{ "service.start", sw_pl_service_lifecycle, NULL },
		{ "service.stop", sw_pl_service_lifecycle, NULL },
		{ "service.restart", sw_pl_service_lifecycle, NULL },
		{ "service.delete", sw_pl_service_delete, NULL },
		{ "service.backup", sw_pl_service_backup, NULL },
		{ "service.restore", sw_pl_service_restore, NULL },
		{ "service.backup_due", sw_pl_service_backup_due, NULL },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(kinds); i++)
		kinds[i].ctx = (void *)s;
	*ret_n = SW_ARRAY_SIZE(kinds);
	return kinds;
}
