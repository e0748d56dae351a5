/* Password reset: a request that mails a single-use link, and the confirm
 * that spends it.
 *
 * Decisions (also in the OpenAPI document):
 * - POST /auth/password-reset answers 202 {"status":"accepted"} before it
 *   looks anything up, whether the address belongs to an account or not,
 *   and whether mail is configured or not: neither the answer nor its
 *   timing tells who has an account. The work goes on after the answer,
 *   with state of its own (the request is gone by then).
 * - The token is 32 random bytes (base64url, 43 characters), stored as its
 *   SHA-256, good for an hour (RESET_TTL_S) and once. A new request
 *   replaces the user's unused token, so only the latest mail works.
 * - Limits: 20 requests per client address per hour answer 429 (that
 *   reveals nothing about any account); past 5 per e-mail address per hour
 *   the request still answers 202 and no mail goes out, so nobody can
 *   flood a mailbox. Confirm: 30 per client address per 5 minutes.
 * - An unknown, used or expired token is 422 with fields.token "is invalid
 *   or has expired" (one message for all three).
 * - A successful confirm sets the password, revokes every session of the
 *   user (API tokens stay: they are revoked by name, as with a password
 *   change) and answers 204 without signing in: the user signs in with the
 *   new password, and a second factor still applies. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/net/mail.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_password_reset.h"

/* How long a mailed link works. */
#define RESET_TTL_S 3600
#define RESET_TOKEN_LEN SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) /* 43 */
#define INVALID_TOKEN "is invalid or has expired"

static const struct sw_ratelimit limit_request_address = { "password_reset_address", 20, 3600 };
static const struct sw_ratelimit limit_request_email = { "password_reset_email", 5, 3600 };
static const struct sw_ratelimit limit_confirm_address = { "password_reset_confirm_address", 30, 300 };

static const char accepted[] = "{\"data\":{\"status\":\"accepted\"}}";

/* ---- request: the part after the answer ---- */

/* Outlives the HTTP request: everything it needs is copied in. */
struct reset_request {
	struct sw_db_pool *db;
	const struct sw_config *config;
	char email[SW_EMAIL_MAX_LEN + 1];
	char ip[65];
	char token[RESET_TOKEN_LEN + 1];
};

static void reset_request_free(struct reset_request *rr)
{
	OPENSSL_cleanse(rr, sizeof(*rr));
	free(rr);
}

/* The link's base: PUBLIC_BASE_URL without trailing slashes, else the
 * listening address over http. */
static int append_base_url(struct sw_buf *b, const struct sw_config *cfg)
{
	const char *base = cfg->public_base_url;
	if (!base || !*base)
		return sw_buf_appendf(b, "http://%s", cfg->listen_str);
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	return sw_buf_append(b, base, n);
}

static int send_reset_mail(const struct reset_request *rr, const char *to)
{
	struct sw_buf text = { 0 };
	int r = sw_buf_appendf(&text,
			       "Hello,\n\n"
			       "someone asked to reset the password of the Steward account %s.\n"
			       "To choose a new password, open this link within %d minutes:\n\n",
			       to, RESET_TTL_S / 60);
	r = r ?: append_base_url(&text, rr->config);
	r = r ?: sw_buf_appendf(&text, "/reset-password?token=%s\n\n", rr->token);
	r = r ?: sw_buf_append_lit(&text,
				   "The link works once. If you did not ask for this, ignore this "
				   "message: your password stays as it is.\n");
	r = r ?: sw_buf_append(&text, "", 1);
	if (r == 0)
		r = sw_mail_send(to, "Reset your Steward password", text.data);
	if (text.data)
		OPENSSL_cleanse(text.data, text.len);
	sw_buf_release(&text);
	return r;
}

static void reset_created(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct reset_request *rr = arg;
	if (err->code) {
		sw_log_error("password reset not recorded (code %d, sqlstate %s)", err->code, err->sqlstate);
	} else if (PQntuples(res) == 1) {
		const char *user_id = PQgetvalue(res, 0, 0);
		int r = send_reset_mail(rr, PQgetvalue(res, 0, 1));
		if (r < 0)
			sw_log_error("password-reset mail not queued for user %s: %s", user_id,
				     strerror(-r));
	}
	reset_request_free(rr);
}

/* Starts the lookup and the token; the request has been answered. */
static void reset_request_start(struct reset_request *rr)
{
	char hex[65];
	if (sw_random_token(rr->token, sizeof(rr->token), SW_TOKEN_RANDOM_BYTES) < 0) {
		sw_log_error("password reset: the CSPRNG failed");
		reset_request_free(rr);
		return;
	}
	sw_sha256_hex(rr->token, strlen(rr->token), hex);
	char ttl[16];
	snprintf(ttl, sizeof(ttl), "%d", RESET_TTL_S);
	const char *params[4] = { rr->email, hex, rr->ip, ttl };
	/* Recorded with the token it creates (about the user found; nothing
	 * for an unknown address). */
	const struct sw_db_audit_row a = { NULL, NULL, "auth.password.reset_requested", "user", NULL,
					   rr->ip, NULL };
	int r = sw_db_query_audited(rr->db, &sw_db_stmt_password_reset_create, params, 4, &a,
				    reset_created, rr);
	if (r < 0) {
		sw_log_error("password reset not recorded: %s", strerror(-r));
		reset_request_free(rr);
	}
}

static void password_reset_request(struct sw_http_request *req)
{
	static const char *const known[] = { "email", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	char normalized[SW_EMAIL_MAX_LEN + 1];
	sw_api_email_field(body, "email", normalized, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!sw_api_rate_limit(req, &limit_request_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	/* Everything the work after the answer needs, taken before answering. */
	struct reset_request *rr = NULL;
	if (sw_mail_configured() && sw_ratelimit_take(&limit_request_email, sw_str_cstr(normalized),
						      sw_now_ms(), NULL)) {
		rr = calloc(1, sizeof(*rr));
		if (rr) {
			rr->db = sw_db_pool_of(req->loop);
			rr->config = sw_http_config(req);
			snprintf(rr->email, sizeof(rr->email), "%s", normalized);
			snprintf(rr->ip, sizeof(rr->ip), "%s", sw_http_peer_address(req));
		} else {
			sw_log_error("password reset dropped: out of memory");
		}
	}
	sw_http_respond_static(req, 202, "application/json", SW_STR(accepted));
	if (rr)
		reset_request_start(rr);
}

/* ---- confirm ---- */

struct reset_confirm {
	struct sw_http_request *req;
	char token_hash[65];
	struct sw_api_secret password; /* wiped once hashed */
};

/* Both statements answer one row for a live token. Otherwise wipes, answers
 * (a database error, or 422 on token) and returns false. */
static bool confirm_live(struct reset_confirm *c, const PGresult *res, const struct sw_db_error *err)
{
	if (!err->code && PQntuples(res) == 1)
		return true;
	sw_api_secret_wipe(&c->password);
	if (err->code) {
		sw_api_db_error(c->req, err);
	} else {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, "token", INVALID_TOKEN);
		sw_http_validation_error(c->req, &fe);
	}
	return false;
}

static void confirm_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct reset_confirm *c = arg;
	/* No row here: a concurrent confirm spent it, or it expired meanwhile. */
	if (!confirm_live(c, res, err))
		return;
	char user_id[37];
	snprintf(user_id, sizeof(user_id), "%s", PQgetvalue(res, 0, 0));
	sw_auth_cache_forget_user(user_id);
	/* The account's sign-in allowance starts afresh with the new password. */
	sw_ratelimit_reset(&sw_api_limit_sign_in_account, sw_str_cstr(PQgetvalue(res, 0, 1)));
	sw_http_respond(c->req, 204, NULL, SW_STR_NULL);
}

static void confirm_hashed(void *arg, int herr, const char *encoded)
{
	struct reset_confirm *c = arg;
	if (herr < 0) {
		sw_api_internal_error(c->req);
		return;
	}
	const char *params[2] = { c->token_hash, encoded };
	/* By the user, about themselves: the statement's audit shape. */
	const struct sw_db_audit_row a = { NULL, NULL, "auth.password.reset", "user", NULL,
					   sw_http_peer_address(c->req), NULL };
	sw_api_query_audit_row(c->req, &sw_db_stmt_password_reset_confirm, params, 2, &a, confirm_done, c);
}

/* The token is live: now the Argon2id work, then the confirm proper. */
static void confirm_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct reset_confirm *c = arg;
	if (confirm_live(c, res, err))
		sw_api_secret_hash(c->req, &c->password, confirm_hashed, c);
}

/* Reads {token, newPassword}: the token as its hash (left empty unless
 * well-formed; its text wiped), the password as a view into body. */
static void confirm_fields(json_t *body, char token_hash[65], struct sw_str *ret_password,
			   struct sw_field_errors *fe)
{
	/* The form of a session id: 32 random bytes in base64url. */
	sw_api_token_hash_field(body, "token", token_hash, INVALID_TOKEN, fe);
	sw_api_password_field(body, "newPassword", ret_password, fe);
}

static void confirm_start(struct sw_http_request *req, const char *token_hash, struct sw_str password)
{
	struct reset_confirm *c = sw_api_state_new(req, sizeof(*c));
	if (!c)
		return;
	if (!sw_api_secret_keep(req, password, &c->password)) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	snprintf(c->token_hash, sizeof(c->token_hash), "%s", token_hash);
	const char *params[1] = { c->token_hash };
	/* Not sw_api_query(): the copy is wiped before the answer frees it. */
	int r = sw_db_query(sw_db_pool_of(req->loop), &sw_db_stmt_password_reset_check, params, 1, confirm_checked, c);
	if (r < 0) {
		sw_api_secret_wipe(&c->password);
		sw_api_db_error(req, &(struct sw_db_error){ .code = r });
	}
}

static void password_reset_confirm(struct sw_http_request *req)
{
	static const char *const known[] = { "token", "newPassword", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, true, &fe);
	if (!body)
		return;
	struct sw_str password = SW_STR_NULL;
	char token_hash[65] = "";
	confirm_fields(body, token_hash, &password, &fe);
	if (fe.count)
		sw_http_validation_error(req, &fe);
	else if (sw_api_rate_limit(req, &limit_confirm_address, sw_str_cstr(sw_http_peer_address(req))))
		confirm_start(req, token_hash, password);
	/* The parsed body is on the heap, not in the request: wiped last,
	 * whatever was answered. */
	sw_api_wipe_view(password);
	json_decref(body);
}

/* ---- routes ---- */

static const int err_request[] = { 400, 413, 415, 422, 429, 0 };
static const int err_confirm[] = { 400, 413, 415, 422, 429, 500, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/auth/password-reset", SW_ACCESS_PUBLIC, password_reset_request, 4096, 0,
	  { "Ask for a password-reset link by e-mail",
	    "Always 202 {\"status\":\"accepted\"}, answered before any lookup: whether the address "
	    "belongs to an account, and whether mail is configured (SMTP_URL), cannot be told from "
	    "the answer or its timing. When it does belong to one, a link to PUBLIC_BASE_URL"
	    "/reset-password?token=... is mailed; it works once, for 1 hour, and replaces any earlier "
	    "link. 20 requests per client address per hour (then 429 with Retry-After); past 5 per "
	    "e-mail address per hour the answer stays 202 and no mail is sent.",
	    "Authentication", "PasswordResetRequest", "PasswordResetAccepted", 202, err_request } },
	{ SW_HTTP_POST, "/auth/password-reset/confirm", SW_ACCESS_PUBLIC, password_reset_confirm,
	  4096, 0,
	  { "Set a new password with a mailed reset token",
	    "Spends the token (once), sets the password and revokes every session of the user (API "
	    "tokens stay). Answers 204 and does not sign in: sign in with the new password (a second "
	    "factor still applies). An unknown, used or expired token is 422 with fields.token "
	    "\"" INVALID_TOKEN "\"; a password breaking the rules is 422 on newPassword. 30 attempts "
	    "per client address per 5 minutes (then 429). A success also refills the account's "
	    "sign-in allowance.",
	    "Authentication", "PasswordResetConfirmRequest", NULL, 204, err_confirm } },
};

static const char schemas[] = "{"
	"\"PasswordResetRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\"],\"properties\":{"
	"\"email\":{\"type\":\"string\",\"format\":\"email\",\"maxLength\":254}}},"
	"\"PasswordResetAccepted\":{\"type\":\"object\",\"required\":[\"status\"],\"properties\":{"
	"\"status\":{\"const\":\"accepted\"}}},"
	"\"PasswordResetConfirmRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"token\",\"newPassword\"],\"properties\":{"
	"\"token\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9_-]{43}$\",\"writeOnly\":true,"
	"\"description\":\"The token parameter of the mailed link.\"},"
	"\"newPassword\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true}}}"
	"}";

const struct sw_api_route_group sw_api_password_reset_group = { routes, SW_ARRAY_SIZE(routes), schemas };
