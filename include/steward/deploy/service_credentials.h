/* The credentials of a managed service as they are sealed (bound by
 * sw_seal_aad_service()): the JSON object the API writes when it creates
 * the service, {"database", "username", "password"}. Where the service
 * listens is not a secret and lives in its row (its port); credentials
 * sealed before ports were a service's own also hold "host" and "port",
 * which are not read. One reader for every module that opens them: the
 * API's disclosure route and the runtime that starts the service's
 * container. */
#ifndef STEWARD_DEPLOY_SERVICE_CREDENTIALS_H
#define STEWARD_DEPLOY_SERVICE_CREDENTIALS_H

#include <jansson.h>
#include "steward/base/base.h"

struct sw_service_credentials {
	/* Views into json, valid until sw_service_credentials_wipe(). */
	struct sw_str database, username, password;
	long long port; /* not read from the text: the caller's, from the service's row */
	json_t *json;
};

/* Parses opened credentials (text, len bytes; duplicate members refused).
 * 0 with database, username and password set; -EINVAL when text is not of that form (nothing
 * is left to release then, and every string it held is wiped). */
int sw_service_credentials_parse(const char *text, size_t len, struct sw_service_credentials *ret);
/* Wipes every string of the parsed object and frees it; c is emptied.
 * Again, or on an emptied c, is harmless. */
void sw_service_credentials_wipe(struct sw_service_credentials *c);

#endif
