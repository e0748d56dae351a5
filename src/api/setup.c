/* GET /setup-status, POST /setup, POST /signup.
 *
 * Setup and signup share one flow: validate the body, check cheaply that
 * the call can succeed (so a refused call costs no Argon2id), hash the
 * password on a worker, then one statement that does every write in one
 * transaction and settles races in the database (exactly one concurrent
 * setup wins; the others get SETUP_COMPLETE). */
#include <errno.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/auth.h"
#include "steward/db.h"
#include "steward/limits.h"
#include "steward/log.h"
#include "steward/validate.h"
#include "api/internal.h"
#include "db/statements.h"

struct account_ctx {
	struct sw_http_request *req;
	bool signup;
	char email[SW_EMAIL_MAX_LEN + 1];
	char *name;
	char *org;      /* NULL: signup without an organization name */
	char *password; /* wiped once hashed */
	size_t password_len;
};

void sw_api_setup_status(struct sw_http_request *req);

static void setup_status_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	bool required = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") == 0;
	static const char yes[] = "{\"data\":{\"setupRequired\":true}}";
	static const char no[] = "{\"data\":{\"setupRequired\":false}}";
	if (required)
		sw_http_respond_static(req, 200, "application/json", SW_STR(yes));
	else
		sw_http_respond_static(req, 200, "application/json", SW_STR(no));
}

void sw_api_setup_status(struct sw_http_request *req)
{
	sw_api_query(req, &sw_db_stmt_user_count, NULL, 0, setup_status_done, req);
}

static void wipe_password(struct account_ctx *ctx)
{
	if (ctx->password) {
		OPENSSL_cleanse(ctx->password, ctx->password_len);
		ctx->password = NULL;
	}
}

static void account_result(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct account_ctx *ctx = arg;
	struct sw_http_request *req = ctx->req;
	if (err->code == -EIO) {
		if (strcmp(err->sqlstate, SW_DB_SQLSTATE_SETUP_COMPLETE) == 0 ||
		    strcmp(err->sqlstate, SW_DB_SQLSTATE_SERIALIZATION_FAILURE) == 0) {
			sw_http_error(req, 409, "SETUP_COMPLETE", "Setup has already been completed.");
			return;
		}
		if (strcmp(err->sqlstate, SW_DB_SQLSTATE_SETUP_REQUIRED) == 0) {
			sw_http_error(req, 409, "SETUP_REQUIRED",
				      "The installation has no users yet; complete POST /setup first.");
			return;
		}
		if (strcmp(err->sqlstate, SW_DB_SQLSTATE_EMAIL_TAKEN) == 0) {
			struct sw_field_errors fe = { 0 };
			sw_field_error(&fe, "email", "is already registered");
			sw_http_validation_error(req, &fe);
			return;
		}
	}
	if (err->code || PQntuples(res) != 1 || PQnfields(res) <= SW_DB_ACCOUNT_ROLE) {
		if (!err->code)
			sw_log_error("setup statement returned an unexpected result");
		struct sw_db_error e = err->code ? *err : (struct sw_db_error){ .code = -EIO };
		sw_api_db_error(req, &e);
		return;
	}
	sw_api_audit(req, PQgetvalue(res, 0, SW_DB_ACCOUNT_ORG_ID), PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_ID),
		     ctx->signup ? "auth.signup.succeeded" : "auth.setup.succeeded", "user",
		     PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_ID), NULL);
	/* Signed in at once: the response carries the session cookie. (Last:
	 * the request may be answered, and gone, when this returns.) */
	sw_api_issue_session(req, PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_ID),
			     PQgetvalue(res, 0, SW_DB_ACCOUNT_ORG_ID), ctx->signup ? "SIGNUP" : "SETUP", 201);
}

static void account_hashed(void *arg, int herr, const char *encoded)
{
	struct account_ctx *ctx = arg;
	struct sw_http_request *req = ctx->req;
	if (herr < 0) {
		sw_log_error("password hashing failed: %s", strerror(-herr));
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
		return;
	}
	const char *params[4] = { ctx->email, ctx->name, encoded, ctx->org };
	sw_api_query(req, ctx->signup ? &sw_db_stmt_signup : &sw_db_stmt_setup, params, 4,
			account_result, ctx);
}

static void account_precheck(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct account_ctx *ctx = arg;
	struct sw_http_request *req = ctx->req;
	if (err->code) {
		wipe_password(ctx);
		sw_api_db_error(req, err);
		return;
	}
	bool no_users = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") == 0;
	if (!ctx->signup && !no_users) {
		wipe_password(ctx);
		sw_http_error(req, 409, "SETUP_COMPLETE", "Setup has already been completed.");
		return;
	}
	if (ctx->signup && no_users) {
		wipe_password(ctx);
		sw_http_error(req, 409, "SETUP_REQUIRED",
			      "The installation has no users yet; complete POST /setup first.");
		return;
	}
	int r = sw_password_hash_async(req->loop, sw_str_from(ctx->password, ctx->password_len),
				       account_hashed, ctx);
	wipe_password(ctx);
	if (r < 0)
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
}

static void account_begin(struct sw_http_request *req, bool signup)
{
	json_t *body = sw_http_json_body(req);
	/* The raw body holds the password: parsed, it is no longer needed. */
	OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (!body)
		return;
	struct account_ctx *ctx = sw_arena_alloc(&req->arena, sizeof(*ctx));
	if (!ctx) {
		json_decref(body);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	memset(ctx, 0, sizeof(*ctx));
	ctx->req = req;
	ctx->signup = signup;

	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "email", "password", "name", "organizationName", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str email, password, name, org = SW_STR_NULL;
	const char *msg;
	if (sw_api_string_field(body, "email", &email, &fe, true) &&
	    !sw_valid_email(email, ctx->email, sizeof(ctx->email), &msg))
		sw_field_error(&fe, "email", msg);
	if (sw_api_string_field(body, "password", &password, &fe, true) &&
	    !sw_password_acceptable(password, &msg))
		sw_field_error(&fe, "password", msg);
	if (sw_api_string_field(body, "name", &name, &fe, true) &&
	    !sw_valid_display_name(name, SW_NAME_MAX_LEN, &name, &msg))
		sw_field_error(&fe, "name", msg);
	bool has_org = sw_api_string_field(body, "organizationName", &org, &fe, !signup);
	if (has_org && !sw_valid_display_name(org, SW_NAME_MAX_LEN, &org, &msg)) {
		sw_field_error(&fe, "organizationName", msg);
		has_org = false;
	}
	if (fe.count) {
		json_decref(body);
		sw_http_validation_error(req, &fe);
		return;
	}
	ctx->name = sw_arena_strndup(&req->arena, name.ptr, name.len);
	ctx->org = has_org ? sw_arena_strndup(&req->arena, org.ptr, org.len) : NULL;
	ctx->password = sw_arena_strndup(&req->arena, password.ptr, password.len);
	ctx->password_len = password.len;
	/* jansson's copy of the body holds the password too. */
	OPENSSL_cleanse((void *)password.ptr, password.len);
	json_decref(body);
	if (!ctx->name || !ctx->password || (has_org && !ctx->org)) {
		wipe_password(ctx);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	if (!sw_api_query(req, &sw_db_stmt_user_count, NULL, 0, account_precheck, ctx))
		wipe_password(ctx);
}

void sw_api_setup(struct sw_http_request *req)
{
	account_begin(req, false);
}

void sw_api_signup(struct sw_http_request *req)
{
	account_begin(req, true);
}
