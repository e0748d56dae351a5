/* Statements of domains (migration 0009). A hostname is unique across the
 * installation (23505 on create) and an application has at most
 * SW_DOMAINS_MAX of them (steward_domain_create raises SW409). */
#include "steward/base/limits.h"
#include "db/sql.h"
#include "steward/db/statements_domains.h"

#define DOMAIN_COLUMNS                                                                              \
	"d.id, d.application_id, d.hostname,"                                                       \
	" CASE WHEN d.verified_at IS NULL THEN 'PENDING' ELSE 'VERIFIED' END,"                      \
	" d.verification_token, d.verification_method, " SW_SQL_TS("d.verified_at") ","             \
	" " SW_SQL_TS("d.last_checked_at") ", d.last_check_error,"                                   \
	" jsonb_build_object("                                                                       \
	"  'dns', jsonb_build_object('type', 'TXT', 'name', '_steward-challenge.' || d.hostname,"    \
	"   'value', d.verification_token),"                                                         \
	"  'http', jsonb_build_object('url', 'http://' || d.hostname"                                \
	"   || '/.well-known/steward-challenge/' || d.verification_token,"                           \
	"   'body', d.verification_token))::text,"                                                   \
	" " SW_SQL_TS("d.created_at") ", " SW_SQL_TS("d.updated_at") ", " SW_SQL_US("d.created_at")

/* Fields: hostname. */
const struct sw_db_stmt sw_db_stmt_domain_create = {
	.name = "domain_create",
	.sql = "SELECT " DOMAIN_COLUMNS " FROM steward_domain_create($1::uuid, $2::uuid, $4,"
	       " " SW_SQL_STR(SW_DOMAINS_MAX) ") d WHERE " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 4,
	.audited = SW_DB_AUDITED(SW_DB_DOMAIN_ID, -1),
};

const struct sw_db_stmt sw_db_stmt_domain_get = {
	.name = "domain_get",
	.sql = "SELECT " DOMAIN_COLUMNS " FROM domains d"
	       " WHERE d.organization_id = $1::uuid AND d.id = $2::uuid AND d.application_id = $3::uuid",
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_domain_remove = {
	.name = "domain_remove",
	.sql = "DELETE FROM domains WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND application_id = $3::uuid RETURNING id, hostname",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, -1), /* id, hostname */
};

/* Filters: status (PENDING, VERIFIED), hostname (exact). */
const struct sw_db_stmt sw_db_stmt_domains_list = {
	.name = "domains_list",
	.sql = "SELECT " DOMAIN_COLUMNS " FROM domains d"
	       " WHERE d.organization_id = $1::uuid AND d.application_id = $2::uuid"
	       " AND ($7::text IS NULL OR $7 = CASE WHEN d.verified_at IS NULL THEN 'PENDING'"
	       "  ELSE 'VERIFIED' END)"
	       " AND ($8::text IS NULL OR d.hostname = $8)" SW_SQL_PAGE("d"),
	.nparams = 8,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_domain_application = {
	.name = "domain_application",
	.sql = "SELECT 1 FROM applications WHERE organization_id = $1::uuid AND id = $2::uuid",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_domain_by_id = {
	.name = "domain_by_id",
	.sql = "SELECT " DOMAIN_COLUMNS " FROM domains d"
	       " WHERE d.organization_id = $1::uuid AND d.id = $2::uuid",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_domain_check_record = {
	.name = "domain_check_record",
	.sql = "WITH d AS (UPDATE domains SET last_checked_at = now(), last_check_error = $4,"
	       " verified_at = CASE WHEN $3::text IS NULL THEN verified_at ELSE now() END,"
	       " verification_method = coalesce($3, verification_method), updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid RETURNING *)"
	       " SELECT " DOMAIN_COLUMNS " FROM d",
	.nparams = 4,
	/* Recorded when the domain is verified (c3 status), with its hostname
	 * (c2) and the method that proved it (c5). */
	.audited = &(struct sw_db_audited){
		.id_col = SW_DB_DOMAIN_ID, .name_col = -1, .ncols = SW_DB_DOMAIN_METHOD + 1,
		.metadata_sql = "jsonb_build_object('hostname', c2, 'method', c5)",
		.when_sql = "c3 = 'VERIFIED'" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_domain_create,      &sw_db_stmt_domain_get,    &sw_db_stmt_domain_remove,
	&sw_db_stmt_domains_list,       &sw_db_stmt_domain_application, &sw_db_stmt_domain_by_id,
	&sw_db_stmt_domain_check_record,
};
const struct sw_db_stmt_group sw_db_domains_statements = { list, SW_ARRAY_SIZE(list) };
