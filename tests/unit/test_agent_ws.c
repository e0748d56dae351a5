/* The WebSocket frame layer (src/agent/ws.c): each protocol case a
 * server must get right, with frames built by hand or by the writer with
 * a client's mask. */
#include <errno.h>
#include "steward/agent/ws.h"
#include "steward/base/limits.h"
#include "test_help.h"

TEST_MAIN()

static const uint8_t KEY[4] = { 0x37, 0xfa, 0x21, 0x3d };

/* A client's frame (masked) appended to b. */
static void frame(struct sw_buf *b, unsigned op, bool fin, const char *p, size_t n)
{
	if (sw_ws_frame_append(b, op, fin, p, n, KEY) != 0)
		abort();
}

/* Reads every frame of b; the last event and how many events of each kind. */
struct seen {
	int messages, pings, pongs;
	struct sw_ws_event last;
	struct sw_ws_event message; /* the last MESSAGE */
	char text[256];
	size_t consumed;
};

static void read_all(struct sw_ws_reader *r, const struct sw_buf *b, struct seen *s)
{
	size_t off = 0;
	memset(s, 0, sizeof(*s));
	for (;;) {
		size_t used;
		struct sw_ws_event ev;
		if (sw_ws_read(r, (const uint8_t *)b->data + off, b->len - off, &used, &ev) != 0)
			abort();
		off += used;
		s->last = ev;
		if (ev.kind == SW_WS_MESSAGE || ev.kind == SW_WS_CLOSE) {
			s->messages += ev.kind == SW_WS_MESSAGE;
			if (ev.kind == SW_WS_MESSAGE)
				s->message = ev;
			size_t n = SW_MIN(ev.len, sizeof(s->text) - 1);
			if (n)
				memcpy(s->text, ev.data, n);
			s->text[n] = '\0';
		} else if (ev.kind == SW_WS_PING) {
			s->pings++;
		} else if (ev.kind == SW_WS_PONG) {
			s->pongs++;
		}
		if (ev.kind == SW_WS_ERROR || ev.kind == SW_WS_CLOSE || (used == 0 && ev.kind == SW_WS_NEED_MORE))
			break;
	}
	s->consumed = off;
}

/* read_all() with a new reader; only the copied text outlives it. */
static void read_fresh(const struct sw_buf *b, enum sw_ws_role role, size_t cap, struct seen *s)
{
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, role, cap);
	read_all(&r, b, s);
	sw_ws_reader_release(&r);
}

static void expect_error(int *sw_failed_, const struct sw_buf *b, unsigned code)
{
	struct sw_ws_reader r;
	struct seen s;
	sw_ws_reader_init(&r, SW_WS_SERVER, 1024);
	read_all(&r, b, &s);
	CHECK_INT_EQ(s.last.kind, SW_WS_ERROR);
	CHECK_INT_EQ(s.last.close_code, code);
	CHECK(s.last.error != NULL);
	/* The failure sticks. */
	size_t used;
	struct sw_ws_event again;
	CHECK_INT_EQ(sw_ws_read(&r, (const uint8_t *)b->data, b->len, &used, &again), 0);
	CHECK_INT_EQ(again.kind, SW_WS_ERROR);
	CHECK_INT_EQ(used, 0);
	sw_ws_reader_release(&r);
}

TEST(single_masked_text_message)
{
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_TEXT, true, "hello", 5);
	struct seen s;
	read_fresh(&b, SW_WS_SERVER, 1024, &s);
	CHECK_INT_EQ(s.messages, 1);
	CHECK_STR_EQ(s.text, "hello");
	CHECK_INT_EQ(s.consumed, b.len);
	sw_buf_release(&b);
}

TEST(every_byte_split_gives_the_same_message)
{
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_TEXT, false, "h\xc3", 2); /* a code point cut across fragments */
	frame(&b, SW_WS_OP_PING, true, "p", 1);
	frame(&b, SW_WS_OP_CONTINUATION, true, "\xa9llo", 4);
	/* Feed a growing prefix, as bytes arrive one at a time. */
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, SW_WS_SERVER, 1024);
	size_t off = 0;
	int messages = 0, pings = 0;
	for (size_t have = 0; have <= b.len; have++) {
		for (;;) {
			size_t used;
			struct sw_ws_event ev;
			REQUIRE(sw_ws_read(&r, (const uint8_t *)b.data + off, have - off, &used, &ev) == 0);
			off += used;
			if (ev.kind == SW_WS_MESSAGE) {
				messages++;
				CHECK(ev.len == 6 && memcmp(ev.data, "h\xc3\xa9llo", 6) == 0);
			}
			pings += ev.kind == SW_WS_PING;
			REQUIRE(ev.kind != SW_WS_ERROR);
			if (used == 0)
				break;
		}
	}
	CHECK_INT_EQ(off, b.len);
	CHECK_INT_EQ(messages, 1);
	CHECK_INT_EQ(pings, 1);
	sw_ws_reader_release(&r);
	sw_buf_release(&b);
}

TEST(fragmented_message_with_interleaved_ping_and_pong)
{
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_BINARY, false, "ab", 2);
	frame(&b, SW_WS_OP_PING, true, "1", 1);
	frame(&b, SW_WS_OP_CONTINUATION, false, "cd", 2);
	frame(&b, SW_WS_OP_PONG, true, "", 0);
	frame(&b, SW_WS_OP_CONTINUATION, true, "ef", 2);
	struct seen s;
	read_fresh(&b, SW_WS_SERVER, 1024, &s);
	CHECK_INT_EQ(s.messages, 1);
	CHECK_INT_EQ(s.pings, 1);
	CHECK_INT_EQ(s.pongs, 1);
	CHECK_INT_EQ(s.message.opcode, SW_WS_OP_BINARY);
	CHECK_STR_EQ(s.text, "abcdef");
	sw_buf_release(&b);
}

TEST(trim_gives_back_a_delivered_message_but_keeps_one_being_joined)
{
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, SW_WS_SERVER, 1024);
	struct sw_buf b = { 0 }, c = { 0 };
	frame(&b, SW_WS_OP_TEXT, true, "hello", 5);
	struct seen s;
	read_all(&r, &b, &s);
	CHECK_INT_EQ(s.messages, 1);
	sw_ws_reader_trim(&r);
	CHECK(r.message.data == NULL && r.message.cap == 0);
	/* Half a fragmented message: trimmed, it is kept and completes. */
	frame(&c, SW_WS_OP_TEXT, false, "ab", 2);
	read_all(&r, &c, &s);
	CHECK_INT_EQ(s.messages, 0);
	sw_ws_reader_trim(&r);
	CHECK(r.message.cap > 0);
	sw_buf_release(&c);
	frame(&c, SW_WS_OP_CONTINUATION, true, "cd", 2);
	read_all(&r, &c, &s);
	CHECK_INT_EQ(s.messages, 1);
	CHECK_STR_EQ(s.text, "abcd");
	sw_ws_reader_release(&r);
	sw_buf_release(&b);
	sw_buf_release(&c);
}

TEST(unmasked_client_frame_is_1002)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_ws_frame_append(&b, SW_WS_OP_TEXT, true, "hi", 2, NULL) == 0);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	sw_buf_release(&b);
}

TEST(masked_server_frame_is_refused_by_a_client)
{
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_TEXT, true, "hi", 2);
	struct seen s;
	read_fresh(&b, SW_WS_CLIENT, 1024, &s);
	CHECK_INT_EQ(s.last.kind, SW_WS_ERROR);
	CHECK_INT_EQ(s.last.close_code, SW_WS_CLOSE_PROTOCOL);
	sw_buf_release(&b);
}

TEST(protocol_errors_are_1002)
{
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_CONTINUATION, true, "x", 1); /* nothing to continue */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, false, "x", 1);
	frame(&b, SW_WS_OP_TEXT, true, "y", 1); /* a new message inside one */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	frame(&b, SW_WS_OP_PING, true, "x", 1);
	b.data[0] &= 0x7F; /* a fragmented ping */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, true, "x", 1);
	b.data[0] |= 0x40; /* RSV1 without permessage-deflate */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, true, "x", 1);
	b.data[0] = (char)0x83; /* reserved data opcode */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, true, "x", 1);
	b.data[0] = (char)0x8B; /* reserved control opcode */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	sw_buf_release(&b);
}

TEST(control_frame_over_125_bytes_is_1002)
{
	/* Written by hand: the writer refuses to make one. */
	uint8_t f[2 + 2 + 4 + 126] = { 0x89, 0x80 | 126, 0, 126 };
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append(&b, f, sizeof(f)) == 0);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	CHECK_INT_EQ(sw_ws_frame_append(&b, SW_WS_OP_PING, true, f, 126, NULL), -EINVAL);
	sw_buf_release(&b);
}

TEST(length_not_in_shortest_form_is_1002)
{
	uint8_t f[] = { 0x81, 0x80 | 126, 0, 5, 1, 2, 3, 4, 'h', 'e', 'l', 'l', 'o' };
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append(&b, f, sizeof(f)) == 0);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	uint8_t g[14] = { 0x82, 0x80 | 127, 0x80 }; /* top bit of a 64-bit length */
	b.len = 0;
	REQUIRE(sw_buf_append(&b, g, sizeof(g)) == 0);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	sw_buf_release(&b);
}

TEST(oversized_frame_is_1009_before_its_payload_arrives)
{
	/* Only the header of a 2 GiB frame: refused at once, nothing buffered. */
	uint8_t f[] = { 0x82, 0x80 | 127, 0, 0, 0, 0, 0x80, 0, 0, 0 };
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append(&b, f, sizeof(f)) == 0);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_TOO_BIG);
	sw_buf_release(&b);
}

TEST(fragments_together_over_the_cap_are_1009)
{
	char big[600];
	memset(big, 'a', sizeof(big));
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_TEXT, false, big, sizeof(big));
	frame(&b, SW_WS_OP_CONTINUATION, true, big, sizeof(big)); /* 1200 > 1024 */
	expect_error(sw_failed_, &b, SW_WS_CLOSE_TOO_BIG);
	/* Exactly at the cap is fine. */
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, false, big, 512);
	frame(&b, SW_WS_OP_CONTINUATION, true, big, 512);
	struct seen s;
	read_fresh(&b, SW_WS_SERVER, 1024, &s);
	CHECK_INT_EQ(s.messages, 1);
	CHECK_INT_EQ(s.message.len, 1024);
	sw_buf_release(&b);
}

TEST(invalid_utf8_in_text_is_1007)
{
	static const char *bad[] = {
		"\xc0\xaf",         /* overlong '/' */
		"\xe0\x80\xaf",     /* overlong, three bytes */
		"\xed\xa0\x80",     /* a surrogate */
		"\xf4\x90\x80\x80", /* beyond U+10FFFF */
		"\xff",
		"ok\x80",           /* a lone continuation byte */
	};
	struct sw_buf b = { 0 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b.len = 0;
		frame(&b, SW_WS_OP_TEXT, true, bad[i], strlen(bad[i]));
		expect_error(sw_failed_, &b, SW_WS_CLOSE_INVALID_DATA);
	}
	/* Cut in the middle of a code point at the end of the message. */
	b.len = 0;
	frame(&b, SW_WS_OP_TEXT, false, "a", 1);
	frame(&b, SW_WS_OP_CONTINUATION, true, "\xe2\x82", 2);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_INVALID_DATA);
	/* Binary messages are not text. */
	b.len = 0;
	frame(&b, SW_WS_OP_BINARY, true, "\xff", 1);
	struct seen s;
	read_fresh(&b, SW_WS_SERVER, 1024, &s);
	CHECK_INT_EQ(s.messages, 1);
	sw_buf_release(&b);
}

TEST(utf8_incremental_agrees_with_one_shot)
{
	CHECK(sw_utf8_valid((const uint8_t *)"\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9", 11));
	CHECK(!sw_utf8_valid((const uint8_t *)"\xf0\x9f\x98", 3));
	struct sw_utf8 u = { 0 };
	const uint8_t s[] = "\xf0\x9f\x98\x80";
	for (int i = 0; i < 4; i++)
		CHECK(sw_utf8_feed(&u, s + i, 1));
	CHECK(sw_utf8_complete(&u));
}

static void close_frame(struct sw_buf *b, unsigned code, const char *reason, size_t rlen)
{
	uint8_t p[125] = { (uint8_t)(code >> 8), (uint8_t)code };
	memcpy(p + 2, reason, rlen);
	frame(b, SW_WS_OP_CLOSE, true, (const char *)p, 2 + rlen);
}

TEST(close_codes)
{
	static const unsigned bad[] = { 0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535 };
	struct sw_buf b = { 0 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b.len = 0;
		close_frame(&b, bad[i], "", 0);
		expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
		CHECK(!sw_ws_close_code_valid(bad[i]));
		CHECK_INT_EQ(sw_ws_close_append(&b, bad[i] ? bad[i] : 1, "", NULL), -EINVAL);
	}
	static const unsigned good[] = { 1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012,
					 1013, 1014, 3000, 4999 };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		b.len = 0;
		close_frame(&b, good[i], "bye", 3);
		struct seen s;
		read_fresh(&b, SW_WS_SERVER, 1024, &s);
		CHECK_INT_EQ(s.last.kind, SW_WS_CLOSE);
		CHECK_INT_EQ(s.last.close_code, good[i]);
		CHECK_STR_EQ(s.text, "bye");
	}
	/* A one-byte payload, a reason that is not UTF-8. */
	b.len = 0;
	frame(&b, SW_WS_OP_CLOSE, true, "\x03", 1);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_PROTOCOL);
	b.len = 0;
	close_frame(&b, 1000, "\xff", 1);
	expect_error(sw_failed_, &b, SW_WS_CLOSE_INVALID_DATA);
	/* An empty close means 1005 locally. */
	b.len = 0;
	frame(&b, SW_WS_OP_CLOSE, true, "", 0);
	struct seen s;
	read_fresh(&b, SW_WS_SERVER, 1024, &s);
	CHECK_INT_EQ(s.last.kind, SW_WS_CLOSE);
	CHECK_INT_EQ(s.last.close_code, SW_WS_CLOSE_NO_STATUS);
	sw_buf_release(&b);
}

TEST(writer_lengths_round_trip)
{
	static const size_t lens[] = { 0, 125, 126, 65535, 65536, 70000 };
	char *p = malloc(70000);
	REQUIRE(p);
	for (size_t i = 0; i < 70000; i++)
		p[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct sw_buf b = { 0 };
		frame(&b, SW_WS_OP_BINARY, true, p, lens[i]);
		CHECK_INT_EQ(b.len, sw_ws_header_len(lens[i], true) + lens[i]);
		struct sw_ws_reader r;
		sw_ws_reader_init(&r, SW_WS_SERVER, 100000);
		size_t used;
		struct sw_ws_event ev;
		REQUIRE(sw_ws_read(&r, (const uint8_t *)b.data, b.len, &used, &ev) == 0);
		CHECK_INT_EQ(ev.kind, SW_WS_MESSAGE);
		CHECK(ev.len == lens[i] && (lens[i] == 0 || memcmp(ev.data, p, lens[i]) == 0));
		CHECK_INT_EQ(used, b.len);
		sw_ws_reader_release(&r);
		sw_buf_release(&b);
	}
	free(p);
}

TEST(queued_output_is_capped_but_control_frames_get_through)
{
	struct sw_ws_out o;
	sw_ws_out_init(&o, SW_WS_SERVER, 100);
	char p[90] = { 0 };
	CHECK_INT_EQ(sw_ws_out_message(&o, SW_WS_OP_BINARY, p, 90), 0);
	CHECK_INT_EQ(sw_ws_out_message(&o, SW_WS_OP_BINARY, p, 10), -ENOBUFS);
	CHECK_INT_EQ(sw_ws_out_control(&o, SW_WS_OP_PONG, "x", 1), 0);
	CHECK_INT_EQ(sw_ws_out_close(&o, SW_WS_CLOSE_TOO_BIG, "too big"), 0);
	CHECK_INT_EQ(sw_ws_out_close(&o, SW_WS_CLOSE_NO_STATUS, NULL), -EINVAL);
	CHECK_INT_EQ(sw_ws_out_close(&o, SW_WS_CLOSE_ABNORMAL, NULL), -EINVAL);
	sw_ws_out_release(&o);
	/* A client's frames are masked: a server reader accepts them. */
	sw_ws_out_init(&o, SW_WS_CLIENT, SW_AGENT_MAX_QUEUED_OUTPUT);
	CHECK_INT_EQ(sw_ws_out_message(&o, SW_WS_OP_TEXT, "{}", 2), 0);
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, SW_WS_SERVER, 1024);
	size_t used;
	struct sw_ws_event ev;
	REQUIRE(sw_ws_read(&r, (const uint8_t *)o.buf.data, o.buf.len, &used, &ev) == 0);
	CHECK_INT_EQ(ev.kind, SW_WS_MESSAGE);
	CHECK(ev.len == 2 && memcmp(ev.data, "{}", 2) == 0);
	sw_ws_reader_release(&r);
	sw_ws_out_release(&o);
}

TEST(accept_key_matches_rfc_6455_example)
{
	char out[29];
	CHECK_INT_EQ(sw_ws_accept_key(sw_str_cstr("dGhlIHNhbXBsZSBub25jZQ=="), out), 0);
	CHECK_STR_EQ(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	CHECK_INT_EQ(sw_ws_accept_key(sw_str_cstr("short=="), out), -EINVAL);
	CHECK_INT_EQ(sw_ws_accept_key(sw_str_cstr("dGhlIHNhbXBsZSBub25j*Q=="), out), -EINVAL);
	char key[25];
	CHECK_INT_EQ(sw_ws_client_key(key), 0);
	CHECK_INT_EQ(strlen(key), 24);
	CHECK_INT_EQ(sw_ws_accept_key(sw_str_cstr(key), out), 0);
}

TEST(empty_messages_and_empty_fragments)
{
	/* A fresh reader has no buffer yet: an empty first fragment must not
	 * touch it (the fuzzer found this). */
	struct sw_buf b = { 0 };
	frame(&b, SW_WS_OP_TEXT, false, "", 0);
	frame(&b, SW_WS_OP_CONTINUATION, false, "hi", 2);
	frame(&b, SW_WS_OP_CONTINUATION, true, "", 0);
	frame(&b, SW_WS_OP_BINARY, true, "", 0);
	struct sw_ws_reader r;
	sw_ws_reader_init(&r, SW_WS_SERVER, 1024);
	size_t off = 0, lens[2];
	int messages = 0;
	for (;;) {
		size_t used;
		struct sw_ws_event ev;
		REQUIRE(sw_ws_read(&r, (const uint8_t *)b.data + off, b.len - off, &used, &ev) == 0);
		off += used;
		if (ev.kind == SW_WS_MESSAGE && messages < 2)
			lens[messages++] = ev.len;
		REQUIRE(ev.kind != SW_WS_ERROR);
		if (used == 0)
			break;
	}
	CHECK_INT_EQ(messages, 2);
	CHECK_INT_EQ(lens[0], 2);
	CHECK_INT_EQ(lens[1], 0);
	sw_ws_reader_release(&r);
	sw_buf_release(&b);
}
