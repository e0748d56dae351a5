/* Statements of projects and environments (tables in migration 0007).
 * A project is made with one environment, "production". A project or an
 * environment that still holds applications is not deleted: the foreign
 * key answers 23503, which the API turns into 409. */
#include "db/sql.h"
#include "steward/db/statements_projects.h"

#define PROJECT_COLUMNS                                                                         \
	"p.id, p.name, p.description,"                                                          \
	" (SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name)"             \
	"  ORDER BY e.created_at, e.id), '[]'::jsonb)::text FROM environments e"                  \
	"  WHERE e.project_id = p.id),"                                                          \
	" (SELECT count(*) FROM applications a WHERE a.project_id = p.id),"                      \
	" " SW_SQL_TS("p.created_at") ", " SW_SQL_TS("p.updated_at") ", " SW_SQL_US("p.created_at")

/* Fields: name, description. */
const struct sw_db_stmt sw_db_stmt_project_create = {
	.name = "project_create",
	.sql = "WITH p AS (INSERT INTO projects (organization_id, name, description)"
	       "  SELECT $1::uuid, $4, coalesce($5, '')"
	       "  WHERE " SW_SQL_UNUSED("$2", "uuid") " AND " SW_SQL_UNUSED("$3", "uuid")
	       "  RETURNING *),"
	       " e AS (INSERT INTO environments (organization_id, project_id, name)"
	       "  SELECT organization_id, id, 'production' FROM p RETURNING id, name, created_at)"
	       " SELECT p.id, p.name, p.description,"
	       " (SELECT jsonb_agg(jsonb_build_object('id', e.id, 'name', e.name))::text FROM e),"
	       " 0, " SW_SQL_TS("p.created_at") ", " SW_SQL_TS("p.updated_at") ", " SW_SQL_US("p.created_at")
	       " FROM p",
	.nparams = 5,
	.audited = SW_DB_AUDITED(SW_DB_PROJECT_ID, SW_DB_PROJECT_NAME),
};

const struct sw_db_stmt sw_db_stmt_project_get = {
	.name = "project_get",
	.sql = "SELECT " PROJECT_COLUMNS " FROM projects p"
	       " WHERE p.organization_id = $1::uuid AND p.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_project_update = {
	.name = "project_update",
	.sql = "WITH p AS (UPDATE projects SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("description", 2, "coalesce($6, '')") ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " RETURNING *)"
	       " SELECT " PROJECT_COLUMNS " FROM p",
	.nparams = 6,
	.audited = SW_DB_AUDITED(SW_DB_PROJECT_ID, SW_DB_PROJECT_NAME),
};

const struct sw_db_stmt sw_db_stmt_project_remove = {
	.name = "project_remove",
	.sql = "DELETE FROM projects WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id, name",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* Filter: name (exact). */
const struct sw_db_stmt sw_db_stmt_projects_list = {
	.name = "projects_list",
	.sql = "SELECT " PROJECT_COLUMNS " FROM projects p"
	       " WHERE p.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR p.name = $7)" SW_SQL_PAGE("p"),
	.nparams = 7,
	.reads_only = true,
};

#define ENVIRONMENT_COLUMNS                                                              \
	"e.id, e.project_id, e.name,"                                                    \
	" (SELECT count(*) FROM applications a WHERE a.environment_id = e.id),"          \
	" " SW_SQL_TS("e.created_at") ", " SW_SQL_TS("e.updated_at") ", " SW_SQL_US("e.created_at")

/* Parent: the project. Fields: name. No row when the project is not the
 * organization's. */
const struct sw_db_stmt sw_db_stmt_environment_create = {
	.name = "environment_create",
	.sql = "WITH e AS (INSERT INTO environments (organization_id, project_id, name)"
	       "  SELECT p.organization_id, p.id, $4 FROM projects p"
	       "  WHERE p.organization_id = $1::uuid AND p.id = $2::uuid"
	       "  AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING *)"
	       " SELECT " ENVIRONMENT_COLUMNS " FROM e",
	.nparams = 4,
	.audited = SW_DB_AUDITED(SW_DB_ENVIRONMENT_ID, SW_DB_ENVIRONMENT_NAME),
};

const struct sw_db_stmt sw_db_stmt_environment_get = {
	.name = "environment_get",
	.sql = "SELECT " ENVIRONMENT_COLUMNS " FROM environments e"
	       " WHERE e.organization_id = $1::uuid AND e.id = $2::uuid AND e.project_id = $3::uuid",
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_environment_update = {
	.name = "environment_update",
	.sql = "WITH e AS (UPDATE environments SET " SW_SQL_SET("name", 1, "$5") ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND project_id = $3::uuid"
	       " RETURNING *)"
	       " SELECT " ENVIRONMENT_COLUMNS " FROM e",
	.nparams = 5,
	.audited = SW_DB_AUDITED(SW_DB_ENVIRONMENT_ID, SW_DB_ENVIRONMENT_NAME),
};

const struct sw_db_stmt sw_db_stmt_environment_remove = {
	.name = "environment_remove",
	.sql = "DELETE FROM environments WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND project_id = $3::uuid RETURNING id, name",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* Filter: name (exact). */
const struct sw_db_stmt sw_db_stmt_environments_list = {
	.name = "environments_list",
	.sql = "SELECT " ENVIRONMENT_COLUMNS " FROM environments e"
	       " WHERE e.organization_id = $1::uuid AND e.project_id = $2::uuid"
	       " AND ($7::text IS NULL OR e.name = $7)" SW_SQL_PAGE("e"),
	.nparams = 7,
	.reads_only = true,
};

/* (organization, project) -> a row when the project is the organization's. */
const struct sw_db_stmt sw_db_stmt_project_exists = {
	.name = "project_exists",
	.sql = "SELECT 1 FROM projects WHERE organization_id = $1::uuid AND id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_project_create,     &sw_db_stmt_project_get,
	&sw_db_stmt_project_update,     &sw_db_stmt_project_remove,
	&sw_db_stmt_projects_list,      &sw_db_stmt_environment_create,
	&sw_db_stmt_environment_get,    &sw_db_stmt_environment_update,
	&sw_db_stmt_environment_remove, &sw_db_stmt_environments_list,
	&sw_db_stmt_project_exists,
};
const struct sw_db_stmt_group sw_db_projects_statements = { list, SW_ARRAY_SIZE(list) };
