/* Rate limits of the public routes that check a secret, on the shared
 * limiter (steward/auth/ratelimit.h). Values are documented in the OpenAPI
 * document.
 *
 *   sign-in             per address 30 / 5 min, per account 10 / 15 min
 *   two-factor verify   per address 30 / 5 min, per account  5 / 5 min
 *   passkey verify      per address 30 / 5 min
 *   webhooks            per address 60 / 1 min (every request, verified or
 *                       not: a burst of 60, then one a second)
 *   every route         per address STEWARD_RATE_LIMIT_PER_MINUTE (default
 *                       1200, at least 120) / 1 min, in the guard
 *
 * A successful sign-in refills the account's bucket, so a person who
 * mistyped a few times is not locked out after getting it right. The
 * buckets are per process: with several replicas an attacker gets each
 * replica's allowance, which the per-account Argon2id cost still bounds. */
#include <stdio.h>
#include "steward/auth/auth.h"
#include "steward/auth/ratelimit.h"
#include "api/api_internal.h"

const struct sw_ratelimit sw_api_limit_sign_in_address = { "sign_in_address", 30, 300 };
const struct sw_ratelimit sw_api_limit_sign_in_account = { "sign_in_account", 10, 900 };
const struct sw_ratelimit sw_api_limit_two_factor_address = { "two_factor_address", 30, 300 };
const struct sw_ratelimit sw_api_limit_two_factor_account = { "two_factor_account", 5, 300 };
const struct sw_ratelimit sw_api_limit_passkey_address = { "passkey_address", 30, 300 };
const struct sw_ratelimit sw_api_limit_webhook_address = { "webhook_address", 60, 60 };

bool sw_api_rate_limit(struct sw_http_request *req, const struct sw_ratelimit *rl, struct sw_str key)
{
	return sw_auth_rate_limit(req, rl, key, "Too many attempts; wait before trying again.");
}

bool sw_api_rate_limit_sign_in(struct sw_http_request *req, const char *account)
{
	return sw_api_rate_limit(req, &sw_api_limit_sign_in_address,
				 sw_str_cstr(sw_http_peer_address(req))) &&
	       sw_api_rate_limit(req, &sw_api_limit_sign_in_account, sw_str_cstr(account));
}
