/* The agent protocol: typed JSON messages over the WebSocket channel
 * (docs/agent-protocol.md is the reference for their shapes).
 *
 * One table per message type names each member, its kind and its bound,
 * and serves both directions: the decoder refuses any message that does
 * not match it exactly (unknown type or member, wrong kind, a string or
 * number over its cap, a command kind outside the closed set, a payload
 * that does not fit its kind's table), and the encoder writes a struct
 * sw_agent_msg back through the same table, so what we send is what we
 * accept. Nothing here does I/O or reads the clock. */
#ifndef STEWARD_AGENT_PROTOCOL_H
#define STEWARD_AGENT_PROTOCOL_H

#include <jansson.h>
#include "steward/base/base.h"
#include "steward/base/buf.h"

/* Protocol versions this build speaks; a hello names a range and the
 * answer picks the highest version both sides know. 1: the control plane
 * sends a heartbeat every interval and the agent echoes it. 2: only the
 * agent sends heartbeats; the control plane answers none and sends
 * nothing while idle (docs/agent-protocol.md, "heartbeat"). */
#define SW_AGENT_PROTOCOL_MIN 1
#define SW_AGENT_PROTOCOL_MAX 2 /* 2: the agent's heartbeats only; cancel; container.logs with follow */
/* The first version in which only the agent sends heartbeats. */
#define SW_AGENT_PROTOCOL_AGENT_BEATS 2

enum sw_agent_msg_type {
	SW_AGENT_MSG_HELLO,     /* agent -> control plane, first */
	SW_AGENT_MSG_WELCOME,   /* control plane -> agent, the answer to hello */
	SW_AGENT_MSG_HEARTBEAT, /* 1: control plane -> agent, echoed; 2: agent -> control plane */
	SW_AGENT_MSG_GOAWAY,    /* control plane -> agent: closing, retry after a while */
	SW_AGENT_MSG_COMMAND,   /* control plane -> agent */
	SW_AGENT_MSG_INPUT,     /* control plane -> agent: a chunk of a command's input */
	SW_AGENT_MSG_ACK,       /* agent -> control plane: the command was accepted */
	SW_AGENT_MSG_PROGRESS,  /* agent -> control plane: a chunk of a command's output */
	SW_AGENT_MSG_RESULT,    /* agent -> control plane: how the command ended */
	SW_AGENT_MSG_CANCEL,    /* control plane -> agent (protocol 2): stop command id; its result follows */
	SW_AGENT_MSG_COUNT,
};

/* The closed command set. Anything else is refused by the decoder. */
enum sw_agent_cmd {
	SW_AGENT_CMD_IMAGE_BUILD,
	SW_AGENT_CMD_IMAGE_EXISTS,
	SW_AGENT_CMD_IMAGE_LIST,
	SW_AGENT_CMD_IMAGE_REMOVE,
	SW_AGENT_CMD_CONTAINER_CREATE,
	SW_AGENT_CMD_CONTAINER_START,
	SW_AGENT_CMD_CONTAINER_STOP,
	SW_AGENT_CMD_CONTAINER_REMOVE,
	SW_AGENT_CMD_CONTAINER_LIST,
	SW_AGENT_CMD_CONTAINER_INSPECT,
	SW_AGENT_CMD_CONTAINER_LOGS,
	SW_AGENT_CMD_VOLUME_CREATE,
	SW_AGENT_CMD_VOLUME_REMOVE,
	SW_AGENT_CMD_ROUTE_SET,
	SW_AGENT_CMD_ROUTE_REMOVE,
	SW_AGENT_CMD_PROXY_STATE,
	SW_AGENT_CMD_SERVICE_DUMP,
	SW_AGENT_CMD_SERVICE_RESTORE,
	SW_AGENT_CMD_METRICS_SAMPLE,
	SW_AGENT_CMD_HOST_FACTS, /* the hello's host facts read again: a command that changes nothing */
	SW_AGENT_CMD_VOLUME_LIST,
	SW_AGENT_CMD_CONTAINER_FILE,
	SW_AGENT_CMD_CONTAINER_PROBE, /* the health gate's GET, made on the server's own loopback */
	SW_AGENT_CMD_PORT_FREE, /* a free port on the server's loopback (a BLUE_GREEN colour's) */
	SW_AGENT_CMD_COUNT,
};

/* The wire name of a message type or a command kind ("hello",
 * "container.create"); NULL when out of range. */
const char *sw_agent_msg_type_name(enum sw_agent_msg_type t);
const char *sw_agent_cmd_name(enum sw_agent_cmd k);
/* The kind a wire name denotes; false for anything outside the set. */
bool sw_agent_cmd_from_name(const char *name, enum sw_agent_cmd *ret);

/* A decoded message. Strings and JSON values point into root (owned by
 * the message, freed by sw_agent_msg_release); a member the message does
 * not carry is NULL, 0 or false. To encode, fill the members of its type
 * and leave root NULL. */
struct sw_agent_msg {
	enum sw_agent_msg_type type;
	json_t *root;
	const char *id;             /* a command's id: command, input, ack, progress, result, cancel */

	/* hello */
	const char *agent_version;
	uint64_t protocol_min, protocol_max;
	const char *boot_id;
	struct {
		const char *os, *kernel, *arch, *hostname;
		uint64_t cores, memory_bytes;
	} host;
	json_t *capabilities;       /* an array of short strings */

	/* welcome */
	const char *connection_id;
	uint64_t protocol;
	uint64_t heartbeat_ms;

	uint64_t seq;               /* heartbeat, input, progress */
	uint64_t input_taken;       /* ack: the command's input chunks taken so far (its credit) */
	uint64_t retry_after_ms;    /* goaway */

	/* command */
	const char *kind_name;
	enum sw_agent_cmd kind;
	uint64_t expires_at_ms;     /* wall clock, ms since the epoch */
	json_t *payload;            /* an object checked against the kind's table */
	struct {
		const char *name, *image, *tag, *dockerfile, *project, *route_id, *service, *engine;
		const char *application_id;
		const char *dir, *file, *data; /* container.file (data: base64) */
		uint64_t mode;
		const char *context_sha256; /* image.build, service.restore: hex SHA-256 of the input */
		uint64_t timeout_s, tail, context_bytes; /* context_bytes: the input's size */
		uint64_t since_us;       /* container.logs: lines from then on (0: all) */
		const char *host, *path; /* container.probe: "127.0.0.1" or "::1"; the health path */
		/* service.dump, service.restore: the service's listener and credentials */
		const char *database, *username, *password, *data_dir;
		uint64_t port; /* container.probe; service.dump, service.restore */
		bool follow;
		json_t *spec, *route, *labels;
	} args;                     /* the payload's members, by the kind's table */

	/* input, progress */
	const char *data;
	bool last;                  /* input: the last chunk */
	const char *stream;         /* progress: "stdout", "stderr" or "log" */

	/* result */
	bool ok;
	json_t *result;             /* ok: the command's answer (an object), may be NULL */
	const char *error_code;     /* not ok: a code (UPPER_SNAKE) and a sentence */
	const char *error_message;
};

/* Decodes one text message. 0 with *ret filled (release it), or -EINVAL
 * with a sentence in err naming the member at fault (never quoting a
 * value), or -ENOMEM. */
int sw_agent_msg_decode(const char *text, size_t len, struct sw_agent_msg *ret, char *err,
			size_t errlen);
void sw_agent_msg_release(struct sw_agent_msg *m);

/* Appends m as compact JSON to out, through the same table the decoder
 * checks. -EINVAL when m lacks a required member or breaks a cap (so a
 * bug here is found before the peer refuses it); -ENOMEM. */
int sw_agent_msg_encode(struct sw_buf *out, const struct sw_agent_msg *m);

/* What a container.probe may ask for, on both sides of the channel: host
 * "127.0.0.1" or "::1" (NULL: 127.0.0.1), a port in
 * SW_AGENT_PROBE_PORT_MIN..65535 (an application's port, or a BLUE_GREEN
 * colour's from the kernel's ephemeral range), a path as an application's
 * healthCheckPath is checked (sw_valid_http_path) and a timeout of 1 to
 * SW_AGENT_PROBE_TIMEOUT_MAX_S seconds. false with a sentence naming the
 * member at fault. */
#define SW_AGENT_PROBE_PORT_MIN 1
#define SW_AGENT_PROBE_TIMEOUT_MAX_S 300
bool sw_agent_probe_valid(const char *host, uint64_t port, const char *path, uint64_t timeout_s,
			  char *err, size_t errlen);

/* The version a welcome answers a hello with: the highest one in both the
 * hello's range and ours. false when the ranges do not meet (the control
 * plane then closes with 1008 and says which versions it speaks). */
bool sw_agent_protocol_choose(const struct sw_agent_msg *hello, uint64_t *ret);

/* The receiving end of a numbered stream (a command's progress, or its
 * input): chunks count from 0. A chunk whose seq is below the next one
 * expected was already taken (resent after a reconnect) and is dropped;
 * one beyond it means chunks were lost, which cannot happen on one
 * connection and is treated as a protocol error by the caller. */
struct sw_agent_seq {
	uint64_t next;
};
enum sw_agent_seq_verdict { SW_AGENT_SEQ_TAKE, SW_AGENT_SEQ_DUPLICATE, SW_AGENT_SEQ_GAP };
enum sw_agent_seq_verdict sw_agent_seq_check(struct sw_agent_seq *s, uint64_t seq);

/* SHA-256 over a command's kind and its payload in a canonical form
 * (sorted keys, compact), so a resent command is recognised and the same
 * id with another payload is not. 0 or -ENOMEM. */
int sw_agent_cmd_digest(const struct sw_agent_msg *m, uint8_t out[32]);

#endif
