/* RFC 3339 date-times from clients, and the API's own form
 * (include/steward/base/timeparse.h).
 *
 * The instant is computed with the proleptic Gregorian day count (Howard
 * Hinnant's days_from_civil and civil_from_days) rather than timegm() or
 * gmtime_r(): the same answer without a libc time zone path, and nothing
 * a fuzzer cannot reach. Writing in C is what lets a statement return a
 * timestamp as a number instead of asking PostgreSQL's to_char() per
 * value (sql.h, SW_SQL_TS_US). */
#include <errno.h>
#include "steward/base/timeparse.h"

/* n decimal digits at s as a number; false on any other byte. */
static bool digits(const char *s, int n, int *ret)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d (y >= 1, m 1..12, d 1..31). */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int era = y / 400;
	int yoe = y - era * 400;
	int doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int64_t)era * 146097 + doe - 719468;
}

int sw_rfc3339_parse_us(struct sw_str s, int64_t *ret_us)
{
	/* "YYYY-MM-DDTHH:MM:SS" and at least the "Z" */
	if (!s.ptr || s.len < 20 || s.len > SW_RFC3339_MAX_LEN)
		return -EINVAL;
	const char *p = s.ptr, *end = s.ptr + s.len;
	int Y, M, D, h, mi, sec;
	if (!digits(p, 4, &Y) || p[4] != '-' || !digits(p + 5, 2, &M) || p[7] != '-' ||
	    !digits(p + 8, 2, &D) || (p[10] != 'T' && p[10] != 't') || !digits(p + 11, 2, &h) ||
	    p[13] != ':' || !digits(p + 14, 2, &mi) || p[16] != ':' || !digits(p + 17, 2, &sec))
		return -EINVAL;
	p += 19;
	int64_t frac_us = 0;
	if (*p == '.') {
		int n = 0, scale = 100000;
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, n++) {
			frac_us += (*p - '0') * scale;
			scale /= 10;
		}
		if (n < 1 || n > SW_RFC3339_MAX_FRACTION_DIGITS || p == end)
			return -EINVAL;
	}
	int offset_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (end - p != 6 || !digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return -EINVAL;
		offset_s = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (p != end || Y < SW_RFC3339_MIN_YEAR || Y > SW_RFC3339_MAX_YEAR || M < 1 || M > 12 ||
	    D < 1 || D > days_in_month(Y, M) || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	int64_t secs = days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
	*ret_us = secs * 1000000 + frac_us;
	return 0;
}

/* The date of day z since 1970-01-01 (z >= 0 here). */
static void civil_from_days(int64_t z, int *ret_y, int *ret_m, int *ret_d)
{
	z += 719468;
	int64_t era = z / 146097;
	int doe = (int)(z - era * 146097);
	int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int mp = (5 * doy + 2) / 153;
	int d = doy - (153 * mp + 2) / 5 + 1;
	int m = mp < 10 ? mp + 3 : mp - 9;
	*ret_y = (int)(era * 400) + yoe + (m <= 2);
	*ret_m = m;
	*ret_d = d;
}

static char *put(char *p, int v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + n;
}

int sw_rfc3339_format_ms(int64_t us, char out[SW_RFC3339_MS_LEN + 1])
{
	static const int64_t us_per_day = 86400LL * 1000000;
	out[0] = '\0';
	if (us < 0 || us / us_per_day >= days_from_civil(SW_RFC3339_MAX_YEAR + 1, 1, 1))
		return -ERANGE;
	int y, m, d;
	civil_from_days(us / us_per_day, &y, &m, &d);
	int64_t in_day = us % us_per_day;
	int ms = (int)(in_day / 1000 % 1000);
	int s = (int)(in_day / 1000000);
	char *p = put(out, y, 4);
	*p++ = '-';
	p = put(p, m, 2);
	*p++ = '-';
	p = put(p, d, 2);
	*p++ = 'T';
	p = put(p, s / 3600, 2);
	*p++ = ':';
	p = put(p, s / 60 % 60, 2);
	*p++ = ':';
	p = put(p, s % 60, 2);
	*p++ = '.';
	p = put(p, ms, 3);
	*p++ = 'Z';
	*p = '\0';
	return 0;
}
