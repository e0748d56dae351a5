/* sw_sha256() and sw_sha256_hex() (secret.h) on OpenSSL: stewardd's token
 * hash, on the guard's path, uses libcrypto's code with the CPU's SHA
 * instructions. In a file of its own so that a program taking only the
 * token formats from secret.c (steward-agent) does not link libcrypto;
 * the agent hashes with steward/base/sha.h. */
#include <pthread.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include "steward/base/secret.h"

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
