/* The deployment pipeline's runners: the build ("deployment.build"), and
 * what every handler shares (SQL on the runner's own connection, the
 * variables, the log, the runtime lock). The deploy is strategy.c, the
 * health gate health.c, the lifecycle kinds and the recovery lifecycle.c.
 *
 * Why the build and the deploy are two jobs: they run in two queues of
 * their own concurrency (build 1: builds saturate a small host; deploy 2),
 * and a rollback is a deploy alone. The deployment stays in flight (the
 * partial unique index of migration 0012 is the application's lock) from
 * the build's claim to the deploy's end: the build's last statement records
 * the image, the log's size and tail, and queues the deploy job in one
 * transaction (it stays BUILDING; the deploy job's claim moves it to
 * DEPLOYING, 0013), so a crash between the two loses nothing.
 *
 * The job runners' claim (0013) moves a deployment QUEUED -> BUILDING ->
 * DEPLOYING and keeps a second one of the application QUEUED behind it;
 * the handlers here check that state again (sw_pl_begin()): a deployment
 * cancelled or ended meanwhile is left alone.
 *
 * Decisions:
 * - Steward never pulls images. The build's base images (every FROM of the
 *   Dockerfile but earlier stages, scratch and references with a build
 *   argument) must be on the server already: a missing one fails the
 *   build before it starts, naming it (an operator loads it with docker
 *   load or pulls it on the host). Services' images alike (lifecycle.c).
 * - The log is capped (DEPLOY_LOG_MAX_BYTES): a build whose output reaches
 *   the cap is stopped (the log says it was cut) and FAILED saying so, so
 *   a runaway build cannot run on unwatched.
 * - Builds do not receive the application's variables (they are runtime
 *   configuration, and a build argument would be kept in the image's
 *   history); the containers do. Whatever the build prints is scrubbed of
 *   the values all the same.
 *
 * Failure: every step returns a sentence; the deployment ends FAILED with
 * it as errorMessage (scrubbed of the variables' values, like every log
 * line), its log's byte count and tail saved, the source directory and the
 * uploaded archive removed, the new image removed, and the serving version
 * put back as it was (strategy.c, sw_pl_restore()). A cancel (the job's
 * stop flag with cancel_requested set) ends it CANCELLED the same way; a
 * stop for shutdown ends it FAILED saying the worker stopped.
 *
 * Phases are written to the row as they start (QUEUED, CLONING or
 * UNPACKING, BUILDING, STARTING, HEALTH_GATE, SWITCHING, FINISHING, DONE),
 * and each is a line "==> PHASE at <RFC 3339 time>" in the log: the
 * benchmark (bench/deploy_time.mjs) reads the phases' durations there. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/deploy/source.h"
#include "steward/base/sshkey.h"
#include "deploy/pipeline_internal.h"

/* The whole clone, and the build context streamed to the engine. */
#define SW_PL_GIT_TIMEOUT_S 600
#define SW_PL_CONTEXT_MAX_BYTES (2ull << 30)
/* Uploaded archives, unpacked. */
#define SW_PL_ARCHIVE_MAX_BYTES (2ull << 30)
#define SW_PL_ARCHIVE_MAX_ENTRIES 200000
#define SW_PL_ARCHIVE_MAX_DEPTH 64
/* Build stages of one Dockerfile remembered by name. */
#define SW_PL_MAX_STAGES 32
/* The start command of a generated Dockerfile (exec form). */
#define SW_PL_START_COMMAND_MAX 64

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
	return sw_pl_driver_for(p, sw_pl_app(p, SW_DB_RT_APP_SERVER_IS_LOCAL), err, errlen);
}

int sw_pl_driver_for(struct sw_pl *p, const char *is_local, char *err, size_t errlen)
{
	if (p->driver)
		return 0;
	if (is_local && strcmp(is_local, "t") != 0) {
		snprintf(err, errlen, "The application's server is not connected: only the local server "
			 "can run work until agents connect remote servers.");
		return -EHOSTUNREACH;
	}
	p->driver = sw_driver_local_new();
	if (!p->driver) {
		int r = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "The local server's driver could not be made (%s).", strerror(-r));
		return r;
	}
	return 0;
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
		char aad[128];
		snprintf(aad, sizeof(aad), "variable:%s:%s", app_id, key);
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
	return 0;
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

static void now_rfc3339(char out[25])
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
	if (r)
		return r;
	char when[25];
	now_rfc3339(when);
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	sw_pl_log(p, "==> %s at %s", phase, when);
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
			char words[16], msg[128];
			size_t i = 0;
			for (; p->phase[i] && i + 1 < sizeof(words); i++)
				words[i] = p->phase[i] == '_' ? ' ' : (char)(p->phase[i] | 0x20);
			words[i] = '\0';
			snprintf(msg, sizeof(msg), "the worker stopped while the deployment was %s",
				 *words ? words : "starting");
			return sw_pl_end(p, "FAILED", msg);
		}
	}
	return sw_pl_end(p, "FAILED", err && *err ? err : "The deployment failed for a reason not recorded.");
}

/* ---- the build ---- */

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

/* The start command (a JSON array of strings) as a NULL-terminated argv
 * into argv (SW_PL_START_COMMAND_MAX + 1); the strings live in *ret_json
 * (json_decref() it). NULL when there is none. */
static const char *const *start_command(const char *text, json_t **ret_json, const char **argv)
{
	*ret_json = NULL;
	if (!text)
		return NULL;
	json_t *a = json_loads(text, 0, NULL);
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SW_PL_START_COMMAND_MAX) {
		json_decref(a);
		return NULL;
	}
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			json_decref(a);
			return NULL;
		}
		argv[i] = json_string_value(v);
	}
	argv[json_array_size(a)] = NULL;
	*ret_json = a;
	return argv;
}

/* The user name sent with a git credential's token over https: its own,
 * else its provider's convention (GitHub's x-access-token, GitLab's oauth2,
 * Bitbucket always has one, "git" for a generic host). */
const char *sw_pl_git_username(const char *provider, const char *username)
{
	if (username)
		return username;
	if (provider && strcmp(provider, "GITHUB") == 0)
		return "x-access-token";
	if (provider && strcmp(provider, "GITLAB") == 0)
		return "oauth2";
	return "git";
}

int sw_pl_unseal_text(const char *sealed, const char *purpose, const char *id, char *out, size_t cap)
{
	char aad[64];
	size_t len = 0;
	snprintf(aad, sizeof(aad), "%s:%s", purpose, id);
	int r = sealed ? sw_unseal(sealed, aad, out, cap - 1, &len) : -ENOENT;
	if (r < 0)
		OPENSSL_cleanse(out, cap);
	else
		out[len] = '\0';
	return r;
}

/* Fetches the source into src: the archive, or the git source. */
static int fetch_source(struct sw_pl *p, const char *src, char *err, size_t errlen)
{
	const char *archive = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH);
	if (archive) {
		struct sw_archive_limits lim = { SW_PL_ARCHIVE_MAX_BYTES, SW_PL_ARCHIVE_MAX_ENTRIES,
						 SW_PL_ARCHIVE_MAX_DEPTH };
		sw_pl_log(p, "Unpacking the uploaded archive.");
		int r = sw_archive_unpack(archive, src, &lim, err, errlen);
		if (r == 0)
			sw_pl_log(p, "The archive was unpacked.");
		return r;
	}
	const char *url = sw_pl_app(p, SW_DB_RT_APP_GIT_URL);
	if (!url) {
		snprintf(err, errlen, "The application has no git source: set one, or upload an archive.");
		return -ENOENT;
	}
	const char *app_id = sw_pl_app(p, SW_DB_RT_APP_ID);
	const char *cred_id = sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_ID);
	char key[SW_SSH_PRIVATE_KEY_MAX + 1], token[SW_GIT_TOKEN_MAX_LEN + 1] = "";
	int r = sw_pl_unseal_text(sw_pl_app(p, SW_DB_RT_APP_GIT_PRIVATE_KEY_SEALED), "deploy-key", app_id,
				  key, sizeof(key));
	if (r < 0) {
		snprintf(err, errlen, "The application's deploy key could not be opened: generate a new "
			 "one (POST /applications/{id}/git-source/deploy-key).");
		return r;
	}
	if (cred_id && (r = sw_pl_unseal_text(sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_TOKEN_SEALED),
					      "git-credential", cred_id, token, sizeof(token))) < 0) {
		OPENSSL_cleanse(key, sizeof(key));
		snprintf(err, errlen, "The git source's credential could not be opened: give it its "
			 "token again (PATCH /git-credentials/{id}).");
		return r;
	}
	const char *ref = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_REQUESTED_REF);
	const char *branch = sw_pl_app(p, SW_DB_RT_APP_GIT_BRANCH);
	struct sw_git_fetch f = {
		.url = url,
		.ref = ref,
		.branch = branch,
		.private_key = key,
		.public_key = sw_pl_app(p, SW_DB_RT_APP_GIT_PUBLIC_KEY),
		.ssh_host_key = sw_pl_app(p, SW_DB_RT_APP_GIT_SSH_HOST_KEY),
		.https_username = cred_id ? sw_pl_git_username(sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_PROVIDER),
							       sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_USERNAME))
					  : NULL,
		.https_token = cred_id ? token : NULL,
		.ca_file = p->s->git_ca_file,
		.allow_file = p->s->allow_file_urls,
		.cancel = p->job->stop,
		.timeout_s = SW_PL_GIT_TIMEOUT_S,
	};
	struct sw_commit_info ci;
	memset(&ci, 0, sizeof(ci));
	sw_pl_log(p, "Cloning the repository (%s %s).", ref ? "ref" : "branch", ref ? ref : branch);
	r = sw_git_fetch(&f, src, &ci, sw_pl_log_sink, p, err, errlen);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(token, sizeof(token));
	if (r)
		return r;
	PGresult *res;
	if (ci.host_key[0] && !f.ssh_host_key) {
		const char *hk[3] = { app_id, url, ci.host_key };
		if (!(res = sw_pl_exec(p, &sw_db_stmt_rt_host_key_learned, hk, err, errlen)))
			return -EIO;
		PQclear(res);
	}
	if (cred_id) {
		const char *cu[1] = { cred_id };
		if (!(res = sw_pl_exec(p, &sw_db_stmt_rt_credential_used, cu, err, errlen)))
			return -EIO;
		PQclear(res);
	}
	const char *nl = strchr(ci.message, '\n');
	sw_pl_log(p, "Commit %s (%s) by %s: %.*s", ci.sha, ci.ref, ci.author,
		  (int)(nl ? (size_t)(nl - ci.message) : strlen(ci.message)), ci.message);
	const char *params[5] = { p->job->target_id, ci.ref, ci.sha, ci.message, ci.author };
	res = sw_pl_exec(p, &sw_db_stmt_rt_commit, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(res);
	return 0;
}

/* Checks that every image the Dockerfile builds FROM is on the server
 * (Steward never pulls: see the file's comment). Stages named by an
 * earlier FROM ... AS, "scratch", and references with a build argument
 * ($) are left to the engine. */
static int base_images_present(struct sw_pl *p, const char *context_dir, const char *dockerfile,
			       char *err, size_t errlen)
{
	char path[PATH_MAX], line[1024], stages[SW_PL_MAX_STAGES][128];
	size_t nstages = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", context_dir, dockerfile) >= sizeof(path))
		return 0; /* the driver refuses it with its own words */
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int r = 0;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *word = strtok_r(line, " \t\r\n", &save);
		if (!word || strcasecmp(word, "FROM") != 0)
			continue;
		char *image = strtok_r(NULL, " \t\r\n", &save);
		while (image && strncmp(image, "--", 2) == 0)
			image = strtok_r(NULL, " \t\r\n", &save);
		if (!image)
			continue;
		bool stage = strcasecmp(image, "scratch") == 0 || strchr(image, '$') != NULL;
		for (size_t i = 0; !stage && i < nstages; i++)
			stage = strcasecmp(stages[i], image) == 0;
		if (!stage) {
			if (!sw_driver_image_exists(p->driver, image)) {
				snprintf(err, errlen, "The base image %s is not present on the server and is "
					 "never pulled: load it on the server, or build FROM one that is.", image);
				r = -ENOENT;
			} else {
				sw_pl_log(p, "Base image %s is present.", image);
			}
		}
		char *as = strtok_r(NULL, " \t\r\n", &save);
		char *name = as && strcasecmp(as, "AS") == 0 ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		if (name && nstages < SW_PL_MAX_STAGES)
			snprintf(stages[nstages++], sizeof(stages[0]), "%s", name);
	}
	fclose(f);
	return r;
}

/* Detects the plan and builds the image tag. */
static int build_image(struct sw_pl *p, const char *src, const char *tag, char *err, size_t errlen)
{
	const char *app_id = sw_pl_app(p, SW_DB_RT_APP_ID);
	const char *context = sw_pl_app(p, SW_DB_RT_APP_BUILD_CONTEXT);
	json_t *cmd_json;
	const char *argv[SW_PL_START_COMMAND_MAX + 1];
	struct sw_app_build ab = {
		.dockerfile_path = sw_pl_app(p, SW_DB_RT_APP_DOCKERFILE_PATH),
		.build_context = context ? context : ".",
		.start_command = start_command(sw_pl_app(p, SW_DB_RT_APP_START_COMMAND), &cmd_json, argv),
		.port = (unsigned)atoi(sw_pl_app(p, SW_DB_RT_APP_PORT)),
		.base_image = p->s->base_image,
	};
	struct sw_build_plan plan;
	memset(&plan, 0, sizeof(plan));
	int r = sw_build_plan_detect(src, &ab, &plan, err, errlen);
	json_decref(cmd_json);
	if (r)
		return r;
	if (plan.generated)
		sw_pl_log(p, "No Dockerfile: building as a %s application (generated %s).", plan.stack,
			  plan.dockerfile);
	else
		sw_pl_log(p, "Building with %s.", plan.dockerfile);
	char context_dir[PATH_MAX];
	if (!context || strcmp(context, ".") == 0)
		snprintf(context_dir, sizeof(context_dir), "%s", src);
	else if ((size_t)snprintf(context_dir, sizeof(context_dir), "%s/%s", src, context) >=
		 sizeof(context_dir)) {
		snprintf(err, errlen, "The build context's path is too long.");
		return -ENAMETOOLONG;
	}
	char l_app[64], l_dep[64];
	snprintf(l_app, sizeof(l_app), "steward.application=%s", app_id);
	snprintf(l_dep, sizeof(l_dep), "steward.deployment=%s", p->job->target_id);
	const char *labels[] = { l_app, l_dep, "steward.managed=true", NULL };
	struct sw_image_build b = {
		.context_dir = context_dir,
		.dockerfile = plan.dockerfile,
		.tag = tag,
		.labels = labels,
		.cancel = p->job->stop,
		.context_max_bytes = SW_PL_CONTEXT_MAX_BYTES,
	};
	r = sw_pl_driver(p, err, errlen);
	if (r || (r = base_images_present(p, context_dir, plan.dockerfile, err, errlen)) != 0)
		return r;
	sw_pl_log(p, "Building the image %s.", tag);
	return sw_driver_image_build(p->driver, &b, sw_pl_log_sink, p, err, errlen);
}

int sw_pl_build(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	char src[PATH_MAX] = "", tag[SW_DRIVER_TAG_MAX] = "", archive_buf[PATH_MAX] = "";
	const char *archive = NULL;
	bool image_built = false;
	int r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out; /* gone (its application deleted): nothing to do */
	bool upload = sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH) != NULL;
	r = sw_pl_begin(&p, "BUILDING", upload ? "UNPACKING" : "CLONING", "{QUEUED,BUILDING}", err,
			errlen);
	if (r <= 0)
		goto out;
	/* The row again: the begin may have come after a wait. */
	r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out;
	if (sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH)) {
		snprintf(archive_buf, sizeof(archive_buf), "%s", sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH));
		archive = archive_buf;
	}
	const char *app_id = sw_pl_app(&p, SW_DB_RT_APP_ID);
	long number = atol(sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_NUMBER));
	sw_pl_image_tag(tag, app_id, number);
	if ((r = sw_pl_variables_load(&p, app_id, err, errlen)) != 0 ||
	    (r = sw_pl_log_open(&p, err, errlen)) != 0)
		goto failed;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p.stop_on_full = true;
	sw_pl_log(&p, "Deployment #%ld of %s (%s).", number, sw_pl_app(&p, SW_DB_RT_APP_NAME),
		  sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_TRIGGER));
	r = sw_pl_phase(&p, archive ? "UNPACKING" : "CLONING", err, errlen);
	if (r)
		goto failed;
	if ((r = sw_pl_driver(&p, err, errlen)) != 0)
		goto failed;
	char sources[PATH_MAX];
	snprintf(sources, sizeof(sources), "%s/sources", p.s->data_dir);
	if (mkdir(sources, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, errlen, "The sources directory could not be made (%s).", strerror(errno));
		goto failed;
	}
	if ((size_t)snprintf(src, sizeof(src), "%s/%s", sources, job->target_id) >= sizeof(src)) {
		r = -ENAMETOOLONG;
		snprintf(err, errlen, "The data directory's path is too long.");
		goto failed;
	}
	sw_pl_rmtree(src); /* a crashed attempt's */
	if ((r = fetch_source(&p, src, err, errlen)) != 0)
		goto failed;
	if ((r = sw_pl_phase(&p, "BUILDING", err, errlen)) != 0)
		goto failed;
	r = build_image(&p, src, tag, err, errlen);
	if (r)
		goto failed;
	image_built = true;
	sw_pl_rmtree(src);
	if (archive)
		unlink(archive);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	char when[25];
	now_rfc3339(when);
	sw_pl_log(&p, "Image %s built at %s (%.1f s since the build job started); the deploy is "
		  "queued.", tag, when,
		  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	char bytes[24], *tail = malloc(SW_DEPLOY_LOG_TAIL + 1);
	if (!tail) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto failed;
	}
	sw_deploy_log_tail(p.log, tail);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)sw_deploy_log_bytes(p.log));
	const char *params[4] = { job->target_id, tag, bytes, tail };
	PGresult *res = sw_pl_exec(&p, &sw_db_stmt_rt_built, params, err, errlen);
	free(tail);
	if (!res) {
		r = -EIO;
		goto failed;
	}
	int n = PQntuples(res);
	PQclear(res);
	if (n != 1) {
		/* Cancelled, or ended by the reaper, while it built. */
		snprintf(err, errlen, "The deployment was stopped.");
		r = -ECANCELED;
		goto failed;
	}
	r = 0;
	goto out;
failed:
	if (p.log_full) {
		r = -EFBIG;
		snprintf(err, errlen, "The build's log reached DEPLOY_LOG_MAX_BYTES (%llu bytes): the build "
			 "was stopped.", (unsigned long long)p.s->log_max_bytes);
	}
	sw_pl_rmtree(src);
	if (archive)
		unlink(archive);
	if (image_built && p.driver) {
		char e[256];
		sw_driver_image_remove(p.driver, tag, e, sizeof(e));
	}
	sw_pl_fail(&p, r, err);
	sw_pl_scrub(&p, err, errlen);
out:
	sw_pl_release(&p);
	return r < 0 ? r : 0;
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
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(kinds); i++)
		kinds[i].ctx = (void *)s;
	*ret_n = SW_ARRAY_SIZE(kinds);
	return kinds;
}
