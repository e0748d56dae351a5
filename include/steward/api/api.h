/* The API: the one route table, its handlers, and the OpenAPI document
 * generated from it. */
#ifndef STEWARD_API_H
#define STEWARD_API_H

#include "steward/http/http.h"

/* Every route of the API, in documentation order. */
const struct sw_route *sw_api_routes(size_t *ret_count);

/* Builds the OpenAPI 3.1 document for the routes the router holds (so it
 * matches what the server answers), kept until sw_api_docs_free(). 0 or
 * -errno with a message. */
int sw_api_docs_build(const struct sw_router *router, char *err, size_t errlen);
void sw_api_docs_free(void);
/* The built document (for tests). */
struct sw_str sw_api_docs_json(void);

/* The local server's metrics sampler (src/api/metrics.c): made once, on a
 * thread of its own so start-up does not wait for the eBPF programs to
 * load, with the warning when the host's trees are not mounted into a
 * container and the eBPF collectors' status logged. Stop after the
 * workers: it waits for that thread and detaches the eBPF programs. */
void sw_api_metrics_start(void);
/* Waits up to timeout_ms for that thread to finish making the sampler;
 * true once it has (loading the eBPF programs allocates and frees ~20 MB:
 * the caller then hands what start-up freed back to the kernel). */
bool sw_api_metrics_wait_made(unsigned timeout_ms);
void sw_api_metrics_stop(void);

#endif
