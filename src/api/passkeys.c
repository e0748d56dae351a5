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
#include <arpa/inet.h>
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
#define ORIGINS_MAX 16
#define ORIGIN_MAX_LEN 255
#define DOMAIN_MAX_LEN 253
#define USER_HANDLE_MAX 64  /* WebAuthn: user.id is at most 64 bytes */
#define UUID_BYTES 16
#define ID_HEX_CAP (2 * SW_WEBAUTHN_MAX_CREDENTIAL_ID + 1)
#define ID_B64_CAP (SW_BASE64URL_LEN(SW_WEBAUTHN_MAX_CREDENTIAL_ID) + 1)

static const struct sw_ratelimit limit_challenge_address = { "passkey_challenge_address", 100, 300 };
static const struct sw_ratelimit limit_account = { "passkey_account", 10, 300 };

#define REGISTRATION_GONE \
	"The registration is unknown, expired or already answered; start again with POST /auth/passkeys."
#define PASSKEY_GONE "This passkey is not registered here (any more); sign in with your password."
#define PASSKEY_REFUSED "The passkey could not be verified."

static const char *const transport_names[] = { "usb", "nfc", "ble", "smart-card", "hybrid", "internal" };

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

/* ---- the relying party (AUTH_PASSKEY_RP_ID, AUTH_PASSKEY_ORIGINS) ---- */

struct rp_settings {
	bool ok;
	char rp_id[DOMAIN_MAX_LEN + 1];
	char origin_text[ORIGINS_MAX][ORIGIN_MAX_LEN + 1];
	const char *origins[ORIGINS_MAX];
	struct sw_webauthn_rp rp;
};

static struct rp_settings settings;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
/* The configuration load_settings() reads: pthread_once() takes no
 * argument, and the first caller's thread is the one that runs it. */
static _Thread_local const struct sw_config *settings_config;

static bool copy_lower(struct sw_str s, char *out, size_t cap)
{
	if (s.len >= cap)
		return false;
	for (size_t i = 0; i < s.len; i++)
		out[i] = s.ptr[i] >= 'A' && s.ptr[i] <= 'Z' ? (char)(s.ptr[i] + 32) : s.ptr[i];
	out[s.len] = '\0';
	return true;
}

/* A lower-case DNS name of LDH labels; a dotted quad (an address, which
 * WebAuthn refuses as an rp id) is not one. */
static bool domain_valid(const char *s)
{
	size_t n = strlen(s), label = 0;
	bool numeric = true;
	if (n == 0 || n > DOMAIN_MAX_LEN)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
				return false;
			if (c == '\0')
				return !numeric;
			label = 0;
			numeric = true;
			continue;
		}
		bool digit = c >= '0' && c <= '9';
		if (!digit && !(c >= 'a' && c <= 'z') && c != '-')
			return false;
		numeric = numeric && digit;
		label++;
	}
	return false;
}

static bool host_is_local(const char *host)
{
	size_t n = strlen(host);
	return strcmp(host, "localhost") == 0 || (n > 10 && strcmp(host + n - 10, ".localhost") == 0);
}

/* Whether host is rp_id or a subdomain of it: where a browser lets an
 * origin use the rp id. */
static bool host_within(const char *host, const char *rp_id)
{
	size_t h = strlen(host), r = strlen(rp_id);
	return strcmp(host, rp_id) == 0 ||
	       (h > r + 1 && host[h - r - 1] == '.' && strcmp(host + h - r, rp_id) == 0);
}

/* Parses "scheme://host[:port]" (spaces around and one trailing '/'
 * tolerated) into the serialised origin a browser reports in the client
 * data: lower case, no default port. NULL, or a phrase saying what is
 * wrong. */
static const char *origin_parse(struct sw_str in, char out[ORIGIN_MAX_LEN + 1],
				char host[DOMAIN_MAX_LEN + 1])
{
	while (in.len && in.ptr[0] == ' ')
		in = sw_str_from(in.ptr + 1, in.len - 1);
	while (in.len && in.ptr[in.len - 1] == ' ')
		in.len--;
	bool https = in.len >= 8 && sw_str_case_eq(sw_str_from(in.ptr, 8), SW_STR("https://"));
	if (!https && !(in.len >= 7 && sw_str_case_eq(sw_str_from(in.ptr, 7), SW_STR("http://"))))
		return "is not an http:// or https:// origin";
	size_t skip = https ? 8 : 7;
	struct sw_str rest = sw_str_from(in.ptr + skip, in.len - skip);
	if (rest.len && rest.ptr[rest.len - 1] == '/')
		rest.len--;
	const char *colon = rest.len ? memchr(rest.ptr, ':', rest.len) : NULL;
	struct sw_str name = rest, port = SW_STR_NULL;
	if (colon) {
		name.len = (size_t)(colon - rest.ptr);
		port = sw_str_from(colon + 1, rest.len - name.len - 1);
	}
	if (!copy_lower(name, host, DOMAIN_MAX_LEN + 1) || !domain_valid(host))
		return "must be scheme://host[:port] with a domain name and no path";
	uint64_t p = 0;
	if (colon && (port.len > 5 || !sw_parse_u64(port, &p) || p == 0 || p > 65535))
		return "has an invalid port";
	if (p == (https ? 443 : 80))
		p = 0;
	if (!https && !host_is_local(host))
		return "uses http://, which browsers allow for passkeys only on localhost";
	char port_text[8] = "";
	if (p)
		snprintf(port_text, sizeof(port_text), ":%u", (unsigned)p);
	int n = snprintf(out, ORIGIN_MAX_LEN + 1, "%s://%s%s", https ? "https" : "http", host, port_text);
	return n > ORIGIN_MAX_LEN ? "is too long" : NULL;
}

static unsigned listen_port(const struct sw_config *cfg)
{
	if (cfg->listen_addr.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&cfg->listen_addr)->sin6_port);
	return ntohs(((const struct sockaddr_in *)&cfg->listen_addr)->sin_port);
}

/* Fills settings.origin_text from AUTH_PASSKEY_ORIGINS (and hosts[]).
 * Returns the count, or 0 with why. */
static size_t origins_from_list(const char *list, char hosts[][DOMAIN_MAX_LEN + 1], char *why,
				size_t whylen)
{
	size_t n = 0;
	for (const char *p = list;;) {
		const char *comma = strchr(p, ',');
		struct sw_str item = sw_str_from(p, comma ? (size_t)(comma - p) : strlen(p));
		bool blank = true;
		for (size_t i = 0; i < item.len && blank; i++)
			blank = item.ptr[i] == ' ';
		if (!blank) {
			if (n == ORIGINS_MAX) {
				snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS lists more than %d origins", ORIGINS_MAX);
				return 0;
			}
			const char *e = origin_parse(item, settings.origin_text[n], hosts[n]);
			if (e) {
				snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS: \"%.*s\" %s",
					 (int)SW_MIN(item.len, 200), item.ptr, e);
				return 0;
			}
			n++;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!n)
		snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS lists no origin");
	return n;
}

static void load_settings(void)
{
	const struct sw_config *cfg = settings_config;
	char why[1024] = "";
	char hosts[ORIGINS_MAX][DOMAIN_MAX_LEN + 1];
	const char *env_rp = getenv("AUTH_PASSKEY_RP_ID");
	const char *env_origins = getenv("AUTH_PASSKEY_ORIGINS");
	const char *base = cfg->public_base_url && *cfg->public_base_url ? cfg->public_base_url : NULL;
	env_rp = env_rp && *env_rp ? env_rp : NULL;
	env_origins = env_origins && *env_origins ? env_origins : NULL;

	char base_origin[ORIGIN_MAX_LEN + 1], base_host[DOMAIN_MAX_LEN + 1];
	if (base && (!env_rp || !env_origins)) {
		const char *sep = strstr(base, "://");
		const char *slash = sep ? strchr(sep + 3, '/') : NULL;
		size_t len = slash ? (size_t)(slash - base) : strlen(base);
		const char *e = origin_parse(sw_str_from(base, len), base_origin, base_host);
		if (e) {
			snprintf(why, sizeof(why), "PUBLIC_BASE_URL %s, so it cannot stand in for "
				 "AUTH_PASSKEY_RP_ID and AUTH_PASSKEY_ORIGINS; set them", e);
			goto fail;
		}
	}
	if (env_rp) {
		if (!copy_lower(sw_str_cstr(env_rp), settings.rp_id, sizeof(settings.rp_id)) ||
		    !domain_valid(settings.rp_id)) {
			snprintf(why, sizeof(why), "AUTH_PASSKEY_RP_ID must be a bare domain name (no "
				 "scheme, no port), such as example.org");
			goto fail;
		}
	} else {
		snprintf(settings.rp_id, sizeof(settings.rp_id), "%s", base ? base_host : "localhost");
	}

	size_t n = 1;
	if (env_origins) {
		n = origins_from_list(env_origins, hosts, why, sizeof(why));
		if (!n)
			goto fail;
	} else if (base) {
		memcpy(settings.origin_text[0], base_origin, sizeof(base_origin));
		memcpy(hosts[0], base_host, sizeof(base_host));
	} else {
		snprintf(settings.origin_text[0], sizeof(settings.origin_text[0]), "http://localhost:%u",
			 listen_port(cfg));
		snprintf(hosts[0], sizeof(hosts[0]), "localhost");
	}
	for (size_t i = 0; i < n; i++) {
		if (!host_within(hosts[i], settings.rp_id)) {
			snprintf(why, sizeof(why), "the passkey origin %s is not on the rp id %s or a "
				 "subdomain of it (set AUTH_PASSKEY_RP_ID and AUTH_PASSKEY_ORIGINS)",
				 settings.origin_text[i], settings.rp_id);
			goto fail;
		}
		settings.origins[i] = settings.origin_text[i];
	}
	settings.rp = (struct sw_webauthn_rp){ .rp_id = settings.rp_id, .origins = settings.origins,
					       .origin_count = n, .require_user_verification = true };
	settings.ok = true;
	char list[ORIGINS_MAX * (ORIGIN_MAX_LEN + 1)] = "";
	for (size_t i = 0, o = 0; i < n; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? "," : "", settings.origins[i]);
	sw_log_info("passkeys rp_id=%s origins=%s", settings.rp_id, list);
	return;
fail:
	sw_log_error("passkeys disabled: %s", why);
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

/* ---- reading a PublicKeyCredential (its toJSON() form) ---- */

/* What a client sends for either ceremony, decoded. */
struct credential_in {
	uint8_t raw_id[SW_WEBAUTHN_MAX_CREDENTIAL_ID];
	size_t raw_id_len;
	uint8_t client_data[SW_WEBAUTHN_MAX_CLIENT_DATA];
	size_t client_data_len;
	uint8_t challenge[SW_WEBAUTHN_MAX_CHALLENGE]; /* as the client data states it */
	size_t challenge_len;
	char challenge_hash[65];                      /* hex SHA-256: the database key */
	uint8_t *attestation;                         /* registration: in the arena */
	size_t attestation_len;
	char transports[64];                          /* registration: "{usb,internal}" */
	uint8_t auth_data[SW_WEBAUTHN_MAX_AUTH_DATA]; /* sign-in */
	size_t auth_data_len;
	uint8_t signature[SW_WEBAUTHN_MAX_SIGNATURE];
	size_t signature_len;
	uint8_t user_handle[USER_HANDLE_MAX];
	size_t user_handle_len;
	bool user_handle_given;
};

/* Members of obj not in known, reported as "<prefix>.<member>". */
static void unknown_members(struct sw_http_request *req, json_t *obj, const char *prefix,
			    const char *const *known, struct sw_field_errors *fe)
{
	const char *key;
	json_t *value;
	json_object_foreach(obj, key, value) {
		const char *const *k = known;
		while (*k && strcmp(*k, key) != 0)
			k++;
		if (*k)
			continue;
		size_t len = strlen(prefix) + 1 + strlen(key) + 1;
		char *path = sw_arena_alloc(&req->arena, len);
		if (path) {
			snprintf(path, len, "%s.%s", prefix, key);
			sw_field_error(fe, path, "is not a known field");
		}
	}
}

static json_t *object_member(json_t *obj, const char *key, const char *path,
			     struct sw_field_errors *fe)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_object(v)) {
		sw_field_error(fe, path, v ? "must be an object" : "is required");
		return NULL;
	}
	return v;
}

/* Decodes the base64url member key of obj into out. false, with a field
 * error on path unless it is absent and optional, when it cannot. */
static bool b64_member(json_t *obj, const char *key, const char *path, bool required,
		       uint8_t *out, size_t cap, size_t *ret_len, struct sw_field_errors *fe)
{
	json_t *v = json_object_get(obj, key);
	int r = -EINVAL;
	if (json_is_string(v))
		r = sw_base64url_decode(sw_str_from(json_string_value(v), json_string_length(v)), out,
					cap, ret_len);
	if (r == 0 && *ret_len > 0)
		return true;
	if (v || required)
		sw_field_error(fe, path, !v ? "is required" :
					 !json_is_string(v) ? "must be a base64url string" :
					 r == -ENOSPC ? "is too long" :
					 r < 0 ? "must be base64url without padding" : "must not be empty");
	return false;
}

/* The challenge the client data claims to answer, and its hash: what the
 * database is asked for. Whether it is really the one issued, and every
 * other check of the client data, is sw_webauthn_verify_*()'s job. */
static bool client_challenge(struct credential_in *c)
{
	char jerr[96];
	json_t *cd = sw_json_parse_object(sw_str_from((const char *)c->client_data, c->client_data_len),
					  jerr, sizeof(jerr));
	json_t *ch = cd ? json_object_get(cd, "challenge") : NULL;
	bool ok = json_is_string(ch) &&
		  sw_base64url_decode(sw_str_from(json_string_value(ch), json_string_length(ch)),
				      c->challenge, sizeof(c->challenge), &c->challenge_len) == 0 &&
		  c->challenge_len > 0;
	if (ok)
		sw_sha256_hex(c->challenge, c->challenge_len, c->challenge_hash);
	json_decref(cd);
	return ok;
}

/* response.transports: kept are the values WebAuthn defines, once each,
 * as a text array literal; others are ignored (new ones will appear). */
static void read_transports(json_t *resp, struct credential_in *c, struct sw_field_errors *fe)
{
	json_t *arr = json_object_get(resp, "transports");
	unsigned seen = 0;
	if (arr && (!json_is_array(arr) || json_array_size(arr) > 16)) {
		sw_field_error(fe, "credential.response.transports", "must be an array of at most 16 strings");
		arr = NULL;
	}
	size_t i;
	json_t *item;
	json_array_foreach(arr, i, item) {
		if (!json_is_string(item)) {
			sw_field_error(fe, "credential.response.transports", "must be an array of at most 16 strings");
			break;
		}
		for (size_t t = 0; t < SW_ARRAY_SIZE(transport_names); t++)
			if (strcmp(json_string_value(item), transport_names[t]) == 0)
				seen |= 1u << t;
	}
	size_t o = 0;
	c->transports[o++] = '{';
	for (size_t t = 0; t < SW_ARRAY_SIZE(transport_names); t++)
		if (seen & (1u << t))
			o += (size_t)snprintf(c->transports + o, sizeof(c->transports) - o, "%s%s",
					      o > 1 ? "," : "", transport_names[t]);
	snprintf(c->transports + o, sizeof(c->transports) - o, "}");
}

/* Reads body.credential: a registration (attestation) or a sign-in
 * (assertion) in the JSON form browsers produce (PublicKeyCredential
 * toJSON(), base64url without padding). Problems become field errors. */
static void read_credential(struct sw_http_request *req, json_t *body, bool registration,
			    struct credential_in *c, struct sw_field_errors *fe)
{
	static const char *const known[] = { "id", "rawId", "type", "response",
					     "authenticatorAttachment", "clientExtensionResults", NULL };
	static const char *const known_attestation[] = { "clientDataJSON", "attestationObject",
							 "transports", "authenticatorData",
							 "publicKey", "publicKeyAlgorithm", NULL };
	static const char *const known_assertion[] = { "clientDataJSON", "authenticatorData",
						       "signature", "userHandle", NULL };
	json_t *cred = object_member(body, "credential", "credential", fe);
	if (!cred)
		return;
	unknown_members(req, cred, "credential", known, fe);
	json_t *id = json_object_get(cred, "id");
	if (b64_member(cred, "rawId", "credential.rawId", true, c->raw_id, sizeof(c->raw_id),
		       &c->raw_id_len, fe) &&
	    !json_equal(id, json_object_get(cred, "rawId")))
		sw_field_error(fe, "credential.id", id ? "must equal rawId" : "is required");
	json_t *type = json_object_get(cred, "type");
	if (!json_is_string(type) || strcmp(json_string_value(type), "public-key") != 0)
		sw_field_error(fe, "credential.type", "must be \"public-key\"");
	json_t *attachment = json_object_get(cred, "authenticatorAttachment");
	if (attachment && !json_is_string(attachment) && !json_is_null(attachment))
		sw_field_error(fe, "credential.authenticatorAttachment", "must be a string or null");
	json_t *ext = json_object_get(cred, "clientExtensionResults");
	if (ext && !json_is_object(ext))
		sw_field_error(fe, "credential.clientExtensionResults", "must be an object");

	json_t *resp = object_member(cred, "response", "credential.response", fe);
	if (!resp)
		return;
	unknown_members(req, resp, "credential.response",
			registration ? known_attestation : known_assertion, fe);
	if (b64_member(resp, "clientDataJSON", "credential.response.clientDataJSON", true,
		       c->client_data, sizeof(c->client_data), &c->client_data_len, fe) &&
	    !client_challenge(c))
		sw_field_error(fe, "credential.response.clientDataJSON",
			       "must be client data answering a challenge");
	if (registration) {
		c->attestation = sw_arena_alloc(&req->arena, SW_WEBAUTHN_MAX_ATTESTATION);
		if (c->attestation)
			b64_member(resp, "attestationObject", "credential.response.attestationObject", true,
				   c->attestation, SW_WEBAUTHN_MAX_ATTESTATION, &c->attestation_len, fe);
		read_transports(resp, c, fe);
		return;
	}
	b64_member(resp, "authenticatorData", "credential.response.authenticatorData", true,
		   c->auth_data, sizeof(c->auth_data), &c->auth_data_len, fe);
	b64_member(resp, "signature", "credential.response.signature", true, c->signature,
		   sizeof(c->signature), &c->signature_len, fe);
	json_t *handle = json_object_get(resp, "userHandle");
	if (handle && !json_is_null(handle))
		c->user_handle_given = b64_member(resp, "userHandle", "credential.response.userHandle",
						  false, c->user_handle, sizeof(c->user_handle),
						  &c->user_handle_len, fe);
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
	struct credential_in in;
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
	read_credential(req, body, true, &c->in, &fe);
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
	struct credential_in in;
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
	read_credential(req, body, false, &s->in, &fe);
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
