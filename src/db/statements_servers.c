/* Statements of servers. Every organization has one local server (the
 * control plane's host, made by a trigger of migration 0007): it has no
 * agent token, is not counted against the servers quota, and is never
 * deleted (the functions of migration 0010 refuse). Agent tokens are kept
 * as their SHA-256 only. */
#include "db/sql.h"
#include "steward/db/statements_servers.h"

#define SERVER_STATUS SW_DB_SERVER_STATUS_SQL

#define SERVER_COLUMNS                                                                          \
	"s.id, s.name, s.description, s.host, s.is_local, " SERVER_STATUS ", s.agent_token_prefix," \
	" " SW_SQL_TS("s.agent_token_created_at") ", " SW_SQL_TS("s.agent_connected_at") ","     \
	" " SW_SQL_TS("s.last_seen_at") ","                                                      \
	" s.agent_version, s.agent_protocol, s.agent_boot_id, s.agent_host::text,"               \
	" s.agent_capabilities::text,"                                                           \
	" (SELECT count(*) FROM applications a WHERE a.server_id = s.id),"                       \
	" (SELECT count(*) FROM services v WHERE v.server_id = s.id),"                           \
	" " SW_SQL_TS("s.created_at") ", " SW_SQL_TS("s.updated_at") ", " SW_SQL_US("s.created_at")

const struct sw_db_stmt sw_db_stmt_server_create = {
	.name = "server_create",
	.sql = "WITH q AS (SELECT steward_quota_check($1::uuid, 'servers')),"
	       " s AS (INSERT INTO servers (organization_id, name, description, host,"
	       "  agent_token_hash, agent_token_prefix, agent_token_created_at)"
	       "  SELECT $1::uuid, $4, coalesce($5, ''), $6, decode($7, 'hex'), $8, now() FROM q"
	       "  WHERE " SW_SQL_UNUSED("$2", "uuid") " AND " SW_SQL_UNUSED("$3", "uuid")
	       "  RETURNING *)"
	       " SELECT " SERVER_COLUMNS " FROM s",
	.nparams = 8,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

const struct sw_db_stmt sw_db_stmt_server_get = {
	.name = "server_get",
	.sql = "SELECT " SERVER_COLUMNS " FROM servers s"
	       " WHERE s.organization_id = $1::uuid AND s.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

/* Fields: name, description, host. */
const struct sw_db_stmt sw_db_stmt_server_update = {
	.name = "server_update",
	.sql = "WITH s AS (UPDATE servers SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("description", 2, "coalesce($6, '')") ","
	       " " SW_SQL_SET("host", 3, "$7") ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " RETURNING *)"
	       " SELECT " SERVER_COLUMNS " FROM s",
	.nparams = 7,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

const struct sw_db_stmt sw_db_stmt_server_remove = {
	.name = "server_remove",
	.sql = "SELECT id, name FROM steward_server_delete($1::uuid, $2::uuid)"
	       " WHERE " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

const struct sw_db_stmt sw_db_stmt_servers_list = {
	.name = "servers_list",
	.sql = "SELECT " SERVER_COLUMNS " FROM servers s"
	       " WHERE s.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR " SERVER_STATUS " = $7) AND ($8::text IS NULL OR s.name = $8)"
	       SW_SQL_PAGE("s"),
	.nparams = 8,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_server_agent_token = {
	.name = "server_agent_token",
	.sql = "SELECT " SERVER_COLUMNS " FROM steward_server_agent_token_set($1::uuid, $2::uuid,"
	       " decode($3, 'hex'), $4) s",
	.nparams = 4,
	.audited = SW_DB_AUDITED(SW_DB_SERVER_ID, SW_DB_SERVER_NAME),
};

/* ---- the agent channel (src/agent/session.c); none of these is audited:
 * an agent's comings and goings are the server's state, not an action. */

const struct sw_db_stmt sw_db_stmt_agent_auth = {
	.name = "agent_auth",
	.sql = "SELECT id, encode(agent_token_hash, 'hex') FROM servers"
	       " WHERE agent_token_hash = decode($1, 'hex') AND NOT is_local",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_agent_hello = {
	.name = "agent_hello",
	.sql = "UPDATE servers SET status = 'ONLINE', agent_connected_at = now(), last_seen_at = now(),"
	       " agent_connection_id = $3, agent_version = $4, agent_protocol = $5::integer,"
	       " agent_boot_id = $6, agent_host = $7::jsonb, agent_capabilities = $8::jsonb,"
	       " agent_heartbeat_ms = $9::integer"
	       " WHERE id = $1::uuid AND agent_token_hash = decode($2, 'hex') RETURNING id",
	.nparams = 9,
};

const struct sw_db_stmt sw_db_stmt_agent_seen = {
	.name = "agent_seen",
	.sql = "UPDATE servers s SET status = 'ONLINE', last_seen_at = now()"
	       " FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS u(id, hash, conn, i)"
	       " WHERE s.id = u.id AND s.agent_token_hash = decode(u.hash, 'hex')"
	       " AND s.agent_connection_id = u.conn RETURNING u.i",
	.nparams = 3,
};

const struct sw_db_stmt sw_db_stmt_agent_gone = {
	.name = "agent_gone",
	.sql = "UPDATE servers SET status = 'OFFLINE'"
	       " WHERE id = $1::uuid AND agent_connection_id = $2 AND status = 'ONLINE' RETURNING id",
	.nparams = 2,
};

/* ---- commands to an agent (migration 0021) ---- */

#define COMMAND_STATUS                                                                          \
	"(CASE WHEN c.status IN ('QUEUED', 'SENT', 'ACKED') AND c.expires_at <= now()"           \
	" THEN 'EXPIRED' ELSE c.status END)"
#define COMMAND_COLUMNS                                                                         \
	"c.id, c.server_id, c.kind, " COMMAND_STATUS ", c.result::text, c.error_code,"            \
	" c.error_message, " SW_SQL_TS("c.expires_at") ", " SW_SQL_TS("c.created_at") ","         \
	" " SW_SQL_TS("c.updated_at")

const struct sw_db_stmt sw_db_stmt_agent_command_create = {
	.name = "agent_command_create",
	.sql = "WITH s AS (SELECT (steward_server_remote($1::uuid, $2::uuid,"
	       "  'it has no agent to run commands.')).id),"
	       " c AS (INSERT INTO agent_commands (organization_id, server_id, kind, expires_at, created_by)"
	       "  SELECT $1::uuid, s.id, $4, now() + make_interval(secs => $5::integer), $3::uuid"
	       "  FROM s WHERE s.id IS NOT NULL RETURNING *)"
	       " SELECT " COMMAND_COLUMNS " FROM c",
	.nparams = 5,
	.audited = SW_DB_AUDITED(SW_DB_COMMAND_ID, SW_DB_COMMAND_KIND),
};

const struct sw_db_stmt sw_db_stmt_agent_command_get = {
	.name = "agent_command_get",
	.sql = "SELECT " COMMAND_COLUMNS " FROM agent_commands c"
	       " WHERE c.organization_id = $1::uuid AND c.server_id = $2::uuid AND c.id = $3::uuid",
	.nparams = 3,
};

const struct sw_db_stmt sw_db_stmt_agent_commands_pending = {
	.name = "agent_commands_pending",
	.sql = "SELECT c.id, c.kind, c.payload::text,"
	       " (extract(epoch FROM c.expires_at) * 1000)::bigint, c.payload_sealed FROM agent_commands c"
	       " WHERE c.server_id = $1::uuid AND c.status IN ('QUEUED', 'SENT', 'ACKED')"
	       " AND c.expires_at > now() ORDER BY c.created_at, c.id LIMIT 32",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_agent_command_sent = {
	.name = "agent_command_sent",
	.sql = "UPDATE agent_commands SET status = 'SENT', updated_at = now()"
	       " WHERE server_id = $1::uuid AND id = $2::uuid AND status = 'QUEUED' RETURNING id",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_agent_command_acked = {
	.name = "agent_command_acked",
	.sql = "UPDATE agent_commands SET status = 'ACKED', updated_at = now()"
	       " WHERE server_id = $1::uuid AND id = $2::uuid AND status IN ('QUEUED', 'SENT')"
	       " RETURNING id",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_agent_command_result = {
	.name = "agent_command_result",
	.sql = "UPDATE agent_commands SET status = CASE WHEN $3::boolean THEN 'SUCCEEDED' ELSE 'FAILED' END,"
	       " payload = '{}'::jsonb, payload_sealed = NULL, result = $4::jsonb, error_code = $5, error_message = $6, updated_at = now()"
	       " WHERE server_id = $1::uuid AND id = $2::uuid"
	       " AND status NOT IN ('SUCCEEDED', 'FAILED') RETURNING id",
	.nparams = 6,
};

/* ---- the remote driver (src/driver/remote.c), on a runner's blocking
 * connection ---- */

/* ($1 server) -> zero or one row: its status as reads give it. */
const struct sw_db_stmt sw_db_stmt_agent_server_status = {
	.name = "agent_server_status",
	.sql = "SELECT " SERVER_STATUS " FROM servers s WHERE s.id = $1::uuid AND NOT s.is_local",
	.nparams = 1,
};

/* ($1 command id, $2 server, $3 kind, $4 payload sealed to $1 (migration
 * 0023), $5 ms until it expires) -> its id. */
const struct sw_db_stmt sw_db_stmt_agent_command_issue = {
	.name = "agent_command_issue",
	.sql = "INSERT INTO agent_commands (id, organization_id, server_id, kind, payload_sealed, expires_at)"
	       " SELECT $1::uuid, s.organization_id, s.id, $3, $4,"
	       "  now() + make_interval(secs => $5::bigint / 1000.0)"
	       " FROM servers s WHERE s.id = $2::uuid AND NOT s.is_local RETURNING id",
	.nparams = 5,
};

/* ($1 command) -> zero or one row: its status (EXPIRED past its expiry),
 * result, error code and message, its server's status, and the input
 * chunks the agent has taken. */
const struct sw_db_stmt sw_db_stmt_agent_command_poll = {
	.name = "agent_command_poll",
	.sql = "SELECT " COMMAND_STATUS ", c.result::text, c.error_code, c.error_message, " SERVER_STATUS
	       ", c.input_taken, s.status FROM agent_commands c JOIN servers s ON s.id = c.server_id"
	       " WHERE c.id = $1::uuid",
	.nparams = 1,
};

/* ($1 command, $2 error code, $3 message): the waiter gives up (expired,
 * the agent gone, the job stopped): a command not finished is FAILED so no
 * session sends it again; its payload (a container's environment, sealed)
 * is dropped either way. */
const struct sw_db_stmt sw_db_stmt_agent_command_close = {
	.name = "agent_command_close",
	.sql = "UPDATE agent_commands SET payload = '{}'::jsonb, payload_sealed = NULL, updated_at = now(),"
	       " status = CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN status ELSE 'FAILED' END,"
	       " error_code = CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN error_code ELSE $2 END,"
	       " error_message = CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN error_message ELSE $3 END"
	       " WHERE id = $1::uuid",
	.nparams = 3,
};

/* ($1 command): its waiter gives up on a command the agent may still run
 * (a log follow whose reader left): "cancel:<server>:<command>" to every
 * replica; the one holding the server's agent sends it the protocol's
 * cancel (session.c). Nothing when the command is over. */
const struct sw_db_stmt sw_db_stmt_agent_command_cancel = {
	.name = "agent_command_cancel",
	.sql = "SELECT pg_notify('steward_agent', 'cancel:' || c.server_id || ':' || c.id)"
	       " FROM agent_commands c WHERE c.id = $1::uuid AND c.status IN ('SENT', 'ACKED')",
	.nparams = 1,
};

/* ---- a command's streams (migration 0024) ---- */

/* ($1 server) -> the next input chunks of its sent commands not sent yet,
 * marked sent: command id, seq, data (base64), last. The rows come in no
 * set order: the session sorts them. */
const struct sw_db_stmt sw_db_stmt_agent_input_take = {
	.name = "agent_input_take",
	.sql = "WITH t AS (SELECT i.command_id, i.seq FROM agent_command_input i"
	       "  JOIN agent_commands c ON c.id = i.command_id"
	       "  WHERE c.server_id = $1::uuid AND c.status IN ('SENT', 'ACKED') AND NOT i.sent"
	       "  ORDER BY i.command_id, i.seq LIMIT 32 FOR UPDATE OF i SKIP LOCKED)"
	       " UPDATE agent_command_input i SET sent = true FROM t"
	       " WHERE i.command_id = t.command_id AND i.seq = t.seq"
	       " RETURNING i.command_id::text, i.seq, i.data, i.last",
	.nparams = 1,
};

/* ($1 server, $2 command, $3 chunks taken): the agent's ack with
 * inputTaken; the chunks it took are deleted. */
const struct sw_db_stmt sw_db_stmt_agent_input_taken = {
	.name = "agent_input_taken",
	.sql = "WITH c AS (UPDATE agent_commands SET input_taken = GREATEST(input_taken, $3::bigint),"
	       "  status = CASE WHEN status IN ('QUEUED', 'SENT') THEN 'ACKED' ELSE status END,"
	       "  updated_at = now()"
	       "  WHERE server_id = $1::uuid AND id = $2::uuid AND status IN ('QUEUED', 'SENT', 'ACKED')"
	       "  RETURNING id)"
	       " DELETE FROM agent_command_input i USING c WHERE i.command_id = c.id AND i.seq < $3::bigint",
	.nparams = 3,
};

/* ($1 server, $2 JSON [{id, seq, stream, data}]): progress chunks of this
 * server's commands, in one transaction; one already there is dropped.
 * The commands' status is not looked at: a result, written on another
 * connection of the pool, may be stored first (the job waits for the
 * chunks the result counts). */
const struct sw_db_stmt sw_db_stmt_agent_output_put = {
	.name = "agent_output_put",
	.sql = "INSERT INTO agent_command_output (command_id, seq, stream, data)"
	       " SELECT c.id, x.seq, x.stream, x.data"
	       " FROM json_to_recordset($2::json) AS x(id uuid, seq bigint, stream text, data text)"
	       " JOIN agent_commands c ON c.id = x.id AND c.server_id = $1::uuid ON CONFLICT DO NOTHING",
	.nparams = 2,
};

/* ($1 command, $2 seq, $3 data, $4 last): an input chunk, from the job;
 * the session holding the server is notified. */
const struct sw_db_stmt sw_db_stmt_agent_input_put = {
	.name = "agent_input_put",
	.sql = "WITH i AS (INSERT INTO agent_command_input (command_id, seq, data, last)"
	       "  VALUES ($1::uuid, $2::bigint, $3, $4::boolean) RETURNING command_id)"
	       " SELECT pg_notify('steward_agent', 'command:' || c.server_id)"
	       " FROM i JOIN agent_commands c ON c.id = i.command_id",
	.nparams = 4,
};

/* ($1 command): its streams go, once its job has read them. */
const struct sw_db_stmt sw_db_stmt_agent_streams_drop = {
	.name = "agent_streams_drop",
	.sql = "WITH i AS (DELETE FROM agent_command_input WHERE command_id = $1::uuid)"
	       " DELETE FROM agent_command_output WHERE command_id = $1::uuid",
	.nparams = 1,
};

/* ($1 command, $2 from seq) -> seq, data of its output from there, in order. */
const struct sw_db_stmt sw_db_stmt_agent_output_read = {
	.name = "agent_output_read",
	.sql = "SELECT seq, data FROM agent_command_output WHERE command_id = $1::uuid"
	       " AND seq >= $2::bigint ORDER BY seq LIMIT 64",
	.nparams = 2,
};

/* ($1 command, $2 seq): its output chunks before seq go, once read (a
 * dump's bytes do not wait in the table for the command's end). */
const struct sw_db_stmt sw_db_stmt_agent_output_consume = {
	.name = "agent_output_consume",
	.sql = "DELETE FROM agent_command_output WHERE command_id = $1::uuid AND seq < $2::bigint",
	.nparams = 2,
};

/* -> how many ended commands went (steward_agent_commands_purge, 0026). */
const struct sw_db_stmt sw_db_stmt_agent_commands_purge = {
	.name = "agent_commands_purge",
	.sql = "SELECT steward_agent_commands_purge()",
	.nparams = 0,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_server_create, &sw_db_stmt_server_get,   &sw_db_stmt_server_update,
	&sw_db_stmt_server_remove, &sw_db_stmt_servers_list, &sw_db_stmt_server_agent_token,
	&sw_db_stmt_agent_auth,	   &sw_db_stmt_agent_hello,  &sw_db_stmt_agent_seen,
	&sw_db_stmt_agent_gone,	   &sw_db_stmt_agent_command_create,
	&sw_db_stmt_agent_command_get,	   &sw_db_stmt_agent_commands_pending,
	&sw_db_stmt_agent_command_sent,	   &sw_db_stmt_agent_command_acked,
	&sw_db_stmt_agent_command_result,
	&sw_db_stmt_agent_server_status, &sw_db_stmt_agent_command_issue,
	&sw_db_stmt_agent_command_poll,	 &sw_db_stmt_agent_command_close, &sw_db_stmt_agent_command_cancel,
	&sw_db_stmt_agent_input_take,	 &sw_db_stmt_agent_input_taken,
	&sw_db_stmt_agent_output_put,	 &sw_db_stmt_agent_input_put,
	&sw_db_stmt_agent_output_read,	 &sw_db_stmt_agent_streams_drop,
	&sw_db_stmt_agent_output_consume, &sw_db_stmt_agent_commands_purge,
};
const struct sw_db_stmt_group sw_db_servers_statements = { list, SW_ARRAY_SIZE(list) };
