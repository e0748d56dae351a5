/* The agent protocol's messages: one table per message type and per
 * command kind, read by the decoder and by the encoder alike (see
 * steward/agent/protocol.h). A member is described once: its key, its
 * kind, whether it is required, its bound and where it lands in struct
 * sw_agent_msg; so a new member is one line and both directions follow. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "steward/agent/protocol.h"
#include "steward/base/json.h"
#include "steward/base/limits.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"

enum ftype {
	F_ID,      /* [A-Za-z0-9._:-]{1,max} */
	F_TEXT,    /* 1..max bytes of UTF-8 without control characters */
	F_DATA,    /* 0..max bytes of any text (a build's output) */
	F_BASE64,  /* 0..max bytes of standard base64 */
	F_NAME,    /* a Docker object name: [A-Za-z0-9][A-Za-z0-9_.-]{0,max-1} */
	F_IMAGE,   /* an image reference: [a-z0-9][a-z0-9._/:@-]{0,max-1} */
	F_CODE,    /* an error code: [A-Z][A-Z0-9_]{0,max-1} */
	F_ENUM,    /* one of values */
	F_UINT,    /* an integer in [0, max] */
	F_BOOL,
	F_OBJECT,  /* any object, at most max bytes serialised */
	F_STRINGS, /* an array of at most max F_ID strings */
	F_NESTED,  /* an object read with the table nested */
	F_KIND,    /* a command kind of the closed set */
	F_PATH,    /* an HTTP path as healthCheckPath takes it (sw_valid_http_path) */
};

struct field {
	const char *key;
	enum ftype type;
	bool required;
	uint64_t max;
	size_t off;
	const struct field *nested; /* F_NESTED: its table; F_ENUM: NULL */
	const char *const *values;  /* F_ENUM: NULL-terminated */
};

#define M(member) offsetof(struct sw_agent_msg, member)
#define END { NULL }
/* Integers a JavaScript peer (the ws-based tests, a dashboard) reads exactly. */
#define JS_SAFE 9007199254740991ULL

static const struct field host_fields[] = {
	{ "os", F_TEXT, true, SW_AGENT_MAX_FACT_LEN, M(host.os) },
	{ "kernel", F_TEXT, true, SW_AGENT_MAX_FACT_LEN, M(host.kernel) },
	{ "arch", F_TEXT, true, SW_AGENT_MAX_FACT_LEN, M(host.arch) },
	{ "hostname", F_TEXT, true, SW_AGENT_MAX_FACT_LEN, M(host.hostname) },
	{ "cores", F_UINT, true, 1u << 20, M(host.cores) },
	{ "memoryBytes", F_UINT, true, JS_SAFE, M(host.memory_bytes) },
	END,
};

static const struct field error_fields[] = {
	{ "code", F_CODE, true, 64, M(error_code) },
	{ "message", F_TEXT, true, 1024, M(error_message) },
	END,
};

static const char *const streams[] = { "stdout", "stderr", "log", NULL };

static const struct field type_fields[SW_AGENT_MSG_COUNT][8] = {
	[SW_AGENT_MSG_HELLO] = {
		{ "agentVersion", F_TEXT, true, 64, M(agent_version) },
		{ "protocolMin", F_UINT, true, 65535, M(protocol_min) },
		{ "protocolMax", F_UINT, true, 65535, M(protocol_max) },
		{ "bootId", F_ID, true, SW_AGENT_MAX_ID_LEN, M(boot_id) },
		{ "host", F_NESTED, true, 0, 0, host_fields },
		{ "capabilities", F_STRINGS, true, SW_AGENT_MAX_CAPABILITIES, M(capabilities) },
		END,
	},
	[SW_AGENT_MSG_WELCOME] = {
		{ "connectionId", F_ID, true, SW_AGENT_MAX_ID_LEN, M(connection_id) },
		{ "protocol", F_UINT, true, 65535, M(protocol) },
		{ "heartbeatMs", F_UINT, true, 600000, M(heartbeat_ms) },
		END,
	},
	[SW_AGENT_MSG_HEARTBEAT] = {
		{ "seq", F_UINT, true, JS_SAFE, M(seq) },
		END,
	},
	[SW_AGENT_MSG_GOAWAY] = {
		{ "retryAfterMs", F_UINT, true, 3600000, M(retry_after_ms) },
		END,
	},
	[SW_AGENT_MSG_COMMAND] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		{ "kind", F_KIND, true, 0, M(kind_name) },
		{ "expiresAt", F_UINT, true, JS_SAFE, M(expires_at_ms) },
		{ "payload", F_OBJECT, true, SW_AGENT_MAX_PAYLOAD, M(payload) },
		END,
	},
	[SW_AGENT_MSG_INPUT] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		{ "seq", F_UINT, true, JS_SAFE, M(seq) },
		{ "data", F_BASE64, true, SW_AGENT_MAX_CHUNK, M(data) },
		{ "last", F_BOOL, false, 0, M(last) },
		END,
	},
	[SW_AGENT_MSG_ACK] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		{ "inputTaken", F_UINT, false, JS_SAFE, M(input_taken) },
		END,
	},
	[SW_AGENT_MSG_PROGRESS] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		{ "seq", F_UINT, true, JS_SAFE, M(seq) },
		{ "stream", F_ENUM, true, 0, M(stream), NULL, streams },
		{ "data", F_DATA, true, SW_AGENT_MAX_CHUNK, M(data) },
		END,
	},
	[SW_AGENT_MSG_RESULT] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		{ "ok", F_BOOL, true, 0, M(ok) },
		{ "result", F_OBJECT, false, SW_AGENT_MAX_RESULT, M(result) },
		{ "error", F_NESTED, false, 0, 0, error_fields },
		END,
	},
	[SW_AGENT_MSG_CANCEL] = {
		{ "id", F_ID, true, SW_AGENT_MAX_ID_LEN, M(id) },
		END,
	},
};

static const char *const type_names[SW_AGENT_MSG_COUNT] = {
	[SW_AGENT_MSG_HELLO] = "hello",       [SW_AGENT_MSG_WELCOME] = "welcome",
	[SW_AGENT_MSG_HEARTBEAT] = "heartbeat", [SW_AGENT_MSG_GOAWAY] = "goaway",
	[SW_AGENT_MSG_COMMAND] = "command",   [SW_AGENT_MSG_INPUT] = "input",
	[SW_AGENT_MSG_ACK] = "ack",           [SW_AGENT_MSG_PROGRESS] = "progress",
	[SW_AGENT_MSG_RESULT] = "result",     [SW_AGENT_MSG_CANCEL] = "cancel",
};

/* Command payloads: the members each kind takes. */
#define NAME { "name", F_NAME, true, 128, M(args.name) }
#define IMAGE(req) { "image", F_IMAGE, req, 255, M(args.image) }
/* The application whose objects a list is about (its steward.application label). */
#define APPLICATION { "applicationId", F_ID, false, 64, M(args.application_id) }
static const char *const engines[] = { "postgres", "mysql", "redis", "mongo", NULL };
static const char *const probe_hosts[] = { "127.0.0.1", "::1", NULL };
/* A managed service: its engine, where it listens inside its container and
 * its credentials (the payload is sealed at rest). */
#define SERVICE \
	{ "engine", F_ENUM, true, 0, M(args.engine), NULL, engines }, \
	{ "port", F_UINT, true, 65535, M(args.port) }, \
	{ "database", F_NAME, true, 64, M(args.database) }, \
	{ "username", F_NAME, true, 64, M(args.username) }, \
	{ "password", F_TEXT, true, 256, M(args.password) }, \
	{ "dataDir", F_TEXT, true, SW_PATH_MAX_LEN, M(args.data_dir) }

static const struct cmd {
	const char *name;
	struct field fields[10];
} cmds[SW_AGENT_CMD_COUNT] = {
	[SW_AGENT_CMD_IMAGE_BUILD] = { "image.build", {
		{ "tag", F_IMAGE, true, 255, M(args.tag) },
		{ "dockerfile", F_TEXT, false, SW_PATH_MAX_LEN, M(args.dockerfile) },
		{ "contextBytes", F_UINT, true, 1ULL << 40, M(args.context_bytes) },
		{ "contextSha256", F_ID, true, 64, M(args.context_sha256) },
		{ "labels", F_OBJECT, false, 16 * 1024, M(args.labels) }, END } },
	[SW_AGENT_CMD_IMAGE_EXISTS] = { "image.exists", { IMAGE(true), END } },
	[SW_AGENT_CMD_IMAGE_LIST] = { "image.list", { IMAGE(false), APPLICATION, END } },
	[SW_AGENT_CMD_IMAGE_REMOVE] = { "image.remove", { IMAGE(true), END } },
	[SW_AGENT_CMD_CONTAINER_CREATE] = { "container.create", { NAME, IMAGE(true),
		{ "spec", F_OBJECT, true, SW_AGENT_MAX_PAYLOAD, M(args.spec) }, END } },
	[SW_AGENT_CMD_CONTAINER_START] = { "container.start", { NAME, END } },
	[SW_AGENT_CMD_CONTAINER_STOP] = { "container.stop", { NAME,
		{ "timeoutS", F_UINT, false, 3600, M(args.timeout_s) }, END } },
	[SW_AGENT_CMD_CONTAINER_REMOVE] = { "container.remove", { NAME, END } },
	[SW_AGENT_CMD_CONTAINER_LIST] = { "container.list", {
		{ "project", F_NAME, false, 128, M(args.project) }, APPLICATION, END } },
	[SW_AGENT_CMD_CONTAINER_INSPECT] = { "container.inspect", { NAME, END } },
	[SW_AGENT_CMD_CONTAINER_LOGS] = { "container.logs", { NAME,
		{ "follow", F_BOOL, false, 0, M(args.follow) },
		{ "tail", F_UINT, false, 100000, M(args.tail) },
		{ "sinceUs", F_UINT, false, JS_SAFE, M(args.since_us) }, END } },
	[SW_AGENT_CMD_VOLUME_CREATE] = { "volume.create", { NAME,
		{ "labels", F_OBJECT, false, 16 * 1024, M(args.labels) }, END } },
	[SW_AGENT_CMD_VOLUME_REMOVE] = { "volume.remove", { NAME, END } },
	[SW_AGENT_CMD_ROUTE_SET] = { "caddy.route.set", {
		{ "routeId", F_ID, true, SW_AGENT_MAX_ID_LEN, M(args.route_id) },
		{ "route", F_OBJECT, true, SW_AGENT_MAX_PAYLOAD, M(args.route) }, END } },
	[SW_AGENT_CMD_ROUTE_REMOVE] = { "caddy.route.remove", {
		{ "routeId", F_ID, true, SW_AGENT_MAX_ID_LEN, M(args.route_id) }, END } },
	[SW_AGENT_CMD_PROXY_STATE] = { "caddy.state", { END } },
	/* The service's fixed dump tool in its container (name); the dump
	 * comes back as progress, base64 lines. */
	[SW_AGENT_CMD_SERVICE_DUMP] = { "service.dump", { NAME, SERVICE, END } },
	/* The dump arrives as input chunks (dumpBytes, dumpSha256), checked
	 * whole before the service's restore tool sees it. */
	[SW_AGENT_CMD_SERVICE_RESTORE] = { "service.restore", { NAME, SERVICE,
		{ "dumpBytes", F_UINT, true, 1ULL << 40, M(args.context_bytes) },
		{ "dumpSha256", F_ID, true, 64, M(args.context_sha256) }, END } },
	[SW_AGENT_CMD_METRICS_SAMPLE] = { "metrics.sample", { END } },
	[SW_AGENT_CMD_HOST_FACTS] = { "host.facts", { END } },
	[SW_AGENT_CMD_PORT_FREE] = { "port.free", { END } },
	[SW_AGENT_CMD_VOLUME_LIST] = { "volume.list", { APPLICATION, END } },
	/* A file written into a container (a service's secret configuration):
	 * base64 of at most 48 KiB. */
	[SW_AGENT_CMD_CONTAINER_FILE] = { "container.file", { NAME,
		{ "dir", F_TEXT, true, SW_PATH_MAX_LEN, M(args.dir) },
		{ "file", F_NAME, true, 255, M(args.file) },
		{ "data", F_TEXT, true, 65536, M(args.data) },
		{ "mode", F_UINT, true, 07777, M(args.mode) }, END } },
	/* The health gate's GET on the server's loopback (sw_agent_probe_valid()). */
	[SW_AGENT_CMD_CONTAINER_PROBE] = { "container.probe", {
		{ "host", F_ENUM, false, 0, M(args.host), NULL, probe_hosts },
		{ "port", F_UINT, true, 65535, M(args.port) },
		{ "path", F_PATH, true, SW_HTTP_PATH_MAX_LEN, M(args.path) },
		{ "timeoutS", F_UINT, true, SW_AGENT_PROBE_TIMEOUT_MAX_S, M(args.timeout_s) }, END } },
};

const char *sw_agent_msg_type_name(enum sw_agent_msg_type t)
{
	return (unsigned)t < SW_AGENT_MSG_COUNT ? type_names[t] : NULL;
}

const char *sw_agent_cmd_name(enum sw_agent_cmd k)
{
	return (unsigned)k < SW_AGENT_CMD_COUNT ? cmds[k].name : NULL;
}

bool sw_agent_cmd_from_name(const char *name, enum sw_agent_cmd *ret)
{
	for (unsigned k = 0; k < SW_AGENT_CMD_COUNT; k++)
		if (strcmp(cmds[k].name, name) == 0) {
			*ret = (enum sw_agent_cmd)k;
			return true;
		}
	return false;
}

static bool in_set(char c, const char *set)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       (c && strchr(set, c));
}

static bool enum_has(const char *const *values, const char *s)
{
	for (; *values; values++)
		if (strcmp(*values, s) == 0)
			return true;
	return false;
}

/* Whether s (len bytes, UTF-8 as jansson guarantees) fits a string field. */
static bool string_fits(const struct field *f, const char *s, size_t len)
{
	if (f->type == F_ENUM)
		return enum_has(f->values, s);
	if (f->type == F_KIND) {
		enum sw_agent_cmd k;
		return sw_agent_cmd_from_name(s, &k);
	}
	if (f->type == F_PATH) {
		const char *msg;
		return len <= f->max && strlen(s) == len && sw_valid_http_path(sw_str_from(s, len), &msg);
	}
	if (len > f->max || (len == 0 && f->type != F_DATA && f->type != F_BASE64))
		return false;
	if (f->type == F_DATA)
		return true;
	if (f->type == F_BASE64) {
		/* A chunk is 64 KiB of it: ranges, not in_set()'s strchr() a byte. */
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)s[i];
			if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			      c == '+' || c == '/' || c == '='))
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		switch (f->type) {
		case F_ID:
			if (!in_set(c, "._:-"))
				return false;
			break;
		case F_TEXT:
			if ((unsigned char)c < 0x20 || c == 0x7F)
				return false;
			break;
		case F_NAME:
			if (!in_set(c, i ? "_.-" : ""))
				return false;
			break;
		case F_IMAGE:
			if ((c >= 'A' && c <= 'Z') || !in_set(c, i ? "._/:@-" : ""))
				return false;
			break;
		case F_CODE:
			if ((c >= 'a' && c <= 'z') || !in_set(c, i ? "_" : "") || (!i && c <= '9'))
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}

static bool is_string_type(enum ftype t)
{
	return t != F_UINT && t != F_BOOL && t != F_OBJECT && t != F_STRINGS && t != F_NESTED;
}

static size_t serialised_size(const json_t *v)
{
	return json_dumpb(v, NULL, 0, JSON_COMPACT);
}

/* A key fit to be named in a sentence, or a stand-in. */
static const char *nameable(const char *key)
{
	size_t n = strlen(key);
	if (n == 0 || n > 40)
		return "(a member)";
	for (size_t i = 0; i < n; i++)
		if (!in_set(key[i], "_"))
			return "(a member)";
	return key;
}

static int refuse(char *err, size_t errlen, const char *where, const char *key, const char *why)
{
	snprintf(err, errlen, "%s: %s %s", where, nameable(key), why);
	return -EINVAL;
}

static int read_object(json_t *obj, const struct field *t, struct sw_agent_msg *m, const char *where,
		       bool top, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		if (top && strcmp(key, "type") == 0)
			continue;
		const struct field *f = t;
		while (f->key && strcmp(f->key, key) != 0)
			f++;
		if (!f->key)
			return refuse(err, errlen, where, key, "is not a member of this message");
	}
	char *base = (char *)m;
	for (const struct field *f = t; f->key; f++) {
		v = json_object_get(obj, f->key);
		if (!v) {
			if (f->required)
				return refuse(err, errlen, where, f->key, "is required");
			continue;
		}
		if (is_string_type(f->type)) {
			if (!json_is_string(v) ||
			    !string_fits(f, json_string_value(v), json_string_length(v)))
				return refuse(err, errlen, where, f->key, "is not a valid value");
			*(const char **)(base + f->off) = json_string_value(v);
			continue;
		}
		switch (f->type) {
		case F_UINT:
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    (uint64_t)json_integer_value(v) > f->max)
				return refuse(err, errlen, where, f->key, "is not an integer in range");
			*(uint64_t *)(base + f->off) = (uint64_t)json_integer_value(v);
			break;
		case F_BOOL:
			if (!json_is_boolean(v))
				return refuse(err, errlen, where, f->key, "is not a boolean");
			*(bool *)(base + f->off) = json_is_true(v);
			break;
		case F_OBJECT:
			if (!json_is_object(v) || serialised_size(v) > f->max)
				return refuse(err, errlen, where, f->key, "is not an object within its size limit");
			*(json_t **)(base + f->off) = v;
			break;
		case F_STRINGS: {
			static const struct field item = { "item", F_ID, true, SW_AGENT_MAX_ID_LEN };
			if (!json_is_array(v) || json_array_size(v) > f->max)
				return refuse(err, errlen, where, f->key, "is not a short array");
			size_t i;
			json_t *s;
			json_array_foreach(v, i, s) {
				if (!json_is_string(s) ||
				    !string_fits(&item, json_string_value(s), json_string_length(s)))
					return refuse(err, errlen, where, f->key, "holds an invalid name");
			}
			*(json_t **)(base + f->off) = v;
			break;
		}
		case F_NESTED:
			if (!json_is_object(v))
				return refuse(err, errlen, where, f->key, "is not an object");
			int rc = read_object(v, f->nested, m, f->key, false, err, errlen);
			if (rc < 0)
				return rc;
			break;
		default:
			break;
		}
	}
	return 0;
}

int sw_agent_msg_decode(const char *text, size_t len, struct sw_agent_msg *ret, char *err,
			size_t errlen)
{
	memset(ret, 0, sizeof(*ret));
	if (len > SW_AGENT_MAX_MESSAGE) {
		snprintf(err, errlen, "the message is over %d bytes", SW_AGENT_MAX_MESSAGE);
		return -EINVAL;
	}
	json_t *root = sw_json_parse_object(sw_str_from(text, len), err, errlen);
	if (!root)
		return -EINVAL;
	ret->root = root;
	json_t *type = json_object_get(root, "type");
	const char *tname = json_is_string(type) ? json_string_value(type) : "";
	unsigned t = 0;
	while (t < SW_AGENT_MSG_COUNT && strcmp(type_names[t], tname) != 0)
		t++;
	int rc = -EINVAL;
	if (t == SW_AGENT_MSG_COUNT) {
		snprintf(err, errlen, "the message has no known type");
		goto fail;
	}
	ret->type = (enum sw_agent_msg_type)t;
	rc = read_object(root, type_fields[t], ret, type_names[t], true, err, errlen);
	if (rc < 0)
		goto fail;
	rc = -EINVAL;
	if (t == SW_AGENT_MSG_COMMAND) {
		sw_agent_cmd_from_name(ret->kind_name, &ret->kind);
		rc = read_object(ret->payload, cmds[ret->kind].fields, ret, ret->kind_name, false, err,
				 errlen);
		if (rc < 0)
			goto fail;
		rc = -EINVAL;
		if (ret->kind == SW_AGENT_CMD_CONTAINER_PROBE &&
		    !sw_agent_probe_valid(ret->args.host, ret->args.port, ret->args.path, ret->args.timeout_s,
					  err, errlen))
			goto fail;
	} else if (t == SW_AGENT_MSG_HELLO) {
		if (ret->protocol_min == 0 || ret->protocol_min > ret->protocol_max) {
			snprintf(err, errlen, "hello: protocolMin..protocolMax is not a range of versions");
			goto fail;
		}
	} else if (t == SW_AGENT_MSG_WELCOME) {
		if (ret->protocol == 0 || ret->heartbeat_ms < 100) {
			snprintf(err, errlen, "welcome: protocol or heartbeatMs out of range");
			goto fail;
		}
	} else if (t == SW_AGENT_MSG_RESULT) {
		if (ret->ok == (ret->error_code != NULL) || (!ret->ok && ret->result)) {
			snprintf(err, errlen, "result: an error goes with ok false, a result with ok true");
			goto fail;
		}
	}
	return 0;
fail:
	sw_agent_msg_release(ret);
	return rc;
}

void sw_agent_msg_release(struct sw_agent_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

static int write_object(struct sw_json *j, const struct field *t, const struct sw_agent_msg *m);

/* Whether a nested object has anything to write (an optional one is
 * left out when empty). */
static bool nested_present(const struct field *t, const struct sw_agent_msg *m)
{
	for (; t->key; t++)
		if (is_string_type(t->type) && *(const char *const *)((const char *)m + t->off))
			return true;
	return false;
}

static int write_json_value(struct sw_json *j, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s)
		return -ENOMEM;
	sw_json_raw(j, sw_str_cstr(s));
	free(s);
	return 0;
}

static int write_field(struct sw_json *j, const struct field *f, const struct sw_agent_msg *m)
{
	const char *base = (const char *)m;
	if (f->type == F_KIND) {
		const char *name = sw_agent_cmd_name(m->kind);
		if (!name)
			return -EINVAL;
		sw_json_key(j, f->key);
		sw_json_cstr(j, name);
		return 0;
	}
	if (is_string_type(f->type)) {
		const char *s = *(const char *const *)(base + f->off);
		if (!s)
			return f->required ? -EINVAL : 0;
		if (!string_fits(f, s, strlen(s)))
			return -EINVAL;
		sw_json_key(j, f->key);
		sw_json_cstr(j, s);
		return 0;
	}
	switch (f->type) {
	case F_UINT: {
		uint64_t v = *(const uint64_t *)(base + f->off);
		if (v > f->max)
			return -EINVAL;
		if (v || f->required) {
			sw_json_key(j, f->key);
			sw_json_int(j, (int64_t)v);
		}
		return 0;
	}
	case F_BOOL: {
		bool v = *(const bool *)(base + f->off);
		if (v || f->required) {
			sw_json_key(j, f->key);
			sw_json_bool(j, v);
		}
		return 0;
	}
	case F_OBJECT:
	case F_STRINGS: {
		const json_t *v = *(json_t *const *)(base + f->off);
		if (!v)
			return f->required ? -EINVAL : 0;
		sw_json_key(j, f->key);
		return write_json_value(j, v);
	}
	case F_NESTED:
		if (!f->required && !nested_present(f->nested, m))
			return 0;
		sw_json_key(j, f->key);
		return write_object(j, f->nested, m);
	default:
		return -EINVAL;
	}
}

static int write_object(struct sw_json *j, const struct field *t, const struct sw_agent_msg *m)
{
	sw_json_object_begin(j);
	for (; t->key; t++) {
		int rc = write_field(j, t, m);
		if (rc < 0)
			return rc;
	}
	sw_json_object_end(j);
	return 0;
}

int sw_agent_msg_encode(struct sw_buf *out, const struct sw_agent_msg *m)
{
	if ((unsigned)m->type >= SW_AGENT_MSG_COUNT)
		return -EINVAL;
	size_t mark = out->len;
	struct sw_json j;
	sw_json_init(&j, out);
	sw_json_object_begin(&j);
	sw_json_key(&j, "type");
	sw_json_cstr(&j, type_names[m->type]);
	int rc = 0;
	for (const struct field *f = type_fields[m->type]; f->key && rc == 0; f++) {
		if (m->type == SW_AGENT_MSG_COMMAND && f->type == F_OBJECT && !m->payload) {
			/* The payload from args, through the kind's table. */
			if ((unsigned)m->kind >= SW_AGENT_CMD_COUNT)
				rc = -EINVAL;
			else {
				sw_json_key(&j, f->key);
				rc = write_object(&j, cmds[m->kind].fields, m);
			}
			continue;
		}
		rc = write_field(&j, f, m);
	}
	sw_json_object_end(&j);
	if (rc == 0)
		rc = sw_json_finish(&j);
	if (rc < 0)
		out->len = mark;
	return rc;
}

int sw_agent_cmd_digest(const struct sw_agent_msg *m, uint8_t out[32])
{
	char *payload = m->payload ? json_dumps(m->payload, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (m->payload && !payload)
		return -ENOMEM;
	struct sw_buf b = { 0 };
	const char *kind = sw_agent_cmd_name(m->kind);
	int rc = sw_buf_appendf(&b, "%s\n%s", kind ? kind : "", payload ? payload : "{}");
	if (rc == 0)
		sw_sha256_digest(b.data, b.len, out);
	free(payload);
	sw_buf_release(&b);
	return rc;
}

bool sw_agent_probe_valid(const char *host, uint64_t port, const char *path, uint64_t timeout_s,
			  char *err, size_t errlen)
{
	const char *msg = NULL;
	if (host && !enum_has(probe_hosts, host))
		snprintf(err, errlen, "container.probe: host is not the server's loopback");
	else if (port < SW_AGENT_PROBE_PORT_MIN || port > 65535)
		snprintf(err, errlen, "container.probe: port is not a port the platform gives");
	else if (!path || !sw_valid_http_path(sw_str_cstr(path), &msg))
		snprintf(err, errlen, "container.probe: path %s", msg ? msg : "is required");
	else if (timeout_s < 1 || timeout_s > SW_AGENT_PROBE_TIMEOUT_MAX_S)
		snprintf(err, errlen, "container.probe: timeoutS is not 1 to %d seconds",
			 SW_AGENT_PROBE_TIMEOUT_MAX_S);
	else
		return true;
	return false;
}

enum sw_agent_seq_verdict sw_agent_seq_check(struct sw_agent_seq *s, uint64_t seq)
{
	if (seq < s->next)
		return SW_AGENT_SEQ_DUPLICATE;
	if (seq > s->next)
		return SW_AGENT_SEQ_GAP;
	s->next++;
	return SW_AGENT_SEQ_TAKE;
}

bool sw_agent_protocol_choose(const struct sw_agent_msg *hello, uint64_t *ret)
{
	uint64_t hi = SW_MIN(hello->protocol_max, (uint64_t)SW_AGENT_PROTOCOL_MAX);
	uint64_t lo = SW_MAX(hello->protocol_min, (uint64_t)SW_AGENT_PROTOCOL_MIN);
	if (hello->type != SW_AGENT_MSG_HELLO || lo > hi)
		return false;
	*ret = hi;
	return true;
}
