/* libFuzzer harness for the reader of the Docker engine's build progress
 * (src/driver/progress.c): the JSON messages, one a line, whose "stream"
 * strings carry a build's own output, which the application's Dockerfile
 * controls.
 *
 * The first input byte picks where the rest is cut in two. Checks, beyond
 * "no crash, no UB": the same lines, failure and sentence whether the
 * answer comes in one piece, in two, or one byte at a time (inputs up to
 * 4 KiB); every line at most SW_DRIVER_LOG_LINE_MAX bytes with no control
 * character but tab; the error sentence without control characters. */
#include <stdlib.h>
#include <string.h>
#include "../src/driver/driver_internal.h" /* fuzz/ has no src/ include path */
#include "fuzz.h"

/* Every line as <length><bytes>, so runs compare byte for byte. */
static void collect(void *arg, const char *line, size_t len)
{
	ASSERT(len <= SW_DRIVER_LOG_LINE_MAX);
	for (size_t i = 0; i < len; i++)
		ASSERT((unsigned char)line[i] >= 0x20 ? line[i] != 0x7F : line[i] == '\t');
	struct sw_buf *b = arg;
	ASSERT(sw_buf_append(b, &len, sizeof(len)) == 0);
	ASSERT(sw_buf_append(b, line, len) == 0);
}

struct run {
	struct sw_buf lines;
	bool failed;
	char error[512];
};

static void feed(const char *in, size_t len, size_t piece, struct run *r)
{
	struct sw_driver_progress p;
	sw_driver_progress_init(&p, collect, &r->lines);
	for (size_t i = 0; i < len; i += piece)
		ASSERT(sw_driver_progress_feed(&p, in + i, SW_MIN(piece, len - i)) == 0);
	sw_driver_progress_finish(&p);
	r->failed = p.failed;
	memcpy(r->error, p.error, sizeof(r->error));
	for (const char *c = r->error; *c; c++)
		ASSERT((unsigned char)*c >= 0x20);
	sw_driver_progress_release(&p);
}

static void same(const struct run *a, const struct run *b)
{
	ASSERT(a->lines.len == b->lines.len);
	ASSERT(a->lines.len == 0 || memcmp(a->lines.data, b->lines.data, a->lines.len) == 0);
	ASSERT(a->failed == b->failed);
	ASSERT(strcmp(a->error, b->error) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	struct run whole = { 0 }, halves = { 0 }, bytes = { 0 };
	feed(in, len, len ? len : 1, &whole);
	size_t cut = len ? (size_t)data[0] * len / 255 : 0;
	/* Two pieces: [0, cut) and [cut, len). */
	struct sw_driver_progress p;
	sw_driver_progress_init(&p, collect, &halves.lines);
	ASSERT(sw_driver_progress_feed(&p, in, cut) == 0);
	ASSERT(sw_driver_progress_feed(&p, in + cut, len - cut) == 0);
	sw_driver_progress_finish(&p);
	halves.failed = p.failed;
	memcpy(halves.error, p.error, sizeof(halves.error));
	sw_driver_progress_release(&p);
	same(&whole, &halves);
	if (len <= 4096) {
		feed(in, len, 1, &bytes);
		same(&whole, &bytes);
	}
	sw_buf_release(&whole.lines);
	sw_buf_release(&halves.lines);
	sw_buf_release(&bytes.lines);
	return 0;
}
