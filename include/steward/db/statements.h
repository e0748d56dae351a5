/* The statement registry: every statement the pool prepares on each
 * connection, the test-only ones, and the SQLSTATEs Steward's own SQL
 * raises (src/db/migrations/0001_identity.sql). Column orders of the
 * statements' results are documented in statements.c. */
#ifndef STEWARD_DB_STATEMENTS_H
#define STEWARD_DB_STATEMENTS_H

#include "steward/db/db.h"

/* sw_db_stmt_setup: a user already exists (-> 409 SETUP_COMPLETE). */
#define SW_DB_SQLSTATE_SETUP_COMPLETE "SW001"
/* sw_db_stmt_signup: no user exists yet (-> 409 SETUP_REQUIRED). */
#define SW_DB_SQLSTATE_SETUP_REQUIRED "SW002"
/* sw_db_stmt_signup: the e-mail address is taken (-> 422 fields.email). */
#define SW_DB_SQLSTATE_EMAIL_TAKEN "SW003"
/* PostgreSQL's own: a serialization failure (a concurrent setup under a
 * stricter default isolation level lost the race). */
#define SW_DB_SQLSTATE_SERIALIZATION_FAILURE "40001"

/* Columns of sw_db_stmt_setup and sw_db_stmt_signup results (one row). */
enum sw_db_account_col {
	SW_DB_ACCOUNT_USER_ID,
	SW_DB_ACCOUNT_USER_EMAIL,
	SW_DB_ACCOUNT_USER_NAME,
	SW_DB_ACCOUNT_USER_IS_OPERATOR, /* "t" or "f" */
	SW_DB_ACCOUNT_USER_CREATED_AT,  /* RFC 3339 UTC with milliseconds */
	SW_DB_ACCOUNT_ORG_ID,
	SW_DB_ACCOUNT_ORG_NAME,
	SW_DB_ACCOUNT_ORG_CREATED_AT,
	SW_DB_ACCOUNT_ROLE,             /* "OWNER" */
};

/* session_resolve and token_resolve: the account columns start here. */
#define SW_DB_RESOLVE_ACCOUNT_COL 7
#define SW_DB_ACCOUNT_COLUMNS 9

/* Columns of sw_db_stmt_user_by_email results (zero or one row). */
enum sw_db_user_col {
	SW_DB_USER_ID,
	SW_DB_USER_EMAIL,
	SW_DB_USER_NAME,
	SW_DB_USER_PASSWORD_HASH,
	SW_DB_USER_IS_OPERATOR,
	SW_DB_USER_CREATED_AT,
};

/* Test-only statements (prepared everywhere, harmless, used by the unit
 * tests): test_sleep(seconds) sleeps on the server; test_echo(text)
 * returns its parameter. */
extern const struct sw_db_stmt sw_db_stmt_test_sleep;
extern const struct sw_db_stmt sw_db_stmt_test_echo;
extern const struct sw_db_stmt sw_db_stmt_test_read;

/* A feature's statements, defined beside them in statements_<feature>.c. */
struct sw_db_stmt_group {
	const struct sw_db_stmt *const *list;
	size_t count;
};
#define SW_DB_MAX_STATEMENTS 512
extern const struct sw_db_stmt_group sw_db_auth_statements;
extern const struct sw_db_stmt_group sw_db_two_factor_statements;
extern const struct sw_db_stmt_group sw_db_passkeys_statements;
extern const struct sw_db_stmt_group sw_db_password_reset_statements;
extern const struct sw_db_stmt_group sw_db_tokens_statements;
extern const struct sw_db_stmt_group sw_db_organizations_statements;
extern const struct sw_db_stmt_group sw_db_projects_statements;
extern const struct sw_db_stmt_group sw_db_applications_statements;
extern const struct sw_db_stmt_group sw_db_domains_statements;
extern const struct sw_db_stmt_group sw_db_variables_statements;
extern const struct sw_db_stmt_group sw_db_git_statements;
extern const struct sw_db_stmt_group sw_db_servers_statements;
extern const struct sw_db_stmt_group sw_db_services_statements;
extern const struct sw_db_stmt_group sw_db_jobs_statements;
extern const struct sw_db_stmt_group sw_db_alerts_statements;
extern const struct sw_db_stmt_group sw_db_channels_statements;
extern const struct sw_db_stmt_group sw_db_plans_statements;
extern const struct sw_db_stmt_group sw_db_deployments_statements;
extern const struct sw_db_stmt_group sw_db_webhooks_statements;
extern const struct sw_db_stmt_group sw_db_runtime_statements;
extern const struct sw_db_stmt_group sw_db_metrics_statements;

/* Sessions, tokens, audit (statements_auth.c; columns documented there). */
extern const struct sw_db_stmt sw_db_stmt_session_create;
extern const struct sw_db_stmt sw_db_stmt_session_resolve;
extern const struct sw_db_stmt sw_db_stmt_session_renew;
extern const struct sw_db_stmt sw_db_stmt_session_revoke;
extern const struct sw_db_stmt sw_db_stmt_sessions_revoke_others;
extern const struct sw_db_stmt sw_db_stmt_sessions_list;
extern const struct sw_db_stmt sw_db_stmt_account;
extern const struct sw_db_stmt sw_db_stmt_user_password_hash;
extern const struct sw_db_stmt sw_db_stmt_password_change;
extern const struct sw_db_stmt sw_db_stmt_token_resolve;
extern const struct sw_db_stmt sw_db_stmt_token_touch;
extern const struct sw_db_stmt sw_db_stmt_audit_insert;

/* Every registered statement, in preparation order; *ret_count is set. */
const struct sw_db_stmt *const *sw_db_statements(size_t *ret_count);
/* Whether stmt is in the registry (only those are prepared). */
bool sw_db_statement_known(const struct sw_db_stmt *stmt);

#endif
