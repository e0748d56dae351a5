/* The agent protocol's messages (src/agent/protocol.c): what the decoder
 * accepts and refuses, and that the encoder writes what it accepts. */
#include <errno.h>
#include "steward/agent/protocol.h"
#include "steward/base/limits.h"
#include "test_help.h"

TEST_MAIN()

static int decode(const char *s, struct sw_agent_msg *m, char *err)
{
	return sw_agent_msg_decode(s, strlen(s), m, err, 256);
}

static bool refused(const char *s)
{
	struct sw_agent_msg m;
	char err[256];
	int rc = decode(s, &m, err);
	if (rc == 0)
		sw_agent_msg_release(&m);
	return rc == -EINVAL;
}

#define HOST "\"host\":{\"os\":\"Debian GNU/Linux 12\",\"kernel\":\"6.1.0\",\"arch\":\"x86_64\"," \
	     "\"hostname\":\"web-1\",\"cores\":4,\"memoryBytes\":8589934592}"
#define HELLO "{\"type\":\"hello\",\"agentVersion\":\"0.1.0\",\"protocolMin\":1,\"protocolMax\":1," \
	      "\"bootId\":\"6d1c-4e\",\"capabilities\":[\"docker\",\"caddy\"]," HOST "}"

TEST(hello_decodes_with_host_facts)
{
	struct sw_agent_msg m;
	char err[256];
	REQUIRE(decode(HELLO, &m, err) == 0);
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HELLO);
	CHECK_STR_EQ(m.agent_version, "0.1.0");
	CHECK_STR_EQ(m.host.hostname, "web-1");
	CHECK_INT_EQ(m.host.cores, 4);
	CHECK_INT_EQ(m.host.memory_bytes, 8589934592LL);
	CHECK_INT_EQ(json_array_size(m.capabilities), 2);
	/* Written back and read again: the same message. */
	struct sw_buf b = { 0 };
	REQUIRE(sw_agent_msg_encode(&b, &m) == 0);
	struct sw_agent_msg again;
	REQUIRE(sw_agent_msg_decode(b.data, b.len, &again, err, sizeof(err)) == 0);
	CHECK_STR_EQ(again.host.os, "Debian GNU/Linux 12");
	CHECK_INT_EQ(again.protocol_max, 1);
	sw_agent_msg_release(&again);
	sw_agent_msg_release(&m);
	sw_buf_release(&b);
}

TEST(malformed_messages_are_refused)
{
	CHECK(refused("{\"type\":\"shell\",\"cmd\":\"rm -rf /\"}"));
	CHECK(refused("{\"seq\":1}"));
	CHECK(refused("[1,2]"));
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":1,\"seq\":2}")); /* duplicate key */
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":-1}"));
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":1.5}"));
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":\"1\"}"));
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":9007199254740992}"));
	CHECK(refused("{\"type\":\"heartbeat\",\"seq\":1,\"extra\":true}"));
	CHECK(refused("{\"type\":\"heartbeat\"}"));
	CHECK(!refused("{\"type\":\"heartbeat\",\"seq\":9007199254740991}"));
	/* Host facts are capped and printable. */
	char big[600];
	snprintf(big, sizeof(big), "%s", HELLO);
	char *h = strstr(big, "web-1");
	REQUIRE(h);
	memcpy(h, "we\\nb", 5);
	CHECK(refused(big));
	/* A protocol range upside down. */
	CHECK(refused("{\"type\":\"hello\",\"agentVersion\":\"0.1.0\",\"protocolMin\":2,\"protocolMax\":1,"
		      "\"bootId\":\"b\",\"capabilities\":[]," HOST "}"));
}

TEST(error_names_the_member_never_the_value)
{
	struct sw_agent_msg m;
	char err[256];
	CHECK_INT_EQ(decode("{\"type\":\"ack\",\"id\":\"secret value!\"}", &m, err), -EINVAL);
	CHECK(strstr(err, "id") != NULL);
	CHECK(strstr(err, "secret") == NULL);
	CHECK_INT_EQ(decode("{\"type\":\"ack\",\"id\":\"a\",\"p\\u00e4ss\":1}", &m, err), -EINVAL);
	CHECK(strstr(err, "(a member)") != NULL);
}

#define CMD(kind, payload) \
	"{\"type\":\"command\",\"id\":\"c-1\",\"kind\":\"" kind "\",\"expiresAt\":1800000000000,\"payload\":" payload "}"

TEST(commands_of_the_closed_set)
{
	struct sw_agent_msg m;
	char err[256];
	REQUIRE(decode(CMD("container.create", "{\"name\":\"web-blue\",\"image\":\"steward/app:3\",\"spec\":{\"Env\":[]}}"), &m, err) == 0);
	CHECK_INT_EQ(m.kind, SW_AGENT_CMD_CONTAINER_CREATE);
	CHECK_STR_EQ(m.args.name, "web-blue");
	CHECK_STR_EQ(m.args.image, "steward/app:3");
	CHECK(json_is_object(m.args.spec));
	CHECK_INT_EQ(m.expires_at_ms, 1800000000000LL);
	sw_agent_msg_release(&m);

	CHECK(!refused(CMD("metrics.sample", "{}")));
	CHECK(!refused(CMD("port.free", "{}")));
	CHECK(refused(CMD("port.free", "{\"port\":8080}"))); /* the server picks it, not the caller */
	CHECK(!refused(CMD("container.stop", "{\"name\":\"a\",\"timeoutS\":10}")));
	CHECK(!refused(CMD("service.dump", "{\"name\":\"db\",\"engine\":\"postgres\",\"port\":5432,\"database\":\"app_db\",\"username\":\"app\",\"password\":\"pw\",\"dataDir\":\"/var/lib/postgresql/data\"}")));
	CHECK(!refused(CMD("service.restore", "{\"name\":\"db\",\"engine\":\"redis\",\"port\":5432,\"database\":\"app_db\",\"username\":\"app\",\"password\":\"pw\",\"dataDir\":\"/var/lib/postgresql/data\",\"dumpBytes\":3,\"dumpSha256\":\"ab\"}")));
	/* Outside the set, or not fitting its kind's table. */
	CHECK(refused(CMD("shell.exec", "{\"argv\":[\"sh\"]}")));
	CHECK(refused(CMD("exec", "{}")));
	CHECK(refused(CMD("container.create", "{\"name\":\"a\",\"image\":\"b\"}")));
	CHECK(refused(CMD("container.start", "{\"name\":\"a\",\"cmd\":\"x\"}")));
	CHECK(refused(CMD("container.start", "{\"name\":\"../a\"}")));
	CHECK(refused(CMD("image.remove", "{\"image\":\"UPPER\"}")));
	CHECK(refused(CMD("service.dump", "{\"name\":\"db\",\"engine\":\"bash\",\"port\":5432,\"database\":\"app_db\",\"username\":\"app\",\"password\":\"pw\",\"dataDir\":\"/var/lib/postgresql/data\"}")));
	CHECK(refused(CMD("service.dump", "{\"name\":\"db\",\"engine\":\"postgres\"}")));
	CHECK(refused(CMD("service.dump", "{\"name\":\"db\",\"engine\":\"postgres\",\"port\":5432,\"database\":\"app_db\",\"username\":\"app\",\"password\":\"pw\",\"dataDir\":\"/var/lib/postgresql/data\",\"argv\":[\"sh\"]}")));
	CHECK(refused(CMD("service.restore", "{\"name\":\"db\",\"engine\":\"postgres\",\"port\":5432,\"database\":\"app_db\",\"username\":\"app\",\"password\":\"pw\",\"dataDir\":\"/var/lib/postgresql/data\"}")));
	CHECK(refused(CMD("container.stop", "{\"name\":\"a\",\"timeoutS\":3601}")));
	CHECK(refused("{\"type\":\"command\",\"id\":\"c 1\",\"kind\":\"metrics.sample\",\"expiresAt\":1,\"payload\":{}}"));
	/* Every kind has a name that maps back to it. */
	for (unsigned k = 0; k < SW_AGENT_CMD_COUNT; k++) {
		enum sw_agent_cmd back;
		CHECK(sw_agent_cmd_from_name(sw_agent_cmd_name(k), &back) && back == k);
	}
}

#define PROBE(members) CMD("container.probe", "{" members "}")

TEST(a_probe_reaches_only_the_loopback_with_a_checked_path)
{
	struct sw_agent_msg m;
	char err[256];
	REQUIRE(decode(PROBE("\"host\":\"127.0.0.1\",\"port\":3000,\"path\":\"/health?deep=1\",\"timeoutS\":5"),
		       &m, err) == 0);
	CHECK_INT_EQ(m.kind, SW_AGENT_CMD_CONTAINER_PROBE);
	CHECK_STR_EQ(m.args.host, "127.0.0.1");
	CHECK_INT_EQ(m.args.port, 3000);
	CHECK_STR_EQ(m.args.path, "/health?deep=1");
	CHECK_INT_EQ(m.args.timeout_s, 5);
	sw_agent_msg_release(&m);
	CHECK(!refused(PROBE("\"host\":\"::1\",\"port\":65535,\"path\":\"/\",\"timeoutS\":300")));
	CHECK(!refused(PROBE("\"port\":1,\"path\":\"/\",\"timeoutS\":1"))); /* host: 127.0.0.1 */
	/* Any other host, however it is spelled. */
	static const char *const hosts[] = { "10.0.0.1", "localhost", "127.0.0.2", "0.0.0.0", "127.1",
					     "[::1]", "::ffff:127.0.0.1", "example.com", "" };
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		char s[256];
		snprintf(s, sizeof(s), PROBE("\"host\":\"%s\",\"port\":3000,\"path\":\"/\",\"timeoutS\":5"),
			 hosts[i]);
		CHECK(refused(s));
	}
	/* A port outside 1..65535. */
	CHECK(refused(PROBE("\"port\":0,\"path\":\"/\",\"timeoutS\":5")));
	CHECK(refused(PROBE("\"port\":65536,\"path\":\"/\",\"timeoutS\":5")));
	CHECK(refused(PROBE("\"port\":-1,\"path\":\"/\",\"timeoutS\":5")));
	CHECK(refused(PROBE("\"port\":\"3000\",\"path\":\"/\",\"timeoutS\":5")));
	/* A path healthCheckPath would not take: no request line can be
	 * smuggled, no other host named. */
	static const char *const paths[] = { "health", "//evil.example/x", "/a/../b", "/a\\r\\nHost: x",
					     "/a b", "http://127.0.0.1:2019/config/", "", "/a\\u0000b" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char s[256];
		snprintf(s, sizeof(s), PROBE("\"port\":3000,\"path\":\"%s\",\"timeoutS\":5"), paths[i]);
		CHECK(refused(s));
	}
	char longp[SW_HTTP_PATH_MAX_LEN + 2], s[512];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	snprintf(s, sizeof(s), PROBE("\"port\":3000,\"path\":\"%s\",\"timeoutS\":5"), longp);
	CHECK(refused(s));
	/* A timeout outside 1..300 s, a member of no probe, a missing one. */
	CHECK(refused(PROBE("\"port\":3000,\"path\":\"/\",\"timeoutS\":0")));
	CHECK(refused(PROBE("\"port\":3000,\"path\":\"/\",\"timeoutS\":301")));
	CHECK(refused(PROBE("\"port\":3000,\"path\":\"/\",\"timeoutS\":5,\"url\":\"http://x/\"")));
	CHECK(refused(PROBE("\"port\":3000,\"timeoutS\":5")));
	/* The sentence names the member, never the value. */
	CHECK_INT_EQ(decode(PROBE("\"port\":0,\"path\":\"/secret-token\",\"timeoutS\":5"), &m, err), -EINVAL);
	CHECK(strstr(err, "port") != NULL);
	CHECK(strstr(err, "secret-token") == NULL);
	/* The same bounds for the driver's callers. */
	CHECK(sw_agent_probe_valid(NULL, 8080, "/", 5, err, sizeof(err)));
	CHECK(!sw_agent_probe_valid("192.168.1.1", 8080, "/", 5, err, sizeof(err)));
	CHECK(strstr(err, "host") != NULL);
	CHECK(!sw_agent_probe_valid(NULL, 0, "/", 5, err, sizeof(err)));
	CHECK(!sw_agent_probe_valid(NULL, 8080, NULL, 5, err, sizeof(err)));
	CHECK(!sw_agent_probe_valid(NULL, 8080, "/x\r\n", 5, err, sizeof(err)));
	CHECK(!sw_agent_probe_valid(NULL, 8080, "/", 0, err, sizeof(err)));
}

TEST(a_probe_encoded_from_args_decodes_the_same)
{
	struct sw_agent_msg m = { .type = SW_AGENT_MSG_COMMAND, .id = "p-1",
				  .kind = SW_AGENT_CMD_CONTAINER_PROBE, .expires_at_ms = 5000 };
	m.args.host = "::1";
	m.args.port = 41234;
	m.args.path = "/healthz";
	m.args.timeout_s = 3;
	struct sw_buf b = { 0 };
	REQUIRE(sw_agent_msg_encode(&b, &m) == 0);
	struct sw_agent_msg d;
	char err[256];
	REQUIRE(sw_agent_msg_decode(b.data, b.len, &d, err, sizeof(err)) == 0);
	CHECK_STR_EQ(d.args.host, "::1");
	CHECK_INT_EQ(d.args.port, 41234);
	CHECK_STR_EQ(d.args.path, "/healthz");
	CHECK_INT_EQ(d.args.timeout_s, 3);
	sw_agent_msg_release(&d);
	b.len = 0;
	m.args.path = "no-slash"; /* refused by the encoder too */
	CHECK_INT_EQ(sw_agent_msg_encode(&b, &m), -EINVAL);
	sw_buf_release(&b);
}

TEST(lists_name_their_application)
{
	struct sw_agent_msg m;
	char err[256];
	const char *app = "0b6c7b2a-8d2a-4a57-9d7e-3f0b6c7b2a11";
	REQUIRE(decode(CMD("volume.list", "{\"applicationId\":\"0b6c7b2a-8d2a-4a57-9d7e-3f0b6c7b2a11\"}"), &m,
		       err) == 0);
	CHECK_INT_EQ(m.kind, SW_AGENT_CMD_VOLUME_LIST);
	CHECK_STR_EQ(m.args.application_id, app);
	sw_agent_msg_release(&m);
	REQUIRE(decode(CMD("container.list", "{\"applicationId\":\"0b6c7b2a-8d2a-4a57-9d7e-3f0b6c7b2a11\"}"),
		       &m, err) == 0);
	CHECK_STR_EQ(m.args.application_id, app);
	sw_agent_msg_release(&m);
	CHECK(!refused(CMD("image.list", "{\"applicationId\":\"a-1\"}")));
	CHECK(!refused(CMD("container.list", "{}")));
	CHECK(refused(CMD("volume.list", "{\"applicationId\":\"a b\"}")));
	CHECK(refused(CMD("volume.list", "{\"name\":\"x\"}")));
}

TEST(payload_over_its_cap_is_refused)
{
	size_t n = SW_AGENT_MAX_PAYLOAD + 100;
	char *s = malloc(n + 200);
	REQUIRE(s);
	int off = sprintf(s, "{\"type\":\"command\",\"id\":\"c\",\"kind\":\"container.create\",\"expiresAt\":1,"
			  "\"payload\":{\"name\":\"a\",\"image\":\"b\",\"spec\":{\"x\":\"");
	memset(s + off, 'a', n);
	strcpy(s + off + n, "\"}}}");
	CHECK(refused(s));
	free(s);
}

TEST(command_encoded_from_args_decodes_the_same)
{
	struct sw_agent_msg m = { .type = SW_AGENT_MSG_COMMAND, .id = "cmd-42",
				  .kind = SW_AGENT_CMD_CONTAINER_LOGS, .expires_at_ms = 5000 };
	m.args.name = "web";
	m.args.follow = true;
	m.args.tail = 100;
	struct sw_buf b = { 0 };
	REQUIRE(sw_agent_msg_encode(&b, &m) == 0);
	struct sw_agent_msg d;
	char err[256];
	REQUIRE(sw_agent_msg_decode(b.data, b.len, &d, err, sizeof(err)) == 0);
	CHECK_INT_EQ(d.kind, SW_AGENT_CMD_CONTAINER_LOGS);
	CHECK_STR_EQ(d.args.name, "web");
	CHECK(d.args.follow);
	CHECK_INT_EQ(d.args.tail, 100);
	sw_agent_msg_release(&d);
	/* A required member missing: the encoder refuses before the peer would. */
	b.len = 0;
	m.args.name = NULL;
	CHECK_INT_EQ(sw_agent_msg_encode(&b, &m), -EINVAL);
	CHECK_INT_EQ(b.len, 0);
	sw_buf_release(&b);
}

TEST(result_ok_and_error_go_together)
{
	CHECK(!refused("{\"type\":\"result\",\"id\":\"c\",\"ok\":true,\"result\":{\"exists\":true}}"));
	CHECK(!refused("{\"type\":\"result\",\"id\":\"c\",\"ok\":false,\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no such image\"}}"));
	CHECK(refused("{\"type\":\"result\",\"id\":\"c\",\"ok\":false}"));
	CHECK(refused("{\"type\":\"result\",\"id\":\"c\",\"ok\":true,\"error\":{\"code\":\"X\",\"message\":\"m\"}}"));
	CHECK(refused("{\"type\":\"result\",\"id\":\"c\",\"ok\":false,\"error\":{\"code\":\"lower\",\"message\":\"m\"}}"));
	CHECK(refused("{\"type\":\"progress\",\"id\":\"c\",\"seq\":1,\"stream\":\"tty\",\"data\":\"x\"}"));
	CHECK(!refused("{\"type\":\"progress\",\"id\":\"c\",\"seq\":1,\"stream\":\"log\",\"data\":\"Step 1/3\\r\\n\\u001b[1m\"}"));
	CHECK(refused("{\"type\":\"input\",\"id\":\"c\",\"seq\":0,\"data\":\"not base64!\"}"));
	CHECK(!refused("{\"type\":\"input\",\"id\":\"c\",\"seq\":0,\"data\":\"aGk=\",\"last\":true}"));
}

TEST(a_cancel_names_its_command_only)
{
	/* Protocol 2: the control plane's cancel of a command id. */
	struct sw_agent_msg m = { .type = SW_AGENT_MSG_CANCEL, .id = "cmd-42" };
	struct sw_buf b = { 0 };
	REQUIRE(sw_agent_msg_encode(&b, &m) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK(strstr(b.data, "\"type\":\"cancel\"") != NULL);
	b.len--;
	struct sw_agent_msg d;
	char err[256];
	REQUIRE(sw_agent_msg_decode(b.data, b.len, &d, err, sizeof(err)) == 0);
	CHECK_INT_EQ(d.type, SW_AGENT_MSG_CANCEL);
	CHECK_STR_EQ(d.id, "cmd-42");
	sw_agent_msg_release(&d);
	sw_buf_release(&b);
	CHECK(refused("{\"type\":\"cancel\"}"));
	CHECK(refused("{\"type\":\"cancel\",\"id\":\"c\",\"reason\":\"x\"}"));
	/* The other protocol 1 ranges still meet ours: a welcome of 1. */
	struct sw_agent_msg h = { .type = SW_AGENT_MSG_HELLO, .protocol_min = 1, .protocol_max = 1 };
	uint64_t v = 0;
	CHECK(sw_agent_protocol_choose(&h, &v));
	CHECK_INT_EQ(v, 1);
}

TEST(digest_ignores_key_order_and_sees_payload_changes)
{
	struct sw_agent_msg a, b, c;
	char err[256];
	REQUIRE(decode(CMD("container.stop", "{\"name\":\"a\",\"timeoutS\":10}"), &a, err) == 0);
	REQUIRE(decode(CMD("container.stop", "{\"timeoutS\":10,\"name\":\"a\"}"), &b, err) == 0);
	REQUIRE(decode(CMD("container.stop", "{\"timeoutS\":11,\"name\":\"a\"}"), &c, err) == 0);
	uint8_t da[32], db[32], dc[32];
	REQUIRE(sw_agent_cmd_digest(&a, da) == 0);
	REQUIRE(sw_agent_cmd_digest(&b, db) == 0);
	REQUIRE(sw_agent_cmd_digest(&c, dc) == 0);
	CHECK(memcmp(da, db, 32) == 0);
	CHECK(memcmp(da, dc, 32) != 0);
	sw_agent_msg_release(&a);
	sw_agent_msg_release(&b);
	sw_agent_msg_release(&c);
}

TEST(a_resent_chunk_is_dropped_and_a_gap_is_seen)
{
	struct sw_agent_seq s = { 0 };
	CHECK_INT_EQ(sw_agent_seq_check(&s, 0), SW_AGENT_SEQ_TAKE);
	CHECK_INT_EQ(sw_agent_seq_check(&s, 1), SW_AGENT_SEQ_TAKE);
	CHECK_INT_EQ(sw_agent_seq_check(&s, 1), SW_AGENT_SEQ_DUPLICATE);
	CHECK_INT_EQ(sw_agent_seq_check(&s, 0), SW_AGENT_SEQ_DUPLICATE);
	CHECK_INT_EQ(sw_agent_seq_check(&s, 3), SW_AGENT_SEQ_GAP);
	CHECK_INT_EQ(sw_agent_seq_check(&s, 2), SW_AGENT_SEQ_TAKE);
	CHECK_INT_EQ(s.next, 3);
}

TEST(the_welcome_picks_the_highest_common_version)
{
	struct sw_agent_msg h = { .type = SW_AGENT_MSG_HELLO, .protocol_min = 1, .protocol_max = 9 };
	uint64_t v = 0;
	CHECK(sw_agent_protocol_choose(&h, &v));
	CHECK_INT_EQ(v, SW_AGENT_PROTOCOL_MAX);
	h.protocol_min = SW_AGENT_PROTOCOL_MAX + 1;
	CHECK(!sw_agent_protocol_choose(&h, &v));
	h.protocol_min = 0;
	h.protocol_max = 0;
	CHECK(!sw_agent_protocol_choose(&h, &v));
}
