/* Query strings (query.h): percent-decoding and what it refuses, the
 * reader's answer to unknown, repeated, undecodable, long and too many
 * parameters, each bound at and past its limit, the page reader's limit
 * and cursor rules, and cursors written by sw_query_cursor_format() read
 * back by sw_query_page_read(). */
#include <errno.h>
#include <jansson.h>
#include "steward/base/validate.h"
#include "steward/http/query.h"
#include "test_help.h"

#define UUID "0b5f3c2e-9d4a-4c1e-8f7a-2b6d9e0c1a3f"

/* The decoded text of s, or NULL with *ret_err set when refused. */
static const char *decode(const char *s, int *ret_err)
{
	static char out[1024];
	size_t len = 99999;
	*ret_err = sw_query_decode(sw_str_cstr(s), out, sizeof(out), &len);
	if (*ret_err)
		return NULL;
	if (len != strlen(out))
		abort();
	return out;
}

static const struct {
	const char *in, *out, *rule;
} decoded[] = {
	{ "", "", "empty" },
	{ "abc", "abc", "plain" },
	{ "a+b", "a b", "plus is a space" },
	{ "%2B", "+", "an escaped plus is a plus" },
	{ "%41%4a%4A", "AJJ", "hex digits in either case" },
	{ "2026-11-21T16%3A22%3A35Z", "2026-11-21T16:22:35Z", "an escaped colon" },
	{ "%C3%A9t%C3%A9", "\xc3\xa9t\xc3\xa9", "two-byte UTF-8" },
	{ "%E2%82%AC", "\xe2\x82\xac", "three-byte UTF-8" },
	{ "%F0%9F%98%80", "\xf0\x9f\x98\x80", "four-byte UTF-8" },
	{ "%F4%8F%BF%BF", "\xf4\x8f\xbf\xbf", "U+10FFFF, the last code point" },
	{ "%25", "%", "an escaped percent" },
};

TEST(decoding_turns_escapes_and_plus_into_bytes)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(decoded); i++) {
		int err;
		const char *out = decode(decoded[i].in, &err);
		if (!out || strcmp(out, decoded[i].out) != 0)
			fprintf(stderr, "  %s (%s): err %d\n", decoded[i].in, decoded[i].rule, err);
		CHECK_INT_EQ(err, 0);
		CHECK_STR_EQ(out, decoded[i].out);
	}
}

static const struct {
	const char *in, *rule;
} undecodable[] = {
	{ "%", "a lone percent" },
	{ "a%4", "one hex digit at the end" },
	{ "%G1", "a first digit that is not hex" },
	{ "%4G", "a second digit that is not hex" },
	{ "%%41", "a percent escaping a percent sign" },
	{ "%00", "an escaped NUL" },
	{ "a%0Ab", "an escaped line feed" },
	{ "%1F", "an escaped unit separator" },
	{ "%7F", "an escaped DEL" },
	{ "a\tb", "a raw tab" },
	{ "a\x7f", "a raw DEL" },
	{ "%C3", "a lone UTF-8 lead byte" },
	{ "%A9", "a lone UTF-8 continuation byte" },
	{ "%C0%AF", "an overlong two-byte form" },
	{ "%E0%80%AF", "an overlong three-byte form" },
	{ "%F0%80%80%AF", "an overlong four-byte form" },
	{ "%ED%A0%80", "a surrogate" },
	{ "%F4%90%80%80", "past U+10FFFF" },
	{ "%F5%80%80%80", "a lead byte past F4" },
	{ "%FF", "the byte FF" },
	{ "%E2%82", "a truncated three-byte form" },
	{ "%E2%28%A1", "a bad continuation byte" },
};

TEST(decoding_refuses_bad_escapes_controls_and_bad_utf8)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(undecodable); i++) {
		int err;
		const char *out = decode(undecodable[i].in, &err);
		if (out || err != -EINVAL)
			fprintf(stderr, "  %s (%s) was not refused: err %d\n", undecodable[i].in,
				undecodable[i].rule, err);
		CHECK(out == NULL);
		CHECK_INT_EQ(err, -EINVAL);
	}
}

TEST(decoding_refuses_a_raw_nul)
{
	static const char in[] = "a\0b";
	char out[8];
	size_t len;
	CHECK_INT_EQ(sw_query_decode(sw_str_from(in, 3), out, sizeof(out), &len), -EINVAL);
}

TEST(decoding_needs_room_for_the_result_and_its_nul)
{
	char out[4];
	size_t len = 0;
	CHECK_INT_EQ(sw_query_decode(SW_STR("abc"), out, 4, &len), 0);
	CHECK_INT_EQ(len, 3);
	CHECK_INT_EQ(sw_query_decode(SW_STR("abcd"), out, 4, &len), -ENOBUFS);
	/* Escapes count once decoded: 9 bytes of text are 3 bytes. */
	CHECK_INT_EQ(sw_query_decode(SW_STR("%41%42%43"), out, 4, &len), 0);
	CHECK_STR_EQ(out, "ABC");
	CHECK_INT_EQ(sw_query_decode(SW_STR(""), out, 0, &len), -ENOBUFS);
	CHECK_INT_EQ(sw_query_decode(SW_STR(""), out, 1, &len), 0);
	CHECK_INT_EQ(len, 0);
}

/* ---- the reader ---- */

static const char *const names[] = { "limit", "cursor", "since", NULL };

struct read {
	bool ok;
	const char *v[3];
	json_t *errors; /* {"field": ["message", ...]} */
};

static char arena_first[4096];

/* Reads query against names; the field errors as JSON. */
static struct read read_query(struct sw_arena *a, const char *query, size_t len)
{
	struct read r;
	struct sw_field_errors fe = { 0 };
	sw_arena_init(a, arena_first, sizeof(arena_first));
	r.ok = sw_query_read(a, sw_str_from(query, len), names, r.v, &fe);
	char text[8192];
	snprintf(text, sizeof(text), "{%.*s%s}", (int)fe.buf.len, fe.buf.data ? fe.buf.data : "",
		 fe.count ? "]" : "");
	json_error_t je;
	r.errors = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!r.errors) {
		fprintf(stderr, "  field errors are not JSON: %s\n", text);
		abort();
	}
	if ((json_object_size(r.errors) == 0) != r.ok)
		abort(); /* the return value says whether an error was added */
	sw_buf_release(&fe.buf);
	return r;
}

/* The first message of field, or NULL. */
static const char *message(const struct read *r, const char *field)
{
	return json_string_value(json_array_get(json_object_get(r->errors, field), 0));
}


/* A query, the values of limit, cursor and since after it (NULL: absent),
 * and the one field error expected (NULL: none). */
static const struct {
	const char *query;
	const char *v[3];
	const char *field, *message, *rule;
} reads[] = {
	{ "cursor=12_ab&limit=5", { "5", "12_ab", NULL }, NULL, NULL, "known parameters, any order" },
	{ "since=2026-11-21T16%3A22%3A35Z", { NULL, NULL, "2026-11-21T16:22:35Z" }, NULL, NULL,
	  "a value decoded" },
	{ "", { NULL, NULL, NULL }, NULL, NULL, "no query" },
	{ "&&limit=5&=&", { "5", NULL, NULL }, NULL, NULL, "empty pieces and a lone '=' skipped" },
	{ "limit&cursor=", { "", "", NULL }, NULL, NULL, "no '=' or nothing after it: empty" },
	{ "limit=5&sort=name", { "5", NULL, NULL }, "sort", "is not a known parameter",
	  "an unknown name, under its own name" },
	{ "%6Cimit=5", { NULL, NULL, NULL }, "%6Cimit", "is not a known parameter",
	  "names compared as written, not decoded" },
	{ "Limit=5", { NULL, NULL, NULL }, "Limit", "is not a known parameter", "names are case-sensitive" },
	{ "=5", { NULL, NULL, NULL }, "query", "has a parameter without a valid name", "no name" },
	{ "li mit=5", { NULL, NULL, NULL }, "query", "has a parameter without a valid name", "a space" },
	{ "lim\x01it=5", { NULL, NULL, NULL }, "query", "has a parameter without a valid name",
	  "a control byte" },
	{ "\xc3\xa9=5", { NULL, NULL, NULL }, "query", "has a parameter without a valid name",
	  "a byte past ASCII" },
	{ "limit=1&limit=2", { "1", NULL, NULL }, "limit", "must be given once", "repeated" },
	{ "limit&limit", { "", NULL, NULL }, "limit", "must be given once", "repeated without values" },
	{ "limit=%ZZ", { "", NULL, NULL }, "limit", "is not validly encoded", "a bad escape" },
	{ "limit=%00", { "", NULL, NULL }, "limit", "is not validly encoded", "an escaped NUL" },
	{ "limit=%C3", { "", NULL, NULL }, "limit", "is not validly encoded", "bad UTF-8" },
	{ "limit=5%", { "", NULL, NULL }, "limit", "is not validly encoded", "a lone percent" },
};

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

TEST(the_reader_reads_known_parameters_and_refuses_the_rest)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(reads); i++) {
		struct sw_arena a;
		struct read r = read_query(&a, reads[i].query, strlen(reads[i].query));
		bool ok = r.ok == !reads[i].field;
		for (int k = 0; k < 3; k++)
			ok = ok && same(r.v[k], reads[i].v[k]);
		if (reads[i].field)
			ok = ok && json_object_size(r.errors) == 1 &&
			     same(message(&r, reads[i].field), reads[i].message);
		if (!ok)
			fprintf(stderr, "  \"%s\" (%s): ok=%d limit=%s cursor=%s since=%s errors=%s\n",
				reads[i].query, reads[i].rule, r.ok, r.v[0] ? r.v[0] : "(null)",
				r.v[1] ? r.v[1] : "(null)", r.v[2] ? r.v[2] : "(null)",
				json_dumps(r.errors, JSON_COMPACT));
		CHECK(ok);
		json_decref(r.errors);
		sw_arena_release(&a);
	}
}

TEST(a_long_unknown_name_is_reported_cut_to_the_name_limit)
{
	char q[200];
	memset(q, 'x', 100);
	strcpy(q + 100, "=1");
	char cut[SW_QUERY_MAX_NAME_LEN + 1];
	memset(cut, 'x', SW_QUERY_MAX_NAME_LEN);
	cut[SW_QUERY_MAX_NAME_LEN] = '\0';
	struct sw_arena a;
	struct read r = read_query(&a, q, strlen(q));
	CHECK(!r.ok);
	CHECK_STR_EQ(message(&r, cut), "is not a known parameter");
	CHECK_INT_EQ(json_object_size(r.errors), 1);
	json_decref(r.errors);
	sw_arena_release(&a);
}

/* "since=" and a value of n bytes once decoded (escaped when escape). */
static struct read read_long_value(struct sw_arena *a, size_t n, bool escape)
{
	static char q[4096];
	size_t o = (size_t)snprintf(q, sizeof(q), "since=");
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(q + o, sizeof(q) - o, escape ? "%%41" : "A");
	return read_query(a, q, o);
}

TEST(a_value_at_the_length_limit_is_read_and_one_past_it_is_too_long)
{
	struct sw_arena a;
	struct read r = read_long_value(&a, SW_QUERY_MAX_VALUE_LEN, false);
	CHECK(r.ok);
	CHECK_INT_EQ(strlen(r.v[2]), SW_QUERY_MAX_VALUE_LEN);
	json_decref(r.errors);
	r = read_long_value(&a, SW_QUERY_MAX_VALUE_LEN + 1, false);
	CHECK(!r.ok);
	CHECK_STR_EQ(message(&r, "since"), "is too long");
	CHECK_STR_EQ(r.v[2], "");
	json_decref(r.errors);
	/* The limit is on the decoded value: escapes do not count thrice. */
	r = read_long_value(&a, SW_QUERY_MAX_VALUE_LEN, true);
	CHECK(r.ok);
	CHECK_INT_EQ(strlen(r.v[2]), SW_QUERY_MAX_VALUE_LEN);
	json_decref(r.errors);
	r = read_long_value(&a, SW_QUERY_MAX_VALUE_LEN + 1, true);
	CHECK_STR_EQ(message(&r, "since"), "is too long");
	json_decref(r.errors);
	sw_arena_release(&a);
}

/* n pieces "x<i>=1" (unknown names, each its own error). */
static struct read read_pieces(struct sw_arena *a, int n)
{
	static char q[2048];
	size_t o = 0;
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(q + o, sizeof(q) - o, "%sx%d=1", i ? "&" : "", i);
	return read_query(a, q, o);
}

TEST(the_parameter_count_is_bounded)
{
	struct sw_arena a;
	struct read r = read_pieces(&a, SW_QUERY_MAX_PARAMS);
	CHECK_INT_EQ(json_object_size(r.errors), SW_QUERY_MAX_PARAMS);
	CHECK(message(&r, "query") == NULL);
	json_decref(r.errors);
	r = read_pieces(&a, SW_QUERY_MAX_PARAMS + 1);
	CHECK_STR_EQ(message(&r, "query"), "has more than 16 parameters");
	/* Reading stopped: the piece past the limit was not looked at. */
	CHECK_INT_EQ(json_object_size(r.errors), SW_QUERY_MAX_PARAMS + 1);
	CHECK(json_object_get(r.errors, "x16") == NULL);
	json_decref(r.errors);
	r = read_pieces(&a, 100);
	CHECK_INT_EQ(json_object_size(r.errors), SW_QUERY_MAX_PARAMS + 1);
	json_decref(r.errors);
	sw_arena_release(&a);
	/* Empty pieces do not count. */
	char q[256] = "limit=1";
	for (int i = 0; i < 40; i++)
		strcat(q, "&");
	r = read_query(&a, q, strlen(q));
	CHECK(r.ok);
	json_decref(r.errors);
	sw_arena_release(&a);
}

TEST(the_result_says_whether_this_call_added_an_error)
{
	struct sw_arena a;
	sw_arena_init(&a, arena_first, sizeof(arena_first));
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, "earlier", "an error from before");
	const char *v[3];
	CHECK(sw_query_read(&a, SW_STR("limit=5"), names, v, &fe));
	CHECK(!sw_query_read(&a, SW_STR("nope=5"), names, v, &fe));
	sw_buf_release(&fe.buf);
	sw_arena_release(&a);
}

/* ---- pages ---- */

static bool uuid(struct sw_str s)
{
	return sw_is_uuid(s);
}

struct page_read {
	bool ok;
	struct sw_query_page page;
	const char *limit_message, *cursor_message;
};

static struct page_read page(struct sw_arena *a, const char *limit, const char *cursor,
			     bool (*id_valid)(struct sw_str))
{
	static char limit_msg[128], cursor_msg[128];
	struct page_read p = { 0 };
	struct sw_field_errors fe = { 0 };
	sw_arena_init(a, arena_first, sizeof(arena_first));
	p.ok = sw_query_page_read(a, limit, cursor, id_valid, &p.page, &fe);
	char text[1024];
	snprintf(text, sizeof(text), "{%.*s%s}", (int)fe.buf.len, fe.buf.data ? fe.buf.data : "",
		 fe.count ? "]" : "");
	json_t *e = json_loads(text, 0, NULL);
	if (!e)
		abort();
	const char *l = json_string_value(json_array_get(json_object_get(e, "limit"), 0));
	const char *c = json_string_value(json_array_get(json_object_get(e, "cursor"), 0));
	snprintf(limit_msg, sizeof(limit_msg), "%s", l ? l : "");
	snprintf(cursor_msg, sizeof(cursor_msg), "%s", c ? c : "");
	p.limit_message = l ? limit_msg : NULL;
	p.cursor_message = c ? cursor_msg : NULL;
	json_decref(e);
	sw_buf_release(&fe.buf);
	return p;
}

TEST(no_limit_and_no_cursor_is_the_first_page_of_the_default_size)
{
	struct sw_arena a;
	struct page_read p = page(&a, NULL, NULL, uuid);
	CHECK(p.ok);
	CHECK_INT_EQ(p.page.limit, SW_QUERY_PAGE_DEFAULT);
	CHECK_STR_EQ(p.page.limit_plus_one, "51");
	CHECK(p.page.after_us == NULL && p.page.after_id == NULL);
	sw_arena_release(&a);
}

TEST(limits_from_1_to_200_are_read)
{
	static const struct {
		const char *in;
		int limit;
		const char *plus_one;
	} ok[] = { { "1", 1, "2" }, { "200", 200, "201" }, { "50", 50, "51" } };
	for (size_t i = 0; i < SW_ARRAY_SIZE(ok); i++) {
		struct sw_arena a;
		struct page_read p = page(&a, ok[i].in, NULL, uuid);
		CHECK(p.ok);
		CHECK_INT_EQ(p.page.limit, ok[i].limit);
		CHECK_STR_EQ(p.page.limit_plus_one, ok[i].plus_one);
		sw_arena_release(&a);
	}
}

TEST(every_other_limit_is_refused)
{
	static const char *const bad[] = { "0", "201", "999", "1000", "", "x", "-1", "+5", " 5", "5 ",
					   "5.0", "0x10", "00000001", "007", "-0", "1e2", "1e400" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		struct sw_arena a;
		struct page_read p = page(&a, bad[i], NULL, uuid);
		if (p.ok)
			fprintf(stderr, "  limit \"%s\" accepted\n", bad[i]);
		CHECK(!p.ok);
		CHECK_STR_EQ(p.limit_message, "must be a whole number from 1 to 200");
		CHECK_INT_EQ(p.page.limit, SW_QUERY_PAGE_DEFAULT);
		sw_arena_release(&a);
	}
}

TEST(a_cursor_is_microseconds_and_an_id)
{
	struct sw_arena a;
	struct page_read p = page(&a, "10", "1795278155123000_" UUID, uuid);
	CHECK(p.ok);
	CHECK_STR_EQ(p.page.after_us, "1795278155123000");
	CHECK_STR_EQ(p.page.after_id, UUID);
	CHECK_STR_EQ(p.page.limit_plus_one, "11");
	sw_arena_release(&a);
	p = page(&a, NULL, "123456789012345678_9223372036854775807", sw_query_is_number);
	CHECK(p.ok);
	CHECK_STR_EQ(p.page.after_us, "123456789012345678");
	CHECK_STR_EQ(p.page.after_id, "9223372036854775807");
	sw_arena_release(&a);
}

TEST(every_malformed_cursor_is_refused)
{
	static const struct {
		const char *cursor;
		bool number;
		const char *rule;
	} bad[] = {
		{ "", false, "empty" },
		{ "abc", false, "no separator" },
		{ "_" UUID, false, "no microseconds" },
		{ "12_", false, "no id" },
		{ "12_zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", false, "an id that is not a UUID" },
		{ "1234567890123456789_" UUID, false, "19 digits of microseconds" },
		{ "-1_" UUID, false, "a sign" },
		{ "1a_" UUID, false, "a letter in the microseconds" },
		{ "12_" UUID "x", false, "a byte after the UUID" },
		{ "12_34_56", true, "a second separator" },
		{ "12_12345678901234567890", true, "a 20-digit number" },
		{ "12_-5", true, "a negative number" },
		{ "12_9223372036854775808", true, "2^63: past a bigint" },
		{ "12_18446744073709551616", true, "2^64" },
		{ "12_007", true, "leading zeros in the id" },
		{ "12_-0", true, "minus zero" },
		{ "12_1e400", true, "an exponent" },
		{ "012_" UUID, false, "leading zeros in the microseconds" },
		{ "12_" UUID, true, "a UUID where a number belongs" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		struct sw_arena a;
		struct page_read p = page(&a, NULL, bad[i].cursor, bad[i].number ? sw_query_is_number : uuid);
		if (p.ok)
			fprintf(stderr, "  cursor \"%s\" (%s) accepted\n", bad[i].cursor, bad[i].rule);
		CHECK(!p.ok);
		CHECK_STR_EQ(p.cursor_message, "is not a cursor from a previous page");
		CHECK(p.page.after_us == NULL && p.page.after_id == NULL);
		sw_arena_release(&a);
	}
}

TEST(a_bad_limit_leaves_no_cursor)
{
	struct sw_arena a;
	struct page_read p = page(&a, "0", "12_" UUID, uuid);
	CHECK(!p.ok);
	CHECK(p.cursor_message == NULL);
	CHECK(p.page.after_us == NULL && p.page.after_id == NULL);
	sw_arena_release(&a);
}

TEST(numbers_are_1_to_19_digits)
{
	CHECK(sw_query_is_number(SW_STR("0")));
	CHECK(sw_query_is_number(SW_STR("1234567890123456789")));
	CHECK(!sw_query_is_number(SW_STR("12345678901234567890")));
	CHECK(!sw_query_is_number(SW_STR("")));
	CHECK(!sw_query_is_number(SW_STR("1 ")));
}

TEST(a_written_cursor_is_read_back)
{
	char c[SW_QUERY_CURSOR_MAX];
	CHECK_INT_EQ(sw_query_cursor_format("123456789012345678", UUID, c, sizeof(c)), 0);
	CHECK_STR_EQ(c, "123456789012345678_" UUID);
	CHECK_INT_EQ(strlen(c) + 1, SW_QUERY_CURSOR_MAX);
	struct sw_arena a;
	struct page_read p = page(&a, NULL, c, uuid);
	CHECK(p.ok);
	CHECK_STR_EQ(p.page.after_us, "123456789012345678");
	CHECK_STR_EQ(p.page.after_id, UUID);
	sw_arena_release(&a);
}

TEST(a_cursor_that_could_not_be_read_back_is_not_written)
{
	char c[SW_QUERY_CURSOR_MAX];
	CHECK_INT_EQ(sw_query_cursor_format("", UUID, c, sizeof(c)), -EINVAL);
	CHECK_INT_EQ(sw_query_cursor_format("12a", UUID, c, sizeof(c)), -EINVAL);
	CHECK_INT_EQ(sw_query_cursor_format("1234567890123456789", UUID, c, sizeof(c)), -EINVAL);
	CHECK_INT_EQ(sw_query_cursor_format("12", "", c, sizeof(c)), -EINVAL);
	CHECK_INT_EQ(sw_query_cursor_format("12", "a_b", c, sizeof(c)), -EINVAL);
	CHECK_INT_EQ(sw_query_cursor_format("12", "345", c, 6), -ENOBUFS);
	CHECK_INT_EQ(sw_query_cursor_format("12", "345", c, 7), 0);
	CHECK_STR_EQ(c, "12_345");
}

TEST_MAIN()
