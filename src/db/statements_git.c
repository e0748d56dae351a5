/* Statements of git sources and git credentials (migration 0009). */
#include "db/sql.h"
#include "steward/db/statements_git.h"

#define GIT_SOURCE_COLUMNS                                                                   \
	"g.id, g.application_id, g.repository_url, g.branch, g.provider, g.deploy_public_key," \
	" g.deploy_key_fingerprint, " SW_SQL_TS("g.deploy_key_created_at") ","                 \
	" " SW_SQL_TS("g.webhook_secret_created_at") ", " SW_SQL_TS("g.created_at") ","        \
	" " SW_SQL_TS("g.updated_at") ", g.credential_id, g.ssh_host_key,"                     \
	" " SW_SQL_TS("g.ssh_host_key_pinned_at")

const struct sw_db_stmt sw_db_stmt_git_source_put = {
	.name = "git_source_put",
	.sql = "WITH g AS (INSERT INTO git_sources AS s (application_id, organization_id,"
	       "  repository_url, branch, provider, deploy_public_key, deploy_key_fingerprint,"
	       "  deploy_private_key_sealed, webhook_secret_sealed, credential_id, ssh_host_key)"
	       "  SELECT a.id, a.organization_id, $4, $5, $6, $7, $8, $9, $10, $11::uuid, $12"
	       "  FROM applications a"
	       "  WHERE a.organization_id = $1::uuid AND a.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       "  ON CONFLICT (application_id) DO UPDATE SET repository_url = EXCLUDED.repository_url,"
	       "  branch = EXCLUDED.branch, provider = EXCLUDED.provider,"
	       "  credential_id = EXCLUDED.credential_id,"
	       "  ssh_host_key = CASE WHEN $13::bool THEN EXCLUDED.ssh_host_key ELSE s.ssh_host_key END,"
	       "  updated_at = now()"
	       "  RETURNING s.*, (s.xmax = 0) AS created)"
	       " SELECT " GIT_SOURCE_COLUMNS ", g.created FROM g",
	.nparams = 13,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = SW_DB_GIT_SOURCE_CREATED + 1,
		.action_sql = "CASE WHEN c14 THEN 'git_source.created' ELSE 'git_source.updated' END",
		.metadata_sql = "jsonb_build_object('provider', c4)" } /* c14 created, c4 provider */,
};

const struct sw_db_stmt sw_db_stmt_git_source_get = {
	.name = "git_source_get",
	.sql = "SELECT " GIT_SOURCE_COLUMNS " FROM git_sources g"
	       " WHERE g.organization_id = $1::uuid AND g.application_id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_git_source_update = {
	.name = "git_source_update",
	.sql = "WITH g AS (UPDATE git_sources SET " SW_SQL_SET("repository_url", 1, "$5") ","
	       " " SW_SQL_SET("branch", 2, "$6") ", " SW_SQL_SET("provider", 3, "$7") ","
	       " " SW_SQL_SET("credential_id", 4, "$8::uuid") ", " SW_SQL_SET("ssh_host_key", 5, "$9") ","
	       " updated_at = now()"
	       " WHERE organization_id = $1::uuid AND application_id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING *)"
	       " SELECT " GIT_SOURCE_COLUMNS " FROM g",
	.nparams = 9,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = SW_DB_GIT_SOURCE_PROVIDER + 1,
		.metadata_sql = "jsonb_build_object('provider', c4)" },
};

const struct sw_db_stmt sw_db_stmt_git_source_remove = {
	.name = "git_source_remove",
	.sql = "DELETE FROM git_sources WHERE organization_id = $1::uuid AND application_id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id",
	.nparams = 3,
	.audited = SW_DB_AUDITED(-1, -1),
};

const struct sw_db_stmt sw_db_stmt_git_source_deploy_key = {
	.name = "git_source_deploy_key",
	.sql = "UPDATE git_sources SET deploy_public_key = $3, deploy_key_fingerprint = $4,"
	       " deploy_private_key_sealed = $5, deploy_key_created_at = now(), updated_at = now()"
	       " WHERE organization_id = $1::uuid AND application_id = $2::uuid"
	       " RETURNING deploy_public_key, deploy_key_fingerprint,"
	       " " SW_SQL_TS("deploy_key_created_at"),
	.nparams = 5,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = 2,
		.metadata_sql = "jsonb_build_object('fingerprint', c1)" },
};

const struct sw_db_stmt sw_db_stmt_git_source_webhook_secret = {
	.name = "git_source_webhook_secret",
	.sql = "UPDATE git_sources SET webhook_secret_sealed = $3, webhook_secret_created_at = now(),"
	       " updated_at = now()"
	       " WHERE organization_id = $1::uuid AND application_id = $2::uuid"
	       " RETURNING " SW_SQL_TS("webhook_secret_created_at"),
	.nparams = 3,
	.audited = SW_DB_AUDITED(-1, -1),
};

#define GIT_CREDENTIAL_COLUMNS                                                                \
	"c.id, c.name, c.provider, c.api_base_url, c.username, c.token_hint,"                   \
	" " SW_SQL_TS("c.last_used_at") ", " SW_SQL_TS("c.created_at") ","                      \
	" " SW_SQL_TS("c.updated_at") ", " SW_SQL_US("c.created_at")

const struct sw_db_stmt sw_db_stmt_git_credential_create = {
	.name = "git_credential_create",
	.sql = "WITH c AS (INSERT INTO git_credentials (id, organization_id, created_by, name, provider,"
	       "  api_base_url, username, token_sealed, token_hint)"
	       "  VALUES ($2::uuid, $1::uuid, $3::uuid, $4, $5, $6, $7, $8, $9) RETURNING *)"
	       " SELECT " GIT_CREDENTIAL_COLUMNS " FROM c",
	.nparams = 9,
	.audited = SW_DB_AUDITED(SW_DB_GIT_CREDENTIAL_ID, SW_DB_GIT_CREDENTIAL_NAME),
};

const struct sw_db_stmt sw_db_stmt_git_credential_get = {
	.name = "git_credential_get",
	.sql = "SELECT " GIT_CREDENTIAL_COLUMNS " FROM git_credentials c"
	       " WHERE c.organization_id = $1::uuid AND c.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
};

const struct sw_db_stmt sw_db_stmt_git_credential_update = {
	.name = "git_credential_update",
	.sql = "WITH c AS (UPDATE git_credentials SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("api_base_url", 3, "$7") ", " SW_SQL_SET("username", 4, "$8") ","
	       " " SW_SQL_SET("token_sealed", 5, "$9") ", " SW_SQL_SET("token_hint", 5, "$10") ","
	       " updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " AND " SW_SQL_UNUSED("$6", "text") " RETURNING *)"
	       " SELECT " GIT_CREDENTIAL_COLUMNS " FROM c",
	.nparams = 10,
	.audited = SW_DB_AUDITED(SW_DB_GIT_CREDENTIAL_ID, SW_DB_GIT_CREDENTIAL_NAME),
};

const struct sw_db_stmt sw_db_stmt_git_credential_remove = {
	.name = "git_credential_remove",
	.sql = "DELETE FROM git_credentials WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id, name",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* Filters: provider, name (exact). */
const struct sw_db_stmt sw_db_stmt_git_credentials_list = {
	.name = "git_credentials_list",
	.sql = "SELECT " GIT_CREDENTIAL_COLUMNS " FROM git_credentials c"
	       " WHERE c.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR c.provider = $7) AND ($8::text IS NULL OR c.name = $8)"
	       SW_SQL_PAGE("c"),
	.nparams = 8,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_git_credential_use = {
	.name = "git_credential_use",
	.sql = "UPDATE git_credentials SET last_used_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " RETURNING provider, api_base_url, username, token_sealed",
	.nparams = 2,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_git_source_put,           &sw_db_stmt_git_source_get,
	&sw_db_stmt_git_source_update,        &sw_db_stmt_git_source_remove,
	&sw_db_stmt_git_source_deploy_key,    &sw_db_stmt_git_source_webhook_secret,
	&sw_db_stmt_git_credential_create,    &sw_db_stmt_git_credential_get,
	&sw_db_stmt_git_credential_update,    &sw_db_stmt_git_credential_remove,
	&sw_db_stmt_git_credentials_list,     &sw_db_stmt_git_credential_use,
};
const struct sw_db_stmt_group sw_db_git_statements = { list, SW_ARRAY_SIZE(list) };
