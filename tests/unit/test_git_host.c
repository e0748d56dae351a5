/* The repository picker's normalisation (git_host.h): the documented
 * answers of GitHub, GitLab and Bitbucket become one shape; anything else
 * is refused whole. The HTTP side runs against a stand-in host in
 * tests/integration/git_credentials.test.mjs. */
#include <errno.h>
#include "steward/net/git_host.h"
#include "test_help.h"

/* Normalises body; the result as a NUL-terminated string into out (cap
 * bytes), or "" on error; returns the error. */
static int normalise(enum sw_git_provider p, const char *body, char *out, size_t cap)
{
	struct sw_buf b = { 0 };
	int r = sw_git_host_normalise(p, body, strlen(body), &b);
	snprintf(out, cap, "%.*s", (int)b.len, b.data ? (const char *)b.data : "");
	sw_buf_release(&b);
	return r;
}

TEST(github_repositories_are_normalised)
{
	char out[1024];
	CHECK_INT_EQ(normalise(SW_GIT_GITHUB,
			       "[{\"id\":1,\"full_name\":\"acme/shop\",\"private\":true,"
			       "\"clone_url\":\"https://github.com/acme/shop.git\","
			       "\"ssh_url\":\"git@github.com:acme/shop.git\",\"default_branch\":\"main\","
			       "\"owner\":{\"login\":\"acme\"}},"
			       "{\"full_name\":\"acme/docs\",\"private\":false}]",
			       out, sizeof(out)),
		     0);
	CHECK_STR_EQ(out, "[{\"fullName\":\"acme/shop\",\"cloneUrlHttps\":\"https://github.com/acme/shop.git\","
			  "\"cloneUrlSsh\":\"git@github.com:acme/shop.git\",\"defaultBranch\":\"main\","
			  "\"private\":true},"
			  "{\"fullName\":\"acme/docs\",\"cloneUrlHttps\":null,\"cloneUrlSsh\":null,"
			  "\"defaultBranch\":null,\"private\":false}]");
}

TEST(gitlab_visibility_other_than_public_is_private)
{
	char out[1024];
	CHECK_INT_EQ(normalise(SW_GIT_GITLAB,
			       "[{\"path_with_namespace\":\"team/api\",\"visibility\":\"internal\","
			       "\"http_url_to_repo\":\"https://gitlab.com/team/api.git\","
			       "\"ssh_url_to_repo\":\"git@gitlab.com:team/api.git\",\"default_branch\":null},"
			       "{\"path_with_namespace\":\"team/pub\",\"visibility\":\"public\"}]",
			       out, sizeof(out)),
		     0);
	CHECK_STR_EQ(out, "[{\"fullName\":\"team/api\",\"cloneUrlHttps\":\"https://gitlab.com/team/api.git\","
			  "\"cloneUrlSsh\":\"git@gitlab.com:team/api.git\",\"defaultBranch\":null,"
			  "\"private\":true},"
			  "{\"fullName\":\"team/pub\",\"cloneUrlHttps\":null,\"cloneUrlSsh\":null,"
			  "\"defaultBranch\":null,\"private\":false}]");
}

TEST(bitbucket_values_lose_the_user_name_of_https_clone_urls)
{
	char out[1024];
	CHECK_INT_EQ(normalise(SW_GIT_BITBUCKET,
			       "{\"pagelen\":100,\"values\":[{\"full_name\":\"crew/site\",\"is_private\":true,"
			       "\"mainbranch\":{\"name\":\"trunk\"},\"links\":{\"clone\":["
			       "{\"name\":\"https\",\"href\":\"https://crewmate@bitbucket.org/crew/site.git\"},"
			       "{\"name\":\"ssh\",\"href\":\"git@bitbucket.org:crew/site.git\"}]}}]}",
			       out, sizeof(out)),
		     0);
	CHECK_STR_EQ(out, "[{\"fullName\":\"crew/site\",\"cloneUrlHttps\":\"https://bitbucket.org/crew/site.git\","
			  "\"cloneUrlSsh\":\"git@bitbucket.org:crew/site.git\",\"defaultBranch\":\"trunk\","
			  "\"private\":true}]");
}

TEST(items_without_a_full_name_are_skipped)
{
	char out[256];
	CHECK_INT_EQ(normalise(SW_GIT_GITHUB, "[1, \"x\", null, {\"name\":\"no-full-name\"}, {\"full_name\":7}]",
			       out, sizeof(out)),
		     0);
	CHECK_STR_EQ(out, "[]");
	CHECK_INT_EQ(normalise(SW_GIT_GITHUB, "[]", out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "[]");
}

TEST(answers_of_another_shape_are_refused_whole)
{
	char out[256];
	CHECK_INT_EQ(normalise(SW_GIT_GITHUB, "{\"message\":\"Bad credentials\"}", out, sizeof(out)), -EBADMSG);
	CHECK_INT_EQ(normalise(SW_GIT_GITLAB, "<html>maintenance</html>", out, sizeof(out)), -EBADMSG);
	CHECK_INT_EQ(normalise(SW_GIT_BITBUCKET, "[]", out, sizeof(out)), -EBADMSG);
	CHECK_INT_EQ(normalise(SW_GIT_BITBUCKET, "{\"values\":{}}", out, sizeof(out)), -EBADMSG);
	CHECK_INT_EQ(normalise(SW_GIT_GITHUB, "[{\"full_name\":\"a\",\"full_name\":\"b\"}]", out, sizeof(out)), -EBADMSG);
	CHECK_INT_EQ(normalise(SW_GIT_GENERIC, "[]", out, sizeof(out)), -EBADMSG);
	CHECK_STR_EQ(out, "");
}

TEST(at_most_the_cap_of_repositories_is_written)
{
	struct sw_buf in = { 0 }, out = { 0 };
	REQUIRE(sw_buf_append_lit(&in, "[") == 0);
	for (int i = 0; i < SW_GIT_HOST_MAX_REPOSITORIES + 5; i++)
		REQUIRE(sw_buf_appendf(&in, "%s{\"full_name\":\"o/r%d\"}", i ? "," : "", i) == 0);
	REQUIRE(sw_buf_append_lit(&in, "]") == 0);
	REQUIRE(sw_git_host_normalise(SW_GIT_GITHUB, (const char *)in.data, in.len, &out) == 0);
	int n = 0;
	for (size_t i = 0; i + 10 <= out.len; i++)
		n += memcmp(out.data + i, "\"fullName\"", 10) == 0;
	CHECK_INT_EQ(n, SW_GIT_HOST_MAX_REPOSITORIES);
	sw_buf_release(&in);
	sw_buf_release(&out);
}

TEST(providers_are_parsed_by_their_names)
{
	enum sw_git_provider p;
	CHECK(sw_git_provider_parse("GITLAB", &p) && p == SW_GIT_GITLAB);
	CHECK(sw_git_provider_parse("GENERIC", &p) && p == SW_GIT_GENERIC);
	CHECK(!sw_git_provider_parse("github", &p));
	CHECK(!sw_git_provider_parse("", &p));
}

TEST_MAIN()
