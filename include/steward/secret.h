/* Secrets: random tokens, SHA-256, HMAC-SHA-256, and the two bearer
 * secrets a client holds: API tokens ("st_" + 43 base64url characters) and
 * session ids (43 base64url characters). Both carry 32 random bytes (256
 * bits), so the server stores only their SHA-256 (no salt or slow hash is
 * needed for secrets nobody chose) and looks a presented one up by it.
 * Nothing here does I/O beyond reading the CSPRNG (OpenSSL RAND_bytes). */
#ifndef STEWARD_SECRET_H
#define STEWARD_SECRET_H

#include "steward/base.h"

/* Characters of the unpadded base64url form of n bytes. */
#define SW_BASE64URL_LEN(n) (((n) * 4 + 2) / 3)

#define SW_TOKEN_RANDOM_BYTES 32 /* of an API token and of a session id */
#define SW_API_TOKEN_TAG "st_"
#define SW_API_TOKEN_LEN (3 + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES)) /* 46 */
/* The part shown in listings to tell tokens apart: "st_" and the first 8
 * characters after it ("st_AbCdEfGh"). 48 bits: shown, never a secret. */
#define SW_API_TOKEN_PREFIX_LEN (3 + 8) /* 11 */
#define SW_SESSION_TOKEN_LEN SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) /* 43 */

/* Writes nbytes from the CSPRNG as unpadded base64url and a NUL into out.
 * 0; -EINVAL when out (outlen bytes) cannot hold SW_BASE64URL_LEN(nbytes)
 * + 1 bytes; -EIO when the CSPRNG fails (out is then an empty string). */
int sw_random_token(char *out, size_t outlen, size_t nbytes);

/* SHA-256 of p[0..n), raw or as 64 lower-case hex digits and a NUL. p may
 * be NULL when n is 0. Aborts if libcrypto itself fails (only when out of
 * memory): a digest has no safe stand-in value. */
void sw_sha256(const void *p, size_t n, uint8_t out[32]);
void sw_sha256_hex(const void *p, size_t n, char out[65]);

/* HMAC-SHA-256 of msg under key (either may be empty; NULL with length 0
 * is fine). 0, or -EIO when libcrypto fails (out is then zeroed). */
int sw_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32]);

/* A new API token and its display prefix, both NUL-terminated. 0 or -EIO
 * (CSPRNG failure; both outputs are then empty strings). */
int sw_api_token_new(char out[SW_API_TOKEN_LEN + 1], char prefix_out[SW_API_TOKEN_PREFIX_LEN + 1]);
/* Whether s could be an API token sw_api_token_new() made: "st_", then
 * exactly 43 base64url characters in canonical form (the last one carries
 * 4 bits of data and 2 zero bits). A cheap filter before any lookup. */
bool sw_api_token_well_formed(struct sw_str s);

/* A new session id, NUL-terminated. 0 or -EIO (out is then ""). */
int sw_session_token_new(char out[SW_SESSION_TOKEN_LEN + 1]);
/* Whether s could be a session id: 43 canonical base64url characters. */
bool sw_session_token_well_formed(struct sw_str s);

/* base64url without padding (RFC 4648 §5). encode writes a NUL-terminated
 * string and returns its length, or -ENOSPC when out (which must hold
 * 4 * ceil(n / 3) + 1 bytes at most) is too small. decode accepts only the
 * canonical form: alphabet A-Z a-z 0-9 - _, no padding, no whitespace,
 * zero unused bits; returns 0 and *ret_len, -EINVAL on any other input,
 * -ENOSPC when out is too small. */
int sw_base64url_encode(const uint8_t *in, size_t n, char *out, size_t outlen);
int sw_base64url_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len);

#endif
