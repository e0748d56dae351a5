/* Query strings: the reader of "?name=value&..." for filters and pages
 * (include/steward/http/query.h).
 *
 * Nothing here trusts the HTTP parser's earlier checks of the request
 * target: the functions take any bytes (the fuzzer gives them any), and
 * every refusal is a field error the client can act on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/http/query.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, at most
 * U+10FFFF. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* past U+10FFFF */
		} else {
			return false;
		}
		if (n - i < len || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (size_t k = 2; k < len; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		i += len;
	}
	return true;
}

int sw_query_decode(struct sw_str s, char *out, size_t cap, size_t *ret_len)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len; i++) {
		int c = (unsigned char)s.ptr[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (s.len - i < 3)
				return -EINVAL;
			int h = sw_hex_value((unsigned char)s.ptr[i + 1]);
			int l = sw_hex_value((unsigned char)s.ptr[i + 2]);
			if (h < 0 || l < 0)
				return -EINVAL;
			c = h * 16 + l;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		if (o + 1 >= cap)
			return -ENOBUFS;
		out[o++] = (char)c;
	}
	if (cap == 0)
		return -ENOBUFS;
	out[o] = '\0';
	if (!utf8_valid((const unsigned char *)out, o))
		return -EINVAL;
	*ret_len = o;
	return 0;
}

static bool printable_name(struct sw_str name)
{
	if (!name.len)
		return false;
	for (size_t i = 0; i < name.len; i++)
		if ((unsigned char)name.ptr[i] < 0x21 || (unsigned char)name.ptr[i] > 0x7e)
			return false;
	return true;
}

/* Decodes one known parameter's value into the arena; "" and a field
 * error when it is refused. */
static const char *read_value(struct sw_arena *a, const char *name, struct sw_str raw,
			      struct sw_field_errors *fe)
{
	size_t cap = SW_MIN(raw.len, (size_t)SW_QUERY_MAX_VALUE_LEN) + 1, len;
	char *out = sw_arena_alloc(a, cap);
	if (!out) {
		sw_field_error(fe, "query", "could not be read");
		return "";
	}
	int r = sw_query_decode(raw, out, cap, &len);
	if (r == -ENOBUFS)
		sw_field_error(fe, name, "is too long");
	else if (r < 0)
		sw_field_error(fe, name, "is not validly encoded");
	return r < 0 ? "" : out;
}

bool sw_query_read(struct sw_arena *a, struct sw_str query, const char *const *names,
		   const char **values, struct sw_field_errors *fe)
{
	unsigned errors = fe->count, pieces = 0;
	for (size_t i = 0; names[i]; i++)
		values[i] = NULL;
	const char *p = query.ptr, *end = query.ptr + query.len;
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		struct sw_str name = sw_str_from(p, (size_t)((eq ? eq : stop) - p));
		struct sw_str raw = eq ? sw_str_from(eq + 1, (size_t)(stop - eq - 1)) : SW_STR_NULL;
		p = amp ? amp + 1 : end;
		if (!name.len && !raw.len)
			continue; /* an empty piece, or a lone '=' */
		if (++pieces > SW_QUERY_MAX_PARAMS) {
			sw_field_error(fe, "query", "has more than " STR(SW_QUERY_MAX_PARAMS) " parameters");
			break;
		}
		if (!printable_name(name)) {
			sw_field_error(fe, "query", "has a parameter without a valid name");
			continue;
		}
		size_t i = 0;
		while (names[i] && !sw_str_eq(sw_str_cstr(names[i]), name))
			i++;
		if (!names[i]) {
			char *n = sw_arena_strndup(a, name.ptr, SW_MIN(name.len, (size_t)SW_QUERY_MAX_NAME_LEN));
			sw_field_error(fe, n ? n : "query", "is not a known parameter");
		} else if (values[i]) {
			sw_field_error(fe, names[i], "must be given once");
		} else {
			values[i] = read_value(a, names[i], raw, fe);
		}
	}
	return fe->count == errors;
}

/* 1..max decimal digits. */
static bool all_digits(struct sw_str s, size_t max)
{
	if (s.len < 1 || s.len > max)
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] < '0' || s.ptr[i] > '9')
			return false;
	return true;
}

bool sw_query_is_number(struct sw_str s)
{
	int64_t v;
	return sw_parse_i64_canonical(s, &v);
}

bool sw_query_page_read(struct sw_arena *a, const char *limit, const char *cursor,
			bool (*id_valid)(struct sw_str id), struct sw_query_page *ret,
			struct sw_field_errors *fe)
{
	unsigned errors = fe->count;
	memset(ret, 0, sizeof(*ret));
	ret->limit = SW_QUERY_PAGE_DEFAULT;
	if (limit) {
		int64_t v = 0;
		if (strlen(limit) > 3 || !sw_parse_i64_canonical(sw_str_cstr(limit), &v))
			v = 0;
		if (v < 1 || v > SW_QUERY_PAGE_MAX)
			sw_field_error(fe, "limit", "must be a whole number from 1 to " STR(SW_QUERY_PAGE_MAX));
		else
			ret->limit = (int)v;
	}
	snprintf(ret->limit_plus_one, sizeof(ret->limit_plus_one), "%d", ret->limit + 1);
	if (cursor) {
		const char *sep = strchr(cursor, '_');
		struct sw_str us = sw_str_from(cursor, sep ? (size_t)(sep - cursor) : 0);
		struct sw_str id = sw_str_cstr(sep ? sep + 1 : "");
		int64_t v;
		if (!sep || us.len > SW_QUERY_CURSOR_US_MAX_DIGITS || !sw_parse_i64_canonical(us, &v) ||
		    !id_valid(id)) {
			sw_field_error(fe, "cursor", "is not a cursor from a previous page");
		} else if (!(ret->after_us = sw_arena_strndup(a, us.ptr, us.len))) {
			sw_field_error(fe, "cursor", "could not be read");
		} else {
			ret->after_id = id.ptr;
		}
	}
	if (fe->count != errors)
		ret->after_us = ret->after_id = NULL;
	return fe->count == errors;
}

int sw_query_cursor_format(const char *us, const char *id, char *out, size_t cap)
{
	if (!all_digits(sw_str_cstr(us), SW_QUERY_CURSOR_US_MAX_DIGITS) || !*id || strchr(id, '_'))
		return -EINVAL;
	int n = snprintf(out, cap, "%s_%s", us, id);
	return n >= 0 && (size_t)n < cap ? 0 : -ENOBUFS;
}

const char *sw_query_order_read(const char *order, struct sw_field_errors *fe)
{
	if (!order || strcmp(order, "desc") == 0)
		return "desc";
	if (strcmp(order, "asc") == 0)
		return "asc";
	sw_field_error(fe, "order", "must be asc or desc");
	return "desc";
}
