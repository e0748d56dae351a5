/* The remote driver (steward/driver/remote.h): driver.h's calls as agent
 * commands through agent_commands, awaited on the runner's connection.
 * The payloads are the kinds' tables in src/agent/protocol.c; the agent
 * answers through sw_driver_agent_exec() (agent_exec.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "steward/db/statements_servers.h"
#include "steward/driver/container_state.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

struct sw_driver_remote {
	PGconn *conn;
	char server_id[37];
	const volatile bool *stop;
};

#define POLL_FIRST_MS 10
#define POLL_MAX_MS 250

static const struct {
	int err;
	const char *code;
} codes[] = {
	{ ENOENT, "NOT_FOUND" },      { EEXIST, "ALREADY_EXISTS" },	{ EBUSY, "IN_USE" },
	{ EINVAL, "INVALID_ARGUMENT" }, { ECONNREFUSED, "UNREACHABLE" }, { ETIMEDOUT, "TIMED_OUT" },
	{ EFBIG, "TOO_LARGE" },       { ECANCELED, "CANCELLED" },	{ EOPNOTSUPP, "NOT_AVAILABLE" },
	{ EAGAIN, "NOT_RUNNING" },    { EBADMSG, "BAD_DATA" },		{ ENODATA, "NO_DATA" },
	{ EACCES, "REFUSED" },        { ENAMETOOLONG, "TOO_LONG" },
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

static PGresult *exec(struct sw_driver_remote *r, const struct sw_db_stmt *st, const char *const *params,
		      char *err, size_t errlen)
{
	PGresult *res = PQexecParams(r->conn, st->sql, st->nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType t = PQresultStatus(res);
	if (t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK)
		return res;
	PQclear(res);
	snprintf(err, errlen, "The database failed while a command for the server was handled (%s).",
		 st->name);
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int sw_driver_remote_new(PGconn *conn, const char *server_id, const volatile bool *stop, unsigned wait_ms,
			 struct sw_driver **ret, char *err, size_t errlen)
{
	*ret = NULL;
	struct sw_driver_remote tmp = { .conn = conn, .stop = stop };
	if (strlen(server_id) >= sizeof(tmp.server_id)) {
		snprintf(err, errlen, "The server's id is not valid.");
		return -EINVAL;
	}
	snprintf(tmp.server_id, sizeof(tmp.server_id), "%s", server_id);
	uint64_t deadline = now_ms() + wait_ms;
	int rc;
	for (;;) {
		const char *params[1] = { server_id };
		PGresult *res = exec(&tmp, &sw_db_stmt_agent_server_status, params, err, errlen);
		if (!res)
			return -EIO;
		rc = 0;
		if (PQntuples(res) != 1) {
			snprintf(err, errlen, "The server was deleted: nothing was done on it.");
			rc = -ENOENT;
		} else if (strcmp(PQgetvalue(res, 0, 0), "ONLINE") != 0) {
			rc = -EHOSTUNREACH;
		}
		PQclear(res);
		if (rc != -EHOSTUNREACH || now_ms() >= deadline || (stop && *stop))
			break;
		sleep_ms(SW_DRIVER_REMOTE_WAIT_POLL_MS);
	}
	if (rc == -EHOSTUNREACH && wait_ms)
		snprintf(err, errlen, "The server's agent is not connected (waited %u s): nothing was done "
			 "on the server.", wait_ms / 1000);
	else if (rc == -EHOSTUNREACH)
		snprintf(err, errlen, "%s", SW_DRIVER_NOT_CONNECTED);
	if (rc)
		return rc;
	struct sw_driver *d = calloc(1, sizeof(*d));
	struct sw_driver_remote *r = calloc(1, sizeof(*r));
	if (!d || !r) {
		free(d);
		free(r);
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	*r = tmp;
	d->remote = r;
	*ret = d;
	return 0;
}

void sw_driver_remote_free(struct sw_driver_remote *r)
{
	free(r);
}

/* Issues kind with payload (taken) and waits for its answer, at most
 * wait_ms beyond SW_DRIVER_REMOTE_COMMAND_MS. 0 with *ret (the result
 * object, or NULL when ret is NULL), or -errno with a sentence. */
static int call(struct sw_driver *d, const char *kind, json_t *payload, unsigned wait_ms, json_t **ret,
		char *err, size_t errlen)
{
	struct sw_driver_remote *r = d->remote;
	if (ret)
		*ret = NULL;
	char *text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
	json_decref(payload);
	if (!text) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	uint64_t ttl = (uint64_t)wait_ms + SW_DRIVER_REMOTE_COMMAND_MS;
	char ttl_s[24];
	snprintf(ttl_s, sizeof(ttl_s), "%llu", (unsigned long long)ttl);
	const char *issue[4] = { r->server_id, kind, text, ttl_s };
	PGresult *res = exec(r, &sw_db_stmt_agent_command_issue, issue, err, errlen);
	OPENSSL_cleanse(text, strlen(text)); /* a container's environment */
	free(text);
	if (!res)
		return -EIO;
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(err, errlen, "The server was deleted: nothing was done on it.");
		return -ENOENT;
	}
	char id[37];
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);

	uint64_t deadline = now_ms() + ttl;
	unsigned delay = POLL_FIRST_MS;
	int rc;
	for (;;) {
		const char *params[1] = { id };
		if (!(res = exec(r, &sw_db_stmt_agent_command_poll, params, err, errlen))) {
			rc = -EIO;
			break;
		}
		if (PQntuples(res) != 1) {
			PQclear(res);
			snprintf(err, errlen, "The server was deleted while it ran %s.", kind);
			rc = -ENOENT;
			break;
		}
		const char *status = PQgetvalue(res, 0, 0), *server = PQgetvalue(res, 0, 4);
		if (strcmp(status, "SUCCEEDED") == 0) {
			rc = 0;
			if (ret && !PQgetisnull(res, 0, 1))
				*ret = json_loads(PQgetvalue(res, 0, 1), 0, NULL);
			if (ret && !*ret)
				*ret = json_object();
			if (ret && !*ret) {
				snprintf(err, errlen, "Out of memory.");
				rc = -ENOMEM;
			}
		} else if (strcmp(status, "FAILED") == 0) {
			rc = sw_driver_error_errno(PQgetvalue(res, 0, 2));
			snprintf(err, errlen, "%s", PQgetvalue(res, 0, 3));
			if (!err[0])
				snprintf(err, errlen, "The server's agent failed %s.", kind);
		} else if (strcmp(status, "EXPIRED") == 0 || now_ms() > deadline) {
			snprintf(err, errlen, "The server's agent did not answer %s in time.", kind);
			rc = -ETIMEDOUT;
		} else if (strcmp(server, "ONLINE") != 0) {
			if (strcmp(status, "QUEUED") == 0)
				snprintf(err, errlen, "%s", SW_DRIVER_NOT_CONNECTED);
			else
				snprintf(err, errlen, "The server's agent disconnected while it ran %s: its "
					 "outcome on the server is not known.", kind);
			rc = -EHOSTUNREACH;
		} else if (r->stop && *r->stop) {
			snprintf(err, errlen, "The work was stopped while the server's agent ran %s.", kind);
			rc = -ECANCELED;
		} else {
			rc = 1;
		}
		PQclear(res);
		if (rc <= 0)
			break;
		sleep_ms(delay);
		delay = delay * 2 > POLL_MAX_MS ? POLL_MAX_MS : delay * 2;
	}
	/* Closed: a command given up on is not sent again (ABANDONED), and the
	 * payload goes; a finished one keeps its answer. */
	char e[128];
	const char *close[3] = { id, "ABANDONED", err };
	PQclear(exec(r, &sw_db_stmt_agent_command_close, close, e, sizeof(e)));
	if (rc && ret) {
		json_decref(*ret);
		*ret = NULL;
	}
	return rc;
}

static int not_yet(const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s on a remote server is not available yet.", what);
	return -EOPNOTSUPP;
}

static json_t *strings(const char *const *v)
{
	json_t *a = json_array();
	for (; a && v && *v; v++)
		if (json_array_append_new(a, json_string(*v)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* ---- images ---- */

int sw_rd_image_build(struct sw_driver *d, const struct sw_image_build *b, char *err, size_t errlen)
{
	(void)d;
	(void)b;
	return not_yet("An image build", err, errlen);
}

int sw_rd_image_remove(struct sw_driver *d, const char *tag, char *err, size_t errlen)
{
	return call(d, "image.remove", json_pack("{s:s}", "image", tag), 0, NULL, err, errlen);
}

/* A call whose answer is {key: [strings]}: at most cap of them into the
 * rows of width w at base. */
static int call_names(struct sw_driver *d, const char *kind, const char *application_id, const char *key,
		      char *base, size_t w, size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	json_t *res;
	*ret_n = 0;
	int rc = call(d, kind, json_pack("{s:s}", "applicationId", application_id), 0, &res, err, errlen);
	if (rc)
		return rc;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(res, key), i, v) {
		if (*ret_n < cap && json_string_value(v))
			snprintf(base + (*ret_n)++ * w, w, "%s", json_string_value(v));
	}
	json_decref(res);
	return 0;
}

int sw_rd_images_list(struct sw_driver *d, const char *application_id, char (*tags)[SW_DRIVER_TAG_MAX],
		      size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	return call_names(d, "image.list", application_id, "tags", tags[0], SW_DRIVER_TAG_MAX, cap, ret_n,
			  err, errlen);
}

bool sw_rd_image_exists(struct sw_driver *d, const char *tag)
{
	json_t *res;
	char err[256];
	if (call(d, "image.exists", json_pack("{s:s}", "image", tag), 0, &res, err, sizeof(err)) != 0)
		return false;
	bool yes = json_is_true(json_object_get(res, "exists"));
	json_decref(res);
	return yes;
}

/* ---- containers ---- */

int sw_rd_container_create(struct sw_driver *d, const struct sw_container_spec *s, char id[SW_DRIVER_ID_MAX],
			   char *err, size_t errlen)
{
	json_t *spec = json_pack("{s:o,s:o,s:o*,s:o,s:I,s:I,s:i,s:b}", "env", strings(s->env), "labels",
				 strings(s->labels), "cmd", s->cmd ? strings(s->cmd) : NULL, "mounts",
				 strings(s->mounts), "memoryBytes", (json_int_t)s->memory_bytes, "nanoCpus",
				 (json_int_t)s->nano_cpus, "port", (int)s->port, "restartUnlessStopped",
				 s->restart_unless_stopped);
	json_t *res;
	id[0] = '\0';
	int rc = call(d, "container.create",
		      spec ? json_pack("{s:s,s:s,s:o}", "name", s->name, "image", s->image, "spec", spec) : NULL,
		      0, &res, err, errlen);
	if (rc)
		return rc;
	snprintf(id, SW_DRIVER_ID_MAX, "%s", json_string_value(json_object_get(res, "id")) ?: "");
	if (json_is_true(json_object_get(res, "existed")))
		rc = -EEXIST;
	json_decref(res);
	return rc;
}

int sw_rd_container_action(struct sw_driver *d, const char *kind, const char *name, unsigned timeout_s,
			   char *err, size_t errlen)
{
	json_t *p = strcmp(kind, "container.stop") == 0
			    ? json_pack("{s:s,s:i}", "name", name, "timeoutS", (int)timeout_s)
			    : json_pack("{s:s}", "name", name);
	return call(d, kind, p, timeout_s * 1000, NULL, err, errlen);
}

int sw_rd_containers_list(struct sw_driver *d, const char *application_id, struct sw_container_info *out,
			  size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	json_t *res;
	*ret_n = 0;
	json_t *p = application_id ? json_pack("{s:s}", "applicationId", application_id) : json_object();
	int rc = call(d, "container.list", p, 0, &res, err, errlen);
	if (rc)
		return rc;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(res, "containers"), i, c) {
		if (*ret_n >= cap)
			break;
		struct sw_container_info *o = &out[(*ret_n)++];
		memset(o, 0, sizeof(*o));
#define STR(field, key) \
	snprintf(o->field, sizeof(o->field), "%s", json_string_value(json_object_get(c, key)) ?: "")
		STR(id, "id");
		STR(name, "name");
		STR(image, "image");
		STR(state, "state");
		STR(status, "status");
		STR(project, "project");
		STR(colour, "colour");
#undef STR
		o->created = (int64_t)json_integer_value(json_object_get(c, "created"));
	}
	json_decref(res);
	return 0;
}

/* ---- volumes ---- */

int sw_rd_volume_create(struct sw_driver *d, const struct sw_volume_spec *v, char *err, size_t errlen)
{
	json_t *labels = v->application_id ? json_pack("{s:s}", "steward.application", v->application_id)
			 : v->service_id   ? json_pack("{s:s}", "steward.service", v->service_id)
					   : json_object();
	return call(d, "volume.create", json_pack("{s:s,s:o}", "name", v->name, "labels", labels), 0, NULL,
		    err, errlen);
}

int sw_rd_volumes_list(struct sw_driver *d, const char *application_id, char (*names)[SW_DRIVER_VOLUME_MAX],
		       size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	return call_names(d, "volume.list", application_id, "names", names[0], SW_DRIVER_VOLUME_MAX, cap,
			  ret_n, err, errlen);
}

int sw_rd_volume_remove(struct sw_driver *d, const char *name, char *err, size_t errlen)
{
	return call(d, "volume.remove", json_pack("{s:s}", "name", name), 0, NULL, err, errlen);
}

/* ---- ingress ---- */

static void route_id(char out[64], const char *application_id)
{
	snprintf(out, 64, "steward-app-%s", application_id);
}

int sw_rd_route_set(struct sw_driver *d, const struct sw_ingress_route *rt, char *err, size_t errlen)
{
	char rid[64];
	route_id(rid, rt->application_id);
	json_t *route = json_pack("{s:o,s:s}", "hosts", strings(rt->hostnames), "upstream", rt->upstream);
	return call(d, "caddy.route.set",
		    route ? json_pack("{s:s,s:o}", "routeId", rid, "route", route) : NULL, 0, NULL, err,
		    errlen);
}

int sw_rd_route_remove(struct sw_driver *d, const char *application_id, char *err, size_t errlen)
{
	char rid[64];
	route_id(rid, application_id);
	return call(d, "caddy.route.remove", json_pack("{s:s}", "routeId", rid), 0, NULL, err, errlen);
}

int sw_rd_proxy_state(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	json_t *res;
	*ret_json = NULL;
	int rc = call(d, "caddy.state", json_object(), 0, &res, err, errlen);
	if (rc)
		return rc;
	json_t *state = json_object_get(res, "state");
	*ret_json = state ? json_dumps(state, JSON_COMPACT) : NULL;
	json_decref(res);
	if (!*ret_json) {
		snprintf(err, errlen, "The server's agent sent no proxy state.");
		return -EIO;
	}
	return 0;
}

int sw_rd_metrics_sample(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	json_t *res;
	*ret_json = NULL;
	int rc = call(d, "metrics.sample", json_object(), 0, &res, err, errlen);
	if (rc)
		return rc;
	*ret_json = json_object_get(res, "takenAt") ? json_dumps(res, JSON_COMPACT) : NULL;
	json_decref(res);
	if (!*ret_json) {
		snprintf(err, errlen, "The server's agent sent no sample.");
		return -EIO;
	}
	return 0;
}

/* ---- files ---- */

#define FILE_MAX (48u * 1024)

int sw_rd_container_put_file(struct sw_driver *d, const char *container, const char *dir, const char *name,
			     const void *data, size_t len, unsigned mode, char *err, size_t errlen)
{
	if (len > FILE_MAX) {
		snprintf(err, errlen, "A file larger than %u bytes cannot be written on a remote server.",
			 FILE_MAX);
		return -EFBIG;
	}
	size_t cap = 4 * ((len + 2) / 3) + 1;
	char *b64 = malloc(cap);
	if (!b64) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	EVP_EncodeBlock((unsigned char *)b64, data, (int)len);
	json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", container, "dir", dir, "file", name, "data",
			      b64, "mode", (int)mode);
	OPENSSL_cleanse(b64, cap); /* a secret, often */
	free(b64);
	return call(d, "container.file", p, 0, NULL, err, errlen);
}

/* ---- not carried yet ---- */

int sw_rd_unavailable(const char *what, char *err, size_t errlen)
{
	return not_yet(what, err, errlen);
}
