/* Date-times written by clients: RFC 3339 (section 5.6, "date-time"), as
 * in the filters ?since= and ?until=, and the one form Steward writes. Strict on purpose: a filter that is
 * misread silently widens or narrows what a list shows, so anything but
 * the one grammar is refused, never guessed at. Pure functions: no
 * allocation, no time zone database, no locale. */
#ifndef STEWARD_TIMEPARSE_H
#define STEWARD_TIMEPARSE_H

#include "steward/base/base.h"

/* The longest accepted text: "9999-12-31T23:59:59.123456789+23:59". */
#define SW_RFC3339_MAX_LEN 35
/* Calendar years accepted (of the date as written, before the offset): all
 * of RFC 3339's four-digit years but year 0, which it does not have (the
 * proleptic Gregorian calendar's 1 BC). PostgreSQL's timestamptz holds the
 * whole range, so a filter such as since=0001-01-01T00:00:00Z means what it
 * says. */
#define SW_RFC3339_MIN_YEAR 1
#define SW_RFC3339_MAX_YEAR 9999
/* Digits of a fraction of a second; those past the sixth are read and
 * dropped (the result is in microseconds, truncated). */
#define SW_RFC3339_MAX_FRACTION_DIGITS 9

/* Parses s, exactly "YYYY-MM-DDTHH:MM:SS", then an optional fraction "."
 * and 1 to SW_RFC3339_MAX_FRACTION_DIGITS digits, then "Z" or an offset
 * "+hh:mm" / "-hh:mm" (hh 00..23, mm 00..59). "T" and "Z" may be lower
 * case. Accepts only real dates (leap years by the Gregorian rule) of
 * years SW_RFC3339_MIN_YEAR..SW_RFC3339_MAX_YEAR, hours 00..23, minutes and
 * seconds 00..59 (no leap second). Refuses everything else: other
 * separators, a missing part, signs or spaces inside numbers, a byte after
 * the offset (NUL included), text longer than SW_RFC3339_MAX_LEN.
 *
 * On success sets *ret_us to the instant in microseconds since
 * 1970-01-01T00:00:00Z (negative before it) and returns 0. Otherwise returns -EINVAL and leaves
 * *ret_us untouched. */
int sw_rfc3339_parse_us(struct sw_str s, int64_t *ret_us);

/* The form of every instant the API writes: "YYYY-MM-DDTHH:MM:SS.mmmZ",
 * UTC, milliseconds truncated (PostgreSQL's to_char(ts AT TIME ZONE 'UTC',
 * 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), which steward_rfc3339() is). */
#define SW_RFC3339_MS_LEN 24

/* Writes the instant us (microseconds since 1970-01-01T00:00:00Z) in that
 * form into out, NUL-terminated, and returns 0; -ERANGE, writing "", for
 * an instant outside the years SW_RFC3339_MIN_YEAR..SW_RFC3339_MAX_YEAR. */
int sw_rfc3339_format_ms(int64_t us, char out[SW_RFC3339_MS_LEN + 1]);

#endif
