/* Sign-in, sign-out, the current session, the user's sessions, password
 * change. (Two-factor, passkeys and password reset live beside this.)
 *
 * Decisions (also in the OpenAPI document):
 * - Sign-in answers 401 INVALID_CREDENTIALS for an unknown address and for
 *   a wrong password alike, after the same Argon2id work, so neither the
 *   answer nor its timing tells whether an account exists.
 * - A session lives 14 days after its last renewal; use renews it (at most
 *   hourly). The cookie is steward_session: HttpOnly, SameSite=Lax, Path=/,
 *   Secure when PUBLIC_BASE_URL is https.
 * - Password change needs the current password, and revokes every other
 *   session of the user (API tokens stay: they are revoked by name). */
#include <errno.h>
#include <stdio.h>
#include <openssl/crypto.h>
#include "steward/auth.h"
#include "steward/http_auth.h"
#include "steward/limits.h"
#include "steward/log.h"
#include "steward/ratelimit.h"
#include "steward/validate.h"
#include "api/internal.h"
#include "db/statements.h"

/* ---- sign-in ---- */

struct sign_in {
	struct sw_http_request *req;
	char email[SW_EMAIL_MAX_LEN + 1];
	char *password;
	size_t password_len;
	char user_id[37];
	bool found;
};

static void wipe(struct sign_in *s)
{
	if (s->password) {
		OPENSSL_cleanse(s->password, s->password_len);
		s->password = NULL;
	}
}

static void sign_in_verified(void *arg, bool ok)
{
	struct sign_in *s = arg;
	struct sw_http_request *req = s->req;
	if (!ok || !s->found) {
		sw_api_audit(req, NULL, s->found ? s->user_id : NULL, "auth.sign_in.failed", "user",
			     s->found ? s->user_id : NULL, "{\"reason\":\"invalid_credentials\"}");
		sw_http_error(req, 401, "INVALID_CREDENTIALS", "The e-mail address or the password is wrong.");
		return;
	}
	sw_ratelimit_reset(&sw_api_limit_sign_in_account, sw_str_cstr(s->email));
	sw_api_audit(req, NULL, s->user_id, "auth.sign_in.succeeded", "user", s->user_id,
		     "{\"method\":\"password\"}");
	sw_api_sign_in_continue(req, s->user_id);
}

/* After the password: the hook where a second factor is demanded. */
void sw_api_sign_in_continue(struct sw_http_request *req, const char *user_id)
{
	sw_api_two_factor_sign_in(req, user_id);
}

static void sign_in_user(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sign_in *s = arg;
	struct sw_http_request *req = s->req;
	if (err->code) {
		wipe(s);
		sw_api_db_error(req, err);
		return;
	}
	const char *hash = NULL;
	if (PQntuples(res) == 1) {
		s->found = true;
		snprintf(s->user_id, sizeof(s->user_id), "%s", PQgetvalue(res, 0, SW_DB_USER_ID));
		hash = PQgetvalue(res, 0, SW_DB_USER_PASSWORD_HASH);
	}
	int r = sw_password_verify_async(req->loop, hash, sw_str_from(s->password, s->password_len),
					 sign_in_verified, s);
	wipe(s);
	if (r < 0)
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
}

void sw_api_sign_in(struct sw_http_request *req)
{
	json_t *body = sw_http_json_body(req);
	OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (!body)
		return;
	struct sign_in *s = sw_arena_alloc(&req->arena, sizeof(*s));
	if (!s) {
		json_decref(body);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	memset(s, 0, sizeof(*s));
	s->req = req;
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "email", "password", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str email, password;
	const char *msg;
	if (sw_api_string_field(body, "email", &email, &fe, true) &&
	    !sw_valid_email(email, s->email, sizeof(s->email), &msg))
		sw_field_error(&fe, "email", msg);
	if (sw_api_string_field(body, "password", &password, &fe, true) &&
	    (password.len == 0 || password.len > 4 * SW_PASSWORD_MAX_LEN))
		sw_field_error(&fe, "password", "must be given");
	if (fe.count) {
		json_decref(body);
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!sw_api_rate_limit_sign_in(req, s->email)) {
		json_decref(body);
		return;
	}
	s->password = sw_arena_strndup(&req->arena, password.ptr, password.len);
	s->password_len = password.len;
	OPENSSL_cleanse((void *)password.ptr, password.len);
	json_decref(body);
	if (!s->password) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[1] = { s->email };
	if (!sw_api_query(req, &sw_db_stmt_user_by_email, params, 1, sign_in_user, s))
		wipe(s);
}

/* ---- the current session ---- */

static void answer_cleared_cookie(struct sw_http_request *req)
{
	struct sw_buf b = { 0 };
	if (sw_set_cookie_header(&b, SW_SESSION_COOKIE, SW_STR_NULL, 0,
				 sw_auth_cookie_secure(sw_http_config(req))) == 0)
		sw_http_add_header(req, "Set-Cookie", sw_str_from(b.data, b.len));
	sw_buf_release(&b);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void sign_out_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	(void)res;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	sw_auth_cache_forget_session(req->principal.credential_id);
	sw_api_audit(req, req->principal.organization_id, req->principal.user_id, "auth.sign_out",
		     "session", req->principal.credential_id, NULL);
	answer_cleared_cookie(req);
}

void sw_api_sign_out(struct sw_http_request *req)
{
	if (req->principal.credential != SW_CRED_SESSION) {
		sw_http_error(req, 400, "NOT_A_SESSION",
			      "Signing out ends a browser session; revoke an API token with DELETE /api-tokens/:id.");
		return;
	}
	const char *params[2] = { req->principal.credential_id, req->principal.user_id };
	sw_api_query(req, &sw_db_stmt_session_revoke, params, 2, sign_out_done, req);
}

static void session_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_http_error(req, 401, "UNAUTHENTICATED", "The session has ended.");
		return;
	}
	const char *pairs[] = { "type", req->principal.credential == SW_CRED_SESSION ? "SESSION" : "API_TOKEN",
				"id", req->principal.credential_id };
	sw_api_answer_account(req, 200, res, "credential", pairs, 2);
}

void sw_api_session(struct sw_http_request *req)
{
	const char *params[2] = { req->principal.user_id, req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_account, params, 2, session_done, req);
}

/* ---- the user's sessions ---- */

void sw_api_write_sessions(struct sw_http_request *req, const PGresult *res, const char *current_id)
{
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_array_begin(&j);
	for (int i = 0; i < PQntuples(res); i++) {
		sw_json_object_begin(&j);
		sw_json_key(&j, "id");
		sw_json_cstr(&j, PQgetvalue(res, i, 0));
		sw_json_key(&j, "method");
		sw_json_cstr(&j, PQgetvalue(res, i, 1));
		sw_json_key(&j, "ip");
		sw_json_cstr(&j, PQgetisnull(res, i, 2) ? NULL : PQgetvalue(res, i, 2));
		sw_json_key(&j, "userAgent");
		sw_json_cstr(&j, PQgetisnull(res, i, 3) ? NULL : PQgetvalue(res, i, 3));
		sw_json_key(&j, "createdAt");
		sw_json_cstr(&j, PQgetvalue(res, i, 4));
		sw_json_key(&j, "lastSeenAt");
		sw_json_cstr(&j, PQgetvalue(res, i, 5));
		sw_json_key(&j, "expiresAt");
		sw_json_cstr(&j, PQgetvalue(res, i, 6));
		sw_json_key(&j, "current");
		sw_json_bool(&j, current_id && strcmp(current_id, PQgetvalue(res, i, 0)) == 0);
		sw_json_object_end(&j);
	}
	sw_json_array_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

static void sessions_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	sw_api_write_sessions(req, res,
			      req->principal.credential == SW_CRED_SESSION ? req->principal.credential_id : NULL);
}

void sw_api_sessions_list(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.user_id };
	sw_api_query(req, &sw_db_stmt_sessions_list, params, 1, sessions_listed, req);
}

static void session_revoked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
		return;
	}
	char id[37];
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	sw_auth_cache_forget_session(id);
	sw_api_audit(req, req->principal.organization_id, req->principal.user_id, "auth.session.revoked",
		     "session", id, NULL);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

/* DELETE /auth/sessions/:id (own sessions) and, with the owner of the
 * sessions given, DELETE /users/:id/sessions/:sessionId. */
void sw_api_revoke_session_of(struct sw_http_request *req, const char *user_id, struct sw_str session_id)
{
	if (!sw_is_uuid(session_id)) {
		sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
		return;
	}
	char id[37];
	snprintf(id, sizeof(id), "%.*s", (int)session_id.len, session_id.ptr);
	const char *params[2] = { id, user_id };
	sw_api_query(req, &sw_db_stmt_session_revoke, params, 2, session_revoked, req);
}

void sw_api_sessions_revoke(struct sw_http_request *req)
{
	sw_api_revoke_session_of(req, req->principal.user_id, req->params.value[0]);
}

/* ---- password change ---- */

struct pw_change {
	struct sw_http_request *req;
	char *current;
	size_t current_len;
	char *next;
	size_t next_len;
};

static void pw_wipe(struct pw_change *p)
{
	if (p->current)
		OPENSSL_cleanse(p->current, p->current_len);
	if (p->next)
		OPENSSL_cleanse(p->next, p->next_len);
	p->current = p->next = NULL;
}

static void pw_changed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (err->code || PQntuples(res) != 1) {
		if (err->code)
			sw_api_db_error(req, err);
		else
			sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
		return;
	}
	sw_auth_cache_forget_user(req->principal.user_id);
	char meta[64];
	snprintf(meta, sizeof(meta), "{\"sessionsRevoked\":%s}", PQgetvalue(res, 0, 0));
	sw_api_audit(req, req->principal.organization_id, req->principal.user_id, "auth.password.changed",
		     "user", req->principal.user_id, meta);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void pw_hashed(void *arg, int herr, const char *encoded)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (herr < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
		return;
	}
	const char *keep = req->principal.credential == SW_CRED_SESSION ? req->principal.credential_id : NULL;
	const char *params[3] = { req->principal.user_id, encoded, keep };
	sw_api_query(req, &sw_db_stmt_password_change, params, 3, pw_changed, p);
}

static void pw_verified(void *arg, bool ok)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (!ok) {
		pw_wipe(p);
		sw_api_audit(req, req->principal.organization_id, req->principal.user_id,
			     "auth.password.change_failed", "user", req->principal.user_id, NULL);
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, "currentPassword", "is not the current password");
		sw_http_validation_error(req, &fe);
		return;
	}
	int r = sw_password_hash_async(req->loop, sw_str_from(p->next, p->next_len), pw_hashed, p);
	pw_wipe(p);
	if (r < 0)
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
}

static void pw_current_hash(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (err->code || PQntuples(res) != 1) {
		pw_wipe(p);
		if (err->code)
			sw_api_db_error(req, err);
		else
			sw_http_error(req, 401, "UNAUTHENTICATED", "The account no longer exists.");
		return;
	}
	int r = sw_password_verify_async(req->loop, PQgetvalue(res, 0, 0),
					 sw_str_from(p->current, p->current_len), pw_verified, p);
	if (r < 0) {
		pw_wipe(p);
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
	}
}

void sw_api_password_change(struct sw_http_request *req)
{
	json_t *body = sw_http_json_body(req);
	OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (!body)
		return;
	struct pw_change *p = sw_arena_alloc(&req->arena, sizeof(*p));
	if (!p) {
		json_decref(body);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	memset(p, 0, sizeof(*p));
	p->req = req;
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "currentPassword", "newPassword", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str cur, next;
	const char *msg;
	bool have_cur = sw_api_string_field(body, "currentPassword", &cur, &fe, true);
	if (sw_api_string_field(body, "newPassword", &next, &fe, true) &&
	    !sw_password_acceptable(next, &msg))
		sw_field_error(&fe, "newPassword", msg);
	if (!fe.count && have_cur) {
		p->current = sw_arena_strndup(&req->arena, cur.ptr, cur.len);
		p->current_len = cur.len;
		p->next = sw_arena_strndup(&req->arena, next.ptr, next.len);
		p->next_len = next.len;
	}
	if (have_cur)
		OPENSSL_cleanse((void *)cur.ptr, cur.len);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!p->current || !p->next) {
		pw_wipe(p);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[1] = { req->principal.user_id };
	if (!sw_api_query(req, &sw_db_stmt_user_password_hash, params, 1, pw_current_hash, p))
		pw_wipe(p);
}
