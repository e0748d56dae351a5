/* What a complete request meets before its handler: OPTIONS (with the
 * CORS preflight), 404 and 405 from the route table, the guard, and the
 * query-string rule. The state machine reaches it through srv->dispatch. */
#include "steward/base/json.h"
#include "steward/http/query.h"
#include "http/conn.h"

/* Answers 404 for a path no route has (false); else adds the Allow header
 * of the methods it accepts, leaving them in allow (the caller releases). */
static bool allow_or_404(struct sw_http_request *req, struct sw_buf *allow)
{
	unsigned allowed = sw_router_allowed(req->server->shared->router, req->path);
	if (!allowed) {
		sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
		return false;
	}
	sw_http_append_allow(allow, allowed);
	sw_http_add_header(req, "Allow", sw_str_from(allow->data, allow->len));
	return true;
}

void sw_http_dispatch(struct sw_http_request *req)
{
	if (req->server->shared->admit && !req->server->shared->admit(req))
		return;
	if (req->method == SW_HTTP_OPTIONS) {
		struct sw_buf allow = { 0 };
		if (!allow_or_404(req, &allow))
			return;
		if (sw_http_allowed_origin(req).len &&
		    sw_http_request_header(req, SW_STR("Access-Control-Request-Method"))) {
			sw_http_add_header(req, "Access-Control-Allow-Methods", sw_str_from(allow.data, allow.len));
			sw_http_add_header(req, "Access-Control-Allow-Headers",
					   SW_STR("Content-Type, Authorization, X-Request-Id"));
			sw_http_add_header(req, "Access-Control-Max-Age", SW_STR("600"));
		}
		sw_buf_release(&allow);
		sw_http_respond(req, 204, NULL, SW_STR_NULL);
		return;
	}
	if (!req->route) {
		struct sw_buf allow = { 0 };
		if (!allow_or_404(req, &allow))
			return;
		sw_buf_release(&allow);
		sw_http_error(req, 405, "METHOD_NOT_ALLOWED", "The resource does not support this method.");
		return;
	}
	/* Every route passes the guard; it admits public ones at once. */
	req->server->shared->guard(req);
}

/* A route that takes no body still reads a small one (conn.c), since most
 * clients send "{}" on every POST: white space or an empty JSON object is
 * no body, and the handler sees none. Members are refused by name, as on
 * any route that does not know them; other bytes are 400 INVALID_JSON.
 * false when the request has been answered. */
static bool bodiless_body_ok(struct sw_http_request *req)
{
	struct sw_str b = req->body;
	size_t i = 0;
	while (i < b.len && (b.ptr[i] == ' ' || b.ptr[i] == '\t' || b.ptr[i] == '\r' || b.ptr[i] == '\n'))
		i++;
	if (i < b.len) {
		char err[160];
		json_t *v = sw_json_parse_object(b, err, sizeof(err));
		char path[128];
		if (!v && sw_json_out_of_range_path(b, path, sizeof(path)) && path[0]) {
			/* A member all the same (its number out of range). */
			struct sw_field_errors fe = { 0 };
			path[strcspn(path, ".[")] = '\0';
			sw_field_error(&fe, path, "is not a known field");
			sw_http_validation_error(req, &fe);
			return false;
		}
		if (!v) {
			sw_http_error(req, 400, "INVALID_JSON", err);
			return false;
		}
		if (json_object_size(v)) {
			struct sw_field_errors fe = { 0 };
			const char *key;
			json_t *member;
			json_object_foreach(v, key, member)
				sw_field_error(&fe, key, "is not a known field");
			sw_http_validation_error(req, &fe);
			json_decref(v);
			return false;
		}
		json_decref(v);
	}
	req->body.len = 0;
	return true;
}

void sw_http_run_handler(struct sw_http_request *req)
{
	/* An API route that documents no query parameters takes none: a
	 * misspelt filter or page size must not be silently ignored (query.h).
	 * Public routes (health checks, the document) ignore a query string, as
	 * load balancers and caches add their own. */
	if (!req->route->doc.query && req->route->access != SW_ACCESS_PUBLIC && req->query.len) {
		static const char *const none[] = { NULL };
		const char *unused[1];
		struct sw_field_errors fe = { 0 };
		if (!sw_query_read(&req->arena, req->query, none, unused, &fe)) {
			sw_http_validation_error(req, &fe);
			return;
		}
	}
	if (!req->route->max_body && req->body.len && !bodiless_body_ok(req))
		return;
	req->route->handler(req);
}
