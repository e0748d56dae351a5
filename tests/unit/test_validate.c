/* Validators: e-mail addresses, display names, password rules, listen
 * addresses, and the formats of the resource API (names, hostnames,
 * branches, paths, URLs, git URLs, variables, command arguments). */
#include "steward/auth/auth.h"
#include "steward/base/config.h"
#include "steward/base/limits.h"
#include "steward/base/validate.h"
#include "test_help.h"

static bool email_ok(const char *s)
{
	char out[SW_EMAIL_MAX_LEN + 1];
	const char *msg;
	return sw_valid_email(sw_str_cstr(s), out, sizeof(out), &msg);
}

TEST(valid_emails_are_accepted_and_lowercased)
{
	char out[SW_EMAIL_MAX_LEN + 1];
	const char *msg;
	CHECK(sw_valid_email(SW_STR("Ada.Lovelace+x@Example.COM"), out, sizeof(out), &msg));
	CHECK_STR_EQ(out, "ada.lovelace+x@example.com");
	CHECK(email_ok("a@b.co"));
	CHECK(email_ok("first_last@sub.domain-x.org"));
}

TEST(invalid_emails_are_refused)
{
	CHECK(!email_ok(""));
	CHECK(!email_ok("plain"));
	CHECK(!email_ok("@example.com"));
	CHECK(!email_ok("a@"));
	CHECK(!email_ok("a@localhost"));
	CHECK(!email_ok("a@@b.com"));
	CHECK(!email_ok("a b@c.com"));
	CHECK(!email_ok(".a@b.com"));
	CHECK(!email_ok("a.@b.com"));
	CHECK(!email_ok("a..b@c.com"));
	CHECK(!email_ok("a@-b.com"));
	CHECK(!email_ok("a@b-.com"));
	CHECK(!email_ok("a@b..com"));
	CHECK(!email_ok("a@b.com."));
	CHECK(!email_ok("<script>@b.com"));
	CHECK(!email_ok("a@b.com\n"));
}

TEST(email_length_limit_is_254)
{
	char s[300];
	/* 64-char local part, then labels to reach exactly 254 bytes. */
	memset(s, 'a', 64);
	size_t n = 64;
	s[n++] = '@';
	while (n < 254 - 4) {
		size_t take = SW_MIN((size_t)63, 254 - 4 - n);
		memset(s + n, 'b', take);
		n += take;
		if (n < 254 - 4)
			s[n++] = '.';
	}
	memcpy(s + n, ".com", 4);
	n += 4;
	s[n] = '\0';
	CHECK_INT_EQ(n, 254);
	CHECK(email_ok(s));
	memmove(s + 1, s, n + 1);
	s[0] = 'c'; /* 65-char local part and 255 bytes */
	CHECK(!email_ok(s));
}

TEST(display_names_are_trimmed_and_bounded)
{
	struct sw_str t;
	const char *msg;
	CHECK(sw_valid_display_name(SW_STR("  Ada  "), SW_NAME_MAX_LEN, &t, &msg));
	CHECK(sw_str_eq(t, SW_STR("Ada")));
	CHECK(!sw_valid_display_name(SW_STR("   "), SW_NAME_MAX_LEN, &t, &msg));
	CHECK(!sw_valid_display_name(SW_STR("a\tb"), SW_NAME_MAX_LEN, &t, &msg));
	CHECK(!sw_valid_display_name(SW_STR("a\xc2\x85" "b"), SW_NAME_MAX_LEN, &t, &msg));
	char name[300];
	memset(name, 'x', 100);
	CHECK(sw_valid_display_name(sw_str_from(name, 100), SW_NAME_MAX_LEN, &t, &msg));
	CHECK(!sw_valid_display_name(sw_str_from(name, 101), SW_NAME_MAX_LEN, &t, &msg));
	/* 100 two-byte characters are 100 characters. */
	for (int i = 0; i < 100; i++) {
		name[2 * i] = (char)0xc3;
		name[2 * i + 1] = (char)0xa9;
	}
	CHECK(sw_valid_display_name(sw_str_from(name, 200), SW_NAME_MAX_LEN, &t, &msg));
}

TEST(password_rules_bound_length_in_characters)
{
	const char *msg;
	CHECK(!sw_password_acceptable(SW_STR("short"), &msg));
	CHECK(!sw_password_acceptable(SW_STR("123456789"), &msg));
	CHECK(sw_password_acceptable(SW_STR("1234567890"), &msg));
	CHECK(!sw_password_acceptable(SW_STR("12345678\n90"), &msg));
	char pw[600];
	memset(pw, 'p', 257);
	CHECK(sw_password_acceptable(sw_str_from(pw, 256), &msg));
	CHECK(!sw_password_acceptable(sw_str_from(pw, 257), &msg));
	/* Ten 2-byte characters are ten characters. */
	for (int i = 0; i < 10; i++) {
		pw[2 * i] = (char)0xc3;
		pw[2 * i + 1] = (char)0xa9;
	}
	CHECK(sw_password_acceptable(sw_str_from(pw, 20), &msg));
	CHECK(!sw_password_acceptable(sw_str_from(pw, 18), &msg));
}

TEST(argon2id_hash_verifies_and_uses_the_required_parameters)
{
	char enc[SW_PASSWORD_HASH_MAX];
	REQUIRE(sw_password_hash(SW_STR("correct horse battery"), enc) == 0);
	CHECK(strncmp(enc, "$argon2id$v=19$m=19456,t=2,p=1$", 31) == 0);
	CHECK(sw_password_verify(enc, SW_STR("correct horse battery")));
	CHECK(!sw_password_verify(enc, SW_STR("correct horse batterx")));
	char enc2[SW_PASSWORD_HASH_MAX];
	REQUIRE(sw_password_hash(SW_STR("correct horse battery"), enc2) == 0);
	CHECK(strcmp(enc, enc2) != 0); /* salted */
}

TEST(listen_addresses_parse)
{
	struct sockaddr_storage ss;
	socklen_t len;
	CHECK_INT_EQ(sw_parse_listen("127.0.0.1:8080", &ss, &len), 0);
	CHECK_INT_EQ(ss.ss_family, AF_INET);
	CHECK_INT_EQ(sw_parse_listen("[::1]:9000", &ss, &len), 0);
	CHECK_INT_EQ(ss.ss_family, AF_INET6);
	CHECK(sw_parse_listen("localhost:80", &ss, &len) < 0);
	CHECK(sw_parse_listen("127.0.0.1", &ss, &len) < 0);
	CHECK(sw_parse_listen("127.0.0.1:65536", &ss, &len) < 0);
	CHECK(sw_parse_listen("127.0.0.1:-1", &ss, &len) < 0);
}

TEST(constant_time_compare)
{
	CHECK(sw_ct_equal("abc", 3, "abc", 3));
	CHECK(!sw_ct_equal("abc", 3, "abd", 3));
	CHECK(!sw_ct_equal("abc", 3, "abcd", 4));
	CHECK(sw_ct_equal("", 0, "", 0));
}

/* ---- formats of the resource API ---- */

typedef bool (*format_fn)(struct sw_str, const char **);

/* Checks that v answers want for s, and that a refusal comes with a
 * field-error sentence (lower-case first letter). */
static void expect(int *sw_failed_, const char *name, format_fn v, struct sw_str s, bool want)
{
	const char *msg = NULL;
	bool got = v(s, &msg);
	if (got != want) {
		fprintf(stderr, "  %s(\"%.*s\") is %s, want %s (%s)\n", name, (int)SW_MIN(s.len, 80),
			s.ptr, got ? "accepted" : "refused", want ? "accepted" : "refused",
			msg ? msg : "");
		*sw_failed_ = 1;
	}
	if (!got && (!msg || msg[0] < 'a' || msg[0] > 'z')) {
		fprintf(stderr, "  %s(\"%.*s\") refused without a message\n", name,
			(int)SW_MIN(s.len, 80), s.ptr);
		*sw_failed_ = 1;
	}
}

/* Every string of ok (NULL-terminated) accepted, every one of bad refused. */
static void expect_lists(int *sw_failed_, const char *name, format_fn v, const char *const *ok,
			 const char *const *bad)
{
	for (; *ok; ok++)
		expect(sw_failed_, name, v, sw_str_cstr(*ok), true);
	for (; *bad; bad++)
		expect(sw_failed_, name, v, sw_str_cstr(*bad), false);
}

/* prefix padded to max bytes is accepted, to max + 1 bytes refused. */
static void expect_limit(int *sw_failed_, const char *name, format_fn v, const char *prefix,
			 size_t max)
{
	static char buf[4096];
	size_t p = strlen(prefix);
	memcpy(buf, prefix, p);
	memset(buf + p, 'x', max + 1 - p);
	expect(sw_failed_, name, v, sw_str_from(buf, max), true);
	expect(sw_failed_, name, v, sw_str_from(buf, max + 1), false);
}

#define FORMAT_CASES(v, ok, bad) expect_lists(sw_failed_, #v, v, ok, bad)
#define LENGTH_LIMIT(v, prefix, max) expect_limit(sw_failed_, #v, v, prefix, max)
#define ACCEPTS(v, s) expect(sw_failed_, #v, v, sw_str_cstr(s), true)
#define REFUSES(v, s) expect(sw_failed_, #v, v, sw_str_cstr(s), false)
#define REFUSES_N(v, p, n) expect(sw_failed_, #v, v, sw_str_from(p, n), false)

static bool url(struct sw_str s, const char **msg)
{
	return sw_valid_url(s, false, NULL, NULL, msg);
}

static bool https_url(struct sw_str s, const char **msg)
{
	return sw_valid_url(s, true, NULL, NULL, msg);
}

static bool git_url(struct sw_str s, const char **msg)
{
	return sw_valid_git_url(s, false, NULL, msg);
}

static bool git_url_or_file(struct sw_str s, const char **msg)
{
	return sw_valid_git_url(s, true, NULL, msg);
}

/* prefix, then n bytes of c (the whole under 4096 bytes), in a static buffer. */
static const char *padded(const char *prefix, char c, size_t n)
{
	static char buf[4096];
	size_t p = strlen(prefix);
	memcpy(buf, prefix, p);
	memset(buf + p, c, n);
	buf[p + n] = '\0';
	return buf;
}

TEST(resource_names_are_dns_labels)
{
	static const char *const ok[] = { "a", "web", "my-app-2", NULL };
	static const char *const bad[] = { "", "App", "1app", "-app", "app-", "a--b", "a_b", "a.b",
					   "a b", "caf\xc3\xa9", "app\n", NULL };
	FORMAT_CASES(sw_valid_resource_name, ok, bad);
	LENGTH_LIMIT(sw_valid_resource_name, "", SW_RESOURCE_NAME_MAX_LEN);
	REFUSES_N(sw_valid_resource_name, "ab\0c", 4);
	const char *msg = NULL;
	CHECK(!sw_valid_resource_name(SW_STR("My App"), &msg));
	CHECK_STR_EQ(msg, "must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter");
}

TEST(hostnames_are_lower_case_domain_names_of_two_labels_or_more)
{
	static const char *const ok[] = { "a.b", "example.com", "app.staging.example.co.uk",
					  "xn--bcher-kva.example", "1.2.3.com", "a-b.c-d.io", NULL };
	static const char *const bad[] = {
		"", "localhost", "1.2.3.4", "a.123", "a.1com", "0.0x7f0001" /* found by fuzzing */,
		"-a.com", "a-.com", "Example.com", "a..b", ".a.b", "a.b.", "*.example.com", "a_b.com",
		"a.com/x", "a.com:80", "b\xc3\xbc" "cher.de", "<b>.com", NULL
	};
	FORMAT_CASES(sw_valid_hostname, ok, bad);
	char host[4200]; /* room for any padded() string: never truncated */
	snprintf(host, sizeof(host), "%s.com", padded("", 'a', 63));
	ACCEPTS(sw_valid_hostname, host);
	snprintf(host, sizeof(host), "%s.com", padded("", 'a', 64));
	REFUSES(sw_valid_hostname, host);
	/* 253 bytes: labels of 63, 63, 63 and 61; then one more byte. */
	for (int i = 0; i < 3; i++) {
		memset(host + 64 * i, 'a' + i, 63);
		host[64 * i + 63] = '.';
	}
	memset(host + 192, 'd', 61);
	host[253] = '\0';
	ACCEPTS(sw_valid_hostname, host);
	host[253] = 'd';
	host[254] = '\0';
	REFUSES(sw_valid_hostname, host);
}

TEST(git_branches_follow_check_ref_format)
{
	static const char *const ok[] = { "main", "feature/x", "release-1.2", "v1.0_RC/a/b",
					  "x.locked", "heads", "feature/-x", NULL };
	static const char *const bad[] = {
		"", "a..b", "x.lock", "x.lock/y", "-x", "a//b", "@{", "a@{1}", ".hidden/x",
		"x/.hidden", "/x", "x/", "x.", "a/.", "HEAD", "a b", "a~1", "a^", "a:b", "a\\b", "a*",
		"a?", "$(id)", NULL
	};
	FORMAT_CASES(sw_valid_git_branch, ok, bad);
	LENGTH_LIMIT(sw_valid_git_branch, "", SW_GIT_BRANCH_MAX_LEN);
}

TEST(relative_paths_stay_inside_the_source)
{
	static const char *const ok[] = { ".", "Dockerfile", "docker/Dockerfile.prod",
					  ".dockerignore", "a/.env", "a/...", NULL };
	static const char *const bad[] = {
		"", "/etc/passwd", "..", "../x", "a/../../b", "a/..", "./x", "a/./b", "a//b", "a/",
		"-rf", "a/-x", "a b", "a\\..\\b", "~/x", "$HOME", NULL
	};
	FORMAT_CASES(sw_valid_relative_path, ok, bad);
	LENGTH_LIMIT(sw_valid_relative_path, "", SW_PATH_MAX_LEN);
}

TEST(container_paths_are_absolute_and_outside_the_runtime)
{
	static const char *const ok[] = { "/data", "/var/lib/postgresql/data", "/app/.cache",
					  "/procfs", "/devices/x", "/a-b_c.d", NULL };
	static const char *const bad[] = {
		"", "/", "/a/../b", "/..", "/a/.", "/proc", "/proc/x", "/sys/fs/cgroup", "/dev/shm",
		"relative", "/a/", "//a", "/a//b", "/a b", "/a:b", "/data\n", NULL
	};
	FORMAT_CASES(sw_valid_container_path, ok, bad);
	LENGTH_LIMIT(sw_valid_container_path, "/", SW_PATH_MAX_LEN);
}

TEST(host_paths_keep_away_from_the_system_and_the_docker_socket)
{
	static const char *const ok[] = { "/srv/data", "/home/ada/site", "/var/lib/app",
					  "/etcetera", "/opt/run", "/var/runner", "/run/user/1000",
					  NULL };
	static const char *const bad[] = {
		"/", "/etc", "/etc/passwd", "/root/.ssh", "/boot", "/proc/1", "/sys", "/dev/sda",
		"/var/run/docker.sock", "/run/docker.sock", "/var/run", "/var", "/run", "relative",
		"/srv/../etc", "/srv/", NULL
	};
	FORMAT_CASES(sw_valid_host_path, ok, bad);
	LENGTH_LIMIT(sw_valid_host_path, "/srv/", SW_PATH_MAX_LEN);
}

TEST(http_paths_are_origin_form_without_dot_segments)
{
	static const char *const ok[] = { "/", "/health", "/api/v1/health?full=1&x=y", "/a%20b",
					  "/~u/!$&'()*+,;=:@", NULL };
	static const char *const bad[] = {
		"", "health", "//evil.example/x", "/a/../b", "/..", "/a#b", "/a b", "/%zz", "/%2",
		"/a\"b", "/<script>", "/a\r\nX-Injected: 1", "http://x/", NULL
	};
	FORMAT_CASES(sw_valid_http_path, ok, bad);
	LENGTH_LIMIT(sw_valid_http_path, "/", SW_HTTP_PATH_MAX_LEN);
}

TEST(urls_are_http_with_a_plain_host)
{
	static const char *const ok[] = {
		"https://example.com", "https://example.com/hook?x=1&y=%2F", "http://localhost:8080/x",
		"http://127.0.0.1:9/", "https://[::1]:8443/x", "https://hooks.slack.com/services/T0/B0",
		"https://example.com?x", NULL
	};
	static const char *const bad[] = {
		"", "ftp://example.com", "HTTPS://example.com", "https://", "https:///x",
		"//example.com", "https://user:pw@host/x", "https://user@host/x", "https://host/x#frag",
		"https://host:0/", "https://host:65536/", "https://host:/", "https://host:08/",
		"https://host:8a/", "https://127.1/", "https://0x7f000001/", "https://2130706433/",
		"https://127.000.000.001/", "https://1.2.3.4.5/", "https://[::1/",
		"https://[fe80::1%25eth0]/", "https://[::1]x/", "https://Example.com/", "https://a..b/",
		"https://-a.com/", "https://host/a b", "https://host\\@evil.com/",
		"javascript:alert(1)", NULL
	};
	FORMAT_CASES(url, ok, bad);
	/* A NUL ends nothing (the second found by fuzzing). */
	REFUSES_N(url, "https://h\0/x", 12);
	REFUSES_N(url, "https://127.0.0.1\0.2/x", 22);
	LENGTH_LIMIT(url, "https://h/", SW_URL_MAX_LEN);
	REFUSES(https_url, "http://example.com");
	ACCEPTS(https_url, "https://example.com");
}

TEST(url_reports_its_host_and_port)
{
	struct sw_str host;
	unsigned port = 0;
	const char *msg;
	REQUIRE(sw_valid_url(SW_STR("https://[::1]:8443/x"), false, &host, &port, &msg));
	CHECK(sw_str_eq(host, SW_STR("::1")));
	CHECK_INT_EQ(port, 8443);
	REQUIRE(sw_valid_url(SW_STR("https://example.com/x"), false, &host, &port, &msg));
	CHECK(sw_str_eq(host, SW_STR("example.com")));
	CHECK_INT_EQ(port, 443);
	REQUIRE(sw_valid_url(SW_STR("http://a.b?q"), false, &host, &port, &msg));
	CHECK(sw_str_eq(host, SW_STR("a.b")));
	CHECK_INT_EQ(port, 80);
	REQUIRE(sw_valid_url(SW_STR("http://10.0.0.1:65535"), false, NULL, &port, &msg));
	CHECK_INT_EQ(port, 65535);
}

TEST(git_urls_say_their_kind)
{
	enum sw_git_url_kind kind;
	const char *msg;
	REQUIRE(sw_valid_git_url(SW_STR("https://github.com/a/b.git"), false, &kind, &msg));
	CHECK_INT_EQ(kind, SW_GIT_URL_HTTPS);
	REQUIRE(sw_valid_git_url(SW_STR("git@github.com:a/b.git"), false, &kind, &msg));
	CHECK_INT_EQ(kind, SW_GIT_URL_SSH);
	REQUIRE(sw_valid_git_url(SW_STR("ssh://git@127.0.0.1:2222/srv/repo.git"), false, &kind, &msg));
	CHECK_INT_EQ(kind, SW_GIT_URL_SSH);
	REQUIRE(sw_valid_git_url(SW_STR("file:///tmp/r"), true, &kind, &msg));
	CHECK_INT_EQ(kind, SW_GIT_URL_FILE);
}

TEST(git_urls_are_https_ssh_or_scp_and_file_only_when_allowed)
{
	static const char *const ok[] = {
		"https://github.com/a/b.git", "git@github.com:a/b.git",
		"ssh://git@127.0.0.1:2222/srv/repo.git", "https://gitlab.example.com:8443/group/sub/repo",
		"ssh://git@[::1]/srv/r", "git@host:~/r.git", "deploy_user@git.example.com:team/app", NULL
	};
	static const char *const bad[] = {
		"", "file:///tmp/r", "https://user:pw@host/x", "https://token@host/x", "ext::sh -c x",
		"--upload-pack=x", "-oProxyCommand=x@h:a", "https://h/a/../b", "https://h/./b",
		"https://h", "https://h/", "https://h/a/", "https://h//a", "http://h/a",
		"https://h/a?x=1", "https://h/a#x", "https://h/a;b", "https://h/-a", "ssh://h/a",
		"ssh://-oProxyCommand=x@h/a", "ssh://git@-oProxyCommand=x/a", "ssh://git@h:22",
		"git@h:/abs", "git@h:-x", "git@h", "git@h:", "Git@h:a", "git@h:a b", "git@h:a/-b",
		"git@127.1:a", "/srv/repo.git", "../repo", NULL
	};
	FORMAT_CASES(git_url, ok, bad);
	LENGTH_LIMIT(git_url, "https://h/", SW_URL_MAX_LEN);
	/* A NUL ends nothing: found by fuzzing, it once stood for the '/'. */
	REFUSES_N(git_url, "https://h\0x/a.git", 16);
	REFUSES_N(git_url, "https://h\0/a.git", 15);
	static const char *const file_ok[] = { "file:///srv/git/app.git", "https://h/a", NULL };
	static const char *const file_bad[] = { "file://host/r", "file:///tmp/../r", "file:///",
						"file://", NULL };
	FORMAT_CASES(git_url_or_file, file_ok, file_bad);
}

TEST(environment_keys_are_identifiers)
{
	static const char *const ok[] = { "A", "_", "DATABASE_URL", "lower_1", NULL };
	static const char *const bad[] = { "", "1A", "A-B", "A B", "A=B", "\xc3\x84", NULL };
	FORMAT_CASES(sw_valid_env_key, ok, bad);
	LENGTH_LIMIT(sw_valid_env_key, "", SW_ENV_KEY_MAX_LEN);
	REFUSES_N(sw_valid_env_key, "A\0B", 3);
}

TEST(environment_values_are_utf8_without_nul)
{
	static const char *const ok[] = { "", "plain", "multi\nline\ttab\r",
					  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
					  "$(rm -rf /) `id` ${X}", NULL };
	static const char *const bad[] = { "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
					   "\xf4\x90\x80\x80", "\xff", "\x80",
					   "\xf8\x88\x80\x80\x80", NULL };
	FORMAT_CASES(sw_valid_env_value, ok, bad);
	REFUSES_N(sw_valid_env_value, "a\0b", 3);
	char *big = malloc(SW_ENV_VALUE_MAX_LEN + 1);
	REQUIRE(big);
	memset(big, 'v', SW_ENV_VALUE_MAX_LEN + 1);
	expect(sw_failed_, "sw_valid_env_value", sw_valid_env_value,
	       sw_str_from(big, SW_ENV_VALUE_MAX_LEN), true);
	REFUSES_N(sw_valid_env_value, big, SW_ENV_VALUE_MAX_LEN + 1);
	free(big);
}

TEST(command_arguments_are_utf8_without_control_characters)
{
	static const char *const ok[] = { "node", "--port=3000", "h\xc3\xa9llo world",
					  "$(id); rm -rf /", "\xc2\xa0", NULL };
	static const char *const bad[] = { "", "a\nb", "a\tb", "\x7f", "\xc2\x85", "\xc2\x9f",
					   "\xc3", NULL };
	FORMAT_CASES(sw_valid_command_arg, ok, bad);
	REFUSES_N(sw_valid_command_arg, "a\0b", 3);
	LENGTH_LIMIT(sw_valid_command_arg, "", SW_COMMAND_ARG_MAX_LEN);
}

TEST_MAIN()
