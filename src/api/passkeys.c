/* Passkeys (WebAuthn): registration behind the password
 * (passkey_registration.c), sign-in without it (passkey_sign_in.c), and,
 * here, the user's list of passkeys, the relying party and what both
 * ceremonies share. The ceremonies' checks are src/auth/webauthn.c, the
 * reading of what a browser sends src/auth/webauthn_json.c and the relying
 * party's settings sw_config_passkeys(); the ceremony files issue and
 * consume challenges, find credentials and record what the checks
 * established.
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
 *   and returns creation options, writing nothing: the challenge is
 *   stateless, bound to the user, the relying party and a 5-minute expiry
 *   by a MAC under the master key (passkey_registration.c). POST
 *   /auth/passkeys/confirm checks it, uses it up whatever the outcome (its
 *   SHA-256 recorded, so a replay is refused), verifies the attestation
 *   and only then stores the passkey. A ceremony abandoned in between
 *   leaves nothing at all.
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
#include <openssl/rand.h>
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "api/passkeys.h"
#include "steward/db/statements_passkeys.h"

/* ---- bytes as hex (the database's form) and the user handle ---- */

bool sw_api_passkey_hex(const uint8_t *p, size_t n, char *out, size_t cap)
{
	return n > 0 && sw_hex_encode(p, n, out, cap);
}

bool sw_api_passkey_user_handle(const char *uuid, uint8_t out[SW_API_PASSKEY_UUID_BYTES])
{
	char hex[2 * SW_API_PASSKEY_UUID_BYTES];
	size_t o = 0, n = 0;
	for (const char *p = uuid; *p && o < 2 * SW_API_PASSKEY_UUID_BYTES; p++)
		if (*p != '-')
			hex[o++] = *p;
	return o == 2 * SW_API_PASSKEY_UUID_BYTES &&
	       sw_hex_decode(sw_str_from(hex, o), out, SW_API_PASSKEY_UUID_BYTES, &n) &&
	       n == SW_API_PASSKEY_UUID_BYTES;
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
const struct sw_webauthn_rp *sw_api_passkey_rp(struct sw_http_request *req)
{
	settings_config = sw_http_config(req);
	pthread_once(&settings_once, load_settings);
	if (settings.ok)
		return &settings.rp;
	sw_http_error(req, 503, "PASSKEYS_NOT_CONFIGURED",
		      "Passkeys are not configured correctly on this server; its log says why.");
	return NULL;
}

const struct sw_webauthn_rp *sw_api_passkey_rp_loaded(void)
{
	return &settings.rp;
}

void *sw_api_passkey_start(struct sw_http_request *req, size_t size, const char *const *known,
			   bool wipe_raw, struct sw_field_errors *fe, json_t **ret_body)
{
	void *state = sw_api_passkey_rp(req) ? sw_api_state_new(req, size) : NULL;
	*ret_body = state ? sw_api_body(req, known, wipe_raw, fe) : NULL;
	return *ret_body ? state : NULL;
}

bool sw_api_passkey_body_valid(struct sw_http_request *req, json_t *body, struct sw_field_errors *fe)
{
	json_decref(body);
	if (!fe->count)
		return true;
	sw_http_validation_error(req, fe);
	return false;
}

/* ---- a passkey as the API shows it ---- */

void sw_api_passkey_write(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	int first = *(const int *)ctx;
#define COL(c) PQgetvalue(res, row, first + (c))
	uint8_t id[SW_WEBAUTHN_MAX_CREDENTIAL_ID];
	char id_b64[SW_API_PASSKEY_ID_B64_CAP] = "";
	size_t n = 0;
	if (!sw_hex_decode(sw_str_cstr(COL(SW_DB_PASSKEY_CREDENTIAL_ID)), id, sizeof(id), &n) ||
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

const int sw_api_passkey_record_at_0 = 0, sw_api_passkey_record_at_1 = 1;

bool sw_api_passkey_challenge_new(struct sw_api_passkey_challenge *c)
{
	if (RAND_bytes(c->bytes, SW_API_PASSKEY_CHALLENGE_BYTES) != 1 ||
	    sw_base64url_encode(c->bytes, SW_API_PASSKEY_CHALLENGE_BYTES, c->text, sizeof(c->text)) < 0)
		return false;
	sw_sha256_hex(c->bytes, SW_API_PASSKEY_CHALLENGE_BYTES, c->hash);
	return true;
}

/* ---- GET, PATCH, DELETE: the caller's passkeys ---- */

static void listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_rows(arg, res, err, sw_api_passkey_write, &sw_api_passkey_record_at_0);
}

static void passkeys_list(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.user_id };
	sw_api_query(req, &sw_db_stmt_passkeys_list, params, 1, listed, req);
}

/* After a rename or a delete (audited by its own statement): false
 * (answered 404) when the caller holds no such passkey. */
static bool changed(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err)
{
	return sw_api_found(req, res, err);
}

static void renamed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	if (changed(arg, res, err))
		sw_api_answer_row(arg, 200, res, 0, sw_api_passkey_write, &sw_api_passkey_record_at_0);
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
	if (!sw_api_passkey_body_valid(req, body, &fe))
		return;
	if (!copy) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[3] = { req->principal.user_id, id, copy };
	sw_api_query_audited(req, &sw_db_stmt_passkey_rename, params, 3, "auth.passkey.renamed",
			     "passkey", NULL, NULL, renamed, req);
}

static void deleted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	if (changed(arg, res, err))
		sw_http_respond(arg, 204, NULL, SW_STR_NULL);
}

static void passkeys_delete(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	const char *params[2] = { req->principal.user_id, id };
	sw_api_query_audited(req, &sw_db_stmt_passkey_delete, params, 2, "auth.passkey.deleted",
			     "passkey", NULL, NULL, deleted, req);
}

/* ---- routes ---- */

static const int err_begin[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_read[] = { 503, 0 };
static const int err_rename[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_challenge[] = { 413, 429, 503, 0 };
static const int err_verify[] = { 400, 401, 413, 415, 422, 429, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/auth/passkeys", SW_ACCESS_SESSION, sw_api_passkeys_begin, 4096, 0,
	  { "Start registering a passkey",
	    "Re-authenticates with the password (422 on field password when wrong), then returns "
	    "the options for navigator.credentials.create() in their JSON form "
	    "(PublicKeyCredential.parseCreationOptionsFromJSON): a 56-byte challenge valid for "
	    "5 minutes (stateless: bound to the user, the relying party and its expiry by a MAC "
	    "under the master key; nothing is stored), the relying party (id from AUTH_PASSKEY_RP_ID, else the host of "
	    "PUBLIC_BASE_URL, else localhost), user.id = the 16 bytes of the user's id, ES256, "
	    "EdDSA and RS256, a discoverable credential with user verification, attestation "
	    "none, and the user's passkeys as excludeCredentials. No credential is stored until "
	    "POST /auth/passkeys/confirm; abandoning the ceremony leaves nothing. 409 "
	    "PASSKEY_LIMIT_REACHED at 20 passkeys; 503 PASSKEYS_NOT_CONFIGURED when "
	    "AUTH_PASSKEY_RP_ID or AUTH_PASSKEY_ORIGINS is invalid (the log says why).",
	    "Passkeys", "PasskeyPasswordRequest", "PasskeyCreationOptions", 200, err_begin } },
	{ SW_HTTP_POST, "/auth/passkeys/confirm", SW_ACCESS_SESSION, sw_api_passkeys_confirm,
	  SW_HTTP_DEFAULT_MAX_BODY, 0,
	  { "Finish registering a passkey",
	    "Takes a device name and the new credential (PublicKeyCredential.toJSON()). The "
	    "challenge named in its client data must be one issued to this user by POST "
	    "/auth/passkeys (by this relying party), unexpired; it is used up by this call whatever "
	    "the outcome, which records its hash (409 CHALLENGE_INVALID otherwise: start again). Verifies type, challenge, origin (one of "
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
	{ SW_HTTP_POST, "/auth/passkeys/challenge", SW_ACCESS_PUBLIC, sw_api_passkeys_challenge, 0, 0,
	  { "Start a passkey sign-in",
	    "No body. Returns the options for navigator.credentials.get() in their JSON form "
	    "(PublicKeyCredential.parseRequestOptionsFromJSON): a 32-byte challenge valid for 5 "
	    "minutes and bound to no account, the rp id, user verification required, and no "
	    "allowCredentials: the authenticator offers its discoverable credentials and names "
	    "the account. Limited to 100 per address per 5 minutes (429 with Retry-After).",
	    "Authentication", NULL, "PasskeyRequestOptions", 200, err_challenge } },
	{ SW_HTTP_POST, "/auth/passkeys/verify", SW_ACCESS_PUBLIC, sw_api_passkeys_verify,
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
