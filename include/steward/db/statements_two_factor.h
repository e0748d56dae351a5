/* Statements of two-factor authentication (statements_two_factor.c,
 * migrations 0004_two_factor.sql, 0017_two_factor_sealed.sql). A TOTP key
 * arrives sealed under the master key (bound to "totp:<user id>"); codes
 * and challenges as the hex of their SHA-256; identifiers are checked to be
 * UUIDs (or come from the database) before they reach these statements. */
#ifndef STEWARD_DB_STATEMENTS_TWO_FACTOR_H
#define STEWARD_DB_STATEMENTS_TWO_FACTOR_H

#include "steward/db/statements.h"

/* Columns of sw_db_stmt_two_factor_state (one row; none: no such user). */
enum sw_db_two_factor_state_col {
	SW_DB_TWO_FACTOR_PASSWORD_HASH,
	SW_DB_TWO_FACTOR_EMAIL,
	SW_DB_TWO_FACTOR_STATE,          /* "NONE", "PENDING" or "ENABLED" */
	SW_DB_TWO_FACTOR_RECOVERY_LEFT,  /* unused recovery codes */
	SW_DB_TWO_FACTOR_ENABLED_AT,     /* RFC 3339, NULL unless ENABLED */
	SW_DB_TWO_FACTOR_STORED_KEY,     /* the key sealed ("v1.", or legacy hex); NULL when NONE */
	SW_DB_TWO_FACTOR_LAST_USED_STEP, /* NULL when NONE */
};

/* Columns of sw_db_stmt_two_factor_challenge_resolve (zero or one row). */
enum sw_db_two_factor_challenge_col {
	SW_DB_TWO_FACTOR_CHALLENGE_ID,
	SW_DB_TWO_FACTOR_CHALLENGE_USER_ID,
	SW_DB_TWO_FACTOR_CHALLENGE_STORED_KEY, /* as SW_DB_TWO_FACTOR_STORED_KEY */
	SW_DB_TWO_FACTOR_CHALLENGE_LAST_USED_STEP,
};

/* Columns of sw_db_stmt_two_factor_attempt (one row). */
enum sw_db_two_factor_attempt_col {
	SW_DB_TWO_FACTOR_ATTEMPT_OUTCOME,   /* "ACCEPTED", "REJECTED", "CHALLENGE_INVALID" */
	SW_DB_TWO_FACTOR_ATTEMPT_REMAINING, /* recovery codes left, or attempts left */
	SW_DB_TWO_FACTOR_ATTEMPT_USER_ID,
};

extern const struct sw_db_stmt sw_db_stmt_two_factor_state;
extern const struct sw_db_stmt sw_db_stmt_two_factor_enrol;
extern const struct sw_db_stmt sw_db_stmt_two_factor_enable;
extern const struct sw_db_stmt sw_db_stmt_two_factor_disable;
extern const struct sw_db_stmt sw_db_stmt_two_factor_challenge_create;
extern const struct sw_db_stmt sw_db_stmt_two_factor_challenge_resolve;
extern const struct sw_db_stmt sw_db_stmt_two_factor_attempt;

#endif
