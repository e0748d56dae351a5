/* Random tokens, digests and the bearer-secret formats (secret.h).
 *
 * Tokens are base64url without padding (RFC 4648 section 5) so that they
 * travel unquoted in cookies, headers and URLs. A well-formedness check
 * refuses anything sw_*_new() could not have produced, including
 * non-canonical final characters, so two spellings never name one token. */
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include "steward/base/secret.h"

int sw_random_token(char *out, size_t outlen, size_t nbytes)
{
	if (nbytes > (SIZE_MAX - 3) / 4 || outlen < SW_BASE64URL_LEN(nbytes) + 1)
		return -EINVAL;
	/* Chunks of a multiple of 3 bytes encode to whole groups, so their
	 * encodings concatenate to the encoding of the whole. */
	uint8_t chunk[48];
	size_t o = 0;
	int r = 0;
	for (size_t done = 0; done < nbytes;) {
		size_t n = SW_MIN(sizeof(chunk), nbytes - done);
		if (RAND_bytes(chunk, (int)n) != 1) {
			r = -EIO;
			o = 0;
			break;
		}
		int w = sw_base64url_encode(chunk, n, out + o, outlen - o);
		if (SW_NEVER(w < 0)) {
			r = -EINVAL;
			o = 0;
			break;
		}
		o += (size_t)w;
		done += n;
	}
	OPENSSL_cleanse(chunk, sizeof(chunk));
	if (r < 0)
		OPENSSL_cleanse(out, SW_BASE64URL_LEN(nbytes));
	out[o] = '\0';
	return r;
}

int sw_random_uuid(char out[37])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[16];
	out[0] = '\0';
	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	size_t o = 0;
	for (size_t i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
	return 0;
}

/* SHA-256 is on the guard's path for every authenticated request. OpenSSL
 * 3's one-shot EVP_Digest() looks the algorithm up and allocates a context
 * on each call (about 450 ns here); the algorithm fetched once and a context
 * kept per thread cost about 80 ns. */
static EVP_MD *sha256_md;
static pthread_key_t sha256_ctx_key;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void sha256_init(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!sha256_md || pthread_key_create(&sha256_ctx_key, sha256_ctx_free) != 0)
		abort();
}

void sw_sha256(const void *p, size_t n, uint8_t out[32])
{
	static const uint8_t empty;
	pthread_once(&sha256_once, sha256_init);
	EVP_MD_CTX *ctx = pthread_getspecific(sha256_ctx_key);
	if (!ctx) {
		ctx = EVP_MD_CTX_new();
		if (!ctx || pthread_setspecific(sha256_ctx_key, ctx) != 0)
			abort();
	}
	if (EVP_DigestInit_ex2(ctx, sha256_md, NULL) != 1 ||
	    EVP_DigestUpdate(ctx, n ? p : &empty, n) != 1 ||
	    EVP_DigestFinal_ex(ctx, out, NULL) != 1)
		abort();
}

void sw_sha256_hex(const void *p, size_t n, char out[65])
{
	uint8_t d[32];
	sw_sha256(p, n, d);
	sw_hex_encode(d, sizeof(d), out, 65);
}

int sw_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32])
{
	static const uint8_t empty;
	unsigned int len = 0;
	if (klen > INT_MAX ||
	    !HMAC(EVP_sha256(), klen ? key : &empty, (int)klen, mlen ? msg : &empty, mlen, out,
		  &len) ||
	    len != 32) {
		memset(out, 0, 32);
		return -EIO;
	}
	return 0;
}

/* n characters of canonical base64url encoding 32 bytes. */
static bool b64url_canonical_32(struct sw_str s)
{
	uint8_t raw[SW_TOKEN_RANDOM_BYTES];
	size_t n = 0;
	bool ok = s.len == SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) &&
		  sw_base64url_decode(s, raw, sizeof(raw), &n) == 0 && n == sizeof(raw);
	OPENSSL_cleanse(raw, sizeof(raw));
	return ok;
}

int sw_tagged_token_new(const char *tag, char *out, size_t outlen, char *prefix_out,
			size_t prefix_len)
{
	size_t t = strlen(tag);
	int r = -EINVAL;
	if (outlen < t + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) + 1 || prefix_len < t + 9)
		goto fail;
	memcpy(out, tag, t);
	r = sw_random_token(out + t, outlen - t, SW_TOKEN_RANDOM_BYTES);
	if (r < 0)
		goto fail;
	memcpy(prefix_out, out, t + 8);
	prefix_out[t + 8] = '\0';
	return 0;
fail:
	if (outlen)
		out[0] = '\0';
	if (prefix_len)
		prefix_out[0] = '\0';
	return r;
}

bool sw_tagged_token_well_formed(struct sw_str s, const char *tag)
{
	size_t t = strlen(tag);
	return s.len == t + SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) && memcmp(s.ptr, tag, t) == 0 &&
	       b64url_canonical_32(sw_str_from(s.ptr + t, s.len - t));
}

int sw_api_token_new(char out[SW_API_TOKEN_LEN + 1], char prefix_out[SW_API_TOKEN_PREFIX_LEN + 1])
{
	return sw_tagged_token_new(SW_API_TOKEN_TAG, out, SW_API_TOKEN_LEN + 1, prefix_out,
				   SW_API_TOKEN_PREFIX_LEN + 1);
}

bool sw_api_token_well_formed(struct sw_str s)
{
	return sw_tagged_token_well_formed(s, SW_API_TOKEN_TAG);
}

int sw_agent_token_new(char out[SW_AGENT_TOKEN_LEN + 1], char prefix_out[SW_AGENT_TOKEN_PREFIX_LEN + 1])
{
	return sw_tagged_token_new(SW_AGENT_TOKEN_TAG, out, SW_AGENT_TOKEN_LEN + 1, prefix_out,
				   SW_AGENT_TOKEN_PREFIX_LEN + 1);
}

bool sw_agent_token_well_formed(struct sw_str s)
{
	return sw_tagged_token_well_formed(s, SW_AGENT_TOKEN_TAG);
}

int sw_session_token_new(char out[SW_SESSION_TOKEN_LEN + 1])
{
	return sw_random_token(out, SW_SESSION_TOKEN_LEN + 1, SW_TOKEN_RANDOM_BYTES);
}

bool sw_session_token_well_formed(struct sw_str s)
{
	return b64url_canonical_32(s);
}

/* ---- base64url ---- */

static const char b64url_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int sw_base64url_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	size_t need = n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
	if (outlen <= need)
		return -ENOSPC;
	size_t o = 0, i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		out[o++] = b64url_alphabet[v >> 18];
		out[o++] = b64url_alphabet[(v >> 12) & 63];
		out[o++] = b64url_alphabet[(v >> 6) & 63];
		out[o++] = b64url_alphabet[v & 63];
	}
	if (n - i == 1) {
		out[o++] = b64url_alphabet[in[i] >> 2];
		out[o++] = b64url_alphabet[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 8 | in[i + 1];
		out[o++] = b64url_alphabet[v >> 10];
		out[o++] = b64url_alphabet[(v >> 4) & 63];
		out[o++] = b64url_alphabet[(v & 15) << 2];
	}
	out[o] = '\0';
	return (int)o;
}

static int b64url_value(char c)
{
	const char *p = c ? memchr(b64url_alphabet, c, 64) : NULL;
	return p ? (int)(p - b64url_alphabet) : -1;
}

int sw_base64url_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len)
{
	if (in.len % 4 == 1)
		return -EINVAL;
	size_t n = in.len / 4 * 3 + (in.len % 4 ? in.len % 4 - 1 : 0);
	if (n > outlen)
		return -ENOSPC;
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;
	for (size_t i = 0; i < in.len; i++) {
		int v = b64url_value(in.ptr[i]);
		if (v < 0)
			return -EINVAL;
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* Canonical form only: the bits left over must be zero. */
	if (acc & ((1u << bits) - 1))
		return -EINVAL;
	*ret_len = o;
	return 0;
}

/* ---- base32 (RFC 4648) ---- */

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

int sw_base32_encode(const uint8_t *in, size_t n, char *out, size_t outlen)
{
	if (n > (SIZE_MAX - 5) / 8 || outlen < SW_BASE32_LEN(n) + 1)
		return -EINVAL;
	size_t o = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | in[i];
		bits += 8;
		while (bits >= 5) {
			bits -= 5;
			out[o++] = b32[(acc >> bits) & 31];
		}
	}
	if (bits > 0)
		out[o++] = b32[(acc << (5 - bits)) & 31];
	out[o] = '\0';
	return 0;
}

/* Value of a base32 character in either case, or -1. */
static int b32_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= '2' && c <= '7')
		return c - '2' + 26;
	return -1;
}

int sw_base32_decode(struct sw_str in, uint8_t *out, size_t outlen, size_t *ret_len)
{
	size_t o = 0, chars = 0, pad = 0;
	uint32_t acc = 0;
	unsigned bits = 0;
	for (size_t i = 0; i < in.len; i++) {
		unsigned char c = (unsigned char)in.ptr[i];
		if (c == ' ')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		int v = b32_value(c);
		if (v < 0 || pad > 0)
			return -EBADMSG; /* a foreign character, or data after padding */
		chars++;
		acc = (acc << 5) | (uint32_t)v;
		bits += 5;
		if (bits >= 8) {
			bits -= 8;
			if (o == outlen)
				return -ENOBUFS;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* 5 or more bits left would be a character that encodes no byte. */
	if (bits >= 5 || acc != 0)
		return -EBADMSG;
	if (pad > 0 && (pad > 6 || (chars + pad) % 8 != 0))
		return -EBADMSG;
	*ret_len = o;
	return 0;
}
