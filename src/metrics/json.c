/* A sample as the API's JSON object (the OpenAPI schema MetricSample in
 * src/api/metrics.c describes the same members; change both together).
 * Byte counts are integers; percentages and rates are numbers with two
 * decimals; a figure that could not be read is null, never 0. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "steward/metrics/metrics.h"

static void num(struct sw_json *j, const char *key, double v)
{
	char text[48];
	if (!isfinite(v))
		v = 0;
	int n = snprintf(text, sizeof(text), "%.2f", v);
	sw_json_key(j, key);
	sw_json_raw(j, sw_str_from(text, (size_t)n));
}

/* Unsigned figures above INT64_MAX do not occur (bytes of a host); clamp. */
static void u64(struct sw_json *j, const char *key, uint64_t v)
{
	sw_json_key(j, key);
	sw_json_int(j, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void str(struct sw_json *j, const char *key, const char *v)
{
	sw_json_key(j, key);
	sw_json_cstr(j, v && v[0] ? v : NULL);
}

static void iso8601(struct sw_json *j, const char *key, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	char text[40];
	gmtime_r(&t, &tm);
	size_t n = strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(text + n, sizeof(text) - n, ".%03dZ", (int)(ms % 1000));
	str(j, key, text);
}

static void container(struct sw_json *j, const struct sw_metrics_container *c)
{
	sw_json_object_begin(j);
	str(j, "containerId", c->ref.id);
	str(j, "applicationId", c->ref.application_id);
	str(j, "name", c->ref.name);
	str(j, "state", c->ref.state);
	str(j, "health", c->ref.health);
	u64(j, "restartCount", c->ref.restart_count < 0 ? 0 : (uint64_t)c->ref.restart_count);
	if (c->have_cpu) {
		num(j, "cpuPercent", c->cpu_pct);
	} else {
		sw_json_key(j, "cpuPercent");
		sw_json_null(j);
	}
	sw_json_key(j, "cpuTimeMicroseconds");
	if (c->have_cpu_usage)
		sw_json_int(j, (int64_t)SW_MIN(c->cpu_usage_us, (uint64_t)INT64_MAX));
	else
		sw_json_null(j);
	sw_json_key(j, "memoryBytes");
	if (c->have_memory)
		sw_json_int(j, (int64_t)SW_MIN(c->memory_bytes, (uint64_t)INT64_MAX));
	else
		sw_json_null(j);
	sw_json_key(j, "memoryLimitBytes");
	if (c->have_memory && c->memory_limit != UINT64_MAX)
		sw_json_int(j, (int64_t)SW_MIN(c->memory_limit, (uint64_t)INT64_MAX));
	else
		sw_json_null(j);
	sw_json_key(j, "network");
	if (c->have_net) {
		sw_json_object_begin(j);
		u64(j, "rxBytes", c->net_rx_bytes);
		u64(j, "txBytes", c->net_tx_bytes);
		u64(j, "rxPackets", c->net_rx_packets);
		u64(j, "txPackets", c->net_tx_packets);
		sw_json_object_end(j);
	} else {
		sw_json_null(j);
	}
	sw_json_key(j, "oomKills");
	if (c->have_oom)
		sw_json_int(j, (int64_t)SW_MIN(c->oom_kills, (uint64_t)INT64_MAX));
	else
		sw_json_null(j);
	u64(j, "oomEvents", c->oom_events);
	sw_json_object_end(j);
}

void sw_metrics_sample_write(const struct sw_metrics_sample *s, const char *server_id, struct sw_json *j)
{
	sw_json_object_begin(j);
	if (server_id)
		str(j, "serverId", server_id);
	iso8601(j, "takenAt", s->taken_at_ms);
	u64(j, "intervalMs", s->interval_ms);
	str(j, "scope", s->describes_container ? "CONTAINER" : "HOST");

	sw_json_key(j, "host");
	sw_json_object_begin(j);
	str(j, "osName", s->os_name);
	str(j, "osVersion", s->os_version);
	str(j, "kernel", s->kernel);
	str(j, "architecture", s->arch);
	str(j, "hostname", s->hostname);
	u64(j, "uptimeSeconds", s->uptime_s);
	str(j, "publicIp", s->public_ip);
	str(j, "virtualization", s->virtualization);
	sw_json_object_end(j);

	sw_json_key(j, "cpu");
	sw_json_object_begin(j);
	str(j, "model", s->cpu_model);
	u64(j, "physicalCores", s->physical_cores);
	u64(j, "logicalCores", s->logical_cores);
	num(j, "totalPercent", s->cpu_pct);
	sw_json_key(j, "perCorePercent");
	sw_json_array_begin(j);
	for (size_t i = 0; i < s->ncpu; i++) {
		char text[32];
		int n = snprintf(text, sizeof(text), "%.2f", isfinite(s->cpu_core_pct[i]) ? s->cpu_core_pct[i] : 0.0);
		sw_json_raw(j, sw_str_from(text, (size_t)n));
	}
	sw_json_array_end(j);
	num(j, "load1", s->load[0]);
	num(j, "load5", s->load[1]);
	num(j, "load15", s->load[2]);
	num(j, "stealPercent", s->steal_pct);
	sw_json_object_end(j);

	sw_json_key(j, "memory");
	sw_json_object_begin(j);
	u64(j, "totalBytes", s->memory.total);
	u64(j, "usedBytes", s->memory.used);
	u64(j, "freeBytes", s->memory.free);
	u64(j, "availableBytes", s->memory.available);
	u64(j, "buffersCacheBytes", s->memory.buffers + s->memory.cache);
	u64(j, "swapUsedBytes", s->memory.swap_used);
	u64(j, "swapTotalBytes", s->memory.swap_total);
	sw_json_object_end(j);

	sw_json_key(j, "disks");
	sw_json_array_begin(j);
	for (size_t i = 0; i < s->nfs; i++) {
		const struct sw_metrics_fs *f = &s->fs[i];
		sw_json_object_begin(j);
		str(j, "mountPoint", f->mount_point);
		str(j, "device", f->device);
		str(j, "fsType", f->fstype);
		u64(j, "totalBytes", f->total);
		u64(j, "usedBytes", f->used);
		u64(j, "freeBytes", f->free);
		u64(j, "availableBytes", f->available);
		u64(j, "inodesTotal", f->inodes_total);
		u64(j, "inodesUsed", f->inodes_used);
		u64(j, "inodesFree", f->inodes_free);
		sw_json_object_end(j);
	}
	sw_json_array_end(j);

	sw_json_key(j, "runtimeDisk");
	if (s->have_runtime_disk) {
		sw_json_object_begin(j);
		u64(j, "imagesBytes", s->runtime_images);
		u64(j, "containersBytes", s->runtime_containers);
		u64(j, "volumesBytes", s->runtime_volumes);
		u64(j, "buildCacheBytes", s->runtime_build_cache);
		iso8601(j, "measuredAt", s->runtime_disk_at_ms);
		sw_json_object_end(j);
	} else {
		sw_json_null(j);
	}

	sw_json_key(j, "network");
	sw_json_array_begin(j);
	for (size_t i = 0; i < s->niface; i++) {
		const struct sw_metrics_iface *n = &s->iface[i];
		sw_json_object_begin(j);
		str(j, "interface", n->name);
		u64(j, "rxBytes", n->rx_bytes);
		u64(j, "txBytes", n->tx_bytes);
		num(j, "rxBytesPerSecond", n->rx_bytes_per_s);
		num(j, "txBytesPerSecond", n->tx_bytes_per_s);
		sw_json_object_end(j);
	}
	sw_json_array_end(j);

	sw_json_key(j, "containers");
	sw_json_object_begin(j);
	u64(j, "running", s->running);
	u64(j, "stopped", s->stopped);
	u64(j, "unhealthy", s->unhealthy);
	str(j, "error", s->containers_error);
	sw_json_key(j, "items");
	sw_json_array_begin(j);
	for (size_t i = 0; i < s->ncontainer; i++)
		container(j, &s->container[i]);
	sw_json_array_end(j);
	sw_json_object_end(j);

	sw_json_key(j, "sources");
	sw_json_object_begin(j);
	str(j, "containerCpu", sw_metrics_source_name(s->container_cpu_src));
	str(j, "containerMemory", sw_metrics_source_name(s->container_memory_src));
	str(j, "containerNetwork", sw_metrics_source_name(s->container_net_src));
	str(j, "containerOom", sw_metrics_source_name(s->container_oom_src));
	str(j, "ebpf", s->bpf_status);
	sw_json_object_end(j);

	sw_json_key(j, "platform");
	if (s->platform_json)
		sw_json_raw(j, sw_str_cstr(s->platform_json));
	else
		sw_json_null(j);
	sw_json_object_end(j);
}

/* ---- reading a sample back (an agent's) ---- */

static double rnum(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static uint64_t ru64(const json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));
	return v > 0 ? (uint64_t)v : 0;
}

static void rstr(const json_t *o, const char *key, char *dst, size_t size)
{
	const char *v = json_string_value(json_object_get(o, key));
	snprintf(dst, size, "%s", v ? v : "");
}

static void container_read(const json_t *o, struct sw_metrics_container *c)
{
	memset(c, 0, sizeof(*c));
	rstr(o, "containerId", c->ref.id, sizeof(c->ref.id));
	rstr(o, "applicationId", c->ref.application_id, sizeof(c->ref.application_id));
	rstr(o, "name", c->ref.name, sizeof(c->ref.name));
	rstr(o, "state", c->ref.state, sizeof(c->ref.state));
	rstr(o, "health", c->ref.health, sizeof(c->ref.health));
	c->ref.restart_count = (int64_t)ru64(o, "restartCount");
	const json_t *cpu = json_object_get(o, "cpuPercent");
	c->have_cpu = json_is_number(cpu);
	c->cpu_pct = json_number_value(cpu);
	/* The cumulative CPU time the minute rows' cpu_usec comes from (an
	 * agent's sample: metrics_loop.c folds its deltas). */
	c->have_cpu_usage = json_is_integer(json_object_get(o, "cpuTimeMicroseconds"));
	c->cpu_usage_us = ru64(o, "cpuTimeMicroseconds");
	const json_t *mem = json_object_get(o, "memoryBytes");
	c->have_memory = json_is_integer(mem);
	c->memory_bytes = ru64(o, "memoryBytes");
	c->memory_limit = json_is_integer(json_object_get(o, "memoryLimitBytes")) ? ru64(o, "memoryLimitBytes")
										 : UINT64_MAX;
	const json_t *net = json_object_get(o, "network");
	c->have_net = json_is_object(net);
	c->net_rx_bytes = ru64(net, "rxBytes");
	c->net_tx_bytes = ru64(net, "txBytes");
	c->net_rx_packets = ru64(net, "rxPackets");
	c->net_tx_packets = ru64(net, "txPackets");
	c->have_oom = json_is_integer(json_object_get(o, "oomKills"));
	c->oom_kills = ru64(o, "oomKills");
	c->oom_events = ru64(o, "oomEvents");
}

int sw_metrics_sample_read(const json_t *o, struct sw_metrics_sample *ret)
{
	memset(ret, 0, sizeof(*ret));
	const json_t *cpu = json_object_get(o, "cpu");
	const json_t *mem = json_object_get(o, "memory");
	const json_t *disks = json_object_get(o, "disks");
	const json_t *net = json_object_get(o, "network");
	const json_t *containers = json_object_get(o, "containers");
	const json_t *items = json_object_get(containers, "items");
	if (!json_is_object(cpu) || !json_is_object(mem) || !json_is_array(disks) || !json_is_array(net) ||
	    !json_is_array(items))
		return -EINVAL;
	ret->interval_ms = (uint32_t)ru64(o, "intervalMs");
	const char *scope = json_string_value(json_object_get(o, "scope"));
	ret->describes_container = scope && strcmp(scope, "CONTAINER") == 0;
	rstr(json_object_get(o, "host"), "hostname", ret->hostname, sizeof(ret->hostname));
	ret->cpu_pct = rnum(cpu, "totalPercent");
	ret->steal_pct = rnum(cpu, "stealPercent");
	ret->load[0] = rnum(cpu, "load1");
	ret->load[1] = rnum(cpu, "load5");
	ret->load[2] = rnum(cpu, "load15");
	ret->memory.total = ru64(mem, "totalBytes");
	ret->memory.used = ru64(mem, "usedBytes");
	ret->memory.free = ru64(mem, "freeBytes");
	ret->memory.available = ru64(mem, "availableBytes");
	ret->memory.swap_used = ru64(mem, "swapUsedBytes");
	ret->memory.swap_total = ru64(mem, "swapTotalBytes");
	size_t nfs = json_array_size(disks), niface = json_array_size(net), nc = json_array_size(items);
	ret->fs = calloc(nfs ? nfs : 1, sizeof(*ret->fs));
	ret->iface = calloc(niface ? niface : 1, sizeof(*ret->iface));
	ret->container = calloc(nc ? nc : 1, sizeof(*ret->container));
	if (!ret->fs || !ret->iface || !ret->container)
		return -ENOMEM;
	for (size_t i = 0; i < nfs; i++) {
		const json_t *d = json_array_get(disks, i);
		struct sw_metrics_fs *f = &ret->fs[ret->nfs++];
		rstr(d, "mountPoint", f->mount_point, sizeof(f->mount_point));
		rstr(d, "device", f->device, sizeof(f->device));
		rstr(d, "fsType", f->fstype, sizeof(f->fstype));
		f->total = ru64(d, "totalBytes");
		f->used = ru64(d, "usedBytes");
		f->free = ru64(d, "freeBytes");
		f->available = ru64(d, "availableBytes");
	}
	for (size_t i = 0; i < niface; i++) {
		const json_t *n = json_array_get(net, i);
		struct sw_metrics_iface *f = &ret->iface[ret->niface++];
		rstr(n, "interface", f->name, sizeof(f->name));
		f->rx_bytes = ru64(n, "rxBytes");
		f->tx_bytes = ru64(n, "txBytes");
		f->rx_bytes_per_s = rnum(n, "rxBytesPerSecond");
		f->tx_bytes_per_s = rnum(n, "txBytesPerSecond");
	}
	for (size_t i = 0; i < nc; i++)
		container_read(json_array_get(items, i), &ret->container[ret->ncontainer++]);
	sw_metrics_sample_count(ret);
	rstr(containers, "error", ret->containers_error, sizeof(ret->containers_error));
	return 0;
}
