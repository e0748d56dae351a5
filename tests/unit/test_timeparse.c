/* RFC 3339 date-times from clients (timeparse.h): the instants accepted
 * forms stand for, every boundary of every part, and every refusal, with
 * the output left untouched on a refusal. Expected instants were computed
 * independently (Python's calendar.timegm, in integers). */
#include <errno.h>
#include "steward/base/timeparse.h"
#include "test_help.h"

#define UNTOUCHED 4242424242LL

/* Parses a C string; *ret_us is UNTOUCHED unless it succeeds. */
static int parse(const char *s, int64_t *ret_us)
{
	*ret_us = UNTOUCHED;
	return sw_rfc3339_parse_us(sw_str_cstr(s), ret_us);
}

static const struct {
	const char *text;
	int64_t us;
	const char *rule;
} accepted[] = {
	{ "1970-01-01T00:00:00Z", 0, "the epoch" },
	{ "2026-11-21T16:22:35.123Z", 1795278155123000LL, "milliseconds, as the API writes them" },
	{ "2026-11-21t16:22:35.123z", 1795278155123000LL, "t and z in lower case" },
	{ "2026-11-21T17:22:35+01:00", 1795278155000000LL, "a positive offset" },
	{ "2026-11-21T11:22:35-05:00", 1795278155000000LL, "a negative offset" },
	{ "2026-11-21T16:22:35+00:00", 1795278155000000LL, "a zero offset" },
	{ "2026-03-01T00:00:00-05:30", 1772343000000000LL, "an offset with minutes" },
	{ "2026-11-21T16:22:35.1Z", 1795278155100000LL, "one fraction digit" },
	{ "2026-11-21T16:22:35.123456Z", 1795278155123456LL, "six fraction digits" },
	{ "2026-11-21T16:22:35.123456789Z", 1795278155123456LL, "nine digits: kept to the microsecond" },
	{ "2024-02-29T00:00:00Z", 1709164800000000LL, "a leap day" },
	{ "2000-02-29T12:00:00Z", 951825600000000LL, "a leap day of a 400th year" },
	{ "9999-12-31T23:59:59.999999999-23:59", 253402387139999999LL, "the latest, at the longest" },
	{ "1970-01-01T00:30:00+01:00", -1800000000LL, "before the epoch through the offset" },
	{ "1969-12-31T23:59:59Z", -1000000LL, "a second before the epoch" },
	{ "0001-01-01T00:00:00Z", -62135596800000000LL, "the earliest: the first day of year 1" },
	{ "1900-02-28T23:59:59.5Z", -2203891200500000LL, "a century that is not a leap year" },
};

TEST(accepted_forms_give_their_instant)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(accepted); i++) {
		int64_t us;
		int r = parse(accepted[i].text, &us);
		if (r != 0 || us != accepted[i].us)
			fprintf(stderr, "  %s (%s): r=%d us=%lld\n", accepted[i].text, accepted[i].rule, r,
				(long long)us);
		CHECK_INT_EQ(r, 0);
		CHECK_INT_EQ(us, accepted[i].us);
	}
}

static const struct {
	const char *text;
	const char *rule;
} refused[] = {
	{ "", "empty" },
	{ "2026-11-21", "a date alone" },
	{ "2026-11-21T16:22:35", "no offset" },
	{ "2026-11-21T16:22Z", "no seconds" },
	{ "0000-01-01T00:00:00Z", "year zero" },
	{ "2026-00-01T00:00:00Z", "month 0" },
	{ "2026-13-01T00:00:00Z", "month 13" },
	{ "2026-01-00T00:00:00Z", "day 0" },
	{ "2026-01-32T00:00:00Z", "day 32" },
	{ "2026-04-31T00:00:00Z", "April 31" },
	{ "2026-02-29T00:00:00Z", "February 29 of a common year" },
	{ "2100-02-29T00:00:00Z", "February 29 of a century that is not a leap year" },
	{ "2026-11-21T24:00:00Z", "hour 24" },
	{ "2026-11-21T23:60:00Z", "minute 60" },
	{ "2026-11-21T23:59:60Z", "a leap second" },
	{ "2026-11-21 16:22:35Z", "a space for T" },
	{ "2026-11-21X16:22:35Z", "another letter for T" },
	{ "2026/11/21T16:22:35Z", "another date separator" },
	{ "2026-11-21T16.22.35Z", "another time separator" },
	{ "2026-1-21T16:22:35Z", "a one-digit month" },
	{ "+026-11-21T16:22:35Z", "a sign in the year" },
	{ "2026-11-21T16:22: 5Z", "a space in the seconds" },
	{ "2026-11-21T16:22:35.Z", "a point without digits" },
	{ "2026-11-21T16:22:35.1234567890Z", "ten fraction digits" },
	{ "2026-11-21T16:22:35,123Z", "a comma for the point" },
	{ "2026-11-21T16:22:35.123", "a fraction and no offset" },
	{ "2026-11-21T16:22:35UTC", "a zone name" },
	{ "2026-11-21T16:22:35+24:00", "offset hour 24" },
	{ "2026-11-21T16:22:35+23:60", "offset minute 60" },
	{ "2026-11-21T16:22:35+0100", "an offset without its colon" },
	{ "2026-11-21T16:22:35+01", "an offset without minutes" },
	{ "2026-11-21T16:22:35+01:000", "an offset with a third minute digit" },
	{ "2026-11-21T16:22:35Zx", "a byte after Z" },
	{ "2026-11-21T16:22:35Z ", "a space after Z" },
	{ " 2026-11-21T16:22:35Z", "a space before" },
	{ "2026-11-21T16:22:35-00:00 ", "a space after the offset" },
	{ "9999-12-31T23:59:59.123456789+23:59Z", "longer than the longest form" },
};

TEST(every_malformed_or_impossible_time_is_refused_and_leaves_the_output)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(refused); i++) {
		int64_t us;
		int r = parse(refused[i].text, &us);
		if (r != -EINVAL || us != UNTOUCHED)
			fprintf(stderr, "  accepted %s (%s): r=%d us=%lld\n", refused[i].text, refused[i].rule, r,
				(long long)us);
		CHECK_INT_EQ(r, -EINVAL);
		CHECK_INT_EQ(us, UNTOUCHED);
	}
}

TEST(a_nul_inside_the_text_is_refused)
{
	static const char text[] = "2026-11-21T16:22:35Z\0";
	int64_t us = UNTOUCHED;
	CHECK_INT_EQ(sw_rfc3339_parse_us(sw_str_from(text, sizeof(text) - 1), &us), -EINVAL);
	static const char inner[] = "2026-11-21T16:22:35.1\0002Z";
	CHECK_INT_EQ(sw_rfc3339_parse_us(sw_str_from(inner, sizeof(inner) - 1), &us), -EINVAL);
	CHECK_INT_EQ(us, UNTOUCHED);
}

TEST(only_the_given_length_is_read)
{
	/* The view stops before the "Z": no offset within it. */
	static const char text[] = "2026-11-21T16:22:35Z";
	int64_t us = UNTOUCHED;
	CHECK_INT_EQ(sw_rfc3339_parse_us(sw_str_from(text, sizeof(text) - 2), &us), -EINVAL);
	/* ...and a view of the whole is fine. */
	CHECK_INT_EQ(sw_rfc3339_parse_us(sw_str_from(text, sizeof(text) - 1), &us), 0);
	CHECK_INT_EQ(us, 1795278155000000LL);
}

TEST(no_text_is_refused)
{
	int64_t us = UNTOUCHED;
	CHECK_INT_EQ(sw_rfc3339_parse_us(SW_STR_NULL, &us), -EINVAL);
	CHECK_INT_EQ(us, UNTOUCHED);
}

TEST(the_length_limit_is_the_longest_form)
{
	CHECK_INT_EQ(strlen("9999-12-31T23:59:59.123456789+23:59"), SW_RFC3339_MAX_LEN);
}

/* The form the API writes (sw_rfc3339_format_ms): expected texts are
 * PostgreSQL's to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
 * of the same instants: milliseconds truncated, never rounded. */
TEST(instants_are_written_as_the_api_writes_them)
{
	static const struct {
		int64_t us;
		const char *text;
	} cases[] = {
		{ 0, "1970-01-01T00:00:00.000Z" },
		{ 1795278155123000LL, "2026-11-21T16:22:35.123Z" },
		{ 1795278155123999LL, "2026-11-21T16:22:35.123Z" },
		{ 1795278155999999LL, "2026-11-21T16:22:35.999Z" },
		{ 1709164800000000LL, "2024-02-29T00:00:00.000Z" },
		{ 951825600000000LL, "2000-02-29T12:00:00.000Z" },
		{ 1772323199999000LL, "2026-02-28T23:59:59.999Z" },
		{ 1798761599000001LL, "2026-12-31T23:59:59.000Z" },
		{ 253402300799999999LL, "9999-12-31T23:59:59.999Z" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		char out[SW_RFC3339_MS_LEN + 1];
		CHECK_INT_EQ(sw_rfc3339_format_ms(cases[i].us, out), 0);
		CHECK_STR_EQ(out, cases[i].text);
		CHECK_INT_EQ(strlen(out), SW_RFC3339_MS_LEN);
	}
}

TEST(every_written_instant_reads_back_to_its_millisecond)
{
	/* Every day from 1970 to 2400 at a time that moves through the day. */
	for (int64_t day = 0; day < 157000; day++) {
		int64_t us = day * 86400000000LL + (day * 7919 % 86400) * 1000000 + day % 1000 * 1000;
		char out[SW_RFC3339_MS_LEN + 1];
		int64_t back = 0;
		CHECK_INT_EQ(sw_rfc3339_format_ms(us, out), 0);
		CHECK_INT_EQ(sw_rfc3339_parse_us(sw_str_cstr(out), &back), 0);
		CHECK_INT_EQ(back, us);
	}
}

TEST(instants_outside_the_years_are_refused_with_empty_text)
{
	char out[SW_RFC3339_MS_LEN + 1] = "x";
	CHECK_INT_EQ(sw_rfc3339_format_ms(-1, out), -ERANGE);
	CHECK_STR_EQ(out, "");
	CHECK_INT_EQ(sw_rfc3339_format_ms(253402300800000000LL, out), -ERANGE);
	CHECK_STR_EQ(out, "");
}

TEST_MAIN()
