/* Two-factor authentication (TOTP, RFC 6238): enrolment, confirmation with
 * recovery codes, disabling, and the second step of sign-in.
 *
 * Decisions (also in the OpenAPI document):
 * - Enrolling and disabling re-authenticate with the password (422 on
 *   field password when wrong), whatever credential the caller holds.
 * - POST /auth/two-factor stores a pending key and returns it (base32) and
 *   its otpauth:// URI; calling it again replaces a pending key (409
 *   TWO_FACTOR_ENABLED once enabled). Nothing changes for sign-in until
 *   POST /auth/two-factor/confirm proves a code, which enables it and
 *   returns ten recovery codes, the only time they are shown.
 * - DELETE /auth/two-factor takes the password in a JSON body (the spec
 *   names the one path /auth/two-factor for enrolling and disabling). It
 *   deletes the enrolment, enabled or pending, its recovery codes and its
 *   open challenges; 409 TWO_FACTOR_NOT_ENABLED when there is none.
 * - Sign-in of an enrolled user answers 200 {twoFactorRequired, challenge,
 *   expiresAt} and sets no cookie. The challenge is 32 random bytes
 *   (stored as SHA-256), lives 5 minutes, is consumed by the verification
 *   that issues the session, and dies after 5 wrong codes.
 * - POST /auth/two-factor/verify: a wrong code is 401 INVALID_CODE (the
 *   challenge can be tried again); an unknown, expired, used or dead
 *   challenge is 401 CHALLENGE_INVALID (sign in again). Limited per
 *   address (30 / 5 min, before the challenge is looked up) and per account
 *   (5 / 5 min; a success refills it), 429 with Retry-After.
 * - A code is accepted once: the enrolment keeps the newest step accepted
 *   (by confirmation or verification) and only a newer one passes, decided
 *   in the accepting statement itself so that concurrent requests with
 *   the same code cannot both pass. One step of clock drift either way.
 * - A recovery code replaces a TOTP code once; stored as the SHA-256 of
 *   the user id and the code in normal form (case, spaces and the hyphen
 *   do not matter when typed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/auth/totp.h"
#include "api/api_internal.h"
#include "steward/db/statements_two_factor.h"

#define CHALLENGE_TTL_S 300
#define CHALLENGE_RANDOM_BYTES 32
#define MAX_FAILURES 5             /* wrong codes before a challenge dies */
#define RECOVERY_CODES 10
#define CODE_INPUT_MAX 16          /* bytes of a typed TOTP code considered at all */
#define ISSUER "Steward"
#define CHALLENGE_UNKNOWN "The sign-in challenge is unknown, expired or used; sign in again."


/* Opens a TOTP key as stored: sealed under the master key ("v1.", bound to
 * "totp:<user id>"), or the hex of an enrolment made before keys were
 * sealed (it stays readable until the user enrols again). */
static bool key_open(const char *user_id, const char *stored, uint8_t *key, size_t cap,
		     size_t *ret_len)
{
	if (strncmp(stored, "v1.", 3) != 0)
		return sw_hex_decode(sw_str_cstr(stored), key, cap, ret_len);
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_totp(aad, user_id);
	return sw_unseal(stored, aad, key, cap, ret_len) == 0;
}

/* Reads one string field of a body that has no others: 422 (answered) and
 * false when it is missing, not a string, or too long. On success the
 * value is kept in the arena (*ret) and wiped in the JSON and the raw
 * body, since it is a password or a code. */
static bool read_secret_field(struct sw_http_request *req, const char *field, size_t max,
			      const char *too_long, struct sw_api_secret *ret)
{
	const char *const known[] = { field, NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, true, &fe);
	if (!body)
		return false;
	struct sw_str v = SW_STR_NULL;
	bool have = sw_api_string_field(body, field, &v, &fe, true);
	if (have && (v.len == 0 || v.len > max))
		sw_field_error(&fe, field, too_long);
	bool kept = !fe.count && sw_api_secret_keep(req, v, ret);
	sw_api_wipe_view(v);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return false;
	}
	if (!kept) {
		sw_api_internal_error(req);
		return false;
	}
	return true;
}

/* ---- the caller's state, and re-authentication ---- */

struct tf {
	struct sw_http_request *req;
	struct sw_api_secret input; /* the password or the code, wiped once used */
	void (*then)(struct tf *t); /* after the state row (and the password) */
	char email[SW_EMAIL_MAX_LEN + 1];
	char state[16];             /* NONE, PENDING, ENABLED */
	char stored_key[192];       /* as stored: sealed text (or legacy hex) */
	int64_t last_used_step;
};

static void tf_state_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct tf *t = arg;
	struct sw_http_request *req = t->req;
	if (!sw_api_one_row(req, res, err, 401, "UNAUTHENTICATED", "The account no longer exists.")) {
		sw_api_secret_wipe(&t->input);
		return;
	}
	snprintf(t->email, sizeof(t->email), "%s", PQgetvalue(res, 0, SW_DB_TWO_FACTOR_EMAIL));
	snprintf(t->state, sizeof(t->state), "%s", PQgetvalue(res, 0, SW_DB_TWO_FACTOR_STATE));
	snprintf(t->stored_key, sizeof(t->stored_key), "%s",
		 PQgetvalue(res, 0, SW_DB_TWO_FACTOR_STORED_KEY));
	t->last_used_step = PQgetisnull(res, 0, SW_DB_TWO_FACTOR_LAST_USED_STEP) ? -1 :
			    strtoll(PQgetvalue(res, 0, SW_DB_TWO_FACTOR_LAST_USED_STEP), NULL, 10);
	t->then(t);
}

static void tf_read_state(struct tf *t)
{
	const char *params[1] = { t->req->principal.user_id };
	if (!sw_api_query(t->req, &sw_db_stmt_two_factor_state, params, 1, tf_state_read, t))
		sw_api_secret_wipe(&t->input);
}

static void tf_reauthed(void *arg, bool ok)
{
	if (ok)
		tf_read_state(arg);
}

/* Starts a Session handler: reads the one body field (the password when
 * reauth_metadata is given, else the code), with the password
 * re-authenticates (the audit record of a wrong one carries
 * reauth_metadata), then reads the caller's two-factor state, then runs
 * then(t). Everything on failure is answered. */
static void tf_start(struct sw_http_request *req, const char *field, const char *reauth_metadata,
		     void (*then)(struct tf *t))
{
	struct tf *t = sw_api_state_new(req, sizeof(*t));
	if (!t)
		return;
	t->then = then;
	bool reauth = reauth_metadata != NULL;
	size_t max = reauth ? 4 * SW_PASSWORD_MAX_LEN : CODE_INPUT_MAX;
	const char *msg = reauth ? "must be given" : "must be the 6-digit code of the authenticator app";
	if (!read_secret_field(req, field, max, msg, &t->input))
		return;
	if (!reauth) {
		tf_read_state(t);
		return;
	}
	sw_api_reauthenticate(req, &t->input, &(struct sw_api_reauth){
		.field = field,
		.message = "is not the account's password",
		.audit_action = "auth.two_factor.reauthentication_failed",
		.audit_metadata = reauth_metadata,
		.done = tf_reauthed,
		.arg = t,
	});
}

/* ---- GET /auth/two-factor ---- */

static void status_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_one_row(req, res, err, 401, "UNAUTHENTICATED", "The account no longer exists."))
		return;
	const char *state = PQgetvalue(res, 0, SW_DB_TWO_FACTOR_STATE);
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "enabled");
	sw_json_bool(&j, strcmp(state, "ENABLED") == 0);
	sw_json_key(&j, "pending");
	sw_json_bool(&j, strcmp(state, "PENDING") == 0);
	sw_json_key(&j, "enabledAt");
	sw_json_cstr(&j, sw_api_nullable(res, 0, SW_DB_TWO_FACTOR_ENABLED_AT));
	sw_json_key(&j, "recoveryCodesRemaining");
	sw_json_int(&j, strtoll(PQgetvalue(res, 0, SW_DB_TWO_FACTOR_RECOVERY_LEFT), NULL, 10));
	sw_json_object_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

static void two_factor_status(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.user_id };
	sw_api_query(req, &sw_db_stmt_two_factor_state, params, 1, status_read, req);
}

/* ---- POST /auth/two-factor: enrolment ---- */

struct enrol {
	struct tf *t;
	uint8_t secret[SW_TOTP_SECRET_LEN];
};

static void enrolled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct enrol *e = arg;
	struct sw_http_request *req = e->t->req;
	if (!sw_api_one_row(req, res, err, 409, "TWO_FACTOR_ENABLED",
			    "Two-factor authentication is already enabled; disable it first.")) {
		OPENSSL_cleanse(e->secret, sizeof(e->secret));
		return;
	}
	char b32[SW_BASE32_LEN(SW_TOTP_SECRET_LEN) + 1];
	struct sw_buf uri = { 0 };
	int r = sw_base32_encode(e->secret, sizeof(e->secret), b32, sizeof(b32));
	/* An address with ':' cannot be an otpauth label: the user id can. */
	if (r == 0 && sw_totp_uri(&uri, ISSUER, e->t->email, e->secret, sizeof(e->secret)) < 0)
		r = sw_totp_uri(&uri, ISSUER, req->principal.user_id, e->secret, sizeof(e->secret));
	OPENSSL_cleanse(e->secret, sizeof(e->secret));
	if (r < 0) {
		OPENSSL_cleanse(b32, sizeof(b32));
		sw_buf_release(&uri);
		sw_api_internal_error(req);
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "secret");
	sw_json_cstr(&j, b32);
	sw_json_key(&j, "otpauthUri");
	sw_json_string(&j, sw_str_from(uri.data, uri.len));
	sw_json_key(&j, "confirmed");
	sw_json_bool(&j, false);
	sw_json_object_end(&j);
	OPENSSL_cleanse(b32, sizeof(b32));
	OPENSSL_cleanse(uri.data, uri.len);
	sw_buf_release(&uri);
	sw_http_json_end(req, 200, &buf, &j);
}

static void enrol_reauthed(struct tf *t)
{
	struct sw_http_request *req = t->req;
	if (strcmp(t->state, "ENABLED") == 0) {
		sw_http_error(req, 409, "TWO_FACTOR_ENABLED",
			      "Two-factor authentication is already enabled; disable it first.");
		return;
	}
	struct enrol *e = sw_arena_alloc(&req->arena, sizeof(*e));
	if (!e || sw_totp_new_secret(e->secret) < 0) {
		sw_api_internal_error(req);
		return;
	}
	e->t = t;
	/* The key is sealed before it leaves for the database. */
	char aad[SW_SEAL_AAD_MAX], sealed[192];
	sw_seal_aad_totp(aad, req->principal.user_id);
	if (sw_seal(e->secret, sizeof(e->secret), aad, sealed, sizeof(sealed)) < 0) {
		OPENSSL_cleanse(e->secret, sizeof(e->secret));
		sw_api_internal_error(req);
		return;
	}
	const char *params[2] = { req->principal.user_id, sealed };
	if (!sw_api_query_audited(req, &sw_db_stmt_two_factor_enrol, params, 2,
				  "auth.two_factor.enrolment_started", "user", NULL, NULL, enrolled, e))
		OPENSSL_cleanse(e->secret, sizeof(e->secret));
}

static void two_factor_enrol(struct sw_http_request *req)
{
	tf_start(req, "password", "{\"operation\":\"enrol\"}", enrol_reauthed);
}

/* ---- POST /auth/two-factor/confirm ---- */

struct confirm {
	struct sw_http_request *req;
	char codes[RECOVERY_CODES][SW_RECOVERY_CODE_LEN + 1];
};

static void confirm_wipe(struct confirm *c)
{
	OPENSSL_cleanse(c->codes, sizeof(c->codes));
}

static void confirmed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct confirm *c = arg;
	struct sw_http_request *req = c->req;
	if (err->code || PQntuples(res) != 1 || atoi(PQgetvalue(res, 0, 0)) != RECOVERY_CODES) {
		confirm_wipe(c);
		if (err->code)
			sw_api_db_error(req, err);
		else
			sw_http_error(req, 409, "TWO_FACTOR_CHANGED",
				      "The enrolment changed meanwhile (enabled, restarted or the code "
				      "was used); check its state and start again.");
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "recoveryCodes");
	sw_json_array_begin(&j);
	for (int i = 0; i < RECOVERY_CODES; i++)
		sw_json_cstr(&j, c->codes[i]);
	sw_json_array_end(&j);
	sw_json_object_end(&j);
	confirm_wipe(c);
	sw_http_json_end(req, 200, &buf, &j);
}

/* SHA-256 hex of "<user id>:<normalized code>": the stored form. */
static void recovery_hash(const char *user_id, const char *code, char out[65])
{
	char in[37 + 1 + SW_RECOVERY_CODE_LEN + 1];
	int n = snprintf(in, sizeof(in), "%s:%s", user_id, code);
	sw_sha256_hex(in, n > 0 ? (size_t)n : 0, out);
	OPENSSL_cleanse(in, sizeof(in));
}

static void confirm_checked(struct tf *t)
{
	struct sw_http_request *req = t->req;
	if (strcmp(t->state, "PENDING") != 0) {
		sw_api_secret_wipe(&t->input);
		if (strcmp(t->state, "ENABLED") == 0)
			sw_http_error(req, 409, "TWO_FACTOR_ENABLED",
				      "Two-factor authentication is already enabled.");
		else
			sw_http_error(req, 409, "TWO_FACTOR_NOT_STARTED",
				      "Start enrolment with POST /auth/two-factor first.");
		return;
	}
	uint8_t key[64];
	size_t klen = 0;
	int64_t step = 0;
	bool ok = key_open(req->principal.user_id, t->stored_key, key, sizeof(key), &klen) &&
		  sw_totp_verify(key, klen, sw_api_secret_str(&t->input), (uint64_t)time(NULL),
				 t->last_used_step, &step);
	OPENSSL_cleanse(key, sizeof(key));
	sw_api_secret_wipe(&t->input);
	if (!ok) {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, "code", "is not the current code of the authenticator app");
		sw_http_validation_error(req, &fe);
		return;
	}
	struct confirm *c = sw_arena_alloc(&req->arena, sizeof(*c));
	/* "{" + 10 x (64 hex + ",") + "}" */
	char hashes[2 + RECOVERY_CODES * 65];
	if (!c) {
		sw_api_internal_error(req);
		return;
	}
	c->req = req;
	size_t o = 0;
	hashes[o++] = '{';
	for (int i = 0; i < RECOVERY_CODES; i++) {
		if (sw_recovery_code_new(c->codes[i]) < 0) {
			confirm_wipe(c);
			sw_api_internal_error(req);
			return;
		}
		if (i)
			hashes[o++] = ',';
		recovery_hash(req->principal.user_id, c->codes[i], hashes + o);
		o += 64;
	}
	hashes[o++] = '}';
	hashes[o] = '\0';
	char step_text[24];
	snprintf(step_text, sizeof(step_text), "%lld", (long long)step);
	const char *params[4] = { req->principal.user_id, step_text, t->stored_key, hashes };
	if (!sw_api_query_audited(req, &sw_db_stmt_two_factor_enable, params, 4, "auth.two_factor.enabled",
				  "user", req->principal.user_id, NULL, confirmed, c))
		confirm_wipe(c);
	OPENSSL_cleanse(t->stored_key, sizeof(t->stored_key));
}

static void two_factor_confirm(struct sw_http_request *req)
{
	tf_start(req, "code", NULL, confirm_checked);
}

/* ---- DELETE /auth/two-factor ---- */

static void disabled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_one_row(req, res, err, 409, "TWO_FACTOR_NOT_ENABLED",
			    "Two-factor authentication is not enabled."))
		return;
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void disable_reauthed(struct tf *t)
{
	struct sw_http_request *req = t->req;
	const char *params[1] = { req->principal.user_id };
	/* disabled or enrolment_cancelled: the statement's action */
	sw_api_query_audited(req, &sw_db_stmt_two_factor_disable, params, 1, NULL, "user",
			     req->principal.user_id, NULL, disabled, req);
}

static void two_factor_disable(struct sw_http_request *req)
{
	tf_start(req, "password", "{\"operation\":\"disable\"}", disable_reauthed);
}

/* ---- sign-in: the challenge ---- */

struct challenge {
	struct sw_http_request *req;
	char user_id[37];
	char token[SW_BASE64URL_LEN(CHALLENGE_RANDOM_BYTES) + 1];
};

static void challenge_created(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct challenge *c = arg;
	struct sw_http_request *req = c->req;
	char token[sizeof(c->token)];
	memcpy(token, c->token, sizeof(token));
	OPENSSL_cleanse(c->token, sizeof(c->token));
	if (err->code) {
		OPENSSL_cleanse(token, sizeof(token));
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1) {
		OPENSSL_cleanse(token, sizeof(token));
		sw_api_issue_session(req, c->user_id, NULL, "PASSWORD", 200);
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "twoFactorRequired");
	sw_json_bool(&j, true);
	sw_json_key(&j, "challenge");
	sw_json_cstr(&j, token);
	sw_json_key(&j, "expiresAt");
	sw_json_cstr(&j, PQgetvalue(res, 0, 0));
	sw_json_object_end(&j);
	OPENSSL_cleanse(token, sizeof(token));
	sw_http_json_end(req, 200, &buf, &j);
}

void sw_api_two_factor_sign_in(struct sw_http_request *req, const char *user_id)
{
	struct challenge *c = sw_arena_alloc(&req->arena, sizeof(*c));
	if (!c || sw_random_token(c->token, sizeof(c->token), CHALLENGE_RANDOM_BYTES) < 0) {
		sw_api_internal_error(req);
		return;
	}
	c->req = req;
	snprintf(c->user_id, sizeof(c->user_id), "%s", user_id);
	char hash[65], ttl[16];
	sw_sha256_hex(c->token, strlen(c->token), hash);
	snprintf(ttl, sizeof(ttl), "%d", CHALLENGE_TTL_S);
	const char *params[3] = { c->user_id, hash, ttl };
	if (!sw_api_query(req, &sw_db_stmt_two_factor_challenge_create, params, 3, challenge_created, c))
		OPENSSL_cleanse(c->token, sizeof(c->token));
}

/* ---- POST /auth/two-factor/verify ---- */

struct verify {
	struct sw_http_request *req;
	char token_hash[65];
	char code[CODE_INPUT_MAX + 1];
	size_t code_len;
	bool recovery;            /* a recovery code rather than a TOTP code */
	bool recovery_well_formed;
	char recovery_code[SW_RECOVERY_CODE_LEN + 1]; /* normalized */
	bool step_matched;        /* the TOTP code matched a step (maybe a used one) */
	char user_id[37];
};

static void verify_wipe(struct verify *v)
{
	OPENSSL_cleanse(v->code, sizeof(v->code));
	OPENSSL_cleanse(v->recovery_code, sizeof(v->recovery_code));
}

static void challenge_invalid(struct sw_http_request *req, const char *message)
{
	sw_http_error(req, 401, "CHALLENGE_INVALID", message);
}

static void session_after_recovery(struct sw_http_request *req, void *arg)
{
	struct verify *v = arg;
	sw_api_issue_session(req, v->user_id, NULL, "TWO_FACTOR", 200);
}

/* The attempt's record (verified or verify_failed) is written by the
 * attempt's own statement; a recovery code's use is recorded before the
 * session is issued. */
static void attempted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct verify *v = arg;
	struct sw_http_request *req = v->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The server failed to complete the request."))
		return;
	const char *outcome = PQgetvalue(res, 0, SW_DB_TWO_FACTOR_ATTEMPT_OUTCOME);
	long long remaining = strtoll(PQgetvalue(res, 0, SW_DB_TWO_FACTOR_ATTEMPT_REMAINING), NULL, 10);
	if (strcmp(outcome, "ACCEPTED") == 0) {
		sw_ratelimit_reset(&sw_api_limit_two_factor_account, sw_str_cstr(v->user_id));
		if (!v->recovery) {
			sw_api_issue_session(req, v->user_id, NULL, "TWO_FACTOR", 200);
			return;
		}
		char meta[64];
		snprintf(meta, sizeof(meta), "{\"recoveryCodesRemaining\":%lld}", remaining);
		const struct sw_db_audit_row a = { NULL, v->user_id, "auth.two_factor.recovery_code_used",
						   "user", v->user_id, NULL, meta };
		sw_api_audit_first(req, &a, session_after_recovery, v);
		return;
	}
	if (strcmp(outcome, "REJECTED") != 0) {
		challenge_invalid(req, CHALLENGE_UNKNOWN);
		return;
	}
	if (remaining <= 0)
		challenge_invalid(req, "Too many wrong codes for this sign-in; sign in again.");
	else
		sw_http_error(req, 401, "INVALID_CODE",
			      v->recovery ? "The recovery code is wrong or was used already." :
					    "The code is wrong or was used already.");
}

static void challenge_resolved(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct verify *v = arg;
	struct sw_http_request *req = v->req;
	if (!sw_api_one_row(req, res, err, 401, "CHALLENGE_INVALID", CHALLENGE_UNKNOWN)) {
		verify_wipe(v);
		return;
	}
	char challenge_id[37];
	snprintf(challenge_id, sizeof(challenge_id), "%s", PQgetvalue(res, 0, SW_DB_TWO_FACTOR_CHALLENGE_ID));
	snprintf(v->user_id, sizeof(v->user_id), "%s", PQgetvalue(res, 0, SW_DB_TWO_FACTOR_CHALLENGE_USER_ID));
	if (!sw_api_rate_limit(req, &sw_api_limit_two_factor_account, sw_str_cstr(v->user_id))) {
		verify_wipe(v);
		return;
	}
	char step_text[24], hash[65];
	const char *step_param = NULL, *hash_param = NULL;
	if (v->recovery) {
		if (v->recovery_well_formed) {
			recovery_hash(v->user_id, v->recovery_code, hash);
			hash_param = hash;
		}
	} else {
		uint8_t key[64];
		size_t klen = 0;
		int64_t step = 0;
		int64_t last = strtoll(PQgetvalue(res, 0, SW_DB_TWO_FACTOR_CHALLENGE_LAST_USED_STEP), NULL, 10);
		/* Matched against any step in the window, then against the
		 * newer-than-last rule, to tell a replay from a wrong code in
		 * the audit record; the database decides again atomically. */
		bool ok = key_open(v->user_id, PQgetvalue(res, 0, SW_DB_TWO_FACTOR_CHALLENGE_STORED_KEY),
				   key, sizeof(key), &klen) &&
			  sw_totp_verify(key, klen, sw_str_from(v->code, v->code_len),
					 (uint64_t)time(NULL), -1, &step);
		OPENSSL_cleanse(key, sizeof(key));
		v->step_matched = ok;
		if (ok && step > last) {
			snprintf(step_text, sizeof(step_text), "%lld", (long long)step);
			step_param = step_text;
		}
	}
	verify_wipe(v);
	char max[8];
	snprintf(max, sizeof(max), "%d", MAX_FAILURES);
	/* The reason a refusal is recorded with, as seen here: the database
	 * decides the outcome. */
	const char *reason = v->recovery ? "unknown_recovery_code" :
			     v->step_matched ? "code_already_used" : "wrong_code";
	char meta[64];
	snprintf(meta, sizeof(meta), "{\"method\":\"%s\"}", v->recovery ? "recovery_code" : "totp");
	const char *params[5] = { challenge_id, max, step_param, hash_param, reason };
	sw_api_query_audited(req, &sw_db_stmt_two_factor_attempt, params, 5, NULL, "user", NULL, meta,
			     attempted, v);
	OPENSSL_cleanse(hash, sizeof(hash));
}

static void two_factor_verify(struct sw_http_request *req)
{
	static const char *const known[] = { "challenge", "code", "recoveryCode", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct verify *v = sw_api_state_with_body(req, sizeof(*v), known, true, &fe, &body);
	if (!v)
		return;
	/* The challenge has the form of a session id (43 base64url characters
	 * of 32 random bytes); anything else is unknown: token_hash stays "". */
	sw_api_token_hash_field(body, "challenge", v->token_hash, NULL, &fe);
	struct sw_str code = SW_STR_NULL, recovery = SW_STR_NULL;
	bool have_code = sw_api_string_field(body, "code", &code, &fe, false);
	bool have_recovery = sw_api_string_field(body, "recoveryCode", &recovery, &fe, false);
	bool code_given = json_object_get(body, "code") != NULL;
	bool recovery_given = json_object_get(body, "recoveryCode") != NULL;
	if (code_given == recovery_given) {
		sw_field_error(&fe, "code", code_given ? "cannot be given together with recoveryCode" :
							 "is required (or recoveryCode)");
	}
	if (have_code && (code.len == 0 || code.len > CODE_INPUT_MAX))
		sw_field_error(&fe, "code", "must be the 6-digit code of the authenticator app");
	if (have_recovery && (recovery.len == 0 || recovery.len > SW_RECOVERY_CODE_INPUT_MAX))
		sw_field_error(&fe, "recoveryCode", "must be one of the recovery codes");
	if (!fe.count) {
		if (have_code) {
			memcpy(v->code, code.ptr, code.len);
			v->code_len = code.len;
		} else {
			v->recovery = true;
			v->recovery_well_formed = sw_recovery_code_normalize(recovery, v->recovery_code);
		}
	}
	sw_api_wipe_view(code);
	sw_api_wipe_view(recovery);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!sw_api_rate_limit(req, &sw_api_limit_two_factor_address,
			       sw_str_cstr(sw_http_peer_address(req)))) {
		verify_wipe(v);
		return;
	}
	if (!v->token_hash[0]) {
		verify_wipe(v);
		challenge_invalid(req, CHALLENGE_UNKNOWN);
		return;
	}
	char max[8];
	snprintf(max, sizeof(max), "%d", MAX_FAILURES);
	const char *params[2] = { v->token_hash, max };
	if (!sw_api_query(req, &sw_db_stmt_two_factor_challenge_resolve, params, 2, challenge_resolved, v))
		verify_wipe(v);
}

/* ---- routes ---- */

static const int err_status[] = { 503, 0 };
static const int err_reauth[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_verify[] = { 400, 401, 413, 415, 422, 429, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/auth/two-factor", SW_ACCESS_SESSION, two_factor_status, 0, 0,
	  { "The caller's two-factor state",
	    "enabled, pending (enrolled but not confirmed), when it was enabled, and how many "
	    "recovery codes are unused. Never the key.",
	    "Two-factor", NULL, "TwoFactorStatus", 200, err_status } },
	{ SW_HTTP_POST, "/auth/two-factor", SW_ACCESS_SESSION, two_factor_enrol, 4096, 0,
	  { "Start two-factor enrolment (TOTP)",
	    "Re-authenticates with the password (422 on field password when wrong). Returns a new "
	    "key (base32) and its otpauth:// URI (SHA-1, 6 digits, 30 s) for an authenticator "
	    "app, stored as a pending enrolment that changes nothing until confirmed; calling it "
	    "again replaces a pending key. 409 TWO_FACTOR_ENABLED when already enabled.",
	    "Two-factor", "TwoFactorPasswordRequest", "TwoFactorEnrolment", 200, err_reauth } },
	{ SW_HTTP_POST, "/auth/two-factor/confirm", SW_ACCESS_SESSION, two_factor_confirm, 4096, 0,
	  { "Enable two-factor with a code from the app",
	    "Needs a current code of the pending key (one step of clock drift either way; 422 on "
	    "field code when wrong); the code is then used up. Enables two-factor and returns ten "
	    "single-use recovery codes, shown this once and stored only as hashes. 409 "
	    "TWO_FACTOR_NOT_STARTED without a pending enrolment, TWO_FACTOR_ENABLED when already "
	    "enabled, TWO_FACTOR_CHANGED when the enrolment changed during the request.",
	    "Two-factor", "TwoFactorConfirmRequest", "TwoFactorRecoveryCodes", 200, err_reauth } },
	{ SW_HTTP_DELETE, "/auth/two-factor", SW_ACCESS_SESSION, two_factor_disable, 4096, 0,
	  { "Disable two-factor (or cancel a pending enrolment)",
	    "Takes the password in a JSON body {password} (422 on field password when wrong). "
	    "Deletes the key, the recovery codes and any open sign-in challenge; sign-in then "
	    "issues a session after the password alone. Sessions stay. 409 "
	    "TWO_FACTOR_NOT_ENABLED when there is no enrolment.",
	    "Two-factor", "TwoFactorPasswordRequest", NULL, 204, err_reauth } },
	{ SW_HTTP_POST, "/auth/two-factor/verify", SW_ACCESS_PUBLIC, two_factor_verify, 4096, 0,
	  { "Finish a sign-in with the second factor",
	    "POST /auth/sign-in answers an enrolled user with {twoFactorRequired: true, challenge, "
	    "expiresAt} (schema TwoFactorChallenge) and no cookie. This takes the challenge and a "
	    "code of the app, or one of the recovery codes, and issues the session (method "
	    "TWO_FACTOR, cookie as for sign-in). A code is accepted once, ever: a code already "
	    "used (even for another challenge) is refused. A challenge lives 5 minutes, is "
	    "consumed by success and dies after 5 wrong codes. 401 INVALID_CODE: wrong code, try "
	    "again; 401 CHALLENGE_INVALID: the challenge is unknown, expired, used or dead, sign "
	    "in again. Limited to 30 attempts per address and 5 per account per 5 minutes (429 "
	    "with Retry-After); a success refills the account's allowance.",
	    "Authentication", "TwoFactorVerifyRequest", "SessionResult", 200, err_verify } },
};

static const char schemas[] = "{"
	"\"TwoFactorStatus\":{\"type\":\"object\","
	"\"required\":[\"enabled\",\"pending\",\"enabledAt\",\"recoveryCodesRemaining\"],\"properties\":{"
	"\"enabled\":{\"type\":\"boolean\"},\"pending\":{\"type\":\"boolean\"},"
	"\"enabledAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
	"\"recoveryCodesRemaining\":{\"type\":\"integer\",\"minimum\":0}}},"
	"\"TwoFactorPasswordRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"password\"],\"properties\":{"
	"\"password\":{\"type\":\"string\",\"writeOnly\":true,\"description\":\"The account's password.\"}}},"
	"\"TwoFactorEnrolment\":{\"type\":\"object\",\"required\":[\"secret\",\"otpauthUri\",\"confirmed\"],"
	"\"properties\":{"
	"\"secret\":{\"type\":\"string\",\"pattern\":\"^[A-Z2-7]{32}$\","
	"\"description\":\"The 160-bit key, RFC 4648 base32 without padding.\"},"
	"\"otpauthUri\":{\"type\":\"string\",\"examples\":[\"otpauth://totp/Steward:ann%40example.com"
	"?secret=...&issuer=Steward&algorithm=SHA1&digits=6&period=30\"]},"
	"\"confirmed\":{\"const\":false}}},"
	"\"TwoFactorConfirmRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"code\"],\"properties\":{"
	"\"code\":{\"type\":\"string\",\"pattern\":\"^[0-9]{3} ?[0-9]{3}$\"}}},"
	"\"TwoFactorRecoveryCodes\":{\"type\":\"object\",\"required\":[\"recoveryCodes\"],\"properties\":{"
	"\"recoveryCodes\":{\"type\":\"array\",\"minItems\":10,\"maxItems\":10,\"items\":{"
	"\"type\":\"string\",\"pattern\":\"^[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}$\"},"
	"\"description\":\"Each works once in place of a code; shown only now.\"}}},"
	"\"SignInResult\":{\"oneOf\":[{\"$ref\":\"#/components/schemas/SessionResult\"},"
	"{\"$ref\":\"#/components/schemas/TwoFactorChallenge\"}],\"description\":\"The session, or "
	"(two-factor enabled) a challenge for POST /auth/two-factor/verify.\"},"
	"\"TwoFactorChallenge\":{\"type\":\"object\",\"required\":[\"twoFactorRequired\",\"challenge\",\"expiresAt\"],"
	"\"description\":\"What POST /auth/sign-in answers (200, no cookie) for a user with two-factor "
	"enabled.\",\"properties\":{"
	"\"twoFactorRequired\":{\"const\":true},"
	"\"challenge\":{\"type\":\"string\",\"description\":\"Opaque; pass it to POST /auth/two-factor/verify.\"},"
	"\"expiresAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"TwoFactorVerifyRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"challenge\"],\"oneOf\":[{\"required\":[\"code\"]},{\"required\":[\"recoveryCode\"]}],"
	"\"properties\":{"
	"\"challenge\":{\"type\":\"string\"},"
	"\"code\":{\"type\":\"string\",\"pattern\":\"^[0-9]{3} ?[0-9]{3}$\"},"
	"\"recoveryCode\":{\"type\":\"string\",\"description\":\"Case, spaces and the hyphen do not matter.\"}}}"
	"}";

const struct sw_api_route_group sw_api_two_factor_group = { routes, SW_ARRAY_SIZE(routes), schemas };
