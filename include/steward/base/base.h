/* Common definitions shared by every module: string views, assertions,
 * clocks and constant-time comparison. Nothing here allocates. */
#ifndef STEWARD_BASE_H
#define STEWARD_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SW_LIKELY(x) __builtin_expect(!!(x), 1)
#define SW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SW_UNUSED __attribute__((unused))
#define SW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SW_MAX(a, b) ((a) > (b) ? (a) : (b))
#define SW_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Invariants and defensive branches, in the SQLite and TigerBeetle manner.
 * Checked in Debug builds and in every sanitizer or fuzzer build
 * (SW_DEBUG_CHECKS, set by CMake), where a broken one aborts with its
 * text, file and line; compiled out in release builds.
 * - SW_ASSERT(x): x holds here; nothing recovers when it does not.
 * - SW_ALWAYS(x), SW_NEVER(x): a branch that is believed never (or always)
 *   taken but is kept, so a release build takes the safe way if the belief
 *   is wrong: if (SW_NEVER(n > cap)) return -EINVAL; Release: (x). */
#if !defined(NDEBUG) || defined(SW_DEBUG_CHECKS)
#define SW_CHECKS 1
__attribute__((noreturn, cold)) void sw_assert_fail(const char *expr, const char *file, int line);
#define SW_ASSERT(x) ((x) ? (void)0 : sw_assert_fail(#x, __FILE__, __LINE__))
#define SW_ALWAYS(x) ((x) ? 1 : (sw_assert_fail(#x, __FILE__, __LINE__), 0))
#define SW_NEVER(x) ((x) ? (sw_assert_fail(#x, __FILE__, __LINE__), 1) : 0)
#else
#define SW_CHECKS 0
#define SW_ASSERT(x) ((void)0)
#define SW_ALWAYS(x) (x)
#define SW_NEVER(x) (x)
#endif

/* A borrowed, not necessarily NUL-terminated byte range. */
struct sw_str {
	const char *ptr;
	size_t len;
};

#define SW_STR(lit) ((struct sw_str){ (lit), sizeof(lit) - 1 })
#define SW_STR_NULL ((struct sw_str){ NULL, 0 })

static inline struct sw_str sw_str_from(const char *p, size_t n)
{
	return (struct sw_str){ p, n };
}

static inline struct sw_str sw_str_cstr(const char *s)
{
	return (struct sw_str){ s, s ? strlen(s) : 0 };
}

static inline bool sw_str_eq(struct sw_str a, struct sw_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* ASCII case-insensitive equality (header names, tokens). */
bool sw_str_case_eq(struct sw_str a, struct sw_str b);

/* Monotonic clock in milliseconds and microseconds. */
uint64_t sw_now_ms(void);
uint64_t sw_now_us(void);
/* Wall clock in milliseconds since the epoch. */
uint64_t sw_wall_ms(void);
/* The time ms milliseconds from now on clock (a clockid_t: CLOCK_MONOTONIC,
 * CLOCK_REALTIME), as the absolute deadline pthread's timed waits take;
 * out is a struct timespec. */
struct timespec;
void sw_deadline_after(int clock, uint64_t ms, struct timespec *out);

/* Formats ms since the epoch as RFC 3339 UTC with milliseconds
 * ("2026-11-21T16:22:35.123Z"); out must hold 25 bytes. Returns length. */
size_t sw_format_rfc3339(uint64_t wall_ms, char out[25]);

/* Constant-time comparison of two equal-length secrets. Returns true when
 * equal. Lengths that differ compare unequal without leaking which bytes. */
bool sw_ct_equal(const void *a, size_t alen, const void *b, size_t blen);

/* Parses a non-negative decimal integer of at most 19 digits; false on any
 * other character, empty input or overflow. */
bool sw_parse_u64(struct sw_str s, uint64_t *ret);
/* Parses a non-negative decimal integer in canonical form, as a database
 * bigint holds it: digits only, no leading zero (but "0" itself), at most
 * INT64_MAX. false otherwise (a sign, "-0", "007", 2^63, an exponent). */
bool sw_parse_i64_canonical(struct sw_str s, int64_t *ret);

/* The value of a hex digit (either case), or -1 for any other byte. */
static inline int sw_hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}
/* Decodes hex digits (either case, an even count) into out (cap bytes) and
 * sets *ret_len; false when a byte is not a hex digit, the count is odd or
 * the bytes do not fit. Empty input decodes to nothing. */
bool sw_hex_decode(struct sw_str hex, uint8_t *out, size_t cap, size_t *ret_len);
/* Writes n bytes of p as lower-case hex digits and a NUL into out (cap >=
 * 2n + 1); false when they do not fit. */
bool sw_hex_encode(const void *p, size_t n, char *out, size_t cap);

#endif
