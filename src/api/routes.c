/* The route table: every route of the API, its access level, its body
 * limit and its documentation. The router, the guard and the OpenAPI
 * document all read this one table. */
#include <pthread.h>
#include <stdlib.h>
#include "steward/api/api.h"
#include "steward/base/limits.h"
#include "api/api_internal.h"

static const int err_health[] = { 503, 0 };
static const int err_none[] = { 0 };
static const int err_setup[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_signup[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_sign_in[] = { 400, 401, 413, 415, 422, 429, 503, 0 };
static const int err_read[] = { 503, 0 };
static const int err_sign_out[] = { 400, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_write[] = { 400, 413, 415, 422, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/health", SW_ACCESS_PUBLIC, sw_api_health, 0, 0,
	  { "Health of the control plane",
	    "200 when the database answers, 503 with the reason when it does not. The database state "
	    "may be up to one second old; the route itself makes no database round trip.",
	    "System", NULL, "Health", 200, err_health } },
	{ SW_HTTP_GET, "/setup-status", SW_ACCESS_PUBLIC, sw_api_setup_status, 0, 0,
	  { "Whether the installation still needs its first user",
	    "setupRequired is true until POST /setup has created the first user.",
	    "Setup", NULL, "SetupStatus", 200, err_health } },
	{ SW_HTTP_POST, "/setup", SW_ACCESS_PUBLIC, sw_api_setup, SW_HTTP_DEFAULT_MAX_BODY, 0,
	  { "Create the first user, their organization and OWNER membership",
	    "Only while no user exists; afterwards 409 SETUP_COMPLETE. The first user is an operator. "
	    "Of concurrent calls exactly one succeeds.",
	    "Setup", "SetupRequest", "SessionResult", 201, err_setup } },
	{ SW_HTTP_POST, "/signup", SW_ACCESS_PUBLIC, sw_api_signup, SW_HTTP_DEFAULT_MAX_BODY,
	  SW_ROUTE_SIGNUP,
	  { "Create an account and its own organization",
	    "Present only when SIGNUP_ENABLED is on; otherwise the response is exactly that of a path "
	    "that does not exist. 409 SETUP_REQUIRED before POST /setup.",
	    "Setup", "SignupRequest", "SessionResult", 201, err_signup } },
	{ SW_HTTP_POST, "/auth/sign-in", SW_ACCESS_PUBLIC, sw_api_sign_in, 4096, 0,
	  { "Sign in with e-mail and password",
	    "Sets the steward_session cookie (HttpOnly, SameSite=Lax, Path=/, Secure when "
	    "PUBLIC_BASE_URL is https; 14 days, renewed by use). An unknown address and a wrong "
	    "password both answer 401 INVALID_CREDENTIALS after the same work. A user with two-factor "
	    "authentication enabled gets 200 with a TwoFactorChallenge instead (no cookie); "
	    "POST /auth/two-factor/verify completes the sign-in. Limited to 30 "
	    "attempts per address per 5 minutes and 10 per account per 15 minutes (429 with "
	    "Retry-After); a success refills the account's allowance.",
	    "Authentication", "SignInRequest", "SignInResult", 200, err_sign_in } },
	{ SW_HTTP_POST, "/auth/sign-out", SW_ACCESS_SESSION, sw_api_sign_out, 0, 0,
	  { "Sign out: revoke the current session",
	    "Clears the cookie. Only for a session; an API token is revoked with DELETE /api-tokens/:id.",
	    "Authentication", NULL, NULL, 204, err_sign_out } },
	{ SW_HTTP_GET, "/auth/session", SW_ACCESS_SESSION, sw_api_session, 0, 0,
	  { "The caller: user, organization and role, and the credential in use",
	    "Works with a session cookie or an API token.",
	    "Authentication", NULL, "CurrentSession", 200, err_read } },
	{ SW_HTTP_GET, "/auth/sessions", SW_ACCESS_SESSION, sw_api_sessions_list, 0, 0,
	  { "The caller's live sessions", "Most recent first; `current` marks the one in use.",
	    "Authentication", NULL, "SessionList", 200, err_read } },
	{ SW_HTTP_DELETE, "/auth/sessions/:id", SW_ACCESS_SESSION, sw_api_sessions_revoke, 0, 0,
	  { "Revoke one of the caller's sessions",
	    "Effective on the next request, in every process. 404 for a session that is not the "
	    "caller's or not live.",
	    "Authentication", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/auth/password", SW_ACCESS_SESSION, sw_api_password_change, 4096, 0,
	  { "Change the password",
	    "Needs the current password (422 on currentPassword when wrong). Revokes every other "
	    "session of the user; the current one stays.",
	    "Authentication", "PasswordChangeRequest", NULL, 204, err_write } },
	{ SW_HTTP_GET, "/docs", SW_ACCESS_PUBLIC, sw_api_docs, 0, SW_ROUTE_DEV_ONLY,
	  { "This OpenAPI document",
	    "Served only when STEWARD_ENV is development or test; 404 in production.",
	    "System", NULL, NULL, 200, err_none } },
};

/* Each feature keeps its routes beside its handlers (src/api/<feature>.c)
 * as a group; the table is their concatenation, built once, in this order. */
static const struct sw_api_route_group core = { routes, SW_ARRAY_SIZE(routes), NULL };
static const struct sw_api_route_group *const groups[] = {
	&core,
	&sw_api_two_factor_group,
	&sw_api_passkeys_group,
	&sw_api_password_reset_group,
	&sw_api_tokens_group,
	&sw_api_organizations_group,
	&sw_api_members_group,
	&sw_api_invitations_group,
	&sw_api_audit_logs_group,
	&sw_api_projects_group,
	&sw_api_applications_group,
	&sw_api_domains_group,
	&sw_api_variables_group,
	&sw_api_git_sources_group,
	&sw_api_git_credentials_group,
	&sw_api_servers_group,
	&sw_api_agent_connect_group,
	&sw_api_server_commands_group,
	&sw_api_services_group,
	&sw_api_jobs_group,
	&sw_api_alerts_group,
	&sw_api_channels_group,
	&sw_api_plans_group,
	&sw_api_deployments_group,
	&sw_api_deployment_logs_group,
	&sw_api_webhooks_group,
	&sw_api_runtime_group,
	&sw_api_container_logs_group,
	&sw_api_metrics_group,
};

static struct sw_route *table;
static size_t table_count;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
	size_t n = 0;
	for (size_t g = 0; g < SW_ARRAY_SIZE(groups); g++)
		n += groups[g]->count;
	table = calloc(n ? n : 1, sizeof(*table));
	if (!table)
		return;
	for (size_t g = 0; g < SW_ARRAY_SIZE(groups); g++)
		for (size_t i = 0; i < groups[g]->count; i++)
			table[table_count++] = groups[g]->routes[i];
}

const struct sw_route *sw_api_routes(size_t *ret_count)
{
	pthread_once(&table_once, build_table);
	*ret_count = table_count;
	return table;
}

const char *sw_api_schema_group(size_t i)
{
	return i < SW_ARRAY_SIZE(groups) ? (groups[i]->schemas ? groups[i]->schemas : "{}") : NULL;
}
