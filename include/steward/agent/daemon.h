/* steward-agent's own parts: its configuration from the environment, the
 * host facts it reports, the reconnect schedule, and the loop that dials
 * the control plane and keeps the channel. The commands themselves run in
 * an executor the main hands in (the driver sits above this module). */
#ifndef STEWARD_AGENT_DAEMON_H
#define STEWARD_AGENT_DAEMON_H

#include "steward/agent/protocol.h"
#include "steward/base/base.h"

#define SW_AGENT_VERSION "0.1.0"

struct sw_agent_config {
	bool tls;              /* https -> wss */
	char host[256];        /* as written in STEWARD_URL (no brackets) */
	char port[8];
	char path[512];        /* STEWARD_URL's path + "/agent/connect" */
	char token[128];
	char docker_host[512];
	char caddy_admin_url[512];
	char proc_path[256], sys_path[256], root_path[256];
	char data_dir[256];
	char ca_file[256];     /* "" for the system's roots */
};

/* Reads STEWARD_URL, STEWARD_AGENT_TOKEN, DOCKER_HOST, CADDY_ADMIN_URL,
 * HOST_PROC_PATH, HOST_SYS_PATH, HOST_ROOT_PATH, STEWARD_AGENT_DATA_DIR,
 * STEWARD_CA_FILE and STEWARD_AGENT_ALLOW_PLAIN from env (a NULL-terminated
 * "NAME=value" array, as environ). -EINVAL with a sentence in err that
 * names the variable at fault. Plain http is refused unless the host is
 * a loopback address (127.0.0.0/8, ::1, localhost) or
 * STEWARD_AGENT_ALLOW_PLAIN=1. The data directory is created (0700) if
 * missing. */
int sw_agent_config_load(char *const *env, struct sw_agent_config *ret, char *err, size_t errlen);

/* Fills the hello's identity and host facts from the host's /proc, /sys
 * and root (through the configured paths; a fact that cannot be read is
 * "unknown" or 0). Strings live in store (at least 1 KiB). */
void sw_agent_host_facts(const struct sw_agent_config *c, struct sw_agent_msg *hello, char *store,
			 size_t store_len);

/* Why the last connection ended, for the reconnect schedule. */
enum sw_agent_drop {
	SW_AGENT_DROP_NETWORK,   /* refused, reset, timed out, closed */
	SW_AGENT_DROP_REJECTED,  /* 401: the token is unknown or revoked */
	SW_AGENT_DROP_HINTED,    /* goaway or Retry-After: retry_hint_ms says when */
};

/* Milliseconds to wait before the next dial. attempt counts failures
 * since the last welcome (0 for the first); r is uniform in [0, 1).
 * Network: uniform in [1 s, min(60 s, 2^(attempt + 1) s)] (full jitter
 * under a growing ceiling; the first retry already spreads over a second,
 * so a fleet cut at once does not return in one wave); rejected: uniform in [2 min, 10 min]; hinted: uniform
 * in [hint / 2, hint] (at least 1 s), so agents told the same hint spread
 * out instead of returning in one wave. */
uint64_t sw_agent_backoff_ms(enum sw_agent_drop why, unsigned attempt, uint64_t retry_hint_ms,
			     double r);

/* A command's streams while it runs on the runner thread: its input (an
 * image build's context, staged whole and checked against the payload's
 * size and SHA-256 before the command starts) and its output, sent as
 * progress chunks (docs/agent-protocol.md). */
struct sw_agent_stream {
	int input_fd;          /* the staged input at offset 0, or -1: the command has none */
	/* Sends len bytes of output (whole lines, each ending in '\n') as
	 * progress, in order. Waits while the channel's queue is full (so a
	 * chatty command never starves heartbeats); once the connection has
	 * ended, output is dropped. */
	void (*output)(struct sw_agent_stream *st, const char *data, size_t len);
	/* Set (atomically) when the control plane cancels the command
	 * (protocol 2's cancel) or the connection ends under a follow: a
	 * command that waits for events (container.logs with follow) polls it
	 * and ends. */
	bool cancel;
};

/* How a command ran: the executor fills it (stream is the loop's, set
 * before the command runs). */
struct sw_agent_outcome {
	bool ok;
	char error_code[64];
	char error_message[256];
	json_t *result;        /* ok: an object (the outcome takes the reference), or NULL */
	struct sw_agent_stream *stream;
};

/* Runs one accepted command (never twice: the journal sees to that). */
typedef void (*sw_agent_exec_fn)(void *arg, const struct sw_agent_msg *cmd,
				 struct sw_agent_outcome *out);

/* What the agent can run: one bit per enum sw_agent_cmd in kinds. The
 * hello announces exactly these as capabilities; a command of another
 * kind is answered NOT_AVAILABLE (journaled, never acknowledged). */
struct sw_agent_executor {
	sw_agent_exec_fn run; /* may be NULL when kinds is 0 */
	void *arg;
	uint32_t kinds;
};
#define SW_AGENT_KIND_BIT(k) (1u << (k))
_Static_assert(SW_AGENT_CMD_COUNT <= 32, "sw_agent_executor.kinds has a bit per kind");

/* Dials, says hello, answers heartbeats and commands, and reconnects on
 * the schedule above, until *stop becomes true (a signal handler's flag).
 * Returns 0 when stopped, or -errno when the journal cannot be opened. */
int sw_agent_run(const struct sw_agent_config *c, const struct sw_agent_executor *exec,
		 volatile int *stop);

#endif
