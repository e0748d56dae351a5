/* Passkeys (WebAuthn): registration behind the password, sign-in without
 * it, and the user's list of passkeys. The ceremonies' checks are
 * src/auth/webauthn.c; this file issues and consumes challenges, finds
 * credentials and records what the checks established.
 *
 * Decisions (also in the OpenAPI document):
 * - The relying party: AUTH_PASSKEY_RP_ID (a bare domain), else the host
 *   of PUBLIC_BASE_URL, else "localhost". The origins a ceremony may run
 *   from: AUTH_PASSKEY_ORIGINS (comma-separated), else the origin of
 *   PUBLIC_BASE_URL, else http://localhost:<listen port>. Each origin must
 *   be https (http only on localhost, the browsers' rule) on the rp id or
 *   a subdomain of it. Read at the first ceremony; a bad value is logged
 *   once and every ceremony answers 503 PASSKEYS_NOT_CONFIGURED (listing,
 *   renaming and deleting still work).
 * - Registration: POST /auth/passkeys re-authenticates with the password
 *   and returns creation options; the only row written is the challenge
 *   (its SHA-256, the user, 5 minutes), never a credential. POST
 *   /auth/passkeys/confirm consumes that challenge whatever the outcome,
 *   verifies the attestation and only then stores the passkey. A ceremony
 *   abandoned in between leaves nothing a list or a sign-in can see.
 * - Options ask for a discoverable credential, user verification, and
 *   attestation "none": attestation is not anchored to any root here, so
 *   asking for it would only add a browser prompt. "none" and "packed"
 *   (self or x5c) are accepted from clients that send one anyway.
 * - user.id (the user handle) is the 16 bytes of the user's UUID: stable,
 *   not personal data, and what sign-in compares userHandle with.
 * - Sign-in: POST /auth/passkeys/challenge issues a challenge bound to no
 *   one (no e-mail, no allowCredentials); POST /auth/passkeys/verify
 *   consumes it, finds the passkey by credential id (unique across the
 *   installation), requires userHandle to name the passkey's owner,
 *   verifies the signature with UP and UV, records the signature counter
 *   and backup state (the counter is never enforced; a counter that did
 *   not grow is noted in the audit record) and issues a session with
 *   method PASSKEY: no password, no second factor, since user verification
 *   on the authenticator is both.
 * - A user holds at most SW_PASSKEYS_PER_USER_MAX passkeys. Renaming and
 *   deleting need the session only: neither grants access. Passkeys sit
 *   beside the password; deleting the last one changes nothing else.
 * - Limits (429 with Retry-After): challenges 100 per address per 5
 *   minutes; verification 30 per address (limits.c) and 10 per account
 *   per 5 minutes, the account's refilled by a success. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/secret.h"
#include "steward/auth/webauthn.h"
#include "api/api_internal.h"
#include "steward/db/statements_passkeys.h"

#define CHALLENGE_BYTES 32
#define CHALLENGE_TTL_S 300
#define CHALLENGE_B64_LEN SW_BASE64URL_LEN(CHALLENGE_BYTES)
#define RP_NAME "Steward"
#define UUID_BYTES 16
#define ID_HEX_CAP (2 * SW_WEBAUTHN_MAX_CREDENTIAL_ID + 1)
#define ID_B64_CAP (SW_BASE64URL_LEN(SW_WEBAUTHN_MAX_CREDENTIAL_ID) + 1)

static const struct sw_ratelimit limit_challenge_address = { "passkey_challenge_address", 100, 300 };
static const struct sw_ratelimit limit_account = { "passkey_account", 10, 300 };

#define REGISTRATION_GONE \
	"The registration is unknown, expired or already answered; start again with POST /auth/passkeys."
#define PASSKEY_GONE "This passkey is not registered here (any more); sign in with your password."
#define PASSKEY_REFUSED "The passkey could not be verified."

/* ---- bytes as hex (the database's form) ---- */

static bool to_hex(const uint8_t *p, size_t n, char *out, size_t cap)
{
	return n > 0 && OPENSSL_buf2hexstr_ex(out, cap, NULL, p, n, '\0') == 1;
}

static bool from_hex(const char *hex, uint8_t *out, size_t cap, size_t *ret_len)
{
	return OPENSSL_hexstr2buf_ex(out, cap, ret_len, hex, '\0') == 1;
}

/* The 16 bytes of a UUID in text form: the user handle. */
static bool uuid_bytes(const char *uuid, uint8_t out[UUID_BYTES])
{
	char hex[2 * UUID_BYTES + 1];
	size_t o = 0, n = 0;
	for (const char *p = uuid; *p && o < 2 * UUID_BYTES; p++)
		if (*p != '-')
			hex[o++] = *p;
	hex[o] = '\0';
	return o == 2 * UUID_BYTES && from_hex(hex, out, UUID_BYTES, &n) && n == UUID_BYTES;
}

/* ---- the relying party (sw_config_passkeys()) ---- */

struct rp_settings {
	bool ok;
	struct sw_passkey_settings config;
	const char *origins[SW_PASSKEY_ORIGINS_MAX];
	struct sw_webauthn_rp rp;
};

static struct rp_settings settings;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
/* The configuration load_settings() reads: pthread_once() takes no
 * argument, and the first caller's thread is the one that runs it. */
static _Thread_local const struct sw_config *settings_config;

static void load_settings(void)
{
	char why[1024] = "";
	if (sw_config_passkeys(settings_config, &settings.config, why, sizeof(why)) < 0) {
		sw_log_error("passkeys disabled: %s", why);
		return;
	}
	size_t n = settings.config.origin_count;
	for (size_t i = 0; i < n; i++)
		settings.origins[i] = settings.config.origins[i];
	settings.rp = (struct sw_webauthn_rp){ .rp_id = settings.config.rp_id, .origins = settings.origins,
					       .origin_count = n, .require_user_verification = true };
	settings.ok = true;
	char list[SW_PASSKEY_ORIGINS_MAX * (SW_PASSKEY_ORIGIN_MAX_LEN + 1)] = "";
	for (size_t i = 0, o = 0; i < n; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? "," : "", settings.origins[i]);
	sw_log_info("passkeys rp_id=%s origins=%s", settings.config.rp_id, list);
}
/* The relying party, or NULL after answering 503 when it is misconfigured. */
static const struct sw_webauthn_rp *relying_party(struct sw_http_request *req)
{
	settings_config = sw_http_config(req);
	pthread_once(&settings_once, load_settings);
	if (settings.ok)
		return &settings.rp;
	sw_http_error(req, 503, "PASSKEYS_NOT_CONFIGURED",
		      "Passkeys are not configured correctly on this server; its log says why.");
	return NULL;
}

/* Starts a ceremony's handler: passkeys are configured (else 503), the
 * handler's state (sw_api_state_new()) and the body parsed with only the
 * known members (sw_api_body()). NULL when the request has been answered;
 * otherwise the caller drops *ret_body (body_valid()). The callbacks find
 * the relying party in settings.rp: it is set for good once this passed. */
static void *ceremony_start(struct sw_http_request *req, size_t size, const char *const *known,
			    bool wipe_raw, struct sw_field_errors *fe, json_t **ret_body)
{
	void *state = relying_party(req) ? sw_api_state_new(req, size) : NULL;
	*ret_body = state ? sw_api_body(req, known, wipe_raw, fe) : NULL;
	return *ret_body ? state : NULL;
}

/* Drops the body; answers 422 and returns false when a field was refused. */
static bool body_valid(struct sw_http_request *req, json_t *body, struct sw_field_errors *fe)
{
	json_decref(body);
	if (!fe->count)
		return true;
	sw_http_validation_error(req, fe);
	return false;
}

/* ---- a passkey as the API shows it ---- */

/* A row writer (sw_api_row_writer); ctx points to the index of the first
 * record column in the row. */
static void write_passkey(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	int first = *(const int *)ctx;
#define COL(c) PQgetvalue(res, row, first + (c))
	uint8_t id[SW_WEBAUTHN_MAX_CREDENTIAL_ID];
	char id_b64[ID_B64_CAP] = "";
	size_t n = 0;
	if (!from_hex(COL(SW_DB_PASSKEY_CREDENTIAL_ID), id, sizeof(id), &n) ||
	    sw_base64url_encode(id, n, id_b64, sizeof(id_b64)) < 0)
		id_b64[0] = '\0';
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, COL(SW_DB_PASSKEY_ID));
	sw_json_key(j, "name");
	sw_json_cstr(j, COL(SW_DB_PASSKEY_NAME));
	sw_json_key(j, "credentialId");
	sw_json_cstr(j, id_b64);
	sw_json_key(j, "publicKeyAlgorithm");
	sw_json_int(j, strtoll(COL(SW_DB_PASSKEY_ALGORITHM), NULL, 10));
	sw_json_key(j, "deviceType");
	sw_json_cstr(j, COL(SW_DB_PASSKEY_DEVICE_TYPE));
	sw_json_key(j, "backedUp");
	sw_json_bool(j, COL(SW_DB_PASSKEY_BACKED_UP)[0] == 't');
	sw_json_key(j, "signCount");
	sw_json_int(j, strtoll(COL(SW_DB_PASSKEY_SIGN_COUNT), NULL, 10));
	sw_json_key(j, "transports");
	sw_json_array_begin(j);
	for (const char *p = COL(SW_DB_PASSKEY_TRANSPORTS); *p;) {
		size_t len = strcspn(p, ",");
		sw_json_string(j, sw_str_from(p, len));
		p += len + (p[len] == ',');
	}
	sw_json_array_end(j);
	sw_json_key(j, "aaguid");
	sw_json_cstr(j, COL(SW_DB_PASSKEY_AAGUID));
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, COL(SW_DB_PASSKEY_CREATED_AT));
	sw_json_key(j, "lastUsedAt");
	sw_json_cstr(j, PQgetisnull(res, row, first + SW_DB_PASSKEY_LAST_USED_AT) ? NULL :
			COL(SW_DB_PASSKEY_LAST_USED_AT));
	sw_json_object_end(j);
#undef COL
}

static const int record_at_0 = 0, record_at_1 = 1;

/* A fresh challenge: its bytes, base64url text and hex SHA-256. */
struct challenge {
	uint8_t bytes[CHALLENGE_BYTES];
	char text[CHALLENGE_B64_LEN + 1];
	char hash[65];
};

static bool challenge_new(struct challenge *c)
{
	if (RAND_bytes(c->bytes, CHALLENGE_BYTES) != 1 ||
	    sw_base64url_encode(c->bytes, CHALLENGE_BYTES, c->text, sizeof(c->text)) < 0)
		return false;
	sw_sha256_hex(c->bytes, CHALLENGE_BYTES, c->hash);
	return true;
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
	char hex[ID_HEX_CAP];
	uint8_t id[SW_WEBAUTHN_MAX_CREDENTIAL_ID];
	char b64[ID_B64_CAP];
	sw_json_array_begin(j);
	for (const char *p = ids_hex; *p;) {
		size_t len = strcspn(p, ","), n = 0;
		if (len < sizeof(hex)) {
			memcpy(hex, p, len);
			hex[len] = '\0';
			if (from_hex(hex, id, sizeof(id), &n) &&
			    sw_base64url_encode(id, n, b64, sizeof(b64)) >= 0) {
				sw_json_object_begin(j);
				sw_json_key(j, "type");
				sw_json_cstr(j, "public-key");
				sw_json_key(j, "id");
				sw_json_cstr(j, b64);
				sw_json_object_end(j);
			}
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
	sw_json_cstr(j, settings.rp.rp_id);
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
	sw_json_int(j, CHALLENGE_TTL_S * 1000);
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

static void begin_stored(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct begin *b = arg;
	struct sw_http_request *req = b->req;
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The challenge was not stored."))
		return;
	uint8_t handle[UUID_BYTES];
	char handle_b64[SW_BASE64URL_LEN(UUID_BYTES) + 1];
	if (!uuid_bytes(req->principal.user_id, handle) ||
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
	if (!b->email || !b->name || !b->ids_hex || !challenge_new(&b->challenge)) {
		sw_api_internal_error(req);
		return;
	}
	char ttl[16];
	snprintf(ttl, sizeof(ttl), "%d", CHALLENGE_TTL_S);
	const char *params[3] = { req->principal.user_id, b->challenge.hash, ttl };
	sw_api_query(req, &sw_db_stmt_passkey_registration_create, params, 3, begin_stored, b);
}

static void begin_reauthed(void *arg, bool ok)
{
	struct begin *b = arg;
	if (!ok)
		return;
	const char *params[1] = { b->req->principal.user_id };
	sw_api_query(b->req, &sw_db_stmt_passkey_user_state, params, 1, begin_user_read, b);
}

static void passkeys_begin(struct sw_http_request *req)
{
	static const char *const known[] = { "password", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct begin *b = ceremony_start(req, sizeof(*b), known, true, &fe, &body);
	if (!b)
		return;
	struct sw_str pw = SW_STR_NULL;
	if (sw_api_string_field(body, "password", &pw, &fe, true) &&
	    (pw.len == 0 || pw.len > 4 * SW_PASSWORD_MAX_LEN))
		sw_field_error(&fe, "password", "must be given");
	bool kept = !fe.count && sw_api_secret_keep(req, pw, &b->password);
	sw_api_wipe_view(pw);
	if (!body_valid(req, body, &fe))
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
};

static void registration_refused(struct confirm *c, const char *reason)
{
	struct sw_http_request *req = c->req;
	sw_api_audit_json(req, req->principal.organization_id, req->principal.user_id,
			  "auth.passkey.registration_failed", "user", req->principal.user_id,
			  json_pack("{s:s}", "reason", reason));
	char message[160];
	snprintf(message, sizeof(message), "was not accepted: %s", reason);
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, "credential", message);
	sw_http_validation_error(req, &fe);
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
	sw_api_audit_json(req, req->principal.organization_id, req->principal.user_id,
			  "auth.passkey.registered", "passkey", PQgetvalue(res, 0, 1 + SW_DB_PASSKEY_ID),
			  json_pack("{s:s,s:s,s:i,s:s}", "name", c->name, "deviceType",
				    sw_webauthn_device_type(&c->cred), "algorithm", c->cred.alg,
				    "attestation", c->cred.fmt));
	sw_api_answer_row(req, 201, res, 0, write_passkey, &record_at_1);
}

/* Stores c->cred as the caller's passkey. */
static void confirm_store(struct confirm *c)
{
	struct sw_http_request *req = c->req;
	const struct sw_webauthn_credential *cred = &c->cred;
	char *id_hex = sw_arena_alloc(&req->arena, ID_HEX_CAP);
	char *key_hex = sw_arena_alloc(&req->arena, 2 * SW_WEBAUTHN_MAX_PUBLIC_KEY + 1);
	char aaguid_hex[2 * sizeof(cred->aaguid) + 1], alg[8], count[16];
	if (!id_hex || !key_hex || !to_hex(cred->id, cred->id_len, id_hex, ID_HEX_CAP) ||
	    !to_hex(cred->public_key_cose, cred->public_key_len, key_hex,
		    2 * SW_WEBAUTHN_MAX_PUBLIC_KEY + 1) ||
	    !to_hex(cred->aaguid, sizeof(cred->aaguid), aaguid_hex, sizeof(aaguid_hex))) {
		sw_api_internal_error(req);
		return;
	}
	snprintf(alg, sizeof(alg), "%d", cred->alg);
	snprintf(count, sizeof(count), "%u", (unsigned)cred->sign_count);
	const char *params[11] = { req->principal.user_id, id_hex, key_hex, alg, count,
				   sw_webauthn_device_type(cred), cred->backed_up ? "true" : "false",
				   c->name, c->in.transports, aaguid_hex, cred->fmt };
	sw_api_query(req, &sw_db_stmt_passkey_create, params, 11, confirm_stored, c);
}

static void confirm_consumed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct confirm *c = arg;
	struct sw_http_request *req = c->req;
	if (!sw_api_one_row(req, res, err, 409, "CHALLENGE_INVALID", REGISTRATION_GONE))
		return;
	if (PQgetvalue(res, 0, 0)[0] != 't') {
		sw_http_error(req, 409, "CHALLENGE_INVALID", REGISTRATION_GONE);
		return;
	}
	char why[128];
	int r = sw_webauthn_verify_registration(&settings.rp, c->in.client_data, c->in.client_data_len,
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

static void passkeys_confirm(struct sw_http_request *req)
{
	static const char *const known[] = { "name", "credential", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct confirm *c = ceremony_start(req, sizeof(*c), known, false, &fe, &body);
	if (!c)
		return;
	struct sw_str name;
	if (sw_api_name_field(body, "name", true, &name, &fe))
		snprintf(c->name, sizeof(c->name), "%.*s", (int)name.len, name.ptr);
	sw_webauthn_response_read(&req->arena, body, true, &c->in, &fe);
	if (!body_valid(req, body, &fe))
		return;
	if (!c->in.attestation) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[2] = { req->principal.user_id, c->in.challenge_hash };
	sw_api_query(req, &sw_db_stmt_passkey_registration_consume, params, 2, confirm_consumed, c);
}

/* ---- GET, PATCH, DELETE: the caller's passkeys ---- */

static void listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_rows(arg, res, err, write_passkey, &record_at_0);
}

static void passkeys_list(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.user_id };
	sw_api_query(req, &sw_db_stmt_passkeys_list, params, 1, listed, req);
}

/* After a rename or a delete, whose rows start with the id and the name:
 * false (answered 404) when the caller holds no such passkey; else the
 * change is audited as action. */
static bool changed(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
		    const char *action)
{
	if (!sw_api_found(req, res, err))
		return false;
	sw_api_audit_json(req, req->principal.organization_id, req->principal.user_id, action,
			  "passkey", PQgetvalue(res, 0, SW_DB_PASSKEY_ID),
			  json_pack("{s:s}", "name", PQgetvalue(res, 0, SW_DB_PASSKEY_NAME)));
	return true;
}

static void renamed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	if (changed(arg, res, err, "auth.passkey.renamed"))
		sw_api_answer_row(arg, 200, res, 0, write_passkey, &record_at_0);
}

static void passkeys_rename(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	static const char *const known[] = { "name", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	struct sw_str name;
	char *copy = NULL;
	if (sw_api_name_field(body, "name", true, &name, &fe))
		copy = sw_arena_strndup(&req->arena, name.ptr, name.len);
	if (!body_valid(req, body, &fe))
		return;
	if (!copy) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[3] = { req->principal.user_id, id, copy };
	sw_api_query(req, &sw_db_stmt_passkey_rename, params, 3, renamed, req);
}

static void deleted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	if (changed(arg, res, err, "auth.passkey.deleted"))
		sw_http_respond(arg, 204, NULL, SW_STR_NULL);
}

static void passkeys_delete(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	const char *params[2] = { req->principal.user_id, id };
	sw_api_query(req, &sw_db_stmt_passkey_delete, params, 2, deleted, req);
}

/* ---- POST /auth/passkeys/challenge ---- */

struct sign_in_challenge {
	struct sw_http_request *req;
	struct challenge challenge;
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
	sw_json_cstr(&j, settings.rp.rp_id);
	sw_json_key(&j, "timeout");
	sw_json_int(&j, CHALLENGE_TTL_S * 1000);
	sw_json_key(&j, "userVerification");
	sw_json_cstr(&j, "required");
	sw_json_object_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

static void passkeys_challenge(struct sw_http_request *req)
{
	if (!relying_party(req) ||
	    !sw_api_rate_limit(req, &limit_challenge_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	struct sign_in_challenge *sc = sw_api_state_new(req, sizeof(*sc));
	if (!sc)
		return;
	if (!challenge_new(&sc->challenge)) {
		sw_api_internal_error(req);
		return;
	}
	char ttl[16];
	snprintf(ttl, sizeof(ttl), "%d", CHALLENGE_TTL_S);
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
};

static void sign_in_refused(struct sign_in *s, const char *code, const char *reason,
			    const char *message)
{
	sw_api_audit_json(s->req, NULL, s->user_id, "auth.passkey.sign_in_failed", "passkey",
			  s->passkey_id[0] ? s->passkey_id : NULL, json_pack("{s:s}", "reason", reason));
	sw_http_error(s->req, 401, code, message);
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
	/* A counter that did not grow may mean a cloned authenticator; synced
	 * passkeys always report 0, so it is recorded, not refused. */
	bool regressed = (s->result.sign_count || s->stored_count) &&
			 (long long)s->result.sign_count <= s->stored_count;
	sw_api_audit_json(req, NULL, s->user_id, "auth.passkey.signed_in", "passkey", s->passkey_id,
			  json_pack("{s:b,s:I}", "signCountRegressed", regressed, "signCount",
				    (json_int_t)s->result.sign_count));
	sw_api_issue_session(req, s->user_id, NULL, "PASSKEY", 200);
}

/* The checks once the passkey is known: userHandle, then the assertion
 * itself, then backup eligibility (fixed at creation, §6.1). Records the
 * use when all pass. */
static void sign_in_check(struct sign_in *s, const char *public_key_hex)
{
	struct sw_http_request *req = s->req;
	uint8_t owner[UUID_BYTES];
	if (!s->in.user_handle_given || !uuid_bytes(s->user_id, owner) ||
	    !sw_ct_equal(owner, sizeof(owner), s->in.user_handle, s->in.user_handle_len)) {
		sign_in_refused(s, "PASSKEY_INVALID", "user handle does not name the passkey's owner",
				PASSKEY_REFUSED);
		return;
	}
	uint8_t key[SW_WEBAUTHN_MAX_PUBLIC_KEY];
	size_t key_len = 0;
	if (!from_hex(public_key_hex, key, sizeof(key), &key_len)) {
		sw_api_internal_error(req);
		return;
	}
	char why[128];
	int r = sw_webauthn_verify_assertion(&settings.rp, s->in.client_data, s->in.client_data_len,
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
	sw_api_query(req, &sw_db_stmt_passkey_used, params, 3, sign_in_recorded, s);
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

static void passkeys_verify(struct sw_http_request *req)
{
	static const char *const known[] = { "credential", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body;
	struct sign_in *s = ceremony_start(req, sizeof(*s), known, false, &fe, &body);
	if (!s)
		return;
	sw_webauthn_response_read(&req->arena, body, false, &s->in, &fe);
	if (!body_valid(req, body, &fe) ||
	    !sw_api_rate_limit(req, &sw_api_limit_passkey_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	char *id_hex = sw_arena_alloc(&req->arena, ID_HEX_CAP);
	if (!id_hex || !to_hex(s->in.raw_id, s->in.raw_id_len, id_hex, ID_HEX_CAP)) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[2] = { s->in.challenge_hash, id_hex };
	sw_api_query(req, &sw_db_stmt_passkey_sign_in_begin, params, 2, sign_in_found, s);
}

/* ---- routes ---- */

static const int err_begin[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_read[] = { 503, 0 };
static const int err_rename[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_challenge[] = { 413, 429, 503, 0 };
static const int err_verify[] = { 400, 401, 413, 415, 422, 429, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/auth/passkeys", SW_ACCESS_SESSION, passkeys_begin, 4096, 0,
	  { "Start registering a passkey",
	    "Re-authenticates with the password (422 on field password when wrong), then returns "
	    "the options for navigator.credentials.create() in their JSON form "
	    "(PublicKeyCredential.parseCreationOptionsFromJSON): a 32-byte challenge valid for "
	    "5 minutes, the relying party (id from AUTH_PASSKEY_RP_ID, else the host of "
	    "PUBLIC_BASE_URL, else localhost), user.id = the 16 bytes of the user's id, ES256, "
	    "EdDSA and RS256, a discoverable credential with user verification, attestation "
	    "none, and the user's passkeys as excludeCredentials. No credential is stored until "
	    "POST /auth/passkeys/confirm; abandoning the ceremony leaves nothing. 409 "
	    "PASSKEY_LIMIT_REACHED at 20 passkeys; 503 PASSKEYS_NOT_CONFIGURED when "
	    "AUTH_PASSKEY_RP_ID or AUTH_PASSKEY_ORIGINS is invalid (the log says why).",
	    "Passkeys", "PasskeyPasswordRequest", "PasskeyCreationOptions", 200, err_begin } },
	{ SW_HTTP_POST, "/auth/passkeys/confirm", SW_ACCESS_SESSION, passkeys_confirm,
	  SW_HTTP_DEFAULT_MAX_BODY, 0,
	  { "Finish registering a passkey",
	    "Takes a device name and the new credential (PublicKeyCredential.toJSON()). The "
	    "challenge named in its client data must be one issued to this user by POST "
	    "/auth/passkeys, unexpired; it is used up by this call whatever the outcome (409 "
	    "CHALLENGE_INVALID otherwise: start again). Verifies type, challenge, origin (one of "
	    "AUTH_PASSKEY_ORIGINS, else the origin of PUBLIC_BASE_URL, else "
	    "http://localhost:<port>), rpIdHash, the UP and UV flags, the algorithm and the "
	    "attestation (none, or packed: self or x5c, not chained to a root); a failed check "
	    "is 422 on field credential naming it. Then stores the public key, credential id, "
	    "counter, deviceType, backedUp and name. 409 PASSKEY_EXISTS when the credential id is "
	    "registered already (to anyone), PASSKEY_LIMIT_REACHED at 20 passkeys.",
	    "Passkeys", "PasskeyConfirmRequest", "Passkey", 201, err_begin } },
	{ SW_HTTP_GET, "/auth/passkeys", SW_ACCESS_SESSION, passkeys_list, 0, 0,
	  { "The caller's passkeys", "Oldest first. Public data only: no key material.",
	    "Passkeys", NULL, "PasskeyList", 200, err_read } },
	{ SW_HTTP_PATCH, "/auth/passkeys/:id", SW_ACCESS_SESSION, passkeys_rename, 4096, 0,
	  { "Rename one of the caller's passkeys",
	    "404 for a passkey that is not the caller's.",
	    "Passkeys", "PasskeyRenameRequest", "Passkey", 200, err_rename } },
	{ SW_HTTP_DELETE, "/auth/passkeys/:id", SW_ACCESS_SESSION, passkeys_delete, 0, 0,
	  { "Delete one of the caller's passkeys",
	    "It cannot sign in from then on; sessions it started stay (DELETE /auth/sessions/:id "
	    "ends them). No password needed: deleting grants nothing, and the password stays. 404 "
	    "for a passkey that is not the caller's.",
	    "Passkeys", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/auth/passkeys/challenge", SW_ACCESS_PUBLIC, passkeys_challenge, 0, 0,
	  { "Start a passkey sign-in",
	    "No body. Returns the options for navigator.credentials.get() in their JSON form "
	    "(PublicKeyCredential.parseRequestOptionsFromJSON): a 32-byte challenge valid for 5 "
	    "minutes and bound to no account, the rp id, user verification required, and no "
	    "allowCredentials: the authenticator offers its discoverable credentials and names "
	    "the account. Limited to 100 per address per 5 minutes (429 with Retry-After).",
	    "Authentication", NULL, "PasskeyRequestOptions", 200, err_challenge } },
	{ SW_HTTP_POST, "/auth/passkeys/verify", SW_ACCESS_PUBLIC, passkeys_verify,
	  SW_HTTP_DEFAULT_MAX_BODY, 0,
	  { "Sign in with a passkey",
	    "Takes the assertion (PublicKeyCredential.toJSON()). Its challenge must come from POST "
	    "/auth/passkeys/challenge and is used up by this call (401 CHALLENGE_INVALID "
	    "otherwise). The passkey is found by credential id (401 PASSKEY_UNKNOWN when none: "
	    "it was deleted, or belongs elsewhere); userHandle must be its owner's; then the "
	    "signature, challenge, origin, rpIdHash and the UP and UV flags are verified (401 "
	    "PASSKEY_INVALID). The signature counter and backup state are recorded; the counter "
	    "is not enforced (synced passkeys report 0). Issues the session (method PASSKEY, "
	    "cookie as for sign-in) with no password and no second factor: user verification "
	    "on the authenticator counts as both. Limited to 30 attempts per address and 10 per "
	    "account per 5 minutes (429 with Retry-After); a success refills the account's.",
	    "Authentication", "PasskeyVerifyRequest", "SessionResult", 200, err_verify } },
};

#define B64 "{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9_-]+$\",\"description\":\"base64url, no padding\"}"

static const char schemas[] = "{"
	"\"PasskeyPasswordRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"password\"],\"properties\":{"
	"\"password\":{\"type\":\"string\",\"writeOnly\":true,\"description\":\"The account's password.\"}}},"
	"\"PasskeyCreationOptions\":{\"type\":\"object\",\"description\":\"PublicKeyCredentialCreationOptionsJSON.\","
	"\"required\":[\"challenge\",\"rp\",\"user\",\"pubKeyCredParams\",\"timeout\",\"attestation\","
	"\"authenticatorSelection\",\"excludeCredentials\"],\"properties\":{"
	"\"challenge\":" B64 ","
	"\"rp\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"name\":{\"const\":\"Steward\"}}},"
	"\"user\":{\"type\":\"object\",\"properties\":{\"id\":" B64 ",\"name\":{\"type\":\"string\","
	"\"description\":\"The e-mail address.\"},\"displayName\":{\"type\":\"string\"}}},"
	"\"pubKeyCredParams\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"type\":{\"const\":\"public-key\"},\"alg\":{\"enum\":[-7,-8,-257]}}}},"
	"\"timeout\":{\"type\":\"integer\",\"examples\":[300000]},"
	"\"attestation\":{\"const\":\"none\"},"
	"\"authenticatorSelection\":{\"type\":\"object\",\"properties\":{"
	"\"residentKey\":{\"const\":\"required\"},\"requireResidentKey\":{\"const\":true},"
	"\"userVerification\":{\"const\":\"required\"}}},"
	"\"excludeCredentials\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/PasskeyDescriptor\"}}}},"
	"\"PasskeyDescriptor\":{\"type\":\"object\",\"required\":[\"type\",\"id\"],\"properties\":{"
	"\"type\":{\"const\":\"public-key\"},\"id\":" B64 "}},"
	"\"PasskeyRequestOptions\":{\"type\":\"object\",\"description\":\"PublicKeyCredentialRequestOptionsJSON.\","
	"\"required\":[\"challenge\",\"rpId\",\"timeout\",\"userVerification\"],\"properties\":{"
	"\"challenge\":" B64 ",\"rpId\":{\"type\":\"string\"},"
	"\"timeout\":{\"type\":\"integer\",\"examples\":[300000]},"
	"\"userVerification\":{\"const\":\"required\"}}},"
	"\"PasskeyRegistrationCredential\":{\"type\":\"object\",\"description\":\"RegistrationResponseJSON "
	"(PublicKeyCredential.toJSON() after create()).\",\"required\":[\"id\",\"rawId\",\"type\",\"response\"],"
	"\"properties\":{\"id\":" B64 ",\"rawId\":" B64 ",\"type\":{\"const\":\"public-key\"},"
	"\"authenticatorAttachment\":{\"type\":[\"string\",\"null\"]},"
	"\"clientExtensionResults\":{\"type\":\"object\"},"
	"\"response\":{\"type\":\"object\",\"required\":[\"clientDataJSON\",\"attestationObject\"],"
	"\"properties\":{\"clientDataJSON\":" B64 ",\"attestationObject\":" B64 ","
	"\"transports\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	"\"authenticatorData\":" B64 ",\"publicKey\":" B64 ",\"publicKeyAlgorithm\":{\"type\":\"integer\"}}}}},"
	"\"PasskeyAssertionCredential\":{\"type\":\"object\",\"description\":\"AuthenticationResponseJSON "
	"(PublicKeyCredential.toJSON() after get()).\",\"required\":[\"id\",\"rawId\",\"type\",\"response\"],"
	"\"properties\":{\"id\":" B64 ",\"rawId\":" B64 ",\"type\":{\"const\":\"public-key\"},"
	"\"authenticatorAttachment\":{\"type\":[\"string\",\"null\"]},"
	"\"clientExtensionResults\":{\"type\":\"object\"},"
	"\"response\":{\"type\":\"object\",\"required\":[\"clientDataJSON\",\"authenticatorData\",\"signature\","
	"\"userHandle\"],\"properties\":{\"clientDataJSON\":" B64 ",\"authenticatorData\":" B64 ","
	"\"signature\":" B64 ",\"userHandle\":" B64 "}}}},"
	"\"PasskeyConfirmRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"credential\"],\"properties\":{"
	"\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100,\"description\":\"A name for the device.\"},"
	"\"credential\":{\"$ref\":\"#/components/schemas/PasskeyRegistrationCredential\"}}},"
	"\"PasskeyVerifyRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"credential\"],\"properties\":{"
	"\"credential\":{\"$ref\":\"#/components/schemas/PasskeyAssertionCredential\"}}},"
	"\"PasskeyRenameRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\"],\"properties\":{"
	"\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}}},"
	"\"Passkey\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"credentialId\",\"publicKeyAlgorithm\","
	"\"deviceType\",\"backedUp\",\"signCount\",\"transports\",\"aaguid\",\"createdAt\",\"lastUsedAt\"],"
	"\"properties\":{\"id\":{\"type\":\"string\",\"format\":\"uuid\"},\"name\":{\"type\":\"string\"},"
	"\"credentialId\":" B64 ",\"publicKeyAlgorithm\":{\"enum\":[-7,-8,-257],"
	"\"description\":\"COSE: ES256, EdDSA, RS256.\"},"
	"\"deviceType\":{\"enum\":[\"singleDevice\",\"multiDevice\"]},\"backedUp\":{\"type\":\"boolean\"},"
	"\"signCount\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Recorded, not enforced.\"},"
	"\"transports\":{\"type\":\"array\",\"items\":{\"enum\":[\"usb\",\"nfc\",\"ble\",\"smart-card\","
	"\"hybrid\",\"internal\"]}},"
	"\"aaguid\":{\"type\":\"string\",\"format\":\"uuid\",\"description\":\"The authenticator model; "
	"zeros when not attested.\"},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"lastUsedAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}}},"
	"\"PasskeyList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Passkey\"}}"
	"}";

const struct sw_api_route_group sw_api_passkeys_group = { routes, SW_ARRAY_SIZE(routes), schemas };
