/* The OpenAPI 3.1 document, generated once at start-up from the route
 * table held by the router (so it lists exactly what the server answers),
 * and served by reference from memory.
 *
 * Conventions that hold for every route are written here once: the
 * envelope, the error body and codes, identifiers, timestamps, the access
 * levels and the status codes of the guard. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/api/api.h"
#include "steward/base/limits.h"
#include "api/api_internal.h"

static char *doc_json;
static size_t doc_len;

static const char description[] =
	"Steward's control-plane API. Conventions that hold for every route:\n\n"
	"* **Envelope.** A success body is `{\"data\": ...}`. Every other status carries "
	"`{\"error\": {\"code\", \"message\", \"requestId\", \"fields\"?}}` where `code` is a stable "
	"SNAKE_UPPER identifier and `fields` (only with 422 VALIDATION_FAILED) maps each invalid "
	"field to its messages.\n"
	"* **Status codes.** 400 MALFORMED_REQUEST (the HTTP request itself was refused; the "
	"connection is closed) or INVALID_JSON; 401 UNAUTHENTICATED (no valid session or token); "
	"403 FORBIDDEN (signed in, but the role does not allow it); 404 NOT_FOUND (also for an "
	"object of another organization, whose existence is not revealed); 405 METHOD_NOT_ALLOWED "
	"with `Allow`; 408 REQUEST_TIMEOUT; 409 conflicts; 413 PAYLOAD_TOO_LARGE; 414 URI_TOO_LONG; "
	"415 UNSUPPORTED_MEDIA_TYPE; 417 EXPECTATION_FAILED; 422 VALIDATION_FAILED; 429 "
	"RATE_LIMITED with `Retry-After` (every operation: a global limit per client address, "
	"STEWARD_RATE_LIMIT_PER_MINUTE, default 1200 a minute; tighter on the routes that say so); 431 "
	"HEADERS_TOO_LARGE; 500 INTERNAL_ERROR; 503 SERVICE_UNAVAILABLE or DATABASE_UNAVAILABLE.\n"
	"* **Requests.** JSON bodies need `Content-Type: application/json`, must be one object, "
	"may not repeat a key or nest deeper than 32 levels, and are limited per route (64 KiB "
	"unless stated). Unknown fields are refused (422) rather than ignored. An operation that takes "
	"no body accepts none or an empty object `{}` (what fetch, axios and SDKs send), refuses an "
	"object with members by naming them (422), and documents an optional `EmptyBody`. A number "
	"no member can hold (an integer past 64 bits, a real past a double such as `1e400`) is 422 "
	"on that member, not 400; `-0` is the number 0; a leading zero (`07`) is not JSON (400 "
	"INVALID_JSON). Numbers in the query (`limit`, `cursor`) and in headers (`Last-Event-ID`) are "
	"canonical decimals, else 422 naming them; `Range` positions may be of any size (RFC 9110).\n"
	"* **Identifiers** are UUIDs; **timestamps** are RFC 3339 in UTC with milliseconds.\n"
	"* **Collections and items.** A collection answers GET with a page and POST with the new "
	"object (201); an item answers GET, PATCH (a partial body: only the members given change) "
	"and DELETE (204; a repeat answers 404, nothing else changes). Work on a server (start, stop, "
	"restart, a backup's restore) answers 202 with the queued Job and `Location: /jobs/{id}` "
	"(a backup request answers the Backup, its Location the backup's job), "
	"read with GET until its status is SUCCEEDED, FAILED or CANCELLED. Names of resources are DNS labels "
	"(lower-case letters, digits and single hyphens, 1 to 63), so no stored name can later be "
	"read as a command, a path or markup.\n"
	"* **Lists.** `?limit=` (1 to 200, default 50), `?cursor=` (the `pagination.nextCursor` of "
	"the previous page, null on the last) and `?order=desc|asc` by creation time (latest first "
	"by default), plus each list's documented filters (exact matches). Unknown or repeated query "
	"parameters are 422, on every route that is not Public, so a misspelt filter never widens a "
	"list silently.\n"
	"* **Quotas.** Each organization has a plan (GET /subscription); creating past a quota of "
	"applications, servers or members is 409 QUOTA_EXCEEDED, naming the plan and the quota.\n"
	"* **Secrets.** A generated secret (API token, agent token, webhook secret, channel signing "
	"secret) is in exactly one response, the one that creates or rotates it; service "
	"credentials only in GET /services/:id/connection (audited). Variable values are never "
	"returned. Secrets at rest are sealed with AES-256-GCM under the master key.\n"
	"* **Request ids.** Every response carries `X-Request-Id`: the client's own when it "
	"matches `[A-Za-z0-9._:-]{1,64}`, else one generated; error bodies repeat it.\n"
	"* **Access.** Each operation states `x-steward-access`: Public, Session (a session cookie "
	"or an API token `Authorization: Bearer st_...`), Owner, Owner/Admin or Operator. One "
	"global guard authenticates every non-public route before its handler runs: 401 "
	"UNAUTHENTICATED without a valid credential; 403 FORBIDDEN when the role is below the "
	"route's level; 403 CSRF_REJECTED for a cookie-authenticated POST, PUT, PATCH or DELETE "
	"whose `Origin` (or `Referer`) is neither the server's own origin nor listed in "
	"AUTH_TRUSTED_ORIGINS (API tokens are exempt). Every non-public operation documents these.\n"
	"* **HTTP.** HTTP/1.1 with keep-alive and pipelining; `HEAD` on every GET route; `OPTIONS` "
	"answers 204 with `Allow` (and CORS headers for origins in CORS_ALLOWED_ORIGINS).";

/* Components: schemas of bodies and of the data of responses. */
static const char components[] = "{"
	"\"schemas\":{"
	"\"EmptyBody\":{\"type\":\"object\",\"additionalProperties\":false,\"maxProperties\":0,"
	"\"properties\":{},\"description\":\"This operation takes no body: send none, or `{}` (any "
	"Content-Type). A member is refused with 422 naming it; over 1 KiB is 413.\"},"
	"\"Pagination\":{\"type\":\"object\",\"required\":[\"nextCursor\"],\"properties\":{"
	"\"nextCursor\":{\"type\":[\"string\",\"null\"],\"description\":\"Pass as ?cursor= for the next "
	"page; null on the last page.\"}}},"
	"\"Job\":{\"type\":\"object\",\"required\":[\"id\",\"queue\",\"kind\",\"status\",\"targetType\","
	"\"targetId\",\"createdAt\",\"attempts\",\"startedAt\",\"finishedAt\",\"errorMessage\"],\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"queue\":{\"type\":\"string\",\"enum\":[\"build\",\"deploy\",\"lifecycle\"]},"
	"\"kind\":{\"type\":\"string\",\"examples\":[\"application.restart\"]},"
	"\"status\":{\"type\":\"string\",\"enum\":[\"QUEUED\",\"RUNNING\",\"SUCCEEDED\",\"FAILED\",\"CANCELLED\"]},"
	"\"targetType\":{\"type\":\"string\"},\"targetId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"attempts\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Runs started.\"},"
	"\"startedAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
	"\"finishedAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
	"\"errorMessage\":{\"type\":[\"string\",\"null\"],\"description\":\"FAILED: the "
	"runner's sentence.\"}},"
	"\"description\":\"Work recorded for a runner. Asking for the same work while it is still "
	"queued answers the queued job again instead of a second one. A 202 with a Job has a "
	"Location header, /jobs/{id}, to poll until status is SUCCEEDED, FAILED or CANCELLED.\"},"
	"\"Error\":{\"type\":\"object\",\"required\":[\"error\"],\"properties\":{\"error\":{"
	"\"type\":\"object\",\"required\":[\"code\",\"message\",\"requestId\"],\"properties\":{"
	"\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z][A-Z0-9_]*$\",\"examples\":[\"VALIDATION_FAILED\"]},"
	"\"message\":{\"type\":\"string\"},"
	"\"requestId\":{\"type\":\"string\"},"
	"\"fields\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"description\":\"Only with 422 VALIDATION_FAILED: messages per invalid field.\"}}}}},"
	"\"Health\":{\"type\":\"object\",\"required\":[\"status\",\"database\"],\"properties\":{"
	"\"status\":{\"const\":\"ok\"},\"database\":{\"const\":\"ok\"}}},"
	"\"SetupStatus\":{\"type\":\"object\",\"required\":[\"setupRequired\"],\"properties\":{"
	"\"setupRequired\":{\"type\":\"boolean\"}}},"
	"\"SetupRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\",\"password\",\"name\",\"organizationName\"],\"properties\":{"
	"\"email\":{\"type\":\"string\",\"format\":\"email\",\"maxLength\":254,\"description\":\"Stored lower-case.\"},"
	"\"password\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true,"
	"\"description\":\"10 to 256 characters, no control characters; stored as an Argon2id hash.\"},"
	"\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"
	"\"organizationName\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}}},"
	"\"SignupRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\",\"password\",\"name\"],\"properties\":{"
	"\"email\":{\"type\":\"string\",\"format\":\"email\",\"maxLength\":254},"
	"\"password\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true},"
	"\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"
	"\"organizationName\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100,"
	"\"description\":\"Defaults to one named after the user.\"}}},"
	"\"User\":{\"type\":\"object\",\"required\":[\"id\",\"email\",\"name\",\"isOperator\",\"createdAt\"],"
	"\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"isOperator\":{\"type\":\"boolean\"},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"OrganizationMembership\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"role\",\"createdAt\"],"
	"\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},\"name\":{\"type\":\"string\"},"
	"\"role\":{\"enum\":[\"OWNER\",\"ADMIN\",\"MEMBER\"]},\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"Session\":{\"type\":\"object\",\"required\":[\"id\",\"method\",\"expiresAt\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"method\":{\"enum\":[\"PASSWORD\",\"TWO_FACTOR\",\"PASSKEY\",\"INVITATION\",\"SETUP\",\"SIGNUP\",\"PASSWORD_RESET\"]},"
	"\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"SessionResult\":{\"type\":\"object\",\"required\":[\"user\",\"organization\",\"session\"],"
	"\"description\":\"The response also sets the steward_session cookie.\",\"properties\":{"
	"\"user\":{\"$ref\":\"#/components/schemas/User\"},"
	"\"organization\":{\"$ref\":\"#/components/schemas/OrganizationMembership\"},"
	"\"session\":{\"$ref\":\"#/components/schemas/Session\"}}},"
	"\"CurrentSession\":{\"type\":\"object\",\"required\":[\"user\",\"organization\",\"credential\"],\"properties\":{"
	"\"user\":{\"$ref\":\"#/components/schemas/User\"},"
	"\"organization\":{\"$ref\":\"#/components/schemas/OrganizationMembership\"},"
	"\"credential\":{\"type\":\"object\",\"required\":[\"type\",\"id\"],\"properties\":{"
	"\"type\":{\"enum\":[\"SESSION\",\"API_TOKEN\"]},\"id\":{\"type\":\"string\",\"format\":\"uuid\"}}}}},"
	"\"SessionList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"method\",\"createdAt\",\"lastSeenAt\",\"expiresAt\",\"current\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"format\":\"uuid\"},\"method\":{\"type\":\"string\"},"
	"\"ip\":{\"type\":[\"string\",\"null\"]},\"userAgent\":{\"type\":[\"string\",\"null\"]},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"lastSeenAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"current\":{\"type\":\"boolean\"}}}},"
	"\"SignInRequest\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"email\",\"password\"],"
	"\"properties\":{\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"password\":{\"type\":\"string\",\"writeOnly\":true}}},"
	"\"PasswordChangeRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"currentPassword\",\"newPassword\"],\"properties\":{"
	"\"currentPassword\":{\"type\":\"string\",\"writeOnly\":true},"
	"\"newPassword\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true}}}"
	"},"
	"\"securitySchemes\":{"
	"\"sessionCookie\":{\"type\":\"apiKey\",\"in\":\"cookie\",\"name\":\"steward_session\","
	"\"description\":\"The session cookie issued by sign-in.\"},"
	"\"apiToken\":{\"type\":\"http\",\"scheme\":\"bearer\",\"description\":\"An API token, st_...\"}}"
	"}";

static const char *status_description(int status)
{
	switch (status) {
	case 101: return "Switching Protocols: the connection is a WebSocket from here on";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted: the work is queued";
	case 204: return "No content";
	case 206: return "Partial content: the range asked for";
	case 400: return "Malformed request or invalid JSON";
	case 401: return "Not authenticated";
	case 403: return "Authenticated, but the role does not allow this";
	case 404: return "Not found";
	case 409: return "Conflict with the current state";
	case 413: return "Request body too large";
	case 415: return "Body is not application/json";
	case 416: return "The range asked for is past the end";
	case 422: return "Validation failed; see error.fields";
	case 426: return "Upgrade required: another WebSocket version";
	case 429: return "Too many requests";
	case 500: return "Internal error";
	case 502: return "An upstream service (a git host, a notification target) failed";
	case 503: return "A dependency (the database) is unavailable";
	}
	return "Error";
}

/* The methods the guard's CSRF check applies to (src/auth/guard.c). */
static bool is_unsafe(enum sw_http_method m)
{
	return m == SW_HTTP_POST || m == SW_HTTP_PUT || m == SW_HTTP_PATCH || m == SW_HTTP_DELETE;
}

static void add_error(json_t *responses, int status, const char *what)
{
	char code[8];
	snprintf(code, sizeof(code), "%d", status);
	json_object_set_new(responses, code,
		json_pack("{s:s, s:{s:{s:{s:s}}}}", "description", what, "content",
			  "application/json", "schema", "$ref", "#/components/schemas/Error"));
}

/* The error responses of a route: its own (error_statuses), then the
 * guard's on every non-public route: 401, and 403 for the reasons that
 * apply (the role below the route's level, CSRF on an unsafe method), with
 * the route's own 403 kept beside them. */
static void add_errors(json_t *responses, const struct sw_route *r)
{
	bool own_403 = false, own_422 = false, own_429 = false;
	for (const int *e = r->doc.error_statuses; e && *e; e++) {
		own_403 |= *e == 403;
		own_422 |= *e == 422;
		own_429 |= *e == 429;
		add_error(responses, *e, status_description(*e));
	}
	if (!r->max_body && is_unsafe(r->method) && !own_422)
		add_error(responses, 422, "VALIDATION_FAILED: the body has members, and this operation "
					  "takes none");
	if (!own_429) /* the guard's global limit per address */
		add_error(responses, 429, "RATE_LIMITED: too many requests from this address "
					  "(STEWARD_RATE_LIMIT_PER_MINUTE); see Retry-After");
	if (r->access == SW_ACCESS_PUBLIC)
		return;
	add_error(responses, 401, "UNAUTHENTICATED: no valid session cookie or API token");
	const char *why[3];
	size_t n = 0;
	if (r->access != SW_ACCESS_SESSION)
		why[n++] = "FORBIDDEN: the caller's role is below the route's access level";
	if (is_unsafe(r->method))
		why[n++] = "CSRF_REJECTED: a cookie-authenticated request whose Origin (or Referer) is "
			   "neither this server's own origin nor in AUTH_TRUSTED_ORIGINS";
	if (own_403)
		why[n++] = "the route's own refusal, as its description says";
	if (!n)
		return;
	char text[512];
	size_t o = 0;
	for (size_t i = 0; i < n && o < sizeof(text); i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", i ? "; or " : "", why[i]);
	add_error(responses, 403, text);
}

/* The documented query parameters of a route (doc.query). */
static void add_query_params(json_t *params, const char *query)
{
	for (const char *p = query; p && *p;) {
		while (*p == ' ')
			p++;
		const char *start = p;
		while (*p && *p != ' ')
			p++;
		size_t n = (size_t)(p - start);
		if (!n)
			continue;
		const char *desc = "A filter: only items whose member of this name equals the value.";
		json_t *schema = json_pack("{s:s}", "type", "string");
		if (n == 5 && memcmp(start, "limit", 5) == 0) {
			desc = "Items per page, 1 to 200 (default 50).";
			json_decref(schema);
			schema = json_pack("{s:s, s:i, s:i, s:i}", "type", "integer", "minimum", 1,
					   "maximum", 200, "default", 50);
		} else if (n == 6 && memcmp(start, "cursor", 6) == 0) {
			desc = "pagination.nextCursor of the previous page; absent for the first page.";
		} else if ((n == 5 && memcmp(start, "since", 5) == 0) ||
			   (n == 5 && memcmp(start, "until", 5) == 0)) {
			desc = start[0] == 's' ? "Only items created at or after this RFC 3339 date-time."
					       : "Only items created before this RFC 3339 date-time.";
			json_decref(schema);
			schema = json_pack("{s:s, s:s}", "type", "string", "format", "date-time");
		} else if (n == 4 && memcmp(start, "tail", 4) == 0) {
			desc = "The last lines of each container to answer with, 0 to 5000 (default 100).";
			json_decref(schema);
			schema = json_pack("{s:s, s:i, s:i, s:i}", "type", "integer", "minimum", 0,
					   "maximum", 5000, "default", 100);
		} else if (n == 6 && memcmp(start, "follow", 6) == 0) {
			desc = "true: a text/event-stream of the lines as they are written, instead of "
			       "one answer.";
			json_decref(schema);
			schema = json_pack("{s:s, s:[s,s], s:s}", "type", "string", "enum", "false", "true",
					   "default", "false");
		} else if (n == 5 && memcmp(start, "order", 5) == 0) {
			desc = "By creation time: desc (newest first, the default) or asc.";
			json_decref(schema);
			schema = json_pack("{s:s, s:[s,s], s:s}", "type", "string", "enum", "desc", "asc",
					   "default", "desc");
		}
		json_array_append_new(params, json_pack("{s:s%, s:s, s:b, s:s, s:o}", "name", start, n,
							"in", "query", "required", 0, "description",
							desc, "schema", schema));
	}
}

/* The success answer resp (stolen) under code, and under the route's
 * second success status too when it has one. */
static void add_success(json_t *responses, const struct sw_route *r, const char *code, json_t *resp)
{
	if (r->doc.also_status) {
		char also[8];
		snprintf(also, sizeof(also), "%d", r->doc.also_status);
		json_t *copy = json_deep_copy(resp);
		json_object_set_new(copy, "description", json_string(status_description(r->doc.also_status)));
		json_object_set_new(responses, also, copy);
	}
	json_object_set_new(responses, code, resp);
}

static int add_operation(json_t *paths, const struct sw_route *r)
{
	/* ":id" -> "{id}", and collect the parameters. */
	char path[256];
	size_t o = 0;
	json_t *params = json_array();
	for (const char *p = r->pattern; *p && o < sizeof(path) - 2;) {
		if (*p == ':') {
			const char *start = ++p;
			while (*p && *p != '/')
				p++;
			size_t n = (size_t)(p - start);
			if (o + n + 2 >= sizeof(path))
				break;
			path[o++] = '{';
			memcpy(path + o, start, n);
			o += n;
			path[o++] = '}';
			json_array_append_new(params,
				json_pack("{s:s%, s:s, s:b, s:{s:s}}", "name", start, n, "in", "path",
					  "required", 1, "schema", "type", "string"));
		} else {
			path[o++] = *p++;
		}
	}
	path[o] = '\0';
	json_t *item = json_object_get(paths, path);
	if (!item) {
		item = json_object();
		json_object_set_new(paths, path, item);
	}
	char method[16];
	snprintf(method, sizeof(method), "%s", sw_http_method_name(r->method));
	for (char *c = method; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c + 32);

	json_t *op = json_pack("{s:s, s:s, s:[s], s:s}", "summary", r->doc.summary, "description",
			       r->doc.description ? r->doc.description : "", "tags",
			       r->doc.tag ? r->doc.tag : "Other", "x-steward-access",
			       sw_access_name(r->access));
	char opid[300];
	snprintf(opid, sizeof(opid), "%s %s", method, r->pattern);
	json_object_set_new(op, "operationId", json_string(opid));
	add_query_params(params, r->doc.query);
	if (json_array_size(params))
		json_object_set(op, "parameters", params);
	json_decref(params);
	if (r->access == SW_ACCESS_PUBLIC)
		json_object_set_new(op, "security", json_array());
	else
		json_object_set_new(op, "security",
				    json_pack("[{s:[]},{s:[]}]", "sessionCookie", "apiToken"));
	if (r->doc.request_schema) {
		char ref[128];
		snprintf(ref, sizeof(ref), "#/components/schemas/%s", r->doc.request_schema);
		const char *media = r->doc.request_media ? r->doc.request_media : "application/json";
		json_object_set_new(op, "requestBody",
			json_pack("{s:b, s:{s:{s:{s:s}}}, s:s}", "required", 1, "content",
				  media, "schema", "$ref", ref, "description",
				  r->doc.request_media ? "Form fields as the schema names them; limited to the "
							 "route's body size."
						       : "JSON object; limited to the route's body size."));
	} else if (!r->max_body && is_unsafe(r->method)) {
		/* conn.c and dispatch.c take "{}" or nothing on a bodiless route. */
		json_object_set_new(op, "requestBody",
			json_pack("{s:b, s:{s:{s:{s:s}}}, s:s}", "required", 0, "content",
				  "application/json", "schema", "$ref", "#/components/schemas/EmptyBody",
				  "description", "None, or an empty JSON object."));
	}
	json_t *responses = json_object();
	char code[8];
	snprintf(code, sizeof(code), "%d", r->doc.success_status ? r->doc.success_status : 200);
	if (r->doc.media_type) {
		/* A body that is not the envelope: a log as text, an SSE stream. */
		json_t *resp = json_pack("{s:s, s:{s:{s:{s:s}}}}", "description",
					 status_description(atoi(code)), "content", r->doc.media_type,
					 "schema", "type", "string");
		add_success(responses, r, code, resp);
	} else if (r->doc.response_schema) {
		char ref[128];
		snprintf(ref, sizeof(ref), "#/components/schemas/%s", r->doc.response_schema);
		json_t *resp = json_pack("{s:s, s:{s:{s:{s:s, s:[s], s:{s:{s:s}}}}}}", "description",
					 status_description(atoi(code)), "content", "application/json",
					 "schema", "type", "object", "required", "data", "properties",
					 "data", "$ref", ref);
		if (r->doc.query && strstr(r->doc.query, "cursor")) {
			json_t *schema = json_object_get(json_object_get(json_object_get(
				json_object_get(resp, "content"), "application/json"), "schema"), "properties");
			json_object_set_new(schema, "pagination",
					    json_pack("{s:s}", "$ref", "#/components/schemas/Pagination"));
		}
		if (r->doc.success_status == 202 && (strcmp(r->doc.response_schema, "Job") == 0 ||
						      strcmp(r->doc.response_schema, "ServiceBackup") == 0))
			json_object_set_new(resp, "headers",
				json_pack("{s:{s:s, s:b, s:{s:s}}}", "Location", "description",
					  "/jobs/{id} of the job: GET it until it ends.", "required", 1,
					  "schema", "type", "string"));
		add_success(responses, r, code, resp);
	} else if (r->doc.success_status == 204 || r->doc.success_status == 101) {
		json_object_set_new(responses, code,
				    json_pack("{s:s}", "description", status_description(r->doc.success_status)));
	} else {
		json_object_set_new(responses, code,
			json_pack("{s:s, s:{s:{s:{s:s}}}}", "description", "OpenAPI 3.1 document",
				  "content", "application/json", "schema", "type", "object"));
	}
	add_errors(responses, r);
	json_object_set_new(op, "responses", responses);
	return json_object_set_new(item, method, op) == 0 ? 0 : -ENOMEM;
}

int sw_api_docs_build(const struct sw_router *router, char *err, size_t errlen)
{
	json_error_t je;
	json_t *comp = json_loads(components, JSON_REJECT_DUPLICATES, &je);
	if (!comp) {
		snprintf(err, errlen, "OpenAPI components do not parse: %s (line %d)", je.text, je.line);
		return -EINVAL;
	}
	json_t *doc = json_pack("{s:s, s:{s:s, s:s, s:s}, s:[{s:s}], s:o, s:{}}", "openapi", "3.1.0",
				"info", "title", "Steward API", "version", "0.1.0", "description",
				description, "servers", "url", "/", "components", comp, "paths");
	if (!doc) {
		snprintf(err, errlen, "OpenAPI document could not be built");
		return -ENOMEM;
	}
	json_t *schemas = json_object_get(comp, "schemas");
	for (size_t g = 0; sw_api_schema_group(g); g++) {
		json_t *more = json_loads(sw_api_schema_group(g), JSON_REJECT_DUPLICATES, &je);
		const char *name;
		json_t *schema;
		int bad = !more || !json_is_object(more);
		if (!bad)
			json_object_foreach(more, name, schema) {
				if (json_object_get(schemas, name)) {
					bad = 1;
					break;
				}
				json_object_set(schemas, name, schema);
			}
		json_decref(more);
		if (bad) {
			json_decref(doc);
			snprintf(err, errlen, "OpenAPI schemas of route group %zu do not parse or repeat a name", g);
			return -EINVAL;
		}
	}
	json_t *paths = json_object_get(doc, "paths");
	for (size_t i = 0; i < sw_router_count(router); i++) {
		if (sw_router_route(router, i)->flags & SW_ROUTE_DASHBOARD)
			continue; /* the dashboard's files are not API operations */
		if (add_operation(paths, sw_router_route(router, i)) < 0) {
			json_decref(doc);
			snprintf(err, errlen, "OpenAPI document could not be built");
			return -ENOMEM;
		}
	}
	free(doc_json);
	doc_json = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!doc_json) {
		snprintf(err, errlen, "OpenAPI document could not be serialised");
		return -ENOMEM;
	}
	doc_len = strlen(doc_json);
	return 0;
}

void sw_api_docs_free(void)
{
	free(doc_json);
	doc_json = NULL;
	doc_len = 0;
}

struct sw_str sw_api_docs_json(void)
{
	return sw_str_from(doc_json, doc_len);
}

void sw_api_docs(struct sw_http_request *req)
{
	sw_http_respond_static(req, 200, "application/json", sw_str_from(doc_json, doc_len));
}
