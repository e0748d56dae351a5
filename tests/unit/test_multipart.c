/* multipart/form-data (src/http/multipart.c): the Content-Type's boundary,
 * bodies written byte for byte by curl 7.88 (-F) and node 20's FormData
 * (undici), and one test per refusal. */
#include <errno.h>
#include "steward/http/multipart.h"
#include "test_help.h"

#define BODY(lit) sw_str_from((lit), sizeof(lit) - 1)

/* Parses body with boundary "b" (or the given one); returns the result. */
static int parse_b(const char *boundary, struct sw_str body, struct sw_multipart_part *parts,
		   size_t *n, const char **why)
{
	*why = NULL;
	return sw_multipart_parse(body, sw_str_cstr(boundary), parts, SW_MULTIPART_MAX_PARTS, n, why);
}

static bool view_eq(struct sw_str s, const char *want)
{
	return sw_str_eq(s, sw_str_cstr(want));
}

static bool inside(struct sw_str view, struct sw_str body)
{
	return view.len == 0 || (view.ptr >= body.ptr && view.ptr + view.len <= body.ptr + body.len);
}

/* A refusal of a body with boundary "b": -EINVAL and a reason. */
#define REFUSED(lit, why_part)                                                              \
	do {                                                                                \
		struct sw_multipart_part p_[SW_MULTIPART_MAX_PARTS];                         \
		size_t n_ = 99;                                                             \
		const char *w_;                                                             \
		CHECK_INT_EQ(parse_b("b", BODY(lit), p_, &n_, &w_), -EINVAL);               \
		CHECK(w_ && strstr(w_, why_part));                                          \
		if (w_ && !strstr(w_, why_part))                                            \
			fprintf(stderr, "  reason was: %s\n", w_);                         \
		CHECK_INT_EQ(n_, 99); /* set only on success */                             \
	} while (0)

#define CD "Content-Disposition: form-data; name=\"a\"\r\n"

/* Parses the literal body with boundary, requiring success and want parts
 * (declares parts and n). */
#define PARSED(boundary, lit, want)                                            \
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];                \
	size_t n = 0;                                                           \
	const char *why;                                                        \
	REQUIRE(parse_b((boundary), BODY(lit), parts, &n, &why) == 0);         \
	REQUIRE(n == (want))

/* ---- the boundary ---- */

static int boundary_of(const char *ct, struct sw_str *b)
{
	*b = SW_STR("unchanged");
	return sw_multipart_boundary(sw_str_cstr(ct), b);
}

TEST(boundary_of_curl_and_node_content_types)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=------------------------532ba920008791fc", &b), 0);
	CHECK(view_eq(b, "------------------------532ba920008791fc"));
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=----formdata-undici-074507634206", &b), 0);
	CHECK(view_eq(b, "----formdata-undici-074507634206"));
	/* Chrome's shape. */
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW", &b), 0);
	CHECK(view_eq(b, "----WebKitFormBoundary7MA4YWxkTrZu0gW"));
}

TEST(boundary_quoted_may_hold_bchars_that_are_not_token_chars)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"gc0p4Jq0M2Yt08j:34c0?p=a b\"", &b), 0);
	CHECK(view_eq(b, "gc0p4Jq0M2Yt08j:34c0?p=a b"));
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=gc0p4Jq0M2Yt08j:34c0", &b), -EINVAL);
}

TEST(boundary_type_is_case_insensitive_and_other_parameters_are_ignored)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("Multipart/Form-Data;charset=utf-8;BOUNDARY=xyz ", &b), 0);
	CHECK(view_eq(b, "xyz"));
}

TEST(boundary_refused_for_other_types)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("multipart/mixed; boundary=xyz", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("application/json", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-datax; boundary=xyz", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("", &b), -EINVAL);
	CHECK(view_eq(b, "unchanged"));
}

TEST(boundary_missing_empty_or_repeated_is_refused)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("multipart/form-data", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; charset=utf-8", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"\"", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=a; boundary=a", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary = a", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=a;", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data boundary=a", &b), -EINVAL);
}

TEST(boundary_of_70_characters_is_accepted_71_refused)
{
	char ct[200], b70[72];
	memset(b70, 'x', 71);
	b70[71] = '\0';
	struct sw_str b;
	snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%s", b70);
	CHECK_INT_EQ(boundary_of(ct, &b), -EINVAL);
	b70[70] = '\0';
	snprintf(ct, sizeof(ct), "multipart/form-data; boundary=%s", b70);
	CHECK_INT_EQ(boundary_of(ct, &b), 0);
	CHECK_INT_EQ(b.len, 70);
}

TEST(boundary_ending_with_space_or_with_escapes_is_refused)
{
	struct sw_str b;
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"ab \"", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"a\\b\"", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"ab", &b), -EINVAL);
	CHECK_INT_EQ(boundary_of("multipart/form-data; boundary=\"a@b\"", &b), -EINVAL);
}

/* ---- bodies real senders write ---- */

TEST(curl_fields_parse)
{
	static const char body[] =
		"--------------------------532ba920008791fc\r\n"
		"Content-Disposition: form-data; name=\"applicationId\"\r\n"
		"\r\n"
		"0b7e6a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b\r\n"
		"--------------------------532ba920008791fc\r\n"
		"Content-Disposition: form-data; name=\"ref\"\r\n"
		"\r\n"
		"main\r\n"
		"--------------------------532ba920008791fc--\r\n";
	struct sw_str b;
	REQUIRE(sw_multipart_boundary(
			SW_STR("multipart/form-data; boundary=------------------------532ba920008791fc"), &b) == 0);
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
	size_t n = 0;
	const char *why = NULL;
	REQUIRE(sw_multipart_parse(BODY(body), b, parts, SW_MULTIPART_MAX_PARTS, &n, &why) == 0);
	REQUIRE(n == 2);
	CHECK(view_eq(parts[0].name, "applicationId"));
	CHECK(view_eq(parts[0].data, "0b7e6a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b"));
	CHECK(parts[0].filename.len == 0 && parts[0].content_type.len == 0);
	CHECK(view_eq(parts[1].name, "ref"));
	CHECK(view_eq(parts[1].data, "main"));
	for (size_t i = 0; i < n; i++)
		CHECK(inside(parts[i].name, BODY(body)) && inside(parts[i].data, BODY(body)));
}

TEST(curl_file_upload_parses)
{
	static const char body[] =
		"--------------------------9f5413d9a7947368\r\n"
		"Content-Disposition: form-data; name=\"applicationId\"\r\n"
		"\r\n"
		"0b7e6a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b\r\n"
		"--------------------------9f5413d9a7947368\r\n"
		"Content-Disposition: form-data; name=\"archive\"; filename=\"app.tar.gz\"\r\n"
		"Content-Type: application/gzip\r\n"
		"\r\n"
		"hi\n"
		"\r\n"
		"--------------------------9f5413d9a7947368--\r\n";
	PARSED("------------------------9f5413d9a7947368", body, 2);
	CHECK(view_eq(parts[1].name, "archive"));
	CHECK(view_eq(parts[1].filename, "app.tar.gz"));
	CHECK(view_eq(parts[1].content_type, "application/gzip"));
	CHECK(view_eq(parts[1].data, "hi\n"));
	CHECK(inside(parts[1].filename, BODY(body)) && inside(parts[1].content_type, BODY(body)));
}

TEST(curl_percent_encodes_quotes_in_filenames_and_we_keep_them_as_sent)
{
	static const char body[] =
		"--------------------------bf381cb01fe27fb0\r\n"
		"Content-Disposition: form-data; name=\"archive\"; filename=\"we%22ird.txt\"\r\n"
		"Content-Type: text/plain\r\n"
		"\r\n"
		"hi\n"
		"\r\n"
		"--------------------------bf381cb01fe27fb0--\r\n";
	PARSED("------------------------bf381cb01fe27fb0", body, 1);
	CHECK(view_eq(parts[0].filename, "we%22ird.txt"));
}

TEST(node_formdata_upload_parses_with_a_delimiter_lookalike_in_the_data)
{
	static const char body[] =
		"------formdata-undici-074507634206\r\n"
		"Content-Disposition: form-data; name=\"applicationId\"\r\n"
		"\r\n"
		"0b7e6a52-1c2d-4e5f-8a9b-0c1d2e3f4a5b\r\n"
		"------formdata-undici-074507634206\r\n"
		"Content-Disposition: form-data; name=\"archive\"; filename=\"app.tar.gz\"\r\n"
		"Content-Type: application/gzip\r\n"
		"\r\n"
		"hello\r\n"
		"--world\n"
		"\r\n"
		"------formdata-undici-074507634206--\r\n";
	PARSED("----formdata-undici-074507634206", body, 2);
	CHECK(view_eq(parts[0].name, "applicationId"));
	CHECK(view_eq(parts[1].name, "archive"));
	CHECK(view_eq(parts[1].filename, "app.tar.gz"));
	CHECK(view_eq(parts[1].content_type, "application/gzip"));
	CHECK(view_eq(parts[1].data, "hello\r\n--world\n"));
}

TEST(node_formdata_three_parts_with_an_encoded_filename)
{
	static const char body[] =
		"------formdata-undici-058501358816\r\n"
		"Content-Disposition: form-data; name=\"applicationId\"\r\n"
		"\r\n"
		"x\r\n"
		"------formdata-undici-058501358816\r\n"
		"Content-Disposition: form-data; name=\"ref\"\r\n"
		"\r\n"
		"main\r\n"
		"------formdata-undici-058501358816\r\n"
		"Content-Disposition: form-data; name=\"weird\"; filename=\"we%22ird%0Aname.txt\"\r\n"
		"Content-Type: application/octet-stream\r\n"
		"\r\n"
		"a\r\n"
		"------formdata-undici-058501358816--\r\n";
	PARSED("----formdata-undici-058501358816", body, 3);
	CHECK(view_eq(parts[0].data, "x"));
	CHECK(view_eq(parts[1].data, "main"));
	CHECK(view_eq(parts[2].filename, "we%22ird%0Aname.txt"));
	CHECK(view_eq(parts[2].content_type, "application/octet-stream"));
	CHECK(view_eq(parts[2].data, "a"));
}

TEST(binary_data_with_nul_cr_and_lf_is_kept_exactly)
{
	static const char body[] = "--b\r\n" CD "\r\n\0\r\r\n\n\xff--b\r\n\r\n--b--";
	PARSED("b", body, 1);
	CHECK(parts[0].data.len == 11 && memcmp(parts[0].data.ptr, "\0\r\r\n\n\xff--b\r\n", 11) == 0);
}

TEST(empty_data_token_names_and_header_case_are_accepted)
{
	static const char body[] = "--b\r\n"
				   "content-disposition:FORM-DATA;NAME=a;Filename=\"\"\r\n"
				   "CONTENT-TYPE: text/plain; charset=\"utf-8\"  \r\n"
				   "\r\n"
				   "\r\n--b--";
	PARSED("b", body, 1);
	CHECK(view_eq(parts[0].name, "a"));
	CHECK(parts[0].filename.len == 0);
	CHECK(view_eq(parts[0].content_type, "text/plain; charset=\"utf-8\""));
	CHECK(parts[0].data.len == 0);
}

TEST(preamble_and_epilogue_of_crlfs_are_ignored)
{
	static const char body[] = "\r\n\r\n--b\r\n" CD "\r\nv\r\n--b--\r\n\r\n\r\n";
	PARSED("b", body, 1);
	CHECK(view_eq(parts[0].data, "v"));
}

TEST(utf8_filename_octets_are_allowed)
{
	static const char body[] = "--b\r\n"
				   "Content-Disposition: form-data; name=\"f\"; filename=\"caf\xc3\xa9.tgz\"\r\n"
				   "\r\nv\r\n--b--";
	PARSED("b", body, 1);
	CHECK(view_eq(parts[0].filename, "caf\xc3\xa9.tgz"));
}

TEST(eight_parts_parse_nine_are_e2big)
{
	char body[2048];
	size_t len = 0;
	for (int i = 0; i < 9; i++)
		len += (size_t)snprintf(body + len, sizeof(body) - len,
					"--b\r\nContent-Disposition: form-data; name=\"f%d\"\r\n\r\n%d\r\n", i, i);
	len += (size_t)snprintf(body + len, sizeof(body) - len, "--b--\r\n");
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
	size_t n = 99;
	const char *why = NULL;
	CHECK_INT_EQ(sw_multipart_parse(sw_str_from(body, len), SW_STR("b"), parts, 20, &n, &why), -E2BIG);
	CHECK(why && strstr(why, "too many parts"));
	CHECK_INT_EQ(n, 99);
	/* The caller's max is honoured below the cap. */
	CHECK_INT_EQ(sw_multipart_parse(sw_str_from(body, len), SW_STR("b"), parts, 2, &n, &why), -E2BIG);

	/* Eight: drop the ninth part. */
	char *ninth = strstr(body, "--b\r\nContent-Disposition: form-data; name=\"f8\"");
	REQUIRE(ninth);
	len = (size_t)(ninth - body) + (size_t)snprintf(ninth, 16, "--b--\r\n");
	CHECK_INT_EQ(sw_multipart_parse(sw_str_from(body, len), SW_STR("b"), parts, 20, &n, &why), 0);
	CHECK_INT_EQ(n, 8);
	CHECK(view_eq(parts[7].name, "f7") && view_eq(parts[7].data, "7"));
}

TEST(header_section_of_1024_bytes_is_accepted_1025_refused)
{
	/* "Content-Disposition: form-data; name=\"a\"; filename=\"" + x* + "\"\r\n\r\n" */
	const char *head = "Content-Disposition: form-data; name=\"a\"; filename=\"";
	size_t fixed = strlen(head) + strlen("\"\r\n\r\n");
	for (size_t total = 1024; total <= 1025; total++) {
		char body[2048];
		size_t len = (size_t)snprintf(body, sizeof(body), "--b\r\n%s", head);
		memset(body + len, 'x', total - fixed);
		len += total - fixed;
		len += (size_t)snprintf(body + len, sizeof(body) - len, "\"\r\n\r\nv\r\n--b--");
		struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
		size_t n = 0;
		const char *why = NULL;
		int r = parse_b("b", sw_str_from(body, len), parts, &n, &why);
		if (total == 1024) {
			CHECK_INT_EQ(r, 0);
			CHECK_INT_EQ(parts[0].filename.len, total - fixed);
		} else {
			CHECK_INT_EQ(r, -EINVAL);
			CHECK(why && strstr(why, "over 1024 bytes"));
		}
	}
}

/* ---- refusals of the structure ---- */

TEST(text_preamble_is_refused)
{
	REFUSED("This is a preamble.\r\n--b\r\n" CD "\r\nv\r\n--b--", "does not start with the boundary");
}

TEST(body_not_starting_with_the_boundary_is_refused)
{
	REFUSED("--c\r\n" CD "\r\nv\r\n--c--", "does not start with the boundary");
	REFUSED("", "does not start with the boundary");
	REFUSED("-b\r\n", "does not start with the boundary");
}

TEST(bare_lf_line_ends_are_refused)
{
	REFUSED("--b\n" CD "\r\nv\r\n--b--", "bare LF");
	REFUSED("\n--b\r\n" CD "\r\nv\r\n--b--", "bare LF");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"\n\nv\r\n--b--", "bare LF");
	REFUSED("--b\r\n" CD "\n\r\nv\r\n--b--", "bare LF");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b\n" CD "\r\nw\r\n--b--", "bare LF");
}

TEST(bare_cr_in_a_header_section_is_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data;\r name=\"a\"\r\n\r\nv\r\n--b--", "bare CR");
}

TEST(missing_close_delimiter_is_refused)
{
	REFUSED("--b\r\n" CD "\r\nv", "without a close delimiter");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b", "without a close delimiter");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b\r\n", "without a close delimiter");
	REFUSED("--b", "without a close delimiter");
}

TEST(body_without_parts_is_refused)
{
	REFUSED("--b--\r\n", "no parts");
}

TEST(bytes_after_the_close_delimiter_are_refused)
{
	REFUSED("--b\r\n" CD "\r\nv\r\n--b--\r\nepilogue", "after the close delimiter");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b-- ", "after the close delimiter");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b--\n", "after the close delimiter");
}

TEST(transport_padding_after_a_delimiter_is_refused)
{
	REFUSED("--b \r\n" CD "\r\nv\r\n--b--", "bytes after a boundary delimiter");
	REFUSED("--b\r\n" CD "\r\nv\r\n--b\t\r\n" CD "\r\nw\r\n--b--", "bytes after a boundary delimiter");
}

TEST(boundary_inside_a_part_followed_by_other_bytes_is_refused)
{
	REFUSED("--b\r\n" CD "\r\nv\r\n--bb and more\r\n--b--", "bytes after a boundary delimiter");
}

TEST(bad_boundary_argument_is_refused)
{
	struct sw_multipart_part parts[1];
	size_t n;
	const char *why = NULL;
	CHECK_INT_EQ(sw_multipart_parse(SW_STR("--\r\n"), SW_STR(""), parts, 1, &n, &why), -EINVAL);
	CHECK(why != NULL);
}

/* ---- refusals of a part's header section ---- */

TEST(header_section_not_ending_is_refused)
{
	REFUSED("--b\r\n" CD "\r\n--b--", "does not end");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n--b--", "does not end");
}

TEST(header_section_over_the_limit_without_a_line_end_is_refused)
{
	char body[4096];
	size_t len = (size_t)snprintf(body, sizeof(body), "--b\r\nContent-Disposition: form-data; name=\"");
	memset(body + len, 'x', 2000);
	len += 2000;
	len += (size_t)snprintf(body + len, sizeof(body) - len, "\"\r\n\r\nv\r\n--b--");
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
	size_t n;
	const char *why = NULL;
	CHECK_INT_EQ(parse_b("b", sw_str_from(body, len), parts, &n, &why), -EINVAL);
	CHECK(why && strstr(why, "over 1024 bytes"));
}

TEST(part_without_content_disposition_is_refused)
{
	REFUSED("--b\r\n\r\nv\r\n--b--", "no Content-Disposition");
	REFUSED("--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--", "no Content-Disposition");
}

TEST(disposition_other_than_form_data_is_refused)
{
	REFUSED("--b\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n--b--", "not form-data");
	REFUSED("--b\r\nContent-Disposition: form-datax; name=\"a\"\r\n\r\nv\r\n--b--", "not form-data");
	REFUSED("--b\r\nContent-Disposition: ; name=\"a\"\r\n\r\nv\r\n--b--", "not form-data");
}

TEST(part_without_a_name_is_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data\r\n\r\nv\r\n--b--", "no name");
	REFUSED("--b\r\nContent-Disposition: form-data; filename=\"x\"\r\n\r\nv\r\n--b--", "no name");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"\"\r\n\r\nv\r\n--b--", "no name");
}

TEST(filename_star_is_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"; filename*=UTF-8''x.tgz\r\n\r\nv\r\n--b--",
		"filename*");
}

TEST(unknown_disposition_parameter_is_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"; size=3\r\n\r\nv\r\n--b--",
		"other than name and filename");
}

TEST(repeated_disposition_parameters_are_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\nv\r\n--b--", "repeats name");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"; filename=x; filename=y\r\n\r\nv\r\n--b--",
		"repeats filename");
}

TEST(backslash_escapes_in_quoted_values_are_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\\\"b\"\r\n\r\nv\r\n--b--", "malformed");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\"; filename=\"C:\\\\x.tgz\"\r\n\r\nv\r\n--b--",
		"malformed");
}

TEST(malformed_disposition_values_are_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--b--", "malformed");
	REFUSED("--b\r\nContent-Disposition: form-data; name = \"a\"\r\n\r\nv\r\n--b--", "malformed");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\";\r\n\r\nv\r\n--b--", "malformed");
	REFUSED("--b\r\nContent-Disposition: form-data name=\"a\"\r\n\r\nv\r\n--b--", "malformed");
	REFUSED("--b\r\nContent-Disposition: form-data; name=a b\r\n\r\nv\r\n--b--", "malformed");
}

TEST(control_characters_in_a_header_are_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\x01\"\r\n\r\nv\r\n--b--", "control character");
	REFUSED("--b\r\nContent-Disposition: form-data; name=\"a\x7f\"\r\n\r\nv\r\n--b--", "control character");
}

TEST(headers_other_than_disposition_and_type_are_refused)
{
	REFUSED("--b\r\n" CD "Content-Transfer-Encoding: base64\r\n\r\nv\r\n--b--", "a header other than");
	REFUSED("--b\r\n" CD "X-Extra: 1\r\n\r\nv\r\n--b--", "a header other than");
}

TEST(repeated_headers_are_refused)
{
	REFUSED("--b\r\n" CD CD "\r\nv\r\n--b--", "repeats Content-Disposition");
	REFUSED("--b\r\n" CD "Content-Type: text/plain\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--",
		"repeats Content-Type");
}

TEST(malformed_header_lines_are_refused)
{
	REFUSED("--b\r\nContent-Disposition : form-data; name=\"a\"\r\n\r\nv\r\n--b--", "malformed header line");
	REFUSED("--b\r\nno colon here\r\n\r\nv\r\n--b--", "malformed header line");
	REFUSED("--b\r\n: form-data\r\n\r\nv\r\n--b--", "malformed header line");
}

TEST(folded_header_lines_are_refused)
{
	REFUSED("--b\r\nContent-Disposition: form-data;\r\n name=\"a\"\r\n\r\nv\r\n--b--", "folded");
	REFUSED("--b\r\n" CD "\tContent-Type: text/plain\r\n\r\nv\r\n--b--", "folded");
}

TEST(malformed_part_content_type_is_refused)
{
	REFUSED("--b\r\n" CD "Content-Type: text\r\n\r\nv\r\n--b--", "Content-Type is malformed");
	REFUSED("--b\r\n" CD "Content-Type: text/plain; charset\r\n\r\nv\r\n--b--", "Content-Type is malformed");
	REFUSED("--b\r\n" CD "Content-Type:\r\n\r\nv\r\n--b--", "Content-Type is malformed");
}

TEST(repeated_field_name_is_refused)
{
	REFUSED("--b\r\n" CD "\r\nv\r\n--b\r\n" CD "\r\nw\r\n--b--", "same name");
}

TEST(names_are_compared_as_bytes)
{
	static const char body[] = "--b\r\n" CD "\r\nv\r\n--b\r\n"
				   "Content-Disposition: form-data; name=\"A\"\r\n\r\nw\r\n--b--";
	PARSED("b", body, 2);
	CHECK(view_eq(parts[0].name, "a") && view_eq(parts[1].name, "A"));
}

TEST_MAIN()
