/* Credentials in HTTP headers: finding a cookie in a Cookie header,
 * taking the token from "Authorization: Bearer ...", and building the
 * Set-Cookie value for a session. Pure functions over byte ranges; the
 * views they return point into their input and live as long as it. */
#ifndef STEWARD_HTTP_AUTH_H
#define STEWARD_HTTP_AUTH_H

#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/base/buf.h"

/* Finds the value of the cookie called name (case-sensitive) in a Cookie
 * header's value, a cookie-string of RFC 6265 section 4.2.1
 * ("a=b; c=d"). Tolerated: no space (or several spaces or tabs) after
 * ';', whitespace before a ';' and at either end. A value in DQUOTEs is
 * returned without them (nothing inside is unescaped). Pairs that are
 * malformed (no '=', a name that is not an RFC 7230 token, a value with a
 * character outside cookie-octet) are skipped; the first well-formed pair
 * with the name wins. On success *ret_value is a view into cookie_header
 * (it may be empty) made of cookie-octets only, so never ';', ',', '"',
 * '\\' or whitespace. false when no such pair exists or name is empty. */
bool sw_cookie_find(struct sw_str cookie_header, struct sw_str name, struct sw_str *ret_value);

/* Takes the token of an Authorization header's value "Bearer <token>"
 * (RFC 6750 section 2.1): the scheme case-insensitive, then one or more
 * SP, then a token68 (ALPHA / DIGIT / "-._~+/" then any '='), and nothing
 * after it, not even whitespace. On success *ret_token is a non-empty view
 * into the input; false otherwise. */
bool sw_bearer_token(struct sw_str authorization_header, struct sw_str *ret_token);


/* Appends the value of a Set-Cookie header (the value only, without
 * "Set-Cookie: ") to out:
 *   name=value; Path=/; Max-Age=N; HttpOnly; SameSite=Lax[; Secure]
 * max_age_s == 0 builds the deletion form "name=; Path=/; Max-Age=0; ..."
 * (value is then ignored). 0; -EINVAL when name is not a non-empty RFC
 * 7230 token, value has a character outside cookie-octet or is longer
 * than SW_COOKIE_MAX_VALUE, or max_age_s is negative; -ENOMEM. out is
 * unchanged on failure. */
int sw_set_cookie_header(struct sw_buf *out, const char *name, struct sw_str value, long max_age_s,
			 bool secure);

#endif
