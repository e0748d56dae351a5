/* One container's state from the engine (container_state.h): the fields
 * the metrics sampler needs that the list does not carry. */
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

int sw_driver_container_state(struct sw_driver *d, const char *id, struct sw_container_state *ret,
			      char *err, size_t errlen)
{
	if (!sw_driver_token_ok(id, "_.-", SW_DRIVER_ID_MAX - 1)) {
		snprintf(err, errlen, "invalid container id");
		return -EINVAL;
	}
	char url[256];
	snprintf(url, sizeof(url), SW_DRIVER_ENGINE_BASE "/containers/%s/json", id);
	struct sw_driver_http h = { .method = "GET", .url = url, .unix_socket = d->docker_socket,
				    .timeout_ms = SW_DRIVER_ENGINE_TIMEOUT_MS };
	int rc = sw_driver_http_run(&h, "the Docker engine", err, errlen);
	json_t *doc = NULL;
	if (rc < 0)
		goto out;
	if (h.status != 200) {
		sw_driver_answer_error(&h, "the container cannot be inspected", err, errlen);
		rc = sw_driver_status_errno(h.status);
		goto out;
	}
	doc = json_loadb(h.response.data, h.response.len, 0, NULL);
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
	sw_buf_release(&h.response);
	return rc;
}
