/* Metric samples of a server, taken on demand: GET /servers/:id/sample.
 *
 * Decisions (also in the OpenAPI document):
 * - The local server (the control plane's own host) is sampled here; a
 *   remote one by its agent (metrics.sample: the same sampler library, under
 *   the agent's HOST_* paths, steward/api/api.h), through the remote driver
 *   on a blocking connection of the worker's own; its agent not connected:
 *   409 SERVER_NOT_CONNECTED; one that does not answer or does not carry
 *   the command: 502 RUNTIME_UNAVAILABLE.
 * - Host figures describe the whole host: every organization of the
 *   installation shares it and they reveal nothing of another's work
 *   beyond load. Containers are only the organization's (label
 *   steward.application of one of its applications on that server).
 * - One sampler per process (sw_api_metrics_start() makes it at start-up,
 *   logging the HOST_* warning and the eBPF status once). It is made on a
 *   thread of its own: loading the eBPF programs takes about 0.2 s (libbpf
 *   reads the kernel's BTF for CO-RE), which the listener need not wait
 *   for; a sample asked for meanwhile waits for it. A sample is
 *   blocking file reads plus the engine's answers: it runs on the worker
 *   pool (503 when full). Without a recent previous reading the sampler
 *   reads twice, SW_METRICS_SETTLE_MS apart, so rates are real rates.
 * - An engine that does not answer does not fail the sample: containers
 *   come back empty with containers.error saying why.
 * - The container runtime's disk usage (the engine's /system/df walks
 *   every layer and volume: seconds on a big host) is read at most every
 *   every 5 minutes (metrics_local.c) and shared by every sample;
 *   runtimeDisk.measuredAt says how old it is. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "steward/api/api.h"
#include "steward/auth/auth.h"
#include "steward/driver/container_state.h"
#include "steward/driver/driver.h"
#include "steward/driver/remote.h"
#include "steward/io/io.h"
#include "steward/base/json.h"
#include "steward/base/log.h"
#include "steward/metrics/metrics.h"
#include "api/api_internal.h"
#include "steward/db/statements_runtime.h"
#include "steward/db/statements_metrics.h"
#include "steward/base/timeparse.h"



static const int err_sample[] = { 404, 409, 502, 503, 0 };

struct op {
	struct sw_worker_job job;
	struct sw_http_request *req;
	char server_id[37];
	json_t *apps; /* the organization's application ids on the server */
	bool remote;
	int rc;
	struct sw_metrics_sample sample;
	char *platform; /* an operator's: the control plane's figures (JSON) */
	/* a remote server's */
	json_t *remote_sample;
	bool not_connected;
	char err[256];
};

static void op_free(struct op *o)
{
	json_decref(o->apps);
	json_decref(o->remote_sample);
	free(o->platform);
	sw_metrics_sample_release(&o->sample);
	free(o);
}

/* ---- on the worker ---- */

/* The agent's sample cut to the organization's containers (the counts
 * follow, by the sampler's rule), its serverId set. */
static int remote_cut(struct op *o, const char *text)
{
	o->remote_sample = sw_api_metrics_remote_cut(text, o->apps, o->server_id);
	if (!o->remote_sample) {
		snprintf(o->err, sizeof(o->err), "the server's agent sent a sample that cannot be read");
		return -EIO;
	}
	return 0;
}

static void remote_run(struct op *o)
{
	PGconn *conn = PQconnectdb(sw_api_runtime_conninfo());
	struct sw_driver *d = NULL;
	char *text = NULL;
	if (PQstatus(conn) != CONNECTION_OK) {
		o->rc = -EIO;
		snprintf(o->err, sizeof(o->err), "the database cannot be reached");
	} else if ((o->rc = sw_driver_remote_new(conn, o->server_id, NULL, 0, &d, o->err, sizeof(o->err))) != 0) {
		o->not_connected = o->rc == -EHOSTUNREACH;
	} else if ((o->rc = sw_driver_metrics_sample(d, &text, o->err, sizeof(o->err))) == 0) {
		o->rc = remote_cut(o, text);
	}
	free(text);
	sw_driver_free(d);
	PQfinish(conn);
}

static void op_run(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	if (o->remote)
		remote_run(o);
	else
		o->rc = sw_api_metrics_sample_local(o->apps, &o->sample);
}

/* ---- back on the loop ---- */

static void op_done(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	struct sw_http_request *req = o->req;
	if (o->remote && o->not_connected) {
		sw_http_error(req, 409, "SERVER_NOT_CONNECTED", SW_DRIVER_NOT_CONNECTED);
	} else if (o->remote && o->rc == -ENOMEM) {
		sw_api_internal_error(req);
	} else if (o->remote && o->rc) {
		char msg[320];
		snprintf(msg, sizeof(msg), "The server's agent did not sample it: %s", o->err);
		sw_http_error(req, 502, "RUNTIME_UNAVAILABLE", msg);
	} else if (o->remote) {
		char *text = json_dumps(o->remote_sample, JSON_COMPACT);
		struct sw_buf buf = { 0 };
		struct sw_json j;
		sw_http_json_begin(req, &buf, &j);
		sw_json_raw(&j, sw_str_cstr(text ? text : ""));
		sw_http_json_end(req, 200, &buf, &j);
		free(text);
	} else if (o->rc == -EIO) {
		sw_log_error("metrics: no sample: %s", sw_api_metrics_local_why());
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server's metrics cannot be read now.");
	} else if (o->rc < 0) {
		sw_api_internal_error(req);
	} else {
		struct sw_buf buf = { 0 };
		struct sw_json j;
		sw_http_json_begin(req, &buf, &j);
		o->sample.platform_json = o->platform;
		sw_metrics_sample_write(&o->sample, o->server_id, &j);
		sw_http_json_end(req, 200, &buf, &j);
	}
	op_free(o);
}

static void platform_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	struct sw_http_request *req = o->req;
	if (!sw_api_found(req, res, err)) {
		op_free(o);
		return;
	}
	if (!(o->platform = strdup(PQgetvalue(res, 0, 0)))) {
		op_free(o);
		sw_api_internal_error(req);
		return;
	}
	if (!sw_api_submit(req, &o->job, op_run, op_done))
		op_free(o);
}

static void server_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	struct sw_http_request *req = o->req;
	if (!sw_api_found(req, res, err)) {
		op_free(o);
		return;
	}
	o->remote = sw_api_runtime_target_read(res, o->server_id);
	o->apps = json_loads(PQgetvalue(res, 0, SW_DB_RUNTIME_APPLICATION_IDS), 0, NULL);
	if (!json_is_array(o->apps)) {
		op_free(o);
		sw_api_internal_error(req);
		return;
	}
	/* The control plane's own figures, for operators, on its own host's
	 * sample: read on the loop before the sample's work. */
	if (!o->remote && req->principal.is_operator) {
		if (!sw_api_query(req, &sw_db_stmt_metrics_platform, NULL, 0, platform_loaded, o))
			op_free(o);
		return;
	}
	if (!sw_api_submit(req, &o->job, op_run, op_done))
		op_free(o);
}

static void server_sample(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	struct op *o = calloc(1, sizeof(*o));
	if (!o) {
		sw_api_internal_error(req);
		return;
	}
	o->req = req;
	const char *params[2] = { req->principal.organization_id, id };
	if (!sw_api_query(req, &sw_db_stmt_runtime_server, params, 2, server_loaded, o))
		op_free(o);
}

/* ---- history: GET /servers/:id/metrics, GET /applications/:id/metrics ---- */

/* The widest range of one answer, per resolution: a day of minutes (1440
 * points per series), 90 days of hours (2160). */
#define HISTORY_MINUTE_RANGE_US (24LL * 3600 * 1000000)
#define HISTORY_HOUR_RANGE_US (90LL * 24 * 3600 * 1000000)
/* Without since: the last hour of minutes, the last day of hours. */
#define HISTORY_MINUTE_DEFAULT_US (3600LL * 1000000)
#define HISTORY_HOUR_DEFAULT_US (24LL * 3600 * 1000000)

static const int err_history[] = { 404, 422, 503, 0 };

static void history_answered(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_found(req, res, err))
		return;
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_raw(&j, sw_str_cstr(PQgetvalue(res, 0, 0)));
	sw_http_json_end(req, 200, &buf, &j);
}

static bool time_param(const char *field, const char *v, int64_t *ret_us, struct sw_field_errors *fe)
{
	if (!v)
		return false;
	if (sw_rfc3339_parse_us(sw_str_cstr(v), ret_us) < 0) {
		sw_field_error(fe, field, "must be an RFC 3339 date-time such as 2026-11-21T16:22:35.123Z");
		return false;
	}
	return true;
}

static void history(struct sw_http_request *req, const struct sw_db_stmt *stmt)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	static const char *const names[] = { "resolution", "since", "until", NULL };
	enum { RESOLUTION, SINCE, UNTIL };
	const char *v[3];
	struct sw_field_errors fe = { 0 };
	const char *resolution = "MINUTE";
	int64_t since_us = 0, until_us = 0;
	bool have_since = false, have_until = false;
	if (sw_query_read(&req->arena, req->query, names, v, &fe)) {
		if (v[RESOLUTION]) {
			if (strcmp(v[RESOLUTION], "MINUTE") == 0 || strcmp(v[RESOLUTION], "HOUR") == 0)
				resolution = v[RESOLUTION];
			else
				sw_field_error(&fe, "resolution", "must be MINUTE or HOUR");
		}
		have_since = time_param("since", v[SINCE], &since_us, &fe);
		have_until = time_param("until", v[UNTIL], &until_us, &fe);
	}
	bool hour = strcmp(resolution, "HOUR") == 0;
	if (!fe.count) {
		if (!have_until) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			until_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		}
		if (!have_since)
			since_us = until_us - (hour ? HISTORY_HOUR_DEFAULT_US : HISTORY_MINUTE_DEFAULT_US);
		if (until_us <= since_us)
			sw_field_error(&fe, "until", "must be later than since");
		else if (until_us - since_us > (hour ? HISTORY_HOUR_RANGE_US : HISTORY_MINUTE_RANGE_US))
			sw_field_error(&fe, "since", hour ? "must be at most 90 days before until at HOUR resolution"
							  : "must be at most 24 hours before until at MINUTE resolution");
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	char since[24], until[24];
	snprintf(since, sizeof(since), "%lld", (long long)since_us);
	snprintf(until, sizeof(until), "%lld", (long long)until_us);
	const char *params[5] = { req->principal.organization_id, id, resolution, since, until };
	sw_api_query(req, stmt, params, 5, history_answered, req);
}

static void server_metrics(struct sw_http_request *req)
{
	history(req, &sw_db_stmt_metrics_server_history);
}

static void application_metrics(struct sw_http_request *req)
{
	history(req, &sw_db_stmt_metrics_application_history);
}

/* ---- GET /servers/:id/live (the stream: metrics_live.c) ---- */

static const int err_live[] = { 404, 409, 503, 0 };

static void live_server_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_found(req, res, err))
		return;
	if (strcmp(PQgetvalue(res, 0, SW_DB_RUNTIME_SERVER_IS_LOCAL), "t") != 0 &&
	    strcmp(PQgetvalue(res, 0, SW_DB_RUNTIME_SERVER_STATUS), "ONLINE") != 0) {
		sw_http_error(req, 409, "SERVER_NOT_CONNECTED", SW_DRIVER_NOT_CONNECTED);
		return;
	}
	char server_id[37];
	bool remote = sw_api_runtime_target_read(res, server_id);
	sw_api_metrics_live_start(req, server_id, remote);
}

static void server_live(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	const char *params[2] = { req->principal.organization_id, id };
	sw_api_query(req, &sw_db_stmt_runtime_server, params, 2, live_server_loaded, req);
}

/* ---- route and schema ---- */

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/servers/:id/sample", SW_ACCESS_SESSION, server_sample, 0, 0,
	  { "Take one metric sample of a server now",
	    "Reads the server's host and containers now (the spec's metric sample groups): host facts, "
	    "CPU (total, per core, steal, load averages), memory, file systems, network interfaces "
	    "with rates, and the organization's containers (CPU % of one core, memory against its "
	    "limit, network bytes, restart count, health, OOM kills). Rates compare with the previous "
	    "reading when it is recent, else with one taken 250 ms before. scope CONTAINER: Steward "
	    "runs in a container without HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH, so the "
	    "figures describe that container. sources says where container figures came from "
	    "(ebpf, cgroup-v2, cgroup-v1, none) and why eBPF is off when it is. A figure that could "
	    "not be read is null. runtimeDisk (the engine's images, containers' writable layers, "
	    "volumes and build cache) is read at most every 5 minutes, slow as it is: measuredAt says "
	    "when; null until the engine has answered once. platform: the control plane's own figures "
	    "(database size, connections, per job queue depth and failed jobs), for operators on the "
	    "local server only, null otherwise. A remote server is sampled by its agent, with the same sampler under the agent's "
	    "HOST_* paths and its engine's containers (the organization's only): 409 "
	    "SERVER_NOT_CONNECTED when its agent is not connected, 502 RUNTIME_UNAVAILABLE when the "
	    "agent does not answer or cannot sample. The worker pool full, or no sampler: 503." SW_API_DOC_SCOPED,
	    "Metrics", NULL, "MetricSample", 200, err_sample } },
	{ SW_HTTP_GET, "/servers/:id/live", SW_ACCESS_SESSION, server_live, 0, 0,
	  { .summary = "Live metrics of a server (Server-Sent Events)",
	    .description = "A text/event-stream of the server's samples as the metrics loop takes them, every 15 "
	    "seconds: each an event \"sample\" whose data is a MetricSample (the organization's "
	    "containers only) and whose id is the sample's time in Unix milliseconds. It starts with "
	    "the latest sample; with Last-Event-ID, with every sample after that id still in the "
	    "60-second cache instead. A comment \": ping\" is sent when nothing else was for 15 "
	    "seconds. One frame per sample is made and shared by every reader; a reader too far "
	    "behind is cut and resumes with Last-Event-ID. At most 2000 readers per server in one "
	    "process (503 past it). A remote server's samples are taken through its agent "
	    "(metrics.sample) each tick while the agent is connected, by the replica that writes the metric "
	    "history and by any other replica that has readers of it; its takenAt is the agent's clock, "
	    "its event id the control plane's tick. 409 SERVER_NOT_CONNECTED when its agent is not "
	    "connected as the stream starts; a stream already open only carries heartbeats while the "
	    "agent is away." SW_API_DOC_SCOPED,
	    .tag = "Metrics", .success_status = 200, .error_statuses = err_live,
	    .media_type = "text/event-stream" } },
	{ SW_HTTP_GET, "/servers/:id/metrics", SW_ACCESS_SESSION, server_metrics, 0, 0,
	  { "A server's metric history",
	    "The server host's figures per minute (resolution=MINUTE, the default) or per hour "
	    "(HOUR), for the buckets that start from since (inclusive) to until (exclusive), RFC "
	    "3339 date-times: by default the last hour of minutes or the last day of hours; at most "
	    "24 hours of minutes or 90 days of hours in one answer (422 otherwise). Minute rows "
	    "are kept METRICS_MINUTE_RETENTION_DAYS (default 7), hour rows METRICS_RETENTION_DAYS "
	    "(default 90). Each point folds the 15-second samples of its bucket: samples counts "
	    "them; gauges give their average, minimum and maximum; network bytes are what crossed "
	    "the interfaces (loopback aside) during the bucket. The current hour is folded from its "
	    "minutes when read. A bucket without samples (stewardd was not running) has no point." SW_API_DOC_SCOPED,
	    "Metrics", NULL, "ServerMetrics", 200, err_history, "resolution since until" } },
	{ SW_HTTP_GET, "/applications/:id/metrics", SW_ACCESS_SESSION, application_metrics, 0, 0,
	  { "An application's container metric history",
	    "Per container of the application (containerId: the engine's id; a new container is a "
	    "new series), per minute or hour, with the range rules and retention of GET "
	    "/servers/:id/metrics. cpuPercent is of one core; cpuSeconds, network bytes, oomKills "
	    "and restarts are what happened during the bucket; network is null without eBPF." SW_API_DOC_SCOPED,
	    "Metrics", NULL, "ApplicationMetrics", 200, err_history, "resolution since until" } },
};

#define NUM "{\"type\":\"number\"}"
#define INT "{\"type\":\"integer\",\"minimum\":0}"
#define INT_OR_NULL "{\"type\":[\"integer\",\"null\"],\"minimum\":0}"
#define STR "{\"type\":\"string\"}"
#define STR_OR_NULL "{\"type\":[\"string\",\"null\"]}"
#define PCT "{\"type\":\"number\",\"minimum\":0}"
#define AVG_MIN_MAX "{\"type\":[\"object\",\"null\"],\"required\":[\"avg\",\"min\",\"max\"],\"properties\":{" \
	"\"avg\":{\"type\":[\"number\",\"null\"]},\"min\":{\"type\":[\"number\",\"null\"]},\"max\":{\"type\":[\"number\",\"null\"]}}}"
#define RANGE_PROPS "\"resolution\":{\"type\":\"string\",\"enum\":[\"MINUTE\",\"HOUR\"]}," \
	"\"since\":{\"type\":\"string\",\"format\":\"date-time\"},\"until\":{\"type\":\"string\",\"format\":\"date-time\"}"

static const char schemas[] = "{"
	"\"MetricSample\":{\"type\":\"object\",\"required\":[\"serverId\",\"takenAt\",\"intervalMs\","
	"\"scope\",\"host\",\"cpu\",\"memory\",\"disks\",\"runtimeDisk\",\"network\",\"containers\",\"sources\","
	"\"platform\"],"
	"\"properties\":{"
	"\"serverId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"takenAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"intervalMs\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Between the two readings "
	"rates and percentages come from.\"},"
	"\"scope\":{\"type\":\"string\",\"enum\":[\"HOST\",\"CONTAINER\"],\"description\":\"CONTAINER: "
	"the figures describe the container Steward runs in (the host's trees are not mounted); the "
	"dashboard shows a banner.\"},"
	"\"host\":{\"type\":\"object\",\"required\":[\"osName\",\"osVersion\",\"kernel\",\"architecture\","
	"\"hostname\",\"uptimeSeconds\",\"publicIp\",\"virtualization\"],\"properties\":{"
	"\"osName\":" STR_OR_NULL ",\"osVersion\":" STR_OR_NULL ",\"kernel\":" STR_OR_NULL ","
	"\"architecture\":" STR_OR_NULL ",\"hostname\":" STR_OR_NULL ",\"uptimeSeconds\":" INT ","
	"\"publicIp\":{\"type\":[\"string\",\"null\"],\"description\":\"METRICS_PUBLIC_IP; never "
	"discovered over the network.\"},"
	"\"virtualization\":{\"type\":[\"string\",\"null\"],\"description\":\"none, a hypervisor (kvm, "
	"qemu, vmware, microsoft, xen, oracle, amazon, google, vm when unnamed) or a container "
	"runtime (docker, podman, container).\"}}},"
	"\"cpu\":{\"type\":\"object\",\"required\":[\"model\",\"physicalCores\",\"logicalCores\","
	"\"totalPercent\",\"perCorePercent\",\"load1\",\"load5\",\"load15\",\"stealPercent\"],"
	"\"properties\":{\"model\":" STR_OR_NULL ",\"physicalCores\":" INT ",\"logicalCores\":" INT ","
	"\"totalPercent\":" PCT ",\"perCorePercent\":{\"type\":\"array\",\"items\":" PCT "},"
	"\"load1\":" PCT ",\"load5\":" PCT ",\"load15\":" PCT ",\"stealPercent\":" PCT "}},"
	"\"memory\":{\"type\":\"object\",\"description\":\"Bytes. usedBytes as free(1) shows it: total "
	"- free - buffers - cache.\",\"required\":[\"totalBytes\",\"usedBytes\",\"freeBytes\","
	"\"availableBytes\",\"buffersCacheBytes\",\"swapUsedBytes\",\"swapTotalBytes\"],\"properties\":{"
	"\"totalBytes\":" INT ",\"usedBytes\":" INT ",\"freeBytes\":" INT ",\"availableBytes\":" INT ","
	"\"buffersCacheBytes\":" INT ",\"swapUsedBytes\":" INT ",\"swapTotalBytes\":" INT "}},"
	"\"disks\":{\"type\":\"array\",\"description\":\"File systems that store data, one per device.\","
	"\"items\":{\"type\":\"object\",\"required\":[\"mountPoint\",\"device\",\"fsType\",\"totalBytes\","
	"\"usedBytes\",\"freeBytes\",\"availableBytes\",\"inodesTotal\",\"inodesUsed\",\"inodesFree\"],"
	"\"properties\":{\"mountPoint\":" STR ",\"device\":" STR_OR_NULL ",\"fsType\":" STR ","
	"\"totalBytes\":" INT ",\"usedBytes\":" INT ",\"freeBytes\":" INT ",\"availableBytes\":" INT ","
	"\"inodesTotal\":" INT ",\"inodesUsed\":" INT ",\"inodesFree\":" INT "}}},"
	"\"runtimeDisk\":{\"type\":[\"object\",\"null\"],\"description\":\"The container runtime's disk "
	"use, read at most every 5 minutes (measuredAt).\",\"required\":[\"imagesBytes\",\"containersBytes\","
	"\"volumesBytes\",\"buildCacheBytes\",\"measuredAt\"],\"properties\":{\"imagesBytes\":" INT ","
	"\"containersBytes\":" INT ",\"volumesBytes\":" INT ",\"buildCacheBytes\":" INT ","
	"\"measuredAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"network\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"interface\","
	"\"rxBytes\",\"txBytes\",\"rxBytesPerSecond\",\"txBytesPerSecond\"],\"properties\":{"
	"\"interface\":" STR ",\"rxBytes\":" INT ",\"txBytes\":" INT ",\"rxBytesPerSecond\":" PCT ","
	"\"txBytesPerSecond\":" PCT "}}},"
	"\"containers\":{\"type\":\"object\",\"required\":[\"running\",\"stopped\",\"unhealthy\",\"error\","
	"\"items\"],\"properties\":{\"running\":" INT ",\"stopped\":" INT ",\"unhealthy\":" INT ","
	"\"error\":{\"type\":[\"string\",\"null\"],\"description\":\"Why containers are missing: the "
	"container engine did not answer.\"},"
	"\"items\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"containerId\","
	"\"applicationId\",\"name\",\"state\",\"health\",\"restartCount\",\"cpuPercent\",\"cpuTimeMicroseconds\",\"memoryBytes\","
	"\"memoryLimitBytes\",\"network\",\"oomKills\",\"oomEvents\"],\"properties\":{"
	"\"containerId\":" STR ",\"applicationId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"name\":" STR_OR_NULL ",\"state\":" STR_OR_NULL ","
	"\"health\":{\"type\":[\"string\",\"null\"],\"enum\":[\"starting\",\"healthy\",\"unhealthy\",null]},"
	"\"restartCount\":" INT ","
	"\"cpuPercent\":{\"type\":[\"number\",\"null\"],\"minimum\":0,\"description\":\"Of one core: "
	"200 is two cores busy.\"},"
	"\"cpuTimeMicroseconds\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"description\":"
	"\"CPU time of the container's cgroup since it started (cpu.stat usage_usec); null when not read.\"},"
	"\"memoryBytes\":" INT_OR_NULL ",\"memoryLimitBytes\":{\"type\":[\"integer\",\"null\"],"
	"\"minimum\":0,\"description\":\"null: no limit.\"},"
	"\"network\":{\"type\":[\"object\",\"null\"],\"description\":\"Since the eBPF collectors were "
	"loaded, IP bytes of the container's sockets (host networking included); null without eBPF.\","
	"\"properties\":{\"rxBytes\":" INT ",\"txBytes\":" INT ",\"rxPackets\":" INT ",\"txPackets\":" INT "}},"
	"\"oomKills\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"description\":\"The cgroup's "
	"own count since the container started.\"},"
	"\"oomEvents\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"OOM kills seen by eBPF "
	"since the sampler started.\"}}}}}},"
	"\"sources\":{\"type\":\"object\",\"required\":[\"containerCpu\",\"containerMemory\","
	"\"containerNetwork\",\"containerOom\",\"ebpf\"],\"properties\":{"
	"\"containerCpu\":{\"type\":\"string\",\"enum\":[\"cgroup-v2\",\"cgroup-v1\",\"none\"]},"
	"\"containerMemory\":{\"type\":\"string\",\"enum\":[\"cgroup-v2\",\"cgroup-v1\",\"none\"]},"
	"\"containerNetwork\":{\"type\":\"string\",\"enum\":[\"ebpf\",\"none\"]},"
	"\"containerOom\":{\"type\":\"string\",\"enum\":[\"cgroup-v2\",\"cgroup-v1\",\"none\"]},"
	"\"ebpf\":{\"type\":\"string\",\"description\":\"loaded, or why the eBPF collectors are off.\"}}},"
	"\"platform\":{\"type\":[\"object\",\"null\"],\"description\":\"The control plane's own figures, "
	"for operators on GET /servers/:id/sample of the local server (null otherwise, and on the live "
	"stream, whose frames every reader shares): its PostgreSQL database's size, the connections to "
	"it (all, and those running a statement), and per job queue the jobs waiting (depth), "
	"running, failed (still recorded) and failed in the last 24 hours.\","
	"\"required\":[\"databaseBytes\",\"connections\",\"activeConnections\",\"queues\"],\"properties\":{"
	"\"databaseBytes\":" INT ",\"connections\":" INT ",\"activeConnections\":" INT ","
	"\"queues\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"queue\",\"depth\","
	"\"running\",\"failed\",\"failedLast24h\"],\"properties\":{\"queue\":{\"type\":\"string\",\"enum\":["
	"\"build\",\"deploy\",\"lifecycle\"]},\"depth\":" INT ",\"running\":" INT ",\"failed\":" INT ","
	"\"failedLast24h\":" INT "}}}}}"
	"}}"
	",\"ServerMetrics\":{\"type\":\"object\",\"required\":[\"serverId\",\"resolution\",\"since\",\"until\",\"points\"],"
	"\"properties\":{\"serverId\":{\"type\":\"string\",\"format\":\"uuid\"}," RANGE_PROPS ","
	"\"points\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"bucket\",\"samples\","
	"\"cpuPercent\",\"memoryUsedBytes\",\"memoryTotalBytes\",\"load1\",\"swapUsedBytesMax\",\"swapTotalBytes\","
	"\"diskUsedBytesMax\",\"diskTotalBytes\",\"networkRxBytes\",\"networkTxBytes\"],\"properties\":{"
	"\"bucket\":{\"type\":\"string\",\"format\":\"date-time\"},\"samples\":" INT ","
	"\"cpuPercent\":" AVG_MIN_MAX ",\"memoryUsedBytes\":" AVG_MIN_MAX ",\"memoryTotalBytes\":" INT_OR_NULL ","
	"\"load1\":{\"type\":\"object\",\"properties\":{\"avg\":" NUM ",\"max\":" NUM "}},"
	"\"swapUsedBytesMax\":" INT_OR_NULL ",\"swapTotalBytes\":" INT_OR_NULL ",\"diskUsedBytesMax\":" INT_OR_NULL ","
	"\"diskTotalBytes\":" INT_OR_NULL ",\"networkRxBytes\":" INT_OR_NULL ",\"networkTxBytes\":" INT_OR_NULL "}}}}}"
	",\"ApplicationMetrics\":{\"type\":\"object\",\"required\":[\"applicationId\",\"resolution\",\"since\","
	"\"until\",\"points\"],\"properties\":{\"applicationId\":{\"type\":\"string\",\"format\":\"uuid\"}," RANGE_PROPS ","
	"\"points\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"bucket\",\"containerId\","
	"\"samples\",\"cpuPercent\",\"cpuSeconds\",\"memoryBytes\",\"memoryLimitBytes\",\"networkRxBytes\","
	"\"networkTxBytes\",\"oomKills\",\"restarts\"],\"properties\":{"
	"\"bucket\":{\"type\":\"string\",\"format\":\"date-time\"},\"containerId\":" STR ",\"samples\":" INT ","
	"\"cpuPercent\":" AVG_MIN_MAX ",\"cpuSeconds\":{\"type\":[\"number\",\"null\"],\"minimum\":0},"
	"\"memoryBytes\":" AVG_MIN_MAX ",\"memoryLimitBytes\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,"
	"\"description\":\"null: no limit.\"},\"networkRxBytes\":" INT_OR_NULL ",\"networkTxBytes\":" INT_OR_NULL ","
	"\"oomKills\":" INT_OR_NULL ",\"restarts\":" INT_OR_NULL "}}}}}"
	"}";

const struct sw_api_route_group sw_api_metrics_group = { routes, SW_ARRAY_SIZE(routes), schemas };
