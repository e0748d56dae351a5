/* libFuzzer harness for the WebSocket frame reader (src/agent/ws.c): the
 * bytes an agent (or anyone reaching /agent/connect) sends after the
 * upgrade, and what a control plane sends to an agent.
 *
 * The first input byte is a setting: bit 0 picks the role (0 server:
 * frames must be masked; 1 client), bits 1-2 the message cap (64 bytes,
 * 1 KiB, 64 KiB, SW_AGENT_MAX_MESSAGE). Checks, beyond "no crash, no UB":
 * the same events (kinds, payloads, close codes) whether the bytes come in
 * one piece or one at a time (inputs up to 4 KiB); nothing consumed beyond
 * the input; every message within the cap and every text message UTF-8;
 * an ERROR's code is one that may be sent; a message written back by the
 * writer (masked when the peer is a server) reads back the same. */
#include <stdlib.h>
#include <string.h>
#include "steward/agent/ws.h"
#include "steward/base/limits.h"
#include "fuzz.h"

static const size_t caps[4] = { 64, 1024, 64 * 1024, SW_AGENT_MAX_MESSAGE };

static void round_trip(enum sw_ws_role role, size_t cap, const struct sw_ws_event *ev)
{
	static const uint8_t key[4] = { 1, 2, 3, 4 };
	struct sw_buf b = { 0 };
	/* We write as the other side: the peer of a server is a client. */
	ASSERT(sw_ws_frame_append(&b, ev->opcode, true, ev->data, ev->len,
				  role == SW_WS_SERVER ? key : NULL) == 0);
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, role, cap);
	size_t used;
	struct sw_ws_event back;
	ASSERT(sw_ws_read(&r, (const uint8_t *)b.data, b.len, &used, &back) == 0);
	ASSERT(back.kind == SW_WS_MESSAGE && used == b.len && back.len == ev->len);
	ASSERT(back.len == 0 || memcmp(back.data, ev->data, back.len) == 0);
	sw_ws_reader_release(&r);
	sw_buf_release(&b);
}

/* Reads in pieces of at most `piece` bytes; the events as a byte string. */
static void run(const uint8_t *in, size_t len, size_t piece, enum sw_ws_role role, size_t cap,
		struct sw_buf *log, bool check)
{
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, role, cap);
	size_t off = 0, have = 0;
	for (;;) {
		size_t used;
		struct sw_ws_event ev;
		ASSERT(sw_ws_read(&r, in + off, have - off, &used, &ev) == 0);
		ASSERT(used <= have - off);
		off += used;
		if (ev.kind == SW_WS_NEED_MORE && used == 0) {
			if (have == len)
				break;
			have = SW_MIN(len, have + piece);
			continue;
		}
		if (ev.kind == SW_WS_NEED_MORE)
			continue;
		uint8_t kind = (uint8_t)ev.kind;
		ASSERT(sw_buf_append(log, &kind, 1) == 0);
		ASSERT(sw_buf_append(log, &ev.close_code, sizeof(ev.close_code)) == 0);
		ASSERT(sw_buf_append(log, &ev.len, sizeof(ev.len)) == 0);
		ASSERT(ev.len == 0 || sw_buf_append(log, ev.data, ev.len) == 0);
		if (ev.kind == SW_WS_MESSAGE) {
			ASSERT(ev.len <= cap);
			ASSERT(ev.opcode == SW_WS_OP_TEXT || ev.opcode == SW_WS_OP_BINARY);
			ASSERT(ev.opcode != SW_WS_OP_TEXT || sw_utf8_valid(ev.data, ev.len));
			if (check)
				round_trip(role, cap, &ev);
		} else if (ev.kind == SW_WS_PING || ev.kind == SW_WS_PONG) {
			ASSERT(ev.len <= 125);
		} else if (ev.kind == SW_WS_ERROR) {
			ASSERT(sw_ws_close_code_valid(ev.close_code) && ev.error);
			break;
		} else if (ev.kind == SW_WS_CLOSE) {
			ASSERT(ev.close_code == SW_WS_CLOSE_NO_STATUS || sw_ws_close_code_valid(ev.close_code));
			ASSERT(sw_utf8_valid(ev.data, ev.len));
			break;
		}
	}
	sw_ws_reader_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	enum sw_ws_role role = data[0] & 1 ? SW_WS_CLIENT : SW_WS_SERVER;
	size_t cap = caps[(data[0] >> 1) & 3];
	const uint8_t *in = data + 1;
	size_t len = size - 1;
	struct sw_buf whole = { 0 }, bytes = { 0 };
	run(in, len, len ? len : 1, role, cap, &whole, true);
	if (len <= 4096) {
		run(in, len, 1, role, cap, &bytes, false);
		ASSERT(whole.len == bytes.len);
		ASSERT(whole.len == 0 || memcmp(whole.data, bytes.data, whole.len) == 0);
	}
	sw_buf_release(&whole);
	sw_buf_release(&bytes);
	return 0;
}
