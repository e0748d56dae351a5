/* The deployment log writer (src/deploy/build_log.c): secrets scrubbed before a
 * line goes anywhere (overlapping values, values inside values, values
 * with line breaks), the file capped at max_bytes with one cut notice and
 * nothing after it, the 4 KB tail starting at a line, the byte count,
 * lines split and cleaned (UTF-8, CRLF, long lines), a log continued by a
 * second writer, and the byte count and tail read from another thread
 * while the writer writes. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/limits.h"
#include "steward/deploy/deploy.h"
#include "scratch_dir.h"
#include "test_help.h"

static const char *dir;

static void make_dir(void)
{
	dir = scratch_dir("sw-log");
}

/* A fresh deployment id per test. */
static const char *new_id(void)
{
	static char id[37];
	static unsigned n;
	snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012u", ++n);
	return id;
}

/* The whole file of deployment id, NUL-terminated (caller frees). */
static char *read_log(const char *id, size_t *ret_len)
{
	char path[256];
	sw_deploy_log_path(dir, id, path, sizeof(path));
	return scratch_read(path, ret_len);
}

static struct sw_deploy_log *open_log(const char *id, uint64_t max, const char *const *secrets, size_t n)
{
	make_dir();
	struct sw_deploy_log *l = sw_deploy_log_open(dir, id, max, secrets, n);
	if (!l)
		fprintf(stderr, "  sw_deploy_log_open: %s\n", strerror(errno));
	return l;
}

/* A new deployment's log with room and no secrets; *ret_id its id. */
static struct sw_deploy_log *fresh_log(const char **ret_id)
{
	*ret_id = new_id();
	return open_log(*ret_id, 1 << 20, NULL, 0);
}

static int line(struct sw_deploy_log *l, const char *s)
{
	return sw_deploy_log_line(l, s, strlen(s));
}

TEST(each_secret_value_is_replaced_before_the_line_is_written)
{
	const char *secrets[] = { "hunter2-password", "", "tok_ABC" };
	const char *id = new_id();
	struct sw_deploy_log *l = open_log(id, 1 << 20, secrets, 3);
	REQUIRE(l);
	CHECK_INT_EQ(line(l, "connecting with hunter2-password to db"), 0);
	CHECK_INT_EQ(line(l, "tok_ABCtok_ABC and tok_ABC."), 0);
	CHECK_INT_EQ(line(l, "nothing secret here"), 0);
	sw_deploy_log_close(l, NULL);
	char *s = read_log(id, NULL);
	REQUIRE(s);
	CHECK_STR_EQ(s, "connecting with *** to db\n*** and ***.\nnothing secret here\n");
	free(s);
}

TEST(overlapping_and_nested_values_leave_nothing_of_either)
{
	/* "abcd" and "bcde" overlap in "abcde"; "pass" is inside "password1". */
	const char *secrets[] = { "abcd", "bcde", "pass", "password1" };
	const char *id = new_id();
	struct sw_deploy_log *l = open_log(id, 1 << 20, secrets, 4);
	REQUIRE(l);
	line(l, "x abcde y");
	line(l, "password1 pass passport");
	line(l, "aaabcdbcdee");
	sw_deploy_log_close(l, NULL);
	char *s = read_log(id, NULL);
	REQUIRE(s);
	CHECK_STR_EQ(s, "x *** y\n*** *** ***port\naa***e\n");
	CHECK(!strstr(s, "bcd") && !strstr(s, "abc") && !strstr(s, "e y"));
	free(s);
}

TEST(a_value_shorter_than_the_scrub_minimum_is_not_masked)
{
	/* A one-character value would hide every "1" in the log. */
	const char *secrets[] = { "1", "dev", "s3cr" };
	const char *id = new_id();
	struct sw_deploy_log *l = open_log(id, 1 << 20, secrets, 3);
	REQUIRE(l);
	line(l, "step 1/10: dev build with s3cr");
	sw_deploy_log_close(l, NULL);
	char *s = read_log(id, NULL);
	REQUIRE(s);
	CHECK_INT_EQ(SW_VARIABLE_SCRUB_MIN_LEN, 4);
	CHECK_STR_EQ(s, "step 1/10: dev build with ***\n");
	free(s);
}

TEST(a_value_with_line_breaks_is_scrubbed_whole_and_line_by_line)
{
	const char *secrets[] = { "-----KEY-----\nAAAAsecretBBBB\n-----END-----" };
	const char *id = new_id();
	struct sw_deploy_log *l = open_log(id, 1 << 20, secrets, 1);
	REQUIRE(l);
	/* Printed whole in one call, and one line per call. */
	line(l, "key: -----KEY-----\nAAAAsecretBBBB\n-----END----- done");
	line(l, "AAAAsecretBBBB");
	sw_deploy_log_close(l, NULL);
	char *s = read_log(id, NULL);
	REQUIRE(s);
	CHECK(!strstr(s, "secret"));
	CHECK_STR_EQ(s, "key: *** done\n***\n");
	free(s);
}

TEST(lines_are_split_at_newlines_crlf_ends_a_line_and_bad_utf8_is_replaced)
{
	const char *id;
	struct sw_deploy_log *l = fresh_log(&id);
	REQUIRE(l);
	line(l, "one\r\ntwo\nthree\n");
	line(l, "");
	line(l, "caf\xc3\xa9 \xff nul:");
	sw_deploy_log_line(l, "a\0b", 3);
	line(l, "progress 10%\rprogress 20%");
	sw_deploy_log_close(l, NULL);
	size_t n;
	char *s = read_log(id, &n);
	REQUIRE(s);
	const char want[] = "one\ntwo\nthree\n\ncaf\xc3\xa9 \xef\xbf\xbd nul:\na\xef\xbf\xbd"
			    "b\nprogress 10%\rprogress 20%\n";
	CHECK_INT_EQ(n, sizeof(want) - 1);
	CHECK(memcmp(s, want, sizeof(want) - 1) == 0);
	free(s);
}

TEST(a_line_longer_than_the_limit_is_split_at_a_character_boundary)
{
	const char *id;
	struct sw_deploy_log *l = fresh_log(&id);
	REQUIRE(l);
	/* 'x' then two-byte characters: the limit falls inside one. */
	size_t n = 1 + 2 * SW_DEPLOY_LOG_MAX_LINE;
	char *big = malloc(n);
	big[0] = 'x';
	for (size_t i = 1; i < n; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	CHECK_INT_EQ(sw_deploy_log_line(l, big, n), 0);
	sw_deploy_log_close(l, NULL);
	size_t got;
	char *s = read_log(id, &got);
	REQUIRE(s);
	CHECK_INT_EQ(got, n + 3); /* three pieces, three "\n" */
	char *nl = strchr(s, '\n');
	REQUIRE(nl);
	CHECK((size_t)(nl - s) <= SW_DEPLOY_LOG_MAX_LINE);
	CHECK_INT_EQ((size_t)(nl - s), SW_DEPLOY_LOG_MAX_LINE - 1); /* backed off the split character */
	CHECK(((unsigned char)nl[1] & 0xC0) != 0x80);
	free(s);
	free(big);
}

TEST(the_cap_writes_one_cut_line_and_nothing_after_it)
{
	const char *id = new_id();
	const uint64_t max = 300;
	struct sw_deploy_log *l = open_log(id, max, NULL, 0);
	REQUIRE(l);
	int r = 0, written = 0;
	while ((r = line(l, "0123456789012345678901234567890123456789")) == 0)
		written++;
	CHECK_INT_EQ(r, -EFBIG);
	CHECK(written > 0);
	CHECK_INT_EQ(line(l, "more"), -EFBIG);
	CHECK_INT_EQ(sw_deploy_log_printf(l, "and %d more", 3), -EFBIG);
	uint64_t bytes = sw_deploy_log_bytes(l);
	sw_deploy_log_close(l, NULL);
	size_t n;
	char *s = read_log(id, &n);
	REQUIRE(s);
	CHECK(n <= max);
	CHECK_INT_EQ(n, bytes);
	CHECK_INT_EQ(n, (size_t)written * 41 + 40);
	const char cut[] = "[log cut: DEPLOY_LOG_MAX_BYTES reached]\n";
	CHECK(n >= sizeof(cut) - 1 && strcmp(s + n - (sizeof(cut) - 1), cut) == 0);
	CHECK(strstr(s, "more") == NULL);
	free(s);

	/* A second writer of a cut log writes nothing either. */
	l = open_log(id, max, NULL, 0);
	REQUIRE(l);
	CHECK_INT_EQ(line(l, "after"), -EFBIG);
	CHECK_INT_EQ(sw_deploy_log_bytes(l), n);
	sw_deploy_log_close(l, NULL);
}

TEST(the_tail_is_the_last_4k_starting_at_a_line)
{
	const char *id;
	struct sw_deploy_log *l = fresh_log(&id);
	REQUIRE(l);
	char *tail = malloc(SW_DEPLOY_LOG_TAIL + 1);
	line(l, "first");
	sw_deploy_log_tail(l, tail);
	CHECK_STR_EQ(tail, "first\n");
	for (int i = 0; i < 400; i++)
		sw_deploy_log_printf(l, "line %03d of the build output", i);
	sw_deploy_log_tail(l, tail);
	size_t n = strlen(tail);
	CHECK(n <= SW_DEPLOY_LOG_TAIL && n > SW_DEPLOY_LOG_TAIL - 64);
	CHECK(strncmp(tail, "line ", 5) == 0);
	CHECK(strcmp(tail + n - 29, "line 399 of the build output\n") == 0);
	size_t len;
	char *s = read_log(id, &len);
	REQUIRE(s);
	CHECK_INT_EQ(len, sw_deploy_log_bytes(l));
	CHECK(strcmp(s + len - n, tail) == 0); /* the file's end */
	CHECK(s[len - n - 1] == '\n');          /* at a line's start */
	free(s);

	/* A line as long as the tail: its end, from a whole character. */
	char big[SW_DEPLOY_LOG_MAX_LINE];
	for (size_t i = 0; i < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	sw_deploy_log_line(l, big, sizeof(big));
	sw_deploy_log_tail(l, tail);
	n = strlen(tail);
	CHECK_INT_EQ(n, SW_DEPLOY_LOG_TAIL - 1);
	CHECK(memcmp(tail, "\xc3\xa9", 2) == 0);
	CHECK(tail[n - 1] == '\n');
	sw_deploy_log_close(l, NULL);
	free(tail);
}

TEST(a_second_writer_continues_the_log_with_its_count_and_tail)
{
	const char *id;
	struct sw_deploy_log *l = fresh_log(&id);
	REQUIRE(l);
	line(l, "build: step 1");
	uint64_t b1 = sw_deploy_log_bytes(l);
	CHECK_INT_EQ(b1, 14);
	/* One writer per deployment in a process. */
	CHECK(sw_deploy_log_open(dir, id, 1 << 20, NULL, 0) == NULL && errno == EBUSY);
	sw_deploy_log_close(l, NULL);
	l = open_log(id, 1 << 20, NULL, 0);
	REQUIRE(l);
	CHECK_INT_EQ(sw_deploy_log_bytes(l), b1);
	char tail[SW_DEPLOY_LOG_TAIL + 1];
	sw_deploy_log_tail(l, tail);
	CHECK_STR_EQ(tail, "build: step 1\n");
	line(l, "deploy: step 2");
	sw_deploy_log_tail(l, tail);
	CHECK_STR_EQ(tail, "build: step 1\ndeploy: step 2\n");
	sw_deploy_log_close(l, "SUCCEEDED");
	char *s = read_log(id, NULL);
	CHECK_STR_EQ(s, "build: step 1\ndeploy: step 2\n");
	free(s);
}

TEST(ids_that_are_not_uuids_are_refused)
{
	make_dir();
	errno = 0;
	CHECK(sw_deploy_log_open(dir, "../../etc/passwd", 1000, NULL, 0) == NULL);
	CHECK_INT_EQ(errno, EINVAL);
	char path[32];
	CHECK_INT_EQ(sw_deploy_log_path("/a-very-long-directory", "x", path, sizeof(path)), -ENAMETOOLONG);
}

struct reader_arg {
	struct sw_deploy_log *l;
	bool stop; /* atomic */
	int bad;
	unsigned reads;
};

static void *tail_reader(void *p)
{
	struct reader_arg *a = p;
	char tail[SW_DEPLOY_LOG_TAIL + 1];
	uint64_t last = 0;
	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		uint64_t b = sw_deploy_log_bytes(a->l);
		sw_deploy_log_tail(a->l, tail);
		size_t n = strlen(tail);
		/* Always whole lines of the one line the writer writes. */
		if (b < last || (n && (tail[n - 1] != '\n' || strncmp(tail, "the same line", 13) != 0)))
			a->bad++;
		last = b;
		a->reads++;
	}
	return NULL;
}

TEST(count_and_tail_are_consistent_while_another_thread_writes)
{
	const char *id = new_id();
	struct sw_deploy_log *l = open_log(id, 1 << 22, NULL, 0);
	REQUIRE(l);
	struct reader_arg a = { .l = l };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, tail_reader, &a) == 0);
	for (int i = 0; i < 20000; i++)
		line(l, "the same line");
	__atomic_store_n(&a.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_INT_EQ(a.bad, 0);
	CHECK(a.reads > 0);
	CHECK_INT_EQ(sw_deploy_log_bytes(l), 20000 * 14);
	sw_deploy_log_close(l, NULL);
}

TEST_MAIN()
