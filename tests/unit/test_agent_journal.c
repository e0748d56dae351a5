/* The agent's journal (src/agent/journal.c): a command is never run
 * twice, a reused id with another payload is refused, the log survives a
 * kill in the middle of a write and a torn tail, and it stays bounded. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "steward/agent/journal.h"
#include "steward/base/limits.h"
#include "scratch_dir.h"
#include "test_help.h"

TEST_MAIN()

static const char *subdir(const char *name)
{
	static char path[160];
	snprintf(path, sizeof(path), "%s/%s", scratch_dir("sw-journal"), name);
	mkdir(path, 0700);
	return path;
}

static void digest_of(const char *s, uint8_t d[32])
{
	memset(d, 0, 32);
	memcpy(d, s, SW_MIN(strlen(s), 32));
}

TEST(seen_again_returns_the_recorded_result)
{
	const char *dir = subdir("again");
	struct sw_agent_journal *j;
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	uint8_t d[32], other[32];
	digest_of("payload-a", d);
	digest_of("payload-b", other);
	const char *r;
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", d, &r), SW_AGENT_JOURNAL_NEW);
	REQUIRE(sw_agent_journal_begin(j, "c-1", d) == 0);
	CHECK_INT_EQ(sw_agent_journal_begin(j, "c-1", d), -EEXIST);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", d, &r), SW_AGENT_JOURNAL_RUNNING);
	REQUIRE(sw_agent_journal_finish(j, "c-1", "{\"ok\":true}") == 0);
	CHECK_INT_EQ(sw_agent_journal_finish(j, "c-1", "{}"), -EALREADY);
	CHECK_INT_EQ(sw_agent_journal_finish(j, "c-2", "{}"), -ENOENT);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK_STR_EQ(r, "{\"ok\":true}");
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", other, &r), SW_AGENT_JOURNAL_CONFLICT);
	sw_agent_journal_close(j);
	/* After a restart: the same answers. */
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK_STR_EQ(r, "{\"ok\":true}");
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-1", other, &r), SW_AGENT_JOURNAL_CONFLICT);
	sw_agent_journal_close(j);
}

TEST(a_command_cut_off_by_a_crash_is_finished_not_rerun)
{
	const char *dir = subdir("cut");
	struct sw_agent_journal *j;
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	uint8_t d[32];
	digest_of("x", d);
	REQUIRE(sw_agent_journal_begin(j, "build-7", d) == 0);
	sw_agent_journal_close(j); /* as if the process died while building */
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	const char *r;
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "build-7", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK(r && strstr(r, "AGENT_RESTARTED"));
	sw_agent_journal_close(j);
}

/* The log's path in dir, and its size. */
static off_t log_size(const char *dir, char *path, size_t n)
{
	snprintf(path, n, "%s/journal.log", dir);
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

TEST(every_torn_tail_keeps_the_whole_records_before_it)
{
	const char *dir = subdir("torn");
	struct sw_agent_journal *j;
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	uint8_t d[32];
	digest_of("p", d);
	REQUIRE(sw_agent_journal_begin(j, "a", d) == 0);
	REQUIRE(sw_agent_journal_finish(j, "a", "{\"n\":1}") == 0);
	size_t after_a = sw_agent_journal_bytes(j);
	REQUIRE(sw_agent_journal_begin(j, "b", d) == 0);
	REQUIRE(sw_agent_journal_finish(j, "b", "{\"n\":2}") == 0);
	sw_agent_journal_close(j);
	char path[200];
	off_t full = log_size(dir, path, sizeof(path));
	REQUIRE(full > 0);
	size_t len;
	char *orig = scratch_read(path, &len);
	REQUIRE(orig && (off_t)len == full);
	for (size_t cut = after_a; cut < len; cut++) {
		FILE *f = fopen(path, "wb");
		REQUIRE(f);
		fwrite(orig, 1, cut, f);
		fclose(f);
		REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
		const char *r;
		CHECK_INT_EQ(sw_agent_journal_lookup(j, "a", d, &r), SW_AGENT_JOURNAL_DONE);
		CHECK_STR_EQ(r, "{\"n\":1}");
		/* b is either unknown or finished (its result whole, or the
		 * restart failure when only its begin survived). */
		enum sw_agent_journal_seen sb = sw_agent_journal_lookup(j, "b", d, &r);
		CHECK(sb == SW_AGENT_JOURNAL_NEW || sb == SW_AGENT_JOURNAL_DONE);
		if (sb == SW_AGENT_JOURNAL_DONE)
			CHECK(strcmp(r, "{\"n\":2}") == 0 || strstr(r, "AGENT_RESTARTED"));
		sw_agent_journal_close(j);
	}
	/* A flipped byte in the last record: it is dropped, the first stays. */
	orig[len - 3] ^= 0x20;
	FILE *f = fopen(path, "wb");
	REQUIRE(f);
	fwrite(orig, 1, len, f);
	fclose(f);
	REQUIRE(sw_agent_journal_open(dir, 16, 1 << 20, &j) == 0);
	const char *r;
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "a", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "b", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK(r && strstr(r, "AGENT_RESTARTED"));
	sw_agent_journal_close(j);
	free(orig);
}

/* A child writing commands as fast as it can, killed at a random moment. */
static void writer(const char *dir)
{
	struct sw_agent_journal *j;
	if (sw_agent_journal_open(dir, 4096, 64 << 20, &j) != 0)
		_exit(2);
	for (int i = 0;; i++) {
		char id[32], res[64];
		uint8_t d[32];
		snprintf(id, sizeof(id), "c-%d", i);
		snprintf(res, sizeof(res), "{\"i\":%d,\"pad\":\"%040d\"}", i, i);
		digest_of(id, d);
		if (sw_agent_journal_begin(j, id, d) != 0 || sw_agent_journal_finish(j, id, res) != 0)
			_exit(3);
	}
}

TEST(kill_in_the_middle_of_writes_loses_nothing_finished)
{
	srand((unsigned)time(NULL));
	for (int round = 0; round < 5; round++) {
		char name[16];
		snprintf(name, sizeof(name), "kill%d", round);
		const char *dir = subdir(name);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0)
			writer(dir);
		struct timespec ts = { 0, (20 + rand() % 200) * 1000000L };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		CHECK(WIFSIGNALED(st));
		struct sw_agent_journal *j;
		REQUIRE(sw_agent_journal_open(dir, 4096, 64 << 20, &j) == 0);
		size_t n = sw_agent_journal_count(j);
		CHECK(n > 0);
		/* Commands 0..n-1 are all there; each has its own result, but
		 * the last, which may have been cut off while running. */
		for (size_t i = 0; i < n; i++) {
			char id[32], want[64];
			uint8_t d[32];
			const char *r;
			snprintf(id, sizeof(id), "c-%zu", i);
			snprintf(want, sizeof(want), "{\"i\":%zu,\"pad\":\"%040zu\"}", i, i);
			digest_of(id, d);
			REQUIRE(sw_agent_journal_lookup(j, id, d, &r) == SW_AGENT_JOURNAL_DONE);
			if (i + 1 < n)
				CHECK_STR_EQ(r, want);
			else
				CHECK(strcmp(r, want) == 0 || strstr(r, "AGENT_RESTARTED"));
		}
		char id[32];
		uint8_t d[32];
		const char *r;
		snprintf(id, sizeof(id), "c-%zu", n);
		digest_of(id, d);
		CHECK_INT_EQ(sw_agent_journal_lookup(j, id, d, &r), SW_AGENT_JOURNAL_NEW);
		sw_agent_journal_close(j);
	}
}

TEST(bounded_in_entries_and_bytes)
{
	const char *dir = subdir("bound");
	struct sw_agent_journal *j;
	REQUIRE(sw_agent_journal_open(dir, 8, 4096, &j) == 0);
	char big[300];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 100; i++) {
		char id[16];
		uint8_t d[32];
		snprintf(id, sizeof(id), "c-%d", i);
		digest_of(id, d);
		REQUIRE(sw_agent_journal_begin(j, id, d) == 0);
		REQUIRE(sw_agent_journal_finish(j, id, big) == 0);
		CHECK(sw_agent_journal_count(j) <= 8);
		CHECK(sw_agent_journal_bytes(j) <= 4096);
	}
	char path[200];
	off_t size = log_size(dir, path, sizeof(path));
	CHECK(size > 0 && size <= 4096);
	/* The newest command is kept, the oldest forgotten. */
	uint8_t d[32];
	const char *r;
	digest_of("c-99", d);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-99", d, &r), SW_AGENT_JOURNAL_DONE);
	digest_of("c-0", d);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-0", d, &r), SW_AGENT_JOURNAL_NEW);
	sw_agent_journal_close(j);
	/* Reopened after rewrites: the same newest command. */
	REQUIRE(sw_agent_journal_open(dir, 8, 4096, &j) == 0);
	digest_of("c-99", d);
	CHECK_INT_EQ(sw_agent_journal_lookup(j, "c-99", d, &r), SW_AGENT_JOURNAL_DONE);
	CHECK_STR_EQ(r, big);
	sw_agent_journal_close(j);
}

TEST(results_over_the_cap_are_refused)
{
	const char *dir = subdir("cap");
	struct sw_agent_journal *j;
	REQUIRE(sw_agent_journal_open(dir, 8, 1 << 20, &j) == 0);
	uint8_t d[32] = { 0 };
	REQUIRE(sw_agent_journal_begin(j, "c", d) == 0);
	char *r = malloc(SW_AGENT_MAX_RESULT + 2);
	REQUIRE(r);
	memset(r, 'a', SW_AGENT_MAX_RESULT + 1);
	r[SW_AGENT_MAX_RESULT + 1] = '\0';
	CHECK_INT_EQ(sw_agent_journal_finish(j, "c", r), -E2BIG);
	free(r);
	char longid[300];
	memset(longid, 'i', 299);
	longid[299] = '\0';
	CHECK_INT_EQ(sw_agent_journal_begin(j, longid, d), -EINVAL);
	sw_agent_journal_close(j);
}
