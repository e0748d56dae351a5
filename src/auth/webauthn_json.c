/* Reading what a browser sends for a WebAuthn ceremony: a
 * PublicKeyCredential in its toJSON() form (base64url without padding),
 * decoded into bounded buffers for sw_webauthn_verify_*(). Every problem
 * becomes a field error named by its path in the body ("credential.
 * response.clientDataJSON"); nothing here decides whether the ceremony
 * succeeds. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "steward/base/json.h"
#include "steward/http/http.h"
#include "steward/auth/webauthn.h"

/* The transports WebAuthn defines, in the order they are stored. */
static const char *const transport_names[] = { "usb", "nfc", "ble", "smart-card", "hybrid", "internal" };

/* Members of obj not in known, reported as "<prefix>.<member>". */
static void unknown_members(struct sw_arena *arena, json_t *obj, const char *prefix,
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
		char *path = sw_arena_alloc(arena, len);
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
static bool client_challenge(struct sw_webauthn_response *c)
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
static void read_transports(json_t *resp, struct sw_webauthn_response *c, struct sw_field_errors *fe)
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

/* What toJSON() adds to an attestation beside the attestation object: the
 * authenticator data and the public key again (SPKI), and its algorithm.
 * They are never trusted (the attestation object is what is verified), but
 * they are part of the body the document describes, so they are refused
 * as field errors when they are not what it says: base64url, bounded. */
static void registration_extras(struct sw_arena *arena, json_t *resp, struct sw_webauthn_response *c,
				struct sw_field_errors *fe)
{
	size_t n = 0;
	b64_member(resp, "authenticatorData", "credential.response.authenticatorData", false,
		   c->auth_data, sizeof(c->auth_data), &n, fe);
	uint8_t *key = sw_arena_alloc(arena, SW_WEBAUTHN_MAX_PUBLIC_KEY);
	if (key)
		b64_member(resp, "publicKey", "credential.response.publicKey", false, key,
			   SW_WEBAUTHN_MAX_PUBLIC_KEY, &n, fe);
	json_t *alg = json_object_get(resp, "publicKeyAlgorithm");
	if (alg && (!json_is_integer(alg) || json_integer_value(alg) < INT32_MIN ||
		    json_integer_value(alg) > INT32_MAX))
		sw_field_error(fe, "credential.response.publicKeyAlgorithm", "must be a COSE algorithm (an integer)");
}

void sw_webauthn_response_read(struct sw_arena *arena, json_t *body, bool registration,
			       struct sw_webauthn_response *c, struct sw_field_errors *fe)
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
	unknown_members(arena, cred, "credential", known, fe);
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
	unknown_members(arena, resp, "credential.response",
			registration ? known_attestation : known_assertion, fe);
	if (b64_member(resp, "clientDataJSON", "credential.response.clientDataJSON", true,
		       c->client_data, sizeof(c->client_data), &c->client_data_len, fe) &&
	    !client_challenge(c))
		sw_field_error(fe, "credential.response.clientDataJSON",
			       "must be client data answering a challenge");
	if (registration) {
		c->attestation = sw_arena_alloc(arena, SW_WEBAUTHN_MAX_ATTESTATION);
		if (c->attestation)
			b64_member(resp, "attestationObject", "credential.response.attestationObject", true,
				   c->attestation, SW_WEBAUTHN_MAX_ATTESTATION, &c->attestation_len, fe);
		read_transports(resp, c, fe);
		registration_extras(arena, resp, c, fe);
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
