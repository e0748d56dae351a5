/* Statements of the deployments feature (statements_deployments.c): the
 * routes of src/api/deployments.c (prepared on the pool's connections),
 * and the statements the job runners of src/jobs run on their own
 * blocking connections (never prepared: run with PQexecParams, so they
 * are not in the pool's group). Parameters of the resource statements
 * follow the conventions of src/api/api_internal.h. */
#ifndef STEWARD_DB_STATEMENTS_DEPLOYMENTS_H
#define STEWARD_DB_STATEMENTS_DEPLOYMENTS_H

#include "steward/db/statements.h"

/* Columns of a deployment row (the API's Deployment object). */
enum sw_db_deployment_col {
	SW_DB_DEPLOYMENT_ID,
	SW_DB_DEPLOYMENT_APPLICATION_ID,
	SW_DB_DEPLOYMENT_NUMBER,
	SW_DB_DEPLOYMENT_STATUS,
	SW_DB_DEPLOYMENT_PHASE,
	SW_DB_DEPLOYMENT_TRIGGER,
	SW_DB_DEPLOYMENT_REQUESTED_REF,   /* NULL: the git source's branch (or an upload) */
	SW_DB_DEPLOYMENT_GIT_REF,
	SW_DB_DEPLOYMENT_COMMIT_SHA,
	SW_DB_DEPLOYMENT_COMMIT_MESSAGE,
	SW_DB_DEPLOYMENT_COMMIT_AUTHOR,
	SW_DB_DEPLOYMENT_IMAGE_TAG,
	SW_DB_DEPLOYMENT_STRATEGY,
	SW_DB_DEPLOYMENT_LOG_BYTE_COUNT,  /* a number */
	SW_DB_DEPLOYMENT_LOG_TAIL,
	SW_DB_DEPLOYMENT_ERROR_MESSAGE,
	SW_DB_DEPLOYMENT_ROLLBACK_OF,
	SW_DB_DEPLOYMENT_CANCEL_REQUESTED, /* "t" / "f" */
	SW_DB_DEPLOYMENT_CREATED_BY,
	SW_DB_DEPLOYMENT_CREATED_AT,
	SW_DB_DEPLOYMENT_STARTED_AT,
	SW_DB_DEPLOYMENT_FINISHED_AT,
	SW_DB_DEPLOYMENT_UPDATED_AT,
	SW_DB_DEPLOYMENT_DURATION_MS,     /* a number, NULL until it has ended */
	SW_DB_DEPLOYMENT_US,              /* the cursor's microseconds */
	SW_DB_DEPLOYMENT_COLUMNS,
};

/* ($1 organization, $2 application) -> one row (source_kind 'GIT' or
 * 'UPLOAD', has_git_source "t"/"f") when the application is the
 * organization's. */
extern const struct sw_db_stmt sw_db_stmt_deployment_source;
enum { SW_DB_DEPLOYMENT_SOURCE_KIND, SW_DB_DEPLOYMENT_SOURCE_HAS_GIT };
/* ($1 organization, $2 application, $3 trigger 'MANUAL' | 'UPLOAD', $4
 * requested ref or NULL, $5 archive path or NULL, $6 acting user) -> the
 * new deployment (QUEUED) and its build job, one transaction
 * (steward_deployment_create, 0012): SW404 when the application is not
 * the organization's. */
extern const struct sw_db_stmt sw_db_stmt_deployment_create;
/* Resource conventions: ($1 organization, $2 id, $3 unused). */
extern const struct sw_db_stmt sw_db_stmt_deployment_get;
/* ($1 deployment, $2 from, $3 bytes) -> the stored log's size, then the
 * bytes [from, from + bytes) of it (bytea; NULL when none), from
 * deployment_log_chunks (migration 0027): the log read on a replica
 * without its file. */
extern const struct sw_db_stmt sw_db_stmt_deployment_log_read;
/* Resource conventions; filters $7 applicationId, $8 status, $9 trigger. */
extern const struct sw_db_stmt sw_db_stmt_deployments_list;
/* ($1 organization, $2 id) -> the deployment's columns, then "cancelled"
 * ("t": it ended CANCELLED now; "f": the runner was asked to stop it) and
 * its archive's path (NULL: none). SW404, SW409 DEPLOYMENT_FINISHED
 * (steward_deployment_cancel, 0013). */
extern const struct sw_db_stmt sw_db_stmt_deployment_cancel;
#define SW_DB_DEPLOYMENT_CANCELLED SW_DB_DEPLOYMENT_COLUMNS
#define SW_DB_DEPLOYMENT_ARCHIVE_PATH (SW_DB_DEPLOYMENT_COLUMNS + 1)
/* ($1 organization, $2 deployment, $3 acting user) -> the new ROLLBACK
 * deployment re-applying the image of deployment $2 (no row: not the
 * organization's); SW409 NOT_ROLLBACK_TARGET unless $2 SUCCEEDED with an
 * image kept. */
extern const struct sw_db_stmt sw_db_stmt_deployment_rollback;

extern const struct sw_db_stmt_group sw_db_deployments_statements;

/* ---- the job runners (src/jobs), blocking connections ---- */

/* ($1 hostname, $2 pid) -> the new worker's id; the calling session holds
 * its advisory lock from then on. */
extern const struct sw_db_stmt sw_db_stmt_worker_register;
/* ($1 worker) -> last_seen_at = now(). */
extern const struct sw_db_stmt sw_db_stmt_worker_heartbeat;
/* ($1 worker) -> removes the worker's row (a graceful stop). */
extern const struct sw_db_stmt sw_db_stmt_worker_unregister;
/* ($1 this worker, excluded) -> the number of deployments failed. */
extern const struct sw_db_stmt sw_db_stmt_jobs_reap;
/* ($1 queue, $2 worker) -> zero or one claimed job, columns below. */
extern const struct sw_db_stmt sw_db_stmt_job_claim;
enum sw_db_job_col {
	SW_DB_JOB_ID,
	SW_DB_JOB_ORGANIZATION_ID,
	SW_DB_JOB_QUEUE,
	SW_DB_JOB_KIND,
	SW_DB_JOB_TARGET_TYPE,
	SW_DB_JOB_TARGET_ID,
	SW_DB_JOB_PAYLOAD, /* JSON text */
};
/* ($1 queue, $2 worker) -> zero or one claimed job, columns as job_claim's:
 * only the deploy step of a deployment the worker already runs (its build
 * done). What a worker draining for a graceful stop still takes. */
extern const struct sw_db_stmt sw_db_stmt_job_claim_continuation;
/* ($1 job, $2 ok 't'/'f', $3 error or NULL) -> the job's status. */
extern const struct sw_db_stmt sw_db_stmt_job_finish;
/* ($1 deployment) -> one row, "t" when its cancel was asked (no row: the
 * deployment is gone). */
extern const struct sw_db_stmt sw_db_stmt_job_cancel_requested;
/* ($1 worker) -> ids of the worker's deployments in flight whose cancel
 * was asked. */
extern const struct sw_db_stmt sw_db_stmt_jobs_cancelled;

#endif
