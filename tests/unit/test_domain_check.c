/* Domain verification's parsers (domain_check.h): DNS answer sections
 * (names skipped, compression pointers not followed, every length bounded
 * by the message), TXT values joined from character-strings, the HTTP
 * answer to the challenge, and the settings read from the environment.
 * The resolver and sockets themselves are exercised end to end by
 * tests/integration/domains.test.mjs. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include "steward/net/domain_check.h"
#include "test_help.h"

#define TOKEN "5f2b7c0e8d9a41b3a6c4e2f1d0b9a8c7e6f5d4c3b2a1908f7e6d5c4b3a291807"

/* A DNS response under construction. */
struct msg {
	uint8_t b[1024];
	size_t n;
};

static void put(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put16(struct msg *m, unsigned v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	put(m, x, 2);
}

/* A header with qd questions and an answers, then the question
 * "_steward-challenge.example.com" TXT IN. */
static void begin(struct msg *m, unsigned qd, unsigned an)
{
	static const uint8_t name[] = "\x12_steward-challenge\x07" "example\x03" "com";
	m->n = 0;
	put16(m, 0x1234);
	put16(m, 0x8180);
	put16(m, qd);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
	for (unsigned i = 0; i < qd; i++) {
		put(m, name, sizeof(name)); /* with its zero byte */
		put16(m, SW_DNS_TYPE_TXT);
		put16(m, 1);
	}
}

/* An answer record named by a pointer to the question's name. */
static void answer(struct msg *m, unsigned type, const void *rdata, size_t rdlen)
{
	put16(m, 0xC00C);
	put16(m, type);
	put16(m, 1);
	put16(m, 0);
	put16(m, 60);
	put16(m, (unsigned)rdlen);
	put(m, rdata, rdlen);
}

TEST(answers_are_read_after_the_questions)
{
	struct msg m;
	struct sw_dns_rr rr[4];
	size_t n;
	static const uint8_t a[4] = { 203, 0, 113, 7 };
	begin(&m, 1, 2);
	answer(&m, SW_DNS_TYPE_TXT, "\x02hi", 3);
	answer(&m, SW_DNS_TYPE_A, a, 4);
	REQUIRE(sw_dns_answers(m.b, m.n, rr, 4, &n) == 0);
	REQUIRE(n == 2);
	CHECK_INT_EQ(rr[0].type, SW_DNS_TYPE_TXT);
	CHECK_INT_EQ(rr[0].rdlen, 3);
	CHECK_INT_EQ(rr[1].type, SW_DNS_TYPE_A);
	CHECK(memcmp(rr[1].rdata, a, 4) == 0);
}

TEST(at_most_cap_records_are_given)
{
	struct msg m;
	struct sw_dns_rr rr[2];
	size_t n;
	begin(&m, 1, 3);
	for (int i = 0; i < 3; i++)
		answer(&m, SW_DNS_TYPE_TXT, "\x01x", 2);
	CHECK(sw_dns_answers(m.b, m.n, rr, 2, &n) == 0);
	CHECK_INT_EQ(n, 2);
}

TEST(a_message_cut_short_is_ebadmsg_with_the_records_before_the_cut)
{
	struct msg m;
	struct sw_dns_rr rr[4];
	size_t n;
	begin(&m, 1, 2);
	answer(&m, SW_DNS_TYPE_TXT, "\x02hi", 3);
	size_t first = m.n;
	answer(&m, SW_DNS_TYPE_TXT, "\x05hello", 6);
	for (size_t cut = first; cut < m.n; cut++) {
		CHECK(sw_dns_answers(m.b, cut, rr, 4, &n) == -EBADMSG);
		CHECK_INT_EQ(n, 1);
	}
	CHECK(sw_dns_answers(m.b, 11, rr, 4, &n) == -EBADMSG);
	CHECK_INT_EQ(n, 0);
}

TEST(a_record_longer_than_the_message_is_refused)
{
	struct msg m;
	struct sw_dns_rr rr[1];
	size_t n;
	begin(&m, 1, 1);
	answer(&m, SW_DNS_TYPE_TXT, "\x02hi", 3);
	m.b[m.n - 4] = 0x7f; /* rdlength 127, with 3 bytes left */
	CHECK(sw_dns_answers(m.b, m.n, rr, 1, &n) == -EBADMSG);
	CHECK_INT_EQ(n, 0);
}

TEST(pointer_loops_and_reserved_labels_cost_nothing)
{
	struct msg m;
	struct sw_dns_rr rr[1];
	size_t n;
	m.n = 0;
	put16(&m, 1);
	put16(&m, 0x8180);
	put16(&m, 0);
	put16(&m, 1);
	put16(&m, 0);
	put16(&m, 0);
	put16(&m, 0xC00C); /* a name pointing at itself: skipped, never followed */
	put16(&m, SW_DNS_TYPE_TXT);
	put16(&m, 1);
	put16(&m, 0);
	put16(&m, 60);
	put16(&m, 2);
	put(&m, "\x01x", 2);
	CHECK(sw_dns_answers(m.b, m.n, rr, 1, &n) == 0);
	CHECK_INT_EQ(n, 1);
	m.b[12] = 0x40; /* a reserved label type */
	CHECK(sw_dns_answers(m.b, m.n, rr, 1, &n) == -EBADMSG);
}

static struct sw_dns_rr txt(const char *rdata, size_t n)
{
	return (struct sw_dns_rr){ SW_DNS_TYPE_TXT, (uint16_t)n, (const uint8_t *)rdata };
}

TEST(txt_strings_are_joined_and_compared_whole)
{
	struct sw_dns_rr one = txt("\x05hello", 6), two = txt("\x03hel\x02lo", 7);
	CHECK(sw_dns_txt_equals(&one, "hello"));
	CHECK(sw_dns_txt_equals(&two, "hello"));
	CHECK(!sw_dns_txt_equals(&one, "hell"));
	CHECK(!sw_dns_txt_equals(&one, "hello!"));
	CHECK(!sw_dns_txt_equals(&two, "helLo"));
	struct sw_dns_rr empty = txt("\x00", 1), none = txt("", 0);
	CHECK(sw_dns_txt_equals(&empty, ""));
	CHECK(sw_dns_txt_equals(&none, ""));
}

TEST(txt_rdata_whose_lengths_overrun_is_not_equal)
{
	struct sw_dns_rr bad = txt("\x09hello", 6);
	CHECK(!sw_dns_txt_equals(&bad, "hello"));
	struct sw_dns_rr a = { SW_DNS_TYPE_A, 6, (const uint8_t *)"\x05hello" };
	CHECK(!sw_dns_txt_equals(&a, "hello"));
}

static bool answer_ok(const char *resp, char *why)
{
	return sw_http_challenge_answer_ok(resp, strlen(resp), TOKEN, why, 120);
}

TEST(a_200_with_the_token_proves_it)
{
	char why[120];
	CHECK(answer_ok("HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n" TOKEN, why));
	CHECK(answer_ok("HTTP/1.0 200 OK\r\n\r\n \r\n" TOKEN "\n\n", why));
	CHECK(answer_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			"20\r\n" "5f2b7c0e8d9a41b3a6c4e2f1d0b9a8c7\r\n"
			"21\r\n" "e6f5d4c3b2a1908f7e6d5c4b3a291807\n\r\n0\r\n\r\n", why));
	/* Bytes past Content-Length are not the body. */
	CHECK(answer_ok("HTTP/1.1 200 OK\r\ncontent-length: 64\r\n\r\n" TOKEN "trailing", why));
}

TEST(anything_else_says_why)
{
	char why[120];
	CHECK(!answer_ok("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", why));
	CHECK_STR_EQ(why, "answered HTTP 404");
	CHECK(!answer_ok("HTTP/1.1 301 Moved\r\nLocation: https://x/\r\n\r\n", why));
	CHECK_STR_EQ(why, "answered HTTP 301 (redirects are not followed)");
	CHECK(!answer_ok("SSH-2.0-OpenSSH_9.2\r\n", why));
	CHECK_STR_EQ(why, "did not answer in HTTP/1.x");
	CHECK(!answer_ok("", why));
	CHECK(!answer_ok("HTTP/1.1 200 OK\r\nContent-Length: 64\r\n", why));
	CHECK_STR_EQ(why, "answered with a head that is incomplete or too large");
	CHECK(!answer_ok("HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n" TOKEN, why));
	CHECK_STR_EQ(why, "answered with a body that is incomplete or too large");
	CHECK(!answer_ok("HTTP/1.1 200 OK\r\n\r\n" TOKEN "x", why));
	CHECK_STR_EQ(why, "answered 200, but its body is not the token");
	CHECK(!answer_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", why));
	CHECK_STR_EQ(why, "answered with an incomplete or malformed chunked body");
	CHECK(!answer_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" TOKEN "\r\n", why));
}

TEST(settings_come_from_the_environment)
{
	struct sw_domain_check_settings s;
	char err[160];
	unsetenv("DOMAIN_VERIFY_NAMESERVER");
	unsetenv("DOMAIN_VERIFY_HTTP_PORT");
	REQUIRE(sw_domain_check_settings_load(&s, err, sizeof(err)) == 0);
	CHECK(!s.has_nameserver);
	CHECK_INT_EQ(s.http_port, 80);
	CHECK(!s.allow_private);
	setenv("DOMAIN_VERIFY_NAMESERVER", "127.0.0.1:5353", 1);
	setenv("DOMAIN_VERIFY_HTTP_PORT", "8080", 1);
	REQUIRE(sw_domain_check_settings_load(&s, err, sizeof(err)) == 0);
	CHECK(s.has_nameserver);
	CHECK_INT_EQ(ntohs(s.nameserver.sin_port), 5353);
	CHECK_INT_EQ(ntohl(s.nameserver.sin_addr.s_addr), 0x7f000001);
	CHECK_INT_EQ(s.http_port, 8080);
	setenv("DOMAIN_VERIFY_NAMESERVER", "10.0.0.53", 1);
	REQUIRE(sw_domain_check_settings_load(&s, err, sizeof(err)) == 0);
	CHECK_INT_EQ(ntohs(s.nameserver.sin_port), 53);
	static const char *const bad_ns[] = { "::1", "[::1]:53", "dns.example", "127.0.0.1:0",
					      "127.0.0.1:65536", "127.0.0.1:", "127.0.0.1:053" };
	for (size_t i = 0; i < sizeof(bad_ns) / sizeof(bad_ns[0]); i++) {
		setenv("DOMAIN_VERIFY_NAMESERVER", bad_ns[i], 1);
		CHECK(sw_domain_check_settings_load(&s, err, sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "DOMAIN_VERIFY_NAMESERVER") != NULL);
	}
	unsetenv("DOMAIN_VERIFY_NAMESERVER");
	setenv("DOMAIN_VERIFY_HTTP_PORT", "http", 1);
	CHECK(sw_domain_check_settings_load(&s, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "DOMAIN_VERIFY_HTTP_PORT") != NULL);
	unsetenv("DOMAIN_VERIFY_HTTP_PORT");
}

TEST_MAIN()
