/* libFuzzer harness for multipart/form-data (include/steward/multipart.h).
 *
 * Input: a Content-Type value, "\n", then the body; or, when it starts
 * with '-' or CR (or has no "\n" in its first 256 bytes), a body alone
 * with the boundary "b".
 * Checks, beyond "no crash, no UB":
 * - sw_multipart_boundary() answers 0 or -EINVAL; an accepted boundary is
 *   1..70 bchars, not ending in a space, and a view into the value;
 * - sw_multipart_parse() answers 0, -EINVAL or -E2BIG, with a reason on
 *   every refusal and *ret_n untouched then;
 * - an accepted body has 1..max parts in order, each a set of views into
 *   the body, with a non-empty name, names pairwise distinct, each part's
 *   data followed by CRLF "--" boundary in the body, no data containing
 *   that delimiter, and no name, filename or content type holding a
 *   control character, a quote or a backslash (a quote only in a type's
 *   quoted parameters);
 * - the same body with max one less is -E2BIG (the parts before the last
 *   were accepted, so nothing else can be said about them);
 * - the body cut inside its close delimiter is refused;
 * - the parts written back canonically (quoted names, CRLFs, the same
 *   boundary) parse to the same names, filenames, types and data (when
 *   the canonical header section stays within the limit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/http/multipart.h"
#include "fuzz.h"

static bool inside(struct sw_str v, const char *p, size_t n)
{
	return v.len == 0 || (v.ptr >= p && v.ptr + v.len <= p + n);
}

static bool bchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("'()+_,-./:=? ", c));
}

static void no_controls(struct sw_str s, bool quotes_ok)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		ASSERT(c >= 0x20 || c == '\t');
		ASSERT(c != 0x7f && c != '\\');
		ASSERT(quotes_ok || c != '"');
	}
}

static void append(char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
	if (*len + n > *cap) {
		*cap = (*len + n) * 2;
		*buf = realloc(*buf, *cap);
		ASSERT(*buf);
	}
	memcpy(*buf + *len, p, n);
	*len += n;
}

#define APPEND_LIT(lit) append(&out, &len, &cap, lit, sizeof(lit) - 1)
#define APPEND_STR(s) append(&out, &len, &cap, (s).ptr, (s).len)

static void check_round_trip(struct sw_str boundary, const struct sw_multipart_part *parts, size_t n)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		/* The canonical form adds spaces and quotes: past the header
		 * limit it would be refused for that alone. */
		size_t head = sizeof("Content-Disposition: form-data; name=\"\"\r\n\r\n") - 1 + parts[i].name.len;
		if (parts[i].filename.len)
			head += sizeof("; filename=\"\"") - 1 + parts[i].filename.len;
		if (parts[i].content_type.len)
			head += sizeof("Content-Type: \r\n") - 1 + parts[i].content_type.len;
		if (head > SW_MULTIPART_MAX_HEADER) {
			free(out);
			return;
		}
		APPEND_LIT("--");
		APPEND_STR(boundary);
		APPEND_LIT("\r\nContent-Disposition: form-data; name=\"");
		APPEND_STR(parts[i].name);
		APPEND_LIT("\"");
		if (parts[i].filename.len) {
			APPEND_LIT("; filename=\"");
			APPEND_STR(parts[i].filename);
			APPEND_LIT("\"");
		}
		APPEND_LIT("\r\n");
		if (parts[i].content_type.len) {
			APPEND_LIT("Content-Type: ");
			APPEND_STR(parts[i].content_type);
			APPEND_LIT("\r\n");
		}
		APPEND_LIT("\r\n");
		APPEND_STR(parts[i].data);
		APPEND_LIT("\r\n");
	}
	APPEND_LIT("--");
	APPEND_STR(boundary);
	APPEND_LIT("--\r\n");
	struct sw_multipart_part again[SW_MULTIPART_MAX_PARTS];
	size_t m = 0;
	const char *why = NULL;
	int r = sw_multipart_parse(sw_str_from(out, len), boundary, again, SW_MULTIPART_MAX_PARTS, &m, &why);
	if (r != 0)
		fprintf(stderr, "round trip refused: %s\n", why);
	ASSERT(r == 0 && m == n);
	for (size_t i = 0; i < n; i++) {
		ASSERT(sw_str_eq(again[i].name, parts[i].name));
		ASSERT(sw_str_eq(again[i].filename, parts[i].filename));
		ASSERT(sw_str_eq(again[i].content_type, parts[i].content_type));
		ASSERT(sw_str_eq(again[i].data, parts[i].data));
	}
	free(out);
}

static void check_body(struct sw_str body, struct sw_str boundary)
{
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
	size_t n = 12345;
	const char *why = NULL;
	int r = sw_multipart_parse(body, boundary, parts, SW_MULTIPART_MAX_PARTS, &n, &why);
	ASSERT(r == 0 || r == -EINVAL || r == -E2BIG);
	if (r != 0) {
		ASSERT(why != NULL && n == 12345);
		return;
	}
	ASSERT(n >= 1 && n <= SW_MULTIPART_MAX_PARTS);

	char delim[4 + 70];
	size_t dlen = 4 + boundary.len;
	ASSERT(boundary.len <= 70);
	memcpy(delim, "\r\n--", 4);
	memcpy(delim + 4, boundary.ptr, boundary.len);
	const char *prev_end = body.ptr;
	for (size_t i = 0; i < n; i++) {
		const struct sw_multipart_part *p = &parts[i];
		ASSERT(inside(p->name, body.ptr, body.len) && inside(p->filename, body.ptr, body.len));
		ASSERT(inside(p->content_type, body.ptr, body.len) && inside(p->data, body.ptr, body.len));
		ASSERT(p->name.len > 0);
		no_controls(p->name, false);
		no_controls(p->filename, false);
		no_controls(p->content_type, true);
		ASSERT(p->name.ptr >= prev_end && p->data.ptr >= p->name.ptr);
		ASSERT((size_t)(body.ptr + body.len - (p->data.ptr + p->data.len)) >= dlen);
		ASSERT(memcmp(p->data.ptr + p->data.len, delim, dlen) == 0);
		ASSERT(!memmem(p->data.ptr, p->data.len, delim, dlen));
		prev_end = p->data.ptr + p->data.len;
		for (size_t k = 0; k < i; k++)
			ASSERT(!sw_str_eq(parts[k].name, p->name));
	}

	struct sw_multipart_part few[SW_MULTIPART_MAX_PARTS];
	size_t m = 777;
	r = sw_multipart_parse(body, boundary, few, n - 1, &m, &why);
	ASSERT(r == -E2BIG && m == 777);

	/* prev_end is the last delimiter: cut inside its "--". */
	size_t cut = (size_t)(prev_end - body.ptr) + dlen + 1;
	ASSERT(cut <= body.len);
	r = sw_multipart_parse(sw_str_from(body.ptr, cut), boundary, few, SW_MULTIPART_MAX_PARTS, &m, &why);
	ASSERT(r == -EINVAL && m == 777);

	check_round_trip(boundary, parts, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	/* A copy of exactly the input's size, so ASan sees any overread. */
	char *in = malloc(size ? size : 1);
	ASSERT(in);
	memcpy(in, data, size);
	const char *nl = size && in[0] != '-' && in[0] != '\r' ? memchr(in, '\n', size < 256 ? size : 256)
							    : NULL;
	struct sw_str boundary = SW_STR("b"), body = sw_str_from(in, size);
	if (nl) {
		struct sw_str ct = sw_str_from(in, (size_t)(nl - in));
		body = sw_str_from(nl + 1, size - ct.len - 1);
		struct sw_str b = SW_STR_NULL;
		int r = sw_multipart_boundary(ct, &b);
		ASSERT(r == 0 || r == -EINVAL);
		if (r != 0) {
			ASSERT(b.ptr == NULL);
			free(in);
			return 0;
		}
		ASSERT(b.len >= 1 && b.len <= 70 && b.ptr[b.len - 1] != ' ');
		ASSERT(inside(b, ct.ptr, ct.len));
		for (size_t i = 0; i < b.len; i++)
			ASSERT(bchar((unsigned char)b.ptr[i]));
		boundary = b;
	}
	check_body(body, boundary);
	free(in);
	return 0;
}
