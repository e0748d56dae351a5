/* Mail settings and message formatting: what SMTP_URL and SMTP_FROM
 * accept, that no error quotes a password, and that nothing a caller
 * passes can add a header line or break the message's line rules.
 * (Delivery itself is covered by tests/integration/password_reset.) */
#include <errno.h>
#include <stdlib.h>
#include "steward/base/buf.h"
#include "steward/net/mail.h"
#include "test_help.h"

/* 2026-11-21T16:22:35Z */
#define WALL_MS 1795278155000ull

static int parse(const char *url, const char *from, struct sw_mail_settings *s, char *err, size_t n)
{
	memset(s, 0, sizeof(*s));
	err[0] = '\0';
	return sw_mail_settings_parse(url, from, s, err, n);
}

TEST(smtp_url_with_credentials_is_accepted_and_shown_without_them)
{
	struct sw_mail_settings s;
	char err[256];
	REQUIRE(parse("smtp://mailer:p%40ss@mail.example.com:2525", NULL, &s, err, sizeof(err)) == 0);
	CHECK_STR_EQ(s.url, "smtp://mailer:p%40ss@mail.example.com:2525");
	CHECK_STR_EQ(s.server, "smtp://mail.example.com:2525");
	CHECK_STR_EQ(s.from, SW_MAIL_DEFAULT_FROM);
}

TEST(default_ports_are_25_for_smtp_and_465_for_smtps)
{
	struct sw_mail_settings s;
	char err[256];
	REQUIRE(parse("smtp://127.0.0.1", "", &s, err, sizeof(err)) == 0);
	CHECK_STR_EQ(s.server, "smtp://127.0.0.1:25");
	REQUIRE(parse("smtps://u:p@[::1]", "Sender@Example.COM", &s, err, sizeof(err)) == 0);
	CHECK_STR_EQ(s.server, "smtps://[::1]:465");
	CHECK_STR_EQ(s.from, "Sender@Example.COM");
}

TEST(other_schemes_and_broken_urls_are_refused_without_quoting_the_password)
{
	static const char *const bad[] = {
		"http://user:hunter2@mail.example.com",
		"smtp://user:hunter2@",
		"smtp://user:hunter2@mail.example.com:99999",
		"smtp://user:hunter2@mail.example.com/?x=1",
		"smtp://user:hunter2@mail.example.com/#frag",
		"smtp://user:hunter2@mail example.com",
		"smtp://user:hunter2@mail.example.com\r\nRCPT TO:<x@y.z>",
		"file:///etc/hunter2",
		"mail.example.com:25",
		"",
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		struct sw_mail_settings s;
		char err[256];
		int r = parse(bad[i], NULL, &s, err, sizeof(err));
		CHECK_INT_EQ(r, -EINVAL);
		CHECK(strstr(err, "SMTP_URL") != NULL);
		CHECK(strstr(err, "hunter2") == NULL);
		if (r != -EINVAL)
			fprintf(stderr, "  accepted: %s\n", bad[i]);
	}
}

TEST(an_invalid_smtp_from_is_refused)
{
	struct sw_mail_settings s;
	char err[256];
	CHECK_INT_EQ(parse("smtp://127.0.0.1", "not an address", &s, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "SMTP_FROM") != NULL);
	CHECK_INT_EQ(parse("smtp://127.0.0.1", "a@b.example\r\nBcc: x@y.example", &s, err, sizeof(err)),
		     -EINVAL);
}

TEST(a_message_has_its_headers_then_the_text_with_crlf_line_ends)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_mail_format(&b, "noreply@steward.test", "ann@example.com", "Reset your password",
			       "Hello,\n\nline two\r\nlast", WALL_MS, "abc123") == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data,
		     "Date: Sat, 21 Nov 2026 16:22:35 +0000\r\n"
		     "From: Steward <noreply@steward.test>\r\n"
		     "To: <ann@example.com>\r\n"
		     "Subject: Reset your password\r\n"
		     "Message-ID: <abc123@steward.test>\r\n"
		     "MIME-Version: 1.0\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Content-Transfer-Encoding: 8bit\r\n"
		     "\r\n"
		     "Hello,\r\n\r\nline two\r\nlast\r\n");
	sw_buf_release(&b);
}

TEST(nothing_a_caller_passes_can_add_a_header)
{
	struct sw_buf b = { 0 };
	static const char *const subjects[] = { "Hi\r\nBcc: x@y.example", "Hi\nBcc: x@y.example", "", "tab\there" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(subjects); i++)
		CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", subjects[i], "x", WALL_MS, "id"),
			     -EINVAL);
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example\r\nBcc: x@y.example", "s", "x", WALL_MS, "id"),
		     -EINVAL);
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example>, <x@y.example", "c@d.example", "s", "x", WALL_MS, "id"),
		     -EINVAL);
	static const char *const addresses[] = { "a..b@d.example", ".a@d.example", "a.@d.example", "a@-d.example",
						 "a@d-.example", "a@d..example", "a@", "@d.example", "a b@d.example",
						 "a@d.example.", "<a@d.example>", "a@[127.0.0.1]" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(addresses); i++)
		CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", addresses[i], "s", "x", WALL_MS, "id"), -EINVAL);
	CHECK_INT_EQ(sw_mail_format(&b, "steward@localhost", "o'neil+tag@d.example", "s", "x", WALL_MS, "id"), 0);
	b.len = 0;
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", "x", WALL_MS, "i>d"), -EINVAL);
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", "x", WALL_MS, ""), -EINVAL);
	char subject[SW_MAIL_MAX_SUBJECT + 2];
	memset(subject, 's', sizeof(subject) - 1);
	subject[sizeof(subject) - 1] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", subject, "x", WALL_MS, "id"), -EINVAL);
	subject[SW_MAIL_MAX_SUBJECT] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", subject, "x", WALL_MS, "id"), 0);
	sw_buf_release(&b);
}

TEST(text_with_a_bare_cr_or_an_overlong_line_or_too_many_bytes_is_refused)
{
	struct sw_buf b = { 0 };
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", "one\rtwo", WALL_MS, "id"), -EINVAL);
	CHECK_INT_EQ(b.len, 0u); /* unchanged on error */
	char *line = malloc(SW_MAIL_MAX_LINE + 2);
	REQUIRE(line);
	memset(line, 'x', SW_MAIL_MAX_LINE);
	line[SW_MAIL_MAX_LINE] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", line, WALL_MS, "id"), 0);
	b.len = 0;
	line[SW_MAIL_MAX_LINE] = 'x';
	line[SW_MAIL_MAX_LINE + 1] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", line, WALL_MS, "id"), -EINVAL);
	free(line);
	char *big = malloc(SW_MAIL_MAX_TEXT + 2);
	REQUIRE(big);
	for (size_t i = 0; i <= SW_MAIL_MAX_TEXT; i++)
		big[i] = i % 80 == 79 ? '\n' : 'y';
	big[SW_MAIL_MAX_TEXT + 1] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", big, WALL_MS, "id"), -EINVAL);
	big[SW_MAIL_MAX_TEXT] = '\0';
	CHECK_INT_EQ(sw_mail_format(&b, "a@b.example", "c@d.example", "s", big, WALL_MS, "id"), 0);
	free(big);
	sw_buf_release(&b);
}

TEST(without_smtp_url_nothing_is_sent)
{
	unsetenv("SMTP_URL"); /* read once, at first use: this is the first */
	CHECK(!sw_mail_configured());
	CHECK_INT_EQ(sw_mail_send("a@b.example", "s", "x"), -ENOTCONN);
}

TEST_MAIN()
