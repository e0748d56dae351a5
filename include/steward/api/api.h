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
/* The database the live routes of a remote server (containers, proxy
 * state) issue their agent commands through. Before the threads start. */
void sw_api_runtime_set_conninfo(const char *conninfo);
/* Waits up to timeout_ms for that thread to finish making the sampler;
 * true once it has (loading the eBPF programs allocates and frees ~20 MB:
 * the caller then hands what start-up freed back to the kernel). */
bool sw_api_metrics_wait_made(unsigned timeout_ms);
void sw_api_metrics_stop(void);
/* Waits (at most timeout_ms) for the threads following containers' logs
 * (GET /applications/:id/logs?follow=true) to end: call it after the io
 * loops stopped, which cancels them. */
void sw_api_container_logs_stop(unsigned timeout_ms);

/* A host's sampler and its engine (src/api/metrics_local.c): the local
 * server's in stewardd, the agent's own host in steward-agent (its
 * metrics.sample command): the same library and the same reading.
 * Made from the environment: HOST_PROC_PATH, HOST_SYS_PATH,
 * HOST_ROOT_PATH, METRICS_EBPF (0/false/off: cgroup files only),
 * METRICS_PUBLIC_IP, DOCKER_HOST; the HOST_* warning and the eBPF status
 * are logged here, once. NULL with the reason in why. Blocking: its calls
 * run on a worker or a thread of the caller's, never an io loop; one host
 * is safe from several threads. */
struct sw_api_metrics_host;
struct sw_api_metrics_host *sw_api_metrics_host_new(char *why, size_t whylen);
/* One sample of the host with every container of its engine labelled
 * steward.application (at most max_containers), as the JSON of the API's
 * MetricSample without serverId: *ret_json (NUL-terminated, malloc'd, the
 * caller frees). 0; -EIO when /proc cannot be read; -ENOMEM. */
int sw_api_metrics_host_sample_json(struct sw_api_metrics_host *h, size_t max_containers, char **ret_json);
void sw_api_metrics_host_free(struct sw_api_metrics_host *h);

/* The metrics loop (src/api/metrics_loop.c): samples the local host every
 * config->metrics_interval_ms on a thread of its own, keeps the samples
 * in memory for a minute, and writes minute rows and hour roll-ups to
 * conninfo's database (one replica at a time: an advisory lock), with
 * partitions made ahead and retention applied every hour. Start after
 * sw_api_metrics_start(); stop before sw_api_metrics_stop(). 0 or -errno. */
struct sw_config;
int sw_api_metrics_loop_start(const char *conninfo, const struct sw_config *config);
void sw_api_metrics_loop_stop(void);

#endif
