/* Validators: e-mail addresses, display names, password rules, listen addresses. */
#include "steward/auth.h"
#include "steward/config.h"
#include "steward/limits.h"
#include "steward/validate.h"
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

TEST_MAIN()
