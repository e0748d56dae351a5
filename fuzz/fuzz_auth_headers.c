/* libFuzzer harness for the credential headers (http_auth.h).
 *
 * The whole input is a Cookie header value, searched for a few fixed
 * names and for the name the input itself starts with (so matches are
 * found), and then an Authorization header value. Checks, beyond "no
 * crash, no UB": a cookie value lies inside the input, right after
 * "name=" (or "name=\""), and holds cookie-octets only; it survives
 * sw_set_cookie_header() and is found again in what that built. A bearer
 * token lies inside the input and ends it, follows "Bearer" and spaces,
 * and is token68. The token-format checks agree with their definitions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/http/http_auth.h"
#include "steward/base/secret.h"
#include "fuzz.h"

static bool inside(struct sw_str v, const char *in, size_t len)
{
	return v.ptr >= in && v.ptr <= in + len && v.len <= (size_t)(in + len - v.ptr);
}

static bool cookie_octet(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' && c != '\\';
}

static bool b64url_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

static void check_token_formats(struct sw_str s)
{
	if (sw_session_token_well_formed(s)) {
		ASSERT(s.len == SW_SESSION_TOKEN_LEN);
		for (size_t i = 0; i < s.len; i++)
			ASSERT(b64url_char((unsigned char)s.ptr[i]));
	}
	if (sw_api_token_well_formed(s)) {
		ASSERT(s.len == SW_API_TOKEN_LEN && memcmp(s.ptr, "st_", 3) == 0);
		ASSERT(sw_session_token_well_formed(sw_str_from(s.ptr + 3, s.len - 3)));
	}
}

static void check_cookie(const char *in, size_t len, const char *name)
{
	struct sw_str v;
	size_t nlen = strlen(name);
	if (!sw_cookie_find(sw_str_from(in, len), sw_str_from(name, nlen), &v))
		return;
	ASSERT(nlen > 0 && inside(v, in, len));
	for (size_t i = 0; i < v.len; i++)
		ASSERT(cookie_octet((unsigned char)v.ptr[i]));
	const char *eq = v.ptr - 1;
	if (eq >= in && *eq == '"' && eq > in && eq[-1] == '=')
		eq--;
	ASSERT(eq >= in + nlen && *eq == '=' && memcmp(eq - nlen, name, nlen) == 0);
	check_token_formats(v);

	struct sw_buf b = { 0 };
	int r = sw_set_cookie_header(&b, name, v, 60, len & 1);
	if (v.len > SW_COOKIE_MAX_VALUE) {
		ASSERT(r == -EINVAL && b.len == 0);
		return;
	}
	ASSERT(r == 0);
	struct sw_str again;
	ASSERT(sw_cookie_find(sw_str_from(b.data, b.len), sw_str_from(name, nlen), &again));
	ASSERT(sw_str_eq(again, v));
	sw_buf_release(&b);
}

static void check_bearer(const char *in, size_t len)
{
	struct sw_str t;
	if (!sw_bearer_token(sw_str_from(in, len), &t))
		return;
	ASSERT(t.len > 0 && inside(t, in, len) && t.ptr + t.len == in + len);
	ASSERT(len > 7 && sw_str_case_eq(sw_str_from(in, 6), SW_STR("Bearer")));
	ASSERT(t.ptr > in + 6);
	for (const char *p = in + 6; p < t.ptr; p++)
		ASSERT(*p == ' ');
	size_t i = 0;
	while (i < t.len && t.ptr[i] != '=') {
		ASSERT(b64url_char((unsigned char)t.ptr[i]) || strchr(".~+/", t.ptr[i]));
		i++;
	}
	ASSERT(i > 0);
	for (; i < t.len; i++)
		ASSERT(t.ptr[i] == '=');
	check_token_formats(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so ASan sees any read past the input. */
	char *in = malloc(size ? size : 1);
	ASSERT(in);
	memcpy(in, data, size);

	static const char *const names[] = { "sid", "steward_session", "a", "__Host-sid", "" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_cookie(in, size, names[i]);
	/* The name the input starts with, up to 32 bytes. */
	char own[33];
	size_t n = 0;
	while (n < size && n < 32 && in[n] != '=' && in[n] != '\0')
		n++;
	memcpy(own, in, n);
	own[n] = '\0';
	check_cookie(in, size, own);

	check_bearer(in, size);
	free(in);
	return 0;
}
