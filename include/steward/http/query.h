/* Query strings of client requests: "?name=value&..." for list filters and
 * pages.
 *
 * A route names the parameters it knows; anything else is the client's
 * mistake and a field error (422), never ignored: a misspelt filter must
 * not silently widen a list. Values are percent-decoded and must be valid
 * UTF-8 without control characters; names are compared as written (not
 * decoded). Every count and length a client controls is bounded here.
 *
 * Pages: ?limit= and ?cursor=, the convention of every paginated list.
 * A cursor is opaque to clients: "<microseconds>_<id>" of the last row of
 * the previous page, written by sw_query_cursor_format(). */
#ifndef STEWARD_QUERY_H
#define STEWARD_QUERY_H

#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/base/buf.h"
#include "steward/http/http.h"

/* ?limit= when absent (its largest value, SW_QUERY_PAGE_MAX, is in limits.h). */
#define SW_QUERY_PAGE_DEFAULT 50
/* Digits of a cursor's microseconds (up to year 33658) and of a numeric id
 * (fits a bigint). */
#define SW_QUERY_CURSOR_US_MAX_DIGITS 18
/* Bytes of a cursor and its NUL: digits, "_" and a UUID. */
#define SW_QUERY_CURSOR_MAX (SW_QUERY_CURSOR_US_MAX_DIGITS + 1 + 36 + 1)

/* Percent-decodes s: "%hh" (either case) is that byte, '+' a space, any
 * other byte itself. Writes the result and a NUL into out (cap bytes).
 * Refuses with -EINVAL a '%' not followed by two hex digits, a control
 * character (0x00..0x1f, 0x7f), written or decoded, and a result that is
 * not valid UTF-8 (overlong forms, surrogates and code points past
 * U+10FFFF included); with -ENOBUFS a result that does not fit in cap with
 * its NUL. Whichever comes first is returned; out is then unspecified.
 * Returns 0 and sets *ret_len (the result is never longer than s). */
int sw_query_decode(struct sw_str s, char *out, size_t cap, size_t *ret_len);

/* Reads query (the text after '?', not decoded) against names, a
 * NULL-terminated list of at most SW_QUERY_MAX_PARAMS names: values[i]
 * becomes the decoded value of names[i] (NUL-terminated, in the arena), or
 * NULL when it is absent. "name" without '=' has the empty value; empty
 * pieces ("a=1&&b=2", a trailing '&', a lone '=') are skipped. Field
 * errors, each under the name concerned (in the arena):
 *   an unknown name ...................... "is not a known parameter"
 *     (under the name as written, cut to SW_QUERY_MAX_NAME_LEN bytes)
 *   an empty name, or one with a byte that is not printable ASCII ("=1")
 *     ..................................... "query": "has a parameter
 *     without a valid name"
 *   a known name given again ............. "must be given once"
 *   a value sw_query_decode() refuses ..... "is not validly encoded"
 *   a value over SW_QUERY_MAX_VALUE_LEN ... "is too long"
 *   more than SW_QUERY_MAX_PARAMS pieces .. "query": "has more than 16
 *     parameters" (reading stops there)
 *   out of memory ......................... "query": "could not be read"
 * A value in error is left "" (not NULL). Returns true when no error was
 * added to fe. */
bool sw_query_read(struct sw_arena *a, struct sw_str query, const char *const *names,
		   const char **values, struct sw_field_errors *fe);

/* A page of a list, as SQL parameter text. */
struct sw_query_page {
	int limit;               /* 1..SW_QUERY_PAGE_MAX */
	char limit_plus_one[12]; /* the rows to ask for: one more tells whether a next page exists */
	const char *after_us;    /* the cursor's microseconds; NULL on the first page */
	const char *after_id;    /* the cursor's id; NULL on the first page */
};

/* Reads the values of ?limit= and ?cursor= (as sw_query_read() leaves
 * them; NULL when absent) into *ret. Numbers are canonical decimals (no
 * sign, no leading zero, no exponent). limit: a value of
 * 1..SW_QUERY_PAGE_MAX (absent: SW_QUERY_PAGE_DEFAULT). cursor:
 * microseconds of at most SW_QUERY_CURSOR_US_MAX_DIGITS digits and at most
 * 2^63 - 1, '_', then an id that id_valid
 * accepts (a UUID, say, or sw_query_is_number). Field errors: "limit":
 * "must be a whole number from 1 to 200"; "cursor": "is not a cursor from
 * a previous page"; "cursor": "could not be read" (out of memory).
 * ret->after_us is a copy in the arena, ret->after_id points into cursor;
 * both NULL after an error. Returns true when no error was added. */
bool sw_query_page_read(struct sw_arena *a, const char *limit, const char *cursor,
			bool (*id_valid)(struct sw_str id), struct sw_query_page *ret,
			struct sw_field_errors *fe);

/* The value of ?order= (as sw_query_read() leaves it; NULL when absent):
 * "asc" or "desc", the default. Anything else is the field error "order":
 * "must be asc or desc" (and "desc" is returned). */
const char *sw_query_order_read(const char *order, struct sw_field_errors *fe);

/* Whether s is an id of a bigint sequence in canonical form (digits, no
 * leading zero, at most 2^63 - 1: sw_parse_i64_canonical()), for
 * sw_query_page_read(). */
bool sw_query_is_number(struct sw_str s);

/* Writes the cursor of a row, "<us>_<id>", into out (cap bytes). us must
 * be 1..SW_QUERY_CURSOR_US_MAX_DIGITS digits and id non-empty without '_'
 * (-EINVAL otherwise; -ENOBUFS when it does not fit). 0 on success. */
int sw_query_cursor_format(const char *us, const char *id, char *out, size_t cap);

#endif
