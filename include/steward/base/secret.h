/* Secrets: random tokens, SHA-256, HMAC-SHA-256, and the bearer secrets a
 * client holds: API tokens ("st_" + 43 base64url characters), agent tokens
 * ("sta_" + 43) and session ids (43 base64url characters). All carry 32 random bytes (256
 * bits), so the server stores only their SHA-256 (no salt or slow hash is
 * needed for secrets nobody chose) and looks a presented one up by it.
 * Nothing here does I/O beyond reading the CSPRNG (getrandom(2), sha.h).
 * The base64 family (base64url, standard base64, base32) is base64.h's. */
#ifndef STEWARD_SECRET_H
#define STEWARD_SECRET_H

#include "steward/base/base.h"
#include "steward/base/base64.h"
#include "steward/base/sha.h"

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

/* A random (version 4) UUID in its lower-case text form, for a row whose
 * id must be known before its insert (a sealed value is bound to it). 0,
 * or -EIO when the CSPRNG fails (out is then ""). */
int sw_random_uuid(char out[37]);

/* SHA-256 of p[0..n), raw or as 64 lower-case hex digits and a NUL. p may
 * be NULL when n is 0. Aborts if libcrypto itself fails (only when out of
 * memory): a digest has no safe stand-in value. */
void sw_sha256(const void *p, size_t n, uint8_t out[32]);
void sw_sha256_hex(const void *p, size_t n, char out[65]);

/* HMAC-SHA-256: sw_hmac_sha256() in sha.h (the project's own, no libcrypto). */

/* A server's agent token: "sta_" + 43 base64url characters, made like an
 * API token (the same 256 random bits, stored as the SHA-256 only); the
 * agent presents it when it dials /agent/connect. Its display prefix is
 * "sta_" and the next 8 characters. */
#define SW_AGENT_TOKEN_TAG "sta_"
#define SW_AGENT_TOKEN_LEN (4 + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES)) /* 47 */
#define SW_AGENT_TOKEN_PREFIX_LEN (4 + 8)                                 /* 12 */

/* A new bearer token of the form tag + 43 base64url characters (32 random
 * bytes) into out (outlen >= strlen(tag) + 44), and its display prefix
 * (tag and the next 8 characters) into prefix_out (prefix_len >=
 * strlen(tag) + 9), both NUL-terminated. 0; -EINVAL when a buffer is too
 * small; -EIO on CSPRNG failure. On failure both outputs are empty
 * strings. API and agent tokens are both made here. */
int sw_tagged_token_new(const char *tag, char *out, size_t outlen, char *prefix_out,
			size_t prefix_len);
/* Whether s could be a token sw_tagged_token_new(tag) made: tag, then
 * exactly 43 base64url characters in canonical form (the last one carries
 * 4 bits of data and 2 zero bits). A cheap filter before any lookup. */
bool sw_tagged_token_well_formed(struct sw_str s, const char *tag);

/* sw_tagged_token_new() / _well_formed() with "st_" (API tokens) and
 * "sta_" (agent tokens). */
int sw_api_token_new(char out[SW_API_TOKEN_LEN + 1], char prefix_out[SW_API_TOKEN_PREFIX_LEN + 1]);
bool sw_api_token_well_formed(struct sw_str s);
int sw_agent_token_new(char out[SW_AGENT_TOKEN_LEN + 1],
		       char prefix_out[SW_AGENT_TOKEN_PREFIX_LEN + 1]);
bool sw_agent_token_well_formed(struct sw_str s);

/* A new session id, NUL-terminated. 0 or -EIO (out is then ""). */
int sw_session_token_new(char out[SW_SESSION_TOKEN_LEN + 1]);
/* Whether s could be a session id: 43 canonical base64url characters. */
bool sw_session_token_well_formed(struct sw_str s);

#endif
