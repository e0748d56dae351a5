/* The HTTP token characters (RFC 9110 5.6.2), shared by the files of
 * src/http that read tokens: method and field names (parser.c), chunk
 * extensions (chunked.c), multipart parameters (multipart.c) and cookie
 * names (cookie.c). One table, defined in parser.c. */
#ifndef STEWARD_HTTP_TCHAR_H
#define STEWARD_HTTP_TCHAR_H

#include <stdbool.h>
#include <stdint.h>

/* tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
 *         "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA: 1, else 0. */
extern const uint8_t sw_http_tchar[256];

static inline bool sw_http_is_tchar(unsigned char c)
{
	return sw_http_tchar[c] != 0;
}

#endif
