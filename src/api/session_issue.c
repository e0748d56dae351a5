/* Issuing a session (after a password, a second factor, a passkey, an
 * invitation or setup) with the account it answers, and re-authentication
 * of the signed-in caller before a change to how they sign in. Both are
 * used by sessions.c and by the second factors (two_factor.c, passkeys),
 * which sessions.c calls in turn: kept here, below both, so that no two
 * files call each other. */
#include <errno.h>
#include <stdio.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/http/http_auth.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements.h"

/* ---- accounts and issuing a session ---- */

static const struct sw_api_column user_columns[] = {
	{ "id", SW_DB_ACCOUNT_USER_ID, SW_API_COL_TEXT },
	{ "email", SW_DB_ACCOUNT_USER_EMAIL, SW_API_COL_TEXT },
	{ "name", SW_DB_ACCOUNT_USER_NAME, SW_API_COL_TEXT },
	{ "isOperator", SW_DB_ACCOUNT_USER_IS_OPERATOR, SW_API_COL_BOOL },
	{ "createdAt", SW_DB_ACCOUNT_USER_CREATED_AT, SW_API_COL_TEXT },
};

static const struct sw_api_column organization_columns[] = {
	{ "id", SW_DB_ACCOUNT_ORG_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_ACCOUNT_ORG_NAME, SW_API_COL_TEXT },
	{ "role", SW_DB_ACCOUNT_ROLE, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_ACCOUNT_ORG_CREATED_AT, SW_API_COL_TEXT },
};

void sw_api_write_account_values(struct sw_json *j, const char *const *account)
{
	sw_json_key(j, "user");
	sw_json_object_begin(j);
	sw_api_write_values(j, account, user_columns, SW_ARRAY_SIZE(user_columns));
	sw_json_object_end(j);
	sw_json_key(j, "organization");
	sw_json_object_begin(j);
	sw_api_write_values(j, account, organization_columns, SW_ARRAY_SIZE(organization_columns));
	sw_json_object_end(j);
}

void sw_api_write_account(struct sw_json *j, const PGresult *res, int row)
{
	const char *account[SW_DB_ACCOUNT_COLUMNS];
	for (int i = 0; i < SW_DB_ACCOUNT_COLUMNS; i++)
		account[i] = PQgetvalue(res, row, i);
	sw_api_write_account_values(j, account);
}


struct issue {
	struct sw_http_request *req;
	int status;
	char user_id[37];
	char session_id[37];
	char organization_id[37];
	char expires_at[40];
	char method[24];
};

void sw_api_answer_account(struct sw_http_request *req, int status, const char *const *account,
			   const char *key, const char *const *pairs, size_t npairs)
{
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_api_write_account_values(&j, account);
	sw_json_key(&j, key);
	sw_json_object_begin(&j);
	for (size_t i = 0; i + 1 < npairs * 2; i += 2) {
		sw_json_key(&j, pairs[i]);
		sw_json_cstr(&j, pairs[i + 1]);
	}
	sw_json_object_end(&j);
	sw_json_object_end(&j);
	sw_http_json_end(req, status, &buf, &j);
}

static void issue_account(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct issue *is = arg;
	struct sw_http_request *req = is->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The new session has no account."))
		return;
	const char *pairs[] = { "id", is->session_id, "method", is->method, "expiresAt", is->expires_at };
	const char *account[SW_DB_ACCOUNT_COLUMNS];
	for (int i = 0; i < SW_DB_ACCOUNT_COLUMNS; i++)
		account[i] = PQgetvalue(res, 0, i);
	sw_api_answer_account(req, is->status, account, "session", pairs, 3);
}

static void issue_created(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct issue *is = arg;
	struct sw_http_request *req = is->req;
	if (!sw_api_one_row(req, res, err, 403, "NO_ORGANIZATION", "The account belongs to no organization."))
		return;
	snprintf(is->session_id, sizeof(is->session_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(is->organization_id, sizeof(is->organization_id), "%s", PQgetvalue(res, 0, 1));
	snprintf(is->expires_at, sizeof(is->expires_at), "%s", PQgetvalue(res, 0, 4));
	const char *params[2] = { is->user_id, is->organization_id };
	sw_api_query(req, &sw_db_stmt_account, params, 2, issue_account, is);
}

void sw_api_issue_session(struct sw_http_request *req, const char *user_id,
			  const char *organization_id, const char *method, int status)
{
	struct issue *is = sw_arena_alloc(&req->arena, sizeof(*is));
	char token[SW_SESSION_TOKEN_LEN + 1];
	if (!is || sw_session_token_new(token) < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "A session could not be created.");
		return;
	}
	memset(is, 0, sizeof(*is));
	is->req = req;
	is->status = status;
	snprintf(is->user_id, sizeof(is->user_id), "%s", user_id);
	snprintf(is->method, sizeof(is->method), "%s", method);
	/* The cookie goes on the response now; it is useless unless the
	 * session row below is committed. */
	struct sw_buf cookie = { 0 };
	int r = sw_set_cookie_header(&cookie, SW_SESSION_COOKIE, sw_str_cstr(token), SW_SESSION_LIFETIME_S,
				     sw_auth_cookie_secure(sw_http_config(req)));
	if (r == 0)
		r = sw_http_add_header(req, "Set-Cookie", sw_str_from(cookie.data, cookie.len));
	sw_buf_release(&cookie);
	char hex[65];
	sw_sha256_hex(token, strlen(token), hex);
	OPENSSL_cleanse(token, sizeof(token));
	if (r < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "A session could not be created.");
		return;
	}
	const struct sw_http_header *ua = sw_http_request_header(req, SW_STR("User-Agent"));
	char *agent = ua ? sw_arena_strndup(&req->arena, ua->value.ptr, SW_MIN(ua->value.len, 256)) : NULL;
	const char *params[6] = { is->user_id, hex, method, sw_http_peer_address(req), agent,
				  organization_id };
	/* Recorded with the session, in its organization (the statement's). */
	char meta[96];
	snprintf(meta, sizeof(meta), "{\"method\":\"%s\"}", is->method); /* a fixed word */
	const struct sw_db_audit_row a = { NULL, is->user_id, "auth.session.created", "session", NULL,
					   sw_http_peer_address(req), meta };
	sw_api_query_audit_row(req, &sw_db_stmt_session_create, params, 6, &a, issue_created, is);
}

/* ---- re-authentication ---- */

struct reauth {
	struct sw_http_request *req;
	struct sw_api_secret password;
	struct sw_api_reauth ra;
};

/* Lets the caller release its state, then answers with the refusal. */
static void reauth_refused(struct reauth *r)
{
	sw_api_secret_wipe(&r->password);
	r->ra.done(r->ra.arg, false);
}

/* The refusal, once its audit record is written. */
static void reauth_answer_refusal(struct sw_http_request *req, void *arg)
{
	struct reauth *r = arg;
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, r->ra.field, r->ra.message);
	sw_http_validation_error(req, &fe);
}

static void reauth_verified(void *arg, bool ok)
{
	struct reauth *r = arg;
	struct sw_http_request *req = r->req;
	if (ok) {
		r->ra.done(r->ra.arg, true);
		return;
	}
	reauth_refused(r);
	const struct sw_db_audit_row a = { req->principal.organization_id, req->principal.user_id,
					   r->ra.audit_action, "user", req->principal.user_id, NULL,
					   r->ra.audit_metadata };
	sw_api_audit_first(req, &a, reauth_answer_refusal, r);
}

static void reauth_hash_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct reauth *r = arg;
	struct sw_http_request *req = r->req;
	if (err->code || PQntuples(res) != 1) {
		reauth_refused(r);
		sw_api_one_row(req, res, err, 401, "UNAUTHENTICATED", "The account no longer exists.");
		return;
	}
	int rc = sw_password_verify_async(req->loop, PQgetvalue(res, 0, 0),
					  sw_api_secret_str(&r->password), reauth_verified, r);
	sw_api_secret_wipe(&r->password);
	if (rc < 0) {
		reauth_refused(r);
		sw_api_busy(req);
	}
}

void sw_api_reauthenticate(struct sw_http_request *req, struct sw_api_secret *password,
			   const struct sw_api_reauth *ra)
{
	struct reauth *r = sw_arena_alloc(&req->arena, sizeof(*r));
	if (!r) {
		sw_api_secret_wipe(password);
		ra->done(ra->arg, false);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	*r = (struct reauth){ .req = req, .password = *password, .ra = *ra };
	*password = (struct sw_api_secret){ 0 };
	const char *params[1] = { req->principal.user_id };
	/* Not sw_api_query(): the caller releases its state before the answer. */
	int rc = sw_db_query(sw_db_pool_of(req->loop), &sw_db_stmt_user_password_hash, params, 1,
			     reauth_hash_read, r);
	if (rc < 0) {
		reauth_refused(r);
		sw_api_db_error(req, &(struct sw_db_error){ .code = rc });
	}
}
