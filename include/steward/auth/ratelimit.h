/* The shared rate limiter: token buckets keyed by (limiter name, key),
 * such as ("signin-ip", "203.0.113.7") or ("signin-account", email), in
 * one process-wide table guarded by a mutex, so every loop thread sees the
 * same counts. The table has a fixed number of entries and evicts the
 * least recently touched one when full: memory stays bounded whatever
 * keys clients invent, at the price that a flood of fresh keys can make
 * the limiter forget an old one (the eviction bound is sized so that this
 * takes many thousands of distinct keys within a window). */
#ifndef STEWARD_RATELIMIT_H
#define STEWARD_RATELIMIT_H

#include "steward/base/base.h"
#include "steward/base/limits.h"


/* At most burst events per per_seconds, as a token bucket holding burst
 * tokens and refilling burst/per_seconds tokens a second: a burst is
 * allowed at once, then one event each per_seconds/burst seconds. burst
 * and per_seconds are at least 1 and burst * per_seconds at most 10^12.
 * name (a string that outlives the process: a literal) identifies the
 * limiter: policies with the same name share buckets. */
struct sw_ratelimit {
	const char *name;
	unsigned burst;
	unsigned per_seconds;
};

/* Takes a token from the bucket of (rl->name, key) at now_ms (a monotonic
 * clock, sw_now_ms(); time never runs backwards for a bucket). A key not
 * seen before starts with a full bucket. true: allowed (*ret_retry_after_s
 * = 0). false: refused, and *ret_retry_after_s is the whole seconds, at
 * least 1, until a token is back (for Retry-After). ret_retry_after_s may
 * be NULL. An invalid policy is a programming error: debug builds abort,
 * release builds refuse every event. Thread-safe. */
bool sw_ratelimit_take(const struct sw_ratelimit *rl, struct sw_str key, uint64_t now_ms,
		       unsigned *ret_retry_after_s);

/* Fills the bucket of (rl->name, key) again, as if never used (say, the
 * per-account failure bucket after a successful sign-in). Thread-safe. */
void sw_ratelimit_reset(const struct sw_ratelimit *rl, struct sw_str key);

/* Entries in use, for metrics and tests. */
size_t sw_ratelimit_count(void);

#endif
