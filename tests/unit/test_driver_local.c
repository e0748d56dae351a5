/* The local driver without a real engine or Caddy: settings, refusals of
 * bad input before any call, unreachable peers, the engine's error
 * answers (from a fake engine on a unix socket) with secrets scrubbed,
 * and MemAvailable. The real engine and Caddy: test_driver.c. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "driver/driver_internal.h"
#include "test_help.h"

static char dir[64];

static void make_dir(void)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/sw-drv-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
}

static struct sw_driver *driver_with(const char *docker_host, const char *caddy)
{
	setenv("DOCKER_HOST", docker_host, 1);
	setenv("CADDY_ADMIN_URL", caddy, 1);
	return sw_driver_local_new();
}

TEST(port_is_replaced_in_command_arguments_without_a_shell)
{
	static const struct {
		const char *in, *out;
		int r;
	} cases[] = {
		{ "$PORT", "8080", 1 },
		{ "${PORT}", "8080", 1 },
		{ "--port=$PORT", "--port=8080", 1 },
		{ "0.0.0.0:${PORT}/x", "0.0.0.0:8080/x", 1 },
		{ "$PORT$PORT", "80808080", 1 },
		{ "$$PORT", "$8080", 1 },
		{ "$PORTS", "$PORTS", 0 },
		{ "$PORT_X", "$PORT_X", 0 },
		{ "${PORT", "${PORT", 0 },
		{ "$port", "$port", 0 },
		{ "", "", 0 },
		{ "httpd", "httpd", 0 },
	};
	char out[64];
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		CHECK_INT_EQ(sw_driver_expand_port(cases[i].in, 8080, out, sizeof(out)), cases[i].r);
		CHECK_STR_EQ(out, cases[i].out);
	}
	CHECK_INT_EQ(sw_driver_expand_port("-p $PORT", 8080, out, 7), -E2BIG);
	CHECK_INT_EQ(sw_driver_expand_port("-p $PORT", 8080, out, 8), 1);
	CHECK_STR_EQ(out, "-p 8080");
}

TEST(docker_host_must_be_a_unix_socket)
{
	errno = 0;
	CHECK(driver_with("tcp://127.0.0.1:2375", "http://127.0.0.1:2019") == NULL);
	CHECK_INT_EQ(errno, EINVAL);
	CHECK(driver_with("unix://relative.sock", "http://127.0.0.1:2019") == NULL);
	struct sw_driver *d = driver_with("unix:///var/run/docker.sock", "http://127.0.0.1:2019/");
	REQUIRE(d);
	CHECK_STR_EQ(d->docker_socket, "/var/run/docker.sock");
	CHECK_STR_EQ(d->caddy_admin, "http://127.0.0.1:2019");
	sw_driver_free(d);
}

TEST(unreachable_engine_and_caddy_say_so)
{
	make_dir();
	char sock[128], err[256] = "";
	snprintf(sock, sizeof(sock), "unix://%s/none.sock", dir);
	/* Nothing listens on port 1 of the loopback (tcpmux is long gone). */
	struct sw_driver *d = driver_with(sock, "http://127.0.0.1:1");
	REQUIRE(d);
	struct sw_container_info info[2];
	size_t n = 99;
	CHECK_INT_EQ(sw_driver_containers_list(d, NULL, info, 2, &n, err, sizeof(err)), -ECONNREFUSED);
	char want[192];
	snprintf(want, sizeof(want), "the Docker engine at %s/none.sock cannot be reached: Couldn't connect to server", dir);
	CHECK_STR_EQ(err, want);
	CHECK_INT_EQ(n, 99);
	CHECK(!sw_driver_image_exists(d, "steward/x:1"));
	CHECK_INT_EQ(sw_driver_route_remove(d, "0b7c6f2e-0000-4000-8000-000000000001", err, sizeof(err)),
		     -ECONNREFUSED);
	CHECK(strncmp(err, "Caddy's admin API cannot be reached: ", 37) == 0);
	char *json = NULL;
	CHECK_INT_EQ(sw_driver_proxy_state(d, &json, err, sizeof(err)), -ECONNREFUSED);
	CHECK(json == NULL);
	sw_driver_free(d);
}

TEST(bad_input_is_refused_before_any_call)
{
	/* Nothing listens on these: a call would say "cannot be reached". */
	make_dir();
	char sock[128], err[256];
	snprintf(sock, sizeof(sock), "unix://%s/none.sock", dir);
	struct sw_driver *d = driver_with(sock, "http://127.0.0.1:1");
	REQUIRE(d);
	struct sw_image_build b = { .context_dir = dir, .dockerfile = "Dockerfile", .tag = "steward/a:1" };
	b.dockerfile = "../Dockerfile";
	CHECK_INT_EQ(sw_driver_image_build(d, &b, NULL, NULL, err, sizeof(err)), -EINVAL);
	b.dockerfile = "/etc/Dockerfile";
	CHECK_INT_EQ(sw_driver_image_build(d, &b, NULL, NULL, err, sizeof(err)), -EINVAL);
	b.dockerfile = "Dockerfile";
	b.tag = "steward/a:1 --rm";
	CHECK_INT_EQ(sw_driver_image_build(d, &b, NULL, NULL, err, sizeof(err)), -EINVAL);
	b.tag = "steward/a:1";
	const char *bad_labels[] = { "novalue", NULL };
	b.labels = bad_labels;
	CHECK_INT_EQ(sw_driver_image_build(d, &b, NULL, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(sw_driver_image_remove(d, "../../containers/x", err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(sw_driver_container_start(d, "x/../../images", err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(sw_driver_container_stop(d, "a b", 1, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(sw_driver_container_remove(d, "", err, sizeof(err)), -EINVAL);
	char id[SW_DRIVER_ID_MAX];
	const char *bad_mounts[] = { "data", NULL };
	struct sw_container_spec s = { .name = "sw-a-1", .image = "steward/a:1", .mounts = bad_mounts };
	CHECK_INT_EQ(sw_driver_container_create(d, &s, id, err, sizeof(err)), -EINVAL);
	CHECK_STR_EQ(err, "the container was given a malformed mount");
	size_t n;
	char tags[2][SW_DRIVER_TAG_MAX];
	CHECK_INT_EQ(sw_driver_images_list(d, "a\"b", tags, 2, &n, err, sizeof(err)), -EINVAL);
	const char *hosts[] = { "app.example.com", NULL }, *no_hosts[] = { NULL };
	struct sw_ingress_route r = { .application_id = "x/../y", .hostnames = hosts, .upstream = "127.0.0.1:80" };
	CHECK_INT_EQ(sw_driver_route_set(d, &r, err, sizeof(err)), -EINVAL);
	r.application_id = "0b7c6f2e";
	r.upstream = "127.0.0.1:80\"}";
	CHECK_INT_EQ(sw_driver_route_set(d, &r, err, sizeof(err)), -EINVAL);
	r.upstream = "127.0.0.1:80";
	r.hostnames = no_hosts;
	CHECK_INT_EQ(sw_driver_route_set(d, &r, err, sizeof(err)), -EINVAL);
	CHECK_STR_EQ(err, "a route needs at least one hostname");
	/* Only Steward's volume names reach a path. */
	static const char *bad_volumes[] = { "data", "sw-x-data", "../../containers/json",
					     "sw-0B7C6F2E-0000-4000-8000-000000000001-data",
					     "sw-0b7c6f2e-0000-4000-8000-000000000001-Data",
					     "sw-0b7c6f2e-0000-4000-8000-000000000001-a/b",
					     "sw-svc-0b7c6f2e-0000-4000-8000-000000000001-logs", "" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad_volumes); i++) {
		struct sw_volume_spec v = { .name = bad_volumes[i], .application_id = "0b7c6f2e" };
		CHECK_INT_EQ(sw_driver_volume_create(d, &v, err, sizeof(err)), -EINVAL);
		CHECK_INT_EQ(sw_driver_volume_remove(d, bad_volumes[i], err, sizeof(err)), -EINVAL);
	}
	struct sw_volume_spec both = { .name = "sw-svc-0b7c6f2e-0000-4000-8000-000000000001-data",
				       .application_id = "a", .service_id = "b" };
	CHECK_INT_EQ(sw_driver_volume_create(d, &both, err, sizeof(err)), -EINVAL);
	both.application_id = both.service_id = NULL;
	CHECK_INT_EQ(sw_driver_volume_create(d, &both, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(sw_driver_volumes_list(d, "x\"y", NULL, 0, &n, err, sizeof(err)), -EINVAL);
	sw_driver_free(d);
}

TEST(cancelled_before_the_start_never_calls)
{
	make_dir();
	char sock[128], err[256];
	snprintf(sock, sizeof(sock), "unix://%s/none.sock", dir);
	struct sw_driver *d = driver_with(sock, "http://127.0.0.1:1");
	REQUIRE(d);
	volatile bool cancel = true;
	struct sw_image_build b = { .context_dir = dir, .dockerfile = "Dockerfile", .tag = "steward/a:1",
				    .cancel = &cancel };
	CHECK_INT_EQ(sw_driver_image_build(d, &b, NULL, NULL, err, sizeof(err)), -ECANCELED);
	CHECK_STR_EQ(err, "the build was cancelled");
	sw_driver_free(d);
}

/* ---- a fake engine: answers each connection with the next canned answer */

struct fake {
	int fd;
	const char *answers[4];
	size_t n;
	char request[4][2048];
	pthread_t thread;
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;
	for (size_t i = 0; i < f->n; i++) {
		int c = accept(f->fd, NULL, NULL);
		if (c < 0)
			break;
		size_t got = 0;
		for (;;) {
			ssize_t r = read(c, f->request[i] + got, sizeof(f->request[i]) - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			f->request[i][got] = '\0';
			char *end = strstr(f->request[i], "\r\n\r\n");
			const char *cl = strstr(f->request[i], "Content-Length: ");
			if (end && (!cl || got >= (size_t)(end + 4 - f->request[i]) + strtoul(cl + 16, NULL, 10)))
				break;
		}
		char resp[1024];
		const char *body = strchr(f->answers[i], '\n') + 1;
		int len = snprintf(resp, sizeof(resp), "HTTP/1.1 %.*s\r\nContent-Type: application/json\r\n"
					"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				   (int)(strchr(f->answers[i], '\n') - f->answers[i]), f->answers[i],
				   strlen(body), body);
		if (write(c, resp, (size_t)len) < 0)
			break;
		close(c);
	}
	return NULL;
}

static struct sw_driver *start_fake(struct fake *f)
{
	make_dir();
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/fake.sock", dir);
	unlink(a.sun_path);
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(f->fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(f->fd, 4) < 0)
		return NULL;
	pthread_create(&f->thread, NULL, fake_serve, f);
	char host[128];
	snprintf(host, sizeof(host), "unix://%s", a.sun_path);
	return driver_with(host, "http://127.0.0.1:1");
}

static void stop_fake(struct fake *f, struct sw_driver *d)
{
	pthread_join(f->thread, NULL);
	close(f->fd);
	sw_driver_free(d);
}

TEST(engine_error_reaches_err_without_secret_values)
{
	struct fake f = { .answers = { "200 OK\n{\"Config\":{\"Cmd\":[\"httpd\",\"-p\",\"$PORT\",\"-h\",\"/www\"]}}",
				       "400 Bad Request\n{\"message\":\"invalid environment TOKEN=hunter2-s3cret and "
				       "a cut value at the end: sesame-op\"}" },
			  .n = 2 };
	struct sw_driver *d = start_fake(&f);
	REQUIRE(d);
	/* SHORT's value is in the message many times, and too short to mask. */
	const char *env[] = { "TOKEN=hunter2-s3cret", "OTHER=sesame-open-sesame", "EMPTY=", "SHORT=en", NULL };
	struct sw_container_spec s = { .name = "sw-a-1", .image = "steward/a:1", .env = env, .port = 8080 };
	char id[SW_DRIVER_ID_MAX], err[256];
	CHECK_INT_EQ(sw_driver_container_create(d, &s, id, err, sizeof(err)), -EINVAL);
	CHECK_STR_EQ(err, "the container cannot be created: invalid environment TOKEN=*** and a cut value at the end: ***");
	stop_fake(&f, d);
	/* The image's command was read first, to replace $PORT in it. */
	CHECK(strstr(f.request[0], "GET /v1.41/images/steward/a:1/json HTTP/1.1") == f.request[0]);
	/* The request: host networking, PORT added, restart policy, bounded
	 * logs, the image's command with the port in place of $PORT. */
	const char *body = strstr(f.request[1], "\r\n\r\n");
	REQUIRE(body);
	CHECK(strstr(f.request[1], "POST /v1.41/containers/create?name=sw-a-1 HTTP/1.1") == f.request[1]);
	CHECK(strstr(body, "\"Cmd\":[\"httpd\",\"-p\",\"8080\",\"-h\",\"/www\"]") != NULL);
	CHECK(strstr(body, "\"NetworkMode\":\"host\"") != NULL);
	CHECK(strstr(body, "\"PORT=8080\"") != NULL);
	CHECK(strstr(body, "\"RestartPolicy\":{\"Name\":\"no\"}") != NULL);
	CHECK(strstr(body, "\"max-size\":\"10m\"") != NULL);
}

TEST(name_conflict_is_eexist_with_the_existing_id)
{
	struct fake f = { .answers = { "409 Conflict\n{\"message\":\"Conflict. The container name is in use\"}",
				       "200 OK\n{\"Id\":\"abc123\",\"Name\":\"/sw-a-1\"}" },
			  .n = 2 };
	struct sw_driver *d = start_fake(&f);
	REQUIRE(d);
	struct sw_container_spec s = { .name = "sw-a-1", .image = "steward/a:1" };
	char id[SW_DRIVER_ID_MAX] = "", err[256];
	CHECK_INT_EQ(sw_driver_container_create(d, &s, id, err, sizeof(err)), -EEXIST);
	CHECK_STR_EQ(id, "abc123");
	CHECK_STR_EQ(err, "a container named sw-a-1 exists already");
	stop_fake(&f, d);
	CHECK(strstr(f.request[1], "GET /v1.41/containers/sw-a-1/json ") == f.request[1]);
}

TEST(image_in_use_is_ebusy_and_gone_is_success)
{
	struct fake f = { .answers = { "409 Conflict\n{\"message\":\"conflict: unable to remove repository reference\"}",
				       "404 Not Found\n{\"message\":\"No such image: steward/a:1\"}" },
			  .n = 2 };
	struct sw_driver *d = start_fake(&f);
	REQUIRE(d);
	char err[256];
	CHECK_INT_EQ(sw_driver_image_remove(d, "steward/a:1", err, sizeof(err)), -EBUSY);
	CHECK_STR_EQ(err, "the image cannot be removed: conflict: unable to remove repository reference");
	CHECK_INT_EQ(sw_driver_image_remove(d, "steward/a:1", err, sizeof(err)), 0);
	stop_fake(&f, d);
	CHECK(strstr(f.request[0], "DELETE /v1.41/images/steward/a:1?force=0 ") == f.request[0]);
}

TEST(images_are_listed_newest_deployment_first)
{
	/* :3 reused the image of :1 from the build cache: older creation time. */
	struct fake f = { .answers = { "200 OK\n[{\"Id\":\"sha256:b\",\"Created\":200,\"RepoTags\":[\"steward/a:2\"]},"
				       "{\"Id\":\"sha256:a\",\"Created\":100,\"RepoTags\":[\"steward/a:1\",\"steward/a:3\"]},"
				       "{\"Id\":\"sha256:c\",\"Created\":300,\"RepoTags\":[\"<none>:<none>\"]},"
				       "{\"Id\":\"sha256:d\",\"Created\":50,\"RepoTags\":[\"steward/a:10\"]}]" },
			  .n = 1 };
	struct sw_driver *d = start_fake(&f);
	REQUIRE(d);
	char tags[3][SW_DRIVER_TAG_MAX], err[256];
	size_t n = 0;
	CHECK_INT_EQ(sw_driver_images_list(d, "a", tags, 3, &n, err, sizeof(err)), 0);
	REQUIRE(n == 3);
	CHECK_STR_EQ(tags[0], "steward/a:10");
	CHECK_STR_EQ(tags[1], "steward/a:3");
	CHECK_STR_EQ(tags[2], "steward/a:2");
	stop_fake(&f, d);
	/* filters={"label":["steward.application=a"]}, encoded */
	CHECK(strstr(f.request[0], "GET /v1.41/images/json?filters=%7B%22label%22%3A%5B%22steward.application%3Da%22%5D%7D ") ==
	      f.request[0]);
}

TEST(volume_answers_of_the_engine)
{
	struct fake f = { .answers = { "201 Created\n{\"Name\":\"x\"}",
				       "200 OK\n{\"Volumes\":[{\"Name\":\"sw-b\"},{\"Name\":\"sw-a\"}],\"Warnings\":null}",
				       "200 OK\n{\"Volumes\":null,\"Warnings\":null}",
				       "409 Conflict\n{\"message\":\"remove x: volume is in use - [abc]\"}" },
			  .n = 4 };
	struct sw_driver *d = start_fake(&f);
	REQUIRE(d);
	char err[256] = "";
	const char *name = "sw-0b7c6f2e-0000-4000-8000-000000000001-data";
	struct sw_volume_spec v = { .name = name, .application_id = "0b7c6f2e-0000-4000-8000-000000000001" };
	CHECK_INT_EQ(sw_driver_volume_create(d, &v, err, sizeof(err)), 0);
	CHECK(strstr(f.request[0], "POST /v1.41/volumes/create ") != NULL);
	CHECK(strstr(f.request[0], "\"steward.application\":\"0b7c6f2e-0000-4000-8000-000000000001\"") != NULL);
	CHECK(strstr(f.request[0], "\"steward.managed\":\"true\"") != NULL);
	char names[4][SW_DRIVER_VOLUME_MAX];
	size_t n = 0;
	CHECK_INT_EQ(sw_driver_volumes_list(d, v.application_id, names, 4, &n, err, sizeof(err)), 0);
	REQUIRE(n == 2);
	CHECK_STR_EQ(names[0], "sw-a"); /* sorted */
	CHECK(strstr(f.request[1], "GET /v1.41/volumes?filters=") != NULL);
	n = 9;
	CHECK_INT_EQ(sw_driver_volumes_list(d, v.application_id, names, 4, &n, err, sizeof(err)), 0);
	CHECK_INT_EQ(n, 0); /* "Volumes": null is none */
	CHECK_INT_EQ(sw_driver_volume_remove(d, name, err, sizeof(err)), -EBUSY);
	CHECK_STR_EQ(err, "the volume sw-0b7c6f2e-0000-4000-8000-000000000001-data is in use by a container");
	CHECK(strstr(f.request[3], "DELETE /v1.41/volumes/sw-0b7c6f2e-0000-4000-8000-000000000001-data ") != NULL);
	stop_fake(&f, d);
}

TEST(memory_available_is_read_from_host_proc_path)
{
	make_dir();
	char p[128];
	snprintf(p, sizeof(p), "%s/meminfo", dir);
	FILE *f = fopen(p, "w");
	REQUIRE(f);
	fputs("MemTotal:       24684084 kB\nMemFree:        22000000 kB\nMemAvailable:   23000000 kB\n", f);
	fclose(f);
	setenv("HOST_PROC_PATH", dir, 1);
	struct sw_driver *d = driver_with("unix:///var/run/docker.sock", "http://127.0.0.1:2019");
	unsetenv("HOST_PROC_PATH");
	REQUIRE(d);
	uint64_t bytes = 0;
	CHECK_INT_EQ(sw_driver_memory_available(d, &bytes), 0);
	CHECK(bytes == 23000000ull * 1024);
	f = fopen(p, "w");
	REQUIRE(f);
	fputs("MemTotal:       24684084 kB\n", f);
	fclose(f);
	CHECK_INT_EQ(sw_driver_memory_available(d, &bytes), -ENODATA);
	unlink(p);
	CHECK_INT_EQ(sw_driver_memory_available(d, &bytes), -ENOENT);
	sw_driver_free(d);
	d = driver_with("unix:///var/run/docker.sock", "http://127.0.0.1:2019");
	REQUIRE(d);
	CHECK_INT_EQ(sw_driver_memory_available(d, &bytes), 0); /* this machine's /proc */
	CHECK(bytes > 0);
	sw_driver_free(d);
	snprintf(p, sizeof(p), "%s/fake.sock", dir);
	unlink(p);
	rmdir(dir);
}

TEST_MAIN()
