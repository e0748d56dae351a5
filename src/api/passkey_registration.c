/* Passkeys: the registration ceremony. POST /auth/passkeys re-authenticates
 * with the password and returns creation options, storing nothing: the
 * challenge carries its own proof (below). POST /auth/passkeys/confirm
 * checks that proof, uses the challenge up (the one row it writes before
 * the credential), verifies the attestation
 * (sw_webauthn_verify_registration()) and only then stores the passkey.
 * The decisions are stated in passkeys.c.
 *
 * The challenge: 16 random bytes, its expiry (Unix seconds, 8 bytes big
 * endian), then the MAC under the master key (sw_seal_mac(), label
 * "passkey-registration") of the user's id, a NUL, the relying party's
 * id, a NUL and those 24 bytes. So it names its user, its relying party
 * and its expiry, and cannot be made or altered without the key; single
 * use is the row of its SHA-256 that the confirmation inserts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <openssl/rand.h>
#include "steward/base/limits.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "api/passkeys.h"
#include "steward/db/statements_passkeys.h"

#define RP_NAME "Steward"
#define REGISTRATION_GONE \
	"The registration is unknown, expired or already answered; start again with POST /auth/passkeys."

/* ---- the stateless challenge ---- */

#define NONCE_BYTES 16
#define PAYLOAD_BYTES (NONCE_BYTES + 8)
#define CHALLENGE_BYTES (PAYLOAD_BYTES + 32)
#define MAC_LABEL "passkey-registration"
_Static_assert(CHALLENGE_BYTES <= SW_WEBAUTHN_MAX_CHALLENGE, "a challenge the reader keeps whole");

struct challenge {
	uint8_t bytes[CHALLENGE_BYTES];
	char text[SW_BASE64URL_LEN(CHALLENGE_BYTES) + 1];
};

/* The MAC of payload for user_id and the relying party. */
static int challenge_mac(const char *user_id, const uint8_t payload[PAYLOAD_BYTES], uint8_t out[32])
{
	const char *rp = sw_api_passkey_rp_loaded()->rp_id;
	size_t ul = strlen(user_id) + 1, rl = strlen(rp) + 1;
	uint8_t msg[37 + 256 + PAYLOAD_BYTES];
	if (ul > 37 || rl > 256)
		return -EINVAL;
	memcpy(msg, user_id, ul);
	memcpy(msg + ul, rp, rl);
	memcpy(msg + ul + rl, payload, PAYLOAD_BYTES);
	return sw_seal_mac(MAC_LABEL, msg, ul + rl + PAYLOAD_BYTES, out);
}

static bool challenge_new(const char *user_id, struct challenge *c)
{
	uint64_t expires = (uint64_t)time(NULL) + SW_API_PASSKEY_CHALLENGE_TTL_S;
	if (RAND_bytes(c->bytes, NONCE_BYTES) != 1)
		return false;
	for (int i = 0; i < 8; i++)
		c->bytes[NONCE_BYTES + i] = (uint8_t)(expires >> (56 - 8 * i));
	return challenge_mac(user_id, c->bytes, c->bytes + PAYLOAD_BYTES) == 0 &&
	       sw_base64url_encode(c->bytes, CHALLENGE_BYTES, c->text, sizeof(c->text)) >= 0;
}

/* Whether the challenge the client data answers is one issued to user_id
 * here and not expired; *ret_expires its expiry (Unix seconds). */
static bool challenge_valid(const char *user_id, const uint8_t *p, size_t n, int64_t *ret_expires)
{
	uint8_t mac[32];
	if (n != CHALLENGE_BYTES || challenge_mac(user_id, p, mac) < 0 ||
	    !sw_ct_equal(mac, sizeof(mac), p + PAYLOAD_BYTES, 32))
		return false;
	uint64_t expires = 0;
	for (int i = 0; i < 8; i++)
		expires = expires << 8 | p[NONCE_BYTES + i];
	*ret_expires = (int64_t)SW_MIN(expires, (uint64_t)INT64_MAX);
	return expires > (uint64_t)time(NULL);
}

/* ---- POST /auth/passkeys: start a registration ---- */

struct begin {
	struct sw_http_request *req;
	struct sw_api_secret password; /* wiped once checked */
	struct challenge challenge;
	/* From the user's state row (sw_db_stmt_passkey_user_state). */
	const char *email;
	const char *name;
	const char *ids_hex; /* the user's credential ids, for excludeCredentials */
};

static void write_exclude_list(struct sw_json *j, const char *ids_hex)
{
	uint8_t id[SW_WEBAUTHN_MAX_CREDENTIAL_ID];
	char b64[SW_API_PASSKEY_ID_B64_CAP];
	sw_json_array_begin(j);
	for (const char *p = ids_hex; *p;) {
		size_t len = strcspn(p, ","), n = 0;
		if (sw_hex_decode(sw_str_from(p, len), id, sizeof(id), &n) &&
		    sw_base64url_encode(id, n, b64, sizeof(b64)) >= 0) {
			sw_json_object_begin(j);
			sw_json_key(j, "type");
			sw_json_cstr(j, "public-key");
			sw_json_key(j, "id");
			sw_json_cstr(j, b64);
			sw_json_object_end(j);
		}
		p += len + (p[len] == ',');
	}
	sw_json_array_end(j);
}

/* PublicKeyCredentialCreationOptionsJSON. */
static void write_creation_options(struct sw_json *j, const struct begin *b, const char *user_handle)
{
	static const int algs[] = { SW_COSE_ES256, SW_COSE_EDDSA, SW_COSE_RS256 };
	sw_json_object_begin(j);
	sw_json_key(j, "challenge");
	sw_json_cstr(j, b->challenge.text);
	sw_json_key(j, "rp");
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, sw_api_passkey_rp_loaded()->rp_id);
	sw_json_key(j, "name");
	sw_json_cstr(j, RP_NAME);
	sw_json_object_end(j);
	sw_json_key(j, "user");
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, user_handle);
	sw_json_key(j, "name");
	sw_json_cstr(j, b->email);
	sw_json_key(j, "displayName");
	sw_json_cstr(j, b->name);
	sw_json_object_end(j);
	sw_json_key(j, "pubKeyCredParams");
	sw_json_array_begin(j);
	for (size_t i = 0; i < SW_ARRAY_SIZE(algs); i++) {
		sw_json_object_begin(j);
		sw_json_key(j, "type");
		sw_json_cstr(j, "public-key");
		sw_json_key(j, "alg");
		sw_json_int(j, algs[i]);
		sw_json_object_end(j);
	}
	sw_json_array_end(j);
	sw_json_key(j, "timeout");
	sw_json_int(j, SW_API_PASSKEY_CHALLENGE_TTL_S * 1000);
	sw_json_key(j, "attestation");
	sw_json_cstr(j, "none");
	sw_json_key(j, "authenticatorSelection");
	sw_json_object_begin(j);
	sw_json_key(j, "residentKey");
	sw_json_cstr(j, "required");
	sw_json_key(j, "requireResidentKey");
	sw_json_bool(j, true);
	sw_json_key(j, "userVerification");
	sw_json_cstr(j, "required");
	sw_json_object_end(j);
	sw_json_key(j, "excludeCredentials");
	write_exclude_list(j, b->ids_hex);
	sw_json_object_end(j);
}

static void begin_answer(struct begin *b)
{
	struct sw_http_request *req = b->req;
	uint8_t handle[SW_API_PASSKEY_UUID_BYTES];
	char handle_b64[SW_BASE64URL_LEN(SW_API_PASSKEY_UUID_BYTES) + 1];
	if (!sw_api_passkey_user_handle(req->principal.user_id, handle) ||
	    sw_base64url_encode(handle, sizeof(handle), handle_b64, sizeof(handle_b64)) < 0) {
		sw_api_internal_error(req);
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	write_creation_options(&j, b, handle_b64);
	sw_http_json_end(req, 200, &buf, &j);
}

static void begin_user_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct begin *b = arg;
	struct sw_http_request *req = b->req;
	if (!sw_api_one_row(req, res, err, 401, "UNAUTHENTICATED", "The account no longer exists."))
		return;
	if (strtoll(PQgetvalue(res, 0, SW_DB_PASSKEY_USER_COUNT), NULL, 10) >= SW_PASSKEYS_PER_USER_MAX) {
		sw_http_error(req, 409, "PASSKEY_LIMIT_REACHED",
			      "You hold the most passkeys allowed; delete one first.");
		return;
	}
	const char *ids = sw_api_nullable(res, 0, SW_DB_PASSKEY_USER_CREDENTIAL_IDS);
	b->email = sw_arena_strndup(&req->arena, PQgetvalue(res, 0, SW_DB_PASSKEY_USER_EMAIL),
				    (size_t)PQgetlength(res, 0, SW_DB_PASSKEY_USER_EMAIL));
	b->name = sw_arena_strndup(&req->arena, PQgetvalue(res, 0, SW_DB_PASSKEY_USER_NAME),
				   (size_t)PQgetlength(res, 0, SW_DB_PASSKEY_USER_NAME));
	b->ids_hex = sw_arena_strndup(&req->arena, ids ? ids : "", ids ? strlen(ids) : 0);
	if (!b->email || !b->name || !b->ids_hex || !challenge_new(req->principal.user_id, &b->challenge)) {
		sw_api_internal_error(req);
		return;
	}
	begin_answer(b);
}

static void begin_reauthed(void *arg, bool ok)
{
	struct begin *b = arg;
	if (!ok)
		return;
	const char *params[1] = { b->req->principal.user_id };
	sw_api_query(b->req, &sw_db_stmt_passkey_user_state, params, 1, begin_user_read, b);
}

void sw_api_passkeys_begin(struct sw_http_request *req)
{
	static const char *const known[] = { "password", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct begin *b = sw_api_passkey_start(req, sizeof(*b), known, true, &fe, &body);
	if (!b)
		return;
	struct sw_str pw = SW_STR_NULL;
	if (sw_api_string_field(body, "password", &pw, &fe, true) &&
	    (pw.len == 0 || pw.len > 4 * SW_PASSWORD_MAX_LEN))
		sw_field_error(&fe, "password", "must be given");
	bool kept = !fe.count && sw_api_secret_keep(req, pw, &b->password);
	sw_api_wipe_view(pw);
	if (!sw_api_passkey_body_valid(req, body, &fe))
		return;
	if (!kept) {
		sw_api_internal_error(req);
		return;
	}
	sw_api_reauthenticate(req, &b->password, &(struct sw_api_reauth){
		.field = "password",
		.message = "is not the account's password",
		.audit_action = "auth.passkey.reauthentication_failed",
		.done = begin_reauthed,
		.arg = b,
	});
}

/* ---- POST /auth/passkeys/confirm ---- */

struct confirm {
	struct sw_http_request *req;
	char name[4 * SW_NAME_MAX_LEN + 1];
	struct sw_webauthn_response in;
	struct sw_webauthn_credential cred;
	char refusal[128]; /* why a registration was refused, for its answer */
};

static void registration_answer_refusal(struct sw_http_request *req, void *arg)
{
	struct confirm *c = arg;
	char message[160];
	snprintf(message, sizeof(message), "was not accepted: %s", c->refusal);
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, "credential", message);
	sw_http_validation_error(req, &fe);
}

/* The refusal is recorded, then answered. */
static void registration_refused(struct confirm *c, const char *reason)
{
	struct sw_http_request *req = c->req;
	snprintf(c->refusal, sizeof(c->refusal), "%s", reason);
	json_t *m = json_pack("{s:s}", "reason", reason);
	char *meta = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!meta) {
		sw_api_internal_error(req);
		return;
	}
	const struct sw_db_audit_row a = { req->principal.organization_id, req->principal.user_id,
					   "auth.passkey.registration_failed", "user",
					   req->principal.user_id, NULL, meta };
	sw_api_audit_first(req, &a, registration_answer_refusal, c);
	free(meta);
}

static void confirm_stored(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct confirm *c = arg;
	struct sw_http_request *req = c->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The passkey was not stored."))
		return;
	const char *outcome = PQgetvalue(res, 0, 0);
	if (strcmp(outcome, "LIMIT") == 0) {
		sw_http_error(req, 409, "PASSKEY_LIMIT_REACHED",
			      "You hold the most passkeys allowed; delete one first.");
		return;
	}
	if (strcmp(outcome, "CREATED") != 0) {
		sw_http_error(req, 409, "PASSKEY_EXISTS",
			      "This passkey is already registered with this installation.");
		return;
	}
	sw_api_answer_row(req, 201, res, 0, sw_api_passkey_write, &sw_api_passkey_record_at_1);
}

/* Stores c->cred as the caller's passkey. */
static void confirm_store(struct confirm *c)
{
	struct sw_http_request *req = c->req;
	const struct sw_webauthn_credential *cred = &c->cred;
	char *id_hex = sw_arena_alloc(&req->arena, SW_API_PASSKEY_ID_HEX_CAP);
	char *key_hex = sw_arena_alloc(&req->arena, 2 * SW_WEBAUTHN_MAX_PUBLIC_KEY + 1);
	char aaguid_hex[2 * sizeof(cred->aaguid) + 1], alg[8], count[16];
	if (!id_hex || !key_hex || !sw_api_passkey_hex(cred->id, cred->id_len, id_hex, SW_API_PASSKEY_ID_HEX_CAP) ||
	    !sw_api_passkey_hex(cred->public_key_cose, cred->public_key_len, key_hex,
		    2 * SW_WEBAUTHN_MAX_PUBLIC_KEY + 1) ||
	    !sw_api_passkey_hex(cred->aaguid, sizeof(cred->aaguid), aaguid_hex, sizeof(aaguid_hex))) {
		sw_api_internal_error(req);
		return;
	}
	snprintf(alg, sizeof(alg), "%d", cred->alg);
	snprintf(count, sizeof(count), "%u", (unsigned)cred->sign_count);
	const char *params[11] = { req->principal.user_id, id_hex, key_hex, alg, count,
				   sw_webauthn_device_type(cred), cred->backed_up ? "true" : "false",
				   c->name, c->in.transports, aaguid_hex, cred->fmt };
	/* Recorded with the passkey it stores (when it stores one). */
	json_t *m = json_pack("{s:s,s:s,s:i,s:s}", "name", c->name, "deviceType",
			      sw_webauthn_device_type(cred), "algorithm", cred->alg, "attestation",
			      cred->fmt);
	char *meta = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!meta) {
		sw_api_internal_error(req);
		return;
	}
	sw_api_query_audited(req, &sw_db_stmt_passkey_create, params, 11, "auth.passkey.registered",
			     "passkey", NULL, meta, confirm_stored, c);
	free(meta);
}

static void confirm_consumed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct confirm *c = arg;
	struct sw_http_request *req = c->req;
	/* No row: the challenge was used already. */
	if (!sw_api_one_row(req, res, err, 409, "CHALLENGE_INVALID", REGISTRATION_GONE))
		return;
	char why[128];
	int r = sw_webauthn_verify_registration(sw_api_passkey_rp_loaded(), c->in.client_data, c->in.client_data_len,
						c->in.attestation, c->in.attestation_len,
						c->in.challenge, c->in.challenge_len, &c->cred, why,
						sizeof(why));
	if (r == -ENOMEM || r == -EINVAL)
		sw_api_internal_error(req);
	else if (r < 0)
		registration_refused(c, why);
	else if (c->cred.id_len != c->in.raw_id_len ||
		 memcmp(c->cred.id, c->in.raw_id, c->in.raw_id_len) != 0)
		registration_refused(c, "rawId is not the attested credential's id");
	else
		confirm_store(c);
}

void sw_api_passkeys_confirm(struct sw_http_request *req)
{
	static const char *const known[] = { "name", "credential", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct confirm *c = sw_api_passkey_start(req, sizeof(*c), known, false, &fe, &body);
	if (!c)
		return;
	struct sw_str name;
	if (sw_api_name_field(body, "name", true, &name, &fe))
		snprintf(c->name, sizeof(c->name), "%.*s", (int)name.len, name.ptr);
	sw_webauthn_response_read(&req->arena, body, true, &c->in, &fe);
	if (!sw_api_passkey_body_valid(req, body, &fe))
		return;
	if (!c->in.attestation) {
		sw_api_internal_error(req);
		return;
	}
	/* Issued to this user by this relying party, and alive: else it is
	 * refused before anything is written. */
	int64_t expires;
	if (!challenge_valid(req->principal.user_id, c->in.challenge, c->in.challenge_len, &expires)) {
		sw_http_error(req, 409, "CHALLENGE_INVALID", REGISTRATION_GONE);
		return;
	}
	char expires_text[24];
	snprintf(expires_text, sizeof(expires_text), "%lld", (long long)expires);
	const char *params[3] = { req->principal.user_id, c->in.challenge_hash, expires_text };
	sw_api_query(req, &sw_db_stmt_passkey_registration_consume, params, 3, confirm_consumed, c);
}
