/* All SQL the pool runs: one registry of named statements, prepared on
 * every connection as soon as it is established (src/db/pool.c). The
 * parameters are always bound (text format), never spliced into the SQL.
 *
 * The multi-step writes (setup, signup) are plpgsql functions defined by
 * migration 0001_identity.sql, so that each is one round trip and one
 * transaction. Their failures carry Steward's own SQLSTATEs, named in
 * statements.h:
 *   SW001  setup: a user already exists. Concurrent setups serialise on
 *          the setup_state row lock, so under 50 concurrent calls exactly
 *          one succeeds; the rest get SW001 (or 40001 under a serializable
 *          or repeatable-read default isolation level).
 *   SW002  signup: no user exists yet, setup is required.
 *   SW003  signup: the e-mail address is already registered (compared
 *          case-insensitively; a concurrent duplicate also gets SW003).
 * Other errors are PostgreSQL's, e.g. 23514 when a CHECK constraint
 * (length of name or organization name) is violated. */
#include <pthread.h>
#include <string.h>
#include "steward/db/statements.h"
#include "db/db_internal.h"

/* The record of a first account: the new user (c0) acting in their new
 * organization (c5: enum sw_db_account_col) about themselves. */
#define ACCOUNT_AUDITED                                                                        \
	(&(struct sw_db_audited){ .id_col = 0, .name_col = -1, .ncols = 6,                      \
				  .organization_sql = "c5::uuid", .actor_sql = "c0::uuid" })

/* () -> one row, "1". */
const struct sw_db_stmt sw_db_stmt_ping = {
	.name = "ping",
	.sql = "SELECT 1",
	.nparams = 0,
	.reads_only = true,
};

/* () -> one row: the number of users. */
const struct sw_db_stmt sw_db_stmt_user_count = {
	.name = "user_count",
	.sql = "SELECT count(*) FROM users",
	.nparams = 0,
	.reads_only = true,
};

/* (email, name, password_hash, organization_name) -> one row, columns
 * enum sw_db_account_col: the first user (is_operator true), their
 * organization and their OWNER membership. The e-mail is stored
 * lower-case. Fails with SW001 once a user exists. */
const struct sw_db_stmt sw_db_stmt_setup = {
	.name = "setup",
	.sql = "SELECT user_id, user_email, user_name, user_is_operator, user_created_at,"
	       " organization_id, organization_name, organization_created_at, membership_role"
	       " FROM steward_setup($1, $2, $3, $4)",
	.nparams = 4,
	.audited = ACCOUNT_AUDITED,
};

/* (email, name, password_hash, organization_name or NULL) -> one row,
 * columns enum sw_db_account_col: a user (is_operator false), their
 * organization (named after the user when NULL) and their OWNER
 * membership. Fails with SW002 before setup, SW003 when the e-mail is
 * taken. */
const struct sw_db_stmt sw_db_stmt_signup = {
	.name = "signup",
	.sql = "SELECT user_id, user_email, user_name, user_is_operator, user_created_at,"
	       " organization_id, organization_name, organization_created_at, membership_role"
	       " FROM steward_signup($1, $2, $3, $4)",
	.nparams = 4,
	.audited = ACCOUNT_AUDITED,
};

/* (email) -> zero or one row, columns enum sw_db_user_col; the e-mail is
 * compared case-insensitively (through the users_email_key index). */
const struct sw_db_stmt sw_db_stmt_user_by_email = {
	.name = "user_by_email",
	.sql = "SELECT id, email, name, password_hash, is_operator, steward_rfc3339(created_at)"
	       " FROM users WHERE lower(email) = lower($1)",
	.nparams = 1,
	.reads_only = true,
};

/* Test only: (seconds) -> one row; sleeps on the server. */
const struct sw_db_stmt sw_db_stmt_test_sleep = {
	.name = "test_sleep",
	.sql = "SELECT pg_sleep($1::double precision)",
	.nparams = 1,
};

/* Test only: (text) -> one row holding the parameter. */
const struct sw_db_stmt sw_db_stmt_test_echo = {
	.name = "test_echo",
	.sql = "SELECT $1::text",
	.nparams = 1,
};

/* Test only: (integer) -> the integer as text, and the times of its
 * transaction and of its statement (text); a read: batched. */
const struct sw_db_stmt sw_db_stmt_test_read = {
	.name = "test_read",
	.sql = "SELECT $1::integer::text, transaction_timestamp()::text, statement_timestamp()::text",
	.nparams = 1,
	.reads_only = true,
};

static const struct sw_db_stmt *const core[] = {
	&sw_db_stmt_ping,
	&sw_db_stmt_user_count,
	&sw_db_stmt_setup,
	&sw_db_stmt_signup,
	&sw_db_stmt_user_by_email,
	&sw_db_stmt_test_sleep,
	&sw_db_stmt_test_echo,
	&sw_db_stmt_test_read,
};

/* Each feature keeps its statements in its own file (statements_<feature>.c)
 * as a group; the registry is their concatenation, built once. */
static const struct sw_db_stmt_group *const groups[] = {
	&sw_db_auth_statements,
	&sw_db_two_factor_statements,
	&sw_db_passkeys_statements,
	&sw_db_password_reset_statements,
	&sw_db_tokens_statements,
	&sw_db_organizations_statements,
	&sw_db_projects_statements,
	&sw_db_applications_statements,
	&sw_db_domains_statements,
	&sw_db_variables_statements,
	&sw_db_git_statements,
	&sw_db_servers_statements,
	&sw_db_services_statements,
	&sw_db_jobs_statements,
	&sw_db_alerts_statements,
	&sw_db_channels_statements,
	&sw_db_plans_statements,
	&sw_db_deployments_statements,
	&sw_db_webhooks_statements,
	&sw_db_runtime_statements,
	&sw_db_metrics_statements,
};

static const struct sw_db_stmt *registry[SW_DB_MAX_STATEMENTS];
static size_t registry_count;
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

/* Each statement, and after it the audited twin of one that has an audit
 * shape. A twin that cannot be built is left out: its statement then
 * fails at sw_db_query_audited() (the action does not happen unaudited). */
#if SW_CHECKS
/* A statement marked reads_only reads as a plain SELECT: no data-modifying
 * clause, no row lock, no advisory lock, no notify, no sequence, no
 * setting, no audit twin. (A function that writes is caught only by
 * review: see struct sw_db_stmt.) */
static bool reads_plausibly(const struct sw_db_stmt *st)
{
	static const char *const writes[] = { "INSERT", "UPDATE", "DELETE", "MERGE", "FOR SHARE",
					      "FOR KEY", "FOR NO KEY", "nextval", "setval",
					      "pg_notify", "advisory", "set_config", "pg_sleep" };
	if (st->audited || (strncmp(st->sql, "SELECT", 6) != 0 && strncmp(st->sql, "WITH", 4) != 0))
		return false;
	for (size_t i = 0; i < SW_ARRAY_SIZE(writes); i++)
		if (strstr(st->sql, writes[i]))
			return false;
	return true;
}
#endif

static void add(const struct sw_db_stmt *const *list, size_t n)
{
	for (size_t i = 0; i < n && registry_count < SW_DB_MAX_STATEMENTS; i++) {
		SW_ASSERT(!list[i]->reads_only || reads_plausibly(list[i]));
		registry[registry_count++] = list[i];
		if (list[i]->audited && registry_count < SW_DB_MAX_STATEMENTS &&
		    sw_db_audited_build(list[i]) == 0)
			registry[registry_count++] = &list[i]->audited->twin;
	}
}

static void build_registry(void)
{
	add(core, SW_ARRAY_SIZE(core));
	for (size_t g = 0; g < SW_ARRAY_SIZE(groups); g++)
		add(groups[g]->list, groups[g]->count);
}

const struct sw_db_stmt *const *sw_db_statements(size_t *ret_count)
{
	pthread_once(&registry_once, build_registry);
	*ret_count = registry_count;
	return registry;
}

bool sw_db_statement_known(const struct sw_db_stmt *stmt)
{
	size_t n;
	const struct sw_db_stmt *const *all = sw_db_statements(&n);
	for (size_t i = 0; i < n; i++)
		if (all[i] == stmt)
			return true;
	return false;
}
