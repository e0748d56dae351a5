/* Random tokens, SHA-256 and HMAC-SHA-256 against published vectors, and
 * the API-token and session-id formats: what the constructors make passes
 * the well-formedness checks, and every near miss fails them. */
#include <errno.h>
#include <openssl/evp.h>
#include "steward/base/secret.h"
#include "test_help.h"

static bool all_base64url(const char *s, size_t n)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0' || !strchr(alphabet, s[i]))
			return false;
	return true;
}

/* Decodes a base64url token with OpenSSL's own base64 and encodes it
 * again: equal only if ours was valid and canonical. */
static bool openssl_round_trips(const char *tok, size_t nbytes)
{
	char std[256], again[256];
	unsigned char raw[200];
	size_t n = strlen(tok);
	for (size_t i = 0; i < n; i++)
		std[i] = tok[i] == '-' ? '+' : tok[i] == '_' ? '/' : tok[i];
	while (n % 4)
		std[n++] = '=';
	std[n] = '\0';
	if (EVP_DecodeBlock(raw, (const unsigned char *)std, (int)n) < 0)
		return false;
	/* EVP_DecodeBlock counts padding as zero bytes; encode the real ones. */
	int m = EVP_EncodeBlock((unsigned char *)again, raw, (int)nbytes);
	return m == (int)n && strcmp(again, std) == 0;
}

TEST(random_token_has_the_base64url_length_of_its_bytes)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 4, 5, 32, 47, 48, 49, 100, 150 };
	for (size_t k = 0; k < SW_ARRAY_SIZE(sizes); k++) {
		char out[256];
		size_t n = sizes[k];
		REQUIRE(sw_random_token(out, sizeof(out), n) == 0);
		CHECK_INT_EQ(strlen(out), SW_BASE64URL_LEN(n));
		CHECK(all_base64url(out, strlen(out)));
		CHECK(openssl_round_trips(out, n));
	}
}

TEST(random_token_refuses_a_buffer_one_byte_short)
{
	char out[44];
	CHECK_INT_EQ(sw_random_token(out, 43, 32), -EINVAL);
	CHECK_INT_EQ(sw_random_token(out, 44, 32), 0);
	CHECK_INT_EQ(strlen(out), 43);
	CHECK_INT_EQ(sw_random_token(out, 0, 0), -EINVAL);
	CHECK_INT_EQ(sw_random_token(out, sizeof(out), SIZE_MAX), -EINVAL);
}

TEST(random_tokens_differ)
{
	char a[44], b[44];
	REQUIRE(sw_random_token(a, sizeof(a), 32) == 0);
	REQUIRE(sw_random_token(b, sizeof(b), 32) == 0);
	CHECK(strcmp(a, b) != 0);
}

TEST(sha256_matches_fips_180_vectors)
{
	char hex[65];
	sw_sha256_hex(NULL, 0, hex);
	CHECK_STR_EQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sw_sha256_hex("abc", 3, hex);
	CHECK_STR_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sw_sha256_hex(two, strlen(two), hex);
	CHECK_STR_EQ(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	uint8_t raw[32];
	sw_sha256("abc", 3, raw);
	CHECK(raw[0] == 0xba && raw[31] == 0xad);
}

TEST(hmac_sha256_matches_rfc_4231_vectors)
{
	uint8_t out[32], key[20];
	char hex[65];
	static const char digits[] = "0123456789abcdef";
	memset(key, 0x0b, sizeof(key));
	REQUIRE(sw_hmac_sha256(key, sizeof(key), "Hi There", 8, out) == 0);
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[out[i] >> 4];
		hex[2 * i + 1] = digits[out[i] & 15];
	}
	hex[64] = '\0';
	CHECK_STR_EQ(hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

	const char *msg = "what do ya want for nothing?";
	REQUIRE(sw_hmac_sha256("Jefe", 4, msg, strlen(msg), out) == 0);
	CHECK(out[0] == 0x5b && out[1] == 0xdc && out[31] == 0x43);

	/* Empty key and message, given as NULL. */
	REQUIRE(sw_hmac_sha256(NULL, 0, NULL, 0, out) == 0);
	CHECK(out[0] == 0xb6 && out[1] == 0x13 && out[31] == 0xad);
}

TEST(api_token_is_st_and_43_characters_with_its_prefix)
{
	char tok[SW_API_TOKEN_LEN + 1], prefix[SW_API_TOKEN_PREFIX_LEN + 1];
	CHECK_INT_EQ(SW_API_TOKEN_LEN, 46);
	CHECK_INT_EQ(SW_API_TOKEN_PREFIX_LEN, 11);
	REQUIRE(sw_api_token_new(tok, prefix) == 0);
	CHECK_INT_EQ(strlen(tok), 46);
	CHECK(strncmp(tok, "st_", 3) == 0);
	CHECK(all_base64url(tok + 3, 43));
	CHECK(openssl_round_trips(tok + 3, 32));
	CHECK_INT_EQ(strlen(prefix), 11);
	CHECK(strncmp(tok, prefix, 11) == 0);
	CHECK(sw_api_token_well_formed(sw_str_cstr(tok)));
	CHECK(!sw_session_token_well_formed(sw_str_cstr(tok)));
}

TEST(api_token_well_formed_refuses_near_misses)
{
	char tok[SW_API_TOKEN_LEN + 1], prefix[SW_API_TOKEN_PREFIX_LEN + 1], t[64];
	REQUIRE(sw_api_token_new(tok, prefix) == 0);
	CHECK(!sw_api_token_well_formed(sw_str_from(tok, 45)));
	snprintf(t, sizeof(t), "%sA", tok);
	CHECK(!sw_api_token_well_formed(sw_str_cstr(t)));
	memcpy(t, tok, sizeof(tok));
	t[1] = 'T';
	CHECK(!sw_api_token_well_formed(sw_str_cstr(t)));
	memcpy(t, tok, sizeof(tok));
	t[2] = '-';
	CHECK(!sw_api_token_well_formed(sw_str_cstr(t)));
	static const char bad[] = { '+', '/', '=', '.', ' ', '\0', '\x80' };
	for (size_t k = 0; k < sizeof(bad); k++) {
		memcpy(t, tok, sizeof(tok));
		t[20] = bad[k];
		CHECK(!sw_api_token_well_formed(sw_str_from(t, 46)));
	}
	CHECK(!sw_api_token_well_formed(SW_STR_NULL));
}

TEST(token_with_non_canonical_last_character_is_refused)
{
	/* 32 bytes leave 2 unused bits in the 43rd character: 'A' and 'E'
	 * (values 0 and 4) are canonical, 'B' (1) and '_' (63) are not. */
	char s[44];
	memset(s, 'x', 42);
	s[43] = '\0';
	s[42] = 'A';
	CHECK(sw_session_token_well_formed(sw_str_from(s, 43)));
	s[42] = 'E';
	CHECK(sw_session_token_well_formed(sw_str_from(s, 43)));
	s[42] = 'B';
	CHECK(!sw_session_token_well_formed(sw_str_from(s, 43)));
	s[42] = '_';
	CHECK(!sw_session_token_well_formed(sw_str_from(s, 43)));
	char t[47] = "st_";
	memcpy(t + 3, s, 44);
	t[45] = 'w'; /* 48: canonical */
	CHECK(sw_api_token_well_formed(sw_str_from(t, 46)));
	t[45] = 'x'; /* 49 */
	CHECK(!sw_api_token_well_formed(sw_str_from(t, 46)));
}

TEST(session_token_is_43_base64url_characters)
{
	char a[SW_SESSION_TOKEN_LEN + 1], b[SW_SESSION_TOKEN_LEN + 1];
	REQUIRE(sw_session_token_new(a) == 0);
	REQUIRE(sw_session_token_new(b) == 0);
	CHECK_INT_EQ(strlen(a), 43);
	CHECK(strcmp(a, b) != 0);
	CHECK(sw_session_token_well_formed(sw_str_cstr(a)));
	CHECK(!sw_session_token_well_formed(sw_str_from(a, 42)));
	CHECK(!sw_api_token_well_formed(sw_str_cstr(a)));
	char c[45];
	snprintf(c, sizeof(c), "%sA", a);
	CHECK(!sw_session_token_well_formed(sw_str_cstr(c)));
	a[0] = '~';
	CHECK(!sw_session_token_well_formed(sw_str_cstr(a)));
}

TEST(hex_decodes_either_case_and_refuses_odd_foreign_or_oversized_input)
{
	uint8_t out[4];
	size_t n = 99;
	CHECK(sw_hex_decode(sw_str_cstr("00fFa9"), out, sizeof(out), &n));
	CHECK_INT_EQ(n, 3);
	CHECK(out[0] == 0x00 && out[1] == 0xff && out[2] == 0xa9);
	CHECK(sw_hex_decode(sw_str_cstr(""), out, sizeof(out), &n));
	CHECK_INT_EQ(n, 0);
	n = 99;
	CHECK(!sw_hex_decode(sw_str_cstr("abc"), out, sizeof(out), &n));
	CHECK(!sw_hex_decode(sw_str_cstr("0g"), out, sizeof(out), &n));
	CHECK(!sw_hex_decode(sw_str_cstr("0 "), out, sizeof(out), &n));
	CHECK(!sw_hex_decode(sw_str_cstr("0011223344"), out, sizeof(out), &n));
	CHECK_INT_EQ(n, 99);
	CHECK_INT_EQ(sw_hex_value('F'), 15);
	CHECK_INT_EQ(sw_hex_value('/'), -1);
	CHECK_INT_EQ(sw_hex_value(':'), -1);
	CHECK_INT_EQ(sw_hex_value('G'), -1);
	CHECK_INT_EQ(sw_hex_value(0xc6), -1);
}

TEST(hex_encodes_lower_case_and_refuses_a_short_buffer)
{
	static const uint8_t in[] = { 0x00, 0xab, 0x7f };
	char out[7];
	CHECK(sw_hex_encode(in, sizeof(in), out, sizeof(out)));
	CHECK_STR_EQ(out, "00ab7f");
	CHECK(!sw_hex_encode(in, sizeof(in), out, sizeof(out) - 1));
}

TEST_MAIN()
