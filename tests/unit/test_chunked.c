/* The chunked-body decoder: framing, extensions, trailers, every refusal,
 * the size limits at their boundaries, 413, in-place decoding, and input
 * split at every byte boundary decoding exactly like input given at once. */
#include <errno.h>
#include <stdlib.h>
#include "steward/http/http_parser.h"
#include "test_help.h"

struct result {
	int rc;
	size_t consumed; /* input bytes used over all calls */
	size_t written;  /* decoded bytes over all calls */
	char out[20000];
	struct sw_http_parse_error err;
};

static struct result R1, R2; /* large: keep them off the stack */

/* Decodes in[0..len) in pieces cut at the given offsets (sorted, < len). */
static void decode_pieces(struct result *r, const char *in, size_t len, uint64_t max_body,
			  const size_t *cuts, size_t ncuts)
{
	struct sw_http_chunked c;
	sw_http_chunked_init(&c, max_body);
	memset(r, 0, sizeof(*r));
	r->rc = -EAGAIN;
	size_t start = 0;
	for (size_t k = 0; k <= ncuts && r->rc == -EAGAIN; k++) {
		size_t stop = k < ncuts ? cuts[k] : len;
		/* Each piece in its own exact-size buffer, so ASan sees any
		 * read past what was given. */
		char *piece = malloc(stop - start + 1);
		if (!piece)
			abort();
		memcpy(piece, in + start, stop - start);
		size_t consumed = 0, written = 0;
		r->rc = sw_http_chunked_decode(&c, piece, stop - start, r->out + r->written,
					       &consumed, &written, &r->err);
		if (consumed > stop - start || written > consumed)
			abort();
		r->consumed += consumed;
		r->written += written;
		free(piece);
		start = stop;
	}
}

static void decode_all(struct result *r, const char *in, size_t len, uint64_t max_body)
{
	decode_pieces(r, in, len, max_body, NULL, 0);
}

static void decode_bytewise(struct result *r, const char *in, size_t len, uint64_t max_body)
{
	size_t *cuts = malloc(len * sizeof(*cuts) + 1);
	if (!cuts)
		abort();
	for (size_t i = 1; i < len; i++)
		cuts[i - 1] = i;
	decode_pieces(r, in, len, max_body, cuts, len ? len - 1 : 0);
	free(cuts);
}

static bool same_result(const struct result *a, const struct result *b)
{
	if (a->rc != b->rc || a->consumed != b->consumed || a->written != b->written)
		return false;
	if (memcmp(a->out, b->out, a->written) != 0)
		return false;
	if (a->rc == -EBADMSG)
		return a->err.status == b->err.status && strcmp(a->err.message, b->err.message) == 0;
	return true;
}

static bool out_is(const struct result *r, const char *lit)
{
	return r->written == strlen(lit) && memcmp(r->out, lit, r->written) == 0;
}

/* Decodes complete input; checks the byte-by-byte run agrees. */
#define DECODE(lit, max)                                                \
	do {                                                            \
		decode_all(&R1, (lit), sizeof(lit) - 1, (max));         \
		decode_bytewise(&R2, (lit), sizeof(lit) - 1, (max));    \
		CHECK(same_result(&R1, &R2));                           \
	} while (0)

static void check_refused(int *sw_failed_, const char *in, size_t len, uint64_t max, int status,
			  const char *part)
{
	decode_all(&R1, in, len, max);
	decode_bytewise(&R2, in, len, max);
	CHECK_INT_EQ(R1.rc, -EBADMSG);
	if (R1.rc != -EBADMSG)
		return;
	CHECK_INT_EQ(R1.err.status, status);
	CHECK_STR_EQ(R1.err.code, status == 413 ? "PAYLOAD_TOO_LARGE" : "MALFORMED_REQUEST");
	if (part && !strstr(R1.err.message, part)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", R1.err.message, part);
		*sw_failed_ = 1;
	}
	CHECK(same_result(&R1, &R2));
}

#define REFUSED(lit, max, status, part) \
	check_refused(sw_failed_, (lit), sizeof(lit) - 1, (max), (status), (part))
#define BAD400(lit, part) REFUSED(lit, UINT64_MAX, 400, part)

#define BIG UINT64_MAX

/* ---- accepted ---- */

TEST(chunks_decode_to_their_data)
{
	static const char in[] = "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
	DECODE(in, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, sizeof(in) - 1);
	CHECK(out_is(&R1, "hello world"));
}

TEST(last_chunk_alone_is_an_empty_body)
{
	DECODE("0\r\n\r\n", BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, 5);
	CHECK_INT_EQ(R1.written, 0);
}

TEST(hex_sizes_in_either_case)
{
	DECODE("a\r\n0123456789\r\nB\r\n0123456789A\r\n0\r\n\r\n", BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK(out_is(&R1, "01234567890123456789A"));
}

TEST(size_with_sixteen_digits_is_accepted)
{
	DECODE("0000000000000003\r\nabc\r\n0000000000000000\r\n\r\n", BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK(out_is(&R1, "abc"));
}

TEST(bytes_after_the_body_are_not_consumed)
{
	static const char in[] = "3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
	DECODE(in, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, sizeof(in) - 1 - 16);
	CHECK(out_is(&R1, "abc"));
}

TEST(incomplete_body_is_eagain_and_uses_all_input)
{
	static const char in[] = "5\r\nhel";
	DECODE(in, BIG);
	CHECK_INT_EQ(R1.rc, -EAGAIN);
	CHECK_INT_EQ(R1.consumed, sizeof(in) - 1);
	CHECK(out_is(&R1, "hel"));
}

TEST(data_may_contain_crlf_and_binary)
{
	DECODE("6\r\n\r\n\0\xff\r\n\r\n0\r\n\r\n", BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.written, 6);
	CHECK(memcmp(R1.out, "\r\n\0\xff\r\n", 6) == 0);
}

TEST(chunk_extensions_are_accepted_and_ignored)
{
	DECODE("3;a\r\nabc\r\n"
	       "3;name=value\r\ndef\r\n"
	       "3;a=1;b;c=\"quoted \\\" ;x\"\r\nghi\r\n"
	       "3 ; a = b\t;\tc\r\njkl\r\n"
	       "3;q=\"\"\r\nmno\r\n"
	       "0;last=\"\xe9t\xe9\"\r\n\r\n",
	       BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK(out_is(&R1, "abcdefghijklmno"));
}

TEST(trailers_are_accepted_and_discarded)
{
	static const char in[] = "3\r\nabc\r\n0\r\nX-Checksum: 1234\r\nX-Empty:\r\nX-Obs: caf\xc3\xa9\r\n\r\nNEXT";
	DECODE(in, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, sizeof(in) - 1 - 4);
	CHECK(out_is(&R1, "abc"));
}

TEST(decoding_in_place_gives_the_same_bytes)
{
	char buf[] = "4\r\nWiki\r\n5;x=y\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: v\r\n\r\n";
	size_t len = sizeof(buf) - 1;
	struct sw_http_chunked c;
	struct sw_http_parse_error e;
	size_t consumed, written;
	sw_http_chunked_init(&c, BIG);
	int r = sw_http_chunked_decode(&c, buf, len, buf, &consumed, &written, &e);
	CHECK_INT_EQ(r, 0);
	CHECK_INT_EQ(consumed, len);
	CHECK_INT_EQ(written, 23);
	CHECK(memcmp(buf, "Wikipedia in\r\n\r\nchunks.", 23) == 0);
}

TEST(decoding_in_place_across_calls)
{
	/* A connection buffer decoded in place piece by piece: each call's
	 * output lands at the start of that call's input. */
	char buf[] = "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n";
	size_t len = sizeof(buf) - 1, pos = 0, out = 0;
	struct sw_http_chunked c;
	struct sw_http_parse_error e;
	sw_http_chunked_init(&c, BIG);
	int r = -EAGAIN;
	while (r == -EAGAIN && pos < len) {
		size_t n = SW_MIN((size_t)5, len - pos), consumed, written;
		r = sw_http_chunked_decode(&c, buf + pos, n, buf + pos, &consumed, &written, &e);
		memmove(buf + out, buf + pos, written);
		out += written;
		pos += consumed;
	}
	CHECK_INT_EQ(r, 0);
	CHECK_INT_EQ(out, 7);
	CHECK(memcmp(buf, "abcdefg", 7) == 0);
}

TEST(split_at_every_byte_boundary_equals_one_shot)
{
	static const char in[] = "4;ext=\"v\"\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\n";
	const size_t len = sizeof(in) - 1;
	decode_all(&R1, in, len, BIG);
	REQUIRE(R1.rc == 0);
	for (size_t k = 0; k <= len; k++) {
		size_t cut = k;
		decode_pieces(&R2, in, len, BIG, &cut, 1);
		if (!same_result(&R1, &R2))
			fprintf(stderr, "  split at %zu differs\n", k);
		CHECK(same_result(&R1, &R2));
	}
	for (size_t a = 1; a < len; a++) {
		for (size_t b = a; b < len; b++) {
			size_t cuts[2] = { a, b };
			decode_pieces(&R2, in, len, BIG, cuts, 2);
			CHECK(same_result(&R1, &R2));
		}
	}
}

TEST(split_refusal_is_the_same_at_every_boundary)
{
	static const char in[] = "3\r\nabc\r\n2\r\nxyZ\r\n0\r\n\r\n";
	const size_t len = sizeof(in) - 1;
	decode_all(&R1, in, len, BIG);
	REQUIRE(R1.rc == -EBADMSG);
	CHECK_INT_EQ(R1.consumed, 13); /* the byte where CRLF was due */
	for (size_t k = 0; k <= len; k++) {
		size_t cut = k;
		decode_pieces(&R2, in, len, BIG, &cut, 1);
		CHECK(same_result(&R1, &R2));
	}
}

TEST(calling_after_completion_consumes_nothing)
{
	struct sw_http_chunked c;
	struct sw_http_parse_error e;
	size_t consumed, written;
	char out[16];
	sw_http_chunked_init(&c, BIG);
	CHECK_INT_EQ(sw_http_chunked_decode(&c, "0\r\n\r\n", 5, out, &consumed, &written, &e), 0);
	CHECK_INT_EQ(sw_http_chunked_decode(&c, "1\r\nx", 4, out, &consumed, &written, &e), 0);
	CHECK_INT_EQ(consumed, 0);
	CHECK_INT_EQ(written, 0);
}

TEST(calling_after_refusal_refuses_again)
{
	struct sw_http_chunked c;
	struct sw_http_parse_error e;
	size_t consumed, written;
	char out[16];
	sw_http_chunked_init(&c, BIG);
	CHECK_INT_EQ(sw_http_chunked_decode(&c, "x", 1, out, &consumed, &written, &e), -EBADMSG);
	CHECK_INT_EQ(sw_http_chunked_decode(&c, "0\r\n\r\n", 5, out, &consumed, &written, &e), -EBADMSG);
	CHECK_INT_EQ(consumed, 0);
	CHECK_INT_EQ(e.status, 400);
}

/* ---- chunk size refusals ---- */

TEST(missing_chunk_size_is_400)
{
	BAD400("\r\nabc\r\n0\r\n\r\n", "size");
	BAD400(";a=b\r\n", "size");
}

TEST(leading_white_space_before_size_is_400)
{
	BAD400(" 5\r\nhello\r\n0\r\n\r\n", "size");
	BAD400("\t5\r\nhello\r\n0\r\n\r\n", "size");
}

TEST(hex_prefix_is_400)
{
	BAD400("0x5\r\nhello\r\n0\r\n\r\n", "after a chunk size");
}

TEST(signed_size_is_400)
{
	BAD400("+5\r\nhello\r\n0\r\n\r\n", "size");
	BAD400("-5\r\nhello\r\n0\r\n\r\n", "size");
}

TEST(non_hex_in_size_is_400)
{
	BAD400("5g\r\nhello\r\n0\r\n\r\n", "after a chunk size");
}

TEST(size_with_seventeen_digits_is_400)
{
	BAD400("00000000000000003\r\nabc\r\n0\r\n\r\n", "16 hex digits");
	BAD400("10000000000000000\r\n", "16 hex digits");
}

TEST(size_overflowing_the_total_is_refused)
{
	/* 16 digits fit in 64 bits, but the running total would wrap: the
	 * limit check is written so that it cannot overflow. */
	REFUSED("1\r\na\r\nFFFFFFFFFFFFFFFF\r\n", UINT64_MAX, 413, NULL);
}

TEST(white_space_after_size_without_extension_is_400)
{
	BAD400("5 \r\nhello\r\n0\r\n\r\n", "extension");
	BAD400("5\t\r\nhello\r\n0\r\n\r\n", "extension");
}

TEST(bare_lf_after_size_is_400)
{
	BAD400("5\nhello\r\n0\r\n\r\n", "after a chunk size");
	BAD400("5;a\nhello\r\n0\r\n\r\n", "extension");
}

TEST(bare_cr_after_size_is_400)
{
	BAD400("5\rhello\r\n0\r\n\r\n", "CRLF");
}

/* ---- extension refusals ---- */

TEST(empty_extension_name_is_400)
{
	BAD400("5;\r\nhello\r\n0\r\n\r\n", "extension name");
	BAD400("5;=x\r\nhello\r\n0\r\n\r\n", "extension name");
	BAD400("5;a;;b\r\nhello\r\n0\r\n\r\n", "extension name");
}

TEST(empty_extension_value_is_400)
{
	BAD400("5;a=\r\nhello\r\n0\r\n\r\n", "extension value");
}

TEST(invalid_character_in_extension_is_400)
{
	BAD400("5;a(b)\r\nhello\r\n0\r\n\r\n", "extension name");
	BAD400("5;a=b@c\r\nhello\r\n0\r\n\r\n", "extension value");
	BAD400("5;a=b c\r\nhello\r\n0\r\n\r\n", "extension");
	BAD400("5;a=\"x\"y\r\nhello\r\n0\r\n\r\n", "extension");
}

TEST(white_space_at_end_of_extension_is_400)
{
	BAD400("5;a \r\nhello\r\n0\r\n\r\n", "extension");
	BAD400("5;a=b \r\nhello\r\n0\r\n\r\n", "extension");
}

TEST(unterminated_quoted_extension_is_400)
{
	BAD400("5;a=\"open\r\nhello\r\n0\r\n\r\n", "quoted");
}

TEST(control_character_in_quoted_extension_is_400)
{
	BAD400("5;a=\"x\x01y\"\r\nhello\r\n0\r\n\r\n", "quoted");
	BAD400("5;a=\"x\\\x01y\"\r\nhello\r\n0\r\n\r\n", "quoted");
}

/* ---- data framing refusals ---- */

TEST(data_longer_than_its_size_is_400)
{
	BAD400("3\r\nabcd\r\n0\r\n\r\n", "CRLF");
}

TEST(data_without_crlf_is_400)
{
	BAD400("3\r\nabc0\r\n\r\n", "CRLF");
}

TEST(data_followed_by_bare_lf_is_400)
{
	BAD400("3\r\nabc\n0\r\n\r\n", "CRLF");
}

TEST(data_followed_by_bare_cr_is_400)
{
	BAD400("3\r\nabc\r0\r\n\r\n", "CRLF");
}

TEST(last_chunk_followed_by_bare_lf_is_400)
{
	BAD400("0\r\n\n", "bare LF");
}

TEST(last_chunk_followed_by_bare_cr_is_400)
{
	BAD400("0\r\n\rX", "bare CR");
}

/* ---- trailer refusals ---- */

TEST(trailer_obs_fold_is_400)
{
	BAD400("0\r\nA: b\r\n c\r\n\r\n", "folding");
}

TEST(trailer_white_space_before_colon_is_400)
{
	BAD400("0\r\nA : b\r\n\r\n", "colon");
}

TEST(trailer_without_colon_is_400)
{
	BAD400("0\r\nNoColon\r\n\r\n", "no colon");
}

TEST(trailer_with_empty_name_is_400)
{
	BAD400("0\r\n: v\r\n\r\n", "empty name");
}

TEST(trailer_with_invalid_name_is_400)
{
	BAD400("0\r\nA(b): v\r\n\r\n", "trailer name");
}

TEST(trailer_with_control_character_is_400)
{
	BAD400("0\r\nA: b\x01\r\n\r\n", "control character");
	BAD400("0\r\nA: b\0\r\n\r\n", "control character");
}

TEST(trailer_with_bare_lf_is_400)
{
	BAD400("0\r\nA: b\n\r\n", "bare LF");
}

TEST(trailer_with_bare_cr_is_400)
{
	BAD400("0\r\nA: b\rc\r\n\r\n", "bare CR");
}

/* ---- limits ---- */

/* "1;x=vvv...v\r\na\r\n0\r\n\r\n" whose size line (without CRLF) is n bytes. */
static size_t size_line_of(char *buf, size_t n)
{
	memcpy(buf, "1;x=", 4);
	memset(buf + 4, 'v', n - 4);
	memcpy(buf + n, "\r\na\r\n0\r\n\r\n", 10);
	return n + 10;
}

TEST(chunk_size_line_at_limit_is_accepted)
{
	static char buf[SW_HTTP_MAX_CHUNK_LINE + 16];
	size_t len = size_line_of(buf, SW_HTTP_MAX_CHUNK_LINE);
	decode_all(&R1, buf, len, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK(out_is(&R1, "a"));
}

TEST(chunk_size_line_over_limit_is_400)
{
	static char buf[SW_HTTP_MAX_CHUNK_LINE + 16];
	size_t len = size_line_of(buf, SW_HTTP_MAX_CHUNK_LINE + 1);
	check_refused(sw_failed_, buf, len, BIG, 400, "too long");
	CHECK_INT_EQ(R1.consumed, SW_HTTP_MAX_CHUNK_LINE);
}

/* A trailer section of n fields "Tnn: v\r\n". */
static size_t trailers_of(char *buf, unsigned n)
{
	size_t len = (size_t)sprintf(buf, "0\r\n");
	for (unsigned i = 0; i < n; i++)
		len += (size_t)sprintf(buf + len, "T%02u: v\r\n", i);
	len += (size_t)sprintf(buf + len, "\r\n");
	return len;
}

TEST(trailer_count_at_limit_is_accepted)
{
	static char buf[64 * 16];
	size_t len = trailers_of(buf, SW_HTTP_MAX_TRAILERS);
	decode_all(&R1, buf, len, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, len);
}

TEST(trailer_count_over_limit_is_400)
{
	static char buf[64 * 16];
	size_t len = trailers_of(buf, SW_HTTP_MAX_TRAILERS + 1);
	check_refused(sw_failed_, buf, len, BIG, 400, "too many trailer");
}

/* "0\r\n" then one trailer "X: vvv..v\r\n" and "\r\n": n trailer bytes
 * (n >= 7). */
static size_t trailer_bytes_of(char *buf, size_t n)
{
	memcpy(buf, "0\r\nX: ", 6);
	memset(buf + 6, 'v', n - 7);
	memcpy(buf + 3 + n - 4, "\r\n\r\n", 4);
	return 3 + n;
}

TEST(trailer_section_at_limit_is_accepted)
{
	static char buf[SW_HTTP_MAX_TRAILER_BYTES + 16];
	size_t len = trailer_bytes_of(buf, SW_HTTP_MAX_TRAILER_BYTES);
	decode_all(&R1, buf, len, BIG);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK_INT_EQ(R1.consumed, len);
}

TEST(trailer_section_over_limit_is_400)
{
	static char buf[SW_HTTP_MAX_TRAILER_BYTES + 16];
	size_t len = trailer_bytes_of(buf, SW_HTTP_MAX_TRAILER_BYTES + 1);
	check_refused(sw_failed_, buf, len, BIG, 400, "trailer section is too large");
}

TEST(body_at_max_is_accepted)
{
	DECODE("4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n", 8);
	CHECK_INT_EQ(R1.rc, 0);
	CHECK(out_is(&R1, "abcdefgh"));
}

TEST(body_over_max_is_413)
{
	REFUSED("4\r\nabcd\r\n5\r\nefghi\r\n0\r\n\r\n", 8, 413, NULL);
	/* refused at the byte after the size, before its data */
	CHECK_INT_EQ(R1.consumed, 10);
	CHECK(out_is(&R1, "abcd"));
}

TEST(oversized_chunk_is_413_before_its_data_arrives)
{
	/* Only the size line has arrived: no need to wait for the data. */
	REFUSED("10001\r", SW_HTTP_DEFAULT_MAX_BODY, 413, "larger than allowed");
	CHECK_INT_EQ(R1.consumed, 5);
}

TEST(max_body_zero_allows_only_the_empty_body)
{
	DECODE("0\r\n\r\n", 0);
	CHECK_INT_EQ(R1.rc, 0);
	REFUSED("1\r\na\r\n0\r\n\r\n", 0, 413, NULL);
}

TEST_MAIN()
