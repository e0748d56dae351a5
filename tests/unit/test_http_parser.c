/* The strict request-head parser: what it accepts, every refusal named in
 * include/steward/http_parser.h, each limit crossed at its boundary, and
 * the promise that feeding a request in pieces answers like feeding it at
 * once. */
#include <errno.h>
#include <stdlib.h>
#include "steward/http/http_parser.h"
#include "test_help.h"

static struct sw_http_head H; /* 3 KB: keep it off the stack */
static size_t last_consumed;   /* set by PARSE_OK */

struct outcome {
	int rc;
	size_t consumed;
	struct sw_http_parse_error err;
};

static struct outcome parse_buf(const char *buf, size_t len)
{
	struct outcome o = { 0 };
	o.rc = sw_http_parse_head(buf, len, 0, &H, &o.consumed, &o.err);
	return o;
}

/* Feeds buf one byte more per call with prev_len, like a slow client; the
 * first answer other than -EAGAIN, or -EAGAIN when the bytes run out. */
static struct outcome parse_bytewise(const char *buf, size_t len)
{
	struct outcome o = { .rc = -EAGAIN };
	for (size_t n = 1; n <= len; n++) {
		o.rc = sw_http_parse_head(buf, n, n - 1, &H, &o.consumed, &o.err);
		if (o.rc != -EAGAIN)
			break;
	}
	return o;
}

/* A buffer the exact size of the input, so ASan sees any over-read. */
static char *dup_exact(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);
	if (p)
		memcpy(p, s, n);
	return p;
}

static bool same_outcome(struct outcome a, struct outcome b)
{
	if (a.rc != b.rc)
		return false;
	if (a.rc == 0)
		return a.consumed == b.consumed;
	if (a.rc == -EBADMSG)
		return a.err.status == b.err.status && strcmp(a.err.code, b.err.code) == 0 &&
		       strcmp(a.err.message, b.err.message) == 0;
	return true;
}

/* One-shot and byte-by-byte must both refuse, with the same answer. */
static void check_refused(int *sw_failed_, const char *req, size_t len, int status,
			  const char *code, const char *msg_part)
{
	char *b = dup_exact(req, len);
	REQUIRE(b);
	struct outcome one = parse_buf(b, len);
	struct outcome slow = parse_bytewise(b, len);
	free(b);
	CHECK_INT_EQ(one.rc, -EBADMSG);
	if (one.rc != -EBADMSG)
		return;
	CHECK_INT_EQ(one.err.status, status);
	CHECK_STR_EQ(one.err.code, code);
	CHECK(one.err.message && one.err.message[0]);
	if (msg_part && !strstr(one.err.message, msg_part)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", one.err.message, msg_part);
		*sw_failed_ = 1;
	}
	CHECK(same_outcome(one, slow));
}

#define REFUSED(req, status, code, part) \
	check_refused(sw_failed_, (req), sizeof(req) - 1, (status), (code), (part))
#define BAD400(req, part) REFUSED(req, 400, "MALFORMED_REQUEST", part)

/* Parses a complete head; the byte-by-byte answer must be the same. */
static int parse_ok(int *sw_failed_, const char *req, size_t len)
{
	char *b = dup_exact(req, len);
	if (!b) {
		*sw_failed_ = 1;
		return -ENOMEM;
	}
	struct outcome slow = parse_bytewise(b, len);
	struct outcome one = parse_buf(b, len);
	free(b);
	if (one.rc != 0) {
		fprintf(stderr, "  parse failed: rc=%d status=%d message=%s\n", one.rc,
			one.rc == -EBADMSG ? one.err.status : 0,
			one.rc == -EBADMSG ? one.err.message : "-");
		*sw_failed_ = 1;
		return one.rc;
	}
	CHECK(same_outcome(one, slow));
	return 0;
}

/* H's views point into a freed copy after parse_ok, so reparse in place
 * from the caller's literal for field checks. */
#define PARSE_OK(req)                                                        \
	do {                                                                 \
		REQUIRE(parse_ok(sw_failed_, (req), sizeof(req) - 1) == 0);  \
		struct outcome o_ = parse_buf((req), sizeof(req) - 1);       \
		REQUIRE(o_.rc == 0);                                         \
		last_consumed = o_.consumed;                                      \
	} while (0)

static bool str_is(struct sw_str s, const char *lit)
{
	return s.len == strlen(lit) && memcmp(s.ptr, lit, s.len) == 0;
}

/* ---- what is accepted ---- */

TEST(simple_get_parses_every_field)
{
	static const char req[] = "GET /health HTTP/1.1\r\nHost: localhost:8080\r\nAccept: */*\r\n\r\n";
	PARSE_OK(req);
	CHECK_INT_EQ(last_consumed, sizeof(req) - 1);
	CHECK(H.method == SW_HTTP_GET);
	CHECK(str_is(H.method_str, "GET"));
	CHECK(str_is(H.target, "/health"));
	CHECK(str_is(H.path, "/health"));
	CHECK_INT_EQ(H.query.len, 0);
	CHECK_INT_EQ(H.version_minor, 1);
	CHECK_INT_EQ(H.header_count, 2);
	CHECK(str_is(H.headers[0].name, "Host"));
	CHECK(str_is(H.headers[0].value, "localhost:8080"));
	CHECK(str_is(H.headers[1].name, "Accept"));
	CHECK(str_is(H.headers[1].value, "*/*"));
	CHECK(str_is(H.host, "localhost:8080"));
	CHECK(H.body_kind == SW_HTTP_BODY_NONE);
	CHECK(H.keep_alive);
	CHECK(!H.expect_continue);
}

TEST(query_is_split_from_path_at_first_question_mark)
{
	PARSE_OK("GET /a/b?x=1&y=?2 HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(str_is(H.target, "/a/b?x=1&y=?2"));
	CHECK(str_is(H.path, "/a/b"));
	CHECK(str_is(H.query, "x=1&y=?2"));
}

TEST(empty_query_after_question_mark)
{
	PARSE_OK("GET /a? HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(str_is(H.path, "/a"));
	CHECK_INT_EQ(H.query.len, 0);
}

TEST(known_methods_are_recognised)
{
	static const struct {
		const char *req;
		enum sw_http_method m;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_GET },
		{ "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_HEAD },
		{ "POST / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_POST },
		{ "PUT / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_PUT },
		{ "PATCH / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_PATCH },
		{ "DELETE / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_DELETE },
		{ "OPTIONS / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_OPTIONS },
		{ "BREW / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_METHOD_OTHER },
		{ "CONNECTX / HTTP/1.1\r\nHost: h\r\n\r\n", SW_HTTP_METHOD_OTHER },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		struct outcome o = parse_buf(cases[i].req, strlen(cases[i].req));
		CHECK_INT_EQ(o.rc, 0);
		CHECK_INT_EQ(H.method, cases[i].m);
	}
}

TEST(methods_are_case_sensitive)
{
	PARSE_OK("get / HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(H.method == SW_HTTP_METHOD_OTHER);
	CHECK(str_is(H.method_str, "get"));
}

TEST(token_characters_are_valid_in_a_method)
{
	PARSE_OK("M-._~!#$%&'*+^`|9 / HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(H.method == SW_HTTP_METHOD_OTHER);
}

TEST(method_names_are_the_wire_names)
{
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_GET), "GET");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_HEAD), "HEAD");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_POST), "POST");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_PUT), "PUT");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_PATCH), "PATCH");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_DELETE), "DELETE");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_OPTIONS), "OPTIONS");
	CHECK_STR_EQ(sw_http_method_name(SW_HTTP_METHOD_OTHER), "OTHER");
	CHECK(sw_http_method_name(SW_HTTP_METHOD_COUNT) == NULL);
}

TEST(head_request_parses_without_body)
{
	PARSE_OK("HEAD /health HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(H.method == SW_HTTP_HEAD);
	CHECK(H.body_kind == SW_HTTP_BODY_NONE);
}

TEST(options_asterisk_is_accepted)
{
	PARSE_OK("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(H.method == SW_HTTP_OPTIONS);
	CHECK(str_is(H.target, "*"));
	CHECK(str_is(H.path, "*"));
}

TEST(percent_encoding_with_hex_digits_is_accepted)
{
	PARSE_OK("GET /a%2Fb%c3%A9?q=%20 HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(str_is(H.path, "/a%2Fb%c3%A9"));
	CHECK(str_is(H.query, "q=%20"));
}

TEST(visible_ascii_is_accepted_in_target)
{
	PARSE_OK("GET /!\"$&'()*+,-.:;<=>@[\\]^_`{|}~ HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(str_is(H.path, "/!\"$&'()*+,-.:;<=>@[\\]^_`{|}~"));
}

TEST(header_value_is_trimmed_of_sp_and_htab)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nX-A: \t a  b \t \r\nX-B:c\r\n\r\n");
	CHECK(str_is(H.headers[1].value, "a  b"));
	CHECK(str_is(H.headers[2].value, "c"));
}

TEST(empty_header_value_is_accepted)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Blank:   \r\n\r\n");
	CHECK_INT_EQ(H.header_count, 3);
	CHECK_INT_EQ(H.headers[1].value.len, 0);
	CHECK_INT_EQ(H.headers[2].value.len, 0);
}

TEST(obs_text_is_accepted_in_header_values)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\xc3\xa9 \xff\r\n\r\n");
	CHECK(str_is(H.headers[1].value, "caf\xc3\xa9 \xff"));
}

TEST(header_names_keep_their_case_and_find_ignores_it)
{
	PARSE_OK("GET / HTTP/1.1\r\nhOsT: h\r\nX-Request-Id: abc\r\n\r\n");
	CHECK(str_is(H.headers[1].name, "X-Request-Id"));
	const struct sw_http_header *f = sw_http_head_find(&H, SW_STR("x-request-id"));
	REQUIRE(f);
	CHECK(str_is(f->value, "abc"));
	CHECK(sw_http_head_find(&H, SW_STR("HOST")) == &H.headers[0]);
	CHECK(sw_http_head_find(&H, SW_STR("x-request")) == NULL);
	CHECK(sw_http_head_find(&H, SW_STR("cookie")) == NULL);
}

TEST(find_returns_the_first_of_repeated_headers)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\naccept: b\r\n\r\n");
	const struct sw_http_header *f = sw_http_head_find(&H, SW_STR("Accept"));
	REQUIRE(f);
	CHECK(str_is(f->value, "a"));
}

TEST(every_byte_value_at_every_offset_of_a_header_value)
{
	/* Values are scanned a word at a time: each byte must be judged the
	 * same wherever it falls in the word. Allowed: HTAB, SP, VCHAR,
	 * obs-text; everything else (CTLs, DEL, NUL, CR, LF) is refused. */
	static const char pre[] = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
	char req[128];
	for (unsigned b = 0; b < 256; b++) {
		bool allowed = b == '\t' || (b >= 0x20 && b != 0x7f);
		for (size_t k = 0; k < 20; k++) {
			size_t len = sizeof(pre) - 1;
			memcpy(req, pre, len);
			memset(req + len, 'v', 20);
			req[len + k] = (char)b;
			len += 20;
			memcpy(req + len, "\r\n\r\n", 4);
			len += 4;
			struct outcome o = parse_buf(req, len);
			if ((o.rc == 0) != allowed) {
				fprintf(stderr, "  byte 0x%02x at %zu: rc %d\n", b, k, o.rc);
				*sw_failed_ = 1;
			}
		}
	}
}

/* ---- bodies ---- */

TEST(content_length_sets_length_body)
{
	static const char req[] = "POST /setup HTTP/1.1\r\nHost: h\r\nContent-Length: 42\r\n\r\n{\"a\":1}";
	PARSE_OK(req);
	CHECK(H.body_kind == SW_HTTP_BODY_LENGTH);
	CHECK_INT_EQ(H.content_length, 42);
	CHECK_INT_EQ(last_consumed, sizeof(req) - 1 - 7); /* the body is not part of the head */
}

TEST(content_length_zero_is_a_length_body_of_zero)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\ncontent-length: 0\r\n\r\n");
	CHECK(H.body_kind == SW_HTTP_BODY_LENGTH);
	CHECK_INT_EQ(H.content_length, 0);
}

TEST(content_length_with_leading_zeros_is_accepted)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0000000000000000000000007\r\n\r\n");
	CHECK_INT_EQ(H.content_length, 7);
}

TEST(content_length_max_u64_is_accepted)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551615\r\n\r\n");
	CHECK(H.content_length == UINT64_MAX);
}

TEST(content_length_overflow_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551616\r\n\r\n", "too large");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", "too large");
}

TEST(content_length_list_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\n", "Content-Length");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5,5\r\n\r\n", "Content-Length");
}

TEST(duplicate_equal_content_length_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
	       "only once");
}

TEST(differing_content_length_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n",
	       "only once");
}

TEST(content_length_that_is_not_digits_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", "decimal");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", "decimal");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", "decimal");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5 5\r\n\r\n", "decimal");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5.0\r\n\r\n", "decimal");
}

TEST(empty_content_length_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n", "empty");
}

TEST(chunked_transfer_encoding_sets_chunked_body)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
	CHECK(H.body_kind == SW_HTTP_BODY_CHUNKED);
}

TEST(transfer_coding_names_are_case_insensitive)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding:  ChUnKeD \r\n\r\n");
	CHECK(H.body_kind == SW_HTTP_BODY_CHUNKED);
}

TEST(content_length_with_transfer_encoding_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	       "Content-Length and Transfer-Encoding must not both be present");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	       "Content-Length and Transfer-Encoding must not both be present");
}

TEST(transfer_coding_other_than_chunked_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
	       "unsupported transfer coding");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n",
	       "unsupported transfer coding");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
	       "unsupported transfer coding");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n",
	       "unsupported transfer coding");
}

TEST(repeated_transfer_encoding_headers_combine_and_gzip_first_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
	       "unsupported transfer coding");
}

TEST(chunked_not_last_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	       "final transfer coding");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
	       "final transfer coding");
}

TEST(chunked_twice_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
	       "more than once");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	       "more than once");
}

TEST(empty_transfer_encoding_is_400)
{
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \r\n\r\n", "empty");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ,chunked\r\n\r\n", "empty");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked,\r\n\r\n", "empty");
	BAD400("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, ,\r\n\r\n", "empty");
}

TEST(transfer_encoding_in_http10_is_400)
{
	BAD400("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0");
}

/* ---- Host ---- */

TEST(host_is_required_in_http11)
{
	BAD400("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", "Host");
}

TEST(host_is_optional_in_http10)
{
	PARSE_OK("GET / HTTP/1.0\r\n\r\n");
	CHECK_INT_EQ(H.version_minor, 0);
	CHECK(H.host.len == 0);
}

TEST(repeated_host_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "only once");
	BAD400("GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", "only once");
}

TEST(host_forms_that_are_valid)
{
	static const char *const hosts[] = {
		"example.com", "EXAMPLE.com:443", "127.0.0.1:8080", "[::1]:8080", "[fe80::1.2.3.4]",
		"a_b-c~d", "xn--caf-dma.example", "h:", "%41bc",
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(hosts); i++) {
		char req[256];
		int n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", hosts[i]);
		struct outcome o = parse_buf(req, (size_t)n);
		if (o.rc != 0)
			fprintf(stderr, "  host \"%s\" refused\n", hosts[i]);
		CHECK_INT_EQ(o.rc, 0);
	}
}

TEST(host_with_invalid_characters_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: a:80:80\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: a:8o\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: a:123456\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: []\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: caf\xc3\xa9\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: %4g\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost: :80\r\n\r\n", "Host");
}

TEST(empty_host_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost:\r\n\r\n", "Host");
	BAD400("GET / HTTP/1.1\r\nHost:   \r\n\r\n", "Host");
}

/* ---- Connection and keep-alive ---- */

TEST(http11_keeps_alive_by_default)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK(H.keep_alive);
}

TEST(http11_connection_close_does_not_keep_alive)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nConnection: CLOSE\r\n\r\n");
	CHECK(!H.keep_alive);
}

TEST(http10_closes_by_default)
{
	PARSE_OK("GET / HTTP/1.0\r\nHost: h\r\n\r\n");
	CHECK(!H.keep_alive);
}

TEST(http10_keep_alive_token_keeps_alive)
{
	PARSE_OK("GET / HTTP/1.0\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n");
	CHECK(H.keep_alive);
}

TEST(connection_is_a_token_list)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade , close\r\n\r\n");
	CHECK(!H.keep_alive);
	PARSE_OK("GET / HTTP/1.0\r\nHost: h\r\nConnection: TE,,keep-alive\r\n\r\n");
	CHECK(H.keep_alive);
}

TEST(connection_close_wins_over_keep_alive)
{
	PARSE_OK("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n");
	CHECK(!H.keep_alive);
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nConnection: close, keep-alive\r\n\r\n");
	CHECK(!H.keep_alive);
}

TEST(connection_token_prefix_is_not_close)
{
	PARSE_OK("GET / HTTP/1.1\r\nHost: h\r\nConnection: closed\r\n\r\n");
	CHECK(H.keep_alive);
}

TEST(connection_with_non_token_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nConnection: close;x\r\n\r\n", "Connection");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep alive\r\n\r\n", "Connection");
}

/* ---- Expect ---- */

TEST(expect_100_continue_is_recognised_in_any_case)
{
	PARSE_OK("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-Continue\r\n\r\n");
	CHECK(H.expect_continue);
}

TEST(expect_other_value_is_417)
{
	REFUSED("POST / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417, "EXPECTATION_FAILED",
		"100-continue");
	REFUSED("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue, x\r\n\r\n", 417,
		"EXPECTATION_FAILED", NULL);
}

TEST(expect_100_continue_is_ignored_in_http10)
{
	PARSE_OK("POST / HTTP/1.0\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
	CHECK(!H.expect_continue);
}

TEST(malformed_request_with_bad_expect_is_400_not_417)
{
	BAD400("POST / HTTP/1.1\r\nExpect: nope\r\n\r\n", "Host");
}

/* ---- request line refusals ---- */

TEST(asterisk_target_with_get_is_400)
{
	BAD400("GET * HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS");
}

TEST(absolute_form_target_is_400)
{
	BAD400("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", "absolute path");
}

TEST(authority_form_target_is_400)
{
	BAD400("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n", "absolute path");
}

TEST(asterisk_followed_by_more_is_400)
{
	BAD400("OPTIONS *x HTTP/1.1\r\nHost: h\r\n\r\n", "absolute path");
}

TEST(fragment_in_target_is_400)
{
	BAD400("GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n", "fragment");
}

TEST(control_character_in_target_is_400)
{
	BAD400("GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", "request target");
	BAD400("GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", "request target");
	BAD400("GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n", "request target");
}

TEST(non_ascii_in_target_is_400)
{
	BAD400("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", "request target");
}

TEST(space_inside_target_is_400)
{
	BAD400("GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP version");
}

TEST(invalid_percent_encoding_is_400)
{
	BAD400("GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", "percent");
	BAD400("GET /a%4 HTTP/1.1\r\nHost: h\r\n\r\n", "percent");
	BAD400("GET /a% HTTP/1.1\r\nHost: h\r\n\r\n", "percent");
}

TEST(http09_request_is_400)
{
	BAD400("GET /\r\n\r\n", "HTTP/0.9");
}

TEST(missing_target_is_400)
{
	BAD400("GET \r\nHost: h\r\n\r\n", "target");
}

TEST(unsupported_versions_are_400)
{
	BAD400("GET / HTTP/2.0\r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / HTTP/1.2\r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / HTTP/1.10\r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / http/1.1\r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / HTTP/1\r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / HTTP/1.1 \r\nHost: h\r\n\r\n", "HTTP version");
	BAD400("GET / HTTPS/1.1\r\nHost: h\r\n\r\n", "HTTP version");
}

TEST(extra_white_space_in_request_line_is_400)
{
	BAD400("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", "white space");
	BAD400("GET /  HTTP/1.1\r\nHost: h\r\n\r\n", "white space");
	BAD400(" GET / HTTP/1.1\r\nHost: h\r\n\r\n", "method");
	BAD400("GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", "method");
}

TEST(invalid_character_in_method_is_400)
{
	BAD400("GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", "method");
	BAD400("G\xc3\x89T / HTTP/1.1\r\nHost: h\r\n\r\n", "method");
}

TEST(leading_empty_line_is_400)
{
	BAD400("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "empty lines");
	BAD400("\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "empty lines");
}

/* ---- line endings and NUL ---- */

TEST(bare_lf_ending_request_line_is_400)
{
	BAD400("GET / HTTP/1.1\nHost: h\r\n\r\n", "bare LF");
}

TEST(bare_lf_ending_header_line_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", "bare LF");
}

TEST(bare_lf_ending_head_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\n\n", "bare LF");
	BAD400("GET / HTTP/1.1\nHost: h\n\n", "bare LF");
}

TEST(bare_lf_inside_header_value_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: a\nb\r\n\r\n", "bare LF");
}

TEST(bare_cr_in_request_line_is_400)
{
	BAD400("GET / HTTP/1.1\rHost: h\r\n\r\n", "bare CR");
	BAD400("GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
}

TEST(bare_cr_in_header_value_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", "bare CR");
}

TEST(bare_cr_ending_head_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\n\rX\r\n\r\n", "bare CR");
}

TEST(nul_in_method_is_400)
{
	BAD400("GE\0T / HTTP/1.1\r\nHost: h\r\n\r\n", NULL);
}

TEST(nul_in_target_is_400)
{
	BAD400("GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n", "NUL");
}

TEST(nul_in_header_name_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX\0Y: 1\r\n\r\n", "NUL");
}

TEST(nul_in_header_value_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n", "NUL");
}

TEST(nul_in_version_is_400)
{
	BAD400("GET / HTTP/1.1\0\r\nHost: h\r\n\r\n", NULL);
}

/* ---- header line refusals ---- */

TEST(obs_fold_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", "folding");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n\tb\r\n\r\n", "folding");
}

TEST(white_space_before_first_header_is_400)
{
	BAD400("GET / HTTP/1.1\r\n Host: h\r\n\r\n", "folding");
}

TEST(white_space_before_colon_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost : h\r\n\r\n", "colon");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding\t: chunked\r\n\r\n", "colon");
}

TEST(empty_header_name_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", "empty name");
}

TEST(header_line_without_colon_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", "no colon");
}

TEST(invalid_character_in_header_name_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX(A): 1\r\n\r\n", "header name");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: 1\r\n\r\n", "header name");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX\"A: 1\r\n\r\n", "header name");
}

TEST(control_character_in_header_value_is_400)
{
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: a\x01" "b\r\n\r\n", "control character");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: a\x7f\r\n\r\n", "control character");
	BAD400("GET / HTTP/1.1\r\nHost: h\r\nX: \x1b[31m\r\n\r\n", "control character");
}

/* ---- limits ---- */

/* "GET /aaa...a HTTP/1.1" with the line (without CRLF) exactly n bytes,
 * then a Host header and the blank line. */
static char *request_with_line(size_t n, size_t *ret_len)
{
	static const char version[] = " HTTP/1.1";
	static const char rest[] = "\r\nHost: h\r\n\r\n";
	size_t len = n + sizeof(rest) - 1;
	char *b = malloc(len);
	if (!b)
		return NULL;
	memcpy(b, "GET /", 5);
	memset(b + 5, 'a', n - 5 - (sizeof(version) - 1));
	memcpy(b + n - (sizeof(version) - 1), version, sizeof(version) - 1);
	memcpy(b + n, rest, sizeof(rest) - 1);
	*ret_len = len;
	return b;
}

TEST(request_line_at_limit_is_accepted)
{
	size_t len;
	char *b = request_with_line(SW_HTTP_MAX_REQUEST_LINE, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, 0);
	CHECK_INT_EQ(H.target.len, SW_HTTP_MAX_REQUEST_LINE - 4 - 9);
	struct outcome slow = parse_bytewise(b, len);
	CHECK(same_outcome(o, slow));
	free(b);
}

TEST(request_line_over_limit_is_414)
{
	size_t len;
	char *b = request_with_line(SW_HTTP_MAX_REQUEST_LINE + 1, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 414);
	CHECK_STR_EQ(o.err.code, "URI_TOO_LONG");
	struct outcome slow = parse_bytewise(b, len);
	CHECK(same_outcome(o, slow));
	free(b);
}

TEST(unfinished_request_line_over_limit_is_414_before_crlf)
{
	/* No CRLF at all: 414 as soon as the line plus its CRLF cannot fit. */
	size_t n = SW_HTTP_MAX_REQUEST_LINE + 3;
	char *b = malloc(n);
	REQUIRE(b);
	memcpy(b, "GET /", 5);
	memset(b + 5, 'a', n - 5);
	struct outcome o = parse_buf(b, n - 1);
	CHECK_INT_EQ(o.rc, -EAGAIN);
	o = parse_buf(b, n);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 414);
	struct outcome slow = parse_bytewise(b, n);
	CHECK(same_outcome(o, slow));
	free(b);
}

TEST(syntax_error_early_in_long_line_is_400_not_414)
{
	size_t n = SW_HTTP_MAX_REQUEST_LINE + 100;
	char *b = malloc(n);
	REQUIRE(b);
	memcpy(b, "GET /#", 6);
	memset(b + 6, 'a', n - 6);
	struct outcome o = parse_buf(b, n);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 400);
	CHECK(same_outcome(o, parse_bytewise(b, n)));
	free(b);
}

/* A head of exactly n bytes: request line, Host, one X-Pad header to fill. */
static char *head_of_size(size_t n, size_t *ret_len)
{
	static const char start[] = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ";
	static const char end[] = "\r\n\r\n";
	char *b = malloc(n);
	if (!b)
		return NULL;
	memcpy(b, start, sizeof(start) - 1);
	memset(b + sizeof(start) - 1, 'p', n - (sizeof(start) - 1) - (sizeof(end) - 1));
	memcpy(b + n - (sizeof(end) - 1), end, sizeof(end) - 1);
	*ret_len = n;
	return b;
}

TEST(head_at_limit_is_accepted)
{
	size_t len;
	char *b = head_of_size(SW_HTTP_MAX_HEAD_BYTES, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, 0);
	CHECK_INT_EQ(o.consumed, SW_HTTP_MAX_HEAD_BYTES);
	CHECK(same_outcome(o, parse_bytewise(b, len)));
	free(b);
}

TEST(head_over_limit_is_431)
{
	size_t len;
	char *b = head_of_size(SW_HTTP_MAX_HEAD_BYTES + 1, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 431);
	CHECK_STR_EQ(o.err.code, "HEADERS_TOO_LARGE");
	CHECK(same_outcome(o, parse_bytewise(b, len)));
	free(b);
}

TEST(unfinished_head_over_limit_is_431)
{
	size_t len;
	char *b = head_of_size(SW_HTTP_MAX_HEAD_BYTES + 10, &len);
	REQUIRE(b);
	/* Cut before the blank line: at the limit -EAGAIN, one past it 431. */
	struct outcome o = parse_buf(b, SW_HTTP_MAX_HEAD_BYTES);
	CHECK_INT_EQ(o.rc, -EAGAIN);
	o = parse_buf(b, SW_HTTP_MAX_HEAD_BYTES + 1);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 431);
	CHECK(same_outcome(o, parse_bytewise(b, SW_HTTP_MAX_HEAD_BYTES + 1)));
	free(b);
}

/* A request with n header fields (Host plus n - 1 others). */
static char *request_with_fields(unsigned n, size_t *ret_len)
{
	char *b = malloc(64 + (size_t)n * 16);
	if (!b)
		return NULL;
	size_t len = (size_t)sprintf(b, "GET / HTTP/1.1\r\nHost: h\r\n");
	for (unsigned i = 1; i < n; i++)
		len += (size_t)sprintf(b + len, "X-%u: v\r\n", i);
	len += (size_t)sprintf(b + len, "\r\n");
	*ret_len = len;
	return b;
}

TEST(header_count_at_limit_is_accepted)
{
	size_t len;
	char *b = request_with_fields(SW_HTTP_MAX_HEADERS, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, 0);
	CHECK_INT_EQ(H.header_count, SW_HTTP_MAX_HEADERS);
	CHECK(sw_http_head_find(&H, SW_STR("x-99")) == &H.headers[99]);
	free(b);
}

TEST(header_count_over_limit_is_431)
{
	size_t len;
	char *b = request_with_fields(SW_HTTP_MAX_HEADERS + 1, &len);
	REQUIRE(b);
	struct outcome o = parse_buf(b, len);
	CHECK_INT_EQ(o.rc, -EBADMSG);
	CHECK_INT_EQ(o.err.status, 431);
	CHECK_STR_EQ(o.err.code, "HEADERS_TOO_LARGE");
	CHECK(same_outcome(o, parse_bytewise(b, len)));
	free(b);
}

/* ---- incremental input and pipelining ---- */

TEST(every_proper_prefix_of_a_valid_head_is_eagain)
{
	static const char req[] = "POST /setup?x=1 HTTP/1.1\r\nHost: h:1\r\nContent-Length: 2\r\n\r\n";
	for (size_t n = 0; n < sizeof(req) - 1; n++) {
		char *b = dup_exact(req, n);
		REQUIRE(b);
		struct outcome o = parse_buf(b, n);
		free(b);
		if (o.rc != -EAGAIN)
			fprintf(stderr, "  prefix of %zu bytes gave %d\n", n, o.rc);
		CHECK_INT_EQ(o.rc, -EAGAIN);
	}
}

TEST(byte_by_byte_feeding_equals_one_shot)
{
	static const char req[] = "PUT /a/b?c=d HTTP/1.1\r\nHost: example.com\r\n"
				  "Content-Length: 11\r\nConnection: keep-alive\r\n"
				  "Expect: 100-continue\r\nX-Long: " "0123456789abcdef\r\n\r\nhello world";
	char *b = dup_exact(req, sizeof(req) - 1);
	REQUIRE(b);
	struct outcome slow = parse_bytewise(b, sizeof(req) - 1);
	REQUIRE(slow.rc == 0);
	struct sw_http_head h1 = H;
	struct outcome one = parse_buf(b, sizeof(req) - 1);
	REQUIRE(one.rc == 0);
	CHECK_INT_EQ(slow.consumed, one.consumed);
	CHECK_INT_EQ(one.consumed, sizeof(req) - 1 - 11);
	CHECK(sw_str_eq(h1.target, H.target));
	CHECK(h1.method == H.method);
	CHECK_INT_EQ(h1.header_count, H.header_count);
	CHECK_INT_EQ(h1.content_length, 11);
	CHECK(h1.keep_alive == H.keep_alive);
	CHECK(h1.expect_continue && H.expect_continue);
	free(b);
}

TEST(feeding_in_two_pieces_at_every_split_equals_one_shot)
{
	static const char req[] = "GET /x HTTP/1.1\r\nHost: h\r\nA: b\r\n\r\n";
	const size_t len = sizeof(req) - 1;
	for (size_t k = 1; k < len; k++) {
		size_t consumed = 0;
		struct sw_http_parse_error e;
		int r = sw_http_parse_head(req, k, 0, &H, &consumed, &e);
		CHECK_INT_EQ(r, -EAGAIN);
		r = sw_http_parse_head(req, len, k, &H, &consumed, &e);
		CHECK_INT_EQ(r, 0);
		CHECK_INT_EQ(consumed, len);
	}
}

TEST(syntax_error_while_incomplete_is_reported_when_the_head_ends)
{
	/* With prev_len only new bytes are scanned, so an error in the middle
	 * waits for the blank line (or a limit); the answer is the same. */
	static const char req[] = "GET / HTTP/1.1\r\nHost: h\r\nX\x01: y\r\nA: b\r\n\r\n";
	const size_t len = sizeof(req) - 1;
	size_t consumed;
	struct sw_http_parse_error e;
	CHECK_INT_EQ(sw_http_parse_head(req, 20, 0, &H, &consumed, &e), -EAGAIN);
	CHECK_INT_EQ(sw_http_parse_head(req, len - 2, 20, &H, &consumed, &e), -EAGAIN);
	CHECK_INT_EQ(sw_http_parse_head(req, len, len - 2, &H, &consumed, &e), -EBADMSG);
	CHECK_INT_EQ(e.status, 400);
	CHECK(strstr(e.message, "header name") != NULL);
}

TEST(pipelined_requests_are_consumed_one_at_a_time)
{
	static const char first[] = "GET /one HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char two[] = "GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
				  "HEAD /two HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
	struct outcome o = parse_buf(two, sizeof(two) - 1);
	REQUIRE(o.rc == 0);
	CHECK_INT_EQ(o.consumed, sizeof(first) - 1);
	CHECK(str_is(H.path, "/one"));
	CHECK(H.keep_alive);
	const char *rest = two + o.consumed;
	size_t rest_len = sizeof(two) - 1 - o.consumed;
	o = parse_buf(rest, rest_len);
	REQUIRE(o.rc == 0);
	CHECK_INT_EQ(o.consumed, rest_len);
	CHECK(H.method == SW_HTTP_HEAD);
	CHECK(str_is(H.path, "/two"));
	CHECK(!H.keep_alive);
}

TEST(pipelined_request_after_body_starts_at_content_length)
{
	static const char two[] = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd"
				  "GET /b HTTP/1.1\r\nHost: h\r\n\r\n";
	struct outcome o = parse_buf(two, sizeof(two) - 1);
	REQUIRE(o.rc == 0);
	size_t next = o.consumed + (size_t)H.content_length;
	o = parse_buf(two + next, sizeof(two) - 1 - next);
	REQUIRE(o.rc == 0);
	CHECK(str_is(H.path, "/b"));
}

TEST(empty_buffer_is_eagain)
{
	struct outcome o = parse_buf("", 0);
	CHECK_INT_EQ(o.rc, -EAGAIN);
}

TEST_MAIN()
