/* libFuzzer harness for what clients write in query strings (query.h) and
 * the date-times of list filters (timeparse.h).
 *
 * The whole input is, in turn: a value for sw_query_decode(); a query
 * string for sw_query_read() against the names limit, cursor, since and
 * action, whose limit and cursor are then read as a page (ids as UUIDs and
 * as numbers); and a date-time for sw_rfc3339_parse_us(). Checks, beyond
 * "no crash, no UB", each against an oracle written here independently:
 * - decoding accepts exactly what a plain decoder with a code-point
 *   UTF-8 check accepts, with the same bytes; a buffer one byte short is
 *   -ENOBUFS;
 * - the reader's answer agrees with its field errors; every value read is
 *   the oracle's decoding of that name's first piece; no more errors than
 *   pieces allow;
 * - an accepted page has a limit in 1..200 and its text plus one, and its
 *   cursor written back by sw_query_cursor_format() is the cursor read;
 * - the date-time parser accepts exactly what a field-by-field oracle
 *   accepts, with the instant timegm() gives; an accepted instant written
 *   back in UTC with microseconds parses to itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "steward/base/validate.h"
#include "steward/http/query.h"
#include "steward/base/timeparse.h"
#include "fuzz.h"

/* ---- decoding ---- */

static int hexval(unsigned char c)
{
	const char *digits = "0123456789abcdef";
	if (c >= 'A' && c <= 'F')
		c = (unsigned char)(c - 'A' + 'a');
	const char *p = c ? strchr(digits, c) : NULL;
	return p ? (int)(p - digits) : -1;
}

/* UTF-8 by decoding code points: the shortest form, no surrogates, at
 * most U+10FFFF. */
static bool oracle_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!len || n - i < len)
			return false;
		unsigned cp = len == 1 ? c : c & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		static const unsigned min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* Decodes into out (room for s.len + 1); false when refused. */
static bool oracle_decode(struct sw_str s, char *out, size_t *ret_len)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c == '%') {
			if (i + 2 >= s.len || hexval((unsigned char)s.ptr[i + 1]) < 0 ||
			    hexval((unsigned char)s.ptr[i + 2]) < 0)
				return false;
			c = (unsigned char)(hexval((unsigned char)s.ptr[i + 1]) * 16 +
					    hexval((unsigned char)s.ptr[i + 2]));
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f)
			return false;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	*ret_len = o;
	return oracle_utf8((const unsigned char *)out, o);
}

static void check_decode(const char *in, size_t len)
{
	char *want = malloc(len + 1), *got = malloc(len + 1);
	ASSERT(want && got);
	size_t want_len = 0, got_len = 12345;
	bool ok = oracle_decode(sw_str_from(in, len), want, &want_len);
	int r = sw_query_decode(sw_str_from(in, len), got, len + 1, &got_len);
	ASSERT(r == 0 || r == -EINVAL);
	ASSERT((r == 0) == ok);
	if (ok) {
		ASSERT(got_len == want_len && memcmp(got, want, want_len + 1) == 0);
		/* One byte short: refused for room, or for what comes first. */
		r = sw_query_decode(sw_str_from(in, len), got, want_len, &got_len);
		ASSERT(r == -ENOBUFS);
	}
	free(want);
	free(got);
}

/* ---- the reader and pages ---- */

static const char *const names[] = { "limit", "cursor", "since", "action", NULL };

static bool uuid(struct sw_str s)
{
	return sw_is_uuid(s);
}

static bool all_digits(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* The raw value of the first piece named name, as the reader splits. */
static bool first_piece(const char *q, size_t len, const char *name, struct sw_str *ret)
{
	const char *p = q, *end = q + len;
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		const char *name_end = eq ? eq : stop;
		if ((size_t)(name_end - p) == strlen(name) && memcmp(p, name, strlen(name)) == 0) {
			*ret = eq ? sw_str_from(eq + 1, (size_t)(stop - eq - 1)) : SW_STR_NULL;
			return true;
		}
		p = amp ? amp + 1 : end;
	}
	return false;
}

static void check_page(struct sw_arena *a, const char *limit, const char *cursor, bool numbers)
{
	struct sw_field_errors fe = { 0 };
	struct sw_query_page pg;
	bool ok = sw_query_page_read(a, limit, cursor, numbers ? sw_query_is_number : uuid, &pg, &fe);
	ASSERT(ok == (fe.count == 0));
	ASSERT(fe.count <= 2);
	sw_buf_release(&fe.buf);
	if (!ok) {
		ASSERT(!pg.after_us && !pg.after_id);
		return;
	}
	ASSERT(pg.limit >= 1 && pg.limit <= SW_QUERY_PAGE_MAX);
	ASSERT(!limit || pg.limit == atoi(limit));
	/* Numbers are canonical: no leading zero, so one value has one text. */
	ASSERT(!limit || limit[0] != '0');
	ASSERT(!cursor || cursor[0] != '0' || cursor[1] == '_');
	char plus[12];
	snprintf(plus, sizeof(plus), "%d", pg.limit + 1);
	ASSERT(strcmp(plus, pg.limit_plus_one) == 0);
	ASSERT(!cursor == !pg.after_us && !cursor == !pg.after_id);
	if (cursor) {
		ASSERT(all_digits(pg.after_us, 1, SW_QUERY_CURSOR_US_MAX_DIGITS));
		char back[SW_QUERY_CURSOR_MAX];
		int r = sw_query_cursor_format(pg.after_us, pg.after_id, back, sizeof(back));
		ASSERT(r == 0);
		ASSERT(strcmp(back, cursor) == 0);
	}
}

static void check_read(const char *q, size_t len)
{
	static char first[8192];
	struct sw_arena a;
	sw_arena_init(&a, first, sizeof(first));
	struct sw_field_errors fe = { 0 };
	const char *v[5];
	bool ok = sw_query_read(&a, sw_str_from(q, len), names, v, &fe);
	ASSERT(ok == (fe.count == 0));
	/* One error a piece at the most, and one for the count. */
	ASSERT(fe.count <= SW_QUERY_MAX_PARAMS + 1);
	sw_buf_release(&fe.buf);
	for (size_t i = 0; names[i]; i++) {
		if (!v[i])
			continue;
		size_t n = strlen(v[i]);
		ASSERT(n <= SW_QUERY_MAX_VALUE_LEN);
		ASSERT(oracle_utf8((const unsigned char *)v[i], n));
		for (size_t k = 0; k < n; k++)
			ASSERT((unsigned char)v[i][k] >= 0x20 && v[i][k] != 0x7f);
	}
	if (ok) {
		for (size_t i = 0; names[i]; i++) {
			struct sw_str raw;
			bool present = first_piece(q, len, names[i], &raw);
			ASSERT(present == (v[i] != NULL));
			if (!present)
				continue;
			char *want = malloc(raw.len + 1);
			size_t want_len;
			ASSERT(want && oracle_decode(raw, want, &want_len));
			ASSERT(strcmp(want, v[i]) == 0);
			free(want);
		}
		check_page(&a, v[0], v[1], false);
		check_page(&a, v[0], v[1], true);
	}
	sw_arena_release(&a);
}

/* ---- date-times ---- */

static bool oracle_num(const char *s, int n, int *ret)
{
	char buf[8];
	for (int i = 0; i < n; i++)
		if (!strchr("0123456789", s[i]) || !s[i])
			return false;
	memcpy(buf, s, (size_t)n);
	buf[n] = '\0';
	*ret = atoi(buf);
	return true;
}

/* The grammar field by field, the instant by timegm(). */
static bool oracle_time(const char *s, size_t len, int64_t *ret)
{
	char t[64];
	if (len < 20 || len > 40 || memchr(s, '\0', len))
		return false;
	memcpy(t, s, len);
	t[len] = '\0';
	int Y, M, D, h, mi, sec;
	if (!oracle_num(t, 4, &Y) || t[4] != '-' || !oracle_num(t + 5, 2, &M) || t[7] != '-' ||
	    !oracle_num(t + 8, 2, &D) || (t[10] != 'T' && t[10] != 't') || !oracle_num(t + 11, 2, &h) ||
	    t[13] != ':' || !oracle_num(t + 14, 2, &mi) || t[16] != ':' || !oracle_num(t + 17, 2, &sec))
		return false;
	size_t p = 19;
	int64_t frac = 0;
	if (t[p] == '.') {
		size_t start = ++p;
		while (t[p] >= '0' && t[p] <= '9')
			p++;
		size_t digits = p - start;
		if (digits < 1 || digits > 9)
			return false;
		char us[7] = "000000";
		memcpy(us, t + start, digits < 6 ? digits : 6);
		frac = atoi(us);
	}
	int offset = 0;
	if ((t[p] == 'Z' || t[p] == 'z') && p + 1 == len) {
		offset = 0;
	} else if ((t[p] == '+' || t[p] == '-') && p + 6 == len) {
		int oh, om;
		if (!oracle_num(t + p + 1, 2, &oh) || t[p + 3] != ':' || !oracle_num(t + p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return false;
		offset = (t[p] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
	} else {
		return false;
	}
	if (Y < SW_RFC3339_MIN_YEAR || M < 1 || M > 12 || D < 1 || h > 23 || mi > 59 || sec > 59)
		return false;
	struct tm tm = { .tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h,
			 .tm_min = mi, .tm_sec = sec };
	time_t secs = timegm(&tm);
	/* timegm() normalises 31 April into 1 May: only a real date keeps its day. */
	if (tm.tm_mday != D || tm.tm_mon != M - 1)
		return false;
	*ret = ((int64_t)secs - offset) * 1000000 + frac;
	return true;
}

static void check_time(const char *s, size_t len)
{
	int64_t us = -7, want = 0;
	int r = sw_rfc3339_parse_us(sw_str_from(s, len), &us);
	bool ok = oracle_time(s, len, &want);
	ASSERT(r == 0 || r == -EINVAL);
	ASSERT((r == 0) == ok);
	if (!ok) {
		ASSERT(us == -7);
		return;
	}
	ASSERT(len <= SW_RFC3339_MAX_LEN);
	ASSERT(us == want);
	/* Written back in UTC with microseconds, it reads the same. */
	int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
	time_t tt = (time_t)secs;
	struct tm tm;
	ASSERT(gmtime_r(&tt, &tm));
	if (tm.tm_year + 1900 < SW_RFC3339_MIN_YEAR || tm.tm_year + 1900 > SW_RFC3339_MAX_YEAR)
		return; /* the offset moved it out of the years a client may write */
	char back[64];
	snprintf(back, sizeof(back), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (long long)(us - secs * 1000000));
	int64_t again = -7;
	ASSERT(sw_rfc3339_parse_us(sw_str_cstr(back), &again) == 0 && again == us);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *in = malloc(size ? size : 1);
	ASSERT(in);
	memcpy(in, data, size);
	check_decode(in, size);
	check_read(in, size);
	check_time(in, size);
	free(in);
	return 0;
}
