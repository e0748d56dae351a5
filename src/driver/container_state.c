/* What the engine says beyond its lists (container_state.h): one
 * container's state, the fields the metrics sampler needs, and the
 * engine's disk usage. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "driver_internal.h"
#include "steward/driver/container_state.h"

static void copy_json_str(char *dst, size_t size, json_t *v)
{
	snprintf(dst, size, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* GET path (under the engine's API base) into *ret (a new reference) when
 * the engine answers 200 with JSON; else -errno with a sentence naming
 * what. */
static int engine_get_json(struct sw_driver *d, const char *path, const char *what, json_t **ret, char *err,
			   size_t errlen)
{
	char url[256];
	snprintf(url, sizeof(url), SW_DRIVER_ENGINE_BASE "%s", path);
	struct sw_driver_http h = { .method = "GET", .url = url, .unix_socket = d->docker_socket,
				    .timeout_ms = SW_DRIVER_ENGINE_TIMEOUT_MS };
	*ret = NULL;
	int rc = sw_driver_http_run(&h, "the Docker engine", err, errlen);
	if (rc == 0 && h.status != 200) {
		sw_driver_answer_error(&h, what, err, errlen);
		rc = sw_driver_status_errno(h.status);
	}
	if (rc == 0 && !(*ret = json_loadb(h.response.data, h.response.len, 0, NULL))) {
		snprintf(err, errlen, "the Docker engine sent an answer that is not JSON");
		rc = -EIO;
	}
	sw_buf_release(&h.response);
	return rc;
}

int sw_driver_container_state(struct sw_driver *d, const char *id, struct sw_container_state *ret,
			      char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_container_state(d, id, ret, err, errlen);
	if (!sw_driver_token_ok(id, "_.-", SW_DRIVER_ID_MAX - 1)) {
		snprintf(err, errlen, "invalid container id");
		return -EINVAL;
	}
	char path[128];
	snprintf(path, sizeof(path), "/containers/%s/json", id);
	json_t *doc = NULL;
	int rc = engine_get_json(d, path, "the container cannot be inspected", &doc, err, errlen);
	if (rc < 0)
		return rc;
	json_t *st = json_object_get(doc, "State");
	if (!json_is_object(st)) {
		snprintf(err, errlen, "the Docker engine sent a container without its state");
		rc = -EIO;
		goto out;
	}
	memset(ret, 0, sizeof(*ret));
	copy_json_str(ret->id, sizeof(ret->id), json_object_get(doc, "Id"));
	const char *name = json_string_value(json_object_get(doc, "Name"));
	snprintf(ret->name, sizeof(ret->name), "%s", name ? name + (name[0] == '/') : "");
	copy_json_str(ret->application_id, sizeof(ret->application_id),
		      json_object_get(json_object_get(json_object_get(doc, "Config"), "Labels"), "steward.application"));
	copy_json_str(ret->state, sizeof(ret->state), json_object_get(st, "Status"));
	copy_json_str(ret->health, sizeof(ret->health), json_object_get(json_object_get(st, "Health"), "Status"));
	ret->restart_count = json_integer_value(json_object_get(doc, "RestartCount"));
	json_int_t pid = json_integer_value(json_object_get(st, "Pid"));
	ret->pid = pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
	ret->oom_killed = json_is_true(json_object_get(st, "OOMKilled"));
out:
	json_decref(doc);
	return rc;
}

/* The sum of member (a non-negative integer; the engine writes -1 for
 * "not computed") over the array's objects, reached through sub when given. */
static uint64_t sum_sizes(json_t *array, const char *sub, const char *member)
{
	uint64_t total = 0;
	size_t i;
	json_t *v;
	json_array_foreach(array, i, v) {
		json_t *o = sub ? json_object_get(v, sub) : v;
		json_int_t n = json_integer_value(json_object_get(o, member));
		if (n > 0)
			total += (uint64_t)n;
	}
	return total;
}

int sw_driver_disk_usage(struct sw_driver *d, struct sw_runtime_disk_usage *ret, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_unavailable("The engine's disk usage", err, errlen);
	json_t *doc = NULL;
	int rc = engine_get_json(d, "/system/df", "the disk usage cannot be read", &doc, err, errlen);
	if (rc < 0)
		return rc;
	json_int_t layers = json_integer_value(json_object_get(doc, "LayersSize"));
	ret->images = layers > 0 ? (uint64_t)layers : 0;
	ret->containers = sum_sizes(json_object_get(doc, "Containers"), NULL, "SizeRw");
	ret->volumes = sum_sizes(json_object_get(doc, "Volumes"), "UsageData", "Size");
	ret->build_cache = sum_sizes(json_object_get(doc, "BuildCache"), NULL, "Size");
	json_decref(doc);
	return 0;
}

int sw_driver_metrics_sample(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	*ret_json = NULL;
	if (d->remote)
		return d->rops->metrics_sample(d, ret_json, err, errlen);
	snprintf(err, errlen, "the local server is sampled by stewardd itself");
	return -EOPNOTSUPP;
}
