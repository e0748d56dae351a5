/* Statements of deployments (tables in migration 0012, functions in 0013)
 * and of the job runners. What moves a deployment between states is
 * written once, in SQL (0013's header says who moves what); these are the
 * calls. */
#include "db/sql.h"
#include "steward/db/statements_deployments.h"

/* The Deployment object of a row of alias d (enum sw_db_deployment_col). */
#define DEPLOYMENT_COLUMNS                                                                      \
	"d.id, d.application_id, d.number, d.status, d.phase, d.trigger, d.requested_ref,"      \
	" d.git_ref, d.commit_sha, d.commit_message, d.commit_author, d.image_tag, d.strategy," \
	" d.log_byte_count, d.log_tail, d.error_message, d.rollback_of, d.cancel_requested,"    \
	" d.created_by, " SW_SQL_TS("d.created_at") ", " SW_SQL_TS("d.started_at") ","          \
	" " SW_SQL_TS("d.finished_at") ", " SW_SQL_TS("d.updated_at") ","                        \
	" (extract(epoch FROM d.finished_at - d.started_at) * 1000)::bigint,"                   \
	" " SW_SQL_US("d.created_at")

const struct sw_db_stmt sw_db_stmt_deployment_source = {
	.name = "deployment_source",
	.sql = "SELECT a.source_kind,"
	       " EXISTS (SELECT 1 FROM git_sources g WHERE g.application_id = a.id)"
	       " FROM applications a WHERE a.organization_id = $1::uuid AND a.id = $2::uuid",
	.nparams = 2,
};

/* The audit record of a deployment asked for: its number, trigger,
 * application and the deployment it rolls back, from the columns of
 * DEPLOYMENT_COLUMNS (c1 application, c2 number, c5 trigger, c16
 * rollback_of: enum sw_db_deployment_col). */
#define DEPLOYMENT_AUDIT_META                                                                   \
	"jsonb_build_object('number', c2::bigint, 'trigger', c5, 'applicationId', c1)"          \
	" || CASE WHEN c16 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('rollbackOf', c16) END"
#define DEPLOYMENT_AUDITED(n, ...)                                                              \
	(&(struct sw_db_audited){ .id_col = SW_DB_DEPLOYMENT_ID, .name_col = -1, .ncols = (n),  \
				  .metadata_sql = DEPLOYMENT_AUDIT_META, __VA_ARGS__ })

const struct sw_db_stmt sw_db_stmt_deployment_create = {
	.name = "deployment_create",
	.sql = "SELECT " DEPLOYMENT_COLUMNS
	       " FROM steward_deployment_create($1::uuid, $2::uuid, $3, $4, $5, NULL, $6::uuid) d",
	.nparams = 6,
	.audited = DEPLOYMENT_AUDITED(SW_DB_DEPLOYMENT_ROLLBACK_OF + 1),
};

const struct sw_db_stmt sw_db_stmt_deployment_get = {
	.name = "deployment_get",
	.sql = "SELECT " DEPLOYMENT_COLUMNS " FROM deployments d"
	       " WHERE d.organization_id = $1::uuid AND d.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

/* Filters: applicationId, status, trigger (exact). */
const struct sw_db_stmt sw_db_stmt_deployments_list = {
	.name = "deployments_list",
	.sql = "SELECT " DEPLOYMENT_COLUMNS " FROM deployments d"
	       " WHERE d.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::uuid IS NULL OR d.application_id = $7::uuid)"
	       " AND ($8::text IS NULL OR d.status = $8)"
	       " AND ($9::text IS NULL OR d.trigger = $9)" SW_SQL_PAGE("d"),
	.nparams = 9,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_deployment_cancel = {
	.name = "deployment_cancel",
	.sql = "SELECT " DEPLOYMENT_COLUMNS ", c.cancelled, d.archive_path"
	       " FROM steward_deployment_cancel($1::uuid, $2::uuid) c,"
	       " LATERAL (SELECT (c.deployment).*) d",
	.nparams = 2,
	.audited = DEPLOYMENT_AUDITED(SW_DB_DEPLOYMENT_CANCELLED + 1,
		.action_sql = "CASE WHEN c25 THEN 'deployment.cancelled'"
			      " ELSE 'deployment.cancel_requested' END"),
};

const struct sw_db_stmt sw_db_stmt_deployment_rollback = {
	.name = "deployment_rollback",
	.sql = "SELECT " DEPLOYMENT_COLUMNS " FROM deployments s CROSS JOIN LATERAL"
	       " steward_deployment_create(s.organization_id, s.application_id, 'ROLLBACK', NULL,"
	       " NULL, s.id, $3::uuid) d"
	       " WHERE s.organization_id = $1::uuid AND s.id = $2::uuid",
	.nparams = 3,
	.audited = DEPLOYMENT_AUDITED(SW_DB_DEPLOYMENT_ROLLBACK_OF + 1),
};

const struct sw_db_stmt sw_db_stmt_deployment_log_read = {
	.name = "deployment_log_read",
	.sql = "WITH c AS (SELECT off, data FROM deployment_log_chunks WHERE deployment_id = $1::uuid)"
	       " SELECT (SELECT coalesce(max(off + length(data)), 0) FROM c),"
	       " substring((SELECT string_agg(data, ''::bytea ORDER BY off) FROM c"
	       "   WHERE off + length(data) > $2::bigint AND off < $2::bigint + $3::bigint)"
	       "  FROM (SELECT $2::bigint - coalesce(min(off), 0) + 1 FROM c"
	       "   WHERE off + length(data) > $2::bigint)::integer FOR $3::integer)",
	.nparams = 3,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_deployment_source, &sw_db_stmt_deployment_create,
	&sw_db_stmt_deployment_get,    &sw_db_stmt_deployments_list,
	&sw_db_stmt_deployment_cancel, &sw_db_stmt_deployment_rollback,
	&sw_db_stmt_deployment_log_read,
};
const struct sw_db_stmt_group sw_db_deployments_statements = { list, SW_ARRAY_SIZE(list) };

/* ---- the job runners ---- */

const struct sw_db_stmt sw_db_stmt_worker_register = {
	.name = "worker_register",
	.sql = "SELECT steward_worker_register($1, $2::int)",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_worker_heartbeat = {
	.name = "worker_heartbeat",
	.sql = "UPDATE workers SET last_seen_at = now() WHERE id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_worker_unregister = {
	.name = "worker_unregister",
	.sql = "DELETE FROM workers WHERE id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_jobs_reap = {
	.name = "jobs_reap",
	.sql = "SELECT steward_deployments_reap($1::uuid)",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_job_claim = {
	.name = "job_claim",
	.sql = "SELECT id, organization_id, queue, kind, target_type, target_id, payload::text"
	       " FROM steward_job_claim($1, $2::uuid)",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_job_claim_continuation = {
	.name = "job_claim_continuation",
	.sql = "SELECT id, organization_id, queue, kind, target_type, target_id, payload::text"
	       " FROM steward_job_claim($1, $2::uuid, true)",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_job_finish = {
	.name = "job_finish",
	.sql = "SELECT status FROM steward_job_finish($1::uuid, $2::boolean, $3)",
	.nparams = 3,
};

const struct sw_db_stmt sw_db_stmt_job_cancel_requested = {
	.name = "job_cancel_requested",
	.sql = "SELECT cancel_requested FROM deployments WHERE id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_jobs_cancelled = {
	.name = "jobs_cancelled",
	.sql = "SELECT id FROM deployments WHERE worker_id = $1::uuid AND cancel_requested"
	       " AND status IN ('BUILDING', 'DEPLOYING')",
	.nparams = 1,
};
