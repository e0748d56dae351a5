/* What domains.c, variables.c, git_sources.c and git_credentials.c share (app_config.h): sealing into
 * the request's arena and bounded outbound work.
 *
 * Why outbound work is capped below the worker count: the pool also hashes
 * passwords. A customer's DNS server or web server, or a git host, may take
 * its full timeout to answer; if every worker waited on one, sign-ins of
 * the whole installation would queue behind them. */
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/log.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/seal.h"
#include "api/app_config.h"

/* Outbound units per organization: a burst of 30, then one each 2 s. */
static const struct sw_ratelimit outbound_limit = { "outbound_organization", 30, 60 };

static unsigned outbound_running; /* atomic: units started, not yet done */

bool sw_api_production(const struct sw_http_request *req)
{
	return sw_http_config(req)->env == SW_ENV_PRODUCTION;
}

const char *sw_api_seal(struct sw_http_request *req, const void *plain, size_t n, const char *aad)
{
	size_t cap = sw_seal_size(n);
	char *out = sw_arena_alloc(&req->arena, cap);
	if (!out) {
		sw_api_internal_error(req);
		return NULL;
	}
	int r = sw_seal(plain, n, aad, out, cap);
	if (r < 0) {
		sw_log_error("sealing a secret failed (%d) rid=%.*s", r, (int)req->request_id_len,
			     req->request_id);
		sw_api_internal_error(req);
		return NULL;
	}
	return out;
}

static void outbound_run(struct sw_worker_job *job)
{
	struct sw_api_outbound *o = SW_CONTAINER_OF(job, struct sw_api_outbound, job);
	o->run(o);
}

static void outbound_done(struct sw_worker_job *job)
{
	struct sw_api_outbound *o = SW_CONTAINER_OF(job, struct sw_api_outbound, job);
	__atomic_sub_fetch(&outbound_running, 1, __ATOMIC_RELAXED);
	o->done(o);
}

bool sw_api_outbound_start(struct sw_http_request *req, struct sw_api_outbound *o)
{
	if (!sw_api_rate_limit(req, &outbound_limit, sw_str_cstr(req->principal.organization_id)))
		return false;
	unsigned workers = sw_http_config(req)->workers;
	unsigned cap = workers > 1 ? workers - 1 : 1;
	if (__atomic_add_fetch(&outbound_running, 1, __ATOMIC_RELAXED) > cap) {
		__atomic_sub_fetch(&outbound_running, 1, __ATOMIC_RELAXED);
		sw_api_busy(req);
		return false;
	}
	o->job.run = outbound_run;
	o->job.done = outbound_done;
	if (sw_worker_submit(req->loop, &o->job) < 0) {
		__atomic_sub_fetch(&outbound_running, 1, __ATOMIC_RELAXED);
		sw_api_busy(req);
		return false;
	}
	return true;
}
