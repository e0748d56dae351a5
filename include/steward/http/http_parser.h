/* The strict HTTP/1.1 request parser and chunked decoder.
 *
 * Pure functions over byte ranges: no allocation, no I/O, no globals, so
 * they are fuzzed directly (fuzz/fuzz_http_parser.c, fuzz/fuzz_chunked.c).
 * Strictness is the point: anything that two servers could read two ways
 * (request smuggling) is refused with 400 and the connection is closed by
 * the caller. See docs/architecture.md, "HTTP". */
#ifndef STEWARD_HTTP_PARSER_H
#define STEWARD_HTTP_PARSER_H

#include "steward/base/base.h"
#include "steward/base/limits.h"

enum sw_http_method {
	SW_HTTP_GET,
	SW_HTTP_HEAD,
	SW_HTTP_POST,
	SW_HTTP_PUT,
	SW_HTTP_PATCH,
	SW_HTTP_DELETE,
	SW_HTTP_OPTIONS,
	SW_HTTP_METHOD_OTHER, /* a valid token we do not serve (405 or 404) */
	SW_HTTP_METHOD_COUNT,
};

const char *sw_http_method_name(enum sw_http_method m);

enum sw_http_body_kind {
	SW_HTTP_BODY_NONE,
	SW_HTTP_BODY_LENGTH,
	SW_HTTP_BODY_CHUNKED,
};

struct sw_http_header {
	struct sw_str name;  /* as sent (token characters) */
	struct sw_str value; /* leading and trailing SP/HTAB removed */
};

/* Views point into the buffer given to sw_http_parse_head(). */
struct sw_http_head {
	struct sw_str method_str;
	enum sw_http_method method;
	struct sw_str target; /* origin-form: path [ "?" query ] */
	struct sw_str path;   /* target up to '?' */
	struct sw_str query;  /* after '?', without it; empty when absent */
	int version_minor;    /* 0 or 1 (HTTP/1.0, HTTP/1.1) */
	struct sw_http_header headers[SW_HTTP_MAX_HEADERS];
	unsigned header_count;
	/* Derived from the headers: */
	enum sw_http_body_kind body_kind;
	uint64_t content_length; /* for SW_HTTP_BODY_LENGTH */
	bool keep_alive;         /* 1.1 unless "close"; 1.0 only with "keep-alive" */
	bool expect_continue;    /* Expect: 100-continue */
	struct sw_str host;      /* required in 1.1 */
};

/* Why a request was refused: the status to answer with, a stable
 * machine-readable code and a one-line human message (static strings). */
struct sw_http_parse_error {
	int status;          /* 400, 414, 431, 413, 417 */
	const char *code;    /* e.g. "MALFORMED_REQUEST", "HEADERS_TOO_LARGE" */
	const char *message; /* e.g. "obsolete line folding is not allowed" */
};

/* Parses the request head at the start of buf[0..len).
 *
 * prev_len is len at the previous call for the same request (0 the first
 * time); bytes before it were already scanned and found incomplete, which
 * keeps a slow client from costing quadratic work.
 *
 * Returns 0 when the head is complete: *ret_head is filled and
 * *ret_consumed is the length of the head including the blank line.
 * Returns -EAGAIN when more bytes are needed and no limit is crossed yet.
 * Returns -EBADMSG when the request must be refused: *ret_err says how.
 * A request line longer than SW_HTTP_MAX_REQUEST_LINE is 414 even before it
 * is complete; a head over SW_HTTP_MAX_HEAD_BYTES or with more than
 * SW_HTTP_MAX_HEADERS fields is 431.
 *
 * Refused with 400: Content-Length with Transfer-Encoding; several or
 * differing Content-Length; a transfer coding other than chunked, or
 * chunked not last / more than once; obsolete line folding; white space
 * between a header name and its colon; bare CR, bare LF or NUL anywhere;
 * invalid characters in method, target or header names/values; HTTP/0.9
 * and versions other than 1.0 and 1.1; a missing or repeated Host in 1.1;
 * a target that is not origin-form (except "*" with OPTIONS). An Expect
 * value other than 100-continue gives 417. */
int sw_http_parse_head(const char *buf, size_t len, size_t prev_len,
		       struct sw_http_head *ret_head, size_t *ret_consumed,
		       struct sw_http_parse_error *ret_err);

/* Finds a header by case-insensitive name; NULL when absent. */
const struct sw_http_header *sw_http_head_find(const struct sw_http_head *h,
					       struct sw_str name);

/* Incremental chunked-body decoder (RFC 9112 section 7.1). Chunk
 * extensions are accepted and ignored; trailer fields are checked with the
 * header-field rules and discarded. */
struct sw_http_chunked {
	int state;
	uint64_t chunk_left;     /* data bytes left in the current chunk */
	uint64_t total;          /* decoded bytes so far */
	uint64_t max_body;       /* refuse with 413 beyond this */
	size_t line_len;         /* bytes of the current size or trailer line */
	size_t trailer_bytes;
	unsigned trailer_count;
	unsigned size_digits;
	uint64_t size;
};

void sw_http_chunked_init(struct sw_http_chunked *c, uint64_t max_body);

/* Decodes in[0..len). Decoded data is written to out, which must hold len
 * bytes and may be the same memory as in (decoding never overtakes the
 * input). *ret_consumed is how many input bytes were used and *ret_written
 * how many bytes were decoded by this call.
 * Returns 0 when the last chunk and the trailer section are complete (bytes
 * after *ret_consumed belong to the next request), -EAGAIN when all input
 * was used and more is needed, -EBADMSG when malformed (400: bad size,
 * size overflow, missing CRLF, bad trailer, oversized line/trailers) or too
 * large (413: total beyond max_body), with *ret_err filled. */
int sw_http_chunked_decode(struct sw_http_chunked *c, const char *in, size_t len,
			   char *out, size_t *ret_consumed, size_t *ret_written,
			   struct sw_http_parse_error *ret_err);

#endif
