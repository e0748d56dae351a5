/* steward-agent's configuration (src/agent/agent_config.c), its reconnect
 * schedule (sw_agent_backoff_ms) and its host facts. */
#include <errno.h>
#include "steward/agent/daemon.h"
#include "scratch_dir.h"
#include "test_help.h"

TEST_MAIN()

#define TOKEN "STEWARD_AGENT_TOKEN=sta_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static char data_var[128];

static int load(const char *url, const char *extra, struct sw_agent_config *c, char *err)
{
	snprintf(data_var, sizeof(data_var), "STEWARD_AGENT_DATA_DIR=%s/data", scratch_dir("sw-agent-cfg"));
	char *env[] = { (char *)url, TOKEN, data_var, (char *)extra, NULL };
	return sw_agent_config_load(env, c, err, 256);
}

TEST(urls_and_the_path_of_the_channel)
{
	struct sw_agent_config c;
	char err[256];
	REQUIRE(load("STEWARD_URL=https://cp.example.com", NULL, &c, err) == 0);
	CHECK(c.tls);
	CHECK_STR_EQ(c.host, "cp.example.com");
	CHECK_STR_EQ(c.port, "443");
	CHECK_STR_EQ(c.path, "/agent/connect");
	REQUIRE(load("STEWARD_URL=https://cp.example.com:8443/steward/", NULL, &c, err) == 0);
	CHECK_STR_EQ(c.port, "8443");
	CHECK_STR_EQ(c.path, "/steward/agent/connect");
	REQUIRE(load("STEWARD_URL=http://[::1]:8080", NULL, &c, err) == 0);
	CHECK(!c.tls);
	CHECK_STR_EQ(c.host, "::1");
	REQUIRE(load("STEWARD_URL=http://127.0.0.2:8080", NULL, &c, err) == 0);
	REQUIRE(load("STEWARD_URL=http://localhost", NULL, &c, err) == 0);
	CHECK_STR_EQ(c.port, "80");
	/* Defaults of the host paths and local endpoints. */
	CHECK_STR_EQ(c.docker_host, "unix:///var/run/docker.sock");
	CHECK_STR_EQ(c.caddy_admin_url, "http://127.0.0.1:2019");
	CHECK_STR_EQ(c.proc_path, "/proc");
	CHECK_STR_EQ(c.ca_file, "");
}

TEST(plain_ws_only_to_loopback_or_when_allowed)
{
	struct sw_agent_config c;
	char err[256];
	CHECK_INT_EQ(load("STEWARD_URL=http://10.0.0.5:8080", NULL, &c, err), -EINVAL);
	CHECK(strstr(err, "STEWARD_URL") && strstr(err, "STEWARD_AGENT_ALLOW_PLAIN"));
	CHECK_INT_EQ(load("STEWARD_URL=http://127.0.0.1.evil.example", NULL, &c, err), -EINVAL);
	REQUIRE(load("STEWARD_URL=http://10.0.0.5:8080", "STEWARD_AGENT_ALLOW_PLAIN=1", &c, err) == 0);
	CHECK_INT_EQ(load("STEWARD_URL=http://10.0.0.5", "STEWARD_AGENT_ALLOW_PLAIN=yes", &c, err), -EINVAL);
	CHECK(strstr(err, "STEWARD_AGENT_ALLOW_PLAIN") != NULL);
}

TEST(bad_values_name_their_variable)
{
	static const struct {
		const char *url, *extra, *name;
	} cases[] = {
		{ "STEWARD_URL=", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=ws://127.0.0.1", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://user:pw@cp.example", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://cp.example/?token=x", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://cp.example:0", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://cp.example:99999", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://cp_example", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://[::1", NULL, "STEWARD_URL" },
		{ "STEWARD_URL=https://cp.example", "DOCKER_HOST=tcp://1.2.3.4:2375", "DOCKER_HOST" },
		{ "STEWARD_URL=https://cp.example", "CADDY_ADMIN_URL=localhost:2019", "CADDY_ADMIN_URL" },
		{ "STEWARD_URL=https://cp.example", "HOST_PROC_PATH=proc", "HOST_PROC_PATH" },
		{ "STEWARD_URL=https://cp.example", "HOST_SYS_PATH=/nonexistent", "HOST_SYS_PATH" },
		{ "STEWARD_URL=https://cp.example", "HOST_ROOT_PATH=/etc/passwd", "HOST_ROOT_PATH" },
		{ "STEWARD_URL=https://cp.example", "STEWARD_CA_FILE=/nonexistent.pem", "STEWARD_CA_FILE" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sw_agent_config c;
		char err[256] = "";
		CHECK_INT_EQ(load(cases[i].url, cases[i].extra, &c, err), -EINVAL);
		if (!strstr(err, cases[i].name)) {
			fprintf(stderr, "  case %zu: \"%s\" does not name %s\n", i, err, cases[i].name);
			*sw_failed_ = 1;
		}
	}
	/* The token: missing, or not an agent token. */
	struct sw_agent_config c;
	char err[256];
	char *env[] = { "STEWARD_URL=https://cp.example", "STEWARD_AGENT_TOKEN=st_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", NULL };
	CHECK_INT_EQ(sw_agent_config_load(env, &c, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "STEWARD_AGENT_TOKEN") != NULL);
	CHECK(strstr(err, "st_AAAA") == NULL); /* never echoed */
}

TEST(backoff_grows_with_full_jitter_between_1_and_60_seconds)
{
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 0, 0, 0.0), 1000);
	/* The first retry spreads over a second already: no wave at 1 s. */
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 0, 0, 0.5), 1500);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 0, 0, 0.999) > 1990);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 0, 0, 0.999) <= 2000);
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 3, 0, 0.0), 1000);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 3, 0, 0.999) > 15900);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 3, 0, 0.999) <= 16000);
	for (unsigned a = 0; a < 40; a++)
		for (double r = 0; r < 1; r += 0.125) {
			uint64_t ms = sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, a, 0, r);
			CHECK(ms >= 1000 && ms <= 60000);
		}
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 30, 0, 0.999) > 59000);
	/* Full jitter: the spread covers the range, not one point. */
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 10, 0, 0.5) < 40000);
}

TEST(backoff_after_401_is_minutes_and_a_hint_is_honoured)
{
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_REJECTED, 0, 0, 0.0), 120000);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_REJECTED, 0, 0, 0.999) <= 600000);
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_HINTED, 0, 30000, 0.0), 15000);
	CHECK(sw_agent_backoff_ms(SW_AGENT_DROP_HINTED, 0, 30000, 0.999) <= 30000);
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_HINTED, 0, 0, 0.5), 1000);
	/* An out-of-range random number is treated as 0, never as a huge wait. */
	CHECK_INT_EQ(sw_agent_backoff_ms(SW_AGENT_DROP_NETWORK, 5, 0, 7.0), 1000);
}

TEST(host_facts_fit_the_hello)
{
	const char *dir = scratch_dir("sw-agent-cfg");
	char path[200];
	snprintf(path, sizeof(path), "%s/root/etc", dir);
	char root[160];
	snprintf(root, sizeof(root), "%s/root", dir);
	mkdir(root, 0700);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/root/etc/os-release", dir);
	FILE *f = fopen(path, "w");
	REQUIRE(f);
	fputs("NAME=Test\nPRETTY_NAME=\"Test OS 1\tbeta\"\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/root/etc/hostname", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("web-7\n", f);
	fclose(f);
	struct sw_agent_config c = { 0 };
	snprintf(c.proc_path, sizeof(c.proc_path), "/proc");
	snprintf(c.sys_path, sizeof(c.sys_path), "/sys");
	snprintf(c.root_path, sizeof(c.root_path), "%s", root);
	char store[2048];
	struct sw_agent_msg hello = { 0 };
	sw_agent_host_facts(&c, &hello, store, sizeof(store));
	CHECK_STR_EQ(hello.host.os, "Test OS 1 beta");
	CHECK_STR_EQ(hello.host.hostname, "web-7");
	CHECK(hello.host.cores >= 1);
	CHECK(hello.host.memory_bytes > 0);
	json_t *caps = json_array();
	hello.capabilities = caps;
	struct sw_buf b = { 0 };
	CHECK_INT_EQ(sw_agent_msg_encode(&b, &hello), 0);
	sw_buf_release(&b);
	json_decref(caps);
}
