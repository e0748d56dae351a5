/* Cookies and bearer tokens (http_auth.h).
 *
 * Both parsers are single forward passes over a header value the request
 * parser has already bounded (SW_HTTP_MAX_HEAD_BYTES), and both return
 * views into it. They are strict about what they hand back (a cookie value
 * of cookie-octets only, a token68) and forgiving only where browsers and
 * proxies are known to differ (whitespace around ';', quoted values),
 * because a refused Cookie header would sign a user out for nothing. */
#include <errno.h>
#include "steward/http/http_auth.h"
#include "http/tchar.h"

static bool is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* RFC 6265 cookie-octet: %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E,
 * that is visible ASCII but DQUOTE, ',', ';' and '\\'. */
static bool is_cookie_octet(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' && c != '\\';
}

/* RFC 7235 token68 without its trailing '=' padding. */
static bool is_token68_char(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits one cookie-pair (already trimmed) into name and value; false
 * when it is malformed. */
static bool parse_pair(const char *p, size_t n, struct sw_str *ret_name, struct sw_str *ret_value)
{
	size_t eq = 0;
	while (eq < n && p[eq] != '=')
		eq++;
	if (eq == 0 || eq == n)
		return false;
	for (size_t i = 0; i < eq; i++)
		if (!sw_http_is_tchar((unsigned char)p[i]))
			return false;
	const char *v = p + eq + 1;
	size_t vlen = n - eq - 1;
	if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
		v++;
		vlen -= 2;
	}
	for (size_t i = 0; i < vlen; i++)
		if (!is_cookie_octet((unsigned char)v[i]))
			return false;
	*ret_name = sw_str_from(p, eq);
	*ret_value = sw_str_from(v, vlen);
	return true;
}

bool sw_cookie_find(struct sw_str header, struct sw_str name, struct sw_str *ret_value)
{
	if (name.len == 0)
		return false;
	size_t i = 0;
	while (i < header.len) {
		size_t start = i;
		while (i < header.len && header.ptr[i] != ';')
			i++;
		size_t end = i;
		i++; /* past the ';' (or the end) */
		while (start < end && is_ws(header.ptr[start]))
			start++;
		while (end > start && is_ws(header.ptr[end - 1]))
			end--;
		struct sw_str n, v;
		if (parse_pair(header.ptr + start, end - start, &n, &v) && sw_str_eq(n, name)) {
			*ret_value = v;
			return true;
		}
	}
	return false;
}

bool sw_bearer_token(struct sw_str h, struct sw_str *ret_token)
{
	static const struct sw_str scheme = SW_STR("Bearer");
	if (h.len <= scheme.len + 1 || !sw_str_case_eq(sw_str_from(h.ptr, scheme.len), scheme))
		return false;
	size_t i = scheme.len;
	if (h.ptr[i] != ' ')
		return false;
	while (i < h.len && h.ptr[i] == ' ')
		i++;
	size_t start = i;
	while (i < h.len && is_token68_char((unsigned char)h.ptr[i]))
		i++;
	if (i == start)
		return false;
	while (i < h.len && h.ptr[i] == '=')
		i++;
	if (i != h.len)
		return false;
	*ret_token = sw_str_from(h.ptr + start, h.len - start);
	return true;
}

int sw_set_cookie_header(struct sw_buf *out, const char *name, struct sw_str value, long max_age_s,
			 bool secure)
{
	if (!name || !name[0] || max_age_s < 0)
		return -EINVAL;
	for (const char *c = name; *c; c++)
		if (!sw_http_is_tchar((unsigned char)*c))
			return -EINVAL;
	if (max_age_s == 0)
		value = SW_STR_NULL;
	if (value.len > SW_COOKIE_MAX_VALUE)
		return -EINVAL;
	for (size_t i = 0; i < value.len; i++)
		if (!is_cookie_octet((unsigned char)value.ptr[i]))
			return -EINVAL;
	size_t mark = out->len;
	int r = sw_buf_appendf(out, "%s=%.*s; Path=/; Max-Age=%ld; HttpOnly; SameSite=Lax%s", name,
			       (int)value.len, value.len ? value.ptr : "", max_age_s,
			       secure ? "; Secure" : "");
	if (r < 0)
		out->len = mark;
	return r;
}
