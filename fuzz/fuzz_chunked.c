/* libFuzzer harness for the chunked-body decoder.
 *
 * The first input byte picks the body limit (its value mod 4: '0' the
 * default 64 KiB, '1' 16 bytes, '2' no limit, '3' zero) and where the input
 * is cut in two; the rest is the body. Checks, beyond "no crash, no UB":
 * consumed and written stay within the input, the output never exceeds the
 * limit, -EAGAIN uses all input, and the same input decodes identically
 * in one call, in two pieces, one byte at a time (small inputs) and in
 * place. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/http/http_parser.h"
#include "fuzz.h"

struct run {
	int rc;
	size_t consumed, written;
	struct sw_http_parse_error err;
};

/* Decodes in[0..len) in pieces ending at cuts[] then len, each piece copied
 * to its own exact-size buffer; out collects the decoded bytes. */
static struct run decode(const char *in, size_t len, uint64_t max_body, const size_t *cuts,
			 size_t ncuts, char *out)
{
	struct sw_http_chunked c;
	struct run r = { .rc = -EAGAIN };
	sw_http_chunked_init(&c, max_body);
	size_t start = 0;
	for (size_t k = 0; k <= ncuts && r.rc == -EAGAIN; k++) {
		size_t stop = k < ncuts ? cuts[k] : len;
		char *piece = malloc(stop - start + 1);
		ASSERT(piece);
		memcpy(piece, in + start, stop - start);
		size_t consumed = 0, written = 0;
		r.rc = sw_http_chunked_decode(&c, piece, stop - start, out + r.written, &consumed,
					      &written, &r.err);
		ASSERT(r.rc == 0 || r.rc == -EAGAIN || r.rc == -EBADMSG);
		ASSERT(consumed <= stop - start && written <= consumed);
		if (r.rc == -EAGAIN)
			ASSERT(consumed == stop - start);
		r.consumed += consumed;
		r.written += written;
		free(piece);
		start = stop;
	}
	ASSERT(r.written <= max_body && r.written == c.total);
	if (r.rc == -EBADMSG) {
		ASSERT(r.err.status == 400 || r.err.status == 413);
		ASSERT(r.err.code && r.err.message && r.err.message[0]);
	}
	return r;
}

static void same(const struct run *a, const char *oa, const struct run *b, const char *ob)
{
	ASSERT(a->rc == b->rc && a->consumed == b->consumed && a->written == b->written);
	ASSERT(memcmp(oa, ob, a->written) == 0);
	if (a->rc == -EBADMSG)
		ASSERT(a->err.status == b->err.status && strcmp(a->err.message, b->err.message) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t limits[4] = { SW_HTTP_DEFAULT_MAX_BODY, 16, UINT64_MAX, 0 };
	if (size == 0)
		return 0;
	uint64_t max_body = limits[data[0] % 4];
	const char *in = (const char *)data + 1;
	size_t len = size - 1;

	char *out1 = malloc(len + 1), *out2 = malloc(len + 1), *inplace = malloc(len + 1);
	ASSERT(out1 && out2 && inplace);

	struct run one = decode(in, len, max_body, NULL, 0, out1);

	size_t cut = (size_t)(data[0] / 4) * len / 64;
	struct run two = decode(in, len, max_body, &cut, 1, out2);
	same(&one, out1, &two, out2);

	if (len <= 4096) {
		size_t *cuts = malloc(len * sizeof(*cuts) + 1);
		ASSERT(cuts);
		for (size_t i = 1; i < len; i++)
			cuts[i - 1] = i;
		struct run slow = decode(in, len, max_body, cuts, len ? len - 1 : 0, out2);
		same(&one, out1, &slow, out2);
		free(cuts);
	}

	memcpy(inplace, in, len);
	struct sw_http_chunked c;
	struct run ip = { 0 };
	sw_http_chunked_init(&c, max_body);
	ip.rc = sw_http_chunked_decode(&c, inplace, len, inplace, &ip.consumed, &ip.written, &ip.err);
	same(&one, out1, &ip, inplace);

	free(out1);
	free(out2);
	free(inplace);
	return 0;
}
