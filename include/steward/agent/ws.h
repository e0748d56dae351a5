/* RFC 6455 framing as pure functions over buffers: the agents' channel.
 *
 * The reader takes bytes as they arrived (from a ring's receive, a TLS
 * read, a fuzzer) and hands back one event at a time: a whole message
 * (fragments joined, text checked as UTF-8 across fragment boundaries), a
 * ping, a pong, a close, or a protocol error that names the close code to
 * answer with. It never reads from or writes to a socket, so the server
 * (on io_uring, after a 101 upgrade) and the agent (poll + OpenSSL) share
 * it, and the fuzzer drives exactly the code that ships.
 *
 * The writer appends frames to an sw_buf: unmasked from a server, masked
 * with a fresh key from a client. An sw_ws_out bounds what one peer may
 * have queued (data frames beyond the cap are refused; control frames
 * always fit, so a pong or a close is never starved by a build log).
 *
 * Server-side rules enforced by the reader (role SW_WS_SERVER): every
 * client frame masked; RSV bits zero (no extension is negotiated); known
 * opcodes only; control frames unfragmented and at most 125 bytes;
 * lengths in their shortest form and below 2^63; a continuation only
 * inside a fragmented message and a new data frame never inside one; close
 * payloads empty or a valid code (1000-1003, 1007-1014, 3000-4999) and a
 * UTF-8 reason; messages at most max_message bytes (refused as soon as a
 * frame's header says it would go beyond). A client reader (SW_WS_CLIENT)
 * refuses masked frames instead. */
#ifndef STEWARD_AGENT_WS_H
#define STEWARD_AGENT_WS_H

#include "steward/base/base.h"
#include "steward/base/buf.h"

enum sw_ws_opcode {
	SW_WS_OP_CONTINUATION = 0x0,
	SW_WS_OP_TEXT = 0x1,
	SW_WS_OP_BINARY = 0x2,
	SW_WS_OP_CLOSE = 0x8,
	SW_WS_OP_PING = 0x9,
	SW_WS_OP_PONG = 0xA,
};

/* Close codes we send (RFC 6455 section 7.4.1). 1005, 1006 and 1015 only
 * ever describe what happened locally and are never written to the wire. */
enum sw_ws_close_code {
	SW_WS_CLOSE_NORMAL = 1000,
	SW_WS_CLOSE_GOING_AWAY = 1001,
	SW_WS_CLOSE_PROTOCOL = 1002,
	SW_WS_CLOSE_UNSUPPORTED = 1003,
	SW_WS_CLOSE_NO_STATUS = 1005,   /* local meaning only: a close without a code */
	SW_WS_CLOSE_ABNORMAL = 1006,    /* local meaning only: no close frame at all */
	SW_WS_CLOSE_INVALID_DATA = 1007,
	SW_WS_CLOSE_POLICY = 1008,
	SW_WS_CLOSE_TOO_BIG = 1009,
	SW_WS_CLOSE_INTERNAL = 1011,
	SW_WS_CLOSE_TRY_AGAIN = 1013,
};

/* Whether code may appear in a close frame on the wire. */
bool sw_ws_close_code_valid(unsigned code);

enum sw_ws_role { SW_WS_SERVER, SW_WS_CLIENT };

enum sw_ws_event_kind {
	SW_WS_NEED_MORE, /* the next frame is not complete: read more bytes */
	SW_WS_MESSAGE,   /* a whole text or binary message */
	SW_WS_PING,
	SW_WS_PONG,
	SW_WS_CLOSE,     /* the peer's close: answer it with the same code */
	SW_WS_ERROR,     /* protocol violation: send a close with close_code, then stop reading */
};

struct sw_ws_event {
	enum sw_ws_event_kind kind;
	enum sw_ws_opcode opcode;  /* MESSAGE: SW_WS_OP_TEXT or SW_WS_OP_BINARY */
	const uint8_t *data;       /* payload, owned by the reader, valid until the next call */
	size_t len;
	unsigned close_code;       /* CLOSE: the peer's (1005 when none); ERROR: the one to send */
	const char *error;         /* ERROR: a static sentence saying what was wrong */
};

/* Incremental UTF-8 validation (RFC 3629: no overlongs, no surrogates,
 * nothing past U+10FFFF). Zero-initialised is the start state. */
struct sw_utf8 {
	uint8_t need;   /* continuation bytes still expected */
	uint8_t lo, hi; /* the range the next continuation byte must fall in */
};
/* Feeds n bytes; false as soon as they cannot be UTF-8 (the state is then
 * undefined). A sequence may be cut anywhere between calls. */
bool sw_utf8_feed(struct sw_utf8 *u, const uint8_t *p, size_t n);
/* Whether the bytes fed so far end on a whole code point. */
static inline bool sw_utf8_complete(const struct sw_utf8 *u)
{
	return u->need == 0;
}
/* One-shot check of a whole buffer. */
bool sw_utf8_valid(const uint8_t *p, size_t n);

struct sw_ws_reader {
	enum sw_ws_role role;
	size_t max_message;      /* bytes of one message, all fragments */
	struct sw_buf message;   /* the message being joined (unmasked) */
	enum sw_ws_opcode message_opcode; /* 0 when no fragmented message is open */
	struct sw_utf8 utf8;     /* over the text message being joined */
	uint8_t control[125];    /* the last control frame's payload */
	bool delivered;          /* message holds the last MESSAGE: cleared on the next call */
	bool failed;             /* an ERROR was returned: nothing more is read */
	bool closed;             /* a CLOSE was returned */
	unsigned close_code;     /* CLOSE: the peer's code; ERROR: the one to send */
	const char *last_error;  /* ERROR: the sentence, repeated on later calls */
};

/* role says which side we are (what the peer must do about masking). */
void sw_ws_reader_init(struct sw_ws_reader *r, enum sw_ws_role role, size_t max_message);
void sw_ws_reader_release(struct sw_ws_reader *r);
/* Gives back the memory of the last message delivered (none while a
 * fragmented message is being joined), so a peer that sends a message
 * every few seconds holds no buffer between them. The last event's data
 * is invalid after it. */
void sw_ws_reader_trim(struct sw_ws_reader *r);

/* Reads at most one frame from in[0..len) (the bytes not yet consumed).
 * Sets *ret_consumed to the bytes of that frame (0 with NEED_MORE) and
 * *ret_ev to what it meant; a data fragment that does not end its message
 * is consumed with NEED_MORE as well, so call again while bytes remain and
 * the answer consumed something. After ERROR or CLOSE it returns the same
 * kind again without consuming. -ENOMEM when the message cannot be
 * buffered; otherwise 0. */
int sw_ws_read(struct sw_ws_reader *r, const uint8_t *in, size_t len, size_t *ret_consumed,
	       struct sw_ws_event *ret_ev);

/* Bytes the header of a frame with this payload length and masking takes. */
size_t sw_ws_header_len(size_t payload_len, bool masked);

/* Appends one frame to out. mask is NULL for a server's frame, else the
 * 4-byte key the payload is masked with (a client's: fresh from the CSPRNG
 * for each frame). Control opcodes need fin and at most 125 bytes:
 * -EINVAL otherwise. 0 or -ENOMEM (out unchanged). */
int sw_ws_frame_append(struct sw_buf *out, enum sw_ws_opcode op, bool fin, const void *payload,
		       size_t len, const uint8_t *mask);

/* Appends a close frame carrying code and reason (at most 123 bytes of
 * UTF-8). -EINVAL for a code that may not be sent (sw_ws_close_code_valid)
 * or a reason that is too long or not UTF-8; code 0 sends an empty close. */
int sw_ws_close_append(struct sw_buf *out, unsigned code, const char *reason, const uint8_t *mask);

/* Output queued for one peer, bounded. */
struct sw_ws_out {
	struct sw_buf buf;
	enum sw_ws_role role;  /* a client masks every frame */
	size_t max_queued;     /* bytes of queued data frames allowed */
};

void sw_ws_out_init(struct sw_ws_out *o, enum sw_ws_role role, size_t max_queued);
void sw_ws_out_release(struct sw_ws_out *o);
/* Queues one whole message as a single frame. -ENOBUFS when it would take
 * the queue beyond max_queued (the caller then waits for the peer to read,
 * or drops a peer that does not); -ENOMEM; -EIO when the CSPRNG fails. */
int sw_ws_out_message(struct sw_ws_out *o, enum sw_ws_opcode op, const void *payload, size_t len);
/* Queues a ping, pong (payload at most 125 bytes) or close. Control frames
 * are never refused for the cap: they are small and must get through. */
int sw_ws_out_control(struct sw_ws_out *o, enum sw_ws_opcode op, const void *payload, size_t len);
int sw_ws_out_close(struct sw_ws_out *o, unsigned code, const char *reason);

/* The Sec-WebSocket-Accept value for a Sec-WebSocket-Key (RFC 6455 section
 * 4.2.2): base64 of SHA-1(key + GUID). out holds 28 characters and a NUL.
 * -EINVAL when key is not 24 base64 characters encoding 16 bytes. */
int sw_ws_accept_key(struct sw_str key, char out[29]);
/* A fresh Sec-WebSocket-Key (16 random bytes, base64). 0 or -EIO. */
int sw_ws_client_key(char out[25]);

#endif
