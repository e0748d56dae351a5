/* Statements of servers (statements_servers.c; table in migration 0007,
 * host and the agent functions in 0010). Parameters follow the resource
 * conventions of src/api/api_internal.h. */
#ifndef STEWARD_DB_STATEMENTS_SERVERS_H
#define STEWARD_DB_STATEMENTS_SERVERS_H

#include "steward/db/statements.h"

/* A server's status as reads see it (alias s): an ONLINE server whose
 * agent has not been heard for three heartbeat intervals is OFFLINE,
 * whatever the row says: the replica that held its session may have died
 * without writing it (migration 0021). */
#define SW_DB_SERVER_STATUS_SQL                                                                 \
	"(CASE WHEN s.status = 'ONLINE' AND NOT s.is_local AND s.agent_heartbeat_ms IS NOT NULL"  \
	" AND s.last_seen_at < now() - make_interval(secs => 3 * s.agent_heartbeat_ms / 1000.0)"  \
	" THEN 'OFFLINE' ELSE s.status END)"

/* Columns of a server row. */
enum sw_db_server_col {
	SW_DB_SERVER_ID,
	SW_DB_SERVER_NAME,
	SW_DB_SERVER_DESCRIPTION,
	SW_DB_SERVER_HOST,               /* NULL: not given */
	SW_DB_SERVER_IS_LOCAL,           /* "t" / "f" */
	SW_DB_SERVER_STATUS,             /* PENDING, ONLINE, OFFLINE (also when not heard for
					  * three heartbeat intervals) */
	SW_DB_SERVER_TOKEN_PREFIX,       /* NULL: no token (the local server) */
	SW_DB_SERVER_TOKEN_CREATED_AT,
	SW_DB_SERVER_AGENT_CONNECTED_AT,
	SW_DB_SERVER_LAST_SEEN_AT,
	SW_DB_SERVER_AGENT_VERSION,      /* the hello's; NULL before the first */
	SW_DB_SERVER_AGENT_PROTOCOL,
	SW_DB_SERVER_AGENT_BOOT_ID,
	SW_DB_SERVER_AGENT_HOST,         /* JSON: the hello's host facts */
	SW_DB_SERVER_AGENT_CAPABILITIES, /* JSON: an array of command kinds */
	SW_DB_SERVER_APPLICATIONS,       /* the number assigned to it */
	SW_DB_SERVER_SERVICES,
	SW_DB_SERVER_CREATED_AT,
	SW_DB_SERVER_UPDATED_AT,
	SW_DB_SERVER_US,                 /* the cursor's microseconds */
};

/* create: $1 organization, $2 (unused), $3 user, $4 name, $5 description,
 * $6 host, $7 the agent token's SHA-256 (hex), $8 its display prefix.
 * Checks the servers quota first (SW409 QUOTA_EXCEEDED). */
extern const struct sw_db_stmt sw_db_stmt_server_create;
extern const struct sw_db_stmt sw_db_stmt_server_get;
extern const struct sw_db_stmt sw_db_stmt_server_update;
/* SW409 LOCAL_SERVER, SW409 SERVER_IN_USE; returns id, name. */
extern const struct sw_db_stmt sw_db_stmt_server_remove;
/* Filters: $7 status, $8 name. */
extern const struct sw_db_stmt sw_db_stmt_servers_list;
/* $1 organization, $2 server, $3 the new token's SHA-256 (hex), $4 its
 * prefix -> the server row; SW409 LOCAL_SERVER; no row: not found. */
extern const struct sw_db_stmt sw_db_stmt_server_agent_token;

/* The agent channel (src/agent/session.c), not audited.
 * auth: $1 the SHA-256 (hex) of a presented agent token -> id, the stored
 * SHA-256 (hex), for a constant-time comparison; no row: unknown. */
extern const struct sw_db_stmt sw_db_stmt_agent_auth;
/* hello: $1 server, $2 the session's token SHA-256 (hex), $3 connection id,
 * $4 agent version, $5 protocol, $6 boot id, $7 host facts (JSON), $8
 * capabilities (JSON), $9 heartbeat ms -> id; no row: the token changed
 * or the server is gone. */
extern const struct sw_db_stmt sw_db_stmt_agent_hello;
/* Heartbeats answered, in one statement for many sessions (one loop
 * thread's, src/agent/session.c): $1 servers, $2 token SHA-256s (hex), $3
 * connection ids, three array literals of the same length -> the
 * 1-based positions whose server was written ONLINE with lastSeenAt now;
 * a position missing: the token changed, the server is gone, or another
 * session holds it now. */
extern const struct sw_db_stmt sw_db_stmt_agent_seen;
/* The session ended: $1 server, $2 connection id (OFFLINE only while that
 * session still holds the server). */
extern const struct sw_db_stmt sw_db_stmt_agent_gone;

/* Commands to a server's agent (migration 0019). Columns of a command: */
enum sw_db_command_col {
	SW_DB_COMMAND_ID,
	SW_DB_COMMAND_SERVER_ID,
	SW_DB_COMMAND_KIND,
	SW_DB_COMMAND_STATUS,        /* QUEUED, SENT, ACKED, SUCCEEDED, FAILED, EXPIRED */
	SW_DB_COMMAND_RESULT,        /* JSON or NULL */
	SW_DB_COMMAND_ERROR_CODE,
	SW_DB_COMMAND_ERROR_MESSAGE,
	SW_DB_COMMAND_EXPIRES_AT,
	SW_DB_COMMAND_CREATED_AT,
	SW_DB_COMMAND_UPDATED_AT,
};
/* $1 organization, $2 server, $3 user, $4 kind, $5 seconds to expiry ->
 * the command (its insert notifies the holder of the server's session);
 * SW409 LOCAL_SERVER; no row: not the organization's server. */
extern const struct sw_db_stmt sw_db_stmt_agent_command_create;
/* $1 organization, $2 server, $3 command. */
extern const struct sw_db_stmt sw_db_stmt_agent_command_get;
/* The session's side. pending: $1 server -> id, kind, payload (JSON),
 * expiry (ms since the epoch), sealed payload (NULL, or the payload sealed
 * to sw_seal_aad_agent_command(id), which then replaces payload) of the
 * commands not finished nor expired, oldest first, at most 32. sent,
 * acked: $1 server, $2 command. result: $1 server, $2 command, $3 ok
 * (t/f), $4 result (JSON), $5 error code, $6 error message; only a command
 * of that server that is not finished; its payload is dropped. */
extern const struct sw_db_stmt sw_db_stmt_agent_commands_pending;
extern const struct sw_db_stmt sw_db_stmt_agent_command_sent;
extern const struct sw_db_stmt sw_db_stmt_agent_command_acked;
extern const struct sw_db_stmt sw_db_stmt_agent_command_result;
/* The remote driver's: a server's status; a command issued under an id
 * of the caller's with its payload sealed to that id; its state polled (status, result, error code, error message,
 * the server's status); a command closed by its waiter. */
extern const struct sw_db_stmt sw_db_stmt_agent_server_status;
extern const struct sw_db_stmt sw_db_stmt_agent_command_issue;
extern const struct sw_db_stmt sw_db_stmt_agent_command_poll;
extern const struct sw_db_stmt sw_db_stmt_agent_command_close;
extern const struct sw_db_stmt sw_db_stmt_agent_command_cancel;
/* A command's streams (migration 0024): the session's side (input_take,
 * input_taken, output_put) and the job's (input_put, output_read,
 * streams_drop). */
extern const struct sw_db_stmt sw_db_stmt_agent_input_take;
extern const struct sw_db_stmt sw_db_stmt_agent_input_taken;
extern const struct sw_db_stmt sw_db_stmt_agent_output_put;
extern const struct sw_db_stmt sw_db_stmt_agent_input_put;
extern const struct sw_db_stmt sw_db_stmt_agent_output_read;
extern const struct sw_db_stmt sw_db_stmt_agent_streams_drop;
extern const struct sw_db_stmt sw_db_stmt_agent_commands_purge;
extern const struct sw_db_stmt sw_db_stmt_agent_output_consume;

#endif
