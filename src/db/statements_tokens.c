/* Statements of API tokens (table api_tokens, migration 0002_sessions.sql).
 * A token arrives only as the hex of its SHA-256 and its display prefix.
 * A revoke announces itself on the "steward_auth" channel inside its own
 * statement, so the announcement commits with it. Identifiers are checked
 * to be UUIDs before they reach these statements. */
#include "steward/db/statements_tokens.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The columns every statement here returns, in this order: id, name,
 * prefix, created_at, expires_at, last_used_at, revoked_at (RFC 3339 or
 * NULL). */
#define TOKEN_COLUMNS                                                                 \
	"id, name, prefix, steward_rfc3339(created_at), steward_rfc3339(expires_at),"  \
	" steward_rfc3339(last_used_at), steward_rfc3339(revoked_at)"

/* (user_id, organization_id, name, prefix, token_hash_hex, expires_in_days
 * or NULL) -> one row (TOKEN_COLUMNS), or none when the user already holds
 * SW_API_TOKENS_LIVE_MAX live tokens in the organization. The count and the
 * insert are one statement; concurrent issues may pass the cap by a few,
 * which is all the cap is for (a bound, not a quota). */
const struct sw_db_stmt sw_db_stmt_token_create = {
	.name = "token_create",
	.sql = "INSERT INTO api_tokens (user_id, organization_id, name, prefix, token_hash, expires_at)"
	       " SELECT $1::uuid, $2::uuid, $3, $4, decode($5, 'hex'),"
	       "  now() + make_interval(days => $6::int)"
	       " WHERE (SELECT count(*) FROM api_tokens WHERE user_id = $1::uuid"
	       "  AND organization_id = $2::uuid AND revoked_at IS NULL"
	       "  AND (expires_at IS NULL OR expires_at > now())) < " STR(SW_API_TOKENS_LIVE_MAX)
	       " RETURNING " TOKEN_COLUMNS,
	.nparams = 6,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

/* (user_id, organization_id) -> TOKEN_COLUMNS: live tokens first, then
 * revoked or expired ones, newest first within each. */
const struct sw_db_stmt sw_db_stmt_tokens_list = {
	.name = "tokens_list",
	.sql = "SELECT " TOKEN_COLUMNS " FROM api_tokens"
	       " WHERE user_id = $1::uuid AND organization_id = $2::uuid"
	       " ORDER BY (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())) DESC,"
	       " created_at DESC, id"
	       " LIMIT " STR(SW_API_TOKENS_LIST_MAX),
	.nparams = 2,
	.reads_only = true,
};

/* (token_id, user_id, organization_id) -> one row: id, name, revoked now
 * ("t" when this call revoked it, "f" when it was revoked before); no row
 * when the user has no such token in the organization. */
const struct sw_db_stmt sw_db_stmt_token_revoke = {
	.name = "token_revoke",
	.sql = "WITH t AS (SELECT id, name FROM api_tokens"
	       "  WHERE id = $1::uuid AND user_id = $2::uuid AND organization_id = $3::uuid),"
	       " r AS (UPDATE api_tokens SET revoked_at = now()"
	       "  WHERE id IN (SELECT id FROM t) AND revoked_at IS NULL RETURNING id),"
	       " n AS (SELECT pg_notify('steward_auth', 'token:' || id) FROM r)"
	       " SELECT t.id, t.name, (SELECT count(*) FROM n) > 0 FROM t",
	.nparams = 3,
	/* Recorded only when this call revoked it (c2). */
	.audited = &(struct sw_db_audited){ .id_col = 0, .name_col = 1, .ncols = 3, .when_sql = "c2" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_token_create,
	&sw_db_stmt_tokens_list,
	&sw_db_stmt_token_revoke,
};

const struct sw_db_stmt_group sw_db_tokens_statements = { list, SW_ARRAY_SIZE(list) };
