/* RFC 6455 framing: the reader, the writer and the bounded output queue.
 *
 * Why our own framing rather than wslay (which DESIGN.md names): wslay's
 * event API owns the I/O. It calls back to receive and to send, so on the
 * ring it needs glue that fakes EAGAIN around bytes the multishot receive
 * has already put in the connection's buffer, and its message callback
 * hands over a whole message only after copying through its own queue.
 * What we need is smaller than that glue: parse the frame at the head of
 * a buffer, say what it means, and append frames to a buffer. That is a
 * few hundred lines with no callback, no allocation besides the message
 * being joined, the same code for the server (io_uring) and the agent
 * (poll + OpenSSL), and a fuzzer that reaches every branch directly.
 * docs/agent-protocol.md says the same for readers of the docs. */
#include <errno.h>
#include <string.h>
#include "steward/agent/ws.h"
#include "steward/base/secret.h"
#include "steward/base/sha.h"

/* Joined messages larger than this give their memory back once
 * delivered, so an idle peer holds no large buffer. */
#define KEEP_MESSAGE_CAP (64 * 1024)

bool sw_ws_close_code_valid(unsigned code)
{
	if (code >= 1000 && code <= 1014)
		return code != 1004 && code != 1005 && code != 1006;
	return code >= 3000 && code <= 4999;
}

bool sw_utf8_feed(struct sw_utf8 *u, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (u->need) {
			if (c < u->lo || c > u->hi)
				return false;
			u->need--;
			u->lo = 0x80;
			u->hi = 0xBF;
			continue;
		}
		if (c < 0x80)
			continue;
		u->lo = 0x80;
		u->hi = 0xBF;
		if (c >= 0xC2 && c <= 0xDF) {
			u->need = 1;
		} else if (c >= 0xE0 && c <= 0xEF) {
			u->need = 2;
			if (c == 0xE0)
				u->lo = 0xA0; /* overlong */
			else if (c == 0xED)
				u->hi = 0x9F; /* surrogates */
		} else if (c >= 0xF0 && c <= 0xF4) {
			u->need = 3;
			if (c == 0xF0)
				u->lo = 0x90; /* overlong */
			else if (c == 0xF4)
				u->hi = 0x8F; /* beyond U+10FFFF */
		} else {
			return false;
		}
	}
	return true;
}

bool sw_utf8_valid(const uint8_t *p, size_t n)
{
	struct sw_utf8 u = { 0 };
	return sw_utf8_feed(&u, p, n) && sw_utf8_complete(&u);
}

void sw_ws_reader_init(struct sw_ws_reader *r, enum sw_ws_role role, size_t max_message)
{
	memset(r, 0, sizeof(*r));
	r->role = role;
	r->max_message = max_message;
}

void sw_ws_reader_release(struct sw_ws_reader *r)
{
	sw_buf_release(&r->message);
	r->message_opcode = 0;
}

void sw_ws_reader_trim(struct sw_ws_reader *r)
{
	if (r->message_opcode)
		return; /* a fragmented message is being joined */
	sw_buf_release(&r->message);
	r->delivered = false;
}

static bool is_control(unsigned op)
{
	return op >= 0x8;
}

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The reader's sticky failure: the same answer for every later call. */
static int fail(struct sw_ws_reader *r, unsigned code, const char *why, struct sw_ws_event *ev)
{
	r->failed = true;
	r->message.len = 0;
	r->message_opcode = 0;
	r->close_code = code;
	r->last_error = why;
	*ev = (struct sw_ws_event){ .kind = SW_WS_ERROR, .close_code = code, .error = why };
	return 0;
}

static void unmask_into(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t *key, size_t phase)
{
	if (!key) {
		memcpy(dst, src, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] ^ key[(phase + i) & 3];
}

static int read_close(struct sw_ws_reader *r, size_t plen, struct sw_ws_event *ev)
{
	if (plen == 1)
		return fail(r, SW_WS_CLOSE_PROTOCOL, "a close frame with a one-byte payload", ev);
	unsigned code = SW_WS_CLOSE_NO_STATUS;
	if (plen >= 2) {
		code = (unsigned)be(r->control, 2);
		if (!sw_ws_close_code_valid(code))
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a close code that may not be sent", ev);
		if (!sw_utf8_valid(r->control + 2, plen - 2))
			return fail(r, SW_WS_CLOSE_INVALID_DATA, "a close reason that is not UTF-8", ev);
	}
	r->closed = true;
	r->close_code = code;
	*ev = (struct sw_ws_event){ .kind = SW_WS_CLOSE, .close_code = code,
				    .data = plen > 2 ? r->control + 2 : NULL,
				    .len = plen > 2 ? plen - 2 : 0 };
	return 0;
}

int sw_ws_read(struct sw_ws_reader *r, const uint8_t *in, size_t len, size_t *ret_consumed,
	       struct sw_ws_event *ret_ev)
{
	*ret_consumed = 0;
	*ret_ev = (struct sw_ws_event){ .kind = SW_WS_NEED_MORE };
	if (r->failed) {
		*ret_ev = (struct sw_ws_event){ .kind = SW_WS_ERROR, .close_code = r->close_code,
						.error = r->last_error };
		return 0;
	}
	if (r->closed) {
		*ret_ev = (struct sw_ws_event){ .kind = SW_WS_CLOSE, .close_code = r->close_code };
		return 0;
	}
	if (r->delivered) {
		r->delivered = false;
		if (r->message.cap > KEEP_MESSAGE_CAP)
			sw_buf_release(&r->message);
		r->message.len = 0;
	}
	if (len < 2)
		return 0;

	bool fin = in[0] & 0x80;
	unsigned op = in[0] & 0x0F;
	bool masked = in[1] & 0x80;
	uint64_t plen = in[1] & 0x7F;
	if (in[0] & 0x70)
		return fail(r, SW_WS_CLOSE_PROTOCOL, "reserved bits set without an extension", ret_ev);
	if (op != SW_WS_OP_CONTINUATION && op != SW_WS_OP_TEXT && op != SW_WS_OP_BINARY &&
	    op != SW_WS_OP_CLOSE && op != SW_WS_OP_PING && op != SW_WS_OP_PONG)
		return fail(r, SW_WS_CLOSE_PROTOCOL, "a reserved opcode", ret_ev);
	if (r->role == SW_WS_SERVER && !masked)
		return fail(r, SW_WS_CLOSE_PROTOCOL, "an unmasked frame from a client", ret_ev);
	if (r->role == SW_WS_CLIENT && masked)
		return fail(r, SW_WS_CLOSE_PROTOCOL, "a masked frame from a server", ret_ev);
	if (is_control(op)) {
		if (!fin)
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a fragmented control frame", ret_ev);
		if (plen > 125)
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a control frame over 125 bytes", ret_ev);
	} else if (op == SW_WS_OP_CONTINUATION && !r->message_opcode) {
		return fail(r, SW_WS_CLOSE_PROTOCOL, "a continuation outside a message", ret_ev);
	} else if (op != SW_WS_OP_CONTINUATION && r->message_opcode) {
		return fail(r, SW_WS_CLOSE_PROTOCOL, "a new message inside a fragmented one", ret_ev);
	}

	size_t hdr = 2;
	if (plen == 126) {
		if (len < 4)
			return 0;
		plen = be(in + 2, 2);
		hdr = 4;
		if (plen < 126)
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a length not in its shortest form", ret_ev);
	} else if (plen == 127) {
		if (len < 10)
			return 0;
		plen = be(in + 2, 8);
		hdr = 10;
		if (plen >> 63)
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a length with its top bit set", ret_ev);
		if (plen < 65536)
			return fail(r, SW_WS_CLOSE_PROTOCOL, "a length not in its shortest form", ret_ev);
	}
	if (!is_control(op) && plen > r->max_message - SW_MIN(r->message.len, r->max_message))
		return fail(r, SW_WS_CLOSE_TOO_BIG, "a message over the size limit", ret_ev);
	const uint8_t *key = NULL;
	if (masked) {
		if (len < hdr + 4)
			return 0;
		key = in + hdr;
		hdr += 4;
	}
	if (len - hdr < plen)
		return 0;
	const uint8_t *payload = in + hdr;
	size_t n = (size_t)plen;

	if (is_control(op)) {
		unmask_into(r->control, payload, n, key, 0);
		*ret_consumed = hdr + n;
		if (op == SW_WS_OP_CLOSE)
			return read_close(r, n, ret_ev);
		*ret_ev = (struct sw_ws_event){ .kind = op == SW_WS_OP_PING ? SW_WS_PING : SW_WS_PONG,
						.data = r->control, .len = n };
		return 0;
	}

	if (op != SW_WS_OP_CONTINUATION) {
		r->message_opcode = op;
		r->utf8 = (struct sw_utf8){ 0 };
		r->message.len = 0;
	}
	bool text = r->message_opcode == SW_WS_OP_TEXT, utf8_ok = true;
	if (n) { /* an empty frame may come before any buffer exists */
		if (sw_buf_reserve(&r->message, n) < 0)
			return -ENOMEM;
		uint8_t *dst = (uint8_t *)r->message.data + r->message.len;
		unmask_into(dst, payload, n, key, 0);
		r->message.len += n;
		utf8_ok = !text || sw_utf8_feed(&r->utf8, dst, n);
	}
	*ret_consumed = hdr + n;
	if (!utf8_ok || (text && fin && !sw_utf8_complete(&r->utf8)))
		return fail(r, SW_WS_CLOSE_INVALID_DATA, "a text message that is not UTF-8", ret_ev);
	if (!fin)
		return 0;
	*ret_ev = (struct sw_ws_event){ .kind = SW_WS_MESSAGE,
					.opcode = (enum sw_ws_opcode)r->message_opcode,
					.data = (const uint8_t *)r->message.data,
					.len = r->message.len };
	r->message_opcode = 0;
	r->delivered = true;
	return 0;
}

size_t sw_ws_header_len(size_t payload_len, bool masked)
{
	size_t n = payload_len < 126 ? 2 : payload_len < 65536 ? 4 : 10;
	return n + (masked ? 4 : 0);
}

int sw_ws_frame_append(struct sw_buf *out, enum sw_ws_opcode op, bool fin, const void *payload,
		       size_t len, const uint8_t *mask)
{
	if (is_control(op) && (!fin || len > 125))
		return -EINVAL;
	size_t hdr = sw_ws_header_len(len, mask != NULL);
	if (sw_buf_reserve(out, hdr + len) < 0)
		return -ENOMEM;
	uint8_t *p = (uint8_t *)out->data + out->len;
	p[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	size_t i = 2;
	if (len < 126) {
		p[1] = (uint8_t)len;
	} else if (len < 65536) {
		p[1] = 126;
		p[2] = (uint8_t)(len >> 8);
		p[3] = (uint8_t)len;
		i = 4;
	} else {
		p[1] = 127;
		for (int b = 0; b < 8; b++)
			p[2 + b] = (uint8_t)((uint64_t)len >> (56 - 8 * b));
		i = 10;
	}
	if (mask) {
		p[1] |= 0x80;
		memcpy(p + i, mask, 4);
		i += 4;
	}
	if (len)
		unmask_into(p + i, payload, len, mask, 0); /* masking is its own inverse */
	out->len += hdr + len;
	return 0;
}

/* Writes the close payload (code and reason) into p; its length, or -EINVAL. */
static int close_payload(unsigned code, const char *reason, uint8_t p[125])
{
	if (code == 0)
		return 0;
	size_t rlen = reason ? strlen(reason) : 0;
	if (!sw_ws_close_code_valid(code) || rlen > 123 ||
	    !sw_utf8_valid((const uint8_t *)reason, rlen))
		return -EINVAL;
	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	if (rlen)
		memcpy(p + 2, reason, rlen);
	return (int)(2 + rlen);
}

int sw_ws_close_append(struct sw_buf *out, unsigned code, const char *reason, const uint8_t *mask)
{
	uint8_t p[125];
	int n = close_payload(code, reason, p);
	if (n < 0)
		return n;
	return sw_ws_frame_append(out, SW_WS_OP_CLOSE, true, p, (size_t)n, mask);
}

void sw_ws_out_init(struct sw_ws_out *o, enum sw_ws_role role, size_t max_queued)
{
	memset(o, 0, sizeof(*o));
	o->role = role;
	o->max_queued = max_queued;
}

void sw_ws_out_release(struct sw_ws_out *o)
{
	sw_buf_release(&o->buf);
}

/* A client's fresh masking key, or none for a server (NULL). */
static int mask_key(const struct sw_ws_out *o, uint8_t key[4], const uint8_t **ret)
{
	*ret = NULL;
	if (o->role == SW_WS_SERVER)
		return 0;
	if (sw_random_bytes(key, 4) != 0)
		return -EIO;
	*ret = key;
	return 0;
}

int sw_ws_out_message(struct sw_ws_out *o, enum sw_ws_opcode op, const void *payload, size_t len)
{
	if (op != SW_WS_OP_TEXT && op != SW_WS_OP_BINARY)
		return -EINVAL;
	if (len > o->max_queued || o->buf.len > o->max_queued - len ||
	    o->buf.len + len + sw_ws_header_len(len, o->role == SW_WS_CLIENT) > o->max_queued)
		return -ENOBUFS;
	uint8_t key[4];
	const uint8_t *mask;
	int rc = mask_key(o, key, &mask);
	if (rc < 0)
		return rc;
	return sw_ws_frame_append(&o->buf, op, true, payload, len, mask);
}

int sw_ws_out_control(struct sw_ws_out *o, enum sw_ws_opcode op, const void *payload, size_t len)
{
	if (op != SW_WS_OP_PING && op != SW_WS_OP_PONG)
		return -EINVAL;
	uint8_t key[4];
	const uint8_t *mask;
	int rc = mask_key(o, key, &mask);
	if (rc < 0)
		return rc;
	return sw_ws_frame_append(&o->buf, op, true, payload, len, mask);
}

int sw_ws_out_close(struct sw_ws_out *o, unsigned code, const char *reason)
{
	uint8_t key[4];
	const uint8_t *mask;
	int rc = mask_key(o, key, &mask);
	if (rc < 0)
		return rc;
	return sw_ws_close_append(&o->buf, code, reason, mask);
}

static bool is_base64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/';
}

int sw_ws_accept_key(struct sw_str key, char out[29])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	out[0] = '\0';
	if (key.len != 24 || key.ptr[22] != '=' || key.ptr[23] != '=')
		return -EINVAL;
	for (size_t i = 0; i < 22; i++)
		if (!is_base64_char(key.ptr[i]))
			return -EINVAL;
	uint8_t in[24 + sizeof(guid) - 1];
	memcpy(in, key.ptr, 24);
	memcpy(in + 24, guid, sizeof(guid) - 1);
	uint8_t digest[SW_SHA1_LEN];
	sw_sha1(in, sizeof(in), digest);
	return sw_base64_encode(digest, sizeof(digest), out, 29) == 28 ? 0 : -EIO;
}

int sw_ws_client_key(char out[25])
{
	uint8_t raw[16];
	out[0] = '\0';
	if (sw_random_bytes(raw, sizeof(raw)) != 0)
		return -EIO;
	return sw_base64_encode(raw, sizeof(raw), out, 25) == 24 ? 0 : -EIO;
}
