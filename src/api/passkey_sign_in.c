/* Passkeys: the sign-in ceremony. POST /auth/passkeys/challenge issues a
 * challenge bound to no one; POST /auth/passkeys/verify consumes it, finds
 * the passkey by credential id, verifies the assertion
 * (sw_webauthn_verify_assertion()) and issues a session. The decisions are
 * stated in passkeys.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/limits.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/secret.h"
#include "api/passkeys.h"
#include "steward/db/statements_passkeys.h"

static const struct sw_ratelimit limit_challenge_address = { "passkey_challenge_address", 100, 300 };
static const struct sw_ratelimit limit_account = { "passkey_account", 10, 300 };

#define PASSKEY_GONE "This passkey is not registered here (any more); sign in with your password."
#define PASSKEY_REFUSED "The passkey could not be verified."

/* ---- POST /auth/passkeys/challenge ---- */

struct sign_in_challenge {
	struct sw_http_request *req;
	struct sw_api_passkey_challenge challenge;
};

static void challenge_stored(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sign_in_challenge *sc = arg;
	struct sw_http_request *req = sc->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The challenge was not stored."))
		return;
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "challenge");
	sw_json_cstr(&j, sc->challenge.text);
	sw_json_key(&j, "rpId");
	sw_json_cstr(&j, sw_api_passkey_rp_loaded()->rp_id);
	sw_json_key(&j, "timeout");
	sw_json_int(&j, SW_API_PASSKEY_CHALLENGE_TTL_S * 1000);
	sw_json_key(&j, "userVerification");
	sw_json_cstr(&j, "required");
	sw_json_object_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

void sw_api_passkeys_challenge(struct sw_http_request *req)
{
	if (!sw_api_passkey_rp(req) ||
	    !sw_api_rate_limit(req, &limit_challenge_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	struct sign_in_challenge *sc = sw_api_state_new(req, sizeof(*sc));
	if (!sc)
		return;
	if (!sw_api_passkey_challenge_new(&sc->challenge)) {
		sw_api_internal_error(req);
		return;
	}
	char ttl[16];
	snprintf(ttl, sizeof(ttl), "%d", SW_API_PASSKEY_CHALLENGE_TTL_S);
	const char *params[2] = { sc->challenge.hash, ttl };
	sw_api_query(req, &sw_db_stmt_passkey_challenge_create, params, 2, challenge_stored, sc);
}

/* ---- POST /auth/passkeys/verify ---- */

struct sign_in {
	struct sw_http_request *req;
	struct sw_webauthn_response in;
	char passkey_id[37]; /* "" until the credential is found */
	char user_id[37];
	long long stored_count;
	bool multi_device;
	struct sw_webauthn_assertion result;
	const char *refusal_code, *refusal_message; /* a refusal's answer, once recorded */
};

static void sign_in_answer_refusal(struct sw_http_request *req, void *arg)
{
	struct sign_in *s = arg;
	sw_http_error(req, 401, s->refusal_code, s->refusal_message);
}

/* The refusal is recorded, then answered (code and message: constants). */
static void sign_in_refused(struct sign_in *s, const char *code, const char *reason,
			    const char *message)
{
	s->refusal_code = code;
	s->refusal_message = message;
	json_t *m = json_pack("{s:s}", "reason", reason);
	char *meta = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!meta) {
		sw_api_internal_error(s->req);
		return;
	}
	const struct sw_db_audit_row a = { NULL, s->user_id[0] ? s->user_id : NULL,
					   "auth.passkey.sign_in_failed", "passkey",
					   s->passkey_id[0] ? s->passkey_id : NULL, NULL, meta };
	sw_api_audit_first(s->req, &a, sign_in_answer_refusal, s);
	free(meta);
}

static void sign_in_recorded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sign_in *s = arg;
	struct sw_http_request *req = s->req;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sign_in_refused(s, "PASSKEY_UNKNOWN", "deleted_during_sign_in", PASSKEY_GONE);
		return;
	}
	sw_ratelimit_reset(&limit_account, sw_str_cstr(s->user_id));
	sw_api_issue_session(req, s->user_id, NULL, "PASSKEY", 200);
}

/* The checks once the passkey is known: userHandle, then the assertion
 * itself, then backup eligibility (fixed at creation, §6.1). Records the
 * use when all pass. */
static void sign_in_check(struct sign_in *s, const char *public_key_hex)
{
	struct sw_http_request *req = s->req;
	uint8_t owner[SW_API_PASSKEY_UUID_BYTES];
	if (!s->in.user_handle_given || !sw_api_passkey_user_handle(s->user_id, owner) ||
	    !sw_ct_equal(owner, sizeof(owner), s->in.user_handle, s->in.user_handle_len)) {
		sign_in_refused(s, "PASSKEY_INVALID", "user handle does not name the passkey's owner",
				PASSKEY_REFUSED);
		return;
	}
	uint8_t key[SW_WEBAUTHN_MAX_PUBLIC_KEY];
	size_t key_len = 0;
	if (!sw_hex_decode(sw_str_cstr(public_key_hex), key, sizeof(key), &key_len)) {
		sw_api_internal_error(req);
		return;
	}
	char why[128];
	int r = sw_webauthn_verify_assertion(sw_api_passkey_rp_loaded(), s->in.client_data, s->in.client_data_len,
					     s->in.auth_data, s->in.auth_data_len, s->in.signature,
					     s->in.signature_len, s->in.challenge, s->in.challenge_len,
					     key, key_len, &s->result, why, sizeof(why));
	if (r == -ENOMEM || r == -EINVAL) {
		sw_api_internal_error(req);
		return;
	}
	if (r < 0 || s->result.backup_eligible != s->multi_device) {
		sign_in_refused(s, "PASSKEY_INVALID", r < 0 ? why : "backup eligibility changed",
				PASSKEY_REFUSED);
		return;
	}
	char count[16];
	snprintf(count, sizeof(count), "%u", (unsigned)s->result.sign_count);
	const char *params[3] = { s->passkey_id, count, s->result.backed_up ? "true" : "false" };
	/* A counter that did not grow may mean a cloned authenticator; synced
	 * passkeys always report 0, so it is recorded, not refused: in the
	 * record written with the passkey's use. */
	bool regressed = (s->result.sign_count || s->stored_count) &&
			 (long long)s->result.sign_count <= s->stored_count;
	char meta[96];
	snprintf(meta, sizeof(meta), "{\"signCountRegressed\":%s,\"signCount\":%u}",
		 regressed ? "true" : "false", (unsigned)s->result.sign_count);
	sw_api_query_audited(req, &sw_db_stmt_passkey_used, params, 3, "auth.passkey.signed_in",
			     "passkey", s->passkey_id, meta, sign_in_recorded, s);
}

static void sign_in_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sign_in *s = arg;
	struct sw_http_request *req = s->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The sign-in was not recorded."))
		return;
	bool live = PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_CHALLENGE_LIVE)[0] == 't';
	bool known = !PQgetisnull(res, 0, SW_DB_PASSKEY_SIGN_IN_ID);
	if (known) {
		snprintf(s->passkey_id, sizeof(s->passkey_id), "%s",
			 PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_ID));
		snprintf(s->user_id, sizeof(s->user_id), "%s",
			 PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_USER_ID));
		s->stored_count = strtoll(PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_SIGN_COUNT), NULL, 10);
		s->multi_device = strcmp(PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_DEVICE_TYPE),
					 "multiDevice") == 0;
	}
	if (!live)
		sign_in_refused(s, "CHALLENGE_INVALID", "challenge_invalid",
				"The sign-in challenge is unknown, expired or used; ask for a new one.");
	else if (!known)
		sign_in_refused(s, "PASSKEY_UNKNOWN", "unknown_credential", PASSKEY_GONE);
	else if (sw_api_rate_limit(req, &limit_account, sw_str_cstr(s->user_id)))
		sign_in_check(s, PQgetvalue(res, 0, SW_DB_PASSKEY_SIGN_IN_PUBLIC_KEY));
}

void sw_api_passkeys_verify(struct sw_http_request *req)
{
	static const char *const known[] = { "credential", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct sign_in *s = sw_api_passkey_start(req, sizeof(*s), known, false, &fe, &body);
	if (!s)
		return;
	sw_webauthn_response_read(&req->arena, body, false, &s->in, &fe);
	if (!sw_api_passkey_body_valid(req, body, &fe) ||
	    !sw_api_rate_limit(req, &sw_api_limit_passkey_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	char *id_hex = sw_arena_alloc(&req->arena, SW_API_PASSKEY_ID_HEX_CAP);
	if (!id_hex || !sw_api_passkey_hex(s->in.raw_id, s->in.raw_id_len, id_hex, SW_API_PASSKEY_ID_HEX_CAP)) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[2] = { s->in.challenge_hash, id_hex };
	sw_api_query(req, &sw_db_stmt_passkey_sign_in_begin, params, 2, sign_in_found, s);
}
