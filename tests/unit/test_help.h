/* A small unit-test harness in the manner of Valkey's test_help.h:
 * TEST(name) defines a case, CHECK() records a failure and goes on,
 * REQUIRE() stops the case, TEST_MAIN() runs them all and prints
 * "N passed, N failed". Exit status 0 only when nothing failed. */
#ifndef STEWARD_TEST_HELP_H
#define STEWARD_TEST_HELP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sw_test_case {
	const char *name;
	void (*fn)(int *failed);
};

#define SW_TEST_MAX 512
extern struct sw_test_case sw_tests[SW_TEST_MAX];
extern int sw_test_count;

#define TEST(name)                                                        \
	static void test_##name(int *sw_failed_);                        \
	__attribute__((constructor)) static void register_##name(void)   \
	{                                                                 \
		sw_tests[sw_test_count++] = (struct sw_test_case){ #name, test_##name }; \
	}                                                                 \
	static void test_##name(int *sw_failed_)

#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			*sw_failed_ = 1;                                  \
		}                                                         \
	} while (0)

#define REQUIRE(cond)                                                     \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "  %s:%d: REQUIRE(%s) failed\n", __FILE__, __LINE__, #cond); \
			*sw_failed_ = 1;                                  \
			return;                                           \
		}                                                         \
	} while (0)

#define CHECK_INT_EQ(a, b)                                                \
	do {                                                              \
		long long sw_a_ = (long long)(a), sw_b_ = (long long)(b); \
		if (sw_a_ != sw_b_) {                                     \
			fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, sw_a_, sw_b_); \
			*sw_failed_ = 1;                                  \
		}                                                         \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                \
	do {                                                              \
		const char *sw_a_ = (a), *sw_b_ = (b);                    \
		if (!sw_a_ || !sw_b_ || strcmp(sw_a_, sw_b_) != 0) {      \
			fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, sw_a_ ? sw_a_ : "(null)", sw_b_ ? sw_b_ : "(null)"); \
			*sw_failed_ = 1;                                  \
		}                                                         \
	} while (0)

#define TEST_MAIN()                                                       \
	struct sw_test_case sw_tests[SW_TEST_MAX];                        \
	int sw_test_count;                                                \
	int main(void)                                                    \
	{                                                                 \
		int passed = 0, failed = 0;                               \
		for (int i = 0; i < sw_test_count; i++) {                 \
			int f = 0;                                        \
			sw_tests[i].fn(&f);                               \
			printf("%s %s\n", f ? "FAIL" : "ok  ", sw_tests[i].name); \
			if (f)                                            \
				failed++;                                 \
			else                                              \
				passed++;                                 \
		}                                                         \
		printf("%d passed, %d failed\n", passed, failed);         \
		return failed ? 1 : 0;                                    \
	}

#endif
