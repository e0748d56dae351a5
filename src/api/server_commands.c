/* Commands to a server's agent: issued on any replica, run by the replica
 * that holds the server's session (src/agent/session.c), answered into the
 * same row (migration 0021). Only kinds that change nothing are offered
 * here (host.facts); the driver's commands are issued by the control plane
 * itself, once the remote driver exists.
 *
 * POST /servers/:id/commands {kind} -> 202 with the command (QUEUED);
 * GET /servers/:id/commands/:commandId -> its status and result. A command
 * expires 5 minutes after it is issued: an agent that is not connected by
 * then never runs it (EXPIRED). */
#include "steward/db/statements_servers.h"
#include "api/api_internal.h"

#define COMMAND_TTL_S "300"

static const int err_create[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };

static const char *const kinds[] = { "host.facts", NULL };

static const struct sw_api_field command_fields[] = {
	{ "kind", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED, NULL, 0, 0, kinds },
};

static const struct sw_api_column command_columns[] = {
	{ "id", SW_DB_COMMAND_ID, SW_API_COL_TEXT },
	{ "serverId", SW_DB_COMMAND_SERVER_ID, SW_API_COL_TEXT },
	{ "kind", SW_DB_COMMAND_KIND, SW_API_COL_TEXT },
	{ "status", SW_DB_COMMAND_STATUS, SW_API_COL_TEXT },
	{ "result", SW_DB_COMMAND_RESULT, SW_API_COL_JSON },
	{ "errorCode", SW_DB_COMMAND_ERROR_CODE, SW_API_COL_NULLABLE },
	{ "errorMessage", SW_DB_COMMAND_ERROR_MESSAGE, SW_API_COL_NULLABLE },
	{ "expiresAt", SW_DB_COMMAND_EXPIRES_AT, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_COMMAND_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_COMMAND_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object command_object = { command_columns,
						     SW_ARRAY_SIZE(command_columns), 0 };

static void answered(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	int status = req->method == SW_HTTP_POST ? 202 : 200;
	if (err->code)
		sw_api_resource_error(req, NULL, err);
	else if (PQntuples(res) != 1)
		sw_api_not_found(req);
	else
		sw_api_answer_row(req, status, res, 0, sw_api_write_object, &command_object);
}

static void command_create(struct sw_http_request *req)
{
	char server[37];
	if (!sw_api_path_ids(req, server, NULL))
		return;
	struct sw_field_errors fe = { 0 };
	const char *params[5] = { req->principal.organization_id, server, req->principal.user_id };
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	bool ok = sw_api_fields_read(req, body, command_fields, SW_ARRAY_SIZE(command_fields), true,
				     params + 3, NULL, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	params[4] = COMMAND_TTL_S;
	sw_api_query_audited(req, &sw_db_stmt_agent_command_create, params, 5,
			     "agent_command.created", "agent_command", NULL, NULL, answered, req);
}

static void command_get(struct sw_http_request *req)
{
	char server[37], id[37];
	if (!sw_api_path_ids(req, server, id))
		return;
	const char *params[] = { req->principal.organization_id, server, id };
	sw_api_query(req, &sw_db_stmt_agent_command_get, params, 3, answered, req);
}

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/servers/:id/commands", SW_ACCESS_OWNER_ADMIN, command_create, 1024, 0,
	  { "Send a command to a server's agent",
	    "Queues a command for the server's agent and answers 202 with it (QUEUED). Whichever "
	    "control plane replica holds the agent's channel sends it (PostgreSQL notifies it), "
	    "and sends it again on the agent's next connection until it is answered; the agent's "
	    "journal never runs one id twice. kind: host.facts (the host's facts, read again; it "
	    "changes nothing). The command expires 5 minutes after it is issued (EXPIRED if the "
	    "agent did not answer by then). 409 LOCAL_SERVER for the local server, which has no "
	    "agent." SW_API_DOC_SCOPED,
	    "Servers", "ServerCommandCreate", "ServerCommand", 202, err_create } },
	{ SW_HTTP_GET, "/servers/:id/commands/:commandId", SW_ACCESS_SESSION, command_get, 0, 0,
	  { "Get a command sent to a server's agent",
	    "status: QUEUED (not sent yet), SENT, ACKED (the agent journaled and started it), "
	    "SUCCEEDED (result), FAILED (errorCode, errorMessage: the agent's, such as "
	    "NOT_AVAILABLE, EXPIRED or AGENT_RESTARTED), EXPIRED (not answered in time). A command "
	    "is kept 7 days after it ended or expired, then answers 404."
	    SW_API_DOC_SCOPED,
	    "Servers", NULL, "ServerCommand", 200, err_get } },
};

#define TIME_SCHEMA "{\"type\":\"string\",\"format\":\"date-time\"}"
static const char schemas[] = "{"
	"\"ServerCommand\":{\"type\":\"object\",\"required\":[\"id\",\"serverId\",\"kind\",\"status\","
	"\"result\",\"errorCode\",\"errorMessage\",\"expiresAt\",\"createdAt\",\"updatedAt\"],"
	"\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"serverId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"kind\":{\"type\":\"string\",\"enum\":[\"host.facts\"]},"
	"\"status\":{\"type\":\"string\",\"enum\":[\"QUEUED\",\"SENT\",\"ACKED\",\"SUCCEEDED\","
	"\"FAILED\",\"EXPIRED\"]},"
	"\"result\":{\"type\":[\"object\",\"null\"],\"description\":\"SUCCEEDED: the agent's "
	"answer. host.facts: os, kernel, arch, hostname, cores, memoryBytes, bootId, memoryAvailableBytes.\"},"
	"\"errorCode\":{\"type\":[\"string\",\"null\"]},\"errorMessage\":{\"type\":[\"string\",\"null\"]},"
	"\"expiresAt\":" TIME_SCHEMA ",\"createdAt\":" TIME_SCHEMA ",\"updatedAt\":" TIME_SCHEMA "}},"
	"\"ServerCommandCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"kind\"],\"properties\":{\"kind\":{\"type\":\"string\",\"enum\":[\"host.facts\"]}}}"
	"}";

const struct sw_api_route_group sw_api_server_commands_group = { routes, SW_ARRAY_SIZE(routes),
								 schemas };
