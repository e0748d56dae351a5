/* The agent's executor (src/driver/agent_exec.c) without a real engine or
 * Caddy: what it refuses before any call, the error codes of what a dead
 * peer answers, the kinds it announces, and the errno of each code the
 * remote driver reads back. The real engine, Caddy and agent:
 * tests/integration/remote_agent.test.mjs. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
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
	/* container.logs, with follow (protocol 2) or not: its lines need
	 * the command's output stream. */
	o = run(CMD("container.logs", "{\"name\":\"web\",\"follow\":true}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the command has no output stream");
	o = run(CMD("container.logs", "{\"name\":\"web\",\"tail\":5,\"sinceUs\":1}"));
	CHECK_STR_EQ(o.error_code, "INVALID_ARGUMENT");
	CHECK_STR_EQ(o.error_message, "the command has no output stream");
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

/* A listener on 127.0.0.1 (its port into *port): answer is what a child
 * process writes to the one connection it accepts (NULL: it accepts and
 * writes nothing until the parent is done). The child's pid into *pid. */
static int listener(const char *answer, unsigned *port, pid_t *pid)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	*port = ntohs(a.sin_port);
	if ((*pid = fork()) == 0) {
		int c = accept(fd, NULL, NULL);
		char req[1024];
		ssize_t n = recv(c, req, sizeof(req), 0); /* the request, whole: it is small */
		if (answer && n > 0 && strncmp(req, "GET /healthz HTTP/1.1\r\n", 23) == 0 &&
		    write(c, answer, strlen(answer)) < 0)
			_exit(1);
		if (!answer)
			pause();
		_exit(0);
	}
	return fd;
}

static struct sw_agent_outcome probe(unsigned port, unsigned timeout_s)
{
	char text[256];
	snprintf(text, sizeof(text),
		 CMD("container.probe", "{\"port\":%u,\"path\":\"/healthz\",\"timeoutS\":%u}"), port,
		 timeout_s);
	return run(text);
}

TEST(a_probe_answers_the_status_or_names_why_there_is_none)
{
	unsigned port;
	pid_t pid;
	int fd = listener("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", &port, &pid);
	struct sw_agent_outcome o = probe(port, 5);
	REQUIRE(o.ok);
	CHECK_INT_EQ(json_integer_value(json_object_get(o.result, "status")), 503);
	CHECK(json_is_integer(json_object_get(o.result, "elapsedMs")));
	json_decref(o.result);
	waitpid(pid, NULL, 0);
	close(fd);

	fd = listener("SSH-2.0-OpenSSH_9.2\r\n", &port, &pid);
	o = probe(port, 5);
	CHECK(!o.ok);
	CHECK_STR_EQ(o.error_code, "NOT_HTTP");
	CHECK_STR_EQ(o.error_message, "the answer was not HTTP");
	waitpid(pid, NULL, 0);
	close(fd);

	/* Silent: the timeout ends the try. */
	fd = listener(NULL, &port, &pid);
	o = probe(port, 1);
	CHECK(!o.ok);
	CHECK_STR_EQ(o.error_code, "TIMED_OUT");
	CHECK_STR_EQ(o.error_message, "no answer within the timeout");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd); /* now nothing listens on port */

	o = probe(port, 5);
	CHECK(!o.ok);
	CHECK_STR_EQ(o.error_code, "UNREACHABLE");
	CHECK_STR_EQ(o.error_message, "the connection was refused");
	CHECK_INT_EQ(sw_driver_error_errno(o.error_code), -ECONNREFUSED);
	CHECK_INT_EQ(sw_driver_error_errno("NOT_HTTP"), -EPROTO);
	CHECK_INT_EQ(sw_driver_error_errno("CONNECTION_RESET"), -ECONNRESET);
}

TEST(the_driver_refuses_a_probe_outside_its_bounds)
{
	setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
	struct sw_driver *d = sw_driver_local_new();
	REQUIRE(d);
	char err[256];
	int status = 0;
	struct sw_http_probe q = { .host = "10.0.0.1", .port = 80, .path = "/", .timeout_s = 1 };
	CHECK_INT_EQ(sw_driver_http_probe(d, &q, &status, NULL, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "host") != NULL);
	q = (struct sw_http_probe){ .port = 80, .path = "//x", .timeout_s = 1 };
	CHECK_INT_EQ(sw_driver_http_probe(d, &q, &status, NULL, err, sizeof(err)), -EINVAL);
	q = (struct sw_http_probe){ .port = 0, .path = "/", .timeout_s = 1 };
	CHECK_INT_EQ(sw_driver_http_probe(d, &q, &status, NULL, err, sizeof(err)), -EINVAL);
	sw_driver_free(d);
}

TEST(port_free_is_a_port_the_agent_bound_on_its_loopback)
{
	struct sw_agent_outcome o = run(CMD("port.free", "{}"));
	REQUIRE(o.ok);
	json_int_t port = json_integer_value(json_object_get(o.result, "port"));
	json_decref(o.result);
	CHECK(port > 0 && port < 65536);
	/* Free: this process binds it now. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	close(fd);
}

TEST(kinds_and_codes)
{
	uint32_t k = sw_driver_agent_kinds();
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_STOP));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_VOLUME_LIST));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_IMAGE_BUILD));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_INSPECT));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_PROBE));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_CONTAINER_LOGS));
	CHECK(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_PORT_FREE));
	CHECK(!(k & SW_AGENT_KIND_BIT(SW_AGENT_CMD_HOST_FACTS))); /* the agent's main runs it */
	static const int errs[] = { ENOENT, EEXIST, EBUSY, EINVAL, ECONNREFUSED, ETIMEDOUT, EFBIG, ECANCELED };
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		CHECK_INT_EQ(sw_driver_error_errno(sw_driver_error_code(-errs[i])), -errs[i]);
	CHECK_STR_EQ(sw_driver_error_code(-EIO), "FAILED");
	CHECK_INT_EQ(sw_driver_error_errno("EXPIRED"), -ETIMEDOUT);
	CHECK_INT_EQ(sw_driver_error_errno("SOMETHING_ELSE"), -EIO);
}
