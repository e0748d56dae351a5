/* Ed25519 deploy keys (sshkey.h), checked against the real ssh-keygen:
 * it must read our private key file and derive our public line from it,
 * and print our fingerprint. Exits 77 when ssh-keygen is not installed
 * (apt-get install openssh-client). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "steward/base/base.h"
#include "steward/base/sshkey.h"
#include "test_help.h"

extern char **environ;

static const char *ssh_keygen(void)
{
	static const char *const places[] = { "/usr/bin/ssh-keygen", "/usr/local/bin/ssh-keygen",
					      "/bin/ssh-keygen" };
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++)
		if (access(places[i], X_OK) == 0)
			return places[i];
	printf("ssh-keygen not found (apt-get install openssh-client): skipping\n");
	exit(77);
}

/* Runs argv (no shell) with stdin from /dev/null and its stdout in out
 * (NUL-terminated, trailing newline removed). The exit status, or -1. */
static int run(char *const argv[], char *out, size_t cap)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (rc == 0 && n + 1 < cap && (r = read(fds[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	out[n] = '\0';
	while (n && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		out[--n] = '\0';
	int status;
	if (rc != 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Writes text to a new file in a new temporary directory (mode 0600, as
 * ssh-keygen demands of a private key). */
static void write_temp(char *dir, size_t dir_cap, char *path, size_t path_cap, const char *name,
		       const char *text)
{
	snprintf(dir, dir_cap, "/tmp/sw-sshkey-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, path_cap, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

static void remove_temp(const char *dir, const char *path)
{
	unlink(path);
	rmdir(dir);
}

TEST(ssh_keygen_reads_the_private_key_and_derives_the_same_public_line)
{
	const char *tool = ssh_keygen();
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX];
	const char *comments[] = { "steward-deploy-key", "", "a@b", "0123456789012345678901234567890123456789012345678901234567890123" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(comments); i++) {
		REQUIRE(sw_ssh_ed25519_generate(comments[i], pub, priv) == 0);
		char dir[64], path[128], got[1024];
		write_temp(dir, sizeof(dir), path, sizeof(path), "id_ed25519", priv);
		char *argv[] = { (char *)tool, "-y", "-f", path, NULL };
		CHECK_INT_EQ(run(argv, got, sizeof(got)), 0);
		CHECK_STR_EQ(got, pub);
		remove_temp(dir, path);
	}
}

TEST(fingerprint_is_what_ssh_keygen_prints)
{
	const char *tool = ssh_keygen();
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX], fp[64];
	REQUIRE(sw_ssh_ed25519_generate("deploy", pub, priv) == 0);
	REQUIRE(sw_ssh_fingerprint(pub, fp) == 0);
	char dir[64], path[128], got[1024], want[256];
	write_temp(dir, sizeof(dir), path, sizeof(path), "id_ed25519.pub", pub);
	char *argv[] = { (char *)tool, "-l", "-E", "sha256", "-f", path, NULL };
	CHECK_INT_EQ(run(argv, got, sizeof(got)), 0);
	snprintf(want, sizeof(want), "256 %s deploy (ED25519)", fp);
	CHECK_STR_EQ(got, want);
	remove_temp(dir, path);
}

TEST(public_key_is_an_authorized_keys_line)
{
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX];
	REQUIRE(sw_ssh_ed25519_generate("steward", pub, priv) == 0);
	/* The base64 of the blob's fixed start: string "ssh-ed25519", length 32. */
	CHECK(strncmp(pub, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 37) == 0);
	CHECK_INT_EQ(strlen(pub), 12 + 68 + 8);
	CHECK_STR_EQ(pub + 12 + 68, " steward");
}

TEST(private_key_is_armoured_base64_of_70_columns)
{
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX];
	REQUIRE(sw_ssh_ed25519_generate("x", pub, priv) == 0);
	const char *begin = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
	const char *end = "-----END OPENSSH PRIVATE KEY-----\n";
	CHECK(strncmp(priv, begin, strlen(begin)) == 0);
	size_t n = strlen(priv);
	REQUIRE(n > strlen(begin) + strlen(end));
	CHECK_STR_EQ(priv + n - strlen(end), end);
	/* "openssh-key-v1\0" and "none" encode to this. */
	CHECK(strncmp(priv + strlen(begin), "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 42) == 0);
	const char *p = priv + strlen(begin);
	size_t lines = 0;
	while (p < priv + n - strlen(end)) {
		size_t len = strcspn(p, "\n");
		CHECK(len <= 70);
		p += len + 1;
		lines++;
	}
	CHECK(lines >= 3);
}

TEST(two_generated_keys_differ)
{
	char pub1[SW_SSH_PUBLIC_KEY_MAX], priv1[SW_SSH_PRIVATE_KEY_MAX];
	char pub2[SW_SSH_PUBLIC_KEY_MAX], priv2[SW_SSH_PRIVATE_KEY_MAX];
	REQUIRE(sw_ssh_ed25519_generate("k", pub1, priv1) == 0);
	REQUIRE(sw_ssh_ed25519_generate("k", pub2, priv2) == 0);
	CHECK(strcmp(pub1, pub2) != 0);
	CHECK(strcmp(priv1, priv2) != 0);
}

TEST(comment_with_space_control_or_over_64_bytes_is_einval)
{
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX];
	const char *bad[] = { "a b", "a\nb", "tab\t", "\x7f", "caf\xc3\xa9",
			      "01234567890123456789012345678901234567890123456789012345678901234" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++)
		CHECK_INT_EQ(sw_ssh_ed25519_generate(bad[i], pub, priv), -EINVAL);
	CHECK_INT_EQ(sw_ssh_ed25519_generate(NULL, pub, priv), -EINVAL);
}

TEST(fingerprint_of_a_known_key)
{
	/* The key 00 01 .. 1f; ssh-keygen -l -E sha256 prints this. */
	char fp[64];
	REQUIRE(sw_ssh_fingerprint("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f", fp) == 0);
	CHECK_STR_EQ(fp, "SHA256:ZkAslGjFiUHdGf/WUL8rQvkib4PTvQatUV0OUQSncCA");
	/* A comment does not change it. */
	REQUIRE(sw_ssh_fingerprint("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f t", fp) == 0);
	CHECK_STR_EQ(fp, "SHA256:ZkAslGjFiUHdGf/WUL8rQvkib4PTvQatUV0OUQSncCA");
}

TEST(fingerprint_refuses_what_is_not_a_public_key_line)
{
	char fp[64];
	const char *bad[] = {
		"",
		"ssh-ed25519",
		"ssh-ed25519 ",
		"ssh-ed25519 !!!!",
		"ssh-ed25519 AAAA",
		/* the blob names ssh-ed25519, the line another type */
		"ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f",
		/* not canonical: bits set past the data ("IA==" is canonical) */
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fIB==",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fIA=",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f x\n",
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++)
		CHECK_INT_EQ(sw_ssh_fingerprint(bad[i], fp), -EINVAL);
	CHECK_INT_EQ(sw_ssh_fingerprint(NULL, fp), -EINVAL);
	/* The canonical spelling of that longer blob is read. */
	CHECK_INT_EQ(sw_ssh_fingerprint("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fIA==", fp), 0);
}

TEST_MAIN()
