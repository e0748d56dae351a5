/* Statements of passkeys (migration 0005_passkeys.sql; columns in
 * statements_passkeys.h).
 *
 * Every challenge is consumed by a DELETE ... RETURNING in the statement
 * that presents it: of two requests carrying the same challenge exactly
 * one gets the row, whatever the verification later decides. */
#include "steward/db/statements_passkeys.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The record columns (enum sw_db_passkey_col) of table alias t. */
#define PASSKEY_COLUMNS(t)                                                              \
	t ".id, " t ".name, encode(" t ".credential_id, 'hex'), " t ".algorithm, "      \
	t ".device_type, " t ".backed_up, " t ".sign_count, "                           \
	"array_to_string(" t ".transports, ','), " t ".aaguid, "                        \
	"steward_rfc3339(" t ".created_at), steward_rfc3339(" t ".last_used_at)"

/* (user_id) -> e-mail, name, passkey count, hex credential ids (for the
 * creation options and their excludeCredentials). */
const struct sw_db_stmt sw_db_stmt_passkey_user_state = {
	.name = "passkey_user_state",
	.sql = "SELECT u.email, u.name,"
	       " (SELECT count(*) FROM passkeys p WHERE p.user_id = u.id),"
	       " (SELECT string_agg(encode(p.credential_id, 'hex'), ',' ORDER BY p.created_at, p.id)"
	       "  FROM passkeys p WHERE p.user_id = u.id)"
	       " FROM users u WHERE u.id = $1::uuid",
	.nparams = 1,
};

/* (user_id, challenge_hash_hex, expires_at as Unix seconds) -> one row
 * when the registration's challenge is used up now; none when it was used
 * before (a replay). A registration stores nothing until it is confirmed
 * (the challenge is stateless, src/api/passkey_registration.c): this table
 * holds the challenges already answered, until they expire, and this is
 * its one insert. Long-expired ones of the user go in the same statement
 * (an expired challenge is refused before any query). */
const struct sw_db_stmt sw_db_stmt_passkey_registration_consume = {
	.name = "passkey_registration_consume",
	.sql = "WITH gc AS (DELETE FROM passkey_registrations WHERE user_id = $1::uuid"
	       "  AND expires_at < now() - interval '1 hour')"
	       " INSERT INTO passkey_registrations (challenge_hash, user_id, expires_at)"
	       " VALUES (decode($2, 'hex'), $1::uuid, to_timestamp($3::bigint))"
	       " ON CONFLICT (challenge_hash) DO NOTHING RETURNING true",
	.nparams = 3,
};

/* (user_id, credential_id_hex, public_key_hex, algorithm, sign_count,
 * device_type, backed_up, name, transports as a text array literal,
 * aaguid_hex, attestation_format) -> one row: outcome "CREATED" then the
 * record columns; or "EXISTS" (the credential id is registered, to
 * anyone) or "LIMIT" (SW_PASSKEYS_PER_USER_MAX reached) with NULLs.
 * Concurrent confirmations may pass the cap by a few, which is all the
 * cap is for. */
const struct sw_db_stmt sw_db_stmt_passkey_create = {
	.name = "passkey_create",
	.sql = "WITH n AS (SELECT count(*) AS held FROM passkeys WHERE user_id = $1::uuid),"
	       " i AS (INSERT INTO passkeys (user_id, credential_id, public_key, algorithm, sign_count,"
	       "   device_type, backed_up, name, transports, aaguid, attestation_format)"
	       "  SELECT $1::uuid, decode($2, 'hex'), decode($3, 'hex'), $4::int, $5::bigint, $6,"
	       "   $7::boolean, $8, $9::text[], $10::uuid, $11"
	       "  FROM n WHERE n.held < " STR(SW_PASSKEYS_PER_USER_MAX)
	       "  ON CONFLICT (credential_id) DO NOTHING RETURNING *)"
	       " SELECT CASE WHEN i.id IS NOT NULL THEN 'CREATED'"
	       "  WHEN n.held >= " STR(SW_PASSKEYS_PER_USER_MAX) " THEN 'LIMIT' ELSE 'EXISTS' END, "
	       PASSKEY_COLUMNS("i")
	       " FROM n LEFT JOIN i ON true",
	.nparams = 11,
	.audited = &(struct sw_db_audited){ .id_col = 1, .name_col = -1, .ncols = 2,
					    .when_sql = "c0 = 'CREATED'" } /* outcome, the record */,
};

/* (user_id) -> the user's passkeys (record columns), oldest first. */
const struct sw_db_stmt sw_db_stmt_passkeys_list = {
	.name = "passkeys_list",
	.sql = "SELECT " PASSKEY_COLUMNS("p") " FROM passkeys p WHERE p.user_id = $1::uuid"
	       " ORDER BY p.created_at, p.id",
	.nparams = 1,
	.reads_only = true,
};

/* (user_id, passkey_id, name) -> the renamed record; none when the user
 * holds no such passkey. */
const struct sw_db_stmt sw_db_stmt_passkey_rename = {
	.name = "passkey_rename",
	.sql = "UPDATE passkeys AS p SET name = $3, updated_at = now()"
	       " WHERE p.id = $2::uuid AND p.user_id = $1::uuid"
	       " RETURNING " PASSKEY_COLUMNS("p"),
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1) /* id, name */,
};

/* (user_id, passkey_id) -> one row (id, name: the first two record
 * columns) when deleted; none when the user holds no such passkey. */
const struct sw_db_stmt sw_db_stmt_passkey_delete = {
	.name = "passkey_delete",
	.sql = "DELETE FROM passkeys WHERE id = $2::uuid AND user_id = $1::uuid RETURNING id, name",
	.nparams = 2,
	.audited = SW_DB_AUDITED(0, 1) /* id, name */,
};

/* (challenge_hash_hex, lifetime_seconds) -> expires_at (RFC 3339). Clears
 * up to SW_PASSKEY_CHALLENGE_GC_BATCH expired challenges on the way (ones
 * another request is clearing are skipped). */
const struct sw_db_stmt sw_db_stmt_passkey_challenge_create = {
	.name = "passkey_challenge_create",
	.sql = "WITH gc AS (DELETE FROM passkey_challenges WHERE challenge_hash IN ("
	       "  SELECT challenge_hash FROM passkey_challenges WHERE expires_at <= now()"
	       "  LIMIT " STR(SW_PASSKEY_CHALLENGE_GC_BATCH) " FOR UPDATE SKIP LOCKED))"
	       " INSERT INTO passkey_challenges (challenge_hash, expires_at)"
	       " VALUES (decode($1, 'hex'), now() + make_interval(secs => $2::int))"
	       " RETURNING steward_rfc3339(expires_at)",
	.nparams = 2,
};

/* (challenge_hash_hex, credential_id_hex) -> one row: whether the
 * challenge was live (it is deleted either way), then the passkey with
 * that credential id (NULLs when none). */
const struct sw_db_stmt sw_db_stmt_passkey_sign_in_begin = {
	.name = "passkey_sign_in_begin",
	.sql = "WITH c AS (DELETE FROM passkey_challenges WHERE challenge_hash = decode($1, 'hex')"
	       "  RETURNING expires_at > now() AS live)"
	       " SELECT coalesce((SELECT bool_or(live) FROM c), false), p.id, p.user_id,"
	       " encode(p.public_key, 'hex'), p.sign_count, p.device_type"
	       " FROM (SELECT 1) AS one LEFT JOIN passkeys p ON p.credential_id = decode($2, 'hex')",
	.nparams = 2,
};

/* (passkey_id, sign_count, backed_up) -> one row (user_id) when the
 * passkey still exists: records a verified assertion. */
const struct sw_db_stmt sw_db_stmt_passkey_used = {
	.name = "passkey_used",
	.sql = "UPDATE passkeys SET sign_count = $2::bigint, backed_up = $3::boolean,"
	       " last_used_at = now(), updated_at = now()"
	       " WHERE id = $1::uuid RETURNING user_id",
	.nparams = 3,
	.audited = &(struct sw_db_audited){ .id_col = -1, .name_col = -1, .ncols = 1,
					    .actor_sql = "c0::uuid" } /* by its user */,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_passkey_user_state,
	&sw_db_stmt_passkey_registration_consume,
	&sw_db_stmt_passkey_create,
	&sw_db_stmt_passkeys_list,
	&sw_db_stmt_passkey_rename,
	&sw_db_stmt_passkey_delete,
	&sw_db_stmt_passkey_challenge_create,
	&sw_db_stmt_passkey_sign_in_begin,
	&sw_db_stmt_passkey_used,
};

const struct sw_db_stmt_group sw_db_passkeys_statements = { list, SW_ARRAY_SIZE(list) };
