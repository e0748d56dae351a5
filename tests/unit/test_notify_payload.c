/* Notification bodies and signatures: the signature matches an HMAC
 * computed independently (OpenSSL's one-shot HMAC over the documented
 * string), each kind's body has its documented shape with the text
 * escaped, and ids are version 4 UUIDs. */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "steward/base/validate.h"
#include "steward/notify/notify.h"
#include "test_help.h"

static const struct sw_notify_event event = {
	.delivery_id = "0b6f1c1e-2f4a-4c1e-9a57-3f0e3e7a9c11",
	.type = "channel.test",
	.wall_ms = 1795278155123ull, /* 2026-11-21T16:22:35.123Z */
	.title = "Disk <full> & \"hot\"",
	.text = "line one\nline two @everyone",
	.data_json = "{\"channelId\":\"x\"}",
};

static char *payload(enum sw_notify_kind kind, const struct sw_notify_event *ev, struct sw_buf *b)
{
	memset(b, 0, sizeof(*b));
	if (sw_notify_payload(b, kind, ev) != 0 || sw_buf_append(b, "", 1) != 0)
		return NULL;
	return (char *)b->data;
}

TEST(signature_is_hmac_sha256_over_timestamp_dot_body_in_hex)
{
	const char *key = "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-8";
	const char *body = "{\"id\":\"1\"}";
	char sig[SW_NOTIFY_SIGNATURE_LEN + 1];
	REQUIRE(sw_notify_sign(sw_str_cstr(key), 1795278155, sw_str_cstr(body), sig) == 0);
	unsigned char mac[32];
	unsigned int n = 0;
	const char *msg = "1795278155.{\"id\":\"1\"}";
	HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)msg, strlen(msg), mac, &n);
	REQUIRE(n == 32);
	char want[SW_NOTIFY_SIGNATURE_LEN + 1] = "v1=";
	for (unsigned i = 0; i < n; i++)
		snprintf(want + 3 + 2 * i, 3, "%02x", mac[i]);
	CHECK_STR_EQ(sig, want);
	CHECK_INT_EQ(strlen(sig), SW_NOTIFY_SIGNATURE_LEN);
}

TEST(signature_changes_with_timestamp_body_and_key)
{
	char a[SW_NOTIFY_SIGNATURE_LEN + 1], b[SW_NOTIFY_SIGNATURE_LEN + 1];
	REQUIRE(sw_notify_sign(sw_str_cstr("k"), 1, sw_str_cstr("x"), a) == 0);
	REQUIRE(sw_notify_sign(sw_str_cstr("k"), 2, sw_str_cstr("x"), b) == 0);
	CHECK(strcmp(a, b) != 0);
	REQUIRE(sw_notify_sign(sw_str_cstr("k"), 1, sw_str_cstr("y"), b) == 0);
	CHECK(strcmp(a, b) != 0);
	REQUIRE(sw_notify_sign(sw_str_cstr("K"), 1, sw_str_cstr("x"), b) == 0);
	CHECK(strcmp(a, b) != 0);
}

TEST(webhook_body_is_the_event_with_its_data)
{
	struct sw_buf b;
	char *s = payload(SW_NOTIFY_WEBHOOK, &event, &b);
	REQUIRE(s);
	CHECK_STR_EQ(s, "{\"id\":\"0b6f1c1e-2f4a-4c1e-9a57-3f0e3e7a9c11\",\"type\":\"channel.test\","
			"\"createdAt\":\"2026-11-21T16:22:35.123Z\","
			"\"title\":\"Disk <full> & \\\"hot\\\"\","
			"\"text\":\"line one\\nline two @everyone\",\"data\":{\"channelId\":\"x\"}}");
	sw_buf_release(&b);
	struct sw_notify_event no_data = event;
	no_data.data_json = NULL;
	s = payload(SW_NOTIFY_WEBHOOK, &no_data, &b);
	CHECK(s && strstr(s, "\"data\":null}"));
	sw_buf_release(&b);
}

TEST(slack_body_escapes_its_control_characters)
{
	struct sw_buf b;
	char *s = payload(SW_NOTIFY_SLACK, &event, &b);
	REQUIRE(s);
	CHECK_STR_EQ(s, "{\"text\":\"*Disk &lt;full&gt; &amp; \\\"hot\\\"*\\nline one\\nline two "
			"@everyone\"}");
	sw_buf_release(&b);
}

TEST(discord_body_allows_no_mentions)
{
	struct sw_buf b;
	char *s = payload(SW_NOTIFY_DISCORD, &event, &b);
	REQUIRE(s);
	CHECK_STR_EQ(s, "{\"content\":\"**Disk <full> & \\\"hot\\\"**\\nline one\\nline two "
			"@everyone\",\"allowed_mentions\":{\"parse\":[]}}");
	sw_buf_release(&b);
}

TEST(discord_content_is_cut_to_2000_whole_characters)
{
	static char text[3000 * 2 + 1];
	for (int i = 0; i < 3000; i++)
		memcpy(text + 2 * i, "\xc3\xa9", 2); /* é */
	struct sw_notify_event ev = event;
	ev.title = "t";
	ev.text = text;
	struct sw_buf b;
	char *s = payload(SW_NOTIFY_DISCORD, &ev, &b);
	REQUIRE(s);
	/* "**t**\n" is 6 characters (the newline escaped as 2 bytes): 1994 é. */
	const char *start = strstr(s, "\\n") + 2, *end = strstr(start, "\"");
	REQUIRE(end);
	CHECK_INT_EQ(end - start, 1994 * 2);
	sw_buf_release(&b);
}

TEST(payload_refuses_a_missing_member_or_data_that_is_not_an_object)
{
	struct sw_buf b = { 0 };
	struct sw_notify_event ev = event;
	ev.title = NULL;
	CHECK_INT_EQ(sw_notify_payload(&b, SW_NOTIFY_WEBHOOK, &ev), -EINVAL);
	ev = event;
	ev.data_json = "[1]";
	CHECK_INT_EQ(sw_notify_payload(&b, SW_NOTIFY_WEBHOOK, &ev), -EINVAL);
	CHECK_INT_EQ(b.len, 0);
	sw_buf_release(&b);
}

TEST(uuids_are_version_4_and_distinct)
{
	char a[37], b[37];
	REQUIRE(sw_notify_uuid(a) == 0 && sw_notify_uuid(b) == 0);
	CHECK(sw_is_uuid(sw_str_cstr(a)));
	CHECK(strcmp(a, b) != 0);
	CHECK(a[14] == '4');
	CHECK(strchr("89ab", a[19]) != NULL);
}

TEST(retry_base_defaults_to_one_second)
{
	unsetenv("NOTIFY_RETRY_BASE_MS");
	CHECK_INT_EQ(sw_notify_retry_base_ms(), SW_NOTIFY_RETRY_BASE_MS);
	CHECK_INT_EQ(SW_NOTIFY_RETRY_BASE_MS, 1000);
}

TEST(a_post_with_a_bad_url_or_body_is_refused_before_queueing)
{
	struct sw_notify_request r = {
		.channel_id = "c", .delivery_id = "d", .event_type = "channel.test",
		.url = "ftp://example.com/", .body = sw_str_cstr("{}"),
	};
	CHECK_INT_EQ(sw_notify_post(&r), -EINVAL);
	r.url = "https://example.com/hook";
	static char big[SW_NOTIFY_MAX_BODY + 1];
	r.body = sw_str_from(big, sizeof(big));
	CHECK_INT_EQ(sw_notify_post(&r), -EINVAL);
}

TEST_MAIN()
