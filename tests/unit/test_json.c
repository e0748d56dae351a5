/* JSON writer (escaping, structure checks) and the strict input parser. */
#include "steward/base/json.h"
#include "test_help.h"

static char *render(void (*fn)(struct sw_json *), int *ret_err)
{
	static struct sw_buf b;
	b.len = 0;
	struct sw_json j;
	sw_json_init(&j, &b);
	fn(&j);
	*ret_err = sw_json_finish(&j);
	sw_buf_append(&b, "", 1);
	return b.data;
}

static void nested(struct sw_json *j)
{
	sw_json_object_begin(j);
	sw_json_key(j, "a");
	sw_json_int(j, -5);
	sw_json_key(j, "b");
	sw_json_array_begin(j);
	sw_json_bool(j, true);
	sw_json_null(j);
	sw_json_cstr(j, "x");
	sw_json_array_end(j);
	sw_json_object_end(j);
}

TEST(writer_builds_nested_document)
{
	int err;
	char *s = render(nested, &err);
	CHECK_INT_EQ(err, 0);
	CHECK_STR_EQ(s, "{\"a\":-5,\"b\":[true,null,\"x\"]}");
}

static void escapes(struct sw_json *j)
{
	sw_json_object_begin(j);
	sw_json_key(j, "k\"");
	sw_json_string(j, sw_str_from("q\"b\\n\n\x01</", 9));
	sw_json_object_end(j);
}

TEST(writer_escapes_quotes_backslashes_and_controls)
{
	int err;
	char *s = render(escapes, &err);
	CHECK_INT_EQ(err, 0);
	CHECK_STR_EQ(s, "{\"k\\\"\":\"q\\\"b\\\\n\\n\\u0001</\"}");
}

/* Strings with nothing to escape are copied whole into the room reserved
 * for them: every length around the buffer's growth steps (256, 512) must
 * come out quoted and intact, as must one escape after a long clean run. */
TEST(writer_plain_strings_across_buffer_growth)
{
	char text[600];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (char)('a' + i % 26);
	for (size_t prefix = 0; prefix < 8; prefix++) {
		for (size_t n = 240; n < sizeof(text); n += 7) {
			struct sw_buf b = { 0 };
			CHECK_INT_EQ(sw_buf_append(&b, text, prefix), 0);
			CHECK_INT_EQ(sw_json_append_escaped(&b, sw_str_from(text, n)), 0);
			CHECK(b.len == prefix + n + 2);
			CHECK(b.data[prefix] == '"' && b.data[prefix + n + 1] == '"');
			CHECK(memcmp(b.data + prefix + 1, text, n) == 0);
			sw_buf_release(&b);
		}
	}
	text[300] = '"';
	struct sw_buf b = { 0 };
	CHECK_INT_EQ(sw_json_append_escaped(&b, sw_str_from(text, 400)), 0);
	CHECK(b.len == 403);
	CHECK(b.data[301] == '\\' && b.data[302] == '"' && b.data[402] == '"');
	CHECK(memcmp(b.data + 303, text + 301, 99) == 0);
	sw_buf_release(&b);
}

/* The escaper, one byte at a time, as the JSON grammar says: what the
 * word-at-a-time scan must agree with. */
static size_t reference_escape(const unsigned char *s, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if (c < 0x20) {
			memcpy(out + o, "\\u00", 4);
			out[o + 4] = hex[c >> 4];
			out[o + 5] = hex[c & 15];
			o += 6;
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	return o;
}

/* Every byte value at every place of strings around the scan's eight-byte
 * words (lengths 1 to 24), alone and beside bytes that look like the ones
 * it tests for (0x1f, 0x20, '!', '#', '[', ']', 0x7f, 0x80, 0xff: the
 * borrows of the word arithmetic), escapes exactly as byte by byte. */
TEST(writer_escapes_every_byte_at_every_place_as_byte_by_byte)
{
	static const unsigned char fillers[] = { 'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff, 0x1f };
	unsigned char text[24];
	char want[24 * 6 + 2];
	int mismatches = 0;
	for (size_t f = 0; f < sizeof(fillers); f++) {
		for (size_t n = 1; n <= sizeof(text); n++) {
			for (size_t at = 0; at < n; at++) {
				for (unsigned v = 0; v < 256; v++) {
					memset(text, fillers[f], n);
					text[at] = (unsigned char)v;
					struct sw_buf b = { 0 };
					CHECK_INT_EQ(sw_json_append_escaped(&b, sw_str_from((const char *)text, n)), 0);
					size_t wn = reference_escape(text, n, want);
					if (b.len != wn || memcmp(b.data, want, wn) != 0)
						mismatches++;
					sw_buf_release(&b);
				}
			}
		}
	}
	CHECK_INT_EQ(mismatches, 0);
}

static void unclosed(struct sw_json *j)
{
	sw_json_object_begin(j);
	sw_json_key(j, "a");
}

static void value_without_key(struct sw_json *j)
{
	sw_json_object_begin(j);
	sw_json_key(j, "a");
	sw_json_int(j, 1);
	sw_json_object_end(j);
	sw_json_int(j, 2);
}

static void too_deep(struct sw_json *j)
{
	for (int i = 0; i < SW_JSON_MAX_DEPTH + 1; i++)
		sw_json_array_begin(j);
}

TEST(writer_refuses_malformed_structure)
{
	int err;
	render(unclosed, &err);
	CHECK(err < 0);
	render(value_without_key, &err);
	CHECK(err < 0);
	render(too_deep, &err);
	CHECK(err < 0);
}

TEST(parser_accepts_an_object)
{
	char err[160];
	json_t *v = sw_json_parse_object(SW_STR("{\"a\":1}"), err, sizeof(err));
	REQUIRE(v);
	CHECK(json_integer_value(json_object_get(v, "a")) == 1);
	json_decref(v);
}

/* The member of a number jansson refuses for its size, or nothing. */
static const char *out_of_range(const char *body)
{
	static char path[64];
	return sw_json_out_of_range_path(sw_str_cstr(body), path, sizeof(path)) ? path : NULL;
}

TEST(a_number_out_of_range_is_named_by_its_member)
{
	CHECK_STR_EQ(out_of_range("{\"port\": 9223372036854775808}"), "port");
	CHECK_STR_EQ(out_of_range("{\"a\": 1, \"b\": -9223372036854775809}"), "b");
	CHECK_STR_EQ(out_of_range("{\"a\": {\"x\": \"1e400\", \"y\": [1, 2, 1e400]}}"), "a.y[2]");
	CHECK_STR_EQ(out_of_range("{\"s\": \"a\\\"b\", \"n\": -1E+400}"), "n");
	CHECK_STR_EQ(out_of_range("{\"list\": [{\"k\": 1}, {\"k\": 123456789012345678901234567890}]}"), "list[1].k");
	/* In range, or not JSON for another reason too: nothing. */
	CHECK(!out_of_range("{\"a\": 9223372036854775807, \"b\": -9223372036854775808, \"c\": 1e308, \"d\": 1e-400, \"e\": -0}"));
	CHECK(!out_of_range("{\"a\": 1e400, \"b\": }"));
	CHECK(!out_of_range("{\"a\": 01}"));
	CHECK(!out_of_range(""));
	/* And the parser refuses what the scanner names. */
	char err[160];
	CHECK(!sw_json_parse_object(sw_str_cstr("{\"a\": 1e400}"), err, sizeof(err)));
	CHECK(!sw_json_parse_object(sw_str_cstr("{\"a\": 9223372036854775808}"), err, sizeof(err)));
}

TEST(parser_refuses_duplicate_keys)
{
	char err[160];
	CHECK(sw_json_parse_object(SW_STR("{\"a\":1,\"a\":2}"), err, sizeof(err)) == NULL);
	CHECK(strstr(err, "duplicate") != NULL);
}

TEST(parser_refuses_depth_beyond_limit)
{
	char body[256], err[160];
	size_t n = 0;
	body[n++] = '{';
	body[n++] = '"';
	body[n++] = 'a';
	body[n++] = '"';
	body[n++] = ':';
	for (int i = 0; i < SW_JSON_MAX_DEPTH; i++)
		body[n++] = '[';
	for (int i = 0; i < SW_JSON_MAX_DEPTH; i++)
		body[n++] = ']';
	body[n++] = '}';
	CHECK(sw_json_parse_object(sw_str_from(body, n), err, sizeof(err)) == NULL);
	CHECK(strstr(err, "deeper") != NULL);
	/* Exactly at the limit passes: the object plus limit-1 arrays. */
	n = 0;
	body[n++] = '{';
	body[n++] = '"';
	body[n++] = 'a';
	body[n++] = '"';
	body[n++] = ':';
	for (int i = 0; i < SW_JSON_MAX_DEPTH - 1; i++)
		body[n++] = '[';
	for (int i = 0; i < SW_JSON_MAX_DEPTH - 1; i++)
		body[n++] = ']';
	body[n++] = '}';
	json_t *v = sw_json_parse_object(sw_str_from(body, n), err, sizeof(err));
	CHECK(v != NULL);
	json_decref(v);
}

TEST(parser_ignores_brackets_inside_strings_for_depth)
{
	char err[160];
	json_t *v = sw_json_parse_object(SW_STR("{\"a\":\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\"[[[\"}"), err, sizeof(err));
	CHECK(v != NULL);
	json_decref(v);
}

TEST(parser_refuses_non_objects_and_garbage)
{
	char err[160];
	CHECK(sw_json_parse_object(SW_STR("[1]"), err, sizeof(err)) == NULL);
	CHECK(sw_json_parse_object(SW_STR("\"s\""), err, sizeof(err)) == NULL);
	CHECK(sw_json_parse_object(SW_STR("{"), err, sizeof(err)) == NULL);
	CHECK(sw_json_parse_object(SW_STR(""), err, sizeof(err)) == NULL);
	CHECK(sw_json_parse_object(SW_STR("{} {}"), err, sizeof(err)) == NULL);
}

TEST_MAIN()
