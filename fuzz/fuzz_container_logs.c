/* libFuzzer harness for a container's logs as lines
 * (src/driver/container_logs.c): the engine's multiplexed frames, whose
 * payload the application's program writes, with the engine's timestamps.
 *
 * The first input byte picks where the rest is cut in two. Checks, beyond
 * "no crash, no UB": the same lines (stream, time, bytes) whether the
 * answer comes in one piece, in two, or one byte at a time (inputs up to
 * 4 KiB); every line of stream 1 or 2, without "\n", at most
 * SW_DRIVER_CONTAINER_LOG_LINE_MAX bytes past its timestamp's. */
#include <stdlib.h>
#include <string.h>
#include "../src/driver/driver_internal.h" /* fuzz/ has no src/ include path */
#include "steward/base/timeparse.h"
#include "fuzz.h"

/* Every line as <stream><time><length><bytes>, so runs compare byte for byte. */
static int collect(void *arg, const struct sw_container_log_line *l)
{
	ASSERT(l->stream == 1 || l->stream == 2);
	ASSERT(l->len <= SW_DRIVER_CONTAINER_LOG_LINE_MAX + SW_RFC3339_MAX_LEN + 1);
	ASSERT(!memchr(l->text, '\n', l->len));
	struct sw_buf *b = arg;
	ASSERT(sw_buf_append(b, &l->stream, sizeof(l->stream)) == 0);
	ASSERT(sw_buf_append(b, &l->time_us, sizeof(l->time_us)) == 0);
	ASSERT(sw_buf_append(b, &l->len, sizeof(l->len)) == 0);
	ASSERT(sw_buf_append(b, l->text, l->len) == 0);
	return 0;
}

static void feed(const char *in, size_t len, size_t cut, size_t piece, struct sw_buf *out)
{
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(collect, out);
	ASSERT(r);
	if (piece) {
		for (size_t i = 0; i < len; i += piece)
			ASSERT(sw_driver_log_lines_feed(r, in + i, SW_MIN(piece, len - i)) == 0);
	} else {
		ASSERT(sw_driver_log_lines_feed(r, in, cut) == 0);
		ASSERT(sw_driver_log_lines_feed(r, in + cut, len - cut) == 0);
	}
	ASSERT(sw_driver_log_lines_end(r) == 0);
	sw_driver_log_lines_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	struct sw_buf whole = { 0 }, halves = { 0 }, bytes = { 0 };
	feed(in, len, 0, len ? len : 1, &whole);
	feed(in, len, len ? (size_t)data[0] * len / 255 : 0, 0, &halves);
	ASSERT(whole.len == halves.len && (whole.len == 0 || memcmp(whole.data, halves.data, whole.len) == 0));
	if (len <= 4096) {
		feed(in, len, 0, 1, &bytes);
		ASSERT(whole.len == bytes.len && (whole.len == 0 || memcmp(whole.data, bytes.data, whole.len) == 0));
	}
	sw_buf_release(&whole);
	sw_buf_release(&halves);
	sw_buf_release(&bytes);
	return 0;
}
