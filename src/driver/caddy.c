/* Ingress of the local driver: Caddy's admin API (caddyserver.com/docs/api).
 *
 * Steward keeps its routes in one HTTP server of Caddy's configuration,
 * apps.http.servers.steward, which it creates when absent with the
 * addresses of CADDY_HTTP_LISTEN (default ":80"; a comma-separated list).
 * Each application has one route, tagged "@id": "steward-app-<id>":
 *   {"@id": "steward-app-<id>", "match": [{"host": [<hostnames>]}],
 *    "handle": [{"handler": "reverse_proxy", "upstreams": [{"dial": "<upstream>"}]}],
 *    "terminal": true}
 * Calls used:
 *   GET    /id/steward-app-<id>      200: the route; 404 "unknown object ID"
 *   PATCH  /id/steward-app-<id>      replaces it in one config load: Caddy
 *          swaps the whole config atomically, so a blue-green switch never
 *          serves a mix or a gap
 *   POST   /config/apps/http/servers/steward/routes   appends a route
 *   PUT    /config/apps/http/servers/steward          creates the server
 *          (Caddy 2.6 creates the missing parents; "key already exists"
 *          when another writer was first: the call then starts over)
 *   DELETE /id/steward-app-<id>      until 404 (a duplicate left by a
 *          concurrent writer goes too)
 *   GET    /config/apps/http, /config/apps/tls, /pki/ca/local  (proxy_state)
 * The application's deployment lock keeps two writers of one route apart;
 * routes of different applications are independent appends. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver/driver_internal.h"

#define CADDY "Caddy's admin API"
#define SERVER_PATH "/config/apps/http/servers/steward"
#define ROUTE_ID_PREFIX "steward-app-"
#define SET_ATTEMPTS 4
#define REMOVE_ATTEMPTS 16
#define RESET_ATTEMPTS 4

/* One admin call: path is appended to the admin URL. body NULL: none.
 *
 * Caddy replaces its admin endpoint on every configuration load (each of
 * our PUT, POST, PATCH and DELETE): the new server listens on a socket of
 * its own (SO_REUSEPORT) and the old one is shut down in the background.
 * A connection the kernel had queued on the old socket and Caddy had not
 * accepted yet is reset when that socket closes, before Caddy read a byte
 * of its request. So a call reset before any answer (-ECONNRESET) is
 * made again, on a new connection that reaches the new socket: its
 * request was never seen, so even a POST is not applied twice. An
 * answered call, or one reset after its status line, is never repeated. */
static int caddy_call(struct sw_driver *d, struct sw_driver_http *h, const char *method,
		      const char *path, const char *body, char *err, size_t errlen)
{
	char url[512];
	int n = snprintf(url, sizeof(url), "%s%s", d->caddy_admin, path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		snprintf(err, errlen, "the Caddy admin URL is too long");
		return -ENAMETOOLONG;
	}
	int rc = -ECONNRESET;
	for (int attempt = 0; attempt < RESET_ATTEMPTS && rc == -ECONNRESET; attempt++) {
		sw_buf_release(&h->response);
		*h = (struct sw_driver_http){ .method = method, .url = url,
					      .timeout_ms = SW_DRIVER_CADDY_TIMEOUT_MS };
		if (body) {
			h->content_type = "application/json";
			h->body = body;
			h->body_len = strlen(body);
		}
		rc = sw_driver_http_run(h, CADDY, err, errlen);
	}
	return rc;
}

static json_t *route_json(const struct sw_ingress_route *r, char *err, size_t errlen)
{
	json_t *hosts = json_array();
	for (size_t i = 0; hosts && r->hostnames && r->hostnames[i]; i++) {
		if (!sw_driver_token_ok(r->hostnames[i], ".-*", 253)) {
			snprintf(err, errlen, "the route was given an invalid hostname");
			json_decref(hosts);
			return NULL;
		}
		json_array_append_new(hosts, json_string(r->hostnames[i]));
	}
	if (!hosts || json_array_size(hosts) == 0) {
		snprintf(err, errlen, "a route needs at least one hostname");
		json_decref(hosts);
		return NULL;
	}
	char id[96];
	snprintf(id, sizeof(id), ROUTE_ID_PREFIX "%s", r->application_id);
	json_t *route = json_pack("{s:s, s:[{s:o}], s:[{s:s, s:[{s:s}]}], s:b}", "@id", id, "match",
				  "host", hosts, "handle", "handler", "reverse_proxy", "upstreams",
				  "dial", r->upstream, "terminal", 1);
	if (!route)
		snprintf(err, errlen, "out of memory");
	return route;
}

/* The server Steward creates: its listen addresses and the first route. */
static char *server_json(const struct sw_driver *d, json_t *route)
{
	json_t *listen = json_array();
	char copy[sizeof(d->caddy_listen)];
	snprintf(copy, sizeof(copy), "%s", d->caddy_listen);
	char *save = NULL;
	for (char *a = strtok_r(copy, ", ", &save); a && listen; a = strtok_r(NULL, ", ", &save))
		json_array_append_new(listen, json_string(a));
	json_t *server = listen ? json_pack("{s:o, s:[O]}", "listen", listen, "routes", route) : NULL;
	char *text = server ? json_dumps(server, JSON_COMPACT) : NULL;
	json_decref(server);
	return text;
}

int sw_driver_route_set(struct sw_driver *d, const struct sw_ingress_route *r, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_route_set(d, r, err, errlen);
	if (!sw_driver_app_id_ok(r->application_id) || !sw_driver_token_ok(r->upstream, ".:[]-", 255)) {
		snprintf(err, errlen, "the route was given an invalid application id or upstream");
		return -EINVAL;
	}
	json_t *route = route_json(r, err, errlen);
	if (!route)
		return -EINVAL;
	char *route_text = json_dumps(route, JSON_COMPACT);
	char *server_text = server_json(d, route);
	json_t *routes = json_pack("[O]", route);
	char *routes_text = routes ? json_dumps(routes, JSON_COMPACT) : NULL;
	json_decref(routes);
	char id_path[96];
	snprintf(id_path, sizeof(id_path), "/id/" ROUTE_ID_PREFIX "%s", r->application_id);
	struct sw_driver_http h = { 0 };
	int rc = -ENOMEM;
	if (!route_text || !server_text || !routes_text) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int attempt = 0; attempt < SET_ATTEMPTS; attempt++) {
		rc = caddy_call(d, &h, "GET", id_path, NULL, err, errlen);
		if (rc < 0)
			goto out;
		if (h.status == 200) {
			rc = caddy_call(d, &h, "PATCH", id_path, route_text, err, errlen);
			if (rc < 0 || h.status == 200)
				goto out;
			if (h.status == 404)
				continue; /* removed in between */
			sw_driver_answer_error(&h, "Caddy refused the route", err, errlen);
			rc = sw_driver_status_errno(h.status);
			goto out;
		}
		if (h.status != 404) {
			sw_driver_answer_error(&h, "Caddy's routes cannot be read", err, errlen);
			rc = sw_driver_status_errno(h.status);
			goto out;
		}
		rc = caddy_call(d, &h, "GET", SERVER_PATH, NULL, err, errlen);
		if (rc < 0)
			goto out;
		if (h.status != 200) {
			sw_driver_answer_error(&h, "Caddy's configuration cannot be read", err, errlen);
			rc = sw_driver_status_errno(h.status);
			goto out;
		}
		json_t *server = json_loadb(h.response.data, h.response.len, 0, NULL);
		bool exists = json_is_object(server);
		bool has_routes = json_is_array(json_object_get(server, "routes"));
		json_decref(server);
		if (!exists)
			rc = caddy_call(d, &h, "PUT", SERVER_PATH, server_text, err, errlen);
		else if (has_routes)
			rc = caddy_call(d, &h, "POST", SERVER_PATH "/routes", route_text, err, errlen);
		else
			rc = caddy_call(d, &h, "PUT", SERVER_PATH "/routes", routes_text, err, errlen);
		if (rc < 0 || h.status == 200)
			goto out;
		/* Another writer created the server or its routes first: again. */
		sw_driver_answer_error(&h, "Caddy refused the route", err, errlen);
		rc = sw_driver_status_errno(h.status);
	}
out:
	sw_buf_release(&h.response);
	free(route_text);
	free(server_text);
	free(routes_text);
	json_decref(route);
	return rc;
}

int sw_driver_route_remove(struct sw_driver *d, const char *application_id, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_route_remove(d, application_id, err, errlen);
	if (!sw_driver_app_id_ok(application_id)) {
		snprintf(err, errlen, "invalid application id");
		return -EINVAL;
	}
	char id_path[96];
	snprintf(id_path, sizeof(id_path), "/id/" ROUTE_ID_PREFIX "%s", application_id);
	struct sw_driver_http h = { 0 };
	int rc = 0;
	for (int i = 0; i < REMOVE_ATTEMPTS; i++) {
		rc = caddy_call(d, &h, "DELETE", id_path, NULL, err, errlen);
		if (rc < 0 || h.status == 404)
			break;
		if (h.status != 200) {
			sw_driver_answer_error(&h, "Caddy refused to remove the route", err, errlen);
			rc = sw_driver_status_errno(h.status);
			break;
		}
	}
	sw_buf_release(&h.response);
	return rc;
}

/* ---- proxy_state ---- */

/* GET path as JSON (NULL for null or 404); -errno on failure. */
static int get_json(struct sw_driver *d, const char *path, json_t **ret, char *err, size_t errlen)
{
	struct sw_driver_http h = { 0 };
	*ret = NULL;
	int rc = caddy_call(d, &h, "GET", path, NULL, err, errlen);
	if (rc == 0 && h.status == 200) {
		json_error_t je;
		*ret = json_loadb(h.response.data, h.response.len, JSON_DECODE_ANY, &je);
		if (!*ret) {
			snprintf(err, errlen, CADDY " sent an answer that is not JSON");
			rc = -EIO;
		} else if (json_is_null(*ret)) {
			json_decref(*ret);
			*ret = NULL;
		}
	} else if (rc == 0 && h.status != 404) {
		sw_driver_answer_error(&h, "Caddy's configuration cannot be read", err, errlen);
		rc = sw_driver_status_errno(h.status);
	}
	sw_buf_release(&h.response);
	return rc;
}

/* The port of a Caddy listen address ("host:port", ":port", "tcp/:port",
 * "[::1]:port"); 0 when it has none or a range. */
static unsigned listen_port(const char *a)
{
	const char *colon = strrchr(a, ':');
	uint64_t port;
	if (!colon || !sw_parse_u64(sw_str_cstr(colon + 1), &port) || port > 65535)
		return 0;
	return (unsigned)port;
}

/* One route of the server as {id, applicationId, hosts, upstreams}. */
static json_t *route_state(json_t *route)
{
	const char *id = json_string_value(json_object_get(route, "@id"));
	json_t *hosts = json_array(), *upstreams = json_array();
	size_t i, j;
	json_t *m, *h, *u;
	json_array_foreach(json_object_get(route, "match"), i, m)
		json_array_foreach(json_object_get(m, "host"), j, h)
			json_array_append(hosts, h);
	json_array_foreach(json_object_get(route, "handle"), i, h) {
		const char *handler = json_string_value(json_object_get(h, "handler"));
		if (!handler || strcmp(handler, "reverse_proxy") != 0)
			continue;
		json_array_foreach(json_object_get(h, "upstreams"), j, u)
			if (json_is_string(json_object_get(u, "dial")))
				json_array_append(upstreams, json_object_get(u, "dial"));
	}
	const char *app = id && strncmp(id, ROUTE_ID_PREFIX, strlen(ROUTE_ID_PREFIX)) == 0
				  ? id + strlen(ROUTE_ID_PREFIX)
				  : NULL;
	return json_pack("{s:s?, s:s?, s:o, s:o}", "id", id, "applicationId", app, "hosts", hosts,
			 "upstreams", upstreams);
}

/* The certificate management Caddy is configured with: one entry per TLS
 * automation policy, {subjects (empty: every name without a policy of its
 * own), issuers (module names), onDemand}. */
static json_t *certificates_state(json_t *tls, bool *ret_internal)
{
	json_t *out = json_array();
	size_t i, j;
	json_t *p, *is;
	*ret_internal = false;
	json_array_foreach(json_object_get(json_object_get(tls, "automation"), "policies"), i, p) {
		json_t *subjects = json_object_get(p, "subjects");
		json_t *issuers = json_array();
		json_array_foreach(json_object_get(p, "issuers"), j, is) {
			const char *module = json_string_value(json_object_get(is, "module"));
			if (!module)
				continue;
			json_array_append_new(issuers, json_string(module));
			if (strcmp(module, "internal") == 0)
				*ret_internal = true;
		}
		json_array_append_new(out, json_pack("{s:o, s:o, s:b}", "subjects",
						     json_is_array(subjects) ? json_incref(subjects) : json_array(),
						     "issuers", issuers, "onDemand",
						     json_is_true(json_object_get(p, "on_demand"))));
	}
	return out;
}

int sw_driver_proxy_state(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	if (d->remote)
		return sw_rd_proxy_state(d, ret_json, err, errlen);
	json_t *http = NULL, *tls = NULL, *ca = NULL, *doc = NULL;
	int rc = get_json(d, "/config/apps/http", &http, err, errlen);
	if (rc == 0)
		rc = get_json(d, "/config/apps/tls", &tls, err, errlen);
	if (rc < 0)
		goto out;
	json_t *server = json_object_get(json_object_get(http, "servers"), "steward");
	json_t *routes = json_array();
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(server, "routes"), i, r)
		json_array_append_new(routes, route_state(r));
	json_t *server_state = json_null();
	if (json_is_object(server)) {
		/* Caddy's rule: automatic HTTPS for a server unless disabled or it
		 * listens on the HTTP port only. */
		json_int_t http_port = json_integer_value(json_object_get(http, "http_port"));
		bool https = !json_is_true(json_object_get(json_object_get(server, "automatic_https"), "disable"));
		bool other_port = false;
		json_t *a;
		json_array_foreach(json_object_get(server, "listen"), i, a)
			if (json_is_string(a) && listen_port(json_string_value(a)) != (http_port ? http_port : 80))
				other_port = true;
		json_t *listen = json_object_get(server, "listen");
		server_state = json_pack("{s:s, s:o, s:b}", "name", "steward", "listen",
					 json_is_array(listen) ? json_incref(listen) : json_array(),
					 "automaticHttps", https && other_port);
	}
	bool internal = false;
	json_t *certificates = certificates_state(tls, &internal);
	json_t *ca_state = json_null();
	/* Asked only when a policy uses it: the first GET creates the CA. */
	if (internal && get_json(d, "/pki/ca/local", &ca, err, errlen) == 0 && json_is_object(ca))
		ca_state = json_pack("{s:s?, s:s?, s:s?, s:s?}", "id", json_string_value(json_object_get(ca, "id")),
				     "name", json_string_value(json_object_get(ca, "name")), "rootCommonName",
				     json_string_value(json_object_get(ca, "root_common_name")),
				     "intermediateCommonName",
				     json_string_value(json_object_get(ca, "intermediate_common_name")));
	doc = json_pack("{s:o, s:o, s:o, s:o}", "server", server_state, "routes", routes, "certificates",
			certificates, "internalCa", ca_state ? ca_state : json_null());
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (!text) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	*ret_json = text;
	rc = 0;
out:
	json_decref(doc);
	json_decref(http);
	json_decref(tls);
	json_decref(ca);
	return rc;
}
