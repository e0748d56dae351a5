/* libFuzzer harness for assertion verification.
 *
 * Input layout: a 2-byte big-endian length and that many bytes of COSE_Key,
 * a 1-byte length and that many bytes of authenticatorData, then the
 * signature. The clientDataJSON and challenge are those of the WebAuthn
 * Level 3 test vector "ES256 Credential with No Attestation"
 * (authentication), so the vector in the corpus verifies. Beyond "no
 * crash, no UB": every refusal has a known code and a message; an accepted
 * assertion reports exactly the counter and flags in the authenticator
 * data, which carries UP, no BS without BE, and the rpIdHash of
 * "example.org"; and flipping any signature bit then refuses it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "steward/auth/webauthn.h"
#include "fuzz.h"

static const char client_data[] =
	"{\"type\":\"webauthn.get\",\"challenge\":\"OcDnUhQXulTUPo3JUXT0I97pvzzYBP9tZchXyav01Ag\","
	"\"origin\":\"https://example.org\",\"crossOrigin\":false}";

static int verify(const uint8_t *key, size_t key_len, const uint8_t *ad, size_t ad_len,
		  const uint8_t *sig, size_t sig_len, struct sw_webauthn_assertion *out)
{
	static const char *const origins[] = { "https://example.org" };
	struct sw_webauthn_rp rp = { "example.org", origins, 1, false };
	uint8_t challenge[32];
	size_t challenge_len = 0;
	ASSERT(sw_base64url_decode(SW_STR("OcDnUhQXulTUPo3JUXT0I97pvzzYBP9tZchXyav01Ag"), challenge,
				   sizeof(challenge), &challenge_len) == 0);
	char err[160] = "";
	int rc = sw_webauthn_verify_assertion(&rp, (const uint8_t *)client_data,
					      sizeof(client_data) - 1, ad, ad_len, sig, sig_len,
					      challenge, challenge_len, key, key_len, out, err,
					      sizeof(err));
	if (rc < 0)
		ASSERT((rc == -EBADMSG || rc == -EPERM || rc == -ENOTSUP || rc == -E2BIG ||
			rc == -ENOMEM) && err[0] != '\0');
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t key_len = (size_t)data[0] << 8 | data[1];
	if (key_len > size - 2)
		return 0;
	const uint8_t *key = data + 2;
	size_t rest = size - 2 - key_len;
	if (rest < 1 || data[2 + key_len] > rest - 1)
		return 0;
	size_t ad_len = data[2 + key_len];
	const uint8_t *ad = key + key_len + 1;
	const uint8_t *sig = ad + ad_len;
	size_t sig_len = rest - 1 - ad_len;

	struct sw_webauthn_assertion out;
	if (verify(key, key_len, ad, ad_len, sig, sig_len, &out) != 0)
		return 0;
	uint8_t want[32];
	ASSERT(EVP_Digest("example.org", 11, want, NULL, EVP_sha256(), NULL) == 1);
	ASSERT(ad_len >= 37 && memcmp(ad, want, 32) == 0 && (ad[32] & 0x01));
	ASSERT(out.sign_count == ((uint32_t)ad[33] << 24 | (uint32_t)ad[34] << 16 |
				  (uint32_t)ad[35] << 8 | ad[36]));
	ASSERT(out.user_verified == ((ad[32] & 0x04) != 0));
	ASSERT(out.backup_eligible == ((ad[32] & 0x08) != 0));
	ASSERT(out.backed_up == ((ad[32] & 0x10) != 0));
	ASSERT(!out.backed_up || out.backup_eligible);
	if (sig_len > 0 && sig_len <= SW_WEBAUTHN_MAX_SIGNATURE) {
		uint8_t flipped[SW_WEBAUTHN_MAX_SIGNATURE];
		memcpy(flipped, sig, sig_len);
		flipped[sig_len - 1] ^= 0x01;
		ASSERT(verify(key, key_len, ad, ad_len, flipped, sig_len, &out) < 0);
	}
	return 0;
}
