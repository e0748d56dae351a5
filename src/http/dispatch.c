/* What a complete request meets before its handler: OPTIONS (with the
 * CORS preflight), 404 and 405 from the route table, the guard, and the
 * query-string rule. The state machine reaches it through srv->dispatch. */
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
	req->route->handler(req);
}
