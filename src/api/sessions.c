/* Sessions: sign-in, sign-out, the current session, the user's sessions
 * and the password change. Issuing a session and re-authentication, which
 * the second factors use too, are in session_issue.c, so that two_factor.c
 * and this file do not call each other. (Two-factor, passkeys and password
 * reset live beside this.)
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
#include "steward/auth/auth.h"
#include "steward/http/http_auth.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements.h"

/* ---- sign-in ---- */

struct sign_in {
	struct sw_http_request *req;
	char email[SW_EMAIL_MAX_LEN + 1];
	struct sw_api_secret password;
	char user_id[37];
	bool found;
};

static void sign_in_refused(struct sw_http_request *req, void *arg)
{
	(void)arg;
	sw_http_error(req, 401, "INVALID_CREDENTIALS", "The e-mail address or the password is wrong.");
}

static void sign_in_recorded(struct sw_http_request *req, void *arg)
{
	struct sign_in *s = arg;
	sw_api_sign_in_continue(req, s->user_id);
}

/* The outcome is recorded before anything follows from it: no answer, no
 * session and no second-factor challenge without its audit record. */
static void sign_in_verified(void *arg, bool ok)
{
	struct sign_in *s = arg;
	struct sw_http_request *req = s->req;
	if (!ok || !s->found) {
		const char *user = s->found ? s->user_id : NULL;
		const struct sw_db_audit_row a = { NULL, user, "auth.sign_in.failed", "user", user, NULL,
						   "{\"reason\":\"invalid_credentials\"}" };
		sw_api_audit_first(req, &a, sign_in_refused, s);
		return;
	}
	sw_ratelimit_reset(&sw_api_limit_sign_in_account, sw_str_cstr(s->email));
	const struct sw_db_audit_row a = { NULL, s->user_id, "auth.sign_in.succeeded", "user",
					   s->user_id, NULL, "{\"method\":\"password\"}" };
	sw_api_audit_first(req, &a, sign_in_recorded, s);
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
		sw_api_secret_wipe(&s->password);
		sw_api_db_error(req, err);
		return;
	}
	const char *hash = NULL;
	if (PQntuples(res) == 1) {
		s->found = true;
		snprintf(s->user_id, sizeof(s->user_id), "%s", PQgetvalue(res, 0, SW_DB_USER_ID));
		hash = PQgetvalue(res, 0, SW_DB_USER_PASSWORD_HASH);
	}
	int r = sw_password_verify_async(req->loop, hash, sw_api_secret_str(&s->password),
					 sign_in_verified, s);
	sw_api_secret_wipe(&s->password);
	if (r < 0)
		sw_api_busy(req);
}

void sw_api_sign_in(struct sw_http_request *req)
{
	static const char *const known[] = { "email", "password", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct sign_in *s = sw_api_state_with_body(req, sizeof(*s), known, true, &fe, &body);
	if (!s)
		return;
	struct sw_str password;
	sw_api_email_field(body, "email", s->email, &fe);
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
	bool kept = sw_api_secret_keep(req, password, &s->password);
	json_decref(body);
	if (!kept) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[1] = { s->email };
	if (!sw_api_query(req, &sw_db_stmt_user_by_email, params, 1, sign_in_user, s))
		sw_api_secret_wipe(&s->password);
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
	sw_api_query_audited(req, &sw_db_stmt_session_revoke, params, 2, "auth.sign_out", "session",
			     NULL, NULL, sign_out_done, req);
}

static void answer_session(struct sw_http_request *req, const char *const *account)
{
	const char *pairs[] = { "type", req->principal.credential == SW_CRED_SESSION ? "SESSION" : "API_TOKEN",
				"id", req->principal.credential_id };
	sw_api_answer_account(req, 200, account, "credential", pairs, 2);
}

static void session_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_one_row(req, res, err, 401, "UNAUTHENTICATED", "The session has ended."))
		return;
	const char *account[SW_DB_ACCOUNT_COLUMNS];
	for (int i = 0; i < SW_DB_ACCOUNT_COLUMNS; i++)
		account[i] = PQgetvalue(res, 0, i);
	answer_session(req, account);
}

void sw_api_session(struct sw_http_request *req)
{
	/* The guard read the account with the credential (and caches it with
	 * the principal; renames and role changes forget it): no round trip. */
	if (req->principal.account.user_id) {
		const char *account[SW_DB_ACCOUNT_COLUMNS];
		sw_auth_account_values(&req->principal.account, account);
		answer_session(req, account);
		return;
	}
	const char *params[2] = { req->principal.user_id, req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_account, params, 2, session_done, req);
}

/* ---- the user's sessions ---- */

static const struct sw_api_column session_columns[] = {
	{ "id", 0, SW_API_COL_TEXT },
	{ "method", 1, SW_API_COL_TEXT },
	{ "ip", 2, SW_API_COL_NULLABLE },
	{ "userAgent", 3, SW_API_COL_NULLABLE },
	{ "createdAt", 4, SW_API_COL_TIME },
	{ "lastSeenAt", 5, SW_API_COL_TIME },
	{ "expiresAt", 6, SW_API_COL_TIME },
};

/* ctx: the id of the session in use, or NULL. */
static void write_session(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const char *current_id = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, session_columns, SW_ARRAY_SIZE(session_columns));
	sw_json_key(j, "current");
	sw_json_bool(j, current_id && strcmp(current_id, PQgetvalue(res, row, 0)) == 0);
	sw_json_object_end(j);
}

void sw_api_answer_sessions(struct sw_http_request *req, const PGresult *res,
			    const struct sw_db_error *err, const char *current_id)
{
	sw_api_answer_rows(req, res, err, write_session, current_id);
}

static void sessions_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	sw_api_answer_sessions(req, res, err,
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
	if (!sw_api_found(req, res, err))
		return;
	char id[37];
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	sw_auth_cache_forget_session(id);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

/* DELETE /auth/sessions/:id (own sessions) and, with the owner of the
 * sessions given, DELETE /users/:id/sessions/:sessionId. */
void sw_api_revoke_session_of(struct sw_http_request *req, const char *user_id, struct sw_str session_id)
{
	char id[37];
	if (!sw_api_uuid_param(req, session_id, id))
		return;
	const char *params[2] = { id, user_id };
	sw_api_query_audited(req, &sw_db_stmt_session_revoke, params, 2, "auth.session.revoked",
			     "session", NULL, NULL, session_revoked, req);
}

void sw_api_sessions_revoke(struct sw_http_request *req)
{
	sw_api_revoke_session_of(req, req->principal.user_id, req->params.value[0]);
}

/* ---- password change ---- */

struct pw_change {
	struct sw_http_request *req;
	struct sw_api_secret current;
	struct sw_api_secret next;
};

static void pw_changed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (!sw_api_found(req, res, err))
		return;
	sw_auth_cache_forget_user(req->principal.user_id);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void pw_hashed(void *arg, int herr, const char *encoded)
{
	struct pw_change *p = arg;
	struct sw_http_request *req = p->req;
	if (herr < 0) {
		sw_api_internal_error(req);
		return;
	}
	const char *keep = req->principal.credential == SW_CRED_SESSION ? req->principal.credential_id : NULL;
	const char *params[3] = { req->principal.user_id, encoded, keep };
	sw_api_query_audited(req, &sw_db_stmt_password_change, params, 3, "auth.password.changed", "user",
			     req->principal.user_id, NULL, pw_changed, p);
}

static void pw_reauthed(void *arg, bool ok)
{
	struct pw_change *p = arg;
	if (ok)
		sw_api_secret_hash(p->req, &p->next, pw_hashed, p);
	else
		sw_api_secret_wipe(&p->next);
}

void sw_api_password_change(struct sw_http_request *req)
{
	static const char *const known[] = { "currentPassword", "newPassword", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct pw_change *p = sw_api_state_with_body(req, sizeof(*p), known, true, &fe, &body);
	if (!p)
		return;
	struct sw_str cur = SW_STR_NULL, next = SW_STR_NULL;
	bool have_cur = sw_api_string_field(body, "currentPassword", &cur, &fe, true);
	sw_api_password_field(body, "newPassword", &next, &fe);
	bool kept = !fe.count && have_cur && sw_api_secret_keep(req, cur, &p->current) &&
		    sw_api_secret_keep(req, next, &p->next);
	/* jansson's copy of the body holds both. */
	sw_api_wipe_view(cur);
	sw_api_wipe_view(next);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!kept) {
		sw_api_secret_wipe(&p->current);
		sw_api_secret_wipe(&p->next);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	sw_api_reauthenticate(req, &p->current, &(struct sw_api_reauth){
		.field = "currentPassword",
		.message = "is not the current password",
		.audit_action = "auth.password.change_failed",
		.done = pw_reauthed,
		.arg = p,
	});
}
