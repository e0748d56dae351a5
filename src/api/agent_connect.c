/* GET /agent/connect: the one way in for a server's agent.
 *
 * The token travels only in the x-agent-token header (never a cookie, a
 * query string or a user's session). It is checked before anything is
 * upgraded: its form, then its SHA-256 looked up by the unique index on
 * agent_token_hash and compared again in constant time. Missing, unknown,
 * rotated or revoked: 401 in the error envelope, no 101, and the
 * connection closes after the answer. Attempts are limited per address.
 * Then src/agent/session.c checks the WebSocket headers and takes the
 * connection over (101) for that server. */
#include <openssl/crypto.h>
#include <string.h>
#include "steward/agent/session.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/secret.h"
#include "steward/db/statements_servers.h"
#include "api/api_internal.h"

/* An agent dials again at most every second or so and after a 401 waits
 * minutes; a fleet behind one address gets a generous allowance. */
static const struct sw_ratelimit agent_connect_address = { "agent_connect_address", 120, 60 };

static const int err_connect[] = { 400, 401, 426, 429, 503, 0 };

struct connect_op {
	struct sw_http_request *req;
	char hash[65];
};

static void refuse(struct sw_http_request *req)
{
	sw_http_error(req, 401, "UNAUTHENTICATED",
		      "A valid agent token is required in the x-agent-token header.");
}

static void token_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct connect_op *op = arg;
	struct sw_http_request *req = op->req;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1 || PQgetlength(res, 0, 1) != 64 ||
	    CRYPTO_memcmp(PQgetvalue(res, 0, 1), op->hash, 64) != 0) {
		refuse(req);
		return;
	}
	sw_agent_session_start(req, PQgetvalue(res, 0, 0), op->hash);
}

static void agent_connect(struct sw_http_request *req)
{
	/* Whatever the answer, the connection is not used for another request:
	 * a refusal closes it, a 101 makes it a WebSocket. */
	req->keep_alive = false;
	if (!sw_api_rate_limit(req, &agent_connect_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	const struct sw_http_header *h = sw_http_request_header(req, sw_str_cstr("x-agent-token"));
	if (!h || !sw_agent_token_well_formed(h->value)) {
		refuse(req);
		return;
	}
	struct connect_op *op = sw_api_state_new(req, sizeof(*op));
	if (!op)
		return;
	op->req = req;
	sw_sha256_hex(h->value.ptr, h->value.len, op->hash);
	const char *params[] = { op->hash };
	sw_api_query(req, &sw_db_stmt_agent_auth, params, 1, token_found, op);
}

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/agent/connect", SW_ACCESS_PUBLIC, agent_connect, 0, 0,
	  { "The agent channel (WebSocket)",
	    "For steward-agent only (docs/agent-protocol.md). A WebSocket upgrade (RFC 6455: "
	    "Upgrade: websocket, Connection: Upgrade, Sec-WebSocket-Version: 13, "
	    "Sec-WebSocket-Key) carrying the server's agent token in the x-agent-token header, "
	    "never in a cookie or the query string. The token is checked before the upgrade: "
	    "missing, unknown, rotated or revoked is 401 UNAUTHENTICATED and the connection is "
	    "closed after the answer. 400 for a request that is not a WebSocket upgrade, 426 for "
	    "another WebSocket version. Limited to 120 attempts per address per minute (429 with "
	    "Retry-After). After 101, text messages of protocol 1 or 2: the agent's hello "
	    "(agentVersion, protocolMin/Max, bootId, host facts, capabilities), the welcome "
	    "(connectionId, protocol: the highest both speak, heartbeatMs), heartbeats (protocol 2: "
	    "sent by the agent every heartbeatMs and not answered; protocol 1: sent by the control "
	    "plane and echoed), goaway (retryAfterMs) when the control plane stops. The server is "
	    "ONLINE from the hello; three intervals without the agent's heartbeat (2) or its answer "
	    "(1) drop the agent and make it OFFLINE. Rotating the token or deleting the server closes the "
	    "channel (close code 1008) on whichever replica holds it.",
	    "Servers", NULL, NULL, 101, err_connect } },
};

const struct sw_api_route_group sw_api_agent_connect_group = { routes, SW_ARRAY_SIZE(routes), NULL };
