/* The reader of the engine's build progress stream (src/driver/progress.c):
 * messages and lines cut anywhere, errors, colour sequences, caps. */
#include <stdlib.h>
#include "driver/driver_internal.h"
#include "test_help.h"

struct lines {
	char text[64][256];
	size_t n;
};

static void collect(void *arg, const char *line, size_t len)
{
	struct lines *l = arg;
	if (l->n < 64)
		snprintf(l->text[l->n++], 256, "%.*s", (int)SW_MIN(len, 255), line);
}

/* A real answer of dockerd 20.10 to a failing build. */
static const char failing[] =
	"{\"stream\":\"Step 1/2 : FROM steward-test/base:latest\"}\r\n"
	"{\"stream\":\"\\n\"}\r\n"
	"{\"stream\":\" ---\\u003e edbdcc6082f2\\n\"}\r\n"
	"{\"stream\":\"Step 2/2 : RUN false\"}\r\n"
	"{\"stream\":\"\\n\"}\r\n"
	"{\"stream\":\" ---\\u003e Running in 2fd171a5119f\\n\"}\r\n"
	"{\"stream\":\"\\u001b[91mwget: can't connect\\n\\u001b[0m\"}\r\n"
	"{\"stream\":\"Removing intermediate container 2fd171a5119f\\n\"}\r\n"
	"{\"errorDetail\":{\"code\":1,\"message\":\"The command '/bin/sh -c false' returned a non-zero code: 1\"},"
	"\"error\":\"The command '/bin/sh -c false' returned a non-zero code: 1\"}\r\n";

static void run_in_pieces(const char *data, size_t n, size_t piece, struct lines *out,
			  struct sw_driver_progress *p)
{
	sw_driver_progress_init(p, collect, out);
	for (size_t i = 0; i < n; i += piece)
		sw_driver_progress_feed(p, data + i, SW_MIN(piece, n - i));
	sw_driver_progress_finish(p);
}

TEST(failing_build_gives_lines_and_the_engine_sentence)
{
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(failing, sizeof(failing) - 1, sizeof(failing), &l, &p);
	REQUIRE(l.n == 6);
	CHECK_STR_EQ(l.text[0], "Step 1/2 : FROM steward-test/base:latest");
	CHECK_STR_EQ(l.text[1], " ---> edbdcc6082f2");
	CHECK_STR_EQ(l.text[2], "Step 2/2 : RUN false");
	CHECK_STR_EQ(l.text[4], "wget: can't connect"); /* its colour sequences dropped */
	CHECK_STR_EQ(l.text[5], "Removing intermediate container 2fd171a5119f");
	CHECK(p.failed);
	CHECK_STR_EQ(p.error, "The command '/bin/sh -c false' returned a non-zero code: 1");
	sw_driver_progress_release(&p);
}

TEST(answer_cut_at_every_size_gives_the_same_lines)
{
	struct lines whole = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(failing, sizeof(failing) - 1, sizeof(failing), &whole, &p);
	sw_driver_progress_release(&p);
	for (size_t piece = 1; piece < 64; piece++) {
		struct lines l = { 0 };
		run_in_pieces(failing, sizeof(failing) - 1, piece, &l, &p);
		CHECK_INT_EQ(l.n, whole.n);
		for (size_t i = 0; i < l.n && i < whole.n; i++)
			CHECK_STR_EQ(l.text[i], whole.text[i]);
		CHECK(p.failed);
		sw_driver_progress_release(&p);
	}
}

TEST(success_keeps_the_image_id_and_no_error)
{
	static const char ok[] = "{\"stream\":\"Step 1/1 : FROM x\\n\"}\n"
				 "{\"aux\":{\"ID\":\"sha256:3e2e2fd1dffb\"}}\n"
				 "{\"stream\":\"Successfully built 3e2e2fd1dffb\\n\"}\n"
				 "{\"stream\":\"Successfully tagged steward/a:1\\n\"}";
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(ok, sizeof(ok) - 1, 7, &l, &p);
	CHECK(!p.failed);
	CHECK_STR_EQ(p.image_id, "sha256:3e2e2fd1dffb");
	REQUIRE(l.n == 3);
	CHECK_STR_EQ(l.text[2], "Successfully tagged steward/a:1");
	sw_driver_progress_release(&p);
}

TEST(carriage_returns_end_lines_and_control_bytes_are_dropped)
{
	static const char m[] = "{\"stream\":\"a\\r\\nb\\rc\\u0007d\\te\\u001b[1;32mf\\u001b(Bg"
				"\\u001b]0;title\\u0007h\\u001b]8;;x\\u001b\\\\i\\n\"}\n";
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(m, sizeof(m) - 1, sizeof(m), &l, &p);
	REQUIRE(l.n == 3);
	CHECK_STR_EQ(l.text[0], "a");
	CHECK_STR_EQ(l.text[1], "b");
	CHECK_STR_EQ(l.text[2], "cd\tefghi");
	sw_driver_progress_release(&p);
}

TEST(pull_progress_bars_are_left_out_but_statuses_kept)
{
	static const char m[] =
		"{\"status\":\"Pulling from library/x\",\"id\":\"latest\"}\n"
		"{\"status\":\"Downloading\",\"progressDetail\":{\"current\":10,\"total\":100},\"id\":\"ab\"}\n"
		"{\"status\":\"Pull complete\",\"progressDetail\":{},\"id\":\"ab\"}\n";
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(m, sizeof(m) - 1, 5, &l, &p);
	REQUIRE(l.n == 2);
	CHECK_STR_EQ(l.text[0], "latest: Pulling from library/x");
	CHECK_STR_EQ(l.text[1], "ab: Pull complete");
	sw_driver_progress_release(&p);
}

static size_t total_len;
static size_t count_lines;
static void measure(void *arg, const char *line, size_t len)
{
	total_len += len;
	count_lines++;
	int *failed = arg;
	/* Every character is 3 bytes: a cut inside one leaves a remainder. */
	if (len > SW_DRIVER_LOG_LINE_MAX || len % 3 != 0) {
		fprintf(stderr, "  a line of %zu bytes: past the cap or cut inside a character\n", len);
		*failed = 1;
	}
}

TEST(long_output_line_is_split_at_the_cap_on_a_character_boundary)
{
	/* 3-byte characters (U+20AC) so a cut at the cap would fall inside one. */
	size_t chars = SW_DRIVER_LOG_LINE_MAX; /* 3x the cap in bytes */
	struct sw_buf m = { 0 };
	sw_buf_append_lit(&m, "{\"stream\":\"");
	for (size_t i = 0; i < chars; i++)
		sw_buf_append_lit(&m, "\xe2\x82\xac");
	sw_buf_append_lit(&m, "\\n\"}\n");
	struct sw_driver_progress p;
	total_len = count_lines = 0;
	sw_driver_progress_init(&p, measure, sw_failed_);
	sw_driver_progress_feed(&p, m.data, m.len);
	sw_driver_progress_finish(&p);
	CHECK_INT_EQ(total_len, chars * 3);
	CHECK(count_lines >= 3 && count_lines <= 4);
	sw_driver_progress_release(&p);
	sw_buf_release(&m);
}

TEST(message_over_the_cap_is_dropped_with_a_note_and_the_next_one_read)
{
	struct sw_buf m = { 0 };
	sw_buf_append_lit(&m, "{\"stream\":\"");
	for (size_t i = 0; i < SW_DRIVER_PROGRESS_MSG_MAX / 64 + 1; i++)
		sw_buf_append_lit(&m, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	sw_buf_append_lit(&m, "\\n\"}\n{\"stream\":\"after\\n\"}\n");
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(m.data, m.len, 4096, &l, &p);
	REQUIRE(l.n == 2);
	CHECK(strstr(l.text[0], "left out") != NULL);
	CHECK_STR_EQ(l.text[1], "after");
	CHECK(p.message.cap <= SW_DRIVER_PROGRESS_MSG_MAX + 4096 * 2);
	sw_driver_progress_release(&p);
	sw_buf_release(&m);
}

TEST(last_line_without_newline_is_logged_at_the_end)
{
	static const char m[] = "{\"stream\":\"no newline\"}";
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(m, sizeof(m) - 1, 3, &l, &p);
	REQUIRE(l.n == 1);
	CHECK_STR_EQ(l.text[0], "no newline");
	sw_driver_progress_release(&p);
}

TEST(error_without_detail_and_garbage_lines)
{
	static const char m[] = "not json\n[1,2]\n{\"error\":\"boom\\nsecond line\"}\n{\"error\":\"later\"}\n";
	struct lines l = { 0 };
	struct sw_driver_progress p;
	run_in_pieces(m, sizeof(m) - 1, 2, &l, &p);
	CHECK_INT_EQ(l.n, 0);
	CHECK(p.failed);
	CHECK_STR_EQ(p.error, "boom second line");
	sw_driver_progress_release(&p);
}

TEST_MAIN()
