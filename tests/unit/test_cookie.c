/* Cookie lookup, Bearer tokens and Set-Cookie values: what is found, what
 * is skipped as malformed, what is refused, and that a value written by
 * sw_set_cookie_header() is found again by sw_cookie_find(). */
#include <errno.h>
#include "steward/http/http_auth.h"
#include "test_help.h"

/* The value of cookie name in header as a C string, or NULL when absent;
 * checks that a found value points into the header. */
static const char *find(const char *header, const char *name)
{
	static char out[256];
	struct sw_str h = sw_str_cstr(header), v;
	if (!sw_cookie_find(h, sw_str_cstr(name), &v))
		return NULL;
	if (v.len && (v.ptr < h.ptr || v.ptr + v.len > h.ptr + h.len))
		abort();
	snprintf(out, sizeof(out), "%.*s", (int)v.len, v.len ? v.ptr : "");
	return out;
}

static const char *bearer(const char *header)
{
	static char out[256];
	struct sw_str t;
	if (!sw_bearer_token(sw_str_cstr(header), &t))
		return NULL;
	snprintf(out, sizeof(out), "%.*s", (int)t.len, t.ptr);
	return out;
}

/* Lookups: header, name, the value expected (NULL: not found), and the
 * rule the row shows. */
static const struct {
	const char *header, *name, *expect, *rule;
} cookie_cases[] = {
	/* found */
	{ "a=1; sid=abc; b=2", "sid", "abc", "found among pairs" },
	{ "sid=abc", "sid", "abc", "found alone" },
	{ "a=1; sid=abc", "a", "1", "found first" },
	/* whitespace around the separators is tolerated */
	{ "a=1;sid=abc", "sid", "abc", "no space after ';'" },
	{ "a=1;   sid=abc  ;b=2", "sid", "abc", "spaces around ';'" },
	{ "a=1;\tsid=abc\t", "sid", "abc", "tabs around ';'" },
	{ "  sid=abc", "sid", "abc", "leading spaces" },
	/* the first well-formed match wins; malformed pairs are skipped */
	{ "sid=one; sid=two", "sid", "one", "first match wins" },
	{ "sid=bad value; sid=good", "sid", "good", "space in value: pair skipped" },
	{ "sid=a\"b; sid=good", "sid", "good", "DQUOTE inside: pair skipped" },
	{ "sid=a,b; sid=good", "sid", "good", "comma: pair skipped" },
	{ "sid=a\\b; sid=good", "sid", "good", "backslash: pair skipped" },
	{ "flag; sid=x", "sid", "x", "pair without '=' skipped" },
	{ "=x; sid=y", "sid", "y", "pair without name skipped" },
	{ ";;; sid=z ;;", "sid", "z", "empty pairs skipped" },
	/* malformed pairs are never found */
	{ "sid =x", "sid", NULL, "space before '='" },
	{ "sid= x", "sid", NULL, "space after '='" },
	{ "s(d=x", "s(d", NULL, "name not a token" },
	{ "sid=x\x01y", "sid", NULL, "control character in value" },
	{ "sid=\xc3\xa9", "sid", NULL, "non-ASCII value" },
	/* names are case-sensitive and whole */
	{ "SID=x", "sid", NULL, "names are case-sensitive" },
	{ "sidx=1; xsid=2; si=3", "sid", NULL, "names match whole" },
	{ "a=sid=x", "sid", NULL, "a value is not a name" },
	/* values */
	{ "sid=; b=2", "sid", "", "empty value" },
	{ "sid=a=b==", "sid", "a=b==", "'=' in value" },
	{ "sid=\"abc\"", "sid", "abc", "DQUOTEs stripped" },
	{ "sid=\"\"", "sid", "", "empty quoted value" },
	/* quotes must enclose cookie-octets */
	{ "sid=\"abc", "sid", NULL, "unbalanced DQUOTE" },
	{ "sid=\"", "sid", NULL, "lone DQUOTE" },
	{ "sid=\"a\"b\"", "sid", NULL, "DQUOTE inside quotes" },
	{ "sid=\"a b\"", "sid", NULL, "space inside quotes" },
	/* absent */
	{ "", "sid", NULL, "empty header" },
	{ "a=1", "sid", NULL, "absent" },
	{ ";", "sid", NULL, "separator only" },
	{ "sid=1", "", NULL, "empty name" },
};

TEST(cookie_lookup_follows_rfc_6265_leniently)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(cookie_cases); i++) {
		const char *got = find(cookie_cases[i].header, cookie_cases[i].name);
		const char *want = cookie_cases[i].expect;
		if (want ? !got || strcmp(got, want) != 0 : got != NULL) {
			fprintf(stderr, "  %s: \"%s\" gave %s\n", cookie_cases[i].rule,
				cookie_cases[i].header, got ? got : "(not found)");
			CHECK(false);
		}
	}
}

TEST(cookie_absent_from_a_null_header)
{
	struct sw_str v;
	CHECK(!sw_cookie_find(SW_STR_NULL, SW_STR("sid"), &v));
}

TEST(cookie_lookup_stops_at_the_given_length)
{
	struct sw_str v;
	const char h[] = "a=1; sid=abcdef";
	REQUIRE(sw_cookie_find(sw_str_from(h, 12), SW_STR("sid"), &v));
	CHECK(v.len == 3 && memcmp(v.ptr, "abc", 3) == 0);
}

TEST(bearer_token_is_taken_whatever_the_scheme_case)
{
	static const char *const ok[][2] = {
		{ "Bearer abc", "abc" },
		{ "bearer abc", "abc" },
		{ "BEARER abc", "abc" },
		{ "Bearer st_AbC-_09", "st_AbC-_09" },
		{ "Bearer a.b~c+d/e", "a.b~c+d/e" },
		{ "Bearer   abc", "abc" },  /* several spaces */
		{ "Bearer abc==", "abc==" }, /* trailing padding */
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(ok); i++)
		CHECK_STR_EQ(bearer(ok[i][0]), ok[i][1]);
}

TEST(bearer_token_refuses_anything_else)
{
	static const char *const bad[] = {
		"", "Bearer", "Bearer ", "Bearer  ", "Bearerabc", "Bearer\tabc", "Basic abc",
		"Bearer abc ", "Bearer abc def", "Bearer ab;c", "Bearer a=b", "Bearer ===",
		"Bearer abc\t", " Bearer abc", "Bearer \"abc\"", "Bearer ab,c", "Bear abc",
		"Bearer\302\240abc" /* NBSP */, "Bearer abc\r\n",
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		if (bearer(bad[i]) != NULL) {
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
			CHECK(false);
		}
	}
}

TEST(set_cookie_has_the_session_attributes)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_set_cookie_header(&b, "sid", SW_STR("abc"), 3600, false) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data, "sid=abc; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax");
	b.len = 0;
	REQUIRE(sw_set_cookie_header(&b, "sid", SW_STR("abc"), 1209600, true) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data, "sid=abc; Path=/; Max-Age=1209600; HttpOnly; SameSite=Lax; Secure");
	sw_buf_release(&b);
}

TEST(set_cookie_with_zero_max_age_deletes)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_set_cookie_header(&b, "sid", SW_STR("ignored"), 0, true) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data, "sid=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
	sw_buf_release(&b);
}

TEST(set_cookie_refuses_bad_names_values_and_ages)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append_lit(&b, "keep") == 0);
	static const char *const names[] = { "", "a b", "a;b", "a=b", "a\"", "s\xc3\xa9" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(names); i++)
		CHECK_INT_EQ(sw_set_cookie_header(&b, names[i], SW_STR("v"), 60, false), -EINVAL);
	CHECK_INT_EQ(sw_set_cookie_header(&b, NULL, SW_STR("v"), 60, false), -EINVAL);
	static const char *const values[] = { "a b", "a;b", "a,b", "a\"b", "a\\b", "a\r\nb",
					      "\xc3\xa9" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(values); i++)
		CHECK_INT_EQ(sw_set_cookie_header(&b, "sid", sw_str_cstr(values[i]), 60, false),
			     -EINVAL);
	CHECK_INT_EQ(sw_set_cookie_header(&b, "sid", SW_STR("v"), -1, false), -EINVAL);
	CHECK(b.len == 4 && memcmp(b.data, "keep", 4) == 0);
	sw_buf_release(&b);
}

TEST(set_cookie_appends_and_is_found_again)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append_lit(&b, "x") == 0);
	const char *value = "AbC-_09=!#$%&'()*+./:<>?@[]^`{|}~";
	REQUIRE(sw_set_cookie_header(&b, "sid", sw_str_cstr(value), 60, false) == 0);
	CHECK(b.data[0] == 'x');
	struct sw_str v;
	REQUIRE(sw_cookie_find(sw_str_from(b.data + 1, b.len - 1), SW_STR("sid"), &v));
	CHECK(sw_str_eq(v, sw_str_cstr(value)));
	sw_buf_release(&b);
}

TEST_MAIN()
