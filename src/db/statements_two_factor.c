/* Statements of two-factor authentication (migration 0004_two_factor.sql;
 * columns in statements_two_factor.h).
 *
 * The writes that decide a race do it in the statement itself: enrolment
 * never replaces an enabled key, confirmation enables only the key that
 * was checked and only with a step newer than the last one used, and an
 * attempt at a challenge (steward_two_factor_attempt) moves the last used
 * step or marks the recovery code used with a conditional UPDATE, so two
 * concurrent requests with the same code cannot both succeed. */
#include "steward/db/statements_two_factor.h"

/* (user_id) -> password_hash, email, state, unused recovery codes,
 * enabled_at, the key as stored (sealed, or legacy hex), last_used_step. */
const struct sw_db_stmt sw_db_stmt_two_factor_state = {
	.name = "two_factor_state",
	.sql = "SELECT u.password_hash, u.email,"
	       " CASE WHEN t.user_id IS NULL THEN 'NONE'"
	       "  WHEN t.enabled_at IS NULL THEN 'PENDING' ELSE 'ENABLED' END,"
	       " (SELECT count(*) FROM two_factor_recovery_codes r"
	       "  WHERE r.user_id = u.id AND r.used_at IS NULL),"
	       " steward_rfc3339(t.enabled_at), coalesce(t.secret_sealed, encode(t.secret, 'hex')),"
	       " t.last_used_step"
	       " FROM users u LEFT JOIN two_factor t ON t.user_id = u.id WHERE u.id = $1::uuid",
	.nparams = 1,
};

/* (user_id, sealed key) -> one row when the key was stored as a pending
 * enrolment (replacing a pending one); none when two-factor is enabled. */
const struct sw_db_stmt sw_db_stmt_two_factor_enrol = {
	.name = "two_factor_enrol",
	.sql = "INSERT INTO two_factor AS t (user_id, secret_sealed) VALUES ($1::uuid, $2)"
	       " ON CONFLICT (user_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed,"
	       "  secret = NULL, last_used_step = -1,"
	       "  created_at = now(), updated_at = now()"
	       " WHERE t.enabled_at IS NULL"
	       " RETURNING t.user_id",
	.nparams = 2,	.audited = SW_DB_AUDITED(0, -1) /* user_id */,
};

/* (user_id, step, the key as read (stored form), recovery hashes as a text array literal of
 * hex digests "{ab..,cd..}") -> one row: the recovery codes stored; 0 when
 * the pending key is no longer the one checked, is enabled already, or the
 * step is not newer than the last used one. */
const struct sw_db_stmt sw_db_stmt_two_factor_enable = {
	.name = "two_factor_enable",
	.sql = "WITH t AS (UPDATE two_factor SET enabled_at = now(), last_used_step = $2::bigint,"
	       "  updated_at = now()"
	       "  WHERE user_id = $1::uuid AND enabled_at IS NULL AND last_used_step < $2::bigint"
	       "  AND coalesce(secret_sealed, encode(secret, 'hex')) = $3 RETURNING user_id),"
	       " i AS (INSERT INTO two_factor_recovery_codes (user_id, code_hash)"
	       "  SELECT t.user_id, decode(h, 'hex') FROM t, unnest($4::text[]) AS h RETURNING 1)"
	       " SELECT count(*) FROM i",
	.nparams = 4,	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .when_sql = "c0 > 0" /* enabled: codes stored */ },
};

/* (user_id) -> one row (was_enabled "t"/"f") when an enrolment, enabled
 * or pending, was deleted with its recovery codes and challenges; none
 * when there was none. */
const struct sw_db_stmt sw_db_stmt_two_factor_disable = {
	.name = "two_factor_disable",
	.sql = "WITH d AS (DELETE FROM two_factor WHERE user_id = $1::uuid"
	       "  RETURNING enabled_at IS NOT NULL AS was_enabled),"
	       " c AS (DELETE FROM two_factor_challenges WHERE user_id = $1::uuid)"
	       " SELECT was_enabled FROM d",
	.nparams = 1,	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = 1,
		.action_sql = "CASE WHEN c0 THEN 'auth.two_factor.disabled'"
			      " ELSE 'auth.two_factor.enrolment_cancelled' END" },
};

/* (user_id, token_hash_hex, lifetime_seconds) -> one row, expires_at (RFC
 * 3339), when the user has two-factor enabled: a new challenge. None
 * otherwise (nothing written). Drops the user's dead challenges. */
const struct sw_db_stmt sw_db_stmt_two_factor_challenge_create = {
	.name = "two_factor_challenge_create",
	.sql = "WITH gc AS (DELETE FROM two_factor_challenges WHERE user_id = $1::uuid"
	       "  AND (used_at IS NOT NULL OR expires_at <= now())),"
	       " i AS (INSERT INTO two_factor_challenges (user_id, token_hash, expires_at)"
	       "  SELECT t.user_id, decode($2, 'hex'), now() + make_interval(secs => $3::int)"
	       "  FROM two_factor t WHERE t.user_id = $1::uuid AND t.enabled_at IS NOT NULL"
	       "  RETURNING expires_at)"
	       " SELECT steward_rfc3339(expires_at) FROM i",
	.nparams = 3,
};

/* (token_hash_hex, max_failures) -> id, user_id, the key as stored,
 * last_used_step of a live challenge whose user has two-factor enabled;
 * no row otherwise (unknown, used, expired, failed too often, disabled). */
const struct sw_db_stmt sw_db_stmt_two_factor_challenge_resolve = {
	.name = "two_factor_challenge_resolve",
	.sql = "SELECT c.id, c.user_id, coalesce(t.secret_sealed, encode(t.secret, 'hex')),"
	       " t.last_used_step"
	       " FROM two_factor_challenges c"
	       " JOIN two_factor t ON t.user_id = c.user_id AND t.enabled_at IS NOT NULL"
	       " WHERE c.token_hash = decode($1, 'hex') AND c.used_at IS NULL"
	       " AND c.expires_at > now() AND c.failed_attempts < $2::int",
	.nparams = 2,
};

/* (challenge_id, max_failures, matched step or NULL, recovery code hash
 * hex or NULL) -> outcome, remaining, user_id (see the function). */
const struct sw_db_stmt sw_db_stmt_two_factor_attempt = {
	.name = "two_factor_attempt",
	.sql = "SELECT outcome, remaining, user_id, $5::text"
	       " FROM steward_two_factor_attempt($1::uuid, $2::int, $3::bigint, decode($4, 'hex'))",
	.nparams = 5,
	/* Recorded with the attempt it counts: verified, or verify_failed with
	 * the reason the caller saw ($5, c3) and the attempts left (c1). An
	 * invalid challenge records nothing (no attempt was made). */
	.audited = &(struct sw_db_audited){
		.id_col = 2, .name_col = -1, .ncols = 4, .actor_sql = "c2::uuid",
		.action_sql = "CASE WHEN c0 = 'ACCEPTED' THEN 'auth.two_factor.verified'"
			      " ELSE 'auth.two_factor.verify_failed' END",
		.metadata_sql = "CASE WHEN c0 = 'REJECTED' THEN jsonb_build_object('reason', c3,"
				" 'attemptsRemaining', c1::bigint) ELSE '{}'::jsonb END",
		.when_sql = "c0 IN ('ACCEPTED', 'REJECTED')" },
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_two_factor_state,
	&sw_db_stmt_two_factor_enrol,
	&sw_db_stmt_two_factor_enable,
	&sw_db_stmt_two_factor_disable,
	&sw_db_stmt_two_factor_challenge_create,
	&sw_db_stmt_two_factor_challenge_resolve,
	&sw_db_stmt_two_factor_attempt,
};

const struct sw_db_stmt_group sw_db_two_factor_statements = { list, SW_ARRAY_SIZE(list) };
