/* TOTP, base32, otpauth URIs and recovery codes (totp.h).
 *
 * A typed code is compared against all three candidate steps, each in
 * constant time, before the answer is chosen, so the time taken says
 * nothing about which digits or which step matched. The replay rule (a
 * step must be newer than the last accepted one) makes a code single-use
 * even within its 90-second window; it also refuses an older, still valid
 * code once a newer one was used, which no honest client needs. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include "steward/auth/totp.h"

uint32_t sw_hotp(const uint8_t *key, size_t klen, uint64_t counter, unsigned digits)
{
	static const uint8_t empty;
	static const uint32_t mod[10] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
					  100000000, 1000000000 };
	if (digits < 1 || digits > 9 || klen > INT_MAX)
		return UINT32_MAX;
	uint8_t msg[8], mac[EVP_MAX_MD_SIZE];
	for (int i = 7; i >= 0; i--) {
		msg[i] = (uint8_t)counter;
		counter >>= 8;
	}
	unsigned int maclen = 0;
	if (!HMAC(EVP_sha1(), klen ? key : &empty, (int)klen, msg, sizeof(msg), mac, &maclen) ||
	    maclen != 20)
		return UINT32_MAX;
	unsigned off = mac[19] & 15;
	uint32_t bin = (uint32_t)(mac[off] & 0x7f) << 24 | (uint32_t)mac[off + 1] << 16 |
		       (uint32_t)mac[off + 2] << 8 | mac[off + 3];
	OPENSSL_cleanse(mac, sizeof(mac));
	return bin % mod[digits];
}

int sw_totp_new_secret(uint8_t out[SW_TOTP_SECRET_LEN])
{
	return RAND_bytes(out, SW_TOTP_SECRET_LEN) == 1 ? 0 : -EIO;
}

/* s percent-encoded (all but RFC 3986 unreserved characters) in a new
 * string, or NULL. */
static char *pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = n < SIZE_MAX / 3 ? malloc(3 * n + 1) : NULL;
	if (!out)
		return NULL;
	char *o = out;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c)) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

int sw_totp_uri(struct sw_buf *out, const char *issuer, const char *account, const uint8_t *secret,
		size_t len)
{
	if (!issuer || !account || !issuer[0] || !account[0] || strchr(issuer, ':') ||
	    strchr(account, ':') || len == 0 || len > (SIZE_MAX - 5) / 8)
		return -EINVAL;
	int r = -ENOMEM;
	size_t mark = out->len;
	char *iss = pct_encode(issuer), *acc = pct_encode(account);
	char *b32text = malloc(SW_BASE32_LEN(len) + 1);
	if (!iss || !acc || !b32text)
		goto free_all;
	r = sw_base32_encode(secret, len, b32text, SW_BASE32_LEN(len) + 1);
	if (SW_NEVER(r < 0))
		goto free_all;
	r = sw_buf_appendf(out,
			   "otpauth://totp/%s:%s?secret=%s&issuer=%s&algorithm=SHA1&digits=%d"
			   "&period=%d",
			   iss, acc, b32text, iss, SW_TOTP_DIGITS, SW_TOTP_PERIOD_S);
	if (r < 0)
		out->len = mark;
free_all:
	free(iss);
	free(acc);
	if (b32text)
		OPENSSL_cleanse(b32text, SW_BASE32_LEN(len) + 1);
	free(b32text);
	return r;
}

/* The 6 digits of a typed code ("123456" or "123 456"), or false. */
static bool parse_code(struct sw_str code, char digits[SW_TOTP_DIGITS])
{
	size_t n = 0;
	if (code.len != SW_TOTP_DIGITS && code.len != SW_TOTP_DIGITS + 1)
		return false;
	for (size_t i = 0; i < code.len; i++) {
		char c = code.ptr[i];
		if (code.len == SW_TOTP_DIGITS + 1 && i == SW_TOTP_DIGITS / 2) {
			if (c != ' ')
				return false;
			continue;
		}
		if (c < '0' || c > '9')
			return false;
		digits[n++] = c;
	}
	return true;
}

bool sw_totp_verify(const uint8_t *key, size_t klen, struct sw_str code, uint64_t unix_time,
		    int64_t last_used_step, int64_t *ret_step)
{
	char typed[SW_TOTP_DIGITS];
	if (klen == 0 || !parse_code(code, typed))
		return false;
	int64_t now = (int64_t)(unix_time / SW_TOTP_PERIOD_S);
	/* Preference when two steps match (a 1-in-10^6 coincidence): the
	 * current step, then the past one, then the future one. */
	static const int order[3] = { 0, -SW_TOTP_DRIFT_STEPS, SW_TOTP_DRIFT_STEPS };
	bool ok[3];
	for (int k = 0; k < 3; k++) {
		int64_t step = now + order[k];
		uint32_t v = step >= 0 ? sw_hotp(key, klen, (uint64_t)step, SW_TOTP_DIGITS)
				       : UINT32_MAX;
		char expect[SW_TOTP_DIGITS];
		for (int i = SW_TOTP_DIGITS - 1; i >= 0; i--) {
			expect[i] = (char)('0' + v % 10);
			v /= 10;
		}
		/* v is 0 now unless sw_hotp failed (UINT32_MAX has 10 digits). */
		ok[k] = sw_ct_equal(expect, sizeof(expect), typed, sizeof(typed)) & (v == 0) &
			(step > last_used_step);
		OPENSSL_cleanse(expect, sizeof(expect));
	}
	OPENSSL_cleanse(typed, sizeof(typed));
	for (int k = 0; k < 3; k++) {
		if (ok[k]) {
			*ret_step = now + order[k];
			return true;
		}
	}
	return false;
}

int sw_recovery_code_new(char out[SW_RECOVERY_CODE_LEN + 1])
{
	static const char alphabet[] = SW_RECOVERY_CODE_ALPHABET;
	const unsigned size = sizeof(alphabet) - 1;
	/* Rejection sampling: bytes at or above the largest multiple of the
	 * alphabet's size would favour its first characters. */
	const unsigned limit = 256 / size * size;
	uint8_t rnd[32];
	size_t have = 0, used = 0, o = 0;
	int n = 0;
	while (n < 10) {
		if (used == have) {
			if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
				OPENSSL_cleanse(out, SW_RECOVERY_CODE_LEN + 1);
				out[0] = '\0';
				return -EIO;
			}
			have = sizeof(rnd);
			used = 0;
		}
		uint8_t b = rnd[used++];
		if (b >= limit)
			continue;
		if (n == 5)
			out[o++] = '-';
		out[o++] = alphabet[b % size];
		n++;
	}
	out[o] = '\0';
	OPENSSL_cleanse(rnd, sizeof(rnd));
	return 0;
}

bool sw_recovery_code_normalize(struct sw_str in, char out[SW_RECOVERY_CODE_LEN + 1])
{
	static const char alphabet[] = SW_RECOVERY_CODE_ALPHABET;
	size_t n = 0, o = 0;
	bool hyphen = false;
	out[0] = '\0';
	if (in.len > SW_RECOVERY_CODE_INPUT_MAX)
		return false;
	for (size_t i = 0; i < in.len; i++) {
		char c = in.ptr[i];
		if (c == ' ')
			continue;
		if (c == '-') {
			if (hyphen || n != 5)
				goto refuse;
			hyphen = true;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '\0' || !strchr(alphabet, c) || n == 10)
			goto refuse;
		if (n == 5)
			out[o++] = '-';
		out[o++] = c;
		n++;
	}
	if (n != 10)
		goto refuse;
	out[o] = '\0';
	return true;
refuse:
	OPENSSL_cleanse(out, SW_RECOVERY_CODE_LEN + 1);
	out[0] = '\0';
	return false;
}
