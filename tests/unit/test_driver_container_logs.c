/* A container's logs as lines (src/driver/container_logs.c): the engine's
 * frames taken apart in pieces of any size, each stream's lines whole,
 * the engine's timestamp read off, "\r\n", a line past the cap in pieces,
 * the open line at the end, and the callback's error stopping the read. */
#include <errno.h>
#include <stdlib.h>
#include "driver/driver_internal.h"
#include "steward/base/timeparse.h"
#include "test_help.h"

struct got {
	int stream[32];
	int64_t time_us[32];
	char text[32][64];
	size_t len[32];
	size_t n;
	int fail_at; /* 1-based: the call that answers -EIO; 0 none */
};

static int collect(void *arg, const struct sw_container_log_line *l)
{
	struct got *g = arg;
	if (g->fail_at && (int)g->n + 1 == g->fail_at)
		return -EIO;
	if (g->n < 32) {
		g->stream[g->n] = l->stream;
		g->time_us[g->n] = l->time_us;
		g->len[g->n] = l->len;
		snprintf(g->text[g->n], 64, "%.*s", (int)SW_MIN(l->len, (size_t)63), l->text);
		g->n++;
	}
	return 0;
}

/* One frame of stream s with payload p into out; its length. */
static size_t frame(char *out, int s, const char *p, size_t n)
{
	out[0] = (char)s;
	out[1] = out[2] = out[3] = 0;
	out[4] = (char)(n >> 24);
	out[5] = (char)(n >> 16);
	out[6] = (char)(n >> 8);
	out[7] = (char)n;
	memcpy(out + 8, p, n);
	return n + 8;
}

static int feed_in_pieces(struct sw_driver_log_lines *r, const char *p, size_t n, size_t piece)
{
	for (size_t i = 0; i < n; i += piece) {
		int rc = sw_driver_log_lines_feed(r, p + i, SW_MIN(piece, n - i));
		if (rc < 0)
			return rc;
	}
	return sw_driver_log_lines_end(r);
}

#define T1 "2026-11-26T16:00:00.123456789Z "
#define T2 "2026-11-26T16:00:01Z "

TEST(lines_of_both_streams_whole_whatever_the_pieces)
{
	char buf[1024];
	size_t n = 0;
	n += frame(buf + n, 1, T1 "first li", strlen(T1 "first li"));
	n += frame(buf + n, 2, T2 "on stderr\r\n", strlen(T2 "on stderr\r\n"));
	n += frame(buf + n, 1, "ne\n" T2 "second\n" T2 "open", strlen("ne\n" T2 "second\n" T2 "open"));
	for (size_t piece = 1; piece <= n; piece++) {
		struct got g = { 0 };
		struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, &g);
		REQUIRE(r);
		CHECK_INT_EQ(feed_in_pieces(r, buf, n, piece), 0);
		sw_driver_log_lines_free(r);
		REQUIRE(g.n == 4);
		CHECK_STR_EQ(g.text[0], "on stderr");
		CHECK_INT_EQ(g.stream[0], 2);
		CHECK_STR_EQ(g.text[1], "first line");
		CHECK_INT_EQ(g.stream[1], 1);
		CHECK_INT_EQ(g.time_us[1], 1795708800123456LL);
		CHECK_STR_EQ(g.text[2], "second");
		CHECK_INT_EQ(g.time_us[2], 1795708801000000LL);
		CHECK_STR_EQ(g.text[3], "open");
	}
}

TEST(a_line_without_a_timestamp_keeps_its_text_and_time_zero)
{
	char buf[256];
	size_t n = frame(buf, 1, "no time here\n", 13);
	struct got g = { 0 };
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, &g);
	REQUIRE(r);
	CHECK_INT_EQ(feed_in_pieces(r, buf, n, 5), 0);
	sw_driver_log_lines_free(r);
	REQUIRE(g.n == 1);
	CHECK_STR_EQ(g.text[0], "no time here");
	CHECK_INT_EQ(g.time_us[0], 0);
}

TEST(a_line_past_the_cap_comes_in_pieces)
{
	size_t big = SW_DRIVER_CONTAINER_LOG_LINE_MAX * 2 + 100;
	char *payload = malloc(strlen(T2) + big + 1);
	char *buf = malloc(strlen(T2) + big + 1 + 8);
	REQUIRE(payload && buf);
	memcpy(payload, T2, strlen(T2));
	memset(payload + strlen(T2), 'x', big);
	payload[strlen(T2) + big] = '\n';
	size_t n = frame(buf, 1, payload, strlen(T2) + big + 1);
	struct got g = { 0 };
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, &g);
	REQUIRE(r);
	CHECK_INT_EQ(feed_in_pieces(r, buf, n, 4096), 0);
	sw_driver_log_lines_free(r);
	REQUIRE(g.n == 3);
	size_t total = 0;
	for (size_t i = 0; i < g.n; i++) {
		CHECK(g.len[i] <= SW_DRIVER_CONTAINER_LOG_LINE_MAX + SW_RFC3339_MAX_LEN + 1);
		total += g.len[i];
	}
	CHECK_INT_EQ(total, big);
	CHECK_INT_EQ(g.time_us[0], 1795708801000000LL);
	free(payload);
	free(buf);
}

TEST(the_callbacks_error_stops_the_read)
{
	char buf[256];
	size_t n = frame(buf, 1, "a\nb\nc\n", 6);
	struct got g = { .fail_at = 2 };
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, &g);
	REQUIRE(r);
	CHECK_INT_EQ(sw_driver_log_lines_feed(r, buf, n), -EIO);
	sw_driver_log_lines_free(r);
	CHECK_INT_EQ(g.n, 1);
}

TEST(stdin_frames_are_dropped)
{
	char buf[256];
	size_t n = frame(buf, 0, "in\n", 3);
	n += frame(buf + n, 1, "out\n", 4);
	struct got g = { 0 };
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, &g);
	REQUIRE(r);
	CHECK_INT_EQ(feed_in_pieces(r, buf, n, 3), 0);
	sw_driver_log_lines_free(r);
	REQUIRE(g.n == 1);
	CHECK_STR_EQ(g.text[0], "out");
}

TEST_MAIN()
