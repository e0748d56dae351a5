/* Statements of servers. Every organization has one local server (the
 * control plane's host, made by a trigger of migration 0007): it has no
 * agent token, is not counted against the servers quota, and is never
 * deleted (the functions of migration 0010 refuse). Agent tokens are kept
 * as their SHA-256 only. */
#include "db/sql.h"
#include "steward/db/statements_servers.h"

#define SERVER_COLUMNS                                                                          \
	"s.id, s.name, s.description, s.host, s.is_local, s.status, s.agent_token_prefix,"       \
	" " SW_SQL_TS("s.agent_token_created_at") ", " SW_SQL_TS("s.agent_connected_at") ","     \
	" " SW_SQL_TS("s.last_seen_at") ","                                                      \
	" (SELECT count(*) FROM applications a WHERE a.server_id = s.id),"                       \
	" (SELECT count(*) FROM services v WHERE v.server_id = s.id),"                           \
	" " SW_SQL_TS("s.created_at") ", " SW_SQL_TS("s.updated_at") ", " SW_SQL_US("s.created_at")

const struct sw_db_stmt sw_db_stmt_server_create = {
	.name = "server_create",
	.sql = "WITH q AS (SELECT steward_quota_check($1::uuid, 'servers')),"
	       " s AS (INSERT INTO servers (organization_id, name, description, host,"
	       "  agent_token_hash, agent_token_prefix, agent_token_created_at)"
	       "  SELECT $1::uuid, $4, coalesce($5, ''), $6, decode($7, 'hex'), $8, now() FROM q"
	       "  WHERE " SW_SQL_UNUSED("$2", "uuid") " AND " SW_SQL_UNUSED("$3", "uuid")
	       "  RETURNING *)"
	       " SELECT " SERVER_COLUMNS " FROM s",
	.nparams = 8,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

const struct sw_db_stmt sw_db_stmt_server_get = {
	.name = "server_get",
	.sql = "SELECT " SERVER_COLUMNS " FROM servers s"
	       " WHERE s.organization_id = $1::uuid AND s.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
};

/* Fields: name, description, host. */
const struct sw_db_stmt sw_db_stmt_server_update = {
	.name = "server_update",
	.sql = "WITH s AS (UPDATE servers SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("description", 2, "coalesce($6, '')") ","
	       " " SW_SQL_SET("host", 3, "$7") ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " RETURNING *)"
	       " SELECT " SERVER_COLUMNS " FROM s",
	.nparams = 7,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

const struct sw_db_stmt sw_db_stmt_server_remove = {
	.name = "server_remove",
	.sql = "SELECT id, name FROM steward_server_delete($1::uuid, $2::uuid)"
	       " WHERE " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

const struct sw_db_stmt sw_db_stmt_servers_list = {
	.name = "servers_list",
	.sql = "SELECT " SERVER_COLUMNS " FROM servers s"
	       " WHERE s.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR s.status = $7) AND ($8::text IS NULL OR s.name = $8)"
	       SW_SQL_PAGE("s"),
	.nparams = 8,
};

const struct sw_db_stmt sw_db_stmt_server_agent_token = {
	.name = "server_agent_token",
	.sql = "SELECT " SERVER_COLUMNS " FROM steward_server_agent_token_set($1::uuid, $2::uuid,"
	       " decode($3, 'hex'), $4) s",
	.nparams = 4,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_server_create, &sw_db_stmt_server_get,   &sw_db_stmt_server_update,
	&sw_db_stmt_server_remove, &sw_db_stmt_servers_list, &sw_db_stmt_server_agent_token,
};
const struct sw_db_stmt_group sw_db_servers_statements = { list, SW_ARRAY_SIZE(list) };
