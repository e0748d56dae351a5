/* Statements of the deployment pipeline's runners (src/deploy) and of the
 * runtime routes (src/api/runtime.c): statements_runtime.c.
 *
 * The runners' statements run on a runner's own blocking connection
 * (PQexecParams through sw_pipeline_exec(), src/deploy/pipeline_internal.h);
 * they are registered all the same, so that every connection of the pool
 * prepares them at start-up and a broken one fails there, not mid-deploy.
 * Parameters are always bound, in the order each comment gives. */
#ifndef STEWARD_DB_STATEMENTS_RUNTIME_H
#define STEWARD_DB_STATEMENTS_RUNTIME_H

#include "steward/db/statements.h"

/* Columns of an application as the runners read it (APP_COLUMNS in the .c),
 * counted from the first application column of a result. */
enum sw_db_rt_app_col {
	SW_DB_RT_APP_ID,
	SW_DB_RT_APP_ORGANIZATION_ID,
	SW_DB_RT_APP_NAME,
	SW_DB_RT_APP_DOCKERFILE_PATH,   /* NULL: detect */
	SW_DB_RT_APP_BUILD_CONTEXT,
	SW_DB_RT_APP_START_COMMAND,     /* a JSON array of strings, or NULL */
	SW_DB_RT_APP_PORT,
	SW_DB_RT_APP_HEALTH_PATH,
	SW_DB_RT_APP_HEALTH_STATUS,
	SW_DB_RT_APP_HEALTH_TIMEOUT,    /* seconds */
	SW_DB_RT_APP_HEALTH_RETRIES,
	SW_DB_RT_APP_STRATEGY,          /* RECREATE or BLUE_GREEN */
	SW_DB_RT_APP_RETENTION,
	SW_DB_RT_APP_CPU_MILLICORES,    /* NULL: no limit */
	SW_DB_RT_APP_MEMORY_MB,         /* NULL: no limit */
	SW_DB_RT_APP_STATUS,
	SW_DB_RT_APP_SERVER_IS_LOCAL,   /* "t" / "f" */
	SW_DB_RT_APP_GIT_URL,           /* NULL: no git source */
	SW_DB_RT_APP_GIT_BRANCH,
	SW_DB_RT_APP_GIT_PUBLIC_KEY,
	SW_DB_RT_APP_GIT_PRIVATE_KEY_SEALED, /* bound to "deploy-key:<application id>" */
	SW_DB_RT_APP_GIT_SSH_HOST_KEY,  /* "<type> SHA256:...", NULL: learn on the next fetch */
	SW_DB_RT_APP_GIT_CREDENTIAL_ID, /* NULL: no credential (then the rest are NULL) */
	SW_DB_RT_APP_GIT_CREDENTIAL_PROVIDER,
	SW_DB_RT_APP_GIT_CREDENTIAL_USERNAME, /* NULL: the provider's convention */
	SW_DB_RT_APP_GIT_CREDENTIAL_TOKEN_SEALED, /* bound to "git-credential:<id>" */
	SW_DB_RT_APP_SERVER_ID,
	SW_DB_RT_APP_NCOLUMNS
};

/* Columns of sw_db_stmt_rt_deployment; the application's follow
 * (SW_DB_RT_DEPLOYMENT_APP + enum sw_db_rt_app_col). */
enum sw_db_rt_deployment_col {
	SW_DB_RT_DEPLOYMENT_ID,
	SW_DB_RT_DEPLOYMENT_NUMBER,
	SW_DB_RT_DEPLOYMENT_STATUS,
	SW_DB_RT_DEPLOYMENT_TRIGGER,
	SW_DB_RT_DEPLOYMENT_REQUESTED_REF, /* NULL: the source's branch */
	SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH,  /* UPLOAD */
	SW_DB_RT_DEPLOYMENT_ROLLBACK_OF,   /* ROLLBACK */
	SW_DB_RT_DEPLOYMENT_ROLLBACK_NUMBER,
	SW_DB_RT_DEPLOYMENT_IMAGE_TAG,
	SW_DB_RT_DEPLOYMENT_CANCEL_REQUESTED,
	SW_DB_RT_DEPLOYMENT_CREATED_BY,
	SW_DB_RT_DEPLOYMENT_ERROR_MESSAGE, /* NULL unless it failed */
	SW_DB_RT_DEPLOYMENT_PHASE,
	SW_DB_RT_DEPLOYMENT_APP
};

/* Columns of sw_db_stmt_rt_serving (zero or one row). */
enum sw_db_rt_serving_col {
	SW_DB_RT_SERVING_ID,
	SW_DB_RT_SERVING_NUMBER,
	SW_DB_RT_SERVING_IMAGE_TAG,
	SW_DB_RT_SERVING_PORT,   /* NULL before migration 0015's column was filled */
	SW_DB_RT_SERVING_COLOUR, /* NULL: RECREATE */
};

/* Columns of sw_db_stmt_rt_service. */
enum sw_db_rt_service_col {
	SW_DB_RT_SERVICE_ID,
	SW_DB_RT_SERVICE_NAME,
	SW_DB_RT_SERVICE_KIND,
	SW_DB_RT_SERVICE_VERSION,
	SW_DB_RT_SERVICE_CREDENTIALS_SEALED, /* bound to "service:<id>" */
	SW_DB_RT_SERVICE_SERVER_IS_LOCAL,
};

/* ---- runners ---- */
extern const struct sw_db_stmt sw_db_stmt_rt_deployment;
extern const struct sw_db_stmt sw_db_stmt_rt_application;
extern const struct sw_db_stmt sw_db_stmt_rt_variables;
extern const struct sw_db_stmt sw_db_stmt_rt_volumes;
extern const struct sw_db_stmt sw_db_stmt_rt_hostnames;
extern const struct sw_db_stmt sw_db_stmt_rt_begin;
extern const struct sw_db_stmt sw_db_stmt_rt_phase;
extern const struct sw_db_stmt sw_db_stmt_rt_commit;
/* ($1 application, $2 repository URL fetched, $3 "<type> SHA256:...") ->
 * no row: pins the ssh host key a fetch met when none was pinned and the
 * URL is unchanged. */
extern const struct sw_db_stmt sw_db_stmt_rt_host_key_learned;
/* ($1 credential) -> no row: its lastUsedAt becomes now. */
extern const struct sw_db_stmt sw_db_stmt_rt_credential_used;
extern const struct sw_db_stmt sw_db_stmt_rt_built;
extern const struct sw_db_stmt sw_db_stmt_rt_started;
extern const struct sw_db_stmt sw_db_stmt_rt_finish;
extern const struct sw_db_stmt sw_db_stmt_rt_log_progress;
/* ($1 deployment) -> one row: the bytes of its log stored in
 * deployment_log_chunks (migration 0027), where the next chunk starts. */
extern const struct sw_db_stmt sw_db_stmt_rt_log_stored;
/* ($1 deployment, $2 offset, $3 the bytes, base64) -> the chunk stored
 * (a chunk already there at that offset is kept). */
extern const struct sw_db_stmt sw_db_stmt_rt_log_chunk;
extern const struct sw_db_stmt sw_db_stmt_rt_serving;
extern const struct sw_db_stmt sw_db_stmt_rt_retained;
extern const struct sw_db_stmt sw_db_stmt_rt_app_busy;
extern const struct sw_db_stmt sw_db_stmt_rt_lock;
extern const struct sw_db_stmt sw_db_stmt_rt_unlock;
extern const struct sw_db_stmt sw_db_stmt_rt_application_status;
extern const struct sw_db_stmt sw_db_stmt_rt_service;
extern const struct sw_db_stmt sw_db_stmt_rt_server; /* columns: id, is_local */
extern const struct sw_db_stmt sw_db_stmt_rt_service_status;
extern const struct sw_db_stmt sw_db_stmt_rt_backup_fail;

/* ---- routes ---- */

/* Columns of sw_db_stmt_runtime_application and sw_db_stmt_runtime_server. */
enum sw_db_runtime_target_col {
	SW_DB_RUNTIME_SERVER_ID,
	SW_DB_RUNTIME_SERVER_IS_LOCAL,
	SW_DB_RUNTIME_APPLICATION_IDS, /* a JSON array of the application ids on it */
	SW_DB_RUNTIME_HOSTNAMES,       /* a JSON array of their verified hostnames */
	SW_DB_RUNTIME_SERVER_STATUS,   /* sw_db_stmt_runtime_server only: PENDING, ONLINE, OFFLINE */
};
extern const struct sw_db_stmt sw_db_stmt_runtime_application;
extern const struct sw_db_stmt sw_db_stmt_runtime_server;
/* ($1 organization, $2 application) -> zero or one row, enum
 * sw_db_runtime_logs_col: what GET /applications/:id/logs needs (its
 * server, and its variables' sealed values to scrub the lines with). The
 * first two columns are those of enum sw_db_runtime_target_col. */
enum sw_db_runtime_logs_col {
	SW_DB_RUNTIME_LOGS_SERVER_ID = SW_DB_RUNTIME_SERVER_ID,
	SW_DB_RUNTIME_LOGS_SERVER_IS_LOCAL = SW_DB_RUNTIME_SERVER_IS_LOCAL,
	SW_DB_RUNTIME_LOGS_VARIABLES, /* a JSON array of [key, value_sealed] */
};
extern const struct sw_db_stmt sw_db_stmt_runtime_logs;

#endif
