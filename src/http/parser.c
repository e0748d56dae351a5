/* The strict HTTP/1.1 request-head parser (RFC 9112, RFC 9110).
 *
 * Why it is shaped like this:
 *
 * - One left-to-right pass over the bytes, driven by 256-entry tables for
 *   the character classes (tchar, request-target, field value). No
 *   allocation, no copying: the head is a set of views into the buffer.
 *
 * - Errors are positional: the parser reports the first thing wrong, and
 *   every decision depends only on the bytes before the point where it is
 *   made. So a prefix that is already refused is refused the same way
 *   however many bytes follow, and feeding the request in pieces gives
 *   the same answer as feeding it at once.
 *
 * - Limits are positional too. The request line is parsed in a window of
 *   SW_HTTP_MAX_REQUEST_LINE + 2 bytes (line plus CRLF) and the whole head
 *   in a window of SW_HTTP_MAX_HEAD_BYTES: running out of the window while
 *   more bytes exist is 414 or 431; running out of the buffer is -EAGAIN.
 *   The head limit covers everything consumed: request line, field lines
 *   and the blank line, so a connection never needs to buffer more than
 *   SW_HTTP_MAX_HEAD_BYTES + 1 bytes to get an answer.
 *
 * - A slow client: on a call with prev_len > 0 only the new bytes are
 *   scanned (memchr for LF). The full parse runs again only when something
 *   decisive arrived: the blank line that ends the head, a LF without CR
 *   (always an error), or a limit being crossed. Each of those ends the
 *   head (success or refusal) or happens at most once, so feeding one byte
 *   at a time costs linear work overall. Syntax errors in the middle of an
 *   incomplete head are then reported when the head ends or a limit is
 *   crossed, whichever is first, never as something else.
 *
 * - Empty lines before the request line (RFC 9112 section 2.2 allows a
 *   server to skip them) are refused: a strict server has no client that
 *   needs them, and skipping them is one more way two parsers could
 *   disagree on where a pipelined request starts.
 *
 * - Absolute-form and authority-form targets are refused: this server is
 *   not a proxy, and the Host header is then the only authority.
 */
#include <errno.h>
#include "steward/http/http_parser.h"
#include "http/tchar.h"

#define REQ_LINE_WINDOW ((size_t)SW_HTTP_MAX_REQUEST_LINE + 2)
#define HEAD_WINDOW ((size_t)SW_HTTP_MAX_HEAD_BYTES)

const uint8_t sw_http_tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1,
	['*'] = 1, ['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
};

/* Request-target bytes: visible ASCII except '#'. 1 = plain, 2 = needs a
 * look ('?' starts the query, '%' must be followed by two hex digits). */
static const uint8_t target_char[256] = {
	[0x21 ... 0x22] = 1, /* '#' (0x23) is a fragment: refused */
	[0x24] = 1, ['%'] = 2, [0x26 ... 0x3e] = 1, ['?'] = 2,
	[0x40 ... 0x7e] = 1,
};

/* field-value bytes: field-vchar (VCHAR / obs-text), SP and HTAB. */
static const uint8_t value_char[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/* Host: reg-name (unreserved / sub-delims; '%' is checked apart). */
static const uint8_t host_char[256] = {
	['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['a' ... 'z'] = 1,
	['-'] = 1, ['.'] = 1, ['_'] = 1, ['~'] = 1,
	['!'] = 1, ['$'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1, [')'] = 1,
	['*'] = 1, ['+'] = 1, [','] = 1, [';'] = 1, ['='] = 1,
};

static const char *const method_names[SW_HTTP_METHOD_COUNT] = {
	[SW_HTTP_GET] = "GET",
	[SW_HTTP_HEAD] = "HEAD",
	[SW_HTTP_POST] = "POST",
	[SW_HTTP_PUT] = "PUT",
	[SW_HTTP_PATCH] = "PATCH",
	[SW_HTTP_DELETE] = "DELETE",
	[SW_HTTP_OPTIONS] = "OPTIONS",
	[SW_HTTP_METHOD_OTHER] = "OTHER",
};

const char *sw_http_method_name(enum sw_http_method m)
{
	if ((unsigned)m >= SW_HTTP_METHOD_COUNT)
		return NULL;
	return method_names[m];
}

/* Skips field-value bytes. Eight at a time while none of them is a CTL
 * (below 0x20, which includes HTAB: the byte loop takes those) or DEL;
 * obs-text (0x80-0xFF) passes both word tests. The word tests are the
 * exact "has a byte less than n" / "has a zero byte" bit tricks. */
static inline const unsigned char *skip_value(const unsigned char *p, const unsigned char *end)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	while (end - p >= 8) {
		uint64_t x, del;
		memcpy(&x, p, 8);
		del = x ^ (ones * 0x7f);
		if (((x - ones * 0x20) & ~x & highs) | ((del - ones) & ~del & highs))
			break;
		p += 8;
	}
	while (p < end && value_char[*p])
		p++;
	return p;
}

static inline bool is_hex(unsigned char c)
{
	return sw_hex_value(c) >= 0;
}

static inline bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Methods are case-sensitive (RFC 9110 section 9.1). */
static enum sw_http_method method_lookup(const unsigned char *m, size_t n)
{
	switch (n) {
	case 3:
		if (memcmp(m, "GET", 3) == 0)
			return SW_HTTP_GET;
		if (memcmp(m, "PUT", 3) == 0)
			return SW_HTTP_PUT;
		break;
	case 4:
		if (memcmp(m, "HEAD", 4) == 0)
			return SW_HTTP_HEAD;
		if (memcmp(m, "POST", 4) == 0)
			return SW_HTTP_POST;
		break;
	case 5:
		if (memcmp(m, "PATCH", 5) == 0)
			return SW_HTTP_PATCH;
		break;
	case 6:
		if (memcmp(m, "DELETE", 6) == 0)
			return SW_HTTP_DELETE;
		break;
	case 7:
		if (memcmp(m, "OPTIONS", 7) == 0)
			return SW_HTTP_OPTIONS;
		break;
	default:
		break;
	}
	return SW_HTTP_METHOD_OTHER;
}

/* Case-insensitive compare of a token or field value against a lower-case
 * literal of letters, digits and '-'. OR-ing 0x20 is enough: among the
 * bytes a token or value may hold, the only ones it maps onto a letter,
 * digit or '-' are the upper-case letters (CTLs such as 0x0D or 0x10 would
 * fold onto '-' or '0', but they are refused before this is called). */
static inline bool token_is(const unsigned char *s, size_t n, const char *lower, size_t ln)
{
	if (n != ln)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)(s[i] | 0x20) != (unsigned char)lower[i])
			return false;
	return true;
}

#define TOKEN_IS(s, n, lit) token_is((s), (n), lit, sizeof(lit) - 1)

/* uri-host [ ":" port ] with uri-host = IP-literal / IPv4address / reg-name
 * (RFC 3986); an empty host is refused (RFC 9110 section 4.2.1). */
static bool host_valid(const unsigned char *v, size_t n)
{
	size_t i = 0;
	if (n == 0)
		return false;
	if (v[0] == '[') {
		i = 1;
		while (i < n && (is_hex(v[i]) || v[i] == ':' || v[i] == '.'))
			i++;
		if (i == 1 || i == n || v[i] != ']')
			return false;
		i++;
	} else {
		while (i < n) {
			if (host_char[v[i]]) {
				i++;
			} else if (v[i] == '%') {
				if (i + 2 >= n || !is_hex(v[i + 1]) || !is_hex(v[i + 2]))
					return false;
				i += 3;
			} else {
				break;
			}
		}
		if (i == 0)
			return false;
	}
	if (i == n)
		return true;
	if (v[i] != ':' || n - i - 1 > 5)
		return false;
	for (i++; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return false;
	return true;
}

struct derived {
	unsigned host_count;
	bool have_cl;
	bool have_te;
	bool chunked;
	bool conn_close;
	bool conn_keep_alive;
	bool expect_bad;
};

#define FAIL(st, c, msg)                  \
	do {                              \
		err->status = (st);       \
		err->code = (c);          \
		err->message = (msg);     \
		return -EBADMSG;          \
	} while (0)
#define BAD(msg) FAIL(400, "MALFORMED_REQUEST", msg)

/* The headers that shape how the message is framed or answered. */
static int interpret_header(struct sw_http_head *h, struct derived *d,
			    const unsigned char *n, size_t nl,
			    const unsigned char *v, size_t vl,
			    struct sw_http_parse_error *err)
{
	switch (nl) {
	case 4:
		if (!TOKEN_IS(n, nl, "host"))
			return 0;
		if (++d->host_count > 1)
			BAD("the Host header must appear only once");
		if (!host_valid(v, vl))
			BAD("the Host header is not a valid host name");
		h->host = sw_str_from((const char *)v, vl);
		return 0;
	case 6:
		if (!TOKEN_IS(n, nl, "expect"))
			return 0;
		if (TOKEN_IS(v, vl, "100-continue")) {
			/* RFC 9110 section 10.1.1: ignored in HTTP/1.0. */
			if (h->version_minor == 1)
				h->expect_continue = true;
		} else {
			d->expect_bad = true;
		}
		return 0;
	case 10: {
		if (!TOKEN_IS(n, nl, "connection"))
			return 0;
		size_t i = 0;
		for (;;) {
			while (i < vl && is_ows(v[i]))
				i++;
			size_t s = i;
			while (i < vl && sw_http_tchar[v[i]])
				i++;
			if (TOKEN_IS(v + s, i - s, "close"))
				d->conn_close = true;
			else if (TOKEN_IS(v + s, i - s, "keep-alive"))
				d->conn_keep_alive = true;
			while (i < vl && is_ows(v[i]))
				i++;
			if (i == vl)
				return 0;
			if (v[i] != ',')
				BAD("the Connection header must be a comma-separated list of tokens");
			i++;
		}
	}
	case 14: {
		if (!TOKEN_IS(n, nl, "content-length"))
			return 0;
		if (d->have_cl)
			BAD("the Content-Length header must appear only once");
		if (d->have_te)
			BAD("Content-Length and Transfer-Encoding must not both be present");
		if (vl == 0)
			BAD("the Content-Length header is empty");
		uint64_t x = 0;
		for (size_t i = 0; i < vl; i++) {
			unsigned dgt = (unsigned)v[i] - '0';
			if (dgt > 9)
				BAD("the Content-Length header must be a single decimal number");
			if (x > (UINT64_MAX - dgt) / 10)
				BAD("the Content-Length value is too large");
			x = x * 10 + dgt;
		}
		d->have_cl = true;
		h->content_length = x;
		return 0;
	}
	case 17: {
		if (!TOKEN_IS(n, nl, "transfer-encoding"))
			return 0;
		if (h->version_minor == 0)
			BAD("Transfer-Encoding is not allowed in HTTP/1.0 requests");
		if (d->have_cl)
			BAD("Content-Length and Transfer-Encoding must not both be present");
		d->have_te = true;
		if (vl == 0)
			BAD("the Transfer-Encoding header is empty");
		/* Repeated headers combine into one list (RFC 9110 5.3). We
		 * implement no coding but chunked, so the list can only be
		 * exactly one "chunked"; say which rule was broken. */
		size_t i = 0;
		for (;;) {
			while (i < vl && is_ows(v[i]))
				i++;
			size_t s = i;
			while (i < vl && v[i] != ',')
				i++;
			size_t e = i;
			while (e > s && is_ows(v[e - 1]))
				e--;
			if (e == s)
				BAD("the Transfer-Encoding list has an empty element");
			bool is_chunked = TOKEN_IS(v + s, e - s, "chunked");
			if (d->chunked)
				BAD(is_chunked ? "chunked must not appear more than once in Transfer-Encoding"
					       : "chunked must be the final transfer coding");
			if (!is_chunked)
				BAD("unsupported transfer coding: only chunked is implemented");
			d->chunked = true;
			if (i == vl)
				return 0;
			i++; /* ',' */
		}
	}
	default:
		return 0;
	}
}

/* The full parse of buf[0..len); see the file comment for the windows. */
static int parse_full(const unsigned char *buf, size_t len, struct sw_http_head *h,
		      size_t *ret_consumed, struct sw_http_parse_error *err)
{
	const unsigned char *p = buf;
	const unsigned char *end = buf + SW_MIN(len, REQ_LINE_WINDOW);
	unsigned char c;

	/* method SP */
	const unsigned char *m = p;
	while (p < end && sw_http_tchar[*p])
		p++;
	if (SW_UNLIKELY(p == end))
		goto request_line_more;
	if (SW_UNLIKELY(p == m || *p != ' ')) {
		if (p != m)
			BAD("invalid character in the method");
		if (*p == '\r' || *p == '\n')
			BAD("empty lines before the request line are not allowed");
		BAD("the request line must start with a method");
	}
	h->method_str = sw_str_from((const char *)m, (size_t)(p - m));
	h->method = method_lookup(m, (size_t)(p - m));
	p++;

	/* request-target SP */
	const unsigned char *t = p, *q = NULL;
	for (;;) {
		while (p < end && target_char[*p] == 1)
			p++;
		if (SW_UNLIKELY(p == end))
			goto request_line_more;
		c = *p;
		if (c == '?') {
			if (!q)
				q = p;
			p++;
		} else if (c == '%') {
			if (p + 1 == end)
				goto request_line_more;
			if (!is_hex(p[1]))
				BAD("invalid percent-encoding in the request target");
			if (p + 2 == end)
				goto request_line_more;
			if (!is_hex(p[2]))
				BAD("invalid percent-encoding in the request target");
			p += 3;
		} else {
			break;
		}
	}
	if (SW_UNLIKELY(c != ' ')) {
		if (c == '\r') {
			if (p + 1 == end)
				goto request_line_more;
			if (p[1] != '\n')
				BAD("line endings must be CRLF (bare CR)");
		}
		if (c == '\r' || c == '\n')
			BAD(p == t ? "the request line has no request target"
				   : "the request line has no HTTP version (HTTP/0.9 is not supported)");
		if (c == '#')
			BAD("a fragment ('#') is not allowed in the request target");
		if (c == '\0')
			BAD("NUL byte in the request line");
		BAD("invalid character in the request target");
	}
	if (SW_UNLIKELY(p == t))
		BAD("the request line has extra white space");
	if (SW_UNLIKELY(*t != '/')) {
		if (p - t != 1 || *t != '*')
			BAD("the request target must be an absolute path");
		if (h->method != SW_HTTP_OPTIONS)
			BAD("the '*' request target is only allowed with OPTIONS");
	}
	h->target = sw_str_from((const char *)t, (size_t)(p - t));
	if (q) {
		h->path = sw_str_from((const char *)t, (size_t)(q - t));
		h->query = sw_str_from((const char *)q + 1, (size_t)(p - q - 1));
	} else {
		h->path = h->target;
		h->query = sw_str_from((const char *)p, 0);
	}
	p++;

	/* HTTP-version CRLF */
	if (SW_LIKELY(end - p >= 10 && memcmp(p, "HTTP/1.1\r\n", 10) == 0)) {
		h->version_minor = 1;
		p += 10;
	} else {
		static const char ver[] = "HTTP/1.";
		for (size_t i = 0; i < 7; i++) {
			if (p + i == end)
				goto request_line_more;
			if (p[i] != (unsigned char)ver[i]) {
				if (i == 0 && p[i] == ' ')
					BAD("the request line has extra white space");
				BAD("unsupported HTTP version: only HTTP/1.0 and HTTP/1.1 are served");
			}
		}
		p += 7;
		if (p == end)
			goto request_line_more;
		if (*p != '0' && *p != '1')
			BAD("unsupported HTTP version: only HTTP/1.0 and HTTP/1.1 are served");
		h->version_minor = *p - '0';
		p++;
		if (p == end)
			goto request_line_more;
		if (*p != '\r') {
			if (*p == '\n')
				BAD("line endings must be CRLF (bare LF)");
			BAD("unsupported HTTP version: only HTTP/1.0 and HTTP/1.1 are served");
		}
		p++;
		if (p == end)
			goto request_line_more;
		if (*p != '\n')
			BAD("line endings must be CRLF (bare CR)");
		p++;
	}

	/* *( field-line CRLF ) CRLF */
	struct derived d = { 0 };
	h->header_count = 0;
	h->content_length = 0;
	h->expect_continue = false;
	h->host = SW_STR_NULL;
	end = buf + SW_MIN(len, HEAD_WINDOW);
	for (;;) {
		if (SW_UNLIKELY(p >= end))
			goto head_more;
		c = *p;
		if (c == '\r') {
			if (p + 1 == end)
				goto head_more;
			if (p[1] != '\n')
				BAD("line endings must be CRLF (bare CR)");
			p += 2;
			break;
		}
		if (SW_UNLIKELY(h->header_count == SW_HTTP_MAX_HEADERS))
			FAIL(431, "HEADERS_TOO_LARGE", "too many header fields");

		const unsigned char *n = p;
		while (p < end && sw_http_tchar[*p])
			p++;
		if (SW_UNLIKELY(p == end))
			goto head_more;
		if (SW_UNLIKELY(*p != ':')) {
			c = *p;
			if (is_ows(c))
				BAD(p == n ? "obsolete line folding is not allowed"
					   : "white space between a header name and its colon is not allowed");
			if (c == '\n')
				BAD("line endings must be CRLF (bare LF)");
			if (c == '\r')
				BAD("a header line has no colon");
			if (c == '\0')
				BAD("NUL byte in a header name");
			BAD("invalid character in a header name");
		}
		if (SW_UNLIKELY(p == n))
			BAD("a header line has an empty name");
		size_t nl = (size_t)(p - n);
		p++;

		while (p < end && is_ows(*p))
			p++;
		const unsigned char *v = p;
		p = skip_value(p, end);
		if (SW_UNLIKELY(p == end))
			goto head_more;
		if (SW_UNLIKELY(*p != '\r')) {
			if (*p == '\n')
				BAD("line endings must be CRLF (bare LF)");
			if (*p == '\0')
				BAD("NUL byte in a header value");
			BAD("invalid control character in a header value");
		}
		if (p + 1 == end)
			goto head_more;
		if (SW_UNLIKELY(p[1] != '\n'))
			BAD("line endings must be CRLF (bare CR)");
		const unsigned char *ve = p;
		while (ve > v && is_ows(ve[-1]))
			ve--;
		p += 2;

		struct sw_http_header *f = &h->headers[h->header_count++];
		f->name = sw_str_from((const char *)n, nl);
		f->value = sw_str_from((const char *)v, (size_t)(ve - v));
		int r = interpret_header(h, &d, n, nl, v, (size_t)(ve - v), err);
		if (SW_UNLIKELY(r < 0))
			return r;
	}

	/* The blank line is here: checks that need the whole head. */
	if (h->version_minor == 1 && d.host_count == 0)
		BAD("the Host header is required in HTTP/1.1");
	if (d.expect_bad)
		FAIL(417, "EXPECTATION_FAILED", "the only supported expectation is 100-continue");
	if (d.chunked)
		h->body_kind = SW_HTTP_BODY_CHUNKED;
	else if (d.have_cl)
		h->body_kind = SW_HTTP_BODY_LENGTH;
	else
		h->body_kind = SW_HTTP_BODY_NONE;
	if (d.conn_close)
		h->keep_alive = false;
	else if (h->version_minor == 1)
		h->keep_alive = true;
	else
		h->keep_alive = d.conn_keep_alive;
	*ret_consumed = (size_t)(p - buf);
	return 0;

request_line_more:
	if (len > REQ_LINE_WINDOW)
		FAIL(414, "URI_TOO_LONG", "the request line is too long");
	return -EAGAIN;
head_more:
	if (len > HEAD_WINDOW)
		FAIL(431, "HEADERS_TOO_LARGE", "the request head is too large");
	return -EAGAIN;
}

int sw_http_parse_head(const char *buf, size_t len, size_t prev_len,
		       struct sw_http_head *ret_head, size_t *ret_consumed,
		       struct sw_http_parse_error *ret_err)
{
	const unsigned char *b = (const unsigned char *)buf;

	if (prev_len == 0 || prev_len > len)
		return parse_full(b, len, ret_head, ret_consumed, ret_err);

	/* Bytes before prev_len were seen and nothing decisive was there. */
	bool decisive = (prev_len <= REQ_LINE_WINDOW && len > REQ_LINE_WINDOW) ||
			(prev_len <= HEAD_WINDOW && len > HEAD_WINDOW);
	const unsigned char *p = b + prev_len, *end = b + len;
	while (!decisive && p < end) {
		const unsigned char *lf = memchr(p, '\n', (size_t)(end - p));
		if (!lf)
			break;
		size_t i = (size_t)(lf - b);
		/* bare LF, an empty first line, or the blank line ending the head */
		if (i < 2 || b[i - 1] != '\r' || b[i - 2] == '\n')
			decisive = true;
		p = lf + 1;
	}
	if (!decisive)
		return -EAGAIN;
	return parse_full(b, len, ret_head, ret_consumed, ret_err);
}

const struct sw_http_header *sw_http_head_find(const struct sw_http_head *h,
					       struct sw_str name)
{
	for (unsigned i = 0; i < h->header_count; i++) {
		const struct sw_http_header *f = &h->headers[i];
		if (f->name.len == name.len && sw_str_case_eq(f->name, name))
			return f;
	}
	return NULL;
}
