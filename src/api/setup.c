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
#include "steward/auth/auth.h"
#include "steward/db/db.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements.h"

struct account_ctx {
	struct sw_http_request *req;
	bool signup;
	char email[SW_EMAIL_MAX_LEN + 1];
	char *name;
	char *org;      /* NULL: signup without an organization name */
	struct sw_api_secret password; /* wiped once hashed */
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
		sw_api_internal_error(req);
		return;
	}
	const char *params[4] = { ctx->email, ctx->name, encoded, ctx->org };
	/* The record names the new user in the new organization (the
	 * statement's audit shape). */
	const struct sw_db_audit_row a = { NULL, NULL,
					   ctx->signup ? "auth.signup.succeeded" : "auth.setup.succeeded",
					   "user", NULL, sw_http_peer_address(req), NULL };
	sw_api_query_audit_row(req, ctx->signup ? &sw_db_stmt_signup : &sw_db_stmt_setup, params, 4,
			       &a, account_result, ctx);
}

static void account_precheck(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct account_ctx *ctx = arg;
	struct sw_http_request *req = ctx->req;
	if (err->code) {
		sw_api_secret_wipe(&ctx->password);
		sw_api_db_error(req, err);
		return;
	}
	bool no_users = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") == 0;
	if (!ctx->signup && !no_users) {
		sw_api_secret_wipe(&ctx->password);
		sw_http_error(req, 409, "SETUP_COMPLETE", "Setup has already been completed.");
		return;
	}
	if (ctx->signup && no_users) {
		sw_api_secret_wipe(&ctx->password);
		sw_http_error(req, 409, "SETUP_REQUIRED",
			      "The installation has no users yet; complete POST /setup first.");
		return;
	}
	sw_api_secret_hash(req, &ctx->password, account_hashed, ctx);
}

static void account_begin(struct sw_http_request *req, bool signup)
{
	static const char *const known[] = { "email", "password", "name", "organizationName", NULL };
	struct sw_field_errors fe = { 0 };
	/* The raw body holds the password: parsed, it is no longer needed. */
	json_t *body;
	struct account_ctx *ctx = sw_api_state_with_body(req, sizeof(*ctx), known, true, &fe, &body);
	if (!ctx)
		return;
	ctx->signup = signup;

	struct sw_str password = SW_STR_NULL, name, org = SW_STR_NULL;
	sw_api_email_field(body, "email", ctx->email, &fe);
	sw_api_password_field(body, "password", &password, &fe);
	sw_api_name_field(body, "name", true, &name, &fe);
	bool has_org = sw_api_name_field(body, "organizationName", !signup, &org, &fe);
	if (fe.count) {
		sw_api_wipe_view(password);
		json_decref(body);
		sw_http_validation_error(req, &fe);
		return;
	}
	ctx->name = sw_arena_strndup(&req->arena, name.ptr, name.len);
	ctx->org = has_org ? sw_arena_strndup(&req->arena, org.ptr, org.len) : NULL;
	/* jansson's copy of the body holds the password too: keeping it wipes it. */
	bool kept = sw_api_secret_keep(req, password, &ctx->password);
	json_decref(body);
	if (!ctx->name || !kept || (has_org && !ctx->org)) {
		sw_api_secret_wipe(&ctx->password);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	if (!sw_api_query(req, &sw_db_stmt_user_count, NULL, 0, account_precheck, ctx))
		sw_api_secret_wipe(&ctx->password);
}

void sw_api_setup(struct sw_http_request *req)
{
	account_begin(req, false);
}

void sw_api_signup(struct sw_http_request *req)
{
	account_begin(req, true);
}
