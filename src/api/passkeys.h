/* Shared by the passkey files: passkeys.c (the relying party, the user's
 * list of passkeys and the routes), passkey_registration.c and
 * passkey_sign_in.c (the two ceremonies). */
#ifndef STEWARD_API_PASSKEYS_H
#define STEWARD_API_PASSKEYS_H

#include "steward/auth/webauthn.h"
#include "api/api_internal.h"

#define SW_API_PASSKEY_CHALLENGE_BYTES 32
#define SW_API_PASSKEY_CHALLENGE_TTL_S 300
#define SW_API_PASSKEY_UUID_BYTES 16
#define SW_API_PASSKEY_ID_HEX_CAP (2 * SW_WEBAUTHN_MAX_CREDENTIAL_ID + 1)
#define SW_API_PASSKEY_ID_B64_CAP (SW_BASE64URL_LEN(SW_WEBAUTHN_MAX_CREDENTIAL_ID) + 1)

/* The relying party (sw_config_passkeys(), read at the first ceremony), or
 * NULL after answering 503 PASSKEYS_NOT_CONFIGURED when it is
 * misconfigured. */
const struct sw_webauthn_rp *sw_api_passkey_rp(struct sw_http_request *req);
/* The relying party, for the callbacks of a ceremony whose handler passed
 * sw_api_passkey_rp() (or sw_api_passkey_start()): set for good by then. */
const struct sw_webauthn_rp *sw_api_passkey_rp_loaded(void);

/* Starts a ceremony's handler: passkeys are configured (else 503), the
 * handler's state (sw_api_state_new()) and the body parsed with only the
 * known members (sw_api_body()). NULL when the request has been answered;
 * otherwise the caller drops *ret_body (sw_api_passkey_body_valid()). */
void *sw_api_passkey_start(struct sw_http_request *req, size_t size, const char *const *known,
			   bool wipe_raw, struct sw_field_errors *fe, json_t **ret_body);
/* Drops the body; answers 422 and returns false when a field was refused. */
bool sw_api_passkey_body_valid(struct sw_http_request *req, json_t *body, struct sw_field_errors *fe);

/* Bytes as the database's hex (n > 0, cap >= 2n + 1); false otherwise. */
bool sw_api_passkey_hex(const uint8_t *p, size_t n, char *out, size_t cap);
/* The 16 bytes of a UUID in text form: the user handle. */
bool sw_api_passkey_user_handle(const char *uuid, uint8_t out[SW_API_PASSKEY_UUID_BYTES]);

/* A fresh challenge: its bytes, base64url text and hex SHA-256. */
struct sw_api_passkey_challenge {
	uint8_t bytes[SW_API_PASSKEY_CHALLENGE_BYTES];
	char text[SW_BASE64URL_LEN(SW_API_PASSKEY_CHALLENGE_BYTES) + 1];
	char hash[65];
};
bool sw_api_passkey_challenge_new(struct sw_api_passkey_challenge *c);

/* A row writer (sw_api_row_writer) of a passkey as the API shows it; ctx
 * points to the index of the first record column in the row (one of
 * these). */
void sw_api_passkey_write(struct sw_json *j, const PGresult *res, int row, const void *ctx);
extern const int sw_api_passkey_record_at_0, sw_api_passkey_record_at_1;

/* The ceremonies' handlers (their routes are in passkeys.c). */
void sw_api_passkeys_begin(struct sw_http_request *req);
void sw_api_passkeys_confirm(struct sw_http_request *req);
void sw_api_passkeys_challenge(struct sw_http_request *req);
void sw_api_passkeys_verify(struct sw_http_request *req);

#endif
