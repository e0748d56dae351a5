/* The incremental chunked-body decoder (RFC 9112 section 7.1).
 *
 * A byte-at-a-time state machine for the framing (size lines, CRLFs,
 * trailers) and a block copy for chunk data, so input split at any byte
 * boundary decodes exactly as input given at once: every decision depends
 * on the state and the current byte only.
 *
 * Strictness, because a body that two parsers frame differently is request
 * smuggling:
 * - chunk-size is 1 to 16 hex digits, nothing before them (no white space,
 *   no sign, no "0x");
 * - chunk extensions follow the grammar exactly,
 *     *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )
 *   and are ignored; white space is allowed only where BWS is, so "5 \r\n"
 *   is refused; the line (without CRLF) is at most SW_HTTP_MAX_CHUNK_LINE;
 * - chunk data must be followed by exactly CRLF;
 * - trailer fields obey the header-field rules (token name, colon right
 *   after it, value of field-vchar / SP / HTAB, CRLF, no obs-fold), at most
 *   SW_HTTP_MAX_TRAILERS fields and SW_HTTP_MAX_TRAILER_BYTES bytes counted
 *   from the first trailer byte through the final CRLF; they are dropped.
 * - 413 as soon as a chunk size is known (the byte after its last digit)
 *   and would take the total past max_body, before any of its data.
 */
#include <errno.h>
#include "steward/http/http_parser.h"
#include "http/tchar.h"

enum {
	CH_SIZE,             /* hex digits */
	CH_EXT_BWS,          /* BWS before ';' */
	CH_EXT_NAME_START,   /* after ';': BWS then a token */
	CH_EXT_NAME,
	CH_EXT_NAME_BWS,     /* BWS after a name: '=' or ';' must follow */
	CH_EXT_VAL_START,    /* after '=': BWS then token or quoted-string */
	CH_EXT_VAL_TOKEN,
	CH_EXT_VAL_QUOTED,
	CH_EXT_VAL_QESC,     /* after a backslash in a quoted-string */
	CH_EXT_AFTER_QUOTED,
	CH_SIZE_LF,          /* CR seen at the end of the size line */
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TR_START,         /* start of a trailer line or the final CRLF */
	CH_TR_NAME,
	CH_TR_VALUE,
	CH_TR_LF,
	CH_END_LF,
	CH_DONE,
	CH_ERROR,
};

/* field-vchar / SP / HTAB */
static const uint8_t value_char[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

/* qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text */
static const uint8_t qdtext[256] = {
	['\t'] = 1, [0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1,
	[0x5d ... 0x7e] = 1, [0x80 ... 0xff] = 1,
};

static inline bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

void sw_http_chunked_init(struct sw_http_chunked *c, uint64_t max_body)
{
	*c = (struct sw_http_chunked){ .state = CH_SIZE, .max_body = max_body };
}

int sw_http_chunked_decode(struct sw_http_chunked *c, const char *in, size_t len,
			   char *out, size_t *ret_consumed, size_t *ret_written,
			   struct sw_http_parse_error *ret_err)
{
	const unsigned char *b = (const unsigned char *)in;
	size_t i = 0, w = 0;
	int status = 400;
	const char *msg;

	if (c->state == CH_DONE) {
		*ret_consumed = 0;
		*ret_written = 0;
		return 0;
	}
	if (c->state == CH_ERROR) {
		msg = "the chunked body was already refused";
		goto fail;
	}

	while (i < len) {
		if (c->state == CH_DATA) {
			size_t n = (size_t)SW_MIN(c->chunk_left, (uint64_t)(len - i));
			/* w <= i always: the output never overtakes the input,
			 * so in-place decoding only ever moves bytes down. */
			if (out + w != in + i)
				memmove(out + w, in + i, n);
			w += n;
			i += n;
			c->chunk_left -= n;
			c->total += n;
			if (c->chunk_left == 0)
				c->state = CH_DATA_CR;
			continue;
		}

		unsigned char ch = b[i];
		if (c->state < CH_SIZE_LF && ch != '\r' &&
		    ++c->line_len > SW_HTTP_MAX_CHUNK_LINE) {
			msg = "a chunk size line is too long";
			goto fail;
		}
		if (c->state >= CH_TR_START && c->state <= CH_END_LF &&
		    ++c->trailer_bytes > SW_HTTP_MAX_TRAILER_BYTES) {
			msg = "the chunked trailer section is too large";
			goto fail;
		}

		switch (c->state) {
		case CH_SIZE: {
			int hv = sw_hex_value(ch);
			if (hv >= 0) {
				if (++c->size_digits > 16) {
					msg = "a chunk size has more than 16 hex digits";
					goto fail;
				}
				c->size = (c->size << 4) | (uint64_t)hv;
				break;
			}
			if (c->size_digits == 0) {
				msg = "a chunk must start with its size in hex";
				goto fail;
			}
			/* The size is known: refuse before any of its data. */
			if (c->size > c->max_body - c->total) {
				status = 413;
				msg = "the request body is larger than allowed";
				goto fail;
			}
			if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (is_ows(ch))
				c->state = CH_EXT_BWS;
			else {
				msg = "invalid character after a chunk size";
				goto fail;
			}
			break;
		}
		case CH_EXT_BWS:
			if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (!is_ows(ch)) {
				msg = "invalid chunk extension";
				goto fail;
			}
			break;
		case CH_EXT_NAME_START:
			if (sw_http_is_tchar(ch))
				c->state = CH_EXT_NAME;
			else if (!is_ows(ch)) {
				msg = "invalid chunk extension name";
				goto fail;
			}
			break;
		case CH_EXT_NAME:
			if (sw_http_is_tchar(ch))
				break;
			if (ch == '=')
				c->state = CH_EXT_VAL_START;
			else if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (is_ows(ch))
				c->state = CH_EXT_NAME_BWS;
			else {
				msg = "invalid chunk extension name";
				goto fail;
			}
			break;
		case CH_EXT_NAME_BWS:
			if (ch == '=')
				c->state = CH_EXT_VAL_START;
			else if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (!is_ows(ch)) {
				msg = "invalid chunk extension";
				goto fail;
			}
			break;
		case CH_EXT_VAL_START:
			if (sw_http_is_tchar(ch))
				c->state = CH_EXT_VAL_TOKEN;
			else if (ch == '"')
				c->state = CH_EXT_VAL_QUOTED;
			else if (!is_ows(ch)) {
				msg = "invalid chunk extension value";
				goto fail;
			}
			break;
		case CH_EXT_VAL_TOKEN:
			if (sw_http_is_tchar(ch))
				break;
			if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (is_ows(ch))
				c->state = CH_EXT_BWS;
			else {
				msg = "invalid chunk extension value";
				goto fail;
			}
			break;
		case CH_EXT_VAL_QUOTED:
			if (ch == '"')
				c->state = CH_EXT_AFTER_QUOTED;
			else if (ch == '\\')
				c->state = CH_EXT_VAL_QESC;
			else if (!qdtext[ch]) {
				msg = "invalid character in a quoted chunk extension value";
				goto fail;
			}
			break;
		case CH_EXT_VAL_QESC:
			/* quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ) */
			if (!value_char[ch]) {
				msg = "invalid character in a quoted chunk extension value";
				goto fail;
			}
			c->state = CH_EXT_VAL_QUOTED;
			break;
		case CH_EXT_AFTER_QUOTED:
			if (ch == ';')
				c->state = CH_EXT_NAME_START;
			else if (ch == '\r')
				c->state = CH_SIZE_LF;
			else if (is_ows(ch))
				c->state = CH_EXT_BWS;
			else {
				msg = "invalid chunk extension";
				goto fail;
			}
			break;
		case CH_SIZE_LF:
			if (ch != '\n') {
				msg = "a chunk size line must end with CRLF";
				goto fail;
			}
			if (c->size == 0) {
				c->state = CH_TR_START;
			} else {
				c->chunk_left = c->size;
				c->state = CH_DATA;
			}
			break;
		case CH_DATA_CR:
			if (ch != '\r') {
				msg = "chunk data must be followed by CRLF";
				goto fail;
			}
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (ch != '\n') {
				msg = "chunk data must be followed by CRLF";
				goto fail;
			}
			c->state = CH_SIZE;
			c->size = 0;
			c->size_digits = 0;
			c->line_len = 0;
			break;
		case CH_TR_START:
			if (ch == '\r') {
				c->state = CH_END_LF;
			} else if (sw_http_is_tchar(ch)) {
				if (++c->trailer_count > SW_HTTP_MAX_TRAILERS) {
					msg = "too many trailer fields";
					goto fail;
				}
				c->state = CH_TR_NAME;
			} else if (is_ows(ch)) {
				msg = "obsolete line folding is not allowed in trailers";
				goto fail;
			} else if (ch == '\n') {
				msg = "line endings must be CRLF (bare LF)";
				goto fail;
			} else if (ch == ':') {
				msg = "a trailer line has an empty name";
				goto fail;
			} else {
				msg = "invalid character in a trailer name";
				goto fail;
			}
			break;
		case CH_TR_NAME:
			if (sw_http_is_tchar(ch))
				break;
			if (ch == ':') {
				c->state = CH_TR_VALUE;
			} else if (is_ows(ch)) {
				msg = "white space between a trailer name and its colon is not allowed";
				goto fail;
			} else if (ch == '\r' || ch == '\n') {
				msg = "a trailer line has no colon";
				goto fail;
			} else {
				msg = "invalid character in a trailer name";
				goto fail;
			}
			break;
		case CH_TR_VALUE:
			if (value_char[ch])
				break;
			if (ch == '\r') {
				c->state = CH_TR_LF;
			} else if (ch == '\n') {
				msg = "line endings must be CRLF (bare LF)";
				goto fail;
			} else {
				msg = "invalid control character in a trailer value";
				goto fail;
			}
			break;
		case CH_TR_LF:
			if (ch != '\n') {
				msg = "line endings must be CRLF (bare CR)";
				goto fail;
			}
			c->state = CH_TR_START;
			break;
		case CH_END_LF:
			if (ch != '\n') {
				msg = "line endings must be CRLF (bare CR)";
				goto fail;
			}
			c->state = CH_DONE;
			*ret_consumed = i + 1;
			*ret_written = w;
			return 0;
		default:
			msg = "chunked decoder in an impossible state";
			goto fail;
		}
		i++;
	}
	*ret_consumed = i;
	*ret_written = w;
	return -EAGAIN;

fail:
	c->state = CH_ERROR;
	*ret_consumed = i;
	*ret_written = w;
	ret_err->status = status;
	ret_err->code = status == 413 ? "PAYLOAD_TOO_LARGE" : "MALFORMED_REQUEST";
	ret_err->message = msg;
	return -EBADMSG;
}
