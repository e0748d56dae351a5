/* What every handler shares: database calls that answer the request on
 * failure, sessions issued with their cookie, the account body, audit
 * records, and reading JSON fields with field errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/auth.h"
#include "steward/db.h"
#include "steward/http_auth.h"
#include "steward/log.h"
#include "steward/secret.h"
#include "api/internal.h"
#include "db/statements.h"

void sw_api_db_error(struct sw_http_request *req, const struct sw_db_error *err)
{
	if (err->code == -EIO) {
		/* The SQLSTATE only: a server message may quote a bound value. */
		sw_log_error("database error sqlstate=%s rid=%.*s path=%.*s", err->sqlstate,
			     (int)req->request_id_len, req->request_id, (int)req->path.len, req->path.ptr);
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
		return;
	}
	sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The database is unavailable; try again shortly.");
}

bool sw_api_query(struct sw_http_request *req, const struct sw_db_stmt *stmt,
		  const char *const *params, int n, sw_db_cb cb, void *arg)
{
	int r = sw_db_query(sw_http_db(req), stmt, params, n, cb, arg);
	if (r < 0) {
		struct sw_db_error e = { .code = r };
		sw_api_db_error(req, &e);
		return false;
	}
	return true;
}

static void audit_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	(void)arg;
	(void)res;
	if (err->code)
		sw_log_error("audit record not written (code %d, sqlstate %s)", err->code, err->sqlstate);
}

void sw_api_audit(struct sw_http_request *req, const char *organization_id, const char *actor_user_id,
		  const char *action, const char *target_type, const char *target_id,
		  const char *metadata_json)
{
	const char *params[7] = { organization_id && *organization_id ? organization_id : NULL,
				  actor_user_id && *actor_user_id ? actor_user_id : NULL, action,
				  target_type, target_id, sw_http_peer_address(req), metadata_json };
	if (sw_db_query(sw_http_db(req), &sw_db_stmt_audit_insert, params, 7, audit_done, NULL) < 0)
		sw_log_error("audit record not written: %s (queue full)", action);
}

void sw_api_write_account(struct sw_json *j, const PGresult *res, int row)
{
	sw_json_key(j, "user");
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_USER_ID));
	sw_json_key(j, "email");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_USER_EMAIL));
	sw_json_key(j, "name");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_USER_NAME));
	sw_json_key(j, "isOperator");
	sw_json_bool(j, PQgetvalue(res, row, SW_DB_ACCOUNT_USER_IS_OPERATOR)[0] == 't');
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_USER_CREATED_AT));
	sw_json_object_end(j);
	sw_json_key(j, "organization");
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_ORG_ID));
	sw_json_key(j, "name");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_ORG_NAME));
	sw_json_key(j, "role");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_ROLE));
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_ACCOUNT_ORG_CREATED_AT));
	sw_json_object_end(j);
}

/* ---- issuing a session ---- */

struct issue {
	struct sw_http_request *req;
	int status;
	char user_id[37];
	char session_id[37];
	char organization_id[37];
	char expires_at[40];
	char method[24];
};

void sw_api_answer_account(struct sw_http_request *req, int status, const PGresult *res,
			   const char *key, const char *const *pairs, size_t npairs)
{
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_api_write_account(&j, res, 0);
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
	if (err->code || PQntuples(res) != 1) {
		if (err->code)
			sw_api_db_error(req, err);
		else
			sw_http_error(req, 500, "INTERNAL_ERROR", "The new session has no account.");
		return;
	}
	const char *pairs[] = { "id", is->session_id, "method", is->method, "expiresAt", is->expires_at };
	sw_api_answer_account(req, is->status, res, "session", pairs, 3);
}

static void issue_created(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct issue *is = arg;
	struct sw_http_request *req = is->req;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_http_error(req, 403, "NO_ORGANIZATION", "The account belongs to no organization.");
		return;
	}
	snprintf(is->session_id, sizeof(is->session_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(is->organization_id, sizeof(is->organization_id), "%s", PQgetvalue(res, 0, 1));
	snprintf(is->expires_at, sizeof(is->expires_at), "%s", PQgetvalue(res, 0, 4));
	char meta[96];
	snprintf(meta, sizeof(meta), "{\"method\":\"%s\"}", is->method); /* a fixed word */
	sw_api_audit(req, is->organization_id, is->user_id, "auth.session.created", "session",
		     is->session_id, meta);
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
	sw_api_query(req, &sw_db_stmt_session_create, params, 6, issue_created, is);
}

/* ---- JSON fields ---- */

bool sw_api_known_fields(json_t *body, const char *const *known, struct sw_field_errors *fe)
{
	const char *key;
	json_t *value;
	bool ok = true;
	json_object_foreach(body, key, value) {
		bool found = false;
		for (const char *const *k = known; *k && !found; k++)
			found = strcmp(*k, key) == 0;
		if (!found) {
			sw_field_error(fe, key, "is not a known field");
			ok = false;
		}
	}
	return ok;
}

bool sw_api_string_field(json_t *body, const char *key, struct sw_str *ret,
			 struct sw_field_errors *fe, bool required)
{
	json_t *v = json_object_get(body, key);
	if (!v) {
		if (required)
			sw_field_error(fe, key, "is required");
		return false;
	}
	if (!json_is_string(v)) {
		sw_field_error(fe, key, "must be a string");
		return false;
	}
	*ret = sw_str_from(json_string_value(v), json_string_length(v));
	if (memchr(ret->ptr, '\0', ret->len)) {
		sw_field_error(fe, key, "must not contain NUL characters");
		return false;
	}
	return true;
}
