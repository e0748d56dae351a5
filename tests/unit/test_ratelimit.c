/* The shared token-bucket limiter: bursts, Retry-After, refill with an
 * explicit clock, independence of keys and limiters, reset, the entry
 * bound with least-recently-touched eviction, and four threads sharing
 * one bucket without losing or inventing a token. Each test uses its own
 * limiter names: the table is process-wide. */
#include <pthread.h>
#include "steward/auth/ratelimit.h"
#include "test_help.h"

static bool take(const struct sw_ratelimit *rl, const char *key, uint64_t now, unsigned *retry)
{
	return sw_ratelimit_take(rl, sw_str_cstr(key), now, retry);
}

TEST(burst_is_allowed_then_refused)
{
	static const struct sw_ratelimit rl = { "t-burst", 3, 60 };
	unsigned retry = 99;
	for (int i = 0; i < 3; i++) {
		CHECK(take(&rl, "k", 1000, &retry));
		CHECK_INT_EQ(retry, 0);
	}
	CHECK(!take(&rl, "k", 1000, &retry));
	CHECK_INT_EQ(retry, 20); /* one token each 60/3 s */
	CHECK(!take(&rl, "k", 1000, NULL));
}

TEST(retry_after_counts_down_to_the_next_token)
{
	static const struct sw_ratelimit rl = { "t-retry", 3, 60 };
	const uint64_t t0 = 5000000;
	unsigned retry;
	for (int i = 0; i < 3; i++)
		REQUIRE(take(&rl, "k", t0, &retry));
	CHECK(!take(&rl, "k", t0 + 5000, &retry));
	CHECK_INT_EQ(retry, 15);
	CHECK(!take(&rl, "k", t0 + 19001, &retry));
	CHECK_INT_EQ(retry, 1); /* 999 ms rounds up */
	CHECK(!take(&rl, "k", t0 + 19999, &retry));
	CHECK_INT_EQ(retry, 1);
	CHECK(take(&rl, "k", t0 + 20000, &retry));
	CHECK(!take(&rl, "k", t0 + 20000, &retry));
	CHECK_INT_EQ(retry, 20);
}

TEST(bucket_refills_over_time_but_never_beyond_the_burst)
{
	static const struct sw_ratelimit rl = { "t-refill", 2, 10 };
	unsigned retry;
	CHECK(take(&rl, "k", 0, &retry));
	CHECK(take(&rl, "k", 0, &retry));
	CHECK(!take(&rl, "k", 0, &retry));
	CHECK_INT_EQ(retry, 5);
	CHECK(take(&rl, "k", 5000, &retry)); /* one token per 5 s */
	CHECK(!take(&rl, "k", 5000, &retry));
	/* An hour idle: a full bucket, two tokens, not 720. */
	CHECK(take(&rl, "k", 3605000, &retry));
	CHECK(take(&rl, "k", 3605000, &retry));
	CHECK(!take(&rl, "k", 3605000, &retry));
}

TEST(clock_going_backwards_adds_nothing)
{
	static const struct sw_ratelimit rl = { "t-backwards", 1, 10 };
	unsigned retry;
	CHECK(take(&rl, "k", 100000, &retry));
	CHECK(!take(&rl, "k", 50000, &retry));
	CHECK(!take(&rl, "k", 100000, &retry));
	CHECK_INT_EQ(retry, 10);
	CHECK(take(&rl, "k", 110000, &retry));
}

TEST(keys_and_limiters_are_independent)
{
	static const struct sw_ratelimit a = { "t-indep-a", 1, 60 };
	static const struct sw_ratelimit b = { "t-indep-b", 1, 60 };
	unsigned retry;
	CHECK(take(&a, "203.0.113.7", 0, &retry));
	CHECK(!take(&a, "203.0.113.7", 0, &retry));
	CHECK(take(&a, "203.0.113.8", 0, &retry));
	CHECK(take(&b, "203.0.113.7", 0, &retry));
	CHECK(take(&a, "", 0, &retry));
	CHECK(!take(&a, "", 0, &retry));
	/* A key with a NUL in it is not its prefix. */
	CHECK(sw_ratelimit_take(&a, sw_str_from("203.0.113.7\0x", 13), 0, &retry));
}

TEST(limiters_with_the_same_name_share_buckets)
{
	/* The name is the identity, not the struct's address. */
	char name[] = "t-shared";
	const struct sw_ratelimit a = { "t-shared", 1, 60 };
	const struct sw_ratelimit b = { name, 1, 60 };
	unsigned retry;
	CHECK(take(&a, "k", 0, &retry));
	CHECK(!take(&b, "k", 0, &retry));
}

TEST(long_keys_stay_distinct)
{
	static const struct sw_ratelimit rl = { "t-long", 1, 60 };
	char k1[300], k2[300];
	memset(k1, 'a', sizeof(k1) - 1);
	k1[sizeof(k1) - 1] = '\0';
	memcpy(k2, k1, sizeof(k1));
	k2[sizeof(k2) - 2] = 'b'; /* differ only past SW_RATELIMIT_MAX_KEY */
	unsigned retry;
	CHECK(take(&rl, k1, 0, &retry));
	CHECK(take(&rl, k2, 0, &retry));
	CHECK(!take(&rl, k1, 0, &retry));
	CHECK(!take(&rl, k2, 0, &retry));
	/* Exactly at the bound: stored as is, still distinct. */
	k1[SW_RATELIMIT_MAX_KEY] = '\0';
	k2[SW_RATELIMIT_MAX_KEY] = '\0';
	k2[SW_RATELIMIT_MAX_KEY - 1] = 'c';
	CHECK(take(&rl, k1, 0, &retry));
	CHECK(take(&rl, k2, 0, &retry));
	CHECK(!take(&rl, k1, 0, &retry));
}

TEST(reset_gives_a_full_bucket_back)
{
	static const struct sw_ratelimit rl = { "t-reset", 3, 900 };
	unsigned retry;
	for (int i = 0; i < 3; i++)
		REQUIRE(take(&rl, "ada@example.com", 0, &retry));
	CHECK(!take(&rl, "ada@example.com", 0, &retry));
	sw_ratelimit_reset(&rl, SW_STR("ada@example.com"));
	for (int i = 0; i < 3; i++)
		CHECK(take(&rl, "ada@example.com", 0, &retry));
	CHECK(!take(&rl, "ada@example.com", 0, &retry));
	sw_ratelimit_reset(&rl, SW_STR("never-seen")); /* harmless */
}

TEST(table_is_bounded_and_evicts_the_least_recently_touched)
{
	static const struct sw_ratelimit rl = { "t-evict", 1, 3600 };
	char key[32];
	unsigned retry;
	for (int i = 0; i < SW_RATELIMIT_MAX_ENTRIES; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		REQUIRE(take(&rl, key, 0, &retry));
	}
	CHECK_INT_EQ(sw_ratelimit_count(), SW_RATELIMIT_MAX_ENTRIES);
	/* k0, the oldest, is touched again (refused), so k1 is now oldest. */
	CHECK(!take(&rl, "k0", 0, &retry));
	snprintf(key, sizeof(key), "k%d", SW_RATELIMIT_MAX_ENTRIES);
	CHECK(take(&rl, key, 0, &retry));
	CHECK_INT_EQ(sw_ratelimit_count(), SW_RATELIMIT_MAX_ENTRIES);
	CHECK(!take(&rl, key, 0, &retry));  /* the newest is kept */
	CHECK(!take(&rl, "k0", 0, &retry)); /* still there: it was touched */
	CHECK(take(&rl, "k1", 0, &retry));  /* evicted: a fresh bucket */
	CHECK(!take(&rl, "k1", 0, &retry));
	CHECK_INT_EQ(sw_ratelimit_count(), SW_RATELIMIT_MAX_ENTRIES);
}

struct hammer {
	const struct sw_ratelimit *rl;
	int id;
	int allowed_shared;
	int allowed_own;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	char own[16];
	snprintf(own, sizeof(own), "own-%d", h->id);
	for (int i = 0; i < 3000; i++) {
		/* A fixed clock: nothing refills, so exactly burst succeed. */
		if (sw_ratelimit_take(h->rl, SW_STR("shared"), 7000, NULL))
			h->allowed_shared++;
		if (sw_ratelimit_take(h->rl, sw_str_cstr(own), 7000, NULL))
			h->allowed_own++;
		if (i % 500 == 0)
			(void)sw_ratelimit_count();
	}
	return NULL;
}

TEST(four_threads_share_a_bucket_exactly)
{
	static const struct sw_ratelimit rl = { "t-threads", 1000, 3600 };
	struct hammer h[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		h[i] = (struct hammer){ .rl = &rl, .id = i };
		REQUIRE(pthread_create(&th[i], NULL, hammer_run, &h[i]) == 0);
	}
	int shared = 0;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		shared += h[i].allowed_shared;
		CHECK_INT_EQ(h[i].allowed_own, 1000);
	}
	CHECK_INT_EQ(shared, 1000);
}

TEST_MAIN()
