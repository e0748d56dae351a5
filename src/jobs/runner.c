/* The job runners: threads that claim jobs from PostgreSQL and run their
 * handlers, and one worker thread that keeps this process alive in the
 * database's eyes.
 *
 * Why threads with blocking connections, not the io loops: a handler runs
 * for minutes (a clone, an image build, a health gate) and blocks on
 * libgit2, libarchive and the Docker socket; a runner is one such job at a
 * time, so a plain thread with its own PGconn is the simplest thing that
 * is correct. The number of threads is the queue's concurrency (build 1,
 * deploy 2, lifecycle 4): a process never runs more than that at once,
 * and the claim (FOR UPDATE SKIP LOCKED, 0013) keeps processes apart.
 * Connections grow on demand: a queue's first runner claims from the
 * start; its next runner connects and claims only while as many of the
 * queue's runners as its rank are busy, and disconnects once they are
 * not, so an idle process holds three claiming connections, not seven.
 *
 * The worker thread has a connection of its own that
 *   - registered the worker row and holds its advisory lock for the
 *     process's life (steward_worker_register): a worker whose lock can
 *     be taken is dead, and its deployments are reaped by whoever looks;
 *   - LISTENs on steward_jobs and wakes the runners of the queue the
 *     payload names (a condition variable per queue; a sequence number, so
 *     a wake-up between a claim that found nothing and the wait is never
 *     lost), and on "cancel" sets the stop flag of the runner whose
 *     deployment's cancel was asked;
 *   - reaps dead workers every SW_JOBS_REAP_MS (and sw_jobs_start reaps
 *     once before anything runs), excluding itself: its own lock is
 *     re-entrant for its session, so it would look dead to itself.
 * If that connection is lost, so is the lock: another process may reap
 * this one's deployments at any moment. The running handlers are told to
 * stop, nothing is claimed, and the worker registers again under a new id
 * once the database answers.
 *
 * Runners poll every SW_JOBS_POLL_MS as well: a NOTIFY sent while a
 * connection was down is lost, and a job whose run_after is in the future
 * is not announced when it becomes due. Only each queue's first runner
 * does: the others wait without a timeout until the queue's busy count
 * reaches their rank. The worker thread polls for cancels only while a
 * deployment runs. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "steward/jobs/jobs.h"
#include "steward/base/log.h"
#include "steward/db/statements_deployments.h"

#define QUEUES 3
#define RUNNERS_MAX 7
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define ERR_MAX 1024 /* bytes of a handler's error sentence */

struct queue {
	const char *name;
	unsigned concurrency;
	unsigned busy;        /* its runners running a job */
	uint64_t wake_seq;    /* bumped by each wake-up */
	pthread_cond_t cond;
};

struct runner {
	pthread_t thread;
	struct queue *q;
	unsigned rank;         /* 0 for a queue's first runner, 1 for its second, ... */
	bool busy;             /* running a job */
	bool deployment;       /* ... of a deployment */
	bool interrupted;      /* stopped by its worker (shutdown, lock lost), not a cancel */
	bool exited;
	bool joined;
	char target_id[37];
	volatile bool stop;    /* the job's stop flag (atomic stores and loads) */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t exited_cond;
	bool running;          /* between start and the end of stop */
	bool stopping;         /* runners: claim nothing more (but continuations while draining) */
	bool draining;         /* a graceful stop lets running work finish */
	bool listener_exit;
	bool registered;       /* worker_id holds this process's lock */
	char worker_id[37];
	char *conninfo;
	struct sw_job_kind *kinds;
	size_t nkinds;
	struct queue queues[QUEUES];
	struct runner runners[RUNNERS_MAX];
	unsigned nrunners;
	unsigned alive;        /* runner threads not yet exited */
	pthread_t listener;
	PGconn *lconn;         /* the worker's connection (its lock) */
	int wake_fd;           /* wakes the worker thread */
	bool cancel_pending;   /* a "cancel" was announced */
} J = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1 };

static const char *const queue_names[QUEUES] = { "build", "deploy", "lifecycle" };
static const unsigned queue_concurrency[QUEUES] = { 1, 2, 4 };

/* ---- small helpers ---- */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits on cond (J.lock held, CLOCK_MONOTONIC) for at most ms. */
static void cond_wait_ms(pthread_cond_t *cond, unsigned ms)
{
	struct timespec ts = sw_deadline_after_ms(CLOCK_MONOTONIC, ms);
	pthread_cond_timedwait(cond, &J.lock, &ts);
}

static int cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	if (pthread_condattr_init(&attr) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	int r = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return r ? -r : 0;
}

static PGconn *connect_db(void)
{
	/* expand_dbname: conninfo may be a URL or key=value pairs; the later
	 * keywords add to it. */
	const char *const keys[] = { "dbname", "application_name", "connect_timeout", NULL };
	const char *const values[] = { J.conninfo, "stewardd-jobs", "10", NULL };
	PGconn *c = PQconnectdbParams(keys, values, 1);
	if (c && PQstatus(c) != CONNECTION_OK) {
		PQfinish(c);
		return NULL;
	}
	return c;
}

/* Runs stmt with text parameters; the result when it has the wanted
 * status, else NULL (the reason into err when given). */
static PGresult *exec(PGconn *c, const struct sw_db_stmt *stmt, const char *const *params,
		      ExecStatusType want, char *err, size_t errlen)
{
	PGresult *res = PQexecParams(c, stmt->sql, stmt->nparams, NULL, params, NULL, NULL, 0);
	if (res && PQresultStatus(res) == want)
		return res;
	if (err)
		snprintf(err, errlen, "%s: %s", stmt->name,
			 res ? PQresultErrorMessage(res) : PQerrorMessage(c));
	PQclear(res);
	return NULL;
}

/* A connection a handler may have left inside a transaction is brought
 * back to idle before the runner uses it again. */
static void settle_connection(PGconn *c)
{
	PGTransactionStatusType t = PQtransactionStatus(c);
	if (t == PQTRANS_INTRANS || t == PQTRANS_INERROR)
		PQclear(PQexec(c, "ROLLBACK"));
}

static void wake_listener(void)
{
	uint64_t one = 1;
	if (J.wake_fd >= 0 && write(J.wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is full: the thread will wake anyway. */
	}
}

/* Stops every running handler (J.lock held): shutdown, or the lock lost. */
static void interrupt_all(void)
{
	for (unsigned i = 0; i < J.nrunners; i++) {
		struct runner *r = &J.runners[i];
		if (!r->busy)
			continue;
		r->interrupted = true;
		__atomic_store_n(&r->stop, true, __ATOMIC_RELAXED);
	}
}

static void wake_all_queues(void)
{
	for (unsigned i = 0; i < QUEUES; i++) {
		J.queues[i].wake_seq++;
		pthread_cond_broadcast(&J.queues[i].cond);
	}
}

/* ---- the worker's connection: register, listen, reap ---- */

/* Connects, registers a new worker (its lock), LISTENs and reaps once.
 * 0 or -errno with the reason in err. Sets J.lconn and J.worker_id. */
static int worker_register(char *err, size_t errlen)
{
	PGconn *c = connect_db();
	if (!c) {
		snprintf(err, errlen, "cannot connect to the database");
		return -ECONNREFUSED;
	}
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	const char *reg[2] = { host, pid };
	PGresult *res = exec(c, &sw_db_stmt_worker_register, reg, PGRES_TUPLES_OK, err, errlen);
	if (!res || PQntuples(res) != 1) {
		PQclear(res);
		PQfinish(c);
		return -EIO;
	}
	char id[37];
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	res = PQexec(c, "LISTEN steward_jobs");
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		snprintf(err, errlen, "LISTEN steward_jobs: %s", PQresultErrorMessage(res));
		PQclear(res);
		PQfinish(c);
		return -EIO;
	}
	PQclear(res);
	const char *self[1] = { id };
	res = exec(c, &sw_db_stmt_jobs_reap, self, PGRES_TUPLES_OK, err, errlen);
	if (!res) {
		PQfinish(c);
		return -EIO;
	}
	const char *n = PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "0";
	if (strcmp(n, "0") != 0)
		sw_log_warn("jobs: deployments of dead workers failed count=%s", n);
	PQclear(res);
	pthread_mutex_lock(&J.lock);
	J.lconn = c;
	memcpy(J.worker_id, id, sizeof(id));
	J.registered = true;
	wake_all_queues();
	pthread_mutex_unlock(&J.lock);
	sw_log_info("jobs: worker registered id=%s", id);
	return 0;
}

static void reap(PGconn *c, const char *self)
{
	char err[512];
	const char *p[1] = { self };
	PGresult *res = exec(c, &sw_db_stmt_jobs_reap, p, PGRES_TUPLES_OK, err, sizeof(err));
	if (!res) {
		sw_log_warn("jobs: reaping failed: %s", err);
		return;
	}
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") != 0)
		sw_log_warn("jobs: deployments of dead workers failed count=%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	PQclear(exec(c, &sw_db_stmt_worker_heartbeat, p, PGRES_COMMAND_OK, NULL, 0));
}

/* Sets the stop flag of the runners whose deployment's cancel was asked. */
static void check_cancels(PGconn *c, const char *self)
{
	const char *p[1] = { self };
	PGresult *res = exec(c, &sw_db_stmt_jobs_cancelled, p, PGRES_TUPLES_OK, NULL, 0);
	if (!res)
		return;
	pthread_mutex_lock(&J.lock);
	for (int i = 0; i < PQntuples(res); i++) {
		const char *id = PQgetvalue(res, i, 0);
		for (unsigned k = 0; k < J.nrunners; k++) {
			struct runner *r = &J.runners[k];
			if (r->busy && r->deployment && strcmp(r->target_id, id) == 0 &&
			    !__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
				__atomic_store_n(&r->stop, true, __ATOMIC_RELAXED);
				sw_log_info("jobs: cancel asked deployment=%s", id);
			}
		}
	}
	pthread_mutex_unlock(&J.lock);
	PQclear(res);
}

static bool deployment_running(void)
{
	bool any = false;
	pthread_mutex_lock(&J.lock);
	for (unsigned k = 0; k < J.nrunners && !any; k++)
		any = J.runners[k].busy && J.runners[k].deployment;
	pthread_mutex_unlock(&J.lock);
	return any;
}

static void on_notify(const char *payload)
{
	pthread_mutex_lock(&J.lock);
	if (strcmp(payload, "cancel") == 0) {
		J.cancel_pending = true;
	} else {
		for (unsigned i = 0; i < QUEUES; i++) {
			if (strcmp(payload, J.queues[i].name) == 0) {
				J.queues[i].wake_seq++;
				pthread_cond_broadcast(&J.queues[i].cond);
			}
		}
	}
	pthread_mutex_unlock(&J.lock);
}

/* The lock's connection is gone: so is the lock. */
static void worker_lost(void)
{
	pthread_mutex_lock(&J.lock);
	bool was = J.registered;
	J.registered = false;
	interrupt_all();
	PGconn *c = J.lconn;
	J.lconn = NULL;
	pthread_mutex_unlock(&J.lock);
	PQfinish(c);
	if (was)
		sw_log_error("jobs: the database connection holding this worker's lock was lost; "
			     "running jobs are stopped and the worker registers again");
}

static bool listener_should_exit(void)
{
	pthread_mutex_lock(&J.lock);
	bool r = J.listener_exit;
	pthread_mutex_unlock(&J.lock);
	return r;
}

static void drain_wake_fd(void)
{
	uint64_t v;
	while (read(J.wake_fd, &v, sizeof(v)) > 0) {
	}
}

/* Hands the notifications libpq holds to the runners. Also after a query
 * on the connection: libpq reads the ones that arrived meanwhile with its
 * result, and the socket will not say so again. */
static void drain_notifies(PGconn *c)
{
	PGnotify *note;
	while ((note = PQnotifies(c))) {
		on_notify(note->extra);
		PQfreemem(note);
	}
}

static void *listener_main(void *arg)
{
	(void)arg;
	uint64_t next_reap = now_ms() + SW_JOBS_REAP_MS;
	uint64_t next_cancel_poll = now_ms() + SW_JOBS_POLL_MS;
	unsigned backoff = BACKOFF_MIN_MS;
	char self[37];
	while (!listener_should_exit()) {
		pthread_mutex_lock(&J.lock);
		PGconn *c = J.lconn;
		memcpy(self, J.worker_id, sizeof(self));
		pthread_mutex_unlock(&J.lock);
		if (!c) {
			struct pollfd pw = { .fd = J.wake_fd, .events = POLLIN };
			poll(&pw, 1, (int)backoff);
			drain_wake_fd();
			if (listener_should_exit())
				break;
			char err[512];
			if (worker_register(err, sizeof(err)) < 0) {
				backoff = SW_MIN(backoff * 2, BACKOFF_MAX_MS);
				continue;
			}
			backoff = BACKOFF_MIN_MS;
			next_reap = now_ms() + SW_JOBS_REAP_MS;
			continue;
		}
		if (PQstatus(c) != CONNECTION_OK || PQsocket(c) < 0) {
			worker_lost();
			continue;
		}
		drain_notifies(c);
		uint64_t now = now_ms();
		/* Cancels are polled for only while a deployment runs (run_job
		 * wakes this thread when one starts): at rest it wakes only to
		 * reap. */
		uint64_t until = deployment_running() ? SW_MIN(next_reap, next_cancel_poll) : next_reap;
		int timeout = until > now ? (int)(until - now) : 0;
		pthread_mutex_lock(&J.lock);
		if (J.cancel_pending)
			timeout = 0;
		pthread_mutex_unlock(&J.lock);
		struct pollfd pf[2] = { { .fd = PQsocket(c), .events = POLLIN },
					{ .fd = J.wake_fd, .events = POLLIN } };
		int n = poll(pf, 2, timeout);
		if (n < 0 && errno != EINTR) {
			worker_lost();
			continue;
		}
		if (n > 0 && (pf[1].revents & POLLIN))
			drain_wake_fd();
		if (n > 0 && (pf[0].revents & (POLLIN | POLLERR | POLLHUP))) {
			if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK) {
				worker_lost();
				continue;
			}
			drain_notifies(c);
		}
		now = now_ms();
		if (now >= next_reap) {
			reap(c, self);
			if (PQstatus(c) != CONNECTION_OK) {
				worker_lost();
				continue;
			}
			next_reap = now + SW_JOBS_REAP_MS;
		}
		pthread_mutex_lock(&J.lock);
		bool cancel = J.cancel_pending;
		J.cancel_pending = false;
		pthread_mutex_unlock(&J.lock);
		if (now >= next_cancel_poll) {
			cancel = true;
			next_cancel_poll = now + SW_JOBS_POLL_MS;
		}
		if (cancel && deployment_running())
			check_cancels(c, self);
	}
	/* Once every runner has returned the row goes too (its lock goes
	 * with the connection); a runner still busy leaves it to a reaper. */
	pthread_mutex_lock(&J.lock);
	PGconn *c = J.lconn;
	J.lconn = NULL;
	J.registered = false;
	bool idle = J.alive == 0;
	char id[37];
	memcpy(id, J.worker_id, sizeof(id));
	pthread_mutex_unlock(&J.lock);
	if (c && idle) {
		const char *p[1] = { id };
		PQclear(exec(c, &sw_db_stmt_worker_unregister, p, PGRES_COMMAND_OK, NULL, 0));
	}
	PQfinish(c);
	return NULL;
}

/* ---- runners ---- */

static const struct sw_job_kind *find_kind(const char *kind)
{
	for (size_t i = 0; i < J.nkinds; i++)
		if (J.kinds[i].kind && strcmp(J.kinds[i].kind, kind) == 0)
			return &J.kinds[i];
	return NULL;
}

/* Settles the job, retrying (a new connection each time) until it is
 * recorded or the process stops; a job left RUNNING is the next start's
 * reaper's. */
static void finish(PGconn **conn, const struct sw_job *job, bool ok, const char *error)
{
	unsigned backoff = BACKOFF_MIN_MS, refused = 0;
	const char *p[3] = { job->id, ok ? "t" : "f", error };
	for (;;) {
		char err[512];
		if (*conn) {
			settle_connection(*conn);
			PGresult *res = exec(*conn, &sw_db_stmt_job_finish, p, PGRES_TUPLES_OK, err,
					     sizeof(err));
			if (res) {
				sw_log_info("jobs: job ended id=%s kind=%s target=%s status=%s", job->id,
					    job->kind, job->target_id,
					    PQntuples(res) ? PQgetvalue(res, 0, 0) : "?");
				PQclear(res);
				return;
			}
			sw_log_warn("jobs: recording the end of job %s failed: %s", job->id, err);
			/* Refused with the connection up: a deadlock or a
			 * serialization failure passes on a retry; anything else
			 * would not. */
			if (PQstatus(*conn) == CONNECTION_OK && ++refused >= 3)
				return;
			if (PQstatus(*conn) != CONNECTION_OK) {
				PQfinish(*conn);
				*conn = NULL;
			}
		}
		pthread_mutex_lock(&J.lock);
		bool stop = J.stopping;
		if (!stop)
			cond_wait_ms(&J.exited_cond, backoff);
		pthread_mutex_unlock(&J.lock);
		if (stop)
			return;
		backoff = SW_MIN(backoff * 2, BACKOFF_MAX_MS);
		if (!*conn)
			*conn = connect_db();
	}
}

static void run_job(struct runner *r, PGconn **conn, const PGresult *res, const char *worker)
{
	struct sw_job job = { 0 };
	snprintf(job.id, sizeof(job.id), "%s", PQgetvalue(res, 0, SW_DB_JOB_ID));
	snprintf(job.organization_id, sizeof(job.organization_id), "%s",
		 PQgetvalue(res, 0, SW_DB_JOB_ORGANIZATION_ID));
	snprintf(job.queue, sizeof(job.queue), "%s", PQgetvalue(res, 0, SW_DB_JOB_QUEUE));
	snprintf(job.kind, sizeof(job.kind), "%s", PQgetvalue(res, 0, SW_DB_JOB_KIND));
	snprintf(job.target_type, sizeof(job.target_type), "%s",
		 PQgetvalue(res, 0, SW_DB_JOB_TARGET_TYPE));
	snprintf(job.target_id, sizeof(job.target_id), "%s", PQgetvalue(res, 0, SW_DB_JOB_TARGET_ID));
	job.payload = PQgetvalue(res, 0, SW_DB_JOB_PAYLOAD);
	job.conn = *conn;
	job.worker_id = worker;
	job.stop = &r->stop;

	pthread_mutex_lock(&J.lock);
	r->busy = true;
	r->q->busy++;
	pthread_cond_broadcast(&r->q->cond); /* the queue's next runner joins in */
	r->deployment = strncmp(job.kind, "deployment.", 11) == 0;
	memcpy(r->target_id, job.target_id, sizeof(r->target_id));
	/* A stop that came between the claim and here still counts (a
	 * continuation claimed while draining runs on). */
	r->interrupted = (J.stopping && !J.draining) || !J.registered;
	__atomic_store_n(&r->stop, r->interrupted, __ATOMIC_RELAXED);
	bool deployment = r->deployment;
	pthread_mutex_unlock(&J.lock);
	if (deployment)
		wake_listener(); /* its cancel poll resumes */

	sw_log_info("jobs: job started id=%s kind=%s target=%s", job.id, job.kind, job.target_id);
	char *err = calloc(1, ERR_MAX);
	int rc;
	const struct sw_job_kind *k = find_kind(job.kind);
	if (!err) {
		rc = -ENOMEM;
	} else if (!k) {
		snprintf(err, ERR_MAX, "no runner for %s", job.kind);
		rc = -ENOSYS;
	} else {
		rc = k->run(&job, k->ctx, err, ERR_MAX);
	}
	if (rc != 0 && err && !err[0])
		snprintf(err, ERR_MAX, "the job failed (%s)", strerror(rc < 0 ? -rc : rc));

	pthread_mutex_lock(&J.lock);
	bool interrupted = r->interrupted;
	pthread_mutex_unlock(&J.lock);
	/* The handler may have used the connection: it is ours again. */
	if (*conn && PQstatus(*conn) != CONNECTION_OK) {
		PQfinish(*conn);
		*conn = connect_db();
	}
	finish(conn, &job, rc == 0,
	       rc == 0 ? NULL : interrupted ? NULL : err ? err : "the job failed (out of memory)");
	free(err);

	pthread_mutex_lock(&J.lock);
	r->busy = false;
	r->q->busy--;
	r->deployment = false;
	r->target_id[0] = '\0';
	__atomic_store_n(&r->stop, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&J.lock);
}

/* While a graceful stop drains, a build this worker finished in its window
 * is deployed in it too: the runner that built takes the deploy step
 * itself at once (any runner runs any kind), so there is no moment when
 * the deployment waits with no runner on it. */
static void run_continuations(struct runner *r, PGconn **conn, const char *worker)
{
	for (;;) {
		pthread_mutex_lock(&J.lock);
		bool drain = J.stopping && J.draining && J.registered;
		pthread_mutex_unlock(&J.lock);
		if (!drain || !*conn)
			return;
		const char *p[2] = { "deploy", worker };
		char err[512] = "";
		PGresult *res = exec(*conn, &sw_db_stmt_job_claim_continuation, p, PGRES_TUPLES_OK, err,
				     sizeof(err));
		if (!res || PQntuples(res) != 1) {
			if (!res && err[0])
				sw_log_warn("jobs: claiming a deploy step while stopping failed: %s", err);
			PQclear(res);
			return;
		}
		run_job(r, conn, res, worker);
		PQclear(res);
	}
}

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	struct queue *q = r->q;
	PGconn *conn = NULL;
	unsigned backoff = BACKOFF_MIN_MS;
	pthread_mutex_lock(&J.lock);
	while (!J.stopping) {
		if (!J.registered) {
			cond_wait_ms(&q->cond, 1000);
			continue;
		}
		/* On demand: a queue's first runner claims from the start; its
		 * runner of rank k only while k of them are busy, and it keeps
		 * no connection otherwise, so an idle process has one claiming
		 * connection per queue. */
		if (r->rank > q->busy) {
			if (conn) {
				pthread_mutex_unlock(&J.lock);
				PQfinish(conn);
				conn = NULL;
				pthread_mutex_lock(&J.lock);
				continue;
			}
			/* Nothing to poll for: woken when the queue's busy count
			 * grows (run_job), at registration and at stop. */
			pthread_cond_wait(&q->cond, &J.lock);
			continue;
		}
		uint64_t seq = q->wake_seq;
		char worker[37];
		memcpy(worker, J.worker_id, sizeof(worker));
		pthread_mutex_unlock(&J.lock);

		if (!conn)
			conn = connect_db();
		PGresult *res = NULL;
		char err[512] = "";
		if (conn) {
			const char *p[2] = { q->name, worker };
			res = exec(conn, &sw_db_stmt_job_claim, p, PGRES_TUPLES_OK, err, sizeof(err));
			if (!res && PQstatus(conn) != CONNECTION_OK) {
				PQfinish(conn);
				conn = NULL;
			}
		}
		if (res && PQntuples(res) == 1) {
			backoff = BACKOFF_MIN_MS;
			run_job(r, &conn, res, worker);
			PQclear(res);
			run_continuations(r, &conn, worker);
			pthread_mutex_lock(&J.lock);
			continue;
		}
		bool failed = !res;
		PQclear(res);
		if (failed && err[0])
			sw_log_warn("jobs: claiming from queue %s failed: %s", q->name, err);
		pthread_mutex_lock(&J.lock);
		if (failed) {
			cond_wait_ms(&q->cond, backoff);
			backoff = SW_MIN(backoff * 2, BACKOFF_MAX_MS);
		} else if (q->wake_seq == seq && !J.stopping) {
			backoff = BACKOFF_MIN_MS;
			cond_wait_ms(&q->cond, SW_JOBS_POLL_MS);
		}
	}
	pthread_mutex_unlock(&J.lock);
	PQfinish(conn);
	pthread_mutex_lock(&J.lock);
	r->exited = true;
	J.alive--;
	pthread_cond_broadcast(&J.exited_cond);
	pthread_mutex_unlock(&J.lock);
	return NULL;
}

/* ---- the interface ---- */

bool sw_jobs_cancel_requested(struct sw_job *job)
{
	if (__atomic_load_n(job->stop, __ATOMIC_RELAXED))
		return true;
	if (strncmp(job->kind, "deployment.", 11) != 0 || !job->conn)
		return false;
	/* Inside a transaction of the handler's too: a read changes nothing. */
	const char *p[1] = { job->target_id };
	PGresult *res = exec(job->conn, &sw_db_stmt_job_cancel_requested, p, PGRES_TUPLES_OK, NULL, 0);
	if (!res)
		return false; /* unknown: the flag decides, and the next look */
	bool cancel = PQntuples(res) == 0 || strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (cancel)
		__atomic_store_n(job->stop, true, __ATOMIC_RELAXED);
	return cancel;
}

const char *sw_jobs_worker_id(void)
{
	return J.worker_id;
}

static void release_state(void)
{
	free(J.kinds);
	J.kinds = NULL;
	J.nkinds = 0;
	free(J.conninfo);
	J.conninfo = NULL;
	if (J.wake_fd >= 0)
		close(J.wake_fd);
	J.wake_fd = -1;
}

int sw_jobs_start(const char *conninfo, const struct sw_job_kind *kinds, size_t n, char *err,
		  size_t errlen)
{
	pthread_mutex_lock(&J.lock);
	if (J.running) {
		pthread_mutex_unlock(&J.lock);
		snprintf(err, errlen, "the job runners are running already");
		return -EALREADY;
	}
	if (J.alive) {
		pthread_mutex_unlock(&J.lock);
		snprintf(err, errlen, "handlers of a previous run have not returned");
		return -EBUSY;
	}
	pthread_mutex_unlock(&J.lock);
	release_state(); /* what a run that outlived its stop kept for its threads */
	/* Threads of a previous run that outlived its stop have exited now. */
	for (unsigned i = 0; i < J.nrunners; i++)
		if (!J.runners[i].joined)
			pthread_join(J.runners[i].thread, NULL);
	J.nrunners = 0;
	J.running = true;
	J.stopping = false;
	J.listener_exit = false;
	J.registered = false;
	J.cancel_pending = false;
	J.worker_id[0] = '\0';
	int r = -ENOMEM;
	J.conninfo = strdup(conninfo);
	J.kinds = calloc(n ? n : 1, sizeof(*J.kinds));
	if (!J.conninfo || !J.kinds) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (n)
		memcpy(J.kinds, kinds, n * sizeof(*kinds));
	J.nkinds = n;
	J.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (J.wake_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	static bool conds_ready;
	if (!conds_ready) {
		for (unsigned i = 0; i < QUEUES; i++)
			if ((r = cond_init_monotonic(&J.queues[i].cond)) < 0)
				goto fail;
		if ((r = cond_init_monotonic(&J.exited_cond)) < 0)
			goto fail;
		conds_ready = true;
	}
	for (unsigned i = 0; i < QUEUES; i++) {
		J.queues[i].name = queue_names[i];
		J.queues[i].concurrency = queue_concurrency[i];
		J.queues[i].wake_seq = 0;
		J.queues[i].busy = 0;
	}
	r = worker_register(err, errlen);
	if (r < 0)
		goto fail;

	/* The threads never take signals: the main thread waits for them. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_mutex_lock(&J.lock);
	for (unsigned qi = 0; qi < QUEUES; qi++) {
		for (unsigned k = 0; k < J.queues[qi].concurrency; k++) {
			struct runner *rn = &J.runners[J.nrunners];
			*rn = (struct runner){ .q = &J.queues[qi], .rank = k };
			if (pthread_create(&rn->thread, NULL, runner_main, rn) != 0) {
				sw_log_error("jobs: cannot start a runner of queue %s", J.queues[qi].name);
				continue;
			}
			J.alive++;
			J.nrunners++;
		}
	}
	pthread_mutex_unlock(&J.lock);
	int lr = pthread_create(&J.listener, NULL, listener_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (lr != 0) {
		snprintf(err, errlen, "cannot start the worker thread");
		pthread_mutex_lock(&J.lock);
		J.stopping = true;
		wake_all_queues();
		pthread_mutex_unlock(&J.lock);
		for (unsigned i = 0; i < J.nrunners; i++) {
			pthread_join(J.runners[i].thread, NULL);
			J.runners[i].joined = true;
		}
		PQfinish(J.lconn);
		J.lconn = NULL;
		r = -EAGAIN;
		goto fail;
	}
	sw_log_info("jobs: runners started build=%u deploy=%u lifecycle=%u (beyond the first, on demand) kinds=%zu",
		    queue_concurrency[0], queue_concurrency[1], queue_concurrency[2], n);
	return 0;

fail:
	release_state();
	J.running = false;
	return r;
}

void sw_jobs_stop(unsigned timeout_ms)
{
	if (!J.running)
		return;
	pthread_mutex_lock(&J.lock);
	/* Running work first gets the window to finish (its deploy step
	 * included: run_continuations()); what is still running when the
	 * window's last part begins is asked to stop, cleans up, and is
	 * handed back to the queue (steward_job_abandon 'stopped', 0019). */
	J.stopping = true;
	J.draining = true;
	wake_all_queues();
	pthread_cond_broadcast(&J.exited_cond);
	uint64_t start = now_ms(), deadline = start + timeout_ms;
	uint64_t interrupt_at = deadline - SW_MIN(timeout_ms / 2, SW_JOBS_STOP_GRACE_MS);
	bool interrupted = false;
	while (J.alive > 0) {
		uint64_t now = now_ms();
		if (now >= deadline)
			break;
		if (!interrupted && now >= interrupt_at) {
			J.draining = false;
			interrupt_all();
			interrupted = true;
			sw_log_info("jobs: the work still running is stopped and handed back to the queue");
		}
		uint64_t until = interrupted ? deadline : interrupt_at;
		cond_wait_ms(&J.exited_cond, (unsigned)SW_MIN(until - now, 1000));
	}
	J.draining = false;
	unsigned left = J.alive;
	J.listener_exit = true;
	pthread_mutex_unlock(&J.lock);
	wake_listener();
	pthread_join(J.listener, NULL);
	for (unsigned i = 0; i < J.nrunners; i++) {
		struct runner *r = &J.runners[i];
		pthread_mutex_lock(&J.lock);
		bool exited = r->exited;
		pthread_mutex_unlock(&J.lock);
		if (exited) {
			pthread_join(r->thread, NULL);
			r->joined = true;
		}
	}
	if (left) {
		/* Their jobs stay RUNNING for the next start's reaper; their
		 * state (kinds, conninfo) stays allocated for them. */
		sw_log_warn("jobs: %u job(s) still running at the shutdown deadline", left);
		J.running = false;
		return;
	}
	release_state();
	J.worker_id[0] = '\0';
	J.running = false;
}
