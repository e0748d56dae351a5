/* libFuzzer harness for attestation objects and COSE keys.
 *
 * The input is an attestationObject, verified as the registration of the
 * WebAuthn Level 3 test vector "ES256 Credential with No Attestation"
 * (its clientDataJSON and challenge are fixed here, so the vectors' "none"
 * objects in the corpus reach the success path; packed ones get as far as
 * their signature). The same bytes are also checked as a COSE_Key. Beyond
 * "no crash, no UB": every refusal has a known code and a message; an
 * accepted credential has an id of 1..1023 bytes, a known alg and fmt, and
 * a stored public key that is itself a valid COSE_Key of that alg and lies
 * inside the input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/auth/webauthn.h"
#include "fuzz.h"

static const char client_data[] =
	"{\"type\":\"webauthn.create\",\"challenge\":\"AMMPt4UxxGTStncdq417YDwBFi8vpIa-pw8oOuVW4TA\","
	"\"origin\":\"https://example.org\",\"crossOrigin\":false,\"extraData\":\"clientDataJSON may "
	"be extended with additional fields in the future, such as this: BkQeDjdcTBrXBiAwJTLE5Q\"}";

static bool known_error(int rc)
{
	return rc == -EBADMSG || rc == -EPERM || rc == -ENOTSUP || rc == -E2BIG || rc == -ENOMEM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const origins[] = { "https://example.org" };
	struct sw_webauthn_rp rp = { "example.org", origins, 1, false };
	uint8_t challenge[32];
	size_t challenge_len = 0;
	ASSERT(sw_base64url_decode(SW_STR("AMMPt4UxxGTStncdq417YDwBFi8vpIa-pw8oOuVW4TA"), challenge,
				   sizeof(challenge), &challenge_len) == 0);

	struct sw_webauthn_credential cred;
	char err[160] = "";
	int rc = sw_webauthn_verify_registration(&rp, (const uint8_t *)client_data,
						 sizeof(client_data) - 1, data, size, challenge,
						 challenge_len, &cred, err, sizeof(err));
	if (rc < 0) {
		ASSERT(known_error(rc) && err[0] != '\0');
	} else {
		ASSERT(rc == 0);
		ASSERT(cred.id_len >= 1 && cred.id_len <= SW_WEBAUTHN_MAX_CREDENTIAL_ID);
		ASSERT(cred.public_key_len >= 1 && cred.public_key_len <= size);
		ASSERT(strcmp(cred.fmt, "none") == 0 || strcmp(cred.fmt, "packed") == 0);
		ASSERT(!cred.backed_up || cred.backup_eligible);
		int alg = 0;
		ASSERT(sw_webauthn_check_public_key(cred.public_key_cose, cred.public_key_len, &alg,
						    err, sizeof(err)) == 0);
		ASSERT(alg == cred.alg);
		ASSERT(alg == SW_COSE_ES256 || alg == SW_COSE_EDDSA || alg == SW_COSE_RS256);
	}

	int alg = 0;
	err[0] = '\0';
	rc = sw_webauthn_check_public_key(data, size, &alg, err, sizeof(err));
	if (rc < 0)
		ASSERT(known_error(rc) && err[0] != '\0');
	else
		ASSERT(alg == SW_COSE_ES256 || alg == SW_COSE_EDDSA || alg == SW_COSE_RS256);
	return 0;
}
