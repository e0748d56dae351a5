/* Passkeys (WebAuthn): routes and handlers. */
#include "api/internal.h"

static const struct sw_route routes[] = {
	{ 0 },
};

const struct sw_api_route_group sw_api_passkeys_group = { routes, 0, NULL };
