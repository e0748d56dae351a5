/* Statements of API tokens (statements_tokens.c; columns documented there).
 * Token resolution and last-use updates are the guard's, in
 * statements_auth.c. */
#ifndef STEWARD_DB_STATEMENTS_TOKENS_H
#define STEWARD_DB_STATEMENTS_TOKENS_H

#include "steward/db/statements.h"

/* Live (neither revoked nor expired) tokens a user may hold in one
 * organization; sw_db_stmt_token_create issues nothing past it. */
#define SW_API_TOKENS_LIVE_MAX 100
/* Rows sw_db_stmt_tokens_list returns at most: every live token, then the
 * most recent revoked or expired ones. */
#define SW_API_TOKENS_LIST_MAX 200

extern const struct sw_db_stmt sw_db_stmt_token_create;
extern const struct sw_db_stmt sw_db_stmt_tokens_list;
extern const struct sw_db_stmt sw_db_stmt_token_revoke;

#endif
