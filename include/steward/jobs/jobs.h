/* The job runners (src/jobs): work recorded in PostgreSQL's jobs table
 * (migration 0007), claimed with FOR UPDATE SKIP LOCKED, run on runner
 * threads of their own (never an io loop, never the worker pool).
 *
 * Queues and their concurrency in one process: build 1, deploy 2,
 * lifecycle 4. Runners wake on NOTIFY steward_jobs (payload: the queue) and
 * poll every SW_JOBS_POLL_MS as a fallback. Each runner thread has its own
 * blocking libpq connection.
 *
 * The process is a worker (table workers, migration 0012): it holds the
 * advisory lock steward_worker_key(id) on a dedicated connection for its
 * whole life. At start-up, and every SW_JOBS_REAP_MS, deployments in flight
 * whose worker's lock is free become FAILED ("the worker restarted") and
 * running jobs of dead workers are settled; so two processes never run one
 * job twice, and a killed process loses nothing. */
#ifndef STEWARD_JOBS_H
#define STEWARD_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <libpq-fe.h>

#define SW_JOBS_POLL_MS 2000
#define SW_JOBS_REAP_MS 10000
/* Of a graceful stop's window, the last part (at most this) is left for
 * the work still running to stop and hand itself back to the queue. */
#define SW_JOBS_STOP_GRACE_MS 5000

/* A claimed job, as its runner sees it. */
struct sw_job {
	char id[37];
	char organization_id[37];
	char queue[16];
	char kind[64];          /* "deployment.build", "application.restart", ... */
	char target_type[32];
	char target_id[37];
	const char *payload;    /* JSON text */
	PGconn *conn;           /* the runner's own connection (blocking use only) */
	const char *worker_id;  /* this process */
	/* Set by another thread when the job should stop (cancel, shutdown);
	 * handlers poll it between steps. */
	volatile bool *stop;
};

/* A handler runs one job to the end: 0 (SUCCEEDED) or -errno with a
 * sentence in err (FAILED, error_message). It may block. */
typedef int (*sw_job_handler)(struct sw_job *job, void *ctx, char *err, size_t errlen);

struct sw_job_kind {
	const char *kind;
	sw_job_handler run;
	void *ctx;
};

/* Starts the runners against conninfo with the given handlers (copied; the
 * array may be temporary, the strings and ctx it points at must outlive
 * the runners). A job of a kind without a handler fails with "no runner
 * for <kind>". Before returning it registers the worker (its lock held on
 * a connection of its own) and reaps once, so that deployments left in
 * flight by a dead process are FAILED before anything is served. Call
 * once at a time (-EALREADY while running, -EBUSY while handlers of a
 * previous run have not returned). 0 or -errno with a message in err.
 *
 * How a job ends (0013_jobs_runtime.sql, steward_job_finish): a handler's
 * 0 is SUCCEEDED, -errno FAILED with err as error_message (empty err: a
 * generic sentence). For deployment jobs the deployment is settled too
 * when the handler left it in flight: FAILED with err; CANCELLED when its
 * cancel was asked; after a build, the deploy job is queued (so a build
 * handler need not queue it); after a deploy, SUCCEEDED. A handler that fails while its worker
 * stops (shutdown, or the worker's lock lost) hands its deployment back to
 * the queue (QUEUED again, its job too); a lifecycle job is then queued
 * again once. */
int sw_jobs_start(const char *conninfo, const struct sw_job_kind *kinds, size_t n, char *err,
		  size_t errlen);
/* A graceful stop within timeout_ms: stops claiming (but the deploy step
 * of a build this worker finished, which the runner that built runs at
 * once), lets running handlers finish until the last part of the window
 * (at most SW_JOBS_STOP_GRACE_MS, half of it when shorter), then asks the
 * rest to stop (job->stop): they clean up and their deployments go back
 * to the queue, QUEUED, for the next start or another replica. Returns at
 * timeout_ms at the latest; jobs still running then are left to the
 * reaper of the next start (a killed worker's: FAILED). */
void sw_jobs_stop(unsigned timeout_ms);
/* This process's worker id ("" before sw_jobs_start). It changes only
 * when the connection holding the worker's lock was lost and the worker
 * registered again. */
const char *sw_jobs_worker_id(void);

/* For handlers of deployment jobs, between steps: true when the job must
 * stop, because its stop flag is set (cancel noticed by the worker,
 * shutdown) or because the deployment's cancel was asked (read now on
 * job->conn; then the flag is set too) or the deployment is gone. A
 * handler that sees true cleans up what it started and returns (any
 * value: the deployment then ends CANCELLED when its cancel was asked).
 * For other jobs: the stop flag alone. Inner loops that cannot afford a
 * query read the flag itself with __atomic_load_n(job->stop,
 * __ATOMIC_RELAXED); the worker sets it when a cancel is announced. */
bool sw_jobs_cancel_requested(struct sw_job *job);

#endif
