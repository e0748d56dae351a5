/* Servers: the hosts applications and services run on.
 *
 * A server runs an agent that dials back to the control plane and proves
 * itself with its agent token ("sta_" + 43 base64url characters, 256
 * random bits). The token is stored as its SHA-256 only, with a display
 * prefix ("sta_" + 8 characters); the value appears in exactly two
 * answers (spec, secret disclosure rule 3): POST /servers and POST
 * /servers/:id/agent-token. Rotating replaces the stored hash in one
 * statement, so the old token stops working with that commit.
 *
 * Every organization has one local server, "local": the control plane's
 * own host, driven in-process. It has no agent and no token (POST
 * .../agent-token is 409 LOCAL_SERVER), is not counted against the plan's
 * servers quota, and cannot be deleted (409 LOCAL_SERVER).
 *
 * Decisions (also in the OpenAPI document):
 * - name: a resource name (DNS label), unique in the organization (409
 *   SERVER_EXISTS); description: free text; host: where the agent runs,
 *   for people only (the agent dials in, nothing connects to it): a
 *   hostname of two or more labels, an IPv4 dotted quad or an IPv6 address
 *   in its canonical text form (RFC 5952), or null. All three can change
 *   (PATCH).
 * - POST /servers checks the plan's servers quota (409 QUOTA_EXCEEDED).
 * - DELETE is refused with 409 SERVER_IN_USE while an application or a
 *   service is assigned to the server.
 * - status: PENDING until its agent's first hello, then ONLINE while its
 *   heartbeats come (protocol 2) or are answered (1) and OFFLINE once its
 *   session ends or three heartbeats were missed (src/agent/session.c); the local server is
 *   ONLINE. The hello's facts (agent version, protocol, boot id, host
 *   facts, capabilities) are on the record.
 * - The two answers with a token carry agentCommand: the environment and
 *   binary that start the agent for this server, as one shell line. */
#include <arpa/inet.h>
#include <string.h>
#include <openssl/crypto.h>
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_servers.h"

#define RESOURCE_DOC SW_API_DOC_SCOPED
#define LIST_DOC SW_API_DOC_PAGE RESOURCE_DOC

static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 409, 413, 415, 422, 500, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 409, 503, 0 };
static const int err_token[] = { 404, 409, 500, 503, 0 };

/* A server's address as people know it: a hostname (sw_valid_hostname()),
 * or an IPv4 or IPv6 literal written exactly as inet_ntop() writes it (so
 * one address has one spelling: no leading zeros, lower-case, "::" for the
 * longest run of zero groups; no brackets, no zone). */
static bool host_ok(struct sw_str s, const char **ret_msg)
{
	bool v6 = memchr(s.ptr, ':', s.len) != NULL;
	bool v4 = s.len > 0;
	for (size_t i = 0; i < s.len && v4; i++)
		v4 = (s.ptr[i] >= '0' && s.ptr[i] <= '9') || s.ptr[i] == '.';
	if (!v6 && !v4)
		return sw_valid_hostname(s, ret_msg);
	int af = v6 ? AF_INET6 : AF_INET;
	char buf[INET6_ADDRSTRLEN], canon[INET6_ADDRSTRLEN];
	unsigned char addr[16];
	bool ok = s.len < sizeof(buf);
	if (ok) {
		memcpy(buf, s.ptr, s.len);
		buf[s.len] = '\0';
		ok = inet_pton(af, buf, addr) == 1 && inet_ntop(af, addr, canon, sizeof(canon)) &&
		     strcmp(canon, buf) == 0;
	}
	if (!ok)
		*ret_msg = v6 ? "must be an IPv6 address in its canonical form (RFC 5952: lower-case, "
				"no leading zeros, :: for the longest run of zeros; no brackets or zone)"
			      : "must be an IPv4 address of four decimal numbers from 0 to 255";
	return ok;
}

static const char *const statuses[] = { "PENDING", "ONLINE", "OFFLINE", NULL };

static const struct sw_api_field server_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	{ "description", SW_API_FIELD_TEXT, 0, NULL, 0, SW_DESCRIPTION_MAX_LEN },
	{ "host", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, host_ok },
};
static const struct sw_api_field server_filters[] = {
	{ "status", SW_API_FIELD_ENUM, 0, NULL, 0, 0, statuses },
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column server_columns[] = {
	{ "id", SW_DB_SERVER_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_SERVER_NAME, SW_API_COL_TEXT },
	{ "description", SW_DB_SERVER_DESCRIPTION, SW_API_COL_TEXT },
	{ "host", SW_DB_SERVER_HOST, SW_API_COL_NULLABLE },
	{ "isLocal", SW_DB_SERVER_IS_LOCAL, SW_API_COL_BOOL },
	{ "status", SW_DB_SERVER_STATUS, SW_API_COL_TEXT },
	{ "agentTokenPrefix", SW_DB_SERVER_TOKEN_PREFIX, SW_API_COL_NULLABLE },
	{ "agentTokenCreatedAt", SW_DB_SERVER_TOKEN_CREATED_AT, SW_API_COL_NULLABLE },
	{ "agentConnectedAt", SW_DB_SERVER_AGENT_CONNECTED_AT, SW_API_COL_NULLABLE },
	{ "lastSeenAt", SW_DB_SERVER_LAST_SEEN_AT, SW_API_COL_NULLABLE },
	{ "agentVersion", SW_DB_SERVER_AGENT_VERSION, SW_API_COL_NULLABLE },
	{ "agentProtocol", SW_DB_SERVER_AGENT_PROTOCOL, SW_API_COL_JSON },
	{ "agentBootId", SW_DB_SERVER_AGENT_BOOT_ID, SW_API_COL_NULLABLE },
	{ "hostFacts", SW_DB_SERVER_AGENT_HOST, SW_API_COL_JSON },
	{ "agentCapabilities", SW_DB_SERVER_AGENT_CAPABILITIES, SW_API_COL_JSON },
	{ "applicationCount", SW_DB_SERVER_APPLICATIONS, SW_API_COL_JSON },
	{ "serviceCount", SW_DB_SERVER_SERVICES, SW_API_COL_JSON },
	{ "createdAt", SW_DB_SERVER_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_SERVER_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object server_object = { server_columns, SW_ARRAY_SIZE(server_columns), 0 };
static const struct sw_api_sqlerr server_errors[] = {
	/* An assignment committed between the delete's check and its delete. */
	{ "23503", 409, "SERVER_IN_USE",
	  "Applications or services are assigned to the server; delete them or move them first." },
};
static const struct sw_api_resource server = {
	.type = "server",
	.fields = server_fields,
	.nfields = SW_ARRAY_SIZE(server_fields),
	.shape = &server_object,
	.create = &sw_db_stmt_server_create,
	.get = &sw_db_stmt_server_get,
	.update = &sw_db_stmt_server_update,
	.remove = &sw_db_stmt_server_remove,
	.list = &sw_db_stmt_servers_list,
	.filters = server_filters,
	.nfilters = SW_ARRAY_SIZE(server_filters),
	.cursor_us_col = SW_DB_SERVER_US,
	.cursor_id_col = SW_DB_SERVER_ID,
	.errors = server_errors,
	.nerrors = SW_ARRAY_SIZE(server_errors),
	.conflict_code = "SERVER_EXISTS",
	.conflict_message = "The organization already has a server of that name.",
};

static void servers_list(struct sw_http_request *req) { sw_api_resource_list(req, &server); }
static void server_get(struct sw_http_request *req) { sw_api_resource_get(req, &server); }
static void server_update(struct sw_http_request *req) { sw_api_resource_update(req, &server); }
static void server_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &server); }

/* ---- the two answers that carry an agent token ---- */

struct token_op {
	struct sw_http_request *req;
	const char *verb; /* the audit record's: "created", "agent_token.rotated" */
	int status;
	char token[SW_AGENT_TOKEN_LEN + 1];
};

/* Appends s single-quoted for a POSIX shell. */
static int shell_quote(struct sw_buf *b, const char *s, size_t n)
{
	int r = sw_buf_append_lit(b, "'");
	for (size_t i = 0; i < n && !r; i++)
		r = s[i] == '\'' ? sw_buf_append_lit(b, "'\\''") : sw_buf_append(b, s + i, 1);
	return r ?: sw_buf_append_lit(b, "'");
}

/* The line that starts the agent for a token: the control plane's base URL
 * (PUBLIC_BASE_URL, else http://<STEWARD_LISTEN>, with a wildcard address
 * read as loopback) and the token, in steward-agent's environment. */
static int agent_command(struct sw_buf *b, const struct sw_config *cfg, const char *token)
{
	const char *base = cfg->public_base_url;
	size_t n = base ? strlen(base) : 0;
	while (n && base[n - 1] == '/')
		n--;
	struct sw_buf url = { 0 };
	const char *listen = cfg->listen_str;
	int r = 0;
	if (n)
		r = sw_buf_append(&url, base, n);
	else if (strncmp(listen, "0.0.0.0:", 8) == 0)
		r = sw_buf_appendf(&url, "http://127.0.0.1:%s", listen + 8);
	else if (strncmp(listen, "[::]:", 5) == 0)
		r = sw_buf_appendf(&url, "http://[::1]:%s", listen + 5);
	else
		r = sw_buf_appendf(&url, "http://%s", listen);
	r = r ?: sw_buf_append_lit(b, "STEWARD_URL=");
	r = r ?: shell_quote(b, (const char *)url.data, url.len);
	r = r ?: sw_buf_append_lit(b, " STEWARD_AGENT_TOKEN=");
	r = r ?: shell_quote(b, token, strlen(token));
	r = r ?: sw_buf_append_lit(b, " steward-agent");
	sw_buf_release(&url);
	return r;
}

struct token_answer {
	const struct sw_config *config;
	const char *token;
};

/* A server with its new agent token and the line that starts its agent. */
static void write_server_with_token(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const struct token_answer *a = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, server_columns, SW_ARRAY_SIZE(server_columns));
	sw_json_key(j, "agentToken");
	sw_json_cstr(j, a->token);
	struct sw_buf cmd = { 0 };
	sw_json_key(j, "agentCommand");
	if (agent_command(&cmd, a->config, a->token) < 0)
		sw_json_null(j);
	else
		sw_json_string(j, sw_str_from((const char *)cmd.data, cmd.len));
	OPENSSL_cleanse(cmd.data, cmd.cap);
	sw_buf_release(&cmd);
	sw_json_object_end(j);
}

static void token_stored(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct token_op *op = arg;
	if (err->code) {
		sw_api_resource_error(op->req, &server, err);
	} else if (PQntuples(res) != 1) {
		sw_api_not_found(op->req);
	} else {
		const struct token_answer a = { sw_http_config(op->req), op->token };
		sw_api_answer_row(op->req, op->status, res, 0, write_server_with_token, &a);
	}
	/* The request's arena stays writable until this completion returns. */
	OPENSSL_cleanse(op->token, sizeof(op->token));
}

/* Makes a new agent token into op, puts its SHA-256 (hex) and display
 * prefix into the last two of the n params, and runs stmt, answered by
 * token_stored(). */
static void run_with_new_token(struct sw_http_request *req, struct token_op *op,
			       const struct sw_db_stmt *stmt, const char **params, int n)
{
	char prefix[SW_AGENT_TOKEN_PREFIX_LEN + 1], hex[65];
	if (sw_agent_token_new(op->token, prefix) < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The agent token could not be created.");
		return;
	}
	sw_sha256_hex(op->token, strlen(op->token), hex);
	params[n - 2] = hex;
	params[n - 1] = prefix;
	if (!sw_api_resource_query_audited(req, &server, op->verb, stmt, params, n, token_stored, op))
		OPENSSL_cleanse(op->token, sizeof(op->token));
}

static struct token_op *token_op_new(struct sw_http_request *req, const char *verb, int status)
{
	struct token_op *op = sw_api_state_new(req, sizeof(*op));
	if (op) {
		op->verb = verb;
		op->status = status;
	}
	return op;
}

/* POST /servers: fields as the resource's, then the token's hash and
 * prefix (sw_db_stmt_server_create). */
static void servers_create(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[3 + SW_ARRAY_SIZE(server_fields) + 2];
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	bool ok = sw_api_fields_read(req, body, server_fields, SW_ARRAY_SIZE(server_fields), true,
				     params + 3, NULL, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct token_op *op = token_op_new(req, "created", 201);
	if (!op)
		return;
	params[0] = req->principal.organization_id;
	params[1] = NULL;
	params[2] = req->principal.user_id;
	run_with_new_token(req, op, &sw_db_stmt_server_create, params, (int)SW_ARRAY_SIZE(params));
}

/* POST /servers/:id/agent-token: a new token replaces the old at once. */
static void server_agent_token(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_path_ids(req, NULL, id))
		return;
	struct token_op *op = token_op_new(req, "agent_token.rotated", 200);
	if (!op)
		return;
	const char *params[4] = { req->principal.organization_id, id };
	run_with_new_token(req, op, &sw_db_stmt_server_agent_token, params, 4);
}

#define B SW_HTTP_DEFAULT_MAX_BODY
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/servers", SW_ACCESS_SESSION, servers_list, 0, 0,
	  { "List servers", "The local server (isLocal, the control plane's own host) is always "
	    "there. Filters: ?status=PENDING|ONLINE|OFFLINE, ?name= (exact)." LIST_DOC, "Servers",
	    NULL, "ServerList", 200, err_list, "limit cursor order status name" } },
	{ SW_HTTP_POST, "/servers", SW_ACCESS_SESSION, servers_create, B, 0,
	  { "Add a server", "Answers the server with its agentToken (sta_...), which is shown only "
	    "here and by POST /servers/{id}/agent-token and stored as a hash: give it to the "
	    "server's agent; agentCommand is the line that starts it with that token. The server "
	    "is PENDING until the agent's first hello on /agent/connect. host is informational (a hostname, an IPv4 address or a canonical IPv6 "
	    "address). 409 SERVER_EXISTS when the name is taken in the organization; 409 "
	    "QUOTA_EXCEEDED past the plan's servers quota (the local server is not counted).",
	    "Servers", "ServerCreate", "ServerWithAgentToken", 201, err_create } },
	{ SW_HTTP_GET, "/servers/:id", SW_ACCESS_SESSION, server_get, 0, 0,
	  { "Get a server", "Never carries the agent token, only its prefix." RESOURCE_DOC,
	    "Servers", NULL, "Server", 200, err_get } },
	{ SW_HTTP_PATCH, "/servers/:id", SW_ACCESS_SESSION, server_update, B, 0,
	  { "Update a server", "Partial: only the members given change (name, description, host). "
	    "409 SERVER_EXISTS when the new name is taken." RESOURCE_DOC, "Servers", "ServerUpdate",
	    "Server", 200, err_update } },
	{ SW_HTTP_DELETE, "/servers/:id", SW_ACCESS_SESSION, server_remove, 0, 0,
	  { "Delete a server", "409 SERVER_IN_USE while any application or service is assigned to "
	    "it; 409 LOCAL_SERVER for the local server. A connected agent is cut off (close code "
	    "1008) within a second. A repeat answers 404." RESOURCE_DOC, "Servers", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/servers/:id/agent-token", SW_ACCESS_SESSION, server_agent_token, 0, 0,
	  { "Rotate a server's agent token", "Answers the server with a new agentToken (shown only "
	    "here and by POST /servers) and its agentCommand; the previous token stops working at "
	    "once, and an agent connected with it is cut off (close code 1008) within a second, on "
	    "whichever replica holds it; its next dial is refused with 401. 409 LOCAL_SERVER for the local server, which "
	    "has no agent." RESOURCE_DOC, "Servers", NULL, "ServerWithAgentToken", 200, err_token } },
};

#define TIME_SCHEMA "{\"type\":\"string\",\"format\":\"date-time\"}"
#define NULLABLE_TIME_SCHEMA "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define HOST_SCHEMA                                                                            \
	"{\"type\":[\"string\",\"null\"],\"maxLength\":253,\"description\":\"Where the agent runs, "  \
	"for people: a hostname of two or more lower-case labels, an IPv4 address or an IPv6 "    \
	"address in canonical form (RFC 5952), without brackets.\"}"
#define AGENT_PROPERTIES                                                                       \
	"\"agentVersion\":{\"type\":[\"string\",\"null\"],\"maxLength\":64,\"description\":"      \
	"\"agentVersion of the agent's last hello (agent protocol, docs/agent-protocol.md); null "  \
	"before the first.\"},"                                                                    \
	"\"agentProtocol\":{\"type\":[\"integer\",\"null\"],\"minimum\":1,\"description\":\"The "  \
	"protocol version the welcome chose: the highest in both the hello's range "              \
	"[protocolMin, protocolMax] and the control plane's.\"},"                                  \
	"\"agentBootId\":{\"type\":[\"string\",\"null\"],\"description\":\"The host's kernel boot "  \
	"id from the hello: a new value means the server rebooted.\"},"                           \
	"\"hostFacts\":{\"type\":[\"object\",\"null\"],\"description\":\"host of the agent's last "  \
	"hello, read through HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH.\","                 \
	"\"properties\":{\"os\":{\"type\":\"string\"},\"kernel\":{\"type\":\"string\"},"              \
	"\"arch\":{\"type\":\"string\"},\"hostname\":{\"type\":\"string\"},"                         \
	"\"cores\":{\"type\":\"integer\"},\"memoryBytes\":{\"type\":\"integer\"}}},"                 \
	"\"agentCapabilities\":{\"type\":[\"array\",\"null\"],\"items\":{\"type\":\"string\"},"     \
	"\"description\":\"The command kinds the agent said it runs.\"},"

#define SERVER_PROPERTIES                                                                      \
	"\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"                                        \
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"                               \
	"\"description\":{\"type\":\"string\",\"maxLength\":500},"                                 \
	"\"host\":" HOST_SCHEMA ","                                                                \
	"\"isLocal\":{\"type\":\"boolean\",\"description\":\"The control plane's own host: no "   \
	"agent, not counted against the quota, never deleted.\"},"                                 \
	"\"status\":{\"type\":\"string\",\"enum\":[\"PENDING\",\"ONLINE\",\"OFFLINE\"],"           \
	"\"description\":\"PENDING until the agent's first hello on /agent/connect; ONLINE while "  \
	"its heartbeats come (agent protocol 2) or it answers the control plane's (1); OFFLINE "   \
	"once its channel closed or three heartbeats were missed (at most three intervals after "  \
	"the agent fell silent). The "                                                             \
	"local server is ONLINE.\"},"                                                              \
	"\"agentTokenPrefix\":{\"type\":[\"string\",\"null\"],\"description\":\"sta_ and the next " \
	"8 characters of the agent token, to recognise it by; null for the local server.\"},"     \
	"\"agentTokenCreatedAt\":" NULLABLE_TIME_SCHEMA ","                                        \
	"\"agentConnectedAt\":" NULLABLE_TIME_SCHEMA ","                                           \
	"\"lastSeenAt\":" NULLABLE_TIME_SCHEMA ","                                                 \
	AGENT_PROPERTIES                                                                           \
	"\"applicationCount\":{\"type\":\"integer\",\"minimum\":0},"                               \
	"\"serviceCount\":{\"type\":\"integer\",\"minimum\":0},"                                   \
	"\"createdAt\":" TIME_SCHEMA ",\"updatedAt\":" TIME_SCHEMA
#define SERVER_REQUIRED                                                                        \
	"\"id\",\"name\",\"description\",\"host\",\"isLocal\",\"status\",\"agentTokenPrefix\","    \
	"\"agentTokenCreatedAt\",\"agentConnectedAt\",\"lastSeenAt\",\"agentVersion\","            \
	"\"agentProtocol\",\"agentBootId\",\"hostFacts\",\"agentCapabilities\",\"applicationCount\"," \
	"\"serviceCount\",\"createdAt\",\"updatedAt\""

static const char schemas[] = "{"
	"\"Server\":{\"type\":\"object\",\"required\":[" SERVER_REQUIRED "],\"properties\":{"
	SERVER_PROPERTIES "}},"
	"\"ServerWithAgentToken\":{\"type\":\"object\",\"required\":[" SERVER_REQUIRED ",\"agentToken\",\"agentCommand\"],"
	"\"properties\":{" SERVER_PROPERTIES ",\"agentToken\":{\"type\":\"string\","
	"\"pattern\":\"^sta_[A-Za-z0-9_-]{43}$\",\"description\":\"The agent's credential, shown "
	"only in this answer.\"},\"agentCommand\":{\"type\":[\"string\",\"null\"],"
	"\"description\":\"The shell line that starts the agent for this server: STEWARD_URL "
	"(PUBLIC_BASE_URL, else the control plane's listen address) and STEWARD_AGENT_TOKEN in "
	"the environment of the steward-agent binary (docs/agent-protocol.md; a systemd unit is "
	"docs/steward-agent.service). Shown only in this answer, like the token.\"}}},"
	"\"ServerList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Server\"}},"
	"\"ServerCreate\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"name\"],"
	"\"properties\":{\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":{\"type\":\"string\",\"maxLength\":500},\"host\":" HOST_SCHEMA "}},"
	"\"ServerUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":{\"type\":\"string\",\"maxLength\":500},\"host\":" HOST_SCHEMA "}}"
	"}";

const struct sw_api_route_group sw_api_servers_group = { routes, SW_ARRAY_SIZE(routes), schemas };
