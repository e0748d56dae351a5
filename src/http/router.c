/* The route table matcher.
 *
 * Patterns are split into segments once at start-up. Matching compares the
 * request path segment by segment against each route; the table is small
 * (tens of routes) and a linear scan over pre-split segments beats anything
 * cleverer at this size. There is no catch-all in the API: a path matches
 * a pattern only with the same number of segments, each literal equal or a
 * :param with a non-empty value. The one exception is a last segment "*",
 * which matches whatever follows, nothing included: the dashboard's
 * deep links under /app (src/api/ui.c), never an API route. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/http/http.h"

struct compiled {
	const struct sw_route *route;
	unsigned nseg;  /* without a final "*" */
	bool rest;      /* the pattern ends in "*": any further segments match */
	struct sw_str seg[SW_ROUTE_MAX_SEGMENTS]; /* ":name" for params */
};

struct sw_router {
	size_t count;
	struct compiled *routes;
};

const char *sw_access_name(enum sw_access a)
{
	switch (a) {
	case SW_ACCESS_PUBLIC: return "Public";
	case SW_ACCESS_SESSION: return "Session";
	case SW_ACCESS_OWNER: return "Owner";
	case SW_ACCESS_OWNER_ADMIN: return "Owner/Admin";
	case SW_ACCESS_OPERATOR: return "Operator";
	}
	return "Unknown";
}

/* Splits "/a/b" into segments; false if not absolute, empty segment, or too many. */
static bool split(struct sw_str path, struct sw_str *seg, unsigned *ret_n)
{
	if (path.len == 0 || path.ptr[0] != '/')
		return false;
	unsigned n = 0;
	if (path.len == 1) {
		*ret_n = 0;
		return true;
	}
	size_t i = 1;
	while (i <= path.len) {
		size_t start = i;
		while (i < path.len && path.ptr[i] != '/')
			i++;
		if (i == start || n == SW_ROUTE_MAX_SEGMENTS)
			return false;
		seg[n++] = sw_str_from(path.ptr + start, i - start);
		i++;
	}
	*ret_n = n;
	return true;
}

static bool flags_fit(unsigned flags, const struct sw_config *config)
{
	if ((flags & SW_ROUTE_SIGNUP) && !(config && config->signup_enabled))
		return false;
	if ((flags & SW_ROUTE_DEV_ONLY) && !(config && config->env != SW_ENV_PRODUCTION))
		return false;
	return true;
}

static bool same_shape(const struct compiled *a, const struct compiled *b)
{
	if (a->nseg != b->nseg || a->rest != b->rest)
		return false;
	for (unsigned i = 0; i < a->nseg; i++) {
		bool pa = a->seg[i].ptr[0] == ':', pb = b->seg[i].ptr[0] == ':';
		if (pa != pb || (!pa && !sw_str_eq(a->seg[i], b->seg[i])))
			return false;
	}
	return true;
}

struct sw_router *sw_router_new(const struct sw_route *routes, size_t n,
				const struct sw_config *config)
{
	struct sw_router *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->routes = calloc(n ? n : 1, sizeof(*r->routes));
	if (!r->routes)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (!flags_fit(routes[i].flags, config))
			continue;
		struct compiled *c = &r->routes[r->count];
		c->route = &routes[i];
		if (routes[i].method >= SW_HTTP_METHOD_OTHER || routes[i].method == SW_HTTP_HEAD ||
		    routes[i].method == SW_HTTP_OPTIONS ||
		    !split(sw_str_cstr(routes[i].pattern), c->seg, &c->nseg))
			goto fail_inval;
		if (c->nseg && sw_str_eq(c->seg[c->nseg - 1], SW_STR("*"))) {
			c->rest = true;
			c->nseg--;
		}
		for (unsigned s = 0; s < c->nseg; s++)
			if ((c->seg[s].ptr[0] == ':' && c->seg[s].len < 2) ||
			    memchr(c->seg[s].ptr, '*', c->seg[s].len))
				goto fail_inval; /* "*" only as the whole last segment */
		/* Two routes with the same method and shape would shadow each other. */
		for (size_t j = 0; j < r->count; j++)
			if (r->routes[j].route->method == routes[i].method && same_shape(&r->routes[j], c))
				goto fail_inval;
		r->count++;
	}
	return r;
fail_inval:
	errno = EINVAL;
fail:
	sw_router_free(r);
	return NULL;
}

void sw_router_free(struct sw_router *r)
{
	if (!r)
		return;
	free(r->routes);
	free(r);
}

size_t sw_router_count(const struct sw_router *r)
{
	return r->count;
}

const struct sw_route *sw_router_route(const struct sw_router *r, size_t i)
{
	return i < r->count ? r->routes[i].route : NULL;
}

static bool match_one(const struct compiled *c, const struct sw_str *seg, unsigned nseg,
		      struct sw_route_params *params)
{
	if (c->rest ? nseg < c->nseg : nseg != c->nseg)
		return false;
	unsigned np = 0;
	for (unsigned i = 0; i < c->nseg; i++) {
		if (c->seg[i].ptr[0] == ':') {
			if (params && np < SW_ROUTE_MAX_PARAMS) {
				params->name[np] = sw_str_from(c->seg[i].ptr + 1, c->seg[i].len - 1);
				params->value[np] = seg[i];
			}
			np++;
		} else if (!sw_str_eq(c->seg[i], seg[i])) {
			return false;
		}
	}
	if (params)
		params->count = SW_MIN(np, SW_ROUTE_MAX_PARAMS);
	return true;
}

static unsigned allowed_mask(const struct sw_router *r, const struct sw_str *seg, unsigned nseg)
{
	unsigned mask = 0;
	for (size_t i = 0; i < r->count; i++)
		if (match_one(&r->routes[i], seg, nseg, NULL))
			mask |= 1u << r->routes[i].route->method;
	if (mask & (1u << SW_HTTP_GET))
		mask |= 1u << SW_HTTP_HEAD;
	if (mask)
		mask |= 1u << SW_HTTP_OPTIONS;
	return mask;
}

enum sw_route_match sw_router_match(const struct sw_router *r, enum sw_http_method method,
				    struct sw_str path, const struct sw_route **ret_route,
				    struct sw_route_params *ret_params, unsigned *ret_allowed)
{
	struct sw_str seg[SW_ROUTE_MAX_SEGMENTS];
	unsigned nseg;
	if (!split(path, seg, &nseg))
		return SW_ROUTE_NOT_FOUND;
	enum sw_http_method want = method == SW_HTTP_HEAD ? SW_HTTP_GET : method;
	for (size_t i = 0; i < r->count; i++) {
		if (r->routes[i].route->method != want)
			continue;
		if (match_one(&r->routes[i], seg, nseg, ret_params)) {
			*ret_route = r->routes[i].route;
			return SW_ROUTE_FOUND;
		}
	}
	unsigned mask = allowed_mask(r, seg, nseg);
	if (!mask)
		return SW_ROUTE_NOT_FOUND;
	if (ret_allowed)
		*ret_allowed = mask;
	return SW_ROUTE_METHOD_NOT_ALLOWED;
}

unsigned sw_router_allowed(const struct sw_router *r, struct sw_str path)
{
	struct sw_str seg[SW_ROUTE_MAX_SEGMENTS];
	unsigned nseg;
	if (!split(path, seg, &nseg))
		return 0;
	return allowed_mask(r, seg, nseg);
}

int sw_http_append_allow(struct sw_buf *b, unsigned mask)
{
	bool first = true;
	for (int m = 0; m < SW_HTTP_METHOD_OTHER; m++) {
		if (!(mask & (1u << m)))
			continue;
		if (!first) {
			int r = sw_buf_append_lit(b, ", ");
			if (r < 0)
				return r;
		}
		int r = sw_buf_append_str(b, sw_str_cstr(sw_http_method_name((enum sw_http_method)m)));
		if (r < 0)
			return r;
		first = false;
	}
	return 0;
}
