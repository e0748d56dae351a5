/* libFuzzer harness for the request-head parser, and through it the
 * chunked decoder on whatever follows a chunked head.
 *
 * Checks, beyond "no crash, no UB":
 * - every answer is 0, -EAGAIN or -EBADMSG; a refusal has a known status,
 *   a code and a message; consumed is within the input and the limits;
 * - every view in the head lies inside the input, and path/query/target
 *   agree with each other;
 * - feeding the input in two pieces (the cut derived from the first byte)
 *   and, for small inputs, one byte at a time, never contradicts the
 *   one-shot answer: a head parsed in pieces parses the same at once, a
 *   refusal in pieces is the same refusal at once, and a head complete at
 *   once is complete in pieces. (In pieces the parser may wait where the
 *   one-shot run already refuses: it only rescans new bytes.)
 * - the chunked decoder decodes the rest the same way into a separate
 *   buffer and in place;
 * - the parsed path, matched against every API route and the dashboard's:
 *   params are non-empty views of the path without '/', and the
 *   dashboard's routes match only "/", "/app", "/app/...",
 *   "/reset-password" and "/assets/<name>" while no API route matches
 *   those. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/api/api.h"
#include "steward/http/http_parser.h"
#include "steward/api/ui.h"
#include "fuzz.h"

struct outcome {
	int rc;
	size_t consumed;
	struct sw_http_parse_error err;
};

static struct sw_http_head head_one, head_split;

static bool view_inside(struct sw_str s, const char *buf, size_t len)
{
	if (s.len == 0)
		return true; /* empty views may point anywhere (or be NULL) */
	return s.ptr >= buf && s.len <= len && (size_t)(s.ptr - buf) <= len - s.len;
}

static void check_outcome(const struct outcome *o, const struct sw_http_head *h,
			  const char *buf, size_t len)
{
	ASSERT(o->rc == 0 || o->rc == -EAGAIN || o->rc == -EBADMSG);
	if (o->rc == -EBADMSG) {
		int st = o->err.status;
		ASSERT(st == 400 || st == 414 || st == 431 || st == 417);
		ASSERT(o->err.code && o->err.message && o->err.message[0]);
		return;
	}
	if (o->rc != 0)
		return;
	ASSERT(o->consumed >= 4 && o->consumed <= len);
	ASSERT(o->consumed <= SW_HTTP_MAX_HEAD_BYTES);
	ASSERT(memcmp(buf + o->consumed - 4, "\r\n\r\n", 4) == 0);
	const char *head = buf;
	size_t hl = o->consumed;
	ASSERT(h->method_str.len > 0 && view_inside(h->method_str, head, hl));
	ASSERT((unsigned)h->method < SW_HTTP_METHOD_COUNT);
	ASSERT(h->target.len > 0 && view_inside(h->target, head, hl));
	ASSERT(h->target.len <= SW_HTTP_MAX_REQUEST_LINE);
	ASSERT(view_inside(h->path, head, hl) && view_inside(h->query, head, hl));
	ASSERT(h->path.ptr == h->target.ptr);
	if (h->path.len == h->target.len)
		ASSERT(h->query.len == 0);
	else
		ASSERT(h->path.len + 1 + h->query.len == h->target.len &&
		       h->target.ptr[h->path.len] == '?');
	ASSERT(h->target.ptr[0] == '/' || (h->target.len == 1 && h->method == SW_HTTP_OPTIONS));
	ASSERT(h->version_minor == 0 || h->version_minor == 1);
	ASSERT(h->header_count <= SW_HTTP_MAX_HEADERS);
	for (unsigned i = 0; i < h->header_count; i++) {
		ASSERT(h->headers[i].name.len > 0);
		ASSERT(view_inside(h->headers[i].name, head, hl));
		ASSERT(view_inside(h->headers[i].value, head, hl));
		const struct sw_http_header *f = sw_http_head_find(h, h->headers[i].name);
		ASSERT(f && f <= &h->headers[i]);
	}
	ASSERT(view_inside(h->host, head, hl));
	if (h->version_minor == 1)
		ASSERT(h->host.len > 0);
	ASSERT(h->body_kind == SW_HTTP_BODY_NONE || h->body_kind == SW_HTTP_BODY_LENGTH ||
	       h->body_kind == SW_HTTP_BODY_CHUNKED);
	if (h->body_kind == SW_HTTP_BODY_CHUNKED)
		ASSERT(h->version_minor == 1);
	if (h->expect_continue)
		ASSERT(h->version_minor == 1);
}

static bool same_refusal(const struct outcome *a, const struct outcome *b)
{
	return a->err.status == b->err.status && strcmp(a->err.code, b->err.code) == 0 &&
	       strcmp(a->err.message, b->err.message) == 0;
}

/* The piecewise answer (in pieces) against the one-shot answer. */
static void check_agrees(const struct outcome *one, const struct sw_http_head *h1,
			 const struct outcome *pieces, const struct sw_http_head *h2)
{
	if (pieces->rc == 0) {
		ASSERT(one->rc == 0);
		ASSERT(pieces->consumed == one->consumed);
		ASSERT(h1->method == h2->method && h1->version_minor == h2->version_minor);
		ASSERT(h1->header_count == h2->header_count);
		ASSERT(h1->body_kind == h2->body_kind && h1->content_length == h2->content_length);
		ASSERT(h1->keep_alive == h2->keep_alive);
		ASSERT(h1->expect_continue == h2->expect_continue);
		ASSERT(sw_str_eq(h1->target, h2->target));
	} else if (pieces->rc == -EBADMSG) {
		ASSERT(one->rc == -EBADMSG && same_refusal(one, pieces));
	} else {
		ASSERT(one->rc != 0);
	}
}

static void run_chunked(const char *body, size_t len)
{
	char *in = malloc(len + 1), *out = malloc(len + 1);
	ASSERT(in && out);
	memcpy(in, body, len);

	struct sw_http_chunked c1, c2;
	struct sw_http_parse_error e1, e2;
	size_t consumed1 = 0, written1 = 0, consumed2 = 0, written2 = 0;
	sw_http_chunked_init(&c1, SW_HTTP_DEFAULT_MAX_BODY);
	int r1 = sw_http_chunked_decode(&c1, in, len, out, &consumed1, &written1, &e1);
	ASSERT(r1 == 0 || r1 == -EAGAIN || r1 == -EBADMSG);
	ASSERT(consumed1 <= len && written1 <= consumed1);
	ASSERT(written1 <= SW_HTTP_DEFAULT_MAX_BODY && c1.total == written1);
	if (r1 == -EAGAIN)
		ASSERT(consumed1 == len);
	if (r1 == -EBADMSG)
		ASSERT(e1.status == 400 || e1.status == 413);

	/* In place, over the same memory. */
	sw_http_chunked_init(&c2, SW_HTTP_DEFAULT_MAX_BODY);
	int r2 = sw_http_chunked_decode(&c2, in, len, in, &consumed2, &written2, &e2);
	ASSERT(r2 == r1 && consumed2 == consumed1 && written2 == written1);
	ASSERT(memcmp(in, out, written1) == 0);
	if (r1 == -EBADMSG)
		ASSERT(e1.status == e2.status && strcmp(e1.message, e2.message) == 0);
	free(in);
	free(out);
}

/* Every API route and the dashboard's, as stewardd builds them when the
 * dashboard is there (signup on, outside production: all of them). */
static struct sw_router *router_all(void)
{
	static struct sw_router *r;
	static struct sw_route *table;
	if (r)
		return r;
	size_t napi, nui;
	const struct sw_route *api = sw_api_routes(&napi);
	const struct sw_route *ui = sw_ui_routes(&nui);
	table = calloc(napi + nui, sizeof(*table));
	ASSERT(table);
	memcpy(table, api, napi * sizeof(*table));
	memcpy(table + napi, ui, nui * sizeof(*table));
	struct sw_config c = { .signup_enabled = true, .env = SW_ENV_TEST };
	r = sw_router_new(table, napi + nui, &c);
	ASSERT(r);
	return r;
}

static bool starts(struct sw_str s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.len >= n && memcmp(s.ptr, prefix, n) == 0;
}

static void check_route(const struct sw_http_head *h)
{
	const struct sw_route *route = NULL;
	struct sw_route_params params = { 0 };
	unsigned allowed = 0;
	struct sw_str path = h->path;
	enum sw_route_match m = sw_router_match(router_all(), h->method, path, &route, &params, &allowed);
	bool dashboard_path = (path.len == 1 && path.ptr[0] == '/') || starts(path, "/app/") ||
			      (path.len == 4 && starts(path, "/app")) || starts(path, "/assets/") ||
			      sw_str_eq(path, SW_STR("/reset-password"));
	if (m == SW_ROUTE_METHOD_NOT_ALLOWED)
		ASSERT(allowed != 0);
	if (m != SW_ROUTE_FOUND)
		return;
	ASSERT(route->method == h->method || (h->method == SW_HTTP_HEAD && route->method == SW_HTTP_GET));
	ASSERT(!!(route->flags & SW_ROUTE_DASHBOARD) == dashboard_path);
	for (unsigned i = 0; i < params.count; i++) {
		struct sw_str v = params.value[i];
		ASSERT(v.len > 0 && v.ptr >= path.ptr && v.ptr + v.len <= path.ptr + path.len);
		ASSERT(!memchr(v.ptr, '/', v.len));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so ASan sees any read past the input. */
	char *buf = malloc(size + 1);
	ASSERT(buf);
	memcpy(buf, data, size);

	struct outcome one = { 0 };
	one.rc = sw_http_parse_head(buf, size, 0, &head_one, &one.consumed, &one.err);
	check_outcome(&one, &head_one, buf, size);

	/* Two pieces, cut where the first byte says. */
	size_t cut = size ? (size_t)data[0] * size / 256 : 0;
	struct outcome two = { 0 };
	two.rc = sw_http_parse_head(buf, cut, 0, &head_split, &two.consumed, &two.err);
	check_outcome(&two, &head_split, buf, cut);
	if (two.rc == -EAGAIN) {
		two.rc = sw_http_parse_head(buf, size, cut, &head_split, &two.consumed, &two.err);
		check_outcome(&two, &head_split, buf, size);
	}
	check_agrees(&one, &head_one, &two, &head_split);

	/* One byte at a time, like the slowest client. */
	if (size <= 2048) {
		struct outcome slow = { .rc = -EAGAIN };
		for (size_t n = 1; n <= size && slow.rc == -EAGAIN; n++) {
			slow.rc = sw_http_parse_head(buf, n, n - 1, &head_split, &slow.consumed,
						     &slow.err);
			check_outcome(&slow, &head_split, buf, n);
		}
		check_agrees(&one, &head_one, &slow, &head_split);
	}

	if (one.rc == 0)
		check_route(&head_one);
	if (one.rc == 0 && head_one.body_kind == SW_HTTP_BODY_CHUNKED)
		run_chunked(buf + one.consumed, size - one.consumed);
	free(buf);
	return 0;
}
