/* The scrubber: text with every occurrence of a set of secret values (an
 * application's variable values) hidden, the one rule for every place
 * such text leaves the server: a deployment's build log
 * (src/deploy/build_log.c) and a container's live log
 * (src/api/container_logs.c).
 *
 * Every byte inside any occurrence of any value is hidden, and each run of
 * hidden bytes becomes one "***" (the same as replacing the longest value
 * first, and safe when values overlap: "abcd" with values "abc" and "bcd"
 * is "***", never "***d"). A value holding line breaks is also scrubbed
 * line by line (a program may print a key one line at a time). A value
 * (or a line of one) shorter than SW_VARIABLE_SCRUB_MIN_LEN bytes is not
 * scrubbed (limits.h says why). A value is only found whole inside one
 * call: callers scrub whole lines. */
#ifndef STEWARD_BASE_SCRUB_H
#define STEWARD_BASE_SCRUB_H

#include <stddef.h>

struct sw_scrubber;
/* A scrubber of values[0..n) (NUL-terminated strings, copied; NULL and
 * empty ones ignored). NULL with errno ENOMEM. */
struct sw_scrubber *sw_scrubber_new(const char *const *values, size_t n);
/* The values kept (lines of multi-line values included). */
size_t sw_scrubber_count(const struct sw_scrubber *s);
/* The scrubbed text of in[0..n) in a new buffer (malloc'd, the caller
 * wipes and frees it; not NUL-terminated), its length in *ret_len. NULL
 * when out of memory. s may be NULL: a copy. */
char *sw_scrubber_apply(const struct sw_scrubber *s, const char *in, size_t n, size_t *ret_len);
/* Wipes the values and frees. NULL is a no-op. */
void sw_scrubber_free(struct sw_scrubber *s);

/* in[0..n) as valid UTF-8 without NUL into out (room for 3 * n bytes): a
 * NUL or an invalid sequence becomes U+FFFD. Returns the length written. */
size_t sw_utf8_clean(const char *in, size_t n, char *out);

#endif
