/* The local driver against a real Docker engine and a real Caddy.
 *
 * Run by tests/integration/driver.test.mjs, which starts (or finds) the
 * engine, imports the base image and starts Caddy with docker.mjs, then
 * runs this with:
 *   SW_TEST_DRIVER=1, DOCKER_HOST, CADDY_ADMIN_URL, CADDY_HTTP_LISTEN,
 *   SW_TEST_CADDY_HTTP_PORT (where Caddy serves the routes),
 *   SW_TEST_BASE_IMAGE, SW_TEST_APP_ID (a fresh application id: every
 *   container, image and route made here carries it; the node side
 *   removes them afterwards whatever happens here).
 * Alone (no SW_TEST_DRIVER) it exits 77. The cases run in order and
 * build on each other: image, containers, routes, removal, named volumes
 * (labelled, listed, busy while mounted, removed). */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "steward/base/base.h"
#include "steward/driver/driver.h"
#include "test_help.h"
#include "scratch_dir.h"

static struct sw_driver *drv;
static const char *app_id, *base_image;
static unsigned caddy_port;
static char ctx[64], tag[SW_DRIVER_TAG_MAX], host[96], name_blue[64], name_green[64];
static unsigned port_blue, port_green;
static char id_blue[SW_DRIVER_ID_MAX];

__attribute__((constructor(101))) static void need_engine_and_caddy(void)
{
	if (!getenv("SW_TEST_DRIVER")) {
		printf("SKIP: needs a Docker engine and Caddy: run tests/integration/driver.test.mjs\n");
		exit(77);
	}
	app_id = getenv("SW_TEST_APP_ID");
	base_image = getenv("SW_TEST_BASE_IMAGE");
	const char *p = getenv("SW_TEST_CADDY_HTTP_PORT");
	if (!app_id || !base_image || !p) {
		printf("SW_TEST_APP_ID, SW_TEST_BASE_IMAGE and SW_TEST_CADDY_HTTP_PORT are needed\n");
		exit(1);
	}
	caddy_port = (unsigned)atoi(p);
	drv = sw_driver_local_new();
	if (!drv) {
		printf("sw_driver_local_new: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(tag, sizeof(tag), "steward/%s:1", app_id);
	snprintf(host, sizeof(host), "app-%.8s.steward.test", app_id);
	snprintf(name_blue, sizeof(name_blue), "sw-%.12s-1-blue", app_id);
	snprintf(name_green, sizeof(name_green), "sw-%.12s-1-green", app_id);
}

/* ---- helpers ---- */


/* GET path from 127.0.0.1:port with Host h (HTTP/1.0, read to EOF): the
 * status, the body into body (cap bytes), or -1. */
static int http_get(unsigned port, const char *h, const char *path, char *body, size_t cap)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	body[0] = '\0';
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char req[512], resp[8192];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, h);
	size_t got = 0;
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	while (got + 1 < sizeof(resp) && poll(&pfd, 1, 5000) == 1) {
		ssize_t r = read(fd, resp + got, sizeof(resp) - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	resp[got] = '\0';
	int status;
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	const char *b = strstr(resp, "\r\n\r\n");
	snprintf(body, cap, "%s", b ? b + 4 : "");
	return status;
}

/* Polls until GET answers 200 with a body starting with want (10 s). */
static bool wait_body(unsigned port, const char *h, const char *path, const char *want)
{
	char body[1024];
	for (int i = 0; i < 100; i++) {
		if (http_get(port, h, path, body, sizeof(body)) == 200 && strncmp(body, want, strlen(want)) == 0)
			return true;
		usleep(100 * 1000);
	}
	fprintf(stderr, "  GET %s on %u (Host %s): last body \"%s\", wanted \"%s\"\n", path, port, h, body, want);
	return false;
}

static void put_file(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", ctx, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

struct log {
	char lines[512][160];
	size_t n;
	pthread_mutex_t lock;
};

static void collect(void *arg, const char *line, size_t len)
{
	struct log *l = arg;
	pthread_mutex_lock(&l->lock);
	if (l->n < 512)
		snprintf(l->lines[l->n++], 160, "%.*s", (int)SW_MIN(len, 159), line);
	pthread_mutex_unlock(&l->lock);
}

static bool log_has(struct log *l, const char *prefix)
{
	pthread_mutex_lock(&l->lock);
	bool found = false;
	for (size_t i = 0; i < l->n && !found; i++)
		found = strncmp(l->lines[i], prefix, strlen(prefix)) == 0;
	pthread_mutex_unlock(&l->lock);
	return found;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int build(const char *dockerfile, const char *t, uint64_t cap, const volatile bool *cancel,
		 struct log *l, char *err, size_t errlen)
{
	char label[96];
	snprintf(label, sizeof(label), "steward.application=%s", app_id);
	const char *labels[] = { label, "steward.managed=true", NULL };
	struct sw_image_build b = { .context_dir = ctx, .dockerfile = dockerfile, .tag = t, .labels = labels,
				    .cancel = cancel, .context_max_bytes = cap };
	return sw_driver_image_build(drv, &b, collect, l, err, errlen);
}

static struct log *new_log(void)
{
	struct log *l = calloc(1, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	return l;
}

static int create_colour(const char *name, const char *colour, unsigned port, char id[SW_DRIVER_ID_MAX],
			 char *err, size_t errlen)
{
	char c[32], app_label[96], project[64], colour_label[48];
	snprintf(c, sizeof(c), "COLOUR=%s", colour);
	snprintf(app_label, sizeof(app_label), "steward.application=%s", app_id);
	snprintf(project, sizeof(project), "com.docker.compose.project=drvtest-%s", colour);
	snprintf(colour_label, sizeof(colour_label), "steward.colour=%s", colour);
	const char *env[] = { c, "SECRET_TOKEN=not-in-any-answer", NULL };
	const char *labels[] = { app_label, project, "com.docker.compose.service=drvtest", colour_label,
				 "steward.managed=true", NULL };
	struct sw_container_spec s = { .name = name, .image = tag, .env = env, .labels = labels,
				       .memory_bytes = 64ull << 20, .nano_cpus = 500000000ull,
				       .port = port, .restart_unless_stopped = true };
	return sw_driver_container_create(drv, &s, id, err, errlen);
}

/* ---- images ---- */

TEST(build_streams_log_lines_and_tags_the_image)
{
	snprintf(ctx, sizeof(ctx), "/tmp/sw-drv-ctx-XXXXXX");
	REQUIRE(mkdtemp(ctx));
	char p[128];
	snprintf(p, sizeof(p), "%s/www", ctx);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/.git", ctx);
	mkdir(p, 0755);
	put_file(".git/config", "[core]\n");
	put_file("www/index.html", "hello from steward\n");
	put_file("secret.txt", "left out by .dockerignore\n");
	/* The Dockerfile is sent though listed (the build reads it); the
	 * engine then drops it from the context, as it does for Docker's CLI. */
	put_file(".dockerignore", "secret.txt\nDockerfile\n");
	char df[512];
	snprintf(df, sizeof(df),
		 "FROM %s\n"
		 "COPY www /www\n"
		 "COPY . /ctx\n"
		 "RUN test ! -e /ctx/.git && test ! -e /ctx/secret.txt && test ! -e /ctx/Dockerfile && "
		 "echo built > /www/built.txt && echo step output here\n"
		 "CMD [\"sh\", \"-c\", \"echo $COLOUR > /www/colour.txt && exec httpd -f -p $PORT -h /www\"]\n",
		 base_image);
	put_file("Dockerfile", df);
	snprintf(df, sizeof(df), "FROM %s\nRUN echo about to fail && false\n", base_image);
	put_file("failing.Dockerfile", df);
	snprintf(df, sizeof(df), "FROM %s\nRUN echo sleeping && sleep 30\n", base_image);
	put_file("slow.Dockerfile", df);

	struct log *l = new_log();
	char err[512] = "";
	int rc = build("Dockerfile", tag, 1 << 20, NULL, l, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  build: %s\n", err);
	CHECK_INT_EQ(rc, 0);
	char want[256];
	/* Five instructions and one LABEL step per label. */
	snprintf(want, sizeof(want), "Step 1/7 : FROM %s", base_image);
	CHECK(log_has(l, want));
	CHECK(log_has(l, "step output here"));
	bool stepped = log_has(l, want);
	snprintf(want, sizeof(want), "Successfully tagged %s", tag);
	CHECK(log_has(l, want));
	if (!log_has(l, want) || !stepped)
		for (size_t i = 0; i < l->n; i++)
			fprintf(stderr, "  log: %s\n", l->lines[i]);
	CHECK(sw_driver_image_exists(drv, tag));
	char tags[4][SW_DRIVER_TAG_MAX];
	size_t n = 0;
	CHECK_INT_EQ(sw_driver_images_list(drv, app_id, tags, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 1);
	CHECK_STR_EQ(tags[0], tag);
	free(l);
}

TEST(failing_build_gives_the_engine_sentence)
{
	struct log *l = new_log();
	char err[512] = "", t[SW_DRIVER_TAG_MAX];
	snprintf(t, sizeof(t), "steward/%s:2", app_id);
	CHECK_INT_EQ(build("failing.Dockerfile", t, 0, NULL, l, err, sizeof(err)), -EIO);
	CHECK_STR_EQ(err, "the image build failed: The command '/bin/sh -c echo about to fail && false' "
			  "returned a non-zero code: 1");
	CHECK(log_has(l, "about to fail"));
	CHECK(!sw_driver_image_exists(drv, t));
	free(l);
}

TEST(missing_dockerfile_is_refused_with_the_engine_sentence)
{
	struct log *l = new_log();
	char err[512] = "", t[SW_DRIVER_TAG_MAX];
	snprintf(t, sizeof(t), "steward/%s:3", app_id);
	int rc = build("nope.Dockerfile", t, 0, NULL, l, err, sizeof(err));
	CHECK(rc < 0);
	CHECK_STR_EQ(err, "the image build was refused: Cannot locate specified Dockerfile: nope.Dockerfile");
	free(l);
}

TEST(context_over_the_cap_is_efbig)
{
	struct log *l = new_log();
	char err[512] = "", t[SW_DRIVER_TAG_MAX];
	snprintf(t, sizeof(t), "steward/%s:4", app_id);
	CHECK_INT_EQ(build("Dockerfile", t, 2048, NULL, l, err, sizeof(err)), -EFBIG);
	CHECK_STR_EQ(err, "the build context is larger than 2048 bytes");
	CHECK(!sw_driver_image_exists(drv, t));
	free(l);
}

struct canceller {
	volatile bool flag;
	struct log *l;
	uint64_t at;
};

static void *cancel_when_running(void *arg)
{
	struct canceller *c = arg;
	for (int i = 0; i < 200 && !log_has(c->l, "sleeping"); i++)
		usleep(50 * 1000);
	usleep(300 * 1000); /* well inside the sleep */
	c->at = now_ms();
	__atomic_store_n(&c->flag, true, __ATOMIC_RELAXED);
	return NULL;
}

TEST(cancel_stops_a_slow_build_quickly)
{
	struct canceller c = { .l = new_log() };
	char err[512] = "", t[SW_DRIVER_TAG_MAX];
	snprintf(t, sizeof(t), "steward/%s:5", app_id);
	pthread_t th;
	pthread_create(&th, NULL, cancel_when_running, &c);
	uint64_t start = now_ms();
	int rc = build("slow.Dockerfile", t, 0, &c.flag, c.l, err, sizeof(err));
	uint64_t end = now_ms();
	pthread_join(th, NULL);
	CHECK_INT_EQ(rc, -ECANCELED);
	CHECK_STR_EQ(err, "the build was cancelled");
	CHECK(log_has(c.l, "sleeping"));
	CHECK(c.at > 0 && end - c.at < 3000);
	CHECK(end - start < 25000);
	CHECK(!sw_driver_image_exists(drv, t));
	free(c.l);
}

/* ---- containers ---- */

TEST(container_runs_with_host_networking_env_and_limits)
{
	port_blue = (unsigned)scratch_port();
	char err[512] = "";
	int rc = create_colour(name_blue, "blue", port_blue, id_blue, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  create: %s\n", err);
	REQUIRE(rc == 0);
	CHECK(strlen(id_blue) == 64);
	CHECK_INT_EQ(sw_driver_container_start(drv, name_blue, err, sizeof(err)), 0);
	/* PORT came from spec.port; COLOUR from env. */
	CHECK(wait_body(port_blue, "x", "/colour.txt", "blue"));
	CHECK(wait_body(port_blue, "x", "/built.txt", "built"));
	/* Starting what runs already is fine. */
	CHECK_INT_EQ(sw_driver_container_start(drv, id_blue, err, sizeof(err)), 0);
}

TEST(taken_name_is_eexist_with_the_running_id)
{
	char err[512] = "", id[SW_DRIVER_ID_MAX] = "";
	CHECK_INT_EQ(create_colour(name_blue, "blue", port_blue, id, err, sizeof(err)), -EEXIST);
	CHECK_STR_EQ(id, id_blue);
}

TEST(containers_are_listed_by_application_label)
{
	struct sw_container_info info[4];
	size_t n = 0;
	char err[512] = "";
	CHECK_INT_EQ(sw_driver_containers_list(drv, app_id, info, 4, &n, err, sizeof(err)), 0);
	REQUIRE(n == 1);
	CHECK_STR_EQ(info[0].id, id_blue);
	CHECK_STR_EQ(info[0].name, name_blue);
	CHECK_STR_EQ(info[0].image, tag);
	CHECK_STR_EQ(info[0].state, "running");
	CHECK(strncmp(info[0].status, "Up ", 3) == 0);
	CHECK_STR_EQ(info[0].project, "drvtest-blue");
	CHECK_STR_EQ(info[0].colour, "blue");
	CHECK(info[0].created > 1700000000);
	/* Another application's filter sees none of it. */
	CHECK_INT_EQ(sw_driver_containers_list(drv, "00000000-0000-4000-8000-000000000000", info, 4, &n,
					       err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 0);
}

/* ---- ingress ---- */

static int route(const char *application_id, const char *hostname, unsigned port)
{
	char upstream[32], err[512] = "";
	snprintf(upstream, sizeof(upstream), "127.0.0.1:%u", port);
	const char *hosts[] = { hostname, NULL };
	struct sw_ingress_route r = { .application_id = application_id, .hostnames = hosts, .upstream = upstream };
	int rc = sw_driver_route_set(drv, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  route_set: %s\n", err);
	return rc;
}

TEST(route_set_sends_a_request_through_caddy_to_the_container)
{
	CHECK_INT_EQ(route(app_id, host, port_blue), 0);
	CHECK(wait_body(caddy_port, host, "/colour.txt", "blue"));
	char body[256];
	int status = http_get(caddy_port, "other.steward.test", "/colour.txt", body, sizeof(body));
	CHECK(status != 200 || strncmp(body, "blue", 4) != 0);
}

TEST(route_set_again_switches_the_upstream_at_once)
{
	port_green = (unsigned)scratch_port();
	char err[512] = "", id[SW_DRIVER_ID_MAX];
	REQUIRE(create_colour(name_green, "green", port_green, id, err, sizeof(err)) == 0);
	CHECK_INT_EQ(sw_driver_container_start(drv, name_green, err, sizeof(err)), 0);
	CHECK(wait_body(port_green, "x", "/colour.txt", "green"));
	CHECK_INT_EQ(route(app_id, host, port_green), 0);
	/* The very next request: Caddy loaded the config before it answered. */
	char body[256];
	CHECK_INT_EQ(http_get(caddy_port, host, "/colour.txt", body, sizeof(body)), 200);
	CHECK_STR_EQ(body, "green\n");
}

static json_t *proxy_state(void)
{
	char *text = NULL, err[512] = "";
	int rc = sw_driver_proxy_state(drv, &text, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "  proxy_state: %s\n", err);
		return NULL;
	}
	json_t *doc = json_loads(text, 0, NULL);
	free(text);
	return doc;
}

static json_t *route_of(json_t *doc, const char *application_id)
{
	char id[96];
	snprintf(id, sizeof(id), "steward-app-%s", application_id);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "routes"), i, r) {
		const char *rid = json_string_value(json_object_get(r, "id"));
		if (rid && strcmp(rid, id) == 0)
			return r;
	}
	return NULL;
}

TEST(proxy_state_shows_the_route_and_the_server)
{
	json_t *doc = proxy_state();
	REQUIRE(doc);
	json_t *r = route_of(doc, app_id);
	REQUIRE(r);
	CHECK_STR_EQ(json_string_value(json_object_get(r, "applicationId")), app_id);
	CHECK_INT_EQ(json_array_size(json_object_get(r, "hosts")), 1);
	CHECK_STR_EQ(json_string_value(json_array_get(json_object_get(r, "hosts"), 0)), host);
	char upstream[32];
	snprintf(upstream, sizeof(upstream), "127.0.0.1:%u", port_green);
	CHECK_INT_EQ(json_array_size(json_object_get(r, "upstreams")), 1);
	CHECK_STR_EQ(json_string_value(json_array_get(json_object_get(r, "upstreams"), 0)), upstream);
	json_t *server = json_object_get(doc, "server");
	CHECK_STR_EQ(json_string_value(json_object_get(server, "name")), "steward");
	CHECK_STR_EQ(json_string_value(json_array_get(json_object_get(server, "listen"), 0)),
		     getenv("CADDY_HTTP_LISTEN"));
	/* It listens on Caddy's HTTP port only: no automatic HTTPS. */
	CHECK(json_is_false(json_object_get(server, "automaticHttps")));
	CHECK(json_is_array(json_object_get(doc, "certificates")));
	CHECK(json_object_get(doc, "internalCa") != NULL);
	json_decref(doc);
}

TEST(routes_of_two_applications_are_independent)
{
	const char *other = "00000000-0000-4000-8000-0000000000d2";
	char other_host[96];
	snprintf(other_host, sizeof(other_host), "other-%.8s.steward.test", app_id);
	CHECK_INT_EQ(route(other, other_host, port_blue), 0);
	CHECK(wait_body(caddy_port, other_host, "/colour.txt", "blue"));
	CHECK(wait_body(caddy_port, host, "/colour.txt", "green"));
	char err[512];
	CHECK_INT_EQ(sw_driver_route_remove(drv, other, err, sizeof(err)), 0);
	CHECK(wait_body(caddy_port, host, "/colour.txt", "green"));
	json_t *doc = proxy_state();
	CHECK(doc && !route_of(doc, other) && route_of(doc, app_id));
	json_decref(doc);
}

TEST(route_remove_is_idempotent)
{
	char err[512] = "", body[256];
	CHECK_INT_EQ(sw_driver_route_remove(drv, app_id, err, sizeof(err)), 0);
	int status = http_get(caddy_port, host, "/colour.txt", body, sizeof(body));
	CHECK(status != 200 || strncmp(body, "green", 5) != 0);
	CHECK_INT_EQ(sw_driver_route_remove(drv, app_id, err, sizeof(err)), 0);
	json_t *doc = proxy_state();
	CHECK(doc && !route_of(doc, app_id));
	json_decref(doc);
}

/* The server exists with its routes taken away by someone: set adds them. */
TEST(route_set_on_a_server_without_routes)
{
	const char *admin = getenv("CADDY_ADMIN_URL");
	unsigned admin_port = (unsigned)atoi(strrchr(admin, ':') + 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)admin_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	REQUIRE(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	/* Caddy's admin API wants its own address as Host (DNS rebinding). */
	char del[256], resp[512] = "";
	int len = snprintf(del, sizeof(del), "DELETE /config/apps/http/servers/steward/routes HTTP/1.0\r\n"
					     "Host: 127.0.0.1:%u\r\n\r\n", admin_port);
	CHECK(write(fd, del, (size_t)len) == len);
	CHECK(read(fd, resp, sizeof(resp) - 1) > 0);
	close(fd);
	CHECK(strncmp(resp + 8, " 200", 4) == 0);
	if (strncmp(resp + 8, " 200", 4) != 0)
		fprintf(stderr, "  Caddy: %s\n", resp);
	CHECK_INT_EQ(route(app_id, host, port_blue), 0);
	CHECK(wait_body(caddy_port, host, "/colour.txt", "blue"));
	char err[512];
	CHECK_INT_EQ(sw_driver_route_remove(drv, app_id, err, sizeof(err)), 0);
}

/* ---- removal ---- */

TEST(stop_and_remove_are_idempotent)
{
	char err[512] = "";
	CHECK_INT_EQ(sw_driver_container_stop(drv, name_blue, 2, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_container_stop(drv, name_blue, 2, err, sizeof(err)), 0);
	struct sw_container_info info[4];
	size_t n = 0;
	CHECK_INT_EQ(sw_driver_containers_list(drv, app_id, info, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 2);
	for (size_t i = 0; i < n; i++)
		CHECK_STR_EQ(info[i].state, strcmp(info[i].name, name_blue) == 0 ? "exited" : "running");
	CHECK_INT_EQ(sw_driver_container_remove(drv, name_blue, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_container_remove(drv, name_blue, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_container_stop(drv, name_blue, 2, err, sizeof(err)), 0);
	/* A running one goes too (force). */
	CHECK_INT_EQ(sw_driver_container_remove(drv, name_green, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_containers_list(drv, app_id, info, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 0);
	CHECK_INT_EQ(sw_driver_container_start(drv, name_blue, err, sizeof(err)), -ENOENT);
}

/* ---- named volumes ---- */

TEST(volumes_are_created_with_labels_and_listed_by_application)
{
	char err[512] = "", vol[SW_DRIVER_VOLUME_MAX], svc[SW_DRIVER_VOLUME_MAX];
	snprintf(vol, sizeof(vol), "sw-%s-data", app_id);
	snprintf(svc, sizeof(svc), "sw-svc-%s-data", app_id);
	struct sw_volume_spec v = { .name = vol, .application_id = app_id };
	CHECK_INT_EQ(sw_driver_volume_create(drv, &v, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_volume_create(drv, &v, err, sizeof(err)), 0); /* exists: fine */
	struct sw_volume_spec s = { .name = svc, .service_id = app_id };
	CHECK_INT_EQ(sw_driver_volume_create(drv, &s, err, sizeof(err)), 0);
	char names[4][SW_DRIVER_VOLUME_MAX];
	size_t n = 0;
	CHECK_INT_EQ(sw_driver_volumes_list(drv, app_id, names, 4, &n, err, sizeof(err)), 0);
	REQUIRE(n == 1); /* the service's volume carries steward.service, not the application's label */
	CHECK_STR_EQ(names[0], vol);
	CHECK_INT_EQ(sw_driver_volumes_list(drv, "00000000-0000-4000-8000-000000000000", names, 4, &n, err,
					    sizeof(err)), 0);
	CHECK_INT_EQ(n, 0);
	CHECK_INT_EQ(sw_driver_volume_remove(drv, svc, err, sizeof(err)), 0);
}

TEST(a_mounted_volume_is_ebusy_then_removed_once_its_container_goes)
{
	char err[512] = "", vol[SW_DRIVER_VOLUME_MAX], mount[SW_DRIVER_VOLUME_MAX + 16], name[64],
	     app_label[96], id[SW_DRIVER_ID_MAX];
	snprintf(vol, sizeof(vol), "sw-%s-data", app_id);
	snprintf(mount, sizeof(mount), "%s:/data", vol);
	snprintf(name, sizeof(name), "sw-%.12s-9", app_id);
	snprintf(app_label, sizeof(app_label), "steward.application=%s", app_id);
	const char *mounts[] = { mount, NULL };
	const char *labels[] = { app_label, "steward.managed=true", NULL };
	const char *cmd[] = { "sh", "-c", "echo kept > /data/file", NULL };
	struct sw_container_spec c = { .name = name, .image = tag, .labels = labels, .cmd = cmd, .mounts = mounts };
	int rc = sw_driver_container_create(drv, &c, id, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  create: %s\n", err);
	REQUIRE(rc == 0);
	/* A container that exists (even stopped) holds it. */
	CHECK_INT_EQ(sw_driver_volume_remove(drv, vol, err, sizeof(err)), -EBUSY);
	char want[256];
	snprintf(want, sizeof(want), "the volume %s is in use by a container", vol);
	CHECK_STR_EQ(err, want);
	CHECK_INT_EQ(sw_driver_container_remove(drv, id, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_volume_remove(drv, vol, err, sizeof(err)), 0);
	CHECK_INT_EQ(sw_driver_volume_remove(drv, vol, err, sizeof(err)), 0); /* gone: 0 */
	char names[4][SW_DRIVER_VOLUME_MAX];
	size_t n = 9;
	CHECK_INT_EQ(sw_driver_volumes_list(drv, app_id, names, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 0);
}

TEST(image_remove_is_idempotent)
{
	char err[512] = "";
	CHECK_INT_EQ(sw_driver_image_remove(drv, tag, err, sizeof(err)), 0);
	CHECK(!sw_driver_image_exists(drv, tag));
	CHECK_INT_EQ(sw_driver_image_remove(drv, tag, err, sizeof(err)), 0);
	char tags[4][SW_DRIVER_TAG_MAX];
	size_t n = 9;
	CHECK_INT_EQ(sw_driver_images_list(drv, app_id, tags, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 0);
	static const char *files[] = { "www/index.html", "www", ".git/config", ".git", "Dockerfile",
				       "secret.txt", ".dockerignore",
				       "failing.Dockerfile", "slow.Dockerfile" };
	char p[128];
	for (size_t i = 0; i < SW_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", ctx, files[i]);
		if (unlink(p) < 0)
			rmdir(p);
	}
	rmdir(ctx);
	sw_driver_free(drv);
}

TEST_MAIN()
