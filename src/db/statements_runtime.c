/* SQL of the deployment pipeline's runners and of the runtime routes
 * (statements_runtime.h). Migration 0015 adds what the runners keep beyond
 * 0012: the port a deployment's version listens on, and the
 * "runtime.recover" job queued whenever an in-flight deployment ends
 * FAILED or CANCELLED (whoever ended it: the runner, or the reaper after a
 * crash). */
#include "steward/db/statements_runtime.h"
#include "steward/db/statements_servers.h"

/* An application as the runners need it: alias a, its server s, its git
 * source g (LEFT JOIN: NULL columns without one). Order: enum
 * sw_db_rt_app_col. */
#define APP_COLUMNS                                                                                \
	" a.id, a.organization_id, a.name, a.dockerfile_path, a.build_context,"                     \
	" a.start_command::text, a.port, a.health_check_path, a.health_check_expected_status,"     \
	" a.health_check_timeout_seconds, a.health_check_retries, a.deploy_strategy,"              \
	" a.image_retention_count, a.cpu_limit_millicores, a.memory_limit_mb, a.status,"           \
	" s.is_local, g.repository_url, g.branch, g.deploy_public_key, g.deploy_private_key_sealed," \
	" g.ssh_host_key, gc.id, gc.provider, gc.username, gc.token_sealed, a.server_id"
#define APP_JOINS                                                                                  \
	" JOIN servers s ON s.id = a.server_id LEFT JOIN git_sources g ON g.application_id = a.id"   \
	" LEFT JOIN git_credentials gc ON gc.id = g.credential_id"

/* ($1 deployment) -> zero or one row: enum sw_db_rt_deployment_col, then
 * the application. */
const struct sw_db_stmt sw_db_stmt_rt_deployment = {
	.name = "rt_deployment",
	.sql = "SELECT d.id, d.number, d.status, d.trigger, d.requested_ref, d.archive_path,"
	       " d.rollback_of, r.number, d.image_tag, d.cancel_requested, d.created_by,"
	       " d.error_message, d.phase," APP_COLUMNS
	       " FROM deployments d JOIN applications a ON a.id = d.application_id" APP_JOINS
	       " LEFT JOIN deployments r ON r.id = d.rollback_of"
	       " WHERE d.id = $1::uuid",
	.nparams = 1,
};

/* ($1 application) -> zero or one row: enum sw_db_rt_app_col. */
const struct sw_db_stmt sw_db_stmt_rt_application = {
	.name = "rt_application",
	.sql = "SELECT" APP_COLUMNS " FROM applications a" APP_JOINS " WHERE a.id = $1::uuid",
	.nparams = 1,
};

/* ($1 application) -> key, value_sealed (bound to
 * "variable:<application id>:<key>"), by key. */
const struct sw_db_stmt sw_db_stmt_rt_variables = {
	.name = "rt_variables",
	.sql = "SELECT key, value_sealed FROM variables WHERE application_id = $1::uuid ORDER BY key",
	.nparams = 1,
};

/* ($1 application) -> name, mount_path, host_path (NULL: a named volume),
 * by name. */
const struct sw_db_stmt sw_db_stmt_rt_volumes = {
	.name = "rt_volumes",
	.sql = "SELECT name, mount_path, host_path FROM volumes WHERE application_id = $1::uuid"
	       " ORDER BY name",
	.nparams = 1,
};

/* ($1 application) -> its VERIFIED hostnames, sorted. */
const struct sw_db_stmt sw_db_stmt_rt_hostnames = {
	.name = "rt_hostnames",
	.sql = "SELECT hostname FROM domains WHERE application_id = $1::uuid"
	       " AND verified_at IS NOT NULL ORDER BY hostname",
	.nparams = 1,
};

/* ($1 deployment, $2 new status, $3 phase, $4 worker id or "", $5 the
 * statuses it may be in, as a text array "{QUEUED,BUILDING}") -> one row
 * (the status) when the deployment was in one of them and no cancel was
 * asked for; none otherwise. */
const struct sw_db_stmt sw_db_stmt_rt_begin = {
	.name = "rt_begin",
	.sql = "UPDATE deployments SET status = $2, phase = $3, worker_id = nullif($4, '')::uuid,"
	       " started_at = coalesce(started_at, now()), updated_at = now()"
	       " WHERE id = $1::uuid AND status = ANY ($5::text[]) AND NOT cancel_requested"
	       " RETURNING status",
	.nparams = 5,
};

/* ($1 deployment, $2 phase) -> one row (cancel_requested "t"/"f") while the
 * deployment is in flight; none once it is not (reaped, deleted). */
const struct sw_db_stmt sw_db_stmt_rt_phase = {
	.name = "rt_phase",
	.sql = "UPDATE deployments SET phase = $2, updated_at = now()"
	       " WHERE id = $1::uuid AND status IN ('BUILDING', 'DEPLOYING') RETURNING cancel_requested",
	.nparams = 2,
};

/* ($1 deployment, $2 git ref, $3 commit sha, $4 message, $5 author): read
 * from the clone. */
/* ($1 application, $2 repository URL fetched, $3 "<type> SHA256:...") ->
 * no row: the ssh host key pinned on first use (migration 0018). */
const struct sw_db_stmt sw_db_stmt_rt_host_key_learned = {
	.name = "rt_host_key_learned",
	.sql = "SELECT steward_git_source_learn_host_key($1::uuid, $2, $3)",
	.nparams = 3,
};

/* ($1 credential) -> no row: the credential was used by a fetch. */
const struct sw_db_stmt sw_db_stmt_rt_credential_used = {
	.name = "rt_credential_used",
	.sql = "UPDATE git_credentials SET last_used_at = now() WHERE id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_rt_commit = {
	.name = "rt_commit",
	.sql = "UPDATE deployments SET git_ref = $2, commit_sha = $3, commit_message = $4,"
	       " commit_author = $5, updated_at = now() WHERE id = $1::uuid AND status = 'BUILDING'",
	.nparams = 5,
};

/* ($1 deployment, $2 image tag, $3 log bytes, $4 log tail) -> one row (the
 * deploy job's id): the build's end and the deploy job, in one statement.
 * The deployment stays BUILDING (in flight: the application's lock is held)
 * until the deploy job's claim moves it to DEPLOYING (0013). None when it
 * was no longer BUILDING or a cancel was asked for. */
const struct sw_db_stmt sw_db_stmt_rt_built = {
	.name = "rt_built",
	.sql = "WITH d AS (UPDATE deployments SET image_tag = $2,"
	       "  log_byte_count = $3::bigint, log_tail = $4, updated_at = now()"
	       "  WHERE id = $1::uuid AND status = 'BUILDING' AND NOT cancel_requested"
	       "  RETURNING organization_id, id, created_by)"
	       " SELECT j.id FROM d, steward_job_enqueue(d.organization_id, 'deploy', 'deployment.deploy',"
	       "  'deployment', d.id, NULL, d.created_by) j",
	.nparams = 4,
};

/* ($1 deployment, $2 strategy as run, $3 colour or NULL, $4 port) -> one
 * row (cancel_requested) while it is DEPLOYING. */
const struct sw_db_stmt sw_db_stmt_rt_started = {
	.name = "rt_started",
	.sql = "UPDATE deployments SET strategy = $2, colour = $3, port = $4::int, updated_at = now()"
	       " WHERE id = $1::uuid AND status = 'DEPLOYING' RETURNING cancel_requested",
	.nparams = 4,
};

/* ($1 deployment, $2 log bytes, $3 log tail) -> no row: the record's
 * logByteCount and logTail kept current while the deployment runs (or,
 * after it ended, while a recovery appends to its log). */
const struct sw_db_stmt sw_db_stmt_rt_log_progress = {
	.name = "rt_log_progress",
	.sql = "UPDATE deployments SET log_byte_count = $2::bigint, log_tail = $3"
	       " WHERE id = $1::uuid AND log_byte_count <= $2::bigint",
	.nparams = 3,
};

const struct sw_db_stmt sw_db_stmt_rt_log_stored = {
	.name = "rt_log_stored",
	.sql = "SELECT coalesce(max(off + length(data)), 0) FROM deployment_log_chunks"
	       " WHERE deployment_id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_rt_log_chunk = {
	.name = "rt_log_chunk",
	.sql = "INSERT INTO deployment_log_chunks (deployment_id, off, data)"
	       " VALUES ($1::uuid, $2::bigint, decode($3, 'base64')) ON CONFLICT DO NOTHING",
	.nparams = 3,
};

/* ($1 deployment, $2 SUCCEEDED, FAILED or CANCELLED, $3 error message or
 * NULL, $4 log bytes or NULL (kept), $5 log tail or NULL (kept)) -> one row
 * (the status) when the deployment was still QUEUED or in flight. Its
 * phase becomes DONE on a success, and stays where it failed or was
 * cancelled otherwise. The
 * application becomes RUNNING after a success, FAILED after the failure of
 * its first deployment (CREATED), and stays as it was otherwise (its
 * previous version serves on). */
const struct sw_db_stmt sw_db_stmt_rt_finish = {
	.name = "rt_finish",
	.sql = "WITH d AS (UPDATE deployments SET status = $2,"
	       "  phase = CASE WHEN $2 = 'SUCCEEDED' THEN 'DONE' ELSE phase END, error_message = $3,"
	       "  log_byte_count = coalesce($4::bigint, log_byte_count), log_tail = coalesce($5, log_tail),"
	       "  finished_at = now(), updated_at = now()"
	       "  WHERE id = $1::uuid AND status IN ('QUEUED', 'BUILDING', 'DEPLOYING')"
	       "  RETURNING application_id, status),"
	       " a AS (UPDATE applications a SET updated_at = now(),"
	       "  status = CASE WHEN d.status = 'SUCCEEDED' THEN 'RUNNING' ELSE 'FAILED' END"
	       "  FROM d WHERE a.id = d.application_id"
	       "  AND (d.status = 'SUCCEEDED' OR (d.status = 'FAILED' AND a.status = 'CREATED')))"
	       " SELECT status FROM d",
	.nparams = 5,
};

/* ($1 application, $2 a deployment to leave out or NULL) -> zero or one row,
 * enum sw_db_rt_serving_col: the version that serves, the newest
 * SUCCEEDED deployment (by when it finished). */
const struct sw_db_stmt sw_db_stmt_rt_serving = {
	.name = "rt_serving",
	.sql = "SELECT id, number, image_tag, port, colour FROM deployments"
	       " WHERE application_id = $1::uuid AND status = 'SUCCEEDED'"
	       " AND id IS DISTINCT FROM $2::uuid ORDER BY finished_at DESC, number DESC LIMIT 1",
	.nparams = 2,
};

/* ($1 application, $2 a deployment to leave out) -> one row, "t" when
 * another deployment of the application is queued or in flight: its build
 * may use (as cache) an image a recovery would otherwise remove. */
const struct sw_db_stmt sw_db_stmt_rt_app_busy = {
	.name = "rt_app_busy",
	.sql = "SELECT EXISTS (SELECT 1 FROM deployments WHERE application_id = $1::uuid"
	       " AND id <> $2::uuid AND status IN ('QUEUED', 'BUILDING', 'DEPLOYING'))",
	.nparams = 2,
};

/* ($1 application, $2 n) -> the image tags to keep: those of the newest n
 * SUCCEEDED deployments (a rollback shares its target's tag: counted once,
 * at its newest use). */
const struct sw_db_stmt sw_db_stmt_rt_retained = {
	.name = "rt_retained",
	.sql = "SELECT image_tag FROM deployments WHERE application_id = $1::uuid"
	       " AND status = 'SUCCEEDED' AND image_tag IS NOT NULL"
	       " GROUP BY image_tag ORDER BY max(number) DESC LIMIT $2::int",
	.nparams = 2,
};

/* ($1 application) -> one row, "t" when this connection now holds the
 * application's runtime lock (a session advisory lock: whoever changes
 * the application's containers or route holds it; a crash releases it). */
const struct sw_db_stmt sw_db_stmt_rt_lock = {
	.name = "rt_lock",
	.sql = "SELECT pg_try_advisory_lock(hashtextextended('steward-runtime:' || $1::uuid, 0))",
	.nparams = 1,
};

/* ($1 application): releases the runtime lock. */
const struct sw_db_stmt sw_db_stmt_rt_unlock = {
	.name = "rt_unlock",
	.sql = "SELECT pg_advisory_unlock(hashtextextended('steward-runtime:' || $1::uuid, 0))",
	.nparams = 1,
};

/* ($1 application, $2 status). */
const struct sw_db_stmt sw_db_stmt_rt_application_status = {
	.name = "rt_application_status",
	.sql = "UPDATE applications SET status = $2, updated_at = now() WHERE id = $1::uuid",
	.nparams = 2,
};

/* ($1 service) -> zero or one row, enum sw_db_rt_service_col. */
const struct sw_db_stmt sw_db_stmt_rt_service = {
	.name = "rt_service",
	.sql = "SELECT s.id, s.name, s.kind, s.version, s.credentials_sealed, v.is_local"
	       " FROM services s JOIN servers v ON v.id = s.server_id WHERE s.id = $1::uuid",
	.nparams = 1,
};

/* ($1 server) -> zero or one row: its id and is_local. The server of a
 * job whose application, service or volume is gone (its payload names it). */
const struct sw_db_stmt sw_db_stmt_rt_server = {
	.name = "rt_server",
	.sql = "SELECT s.id, s.is_local FROM servers s WHERE s.id = $1::uuid",
	.nparams = 1,
};

/* ($1 service, $2 status). */
const struct sw_db_stmt sw_db_stmt_rt_service_status = {
	.name = "rt_service_status",
	.sql = "UPDATE services SET status = $2, updated_at = now() WHERE id = $1::uuid",
	.nparams = 2,
};

/* ($1 backup, $2 reason). */
const struct sw_db_stmt sw_db_stmt_rt_backup_fail = {
	.name = "rt_backup_fail",
	.sql = "UPDATE service_backups SET status = 'FAILED', error_message = $2,"
	       " started_at = coalesce(started_at, now()), finished_at = now()"
	       " WHERE id = $1::uuid AND status IN ('QUEUED', 'RUNNING')",
	.nparams = 2,
};

/* ---- routes ---- */

/* ($1 organization, $2 application) -> zero or one row, enum
 * sw_db_runtime_target_col: the application's server, the application
 * alone, and its verified hostnames. */
const struct sw_db_stmt sw_db_stmt_runtime_application = {
	.name = "runtime_application",
	.sql = "SELECT s.id, s.is_local, json_build_array(a.id)::text,"
	       " (SELECT coalesce(json_agg(d.hostname ORDER BY d.hostname), '[]'::json) FROM domains d"
	       "  WHERE d.application_id = a.id AND d.verified_at IS NOT NULL)::text"
	       " FROM applications a JOIN servers s ON s.id = a.server_id"
	       " WHERE a.organization_id = $1::uuid AND a.id = $2::uuid",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_runtime_logs = {
	.name = "runtime_logs",
	.sql = "SELECT s.id, s.is_local,"
	       " (SELECT coalesce(json_agg(json_build_array(v.key, v.value_sealed) ORDER BY v.key),"
	       "  '[]'::json) FROM variables v WHERE v.application_id = a.id)::text"
	       " FROM applications a JOIN servers s ON s.id = a.server_id"
	       " WHERE a.organization_id = $1::uuid AND a.id = $2::uuid",
	.nparams = 2,
};

/* ($1 organization, $2 server, or NULL: the organization's local server)
 * -> zero or one row, enum sw_db_runtime_target_col: the server, the
 * organization's applications on it and their verified hostnames. Only
 * these are shown of a server's runtime: the local host is shared by every
 * organization of the installation. */
const struct sw_db_stmt sw_db_stmt_runtime_server = {
	.name = "runtime_server",
	.sql = "SELECT s.id, s.is_local,"
	       " (SELECT coalesce(json_agg(a.id ORDER BY a.created_at, a.id), '[]'::json)"
	       "  FROM applications a WHERE a.server_id = s.id AND a.organization_id = s.organization_id)::text,"
	       " (SELECT coalesce(json_agg(d.hostname ORDER BY d.hostname), '[]'::json) FROM domains d"
	       "  JOIN applications a ON a.id = d.application_id WHERE a.server_id = s.id"
	       "  AND a.organization_id = s.organization_id AND d.verified_at IS NOT NULL)::text,"
	       " " SW_DB_SERVER_STATUS_SQL
	       " FROM servers s WHERE s.organization_id = $1::uuid"
	       " AND (s.id = $2::uuid OR ($2::uuid IS NULL AND s.is_local))",
	.nparams = 2,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_rt_deployment,      &sw_db_stmt_rt_application,
	&sw_db_stmt_rt_variables,       &sw_db_stmt_rt_volumes,
	&sw_db_stmt_rt_hostnames,       &sw_db_stmt_rt_begin,
	&sw_db_stmt_rt_phase,           &sw_db_stmt_rt_commit,
	&sw_db_stmt_rt_host_key_learned, &sw_db_stmt_rt_credential_used,
	&sw_db_stmt_rt_built,           &sw_db_stmt_rt_started,
	&sw_db_stmt_rt_finish,          &sw_db_stmt_rt_log_progress,
	&sw_db_stmt_rt_log_stored,      &sw_db_stmt_rt_log_chunk,
	&sw_db_stmt_rt_serving,         &sw_db_stmt_rt_retained,
	&sw_db_stmt_rt_app_busy,
	&sw_db_stmt_rt_lock,            &sw_db_stmt_rt_unlock,
	&sw_db_stmt_rt_application_status, &sw_db_stmt_rt_service,
	&sw_db_stmt_rt_server,          &sw_db_stmt_rt_service_status,  &sw_db_stmt_rt_backup_fail,
	&sw_db_stmt_runtime_application, &sw_db_stmt_runtime_server,
	&sw_db_stmt_runtime_logs,
};

const struct sw_db_stmt_group sw_db_runtime_statements = { list, SW_ARRAY_SIZE(list) };
