/* WebAuthn (Level 3) relying-party verification: the registration
 * ceremony (§7.1) and the authentication ceremony (§7.2) as pure functions.
 * No I/O, no database, no clock: the caller supplies the expected
 * challenge it issued, and stores or looks up credentials itself.
 *
 * What is verified, in the spec's order: clientDataJSON (type, challenge,
 * origin, crossOrigin, topOrigin), the authenticator data (rpIdHash, UP,
 * UV when required, BE/BS consistency, attested credential data, no
 * leftover bytes), the credential public key (COSE: ES256, EdDSA/Ed25519,
 * RS256) and the attestation statement ("none", and "packed" either self
 * attestation or x5c). Assertions: the same client-data and flag checks,
 * then the signature over authenticatorData || SHA-256(clientDataJSON).
 *
 * Trust: an x5c attestation certificate is checked against §8.2.1 (v3,
 * subject C/O/CN present and OU "Authenticator Attestation", not a CA, the
 * AAGUID extension equal to the authenticator data's when present) and must
 * verify the attestation signature, but it is NOT chained to any trust
 * anchor (no FIDO Metadata Service). Like most relying parties asking for
 * attestation "none", we accept self attestation and unanchored x5c: the
 * attestation says nothing we rely on. The signature counter is returned,
 * never enforced (synced passkeys report 0 forever).
 *
 * Inputs are bounded (SW_WEBAUTHN_MAX_*); CBOR is checked for
 * well-formedness, definite lengths and nesting depth by our own walker
 * before libcbor builds it, so a declared length can never make libcbor
 * allocate more than the input justifies. */
#ifndef STEWARD_WEBAUTHN_H
#define STEWARD_WEBAUTHN_H

#include "steward/base/base.h"
#include "steward/base/limits.h"
#include <jansson.h>
#include "steward/base/secret.h" /* sw_base64url_* */

/* Authenticator data flags (§6.1). */
#define SW_WEBAUTHN_FLAG_UP 0x01 /* user present */
#define SW_WEBAUTHN_FLAG_UV 0x04 /* user verified */
#define SW_WEBAUTHN_FLAG_BE 0x08 /* backup eligible */
#define SW_WEBAUTHN_FLAG_BS 0x10 /* backed up */
#define SW_WEBAUTHN_FLAG_AT 0x40 /* attested credential data follows */
#define SW_WEBAUTHN_FLAG_ED 0x80 /* extensions follow */

/* COSE algorithm identifiers we accept. */
#define SW_COSE_ES256 (-7)
#define SW_COSE_EDDSA (-8)
#define SW_COSE_RS256 (-257)

/* The relying party: rp_id is the effective domain ("example.org"), whose
 * SHA-256 the authenticator data must carry; origins are compared byte for
 * byte with clientDataJSON's origin ("https://example.org", no trailing
 * slash). Everything is borrowed. require_user_verification: the UV flag
 * must be set (Steward's routes set it; passkeys are a single factor). */
struct sw_webauthn_rp {
	const char *rp_id;
	const char *const *origins;
	size_t origin_count;
	bool require_user_verification;
};

enum sw_webauthn_attestation_type {
	SW_WEBAUTHN_ATTESTATION_NONE, /* fmt "none" */
	SW_WEBAUTHN_ATTESTATION_SELF, /* "packed" signed by the credential key */
	SW_WEBAUTHN_ATTESTATION_X5C,  /* "packed" with a certificate, not anchored */
};

/* A registered credential, filled by sw_webauthn_verify_registration(). It
 * owns no memory: plain bytes, copyable, ready for the database. */
struct sw_webauthn_credential {
	uint8_t id[SW_WEBAUTHN_MAX_CREDENTIAL_ID + 1];
	size_t id_len;
	uint8_t public_key_cose[SW_WEBAUTHN_MAX_PUBLIC_KEY]; /* as received */
	size_t public_key_len;
	int alg;                   /* SW_COSE_ES256, SW_COSE_EDDSA or SW_COSE_RS256 */
	uint32_t sign_count;
	bool user_verified;
	bool backup_eligible;      /* deviceType: "multiDevice" when set */
	bool backed_up;
	enum sw_webauthn_attestation_type attestation;
	char fmt[16];              /* "none" or "packed" */
	uint8_t aaguid[16];
};

static inline const char *sw_webauthn_device_type(const struct sw_webauthn_credential *c)
{
	return c->backup_eligible ? "multiDevice" : "singleDevice";
}

/* What a verified assertion tells the caller to record. */
struct sw_webauthn_assertion {
	uint32_t sign_count; /* recorded, not enforced */
	bool user_verified;
	bool backup_eligible;
	bool backed_up;
};

/* Registration ceremony (§7.1). client_data is the clientDataJSON bytes,
 * attestation_object the attestationObject bytes, challenge the bytes we
 * issued for this ceremony (compared in constant time with the base64url
 * challenge in the client data). Refuses crossOrigin true and any
 * topOrigin: Steward is never embedded in another site's frame.
 * Returns 0 and fills *ret; on failure *ret is unspecified and err holds
 * a short phrase naming the failed check ("challenge mismatch", "origin
 * not allowed", "user verification required", "signature invalid", ...).
 * Errors: -EBADMSG malformed input (JSON, CBOR, authenticator data, key),
 * -EPERM a check failed, -ENOTSUP an algorithm or attestation format we
 * do not support, -E2BIG an input over its SW_WEBAUTHN_MAX_* bound,
 * -ENOMEM, -EINVAL misuse (NULL rp). */
int sw_webauthn_verify_registration(const struct sw_webauthn_rp *rp, const uint8_t *client_data,
				    size_t client_data_len, const uint8_t *attestation_object,
				    size_t attestation_len, const uint8_t *challenge,
				    size_t challenge_len, struct sw_webauthn_credential *ret,
				    char *err, size_t errlen);

/* Authentication ceremony (§7.2): client_data (clientDataJSON), auth_data
 * (authenticatorData), sig (ES256: DER ECDSA; EdDSA: 64 raw bytes; RS256:
 * PKCS#1 v1.5 with SHA-256), the challenge we issued and the stored
 * credential's COSE public key. Checks type "webauthn.get", challenge,
 * origin, crossOrigin/topOrigin, rpIdHash, UP, UV when required, BS
 * without BE, then the signature. Finding the credential by id and
 * checking it belongs to the user is the caller's job. Returns 0 and
 * fills *ret, or the errors of sw_webauthn_verify_registration(). */
int sw_webauthn_verify_assertion(const struct sw_webauthn_rp *rp, const uint8_t *client_data,
				 size_t client_data_len, const uint8_t *auth_data,
				 size_t auth_data_len, const uint8_t *sig, size_t sig_len,
				 const uint8_t *challenge, size_t challenge_len,
				 const uint8_t *public_key_cose, size_t public_key_len,
				 struct sw_webauthn_assertion *ret, char *err, size_t errlen);

/* The client-data step alone (both ceremonies use it; exported for the
 * fuzzer and tests). type is "webauthn.create" or "webauthn.get".
 * Returns 0, or -EBADMSG / -EPERM / -E2BIG with err. */
int sw_webauthn_check_client_data(const struct sw_webauthn_rp *rp, const char *type,
				  const uint8_t *client_data, size_t client_data_len,
				  const uint8_t *challenge, size_t challenge_len, char *err,
				  size_t errlen);

/* Checks that a COSE_Key is one we accept (well-formed, alg in our set,
 * the key valid for its curve or size) and returns its alg. 0, or
 * -EBADMSG / -ENOTSUP with err. */
int sw_webauthn_check_public_key(const uint8_t *cose, size_t len, int *ret_alg, char *err,
				 size_t errlen);


/* ---- reading a ceremony's body (webauthn_json.c) ---- */

#define SW_WEBAUTHN_MAX_USER_HANDLE 64 /* user.id is at most 64 bytes */

/* What a client sends for either ceremony, decoded by
 * sw_webauthn_response_read(). */
struct sw_webauthn_response {
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
	uint8_t user_handle[SW_WEBAUTHN_MAX_USER_HANDLE];
	size_t user_handle_len;
	bool user_handle_given;
};

struct sw_arena;
struct sw_field_errors;
/* Reads body.credential: a registration (attestation: clientDataJSON,
 * attestationObject, transports) or a sign-in (assertion: clientDataJSON,
 * authenticatorData, signature, userHandle) in the JSON form browsers
 * produce. Unknown members, missing or malformed ones, and client data
 * that answers no challenge become field errors in fe (paths allocated in
 * arena). The attestation buffer is allocated in arena. c->challenge_hash
 * is the hex SHA-256 of the challenge the client data claims to answer:
 * whether it is the one issued is sw_webauthn_verify_*()'s to check. */
void sw_webauthn_response_read(struct sw_arena *arena, json_t *body, bool registration,
			       struct sw_webauthn_response *c, struct sw_field_errors *fe);

#endif
