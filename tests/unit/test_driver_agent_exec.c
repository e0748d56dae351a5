/* The agent's executor (src/driver/agent_exec.c) without a real engine or
 * Caddy: what it refuses before any call, the error codes of what a dead
 * peer answers, the kinds it announces, and the errno of each code the
 * remote driver reads back. The real engine, Caddy and agent:
 * tests/integration/remote_agent.test.mjs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/agent/protocol.h"
#include "steward/driver/remote.h"
#include "test_help.h"

TEST_MAIN()

/* Runs the command text through a driver whose engine and Caddy are
 * nowhere. */
static struct sw_agent_outcome run(const char *text)
{
	setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
	setenv("CADDY_ADMIN_URL", "http://127.0.0.1:1", 1);
	struct sw_driver *d = sw_driver_local_new();
	struct sw_agent_msg m;
	char err[256];
	struct sw_agent_outcome out = { 0 };
	if (!d || sw_agent_msg_decode(text, strlen(text), &m, err, sizeof(err)) != 0)
		abort();
	sw_driver_agent_exec(d, &m, &out);
	sw_agent_msg_release(&m);
	sw_driver_free(d);
	return out;
}

#define CMD(kind, payload) \
	"{\"type\":\"command\",\"id\":\"c-1\",\"kind\":\"" kind "\",\"expiresAt\":1800000000000,\"payload\":" payload "}"

TEST(refusals_before_any_call)
{
	struct sw_agent_outcome o = run(CMD("caddy.route.set", "{\"routeId\":\"other-route\",\"route\":{}}"));
	CHECK(!o.ok);
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the route id is not an application's");
	o = run(CMD("caddy.route.set", "{\"routeId\":\"steward-app-a1\",\"route\":{\"hosts\":[\"a.example\"]}}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	o = run(CMD("container.create", "{\"name\":\"a\",\"image\":\"b\",\"spec\":{\"env\":[1]}}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the container's spec is not valid");
	o = run(CMD("volume.list", "{}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	o = run(CMD("container.file", "{\"name\":\"c\",\"dir\":\"/data\",\"file\":\"f\",\"data\":\"abc\",\"mode\":384}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the file's data is not base64");
	o = run(CMD("metrics.sample", "{}"));
	CHECK_STR_EQ(o.error_code, "NOT_AVAILABLE");
	/* A build whose context the loop did not stage (no input stream). */
	o = run(CMD("image.build", "{\"tag\":\"t\",\"contextBytes\":1,\"contextSha256\":\"00\"}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the build has no staged context");
}

TEST(a_dead_engine_is_unreachable_with_the_drivers_sentence)
{
	struct sw_agent_outcome o = run(CMD("container.start", "{\"name\":\"web\"}"));
	CHECK(!o.ok);
	CHECK_STR_EQ(o.error_code, "UNREACHABLE");
	CHECK(strstr(o.error_message, "/nonexistent/docker.sock") != NULL);
	o = run(CMD("container.inspect", "{\"name\":\"web\"}"));
	CHECK_STR_EQ(o.error_code, "UNREACHABLE");
	o = run(CMD("image.exists", "{\"image\":\"steward/x:1\"}"));
	CHECK(o.ok); /* false, as the local driver says when it cannot tell */
	CHECK(json_is_false(json_object_get(o.result, "exists")));
	json_decref(o.result);
}

TEST(kinds_and_codes)
{
	uint32_t k = sw_driver_agent_kinds();
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_STOP));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_VOLUME_LIST));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_IMAGE_BUILD));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_INSPECT));
	CHECK(!(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_HOST_FACTS))); /* the agent's main runs it */
	static const int errs[] = { ENOENT, EEXIST, EBUSY, EINVAL, ECONNREFUSED, ETIMEDOUT, EFBIG, ECANCELED };
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		CHECK_INT_EQ(sw_driver_error_errno(sw_driver_error_code(-errs[i])), -errs[i]);
	CHECK_STR_EQ(sw_driver_error_code(-EIO), "FAILED");
	CHECK_INT_EQ(sw_driver_error_errno("EXPIRED"), -ETIMEDOUT);
	CHECK_INT_EQ(sw_driver_error_errno("SOMETHING_ELSE"), -EIO);
}
