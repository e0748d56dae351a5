/* GET /health: from the pool's cached view of the database, no round trip. */
#include <stdio.h>
#include "steward/db/db.h"
#include "api/api_internal.h"

void sw_api_health(struct sw_http_request *req)
{
	const char *reason = NULL;
	if (!sw_db_pool_healthy(sw_db_pool_of(req->loop), &reason)) {
		char msg[256];
		snprintf(msg, sizeof(msg), "The database is unavailable: %s.",
			 reason ? reason : "no connection");
		sw_http_error(req, 503, "DATABASE_UNAVAILABLE", msg);
		return;
	}
	static const char ok[] = "{\"data\":{\"status\":\"ok\",\"database\":\"ok\"}}";
	sw_http_respond_static(req, 200, "application/json", SW_STR(ok));
}
