/* API tokens: issue, list, revoke.
 *
 * A token is "st_" and 43 base64url characters (256 random bits). Only its
 * SHA-256 is stored, with the first 11 characters ("st_" + 8) as a prefix
 * a person can recognise it by; the value itself appears once, in the
 * answer to POST /api-tokens. The guard resolves "Authorization: Bearer
 * st_..." to the same principal a session cookie gives (user, organization,
 * role), so a token can do what its owner can do in that organization.
 *
 * Decisions (also in the OpenAPI document):
 * - A token belongs to a user and to the organization of the session that
 *   issued it; the list and the revoke see only the caller's tokens of the
 *   current organization (anything else is 404).
 * - Tokens are issued from a session only: a token cannot mint tokens
 *   (403 SESSION_REQUIRED), so revoking a leaked token is final.
 * - Expiry is optional: expiresInDays 1..365, or none.
 * - At most SW_API_TOKENS_LIVE_MAX live tokens per user and organization
 *   (409 TOKEN_LIMIT_REACHED); the list shows every live token and the most
 *   recent revoked or expired ones, SW_API_TOKENS_LIST_MAX records in all.
 * - DELETE revokes: the record stays with revokedAt, the token fails on the
 *   next request in every process (the statement notifies "token:<id>" and
 *   this process forgets it at once). Revoking a revoked token is 204 again
 *   (the state asked for holds), with no second audit record.
 * - lastUsedAt is recorded at most once a minute (the guard's touch). */
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_tokens.h"

#define EXPIRES_IN_DAYS_MAX 365

/* Columns of the token statements (statements_tokens.c, TOKEN_COLUMNS). */
enum { COL_ID, COL_NAME, COL_PREFIX, COL_CREATED, COL_EXPIRES, COL_LAST_USED, COL_REVOKED };

static const struct sw_api_column token_columns[] = {
	{ "id", COL_ID, SW_API_COL_TEXT },
	{ "name", COL_NAME, SW_API_COL_TEXT },
	{ "prefix", COL_PREFIX, SW_API_COL_TEXT },
	{ "createdAt", COL_CREATED, SW_API_COL_TEXT },
	{ "expiresAt", COL_EXPIRES, SW_API_COL_NULLABLE },
	{ "lastUsedAt", COL_LAST_USED, SW_API_COL_NULLABLE },
	{ "revokedAt", COL_REVOKED, SW_API_COL_NULLABLE },
};

/* One token record; ctx is the token itself (only when just issued) or
 * NULL. */
static void write_token(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const char *secret = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, token_columns, 3);
	if (secret) {
		sw_json_key(j, "token");
		sw_json_cstr(j, secret);
	}
	sw_api_write_columns(j, res, row, 0, token_columns + 3, SW_ARRAY_SIZE(token_columns) - 3);
	sw_json_object_end(j);
}

/* ---- POST /api-tokens ---- */

struct issue {
	struct sw_http_request *req;
	char token[SW_API_TOKEN_LEN + 1];
};

static void issued(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct issue *is = arg;
	struct sw_http_request *req = is->req;
	if (sw_api_one_row(req, res, err, 409, "TOKEN_LIMIT_REACHED",
			   "You hold the most live API tokens allowed; revoke one first.")) {
		sw_api_answer_row(req, 201, res, 0, write_token, is->token);
	}
	/* The request's arena stays writable until this completion returns. */
	OPENSSL_cleanse(is->token, sizeof(is->token));
}

/* expiresInDays: absent or null (no expiry), or an integer 1..365. *ret
 * is the number as text, or NULL. */
static void expiry_field(json_t *body, char ret[8], bool *ret_set, struct sw_field_errors *fe)
{
	json_t *v = json_object_get(body, "expiresInDays");
	*ret_set = false;
	if (!v || json_is_null(v))
		return;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > EXPIRES_IN_DAYS_MAX) {
		sw_field_error(fe, "expiresInDays", "must be a whole number of days from 1 to 365");
		return;
	}
	snprintf(ret, 8, "%d", (int)json_integer_value(v));
	*ret_set = true;
}

static void tokens_create(struct sw_http_request *req)
{
	if (req->principal.credential != SW_CRED_SESSION) {
		sw_http_error(req, 403, "SESSION_REQUIRED",
			      "API tokens are issued from a signed-in session, not with another token.");
		return;
	}
	static const char *const known[] = { "name", "expiresInDays", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	struct sw_str name;
	sw_api_name_field(body, "name", true, &name, &fe);
	char days[8];
	bool has_days;
	expiry_field(body, days, &has_days, &fe);
	char *name_copy = fe.count ? NULL : sw_arena_strndup(&req->arena, name.ptr, name.len);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct issue *is = sw_arena_alloc(&req->arena, sizeof(*is));
	char prefix[SW_API_TOKEN_PREFIX_LEN + 1];
	if (!is || !name_copy || sw_api_token_new(is->token, prefix) < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The token could not be created.");
		return;
	}
	is->req = req;
	char hex[65];
	sw_sha256_hex(is->token, strlen(is->token), hex);
	const char *params[6] = { req->principal.user_id, req->principal.organization_id, name_copy,
				  prefix, hex, has_days ? days : NULL };
	if (!sw_api_query_audited(req, &sw_db_stmt_token_create, params, 6, "api_token.issued",
				  "api_token", NULL, NULL, issued, is))
		OPENSSL_cleanse(is->token, sizeof(is->token));
}

/* ---- GET /api-tokens ---- */

static void listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_rows(arg, res, err, write_token, NULL);
}

static void tokens_list(struct sw_http_request *req)
{
	const char *params[2] = { req->principal.user_id, req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_tokens_list, params, 2, listed, req);
}

/* ---- DELETE /api-tokens/:id ---- */

static void revoked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_found(req, res, err))
		return;
	if (PQgetvalue(res, 0, 2)[0] == 't') {
		const char *id = PQgetvalue(res, 0, 0);
		sw_auth_cache_forget_token(id);
	}
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void tokens_revoke(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	const char *params[3] = { id, req->principal.user_id, req->principal.organization_id };
	sw_api_query_audited(req, &sw_db_stmt_token_revoke, params, 3, "api_token.revoked", "api_token",
			     NULL, NULL, revoked, req);
}

/* ---- routes and schemas ---- */

static const int err_create[] = { 400, 403, 409, 413, 415, 422, 503, 0 };
static const int err_read[] = { 503, 0 };
static const int err_delete[] = { 404, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/api-tokens", SW_ACCESS_SESSION, tokens_create, 4096, 0,
	  { "Issue an API token",
	    "Returns the token (st_...) once, in `token`; only its SHA-256 is stored, with `prefix` "
	    "(st_ and 8 characters) to recognise it by. Present it as `Authorization: Bearer st_...`; "
	    "it acts as its owner in the current organization, with the owner's role, and is exempt "
	    "from the CSRF origin check. Issued from a signed-in session only: with a token as the "
	    "credential the answer is 403 SESSION_REQUIRED. `expiresInDays` (1 to 365) sets an expiry; "
	    "without it the token lives until revoked. At most 100 live tokens per user and "
	    "organization (409 TOKEN_LIMIT_REACHED). Audited as api_token.issued.",
	    "API tokens", "ApiTokenCreateRequest", "ApiTokenCreated", 201, err_create } },
	{ SW_HTTP_GET, "/api-tokens", SW_ACCESS_SESSION, tokens_list, 0, 0,
	  { "The caller's API tokens in the current organization",
	    "Never the token values. Live tokens first, then revoked or expired ones, newest first "
	    "within each; at most 200 records. `lastUsedAt` is recorded at most once a minute.",
	    "API tokens", NULL, "ApiTokenList", 200, err_read } },
	{ SW_HTTP_DELETE, "/api-tokens/:id", SW_ACCESS_SESSION, tokens_revoke, 0, 0,
	  { "Revoke one of the caller's API tokens",
	    "The record stays, with `revokedAt`; the token fails with 401 from its next request on, "
	    "in every process. Revoking a token already revoked answers 204 again. 404 for a token "
	    "that is not the caller's in the current organization. A token may revoke itself. "
	    "Audited as api_token.revoked.",
	    "API tokens", NULL, NULL, 204, err_delete } },
};

#define TS "{\"type\":\"string\",\"format\":\"date-time\"}"
#define TS_OR_NULL "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define TOKEN_PROPERTIES                                                                        \
	"\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"                                     \
	"\"name\":{\"type\":\"string\"},"                                                         \
	"\"prefix\":{\"type\":\"string\",\"pattern\":\"^st_[A-Za-z0-9_-]{8}$\","                   \
	"\"description\":\"The first characters of the token, to recognise it by.\"},"          \
	"\"createdAt\":" TS ",\"expiresAt\":" TS_OR_NULL ",\"lastUsedAt\":" TS_OR_NULL ","        \
	"\"revokedAt\":" TS_OR_NULL
#define TOKEN_REQUIRED "\"id\",\"name\",\"prefix\",\"createdAt\",\"expiresAt\",\"lastUsedAt\",\"revokedAt\""

static const char schemas[] = "{"
	"\"ApiTokenCreateRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\"],\"properties\":{"
	"\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"
	"\"expiresInDays\":{\"type\":[\"integer\",\"null\"],\"minimum\":1,\"maximum\":365,"
	"\"description\":\"Absent or null: the token does not expire.\"}}},"
	"\"ApiToken\":{\"type\":\"object\",\"required\":[" TOKEN_REQUIRED "],\"properties\":{"
	TOKEN_PROPERTIES "}},"
	"\"ApiTokenCreated\":{\"type\":\"object\",\"required\":[" TOKEN_REQUIRED ",\"token\"],"
	"\"properties\":{" TOKEN_PROPERTIES ","
	"\"token\":{\"type\":\"string\",\"pattern\":\"^st_[A-Za-z0-9_-]{43}$\","
	"\"description\":\"The token itself; shown only in this response.\"}}},"
	"\"ApiTokenList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ApiToken\"}}"
	"}";

const struct sw_api_route_group sw_api_tokens_group = { routes, SW_ARRAY_SIZE(routes), schemas };
