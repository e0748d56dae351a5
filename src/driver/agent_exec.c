/* The agent's executor (steward/driver/remote.h): a command of the closed
 * set, its payload already checked against its kind's table
 * (src/agent/protocol.c), run through the agent's local driver, the same
 * code the control plane's local driver runs. The answer's members are what
 * remote.c reads back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "steward/base/secret.h"
#include "steward/base/sha.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/driver/container_state.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

/* The errors a command answers with, both ways: the agent's executor names
 * an errno, the remote driver maps the name back (remote.c). */
static const struct {
	int err;
	const char *code;
} codes[] = {
	{ ENOENT, "NOT_FOUND" },      { EEXIST, "ALREADY_EXISTS" },	{ EBUSY, "IN_USE" },
	{ EINVAL, "INVALID_ARGUMENT" }, { ECONNREFUSED, "UNREACHABLE" }, { ETIMEDOUT, "TIMED_OUT" },
	{ EFBIG, "TOO_LARGE" },       { ECANCELED, "CANCELLED" },	{ EOPNOTSUPP, "NOT_AVAILABLE" },
	{ EAGAIN, "NOT_RUNNING" },    { EBADMSG, "BAD_DATA" },		{ ENODATA, "NO_DATA" },
	{ EACCES, "REFUSED" },        { ENAMETOOLONG, "TOO_LONG" },
	{ ECONNRESET, "CONNECTION_RESET" }, { EPROTO, "NOT_HTTP" }, /* container.probe */
	/* The agent's own (docs/agent-protocol.md). */
	{ ETIMEDOUT, "EXPIRED" },     { EINVAL, "INVALID_COMMAND" },	{ EINVAL, "ID_REUSED" },
};

const char *sw_driver_error_code(int r)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].err == -r)
			return codes[i].code;
	return "FAILED";
}

int sw_driver_error_errno(const char *code)
{
	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].code, code) == 0)
			return -codes[i].err;
	return -EIO;
}

#define LIST_CAP 128 /* containers, images or volumes in one answer (SW_AGENT_MAX_RESULT) */

static const enum sw_agent_cmd kinds[] = {
	SW_AGENT_CMD_IMAGE_EXISTS,     SW_AGENT_CMD_IMAGE_LIST,	    SW_AGENT_CMD_IMAGE_REMOVE,
	SW_AGENT_CMD_CONTAINER_CREATE, SW_AGENT_CMD_CONTAINER_START,  SW_AGENT_CMD_CONTAINER_STOP,
	SW_AGENT_CMD_CONTAINER_REMOVE, SW_AGENT_CMD_CONTAINER_LIST,   SW_AGENT_CMD_VOLUME_CREATE,
	SW_AGENT_CMD_VOLUME_REMOVE,    SW_AGENT_CMD_VOLUME_LIST,	    SW_AGENT_CMD_ROUTE_SET,
	SW_AGENT_CMD_ROUTE_REMOVE,     SW_AGENT_CMD_PROXY_STATE,	    SW_AGENT_CMD_CONTAINER_FILE,
	SW_AGENT_CMD_IMAGE_BUILD,      SW_AGENT_CMD_CONTAINER_INSPECT,  SW_AGENT_CMD_CONTAINER_PROBE,
	SW_AGENT_CMD_SERVICE_DUMP,     SW_AGENT_CMD_SERVICE_RESTORE,
	SW_AGENT_CMD_CONTAINER_LOGS,  SW_AGENT_CMD_PORT_FREE,
};

uint32_t sw_driver_agent_kinds(void)
{
	uint32_t bits = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		bits |= SW_AGENT_KIND_BIT(kinds[i]);
	return bits;
}

/* A NULL-terminated vector of the strings of array a (NULL for no array;
 * a member that is not a string refuses it). *bad set on failure. */
static const char **strv(json_t *a, bool *bad)
{
	if (!a)
		return NULL;
	size_t n = json_array_size(a), i;
	const char **v = calloc(n + 1, sizeof(*v));
	json_t *e;
	if (!json_is_array(a) || !v) {
		free(v);
		*bad = true;
		return NULL;
	}
	json_array_foreach(a, i, e) {
		if (!(v[i] = json_string_value(e))) {
			free(v);
			*bad = true;
			return NULL;
		}
	}
	return v;
}

static int container_create(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err,
			    size_t errlen)
{
	json_t *spec = cmd->args.spec;
	bool bad = false;
	const char **env = strv(json_object_get(spec, "env"), &bad);
	const char **labels = strv(json_object_get(spec, "labels"), &bad);
	const char **argv = strv(json_object_get(spec, "cmd"), &bad);
	const char **mounts = strv(json_object_get(spec, "mounts"), &bad);
	json_int_t port = json_integer_value(json_object_get(spec, "port"));
	int rc = -EINVAL;
	if (bad || port < 0 || port > 65535) {
		snprintf(err, errlen, "the container's spec is not valid");
		goto out;
	}
	struct sw_container_spec s = {
		.name = cmd->args.name,
		.image = cmd->args.image,
		.env = env,
		.labels = labels,
		.cmd = argv,
		.mounts = mounts,
		.memory_bytes = (uint64_t)json_integer_value(json_object_get(spec, "memoryBytes")),
		.nano_cpus = (uint64_t)json_integer_value(json_object_get(spec, "nanoCpus")),
		.port = (unsigned)port,
		.restart_unless_stopped = json_is_true(json_object_get(spec, "restartUnlessStopped")),
	};
	char id[SW_DRIVER_ID_MAX] = "";
	rc = sw_driver_container_create(d, &s, id, err, errlen);
	if (rc == 0 || rc == -EEXIST) {
		*res = json_pack("{s:s,s:b}", "id", id, "existed", rc == -EEXIST);
		rc = 0;
	}
out:
	free(env);
	free(labels);
	free(argv);
	free(mounts);
	return rc;
}

static int containers_list(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err,
			   size_t errlen)
{
	struct sw_container_info *c = calloc(LIST_CAP, sizeof(*c));
	size_t n = 0;
	if (!c)
		return -ENOMEM;
	int rc = sw_driver_containers_list(d, cmd->args.application_id, c, LIST_CAP, &n, err, errlen);
	json_t *a = rc ? NULL : json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I}", "id", c[i].id, "name",
						   c[i].name, "image", c[i].image, "state", c[i].state,
						   "status", c[i].status, "project", c[i].project, "colour",
						   c[i].colour, "created", (json_int_t)c[i].created));
	free(c);
	if (!rc)
		*res = a ? json_pack("{s:o}", "containers", a) : NULL;
	return rc;
}

/* image.list ("tags") or volume.list ("names") of an application. */
static int names_list(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err,
		      size_t errlen)
{
	bool images = cmd->kind == SW_AGENT_CMD_IMAGE_LIST;
	size_t w = images ? SW_DRIVER_TAG_MAX : SW_DRIVER_VOLUME_MAX, n = 0;
	char *base = calloc(LIST_CAP, w);
	if (!base)
		return -ENOMEM;
	int rc = -EINVAL;
	if (!cmd->args.application_id)
		snprintf(err, errlen, "%s needs applicationId", cmd->kind_name);
	else if (images)
		rc = sw_driver_images_list(d, cmd->args.application_id, (char(*)[SW_DRIVER_TAG_MAX])base,
					   LIST_CAP, &n, err, errlen);
	else
		rc = sw_driver_volumes_list(d, cmd->args.application_id,
					    (char(*)[SW_DRIVER_VOLUME_MAX])base, LIST_CAP, &n, err, errlen);
	json_t *a = rc ? NULL : json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(base + i * w));
	free(base);
	if (a)
		*res = json_pack("{s:o}", images ? "tags" : "names", a);
	return rc;
}

static int volume_create(struct sw_driver *d, const struct sw_agent_msg *cmd, char *err, size_t errlen)
{
	json_t *labels = cmd->args.labels;
	struct sw_volume_spec v = {
		.name = cmd->args.name,
		.application_id = json_string_value(json_object_get(labels, "steward.application")),
		.service_id = json_string_value(json_object_get(labels, "steward.service")),
	};
	return sw_driver_volume_create(d, &v, err, errlen);
}

/* routeId "steward-app-<application id>", route {hosts, upstream}: the
 * driver builds the Caddy route itself, so a command never carries Caddy
 * configuration of its own. */
static int route(struct sw_driver *d, const struct sw_agent_msg *cmd, char *err, size_t errlen)
{
	const char *rid = cmd->args.route_id;
	if (strncmp(rid, "steward-app-", 12) != 0) {
		snprintf(err, errlen, "the route id is not an application's");
		return -EINVAL;
	}
	if (cmd->kind == SW_AGENT_CMD_ROUTE_REMOVE)
		return sw_driver_route_remove(d, rid + 12, err, errlen);
	bool bad = false;
	const char **hosts = strv(json_object_get(cmd->args.route, "hosts"), &bad);
	struct sw_ingress_route r = {
		.application_id = rid + 12,
		.hostnames = hosts,
		.upstream = json_string_value(json_object_get(cmd->args.route, "upstream")),
	};
	int rc = -EINVAL;
	if (bad || !hosts || !r.upstream)
		snprintf(err, errlen, "the route needs hosts and an upstream");
	else
		rc = sw_driver_route_set(d, &r, err, errlen);
	free(hosts);
	return rc;
}

/* container.file: the base64 decoded, written with its mode, wiped. */
static int container_file(struct sw_driver *d, const struct sw_agent_msg *cmd, char *err, size_t errlen)
{
	const char *b64 = cmd->args.data;
	size_t n = strlen(b64);
	unsigned char *buf = malloc(n / 4 * 3 + 3);
	if (!buf)
		return -ENOMEM;
	size_t len = 0;
	int rc = -EINVAL;
	if (sw_base64_decode(sw_str_from(b64, n), buf, n / 4 * 3 + 3, &len) != 0) {
		snprintf(err, errlen, "the file's data is not base64");
	} else {
		rc = sw_driver_container_put_file(d, cmd->args.name, cmd->args.dir, cmd->args.file, buf,
						  len, (unsigned)cmd->args.mode, err, errlen);
	}
	sw_wipe(buf, n / 4 * 3 + 3);
	free(buf);
	return rc;
}

static int proxy_state(struct sw_driver *d, json_t **res, char *err, size_t errlen)
{
	char *text = NULL;
	int rc = sw_driver_proxy_state(d, &text, err, errlen);
	if (rc)
		return rc;
	json_t *state = json_loads(text, 0, NULL);
	free(text);
	*res = state ? json_pack("{s:o}", "state", state) : NULL;
	return 0;
}

/* container.inspect: what sw_driver_container_state() reads, for the
 * health gate and the strategies on a remote server. */
static int container_inspect(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err,
			     size_t errlen)
{
	struct sw_container_state st;
	int rc = sw_driver_container_state(d, cmd->args.name, &st, err, errlen);
	if (rc == 0)
		*res = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b}", "id", st.id, "applicationId",
				 st.application_id, "name", st.name, "state", st.state, "health", st.health,
				 "restartCount", (json_int_t)st.restart_count, "pid", (json_int_t)st.pid,
				 "oomKilled", st.oom_killed);
	return rc;
}

/* container.probe: the health gate's GET on this server's loopback, its
 * payload bounded by the decoder (sw_agent_probe_valid()). A status is an
 * answer, whatever it is; no answer is an error (UNREACHABLE, TIMED_OUT,
 * CONNECTION_RESET, NOT_HTTP) the health gate names. */
static int container_probe(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err,
			   size_t errlen)
{
	struct sw_http_probe q = {
		.host = cmd->args.host,
		.port = (unsigned)cmd->args.port,
		.path = cmd->args.path,
		.timeout_s = (unsigned)cmd->args.timeout_s,
	};
	int status = 0;
	uint64_t ms = 0;
	int rc = sw_driver_http_probe(d, &q, &status, &ms, err, errlen);
	if (rc == 0)
		*res = json_pack("{s:i,s:I}", "status", status, "elapsedMs", (json_int_t)ms);
	return rc;
}

/* port.free: a free port on this server's loopback, by the local driver's
 * own bind() (a BLUE_GREEN colour's port is the server's, not the control
 * plane's). Logged, so the server's side can be seen choosing it. */
static int port_free(struct sw_driver *d, json_t **res, char *err, size_t errlen)
{
	unsigned port = 0;
	int rc = sw_driver_free_port(d, &port, err, errlen);
	if (rc == 0) {
		sw_log_info("agent: port.free: 127.0.0.1:%u is free on this server", port);
		*res = json_pack("{s:i}", "port", (int)port);
	}
	return rc;
}

/* container.logs: each line goes back as progress, one JSON object a
 * line, {"stream": 1 or 2, "timeUs", "text": base64 of its raw bytes} (the
 * control plane scrubs and cleans them, as a local read's), at most
 * SW_CONTAINER_LOGS_ANSWER_MAX bytes of text; the result says {"lines",
 * "truncated", "cancelled"}. With follow (protocol 2, on a thread of its
 * own in the agent) the lines go on, uncapped, until the container stops
 * or the control plane's cancel (a success, "cancelled": true). */
struct logs_out {
	struct sw_agent_stream *st;
	struct sw_buf b;
	uint64_t bytes, lines;
	bool truncated;
	bool follow; /* no cap: lines go on until the cancel */
};

static int logs_line(void *arg, const struct sw_container_log_line *l)
{
	struct logs_out *o = arg;
	if (o->truncated)
		return 0;
	if (!o->follow && o->bytes + l->len > SW_CONTAINER_LOGS_ANSWER_MAX) {
		o->truncated = true;
		return 0;
	}
	o->bytes += l->len;
	o->b.len = 0;
	size_t cap = 4 * ((l->len + 2) / 3) + 1;
	char head[96];
	int hn = snprintf(head, sizeof(head), "{\"stream\":%d,\"timeUs\":%lld,\"text\":\"", l->stream,
			  (long long)l->time_us);
	if (sw_buf_append(&o->b, head, (size_t)hn) < 0 || sw_buf_reserve(&o->b, cap + 3) < 0)
		return -ENOMEM;
	int n = sw_base64_encode((const uint8_t *)l->text, l->len, o->b.data + o->b.len, cap);
	if (SW_NEVER(n < 0))
		return -ENOMEM;
	o->b.len += (size_t)n;
	if (sw_buf_append_lit(&o->b, "\"}\n") < 0)
		return -ENOMEM;
	o->st->output(o->st, o->b.data, o->b.len);
	sw_wipe(o->b.data, o->b.len);
	o->lines++;
	return 0;
}

static int container_logs(struct sw_driver *d, const struct sw_agent_msg *cmd, struct sw_agent_stream *st,
			  json_t **res, char *err, size_t errlen)
{
	if (!st) {
		snprintf(err, errlen, "the command has no output stream");
		return -EINVAL;
	}
	struct logs_out o = { .st = st, .follow = cmd->args.follow };
	struct sw_container_logs_query q = { .container = cmd->args.name,
					     .tail = (unsigned)cmd->args.tail,
					     .since_us = (int64_t)cmd->args.since_us,
					     .follow = cmd->args.follow,
					     .cancel = &st->cancel };
	int rc = sw_driver_container_logs(d, &q, logs_line, &o, err, errlen);
	sw_buf_release(&o.b);
	bool cancelled = rc == -ECANCELED && o.follow;
	if (rc == 0 || cancelled)
		*res = json_pack("{s:I,s:b,s:b}", "lines", (json_int_t)o.lines, "truncated", o.truncated,
				 "cancelled", cancelled);
	if (cancelled)
		sw_log_info("agent: container.logs follow of %s ended by its cancel (%llu lines)",
			    cmd->args.name, (unsigned long long)o.lines);
	return cancelled ? 0 : rc;
}

static int run(struct sw_driver *d, const struct sw_agent_msg *cmd, json_t **res, char *err, size_t errlen)
{
	const char *name = cmd->args.name;
	switch (cmd->kind) {
	case SW_AGENT_CMD_IMAGE_EXISTS:
		*res = json_pack("{s:b}", "exists", sw_driver_image_exists(d, cmd->args.image));
		return 0;
	case SW_AGENT_CMD_IMAGE_LIST:
	case SW_AGENT_CMD_VOLUME_LIST:
		return names_list(d, cmd, res, err, errlen);
	case SW_AGENT_CMD_IMAGE_REMOVE:
		return sw_driver_image_remove(d, cmd->args.image, err, errlen);
	case SW_AGENT_CMD_CONTAINER_CREATE:
		return container_create(d, cmd, res, err, errlen);
	case SW_AGENT_CMD_CONTAINER_START:
		return sw_driver_container_start(d, name, err, errlen);
	case SW_AGENT_CMD_CONTAINER_STOP:
		return sw_driver_container_stop(d, name, (unsigned)cmd->args.timeout_s, err, errlen);
	case SW_AGENT_CMD_CONTAINER_REMOVE:
		return sw_driver_container_remove(d, name, err, errlen);
	case SW_AGENT_CMD_CONTAINER_LIST:
		return containers_list(d, cmd, res, err, errlen);
	case SW_AGENT_CMD_VOLUME_CREATE:
		return volume_create(d, cmd, err, errlen);
	case SW_AGENT_CMD_VOLUME_REMOVE:
		return sw_driver_volume_remove(d, name, err, errlen);
	case SW_AGENT_CMD_ROUTE_SET:
	case SW_AGENT_CMD_ROUTE_REMOVE:
		return route(d, cmd, err, errlen);
	case SW_AGENT_CMD_PROXY_STATE:
		return proxy_state(d, res, err, errlen);
	case SW_AGENT_CMD_CONTAINER_FILE:
		return container_file(d, cmd, err, errlen);
	case SW_AGENT_CMD_CONTAINER_INSPECT:
		return container_inspect(d, cmd, res, err, errlen);
	case SW_AGENT_CMD_CONTAINER_PROBE:
		return container_probe(d, cmd, res, err, errlen);
	case SW_AGENT_CMD_PORT_FREE:
		return port_free(d, res, err, errlen);
	default:
		snprintf(err, errlen, "not run by this agent");
		return -EOPNOTSUPP;
	}
}

void sw_driver_agent_exec(struct sw_driver *local, const struct sw_agent_msg *cmd,
			  struct sw_agent_outcome *out)
{
	char err[sizeof(out->error_message)] = "";
	json_t *res = NULL;
	int rc = !local ? -EIO
		 : cmd->kind == SW_AGENT_CMD_IMAGE_BUILD
			 ? sw_driver_agent_build(local, cmd, out->stream, &res, err, sizeof(err))
		 : cmd->kind == SW_AGENT_CMD_SERVICE_DUMP
			 ? sw_driver_agent_service_dump(local, cmd, out->stream, &res, err, sizeof(err))
		 : cmd->kind == SW_AGENT_CMD_SERVICE_RESTORE
			 ? sw_driver_agent_service_restore(local, cmd, out->stream, err, sizeof(err))
		 : cmd->kind == SW_AGENT_CMD_CONTAINER_LOGS
			 ? container_logs(local, cmd, out->stream, &res, err, sizeof(err))
			 : run(local, cmd, &res, err, sizeof(err));
	if (!local)
		snprintf(err, sizeof(err), "the agent's driver could not be made (DOCKER_HOST)");
	if (rc == 0 && !res)
		res = json_object();
	if (rc == 0 && res) {
		out->ok = true;
		out->result = res;
		return;
	}
	json_decref(res);
	if (rc == 0) {
		rc = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	out->ok = false;
	snprintf(out->error_code, sizeof(out->error_code), "%s", sw_driver_error_code(rc));
	snprintf(out->error_message, sizeof(out->error_message), "%s", err[0] ? err : "the command failed");
}
