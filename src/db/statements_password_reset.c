/* Statements of password reset (migration 0003_password_reset.sql).
 *
 * A user has at most one live (unused) reset token: a new request replaces
 * it in place (the partial unique index makes that an upsert, so two
 * concurrent requests still leave one). Using a token, setting the
 * password and revoking every session of the user is one statement, so a
 * token is spent exactly once and never without its effect. */
#include "steward/db/statements_password_reset.h"

/* (email, token_hash_hex, ip, ttl_seconds) -> user id, email: one row when
 * the address belongs to a user (whose live token is now this one), none
 * otherwise. */
const struct sw_db_stmt sw_db_stmt_password_reset_create = {
	.name = "password_reset_create",
	.sql = "WITH u AS (SELECT id, email FROM users WHERE lower(email) = lower($1)),"
	       " t AS (INSERT INTO password_reset_tokens (user_id, token_hash, ip, expires_at)"
	       "  SELECT id, decode($2, 'hex'), $3, now() + make_interval(secs => $4::int) FROM u"
	       "  ON CONFLICT (user_id) WHERE used_at IS NULL DO UPDATE SET"
	       "   token_hash = excluded.token_hash, ip = excluded.ip, created_at = now(),"
	       "   expires_at = excluded.expires_at"
	       "  RETURNING user_id)"
	       " SELECT u.id, u.email FROM u JOIN t ON t.user_id = u.id",
	.nparams = 4,	.audited = SW_DB_AUDITED(0, -1), /* the user */
};

/* (token_hash_hex) -> user id: one row while the token is unused and
 * unexpired. A cheap look before the Argon2id work; the confirm below
 * checks again. */
const struct sw_db_stmt sw_db_stmt_password_reset_check = {
	.name = "password_reset_check",
	.sql = "SELECT user_id FROM password_reset_tokens"
	       " WHERE token_hash = decode($1, 'hex') AND used_at IS NULL AND expires_at > now()",
	.nparams = 1,
};

/* (token_hash_hex, new_password_hash) -> user id, email, sessions revoked:
 * one row when the token was live; it is then used, the password set and
 * every session of the user revoked (announced on steward_auth). None: the
 * token is unknown, used or expired. */
const struct sw_db_stmt sw_db_stmt_password_reset_confirm = {
	.name = "password_reset_confirm",
	.sql = "WITH t AS (UPDATE password_reset_tokens SET used_at = now()"
	       "  WHERE token_hash = decode($1, 'hex') AND used_at IS NULL AND expires_at > now()"
	       "  RETURNING user_id),"
	       " p AS (UPDATE users SET password_hash = $2, updated_at = now()"
	       "  WHERE id = (SELECT user_id FROM t) RETURNING id, email),"
	       " r AS (UPDATE sessions SET revoked_at = now()"
	       "  WHERE user_id = (SELECT id FROM p) AND revoked_at IS NULL RETURNING id)"
	       " SELECT p.id, p.email, (SELECT count(*) FROM r), pg_notify('steward_auth', 'user:' || p.id)"
	       " FROM p",
	.nparams = 2,	/* By the user (c0), with the sessions it revoked (c2). */
	.audited = &(struct sw_db_audited){
		.id_col = 0, .name_col = -1, .ncols = 3, .actor_sql = "c0::uuid",
		.metadata_sql = "jsonb_build_object('sessionsRevoked', c2::bigint)" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_password_reset_create,
	&sw_db_stmt_password_reset_check,
	&sw_db_stmt_password_reset_confirm,
};

const struct sw_db_stmt_group sw_db_password_reset_statements = { list, SW_ARRAY_SIZE(list) };
