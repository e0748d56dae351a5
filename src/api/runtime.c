/* What runs on a server, read live through its driver: the containers of
 * an application or of a server, and the ingress (Caddy's routes and
 * certificate management).
 *
 * Decisions (also in the OpenAPI document):
 * - The local server is read through the local driver, a remote one
 *   through its remote driver (steward/driver/remote.h): the worker opens
 *   a blocking database connection of its own for the command's row, for
 *   the request's time. A remote server whose agent is not connected
 *   answers 409 SERVER_NOT_CONNECTED.
 * - The local host is shared by every organization of the installation,
 *   so an answer only ever shows the caller's: containers carrying the
 *   label steward.application of one of the organization's applications
 *   on that server, routes whose @id names one of them, and certificate
 *   policies whose subjects are the organization's verified hostnames (or
 *   that cover every name: Caddy's defaults). Service containers are not
 *   listed here (they have no application).
 * - The driver's calls are blocking: they run on the worker pool (503
 *   SERVICE_UNAVAILABLE when it is full). A container engine that does not
 *   answer is 502 RUNTIME_UNAVAILABLE with the reason. A Caddy that does
 *   not answer is part of the ingress state: GET /proxy answers 200 with
 *   reachable false and the reason (error), nothing else known. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "steward/api/api.h"
#include "steward/auth/auth.h"
#include "steward/driver/driver.h"
#include "steward/driver/remote.h"
#include "steward/io/io.h"
#include "steward/base/json.h"
#include "steward/base/log.h"
#include "api/api_internal.h"
#include "steward/db/statements_runtime.h"

/* Containers listed per application, and in one answer. */
#define RUNTIME_CONTAINERS_PER_APP 64
#define RUNTIME_CONTAINERS_MAX 1000

static const int err_app[] = { 404, 409, 502, 503, 0 };
static const int err_server[] = { 404, 409, 502, 503, 0 };
static const int err_proxy[] = { 404, 409, 422, 503, 0 };

/* One driver serves every thread (it holds settings only). */
static struct {
	pthread_once_t once;
	struct sw_driver *d;
} local = { .once = PTHREAD_ONCE_INIT };

/* The database a remote server's commands go through (set at start-up). */
static char conninfo[1024];

void sw_api_runtime_set_conninfo(const char *c)
{
	snprintf(conninfo, sizeof(conninfo), "%s", c);
}

const char *sw_api_runtime_conninfo(void)
{
	return conninfo;
}

static void local_make(void)
{
	local.d = sw_driver_local_new();
	if (!local.d)
		sw_log_error("runtime: the local driver could not be made (%s)", strerror(errno));
}

struct sw_driver *sw_api_local_driver(void)
{
	pthread_once(&local.once, local_make);
	return local.d;
}

enum op_kind { OP_CONTAINERS, OP_PROXY };

struct op {
	struct sw_worker_job job;
	struct sw_http_request *req;
	enum op_kind kind;
	bool remote;
	bool not_connected; /* a remote server whose agent is not connected: 409 */
	struct sw_driver *d; /* the driver of this request's server */
	char server_id[37];
	json_t *apps;  /* the organization's application ids on the server */
	json_t *hosts; /* their verified hostnames */
	/* results */
	int rc;
	char err[256];
	struct sw_container_info *containers;
	size_t *owner; /* index into apps of each container */
	size_t n;
	json_t *proxy;
};

static void op_free(struct op *o)
{
	json_decref(o->apps);
	json_decref(o->hosts);
	json_decref(o->proxy);
	free(o->containers);
	free(o->owner);
	free(o);
}

/* ---- on the worker ---- */

static void containers_run(struct op *o)
{
	size_t napps = json_array_size(o->apps);
	size_t cap = SW_MIN(napps * RUNTIME_CONTAINERS_PER_APP, (size_t)RUNTIME_CONTAINERS_MAX);
	o->containers = calloc(cap ? cap : 1, sizeof(*o->containers));
	o->owner = calloc(cap ? cap : 1, sizeof(*o->owner));
	if (!o->containers || !o->owner) {
		o->rc = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < napps && o->n < cap; i++) {
		size_t got = 0;
		const char *app = json_string_value(json_array_get(o->apps, i));
		o->rc = sw_driver_containers_list(o->d, app, o->containers + o->n,
						  SW_MIN(cap - o->n, (size_t)RUNTIME_CONTAINERS_PER_APP), &got,
						  o->err, sizeof(o->err));
		if (o->rc)
			return;
		for (size_t k = 0; k < got; k++)
			o->owner[o->n + k] = i;
		o->n += got;
	}
}

static bool in_array(json_t *a, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

/* The state the driver reads, cut to the organization's share. */
static void proxy_run(struct op *o)
{
	char *text = NULL;
	o->rc = sw_driver_proxy_state(o->d, &text, o->err, sizeof(o->err));
	if (o->rc == -ENOMEM)
		return;
	if (o->rc) {
		/* Caddy down is the ingress's state, not this route's failure. */
		o->proxy = json_pack("{s:s, s:b, s:s, s:n, s:[], s:[], s:n}", "serverId", o->server_id,
				     "reachable", 0, "error", o->err, "server", "routes", "certificates",
				     "internalCa");
		o->rc = o->proxy ? 0 : -ENOMEM;
		return;
	}
	json_t *doc = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_object(doc)) {
		json_decref(doc);
		o->rc = -EIO;
		snprintf(o->err, sizeof(o->err), "the ingress state could not be read");
		return;
	}
	json_t *routes = json_array(), *certs = json_array();
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(doc, "routes"), i, v) {
		const char *app = json_string_value(json_object_get(v, "applicationId"));
		if (app && in_array(o->apps, app))
			json_array_append(routes, v);
	}
	json_array_foreach(json_object_get(doc, "certificates"), i, v) {
		json_t *subjects = json_object_get(v, "subjects");
		if (json_array_size(subjects) == 0) {
			json_array_append(certs, v);
			continue;
		}
		json_t *mine = json_array();
		size_t k;
		json_t *s;
		json_array_foreach(subjects, k, s)
			if (json_is_string(s) && in_array(o->hosts, json_string_value(s)))
				json_array_append(mine, s);
		if (json_array_size(mine) == 0) {
			json_decref(mine);
			continue;
		}
		json_t *c = json_copy(v);
		json_object_set_new(c, "subjects", mine);
		json_array_append_new(certs, c);
	}
	o->proxy = json_pack("{s:s, s:b, s:n, s:O, s:o, s:o, s:O}", "serverId", o->server_id,
			     "reachable", 1, "error", "server",
			     json_object_get(doc, "server") ? json_object_get(doc, "server") : json_null(),
			     "routes", routes, "certificates", certs, "internalCa",
			     json_object_get(doc, "internalCa") ? json_object_get(doc, "internalCa")
								 : json_null());
	json_decref(doc);
	if (!o->proxy) {
		o->rc = -ENOMEM;
		snprintf(o->err, sizeof(o->err), "out of memory");
	}
}

static void op_run(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	PGconn *conn = NULL;
	if (o->remote) {
		conn = PQconnectdb(conninfo);
		if (PQstatus(conn) != CONNECTION_OK) {
			o->rc = -EIO;
			snprintf(o->err, sizeof(o->err), "the database cannot be reached");
			goto out;
		}
		o->rc = sw_driver_remote_new(conn, o->server_id, NULL, 0, &o->d, o->err, sizeof(o->err));
		if (o->rc) {
			o->not_connected = o->rc == -EHOSTUNREACH;
			goto out;
		}
	} else {
		if (!(o->d = sw_api_local_driver())) {
			o->rc = -EIO;
			snprintf(o->err, sizeof(o->err), "the local server's driver is not configured");
			return;
		}
	}
	if (o->kind == OP_CONTAINERS)
		containers_run(o);
	else
		proxy_run(o);
out:
	if (o->remote) {
		sw_driver_free(o->d);
		PQfinish(conn);
	}
	o->d = NULL;
}

/* ---- back on the loop ---- */

static void write_container(struct sw_json *j, const struct sw_container_info *c, const char *app)
{
	char created[25];
	sw_format_rfc3339((uint64_t)(c->created > 0 ? c->created : 0) * 1000, created);
	/* The deployment number: "sw-<12 hex>-<number>[-colour]". */
	const char *dash = strchr(c->name + 3, '-');
	long number = dash ? strtol(dash + 1, NULL, 10) : 0;
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, c->id);
	sw_json_key(j, "name");
	sw_json_cstr(j, c->name);
	sw_json_key(j, "applicationId");
	sw_json_cstr(j, app);
	sw_json_key(j, "deploymentNumber");
	if (number > 0)
		sw_json_int(j, number);
	else
		sw_json_null(j);
	sw_json_key(j, "image");
	sw_json_cstr(j, c->image);
	sw_json_key(j, "state");
	sw_json_cstr(j, c->state);
	sw_json_key(j, "status");
	sw_json_cstr(j, c->status);
	sw_json_key(j, "project");
	sw_json_cstr(j, c->project);
	sw_json_key(j, "colour");
	sw_json_cstr(j, c->colour[0] ? c->colour : NULL);
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, created);
	sw_json_object_end(j);
}

static void op_done(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	struct sw_http_request *req = o->req;
	if (o->not_connected) {
		sw_http_error(req, 409, "SERVER_NOT_CONNECTED", SW_DRIVER_NOT_CONNECTED);
	} else if (o->rc == -ENOMEM) {
		sw_api_internal_error(req);
	} else if (o->rc) {
		char msg[320];
		snprintf(msg, sizeof(msg), "The server's runtime did not answer: %s.", o->err);
		sw_http_error(req, 502, "RUNTIME_UNAVAILABLE", msg);
	} else if (o->kind == OP_PROXY) {
		char *text = json_dumps(o->proxy, JSON_COMPACT);
		if (!text) {
			sw_api_internal_error(req);
		} else {
			struct sw_buf buf = { 0 };
			struct sw_json j;
			sw_http_json_begin(req, &buf, &j);
			sw_json_raw(&j, sw_str_cstr(text));
			sw_http_json_end(req, 200, &buf, &j);
			free(text);
		}
	} else {
		struct sw_buf buf = { 0 };
		struct sw_json j;
		sw_http_json_begin(req, &buf, &j);
		sw_json_array_begin(&j);
		for (size_t i = 0; i < o->n; i++)
			write_container(&j, &o->containers[i],
					json_string_value(json_array_get(o->apps, o->owner[i])));
		sw_json_array_end(&j);
		sw_http_json_end(req, 200, &buf, &j);
	}
	op_free(o);
}

bool sw_api_runtime_target_read(const PGresult *res, char server_id[static 37])
{
	snprintf(server_id, 37, "%s", PQgetvalue(res, 0, SW_DB_RUNTIME_SERVER_ID));
	return strcmp(PQgetvalue(res, 0, SW_DB_RUNTIME_SERVER_IS_LOCAL), "t") != 0;
}

/* The target's row (enum sw_db_runtime_target_col) read: 404, 409 for a
 * remote server, else the driver's work on the worker pool. */
static void target_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	struct sw_http_request *req = o->req;
	if (!sw_api_found(req, res, err)) {
		op_free(o);
		return;
	}
	o->remote = sw_api_runtime_target_read(res, o->server_id);
	o->apps = json_loads(PQgetvalue(res, 0, SW_DB_RUNTIME_APPLICATION_IDS), 0, NULL);
	o->hosts = json_loads(PQgetvalue(res, 0, SW_DB_RUNTIME_HOSTNAMES), 0, NULL);
	if (!json_is_array(o->apps) || !json_is_array(o->hosts)) {
		op_free(o);
		sw_api_internal_error(req);
		return;
	}
	if (!sw_api_submit(req, &o->job, op_run, op_done))
		op_free(o);
}

static struct op *op_new(struct sw_http_request *req, enum op_kind kind)
{
	struct op *o = calloc(1, sizeof(*o));
	if (!o) {
		sw_api_internal_error(req);
		return NULL;
	}
	o->req = req;
	o->kind = kind;
	return o;
}

static void start(struct sw_http_request *req, enum op_kind kind, const struct sw_db_stmt *stmt,
		  const char *id)
{
	struct op *o = op_new(req, kind);
	if (!o)
		return;
	const char *params[2] = { req->principal.organization_id, id };
	if (!sw_api_query(req, stmt, params, 2, target_loaded, o))
		op_free(o);
}

/* GET /<collection>/:id/containers: stmt reads the target of the path's id. */
static void containers_of(struct sw_http_request *req, const struct sw_db_stmt *stmt)
{
	char *id = sw_arena_alloc(&req->arena, 37);
	if (!id) {
		sw_api_internal_error(req);
		return;
	}
	if (sw_api_uuid_param(req, req->params.value[0], id))
		start(req, OP_CONTAINERS, stmt, id);
}

static void application_containers(struct sw_http_request *req)
{
	containers_of(req, &sw_db_stmt_runtime_application);
}

static void server_containers(struct sw_http_request *req)
{
	containers_of(req, &sw_db_stmt_runtime_server);
}

static void proxy_get(struct sw_http_request *req)
{
	const char *names[] = { "serverId", NULL };
	const char *values[1] = { NULL };
	struct sw_field_errors fe = { 0 };
	if (sw_query_read(&req->arena, req->query, names, values, &fe) && values[0] &&
	    !sw_is_uuid(sw_str_cstr(values[0])))
		sw_field_error(&fe, "serverId", "must be a UUID");
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	start(req, OP_PROXY, &sw_db_stmt_runtime_server, values[0]);
}

/* ---- routes and schemas ---- */

#define RUNTIME_DOC                                                                                \
	" A remote server is read through its agent (one command, answered within 60 s): 409 "      \
	"SERVER_NOT_CONNECTED when its agent is not connected. The local host is shared by every "  \
	"organization, so only the organization's own applications are shown. The worker pool "    \
	"full: 503."                                                                                  \
	SW_API_DOC_SCOPED

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications/:id/containers", SW_ACCESS_SESSION, application_containers, 0, 0,
	  { "List an application's live containers",
	    "Read now from the container engine of the application's server: the containers labelled "
	    "steward.application=<id>, newest first, running or not (a BLUE_GREEN switch shows both "
	    "colours for a moment). A container engine that does not answer: 502 RUNTIME_UNAVAILABLE."
	    RUNTIME_DOC,
	    "Runtime", NULL, "RuntimeContainerList", 200, err_app } },
	{ SW_HTTP_GET, "/servers/:id/containers", SW_ACCESS_SESSION, server_containers, 0, 0,
	  { "List a server's live containers",
	    "The containers of the organization's applications on the server, read now from its "
	    "container engine; by application (oldest first), then newest first. At most 1000. A "
	    "container engine that does not answer: 502 RUNTIME_UNAVAILABLE." RUNTIME_DOC,
	    "Runtime", NULL, "RuntimeContainerList", 200, err_server } },
	{ SW_HTTP_GET, "/proxy", SW_ACCESS_SESSION, proxy_get, 0, 0,
	  { "Read a server's ingress and certificate state",
	    "Read now from Caddy's admin API on the server (?serverId=, default the local server; "
	    "422 when it is not a UUID, 404 when it is not the organization's): Steward's HTTP server "
	    "(its listen addresses, whether automatic HTTPS applies), the routes of the "
	    "organization's applications (each {id: steward-app-<application id>, applicationId, "
	    "hosts: the application's verified hostnames, upstreams: 127.0.0.1:<port of the serving "
	    "version>}), the TLS automation policies (certificates) that cover the organization's "
	    "hostnames or every name, and Caddy's internal CA when a policy uses it. A Caddy that "
	    "does not answer is state too: 200 with reachable false and error saying why."
	    RUNTIME_DOC,
	    "Runtime", NULL, "RuntimeProxy", 200, err_proxy, "serverId" } },
};

#define STR "{\"type\":\"string\"}"
#define STR_OR_NULL "{\"type\":[\"string\",\"null\"]}"
#define STR_LIST "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"

static const char schemas[] = "{"
	"\"RuntimeContainer\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"applicationId\","
	"\"deploymentNumber\",\"image\",\"state\",\"status\",\"project\",\"colour\",\"createdAt\"],"
	"\"properties\":{"
	"\"id\":{\"type\":\"string\",\"description\":\"The engine's container id.\"},"
	"\"name\":{\"type\":\"string\",\"description\":\"sw-<first 12 hex of the application id>-"
	"<deployment number>[-blue|-green]\"},"
	"\"applicationId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"deploymentNumber\":{\"type\":[\"integer\",\"null\"],\"minimum\":1},"
	"\"image\":" STR ","
	"\"state\":{\"type\":\"string\",\"description\":\"The engine's: created, running, paused, "
	"restarting, removing, exited, dead.\"},"
	"\"status\":{\"type\":\"string\",\"description\":\"The engine's text, e.g. Up 3 minutes.\"},"
	"\"project\":{\"type\":\"string\",\"description\":\"com.docker.compose.project: the "
	"application's name, with -blue or -green for a BLUE_GREEN colour.\"},"
	"\"colour\":{\"type\":[\"string\",\"null\"],\"enum\":[\"blue\",\"green\",null]},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"RuntimeContainerList\":{\"type\":\"array\",\"items\":{\"$ref\":"
	"\"#/components/schemas/RuntimeContainer\"}},"
	"\"RuntimeProxy\":{\"type\":\"object\",\"required\":[\"serverId\",\"reachable\",\"error\",\"server\","
	"\"routes\",\"certificates\",\"internalCa\"],\"properties\":{"
	"\"serverId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"reachable\":{\"type\":\"boolean\",\"description\":\"Whether Caddy's admin API answered; "
	"false: nothing else is known (empty lists, nulls) and error says why.\"},"
	"\"error\":{\"type\":[\"string\",\"null\"]},"
	"\"server\":{\"type\":[\"object\",\"null\"],\"description\":\"Steward's HTTP server in "
	"Caddy, null until a route was set.\",\"properties\":{\"name\":" STR ",\"listen\":" STR_LIST
	",\"automaticHttps\":{\"type\":\"boolean\"}}},"
	"\"routes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\","
	"\"applicationId\",\"hosts\",\"upstreams\"],\"properties\":{\"id\":" STR ",\"applicationId\":"
	"{\"type\":\"string\",\"format\":\"uuid\"},\"hosts\":" STR_LIST ",\"upstreams\":" STR_LIST "}}},"
	"\"certificates\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":["
	"\"subjects\",\"issuers\",\"onDemand\"],\"properties\":{\"subjects\":" STR_LIST ","
	"\"issuers\":" STR_LIST ",\"onDemand\":{\"type\":\"boolean\"}}}},"
	"\"internalCa\":{\"type\":[\"object\",\"null\"],\"properties\":{\"id\":" STR_OR_NULL ","
	"\"name\":" STR_OR_NULL ",\"rootCommonName\":" STR_OR_NULL ",\"intermediateCommonName\":"
	STR_OR_NULL "}}}}"
	"}";

const struct sw_api_route_group sw_api_runtime_group = { routes, SW_ARRAY_SIZE(routes), schemas };
