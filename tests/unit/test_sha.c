/* The project's own SHA-1, SHA-256, HMAC-SHA-256 (steward/base/sha.h) and
 * standard base64 (secret.h): against the published vectors (FIPS 180-4's
 * examples, RFC 4231, RFC 4648) and against OpenSSL on random inputs cut
 * at random places; base64's decoder refuses every non-canonical form;
 * sw_random_bytes fills its buffer; sw_ct_equal answers like memcmp. */
#include <errno.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "steward/base/secret.h"
#include "steward/base/sha.h"
#include "test_help.h"

static void to_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The hex of SHA-256 (len 32) or SHA-1 (len 20) of p[0..n). */
static const char *digest_hex(size_t len, const void *p, size_t n)
{
	static char hex[65];
	uint8_t d[32];
	if (len == 32)
		sw_sha256_digest(p, n, d);
	else
		sw_sha1(p, n, d);
	to_hex(d, len, hex);
	return hex;
}
#define sha256_hex(p, n) digest_hex(32, p, n)
#define sha1_hex(p, n) digest_hex(20, p, n)

static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

TEST(sha1_matches_fips_180_examples)
{
	CHECK_STR_EQ(sha1_hex("abc", 3), "a9993e364706816aba3e25717850c26c9cd0d89d");
	CHECK_STR_EQ(sha1_hex(two_blocks, strlen(two_blocks)), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	CHECK_STR_EQ(sha1_hex(NULL, 0), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	char *a = malloc(1000000);
	REQUIRE(a);
	memset(a, 'a', 1000000);
	CHECK_STR_EQ(sha1_hex(a, 1000000), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
	free(a);
}

TEST(sha256_matches_fips_180_examples)
{
	CHECK_STR_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK_STR_EQ(sha256_hex(two_blocks, strlen(two_blocks)),
		     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	CHECK_STR_EQ(sha256_hex(NULL, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* The million 'a's, fed in pieces of 1..127 bytes. */
	struct sw_sha256_ctx c;
	char a[127];
	memset(a, 'a', sizeof(a));
	sw_sha256_init(&c);
	for (size_t done = 0, k = 1; done < 1000000; k = k % 127 + 1) {
		size_t n = done + k > 1000000 ? 1000000 - done : k;
		sw_sha256_update(&c, a, n);
		done += n;
	}
	uint8_t d[32];
	char hex[65];
	sw_sha256_final(&c, d);
	to_hex(d, 32, hex);
	CHECK_STR_EQ(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static const char *hmac_hex(const void *key, size_t klen, const void *msg, size_t mlen)
{
	static char hex[65];
	uint8_t d[32];
	if (sw_hmac_sha256(key, klen, msg, mlen, d) != 0)
		return "failed";
	to_hex(d, 32, hex);
	return hex;
}

TEST(hmac_sha256_matches_rfc_4231)
{
	uint8_t key[131], data[50];
	memset(key, 0x0b, 20);
	CHECK_STR_EQ(hmac_hex(key, 20, "Hi There", 8),
		     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"); /* 1 */
	const char *m2 = "what do ya want for nothing?";
	CHECK_STR_EQ(hmac_hex("Jefe", 4, m2, strlen(m2)),
		     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"); /* 2 */
	memset(key, 0xaa, 20);
	memset(data, 0xdd, 50);
	CHECK_STR_EQ(hmac_hex(key, 20, data, 50),
		     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"); /* 3 */
	for (int i = 0; i < 25; i++)
		key[i] = (uint8_t)(i + 1);
	memset(data, 0xcd, 50);
	CHECK_STR_EQ(hmac_hex(key, 25, data, 50),
		     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"); /* 4 */
	memset(key, 0xaa, 131);
	const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	CHECK_STR_EQ(hmac_hex(key, 131, m6, strlen(m6)),
		     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"); /* 6 */
	const char *m7 = "This is a test using a larger than block-size key and a larger than "
			 "block-size data. The key needs to be hashed before being used by the HMAC "
			 "algorithm.";
	CHECK_STR_EQ(hmac_hex(key, 131, m7, strlen(m7)),
		     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"); /* 7 */
}

TEST(digests_match_openssl_on_random_inputs)
{
	srand(11);
	static uint8_t in[3000], key[200];
	for (int round = 0; round < 300; round++) {
		size_t n = (size_t)rand() % sizeof(in), kl = (size_t)rand() % sizeof(key);
		for (size_t i = 0; i < n; i++)
			in[i] = (uint8_t)rand();
		for (size_t i = 0; i < kl; i++)
			key[i] = (uint8_t)rand();
		uint8_t ours[32], theirs[32];
		unsigned len = 0;

		sw_sha1(in, n, ours);
		REQUIRE(EVP_Digest(in, n, theirs, &len, EVP_sha1(), NULL) == 1 && len == 20);
		CHECK(memcmp(ours, theirs, 20) == 0);

		/* SHA-256 in three pieces cut at random places. */
		size_t a = n ? (size_t)rand() % (n + 1) : 0, b = a + (n - a ? (size_t)rand() % (n - a + 1) : 0);
		struct sw_sha256_ctx c;
		sw_sha256_init(&c);
		sw_sha256_update(&c, in, a);
		sw_sha256_update(&c, in + a, b - a);
		sw_sha256_update(&c, in + b, n - b);
		sw_sha256_final(&c, ours);
		REQUIRE(EVP_Digest(in, n, theirs, &len, EVP_sha256(), NULL) == 1 && len == 32);
		CHECK(memcmp(ours, theirs, 32) == 0);

		REQUIRE(sw_hmac_sha256(key, kl, in, n, ours) == 0);
		REQUIRE(HMAC(EVP_sha256(), key, (int)kl, in, n, theirs, &len) && len == 32);
		CHECK(memcmp(ours, theirs, 32) == 0);
	}
}

static const char *b64(const char *s)
{
	static char out[64];
	if (sw_base64_encode((const uint8_t *)s, strlen(s), out, sizeof(out)) < 0)
		return "failed";
	return out;
}

static const char *unb64(const char *s)
{
	static char out[64];
	size_t n = 0;
	int r = sw_base64_decode(sw_str_from(s, strlen(s)), (uint8_t *)out, sizeof(out) - 1, &n);
	if (r < 0)
		return r == -EINVAL ? "EINVAL" : "other";
	out[n] = '\0';
	return out;
}

TEST(base64_matches_rfc_4648)
{
	static const char *vec[][2] = { { "", "" },	    { "f", "Zg==" },	 { "fo", "Zm8=" },
					{ "foo", "Zm9v" },  { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
					{ "foobar", "Zm9vYmFy" } };
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		CHECK_STR_EQ(b64(vec[i][0]), vec[i][1]);
		CHECK_STR_EQ(unb64(vec[i][1]), vec[i][0]);
	}
	CHECK_INT_EQ(SW_BASE64_LEN(0), 0);
	CHECK_INT_EQ(SW_BASE64_LEN(4), 8);
	/* The standard alphabet's last two characters. */
	static const uint8_t hi[] = { 0xfb, 0xff, 0xbf };
	char out[8];
	CHECK_INT_EQ(sw_base64_encode(hi, 3, out, sizeof(out)), 4);
	CHECK_STR_EQ(out, "+/+/");
}

TEST(base64_decode_refuses_every_non_canonical_form)
{
	static const char *bad[] = {
		"Zg=",	    /* not a multiple of 4 */
		"Zg",	    /* padding missing */
		"Zh==",	    /* unused bits set */
		"Zm9=",	    /* unused bits set */
		"Z===",	    /* three '=' */
		"====",	    /* all padding */
		"Zg==Zg==", /* padding inside */
		"Zg=a",	    /* '=' then data */
		"Zm9v\n",   /* whitespace */
		" Zm9v",    /* whitespace */
		"Zm-v",	    /* base64url's alphabet */
		"Zm_v",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (strcmp(unb64(bad[i]), "EINVAL") != 0) {
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
			CHECK(0);
		}
	}
	/* A NUL inside is a foreign character, not an end. */
	uint8_t out[8];
	size_t n;
	CHECK_INT_EQ(sw_base64_decode(sw_str_from("Zm\0v", 4), out, sizeof(out), &n), -EINVAL);
	/* Too small an output: -ENOSPC, nothing claimed. */
	CHECK_INT_EQ(sw_base64_decode(SW_STR("Zm9vYmFy"), out, 5, &n), -ENOSPC);
	char small[8];
	CHECK_INT_EQ(sw_base64_encode((const uint8_t *)"foobar", 6, small, 8), -ENOSPC);
}

TEST(base64_matches_openssl_on_random_inputs)
{
	srand(4648);
	static uint8_t in[700], back[700];
	static char ours[1000], theirs[1000];
	for (int round = 0; round < 500; round++) {
		size_t n = (size_t)rand() % sizeof(in);
		for (size_t i = 0; i < n; i++)
			in[i] = (uint8_t)rand();
		int w = sw_base64_encode(in, n, ours, sizeof(ours));
		int t = EVP_EncodeBlock((unsigned char *)theirs, in, (int)n);
		REQUIRE(w == t && w == (int)SW_BASE64_LEN(n));
		CHECK(strcmp(ours, theirs) == 0);
		size_t got = 0;
		REQUIRE(sw_base64_decode(sw_str_from(ours, (size_t)w), back, sizeof(back), &got) == 0);
		CHECK(got == n && memcmp(back, in, n) == 0);
	}
}

TEST(random_bytes_fill_the_buffer)
{
	/* 64 bytes all zero from a CSPRNG: probability 2^-512. */
	uint8_t a[64] = { 0 }, b[64] = { 0 }, zero[64] = { 0 };
	REQUIRE(sw_random_bytes(a, sizeof(a)) == 0);
	REQUIRE(sw_random_bytes(b, sizeof(b)) == 0);
	CHECK(memcmp(a, zero, 64) != 0 && memcmp(a, b, 64) != 0);
	CHECK(sw_random_bytes(NULL, 0) == 0);
}

TEST(ct_equal_answers_like_memcmp)
{
	CHECK(sw_ct_equal("abc", 3, "abc", 3));
	CHECK(!sw_ct_equal("abc", 3, "abd", 3));
	CHECK(!sw_ct_equal("abc", 3, "ab", 2));
	CHECK(!sw_ct_equal("ab", 2, "abc", 3));
	CHECK(sw_ct_equal(NULL, 0, NULL, 0));
	CHECK(!sw_ct_equal("\x80", 1, "\x00", 1));
}

TEST(wipe_zeroes)
{
	char s[] = "secret";
	sw_wipe(s, sizeof(s));
	CHECK(memcmp(s, "\0\0\0\0\0\0\0", sizeof(s)) == 0);
	sw_wipe(NULL, 0);
}

TEST_MAIN()
