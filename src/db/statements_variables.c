/* Statements of variables (migration 0009): keys, lengths and times go
 * out, sealed values only come in. */
#include "steward/base/limits.h"
#include "db/sql.h"
#include "steward/db/statements_variables.h"

#define VARIABLE_COLUMNS(t)                                                               \
	t ".key, " t ".value_length, " SW_SQL_TS(t ".created_at") ", " SW_SQL_TS(t ".updated_at")

const struct sw_db_stmt sw_db_stmt_variables_list = {
	.name = "variables_list",
	.sql = "SELECT " VARIABLE_COLUMNS("v") " FROM applications a"
	       " LEFT JOIN variables v ON v.application_id = a.id"
	       " WHERE a.organization_id = $1::uuid AND a.id = $2::uuid"
	       " ORDER BY v.key COLLATE \"C\"",
	.nparams = 2,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_variable_get = {
	.name = "variable_get",
	.sql = "SELECT " VARIABLE_COLUMNS("v") " FROM variables v"
	       " WHERE v.organization_id = $1::uuid AND v.application_id = $2::uuid AND v.key = $3",
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_variables_apply = {
	.name = "variables_apply",
	.sql = "SELECT " VARIABLE_COLUMNS("v") ", v.created"
	       " FROM steward_variables_apply($1::uuid, $2::uuid, $3::jsonb, $4::jsonb,"
	       " " SW_SQL_STR(SW_ENV_MAX_VARIABLES) ") v ORDER BY v.key COLLATE \"C\"",
	.nparams = 4,
	/* Recorded whatever is left (an unset of the last variable answers no
	 * row), with whether a key was created (c4: SW_DB_VARIABLE_CREATED). */
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = SW_DB_VARIABLE_CREATED + 1, .always = true,
		.metadata_sql = "jsonb_build_object('created', coalesce((SELECT bool_or(c4)"
				" FROM sw_audited_x), false))" },
};

const struct sw_db_stmt sw_db_stmt_variable_remove = {
	.name = "variable_remove",
	.sql = "DELETE FROM variables WHERE organization_id = $1::uuid AND application_id = $2::uuid"
	       " AND key = $3 RETURNING key",
	.nparams = 3,
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .metadata_sql = "jsonb_build_object('key', c0)" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_variables_list,
	&sw_db_stmt_variable_get,
	&sw_db_stmt_variables_apply,
	&sw_db_stmt_variable_remove,
};
const struct sw_db_stmt_group sw_db_variables_statements = { list, SW_ARRAY_SIZE(list) };
