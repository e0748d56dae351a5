/* Two-factor authentication: TOTP (RFC 6238 over RFC 4226 HOTP, HMAC-SHA-1,
 * 6 digits, 30-second steps, the parameters every authenticator app
 * defaults to), base32 for the shared secret, the otpauth:// URI an app
 * scans, and single-use recovery codes. No I/O but the CSPRNG; storing the
 * secret, the last used step and the recovery-code hashes is the caller's,
 * and so is rate limiting the attempts (ratelimit.h): 10^6 codes, 3 valid
 * at a time, fall to guessing without it. */
#ifndef STEWARD_TOTP_H
#define STEWARD_TOTP_H

#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/base/buf.h"
#include "steward/base/secret.h"

#define SW_TOTP_SECRET_LEN 20 /* bytes: 160 bits, RFC 4226's recommendation */
#define SW_TOTP_DIGITS 6
#define SW_TOTP_PERIOD_S 30
#define SW_TOTP_DRIFT_STEPS 1 /* steps accepted either side of the current one */

/* base32, the form authenticator apps take secrets in: steward/base/secret.h. */

/* HOTP (RFC 4226 section 5.3) of counter under key: HMAC-SHA-1, dynamic
 * truncation, modulo 10^digits. digits 1..9 (RFC 6238's test vectors use
 * 8). Returns UINT32_MAX, never a valid code, when digits is out of range
 * or libcrypto fails. */
uint32_t sw_hotp(const uint8_t *key, size_t klen, uint64_t counter, unsigned digits);

/* A new random TOTP secret. 0 or -EIO (CSPRNG failure). */
int sw_totp_new_secret(uint8_t out[SW_TOTP_SECRET_LEN]);

/* Appends the key URI of Google Authenticator's "Key Uri Format":
 *   otpauth://totp/<issuer>:<account>?secret=<base32>&issuer=<issuer>
 *   &algorithm=SHA1&digits=6&period=30
 * with issuer and account percent-encoded (every byte outside RFC 3986
 * unreserved, so a space is %20 and UTF-8 is encoded bytewise). 0;
 * -EINVAL when issuer or account is NULL, empty or contains ':' (apps
 * split the label on it, encoded or not), or len is 0; -ENOMEM. out is
 * unchanged on failure. */
int sw_totp_uri(struct sw_buf *out, const char *issuer, const char *account, const uint8_t *secret,
		size_t len);

/* Checks a code typed by the user at unix_time (seconds since the epoch).
 * The code is exactly 6 ASCII digits, or 3 digits, one space, 3 digits
 * ("123 456", as apps display it); anything else (other spaces, a sign,
 * full-width digits) is refused. Accepted when it equals the code of step
 * T-1, T or T+1 (T = unix_time / 30: one step of clock drift either way)
 * and that step is greater than last_used_step (-1 when none), so a code
 * is accepted once and never one older than the last accepted. All three
 * candidates are computed and compared in constant time whatever the
 * input. On true *ret_step is the matched step, which the caller stores as
 * the new last_used_step before answering. */
bool sw_totp_verify(const uint8_t *key, size_t klen, struct sw_str code, uint64_t unix_time,
		    int64_t last_used_step, int64_t *ret_step);

/* Recovery codes: "xxxxx-xxxxx", 10 characters of a 31-character
 * alphabet (lower-case letters and digits without 0, o, 1, l and i, which
 * are read as each other): 49.5 bits. */
#define SW_RECOVERY_CODE_LEN 11
#define SW_RECOVERY_CODE_ALPHABET "abcdefghjkmnpqrstuvwxyz23456789"

/* A new random recovery code, NUL-terminated. 0 or -EIO (out is then ""). */
int sw_recovery_code_new(char out[SW_RECOVERY_CODE_LEN + 1]);
/* Brings a typed recovery code to the form sw_recovery_code_new() makes,
 * which is what the caller hashes and stores: letters in either case,
 * spaces anywhere ignored, the hyphen optional but, when present, only
 * between the fifth and sixth character. false when anything else is
 * there, the count is not 10, or the input exceeds
 * SW_RECOVERY_CODE_INPUT_MAX bytes; out is then "". */
bool sw_recovery_code_normalize(struct sw_str in, char out[SW_RECOVERY_CODE_LEN + 1]);

#endif
