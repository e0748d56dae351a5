/* The remote driver and the agent's side of it.
 *
 * A remote driver does the calls of driver.h on a server whose
 * steward-agent is connected, as agent commands (docs/agent-protocol.md):
 * each call inserts a row into agent_commands (kind, payload, expiry) on the
 * runner's own blocking connection, whose insert notifies the replica
 * holding the agent's session; it then polls the row (backoff 10 ms to
 * 250 ms) until the agent's result is written, the command expires, the
 * agent's session ends (a command not sent yet first waits, bounded, for
 * an agent that is reconnecting), or the job is asked to stop, and maps the result
 * back to the call's return values. A command it gives up on is closed
 * (FAILED) so no session sends it again, and a finished command's payload
 * (a container's environment) is dropped from the row.
 *
 * The agent runs each command with sw_driver_agent_exec(), through a local
 * driver of its own host (DOCKER_HOST, CADDY_ADMIN_URL): the control
 * plane's local driver and the agent run the same code.
 *
 * Unlike the local driver, a remote one is bound to one runner's
 * connection: it serves the thread of the job that made it. */
#ifndef STEWARD_DRIVER_REMOTE_H
#define STEWARD_DRIVER_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libpq-fe.h>
#include "steward/agent/daemon.h"
#include "steward/driver/driver.h"

/* What a call for a server without a connected agent fails with. */
#define SW_DRIVER_NOT_CONNECTED "The server's agent is not connected: nothing was done on the server."

/* A command's time to live, beyond what the call itself waits for (a
 * container's stop timeout). */
#define SW_DRIVER_REMOTE_COMMAND_MS 60000

/* The cadence at which a driver being made reads its server's status
 * while it waits for an agent that is reconnecting (a stop is seen within
 * 50 ms meanwhile). */
#define SW_DRIVER_REMOTE_WAIT_POLL_MS 500

/* How long a command's waiter goes on after its server reads OFFLINE only
 * because lastSeenAt is late (the session not ended): remote.c, agent_gone. */
#define SW_DRIVER_REMOTE_SILENT_GRACE_MS 10000

/* An image build's time to live on the remote server, its context's
 * streaming included. */
#define SW_DRIVER_REMOTE_BUILD_MS (30u * 60 * 1000)

/* The driver of the remote server server_id, over conn (blocking, this
 * thread's). stop: polled while a command or the agent is awaited (may be
 * NULL). wait_ms (a job's STEWARD_AGENT_RECONNECT_WAIT_MS; 0: none): how
 * long to wait for an agent that is reconnecting, the server OFFLINE
 * after it had a session (never while it is PENDING): here, its status
 * read every SW_DRIVER_REMOTE_WAIT_POLL_MS until it is ONLINE; and for
 * each command, which may wait that long QUEUED (unsent) while the
 * server is not ONLINE, on top of its own time to live. 0 with *ret, or
 * -EHOSTUNREACH with SW_DRIVER_NOT_CONNECTED (or, after a wait, "... is
 * not connected (waited N s) ...") when the agent is not ONLINE,
 * -ECANCELED when stop is set during the wait, -ENOENT when the server is
 * gone or is the local one, -EIO when the database fails, each with a
 * sentence. */
int sw_driver_remote_new(PGconn *conn, const char *server_id, const volatile bool *stop, unsigned wait_ms,
			 struct sw_driver **ret, char *err, size_t errlen);

/* metrics.sample of several remote servers at once (the metrics loop's
 * tick, over conn, each command living command_ms): every agent is asked
 * first, then every answer awaited, so that a tick costs about one round
 * trip however many agents answer, not one per agent. The servers are
 * taken as ONLINE (the caller's list): no status is read per server, and
 * one whose agent is gone by then answers SW_DRIVER_NOT_CONNECTED at the
 * first poll of its command, which is closed unsent. For each entry:
 * rc 0 with json (the sample's JSON text as sw_driver_metrics_sample()
 * gives it, malloc'd: the caller frees), or -errno with err. */
struct sw_driver_remote_sample {
	const char *server_id; /* in */
	int rc;                /* out */
	char *json;
	char err[256];
	struct sw_driver *d; /* private */
	char id[37];
};
void sw_driver_remote_metrics_samples(PGconn *conn, struct sw_driver_remote_sample *v, size_t n,
				      unsigned command_ms);

/* The agent's executor: runs cmd through local (a local driver) into out.
 * Kinds it does not run are answered NOT_AVAILABLE. */
void sw_driver_agent_exec(struct sw_driver *local, const struct sw_agent_msg *cmd,
			  struct sw_agent_outcome *out);
/* The kinds sw_driver_agent_exec() runs (sw_agent_executor.kinds). */
uint32_t sw_driver_agent_kinds(void);

/* An error's code on the wire ("NOT_FOUND", "IN_USE", ...) for -errno,
 * and back (an unknown code: -EIO). */
const char *sw_driver_error_code(int r);
int sw_driver_error_errno(const char *code);

#endif
