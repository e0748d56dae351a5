/* The driver's ingress on a Caddy that serves HTTPS with its internal
 * issuer: the route is set, and proxy_state reports automatic HTTPS, the
 * automation policy and the internal CA. Run by
 * tests/integration/driver.test.mjs with SW_TEST_DRIVER_TLS=1,
 * CADDY_ADMIN_URL, CADDY_HTTP_LISTEN (Caddy's HTTPS port), SW_TEST_APP_ID,
 * SW_TEST_HOST and SW_TEST_UPSTREAM; the node side then sends an HTTPS
 * request through the route, verified against the internal CA's root. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include "steward/driver/driver.h"
#include "test_help.h"

static struct sw_driver *drv;

__attribute__((constructor(101))) static void need_caddy(void)
{
	if (!getenv("SW_TEST_DRIVER_TLS")) {
		printf("SKIP: needs Caddy with its internal issuer: run tests/integration/driver.test.mjs\n");
		exit(77);
	}
	if (!getenv("SW_TEST_APP_ID") || !getenv("SW_TEST_HOST") || !getenv("SW_TEST_UPSTREAM")) {
		printf("SW_TEST_APP_ID, SW_TEST_HOST and SW_TEST_UPSTREAM are needed\n");
		exit(1);
	}
	setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1); /* not used here */
	drv = sw_driver_local_new();
	if (!drv)
		exit(1);
}

TEST(route_set_on_an_https_listener)
{
	const char *hosts[] = { getenv("SW_TEST_HOST"), NULL };
	struct sw_ingress_route r = { .application_id = getenv("SW_TEST_APP_ID"), .hostnames = hosts,
				      .upstream = getenv("SW_TEST_UPSTREAM") };
	char err[512] = "";
	int rc = sw_driver_route_set(drv, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  route_set: %s\n", err);
	CHECK_INT_EQ(rc, 0);
}

TEST(proxy_state_reports_automatic_https_the_policy_and_the_internal_ca)
{
	char *text = NULL, err[512] = "";
	int rc = sw_driver_proxy_state(drv, &text, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  proxy_state: %s\n", err);
	REQUIRE(rc == 0);
	printf("proxy state: %s\n", text);
	json_t *doc = json_loads(text, 0, NULL);
	free(text);
	REQUIRE(doc);
	json_t *server = json_object_get(doc, "server");
	CHECK(json_is_true(json_object_get(server, "automaticHttps")));
	json_t *certs = json_object_get(doc, "certificates");
	REQUIRE(json_array_size(certs) == 1);
	json_t *policy = json_array_get(certs, 0);
	CHECK_INT_EQ(json_array_size(json_object_get(policy, "subjects")), 0);
	CHECK_STR_EQ(json_string_value(json_array_get(json_object_get(policy, "issuers"), 0)), "internal");
	CHECK(json_is_false(json_object_get(policy, "onDemand")));
	json_t *ca = json_object_get(doc, "internalCa");
	CHECK_STR_EQ(json_string_value(json_object_get(ca, "id")), "local");
	const char *root = json_string_value(json_object_get(ca, "rootCommonName"));
	CHECK(root && strstr(root, "Root") != NULL);
	json_t *routes = json_object_get(doc, "routes");
	CHECK_INT_EQ(json_array_size(routes), 1);
	CHECK_STR_EQ(json_string_value(json_object_get(json_array_get(routes, 0), "applicationId")),
		     getenv("SW_TEST_APP_ID"));
	json_decref(doc);
	sw_driver_free(drv);
}

TEST_MAIN()
