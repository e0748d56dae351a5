/* Statements of passkeys (statements_passkeys.c, migration
 * 0005_passkeys.sql). Byte strings (credential ids, COSE keys, AAGUIDs,
 * challenge hashes) travel as hex in both directions; identifiers are
 * checked to be UUIDs (or come from the database) before they reach these
 * statements. */
#ifndef STEWARD_DB_STATEMENTS_PASSKEYS_H
#define STEWARD_DB_STATEMENTS_PASSKEYS_H

#include "steward/db/statements.h"

/* Passkeys one user may hold; sw_db_stmt_passkey_create stores none past
 * it (a bound on excludeCredentials and on the list, not a quota). */
#define SW_PASSKEYS_PER_USER_MAX 20
/* Expired sign-in challenges one new challenge clears on its way in. */
#define SW_PASSKEY_CHALLENGE_GC_BATCH 100

/* Columns of sw_db_stmt_passkey_user_state (one row; none: no such user). */
enum sw_db_passkey_user_col {
	SW_DB_PASSKEY_USER_EMAIL,
	SW_DB_PASSKEY_USER_NAME,
	SW_DB_PASSKEY_USER_COUNT,          /* passkeys held */
	SW_DB_PASSKEY_USER_CREDENTIAL_IDS, /* hex ids joined with ',', oldest first; NULL: none */
};

/* The columns of a passkey record, in this order, at offset `first` of a
 * result (0 for list, rename; 1 for create, after the outcome). */
enum sw_db_passkey_col {
	SW_DB_PASSKEY_ID,
	SW_DB_PASSKEY_NAME,
	SW_DB_PASSKEY_CREDENTIAL_ID, /* hex */
	SW_DB_PASSKEY_ALGORITHM,     /* COSE: -7, -8, -257 */
	SW_DB_PASSKEY_DEVICE_TYPE,   /* "singleDevice" or "multiDevice" */
	SW_DB_PASSKEY_BACKED_UP,     /* "t" or "f" */
	SW_DB_PASSKEY_SIGN_COUNT,
	SW_DB_PASSKEY_TRANSPORTS,    /* joined with ',' ("" for none) */
	SW_DB_PASSKEY_AAGUID,        /* UUID text */
	SW_DB_PASSKEY_CREATED_AT,    /* RFC 3339 */
	SW_DB_PASSKEY_LAST_USED_AT,  /* RFC 3339 or NULL */
	SW_DB_PASSKEY_COLUMNS
};

/* Columns of sw_db_stmt_passkey_sign_in_begin (always one row; the
 * passkey's columns are NULL when no passkey has the credential id). */
enum sw_db_passkey_sign_in_col {
	SW_DB_PASSKEY_SIGN_IN_CHALLENGE_LIVE, /* "t": the challenge was live and is now used */
	SW_DB_PASSKEY_SIGN_IN_ID,
	SW_DB_PASSKEY_SIGN_IN_USER_ID,
	SW_DB_PASSKEY_SIGN_IN_PUBLIC_KEY,     /* hex COSE_Key */
	SW_DB_PASSKEY_SIGN_IN_SIGN_COUNT,
	SW_DB_PASSKEY_SIGN_IN_DEVICE_TYPE,
};

extern const struct sw_db_stmt sw_db_stmt_passkey_user_state;
extern const struct sw_db_stmt sw_db_stmt_passkey_registration_consume;
extern const struct sw_db_stmt sw_db_stmt_passkey_create;
extern const struct sw_db_stmt sw_db_stmt_passkeys_list;
extern const struct sw_db_stmt sw_db_stmt_passkey_rename;
extern const struct sw_db_stmt sw_db_stmt_passkey_delete;
extern const struct sw_db_stmt sw_db_stmt_passkey_challenge_create;
extern const struct sw_db_stmt sw_db_stmt_passkey_sign_in_begin;
extern const struct sw_db_stmt sw_db_stmt_passkey_used;

#endif
