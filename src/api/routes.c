/* The route table: every route of the API, its access level, its body
 * limit and its documentation. The router, the guard and the OpenAPI
 * document all read this one table. */
#include "steward/api.h"
#include "steward/limits.h"
#include "api/internal.h"

static const int err_health[] = { 503, 0 };
static const int err_none[] = { 0 };
static const int err_setup[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_signup[] = { 400, 404, 409, 413, 415, 422, 503, 0 };

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
	    "Setup", "SetupRequest", "SetupResult", 201, err_setup } },
	{ SW_HTTP_POST, "/signup", SW_ACCESS_PUBLIC, sw_api_signup, SW_HTTP_DEFAULT_MAX_BODY,
	  SW_ROUTE_SIGNUP,
	  { "Create an account and its own organization",
	    "Present only when SIGNUP_ENABLED is on; otherwise the response is exactly that of a path "
	    "that does not exist. 409 SETUP_REQUIRED before POST /setup.",
	    "Setup", "SignupRequest", "SetupResult", 201, err_signup } },
	{ SW_HTTP_GET, "/docs", SW_ACCESS_PUBLIC, sw_api_docs, 0, SW_ROUTE_DEV_ONLY,
	  { "This OpenAPI document",
	    "Served only when STEWARD_ENV is development or test; 404 in production.",
	    "System", NULL, NULL, 200, err_none } },
};

const struct sw_route *sw_api_routes(size_t *ret_count)
{
	*ret_count = SW_ARRAY_SIZE(routes);
	return routes;
}
