/* The route table and its OpenAPI document: every route is documented
 * (summary, description, tag, success status, error statuses, the schemas
 * it names defined), the document built from a router holding every route
 * lists each route once under its path and method with its access level,
 * and nothing else. The served document is checked further by
 * tests/integration/openapi.test.mjs (a real OpenAPI 3.1 validator). */
#include <jansson.h>
#include <stdio.h>
#include "steward/api/api.h"
#include "steward/base/config.h"
#include "api/api_internal.h"
#include "test_help.h"

/* "/projects/:id/environments" -> "/projects/{id}/environments". */
static void doc_path(const char *pattern, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *p = pattern; *p && o + 2 < cap;) {
		if (*p == ':') {
			out[o++] = '{';
			for (p++; *p && *p != '/' && o + 2 < cap; p++)
				out[o++] = *p;
			out[o++] = '}';
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
}

static void lower(const char *s, char *out, size_t cap)
{
	size_t i = 0;
	for (; s[i] && i + 1 < cap; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	out[i] = '\0';
}

static bool nonempty(const char *s)
{
	return s && *s;
}

/* A router with every route (signup on, a test environment), and the
 * document built from it; NULL when the build failed. */
static json_t *build_doc(struct sw_router **ret_router)
{
	size_t n = 0;
	const struct sw_route *routes = sw_api_routes(&n);
	struct sw_config c = { .signup_enabled = true, .env = SW_ENV_TEST };
	*ret_router = sw_router_new(routes, n, &c);
	if (!*ret_router)
		return NULL;
	char err[256] = "";
	if (sw_api_docs_build(*ret_router, err, sizeof(err)) < 0) {
		fprintf(stderr, "  sw_api_docs_build: %s\n", err);
		return NULL;
	}
	struct sw_str s = sw_api_docs_json();
	json_error_t je;
	json_t *doc = json_loadb(s.ptr, s.len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		fprintf(stderr, "  the document does not parse: %s\n", je.text);
	return doc;
}

TEST(every_route_has_summary_description_tag_and_statuses)
{
	size_t n = 0;
	const struct sw_route *routes = sw_api_routes(&n);
	REQUIRE(routes && n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct sw_route *r = &routes[i];
		const struct sw_route_doc *d = &r->doc;
		const char *m = sw_http_method_name(r->method);
		int s = d->success_status;
		bool ok = nonempty(d->summary) && nonempty(d->description) && nonempty(d->tag) &&
			  (s == 200 || s == 201 || s == 202 || s == 204 || s == 101) && d->error_statuses;
		if (!ok)
			fprintf(stderr, "  %s %s: summary, description, tag, success status (%d) or "
				"error statuses missing\n", m, r->pattern, s);
		CHECK(ok);
		/* A body is documented exactly when the route accepts one. */
		if ((r->max_body > 0) != (d->request_schema != NULL)) {
			fprintf(stderr, "  %s %s: max_body %zu but request schema %s\n", m, r->pattern,
				r->max_body, d->request_schema ? d->request_schema : "(none)");
			CHECK(0);
		}
		/* 204 has no body, nor has 101 (the connection is another
		 * protocol's from then on: GET /agent/connect); any other success
		 * documents its data, or the media type of a body that is not
		 * the envelope (the document itself, GET /docs, is the one
		 * exception). */
		bool is_docs = strcmp(r->pattern, "/docs") == 0;
		bool bodiless = s == 204 || s == 101;
		CHECK(!(d->response_schema && d->media_type));
		if (bodiless == (d->response_schema != NULL || d->media_type != NULL) && !is_docs) {
			fprintf(stderr, "  %s %s: success %d with response schema %s\n", m, r->pattern, s,
				d->response_schema ? d->response_schema : "(none)");
			CHECK(0);
		}
		/* A page is documented as one: limit, cursor and order together. */
		if (d->query && strstr(d->query, "cursor")) {
			bool paged = strstr(d->query, "limit") && strstr(d->query, "order") &&
				     r->method == SW_HTTP_GET;
			if (!paged)
				fprintf(stderr, "  %s %s: query \"%s\" has cursor without limit and order\n",
					m, r->pattern, d->query);
			CHECK(paged);
		}
		/* An error status is an error, listed once. */
		for (const int *e = d->error_statuses; e && *e; e++) {
			CHECK(*e >= 400 && *e <= 599);
			for (const int *f = e + 1; *f; f++)
				if (*f == *e) {
					fprintf(stderr, "  %s %s: error status %d listed twice\n", m, r->pattern, *e);
					CHECK(0);
				}
		}
	}
}

TEST(every_schema_a_route_names_is_defined)
{
	/* The document's components: docs.c's own and every group's. */
	struct sw_router *router = NULL;
	json_t *doc = build_doc(&router);
	REQUIRE(router);
	REQUIRE(doc);
	json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
	REQUIRE(json_is_object(schemas));
	size_t n = 0;
	const struct sw_route *routes = sw_api_routes(&n);
	for (size_t i = 0; i < n; i++) {
		const char *names[2] = { routes[i].doc.request_schema, routes[i].doc.response_schema };
		for (size_t k = 0; k < 2; k++) {
			if (names[k] && !json_object_get(schemas, names[k])) {
				fprintf(stderr, "  %s %s names schema %s, which the document does not define\n",
					sw_http_method_name(routes[i].method), routes[i].pattern, names[k]);
				CHECK(0);
			}
		}
	}
	json_decref(doc);
	sw_api_docs_free();
	sw_router_free(router);
}

TEST(schema_groups_parse_and_never_repeat_a_name)
{
	json_t *seen = json_object();
	for (size_t g = 0; sw_api_schema_group(g); g++) {
		json_error_t je;
		json_t *more = json_loads(sw_api_schema_group(g), JSON_REJECT_DUPLICATES, &je);
		if (!more || !json_is_object(more)) {
			fprintf(stderr, "  schemas of group %zu do not parse: %s (line %d col %d)\n", g,
				je.text, je.line, je.column);
			CHECK(0);
			json_decref(more);
			continue;
		}
		const char *name;
		json_t *v;
		json_object_foreach(more, name, v) {
			if (json_object_get(seen, name)) {
				fprintf(stderr, "  schema %s is defined by two groups\n", name);
				CHECK(0);
			}
			json_object_set_new(seen, name, json_integer((json_int_t)g));
		}
		json_decref(more);
	}
	json_decref(seen);
}

TEST(document_lists_every_route_once_with_its_access)
{
	struct sw_router *router = NULL;
	json_t *doc = build_doc(&router);
	REQUIRE(router);
	REQUIRE(doc);
	json_t *paths = json_object_get(doc, "paths");
	REQUIRE(json_is_object(paths));
	size_t n = 0;
	const struct sw_route *routes = sw_api_routes(&n);
	CHECK_INT_EQ(sw_router_count(router), n);
	for (size_t i = 0; i < n; i++) {
		const struct sw_route *r = &routes[i];
		char path[256], method[16], opid[300];
		doc_path(r->pattern, path, sizeof(path));
		lower(sw_http_method_name(r->method), method, sizeof(method));
		json_t *op = json_object_get(json_object_get(paths, path), method);
		if (!op) {
			fprintf(stderr, "  %s %s is not in the document\n", method, path);
			CHECK(0);
			continue;
		}
		snprintf(opid, sizeof(opid), "%s %s", method, r->pattern);
		CHECK_STR_EQ(json_string_value(json_object_get(op, "operationId")), opid);
		CHECK_STR_EQ(json_string_value(json_object_get(op, "x-steward-access")),
			     sw_access_name(r->access));
		CHECK_STR_EQ(json_string_value(json_object_get(op, "summary")), r->doc.summary);
		char status[8];
		snprintf(status, sizeof(status), "%d", r->doc.success_status);
		if (!json_object_get(json_object_get(op, "responses"), status)) {
			fprintf(stderr, "  %s %s: success %s not among its responses\n", method, path, status);
			CHECK(0);
		}
	}
	/* And nothing else: as many operations as routes. */
	size_t ops = 0;
	const char *p;
	json_t *item;
	json_object_foreach(paths, p, item) {
		ops += json_object_size(item);
	}
	CHECK_INT_EQ(ops, n);
	json_decref(doc);
	sw_api_docs_free();
	sw_router_free(router);
}

TEST(router_accepts_the_whole_table)
{
	/* Duplicate or malformed patterns make sw_router_new() refuse; in
	 * production the dev-only and signup routes are left out. */
	size_t n = 0;
	const struct sw_route *routes = sw_api_routes(&n);
	struct sw_config prod = { .signup_enabled = false, .env = SW_ENV_PRODUCTION };
	struct sw_router *r = sw_router_new(routes, n, &prod);
	REQUIRE(r);
	size_t optional = 0;
	for (size_t i = 0; i < n; i++)
		optional += (routes[i].flags & (SW_ROUTE_SIGNUP | SW_ROUTE_DEV_ONLY)) != 0;
	CHECK_INT_EQ(sw_router_count(r), n - optional);
	sw_router_free(r);
}

TEST_MAIN()
