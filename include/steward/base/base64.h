/* The base64 family (RFC 4648): base64url without padding (tokens),
 * standard base64 with padding (the agent channel's binary payloads, SSH
 * keys, the WebSocket handshake), base32 (TOTP secrets), in base64.c. No
 * libcrypto: steward-agent uses these without mapping it. */
#ifndef STEWARD_BASE64_H
#define STEWARD_BASE64_H

#include "steward/base/base.h"

/* Characters of the unpadded base64url form of n bytes. */
#define SW_BASE64URL_LEN(n) (((n) * 4 + 2) / 3)

/* base64url without padding (RFC 4648 §5). encode writes a NUL-terminated
 * string and returns its length, or -ENOSPC when out (which must hold
 * 4 * ceil(n / 3) + 1 bytes at most) is too small. decode accepts only the
 * canonical form: alphabet A-Z a-z 0-9 - _, no padding, no whitespace,
 * zero unused bits; returns 0 and *ret_len, -EINVAL on any other input,
 * -ENOSPC when out is too small. */
int sw_base64url_encode(const uint8_t *in, size_t n, char *out, size_t outlen);
int sw_base64url_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len);

/* Characters of the padded standard base64 form of n bytes. */
#define SW_BASE64_LEN(n) (((n) + 2) / 3 * 4)

/* Standard base64 with '=' padding (RFC 4648 section 4). encode writes
 * SW_BASE64_LEN(n) characters and a NUL, and returns that length, or
 * -ENOSPC when out (outlen bytes) cannot hold them. decode accepts only
 * the canonical form: alphabet A-Z a-z 0-9 + /, a length that is a
 * multiple of 4, at most two '=' and only at the end, zero unused bits,
 * no whitespace; it returns 0 and *ret_len, -EINVAL on any other input,
 * -ENOSPC when out (outlen bytes) is too small. in may be empty. */
int sw_base64_encode(const uint8_t *in, size_t n, char *out, size_t outlen);
int sw_base64_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len);

/* Characters of the unpadded base32 form of n bytes. */
#define SW_BASE32_LEN(n) (((n) * 8 + 4) / 5)

/* RFC 4648 base32 of in[0..n), upper-case, without '=' padding, and a NUL.
 * 0, or -EINVAL when out (outlen bytes) cannot hold SW_BASE32_LEN(n) + 1. */
int sw_base32_encode(const uint8_t *in, size_t n, char *out, size_t outlen);
/* Decodes base32 as people type it: letters in either case, spaces
 * anywhere ignored, '=' padding accepted only at the end. Refused with
 * -EBADMSG: any other character, a length no byte count encodes (1, 3 or 6
 * characters left over), non-zero unused bits in the last character.
 * -ENOBUFS when out (outlen bytes) is too small. On success (0) *ret_len
 * is the number of bytes written. */
int sw_base32_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len);

#endif
