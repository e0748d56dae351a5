/* libFuzzer harness for the reader of a program's output over the Docker
 * engine's exec API (src/driver/service_data.c): frames of stdout and
 * stderr, whose bytes a service's dump tool (and so the service's data)
 * decides.
 *
 * The first input byte is the size of the pieces the rest is fed in
 * (0: 1). Checks, beyond "no crash, no UB": stdout's bytes, the stderr kept
 * and its last line are the same whether the answer comes in one piece, in
 * pieces of that size, or one byte at a time (inputs up to 4 KiB); stdout is exactly the payload of the stream-1
 * frames; the stderr kept is at most SW_DRIVER_EXEC_TAIL_MAX - 1 bytes and
 * its last line holds no line end. */
#include <stdlib.h>
#include <string.h>
#include "../src/driver/driver_internal.h" /* fuzz/ has no src/ include path */
#include "fuzz.h"

static int collect(void *arg, const char *p, size_t n)
{
	return sw_buf_append(arg, p, n) < 0 ? -12 : 0;
}

struct run {
	struct sw_buf out;
	char tail[SW_DRIVER_EXEC_TAIL_MAX];
	size_t tail_len;
	char line[SW_DRIVER_EXEC_TAIL_MAX];
};

static void feed(const char *in, size_t len, size_t piece, struct run *r)
{
	struct sw_driver_exec_stream s = { .out = collect, .out_arg = &r->out };
	for (size_t off = 0; off < len;) {
		size_t k = piece && piece < len - off ? piece : len - off;
		ASSERT(sw_driver_exec_stream_feed(&s, in + off, k) == 0);
		off += k;
	}
	ASSERT(s.tail_len < SW_DRIVER_EXEC_TAIL_MAX);
	memcpy(r->tail, s.tail, s.tail_len);
	r->tail_len = s.tail_len;
	const char *line = sw_driver_exec_stream_error(&s);
	ASSERT(!strchr(line, '\n'));
	size_t n = strlen(line);
	ASSERT(n == 0 || (line[n - 1] != '\r'));
	memcpy(r->line, line, n + 1);
}

/* stdout as the frames say it, read independently. */
static void expected(const uint8_t *p, size_t len, struct sw_buf *b)
{
	for (size_t off = 0; off + 8 <= len;) {
		uint32_t n = (uint32_t)p[off + 4] << 24 | (uint32_t)p[off + 5] << 16 |
			     (uint32_t)p[off + 6] << 8 | p[off + 7];
		size_t avail = len - off - 8 < n ? len - off - 8 : n;
		if (p[off] == 1)
			ASSERT(sw_buf_append(b, p + off + 8, avail) == 0);
		off += 8 + avail;
		if (avail < n)
			break;
	}
}

static void same(const struct run *a, const struct run *b)
{
	ASSERT(a->out.len == b->out.len && (!a->out.len || memcmp(a->out.data, b->out.data, a->out.len) == 0));
	ASSERT(a->tail_len == b->tail_len && memcmp(a->tail, b->tail, a->tail_len) == 0);
	ASSERT(strcmp(a->line, b->line) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut = data[0];
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	struct run whole = { 0 }, two = { 0 }, bytes = { 0 };
	struct sw_buf want = { 0 };
	feed(in, len, 0, &whole);
	expected(data + 1, len, &want);
	ASSERT(want.len == whole.out.len && (!want.len || memcmp(want.data, whole.out.data, want.len) == 0));
	feed(in, len, cut ? cut : 1, &two);
	same(&whole, &two);
	if (len <= 4096) {
		feed(in, len, 1, &bytes);
		same(&whole, &bytes);
	}
	sw_buf_release(&whole.out);
	sw_buf_release(&two.out);
	sw_buf_release(&bytes.out);
	sw_buf_release(&want);
	return 0;
}
