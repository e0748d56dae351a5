/* String, clock and comparison helpers shared by every module. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "steward/base/base.h"

static inline unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

#if SW_CHECKS
void sw_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, expr);
	fflush(stderr);
	abort();
}
#endif

bool sw_str_case_eq(struct sw_str a, struct sw_str b)
{
	if (a.len != b.len)
		return false;
	for (size_t i = 0; i < a.len; i++)
		if (ascii_lower((unsigned char)a.ptr[i]) != ascii_lower((unsigned char)b.ptr[i]))
			return false;
	return true;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t sw_now_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000ULL;
}

uint64_t sw_now_us(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000ULL;
}

struct timespec sw_deadline_after_ms(clockid_t clock, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

uint64_t sw_wall_ms(void)
{
	return clock_ns(CLOCK_REALTIME) / 1000000ULL;
}

size_t sw_format_rfc3339(uint64_t wall_ms, char out[25])
{
	time_t secs = (time_t)(wall_ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(out, 25, "%Y-%m-%dT%H:%M:%S", &tm);
	unsigned ms = (unsigned)(wall_ms % 1000);
	out[n++] = '.';
	out[n++] = (char)('0' + ms / 100);
	out[n++] = (char)('0' + (ms / 10) % 10);
	out[n++] = (char)('0' + ms % 10);
	out[n++] = 'Z';
	out[n] = '\0';
	return n;
}

bool sw_ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	/* Compare a against itself when lengths differ, so the time spent
	 * depends only on alen, and the answer is still false. */
	const volatile uint8_t *x = a, *y = alen == blen ? b : a;
	uint8_t d = 0;
	for (size_t i = 0; i < alen; i++)
		d |= x[i] ^ y[i];
	return alen == blen && d == 0;
}

bool sw_parse_u64(struct sw_str s, uint64_t *ret)
{
	if (s.len == 0 || s.len > 19)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (uint64_t)(c - '0');
	}
	*ret = v;
	return true;
}

bool sw_parse_i64_canonical(struct sw_str s, int64_t *ret)
{
	uint64_t v;
	if (s.len == 0 || (s.len > 1 && s.ptr[0] == '0') || !sw_parse_u64(s, &v) ||
	    v > (uint64_t)INT64_MAX)
		return false;
	*ret = (int64_t)v;
	return true;
}

bool sw_hex_decode(struct sw_str hex, uint8_t *out, size_t cap, size_t *ret_len)
{
	if (hex.len % 2 || hex.len / 2 > cap)
		return false;
	for (size_t i = 0; i < hex.len / 2; i++) {
		int hi = sw_hex_value((unsigned char)hex.ptr[2 * i]);
		int lo = sw_hex_value((unsigned char)hex.ptr[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*ret_len = hex.len / 2;
	return true;
}

bool sw_hex_encode(const void *p, size_t n, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *b = p;
	if (cap < 2 * n + 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
	return true;
}
