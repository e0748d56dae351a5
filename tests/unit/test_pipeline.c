/* The pipeline's pure pieces (src/deploy/pipeline_internal.h): runtime
 * names, scrubbing of error messages, the free port, and the health gate
 * against a small HTTP server on loopback. The container engine is made
 * unreachable (DOCKER_HOST names a socket that does not exist), so the
 * gate's look at the container says "unknown" and the gate goes on. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "deploy/pipeline_internal.h"
#include "test_help.h"

#define APP "0123abcd-4567-89ef-0123-456789abcdef"

TEST(container_names_are_sw_12_hex_number_and_colour)
{
	char n[SW_PL_NAME_MAX];
	sw_pl_container_name(n, APP, 7, NULL);
	CHECK_STR_EQ(n, "sw-0123abcd4567-7");
	sw_pl_container_name(n, APP, 12, "green");
	CHECK_STR_EQ(n, "sw-0123abcd4567-12-green");
	char tag[SW_DRIVER_TAG_MAX];
	sw_pl_image_tag(tag, APP, 3);
	CHECK_STR_EQ(tag, "steward/" APP ":3");
	char vol[128];
	sw_pl_volume_name(vol, sizeof(vol), APP, "data");
	CHECK_STR_EQ(vol, "sw-" APP "-data");
}

TEST(container_numbers_are_read_from_the_application_s_names_only)
{
	CHECK_INT_EQ(sw_pl_container_number("sw-0123abcd4567-7", APP), 7);
	CHECK_INT_EQ(sw_pl_container_number("/sw-0123abcd4567-12-blue", APP), 12);
	CHECK_INT_EQ(sw_pl_container_number("sw-0123abcd4568-7", APP), -1);
	CHECK_INT_EQ(sw_pl_container_number("sw-0123abcd4567-", APP), -1);
	CHECK_INT_EQ(sw_pl_container_number("sw-0123abcd4567-0", APP), -1);
	CHECK_INT_EQ(sw_pl_container_number("sw-0123abcd4567-7x", APP), -1);
	CHECK_INT_EQ(sw_pl_container_number("sw-svc-0123abcd4567", APP), -1);
}

static void with_secrets(struct sw_pl *p, const char **secrets, size_t n)
{
	memset(p, 0, sizeof(*p));
	p->secrets = secrets;
	p->nsecrets = n;
}

TEST(scrub_replaces_every_value_of_4_bytes_or_more_within_the_buffer)
{
	struct sw_pl p;
	const char *secrets[] = { "hunter2", "abcd", "ab" };
	with_secrets(&p, secrets, 3);
	char s[64] = "pw hunter2 and hunter2hunter2; abcd-abcd";
	sw_pl_scrub(&p, s, sizeof(s));
	CHECK_STR_EQ(s, "pw *** and ******; ***-***");
	/* Shorter than SW_VARIABLE_SCRUB_MIN_LEN: not masked, or every "ab"
	 * in a message would be. */
	char shorter[16] = "ab-ab";
	sw_pl_scrub(&p, shorter, sizeof(shorter));
	CHECK_STR_EQ(shorter, "ab-ab");
	/* The result is cut to fit, never leaving a piece of a value. */
	char cut[6] = "abcdx";
	sw_pl_scrub(&p, cut, sizeof(cut));
	CHECK_STR_EQ(cut, "***x");
	char none[16] = "nothing here";
	sw_pl_scrub(&p, none, sizeof(none));
	CHECK_STR_EQ(none, "nothing here");
}

TEST(free_port_can_be_bound)
{
	unsigned port = 0;
	char e[128];
	REQUIRE(sw_driver_free_port(NULL, &port, e, sizeof(e)) == 0);
	CHECK(port > 0 && port < 65536);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	close(fd);
}

/* ---- the health gate ---- */

struct server {
	int fd;
	unsigned port;
	pthread_t thread;
};

/* Answers GET /ok with 200, anything else with 500, one request per
 * connection. */
static void *serve(void *arg)
{
	struct server *s = arg;
	for (;;) {
		int c = accept(s->fd, NULL, NULL);
		if (c < 0)
			return NULL;
		char buf[512];
		ssize_t n = recv(c, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		const char *answer = strncmp(buf, "GET /ok ", 8) == 0
					     ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
					     : "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n";
		if (send(c, answer, strlen(answer), MSG_NOSIGNAL) < 0)
			perror("send");
		close(c);
	}
}

static void server_start(struct server *s)
{
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->fd, 16) < 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	s->port = ntohs(a.sin_port);
	pthread_create(&s->thread, NULL, serve, s);
}

static struct sw_deploy_settings settings = { .data_dir = "/nonexistent" };

static void gate_job(struct sw_job *job, volatile bool *stop, struct sw_pl *p)
{
	memset(job, 0, sizeof(*job));
	snprintf(job->kind, sizeof(job->kind), "deployment.deploy");
	job->stop = stop;
	sw_pl_init(p, job, &settings);
}

TEST(health_gate_passes_on_the_expected_status)
{
	static struct server s;
	if (!s.port)
		server_start(&s);
	struct sw_job job;
	volatile bool stop = false;
	struct sw_pl p;
	gate_job(&job, &stop, &p);
	char err[256] = "";
	CHECK_INT_EQ(sw_pl_health_gate(&p, s.port, "/ok", 200, 2, 3, APP, "sw-x-1", err, sizeof(err)), 0);
	sw_pl_release(&p);
}

TEST(health_gate_fails_after_its_tries_with_the_last_answer)
{
	static struct server s;
	if (!s.port)
		server_start(&s);
	struct sw_job job;
	volatile bool stop = false;
	struct sw_pl p;
	gate_job(&job, &stop, &p);
	char err[256] = "", want[256];
	CHECK_INT_EQ(sw_pl_health_gate(&p, s.port, "/bad", 200, 2, 2, APP, "sw-x-1", err, sizeof(err)),
		     -ETIMEDOUT);
	snprintf(want, sizeof(want), "The new version did not pass the health check: GET /bad on port %u "
		 "answered 500 (expected 200) after 2 tries.", s.port);
	CHECK_STR_EQ(err, want);
	sw_pl_release(&p);
}

TEST(health_gate_says_a_refused_connection_and_stops_when_asked)
{
	unsigned port;
	char e[128];
	REQUIRE(sw_driver_free_port(NULL, &port, e, sizeof(e)) == 0);
	struct sw_job job;
	volatile bool stop = false;
	struct sw_pl p;
	gate_job(&job, &stop, &p);
	char err[256] = "";
	CHECK_INT_EQ(sw_pl_health_gate(&p, port, "/", 200, 1, 1, APP, "sw-x-1", err, sizeof(err)), -ETIMEDOUT);
	CHECK(strstr(err, "the connection was refused (expected 200) after 1 tries") != NULL);
	stop = true;
	CHECK_INT_EQ(sw_pl_health_gate(&p, port, "/", 200, 1, 5, APP, "sw-x-1", err, sizeof(err)), -ECANCELED);
	sw_pl_release(&p);
}

__attribute__((constructor)) static void no_engine(void)
{
	setenv("DOCKER_HOST", "unix:///nonexistent/steward-test-docker.sock", 1);
}

TEST_MAIN()
