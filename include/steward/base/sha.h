/* SHA-1 and SHA-256 (FIPS 180-4), HMAC-SHA-256 (RFC 2104), random bytes
 * from getrandom(2), and wiping a secret: the project's own, so that a
 * process needing no more than these (steward-agent on a ws:// URL) maps
 * no libcrypto at all (docs/architecture.md, issue 11). Plain portable C:
 * stewardd's hot digests (the guard's token hash) stay on OpenSSL
 * (secret.h), whose code uses the CPU's SHA instructions. */
#ifndef STEWARD_BASE_SHA_H
#define STEWARD_BASE_SHA_H

#include <stddef.h>
#include <stdint.h>

#define SW_SHA1_LEN 20
#define SW_SHA256_LEN 32

/* A running SHA-256: init, update any number of times (p may be NULL when
 * n is 0), final (which leaves the context wiped). */
struct sw_sha256_ctx {
	uint32_t h[8];
	uint64_t bytes; /* taken so far */
	uint8_t block[64];
	size_t fill; /* bytes of block in use */
};
void sw_sha256_init(struct sw_sha256_ctx *c);
void sw_sha256_update(struct sw_sha256_ctx *c, const void *p, size_t n);
void sw_sha256_final(struct sw_sha256_ctx *c, uint8_t out[SW_SHA256_LEN]);

/* SHA-256 of p[0..n), one shot. (secret.h's sw_sha256() is stewardd's
 * token hash on OpenSSL's accelerated code; this one needs no libcrypto.) */
void sw_sha256_digest(const void *p, size_t n, uint8_t out[SW_SHA256_LEN]);

/* SHA-1 of p[0..n), one shot. Only where a protocol names it (the
 * WebSocket handshake's Sec-WebSocket-Accept, RFC 6455): never for
 * anything a collision could forge. */
void sw_sha1(const void *p, size_t n, uint8_t out[SW_SHA1_LEN]);

/* HMAC-SHA-256 (RFC 2104) of msg under key; either may be empty (NULL with
 * length 0). Always 0 (an int for its callers written when it could fail). */
int sw_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		   uint8_t out[SW_SHA256_LEN]);

/* n bytes from the kernel's CSPRNG (getrandom(2), blocking only until it
 * is seeded at boot). 0, or -EIO (out is then zeroed). */
int sw_random_bytes(void *out, size_t n);

/* Zeroes p[0..n) in a way the compiler keeps (explicit_bzero). */
void sw_wipe(void *p, size_t n);

#endif
