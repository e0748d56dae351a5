/* libFuzzer harness for what a user types in the two-factor flows
 * (totp.h): the whole input is a TOTP code, a recovery code and a base32
 * secret.
 *
 * Checks, beyond "no crash, no UB":
 * - sw_totp_verify() with the RFC 6238 key at a fixed time answers exactly
 *   as an independent oracle does (parse "dddddd" / "ddd ddd", compare
 *   with the codes of steps T-1, T, T+1 newer than the last used step),
 *   for two last-used steps, and returns the step the oracle picks;
 * - a normalized recovery code is well-formed ("xxxxx-xxxxx" from the
 *   alphabet), normalizes to itself, and came from input holding exactly
 *   its characters (in either case) plus spaces and at most one hyphen;
 * - decoded base32 encodes back to the input's own characters (upper-cased,
 *   without spaces and padding: the decoder accepts canonical forms only),
 *   and a buffer one byte short is -ENOBUFS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/auth/totp.h"
#include "fuzz.h"

static const uint8_t key[] = "12345678901234567890";
#define NOW 1111111111ULL

static void check_totp(const char *in, size_t len, int64_t last_used)
{
	/* The oracle. */
	char digits[7] = { 0 };
	bool form = false;
	if (len == 6 || (len == 7 && in[3] == ' ')) {
		form = true;
		for (size_t i = 0, n = 0; i < len; i++) {
			if (len == 7 && i == 3)
				continue;
			if (in[i] < '0' || in[i] > '9')
				form = false;
			digits[n++] = in[i];
		}
	}
	const int64_t t = (int64_t)(NOW / SW_TOTP_PERIOD_S);
	static const int order[3] = { 0, -1, 1 };
	int64_t expect_step = -1;
	for (int k = 0; k < 3 && form && expect_step < 0; k++) {
		char c[16];
		int64_t s = t + order[k];
		snprintf(c, sizeof(c), "%06u", sw_hotp(key, 20, (uint64_t)s, 6));
		if (strcmp(c, digits) == 0 && s > last_used)
			expect_step = s;
	}

	int64_t step = -7;
	bool ok = sw_totp_verify(key, 20, (struct sw_str){ in, len }, NOW, last_used, &step);
	ASSERT(ok == (expect_step >= 0));
	ASSERT(ok ? step == expect_step : step == -7);
}

static bool in_alphabet(char c)
{
	return c != '\0' && strchr(SW_RECOVERY_CODE_ALPHABET, c) != NULL;
}

static void check_recovery(const char *in, size_t len)
{
	char out[SW_RECOVERY_CODE_LEN + 1];
	if (!sw_recovery_code_normalize((struct sw_str){ in, len }, out)) {
		ASSERT(out[0] == '\0');
		return;
	}
	ASSERT(strlen(out) == SW_RECOVERY_CODE_LEN && out[5] == '-');
	for (int i = 0; i < SW_RECOVERY_CODE_LEN; i++)
		ASSERT(i == 5 || in_alphabet(out[i]));
	char again[SW_RECOVERY_CODE_LEN + 1];
	ASSERT(sw_recovery_code_normalize((struct sw_str){ out, SW_RECOVERY_CODE_LEN }, again));
	ASSERT(strcmp(again, out) == 0);

	ASSERT(len <= SW_RECOVERY_CODE_INPUT_MAX);
	size_t n = 0, hyphens = 0;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c == ' ')
			continue;
		if (c == '-') {
			hyphens++;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		ASSERT(n < 10 && c == out[n < 5 ? n : n + 1]);
		n++;
	}
	ASSERT(n == 10 && hyphens <= 1);
}

static void check_base32(const char *in, size_t len)
{
	uint8_t *out = malloc(len + 1);
	ASSERT(out);
	size_t n = 0;
	int r = sw_base32_decode((struct sw_str){ in, len }, out, len, &n);
	ASSERT(r == 0 || r == -EBADMSG);
	if (r == 0) {
		ASSERT(n <= len * 5 / 8);
		char *enc = malloc(SW_BASE32_LEN(n) + 1);
		ASSERT(enc);
		ASSERT(sw_base32_encode(out, n, enc, SW_BASE32_LEN(n) + 1) == 0);
		size_t e = 0;
		for (size_t i = 0; i < len; i++) {
			char c = in[i];
			if (c == ' ' || c == '=')
				continue;
			if (c >= 'a' && c <= 'z')
				c = (char)(c - 32);
			ASSERT(enc[e++] == c);
		}
		ASSERT(enc[e] == '\0');
		free(enc);
		if (n > 0) {
			size_t m = 12345;
			r = sw_base32_decode((struct sw_str){ in, len }, out, n - 1, &m);
			ASSERT(r == -ENOBUFS);
			ASSERT(m == 12345);
		}
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size ? size : 1);
	ASSERT(in);
	memcpy(in, data, size);
	check_totp(in, size, -1);
	check_totp(in, size, (int64_t)(NOW / SW_TOTP_PERIOD_S));
	check_recovery(in, size);
	check_base32(in, size);
	free(in);
	return 0;
}
