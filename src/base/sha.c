/* SHA-1, SHA-256, HMAC-SHA-256, getrandom and wiping (sha.h). Written
 * from FIPS 180-4 (sections 4.1, 4.2, 5.1, 6.1, 6.2) and RFC 2104; checked
 * against their published vectors and OpenSSL in tests/unit/test_sha.c. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include "steward/base/sha.h"

static inline uint32_t rotr(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static inline uint32_t rotl(uint32_t x, unsigned n)
{
	return x << n | x >> (32 - n);
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The message's padding (FIPS 180-4 5.1.1, both digests): 0x80, zeros up
 * to 56 mod 64, then the length in bits as 64 bits big-endian. Calls
 * block() on each final block. */
static void pad_blocks(uint8_t block[64], size_t fill, uint64_t bytes,
		       void (*compress)(void *state, const uint8_t *b), void *state)
{
	block[fill++] = 0x80;
	if (fill > 56) {
		memset(block + fill, 0, 64 - fill);
		compress(state, block);
		fill = 0;
	}
	memset(block + fill, 0, 56 - fill);
	uint64_t bits = bytes * 8;
	for (int i = 0; i < 8; i++)
		block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(state, block);
}

/* ---- SHA-256 (FIPS 180-4 6.2) ---- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static void sha256_compress(void *state, const uint8_t *b)
{
	uint32_t *h = state;
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = load_be32(b + 4 * t);
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = hh + S1 + ch + K256[t] + w[t];
		uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & bb) ^ (a & c) ^ (bb & c);
		uint32_t t2 = S0 + maj;
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = bb;
		bb = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += bb;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void sw_sha256_init(struct sw_sha256_ctx *c)
{
	static const uint32_t H0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
	memcpy(c->h, H0, sizeof(H0));
	c->bytes = 0;
	c->fill = 0;
}

void sw_sha256_update(struct sw_sha256_ctx *c, const void *p, size_t n)
{
	const uint8_t *in = p;
	if (n == 0)
		return;
	c->bytes += n;
	if (c->fill) {
		size_t take = 64 - c->fill < n ? 64 - c->fill : n;
		memcpy(c->block + c->fill, in, take);
		c->fill += take;
		in += take;
		n -= take;
		if (c->fill < 64)
			return;
		sha256_compress(c->h, c->block);
		c->fill = 0;
	}
	for (; n >= 64; in += 64, n -= 64)
		sha256_compress(c->h, in);
	if (n)
		memcpy(c->block, in, n);
	c->fill = n;
}

void sw_sha256_final(struct sw_sha256_ctx *c, uint8_t out[SW_SHA256_LEN])
{
	pad_blocks(c->block, c->fill, c->bytes, sha256_compress, c->h);
	for (int i = 0; i < 8; i++)
		store_be32(out + 4 * i, c->h[i]);
	sw_wipe(c, sizeof(*c));
}

void sw_sha256_digest(const void *p, size_t n, uint8_t out[SW_SHA256_LEN])
{
	struct sw_sha256_ctx c;
	sw_sha256_init(&c);
	sw_sha256_update(&c, p, n);
	sw_sha256_final(&c, out);
}

/* ---- SHA-1 (FIPS 180-4 6.1) ---- */

static void sha1_compress(void *state, const uint8_t *b)
{
	uint32_t *h = state;
	uint32_t w[80];
	for (int t = 0; t < 16; t++)
		w[t] = load_be32(b + 4 * t);
	for (int t = 16; t < 80; t++)
		w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4];
	for (int t = 0; t < 80; t++) {
		uint32_t f, k;
		if (t < 20) {
			f = (bb & c) ^ (~bb & d);
			k = 0x5a827999;
		} else if (t < 40) {
			f = bb ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (t < 60) {
			f = (bb & c) ^ (bb & d) ^ (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = bb ^ c ^ d;
			k = 0xca62c1d6;
		}
		uint32_t tmp = rotl(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rotl(bb, 30);
		bb = a;
		a = tmp;
	}
	h[0] += a;
	h[1] += bb;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void sw_sha1(const void *p, size_t n, uint8_t out[SW_SHA1_LEN])
{
	uint32_t h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
	const uint8_t *in = p;
	uint8_t block[64];
	size_t total = n;
	for (; n >= 64; in += 64, n -= 64)
		sha1_compress(h, in);
	if (n)
		memcpy(block, in, n);
	pad_blocks(block, n, total, sha1_compress, h);
	for (int i = 0; i < 5; i++)
		store_be32(out + 4 * i, h[i]);
}

/* ---- HMAC-SHA-256 (RFC 2104 section 2; B = 64, L = 32) ---- */

int sw_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
		   uint8_t out[SW_SHA256_LEN])
{
	uint8_t k[64] = { 0 }, pad[64];
	struct sw_sha256_ctx c;
	if (klen > sizeof(k)) { /* a key longer than B is hashed first */
		sw_sha256_init(&c);
		sw_sha256_update(&c, key, klen);
		sw_sha256_final(&c, k);
	} else if (klen) {
		memcpy(k, key, klen);
	}
	uint8_t inner[SW_SHA256_LEN];
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sw_sha256_init(&c);
	sw_sha256_update(&c, pad, sizeof(pad));
	sw_sha256_update(&c, msg, mlen);
	sw_sha256_final(&c, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sw_sha256_init(&c);
	sw_sha256_update(&c, pad, sizeof(pad));
	sw_sha256_update(&c, inner, sizeof(inner));
	sw_sha256_final(&c, out);
	sw_wipe(k, sizeof(k));
	sw_wipe(pad, sizeof(pad));
	sw_wipe(inner, sizeof(inner));
	return 0;
}

/* ---- random bytes, wiping ---- */

int sw_random_bytes(void *out, size_t n)
{
	uint8_t *p = out;
	size_t done = 0;
	while (done < n) {
		ssize_t r = getrandom(p + done, n - done, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			sw_wipe(out, n);
			return -EIO;
		}
		done += (size_t)r;
	}
	return 0;
}

void sw_wipe(void *p, size_t n)
{
	if (n)
		explicit_bzero(p, n);
}
