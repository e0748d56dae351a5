/* Agent tokens ("sta_" + 43 base64url characters), the one tagged-token
 * constructor they share with API tokens, and random UUIDs (secret.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include "steward/base/secret.h"
#include "test_help.h"

TEST(agent_token_is_sta_and_43_characters_with_its_prefix)
{
	char tok[SW_AGENT_TOKEN_LEN + 1], prefix[SW_AGENT_TOKEN_PREFIX_LEN + 1];
	CHECK_INT_EQ(SW_AGENT_TOKEN_LEN, 47);
	CHECK_INT_EQ(SW_AGENT_TOKEN_PREFIX_LEN, 12);
	REQUIRE(sw_agent_token_new(tok, prefix) == 0);
	CHECK_INT_EQ(strlen(tok), 47);
	CHECK(strncmp(tok, "sta_", 4) == 0);
	CHECK_INT_EQ(strlen(prefix), 12);
	CHECK(strncmp(tok, prefix, 12) == 0);
	CHECK(sw_agent_token_well_formed(sw_str_cstr(tok)));
}

TEST(agent_and_api_tokens_are_not_taken_for_each_other)
{
	char agent[SW_AGENT_TOKEN_LEN + 1], agent_prefix[SW_AGENT_TOKEN_PREFIX_LEN + 1];
	char api[SW_API_TOKEN_LEN + 1], api_prefix[SW_API_TOKEN_PREFIX_LEN + 1];
	REQUIRE(sw_agent_token_new(agent, agent_prefix) == 0);
	REQUIRE(sw_api_token_new(api, api_prefix) == 0);
	CHECK(!sw_api_token_well_formed(sw_str_cstr(agent)));
	CHECK(!sw_agent_token_well_formed(sw_str_cstr(api)));
	CHECK(sw_api_token_well_formed(sw_str_cstr(api)));
}

TEST(agent_token_well_formed_refuses_near_misses)
{
	char tok[SW_AGENT_TOKEN_LEN + 1], prefix[SW_AGENT_TOKEN_PREFIX_LEN + 1], t[64];
	REQUIRE(sw_agent_token_new(tok, prefix) == 0);
	CHECK(!sw_agent_token_well_formed(sw_str_from(tok, 46)));
	snprintf(t, sizeof(t), "%sA", tok);
	CHECK(!sw_agent_token_well_formed(sw_str_cstr(t)));
	memcpy(t, tok, sizeof(tok));
	t[2] = 'A';
	CHECK(!sw_agent_token_well_formed(sw_str_cstr(t)));
	memcpy(t, tok, sizeof(tok));
	t[30] = '+';
	CHECK(!sw_agent_token_well_formed(sw_str_cstr(t)));
	CHECK(!sw_agent_token_well_formed(SW_STR_NULL));
}

TEST(two_agent_tokens_differ)
{
	char a[SW_AGENT_TOKEN_LEN + 1], b[SW_AGENT_TOKEN_LEN + 1], p[SW_AGENT_TOKEN_PREFIX_LEN + 1];
	REQUIRE(sw_agent_token_new(a, p) == 0);
	REQUIRE(sw_agent_token_new(b, p) == 0);
	CHECK(strcmp(a, b) != 0);
}

TEST(tagged_token_refuses_buffers_too_small_and_leaves_them_empty)
{
	char out[SW_AGENT_TOKEN_LEN + 1], prefix[SW_AGENT_TOKEN_PREFIX_LEN + 1];
	memset(out, 'x', sizeof(out));
	memset(prefix, 'x', sizeof(prefix));
	CHECK_INT_EQ(sw_tagged_token_new("sta_", out, sizeof(out) - 1, prefix, sizeof(prefix)), -EINVAL);
	CHECK_STR_EQ(out, "");
	CHECK_STR_EQ(prefix, "");
	CHECK_INT_EQ(sw_tagged_token_new("sta_", out, sizeof(out), prefix, sizeof(prefix) - 1), -EINVAL);
	CHECK_INT_EQ(sw_tagged_token_new("sta_", out, sizeof(out), prefix, sizeof(prefix)), 0);
	CHECK(sw_tagged_token_well_formed(sw_str_cstr(out), "sta_"));
	CHECK(!sw_tagged_token_well_formed(sw_str_cstr(out), "st_"));
}

TEST(random_uuid_is_version_4_lower_case_and_differs_each_time)
{
	char a[37], b[37];
	REQUIRE(sw_random_uuid(a) == 0);
	REQUIRE(sw_random_uuid(b) == 0);
	CHECK_INT_EQ(strlen(a), 36);
	CHECK(strcmp(a, b) != 0);
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		bool hex = (a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f');
		CHECK(dash ? a[i] == '-' : hex);
	}
	CHECK(a[14] == '4');
	CHECK(strchr("89ab", a[19]) != NULL);
}

TEST_MAIN()
