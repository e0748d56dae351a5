/* TOTP against RFC 4226 and RFC 6238 vectors, the drift window and the
 * replay rule, code input forms, base32 against RFC 4648 vectors and its
 * refusals, the otpauth:// URI, and recovery codes. */
#include <errno.h>
#include "steward/auth/totp.h"
#include "test_help.h"

static const uint8_t rfc_key[] = "12345678901234567890"; /* 20 bytes + NUL */
#define RFC_KEY rfc_key, 20

/* The 6-digit code of a step as the user would type it. */
static const char *code_of(int64_t step)
{
	static char out[8];
	snprintf(out, sizeof(out), "%06u", sw_hotp(RFC_KEY, (uint64_t)step, 6));
	return out;
}

static const char *enc(const char *in)
{
	static char out[64];
	if (sw_base32_encode((const uint8_t *)in, strlen(in), out, sizeof(out)) != 0)
		return NULL;
	return out;
}

/* Decodes into a C string, or NULL with *err set. */
static const char *dec(const char *in, int *err)
{
	static char out[64];
	size_t n = 0;
	*err = sw_base32_decode(sw_str_cstr(in), (uint8_t *)out, sizeof(out) - 1, &n);
	if (*err)
		return NULL;
	out[n] = '\0';
	return out;
}

/* RFC 4648 section 10: input, unpadded, padded. */
static const char *const b32_vectors[][3] = {
	{ "", "", "" },
	{ "f", "MY", "MY======" },
	{ "fo", "MZXQ", "MZXQ====" },
	{ "foo", "MZXW6", "MZXW6===" },
	{ "foob", "MZXW6YQ", "MZXW6YQ=" },
	{ "fooba", "MZXW6YTB", "MZXW6YTB" },
	{ "foobar", "MZXW6YTBOI", "MZXW6YTBOI======" },
	{ "12345678901234567890", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",
	  "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" },
};

TEST(base32_encodes_rfc_4648_vectors_without_padding)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(b32_vectors); i++)
		CHECK_STR_EQ(enc(b32_vectors[i][0]), b32_vectors[i][1]);
}

TEST(base32_decodes_rfc_4648_vectors_padded_or_not)
{
	int err;
	for (size_t i = 0; i < SW_ARRAY_SIZE(b32_vectors); i++) {
		CHECK_STR_EQ(dec(b32_vectors[i][1], &err), b32_vectors[i][0]);
		CHECK_STR_EQ(dec(b32_vectors[i][2], &err), b32_vectors[i][0]);
	}
}

TEST(base32_decode_ignores_case_and_spaces)
{
	int err;
	CHECK_STR_EQ(dec("mzxw 6ytb oi", &err), "foobar");
	CHECK_STR_EQ(dec("  MzXw6YtBoI  ", &err), "foobar");
	CHECK_STR_EQ(dec("MY == ====", &err), "f");
}

TEST(base32_decode_refuses_foreign_characters_lengths_and_stray_bits)
{
	static const char *const bad[] = {
		"MZXW1",      /* '1' is not base32 */
		"MZXW0",      /* nor '0' */
		"MZXW8",      /* nor '8' */
		"MZ-XW",      "MZ\tXW", "MZXW6\n", "M\xc3\x9cXW",
		"M",          /* 1, 3 and 6 characters encode no whole byte count */
		"MZX",        "MZXW6Y",
		"MZ",         /* 'Z' leaves bits 01: not the canonical "MY" */
		"MZXR",       /* same, 4 bits left over */
		"MY=A",       /* data after padding */
		"MY=",        /* padding that does not fill the block */
		"MY=======",  /* 7 '=' */
		"========",   /* padding alone */
	};
	int err;
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		if (dec(bad[i], &err) != NULL || err != -EBADMSG) {
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
			CHECK(false);
		}
	}
}

TEST(base32_buffers_too_small_are_refused)
{
	uint8_t out[6];
	size_t n = 99;
	CHECK_INT_EQ(sw_base32_decode(SW_STR("MZXW6YTBOI"), out, 5, &n), -ENOBUFS);
	CHECK_INT_EQ(n, 99);
	CHECK_INT_EQ(sw_base32_decode(SW_STR("MZXW6YTBOI"), out, 6, &n), 0);
	CHECK_INT_EQ(n, 6);
	char s[11];
	CHECK_INT_EQ(sw_base32_encode((const uint8_t *)"foobar", 6, s, 10), -EINVAL);
	CHECK_INT_EQ(sw_base32_encode((const uint8_t *)"foobar", 6, s, 11), 0);
}

TEST(hotp_matches_rfc_4226_appendix_d)
{
	static const uint32_t expect[10] = { 755224, 287082, 359152, 969429, 338314,
					     254676, 287922, 162583, 399871, 520489 };
	for (uint64_t c = 0; c < 10; c++)
		CHECK_INT_EQ(sw_hotp(RFC_KEY, c, 6), expect[c]);
}

TEST(totp_matches_rfc_6238_appendix_b_sha1)
{
	static const struct {
		uint64_t t;
		uint32_t code;
	} v[] = {
		{ 59, 94287082 },         { 1111111109, 7081804 },  { 1111111111, 14050471 },
		{ 1234567890, 89005924 }, { 2000000000, 69279037 }, { 20000000000ULL, 65353130 },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(v); i++)
		CHECK_INT_EQ(sw_hotp(RFC_KEY, v[i].t / SW_TOTP_PERIOD_S, 8), v[i].code);
}

TEST(hotp_refuses_digit_counts_out_of_range)
{
	CHECK_INT_EQ(sw_hotp(RFC_KEY, 0, 0), UINT32_MAX);
	CHECK_INT_EQ(sw_hotp(RFC_KEY, 0, 10), UINT32_MAX);
	CHECK_INT_EQ(sw_hotp(RFC_KEY, 0, 9), 284755224); /* 1284755224 mod 10^9 */
	CHECK_INT_EQ(sw_hotp(RFC_KEY, 0, 1), 4);
}

TEST(totp_accepts_current_step_and_one_step_of_drift)
{
	const uint64_t now = 1111111111;
	const int64_t t = (int64_t)(now / 30);
	int64_t step = 0;
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t)), now, -1, &step));
	CHECK_INT_EQ(step, t);
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t - 1)), now, -1, &step));
	CHECK_INT_EQ(step, t - 1);
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t + 1)), now, -1, &step));
	CHECK_INT_EQ(step, t + 1);
	/* RFC 6238's own vector at that time, its last 6 digits. */
	CHECK(sw_totp_verify(RFC_KEY, SW_STR("050471"), now, -1, &step));
	CHECK_INT_EQ(step, t);
}

TEST(totp_refuses_two_steps_of_drift)
{
	const uint64_t now = 1234567890;
	const int64_t t = (int64_t)(now / 30);
	int64_t step = 42;
	CHECK(!sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t - 2)), now, -1, &step));
	CHECK(!sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t + 2)), now, -1, &step));
	CHECK_INT_EQ(step, 42);
}

TEST(totp_code_is_accepted_once)
{
	const uint64_t now = 2000000000;
	const int64_t t = (int64_t)(now / 30);
	int64_t step = 0;
	REQUIRE(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t)), now, -1, &step));
	CHECK(!sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t)), now, step, &step));
	/* Nor an older, still valid code once a newer one was used. */
	CHECK(!sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t - 1)), now, t, &step));
	/* The next step's code still works, and the same code 30 s later. */
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t + 1)), now, t, &step));
	CHECK_INT_EQ(step, t + 1);
	CHECK(!sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(t + 1)), now + 30, t + 1, &step));
}

TEST(totp_accepts_the_grouped_form_and_nothing_else)
{
	const uint64_t now = 1111111111; /* code 050471 */
	int64_t step;
	CHECK(sw_totp_verify(RFC_KEY, SW_STR("050 471"), now, -1, &step));
	static const char *const bad[] = {
		"50471",   "0504710", "050471 ", " 050471", "05 0471", "0504 71", "050  471",
		"050-471", "+50471",  "05047a",  "050\t471", "",
		"\357\274\22050471", /* a full-width 0 first */
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		if (sw_totp_verify(RFC_KEY, sw_str_cstr(bad[i]), now, -1, &step)) {
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
			CHECK(false);
		}
	}
	CHECK(!sw_totp_verify(rfc_key, 0, SW_STR("050471"), now, -1, &step));
}

TEST(totp_at_the_epoch_has_no_previous_step)
{
	int64_t step = -5;
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(0)), 29, -1, &step));
	CHECK_INT_EQ(step, 0);
	CHECK(sw_totp_verify(RFC_KEY, sw_str_cstr(code_of(1)), 0, -1, &step));
	CHECK_INT_EQ(step, 1);
}

TEST(totp_new_secret_is_random)
{
	uint8_t a[SW_TOTP_SECRET_LEN], b[SW_TOTP_SECRET_LEN];
	REQUIRE(sw_totp_new_secret(a) == 0);
	REQUIRE(sw_totp_new_secret(b) == 0);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
}

TEST(totp_uri_percent_encodes_label_and_issuer)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_totp_uri(&b, "Steward", "ada@example.com", RFC_KEY) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data, "otpauth://totp/Steward:ada%40example.com"
			     "?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Steward"
			     "&algorithm=SHA1&digits=6&period=30");
	b.len = 0;
	REQUIRE(sw_totp_uri(&b, "Acme Co/\xc3\xa9", "a+b&c=d?#", (const uint8_t *)"f", 1) == 0);
	REQUIRE(sw_buf_append(&b, "", 1) == 0);
	CHECK_STR_EQ(b.data, "otpauth://totp/Acme%20Co%2F%C3%A9:a%2Bb%26c%3Dd%3F%23"
			     "?secret=MY&issuer=Acme%20Co%2F%C3%A9"
			     "&algorithm=SHA1&digits=6&period=30");
	sw_buf_release(&b);
}

TEST(totp_uri_refuses_colons_and_empty_parts)
{
	struct sw_buf b = { 0 };
	REQUIRE(sw_buf_append_lit(&b, "keep") == 0);
	CHECK_INT_EQ(sw_totp_uri(&b, "Ste:ward", "ada", RFC_KEY), -EINVAL);
	CHECK_INT_EQ(sw_totp_uri(&b, "Steward", "a:da", RFC_KEY), -EINVAL);
	CHECK_INT_EQ(sw_totp_uri(&b, "", "ada", RFC_KEY), -EINVAL);
	CHECK_INT_EQ(sw_totp_uri(&b, "Steward", "", RFC_KEY), -EINVAL);
	CHECK_INT_EQ(sw_totp_uri(&b, NULL, "ada", RFC_KEY), -EINVAL);
	CHECK_INT_EQ(sw_totp_uri(&b, "Steward", "ada", rfc_key, 0), -EINVAL);
	CHECK(b.len == 4 && memcmp(b.data, "keep", 4) == 0);
	sw_buf_release(&b);
}

TEST(recovery_alphabet_has_31_unambiguous_characters)
{
	const char *a = SW_RECOVERY_CODE_ALPHABET;
	CHECK_INT_EQ(strlen(a), 31);
	CHECK(strpbrk(a, "0o1li") == NULL);
	for (size_t i = 0; a[i]; i++) {
		CHECK((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '2' && a[i] <= '9'));
		CHECK(strchr(a + i + 1, a[i]) == NULL);
	}
}

TEST(recovery_codes_are_five_hyphen_five_from_the_alphabet)
{
	int seen[256] = { 0 };
	char first[SW_RECOVERY_CODE_LEN + 1];
	for (int k = 0; k < 300; k++) {
		char c[SW_RECOVERY_CODE_LEN + 1];
		REQUIRE(sw_recovery_code_new(c) == 0);
		REQUIRE(strlen(c) == 11);
		CHECK(c[5] == '-');
		for (int i = 0; i < 11; i++) {
			if (i == 5)
				continue;
			CHECK(strchr(SW_RECOVERY_CODE_ALPHABET, c[i]) != NULL);
			seen[(unsigned char)c[i]]++;
		}
		if (k == 0)
			memcpy(first, c, sizeof(c));
		else
			CHECK(strcmp(first, c) != 0);
	}
	/* 3000 draws: each character is expected ~97 times. */
	for (const char *a = SW_RECOVERY_CODE_ALPHABET; *a; a++)
		CHECK(seen[(unsigned char)*a] > 30);
}

TEST(recovery_code_normalize_round_trips)
{
	for (int k = 0; k < 20; k++) {
		char c[SW_RECOVERY_CODE_LEN + 1], n[SW_RECOVERY_CODE_LEN + 1];
		char typed[32];
		REQUIRE(sw_recovery_code_new(c) == 0);
		REQUIRE(sw_recovery_code_normalize(sw_str_cstr(c), n));
		CHECK_STR_EQ(n, c);
		/* Upper-case, no hyphen, spaces: the same normalized code. */
		snprintf(typed, sizeof(typed), " %.3s %.2s%.5s ", c, c + 3, c + 6);
		for (char *p = typed; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				*p = (char)(*p - 32);
		REQUIRE(sw_recovery_code_normalize(sw_str_cstr(typed), n));
		CHECK_STR_EQ(n, c);
	}
}

TEST(recovery_code_normalize_accepts_case_spaces_and_optional_hyphen)
{
	char n[SW_RECOVERY_CODE_LEN + 1];
	CHECK(sw_recovery_code_normalize(SW_STR("ABCDE-FGHJK"), n));
	CHECK_STR_EQ(n, "abcde-fghjk");
	CHECK(sw_recovery_code_normalize(SW_STR("abcdefghjk"), n));
	CHECK_STR_EQ(n, "abcde-fghjk");
	CHECK(sw_recovery_code_normalize(SW_STR(" ab cde - fg hjk "), n));
	CHECK_STR_EQ(n, "abcde-fghjk");
}

TEST(recovery_code_normalize_refuses_malformed_input)
{
	static const char *const bad[] = {
		"abcd-efghjk", "abcdef-ghjk", "abcde--fghjk", "-abcdefghjk", "abcdefghjk-",
		"abcde-fghj",  "abcde-fghjkm", "abcde-fghj0", "abcde-fghjo", "abcde-fghj1",
		"abcde-fghjl", "abcde-fghji", "abcde\tfghjk", "abcde_fghjk", "", "     ",
		"abcde-fghj\xc3\xa9",
	};
	char n[SW_RECOVERY_CODE_LEN + 1];
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		memset(n, 'x', sizeof(n));
		if (sw_recovery_code_normalize(sw_str_cstr(bad[i]), n) || n[0] != '\0') {
			fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
			CHECK(false);
		}
	}
	/* Spaces count against the input bound. */
	char big[SW_RECOVERY_CODE_INPUT_MAX + 2];
	memset(big, ' ', sizeof(big));
	memcpy(big, "abcde-fghjk", 11);
	CHECK(sw_recovery_code_normalize(sw_str_from(big, SW_RECOVERY_CODE_INPUT_MAX), n));
	CHECK(!sw_recovery_code_normalize(sw_str_from(big, SW_RECOVERY_CODE_INPUT_MAX + 1), n));
}

TEST_MAIN()
