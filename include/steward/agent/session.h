/* The control plane's side of the agent channel: one session per agent
 * connected to this thread's HTTP server, after /agent/connect's token
 * check (src/api/agent_connect.c) and its 101.
 *
 * A session reads the agent's frames with the server-side reader of ws.h,
 * queues its own through a bounded sw_ws_out (SW_AGENT_MAX_QUEUED_OUTPUT),
 * and speaks protocol.h: it waits for the hello (SW_AGENT_HELLO_TIMEOUT_MS),
 * records it on the server's row (ONLINE, the facts, a fresh connection
 * id) and answers the welcome with the protocol chosen; then, in protocol
 * 1, it sends a heartbeat every interval and counts the agent gone after
 * SW_AGENT_MISSED_HEARTBEATS unanswered ones; in protocol 2 it sends none
 * and counts the agent gone after as many intervals without the agent's
 * own. Every heartbeat taken refreshes lastSeenAt, in a statement that
 * also checks that the session's token is still the server's and that the
 * session still holds it: a rotation, a delete or a newer session of the
 * same server ends it at the latest one interval later, even if every
 * notification was lost. The session that ends writes OFFLINE while it
 * still holds the server.
 *
 * Rotation and deletion notify the channel "steward_agent" with
 * "server:<id>" (migration 0010). Every thread of every replica listens
 * there (sw_agent_sessions_listen) and closes its sessions of that server
 * at once, with close code 1008.
 *
 * Commands (migration 0019's agent_commands): an insert notifies
 * "command:<server>"; the session holding that server reads its pending
 * commands (also right after each welcome, so a command in flight when a
 * replica stopped is sent again on the agent's next connection, wherever
 * it lands) and sends those it has not sent on this connection. The
 * agent's journal answers a resent id with its recorded result, so nothing
 * runs twice. The agent's ack and result are written on that server's
 * command only (an agent touches only its own server's records), and a
 * finished command notifies "result:<id>".
 *
 * Sessions live on their thread: every call here is made on the loop of
 * the HTTP server that accepted the connection. */
#ifndef STEWARD_AGENT_SESSION_H
#define STEWARD_AGENT_SESSION_H

#include "steward/base/base.h"

struct sw_http_request;
struct sw_db_pool;

#define SW_AGENT_HEARTBEAT_MS_DEFAULT 10000
#define SW_AGENT_HELLO_TIMEOUT_MS 10000
#define SW_AGENT_MISSED_HEARTBEATS 3
/* A stopping control plane tells each agent to come back after
 * SW_AGENT_GOAWAY_MIN_MS plus a share of SW_AGENT_GOAWAY_SPREAD_MS drawn
 * per agent (the agent waits half to all of it): a fleet returns over
 * about 13 s, not in one wave, and all of it within 15 s of the stop
 * (bench/agent_fleet.mjs, the reconnect storm). */
#define SW_AGENT_GOAWAY_MIN_MS 2000
#define SW_AGENT_GOAWAY_SPREAD_MS 12000

/* The heartbeat interval every session announces (100..600000 ms).
 * Process-wide, set once at start-up before the threads run. */
void sw_agent_sessions_configure(unsigned heartbeat_ms);
unsigned sw_agent_heartbeat_ms(void);

/* Checks that req asks for a WebSocket (GET, Upgrade: websocket,
 * Connection: upgrade, Sec-WebSocket-Version: 13, a valid
 * Sec-WebSocket-Key) and takes the connection over: 101, then the session
 * of server_id, which authenticated with the token whose SHA-256 is
 * token_hash (64 hex digits). A request that is not a WebSocket upgrade is
 * answered 400 (426 for another version) and closed. */
void sw_agent_session_start(struct sw_http_request *req, const char *server_id,
			    const char *token_hash);

/* Closes, with close code 1008 and reason, every session of server_id
 * held by this thread. The number closed. */
unsigned sw_agent_sessions_cut(const char *server_id, const char *reason);

/* Listens on "steward_agent" with pool (this thread's): a notification
 * "server:<id>" cuts that server's sessions, "command:<id>" makes them send
 * the server's pending commands; a resync checks every session's token
 * and pending commands at once. 0 or -errno. */
int sw_agent_sessions_listen(struct sw_db_pool *pool);

#endif
