/* Statements of applications and their volumes (tables in migrations 0007
 * and 0008). What is checked where:
 * - create: the quota first (steward_quota_check() in the FROM clause runs
 *   before the row is built), then that environmentId and serverId are the
 *   organization's (SW422 on that field, from the functions of 0008);
 * - update: a new environmentId the same way, and the project follows the
 *   environment;
 * - remove: deletes the row at once (its volumes and other sub-resources
 *   cascade) and queues the runner's job in the same statement, with what
 *   the runner needs in the payload since the row is gone. */
#include "steward/base/limits.h"
#include "db/sql.h"
#include "steward/db/statements_applications.h"

#define APPLICATION_COLUMNS                                                                     \
	"a.id, a.name, a.description, a.project_id, a.environment_id, a.server_id,"             \
	" a.source_kind, a.dockerfile_path, a.build_context, a.start_command::text, a.port,"    \
	" a.health_check_path, a.health_check_expected_status, a.health_check_timeout_seconds," \
	" a.health_check_retries, a.deploy_strategy, a.image_retention_count,"                  \
	" a.cpu_limit_millicores, a.memory_limit_mb, a.status,"                                 \
	" " SW_SQL_TS("a.created_at") ", " SW_SQL_TS("a.updated_at") ", " SW_SQL_US("a.created_at")

const struct sw_db_stmt sw_db_stmt_application_create = {
	.name = "application_create",
	.sql = "WITH a AS (INSERT INTO applications (organization_id, project_id, environment_id,"
	       "  server_id, name, description, source_kind, dockerfile_path, build_context,"
	       "  start_command, port, health_check_path, health_check_expected_status,"
	       "  health_check_timeout_seconds, health_check_retries, deploy_strategy,"
	       "  image_retention_count, cpu_limit_millicores, memory_limit_mb)"
	       "  SELECT $1::uuid, steward_application_environment($1::uuid, $6::uuid), $6::uuid,"
	       "  steward_application_server($1::uuid, $7::uuid), $4::text, $5::text, $8::text,"
	       "  $9::text, $10::text, $11::jsonb, $12::integer, $13::text, $14::integer,"
	       "  $15::integer, $16::integer, $17::text, $18::integer, $19::integer, $20::integer"
	       "  FROM steward_quota_check($1::uuid, 'applications') q"
	       "  WHERE " SW_SQL_UNUSED("$2", "uuid") " AND " SW_SQL_UNUSED("$3", "uuid")
	       "  RETURNING *)"
	       " SELECT " APPLICATION_COLUMNS " FROM a",
	.nparams = 20,
	.audited = SW_DB_AUDITED(SW_DB_APPLICATION_ID, SW_DB_APPLICATION_NAME),
};

const struct sw_db_stmt sw_db_stmt_application_get = {
	.name = "application_get",
	.sql = "SELECT " APPLICATION_COLUMNS " FROM applications a"
	       " WHERE a.organization_id = $1::uuid AND a.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

/* serverId ($8) is create-only: never changed here. */
const struct sw_db_stmt sw_db_stmt_application_update = {
	.name = "application_update",
	.sql = "WITH a AS (UPDATE applications SET " SW_SQL_SET("name", 1, "$5::text") ","
	       " " SW_SQL_SET("description", 2, "$6::text") ","
	       " " SW_SQL_SET("project_id", 3, "steward_application_environment($1::uuid, $7::uuid)") ","
	       " " SW_SQL_SET("environment_id", 3, "$7::uuid") ","
	       " " SW_SQL_SET("source_kind", 5, "$9::text") ","
	       " " SW_SQL_SET("dockerfile_path", 6, "$10::text") ","
	       " " SW_SQL_SET("build_context", 7, "$11::text") ","
	       " " SW_SQL_SET("start_command", 8, "$12::jsonb") ","
	       " " SW_SQL_SET("port", 9, "$13::integer") ","
	       " " SW_SQL_SET("health_check_path", 10, "$14::text") ","
	       " " SW_SQL_SET("health_check_expected_status", 11, "$15::integer") ","
	       " " SW_SQL_SET("health_check_timeout_seconds", 12, "$16::integer") ","
	       " " SW_SQL_SET("health_check_retries", 13, "$17::integer") ","
	       " " SW_SQL_SET("deploy_strategy", 14, "$18::text") ","
	       " " SW_SQL_SET("image_retention_count", 15, "$19::integer") ","
	       " " SW_SQL_SET("cpu_limit_millicores", 16, "$20::integer") ","
	       " " SW_SQL_SET("memory_limit_mb", 17, "$21::integer") ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " AND " SW_SQL_UNUSED("$8", "uuid") " RETURNING *)"
	       " SELECT " APPLICATION_COLUMNS " FROM a",
	.nparams = 21,
	.audited = SW_DB_AUDITED(SW_DB_APPLICATION_ID, SW_DB_APPLICATION_NAME),
};

/* $4: the acting user. Returns id, name, the job's id. Queued lifecycle
 * work of the application is cancelled (the delete job replaces it); the
 * volumes listed in the payload are the runtime's (host paths are never
 * removed). The subquery sees the volumes: the cascade runs at the end of
 * the statement. */
const struct sw_db_stmt sw_db_stmt_application_remove = {
	.name = "application_remove",
	.sql = "WITH a AS (DELETE FROM applications WHERE organization_id = $1::uuid AND id = $2::uuid"
	       "  AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id, name, organization_id, server_id),"
	       " c AS (UPDATE jobs SET status = 'CANCELLED', finished_at = now(),"
	       "  error_message = 'The application was deleted.'"
	       "  WHERE target_id IN (SELECT id FROM a) AND status = 'QUEUED'"
	       "  AND kind <> 'application.delete')"
	       " SELECT a.id, a.name, j.id FROM a, steward_job_enqueue(a.organization_id, 'lifecycle',"
	       "  'application.delete', 'application', a.id, jsonb_build_object('serverId', a.server_id,"
	       "  'name', a.name, 'volumes', (SELECT coalesce(jsonb_agg(v.name ORDER BY v.name), '[]'::jsonb)"
	       "  FROM volumes v WHERE v.application_id = a.id AND v.host_path IS NULL)), $4::uuid) j",
	.nparams = 4,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* Filters: projectId, environmentId, serverId, status, name (exact). */
const struct sw_db_stmt sw_db_stmt_applications_list = {
	.name = "applications_list",
	.sql = "SELECT " APPLICATION_COLUMNS " FROM applications a"
	       " WHERE a.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::uuid IS NULL OR a.project_id = $7::uuid)"
	       " AND ($8::uuid IS NULL OR a.environment_id = $8::uuid)"
	       " AND ($9::uuid IS NULL OR a.server_id = $9::uuid)"
	       " AND ($10::text IS NULL OR a.status = $10::text)"
	       " AND ($11::text IS NULL OR a.name = $11::text)" SW_SQL_PAGE("a"),
	.nparams = 11,
	.reads_only = true,
};

/* The job statement of the lifecycle routes (sw_api_job_enqueue()): no row
 * when the application is not the organization's. */
const struct sw_db_stmt sw_db_stmt_application_job = {
	.name = "application_job",
	.sql = "SELECT " SW_SQL_JOB_COLUMNS
	       " FROM applications a,"
	       " steward_job_enqueue(a.organization_id, $3::text, $4::text, 'application', a.id, NULL,"
	       " $5::uuid) j WHERE a.organization_id = $1::uuid AND a.id = $2::uuid",
	.nparams = 5,
	.audited = SW_SQL_JOB_AUDITED,
};

/* ---- volumes ---- */

#define VOLUME_COLUMNS                                                                   \
	"v.id, v.name, v.application_id, v.mount_path, v.host_path,"                     \
	" " SW_SQL_TS("v.created_at") ", " SW_SQL_TS("v.updated_at") ", " SW_SQL_US("v.created_at")

/* Parent: the application (SW404 when it is not the organization's). */
const struct sw_db_stmt sw_db_stmt_volume_create = {
	.name = "volume_create",
	.sql = "SELECT " VOLUME_COLUMNS " FROM steward_volume_create($1::uuid, $2::uuid, $4::text,"
	       " $5::text, $6::text, " SW_SQL_STR(SW_VOLUMES_MAX) ") v"
	       " WHERE " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 6,
	.audited = SW_DB_AUDITED(SW_DB_VOLUME_ID, SW_DB_VOLUME_NAME),
};

const struct sw_db_stmt sw_db_stmt_volume_get = {
	.name = "volume_get",
	.sql = "SELECT " VOLUME_COLUMNS " FROM volumes v"
	       " WHERE v.organization_id = $1::uuid AND v.id = $2::uuid AND v.application_id = $3::uuid",
	.nparams = 3,
	.reads_only = true,
};

/* name ($5) is create-only. */
const struct sw_db_stmt sw_db_stmt_volume_update = {
	.name = "volume_update",
	.sql = "SELECT " VOLUME_COLUMNS " FROM steward_volume_update($1::uuid, $2::uuid, $3::uuid,"
	       " $4::text, $6::text, $7::text) v WHERE " SW_SQL_UNUSED("$5", "text"),
	.nparams = 7,
	.audited = SW_DB_AUDITED(SW_DB_VOLUME_ID, SW_DB_VOLUME_NAME),
};

/* $4: the acting user. Returns id, name and the id of the volume.delete
 * job, queued for a named volume only (NULL for a host path). */
const struct sw_db_stmt sw_db_stmt_volume_remove = {
	.name = "volume_remove",
	.sql = "WITH v AS (DELETE FROM volumes WHERE organization_id = $1::uuid AND id = $2::uuid"
	       "  AND application_id = $3::uuid"
	       "  RETURNING id, name, organization_id, application_id, host_path)"
	       " SELECT v.id, v.name, CASE WHEN v.host_path IS NULL THEN"
	       "  (steward_job_enqueue(v.organization_id, 'lifecycle', 'volume.delete', 'volume', v.id,"
	       "  jsonb_build_object('applicationId', v.application_id, 'serverId', a.server_id,"
	       "  'name', v.name), $4::uuid)).id END"
	       " FROM v JOIN applications a ON a.id = v.application_id",
	.nparams = 4,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* Filter: name (exact). */
const struct sw_db_stmt sw_db_stmt_volumes_list = {
	.name = "volumes_list",
	.sql = "SELECT " VOLUME_COLUMNS " FROM volumes v"
	       " WHERE v.organization_id = $1::uuid AND v.application_id = $2::uuid"
	       " AND ($7::text IS NULL OR v.name = $7::text)" SW_SQL_PAGE("v"),
	.nparams = 7,
	.reads_only = true,
};

/* (organization, application) -> a row when the application is the
 * organization's. */
const struct sw_db_stmt sw_db_stmt_application_exists = {
	.name = "application_exists",
	.sql = "SELECT 1 FROM applications WHERE organization_id = $1::uuid AND id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_application_create, &sw_db_stmt_application_get,
	&sw_db_stmt_application_update, &sw_db_stmt_application_remove,
	&sw_db_stmt_applications_list,  &sw_db_stmt_application_job,
	&sw_db_stmt_volume_create,      &sw_db_stmt_volume_get,
	&sw_db_stmt_volume_update,      &sw_db_stmt_volume_remove,
	&sw_db_stmt_volumes_list,       &sw_db_stmt_application_exists,
};
const struct sw_db_stmt_group sw_db_applications_statements = { list, SW_ARRAY_SIZE(list) };
