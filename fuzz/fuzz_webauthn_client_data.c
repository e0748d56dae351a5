/* libFuzzer harness for clientDataJSON checking and base64url.
 *
 * An input starting with '#' drives base64url: whatever decodes must
 * encode back to the same text (only the canonical form is accepted), and
 * the decoded length must be what the text length implies. Any other input
 * is clientDataJSON, checked for both ceremonies against two allowed
 * origins and the challenge "0123456789abcdef". Beyond "no crash, no UB":
 * every refusal carries a known code and a message, and an acceptance is
 * re-derived independently with jansson (type, challenge, one of the
 * origins, crossOrigin not true, no topOrigin). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "steward/auth/webauthn.h"
#include "fuzz.h"

static const char *const origins[] = { "https://example.org", "https://steward.example" };
static const uint8_t challenge[] = "0123456789abcdef";
#define CHALLENGE_B64 "MDEyMzQ1Njc4OWFiY2RlZg"

static void fuzz_base64url(const uint8_t *text, size_t len)
{
	uint8_t out[4096];
	char back[5600];
	size_t n = 0;
	int rc = sw_base64url_decode(sw_str_from((const char *)text, len), out, sizeof(out), &n);
	ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOSPC);
	if (rc != 0)
		return;
	ASSERT(n == len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0));
	int m = sw_base64url_encode(out, n, back, sizeof(back));
	ASSERT(m >= 0 && (size_t)m == len && memcmp(back, text, len) == 0);
}

/* What an acceptance must mean, checked without the code under test. */
static void confirm_accepted(const uint8_t *data, size_t size, const char *type)
{
	json_t *c = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	ASSERT(json_is_object(c));
	ASSERT(strcmp(json_string_value(json_object_get(c, "type")), type) == 0);
	ASSERT(strcmp(json_string_value(json_object_get(c, "challenge")), CHALLENGE_B64) == 0);
	const char *origin = json_string_value(json_object_get(c, "origin"));
	ASSERT(origin && (strcmp(origin, origins[0]) == 0 || strcmp(origin, origins[1]) == 0));
	ASSERT(!json_is_true(json_object_get(c, "crossOrigin")));
	ASSERT(!json_object_get(c, "topOrigin"));
	json_decref(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && data[0] == '#') {
		fuzz_base64url(data + 1, size - 1);
		return 0;
	}
	struct sw_webauthn_rp rp = { "example.org", origins, 2, true };
	static const char *const types[] = { "webauthn.get", "webauthn.create" };
	for (size_t i = 0; i < 2; i++) {
		char err[160] = "";
		int rc = sw_webauthn_check_client_data(&rp, types[i], data, size, challenge, 16, err,
						       sizeof(err));
		ASSERT(rc == 0 || rc == -EBADMSG || rc == -EPERM || rc == -E2BIG);
		if (rc < 0)
			ASSERT(err[0] != '\0');
		else
			confirm_accepted(data, size, types[i]);
	}
	return 0;
}
