/* Secrets at rest (seal.h): the sealed form, what each kind of damage is
 * answered with, and where the master key comes from (STEWARD_SECRET_KEY
 * or a key file made once in the data directory). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/config.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "test_help.h"

static const uint8_t key_a[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
static const uint8_t key_b[32] = { 32, 31, 30 };

/* The key id seal.h defines, computed here from its words. */
static void key_id(const uint8_t key[32], char out[9])
{
	uint8_t buf[14 + 32];
	char hex[65];
	memcpy(buf, "steward-key-id", 14);
	memcpy(buf + 14, key, 32);
	sw_sha256_hex(buf, sizeof(buf), hex);
	memcpy(out, hex, 8);
	out[8] = '\0';
}

static int seal_str(const char *plain, const char *aad, char *out, size_t cap)
{
	return sw_seal(plain, strlen(plain), aad, out, cap);
}

/* Loads key_a and seals plain bound to aad into sealed. */
static bool seal_under_key_a(const char *plain, const char *aad, char sealed[128])
{
	sw_seal_init_key(key_a);
	return seal_str(plain, aad, sealed, 128) == 0;
}

/* A fresh directory name below a new temporary directory (not created). */
static void temp_data_dir(char *dir, size_t cap, char *root, size_t root_cap)
{
	snprintf(root, root_cap, "/tmp/sw-seal-XXXXXX");
	if (!mkdtemp(root))
		abort();
	snprintf(dir, cap, "%s/a/data", root);
}

static void remove_data_dir(const char *root)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/a/data/master.key", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a/data", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a", root);
	rmdir(p);
	rmdir(root);
}

static struct sw_config config_for(const char *dir)
{
	struct sw_config c;
	memset(&c, 0, sizeof(c));
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	return c;
}

TEST(a_mac_is_the_hmac_seal_h_defines_bound_to_its_label_and_key)
{
	sw_seal_init_key(key_a);
	uint8_t mac[32], again[32], other[32], mac_key[32], want[32];
	CHECK_INT_EQ(sw_seal_mac("passkey-registration", "abc", 3, mac), 0);
	/* HMAC-SHA256 keyed by HMAC-SHA256(key, "steward-mac-v1") of label NUL msg. */
	CHECK_INT_EQ(sw_hmac_sha256(key_a, 32, "steward-mac-v1", 14, mac_key), 0);
	CHECK_INT_EQ(sw_hmac_sha256(mac_key, 32, "passkey-registration\0abc", 24, want), 0);
	CHECK(memcmp(mac, want, 32) == 0);
	CHECK_INT_EQ(sw_seal_mac("passkey-registration", "abc", 3, again), 0);
	CHECK(memcmp(mac, again, 32) == 0);
	CHECK_INT_EQ(sw_seal_mac("another-use", "abc", 3, other), 0);
	CHECK(memcmp(mac, other, 32) != 0);
	sw_seal_init_key(key_b);
	CHECK_INT_EQ(sw_seal_mac("passkey-registration", "abc", 3, other), 0);
	CHECK(memcmp(mac, other, 32) != 0);
	sw_seal_release();
	CHECK_INT_EQ(sw_seal_mac("passkey-registration", "abc", 3, other), -EINVAL);
}

TEST(sealed_value_opens_to_the_plaintext)
{
	sw_seal_init_key(key_a);
	char sealed[256], out[64];
	size_t n = 0;
	REQUIRE(seal_str("hunter2 and more", "variable:app:KEY", sealed, sizeof(sealed)) == 0);
	CHECK_INT_EQ(strlen(sealed) + 1, sw_seal_size(16));
	CHECK_INT_EQ(sw_unseal(sealed, "variable:app:KEY", out, sizeof(out), &n), 0);
	CHECK_INT_EQ(n, 16);
	CHECK_STR_EQ(out, "hunter2 and more");

	/* Empty and binary values too. */
	REQUIRE(sw_seal("", 0, "", sealed, sizeof(sealed)) == 0);
	CHECK_INT_EQ(sw_unseal(sealed, "", out, sizeof(out), &n), 0);
	CHECK_INT_EQ(n, 0);
	const uint8_t bin[5] = { 0, 255, 0, 10, 13 };
	REQUIRE(sw_seal(bin, sizeof(bin), "x", sealed, sizeof(sealed)) == 0);
	CHECK_INT_EQ(sw_unseal(sealed, "x", out, sizeof(bin), &n), 0);
	CHECK(n == sizeof(bin) && memcmp(out, bin, sizeof(bin)) == 0);
	sw_seal_release();
}

TEST(sealed_text_is_v1_key_id_and_base64url)
{
	sw_seal_init_key(key_a);
	char sealed[256], id[9];
	REQUIRE(seal_str("value", "aad", sealed, sizeof(sealed)) == 0);
	key_id(key_a, id);
	CHECK(strncmp(sealed, "v1.", 3) == 0);
	CHECK(strncmp(sealed + 3, id, 8) == 0);
	CHECK(sealed[11] == '.');
	CHECK(strspn(sealed + 12, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
	      strlen(sealed + 12));
	/* 12-byte nonce + 5 bytes + 16-byte tag. */
	CHECK_INT_EQ(strlen(sealed + 12), SW_BASE64URL_LEN(12 + 5 + 16));
	sw_seal_release();
}

TEST(two_seals_of_one_value_differ)
{
	char a[128], b[128];
	REQUIRE(seal_under_key_a("same", "aad", a));
	REQUIRE(seal_str("same", "aad", b, sizeof(b)) == 0);
	CHECK(strcmp(a, b) != 0);
	sw_seal_release();
}

TEST(value_bound_to_another_place_is_ebadmsg)
{
	char sealed[128], out[64];
	size_t n = 99;
	REQUIRE(seal_under_key_a("secret", "variable:app1:KEY", sealed));
	CHECK_INT_EQ(sw_unseal(sealed, "variable:app2:KEY", out, sizeof(out), &n), -EBADMSG);
	CHECK_INT_EQ(sw_unseal(sealed, "", out, sizeof(out), &n), -EBADMSG);
	CHECK_INT_EQ(n, 99);
	sw_seal_release();
}

/* The binding strings are part of every value already stored: a change
 * would leave them all unopenable. */
TEST(places_are_bound_by_the_strings_stored_values_were_sealed_with)
{
	const char *id = "0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d";
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_variable(aad, id, "DATABASE_URL");
	CHECK_STR_EQ(aad, "variable:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d:DATABASE_URL");
	sw_seal_aad_deploy_key(aad, id);
	CHECK_STR_EQ(aad, "deploy-key:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_webhook_secret(aad, id);
	CHECK_STR_EQ(aad, "webhook-secret:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_git_credential(aad, id);
	CHECK_STR_EQ(aad, "git-credential:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_channel(aad, id);
	CHECK_STR_EQ(aad, "channel:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_service(aad, id);
	CHECK_STR_EQ(aad, "service:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_totp(aad, id);
	CHECK_STR_EQ(aad, "totp:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	sw_seal_aad_agent_command(aad, id);
	CHECK_STR_EQ(aad, "agent-command:0b7a3c2e-5d4f-4a6b-9c8d-7e6f5a4b3c2d");
	char key[SW_ENV_KEY_MAX_LEN + 1];
	memset(key, 'K', SW_ENV_KEY_MAX_LEN);
	key[SW_ENV_KEY_MAX_LEN] = '\0';
	sw_seal_aad_variable(aad, id, key);
	CHECK_INT_EQ((long long)strlen(aad), (long long)(strlen("variable:") + 36 + 1 + SW_ENV_KEY_MAX_LEN));
}

TEST(altered_ciphertext_is_ebadmsg_and_leaves_nothing)
{
	char sealed[128], out[64];
	size_t n = 0;
	REQUIRE(seal_under_key_a("secret value", "aad", sealed));
	/* Every character of the body but the last (whose low bits are
	 * padding) changed in one bit of what it encodes. */
	for (size_t i = 12; sealed[i + 1]; i++) {
		char saved = sealed[i];
		sealed[i] = saved == 'A' ? 'B' : 'A';
		memset(out, 'z', sizeof(out));
		CHECK_INT_EQ(sw_unseal(sealed, "aad", out, sizeof(out), &n), -EBADMSG);
		CHECK(memmem(out, sizeof(out), "secret", 6) == NULL); /* nothing unverified */
		sealed[i] = saved;
	}
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, sizeof(out), &n), 0);
	sw_seal_release();
}

TEST(value_sealed_under_another_key_is_ekeyrejected)
{
	char sealed[128], out[64];
	size_t n;
	REQUIRE(seal_under_key_a("secret", "aad", sealed));
	sw_seal_init_key(key_b);
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, sizeof(out), &n), -EKEYREJECTED);
	sw_seal_release();
}

TEST(text_that_is_not_a_sealed_value_is_einval)
{
	char sealed[128], id[9], text[160], out[64];
	size_t n;
	key_id(key_a, id);
	REQUIRE(seal_under_key_a("secret", "aad", sealed));
	const char *bad[] = { "", "v1.", "plain text", "v2.00000000.AAAA", "v1.ABCDEF01.AAAA",
			      "v1.0000000.AAAAA" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++)
		CHECK_INT_EQ(sw_unseal(bad[i], "aad", out, sizeof(out), &n), -EINVAL);
	/* Our key id, then a body too short, not base64url, or not canonical. */
	snprintf(text, sizeof(text), "v1.%s.AAAAAAAA", id);
	CHECK_INT_EQ(sw_unseal(text, "aad", out, sizeof(out), &n), -EINVAL);
	snprintf(text, sizeof(text), "v1.%s.%s!", id, sealed + 12);
	CHECK_INT_EQ(sw_unseal(text, "aad", out, sizeof(out), &n), -EINVAL);
	snprintf(text, sizeof(text), "v1.%s.%s=", id, sealed + 12);
	CHECK_INT_EQ(sw_unseal(text, "aad", out, sizeof(out), &n), -EINVAL);
	CHECK_INT_EQ(sw_unseal(NULL, "aad", out, sizeof(out), &n), -EINVAL);
	sw_seal_release();
}

TEST(buffers_too_small_are_enobufs)
{
	sw_seal_init_key(key_a);
	char sealed[128], out[8];
	size_t n;
	size_t need = sw_seal_size(6);
	CHECK_INT_EQ(seal_str("secret", "aad", sealed, need - 1), -ENOBUFS);
	REQUIRE(seal_str("secret", "aad", sealed, need) == 0);
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, 5, &n), -ENOBUFS);
	/* Exactly the plaintext's size: no room for the NUL, still opens. */
	memset(out, 'z', sizeof(out));
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, 6, &n), 0);
	CHECK(n == 6 && memcmp(out, "secret", 6) == 0 && out[6] == 'z');
	sw_seal_release();
}

TEST(without_a_key_nothing_seals_or_opens)
{
	char sealed[128], out[64];
	size_t n;
	REQUIRE(seal_under_key_a("secret", "aad", sealed));
	sw_seal_release();
	CHECK_INT_EQ(seal_str("secret", "aad", sealed, sizeof(sealed)), -EINVAL);
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, sizeof(out), &n), -EINVAL);
}

TEST(key_file_is_created_0600_in_a_new_0700_directory_and_reused)
{
	char root[64], dir[128], path[160], err[512], sealed[128], out[64];
	size_t n;
	unsetenv("STEWARD_SECRET_KEY");
	temp_data_dir(dir, sizeof(dir), root, sizeof(root));
	struct sw_config c = config_for(dir);
	REQUIRE(sw_seal_init(&c, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/master.key", dir);
	struct stat st;
	REQUIRE(stat(path, &st) == 0);
	CHECK_INT_EQ(st.st_mode & 07777, 0600);
	CHECK_INT_EQ(st.st_size, 32);
	REQUIRE(stat(dir, &st) == 0);
	CHECK_INT_EQ(st.st_mode & 07777, 0700);
	REQUIRE(seal_str("kept", "aad", sealed, sizeof(sealed)) == 0);
	sw_seal_release();

	/* A second start reads the same key: the value still opens. */
	REQUIRE(sw_seal_init(&c, err, sizeof(err)) == 0);
	CHECK_INT_EQ(sw_unseal(sealed, "aad", out, sizeof(out), &n), 0);
	CHECK_STR_EQ(out, "kept");
	sw_seal_release();
	remove_data_dir(root);
}

/* A new data directory below root whose key file a first start made (the
 * key released again); path names the file. */
static struct sw_config with_key_file(char root[64], char path[160])
{
	char dir[128], err[512];
	unsetenv("STEWARD_SECRET_KEY");
	temp_data_dir(dir, sizeof(dir), root, 64);
	struct sw_config c = config_for(dir);
	if (sw_seal_init(&c, err, sizeof(err)) != 0)
		abort();
	sw_seal_release();
	snprintf(path, 160, "%s/master.key", dir);
	return c;
}

TEST(key_file_readable_by_others_is_refused)
{
	char root[64], path[160], err[512] = "";
	struct sw_config c = with_key_file(root, path);
	REQUIRE(chmod(path, 0640) == 0);
	CHECK_INT_EQ(sw_seal_init(&c, err, sizeof(err)), -EPERM);
	CHECK(strstr(err, path) != NULL);
	CHECK(strstr(err, "0640") != NULL);
	CHECK(strstr(err, "chmod 600") != NULL);
	remove_data_dir(root);
}

TEST(key_file_of_another_size_is_refused)
{
	char root[64], path[160], err[512] = "";
	struct sw_config c = with_key_file(root, path);
	REQUIRE(truncate(path, 31) == 0);
	CHECK_INT_EQ(sw_seal_init(&c, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "31 bytes") != NULL);
	REQUIRE(truncate(path, 33) == 0);
	CHECK_INT_EQ(sw_seal_init(&c, err, sizeof(err)), -EINVAL);
	remove_data_dir(root);
}

TEST(secret_key_variable_is_used_instead_of_a_file)
{
	static const char hex[] = "0102030405060708090a0b0c0d0e0f10111213141516171819"
				  "1A1B1C1D1E1F20";
	char root[64], dir[128], path[160], err[512], sealed[128], id[9];
	temp_data_dir(dir, sizeof(dir), root, sizeof(root));
	struct sw_config c = config_for(dir);
	setenv("STEWARD_SECRET_KEY", hex, 1);
	REQUIRE(sw_seal_init(&c, err, sizeof(err)) == 0);
	REQUIRE(seal_str("v", "aad", sealed, sizeof(sealed)) == 0);
	key_id(key_a, id);
	CHECK(strncmp(sealed + 3, id, 8) == 0); /* the key is bytes 1..32 */
	snprintf(path, sizeof(path), "%s/master.key", dir);
	CHECK(access(path, F_OK) != 0);
	sw_seal_release();

	/* Not 64 hex digits: refused by name, the value never repeated. */
	const char *bad[] = { "0102", "0102030405060708090a0b0c0d0e0f10111213141516171819"
				      "1a1b1c1d1e1f2g",
			      "0102030405060708090a0b0c0d0e0f10111213141516171819"
			      "1a1b1c1d1e1f2021" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		setenv("STEWARD_SECRET_KEY", bad[i], 1);
		CHECK_INT_EQ(sw_seal_init(&c, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "STEWARD_SECRET_KEY") != NULL);
		CHECK(strstr(err, "0102") == NULL);
	}
	/* Empty is unset: the key file is made. */
	setenv("STEWARD_SECRET_KEY", "", 1);
	CHECK_INT_EQ(sw_seal_init(&c, err, sizeof(err)), 0);
	CHECK(access(path, F_OK) == 0);
	sw_seal_release();
	unsetenv("STEWARD_SECRET_KEY");
	remove_data_dir(root);
}

TEST_MAIN()
