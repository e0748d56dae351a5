/* Shared by the files of an application's configuration (domains.c,
 * variables.c, git_sources.c, git_credentials.c): secrets sealed into the request's arena, and
 * outbound work (DNS, HTTP to a customer's host or a git host's API) run
 * on the worker pool within bounds. */
#ifndef STEWARD_API_APP_CONFIG_H
#define STEWARD_API_APP_CONFIG_H

#include "steward/io/io.h"
#include "api/api_internal.h"

/* Whether the installation runs with STEWARD_ENV=production (file://
 * repositories, http:// git host APIs and HTTP checks of private addresses
 * are refused there). */
bool sw_api_production(const struct sw_http_request *req);

/* Seals plain (n bytes) bound to aad (sw_seal_aad_*(), seal.h) into the
 * request's arena.
 * NULL when it fails (answered 500; the reason logged, never the value). */
const char *sw_api_seal(struct sw_http_request *req, const void *plain, size_t n, const char *aad);

/* A unit of outbound work. run() executes on a worker thread and may block
 * (it bounds its own time); done() runs on the loop of the request that
 * started it, while that request still waits for its answer, and owns the
 * structure (which the caller allocated with malloc, not in the arena: the
 * arena is not the worker's to touch). */
struct sw_api_outbound {
	struct sw_worker_job job;
	void (*run)(struct sw_api_outbound *o);
	void (*done)(struct sw_api_outbound *o);
};

/* Starts o for req. Bounds: per organization a rate (429 RATE_LIMITED with
 * Retry-After), and in the process at most STEWARD_WORKERS - 1 outbound
 * units at once (at least one), so that slow hosts never hold every worker
 * and password hashing always has a thread (503 SERVICE_UNAVAILABLE
 * beyond). true: started, done() will run. false: answered; o is still the
 * caller's to free. */
bool sw_api_outbound_start(struct sw_http_request *req, struct sw_api_outbound *o);

#endif
