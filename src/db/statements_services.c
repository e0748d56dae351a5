/* Statements of managed services, their backups and backup schedules
 * (tables and functions in migrations 0010 and 0019), the API's and the
 * runners'. The sealed credentials are
 * read by one statement only, the one that also writes the audit record
 * of their disclosure (service_connection). */
#include "db/sql.h"
#include "steward/db/statements_services.h"

#define SERVICE_COLUMNS                                                                        \
	"s.id, s.name, s.description, s.kind, s.version, s.status, s.project_id,"               \
	" s.environment_id, s.server_id,"                                                       \
	" " SW_SQL_TS("s.created_at") ", " SW_SQL_TS("s.updated_at") ", s.port,"                 \
	" " SW_SQL_US("s.created_at")

const struct sw_db_stmt sw_db_stmt_service_create = {
	.name = "service_create",
	.sql = "WITH s AS (INSERT INTO services (id, organization_id, project_id, environment_id,"
	       "  server_id, name, description, kind, version, credentials_sealed)"
	       "  SELECT $10::uuid, $1::uuid, steward_application_environment($1::uuid, $8::uuid),"
	       "  $8::uuid, steward_application_server($1::uuid, $9::uuid), $4, coalesce($5, ''), $6,"
	       "  coalesce($7, (SELECT v.version FROM service_versions v"
	       "   WHERE v.kind = $6 AND v.is_default)), $11"
	       "  WHERE " SW_SQL_UNUSED("$2", "uuid") " AND " SW_SQL_UNUSED("$3", "uuid")
	       "  RETURNING *)"
	       " SELECT " SERVICE_COLUMNS " FROM s",
	.nparams = 11,
	.audited = SW_DB_AUDITED(SW_DB_SERVICE_ID, SW_DB_SERVICE_NAME),
};

const struct sw_db_stmt sw_db_stmt_service_get = {
	.name = "service_get",
	.sql = "SELECT " SERVICE_COLUMNS " FROM services s"
	       " WHERE s.organization_id = $1::uuid AND s.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_service_update = {
	.name = "service_update",
	.sql = "WITH s AS (UPDATE services SET " SW_SQL_SET("description", 2, "coalesce($6, '')") ","
	       " " SW_SQL_SET("version", 4, "$8") ","
	       " " SW_SQL_SET("environment_id", 5, "$9::uuid") ","
	       /* Checked (SW422) only when given: a CASE runs the branch it takes. */
	       " " SW_SQL_SET("project_id", 5, "steward_application_environment($1::uuid, $9::uuid)") ","
	       " updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " AND " SW_SQL_UNUSED("$5", "text") " AND " SW_SQL_UNUSED("$7", "text")
	       " AND " SW_SQL_UNUSED("$10", "uuid") " RETURNING *)"
	       " SELECT " SERVICE_COLUMNS " FROM s",
	.nparams = 10,
	.audited = SW_DB_AUDITED(SW_DB_SERVICE_ID, SW_DB_SERVICE_NAME),
};

/* Work still queued for the service is cancelled; its removal from the
 * server is queued. */
const struct sw_db_stmt sw_db_stmt_service_remove = {
	.name = "service_remove",
	.sql = "WITH d AS (DELETE FROM services WHERE organization_id = $1::uuid AND id = $2::uuid"
	       "  AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING organization_id, id, name, kind, server_id),"
	       " c AS (UPDATE jobs SET status = 'CANCELLED', finished_at = now(),"
	       "  error_message = 'The service was deleted.'"
	       "  WHERE target_id IN (SELECT id FROM d) AND status = 'QUEUED' AND kind <> 'service.delete')"
	       " SELECT d.id, d.name FROM d, steward_job_enqueue(d.organization_id, 'lifecycle',"
	       "  'service.delete', 'service', d.id, jsonb_build_object('name', d.name, 'kind', d.kind,"
	       "  'serverId', d.server_id), NULL) j",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

const struct sw_db_stmt sw_db_stmt_services_list = {
	.name = "services_list",
	.sql = "SELECT " SERVICE_COLUMNS " FROM services s"
	       " WHERE s.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR s.kind = $7)"
	       " AND ($8::uuid IS NULL OR s.server_id = $8::uuid)"
	       " AND ($9::uuid IS NULL OR s.project_id = $9::uuid)"
	       " AND ($10::uuid IS NULL OR s.environment_id = $10::uuid)"
	       " AND ($11::text IS NULL OR s.status = $11)"
	       " AND ($12::text IS NULL OR s.name = $12)" SW_SQL_PAGE("s"),
	.nparams = 12,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_service_exists = {
	.name = "service_exists",
	.sql = "SELECT 1 FROM services WHERE organization_id = $1::uuid AND id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_service_job = {
	.name = "service_job",
	.sql = "SELECT " SW_SQL_JOB_COLUMNS
	       " FROM services s, steward_job_enqueue(s.organization_id, $3, $4, 'service', s.id,"
	       " NULL, $5::uuid) j WHERE s.organization_id = $1::uuid AND s.id = $2::uuid",
	.nparams = 5,
	.audited = SW_SQL_JOB_AUDITED,
};

const struct sw_db_stmt sw_db_stmt_service_connection = {
	.name = "service_connection",
	.sql = "WITH s AS (SELECT organization_id, id, name, kind, credentials_sealed, port FROM services"
	       "  WHERE organization_id = $1::uuid AND id = $2::uuid),"
	       " a AS (INSERT INTO audit_logs (organization_id, actor_user_id, action, target_type,"
	       "  target_id, ip, metadata)"
	       "  SELECT s.organization_id, $3::uuid, 'service.connection.viewed', 'service', s.id::text,"
	       "  $4, jsonb_build_object('name', s.name) FROM s)"
	       " SELECT s.id, s.name, s.kind, s.credentials_sealed, s.port FROM s",
	.nparams = 4,
};

#define BACKUP_COLUMNS                                                                          \
	"b.id, b.service_id, b.status, b.size_bytes, b.error_message, b.job_id,"                 \
	" " SW_SQL_TS("b.started_at") ", " SW_SQL_TS("b.finished_at") ","                        \
	" " SW_SQL_TS("b.created_at") ", b.sha256, " SW_SQL_TS("b.scheduled_for") ","            \
	" " SW_SQL_US("b.created_at")

const struct sw_db_stmt sw_db_stmt_service_backups_list = {
	.name = "service_backups_list",
	.sql = "SELECT " BACKUP_COLUMNS " FROM service_backups b"
	       " WHERE b.organization_id = $1::uuid AND b.service_id = $2::uuid"
	       " AND ($7::text IS NULL OR b.status = $7)" SW_SQL_PAGE("b"),
	.nparams = 7,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_service_backup_request = {
	.name = "service_backup_request",
	.sql = "SELECT " BACKUP_COLUMNS
	       " FROM steward_service_backup_request($1::uuid, $2::uuid, $3::uuid) b",
	.nparams = 3,
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .metadata_sql = "jsonb_build_object('backupId', c0)" },
};

#define SCHEDULE_COLUMNS                                                                        \
	"backup_enabled, backup_frequency, backup_hour_utc, backup_weekday, backup_retention_count," \
	" " SW_SQL_TS("backup_next_run_at") ","                                                  \
	" " SW_SQL_TS("backup_schedule_updated_at")

const struct sw_db_stmt sw_db_stmt_service_schedule_get = {
	.name = "service_schedule_get",
	.sql = "SELECT " SCHEDULE_COLUMNS " FROM services"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_service_schedule_set = {
	.name = "service_schedule_set",
	.sql = "SELECT " SCHEDULE_COLUMNS " FROM steward_service_schedule_set($1::uuid, $2::uuid,"
	       " $3::boolean, $4, $5::integer, $6, $7::integer)",
	.nparams = 7,
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 2,
					    .metadata_sql = "jsonb_build_object('frequency', c1)" },
};

/* ---- backup files and restores (migration 0020) ---- */

const struct sw_db_stmt sw_db_stmt_service_backup_file = {
	.name = "service_backup_file",
	.sql = "SELECT b.status, b.file_path, b.size_bytes, b.sha256, s.kind FROM service_backups b"
	       " JOIN services s ON s.id = b.service_id"
	       " WHERE b.organization_id = $1::uuid AND b.service_id = $2::uuid AND b.id = $3::uuid",
	.nparams = 3,
	/* A download is recorded with the read that grants it (c0: status). */
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .when_sql = "c0 = 'SUCCEEDED'" },
};

const struct sw_db_stmt sw_db_stmt_service_restore_request = {
	.name = "service_restore_request",
	.sql = "SELECT " SW_SQL_JOB_COLUMNS
	       " FROM steward_service_restore_request($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5) j",
	.nparams = 5,
};

/* ---- the runners' ---- */

#define SVC_RT_COLUMNS                                                                          \
	"s.id, s.name, s.kind, s.version, s.credentials_sealed, v.is_local, s.port, v.id"

const struct sw_db_stmt sw_db_stmt_svc_rt_service = {
	.name = "svc_rt_service",
	.sql = "SELECT " SVC_RT_COLUMNS ", NULL, NULL"
	       " FROM services s JOIN servers v ON v.id = s.server_id WHERE s.id = $1::uuid",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_svc_rt_backup_begin = {
	.name = "svc_rt_backup_begin",
	.sql = "UPDATE service_backups b SET status = 'RUNNING', started_at = now(), error_message = NULL"
	       " FROM services s JOIN servers v ON v.id = s.server_id"
	       " WHERE b.id = $1::uuid AND b.status IN ('QUEUED', 'RUNNING') AND s.id = b.service_id"
	       " RETURNING " SVC_RT_COLUMNS ", b.file_path, b.sha256",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_svc_rt_backup_succeed = {
	.name = "svc_rt_backup_succeed",
	.sql = "UPDATE service_backups SET status = 'SUCCEEDED', file_path = $2, size_bytes = $3::bigint,"
	       " sha256 = $4, finished_at = now() WHERE id = $1::uuid AND status = 'RUNNING' RETURNING id",
	.nparams = 4,
};

const struct sw_db_stmt sw_db_stmt_svc_rt_backups_retain = {
	.name = "svc_rt_backups_retain",
	.sql = "SELECT f FROM steward_service_backups_retain($1::uuid) f",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_svc_rt_restore_load = {
	.name = "svc_rt_restore_load",
	.sql = "SELECT " SVC_RT_COLUMNS ", b.file_path, b.sha256"
	       " FROM service_backups b JOIN services s ON s.id = b.service_id"
	       " JOIN servers v ON v.id = s.server_id"
	       " WHERE b.id = $1::uuid AND s.id = $2::uuid AND b.status = 'SUCCEEDED'",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_svc_rt_backup_due = {
	.name = "svc_rt_backup_due",
	.sql = "SELECT b.id FROM steward_service_backup_due($1::uuid, $2::timestamptz) b",
	.nparams = 2,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_service_create,         &sw_db_stmt_service_get,
	&sw_db_stmt_service_update,         &sw_db_stmt_service_remove,
	&sw_db_stmt_services_list,          &sw_db_stmt_service_exists,
	&sw_db_stmt_service_job,            &sw_db_stmt_service_connection,
	&sw_db_stmt_service_backups_list,   &sw_db_stmt_service_backup_request,
	&sw_db_stmt_service_schedule_get,   &sw_db_stmt_service_schedule_set,
	&sw_db_stmt_service_backup_file,    &sw_db_stmt_service_restore_request,
	&sw_db_stmt_svc_rt_service,         &sw_db_stmt_svc_rt_backup_begin,
	&sw_db_stmt_svc_rt_backup_succeed,  &sw_db_stmt_svc_rt_backups_retain,
	&sw_db_stmt_svc_rt_restore_load,    &sw_db_stmt_svc_rt_backup_due,
};
const struct sw_db_stmt_group sw_db_services_statements = { list, SW_ARRAY_SIZE(list) };
