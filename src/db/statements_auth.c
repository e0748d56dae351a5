/* Statements of sessions, API tokens and the audit log (migration
 * 0002_sessions.sql). Secrets arrive only as the hex of their SHA-256.
 * Every revoke announces itself on the "steward_auth" channel inside its
 * own statement, so the announcement commits with it. Identifiers are
 * checked to be UUIDs before they reach these statements. */
#include "steward/db/statements.h"
#include "db/sql.h"

/* Session lifetime: 14 days after the last renewal; renewed (sliding) when
 * a request comes more than an hour after the last one. */
#define SESSION_TTL "interval '14 days'"

/* (user_id, token_hash_hex, method, ip, user_agent, organization_id or NULL)
 * -> id, organization_id, role, is_operator, expires_at (RFC 3339), method.
 * The session's organization is the given one or the user's oldest membership. */
const struct sw_db_stmt sw_db_stmt_session_create = {
	.name = "session_create",
	.sql = "WITH m AS ("
	       "  SELECT organization_id, role FROM memberships"
	       "  WHERE user_id = $1::uuid AND ($6::uuid IS NULL OR organization_id = $6::uuid)"
	       "  ORDER BY created_at, organization_id LIMIT 1),"
	       " s AS ("
	       "  INSERT INTO sessions (user_id, organization_id, token_hash, method, ip, user_agent, expires_at)"
	       "  SELECT $1::uuid, m.organization_id, decode($2, 'hex'), $3, $4, left($5, 256), now() + " SESSION_TTL
	       "  FROM m RETURNING id, organization_id, expires_at, method)"
	       " SELECT s.id, s.organization_id, m.role, u.is_operator, steward_rfc3339(s.expires_at), s.method"
	       " FROM s, m, users u WHERE u.id = $1::uuid",
	.nparams = 6,
	.audited = &(struct sw_db_audited){ .id_col = 0, .name_col = -1, .ncols = 2,
					    .organization_sql = "c1::uuid" } /* id, organization */,
};

/* The account of a credential, in enum sw_db_account_col order, after the
 * guard's own columns (SW_DB_RESOLVE_ACCOUNT_COL): cached with the
 * principal so that reading one's own account needs no round trip. */
#define ACCOUNT_COLUMNS                                                            \
	"u.id, u.email, u.name, u.is_operator, steward_rfc3339(u.created_at),"     \
	" o.id, o.name, steward_rfc3339(o.created_at), m.role"

/* (token_hash_hex) -> id, user_id, organization_id, role, is_operator,
 * expires_at as epoch milliseconds, needs_renewal, then ACCOUNT_COLUMNS.
 * No row: not a live session. */
const struct sw_db_stmt sw_db_stmt_session_resolve = {
	.name = "session_resolve",
	.sql = "SELECT s.id, s.user_id, s.organization_id, m.role, u.is_operator,"
	       " (extract(epoch FROM s.expires_at) * 1000)::bigint,"
	       " s.last_seen_at < now() - interval '1 hour', " ACCOUNT_COLUMNS
	       " FROM sessions s"
	       " JOIN users u ON u.id = s.user_id"
	       " JOIN memberships m ON m.user_id = s.user_id AND m.organization_id = s.organization_id"
	       " JOIN organizations o ON o.id = s.organization_id"
	       " WHERE s.token_hash = decode($1, 'hex') AND s.revoked_at IS NULL AND s.expires_at > now()",
	.nparams = 1,
	.reads_only = true,
};

/* (session_id) -> nothing: the sliding renewal. */
const struct sw_db_stmt sw_db_stmt_session_renew = {
	.name = "session_renew",
	.sql = "UPDATE sessions SET last_seen_at = now(), expires_at = now() + " SESSION_TTL
	       " WHERE id = $1::uuid AND revoked_at IS NULL",
	.nparams = 1,
};

/* (session_id, user_id) -> one row (the id) when a live session of that
 * user was revoked; none otherwise. */
const struct sw_db_stmt sw_db_stmt_session_revoke = {
	.name = "session_revoke",
	.sql = "WITH r AS (UPDATE sessions SET revoked_at = now()"
	       "  WHERE id = $1::uuid AND user_id = $2::uuid AND revoked_at IS NULL RETURNING id)"
	       " SELECT r.id, pg_notify('steward_auth', 'session:' || r.id) FROM r",
	.nparams = 2,
	.audited = SW_DB_AUDITED(0, -1) /* the session */,
};

/* (user_id, keep_session_id or NULL) -> one row: how many were revoked.
 * Revokes every live session of the user but the one kept. */
const struct sw_db_stmt sw_db_stmt_sessions_revoke_others = {
	.name = "sessions_revoke_others",
	.sql = "WITH r AS (UPDATE sessions SET revoked_at = now()"
	       "  WHERE user_id = $1::uuid AND revoked_at IS NULL"
	       "  AND ($2::uuid IS NULL OR id <> $2::uuid) RETURNING id)"
	       " SELECT count(*), pg_notify('steward_auth', 'user:' || $1) FROM r",
	.nparams = 2,
};

/* (user_id) -> id, method, ip, user_agent, created_at, last_seen_at,
 * expires_at (microseconds since 1970, SW_SQL_TS_US): the user's live
 * sessions, most recent first. */
const struct sw_db_stmt sw_db_stmt_sessions_list = {
	.name = "sessions_list",
	.sql = "SELECT id, method, ip, user_agent, " SW_SQL_TS_US("created_at") ","
	       " " SW_SQL_TS_US("last_seen_at") ", " SW_SQL_TS_US("expires_at")
	       " FROM sessions WHERE user_id = $1::uuid AND revoked_at IS NULL AND expires_at > now()"
	       " ORDER BY last_seen_at DESC, id LIMIT 200",
	.nparams = 1,
	.reads_only = true,
};

/* (user_id, organization_id) -> user id, email, name, is_operator,
 * created_at, organization id, name, created_at, role. */
const struct sw_db_stmt sw_db_stmt_account = {
	.name = "account",
	.sql = "SELECT u.id, u.email, u.name, u.is_operator, steward_rfc3339(u.created_at),"
	       " o.id, o.name, steward_rfc3339(o.created_at), m.role"
	       " FROM users u JOIN memberships m ON m.user_id = u.id"
	       " JOIN organizations o ON o.id = m.organization_id"
	       " WHERE u.id = $1::uuid AND o.id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

/* (user_id) -> password_hash. */
const struct sw_db_stmt sw_db_stmt_user_password_hash = {
	.name = "user_password_hash",
	.sql = "SELECT password_hash FROM users WHERE id = $1::uuid",
	.nparams = 1,
};

/* (user_id, new_hash, keep_session_id or NULL) -> one row: sessions
 * revoked. Sets the password and revokes every other session, in one
 * transaction. */
const struct sw_db_stmt sw_db_stmt_password_change = {
	.name = "password_change",
	.sql = "WITH p AS (UPDATE users SET password_hash = $2, updated_at = now()"
	       "  WHERE id = $1::uuid RETURNING id),"
	       " r AS (UPDATE sessions SET revoked_at = now()"
	       "  WHERE user_id = (SELECT id FROM p) AND revoked_at IS NULL"
	       "  AND ($3::uuid IS NULL OR id <> $3::uuid) RETURNING id)"
	       " SELECT (SELECT count(*) FROM r), pg_notify('steward_auth', 'user:' || $1) FROM p",
	.nparams = 3,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = 1,
		.metadata_sql = "jsonb_build_object('sessionsRevoked', c0)" },
};

/* (token_hash_hex) -> id, user_id, organization_id, role, is_operator,
 * expires_at epoch ms or NULL, needs_touch, then ACCOUNT_COLUMNS. No row:
 * not a live token. */
const struct sw_db_stmt sw_db_stmt_token_resolve = {
	.name = "token_resolve",
	.sql = "SELECT t.id, t.user_id, t.organization_id, m.role, u.is_operator,"
	       " (extract(epoch FROM t.expires_at) * 1000)::bigint,"
	       " t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute', " ACCOUNT_COLUMNS
	       " FROM api_tokens t"
	       " JOIN users u ON u.id = t.user_id"
	       " JOIN memberships m ON m.user_id = t.user_id AND m.organization_id = t.organization_id"
	       " JOIN organizations o ON o.id = t.organization_id"
	       " WHERE t.token_hash = decode($1, 'hex') AND t.revoked_at IS NULL"
	       " AND (t.expires_at IS NULL OR t.expires_at > now())",
	.nparams = 1,
	.reads_only = true,
};

/* (token_id) -> nothing: records last use (at most once a minute). */
const struct sw_db_stmt sw_db_stmt_token_touch = {
	.name = "token_touch",
	.sql = "UPDATE api_tokens SET last_used_at = now() WHERE id = $1::uuid",
	.nparams = 1,
};

/* (organization_id or NULL, actor_user_id or NULL, action, target_type,
 * target_id, ip, metadata JSON text) -> nothing. */
const struct sw_db_stmt sw_db_stmt_audit_insert = {
	.name = "audit_insert",
	.sql = "INSERT INTO audit_logs (organization_id, actor_user_id, action, target_type, target_id, ip, metadata)"
	       " VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, coalesce($7::jsonb, '{}'::jsonb))",
	.nparams = 7,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_session_create,
	&sw_db_stmt_session_resolve,
	&sw_db_stmt_session_renew,
	&sw_db_stmt_session_revoke,
	&sw_db_stmt_sessions_revoke_others,
	&sw_db_stmt_sessions_list,
	&sw_db_stmt_account,
	&sw_db_stmt_user_password_hash,
	&sw_db_stmt_password_change,
	&sw_db_stmt_token_resolve,
	&sw_db_stmt_token_touch,
	&sw_db_stmt_audit_insert,
};

const struct sw_db_stmt_group sw_db_auth_statements = { list, SW_ARRAY_SIZE(list) };
