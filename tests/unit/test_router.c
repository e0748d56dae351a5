/* Router: matching, params, 405 masks, HEAD, config-dependent routes. */
#include "steward/http/http.h"
#include "test_help.h"

static void h(struct sw_http_request *req)
{
	(void)req;
}

static const struct sw_route table[] = {
	{ SW_HTTP_GET, "/health", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	{ SW_HTTP_GET, "/projects", SW_ACCESS_SESSION, h, 0, 0, { 0 } },
	{ SW_HTTP_POST, "/projects", SW_ACCESS_SESSION, h, 1024, 0, { 0 } },
	{ SW_HTTP_GET, "/projects/:id/environments", SW_ACCESS_SESSION, h, 0, 0, { 0 } },
	{ SW_HTTP_DELETE, "/projects/:id", SW_ACCESS_OWNER, h, 0, 0, { 0 } },
	{ SW_HTTP_POST, "/signup", SW_ACCESS_PUBLIC, h, 1024, SW_ROUTE_SIGNUP, { 0 } },
	{ SW_HTTP_GET, "/docs", SW_ACCESS_PUBLIC, h, 0, SW_ROUTE_DEV_ONLY, { 0 } },
};

static struct sw_router *make(bool signup, enum sw_env env)
{
	struct sw_config c = { .signup_enabled = signup, .env = env };
	return sw_router_new(table, SW_ARRAY_SIZE(table), &c);
}

TEST(exact_path_matches)
{
	struct sw_router *r = make(false, SW_ENV_PRODUCTION);
	REQUIRE(r);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/health"), &route, &p, NULL), SW_ROUTE_FOUND);
	CHECK(route == &table[0]);
	sw_router_free(r);
}

TEST(params_are_captured)
{
	struct sw_router *r = make(false, SW_ENV_PRODUCTION);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	REQUIRE(sw_router_match(r, SW_HTTP_GET, SW_STR("/projects/abc-1/environments"), &route, &p, NULL) == SW_ROUTE_FOUND);
	CHECK(route == &table[3]);
	CHECK_INT_EQ(p.count, 1);
	CHECK(sw_str_eq(p.name[0], SW_STR("id")));
	CHECK(sw_str_eq(p.value[0], SW_STR("abc-1")));
	sw_router_free(r);
}

TEST(unknown_path_is_not_found)
{
	struct sw_router *r = make(false, SW_ENV_PRODUCTION);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/nope"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/health/"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("//health"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/projects//environments"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/projects/x/environments/y"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR(""), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	sw_router_free(r);
}

TEST(wrong_method_is_405_with_allowed_methods)
{
	struct sw_router *r = make(false, SW_ENV_PRODUCTION);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	unsigned allowed = 0;
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_PUT, SW_STR("/projects"), &route, &p, &allowed), SW_ROUTE_METHOD_NOT_ALLOWED);
	CHECK(allowed & (1u << SW_HTTP_GET));
	CHECK(allowed & (1u << SW_HTTP_POST));
	CHECK(allowed & (1u << SW_HTTP_HEAD));
	CHECK(allowed & (1u << SW_HTTP_OPTIONS));
	CHECK(!(allowed & (1u << SW_HTTP_PUT)));
	struct sw_buf b = { 0 };
	sw_http_append_allow(&b, allowed);
	CHECK(b.len == strlen("GET, HEAD, POST, OPTIONS") && memcmp(b.data, "GET, HEAD, POST, OPTIONS", b.len) == 0);
	sw_buf_release(&b);
	sw_router_free(r);
}

TEST(head_matches_get_routes)
{
	struct sw_router *r = make(false, SW_ENV_PRODUCTION);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_HEAD, SW_STR("/health"), &route, &p, NULL), SW_ROUTE_FOUND);
	CHECK(route == &table[0]);
	sw_router_free(r);
}

TEST(signup_route_exists_only_when_enabled)
{
	struct sw_router *off = make(false, SW_ENV_PRODUCTION);
	struct sw_router *on = make(true, SW_ENV_PRODUCTION);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	unsigned allowed = 0;
	CHECK_INT_EQ(sw_router_match(off, SW_HTTP_POST, SW_STR("/signup"), &route, &p, &allowed), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_allowed(off, SW_STR("/signup")), 0);
	CHECK_INT_EQ(sw_router_match(on, SW_HTTP_POST, SW_STR("/signup"), &route, &p, &allowed), SW_ROUTE_FOUND);
	sw_router_free(off);
	sw_router_free(on);
}

TEST(docs_route_exists_only_outside_production)
{
	struct sw_router *prod = make(false, SW_ENV_PRODUCTION);
	struct sw_router *test = make(false, SW_ENV_TEST);
	struct sw_router *dev = make(false, SW_ENV_DEVELOPMENT);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	CHECK_INT_EQ(sw_router_match(prod, SW_HTTP_GET, SW_STR("/docs"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(test, SW_HTTP_GET, SW_STR("/docs"), &route, &p, NULL), SW_ROUTE_FOUND);
	CHECK_INT_EQ(sw_router_match(dev, SW_HTTP_GET, SW_STR("/docs"), &route, &p, NULL), SW_ROUTE_FOUND);
	sw_router_free(prod);
	sw_router_free(test);
	sw_router_free(dev);
}

TEST(duplicate_shapes_are_refused)
{
	static const struct sw_route dup[] = {
		{ SW_HTTP_GET, "/a/:id", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
		{ SW_HTTP_GET, "/a/:name", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	};
	CHECK(sw_router_new(dup, 2, NULL) == NULL);
	static const struct sw_route bad[] = {
		{ SW_HTTP_GET, "a", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	};
	CHECK(sw_router_new(bad, 1, NULL) == NULL);
	static const struct sw_route empty_param[] = {
		{ SW_HTTP_GET, "/a/:", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	};
	CHECK(sw_router_new(empty_param, 1, NULL) == NULL);
}

/* The dashboard's deep links: a last segment "*" matches the prefix and
 * anything below it, and only that; "*" anywhere else is refused. */
TEST(a_final_star_matches_the_prefix_and_below)
{
	static const struct sw_route ui[] = {
		{ SW_HTTP_GET, "/", SW_ACCESS_PUBLIC, h, 0, SW_ROUTE_DASHBOARD, { 0 } },
		{ SW_HTTP_GET, "/app/*", SW_ACCESS_PUBLIC, h, 0, SW_ROUTE_DASHBOARD, { 0 } },
		{ SW_HTTP_GET, "/applications/:id", SW_ACCESS_SESSION, h, 0, 0, { 0 } },
	};
	struct sw_router *r = sw_router_new(ui, SW_ARRAY_SIZE(ui), NULL);
	REQUIRE(r);
	const struct sw_route *route = NULL;
	struct sw_route_params p;
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/"), &route, &p, NULL), SW_ROUTE_FOUND);
	CHECK(route == &ui[0]);
	const char *deep[] = { "/app", "/app/applications", "/app/deployments/x/y/z" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(deep); i++) {
		route = NULL;
		CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, sw_str_cstr(deep[i]), &route, &p, NULL), SW_ROUTE_FOUND);
		CHECK(route == &ui[1]);
	}
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/applications/abc"), &route, &p, NULL), SW_ROUTE_FOUND);
	CHECK(route == &ui[2]);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/applications"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/apps"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_GET, SW_STR("/app/"), &route, &p, NULL), SW_ROUTE_NOT_FOUND);
	CHECK_INT_EQ(sw_router_match(r, SW_HTTP_POST, SW_STR("/app/x"), &route, &p, NULL),
		     SW_ROUTE_METHOD_NOT_ALLOWED);
	sw_router_free(r);
	static const struct sw_route inner[] = {
		{ SW_HTTP_GET, "/a/*/b", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	};
	CHECK(sw_router_new(inner, 1, NULL) == NULL);
	static const struct sw_route partial[] = {
		{ SW_HTTP_GET, "/a/b*", SW_ACCESS_PUBLIC, h, 0, 0, { 0 } },
	};
	CHECK(sw_router_new(partial, 1, NULL) == NULL);
}

TEST_MAIN()
